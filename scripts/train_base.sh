#!/usr/bin/env bash
# Resume the accurate tier's pre-registered training (docs/preregistration/nli-base.md) for one stage.
#
#   bash scripts/train_base.sh [MINUTES] [PHASE]      # defaults: 150 minutes, phase v1
#
# Runs in the background-friendly way the plan fixes: lowest CPU priority, the newest checkpoint
# resumed (model, optimiser, scheduler, RNG, data position), a clean stop with a checkpoint before
# MINUTES are up. Checkpoints stay outside git in $VERIDIC_TRAIN_DIR (default ~/.cache/veridic/train).
# Each stage appends one line (steps before and after, wall time) to stages.jsonl in the run folder.
set -euo pipefail
cd "$(dirname "$0")/.."
MINUTES="${1:-150}"
PHASE="${2:-v1}"
CONFIG="configs/nli-base-$PHASE.yaml"
RUN="${VERIDIC_TRAIN_DIR:-$HOME/.cache/veridic/train}/nli-base-$PHASE"
VERIDIC="${VERIDIC_BIN:-.venv/bin/veridic}"
[ -f "$CONFIG" ] || { echo "no config $CONFIG (expected PHASE v1 or v2)" >&2; exit 2; }
mkdir -p "$RUN"
step_of() {  # the newest checkpoint's step, 0 when there is none yet
  local last
  last="$(find "$RUN/checkpoints" -maxdepth 1 -name 'step-*' 2>/dev/null | sed 's/.*step-0*//' | sort -n | tail -1 || true)"
  echo "${last:-0}"
}
before="$(step_of)"
start="$(date -u +%FT%TZ)"
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
nice -n 19 "$VERIDIC" train nli --config "$CONFIG" --output "$RUN" --max-minutes "$MINUTES" --resume
after="$(step_of)"
printf '{"start": "%s", "end": "%s", "minutes": %s, "step_before": %s, "step_after": %s, "commit": "%s"}\n' \
  "$start" "$(date -u +%FT%TZ)" "$MINUTES" "$before" "$after" "$(git rev-parse --short HEAD 2>/dev/null || echo unknown)" \
  >> "$RUN/stages.jsonl"

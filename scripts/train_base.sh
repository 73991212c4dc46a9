#!/usr/bin/env bash
# Resume the accurate tier's pre-registered training (docs/preregistration/nli-base.md) for one stage.
#
#   bash scripts/train_base.sh [MINUTES] [PHASE]      # defaults: 150 minutes, phase "auto", the current round
#   BASE=nli-base bash scripts/train_base.sh 150      # the first round (6 layers, finished): configs/nli-base-v*.yaml
#
# PHASE v1 or v2 runs that phase only; "auto" runs phase 1 until it is finished (its training_summary.json says
# "completed"; a stage that stops on its time budget also exports final/, so that folder alone proves nothing) and
# spends the stage's remaining minutes on phase 2, which starts from phase 1's final weights.
#
# Runs in the background-friendly way the plan fixes: lowest CPU priority, the newest checkpoint
# resumed (model, optimiser, scheduler, RNG, data position), a clean stop with a checkpoint before
# MINUTES are up. Checkpoints stay outside git in $VERIDIC_TRAIN_DIR (default ~/.cache/veridic/train).
# Each stage appends one line (steps before and after, wall time) to stages.jsonl in the run folder.
set -euo pipefail
cd "$(dirname "$0")/.."
MINUTES="${1:-150}"
PHASE="${2:-auto}"
BASE="${BASE:-nli-base-l12}"   # the round: configs/$BASE-v1.yaml and -v2.yaml, run folders $ROOT/$BASE-v1 and -v2
ROOT="${VERIDIC_TRAIN_DIR:-$HOME/.cache/veridic/train}"
VERIDIC="${VERIDIC_BIN:-.venv/bin/veridic}"
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1

step_of() {  # the newest checkpoint's step in run folder $1, 0 when there is none yet
  local last
  last="$(find "$1/checkpoints" -maxdepth 1 \( -name 'checkpoint-*' -o -name 'step-*' \) 2>/dev/null | sed 's/.*-0*//' | sort -n | tail -1 || true)"
  echo "${last:-0}"
}

run_phase() {  # run_phase PHASE MINUTES: one stage of one phase, recorded in its stages.jsonl
  local phase="$1" minutes="$2" config="configs/$BASE-$1.yaml" run="$ROOT/$BASE-$1" before start
  [ -f "$config" ] || { echo "no config $config: PHASE is v1, v2 or auto, and BASE names a round with configs/\$BASE-v1.yaml (nli-base, nli-base-l12)" >&2; exit 2; }
  mkdir -p "$run"
  before="$(step_of "$run")"
  start="$(date -u +%FT%TZ)"
  nice -n 19 "$VERIDIC" train nli --config "$config" --output "$run" --max-minutes "$minutes" --resume
  printf '{"start": "%s", "end": "%s", "minutes": %s, "step_before": %s, "step_after": %s, "commit": "%s"}\n' \
    "$start" "$(date -u +%FT%TZ)" "$minutes" "$before" "$(step_of "$run")" "$(git rev-parse --short HEAD 2>/dev/null || echo unknown)" \
    >> "$run/stages.jsonl"
}

completed() {  # completed RUN: the phase's last stage ran to the end of its planned steps
  grep -q '"stopped_by": "completed"' "$1/training_summary.json" 2>/dev/null
}

if [ "$PHASE" != "auto" ]; then
  run_phase "$PHASE" "$MINUTES"
  exit 0
fi
began=$(date +%s)
if ! completed "$ROOT/$BASE-v1"; then
  run_phase v1 "$MINUTES"
fi
left=$(( MINUTES - ($(date +%s) - began) / 60 ))
# Phase 2 needs its corpora and phase 1's weights; a stage shorter than 10 minutes would only load and stop.
if completed "$ROOT/$BASE-v1" && [ "$left" -ge 10 ]; then
  run_phase v2 "$left"
fi

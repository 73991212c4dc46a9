#!/usr/bin/env bash
# Evaluate the embedded model on the dev sets and fit the hybrid weights (about 30 min on 2 cores).
# Usage: bash scripts/eval_release.sh [OUT_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-runs/eval}
mkdir -p "$OUT"
MODEL_DIR=veridic/models/veridic-nli-minilm-l6
# 1. one sentence-level NLI pass over dev (cached on disk) -> features, leave-one-dataset-out table,
#    per-example LODO scores, and the shipped hybrid weights (fitted on all dev rows)
.venv/bin/python benchmarks/fit_hybrid.py --data dev --out "$OUT/hybrid" --features ec_mean,overlap_bigram --weights-out "$MODEL_DIR/hybrid.json" | tee "$OUT/hybrid.log"
# 2. the dev table: e and e-c reuse the cached predictions; hybrid enters through its honest LODO scores
.venv/bin/veridic bench --data dev --scorer e --scorer e-c --scorer overlap --scorer overlap-bigram \
  --scores "$OUT/hybrid/hybrid_lodo.csv" --compare hybrid_lodo e-c --out "$OUT/bench-main" --no-progress | tee "$OUT/bench-main.log"
# 3. Monte-Carlo dropout (k = 15) on the two smallest sets (MC costs 15 extra model calls per claim sentence)
.venv/bin/veridic bench --data ../shared/data/bench/dialfact_small.jsonl --data ../shared/data/bench/summac_factcc.jsonl \
  --scorer e-c --scorer e-c+mc --compare e-c+mc e-c --out "$OUT/bench-mc" --no-progress | tee "$OUT/bench-mc.log"

"""Score a fixed sample of the dev pool with several configurations, to compare two versions of the code exactly.

    python benchmarks/golden_scores.py -o new.json                      # this tree
    PYTHONPATH=/path/to/other/checkout python benchmarks/golden_scores.py -o old.json
    python benchmarks/golden_scores.py --compare old.json new.json      # max |difference| per configuration

A refactor that claims "every figure unchanged" shows a 0.0 difference on every configuration. The sample is
25 seeded rows of each dev set (``$VERIDIC_DATA/bench`` or ``../shared/data/bench``), scored through
``veridic.score`` on the embedded model, as a user scores.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

CONFIGS = ("hybrid", "e-c", "e-c-doc", "overlap")
SETS = ("frank_test", "summac_polytope", "begin2_dev", "dialfact_small", "wice_dev", "tofueval_meetb_dev", "summac_factcc")


def sample(bench: Path, per_set: int = 25) -> list[dict]:
    rows = []
    for name in SETS:
        lines = (bench / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()
        random.Random(0).shuffle(lines)
        rows += [json.loads(line) for line in lines[:per_set]]
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-o", "--output", type=Path)
    ap.add_argument("--compare", nargs=2, type=Path, metavar=("OLD", "NEW"))
    args = ap.parse_args()
    if args.compare:
        old, new = (json.loads(p.read_text(encoding="utf-8")) for p in args.compare)
        worst = 0.0
        for cfg in (k for k in old if not k.startswith("_")):
            diff = max(abs(a - b) for a, b in zip(old[cfg]["scores"], new[cfg]["scores"], strict=True))
            worst = max(worst, diff)
            print(f"{cfg:10s} {len(old[cfg]['scores'])} rows  max |difference| {diff:.3g}")
        return 0 if worst == 0.0 else 1
    if args.output is None:
        ap.error("give -o OUTPUT or --compare OLD NEW")
    import os

    import veridic

    # Read the data folder here, not through veridic: the other version being compared may predate veridic.io._paths.
    data = Path(os.environ["VERIDIC_DATA"]) if os.environ.get("VERIDIC_DATA") else Path(__file__).resolve().parents[2] / "shared" / "data"
    rows = sample(data / "bench")
    sources, claims = [r["source"] for r in rows], [r["claim"] for r in rows]
    out = {cfg: {"scores": [v.score for v in veridic.score(sources=sources, claims=claims, config=cfg)], "ids": [r["id"] for r in rows]}
           for cfg in CONFIGS}
    out["_meta"] = {"veridic": str(Path(veridic.__file__).parent), "rows": len(rows)}
    args.output.write_text(json.dumps(out) + "\n", encoding="utf-8")
    print(f"wrote {args.output} ({len(rows)} rows x {len(CONFIGS)} configurations)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""The binding suite through each shipped NLI model: does a score follow which entity a fact belongs to?

    python benchmarks/binding_suite.py --out runs/report/binding
    python benchmarks/binding_suite.py --model veridic-nli-minilm-l6 --model ~/.cache/veridic/train/RUN/packed

For each model, ``veridic bench --data binding`` with ``hybrid``, ``e-c`` and bigram overlap (the trivial baseline)
into OUT/<model>/, then one JSON line: per model and scorer the ROC AUC with its 95 % CI, the accuracy on faithful
(``binding_keep``) and moved (``binding_swap``) hypotheses at the scorer's own threshold, and the **pair accuracy**:
the share of the 32 minimal pairs (one frame, its own entity's value against the other entity's) where the faithful
hypothesis scores higher. Pair accuracy needs no threshold; 0.5 is chance, and ties count as half.
Suite: veridic/bench/data/binding_suite.jsonl (benchmarks/build_binding_suite.py; card in docs/contrast-data.md).
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MODELS = ("veridic-nli-minilm-l6", "veridic-nli-minilm-commercial", "veridic-nli-mpnet-base")
SCORERS = ("hybrid", "e-c", "overlap-bigram")
SUITE = ROOT / "veridic" / "bench" / "data" / "binding_suite.jsonl"


def pair_accuracy(scores: dict[str, float], rows: list[dict]) -> float:
    """Share of (item, slot) pairs where the faithful hypothesis outscores the moved one; a tie counts half.

    >>> rows = [{"id": "a", "label": 1, "meta": {"item": 1, "slot": "A"}}, {"id": "b", "label": 0, "meta": {"item": 1, "slot": "A"}}]
    >>> pair_accuracy({"a": 0.9, "b": 0.2}, rows), pair_accuracy({"a": 0.5, "b": 0.5}, rows)
    (1.0, 0.5)
    """
    pairs: dict[tuple[int, str], dict[int, float]] = {}
    for r in rows:
        pairs.setdefault((r["meta"]["item"], r["meta"]["slot"]), {})[int(r["label"])] = scores[r["id"]]
    wins = [1.0 if p[1] > p[0] else 0.5 if p[1] == p[0] else 0.0 for p in pairs.values()]
    return sum(wins) / len(wins)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", action="append", default=None, help=f"NLI model id or folder (repeat; default: {', '.join(MODELS)})")
    ap.add_argument("--out", type=Path, default=Path("runs/report/binding"))
    args = ap.parse_args(argv)
    rows = [json.loads(line) for line in SUITE.read_text(encoding="utf-8").splitlines() if line.strip()]
    veridic = str(Path(sys.executable).with_name("veridic"))
    result: dict[str, dict] = {}
    for model in args.model or MODELS:
        name = re.sub(r"[^A-Za-z0-9._-]+", "_", str(model).strip("/"))
        out = args.out / name
        cmd = [veridic, "bench", "--data", "binding", "--model", str(model), *(a for s in SCORERS for a in ("--scorer", s)),
               "--no-progress", "-o", str(out)]
        subprocess.run(cmd, cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
        rep = json.loads((out / "report.json").read_text(encoding="utf-8"))
        con = json.loads((out / "contrast.json").read_text(encoding="utf-8"))["binding"]
        result[str(model)] = {}
        for s in SCORERS:
            res = rep["results"]["binding"][s]
            scores = {x["id"]: float(x["score"]) for x in res["scores"]}
            result[str(model)][s] = {
                "auc": res["auc"], "auc_ci": [res["auc_ci_low"], res["auc_ci_high"]],
                "keep_accuracy": con[s]["binding_keep"]["accuracy"], "swap_accuracy": con[s]["binding_swap"]["accuracy"],
                "threshold_kind": con[s]["_all"]["threshold_kind"], "pair_accuracy": pair_accuracy(scores, rows),
            }
    print(json.dumps({"suite": str(SUITE.relative_to(ROOT)), "rows": len(rows), "pairs": len(rows) // 2, "models": result}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

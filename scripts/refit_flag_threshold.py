"""Refit a trained tagger's flag threshold with faithful rewordings in view (docs/preregistration/span-tagger.md, "v7").

    python scripts/refit_flag_threshold.py --tagger runs/models/veridic-tagger-mpnet-l6-bf16 \\
        --faithful ~/.cache/veridic/train/span-tagger-v2/abstractive-spans.jsonl.gz \\
        --cap-from veridic-tagger-minilm-l6 --dest runs/models/veridic-tagger-mpnet-l6-v7

Training fits the flag threshold (the span score at which the tagger flags a passage on its own) on held-back EntFA
train rows alone: a third of them faithful, none a rewording of its source. This refit keeps the token threshold and
the weights, and picks the flag threshold on the same grid and the same rows, but only among values at which the
tagger would flag no more of a set of faithful rewordings than the ``--cap-from`` tagger does at its own thresholds.
The rewordings are the faithful rows of a span corpus that training held back (the same hash of the id as the
EntFA rows), so neither tagger has seen them. The new folder is a copy of ``--tagger`` with ``tagger.json`` updated
and the fit recorded under ``flag_threshold_fit``.
"""

from __future__ import annotations

import argparse
import gzip
import json
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

GRID_TOP = (0.95, 0.99)  # the values training adds above its token-threshold grid for the flag threshold


def _rows(tagger: Any, rows: Sequence[dict[str, Any]]) -> list:
    return tagger.char_probabilities(sources=[r["source"] for r in rows], claims=[r["claim"] for r in rows])


def refit(*, tagger: Any, cap: Any, held_rows: Sequence[dict[str, Any]], faithful_rows: Sequence[dict[str, Any]],
          token_grid: Sequence[float]) -> dict[str, Any]:
    """The capped flag threshold of ``tagger`` (anything with ``char_probabilities``, ``threshold`` and ``meta``) and
    what it read: the cap is the share of ``faithful_rows`` that ``cap`` flags at its own two thresholds."""
    from veridic.detect._tagger_train import best_span_scores, capped_flag_threshold
    from veridic.errors import InputError

    if not faithful_rows or not held_rows:
        raise InputError(f"The refit needs held-back rows and faithful rows; got {len(held_rows)} and {len(faithful_rows)}: "
                         "check --faithful (held-back rows with label 1) and the EntFA train split under --data-dir.")
    cap_best = best_span_scores(faithful_rows, _rows(cap, faithful_rows), threshold=float(cap.threshold))
    cap_flag = float(cap.meta["flag_threshold"])
    max_share = sum(b >= cap_flag for b in cap_best) / len(cap_best)
    tau = float(tagger.threshold)
    faithful_best = best_span_scores(faithful_rows, _rows(tagger, faithful_rows), threshold=tau)
    grid = [t for t in (*token_grid, *GRID_TOP) if t >= tau]
    flag, info = capped_flag_threshold(held_rows, _rows(tagger, held_rows), threshold=tau, grid=grid, faithful_best=faithful_best,
                                       max_share=max_share)
    return {"flag_threshold": flag, "was": float(tagger.meta["flag_threshold"]), "held_back_rows": len(held_rows),
            "faithful_rows": len(faithful_rows), "cap_flag_threshold": cap_flag, **info}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tagger", required=True, help="the tagger folder (or shipped name) whose flag threshold is refitted")
    ap.add_argument("--faithful", required=True, type=Path, help="a span corpus (jsonl.gz) whose held-back rows with label 1 are the rewordings")
    ap.add_argument("--cap-from", required=True, help="the tagger whose flag rate on those rows is the cap (folder or shipped name)")
    ap.add_argument("--dest", required=True, type=Path, help="the new tagger folder (must not exist)")
    ap.add_argument("--data-dir", default=None, help="the span data folder (default: $VERIDIC_DATA/spans)")
    args = ap.parse_args(argv)

    from veridic.detect._tagger import TAGGER_FILE, SpanTagger, resolve_tagger_path
    from veridic.detect._tagger_train import _threshold_rows, entfa_train_rows, held_back
    from veridic.errors import VeridicError
    from veridic.io._atomic import atomic_write_text

    if args.dest.exists():
        ap.error(f"--dest {args.dest} exists; give a new folder")
    src = resolve_tagger_path(args.tagger)
    meta = json.loads((src / TAGGER_FILE).read_text())
    fraction = float(meta["config"]["held_back_fraction"])
    held_rows = _threshold_rows(entfa_train_rows(data_dir=args.data_dir), fraction)
    with gzip.open(args.faithful.expanduser(), "rt", encoding="utf-8") as fh:
        faithful = [r for r in map(json.loads, fh) if held_back(str(r["id"]), fraction) and r["label"] == 1 and not r["spans"]]
    try:
        fit = refit(tagger=SpanTagger(src), cap=SpanTagger(args.cap_from), held_rows=held_rows, faithful_rows=faithful,
                    token_grid=meta["config"]["thresholds"])
    except VeridicError as exc:
        ap.exit(2, f"{ap.prog}: error: {exc}\n")
    # Written only once the fit has succeeded: a failed refit leaves no copy that looks refitted and is not.
    shutil.copytree(src, args.dest)
    fit.update({"faithful": str(args.faithful), "cap_from": str(args.cap_from)})
    atomic_write_text(args.dest / TAGGER_FILE, json.dumps({**meta, "flag_threshold": fit["flag_threshold"], "flag_threshold_fit": fit}, indent=2) + "\n")
    print(json.dumps({k: fit[k] for k in ("flag_threshold", "was", "max_share", "held_back_rows", "faithful_rows", "cap_flag_threshold")}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""How the detector's pipeline confirms tagger spans: every registered variant on development data, and the one the
registered rule selects (docs/preregistration/span-tagger.md, "Pipeline v3" and "Pipeline v4").

    python benchmarks/pipeline_variants.py --grid v4 -o runs/pipeline-v4   # about 10 minutes on 2 cores
    python benchmarks/pipeline_variants.py --grid v3 -o runs/pipeline-v3
    python benchmarks/pipeline_variants.py --grid v7 -o runs/pipeline-v7
    python benchmarks/pipeline_variants.py --grid v8 -o runs/pipeline-v8
    python benchmarks/pipeline_variants.py --grid v9 -o runs/pipeline-v9
    python benchmarks/pipeline_variants.py --grid v10 -o runs/pipeline-v10
    python benchmarks/pipeline_variants.py --grid v11 -o runs/pipeline-v11
    python benchmarks/pipeline_variants.py --grid v15 --cost 256=1.17 --cost 384=2.38 --cost 512=3.72 -o runs/pipeline-v15

Development data only, none of it an evaluation row: WiCE dev (token F1 of non-supported tokens), the 88 EntFA train
rows the tagger held back for its thresholds (character span F1) and the detector's contrast suite (correct
passages left alone, entity and relation F1, the edit audit). The rule detector, its judge and the tagger run once
per passage; each variant only re-merges their outputs (``TaggedDetector``'s confirmation knobs), so the grid costs
little more than one pipeline run. Writes ``OUT/variants.json`` (every variant's figures and the selection).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import sys
from pathlib import Path
from typing import Any

#: The registered grids; the first entry of each list is the shipped pipeline's setting, None = the tagger's own.
#: v3: how proposals are confirmed; v4: proposals of function words alone, and sentences an evidence-backed fix repairs;
#: v7: what marks a sentence the judge rejects where nothing else does (v5's shipped settings held fixed);
#: v8: whether the rules' spans on a sentence the judge calls a contradiction stand where nothing else does;
#: v9: whether names and values the evidence gives to something else are marked, and flag the passage;
#: v10: v7's, v8's and v9's questions asked together again, with the distilled default as the judge;
#: v11: v3's question (how proposals are confirmed) asked again with that judge, v4's shipped settings held fixed;
#: v12: v9's question answered by the judge: a value marked where the judge prefers another evidence value in its place;
#: v13: whether the rules' evidence-backed spans (the structure check's and relation rules', or all) flag a passage;
#: v15: how many tokens of packed source the tagger reads (``window``, the tagger's ``max_length``; None = its own).
#: t1: one variant, the shipped settings, for a candidate tagger placed in the shipped folder (a soup of two taggers).
GRIDS: dict[str, dict[str, list[Any]]] = {
    "v3": {"word_threshold": [None, 0.40, 0.55], "flag_threshold": [None, 0.80, 0.95], "overrule": [True, False],
           "spans_per_sentence": [None, 1]},
    "v4": {"content_words": [False, True], "fixes_explain": [False, True]},
    "v7": {"content_words": [True], "fixes_explain": [True], "unsupported_fill": [None, "absent-words", "sentence"]},
    "v8": {"content_words": [True], "fixes_explain": [True], "judge_contradictions": [False, True]},
    "v9": {"content_words": [True], "fixes_explain": [True], "bindings": [False, True]},
    "v10": {"content_words": [True], "fixes_explain": [True], "unsupported_fill": [None, "absent-words", "sentence"],
            "judge_contradictions": [False, True], "bindings": [False, True]},
    "v11": {"word_threshold": [None, 0.40, 0.55], "flag_threshold": [None, 0.80, 0.95], "overrule": [True, False],
            "spans_per_sentence": [None, 1], "content_words": [True], "fixes_explain": [True]},
    "v12": {"content_words": [True], "fixes_explain": [True], "bindings": [False, "judge"]},
    "v13": {"content_words": [True], "fixes_explain": [True], "rule_flags": [False, "structure", "evidenced"]},
    "v15": {"window": [None, 384, 512], "content_words": [True], "fixes_explain": [True], "flag_threshold": [0.80]},
    "t1": {"content_words": [True], "fixes_explain": [True], "flag_threshold": [0.80]},
}


class _Memo:
    """Forwards to ``inner``, remembering ``method``'s result per argument values (the grid repeats every call)."""

    def __init__(self, inner: Any, method: str):
        self._inner, self._method, self._seen = inner, method, {}

    def __getattr__(self, name: str) -> Any:
        if name != self._method:
            return getattr(self._inner, name)

        def call(**kw: Any) -> Any:
            key = tuple(sorted((k, tuple(v) if isinstance(v, list | tuple) else v) for k, v in kw.items() if k != "progress"))
            if key not in self._seen:
                self._seen[key] = getattr(self._inner, name)(**kw)
            return self._seen[key]

        return call


def _held_back_entfa(data: str, *, fraction: float) -> list[Any]:
    """The EntFA train rows a tagger trained with ``held_back_fraction = fraction`` kept out of its training."""
    from veridic.detect._spans import load_span_rows
    from veridic.detect._tagger_train import held_back

    return [r for r in load_span_rows(dataset="entfa_xsum", split="train", data_dir=data) if held_back(r.id, fraction)]


def measure(pipe: Any, *, wice: list[dict], entfa: list[Any], suite: list[Any]) -> dict[str, Any]:
    from veridic.detect._benchmark import run_suite_benchmark, wice_span_f1
    from veridic.detect._spans import span_prf

    w = wice_span_f1(detector=pipe, rows=wice, n_boot=0)
    res = pipe.detect_many(passages=[r.claim for r in entfa], evidences=[r.source for r in entfa])
    e = span_prf(entfa, [[(s.start, s.end) for s in r.spans] for r in res])
    s = run_suite_benchmark(detector=pipe, examples=suite, n_boot=0)
    return {"wice_dev_f1": w["f1"], "entfa_held_back_f1": e["f1"], "suite_left_alone": 1 - s["false_flags"]["rate"],
            "suite_entity_f1": s["per_type"]["entity"]["f1"], "suite_relation_f1": s["per_type"]["relation"]["f1"],
            "suite_contradictory_f1": s["per_type"]["contradictory"]["f1"],
            "suite_edits_passing": s["edit_audit"]["passing"], "suite_edits": s["edit_audit"]["edits"]}


#: the most a tagger may cost per passage, in multiples of the default scorer's time (the work item's bound)
MAX_COST_RATIO = 2.0


def _parse_costs(items: list[str]) -> dict[int, float]:
    """``["384=2.38"]`` -> ``{384: 2.38}``; anything else is refused with the form it takes."""
    out = {}
    for item in items:
        window, sep, ratio = item.partition("=")
        try:
            out[int(window)] = float(ratio)
        except ValueError:
            sep = ""
        if not sep:
            raise SystemExit(f"--cost takes WINDOW=RATIO, e.g. --cost 384=2.38; got {item!r}.")
    return out


def _tagger_alone(tagger: Any, *, wice: list[dict], entfa: list[Any]) -> dict[str, float]:
    """The tagger's own spans at its own threshold on the same rows: reported beside the pipeline's, never selected on."""
    from veridic.detect._benchmark import wice_span_f1
    from veridic.detect._spans import span_prf

    w = wice_span_f1(detector=tagger, rows=wice, n_boot=0)
    res = tagger.detect_many(passages=[r.claim for r in entfa], evidences=[r.source for r in entfa])
    e = span_prf(entfa, [[(s.start, s.end) for s in r.spans] for r in res])
    return {"tagger_wice_dev_f1": w["f1"], "tagger_entfa_held_back_f1": e["f1"]}


def select(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The registered rule: the highest mean of WiCE dev F1, EntFA held-back F1 and suite left-alone among the
    variants whose every suite edit passes the audit (and whose measured cost, where given, is at most
    :data:`MAX_COST_RATIO` × the default scorer's); ties go to the earlier variant in grid order (closer to v2)."""
    ok = [r for r in rows if r["figures"]["suite_edits_passing"] == r["figures"]["suite_edits"]
          and r.get("cost_ratio", 0.0) <= MAX_COST_RATIO] or rows
    return max(ok, key=lambda r: (round(r["objective"], 6), -rows.index(r)))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-o", "--out", type=Path, required=True)
    ap.add_argument("--grid", choices=sorted(GRIDS), default="v4", help="which registered grid to run (default: v4)")
    ap.add_argument("--data", default=os.environ.get("VERIDIC_DATA", "../shared/data"))
    ap.add_argument("--cost", action="append", default=[], metavar="WINDOW=RATIO",
                    help="a window's tagger time per passage over the default scorer's (benchmarks/tagger_cost.py on a copy "
                         "of the tagger with that window); a window above 2 is out of the selection. Repeatable")
    args = ap.parse_args(argv)
    costs = _parse_costs(args.cost)
    from tqdm import tqdm

    from veridic.detect._benchmark import load_contrast_suite, load_wice_spans
    from veridic.detect._load import load_detector
    from veridic.detect._pipeline import TaggedDetector

    shipped = load_detector()
    rules, tagger = _Memo(shipped.detector, "detect_parsed"), _Memo(shipped.tagger, "char_probabilities")
    wice = load_wice_spans(Path(args.data) / "spans" / "wice_non_supported_tokens" / "dev.jsonl")
    entfa = _held_back_entfa(f"{args.data}/spans", fraction=shipped.tagger.meta["config"]["held_back_fraction"])
    suite = load_contrast_suite()
    print(f"WiCE dev {len(wice)} claims, EntFA held-back {len(entfa)} rows, suite {len(suite)} passages", file=sys.stderr)
    grid = GRIDS[args.grid]
    windowed = "window" in grid  # a knob of the tagger, not of TaggedDetector: each window gets a tagger of its own
    taggers: dict[Any, Any] = {None: tagger}
    rows = []
    for values in tqdm(list(itertools.product(*grid.values())), desc="variants", unit="variant"):
        knobs = dict(zip(grid, values))
        window = knobs.pop("window", None)
        if window not in taggers:
            from veridic.detect._tagger import SpanTagger

            taggers[window] = _Memo(SpanTagger(shipped.tagger.dir, max_length=window), "char_probabilities")
        # Knobs outside the grid take the constructor's defaults, the settings both grids were registered against
        # (not the shipped tagger's stored ones, which later selections change), so each grid reruns as registered.
        pipe = TaggedDetector(detector=rules, tagger=taggers[window], **knobs)
        fig = measure(pipe, wice=wice, entfa=entfa, suite=suite)
        if windowed:
            fig.update(_tagger_alone(taggers[window], wice=wice, entfa=entfa))
        obj = (fig["wice_dev_f1"] + fig["entfa_held_back_f1"] + fig["suite_left_alone"]) / 3
        described = {k: v for k, v in pipe.describe().items() if k in _KNOBS}
        row = {"knobs": described, "figures": fig, "objective": obj}
        if windowed:
            described["window"] = window or shipped.tagger.max_length
            if described["window"] in costs:
                row["cost_ratio"] = costs[described["window"]]
        rows.append(row)
    chosen = select(rows)
    args.out.mkdir(parents=True, exist_ok=True)
    tmp = args.out / "variants.json.tmp"
    tmp.write_text(json.dumps({"grid_name": args.grid, "grid": grid, "variants": rows, "selected": chosen, "shipped": rows[0]}, indent=1) + "\n")
    tmp.replace(args.out / "variants.json")
    print(_table(rows, chosen))
    return 0


_KNOBS = ("window", "word_threshold", "flag_threshold", "overrule", "spans_per_sentence", "content_words", "fixes_explain", "unsupported_fill",
          "judge_contradictions", "bindings", "rule_flags")


def _table(rows: list[dict[str, Any]], chosen: dict[str, Any]) -> str:
    """Every variant's knobs and figures as a Markdown table, the selected one marked."""
    lines = ["| τ | flag | overrule | per sentence | content words | fixes explain | unsupported fill | judge contradictions | bindings | rule flags | "
             "WiCE dev | EntFA held-back | suite left alone | entity / relation / contradictory | edits | mean |",
             "|---:|---:|---|---:|---|---|---|---|---|---|---:|---:|---:|---|---:|---:|"]
    for r in rows:
        k, f = r["knobs"], r["figures"]
        mark = " **selected**" if r is chosen else ""
        if "window" in k:
            over = f", cost {r['cost_ratio']:.2f} × the scorer's" if "cost_ratio" in r else ""
            mark += (f" (window {k['window']}{over}; the tagger alone: WiCE dev {f['tagger_wice_dev_f1']:.3f}, "
                     f"EntFA held-back {f['tagger_entfa_held_back_f1']:.3f})")
        lines.append(f"| {k['word_threshold']:.2f} | {k['flag_threshold']:.2f} | {k['overrule']} | {k['spans_per_sentence'] or 'all'} | "
              f"{k.get('content_words', False)} | {k.get('fixes_explain', False)} | {k.get('unsupported_fill') or '—'} | "
              f"{k.get('judge_contradictions', False)} | {k.get('bindings', False)} | {k.get('rule_flags', False)} | {f['wice_dev_f1']:.3f} | {f['entfa_held_back_f1']:.3f} | {f['suite_left_alone']:.3f} | "
              f"{f['suite_entity_f1']:.3f} / {f['suite_relation_f1']:.3f} / {f.get('suite_contradictory_f1', float('nan')):.3f} | "
              f"{f['suite_edits_passing']}/{f['suite_edits']} | {r['objective']:.3f}{mark} |")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())

"""Throughput of each integration against the scorer call `veridic score --input` makes, on the same rows.

Rows: the first ``--rows`` (200) of a pairs file (default: BEGIN dev, knowledge passage -> response), each scored as
an answer with one retrieved passage. The backend is loaded and every adapter warmed up once before timing, so the
figures compare scoring, not model loading. Each adapter runs through its framework's own entry point; adapters
whose framework is not installed in this environment are skipped (run the script again in the environment that
has RAGAS or DeepEval). Scores are checked against the baseline's.

    HF_HUB_OFFLINE=1 python benchmarks/integrations_throughput.py --rows 200
    HF_HUB_OFFLINE=1 python benchmarks/integrations_throughput.py --cli   # also time the `veridic score` command, model load included
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT_DATA = Path(os.environ.get("VERIDIC_DATA", REPO.parent / "shared" / "data")) / "bench" / "begin2_dev.jsonl"


def load_rows(path: Path, n: int) -> list[dict]:
    rows = []
    with open(path) as fh:
        for line in fh:
            r = json.loads(line)
            rows.append({"question": f"q{len(rows)}", "contexts": [r["source"]], "answer": r["claim"]})
            if len(rows) == n:
                break
    return rows


def installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:
        return False


def baseline(rows, opts):
    from veridic.factory import load_scorer
    from veridic.integrations import join_contexts

    scorer = load_scorer(**opts)
    return [v.score for v in scorer.score(sources=[join_contexts(r["contexts"]) for r in rows], claims=[r["answer"] for r in rows])]


def frames(rows, opts):
    import pandas as pd

    import veridic

    df = pd.DataFrame(rows)
    return veridic.score_frame(df, source="contexts", claim="answer", progress=False, **opts)["score"].tolist()


def langchain(rows, opts):
    from langchain_core.runnables import RunnablePassthrough

    from veridic.integrations.langchain import VeridicGuard

    chain = RunnablePassthrough() | VeridicGuard(**opts)
    return [o["veridic"]["score"] for o in chain.batch([{"answer": r["answer"], "documents": r["contexts"]} for r in rows])]


def ragas(rows, opts):
    from ragas import EvaluationDataset, evaluate

    from veridic.integrations.ragas import VeridicFaithfulness

    ds = EvaluationDataset.from_list([{"user_input": r["question"], "retrieved_contexts": r["contexts"], "response": r["answer"]} for r in rows])
    return list(evaluate(ds, metrics=[VeridicFaithfulness(**opts)], show_progress=False)["veridic_faithfulness"])


def deepeval(rows, opts):
    from deepeval import evaluate
    from deepeval.evaluate.configs import DisplayConfig
    from deepeval.test_case import LLMTestCase

    from veridic.integrations.deepeval import VeridicMetric

    cases = [LLMTestCase(input=r["question"], actual_output=r["answer"], retrieval_context=r["contexts"]) for r in rows]
    res = evaluate(test_cases=cases, metrics=[VeridicMetric(**opts)], display_config=DisplayConfig(print_results=False, show_indicator=False))
    by_input = {t.input: t.metrics_data[0].score for t in res.test_results}
    return [by_input[r["question"]] for r in rows]


def llamaindex(rows, opts, workers=64):
    from llama_index.core.evaluation import BatchEvalRunner

    from veridic.integrations.llamaindex import VeridicEvaluator

    runner = BatchEvalRunner({"v": VeridicEvaluator(**opts)}, workers=workers)
    res = runner.evaluate_response_strs(queries=[r["question"] for r in rows], response_strs=[r["answer"] for r in rows],
                                        contexts_list=[r["contexts"] for r in rows])
    return [e.score for e in res["v"]]


def haystack(rows, opts):
    from haystack import Pipeline

    from veridic.integrations.haystack import VeridicEvaluator

    p = Pipeline()
    p.add_component("v", VeridicEvaluator(**opts))
    out = p.run({"v": {"questions": [r["question"] for r in rows], "contexts": [r["contexts"] for r in rows],
                       "predicted_answers": [r["answer"] for r in rows]}})
    return out["v"]["individual_scores"]


ADAPTERS = {"score_frame": ("pandas", frames), "langchain": ("langchain_core", langchain), "ragas": ("ragas", ragas),
            "deepeval": ("deepeval", deepeval), "llamaindex": ("llama_index.core", llamaindex), "haystack": ("haystack", haystack)}


def clear_parse_cache() -> None:
    """Empty the structure check's parse cache, so no run reuses the parses of the run before it."""
    from veridic.nli._structure import load_structure_check

    try:
        load_structure_check()._cache.clear()
    except Exception:  # no spaCy: nothing cached
        pass


def timed(fn, rows, opts, repeat):
    best, scores = math.inf, None
    for _ in range(repeat):
        clear_parse_cache()
        t0 = time.perf_counter()
        scores = fn(rows, opts)
        best = min(best, time.perf_counter() - t0)
    return best, scores


def cli_seconds(rows, backend: str) -> float:
    from veridic.integrations import join_contexts

    with tempfile.TemporaryDirectory() as tmp:
        inp, out = Path(tmp) / "rows.jsonl", Path(tmp) / "out.jsonl"
        inp.write_text("".join(json.dumps({"source": join_contexts(r["contexts"]), "claim": r["answer"]}) + "\n" for r in rows))
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-m", "veridic.cli", "score", "--input", str(inp), "--output", str(out), "--quiet", "--backend", backend],
                       check=True)
        return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--rows", type=int, default=200)
    ap.add_argument("--backend", default="auto", help="'auto' (the embedded model, as `veridic score`) or 'dummy'")
    ap.add_argument("--repeat", type=int, default=1, help="time each this many times and keep the best")
    ap.add_argument("--only", nargs="*", help="adapters to run (default: every installed one)")
    ap.add_argument("--cli", action="store_true", help="also time the `veridic score --input` command (a new process, model load included)")
    ap.add_argument("--json", type=Path, help="write the figures here")
    args = ap.parse_args()
    for var, value in (("RAGAS_DO_NOT_TRACK", "true"), ("DEEPEVAL_TELEMETRY_OPT_OUT", "1"), ("HAYSTACK_TELEMETRY_ENABLED", "False")):
        os.environ.setdefault(var, value)
    rows = load_rows(args.data, args.rows)
    opts = {"backend": args.backend}
    chosen = {k: v for k, v in ADAPTERS.items() if (not args.only or k in args.only) and installed(v[0])}
    # warm up: the backend (loaded once per process), the structure parser and each framework's imports
    baseline(rows[:4], opts)
    for _, fn in chosen.values():
        fn(rows[:4], opts)
    base_s, base_scores = timed(baseline, rows, opts, args.repeat)
    report = {"rows": len(rows), "data": str(args.data), "backend": args.backend, "python": sys.executable,
              "results": [{"name": "veridic score (library call)", "seconds": round(base_s, 3), "rows_per_s": round(len(rows) / base_s, 1), "ratio": 1.0}]}
    for name, (_, fn) in chosen.items():
        s, scores = timed(fn, rows, opts, args.repeat)
        same = all(abs(a - b) < 1e-6 for a, b in zip(scores, base_scores)) and len(scores) == len(base_scores)
        report["results"].append({"name": name, "seconds": round(s, 3), "rows_per_s": round(len(rows) / s, 1), "ratio": round(s / base_s, 3),
                                  "same_scores": same})
    if args.cli:
        s = cli_seconds(rows, args.backend)
        report["results"].append({"name": "veridic score --input (new process, model load included)", "seconds": round(s, 3),
                                  "rows_per_s": round(len(rows) / s, 1), "ratio": round(s / base_s, 3)})
    print(f"{'what':58s} {'seconds':>8s} {'rows/s':>8s} {'x base':>7s} same")
    for r in report["results"]:
        print(f"{r['name']:58s} {r['seconds']:8.2f} {r['rows_per_s']:8.1f} {r['ratio']:7.2f} {r.get('same_scores', '')}")
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    asyncio.set_event_loop_policy(None)
    main()

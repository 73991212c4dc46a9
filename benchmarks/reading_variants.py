"""How the scorer reads long sources: every registered reading of ``e-c`` on the dev pool, and the one the
registered rule selects leave-one-dataset-out and leave-one-task-out (docs/preregistration/nli-base.md, "Reading R1",
"Reading R2", "Reading R3" and "Reading R4").

    python benchmarks/reading_variants.py --steps plan -o runs/reading-r1          # pair counts, no model call
    python benchmarks/reading_variants.py -o runs/reading-r1                       # hours on 2 cores; resumable
    python benchmarks/reading_variants.py --grid r2 -o runs/reading-r2             # R1's readings and R2's four
    python benchmarks/reading_variants.py --grid r3 --candidate w2-k4-mean-u -o runs/reading-r3-u   # R3: the current reading, uncontradicted or not
    python benchmarks/reading_variants.py --model veridic-nli-minilm-l6 -o runs/reading-r1-fast

A reading is the part of a :class:`~veridic.config.ScorerConfig` that decides what the model sees and how its
answers are pooled: sentences per window (``window_sentences``), windows kept per claim sentence
(``max_windows``), how claim sentences are pooled (``claim_aggregation``), or the whole claim against
token-budgeted chunks (``granularity="document"``). The model and the method (``e-c``) stay fixed. Grid ``r2`` adds
windows of two lengths in one pool (``window_sentences`` a pair) and the per-row mean of two R1 readings' scores.
Grid ``r3`` is the current reading and the same reading with ``source_aggregation="uncontradicted"`` (the best
window's verdict, its contradiction raised to the strongest of any kept window), and nothing else; grid ``r4`` the
same with ``uncontradicted-relevant`` (only windows holding half the claim sentence's content words count).

Steps (``--steps``, default all; a step runs the ones it reads first):

- ``plan``: per variant, the number of (window, claim sentence) pairs and their characters on the dev pool;
- ``dev``: ROC AUC of every variant on every dev set. Model calls go through the on-disk prediction cache, so
  variants that share pairs share calls, and a run that is stopped resumes where it was;
- ``select``: the registered selection. Leave-one-dataset-out: for each set, the variant with the best mean AUC on
  the other sets (ties: the current reading, then fewer pairs), scored on that set. Leave-one-task-out: the same
  with the three tasks (dialogue, summaries, claims against evidence) held out in turn. Beside it the current
  reading, and word and bigram overlap. The variant best on all sets, each set's paired difference against the
  current reading (approximate randomisation) and the rule's verdict;
- ``contrast``: the contrast suite's target groups for the selected variant and the current reading;
- ``cost``: seconds per FRANK row of both on this machine, no cache.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _steps import model_stamp, parse_steps, run_steps  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
STEPS = ("plan", "dev", "select", "contrast", "cost")
CURRENT = "w2-k4-mean"
#: The registered tasks for leave-one-task-out; every dev set belongs to exactly one.
TASKS = {"dialogue": ("begin2_cmu", "begin2_tc", "dialfact_small"),
         "summaries": ("frank_test", "summac_factcc", "summac_polytope", "tofueval_meetb"),
         "claims": ("wice_dev",)}
#: The rule's margins (registered): the selection must beat the current reading by this much held out.
MARGIN = 0.005
CONTRAST_FLOORS = {"group:argument swaps": 0.80, "group:bag-of-words swaps": 0.80, "group:faithful counterparts": 0.85}
COST_CAP = 2.0


GRIDS = ("r1", "r2", "r3", "r4")
#: Reading R2's readings the scorer computes: windows of two lengths in one pool, 4 of each kept.
UNIONS = {"u12-k4": (1, 2), "u13-k4": (1, 3)}
#: Reading R2's readings computed from two R1 readings: the per-row mean of their scores.
AVERAGES = {"a12-k4": ("w1-k4-mean", "w2-k4-mean"), "a13-k4": ("w1-k4-mean", "w3-k4-mean")}
#: Readings R3 and R4: grid -> the current reading with one source aggregation changed (name, aggregation);
#: nothing else is chosen among.
CONTRADICTION_GRIDS = {"r3": ("w2-k4-mean-u", "uncontradicted"),  # every kept window's contradiction counts
                       "r4": ("w2-k4-mean-r", "uncontradicted-relevant")}  # only windows holding half the claim's words


def variants(grid: str = "r1") -> dict[str, dict]:
    """The registered readings the scorer computes: name -> ScorerConfig options (method ``e-c``, the rest at its default)."""
    if grid not in GRIDS:
        raise ValueError(f"unknown grid {grid!r}; expected one of {', '.join(GRIDS)}")
    if grid in CONTRADICTION_GRIDS:
        name, aggregation = CONTRADICTION_GRIDS[grid]
        return {CURRENT: _current(), name: {**_current(), "source_aggregation": aggregation}}
    out: dict[str, dict] = {}
    for w, k, agg in itertools.product((1, 2, 3), (4, 8), ("mean", "min", "softmin")):
        out[f"w{w}-k{k}-{agg}"] = {"window_sentences": w, "max_windows": k, "claim_aggregation": agg}
    out["doc-chunks"] = {"granularity": "document"}
    if grid == "r2":
        for name, lengths in UNIONS.items():
            out[name] = {"window_sentences": lengths, "max_windows": 4, "claim_aggregation": "mean"}
    return out


def _current() -> dict:
    w, k, agg = CURRENT.split("-")
    return {"window_sentences": int(w[1:]), "max_windows": int(k[1:]), "claim_aggregation": agg}


def averages(grid: str = "r1") -> dict[str, tuple[str, str]]:
    """The registered readings that average two others' per-row scores: name -> the two readings."""
    return dict(AVERAGES) if grid == "r2" else {}


def readings(grid: str = "r1") -> list[str]:
    """Every reading the grid's selection chooses among."""
    return [*variants(grid), *averages(grid)]


def _components(name: str) -> tuple[str, ...]:
    """The scorer-computed readings behind a reading: itself, or the two an average reads."""
    return AVERAGES.get(name, (name,))


def _config(name: str):
    from veridic.config import ScorerConfig

    known = variants("r2")
    for grid in CONTRADICTION_GRIDS:
        known.update(variants(grid))
    return ScorerConfig(method="e-c", name=f"e-c[{name}]", **known[name])


def _datasets(data: str):
    import warnings

    from veridic.bench._datasets import load_datasets

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # begin2_dev's two duplicate ids are renamed the same way every time
        return load_datasets(specs=[data])


def _backend(model: str, *, cached: bool = True):
    from veridic.bench._cache import default_cache_dir, nli_cache_path
    from veridic.nli import CachedBackend, load_backend

    inner = load_backend(model, kind="auto")
    return CachedBackend(inner, path=nli_cache_path(score_dir=default_cache_dir())) if cached else inner


def plan(*, model: str, data: str, grid: str = "r1") -> dict:
    """Pairs each variant puts to the model on the dev pool (windows are built from the tokenizer alone); an
    average puts both of its readings' pairs."""
    from veridic.factory import build_scorer

    backend = _backend(model, cached=False)
    pairs = [([e.pair.source for e in ds.examples], [e.pair.claim for e in ds.examples]) for ds in _datasets(data)]
    res: dict = {}
    for name in variants(grid):
        sc = build_scorer(_config(name), backend=backend)
        n_pairs = n_chars = 0
        for sources, claims in pairs:
            units = sc._units(sources, claims)
            for u in units:
                n_pairs += len(u.windows)
                n_chars += sum(len(w.text) + len(u.claim_span.text) for w in u.windows)
        res[name] = {"pairs": n_pairs, "chars": n_chars}
        print(f"{name}: {n_pairs} pairs, {n_chars / 1e6:.1f} M characters", file=sys.stderr, flush=True)
    for name, parts in averages(grid).items():
        res[name] = {k: sum(res[p][k] for p in parts) for k in ("pairs", "chars")}
    return res


def dev(*, model: str, data: str, grid: str = "r1") -> dict:
    """AUC of every variant on every dev set (scores kept in the benchmark score cache)."""
    from sklearn.metrics import roc_auc_score

    from veridic.bench._cache import ScoreCache, default_cache_dir
    from veridic.bench._runner import score_dataset
    from veridic.factory import build_scorer

    backend = _backend(model)
    cache = ScoreCache(directory=default_cache_dir())
    sets = _datasets(data)
    res: dict = {"auc": {}, "scores": {}}
    # The grid's order runs the shortest windows first and the readings that share pairs one after another.
    for name in variants(grid):
        sc = build_scorer(_config(name), backend=backend)
        res["auc"][name], res["scores"][name] = {}, {}
        for ds in sets:
            run = score_dataset(scorer=sc, dataset=ds, cache=cache, progress=True)
            res["auc"][name][ds.name] = float(roc_auc_score(run.labels, run.scores))
            res["scores"][name][ds.name] = [float(s) for s in run.scores]
            print(f"{name} {ds.name}: AUC {res['auc'][name][ds.name]:.4f} ({run.timing})", file=sys.stderr, flush=True)
    for base in ("overlap", "overlap-bigram"):
        sc = build_scorer(base)
        res["auc"][base] = {}
        for ds in sets:
            run = score_dataset(scorer=sc, dataset=ds, cache=cache)
            res["auc"][base][ds.name] = float(roc_auc_score(run.labels, run.scores))
    res["labels"] = {ds.name: list(map(int, ds.labels)) for ds in sets}
    return add_averages(res, grid=grid)


def add_averages(res: dict, *, grid: str) -> dict:
    """The dev step's result with each average's per-row scores (the mean of its two readings') and AUCs added."""
    from sklearn.metrics import roc_auc_score

    for name, parts in averages(grid).items():
        res["scores"][name] = {s: [float(x) for x in np.mean([res["scores"][p][s] for p in parts], axis=0)] for s in res["labels"]}
        res["auc"][name] = {s: float(roc_auc_score(res["labels"][s], res["scores"][name][s])) for s in res["labels"]}
    return res


def _mean(auc: dict, sets: Sequence[str]) -> float:
    return float(np.mean([auc[s] for s in sets]))


def choose(auc: dict[str, dict[str, float]], *, on: Sequence[str], cost: dict[str, int]) -> str:
    """The variant with the best mean AUC on ``on``; ties go to the current reading, then to fewer pairs."""
    return max(auc, key=lambda v: (round(_mean(auc[v], on), 10), v == CURRENT, -cost.get(v, 0)))


def select(*, dev_res: dict, plan_res: dict, grid: str = "r1", candidate: str | None = None) -> dict:
    """The registered selection and the rule's verdict on the dev step's AUCs; with ``candidate``, also that
    reading's paired difference against the current one on each set (a rule that names its candidate in advance)."""
    from veridic.bench._metrics import approximate_randomization

    auc = {v: dev_res["auc"][v] for v in readings(grid)}
    sets = list(next(iter(auc.values())))
    cost = {v: plan_res[v]["pairs"] for v in readings(grid)}
    lodo = {}
    for s in sets:
        pick = choose(auc, on=[x for x in sets if x != s], cost=cost)
        lodo[s] = {"chosen": pick, "auc": auc[pick][s], "current": auc[CURRENT][s]}
    loto = {}
    for task, members in TASKS.items():
        rest = [x for x in sets if x not in members]
        pick = choose(auc, on=rest, cost=cost)
        loto[task] = {"chosen": pick, "auc": _mean(auc[pick], members), "current": _mean(auc[CURRENT], members),
                      "sets": list(members)}
    best = choose(auc, on=sets, cost=cost)
    paired = {}
    for s in sets:
        t = approximate_randomization(labels=dev_res["labels"][s], scores_a=dev_res["scores"][best][s],
                                      scores_b=dev_res["scores"][CURRENT][s], trials=10_000, seed=0)
        paired[s] = {"diff": t.diff, "p": t.p_value}
    named = {}
    if candidate is not None:
        for s in sets:
            t = approximate_randomization(labels=dev_res["labels"][s], scores_a=dev_res["scores"][candidate][s],
                                          scores_b=dev_res["scores"][CURRENT][s], trials=10_000, seed=0)
            named[s] = {"diff": t.diff, "p": t.p_value}
    lodo_mean = float(np.mean([r["auc"] for r in lodo.values()]))
    loto_mean = float(np.mean([r["auc"] for r in loto.values()]))
    cur_mean = _mean(auc[CURRENT], sets)
    cur_task_mean = float(np.mean([r["current"] for r in loto.values()]))
    worse = [s for s, r in paired.items() if r["diff"] < 0 and r["p"] < 0.05]
    rule = {
        "a_not_current": best != CURRENT,
        "b_lodo_margin": lodo_mean >= cur_mean + MARGIN,
        "c_loto_margin": loto_mean >= cur_task_mean + MARGIN,
        "d_no_set_worse": not worse,
    }
    return {"variants": {v: {"mean": _mean(auc[v], sets), "per_set": auc[v], "pairs": cost[v]} for v in auc},
            "baselines": {b: {"mean": _mean(dev_res["auc"][b], sets), "per_set": dev_res["auc"][b]} for b in ("overlap", "overlap-bigram")},
            "lodo": lodo, "lodo_mean": lodo_mean, "loto": loto, "loto_mean": loto_mean,
            "current_mean": cur_mean, "current_task_mean": cur_task_mean, "best_on_all": best, "paired": paired,
            "significantly_worse": worse, "rule_dev": rule, "passes_dev": all(rule.values()),
            **({"candidate": candidate, "candidate_paired": named} if candidate is not None else {})}


def contrast(*, model: str, pick: str) -> dict:
    """The contrast suite's target groups at the method's own threshold, for the selection and the current reading."""
    from veridic.bench._cache import ScoreCache, default_cache_dir
    from veridic.bench._contrast import load_suite_rules, rule_accuracy
    from veridic.bench._runner import score_dataset
    from veridic.factory import build_scorer

    backend = _backend(model)
    cache = ScoreCache(directory=default_cache_dir())
    (ds,) = _datasets("contrast")
    rows = load_suite_rules(ds.path)
    out = {}
    for name in dict.fromkeys((pick, CURRENT)):
        # An average's score is the mean of its readings' (all e-c, so one threshold).
        per_row: dict[str, list[float]] = {}
        for part in _components(name):
            sc = build_scorer(_config(part), backend=backend)
            run = score_dataset(scorer=sc, dataset=ds, cache=cache, progress=True)
            for i, x in zip(run.ids, run.scores):
                per_row.setdefault(i, []).append(float(x))
        acc = rule_accuracy(rows=rows, scores={i: float(np.mean(xs)) for i, xs in per_row.items()}, threshold=float(sc.threshold))
        out[name] = {g: acc[g]["accuracy"] for g in CONTRAST_FLOORS}
    out["passes"] = all(out[pick][g] >= f for g, f in CONTRAST_FLOORS.items())
    return out


def cost(*, model: str, data: str, pick: str, n: int) -> dict:
    """Seconds per FRANK row on this machine, no prediction cache, the model loaded once; each reading timed twice
    in alternation and the faster run kept, so that neither pays for a cold start. An average runs its two
    readings one after the other."""
    from veridic.factory import build_scorer

    (frank,) = [d for d in _datasets(data) if d.name == "frank_test"]
    ex = frank.examples[:n]
    backend = _backend(model, cached=False)
    best: dict[str, float] = {}
    names = list(dict.fromkeys((CURRENT, pick)))
    for _ in range(2):
        for name in names:
            scorers = [build_scorer(_config(part), backend=backend) for part in _components(name)]
            t0 = time.perf_counter()
            for sc in scorers:
                sc.score(sources=[e.pair.source for e in ex], claims=[e.pair.claim for e in ex])
            dt = (time.perf_counter() - t0) / len(ex)
            best[name] = min(best.get(name, dt), dt)
    ratio = best[pick] / best[CURRENT]
    return {"n": len(ex), "s_per_row": best, "ratio": ratio, "passes": ratio <= COST_CAP}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="veridic-nli-mpnet-base", help="the model whose reading is chosen (name, folder or hub id)")
    ap.add_argument("--data", default=os.environ.get("VERIDIC_DATA", "../shared/data") + "/bench")
    ap.add_argument("--steps", default=",".join(STEPS))
    ap.add_argument("--grid", default="r1", choices=GRIDS,
                    help="r1: Reading R1's 19 readings; r2: those and Reading R2's four; r3 / r4: the current reading against "
                         "uncontradicted / uncontradicted-relevant")
    ap.add_argument("--candidate", default=None,
                    help="a reading named in advance: its paired test against the current reading, and the contrast and cost steps for it "
                         "rather than for the selection")
    ap.add_argument("--cost-rows", type=int, default=100)
    ap.add_argument("-o", "--out", type=Path, required=True)
    ap.add_argument("--force", action="store_true", help="recompute the wanted steps")
    args = ap.parse_args(argv)
    if args.candidate is not None and args.candidate not in readings(args.grid):
        ap.error(f"--candidate {args.candidate!r} is not a reading of grid {args.grid}; expected one of {', '.join(readings(args.grid))}")
    try:
        wanted = parse_steps(args.steps, STEPS)
    except ValueError as exc:
        ap.error(str(exc))
    # select needs dev and plan; contrast and cost need the selection.
    need = set(wanted) | ({"plan", "dev"} if {"select", "contrast", "cost"} & set(wanted) else set())
    need |= {"select"} if {"contrast", "cost"} & set(wanted) else set()
    res: dict = {}
    # Each step reads the results of the steps before it (kept in OUT), so they run one at a time, in order.
    runners = {"plan": lambda: plan(model=args.model, data=args.data, grid=args.grid),
               "dev": lambda: dev(model=args.model, data=args.data, grid=args.grid),
               "select": lambda: select(dev_res=res["dev"], plan_res=res["plan"], grid=args.grid, candidate=args.candidate),
               "contrast": lambda: contrast(model=args.model, pick=args.candidate or res["select"]["best_on_all"]),
               "cost": lambda: cost(model=args.model, data=args.data, pick=args.candidate or res["select"]["best_on_all"], n=args.cost_rows)}
    stamp = {"model": model_stamp(args.model), "grid": {**variants(args.grid), **averages(args.grid)}, "data": str(Path(args.data).resolve()),
             **({"candidate": args.candidate} if args.candidate else {})}
    for name in (s for s in STEPS if s in need):
        res.update(run_steps(order=STEPS, wanted=[name], run={name: runners[name]}, out=args.out, force=args.force and name in wanted, stamp=stamp))
    # One JSON line (benchmarks/report.py keeps it): the selection with every reading's per-set AUC, contrast, cost.
    print(json.dumps({"model": args.model, "current": CURRENT, "select": res.get("select"), "contrast": res.get("contrast"),
                      "cost": res.get("cost")}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Does the Trainer-based NLI training give the figures of the hand-written loop it replaced? One JSON line out.

    python benchmarks/trainer_equivalence.py                       # train both, then compare (about an hour on 2 busy cores)
    python benchmarks/trainer_equivalence.py --steps heldout,dev   # compare the two run folders again
    python benchmarks/trainer_equivalence.py --config configs/nli-minilm-distill.yaml --steps heldout,dev \
        --runs LOOP_RUN TRAINER_RUN --heldout-rows 2400 --out runs/trainer-equivalence-distill   # two full runs

One config (``--config``, default the fast default's recipe ``configs/nli-minilm.yaml``, from the pretrained
backbone) is trained twice for the same 300 optimiser steps (``--train-steps``): by the hand-written loop, from a
checkout of commit 6cd32fb (``--loop-tree``), and by the ``transformers.Trainer`` subclass of this tree, each
with its own code on its own PYTHONPATH. The steps are set with ``optim.max_steps`` (the first 300 batches of the
full plan, with the schedule over those 300): ``stop_after_steps`` ends either version's run with a checkpoint and
no exported model. Runs go to ``--out``/loop and ``--out``/trainer; a finished run is reused. The loop's synthetic
pairs are copied to the Trainer's folder (same data code, same cache key) so they are built once. 300 steps check
equivalence; they do not make a usable model.

Both exported ``final/`` models are then scored by this tree's code:

- ``heldout``: 3-way and 2-way accuracy (``veridic.train``'s ``evaluate_nli``) on the first ``--heldout-rows``
  held-back tier-A rows, rebuilt as the trainer builds them; the paired difference (Trainer - loop) with a 95 %
  paired bootstrap interval and an exact McNemar p;
- ``dev``: ``e-c`` ROC AUC on a seeded sample of 200 rows per dev file (``benchmarks/sample_rows.py --n 200 --seed
  0``, as ``benchmarks/report.py``'s dev measurement), per set and macro mean, with the paired difference and the
  approximate-randomisation p of ``veridic bench --compare``.

Rule, fixed before the run: the two are "equal" when the mean dev AUC difference is not significant (p > 0.05)
and the held-back 3-way accuracies differ by less than 2 points.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEV_FILES = ("frank_test", "summac_polytope", "summac_factcc", "begin2_dev", "dialfact_small", "wice_dev", "tofueval_meetb_dev")
STEPS = ("train", "heldout", "dev")
# Runs the same in both trees: both export Trainer and load_config from veridic.train.
TRAIN = """
import dataclasses as d, logging, sys
from veridic.train import Trainer, load_config
logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
cfg = load_config(sys.argv[1])
cfg = d.replace(cfg, optim=d.replace(cfg.optim, max_steps=int(sys.argv[3])),
                runtime=d.replace(cfg.runtime, max_minutes=None, checkpoint_minutes=1e4, progress=False))
print(Trainer(config=cfg, output_dir=sys.argv[2]).train())
"""


def _run(cmd: list[str], *, cwd: Path = ROOT, pythonpath: Path = ROOT) -> None:
    print(f"$ (cd {cwd}) " + " ".join(cmd), file=sys.stderr, flush=True)
    subprocess.run(cmd, cwd=cwd, check=True, stdout=sys.stderr, env={**os.environ, "PYTHONPATH": str(pythonpath)})


def _summary(run: Path) -> dict | None:
    f = run / "training_summary.json"
    return json.loads(f.read_text()) if f.exists() else None


def train(*, config: Path, runs: dict[str, Path], trees: dict[str, Path], steps: int) -> dict:
    out = {}
    for role, run in runs.items():
        s = _summary(run)
        if not (s and s["steps"] == steps and s["stopped_by"] == "completed"):
            run.mkdir(parents=True, exist_ok=True)
            cache, loop_cache = run / "synthetic.jsonl.gz", runs["loop"] / "synthetic.jsonl.gz"
            if role != "loop" and not cache.exists() and loop_cache.exists():
                shutil.copy2(loop_cache, cache)
            _run([sys.executable, "-c", TRAIN, str(config), str(run), str(steps)], cwd=trees[role], pythonpath=trees[role])
            s = _summary(run)
        out[role] = {"steps": s["steps"], "train_seconds": s["train_seconds"], "config_hash": s["config_hash"],
                     "held_out_all": {k: s["held_out"][k] for k in ("n", "accuracy_3way", "accuracy_2way")}}
    return out


def _paired(a, b, *, seed: int, resamples: int = 10_000) -> dict:
    """Accuracy of b minus a on the same rows (bool arrays): 95 % paired bootstrap interval and exact McNemar p."""
    import numpy as np
    from scipy.stats import binomtest

    d = b.astype(float) - a.astype(float)
    rng = np.random.default_rng(seed)
    boot = np.concatenate([d[rng.integers(0, len(d), size=(1000, len(d)))].mean(1) for _ in range(resamples // 1000)])
    only_a, only_b = int((a & ~b).sum()), int((b & ~a).sum())
    p = binomtest(min(only_a, only_b), only_a + only_b, 0.5).pvalue if only_a + only_b else 1.0
    return {"diff": float(d.mean()), "ci95": [float(x) for x in np.quantile(boot, [0.025, 0.975])],
            "only_loop_right": only_a, "only_trainer_right": only_b, "mcnemar_p": float(p)}


def heldout(*, config: Path, runs: dict[str, Path], n: int, seed: int) -> dict:
    import numpy as np
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    from veridic.train import Trainer, load_config
    from veridic.train._data import NOT_ENTAILMENT
    from veridic.train._evaluate import evaluate_nli

    torch.set_num_threads(2)
    cfg = load_config(config)
    t = Trainer(config=cfg, output_dir=runs["trainer"])  # the run folder's synthetic cache; rows as training selects them
    t._prepare_data()
    rows = t.held_out[:n]
    gold = np.array([e.label for e in rows])
    three = gold != NOT_ENTAILMENT
    out: dict = {"n": len(rows), "n_3way": int(three.sum())}
    right: dict[str, dict[str, np.ndarray]] = {}
    for role, run in runs.items():
        model = AutoModelForSequenceClassification.from_pretrained(str(run / "final")).eval()
        tok = AutoTokenizer.from_pretrained(str(run / "final"))
        got: list[int] = []
        hook = model.register_forward_hook(lambda m, a, o, got=got: got.extend(o.logits.argmax(-1).tolist()))
        res = evaluate_nli(model=model, tokenizer=tok, examples=rows, batch_size=64, max_length=cfg.model.max_length)
        hook.remove()
        # evaluate_nli scores the rows shortest first; its accuracies check the mapping back.
        order = sorted(range(len(rows)), key=lambda i: len(rows[i].premise) + len(rows[i].hypothesis))
        pred = np.empty(len(rows), dtype=int)
        pred[order] = got
        right[role] = {"3way": (pred == gold)[three], "2way": (gold == 0) == (pred == 0)}
        assert abs(right[role]["3way"].mean() - res["accuracy_3way"]) < 1e-9 and abs(right[role]["2way"].mean() - res["accuracy_2way"]) < 1e-9
        out[role] = {"accuracy_3way": res["accuracy_3way"], "accuracy_2way": res["accuracy_2way"]}
        print(f"heldout {role}: 3-way {res['accuracy_3way']:.4f} 2-way {res['accuracy_2way']:.4f}", file=sys.stderr, flush=True)
    for k in ("3way", "2way"):
        out[f"trainer_minus_loop_{k}"] = _paired(right["loop"][k], right["trainer"][k], seed=seed)
    return out


def dev(*, runs: dict[str, Path], out: Path, data_dir: Path, n: int) -> dict:
    sample = out / f"dev{n}"
    if not sample.exists():
        _run([sys.executable, "benchmarks/sample_rows.py", "--n", str(n), "--seed", "0", "--out", str(sample),
              *(str(data_dir / "bench" / f"{f}.jsonl") for f in DEV_FILES)])
    loop_csv = out / "dev" / "loop_ec.csv"
    _run([sys.executable, "benchmarks/score_with_model.py", "--model", str(runs["loop"] / "final"), "--suffix", "loop",
          "--scorer", "e-c", "--data", str(sample), "--backend", "auto", "--out", str(loop_csv)])
    _run([str(Path(sys.executable).with_name("veridic")), "bench", "--data", str(sample), "--model", str(runs["trainer"] / "final"),
          "--scorer", "e-c", "--scores", str(loop_csv), "--compare", "e-c", "e-c@loop", "--no-progress", "-o", str(out / "dev")])
    rep = json.loads((out / "dev" / "report.json").read_text())
    cmp = {c["dataset"]: c for c in rep["comparisons"]}
    per_set = {ds: {"loop": r["e-c@loop"]["auc"], "trainer": r["e-c"]["auc"], "diff": cmp[ds]["diff"], "p": cmp[ds]["p_value"]}
               for ds, r in rep["results"].items()}
    m = cmp["mean"]
    return {"rows_per_file": n, "per_set": per_set,
            "mean": {"loop": rep["mean"]["e-c@loop"]["auc"], "trainer": rep["mean"]["e-c"]["auc"], "diff": m["diff"],
                     "ci95": [m["diff_ci_low"], m["diff_ci_high"]], "p": m["p_value"]}}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", type=Path, default=ROOT / "configs" / "nli-minilm.yaml")
    ap.add_argument("--loop-tree", type=Path, default=Path("/work/snap-distill"), help="a checkout of 6cd32fb (the hand-written loop)")
    ap.add_argument("--out", type=Path, default=ROOT / "runs" / "trainer-equivalence")
    ap.add_argument("--train-steps", type=int, default=300)
    ap.add_argument("--heldout-rows", type=int, default=1000)
    ap.add_argument("--dev-rows", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0, help="seed of the held-back bootstrap")
    ap.add_argument("--steps", default=",".join(STEPS), help=f"comma-separated, of {', '.join(STEPS)}")
    ap.add_argument("--runs", nargs=2, type=Path, metavar=("LOOP_RUN", "TRAINER_RUN"), default=None,
                    help="score two finished run folders (the same config trained by each) instead of --out/loop and --out/trainer")
    args = ap.parse_args(argv)
    steps = args.steps.split(",")
    t0 = time.monotonic()
    config, out = args.config.resolve(), args.out.resolve()
    runs = {"loop": out / "loop", "trainer": out / "trainer"}
    if args.runs is not None:
        if "train" in steps:
            ap.error("--runs scores finished runs; leave 'train' out of --steps")
        runs = {"loop": args.runs[0].expanduser().resolve(), "trainer": args.runs[1].expanduser().resolve()}
        for role, run in runs.items():
            if not (run / "final" / "model.safetensors").exists():
                ap.error(f"--runs: {run} has no final/model.safetensors (the {role} run's export)")
    res: dict = {"config": str(config.relative_to(ROOT)) if config.is_relative_to(ROOT) else str(config)}
    if args.runs is None:
        res["train_steps"] = args.train_steps
    else:
        res["runs"] = {role: str(run) for role, run in runs.items()}
    if "train" in steps:
        res["runs"] = train(config=config, runs=runs, trees={"loop": args.loop_tree.resolve(), "trainer": ROOT}, steps=args.train_steps)
    if "heldout" in steps:
        res["heldout"] = heldout(config=config, runs=runs, n=args.heldout_rows, seed=args.seed)
    if "dev" in steps:
        from veridic.io._paths import default_data_dir

        res["dev"] = dev(runs=runs, out=out, data_dir=default_data_dir(), n=args.dev_rows)
    if "heldout" in res and "dev" in res:
        gap = abs(res["heldout"]["loop"]["accuracy_3way"] - res["heldout"]["trainer"]["accuracy_3way"])
        res["rule"] = {"dev_mean_p_above_0.05": res["dev"]["mean"]["p"] > 0.05, "heldout_3way_gap_below_2_points": gap < 0.02}
        res["rule"]["equal"] = all(res["rule"].values())
    res["wall_s"] = round(time.monotonic() - t0, 1)
    print(json.dumps(res))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

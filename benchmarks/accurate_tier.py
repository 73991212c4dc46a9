"""The accurate tier's registered evaluation (docs/preregistration/nli-base.md, "What is scored"), one JSON line out.

    python benchmarks/accurate_tier.py --model veridic-nli-mpnet-base --out runs/report/accurate
    python benchmarks/accurate_tier.py --model ~/.cache/veridic/train/nli-base-l12s-v2/final --steps heldout

Steps (``--steps``, comma-separated; default all), each beside the fast default (``--baseline``) and a trivial
baseline:

- ``heldout``: 3-way accuracy and per-class F1 on the 2,400 held-back tier-A rows of ``--config`` (rebuilt as the
  trainer builds them, never trained on by any veridic model), the majority class beside it;
- ``dev``: ``e-c`` mean ROC AUC with 95 % bootstrap CIs on every dev file, word and bigram overlap beside it, and
  the paired per-set difference against the fast default's ``e-c`` (approximate randomisation);
- ``contrast``: the contrast suite's groups, bigram overlap beside them;
- ``cost``: 100 FRANK rows through ``veridic score --method e-c`` as a whole process (wall, CPU, peak memory);
- ``detector``: the rule detector on each model (its default judge, ``e-c``): the detector's contrast suite (per-type
  F1, correct passages left alone, the edit audit) and WiCE dev non-supported tokens (all-tokens baseline inside).

Model predictions go through the benchmark's on-disk caches, so a run cut short (``kill``) resumes where it
stopped: the dev step on a base-size model takes hours on 2 cores and may need several runs. OUT is stamped with
what it measured (each model's folder and a fingerprint of its files, the config, the data): results for another
model, or for a model exported again since, are refused rather than reported; ``--force`` recomputes them.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _steps import model_stamp, parse_steps, run_steps  # noqa: E402

from veridic.nli._models import ACCURATE_MODEL_NAME  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
STEPS = ("heldout", "dev", "contrast", "cost", "detector")
#: What a step keeps inside OUT besides ``<step>.json`` (``--force`` removes it; the dev step's model predictions stay
#: in the benchmark's score cache under ~/.cache/veridic, keyed by model, so a forced run cut short still resumes).
INNER = {"dev": ("baseline_ec.csv", "dev"), "contrast": ("contrast",),
         "detector": tuple(f"detector-{n}-{r}.json" for n in ("suite", "wice_dev") for r in ("default", "accurate"))}


def model_revision(ref: str) -> str | None:
    """The revision a model records (the one its backend reports), so that a report can tell which default a
    candidate was compared with after the default changes; None for a hub id."""
    from veridic.nli._backend import _read_revision
    from veridic.nli._models import resolve_model_path

    path, kind = resolve_model_path(ref)
    return None if kind == "hub" else _read_revision(path)


def _exe(name: str) -> str:
    return str(Path(sys.executable).with_name(name))


def _run(cmd: list[str]) -> None:
    print("$ " + " ".join(cmd), file=sys.stderr, flush=True)
    subprocess.run(cmd, cwd=ROOT, check=True, stdout=sys.stderr)


def heldout(*, models: dict[str, str], config: str) -> dict:
    """3-way accuracy of each model on the config's held-back real rows, the majority class beside it."""
    from transformers import AutoTokenizer

    from veridic.nli._backend import load_sequence_classifier
    from veridic.nli._models import resolve_model_path
    from veridic.train._data import NOT_ENTAILMENT
    from veridic.train._evaluate import evaluate_nli
    from veridic.train._loop import Trainer, load_config

    cfg = load_config(config)
    trainer = Trainer(config=cfg, output_dir=ROOT / "runs" / "accurate-heldout")
    trainer._prepare_data()  # the held-back slice exactly as training selects it
    rows = trainer.held_out
    three = [e.label for e in rows if e.label != NOT_ENTAILMENT]
    label, count = Counter(three).most_common(1)[0]
    out: dict = {"n": len(rows), "n_3way": len(three), "majority_3way": count / len(three), "majority_label": label}
    for role, ref in models.items():
        path, _ = resolve_model_path(ref)
        model = load_sequence_classifier(Path(path) if Path(str(path)).is_dir() else path).eval()
        tok = AutoTokenizer.from_pretrained(str(path))
        res = evaluate_nli(model=model, tokenizer=tok, examples=rows, batch_size=64, max_length=cfg.model.max_length)
        out[role] = {k: res[k] for k in ("accuracy_3way", "accuracy_2way", "per_class")}
        print(f"heldout {role}: 3-way {res['accuracy_3way']:.3f}", file=sys.stderr, flush=True)
    return out


def _bench(args: list[str], folder: Path) -> dict:
    _run([_exe("veridic"), "bench", *args, "--no-progress", "-o", str(folder)])
    rep = json.loads((folder / "report.json").read_text())
    for block in rep.get("results", {}).values():
        for res in block.values():
            res.pop("scores", None)
    return rep


def dev(*, model: str, baseline: str, data: str, out: Path) -> dict:
    base_csv = out / "baseline_ec.csv"
    _run([sys.executable, "benchmarks/score_with_model.py", "--model", baseline, "--suffix", "default", "--scorer", "e-c",
          "--data", data, "--backend", "auto", "--out", str(base_csv)])
    return _bench(["--data", data, "--model", model, "--scorer", "e-c", "--scorer", "overlap", "--scorer", "overlap-bigram",
                   "--scores", str(base_csv), "--compare", "e-c", "e-c@default"], out / "dev")


def contrast(*, model: str, out: Path) -> dict:
    rep = _bench(["--data", "contrast", "--model", model, "--scorer", "e-c", "--scorer", "overlap-bigram"], out / "contrast")
    per = json.loads((out / "contrast" / "contrast.json").read_text())["contrast"]
    groups = {n: {r: v for r, v in rules.items() if r.startswith("group:")} for n, rules in per.items()}
    return {"auc": {n: rep["mean"][n]["auc"] for n in rep["mean"]}, "groups": groups}


def detector(*, models: dict[str, str], wice: str, out: Path) -> dict:
    """The detector's suite and WiCE dev with each model as the detector's judge."""
    res: dict = {}
    for role, ref in models.items():
        flags = [] if ref == "embedded" else ["--model", ref]
        for name, cmd in (("suite", ["suite", "--n-boot", "200"]), ("wice_dev", ["wice", "--split", "dev", "--data", wice])):
            f = out / f"detector-{name}-{role}.json"
            if not f.exists():
                _run([_exe("veridic"), "detect", "bench", *cmd, *flags, "-o", str(f)])
            rep = json.loads(f.read_text())
            if name == "suite":
                res.setdefault(role, {})[name] = {"per_type_f1": {t: v["f1"] for t, v in rep["per_type"].items()}, "binary_f1": rep["binary"]["f1"],
                                                  "left_alone": 1 - rep["false_flags"]["rate"], "edit_audit": {k: v for k, v in rep["edit_audit"].items() if k != "failed"}}
            else:
                res.setdefault(role, {})[name] = {k: rep.get(k) for k in ("f1", "precision", "recall", "f1_ci95", "baseline_all_tokens", "margin_over_baseline_ci95")}
    return res


def cost(*, models: dict[str, str], frank: str, n: int) -> dict:
    """Whole-process cost of ``veridic score --method e-c`` on the first ``n`` FRANK rows, per model: wall and CPU
    seconds and peak resident memory, read by GNU time for that process alone."""
    import shutil
    import tempfile

    timer = shutil.which("time") or "/usr/bin/time"
    if not Path(timer).exists():
        raise SystemExit("the cost step needs GNU time (/usr/bin/time): apt-get install time")
    out = {}
    for role, ref in models.items():
        with tempfile.TemporaryDirectory() as tmp:
            cmd = [_exe("veridic"), "score", "-i", frank, "--limit", str(n), "--method", "e-c", "-q", "-o", f"{tmp}/scored.jsonl"]
            if ref != "embedded":
                cmd += ["--model", ref]
            _run([timer, "-f", "%e %U %S %M", "-o", f"{tmp}/time.txt", *cmd])
            wall, user, system, rss_kb = Path(f"{tmp}/time.txt").read_text().split()[-4:]
        out[role] = {"n": n, "wall_s": round(float(wall), 1), "cpu_s": round(float(user) + float(system), 1),
                     "peak_rss_mb": round(int(rss_kb) / 1024)}
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default=ACCURATE_MODEL_NAME, help="the accurate tier: a name, folder or hub id")
    ap.add_argument("--baseline", default="embedded", help="the fast default to compare with")
    ap.add_argument("--config", default="configs/nli-base-v1.yaml", help="training config whose held-back rows are scored")
    ap.add_argument("--data", default=os.environ.get("VERIDIC_DATA", "../shared/data") + "/bench")
    ap.add_argument("--frank-rows", type=int, default=100)
    ap.add_argument("--steps", default=",".join(STEPS))
    ap.add_argument("--out", type=Path, default=Path("runs/report/accurate"))
    ap.add_argument("--force", action="store_true", help="recompute every wanted step, even those whose results OUT already holds")
    args = ap.parse_args(argv)
    try:
        steps = parse_steps(args.steps, STEPS)
    except ValueError as exc:
        ap.error(str(exc))
    args.out.mkdir(parents=True, exist_ok=True)
    result: dict = {"model": args.model, "baseline": args.baseline, "baseline_revision": model_revision(args.baseline)}
    both = {"default": args.baseline, "accurate": args.model}
    run = {"heldout": lambda: heldout(models=both, config=args.config),
           "dev": lambda: dev(model=args.model, baseline=args.baseline, data=args.data, out=args.out),
           "contrast": lambda: contrast(model=args.model, out=args.out),
           "cost": lambda: cost(models=both, frank=f"{args.data}/frank_test.jsonl", n=args.frank_rows),
           "detector": lambda: detector(models=both, wice=str(Path(args.data).parent / "spans" / "wice_non_supported_tokens"), out=args.out)}
    stamp = {"model": model_stamp(args.model), "baseline": model_stamp(args.baseline), "config": args.config,
             "data": args.data, "frank_rows": args.frank_rows}
    result.update(run_steps(order=STEPS, wanted=steps, run=run, out=args.out, force=args.force, stamp=stamp, inner=INNER))
    (args.out / "accurate.json").write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())

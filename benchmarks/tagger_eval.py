"""The span tagger's registered evaluation (docs/preregistration/span-tagger.md, "What is scored"), into one folder.

    python benchmarks/tagger_eval.py --tagger veridic-tagger-minilm-l6 -o runs/report/spans
    python benchmarks/tagger_eval.py --tagger ~/.cache/veridic/train/span-tagger-v1/final -o runs/tagger --steps wice,cost
    python benchmarks/tagger_eval.py --tagger veridic-tagger-mpnet-l6 --judge veridic-nli-mpnet-base --steps spans,wice,suite -o OUT

``--cost-detector`` also times the whole detector in the cost step (``benchmarks/tagger_cost.py --detector``).
``--judge NAME`` runs the detector and the pipeline on that NLI model (``veridic detect --model NAME``) instead of the
default one; the tagger alone and the baselines do not read a judge.

Steps (``--steps``, comma-separated; default all), each beside trivial baselines and today's detector:

- ``spans``: ``veridic detect bench-spans --tagger T --pipeline`` on every evaluation row of the human span sets
  (mark-everything, absent-words, the detector, the tagger alone and the pipeline) → ``spans.json``;
- ``wice``: WiCE non-supported tokens, dev and test, for the tagger alone, the pipeline and the detector, the
  all-tokens baseline inside each → ``wice.json``;
- ``suite``: the detector's contrast suite for today's detector and the pipeline, with the audit of every
  suggested edit → ``suite.json``;
- ``cost``: seconds per passage of the tagger and of the default scorer on the same 200 rows
  (``benchmarks/tagger_cost.py``; ``--cost-also-model NAME`` times the scorer on that model too) → ``cost.json``.

Each finished step is kept in ``OUT/<step>.json`` and reused, so a run cut short resumes at the next step. OUT is
stamped with the tagger it measured (its folder and a fingerprint of its files, ``tagger.json`` with its thresholds and
pipeline settings included) and with the judge (the default NLI model's folder and fingerprint): a run for another
tagger, for the same one with other settings, or with another judge, refuses to reuse it. ``--force``
recomputes everything, the files each step keeps inside OUT included.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _steps import folder_fingerprint, model_stamp, parse_steps, run_steps  # noqa: E402

from veridic.nli._models import EMBEDDED_MODEL_NAME  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
STEPS = ("spans", "wice", "suite", "cost")


def _exe(name: str) -> str:
    return str(Path(sys.executable).with_name(name))


def _run(cmd: list[str]) -> str:
    print("$ " + " ".join(cmd), file=sys.stderr, flush=True)
    return subprocess.run(cmd, cwd=ROOT, check=True, text=True, stdout=subprocess.PIPE).stdout


#: What a step leaves in OUT besides ``<step>.json``; --force removes these too, so nothing old is read back.
INNER = {"spans": ("bench-spans",), "wice": tuple(f"wice-{s}-{n}.json" for s in ("dev", "test") for n in ("tagger", "pipeline", "detector")),
         "suite": ("suite-detector.json", "suite-pipeline.json"), "cost": ()}


def tagger_stamp(tagger: str) -> dict[str, str]:
    """What a run measures: the tagger's resolved folder and a fingerprint of its files (weights, thresholds and the
    pipeline settings in its ``tagger.json``)."""
    from veridic.detect._tagger import TAGGER_FILE, resolve_tagger_path

    folder = resolve_tagger_path(tagger)
    if not (folder / TAGGER_FILE).exists():
        raise SystemExit(f"tagger_eval: {tagger!r} resolves to {folder}, which has no {TAGGER_FILE}; "
                         "expected a trained tagger's folder or the shipped name veridic-tagger-minilm-l6.")
    return {"tagger": str(folder.resolve()), "files": folder_fingerprint(folder)}


def _judge_args(judge: str | None) -> list[str]:
    return ["--model", judge] if judge else []


def spans(*, tagger: str, out: Path, judge: str | None = None) -> dict:
    _run([_exe("veridic"), "detect", "bench-spans", "--tagger", tagger, "--pipeline", *_judge_args(judge), "-o", str(out / "bench-spans")])
    return json.loads((out / "bench-spans" / "spans.json").read_text())


def wice(*, tagger: str, data: str, out: Path, judge: str | None = None) -> dict:
    res: dict = {}
    for split in ("dev", "test"):
        for name, extra in (("tagger", ["--tagger", tagger]), ("pipeline", ["--tagger", tagger, "--pipeline"]), ("detector", [])):
            f = out / f"wice-{split}-{name}.json"
            if not f.exists():
                _run([_exe("veridic"), "detect", "bench", "wice", "--split", split, "--data", data, *extra, *_judge_args(judge), "-o", str(f)])
            rep = json.loads(f.read_text())
            res.setdefault(split, {})[name] = {k: rep.get(k) for k in ("f1", "precision", "recall", "f1_ci95", "baseline_all_tokens",
                                                                         "margin_over_baseline_ci95", "claims", "predicted_types")}
    return res


def suite(*, tagger: str, out: Path, judge: str | None = None) -> dict:
    res: dict = {}
    for name, extra in (("detector", []), ("pipeline", ["--tagger", tagger])):
        f = out / f"suite-{name}.json"
        if not f.exists():
            _run([_exe("veridic"), "detect", "bench", "suite", *extra, *_judge_args(judge), "-o", str(f)])
        rep = json.loads(f.read_text())
        rep.pop("errors", None)  # per-passage mistakes stay in OUT/suite-*.json
        res[name] = rep
    return res


def cost(*, tagger: str, also: list[str], detector: bool = False) -> dict:
    extra = [a for m in also for a in ("--also-model", m)] + (["--detector"] if detector else [])
    line = [x for x in _run([sys.executable, "benchmarks/tagger_cost.py", "--tagger", tagger, *extra]).splitlines() if x.strip()]
    return json.loads("\n".join(line))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tagger", default="veridic-tagger-minilm-l6", help="the tagger: its shipped name or a folder")
    ap.add_argument("--wice", default=os.environ.get("VERIDIC_DATA", "../shared/data") + "/spans/wice_non_supported_tokens")
    ap.add_argument("--steps", default=",".join(STEPS))
    ap.add_argument("-o", "--out", type=Path, default=Path("runs/report/spans"))
    ap.add_argument("--force", action="store_true", help="recompute every step, even those whose results OUT already holds")
    ap.add_argument("--cost-also-model", action="append", default=[], metavar="NAME",
                    help="the cost step also times the scorer on this model (e.g. the accurate tier beside a base-size tagger)")
    ap.add_argument("--cost-detector", action="store_true",
                    help="the cost step also times the whole detector: with the default judge, without a tagger, and judged by each --cost-also-model")
    ap.add_argument("--judge", default=None, metavar="NAME",
                    help="the NLI model the detector and the pipeline judge with (default: the embedded default model)")
    args = ap.parse_args(argv)
    try:
        steps = parse_steps(args.steps, STEPS)
    except ValueError as exc:
        ap.error(str(exc))
    args.out.mkdir(parents=True, exist_ok=True)
    j = args.judge
    run = {"spans": lambda: spans(tagger=args.tagger, out=args.out, judge=j), "wice": lambda: wice(tagger=args.tagger, data=args.wice, out=args.out, judge=j),
           "suite": lambda: suite(tagger=args.tagger, out=args.out, judge=j), "cost": lambda: cost(tagger=args.tagger, also=args.cost_also_model, detector=args.cost_detector)}
    run_steps(order=STEPS, wanted=steps, run=run, out=args.out, force=args.force,
              stamp={**tagger_stamp(args.tagger), "judge": model_stamp(j or EMBEDDED_MODEL_NAME)}, inner=INNER)
    print(json.dumps({"tagger": args.tagger, "out": str(args.out), "steps": [s for s in STEPS if (args.out / f"{s}.json").exists()]}))
    return 0


if __name__ == "__main__":
    sys.exit(main())

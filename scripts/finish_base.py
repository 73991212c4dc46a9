"""Finish a pre-registered round of the accurate tier once its training has ended: select, pack, commit, score.

    python scripts/finish_base.py --base nli-base-l12 --name veridic-nli-mpnet-base            # everything, in order
    python scripts/finish_base.py --base nli-base-l12 --name veridic-nli-mpnet-base --steps select,pack,commit
    python scripts/finish_base.py --base nli-base-l12 --name veridic-nli-mpnet-base --dry-run  # print the commands

Steps (each skipped when its output already exists, so a run cut short resumes; docs/preregistration/nli-base.md
fixes what each does):

- ``select``: both phases must have run to their end (``"stopped_by": "completed"``); phase 1's and phase 2's final
  weights are scored on phase 1's held-back rows (``benchmarks/accurate_tier.py --steps heldout``) and the selection
  rule picks phase 2 unless it is more than ``--tolerance`` (1.0 point) below phase 1. Written to
  ``OUT/selection.json``.
- ``pack``: the selected run packed as it ships (per-row int8 with fp16 scales, shards under 100 MB) into
  ``veridic/models/NAME`` (``scripts/ship_model.py --packed --dest``), the path it ships from; it is registered by
  name only once the ship rule has been read.
- ``commit``: those files committed on the current branch at once, so that weights which took hours to train are
  never held only by one machine's disk. They are committed once, where they ship from: moving a committed file
  counts it twice against what one submission may add (``scripts/landing_size.py`` measures that).
- ``score``: everything the registration scores, on the packed weights: ``accurate_tier.py`` (held-back, dev ``e-c``,
  contrast suite, detector), the refitted combination (``fit_hybrid.py``, leave-one-dataset-out and
  leave-one-task-out), the binding suite, and the packed-against-full-precision tolerance (reference: the selected
  run's fp32 ``final/``).
- ``cost``: ``accurate_tier.py --steps cost``, meant for cores that nothing else uses (run it on its own).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
STEPS = ("select", "pack", "commit", "score")
TRAIN_ROOT = Path(os.environ.get("VERIDIC_TRAIN_DIR", Path.home() / ".cache" / "veridic" / "train"))


def completed(run: Path) -> bool:
    """The run's last stage ran to the end of its planned steps (a stage stopped on time also exports ``final/``)."""
    f = run / "training_summary.json"
    return f.is_file() and json.loads(f.read_text()).get("stopped_by") == "completed"


def budget_ended(run: Path) -> bool:
    """The run's stage stopped on its time budget and exported its newest weights to ``final/``."""
    f = run / "training_summary.json"
    return f.is_file() and json.loads(f.read_text()).get("stopped_by") == "time_budget" and (run / "final").is_dir()


def select_phase(*, phase1: float, phase2: float, tolerance: float = 0.010) -> str:
    """The registered selection rule: phase 2 unless its held-back 3-way accuracy is more than ``tolerance`` below
    phase 1's.

    >>> select_phase(phase1=0.770, phase2=0.781), select_phase(phase1=0.770, phase2=0.755)
    ('v2', 'v1')
    """
    return "v1" if phase2 < phase1 - tolerance - 1e-12 else "v2"


class Finisher:
    def __init__(self, *, base: str, name: str, out: Path, dry_run: bool, tolerance: float, unfinished: bool = False) -> None:
        self.base, self.name, self.out, self.dry_run, self.tolerance = base, name, out, dry_run, tolerance
        self.unfinished = unfinished
        self.runs = {p: TRAIN_ROOT / f"{base}-{p}" for p in ("v1", "v2")}
        self.config = f"configs/{base}-v1.yaml"
        self.weights = ROOT / "veridic" / "models" / name

    def run(self, cmd: list[str]) -> None:
        print("$ " + shlex.join(cmd), file=sys.stderr, flush=True)
        if not self.dry_run:
            subprocess.run(cmd, cwd=ROOT, check=True)

    def py(self, script: str, *args: str) -> None:
        self.run([sys.executable, script, *args])

    def select(self) -> str:
        f = self.out / "selection.json"
        if f.is_file():
            return json.loads(f.read_text())["selected"]
        missing = [str(r) for r in self.runs.values() if not (completed(r) or (self.unfinished and budget_ended(r)))]
        if missing and not self.dry_run:
            hint = "" if self.unfinished else (" (or, where the registration makes a phase its budget ended the candidate, "
                                               "--unfinished)")
            raise SystemExit(f"training has not finished: {', '.join(missing)} lack a completed training_summary.json; "
                             f"resume it first (BASE={self.base} bash scripts/train_base.sh MINUTES){hint}")
        held = self.out / "select-heldout"
        self.py("benchmarks/accurate_tier.py", "--model", str(self.runs["v2"] / "final"), "--baseline", str(self.runs["v1"] / "final"),
                "--config", self.config, "--steps", "heldout", "--out", str(held))
        if self.dry_run:
            return "v2"
        res = json.loads((held / "heldout.json").read_text())  # roles: "accurate" = --model, "default" = --baseline
        p1, p2 = res["default"]["accuracy_3way"], res["accurate"]["accuracy_3way"]
        chosen = select_phase(phase1=p1, phase2=p2, tolerance=self.tolerance)
        ended = {p: json.loads((r / "training_summary.json").read_text()) for p, r in self.runs.items()}
        rec = {"phase1_accuracy_3way": p1, "phase2_accuracy_3way": p2, "tolerance": self.tolerance, "selected": chosen,
               "stopped_by": {p: e.get("stopped_by") for p, e in ended.items()},
               "steps": {p: f"{e.get('steps')} of {e.get('planned_steps')}" for p, e in ended.items()},
               "rule": "phase 2 unless its held-back 3-way accuracy is more than the tolerance below phase 1's",
               "at": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
        self.out.mkdir(parents=True, exist_ok=True)
        f.write_text(json.dumps(rec, indent=2) + "\n")
        print(f"selection: phase 1 {p1:.4f}, phase 2 {p2:.4f} -> {chosen}", file=sys.stderr, flush=True)
        return chosen

    def pack(self, phase: str) -> None:
        if (self.weights / "veridic_model.json").is_file():
            return
        self.py("scripts/ship_model.py", "--run", str(self.runs[phase]), "--name", self.name, "--packed",
                "--dest", str(self.weights))

    def commit(self, phase: str) -> None:
        rel = str(self.weights.relative_to(ROOT))
        if not self.dry_run:
            tracked = subprocess.run(["git", "ls-files", "--error-unmatch", rel], cwd=ROOT, capture_output=True).returncode == 0
            dirty = subprocess.run(["git", "status", "--porcelain", "--", rel], cwd=ROOT, capture_output=True, text=True).stdout
            if tracked and not dirty:
                return
        msg = (f"{self.name}: the {self.base} round's selected weights (phase {phase[1]}), packed as they ship, "
               "committed the moment they exist (not shipped until the ship rule says so)")
        for attempt in range(5):  # another git command may hold the index lock for a moment
            try:
                self.run(["git", "add", "--", rel])
                self.run(["git", "commit", "-q", "-m", msg, "--", rel])
                return
            except subprocess.CalledProcessError:
                if attempt == 4:
                    raise
                time.sleep(10)

    def score(self, phase: str) -> None:
        w, o = str(self.weights), self.out
        self.py("benchmarks/accurate_tier.py", "--model", w, "--config", self.config, "--out", str(o / "accurate"),
                "--steps", "heldout,dev,contrast,detector")
        if not (o / "hybrid" / "hybrid.json").is_file():
            self.py("benchmarks/fit_hybrid.py", "--model", w, "--data", "dev", "--features", "ec_mean,overlap_bigram",
                    "--out", str(o / "hybrid"), "--weights-out", str(o / "hybrid" / "hybrid.json"))
        if not (o / "binding").is_dir():
            self.py("benchmarks/binding_suite.py", "--model", w, "--out", str(o / "binding"))
        if not (o / "precision.json").is_file():
            self.py("benchmarks/precision_tolerance.py", "--model", w, "--fp32", str(self.runs[phase] / "final"),
                    "--out", str(o / "precision.json"))

    def cost(self) -> None:
        self.py("benchmarks/accurate_tier.py", "--model", str(self.weights), "--config", self.config,
                "--out", str(self.out / "accurate"), "--steps", "cost")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--base", default="nli-base-l12", help="the round: configs/BASE-v1.yaml, -v2.yaml and their run folders")
    ap.add_argument("--name", default="veridic-nli-mpnet-base", help="the model's name if it ships")
    ap.add_argument("--steps", default=",".join(STEPS), help=f"comma-separated, from {','.join((*STEPS, 'cost'))}")
    ap.add_argument("--out", type=Path, default=None, help="results folder (default runs/report/BASE)")
    ap.add_argument("--tolerance", type=float, default=0.010, help="the selection rule's tolerance (registered: 1.0 point)")
    ap.add_argument("--dry-run", action="store_true", help="print the commands without running them")
    ap.add_argument("--unfinished", action="store_true",
                    help="accept a phase whose stage's time budget ended it (its newest weights, exported to final/), "
                         "where the registration makes that the candidate, reported as unfinished")
    a = ap.parse_args(argv)
    steps = [s.strip() for s in a.steps.split(",") if s.strip()]
    unknown = sorted(set(steps) - {*STEPS, "cost"})
    if unknown:
        ap.error(f"unknown step(s) {', '.join(unknown)}: expected some of {', '.join((*STEPS, 'cost'))}")
    f = Finisher(base=a.base, name=a.name, out=a.out or ROOT / "runs" / "report" / a.base, dry_run=a.dry_run, tolerance=a.tolerance,
                 unfinished=a.unfinished)
    phase = f.select() if "select" in steps or any(s in steps for s in ("pack", "commit", "score")) else "v2"
    if "pack" in steps:
        f.pack(phase)
    if "commit" in steps:
        f.commit(phase)
    if "score" in steps:
        f.score(phase)
    if "cost" in steps:
        f.cost()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Resumable benchmark steps: each finished step's result is kept in ``OUT/<step>.json`` and its wall time in
``OUT/steps.json``, so a run stopped part-way resumes at the next step and a report can state what each figure cost
even when it reuses a step computed earlier.

>>> import tempfile, pathlib
>>> out = pathlib.Path(tempfile.mkdtemp())
>>> run_steps(order=("a", "b"), wanted=["b"], run={"a": dict, "b": lambda: {"x": 1}}, out=out)
{'b': {'x': 1}}
>>> sorted(json.loads((out / "steps.json").read_text())["b"])
['finished', 'wall_s']
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

__all__ = ["run_steps", "parse_steps", "step_times"]


def parse_steps(text: str, order: Sequence[str]) -> list[str]:
    """``"a,b"`` -> ``["a", "b"]``; a ``ValueError`` naming the known steps for any other name."""
    steps = [s.strip() for s in text.split(",") if s.strip()]
    unknown = sorted(set(steps) - set(order))
    if unknown:
        raise ValueError(f"unknown step(s) {unknown}; expected some of {', '.join(order)}")
    return steps


def step_times(out: Path) -> dict[str, dict[str, Any]]:
    """``OUT/steps.json``: per step, its wall seconds and when it finished (empty when no step has run)."""
    f = Path(out) / "steps.json"
    return json.loads(f.read_text()) if f.exists() else {}


def run_steps(*, order: Sequence[str], wanted: Sequence[str], run: dict[str, Callable[[], Any]], out: Path,
              force: bool = False) -> dict[str, Any]:
    """Run the ``wanted`` steps in ``order``; a step whose ``OUT/<step>.json`` exists is read back unless ``force``.
    Results are written atomically, so a step killed half-way leaves no file and runs again next time."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    results: dict[str, Any] = {}
    for step in order:
        if step not in wanted:
            continue
        done = out / f"{step}.json"
        if done.exists() and not force:
            results[step] = json.loads(done.read_text())
            continue
        t0 = time.monotonic()
        results[step] = run[step]()
        _write(done, json.dumps(results[step], indent=1) + "\n")
        times = step_times(out)
        times[step] = {"wall_s": round(time.monotonic() - t0, 1), "finished": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
        _write(out / "steps.json", json.dumps(times, indent=1) + "\n")
    return results


def _write(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text)
    tmp.replace(path)

"""Resumable benchmark steps: each finished step's result is kept in ``OUT/<step>.json`` and its wall time in
``OUT/steps.json``, so a run stopped part-way resumes at the next step and a report can state what each figure cost
even when it reuses a step computed earlier.

A run passes a ``stamp`` saying what it measures (a model's folder and a fingerprint of its files, the settings); OUT
keeps it in ``stamp.json`` and a run with another stamp refuses OUT's results instead of reporting them as its own.
``force`` recomputes the wanted steps, the files each keeps inside OUT (``inner``) included.

>>> import tempfile, pathlib
>>> out = pathlib.Path(tempfile.mkdtemp())
>>> run_steps(order=("a", "b"), wanted=["b"], run={"a": dict, "b": lambda: {"x": 1}}, out=out)
{'b': {'x': 1}}
>>> sorted(json.loads((out / "steps.json").read_text())["b"])
['finished', 'wall_s']
"""

from __future__ import annotations

import hashlib
import json
import shutil
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

__all__ = ["run_steps", "parse_steps", "step_times", "folder_fingerprint", "model_stamp", "StaleResults"]


class StaleResults(SystemExit):
    """OUT holds results for something other than what this run measures (or for something unknown)."""


def folder_fingerprint(folder: Path) -> str:
    """A sha256 over the names, sizes and modification times of a folder's files: a model exported again, or a
    settings file edited, gives another value, without reading gigabytes of weights."""
    h = hashlib.sha256()
    for f in sorted(p for p in Path(folder).rglob("*") if p.is_file()):
        st = f.stat()
        h.update(f"{f.relative_to(folder)}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    return h.hexdigest()


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
              force: bool = False, stamp: dict[str, Any] | None = None,
              inner: dict[str, Sequence[str]] | None = None) -> dict[str, Any]:
    """Run the ``wanted`` steps in ``order``; a step whose ``OUT/<step>.json`` exists is read back unless ``force``.
    Results are written atomically, so a step killed half-way leaves no file and runs again next time.

    ``stamp`` (JSON-able): what this run measures; results in OUT stamped otherwise, or not stamped at all, raise
    :class:`StaleResults` unless ``force``. ``inner``: per step, the names of the files or folders inside OUT it
    keeps for itself (cached sub-results), removed with its result when ``force``."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    stamp = None if stamp is None else json.loads(json.dumps(stamp))  # as stamp.json will read back (tuples -> lists)
    if force:
        # Steps kept under another stamp cannot stay beside the new one: a forced run for something else clears them all.
        for step in wanted if stamp is None or _stamp_of(out) == stamp else order:
            for name in (f"{step}.json", *(inner or {}).get(step, ())):
                path = out / name
                shutil.rmtree(path) if path.is_dir() else path.unlink(missing_ok=True)
    if stamp is not None:
        _check_stamp(out, stamp, order)
    results: dict[str, Any] = {}
    for step in order:
        if step not in wanted:
            continue
        done = out / f"{step}.json"
        if done.exists():  # with force, removed above
            results[step] = json.loads(done.read_text())
            continue
        t0 = time.monotonic()
        results[step] = run[step]()
        _write(done, json.dumps(results[step], indent=1) + "\n")
        times = step_times(out)
        times[step] = {"wall_s": round(time.monotonic() - t0, 1), "finished": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
        _write(out / "steps.json", json.dumps(times, indent=1) + "\n")
    return results


def _stamp_of(out: Path) -> Any:
    f = out / "stamp.json"
    return json.loads(f.read_text()) if f.exists() else None


def _check_stamp(out: Path, stamp: dict[str, Any], order: Sequence[str]) -> None:
    old = _stamp_of(out)
    held = [s for s in order if (out / f"{s}.json").exists()]
    if held and old != stamp:
        what = "no stamp saying what they measured" if old is None else f"the stamp {old}"
        raise StaleResults(f"{out} holds results ({', '.join(held)}) with {what}; this run measures {stamp}. "
                           "Pass --force to recompute them, or choose another output folder.")
    _write(out / "stamp.json", json.dumps(stamp, indent=1) + "\n")


def _write(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text)
    tmp.replace(path)


def model_stamp(ref: str) -> dict[str, str]:
    """A model's identity for OUT's stamp: its resolved folder and a fingerprint of its files (a hub id as given)."""
    from veridic.nli._models import resolve_model_path

    path, kind = resolve_model_path(ref)
    if kind == "hub":
        return {"hub": str(path)}
    return {"folder": str(Path(path).resolve()), "files": folder_fingerprint(Path(path))}

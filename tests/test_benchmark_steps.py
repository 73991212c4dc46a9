"""Resumable benchmark steps (benchmarks/_steps.py): finished steps are reused, their wall time is kept."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from _steps import parse_steps, run_steps, step_times  # noqa: E402


def test_finished_steps_are_reused_and_timed(tmp_path):
    calls: list[str] = []

    def step(name):
        def f():
            calls.append(name)
            return {"step": name}
        return f

    run = {n: step(n) for n in ("a", "b", "c")}
    first = run_steps(order=("a", "b", "c"), wanted=["c", "a"], run=run, out=tmp_path)
    assert list(first) == ["a", "c"] and calls == ["a", "c"]  # the registered order, not the asked one
    times = step_times(tmp_path)
    assert set(times) == {"a", "c"} and all(t["wall_s"] >= 0 for t in times.values())
    again = run_steps(order=("a", "b", "c"), wanted=["a", "b", "c"], run=run, out=tmp_path)
    assert calls == ["a", "c", "b"] and again["a"] == {"step": "a"}
    run_steps(order=("a", "b", "c"), wanted=["a"], run=run, out=tmp_path, force=True)
    assert calls == ["a", "c", "b", "a"]
    assert json.loads((tmp_path / "b.json").read_text()) == {"step": "b"}


def test_a_failing_step_leaves_no_result(tmp_path):
    def boom():
        raise RuntimeError("stopped")

    with pytest.raises(RuntimeError):
        run_steps(order=("a",), wanted=["a"], run={"a": boom}, out=tmp_path)
    assert not (tmp_path / "a.json").exists() and step_times(tmp_path) == {}


def test_unknown_steps_are_named():
    assert parse_steps(" a, b ", ("a", "b")) == ["a", "b"]
    with pytest.raises(ValueError, match=r"unknown step\(s\) \['x'\]; expected some of a, b"):
        parse_steps("a,x", ("a", "b"))

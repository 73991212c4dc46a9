"""Resumable benchmark steps (benchmarks/_steps.py): finished steps are reused, their wall time is kept, and results
measured for something else are refused."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from _steps import StaleResults, folder_fingerprint, parse_steps, run_steps, step_times  # noqa: E402


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


def test_results_stamped_for_something_else_are_refused_until_forced(tmp_path):
    calls: list[str] = []
    run = {"a": lambda: calls.append("a") or {"n": len(calls)}}
    run_steps(order=("a",), wanted=["a"], run=run, out=tmp_path, stamp={"model": "m1"})
    run_steps(order=("a",), wanted=["a"], run=run, out=tmp_path, stamp={"model": "m1"})  # same stamp: reused
    assert calls == ["a"]
    with pytest.raises(StaleResults, match=r"holds results \(a\) with the stamp \{'model': 'm1'\}.*--force"):
        run_steps(order=("a",), wanted=["a"], run=run, out=tmp_path, stamp={"model": "m2"})
    assert run_steps(order=("a",), wanted=["a"], run=run, out=tmp_path, stamp={"model": "m2"}, force=True)["a"] == {"n": 2}
    assert json.loads((tmp_path / "stamp.json").read_text()) == {"model": "m2"}


def test_unstamped_results_are_refused_and_force_clears_a_steps_inner_files(tmp_path):
    run_steps(order=("a",), wanted=["a"], run={"a": dict}, out=tmp_path)  # an old run, before stamps
    with pytest.raises(StaleResults, match="no stamp"):
        run_steps(order=("a",), wanted=["a"], run={"a": dict}, out=tmp_path, stamp={"model": "m"})
    (tmp_path / "cached.json").write_text("{}")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "x").write_text("old")
    seen = []
    run_steps(order=("a",), wanted=["a"], out=tmp_path, stamp={"model": "m"}, force=True, inner={"a": ("cached.json", "sub")},
              run={"a": lambda: seen.append((tmp_path / "cached.json").exists() or (tmp_path / "sub").exists()) or {}})
    assert seen == [False]  # the step ran with its old sub-results gone


def test_the_folder_fingerprint_follows_file_content_and_names(tmp_path):
    (tmp_path / "w.bin").write_bytes(b"1234")
    first = folder_fingerprint(tmp_path)
    assert folder_fingerprint(tmp_path) == first
    (tmp_path / "w.bin").write_bytes(b"12345")
    assert folder_fingerprint(tmp_path) != first
    (tmp_path / "w.bin").rename(tmp_path / "v.bin")
    assert len({first, folder_fingerprint(tmp_path)}) == 2


def test_a_forced_run_of_some_steps_for_something_else_clears_the_others_it_cannot_vouch_for(tmp_path):
    run = {"a": lambda: {"a": 1}, "b": lambda: {"b": 1}}
    run_steps(order=("a", "b"), wanted=["a", "b"], run=run, out=tmp_path, stamp={"model": "m1"})
    run_steps(order=("a", "b"), wanted=["a"], run=run, out=tmp_path, stamp={"model": "m2"}, force=True)
    assert (tmp_path / "a.json").exists() and not (tmp_path / "b.json").exists()  # b measured m1: gone, not relabelled
    run_steps(order=("a", "b"), wanted=["a"], run=run, out=tmp_path, stamp={"model": "m2"}, force=True)
    run_steps(order=("a", "b"), wanted=["b"], run=run, out=tmp_path, stamp={"model": "m2"})
    run_steps(order=("a", "b"), wanted=["a"], run=run, out=tmp_path, stamp={"model": "m2"}, force=True)
    assert (tmp_path / "b.json").exists()  # same stamp: only the wanted step is recomputed

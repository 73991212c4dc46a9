"""The public surface of veridic.bench: listed, present, keyword-only."""

from __future__ import annotations

import inspect

import typer

import veridic.bench
from veridic.bench import _cache as cache
from veridic.bench import _datasets as datasets
from veridic.bench import _metrics as metrics
from veridic.bench import _report as report
from veridic.bench import _runner as runner
from veridic.bench import _scorers as scorers


def test_exported_members_exist():
    for mod in (veridic.bench, cache, datasets, metrics, report, runner, scorers):
        for name in mod.__all__:
            assert hasattr(mod, name), f"{mod.__name__}.{name} is in __all__ but missing"


def test_public_functions_are_keyword_only():
    for mod in (veridic.bench, datasets, metrics, report, runner, scorers, cache):
        for name in mod.__all__:
            obj = getattr(mod, name)
            if not inspect.isfunction(obj) or name in ("register_scorer", "register_dataset_group", "resolve_data_spec",
                                                          "parse_label", "get_scorer_spec", "scorer_names", "dataset_groups",
                                                          "default_bench_dir", "default_cache_dir", "veridic_version",
                                                          "build_scorer"):  # build_scorer(config, *, backend=...): one obvious positional
                continue
            params = inspect.signature(obj).parameters.values()
            assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in params), f"{mod.__name__}.{name} takes positional arguments"


def test_bench_mounts_on_a_typer_app():
    from typer.testing import CliRunner

    from veridic.bench.cli import bench

    app = typer.Typer()
    app.command("bench")(bench)
    app.command("other")(lambda: None)
    r = CliRunner().invoke(app, ["bench", "--help"])
    assert r.exit_code == 0 and "--threshold-from" in r.output and "--compare" in r.output

"""``veridic bench``: a thin command-line shell over :mod:`veridic.bench`.

The main CLI mounts it with ``app.command("bench")(bench)``. Standalone::

    python -m veridic.bench --data dev --scorer overlap --output /tmp/r-overlap
"""

from __future__ import annotations

import shlex
import sys
import warnings
from pathlib import Path
from typing import Annotated, Any

import typer

from veridic import cli_options as O
from veridic.bench._cache import ScoreCache, default_cache_dir, nli_cache_path
from veridic.bench._datasets import load_datasets
from veridic.bench._report import write_report
from veridic.bench._runner import run_benchmark
from veridic.bench._scorers import get_scorer_spec, load_external_scores
from veridic.config import resolve_config
from veridic.errors import ConfigError, RegistryError, VeridicError
from veridic.factory import build_scorer

__all__ = ["bench", "main"]


def _split(values: list[str] | None) -> list[str]:
    # "--scorer e,e-c" and "--scorer e --scorer e-c" mean the same.
    out: list[str] = []
    for v in values or []:
        out.extend(p.strip() for p in v.split(",") if p.strip())
    return out


def _load_backend(model: str | None, kind: str, cache_path: Path | None = None, *, device: str = "cpu", dtype: str = "auto",
                  mc_samples: int = 0) -> Any:
    try:
        from veridic.nli import load_backend
    except ImportError as exc:
        raise ConfigError(f"Model scorers need veridic.nli.load_backend, which could not be imported ({exc}).") from None
    from veridic.nli import CachedBackend

    # Scorers share NLI calls on identical pairs (e and e-c, say), within a run
    # and, through the on-disk prediction cache, across runs.
    return CachedBackend(load_backend(model=model, kind=kind, device=device, dtype=dtype, mc_samples=mc_samples), path=cache_path)


def _command(argv: dict[str, Any]) -> str:
    parts = ["veridic", "bench"]
    for flag, value in argv.items():
        if value is None or value is False or value == []:
            continue
        if value is True:
            parts.append(flag)
        elif isinstance(value, (list, tuple)):
            if flag == "--compare":
                parts += [flag, *map(str, value)]
            else:
                for v in value:
                    parts += [flag, str(v)]
        else:
            parts += [flag, str(value)]
    return shlex.join(parts)


def bench(
    data: Annotated[list[str], typer.Option("--data", "-d", metavar="PATH_OR_GROUP", help="Dataset file, folder or group name (e.g. 'dev'); repeat for more.")],
    out: Annotated[Path, typer.Option("--output", "-o", "--out", metavar="DIR", help="Folder for report.json, report.md, scores.csv (per-example scores) and ROC PNGs.")],
    scorer: Annotated[list[str] | None, typer.Option("--scorer", metavar="NAME", help="Registered scorer (e, e-c, e+mc, e-c+mc, e-doc, e-c-doc, hybrid, overlap, overlap-bigram, or a plugin); repeat or comma-separate.")] = None,
    scores: Annotated[list[Path] | None, typer.Option("--scores", metavar="FILE", help="Per-example score file (columns id, score, or id + named columns) to add as scorer columns.")] = None,
    compare: Annotated[tuple[str, str] | None, typer.Option("--compare", metavar="A B", help="Two scorer names A B: paired approximate-randomization test of AUC(A) - AUC(B).")] = None,
    threshold_from: Annotated[list[str] | None, typer.Option("--threshold-from", metavar="PATH_OR_GROUP", help="Dev split (file, folder or group) to fit thresholds on; default: 2-fold cross-fitting within each dataset.")] = None,
    model: Annotated[str | None, typer.Option("--model", metavar="ID_OR_PATH", help="NLI model id or path for model scorers (default: the embedded model).")] = None,
    backend: Annotated[str, typer.Option("--backend", metavar="KIND", help="Model backend kind: auto (ONNX int8 on the CPU when the model has an int8 export and no scorer uses Monte-Carlo dropout, else torch), torch, onnx or dummy.")] = "auto",
    device: O.Device = "cpu",
    dtype: O.Dtype = "auto",
    on_invalid: Annotated[str, typer.Option("--on-invalid", metavar="error|skip", help="A blank or invalid row: stop with its row number (error), or leave it out and record it in the report (skip).")] = "error",
    n_resamples: Annotated[int, typer.Option("--n-resamples", metavar="N", min=1, help="Bootstrap resamples for the CIs.")] = 1000,
    trials: Annotated[int, typer.Option("--trials", metavar="N", min=1, help="Approximate-randomization trials for --compare.")] = 10_000,
    seed: Annotated[int, typer.Option("--seed", metavar="N", help="Seed of bootstrap, cross-fitting folds and randomization.")] = 0,
    cache_dir: Annotated[Path | None, typer.Option("--cache-dir", metavar="DIR", help="Score cache folder (default $VERIDIC_CACHE or ~/.cache/veridic/scores).")] = None,
    no_cache: Annotated[bool, typer.Option("--no-cache", help="Neither read nor write cached scores.")] = False,
    progress: Annotated[bool, typer.Option("--progress/--no-progress", help="Show a progress bar.")] = True,
) -> None:
    """Benchmark faithfulness scorers: AUC with bootstrap CIs, thresholds, significance, cost."""
    command = _command({
        "--data": data, "--scorer": scorer, "--scores": scores, "--compare": compare, "--threshold-from": threshold_from,
        "--model": model, "--backend": backend if backend != "auto" else None,
        "--n-resamples": n_resamples if n_resamples != 1000 else None, "--trials": trials if trials != 10_000 else None,
        "--seed": seed if seed else None, "--cache-dir": cache_dir, "--no-cache": no_cache,
        "--device": device if device != "cpu" else None, "--dtype": dtype if dtype != "auto" else None,
        "--on-invalid": on_invalid if on_invalid != "error" else None, "--output": out,
    })
    try:
        names = _split(scorer)
        try:
            specs = [get_scorer_spec(n) for n in names]  # fail on typos before reading any data
        except RegistryError as exc:
            raise RegistryError(f"{exc} Per-example score files go to --scores instead.") from None
        if on_invalid not in ("error", "skip"):
            raise ConfigError(f"--on-invalid must be 'error' or 'skip'; got {on_invalid!r}.")
        if any(s.needs_backend for s in specs):
            O.check_model_flags(backend=backend, device=device, dtype=dtype)
            O.check_hub_model(model)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            datasets = load_datasets(specs=data, on_invalid=on_invalid)
            threshold_datasets = load_datasets(specs=threshold_from, on_invalid=on_invalid) if threshold_from else None
        for w in caught:  # data warnings (renamed duplicate ids) read better without a source line
            typer.echo(f"warning: {w.message}", err=True)
        external = [e for path in scores or [] for e in load_external_scores(path=path)]
        clash = sorted({e.name for e in external} & set(names))
        if clash:
            raise ConfigError(f"Score-file column(s) {', '.join(map(repr, clash))} share a name with --scorer; rename the column.")
        cache_root = cache_dir or default_cache_dir()
        nli_cache = None if no_cache else nli_cache_path(score_dir=cache_root)
        if any(s.needs_backend for s in specs):
            # One backend serves every scorer: torch when any of them needs Monte-Carlo dropout.
            mc = max((resolve_config(n).mc_samples for n, s in zip(names, specs) if s.needs_backend), default=0)
            model_backend = _load_backend(model, backend, nli_cache, device=device, dtype=dtype, mc_samples=mc)
        else:
            model_backend = None
        scorers = [build_scorer(n, backend=model_backend) for n in names] + external
        cache = None if no_cache else ScoreCache(directory=cache_root)
        result = run_benchmark(
            datasets=datasets,
            scorers=scorers,
            threshold_datasets=threshold_datasets,
            threshold_from=threshold_from,
            compare=[compare] if compare else [],
            n_resamples=n_resamples,
            seed=seed,
            ar_trials=trials,
            cache=cache,
            progress=progress,
        )
        paths = write_report(result=result, out_dir=out, command=command)
        from veridic.bench._contrast import write_contrast_report

        paths.update(write_contrast_report(result=result, scorers=scorers, out_dir=out))
    except VeridicError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(code=2) from None
    for name, m in result.means.items():
        typer.echo(f"{name}: mean AUC {m.auc:.3f} [{m.auc_ci_low:.3f}, {m.auc_ci_high:.3f}] over {len(m.datasets)} datasets")
    extra = [str(paths[k]) for k in ("contrast_markdown",) if k in paths]
    n_png = sum(1 for k in paths if k not in {"json", "markdown", "scores", "contrast_json", "contrast_markdown"})
    typer.echo(f"wrote {paths['json']}, {paths['markdown']}, {paths['scores']}{''.join(', ' + e for e in extra)} and {n_png} ROC plot(s)")


def main(argv: list[str] | None = None) -> None:
    """Run ``bench`` as a one-command app (``python -m veridic.bench``)."""
    app = typer.Typer(add_completion=False)
    app.command()(bench)
    app(args=argv if argv is not None else sys.argv[1:], prog_name="veridic bench")

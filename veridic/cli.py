"""The ``veridic`` command line: a thin shell over the library.

Commands: ``score`` (one pair or a file), ``bench``, ``serve``, ``detect``,
``index``, ``export onnx``, ``train nli`` and the research commands. Only
typer is imported to print help; each command imports what it needs when it
runs, and commands owned by other subpackages are loaded on first use.
Every argument is checked before a model loads.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

try:
    import click
    import typer
    from typer.core import TyperGroup
except ImportError:  # pragma: no cover - exercised only without the extra
    typer = None  # type: ignore[assignment]

from veridic.errors import VeridicError

__all__ = ["app", "main"]

CONTEXT = {"help_option_names": ["-h", "--help"]}


def _install_hint() -> None:
    sys.stderr.write("The veridic command line needs the 'cli' extra: pip install 'veridic[cli]'\n")
    raise SystemExit(2)


#: Commands of other subpackages: name -> (module, attribute, is a Typer app, one-line help). Imported on first use.
LAZY_COMMANDS = {
    "bench": ("veridic.bench.cli", "bench", False, "Benchmark faithfulness scorers: AUC with bootstrap CIs, thresholds, significance, cost."),
    "serve": ("veridic.service.cli", "serve", False, "Serve /v1/score, /v1/detect, /v1/health, /v1/models and /metrics over HTTP."),
    "detect": ("veridic.detect.cli", "app", True, "Find, type and fix hallucinated spans (FAVA taxonomy)."),
    "index": ("veridic.retrieve.cli", "app", True, "Build and search evidence indexes."),
    "ablation": ("veridic.ablation.cli", "app", True, "Factual ablation (paper 001): does a grounded LM use its grounding?"),
    "ais": ("veridic.ais.cli", "app", True, "AIS human evaluation (paper 003): annotation app, agreement statistics, AutoAIS."),
    "congruity": ("veridic.congruity.cli", "app", True, "Factual vs contextual errors in entity descriptions (paper 000)."),
    "synth": ("veridic.synth.cli", "app", True, "Build synthetic training data (the contrast corpus)."),
}


if typer is not None:

    class LazyGroup(TyperGroup):
        """The root group: lists the lazy commands by name and imports one only when it is run."""

        def list_commands(self, ctx: click.Context) -> list[str]:
            return sorted({*super().list_commands(ctx), *LAZY_COMMANDS})

        def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
            if name not in LAZY_COMMANDS:
                return super().get_command(ctx, name)
            module, attr, is_app, _ = LAZY_COMMANDS[name]
            try:
                obj = getattr(__import__(module, fromlist=[attr]), attr)
            except ImportError as exc:
                return _missing_extra(name, exc)
            if obj is None:
                return _missing_extra(name, ImportError("typer"))
            if is_app:
                _plain_help(obj)
                cmd = typer.main.get_command(obj)
            else:
                sub = typer.Typer(add_completion=False, context_settings=CONTEXT, rich_markup_mode=None)
                sub.command(name)(obj)
                cmd = typer.main.get_command(sub)
            cmd.name = name
            return cmd

        def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
            # Help lists the lazy commands from LAZY_COMMANDS, without importing them (help stays fast).
            rows = []
            for name in self.list_commands(ctx):
                if name in LAZY_COMMANDS:
                    rows.append((name, LAZY_COMMANDS[name][3]))
                else:
                    cmd = super().get_command(ctx, name)
                    if cmd is not None and not cmd.hidden:
                        rows.append((name, cmd.get_short_help_str(limit=formatter.width - 20)))
            with formatter.section("Commands"):
                formatter.write_dl(rows)

    def _plain_help(obj: Any) -> None:
        # One help layout for every command: the plain one of `veridic` and `veridic score` (full option names,
        # boolean flags without a value placeholder), also for the subcommand apps of other subpackages.
        obj.rich_markup_mode = None
        for group in getattr(obj, "registered_groups", []):
            if group.typer_instance is not None:
                _plain_help(group.typer_instance)

    def _missing_extra(name: str, exc: ImportError) -> click.Command:
        @click.command(name, context_settings={"ignore_unknown_options": True, "allow_extra_args": True})
        def missing() -> None:
            sys.stderr.write(f"error: `veridic {name}` needs an optional extra that is not installed ({exc.name or exc}); "
                             "pip install 'veridic[all]' (or the extra its docs name).\n")
            raise SystemExit(2)

        return missing

    def _version_callback(value: bool) -> None:
        if value:
            from veridic.version import __version__

            typer.echo(f"veridic {__version__}")
            raise typer.Exit()

    app = typer.Typer(help="veridic: check generated text against its sources.", no_args_is_help=True, add_completion=False,
                      cls=LazyGroup, context_settings=CONTEXT, rich_markup_mode=None)
    export_app = typer.Typer(help="Export models to other runtimes.", no_args_is_help=True, context_settings=CONTEXT, rich_markup_mode=None)
    train_app = typer.Typer(help="Train veridic's models.", no_args_is_help=True, context_settings=CONTEXT, rich_markup_mode=None)
    app.add_typer(export_app, name="export")
    app.add_typer(train_app, name="train")

    @app.callback()
    def _root(version: Annotated[bool, typer.Option("--version", "-V", callback=_version_callback, is_eager=True, help="Print the version and exit.")] = False) -> None:
        """veridic: check generated text against its sources."""

    def _fail(exc: Exception) -> None:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(code=2)

    from veridic import cli_options as O  # noqa: E402  (typer only)

    _FORMATS = ("jsonl", "csv", "tsv", "json", "parquet")

    @app.command("score")
    @O.with_scorer_flags
    def score_cmd(
        source: Annotated[str | None, typer.Option("--source", "-s", help="Source text (inline, never read as a path; @FILE reads a file).")] = None,
        claim: Annotated[str | None, typer.Option("--claim", "-c", help="Claim text (inline; @FILE reads a file).")] = None,
        context: Annotated[str | None, typer.Option("--context", help="Dialogue history the claim responds to (inline; @FILE reads a file).")] = None,
        source_file: Annotated[Path | None, typer.Option("--source-file", help="Read the source from this UTF-8 file ('-' = stdin).")] = None,
        claim_file: Annotated[Path | None, typer.Option("--claim-file", help="Read the claim from this UTF-8 file ('-' = stdin).")] = None,
        input: Annotated[str | None, typer.Option("--input", "-i", help="Pairs file (.jsonl/.csv/.tsv/.parquet) in the benchmark schema; '-' = stdin (with --format).")] = None,
        output: Annotated[str | None, typer.Option("--output", "-o", help="Scored rows (format from the suffix); '-' = stdout (with --format). One pair: write its JSON verdict here.")] = None,
        fmt: Annotated[str | None, typer.Option("--format", "-f", help="Format of '-' input/output: jsonl, csv or tsv.")] = None,
        limit: Annotated[int | None, typer.Option("--limit", min=1, help="Score only the first N rows of --input.")] = None,
        as_json: Annotated[bool, typer.Option("--json", help="One pair: print the verdict as JSON.")] = False,
        quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar or summary line.")] = False,
        scorer_flags: dict[str, Any] | None = None,
        model: O.Model = None,
        backend: O.Backend = "auto",
        device: O.Device = "cpu",
        dtype: O.Dtype = "auto",
        batch_size: O.BatchSize = 32,
        engine: Annotated[str, typer.Option("--engine", help="For --input: 'local' (this process) or 'ray' (Ray Data actor pool; resumable).")] = "local",
        ray_address: Annotated[str | None, typer.Option("--ray-address", help="--engine ray: address of an existing Ray cluster (default: start a local one).")] = None,
        actors: Annotated[int, typer.Option("--actors", min=1, help="--engine ray: actors, each loading the model once.")] = 2,
    ) -> None:
        """Score a claim against a source, or every row of a file."""
        try:
            cfg = O.scorer_config(None, **(scorer_flags or {}))
            O.check_model_flags(backend=backend, device=device, dtype=dtype)
            one = any(v is not None for v in (source, claim, source_file, claim_file))
            if input is None and not one:
                raise VeridicError("Give --source/--claim (or --source-file/--claim-file) for one pair, or --input FILE for many.")
            if input is not None and one:
                raise VeridicError("--input cannot be combined with --source/--claim; use one or the other.")
            if output is not None and output != "-":
                from veridic.io import check_output

                check_output(output)  # before the model loads: a bad -o fails in milliseconds
            if engine not in ("local", "ray"):
                raise VeridicError(f"--engine must be 'local' or 'ray'; got {engine!r}.")
            if engine == "ray" and input is None:
                raise VeridicError("--engine ray scores a file (--input/--output); for one pair leave --engine out.")
            if fmt is not None and fmt not in _FORMATS:
                raise VeridicError(f"--format must be one of {', '.join(_FORMATS)}; got {fmt!r}.")
            O.check_hub_model(model)  # after every argument check: a bad -o is reported first
            if input is None:
                from veridic.io import check_text_length

                src = _pair_text(source, source_file, "--source")
                check_text_length(src, what="source")
                clm = _pair_text(claim, claim_file, "--claim")
                from veridic.limits import check_claim

                check_claim(clm)
                ctx = None if context is None else O.read_text_arg(context, flag="--context")
                _score_one(cfg, src, clm, ctx, as_json=as_json, output=output,
                           load=dict(model=model, backend=backend, device=device, dtype=dtype, batch_size=batch_size))
                return
            if output is None:
                raise VeridicError("--input needs --output FILE (or '-' with --format) for the scored rows.")
            if engine == "ray":
                if "-" in (input, output) or limit is not None:
                    raise VeridicError("--engine ray reads and writes files: '-' and --limit work with --engine local only.")
                from veridic.scale import score_file_ray

                rep = score_file_ray(input=input, output=output, config=cfg, model=model, backend=backend, device=device, dtype=dtype,
                                     batch_size=batch_size, actors=actors, ray_address=ray_address, progress=not quiet)
                if not quiet:
                    typer.echo(f"wrote {rep.written} scored rows to {output} ({rep.already_done} already there; {rep.chunks_scored}/{rep.chunks} "
                               f"chunks scored on {rep.actors} actors in {rep.seconds:.1f} s)", err=True)
                return
            n, summary = _score_rows_file(cfg, input, output, fmt=fmt, limit=limit, quiet=quiet,
                                          load=dict(model=model, backend=backend, device=device, dtype=dtype, batch_size=batch_size))
            if not quiet:
                typer.echo(f"wrote {n} scored rows to {'standard output' if output == '-' else output}", err=True)
                if summary:
                    typer.echo(summary, err=True)
        except VeridicError as exc:
            _fail(exc)
        except OSError as exc:  # an unreadable input or unwritable output path
            _fail(VeridicError(f"{exc.strerror or exc} ({exc.filename or 'file'}); check the --input/--output paths."))

    def _pair_text(inline: str | None, file: Path | None, flag: str) -> str:
        if inline is not None and file is not None:
            raise VeridicError(f"Give {flag} TEXT or {flag}-file PATH, not both.")
        if inline is None and file is None:
            raise VeridicError(f"One pair needs {flag} TEXT (or {flag}-file PATH) too.")
        return O.read_text_arg(inline or "", flag=flag, file=file)

    def _score_one(cfg: Any, src: str, clm: str, ctx: str | None, *, as_json: bool, output: str | None, load: dict[str, Any]) -> None:
        import json

        from veridic.factory import load_scorer

        verdict = load_scorer(cfg, reuse=False, **load).score(sources=[src], claims=[clm], contexts=[ctx])[0]
        if output not in (None, "-"):
            from veridic.io._atomic import atomic_write_text

            # a crash leaves the old file or the new one, never half of one (unique temp name, fsynced, mode kept)
            atomic_write_text(output, json.dumps(verdict.to_dict(), ensure_ascii=False, indent=2) + "\n")
        elif as_json or output == "-":
            typer.echo(json.dumps(verdict.to_dict(), ensure_ascii=False, indent=2))
        else:
            _print_verdict(verdict)

    def _score_rows_file(cfg: Any, input: str, output: str, *, fmt: str | None, limit: int | None, quiet: bool, load: dict[str, Any]) -> tuple[int, str | None]:
        import shutil
        import tempfile

        from veridic.io import read_records, write_records

        with tempfile.TemporaryDirectory(prefix="veridic-") as tmp:
            inp = _stdin_to_file(Path(tmp), fmt) if input == "-" else Path(input)
            if limit is not None:
                import itertools

                cut = Path(tmp) / f"limit{''.join(inp.suffixes) if inp.suffix != '.gz' else '.jsonl'}"
                write_records(cut, list(itertools.islice(read_records(inp), limit)))
                inp = cut
            out = Path(tmp) / f"out.{_need_format(fmt, 'output')}" if output == "-" else Path(output)
            from veridic.io._records import _format_of

            _format_of(out)  # an unwritable output format fails before the model loads
            from veridic.factory import load_scorer
            from veridic.scoring_files import score_file

            scorer = load_scorer(cfg, reuse=False, **load)
            n = score_file(scorer=scorer, input=inp, output=out, progress=not quiet)
            summary = None if quiet else _gold_summary(out, threshold=scorer.threshold)
            if output == "-":
                with open(out, "rb") as fh:
                    shutil.copyfileobj(fh, sys.stdout.buffer)
                sys.stdout.flush()
            return n, summary

    def _gold_summary(scored: Path, *, threshold: float) -> str | None:
        """ROC AUC and accuracy at the threshold over the rows that carry a gold label (1 = faithful), or None."""
        from veridic.bench._datasets import parse_label
        from veridic.io import read_records

        gold, scores, right = [], [], 0
        for row in read_records(scored):
            if "label_pred" not in row or row.get("label") in (None, ""):
                continue
            try:
                y = parse_label(row["label"])
            except VeridicError:
                return None  # a label column that is not a gold label: no summary
            gold.append(y)
            scores.append(float(row["score"]))
            right += int((row["label_pred"] == "supported") == (y == 1))
        if not gold:
            return None
        line = f"{len(gold)} rows with a gold label: accuracy {100 * right / len(gold):.1f} % at threshold {threshold:g}"
        pos, neg = [s for s, y in zip(scores, gold) if y == 1], [s for s, y in zip(scores, gold) if y == 0]
        if pos and neg:
            from bisect import bisect_left, bisect_right

            neg.sort()  # Mann-Whitney: each faithful row beats the unfaithful rows scored below it, ties count half
            wins = sum(bisect_left(neg, q) + 0.5 * (bisect_right(neg, q) - bisect_left(neg, q)) for q in pos)
            line += f", ROC AUC {100 * wins / (len(pos) * len(neg)):.1f}"
        return line + " (veridic bench gives CIs and cross-fitted thresholds)"

    def _need_format(fmt: str | None, what: str) -> str:
        if fmt is None:
            raise VeridicError(f"'-' as {what} has no file suffix to tell its format: add --format jsonl, csv or tsv.")
        return fmt

    def _stdin_to_file(tmp: Path, fmt: str | None) -> Path:
        p = tmp / f"stdin.{_need_format(fmt, 'input')}"
        p.write_bytes(sys.stdin.buffer.read())
        return p

    def _print_verdict(v) -> None:
        from rich.console import Console
        from rich.table import Table

        t = Table(title=f"{v.label}  score={v.score:+.3f}  (method {v.method})", show_lines=False)
        for col in ("claim sentence", "sentence score", "e", "n", "c", "evidence"):
            t.add_column(col, overflow="fold")
        for s in v.sentences:
            ev = s.evidence
            t.add_row(s.span.text, f"{s.score:+.3f}", f"{s.e:.2f}", f"{s.n:.2f}", f"{s.c:.2f}", f"[{ev.start}:{ev.end}] {ev.text[:120]}" if ev else "")
        out = Console()
        out.print(t)
        if v.uncertainty is not None:
            out.print(f"uncertainty (MC-dropout std): {v.uncertainty:.3f}")

    @export_app.command("onnx")
    def export_onnx_cmd(
        model: O.Model = None,
        output: Annotated[Path | None, typer.Option("--output", "-o", help="Output folder.")] = None,
        out_dir: Annotated[Path | None, typer.Option("--out", hidden=True, help="Deprecated spelling of --output.")] = None,
        quantize: Annotated[bool, typer.Option(help="Also write a per-channel int8 copy (model.int8.onnx).")] = True,
        device: O.Device = "cpu",
    ) -> None:
        """Export an NLI model to ONNX (+ int8, + its hybrid weights) for the onnx backend."""
        try:
            target = output or out_dir
            if target is None:
                raise VeridicError("Give the output folder: --output DIR.")
            from veridic.nli._backend import check_device, export_onnx

            check_device(device)
            files = export_onnx(model=model, out_dir=target, quantize=quantize, device=device)
        except VeridicError as exc:
            _fail(exc)
        for k, p in files.items():
            typer.echo(f"{k}: {p} ({p.stat().st_size / 1e6:.1f} MB)")

    @train_app.command("nli")
    def train_nli_cmd(
        config: Annotated[Path, typer.Option("--config", help="Training config (YAML).")] = Path("configs/nli-minilm.yaml"),
        output: Annotated[Path | None, typer.Option("--output", "-o", help="Run folder: checkpoints, logs and the final model.")] = None,
        out_dir: Annotated[Path | None, typer.Option("--out", hidden=True, help="Deprecated spelling of --output.")] = None,
        data_dir: Annotated[Path | None, typer.Option("--data", help="Folder of NLI data (default: ../shared/data or $VERIDIC_DATA).")] = None,
        max_minutes: Annotated[float | None, typer.Option("--max-minutes", help="Stop cleanly (checkpoint + export) after this many minutes.")] = None,
        resume: Annotated[bool, typer.Option(help="Continue from the last checkpoint in --output if there is one.")] = True,
        device: Annotated[str | None, typer.Option("--device", help="auto | cpu | cuda | cuda:N (default: the config's runtime.device, auto). bf16 autocast on CUDA.")] = None,
    ) -> None:
        """Train the NLI model (seeded, checkpointed, resumable)."""
        target = output or out_dir
        if target is None:
            _fail(VeridicError("Give the run folder: --output DIR."))
        try:
            from veridic.train import train_nli
        except ImportError as exc:
            _fail(VeridicError(f"Training needs the 'train' extra ({exc.name} is missing): pip install 'veridic[train]'"))
        try:
            final = train_nli(config=config, output_dir=target, resume=resume, max_minutes=max_minutes, data_dir=data_dir, device=device)
        except VeridicError as exc:
            _fail(exc)
        typer.echo(f"final model: {final}")

else:  # pragma: no cover
    app = None


def main() -> None:
    if app is None:
        _install_hint()
    app()


if __name__ == "__main__":  # pragma: no cover
    main()

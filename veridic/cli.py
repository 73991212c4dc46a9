"""The ``veridic`` command line: a thin shell over the library.

Commands: ``score`` (one pair or a file), ``bench``, ``train nli``, ``export onnx``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Optional

try:
    import typer
    from rich.console import Console
    from rich.table import Table
except ImportError:  # pragma: no cover - exercised only without the extra
    typer = None  # type: ignore[assignment]

from veridic.errors import VeridicError

__all__ = ["app", "main"]


def _install_hint() -> None:
    sys.stderr.write("The veridic command line needs the 'cli' extra: pip install 'veridic[cli]'\n")
    raise SystemExit(2)


if typer is not None:
    app = typer.Typer(help="veridic: check generated text against its sources.", no_args_is_help=True, add_completion=False)
    export_app = typer.Typer(help="Export models to other runtimes.", no_args_is_help=True)
    train_app = typer.Typer(help="Train veridic's models.", no_args_is_help=True)
    app.add_typer(export_app, name="export")
    app.add_typer(train_app, name="train")
    err = Console(stderr=True, soft_wrap=True)
    out = Console()

    def _text_or_file(value: str) -> str:
        p = Path(value)
        if len(value) < 4096 and "\n" not in value and p.is_file():
            try:
                return p.read_text(encoding="utf-8")
            except UnicodeDecodeError as exc:
                raise VeridicError(f"{value!r} is not valid UTF-8 ({exc.reason} at byte {exc.start}); re-encode it as UTF-8.") from None
        return value

    def _fail(exc: Exception) -> None:
        err.print(f"[bold red]error:[/] {exc}", highlight=False, markup=True)
        raise typer.Exit(code=2)

    @app.command("score")
    def score_cmd(
        source: Optional[str] = typer.Option(None, "--source", "-s", help="Source text, or a path to a UTF-8 text file."),
        claim: Optional[str] = typer.Option(None, "--claim", "-c", help="Claim text, or a path to a UTF-8 text file."),
        context: Optional[str] = typer.Option(None, "--context", help="Dialogue history the claim responds to (optional)."),
        input: Optional[Path] = typer.Option(None, "--input", "-i", help="Pairs file (.jsonl/.csv/.tsv/.parquet) in the benchmark schema."),
        output: Optional[Path] = typer.Option(None, "--output", "-o", help="Where to write scored rows (format from the suffix)."),
        method: str = typer.Option("hybrid", help="'e' (entailment prob.), 'e-c' (entailment minus contradiction) or 'hybrid' (e-c + lexical/entity signals)."),
        mc_samples: int = typer.Option(0, "--mc-samples", help="Monte-Carlo dropout samples (paper 004 uses 15; 0 = off)."),
        granularity: str = typer.Option("sentence", help="'sentence' (claim sentences vs source windows) or 'document' (whole claim vs chunks)."),
        aggregation: str = typer.Option("mean", help="How claim sentences are pooled: mean, min or softmin."),
        model: Optional[str] = typer.Option(None, "--model", "-m", help="Model directory, installed package or hub id (default: embedded)."),
        backend: str = typer.Option("torch", help="'torch' or 'onnx'."),
        batch_size: int = typer.Option(32, "--batch-size"),
        seed: int = typer.Option(0, help="Seed for Monte-Carlo dropout."),
        as_json: bool = typer.Option(False, "--json", help="Print the verdict as JSON."),
        engine: str = typer.Option("local", "--engine", help="For --input: 'local' (this process) or 'ray' (Ray Data actor pool; resumable)."),
        ray_address: Optional[str] = typer.Option(None, "--ray-address", help="--engine ray: address of an existing Ray cluster (default: start a local one)."),
        actors: int = typer.Option(2, "--actors", help="--engine ray: actors, each loading the model once."),
    ) -> None:
        """Score a claim against a source, or every row of a file."""
        from veridic.nli import NLIScorer, load_backend

        try:
            if input is None and (source is None or claim is None):
                raise VeridicError("Give either --source and --claim (one pair) or --input FILE (many pairs).")
            if input is not None and (source is not None or claim is not None):
                raise VeridicError("--input cannot be combined with --source/--claim; use one or the other.")
            if input is not None and output is None:
                raise VeridicError("--input needs --output FILE for the scored rows.")
            if output is not None:
                from veridic.io import check_output

                check_output(output)  # before the model loads: a bad -o fails in milliseconds
            if engine not in ("local", "ray"):
                raise VeridicError(f"--engine must be 'local' or 'ray'; got {engine!r}.")
            if engine == "ray":
                if input is None:
                    raise VeridicError("--engine ray scores files: give --input FILE --output FILE.")
                from veridic.scale import score_file_ray

                rep = score_file_ray(input=input, output=output, model=model, backend=backend, method=method, mc_samples=mc_samples,  # type: ignore[arg-type]
                                     granularity=granularity, claim_aggregation=aggregation, seed=seed, batch_size=batch_size,
                                     actors=actors, ray_address=ray_address, progress=True)
                err.print(f"wrote {rep.written} scored rows to {output} ({rep.already_done} already there; {rep.chunks_scored}/{rep.chunks} chunks scored on {rep.actors} actors in {rep.seconds:.1f} s)")
                return
            kwargs: dict[str, Any] = {"batch_size": batch_size}
            b = load_backend(model, kind=backend, **kwargs)
            if method == "hybrid":
                from veridic.nli.hybrid import HybridScorer

                scorer = HybridScorer(backend=b, mc_samples=mc_samples, seed=seed, claim_aggregation=aggregation)
            else:
                scorer = NLIScorer(backend=b, method=method, mc_samples=mc_samples, granularity=granularity, claim_aggregation=aggregation, seed=seed)  # type: ignore[arg-type]
            if input is None:
                from veridic.io import check_text_length

                src, clm = _text_or_file(source), _text_or_file(claim)  # type: ignore[arg-type]
                check_text_length(src, what="source")
                verdict = scorer.score(sources=[src], claims=[clm], contexts=[context])[0]
                if as_json:
                    out.print_json(json.dumps(verdict.to_dict(), ensure_ascii=False))
                else:
                    _print_verdict(verdict)
                return
            from veridic.scoring_files import score_file

            n = score_file(scorer=scorer, input=input, output=output, progress=True)  # type: ignore[arg-type]
            err.print(f"wrote {n} scored rows to {output}")
        except VeridicError as exc:
            _fail(exc)
        except OSError as exc:  # an unreadable input or unwritable output path
            _fail(VeridicError(f"{exc.strerror or exc} ({exc.filename or 'file'}); check the --input/--output paths."))

    def _print_verdict(v) -> None:
        t = Table(title=f"{v.label}  score={v.score:+.3f}  (method {v.method})", show_lines=False)
        for col in ("claim sentence", "score", "e", "n", "c", "evidence"):
            t.add_column(col, overflow="fold")
        for s in v.sentences:
            ev = s.evidence
            t.add_row(s.span.text, f"{s.score:+.3f}", f"{s.e:.2f}", f"{s.n:.2f}", f"{s.c:.2f}", f"[{ev.start}:{ev.end}] {ev.text[:120]}" if ev else "")
        out.print(t)
        if v.uncertainty is not None:
            out.print(f"uncertainty (MC-dropout std): {v.uncertainty:.3f}")

    @export_app.command("onnx")
    def export_onnx_cmd(
        model: Optional[str] = typer.Option(None, "--model", "-m", help="Model to export (default: embedded)."),
        out_dir: Path = typer.Option(..., "--out", help="Output folder."),
        quantize: bool = typer.Option(True, help="Also write a per-channel int8 copy (model.int8.onnx)."),
    ) -> None:
        """Export an NLI model to ONNX (+ int8) for the onnx backend."""
        from veridic.nli import export_onnx

        try:
            files = export_onnx(model=model, out_dir=out_dir, quantize=quantize)
        except VeridicError as exc:
            _fail(exc)
        for k, p in files.items():
            out.print(f"{k}: {p} ({p.stat().st_size / 1e6:.1f} MB)")

    @train_app.command("nli")
    def train_nli_cmd(
        config: Path = typer.Option(Path("configs/nli-minilm.yaml"), "--config", help="Training config (YAML)."),
        out_dir: Path = typer.Option(..., "--out", help="Run folder: checkpoints, logs and the final model."),
        data_dir: Optional[Path] = typer.Option(None, "--data", help="Folder of NLI data (default: ../shared/data or $VERIDIC_DATA)."),
        max_minutes: Optional[float] = typer.Option(None, "--max-minutes", help="Stop cleanly (checkpoint + export) after this many minutes."),
        resume: bool = typer.Option(True, help="Continue from the last checkpoint in --out if there is one."),
        device: Optional[str] = typer.Option(None, "--device", help="auto | cpu | cuda | cuda:N (default: the config's runtime.device, auto). bf16 autocast on CUDA."),
    ) -> None:
        """Train the NLI model (seeded, checkpointed, resumable)."""
        try:
            from veridic.train import train_nli
        except ImportError as exc:
            _fail(VeridicError(f"Training needs the 'train' extra ({exc.name} is missing): pip install 'veridic[train]'"))
        try:
            final = train_nli(config=config, output_dir=out_dir, resume=resume, max_minutes=max_minutes, data_dir=data_dir,
                              device=device)
        except VeridicError as exc:
            _fail(exc)
        out.print(f"final model: {final}")

    def _mount_optional() -> None:
        # Commands owned by other subpackages; a missing optional extra hides them.
        for module, name in (("veridic.detect.cli", "detect"), ("veridic.retrieve.cli", "index"), ("veridic.ablation.cli", "ablation"),
                             ("veridic.ais.cli", "ais"), ("veridic.congruity.cli", "congruity"),
                             ("veridic.synth.cli", "synth")):
            try:
                sub = __import__(module, fromlist=["app"]).app
            except ImportError:
                continue
            app.add_typer(sub, name=name)
        try:
            from veridic.bench.cli import bench
        except ImportError:
            pass
        else:
            app.command("bench")(bench)
        # `serve` imports only typer at mount time; without the 'service' extra it says what to install.
        from veridic.service.cli import serve

        app.command("serve")(serve)

    _mount_optional()
else:  # pragma: no cover
    app = None


def main() -> None:
    if app is None:
        _install_hint()
    app()


if __name__ == "__main__":  # pragma: no cover
    main()

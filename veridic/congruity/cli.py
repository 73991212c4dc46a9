"""``veridic congruity build | score | train | combine | report``: the factual-vs-contextual probe (paper 000).

A thin shell over :mod:`veridic.congruity`; the only place that builds
models. Typical run on PoMo::

    veridic congruity build --data pomo:test --task claim --sample 300 --out runs/congruity/claim.jsonl
    veridic congruity score --items runs/congruity/claim.jsonl --model embedded --out runs/congruity/claim.scores.jsonl
    veridic congruity report --scores runs/congruity/claim.scores.jsonl --familiarity claims --out-dir runs/congruity/claim-report

LM scores are cached (SQLite, :class:`veridic.lm.CachingLM`) next to the
scores file unless ``--cache`` says otherwise, so re-running is cheap.
The paper's fine-tuned multiple-choice model (appendix D)::

    veridic congruity build --data pomo:valid --task claim --nonfactual neighbour --out runs/congruity/claim-valid.jsonl
    veridic congruity train --items runs/congruity/claim-valid.jsonl --out-dir runs/congruity/mc --max-minutes 25
    veridic congruity score --items runs/congruity/claim.jsonl --model runs/congruity/mc/model --out runs/congruity/claim.mc.scores.jsonl

Generated descriptions are scored with ``build --task references`` and
``score --generations gen.jsonl`` (rows ``{"id", "generation"}``).
"""

from __future__ import annotations

import json
import random
import sys
import time
from pathlib import Path
from typing import Annotated, Any

import typer

from veridic.cli_options import Bf16, Progress, Resume, Threads, parse_bf16
from veridic.errors import ConfigError, InputError, VeridicError

__all__ = ["app"]

app = typer.Typer(help="Factual vs contextual errors in entity descriptions (paper 000).", no_args_is_help=True)

_TASKS = ("claim", "description", "references")


def _fail(exc: VeridicError) -> None:
    typer.echo(f"error: {exc}", err=True)
    raise typer.Exit(2)


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    from veridic.io._records import iter_jsonl

    if not path.is_file():
        raise InputError(f"No such file: {path}.")
    return [row for _, row in iter_jsonl(path)]


def _write_beside(out: Path, suffix: str, data: dict[str, Any]) -> None:
    """``data`` as JSON in the file named ``out`` + ``suffix`` (an output's stats or metadata), atomically."""
    from veridic.io._atomic import atomic_write_text

    atomic_write_text(Path(str(out) + suffix), json.dumps(data, indent=2) + "\n")


def _write_jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    from veridic.io._atomic import atomic_open

    with atomic_open(path, "w", encoding="utf-8") as fh:
        fh.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)


@app.command("build")
def build(
    data: Annotated[str, typer.Option("--data", help="pomo:<split> (read from $VERIDIC_DATA or ../shared/data) or a generic JSONL file.")] = "pomo:test",
    task: Annotated[str, typer.Option("--task", help="claim (§2.2), description (§2.3) or references (§2.1, for generated descriptions).")] = "claim",
    out: Annotated[Path, typer.Option("--output", "-o", "--out", help="Items JSONL to write (stats go to <out>.stats.json).")] = Path("congruity-items.jsonl"),
    sample: Annotated[int | None, typer.Option("--sample", help="Keep a seeded random sample of N items (built over the whole corpus first).")] = None,
    seed: Annotated[int, typer.Option("--seed")] = 0,
    data_dir: Annotated[Path | None, typer.Option("--data-dir", help="Folder holding pomo/ (default: $VERIDIC_DATA or ../shared/data).")] = None,
    nonfactual: Annotated[str, typer.Option("--nonfactual", help="same-article (the paper: another person of the article; items without one are dropped) or neighbour (proxy: the entity of the most similar context).")] = "same-article",
) -> None:
    """Build multiple-choice items (or reference texts) with the paper's overlap constraints."""
    from veridic.congruity._build import build_claim_items, build_description_items, build_references
    from veridic.congruity._data import load_examples

    try:
        if task not in _TASKS:
            raise ConfigError(f"--task must be one of {_TASKS}; got {task!r}.")
        examples = load_examples(data, data_dir=data_dir)
        if task == "references":
            refs = build_references(examples=examples)
            by_id = {e.id: e for e in examples}
            rows = [{**r.__dict__, "entity": by_id[r.id].entity, "context": by_id[r.id].context, "n_claims": by_id[r.id].meta.get("n_claims"), "summary": by_id[r.id].summary} for r in refs]
            stats: dict[str, Any] = {"n_examples": len(examples), "n_items": len(rows)}
        else:
            fn = build_claim_items if task == "claim" else build_description_items
            items, st = fn(examples=examples, seed=seed, nonfactual=nonfactual)  # type: ignore[arg-type]
            rows = [it.to_dict() for it in items]
            stats = st.to_dict()
        if sample is not None and sample < len(rows):
            rows = random.Random(seed).sample(rows, sample)
            stats["sampled"] = sample
        stats.update({"data": data, "task": task, "seed": seed, "nonfactual": nonfactual})
        _write_jsonl(out, rows)
        _write_beside(out, ".stats.json", stats)
    except VeridicError as exc:
        _fail(exc)
    typer.echo(f"wrote {len(rows)} {task} items from {stats['n_examples']} examples to {out}; skipped: {stats.get('skipped', {})}")


def _build_lm(model: str, *, device: str, batch_size: int, threads: int | None) -> Any:
    try:
        import torch
    except ImportError:
        from veridic.errors import MissingDependencyError

        raise MissingDependencyError("torch", extra="lm", purpose="Scoring with a causal LM") from None
    if threads:
        torch.set_num_threads(threads)
    from veridic.lm._hf import HFCausalLM

    return HFCausalLM.from_pretrained(model, device=device, batch_size=batch_size)


@app.command("score")
def score(
    items: Annotated[Path, typer.Option("--items", help="Items JSONL from `build`.")],
    out: Annotated[Path, typer.Option("--output", "-o", "--out", help="Per-item scores JSONL to write.")],
    model: Annotated[str, typer.Option("--model", help="'embedded' (SmolLM2-135M, zero-shot), a model folder from `congruity train` (fine-tuned multiple-choice encoder), 'dummy' (tests), a causal-LM folder, a .gguf file or a hub id.")] = "embedded",
    cache: Annotated[Path | None, typer.Option("--cache", help="LM cache folder (default: <out>.lmcache).")] = None,
    normalization: Annotated[str, typer.Option("--normalization", help="per_byte (default) or sum.")] = "per_byte",
    previous: Annotated[bool, typer.Option("--previous/--no-previous", help="Condition on the previous sentence too.")] = True,
    limit: Annotated[int | None, typer.Option("--limit", help="Score only the first N items.")] = None,
    generations: Annotated[Path | None, typer.Option("--generations", help="Score generated descriptions ({id, generation} rows) against `build --task references` items instead.")] = None,
    metrics: Annotated[str, typer.Option("--metrics", help="With --generations: bleu1,rougeL,bertscore.")] = "bleu1,rougeL,bertscore",
    device: Annotated[str, typer.Option("--device")] = "cpu",
    batch_size: Annotated[int, typer.Option("--batch-size")] = 8,
    threads: Threads = None,
    max_length: Annotated[int | None, typer.Option("--max-length", help="Multiple-choice models only: tokens per (article, option) pair at inference (default: the length the model was trained with).")] = None,
    progress: Progress = True,
) -> None:
    """Rank every item's options by LM log-likelihood (or score generations by precision)."""
    from veridic.congruity._build import MCItem

    t0 = time.perf_counter()
    try:
        rows = _read_jsonl(items)[:limit] if limit is not None else _read_jsonl(items)
        if not rows:
            raise InputError(f"{items} holds no items.")
        if generations is not None:
            from veridic.congruity._generation import score_generations

            gens = {str(g["id"]): str(g.get("generation", "")) for g in _read_jsonl(generations)}
            per_metric, describe = score_generations(references=rows, generations=gens, metrics=tuple(m.strip() for m in metrics.split(",") if m.strip()))
            out_rows = [s.to_dict() for ss in per_metric.values() for s in ss]
            meta = {"model": describe, "config": {"metrics": list(per_metric)}}
        else:
            its = [MCItem.from_dict(r) for r in rows]
            from veridic.congruity._ranking import NORMALIZATIONS, rank_items
            from veridic.lm import CachingLM

            if normalization not in NORMALIZATIONS:
                raise ConfigError(f"--normalization must be one of {NORMALIZATIONS}; got {normalization!r}.")
            from veridic.congruity._mc import is_mc_model

            def tick(done: int, total: int) -> None:
                if progress:
                    el = time.perf_counter() - t0
                    typer.echo(f"  {done}/{total} items, {el:.0f} s ({el / done:.2f} s/item)", err=True)

            if is_mc_model(model):
                # A fine-tuned multiple-choice encoder (`veridic congruity train`): it reads the masked
                # article (previous, current and next sentence) and scores each option with its head.
                from veridic.congruity._mc import MCScorer

                if threads:
                    import torch

                    torch.set_num_threads(threads)
                mc = MCScorer(model, batch_size=batch_size, device=device, max_length=max_length)
                scored = mc.score(its, on_batch=tick)
                meta = {"model": mc.describe(), "config": {"scores": "multiple-choice logits", "context": "previous + masked sentence + next", "items": str(items)}}
            else:
                if max_length is not None:
                    raise ConfigError("--max-length applies to multiple-choice models from `congruity train`; the LM scorer reads whole contexts.")
                if model == "dummy":
                    from veridic.lm._dummy import DummyLM

                    inner: Any = DummyLM()
                else:
                    inner = _build_lm(model, device=device, batch_size=batch_size, threads=threads)
                lm = CachingLM(inner, path=cache or Path(str(out) + ".lmcache"))
                scored = rank_items(items=its, backend=lm, normalization=normalization, with_previous=previous, chunk_size=16, on_chunk=tick)  # type: ignore[arg-type]
                meta = {"model": inner.describe(), "config": {"normalization": normalization, "previous_sentence": previous, "items": str(items)},
                        "cache": {"hits": lm.hits, "misses": lm.misses}}
            out_rows = [s.to_dict() for s in scored]
        _write_jsonl(out, out_rows)
        meta["seconds"] = round(time.perf_counter() - t0, 1)
        meta["n_items"] = len(rows)
        stats_path = Path(str(items) + ".stats.json")
        if stats_path.is_file():
            meta["build"] = json.loads(stats_path.read_text())
        _write_beside(out, ".meta.json", meta)
    except VeridicError as exc:
        _fail(exc)
    typer.echo(f"scored {len(rows)} items in {meta['seconds']:.0f} s -> {out}")


@app.command("train")
def train(
    items: Annotated[list[Path], typer.Option("--items", help="Training items JSONL from `build` (repeat for several files, e.g. claim and description).")],
    out_dir: Annotated[Path, typer.Option("--output", "-o", "--out-dir", help="Run folder: checkpoints/ and the final model/ (score with `score --model <out-dir>/model`).")],
    model: Annotated[str, typer.Option("--model", help="Encoder to fine-tune: minilm (the packaged all-MiniLM-L6-v2) or a save_pretrained() folder.")] = "minilm",
    max_minutes: Annotated[float, typer.Option("--max-minutes", help="Wall-clock budget for training; stops cleanly (with a checkpoint) when spent.")] = 25.0,
    epochs: Annotated[float, typer.Option("--epochs")] = 1.0,
    max_steps: Annotated[int | None, typer.Option("--max-steps", help="Cap on optimisation steps (default: from --epochs).")] = None,
    batch_size: Annotated[int, typer.Option("--batch-size", help="Items per step (each item has 4 options).")] = 8,
    max_length: Annotated[int, typer.Option("--max-length", help="Tokens per (article, option) pair; the article is truncated first.")] = 256,
    truncation: Annotated[str, typer.Option("--truncation", help="around-mask (keep the words of the article nearest the masked slot) or end (cut the article's tail).")] = "around-mask",
    eval_items: Annotated[list[Path] | None, typer.Option("--eval-items", help="Items JSONL for the learning curve (accuracy every --eval-steps); with --eval-sample, a seeded sample of it is held out of training.")] = None,
    eval_sample: Annotated[int | None, typer.Option("--eval-sample", help="Hold out this many seeded items of --eval-items (default: all of them); training items that share what --eval-group names leave the training set.")] = None,
    eval_group: Annotated[str, typer.Option("--eval-group", help="What a held-out item takes out of training: entity (its id, article and entity: unseen people, like PoMo test), article (id and article) or id (the item's own builds only; leaks entities).")] = "entity",
    eval_steps: Annotated[int | None, typer.Option("--eval-steps", help="Steps between learning-curve points (default: --save-steps).")] = None,
    save_total_limit: Annotated[int, typer.Option("--save-total-limit", help="Checkpoints kept on disk.")] = 2,
    freeze_layers: Annotated[int, typer.Option("--freeze-layers", help="Freeze the embeddings and this many lowest encoder layers (cheaper steps on a small CPU budget).")] = 0,
    warmup: Annotated[float, typer.Option("--warmup", help="Warm-up fraction of the planned steps.")] = 0.06,
    lr: Annotated[float, typer.Option("--lr")] = 5e-5,
    seed: Annotated[int, typer.Option("--seed")] = 0,
    save_steps: Annotated[int, typer.Option("--save-steps")] = 100,
    bf16: Bf16 = "auto",
    threads: Threads = None,
    resume: Resume = True,
    progress: Progress = False,
) -> None:
    """Fine-tune a multiple-choice encoder on claim / description items (paper 000, appendix D)."""
    from veridic.congruity._build import MCItem
    from veridic.congruity._mc import MCTrainConfig, train_multiple_choice

    try:
        cfg = MCTrainConfig(model=model, max_length=max_length, batch_size=batch_size, learning_rate=lr, epochs=epochs, max_steps=max_steps,
                            max_minutes=max_minutes, seed=seed, bf16=parse_bf16(bf16), save_steps=save_steps, threads=threads,
                            truncation=truncation, eval_steps=eval_steps, save_total_limit=save_total_limit, freeze_layers=freeze_layers,
                            warmup_fraction=warmup)
        its = [MCItem.from_dict(r) for path in items for r in _read_jsonl(path)]
        if not its:
            raise InputError(f"{', '.join(map(str, items))} hold no items.")
        candidates = [MCItem.from_dict(r) for path in eval_items or [] for r in _read_jsonl(path)]
        if eval_sample is not None and not candidates:
            raise ConfigError("--eval-sample needs --eval-items to sample from.")
        split = None
        if candidates:
            from veridic.congruity._split import hold_out

            # No example, article or (by default) person may be both trained on and used for the curve.
            split = hold_out(train=its, candidates=candidates, n=eval_sample, seed=seed, group=eval_group)
            its = split.train
            typer.echo(f"held out {len(split.held)} items ({split.held_entities} entities, {split.held_articles} articles); "
                       f"{split.dropped} training items share them by {eval_group} and leave training ({split.dropped_by})", err=True)
        res = train_multiple_choice(items=its, out_dir=out_dir, config=cfg, resume=resume, progress=progress, eval_items=split.held if split else None,
                                    eval_split=split.describe() if split else None)
    except VeridicError as exc:
        _fail(exc)
    typer.echo(
        f"trained {res.steps} steps ({res.epochs_done:g} epochs over {res.train_items} items) in {res.seconds:.0f} s"
        + (" (stopped by the time budget)" if res.stopped_by_budget else "") + f"; model -> {res.model_dir}"
    )
    for row in res.curve:
        if "eval_accuracy" in row:
            typer.echo(f"  step {int(row['step'])}: held-out accuracy {100 * row['eval_accuracy']:.1f} %")


@app.command("combine")
def combine(
    scores: Annotated[list[Path], typer.Option("--scores", help="Scores JSONL from `score` (repeat; each run scored the same items file).")],
    out: Annotated[Path, typer.Option("--output", "-o", "--out", help="Combined scores JSONL to write (read it with `report`).")],
    weights: Annotated[str | None, typer.Option("--weights", help="Comma-separated weight per --scores run (default: equal). Choose them on validation items, never on the test.")] = None,
) -> None:
    """Sum several scorers' option scores, each standardised within the item, with fixed weights."""
    from veridic.congruity._combine import combine_scores
    from veridic.congruity._ranking import ItemScores

    try:
        if weights is None:
            ws = [1.0] * len(scores)
        else:
            try:
                ws = [float(w) for w in weights.split(",")]
            except ValueError:
                raise ConfigError(f"--weights must be comma-separated numbers, one per --scores run; got {weights!r}.") from None
        runs = [[ItemScores.from_dict(r) for r in _read_jsonl(p)] for p in scores]
        combined = combine_scores(runs=runs, weights=ws)
        _write_jsonl(out, [c.to_dict() for c in combined])
        metas = [json.loads(Path(str(p) + ".meta.json").read_text()) if Path(str(p) + ".meta.json").is_file() else {} for p in scores]
        meta = {"model": {"backend": "combination", "method": "weighted sum of per-item standardised scores", "weights": ws,
                          "runs": [{"scores": str(p), "model": m.get("model", {})} for p, m in zip(scores, metas)]},
                "config": {"combine": [str(p) for p in scores], "weights": ws}, "n_items": len(combined)}
        if "build" in metas[0]:
            meta["build"] = metas[0]["build"]
        _write_beside(out, ".meta.json", meta)
    except VeridicError as exc:
        _fail(exc)
    typer.echo(f"combined {len(scores)} runs over {len(combined)} items (weights {ws}) -> {out}")


@app.command("report")
def report(
    scores: Annotated[Path, typer.Option("--scores", help="Scores JSONL from `score`.")],
    out_dir: Annotated[Path, typer.Option("--output", "-o", "--out-dir", help="Folder for report.json, report.md and the PNG charts.")],
    familiarity: Annotated[str, typer.Option("--familiarity", help="claims, recurrence (PoMo proxies), summary (paper's heuristic) or column (the items' own 'familiar').")] = "claims",
    threshold: Annotated[float | None, typer.Option("--threshold", help="Count threshold (>=) for claims/recurrence (default: familiar = above the median).")] = None,
    n_permutations: Annotated[int, typer.Option("--n-permutations")] = 10000,
    seed: Annotated[int, typer.Option("--seed")] = 0,
    command: Annotated[str | None, typer.Option("--command", help="Command line to record in the report.")] = None,
    figures: Annotated[bool, typer.Option("--figures/--no-figures")] = True,
    as_json: Annotated[bool, typer.Option("--json", help="Print report.json instead of the Markdown.")] = False,
) -> None:
    """T and M per class, split by familiarity with permutation / Mann-Whitney tests and effect sizes."""
    from veridic.congruity._familiarity import assign_familiarity
    from veridic.congruity._ranking import ItemScores
    from veridic.congruity._report import build_report, write_report

    try:
        rows = [ItemScores.from_dict(r) for r in _read_jsonl(scores)]
        if not rows:
            raise InputError(f"{scores} holds no scores.")
        meta_path = Path(str(scores) + ".meta.json")
        meta = json.loads(meta_path.read_text()) if meta_path.is_file() else {}
        written: dict[str, dict[str, Path]] = {}
        tasks = list(dict.fromkeys(r.task for r in rows))
        for task in tasks:
            sub = [r for r in rows if r.task == task]
            fam, thr = assign_familiarity(
                method=familiarity,  # type: ignore[arg-type]
                n_claims=[r.meta.get("n_claims") for r in sub], n_mentions=[r.meta.get("n_mentions") for r in sub],
                column=[r.familiar for r in sub], summaries=[(r.meta.get("entity", ""), r.meta.get("summary")) for r in sub], threshold=threshold,
            )
            rep = build_report(scores=sub, familiar=fam, familiarity={"method": familiarity, "threshold": thr}, model=meta.get("model", {}),
                               config={**meta.get("config", {}), "n_permutations": n_permutations, "seed": seed}, build=meta.get("build", {}),
                               n_permutations=n_permutations, seed=seed, seconds=meta.get("seconds"))
            target = out_dir if len(tasks) == 1 else out_dir / task
            written[task] = write_report(rep, out_dir=target, command=command, figures=figures)
    except VeridicError as exc:
        _fail(exc)
    for paths in written.values():
        typer.echo(paths["json"].read_text() if as_json else paths["markdown"].read_text())


def main() -> None:  # pragma: no cover - thin entry point
    app()


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

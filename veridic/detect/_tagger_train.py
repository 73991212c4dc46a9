"""Training the span tagger with the ``transformers`` Trainer, in resumable stages on a CPU.

Rows are in the span schema (``source, claim, spans``); each claim piece is encoded against its packed source
exactly as :class:`~veridic.detect._tagger.SpanTagger` encodes it at inference, and its tokens are labelled 1
where they overlap a gold span (source and special tokens are ignored). The Trainer owns the loop, the
checkpoints (model, optimiser, scheduler, RNG and data position) and resuming; a callback stops it cleanly,
with a checkpoint, when the minutes run out. The decision threshold is fitted afterwards on held-back rows
(character F1, pooled), never on evaluation data, and stored in ``tagger.json`` beside the final weights.

>>> token_labels([(0, 3), (4, 9), (0, 0)], [0, 0, None], [(4, 9)])
[0, 1, -100]
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from veridic.errors import ConfigError, InputError, MissingDependencyError, ModelLoadError

__all__ = ["RUN_FILE", "TaggerTrainConfig", "best_span_scores", "capped_flag_threshold", "check_run_folder", "entfa_train_rows", "export_newest_checkpoint", "fit_flag_threshold", "fit_threshold", "held_back", "token_labels", "train_tagger"]


@dataclass(frozen=True)
class TaggerTrainConfig:
    """What the tagger run is: backbone, window, optimisation and budget (pre-registered in docs/preregistration)."""

    backbone: str = "backbone:all-minilm-l6-v2"
    max_length: int = 256
    epochs: float = 2.0
    lr: float = 5e-5
    batch_size: int = 16
    warmup_ratio: float = 0.1
    weight_decay: float = 0.01
    seed: int = 0
    save_minutes: float = 15.0
    held_back_fraction: float = 0.2
    thresholds: tuple[float, ...] = field(default_factory=lambda: tuple(round(0.05 * i, 2) for i in range(2, 19)))
    #: claim pieces of at most this many sentences, in training and (written to ``tagger.json``) at inference;
    #: None: pieces bounded by tokens alone, as the first taggers were trained
    piece_sentences: int | None = None
    #: keep only the encoder's first N layers (None: all); a 6-layer cut of a 12-layer encoder tags about twice as fast
    num_layers: int | None = None

    def __post_init__(self) -> None:
        from veridic.detect._tagger import _positive_int_or_none

        if self.max_length < 64 or self.batch_size < 1 or self.epochs <= 0 or self.lr <= 0:
            raise ConfigError(f"TaggerTrainConfig: max_length >= 64, batch_size >= 1, epochs > 0 and lr > 0 are required; got {self}.")
        if not 0 <= self.held_back_fraction < 1:
            raise ConfigError(f"held_back_fraction must lie in [0, 1); got {self.held_back_fraction}.")
        if not _positive_int_or_none(self.piece_sentences):
            raise ConfigError(f"piece_sentences must be a positive whole number or None; got {self.piece_sentences!r}.")
        if not _positive_int_or_none(self.num_layers):
            raise ConfigError(f"num_layers must be a positive whole number or None (all layers); got {self.num_layers!r}.")


def held_back(row_id: str, fraction: float) -> bool:
    """Whether a training row is held back for the threshold (a stable hash of its id, independent of order)."""
    return int(hashlib.sha1(row_id.encode("utf-8")).hexdigest()[:8], 16) / 0xFFFFFFFF < fraction


def entfa_train_rows(*, data_dir: str | Path | None = None) -> list[dict[str, Any]]:
    """EntFA's train split (the one human span set that may be trained on) as training rows (span schema dicts)."""
    from veridic.detect._spans import load_span_rows

    return [{"id": r.id, "dataset": r.dataset, "source": r.source, "claim": r.claim,
             "spans": [{"start": a, "end": b, "type": t} for a, b, t in r.spans]}
            for r in load_span_rows(dataset="entfa_xsum", split="train", data_dir=data_dir)]


def _threshold_rows(rows: Sequence[dict[str, Any]], fraction: float) -> list[dict[str, Any]]:
    """The held-back human rows the threshold is fitted on, each once (a repeated row is listed once)."""
    return list({str(r["id"]): r for r in rows if held_back(str(r["id"]), fraction) and r.get("dataset") != "synthetic"}.values())


def token_labels(offsets: Sequence[tuple[int, int]], sequence_ids: Sequence[int | None], spans: Sequence[tuple[int, int]]) -> list[int]:
    """1 for a claim token overlapping a span, 0 for another claim token, -100 (ignored) for the rest."""
    out = []
    for (a, b), sid in zip(offsets, sequence_ids):
        if sid != 0 or b <= a:
            out.append(-100)
        else:
            out.append(int(any(a < e and s < b for s, e in spans)))
    return out


def _features(rows: Sequence[dict[str, Any]], tokenizer: Any, *, max_length: int, piece_sentences: int | None = None) -> list[dict[str, Any]]:
    from veridic.detect._tagger import claim_pieces, encode_pair, token_counter

    count = token_counter(tokenizer)

    feats = []
    for r in rows:
        claim = r["claim"]
        for a, b in claim_pieces(claim, count_tokens=count, max_sentences=piece_sentences):
            enc = encode_pair(tokenizer, claim[a:b], r["source"], max_length=max_length, count_tokens=count)
            spans = [(max(0, s["start"] - a), min(b, s["end"]) - a) for s in r["spans"] if s["end"] > a and s["start"] < b]
            feat = {k: enc[k] for k in ("input_ids", "attention_mask", "token_type_ids") if k in enc}
            feat["labels"] = token_labels(enc["offset_mapping"], enc.sequence_ids(), spans)
            feats.append(feat)
    return feats


def _char_f1(rows: Sequence[dict[str, Any]], probs: Sequence[np.ndarray], threshold: float) -> float:
    from veridic.detect._tagger import spans_from_probs

    tp = pred = gold = 0
    for r, p in zip(rows, probs):
        claim = r["claim"]
        g = np.zeros(len(claim), bool)
        for s in r["spans"]:
            g[s["start"]:s["end"]] = True
        m = np.zeros(len(claim), bool)
        for s in spans_from_probs(claim, p, threshold=threshold):
            m[s.start:s.end] = True
        keep = np.array([not ch.isspace() for ch in claim], bool)
        g, m = g & keep, m & keep
        tp += int((g & m).sum())
        pred += int(m.sum())
        gold += int(g.sum())
    return 0.0 if tp == 0 else 2 * tp / (pred + gold)


def fit_threshold(tagger: Any, rows: Sequence[dict[str, Any]], thresholds: Sequence[float]) -> tuple[float, dict[str, float]]:
    """The threshold with the best pooled character F1 on ``rows`` (ties: the higher threshold, fewer flags)."""
    probs = tagger.char_probabilities(sources=[r["source"] for r in rows], claims=[r["claim"] for r in rows])
    return _best_threshold(rows, probs, thresholds)


def _best_threshold(rows: Sequence[dict[str, Any]], probs: Sequence[np.ndarray], thresholds: Sequence[float]) -> tuple[float, dict[str, float]]:
    if not rows:
        raise InputError("No held-back rows to fit the threshold on; raise held_back_fraction.")
    scores = {float(t): _char_f1(rows, probs, t) for t in thresholds}
    return max(scores, key=lambda t: (scores[t], t)), scores


def fit_flag_threshold(rows: Sequence[dict[str, Any]], probs: Sequence[np.ndarray], *, threshold: float,
                       grid: Sequence[float]) -> tuple[float, dict[str, float]]:
    """The span score that flags a claim on its own: the value in ``grid`` with the best balanced accuracy of
    "some span at ``threshold`` scores at least this" against "the claim has a gold span" (ties: the higher).

    >>> rows = [{"claim": "ab cd", "spans": [{"start": 0, "end": 2}]}, {"claim": "ab cd", "spans": []}]
    >>> fit_flag_threshold(rows, [np.array([0.9, 0.9, 0, 0, 0]), np.array([0.6, 0.6, 0, 0, 0])], threshold=0.5, grid=[0.5, 0.7, 0.95])[0]
    0.7
    """
    best_span = best_span_scores(rows, probs, threshold=threshold)
    gold = [bool(r["spans"]) for r in rows]
    pos, neg = sum(gold), len(gold) - sum(gold)

    def bacc(t: float) -> float:
        tpr = sum(g and b >= t for g, b in zip(gold, best_span)) / pos if pos else 0.0
        tnr = sum(not g and b < t for g, b in zip(gold, best_span)) / neg if neg else 0.0
        return 0.5 * (tpr + tnr)

    scores = {float(t): bacc(t) for t in grid}
    return max(scores, key=lambda t: (scores[t], t)), scores


def best_span_scores(rows: Sequence[dict[str, Any]], probs: Sequence[np.ndarray], *, threshold: float) -> list[float]:
    """Per row, the score of its best span at ``threshold`` (0 when it has none): what the flag threshold is compared with."""
    from veridic.detect._tagger import spans_from_probs

    return [max((s.score for s in spans_from_probs(r["claim"], p, threshold=threshold)), default=0.0) for r, p in zip(rows, probs)]


def capped_flag_threshold(rows: Sequence[dict[str, Any]], probs: Sequence[np.ndarray], *, threshold: float, grid: Sequence[float],
                          faithful_best: Sequence[float], max_share: float) -> tuple[float, dict[str, Any]]:
    """:func:`fit_flag_threshold` on the part of ``grid`` where the tagger alone would flag at most ``max_share`` of
    a set of faithful texts (``faithful_best``: their :func:`best_span_scores`); the highest grid value when no value
    keeps to the cap. Returns the threshold and what was read: each grid value's faithful share and which qualified.

    >>> rows = [{"claim": "ab cd", "spans": [{"start": 0, "end": 2}]}, {"claim": "ab cd", "spans": []}]
    >>> probs = [np.array([0.9, 0.9, 0, 0, 0]), np.array([0.6, 0.6, 0, 0, 0])]
    >>> capped_flag_threshold(rows, probs, threshold=0.5, grid=[0.5, 0.7, 0.95], faithful_best=[0.8, 0.1], max_share=0.0)[0]
    0.95
    """
    if not faithful_best:
        raise InputError("No faithful texts to cap the flag rate with; pass the held-back faithful rows.")
    share = {float(t): sum(b >= t for b in faithful_best) / len(faithful_best) for t in grid}
    allowed = [t for t in share if share[t] <= max_share]
    if not allowed:
        top = max(share)
        return top, {"faithful_share": share, "allowed": [], "max_share": max_share}
    flag, scores = fit_flag_threshold(rows, probs, threshold=threshold, grid=allowed)
    return flag, {"faithful_share": share, "allowed": allowed, "max_share": max_share, "held_back_flag_bacc": scores}


def train_tagger(*, rows: Sequence[dict[str, Any]], output_dir: str | Path, config: TaggerTrainConfig = TaggerTrainConfig(),
                 max_minutes: float | None = None, resume: bool = True, data_card: dict[str, Any] | None = None,
                 device: str = "cpu") -> dict[str, Any]:
    """Train on ``rows`` (span schema; those :func:`held_back` are kept for the threshold), writing checkpoints to
    ``output_dir/checkpoints`` and, when training finishes, the tagger to ``output_dir/final``.

    With ``max_minutes`` the run stops with a checkpoint before the time is up; calling again with ``resume``
    continues from the newest checkpoint. The run folder remembers its config (``run.json``): a stage with another
    config, a backbone above all, is refused before it touches the checkpoints. ``device`` (``cpu``, ``cuda``,
    ``auto``) is a runtime option, outside the config: a run may move between a CPU and a GPU. Returns a summary
    (``finished``, steps, threshold and held-back F1).
    """
    try:
        import torch
        from transformers import AutoModelForTokenClassification, AutoTokenizer, DataCollatorForTokenClassification, Trainer, TrainingArguments
    except ImportError as exc:
        raise MissingDependencyError(exc.name or "transformers", extra="train", purpose="training the span tagger") from None
    from veridic.device import check_device, cpu_supports_bf16
    from veridic.lm._training import StageClockCallback, last_checkpoint

    device = check_device(device)
    out = Path(output_dir).expanduser()
    if not rows:
        raise InputError("No training rows were given to the tagger.")
    check_run_folder(out, config)
    train_rows = [r for r in rows if not held_back(str(r["id"]), config.held_back_fraction)]
    # Rows may be listed more than once (a small human set repeated); the threshold slice counts each once.
    held_rows = _threshold_rows(rows, config.held_back_fraction)
    tokenizer, model = _backbone(config.backbone, AutoTokenizer, AutoModelForTokenClassification, num_layers=config.num_layers)
    torch.manual_seed(config.seed)
    feats = _features(train_rows, tokenizer, max_length=config.max_length, piece_sentences=config.piece_sentences)

    class _Data(torch.utils.data.Dataset):
        def __len__(self) -> int:
            return len(feats)

        def __getitem__(self, i: int) -> dict[str, Any]:
            return feats[i]

    # The stage's minutes run from here; the next stage resumes from the checkpoint the stop writes.
    clock = StageClockCallback(save_minutes=config.save_minutes, deadline=None if max_minutes is None else time.monotonic() + max_minutes * 60)
    args = TrainingArguments(
        output_dir=str(out / "checkpoints"), num_train_epochs=config.epochs, learning_rate=config.lr,
        per_device_train_batch_size=config.batch_size, warmup_steps=config.warmup_ratio, weight_decay=config.weight_decay,
        lr_scheduler_type="linear", seed=config.seed, data_seed=config.seed, logging_steps=25, save_strategy="no",
        save_total_limit=2, report_to=[], use_cpu=device == "cpu",
        bf16=cpu_supports_bf16() if device == "cpu" else torch.cuda.is_bf16_supported(), dataloader_num_workers=0, disable_tqdm=False,
    )
    trainer = Trainer(model=model, args=args, train_dataset=_Data(), data_collator=DataCollatorForTokenClassification(tokenizer),
                      processing_class=tokenizer, callbacks=[clock])
    trainer.train(resume_from_checkpoint=last_checkpoint(out / "checkpoints") if resume else None)
    state = trainer.state
    finished = state.global_step >= state.max_steps
    summary: dict[str, Any] = {"finished": finished, "step": state.global_step, "max_steps": state.max_steps,
                               "train_rows": len(train_rows), "train_pieces": len(feats), "held_back_rows": len(held_rows)}
    if not finished:
        return summary
    trainer.save_model(str(out / "final"))
    tokenizer.save_pretrained(str(out / "final"))
    return {**summary, **_finalise(out / "final", held_rows, config, data_card, step=state.global_step, finished=True)}


#: The run folder's record of the config its checkpoints were trained with.
RUN_FILE = "run.json"
_LAYER_KEY = re.compile(r"\.layer\.(\d+)\.")
_LABELS = {"num_labels": 2, "id2label": {0: "supported", 1: "unsupported"}, "label2id": {"supported": 0, "unsupported": 1}}


def check_run_folder(out: Path, config: TaggerTrainConfig) -> None:
    """Refuse a stage whose config differs from the one the folder's checkpoints were trained with; record it if new.

    A folder with checkpoints but no record (written before the record existed) is taken as it is and recorded.
    """
    from veridic.io._atomic import atomic_write_text

    mine = json.loads(json.dumps(asdict(config)))  # tuples as lists, as read back
    f = out / RUN_FILE
    if f.is_file():
        theirs = json.loads(f.read_text(encoding="utf-8")).get("config", {})
        diff = sorted(k for k in {*mine, *theirs} if mine.get(k) != theirs.get(k))
        if diff:
            both = "; ".join(f"{k}: the folder's {theirs.get(k)!r}, this stage's {mine.get(k)!r}" for k in diff)
            raise ConfigError(f"The run folder {out} holds checkpoints of another tagger config ({both}). Resume it with its own "
                              "config, or give this run its own folder with --output.")
        return
    out.mkdir(parents=True, exist_ok=True)
    atomic_write_text(f, json.dumps({"config": mine}, indent=2) + "\n")


def _backbone(ref: str, auto_tokenizer: Any, auto_cls: Any, *, num_layers: int | None = None) -> tuple[Any, Any]:
    """The tokenizer and a token-classification model on ``ref``: a registered backbone (``backbone:<name>``), a
    model folder, or a packed veridic model (int8 rows, e.g. a shipped NLI model). Another head the folder carries
    (an NLI classifier) is dropped: the token head is new either way. ``num_layers``: keep the encoder's first N
    layers only (their weights as the backbone's)."""
    from transformers import AutoConfig

    from veridic.nli.packed import is_packed, read_packed
    from veridic.train._backbones import resolve_backbone_ref

    base = resolve_backbone_ref(ref) or Path(ref).expanduser()
    if not Path(base).is_dir():
        raise ConfigError(f"The tagger's backbone {ref!r} is neither a registered backbone (backbone:<name>) nor a model folder.")
    tokenizer = auto_tokenizer.from_pretrained(base)
    cut: dict[str, Any] = {}
    if num_layers is not None:
        full = AutoConfig.from_pretrained(str(base), local_files_only=True).num_hidden_layers
        if num_layers > full:
            raise ConfigError(f"num_layers: the backbone {ref!r} has {full} layers; {num_layers} were asked for. Use at most {full}, or None for all.")
        cut = {"num_hidden_layers": num_layers}
    if not is_packed(base):
        # transformers builds the shallower encoder and loads the first N layers' weights.
        return tokenizer, auto_cls.from_pretrained(base, ignore_mismatched_sizes=True, **_LABELS, **cut)
    cfg = AutoConfig.from_pretrained(str(base), local_files_only=True, **_LABELS, **cut)
    model = auto_cls.from_config(cfg)
    encoder = {k: v for k, v in read_packed(base).items() if not k.startswith("classifier.") and not _beyond(k, num_layers)}
    missing, unexpected = model.load_state_dict(encoder, strict=False)
    missing = [k for k in missing if not k.startswith("classifier.") and not k.endswith(("position_ids", "token_type_ids"))]
    unexpected = [k for k in unexpected if ".pooler." not in k]
    if missing or unexpected:
        raise ModelLoadError(f"The packed backbone {base} does not fit a token classifier of its own config: missing {missing[:5]}, "
                             f"unexpected {unexpected[:5]}.")
    return tokenizer, model


def _beyond(key: str, num_layers: int | None) -> bool:
    """Whether a state-dict key belongs to an encoder layer a cut to ``num_layers`` drops (``...layer.7.attention...``)."""
    m = _LAYER_KEY.search(key)
    return num_layers is not None and m is not None and int(m.group(1)) >= num_layers


def _finalise(final: Path, held_rows: Sequence[dict[str, Any]], config: TaggerTrainConfig, data_card: dict[str, Any] | None, *,
              step: int, finished: bool) -> dict[str, Any]:
    """Write ``tagger.json`` beside the weights in ``final``, with the threshold fitted on ``held_rows``."""
    from veridic.detect._tagger import TAGGER_FILE, SpanTagger
    from veridic.io._atomic import atomic_write_text

    meta = {"max_length": config.max_length, "threshold": 0.5, "config": asdict(config), "data": data_card or {}, "step": step,
            "finished": finished}
    if config.piece_sentences is not None:  # inference reads claims in the pieces training saw (and the threshold is fitted so)
        meta["piece_sentences"] = config.piece_sentences
    atomic_write_text(final / TAGGER_FILE, json.dumps(meta, indent=2) + "\n")
    probs = SpanTagger(final).char_probabilities(sources=[r["source"] for r in held_rows], claims=[r["claim"] for r in held_rows])
    threshold, scores = _best_threshold(held_rows, probs, config.thresholds)
    # The pipeline's flag threshold (veridic.detect._pipeline): fitted on the same rows, on the grid above the span threshold.
    flag, flag_scores = fit_flag_threshold(held_rows, probs, threshold=threshold,
                                           grid=[t for t in (*config.thresholds, 0.95, 0.99) if t >= threshold])
    meta.update({"threshold": threshold, "held_back_char_f1": scores[threshold], "threshold_scan": scores,
                 "flag_threshold": flag, "held_back_flag_bacc": flag_scores[flag], "flag_threshold_scan": flag_scores})
    atomic_write_text(final / TAGGER_FILE, json.dumps(meta, indent=2) + "\n")
    return {"threshold": threshold, "held_back_char_f1": scores[threshold], "flag_threshold": flag, "path": str(final)}


def fit_thresholds(*, model_dir: str | Path, rows: Sequence[dict[str, Any]], config: TaggerTrainConfig,
                   data_card: dict[str, Any] | None = None) -> dict[str, Any]:
    """Fit the token and flag thresholds of a tagger folder that training did not write (e.g. an average of two
    taggers' weights) on the held-back human rows of ``rows``, exactly as a finished run fits its own, and write its
    ``tagger.json``. ``config``: the training config of the taggers it comes from (window, held-back share, grid).

    >>> fit_thresholds(model_dir="soup/final", rows=entfa_train_rows(), config=cfg)  # doctest: +SKIP
    """
    return _finalise(Path(model_dir).expanduser(), _threshold_rows(rows, config.held_back_fraction), config, data_card,
                     step=0, finished=True)


def export_newest_checkpoint(*, rows: Sequence[dict[str, Any]], output_dir: str | Path, config: TaggerTrainConfig = TaggerTrainConfig(),
                             data_card: dict[str, Any] | None = None) -> dict[str, Any]:
    """When the budget ends before the epochs do: the newest checkpoint becomes the tagger (``output_dir/final``),
    marked unfinished with its step, its threshold fitted on the same held-back rows as a finished run's."""
    import shutil

    out = Path(output_dir).expanduser()
    ckpts = sorted((out / "checkpoints").glob("checkpoint-*"), key=lambda p: int(p.name.split("-")[1]))
    if not ckpts:
        raise InputError(f"No checkpoint in {out / 'checkpoints'} to export; train first.")
    check_run_folder(out, config)
    final = out / "final"
    if final.exists():
        shutil.rmtree(final)
    final.mkdir(parents=True)
    for f in ckpts[-1].iterdir():
        if f.is_file() and not f.name.startswith(("optimizer", "scheduler", "rng_state", "trainer_state", "training_args")):
            shutil.copy2(f, final / f.name)
    held_rows = _threshold_rows(rows, config.held_back_fraction)
    step = int(ckpts[-1].name.split("-")[1])
    return {"finished": False, "step": step, **_finalise(final, held_rows, config, data_card, step=step, finished=False)}

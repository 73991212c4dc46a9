"""Training data for the embedded NLI model: staged NLI sets + synthetic pairs.

Labels are integers: 0 entailment, 1 neutral, 2 contradiction (the model's
three outputs) and 3 ``not_entailment`` — a 2-way target that the loss turns
into ``-log(p_neutral + p_contradiction)``.

The held-back slice is chosen by a hash of premise+hypothesis, so it does not
depend on the seed, the weights or the caps: a pair is either always held
out or never.

>>> LABEL_IDS["not_entailment"], is_held_out("A man sleeps.", "A person rests.", fraction=0.0)
(3, False)
"""

from __future__ import annotations

import gzip
import hashlib
import json
import random
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from veridic.errors import DataFormatError, InputError
from veridic.io import iter_jsonl
from veridic.io._paths import default_data_dir

__all__ = [
    "LABELS",
    "LABEL_IDS",
    "NOT_ENTAILMENT",
    "Example",
    "read_nli_file",
    "is_held_out",
    "select_rows",
    "nli_set_path",
    "default_data_dir",
]

LABELS: tuple[str, str, str] = ("entailment", "neutral", "contradiction")
NOT_ENTAILMENT = 3
LABEL_IDS: dict[str, int] = {"entailment": 0, "neutral": 1, "contradiction": 2, "not_entailment": NOT_ENTAILMENT}


@dataclass(frozen=True)
class Example:
    """One training pair. ``source`` names the set (``mnli``, ``synth:negation``...);
    ``augmented`` marks a dialogue-phrase copy."""

    premise: str
    hypothesis: str
    label: int
    source: str
    augmented: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {"premise": self.premise, "hypothesis": self.hypothesis, "label": self.label,
                "source": self.source, "augmented": self.augmented}


def _hash_unit(*parts: str) -> float:
    digest = hashlib.sha1("\x1f".join(parts).encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def is_held_out(premise: str, hypothesis: str, *, fraction: float) -> bool:
    """Deterministic membership of the held-back slice (same answer on every run)."""
    return _hash_unit(premise.strip(), hypothesis.strip()) < fraction


def read_nli_file(path: str | Path, *, two_way: bool = False) -> list[dict[str, Any]]:
    """Rows of a staged ``<set>.jsonl.gz`` with ``label_id`` added.

    ``two_way=True`` maps neutral and contradiction to ``not_entailment``
    (for sets whose 3-way labels are not trustworthy).
    """
    path = Path(path)
    if not path.exists():
        raise InputError(f"NLI data file not found: {path}")
    rows: list[dict[str, Any]] = []
    for i, row in iter_jsonl(path):
        for key in ("premise", "hypothesis", "label"):
            if not isinstance(row.get(key), str) or not row[key].strip():
                raise DataFormatError(f"field {key!r} must be a non-empty string, got {row.get(key)!r}",
                                      path=str(path), row=i)
        label = row["label"]
        if label not in LABEL_IDS:
            raise DataFormatError(f"unknown label {label!r}; expected one of {sorted(LABEL_IDS)}",
                                  path=str(path), row=i)
        lid = LABEL_IDS[label]
        if two_way and lid in (1, 2):
            lid = NOT_ENTAILMENT
        row["label_id"] = lid
        rows.append(row)
    return rows


def select_rows(rows: Sequence[Any], *, weight: float, cap: int | None, rng: random.Random) -> list[Any]:
    """``round(weight * len(rows))`` rows (whole copies when weight > 1), at most ``cap``.

    Sampling without replacement inside each copy, so every row is seen about
    ``weight`` times.
    """
    if weight < 0:
        raise InputError(f"weight must be >= 0, got {weight}")
    target = int(round(weight * len(rows)))
    if cap is not None:
        target = min(target, cap)
    out: list[Any] = []
    while len(out) < target:
        idx = list(range(len(rows)))
        rng.shuffle(idx)
        out.extend(rows[i] for i in idx[: target - len(out)])
    return out


def count_by(examples: Iterable[Example], key: str = "source") -> dict[str, int]:
    c: Counter[str] = Counter(getattr(e, key) for e in examples)
    return dict(sorted(c.items()))


def label_counts(examples: Iterable[Example]) -> dict[str, int]:
    names = {0: "entailment", 1: "neutral", 2: "contradiction", 3: "not_entailment"}
    c: Counter[str] = Counter(names[e.label] for e in examples)
    return dict(sorted(c.items()))


def write_jsonl_gz(path: Path, rows: Iterable[Mapping[str, Any]]) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    with gzip.open(tmp, "wt", encoding="utf-8") as fh:
        for r in rows:
            fh.write(json.dumps(r, ensure_ascii=False) + "\n")
    tmp.replace(path)


def read_jsonl_gz(path: Path) -> list[dict[str, Any]]:
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


# ------------------------------------------------------------------ mixtures
def nli_set_path(nli_dir: Path, name: str, spec: Any) -> Path:
    """The file of NLI set ``name``: ``<nli_dir>/<name>.jsonl.gz``, or the spec's ``file``. An absolute or ``~``
    path names a derived file outside the shared data (``veridic synth windows``); a relative one lies in ``nli_dir``.

    >>> from types import SimpleNamespace
    >>> nli_set_path(Path("data/nli"), "fnc1", SimpleNamespace(file=None)).as_posix()
    'data/nli/fnc1.jsonl.gz'
    >>> nli_set_path(Path("data/nli"), "fnc1", SimpleNamespace(file="/corpora/w.jsonl.gz")).as_posix()
    '/corpora/w.jsonl.gz'
    """
    return nli_dir / Path(spec.file).expanduser() if spec.file else nli_dir / f"{name}.jsonl.gz"


def build_real_examples(data_cfg: Any, augment_cfg: Any, *, data_dir: Path, seed: int
                        ) -> tuple[list[Example], list[Example], dict[str, Any]]:
    """Training and held-back examples from the staged NLI sets of ``data_cfg.sets``.

    Returns ``(train, held_out, stats)``. Held-back rows are removed *before*
    weighting, so no copy of them is ever trained on. Augmented copies (paper
    004) are added for ``augment_cfg.fraction`` of the selected real rows.
    """
    from veridic.train._augment import augment_hypothesis, load_phrases, pick_phrase

    nli_dir = data_dir / data_cfg.nli_dir
    train: list[Example] = []
    held: list[Example] = []
    stats: dict[str, Any] = {}
    for name, spec in sorted(data_cfg.sets.items()):
        if spec.weight == 0 and spec.tier not in data_cfg.held_out_tiers:
            continue
        path = nli_set_path(nli_dir, name, spec)
        rows = read_nli_file(path, two_way=spec.two_way)
        n_all = len(rows)
        for field_name, bad in spec.exclude.items():
            rows = [r for r in rows if str(r.get(field_name)) not in set(map(str, bad))]
        n_excluded = n_all - len(rows)
        rows_held = []
        if spec.tier in data_cfg.held_out_tiers and data_cfg.held_out_fraction > 0:
            keep = []
            for r in rows:
                (rows_held if is_held_out(r["premise"], r["hypothesis"], fraction=data_cfg.held_out_fraction)
                 else keep).append(r)
            rows = keep
        held.extend(Example(r["premise"], r["hypothesis"], r["label_id"], name) for r in rows_held)
        n_long = sum(len(r["premise"]) > data_cfg.max_premise_chars for r in rows)
        rows = [r for r in rows if len(r["premise"]) <= data_cfg.max_premise_chars]
        rng = random.Random(f"{seed}:{name}")
        chosen = select_rows(rows, weight=spec.weight, cap=spec.cap, rng=rng)
        train.extend(Example(r["premise"], r["hypothesis"], r["label_id"], name) for r in chosen)
        stats[name] = {"tier": spec.tier, "rows": n_all, "excluded": n_excluded, "held_out": len(rows_held),
                       "too_long": n_long, "trained": len(chosen)}

    n_aug = 0
    if augment_cfg.fraction > 0 and train:
        phrases_path = data_dir / augment_cfg.phrases if augment_cfg.phrases else None
        phrases = load_phrases(phrases_path if phrases_path is None or phrases_path.exists() else None)
        rng = random.Random(f"{seed}:augment")
        idx = sorted(rng.sample(range(len(train)), int(round(augment_cfg.fraction * len(train)))))
        aug = [Example(train[i].premise, augment_hypothesis(train[i].hypothesis, pick_phrase(phrases, rng)),
                       train[i].label, train[i].source, augmented=True) for i in idx]
        n_aug = len(aug)
        train.extend(aug)
    stats["_augmented"] = n_aug
    return train, held, stats


def build_synthetic_pairs(syn_cfg: Any, *, data_dir: Path, cache: Path | None,
                          progress: bool = True) -> tuple[list[dict[str, Any]], bool]:
    """Generate (or load from ``cache``) the synthetic pairs as dicts.

    The cache's first line records a hash of the synthetic config; a cache
    made from a different config is rebuilt rather than silently reused.
    Returns ``(pairs, from_cache)``.
    """
    import dataclasses

    key = hashlib.sha256(json.dumps(dataclasses.asdict(syn_cfg), sort_keys=True, default=str).encode()).hexdigest()[:16]
    if cache is not None and cache.exists():
        rows = read_jsonl_gz(cache)
        if rows and rows[0].get("_synthetic_config_hash") == key:
            return rows[1:], True
    import spacy

    from veridic.synth._perturb import Document, SyntheticGenerator
    from veridic.synth._sources import nli_premise_documents, pomo_documents, pomo_modifier_pairs

    docs: list[Document] = []
    for src in syn_cfg.sources:
        path = data_dir / src.path
        if src.type == "pomo":
            d = pomo_documents(path)
        else:
            d = nli_premise_documents(path, min_sentences=src.min_sentences, max_sentences=src.max_sentences)
        rng = random.Random(f"{syn_cfg.seed}:{src.path}")
        rng.shuffle(d)
        if src.max_docs is not None:
            d = d[: src.max_docs]
        docs.extend(d)
    # Interleave sources so each kind draws from all of them, then cap the parse work.
    rng = random.Random(f"{syn_cfg.seed}:docs")
    rng.shuffle(docs)
    if syn_cfg.max_sentences is not None:
        kept, n = [], 0
        for d in docs:
            if n >= syn_cfg.max_sentences:
                break
            kept.append(d)
            n += len(d.sentences)
        docs = kept
    nlp = spacy.load(syn_cfg.spacy_model)
    gen = SyntheticGenerator(nlp=nlp, seed=syn_cfg.seed, batch_size=256)
    pairs = gen.generate(documents=docs, counts=dict(syn_cfg.counts), progress=progress)
    if syn_cfg.pomo_modifier is not None and (syn_cfg.pomo_modifier.neutral or syn_cfg.pomo_modifier.entailment):
        pairs += pomo_modifier_pairs(data_dir / syn_cfg.pomo_modifier.path, n_neutral=syn_cfg.pomo_modifier.neutral,
                                     n_entail=syn_cfg.pomo_modifier.entailment, seed=syn_cfg.seed)
    rows = [p.to_dict() for p in pairs]
    if cache is not None:
        cache.parent.mkdir(parents=True, exist_ok=True)
        write_jsonl_gz(cache, [{"_synthetic_config_hash": key, "n": len(rows)}] + rows)
    return rows, False


def synthetic_examples(rows: Sequence[Mapping[str, Any]], *, held_out_fraction: float
                       ) -> tuple[list[Example], list[Example]]:
    """Split synthetic dicts into train / held-back :class:`Example` s (by hash)."""
    train, held = [], []
    for r in rows:
        ex = Example(r["premise"], r["hypothesis"], LABEL_IDS[r["label"]], "synth:" + r["kind"])
        (held if is_held_out(ex.premise, ex.hypothesis, fraction=held_out_fraction) else train).append(ex)
    return train, held


def run_path(name: str | Path, out_dir: Path) -> Path:
    """A config path: absolute (or ``~/...``) as given, else relative to the run folder (where corpora live)."""
    p = Path(name).expanduser()
    return p if p.is_absolute() else out_dir / p


def build_contrast_examples(contrast_cfg: Any, *, data_dir: Path, out_dir: Path, progress: bool = True
                            ) -> tuple[list[Example], dict[str, list[Example]], dict[str, Any]]:
    """Training examples from the contrast corpus, and held-back examples per rule.

    The corpus is read from ``contrast_cfg.corpus`` (relative to ``out_dir``) and built
    there first when missing. Training rows are capped per rule by ``per_rule``;
    held-back rows are labelled 2-way (entailment vs ``not_entailment``), since each
    rule's question is only "does the premise still support it?".
    """
    from veridic.synth._corpus import build_contrast_corpus, read_contrast_corpus

    path = run_path(contrast_cfg.corpus, out_dir)
    built = False
    if not path.exists():
        import spacy

        nlp = spacy.load(contrast_cfg.spacy_model)
        build_contrast_corpus(data_dir=data_dir, out=path, nlp=nlp, seed=contrast_cfg.seed,
                              sources=contrast_cfg.sources or None, held_back_fraction=contrast_cfg.held_back_fraction,
                              max_sentences=contrast_cfg.max_sentences, n_process=contrast_cfg.n_process,
                              progress=progress)
        built = True
    rows = read_contrast_corpus(path)
    for extra in contrast_cfg.extra_corpora:
        p = run_path(extra, out_dir)
        if not p.exists():
            raise InputError(f"contrast.extra_corpora: {p} does not exist; build it with `veridic synth frames -o {p}`")
        rows.extend(read_contrast_corpus(p))
    reverse = set(contrast_cfg.reverse_rules)
    by_rule: dict[str, list[Mapping[str, Any]]] = {}
    held: dict[str, list[Example]] = {}
    for r in rows:
        if r["split"] == "train":
            by_rule.setdefault(r["rule"], []).append(r)
            # Only single-sentence premises: a longer premise exchanged into the hypothesis
            # would state more than the rewrite, and the label would no longer hold.
            if r["rule"] in reverse and r["premise"].strip() == str(r.get("original", "")).strip():
                by_rule[r["rule"]].append({**r, "premise": r["hypothesis"], "hypothesis": r["premise"]})
        else:
            lab = 0 if r["label"] == "entailment" else NOT_ENTAILMENT
            held.setdefault(r["rule"], []).append(Example(r["premise"], r["hypothesis"], lab, "contrast:" + r["rule"]))
    train: list[Example] = []
    stats: dict[str, Any] = {"corpus": str(path), "built": built, "rules": {}}
    for rule in sorted(by_rule):
        cand = by_rule[rule]
        cap = contrast_cfg.per_rule.get(rule, len(cand)) if contrast_cfg.per_rule else len(cand)
        rng = random.Random(f"{contrast_cfg.seed}:contrast:{rule}")
        chosen = rng.sample(cand, min(cap, len(cand)))
        train.extend(Example(r["premise"], r["hypothesis"], LABEL_IDS[r["label"]], "contrast:" + rule) for r in chosen)
        stats["rules"][rule] = {"available": len(cand), "trained": len(chosen), "held_back": len(held.get(rule, []))}
    for rule, exs in held.items():
        rng = random.Random(f"{contrast_cfg.seed}:contrast-held:{rule}")
        exs.sort(key=lambda e: (e.premise, e.hypothesis))
        rng.shuffle(exs)
        held[rule] = exs[: contrast_cfg.eval_per_rule]
    return train, held, stats

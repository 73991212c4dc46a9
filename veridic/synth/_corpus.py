"""The contrast corpus: :mod:`veridic.synth._contrast` rules over non-benchmark text.

Sources (all under the data dir, none of them a faithfulness benchmark): PoMo sentence
triples (CNN/DM/NYT), FNC-1 article bodies, ConTRoL passages, and the premises of
MultiNLI, SNLI, LingNLI, ANLI and the Wikipedia part of semiauto_nli (its ``*_news`` part
quotes LDC-licensed Gigaword text and is left out). A document is held back, for every
rule at once, by a hash of its id: held-back pairs are never trained on and feed the
per-rule held-back accuracy and the hand-checked contrast suite.

>>> sorted(DEFAULT_SOURCES)[:3]
['anli', 'control', 'fnc1']
"""

from __future__ import annotations

import gzip
import json
import random
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from veridic.errors import InputError
from veridic.io import iter_jsonl
from veridic.synth._perturb import Document, _stable_int

__all__ = ["DEFAULT_SOURCES", "HELD_BACK_FRACTION", "contrast_documents", "build_contrast_corpus", "is_held_back_doc"]

#: share of documents held back (for every rule at once) unless a caller says otherwise
HELD_BACK_FRACTION = 0.03

#: name -> (kind, path relative to the data dir, options)
DEFAULT_SOURCES: dict[str, tuple[str, str, dict[str, Any]]] = {
    "pomo_valid": ("pomo", "pomo/valid.pm.zip", {}),
    "pomo_test": ("pomo", "pomo/test.pm.zip", {}),
    "fnc1": ("bodies", "nli/fnc1.jsonl.gz", {"min_sentences": 2, "max_sentences": 20}),
    "control": ("bodies", "nli/control.jsonl.gz", {"min_sentences": 2, "max_sentences": 14}),
    "mnli": ("premises", "nli/mnli.jsonl.gz", {}),
    "snli": ("premises", "nli/snli.jsonl.gz", {}),
    "lingnli": ("premises", "nli/lingnli.jsonl.gz", {}),
    "anli": ("premises", "nli/anli.jsonl.gz", {}),
    "semiauto_wiki": ("premises", "nli/semiauto_nli.jsonl.gz", {"subset_suffix": "_wiki"}),
}


def is_held_back_doc(doc_id: str, *, fraction: float) -> bool:
    """Deterministic: a document is in the held-back slice on every run or on none."""
    return (_stable_int("contrast-held-back", doc_id) % 10_000) < fraction * 10_000


def _premise_documents(path: Path, name: str, *, subset_suffix: str | None = None) -> list[Document]:
    from veridic.synth._sources import split_document

    seen: set[str] = set()
    docs: list[Document] = []
    for i, row in iter_jsonl(path):
        if subset_suffix and not str(row.get("subset", "")).endswith(subset_suffix):
            continue
        prem = str(row.get("premise") or "").strip()
        if not prem or prem in seen or len(prem) > 1500:
            continue
        seen.add(prem)
        sents = split_document(prem)
        if sents:
            docs.append(Document(doc_id=f"{name}:{i}", sentences=sents[:12]))
    return docs


def contrast_documents(*, data_dir: str | Path, sources: Sequence[str] | None = None) -> list[Document]:
    """Documents of the named sources (default: all of :data:`DEFAULT_SOURCES`)."""
    from veridic.synth._sources import nli_premise_documents, pomo_documents

    data_dir = Path(data_dir)
    docs: list[Document] = []
    for name in sources or sorted(DEFAULT_SOURCES):
        if name not in DEFAULT_SOURCES:
            raise InputError(f"unknown contrast source {name!r}; expected one of {sorted(DEFAULT_SOURCES)}")
        kind, rel, opts = DEFAULT_SOURCES[name]
        path = data_dir / rel
        if not path.exists():
            raise InputError(f"contrast source {name!r} needs {path}, which does not exist; "
                             f"point --data (or $VERIDIC_DATA) at the shared data folder")
        if kind == "pomo":
            d = [Document(doc_id=f"{name}:{x.doc_id}", sentences=x.sentences) for x in pomo_documents(path)]
        elif kind == "bodies":
            d = nli_premise_documents(path, min_sentences=opts["min_sentences"], max_sentences=opts["max_sentences"])
        else:
            d = _premise_documents(path, name, subset_suffix=opts.get("subset_suffix"))
        docs.extend(d)
    return docs


def build_contrast_corpus(*, data_dir: str | Path, out: str | Path, nlp: Any, seed: int = 13,
                          sources: Sequence[str] | None = None, held_back_fraction: float = HELD_BACK_FRACTION,
                          max_sentences: int | None = None, n_process: int = 1,
                          progress: bool = True) -> dict[str, Any]:
    """Generate every rule over the sources and write ``out`` (JSON lines, gzip), atomically.

    Each row is a :class:`~veridic.synth._contrast.ContrastPair` dict plus ``split``
    (``train`` or ``held_back``). Returns counts per rule and split (also the data card's
    numbers).
    """
    from veridic.synth._contrast import ContrastGenerator

    docs = contrast_documents(data_dir=data_dir, sources=sources)
    rng = random.Random(f"{seed}:contrast-docs")
    rng.shuffle(docs)
    if max_sentences is not None:
        kept, n = [], 0
        for d in docs:
            if n >= max_sentences:
                break
            kept.append(d)
            n += len(d.sentences)
        docs = kept
    gen = ContrastGenerator(nlp=nlp, seed=seed, n_process=n_process)
    pairs = gen.generate(documents=docs, progress=progress)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    counts: Counter[tuple[str, str]] = Counter()
    with gzip.open(tmp, "wt", encoding="utf-8") as fh:
        for p in pairs:
            split = "held_back" if is_held_back_doc(p.doc_id, fraction=held_back_fraction) else "train"
            counts[(p.rule, split)] += 1
            fh.write(json.dumps({**p.to_dict(), "split": split}, ensure_ascii=False) + "\n")
    tmp.replace(out)
    summary: dict[str, Any] = {"documents": len(docs), "sentences": sum(len(d.sentences) for d in docs),
                               "pairs": len(pairs), "by_rule": {}}
    for (rule, split), n in sorted(counts.items()):
        summary["by_rule"].setdefault(rule, {})[split] = n
    return summary


def read_contrast_corpus(path: str | Path, *, split: str | None = None) -> list[Mapping[str, Any]]:
    """Rows of a corpus written by :func:`build_contrast_corpus` (optionally one split)."""
    path = Path(path)
    if not path.exists():
        raise InputError(f"contrast corpus not found: {path}; build it with `veridic synth contrast --out {path}`")
    rows = []
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        for line in fh:
            r = json.loads(line)
            if split is None or r.get("split") == split:
                rows.append(r)
    return rows

"""Source documents for synthetic pairs: news-like text that is not benchmark data.

* :func:`pomo_documents` — PoMo rows (CNN/DM/NYT sentences with their previous
  and next sentence), PTB-detokenised; 3-sentence documents.
* :func:`nli_premise_documents` — long premises of a staged NLI set (FNC-1
  news bodies, ConTRoL passages...), split into sentences, deduplicated.
* :func:`pomo_modifier_pairs` — PoMo's own edit: the sentence *with* its
  post-modifier is not supported by a premise that only has the sentence
  *without* it (extrinsic addition -> neutral), and the reverse is entailed.

>>> _detok("He said -LRB- twice -RRB- that `` it 's fine '' .")
'He said (twice) that "it\\'s fine".'
"""

from __future__ import annotations

import io
import random
import re
import zipfile
from pathlib import Path

from veridic.errors import DataFormatError, InputError
from veridic.io import iter_jsonl
from veridic.synth._perturb import Document, SyntheticPair

__all__ = ["pomo_documents", "nli_premise_documents", "pomo_modifier_pairs", "split_document"]

_DETOK = [
    (re.compile(r"-LRB-\s*"), "("), (re.compile(r"\s*-RRB-"), ")"),
    (re.compile(r"-LSB-\s*"), "["), (re.compile(r"\s*-RSB-"), "]"),
    (re.compile(r"``\s*"), '"'), (re.compile(r"\s*''"), '"'),
    (re.compile(r"\s+([,.;:!?%)\]])"), r"\1"), (re.compile(r"([($\[])\s+"), r"\1"),
    (re.compile(r"\s+('s|'re|'ve|'ll|'d|'m|n't)\b", re.I), r"\1"),
    (re.compile(r"\s{2,}"), " "),
]


def _detok(text: str) -> str:
    for pat, rep in _DETOK:
        text = pat.sub(rep, text)
    return text.strip()


def _pomo_rows(path: Path):
    with zipfile.ZipFile(path) as zf:
        name = next(n for n in zf.namelist() if n.endswith(".pm"))
        with zf.open(name) as fh:
            for i, line in enumerate(io.TextIOWrapper(fh, encoding="utf-8"), 1):
                cols = line.rstrip("\n").split("\t")
                if len(cols) < 9:
                    raise DataFormatError(f"expected 9 tab-separated PoMo columns, got {len(cols)}",
                                          path=str(path), row=i)
                yield i, cols


def pomo_documents(path: str | Path) -> list[Document]:
    """3-sentence documents (previous, sentence with post-modifier, next)."""
    path = Path(path)
    docs = []
    for i, cols in _pomo_rows(path):
        sents = [_detok(c) for c in (cols[5], cols[3], cols[6]) if c.strip() and c.strip() != "<n/a>"]
        docs.append(Document(doc_id=f"pomo:{path.stem}:{i}", sentences=sents))
    return docs


def pomo_modifier_pairs(path: str | Path, *, n_neutral: int, n_entail: int, seed: int) -> list[SyntheticPair]:
    """Post-modifier addition (neutral, span = the modifier) and removal (entailment)."""
    path = Path(path)
    rows = list(_pomo_rows(path))
    rng = random.Random(seed)
    rng.shuffle(rows)
    out: list[SyntheticPair] = []
    n_made = {"add_modifier": 0, "drop_modifier": 0}
    for i, cols in rows:
        without, entity, pm, with_pm = (_detok(c) for c in cols[:4])
        prev, nxt = (_detok(c) if c.strip() != "<n/a>" else "" for c in (cols[5], cols[6]))
        k = with_pm.find(pm)
        if k < 0 or not pm or pm.lower() in (prev + " " + nxt).lower():
            continue
        want_add = n_made["add_modifier"] < n_neutral
        want_drop = n_made["drop_modifier"] < n_entail
        if not (want_add or want_drop):
            break
        kind = "add_modifier" if want_add and (not want_drop or rng.random() < 0.5) else "drop_modifier"
        # Context sentences are kept at random so premises are 1-3 sentences long.
        before = prev if rng.random() < 0.6 else ""
        after = nxt if rng.random() < 0.6 else ""
        if kind == "add_modifier":
            prem = " ".join(x for x in (before, without, after) if x)
            out.append(SyntheticPair(prem, with_pm, "neutral", kind, (k, k + len(pm)), without,
                                     f"pomo:{path.stem}:{i}", {"entity": entity}))
        else:
            prem = " ".join(x for x in (before, with_pm, after) if x)
            out.append(SyntheticPair(prem, without, "entailment", kind, None, with_pm,
                                     f"pomo:{path.stem}:{i}", {"entity": entity}))
        n_made[kind] += 1
    return out


def split_document(text: str) -> list[str]:
    """Sentences of a document, via veridic's blingfire splitter (what the scorer uses)."""
    from veridic.text._sentences import split_sentences

    sents: list[str] = []
    for para in re.split(r"\n\s*\n|\n", text):
        para = para.strip()
        if para:
            sents.extend(s.text.strip() for s in split_sentences(para) if s.text.strip())
    return sents


def nli_premise_documents(path: str | Path, *, min_sentences: int = 4, max_sentences: int = 20,
                          max_docs: int | None = None) -> list[Document]:
    """Unique long premises of a staged NLI set, split into sentences.

    Only the first ``max_sentences`` sentences are kept: windows come from
    anywhere in them, and news leads are the most summary-like part.
    """
    path = Path(path)
    if not path.exists():
        raise InputError(f"NLI file for synthetic documents not found: {path}")
    seen: set[str] = set()
    docs: list[Document] = []
    for i, row in iter_jsonl(path):
        prem = row.get("premise")
        if not isinstance(prem, str):
            raise DataFormatError("row has no string 'premise'", path=str(path), row=i)
        key = prem.strip()[:500]
        if key in seen:
            continue
        seen.add(key)
        sents = split_document(prem)
        if len(sents) < min_sentences:
            continue
        docs.append(Document(doc_id=f"{path.name.split('.')[0]}:{i}", sentences=sents[:max_sentences]))
        if max_docs is not None and len(docs) >= max_docs:
            break
    return docs

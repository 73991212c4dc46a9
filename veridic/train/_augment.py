"""Dialogue-phrase augmentation of paper 004 ("With a Little Push", §2.1, App. A).

A randomly chosen phrase that must not change the verdict ("I think ",
"I love that! "...) is prefixed to the hypothesis and the label is kept.
The model is trained on the originals *plus* the augmented copies.

>>> augment_hypothesis("The cat sat on the mat.", "I think ")
'I think the cat sat on the mat.'
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from pathlib import Path

from veridic.errors import DataFormatError, InputError

__all__ = ["load_phrases", "augment_hypothesis", "DEFAULT_PHRASES"]

# The ten phrases of julmaxi/with_a_little_push@23b5e8c, used when the
# shared phrases.json is not at hand (e.g. in unit tests).
DEFAULT_PHRASES: tuple[str, ...] = (
    "I am not sure, but ", "I am not sure but I do know that ", "I believe ",
    "I do not have information on this but ", "I think ", "Here is what I know: ",
    "yep. Also ", "Sure! Here is what I know: ", "I love that! ", "I like that! ",
)


def load_phrases(path: str | Path | None) -> tuple[str, ...]:
    """Phrases from ``phrases.json`` (``{"phrases": [[phrase, category], ...]}``)."""
    if path is None:
        return DEFAULT_PHRASES
    path = Path(path)
    if not path.exists():
        raise InputError(f"augmentation phrase file not found: {path}")
    data = json.loads(path.read_text(encoding="utf-8"))
    items = data.get("phrases") if isinstance(data, dict) else None
    if not isinstance(items, list) or not items:
        raise DataFormatError("expected an object with a non-empty 'phrases' list", path=str(path))
    phrases = []
    for i, item in enumerate(items, 1):
        phrase = item[0] if isinstance(item, list) and item else item
        if not isinstance(phrase, str) or not phrase:
            raise DataFormatError(f"phrase must be a non-empty string, got {item!r}", path=str(path), row=i)
        phrases.append(phrase)
    return tuple(phrases)


def augment_hypothesis(hypothesis: str, phrase: str) -> str:
    """``phrase + hypothesis[0].lower() + hypothesis[1:]`` exactly as in paper 004.

    (This lower-cases a leading proper noun too, as the original code does.)
    """
    if not hypothesis:
        raise InputError("cannot augment an empty hypothesis")
    return phrase + hypothesis[0].lower() + hypothesis[1:]


def pick_phrase(phrases: Sequence[str], rng: random.Random) -> str:
    return phrases[rng.randrange(len(phrases))]

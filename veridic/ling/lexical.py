"""Cheap lexical and entity signals of unfaithfulness, used beside the NLI model.

Claim words absent from the source are the commonest symptom of an invented
fact; numbers and names absent from the source are the sharpest. These
features cost microseconds and are combined with NLI scores by
:class:`veridic.nli._hybrid.HybridScorer`.

>>> lexical_features(source="Alice paid 30 dollars in Paris.", claim="Alice paid 40 dollars in Rome.")["novel_numbers"]
1.0
"""

from __future__ import annotations

import re
from collections.abc import Sequence

__all__ = ["lexical_features", "FEATURE_NAMES", "content_words", "rank_by_content_overlap", "tokens"]

_TOKEN = re.compile(r"\w+(?:[.,']\w+)*", re.UNICODE)
_NUMBER = re.compile(r"^\d+(?:[.,]\d+)*$")
_STOP = frozenset(
    """a about above after again against all also am an and any are as at be because been before being below between both
    but by can could did do does doing down during each few for from further had has have having he her here hers herself
    him himself his how i if in into is it its itself just me more most my myself no nor not now of off on once only or
    other our ours ourselves out over own same she should so some such than that the their theirs them themselves then
    there these they this those through to too under until up very was we were what when where which while who whom why
    will with would you your yours yourself yourselves s t said says say""".split()
)

FEATURE_NAMES = ("overlap_unigram", "overlap_bigram", "novel_numbers", "novel_names")

_NUM_WORDS = {
    "zero": "0", "one": "1", "two": "2", "three": "3", "four": "4", "five": "5", "six": "6", "seven": "7", "eight": "8",
    "nine": "9", "ten": "10", "eleven": "11", "twelve": "12", "twenty": "20", "hundred": "100", "thousand": "1000",
}


def tokens(text: str) -> list[str]:
    """Lower-cased word tokens (numbers with inner separators stay whole: 3.5, 1,000)."""
    return [t.lower() for t in _TOKEN.findall(text)]


def content_words(text: str) -> list[str]:
    return [t for t in tokens(text) if t not in _STOP]


def rank_by_content_overlap(claim: str, window_words: Sequence[set[str]]) -> list[int]:
    """Window indices, best first, by the share of the claim's content words each window's ``content_words`` set
    holds; the earlier window first on ties. The scorer keeps its best windows by this rule, and training data cut
    from long premises uses the same rule (``veridic synth windows``).

    >>> rank_by_content_overlap("The home side won.", [{"match", "sunday"}, {"home", "side", "won", "2-0"}])
    [1, 0]
    """
    cw = set(content_words(claim))
    overlap = [len(cw & words) / (len(cw) or 1) for words in window_words]
    return sorted(range(len(overlap)), key=lambda i: (-overlap[i], i))


def _norm_number(t: str) -> str:
    return _NUM_WORDS.get(t, t.replace(",", ""))


def _names(text: str) -> list[str]:
    # Capitalised words not at a sentence start: a spaCy-free proxy for names.
    out = []
    prev = "."
    for m in _TOKEN.finditer(text):
        w = m.group(0)
        before = text[max(0, m.start() - 2) : m.start()].strip()
        sentence_start = prev in (".", "!", "?", "") or before.endswith((".", "!", "?", "\n", '"', ":"))
        if w[:1].isupper() and not sentence_start and w.lower() not in _STOP:
            out.append(w.lower())
        prev = before[-1:] if before else prev
    return out


def lexical_features(*, source: str, claim: str) -> dict[str, float]:
    """Overlap and novelty features of ``claim`` against ``source`` (all in [0, 1]).

    - ``overlap_unigram``: share of the claim's content words found in the source;
    - ``overlap_bigram``: share of the claim's token bigrams found in the source;
    - ``novel_numbers``: share of the claim's numbers absent from the source (0 if none);
    - ``novel_names``: share of the claim's capitalised non-initial words absent from the source (0 if none).
    """
    src_tokens = tokens(source)
    src_set = set(src_tokens)
    cw = content_words(claim) or tokens(claim)
    uni = sum(w in src_set for w in cw) / len(cw) if cw else 1.0
    ct = tokens(claim)
    src_bi = set(zip(src_tokens, src_tokens[1:]))
    cb = list(zip(ct, ct[1:]))
    bi = sum(b in src_bi for b in cb) / len(cb) if cb else uni
    src_nums = {_norm_number(t) for t in src_tokens if _NUMBER.match(t) or t in _NUM_WORDS}
    nums = [_norm_number(t) for t in ct if _NUMBER.match(t)]
    novel_nums = sum(n not in src_nums for n in nums) / len(nums) if nums else 0.0
    names = _names(claim)
    novel_names = sum(n not in src_set for n in names) / len(names) if names else 0.0
    return {"overlap_unigram": uni, "overlap_bigram": bi, "novel_numbers": novel_nums, "novel_names": novel_names}

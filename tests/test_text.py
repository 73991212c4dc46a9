import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from veridic.errors import ConfigError
from veridic.text import chunk_text, sentence_windows, split_sentences

SAMPLE = "Dr. Smith arrived at 5 p.m. on Monday. He was late!\nThe U.S. economy grew 3.5% in 2023.  Café “quoted” ünïcode 🙂 here."


def _offsets(text):
    return [(m.start(), m.end()) for m in re.finditer(r"\w+|[^\w\s]", text)]


@pytest.mark.parametrize("splitter", ["blingfire", "pysbd"])
def test_sentence_offsets_index_the_original_text(splitter):
    sents = split_sentences(SAMPLE, splitter=splitter)
    assert [s.text for s in sents][:2] == ["Dr. Smith arrived at 5 p.m. on Monday.", "He was late!"]
    for s in sents:
        assert SAMPLE[s.start : s.end] == s.text
    assert all(a.end <= b.start for a, b in zip(sents, sents[1:]))


def test_unknown_splitter_suggests_the_right_name():
    with pytest.raises(ConfigError, match="Did you mean 'pysbd'"):
        split_sentences("x", splitter="pysdb")


words = st.text(alphabet="abcdefgh XYZ.,!?é🙂\n", min_size=0, max_size=300)


@settings(max_examples=150, deadline=None)
@given(words)
def test_sentences_round_trip_on_arbitrary_text(text):
    for s in split_sentences(text):
        assert text[s.start : s.end] == s.text
        assert s.text == s.text.strip() and s.text


@settings(max_examples=150, deadline=None)
@given(words, st.integers(min_value=1, max_value=40), st.integers(min_value=0, max_value=2))
def test_chunks_round_trip_respect_budget_and_cover_all_tokens(text, budget, overlap):
    offsets = _offsets(text)
    chunks = chunk_text(text, token_offsets=offsets, max_tokens=budget, overlap_sentences=overlap)
    covered = set()
    for c in chunks:
        assert text[c.start : c.end] == c.text
        inside = [i for i, (a, b) in enumerate(offsets) if a >= c.start and a < c.end]
        assert len(inside) <= budget
        covered.update(inside)
    # Every token that sits inside a sentence ends up in some chunk.
    sent_tokens = {i for s in split_sentences(text) for i, (a, b) in enumerate(offsets) if s.start <= a < s.end}
    assert sent_tokens <= covered


def test_chunks_overlap_by_one_sentence():
    text = "One two three. Four five six. Seven eight nine. Ten eleven twelve."
    chunks = chunk_text(text, token_offsets=_offsets(text), max_tokens=8, overlap_sentences=1)
    assert [c.text for c in chunks] == [
        "One two three. Four five six.",
        "Four five six. Seven eight nine.",
        "Seven eight nine. Ten eleven twelve.",
    ]


def test_overlong_sentence_is_cut_at_token_boundaries():
    text = "a b c d e f g h i j."
    chunks = chunk_text(text, token_offsets=_offsets(text), max_tokens=4, overlap_sentences=0)
    assert [c.text for c in chunks] == ["a b c d", "e f g h", "i j."]


def test_sentence_windows():
    text = "Ann ran. Bob sat. Cid ate. Dan slept."
    sents = split_sentences(text)
    assert [w.text for w in sentence_windows(text, sentences=sents, size=2)] == ["Ann ran. Bob sat.", "Bob sat. Cid ate.", "Cid ate. Dan slept."]
    assert [w.text for w in sentence_windows(text, sentences=sents[:1], size=2)] == ["Ann ran."]
    assert [w.text for w in sentence_windows(text, sentences=sents, size=3, stride=2)] == ["Ann ran. Bob sat. Cid ate.", "Bob sat. Cid ate. Dan slept."]
    with pytest.raises(ConfigError):
        sentence_windows(text, sentences=sents, size=0)


def test_tokenised_lower_case_text_is_split_at_spaced_stops():
    text = "tom ballard plans to climb k2 . alison hargreaves , 32 , died in 1995 . now her son , 26 , plans to go ."
    sents = split_sentences(text)
    assert [s.text for s in sents] == ["tom ballard plans to climb k2 .", "alison hargreaves , 32 , died in 1995 .", "now her son , 26 , plans to go ."]
    assert [s.text for s in split_sentences("Mr. Smith paid $3.5 million. He left.")] == ["Mr. Smith paid $3.5 million.", "He left."]

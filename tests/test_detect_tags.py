"""Taxonomy, FAVA tag format (writer + parser, round trip) and edit application."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from veridic.detect import ERROR_TYPES, LABEL_MAPS, TAXONOMY, HallucinationSpan, apply_edits, map_label, parse_tagged, to_tagged
from veridic.detect._benchmark import sentence_types, token_f1, typed_f1
from veridic.errors import InputError, RegistryError


def _span(p, start, end, type_, suggestion=None):
    return HallucinationSpan(start=start, end=end, text=p[start:end], type=type_, confidence=None, evidence=None, suggestion=suggestion)


def test_taxonomy_has_the_six_fava_types_with_table13_definitions():
    assert ERROR_TYPES == ("entity", "relation", "contradictory", "invented", "subjective", "unverifiable")
    assert {t for t, i in TAXONOMY.items() if i.edit == "replace"} == {"entity", "relation"}
    assert "usually 1-3 words" in TAXONOMY["entity"].definition
    assert "personal or private" in TAXONOMY["unverifiable"].definition


def test_label_maps_point_into_the_taxonomy():
    for dataset, table in LABEL_MAPS.items():
        for label, t in table.items():
            assert t is None or t in ERROR_TYPES, (dataset, label)
    assert map_label(dataset="frank", label="RelE") == "relation"
    assert map_label(dataset="frank", label="OutE") == "unverifiable"
    assert map_label(dataset="frank", label="GramE") is None
    assert map_label(dataset="faithbench", label="Unwanted.Extrinsic") == "unverifiable"
    assert map_label(dataset="wice", label="not_supported") == "unverifiable"


def test_map_label_errors_suggest_names():
    with pytest.raises(RegistryError, match="Did you mean 'frank'"):
        map_label(dataset="frnak", label="EntE")
    with pytest.raises(RegistryError, match="Did you mean 'EntE'"):
        map_label(dataset="frank", label="EntEE")


FAVA_EDITED = (
    "It was written by <entity><mark>Lester del Rey</mark><delete>Andy Weir</delete></entity> and published in 1952. "
    "<invented>The novel inspired the famous Broadway musical \"Stranded Stars\".</invented> The novel tells a story "
    "of being stranded on the <entity><mark>Red</mark><delete>Purple</delete></entity> Planet. "
    "<subjective>I wish the novel had more exciting plot twists.</subjective>"
)


def test_parse_the_papers_table13_example():
    parsed = parse_tagged(FAVA_EDITED)
    assert parsed.original.startswith("It was written by Andy Weir and published in 1952.")
    assert "Purple Planet" in parsed.original and "<" not in parsed.original
    assert parsed.edited == ("It was written by Lester del Rey and published in 1952. The novel tells a story of being "
                             "stranded on the Red Planet.")
    assert [(s.type, s.text, s.suggestion) for s in parsed.spans] == [
        ("entity", "Andy Weir", "Lester del Rey"),
        ("invented", 'The novel inspired the famous Broadway musical "Stranded Stars".', None),
        ("entity", "Purple", "Red"),
        ("subjective", "I wish the novel had more exciting plot twists.", None),
    ]
    for s in parsed.spans:
        assert parsed.original[s.start : s.end] == s.text
    assert to_tagged(passage=parsed.original, spans=parsed.spans) == FAVA_EDITED


def test_parser_accepts_fava_output_variants():
    p = parse_tagged("The 3DO <<<entity>>><<<delete>>>Multiplayer<<</delete>>><<<mark>>>Singleplayer<<</mark>>><<</entity>>> port. "
                     "<sentence>It won.</sentence>")
    assert p.original == "The 3DO Multiplayer port. It won."
    assert [(s.type, s.suggestion) for s in p.spans] == [("entity", "Singleplayer"), ("contradictory", None)]
    assert p.edited == "The 3DO Singleplayer port."


def test_delete_only_relation_edit_round_trips():
    p = "Messi is not the captain."
    spans = [_span(p, 9, 12, "relation", "")]
    tagged = to_tagged(passage=p, spans=spans)
    assert tagged == "Messi is <relation><delete>not</delete></relation> the captain."
    back = parse_tagged(tagged)
    assert back.edited == "Messi is the captain." == apply_edits(passage=p, spans=spans)
    assert back.spans[0].suggestion == ""


@pytest.mark.parametrize("bad, where", [
    ("a <entity>b", "never closed"),
    ("a </invented> b", "does not close"),
    ("<entity>x <invented>y</invented></entity>", "opens inside"),
    ("a <mark>b</mark>", "not inside"),
    ("<invented></invented>", "wraps no original text"),
])
def test_malformed_tags_raise_or_return_none(bad, where):
    with pytest.raises(InputError, match=where):
        parse_tagged(bad)
    assert parse_tagged(bad, strict=False) is None


def test_writer_refuses_tag_like_text_and_overlaps():
    with pytest.raises(InputError, match="tag-like"):
        to_tagged(passage="see <entity> here", spans=[])
    p = "one two three"
    with pytest.raises(InputError, match="overlap"):
        to_tagged(passage=p, spans=[_span(p, 0, 7, "entity", "x"), _span(p, 4, 13, "invented")])
    with pytest.raises(InputError, match="holds"):
        apply_edits(passage=p, spans=[HallucinationSpan(start=0, end=3, text="two", type="entity", confidence=None, evidence=None, suggestion="x")])


def test_deleting_sentences_leaves_clean_whitespace():
    p = "A is true. B is made up. C is true. D is an opinion."
    spans = [_span(p, 11, 24, "invented"), _span(p, 36, 52, "subjective")]
    assert apply_edits(passage=p, spans=spans) == "A is true. C is true."


def test_an_edit_range_removes_the_phrase_or_sentence_holding_the_marked_words_once():
    p = "Ek founded Spotify. Its servers were hosted by Uppsala Data. It grew fast in Sweden."
    sent = (p.index("Its"), p.index(" It grew"))
    marks = [HallucinationSpan(start=a, end=a + len(w), text=w, type="invented", confidence=0.5, evidence=None,
                               suggestion=None, edit_range=sent)
             for w in ("Its servers", "hosted", "Uppsala Data") for a in [p.index(w)]]
    # Deleting the marks alone would leave "were by."; the sentence goes once, however many marks it holds.
    assert apply_edits(passage=p, spans=marks) == "Ek founded Spotify. It grew fast in Sweden."
    # A replacement inside a removed range goes with it; one outside stays.
    fix = _span(p, p.index("Sweden"), p.index("Sweden") + 6, "entity", "Norway")
    inside = _span(p, p.index("Uppsala"), p.index("Uppsala") + 7, "entity", "Stockholm")
    assert apply_edits(passage=p, spans=marks[:2] + [inside, fix]) == "Ek founded Spotify. It grew fast in Norway."
    # A replacing edit ignores its edit_range: only deletions widen.
    rep = HallucinationSpan(start=0, end=2, text="Ek", type="entity", confidence=None, evidence=None, suggestion="Lorentzon",
                            edit_range=(0, len("Ek founded Spotify.")))
    assert apply_edits(passage=p, spans=[rep]).startswith("Lorentzon founded Spotify.")
    with pytest.raises(InputError, match="must contain the span"):
        HallucinationSpan(start=5, end=9, text="x", type="invented", confidence=None, evidence=None, suggestion=None, edit_range=(6, 9))
    with pytest.raises(InputError, match="past the end"):
        apply_edits(passage="Short.", spans=[HallucinationSpan(start=0, end=5, text="Short", type="invented", confidence=None,
                                                                evidence=None, suggestion=None, edit_range=(0, 40))])


_text = st.text(alphabet=st.sampled_from(list("abcdefghij .,;'\"-\n0123456789XYZ")), min_size=1, max_size=80)


@st.composite
def _passage_and_spans(draw):
    p = draw(_text)
    cuts = sorted(set(draw(st.lists(st.integers(0, len(p)), max_size=8))))
    spans, i = [], 0
    while i + 1 < len(cuts):
        a, b = cuts[i], cuts[i + 1]
        i += 2
        if b <= a:
            continue
        t = draw(st.sampled_from(ERROR_TYPES))
        sugg = draw(st.one_of(st.none(), _text.filter(lambda s: True))) if TAXONOMY[t].edit == "replace" else None
        spans.append(_span(p, a, b, t, sugg))
    return p, spans


@settings(max_examples=200, deadline=None)
@given(_passage_and_spans())
def test_tag_round_trip(ps):
    p, spans = ps
    tagged = to_tagged(passage=p, spans=spans)
    back = parse_tagged(tagged)
    assert back.original == p
    assert [(s.start, s.end, s.type, s.suggestion) for s in back.spans] == [(s.start, s.end, s.type, s.suggestion) for s in spans]
    assert back.edited == apply_edits(passage=p, spans=spans)


def test_typed_f1_follows_eq_1_to_3():
    pred = [[{"entity"}, {"invented"}, set()], [{"relation"}, set()]]
    gold = [[{"entity"}, {"unverifiable"}, set()], [{"relation"}, {"entity"}]]
    r = typed_f1(predictions=pred, references=gold)
    assert r["per_type"]["entity"]["precision"] == 1.0 and r["per_type"]["entity"]["recall"] == 0.5
    assert r["per_type"]["invented"]["precision"] == 0.0 and r["per_type"]["invented"]["recall"] is None
    assert r["macro_types"] == ["entity", "relation", "unverifiable"]
    assert r["macro_f1"] == pytest.approx((2 / 3 + 1.0 + 0.0) / 3)
    assert r["binary"]["precision"] == 1.0 and r["binary"]["recall"] == 0.75
    with pytest.raises(InputError, match="split both the same way"):
        typed_f1(predictions=[[set()]], references=[[set(), set()]])


def test_sentence_types_and_token_f1():
    p = "Ann met Bob. They ate. It was great."
    spans = [_span(p, 8, 11, "entity", "Carl"), _span(p, 22, 35, "subjective")]
    assert sentence_types(passage=p, spans=spans) == [{"entity"}, set(), {"subjective"}]
    r = token_f1(predictions=[[True, False, True]], references=[[True, True, False]])
    assert r["precision"] == 0.5 and r["recall"] == 0.5 and r["f1"] == 0.5

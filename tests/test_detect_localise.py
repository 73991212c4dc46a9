"""Phrase localisation by NLI deletion (veridic.detect._localise and the detector's ``phrase_spans``).

The NLI verdicts are scripted (tests/fakes.py): a hypothesis holding the scripted phrase is neutral,
every other one entailed, so a test says which phrase the evidence lacks and checks that exactly that
phrase — not the whole sentence, not a supported phrase beside it — is marked.
"""

from __future__ import annotations

import pytest
from fakes import ENTAIL, NEUTRAL, FakeNLIBackend

from veridic import ScorerConfig, build_scorer
from veridic.detect import HallucinationDetector
from veridic.detect._localise import Deletion, choose, deletable_phrases, without

spacy = pytest.importorskip("spacy")


def _det(nlp, script, **kw):
    return HallucinationDetector(scorer=build_scorer(ScorerConfig(method="e-c", structure_check=False), backend=FakeNLIBackend(script, max_length=256)), nlp=nlp, **kw)


def _phrases(nlp, text):
    sent = nlp(text)[:]
    return {sent.doc[a:b].text: without(sent, a, b) for a, b in deletable_phrases(sent)}


def test_a_date_adjunct_is_deletable_whole_and_its_remainder_is_a_sentence(nlp):
    got = _phrases(nlp, "Brian Pendleton died on 16 May 2001.")
    assert got == {"on 16 May 2001": "Brian Pendleton died."}  # never "16" or "May" alone, never the name
    assert _phrases(nlp, 'In 2009, Angelou wrote "We Had Him".')["In 2009"] == 'Angelou wrote "We Had Him".'


def test_conjuncts_take_their_coordinator_and_names_and_hyphenated_words_stay_whole(nlp):
    got = _phrases(nlp, "Mowlam's step-children were Henrietta and Freddie.")
    assert got["and Freddie"] == "Mowlam's step-children were Henrietta."
    assert "step" not in got and "Freddie" not in got  # "-children" would not be a sentence
    got = _phrases(nlp, "He appeared in the documentary about American DJ and producer Steve Aoki.")
    assert "American" in got and "Steve" not in got and "Aoki" not in got


def test_a_last_conjunct_leaves_the_sentence_its_final_stop(nlp):
    # spaCy hangs the final "." on the last conjunct here; deleting the conjunct must not take it along.
    got = _phrases(nlp, "YouTube was sold in 2006 for 1.65 billion dollars, and the deal closed in November.")
    assert got[", and the deal closed in November"] == "YouTube was sold in 2006 for 1.65 billion dollars."
    assert all(not k.endswith(".") for k in got)


def test_negations_and_the_root_are_never_deletable(nlp):
    sent = nlp("He did not win the Nobel Prize in 2001.")[:]
    spans = [sent.doc[a:b].text for a, b in deletable_phrases(sent)]
    assert spans == ["in 2001"]
    assert all(not (a <= sent.root.i < b) for a, b in deletable_phrases(sent))


def test_the_only_predicate_of_be_is_not_deletable_but_its_clause_is(nlp):
    # "the manager was on holiday" -> "the manager was." is no sentence; the reason clause may go whole.
    got = _phrases(nlp, "The meeting was moved to Thursday because the manager was on holiday.")
    assert "on holiday" not in got
    assert got["because the manager was on holiday"] == "The meeting was moved to Thursday."
    assert "in Paris" not in _phrases(nlp, "The office is in Paris.")
    # An adjunct beside a predicate stays deletable: "was ill" still says something without "in May".
    assert _phrases(nlp, "She was ill in May.")["in May"] == "She was ill."
    assert _phrases(nlp, "The tower was built for the Olympics.")["for the Olympics"] == "The tower was built."


def test_a_verbs_direction_particle_is_not_deletable(nlp):
    # "Sales went 3 percent" says neither direction: deleting the particle says another thing, not less.
    got = _phrases(nlp, "Sales went down 3 percent in the third quarter.")
    assert "down" not in got and got["in the third quarter"] == "Sales went down 3 percent."
    assert "quickly" in _phrases(nlp, "Sales fell quickly in the third quarter.")  # a manner adverb still may go


def test_choose_keeps_only_entailed_remainders_smallest_first():
    d = [Deletion(0, 20, e=0.9, n=0.05, c=0.05), Deletion(8, 20, e=0.7, n=0.2, c=0.1),
         Deletion(25, 30, e=0.6, n=0.3, c=0.1), Deletion(32, 40, e=0.45, n=0.5, c=0.05)]
    assert [(x.start, x.end) for x in choose(d, e=0.3)] == [(8, 20), (25, 30)]
    assert choose([Deletion(0, 5, e=0.4, n=0.5, c=0.1)], e=0.3) == []  # nothing restores entailment
    # Overlapping (not nested) phrases: the larger gain wins, the other is skipped.
    assert [(x.start, x.end) for x in choose([Deletion(0, 6, e=0.6, n=0.3, c=0.1), Deletion(4, 9, e=0.8, n=0.1, c=0.1)], e=0.2)] == [(4, 9)]


def test_phrase_spans_mark_the_phrase_whose_deletion_restores_entailment(nlp):
    ev = "Brian Pendleton was a guitarist. Brian Pendleton died in Kent. He played with The Pretty Things."
    p = "Brian Pendleton died on 16 May 2001."
    r = _det(nlp, {"16 May": NEUTRAL, "": ENTAIL}, phrase_spans=True).detect(passage=p, evidence=ev)
    assert [(s.type, s.text) for s in r.spans] == [("unverifiable", "on 16 May 2001")]
    assert r.spans[0].reason.endswith("deletion-entailed") and r.edited == "Brian Pendleton died."
    whole = _det(nlp, {"16 May": NEUTRAL, "": ENTAIL}, phrase_spans=False).detect(passage=p, evidence=ev)
    assert [s.text for s in whole.spans] == [p]  # sentence spans with the option off


def test_a_sentence_paraphrase_safety_let_through_gets_its_unsupported_phrase(nlp):
    ev = "Harriet Coleman joined the band in 2010. She played the violin and the keyboard for years."
    p = "In 2010 Harriet Coleman joined the band on violin and keyboard."
    # Every word is in the evidence, so the sentence-level checks let the neutral sentence through ...
    assert _det(nlp, {"keyboard": NEUTRAL, "": ENTAIL}, phrase_spans=False).detect(passage=p, evidence=ev).spans == ()
    # ... and the deletion check finds the one conjunct whose removal makes it entailed (not "on violin and keyboard").
    r = _det(nlp, {"keyboard": NEUTRAL, "": ENTAIL}, phrase_spans=True).detect(passage=p, evidence=ev)
    assert [(s.type, s.text) for s in r.spans] == [("unverifiable", "and keyboard")]
    # An entailed sentence is never taken apart.
    assert _det(nlp, {"": ENTAIL}, phrase_spans=True).detect(passage=p, evidence=ev).spans == ()
    # phrase_scope="flagged" searches only flagged sentences: no passage the default passes gets a span ...
    flagged_only = _det(nlp, {"keyboard": NEUTRAL, "": ENTAIL}, phrase_spans=True, phrase_scope="flagged")
    assert flagged_only.detect(passage=p, evidence=ev).spans == ()
    # ... while a sentence the default flags is still narrowed to its phrase.
    r = _det(nlp, {"16 May": NEUTRAL, "": ENTAIL}, phrase_spans=True, phrase_scope="flagged").detect(
        passage="Brian Pendleton died on 16 May 2001.", evidence="Brian Pendleton was a guitarist. Brian Pendleton died in Kent.")
    assert [s.text for s in r.spans] == ["on 16 May 2001"]


def test_phrase_max_e_and_min_gain_limit_only_sentences_no_check_flagged(nlp):
    from veridic.errors import ConfigError

    ev = "Harriet Coleman joined the band in 2010. She played the violin and the keyboard for years."
    p = "In 2010 Harriet Coleman joined the band on violin and keyboard."
    script = {"keyboard": NEUTRAL, "": ENTAIL}  # the let-through sentence has e = 0.1; deleting "and keyboard" gives 0.9

    def spans(**kw):
        return [s.text for s in _det(nlp, script, phrase_spans=True, **kw).detect(passage=p, evidence=ev).spans]

    assert spans(phrase_max_e=0.1) == ["and keyboard"]  # e at the bar: searched
    assert spans(phrase_max_e=0.05) == []               # the NLI only mildly doubts it: left alone
    assert spans(phrase_min_gain=0.75) == ["and keyboard"]
    assert spans(phrase_min_gain=0.85) == []            # a gain of 0.8 is not enough
    # A sentence the checks flag is narrowed whatever the two settings say.
    r = _det(nlp, {"16 May": NEUTRAL, "": ENTAIL}, phrase_spans=True, phrase_max_e=0.0, phrase_min_gain=1.0).detect(
        passage="Brian Pendleton died on 16 May 2001.", evidence="Brian Pendleton was a guitarist. Brian Pendleton died in Kent.")
    assert [s.text for s in r.spans] == ["on 16 May 2001"]
    with pytest.raises(ConfigError, match=r"phrase_min_gain must lie in \[0, 1\]; got 1.5"):
        _det(nlp, script, phrase_spans=True, phrase_min_gain=1.5)
    det = _det(nlp, script, phrase_spans=True)
    with pytest.raises(ConfigError, match=r"phrase_max_e must lie in \[0, 1\]; got -0.1"):  # set after construction, as bench does
        det.phrase_max_e = -0.1
    with pytest.raises(ConfigError, match=r"strong_support must lie in \[0, 1\]; got 1.2"):  # every probability-scale setting
        det.strong_support = 1.2
    with pytest.raises(ConfigError, match=r"contradiction_threshold must lie in \[0, 1\]; got nan"):
        _det(nlp, script, contradiction_threshold=float("nan"))
    assert (det.phrase_max_e, det.phrase_min_gain) == (0.25, 0.3)  # the defaults tuned on WiCE dev and the contrast suite's correct passages


def test_an_unknown_phrase_scope_is_a_clear_error(nlp):
    from veridic.errors import ConfigError

    with pytest.raises(ConfigError, match="phrase_scope must be one of not-entailed, flagged; got 'all'"):
        _det(nlp, {"": ENTAIL}, phrase_spans=True, phrase_scope="all")
    det = _det(nlp, {"": ENTAIL}, phrase_spans=True)
    with pytest.raises(ConfigError, match="got 'everything'"):  # the bench commands set it after construction
        det.phrase_scope = "everything"
    assert det.phrase_scope == "not-entailed"


def test_other_sentences_and_structural_spans_are_left_alone(nlp):
    ev = "Lionel Messi was born on June 24, 1987, in Rosario. He joined Inter Miami in 2023."
    p = "Messi was born on June 12, 1987. He joined Inter Miami in 2023."
    r = _det(nlp, {"June 12": NEUTRAL, "": ENTAIL}, phrase_spans=True).detect(passage=p, evidence=ev)
    assert [(s.type, s.text, s.suggestion) for s in r.spans] == [("entity", "12", "24")]


def test_deletion_localisation_works_with_the_hybrid_scorer(nlp, tmp_path):
    from veridic.nli._hybrid import HybridWeights

    HybridWeights(features=("ec_min",), mean=(0.0,), scale=(1.0,), coef=(3.0,), intercept=0.0).save(tmp_path / "h.json")
    scorer = build_scorer(ScorerConfig(method="hybrid", hybrid_weights=str(tmp_path / "h.json"), structure_check=False),
                          backend=FakeNLIBackend({"16 May": NEUTRAL, "": ENTAIL}, max_length=256))
    det = HallucinationDetector(scorer=scorer, nlp=nlp, phrase_spans=True)
    r = det.detect(passage="Brian Pendleton died on 16 May 2001.",
                   evidence="Brian Pendleton was a guitarist. Brian Pendleton died in Kent.")
    assert [s.text for s in r.spans] == ["on 16 May 2001"]


def test_the_edit_audit_checks_each_sentence_as_edited_and_deletions_against_constituents(nlp):
    from types import SimpleNamespace

    from veridic.detect._benchmark import audit_edits
    from veridic.detect._result import HallucinationSpan

    class Judge:  # entails a sentence only when it holds a figure the evidence gives
        def score(self, *, sources, claims):
            return [SimpleNamespace(e=0.9, n=0.05, c=0.05) if "200" in c or "400" in c else SimpleNamespace(e=0.1, n=0.2, c=0.7) for c in claims]

    passage = "Acme hired 500 engineers in Ohio. Zeta hired 300 people. The firm grew."

    def span(text, suggestion, edit_range=None, kind="entity"):
        a = passage.index(text)
        return HallucinationSpan(a, a + len(text), text, kind, 0.9, None, suggestion, edit_range=edit_range)

    grew = passage.index("The firm")
    res = SimpleNamespace(passage=passage, spans=(
        span("500", "200"), span("in Ohio", ""),          # together they leave "Acme hired 200 engineers.": entailed, a whole phrase
        span("Zeta", None),                                # a phrase error without a fix: no edit
        span("300", "301"),                                # leaves "Zeta hired 301 people.": not entailed
        span("people", ""),                                # the object alone: not an optional constituent
        span("grew", None, edit_range=(grew, len(passage)), kind="invented")))  # deletes its sentence
    rep = audit_edits(detector=SimpleNamespace(nlp=nlp, scorer=Judge()), evidences=["Acme hired 200 engineers. Zeta hired 400 people."],
                      results=[res])
    assert (rep["edits"], rep["replacements"], rep["replacements_entailed"]) == (5, 2, 1)
    assert (rep["deletions"], rep["deletions_whole_constituent"], rep["passing"]) == (3, 2, 3)
    assert {f["check"].split(" (")[0] for f in rep["failed"]} == {"not entailed", "not a whole constituent"}
    assert any(f["sentence"].startswith("Zeta hired 301") for f in rep["failed"]) and any("'people'" in f["edit"] for f in rep["failed"])

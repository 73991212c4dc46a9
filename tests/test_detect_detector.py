"""The hallucination detector on the paper's Table 1 examples, with a scripted fake NLI backend.

The fake fixes only the NLI verdict of each sentence; entity, invented and
subjective typing must come from NER, alignment and the lexicon, and the
contradiction from the NLI verdict.
"""

from __future__ import annotations

import pytest
from fakes import CONTRA, ENTAIL, NEUTRAL, FakeNLIBackend

from veridic import ScorerConfig, build_scorer
from veridic.detect import HallucinationDetector, LexiconSubjectivity, parse_tagged
from veridic.errors import ConfigError, InputError
from veridic.ling._align import minimal_replacement, normalise_value

spacy = pytest.importorskip("spacy")



def ScriptedBackend(script=None):
    """The shared fake with a longer window, as the detector sees whole biographies."""
    return FakeNLIBackend(script, max_length=256)


EVIDENCE = (
    "Lionel Andrés Messi (born June 24, 1987) is an Argentine professional footballer who plays as a forward for "
    "Inter Miami and captains the Argentina national team. Messi was born on June 24, 1987, in Rosario, Argentina. "
    "He is the captain of the Argentina national football team. Messi joined Paris Saint-Germain in 2021. "
    "Messi won the Ballon d'Or a record eight times."
)
PASSAGE = (
    "Messi was born on June 12, 1987. Messi is known for his famous airplane kick technique. "
    "Messi is the best soccer player in the world. Messi has yet to be captain of Argentina. "
    "Messi joined Paris Saint-Germain in 2021."
)
SCRIPT = {"June 12": CONTRA, "airplane": NEUTRAL, "best soccer": NEUTRAL, "yet to be": CONTRA, "joined Paris": ENTAIL}


def _detector(nlp, script=SCRIPT, **kw):
    # These tests check the sentence-level rules; phrase localisation has its own (test_detect_localise).
    kw.setdefault("phrase_spans", False)
    return HallucinationDetector(scorer=build_scorer(ScorerConfig(method="e-c", structure_check=False), backend=ScriptedBackend(script)), nlp=nlp, **kw)


def test_table1_examples_are_found_typed_and_fixed(nlp):
    r = _detector(nlp).detect(passage=PASSAGE, evidence=EVIDENCE)
    got = [(s.type, s.text) for s in r.spans]
    assert got == [
        ("entity", "12"),
        ("invented", "Messi is known for his famous airplane kick technique."),
        ("subjective", "Messi is the best soccer player in the world."),
        ("contradictory", "Messi has yet to be captain of Argentina."),
    ]
    ent = r.spans[0]
    assert ent.suggestion == "24"
    assert ent.evidence is not None and EVIDENCE[ent.evidence.start : ent.evidence.end] == ent.evidence.text
    assert "June 24, 1987" in ent.evidence.text
    assert r.edited == "Messi was born on June 24, 1987. Messi joined Paris Saint-Germain in 2021."
    assert r.tagged.startswith("Messi was born on June <entity><mark>24</mark><delete>12</delete></entity>, 1987. <invented>")
    for s in r.spans:
        assert PASSAGE[s.start : s.end] == s.text
        assert 0.0 <= s.confidence <= 1.0
        assert s.evidence is None or EVIDENCE[s.evidence.start : s.evidence.end] == s.evidence.text
    parsed = parse_tagged(r.tagged)
    assert parsed.original == PASSAGE and parsed.edited == r.edited
    assert len(r.sentences) == 5


def test_relation_errors_get_the_evidence_wording(nlp):
    ev = "The company hired 200 engineers in 2023. Messi joined Paris Saint-Germain in 2021. The museum is open on Sundays."
    p = "The company fired 200 engineers in 2023. Messi left Paris Saint-Germain in 2021. The museum is not open on Sundays."
    r = _detector(nlp, script={"fired": CONTRA, "left Paris": CONTRA, "not open": CONTRA}).detect(passage=p, evidence=ev)
    assert [(s.type, s.text, s.suggestion, s.reason) for s in r.spans] == [
        # v2: the predicate-argument check finds both (same subject and object, reversed predicate).
        ("relation", "fired", "hired", "structure-reversal"),
        ("relation", "left", "joined", "structure-reversal"),
        # v2: a negated claim is contradicted as a whole (FAVA Table 1 types "has yet to be captain" so).
        ("contradictory", "The museum is not open on Sundays.", None, "polarity-clash:not"),
    ]
    assert r.edited == "The company hired 200 engineers in 2023. Messi joined Paris Saint-Germain in 2021."


def test_supported_passage_has_no_spans_and_is_unchanged(nlp):
    p = "Messi joined Paris Saint-Germain in 2021."
    r = _detector(nlp, script={"joined": ENTAIL}).detect(passage=p, evidence=EVIDENCE)
    assert r.spans == () and r.edited == p and r.tagged == p


def test_unverifiable_when_nothing_is_invented_or_subjective(nlp):
    p = "In his free time, Messi enjoys singing songs for his family."
    r = _detector(nlp, script={"free time": NEUTRAL}).detect(passage=p, evidence=EVIDENCE)
    assert [s.type for s in r.spans] == ["unverifiable"]
    assert r.edited == ""


def test_detection_is_deterministic_and_batched(nlp):
    det = _detector(nlp)
    a = det.detect(passage=PASSAGE, evidence=EVIDENCE)
    many = det.detect_many(passages=[PASSAGE, PASSAGE], evidences=[EVIDENCE, EVIDENCE])
    assert a == many[0] == many[1]
    # Per detect_many: one NLI call for the passages, one batched call for the sentences their fixes leave
    # (a fix is offered only when that sentence is entailed), whatever the batch.
    assert len(det.scorer.backend.calls) == 4 and any(s.suggestion for s in a.spans)
    # Phrase mode (the default) adds one batched call for every deletion of every passage, whatever the batch.
    det = _detector(nlp, phrase_spans=True)
    a = det.detect(passage=PASSAGE, evidence=EVIDENCE)
    calls_one = len(det.scorer.backend.calls)
    many = det.detect_many(passages=[PASSAGE, PASSAGE], evidences=[EVIDENCE, EVIDENCE])
    assert a == many[0] == many[1] and a.spans
    assert len(det.scorer.backend.calls) == 2 * calls_one and calls_one == 3


def test_input_and_config_errors_are_clear(nlp):
    det = _detector(nlp)
    with pytest.raises(InputError, match="no retriever"):
        det.detect(passage="Messi plays football.")
    with pytest.raises(InputError, match="empty"):
        det.detect(passage="  ", evidence=EVIDENCE)
    with pytest.raises(InputError, match="pair up"):
        det.detect_many(passages=["a b c."], evidences=[EVIDENCE, EVIDENCE])
    with pytest.raises(InputError, match="tag-like"):
        det.detect(passage="Messi <entity>plays</entity>.", evidence=EVIDENCE)
    with pytest.raises(ConfigError, match="sentence-level"):
        HallucinationDetector(scorer=build_scorer(ScorerConfig(method="e-c", granularity="document", structure_check=False), backend=ScriptedBackend()), nlp=nlp)
    with pytest.raises(ConfigError, match="ner"):
        HallucinationDetector(scorer=build_scorer(ScorerConfig(method="e-c", structure_check=False), backend=ScriptedBackend()), nlp=spacy.blank("en"))
    with pytest.raises(ConfigError, match="min_alignment"):
        _detector(nlp, min_alignment=2.0)


def test_alignment_helpers():
    assert normalise_value("12,000", "CARDINAL") == normalise_value("twelve thousand", "CARDINAL") == "12000"
    assert minimal_replacement("June 12, 1987", "June 24, 1987") == (5, 7, "24")
    assert minimal_replacement("Andy Weir", "Lester del Rey") == (0, 9, "Lester del Rey")


def test_subjectivity_lexicon():
    lex = LexiconSubjectivity()
    assert lex.score("I wish the novel had more exciting and thrilling plot twists.").subjective
    assert lex.score("The game is a masterpiece that revolutionized the arcade industry.").subjective
    assert not lex.score("Tokyo is the largest city in the world.").subjective
    assert not lex.score("The album was a best-selling record and won Best Album.").subjective
    assert not lex.score("The famous bridge opened in 1937.").subjective


WEAK_ENTAIL = [0.55, 0.25, 0.2]  # what the shipped model gives the three Table 1 sentences below


def test_opinion_polarity_and_unknown_terms_override_weak_nli_support(nlp):
    # A small NLI model "entails" these from topical overlap; the lexical rules must still fire.
    script = {"June 12": CONTRA, "airplane": WEAK_ENTAIL, "best soccer": WEAK_ENTAIL, "yet to be": WEAK_ENTAIL,
              "joined Paris": ENTAIL}
    r = _detector(nlp, script=script).detect(passage=PASSAGE, evidence=EVIDENCE)
    got = [(s.type, s.reason.split(":")[0]) for s in r.spans]
    assert got == [("entity", "entity-mismatch"), ("invented", "unknown-entity"), ("subjective", "subjective-lexicon"),
                   ("contradictory", "polarity-clash")]
    clash = r.spans[-1]
    assert clash.reason == "polarity-clash:yet to"
    assert "captain" in clash.evidence.text and EVIDENCE[clash.evidence.start : clash.evidence.end] == clash.evidence.text


def test_strong_support_and_evidence_backed_cues_are_left_alone(nlp):
    evidence = EVIDENCE + " Many consider Messi the best soccer player in the world."
    script = {"June 12": CONTRA, "airplane": ENTAIL, "best soccer": WEAK_ENTAIL, "yet to be": WEAK_ENTAIL,
              "joined Paris": ENTAIL}
    r = _detector(nlp, script=script).detect(passage=PASSAGE, evidence=evidence)
    types = {s.text[:20]: s.type for s in r.spans}
    assert "Messi is known for h" not in types  # strong entailment (0.9) is trusted
    assert "Messi is the best so" not in types  # the evidence itself uses the cue words
    assert types.get("Messi has yet to be ") == "contradictory"


def test_polarity_needs_an_aligned_evidence_sentence(nlp):
    script = {"yet to": WEAK_ENTAIL}
    r = _detector(nlp, script=script).detect(passage="Messi has yet to win the Olympic marathon.", evidence=EVIDENCE)
    assert [s.type for s in r.spans if s.reason.startswith("polarity")] == []


def test_plain_negation_in_a_supported_sentence_is_contradictory(nlp):
    # v1 patched the "not" as a relation error; v2 types a negated claim as FAVA types "Messi has yet to
    # be captain" (paper 002, Table 1): the whole sentence is contradicted and deleted.
    script = {"is not the captain": WEAK_ENTAIL}
    r = _detector(nlp, script=script).detect(passage="Messi is not the captain of the Argentina national football team.",
                                             evidence=EVIDENCE)
    assert [(s.type, s.reason) for s in r.spans] == [("contradictory", "polarity-clash:not")]
    assert r.edited == ""


@pytest.mark.slow
def test_table1_with_the_embedded_model(nlp):
    from veridic.nli import load_backend
    from veridic.nli._backend import embedded_model_path

    if not (embedded_model_path() / "config.json").exists():
        pytest.skip("the embedded NLI model is not in this checkout")
    det = HallucinationDetector(scorer=build_scorer(ScorerConfig(method="e-c", structure_check=False), backend=load_backend(None, kind="torch")), nlp=nlp, phrase_spans=False)
    r = det.detect(passage=PASSAGE, evidence=EVIDENCE)
    types = {s.text[:20]: s.type for s in r.spans}
    assert types.get("12") == "entity" and "June 24, 1987" in r.edited
    assert types.get("Messi is the best so") == "subjective"
    assert types.get("Messi is known for h") == "invented"
    assert types.get("Messi has yet to be ") == "contradictory"


def test_cli_reports_missing_evidence_without_loading_models():
    typer_testing = pytest.importorskip("typer.testing")
    from veridic.detect.cli import app

    res = typer_testing.CliRunner().invoke(app, ["--passage", "Messi was born in 1987."])
    assert res.exit_code == 2
    assert "--evidence" in res.output

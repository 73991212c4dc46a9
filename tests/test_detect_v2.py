"""Detector v2: predicate–argument checks, whole-mention entity edits, paraphrase safety, any scorer,
bad input, and the contrast suite with its evaluator.

The NLI verdicts are scripted (tests/fakes.py) and mostly *entailing*: the structural checks must
fire from the parse even when a small NLI model is fooled, and must stay silent on converse and
symmetric rewordings.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from fakes import CONTRA, ENTAIL, NEUTRAL, FakeNLIBackend

from veridic.detect import HallucinationDetector
from veridic.detect.benchmark import SUITE_PATH, load_contrast_suite, mark_everything, score_suite
from veridic.errors import InputError
from veridic.nli import NLIScorer

spacy = pytest.importorskip("spacy")




def _det(nlp, script=None, **kw):
    return HallucinationDetector(scorer=NLIScorer(backend=FakeNLIBackend(script or {}, max_length=256)), nlp=nlp, **kw)


def _spans(r):
    return [(s.type, s.text, s.suggestion) for s in r.spans]


def test_swapped_arguments_are_a_relation_error_even_when_the_nli_entails(nlp):
    ev = "YouTube was founded in 2005. In November 2006, Google acquired YouTube for 1.65 billion US dollars."
    p = "In November 2006, YouTube acquired Google for 1.65 billion US dollars."
    r = _det(nlp, {"YouTube acquired": ENTAIL}).detect(passage=p, evidence=ev)
    assert _spans(r) == [("relation", "YouTube acquired Google", "Google acquired YouTube")]
    assert r.spans[0].reason == "structure-swap"
    assert r.edited == "In November 2006, Google acquired YouTube for 1.65 billion US dollars."


def test_passive_converse_and_symmetric_rewordings_are_not_errors(nlp):
    det = _det(nlp, {"": ENTAIL})
    for ev, p in [
        ("In November 2006, Google acquired YouTube.", "YouTube was acquired by Google in November 2006."),
        ("In 2019 Anna bought the farm from Peter.", "In 2019 Peter sold the farm to Anna."),
        ("In 2015 Merkel met Obama in Berlin.", "In 2015 Obama met Merkel in Berlin."),
    ]:
        assert det.detect(passage=p, evidence=ev).spans == (), p


def test_reversed_predicate_gets_the_evidence_verb(nlp):
    ev = "The Treaty of Versailles ended the state of war between Germany and the Allied Powers."
    p = "The Treaty of Versailles started the state of war between Germany and the Allied Powers."
    r = _det(nlp, {"started": ENTAIL}).detect(passage=p, evidence=ev)
    assert _spans(r) == [("relation", "started", "ended")]


def test_wrong_entity_in_a_role_is_fixed_with_the_whole_mention(nlp):
    ev = ("The Martian is a novel written by Andy Weir. The novel was adapted into a 2015 film directed by Ridley Scott "
          "and starring Matt Damon.")
    r = _det(nlp, {"directed": ENTAIL}).detect(passage="The novel was adapted into a 2015 film directed by Matt Damon.",
                                               evidence=ev)
    assert _spans(r) == [("entity", "Matt Damon", "Ridley Scott")]
    ev2 = "In 2021 he joined Paris Saint-Germain. In 2023 he signed with Inter Miami of Major League Soccer."
    r2 = _det(nlp, {"signed": NEUTRAL}).detect(passage="In 2023 he signed with Barcelona of Major League Soccer.", evidence=ev2)
    assert _spans(r2) == [("entity", "Barcelona", "Inter Miami")]
    assert r2.edited == "In 2023 he signed with Inter Miami of Major League Soccer."


def test_date_edits_never_break_the_phrase(nlp):
    from veridic.detect.detector import _safe_replacement

    assert _safe_replacement("June 12, 1987", "June 24, 1987") == (5, 7, "24")
    old = "between 1887 and 1890"
    a, b, new = _safe_replacement(old, "from 1887 to 1889")
    assert (a, b, new) == (0, len(old), "from 1887 to 1889")


def test_paraphrases_are_not_deleted(nlp):
    ev = ("Armstrong became the first person to step onto the lunar surface. The treaty ended the state of war between "
          "Germany and the Allied Powers. The German Democratic Republic (GDR) built the wall.")
    det = _det(nlp, {"": ENTAIL})
    for p in ["Armstrong became the first human to set foot on the lunar surface.",
              "It brought the hostilities between Germany and the Allies to an end.",
              "The GDR constructed the wall."]:
        assert det.detect(passage=p, evidence=ev).spans == (), p


def test_any_scorer_that_returns_sentence_verdicts_works(nlp):
    inner = NLIScorer(backend=FakeNLIBackend({"June 12": CONTRA}, max_length=256))

    class OnlyScore:  # no threshold, no backend, no method: just score()
        def score(self, *, sources, claims, progress=False, **kw):
            return inner.score(sources=sources, claims=claims, progress=progress)

    det = HallucinationDetector(scorer=OnlyScore(), nlp=nlp)
    r = det.detect(passage="Messi was born on June 12, 1987.", evidence="Messi was born on June 24, 1987, in Rosario.")
    assert _spans(r) == [("entity", "12", "24")]


def test_hybrid_scorer_does_not_crash(nlp):
    from veridic.nli.hybrid import HybridScorer, HybridWeights

    w = HybridWeights(features=("ec_min",), mean=(0.0,), scale=(1.0,), coef=(3.0,), intercept=0.0)
    det = HallucinationDetector(scorer=HybridScorer(backend=FakeNLIBackend({"June 12": CONTRA}, max_length=256), weights=w),
                                nlp=nlp)
    r = det.detect(passage="Messi was born on June 12, 1987.", evidence="Messi was born on June 24, 1987, in Rosario.")
    assert _spans(r) == [("entity", "12", "24")]


def test_bad_input_is_a_clear_error_or_an_explicit_cannot_judge(nlp):
    det = _det(nlp, {"": NEUTRAL}, max_passage_chars=200)
    with pytest.raises(InputError, match="empty"):
        det.detect(passage="Messi plays football.", evidence="   ")
    with pytest.raises(InputError, match="max_passage_chars"):
        det.detect(passage="Messi plays football. " * 20, evidence="Messi plays football for Inter Miami.")
    r = det.detect(passage="Messi plays football for Inter Miami.",
                   evidence="Lionel Messi ist ein argentinischer Fußballspieler, der für Inter Miami spielt und "
                            "die Nationalmannschaft Argentiniens anführt.")
    assert not r.judged and "English" in r.note
    assert r.spans == () and r.edited == r.passage
    assert r.to_dict()["judged"] is False


def test_contrast_suite_is_complete_and_scored_right():
    ex = load_contrast_suite()
    assert len(ex) >= 300
    types = {s.type for e in ex for s in e.spans}
    assert types == {"entity", "relation", "contradictory", "invented", "subjective", "unverifiable"}
    correct = [e for e in ex if e.correct]
    assert len(correct) >= 60
    assert all(e.accept for e in ex if not e.correct)
    perfect = score_suite(examples=ex, predicted=[list(e.spans) for e in ex], n_boot=50)
    assert all(v["f1"] == 1.0 for t, v in perfect["per_type"].items())
    assert perfect["false_flags"]["rate"] == 0.0
    assert perfect["edits"]["entity"]["edit_accuracy"] == 1.0 and perfect["edits"]["relation"]["edit_accuracy"] == 1.0
    base = score_suite(examples=ex, predicted=mark_everything(ex), n_boot=0)
    assert base["false_flags"]["rate"] == 1.0 and base["per_type"]["entity"]["recall"] == 1.0
    assert base["per_type"]["entity"]["precision"] < 0.2


def test_committed_suite_matches_its_source():
    root = Path(__file__).resolve().parents[1]
    out = subprocess.run([sys.executable, str(root / "benchmarks" / "build_contrast_suite.py"), "--check"],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
    assert SUITE_PATH.exists()

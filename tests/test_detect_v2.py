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

from veridic import ScorerConfig, build_scorer
from veridic.detect import HallucinationDetector
from veridic.detect._benchmark import SUITE_PATH, load_contrast_suite, mark_everything, score_suite
from veridic.errors import InputError

spacy = pytest.importorskip("spacy")




def _det(nlp, script=None, **kw):
    return HallucinationDetector(scorer=build_scorer(ScorerConfig(method="e-c", structure_check=False), backend=FakeNLIBackend(script or {}, max_length=256)), nlp=nlp, **kw)


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
    from veridic.detect._detector import _safe_replacement

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
    inner = build_scorer(ScorerConfig(method="e-c", structure_check=False), backend=FakeNLIBackend({"June 12": CONTRA}, max_length=256))

    class OnlyScore:  # no threshold, no backend, no method: just score()
        def score(self, *, sources, claims, progress=False, **kw):
            return inner.score(sources=sources, claims=claims, progress=progress)

    det = HallucinationDetector(scorer=OnlyScore(), nlp=nlp)
    r = det.detect(passage="Messi was born on June 12, 1987.", evidence="Messi was born on June 24, 1987, in Rosario.")
    assert _spans(r) == [("entity", "12", "24")]


def test_hybrid_scorer_does_not_crash(nlp, tmp_path):
    from veridic.nli._hybrid import HybridWeights

    HybridWeights(features=("ec_min",), mean=(0.0,), scale=(1.0,), coef=(3.0,), intercept=0.0).save(tmp_path / "h.json")
    scorer = build_scorer(ScorerConfig(method="hybrid", hybrid_weights=str(tmp_path / "h.json"), structure_check=False),
                          backend=FakeNLIBackend({"June 12": CONTRA}, max_length=256))
    det = HallucinationDetector(scorer=scorer, nlp=nlp)
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
    # Evidence with no words at all (a table of numbers, punctuation) is a "cannot judge" too.
    r2 = det.detect(passage="Messi plays football.", evidence="1987 -- 2023 | 12 : 24 ; 0.5")
    assert not r2.judged and "no words" in r2.note and r2.edited == r2.passage


def test_cli_and_html_say_cannot_judge_and_report_bad_input_as_errors(nlp, monkeypatch):
    typer_testing = pytest.importorskip("typer.testing")
    import veridic.detect.cli as cli
    from veridic.detect._html import render_html

    det = _det(nlp, {"": NEUTRAL}, max_passage_chars=200)
    monkeypatch.setattr(cli, "build_detector", lambda **kw: det)
    run = typer_testing.CliRunner().invoke
    german = "Lionel Messi ist ein argentinischer Fußballspieler, der für Inter Miami spielt und die Nationalmannschaft anführt."
    res = run(cli.app, ["--passage", "Messi plays for Inter Miami.", "--evidence", german])
    assert res.exit_code == 0 and "cannot judge" in res.output and "no hallucination found" not in res.output
    page = render_html(result=det.detect(passage="Messi plays for Inter Miami.", evidence=german))
    assert "cannot judge" in page and "no hallucination found" not in page
    for args, msg in ((["--passage", "Messi plays football.", "--evidence", "  "], "empty"),
                      (["--passage", "Messi plays football. " * 20, "--evidence", "Messi plays football."], "max_passage_chars")):
        res = run(cli.app, args)
        assert res.exit_code == 2 and msg in res.output and "Traceback" not in res.output, res.output


def test_directional_reversal_and_names_in_exchanged_roles_are_relation_errors(nlp):
    det = _det(nlp, {"": ENTAIL})
    ev = "RMS Titanic sank in 1912 during her maiden voyage from Southampton to New York City."
    r = det.detect(passage="RMS Titanic sank in 1912 during her maiden voyage from New York City to Southampton.", evidence=ev)
    assert _spans(r) == [("relation", "New York City to Southampton", "Southampton to New York City")]
    # The same route is no error; nor is "to Y from X".
    assert det.detect(passage="In 1912 Titanic sailed from Southampton to New York City.", evidence=ev).spans == ()
    ev2 = "Alexander Fleming discovered penicillin in 1928. Howard Florey and Ernst Chain later developed it into a drug."
    r2 = det.detect(passage="Howard Florey and Ernst Chain discovered penicillin, which Fleming developed into a drug.", evidence=ev2)
    assert [s.type for s in r2.spans] == ["relation"] and r2.spans[0].reason == "structure-swap"
    assert r2.edited.startswith("Fleming discovered penicillin, which Howard Florey and Ernst Chain developed")


def test_contest_outcomes_are_converses_and_agentless_passives_compare_verbs(nlp):
    ev = "In 1997 the IBM computer Deep Blue defeated world chess champion Garry Kasparov in a six-game match."
    det = _det(nlp, {"": ENTAIL})
    assert det.detect(passage="Deep Blue beat Kasparov in a six-game match.", evidence=ev).spans == ()
    r = det.detect(passage="Deep Blue lost the 1997 match to Kasparov.", evidence=ev)
    assert _spans(r) == [("relation", "Deep Blue lost the 1997 match to Kasparov", "Kasparov lost the 1997 match to Deep Blue")]
    # A restatement the NLI calls a contradiction is not reported when every predicate and argument agrees.
    assert _det(nlp, {"": CONTRA}).detect(passage="Deep Blue beat Kasparov in a six-game match.", evidence=ev).spans == ()
    # ... but a negated one is.
    assert _det(nlp, {"": CONTRA}).detect(passage="Deep Blue never beat Kasparov.", evidence=ev).spans != ()
    ev2 = "The glass pyramid was designed by the architect I. M. Pei and completed in 1989."
    r2 = _det(nlp, {"demolished": NEUTRAL, "": ENTAIL}).detect(passage="The glass pyramid was demolished in 1989.", evidence=ev2)
    assert _spans(r2) == [("relation", "demolished", "completed")]
    # ... but only when the evidence's verb is what the NLI misses: here the sentence stays doubted with
    # "completed" put in (the added clause is the unsupported part), so the verb is not blamed.
    p2 = "The glass pyramid was demolished in 1989, and Parisians cheered."
    r2 = _det(nlp, {"Parisians": NEUTRAL, "": ENTAIL}).detect(passage=p2, evidence=ev2)
    assert all(s.type != "relation" for s in r2.spans) and r2.spans
    # Another verb without the same undergoer is a paraphrase candidate, not a relation error.
    ev3 = "Michael Collins flew the command module Columbia alone in lunar orbit."
    r3 = _det(nlp, {"": NEUTRAL}).detect(passage="Collins stayed alone in lunar orbit.", evidence=ev3)
    assert all(s.type != "relation" for s in r3.spans)


def test_it_resolves_to_a_thing_not_to_a_person(nlp):
    ev = "The Sydney Opera House was designed by Jørn Utzon. It was formally opened by Queen Elizabeth II on 20 October 1973."
    p = "The Danish architect Jørn Utzon designed the Sydney Opera House. It was formally closed by Queen Elizabeth II on 20 October 1973."
    r = _det(nlp, {"": ENTAIL}).detect(passage=p, evidence=ev)
    assert _spans(r) == [("relation", "closed", "opened")]


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


def test_phrase_spans_mark_the_uncovered_phrases_of_a_flagged_sentence(nlp):
    from veridic.ling._roles import uncovered_phrases

    ev = ("Media Play News is the voice of the home entertainment industry. It publishes a monthly magazine. "
          "The weather in Paris was mild.")
    p = "Media Play News is the only magazine dedicated to the home entertainment industry and printed on recycled paper."
    doc, edoc = nlp(p), nlp(ev)
    parts = [p[a:b] for a, b in uncovered_phrases(doc[:], edoc, sentences=2)]
    assert parts and all(x not in ("Media Play News", "home entertainment industry") for x in parts)
    assert any("dedicated" in x for x in parts) and any("recycled paper" in x for x in parts)
    assert not any(x == "magazine" for x in parts)  # the second-best evidence sentence holds it
    r = _det(nlp, {"": NEUTRAL}, phrase_spans=True).detect(passage=p, evidence=ev)
    assert r.spans and all(s.end - s.start < len(p) for s in r.spans)
    assert {s.text for s in r.spans} == set(parts)
    # The marks are the uncovered words; each edit removes the smallest optional constituent holding them,
    # so the edited passage is a sentence ("dedicated" alone would leave "the only magazine to the ...").
    assert all(s.edit_range is not None and s.edit_range[0] <= s.start and s.end <= s.edit_range[1] for s in r.spans)
    assert r.edited == "Media Play News is the only magazine."
    whole = _det(nlp, {"": NEUTRAL}, phrase_spans=False).detect(passage=p, evidence=ev)
    assert [(s.start, s.end) for s in whole.spans] == [(0, len(p))]


def test_phrase_spans_remove_the_whole_sentence_when_its_core_is_what_the_evidence_lacks(nlp):
    # The uncovered words include the subject and the verb (no optional constituent holds them): deleting
    # "Its locks", "designed" and the company alone would leave "were by." Each keeps its mark, and the edit
    # removes the sentence once.
    ev = "The Panama Canal opened in 1914. It connects the Atlantic Ocean with the Pacific Ocean."
    p = "The Panama Canal opened in 1914. Its locks were designed by the Orlando Verez Hydraulic Company."
    r = _det(nlp, {"designed": NEUTRAL, "": ENTAIL}, phrase_spans=True).detect(passage=p, evidence=ev)
    sent = (p.index("Its"), len(p))
    assert "designed" in {s.text for s in r.spans} and all(s.end - s.start < sent[1] - sent[0] for s in r.spans)
    assert {s.edit_range for s in r.spans if s.text in ("Its locks", "designed")} == {sent}
    assert r.edited == "The Panama Canal opened in 1914."
    assert r.to_dict()["spans"][0]["edit_range"] in (list(sent), None)

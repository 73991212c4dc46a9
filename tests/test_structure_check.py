"""The NLI scorers' structure check (swapped roles, reversed predicates) and verbatim support."""

import re

import pytest
from fakes import ENTAIL, FakeNLIBackend

from veridic import Resources, ScorerConfig, build_scorer
from veridic.errors import ConfigError
from veridic.nli._structure import StructureCheck

EV = "Google bought YouTube from its founders in 2006."
APPOS = "Angela Moore, a publicist for Claudette King, said later in the day that he was back home resting."


@pytest.fixture(scope="module")
def check(nlp):
    return StructureCheck(nlp=nlp)


# Same words, different meaning: each must be a conflict of the given kind.
@pytest.mark.parametrize("claim,evidence,kind,text", [
    ("YouTube bought Google from its founders in 2006.", EV, "swap", "YouTube bought Google"),
    ("Google was bought by YouTube in 2006.", EV, "swap", "Google was bought by YouTube"),
    ("Google sold YouTube to its founders in 2006.", EV, "swap", "Google sold YouTube to its founders"),
    ("The ferry sailed from Calais to Dover.", "The ferry sailed from Dover to Calais.", "swap", "Calais to Dover"),
    ("The strike ended the war in 1914.", "The strike started the war in 1914.", "reversal", "ended"),
    ("Kasparov defeated Deep Blue in 1997.", "Deep Blue defeated Kasparov in 1997.", "swap", "Kasparov defeated Deep Blue"),
    # A "with" that is not the doer's companion: only the doer and the companion may trade places.
    ("The board replaced the CFO with the CEO in May.", "The board replaced the CEO with the CFO in May.", "swap", "the CFO with the CEO"),
    # A class statement does not: "Animals are dogs" says more than "Dogs are animals".
    ("Animals are dogs.", "Dogs are animals.", "swap", "Animals are dogs"),
    # A relation a noun states between two names, read from an appositive or a copula.
    ("Claudette King was a publicist for Angela Moore.", APPOS, "swap", "Claudette King was a publicist for Angela Moore"),
    ("Claudette King, a publicist for Angela Moore, spoke.", APPOS, "swap", "Claudette King, a publicist for Angela Moore"),
    ("Satyam Computers was the former chairman of Ramalinga Raju.",
     "Ramalinga Raju, the former chairman of Satyam Computers, was fined.", "swap",
     "Satyam Computers was the former chairman of Ramalinga Raju"),
])
def test_exchanged_roles_are_conflicts(check, claim, evidence, kind, text):
    c = check.conflict(claim=claim, evidence=evidence)
    assert c is not None and c.kind == kind and c.text == text
    assert claim[c.start:c.end] == c.text
    assert 0 <= c.evidence_start < c.evidence_end <= len(evidence)


# Different words (or order), same meaning: none may be a conflict.
@pytest.mark.parametrize("claim,evidence", [
    ("YouTube was bought by Google in 2006.", EV),  # passive, roles kept
    ("Its founders sold YouTube to Google in 2006.", EV),  # converse
    ("Kasparov lost to Deep Blue in 1997.", "Deep Blue defeated Kasparov in 1997."),  # converse
    ("Messi met Ronaldo in Lisbon.", "Ronaldo met Messi in Lisbon."),  # symmetric predicate
    ("Hansa Credit merged with Dresden Bank in 2018.", "Dresden Bank merged with Hansa Credit in 2018."),  # comitative "with"
    ("Jordan signed a peace treaty with Israel in 1994.", "Israel signed a peace treaty with Jordan in 1994."),
    ("In 2006 Google bought YouTube.", EV),
    # An identity statement reads both ways when both sides pick out one thing.
    ("France's capital is Paris.", "Paris is the capital of France."),
    ("The winner of the race was Maria Lopez.", "Maria Lopez was the winner of the race."),
    ("Angela Moore was a publicist for Claudette King.", APPOS),  # the appositive's relation, restated
    ("Angela Moore, a publicist for Claudette King, spoke to reporters.", APPOS),
    ("Ana Ruiz, a friend of Tom Hale, spoke.", "Tom Hale, a friend of Ana Ruiz, spoke."),  # a symmetric relation
])
def test_faithful_rewrites_are_not_conflicts(check, claim, evidence):
    assert check.conflict(claim=claim, evidence=evidence) is None


def test_a_pipeline_without_a_parser_is_refused(nlp):
    spacy = pytest.importorskip("spacy")
    with pytest.raises(ConfigError, match="parser"):
        StructureCheck(nlp=spacy.blank("en"))


def test_scorer_overrides_the_model_on_a_swap_and_reports_where(check):
    src = "It was a busy year. " + EV
    claim = "Analysts cheered. YouTube bought Google from its founders in 2006."
    b = FakeNLIBackend()  # word overlap: a swap shares every word, so the model entails it
    plain = build_scorer(ScorerConfig(method="e-c", structure_check=False), backend=b, resources=Resources(structure=check)).score(sources=[src], claims=[claim])[0]
    assert plain.sentences[1].score > 0.8 and plain.sentences[1].conflict is None
    v = build_scorer(ScorerConfig(method="e-c"), backend=b, resources=Resources(structure=check)).score(sources=[src], claims=[claim])[0]
    s = v.sentences[1]
    assert (s.e, s.n, s.c, s.score) == (0.0, 0.0, 1.0, -1.0)
    assert claim[s.conflict.start:s.conflict.end] == "YouTube bought Google"  # offsets into the claim
    assert src[s.conflict.evidence_start:s.conflict.evidence_end].startswith("Google bought YouTube")  # into the source
    assert v.sentences[0].score == plain.sentences[0].score  # the other sentence is the model's
    assert v.score == pytest.approx((plain.sentences[0].score - 1.0) / 2)
    assert v.to_dict()["sentences"][1]["conflict"]["kind"] == "swap"


def test_mc_samples_of_a_vetoed_sentence_agree(check):
    v = build_scorer(ScorerConfig(method="e-c", mc_samples=4), backend=FakeNLIBackend(), resources=Resources(structure=check)).score(
        sources=[EV], claims=["Google was bought by YouTube in 2006."])[0]
    assert v.score == -1.0 and v.uncertainty == 0.0


def test_document_granularity_and_no_checker_leave_the_model_alone(check):
    claim = "YouTube bought Google from its founders in 2006."
    doc = build_scorer(ScorerConfig(method="e-c", granularity="document"), backend=FakeNLIBackend(), resources=Resources(structure=check)).score(sources=[EV], claims=[claim])[0]
    none = build_scorer(ScorerConfig(method="e-c", structure_check=False), backend=FakeNLIBackend()).score(sources=[EV], claims=[claim])[0]
    assert doc.score > 0.8 and none.score > 0.8


def test_a_verbatim_copy_is_entailed_whatever_the_model_says():
    src = "Acme was founded in 2001. Google acquired YouTube in 2006. It rained."
    b = FakeNLIBackend({"Google acquired": [0.01, 0.03, 0.96]})  # the embedded model's real mistake
    v = build_scorer(ScorerConfig(method="e-c", structure_check=False), backend=b).score(sources=[src], claims=["google acquired YouTube, in 2006!  It rained."])[0]
    s = v.sentences[0]
    assert (s.e, s.c, s.score) == (1.0, 0.0, 1.0)
    assert s.evidence.label == "verbatim" and src[s.evidence.start:s.evidence.end] == "Google acquired YouTube in 2006."
    assert v.sentences[1].evidence.label is None  # "It rained." is under three words: the model's verdict
    off = build_scorer(ScorerConfig(method="e-c", verbatim_support=False, structure_check=False), backend=b).score(sources=[src], claims=["Google acquired YouTube in 2006."])[0]
    assert off.score == pytest.approx(0.01 - 0.96)
    near = build_scorer(ScorerConfig(method="e-c", structure_check=False), backend=b).score(sources=[src], claims=["Google acquired YouTube in 2007."])[0]
    assert near.score == pytest.approx(0.01 - 0.96)  # one word differs: not a copy


def test_the_registry_builds_the_check_from_the_config(nlp):
    b = FakeNLIBackend({"": ENTAIL})
    on = build_scorer("e-c", backend=b)
    assert on.structure is not None and on.describe()["structure_check"]["veto_kinds"] == ["reversal", "swap"]
    # the rule code is part of the description, so cached benchmark scores follow a rule change
    assert re.fullmatch(r"[0-9a-f]{16}", on.describe()["structure_check"]["rules"])
    assert build_scorer(ScorerConfig(method="e-c", structure_check=False), backend=b).structure is None
    assert build_scorer("e-c-doc", backend=b).structure is None  # document level: nothing to pair sentences with
    hy = build_scorer("hybrid", backend=b)
    assert hy.nli.structure is on.structure  # loaded once per process
    with pytest.raises(ConfigError, match="structure_check must be true or false"):
        ScorerConfig(structure_check="yes")


def test_cli_flags_reach_the_config():
    from veridic.cli_options import scorer_config

    assert scorer_config(None, structure_check=False).structure_check is False
    assert scorer_config(None, verbatim_support=False).verbatim_support is False
    assert scorer_config(None).structure_check is True


def test_the_detector_reports_the_scorers_conflict_as_a_relation_error(nlp):
    """A conflict the scorer found against its NLI window reaches the detector's spans with its fix, even when the
    detector's own frame check (against the aligned evidence sentences) stays silent."""
    from dataclasses import replace

    from veridic.detect import HallucinationDetector
    from veridic.types import StructureConflict

    ev, p = "Alice met Bob in Paris in 2019.", "Bob met Alice in Paris in 2019."  # symmetric: the frame check is silent

    from veridic.nli import NLIScorer

    class Injecting(NLIScorer):
        def score(self, **kw):
            out = []
            for v in super().score(**kw):
                s = v.sentences[0]
                k = StructureConflict(start=0, end=13, text="Bob met Alice", kind="swap", suggestion="Alice met Bob", evidence_start=0, evidence_end=13)
                out.append(replace(v, sentences=(replace(s, e=0.0, n=0.0, c=1.0, score=-1.0, conflict=k),)))
            return out

    r = HallucinationDetector(scorer=Injecting(ScorerConfig(method="e-c", structure_check=False), FakeNLIBackend({"": ENTAIL}, max_length=256)), nlp=nlp).detect(passage=p, evidence=ev)
    assert [(s.type, s.text, s.suggestion, s.reason) for s in r.spans] == [("relation", "Bob met Alice", "Alice met Bob", "structure-swap")]
    assert r.edited == "Alice met Bob in Paris in 2019."
    plain = HallucinationDetector(scorer=build_scorer(ScorerConfig(method="e-c", structure_check=False), backend=FakeNLIBackend({"": ENTAIL}, max_length=256)), nlp=nlp).detect(passage=p, evidence=ev)
    assert plain.spans == ()


@pytest.mark.integration
def test_the_default_scorer_tells_who_acquired_whom_and_accepts_a_copy():
    """The issue's own contrast, through veridic.score's default (embedded model, int8 ONNX, hybrid): the model
    alone entails neither the copy nor rejects the swap for the right reason; the default does both."""
    import veridic

    src = "Google acquired YouTube in 2006."
    copy, swap, passive, passive_swap = veridic.score(
        sources=[src] * 4,
        claims=[src, "YouTube acquired Google in 2006.", "YouTube was acquired by Google in 2006.", "Google was acquired by YouTube in 2006."])
    assert copy.label == "supported" and copy.sentences[0].evidence.label == "verbatim"
    for v, text in ((swap, "YouTube acquired Google"), (passive_swap, "Google was acquired by YouTube")):
        assert v.label == "unsupported" and v.sentences[0].conflict.text == text and v.sentences[0].score == -1.0
    assert passive.sentences[0].conflict is None and passive.score > swap.score
    model_only = veridic.score(sources=[src], claims=[src], structure_check=False, verbatim_support=False)[0]
    assert model_only.sentences[0].score < 0  # the embedded model's copy mistake that verbatim support corrects


def test_the_detector_fixes_names_exchanged_around_a_relational_noun(nlp):
    """A dummy model that entails everything: the structure check alone finds the exchange and the edit restores it."""
    from veridic.detect import HallucinationDetector

    scorer = build_scorer(ScorerConfig(method="e-c"), backend=FakeNLIBackend({"": ENTAIL}, max_length=256))
    r = HallucinationDetector(scorer=scorer, nlp=nlp).detect(passage="Claudette King was a publicist for Angela Moore.", evidence=APPOS)
    assert [(s.type, s.text, s.suggestion) for s in r.spans] == [
        ("relation", "Claudette King was a publicist for Angela Moore", "Angela Moore was a publicist for Claudette King")]
    assert r.edited == "Angela Moore was a publicist for Claudette King."
    same = HallucinationDetector(scorer=scorer, nlp=nlp).detect(passage="Angela Moore was a publicist for Claudette King.", evidence=APPOS)
    assert same.spans == ()

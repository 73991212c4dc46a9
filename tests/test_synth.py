"""Synthetic faithfulness pairs: kinds, labels, changed spans, determinism."""

from __future__ import annotations

import json

import pytest

from veridic.errors import ConfigError
from veridic.synth import KIND_LABELS, KINDS, Document, SyntheticGenerator, SyntheticPair

spacy = pytest.importorskip("spacy")




DOCS = [
    Document("d1", [
        "Maria Lopez, the chief executive of Acme Corp, announced the deal in Madrid on Monday.",
        "The company said profits rose by 12 percent in 2019.",
        "Acme Corp hired 250 engineers from Globex after the merger.",
        "Analysts at Barclays expected the shares to increase sharply.",
        "The board did not approve the plan that was proposed by John Smith.",
        "John Smith founded Globex in 1998 (with two partners) in Chicago.",
    ]),
    Document("d2", [
        "The storm hit the coast of Florida on Tuesday, forcing 3,000 residents to leave their homes.",
        "Officials in Miami opened 12 shelters, which were run by volunteers.",
        "The governor praised the rescue teams for their quick response.",
        "Power was restored to most homes by Friday, according to the utility company.",
        "Peter Brown, a spokesman for the city, is confident the damage will be repaired.",
    ]),
]


@pytest.fixture(scope="module")
def pairs(nlp):
    gen = SyntheticGenerator(nlp=nlp, seed=7)
    return gen.generate(documents=DOCS, counts={k: 3 for k in KINDS})


def test_every_kind_is_produced_with_its_label(pairs):
    kinds = {p.kind for p in pairs}
    assert kinds == set(KINDS)
    for p in pairs:
        assert p.label == KIND_LABELS[p.kind]
        assert p.premise and p.hypothesis


def test_changed_span_round_trips(pairs):
    edited = [p for p in pairs if p.kind in {"entity_swap", "number_change", "negation", "antonym", "swap_args",
                                             "doc_contradiction"}]
    assert edited
    for p in edited:
        assert p.changed_span is not None, p
        s, e = p.changed_span
        assert 0 <= s < e <= len(p.hypothesis)
        new = p.hypothesis[s:e]
        assert new.strip() == new and new
        if p.kind == "entity_swap":
            assert new == p.meta["replaced"] or new not in p.original  # the new entity is new text
            assert p.hypothesis[:s] + p.meta["replaced"] + p.hypothesis[e:] == p.original
        if p.kind == "negation" and p.meta["direction"] == "insert":
            assert "not" in new
    for p in pairs:
        if p.kind in {"extract", "compress", "neutral_same_doc", "neutral_other_doc", "doc_entailment"}:
            assert p.changed_span is None


def test_perturbed_hypothesis_differs_and_premise_has_original(pairs):
    for p in pairs:
        if p.label == "contradiction" and p.kind != "doc_contradiction":
            assert p.hypothesis != p.original
            assert p.original in p.premise
        if p.kind == "compress":
            assert len(p.hypothesis) < len(p.original)
        if p.kind == "neutral_same_doc":
            assert p.hypothesis not in p.premise


def test_entity_swap_prefers_same_document(pairs):
    swaps = [p for p in pairs if p.kind == "entity_swap"]
    assert any(p.meta["source"] == "same_doc" for p in swaps)


def test_window_swap_uses_only_the_premises_words_and_moves_a_name(pairs):
    swaps = [p for p in pairs if p.kind == "window_swap"]
    assert swaps
    for p in swaps:
        assert p.label == "not_entailment" and p.original in p.premise and p.hypothesis != p.original
        words = lambda t: {w.strip(".,;:()'\"").lower() for w in t.split()} - {""}  # noqa: E731
        assert words(p.hypothesis) <= words(p.premise), p  # overlap says nothing: every word is the premise's
        assert p.meta["with"] in p.premise and p.meta["replaced"] in p.original
        assert not set(p.meta["with"].lower().split()) & set(p.meta["replaced"].lower().split())


def test_window_swap_leaves_names_alone_where_exchanging_them_keeps_the_meaning(nlp):
    import random

    from veridic.synth._perturb import _perturb_within_window

    for text in ("Barack Obama met Angela Merkel in Berlin.",          # a symmetric predicate
                 "Ford and General Motors cut prices in Detroit.",      # coordinated names
                 "Barack Obama praised Obama's staff in Chicago."):     # names sharing a word
        doc = nlp(text)
        for seed in range(5):
            edit = _perturb_within_window(doc, random.Random(seed), {})
            assert edit is None or edit.meta["entity_type"] == "GPE", (text, edit)
    doc = nlp("Maria Lopez, a lawyer for John Smith, spoke in Madrid.")
    seen = {_perturb_within_window(doc, random.Random(s), {}).text for s in range(8)}
    assert "John Smith, a lawyer for Maria Lopez, spoke in Madrid." in seen


def test_deterministic_under_seed(nlp, pairs):
    again = SyntheticGenerator(nlp=nlp, seed=7).generate(documents=DOCS, counts={k: 3 for k in KINDS})
    assert [p.to_dict() for p in again] == [p.to_dict() for p in pairs]
    other = SyntheticGenerator(nlp=nlp, seed=8).generate(documents=DOCS, counts={k: 3 for k in KINDS})
    assert [p.to_dict() for p in other] != [p.to_dict() for p in pairs]


def test_round_trip_dict(pairs):
    for p in pairs:
        assert SyntheticPair.from_dict(p.to_dict()) == p


def test_unknown_kind_is_a_config_error(nlp):
    with pytest.raises(ConfigError, match="did you mean|Did you mean"):
        SyntheticGenerator(nlp=nlp).generate(documents=DOCS, counts={"entity_swp": 1})


def test_pomo_detokeniser():
    from veridic.synth._sources import _detok

    assert _detok("Alice B. Toklas , Stein 's partner , was -LRB- reportedly -RRB- `` jealous '' .") == \
        'Alice B. Toklas, Stein\'s partner, was (reportedly) "jealous".'


def test_abstractive_span_corpus_keeps_rewrites_and_marks_inserted_errors(nlp, tmp_path):
    import gzip

    from veridic.synth._spans import build_abstractive_span_corpus, overlap_share

    premises = [
        ("Angela Merkel met Emmanuel Macron in Berlin on Monday to discuss the budget of 2024 for the union.",
         "The German chancellor held talks with the French president about money."),
        ("The company reported that its revenue rose by 12 percent in the third quarter, helped by strong sales in Asia.",
         "Sales grew because buyers in Asian markets wanted more of its products."),
        ("Researchers at Oxford found that the new drug reduced symptoms in 300 patients during a long trial.",
         "A medicine tested by British scientists helped hundreds of sick people."),
        ("The river flooded the village after three days of heavy rain, and hundreds of residents left their homes.",
         "Many people abandoned their houses when water covered the town."),
        # a near copy of its premise: not a rewrite, left out
        ("The museum opened a new wing for modern art in Paris last year.", "The museum opened a new wing for modern art."),
        # not entailed: left out
        ("The team won the final in Madrid after extra time.", "The team lost the final match in Madrid."),
    ]
    (tmp_path / "nli").mkdir()
    with gzip.open(tmp_path / "nli" / "mnli.jsonl.gz", "wt", encoding="utf-8") as fh:
        for i, (p, h) in enumerate(premises):
            fh.write(json.dumps({"premise": p, "hypothesis": h, "label": "contradiction" if i == 5 else "entailment"}) + "\n")
    def build(error_share):
        out = tmp_path / f"abs-{error_share}.jsonl.gz"
        stats = build_abstractive_span_corpus(data_dir=tmp_path, out=out, nlp=nlp, n=4, sets=("mnli",), error_share=error_share,
                                              progress=False)
        rows = [json.loads(line) for line in gzip.open(out, "rt", encoding="utf-8")]
        assert stats["candidates"] == 4 and stats["examples"] == len(rows)
        for r in rows:
            assert r["claim"] != "The museum opened a new wing for modern art." and "lost" not in r["claim"]
            assert (r["label"] == 1) == (not r["spans"])
        return rows

    faithful = build(0.0)  # the four rewrites, unchanged
    assert sorted(r["claim"] for r in faithful) == sorted(h for p, h in premises[:4])
    assert all(not r["spans"] and overlap_share(r["claim"], r["source"]) < 0.7 for r in faithful)
    wrong = build(1.0)  # one inserted error each, marked at its exact characters
    assert wrong and all(len(r["spans"]) == 1 for r in wrong)
    for r in wrong:
        s = r["spans"][0]
        assert r["claim"][s["start"]:s["end"]] == s["text"] and s["text"].strip() and r["claim"] not in [h for _, h in premises]


def test_summary_span_corpus_keeps_faithful_summaries_and_edits_one_sentence_of_the_rest(nlp, tmp_path):
    import gzip

    from veridic.synth._spans import build_summary_span_corpus, eval_shingles

    source = ("Angela Merkel met Emmanuel Macron in Berlin on Monday. They discussed the budget for 2024 and agreed to meet "
              "again in Paris in March. The talks lasted four hours, officials said.")
    faithful = ["merkel met macron in berlin on monday . they agreed to meet again in paris in march .",
                "The two leaders talked about the budget for 2024. The talks took four hours.",
                "Merkel and Macron met in Berlin and will meet again in Paris in March.",
                "Officials said the talks in Berlin lasted four hours on Monday."]
    unfaithful = "Merkel met Macron in Rome on Friday."
    held_out = "The same sentence is in an evaluation source and is never read here at all."
    (tmp_path / "bench").mkdir()
    with (tmp_path / "bench" / "frank_test.jsonl").open("w") as fh:
        for i, c in enumerate(faithful):
            fh.write(json.dumps({"id": f"f{i}", "source": source, "claim": c, "label": 1}) + "\n")
        fh.write(json.dumps({"id": "u", "source": source, "claim": unfaithful, "label": 0}) + "\n")
        fh.write(json.dumps({"id": "x", "source": held_out + " More text follows.", "claim": "It is never read here.", "label": 1}) + "\n")
        fh.write(json.dumps({"id": "dup", "source": source, "claim": faithful[1], "label": 1}) + "\n")  # the same pair again

    def build(error_share):
        out = tmp_path / f"sum-{error_share}.jsonl.gz"
        stats = build_summary_span_corpus(data_dir=tmp_path, out=out, nlp=nlp, sets=("frank_test",), error_share=error_share,
                                          exclude=eval_shingles([held_out]), progress=False)
        rows = [json.loads(line) for line in gzip.open(out, "rt", encoding="utf-8")]
        assert stats["candidates"] == 4 and stats["examples"] == len(rows)
        assert all(r["source"] == source and (r["label"] == 1) == (not r["spans"]) for r in rows)
        return rows

    kept = build(0.0)  # the four faithful summaries, spacing tidied ("berlin on monday ." -> "monday."), nothing else
    assert sorted(r["claim"] for r in kept) == sorted([faithful[0].replace(" .", "."), *faithful[1:]])
    edited = build(1.0)
    assert edited and all(len(r["spans"]) == 1 for r in edited)
    originals = {r["claim"] for r in kept}
    for r in edited:
        s = r["spans"][0]
        assert r["claim"][s["start"]:s["end"]] == s["text"] and s["text"].strip()
        # one sentence changed inside its span only: the rest of the summary reads as before, character for character
        base = next(o for o in originals if o[:s["start"]] == r["claim"][:s["start"]] and o.endswith(r["claim"][s["end"]:]))
        assert base != r["claim"]


def test_splice_edit_refuses_an_edit_that_changed_the_sentence_outside_its_span():
    from veridic.synth._perturb import _Edit
    from veridic.synth._spans import splice_edit

    text = "Tom ran . Ann sat in Rome ."
    assert splice_edit(text, 10, 27, _Edit("Ann sat in Paris .", (11, 16))) == ("Tom ran . Ann sat in Paris .", (21, 26))
    assert splice_edit(text, 10, 27, _Edit("Ann sat in Paris.", (11, 16))) is None  # the generator tidied " ." away
    assert splice_edit(text, 10, 27, _Edit("Ann sat in Rome .", None)) is None


def test_synth_spans_cli_builds_the_summary_corpus_and_refuses_two_kinds_at_once(tmp_path):
    import gzip

    typer_testing = pytest.importorskip("typer.testing")
    pytest.importorskip("spacy")
    from veridic.cli import app

    (tmp_path / "bench").mkdir()
    with (tmp_path / "bench" / "frank_test.jsonl").open("w") as fh:
        for i, claim in enumerate(["Merkel met Macron in Berlin on Monday.", "The talks in Berlin lasted four hours."]):
            fh.write(json.dumps({"id": str(i), "source": "Merkel met Macron in Berlin on Monday. The talks lasted four hours.",
                                 "claim": claim, "label": 1}) + "\n")
    from veridic.synth._spans import SUMMARY_SETS

    for name in SUMMARY_SETS[1:]:  # every set is read; these hold no rows
        (tmp_path / "bench" / f"{name}.jsonl").touch()
    run = typer_testing.CliRunner().invoke
    out = tmp_path / "s.jsonl.gz"
    both = run(app, ["synth", "spans", "-o", str(out), "--data", str(tmp_path), "--abstractive", "--summaries"])
    assert both.exit_code == 2 and "choose one" in both.output and not out.exists()
    r = run(app, ["synth", "spans", "-o", str(out), "--data", str(tmp_path), "--summaries", "--n", "2"])
    assert r.exit_code == 0, r.output
    rows = [json.loads(line) for line in gzip.open(out, "rt", encoding="utf-8")]
    assert 1 <= len(rows) <= 2 and all(r["meta"]["bench_set"] == "frank_test" for r in rows)

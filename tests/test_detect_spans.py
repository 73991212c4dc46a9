"""The span evaluation harness: metrics on hand-made cases and under random inputs, the loader's checks,
the baselines, the CLI end to end on a tiny data set, and the staged span files (skipped when absent)."""

from __future__ import annotations

import gzip
import json
import os
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from veridic.detect._spans import (
    AbsentWords,
    DetectorSpans,
    MarkEverything,
    SpanCheckpoints,
    SpanRow,
    TaggerSpans,
    char_counts,
    coarse_type,
    evaluation_rows,
    example_scores,
    load_span_rows,
    render_markdown,
    sample,
    score_predictions,
    span_benchmark,
    span_prf,
    token_counts,
    token_prf,
    type_recall,
)
from veridic.errors import DataFormatError, InputError

REPO = Path(__file__).resolve().parents[1]
SPANS = Path(os.environ.get("VERIDIC_DATA", REPO.parent / "shared" / "data")) / "spans"


def _row(claim: str, spans=(), *, source: str = "src", rid: str = "r", label: int | None = None) -> SpanRow:
    spans = tuple((a, b, t) for a, b, t in spans)
    return SpanRow(id=rid, dataset="demo", task="summarization", source=source, context=None, claim=claim,
                   label=(0 if spans else 1) if label is None else label, spans=spans, split="test")


# ------------------------------------------------------------------ metrics on hand-made cases

def test_character_counts_leave_whitespace_out_of_both_masks():
    # Gold "cat sat" (6 visible chars), predicted "The cat" (6 visible chars): overlap "cat" = 3.
    assert char_counts("The cat sat", gold=[(4, 11)], pred=[(0, 7)]) == (3, 6, 6)
    # A span of spaces alone counts for nothing.
    assert char_counts("a   b", gold=[(1, 4)], pred=[(0, 5)]) == (0, 2, 0)


def test_token_counts_mark_a_token_touched_by_any_character():
    assert token_counts("New York is big", gold=[(0, 8)], pred=[(6, 7)]) == (1, 1, 2)
    assert token_counts("x-ray", gold=[(0, 1)], pred=[(2, 5)]) == (0, 1, 1)


def test_span_and_token_f1_pool_over_rows():
    rows = [_row("Bob met Ann", [(8, 11, "entity")], rid="a"), _row("It rained", rid="b")]
    preds = [[(0, 3), (8, 11)], [(3, 9)]]
    # chars: tp 3, predicted 3 + 3 + 6 = 12, gold 3 -> P 0.25, R 1, F1 0.4
    s = span_prf(rows, preds)
    assert (s["tp"], s["predicted"], s["gold"]) == (3, 12, 3)
    assert s["precision"] == 0.25 and s["recall"] == 1.0 and s["f1"] == pytest.approx(0.4)
    t = token_prf(rows, preds)
    assert (t["tp"], t["predicted"], t["gold"]) == (1, 3, 1) and t["f1"] == pytest.approx(0.5)


def test_example_scores_balanced_accuracy_and_rates():
    rows = [_row("a b", [(0, 1, "x")], rid="1"), _row("a b", [(0, 1, "x")], rid="2"), _row("a b", rid="3"), _row("a b", rid="4")]
    preds = [[(0, 1)], [], [(2, 3)], []]
    e = example_scores(rows, preds)
    # one of two positives flagged (TPR 0.5), one of two negatives left alone (TNR 0.5)
    assert e["precision"] == 0.5 and e["recall"] == 0.5 and e["f1"] == 0.5
    assert e["balanced_accuracy"] == 0.5 and e["flag_rate"] == 0.5 and e["base_rate"] == 0.5
    assert example_scores(rows[:2], preds[:2])["balanced_accuracy"] is None  # no negative: undefined


def test_type_recall_is_character_recall_within_each_type():
    row = _row("Bob met Ann in Rome", [(0, 3, "Extrinsic Entity Error"), (4, 7, "Intrinsic Predicate Error"), (15, 19, "Intrinsic Entity Error")])
    got = type_recall([row], [[(0, 3), (16, 19)]])
    assert got == {"Entity": {"recall": 6 / 7, "chars": 7}, "Predicate": {"recall": 0.0, "chars": 3}}
    raw = type_recall([row], [[(0, 3)]], by=str)
    assert raw["Extrinsic Entity Error"]["recall"] == 1.0 and raw["Intrinsic Entity Error"]["recall"] == 0.0


def test_coarse_types_fold_the_inventories():
    assert coarse_type("Intrinsic Circumstance") == "Circumstance"
    assert coarse_type("CorefE/n/a") == "Coreference"
    assert coarse_type("Others/|whole-sentence-fallback") == "Other"
    assert coarse_type("Non-factual Hallucination") == "Non-factual"
    assert coarse_type("Coreference Error") == "Coreference"


def test_predictions_outside_the_claim_are_refused():
    with pytest.raises(InputError, match="does not lie inside the claim"):
        span_prf([_row("abc")], [[(1, 9)]])
    with pytest.raises(InputError, match="one list of spans per row"):
        span_prf([_row("abc")], [])


def test_score_predictions_gives_intervals_and_both_type_tables():
    rows = [_row(f"w{i} x y", [(0, 2, "EntE/intrinsic")] if i % 2 else (), rid=str(i)) for i in range(20)]
    rep = score_predictions(rows, [[(0, 2)] for _ in rows], n_boot=200)
    lo, hi = rep["span"]["f1_ci95"]
    assert lo <= rep["span"]["f1"] <= hi
    assert rep["example"]["recall"] == 1.0 and rep["example"]["precision"] == 0.5
    assert set(rep["type_recall"]) == {"Entity"} and set(rep["raw_type_recall"]) == {"EntE/intrinsic"}
    json.dumps(rep)  # plain JSON types


# ------------------------------------------------------------------ properties

_text = st.text(alphabet="ab .,\n1", min_size=1, max_size=40)


@st.composite
def _case(draw):
    claim = draw(_text)
    n = len(claim)

    def spans():
        out = []
        for _ in range(draw(st.integers(0, 3))):
            a = draw(st.integers(0, n - 1))
            out.append((a, draw(st.integers(a + 1, n))))
        return out

    return claim, spans(), spans()


@settings(max_examples=200, deadline=None)
@given(_case())
def test_f1_is_a_proportion_and_perfect_or_trivial_predictions_behave(case):
    claim, gold, pred = case
    row = _row(claim, [(a, b, "x") for a, b in gold])
    for fn in (span_prf, token_prf):
        f = fn([row], [pred])["f1"]
        assert f is None or 0.0 <= f <= 1.0
    has_gold = span_prf([row], [[]])["gold"] > 0
    if has_gold:
        assert span_prf([row], [gold])["f1"] == 1.0
        assert span_prf([row], [[]])["recall"] == 0.0
        assert span_prf([row], [MarkEverything().predict(row)])["recall"] == 1.0
    if token_prf([row], [[]])["gold"] > 0:  # a gold span of punctuation alone touches no \w token
        assert token_prf([row], [MarkEverything().predict(row)])["recall"] == 1.0
        assert token_prf([row], [gold])["f1"] == 1.0
    e = example_scores([row], [pred])["f1"]
    assert e is None or 0.0 <= e <= 1.0


# ------------------------------------------------------------------ baselines and predictors

def test_absent_words_marks_content_words_the_source_lacks():
    row = _row("The 5 engineers of Acme's lab were laid off in 2,000.", source="Acme laid off five engineers in 2000.")
    marked = [row.claim[a:b] for a, b in AbsentWords().predict(row)]
    assert marked == ["lab"]  # stop words, number words, "Acme's" and "2,000" are all found
    assert AbsentWords().predict(_row("The of and", source="x")) == []


def test_mark_everything_covers_every_visible_character():
    row = _row("  two words\n")
    spans = MarkEverything().predict(row)
    assert "".join(row.claim[a:b] for a, b in spans) == "twowords"


class _Span:
    def __init__(self, start, end):
        self.start, self.end = start, end


class _Result:
    def __init__(self, spans, judged=True):
        self.spans, self.judged = spans, judged


class FakeDetector:
    """Marks the first word of every claim; never judges a claim starting with '?'."""

    def __init__(self):
        self.calls = []

    def detect_many(self, *, passages, evidences, **_):
        self.calls.append(len(passages))
        return [_Result([], judged=False) if p.startswith("?") else _Result([_Span(0, re.match(r"\S+", p).end())]) for p in passages]

    def describe(self):
        return {"detector": "fake"}


def test_detector_predictor_batches_and_counts_unjudged_claims():
    det = FakeDetector()
    pred = DetectorSpans(det, batch_size=2)
    rows = [_row("Bob ran", rid="1"), _row("?? x", rid="2"), _row("Ann sat", rid="3")]
    assert pred.predict_many(rows) == [[(0, 3)], [], [(0, 3)]]
    assert det.calls == [2, 1] and pred.describe()["not_judged"] == 1
    assert "not passed" in pred.describe()["context"]


class FakeTagger:
    def predict(self, *, sources, claims):
        return [[_Span(0, 1)] if len(c) > 3 else [] for c in claims]


def test_tagger_predictor_batches_over_sources_and_claims():
    pred = TaggerSpans(FakeTagger(), batch_size=1)
    assert pred.predict_many([_row("Bob ran", rid="1"), _row("ab", rid="2")]) == [[(0, 1)], []]
    assert pred.describe()["tagger"] == {"tagger": "FakeTagger"}


class Oracle:
    name = "oracle"

    def predict(self, row):
        return [(a, b) for a, b, _ in row.spans]


def test_the_benchmark_scores_every_predictor_per_set_and_pooled():
    a = [_row("Bob met Ann", [(8, 11, "entity")], source="Bob met Eve", rid="a1"), _row("It rained", source="It rained", rid="a2")]
    b = [_row("Tom ran 5 km", [(8, 9, "number")], source="Tom ran 3 km", rid="b1")]
    rep = span_benchmark(predictors={"oracle": Oracle(), "absent-words": AbsentWords()}, datasets=["a", "b"], rows={"a": a, "b": b}, n_boot=50)
    assert rep["sets"]["a"]["rows"] == 2 and rep["pooled"]["rows"] == 3 and rep["pooled"]["positives"] == 2
    assert rep["pooled"]["predictors"]["oracle"]["span"]["f1"] == 1.0
    assert rep["pooled"]["predictors"]["absent-words"]["span"]["f1"] == 1.0
    assert rep["predictors"]["oracle"] == {"predictor": "oracle"}
    md = render_markdown(rep)
    assert md.count("| oracle |") == 3 and "**pooled**" in md
    json.dumps(rep)


def test_flaggers_are_read_against_flagging_everything_and_by_row_group():
    rows = [_row("Bob met Ann", [(8, 11, "entity")], source="Bob met Eve", rid="a1"), _row("It rained", source="It rained", rid="a2"),
            _row("Tom ran 5 km", [(8, 9, "number")], source="Tom ran 3 km" + " and more" * 20, rid="a3")]
    preds = {"oracle": Oracle(), "mark-everything": MarkEverything()}
    rep = span_benchmark(predictors=preds, datasets=["a"], rows={"a": rows}, n_boot=200,
                         group_of=lambda r: "long" if len(r.source) > 50 else "short")
    po = rep["pooled"]["predictors"]
    # oracle: example F1 1.0; mark-everything flags all three rows (2 positives): 0.8
    vs = po["oracle"]["example_f1_vs"]
    assert vs["reference"] == "mark-everything" and vs["diff"] == pytest.approx(0.2)
    assert vs["ci95"][0] <= vs["diff"] <= vs["ci95"][1]
    assert "example_f1_vs" not in po["mark-everything"]
    g = po["mark-everything"]["by_group"]
    assert (g["short"]["rows"], g["short"]["with_span"], g["long"]["rows"]) == (2, 1, 1)
    assert g["long"]["recall"] == g["short"]["recall"] == 1.0 and g["long"]["precision"] == pytest.approx(1 / 9)
    md = render_markdown(rep)
    assert "paired bootstrap" in md and "| long |" in md
    json.dumps(rep)


class Stoppable:
    """A predictor that marks the first word, counts "??" claims as not judged, and can be stopped at the rows whose id
    starts with ``stop_on`` (the rows of one set)."""

    def __init__(self, stop_on: str | None = None):
        self.stop_on, self.seen, self.not_judged = stop_on, [], 0

    def predict(self, row):
        if self.stop_on is not None and row.id.startswith(self.stop_on):
            raise KeyboardInterrupt
        self.seen.append(row.id)
        self.not_judged += row.claim.startswith("??")
        return [(0, 3)]

    def describe(self):
        return {"predictor": "stoppable", "not_judged": self.not_judged}


def _two_sets():
    return {"a": [_row("Bob met Ann", [(8, 11, "entity")], source="Bob met Eve", rid="a1"), _row("?? x", source="x", rid="a2")],
            "b": [_row("Tom ran 5 km", [(8, 9, "number")], source="Tom ran 3 km", rid="b1")]}


def _scores(rep):
    strip = lambda d: {k: v for k, v in d.items() if k != "seconds"}  # noqa: E731
    return ({s: {p: strip(v) for p, v in rep["sets"][s]["predictors"].items()} for s in rep["sets"]},
            {p: strip(v) for p, v in rep["pooled"]["predictors"].items()})


def test_a_stopped_benchmark_resumes_at_the_first_unfinished_set_with_the_same_figures(tmp_path):
    rows, ck = _two_sets(), tmp_path / "partial"
    with pytest.raises(KeyboardInterrupt):
        span_benchmark(predictors={"p": Stoppable(stop_on="b")}, datasets=["a", "b"], rows=rows, n_boot=20, checkpoint_dir=ck)
    assert sorted(f.name for f in ck.glob("*.predictions.json")) == ["p--a.predictions.json"]
    resumed = Stoppable()
    rep = span_benchmark(predictors={"p": resumed}, datasets=["a", "b"], rows=rows, n_boot=20, checkpoint_dir=ck)
    assert resumed.seen == ["b1"]  # set a came from the saved predictions
    assert rep["predictors"]["p"]["not_judged"] == 1  # the abstention counted in the stopped part is kept
    whole = span_benchmark(predictors={"p": Stoppable()}, datasets=["a", "b"], rows=rows, n_boot=20)
    assert _scores(rep) == _scores(whole)
    SpanCheckpoints.remove(ck)
    assert not ck.exists()


def test_saved_predictions_are_never_reused_for_other_rows_or_another_predictor(tmp_path, capsys):
    rows, ck = _two_sets(), tmp_path / "partial"
    span_benchmark(predictors={"p": Stoppable()}, datasets=["a"], rows=rows, n_boot=0, checkpoint_dir=ck)
    edited = {"a": [rows["a"][0], _row("?? y", source="x", rid="a2")]}
    again = Stoppable()
    span_benchmark(predictors={"p": again}, datasets=["a"], rows=edited, n_boot=0, checkpoint_dir=ck)
    assert again.seen == ["a1", "a2"] and "computing again" in capsys.readouterr().out
    other = Oracle()
    rep = span_benchmark(predictors={"p": other}, datasets=["a"], rows=edited, n_boot=0, checkpoint_dir=ck)
    assert rep["sets"]["a"]["predictors"]["p"]["span"]["f1"] == 1.0  # the oracle's own predictions, not Stoppable's


def test_an_unreadable_saved_file_is_computed_again(tmp_path, capsys):
    rows, ck = _two_sets(), tmp_path / "partial"
    span_benchmark(predictors={"p": Stoppable()}, datasets=["a"], rows=rows, n_boot=0, checkpoint_dir=ck)
    saved = (ck / "p--a.predictions.json").read_text()
    (ck / "p--a.predictions.json").write_text("{not json")
    again = Stoppable()
    span_benchmark(predictors={"p": again}, datasets=["a"], rows=rows, n_boot=0, checkpoint_dir=ck)
    assert again.seen == ["a1", "a2"] and "unreadable" in capsys.readouterr().out
    short = json.loads(saved)
    (ck / "p--a.predictions.json").write_text(json.dumps({**short, "predictions": short["predictions"][:1]}))
    third = Stoppable()
    span_benchmark(predictors={"p": third}, datasets=["a"], rows=rows, n_boot=0, checkpoint_dir=ck)
    assert third.seen == ["a1", "a2"] and "holds 1 rows, not 2" in capsys.readouterr().out


# ------------------------------------------------------------------ loader

def _write(path: Path, rows: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(path, "wt", encoding="utf-8") as fh:
        for r in rows:
            fh.write(json.dumps(r) + "\n")
    return path


def _raw(i, dataset, claim=None, spans=(), split="test", source="Bob met Eve in Rome.", context=None):
    claim = claim or ("Bob met Ann in Rome." if spans else source)
    return {"id": f"{dataset}-{i}", "dataset": dataset, "task": "summarization", "source": source, "context": context, "claim": claim,
            "label": 0 if spans else 1, "spans": [{"start": a, "end": b, "text": claim[a:b], "type": t} for a, b, t in spans],
            "meta": {}, "split": split}


def _tiny(folder: Path) -> Path:
    ann = [(8, 11, "Non-factual Hallucination")]
    _write(folder / "entfa_xsum.jsonl.gz", [_raw(0, "entfa_xsum", spans=ann, split="train"), _raw(1, "entfa_xsum", spans=ann),
                                            _raw(2, "entfa_xsum")])
    _write(folder / "bump_cnndm.jsonl.gz", [_raw(i, "bump_cnndm", spans=[(8, 11, "Extrinsic Entity Error")] if i % 2 else ()) for i in range(6)])
    _write(folder / "diasumfact.jsonl.gz", [_raw(0, "diasumfact", spans=[(8, 11, "PredE/extrinsic")], context="What did Bob do?"),
                                            _raw(1, "diasumfact", context="n/a")])
    return folder


def test_the_loader_reads_splits_and_normalises_empty_contexts(tmp_path):
    _tiny(tmp_path)
    assert [r.id for r in load_span_rows(dataset="entfa_xsum", data_dir=tmp_path)] == ["entfa_xsum-0", "entfa_xsum-1", "entfa_xsum-2"]
    assert [r.id for r in evaluation_rows("entfa_xsum", data_dir=tmp_path)] == ["entfa_xsum-1", "entfa_xsum-2"]
    d = load_span_rows(dataset="diasumfact", data_dir=tmp_path)
    assert d[0].context == "What did Bob do?" and d[1].context is None
    assert d[0].spans == ((8, 11, "PredE/extrinsic"),)
    with pytest.raises(InputError, match="no row of split 'dev'; its splits: test, train"):
        load_span_rows(dataset="entfa_xsum", split="dev", data_dir=tmp_path)


def test_a_missing_file_names_the_path_and_what_to_set(tmp_path, monkeypatch):
    monkeypatch.setenv("VERIDIC_DATA", str(tmp_path / "nowhere"))
    with pytest.raises(InputError) as e:
        load_span_rows(dataset="bump_cnndm")
    msg = str(e.value)
    assert str(tmp_path / "nowhere" / "spans" / "bump_cnndm.jsonl.gz") in msg and "$VERIDIC_DATA" in msg
    with pytest.raises(InputError, match="Did you mean 'bump_cnndm'"):
        load_span_rows(dataset="bump_cnnd")


@pytest.mark.parametrize(("bad", "message"), [
    ({"spans": [{"start": 5, "end": 99, "text": "x", "type": "t"}], "label": 0}, "does not lie inside the claim"),
    ({"spans": [{"start": 0, "end": 3, "text": "Tom", "type": "t"}], "label": 0}, "holds 'Bob', not its text 'Tom'"),
    ({"spans": [], "label": 0}, "label 0 disagrees with the 0 span"),
    ({"label": 2}, "'label' must be 0"),
    ({"claim": "  "}, "non-empty strings"),
    ({"dataset": "other"}, "belongs to data set 'other'"),
])
def test_malformed_rows_are_errors_naming_file_and_line(tmp_path, bad, message):
    path = _write(tmp_path / "bump_cnndm.jsonl.gz", [_raw(0, "bump_cnndm"), {**_raw(1, "bump_cnndm", claim="Bob met Ann in Rome."), **bad}])
    with pytest.raises(DataFormatError, match=re.escape(message)) as e:
        load_span_rows(dataset="bump_cnndm", data_dir=tmp_path)
    assert str(e.value).startswith(f"{path}, row 2: ")


def test_duplicate_ids_are_refused(tmp_path):
    _write(tmp_path / "bump_cnndm.jsonl.gz", [_raw(0, "bump_cnndm"), _raw(0, "bump_cnndm")])
    with pytest.raises(DataFormatError, match="duplicate id"):
        load_span_rows(dataset="bump_cnndm", data_dir=tmp_path)


def test_sample_is_seeded_ordered_and_bounded():
    rows = list(range(100))
    assert sample(rows, 10, seed=3) == sample(rows, 10, seed=3) != sample(rows, 10, seed=4)
    assert sample(rows, 10, seed=3) == sorted(sample(rows, 10, seed=3))
    assert sample(rows, 500) == rows
    with pytest.raises(InputError):
        sample(rows, 0)


# ------------------------------------------------------------------ CLI

def _cli(args):
    typer_testing = pytest.importorskip("typer.testing")
    from veridic.cli import app

    return typer_testing.CliRunner().invoke(app, ["detect", "bench-spans", *args])


def test_the_cli_writes_json_and_markdown_with_the_two_baselines(tmp_path):
    data = _tiny(tmp_path / "data")
    out = tmp_path / "out"
    r = _cli(["--data-dir", str(data), "--predictor", "mark-everything", "--predictor", "absent-words", "-o", str(out), "--n-boot", "100"])
    assert r.exit_code == 0, r.output
    rep = json.loads((out / "spans.json").read_text())
    assert list(rep["sets"]) == ["entfa_xsum", "bump_cnndm", "diasumfact"]
    assert rep["sets"]["entfa_xsum"]["rows"] == 2  # the train row is never evaluated
    assert rep["sets"]["diasumfact"]["with_context"] == 1
    assert set(rep["pooled"]["predictors"]) == {"mark-everything", "absent-words"}
    assert rep["pooled"]["predictors"]["mark-everything"]["span"]["recall"] == 1.0
    assert rep["pooled"]["predictors"]["absent-words"]["span"]["f1"] == 1.0  # "Ann" is the one absent word
    md = (out / "spans.md").read_text()
    assert "| **pooled** | 10 (5) | absent-words | 1.00" in md and md in r.output
    assert not (out / "partial").exists()  # the saved predictions go once the report is written


def test_the_cli_limit_draws_the_same_seeded_rows(tmp_path):
    data = _tiny(tmp_path / "data")
    runs = []
    for k in range(2):
        r = _cli(["--data-dir", str(data), "--dataset", "bump_cnndm", "--predictor", "absent-words", "--limit", "3", "--seed", "5",
                  "-o", str(tmp_path / f"o{k}"), "--n-boot", "0"])
        assert r.exit_code == 0, r.output
        runs.append(json.loads((tmp_path / f"o{k}" / "spans.json").read_text())["data"]["ids"])
    assert runs[0] == runs[1] and len(runs[0]["bump_cnndm"]) == 3 and list(runs[0]) == ["bump_cnndm"]


@pytest.mark.parametrize(("args", "message"), [
    (["--predictor", "magic"], "--predictor must be one of mark-everything, absent-words, detector; got 'magic'"),
    (["--dataset", "xsum"], "--dataset must be one of entfa_xsum, bump_cnndm, diasumfact; got 'xsum'"),
    (["--limit", "0"], "--limit must be >= 1"),
    (["--data-dir", "/no/such/folder", "--predictor", "absent-words"], "/no/such/folder/entfa_xsum.jsonl.gz does not exist"),
])
def test_the_cli_exits_2_on_bad_input(tmp_path, args, message):
    r = _cli([*args, "-o", str(tmp_path / "out")])
    assert r.exit_code == 2, r.output
    assert message in r.output
    assert not (tmp_path / "out").exists()


def test_the_cli_names_a_folder_that_is_not_a_tagger(tmp_path):
    pytest.importorskip("transformers")
    r = _cli(["--data-dir", str(_tiny(tmp_path / "data")), "--predictor", "absent-words", "--tagger", str(tmp_path), "-o", str(tmp_path / "out")])
    assert r.exit_code == 2 and "is not a span tagger" in r.output


def test_the_cli_refuses_an_output_that_is_a_file(tmp_path):
    (tmp_path / "out").write_text("x")
    r = _cli(["--data-dir", str(_tiny(tmp_path / "data")), "--predictor", "absent-words", "-o", str(tmp_path / "out")])
    assert r.exit_code == 2 and "is a file" in r.output


# ------------------------------------------------------------------ the staged span files

MANIFEST = {"entfa_xsum": (660, 439, {"train": 432, "test": 228}), "bump_cnndm": (1134, 853, {"test": 1134}),
            "diasumfact": (475, 290, {"test": 475})}


@pytest.mark.skipif(not (SPANS / "MANIFEST.md").is_file(), reason=f"span data not staged at {SPANS} (set $VERIDIC_DATA)")
def test_the_staged_files_match_the_manifest_and_the_baselines_run():
    for name, (n, positives, splits) in MANIFEST.items():
        rows = load_span_rows(dataset=name, data_dir=SPANS)
        assert len(rows) == n and sum(r.label == 0 for r in rows) == positives
        assert {s: sum(r.split == s for r in rows) for s in splits} == splits
    rep = span_benchmark(predictors={"mark-everything": MarkEverything(), "absent-words": AbsentWords()}, data_dir=SPANS, limit=40, n_boot=50)
    assert rep["pooled"]["rows"] == 120
    for name in MANIFEST:
        s = rep["sets"][name]["predictors"]
        assert s["mark-everything"]["span"]["recall"] == 1.0
        assert 0.0 < s["absent-words"]["span"]["f1"] < 1.0

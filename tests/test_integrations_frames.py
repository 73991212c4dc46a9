"""score_frame on pandas, polars and Arrow: the same scores as `veridic score`, evidence columns, bad rows, progress."""

from __future__ import annotations

import math

import pytest
from test_integrations_common import BAD, CASES, FAST, cli_scores, good_rows, no_network  # noqa: F401

import veridic
from veridic.errors import InputError

pd = pytest.importorskip("pandas", reason="pip install 'veridic[frames]'")

COLUMNS = ["score", "label", "uncertainty", "evidence", "reason", "error"]


def rows(cases):
    return {"question": [q for q, _, _ in cases], "passages": [c for _, c, _ in cases], "answer": [a for _, _, a in cases]}


def test_pandas_frame_equals_veridic_score(tmp_path, no_network):
    df = pd.DataFrame(rows(CASES))
    out = veridic.score_frame(df, source="passages", claim="answer", **FAST)
    assert list(out.columns) == list(df.columns) + COLUMNS and list(df.columns) == ["question", "passages", "answer"]  # input untouched
    assert out["score"].tolist() == pytest.approx(cli_scores(good_rows(), tmp_path), abs=1e-6)
    assert out["label"].tolist()[:2] == ["supported", "unsupported"]
    assert out["uncertainty"].isna().all()
    ev = out.loc[3, "evidence"]
    assert [e["text"] for e in ev] == ["Paris is the capital of France.", "The company hired 200 engineers in 2023."]
    assert ev[1]["context"] == 2 and CASES[3][1][2][ev[1]["evidence_start"]:ev[1]["evidence_end"]] == ev[1]["evidence"]
    assert "It never hired anyone." in out.loc[1, "reason"]


def test_polars_and_arrow_give_the_same_columns_as_pandas(no_network):
    pl = pytest.importorskip("polars", reason="pip install 'veridic[frames]'")
    pa = pytest.importorskip("pyarrow", reason="pip install 'veridic[frames]'")
    ref = veridic.score_frame(pd.DataFrame(rows(CASES)), source="passages", claim="answer", **FAST)
    out_pl = veridic.score_frame(pl.DataFrame(rows(CASES)), source="passages", claim="answer", **FAST)
    out_pa = veridic.score_frame(pa.table(rows(CASES)), source="passages", claim="answer", **FAST)
    assert isinstance(out_pl, pl.DataFrame) and isinstance(out_pa, pa.Table)
    for out in (out_pl.to_pandas(), out_pa.to_pandas()):
        assert out["score"].tolist() == pytest.approx(ref["score"].tolist())
        assert out["label"].tolist() == ref["label"].tolist()
        assert [list(map(dict, e)) for e in out["evidence"]] == ref["evidence"].tolist()
    assert out_pl.schema["evidence"] == pl.List(pl.Struct({"start": pl.Int64, "end": pl.Int64, "text": pl.String, "score": pl.Float64,
                                                             "supported": pl.Boolean, "context": pl.Int64, "evidence_start": pl.Int64,
                                                             "evidence_end": pl.Int64, "evidence": pl.String}))


def test_a_string_source_column_and_a_dialogue_column():
    df = pd.DataFrame({"source": [CASES[0][1][0]], "claim": [CASES[0][2]], "history": [["Where is Paris?"]]})
    out = veridic.score_frame(df, source="source", claim="claim", context="history", context_mode="premise", **FAST)
    ref = veridic.score(sources=[CASES[0][1][0]], claims=[CASES[0][2]], contexts=[["Where is Paris?"]], context_mode="premise", **FAST)[0]
    assert out.loc[0, "score"] == pytest.approx(ref.score)


def test_bad_rows_get_nan_and_an_error_column(no_network):
    pl = pytest.importorskip("polars", reason="pip install 'veridic[frames]'")
    cases = [CASES[0], *[b for i, b in enumerate(BAD) if i != 2]]  # polars refuses a list mixing str and int itself
    out = veridic.score_frame(pl.DataFrame(rows(cases)), source="passages", claim="answer", **FAST)
    assert out["label"].to_list() == ["supported"] + ["invalid"] * (len(cases) - 1)
    assert all(math.isnan(s) for s in out["score"].to_list()[1:])
    assert "limit is 2,000,000" in out["error"].to_list()[-1] and out["error"].to_list()[0] is None
    mixed = pd.DataFrame(rows([CASES[0], BAD[2]]))
    assert "context 1 is a int" in veridic.score_frame(mixed, source="passages", claim="answer", **FAST).loc[1, "error"]
    with pytest.raises(InputError, match="Row 1: the answer is NaN"):  # pandas stores None as NaN
        veridic.score_frame(pd.DataFrame(rows([CASES[0], BAD[3]])), source="passages", claim="answer", on_invalid="raise", **FAST)


def test_column_checks():
    df = pd.DataFrame(rows(CASES[:1]))
    with pytest.raises(InputError, match=r"claim='reply' is not a column"):
        veridic.score_frame(df, source="passages", claim="reply", **FAST)
    gold = df.assign(label=["supported"])
    assert veridic.score_frame(gold, source="passages", claim="answer", **FAST)["label_pred"].tolist() == ["supported"]
    with pytest.raises(InputError, match="prefix='veridic_'"):
        veridic.score_frame(df.assign(score=[1.0]), source="passages", claim="answer", **FAST)
    out = veridic.score_frame(df.assign(score=[1.0]), source="passages", claim="answer", prefix="veridic_", **FAST)
    assert "veridic_score" in out.columns and out["score"].tolist() == [1.0]
    with pytest.raises(InputError, match="pandas or polars DataFrame"):
        veridic.score_frame([{"a": 1}], source="a", claim="a", **FAST)


def test_chunks_and_progress_bar_on_a_long_frame(capsys):
    n = 30
    df = pd.DataFrame(rows([CASES[i % len(CASES)] for i in range(n)]))
    out = veridic.score_frame(df, source="passages", claim="answer", batch_rows=7, progress=True, **FAST)
    whole = veridic.score_frame(df, source="passages", claim="answer", progress=False, **FAST)
    assert out["score"].tolist() == pytest.approx(whole["score"].tolist())
    assert f"{n}/{n}" in capsys.readouterr().err


@pytest.mark.slow
def test_embedded_model_frame_equals_veridic_score(tmp_path, no_network):
    out = veridic.score_frame(pd.DataFrame(rows(CASES)), source="passages", claim="answer")
    assert out["score"].tolist() == pytest.approx(cli_scores(good_rows(), tmp_path, fast=False), abs=1e-5)


@pytest.mark.slow
def test_ray_dataset_gives_the_same_columns_as_pandas(no_network):
    ray = pytest.importorskip("ray", reason="pip install 'veridic[ray]'")
    pytest.importorskip("ray.data")
    ref = veridic.score_frame(pd.DataFrame(rows(CASES + [BAD[3]])), source="passages", claim="answer", **FAST)
    ray.init(num_cpus=2, include_dashboard=False, object_store_memory=200 << 20, log_to_driver=False)
    try:
        ds = ray.data.from_pandas(pd.DataFrame(rows(CASES + [BAD[3]])))
        ctx = ray.data.DataContext.get_current()
        ctx.execution_options.preserve_order = True
        out = veridic.score_frame(ds, source="passages", claim="answer", batch_rows=2, actors=1, **FAST).to_pandas()
    finally:
        ray.shutdown()
    assert out["score"].tolist()[:-1] == pytest.approx(ref["score"].tolist()[:-1])
    assert pd.isna(out["score"].tolist()[-1])  # Ray stores the NaN of a row it cannot judge as null
    assert out["label"].tolist() == ref["label"].tolist()
    assert [[dict(e) for e in ev] for ev in out["evidence"]] == ref["evidence"].tolist()

"""Golden numbers: the released AIS ratings reproduce paper 003 Tables 3-7."""

from __future__ import annotations

import io
import json

import pytest
from conftest import DATA

from veridic.ais import build_report, read_released
from veridic.errors import DataFormatError

AIS = DATA / "ais"


def _report(name: str, **kw):
    path = AIS / f"ann_{name}.csv"
    if not path.is_file():
        pytest.skip(f"released AIS ratings not found at {path} (set VERIDIC_DATA or place ../shared/data/ais)")
    rows = read_released(path)
    return build_report([r.votes for r in rows], dataset=name, pair_key={r.votes.item: r.example for r in rows}, n_resamples=2000, **kw)


def _systems(report):
    return {s["system"]: s for s in report["systems"]}


def test_cnn_dm_table5_and_table7():
    r = _report("cnn_dm")
    s = _systems(r)
    for name, (i, a) in {"matchsum": (90.0, 99.4), "pointer": (90.0, 97.8), "bigbird": (90.0, 87.2), "reference": (86.0, 54.1)}.items():
        assert s[name]["int_pct"] == pytest.approx(i, abs=1.0)
        assert s[name]["ais_pct"] == pytest.approx(a, abs=1.0)
    assert r["paper"]["max_diff_points"] <= 1.0
    assert r["agreement"]["int"]["alpha"] == pytest.approx(0.46, abs=0.02)
    assert r["agreement"]["ais"]["alpha"] == pytest.approx(0.69, abs=0.02)
    assert r["agreement"]["int"]["f1"] == pytest.approx(0.83, abs=0.02)
    # the paper's asterisks: BigBird and Reference significantly below MatchSum on AIS, no Int differences
    assert r["significance"]["ais"]["significantly_lower"] == ["bigbird", "reference"]
    assert r["significance"]["int"]["significantly_lower"] == []


def test_qrecc_table3_and_table7():
    r = _report("qrecc", sampled=200)
    assert r["paper"]["max_diff_points"] <= 0.05  # exact once the rows missing from the release are counted
    assert r["agreement"]["int"]["alpha"] == pytest.approx(0.91, abs=0.02)
    assert r["agreement"]["ais"]["alpha"] == pytest.approx(0.76, abs=0.02)
    plain = _report("qrecc")  # without --sampled two Int cells move by 1.2 points
    assert _systems(plain)["t5-base-pretrained"]["int_pct"] == pytest.approx(48.2, abs=0.05)


def test_wow_table4():
    r = _report("wow")
    assert r["paper"]["max_diff_points"] <= 1.0
    assert r["agreement"]["ais"]["alpha"] == pytest.approx(0.79, abs=0.02)


def test_totto_table6_within_one_point_except_missing_rows():
    r = _report("totto")
    over = [(row["system"], k) for row in r["paper"]["systems"] for k in ("flag", "int", "ais") if (row[f"diff_{k}"] or 0) > 1.0]
    # T5-XL has 192 of its 200 rows in the release; the paper's 85.1 needs rows that are not there
    assert over == [("T5-xl", "ais")]
    assert _systems(r)["T5-xl"]["n"] == 192
    assert r["agreement"]["int"]["alpha"] == pytest.approx(0.84, abs=0.02)


def test_cli_report_json():
    path = AIS / "ann_cnn_dm.csv"
    if not path.is_file():
        pytest.skip(f"released AIS ratings not found at {path}")
    from typer.testing import CliRunner

    from veridic.cli import app

    res = CliRunner().invoke(app, ["ais", "report", "--ratings", str(path), "--json", "--n-resamples", "500"])
    assert res.exit_code == 0, res.output
    rep = json.loads(res.stdout)
    assert {s["system"]: round(s["ais_pct"], 1) for s in rep["systems"]}["matchsum"] == 99.4
    assert rep["paper"]["table"] == "Table 5"


def test_read_released_errors_name_the_problem():
    with pytest.raises(DataFormatError, match="missing columns"):
        read_released(io.StringIO("a,b\n1,2\n"))
    bad = "ex-idx,model-name,output,INT,INT & AIS,Flagged,# agree (INT),# agree (AIS)\n1,m,o,yes,1,0,5,5\n"
    with pytest.raises(DataFormatError, match="row 2.*'INT' must be an integer"):
        read_released(io.StringIO(bad))


def test_flagged_and_ten_rater_rows():
    text = ("ex-idx ,model-name,output,INT,INT & AIS,Flagged,# agree (INT),# agree (AIS)\n"
            "1,m,o,0,0,1,-1,-1\n2,m,o,1,1,0,10,9\n3,m,o,0,0,0,3,-1\n")
    rows = read_released(io.StringIO(text))
    v = [r.votes for r in rows]
    assert v[0].consensus_flag and v[0].int_yes + v[0].int_no == 0
    assert (v[1].int_yes, v[1].int_no, v[1].ais_yes, v[1].ais_no) == (10, 0, 9, 1)
    assert (v[2].int_yes, v[2].int_no) == (2, 3)

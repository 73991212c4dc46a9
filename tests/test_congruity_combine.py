"""Combining scorers: per-item standardisation, fixed weights, and clear errors when the runs do not match."""

from __future__ import annotations

import json
import math

import pytest

from veridic.congruity._combine import combine_scores, standardise
from veridic.congruity._ranking import ItemScores
from veridic.errors import ConfigError, InputError


def _s(i: str, **scores: float) -> ItemScores:
    return ItemScores(id=i, task="description", scores=scores, meta={"entity": "Ann"})


def test_standardise_is_scale_and_shift_free():
    a = standardise({"accurate": 1.0, "both": 3.0, "nonfactual": 2.0})
    b = standardise({"accurate": 10.0 - 7, "both": 30.0 - 7, "nonfactual": 20.0 - 7})
    assert a == pytest.approx(b)
    assert sum(a.values()) == pytest.approx(0.0) and math.sqrt(sum(v * v for v in a.values()) / 3) == pytest.approx(1.0)
    assert standardise({"accurate": 2.0, "both": 2.0}) == {"accurate": 0.0, "both": 0.0}
    with pytest.raises(InputError, match="finite"):
        standardise({"accurate": float("nan"), "both": 1.0})


def test_a_wide_scale_does_not_drown_a_narrow_one():
    # The head is very sure of "both" on its scale; the LM prefers "accurate" by a tenth of a nat, which on its
    # own scale is just as decisive. Raw addition would follow the head alone; the combination ties them.
    mc = [_s("1", accurate=0.0, both=8.0, nonfactual=-8.0)]
    lm = [_s("1", accurate=-1.0, both=-1.1, nonfactual=-1.2)]
    raw = {k: mc[0].scores[k] + lm[0].scores[k] for k in mc[0].scores}
    assert max(raw, key=raw.get) == "both"
    eq = combine_scores(runs=[mc, lm], weights=[1, 1])[0]
    assert eq.scores["accurate"] == pytest.approx(eq.scores["both"])
    assert eq.scores["nonfactual"] < eq.scores["accurate"]
    assert max((w := combine_scores(runs=[mc, lm], weights=[1, 2])[0]).scores, key=w.scores.get) == "accurate"
    assert w.meta == {"entity": "Ann"} and w.id == "1" and w.task == "description"


def test_weight_zero_selects_one_scorer():
    mc = [_s("1", accurate=0.1, both=0.9), _s("2", accurate=3.0, both=1.0)]
    lm = [_s("1", accurate=-1.0, both=-2.0), _s("2", accurate=-3.0, both=-1.0)]
    only_lm = combine_scores(runs=[mc, lm], weights=[0, 1])
    assert [max(x.scores, key=x.scores.get) for x in only_lm] == ["accurate", "both"]
    only_mc = combine_scores(runs=[mc, lm], weights=[1, 0])
    assert [max(x.scores, key=x.scores.get) for x in only_mc] == ["both", "accurate"]


def test_mismatched_runs_and_bad_weights_are_clear_errors():
    a = [_s("1", accurate=1.0, both=0.0)]
    with pytest.raises(InputError, match="differs between runs"):
        combine_scores(runs=[a, [_s("2", accurate=1.0, both=0.0)]], weights=[1, 1])
    with pytest.raises(InputError, match="differs between runs"):
        combine_scores(runs=[a, [_s("1", accurate=1.0, nonfactual=0.0)]], weights=[1, 1])
    with pytest.raises(InputError, match="different numbers"):
        combine_scores(runs=[a, a + a], weights=[1, 1])
    with pytest.raises(InputError, match="no items"):
        combine_scores(runs=[[], []], weights=[1, 1])
    with pytest.raises(ConfigError, match="at least two"):
        combine_scores(runs=[a], weights=[1])
    with pytest.raises(ConfigError, match="One weight per"):
        combine_scores(runs=[a, a], weights=[1])
    with pytest.raises(ConfigError, match="not all 0"):
        combine_scores(runs=[a, a], weights=[0, 0])
    with pytest.raises(ConfigError, match=">= 0"):
        combine_scores(runs=[a, a], weights=[1, -1])


def test_cli_combine_writes_scores_the_report_reads(tmp_path):
    from typer.testing import CliRunner

    from veridic.congruity.cli import app

    mc = [_s("1", accurate=0.0, both=8.0, nonfactual=-8.0), _s("2", accurate=2.0, both=1.0, nonfactual=0.0)]
    lm = [_s("1", accurate=-1.0, both=-1.2, nonfactual=-1.3), _s("2", accurate=-1.0, both=-1.5, nonfactual=-1.1)]
    for name, run in (("mc", mc), ("lm", lm)):
        (tmp_path / f"{name}.jsonl").write_text("".join(json.dumps(x.to_dict()) + "\n" for x in run))
    (tmp_path / "mc.jsonl.meta.json").write_text(json.dumps({"model": {"backend": "mc-encoder"}, "build": {"task": "description"}}))
    out = tmp_path / "both.jsonl"
    res = CliRunner().invoke(app, ["combine", "--scores", str(tmp_path / "mc.jsonl"), "--scores", str(tmp_path / "lm.jsonl"), "--weights", "1,3", "--out", str(out)])
    assert res.exit_code == 0, res.output
    rows = [ItemScores.from_dict(json.loads(x)) for x in out.read_text().splitlines()]
    assert [r.scores for r in rows] == [c.scores for c in combine_scores(runs=[mc, lm], weights=[1, 3])]
    meta = json.loads((tmp_path / "both.jsonl.meta.json").read_text())
    assert meta["model"]["weights"] == [1.0, 3.0] and meta["model"]["runs"][0]["model"] == {"backend": "mc-encoder"} and meta["build"] == {"task": "description"}
    rep = CliRunner().invoke(app, ["report", "--scores", str(out), "--familiarity", "column", "--out-dir", str(tmp_path / "rep"), "--no-figures", "--json"])
    assert rep.exit_code == 0, rep.output
    bad = CliRunner().invoke(app, ["combine", "--scores", str(tmp_path / "mc.jsonl"), "--scores", str(tmp_path / "lm.jsonl"), "--weights", "1,x", "--out", str(out)])
    assert bad.exit_code == 2 and "comma-separated" in bad.output

"""LM ranking with the dummy backend, the cache, and `veridic congruity build | score | report` end to end."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from veridic.congruity._build import MCItem
from veridic.congruity._ranking import rank_items, requests_for, score_with
from veridic.errors import ConfigError
from veridic.lm import CachingLM, DummyLM

ITEM = MCItem(id="1", task="claim", entity="Ann Lee", left="Ann Lee ,", right=" , said on Tuesday .", previous="The senator spoke.",
              options={"accurate": "senator", "incongruous": "born in Ohio", "nonfactual": "drummer", "both": "chef"})


def test_requests_put_each_option_in_the_slot():
    reqs = requests_for(ITEM)
    assert [r.continuation for r in reqs] == [" senator , said on Tuesday .", " born in Ohio , said on Tuesday .", " drummer , said on Tuesday .", " chef , said on Tuesday ."]
    assert {r.context for r in reqs} == {"The senator spoke. Ann Lee ,"}
    assert requests_for(ITEM, with_previous=False)[0].context == "Ann Lee ,"


def test_lm_ranking_with_dummy_backend_matches_direct_scores_and_caches(tmp_path):
    inner = DummyLM()
    lm = CachingLM(inner, path=tmp_path / "c-cache")
    (s,) = rank_items(items=[ITEM], backend=lm, normalization="sum")
    direct = inner.loglikelihood(requests_for(ITEM))
    assert list(s.scores) == list(ITEM.options)
    assert [s.scores[c] for c in ITEM.options] == pytest.approx([r.logprob for r in direct])
    # the dummy LM's copy bonus favours the option whose bytes occur in the context ("senator" is in the previous sentence)
    (pb,) = rank_items(items=[ITEM], backend=lm, normalization="per_byte")
    assert pb.scores["accurate"] == pytest.approx(s.scores["accurate"] / len(b" senator , said on Tuesday ."))
    calls = inner.calls
    again = CachingLM(DummyLM(), path=tmp_path / "c-cache")
    rank_items(items=[ITEM], backend=again, normalization="sum")
    assert again.misses == 0 and again.hits == 4 and inner.calls == calls
    with pytest.raises(ConfigError, match="normalization"):
        rank_items(items=[ITEM], backend=lm, normalization="mean")  # type: ignore[arg-type]


def test_any_scorer():
    (s,) = score_with(items=[ITEM], scorer=lambda it: {k: float(len(v)) for k, v in it.options.items()})
    assert max(s.scores, key=s.scores.get) == "incongruous"


def _fixture(tmp_path):
    rows = []
    jobs = ["poet", "senator", "drummer", "chef", "banker", "mayor", "pilot", "judge", "critic", "lawyer", "nurse", "coach"]
    for i in range(24):
        k = i % 12
        rows.append({"id": f"a{i}:1", "article_id": f"a{i}", "entity": f"Person{k} Q{k}", "context": f"On day {i} , Person{k} Q{k} , [DESC] , visited town {i % 5} .",
                     "gold": f"the {jobs[k]}", "facts": [{"text": jobs[k], "used": True}, {"text": f"born in city{k}", "used": False}],
                     "familiar": k < 6})
    p = tmp_path / "data.jsonl"
    p.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return p


def test_cli_end_to_end(tmp_path):
    from veridic.cli import app

    runner = CliRunner()
    data = _fixture(tmp_path)
    items, scores, out = tmp_path / "items.jsonl", tmp_path / "scores.jsonl", tmp_path / "report"
    r = runner.invoke(app, ["congruity", "build", "--data", str(data), "--task", "claim", "--nonfactual", "neighbour", "--out", str(items)])
    assert r.exit_code == 0, r.output
    assert "claim items from 24 examples" in r.output
    built = [json.loads(x) for x in items.read_text().splitlines()]
    assert len(built) >= 20 and all(set(b["options"]) == {"accurate", "incongruous", "nonfactual", "both"} for b in built)
    r = runner.invoke(app, ["congruity", "score", "--items", str(items), "--model", "dummy", "--out", str(scores), "--no-progress"])
    assert r.exit_code == 0, r.output
    assert (tmp_path / "scores.jsonl.lmcache").exists()
    r = runner.invoke(app, ["congruity", "report", "--scores", str(scores), "--out-dir", str(out), "--familiarity", "column", "--n-permutations", "200", "--command", "test"])
    assert r.exit_code == 0, r.output
    rep = json.loads((out / "report.json").read_text())
    assert rep["task"] == "claim" and rep["n_items"] == len(built)
    assert sum(rep["overall"]["T"].values()) == pytest.approx(1.0)
    assert rep["familiarity"]["n_familiar"] + rep["familiarity"]["n_unfamiliar"] == len(built)
    assert set(rep["tests"]["T"]) == {"accurate", "incongruous", "nonfactual", "both"} and 0 < rep["tests"]["M"]["both"]["p_permutation"] <= 1
    assert (out / "t_m.png").stat().st_size > 1000 and "| T | nonfactual |" in (out / "report.md").read_text()
    # the recurrence proxy works from the same scores without rescoring
    r = runner.invoke(app, ["congruity", "report", "--scores", str(scores), "--out-dir", str(tmp_path / "r2"), "--familiarity", "recurrence", "--no-figures", "--n-permutations", "50"])
    assert r.exit_code == 0, r.output
    # a bad option is a clear error, not a traceback
    r = runner.invoke(app, ["congruity", "build", "--data", str(data), "--task", "nope", "--out", str(items)])
    assert r.exit_code == 2 and "--task must be one of" in r.output


def test_cli_generation_scoring(tmp_path):
    from veridic.cli import app

    runner = CliRunner()
    data = _fixture(tmp_path)
    refs = tmp_path / "refs.jsonl"
    r = runner.invoke(app, ["congruity", "build", "--data", str(data), "--task", "references", "--out", str(refs)])
    assert r.exit_code == 0, r.output
    gens = tmp_path / "gen.jsonl"
    rows = [json.loads(x) for x in refs.read_text().splitlines()]
    # half the generations copy the gold, half copy the incongruous reference
    gens.write_text("\n".join(json.dumps({"id": x["id"], "generation": x["accurate"] if i % 2 else x["incongruous"]}) for i, x in enumerate(rows)) + "\n")
    scores = tmp_path / "gscores.jsonl"
    r = runner.invoke(app, ["congruity", "score", "--items", str(refs), "--generations", str(gens), "--metrics", "bleu1,rougeL", "--out", str(scores)])
    assert r.exit_code == 0, r.output
    r = runner.invoke(app, ["congruity", "report", "--scores", str(scores), "--out-dir", str(tmp_path / "g"), "--familiarity", "column", "--no-figures", "--n-permutations", "50", "--json"])
    assert r.exit_code == 0, r.output
    rep = json.loads((tmp_path / "g" / "generation-bleu1" / "report.json").read_text())
    assert rep["overall"]["T"]["accurate"] == pytest.approx(0.5) and rep["overall"]["T"]["incongruous"] == pytest.approx(0.5)
    assert rep["overall"]["precision"]["accurate"] == pytest.approx(0.5)

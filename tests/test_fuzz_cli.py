"""Fuzz the `veridic score` command line: bad files, bad options and odd text get exit code 2 and an
`error:` line, good ones exit 0 — never a traceback."""

import json
import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from veridic.cli import app

runner = CliRunner()
FUZZ = settings(max_examples=int(os.environ.get("VERIDIC_FUZZ_EXAMPLES", "40")), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


def _invoke(args):
    r = runner.invoke(app, args)
    # typer.Exit / usage errors are SystemExit; anything else escaping the command is a crash.
    assert r.exception is None or isinstance(r.exception, SystemExit), f"crash: {r.exception!r}\n{r.output}"
    assert r.exit_code in (0, 2), (r.exit_code, r.output)
    if r.exit_code == 2:
        assert "error" in r.output.lower() or "usage" in r.output.lower(), r.output
    return r


@FUZZ
@given(data=st.binary(max_size=300), suffix=st.sampled_from([".jsonl", ".csv", ".tsv", ".json", ".parquet", ".jsonl.gz"]))
def test_score_input_of_arbitrary_bytes(tiny_nli_dir, tmp_path_factory, data, suffix):
    d = tmp_path_factory.mktemp("cli")
    (d / f"in{suffix}").write_bytes(data)
    _invoke(["score", "--method", "e-c", "--model", str(tiny_nli_dir), "--input", str(d / f"in{suffix}"), "--output", str(d / "out.jsonl")])


odd_text = st.one_of(st.text(max_size=60), st.sampled_from(["", " ", "\x00", "\u200b", "NaN", "-1", "--json", "é" * 3000, "\n\n", "[]"]))


@FUZZ
@given(source=odd_text, claim=odd_text)
def test_score_one_pair_of_odd_text(tiny_nli_dir, source, claim):
    r = _invoke(["score", "--method", "e-c", "--model", str(tiny_nli_dir), "--source", source, "--claim", claim, "--json"])
    if r.exit_code == 0:
        v = json.loads(r.output)
        assert -1.0 <= v["score"] <= 1.0


@pytest.mark.parametrize(
    "extra, needle",
    [
        (["--batch-size", "0"], "batch-size"),
        (["--mc-samples", "1"], "mc_samples"),
        (["--granularity", "word"], "granularity"),
        (["--aggregation", "median"], "aggregation"),
        (["--method", "ec"], "method"),
        (["--backend", "tf"], "backend"),
        (["--batch-size", "NaN"], "batch-size"),
        (["--seed", "1e999"], "seed"),
    ],
)
def test_bad_options_are_exit_2_with_a_message(tiny_nli_dir, extra, needle):
    r = _invoke(["score", "--method", "e-c", "--model", str(tiny_nli_dir), "--source", "A cat sat.", "--claim", "A cat sat.", *extra])
    assert r.exit_code == 2 and needle in r.output, r.output


def test_unusable_paths(tiny_nli_dir, tmp_path):
    inp = tmp_path / "in.jsonl"
    inp.write_text(json.dumps({"source": "A cat sat.", "claim": "A cat sat."}) + "\n")
    (tmp_path / "d.jsonl").mkdir()
    for args, needle in (
        (["--input", str(tmp_path / "d.jsonl"), "--output", str(tmp_path / "o.jsonl")], "directory"),
        (["--input", str(inp), "--output", str(tmp_path / "o.txt")], "Cannot tell the format"),
        (["--input", str(inp), "--output", str(tmp_path / "d.jsonl")], "is a folder"),
        (["--input", str(inp), "--output", str(tmp_path / "o.jsonl"), "--engine", "spark"], "--engine"),
        (["--model", str(tmp_path / "nomodel")], "does not exist"),
    ):
        r = _invoke(["score", "--method", "e-c", "--model", str(tiny_nli_dir), *args] if args[0] != "--model"
                    else ["score", *args, "--source", "a", "--claim", "b"])
        assert r.exit_code == 2 and needle in r.output, (args, r.output)

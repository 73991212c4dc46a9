import json

import pytest
from typer.testing import CliRunner

from veridic.cli import app

runner = CliRunner()


def _run(*args):
    return runner.invoke(app, list(args), catch_exceptions=False)


def test_score_one_pair_prints_a_json_verdict(tiny_nli_dir):
    r = _run("score", "--method", "e-c", "--model", str(tiny_nli_dir), "--source", "The company hired 200 engineers in 2023.",
             "--claim", "The company laid off engineers in 2023.", "--json")
    assert r.exit_code == 0, r.output
    v = json.loads(r.output)
    for key in ("score", "e", "n", "c", "uncertainty", "label", "sentences"):
        assert key in v
    ev = v["sentences"][0]["evidence"]
    assert "The company hired 200 engineers in 2023."[ev["start"]:ev["end"]] == ev["text"]


def test_score_reads_source_from_a_file_only_when_asked(tiny_nli_dir, tmp_path):
    f = tmp_path / "src.txt"
    f.write_text("Paris is in France.", encoding="utf-8")
    for args in (("--source-file", str(f)), ("--source", f"@{f}")):
        r = _run("score", "--method", "e-c", "--model", str(tiny_nli_dir), *args, "--claim", "Paris is in France.", "--json", "--mc-samples", "3")
        assert r.exit_code == 0, r.output
        v = json.loads(r.output)
        assert v["sentences"][0]["evidence"]["text"] == "Paris is in France."
        assert v["uncertainty"] is not None


def test_inline_text_naming_an_existing_file_stays_text(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "notes.txt").write_text("Completely different words inside the file.", encoding="utf-8")
    r = _run("score", "--backend", "dummy", "--method", "e-c", "--source", "notes.txt", "--claim", "notes.txt", "--json")
    assert r.exit_code == 0, r.output
    v = json.loads(r.output)
    assert v["sentences"][0]["evidence"]["text"] == "notes.txt"  # judged against the words, not the file
    assert v["score"] > 0.5


def test_a_10k_character_paragraph_is_text_not_a_path():
    para = ("The committee approved the budget after a long debate about schools and roads. " * 130)[:10_000]
    assert len(para) == 10_000
    r = _run("score", "--backend", "dummy", "--method", "e-c", "--source", para, "--claim", "The committee approved the budget.", "--json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.output)["label"] == "supported"


def test_literal_at_sign_and_missing_at_file():
    r = _run("score", "--backend", "dummy", "--method", "e-c", "--source", "@@handle wrote this", "--claim", "@@handle wrote this", "--json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.output)["sentences"][0]["evidence"]["text"] == "@handle wrote this"
    r = _run("score", "--backend", "dummy", "--source", "@/no/such/file.txt", "--claim", "x")
    assert r.exit_code == 2 and "no file '/no/such/file.txt'" in r.output


@pytest.mark.parametrize("suffix", [".jsonl", ".csv", ".parquet"])
def test_score_a_file_keeps_input_and_adds_columns(tiny_nli_dir, tmp_path, suffix):
    from veridic.io import read_records, write_records

    rows = [
        {"id": "a", "source": "A cat sat on the mat.", "claim": "A cat sat.", "label": 1, "context": None},
        {"id": "b", "source": "Paris is in France.", "claim": "Paris is in Spain.", "label": 0, "context": None},
    ]
    inp = tmp_path / f"in{suffix}"
    write_records(inp, rows)
    out = tmp_path / "out.jsonl"
    r = _run("score", "--method", "e-c", "--model", str(tiny_nli_dir), "--input", str(inp), "--output", str(out))
    assert r.exit_code == 0, r.output
    got = list(read_records(out))
    assert [g["id"] for g in got] == ["a", "b"]
    for g in got:
        for key in ("score", "e", "n", "c", "uncertainty", "label_pred", "sentences"):
            assert key in g
        assert str(g["label"]) in ("0", "1")  # the gold label is kept


def test_score_file_without_gold_label_writes_label(tiny_nli_dir, tmp_path):
    inp = tmp_path / "in.jsonl"
    inp.write_text(json.dumps({"source": "A b c.", "claim": "A b."}) + "\n")
    out = tmp_path / "out.jsonl"
    assert _run("score", "--method", "e-c", "--model", str(tiny_nli_dir), "--input", str(inp), "--output", str(out)).exit_code == 0
    assert json.loads(out.read_text())["label"] in ("supported", "unsupported")


def test_bad_row_is_named_and_nothing_is_written(tiny_nli_dir, tmp_path):
    inp = tmp_path / "in.jsonl"
    inp.write_text(json.dumps({"source": "ok.", "claim": "ok."}) + "\n" + json.dumps({"source": "ok.", "claim": ""}) + "\n")
    out = tmp_path / "out.jsonl"
    r = _run("score", "--method", "e-c", "--model", str(tiny_nli_dir), "--input", str(inp), "--output", str(out))
    assert r.exit_code == 2
    assert "row 2" in r.output and "'claim' is blank" in r.output
    assert not out.exists()


def test_non_utf8_file_gets_a_clear_error(tiny_nli_dir, tmp_path):
    inp = tmp_path / "in.jsonl"
    inp.write_bytes(b'{"source": "ok.", "claim": "ok."}\n{"source": "caf\xe9", "claim": "x"}\n')
    r = _run("score", "--method", "e-c", "--model", str(tiny_nli_dir), "--input", str(inp), "--output", str(tmp_path / "o.jsonl"))
    assert r.exit_code == 2 and "row 2" in r.output and "UTF-8" in r.output


def test_missing_column_and_missing_model_errors(tiny_nli_dir, tmp_path):
    inp = tmp_path / "in.csv"
    inp.write_text("premise_text,claim\nA,B\n")
    r = _run("score", "--method", "e-c", "--model", str(tiny_nli_dir), "--input", str(inp), "--output", str(tmp_path / "o.jsonl"))
    assert r.exit_code == 2 and "missing column 'source'" in r.output
    r = _run("score", "--model", str(tmp_path / "nope"), "--source", "a", "--claim", "b")
    assert r.exit_code == 2 and "does not exist" in r.output


def test_usage_errors():
    r = _run("score", "--source", "only a source")
    assert r.exit_code == 2 and "--claim TEXT" in r.output
    r = _run("score")
    assert r.exit_code == 2 and "--input FILE" in r.output


@pytest.mark.parametrize("args,msg", [
    (["--mc-samples", "1"], "mc_samples must be 0 (off) or >= 2"),
    (["--method", "hybrid", "--granularity", "document"], "method='hybrid' needs granularity='sentence'"),
    (["--abstain-above", "0.1"], "abstain_above=0.1 needs an uncertainty estimate, which mc_samples=0"),
    (["--max-windows", "-2"], "max_windows must be >= 1"),
    (["--context-mode", "prefix"], "context_mode must be 'ignore' or 'premise'"),
    (["--source-aggregation", "mx"], "Unknown source_aggregation 'mx'"),
    (["--method", "overlap", "--mc-samples", "15"], "method='overlap' does not use mc_samples"),
    (["--device", "gpu"], "device must be auto (CUDA when present), cpu, cuda or cuda:N"),
    (["--dtype", "fp8"], "dtype must be one of"),
    (["--backend", "tensorrt"], "--backend must be one of auto, torch, onnx, dummy"),
])
def test_bad_arguments_fail_before_any_model_loads(monkeypatch, args, msg):
    from veridic.registry import BACKENDS, BackendSpec

    def boom(*a, **k):
        raise AssertionError("a model was loaded before the arguments were checked")

    monkeypatch.setattr(BACKENDS, "_entries", {k: BackendSpec(name=k, loader=boom, summary="") for k in ("torch", "onnx", "dummy")})
    r = _run("score", "--source", "a b.", "--claim", "a.", *args)
    assert r.exit_code == 2 and msg in r.output, r.output


def test_device_cuda_without_cuda_is_refused_before_loading(monkeypatch):
    import torch

    from veridic.registry import BACKENDS, BackendSpec

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    # calling a loader would raise TypeError
    monkeypatch.setattr(BACKENDS, "_entries", {k: BackendSpec(name=k, loader=None, summary="") for k in ("torch", "onnx", "dummy")})
    r = _run("score", "--source", "a b.", "--claim", "a.", "--device", "cuda")
    assert r.exit_code == 2 and "CUDA is not available" in r.output


def test_device_auto_and_cuda_pick_the_gpu_when_cuda_is_there(monkeypatch):
    import torch

    from veridic.nli._backend import check_device

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)
    assert check_device("auto") == "cuda" and check_device("cuda:1") == "cuda:1"
    with pytest.raises(Exception, match="names GPU 2, but this machine has 2"):
        check_device("cuda:2")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert check_device("auto") == "cpu"


def test_the_torch_backend_moves_the_model_to_the_chosen_device(monkeypatch, tiny_nli_dir):
    # The CUDA branch on a CPU machine: availability mocked, and the move recorded instead of performed.
    import torch

    from veridic.nli._backend import TorchNLIBackend

    moved = []
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.nn.Module, "to", lambda self, *a, **k: moved.append(str(a[0])) or self)
    b = TorchNLIBackend(tiny_nli_dir, device="auto", dtype="float32")
    assert str(b.device) == "cuda" and moved == ["cuda"] and b.describe()["device"] == "cuda"


def test_version_and_short_help():
    assert _run("--version").output.startswith("veridic ")
    assert "Score a claim against a source" in _run("score", "-h").output


def test_stdin_to_stdout_needs_a_format_and_honours_limit(tmp_path):
    rows = "".join(json.dumps({"id": str(i), "source": "A cat sat on the mat.", "claim": "A cat sat."}) + "\n" for i in range(5))
    r = runner.invoke(app, ["score", "--backend", "dummy", "--method", "e-c", "-i", "-", "-o", "-"], input=rows)
    assert r.exit_code == 2 and "add --format jsonl, csv or tsv" in r.output
    r = runner.invoke(app, ["score", "--backend", "dummy", "--method", "e-c", "-i", "-", "-o", "-", "--format", "jsonl", "--limit", "3", "-q"], input=rows)
    assert r.exit_code == 0, r.output
    got = [json.loads(line) for line in r.stdout.splitlines()]
    assert [g["id"] for g in got] == ["0", "1", "2"] and all(g["label"] == "supported" for g in got)


def test_every_scorer_option_reaches_the_scorer(monkeypatch):
    from veridic import factory

    seen = {}
    real = factory.load_scorer

    def spy(config=None, **kw):
        seen["config"] = config
        return real(config, **kw)

    monkeypatch.setattr(factory, "load_scorer", spy)
    r = _run("score", "--backend", "dummy", "--method", "e-c", "--mc-samples", "3", "--source-aggregation", "first", "--claim-aggregation", "min",
             "--window-sentences", "3", "--max-windows", "0", "--no-whole-source", "--context-mode", "premise", "--threshold", "0.2",
             "--abstain-above", "0.5", "--seed", "7", "--source", "A b. C d.", "--claim", "A b.", "--json")
    assert r.exit_code == 0, r.output
    c = seen["config"]
    assert (c.method, c.mc_samples, c.source_aggregation, c.claim_aggregation, c.window_sentences, c.max_windows, c.whole_source,
            c.context_mode, c.threshold, c.abstain_above, c.seed) == ("e-c", 3, "first", "min", 3, None, False, "premise", 0.2, 0.5, 7)


def test_config_file_and_flags(tmp_path):
    cfg = tmp_path / "scorer.yaml"
    cfg.write_text("method: e-c\ngranularity: document\n", encoding="utf-8")
    r = _run("score", "--backend", "dummy", "--config", str(cfg), "--source", "A b. C d.", "--claim", "A b.", "--json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.output)["method"] == "e-c-doc"
    cfg.write_text("method: e-c\nmax_window: 3\n", encoding="utf-8")
    r = _run("score", "--backend", "dummy", "--config", str(cfg), "--source", "A b.", "--claim", "A b.")
    assert r.exit_code == 2 and "Unknown scorer option(s) 'max_window'" in r.output and "Did you mean 'max_windows'" in r.output
    cfg.write_text("method: e-c\nwindow_sentences: [1, 2]\n", encoding="utf-8")
    r = _run("score", "--backend", "dummy", "--config", str(cfg), "--source", "A b. C d.", "--claim", "A b.", "--json")
    assert r.exit_code == 0, r.output
    r = _run("score", "--backend", "dummy", "--window-sentences", "1,x", "--source", "A b.", "--claim", "A b.")
    assert r.exit_code == 2 and "--window-sentences takes a whole number or comma-separated ones" in r.output


def test_lazy_command_help_strings_match_the_subcommands():
    # The root help lists lazy commands without importing them; the words must be the commands' own.
    import typer

    from veridic.cli import LAZY_COMMANDS

    for name, (module, attr, is_app, help_text) in LAZY_COMMANDS.items():
        obj = getattr(__import__(module, fromlist=[attr]), attr)
        own = obj.info.help if is_app else (obj.__doc__ or "").strip().splitlines()[0]
        assert own.startswith(help_text.rstrip(".")) or help_text.startswith(own.rstrip(".")), (name, own, help_text)
        assert isinstance(obj, typer.Typer) == is_app


def test_window_sentences_flag_takes_one_length_or_several():
    from veridic.cli_options import scorer_config

    assert scorer_config(None, method="e-c", window_sentences="2,1").window_sentences == (1, 2)
    assert scorer_config(None, method="e-c", window_sentences="3").window_sentences == 3

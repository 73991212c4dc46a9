"""What `veridic serve` loads with no flags: the library's default backend (auto) and an express lane.

Each test runs the real `serve` command with the HTTP server replaced by a stub that keeps the app, so
the scorers it built (and their backends) can be inspected and called.
"""

from __future__ import annotations

import pytest

pytest.importorskip("fastapi")
from fastapi.testclient import TestClient  # noqa: E402
from typer.testing import CliRunner  # noqa: E402

PAIR = {"source": "A cat sat on the mat in Paris.", "claim": "A cat sat."}


@pytest.fixture()
def serve(monkeypatch):
    """Run `veridic serve ARGS`; returns (exit code, output, the create_app keywords, the app)."""
    import veridic.service as service
    import veridic.serving as server
    from veridic.cli import app

    built: dict = {}
    real = service.create_app

    def capture(**kw):
        built.update(kw)
        built["app"] = real(**kw)
        return built["app"]

    monkeypatch.setattr(service, "create_app", capture)
    monkeypatch.setattr(server, "serve_app", lambda app, **kw: None)

    def run(*args: str):
        built.clear()
        r = CliRunner().invoke(app, ["serve", *args])
        return r.exit_code, r.output, dict(built)

    return run


def _kind(scorer) -> str:
    return scorer.backend.describe()["backend"]


def test_serve_defaults_to_the_auto_backend_and_an_express_lane(serve, tiny_int8_dir):
    code, out, built = serve("--model", str(tiny_int8_dir))
    assert code == 0, out
    main, express = built["scorer"], built["express_scorer"]
    assert _kind(main) == "onnx" and main.backend.file.name == "model.int8.onnx"  # what `veridic score` loads
    assert express is not None and _kind(express) == "onnx"
    assert express.backend is not main.backend  # its own copy: two threads never share a session or tokenizer
    assert main.name == express.name == "hybrid"


def test_the_served_default_gives_the_library_default_verdict(serve, tiny_int8_dir):
    import veridic

    code, out, built = serve("--model", str(tiny_int8_dir))
    assert code == 0, out
    with TestClient(built["app"]) as c:
        r = c.post("/v1/score", json={"pairs": [PAIR]})
    assert r.status_code == 200, r.text
    lib = veridic.score(sources=[PAIR["source"]], claims=[PAIR["claim"]], model=tiny_int8_dir)[0]
    assert r.json()["verdicts"][0] == lib.to_dict()


def test_no_express_lane_loads_one_copy(serve, tiny_int8_dir):
    code, out, built = serve("--model", str(tiny_int8_dir), "--no-express-lane")
    assert code == 0, out
    assert built["express_scorer"] is None and _kind(built["scorer"]) == "onnx"


def test_max_mc_samples_makes_auto_load_torch_so_requests_can_ask_for_dropout(serve, tiny_int8_dir):
    code, out, built = serve("--model", str(tiny_int8_dir), "--method", "e-c", "--max-mc-samples", "3")
    assert code == 0, out
    assert _kind(built["scorer"]) == "torch" and _kind(built["express_scorer"]) == "torch"
    with TestClient(built["app"]) as c:
        r = c.post("/v1/score", json={"pairs": [PAIR], "options": {"mc_samples": 3}})
    assert r.status_code == 200, r.text
    assert r.json()["verdicts"][0]["uncertainty"] is not None


def test_express_lane_with_mc_dropout_and_with_the_dummy_backend(serve, tiny_int8_dir):
    code, out, built = serve("--model", str(tiny_int8_dir), "--method", "e-c", "--mc-samples", "2")
    assert code == 0, out
    assert _kind(built["scorer"]) == "torch" and built["express_scorer"].mc_samples == 2
    code, out, built = serve("--backend", "dummy", "--method", "e-c")
    assert code == 0, out
    assert _kind(built["express_scorer"]) == "dummy" and built["express_scorer"].backend is not built["scorer"].backend
    with TestClient(built["app"]) as c:
        assert c.post("/v1/score", json={"pairs": [PAIR]}).status_code == 200


def test_a_model_free_method_gets_no_express_copy(serve):
    code, out, built = serve("--method", "overlap")
    assert code == 0, out
    assert built["express_scorer"] is None
    with TestClient(built["app"]) as c:
        assert c.post("/v1/score", json={"pairs": [PAIR]}).status_code == 200


def test_build_scorer_defaults_to_auto(tiny_int8_dir):
    from veridic.service import load_service_scorer

    assert _kind(load_service_scorer("e-c", model=tiny_int8_dir, reuse=False)) == "onnx"
    assert _kind(load_service_scorer("e-c", model=tiny_int8_dir, reuse=False, max_mc_samples=2)) == "torch"
    assert _kind(load_service_scorer("e-c", model=tiny_int8_dir, backend="torch", reuse=False)) == "torch"


def test_served_detector_marks_phrases_by_default_and_sentences_on_request(serve, tiny_int8_dir, nlp):
    code, out, built = serve("--model", str(tiny_int8_dir), "--detect")
    assert code == 0, out
    assert built["detector"].phrase_spans is True  # as `veridic detect` and the library
    code, out, built = serve("--model", str(tiny_int8_dir), "--detect", "--sentence-spans")
    assert code == 0, out
    assert built["detector"].phrase_spans is False
    with TestClient(built["app"]) as c:
        r = c.post("/v1/detect", json={"passage": "A cat sat in Spain.", "evidence": "A cat sat on the mat in Paris."})
    assert r.status_code == 200, r.text
    spans = r.json()["spans"]
    assert spans and all("edit_range" in s for s in spans)  # "Spain" is not in the evidence


def test_the_structure_check_does_not_load_torch_beside_the_onnx_backend():
    # thinc imports torch when spaCy is imported (~180 MiB resident); the default ONNX service never needs it.
    import subprocess
    import sys

    pytest.importorskip("spacy")
    code = ("import sys; from veridic.nli._structure import load_structure_check; sc = load_structure_check(); "
            "found = sc.conflicts([('YouTube acquired Google.', 'Google acquired YouTube.')]); "
            "print('torch' in sys.modules, found[0] is not None and found[0].kind); import torch; print(torch.__name__)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["False", "swap", "torch"]  # no torch for the parse; torch still importable afterwards

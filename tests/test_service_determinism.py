"""Determinism: identical scores across runs and processes; batch composition and thread count move
only the last float32 bits (tolerance 1e-6; measured differences in docs/service_and_ray.md); the service
with the real embedded model answers what `veridic.score` answers."""

import json
import subprocess
import sys

import pytest

from veridic import ScorerConfig, build_scorer

SOURCES = ["The company hired 200 engineers in 2023. It is in Paris.", "A cat sat on the mat.", "Paris is in France.",
           "The cat sat. The company hired a cat. Engineers sat in Paris.", "a b c d e f g h i j k l m n o p q r s t u v w x y z"]
CLAIMS = ["The company laid off engineers.", "A cat sat. The mat was red.", "Paris is in Spain.", "The company hired engineers in Paris.", "a."]
TOL = 1e-6


def _scores(backend, **kw):
    return [v.score for v in build_scorer(ScorerConfig(method="e-c", structure_check=False, **kw), backend=backend).score(sources=SOURCES, claims=CLAIMS)]


def test_same_process_runs_are_identical(tiny_backend):
    assert _scores(tiny_backend) == _scores(tiny_backend)


def test_batch_size_and_one_call_per_pair_stay_within_tolerance(tiny_nli_dir, tiny_backend):
    from veridic.nli import load_backend

    ref = _scores(tiny_backend)
    for bs in (1, 3, 64):
        got = _scores(load_backend(tiny_nli_dir, kind="torch", dtype="float32", batch_size=bs))
        assert max(abs(a - b) for a, b in zip(ref, got)) <= TOL
    sc = build_scorer(ScorerConfig(method="e-c", structure_check=False), backend=tiny_backend)
    alone = [sc.score(sources=[s], claims=[c])[0].score for s, c in zip(SOURCES, CLAIMS)]
    assert max(abs(a - b) for a, b in zip(ref, alone)) <= TOL


CHILD = """
import json, sys, torch
torch.set_num_threads(int(sys.argv[2]))
from veridic import ScorerConfig, build_scorer
from veridic.nli import load_backend
b = load_backend(sys.argv[1], kind="torch", dtype="float32", batch_size=8)
print(json.dumps([v.score for v in build_scorer(ScorerConfig(method="e-c", structure_check=False), backend=b).score(sources=json.loads(sys.argv[3]), claims=json.loads(sys.argv[4]))]))
"""


def test_other_processes_give_identical_scores(tiny_nli_dir, tiny_backend):
    import torch

    ref = _scores(tiny_backend)
    runs = [json.loads(subprocess.run([sys.executable, "-c", CHILD, str(tiny_nli_dir), str(torch.get_num_threads()), json.dumps(SOURCES), json.dumps(CLAIMS)],
                                      capture_output=True, text=True, check=True).stdout.strip().splitlines()[-1]) for _ in range(2)]
    assert runs[0] == runs[1] == ref  # bit for bit, given the same thread count


@pytest.mark.integration
def test_service_with_the_embedded_model_answers_what_the_library_answers():
    pytest.importorskip("fastapi")
    from fastapi.testclient import TestClient

    import veridic
    from veridic.service import create_app, load_service_scorer

    src, clm = "The company hired 200 engineers in 2023.", "The company laid off engineers in 2023."
    with TestClient(create_app(scorer=load_service_scorer())) as c:
        r = c.post("/v1/score", json={"pairs": [{"source": src, "claim": clm}]})
        assert r.status_code == 200, r.text
        v = r.json()["verdicts"][0]
        models = c.get("/v1/models").json()
    # One default everywhere: the service and the library both load backend 'auto' (ONNX int8 on the CPU).
    lib = veridic.score(sources=[src], claims=[clm])[0]
    assert v == json.loads(json.dumps(lib.to_dict()))
    assert models["scorer"]["backend"]["backend"] == "onnx"
    assert v["label"] == "unsupported" and v["method"] == "hybrid"
    assert models["scorer"]["model"] == "veridic-nli-minilm-l6#model.int8.onnx" and models["scorer"]["revision"]

"""PMI scoring and decoding, and the factual-ablation probe, on the dummy and a tiny random LM."""

from __future__ import annotations

import numpy as np
import pytest

from veridic.ablation._data import AblationExample
from veridic.ablation._metrics import LOG_100
from veridic.ablation._pmi import PMILogitsProcessor, pmi_generate, pmi_logprobs, pmi_sequence_logprob
from veridic.ablation._probe import FactualAblationProbe
from veridic.errors import ConfigError
from veridic.lm import CachingLM, DummyLM, GenerationRequest


def _lsm(x):
    x = np.asarray(x, dtype=float)
    return x - np.log(np.exp(x - x.max(-1, keepdims=True)).sum(-1, keepdims=True)) - x.max(-1, keepdims=True)


def test_pmi_formulas_match_the_paper():
    rng = np.random.default_rng(0)
    g, u = _lsm(rng.normal(size=(3, 7))), _lsm(rng.normal(size=(3, 7)))
    a = 0.3
    add = pmi_logprobs(grounded=g, ungrounded=u, alpha=a, mode="add")
    assert np.allclose(add, _lsm(g + a * (g - u)))  # eq. 6
    interp = pmi_logprobs(grounded=g, ungrounded=u, alpha=a, mode="interp")
    assert np.allclose(interp, _lsm((1 - a) * g + a * (g - u)))  # eq. 5
    assert np.allclose(pmi_logprobs(grounded=g, ungrounded=u, alpha=0.0, mode="add"), g)
    assert pmi_sequence_logprob(grounded=g, ungrounded=u, token_ids=[1, 2, 3], alpha=0.0) == pytest.approx(g[0, 1] + g[1, 2] + g[2, 3])
    with pytest.raises(ConfigError, match="interp"):
        pmi_logprobs(grounded=g, ungrounded=u, alpha=1.5, mode="interp")
    with pytest.raises(ConfigError, match="Unknown PMI mode"):
        pmi_logprobs(grounded=g, ungrounded=u, alpha=0.1, mode="mul")  # type: ignore[arg-type]


def test_processor_equals_manual_combination_on_dummy():
    torch = pytest.importorskip("torch")
    lm = DummyLM()
    grounded, ungrounded = "G: 7 miners\nC:", "C:"
    proc = PMILogitsProcessor(streams=[lm.stream(ungrounded)], alpha=0.5, mode="add")
    ids = torch.tensor([[0] + lm.tok_encode(grounded)])
    raw = torch.tensor(lm._next_logits(ids[0].tolist(), ids.shape[1]), dtype=torch.float32)[None]
    out = proc(ids, raw)
    g = torch.log_softmax(raw[0], -1)
    u = torch.as_tensor(lm.stream(ungrounded).logprobs())
    assert torch.allclose(out[0], torch.log_softmax(g + 0.5 * (g - u), -1), atol=1e-5)
    # Generation with alpha=0 is plain greedy decoding; with alpha>0 it is deterministic too.
    plain = lm.generate([GenerationRequest(context=grounded, max_new_tokens=8)])[0]
    assert pmi_generate(backend=lm, grounded_prompt=grounded, ungrounded_prompt=ungrounded, alpha=0.0, max_new_tokens=8, stop=()) == plain
    a = pmi_generate(backend=lm, grounded_prompt=grounded, ungrounded_prompt=ungrounded, alpha=0.5, max_new_tokens=8, stop=())
    assert a == pmi_generate(backend=lm, grounded_prompt=grounded, ungrounded_prompt=ungrounded, alpha=0.5, max_new_tokens=8, stop=())


def test_processor_inside_hf_generate_with_kv_cache():
    torch = pytest.importorskip("torch")
    from test_lm_backend import tiny_lm

    torch.set_num_threads(1)
    lm = tiny_lm()
    grounded, ungrounded = "Four miners were stuck.\nThe mine.\n", "The mine.\n"
    res = pmi_generate(backend=lm, grounded_prompt=grounded, ungrounded_prompt=ungrounded, alpha=0.5, max_new_tokens=5, stop=())
    # Recompute every step without caches: argmax of log_softmax(g + a (g - u)).
    gi, ui, out = [0] + lm.tok_encode(grounded), [0] + lm.tok_encode(ungrounded), []
    for _ in range(len(res.token_ids)):
        with torch.no_grad():
            g = torch.log_softmax(lm.model(input_ids=torch.tensor([gi])).logits[0, -1], -1)
            u = torch.log_softmax(lm.model(input_ids=torch.tensor([ui])).logits[0, -1], -1)
        t = int(torch.argmax(g + 0.5 * (g - u)))
        out.append(t)
        gi.append(t)
        ui.append(t)
    assert list(res.token_ids) == out


EXAMPLES = [
    AblationExample(grounding="Four miners: 4 men, 4 days.", ablated_grounding="Two miners: 2 men, 2 days.", context="Mine news.", target=" 4 miners 4", id="a:orig", group="a"),
    AblationExample(grounding="Two miners: 2 men, 2 days.", ablated_grounding="Four miners: 4 men, 4 days.", context="Mine news.", target=" 2 miners 2", id="a:edit", group="a"),
    AblationExample(grounding="It was in June, 1999.", ablated_grounding="It was in July, 1999.", context="History.", target=" June", id="b:orig", group="b"),
]


def test_probe_on_dummy_matches_direct_loglikelihoods():
    lm = DummyLM()
    rep = FactualAblationProbe(examples=EXAMPLES, margins=(0.0, LOG_100), n_resamples=50)(lm)
    from veridic.lm import LoglikelihoodRequest

    for ex, s in zip(EXAMPLES, rep.examples):
        a, b = lm.loglikelihood(
            [LoglikelihoodRequest(context=f"{g}\n{ex.context}\n", continuation=ex.target + "\n") for g in (ex.grounding, ex.ablated_grounding)]
        )
        assert s.differences["lm"] == pytest.approx(a.logprob - b.logprob)
    assert rep.result("lm").metrics[0].value == pytest.approx(np.mean([s.differences["lm"] > 0 for s in rep.examples]))
    assert rep.to_dict()["config"]["margins"] == [0.0, LOG_100]
    assert len(rep.config_hash) == 12


def test_probe_pmi_scores_and_alpha_zero_identity():
    lm = DummyLM()
    rep = FactualAblationProbe(examples=EXAMPLES, pmi_alphas=(0.0, 0.5), pmi_modes=("add", "interp"), n_resamples=20)(lm)
    assert [r.method for r in rep.results] == ["lm", "pmi-add@0", "pmi-add@0.5", "pmi-interp@0", "pmi-interp@0.5"]
    plain = FactualAblationProbe(examples=EXAMPLES, n_resamples=20)(lm)
    for s, p in zip(rep.examples, plain.examples):
        assert s.differences["pmi-add@0"] == pytest.approx(s.differences["lm"], abs=1e-4)
        assert s.differences["lm"] == pytest.approx(p.differences["lm"], abs=1e-4)  # distributions path == loglikelihood path
        assert s.logp_ungrounded is not None
    # Same input, same numbers.
    again = FactualAblationProbe(examples=EXAMPLES, pmi_alphas=(0.0, 0.5), pmi_modes=("add", "interp"), n_resamples=20)(lm)
    assert again.to_dict() | {"seconds": 0} == rep.to_dict() | {"seconds": 0}


def test_probe_uses_the_cache():
    inner = DummyLM()
    lm = CachingLM(inner)
    FactualAblationProbe(examples=EXAMPLES, n_resamples=10)(lm)
    calls = inner.calls
    FactualAblationProbe(examples=EXAMPLES, n_resamples=10)(lm)
    assert inner.calls == calls


def test_probe_validates():
    with pytest.raises(ConfigError, match="Unknown PMI mode"):
        FactualAblationProbe(examples=EXAMPLES, pmi_modes=("mix",))
    with pytest.raises(ConfigError, match="Unknown template"):
        FactualAblationProbe(examples=EXAMPLES, template="nope")

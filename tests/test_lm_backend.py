"""The causal-LM backend protocol on a tiny random Llama: log-likelihoods equal a hand computation."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from veridic.errors import ConfigError, InputError, ModelLoadError
from veridic.lm import CachingLM, DummyLM, GenerationRequest, HFCausalLM, LanguageModel, LoglikelihoodRequest


def make_tiny_tokenizer():
    """Byte-level BPE with no merges: every byte is a token, decoding is exact."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    alphabet = sorted(pre_tokenizers.ByteLevel.alphabet())
    vocab = {"<|endoftext|>": 0, **{c: i + 1 for i, c in enumerate(alphabet)}}
    tok = Tokenizer(models.BPE(vocab=vocab, merges=[]))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    return PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|endoftext|>", bos_token="<|endoftext|>", pad_token="<|endoftext|>")


def make_tiny_llama(seed: int = 0, max_positions: int = 256):
    from transformers import LlamaConfig, LlamaForCausalLM

    cfg = LlamaConfig(
        vocab_size=257,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=max_positions,
        bos_token_id=0,
        eos_token_id=0,
        pad_token_id=0,
        tie_word_embeddings=False,
    )
    torch.manual_seed(seed)
    return LlamaForCausalLM(cfg).eval()


def tiny_lm(**kwargs) -> HFCausalLM:
    kwargs.setdefault("batch_size", 3)
    return HFCausalLM(model=make_tiny_llama(), tokenizer=make_tiny_tokenizer(), model_id="tiny-llama", **kwargs)


def save_tiny_lm(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    make_tiny_llama().save_pretrained(path)
    make_tiny_tokenizer().save_pretrained(path)
    return path


@pytest.fixture
def slow_selected(request):
    # The repository does not deselect slow tests by default; these load the
    # real 135M model (and one dequantises it, ~40 s), so they run only on request.
    if "slow" not in (request.config.getoption("markexpr") or "") or "not slow" in request.config.getoption("markexpr"):
        pytest.skip("loads the real SmolLM2: run with -m slow")


@pytest.fixture(scope="module")
def lm() -> HFCausalLM:
    torch.set_num_threads(1)
    return tiny_lm()


def manual_logprobs(lm: HFCausalLM, context: str, continuation: str) -> tuple[float, list[float], bool]:
    ctx = [0] + lm.tok_encode(context)
    cont = lm.tok_encode(continuation)
    ids = torch.tensor([ctx + cont])
    with torch.no_grad():
        logits = lm.model(input_ids=ids).logits[0]
    lp = torch.log_softmax(logits.float(), dim=-1)
    toks = [float(lp[len(ctx) - 1 + i, t]) for i, t in enumerate(cont)]
    greedy = all(int(lp[len(ctx) - 1 + i].argmax()) == t for i, t in enumerate(cont))
    return sum(toks), toks, greedy


REQS = [
    LoglikelihoodRequest(context="The cat sat on the", continuation=" mat."),
    LoglikelihoodRequest(context="A", continuation=" much longer continuation here"),
    LoglikelihoodRequest(context="", continuation="no context at all"),
    LoglikelihoodRequest(context="Four miners were trapped underground for days.", continuation=" 4"),
]


def test_loglikelihood_equals_hand_computation_from_logits(lm):
    got = lm.loglikelihood(REQS)  # batch_size=3: mixed lengths, left padding
    for req, res in zip(REQS, got):
        total, toks, greedy = manual_logprobs(lm, req.context, req.continuation)
        assert res.logprob == pytest.approx(total, abs=1e-4)
        assert np.allclose(res.token_logprobs, toks, atol=1e-4)
        assert res.is_greedy == greedy
        assert res.token_ids == tuple(lm.tok_encode(req.continuation))
        assert math.isclose(sum(res.token_logprobs), res.logprob, abs_tol=1e-6)
        assert res.context_tokens_dropped == 0


def test_batching_does_not_change_numbers(lm):
    one = HFCausalLM(model=lm.model, tokenizer=lm.tokenizer, model_id="tiny", batch_size=1)
    a = [r.logprob for r in one.loglikelihood(REQS)]
    b = [r.logprob for r in lm.loglikelihood(REQS)]
    assert np.allclose(a, b, atol=1e-5)
    assert b == [r.logprob for r in lm.loglikelihood(REQS)]  # same input, same numbers


def test_next_token_logprobs_match_loglikelihood(lm):
    dists = lm.next_token_logprobs(REQS)
    for d, res in zip(dists, lm.loglikelihood(REQS)):
        assert d.shape == (len(res.token_ids), lm.vocab_size)
        assert np.allclose(np.exp(d).sum(axis=1), 1.0, atol=1e-4)
        assert d[np.arange(len(res.token_ids)), list(res.token_ids)].sum() == pytest.approx(res.logprob, abs=1e-4)


def test_left_truncation_keeps_start_token_and_recent_context():
    small = tiny_lm(max_length=16)
    req = LoglikelihoodRequest(context="0123456789abcdefghij", continuation="XYZ")
    res = small.loglikelihood([req])[0]
    assert res.n_context_tokens + len(res.token_ids) == 16
    assert res.context_tokens_dropped == 21 + 3 - 16
    total, _, _ = manual_logprobs(small, "0123456789abcdefghij"[res.context_tokens_dropped :], "XYZ")
    assert res.logprob == pytest.approx(total, abs=1e-4)


def test_stream_matches_full_forward(lm):
    s = lm.stream("The cat")
    s.push(lm.tok_encode(" sat"))
    ids = torch.tensor([[0] + lm.tok_encode("The cat sat")])
    with torch.no_grad():
        ref = torch.log_softmax(lm.model(input_ids=ids).logits[0, -1], dim=-1)
    assert torch.allclose(s.logprobs(), ref, atol=1e-5)


def test_greedy_generation_is_argmax_and_deterministic(lm):
    req = GenerationRequest(context="The cat", max_new_tokens=6)
    a = lm.generate([req])[0]
    ids = [0] + lm.tok_encode("The cat")
    for _ in range(6):
        with torch.no_grad():
            nxt = int(lm.model(input_ids=torch.tensor([ids])).logits[0, -1].argmax())
        if nxt == 0:
            break
        ids.append(nxt)
    assert list(a.token_ids[: len(ids) - 3 - 5]) == ids[1 + 7 :][: len(a.token_ids)]
    assert lm.generate([req])[0] == a


def test_seeded_sampling_is_reproducible(lm):
    req = GenerationRequest(context="The cat", max_new_tokens=8, do_sample=True, top_p=0.9, seed=7)
    assert lm.generate([req])[0] == lm.generate([req])[0]
    other = lm.generate([GenerationRequest(context="The cat", max_new_tokens=8, do_sample=True, top_p=0.9, seed=8)])[0]
    assert other.token_ids != lm.generate([req])[0].token_ids or len(other.token_ids) < 3


def test_stop_strings_cut_the_text():
    lm = DummyLM()
    full = lm.generate([GenerationRequest(context="ab", max_new_tokens=20)])[0].text
    assert full, "the dummy always generates something"
    stop = full[2:4] if len(full) >= 4 else full[-1]
    cut = lm.generate([GenerationRequest(context="ab", max_new_tokens=20, stop=(stop,))])[0]
    assert cut.finish_reason == "stop" and stop not in cut.text


def test_from_pretrained_directory(tmp_path, lm):
    loaded = HFCausalLM.from_pretrained(save_tiny_lm(tmp_path / "tiny"), batch_size=2)
    assert loaded.kind == "directory"
    assert loaded.describe()["model"].endswith("tiny")
    assert np.allclose([r.logprob for r in loaded.loglikelihood(REQS)], [r.logprob for r in lm.loglikelihood(REQS)], atol=1e-5)


def test_errors_say_what_is_wrong(tmp_path):
    with pytest.raises(InputError, match="continuation must be non-empty"):
        LoglikelihoodRequest(context="a", continuation="")
    with pytest.raises(InputError, match="stop must be a tuple"):
        GenerationRequest(context="a", stop="\n")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="dtype must be one of"):
        tiny_lm(dtype="int8")
    with pytest.raises(ModelLoadError, match="does not exist"):
        HFCausalLM.from_pretrained(tmp_path / "nope.gguf")
    with pytest.raises(ModelLoadError, match="no config.json"):
        HFCausalLM.from_pretrained(tmp_path)
    with pytest.raises(InputError, match="list of LoglikelihoodRequest"):
        tiny_lm().loglikelihood("text")  # type: ignore[arg-type]


def test_backends_satisfy_the_protocol(lm):
    assert isinstance(lm, LanguageModel)
    assert isinstance(DummyLM(), LanguageModel)
    assert isinstance(CachingLM(DummyLM()), LanguageModel)


def test_caching_wrapper_persists_to_disk(tmp_path):
    inner = DummyLM()
    path = tmp_path / "lm-cache"
    first = CachingLM(inner, path=path).loglikelihood(REQS)
    calls = inner.calls
    again = CachingLM(inner, path=path)
    assert again.loglikelihood(REQS) == first
    assert inner.calls == calls and again.hits == len(REQS)
    req = GenerationRequest(context="ab", max_new_tokens=4)
    cached = CachingLM(inner, path=path)
    assert cached.generate([req]) == cached.generate([req]) == inner.generate([req])
    assert cached.hits == 1


@pytest.mark.slow
def test_embedded_smollm2_golden_numbers(slow_selected):
    from veridic.lm._embedded import locate_gguf

    try:
        locate_gguf()
    except ModelLoadError as exc:
        pytest.skip(str(exc))
    torch.set_num_threads(1)
    lm = HFCausalLM.from_pretrained("embedded")
    assert lm.describe()["parameters"] == 134_515_008
    res = lm.loglikelihood([LoglikelihoodRequest(context="The capital of France is", continuation=" Paris.")])[0]
    assert res.is_greedy
    # Conditioned on <|endoftext|> (the embedded entry's start token), float32 on CPU.
    assert res.logprob == pytest.approx(-0.521, abs=0.02)


@pytest.mark.slow
def test_gguf_dequantisation_cache_reloads_identical_logits(tmp_path, slow_selected):
    from veridic.lm._embedded import cached_gguf_dir, embedded_model_dir, locate_gguf

    try:
        gguf = locate_gguf()
    except ModelLoadError as exc:
        pytest.skip(str(exc))
    torch.set_num_threads(1)
    folder = cached_gguf_dir(gguf, name="smollm2-test", cache_dir=tmp_path)
    assert (folder / "model.safetensors").is_file() and (folder / "veridic_model.json").is_file()
    assert cached_gguf_dir(gguf, name="smollm2-test", cache_dir=tmp_path) == folder  # second call: no work
    a = HFCausalLM.from_pretrained(folder).loglikelihood(REQS[:1])[0].logprob
    b = HFCausalLM.from_pretrained(embedded_model_dir()).loglikelihood(REQS[:1])[0].logprob
    assert a == pytest.approx(b, abs=1e-5)

"""Grounded fine-tuning with loss truncation (paper 001 §3.3.1) on a tiny random Llama: the three variants train, truncate and reload."""

from __future__ import annotations

import json

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")
tokenizers = pytest.importorskip("tokenizers")

from conftest import DATA  # noqa: E402

from veridic.ablation._finetune import GroundedExample, LTTrainConfig, load_grounded, train_grounded  # noqa: E402
from veridic.errors import ConfigError, DataFormatError, InputError  # noqa: E402

NAMES = ["Ann", "Bo", "Cy", "Di", "Ed", "Flo"]
JOBS = ["senator", "drummer", "chef", "poet", "pilot", "nurse"]


def _examples(n: int = 24) -> list[GroundedExample]:
    out = []
    for i in range(n):
        name, job = NAMES[i % 6], JOBS[(i * 5) % 6]
        out.append(GroundedExample(grounding=f"{name}: {job}; born in {1950 + i}.", context=f"Story {i}.", target=f"{name}, the {job}, spoke.", id=str(i)))
    return out


@pytest.fixture(scope="module")
def tiny_lm(tmp_path_factory):
    from tokenizers import ByteLevelBPETokenizer
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    folder = tmp_path_factory.mktemp("tiny-llama")
    bpe = ByteLevelBPETokenizer()
    corpus = [f"{e.grounding}\n\n{e.context}\n\n{e.target}\n" for e in _examples(60)]
    bpe.train_from_iterator(corpus, vocab_size=300, min_frequency=1, special_tokens=["<|endoftext|>"])
    tok = PreTrainedTokenizerFast(tokenizer_object=bpe._tokenizer, eos_token="<|endoftext|>", pad_token="<|endoftext|>")
    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=len(tok), hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2, num_key_value_heads=2,
                      max_position_embeddings=256, eos_token_id=tok.eos_token_id, bos_token_id=tok.eos_token_id, pad_token_id=tok.eos_token_id)
    LlamaForCausalLM(cfg).save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder


def _cfg(tiny_lm, **kw):
    base = dict(model=str(tiny_lm), max_length=64, batch_size=4, learning_rate=5e-3, max_steps=8, max_minutes=5, min_history=8, seed=0, bf16=False, save_steps=4)
    return LTTrainConfig(**{**base, **kw})


def test_basic_learns_and_reloads_for_the_probe(tiny_lm, tmp_path):
    from veridic.ablation._data import AblationExample
    from veridic.ablation._probe import FactualAblationProbe
    from veridic.lm._hf import HFCausalLM

    res = train_grounded(examples=_examples(), out_dir=tmp_path / "basic", config=_cfg(tiny_lm, variant="basic", max_steps=24))
    assert res.steps == 24 and res.kept_fraction == 1.0 and res.dropped_by_loss == 0 and not res.stopped_by_budget
    info = json.loads((tmp_path / "basic" / "model" / "veridic_model.json").read_text())
    assert info["start_token"] == "<|endoftext|>" and info["fine_tune"]["variant"] == "basic"
    lm = HFCausalLM.from_pretrained(tmp_path / "basic" / "model")
    start = HFCausalLM.from_pretrained(tiny_lm)
    ex = [AblationExample(grounding="Ann: senator; born in 1950.", ablated_grounding="Ann: drummer; born in 1950.", context="Story 0.", target="Ann, the senator, spoke.", id="a")]
    before = FactualAblationProbe(examples=ex, margins=(0.0,), n_resamples=10)(start).examples[0].logp_grounded
    after = FactualAblationProbe(examples=ex, margins=(0.0,), n_resamples=10)(lm).examples[0].logp_grounded
    assert after > before + 1.0  # the fine-tune made the training-style target much more likely


def test_loss_truncation_variants_drop_examples(tiny_lm, tmp_path):
    lt = train_grounded(examples=_examples(), out_dir=tmp_path / "lt", config=_cfg(tiny_lm, variant="lt-basic", keep=0.5, learning_rate=1e-6))
    assert lt.steps == 8 and lt.examples_seen == 32 and lt.dropped_by_loss > 0 and lt.dropped_by_grounding == 0
    assert lt.kept_fraction == pytest.approx(1 - lt.dropped_by_loss / 32)
    gnd = train_grounded(examples=_examples(), out_dir=tmp_path / "gnd", config=_cfg(tiny_lm, variant="lt-gnd", keep=1.0, keep_grounded=0.5, learning_rate=1e-6))
    assert gnd.dropped_by_loss == 0 and gnd.dropped_by_grounding > 0 and gnd.config["reference_for_gain"]
    # (a tiny learning rate keeps the losses stationary: with fast learning every new loss sits below
    # the running quantile and nothing is dropped, which is how loss truncation behaves, not a bug)
    # same seed, same variant -> the same run
    again = train_grounded(examples=_examples(), out_dir=tmp_path / "lt2", config=_cfg(tiny_lm, variant="lt-basic", keep=0.5, learning_rate=1e-6))
    assert (again.dropped_by_loss, again.final_loss) == (lt.dropped_by_loss, pytest.approx(lt.final_loss, rel=1e-5))


def test_resume_continues_from_the_checkpoint(tiny_lm, tmp_path):
    train_grounded(examples=_examples(), out_dir=tmp_path / "r", config=_cfg(tiny_lm, variant="basic", max_steps=4))
    res = train_grounded(examples=_examples(), out_dir=tmp_path / "r", config=_cfg(tiny_lm, variant="basic", max_steps=8))
    assert res.steps == 8 and res.config["resumed_from"].endswith("checkpoint-4")


def test_bad_budgets_and_inputs(tiny_lm, tmp_path):
    with pytest.raises(ConfigError, match="smaller than one optimisation step"):
        train_grounded(examples=_examples(8), out_dir=tmp_path / "x", config=_cfg(tiny_lm, variant="basic", max_minutes=1e-9))
    with pytest.raises(ConfigError, match="max_minutes must be > 0"):
        LTTrainConfig(max_minutes=-1)
    with pytest.raises(ConfigError, match="variant must be one of"):
        LTTrainConfig(variant="tuned")
    with pytest.raises(InputError, match="No training examples"):
        train_grounded(examples=[], out_dir=tmp_path / "y", config=_cfg(tiny_lm))
    bad = tmp_path / "rows.jsonl"
    bad.write_text(json.dumps({"grounding": "g", "context": "c"}) + "\n")
    with pytest.raises(DataFormatError, match="row 1"):
        load_grounded(bad)


def test_missing_pomo_split_names_the_file_and_the_fix(tmp_path):
    (tmp_path / "pomo").mkdir()
    with pytest.raises(InputError, match=r"train\.wiki.*StonyBrookNLP/PoMo"):
        load_grounded("pomo:train", data_dir=tmp_path)


@pytest.mark.slow
@pytest.mark.skipif(not (DATA / "pomo" / "valid.pm.zip").exists(), reason="PoMo not found under ../shared/data/pomo")
def test_pomo_grounded_examples():
    exs = load_grounded("pomo:valid", limit=50)
    assert len(exs) == 50 and all(e.grounding.split(":")[0] in e.target for e in exs)


@pytest.mark.slow
@pytest.mark.skipif(not (DATA / "pomo" / "test.pm.zip").exists(), reason="PoMo not found under ../shared/data/pomo")
def test_pomo_ablation_set_removes_exactly_the_used_claims():
    from veridic.ablation._finetune import pomo_ablation_set

    exs = pomo_ablation_set(split="test", limit=40, seed=1)
    assert len(exs) == 40 and [e.id for e in exs] == [e.id for e in pomo_ablation_set(split="test", limit=40, seed=1)]
    for e in exs:
        full, abl = e.grounding.rstrip(".").split(": ", 1)[1].split("; "), e.ablated_grounding.rstrip(".").split(": ", 1)[1].split("; ")
        assert set(abl) < set(full)  # a strict subset: g' lacks only the claims y uses


def test_a_target_longer_than_the_window_is_skipped_and_counted(tiny_lm, tmp_path):
    long = GroundedExample(grounding="Ann: poet.", context="Story.", target=" ".join(["Ann, the poet, spoke."] * 40), id="long")
    res = train_grounded(examples=[*_examples(8), long], out_dir=tmp_path / "s", config=_cfg(tiny_lm, variant="basic", max_steps=2))
    assert res.skipped_too_long == ["long"] and res.config["train_examples"] == 8
    with pytest.raises(InputError, match="raise max_length"):
        train_grounded(examples=[long], out_dir=tmp_path / "t", config=_cfg(tiny_lm, variant="basic", max_steps=2))

"""Training pipeline: config validation, data mixture, augmentation, loss, resumable runs."""

from __future__ import annotations

import gzip
import json
import os
import random
from pathlib import Path

import pytest

from veridic.errors import ConfigError, DataFormatError
from veridic.train._augment import DEFAULT_PHRASES, augment_hypothesis, load_phrases
from veridic.train._data import LABEL_IDS, NOT_ENTAILMENT, is_held_out, read_nli_file, select_rows
from veridic.train._loop import config_from_dict, config_hash, load_config

REPO = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("VERIDIC_DATA", REPO.parent / "shared" / "data"))
needs_data = pytest.mark.skipif(not DATA.exists(), reason=f"shared data not found at {DATA} (../shared/data)")


def _write_set(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(path, "wt", encoding="utf-8") as fh:
        for r in rows:
            fh.write(json.dumps(r) + "\n")


def _toy_data(root: Path) -> Path:
    rng = random.Random(0)
    subjects = ["the cat", "a man", "the company", "paris", "the engineers"]
    verbs = ["sat on the mat", "hired engineers", "was in france", "laid off staff"]
    three, two = [], []
    for i in range(60):
        s, v = rng.choice(subjects), rng.choice(verbs)
        lab = ["entailment", "neutral", "contradiction"][i % 3]
        three.append({"premise": f"{s} {v} .", "hypothesis": f"{s} {rng.choice(verbs)}", "label": lab,
                      "source": "toy3", "split": "dev"})
        two.append({"premise": f"{s} {v} and more .", "hypothesis": f"{s} {v}",
                    "label": ["entailment", "not_entailment"][i % 2], "source": "toy2", "split": "dev"})
    _write_set(root / "nli" / "toy3.jsonl.gz", three)
    _write_set(root / "nli" / "toy2.jsonl.gz", two)
    return root


def _toy_config(model_dir: Path, **optim) -> dict:
    return {
        "seed": 3,
        "model": {"path": str(model_dir), "init": "pretrained", "max_length": 64},
        "data": {"sets": {"toy3": {"tier": "A"}, "toy2": {"tier": "A", "weight": 0.5}},
                 "held_out_fraction": 0.1, "eval_cap": 50, "checkpoint_eval_cap": 10},
        "augment": {"phrases": None, "fraction": 0.3},
        "optim": {"batch_size": 4, "lr": 1e-3, "warmup_ratio": 0.0, "max_steps": 3, **optim},
        "runtime": {"progress": False, "precision": "fp32", "checkpoint_minutes": 1000, "log_every": 1},
    }


# ---------------------------------------------------------------- config
def test_checked_in_config_loads():
    cfg = load_config(REPO / "configs" / "nli-minilm.yaml")
    assert cfg.model.max_length <= 256
    assert cfg.data.sets["qnli"].weight <= 0.1
    assert "unrelated" in cfg.data.sets["fnc1"].exclude["fnc_stance"]
    assert all(spec.weight == 0 for spec in cfg.data.sets.values() if spec.tier == "C")
    assert "bench" not in json.dumps(cfg.to_dict())


def test_unknown_key_is_named_with_a_hint():
    with pytest.raises(ConfigError, match=r"optim: unknown key 'lrr'.*Did you mean 'lr'"):
        config_from_dict({"optim": {"lrr": 1e-5}})


def test_bad_choice_and_bad_kind():
    with pytest.raises(ConfigError, match="runtime.precision: expected one of"):
        config_from_dict({"runtime": {"precision": "fp8"}})
    with pytest.raises(ConfigError, match="unknown kind 'negaton'"):
        config_from_dict({"synthetic": {"counts": {"negaton": 3}}})
    with pytest.raises(ConfigError, match="expected a number"):
        config_from_dict({"optim": {"lr": "fast"}})


def test_config_hash_ignores_runtime():
    a = config_from_dict({"runtime": {"max_minutes": 5}})
    b = config_from_dict({"runtime": {"max_minutes": 50}})
    c = config_from_dict({"optim": {"lr": 1e-4}})
    assert config_hash(a) == config_hash(b) != config_hash(c)


# ------------------------------------------------------------------ data
def test_label_mapping_and_two_way(tmp_path):
    _write_set(tmp_path / "x.jsonl.gz", [
        {"premise": "p", "hypothesis": "h1", "label": "entailment"},
        {"premise": "p", "hypothesis": "h2", "label": "neutral"},
        {"premise": "p", "hypothesis": "h3", "label": "contradiction"},
        {"premise": "p", "hypothesis": "h4", "label": "not_entailment"},
    ])
    assert [r["label_id"] for r in read_nli_file(tmp_path / "x.jsonl.gz")] == [0, 1, 2, NOT_ENTAILMENT]
    assert [r["label_id"] for r in read_nli_file(tmp_path / "x.jsonl.gz", two_way=True)] == [0, 3, 3, 3]
    assert LABEL_IDS["not_entailment"] == 3


def test_bad_label_names_file_and_row(tmp_path):
    _write_set(tmp_path / "bad.jsonl.gz", [{"premise": "p", "hypothesis": "h", "label": "entailment"},
                                           {"premise": "p", "hypothesis": "h", "label": "maybe"}])
    with pytest.raises(DataFormatError, match=r"bad.jsonl.gz, row 2: unknown label 'maybe'"):
        read_nli_file(tmp_path / "bad.jsonl.gz")


def test_held_out_is_deterministic_and_about_the_fraction():
    flags = [is_held_out(f"premise {i}", f"hyp {i}", fraction=0.02) for i in range(20000)]
    assert flags == [is_held_out(f"premise {i}", f"hyp {i}", fraction=0.02) for i in range(20000)]
    assert 0.015 < sum(flags) / len(flags) < 0.025


def test_select_rows_weight_and_cap():
    rows = list(range(100))
    assert len(select_rows(rows, weight=0.5, cap=None, rng=random.Random(0))) == 50
    assert len(select_rows(rows, weight=1.0, cap=30, rng=random.Random(0))) == 30
    two = select_rows(rows, weight=2.0, cap=None, rng=random.Random(0))
    assert sorted(two) == sorted(rows * 2)


def test_mixture_never_trains_on_held_out(tmp_path):
    from veridic.train._data import build_real_examples

    root = _toy_data(tmp_path / "data")
    cfg = config_from_dict(_toy_config(tmp_path / "unused"))
    train, held, stats = build_real_examples(cfg.data, cfg.augment, data_dir=root, seed=3)
    held_keys = {(e.premise, e.hypothesis) for e in held}
    assert held and not held_keys & {(e.premise, e.hypothesis) for e in train if not e.augmented}
    assert stats["toy2"]["trained"] == round(0.5 * (60 - stats["toy2"]["held_out"]))
    aug = [e for e in train if e.augmented]
    assert len(aug) == round(0.3 * (len(train) - len(aug)))


# ----------------------------------------------------------- augmentation
def test_augmentation_format():
    assert augment_hypothesis("The cat sat.", "I love that! ") == "I love that! the cat sat."
    assert augment_hypothesis("Paris is big.", "yep. Also ") == "yep. Also paris is big."
    assert len(DEFAULT_PHRASES) == 10


@needs_data
def test_shared_phrases_match_the_defaults():
    assert load_phrases(DATA / "augment" / "phrases.json") == DEFAULT_PHRASES


# ------------------------------------------------------------------- loss
def test_two_way_loss_is_minus_log_of_non_entailment_mass():
    import torch

    from veridic.train._loop import nli_loss

    logits = torch.tensor([[2.0, 0.5, -1.0], [0.1, 0.2, 0.3]])
    p = torch.softmax(logits, -1)
    got = nli_loss(logits, torch.tensor([3, 2]))
    want = (-torch.log(p[0, 1] + p[0, 2]) - torch.log(p[1, 2])) / 2
    assert torch.allclose(got, want, atol=1e-6)


def test_make_batches_is_a_deterministic_permutation():
    from veridic.train._loop import make_batches

    lengths = [random.Random(i).randint(5, 50) for i in range(103)]
    a = make_batches(lengths, batch_size=8, bucket_batches=4, seed=1)
    assert a == make_batches(lengths, batch_size=8, bucket_batches=4, seed=1)
    assert sorted(i for b in a for i in b) == list(range(103))
    assert a != make_batches(lengths, batch_size=8, bucket_batches=4, seed=2)


# --------------------------------------------------------- training runs
@pytest.fixture()
def toy_setup(tmp_path, tiny_nli_dir):
    return _toy_data(tmp_path / "data"), tiny_nli_dir


def _weights(final: Path):
    from safetensors.torch import load_file

    return load_file(str(final / "model.safetensors"))


def test_three_step_run_exports_and_resume_matches(tmp_path, toy_setup):
    import torch
    from transformers import AutoModelForSequenceClassification

    from veridic.train._loop import Trainer

    data_dir, model_dir = toy_setup
    cfg = config_from_dict(_toy_config(model_dir))

    # Uninterrupted run.
    final_a = Trainer(config=cfg, output_dir=tmp_path / "a", data_dir=data_dir).train(resume=True)
    summary = json.loads((tmp_path / "a" / "training_summary.json").read_text())
    assert summary["steps"] == 3 and summary["stopped_by"] == "completed"
    assert summary["config_hash"] == config_hash(cfg)
    assert summary["held_out"]["n"] > 0 and summary["data"]["n_augmented"] > 0
    model = AutoModelForSequenceClassification.from_pretrained(final_a)
    assert model.config.id2label == {0: "entailment", 1: "neutral", 2: "contradiction"}
    assert model.config.hidden_dropout_prob > 0  # MC dropout at inference needs it
    log = [json.loads(x) for x in (tmp_path / "a" / "train_log.jsonl").read_text().splitlines()]
    assert [r["step"] for r in log if "loss" in r] == [1, 2, 3]

    # Interrupted after 2 steps, then resumed from the checkpoint.
    t = Trainer(config=cfg, output_dir=tmp_path / "b", data_dir=data_dir)
    t.train(resume=True, stop_after_steps=2)
    assert [p.name for p in (tmp_path / "b" / "checkpoints").iterdir()] == ["checkpoint-2"]
    assert not (tmp_path / "b" / "final").exists()
    final_b = Trainer(config=cfg, output_dir=tmp_path / "b", data_dir=data_dir).train(resume=True)
    log_b = [json.loads(x) for x in (tmp_path / "b" / "train_log.jsonl").read_text().splitlines()]
    assert [r["step"] for r in log_b if "loss" in r] == [1, 2, 3]
    wa, wb = _weights(final_a), _weights(final_b)
    assert wa.keys() == wb.keys()
    for k in wa:
        assert torch.equal(wa[k], wb[k]), k


def test_the_fused_adamw_kernel_gives_the_loops_weights_and_resumes_its_checkpoints(tmp_path, toy_setup):
    """A runtime option: the config hash and the update stay the same (up to float rounding), and a run may
    switch kernels between stages."""
    import torch

    from veridic.train._loop import Trainer
    from veridic.train._nli_trainer import training_arguments

    data_dir, model_dir = toy_setup
    fused = config_from_dict(_toy_config(model_dir))
    loop = config_from_dict({**_toy_config(model_dir), "runtime": {**_toy_config(model_dir)["runtime"], "fused_adamw": False}})
    assert fused.runtime.fused_adamw and config_hash(fused) == config_hash(loop)
    kw = {"optim": fused.optim, "steps": 3, "seed": 0, "bf16": False, "device": "cpu"}
    assert training_arguments(tmp_path / "x", runtime=fused.runtime, **kw).optim == "adamw_torch_fused"
    assert training_arguments(tmp_path / "x", runtime=loop.runtime, **kw).optim == "adamw_torch"
    wf = _weights(Trainer(config=fused, output_dir=tmp_path / "f", data_dir=data_dir).train(resume=True))
    wl = _weights(Trainer(config=loop, output_dir=tmp_path / "l", data_dir=data_dir).train(resume=True))
    moved = [k for k in wl if not torch.equal(wl[k], _weights_at_start(model_dir).get(k, wl[k]))]
    assert moved  # the weights trained, so the comparison below says something
    for k in wl:
        assert torch.allclose(wf[k], wl[k], atol=1e-5, rtol=1e-4), k
    # two steps with the loop, the last with the fused kernel: the loop's optimiser state resumes, and the kernel
    # this stage asked for runs (the checkpoint's param groups carry the loop's flags)
    Trainer(config=loop, output_dir=tmp_path / "m", data_dir=data_dir).train(resume=True, stop_after_steps=2)
    wm = _weights(Trainer(config=fused, output_dir=tmp_path / "m", data_dir=data_dir).train(resume=True))
    for k in wl:
        assert torch.allclose(wm[k], wl[k], atol=1e-5, rtol=1e-4), k
    stages = [r for r in map(json.loads, (tmp_path / "m" / "train_log.jsonl").read_text().splitlines()) if r.get("event") == "stage_start"]
    assert [(r["step"], r["kernel"]) for r in stages] == [(0, "per-tensor loop"), (2, "fused")]
    assert [r["kernel"] for r in map(json.loads, (tmp_path / "f" / "train_log.jsonl").read_text().splitlines())
            if r.get("event") == "stage_start"] == ["fused"]


def _weights_at_start(model_dir: Path):
    from safetensors.torch import load_file

    return load_file(str(model_dir / "model.safetensors"))


def test_resume_with_a_different_config_is_refused(tmp_path, toy_setup):
    from veridic.train._loop import Trainer

    data_dir, model_dir = toy_setup
    cfg = config_from_dict(_toy_config(model_dir))
    Trainer(config=cfg, output_dir=tmp_path / "c", data_dir=data_dir).train(stop_after_steps=1)
    other = config_from_dict(_toy_config(model_dir, lr=5e-4))
    with pytest.raises(ConfigError, match="config hash"):
        Trainer(config=other, output_dir=tmp_path / "c", data_dir=data_dir).train(resume=True)


def test_train_nli_public_api_with_budget(tmp_path, toy_setup):
    from veridic.train import train_nli

    data_dir, model_dir = toy_setup
    raw = _toy_config(model_dir)
    raw["runtime"]["reserve_minutes"] = 0.0
    cfg = config_from_dict(raw)
    final = train_nli(config=cfg, output_dir=tmp_path / "d", data_dir=data_dir, max_minutes=0.0)
    summary = json.loads((tmp_path / "d" / "training_summary.json").read_text())
    assert final == tmp_path / "d" / "final" and (final / "model.safetensors").exists()
    assert summary["stopped_by"] == "time_budget" and summary["steps"] == 0


def test_num_layers_keeps_the_first_layers_and_their_weights(tmp_path, toy_setup):
    from transformers import AutoModelForSequenceClassification

    from veridic.train._loop import Trainer

    data_dir, model_dir = toy_setup
    raw = _toy_config(model_dir, max_steps=1)
    raw["model"]["num_layers"] = 1
    cfg = config_from_dict(raw)
    assert config_hash(cfg) != config_hash(config_from_dict(_toy_config(model_dir, max_steps=1)))
    trainer = Trainer(config=cfg, output_dir=tmp_path / "cut", data_dir=data_dir)
    model, _ = trainer._load_model()
    full = AutoModelForSequenceClassification.from_pretrained(model_dir)
    assert model.config.num_hidden_layers == 1 and full.config.num_hidden_layers == 2
    # The kept layer is the pretrained first layer, not a fresh one.
    kept = {k: v for k, v in model.state_dict().items() if ".layer.0." in k}
    ref = full.state_dict()
    assert kept and all(v.equal(ref[k]) for k, v in kept.items())
    assert not any(".layer.1." in k for k in model.state_dict())
    final = trainer.train()
    assert AutoModelForSequenceClassification.from_pretrained(final).config.num_hidden_layers == 1


def test_skip_steps_continues_on_the_batches_an_earlier_run_never_reached(tmp_path, toy_setup):
    from transformers import AutoTokenizer

    from veridic.train._loop import Trainer

    data_dir, model_dir = toy_setup
    tok = AutoTokenizer.from_pretrained(model_dir)

    def plan(**optim):
        t = Trainer(config=config_from_dict(_toy_config(model_dir, max_steps=None, **optim)), output_dir=tmp_path / "p",
                    data_dir=data_dir)
        t._prepare_data()
        t._tokenize_plan(tok)
        return t.plan

    first, both = plan(epochs=0.4), plan(epochs=0.8)
    rest = plan(epochs=0.8, skip_steps=len(first))
    assert len(first) >= 3 and both[: len(first)] == first  # the shorter run's plan is the longer one's start
    assert rest == both[len(first):] and rest
    assert not {i for b in first for i in b} & {i for b in rest for i in b}  # no pair seen twice
    base = _toy_config(model_dir, max_steps=None, epochs=0.8)
    assert config_hash(config_from_dict(base)) != config_hash(config_from_dict(
        _toy_config(model_dir, max_steps=None, epochs=0.8, skip_steps=2)))
    with pytest.raises(ConfigError, match="skip_steps"):
        plan(epochs=0.4, skip_steps=10_000)
    with pytest.raises(ConfigError, match="skip_steps"):
        config_from_dict(_toy_config(model_dir, skip_steps=-1))


def test_a_packed_model_is_continued_from_its_dequantised_weights(tmp_path, toy_setup):
    import torch
    from transformers import AutoModelForSequenceClassification

    from veridic.nli.packed import read_packed, write_packed
    from veridic.train._loop import Trainer

    data_dir, model_dir = toy_setup
    first = Trainer(config=config_from_dict(_toy_config(model_dir, max_steps=1)), output_dir=tmp_path / "a",
                    data_dir=data_dir).train()
    packed = tmp_path / "packed"
    write_packed(model_dir=first, out_dir=packed)  # config and tokenizer travel with the shards
    model, _ = Trainer(config=config_from_dict(_toy_config(packed, max_steps=1)), output_dir=tmp_path / "b",
                       data_dir=data_dir)._load_model()
    ref = read_packed(packed)
    state = model.state_dict()
    assert all(torch.equal(state[k], v) for k, v in ref.items() if k in state)
    full = AutoModelForSequenceClassification.from_pretrained(first).state_dict()
    assert any(not torch.equal(state[k], full[k]) for k in ref if k in state and full[k].dim() == 2)  # int8, not fp32
    raw = _toy_config(packed, max_steps=1)
    raw["model"]["num_layers"] = 1
    with pytest.raises(ConfigError, match="packed"):
        Trainer(config=config_from_dict(raw), output_dir=tmp_path / "c", data_dir=data_dir)._load_model()


def test_num_layers_is_validated(toy_setup):
    _, model_dir = toy_setup
    raw = _toy_config(model_dir)
    raw["model"]["num_layers"] = 0
    with pytest.raises(ConfigError, match="num_layers"):
        config_from_dict(raw)


def test_configs_without_num_layers_keep_their_hash(toy_setup):
    # Checkpoints of runs started before the option existed must still resume.
    _, model_dir = toy_setup
    cfg = config_from_dict(_toy_config(model_dir))
    d = cfg.to_dict()
    d["model"].pop("num_layers")
    d["optim"].pop("skip_steps")
    import hashlib

    for key in ("runtime", "contrast", "distill", "commercial"):  # all off: not part of older hashes
        d.pop(key)
    assert config_hash(cfg) == hashlib.sha256(json.dumps(d, sort_keys=True, default=str).encode()).hexdigest()[:16]


def test_a_checkpoint_of_another_backbone_is_refused_naming_both(tmp_path, toy_setup):
    from veridic.train._loop import Trainer

    data_dir, model_dir = toy_setup
    Trainer(config=config_from_dict(_toy_config(model_dir)), output_dir=tmp_path / "e", data_dir=data_dir).train(
        stop_after_steps=1)
    raw = _toy_config(model_dir)
    raw["model"]["num_layers"] = 1
    with pytest.raises(ConfigError, match=r"trained from .*tiny.* with config hash .*this config trains .*first 1 layers"):
        Trainer(config=config_from_dict(raw), output_dir=tmp_path / "e", data_dir=data_dir).train(resume=True)


def test_a_checkpoint_of_the_earlier_training_loop_is_refused_with_what_to_do(tmp_path, toy_setup):
    import torch
    from safetensors.torch import save_file

    from veridic.train._loop import Trainer

    data_dir, model_dir = toy_setup
    cfg = config_from_dict(_toy_config(model_dir))
    old = tmp_path / "g" / "checkpoints" / "step-00000002"  # the layout veridic wrote before it used the transformers Trainer
    old.mkdir(parents=True)
    save_file({"w": torch.zeros(2)}, str(old / "model.safetensors"))
    torch.save({"step": 2, "config_hash": config_hash(cfg), "plan_hash": "x"}, old / "state.pt")
    with pytest.raises(ConfigError, match=r"step-00000002 is a checkpoint of veridic's earlier training loop .*"
                                          r"Finish that run with the veridic version that started it, or start a new run folder"):
        Trainer(config=cfg, output_dir=tmp_path / "g", data_dir=data_dir).train(resume=True)
    assert (old / "state.pt").exists() and not (tmp_path / "g" / "final").exists()
    # Starting again in the same folder is the other way out.
    Trainer(config=cfg, output_dir=tmp_path / "g", data_dir=data_dir).train(resume=False)
    assert [p.name for p in (tmp_path / "g" / "checkpoints").iterdir()] == ["checkpoint-3"]


def test_checkpoints_by_the_clock_are_evaluated_and_kept_to_the_limit(tmp_path, toy_setup):
    from veridic.train._loop import Trainer

    data_dir, model_dir = toy_setup
    raw = _toy_config(model_dir)
    raw["runtime"].update(checkpoint_minutes=0, keep_checkpoints=2)  # a checkpoint after every step
    Trainer(config=config_from_dict(raw), output_dir=tmp_path / "h", data_dir=data_dir).train()
    log = [json.loads(x) for x in (tmp_path / "h" / "train_log.jsonl").read_text().splitlines()]
    evals = [r for r in log if "checkpoint" in r]
    assert [r["checkpoint"] for r in evals] == ["checkpoint-1", "checkpoint-2"]  # the last step's is the run's end, not evaluated again
    assert all(0 <= r["heldout_accuracy_2way"] <= 1 for r in evals)
    assert sorted(p.name for p in (tmp_path / "h" / "checkpoints").iterdir()) == ["checkpoint-2", "checkpoint-3"]
    meta = json.loads((tmp_path / "h" / "checkpoints" / "checkpoint-3" / "veridic_checkpoint.json").read_text())
    assert meta["step"] == 3 and meta["examples_seen"] == 12 and meta["config_hash"] == config_hash(config_from_dict(raw))


def test_a_checkpoint_cut_short_by_a_kill_is_passed_over(tmp_path, toy_setup):
    import torch

    from veridic.train._loop import Trainer

    data_dir, model_dir = toy_setup
    raw = _toy_config(model_dir)
    raw["runtime"].update(checkpoint_minutes=0, keep_checkpoints=3)
    cfg = config_from_dict(raw)
    final_a = Trainer(config=cfg, output_dir=tmp_path / "a", data_dir=data_dir).train()
    Trainer(config=cfg, output_dir=tmp_path / "k", data_dir=data_dir).train(stop_after_steps=2)
    # A kill while checkpoint-2 was written: its record, written last, is missing.
    (tmp_path / "k" / "checkpoints" / "checkpoint-2" / "veridic_checkpoint.json").unlink()
    final_k = Trainer(config=cfg, output_dir=tmp_path / "k", data_dir=data_dir).train()
    log = [json.loads(x) for x in (tmp_path / "k" / "train_log.jsonl").read_text().splitlines()]
    assert [r["step"] for r in log if "loss" in r] == [1, 2, 2, 3]  # step 2 again, from checkpoint-1
    wa, wk = _weights(final_a), _weights(final_k)
    assert all(torch.equal(wa[k], wk[k]) for k in wa)


def test_a_stage_stop_can_skip_the_full_evaluation(tmp_path, toy_setup):
    from veridic.train import train_nli

    data_dir, model_dir = toy_setup
    raw = _toy_config(model_dir)
    raw["runtime"].update(reserve_minutes=0.0, full_eval_on_stop=False)
    raw["data"]["checkpoint_eval_cap"] = 3
    train_nli(config=config_from_dict(raw), output_dir=tmp_path / "f", data_dir=data_dir, max_minutes=0.0)
    summary = json.loads((tmp_path / "f" / "training_summary.json").read_text())
    assert summary["stopped_by"] == "time_budget" and summary["held_out_partial"] is True
    assert summary["held_out"]["n"] == 3 and summary["held_out_contrast"] == {}

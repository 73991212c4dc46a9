"""The multiple-choice fine-tune of paper 000 on a tiny random BERT: it trains, learns, checkpoints, stops on budget, scores deterministically."""

from __future__ import annotations

import json

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from veridic.congruity._build import MCItem  # noqa: E402
from veridic.congruity._mc import MC_MARKER, MCScorer, MCTrainConfig, is_mc_model, item_pairs, train_multiple_choice  # noqa: E402
from veridic.errors import ConfigError, InputError, ModelLoadError  # noqa: E402

JOBS = ["senator", "drummer", "chef", "poet", "pilot", "nurse", "judge", "mayor"]
OTHER = ["ohio", "peru", "rome", "oslo", "lima", "yale", "cairo", "dakar"]


def _tiny_encoder(tmp_path):
    from transformers import BertConfig, BertForMultipleChoice, BertTokenizerFast

    words = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", ",", ".", "said", "the", "born", "in", "person", "voted", "today"] + JOBS + OTHER
    tok = BertTokenizerFast(vocab={w: i for i, w in enumerate(words)})
    torch.manual_seed(0)
    cfg = BertConfig(vocab_size=len(words), hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64, max_position_embeddings=64)
    folder = tmp_path / "tiny-bert"
    BertForMultipleChoice(cfg).save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder


def _items(n: int) -> list[MCItem]:
    # Accurate options come from one half of the job list, distractors from the other half and from
    # places: a lexical signal a tiny encoder can pick up in a few dozen steps.
    out = []
    for i in range(n):
        job = JOBS[i % 4]
        out.append(MCItem(id=str(i), task="claim", entity="person", left=f"the {job} voted today . person ,", right=" , said .", previous="",
                          options={"accurate": job, "incongruous": f"born in {OTHER[i % len(OTHER)]}", "nonfactual": JOBS[4 + i % 4], "both": JOBS[4 + (i + 1) % 4]}))
    return out


def _accuracy(scores) -> float:
    from veridic.congruity._metrics import top_rank_frequency

    return top_rank_frequency(scores=[s.scores for s in scores])["accurate"]  # ties share the credit


def test_item_pairs_read_the_masked_article():
    it = MCItem(id="1", task="claim", entity="Ann", left="Ann ,", right=" , won .", previous="P.", next="N.", options={"accurate": " mayor ", "both": "chef"})
    assert item_pairs(it, mask_token="[MASK]") == [("P. Ann , [MASK] , won . N.", "Ann , mayor"), ("P. Ann , [MASK] , won . N.", "Ann , chef")]


def test_train_learns_checkpoints_and_scores_deterministically(tmp_path):
    enc = _tiny_encoder(tmp_path)
    items = _items(48)
    cfg = MCTrainConfig(model=str(enc), max_length=32, batch_size=8, learning_rate=3e-3, max_steps=60, max_minutes=5, seed=0, bf16=False, save_steps=30)
    before = _accuracy(MCScorer(_fake_trained(enc, tmp_path), bf16=False).score(items))
    res = train_multiple_choice(items=items, out_dir=tmp_path / "run", config=cfg)
    assert res.steps == 60 and not res.stopped_by_budget and res.train_items == 48
    assert is_mc_model(res.model_dir) and json.loads((tmp_path / "run" / "model" / MC_MARKER).read_text())["steps"] == 60
    assert (tmp_path / "run" / "checkpoints" / "checkpoint-60").is_dir()
    scorer = MCScorer(res.model_dir, bf16=False)
    s1 = scorer.score(items)
    assert set(s1[0].scores) == {"accurate", "incongruous", "nonfactual", "both"}
    assert _accuracy(s1) >= 0.9 and before < 0.6  # it learned the signal a random head does not have
    assert [s.scores for s in MCScorer(res.model_dir, bf16=False).score(items)] == [s.scores for s in s1]
    # every step checkpoint is a scorable model folder: selecting by held-out accuracy needs no hand copying
    ck30, ck60 = (tmp_path / "run" / "checkpoints" / f"checkpoint-{n}" for n in (30, 60))
    assert is_mc_model(ck30) and json.loads((ck30 / MC_MARKER).read_text())["steps"] == 30
    assert json.loads((ck30 / MC_MARKER).read_text())["config"]["max_length"] == 32
    at60 = MCScorer(ck60, bf16=False).score(items)
    assert [v for s in at60 for v in s.scores.values()] == pytest.approx([v for s in s1 for v in s.scores.values()], abs=1e-6)
    assert MCScorer(ck30, bf16=False).score(items)[0].scores != s1[0].scores  # step 30's own weights, not the final ones
    # same seed, same data -> the same weights
    res2 = train_multiple_choice(items=items, out_dir=tmp_path / "run2", config=cfg)
    again = MCScorer(res2.model_dir, bf16=False).score(items)
    assert [v for s in again for v in s.scores.values()] == pytest.approx([v for s in s1 for v in s.scores.values()], abs=1e-5)


def _fake_trained(enc, tmp_path):
    # The untrained tiny encoder, wrapped as an MC folder, for the "before" baseline.
    import shutil

    d = tmp_path / "untrained"
    if not d.exists():
        shutil.copytree(enc, d)
        (d / MC_MARKER).write_text(json.dumps({"steps": 0, "config": {"max_length": 32}}))
    return d


def test_budget_too_small_for_one_step_is_a_clear_error(tmp_path):
    enc = _tiny_encoder(tmp_path)
    cfg = MCTrainConfig(model=str(enc), max_length=32, batch_size=4, max_steps=5, max_minutes=1e-9, bf16=False)
    with pytest.raises(ConfigError, match="smaller than one optimisation step"):
        train_multiple_choice(items=_items(8), out_dir=tmp_path / "run", config=cfg)
    with pytest.raises(ConfigError, match="max_minutes must be > 0"):
        MCTrainConfig(max_minutes=0)


def test_budget_stops_training_early(tmp_path):
    enc = _tiny_encoder(tmp_path)
    cfg = MCTrainConfig(model=str(enc), max_length=32, batch_size=4, max_steps=100_000, max_minutes=0.02, bf16=False, save_steps=10_000)
    res = train_multiple_choice(items=_items(16), out_dir=tmp_path / "run", config=cfg)
    assert res.stopped_by_budget and 1 <= res.steps < 100_000 and is_mc_model(res.model_dir)


def test_bad_inputs(tmp_path):
    with pytest.raises(ModelLoadError, match="config.json"):
        train_multiple_choice(items=_items(4), out_dir=tmp_path, config=MCTrainConfig(model=str(tmp_path / "nope")))
    mixed = [*_items(2), MCItem(id="x", task="claim", entity="p", left="p ,", right=" .", previous="", options={"accurate": "a", "both": "b"})]
    with pytest.raises(InputError, match="same classes"):
        train_multiple_choice(items=mixed, out_dir=tmp_path, config=MCTrainConfig(model=str(_tiny_encoder(tmp_path))))
    with pytest.raises(ModelLoadError, match="congruity train"):
        MCScorer(tmp_path)


def test_around_mask_truncation_keeps_the_slot(tmp_path):
    from transformers import AutoTokenizer

    from veridic.congruity._mc import encode_pair

    tok = AutoTokenizer.from_pretrained(_tiny_encoder(tmp_path))
    article = " ".join(["the chef voted today ."] * 6) + " person , [MASK] , said . " + " ".join(["the pilot voted today ."] * 6)
    kept = encode_pair(tok, article, "person , mayor", max_length=24)
    words = tok.convert_ids_to_tokens(kept["input_ids"])
    assert len(words) <= 24 and "[MASK]" in words and words[-2:] == ["mayor", "[SEP]"]
    # Both sides of the slot survive: the window is centred on it.
    assert "chef" in words and "pilot" in words
    tail = tok.convert_ids_to_tokens(encode_pair(tok, article, "person , mayor", max_length=24, truncation="end")["input_ids"])
    assert "[MASK]" not in tail and "pilot" not in tail  # the old cut loses the slot
    with pytest.raises(ConfigError, match="truncation"):
        encode_pair(tok, article, "x", max_length=24, truncation="middle")


def test_learning_curve_on_held_out_items(tmp_path):
    enc = _tiny_encoder(tmp_path)
    cfg = MCTrainConfig(model=str(enc), max_length=32, batch_size=8, learning_rate=3e-3, max_steps=40, max_minutes=5, seed=0, bf16=False, save_steps=20)
    items = _items(56)
    res = train_multiple_choice(items=items[:48], eval_items=items[48:], out_dir=tmp_path / "run", config=cfg)
    points = [r for r in res.curve if "eval_accuracy" in r]
    assert [int(r["step"]) for r in points] == [20, 40]
    assert points[-1]["eval_accuracy"] >= 0.9
    assert json.loads((tmp_path / "run" / "model" / MC_MARKER).read_text())["curve"] == res.curve


def test_freeze_layers_keeps_the_lower_encoder_fixed(tmp_path):
    from transformers import AutoModelForMultipleChoice

    enc = _tiny_encoder(tmp_path)
    cfg = MCTrainConfig(model=str(enc), max_length=32, batch_size=8, learning_rate=3e-3, max_steps=5, max_minutes=5, seed=0, bf16=False, save_steps=100, freeze_layers=1)
    res = train_multiple_choice(items=_items(16), out_dir=tmp_path / "run", config=cfg)
    a, b = AutoModelForMultipleChoice.from_pretrained(enc), AutoModelForMultipleChoice.from_pretrained(res.model_dir)
    assert torch.equal(a.bert.encoder.layer[0].attention.self.query.weight, b.bert.encoder.layer[0].attention.self.query.weight)
    assert not torch.equal(a.bert.encoder.layer[1].attention.self.query.weight, b.bert.encoder.layer[1].attention.self.query.weight)
    with pytest.raises(ConfigError, match="layers"):
        train_multiple_choice(items=_items(8), out_dir=tmp_path / "r2", config=MCTrainConfig(model=str(enc), max_minutes=1, freeze_layers=9, bf16=False))


def test_cli_train_holds_out_whole_entities_and_records_the_split(tmp_path):
    from typer.testing import CliRunner

    from veridic.congruity.cli import app

    enc = _tiny_encoder(tmp_path)
    # 24 items over 6 people and 12 articles: each person in two articles, each article about two people.
    items = [MCItem(**{**it.__dict__, "id": f"art{i % 12}:{i}", "meta": {"entity_id": f"Q{i % 6}", "article_id": f"art{i % 12}"}}) for i, it in enumerate(_items(24))]
    path = tmp_path / "items.jsonl"
    path.write_text("".join(json.dumps(it.to_dict()) + "\n" for it in items))
    res = CliRunner().invoke(app, ["train", "--items", str(path), "--eval-items", str(path), "--eval-sample", "2", "--out-dir", str(tmp_path / "run"),
                                   "--model", str(enc), "--max-length", "32", "--max-steps", "2", "--max-minutes", "5", "--save-steps", "100",
                                   "--batch-size", "4", "--bf16", "off", "--seed", "1"])
    assert res.exit_code == 0, res.output
    info = json.loads((tmp_path / "run" / "model" / MC_MARKER).read_text())
    split = info["config"]["eval_split"]
    import random

    held = random.Random(1).sample(items, 2)
    people = {it.meta["entity_id"] for it in held}
    kept = [it for it in items if it.meta["entity_id"] not in people and it.meta["article_id"] not in {h.meta["article_id"] for h in held}]
    assert split["group"] == "entity" and split["held"] == 2 and info["train_items"] == split["train"] == len(kept) < 22
    assert split["dropped"] == 24 - len(kept) and info["config"]["eval_items"] == 2
    # The id rule keeps the held people's other items in training.
    res = CliRunner().invoke(app, ["train", "--items", str(path), "--eval-items", str(path), "--eval-sample", "2", "--eval-group", "id",
                                   "--out-dir", str(tmp_path / "run-id"), "--model", str(enc), "--max-length", "32", "--max-steps", "2",
                                   "--max-minutes", "5", "--save-steps", "100", "--batch-size", "4", "--bf16", "off", "--seed", "1"])
    assert res.exit_code == 0, res.output
    assert json.loads((tmp_path / "run-id" / "model" / MC_MARKER).read_text())["train_items"] == 22


def test_scores_do_not_depend_on_option_order(tmp_path):
    # Each (article, option) pair is encoded on its own and the article window is sized by the longest option,
    # so averaging over option-order permutations at inference would change nothing.
    from transformers import AutoModelForMultipleChoice

    folder = _fake_trained(_tiny_encoder(tmp_path), tmp_path)
    model = AutoModelForMultipleChoice.from_pretrained(folder)
    with torch.no_grad():
        torch.manual_seed(1)
        model.classifier.weight.normal_(0.0, 5.0)  # the default init (std 0.02) leaves options a few 1e-4 apart
    model.save_pretrained(folder)
    scorer = MCScorer(folder, bf16=False)
    items = _items(6)
    base = scorer.score(items)
    spread = max(base[0].scores.values()) - min(base[0].scores.values())
    assert spread > 1e-3  # the head does separate the options, by far more than the tolerance below
    for order in (["both", "nonfactual", "incongruous", "accurate"], ["nonfactual", "accurate", "both", "incongruous"]):
        perm = [MCItem(**{**it.__dict__, "options": {c: it.options[c] for c in order}}) for it in items]
        again = scorer.score(perm)
        for a, b in zip(base, again):
            assert b.scores == pytest.approx(a.scores, abs=1e-6)

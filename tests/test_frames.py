"""Frame pairs (veridic.synth._frames) and the trainer's extra corpora / reversed pairs."""

from __future__ import annotations

import gzip
import json
from collections import Counter, defaultdict
from pathlib import Path

import pytest

from veridic.errors import ConfigError, InputError
from veridic.synth._frames import FRAME_RULES, generate_frame_pairs, predicate_held_back

NAMES = {"PERSON": ["Ana Silva", "Tom Reed", "Li Wei", "Maria Costa"], "ORG": ["Acme Corp", "Delta Bank", "Ford"],
         "GPE": ["Portugal", "Spain", "Chile"]}


def test_every_premise_gets_one_faithful_and_one_changed_hypothesis():
    pairs = generate_frame_pairs(names=NAMES, n_premises=600, seed=3)
    by_doc = defaultdict(list)
    for p in pairs:
        by_doc[p.doc_id].append(p)
    labels = Counter(tuple(sorted(q.label for q in qs)) for qs in by_doc.values())
    # asymmetric prepositional frames without a time phrase have no faithful rewrite: only those may be single
    assert labels[("entailment", "not_entailment")] > 0.8 * len(by_doc)
    assert set(labels) <= {("entailment", "not_entailment"), ("not_entailment",)}
    assert {p.rule for p in pairs} <= set(FRAME_RULES)
    assert all(p.hypothesis != p.premise for p in pairs)


def test_same_shape_opposite_labels():
    """A swap is entailed for "met" and not for "interviewed": the label lives in the predicate."""
    pairs = generate_frame_pairs(names=NAMES, n_premises=3000, seed=5)
    swap = {p.meta["predicate"]: p.label for p in pairs if p.rule in {"symmetric_swap", "role_swap"}
            and p.meta["family"] in {"sym_trans", "asym_trans", "sym_prep", "asym_prep"}
            and p.hypothesis.split()[0] != p.original.split()[0]}
    assert swap["met"] == "entailment" and swap["merged with"] == "entailment"
    assert swap["interviewed"] == "not_entailment" and swap["broke away from"] == "not_entailment"
    # the passive keeps the label only when the roles are kept
    voice = {(p.rule, p.label) for p in pairs if p.meta["predicate"] == "interviewed"}
    assert ("passive_keep_roles", "entailment") in voice and ("voice_role_change", "not_entailment") in voice


def test_converse_pairs_swap_verb_and_arguments_together():
    pairs = [p for p in generate_frame_pairs(names=NAMES, n_premises=3000, seed=2) if p.meta["family"] == "conv3"]
    sold = [p for p in pairs if " sold " in p.original and p.rule == "converse"]
    assert sold, "no 'sold' converse generated"
    p = sold[0]
    a = p.original.split(" sold ")[0]
    assert p.hypothesis.endswith(f"from {a}.") or f"from {a} " in p.hypothesis
    assert all(q.label == "not_entailment" for q in pairs if q.rule in {"relation_reversal", "role_swap"})


def test_deterministic_and_held_back_predicates_are_disjoint():
    a = generate_frame_pairs(names=NAMES, n_premises=300, seed=9, held_back_fraction=0.2)
    b = generate_frame_pairs(names=NAMES, n_premises=300, seed=9, held_back_fraction=0.2)
    assert a == b
    held = generate_frame_pairs(names=NAMES, n_premises=300, seed=9, held_back_fraction=0.2, split="held_back")
    train_preds = {p.meta["predicate"] for p in a}
    held_preds = {p.meta["predicate"] for p in held}
    assert held_preds and not train_preds & held_preds
    assert all(predicate_held_back(x, fraction=0.2, seed=9) for x in held_preds)


def test_bad_arguments_are_clear_errors():
    with pytest.raises(InputError, match="at least two GPE names"):
        generate_frame_pairs(names={**NAMES, "GPE": ["Chile"]}, n_premises=3)
    with pytest.raises(InputError, match="split must be"):
        generate_frame_pairs(names=NAMES, n_premises=3, split="dev")


def test_context_embeds_the_frame_sentence():
    ctx = ["The weather was mild that week.", "Markets closed higher on Friday."]
    pairs = generate_frame_pairs(names=NAMES, n_premises=200, seed=4, context=ctx)
    embedded = [p for p in pairs if p.premise != p.original]
    assert embedded and all(p.original in p.premise for p in pairs)


# ---------------------------------------------------------------- trainer options
def _row(premise, hypothesis, label, rule, original, split="train"):
    return {"premise": premise, "hypothesis": hypothesis, "label": label, "rule": rule, "original": original,
            "doc_id": "d", "meta": {}, "split": split}


def _write(path: Path, rows) -> Path:
    with gzip.open(path, "wt") as fh:
        fh.writelines(json.dumps(r) + "\n" for r in rows)
    return path


def test_reverse_rules_and_extra_corpora(tmp_path):
    from veridic.train._data import LABEL_IDS, build_contrast_examples
    from veridic.train._loop import ContrastConfig

    _write(tmp_path / "a.jsonl.gz", [
        _row("A met B.", "B met A.", "entailment", "symmetric_swap", "A met B."),
        _row("Earlier text. A hired B.", "B hired A.", "not_entailment", "role_swap", "A hired B."),  # two sentences: not reversed
        _row("A hired B.", "A hired C.", "contradiction", "entity_substitution", "A hired B."),  # not a reversible rule
    ])
    _write(tmp_path / "frames.jsonl.gz", [_row("A sold X to B.", "B bought X from A.", "entailment", "converse", "A sold X to B.")])
    cfg = ContrastConfig(enabled=True, corpus="a.jsonl.gz", extra_corpora=["frames.jsonl.gz"],
                         reverse_rules=["symmetric_swap", "role_swap", "converse"])
    train, _held, stats = build_contrast_examples(cfg, data_dir=tmp_path, out_dir=tmp_path, progress=False)
    pairs = {(e.premise, e.hypothesis, e.label) for e in train}
    assert ("B met A.", "A met B.", LABEL_IDS["entailment"]) in pairs
    assert ("B bought X from A.", "A sold X to B.", LABEL_IDS["entailment"]) in pairs
    assert stats["rules"]["role_swap"]["available"] == 1 and stats["rules"]["entity_substitution"]["available"] == 1
    assert len(train) == 6


def test_non_reversible_rule_and_missing_extra_corpus_fail_before_work(tmp_path, tiny_nli_dir):
    from veridic.train._loop import Trainer, config_from_dict

    with pytest.raises(ConfigError, match="'compression' cannot be reversed"):
        config_from_dict({"contrast": {"enabled": True, "reverse_rules": ["compression"]}})
    corpus = _write(tmp_path / "c.jsonl.gz", [_row("A met B.", "B met A.", "entailment", "symmetric_swap", "A met B.")])
    data = tmp_path / "data" / "nli"
    data.mkdir(parents=True)
    _write(data / "toy.jsonl.gz", [{"premise": "a cat sat .", "hypothesis": "a cat sat", "label": "entailment"}] * 10)
    cfg = config_from_dict({"model": {"path": str(tiny_nli_dir), "max_length": 48}, "data": {"sets": {"toy": {"tier": "A"}}},
                            "augment": {"phrases": None, "fraction": 0.0},
                            "contrast": {"enabled": True, "corpus": str(corpus), "extra_corpora": ["missing-frames.jsonl.gz"]},
                            "runtime": {"progress": False, "device": "cpu"}})
    with pytest.raises(InputError, match="missing-frames.jsonl.gz.*veridic synth frames"):
        Trainer(config=cfg, output_dir=tmp_path / "run", data_dir=tmp_path / "data").train()


def test_new_options_keep_old_config_hashes():
    """Runs started before extra_corpora / reverse_rules existed resume under the same hash."""
    from veridic.train._loop import config_hash, load_config

    repo = Path(__file__).resolve().parents[1]
    assert config_hash(load_config(repo / "configs" / "nli-minilm-v2.yaml")) == "86535f1d7125e0b8"
    v3 = load_config(repo / "configs" / "nli-minilm-v3.yaml")
    assert v3.contrast.extra_corpora == ["frames.jsonl.gz"] and "voice_role_change" in v3.contrast.reverse_rules


def test_synth_frames_cli(tmp_path, nlp):
    from typer.testing import CliRunner

    from veridic.synth.cli import app

    data = tmp_path / "data" / "nli"
    data.mkdir(parents=True)
    sents = ["Google acquired YouTube in Mountain View, California.", "Angela Merkel met Emmanuel Macron in Berlin.",
             "Barack Obama visited France and Germany last year.", "Microsoft hired John Smith from Apple.",
             "Vladimir Putin spoke with Joe Biden about Ukraine.", "Toyota sold cars to Japan and Canada."]
    _write(data / "snli.jsonl.gz", [{"premise": s, "hypothesis": "x", "label": "neutral"} for s in sents])
    out = tmp_path / "f.jsonl.gz"
    res = CliRunner().invoke(app, ["frames", "-o", str(out), "--data", str(tmp_path / "data"), "--sources", "snli",
                                   "--n-premises", "50", "--n-held-back", "10"])
    assert res.exit_code == 0, res.output
    summary = json.loads(res.output)
    assert summary["pairs"] > 50 and out.exists()
    rows = [json.loads(line) for line in gzip.open(out, "rt")]
    assert {r["split"] for r in rows} == {"train", "held_back"} and all(r["meta"]["origin"] == "frame" for r in rows)
    bad = CliRunner().invoke(app, ["frames", "-o", str(out), "--n-premises", "0"])
    assert bad.exit_code == 2

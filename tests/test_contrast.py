"""Contrast rules (veridic.synth._contrast), the contrast corpus, and the trainer's contrast / device paths."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from veridic.errors import ConfigError, InputError

spacy = pytest.importorskip("spacy")




@pytest.fixture(scope="module")
def gen(nlp):
    from veridic.synth._contrast import ContrastGenerator

    return ContrastGenerator(nlp=nlp, seed=0)


def _apply(gen, rule, sentence):
    import random

    res = gen.apply(rule, gen.nlp(sentence), random.Random(0), {}, {})
    return None if res is None else res[0]


# Same words, different meaning; different words, same meaning.
@pytest.mark.parametrize("rule, sentence, expected", [
    ("role_swap", "Google acquired YouTube in 2006.", "YouTube acquired Google in 2006."),
    ("role_swap", "YouTube was acquired by Google in 2006.", "Google was acquired by YouTube in 2006."),
    ("voice_role_change", "Google acquired YouTube in 2006.", "Google was acquired by YouTube in 2006."),
    ("passive_keep_roles", "Google acquired YouTube in 2006.", "YouTube was acquired by Google in 2006."),
    ("passive_keep_roles", "The company hired 200 engineers in 2023.", "200 engineers were hired by the company in 2023."),
    ("symmetric_swap", "Messi met Ronaldo in Madrid.", "Ronaldo met Messi in Madrid."),
    ("coord_swap", "Apple and Microsoft announced new products on Monday.", "Microsoft and Apple announced new products on Monday."),
    ("converse", "John bought a car from Mary.", "Mary sold a car to John."),
    ("bow_swap", "The flight from Paris to London was delayed.", "The flight from London to Paris was delayed."),
    ("clause_reorder", "In 2006, Google acquired YouTube.", "Google acquired YouTube in 2006."),
    ("clause_reorder", "Google acquired YouTube in 2006.", "In 2006, Google acquired YouTube."),
    ("relation_reversal", "The treaty ended the war in 1918.", "The treaty started the war in 1918."),
])
def test_rule_rewrites(gen, rule, sentence, expected):
    assert _apply(gen, rule, sentence) == expected


@pytest.mark.parametrize("rule, sentence", [
    ("role_swap", "Messi met Ronaldo in Madrid."),             # symmetric: a swap keeps the meaning
    ("symmetric_swap", "Google acquired YouTube in 2006."),    # not symmetric
    ("role_swap", "John bought a car from Mary."),             # "A car bought John" is nonsense, not a role error
    ("voice_role_change", "All students passed the exam."),    # quantified object: no role swap
    ("negation", "Police arrested him on Friday, officials said."),  # would negate the report, not the fact
    ("coord_swap", "Prices rose between 1990 and 2000."),      # ordered pair
    ("coord_swap", "The bill brings tax and regulatory changes."),  # shared modifier
    ("role_swap", "A male construction worker hammers a nail."),  # common nouns: absurd swaps, not role errors
    ("quantifier", "She is the most famous singer in France."),  # superlative, not a quantifier
    ("relation_reversal", "The report raised questions about the deal."),  # "raised questions" is no reversible rise
    ("clause_reorder", "However, the company hired 200 engineers."),  # connectives do not move
])
def test_rules_refuse_where_the_label_would_be_wrong(gen, rule, sentence):
    assert _apply(gen, rule, sentence) is None


def test_quantifier_replacements_are_not_entailed(gen):
    # "all" entails "some": the rule must say "only some" (found by the suite's hand check)
    assert _apply(gen, "quantifier", "All students passed the exam.") == "Only some students passed the exam."
    from veridic.ling._lexicon import QUANTIFIER_FLIPS

    assert QUANTIFIER_FLIPS["all"] != "some" and QUANTIFIER_FLIPS["always"] != "sometimes"


def test_labels_split_faithful_from_meaning_changing():
    from veridic.synth._contrast import FAITHFUL_RULES, RULE_LABELS

    assert {"passive_keep_roles", "symmetric_swap", "coord_swap", "converse", "clause_reorder", "compression",
            "synonym"} == set(FAITHFUL_RULES)
    assert RULE_LABELS["role_swap"] == "not_entailment" and RULE_LABELS["relation_reversal"] == "contradiction"


def test_generate_is_deterministic_and_caps_rules(gen):
    from veridic.synth._perturb import Document

    docs = [Document(doc_id=f"d{i}", sentences=[s, "Officials confirmed the deal on Tuesday."])
            for i, s in enumerate(["Google acquired YouTube in 2006.", "Oracle bought Sun Microsystems in 2010.",
                                   "Barack Obama defeated John McCain in the 2008 election."])]
    a = [p.to_dict() for p in gen.generate(documents=docs)]
    b = [p.to_dict() for p in gen.generate(documents=docs)]
    assert a == b and len(a) > 10
    capped = gen.generate(documents=docs, max_per_rule={"role_swap": 1})
    assert sum(p.rule == "role_swap" for p in capped) == 1
    for p in a:
        assert p["original"] in p["premise"]  # the rewritten sentence is part of the premise


def test_unknown_rule_is_named(gen):
    from veridic.synth._perturb import Document

    with pytest.raises(ConfigError, match="role_swap"):
        gen.generate(documents=[Document("d", ["A b c d e."])], rules=["role_swop"])
    with pytest.raises(InputError):
        gen.generate(documents=[])


def test_corpus_split_is_by_document_and_written_atomically(tmp_path, nlp, monkeypatch):
    from veridic.synth import _corpus as corpus
    from veridic.synth._perturb import Document

    docs = [Document(doc_id=f"doc{i}", sentences=["Google acquired YouTube in 2006.", "Apple and IBM signed a deal in Paris."])
            for i in range(40)]
    monkeypatch.setattr(corpus, "contrast_documents", lambda **kw: docs)
    out = tmp_path / "c.jsonl.gz"
    summary = corpus.build_contrast_corpus(data_dir=tmp_path, out=out, nlp=nlp, held_back_fraction=0.25, progress=False)
    rows = corpus.read_contrast_corpus(out)
    assert len(rows) == summary["pairs"] > 0
    assert not list(tmp_path.glob("*.tmp"))
    by_doc = {}
    for r in rows:
        by_doc.setdefault(r["doc_id"], set()).add(r["split"])
        assert r["split"] == ("held_back" if corpus.is_held_back_doc(r["doc_id"], fraction=0.25) else "train")
    assert all(len(s) == 1 for s in by_doc.values())  # a document is never in both splits
    assert {"train", "held_back"} == {s for v in by_doc.values() for s in v}


def test_missing_source_file_is_a_clear_error(tmp_path):
    from veridic.synth._corpus import contrast_documents

    with pytest.raises(InputError, match="pomo/valid.pm.zip"):
        contrast_documents(data_dir=tmp_path, sources=["pomo_valid"])


# ------------------------------------------------------------- trainer paths
def test_resolve_device(monkeypatch):
    import torch

    from veridic.train._loop import resolve_device

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert resolve_device("auto") == "cpu"
    with pytest.raises(ConfigError, match="CUDA is not available"):
        resolve_device("cuda")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)
    assert resolve_device("auto") == "cuda" and resolve_device("cuda:1") == "cuda:1"
    with pytest.raises(ConfigError, match="names GPU 2, but this machine has 2"):
        resolve_device("cuda:2")
    with pytest.raises(ConfigError, match="expected auto .*, cpu, cuda or cuda:N"):
        resolve_device("gpu")


def test_checked_in_v2_config_loads_and_names_real_rules():
    from veridic.train._loop import load_config

    repo = Path(__file__).resolve().parents[1]
    cfg = load_config(repo / "configs" / "nli-minilm-v2.yaml")
    assert cfg.contrast.enabled and cfg.contrast.per_rule["role_swap"] > 0
    assert cfg.data.sets["semiauto_nli"].exclude == {"subset": ["base_news", "sim_news"]}


def test_bad_contrast_rule_in_config():
    from veridic.train._loop import config_from_dict

    with pytest.raises(ConfigError, match="unknown rule 'swap'"):
        config_from_dict({"contrast": {"enabled": True, "per_rule": {"swap": 3}}})


def _toy(root: Path) -> Path:
    rows = [{"premise": f"the cat number {i} sat .", "hypothesis": "a cat sat", "label": ["entailment", "neutral", "contradiction"][i % 3],
             "source": "toy", "split": "dev"} for i in range(30)]
    (root / "nli").mkdir(parents=True)
    with gzip.open(root / "nli" / "toy.jsonl.gz", "wt") as fh:
        fh.writelines(json.dumps(r) + "\n" for r in rows)
    return root


def _cfg(model_dir, corpus, **runtime):
    from veridic.train._loop import config_from_dict

    return config_from_dict({
        "seed": 1, "model": {"path": str(model_dir), "max_length": 48},
        "data": {"sets": {"toy": {"tier": "A"}}, "held_out_fraction": 0.1, "eval_cap": 20, "checkpoint_eval_cap": 0},
        "augment": {"phrases": None, "fraction": 0.0},
        "contrast": {"enabled": True, "corpus": str(corpus), "per_rule": {"role_swap": 2, "passive_keep_roles": 2}},
        "optim": {"batch_size": 4, "lr": 1e-3, "warmup_ratio": 0.0, "max_steps": 3},
        "runtime": {"progress": False, "precision": "fp32", "checkpoint_minutes": 1000, "device": "cpu", **runtime},
    })


def _write_corpus(path: Path) -> None:
    rows = []
    for i in range(8):
        rows.append({"premise": f"Acme {i} acquired Beta.", "hypothesis": f"Beta acquired Acme {i}.", "label": "not_entailment",
                     "rule": "role_swap", "original": "", "doc_id": f"d{i}", "meta": {}, "split": "held_back" if i == 0 else "train"})
        rows.append({"premise": f"Acme {i} acquired Beta.", "hypothesis": f"Beta was acquired by Acme {i}.", "label": "entailment",
                     "rule": "passive_keep_roles", "original": "", "doc_id": f"d{i}", "meta": {}, "split": "held_back" if i == 0 else "train"})
    with gzip.open(path, "wt") as fh:
        fh.writelines(json.dumps(r) + "\n" for r in rows)


def test_training_with_contrast_pairs_reports_held_back_rules(tmp_path, tiny_nli_dir):
    from veridic.train._loop import Trainer

    corpus_path = tmp_path / "corpus.jsonl.gz"
    _write_corpus(corpus_path)
    cfg = _cfg(tiny_nli_dir, corpus_path)
    Trainer(config=cfg, output_dir=tmp_path / "run", data_dir=_toy(tmp_path / "data")).train()
    summary = json.loads((tmp_path / "run" / "training_summary.json").read_text())
    assert summary["data"]["n_contrast"] == 4
    assert summary["data"]["contrast"]["rules"]["role_swap"] == {"available": 7, "trained": 2, "held_back": 1}
    assert set(summary["held_out_contrast"]) == {"role_swap", "passive_keep_roles"}
    assert summary["device"] == "cpu"


def test_missing_backbone_and_data_fail_before_work(tmp_path, tiny_nli_dir):
    from veridic.errors import ModelLoadError
    from veridic.train._loop import Trainer

    corpus_path = tmp_path / "corpus.jsonl.gz"
    _write_corpus(corpus_path)
    with pytest.raises(ModelLoadError, match="backbone folder not found"):
        Trainer(config=_cfg(tmp_path / "nope", corpus_path), output_dir=tmp_path / "r1", data_dir=_toy(tmp_path / "d1")).train()
    with pytest.raises(InputError, match="data.sets.toy"):
        Trainer(config=_cfg(tiny_nli_dir, corpus_path), output_dir=tmp_path / "r2", data_dir=tmp_path / "empty").train()
    assert not (tmp_path / "r2" / "contrast.jsonl.gz").exists()


def test_cuda_without_cuda_fails_before_loading(tmp_path, tiny_nli_dir, monkeypatch):
    import torch

    from veridic.train import train_nli

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    corpus_path = tmp_path / "corpus.jsonl.gz"
    _write_corpus(corpus_path)
    with pytest.raises(ConfigError, match="CUDA is not available"):
        train_nli(config=_cfg(tiny_nli_dir, corpus_path), output_dir=tmp_path / "r", data_dir=_toy(tmp_path / "d"), device="cuda")
    assert not (tmp_path / "r").exists() or not any((tmp_path / "r").iterdir())


def test_damaged_checkpoint_is_refused_not_restarted(tmp_path, tiny_nli_dir):
    from veridic.train._loop import Trainer

    corpus_path = tmp_path / "corpus.jsonl.gz"
    _write_corpus(corpus_path)
    data = _toy(tmp_path / "d")
    cfg = _cfg(tiny_nli_dir, corpus_path)
    Trainer(config=cfg, output_dir=tmp_path / "r", data_dir=data).train(stop_after_steps=1)
    ckpt = next((tmp_path / "r" / "checkpoints").iterdir())
    (ckpt / "model.safetensors").write_bytes(b"not a checkpoint")  # a write cut short
    with pytest.raises(ConfigError, match="damaged"):
        Trainer(config=cfg, output_dir=tmp_path / "r", data_dir=data).train(resume=True)


def test_synth_contrast_cli(tmp_path, nlp):
    from typer.testing import CliRunner

    from veridic.synth.cli import app

    data = tmp_path / "data" / "nli"
    data.mkdir(parents=True)
    rows = [{"premise": p, "hypothesis": "x", "label": "neutral"} for p in
            ["Google acquired YouTube in 2006.", "Messi met Ronaldo in Madrid.", "Apple and Microsoft announced new products on Monday."]]
    with gzip.open(data / "snli.jsonl.gz", "wt") as fh:
        fh.writelines(json.dumps(r) + "\n" for r in rows)
    out = tmp_path / "c.jsonl.gz"
    res = CliRunner().invoke(app, ["contrast", "-o", str(out), "--data", str(tmp_path / "data"), "--sources", "snli", "-q"])
    assert res.exit_code == 0, res.output
    summary = json.loads(res.output)
    assert summary["pairs"] > 5 and "role_swap" in summary["by_rule"] and out.exists()
    bad = CliRunner().invoke(app, ["contrast", "-o", str(out), "--data", str(tmp_path / "data"), "--sources", "pomo_valid"])
    assert bad.exit_code == 2 and "pomo/valid.pm.zip" in bad.output

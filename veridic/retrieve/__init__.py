"""Evidence retrieval over a user corpus (BM25 + dense MiniLM, fused by RRF, NLI-reranked)."""

from veridic.retrieve._index import (
    BM25,
    INDEX_FORMAT,
    Document,
    EvidenceIndex,
    Hit,
    MiniLMEncoder,
    Passage,
    bm25_tokens,
    chunk_document,
    read_corpus,
    recall_at_k,
    reciprocal_rank_fusion,
)

__all__ = [
    "BM25",
    "INDEX_FORMAT",
    "Document",
    "EvidenceIndex",
    "Hit",
    "MiniLMEncoder",
    "Passage",
    "bm25_tokens",
    "chunk_document",
    "read_corpus",
    "recall_at_k",
    "reciprocal_rank_fusion",
]

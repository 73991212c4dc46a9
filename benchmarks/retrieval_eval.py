"""Recall@k of gold evidence for veridic's evidence index (development log, docs/history/benchmarks-log.md, "Retrieval").

Two corpora built from ../shared/data:

* DialFact-small (``bench/dialfact_small.jsonl``), document level: the corpus is the distinct grounding
  passages of the set, each claim's gold is its own passage.
* WiCE dev (``spans/wice_non_supported_tokens/dev.jsonl``), sentence level: the corpus is every evidence
  sentence of every article pooled together, each claim's gold is any of its supporting sentences (claims
  with none are left out).

Embedding the 12k WiCE sentences takes several minutes on one CPU thread; ``--skip-wice`` leaves it out.

    .venv/bin/python benchmarks/retrieval_eval.py --k 5 --out runs/eval/retrieval.json
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("VERIDIC_DATA", REPO.parent / "shared" / "data"))


def _jsonl(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def dialfact_corpus(path: Path):
    """Documents, queries and gold ids for DialFact-small (one passage per distinct grounding)."""
    from veridic.retrieve import Document

    docs, queries, gold, seen = [], [], [], {}
    for r in _jsonl(path):
        src = r["source"]
        if src not in seen:
            seen[src] = f"d{len(seen)}"
            # DialFact groundings read "title: … content: …"; the title feeds the entity-matched lookup.
            title = src.split("content:")[0].replace("title:", "").strip() if src.startswith("title:") else None
            docs.append(Document(doc_id=seen[src], text=src, title=title))
        queries.append(r["claim"])
        gold.append([seen[src]])
    return docs, queries, gold


def wice_corpus(path: Path):
    """Documents (one per evidence sentence, all articles pooled), queries and gold sentence ids for WiCE."""
    from veridic.retrieve import Document

    docs, queries, gold, articles = [], [], [], {}
    for r in _jsonl(path):
        key = "\n".join(r["evidence"])
        if key not in articles:
            articles[key] = f"a{len(articles)}"
            docs.extend(Document(doc_id=f"{articles[key]}:{i}", text=s) for i, s in enumerate(r["evidence"]) if s.strip())
        g = sorted({f"{articles[key]}:{i}" for grp in r["supporting_sentences"] for i in grp})
        if g:
            queries.append(r["claim"])
            gold.append(g)
    return docs, queries, gold, len(articles)


def _evaluate(name: str, docs, queries, gold, *, modes: list[str], k: int, encoder, extra: dict[str, Any]) -> dict[str, Any]:
    from veridic.retrieve import EvidenceIndex, recall_at_k

    out: dict[str, Any] = {}
    t0 = time.perf_counter()
    index = EvidenceIndex.build(documents=docs, encoder=encoder)
    build_s = round(time.perf_counter() - t0, 1)
    for mode in modes:
        rep = recall_at_k(index=index, queries=queries, gold=gold, k=k, mode=mode)
        rep.pop("index", None)
        out[f"{name}/{mode}"] = {**rep, **extra, "index_build_seconds": build_s}
        print(f"{name:>20} {mode:>6}  recall@{k} {rep['recall_at_k']:.3f}  mrr@{k} {rep['mrr_at_k']:.3f}", flush=True)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=DATA, help="the shared data folder (default: ../shared/data or $VERIDIC_DATA)")
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--threads", type=int, default=1, help="torch threads for the MiniLM encoder")
    ap.add_argument("--skip-wice", action="store_true", help="leave out the 12k-sentence WiCE corpus")
    ap.add_argument("--out", type=Path)
    a = ap.parse_args(argv)

    dialfact = a.data / "bench" / "dialfact_small.jsonl"
    wice = a.data / "spans" / "wice_non_supported_tokens" / "dev.jsonl"
    if not dialfact.exists():
        print(f"error: expected {dialfact} (the shared dev data); set --data or VERIDIC_DATA to the folder that holds bench/ and spans/", file=sys.stderr)
        return 2

    import torch

    from veridic.retrieve import MiniLMEncoder

    torch.set_num_threads(a.threads)
    encoder = MiniLMEncoder(batch_size=64)
    res: dict[str, Any] = {"k": a.k, "encoder": encoder.describe()}

    docs, queries, gold = dialfact_corpus(dialfact)
    extra = {"documents": len(docs)}
    res |= _evaluate("dialfact_small", docs, queries, gold, modes=["bm25"], k=a.k, encoder=None, extra=extra)
    res |= _evaluate("dialfact_small", docs, queries, gold, modes=["dense", "hybrid"], k=a.k, encoder=encoder, extra=extra)

    if a.skip_wice:
        pass
    elif not wice.exists():
        print(f"note: {wice} is absent; WiCE left out", file=sys.stderr)
    else:
        docs, queries, gold, n_articles = wice_corpus(wice)
        extra = {"sentences": len(docs), "articles": n_articles}
        res |= _evaluate("wice_dev_sentences", docs, queries, gold, modes=["bm25", "dense", "hybrid"], k=a.k, encoder=encoder, extra=extra)

    if a.out:
        a.out.parent.mkdir(parents=True, exist_ok=True)
        a.out.write_text(json.dumps(res, indent=2) + "\n", encoding="utf-8")
        print(f"wrote {a.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""``veridic index``: build and search an evidence index (a thin shell over :mod:`veridic.retrieve._index`).

Mount with ``app.add_typer(index_app, name="index")``; also runnable as
``python -m veridic.retrieve.cli``.

    veridic index build --corpus DOCS/ --out my-index
    veridic index search --index my-index --query "Messi was born in Rosario" -k 5 --rerank
    veridic index eval --index idx --queries q.jsonl      # recall@k of gold documents
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import NoReturn

try:
    import typer
except ImportError:  # pragma: no cover
    typer = None  # type: ignore[assignment]

from veridic.errors import VeridicError

__all__ = ["app"]

if typer is not None:
    app = typer.Typer(help="Build and search evidence indexes.", no_args_is_help=True, add_completion=False)

    def _fail(exc: Exception) -> NoReturn:
        sys.stderr.write(f"error: {exc}\n")
        raise typer.Exit(code=2)

    @app.command("build")
    def build_cmd(
        corpus: Path = typer.Option(..., "--input", "-i", "--corpus", help="Folder of .txt/.md files, or a .jsonl with id, text, title."),
        out: Path = typer.Option(..., "--output", "-o", "--out", help="Index folder to write."),
        max_words: int = typer.Option(100, help="Passage length in words (whole sentences)."),
        dense: bool = typer.Option(True, "--dense/--no-dense", help="Also embed passages with MiniLM."),
        batch_size: int = typer.Option(32, "--batch-size"),
        device: str = typer.Option("cpu", "--device", help="auto (CUDA when present), cpu, cuda or cuda:N."),
    ) -> None:
        """Build an on-disk index (BM25 + dense MiniLM embeddings)."""
        from veridic.nli._backend import check_device
        from veridic.retrieve._index import EvidenceIndex, MiniLMEncoder, read_corpus

        try:
            check_device(device)
            EvidenceIndex.check_output(out)  # a bad --output fails now, not after the corpus was embedded
            enc = MiniLMEncoder(batch_size=batch_size, device=device) if dense else None
            idx = EvidenceIndex.build(documents=read_corpus(corpus), encoder=enc, max_words=max_words)
            idx.save(out)
        except VeridicError as exc:
            _fail(exc)
        sys.stdout.write(f"indexed {idx.meta['n_documents']} documents as {len(idx)} passages in {out}\n")

    @app.command("search")
    def search_cmd(
        index: Path = typer.Option(..., "--index", "-i"),
        query: str = typer.Option(..., "--query", "-q"),
        k: int = typer.Option(5, "-k"),
        mode: str = typer.Option("hybrid", help="bm25, dense or hybrid."),
        rerank: bool = typer.Option(False, "--rerank", help="Rerank with the NLI model."),
        entity_match: bool = typer.Option(True, "--entity-match/--no-entity-match", help="Add the document titled like the main entity."),
        model: str | None = typer.Option(None, "--model", "-m", help="NLI model for --rerank (default: embedded)."),
        as_json: bool = typer.Option(False, "--json"),
        device: str = typer.Option("cpu", "--device", help="auto (CUDA when present), cpu, cuda or cuda:N."),
    ) -> None:
        """Top-k passages with document ids and offsets."""
        from veridic.nli._backend import check_device
        from veridic.retrieve._index import EvidenceIndex, MiniLMEncoder

        try:
            check_device(device)
            reranker = None
            if rerank:
                from veridic.nli import load_backend

                reranker = load_backend(model, device=device)
            idx = EvidenceIndex.load(index, encoder=MiniLMEncoder(device=device) if mode != "bm25" else None, reranker=reranker)
            hits = idx.search(query=query, k=k, mode=mode, rerank=rerank, entity_match=entity_match)
        except VeridicError as exc:
            _fail(exc)
        if as_json:
            sys.stdout.write(json.dumps([h.to_dict() for h in hits], indent=2, ensure_ascii=False) + "\n")
            return
        for r, h in enumerate(hits, 1):
            sys.stdout.write(f"{r}. {h.doc_id} [{h.start}:{h.end}] score={h.score:.4f} ({h.source})\n   {h.text[:200]}\n")

    @app.command("eval")
    def eval_cmd(
        index: Path = typer.Option(..., "--index", "-i"),
        queries: Path = typer.Option(..., "--queries", help="JSONL with 'query' and 'gold' (a list of document ids)."),
        k: int = typer.Option(5, "-k"),
        mode: str = typer.Option("hybrid"),
        rerank: bool = typer.Option(False, "--rerank"),
        model: str | None = typer.Option(None, "--model", "-m"),
    ) -> None:
        """Recall@k: the share of queries with a gold document among the top k."""
        from veridic.retrieve._index import EvidenceIndex, MiniLMEncoder, recall_at_k

        try:
            reranker = None
            if rerank:
                from veridic.nli import load_backend

                reranker = load_backend(model)
            idx = EvidenceIndex.load(index, encoder=MiniLMEncoder() if mode != "bm25" else None, reranker=reranker)
            rows = [json.loads(x) for x in queries.read_text(encoding="utf-8").splitlines() if x.strip()]
            rep = recall_at_k(index=idx, queries=[r["query"] for r in rows], gold=[r["gold"] for r in rows], k=k, mode=mode, rerank=rerank)
        except VeridicError as exc:
            _fail(exc)
        sys.stdout.write(json.dumps(rep, indent=2) + "\n")
else:  # pragma: no cover
    app = None

if __name__ == "__main__":  # pragma: no cover
    app()

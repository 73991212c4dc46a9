"""Text utilities: sentence splitting and token-aware chunking, with offsets."""

from veridic.text._chunking import chunk_text, sentence_windows
from veridic.text._sentences import SPLITTERS, split_sentences

__all__ = ["split_sentences", "chunk_text", "sentence_windows", "SPLITTERS"]

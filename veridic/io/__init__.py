"""Readers and writers for row files, and atomic writes for every output veridic produces."""

from veridic.io._atomic import atomic_open, atomic_path, atomic_write_bytes, atomic_write_text, check_output_path
from veridic.io._records import (
    MAX_SOURCE_CHARS,
    SUPPORTED_SUFFIXES,
    check_output,
    check_text_length,
    iter_jsonl,
    read_records,
    record_to_pair,
    write_records,
)

__all__ = ["read_records", "iter_jsonl", "write_records", "record_to_pair", "SUPPORTED_SUFFIXES", "MAX_SOURCE_CHARS", "check_output",
           "check_output_path", "check_text_length", "atomic_open", "atomic_path", "atomic_write_text", "atomic_write_bytes"]

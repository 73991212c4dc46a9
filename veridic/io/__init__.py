"""Readers and writers for row files."""

from veridic.io.records import SUPPORTED_SUFFIXES, iter_jsonl, read_records, record_to_pair, write_records

__all__ = ["read_records", "iter_jsonl", "write_records", "record_to_pair", "SUPPORTED_SUFFIXES"]

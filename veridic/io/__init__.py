"""Readers and writers for row files."""

from veridic.io.records import SUPPORTED_SUFFIXES, read_records, record_to_pair, write_records

__all__ = ["read_records", "write_records", "record_to_pair", "SUPPORTED_SUFFIXES"]

"""atheris (libFuzzer) harness for veridic's file readers: coverage-guided bytes -> every suffix.

A run passes when every input is read or refused with a VeridicError; any other
exception is a crash that atheris reports with the input that caused it.

    pip install atheris==3.0.0
    python fuzz/fuzz_readers.py -runs=20000 -max_len=2048 $(mktemp -d) fuzz/seeds_readers

(libFuzzer adds new inputs to the first folder, so that one is a scratch copy.) libFuzzer
prints "Done N runs" and exits 0 when no input crashed; with VERIDIC_FUZZ_STATS=FILE the
harness also keeps per-suffix counts (inputs tried, inputs read) in FILE as JSON.
"""

import json
import os
import sys
import tempfile
from collections import Counter

import atheris

with atheris.instrument_imports():
    from veridic.errors import VeridicError
    from veridic.io import read_records, record_to_pair

SUFFIXES = [".jsonl", ".json", ".csv", ".tsv", ".parquet", ".jsonl.gz"]
TMP = tempfile.mkdtemp(prefix="veridic-fuzz-")
TRIED: Counter = Counter()
READ: Counter = Counter()


def one_input(data: bytes) -> None:
    if not data:
        return
    suffix = SUFFIXES[data[0] % len(SUFFIXES)]
    payload = data[1:]
    if suffix == ".jsonl.gz":
        import gzip

        payload = gzip.compress(payload) if data[0] & 0x80 else payload  # both valid gzip and raw bytes
    path = os.path.join(TMP, "in" + suffix)
    with open(path, "wb") as fh:
        fh.write(payload)
    TRIED[suffix] += 1
    try:
        for i, r in enumerate(read_records(path), start=1):
            record_to_pair(r, row_number=i, path=path)
        READ[suffix] += 1
    except VeridicError:
        pass  # a clear, typed refusal is the expected outcome for most inputs
    if sum(TRIED.values()) % 200 == 0:
        _save_stats()


def _save_stats() -> None:
    out = os.environ.get("VERIDIC_FUZZ_STATS")
    if out:
        with open(out, "w") as fh:
            json.dump({"harness": "readers", "total": sum(TRIED.values()), "tried": dict(TRIED), "readable": dict(READ)}, fh)


if __name__ == "__main__":
    atheris.Setup(sys.argv, one_input)
    atheris.Fuzz()

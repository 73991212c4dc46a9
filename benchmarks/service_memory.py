"""Memory (RSS) of `veridic serve` with and without the express lane, after both lanes have worked.

Starts `veridic serve` (the embedded model) on 127.0.0.1 with each configuration in turn, sends a few one-pair
requests, then one large pair (a ~10,000-character source, well over --express-tokens) with one-pair requests
beside it, so that an express lane, if there is one, has scored; then reads the server's resident memory
(VmRSS) and its peak (VmHWM) from /proc and `veridic_express_batches` from /metrics. Loopback only; Linux.

    OMP_NUM_THREADS=1 nice -n 5 .venv/bin/python benchmarks/service_memory.py --out /tmp/mem.json
    OMP_NUM_THREADS=1 nice -n 5 .venv/bin/python benchmarks/service_memory.py --config "" --config=--no-express-lane
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("VERIDIC_DATA", REPO.parent / "shared" / "data"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from service_load import _pairs, served  # noqa: E402

DEFAULT_CONFIGS = ["", "--no-express-lane", "--backend torch", "--backend torch --no-express-lane"]


def _status(pid: int) -> dict[str, int]:
    out = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, val = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            out[key] = int(val.split()[0]) // 1024  # MiB
    return out


def measure(*, extra: list[str], small: list[dict], big_chars: int) -> dict:
    t0 = time.monotonic()
    with served(extra, log_name="service_memory") as (base, proc):
        loaded = _status(proc.pid)
        with httpx.Client(base_url=base, timeout=300) as c:
            for p in small[:4]:
                c.post("/v1/score", json={"pairs": [p]})
            one_pair = _status(proc.pid)
            text = " ".join(p["source"] for p in small)
            while len(text) < big_chars:
                text += " " + text
            big = threading.Thread(target=c.post, args=("/v1/score",), kwargs={"json": {"pairs": [{"source": text[:big_chars], "claim": small[0]["claim"]}]}})
            big.start()
            time.sleep(0.5)
            for p in small[4:10]:
                c.post("/v1/score", json={"pairs": [p]})
            big.join()
            express = next((float(line.split()[-1]) for line in c.get("/metrics").text.splitlines() if line.startswith("veridic_express_batches ")), None)
        return {"extra": " ".join(extra), "startup_s": round(time.monotonic() - t0, 1), "loaded_mib": loaded, "after_one_pair_mib": one_pair,
                "after_big_pair_mib": _status(proc.pid), "express_batches": express}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=DATA / "bench" / "dialfact_small.jsonl")
    ap.add_argument("--config", action="append", help="`veridic serve` options of one configuration, space-separated (repeatable; "
                                                       "default: the defaults, --no-express-lane, and both with --backend torch).")
    ap.add_argument("--method", default="hybrid")
    ap.add_argument("--big-chars", type=int, default=10_000)
    ap.add_argument("--out", type=Path)
    a = ap.parse_args()
    small = _pairs(a.data, 20)
    rows = []
    for conf in (a.config if a.config is not None else DEFAULT_CONFIGS):
        rows.append(measure(extra=["--method", a.method, *conf.split()], small=small, big_chars=a.big_chars))
        print(json.dumps(rows[-1]), flush=True)
    if a.out:
        a.out.write_text(json.dumps(rows, indent=2) + "\n")


if __name__ == "__main__":
    main()

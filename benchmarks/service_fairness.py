"""Latency of one-pair requests while a maximal request runs: does a large request block small ones?

Starts `veridic serve` (real embedded model) on 127.0.0.1, sends one *maximal* request (``--big-pairs``
pairs whose sources fill the request's token budget) in the background, and meanwhile sends one-pair
requests one after another (``--small-concurrency`` at a time) for ``--seconds``; reports p50/p95/max
latency of the small requests, their status codes, and what happened to the big one. The same small
load without the big request is the baseline. Loopback only, bounded by ``--seconds``.

    OMP_NUM_THREADS=1 nice -n 5 .venv/bin/python benchmarks/service_fairness.py --seconds 40 --out /tmp/fair.json

``--repo DIR`` runs the service from another checkout (e.g. an earlier release) for comparison.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import threading
import time
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("VERIDIC_DATA", REPO.parent / "shared" / "data"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from service_load import _pairs, served  # noqa: E402


def _big_pairs(n: int, chars: int, claims: list[dict], budget: int) -> list[dict]:
    """``n`` pairs with sources of ordinary English (the bench sources, repeated), as long as the token budget allows."""
    from veridic.service._settings import estimate_pair_cost

    text = " ".join(p["source"] for p in claims)
    while len(text) < chars:
        text += " " + text
    while True:
        pairs = [{"source": text[:chars], "claim": claims[i % len(claims)]["claim"]} for i in range(n)]
        if sum(estimate_pair_cost(p["source"], p["claim"]) for p in pairs) <= budget:
            return pairs
        chars = int(chars * 0.97)


def run(*, repo: Path, seconds: float, big: list[dict] | None, small: list[dict], concurrency: int, extra: list[str]) -> dict:
    t0 = time.monotonic()
    with served(extra, repo=repo, log_name="service_fairness") as (base, _proc):
        with httpx.Client(base_url=base, timeout=120) as c:  # warm-up
            for p in small[:4]:
                c.post("/v1/score", json={"pairs": [p]})
        startup = round(time.monotonic() - t0, 1)
        big_result: dict = {}

        def send_big():
            t = time.perf_counter()
            try:
                # the client gives up like a real one would; the server must not keep scoring for it
                r = httpx.post(base + "/v1/score", json={"pairs": big}, timeout=seconds + 60)
                big_result.update(status=r.status_code, seconds=round(time.perf_counter() - t, 1),
                                  message=(r.json().get("error") or {}).get("message", "")[:160] if r.status_code != 200 else "")
            except httpx.HTTPError as exc:
                big_result.update(status=type(exc).__name__, seconds=round(time.perf_counter() - t, 1))

        lat: list[float] = []
        codes: dict[str, int] = {}
        stop = time.monotonic() + seconds
        bt = None
        if big:
            bt = threading.Thread(target=send_big, daemon=True)
            bt.start()
            time.sleep(1.0)  # let the big request reach the model first

        def small_worker(k: int):
            with httpx.Client(base_url=base, timeout=120) as c:
                i = k
                while time.monotonic() < stop:
                    t = time.perf_counter()
                    r = c.post("/v1/score", json={"pairs": [small[i % len(small)]]})
                    lat.append(time.perf_counter() - t)
                    codes[str(r.status_code)] = codes.get(str(r.status_code), 0) + 1
                    i += concurrency

        ws = [threading.Thread(target=small_worker, args=(k,)) for k in range(concurrency)]
        for w in ws:
            w.start()
        for w in ws:
            w.join()
        if bt is not None:
            bt.join(120)
        metrics = httpx.get(base + "/metrics").text
        q = statistics.quantiles(lat, n=100) if len(lat) >= 2 else [float("nan")] * 99
        dropped = [line for line in metrics.splitlines() if line.startswith(("veridic_dropped_pairs_total", "veridic_abandoned_requests_total", "process_resident_memory_bytes"))]
        return {"startup_s": startup, "small_requests": len(lat), "status_codes": codes, "p50_s": round(q[49], 3), "p95_s": round(q[94], 3), "max_s": round(max(lat), 3),
                "big": big_result or None, "metrics": dropped}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=DATA / "bench" / "dialfact_small.jsonl")
    ap.add_argument("--seconds", type=float, default=40)
    ap.add_argument("--big-pairs", type=int, default=64)
    ap.add_argument("--big-chars", type=int, default=15_000, help="Characters per big source, shortened until the request fits --budget.")
    ap.add_argument("--budget", type=int, default=150_000, help="The service's --max-request-tokens: the big request is the largest that fits.")
    ap.add_argument("--small-concurrency", type=int, default=2)
    ap.add_argument("--repo", type=Path, default=REPO, help="Checkout to serve from (to compare with an earlier release).")
    ap.add_argument("--method", default="hybrid")
    ap.add_argument("--extra", default="", help="More `veridic serve` options, space-separated.")
    ap.add_argument("--skip-baseline", action="store_true")
    ap.add_argument("--out", type=Path)
    a = ap.parse_args()
    small = _pairs(a.data, 200)
    big = _big_pairs(a.big_pairs, a.big_chars, [p for p in small if p["claim"].count(".") <= 1], a.budget)
    extra = ["--method", a.method, *a.extra.split()]
    out = {"repo": str(a.repo), "data": str(a.data), "seconds": a.seconds, "big_pairs": a.big_pairs, "big_chars": len(big[0]["source"]),
           "small_concurrency": a.small_concurrency, "cpus": os.cpu_count()}
    if not a.skip_baseline:
        out["alone"] = run(repo=a.repo, seconds=a.seconds, big=None, small=small, concurrency=a.small_concurrency, extra=extra)
        print(json.dumps({"alone": out["alone"]}), flush=True)
    out["with_big"] = run(repo=a.repo, seconds=a.seconds, big=big, small=small, concurrency=a.small_concurrency, extra=extra)
    print(json.dumps({"with_big": out["with_big"]}), flush=True)
    if a.out:
        a.out.write_text(json.dumps(out, indent=2) + "\n")


if __name__ == "__main__":
    main()

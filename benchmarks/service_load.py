"""Load-test `veridic serve` on loopback: single-pair requests, with and without micro-batching.

Starts the service (real embedded model) as a subprocess on 127.0.0.1, sends a bounded number of
single-pair POST /v1/score requests from an asyncio/httpx client at a fixed concurrency, and reports
latency p50/p95, throughput and the mean micro-batch size (from /metrics). Loopback only; every
loop is bounded by a request count and a time limit.

    .venv/bin/python benchmarks/service_load.py --requests 200 --concurrency 8 --out /tmp/service_load.json

``--hostile`` instead sends the hostile set of docs/service_and_ray.md ("Re-running the audit") to one server:
malformed, oversized and invalid requests (the 5xx count must be 0), the newline-split claim (3,552 one-word
lines: refused before any model work), and the costliest claims the limits accept, abandoned by their client
after 0.5 s, each followed by a one-pair request that must use the main model copy: how long the model stays
held after the client left.

    .venv/bin/python benchmarks/service_load.py --hostile --out /tmp/service_hostile.json
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import signal
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("VERIDIC_DATA", REPO.parent / "shared" / "data"))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def served(extra: list[str], *, repo: Path = REPO, log_name: str = "service", start_timeout_s: float = 900):
    """Run `veridic serve` from ``repo`` on a free loopback port with ``extra`` options; yield ``(base_url, process)``
    once /v1/health answers, and stop the server on exit. Its stderr goes to /tmp/<log_name>_<port>.log."""
    port = _free_port()
    cmd = [sys.executable, "-m", "veridic.cli", "serve", "--host", "127.0.0.1", "--port", str(port), "--log-level", "warning", *extra]
    log = open(f"/tmp/{log_name}_{port}.log", "w")  # noqa: SIM115 - the server's stderr, read on failure
    proc = subprocess.Popen(cmd, cwd=repo, env=dict(os.environ, PYTHONPATH=str(repo)), stdout=subprocess.DEVNULL, stderr=log)
    base = f"http://127.0.0.1:{port}"
    try:
        t0 = time.monotonic()
        while True:
            try:
                if httpx.get(base + "/v1/health", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if proc.poll() is not None or time.monotonic() - t0 > start_timeout_s:  # a loaded machine can take minutes to load the model
                raise RuntimeError(f"service did not start; see {log.name}")
            time.sleep(0.5)
        yield base, proc
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


def _pairs(path: Path, n: int) -> list[dict]:
    rows = [json.loads(line) for line in path.open(encoding="utf-8") if line.strip()][:n]
    return [{"source": r["source"], "claim": r["claim"], "id": str(r.get("id"))} for r in rows]


async def _load(base: str, pairs: list[dict], *, requests: int, concurrency: int, limit_s: float) -> tuple[list[float], dict[str, float], int]:
    lat: list[float] = []
    scores: dict[str, float] = {}
    errors = 0
    queue: asyncio.Queue = asyncio.Queue()
    for i in range(requests):
        queue.put_nowait(pairs[i % len(pairs)])
    deadline = time.monotonic() + limit_s
    async with httpx.AsyncClient(base_url=base, timeout=60) as client:

        async def worker():
            nonlocal errors
            while time.monotonic() < deadline:
                try:
                    p = queue.get_nowait()
                except asyncio.QueueEmpty:
                    return
                t0 = time.perf_counter()
                r = await client.post("/v1/score", json={"pairs": [p]})
                lat.append(time.perf_counter() - t0)
                if r.status_code != 200:
                    errors += 1
                else:
                    scores[p["id"]] = r.json()["verdicts"][0]["score"]

        await asyncio.gather(*(worker() for _ in range(concurrency)))
    return lat, scores, errors


def _metric(text: str, name: str) -> float:
    m = re.search(rf"^{name} ([0-9.e+-]+)$", text, re.MULTILINE)
    return float(m.group(1)) if m else float("nan")


def run_config(name: str, *, batch_ms: float, max_batch: int, pairs: list[dict], requests: int, concurrency: int, method: str, limit_s: float) -> dict:
    t0 = time.monotonic()
    with served(["--method", method, "--batch-ms", str(batch_ms), "--max-batch", str(max_batch)], log_name="service_load",
                start_timeout_s=180) as (base, _proc):
        startup = time.monotonic() - t0
        asyncio.run(_load(base, pairs, requests=min(16, requests), concurrency=concurrency, limit_s=limit_s))  # warm-up
        before = httpx.get(base + "/metrics").text
        t1 = time.perf_counter()
        lat, scores, errors = asyncio.run(_load(base, pairs, requests=requests, concurrency=concurrency, limit_s=limit_s))
        wall = time.perf_counter() - t1
        after = httpx.get(base + "/metrics").text
        calls = _metric(after, "veridic_batch_pairs_count") - _metric(before, "veridic_batch_pairs_count")
        pairs_scored = _metric(after, "veridic_batch_pairs_sum") - _metric(before, "veridic_batch_pairs_sum")
        q = statistics.quantiles(lat, n=100)
        return {
            "config": name, "batch_ms": batch_ms, "max_batch": max_batch, "requests": len(lat), "errors": errors, "concurrency": concurrency,
            "p50_ms": round(q[49] * 1000, 1), "p95_ms": round(q[94] * 1000, 1), "mean_ms": round(statistics.mean(lat) * 1000, 1),
            "throughput_rps": round(len(lat) / wall, 2), "wall_s": round(wall, 2), "model_calls": int(calls),
            "mean_batch_pairs": round(pairs_scored / calls, 2) if calls else None, "startup_s": round(startup, 1), "scores": scores,
        }


def _held_after_leaving(base: str, body: dict, *, leave_after_s: float = 0.5) -> dict:
    """Send ``body``, leave after ``leave_after_s``, then time a one-pair request that only the main model thread takes."""
    probe = {"pairs": [{"source": "A cat sat on the mat.", "claim": "A cat sat."}], "options": {"max_windows": 3}}  # per-request options: main copy
    baseline = min(_timed(base, probe)[1] for _ in range(3))
    try:
        httpx.post(base + "/v1/score", json=body, timeout=leave_after_s)
        status = "answered"
    except httpx.TimeoutException:
        status = "left"
    code, waited = _timed(base, probe)
    return {"first": status, "probe_status": code, "probe_baseline_s": round(baseline, 2), "probe_s": round(waited, 2),
            "held_after_leaving_s": round(max(0.0, waited - baseline), 2)}


def _timed(base: str, body: dict) -> tuple[int, float]:
    t = time.perf_counter()
    r = httpx.post(base + "/v1/score", json=body, timeout=120)
    return r.status_code, time.perf_counter() - t


def hostile(extra: list[str]) -> dict:
    newline_claim = "\n".join(["cat"] * 3_552)
    long_source = " ".join(f"Sentence {i} says the council met on day {i} to discuss item {i % 7}." for i in range(300))[:19_990]
    raw = {
        "not json": b"{not json", "deep nesting": b"[" * 10_000 + b"]" * 10_000, "NaN": b'{"pairs": [{"source": NaN, "claim": "x"}]}',
        "surrogate id": b'{"pairs": [{"source": "A.", "claim": "A.", "id": "x\\ud800"}]}',
        "surrogate claim": b'{"pairs": [{"source": "A.", "claim": "\\udfff"}]}', "not utf-8": b'{"pairs": [{"source": "\xff", "claim": "x"}]}',
        "huge body": b"x" * (2 << 20),
    }
    bodies = {
        "newline claim": {"pairs": [{"source": "A cat sat on the mat.", "claim": newline_claim}]},
        "invisible claim": {"pairs": [{"source": "A cat sat.", "claim": "\ufe0f\u3164"}]},
        "punctuation claim": {"pairs": [{"source": "...", "claim": "..."}]},
        "unknown option": {"pairs": [{"source": "A.", "claim": "A."}], "options": {"nope": 1}},
        "wrong type": {"pairs": [{"source": 1, "claim": "A."}]},
        "too many pairs": {"pairs": [{"source": "A.", "claim": "A."}] * 65},
        "long text": {"pairs": [{"source": "x" * 20_001, "claim": "A."}]},
        "over the token budget": {"pairs": [{"source": long_source, "claim": "\n".join(["The council met."] * 40)}]},
    }
    out: dict = {"statuses": {}}
    with served(extra, log_name="service_hostile", start_timeout_s=600) as (base, _proc):
        for name, data in raw.items():
            r = httpx.post(base + "/v1/score", content=data, headers={"content-type": "application/json"}, timeout=60)
            out["statuses"][name] = r.status_code
        for name, body in bodies.items():
            t = time.perf_counter()
            r = httpx.post(base + "/v1/score", json=body, timeout=120)
            out["statuses"][name] = r.status_code
            if name == "newline claim":
                out["newline_claim"] = {"status": r.status_code, "seconds": round(time.perf_counter() - t, 3), "message": r.json()["error"]["message"][:160]}
        # the costliest claims the limits accept: 128 lines against a short source; 33 sentences against a 19,000-character source
        out["max_sentences_short_source"] = _held_after_leaving(base, {"pairs": [{"source": "The council met on Monday. It approved the budget.",
                                                                                   "claim": "\n".join(f"The council met on day {i}." for i in range(128))}]})
        out["max_budget_long_source"] = _held_after_leaving(base, {"pairs": [{"source": long_source,
                                                                               "claim": "\n".join(f"The council met on day {i}." for i in range(33))}]})
        m = httpx.get(base + "/metrics").text
    out["5xx"] = sum(v >= 500 for v in out["statuses"].values()) + int(sum(float(x) for x in re.findall(r'veridic_requests_total\{route="[^"]*",status="5\d\d"\} ([0-9.e+]+)', m)))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--hostile", action="store_true", help="Send the hostile set instead of the load test.")
    ap.add_argument("--serve-args", default="", help="--hostile: extra `veridic serve` options, space-separated (e.g. '--no-express-lane').")
    ap.add_argument("--data", type=Path, default=DATA / "bench" / "dialfact_small.jsonl")
    ap.add_argument("--requests", type=int, default=200)
    ap.add_argument("--concurrency", type=int, default=8)
    ap.add_argument("--method", default="hybrid")
    ap.add_argument("--limit-s", type=float, default=400, help="Stop sending after this many seconds per config.")
    ap.add_argument("--out", type=Path)
    a = ap.parse_args()
    if a.hostile:
        res = hostile(a.serve_args.split())
        print(json.dumps(res, indent=2))
        if a.out:
            a.out.write_text(json.dumps(res, indent=2) + "\n")
        return
    pairs = _pairs(a.data, a.requests)
    results = []
    for name, bms, mb in (("no micro-batching", 0.0, 1), ("micro-batching 5 ms / 32 pairs", 5.0, 32)):
        r = run_config(name, batch_ms=bms, max_batch=mb, pairs=pairs, requests=a.requests, concurrency=a.concurrency, method=a.method, limit_s=a.limit_s)
        results.append(r)
        print(json.dumps({k: v for k, v in r.items() if k != "scores"}), flush=True)
    s0, s1 = results[0]["scores"], results[1]["scores"]
    common = sorted(set(s0) & set(s1))
    diff = max((abs(s0[k] - s1[k]) for k in common), default=float("nan"))
    summary = {"data": str(a.data), "method": a.method, "pairs_compared": len(common), "max_abs_score_diff_batched_vs_unbatched": diff,
               "identical": sum(s0[k] == s1[k] for k in common), "results": [{k: v for k, v in r.items() if k != "scores"} for r in results]}
    print(json.dumps({k: v for k, v in summary.items() if k != "results"}))
    if a.out:
        a.out.write_text(json.dumps(summary, indent=2) + "\n")


if __name__ == "__main__":
    main()

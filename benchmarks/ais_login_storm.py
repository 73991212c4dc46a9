"""`veridic ais serve` on loopback, tried as a crowd and as a hostile user would (docs/service_and_ray.md, "AIS app").

Each check starts its own server (a fresh SQLite database with 50 annotators) and prints one JSON line:

- ``storm``: 50 annotators log in at once and each asks for an item: how long the storm takes and the slowest
  ``GET /api/next`` right after a login (password hashing must not hold the database's write lock).
- ``throttle``: 40 concurrent wrong passwords for one account (how many were checked, i.e. answered 401, and
  how many refused with 429 before hashing); 60 concurrent wrong passwords for 60 names from one address; 300
  attempts with spoofed ``X-Forwarded-For`` (how many were checked); then a correct password from an address
  the account used before.
- ``body``: a 150 MB POST without a cookie: the status and the server's memory growth (VmRSS).
- ``flood``: 200 correct logins at concurrency 40 while one annotator keeps loading pages: the server's memory
  before, at its peak, and 15 s after, and the annotator's p95 page time during the flood.
- ``slow``: 3 silent sockets and 3 sending a header byte every 2 s: how many are still open after 30 s.
- ``queue``: 20 annotators take and finish 2,000 items (k = 3) concurrently through the store on ``--db``
  (a PostgreSQL URL, or a SQLite file): false "done" answers (told "no more items" while one was open to them).

    nice -n 5 .venv/bin/python benchmarks/ais_login_storm.py                       # every check but queue
    nice -n 5 .venv/bin/python benchmarks/ais_login_storm.py throttle body
    .venv/bin/python benchmarks/ais_login_storm.py queue --db postgresql://veridic:veridic@127.0.0.1:5432/veridic_test
"""

from __future__ import annotations

import argparse
import json
import socket
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO / "tests"), str(REPO)]
from _ais_server import Server  # noqa: E402
from test_ais_load import N_ANNOTATORS, _setup  # noqa: E402


def _rss_mb(pid: int, field: str = "VmRSS") -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _server(args: tuple[str, ...] = ()) -> Server:
    db = Path(tempfile.mkdtemp()) / "audit.sqlite"
    _setup(db, items=50)
    return Server(db, args=args).start()


def _parallel(fn, args_list) -> list:
    out: list = []
    lock = threading.Lock()

    def go(a):
        r = fn(*a)
        with lock:
            out.append(r)

    ts = [threading.Thread(target=go, args=(a,)) for a in args_list]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return out


def storm() -> dict:
    srv = _server()
    res: list[tuple[int, float, int, float]] = []

    def go(a: int) -> None:
        t = time.time()
        with httpx.Client(base_url=srv.url, timeout=120) as c:
            r = c.post("/login", data={"name": f"a{a}", "password": f"secret-pw{a}"})
            t2 = time.time()
            r2 = c.get("/api/next")
            res.append((r.status_code, t2 - t, r2.status_code, time.time() - t2))

    try:
        t0 = time.time()
        _parallel(lambda a: go(a), [(a,) for a in range(N_ANNOTATORS)])
        total = time.time() - t0
    finally:
        srv.stop()
    return {"check": "storm", "logins": len(res), "ok": sum(r[0] == 303 for r in res), "seconds": round(total, 1),
            "slowest_login_s": round(max(r[1] for r in res), 1), "slowest_next_after_login_s": round(max(r[3] for r in res), 2)}


def throttle() -> dict:
    srv = _server()

    def login(name: str, password: str, headers: dict | None = None) -> int:
        with httpx.Client(base_url=srv.url, timeout=120) as c:
            return c.post("/login", data={"name": name, "password": password}, headers=headers or {}).status_code

    try:
        assert login("a1", "secret-pw1") == 303  # a1's usual address is this one
        one = _parallel(login, [("a0", "wrong-password")] * 40)
        time.sleep(1)
        many = _parallel(login, [(f"nobody{i}", "wrong-password") for i in range(60)])
        spoofed = [login(f"a{2 + i % 40}", "wrong-password", {"x-forwarded-for": f"10.{i // 250}.{i % 250}.7"}) for i in range(300)]
        known = login("a1", "secret-pw1")
    finally:
        srv.stop()
    return {"check": "throttle", "one_account_40": {"checked_401": one.count(401), "refused_429": one.count(429)},
            "one_address_60_names": {"checked_401": many.count(401), "refused_429": many.count(429)},
            "spoofed_xff_300": {"checked_401": spoofed.count(401), "refused_429": spoofed.count(429)},
            "correct_password_from_a_known_address_after_the_flood": known}


def body(mb: int = 150) -> dict:
    srv = _server()
    pid = srv.proc.pid
    try:
        time.sleep(2)
        before = _rss_mb(pid)
        size = mb * 1_000_000
        s = socket.create_connection(("127.0.0.1", srv.port), timeout=30)
        s.sendall(f"POST /login HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: {size}\r\n\r\n".encode())
        chunk, sent = b"x" * (1 << 20), 0
        try:
            while sent < size:
                s.sendall(chunk)
                sent += len(chunk)
        except OSError:
            pass  # the server answered and closed: the rest is never read
        s.settimeout(10)
        try:
            status = int(s.recv(4096).split(b" ", 2)[1])
        except (OSError, IndexError, ValueError):
            status = None
        s.close()
        time.sleep(1)
        after, peak = _rss_mb(pid), _rss_mb(pid, "VmHWM")
    finally:
        srv.stop()
    return {"check": "body", "mb_offered": mb, "mb_sent_before_close": round(sent / 1e6, 1), "status": status,
            "rss_before_mb": round(before), "rss_after_mb": round(after), "rss_peak_mb": round(peak), "growth_mb": round(peak - before)}


def flood(logins: int = 200, concurrency: int = 40) -> dict:
    srv = _server()
    pid = srv.proc.pid
    stop = threading.Event()
    pages: list[float] = []
    peak = [0.0]

    def annotator() -> None:
        with httpx.Client(base_url=srv.url, timeout=60) as c:
            c.post("/login", data={"name": "a49", "password": "secret-pw49"})
            while not stop.is_set():
                t = time.perf_counter()
                c.get("/api/next")
                pages.append(time.perf_counter() - t)
                time.sleep(0.1)

    def sampler() -> None:
        while not stop.is_set():
            peak[0] = max(peak[0], _rss_mb(pid))
            time.sleep(0.1)

    try:
        time.sleep(2)
        before = _rss_mb(pid)
        bg = [threading.Thread(target=annotator), threading.Thread(target=sampler)]
        for t in bg:
            t.start()
        todo = list(range(logins))
        lock = threading.Lock()
        codes: list[int] = []

        def worker() -> None:
            with httpx.Client(base_url=srv.url, timeout=120) as c:
                while True:
                    with lock:
                        if not todo:
                            return
                        i = todo.pop()
                    a = i % (N_ANNOTATORS - 1)
                    codes.append(c.post("/login", data={"name": f"a{a}", "password": f"secret-pw{a}"}).status_code)

        t0 = time.time()
        _parallel(worker, [()] * concurrency)
        seconds = time.time() - t0
        stop.set()
        for t in bg:
            t.join()
        during = sorted(pages)
        time.sleep(15)
        after = _rss_mb(pid)
    finally:
        stop.set()
        srv.stop()
    p95 = during[int(0.95 * (len(during) - 1))] if during else float("nan")
    return {"check": "flood", "logins": logins, "concurrency": concurrency, "ok": codes.count(303), "seconds": round(seconds, 1),
            "rss_before_mb": round(before), "rss_peak_mb": round(peak[0]), "rss_15s_after_mb": round(after),
            "annotator_pages": len(during), "annotator_p95_s": round(p95, 3), "annotator_median_s": round(statistics.median(during), 3) if during else None}


def slow(wait_s: float = 30.0) -> dict:
    srv = _server()
    socks = []
    try:
        for _ in range(3):
            socks.append(("silent", socket.create_connection(("127.0.0.1", srv.port), timeout=5)))
        for _ in range(3):
            s = socket.create_connection(("127.0.0.1", srv.port), timeout=5)
            s.sendall(b"GET /login HTTP/1.1\r\n")
            socks.append(("slow", s))
        t0 = time.time()
        closed_at: dict[int, float] = {}
        while time.time() - t0 < wait_s:
            for i, (kind, s) in enumerate(socks):
                if i in closed_at:
                    continue
                try:
                    if kind == "slow":
                        s.sendall(b"X")
                    s.setblocking(False)
                    try:
                        if s.recv(1) == b"":
                            closed_at[i] = time.time() - t0
                    except BlockingIOError:
                        pass
                    finally:
                        s.setblocking(True)
                except OSError:
                    closed_at[i] = time.time() - t0
            time.sleep(2)
    finally:
        for _, s in socks:
            s.close()
        srv.stop()
    return {"check": "slow", "sockets": len(socks), "still_open_after_s": wait_s, "still_open": len(socks) - len(closed_at),
            "closed_after_s": sorted(round(v, 1) for v in closed_at.values())}


def queue(db: str, *, annotators: int = 20, items: int = 2000, k: int = 3) -> dict:
    from test_ais_store import _queue_race

    from veridic.ais._store import Store

    s = Store(db, init=True)
    t0 = time.time()
    try:
        false_done, errors = _queue_race(s, annotators=annotators, items=items, k=k)
    finally:
        s.close()
    return {"check": "queue", "db": db.split("://")[0] if "://" in db else "sqlite", "annotators": annotators, "items": items, "k": k,
            "false_done": false_done, "errors": errors[:3], "seconds": round(time.time() - t0, 1)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("checks", nargs="*", default=["storm", "throttle", "body", "flood", "slow"],
                    choices=["storm", "throttle", "body", "flood", "slow", "queue"])
    ap.add_argument("--db", help="queue: a PostgreSQL URL or SQLite file (default: a new SQLite file).")
    ap.add_argument("--out", type=Path, help="Append the JSON lines here too.")
    a = ap.parse_args()
    for check in a.checks:
        if check == "queue":
            res = queue(a.db or str(Path(tempfile.mkdtemp()) / "queue.sqlite"))
        else:
            res = globals()[check]()
        line = json.dumps(res)
        print(line, flush=True)
        if a.out:
            with a.out.open("a") as fh:
                fh.write(line + "\n")


if __name__ == "__main__":
    main()

"""50 annotators log in at once to `veridic ais serve` and each then asks for an item (issue 16).

Reports how long the whole storm took and the slowest `GET /api/next` right after a login: password
hashing (scrypt, 16 MiB) must not hold the database's write lock, or every judgment waits behind it.

    nice -n 5 .venv/bin/python benchmarks/ais_login_storm.py
"""

from __future__ import annotations

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


def main() -> None:
    db = Path(tempfile.mkdtemp()) / "storm.sqlite"
    _setup(db, items=50)
    srv = Server(db).start()
    res: list[tuple[int, float, int, float]] = []

    def go(a: int) -> None:
        t = time.time()
        with httpx.Client(base_url=srv.url, timeout=120) as c:
            r = c.post("/login", data={"name": f"a{a}", "password": f"secret-pw{a}"})
            t2 = time.time()
            r2 = c.get("/api/next")
            res.append((r.status_code, t2 - t, r2.status_code, time.time() - t2))

    try:
        ts = [threading.Thread(target=go, args=(a,)) for a in range(N_ANNOTATORS)]
        t0 = time.time()
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        total = time.time() - t0
    finally:
        srv.stop()
    print(f"{len(res)} logins: {sum(r[0] == 303 for r in res)} ok in {total:.1f} s; slowest login {max(r[1] for r in res):.1f} s; "
          f"slowest /api/next after login {max(r[3] for r in res):.2f} s ({sum(r[2] == 200 for r in res)} x 200)")


if __name__ == "__main__":
    main()

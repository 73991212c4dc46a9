"""Reliability: 50 concurrent annotators against a live server lose nothing; a killed server keeps every acknowledged judgment."""

from __future__ import annotations

import sqlite3
import threading
import time

import pytest

pytest.importorskip("fastapi")
import httpx
from _ais_server import Server

from veridic.ais._store import Store

N_ANNOTATORS = 50


def _setup(db, *, items: int, k: int = 5) -> None:
    s = Store(db, init=True)
    s.create_project("load", task="summarization", k=k)
    s.add_items("load", [{"id": f"i{i}", "system": f"s{i % 3}", "claim": f"Output {i}.", "source": "Source."} for i in range(items)])
    for a in range(N_ANNOTATORS):
        s.add_annotator(f"a{a}", password=f"secret-pw{a}")
    s.close()


def _annotate(url: str, a: int, max_items: int, acks: list, errors: list, stop: threading.Event) -> None:
    try:
        with httpx.Client(base_url=url, timeout=60.0) as c:
            r = c.post("/login", data={"name": f"a{a}", "password": f"secret-pw{a}"})
            if r.status_code != 303:
                errors.append(("login", a, r.status_code))
                return
            for n in range(max_items):
                if stop.is_set():
                    return
                item = c.get("/api/next").json()["item"]
                if item is None:
                    return
                for stage, answer in (("int", True), ("ais", (a + n) % 2 == 0)):
                    r = c.post("/api/judgments", json={"item_id": item["id"], "stage": stage, "answer": answer})
                    if r.status_code != 200:
                        errors.append((stage, a, r.status_code, r.text[:200]))
                        return
                    acks.append(r.json()["id"])
    except httpx.HTTPError as exc:  # the kill test cuts connections on purpose
        errors.append(("http", a, type(exc).__name__))


def _run(url: str, *, max_items: int, stop: threading.Event) -> tuple[list, list, list[threading.Thread]]:
    acks: list[int] = []
    errors: list = []
    threads = [threading.Thread(target=_annotate, args=(url, a, max_items, acks, errors, stop)) for a in range(N_ANNOTATORS)]
    for t in threads:
        t.start()
    return acks, errors, threads


def _stored_ids(db) -> set[int]:
    con = sqlite3.connect(db)
    try:
        assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        return {r[0] for r in con.execute("SELECT id FROM ais_judgments")}
    finally:
        con.close()


@pytest.mark.parametrize("items", [pytest.param(20, id="20-items"), pytest.param(60, id="60-items", marks=pytest.mark.slow)])
def test_fifty_concurrent_annotators_lose_nothing(tmp_path, items):
    db = tmp_path / "load.sqlite"
    _setup(db, items=items)
    srv = Server(db).start()
    t0 = time.time()
    try:
        acks, errors, threads = _run(srv.url, max_items=60, stop=threading.Event())
        for t in threads:
            t.join(300)
    finally:
        srv.stop()
    elapsed = time.time() - t0
    assert errors == []
    stored = _stored_ids(db)
    assert len(acks) == len(set(acks)) == len(stored) == items * 5 * 2  # k=5, two stages each
    assert set(acks) == stored
    con = sqlite3.connect(db)
    per_item = [r[0] for r in con.execute("SELECT COUNT(*) FROM ais_assignments GROUP BY item_id")]
    twice = con.execute("SELECT COUNT(*) FROM (SELECT item_id, annotator_id FROM ais_assignments GROUP BY 1, 2 HAVING COUNT(*) > 1)").fetchone()[0]
    con.close()
    assert per_item == [5] * items and twice == 0
    print(f"\nload: {len(acks)} judgments from {N_ANNOTATORS} annotators in {elapsed:.1f}s ({len(acks) / elapsed:.0f}/s)")


@pytest.mark.slow
def test_killed_server_keeps_every_acknowledged_judgment(tmp_path):
    db = tmp_path / "kill.sqlite"
    _setup(db, items=200)
    srv = Server(db).start()
    stop = threading.Event()
    acks, errors, threads = _run(srv.url, max_items=20, stop=stop)
    deadline = time.time() + 60
    while len(acks) < 150 and time.time() < deadline:
        time.sleep(0.05)
    srv.kill()  # SIGKILL mid-run: no shutdown hooks, no final flush
    stop.set()
    for t in threads:
        t.join(60)
    acknowledged = set(acks)
    assert len(acknowledged) >= 150
    stored = _stored_ids(db)
    assert acknowledged <= stored, f"lost {len(acknowledged - stored)} acknowledged judgments"
    # at most one in-flight commit per client can be stored without its acknowledgement arriving
    assert len(stored - acknowledged) <= N_ANNOTATORS
    # the database reopens and the app serves again
    srv2 = Server(db).start()
    try:
        with httpx.Client(base_url=srv2.url) as c:
            assert c.post("/login", data={"name": "a0", "password": "secret-pw0"}).status_code == 303
            assert len(c.get("/api/judgments").json()["judgments"]) == len({i for i in stored} & set(_ids_of(db, "a0")))
    finally:
        srv2.stop()
    print(f"\nkill: {len(acknowledged)} acknowledged before SIGKILL, all {len(acknowledged)} stored ({len(stored)} rows)")


def _ids_of(db, name: str) -> list[int]:
    con = sqlite3.connect(db)
    try:
        return [r[0] for r in con.execute("SELECT j.id FROM ais_judgments j JOIN ais_annotators a ON a.id = j.annotator_id WHERE a.name = ?", (name,))]
    finally:
        con.close()

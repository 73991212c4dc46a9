"""The AIS annotation app: two stages, queue, flags, auth on every route, privacy between annotators."""

from __future__ import annotations

import re

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("sqlalchemy")
from fastapi.testclient import TestClient

from veridic.ais._store import Store
from veridic.ais._web import PUBLIC_ROUTES, create_app

SOURCE = "SECRET-SOURCE-TEXT: the council approved the budget on Monday."


@pytest.fixture()
def store(tmp_path):
    s = Store(tmp_path / "ais.sqlite", init=True)
    s.create_project("news", task="summarization", k=2)
    s.add_items("news", [{"id": f"d{i}", "system": "sysA" if i % 2 else "sysB", "claim": f"Output number {i}.", "source": SOURCE} for i in range(3)])
    s.create_project("chat", task="qa", k=5)
    s.add_items("chat", [{"id": "c1", "claim": "It opened in 1931.", "context": ["When did it open?", "Which building?"], "source": SOURCE}])
    s.create_project("tables", task="table", k=5)
    s.add_items("tables", [{"id": "t1", "claim": "Ann won in 2001.", "table": {"title": "Results", "header": ["Year", "Winner"], "rows": [["2001", "Ann"]],
                                                                                  "highlighted": [[0, 1]]}}])
    for name in ("alice", "bob", "carol"):
        s.add_annotator(name, password=f"secret-pw-{name}")
    s.add_annotator("root", password="secret-pw-root", admin=True)
    yield s
    s.close()


def client(store, name=None):
    c = TestClient(create_app(store=store, secret="s" * 32, n_resamples=200), follow_redirects=False)
    if name:
        r = c.post("/login", data={"name": name, "password": f"secret-pw-{name}"})
        assert r.status_code == 303 and r.headers["location"] == "/", r.text
    return c


def test_two_stage_flow_hides_source_until_stage1_stored(store):
    c = client(store, "alice")
    r = c.get("/next?project=news")
    assert r.status_code == 303 and r.headers["location"].endswith("/stage1")
    item_url = r.headers["location"].rsplit("/", 1)[0]
    page = c.get(r.headers["location"]).text
    assert "Output number" in page and "SECRET-SOURCE" not in page
    # stage 2 refused (page and answer) before the stage-1 answer is stored
    assert c.get(item_url + "/stage2").status_code == 409
    assert c.post(item_url + "/stage2", data={"answer": "yes"}).status_code == 409
    assert c.post(item_url + "/stage1", data={"answer": "yes", "justification": "clear"}).status_code == 303
    page2 = c.get(item_url + "/stage2").text
    assert "SECRET-SOURCE" in page2
    assert c.post(item_url + "/stage2", data={"answer": "no"}).status_code == 303
    # answers are final
    assert c.post(item_url + "/stage1", data={"answer": "no"}).status_code == 409
    mine = c.get("/api/judgments").json()["judgments"]
    assert [(j["stage"], j["answer"]) for j in mine] == [("int", True), ("ais", False)]
    assert mine[0]["justification"] == "clear"


def test_not_interpretable_has_no_stage2_and_flag_needs_reason(store):
    c = client(store, "bob")
    loc = c.get("/next?project=news").headers["location"]
    item_url = loc.rsplit("/", 1)[0]
    assert c.post(item_url + "/stage1", data={"answer": "no"}).headers["location"] == "/next"
    assert c.get(item_url + "/stage2").status_code == 409
    loc = c.get("/next?project=news").headers["location"]
    r = c.post(loc.rsplit("/", 1)[0] + "/flag", data={"reason": "corrupted text or encoding"})
    assert r.status_code == 303
    assert c.get("/api/judgments").json()["judgments"][-1]["flag_reason"] == "corrupted text or encoding"


def test_queue_gives_each_item_to_k_annotators_never_twice(store):
    seen = {}
    for name in ("alice", "bob", "carol"):
        c = client(store, name)
        got = []
        while True:
            nxt = c.get("/api/next?project=news").json()["item"]
            if nxt is None:
                break
            got.append(nxt["id"])
            assert c.post("/api/judgments", json={"item_id": nxt["id"], "stage": "int", "answer": False}).status_code == 200
        assert len(got) == len(set(got))
        seen[name] = got
    per_item = {}
    for got in seen.values():
        for i in got:
            per_item[i] = per_item.get(i, 0) + 1
    assert sorted(per_item.values()) == [2, 2, 2]  # k = 2, three items
    # the queue fills items up to k before opening new ones, so the third annotator finds nothing left
    assert (len(seen["alice"]), len(seen["bob"]), len(seen["carol"])) == (3, 3, 0)


def test_dialogue_history_and_table_rendering(store):
    c = client(store, "alice")
    loc = c.get("/next?project=chat").headers["location"]
    page = c.get(loc).text
    assert "Conversation history" in page and "When did it open?" in page and "SECRET-SOURCE" not in page
    c.post(loc.rsplit("/", 1)[0] + "/stage1", data={"answer": "yes"})
    loc = c.get("/next?project=tables").headers["location"]
    assert "Ann won" in c.get(loc).text and "<table" not in c.get(loc).text.split("<h3>")[1]
    c.post(loc.rsplit("/", 1)[0] + "/stage1", data={"answer": "yes"})
    page = c.get(loc.rsplit("/", 1)[0] + "/stage2").text
    assert re.search(r'<table class="src" id="source-table">.*<th>Winner</th>.*<td class="hl">Ann</td>', page, re.DOTALL)


def test_every_route_requires_login(store):
    app = create_app(store=store, secret="s" * 32)
    c = TestClient(app, follow_redirects=False)
    checked = 0
    for route in app.routes:
        path = getattr(route, "path", None)
        for method in getattr(route, "methods", None) or ():
            if method == "HEAD" or (method, path) in PUBLIC_ROUTES:
                continue
            url = path.replace("{item_id}", "1")
            r = c.request(method, url)
            assert r.status_code in (401, 303), (method, path, r.status_code)
            if r.status_code == 303:
                assert r.headers["location"] == "/login"
            assert "SECRET-SOURCE" not in r.text and "Output number" not in r.text
            checked += 1
    assert checked >= 12


def test_annotators_cannot_read_each_other(store):
    a, b = client(store, "alice"), client(store, "bob")
    item = a.get("/api/next?project=news").json()["item"]
    a.post("/api/judgments", json={"item_id": item["id"], "stage": "int", "answer": True, "justification": "alice-note"})
    assert "alice-note" not in b.get("/api/judgments").text
    assert b.get("/api/report?project=news").status_code == 403
    assert b.get("/admin").status_code == 403
    # bob cannot open or answer alice's item unless the queue gave it to him
    other = [i for i in range(1, 6) if i != item["id"]]
    assert b.get(f"/items/{item['id']}/stage1").status_code == 409
    assert b.post("/api/judgments", json={"item_id": other[0], "stage": "int", "answer": True}).status_code == 409


def test_admin_sees_progress_and_creates_annotators(store):
    root = client(store, "root")
    assert root.post("/admin/annotators", data={"name": "dave", "password": "secret-pw-dave", "expert": "1"}).status_code == 303
    assert client(store, "dave").get("/api/judgments").status_code == 200
    page = root.get("/admin").text
    assert "0 of 6 assignments done" in page and "dave (expert)" in page
    assert client(store).post("/login", data={"name": "dave", "password": "wrong"}).status_code == 401

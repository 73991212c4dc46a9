"""AIS app security: CSRF, revocable server-side sessions, login throttling, safe exports, CLI details."""

from __future__ import annotations

import csv
import time
from pathlib import Path

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("sqlalchemy")
from fastapi.testclient import TestClient  # noqa: E402
from typer.testing import CliRunner  # noqa: E402

from veridic.ais._store import Store  # noqa: E402
from veridic.ais._throttle import LoginThrottle  # noqa: E402
from veridic.ais._web import COOKIE, create_app  # noqa: E402
from veridic.errors import DataFormatError  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
runner = CliRunner()


@pytest.fixture
def store(tmp_path):
    s = Store(tmp_path / "ais.sqlite", init=True)
    s.create_project("news", task="summarization", k=3)
    s.add_items("news", [{"id": f"d{i}", "system": "sysA", "claim": f"Output number {i}.", "source": "A source."} for i in range(3)])
    s.add_annotator("alice", password="secret-pw-alice")
    s.add_annotator("root", password="secret-pw-root", admin=True)
    yield s
    s.close()


def _client(store, name=None, **kw):
    c = TestClient(create_app(store=store, n_resamples=50, **kw), follow_redirects=False)
    if name:
        r = c.post("/login", data={"name": name, "password": f"secret-pw-{name}"})
        assert r.status_code == 303, r.text
    return c


def _with_cookie(store, token, **kw):
    c = TestClient(create_app(store=store, n_resamples=50, **kw), follow_redirects=False)
    c.cookies.set(COOKIE, token)
    return c


# --- CSRF ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("headers", [{"origin": "http://evil.example"}, {"referer": "http://evil.example/page"}, {"origin": "null"}])
def test_cross_site_post_cannot_create_an_admin(store, headers):
    root = _client(store, "root")
    r = root.post("/admin/annotators", data={"name": "mallory", "password": "secret-pw", "admin": "1"}, headers=headers)
    assert r.status_code == 403
    assert "mallory" not in [a["name"] for a in store.annotators()]


@pytest.mark.parametrize("path,data", [("/logout", {}), ("/items/1/stage1", {"answer": "yes"}), ("/login", {"name": "alice", "password": "secret-pw-alice"})])
def test_every_post_route_checks_the_origin(store, path, data):
    c = _client(store, "alice")
    assert c.post(path, data=data, headers={"origin": "https://evil.example"}).status_code == 403
    assert c.post("/api/judgments", json={"item_id": 1, "stage": "int", "answer": True}, headers={"origin": "https://evil.example"}).status_code == 403


def test_same_origin_and_trusted_origin_posts_pass(store):
    root = _client(store, "root", trusted_origins=("https://ais.example.org",))
    assert root.post("/admin/annotators", data={"name": "dave", "password": "secret-pw"}, headers={"origin": "http://testserver"}).status_code == 303
    assert root.post("/admin/annotators", data={"name": "erin", "password": "secret-pw"}, headers={"origin": "https://ais.example.org"}).status_code == 303
    assert root.post("/admin/annotators", data={"name": "fay", "password": "secret-pw"}, headers={"referer": "http://testserver/admin"}).status_code == 303


# --- sessions -----------------------------------------------------------------------------------
def test_logout_revokes_the_cookie(store):
    c = _client(store, "alice")
    token = c.cookies.get(COOKIE)
    assert c.get("/api/next").status_code == 200
    assert c.post("/logout").status_code == 303
    c.cookies.set(COOKIE, token)  # the same server, the cookie replayed as an attacker who copied it would
    assert c.get("/api/next").status_code == 401


def test_password_change_revokes_every_other_session(store):
    laptop, phone = _client(store, "alice"), _client(store, "alice")
    r = laptop.post("/account/password", data={"current": "secret-pw-alice", "new": "new-pw-2026"})
    assert r.status_code == 303
    assert phone.get("/api/next").status_code == 401
    assert laptop.get("/api/next").status_code == 200  # the changer gets a fresh session
    assert laptop.post("/account/password", data={"current": "wrong", "new": "x"}).status_code == 403


def test_cli_passwd_ends_sessions(store, tmp_path):
    from veridic.ais.cli import app

    c = _client(store, "alice")
    r = runner.invoke(app, ["annotator", "passwd", "alice", "--db", str(tmp_path / "ais.sqlite"), "--password-stdin"], input="brand-new\n")
    assert r.exit_code == 0, r.output
    assert c.get("/api/next").status_code == 401
    assert store.authenticate("alice", "brand-new") is not None


def test_sessions_expire(store):
    c = _client(store, "alice", session_hours=1 / 3600)  # one second
    assert c.get("/api/next").status_code == 200
    time.sleep(1.3)
    assert c.get("/api/next").status_code == 401


def test_a_restart_keeps_sessions(store):
    token = _client(store, "alice").cookies.get(COOKIE)
    # a second app over the same database, as after `ais serve` restarts: no shared secret passed
    assert _with_cookie(store, token).get("/api/next").status_code == 200


def test_cookie_flags(store):
    plain = _client(store)
    r = plain.post("/login", data={"name": "alice", "password": "secret-pw-alice"})
    cookie = r.headers["set-cookie"].lower()
    assert "httponly" in cookie and "samesite=strict" in cookie and "secure" not in cookie
    secure = _client(store, secure_cookies=True)
    assert "secure" in secure.post("/login", data={"name": "alice", "password": "secret-pw-alice"}).headers["set-cookie"].lower()


def test_old_database_must_be_upgraded(tmp_path):
    from sqlalchemy import create_engine, text

    s = Store(tmp_path / "old.sqlite", init=True)
    eng = create_engine(f"sqlite:///{tmp_path / 'old.sqlite'}")
    with eng.begin() as con:
        con.execute(text("DROP TABLE ais_sessions"))
    from veridic.errors import ConfigError

    with pytest.raises(ConfigError, match="ais init"):
        create_app(store=s)


# --- throttling ---------------------------------------------------------------------------------
def test_wrong_passwords_are_throttled_per_account(store):
    c = _client(store)
    for _ in range(5):
        assert c.post("/login", data={"name": "alice", "password": "wrong"}).status_code == 401
    r = c.post("/login", data={"name": "alice", "password": "wrong"})
    assert r.status_code == 401  # the sixth failure locks the account
    r = c.post("/login", data={"name": "alice", "password": "secret-pw-alice"})
    assert r.status_code == 429 and int(r.headers["retry-after"]) >= 1
    assert c.post("/login", data={"name": "root", "password": "secret-pw-root"}).status_code == 303  # other accounts unaffected


def test_throttle_per_address_and_backoff_doubles():
    now = [0.0]
    t = LoginThrottle(free=2, free_per_address=4, base_s=1.0, clock=lambda: now[0])
    for i in range(5):
        t.failed(f"user{i}", "10.0.0.1")  # a different account each time: only the address accumulates
    assert t.retry_after("someone-else", "10.0.0.1") == 1.0
    assert t.retry_after("someone-else", "10.0.0.2") == 0.0
    for _ in range(4):
        t.failed("bob", "10.0.0.3")
    assert t.retry_after("bob", "10.0.0.4") == 2.0


def test_throttle_memory_is_bounded():
    t = LoginThrottle(max_keys=100)
    for i in range(5000):
        t.failed(f"invented-{i}", f"10.0.{i // 256}.{i % 256}")
    assert len(t) == 100


def test_concurrent_logins_hash_at_most_two_passwords_at_once(store, monkeypatch):
    # 40 concurrent logins once ran 40 scrypt checks (16 MiB each) side by side: 235 -> 746 MiB. Two hash threads now.
    import threading

    running, peak, lock = [0], [0], threading.Lock()
    real = store.authenticate

    def counted(name, password):
        with lock:
            running[0] += 1
            peak[0] = max(peak[0], running[0])
        try:
            time.sleep(0.05)
            return real(name, password)
        finally:
            with lock:
                running[0] -= 1

    monkeypatch.setattr(store, "authenticate", counted)
    c = _client(store)
    codes: list[int] = []
    ts = [threading.Thread(target=lambda: codes.append(c.post("/login", data={"name": "alice", "password": "secret-pw-alice"}).status_code)) for _ in range(16)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert codes == [303] * 16 and 1 < peak[0] <= 2, (codes, peak)


# --- import / export / admin / CLI -------------------------------------------------------------
def test_reimport_is_a_clear_error(store, tmp_path):
    items = tmp_path / "items.jsonl"
    items.write_text('{"id": "x1", "claim": "A."}\n{"id": "x2", "claim": "B."}\n')
    assert store.import_items(items, project="p2", task="summarization") == 2
    with pytest.raises(DataFormatError, match="already in project 'p2'"):
        store.import_items(items, project="p2", task="summarization")
    from veridic.ais.cli import app

    r = runner.invoke(app, ["import", str(items), "--project", "p2", "--db", str(tmp_path / "ais.sqlite")])
    assert r.exit_code == 2 and "already in project" in r.output and "Traceback" not in r.output


def test_csv_export_neutralises_formulas(store, tmp_path):
    alice = store.annotators()[0]["id"]
    from veridic.ais._store import csv_safe

    assert csv_safe("-3+cmd") == "'-3+cmd" and csv_safe("\t=1") == "'\t=1" and csv_safe("plain") == "plain"
    for evil in ("=HYPERLINK(\"http://evil.example\",\"x\")", "+1+2", "@SUM(A1)"):
        item = store.next_assignment(alice, project="news")
        store.record(item_id=item.id, annotator_id=alice, stage="int", answer=False, justification=evil)
    out = tmp_path / "j.csv"
    store.export(project="news", path=out)
    cells = [row["justification"] for row in csv.DictReader(out.open(encoding="utf-8"))]
    assert cells and all(c.startswith("'") for c in cells), cells
    jsonl = tmp_path / "j.jsonl"
    store.export(project="news", path=jsonl)
    assert "=HYPERLINK" in jsonl.read_text() and "'=HYPERLINK" not in jsonl.read_text()


def test_admin_page_shows_the_item_count(store):
    html = _client(store, "root").get("/admin").text
    assert "built-in method" not in html
    assert "over 3 items" in html


def test_ais_serve_prints_its_url_and_avoids_port_8000(store, tmp_path, monkeypatch):
    import uvicorn

    from veridic.ais.cli import app

    seen = {}
    monkeypatch.setattr(uvicorn, "run", lambda web, **kw: seen.update(kw))
    r = runner.invoke(app, ["serve", "--db", str(tmp_path / "ais.sqlite")])
    assert r.exit_code == 0, r.output
    assert seen["port"] != 8000
    assert f"http://127.0.0.1:{seen['port']}/login" in r.output


def test_ais_serve_secure_cookies_flag_reaches_the_cookie(store, tmp_path, monkeypatch):
    import uvicorn

    from veridic.ais.cli import app

    seen = {}
    monkeypatch.setattr(uvicorn, "run", lambda web, **kw: seen.update(web=web))
    for flags, secure in (([], False), (["--secure-cookies"], True)):
        r = runner.invoke(app, ["serve", "--db", str(tmp_path / "ais.sqlite"), *flags])
        assert r.exit_code == 0, r.output
        login = TestClient(seen["web"], follow_redirects=False).post("/login", data={"name": "alice", "password": "secret-pw-alice"})
        assert login.status_code == 303 and ("secure" in login.headers["set-cookie"].lower()) is secure


def test_readme_documents_the_password_prompt_and_stdin():
    readme = (REPO / "README.md").read_text()
    line = next(line for line in readme.splitlines() if "annotator add alice" in line)
    assert "prompts" in line
    assert "--password-stdin" in readme


# --- the throttle under concurrency, proxies, lockouts, body size, headers ------------------------
def _concurrent_logins(client, logins):
    import threading

    codes: list[int] = []
    lock = threading.Lock()

    def go(name, password):
        r = client.post("/login", data={"name": name, "password": password})
        with lock:
            codes.append(r.status_code)

    ts = [threading.Thread(target=go, args=x) for x in logins]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return codes


def _counting(store, monkeypatch):
    checked = [0]
    real = store.authenticate

    def counted(name, password):
        checked[0] += 1
        time.sleep(0.02)  # a check takes time, so the attempts overlap
        return real(name, password)

    monkeypatch.setattr(store, "authenticate", counted)
    return checked


def test_forty_concurrent_wrong_passwords_get_six_checks(store, monkeypatch):
    checked = _counting(store, monkeypatch)
    codes = _concurrent_logins(_client(store), [("alice", "wrong-password")] * 40)
    assert checked[0] == 6 and codes.count(401) == 6 and codes.count(429) == 34, (checked, sorted(codes))


def test_the_address_limit_holds_at_concurrency_sixty(store, monkeypatch):
    checked = _counting(store, monkeypatch)
    codes = _concurrent_logins(_client(store), [(f"nobody{i}", "wrong-password") for i in range(60)])
    assert checked[0] == 21 and codes.count(429) == 39, (checked, sorted(codes))  # 20 free, the 21st locks the address


def test_correct_concurrent_logins_from_one_address_all_succeed(store):
    for i in range(30):
        store.add_annotator(f"ann{i}", password=f"secret-pw-{i}")
    codes = _concurrent_logins(_client(store), [(f"ann{i}", f"secret-pw-{i}") for i in range(30)])
    assert codes == [303] * 30


def test_x_forwarded_for_is_ignored_unless_the_proxy_is_named(store, tmp_path, monkeypatch):
    import uvicorn

    from veridic.ais.cli import app

    c = _client(store)
    for i in range(25):  # spoofed addresses do not spread the attempts: all count against the one real address
        c.post("/login", data={"name": f"u{i}", "password": "wrong-password"}, headers={"x-forwarded-for": f"10.9.0.{i}"})
    assert c.post("/login", data={"name": "alice", "password": "wrong-password"}).status_code == 429
    seen = {}
    monkeypatch.setattr(uvicorn, "run", lambda web, **kw: seen.update(kw))
    assert runner.invoke(app, ["serve", "--db", str(tmp_path / "ais.sqlite")]).exit_code == 0
    assert seen["proxy_headers"] is False and seen["forwarded_allow_ips"] is None  # uvicorn's default trusts 127.0.0.1
    assert runner.invoke(app, ["serve", "--db", str(tmp_path / "ais.sqlite"), "--forwarded-allow-ips", "10.0.0.2, 10.0.0.3"]).exit_code == 0
    assert seen["proxy_headers"] is True and seen["forwarded_allow_ips"] == ["10.0.0.2", "10.0.0.3"]


def test_ais_serve_closes_slow_connections_and_caps_them(store, tmp_path, monkeypatch):
    import uvicorn

    from veridic.ais.cli import app

    seen = {}
    monkeypatch.setattr(uvicorn, "run", lambda web, **kw: seen.update(kw))
    assert runner.invoke(app, ["serve", "--db", str(tmp_path / "ais.sqlite"), "--header-timeout", "3"]).exit_code == 0
    # the scoring service's protocol: a request line and headers not complete within the deadline close the connection
    assert seen["http"].header_timeout_s == 3.0 and seen["timeout_keep_alive"] == 5.0 and seen["limit_concurrency"] == 200


def test_a_stranger_cannot_lock_a_user_out():
    now = [0.0]
    t = LoginThrottle(clock=lambda: now[0])
    tk = t.begin("alice", "10.0.0.1")
    t.end(tk, ok=True)  # alice has logged in from her usual address before
    for i in range(200):  # someone else hammers her name from many addresses
        tk = t.begin("alice", f"192.0.2.{i}")
        if not isinstance(tk, float):
            t.end(tk, ok=False)
        now[0] += 0.5
    assert t.retry_after("alice", "10.0.0.1") == 0.0  # her known address is not locked out
    assert 0 < t.retry_after("alice", "198.51.100.7") <= 60.0  # a new address waits, at most the account cap
    now[0] += 60.0
    assert t.retry_after("alice", "198.51.100.7") == 0.0


def test_a_body_over_the_limit_is_413_before_it_is_read(store):
    import asyncio

    app = create_app(store=store, n_resamples=50, max_body_bytes=4096)
    c = TestClient(app, follow_redirects=False)
    r = c.post("/login", content=b"name=alice&password=" + b"x" * 10_000, headers={"content-type": "application/x-www-form-urlencoded"})
    assert r.status_code == 413 and "4,096 bytes" in r.text
    received = []

    async def run(chunks, declared=None):
        sent = []
        headers = [(b"content-type", b"application/x-www-form-urlencoded")] + ([(b"content-length", declared)] if declared else [])
        scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST", "scheme": "http", "path": "/login",
                 "raw_path": b"/login", "query_string": b"", "headers": headers, "client": ("127.0.0.1", 1), "server": ("127.0.0.1", 8100)}
        it = iter(chunks)

        async def receive():
            chunk = next(it, None)
            received.append(chunk)
            if chunk is None:
                await asyncio.sleep(3600)
            return {"type": "http.request", "body": chunk, "more_body": True}

        async def send(m):
            sent.append(m)

        await app(scope, receive, send)
        return sent[0]["status"]

    assert asyncio.run(run([b"x"], declared=b"150000000")) == 413 and received == []  # declared 150 MB: not one byte read
    assert asyncio.run(run([b"x" * 1000] * 100)) == 413 and len(received) == 5  # chunked: refused at the limit


def test_a_body_that_arrives_too_slowly_is_408(store):
    import asyncio

    app = create_app(store=store, n_resamples=50, body_timeout_s=0.2)
    sent = []

    async def run():
        scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST", "scheme": "http", "path": "/login",
                 "raw_path": b"/login", "query_string": b"", "headers": [(b"content-type", b"application/x-www-form-urlencoded")],
                 "client": ("127.0.0.1", 1), "server": ("127.0.0.1", 8100)}
        first = [True]

        async def receive():
            if first[0]:
                first[0] = False
                return {"type": "http.request", "body": b"name=al", "more_body": True}
            await asyncio.sleep(3600)

        async def send(m):
            sent.append(m)

        await asyncio.wait_for(app(scope, receive, send), 5)

    asyncio.run(run())
    assert sent[0]["status"] == 408


def test_pages_carry_csp_frame_and_nosniff_headers(store):
    import base64
    import hashlib
    import re

    r = _client(store).get("/login")
    assert r.headers["x-frame-options"] == "DENY" and r.headers["x-content-type-options"] == "nosniff"
    csp = r.headers["content-security-policy"]
    script = re.search(r"<script>(.*?)</script>", r.text, flags=re.S).group(1)
    digest = base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
    assert f"script-src 'sha256-{digest}'" in csp and "frame-ancestors 'none'" in csp and "unsafe-inline" not in csp
    assert _client(store).post("/login", data={"name": "alice", "password": "x"}, headers={"origin": "http://evil.example"}).headers["x-frame-options"] == "DENY"


def test_the_origin_check_does_not_trust_the_host_header(store):
    # A DNS-rebinding page: its Origin and the Host header it makes the browser send both name the attacker's site.
    c = _client(store, "root")
    r = c.post("/admin/annotators", data={"name": "mallory", "password": "secret-pw"}, headers={"origin": "http://evil.example", "host": "evil.example"})
    assert r.status_code == 403 and "mallory" not in [a["name"] for a in store.annotators()]


@pytest.mark.parametrize("password", ["a", "1234567", "aaaaaaaaaaaa"])
def test_weak_passwords_are_refused(store, password):
    from veridic.errors import InputError

    with pytest.raises(InputError, match="password"):
        store.add_annotator("weak", password=password)
    r = _client(store, "root").post("/admin/annotators", data={"name": "weak", "password": password})
    assert r.status_code == 400 and "password" in r.text
    r = _client(store, "alice").post("/account/password", data={"current": "secret-pw-alice", "new": password})
    assert r.status_code == 400 and "password" in r.text


def test_item_ids_beyond_64_bits_are_422_not_500(store):
    c = _client(store, "alice")
    assert c.get(f"/items/{2**70}/stage1").status_code == 422
    assert c.post(f"/items/{2**64}/stage2", data={"answer": "yes"}).status_code == 422
    assert c.post("/api/judgments", json={"item_id": 2**70, "stage": "int", "answer": True}).status_code == 422


@pytest.mark.parametrize("table", ['"just text"', '{"header": "a,b", "rows": [["1"]]}', '{"rows": ["not a row"]}',
                                   '{"rows": [[{"nested": 1}]]}', '{"rows": [["1"]], "highlighted": [1]}', '{"rows": [], "colour": "red"}'])
def test_malformed_table_items_are_refused_at_import(store, tmp_path, table):
    items = tmp_path / "t.jsonl"
    items.write_text('{"id": "t1", "claim": "A.", "table": ' + table + "}\n")
    with pytest.raises(DataFormatError, match="table"):
        store.import_items(items, project="tables", task="table")


def test_a_well_formed_table_item_renders_at_stage_two(store, tmp_path):
    items = tmp_path / "t.jsonl"
    items.write_text('{"id": "t1", "claim": "A.", "table": {"title": "T", "header": ["a", "b"], "rows": [["1", 2]], "highlighted": [[0, 1]]}}\n')
    store.import_items(items, project="tables", task="table", k=1)
    c = _client(store, "alice")
    item = c.get("/api/next?project=tables").json()["item"]
    assert c.post(f"/items/{item['id']}/stage1", data={"answer": "yes"}).status_code == 303
    r = c.get(f"/items/{item['id']}/stage2")
    assert r.status_code == 200 and 'class="hl">2</td>' in r.text


def test_export_of_a_mistyped_project_fails_and_keeps_the_old_file(store, tmp_path):
    from veridic.ais.cli import app

    out = tmp_path / "j.csv"
    out.write_text("item,answer\nd1,yes\n")
    r = runner.invoke(app, ["export", "--project", "newz", "-o", str(out), "--db", str(store.url).replace("sqlite:///", "")])
    assert r.exit_code == 2 and "No project 'newz'" in r.output
    assert out.read_text() == "item,answer\nd1,yes\n"

"""Issue 16, AIS app: CSRF, revocable server-side sessions, login throttling, safe exports, CLI details."""

from __future__ import annotations

import csv
import time
from pathlib import Path

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("sqlalchemy")
from fastapi.testclient import TestClient  # noqa: E402
from typer.testing import CliRunner  # noqa: E402

from veridic.ais.store import Store  # noqa: E402
from veridic.ais.throttle import LoginThrottle  # noqa: E402
from veridic.ais.web import COOKIE, create_app  # noqa: E402
from veridic.errors import DataFormatError  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
runner = CliRunner()


@pytest.fixture
def store(tmp_path):
    s = Store(tmp_path / "ais.sqlite", init=True)
    s.create_project("news", task="summarization", k=3)
    s.add_items("news", [{"id": f"d{i}", "system": "sysA", "output": f"Output number {i}.", "source": "A source."} for i in range(3)])
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


def test_concurrent_logins_hash_at_most_four_passwords_at_once(store, monkeypatch):
    # 40 concurrent logins once ran 40 scrypt checks (16 MiB each) side by side: 235 -> 746 MiB.
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
    assert codes == [303] * 16 and 1 < peak[0] <= 4, (codes, peak)


# --- import / export / admin / CLI -------------------------------------------------------------
def test_reimport_is_a_clear_error(store, tmp_path):
    items = tmp_path / "items.jsonl"
    items.write_text('{"id": "x1", "output": "A."}\n{"id": "x2", "output": "B."}\n')
    assert store.import_items(items, project="p2", task="summarization") == 2
    with pytest.raises(DataFormatError, match="already in project 'p2'"):
        store.import_items(items, project="p2", task="summarization")
    from veridic.ais.cli import app

    r = runner.invoke(app, ["import", str(items), "--project", "p2", "--db", str(tmp_path / "ais.sqlite")])
    assert r.exit_code == 2 and "already in project" in r.output and "Traceback" not in r.output


def test_csv_export_neutralises_formulas(store, tmp_path):
    alice = store.annotators()[0]["id"]
    from veridic.ais.store import csv_safe

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

"""Browser test: two annotators complete both stages in headless Chromium (Playwright, Debian's chromium)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

pytest.importorskip("fastapi")
from _ais_server import Server

from veridic.ais._store import Store

CHROMIUM = shutil.which("chromium") or ("/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None)
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
        "--disable-component-update", "--disable-sync"]
SOURCE = "SOURCE-ONLY: the museum reopened in May 2019 after a two-year renovation."


@pytest.fixture(scope="module")
def browser():
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install 'veridic[test]'); browser test skipped")
    if CHROMIUM is None:
        pytest.skip("Debian's chromium is not installed (apt-get install -y chromium); browser test skipped")
    with sync_api.sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        yield b
        b.close()


def test_two_annotators_complete_both_stages(browser, tmp_path):
    db = tmp_path / "ais.sqlite"
    s = Store(db, init=True)
    s.create_project("museum", task="qa", k=2)
    s.add_items("museum", [{"id": f"q{i}", "system": "sys", "claim": f"It reopened in 2019 (answer {i}).",
                            "context": ["Tell me about the museum.", "When did it reopen?"], "source": SOURCE} for i in range(3)])
    for n in ("ann1", "ann2", "boss"):
        s.add_annotator(n, password=f"secret-pw-{n}", admin=n == "boss")
    srv = Server(db).start()
    try:
        for name in ("ann1", "ann2"):
            ctx = browser.new_context()
            page = ctx.new_page()
            page.goto(srv.url + "/login")
            page.fill("#name", name)
            page.fill("#password", f"secret-pw-{name}")
            page.click("#login")
            for i in range(3):
                page.wait_for_url("**/stage1")
                html = page.content()
                assert "When did it reopen?" in html and "SOURCE-ONLY" not in html  # source not sent at stage 1
                page.keyboard.press("y")  # keyboard shortcut for "yes"
                page.wait_for_url("**/stage2")
                assert "SOURCE-ONLY" in page.content()
                page.click("#yes" if (i + (name == "ann2")) % 3 else "#no")
            page.wait_for_selector("#done")
            ctx.close()
        assert s.count_judgments() == 12
        ctx = browser.new_context()
        page = ctx.new_page()
        page.goto(srv.url + "/login")
        page.fill("#name", "boss")
        page.fill("#password", "secret-pw-boss")
        page.click("#login")
        page.wait_for_url("**/admin")
        progress = page.inner_text("#progress-museum")
        assert "6 of 6 assignments done" in progress and "12 judgments" in progress
        assert "100.0" in page.inner_text("#systems-museum")  # Int % of the one system
        ctx.close()
    finally:
        srv.stop()
        s.close()

"""The HTML view of a detection result: escaping, one mark per span, and a real render in headless Chromium."""

from __future__ import annotations

import html
import re
import shutil
import subprocess

import pytest

from veridic.detect import DetectionResult, HallucinationSpan, render_html
from veridic.types import Span

EVIDENCE = "Messi was born on June 24, 1987 <in Rosario>."
PASSAGE = "Messi was born on June 12, 1987. He is the best <player> & more."


def _result() -> DetectionResult:
    ent = HallucinationSpan(start=23, end=25, text="12", type="entity", confidence=0.74,
                            evidence=Span(start=18, end=31, text=EVIDENCE[18:31]), suggestion="24", reason="entity-mismatch:DATE")
    subj = HallucinationSpan(start=33, end=len(PASSAGE), text=PASSAGE[33:], type="subjective", confidence=0.6,
                             evidence=None, suggestion=None, reason="subjective-lexicon:best")
    return DetectionResult(passage=PASSAGE, spans=(ent, subj), edited="Messi was born on June 24, 1987.",
                           tagged="", sentences=(), evidence=EVIDENCE)


def test_every_span_is_one_mark_and_the_text_round_trips():
    page = render_html(result=_result())
    marks = re.findall(r'<mark class="hl t-(\w+)"[^>]*data-start="(\d+)" data-end="(\d+)"', page)
    assert marks == [("entity", "23", "25"), ("subjective", "33", str(len(PASSAGE)))]
    # Stripping the tooltips and tags gives back the passage exactly.
    body = re.search(r'<div class="passage" id="passage">(.*?)</div>', page, re.S).group(1)
    plain = html.unescape(re.sub(r"<[^>]+>", "", re.sub(r'<span class="tip".*?</span></mark>', "", body)))
    assert plain == PASSAGE


def test_user_text_is_escaped():
    page = render_html(result=_result())
    assert "<player>" not in page and "&lt;player&gt;" in page
    assert "<in Rosario>" not in page and "&lt;in Rosario&gt;" in page
    assert "→ 24" in page and "delete" in page


def test_a_mark_whose_edit_removes_more_names_what_goes():
    p = "He founded it. Its locks were made by Orlando & Sons."
    mark = HallucinationSpan(start=p.index("made"), end=p.index("made") + 4, text="made", type="invented", confidence=0.5,
                             evidence=None, suggestion=None, edit_range=(p.index("Its"), len(p)))
    page = render_html(result=DetectionResult(passage=p, spans=(mark,), edited="He founded it.", tagged="", sentences=()))
    assert "edit: delete “Its locks were made by Orlando &amp; Sons.”" in page
    plain = render_html(result=_result())
    assert "edit: delete<" in plain  # a span removed as it stands names nothing more


def test_no_spans_says_so():
    r = DetectionResult(passage="Fine.", spans=(), edited="Fine.", tagged="Fine.", sentences=())
    assert "no hallucination found" in render_html(result=r)


@pytest.mark.skipif(shutil.which("chromium") is None, reason="Debian's chromium is not installed (apt-get install chromium)")
def test_renders_in_headless_chromium(tmp_path):
    page = tmp_path / "r.html"
    page.write_text(render_html(result=_result()), encoding="utf-8")
    # --dump-dom prints the DOM after layout: the page parsed, and the marks and tooltips exist in it.
    out = subprocess.run(
        ["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         f"--user-data-dir={tmp_path / 'profile'}", "--dump-dom", page.as_uri()],
        capture_output=True, text=True, timeout=60,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.count('class="hl t-') == 2
    assert 'role="tooltip"' in out.stdout and "June 24, 1987" in out.stdout


@pytest.mark.skipif(shutil.which("chromium") is None, reason="Debian's chromium is not installed (apt-get install chromium)")
def test_hover_shows_the_tooltip(tmp_path):
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install playwright)")
    page_file = tmp_path / "r.html"
    page_file.write_text(render_html(result=_result()), encoding="utf-8")
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=shutil.which("chromium"), args=[
            "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync"])
        try:
            page = browser.new_page()
            page.goto(page_file.as_uri())
            assert not page.is_visible("#span-0 .tip")
            page.hover("#span-0")
            assert page.is_visible("#span-0 .tip")
            tip = page.inner_text("#span-0 .tip")
        finally:
            browser.close()
    assert "ENTITY" in tip and "→ 24" in tip and "June 24, 1987" in tip

"""The code, docs, configs and scripts name what things are, not the work that produced them.

A comment, docstring, config note or page says what a thing is or measures ("measured on the contrast suite,
docs/report.md"), never which work item or sitting it came from; the dated development log (``docs/history/``) and
the changelog included.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PROCESS_WORDS = re.compile(r"(?i)\b(session\s+\d+|issue\s+#?\d+|helper[s]?\b(?!\s+function))")
SKIPPED = ("tests/test_no_process_words.py",)

# Files exempt from the check (entries ending in "/" cover a folder): none.
PENDING_REWRITE: tuple[str, ...] = ()


def _tracked_text_files() -> list[tuple[str, str]]:
    try:
        listed = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True, timeout=60).stdout
    except (OSError, subprocess.CalledProcessError) as exc:
        pytest.skip(f"not a git checkout ({exc})")
    files = []
    for name in filter(None, listed.decode("utf-8", "surrogateescape").split("\0")):
        path = REPO / name
        if name.startswith(SKIPPED) or not path.is_file():
            continue
        data = path.read_bytes()
        if b"\0" in data[:8192]:
            continue  # binary
        try:
            files.append((name, data.decode("utf-8")))
        except UnicodeDecodeError:
            continue  # not text
    return files


def _hits(files: list[tuple[str, str]]) -> list[str]:
    return [f"{name}:{i}: {line.strip()[:160]}" for name, text in files for i, line in enumerate(text.splitlines(), 1)
            if PROCESS_WORDS.search(line)]


def test_no_file_names_the_work_process():
    files = [(name, text) for name, text in _tracked_text_files() if not name.startswith(PENDING_REWRITE)]
    assert len(files) > 100, "git ls-files found too few files to check"
    hits = _hits(files)
    assert not hits, "these lines name the work process (an issue or session number, 'helper'); say what the thing is instead:\n" + "\n".join(hits)


@pytest.mark.parametrize(("line", "flagged"), [
    ("# On by default (issue 14, session 12): swaps 64 -> 94 %.", True),
    ("see docs/benchmarks.md, Issue #15", True),
    ("# -- helpers ------", True),
    ("a small helper joins them", True),
    ("a helper function joins them", False),
    ("the HTTP session keeps its cookie; every session they have open ends", False),
    ("report an issue on the tracker", False),
])
def test_the_pattern(line, flagged):
    assert bool(PROCESS_WORDS.search(line)) is flagged

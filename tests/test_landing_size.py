"""scripts/landing_size.py: a submission's size as its limits count it (every commit's diff, moves counted twice)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture()
def ls(load_script):
    mod = load_script("landing_size")
    return mod


def _git(repo: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.org"}
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True, env=env).stdout.strip()


@pytest.fixture()
def repo(tmp_path):
    _git(tmp_path, "init", "-q")
    (tmp_path / "a.txt").write_text("a\n")
    _git(tmp_path, "add", ".")
    _git(tmp_path, "commit", "-q", "-m", "base")
    return tmp_path


def test_a_moved_binary_counts_twice_and_nothing_since_base_counts_zero(ls, repo):
    base = _git(repo, "rev-parse", "HEAD")
    assert ls.measure(base=base, repo=repo) == {"commits": 0, "text": 0, "packed": 0}
    blob = os.urandom(200_000)  # incompressible, so its base85 patch is about 1.25 x its size
    (repo / "w").mkdir()
    (repo / "w" / "model.bin").write_bytes(blob)
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "add")
    added = ls.measure(base=base, repo=repo)
    assert added["commits"] == 1 and 1.2 * len(blob) < added["text"] < 1.4 * len(blob)
    assert len(blob) <= added["packed"] < 1.1 * len(blob)
    _git(repo, "mv", "w", "models")
    _git(repo, "commit", "-q", "-m", "move")
    moved = ls.measure(base=base, repo=repo)
    # The move is a deletion plus an addition; the pack still holds the blob once.
    assert moved["commits"] == 2 and moved["text"] > 3 * len(blob)
    assert moved["packed"] < 1.1 * len(blob)


def test_the_exit_status_says_when_a_limit_is_passed(ls, repo, monkeypatch, capsys):
    base = _git(repo, "rev-parse", "HEAD")
    (repo / "b.bin").write_bytes(os.urandom(50_000))
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "b")
    assert ls.main([base, "--repo", str(repo)]) == 0
    monkeypatch.setattr(ls, "TEXT_LIMIT", 10_000)
    assert ls.main([base, "--repo", str(repo)]) == 1
    assert "over the limit: text" in capsys.readouterr().err


def test_an_unknown_base_is_a_clear_error(ls, repo):
    with pytest.raises(SystemExit, match="rev-list"):
        ls.measure(base="no-such-commit", repo=repo)

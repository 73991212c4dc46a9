"""scripts/rebuild_corpora.py: registered corpora rebuilt from their code copies and checked against the registration."""

from __future__ import annotations

import gzip
import stat
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture()
def rc(tmp_path, monkeypatch, load_script):
    monkeypatch.setenv("VERIDIC_TRAIN_DIR", str(tmp_path / "train"))
    mod = load_script("rebuild_corpora")
    # no worktree in a test: the "code copy" is an empty folder
    monkeypatch.setattr(mod, "snapshot", lambda commit, **kw: tmp_path)
    return mod


def _fake_veridic(tmp_path: Path, rows: int) -> str:
    """A stand-in for the veridic CLI that writes ``rows`` JSON lines to the path after -o."""
    exe = tmp_path / "fake-veridic"
    exe.write_text("#!/usr/bin/env python3\nimport gzip, sys\nout = sys.argv[sys.argv.index('-o') + 1]\n"
                   f"with gzip.open(out, 'wt') as f:\n    f.writelines('{{\"i\": %d}}\\n' % i for i in range({rows}))\n")
    exe.chmod(exe.stat().st_mode | stat.S_IEXEC)
    return str(exe)


def _one(rc, rows=3, sha=None):
    return rc.Corpus("toy", "corpora/toy.jsonl.gz", "abc1234", ("synth", "toy", "-o", "{out}"), rows, "a test", sha)


def test_a_missing_corpus_is_built_and_checked_against_its_registered_rows_and_content(rc, tmp_path):
    lines = b"".join(b'{"i": %d}\n' % i for i in range(3))
    import hashlib

    digest = hashlib.sha256(lines).hexdigest()[:16]
    c = _one(rc, rows=3, sha=digest)
    msg = rc.rebuild(c, veridic_bin=_fake_veridic(tmp_path, 3), snap_root=tmp_path, nice=0, n_process=1, dry_run=False)
    assert msg == f"toy: rebuilt, 3 rows, content {digest}, as registered"
    assert rc.fingerprint(c.out()) == (3, digest)
    # present now: counted, checked and left alone (the builder is not called again)
    again = rc.rebuild(c, veridic_bin="/nonexistent", snap_root=tmp_path, nice=0, n_process=1, dry_run=False)
    assert again.startswith("toy: present, 3 rows") and "NOT" not in again


def test_a_rebuild_that_differs_from_the_registration_fails_and_says_what_to_check(rc, tmp_path):
    with pytest.raises(SystemExit, match="rebuilt with 4 rows where the registration .a test. recorded 3.*abc1234"):
        rc.rebuild(_one(rc, rows=3), veridic_bin=_fake_veridic(tmp_path, 4), snap_root=tmp_path, nice=0, n_process=1, dry_run=False)
    with pytest.raises(SystemExit, match="content .* where the verified build is 0000000000000000"):
        c = _one(rc, rows=None, sha="0" * 16)
        c.out().unlink()
        rc.rebuild(c, veridic_bin=_fake_veridic(tmp_path, 4), snap_root=tmp_path, nice=0, n_process=1, dry_run=False)


def test_a_present_corpus_that_differs_is_reported_not_rebuilt(rc, tmp_path):
    c = _one(rc, rows=5)
    c.out().parent.mkdir(parents=True)
    with gzip.open(c.out(), "wt") as f:
        f.write('{"i": 0}\n')
    msg = rc.rebuild(c, veridic_bin="/nonexistent", snap_root=tmp_path, nice=0, n_process=1, dry_run=False)
    assert "NOT as registered: 1 rows where the registration (a test) recorded 5" in msg


def test_the_registered_entries_and_the_command_line(rc, capsys):
    assert set(rc.BY_NAME) == {"accurate-contrast", "accurate-frames", "tagger-synthetic", "tagger-abstractive", "tagger-summaries",
                               "accurate-fnc1-windows", "accurate-averitec-windows"}
    assert all(c.rows for c in rc.CORPORA) and all("{out}" in c.args for c in rc.CORPORA)
    assert rc.main(["--list"]) == 0 and capsys.readouterr().out.count("missing") == 7
    with pytest.raises(SystemExit):
        rc.main(["no-such-corpus"])
    assert "unknown corpus 'no-such-corpus'" in capsys.readouterr().err
    assert rc.main(["--all", "--dry-run"]) == 0
    assert "would be built" in capsys.readouterr().out

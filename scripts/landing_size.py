"""How much a submission adds up to, measured the way the repository's landing limits count it.

    python scripts/landing_size.py origin/main          # the commits in origin/main..HEAD
    python scripts/landing_size.py a4d39ec --json       # machine-readable

Two figures, each against its limit: the diffs of every commit since BASE added up as text (binary files as git's
base85 patches, renames counted as a deletion plus an addition, since a file added in one commit and moved or
removed in a later one counts twice), and the commits packed as git would send them. The exit status is 1 when
either figure passes its limit, so a script can stop before committing more weights than can land.

Why not ``git diff --stat BASE``: it shows the net change, and the limit counts every commit's own diff.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

MIB = 1024 * 1024
#: The limits one submission may not pass.
TEXT_LIMIT = 256 * MIB
PACKED_LIMIT = 512 * MIB


def _git(repo: Path, *args: str, stdin: bytes | None = None) -> bytes:
    res = subprocess.run(["git", *args], cwd=repo, input=stdin, capture_output=True)
    if res.returncode != 0:
        raise SystemExit(f"git {' '.join(args)} failed in {repo}: {res.stderr.decode(errors='replace').strip()}")
    return res.stdout


def measure(*, base: str, repo: Path = Path("."), head: str = "HEAD") -> dict[str, int]:
    """Bytes of the commits in ``base..head``: ``text`` (each commit's diff as text) and ``packed``.

    >>> measure(base="HEAD")["commits"]    # doctest: +SKIP
    0
    """
    commits = _git(repo, "rev-list", "--reverse", f"{base}..{head}").decode().split()
    text = 0
    for c in commits:
        # --no-renames: a moved file is a deletion plus an addition, as the limit counts it.
        text += len(_git(repo, "show", "--binary", "--no-renames", "--format=", "--no-color", c))
    packed = 0
    if commits:
        packed = len(_git(repo, "pack-objects", "--stdout", "--revs", "-q", stdin=f"{head}\n^{base}\n".encode()))
    return {"commits": len(commits), "text": text, "packed": packed}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("base", help="the commit the submission starts from (what has already landed)")
    ap.add_argument("--head", default="HEAD")
    ap.add_argument("--repo", type=Path, default=Path(__file__).resolve().parents[1])
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    a = ap.parse_args(argv)
    m = measure(base=a.base, repo=a.repo, head=a.head)
    over = [k for k, lim in (("text", TEXT_LIMIT), ("packed", PACKED_LIMIT)) if m[k] > lim]
    if a.json:
        print(json.dumps({**m, "text_limit": TEXT_LIMIT, "packed_limit": PACKED_LIMIT, "over": over}))
    else:
        print(f"{m['commits']} commits since {a.base}: diffs as text {m['text'] / MIB:.1f} MiB of {TEXT_LIMIT // MIB}, "
              f"packed {m['packed'] / MIB:.1f} MiB of {PACKED_LIMIT // MIB}")
        for k in over:
            print(f"over the limit: {k}. Squash commits that add and then move or remove the same files, or move "
                  "some commits to a later submission.", file=sys.stderr)
    return 1 if over else 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Rebuild the training corpora that registered runs read from outside git, each from its registered code copy.

    python scripts/rebuild_corpora.py --list                   # what exists, what is missing
    python scripts/rebuild_corpora.py accurate-contrast accurate-frames
    python scripts/rebuild_corpora.py --all --nice 10          # every missing one, in order
    python scripts/rebuild_corpora.py --all --dry-run          # print the commands

Corpora live under ``~/.cache/veridic/train`` (``$VERIDIC_TRAIN_DIR``), outside git, and a machine that comes back
bare loses them. Each entry below is the command its pre-registration fixes (docs/preregistration/), run from a
detached worktree of the commit that registered it (``/work/snap-<commit>`` unless ``--snap-root`` says otherwise),
so later changes to the generators cannot change a registered run's data. The generators are deterministic: a
rebuilt corpus must hold the registered rows and, where one is recorded, the same content (the first 16 hex digits
of the SHA-256 of its decompressed lines), or the script fails and says so. A corpus that already exists is checked
the same way and left alone.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import os
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _train_dir() -> Path:
    return Path(os.environ.get("VERIDIC_TRAIN_DIR", Path.home() / ".cache" / "veridic" / "train"))


@dataclass(frozen=True)
class Corpus:
    """One registered corpus: where it goes, the commit whose code builds it, its ``veridic`` arguments (``{out}``
    stands for the output path), the rows the registration recorded and the content hash of a verified build
    (None: not recorded)."""

    name: str
    path: str
    commit: str
    args: tuple[str, ...]
    rows: int | None
    registered_in: str
    sha256: str | None = None

    def out(self) -> Path:
        return _train_dir() / self.path


CORPORA: tuple[Corpus, ...] = (
    Corpus("accurate-contrast", "corpora/contrast.jsonl.gz", "723d514",
           ("synth", "contrast", "-o", "{out}", "--n-process", "{n_process}"), 176_174,
           "nli-base.md, round 2 (phase 2 of configs/nli-base-l12-v2.yaml)", "7e7a45bd37a5ffd7"),
    Corpus("accurate-frames", "corpora/frames.jsonl.gz", "723d514",
           ("synth", "frames", "-o", "{out}", "--n-premises", "12000", "--sources", "pomo_valid", "--sources", "fnc1",
            "--sources", "semiauto_wiki", "--sources", "mnli"), 23_920,
           # contrast-data.md's 23,883 rows came from an earlier generator; the round's code copy builds 23,920, twice alike
           "nli-base.md, round 2 (phase 2 of configs/nli-base-l12-v2.yaml)", "b95604877efa0fc0"),
    Corpus("tagger-synthetic", "span-tagger-v1/synthetic-spans.jsonl.gz", "45b27ea",
           ("synth", "spans", "-o", "{out}", "--n", "20000", "--seed", "0"), 19_039,
           "span-tagger.md, A1 of the first recipe (read by the second and third recipes)", "a9d599bb8a7d75c5"),
    Corpus("tagger-abstractive", "span-tagger-v2/abstractive-spans.jsonl.gz", "45b27ea",
           ("synth", "spans", "--abstractive", "-o", "{out}", "--n", "6000", "--seed", "0"), 5_669,
           "span-tagger.md, second recipe (read by the third recipe)", "7242951b411c6906"),
    Corpus("tagger-summaries", "span-tagger-v5/summary-spans.jsonl.gz", "3e13d2a",
           ("synth", "spans", "--summaries", "-o", "{out}", "--n", "4000", "--seed", "0"), 1_922,
           "span-tagger.md, fifth recipe", "d8ebb7d479bec54c"),
    Corpus("accurate-fnc1-windows", "corpora/fnc1-windows.jsonl.gz", "d4202eb",
           ("synth", "windows", "fnc1", "--exclude", "fnc_stance=unrelated", "-o", "{out}"), 6_948,
           "nli-base.md, round 6 (configs/nli-base-l12r6-v1.yaml)", "23aabb9e99dfc6cb"),
    Corpus("accurate-averitec-windows", "corpora/averitec-windows.jsonl.gz", "d4202eb",
           ("synth", "windows", "averitec", "-o", "{out}"), 461,
           "nli-base.md, round 6 (configs/nli-base-l12r6-v1.yaml)", "69a1eb2d5b5d6b9b"),
)
BY_NAME = {c.name: c for c in CORPORA}


def fingerprint(path: Path) -> tuple[int, str]:
    """Rows of a gzip JSONL file and the first 16 hex digits of the SHA-256 of its decompressed bytes (the gzip
    header holds a time stamp, so the compressed file's own hash would differ between identical builds)."""
    h, rows = hashlib.sha256(), 0
    with gzip.open(path, "rb") as f:
        for line in f:
            h.update(line)
            rows += bool(line.strip())
    return rows, h.hexdigest()[:16]


def mismatch(c: Corpus, rows: int, digest: str) -> str | None:
    """What differs from the registration, or None."""
    if c.rows is not None and rows != c.rows:
        return f"{rows:,} rows where the registration ({c.registered_in}) recorded {c.rows:,}"
    if c.sha256 is not None and digest != c.sha256:
        return f"content {digest} where the verified build is {c.sha256}"
    return None


def snapshot(commit: str, *, snap_root: Path, dry_run: bool) -> Path:
    """A detached worktree of ``commit`` (made once; reused while it exists)."""
    folder = snap_root / f"snap-{commit}"
    if not (folder / "veridic").is_dir():
        cmd = ["git", "worktree", "add", "--detach", str(folder), commit]
        print("$ " + shlex.join(cmd), file=sys.stderr, flush=True)
        if not dry_run:
            subprocess.run(["git", "worktree", "prune"], cwd=ROOT, check=True)
            subprocess.run(cmd, cwd=ROOT, check=True, capture_output=True)
    return folder


def rebuild(c: Corpus, *, veridic_bin: str, snap_root: Path, nice: int, n_process: int, dry_run: bool) -> str:
    """Build ``c`` if it is missing; return a one-line account of what it holds."""
    out = c.out()
    if out.is_file():
        n, digest = fingerprint(out)
        bad = mismatch(c, n, digest)
        return f"{c.name}: present, {n:,} rows, content {digest}" + (f"; NOT as registered: {bad} (delete {out} to rebuild it)" if bad else "")
    folder = snapshot(c.commit, snap_root=snap_root, dry_run=dry_run)
    args = [a.format(out=out, n_process=n_process) for a in c.args]
    cmd = ["nice", "-n", str(nice), veridic_bin, *args]
    print(f"$ (cd {folder} && PYTHONPATH={folder} {shlex.join(cmd)})", file=sys.stderr, flush=True)
    if dry_run:
        return f"{c.name}: would be built at {out}"
    out.parent.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "PYTHONPATH": str(folder), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    subprocess.run(cmd, cwd=folder, env=env, check=True)
    n, digest = fingerprint(out)
    bad = mismatch(c, n, digest)
    if bad:
        raise SystemExit(f"{c.name}: rebuilt with {bad}. The run must not read it: check that {folder} is at {c.commit} "
                         "and the data under ../shared/data is unchanged, then delete the file and rebuild.")
    return f"{c.name}: rebuilt, {n:,} rows, content {digest}, as registered"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("names", nargs="*", help=f"corpora to rebuild, from {', '.join(BY_NAME)}")
    ap.add_argument("--all", action="store_true", help="every registered corpus that is missing")
    ap.add_argument("--list", action="store_true", help="say which exist and how many rows they hold, build nothing")
    ap.add_argument("--veridic-bin", default=str(ROOT / ".venv" / "bin" / "veridic"))
    ap.add_argument("--snap-root", type=Path, default=ROOT.parent, help="where the code copies go (default: beside the checkout)")
    ap.add_argument("--nice", type=int, default=10)
    ap.add_argument("--n-process", type=int, default=1, help="parser processes for the contrast corpus (speed only)")
    ap.add_argument("--dry-run", action="store_true")
    a = ap.parse_args(argv)
    unknown = [n for n in a.names if n not in BY_NAME]
    if unknown:
        ap.error(f"unknown corpus {', '.join(map(repr, unknown))}: expected some of {', '.join(BY_NAME)}")
    if a.list:
        for c in CORPORA:
            where = c.out()
            if where.is_file():
                n, digest = fingerprint(where)
                bad = mismatch(c, n, digest)
                state = f"{n:,} rows, {digest}" + (f" NOT AS REGISTERED ({bad})" if bad else " ok")
            else:
                state = "missing"
            print(f"{c.name:20} {state}  {where}  [code {c.commit}; {c.registered_in}]")
        return 0
    chosen = list(CORPORA) if a.all else [BY_NAME[n] for n in a.names]
    if not chosen:
        ap.error("name the corpora to rebuild, or pass --all or --list")
    for c in chosen:
        print(rebuild(c, veridic_bin=a.veridic_bin, snap_root=a.snap_root, nice=a.nice, n_process=a.n_process, dry_run=a.dry_run),
              flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

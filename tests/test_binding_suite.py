"""The binding suite: minimal pairs that move a fact to the other entity of its premise."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SUITE = REPO / "veridic" / "bench" / "data" / "binding_suite.jsonl"
sys.path.insert(0, str(REPO / "benchmarks"))

from binding_suite import pair_accuracy  # noqa: E402


def _rows() -> list[dict]:
    return [json.loads(line) for line in SUITE.read_text(encoding="utf-8").splitlines()]


def test_the_shipped_suite_is_what_its_builder_writes():
    done = subprocess.run([sys.executable, str(REPO / "benchmarks" / "build_binding_suite.py"), "--check"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr


def test_each_frame_is_a_minimal_pair_of_the_premise_s_two_values():
    rows = _rows()
    assert len({r["id"] for r in rows}) == len(rows) == 64
    assert Counter(r["label"] for r in rows) == {0: 32, 1: 32}
    frames: dict[tuple[int, str], dict[int, dict]] = {}
    for r in rows:
        assert r["meta"]["rule"] == ("binding_keep" if r["label"] else "binding_swap")
        frames.setdefault((r["meta"]["item"], r["meta"]["slot"]), {})[r["label"]] = r
    assert len(frames) == 32 and all(set(f) == {0, 1} for f in frames.values())
    for (item, slot), f in frames.items():
        keep, swap = f[1]["claim"], f[0]["claim"]
        assert f[1]["source"] == f[0]["source"] and keep != swap
        # strip the shared frame: what is left on each side is one of the premise's values, and they differ
        i = next(k for k in range(min(len(keep), len(swap))) if keep[k] != swap[k])
        j = next(k for k in range(1, min(len(keep), len(swap)) + 1) if keep[-k] != swap[-k]) - 1
        own, other = keep[i:len(keep) - j], swap[i:len(swap) - j]
        premise = f[1]["source"]
        assert own and other, (item, slot)
        assert premise.count(own.strip()) >= 1 and premise.count(other.strip()) >= 1, (item, slot, own, other)
    # the other slot of the item uses the same two values the other way round
    for item in {k[0] for k in frames}:
        a, b = frames[(item, "A")], frames[(item, "B")]
        assert a[1]["claim"] != b[1]["claim"]


def test_pair_accuracy_counts_wins_ties_and_losses():
    rows = [{"id": i, "label": lab, "meta": {"item": item, "slot": "A"}}
            for i, lab, item in (("a", 1, 1), ("b", 0, 1), ("c", 1, 2), ("d", 0, 2), ("e", 1, 3), ("f", 0, 3))]
    assert pair_accuracy({"a": 0.9, "b": 0.1, "c": 0.4, "d": 0.4, "e": 0.2, "f": 0.3}, rows) == (1 + 0.5 + 0) / 3


def test_word_overlap_cannot_rank_the_pairs(tmp_path):
    """Through `veridic bench` with the overlap baseline: the suite loads as a contrast suite (two rules) and bigram
    overlap stays near chance on its minimal pairs."""
    out = tmp_path / "b"
    done = subprocess.run([str(Path(sys.executable).with_name("veridic")), "bench", "--data", "binding", "--scorer", "overlap-bigram",
                           "--no-progress", "-o", str(out)], capture_output=True, text=True, timeout=300, cwd=REPO)
    assert done.returncode == 0, done.stderr[-2000:]
    con = json.loads((out / "contrast.json").read_text())["binding"]["overlap-bigram"]
    assert con["binding_keep"]["n"] == con["binding_swap"]["n"] == 32
    rep = json.loads((out / "report.json").read_text())
    scores = {x["id"]: x["score"] for x in rep["results"]["binding"]["overlap-bigram"]["scores"]}
    assert 0.35 <= pair_accuracy(scores, _rows()) <= 0.65

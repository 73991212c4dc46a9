"""Token offsets of long texts are computed in whitespace-cut pieces: they must equal the whole-text offsets."""

from __future__ import annotations

import random

import pytest

from veridic.nli._backend import _pieces


def _text(n: int, seed: int = 0) -> str:
    rng = random.Random(seed)
    words = ["Zürich", "naïve", "co-operate", "U.S.", "3.5%", "don't", "東京", "emoji🙂", "x" * 40, "(a)", "—", "end."]
    seps = [" ", "  ", "\n", "\t", "\n\n", " \u00a0"]
    out = []
    while sum(map(len, out)) < n:
        out.append(rng.choice(words))
        out.append(rng.choice(seps))
    return "".join(out)


@pytest.mark.parametrize("size", [1, 7, 64, 1000])
def test_pieces_cover_the_text_and_cut_only_after_whitespace(size):
    text = _text(5000, seed=size)
    parts = _pieces(text, size=size)
    assert "".join(p for _, p in parts) == text
    assert [s for s, _ in parts] == [sum(len(p) for _, p in parts[:i]) for i in range(len(parts))]
    assert all(p[-1].isspace() for _, p in parts[:-1])
    assert _pieces("") == []


@pytest.mark.parametrize("kind", ["torch", "onnx"])
def test_piecewise_offsets_equal_whole_text_offsets(kind, monkeypatch):
    from veridic.nli import _backend as B
    from veridic.nli import load_backend

    b = load_backend(kind=kind)  # the embedded model ships both the fp32 weights and the int8 ONNX export
    text = _text(60_000, seed=3)
    pieced = b.token_offsets(text)
    monkeypatch.setattr(B, "OFFSET_PIECE_CHARS", 10**9)  # one piece: the whole text at once
    monkeypatch.setattr(B._pieces, "__defaults__", (10**9,))
    whole = b.token_offsets(text)
    assert len(pieced) > 10_000
    assert pieced == whole

"""The learned span tagger: packing, labels, spans from probabilities, training in stages, and the synthetic span corpus."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from veridic.detect._tagger import claim_pieces, pack_source, spans_from_probs
from veridic.detect._tagger_train import TaggerTrainConfig, held_back, token_labels
from veridic.errors import ConfigError, ModelLoadError


def words(t: str) -> int:
    return len(t.split())


def test_pack_source_keeps_the_sentences_that_share_words_with_the_claim_in_source_order():
    src = "The weather was fine. Acme hired 200 engineers. Nobody came. Acme is based in Ohio."
    packed, kept = pack_source(src, "Acme hired 300 engineers in Ohio.", count_tokens=words, budget=12)
    assert packed == "Acme hired 200 engineers. Acme is based in Ohio." and kept == 2
    assert pack_source(src, "x", count_tokens=words, budget=100) == (src, 4)


def test_claim_pieces_split_long_claims_at_sentence_ends():
    claim = "One two three. Four five six. Seven eight nine."
    assert claim_pieces(claim, count_tokens=words, max_tokens=6) == [(0, 29), (30, 47)]
    assert claim_pieces(claim, count_tokens=words, max_tokens=100) == [(0, 47)]
    assert claim_pieces("   ", count_tokens=words) == []


def test_claim_pieces_can_also_end_after_a_number_of_sentences():
    claim = "One two three. Four five. Six seven eight."
    assert claim_pieces(claim, count_tokens=words, max_sentences=1) == [(0, 14), (15, 25), (26, 42)]
    assert claim_pieces(claim, count_tokens=words, max_sentences=2) == [(0, 25), (26, 42)]
    # both bounds hold: the token bound can end a piece before the sentence bound does
    assert claim_pieces(claim, count_tokens=words, max_tokens=4, max_sentences=2) == [(0, 14), (15, 25), (26, 42)]
    for bad in (0, -1, True, 1.5):
        with pytest.raises(ConfigError, match="max_sentences"):
            claim_pieces(claim, count_tokens=words, max_sentences=bad)


def test_token_labels_mark_claim_tokens_inside_spans_and_ignore_the_rest():
    offsets = [(0, 0), (0, 4), (5, 9), (10, 14), (0, 0), (0, 6), (0, 0)]
    seq = [None, 0, 0, 0, None, 1, None]
    assert token_labels(offsets, seq, [(5, 9)]) == [-100, 0, 1, 0, -100, -100, -100]
    assert token_labels(offsets, seq, []) == [-100, 0, 0, 0, -100, -100, -100]


def test_spans_from_probs_are_whole_words_joined_over_punctuation():
    text = "Messi was born in Rosario, Argentina, in 1987."
    p = np.zeros(len(text))
    p[text.index("Rosario"):text.index("Rosario") + 3] = 0.9        # part of a word marks the whole word
    p[text.index("Argentina"):text.index("Argentina") + 9] = 0.8
    spans = spans_from_probs(text, p, threshold=0.5)
    assert [(s.text, s.start) for s in spans] == [("Rosario, Argentina", text.index("Rosario"))]
    assert spans_from_probs(text, p, threshold=0.95) == []


def test_a_run_never_crosses_a_break_so_no_span_holds_the_end_of_one_sentence_and_the_start_of_the_next():
    text = "The line operated the Titanic. Everyone aboard survived."
    p = np.full(len(text), 0.9)
    second = text.index("Everyone")
    assert [s.text for s in spans_from_probs(text, p, threshold=0.5)] == [text[:-1]]  # without breaks: one run
    spans = spans_from_probs(text, p, threshold=0.5, breaks=[0, second])
    assert [s.text for s in spans] == ["The line operated the Titanic", "Everyone aboard survived"]


@settings(max_examples=60, deadline=None)
@given(text=st.text(alphabet=st.sampled_from(list("ab ,.1")), max_size=40), seed=st.integers(0, 99), thr=st.floats(0.05, 0.95),
       breaks=st.lists(st.integers(0, 40), max_size=4))
def test_spans_lie_inside_the_text_in_order_never_start_on_punctuation_nor_cross_a_break(text, seed, thr, breaks):
    p = np.random.default_rng(seed).random(len(text))
    breaks = [b for b in breaks if 0 < b < len(text) and text[b - 1] == " "]  # between words, as sentence starts are
    spans = spans_from_probs(text, p, threshold=thr, breaks=breaks)
    last = 0
    for s in spans:
        assert last <= s.start < s.end <= len(text) and text[s.start:s.end] == s.text
        assert s.text[0].isalnum() and s.text[-1].isalnum()
        assert not any(s.start < b < s.end for b in breaks)
        last = s.end


@settings(max_examples=60, deadline=None)
@given(text=st.text(alphabet=st.sampled_from(list("ab ,.1")), max_size=40), seed=st.integers(0, 99), thr=st.floats(0.05, 0.95))
def test_spans_lie_inside_the_text_in_order_and_never_start_on_punctuation(text, seed, thr):
    p = np.random.default_rng(seed).random(len(text))
    spans = spans_from_probs(text, p, threshold=thr)
    last = 0
    for s in spans:
        assert last <= s.start < s.end <= len(text) and text[s.start:s.end] == s.text
        assert s.text[0].isalnum() and s.text[-1].isalnum()
        last = s.end


def test_held_back_rows_are_a_stable_share_by_id():
    ids = [f"row-{i}" for i in range(2000)]
    share = sum(held_back(i, 0.2) for i in ids) / len(ids)
    assert 0.17 < share < 0.23 and held_back("row-7", 0.2) == held_back("row-7", 0.2)
    assert not any(held_back(i, 0.0) for i in ids)


def test_config_is_checked():
    with pytest.raises(ConfigError, match="max_length >= 64"):
        TaggerTrainConfig(max_length=8)
    with pytest.raises(ConfigError, match="held_back_fraction"):
        TaggerTrainConfig(held_back_fraction=1.0)
    for bad in (0, True, 1.5):
        with pytest.raises(ConfigError, match="piece_sentences must be a positive whole number"):
            TaggerTrainConfig(piece_sentences=bad)


def test_training_features_follow_the_piece_setting(tiny_nli_dir):
    """A tagger trained on one-sentence pieces sees, in training, the inputs it will read at inference."""
    pytest.importorskip("torch")
    from transformers import AutoTokenizer

    from veridic.detect._tagger_train import _features

    tok = AutoTokenizer.from_pretrained(tiny_nli_dir)
    claim = "Acme hired 250 engineers. The plant opened in 1999."
    row = {"id": "x", "source": "Acme hired 200 engineers. The plant opened in 1999.", "claim": claim,
           "spans": [{"start": claim.index("250"), "end": claim.index("250") + 3}]}
    whole, by_sentence = _features([row], tok, max_length=64), _features([row], tok, max_length=64, piece_sentences=1)
    assert len(whole) == 1 and len(by_sentence) == 2
    assert sum(x == 1 for x in whole[0]["labels"]) == sum(x == 1 for x in by_sentence[0]["labels"]) >= 1
    assert not any(x == 1 for x in by_sentence[1]["labels"])  # the second sentence holds no span


def test_a_bad_piece_setting_in_tagger_json_is_refused_with_what_to_do(tmp_path):
    pytest.importorskip("torch")
    from veridic.detect._tagger import SpanTagger

    (tmp_path / "tagger.json").write_text(json.dumps({"threshold": 0.3, "piece_sentences": 0}))
    with pytest.raises(ConfigError, match="piece_sentences must be a positive whole number.*Remove the key"):
        SpanTagger(tmp_path)
    for meta in ({"piece_context_sentences": 1}, {"piece_sentences": 1, "piece_context_sentences": True}):
        (tmp_path / "tagger.json").write_text(json.dumps({"threshold": 0.3, **meta}))
        with pytest.raises(ConfigError, match="piece_context_sentences must be .* needs piece_sentences.*Remove the key"):
            SpanTagger(tmp_path)


def test_a_bad_dtype_is_refused_with_the_values_it_takes(tmp_path):
    pytest.importorskip("torch")
    from veridic.detect._tagger import SpanTagger

    (tmp_path / "tagger.json").write_text(json.dumps({"threshold": 0.3, "dtype": "fp8"}))
    with pytest.raises(ConfigError, match=r"tagger.json: dtype must be one of float32, bfloat16, auto; got 'fp8'"):
        SpanTagger(tmp_path)
    (tmp_path / "tagger.json").write_text(json.dumps({"threshold": 0.3}))
    with pytest.raises(ConfigError, match=r"^dtype must be one of .*got 'int8'"):
        SpanTagger(tmp_path, dtype="int8")


def test_bf16_marks_what_fp32_marks_and_is_chosen_by_tagger_json_or_by_the_caller(tmp_path):
    """bf16 autocast (as the tagger was trained) moves a character's probability by rounding, not its spans; the
    setting travels in ``tagger.json`` and shows in ``describe()``, so a benchmark stamp tells the two apart."""
    pytest.importorskip("torch")
    import shutil

    from veridic.detect import EMBEDDED_TAGGER_NAME, SpanTagger
    from veridic.detect._tagger import resolve_tagger_path
    from veridic.device import cpu_supports_bf16

    folder = tmp_path / "auto"
    shutil.copytree(resolve_tagger_path(EMBEDDED_TAGGER_NAME), folder)
    meta = {k: v for k, v in json.loads((folder / "tagger.json").read_text()).items() if k != "dtype"}
    (folder / "tagger.json").write_text(json.dumps(meta))
    assert SpanTagger(folder).dtype == "float32"  # no setting: how every tagger was first scored
    (folder / "tagger.json").write_text(json.dumps({**meta, "dtype": "auto"}))
    auto = SpanTagger(folder)
    assert auto.dtype == ("bfloat16" if cpu_supports_bf16() else "float32") == auto.describe()["dtype"]
    fp32, bf16 = SpanTagger(EMBEDDED_TAGGER_NAME, dtype="float32"), SpanTagger(EMBEDDED_TAGGER_NAME, dtype="bfloat16")
    assert fp32.dtype == "float32" and bf16.describe()["dtype"] == "bfloat16"
    source = "The ESA station is in Malargüe, Argentina. The antenna cost 33 million euros."
    claims = ["The antenna cost about 45 million euros.", "The ESA station is in Malargüe, Argentina."]
    p32, p16 = (t.char_probabilities(sources=[source] * 2, claims=claims) for t in (fp32, bf16))
    for a, b in zip(p32, p16):
        assert np.abs(a - b).max() < 0.05

    def where(t):
        return [[(s.start, s.end) for s in spans] for spans in t.predict(sources=[source] * 2, claims=claims)]

    assert where(fp32) == where(bf16) == [[(23, 25)], []]
    assert [s.text for s in bf16.predict(sources=[source], claims=claims[:1])[0]] == ["45"]


def test_a_folder_without_tagger_json_is_refused(tmp_path):
    pytest.importorskip("torch")
    from veridic.detect._tagger import SpanTagger

    with pytest.raises(ModelLoadError, match="tagger.json"):
        SpanTagger(tmp_path)


def _rows(n: int) -> list[dict]:
    out = []
    for i in range(n):
        claim = f"Acme hired {200 + i} engineers in Ohio."
        a = claim.index(str(200 + i))
        spans = [{"start": a, "end": a + 3, "text": claim[a:a + 3], "type": "number"}] if i % 2 else []
        out.append({"id": f"r{i}", "dataset": "toy", "source": "Acme hired 200 engineers in Ohio. It rained.", "claim": claim, "spans": spans})
    return out


def test_training_in_two_stages_resumes_and_writes_a_tagger(tmp_path, tiny_nli_dir):
    pytest.importorskip("accelerate")
    from veridic.detect._tagger import SpanTagger
    from veridic.detect._tagger_train import train_tagger

    cfg = TaggerTrainConfig(backbone=str(tiny_nli_dir), max_length=64, epochs=2, batch_size=4, held_back_fraction=0.3, piece_sentences=1)
    first = train_tagger(rows=_rows(24), output_dir=tmp_path / "run", config=cfg, max_minutes=0)
    assert not first["finished"] and first["step"] >= 1
    assert list((tmp_path / "run" / "checkpoints").glob("checkpoint-*"))
    # Had the budget ended here, the newest checkpoint would be the tagger, marked unfinished.
    import shutil

    from veridic.detect._tagger_train import export_newest_checkpoint

    shutil.copytree(tmp_path / "run", tmp_path / "early")
    early = export_newest_checkpoint(rows=_rows(24), output_dir=tmp_path / "early", config=cfg)
    assert early["step"] == first["step"] and not SpanTagger(early["path"]).meta["finished"]
    done = train_tagger(rows=_rows(24), output_dir=tmp_path / "run", config=cfg)
    assert done["finished"] and done["step"] == done["max_steps"] > first["step"]
    tagger = SpanTagger(done["path"])
    assert tagger.threshold == done["threshold"] and 0 < tagger.threshold < 1
    assert tagger.piece_sentences == 1  # read at inference in the pieces it was trained on
    # The pipeline's flag threshold is fitted on the same held-back rows, never below the span threshold.
    assert tagger.meta["flag_threshold"] == done["flag_threshold"] >= tagger.threshold
    assert set(tagger.meta["flag_threshold_scan"]) and 0.0 <= tagger.meta["held_back_flag_bacc"] <= 1.0
    # A folder training did not write (an average of taggers) gets its thresholds by the same fit on the same rows.
    from veridic.detect._tagger_train import fit_thresholds

    (tmp_path / "refit").mkdir()
    for f in Path(done["path"]).iterdir():
        if f.name != "tagger.json":
            shutil.copy2(f, tmp_path / "refit" / f.name)
    refit = fit_thresholds(model_dir=tmp_path / "refit", rows=_rows(24), config=cfg)
    assert (refit["threshold"], refit["flag_threshold"]) == (done["threshold"], done["flag_threshold"])
    assert SpanTagger(tmp_path / "refit").meta["threshold_scan"] == tagger.meta["threshold_scan"]
    claims = ["Acme hired 500 engineers in Ohio. " * 30, "Acme hired 200 engineers."]
    predicted = tagger.predict(sources=["Acme hired 200 engineers in Ohio."] * 2, claims=claims)
    for claim, spans in zip(claims, predicted):
        assert all(0 <= s.start < s.end <= len(claim) and claim[s.start:s.end] == s.text for s in spans)
    # Packing is reported: a short source is seen whole, a long one is cut.
    assert tagger.sees_whole_source(source="Acme hired 200 engineers in Ohio.", claim=claims[1])
    assert not tagger.sees_whole_source(source="Acme hired 200 engineers in Ohio. " * 40, claim=claims[1])
    # Shipped as int8 rows (veridic.nli.packed): the same spans, probabilities within int8 rounding.
    from veridic.nli.packed import is_packed, write_packed

    write_packed(model_dir=done["path"], out_dir=tmp_path / "packed")
    packed = SpanTagger(tmp_path / "packed")
    assert is_packed(packed.dir) and packed.meta == tagger.meta
    p_full = tagger.char_probabilities(sources=["Acme hired 200 engineers in Ohio."] * 2, claims=claims)
    p_packed = packed.char_probabilities(sources=["Acme hired 200 engineers in Ohio."] * 2, claims=claims)
    assert max(float(abs(a - b).max()) for a, b in zip(p_full, p_packed)) < 0.02
    # The detector's batch interface, for the span benchmarks (WiCE tokens).
    as_detector = tagger.detect_many(passages=claims, evidences=["Acme hired 200 engineers in Ohio."] * 2)
    assert [list(r.spans) for r in as_detector] == predicted
    # Inside the detector (veridic detect --tagger): the judge's score comes with the result.
    pytest.importorskip("spacy")
    from typer.testing import CliRunner

    from veridic.cli import app

    res = CliRunner().invoke(app, ["detect", "-p", "Acme hired 500 engineers.", "-e", "Acme hired 200 engineers in Ohio.",
                                   "--tagger", done["path"], "--backend", "dummy", "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout[res.stdout.index("{"):])  # a backbone warning may come first on stderr
    assert out["detector"]["pipeline"] == "veridic.detect.tagged-v1" and 0.0 <= out["score"] <= 1.0


def test_span_corpus_rows_have_exact_spans_and_the_requested_kinds(tmp_path, nlp):
    from veridic.io._paths import default_data_dir
    from veridic.synth._spans import build_span_corpus

    data = default_data_dir()
    if not (data / "nli" / "fnc1.jsonl.gz").exists():
        pytest.skip(f"the shared data folder is absent ({data}); set VERIDIC_DATA")
    stats = build_span_corpus(data_dir=data, out=tmp_path / "s.jsonl.gz", nlp=nlp, n=120, seed=3, sources=["fnc1"], progress=False)
    rows = [json.loads(line) for line in gzip.open(tmp_path / "s.jsonl.gz", "rt", encoding="utf-8")]
    assert len(rows) == stats["examples"] > 80
    assert {"faithful", "entity", "addition"} <= set(stats["by_kind"])
    for r in rows:
        assert r["label"] == (0 if r["spans"] else 1)
        for s in r["spans"]:
            assert r["claim"][s["start"]:s["end"]] == s["text"] and s["text"]
        if r["meta"]["kind"] == "addition":
            assert r["spans"][0]["text"] not in r["source"]


_ESA = ("ESA's new deep-space antenna is in Malargüe, Argentina. It joins the station at Cebreros, Spain, and New Norcia, Australia. "
        "The 35-metre antenna cost 33 million euros and was designed by ESA engineers.")


def test_the_shipped_tagger_marks_what_the_source_lacks_and_leaves_supported_claims_alone():
    pytest.importorskip("torch")
    from veridic.detect import EMBEDDED_TAGGER_NAME, SpanTagger
    from veridic.nli.packed import is_packed

    tagger = SpanTagger(EMBEDDED_TAGGER_NAME)
    assert is_packed(tagger.dir) and tagger.threshold == tagger.meta["threshold"] and tagger.meta["finished"]
    claims = ["The antenna cost about 45 million euros.", "The station was designed by the architect Renzo Piano.",
              "The new antenna is in Malargüe, Argentina.", "The antenna cost 33 million euros."]
    marked = [[s.text for s in spans] for spans in tagger.predict(sources=[_ESA] * len(claims), claims=claims)]
    # different words, same meaning: nothing; a changed number or an added name: exactly that
    assert marked == [["45"], ["Renzo Piano"], [], []]


def test_the_base_size_tagger_ships_beside_the_default_and_marks_the_same_errors():
    """The twelve-layer base-size tagger is selected by name only; the default is its six-layer cut."""
    pytest.importorskip("torch")
    from veridic.detect import EMBEDDED_TAGGER_NAME, SpanTagger
    from veridic.detect._tagger import embedded_taggers, resolve_tagger_path
    from veridic.nli.packed import is_packed

    assert embedded_taggers() == ["veridic-tagger-minilm-l6", "veridic-tagger-mpnet-base", EMBEDDED_TAGGER_NAME]
    assert resolve_tagger_path("embedded").name == EMBEDDED_TAGGER_NAME
    tagger = SpanTagger("veridic-tagger-mpnet-base")
    assert is_packed(tagger.dir) and tagger.meta["finished"] and tagger.threshold == 0.15
    assert tagger.piece_sentences == 1 and tagger.meta["pipeline"] == {"content_words": True, "fixes_explain": True}
    claims = ["The antenna cost about 45 million euros.", "The station was designed by the architect Renzo Piano.",
              "The new antenna is in Malargüe, Argentina.", "The antenna is in Argentina and cost 33 million euros."]
    marked = [[s.text for s in spans] for spans in tagger.predict(sources=[_ESA] * len(claims), claims=claims)]
    assert marked == [["45"], ["Renzo Piano"], [], []]
    # It ships computing in bf16 where the CPU has native bf16 units; fp32, asked for, marks the same words.
    from veridic.device import cpu_supports_bf16

    assert tagger.meta["dtype"] == "auto" and tagger.dtype == ("bfloat16" if cpu_supports_bf16() else "float32")
    fp32 = SpanTagger("veridic-tagger-mpnet-base", dtype="float32")
    assert [[s.text for s in spans] for spans in fp32.predict(sources=[_ESA] * len(claims), claims=claims)] == marked
    kept = tagger.char_probabilities(sources=[_ESA] * 2, claims=claims[:2])  # from predict's batch of four
    tagger.forget()  # computed again by the model, not served from the kept probabilities
    first = tagger.char_probabilities(sources=[_ESA] * 2, claims=claims[:2])
    tagger.forget()
    assert all(np.array_equal(a, b) for a, b in zip(first, tagger.char_probabilities(sources=[_ESA] * 2, claims=claims[:2])))
    # In bf16 the other passages of a batch move a probability by rounding only (the card's tolerance: 0.005).
    assert max(float(np.max(np.abs(a - b))) for a, b in zip(kept, first)) <= 0.005


def test_shipped_taggers_resolve_by_name_and_an_unknown_name_lists_the_shipped_ones(tmp_path, monkeypatch):
    from veridic.detect._tagger import EMBEDDED_TAGGER_NAME, embedded_taggers, resolve_tagger_path
    from veridic.errors import ModelLoadError

    assert resolve_tagger_path("embedded") == resolve_tagger_path(EMBEDDED_TAGGER_NAME)
    assert EMBEDDED_TAGGER_NAME in embedded_taggers()
    with pytest.raises(ModelLoadError, match=r"not a span tagger shipped.*'veridic-tagger-minilm-l6'.*Did you mean") as err:
        resolve_tagger_path("veridic-tagger-minilm-l7")
    assert "train-tagger" in str(err.value)
    # a folder of that name in the working directory is still the user's folder, not a shipped tagger
    monkeypatch.chdir(tmp_path)
    (tmp_path / "veridic-tagger-mine").mkdir()
    assert resolve_tagger_path("veridic-tagger-mine") == Path("veridic-tagger-mine")
    assert resolve_tagger_path(Path(EMBEDDED_TAGGER_NAME)) == resolve_tagger_path("embedded")  # as a CLI's Path option gives it


def test_pieces_of_one_sentence_give_each_sentence_the_source_sentences_that_concern_it(tmp_path):
    """A summary whose sentences draw on distant parts of a long source: packed as one piece, the window fills with
    what concerns the first sentence and the second one's support is cut; one sentence per piece keeps both."""
    pytest.importorskip("torch")
    import shutil

    from veridic.detect import EMBEDDED_TAGGER_NAME, SpanTagger
    from veridic.detect._tagger import _source_budget, resolve_tagger_path

    def copy(name: str, piece_sentences: int | None) -> SpanTagger:
        folder = tmp_path / name
        shutil.copytree(resolve_tagger_path(EMBEDDED_TAGGER_NAME), folder)
        meta = {k: v for k, v in json.loads((folder / "tagger.json").read_text()).items() if k != "piece_sentences"}
        (folder / "tagger.json").write_text(json.dumps(meta if piece_sentences is None else {**meta, "piece_sentences": piece_sentences}))
        return SpanTagger(folder)

    by_tokens, per_sentence = copy("by-tokens", None), copy("per-sentence", 1)
    assert by_tokens.piece_sentences is None and per_sentence.describe()["piece_sentences"] == 1
    filler = [f"Acme hired {n} engineers in Ohio last year, its report on engineers in Ohio says." for n in range(100, 3000, 150)]
    support = "The Dayton plant opened in 1999."
    source = " ".join(filler[:10] + [support] + filler[10:])
    claim = "Acme hired 250 engineers in Ohio last year. The Dayton plant opened in 1999."

    def windows(tagger):
        return [pack_source(source, claim[a:b], count_tokens=tagger.count_tokens,
                            budget=_source_budget(tagger.count_tokens(claim[a:b]), tagger.max_length))[0]
                for a, b in tagger.pieces(claim)]

    assert by_tokens.pieces(claim) == [(0, 76)] and support not in windows(by_tokens)[0]
    assert per_sentence.pieces(claim) == [(0, 43), (44, 76)] and support in windows(per_sentence)[1]
    # what the model reads follows: the cut support leaves the second sentence marked, the kept one leaves it alone
    [marked_by_tokens], [marked_per_sentence] = (t.predict(sources=[source], claims=[claim]) for t in (by_tokens, per_sentence))
    assert any(s.start >= 44 for s in marked_by_tokens)
    assert not any(s.start >= 44 for s in marked_per_sentence)


def test_context_sentences_are_read_with_a_piece_but_never_marked_by_it(tmp_path):
    """Each sentence read with the one before it (``piece_context_sentences``): the first sentence, which has none,
    is scored exactly as when read alone; what the second sentence's input adds never reaches the first."""
    pytest.importorskip("torch")
    import shutil

    from veridic.detect import EMBEDDED_TAGGER_NAME, SpanTagger
    from veridic.detect._tagger import resolve_tagger_path

    def copy(name: str, **extra: int) -> SpanTagger:
        folder = tmp_path / name
        shutil.copytree(resolve_tagger_path(EMBEDDED_TAGGER_NAME), folder)
        meta = json.loads((folder / "tagger.json").read_text())
        (folder / "tagger.json").write_text(json.dumps({**meta, "piece_sentences": 1, **extra}))
        return SpanTagger(folder)

    alone, with_context = copy("alone"), copy("context", piece_context_sentences=1)
    source = "John Smith was born in Paris in 1950. He studied law at Oxford and later taught in Rome."
    claim = "John Smith was born in Paris. He studied medicine at Oxford. He taught in Rome."
    assert alone.windows(claim) == [(0, 0, 29), (30, 30, 60), (61, 61, 79)]
    assert with_context.windows(claim) == [(0, 0, 29), (0, 30, 60), (30, 61, 79)]
    assert not with_context.sees_whole_source(source=source * 40, claim=claim)
    [p_alone], [p_context] = (t.char_probabilities(sources=[source], claims=[claim]) for t in (alone, with_context))
    # the first sentence: the same input (up to the batch's padding), and nothing of the second's input leaked back
    assert np.allclose(p_alone[:29], p_context[:29], atol=1e-5)
    assert not np.array_equal(p_alone[30:], p_context[30:])  # the later ones were read with the sentence before
    assert p_context[29] == 0  # the space between two sentences is no token's

    # A model that marks every token of an input holding "medicine": the second sentence's input also holds the
    # first sentence, whose characters must keep what the first sentence's own input gave them.
    import torch

    class MarksMedicine:
        def __call__(self, input_ids, **_):
            hot = torch.tensor([4.0 if "medicine" in with_context.tokenizer.decode(row) else -4.0 for row in input_ids])
            logits = torch.zeros(*input_ids.shape, 2)
            logits[..., 1] = hot[:, None]
            return type("Out", (), {"logits": logits})()

    with_context.model = MarksMedicine()
    [p] = with_context.char_probabilities(sources=[source], claims=[claim])
    assert p[:29].max() < 0.1 and p[30:32].min() > 0.9  # "John ... Paris." kept low, "He" marked


def test_train_tagger_refuses_a_piece_bound_below_one():
    from typer.testing import CliRunner

    from veridic.cli import app

    res = CliRunner().invoke(app, ["detect", "train-tagger", "--piece-sentences", "0"])
    assert res.exit_code != 0 and "piece-sentences" in res.output


def test_a_run_folder_refuses_a_stage_with_another_config_naming_both(tmp_path):
    from veridic.detect._tagger_train import RUN_FILE, check_run_folder
    from veridic.errors import ConfigError

    mini = TaggerTrainConfig(piece_sentences=1)
    check_run_folder(tmp_path / "run", mini)
    assert json.loads((tmp_path / "run" / RUN_FILE).read_text())["config"]["backbone"] == "backbone:all-minilm-l6-v2"
    check_run_folder(tmp_path / "run", TaggerTrainConfig(piece_sentences=1))  # the same config resumes
    with pytest.raises(ConfigError, match="backbone: the folder's 'backbone:all-minilm-l6-v2', this stage's 'backbone:all-mpnet-base-v2'"):
        check_run_folder(tmp_path / "run", TaggerTrainConfig(piece_sentences=1, backbone="backbone:all-mpnet-base-v2"))
    with pytest.raises(ConfigError, match="piece_sentences: the folder's 1, this stage's None.*--output"):
        check_run_folder(tmp_path / "run", TaggerTrainConfig())


def test_a_packed_nli_model_is_a_backbone_whose_encoder_the_tagger_keeps(tmp_path, tiny_nli_dir):
    import torch
    from transformers import AutoModelForTokenClassification, AutoTokenizer

    from veridic.detect._tagger_train import _backbone
    from veridic.nli.packed import read_packed, write_packed

    write_packed(model_dir=tiny_nli_dir, out_dir=tmp_path / "packed")
    _, model = _backbone(str(tmp_path / "packed"), AutoTokenizer, AutoModelForTokenClassification)
    encoder = read_packed(tmp_path / "packed")
    # the NLI head is dropped for a new 2-label token head; every encoder weight is the packed model's
    assert model.config.num_labels == 2 and model.classifier.out_features == 2
    state = model.state_dict()
    shared = [k for k in encoder if not k.startswith("classifier.") and ".pooler." not in k]
    assert shared and all(torch.equal(state[k], encoder[k]) for k in shared)
    from veridic.errors import ConfigError

    with pytest.raises(ConfigError, match="neither a registered backbone"):
        _backbone(str(tmp_path / "nothing-here"), AutoTokenizer, AutoModelForTokenClassification)


def test_train_tagger_takes_a_backbone_and_a_device_and_checks_the_device_first(tmp_path):
    from typer.testing import CliRunner

    from veridic.cli import app

    res = CliRunner().invoke(app, ["detect", "train-tagger", "--help"])
    assert "--backbone" in res.output and "--device" in res.output
    res = CliRunner().invoke(app, ["detect", "train-tagger", "--device", "tpu", "--synthetic", str(tmp_path / "missing.jsonl.gz")])
    assert res.exit_code != 0 and "device must be auto (CUDA when present), cpu, cuda or cuda:N; got 'tpu'" in res.output


def test_train_tagger_epochs_reach_the_run_config_and_zero_is_refused(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    import veridic.detect._spans as spans_mod
    import veridic.detect._tagger_train as train_mod
    from veridic.cli import app

    syn = tmp_path / "syn.jsonl.gz"
    with gzip.open(syn, "wt", encoding="utf-8") as fh:
        fh.write(json.dumps({"id": "s0", "dataset": "synthetic", "source": "A b.", "claim": "A c.", "spans": []}) + "\n")
    seen = {}
    monkeypatch.setattr(spans_mod, "load_span_rows", lambda **kw: [])
    monkeypatch.setattr(train_mod, "train_tagger", lambda **kw: seen.setdefault("config", kw["config"]) and {"finished": False})
    res = CliRunner().invoke(app, ["detect", "train-tagger", "--synthetic", str(syn), "--epochs", "1", "-o", str(tmp_path / "run")])
    assert res.exit_code == 0, res.output
    assert seen["config"].epochs == 1.0 and seen["config"].backbone == "backbone:all-minilm-l6-v2"
    seen.clear()
    res = CliRunner().invoke(app, ["detect", "train-tagger", "--synthetic", str(syn), "-o", str(tmp_path / "run2")])
    assert res.exit_code == 0 and seen["config"].epochs == TaggerTrainConfig().epochs == 2.0  # earlier recipes unchanged
    res = CliRunner().invoke(app, ["detect", "train-tagger", "--synthetic", str(syn), "--epochs", "0"])
    assert res.exit_code != 0 and "--epochs" in res.output


def test_a_pair_tagged_again_is_not_run_through_the_model_again(monkeypatch):
    """The pipeline and a benchmark's tagger-alone column tag the same pairs: the second call reuses the first's
    probabilities, runs only the new pairs, hands out copies, and forgets the oldest pairs past its budget."""
    pytest.importorskip("torch")
    import numpy as np

    import veridic.detect._tagger as tagger_mod
    from veridic.detect import EMBEDDED_TAGGER_NAME, SpanTagger

    tagger = SpanTagger(EMBEDDED_TAGGER_NAME)
    rows: list[int] = []
    forward = tagger.model.forward
    monkeypatch.setattr(tagger.model, "forward", lambda **kw: rows.append(kw["input_ids"].shape[0]) or forward(**kw))
    src = "Lionel Messi was born on 24 June 1987 in Rosario, Argentina."
    wrong, right = "Messi was born in Madrid.", "Messi was born in 1987."
    first = tagger.char_probabilities(sources=[src, src], claims=[wrong, right])
    assert rows == [2] and first[0].max() > first[1].max()
    again = tagger.char_probabilities(sources=[src, src, src], claims=[right, "Messi was born in Rome.", wrong])
    assert rows == [2, 1]  # only the new pair ran
    np.testing.assert_array_equal(again[0], first[1])
    np.testing.assert_array_equal(again[2], first[0])
    again[0][:] = 1.0  # the caller's copy, not the kept one
    np.testing.assert_array_equal(tagger.char_probabilities(sources=[src], claims=[right])[0], first[1])
    assert tagger.char_probabilities(sources=[src + " "], claims=[right]) and rows == [2, 1, 1]  # another source is another pair
    monkeypatch.setattr(tagger_mod, "MEMO_CHARS", len(wrong) + len(right))
    tagger.char_probabilities(sources=[src], claims=["Messi was born in Paris."])  # the oldest pairs go
    assert tagger._memo_chars <= len(wrong) + len(right)
    tagger.char_probabilities(sources=[src], claims=[wrong])
    assert rows == [2, 1, 1, 1, 1]
    tagger.forget()  # as a timing run needs: every pair runs again
    tagger.char_probabilities(sources=[src], claims=[wrong])
    assert rows == [2, 1, 1, 1, 1, 1]


def test_a_backbone_cut_to_its_first_layers_keeps_their_weights_and_refuses_more_than_it_has(tmp_path, tiny_nli_dir):
    import torch
    from transformers import AutoConfig, AutoModelForTokenClassification, AutoTokenizer

    from veridic.detect._tagger_train import TaggerTrainConfig, _backbone
    from veridic.errors import ConfigError
    from veridic.nli.packed import read_packed, write_packed

    full = AutoConfig.from_pretrained(tiny_nli_dir).num_hidden_layers
    assert full >= 2
    write_packed(model_dir=tiny_nli_dir, out_dir=tmp_path / "packed")
    encoder = read_packed(tmp_path / "packed")
    for ref in (str(tiny_nli_dir), str(tmp_path / "packed")):  # a model folder and a packed model alike
        _, model = _backbone(ref, AutoTokenizer, AutoModelForTokenClassification, num_layers=1)
        state = model.state_dict()
        assert model.config.num_hidden_layers == 1 and not any(".layer.1." in k for k in state)
        kept = [k for k in state if ".layer.0." in k and k in encoder]
        assert kept and all(torch.allclose(state[k], encoder[k].to(state[k].dtype), atol=1e-2) for k in kept)
        with pytest.raises(ConfigError, match=f"has {full} layers; {full + 1} were asked for"):
            _backbone(ref, AutoTokenizer, AutoModelForTokenClassification, num_layers=full + 1)
    with pytest.raises(ConfigError, match="num_layers must be a positive whole number"):
        TaggerTrainConfig(num_layers=0)


def test_a_wider_window_reads_source_a_narrow_one_cuts_and_a_window_the_encoder_cannot_hold_is_refused():
    """``max_length`` is the window the source is packed into: a supporting sentence that shares fewer of the claim's
    words than twenty others is cut at 256 tokens and read at 512, where the whole source fits."""
    pytest.importorskip("torch")
    from veridic.detect import EMBEDDED_TAGGER_NAME, SpanTagger

    narrow = SpanTagger(EMBEDDED_TAGGER_NAME)
    wide = SpanTagger(EMBEDDED_TAGGER_NAME, max_length=512)
    assert (narrow.max_length, wide.max_length) == (256, 512) and wide.describe()["max_length"] == 512
    filler = [f"Acme hired {n} engineers in Ohio in {1990 + n // 150}, its annual report on engineers says." for n in range(100, 3100, 150)]
    support = "Its only plant is in Dayton."
    source = " ".join(filler[:10] + [support] + filler[10:])
    claim = "Acme hired engineers in Ohio for its plant in Dayton."
    # the tokenizer lower-cases what it reads
    read = {t.max_length: t.tokenizer.decode(t.encode(claim, source)["input_ids"]) for t in (narrow, wide)}
    assert support.lower() not in read[256] and support.lower() in read[512]
    assert len(read[256]) < len(read[512])
    assert not narrow.sees_whole_source(source=source, claim=claim) and wide.sees_whole_source(source=source, claim=claim)
    assert [len(p) for p in narrow.char_probabilities(sources=[source], claims=[claim])] == [len(claim)]
    with pytest.raises(ConfigError, match="from 64 to 512"):
        SpanTagger(EMBEDDED_TAGGER_NAME, max_length=1024)

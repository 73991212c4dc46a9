"""A learned span tagger: which characters of a generated text the source does not support.

Token classification over (claim, source) pairs, the way LettuceDetect does it, on veridic's own backbones.
The claim goes first so it is never cut; a long source is packed: its sentences ranked by the content words
they share with the claim piece, the best kept in their original order until the model's window is full (the
rest is cut, and :meth:`SpanTagger.predict` reports how many source sentences each piece saw). A claim longer
than :data:`CLAIM_PIECE_TOKENS` tokens is tagged in pieces of whole sentences, each with its own packed source;
``"piece_sentences": N`` in ``tagger.json`` also ends a piece after N sentences, so that each sentence of a long
summary is tagged against the source sentences that concern it rather than a share of a window packed for all;
``"piece_context_sentences": C`` then shows the model the C sentences before each piece too (read, never marked, and
not used to pack the source), so that "He" in one sentence still has the name the sentence before gives it.
``"dtype"`` says how the model computes: ``float32`` (absent: how every tagger was first scored), ``bfloat16``, or
``auto`` (bf16 autocast where the CPU has native bf16 units or on a GPU, as the tagger was trained, else fp32).

A token's probability is that its text is unsupported; a span is a maximal run of words whose probability
reaches the threshold fitted on held-back training rows (stored beside the weights in ``tagger.json``).

>>> from veridic.detect._tagger import pack_source
>>> pack_source("Rain fell. Paris is in France. Cats purr.", "Paris is in Spain.", count_tokens=lambda t: len(t.split()), budget=6)
('Paris is in France.', 1)
"""

from __future__ import annotations

import bisect
import contextlib
import hashlib
import json
import re
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from veridic.errors import ConfigError, InputError, MissingDependencyError, ModelLoadError, did_you_mean

__all__ = ["CLAIM_PIECE_TOKENS", "EMBEDDED_TAGGER_NAME", "TAGGER_FILE", "SpanTagger", "embedded_taggers", "resolve_tagger_path", "TaggedSpan", "TaggerResult", "claim_pieces", "encode_pair", "pack_source", "spans_from_probs"]

TAGGER_FILE = "tagger.json"
#: the tagger shipped inside the package (``veridic/models/<name>``), selectable by this name
EMBEDDED_TAGGER_NAME = "veridic-tagger-mpnet-l6"
#: claim characters whose probabilities a SpanTagger keeps for pairs tagged again (float32: 16 MB)
MEMO_CHARS = 4_000_000
#: the values of ``dtype`` in ``tagger.json`` (or passed to :class:`SpanTagger`)
TAGGER_DTYPES = ("float32", "bfloat16", "auto")
#: the longest claim piece tagged at once; the rest of the window is the source's
CLAIM_PIECE_TOKENS = 128
_WORD = re.compile(r"\w+(?:[-'’.]\w+)*|[^\w\s]")


@dataclass(frozen=True)
class TaggedSpan:
    """``claim[start:end]``, judged unsupported with probability ``score`` (the mean over its tokens)."""

    start: int
    end: int
    text: str
    score: float
    type: str = "unsupported"


@dataclass(frozen=True)
class TaggerResult:
    """The tagger's spans of one passage, shaped as the detector's results where benchmarks read them."""

    spans: tuple[TaggedSpan, ...]


def pack_source(source: str, claim: str, *, count_tokens: Callable[[str], int], budget: int) -> tuple[str, int]:
    """The source sentences that share most content words with ``claim``, in source order, within ``budget`` tokens.

    Returns the packed text and how many sentences it keeps. The whole source when it fits.
    """
    from veridic.ling.lexical import content_words
    from veridic.text import split_sentences

    sents = [s.text for s in split_sentences(source)] or [source]
    if count_tokens(source) <= budget:
        return source, len(sents)
    cw = set(content_words(claim))
    ranked = sorted(range(len(sents)), key=lambda i: (-len(cw & set(content_words(sents[i]))), i))
    keep: list[int] = []
    used = 0
    for i in ranked:
        n = count_tokens(sents[i]) + 1
        if used + n > budget:
            continue
        keep.append(i)
        used += n
    if not keep:  # one sentence longer than the budget: its beginning
        return sents[ranked[0]], 1
    return " ".join(sents[i] for i in sorted(keep)), len(keep)


def _positive_int_or_none(value: object) -> bool:
    """Whether ``value`` may bound a count (a claim piece's sentences, an encoder's layers): None (no bound) or a
    positive int, never a bool."""
    return value is None or (isinstance(value, int) and not isinstance(value, bool) and value >= 1)


def claim_pieces(claim: str, *, count_tokens: Callable[[str], int], max_tokens: int = CLAIM_PIECE_TOKENS,
                 max_sentences: int | None = None) -> list[tuple[int, int]]:
    """Character ranges of consecutive claim sentences, each within ``max_tokens`` (a longer sentence alone) and, when
    given, at most ``max_sentences`` sentences.

    >>> claim_pieces("A b. C d. E f.", count_tokens=lambda t: len(t.split()), max_sentences=2)
    [(0, 9), (10, 14)]
    """
    from veridic.text import split_sentences

    if not _positive_int_or_none(max_sentences):
        raise ConfigError(f"max_sentences must be a positive whole number or None; got {max_sentences!r}.")
    sents = split_sentences(claim) or []
    if not sents:
        return [(0, len(claim))] if claim.strip() else []
    pieces: list[tuple[int, int]] = []
    start, end, used, count = sents[0].start, sents[0].end, count_tokens(sents[0].text), 1
    for s in sents[1:]:
        n = count_tokens(s.text)
        if used + n > max_tokens or (max_sentences is not None and count >= max_sentences):
            pieces.append((start, end))
            start, used, count = s.start, 0, 0
        end = s.end
        used += n
        count += 1
    pieces.append((start, end))
    return pieces


def spans_from_probs(text: str, char_probs: np.ndarray, *, threshold: float, breaks: Sequence[int] = ()) -> list[TaggedSpan]:
    """Maximal runs of words whose probability reaches ``threshold`` (a word's: the max over its characters);
    punctuation between two marked words joins them, a marked run never starts or ends on punctuation.

    ``breaks``: character offsets no run may cross (sentence starts), so that a span deleted with its sentence
    never takes a piece of the next one along.
    """
    words = [(m.start(), m.end()) for m in _WORD.finditer(text)]
    marked = [bool(char_probs[a:b].max() >= threshold) if b > a else False for a, b in words]
    cut = sorted(set(breaks))

    def joins(k: int) -> bool:  # may a run go on from word k to word k + 1?
        lo, hi = words[k][1], words[k + 1][0]
        at = bisect.bisect_left(cut, lo)
        return not (at < len(cut) and cut[at] <= hi)

    out: list[TaggedSpan] = []
    i = 0
    while i < len(words):
        if not marked[i] or not text[words[i][0]].isalnum():
            i += 1
            continue
        j = i
        while j + 1 < len(words) and joins(j) and (marked[j + 1] or (not text[words[j + 1][0]].isalnum() and j + 2 < len(words)
                                                                     and joins(j + 1) and marked[j + 2])):
            j += 1
        while j > i and not text[words[j][0]].isalnum():
            j -= 1
        a, b = words[i][0], words[j][1]
        out.append(TaggedSpan(a, b, text[a:b], float(char_probs[a:b].mean())))
        i = j + 1
    return out


def embedded_taggers() -> list[str]:
    """The names of the taggers this copy of veridic ships (``veridic/models/veridic-tagger-*`` with a ``tagger.json``).

    >>> EMBEDDED_TAGGER_NAME in embedded_taggers()
    True
    """
    from veridic.nli._models import embedded_model_path

    root = embedded_model_path(EMBEDDED_TAGGER_NAME).parent
    return sorted(p.name for p in root.glob("veridic-tagger-*") if (p / TAGGER_FILE).is_file()) if root.is_dir() else []


def resolve_tagger_path(tagger: str | Path) -> Path:
    """The folder of a tagger: a shipped one by name (``"embedded"`` is :data:`EMBEDDED_TAGGER_NAME`), else a path.

    A bare ``veridic-tagger-...`` name that this copy does not ship is refused with the names it does ship, rather
    than read as a relative folder that does not exist.

    >>> resolve_tagger_path("embedded").name
    'veridic-tagger-mpnet-l6'
    """
    from veridic.nli._models import embedded_model_path

    name = str(tagger)
    if name in ("embedded", EMBEDDED_TAGGER_NAME):
        return embedded_model_path(EMBEDDED_TAGGER_NAME)
    if name.startswith("veridic-tagger-") and "/" not in name and not Path(name).exists():
        path = embedded_model_path(name)
        if (path / TAGGER_FILE).is_file():
            return path
        shipped = embedded_taggers()
        raise ModelLoadError(f"{name!r} is not a span tagger shipped with this copy of veridic; it ships "
                             f"{', '.join(repr(n) for n in shipped) or 'none'}.{did_you_mean(name, shipped)} Pass one of "
                             "those, or the folder of a tagger written by `veridic detect train-tagger`.")
    return Path(tagger).expanduser()


class SpanTagger:
    """A trained tagger folder (weights, tokenizer, ``tagger.json``), run on the CPU with torch.

    ``model_dir`` is a folder written by ``veridic detect train-tagger`` or :data:`EMBEDDED_TAGGER_NAME`; its
    weights are a ``model.safetensors`` or int8 rows packed by :func:`veridic.nli.packed.write_packed` (the
    shipped tagger), unpacked to fp32 on load.

    ``predict(sources=, claims=)`` gives one list of :class:`TaggedSpan` per claim; ``char_probabilities`` the
    per-character probabilities behind them. ``threshold``, ``dtype`` and ``max_length`` (the window, in tokens, a claim
    piece and its packed source share) override ``tagger.json`` for this instance. Build one with :func:`veridic.detect._tagger_train.train_tagger`.
    """

    def __init__(self, model_dir: str | Path, *, threshold: float | None = None, batch_size: int = 16, device: str = "cpu",
                 dtype: str | None = None, max_length: int | None = None):
        try:
            import torch
            from transformers import AutoModelForTokenClassification, AutoTokenizer
        except ImportError as exc:
            raise MissingDependencyError(exc.name or "torch", extra="torch", purpose="the span tagger") from None
        from veridic.device import auto_dtype, check_device

        self.dir = resolve_tagger_path(model_dir)
        meta_file = self.dir / TAGGER_FILE
        if not meta_file.exists():
            if str(model_dir) in ("embedded", EMBEDDED_TAGGER_NAME):
                raise ModelLoadError(f"The embedded span tagger is missing: expected {meta_file}. Reinstall veridic from a full "
                                     "clone, or pass a folder written by `veridic detect train-tagger`.")
            raise ModelLoadError(f"{str(self.dir)!r} is not a span tagger: expected {TAGGER_FILE} beside its weights "
                                 "(written by `veridic detect train-tagger`).")
        self.meta = json.loads(meta_file.read_text(encoding="utf-8"))
        self.threshold = float(self.meta.get("threshold", 0.5) if threshold is None else threshold)
        if not 0.0 < self.threshold < 1.0:
            raise ConfigError(f"threshold must lie in (0, 1); got {self.threshold}.")
        self.max_length = int(self.meta.get("max_length", 256) if max_length is None else max_length)
        # absent in taggers written before the setting existed: pieces bounded by tokens alone, as they were scored
        self.piece_sentences = self.meta.get("piece_sentences")
        if not _positive_int_or_none(self.piece_sentences):
            raise ConfigError(f"{meta_file}: piece_sentences must be a positive whole number (or absent); got "
                              f"{self.piece_sentences!r}. Remove the key to tag pieces of up to {CLAIM_PIECE_TOKENS} tokens.")
        # absent: a piece is read alone, as taggers written before the setting were scored
        self.piece_context = self.meta.get("piece_context_sentences")
        if self.piece_context is not None and (not _positive_int_or_none(self.piece_context) or self.piece_sentences is None):
            raise ConfigError(f"{meta_file}: piece_context_sentences must be a positive whole number and needs piece_sentences; "
                              f"got {self.piece_context!r} with piece_sentences {self.piece_sentences!r}. Remove the key to read "
                              "each piece alone.")
        self.batch_size = batch_size
        self._torch = torch
        self.device = torch.device(check_device(device))
        wanted = self.meta.get("dtype", "float32") if dtype is None else dtype
        if wanted not in TAGGER_DTYPES:
            where = "dtype" if dtype is not None else f"{meta_file}: dtype"
            raise ConfigError(f"{where} must be one of {', '.join(TAGGER_DTYPES)}; got {wanted!r}.")
        if wanted == "auto":
            wanted = auto_dtype(self.device.type)
        self.dtype = wanted
        self.tokenizer = AutoTokenizer.from_pretrained(self.dir)
        self.model = _load_model(self.dir, AutoModelForTokenClassification).to(self.device).eval()
        _check_window(self.max_length, self.model.config, where="max_length" if max_length is not None else f"{meta_file}: max_length")
        self._count = token_counter(self.tokenizer)
        # The pipeline and a benchmark's tagger-alone column tag the same (source, claim) pairs; a base-size model
        # takes most of a second per sentence on two cores, so each pair's probabilities are kept for the next call.
        self._memo: OrderedDict[bytes, np.ndarray] = OrderedDict()
        self._memo_chars = 0
        self._memo_state: tuple[Any, ...] | None = None

    def count_tokens(self, text: str) -> int:
        return self._count(text)

    def pieces(self, claim: str) -> list[tuple[int, int]]:
        """The character ranges of ``claim`` tagged one at a time, each against its own packed source."""
        return claim_pieces(claim, count_tokens=self.count_tokens, max_sentences=self.piece_sentences)

    def windows(self, claim: str) -> list[tuple[int, int, int]]:
        """``(read_from, start, end)`` for each piece: the model reads ``claim[read_from:end]`` and marks only
        ``claim[start:end]``; ``read_from < start`` where ``piece_context_sentences`` shows sentences before it.

        The context never pushes the text read past :data:`CLAIM_PIECE_TOKENS` (fewer sentences, or none, are shown).
        """
        pieces = self.pieces(claim)
        if not self.piece_context:
            return [(a, a, b) for a, b in pieces]
        from veridic.text import split_sentences

        starts = [s.start for s in split_sentences(claim) or []]
        out = []
        for a, b in pieces:
            before = [x for x in starts if x < a][-self.piece_context:]
            read_from = next((x for x in before if self.count_tokens(claim[x:b]) <= CLAIM_PIECE_TOKENS), a)
            out.append((read_from, a, b))
        return out

    def sees_whole_source(self, *, source: str, claim: str) -> bool:
        """Whether every piece of ``claim`` is tagged against the whole ``source`` (nothing cut by packing)."""
        n = self.count_tokens(source)
        return all(n <= _source_budget(self.count_tokens(claim[c:b]), self.max_length)
                   for c, _, b in self.windows(claim))

    def encode(self, claim_piece: str, source: str, *, rank_by: str | None = None) -> Any:
        """The model input of one claim piece against its packed source (claim first, never truncated); the source
        is packed by the words of ``rank_by`` (the marked part of a piece read with context), else of the piece."""
        return encode_pair(self.tokenizer, claim_piece, source, max_length=self.max_length, count_tokens=self.count_tokens,
                           rank_by=rank_by)

    def char_probabilities(self, *, sources: Sequence[str], claims: Sequence[str]) -> list[np.ndarray]:
        """For each claim, the probability that each character is unsupported (0 for whitespace).

        The probabilities of the pairs last tagged (up to :data:`MEMO_CHARS` claim characters) are kept: a pair tagged again is not run through the
        model again (its figures are those of its first run; a batch's padding moves them by float rounding at most).
        """
        if isinstance(sources, str) or isinstance(claims, str) or len(sources) != len(claims):
            raise InputError("sources and claims must be lists of strings of the same length (one source per claim).")
        keys: list[bytes] = []
        for k, (src, clm) in enumerate(zip(sources, claims)):
            if not isinstance(src, str) or not isinstance(clm, str):
                raise InputError(f"Pair {k}: source and claim must be strings; got {type(src).__name__} and {type(clm).__name__}.")
            keys.append(_pair_key(src, clm))
        # What the kept probabilities were computed with: another model or window setting makes them stale.
        state = (self.model, self.tokenizer, self.max_length, self.piece_sentences, self.piece_context, self.dtype)
        old = self._memo_state
        if old is None or any(a is not b for a, b in zip(state[:2], old[:2])) or state[2:] != old[2:]:
            self._memo.clear()
            self._memo_chars, self._memo_state = 0, state
        out = [np.zeros(len(c), dtype=np.float32) for c in claims]
        todo = [k for k, key in enumerate(keys) if key not in self._memo]
        for k, key in enumerate(keys):
            if key in self._memo:
                self._memo.move_to_end(key)
                out[k] = self._memo[key].copy()
        jobs: list[tuple[int, int, int, dict[str, Any]]] = []
        for k in todo:
            src, clm = sources[k], claims[k]
            for c, a, b in self.windows(clm):
                jobs.append((k, c, a, self.encode(clm[c:b], src, rank_by=clm[a:b] if c < a else None)))
        torch = self._torch
        # Batches of like lengths pad less; padding moves a token's probability by float rounding only.
        jobs.sort(key=lambda j: len(j[3]["input_ids"]))
        cast = (torch.autocast(device_type=self.device.type, dtype=torch.bfloat16) if self.dtype == "bfloat16"
                else contextlib.nullcontext())
        for i in range(0, len(jobs), self.batch_size):
            part = jobs[i:i + self.batch_size]
            feats = [{k: v for k, v in j[3].items() if k in ("input_ids", "attention_mask", "token_type_ids")} for j in part]
            batch = self.tokenizer.pad(feats, return_tensors="pt").to(self.device)
            with torch.inference_mode(), cast:
                probs = torch.softmax(self.model(**batch).logits.float(), dim=-1)[..., 1].cpu().numpy()
            for (k, offset, start, enc), p in zip(part, probs):
                for t, (sid, (a, b)) in enumerate(zip(enc.sequence_ids(), enc["offset_mapping"])):
                    if sid == 0 and b > a and offset + a >= start:  # context before the piece is read, not marked
                        out[k][offset + a: offset + b] = np.maximum(out[k][offset + a: offset + b], p[t])
        for k in todo:
            if keys[k] not in self._memo and len(out[k]) <= MEMO_CHARS:
                self._memo[keys[k]] = out[k].copy()
                self._memo_chars += len(out[k])
            while self._memo_chars > MEMO_CHARS:
                self._memo_chars -= len(self._memo.popitem(last=False)[1])
        return out

    def forget(self) -> None:
        """Drop the kept probabilities, so the next call runs every pair through the model (e.g. to time it)."""
        self._memo.clear()
        self._memo_chars = 0

    def predict(self, *, sources: Sequence[str], claims: Sequence[str]) -> list[list[TaggedSpan]]:
        """The unsupported spans of each claim (character offsets into the claim)."""
        probs = self.char_probabilities(sources=sources, claims=claims)
        return [spans_from_probs(c, p, threshold=self.threshold) for c, p in zip(claims, probs)]

    def detect_many(self, *, passages: Sequence[str], evidences: Sequence[str], progress: bool = False) -> list[TaggerResult]:
        """The detector's batch interface (``detect_many(passages=, evidences=)``), so span benchmarks run either."""
        return [TaggerResult(tuple(s)) for s in self.predict(sources=list(evidences), claims=list(passages))]

    def describe(self) -> dict[str, Any]:
        return {"tagger": str(self.dir), "threshold": self.threshold,
                **{k: v for k, v in self.meta.items() if k not in ("threshold", "dtype", "max_length")},
                "max_length": self.max_length, "dtype": self.dtype}


def _pair_key(source: str, claim: str) -> bytes:
    """A short key of a (source, claim) pair, so the memo holds no 2 MB source."""
    h = hashlib.blake2b(digest_size=16)
    h.update(len(source).to_bytes(8, "little"))
    h.update(source.encode("utf-8", "surrogatepass"))
    h.update(claim.encode("utf-8", "surrogatepass"))
    return h.digest()


def _load_model(folder: Path, auto_cls: Any) -> Any:
    from veridic.nli.packed import is_packed, load_packed_model

    return load_packed_model(folder, auto_cls=auto_cls) if is_packed(folder) else auto_cls.from_pretrained(folder)


def token_counter(tokenizer: Any) -> Callable[[str], int]:
    """Tokens of a text without special tokens (long texts are only counted, so the length warning stays quiet)."""
    return lambda text: len(tokenizer(text, add_special_tokens=False, verbose=False)["input_ids"])


def _check_window(max_length: int, config: Any, *, where: str) -> None:
    """Refuse a window the encoder cannot read: fewer tokens than a piece needs, or more positions than it holds."""
    # RoBERTa-style encoders (MPNet) spend two positions before the first token; BERT-style ones (MiniLM) none.
    positions = int(getattr(config, "max_position_embeddings", 512))
    offset = 2 if getattr(config, "model_type", "") in ("mpnet", "roberta", "xlm-roberta") else 0
    most = positions - offset
    if not 64 <= max_length <= most:
        raise ConfigError(f"{where} must be a whole number of tokens from 64 to {most} (what this encoder's "
                          f"{positions} positions hold); got {max_length}. 256 is the window the shipped taggers were trained at.")


def _source_budget(piece_tokens: int, max_length: int) -> int:
    """Tokens left for the source beside a claim piece of ``piece_tokens`` (three special tokens)."""
    return max(16, max_length - min(piece_tokens, CLAIM_PIECE_TOKENS * 2) - 3)


def encode_pair(tokenizer: Any, claim_piece: str, source: str, *, max_length: int, count_tokens: Callable[[str], int],
                rank_by: str | None = None) -> Any:
    """``tokenizer(claim_piece, packed source)`` with offsets: the claim first and never truncated, the source packed
    (:func:`pack_source`, ranked by the words of ``rank_by`` or else of the piece) into what is left of
    ``max_length``. Training and inference encode through here."""
    packed, _ = pack_source(source, claim_piece if rank_by is None else rank_by, count_tokens=count_tokens,
                            budget=_source_budget(count_tokens(claim_piece), max_length))
    # A single claim sentence longer than the window (rare) is cut too, rather than failing the batch.
    mode = "only_second" if count_tokens(claim_piece) < max_length - 19 else "longest_first"
    return tokenizer(claim_piece, packed, truncation=mode, max_length=max_length, return_offsets_mapping=True)

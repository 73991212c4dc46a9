"""veridic: check generated text against its sources and say what kind of error it is.

>>> import veridic
>>> v = veridic.score(sources=["The company hired 200 engineers in 2023."],
...                   claims=["The company laid off engineers in 2023."])[0]
>>> v.label, round(v.score, 2) < 0.5   # the default method's score is P(faithful)
('unsupported', True)
"""

from __future__ import annotations

from veridic.api import score
from veridic.config import ScorerConfig
from veridic.errors import (
    ConfigError,
    DataFormatError,
    InputError,
    MissingDependencyError,
    ModelLoadError,
    RegistryError,
    VeridicError,
)
from veridic.factory import Resources, build_scorer, load_scorer
from veridic.types import Pair, Scorer, SentenceVerdict, Span, Verdict
from veridic.version import __version__


def __getattr__(name: str):
    # score_frame lives with the integrations and is imported on first use (it imports no framework).
    if name == "load_detector":  # the detector needs spaCy: imported on first use
        from veridic.detect._load import load_detector

        return load_detector
    if name == "score_frame":
        from veridic.integrations._frames import score_frame

        return score_frame
    raise AttributeError(f"module 'veridic' has no attribute {name!r}")


__all__ = [
    "__version__",
    "score", "score_frame", "build_scorer", "load_scorer", "load_detector",
    "ScorerConfig", "Scorer", "Resources",
    "Pair", "Span", "SentenceVerdict", "Verdict",
    "VeridicError", "InputError", "DataFormatError", "ConfigError", "ModelLoadError", "MissingDependencyError", "RegistryError",
]

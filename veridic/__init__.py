"""veridic: check generated text against its sources and say what kind of error it is.

>>> import veridic
>>> v = veridic.score(sources=["The company hired 200 engineers in 2023."],
...                   claims=["The company laid off engineers in 2023."])[0]
>>> v.label, round(v.score, 2) < 0.5   # the default method's score is P(faithful)
('unsupported', True)
"""

from __future__ import annotations

from veridic.api import score
from veridic.errors import (
    ConfigError,
    DataFormatError,
    InputError,
    MissingDependencyError,
    ModelLoadError,
    RegistryError,
    VeridicError,
)
from veridic.types import Pair, SentenceVerdict, Span, Verdict

from importlib.metadata import PackageNotFoundError as _NotInstalled, version as _dist_version

try:
    __version__ = _dist_version("veridic")  # the one version source: pyproject.toml's [project] version
except _NotInstalled:  # a source tree that was never installed
    __version__ = "0+unknown"


def __getattr__(name: str):
    # score_frame lives with the integrations and is imported on first use (it imports no framework).
    if name == "score_frame":
        from veridic.integrations.frames import score_frame

        return score_frame
    raise AttributeError(f"module 'veridic' has no attribute {name!r}")


__all__ = [
    "__version__",
    "score",
    "score_frame",
    "Pair",
    "Span",
    "SentenceVerdict",
    "Verdict",
    "VeridicError",
    "InputError",
    "DataFormatError",
    "ConfigError",
    "ModelLoadError",
    "MissingDependencyError",
    "RegistryError",
]

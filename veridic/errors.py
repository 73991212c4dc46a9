"""The one exception hierarchy of veridic.

Every error veridic raises on purpose derives from :class:`VeridicError`, so
callers can catch the whole family with one ``except``::

    VeridicError
    ├── InputError            bad user input (empty text, NaN, wrong type)
    │   └── DataFormatError   a file row is malformed (carries path and row)
    ├── ConfigError           an option value is unknown or inconsistent
    ├── ModelLoadError        a model could not be found or loaded
    ├── MissingDependencyError an optional extra is not installed
    └── RegistryError         an unknown name was looked up in a registry

Messages say what was expected, what arrived, and what to do about it.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

__all__ = [
    "VeridicError",
    "InputError",
    "DataFormatError",
    "ConfigError",
    "ModelLoadError",
    "MissingDependencyError",
    "RegistryError",
    "did_you_mean",
]


class VeridicError(Exception):
    """Base class of every error veridic raises on purpose."""


class InputError(VeridicError, ValueError):
    """A value passed by the user is unusable (empty, NaN, wrong type...)."""


class DataFormatError(InputError):
    """A row of an input file is malformed.

    ``path`` and ``row`` (1-based line or record number) locate the problem.
    """

    def __init__(self, message: str, *, path: str | None = None, row: int | None = None):
        self.path = path
        self.row = row
        where = ""
        if path is not None and row is not None:
            where = f"{path}, row {row}: "
        elif path is not None:
            where = f"{path}: "
        elif row is not None:
            where = f"row {row}: "
        super().__init__(where + message)


class ConfigError(VeridicError, ValueError):
    """An option has an unknown or inconsistent value."""


class ModelLoadError(VeridicError, OSError):
    """A model could not be located or loaded."""


class MissingDependencyError(VeridicError, ImportError):
    """An optional dependency is missing; the message names the extra to install."""

    def __init__(self, package: str, *, extra: str, purpose: str):
        self.package = package
        self.extra = extra
        super().__init__(
            f"{purpose} needs the optional package {package!r}, which is not installed. "
            f"Install it with: pip install 'veridic[{extra}]'"
        )


class RegistryError(VeridicError, KeyError):
    """An unknown name was looked up in a registry."""

    def __str__(self) -> str:  # KeyError would repr() the message
        return str(self.args[0]) if self.args else ""


def did_you_mean(name: str, options: Iterable[str]) -> str:
    """Return a ' Did you mean ...?' hint (or '') for an unknown ``name``."""
    close = difflib.get_close_matches(name, list(options), n=3, cutoff=0.5)
    if not close:
        return ""
    return " Did you mean " + " or ".join(repr(c) for c in close) + "?"

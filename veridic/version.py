"""The one version source: the installed distribution's (pyproject.toml's ``[project] version``).

>>> __version__ != ""
True
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

__all__ = ["__version__"]

try:
    __version__ = version("veridic")
except PackageNotFoundError:  # a source tree that was never installed
    __version__ = "0+unknown"

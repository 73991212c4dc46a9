"""One on-disk key-value store for every model cache (NLI predictions, language-model results), on ``diskcache``.

diskcache gives what a cache shared by runs needs and hand-written SQLite did only in part: writes are
transactions (a stopped run keeps what it committed), concurrent processes may share a folder, and values are
any picklable object. No eviction: a cache of model outputs is cleared by deleting its folder.

>>> import tempfile
>>> store = DiskStore(tempfile.mkdtemp())
>>> store.put_many([("a", [1, 2]), ("b", {"x": 1})])
>>> store.get_many(["a", "b", "c"])
{'a': [1, 2], 'b': {'x': 1}}
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from veridic.errors import ConfigError, MissingDependencyError

__all__ = ["DiskStore"]


class DiskStore:
    """A folder of key → value pairs (``diskcache.Cache``, eviction off). Keys are strings."""

    def __init__(self, directory: str | Path):
        try:
            import diskcache
        except ImportError:
            raise MissingDependencyError("diskcache", extra="bench", purpose="on-disk model caches") from None
        self.directory = Path(directory).expanduser()
        if self.directory.exists() and not self.directory.is_dir():
            raise ConfigError(f"The cache path {str(self.directory)!r} is a file; a model cache is a folder (diskcache). "
                              "Delete the file (an older SQLite cache) or point the cache elsewhere.")
        self._cache = diskcache.Cache(str(self.directory), eviction_policy="none", size_limit=2**62)

    def get_many(self, keys: Sequence[str]) -> dict[str, Any]:
        """The stored values of ``keys`` that are present."""
        out: dict[str, Any] = {}
        for k in keys:
            v = self._cache.get(k, default=_MISSING)
            if v is not _MISSING:
                out[k] = v
        return out

    def put_many(self, items: Iterable[tuple[str, Any]]) -> None:
        """Store ``items`` in one transaction: all of them are committed, or none."""
        with self._cache.transact():
            for k, v in items:
                self._cache.set(k, v)

    def __len__(self) -> int:
        return len(self._cache)

    def close(self) -> None:
        self._cache.close()


_MISSING = object()

"""A write-once cache of per-example scores, so reports never re-run models.

The key is the sha256 of (the scorer's ``describe()`` dict, the veridic
version, the dataset's ``data_hash``): a new model revision, method, MC
setting, veridic release or edited row gives a new key. One JSON file per key
holds ``id -> {score, e, n, c, uncertainty}`` plus the measured seconds per
example, so cost tables stay honest on cache hits.

>>> import tempfile
>>> cache = ScoreCache(directory=tempfile.mkdtemp())
>>> key = cache_key(describe={"method": "overlap"}, veridic_version="0", data_hash="abc")
>>> _ = cache.put(key=key, entry=CacheEntry(scores={"a": {"score": 0.5}}, seconds_per_example=0.1, meta={}))
>>> cache.get(key=key).scores["a"]["score"]
0.5
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["CacheEntry", "ScoreCache", "cache_key", "default_cache_dir", "nli_cache_path", "veridic_version"]


def veridic_version() -> str:
    """``veridic.__version__`` (:mod:`veridic.version`)."""
    from veridic.version import __version__

    return __version__


def default_cache_dir() -> Path:
    """``$VERIDIC_CACHE`` if set, else ``~/.cache/veridic/scores``."""
    env = os.environ.get("VERIDIC_CACHE")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "veridic" / "scores"


def nli_cache_path(*, score_dir: Path) -> Path:
    """The NLI prediction cache (SQLite) of a score-cache folder, shared by every run that uses it.

    A chosen folder (``--cache-dir X``) holds it inside (``X/nli-predictions``): nothing is written
    beside X. The default folder keeps it in ``~/.cache/veridic``, veridic's own cache folder, where earlier
    runs left it.
    """
    score_dir = Path(score_dir)
    if score_dir.expanduser() == default_cache_dir():
        return score_dir.expanduser().parent / "nli-predictions"
    return score_dir / "nli-predictions"


def cache_key(*, describe: dict[str, Any], veridic_version: str, data_hash: str) -> str:
    """sha256 over a canonical JSON of the three parts of the key."""
    blob = json.dumps({"describe": describe, "veridic_version": veridic_version, "data_hash": data_hash}, sort_keys=True, default=str)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def _clean(value: Any) -> Any:
    # JSON has no NaN; model-free scorers report e/n/c as NaN, which becomes null.
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


@dataclass(slots=True)
class CacheEntry:
    """Cached scores of one scorer on one dataset."""

    scores: dict[str, dict[str, float | None]]
    seconds_per_example: float | None
    meta: dict[str, Any] = field(default_factory=dict)


class ScoreCache:
    """Per-example score files under ``directory`` (``<key[:2]>/<key>.json``)."""

    def __init__(self, *, directory: str | Path) -> None:
        self.directory = Path(directory).expanduser()

    def _path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.json"

    def get(self, *, key: str) -> CacheEntry | None:
        """The entry for ``key``, or None if absent or unreadable (then it is recomputed)."""
        path = self._path(key)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            return CacheEntry(scores=data["scores"], seconds_per_example=data.get("seconds_per_example"), meta=data.get("meta", {}))
        except FileNotFoundError:
            return None
        except (OSError, ValueError, KeyError, TypeError):
            # A truncated file from an interrupted run: treat as a miss and overwrite.
            return None

    def put(self, *, key: str, entry: CacheEntry) -> Path:
        """Write atomically (temp file + rename) so readers never see half a file."""
        path = self._path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        payload = {
            "key": key,
            "meta": entry.meta,
            "seconds_per_example": entry.seconds_per_example,
            "scores": {i: {k: _clean(v) for k, v in rec.items()} for i, rec in entry.scores.items()},
        }
        fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(payload, fh, ensure_ascii=False)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return path

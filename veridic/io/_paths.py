"""Where veridic looks for the annotated data it is evaluated and trained on.

>>> import os
>>> os.environ["VERIDIC_DATA"] = "/data/veridic"
>>> str(default_data_dir()), str(default_data_dir("bench"))
('/data/veridic', '/data/veridic/bench')
>>> del os.environ["VERIDIC_DATA"]
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["default_data_dir", "model_cache_dir"]


def default_data_dir(*parts: str) -> Path:
    """``$VERIDIC_DATA`` if set, else ``../shared/data`` beside the repository root; ``parts`` are joined on."""
    env = os.environ.get("VERIDIC_DATA")
    base = Path(env).expanduser() if env else Path(__file__).resolve().parents[3] / "shared" / "data"
    return base.joinpath(*parts)


def model_cache_dir(*parts: str) -> Path:
    """``$VERIDIC_MODEL_CACHE`` if set, else ``~/.cache/veridic/models``: files veridic derives from a shipped
    model once (the ONNX int8 copy of a packed model) and reuses; ``parts`` are joined on."""
    env = os.environ.get("VERIDIC_MODEL_CACHE")
    base = Path(env).expanduser() if env else Path.home() / ".cache" / "veridic" / "models"
    return base.joinpath(*parts)

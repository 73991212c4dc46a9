"""NLI faithfulness scoring: backends (PyTorch, ONNX Runtime) and the scorer."""

from veridic.aggregate import CLAIM_AGGREGATIONS, SOURCE_AGGREGATIONS
from veridic.nli._backend import (
    EMBEDDED_MODEL_NAME,
    KNOWN_CHECKPOINTS,
    CachedBackend,
    NLIBackend,
    OnnxNLIBackend,
    TorchNLIBackend,
    embedded_model_path,
    export_onnx,
    load_backend,
    resolve_model_path,
)
from veridic.nli._labels import LabelMap
from veridic.nli._models import ACCURATE_MODEL_NAME
from veridic.nli._scorer import NLIScorer

__all__ = [
    "NLIBackend", "TorchNLIBackend", "OnnxNLIBackend", "CachedBackend", "load_backend",
    "resolve_model_path", "embedded_model_path", "export_onnx", "EMBEDDED_MODEL_NAME", "ACCURATE_MODEL_NAME",
    "KNOWN_CHECKPOINTS",
    "LabelMap", "NLIScorer", "SOURCE_AGGREGATIONS", "CLAIM_AGGREGATIONS",
]

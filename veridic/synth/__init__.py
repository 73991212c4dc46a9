"""Rule-based synthetic faithfulness pairs (entailed / contradicted / unsupported).

See :mod:`veridic.synth._perturb` for the kinds and :mod:`veridic.synth._sources`
for the document loaders used by the training pipeline.
"""

from veridic.synth._perturb import (
    ANTONYMS,
    KIND_LABELS,
    KINDS,
    NEG_CONTRACTIONS,
    Document,
    SyntheticGenerator,
    SyntheticPair,
    compress_sentence,
)

__all__ = ["ANTONYMS", "NEG_CONTRACTIONS", "KIND_LABELS", "KINDS", "Document", "SyntheticGenerator", "SyntheticPair", "compress_sentence"]

"""Read an NLI model's label names from its config and map them to (e, n, c).

>>> lm = LabelMap.from_id2label({0: "ENTAILMENT", 1: "NEUTRAL", 2: "CONTRADICTION"})
>>> (lm.entailment, lm.neutral, lm.contradiction, lm.two_way)
(0, 1, 2, False)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from veridic.errors import ConfigError

__all__ = ["LabelMap"]

_ENTAIL = {"entailment", "entails", "entailed", "entail", "supported", "supports", "consistent", "faithful"}
_NEUTRAL = {"neutral", "not_entailment", "non_entailment", "not-entailment", "non-entailment", "notentailment", "not_entailed", "nei", "not_enough_info"}
_CONTRA = {"contradiction", "contradicts", "contradicted", "contradictory", "refuted", "refutes", "inconsistent"}
_TWO_WAY_NEG = {"not_entailment", "non_entailment", "not-entailment", "non-entailment", "notentailment", "not_entailed", "unsupported", "hallucinated", "unfaithful"}


def _norm(name: str) -> str:
    return str(name).strip().lower().replace(" ", "_")


@dataclass(frozen=True, slots=True)
class LabelMap:
    """Column indices of the entailment / neutral / contradiction logits.

    For a 2-way model (entailment vs not-entailment) ``neutral`` is the
    not-entailment column and ``contradiction`` is None: its mass is neither
    neutral nor contradiction, and veridic reports it as ``n`` with ``c = 0``.
    """

    entailment: int
    neutral: int | None
    contradiction: int | None
    num_labels: int
    names: tuple[str, ...]

    @property
    def two_way(self) -> bool:
        return self.contradiction is None

    @classmethod
    def from_id2label(cls, id2label: Mapping[int | str, str]) -> LabelMap:
        names = {int(k): _norm(v) for k, v in id2label.items()}
        ordered = tuple(names[i] for i in sorted(names))
        found: dict[str, int] = {}
        for idx, name in names.items():
            if name in _ENTAIL:
                key = "e"
            elif name in _CONTRA:
                key = "c"
            elif name in _NEUTRAL or name in _TWO_WAY_NEG:
                key = "n"
            else:
                continue
            if key in found:
                raise ConfigError(f"The model config names two columns as the same NLI class: {ordered}. Pass label_map= explicitly.")
            found[key] = idx
        if "e" not in found or ("n" not in found and "c" not in found):
            raise ConfigError(
                f"Could not read NLI label names from the model config: id2label = {dict(sorted((int(k), v) for k, v in id2label.items()))}. "
                "Expected names such as 'entailment', 'neutral', 'contradiction' (or 'not_entailment' for 2-way models). "
                "Fix the config's id2label or pass label_map={'entailment': i, 'neutral': j, 'contradiction': k}."
            )
        if len(names) == 2 and "c" in found and "n" not in found:
            # entailment vs contradiction only: treat as a 3-way map without neutral.
            return cls(entailment=found["e"], neutral=None, contradiction=found["c"], num_labels=2, names=ordered)
        if len(names) == 2:
            return cls(entailment=found["e"], neutral=found["n"], contradiction=None, num_labels=2, names=ordered)
        return cls(entailment=found["e"], neutral=found.get("n"), contradiction=found.get("c"), num_labels=len(names), names=ordered)

    @classmethod
    def from_mapping(cls, mapping: Mapping[str, int], *, num_labels: int) -> LabelMap:
        """Build from an explicit ``{'entailment': i, 'neutral': j, 'contradiction': k}``."""
        bad = set(mapping) - {"entailment", "neutral", "contradiction"}
        if bad or "entailment" not in mapping:
            raise ConfigError(f"label_map needs keys among entailment/neutral/contradiction (entailment required); got {sorted(mapping)}.")
        for k, v in mapping.items():
            if not 0 <= int(v) < num_labels:
                raise ConfigError(f"label_map[{k!r}] = {v} is outside the model's {num_labels} output columns.")
        names = ["?"] * num_labels
        for k, v in mapping.items():
            names[int(v)] = k
        return cls(
            entailment=int(mapping["entailment"]),
            neutral=None if "neutral" not in mapping else int(mapping["neutral"]),
            contradiction=None if "contradiction" not in mapping else int(mapping["contradiction"]),
            num_labels=num_labels,
            names=tuple(names),
        )

    def to_enc(self, probs: np.ndarray) -> np.ndarray:
        """Reorder softmax probabilities ``[..., num_labels]`` into ``[..., 3]`` as (e, n, c)."""
        out = np.zeros(probs.shape[:-1] + (3,), dtype=np.float64)
        out[..., 0] = probs[..., self.entailment]
        if self.neutral is not None:
            out[..., 1] = probs[..., self.neutral]
        if self.contradiction is not None:
            out[..., 2] = probs[..., self.contradiction]
        # Columns not named e/n/c (rare) count as neutral so rows still sum to 1.
        rest = 1.0 - out.sum(axis=-1)
        out[..., 1] += np.clip(rest, 0.0, None)
        return out

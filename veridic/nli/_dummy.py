"""A dummy NLI backend: exact, explainable NLI outputs without a model, for tests and examples.

Registered as backend kind ``dummy``: ``load_backend(kind="dummy")``,
``veridic score --backend dummy ...``. Its numbers mean nothing about
faithfulness; they only make scorer behaviour checkable.
"""

from __future__ import annotations

__all__ = ["DummyNLIBackend", "ENTAIL", "NEUTRAL", "CONTRA", "load_dummy"]

import re
import zlib

import numpy as np

from veridic.nli._labels import LabelMap

ENTAIL, NEUTRAL, CONTRA = [0.9, 0.08, 0.02], [0.1, 0.8, 0.1], [0.04, 0.08, 0.88]


class DummyNLIBackend:
    """Word-overlap NLI with an optional script, deterministic and transparent.

    ``script`` maps a substring of the hypothesis to fixed (e, n, c) probabilities; the first key found
    wins. Otherwise entailment is 0.9 × the share of hypothesis words found in the premise, and a
    hypothesis containing "never" gets contradiction 0.5 × (1 − share). MC samples add noise seeded
    per pair to e (and its negative to n), so aggregation over samples can be checked exactly.

    >>> b = DummyNLIBackend({"Paris": CONTRA})
    >>> b.predict(["Cats sat."], ["Cats sat."]).round(2).tolist()
    [[0.9, 0.1, 0.0]]
    >>> b.predict(["x"], ["Paris is big."]).tolist()
    [[0.04, 0.08, 0.88]]
    """

    model_id = "dummy-words"
    revision = None
    supports_mc = True
    label_map = LabelMap.from_id2label({0: "entailment", 1: "neutral", 2: "contradiction"})

    @property
    def default_hybrid_weights(self) -> str:
        """The embedded model's hybrid weights, so method ``hybrid`` runs end to end on the dummy (its numbers mean nothing)."""
        from veridic.nli._models import embedded_model_path

        return str(embedded_model_path() / "hybrid.json")

    def __init__(self, script: dict[str, list[float]] | None = None, *, max_length: int = 64, **_ignored: object):
        # load_backend passes loading options (batch_size, device, dtype) that a dummy has no use for.
        self.script = dict(script or {})
        self.max_length = max_length
        self.calls: list[tuple[list[str], list[str], int]] = []

    @staticmethod
    def _words(t: str) -> list[str]:
        return re.findall(r"\w+", t.lower())

    def token_offsets(self, text: str) -> list[tuple[int, int]]:
        return [(m.start(), m.end()) for m in re.finditer(r"\w+|[^\w\s]", text)]

    def count_tokens(self, text: str) -> int:
        return len(self.token_offsets(text))

    def describe(self) -> dict:
        return {"backend": "dummy", "model": self.model_id, "revision": None, "parameters": 0}

    def predict(self, premises, hypotheses, *, mc_samples=0, seed=0, progress=False):
        self.calls.append((list(premises), list(hypotheses), mc_samples))
        out = []
        for p, h in zip(premises, hypotheses):
            scripted = next((v for k, v in self.script.items() if k in h), None)
            if scripted is not None:
                out.append(list(scripted))
                continue
            pw, hw = set(self._words(p)), self._words(h)
            e = sum(w in pw for w in hw) / max(1, len(hw))
            c = 0.5 * (1 - e) if "never" in hw else 0.0
            out.append([e * 0.9, 1 - e * 0.9 - c, c])
        arr = np.array(out, dtype=float).reshape(len(out), 3)
        if mc_samples:
            # Seeded per pair, as the real backends are, so results do not depend on batching.
            noise = np.stack([np.random.default_rng([seed, zlib.crc32(f"{p}\x00{h}".encode())]).normal(0, 0.01, size=(mc_samples, 1))
                              for p, h in zip(premises, hypotheses)]).reshape(len(out), mc_samples, 1)
            arr = np.clip(arr[:, None, :] + np.concatenate([noise, -noise, 0 * noise], axis=-1), 0, 1)
        return arr


def load_dummy(model: object = None, **kwargs: object) -> DummyNLIBackend:
    """The dummy as a registered backend (``load_backend(kind="dummy")``): it has no model to load."""
    from veridic.errors import ConfigError

    if model is not None:
        raise ConfigError(f"The dummy backend has no model; got model={str(model)!r}. Drop --model, or use --backend torch.")
    return DummyNLIBackend(**kwargs)  # type: ignore[arg-type]

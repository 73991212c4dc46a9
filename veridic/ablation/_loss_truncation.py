"""Loss truncation for training grounded causal LMs (paper 001, §3.3.1; Kang & Hashimoto 2020).

*Basic*: train only on the ``keep`` fraction of examples with the lowest
loss; the cut-off is the ``keep`` quantile of a running window of recent
per-example losses (the paper: keep = 0.8 over the last 10,000 examples).
*Grounded*: additionally drop the ``1 − keep_grounded`` fraction whose
grounding helps least, by ``gain = log P(y | c, g) − log P(y | c)``
(eq. 3), with log P(y | c) from a model trained without grounding.

Until the window holds ``min_history`` values nothing is dropped: a
quantile of a handful of losses is noise.

>>> import torch
>>> lt = LossTruncator(keep=0.5, window=100, min_history=4)
>>> lt.keep_mask(torch.tensor([1.0, 2.0, 3.0, 4.0])).tolist()   # warm-up: keep all, remember the losses
[True, True, True, True]
>>> lt.keep_mask(torch.tensor([1.0, 9.0])).tolist()             # 9.0 is above the running median
[True, False]
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from veridic.errors import ConfigError, InputError

__all__ = ["GroundedLossTruncator", "LossTruncator", "RunningLossHistogram", "TruncationStats", "sequence_losses", "truncated_mean"]


class RunningLossHistogram:
    """The last ``window`` values seen; ``quantile(q)`` of them.

    Kept exactly (a ring buffer) rather than binned: 10,000 floats cost
    80 kB and an exact quantile is as cheap as a binned one at that size.
    """

    def __init__(self, *, window: int = 10_000):
        if window < 1:
            raise ConfigError(f"window must be >= 1; got {window}.")
        self.window = window
        self._values: deque[float] = deque(maxlen=window)

    def __len__(self) -> int:
        return len(self._values)

    def update(self, values: Iterable[float]) -> None:
        for v in values:
            v = float(v)
            if not np.isfinite(v):
                raise InputError(f"Loss values must be finite; got {v}. A NaN loss usually means a diverged model or an empty target.")
            self._values.append(v)

    def quantile(self, q: float) -> float:
        if not self._values:
            raise InputError("The loss histogram is empty.")
        return float(np.quantile(np.fromiter(self._values, dtype=float), q))


@dataclass
class TruncationStats:
    """Running counts: how many examples were seen and dropped, and why."""

    seen: int = 0
    dropped_loss: int = 0
    dropped_grounding: int = 0

    @property
    def kept_fraction(self) -> float:
        return 1.0 - (self.dropped_loss + self.dropped_grounding) / self.seen if self.seen else 1.0


def _check_keep(name: str, keep: float) -> None:
    if not 0 < keep <= 1:
        raise ConfigError(f"{name} must be in (0, 1] (the fraction of examples to train on); got {keep}.")


def _as_numpy(x: Any) -> np.ndarray:
    if hasattr(x, "detach"):
        x = x.detach().float().cpu().numpy()
    a = np.asarray(x, dtype=float)
    if a.ndim != 1:
        raise InputError(f"Expected one loss per example (1-D); got shape {a.shape}.")
    return a


class LossTruncator:
    """Basic loss truncation: drop examples whose loss is above the running ``keep`` quantile."""

    def __init__(self, *, keep: float = 0.8, window: int = 10_000, min_history: int = 100):
        _check_keep("keep", keep)
        self.keep = keep
        self.min_history = min_history
        self.losses = RunningLossHistogram(window=window)
        self.stats = TruncationStats()

    def _loss_mask(self, losses: np.ndarray) -> np.ndarray:
        # Threshold from the history *before* this batch, then add the batch:
        # the decision for an example does not depend on its own value twice.
        if len(self.losses) >= self.min_history and self.keep < 1:
            mask = losses <= self.losses.quantile(self.keep)
        else:
            mask = np.ones(losses.shape, dtype=bool)
        self.losses.update(losses)
        return mask

    def keep_mask(self, losses: Any) -> Any:
        """Boolean mask (same type as ``losses``: tensor or array) of examples to train on."""
        a = _as_numpy(losses)
        mask = self._loss_mask(a)
        self.stats.seen += a.size
        self.stats.dropped_loss += int((~mask).sum())
        return _like(losses, mask)


class GroundedLossTruncator(LossTruncator):
    """Loss truncation plus the grounded filter of eq. 3 (drop the smallest grounding gains)."""

    def __init__(self, *, keep: float = 0.8, keep_grounded: float = 0.8, window: int = 10_000, min_history: int = 100):
        super().__init__(keep=keep, window=window, min_history=min_history)
        _check_keep("keep_grounded", keep_grounded)
        self.keep_grounded = keep_grounded
        self.gains = RunningLossHistogram(window=window)

    def keep_mask(self, losses: Any, *, ungrounded_losses: Any = None) -> Any:  # type: ignore[override]
        """``losses`` = −log P(y|c,g) per example (training model); ``ungrounded_losses`` = −log P(y|c) (reference model)."""
        if ungrounded_losses is None:
            raise InputError("GroundedLossTruncator needs ungrounded_losses (−log P(y|c) from a model trained without grounding).")
        a = _as_numpy(losses)
        u = _as_numpy(ungrounded_losses)
        if a.shape != u.shape:
            raise InputError(f"losses and ungrounded_losses differ in shape: {a.shape} vs {u.shape}.")
        gain = u - a  # log P(y|c,g) − log P(y|c)
        by_loss = self._loss_mask(a)
        if len(self.gains) >= self.min_history and self.keep_grounded < 1:
            by_gain = gain >= self.gains.quantile(1 - self.keep_grounded)
        else:
            by_gain = np.ones(gain.shape, dtype=bool)
        self.gains.update(gain)
        self.stats.seen += a.size
        self.stats.dropped_loss += int((~by_loss).sum())
        self.stats.dropped_grounding += int((by_loss & ~by_gain).sum())
        return _like(losses, by_loss & by_gain)


def _like(ref: Any, mask: np.ndarray) -> Any:
    if hasattr(ref, "detach"):
        import torch

        return torch.as_tensor(mask, device=ref.device)
    return mask


def sequence_losses(*, model: Any, input_ids: Any, attention_mask: Any, labels: Any, reduction: str = "mean") -> Any:
    """Per-example causal-LM loss, [batch] tensor (keeps the graph for backward).

    ``labels`` is ``input_ids`` with −100 wherever the token is not part of
    the target (prompt and padding), the transformers convention. ``mean``
    divides by the example's target tokens; ``sum`` is −log P(y | prompt).
    """
    import torch

    if reduction not in ("mean", "sum"):
        raise ConfigError(f"reduction must be 'mean' or 'sum'; got {reduction!r}.")
    logits = model(input_ids=input_ids, attention_mask=attention_mask).logits[:, :-1, :]
    tgt = labels[:, 1:]
    mask = tgt != -100
    if not bool(mask.any(dim=1).all()):
        raise InputError("Every example needs at least one target token (labels != -100).")
    nll = torch.nn.functional.cross_entropy(logits.float().transpose(1, 2), tgt.clamp(min=0), reduction="none")
    nll = nll * mask
    total = nll.sum(dim=1)
    return total / mask.sum(dim=1) if reduction == "mean" else total


def truncated_mean(losses: Any, mask: Any) -> Any:
    """Mean loss over kept examples (zero, with a graph, when all were dropped)."""
    kept = losses[mask]
    return kept.mean() if kept.numel() else losses.sum() * 0.0

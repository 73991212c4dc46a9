"""The gold NLI loss, shared by the trainer and distillation (one module, so neither imports the other).

>>> import torch
>>> round(float(nli_loss(torch.tensor([[2.0, 0.0, 0.0]]), torch.tensor([0]))), 3)
0.24
"""

from __future__ import annotations

from typing import Any

__all__ = ["nli_loss"]


def nli_loss(logits: Any, labels: Any, *, label_smoothing: float = 0.0) -> Any:
    """Mean loss over a batch mixing 3-way labels (0/1/2) and 2-way ``not_entailment`` (3).

    3-way rows: cross-entropy (optionally label-smoothed). 2-way rows:
    ``-log(p_neutral + p_contradiction)``, i.e. the 3-way head is trained with
    the only information the label carries.
    """
    import torch

    logp = torch.log_softmax(logits.float(), dim=-1)
    two_way = labels == 3
    safe = torch.where(two_way, torch.zeros_like(labels), labels)
    nll3 = -logp.gather(1, safe.unsqueeze(1)).squeeze(1)
    if label_smoothing > 0:
        nll3 = (1 - label_smoothing) * nll3 - label_smoothing * logp.mean(dim=-1)
    nll2 = -torch.logsumexp(logp[:, 1:], dim=-1)
    return torch.where(two_way, nll2, nll3).mean()

"""PMI decoding (paper 001, §3.3.2): reward tokens that the grounding makes more likely.

With grounded log-probs ``log P(t | g, c, prefix)`` and ungrounded
``log P(t | c, prefix)`` (same model, grounding left out of the prompt):

* ``s_pmi(t; g) = log P(t | g, c, prefix) − log P(t | c, prefix)``   (eq. 4)
* **PMI-addition**: ``softmax(log P(t | g, c, prefix) + α·s_pmi)``    (eq. 6)
* **PMI-interpolation**: ``softmax((1 − α)·log P(t | g, c, prefix) + α·s_pmi)`` (eq. 5)

α = 0 is the unmodified model. The same distributions serve two uses:
*scoring* a target (:func:`pmi_sequence_logprob`, used by the factual-ablation
probe) and *decoding* (:class:`PMILogitsProcessor` inside ``generate``: two
forward passes per step, both KV-cached).

>>> import numpy as np
>>> g = np.log(np.array([[0.5, 0.25, 0.25]]))
>>> u = np.log(np.array([[0.25, 0.5, 0.25]]))
>>> np.round(np.exp(pmi_logprobs(grounded=g, ungrounded=u, alpha=1.0, mode="add")), 3)
array([[0.727, 0.091, 0.182]])
>>> bool(np.allclose(pmi_logprobs(grounded=g, ungrounded=u, alpha=0.0, mode="interp"), g))
True
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import numpy as np

from veridic.errors import ConfigError, InputError
from veridic.lm._api import GenerationRequest, GenerationResult, LanguageModel, TokenStream

__all__ = ["PMI_MODES", "PMILogitsProcessor", "PMIMode", "pmi_generate", "pmi_logprobs", "pmi_sequence_logprob"]

PMIMode = Literal["add", "interp"]
PMI_MODES: tuple[str, ...] = ("add", "interp")


def _check(mode: str, alpha: float) -> None:
    if mode not in PMI_MODES:
        raise ConfigError(f"Unknown PMI mode {mode!r}; expected one of {PMI_MODES} ('add' = eq. 6, 'interp' = eq. 5).")
    if not np.isfinite(alpha) or alpha < 0:
        raise ConfigError(f"alpha must be a finite number >= 0; got {alpha!r}.")
    if mode == "interp" and alpha > 1:
        raise ConfigError(f"PMI-interpolation mixes with weight alpha in [0, 1]; got {alpha}.")


def _log_softmax(x: np.ndarray) -> np.ndarray:
    m = x.max(axis=-1, keepdims=True)
    z = x - m
    return z - np.log(np.exp(z).sum(axis=-1, keepdims=True))


def pmi_logprobs(*, grounded: np.ndarray, ungrounded: np.ndarray, alpha: float, mode: PMIMode = "add") -> np.ndarray:
    """Renormalised log-probs of PMI-addition or PMI-interpolation, row by row ([n, vocab])."""
    _check(mode, alpha)
    g = np.asarray(grounded, dtype=np.float64)
    u = np.asarray(ungrounded, dtype=np.float64)
    if g.shape != u.shape:
        raise InputError(f"grounded and ungrounded log-probs must have one shape; got {g.shape} and {u.shape}.")
    pmi = g - u
    mixed = g + alpha * pmi if mode == "add" else (1 - alpha) * g + alpha * pmi
    return _log_softmax(mixed)


def pmi_sequence_logprob(*, grounded: np.ndarray, ungrounded: np.ndarray, token_ids: Sequence[int], alpha: float, mode: PMIMode = "add") -> float:
    """log P_pmi(y) = Σ_i log P_pmi(t_i | g, c, t_<i) for a target's tokens."""
    lp = pmi_logprobs(grounded=grounded, ungrounded=ungrounded, alpha=alpha, mode=mode)
    ids = np.asarray(token_ids, dtype=np.int64)
    if lp.shape[0] != ids.size:
        raise InputError(f"{lp.shape[0]} rows of log-probs for {ids.size} tokens.")
    return float(lp[np.arange(ids.size), ids].sum())


class PMILogitsProcessor:
    """A transformers-compatible logits processor for PMI-addition / -interpolation.

    ``streams[b]`` scores row ``b`` *without* grounding; the processor feeds
    it the tokens generated so far (everything after the prompt, whose
    length is read from the first call unless ``prompt_length`` is given),
    so each step costs one extra cached forward pass. Put it first: it expects
    raw logits (it log-softmaxes them itself) and returns log-probs, which
    later warpers (temperature, top-p) and greedy/argmax accept as logits.
    """

    def __init__(self, *, streams: Sequence[TokenStream], alpha: float, mode: PMIMode = "add", prompt_length: int | None = None):
        _check(mode, alpha)
        if not streams:
            raise ConfigError("PMILogitsProcessor needs one ungrounded stream per batch row; got none.")
        self.streams = list(streams)
        self.prompt_length = prompt_length
        self.alpha = float(alpha)
        self.mode = mode
        self._fed = [0] * len(self.streams)

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        import torch

        if input_ids.shape[0] != len(self.streams):
            raise InputError(f"PMILogitsProcessor has {len(self.streams)} streams for a batch of {input_ids.shape[0]} rows (beam search is not supported).")
        if self.prompt_length is None:
            self.prompt_length = int(input_ids.shape[1])  # first call: nothing generated yet
        g = torch.log_softmax(scores.float(), dim=-1)
        out = torch.empty_like(g)
        for b, stream in enumerate(self.streams):
            generated = input_ids[b, self.prompt_length :].tolist()
            new = generated[self._fed[b] :]
            if new:
                stream.push(new)
                self._fed[b] = len(generated)
            u = torch.as_tensor(stream.logprobs(), dtype=g.dtype, device=g.device)
            pmi = g[b] - u
            mixed = g[b] + self.alpha * pmi if self.mode == "add" else (1 - self.alpha) * g[b] + self.alpha * pmi
            out[b] = torch.log_softmax(mixed, dim=-1)
        return out.to(scores.dtype)


def pmi_generate(
    *,
    backend: LanguageModel,
    grounded_prompt: str,
    ungrounded_prompt: str,
    alpha: float,
    mode: PMIMode = "add",
    max_new_tokens: int = 40,
    stop: tuple[str, ...] = ("\n",),
    do_sample: bool = False,
    top_p: float = 1.0,
    seed: int = 0,
) -> GenerationResult:
    """Continue ``grounded_prompt`` with PMI decoding against ``ungrounded_prompt``.

    >>> from veridic.lm._dummy import DummyLM
    >>> r = pmi_generate(backend=DummyLM(), grounded_prompt="G: 7\\nC:", ungrounded_prompt="C:", alpha=0.3, max_new_tokens=5)
    >>> len(r.token_ids) <= 5
    True
    """
    _check(mode, alpha)
    req = GenerationRequest(context=grounded_prompt, max_new_tokens=max_new_tokens, stop=stop, do_sample=do_sample, top_p=top_p, seed=seed)
    if alpha == 0:
        return backend.generate([req])[0]
    stream = backend.stream(ungrounded_prompt, reserve=max_new_tokens)
    proc = PMILogitsProcessor(streams=[stream], alpha=alpha, mode=mode)
    return backend.generate([req], logits_processors=[proc])[0]

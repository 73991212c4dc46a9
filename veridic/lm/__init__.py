"""Causal language-model backends for veridic's LM probes.

``_api`` defines the protocol (requests, results, :class:`LanguageModel`);
``_dummy`` a fake backend for tests; ``_caching`` a wrapper that remembers
answers; ``_hf`` the transformers backend; ``_embedded`` the LMs shipped as
PyPI packages (SmolLM2-135M by default). Importing this package does not
import torch.

>>> from veridic.lm import DummyLM, LoglikelihoodRequest
>>> DummyLM().loglikelihood([LoglikelihoodRequest(context="ab", continuation="ab")])[0].n_context_tokens
3
"""

from veridic.lm._api import (
    GenerationRequest,
    GenerationResult,
    LanguageModel,
    LoglikelihoodRequest,
    LoglikelihoodResult,
    TokenStream,
)
from veridic.lm._caching import CachingLM
from veridic.lm._dummy import DummyLM
from veridic.lm._embedded import DEFAULT_EMBEDDED_LM, EMBEDDED_LMS, cached_gguf_dir, default_model_cache_dir, embedded_model_dir, locate_gguf
from veridic.lm._hf import HFCausalLM, load_lm

__all__ = [
    "DEFAULT_EMBEDDED_LM",
    "EMBEDDED_LMS",
    "CachingLM",
    "DummyLM",
    "GenerationRequest",
    "GenerationResult",
    "HFCausalLM",
    "LanguageModel",
    "LoglikelihoodRequest",
    "LoglikelihoodResult",
    "TokenStream",
    "cached_gguf_dir",
    "default_model_cache_dir",
    "embedded_model_dir",
    "load_lm",
    "locate_gguf",
]

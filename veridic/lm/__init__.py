"""Causal language-model backends for veridic's LM probes.

``api`` defines the protocol (requests, results, :class:`LanguageModel`);
``dummy`` a fake backend for tests; ``caching`` a wrapper that remembers
answers; ``hf`` the transformers backend; ``embedded`` the LMs shipped as
PyPI packages (SmolLM2-135M by default). Importing this package does not
import torch.

>>> from veridic.lm import DummyLM, LoglikelihoodRequest
>>> DummyLM().loglikelihood([LoglikelihoodRequest(context="ab", continuation="ab")])[0].n_context_tokens
3
"""

from veridic.lm.api import (
    GenerationRequest,
    GenerationResult,
    LanguageModel,
    LoglikelihoodRequest,
    LoglikelihoodResult,
    TokenStream,
)
from veridic.lm.caching import CachingLM
from veridic.lm.dummy import DummyLM
from veridic.lm.embedded import DEFAULT_EMBEDDED_LM, EMBEDDED_LMS, cached_gguf_dir, default_model_cache_dir, embedded_model_dir, locate_gguf
from veridic.lm.hf import HFCausalLM, load_lm

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

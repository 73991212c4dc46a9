"""Prompt templates for grounded continuation: grounding, context, target.

Prompt building is kept apart from model calls so it can be tested as
golden strings. The default, ``west-zs``, is exactly what West et al.'s
zero-shot GPT-2 script (``score_zeroshot_gpt2.py``) feeds the model: it
encodes ``"{g}\\n"`` and ``"{c}\\n"``, decodes them (after trimming) and
formats them *again* with ``"{}\\n"``, so the prompt is ``"{g}\\n\\n{c}\\n\\n"``;
the scored continuation is ``"{y}\\n"``. ``single-newline`` keeps the
earlier layout ``"{g}\\n{c}\\n"`` (what the script's format string reads
like, not what it runs). Without grounding (the PMI denominator
P(y | c)) the grounding and its separator are left out.

>>> t = TEMPLATES["west-zs"]
>>> t.prompt(grounding="G.", context="C.")
'G.\\n\\nC.\\n\\n'
>>> t.prompt(grounding=None, context="C.")
'C.\\n\\n'
>>> t.continuation(target="Y.")
'Y.\\n'
>>> TEMPLATES["single-newline"].prompt(grounding="G.", context="C.")
'G.\\nC.\\n'
>>> TEMPLATES["labelled"].prompt(grounding="G.", context="C.")
'Document: G.\\n\\nArticle: C.'
"""

from __future__ import annotations

from dataclasses import dataclass

from veridic.errors import ConfigError, did_you_mean
from veridic.lm._api import LanguageModel
from veridic.types import _Record

__all__ = ["TEMPLATES", "FittedPrompt", "PromptTemplate", "fit_to_window", "get_template"]


@dataclass(frozen=True)
class PromptTemplate(_Record):
    """``grounding_prefix + g + grounding_suffix + context_prefix + c + context_suffix``, then ``target_prefix + y + target_suffix``."""

    name: str
    grounding_prefix: str = ""
    grounding_suffix: str = "\n"
    context_prefix: str = ""
    context_suffix: str = "\n"
    target_prefix: str = ""
    target_suffix: str = "\n"

    def grounding_block(self, grounding: str | None) -> str:
        return "" if grounding is None else self.grounding_prefix + grounding + self.grounding_suffix

    def context_block(self, context: str) -> str:
        return self.context_prefix + context + self.context_suffix

    def prompt(self, *, grounding: str | None, context: str) -> str:
        return self.grounding_block(grounding) + self.context_block(context)

    def continuation(self, *, target: str) -> str:
        return self.target_prefix + target + self.target_suffix



TEMPLATES: dict[str, PromptTemplate] = {
    # West et al.'s score_zeroshot_gpt2.py as it runs: the trimmed "g\n" and "c\n" are
    # formatted with "{}\n" a second time, so each block ends in a blank line.
    "west-zs": PromptTemplate(name="west-zs", grounding_suffix="\n\n", context_suffix="\n\n"),
    # The earlier default layout (one newline per block); kept for comparison.
    "single-newline": PromptTemplate(name="single-newline"),
    # Named blocks, for instruction-tuned models that read labels better than bare text.
    "labelled": PromptTemplate(
        name="labelled", grounding_prefix="Document: ", grounding_suffix="\n\n", context_prefix="Article: ", context_suffix="", target_prefix="", target_suffix=""
    ),
}


def get_template(name: str) -> PromptTemplate:
    if name not in TEMPLATES:
        raise ConfigError(f"Unknown prompt template {name!r}; expected one of {sorted(TEMPLATES)}." + did_you_mean(name, TEMPLATES))
    return TEMPLATES[name]


@dataclass(frozen=True)
class FittedPrompt:
    """A prompt that fits the window; ``*_tokens_dropped`` say how much was cut."""

    prompt: str
    continuation: str
    grounding_tokens_dropped: int
    context_tokens_dropped: int


def fit_to_window(
    *,
    backend: LanguageModel,
    template: PromptTemplate,
    grounding: str | None,
    context: str,
    target: str,
    max_tokens: int | None = None,
) -> FittedPrompt:
    """Build the prompt, trimming grounding and context until it fits ``max_tokens``.

    West et al.'s rule: while too long, cut one token from whichever of the
    two is longer: the grounding from its *end* (a document's lead carries
    its main facts), the context from its *start* (the continuation depends
    on the most recent context). One token is kept for the model's start.
    """
    limit = (max_tokens or backend.max_length) - 1
    cont = template.continuation(target=target)
    fixed = len(backend.tok_encode(cont))
    g_ids = backend.tok_encode(grounding) if grounding else []
    c_ids = backend.tok_encode(context) if context else []
    # Separators' cost, measured once on the empty texts.
    overhead = len(backend.tok_encode(template.prompt(grounding="" if grounding is not None else None, context="")))
    excess = len(g_ids) + len(c_ids) + overhead + fixed - limit
    g_cut = c_cut = 0
    if excess > 0:
        g_len, c_len = len(g_ids), len(c_ids)
        # Closed form of "drop a token from the longer one" until the excess is gone.
        for _ in range(excess):
            if g_len > c_len:
                g_len -= 1
            elif c_len > 0:
                c_len -= 1
            elif g_len > 0:
                g_len -= 1
            else:
                raise ConfigError(f"The target alone ({fixed} tokens) does not fit a {limit + 1}-token window.")
        g_cut, c_cut = len(g_ids) - g_len, len(c_ids) - c_len
        if grounding is not None and g_cut:
            grounding = backend.tok_decode(g_ids[:g_len]).rstrip("\ufffd")
        if c_cut:
            context = backend.tok_decode(c_ids[c_cut:]).lstrip("\ufffd")
    return FittedPrompt(prompt=template.prompt(grounding=grounding, context=context), continuation=cont, grounding_tokens_dropped=g_cut, context_tokens_dropped=c_cut)

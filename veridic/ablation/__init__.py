"""Factual ablation (West et al., paper 001): does a grounded LM use its grounding?

* :mod:`~veridic.ablation._data`: examples (g, g′, c, y) and loaders;
* :mod:`~veridic.ablation._templates`: prompt layout and window fitting;
* :mod:`~veridic.ablation._metrics`: accuracy, margin-accuracy, bootstrap CIs;
* :mod:`~veridic.ablation._probe`: :class:`FactualAblationProbe`, which receives an LM backend;
* :mod:`~veridic.ablation._pmi`: PMI-addition / -interpolation for scoring and decoding;
* :mod:`~veridic.ablation._builder`: synthetic sets from numeric / chronological edits;
* :mod:`~veridic.ablation._loss_truncation`: basic and grounded loss truncation for training;
* :mod:`~veridic.ablation._nli_baseline`: the classifier baseline with veridic's NLI scorer;
* :mod:`~veridic.ablation.cli`: ``veridic ablation run | build | generate``.

>>> from veridic.ablation import margin_accuracy, LOG_100
>>> margin_accuracy(differences=[6.0, 1.0], margin=LOG_100)
0.5
"""

from veridic.ablation._builder import BuildResult, Edit, apply_edit, build_ablation_set, find_facts
from veridic.ablation._data import AblationExample, load_ablation_set, load_west_synthetic, west_synthetic_path
from veridic.ablation._loss_truncation import GroundedLossTruncator, LossTruncator, RunningLossHistogram, sequence_losses, truncated_mean
from veridic.ablation._metrics import DEFAULT_MARGINS, LOG_100, LOG_1000, MarginAccuracy, bootstrap_ci, margin_accuracy, summarize
from veridic.ablation._nli_baseline import NLIBaselineResult, nli_baseline
from veridic.ablation._pmi import PMILogitsProcessor, pmi_generate, pmi_logprobs, pmi_sequence_logprob
from veridic.ablation._probe import AblationReport, ExampleScore, FactualAblationProbe, MethodResult
from veridic.ablation._templates import TEMPLATES, PromptTemplate, fit_to_window, get_template

__all__ = [
    "DEFAULT_MARGINS",
    "LOG_100",
    "LOG_1000",
    "TEMPLATES",
    "AblationExample",
    "AblationReport",
    "BuildResult",
    "Edit",
    "ExampleScore",
    "FactualAblationProbe",
    "GroundedLossTruncator",
    "LossTruncator",
    "MarginAccuracy",
    "MethodResult",
    "NLIBaselineResult",
    "PMILogitsProcessor",
    "PromptTemplate",
    "RunningLossHistogram",
    "apply_edit",
    "bootstrap_ci",
    "build_ablation_set",
    "find_facts",
    "fit_to_window",
    "get_template",
    "load_ablation_set",
    "load_west_synthetic",
    "margin_accuracy",
    "nli_baseline",
    "pmi_generate",
    "pmi_logprobs",
    "pmi_sequence_logprob",
    "sequence_losses",
    "summarize",
    "truncated_mean",
    "west_synthetic_path",
]

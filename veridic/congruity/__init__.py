"""Factual vs contextual errors in entity descriptions (Goyal et al., paper 000).

A description can fail by being *nonfactual* (fits the context, false for
the entity) or *incongruous* (true, but out of place). This package builds
the paper's probes on real data and measures both, split by how familiar
the entity is:

* :mod:`~veridic.congruity._data`: examples (masked context, entity, gold
  description, facts) from PoMo ``.pm``/``.wiki`` files or a generic JSONL;
* :mod:`~veridic.congruity._build`: references (§2.1) and claim /
  description identification items (§2.2, §2.3) with the overlap constraints;
* :mod:`~veridic.congruity._metrics`: BLEU-1 / ROUGE-L / MiniLM BERTScore
  precision, T and M (appendix C), familiar-vs-unfamiliar tests;
* :mod:`~veridic.congruity._ranking`: multiple-choice ranking by a causal
  LM's log-likelihood (any :class:`veridic.lm.LanguageModel`) or any scorer;
* :mod:`~veridic.congruity._generation`: precision of generated descriptions;
* :mod:`~veridic.congruity._familiarity`: the summary heuristic (§3) and PoMo proxies;
* :mod:`~veridic.congruity._human`: pairwise preference export, Fleiss' κ, Cohen's d (§6);
* :mod:`~veridic.congruity._report`: JSON / Markdown / bar charts;
* :mod:`~veridic.congruity.cli`: ``veridic congruity build | score | report``.

>>> from veridic.congruity import top_rank_frequency
>>> top_rank_frequency(scores=[{"accurate": 1.0, "nonfactual": 0.0}, {"accurate": 0.0, "nonfactual": 1.0}])
{'accurate': 0.5, 'nonfactual': 0.5}
"""

from veridic.congruity._build import (
    CLASSES,
    REFERENCE_CLASSES,
    BuildStats,
    MCItem,
    References,
    build_claim_items,
    build_description_items,
    build_references,
    overlaps,
)
from veridic.congruity._data import MASK, CongruityExample, Fact, load_examples, load_generic, load_pomo, verbalize_claim
from veridic.congruity._familiarity import FAMILIARITY_METHODS, assign_familiarity, summary_familiar
from veridic.congruity._generation import GENERATION_METRICS, score_generations
from veridic.congruity._human import RatingAnalysis, analyze_ratings, export_pairwise, fleiss_kappa
from veridic.congruity._metrics import (
    GroupComparison,
    MiniLMBertScore,
    bleu1_precision,
    cohens_d,
    compare_groups,
    item_ranks,
    mean_reciprocal_rank,
    rouge_l_precision,
    top_rank_frequency,
)
from veridic.congruity._ranking import ItemScores, rank_items, requests_for, score_with
from veridic.congruity._report import CongruityReport, build_report, render_markdown, write_report

__all__ = [
    "CLASSES",
    "FAMILIARITY_METHODS",
    "GENERATION_METRICS",
    "MASK",
    "REFERENCE_CLASSES",
    "BuildStats",
    "CongruityExample",
    "CongruityReport",
    "Fact",
    "GroupComparison",
    "ItemScores",
    "MCItem",
    "MiniLMBertScore",
    "RatingAnalysis",
    "References",
    "analyze_ratings",
    "assign_familiarity",
    "bleu1_precision",
    "build_claim_items",
    "build_description_items",
    "build_references",
    "build_report",
    "cohens_d",
    "compare_groups",
    "export_pairwise",
    "fleiss_kappa",
    "item_ranks",
    "load_examples",
    "load_generic",
    "load_pomo",
    "mean_reciprocal_rank",
    "overlaps",
    "rank_items",
    "render_markdown",
    "requests_for",
    "rouge_l_precision",
    "score_generations",
    "score_with",
    "summary_familiar",
    "top_rank_frequency",
    "verbalize_claim",
    "write_report",
]

"""Human validation of the distractors (paper 000, §6): pairwise preference export and agreement statistics.

:func:`export_pairwise` writes, for a sample of items, the context and two
descriptions (gold and a distractor, order randomised and recorded) to be
rated on a 1–5 scale (1 = strongly prefer description 1, 5 = strongly
prefer description 2). :func:`analyze_ratings` reads the returned ratings
(``pair_id, rater, rating``) and reports

* Fleiss' κ over the five rating categories (raters per pair may vary only
  if every pair has the same count; pairs with fewer ratings are dropped);
* the mean rating given to the gold (congruous) and to the distractor
  (incongruous) description, each mapped onto "preference for this
  description" (rating of description 2, or 6 − rating of description 1);
* Cohen's d of gold vs distractor preference and a paired t-test p (scipy);
* *majority agreement*: the share of pairs where the majority of raters
  rate the distractor below 3, i.e. agree with the automatic label.

Fleiss' κ checks the pairwise design (same raters per pair) and delegates
to the one implementation in :mod:`veridic.ais._stats`.

>>> round(fleiss_kappa([[0, 0, 3], [0, 3, 0], [3, 0, 0], [0, 0, 3]]), 3)
1.0
>>> round(fleiss_kappa([[1, 1, 1], [1, 1, 1]]), 3)
-0.5
"""

from __future__ import annotations

import math
import random
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from veridic.congruity._build import MCItem
from veridic.congruity._metrics import _NanAsNone, cohens_d
from veridic.errors import ConfigError, InputError

__all__ = ["RatingAnalysis", "analyze_ratings", "export_pairwise", "fleiss_kappa"]

SCALE = {1: "strongly prefer description 1", 2: "prefer description 1", 3: "no preference", 4: "prefer description 2", 5: "strongly prefer description 2"}


def fleiss_kappa(table: Sequence[Sequence[int]]) -> float:
    """Fleiss' κ of a subjects × categories count table (every row sums to the same number of raters ≥ 2).

    Validates the study design (same raters per pair), then uses the one
    implementation in :func:`veridic.ais._stats.fleiss_kappa`; an undefined κ
    (every rating in one category) is NaN here, not perfect agreement.
    """
    from veridic.ais._stats import fleiss_kappa as _kappa

    t = np.asarray(table, dtype=float)
    if t.ndim != 2 or t.shape[0] < 1 or t.shape[1] < 2:
        raise InputError(f"Fleiss' kappa needs a subjects x categories table with >= 2 categories; got shape {t.shape}.")
    n = t.sum(axis=1)
    if not np.all(n == n[0]) or n[0] < 2:
        raise InputError(f"Every subject needs the same number (>= 2) of ratings; got row sums {sorted(set(n.tolist()))[:5]}.")
    p_j = t.sum(axis=0) / t.sum()
    if (p_j * p_j).sum() >= 1.0:
        return math.nan
    k = _kappa(t)
    return math.nan if k is None else k


def export_pairwise(*, items: Sequence[MCItem], distractor: str = "incongruous", n: int | None = 50, seed: int = 0) -> list[dict[str, Any]]:
    """Rows for a 1–5 pairwise preference study of gold vs ``distractor`` (order randomised, recorded in ``gold_is``).

    >>> it = MCItem(id="7", task="claim", entity="Ann Lee", left="Ann Lee ,", right=" , said .", previous="Earlier.",
    ...             options={"accurate": "senator", "incongruous": "born in Ohio", "nonfactual": "x", "both": "y"})
    >>> row = export_pairwise(items=[it], n=None)[0]
    >>> row["context"], sorted([row["description_1"], row["description_2"]]), row["gold_is"] in (1, 2)
    ('Earlier. Ann Lee , ____ , said .', ['born in Ohio', 'senator'], True)
    """
    if not items:
        raise InputError("No items to export.")
    if distractor not in items[0].options or distractor == "accurate":
        raise ConfigError(f"distractor must be one of the distractor classes {[c for c in items[0].options if c != 'accurate']}; got {distractor!r}.")
    rng = random.Random(seed)
    chosen = list(items) if n is None or n >= len(items) else rng.sample(list(items), n)
    rows = []
    for it in chosen:
        gold_first = rng.random() < 0.5
        a, b = (it.options["accurate"], it.options[distractor]) if gold_first else (it.options[distractor], it.options["accurate"])
        ctx = (it.previous.strip() + " " if it.previous.strip() else "") + it.left + " ____" + it.right
        rows.append({"pair_id": f"{it.id}|{distractor}", "item_id": it.id, "entity": it.entity, "context": ctx, "description_1": a, "description_2": b,
                     "gold_is": 1 if gold_first else 2, "distractor": distractor, "scale": "1-5: " + "; ".join(f"{k} = {v}" for k, v in SCALE.items())})
    return rows


@dataclass(frozen=True)
class RatingAnalysis(_NanAsNone):
    """Agreement and effect size of returned ratings (see the module docstring)."""

    n_pairs: int
    n_raters_per_pair: int
    fleiss_kappa: float
    mean_gold: float
    mean_distractor: float
    se_gold: float
    se_distractor: float
    cohens_d: float
    p_paired_t: float
    majority_agreement: float


def analyze_ratings(*, pairs: Sequence[Mapping[str, Any]], ratings: Sequence[Mapping[str, Any]]) -> RatingAnalysis:
    """Analyse ``ratings`` (rows ``pair_id, rater, rating`` in 1–5) of exported ``pairs``."""
    gold_is = {str(p["pair_id"]): int(p["gold_is"]) for p in pairs}
    by_pair: dict[str, list[int]] = defaultdict(list)
    for i, r in enumerate(ratings):
        pid = str(r.get("pair_id"))
        if pid not in gold_is:
            raise InputError(f"Rating {i} names pair_id {pid!r}, which is not among the exported pairs.")
        v = r.get("rating")
        if not isinstance(v, (int, float)) or int(v) != v or not 1 <= int(v) <= 5:
            raise InputError(f"Rating {i} must be an integer 1-5; got {v!r}.")
        by_pair[pid].append(int(v))
    if not by_pair:
        raise InputError("No ratings.")
    k = max(len(v) for v in by_pair.values())
    full = {p: v for p, v in by_pair.items() if len(v) == k}
    table = [[v.count(c) for c in range(1, 6)] for v in full.values()]
    kappa = fleiss_kappa(table) if k >= 2 else math.nan
    gold_pref, dis_pref, agree = [], [], []
    for p, vals in full.items():
        # preference for description 2 is the rating itself; for description 1 it is 6 - rating
        g = [v if gold_is[p] == 2 else 6 - v for v in vals]
        d = [6 - x for x in g]
        gold_pref.append(float(np.mean(g)))
        dis_pref.append(float(np.mean(d)))
        agree.append(sum(x < 3 for x in d) > len(d) / 2)
    from scipy.stats import ttest_rel

    gp, dp = np.array(gold_pref), np.array(dis_pref)
    p = float(ttest_rel(gp, dp).pvalue) if len(gp) > 1 and np.any(gp != dp) else math.nan
    def se(x: np.ndarray) -> float:
        return float(x.std(ddof=1) / math.sqrt(len(x))) if len(x) > 1 else math.nan

    return RatingAnalysis(
        n_pairs=len(full), n_raters_per_pair=k, fleiss_kappa=kappa, mean_gold=float(gp.mean()), mean_distractor=float(dp.mean()),
        se_gold=se(gp), se_distractor=se(dp), cohens_d=cohens_d(gp, dp), p_paired_t=p, majority_agreement=float(np.mean(agree)),
    )

"""AIS statistics (paper 003): consensus, Int / AIS / Flag per system, agreement, significance.

The unit of counting is :class:`ItemVotes`: how many raters answered yes/no
to the two stages of one item (and how many flagged it). Everything the paper
reports derives from those counts, which is also all the released ratings
carry (consensus plus "# agree"), so the same code serves the annotation app
and the importer of the released CSVs.

* stage 1, ``int``: is the output interpretable without the source?
* stage 2, ``ais``: asked only of raters who said yes to stage 1 (source shown).
* consensus: majority vote; an exact tie is reported (``None``), never guessed.
* Int % is over non-flagged items, AIS % over interpretable ones, Flag % over
  all items (paper 003 §4.1).

>>> v = [ItemVotes(item="a", system="s", int_yes=5, int_no=0, ais_yes=4, ais_no=1),
...      ItemVotes(item="b", system="s", int_yes=1, int_no=4)]
>>> row = system_scores(consensus(v))[0]
>>> (row.system, row.int_pct, row.ais_pct)
('s', 50.0, 100.0)
>>> round(agreement(v, stage="int").pairwise, 3)
0.8
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

import numpy as np

from veridic.errors import ConfigError, InputError, MissingDependencyError
from veridic.types import _Record

__all__ = [
    "STAGES",
    "Agreement",
    "Consensus",
    "ItemVotes",
    "Judgment",
    "Significance",
    "Stage",
    "SystemScores",
    "agreement",
    "consensus",
    "expert_agreement",
    "fleiss_kappa",
    "krippendorff_alpha",
    "macro_f1",
    "pairwise_agreement",
    "significance",
    "system_scores",
    "votes_from_judgments",
]

Stage = Literal["int", "ais"]
STAGES: tuple[Stage, ...] = ("int", "ais")


@dataclass(frozen=True, slots=True)
class Judgment:
    """One rater's answers on one item.

    ``interpretable`` is the stage-1 answer, ``attributable`` the stage-2 answer
    (only meaningful when ``interpretable`` is True); a flagged judgment may
    carry neither.
    """

    item: str
    rater: str
    system: str = ""
    interpretable: bool | None = None
    attributable: bool | None = None
    flagged: bool = False


@dataclass(frozen=True, slots=True)
class ItemVotes:
    """Vote counts of one item. ``consensus_*`` override the majority (released consensus columns)."""

    item: str
    system: str
    int_yes: int = 0
    int_no: int = 0
    ais_yes: int = 0
    ais_no: int = 0
    flags: int = 0
    consensus_flag: bool | None = None
    consensus_int: bool | None = None
    consensus_ais: bool | None = None

    def __post_init__(self) -> None:
        for name in ("int_yes", "int_no", "ais_yes", "ais_no", "flags"):
            if getattr(self, name) < 0:
                raise InputError(f"ItemVotes.{name} must be >= 0; got {getattr(self, name)} for item {self.item!r}.")

    def counts(self, stage: Stage) -> tuple[int, int]:
        """(yes, no) for ``stage``."""
        return (self.int_yes, self.int_no) if stage == "int" else (self.ais_yes, self.ais_no)


@dataclass(frozen=True, slots=True)
class Consensus:
    """Majority decision of one item; ``None`` for a stage means a tie or no votes (see ``*_tie``)."""

    item: str
    system: str
    flagged: bool
    interpretable: bool | None
    attributable: bool | None
    int_tie: bool = False
    ais_tie: bool = False


@dataclass(frozen=True, slots=True)
class SystemScores(_Record):
    """One row of the paper's Tables 3-6. Percentages are in [0, 100]; ``None`` when undefined."""

    system: str
    n: int
    flag_pct: float | None
    int_pct: float | None
    ais_pct: float | None
    n_interpretable: int
    int_ties: int = 0
    ais_ties: int = 0



@dataclass(frozen=True, slots=True)
class Agreement(_Record):
    """Inter-annotator agreement of one stage (paper 003 Table 7), all higher-is-better.

    ``f1``: macro F1 of individual ratings against the item consensus;
    ``pairwise``: share of agreeing rater pairs within items; ``alpha``:
    Krippendorff's alpha (nominal); ``kappa``: Fleiss' kappa (Fleiss 1971,
    generalised to a varying number of raters per item).
    """

    stage: str
    f1: float | None
    pairwise: float | None
    alpha: float | None
    kappa: float | None
    n_items: int
    n_ratings: int



@dataclass(frozen=True, slots=True)
class Significance:
    """Test of every system against the best one on a metric (the paper's asterisks)."""

    metric: str
    best: str
    p_values: dict[str, float] = field(default_factory=dict)
    paired: dict[str, bool] = field(default_factory=dict)
    alpha_level: float = 0.01
    method: str = "permutation"
    n_resamples: int = 0

    def significant(self, system: str) -> bool:
        return system != self.best and self.p_values.get(system, 1.0) < self.alpha_level

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["significantly_lower"] = sorted(s for s in self.p_values if self.significant(s))
        return d


def votes_from_judgments(judgments: Iterable[Judgment]) -> list[ItemVotes]:
    """Count the judgments of every item (first-seen item order).

    A flagged judgment counts only as a flag: paper 003 §4.1.3 computes ratings
    and agreement "for all non-flagged ratings". A stage-2 answer counts only
    when the same rater said the item is interpretable.
    """
    acc: dict[str, dict[str, Any]] = {}
    for j in judgments:
        if not isinstance(j, Judgment):
            raise InputError(f"Expected Judgment objects; got {type(j).__name__}.")
        d = acc.setdefault(j.item, {"system": j.system, "int_yes": 0, "int_no": 0, "ais_yes": 0, "ais_no": 0, "flags": 0})
        if d["system"] != j.system:
            raise InputError(f"Item {j.item!r} is attributed to two systems: {d['system']!r} and {j.system!r}.")
        if j.flagged:
            d["flags"] += 1
            continue
        if j.interpretable is None:
            continue
        d["int_yes" if j.interpretable else "int_no"] += 1
        if j.interpretable and j.attributable is not None:
            d["ais_yes" if j.attributable else "ais_no"] += 1
    return [ItemVotes(item=k, **v) for k, v in acc.items()]


def _majority(yes: int, no: int) -> tuple[bool | None, bool]:
    if yes == no:
        return None, yes > 0
    return yes > no, False


def consensus(votes: Iterable[ItemVotes]) -> list[Consensus]:
    """Majority vote per item; released consensus columns (``consensus_*``) take precedence.

    An item is flagged when more than half of its raters flagged it. The AIS
    consensus exists only for items whose interpretability consensus is yes.
    """
    out: list[Consensus] = []
    for v in votes:
        n = v.int_yes + v.int_no + v.flags
        flagged = v.consensus_flag if v.consensus_flag is not None else (n > 0 and v.flags * 2 > n)
        if flagged:
            out.append(Consensus(item=v.item, system=v.system, flagged=True, interpretable=None, attributable=None))
            continue
        if v.consensus_int is not None:
            interp, int_tie = v.consensus_int, False
        else:
            interp, int_tie = _majority(v.int_yes, v.int_no)
        attr, ais_tie = None, False
        if interp:
            if v.consensus_ais is not None:
                attr = v.consensus_ais
            else:
                attr, ais_tie = _majority(v.ais_yes, v.ais_no)
        out.append(Consensus(item=v.item, system=v.system, flagged=False, interpretable=interp, attributable=attr, int_tie=int_tie, ais_tie=ais_tie))
    return out


def _pct(num: int, den: int) -> float | None:
    return round(100.0 * num / den, 4) if den else None


def system_scores(items: Iterable[Consensus], *, sampled: int | None = None) -> list[SystemScores]:
    """Flag %, Int % (of non-flagged) and AIS % (of interpretable) per system, in first-seen order.

    ``sampled``: the number of items the study drew per system. Where a
    system has fewer items than that, the missing ones count as not
    interpretable (the released QReCC file omits such rows; the paper's
    percentages are over the full sample). ``None`` uses the items as given.
    """
    groups: dict[str, list[Consensus]] = defaultdict(list)
    for c in items:
        groups[c.system].append(c)
    rows = []
    for system, cs in groups.items():
        if sampled is not None and len(cs) > sampled:
            raise ConfigError(f"sampled={sampled} but system {system!r} has {len(cs)} items; sampled must be at least the item count.")
        missing = (sampled - len(cs)) if sampled is not None else 0
        flagged = sum(c.flagged for c in cs)
        decided = [c for c in cs if not c.flagged and c.interpretable is not None]
        interp = [c for c in decided if c.interpretable]
        ais_decided = [c for c in interp if c.attributable is not None]
        rows.append(
            SystemScores(
                system=system,
                n=len(cs) + missing,
                flag_pct=_pct(flagged, len(cs) + missing),
                int_pct=_pct(len(interp), len(decided) + missing),
                ais_pct=_pct(sum(bool(c.attributable) for c in ais_decided), len(ais_decided)),
                n_interpretable=len(interp),
                int_ties=sum(c.int_tie for c in cs),
                ais_ties=sum(c.ais_tie for c in cs),
            )
        )
    return rows


def _count_matrix(votes: Sequence[ItemVotes], stage: Stage) -> np.ndarray:
    """Items x (yes, no) counts, keeping items with at least one vote."""
    m = np.array([v.counts(stage) for v in votes], dtype=float).reshape(-1, 2)
    return m[m.sum(axis=1) > 0]


def krippendorff_alpha(counts: np.ndarray | Sequence[Sequence[int]]) -> float | None:
    """Krippendorff's alpha (nominal) from an items x categories count matrix (``krippendorff`` package).

    Items with fewer than two ratings carry no pairable values and are
    ignored, as in Krippendorff's definition. ``None`` when no item has two
    ratings; 1.0 when every pairable rating agrees (the formula is 0/0 there).

    >>> krippendorff_alpha([[3, 0], [0, 3]])
    1.0
    """
    try:
        import krippendorff
    except ImportError:  # pragma: no cover - exercised only without the extra
        raise MissingDependencyError("krippendorff", extra="ais", purpose="Krippendorff's alpha") from None
    m = np.asarray(counts, dtype=float)
    m = m[m.sum(axis=1) >= 2]
    if len(m) == 0:
        return None
    if (m > 0).sum(axis=1).max() <= 1:
        return 1.0  # no unit holds two different values: no observed disagreement
    return float(krippendorff.alpha(value_counts=m, level_of_measurement="nominal"))


def fleiss_kappa(counts: np.ndarray | Sequence[Sequence[int]]) -> float | None:
    """Fleiss' kappa from an items x categories count matrix; items may have different rater counts.

    Observed agreement per item is the share of agreeing rater pairs
    ``sum n_ij (n_ij - 1) / (n_i (n_i - 1))``; chance agreement uses the pooled
    category shares. With a constant number of raters this is Fleiss (1971)
    and equals ``statsmodels.stats.inter_rater.fleiss_kappa``.

    >>> round(fleiss_kappa([[2, 0], [0, 2], [1, 1]]), 4)
    0.3333
    """
    m = np.asarray(counts, dtype=float)
    m = m[m.sum(axis=1) >= 2]
    if len(m) == 0:
        return None
    n = m.sum(axis=1)
    p_i = (m * (m - 1)).sum(axis=1) / (n * (n - 1))
    p_bar = p_i.mean()
    p_j = m.sum(axis=0) / m.sum()
    p_e = float((p_j**2).sum())
    if math.isclose(p_e, 1.0):
        return 1.0 if math.isclose(p_bar, 1.0) else None
    return float((p_bar - p_e) / (1 - p_e))


def pairwise_agreement(counts: np.ndarray | Sequence[Sequence[int]]) -> float | None:
    """Share of agreeing rater pairs, pooled over items (items with < 2 ratings ignored).

    >>> pairwise_agreement([[2, 1]])
    0.3333333333333333
    """
    m = np.asarray(counts, dtype=float)
    m = m[m.sum(axis=1) >= 2]
    n = m.sum(axis=1)
    pairs = (n * (n - 1) / 2).sum()
    return float((m * (m - 1) / 2).sum() / pairs) if pairs else None


def macro_f1(*, tp: float, fp: float, fn: float, tn: float) -> float | None:
    """Mean of the F1 of the 'yes' and the 'no' class (a class with no support counts as F1 1.0 only if never predicted).

    >>> macro_f1(tp=3, fp=1, fn=0, tn=1)
    0.7619047619047619
    """
    def f1(t: float, f_p: float, f_n: float) -> float:
        den = 2 * t + f_p + f_n
        return 1.0 if den == 0 else 2 * t / den

    if tp + fp + fn + tn == 0:
        return None
    return (f1(tp, fp, fn) + f1(tn, fn, fp)) / 2


def agreement(votes: Iterable[ItemVotes], *, stage: Stage) -> Agreement:
    """F1 vs consensus, pairwise agreement, Krippendorff's alpha and Fleiss' kappa for one stage.

    Flagged ratings are excluded (paper 003 §4.1.3); stage ``ais`` uses only
    items whose interpretability consensus is yes. F1 skips tied items (no
    consensus to compare against).
    """
    if stage not in STAGES:
        raise ConfigError(f"stage must be one of {STAGES}; got {stage!r}.")
    votes = list(votes)
    cons = {c.item: c for c in consensus(votes)}
    kept = []
    for v in votes:
        c = cons[v.item]
        if c.flagged or (stage == "ais" and not c.interpretable):
            continue
        kept.append(v)
    m = _count_matrix(kept, stage)
    tp = fp = fn = tn = 0.0
    for v in kept:
        c = cons[v.item]
        truth = c.interpretable if stage == "int" else c.attributable
        if truth is None:
            continue
        yes, no = v.counts(stage)
        if truth:
            tp, fn = tp + yes, fn + no
        else:
            fp, tn = fp + yes, tn + no
    return _measured(stage, m, (tp, fp, fn, tn), n_items=len(m), n_ratings=int(m.sum()))


def _measured(stage: Stage, m: np.ndarray, confusion: tuple[float, float, float, float], *, n_items: int, n_ratings: int) -> Agreement:
    """The agreement measures of ``stage`` over the count matrix ``m`` (a row per unit: its yes and no ratings),
    F1 from the ratings' ``confusion`` counts (tp, fp, fn, tn) against the reference."""
    tp, fp, fn, tn = confusion
    return Agreement(stage=stage, f1=macro_f1(tp=tp, fp=fp, fn=fn, tn=tn), pairwise=pairwise_agreement(m), alpha=krippendorff_alpha(m),
                     kappa=fleiss_kappa(m), n_items=n_items, n_ratings=n_ratings)


def _metric_values(cs: Sequence[Consensus], metric: str) -> dict[str, float]:
    """Per-item 0/1 outcome of a metric (items outside its denominator are left out)."""
    if metric == "int":
        return {c.item: float(bool(c.interpretable)) for c in cs if not c.flagged and c.interpretable is not None}
    if metric == "ais":
        return {c.item: float(bool(c.attributable)) for c in cs if c.interpretable and c.attributable is not None}
    if metric == "flag":
        return {c.item: float(c.flagged) for c in cs}
    raise ConfigError(f"metric must be 'int', 'ais' or 'flag'; got {metric!r}.")


def significance(
    items: Iterable[Consensus],
    *,
    metric: Literal["int", "ais", "flag"],
    pair_key: Mapping[str, str] | None = None,
    n_resamples: int = 10_000,
    seed: int = 0,
    alpha_level: float = 0.01,
) -> Significance:
    """Permutation test of every system against the best one on ``metric`` (two-sided).

    When ``pair_key`` maps items to a shared example id (the same source
    example judged for several systems) and two systems share at least half
    of their examples, the test is paired: outcomes are swapped within shared
    examples (approximate randomization). Otherwise the pooled outcomes are
    shuffled between the systems. For ``flag`` the best system is the one
    with the *lowest* flag rate.
    """
    if n_resamples < 1:
        raise ConfigError(f"n_resamples must be >= 1; got {n_resamples}.")
    groups: dict[str, list[Consensus]] = defaultdict(list)
    for c in items:
        groups[c.system].append(c)
    values = {s: _metric_values(cs, metric) for s, cs in groups.items()}
    means = {s: float(np.mean(list(v.values()))) for s, v in values.items() if v}
    if not means:
        return Significance(metric=metric, best="", alpha_level=alpha_level, n_resamples=n_resamples)
    best = (min if metric == "flag" else max)(means, key=lambda s: means[s])
    rng = np.random.default_rng(seed)
    p_values: dict[str, float] = {}
    paired: dict[str, bool] = {}
    for s in means:
        if s == best:
            continue
        a_map, b_map = values[best], values[s]
        shared: list[tuple[float, float]] = []
        if pair_key is not None:
            ka = {pair_key.get(i, i): x for i, x in a_map.items()}
            kb = {pair_key.get(i, i): x for i, x in b_map.items()}
            common = sorted(set(ka) & set(kb))
            if len(common) * 2 >= min(len(ka), len(kb)) and common:
                shared = [(ka[k], kb[k]) for k in common]
        if shared:
            pairs = np.array(shared)
            observed = abs(pairs[:, 0].mean() - pairs[:, 1].mean())
            swap = rng.random((n_resamples, len(pairs))) < 0.5
            a = np.where(swap, pairs[None, :, 1], pairs[None, :, 0])
            b = np.where(swap, pairs[None, :, 0], pairs[None, :, 1])
            stats = np.abs(a.mean(axis=1) - b.mean(axis=1))
            paired[s] = True
        else:
            xa, xb = np.array(list(a_map.values())), np.array(list(b_map.values()))
            pooled = np.concatenate([xa, xb])
            observed = abs(xa.mean() - xb.mean())
            perm = np.argsort(rng.random((n_resamples, len(pooled))), axis=1)
            shuffled = pooled[perm]
            stats = np.abs(shuffled[:, : len(xa)].mean(axis=1) - shuffled[:, len(xa) :].mean(axis=1))
            paired[s] = False
        # add-one smoothing: a permutation p-value is never exactly 0
        p_values[s] = float((np.sum(stats >= observed - 1e-12) + 1) / (n_resamples + 1))
    return Significance(metric=metric, best=best, p_values=p_values, paired=paired, alpha_level=alpha_level, n_resamples=n_resamples)


def expert_agreement(judgments: Iterable[Judgment], *, expert: Mapping[str, bool | None], stage: Stage) -> Agreement:
    """Agreement of individual crowd ratings with an expert consensus (paper 003 Table 7, right half).

    ``expert`` maps item ids to the expert decision for ``stage``; ``None``
    ("either option acceptable") items are skipped. Every (crowd rating,
    expert label) pair is one unit: F1 is the macro F1 of crowd ratings
    against the expert label, ``pairwise`` the share of pairs that agree,
    alpha and kappa are computed over these two-rating units.
    """
    if stage not in STAGES:
        raise ConfigError(f"stage must be one of {STAGES}; got {stage!r}.")
    tp = fp = fn = tn = 0
    units: list[list[int]] = []
    for j in judgments:
        truth = expert.get(j.item)
        if truth is None or j.flagged:
            continue
        answer = j.interpretable if stage == "int" else (j.attributable if j.interpretable else None)
        if answer is None:
            continue
        tp += answer and truth
        fp += answer and not truth
        fn += (not answer) and truth
        tn += (not answer) and (not truth)
        units.append([int(answer) + int(truth), 2 - int(answer) - int(truth)])
    m = np.array(units, dtype=float).reshape(-1, 2)
    return _measured(stage, m, (tp, fp, fn, tn), n_items=len({i for i in expert if expert[i] is not None}), n_ratings=len(units))

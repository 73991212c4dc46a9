"""AIS human evaluation (paper 003): two-stage annotation app, agreement statistics and AutoAIS.

* :mod:`~veridic.ais._stats`: consensus, Int / AIS / Flag per system, F1 vs consensus,
  pairwise agreement, Krippendorff's alpha, Fleiss' kappa, permutation tests, expert agreement;
* :mod:`~veridic.ais._released`: importer of the released ratings (``ann_*.csv``);
* :mod:`~veridic.ais._report`: the report dict and its text rendering; :mod:`~veridic.ais._paper`: the paper's numbers;
* :mod:`~veridic.ais._store`: SQLAlchemy storage (SQLite by default, PostgreSQL by URL), alembic migrations, import/export;
* :mod:`~veridic.ais._web`: the FastAPI annotation app; :mod:`~veridic.ais._auto`: AutoAIS (NLI as a stage-2 rater);
* :mod:`~veridic.ais.cli`: ``veridic ais init | import | serve | export | report``.

The statistics import only numpy (and ``krippendorff`` for alpha); storage and
the web app need the ``ais`` extra.

>>> from veridic.ais import ItemVotes, consensus
>>> consensus([ItemVotes(item="x", system="s", int_yes=2, int_no=2)])[0].int_tie
True
"""

from veridic.ais._paper import PAPER_AGREEMENT, PAPER_SYSTEMS
from veridic.ais._released import ReleasedRow, read_released, released_dataset_name
from veridic.ais._report import build_report, format_report
from veridic.ais._stats import (
    STAGES,
    Agreement,
    Consensus,
    ItemVotes,
    Judgment,
    Significance,
    SystemScores,
    agreement,
    consensus,
    expert_agreement,
    fleiss_kappa,
    krippendorff_alpha,
    macro_f1,
    pairwise_agreement,
    significance,
    system_scores,
    votes_from_judgments,
)

__all__ = [
    "PAPER_AGREEMENT",
    "PAPER_SYSTEMS",
    "STAGES",
    "Agreement",
    "Consensus",
    "ItemVotes",
    "Judgment",
    "ReleasedRow",
    "Significance",
    "SystemScores",
    "agreement",
    "build_report",
    "consensus",
    "expert_agreement",
    "fleiss_kappa",
    "format_report",
    "krippendorff_alpha",
    "macro_f1",
    "pairwise_agreement",
    "read_released",
    "released_dataset_name",
    "significance",
    "system_scores",
    "votes_from_judgments",
]

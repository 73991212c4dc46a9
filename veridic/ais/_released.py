"""Import the released AIS ratings (``ann_cnn_dm.csv``, ``ann_qrecc.csv``, ``ann_wow.csv``, ``ann_totto.csv``).

The release keeps, per output, the consensus of the raters (``INT``,
``INT & AIS``, ``Flagged``) and how many raters voted for it
(``# agree (INT)``, ``# agree (AIS)``; ``-1`` when the question was not asked).
Individual votes are rebuilt from those counts:

* stage 1: the consensus answer got ``agree`` votes and the other answer the
  rest of the raters: 5, or 10 where the count exceeds 5 (a few ToTTo items
  were rated twice over);
* stage 2 is asked only of raters who found the output interpretable, so
  when the stage-1 consensus is yes the stage-2 raters are the stage-1
  ``agree`` raters.

Nominal alpha, Fleiss' kappa and pairwise agreement depend only on these
per-item counts, so nothing is lost for Table 7's crowd half.

>>> import io
>>> text = ("ex-idx,model-name,output,INT,INT & AIS,Flagged,Q1,Q2,# agree (INT),# agree (AIS)\\n"
...         "1,m,a summary,1,1,0,yes,yes,5,4\\n")
>>> r = read_released(io.StringIO(text))[0]
>>> (r.votes.int_yes, r.votes.int_no, r.votes.ais_yes, r.votes.ais_no)
(5, 0, 4, 1)
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from veridic.ais._stats import ItemVotes
from veridic.errors import DataFormatError, InputError

__all__ = ["REQUIRED_COLUMNS", "ReleasedRow", "read_released", "released_dataset_name"]

REQUIRED_COLUMNS = ("ex-idx", "model-name", "output", "INT", "INT & AIS", "Flagged", "# agree (INT)", "# agree (AIS)")


@dataclass(frozen=True, slots=True)
class ReleasedRow:
    """One released row: the example id, the output and the rebuilt votes."""

    example: str
    system: str
    output: str
    doc_url: str | None
    q1: str
    q2: str
    votes: ItemVotes


def released_dataset_name(path: str | Path) -> str | None:
    """``ann_cnn_dm.csv`` -> ``cnn_dm``; None for other names."""
    stem = Path(path).stem
    return stem[4:] if stem.startswith("ann_") else None


def _int(value: str, *, column: str, path: str, row: int) -> int:
    try:
        return int(value.strip())
    except (ValueError, AttributeError):
        raise DataFormatError(f"column {column!r} must be an integer; got {value!r}.", path=path, row=row) from None


def read_released(source: str | Path | TextIO, *, raters: int = 5) -> list[ReleasedRow]:
    """Read a released ``ann_*.csv`` file into rows with rebuilt votes (item ids are ``system/ex-idx``)."""
    name = str(source) if not isinstance(source, io.TextIOBase) else "<stream>"
    if isinstance(source, (str, Path)):
        p = Path(source)
        if not p.is_file():
            raise InputError(f"Released ratings file {str(p)!r} does not exist; expected one of ../shared/data/ais/ann_*.csv.")
        with p.open(encoding="utf-8", newline="") as fh:
            return _read(fh, name=name, raters=raters)
    return _read(source, name=name, raters=raters)


def _read(fh: TextIO, *, name: str, raters: int) -> list[ReleasedRow]:
    reader = csv.DictReader(fh)
    if reader.fieldnames is None:
        raise DataFormatError("the file is empty; expected a header row.", path=name)
    # the WoW release writes "ex-idx " with a trailing space
    fields = {f.strip(): f for f in reader.fieldnames}
    missing = [c for c in REQUIRED_COLUMNS if c not in fields]
    if missing:
        raise DataFormatError(f"missing columns {missing}; expected the released AIS columns {list(REQUIRED_COLUMNS)}, got {list(fields)}.", path=name)
    out: list[ReleasedRow] = []
    seen: dict[str, int] = {}
    for i, raw in enumerate(reader, start=2):
        r = {k.strip(): (v if v is not None else "") for k, v in raw.items() if k is not None}
        system = r["model-name"].strip()
        example = r["ex-idx"].strip()
        flagged = _int(r["Flagged"], column="Flagged", path=name, row=i) == 1
        interp = _int(r["INT"], column="INT", path=name, row=i) == 1
        attr = _int(r["INT & AIS"], column="INT & AIS", path=name, row=i) == 1
        a_int = _int(r["# agree (INT)"], column="# agree (INT)", path=name, row=i)
        a_ais = _int(r["# agree (AIS)"], column="# agree (AIS)", path=name, row=i)
        # the ToTTo release holds a few exact duplicates (same system, example and output); keep them apart
        key = f"{system}/{example}"
        seen[key] = seen.get(key, 0) + 1
        item = key if seen[key] == 1 else f"{key}#{seen[key]}"
        int_yes = int_no = ais_yes = ais_no = 0
        if a_int > 0:
            n = raters if a_int <= raters else 2 * raters
            other = max(n - a_int, 0)
            int_yes, int_no = (a_int, other) if interp else (other, a_int)
            if interp and a_ais > 0:
                other2 = max(a_int - a_ais, 0)
                ais_yes, ais_no = (a_ais, other2) if attr else (other2, a_ais)
        votes = ItemVotes(item=item, system=system, int_yes=int_yes, int_no=int_no, ais_yes=ais_yes, ais_no=ais_no, consensus_flag=flagged,
                          consensus_int=None if flagged else interp, consensus_ais=None if (flagged or not interp) else attr)
        url = r.get("doc-url", "").strip()
        out.append(ReleasedRow(example=example, system=system, output=r["output"], doc_url=None if url in ("", "NA") else url,
                               q1=r.get("Q1", ""), q2=r.get("Q2", ""), votes=votes))
    if not out:
        raise DataFormatError("no rows after the header.", path=name)
    return out

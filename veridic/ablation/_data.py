"""Factual-ablation examples (g, g′, c, y) and loaders (paper 001, §3.2).

An example holds a grounding ``g`` that supports the target ``y``, an
ablated grounding ``g′`` that does not, and the context ``c`` that ``y``
continues. A factually consistent model should find ``y`` more likely after
``g`` than after ``g′``.

Formats read by :func:`load_ablation_set`:

* West et al.'s synthetic set (``FA_synthetic_examples.jsonl``): one JSON
  object mapping an id to ``{source, new_source, context, target,
  new_target, source_replacement, target_replacement}``. Each entry yields
  two examples, (g, g′, c, y) and (g′, g, c, y′), sharing a ``group``.
* Flat rows (JSONL/CSV/Parquet) with ``grounding``, ``ablated_grounding``,
  ``context``, ``target`` (West's natural set names the groundings
  ``grounding_true``/``grounding_false``; ``id`` is optional).

>>> ex = AblationExample(grounding="Four miners were trapped.", ablated_grounding="Two miners were trapped.",
...                      context="The mine collapsed.", target="Four miners were stuck.", id="m1")
>>> ex.swap(target="Two miners were stuck.").grounding
'Two miners were trapped.'
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from veridic.errors import DataFormatError, InputError
from veridic.io._paths import default_data_dir
from veridic.io._records import read_records

__all__ = [
    "WEST_BROKEN_IDS",
    "AblationExample",
    "default_data_dir",
    "load_ablation_set",
    "load_west_synthetic",
    "west_synthetic_path",
]

#: Entries the authors' own loader skips (``FA_data_utils.get_FA_synthetic_dataset``
#: drops the 15th entry, id "65"): its target reads "five goals … another five"
#: and only the second "five" was edited, so y and y′ disagree with g′ and g.
WEST_BROKEN_IDS: tuple[str, ...] = ("65",)

_WEST_KEYS = {"source", "new_source", "context", "target", "new_target"}
_ALIASES = {
    "grounding": ("grounding", "g", "grounding_true", "source"),
    "ablated_grounding": ("ablated_grounding", "g_prime", "grounding_false", "new_source"),
    "context": ("context", "c"),
    "target": ("target", "y"),
}


@dataclass(frozen=True)
class AblationExample:
    """One factual-ablation test: ``target`` should prefer ``grounding`` over ``ablated_grounding``.

    ``group`` ties together examples built from one source item (both
    directions of a synthetic edit), so bootstrap resampling can keep them together.
    """

    grounding: str
    ablated_grounding: str
    context: str
    target: str
    id: str
    group: str | None = None

    def __post_init__(self) -> None:
        for name in ("grounding", "ablated_grounding", "target"):
            value = getattr(self, name)
            if not isinstance(value, str) or not value.strip():
                raise InputError(f"AblationExample {self.id!r}: {name} must be non-blank text; got {value!r:.60}.")
        if not isinstance(self.context, str):
            raise InputError(f"AblationExample {self.id!r}: context must be text (may be empty); got {type(self.context).__name__}.")
        if self.grounding == self.ablated_grounding:
            raise InputError(f"AblationExample {self.id!r}: grounding and ablated_grounding are identical; nothing was ablated.")

    def swap(self, *, target: str, id: str | None = None) -> AblationExample:
        """The reverse example (g′, g, c, y′) for the edited target ``y′``."""
        return replace(self, grounding=self.ablated_grounding, ablated_grounding=self.grounding, target=target, id=id or f"{self.id}:rev")

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "group": self.group, "grounding": self.grounding, "ablated_grounding": self.ablated_grounding, "context": self.context, "target": self.target}


def west_synthetic_path() -> Path:
    """Where West et al.'s synthetic set is expected: ``<data>/ablation/FA_synthetic_examples.jsonl``."""
    return default_data_dir() / "ablation" / "FA_synthetic_examples.jsonl"


def _is_west(rows: list[dict[str, Any]]) -> bool:
    return len(rows) == 1 and bool(rows[0]) and all(isinstance(v, Mapping) and _WEST_KEYS <= set(v) for v in rows[0].values())


def load_west_synthetic(path: str | Path | None = None, *, include_broken: bool = False) -> list[AblationExample]:
    """West et al.'s synthetic set as 2 examples per entry (ids ``<id>:orig`` and ``<id>:edit``).

    By default the entry the authors' loader skips is left out
    (:data:`WEST_BROKEN_IDS`): 84 entries → 168 examples; ``include_broken=True`` gives 170.
    """
    p = Path(path) if path is not None else west_synthetic_path()
    if not p.exists():
        raise InputError(f"West et al.'s synthetic set is not at {str(p)!r}; set VERIDIC_DATA or pass the path.")
    rows = list(read_records(p))
    if not _is_west(rows):
        raise DataFormatError(
            "expected one JSON object mapping ids to {source, new_source, context, target, new_target, ...} "
            f"(West et al.'s format); got {len(rows)} record(s) with keys {sorted(rows[0])[:6] if rows else []}.",
            path=str(p),
        )
    return _from_west(rows[0], path=str(p), include_broken=include_broken)


def _from_west(table: Mapping[str, Any], *, path: str, include_broken: bool) -> list[AblationExample]:
    out: list[AblationExample] = []
    for n, (key, e) in enumerate(table.items(), start=1):
        if not include_broken and str(key) in WEST_BROKEN_IDS:
            continue
        try:
            base = AblationExample(
                grounding=e["source"], ablated_grounding=e["new_source"], context=e["context"], target=e["target"], id=f"{key}:orig", group=str(key)
            )
            out.append(base)
            out.append(base.swap(target=e["new_target"], id=f"{key}:edit"))
        except InputError as exc:
            raise DataFormatError(str(exc), path=path, row=n) from None
    return out


def _field(row: Mapping[str, Any], name: str, *, path: str, row_number: int) -> Any:
    for alias in _ALIASES[name]:
        if alias in row:
            return row[alias]
    if name == "context":
        return ""
    raise DataFormatError(f"missing column {name!r} (or one of {', '.join(_ALIASES[name][1:])}); the row has columns {sorted(row)}.", path=path, row=row_number)


def load_ablation_set(path: str | Path, *, include_broken: bool = False) -> list[AblationExample]:
    """Read an ablation set in West's synthetic format or as flat rows (see module docs)."""
    p = Path(path)
    rows = list(read_records(p))
    if _is_west(rows):
        return _from_west(rows[0], path=str(p), include_broken=include_broken)
    out = []
    for i, row in enumerate(rows, start=1):
        try:
            out.append(
                AblationExample(
                    grounding=_field(row, "grounding", path=str(p), row_number=i),
                    ablated_grounding=_field(row, "ablated_grounding", path=str(p), row_number=i),
                    context=_field(row, "context", path=str(p), row_number=i) or "",
                    target=_field(row, "target", path=str(p), row_number=i),
                    id=str(row.get("id", i)),
                    group=None if row.get("group") is None else str(row["group"]),
                )
            )
        except InputError as exc:
            if isinstance(exc, DataFormatError):
                raise
            raise DataFormatError(str(exc), path=str(p), row=i) from None
    if not out:
        raise DataFormatError("the file holds no examples.", path=str(p))
    return out

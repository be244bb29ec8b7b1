"""Atomic file writes and safe file names: a crash never leaves a half-written dump file."""

from __future__ import annotations

import json
import os
import re
import secrets
import tempfile
from pathlib import Path

try:  # compiled when the package was built with a C compiler (_filebatch.c)
    from msprobe_runtime.core import _filebatch
except ImportError:  # pragma: no cover - exercised only without a C compiler
    _filebatch = None

_UNSAFE = re.compile(r"[^A-Za-z0-9._\-]")
_NEW_FILE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
_TEMPORARY = f".{secrets.token_hex(4)}.tmp"  # this process's temporary names end so


def _read_umask() -> int:
    umask = os.umask(0o022)
    os.umask(umask)
    return umask


NEW_FILE_MODE = 0o666 & ~_read_umask()  # what open() gives a new file; temporary files start as 0600


def safe_filename(name: str, max_length: int = 200) -> str:
    """A name usable as one path component: no separators, no `..`, no odd characters."""
    cleaned = _UNSAFE.sub("_", name).strip(".") or "_"
    return cleaned[:max_length]


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> None:
    """Write `data` to `path` via a temporary file in the same folder and a rename."""
    target = Path(path)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    except FileNotFoundError:  # the folder is new: make it (a step writes many files into one folder)
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        os.fchmod(fd, NEW_FILE_MODE)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def atomic_write_text(path: str | os.PathLike, text: str) -> None:
    """Atomically write UTF-8 text."""
    atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_json(path: str | os.PathLike, obj: object) -> None:
    """Atomically write `obj` as indented JSON."""
    atomic_write_text(path, json.dumps(obj, indent=1, ensure_ascii=False))


def run_file_ops(ops: list[tuple]) -> None:
    """Run file operations in order, stopping at the first failure (OSError): ("makedirs", path),
    ("mkdir", path) (a new folder), ("new", path, mode, chunk, ...) (a new file holding the bytes-like
    chunks; the umask applies to `mode`) and ("rename", source, target). Where core._filebatch is built
    they run in one call that releases the GIL once: a writer thread then does not take the GIL back
    from the training thread after every system call. On failure the temporary files of
    atomic_file_ops are removed."""
    try:
        if _filebatch is not None:
            _filebatch.run(ops)
        else:
            _run_one_by_one(ops)
    except OSError:
        _discard_temporaries(ops)
        raise


def _run_one_by_one(ops: list[tuple]) -> None:
    for kind, path, *rest in ops:
        if kind == "makedirs":
            os.makedirs(path, exist_ok=True)
        elif kind == "mkdir":
            os.mkdir(path)
        elif kind == "rename":
            os.rename(path, rest[0])
        else:
            _new_file(path, rest[0], rest[1:])


def _new_file(path, mode: int, chunks) -> None:
    handle = os.open(path, _NEW_FILE_FLAGS, mode)
    try:
        for chunk in chunks:
            view = memoryview(chunk).cast("B")
            while view:
                view = view[os.write(handle, view) :]
    finally:
        os.close(handle)


def atomic_file_ops(path: str | os.PathLike, *chunks) -> list[tuple]:
    """run_file_ops operations that write `path` atomically: a new temporary file beside it, renamed
    over it (the mode open() gives new files)."""
    path = os.fspath(path)
    folder, name = os.path.split(path)
    temporary = os.path.join(folder, f".{name}{_TEMPORARY}")
    return [("new", temporary, 0o666, *chunks), ("rename", temporary, path)]


def _discard_temporaries(ops: list[tuple]) -> None:
    for kind, path, *_ in ops:
        if kind == "new" and os.fspath(path).endswith(_TEMPORARY):
            Path(path).unlink(missing_ok=True)

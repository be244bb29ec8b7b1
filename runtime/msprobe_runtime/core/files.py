"""Atomic file writes and safe file names: a crash never leaves a half-written dump file."""

from __future__ import annotations

import json
import os
import re
import tempfile
from pathlib import Path

_UNSAFE = re.compile(r"[^A-Za-z0-9._\-]")


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

"""The content-hash result cache: one JSON file per tool fingerprint, written atomically.

An entry belongs to an absolute path and holds the selected rule codes, the content hash, a stat
snapshot, the findings without their path, and the project-local files the result depends on
(`dependencies.py`). A stat snapshot is trusted only when the file was last
modified well before it was read (the "racy" case falls back to hashing). The fingerprint covers the
tool version, the Python version and the source of the whole `msprobe_rewriter` package, so any change
to a rule starts a fresh cache. A missing, unreadable or corrupt cache is an empty cache, never an error.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import msprobe_rewriter

CACHE_DIR_ENV = "MSPROBE_LINT_CACHE_DIR"
DEFAULT_DIR_NAME = ".msprobe_lint_cache"
FORMAT = 1
RACY_NS = 2_000_000_000  # mtimes this close to the read time may hide a later same-tick write


def digest(data: bytes) -> str:
    """The content hash used as a cache key."""
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def stat_key(st: os.stat_result) -> list[int]:
    """The parts of a stat result that change when a file's content may have changed."""
    return [st.st_size, st.st_mtime_ns, st.st_ino]


def fingerprint() -> str:
    """Tool version, Python version and a hash of every module of the package (rules included)."""
    package = Path(msprobe_rewriter.__file__).parent
    hasher = hashlib.blake2b(digest_size=16)
    hasher.update(f"{FORMAT}:{msprobe_rewriter.__version__}:{sys.version_info[:2]}".encode())
    for path in sorted(package.rglob("*.py")):
        hasher.update(str(path.relative_to(package)).encode())
        try:
            hasher.update(path.read_bytes())
        except OSError:
            hasher.update(b"?")
    return hasher.hexdigest()


def default_directory(project_root: Path) -> Path:
    """`$MSPROBE_LINT_CACHE_DIR`, else `.msprobe_lint_cache/` in the project root."""
    configured = os.environ.get(CACHE_DIR_ENV)
    return Path(configured) if configured else project_root / DEFAULT_DIR_NAME


class LintCache:
    """Results by absolute path; `directory=None` gives a cache that remembers nothing."""

    def __init__(self, directory: Path | None) -> None:
        self.directory = directory
        self.entries: dict[str, dict] = {}
        self.changed = False
        if directory is not None:
            self.file = directory / f"lint-{fingerprint()}.json"
            self.entries = self._load()

    def _load(self) -> dict[str, dict]:
        try:
            with open(self.file, encoding="utf-8") as handle:
                document = json.load(handle)
        except (OSError, ValueError):
            return {}
        entries = document.get("entries") if isinstance(document, dict) else None
        return entries if isinstance(entries, dict) else {}

    def entry(self, path: str, codes: str) -> dict | None:
        """The entry stored for `path` when it was linted with the same `codes` (rule codes and project root)."""
        entry = self.entries.get(path)
        return entry if isinstance(entry, dict) and entry.get("codes") == codes else None

    @staticmethod
    def unchanged(entry: dict, st: os.stat_result) -> bool:
        """Whether the file's stat proves it unchanged since the entry's content was hashed."""
        return entry.get("stat") == stat_key(st) and st.st_mtime_ns < entry.get("read_ns", 0) - RACY_NS

    def store(self, path: str, codes: str, stat: list[int], read_ns: int, content_hash: str, payload: dict,
              dependencies: dict) -> None:
        """Remember a file's result, with the project files it depends on (or refresh its stat)."""
        if self.directory is None:
            return
        self.entries[path] = {"codes": codes, "stat": stat, "read_ns": read_ns, "hash": content_hash,
                              "payload": payload, "deps": dependencies}
        self.changed = True

    def save(self) -> None:
        """Write the cache atomically; failures (read-only folder, full disk) are ignored."""
        if self.directory is None or not self.changed:
            return
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            ignore = self.directory / ".gitignore"
            if not ignore.exists():
                ignore.write_text("# created by msprobe-lint\n*\n", encoding="utf-8")
            handle, temporary = tempfile.mkstemp(dir=self.directory, prefix=".lint-", suffix=".tmp")
            try:
                with os.fdopen(handle, "w", encoding="utf-8") as out:
                    json.dump({"format": FORMAT, "entries": self.entries}, out, separators=(",", ":"))
                os.chmod(temporary, 0o666 & ~_umask())
                os.replace(temporary, self.file)
            except BaseException:
                os.unlink(temporary)
                raise
            for stale in self.directory.glob("lint-*.json"):
                if stale != self.file:
                    stale.unlink(missing_ok=True)
        except OSError:
            return


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def now_ns() -> int:
    """Wall-clock nanoseconds, the time base of stat mtimes."""
    return time.time_ns()

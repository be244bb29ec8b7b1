"""Which project-local files a lint result depends on, and whether they are still what they were.

seed-missing (and the rules sharing its analysis) follow project-local imports through
`msprobe_rewriter.project`: a script's findings can change when a helper it imports changes, or when a
module it looked for appears. While one file is linted, `Recorder` wraps `project.find_module` and
`project.load` to note every module look-up (with its answer) and every file read. A cached result is
reused only while each look-up gives the same answer and each file read has the same content. Code
that follows imports must call them through the module (`project.find_module(...)`), never bind them
by name (`tests/test_cli.py` checks the package for that).
"""

from __future__ import annotations

import os
from pathlib import Path

from msprobe_rewriter import project
from msprobe_rewriter.lint.cache import RACY_NS, digest, now_ns, stat_key


class _Spy:
    """Calls `function`, reports each call to `note`, and passes attribute access (`cache_clear`) through."""

    def __init__(self, function, note) -> None:
        self._function, self._note = function, note

    def __call__(self, *args):
        result = self._function(*args)
        self._note(args, result)
        return result

    def __getattr__(self, name: str):
        return getattr(self._function, name)


class Recorder:
    """Context manager noting the project look-ups and reads made while one file is linted."""

    def __enter__(self) -> Recorder:
        self.lookups: dict[tuple, str | None] = {}
        self.files: dict[str, list | None] = {}  # snapshot taken when the file is loaded
        self._find, self._load = project.find_module, project.load
        project.find_module = _Spy(self._find, self._note_lookup)
        project.load = _Spy(self._load, self._note_load)
        return self

    def __exit__(self, *exc_info) -> None:
        project.find_module, project.load = self._find, self._load

    def _note_lookup(self, args: tuple, found) -> None:
        folder, module, level = args
        self.lookups[(str(folder), module, level)] = None if found is None else str(found)

    def _note_load(self, args: tuple, module) -> None:
        path = str(args[0])
        if path not in self.files:
            self.files[path] = file_snapshot(path)

    def dependencies(self) -> dict | None:
        """The look-ups and file snapshots to re-check; None when a file read could not be snapshot."""
        if any(snapshot is None for snapshot in self.files.values()):
            return None
        if not self.lookups and not self.files:
            return {}
        return {"lookups": [[*key, found] for key, found in self.lookups.items()], "files": self.files}


def file_snapshot(path: str) -> list | None:
    """`[size, mtime_ns, inode, read_ns, content hash]` of a file, or None if it cannot be read."""
    try:
        st = os.stat(path)
        read_ns = now_ns()
        with open(path, "rb") as handle:
            return [*stat_key(st), read_ns, digest(handle.read())]
    except OSError:
        return None


def still_valid(dependencies: dict | None, memo: dict) -> bool:
    """Whether every recorded look-up and file read would give the same answer now."""
    if not dependencies:
        return dependencies == {}
    try:
        find = getattr(project.find_module, "__wrapped__", project.find_module)  # bypass the lru_cache
        for folder, module, level, found in dependencies["lookups"]:
            key = ("lookup", folder, module, level)
            if key not in memo:
                answer = find(Path(folder), module, level)
                memo[key] = None if answer is None else str(answer)
            if memo[key] != found:
                return False
        return all(_same_file(path, snapshot, memo) for path, snapshot in dependencies["files"].items())
    except (KeyError, TypeError, ValueError, OSError):
        return False


def _same_file(path: str, snapshot: list, memo: dict) -> bool:
    size, mtime_ns, inode, read_ns, content_hash = snapshot
    key = ("file", path)
    if key not in memo:
        try:
            st = os.stat(path)
        except OSError:
            memo[key] = None
        else:
            trusted = stat_key(st) == [size, mtime_ns, inode] and mtime_ns < read_ns - RACY_NS
            memo[key] = content_hash if trusted else (file_snapshot(path) or [None])[-1]
    return memo[key] == content_hash

"""Lint many files: cache look-ups, reading, a process pool for the misses, results in a stable order.

A cached result is reused when the file is unchanged (stat, else content hash) and so are the
project-local files it depends on (see `dependencies.py`). A failure inside a rule is caught per file
and reported as an internal error; the run goes on.
"""

from __future__ import annotations

import multiprocessing
import os
import stat
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field, replace

from msprobe_rewriter import project
from msprobe_rewriter.finding import FileError, Finding
from msprobe_rewriter.lint.cache import LintCache, digest, now_ns, stat_key
from msprobe_rewriter.lint.dependencies import Recorder, still_valid
from msprobe_rewriter.lint.discovery import Target
from msprobe_rewriter.lint.engine import LintResult, lint_source
from msprobe_rewriter.lint.selection import rules_for

INTERNAL_PREFIX = "internal error"
FILES_PER_WORKER = 24  # below this many files per process, a pool costs more than it saves


@dataclass(frozen=True)
class Task:
    """One file to lint with its own rule codes (per-file ignores already applied)."""

    target: Target
    codes: tuple[str, ...]
    known_hash: str | None = None


@dataclass
class Outcome:
    """What a worker reports for one task; `unchanged` means the content hash matched the cache."""

    result: LintResult
    content_hash: str | None = None
    stat: list[int] | None = None
    read_ns: int = 0
    dependencies: dict | None = None  # None: the result must not be cached
    unchanged: bool = False


@dataclass
class RunReport:
    """Everything the output formats need about one run."""

    findings: list[Finding] = field(default_factory=list)
    errors: list[FileError] = field(default_factory=list)
    files: int = 0

    @property
    def internal_errors(self) -> int:
        """Errors that are failures of the tool itself, not of the input."""
        return sum(error.message.startswith(INTERNAL_PREFIX) for error in self.errors)


def lint_bytes(display: str, data: bytes, codes: Sequence[str]) -> LintResult:
    """Lint one file's bytes; a crash inside a rule becomes an internal-error entry."""
    try:
        return lint_source(display, data, rules_for(codes))
    except Exception as exc:  # noqa: BLE001 - one broken rule must not stop the run
        return LintResult(errors=[FileError(display, f"{INTERNAL_PREFIX}: {type(exc).__name__}: {exc}; "
                                                     "please report this with the file")])


def read_error(path: str, exc: OSError) -> str:
    """One line saying why a file could not be read."""
    reason = (exc.strerror or str(exc)).lower()
    if os.path.islink(path) and not os.path.exists(path):
        hint = " (a symlink loop)" if "symbolic links" in reason else " (a dangling symlink)"
        return f"cannot read: {reason}{hint}"
    return f"cannot read: {reason}"


def lint_task(task: Task) -> Outcome:
    """Read, hash and lint one file (runs in a worker process)."""
    display, path = task.target.display, task.target.path
    try:
        st = os.stat(path)
        if not stat.S_ISREG(st.st_mode):
            return Outcome(LintResult(errors=[FileError(display, "cannot read: not a regular file")]))
        read_ns = now_ns()
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError as exc:
        return Outcome(LintResult(errors=[FileError(display, read_error(path, exc))]))
    content_hash = digest(data)
    if content_hash == task.known_hash:
        return Outcome(LintResult(), content_hash, stat_key(st), read_ns, unchanged=True)
    with Recorder() as recorder:
        result = lint_bytes(display, data, task.codes)
    failed = any(e.message.startswith(INTERNAL_PREFIX) for e in result.errors)
    return Outcome(result, content_hash, stat_key(st), read_ns, None if failed else recorder.dependencies())


def _lint_chunk(tasks: list[Task]) -> list[Outcome]:
    return [lint_task(task) for task in tasks]


def auto_jobs(count: int) -> int:
    """Worker processes for `count` files: one until the pool pays off, at most one per CPU."""
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(1, min(cpus, count // FILES_PER_WORKER))


def execute(tasks: list[Task], jobs: int | None) -> list[Outcome]:
    """Outcomes in task order, in a process pool when it pays off (serially if it cannot start)."""
    workers = min(jobs or auto_jobs(len(tasks)), max(1, len(tasks)))
    if workers <= 1:
        return _lint_chunk(tasks)
    size = max(1, len(tasks) // (workers * 8))
    chunks = [tasks[i:i + size] for i in range(0, len(tasks), size)]
    methods = multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("fork" if "fork" in methods else None)
    try:
        with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
            return [outcome for chunk in pool.map(_lint_chunk, chunks) for outcome in chunk]
    except (OSError, BrokenProcessPool):
        return _lint_chunk(tasks)


def run(tasks: Sequence[Task], cache: LintCache, jobs: int | None = None) -> list[LintResult]:
    """Lint every task, reusing cached results; one result per task, in task order."""
    results: list[LintResult | None] = [None] * len(tasks)
    pending: list[tuple[int, Task, dict | None]] = []
    memo: dict = {}  # dependency checks shared by all entries
    for index, task in enumerate(tasks):
        entry = _usable_entry(cache, task, memo)
        if entry is not None and _stat_unchanged(cache, entry, task.target.path):
            results[index] = restore(task.target.display, entry["payload"])
            continue
        known = entry["hash"] if entry is not None else None
        pending.append((index, replace(task, known_hash=known), entry))
    outcomes = execute([task for _, task, _ in pending], jobs)
    for (index, task, entry), outcome in zip(pending, outcomes, strict=True):
        codes = _settings(task)
        if outcome.unchanged and entry is not None:
            results[index] = restore(task.target.display, entry["payload"])
            cache.store(task.target.path, codes, outcome.stat, outcome.read_ns, outcome.content_hash,
                        entry["payload"], entry.get("deps", {}))
            continue
        results[index] = outcome.result
        if outcome.dependencies is not None and outcome.stat is not None:
            cache.store(task.target.path, codes, outcome.stat, outcome.read_ns, outcome.content_hash,
                        to_payload(outcome.result), outcome.dependencies)
    cache.save()
    return [result or LintResult() for result in results]


def _usable_entry(cache: LintCache, task: Task, memo: dict) -> dict | None:
    """The cache entry for `task` if it restores cleanly and its dependencies are unchanged."""
    entry = cache.entry(task.target.path, _settings(task))
    if entry is None or restore(task.target.display, entry.get("payload")) is None:
        return None
    return entry if still_valid(entry.get("deps"), memo) else None


def _settings(task: Task) -> str:
    """What a file's result depends on besides the files themselves: its rule codes and its project's root (which
    files count as its project: a marker added above it, or a command run from another folder, changes it)."""
    return f"{','.join(task.codes)}@{project.project_root(project.file_folder(task.target.path))}"


def _stat_unchanged(cache: LintCache, entry: dict, path: str) -> bool:
    try:
        return cache.unchanged(entry, os.stat(path))
    except OSError:
        return False


def collect(results: Sequence[LintResult | None], files: int, errors: Sequence[FileError] = ()) -> RunReport:
    """Merge per-file results (and discovery errors) into one sorted report."""
    report = RunReport(files=files, errors=list(errors))
    for result in results:
        if result is not None:
            report.findings.extend(result.findings)
            report.errors.extend(result.errors)
    report.findings.sort(key=lambda f: (f.path, f.line, f.column, f.code))
    report.errors.sort(key=lambda e: e.path)
    return report


def to_payload(result: LintResult) -> dict:
    """A result without paths, as stored in the cache."""
    return {"findings": [[f.line, f.column, f.end_line, f.end_column, f.code, f.name, f.severity, f.message,
                          f.fixable] for f in result.findings],
            "errors": [e.message for e in result.errors]}


def restore(display: str, payload: dict | None) -> LintResult | None:
    """Rebuild a cached result for the path as shown in this run; None for a missing or corrupt one."""
    if payload is None:
        return None
    try:
        return LintResult(findings=[Finding(display, *row) for row in payload["findings"]],
                          errors=[FileError(display, str(message)) for message in payload["errors"]])
    except (TypeError, KeyError):
        return None

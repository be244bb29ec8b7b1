"""Lint every .py file of the installed torch and numpy packages: no crash, no internal error, and an
`errors` entry only for a file the stdlib parser rejects too (files that mention no framework are not
parsed at all, so not every unparsable file gets an entry).

At the pinned versions (torch 2.13.0, numpy 1.26.4, Python 3.11) the only such file is
`torch/testing/_internal/py312_intrinsics.py` (Python 3.12 `type` statements)."""

from __future__ import annotations

import ast
import importlib.util
import os
import warnings
from pathlib import Path

import pytest
from msprobe_rewriter.lint import runner
from msprobe_rewriter.lint.cache import LintCache
from msprobe_rewriter.lint.discovery import Discovery
from msprobe_rewriter.lint.selection import resolve

ALL_CODES = tuple(sorted(resolve("ALL")))


def package_folder(name: str) -> Path:
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        pytest.skip(f"{name} is not installed")
    return Path(next(iter(spec.submodule_search_locations)))


def python_files(folder: Path) -> set[str]:
    return {os.path.join(d, f) for d, dirs, files in os.walk(folder) for f in files if f.endswith(".py")}


def stdlib_rejects(path: str) -> bool:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ast.parse(Path(path).read_bytes())
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return True
    return False


@pytest.mark.parametrize("package", ["torch", "numpy"])
def test_lint_every_file_of_an_installed_package(package):
    folder = package_folder(package)
    targets, discovery_errors = Discovery(folder).collect([str(folder)])
    assert discovery_errors == []
    assert {t.path for t in targets} == python_files(folder)  # nothing skipped: every .py is linted
    tasks = [runner.Task(target, ALL_CODES) for target in targets]
    report = runner.collect(runner.run(tasks, LintCache(None)), len(tasks))
    assert report.internal_errors == 0, [e for e in report.errors if e.message.startswith("internal")]
    assert all(e.message.startswith("cannot parse: ") and stdlib_rejects(e.path) for e in report.errors)
    assert report.findings, f"no finding at all in {package}: the rules did not run"

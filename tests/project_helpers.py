"""Small projects on disk, for the tests of rules and transforms that read other files of the project."""

from __future__ import annotations

import textwrap
from pathlib import Path

from msprobe_rewriter.finding import Finding
from msprobe_rewriter.lint.engine import lint_source
from msprobe_rewriter.rules import RULES_BY_NAME


def write(root: Path, files: dict[str, str]) -> Path:
    """Write each file of `files` (name -> text, dedented) under `root`, folders included; returns `root`."""
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return root


def lint_findings(path: Path, *names: str) -> list[Finding]:
    """The findings of the named rules on `path`, which must lint without errors."""
    result = lint_source(str(path), path.read_bytes(), [RULES_BY_NAME[name] for name in names])
    assert not result.errors
    return result.findings


def lint(path: Path, *names: str) -> list[tuple[str, int]]:
    """(rule name, line) of every finding of the named rules on `path`."""
    return [(f.name, f.line) for f in lint_findings(path, *names)]

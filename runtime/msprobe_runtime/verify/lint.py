"""Lint findings at or near a source line, from msprobe-lint run in a subprocess (JSON contract v1)."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

NEAR_LINES = 5


@dataclass
class Finding:
    """One msprobe-lint finding."""

    path: str
    line: int
    column: int
    code: str
    name: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}:{self.column} {self.code} {self.name}: {self.message}"


def findings(path: Path, timeout: float = 120.0) -> tuple[list[Finding], str | None]:
    """All findings msprobe-lint reports for `path`, or ([], reason) when it could not be asked."""
    command = [sys.executable, "-m", "msprobe_rewriter.lint", "--format", "json", "--no-cache", str(path)]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=False)
    except (OSError, subprocess.TimeoutExpired) as error:
        return [], f"msprobe-lint could not run: {error}"
    try:
        report = json.loads(done.stdout)
    except ValueError:
        reason = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return [], f"msprobe-lint gave no JSON report ({reason})"
    found = [Finding(item["path"], item["line"], item["column"], item["code"], item["name"], item["message"])
             for item in report.get("findings", [])]
    return found, None


def near(all_findings: list[Finding], line: int, distance: int = NEAR_LINES) -> list[Finding]:
    """Findings within `distance` lines of `line`, closest first."""
    close = [finding for finding in all_findings if abs(finding.line - line) <= distance]
    return sorted(close, key=lambda finding: (abs(finding.line - line), finding.line, finding.column))

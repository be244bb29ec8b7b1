"""GitHub Actions workflow commands: one `::error|warning|notice ...::message` line per finding."""

from __future__ import annotations

from msprobe_rewriter.lint.formats.options import RenderOptions
from msprobe_rewriter.lint.runner import RunReport

LEVELS = {"error": "error", "warning": "warning", "info": "notice"}


def escape_data(text: str) -> str:
    """Escape a command's message as the Actions runner expects."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """Escape a command property value (also `:` and `,`, which delimit properties)."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def render(report: RunReport, options: RenderOptions | None = None) -> str:
    """Annotations for findings, then an `::error` for each file that could not be linted."""
    lines = []
    for f in report.findings:
        props = (f"file={escape_property(f.path)},line={f.line},col={f.column},endLine={f.end_line},"
                 f"endColumn={f.end_column},title={escape_property(f'{f.code} [{f.name}]')}")
        lines.append(f"::{LEVELS.get(f.severity, 'warning')} {props}::{escape_data(f.message)}\n")
    for e in report.errors:
        lines.append(f"::error file={escape_property(e.path)},title=msprobe-lint::{escape_data(e.message)}\n")
    return "".join(lines)

"""The human format: `path:line:col: MSPxxx [name] message`, the source line with a caret, a summary."""

from __future__ import annotations

import unicodedata

from msprobe_rewriter.finding import Finding
from msprobe_rewriter.lint.formats import statistics
from msprobe_rewriter.lint.formats.options import RenderOptions
from msprobe_rewriter.lint.runner import RunReport

SEVERITY_COLORS = {"error": "31", "warning": "33", "info": "36"}  # red, yellow, cyan
MAX_ECHO = 200  # longer source lines are cut in the echo


def _paint(text: str, code: str, color: bool) -> str:
    return f"\033[{code}m{text}\033[0m" if color else text


def plural(count: int, word: str, many: str | None = None) -> str:
    """`1 finding`, `2 findings`."""
    return f"{count} {word if count == 1 else (many or word + 's')}"


def caret_line(line: str, finding: Finding) -> str:
    """Spaces (tabs kept, wide characters doubled) up to the column, then `^` and `~` under the span."""
    start = max(finding.column - 1, 0)
    pad = "".join("\t" if ch == "\t" else " " * _width(ch) for ch in line[:start])
    end = finding.end_column - 1 if finding.end_line == finding.line else len(line)
    span = sum(_width(ch) for ch in line[start:max(end, start + 1)]) or 1
    return pad + "^" + "~" * (span - 1)


def _width(ch: str) -> int:
    return 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1


def finding_block(finding: Finding, lines: list[str], color: bool) -> str:
    """The header line of one finding, then its source line and caret when the source is at hand."""
    severity_color = SEVERITY_COLORS.get(finding.severity, "0")
    header = (f"{_paint(finding.path, '1', color)}:{finding.line}:{finding.column}: "
              f"{_paint(finding.code, '1;' + severity_color, color)} {_paint('[' + finding.name + ']', '2', color)} "
              f"{finding.message}\n")
    if not 0 < finding.line <= len(lines):
        return header
    line = lines[finding.line - 1]
    if len(line) > MAX_ECHO:
        if finding.column > MAX_ECHO:
            return header
        line = line[:MAX_ECHO]
    return header + f"    {line}\n    {_paint(caret_line(line, finding), severity_color, color)}\n"


def summary(report: RunReport, color: bool) -> str:
    """The closing lines: counts by severity, files, unreadable files and the --explain hint."""
    findings = report.findings
    unreadable = len(report.errors)
    tail = f"; {plural(unreadable, 'file')} could not be linted" if unreadable else ""
    if not findings:
        if not report.files and not unreadable:
            return ""  # nothing was linted (every path excluded): stay quiet, as with no path at all
        return f"No findings in {plural(report.files, 'file')} checked{tail}.\n"
    by_severity = {s: sum(f.severity == s for f in findings) for s in ("error", "warning", "info")}
    files = len({f.path for f in findings})
    text = (f"{plural(len(findings), 'finding')} ({plural(by_severity['error'], 'error')}, "
            f"{plural(by_severity['warning'], 'warning')}, {by_severity['info']} info) in "
            f"{plural(files, 'file')} ({report.files} checked){tail}.\n")
    example = findings[0].code
    return (_paint(text, "1", color)
            + f"Run `msprobe-lint --explain {example}` (or any rule code or name) for why and how to fix.\n")


def render(report: RunReport, options: RenderOptions) -> str:
    """Findings grouped by file in path order, file errors, then the summary (statistics instead of
    the finding list with --statistics)."""
    parts = []
    if options.statistics:
        parts.append(statistics.table(report.findings))
    else:
        current, lines = None, []
        for finding in report.findings:
            if finding.path != current:
                current, lines = finding.path, options.lines_of(finding.path)
            parts.append(finding_block(finding, lines, options.color))
    for error in report.errors:
        parts.append(f"{_paint(error.path, '1', options.color)}: {_paint('error:', '1;31', options.color)} "
                     f"{error.message}\n")
    parts.append(summary(report, options.color))
    return "".join(parts)

"""`# noqa` and `# msprobe-lint: skip-file` handling, and reporting suppressions that suppress nothing."""

from __future__ import annotations

import re

from msprobe_rewriter.finding import Finding

NOQA = re.compile(r"#\s*noqa(?::\s*(?P<codes>[A-Za-z0-9_\-]+(?:\s*,\s*[A-Za-z0-9_\-]+|\s+(?=[A-Z]{3}\d))*))?",
                  re.IGNORECASE)
SKIP_FILE = re.compile(r"^\s*#\s*msprobe-lint:\s*skip-file\b", re.MULTILINE)
UNUSED_NOQA_CODE = "MSP901"
UNUSED_NOQA_NAME = "unused-noqa"


def skips_file(source: str) -> bool:
    """Whether the file opts out with `# msprobe-lint: skip-file`."""
    return "skip-file" in source and SKIP_FILE.search(source) is not None


def parse_noqa(line: str) -> set[str] | None:
    """None: no noqa on the line; empty set: bare `# noqa`; else the codes/names listed (upper-cased)."""
    if "noqa" not in line.lower():
        return None
    match = NOQA.search(line)
    if match is None:
        return None
    codes = match.group("codes")
    if not codes:
        return set()
    return {c.strip().upper() for c in re.split(r"[,\s]+", codes) if c.strip()}


def apply(path: str, lines: list[str], findings: list[Finding],
          active_codes: frozenset[str] | None = None) -> list[Finding]:
    """Drop findings suppressed on their first line.

    With `active_codes` (the codes and upper-cased names of the rules that ran), also report
    `# noqa: MSPxxx` / `# noqa: rule-name` entries among them that suppressed nothing, as `unused-noqa`.
    """
    kept: list[Finding] = []
    used: dict[int, set[str]] = {}
    for finding in findings:
        line = lines[finding.line - 1] if finding.line <= len(lines) else ""
        codes = parse_noqa(line)
        if codes is None:
            kept.append(finding)
            continue
        matched = {c for c in codes if c in (finding.code.upper(), finding.name.upper())}
        if codes and not matched:
            kept.append(finding)
            continue
        used.setdefault(finding.line, set()).update(matched or {"*"})
    if active_codes is not None:
        kept.extend(_unused(lines, path, used, active_codes))
    return kept


def _unused(lines: list[str], path: str, used: dict[int, set[str]], active: frozenset[str]) -> list[Finding]:
    result = []
    for number, line in enumerate(lines, start=1):
        codes = parse_noqa(line)
        if not codes:
            continue  # bare `# noqa` may serve other tools; only our own codes are checked
        ours = {c for c in codes if c in active}
        stale = sorted(ours - used.get(number, set()))
        if stale:
            column = line.lower().find("noqa") + 1
            result.append(Finding(path, number, column, number, len(line) + 1, UNUSED_NOQA_CODE,
                                  UNUSED_NOQA_NAME, "warning",
                                  f"unused suppression: {', '.join(stale)} reports nothing on this line; "
                                  "remove it", True))
    return result


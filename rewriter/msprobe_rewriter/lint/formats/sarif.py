"""SARIF 2.1.0: one run with every rule's metadata, results with regions, file errors as notifications."""

from __future__ import annotations

import json
import os
from pathlib import Path
from urllib.parse import quote

import msprobe_rewriter
from msprobe_rewriter.lint.formats.options import RenderOptions
from msprobe_rewriter.lint.runner import RunReport
from msprobe_rewriter.rules import ALL_RULES, Rule

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
LEVELS = {"error": "error", "warning": "warning", "info": "note"}
SRCROOT = "%SRCROOT%"


def artifact(path: str) -> dict:
    """An artifactLocation: relative paths against %SRCROOT% (the working folder), absolute as file URIs."""
    if os.path.isabs(path):
        return {"uri": Path(path).as_uri()}
    return {"uri": quote(Path(path).as_posix()), "uriBaseId": SRCROOT}


def rule_descriptor(rule: type[Rule]) -> dict:
    """reportingDescriptor for one rule; helpUri points at its generated page in the repository."""
    return {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": rule.message},
        "fullDescription": {"text": f"{rule.summary} {rule.why}"},
        "help": {"text": rule.fix, "markdown": rule.fix},
        "helpUri": f"docs/rules/{rule.name}.md",
        "defaultConfiguration": {"level": LEVELS[rule.severity], "enabled": rule.default_enabled},
        "properties": {"tags": list(rule.frameworks), "fixable": rule.fixable},
    }


def render(report: RunReport, options: RenderOptions | None = None) -> str:
    """The SARIF log as pretty-printed JSON."""
    index = {rule.code: i for i, rule in enumerate(ALL_RULES)}
    results = []
    for f in report.findings:
        result = {
            "ruleId": f.code,
            "level": LEVELS.get(f.severity, "warning"),
            "message": {"text": f.message},
            "locations": [{"physicalLocation": {
                "artifactLocation": artifact(f.path),
                "region": {"startLine": f.line, "startColumn": f.column, "endLine": f.end_line,
                           "endColumn": f.end_column},
            }}],
            "properties": {"name": f.name, "severity": f.severity, "fixable": f.fixable},
        }
        if f.code in index:
            result["ruleIndex"] = index[f.code]
        results.append(result)
    notifications = [{"level": "error", "message": {"text": e.message},
                      "locations": [{"physicalLocation": {"artifactLocation": artifact(e.path)}}]}
                     for e in report.errors]
    run = {
        "tool": {"driver": {"name": "msprobe-lint", "version": msprobe_rewriter.__version__,
                            "semanticVersion": msprobe_rewriter.__version__,
                            "rules": [rule_descriptor(rule) for rule in ALL_RULES]}},
        "originalUriBaseIds": {SRCROOT: {"uri": Path.cwd().as_uri().rstrip("/") + "/"}},
        "columnKind": "unicodeCodePoints",
        "invocations": [{"executionSuccessful": report.internal_errors == 0,
                         "toolExecutionNotifications": notifications}],
        "results": results,
    }
    document = {"$schema": SCHEMA, "version": "2.1.0", "runs": [run]}
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"

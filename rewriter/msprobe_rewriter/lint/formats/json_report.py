"""The JSON contract (version 1): findings and per-file errors, exactly as `Finding.to_dict` spells them."""

from __future__ import annotations

import json

from msprobe_rewriter.lint.formats.options import RenderOptions
from msprobe_rewriter.lint.runner import RunReport

VERSION = 1


def render(report: RunReport, options: RenderOptions | None = None) -> str:
    """`{"version": 1, "findings": [...], "errors": [...]}`, pretty-printed, non-ASCII kept."""
    document = {"version": VERSION, "findings": [f.to_dict() for f in report.findings],
                "errors": [e.to_dict() for e in report.errors]}
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"

"""Output formats of a lint run: text for people, JSON and SARIF for tools, GitHub annotations for CI."""

from __future__ import annotations

from msprobe_rewriter.lint.formats import github, json_report, sarif, text
from msprobe_rewriter.lint.formats.options import RenderOptions
from msprobe_rewriter.lint.runner import RunReport

RENDERERS = {"text": text.render, "json": json_report.render, "sarif": sarif.render, "github": github.render}
FORMATS = tuple(RENDERERS)


def render(name: str, report: RunReport, options: RenderOptions) -> str:
    """The whole output of a run in format `name` (one of FORMATS)."""
    return RENDERERS[name](report, options)


__all__ = ["FORMATS", "RenderOptions", "render"]

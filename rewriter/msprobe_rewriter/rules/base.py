"""The Rule base class: metadata, in-rule examples, and the visit/report protocol the engine drives."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import ClassVar

from msprobe_rewriter import conditions, opt_in
from msprobe_rewriter.context import FileContext, Site


@dataclass(frozen=True)
class Invalid:
    """An example that must fire; `lines` (1-based) pins where, when given."""

    code: str
    lines: tuple[int, ...] = ()
    severity: str | None = None


@dataclass
class Report:
    """A finding before positions are turned into characters and suppressions applied."""

    node: ast.AST
    message: str
    severity: str
    fixable: bool | None = None  # None: as the rule says
    switch: tuple[ast.expr, bool] | None = None  # the flag's guard, read after the traversal (see opt_in)


class Rule:
    """One hazard. Subclasses set the metadata, examples, and `visit_<NodeType>` / `finish` methods.

    The engine makes one instance per file, calls `visit_X(node)` for every node of type X in source
    order (with `self.ctx.ancestors` set), then `finish()`; rules call `self.report(...)`.
    """

    code: ClassVar[str]
    name: ClassVar[str]
    severity: ClassVar[str]
    frameworks: ClassVar[tuple[str, ...]]
    message: ClassVar[str]
    summary: ClassVar[str]  # what it does, one or two sentences
    why: ClassVar[str]  # why it breaks reproducibility
    fix: ClassVar[str]  # how to fix it
    valid: ClassVar[tuple[str, ...]]
    invalid: ClassVar[tuple[Invalid, ...]]
    fixable: ClassVar[bool] = False
    default_enabled: ClassVar[bool] = True
    # Whether the hazard is a switch a script may leave to a flag: then one behind a flag that is off with the
    # default arguments is reported at the info level, naming the flag (see opt_in).
    switched_by_flags: ClassVar[bool] = False

    def __init__(self, ctx: FileContext) -> None:
        self.ctx = ctx
        self.reports: list[Report] = []

    def report(self, where: ast.AST | Site, message: str | None = None, severity: str | None = None,
               fixable: bool | None = None) -> None:
        """Report a finding at a node (or a `Site` taken earlier); evaluation-only code drops to info;
        `fixable` False: one that msprobe-instrument leaves, in a rule whose findings it otherwise fixes."""
        site = where if isinstance(where, Site) else self.ctx.site(where)
        final_severity = severity or self.severity
        text = message or self.message
        if site.on_eval_path and final_severity != "info":
            final_severity = "info"
            text += " (evaluation-only code)"
        switch = site.switch if self.switched_by_flags and final_severity != "info" else None
        self.reports.append(Report(site.node, text, final_severity, fixable, switch))

    def settle_switches(self) -> None:
        """After every rule's `finish` (the script's defaults are read from the whole file): a finding behind a
        flag that is off with the default arguments drops to info, naming the flag."""
        for report in self.reports:
            if report.switch is None or report.severity == "info":  # settled already (by the rule's own finish)
                continue
            needed = opt_in.off_by_default(self.ctx, report.switch)
            if needed is not None:
                report.severity = "info"
                report.message += f" (only when `{conditions.condition_text(needed)}`: off with the default arguments)"

    def finish(self) -> None:
        """Called after the traversal; rules that need whole-file facts report here."""

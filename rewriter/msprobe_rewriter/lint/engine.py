"""Lint one file: decode, parse with the stdlib ast, run every selected rule in one traversal."""

from __future__ import annotations

import ast
import functools
import gc
import io
import re
import sys
import tokenize
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field

from msprobe_rewriter.context import FileContext
from msprobe_rewriter.finding import FileError, Finding
from msprobe_rewriter.lint import suppressions
from msprobe_rewriter.rules.base import Rule

# A file that mentions none of these cannot contain a finding: skip parsing it at all. (`__main__`: an entry
# script may train through project-local code and mention no framework itself; `detectron2`: its `default_setup`
# seeds from the config; `composer`: its `dist.initialize_dist` starts NCCL; `mindnlp`: its `mindnlp.core`, torch's API;
# `_base_`: an OpenMMLab config, whose model dict may set dropout.)
PREFILTER = re.compile(r"torch|mindspore|mindnlp|numpy|random|deepspeed|HCCL|lightning|accelerate|transformers|trl|timm|mindcv|"
                       r"mindyolo|mmengine|detectron2|datasets|webdataset|albumentations|open_clip|composer|stable_baselines3|"
                       r"sb3_contrib|__main__|_base_")
# Parser messages that mean "this is Python 2".
PYTHON2_HINTS = ("Missing parentheses in call to", "multiple exception types must be parenthesized",
                 "leading zeros in decimal integer literals")
# Lines that only Python 3.12's parser reads (PEP 695): `type Alias = ...`, `class Name[T]:`, `def name[T](...)`.
PYTHON312_LINE = re.compile(r"\s*(type\s+\w+\s*[\[=]|class\s+\w+\s*\[|(async\s+)?def\s+\w+\s*\[)")


@dataclass
class LintResult:
    """Findings and errors for one file."""

    findings: list[Finding] = field(default_factory=list)
    errors: list[FileError] = field(default_factory=list)


def decode_source(data: bytes) -> str:
    """Decode Python source bytes honouring a BOM and a PEP 263 coding cookie."""
    encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    return data.decode(encoding)


def parse_error_message(exc: BaseException, tool: str = "msprobe-lint") -> str:
    """One line describing why a file cannot be parsed (`tool`: the command to run again)."""
    if "null bytes" in str(exc):  # a ValueError or a SyntaxError, depending on the Python version
        return "cannot parse: the file contains NUL bytes (is it a binary file?)"
    if isinstance(exc, SyntaxError):
        where = f" (line {exc.lineno})" if exc.lineno else ""
        return f"cannot parse: {exc.msg}{where}{_syntax_hint(exc, tool)}"
    if isinstance(exc, (UnicodeDecodeError, LookupError)):
        return f"cannot decode: {exc}"
    if isinstance(exc, RecursionError):
        return "cannot parse: nesting too deep for the Python parser"
    if isinstance(exc, MemoryError):
        return "cannot parse: out of memory (file too large)"
    return f"cannot parse: {exc}"


def _syntax_hint(exc: SyntaxError, tool: str) -> str:
    """Why valid code of another Python version fails: Python 2, or Python 3.12's syntax under an older Python."""
    if any(h in (exc.msg or "") for h in PYTHON2_HINTS):
        return "; Python 2 code is not supported"
    if sys.version_info < (3, 12) and PYTHON312_LINE.match(exc.text or ""):
        return f"; the file uses Python 3.12 syntax (`type` alias / type parameters); run {tool} under Python >= 3.12"
    return ""


def lint_source(path: str, data: bytes, rules: Sequence[type[Rule]], report_unused_noqa: bool = False) -> LintResult:
    """Lint one file's bytes with `rules`; never raises for bad input, returns an error entry instead.

    `report_unused_noqa` (or selecting the `unused-noqa` meta rule) adds an `unused-noqa` finding for
    each `# noqa: MSPxxx` (or rule name) of a rule that ran but reported nothing on that line.
    The cyclic garbage collector is paused meanwhile: a file's tree is millions of objects that die
    together by reference counting, and collections while it is built cost ~30% of a run.
    """
    if not gc.isenabled():
        return _lint(path, data, rules, report_unused_noqa)
    gc.disable()
    try:
        return _lint(path, data, rules, report_unused_noqa)
    finally:
        gc.enable()


def _lint(path: str, data: bytes, rules: Sequence[type[Rule]], report_unused_noqa: bool) -> LintResult:
    result = LintResult()
    if any(rule.code == suppressions.UNUSED_NOQA_CODE for rule in rules):
        # The meta rule has no detector: selecting it turns on the engine's unused-suppression report.
        report_unused_noqa = True
        rules = [rule for rule in rules if rule.code != suppressions.UNUSED_NOQA_CODE]
    try:
        source = decode_source(data)
    except (SyntaxError, UnicodeDecodeError, LookupError) as exc:  # a bad coding cookie, invalid bytes
        reason = exc.msg if isinstance(exc, SyntaxError) else str(exc)
        result.errors.append(FileError(path, f"cannot decode: {reason}"))
        return result
    if not PREFILTER.search(source) or suppressions.skips_file(source):
        return result
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # invalid escape sequences etc. are not ours to report
            tree = ast.parse(source, filename=path)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        result.errors.append(FileError(path, parse_error_message(exc)))
        return result
    ctx = FileContext(path, source, tree)
    instances = [rule(ctx) for rule in rules]
    handlers: dict[type, list] = {}
    for instance in instances:
        for attr, node_type in visit_methods(type(instance)):
            handlers.setdefault(node_type, []).append(getattr(instance, attr))
    try:
        ctx.traverse(handlers)
        for instance in instances:
            instance.finish()
        for instance in instances:
            instance.settle_switches()
    except RecursionError:
        result.errors.append(FileError(path, parse_error_message(RecursionError())))
        return result
    findings = [_to_finding(ctx, instance, report) for instance in instances for report in instance.reports]
    findings.sort(key=lambda f: (f.line, f.column, f.code))
    active = frozenset(c for rule in rules for c in (rule.code, rule.name.upper())) if report_unused_noqa else None
    result.findings = suppressions.apply(path, ctx.lines, findings, active)
    return result


@functools.cache
def visit_methods(rule: type[Rule]) -> tuple[tuple[str, type], ...]:
    """`(method name, ast node type)` for each `visit_<NodeType>` method of a rule class."""
    found = ((attr, getattr(ast, attr[6:], None)) for attr in dir(rule) if attr.startswith("visit_"))
    return tuple((attr, node_type) for attr, node_type in found if node_type is not None)


def _to_finding(ctx: FileContext, rule: Rule, report) -> Finding:
    node = report.node
    line = getattr(node, "lineno", 1)
    end_line = getattr(node, "end_lineno", None) or line
    column = char_column(ctx.line_text(line), getattr(node, "col_offset", 0)) + 1
    end_column = char_column(ctx.line_text(end_line), getattr(node, "end_col_offset", None) or 0) + 1
    return Finding(ctx.path, line, column, end_line, end_column, rule.code, rule.name, report.severity,
                   report.message, rule.fixable if report.fixable is None else report.fixable)


def char_column(line: str, byte_offset: int) -> int:
    """Convert the ast's UTF-8 byte offset on `line` to a character offset."""
    if line.isascii():
        return byte_offset
    return len(line.encode("utf-8")[:byte_offset].decode("utf-8", "replace"))

"""The one structural edit: a training-loop iteration inside `try/finally`, and its exact inverse.

The debugger transform puts a marked `debugger.start(...)` first in the training loop's body (after the
checks that skip an iteration); `wrap_loop` puts the rest of the body into `try:` with `finally: debugger.stop(); debugger.step()`, so the debugger
stops and steps on every way out of an iteration (`continue`, `break`, exceptions). libcst re-indents
the body (continuation lines too, never the inside of multi-line strings). The module is rendered once,
with the new indentation marked: `split` gives the unwrapped text the line markers are computed on, and
`merge` carries them over to the re-indented lines. `unwrap` puts the statements back with libcst, so
undo is syntax-aware instead of a text dedent.
"""

from __future__ import annotations

import ast
import re

import libcst as cst

from msprobe_rewriter.instrument import markers
from msprobe_rewriter.instrument.edits import Edits, rebuild
from msprobe_rewriter.instrument.structure import Structure
from msprobe_rewriter.instrument.textio import body, ending, split_lines

PLACEHOLDER = f"# {markers.TAG} ??????"


def _comment() -> cst.TrailingWhitespace:
    return cst.TrailingWhitespace(whitespace=cst.SimpleWhitespace("  "), comment=cst.Comment(PLACEHOLDER))


def _line(code: str) -> cst.SimpleStatementLine:
    return cst.SimpleStatementLine(body=[cst.Expr(cst.parse_expression(code))], trailing_whitespace=_comment())


# Brackets the try body's indentation while rendering: libcst accepts only blanks and form feeds in an
# indent, and a doubled form feed inside leading whitespace does not occur in real code.
MARK = "\f\f"
MARKED = re.compile(r"^([ \t\f]*?)\f\f([ \t]*)\f\f")


def wrap_loop(name: str, default_indent: str, skips: int = 0, after: int = 0, unguarded: int = 0,
              condition: str | None = None):
    """A rewrite of a loop whose body holds `name.start(...)` after its first `skips` statements (the
    iterations it skips, `if step < resume_step: continue`, are not captured): what follows goes into
    try/finally, but for the last `after` statements (work between steps: validation, checkpointing) and the
    first `unguarded` (the micro-batches they end with `continue` take no step: `start` again leaves the capture
    running); with `condition`, the one the optimizer steps under (`(i + 1) % update_freq == 0`), `finally` stops
    and steps only then, so that the micro-batches of one update are one step of the debugger's.

    The try body is rendered with its indentation between two `MARK`s, so `split` can tell exactly
    which lines libcst indented (statements, continuation lines, comments) and which it did not (the
    inside of multi-line strings, backslash continuations).
    """

    def rewrite(loop: cst.For | cst.While) -> cst.For | cst.While:
        block = loop.body
        indent = block.indent if block.indent is not None else default_indent
        steps = [_line(f"{name}.stop()"), _line(f"{name}.step()")]
        if condition is not None:
            guard = cst.ensure_type(cst.parse_statement(f"if {condition}: {name}.stop(); {name}.step()\n"), cst.If)
            steps = [guard.with_changes(body=guard.body.with_changes(trailing_whitespace=_comment()))]
        finalbody = cst.Finally(body=cst.IndentedBlock(body=steps, header=_comment(), indent=block.indent))
        end, begin = len(block.body) - after, skips + 1 + unguarded
        statements = list(block.body[begin:end])
        above = []  # the blank lines and comments above a first statement that follows others go above `try:`
        if unguarded and statements and isinstance(statements[0], (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
            above, statements[0] = statements[0].leading_lines, statements[0].with_changes(leading_lines=[])
        guarded = cst.Try(body=cst.IndentedBlock(body=statements, header=_comment(), indent=MARK + indent + MARK),
                          finalbody=finalbody, leading_lines=above)
        return loop.with_changes(body=block.with_changes(body=[*block.body[:begin], guarded, *block.body[end:]]))

    return rewrite


def split(rendered: str) -> tuple[str, list[str]]:
    """From a rendering with wrapped loops: the text as if never wrapped, and the wrapped lines (with
    the try bodies' indentation still between marks)."""
    plain, wrapped = [], []
    for line in split_lines(rendered):
        wrapped.append(line)
        if PLACEHOLDER not in line:
            plain.append(MARKED.sub(r"\1", line, count=1))
    if plain and wrapped and not ending(wrapped[-1]):  # no final newline: the unwrapped text has none either
        plain[-1] = body(plain[-1])
    return "".join(plain), wrapped


def merge(entries: list[list[str]], wrapped: list[str]) -> str:
    """The marked lines of the unwrapped text (`entries[i]`: what its line i became, trace lines first)
    re-indented as in the wrapped rendering, plus the wrapper's own lines, marked."""
    out: list[str] = []
    row = 0
    for line in wrapped:
        at = line.find(PLACEHOLDER)
        if at >= 0:
            code = MARKED.sub(r"\1\2", line[:at], count=1)
            out.append(code + markers.render([code.rstrip()], "", "").lstrip() + line[at + len(PLACEHOLDER):])
            continue
        found = MARKED.match(line)
        lines = list(entries[row])
        lines[-1] = body(lines[-1]) + ending(line)  # the unwrapped last line may have had no newline
        for entry in lines:
            if found is not None and entry.startswith(found.group(1)):
                at = len(found.group(1))
                entry = entry[:at] + found.group(2) + entry[at:]
            out.append(entry)
        row += 1
    for rest in entries[row:]:
        out.extend(rest)
    return "".join(out)


def _statements_back(node: cst.Try) -> cst.FlattenSentinel:
    """The guarded statements, with any comment lines written before `try:` kept in front."""
    statements = list(node.body.body)
    if node.leading_lines:
        first = statements[0]
        statements[0] = first.with_changes(leading_lines=[*node.leading_lines, *first.leading_lines])
    return cst.FlattenSentinel(statements)


def is_wrapper_line(marker: markers.Marker, lines: list[str]) -> bool:
    """Whether `marker` marks a `try:` line the tool added (a wrapper, not a user's `try:` it changed)."""
    return (marker.count == 1 and not marker.kind
            and body(lines[marker.line - 1])[: marker.column].strip() == "try:")


def _wrappers(tree: ast.Module, found: dict[int, markers.Marker], lines: list[str]) -> list[ast.Try]:
    """The ast `try` statements whose `try:` line the tool added."""
    return [node for node in ast.walk(tree) if isinstance(node, ast.Try) and node.lineno in found
            and is_wrapper_line(found[node.lineno], lines)]


def _check(node: ast.Try, found: dict[int, markers.Marker], lines: list[str]) -> None:
    """Raise MarkerError unless the wrapper is exactly as the tool wrote it."""
    final = node.finalbody
    if node.handlers or node.orelse or len(final) != 2 and not (
            len(final) == 1 and isinstance(final[0], ast.If) and len(final[0].body) == 2 and not final[0].orelse):
        raise markers.MarkerError(node.lineno, "the try/finally the tool wrote around this loop body was changed")
    finally_line = final[0].lineno - 1
    rows = [node.lineno, finally_line] + [s.lineno for s in final]
    if any(s.end_lineno != s.lineno for s in final):
        raise markers.MarkerError(node.finalbody[0].lineno, "the tool's `finally:` block was changed")
    for row in rows:
        marker = found.get(row)
        if marker is None or marker.count != 1 or marker.kind:
            raise markers.MarkerError(row, "a line of the tool's try/finally lost its marker")
        markers.check(marker, lines)


def unwrap(text: str) -> str:
    """`text` with every tool-written `try:` taken apart (MarkerError when one was edited)."""
    found = {m.line: m for m in markers.find(text)}
    lines = split_lines(text)
    tree = ast.parse(text)
    wrappers = _wrappers(tree, found, lines)
    if not wrappers:
        return text
    for node in wrappers:
        _check(node, found, lines)
    module = cst.parse_module(text)
    structure = Structure(module, tree)
    edits = Edits()
    for node in wrappers:
        statement = structure.statement(node)
        if statement.body.footer:
            raise markers.MarkerError(node.lineno, "comments were added inside the tool's try/finally: move them")
        edits.rewrite(statement, _statements_back)
        if statement.finalbody.body.footer:
            _keep_trailing_lines(statement, structure.parent[statement], module.default_indent, edits)
    return rebuild(module, edits, structure.path).code


def _keep_trailing_lines(statement: cst.Try, block: cst.IndentedBlock, default_indent: str, edits: Edits) -> None:
    """Give the comment lines that follow `finally:`'s body back to the loop body, at the same columns.

    They were the loop body's own trailing lines, indented deeper than it: libcst gives such lines to the
    innermost block they are indented for, which after wrapping is the `finally:` body.
    """
    deeper = statement.finalbody.body.indent if statement.finalbody.body.indent is not None else default_indent
    lines = [line.with_changes(whitespace=cst.SimpleWhitespace(deeper + line.whitespace.value)) if line.indent
             else line for line in statement.finalbody.body.footer]
    following = list(block.body)[list(block.body).index(statement) + 1:]
    if following:
        edits.rewrite(following[0], lambda node: node.with_changes(leading_lines=[*lines, *node.leading_lines]))
    else:
        edits.rewrite(block, lambda node: node.with_changes(footer=[*lines, *node.footer]))

"""Compiled code in a file the debugger is added to: capture sees no call inside it.

PyTorch's capture skips `torch.compile`d regions; MindSpore's records nothing in graph mode and nothing inside
a `mindspore.jit` function or cell. A dump of such a step misses the calls that matter, so each place that
compiles gets a note: turn it off while debugging.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from msprobe_rewriter import catalogue, opt_in
from msprobe_rewriter.context import FUNCTION_TYPES, FileContext, keyword

TORCH_NOTE = "`torch.compile`: capture skips compiled code, whose calls are not recorded; compile nothing while debugging"
JIT_NOTE = ("`{name}`: the calls inside a jit-compiled function are not recorded; remove it (run in PyNative mode) "
            "while debugging")
GRAPH_NOTE = "GRAPH_MODE: nothing is captured in graph mode; set mode=mindspore.PYNATIVE_MODE while debugging"
MAYBE_GRAPH_NOTE = ("`mode={mode}`: if that is GRAPH_MODE (0), nothing is captured in graph mode; set "
                    "mode=mindspore.PYNATIVE_MODE (1) while debugging")
GRAPH, PYNATIVE = 0, 1  # MindSpore's mode constants


def compiled_notes(ctx: FileContext) -> list[tuple[int, str]]:
    """(line, note) for each call or decorator that compiles code, and each switch to MindSpore's graph mode, in
    the order of the source."""
    return sorted(_compiled_notes(ctx))


def _compiled_notes(ctx: FileContext) -> Iterator[tuple[int, str]]:
    for node in ast.walk(ctx.tree):
        if isinstance(node, ast.Call):
            note = _compiler_note(ctx, node.func)
            if note is not None:
                yield node.lineno, note
            elif ctx.call_qualname(node) in catalogue.MINDSPORE_SET_CONTEXT:
                mode = keyword(node, "mode")
                note = _mode_note(ctx, mode) if mode is not None else None
                if note is not None:
                    yield node.lineno, note
        elif isinstance(node, (*FUNCTION_TYPES, ast.ClassDef)):
            for decorator in node.decorator_list:  # `@torch.compile` (`@torch.compile(...)`: a call, above)
                note = _compiler_note(ctx, decorator)
                if note is not None:
                    yield decorator.lineno, note


def _compiler_note(ctx: FileContext, node: ast.expr) -> str | None:
    qualified = ctx.qualname(node)
    if qualified in catalogue.TORCH_COMPILE:
        return TORCH_NOTE
    if qualified in catalogue.MINDSPORE_JIT:
        return JIT_NOTE.format(name=qualified)
    return None


def _mode_note(ctx: FileContext, mode: ast.expr) -> str | None:
    """The note for `set_context(mode=...)`: graph mode (`GRAPH_MODE`, 0, or an option whose default is 0), or a
    mode not known to be PyNative (`mode=cfg.system.mode`, read from a config); None for PyNative."""
    if ctx.qualname(mode) in catalogue.MINDSPORE_GRAPH_MODES:
        return GRAPH_NOTE
    if ctx.qualname(mode) in catalogue.MINDSPORE_PYNATIVE_MODES:
        return None
    value = opt_in.default_value(ctx, mode)
    if value == GRAPH and not isinstance(value, bool):
        return GRAPH_NOTE
    if value == PYNATIVE and not isinstance(value, bool):
        return None
    return MAYBE_GRAPH_NOTE.format(mode=ast.unparse(mode))

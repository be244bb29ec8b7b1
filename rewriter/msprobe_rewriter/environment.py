"""Writes to the process environment found statically: `os.environ[...] =`, `setdefault`, `putenv`, `update`."""

from __future__ import annotations

import ast
from collections.abc import Callable

from msprobe_rewriter import catalogue
from msprobe_rewriter.context import NOT_CONSTANT, constant


def env_writes(call: ast.Call, qualified: str | None) -> list[tuple[str, ast.expr]]:
    """`(variable, value)` pairs a call writes to the environment (`setdefault`, `putenv`, `update`)."""
    if qualified in catalogue.ENV_SETTERS and len(call.args) >= 2:
        name = constant(call.args[0])
        return [(name, call.args[1])] if isinstance(name, str) else []
    if qualified in catalogue.ENV_UPDATERS:
        pairs = [(kw.arg, kw.value) for kw in call.keywords if kw.arg]
        if call.args and isinstance(call.args[0], ast.Dict):
            pairs += [(constant(k), v) for k, v in zip(call.args[0].keys, call.args[0].values, strict=True)
                      if k is not None and isinstance(constant(k), str)]
        return pairs
    return []


def env_assignments(node: ast.Assign, resolve: Callable[[ast.AST], str | None]) -> list[tuple[str, ast.expr]]:
    """`(variable, value)` pairs of `os.environ["X"] = value`."""
    found = []
    for target in node.targets:
        if isinstance(target, ast.Subscript) and resolve(target.value) == catalogue.OS_ENVIRON:
            name = constant(target.slice)
            if isinstance(name, str):
                found.append((name, node.value))
    return found


def env_enables(value: ast.expr) -> bool:
    """Whether writing `value` to an environment flag switches it on (unknown values count as on)."""
    literal = constant(value)
    if literal is NOT_CONSTANT:
        return True
    return str(literal).strip().lower() not in catalogue.FALSE_ENV_VALUES and literal is not False

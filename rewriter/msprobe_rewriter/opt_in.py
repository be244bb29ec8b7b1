"""Hazards a script switches on only when asked: the statement (or the branch of a conditional expression) that
a flag guards, false with the default arguments (`if args.allow_tf32:` with a `store_true` option,
`RandomHorizontalFlip() if args.random_flip else ...`), or a count whose option defaults to none
(`num_workers=args.dataloader_num_workers`, default 0). The rules whose hazard is such a switch report these at
the info level, naming the option: the run as written is free of them.
"""

from __future__ import annotations

import ast

from msprobe_rewriter import conditions, project, seeding
from msprobe_rewriter.context import FUNCTION_TYPES, NOT_CONSTANT, FileContext, constant


def off_by_default(ctx: FileContext, guard: conditions.Guard) -> ast.expr | None:
    """The condition `guard` needs, when it does not hold with the script's default arguments, else None."""
    test, wanted = guard
    if conditions.truth(test, seeding.analyse(ctx).lookup) is (not wanted):
        return conditions.holding(guard)
    return None


def default_value(ctx: FileContext, node: ast.expr) -> object:
    """What `node` (`args.dataloader_num_workers`) holds with the script's default arguments, else UNKNOWN."""
    return conditions.value(node, seeding.analyse(ctx).lookup)


def switch_default(ctx: FileContext, node: ast.expr, function: ast.AST | None, callers_elsewhere: bool) -> object:
    """What a switch (`shuffle=shuffle`, `strict=args.strict`, `shuffle=split == "train"`) holds with the default
    arguments: the options at their defaults (see opt_in) and the parameters of `function`, the function around
    it, as every call of that function in the file passes them (at their defaults where the file has none); else
    `conditions.UNKNOWN`, also when the calls disagree. `callers_elsewhere`: count the calls in the project's other
    files too, which are not read: the parameters are unknown in a module one of them imports (detr's
    `coco.build(shuffle=False)`, called by its train.py with `shuffle=True`)."""
    literal = constant(node)
    if literal is not NOT_CONSTANT:
        return literal
    facts = seeding.analyse(ctx)
    if not isinstance(function, FUNCTION_TYPES):
        return conditions.value(node, facts.lookup)
    if callers_elsewhere and project.imported_elsewhere(ctx.path):
        return conditions.value(node, conditions.parameter_lookup({}, facts.lookup))
    calls = [call for _, _, call in facts.live_calls(function.name)] \
        if facts.definitions.get(function.name) is function else []
    values = {conditions.value(node, conditions.parameter_lookup(
        dict(conditions.bind_arguments(function, call, facts.lookup)), facts.lookup))
        for call in calls or [ast.Call(ast.Name(function.name), [], [])]}
    return values.pop() if len(values) == 1 else conditions.UNKNOWN

"""Hazards a script switches on only when asked: the statement (or the branch of a conditional expression) that
a flag guards, false with the default arguments (`if args.allow_tf32:` with a `store_true` option,
`RandomHorizontalFlip() if args.random_flip else ...`), or a count whose option defaults to none
(`num_workers=args.dataloader_num_workers`, default 0). The rules whose hazard is such a switch report these at
the info level, naming the option: the run as written is free of them.
"""

from __future__ import annotations

import ast

from msprobe_rewriter import conditions, seeding
from msprobe_rewriter.context import FileContext


def off_by_default(ctx: FileContext, guard: conditions.Guard) -> ast.expr | None:
    """The condition `guard` needs, when it does not hold with the script's default arguments, else None."""
    test, wanted = guard
    if conditions.truth(test, seeding.analyse(ctx).lookup) is (not wanted):
        return conditions.holding(guard)
    return None


def default_value(ctx: FileContext, node: ast.expr) -> object:
    """What `node` (`args.dataloader_num_workers`) holds with the script's default arguments, else UNKNOWN."""
    return conditions.value(node, seeding.analyse(ctx).lookup)

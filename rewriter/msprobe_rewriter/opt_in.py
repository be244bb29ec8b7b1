"""Hazards a script switches on only when asked: the statement (or the branch of a conditional expression) that
a flag guards, false with the default arguments (`if args.allow_tf32:` with a `store_true` option,
`RandomHorizontalFlip() if args.random_flip else ...`), or a count whose option defaults to none
(`num_workers=args.dataloader_num_workers`, default 0). The rules whose hazard is such a switch report these at
the info level, naming the option: the run as written is free of them.
"""

from __future__ import annotations

import ast
import weakref
from pathlib import Path

from msprobe_rewriter import conditions, project, seeding
from msprobe_rewriter.context import FUNCTION_TYPES, NOT_CONSTANT, FileContext, constant

Handed = dict[str, dict[str, object]]  # parameter -> the defaults of the options handed in it
_HANDED: weakref.WeakKeyDictionary[FileContext, Handed] = weakref.WeakKeyDictionary()


def off_by_default(ctx: FileContext, guard: conditions.Guard) -> ast.expr | None:
    """The condition `guard` needs, when it does not hold with the script's default arguments, else None."""
    test, wanted = guard
    if conditions.truth(test, options(ctx)) is (not wanted):
        return conditions.holding(guard)
    return None


def default_value(ctx: FileContext, node: ast.expr) -> object:
    """What `node` (`args.dataloader_num_workers`) holds with the script's default arguments, else UNKNOWN."""
    return conditions.value(node, options(ctx))


def options(ctx: FileContext) -> conditions.Lookup:
    """The options of `ctx`'s file at their defaults (`seeding.analyse`); in a module other files hand their parsed
    arguments to, also `<parameter>.<dest>` for the options they declare (see `_handed`)."""
    own = seeding.analyse(ctx).lookup
    handed = _HANDED.get(ctx)
    if handed is None:
        handed = _HANDED[ctx] = _handed(ctx)
    if not handed:
        return own

    def lookup(node: ast.expr) -> object:
        found = own(node)
        if found is conditions.UNKNOWN and isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            return handed.get(node.value.id, {}).get(node.attr, conditions.UNKNOWN)
        return found

    return lookup


def _handed(ctx: FileContext) -> Handed:
    """For each parameter of the file's functions that another project file passes its parsed arguments (`args =
    parser.parse_args()`, or `args = parse_args()`, a function of its own returning them), the defaults of the options that file declares: dlrm's dlrm_s_pytorch.py calls
    `dp.make_criteo_data_and_loaders(args)`, so there `args.mlperf_bin_shuffle` is False and `args.num_workers` 0. An
    option the files disagree on, or one a file assigns, is unknown."""
    functions = {node.name: node for node in ctx.tree.body if isinstance(node, FUNCTION_TYPES)}
    own = Path(ctx.path).resolve()
    found: Handed = {}
    for importer in project.importers(ctx.path) if functions else ():
        module = project.load(Path(importer))
        namespaces = _namespaces(module.tree) if module is not None else set()
        if not namespaces:
            continue
        declared = conditions.argparse_defaults(ast.walk(module.tree))
        for node in ast.walk(module.tree):
            if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store) and node.attr in declared:
                declared[node.attr] = conditions.UNKNOWN
        for call in (node for node in ast.walk(module.tree) if isinstance(node, ast.Call) and any(
                getattr(arg, "id", None) in namespaces for arg in (*node.args, *(kw.value for kw in node.keywords)))):
            for ref, name in project.call_targets(call, module.local, module.functions):
                target = project.defining(module.path.parent, ref, name)
                function = functions.get(target[1]) if target and target[0].path.resolve() == own else None
                for parameter, argument in conditions.call_arguments(function, call).items() if function else ():
                    if argument and argument[1] and getattr(argument[0], "id", None) in namespaces:
                        merged = found.setdefault(parameter, {})
                        for dest, default in declared.items():
                            merged[dest] = default if merged.get(dest, default) == default else conditions.UNKNOWN
    return found


def parsed_option(ctx: FileContext, node: ast.expr) -> bool:
    """Whether `node` reads an option off the parsed arguments (`args.random_crop`): `args` is assigned them in the
    file, or is a parameter another project file hands them in (see `_handed`); not `actions.device`, whatever
    options the project declares."""
    if not (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)):
        return False
    if ctx not in _HANDED:
        _HANDED[ctx] = _handed(ctx)
    return node.value.id in _HANDED[ctx] or node.value.id in _namespaces(ctx.tree)


def _namespaces(tree: ast.Module) -> set[str]:
    """The names the module assigns its parsed arguments: `args = parser.parse_args()`, or `args = parse_args()`
    with a function of its own returning them (mindone's train_text_to_image.py)."""
    parsers = {node.name for node in tree.body if isinstance(node, FUNCTION_TYPES) and any(
        isinstance(ret, ast.Return) and isinstance(ret.value, ast.Call)
        and getattr(ret.value.func, "attr", None) == "parse_args" for ret in ast.walk(node))}
    return {target.id for node in ast.walk(tree) if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)
            and (getattr(node.value.func, "attr", None) == "parse_args" or getattr(node.value.func, "id", None) in parsers)
            for target in node.targets if isinstance(target, ast.Name)}


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
    facts, lookup = seeding.analyse(ctx), options(ctx)
    if not isinstance(function, FUNCTION_TYPES):
        return conditions.value(node, lookup)
    if callers_elsewhere and project.imported_elsewhere(ctx.path):
        return conditions.value(node, conditions.parameter_lookup({}, lookup))
    calls = [call for _, _, call in facts.live_calls(function.name)] \
        if facts.definitions.get(function.name) is function else []
    values = {conditions.value(node, conditions.parameter_lookup(
        dict(conditions.bind_arguments(function, call, lookup)), lookup))
        for call in calls or [ast.Call(ast.Name(function.name), [], [])]}
    return values.pop() if len(values) == 1 else conditions.UNKNOWN

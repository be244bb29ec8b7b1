"""What a condition evaluates to when a script runs with its default arguments, and which conditions
guard a piece of code.

Used to tell "seeds" from "seeds only if `--seed` is given": argparse defaults (and, for helpers, the
arguments a call site passes) are looked up for the names a test mentions; anything else is unknown.
"""

from __future__ import annotations

import ast
import operator
import re
from collections.abc import Callable, Iterable, Iterator

from msprobe_rewriter.context import NOT_CONSTANT, constant, keyword

UNKNOWN = NOT_CONSTANT  # a value we cannot know statically
Lookup = Callable[[ast.expr], object]
Guard = tuple[ast.expr, bool]  # a test and the truth value it must have for the code under it to run

COMPARE = {ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
           ast.Gt: operator.gt, ast.GtE: operator.ge, ast.Is: operator.is_, ast.IsNot: operator.is_not}
NONE_TESTS = (ast.Is, ast.IsNot, ast.Eq, ast.NotEq)
# argparse actions whose implicit default is not None.
ACTION_DEFAULTS = {"store_true": False, "store_false": True}
DETERMINISM_FLAG = re.compile(r"determinis", re.IGNORECASE)  # `deterministic`, `full_determinism`, ...


def value(node: ast.expr, lookup: Lookup) -> object:
    """The value of `node` under the defaults `lookup` knows, else `UNKNOWN`."""
    literal = constant(node)
    if literal is not NOT_CONSTANT:
        return literal
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        inner = truth(node.operand, lookup)
        return UNKNOWN if inner is None else not inner
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in COMPARE:
        left, right = value(node.left, lookup), value(node.comparators[0], lookup)
        if left is UNKNOWN or right is UNKNOWN:
            return UNKNOWN
        try:
            return COMPARE[type(node.ops[0])](left, right)
        except TypeError:  # e.g. None < 0
            return UNKNOWN
    if isinstance(node, ast.BoolOp):
        verdicts = [truth(v, lookup) for v in node.values]
        decisive = isinstance(node.op, ast.Or)  # `or` is decided by a True, `and` by a False
        if decisive in verdicts:
            return decisive
        return UNKNOWN if None in verdicts else not decisive
    if isinstance(node, ast.IfExp):  # `True if args.temperature > 0 else False`
        test = truth(node.test, lookup)
        return UNKNOWN if test is None else value(node.body if test else node.orelse, lookup)
    if isinstance(node, (ast.Name, ast.Attribute)):
        return lookup(node)
    return UNKNOWN


NEGATED = {ast.Eq: ast.NotEq, ast.NotEq: ast.Eq, ast.Is: ast.IsNot, ast.IsNot: ast.Is, ast.In: ast.NotIn,
           ast.NotIn: ast.In, ast.Lt: ast.GtE, ast.GtE: ast.Lt, ast.Gt: ast.LtE, ast.LtE: ast.Gt}


def holding(guard: Guard) -> ast.expr:
    """The condition a guard needs, as written where it must be true (`seed is not None` for the code after
    `if seed is None: return`), at the test's place in the source."""
    test, wanted = guard
    if wanted:
        return test
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return test.operand
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and type(test.ops[0]) in NEGATED:
        negated = ast.Compare(test.left, [NEGATED[type(test.ops[0])]()], test.comparators)
    else:
        negated = ast.UnaryOp(ast.Not(), test)
    return ast.copy_location(negated, test)


def none_tested(test: ast.expr) -> ast.Attribute | None:
    """The value read from an object (a config's `cfg.system.mindspore_seed`, an option `args.seed`; not a plain
    name) that `test` compares with None, `cfg.seed is not None` or `cfg.seed is None`, if any: the code itself says
    None is a value it may hold."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], NONE_TESTS)):
        return None
    left, right = test.left, test.comparators[0]
    subject = left if _is_none(right) else right if _is_none(left) else None
    return subject if isinstance(subject, ast.Attribute) else None


def determinism_flag(guard: Guard, lookup: Lookup) -> ast.expr | None:
    """The flag named for determinism (`self.full_determinism`, `args.deterministic`, `cfg["deterministic"]`) that
    `guard` needs to be true, alone or in an `and`, when `lookup` does not know its value: code under it switches
    something on only when a run opts in, which nothing here tells."""
    needed = holding(guard)
    for flag in needed.values if isinstance(needed, ast.BoolOp) and isinstance(needed.op, ast.And) else [needed]:
        key = flag.slice if isinstance(flag, ast.Subscript) else flag
        name = key.attr if isinstance(key, ast.Attribute) else key.id if isinstance(key, ast.Name) else \
            key.value if isinstance(key, ast.Constant) else None
        if isinstance(name, str) and DETERMINISM_FLAG.search(name) and truth(flag, lookup) is None:
            return flag
    return None


def _is_none(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def truth(node: ast.expr, lookup: Lookup) -> bool | None:
    """Whether `node` is truthy under the known defaults; None when unknown."""
    result = value(node, lookup)
    return None if result is UNKNOWN else bool(result)


def call_arguments(function: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda, call: ast.Call,
                   bound: bool = False) -> dict[str, tuple[ast.expr, bool] | None]:
    """What each parameter of `function` holds in this call: (the expression passed, True), else (its
    default, False), else None (not known: not given, behind `*args`/`**kwargs`, or, for a `bound` method,
    the object)."""
    args = function.args
    params = args.posonlyargs + args.args
    pairs = list(zip(params, [None] * (len(params) - len(args.defaults)) + list(args.defaults), strict=True))
    pairs += list(zip(args.kwonlyargs, args.kw_defaults, strict=True))
    opaque = any(isinstance(a, ast.Starred) for a in call.args) or any(kw.arg is None for kw in call.keywords)
    given = {kw.arg: kw.value for kw in call.keywords if kw.arg}
    for param, arg in zip(params[1:] if bound else params, call.args, strict=False):
        if isinstance(arg, ast.Starred):
            break
        given[param.arg] = arg
    found: dict[str, tuple[ast.expr, bool] | None] = {}
    for index, (param, default) in enumerate(pairs):
        if bound and index == 0:
            found[param.arg] = None
        elif param.arg in given:
            found[param.arg] = (given[param.arg], True)
        else:
            found[param.arg] = None if opaque or default is None else (default, False)
    return found


def bind_arguments(function: ast.FunctionDef | ast.AsyncFunctionDef, call: ast.Call, lookup: Lookup,
                   bound: bool = False) -> tuple[tuple[str, object], ...]:
    """Parameter values of `function` throughout its body for this call (`call_arguments`: given expressions
    evaluated with `lookup`, defaults as constants); `UNKNOWN` for the rest, and for a parameter the function
    assigns to (its value is no longer the caller's everywhere)."""
    assigned = {node.id for node in ast.walk(function) if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)}
    env = []
    for name, argument in call_arguments(function, call, bound).items():
        if argument is None or name in assigned:
            env.append((name, UNKNOWN))
        else:
            expression, given = argument
            env.append((name, value(expression, lookup if given else no_lookup)))
    return tuple(env)


def parameter_lookup(values: dict[str, object], outer: Lookup) -> Lookup:
    """A lookup answering a function's parameters (names) from `values` and anything else from `outer`."""

    def lookup(node: ast.expr) -> object:
        if isinstance(node, ast.Name):
            return values.get(node.id, UNKNOWN)
        return outer(node)

    return lookup


def argparse_defaults(nodes: Iterable[ast.AST]) -> dict[str, object]:
    """`dest -> default` for every `add_argument("--x", ...)` among `nodes` (`UNKNOWN` when not literal)."""
    defaults: dict[str, object] = {}
    for node in nodes:
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
            continue
        if node.func.attr == "set_defaults":
            defaults.update({kw.arg: constant(kw.value) for kw in node.keywords if kw.arg})
        elif node.func.attr == "add_argument":
            dest, default = _argument(node)
            if dest is not None:
                defaults[dest] = UNKNOWN if dest in defaults else default  # defined twice: unknown
    return defaults


def option_defaults(tree: ast.Module, nodes: Iterable[ast.AST]) -> dict[str, object]:
    """The script's options with their defaults: its dataclasses' fields, then its argparse options (`nodes`:
    where the `add_argument` calls are)."""
    return {**dataclass_defaults(tree), **argparse_defaults(nodes)}


def dataclass_defaults(tree: ast.Module) -> dict[str, object]:
    """`field -> default` of the file's dataclasses, the options that tyro (CleanRL's `args = tyro.cli(Args)`) and
    Hugging Face's `HfArgumentParser` parse: `seed: int = 1`, `seed: int = field(default=42)` (`UNKNOWN` when
    not literal; a field defined by two classes too)."""
    defaults: dict[str, object] = {}
    for cls in tree.body:  # option classes are declared at the top level
        if not isinstance(cls, ast.ClassDef) or not any(_names_dataclass(d) for d in cls.decorator_list):
            continue
        for item in cls.body:
            if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name) and item.value is not None:
                value = item.value
                if isinstance(value, ast.Call) and _callee(value.func) == "field":
                    value = keyword(value, "default")
                    if value is None:
                        continue  # `default_factory=`, or required
                name = item.target.id
                defaults[name] = UNKNOWN if name in defaults else constant(value)
    return defaults


def _names_dataclass(decorator: ast.expr) -> bool:
    return _callee(decorator.func if isinstance(decorator, ast.Call) else decorator) == "dataclass"


def _callee(node: ast.expr) -> str | None:
    return node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else None


def _argument(call: ast.Call) -> tuple[str | None, object]:
    options = [a.value for a in call.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
    dest_kw = constant(keyword(call, "dest"))
    long_options = [o for o in options if o.startswith("--")]
    if isinstance(dest_kw, str):
        dest = dest_kw
    elif long_options:
        dest = long_options[0][2:].replace("-", "_")
    elif options and options[0].startswith("-"):
        dest = options[0].lstrip("-").replace("-", "_")
    else:
        return (options[0] if options else None), UNKNOWN  # positional: always given
    if constant(keyword(call, "required")) is True:
        return dest, UNKNOWN
    default = keyword(call, "default")
    if default is not None:
        return dest, constant(default)
    return dest, ACTION_DEFAULTS.get(constant(keyword(call, "action")), None)


def overlays_options(call: ast.Call) -> bool:
    """`args.__dict__.update(...)`, `vars(args).update(...)` or `setattr(args, name, ...)` with a computed name: a
    call that may overwrite any parsed option."""
    func = call.func
    if isinstance(func, ast.Name):
        return func.id == "setattr" and len(call.args) == 3 and not isinstance(call.args[1], ast.Constant)
    if not (isinstance(func, ast.Attribute) and func.attr == "update"):
        return False
    owner = func.value
    return (isinstance(owner, ast.Attribute) and owner.attr == "__dict__"
            or isinstance(owner, ast.Call) and isinstance(owner.func, ast.Name) and owner.func.id == "vars")


def argparse_lookup(defaults: dict[str, object]) -> Lookup:
    """A lookup answering `args.<dest>` (any object, any depth) from argparse defaults."""

    def lookup(node: ast.expr) -> object:
        if isinstance(node, ast.Attribute) and node.attr in defaults:
            return defaults[node.attr]
        return UNKNOWN

    return lookup


def no_lookup(node: ast.expr) -> object:
    """A lookup that knows nothing."""
    return UNKNOWN


def walk(roots: list[ast.AST], kinds: tuple[type, ...]) -> Iterator[tuple[ast.AST, tuple[Guard, ...], str | None]]:
    """Every node of `kinds` under `roots` in source order, with the `if` tests around it (see `block`) and its
    function."""
    stack: list[tuple[ast.AST, tuple[Guard, ...], str | None]] = [(r, (), None) for r in reversed(roots)]
    push = stack.append
    while stack:
        node, guards, function = stack.pop()
        kind = type(node)
        if isinstance(node, kinds):
            yield node, guards, function
        if kind is ast.If:
            for child, inner in reversed(block(node.orelse, guards + ((node.test, False),))):
                push((child, inner, function))
            for child, inner in reversed(block(node.body, guards + ((node.test, True),))):
                push((child, inner, function))
            push((node.test, guards, function))
            continue
        if kind is ast.FunctionDef or kind is ast.AsyncFunctionDef:
            function = node.name
        for child, inner in reversed(_children(node, kind, guards)):
            push((child, inner, function))


def block(statements: list[ast.AST], guards: tuple[Guard, ...]) -> list[tuple[ast.AST, tuple[Guard, ...]]]:
    """The statements of a block, each with the tests it runs under: after `if test:` whose branch always leaves
    the block and goes on (`return`, `continue`, `break`), the rest runs only when `test` is false (after an `else:`
    that leaves, only when it is true). A branch that raises or exits ends the run instead: the code after it runs
    in every run that goes on (`if args.name and args.resume: raise ValueError(...)`)."""
    found = []
    for statement in statements:
        found.append((statement, guards))
        if type(statement) is ast.If:
            if _leaves(statement.body) and not _leaves(statement.orelse):
                guards = guards + ((statement.test, False),)
            elif _leaves(statement.orelse) and not _leaves(statement.body):
                guards = guards + ((statement.test, True),)
    return found


def _leaves(statements: list[ast.stmt]) -> bool:
    """Whether a branch always ends by leaving its block to go on running."""
    return bool(statements) and isinstance(statements[-1], (ast.Return, ast.Continue, ast.Break))


_FIELDS: dict[type, tuple[str, ...]] = {}


def _children(node: ast.AST, kind: type, guards: tuple[Guard, ...]) -> list[tuple[ast.AST, tuple[Guard, ...]]]:
    """`ast.iter_child_nodes` with the tests each child runs under (a body's statements: see `block`), twice as
    fast: field names cached per type, `ctx` markers skipped."""
    fields = _FIELDS.get(kind)
    if fields is None:
        fields = _FIELDS[kind] = tuple(name for name in kind._fields if name != "ctx")
    children: list[tuple[ast.AST, tuple[Guard, ...]]] = []
    for name in fields:
        value = getattr(node, name, None)
        if type(value) is list:
            if value and isinstance(value[0], ast.stmt):
                children += block(value, guards)
            else:
                children.extend((item, guards) for item in value if isinstance(item, ast.AST))
        elif isinstance(value, ast.AST):
            children.append((value, guards))
    return children


def condition_text(node: ast.expr, limit: int = 60) -> str:
    """Source of a condition, shortened for a one-line message."""
    text = ast.unparse(node)
    return text if len(text) <= limit else text[: limit - 3] + "..."

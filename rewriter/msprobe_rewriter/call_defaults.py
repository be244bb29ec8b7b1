"""What every call in a file passes a parameter of one of its functions: a dropout rate or an augmentation switch
left off (MSP401, MSP303), a device left on the CPU or a generator left None (MSP201). A parameter is followed up
through the callers that hand it on, through `**options` dicts a caller builds, and through the callers' own
`**kwargs`; the calls in the project's other files of a module-level function or class are read too (what they
pass as a literal, or leave at its default; `default_elsewhere` reads them for a value of a function).
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Callable
from pathlib import Path

from msprobe_rewriter import conditions, opt_in, project
from msprobe_rewriter.conditions import condition_text
from msprobe_rewriter.context import (
    FUNCTION_TYPES,
    NOT_CONSTANT,
    FileContext,
    constant,
    parameter_defaults,
    walk_scope,
)

# Methods a module's or cell's call runs (`block(x)`): their calls are not found by name.
CALLED_THROUGH_OBJECT = frozenset({"forward", "construct", "__call__"})
# model -> stage -> block -> attention -> layer -> a project's dropout wrapper: how many calls up a parameter is
# followed to the value its callers pass
PARAMETER_DEPTH = 6


class LeftAtDefault:
    """Which parameters of the file's functions every call in the file leaves at a value of a kind (off, the CPU,
    None): passed one, left at a default that is one, or handed on from such a parameter of the caller's own
    (`PARAMETER_DEPTH` levels up); read also through an attribute `__init__` stores from a parameter
    (`self.dropout_p`) and through a nested function's use of a parameter of the function around it."""

    def __init__(self, ctx: FileContext) -> None:
        self.ctx = ctx
        self.tree = ctx.tree
        self._callers: dict[str, list] | None = None  # name -> [(call, the function around it)], made when needed
        self._owners: dict[int, ast.ClassDef] | None = None  # id(method) -> its class, made when needed
        self._outer: dict[int, ast.AST] | None = None  # id(nested function) -> the function around it
        self._settled: dict[tuple, bool] = {}  # memo of `holds`
        self._tests: dict[int, dict[bool, Callable[[object], bool]]] = {}  # see `_failing`

    def settle(self, report, function: ast.AST | None, guards: list[conditions.Guard], done: str = "built") -> None:
        """Info when the reported code runs only under a condition on parameters of `function` that is false while
        every call in the file leaves them at their defaults (NAFNet's `nn.Dropout(rate) if rate > 0.0 else None`,
        `if dropout_layer_params:`, a dataset's `if not self.random_crop:` with `random_crop=False`)."""
        off = self.off_guard(function, guards)
        if off is not None:
            report.severity = "info"
            report.message += (f" ({done} only when `{condition_text(conditions.holding(off))}`: not so by default, "
                               f"and no call in this file passes another value)")

    def skipped_before(self, ancestors: list[ast.AST]) -> tuple[ast.AST, conditions.Guard] | None:
        """A function around the code at `ancestors` and the test of one of its parameters it returns on before that
        code, true in every call of it in the project: each passes a literal making it so, or a parameter of its own
        that holds one (fairseq's `quant_noise(module, p, block_size)` returns on `if p <= 0:` before it installs the
        hook that draws, and BEATs' every call passes `q_noise`, 0.0 by default)."""
        for index, function in enumerate(ancestors[:-1]):
            if not isinstance(function, FUNCTION_TYPES):
                continue
            guards = next((guards for statement, guards in conditions.block(function.body, ())
                           if statement is ancestors[index + 1]), ())
            for guard in guards:
                names = {node.id for node in ast.walk(guard[0]) if isinstance(node, ast.Name)}
                if len(names) == 1 and self.holds(function, names.pop(), self._failing(guard)):
                    return function, guard
        return None

    def _failing(self, guard: conditions.Guard) -> Callable[[object], bool]:
        """The test that a literal given to the one name of `guard`'s test makes the guard fail (one per guard, for
        `holds`'s memo)."""
        found = self._tests.get(id(guard[0]), {}).get(guard[1])
        if found is None:
            test, wanted = guard

            def found(literal: object) -> bool:
                return conditions.truth(test, lambda node: literal if isinstance(node, ast.Name)
                                        else conditions.UNKNOWN) is (not wanted)

            self._tests.setdefault(id(test), {})[wanted] = found
        return found

    def off_guard(self, function: ast.AST | None, guards: list[conditions.Guard]) -> conditions.Guard | None:
        """The first of `guards` that is false with the parameters of `function` as `lookup` answers them."""
        if not isinstance(function, FUNCTION_TYPES):
            return None
        lookup = self.lookup(function)
        return next((guard for guard in guards if conditions.truth(guard[0], lookup) is (not guard[1])), None)

    def lookup(self, function: ast.AST) -> conditions.Lookup:
        """Answers a parameter of `function` (or what `source` finds for it) with its default, where every call
        in the file leaves it so; anything else is unknown."""

        def lookup(node: ast.expr) -> object:
            name, where = self.source(node, function)
            if isinstance(name, ast.Name) and isinstance(where, FUNCTION_TYPES):
                default = constant(parameter_defaults(where).get(name.id))
                if default is not NOT_CONSTANT and self.off(where, name.id, default):
                    return default
            return conditions.UNKNOWN

        return lookup

    def source(self, value: ast.expr, function: ast.AST | None) -> tuple[ast.expr, ast.AST | None]:
        """For `self.dropout_p` in a method, the parameter of `__init__` its one assignment in the class stores
        (InternViT's `self.dropout_p = attention_dropout`), with that `__init__`; for a name a nested function
        reads from the function around it (minddiffusion's `noise_dropout` in PLMS' `get_x_prev_and_pred_x0`),
        that function; else `value` and `function`."""
        if isinstance(value, ast.Name):
            return value, self._closure(value.id, function)
        owner = self.owner(function) if isinstance(function, FUNCTION_TYPES) else None
        if owner is None or not (isinstance(value, ast.Attribute) and isinstance(value.value, ast.Name)
                                 and value.value.id == "self"):
            return value, function
        stores = [(node, method) for method in owner.body if isinstance(method, FUNCTION_TYPES)
                  for node in ast.walk(method) if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign))
                  and any(_same_attribute(target, value) for target in (node.targets if isinstance(node, ast.Assign) else [node.target]))]
        if len(stores) == 1 and isinstance(stores[0][0], ast.Assign) and stores[0][1].name == "__init__" \
                and isinstance(stores[0][0].value, ast.Name):
            return stores[0][0].value, stores[0][1]
        return value, function

    def _closure(self, name: str, function: ast.AST | None) -> ast.AST | None:
        """The function whose parameter (or local) `name` is, looking out from `function` through the functions
        it is nested in; `function` when none is."""
        if self._outer is None:
            self._outer = {id(inner): outer for outer in ast.walk(self.tree) if isinstance(outer, FUNCTION_TYPES)
                           for inner in ast.walk(outer) if inner is not outer and isinstance(inner, FUNCTION_TYPES)}
        scope = function
        while isinstance(scope, FUNCTION_TYPES) and name not in _parameters(scope) and name not in _stores(scope):
            scope = self._outer.get(id(scope))
        return scope if scope is not None else function

    def off(self, function: ast.AST | None, name: str, off: object) -> bool:
        """Whether parameter `name` of `function` is `off` in every call of `function` in the file (at least one
        where it is required): passed `off`, or left at a default of `off`, or passed such a parameter of the
        caller's own."""
        return self.holds(function, name, equals(type(off), off))

    def holds(self, function: ast.AST | None, name: str, accept: Callable[[object], bool],
              trust_default: bool = False, depth: int = PARAMETER_DEPTH) -> bool:
        """Whether parameter `name` of `function` (not assigned in it) holds a literal `accept` takes: its default,
        when it has one `accept` takes and (unless `trust_default`) no call in the file passes another; else what
        every call in the file passes it (at least one): such a literal, or a parameter of the caller's that holds
        one (`depth` calls up). `accept` is memoised by identity: pass a module-level function or `equals(...)`."""
        if not isinstance(function, FUNCTION_TYPES) or depth == 0:
            return False
        key = (id(function), name, accept, trust_default, depth)
        if key not in self._settled:
            self._settled[key] = self._calls_leave(function, name, accept, trust_default, depth)
        return self._settled[key]

    def _calls_leave(self, function: ast.FunctionDef, name: str, accept: Callable[[object], bool],
                     trust_default: bool, depth: int) -> bool:
        """`holds`, not memoised."""
        if name not in _parameters(function) or not _keeps(function, name, accept):
            return False
        default = parameter_defaults(function).get(name)
        kept = default is not None and accept(constant(default))
        if default is not None and kept is trust_default:
            return kept  # a default taken, and trusted; or one not taken, which a call leaving it keeps
        calls, elsewhere = self._calls_by_name(function), self._calls_elsewhere(function)
        if calls is None or not kept and not calls and not elsewhere:
            return False
        for call, caller in calls:
            given = self._given(function, name, call, caller)
            if given is None:  # behind `*args` / `**options`, or not given
                if not self._spread_leaves(call, caller, name, (accept, trust_default), depth, not kept):
                    return False
            elif not (self._passes(given[0], caller, (accept, trust_default), depth) if given[1] else kept):
                return False
        for call, caller, module in elsewhere:  # read as the calls here are, in their own file, and its options
            given, other = self._given(function, name, call, caller), _defaults_of(module)
            if given is None or not (other._passes(given[0], caller, (accept, trust_default), depth)
                                     or accept(opt_in.default_value(other.ctx, given[0])) if given[1] else kept):
                return False
        return True

    def _calls_elsewhere(self, function: ast.AST) -> list[tuple[ast.Call, ast.AST | None, project.Module]]:
        """The calls of a module-level function (or class, for its `__init__`) of the file in the project's files
        importing it (vits' models.py builds attentions.py's `Encoder(..., p_dropout)` from its JSON config; every
        caller of VideoMAE's `RandomErasing` passes `device="cpu"`), each with the function around it and its module;
        [] for another method, whose calls elsewhere are not found by name."""
        owner = self.owner(function)
        cls = owner if owner is not None and function.name == "__init__" else None
        if (function if cls is None else cls) not in self.tree.body or owner is not None and cls is None:
            return []
        return _importer_calls(self.ctx, (function if cls is None else cls).name)

    def _spread_leaves(self, call: ast.Call, caller: ast.AST | None, name: str, wanted: tuple, depth: int,
                       required: bool) -> bool:
        """For a call that binds nothing to `name`: whether it leaves it as `wanted` (at its default, unless
        `required`): it spreads nothing, or only its caller's own `**kwargs` (mindcv's model factories), which no
        call of the caller in the file sets otherwise (none calls it: not passed in this file). Any other
        `**options` (not a dict the caller builds, see `_dict_entry`) or `*args` may pass anything."""
        spread = [kw.value for kw in call.keywords if kw.arg is None]
        if any(isinstance(arg, ast.Starred) for arg in call.args):
            return False
        if not spread:
            return not required
        own = caller.args.kwarg if isinstance(caller, FUNCTION_TYPES) else None
        if own is None or any(not (isinstance(value, ast.Name) and value.id == own.arg) for value in spread):
            return False
        if name in _parameters(caller):  # the caller's `**kwargs` cannot hold one of its parameters
            return not required
        if depth <= 1:
            return False
        calls = self._calls_by_name(caller)
        if calls is None or required and not calls:
            return False
        for outer, around in calls:
            given = _dict_entry(outer, name, around) or next(
                ((kw.value, True) for kw in outer.keywords if kw.arg == name), None)
            if not (self._spread_leaves(outer, around, name, wanted, depth - 1, required) if given is None
                    else self._passes(given[0], around, wanted, depth)):
                return False
        return True

    def _passes(self, passed: ast.expr, caller: ast.AST | None, wanted: tuple, depth: int) -> bool:
        """Whether an argument holds what `wanted` (`accept`, `trust_default`) takes: a literal, an option of the
        parsed arguments at its default (mindone's `load_data(random_crop=args.random_crop)`, `--random_crop` false
        by default), or a
        parameter of the caller that does (`depth` - 1 levels up), also through the attribute its `__init__` stores
        it in (open_clip's HTSAT encoder building its layers with `drop=self.drop_rate`)."""
        accept, trust_default = wanted
        literal = constant(passed)
        if accept(literal) or opt_in.parsed_option(self.ctx, passed) and accept(opt_in.default_value(self.ctx, passed)):
            return True
        passed, caller = self.source(passed, caller)
        return isinstance(passed, ast.Name) and self.holds(caller, passed.id, accept, trust_default, depth - 1)

    def passed(self, function: ast.AST, name: str) -> list[tuple[ast.expr | None, ast.AST | None]] | None:
        """What each call in the file of `function` passes its parameter `name` (None: left at its default), with
        the function around the call; None where a call may pass it through `*args`/`**options`, or the calls
        are not found by name (a module's `forward`)."""
        calls = self._calls_by_name(function)
        if calls is None:
            return None
        found = []
        for call, caller in calls:
            given = self._given(function, name, call, caller)
            if given is None:
                return None
            found.append((given[0] if given[1] else None, caller))
        return found

    def always_given(self, function: ast.AST | None, name: str, depth: int = PARAMETER_DEPTH) -> bool:
        """Whether every call of `function` (at least one, in the file or, for a module-level function, in the
        project's files importing it) passes its parameter `name` something other than a literal None, or a
        parameter of the caller's own that is so given (`depth` calls up): a `sample_dataset(...,
        random_state)` whose `if random_state is None:` fallback its callers never ask for; not minddiffusion's
        `plms_sampling(..., x_T=x_T)`, handed on from `sample(..., x_T=None)`."""
        calls = self._calls_by_name(function) if isinstance(function, FUNCTION_TYPES) and depth else None
        if calls is None:
            return False
        given = [(self._given(function, name, call, caller), caller) for call, caller in calls] + [
            (self._given(function, name, call, caller), caller) for call, caller, _ in self._calls_elsewhere(function)]
        return bool(given) and all(
            found is not None and found[1] and constant(found[0]) is not None and not (
                isinstance(found[0], ast.Name) and isinstance(caller, FUNCTION_TYPES)
                and found[0].id in _parameters(caller) and not self.always_given(caller, found[0].id, depth - 1))
            for found, caller in given)

    def _given(self, function: ast.AST, name: str, call: ast.Call, caller: ast.AST | None) -> tuple | None:
        """What `call` (of `function`, in `caller`) gives parameter `name`: (the expression passed, True), (its
        default, False), or None (behind `*args`/`**options`, or not given); an `**options` dict the caller builds
        counts as passing its entries."""
        return _dict_entry(call, name, caller) or conditions.call_arguments(
            function, call, bound=self._bound(function, call)).get(name)

    def _calls_by_name(self, function: ast.AST) -> list | None:
        """The calls in the file of `function` (of its class, for `__init__`); None for a module's `forward`,
        run through `block(x, ...)`, and the other special methods, whose calls are not found by name."""
        owner = self.owner(function)
        if owner is not None and function.name == "__init__":
            return self._calls_of(owner.name)
        if owner is not None and (function.name in CALLED_THROUGH_OBJECT or function.name.startswith("__")):
            return None
        return self._calls_of(function.name)

    def _bound(self, function: ast.AST, call: ast.Call) -> bool:
        """Whether `call` (of `function`) passes its object first: a class's construction, or a method (not a
        static one) called on an object (`self.f(...)`)."""
        if self.owner(function) is None or any(getattr(d, "id", None) == "staticmethod"
                                               for d in function.decorator_list):
            return False
        return function.name == "__init__" or isinstance(call.func, ast.Attribute)

    def callers(self, function: ast.AST) -> list[ast.AST | None] | None:
        """The function around each call in the file of `function` (None: at module level); None where its calls
        are not found by name (see `_calls_by_name`)."""
        calls = self._calls_by_name(function)
        return None if calls is None else [caller for _, caller in calls]

    def owner(self, function: ast.AST) -> ast.ClassDef | None:
        """The class `function` is a method of, if any."""
        if self._owners is None:
            self._owners = {id(item): node for node in ast.walk(self.tree) if isinstance(node, ast.ClassDef)
                            for item in node.body}
        return self._owners.get(id(function))

    def _calls_of(self, name: str) -> list:
        """The calls in the file of a function or class named `name` (`Mlp(...)`, `self.block(...)`; not a
        library's, like `torch.multinomial` beside audiocraft's own `multinomial`), each with the function around
        it."""
        if self._callers is None:
            self._callers = {}
            for function, node in _calls_by_function(self.tree, None):
                func = node.func
                callee = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
                if callee is not None and (isinstance(func, ast.Name) or self.ctx.call_qualname(node) is None):
                    self._callers.setdefault(callee, []).append((node, function))
        return self._callers.get(name, [])


def default_elsewhere(ctx: FileContext, value: ast.expr, function: ast.FunctionDef | ast.AsyncFunctionDef,
                      default: object) -> object:
    """What `value`, read in `function` of `ctx`'s file, holds as the project's other files call `function` by its
    name: `default` (its value in this file) when they all agree with it, or none imports the file;
    `conditions.UNKNOWN` when one of them may change it, and for a method of a module other files import, which
    may be called from anywhere (a base class's `self.get_dataloader(..., shuffle=True)`, minddet's
    `coco.create_train_dataset(..., num_parallel_workers=num_workers)` in its train.py)."""
    if not project.imported_elsewhere(ctx.path):
        return default
    if function not in ctx.tree.body:
        return conditions.UNKNOWN
    for call, _, _ in _importer_calls(ctx, function.name):
        values = dict(conditions.bind_arguments(function, call, conditions.no_lookup))
        if conditions.value(value, conditions.parameter_lookup(values, conditions.no_lookup)) != default:
            return conditions.UNKNOWN
    return default


def _importer_calls(ctx: FileContext, name: str) -> list[tuple[ast.Call, ast.AST | None, project.Module]]:
    """The calls of the file's module-level `name` in the project's other files, each with the function around it
    and its module: `module.name(...)`, or a bare call where the name is imported from here (`from src.dataset
    import f as g`; also through a package that re-exports it, or a `from x import *`)."""
    if not project.imported_elsewhere(ctx.path):
        return []
    found = []
    for importer in project.function_importers(ctx.path, name):
        module = project.load(Path(importer))
        if module is None:
            continue
        bound = {local for local, ref in module.local.refs.items() if ref.attr == name
                 and _defines(project.defining(module.path.parent, project.Ref(ref.module, ref.level), ref.attr),
                              ctx.path, name)}
        bound |= {name} if module.local.stars else set()
        if "calls by name" not in module.memo:
            calls: dict[str, list[tuple[ast.Call, bool, ast.AST | None]]] = {}  # callee -> (call, bare, caller)
            for caller, call in _calls_by_function(module.tree, None):
                if isinstance(call.func, (ast.Name, ast.Attribute)):
                    bare = isinstance(call.func, ast.Name)
                    calls.setdefault(call.func.id if bare else call.func.attr, []).append((call, bare, caller))
            module.memo["calls by name"] = calls
        found += [(call, caller, module) for callee in {name} | bound
                  for call, bare, caller in module.memo["calls by name"].get(callee, [])
                  if not bare and callee == name or bare and callee in bound]
    return found


def _defaults_of(module: project.Module) -> LeftAtDefault:
    """A `LeftAtDefault` over another project file, made once."""
    if "left at default" not in module.memo:
        module.memo["left at default"] = LeftAtDefault(FileContext(str(module.path), module.source, module.tree))
    return module.memo["left at default"]


def _defines(found: tuple[project.Module, str] | None, path: str, name: str) -> bool:
    """Whether an imported name found (`project.defining`) is `name` of the file at `path`."""
    return found is not None and found[1] == name and found[0].path.resolve() == Path(path).resolve()


@functools.cache
def equals(kind: type, wanted: object) -> Callable[[object], bool]:
    """The test that a literal is `wanted` (of type `kind`: a number is no bool), one per value for `holds`'s
    memo."""
    return lambda literal: is_value(literal, wanted)


def _parameters(function: ast.AST) -> set[str]:
    """The names of the parameters of `function`."""
    arguments = function.args
    return {a.arg for a in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs)}


def _stores(function: ast.AST) -> set[str]:
    """The names `function` assigns to (not those of the functions in it)."""
    return {node.id for node in walk_scope(function) if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)}


def _keeps(function: ast.AST, name: str, accept: Callable[[object], bool]) -> bool:
    """Whether `function` leaves parameter `name` holding what `accept` takes, if it did: it assigns it nothing, or
    only itself or such a literal (llm-foundry's `dropout_p = dropout_p if training else 0.0`)."""
    nodes = list(walk_scope(function))
    values = {id(target): node.value for node in nodes if isinstance(node, ast.Assign) for target in node.targets}
    for node in nodes:
        if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Store):
            value = values.get(id(node))  # None: stored otherwise (a loop target, an unpacking, `+=`)
            if not (isinstance(value, ast.IfExp) and all(
                    (isinstance(branch, ast.Name) and branch.id == name) or accept(constant(branch))
                    for branch in (value.body, value.orelse))):
                return False
    return True


def _calls_by_function(tree: ast.AST, function: ast.AST | None):
    """Every call under `tree`, with the innermost function around it (without recursion: long expressions nest
    deeply)."""
    stack = [(tree, function)]
    while stack:
        node, function = stack.pop()
        if isinstance(node, ast.Call):
            yield function, node
        inner = node if isinstance(node, FUNCTION_TYPES) else function
        stack.extend((child, inner) for child in ast.iter_child_nodes(node))


def is_value(literal: object, wanted: object) -> bool:
    """Whether a literal is `wanted` (a number is no bool)."""
    return literal is not NOT_CONSTANT and isinstance(literal, bool) == isinstance(wanted, bool) and literal == wanted


def _dict_entry(call: ast.Call, name: str, caller: ast.AST | None) -> tuple[ast.expr, bool] | None:
    """(the value, True) that `**options` passes as `name`, where the function around the call sets `options` to
    a dict with that key (audiocraft's `attn_kwargs = {'dropout': dropout, ...}`, edm's `block_kwargs =
    dict(..., dropout=dropout)`)."""
    spread = {kw.value.id for kw in call.keywords if kw.arg is None and isinstance(kw.value, ast.Name)}
    for node in ast.walk(caller) if spread and caller is not None else ():
        if (isinstance(node, (ast.Assign, ast.AnnAssign))
                and any(isinstance(t, ast.Name) and t.id in spread
                        for t in (node.targets if isinstance(node, ast.Assign) else [node.target]))):
            found = [value for key, value in dict_items(node.value) if key == name]
            if found:
                return found[0], True
    return None


def dict_items(value: ast.expr | None) -> list[tuple[object, ast.expr]]:
    """The (key, value) pairs of a dict display or a `dict(key=value, ...)` call."""
    if isinstance(value, ast.Dict):
        return [(constant(key), item) for key, item in zip(value.keys, value.values, strict=True) if key is not None]
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "dict":
        return [(kw.arg, kw.value) for kw in value.keywords if kw.arg is not None]
    return []


def _same_attribute(target: ast.expr, value: ast.expr) -> bool:
    """Whether `target` is `self.<the attribute of value>`."""
    return (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self"
            and target.attr == value.attr)

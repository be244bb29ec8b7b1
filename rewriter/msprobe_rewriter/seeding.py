"""What a file does to pin its randomness, and whether it needs to.

One lazy pass per file, shared by the seeding and determinism rules, finds every call or assignment
that seeds a generator family, switches deterministic kernels on, or sets HCCL_DETERMINISTIC: directly,
through a library helper in the catalogue, or through a helper defined in another file of the project
(followed `MAX_DEPTH` files deep, see `project`). Each effect keeps the `if` conditions around it, so
"seeds only when --seed is given" can be told apart from "seeds".
"""

from __future__ import annotations

import ast
import re
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field

from msprobe_rewriter import catalogue, conditions, environment, project
from msprobe_rewriter.context import (
    EVAL_NAME,
    NOT_CONSTANT,
    FileContext,
    argument,
    constant,
    keyword,
    target_name,
)

FAMILIES = frozenset(catalogue.SEED_CALLS)
MAX_DEPTH = 2  # the script's helper, and the helper's helper in a third file
# A function we cannot look into but whose name says it seeds (`set_seed`, `init_seeds`, ...).
SEEDER_NAME = re.compile(r"seed", re.IGNORECASE)
NOT_SEEDER = re.compile(r"^(get|initial|make|gen|new)_|worker", re.IGNORECASE)
DETERMINISM_KEYWORDS = ("deterministic", "mode", "full_determinism")
# What makes a script's randomness matter: it trains, or it samples (draws from torch's generator) from
# weights it loads. Draws alone (dummy inputs of a smoke test, fake data of a demo) do not.
SAMPLING_DRAWS = catalogue.TORCH_RANDOM_DRAWS
WEIGHT_LOADERS = frozenset({"torch.load"}) | catalogue.MINDSPORE_LOAD_CHECKPOINT | catalogue.MINDSPORE_LOAD_PARAM
WEIGHT_LOADING_METHODS = frozenset({"load_state_dict", "from_pretrained", "load_from_checkpoint"})

WALKED = (ast.Call, ast.Assign, ast.FunctionDef, ast.AsyncFunctionDef, ast.Import, ast.ImportFrom)
Guard = conditions.Guard
Resolve = Callable[[ast.AST], "str | None"]


@dataclass(frozen=True)
class Summary:
    """What some code pins: generator families seeded, deterministic kernels, HCCL determinism."""

    families: frozenset[str] = frozenset()
    deterministic: bool = False
    hccl: bool = False

    def __or__(self, other: Summary) -> Summary:
        return Summary(self.families | other.families, self.deterministic or other.deterministic,
                       self.hccl or other.hccl)


NOTHING = Summary()
DETERMINISTIC = Summary(deterministic=True)
HCCL = Summary(hccl=True)


@dataclass(frozen=True)
class Effect:
    """One statement of the linted file that pins something, with the conditions around it."""

    node: ast.AST
    summary: Summary
    guards: tuple[Guard, ...]
    function: str | None


@dataclass
class FileSeeding:
    """Everything the seeding rules ask about one file."""

    calls: list[ast.Call]
    effects: list[Effect]
    trains: bool  # runs training steps, builds an optimizer or a trainer
    samples: bool = False  # draws from torch's generator
    loads_weights: bool = False
    worker_init: set[str] = field(default_factory=set)  # functions passed as `worker_init_fn`
    _lookup: conditions.Lookup | None = None

    def lookup(self, node: ast.expr) -> object:
        """Default value of `args.<dest>` from the file's argparse definitions."""
        if self._lookup is None:
            self._lookup = conditions.argparse_lookup(conditions.argparse_defaults(self.calls))
        return self._lookup(node)

    @property
    def random_work(self) -> bool:
        """Whether the file's randomness matters: it trains, or samples from weights it loads."""
        return self.trains or (self.samples and self.loads_weights)

    def skipping_guard(self, effect: Effect) -> ast.expr | None:
        """The condition that keeps `effect` from running with the default arguments, if any."""
        for test, wanted in effect.guards:
            if conditions.truth(test, self.lookup) is (not wanted):
                return test
        return None

    def families(self) -> frozenset[str]:
        """Every generator family seeded anywhere in the file (under any condition)."""
        found: frozenset[str] = frozenset()
        for effect in self.effects:
            found |= effect.summary.families
        return found


_CACHE: weakref.WeakKeyDictionary[FileContext, FileSeeding] = weakref.WeakKeyDictionary()


def analyse(ctx: FileContext) -> FileSeeding:
    """The seeding facts of `ctx`'s file (computed once, after the traversal)."""
    found = _CACHE.get(ctx)
    if found is None:
        found = _CACHE[ctx] = _analyse(ctx)
    return found


# --- direct effects (catalogue knowledge) ------------------------------------------------------
def families_of(qualified: str) -> frozenset[str]:
    """Generator families a seeding call covers."""
    if qualified in catalogue.SEED_ALL_CALLS:
        return FAMILIES
    found = {family for family, calls in catalogue.SEED_CALLS.items() if qualified in calls}
    return frozenset(found | catalogue.SEED_IMPLIES.get(qualified, frozenset()))


def call_effects(call: ast.Call, qualified: str | None) -> list[tuple[Summary, ast.expr | None]]:
    """What a call to `qualified` pins, each with the argument that must be truthy for it (or None)."""
    if qualified is None:
        return []
    found = []
    families = families_of(qualified)
    if qualified in catalogue.SEEDS_FROM_ENTROPY_WITHOUT_ARGUMENT:
        seed = call.args[0] if call.args else keyword(call, "a") or keyword(call, "seed")
        if seed is None or constant(seed) is None:
            families = frozenset()  # `random.seed()`, `np.random.seed(None)`: a fresh seed every run
    if families:
        found.append((Summary(families), None))
    for table, summary in ((catalogue.DETERMINISM_CALLS, DETERMINISTIC), (catalogue.HCCL_DETERMINISM_CALLS, HCCL)):
        if qualified in table:
            on, guard = _switch(call, table[qualified])
            if on:
                found.append((summary, guard))
    found.extend(_env_effects(environment.env_writes(call, qualified)))
    return found


def assign_effects(node: ast.Assign, resolve: Resolve) -> list[tuple[Summary, ast.expr | None]]:
    """What an assignment pins: `cudnn.deterministic = True`, `os.environ["HCCL_DETERMINISTIC"] = ...`."""
    found = []
    for target in node.targets:
        if (isinstance(target, ast.Attribute) and target.attr == catalogue.CUDNN_DETERMINISTIC_ATTR
                and resolve(target.value) in catalogue.CUDNN_MODULES):
            literal = constant(node.value)
            if literal is NOT_CONSTANT:
                found.append((DETERMINISTIC, node.value))
            elif literal:
                found.append((DETERMINISTIC, None))
    found.extend(_env_effects(environment.env_assignments(node, resolve)))
    return found


def _env_effects(pairs: list[tuple[str, ast.expr]]) -> list[tuple[Summary, None]]:
    return [(HCCL, None) for name, value in pairs
            if name in catalogue.HCCL_DETERMINISTIC_ENV and environment.env_enables(value)]


def _switch(call: ast.Call, spec: tuple[int | None, str] | None) -> tuple[bool, ast.expr | None]:
    """Whether a switching call may turn its flag on, and the argument that decides it (None: always)."""
    if spec is None:
        return True, None
    position, name = spec
    arg = argument(call, position, name) if position is not None else keyword(call, name)
    if arg is None:
        return False, None
    literal = constant(arg)
    if literal is NOT_CONSTANT:
        return True, arg
    return bool(literal), None


def seeder_by_name(call: ast.Call) -> Summary:
    """A call we cannot look into whose name says it seeds: assume it seeds everything it says."""
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    if not SEEDER_NAME.search(name) or NOT_SEEDER.search(name):
        return NOTHING
    wants_determinism = any(kw.arg in DETERMINISM_KEYWORDS and constant(kw.value) is not False
                            for kw in call.keywords)
    return Summary(FAMILIES, deterministic=wants_determinism)


# --- following project-local helpers -----------------------------------------------------------
def helper_summary(call: ast.Call, folder, local: project.LocalImports, defined, depth: int,
                   lookup: conditions.Lookup) -> Summary | None:
    """What a call into a project-local module pins; None when the call is not one."""
    targets = project.call_targets(call, local, defined)
    if not targets:
        return None
    for ref, name in targets:
        path = project.find_module(folder, ref.module, ref.level)
        module = project.load(path) if path is not None else None
        found = _resolve_function(module, name) if module is not None else None
        if isinstance(found, str):
            return _summarise(call_effects(call, found), conditions.no_lookup)
        if found is not None and depth <= MAX_DEPTH:
            env = _bind_arguments(found[1], call, lookup)
            return _function_summary(found[0], found[1], depth, env, frozenset())
    return seeder_by_name(call)


def _resolve_function(module: project.Module, name: str, hops: int = 0):
    """`(module, def)` defining `name` in `module` (following re-exports), a library name, or None."""
    function = module.functions.get(name)
    if function is not None:
        return module, function
    library = module.imports.resolve(ast.Name(id=name))
    if library is not None:
        return library
    ref = module.local.refs.get(name)
    candidates = [(ref, ref.attr)] if ref is not None and ref.attr else [(star, name) for star in module.local.stars]
    for source, attr in candidates if hops < 3 else ():
        path = project.find_module(module.path.parent, source.module, source.level)
        target = project.load(path) if path is not None else None
        found = _resolve_function(target, attr, hops + 1) if target is not None else None
        if found is not None:
            return found
    return None


def _bind_arguments(function: ast.FunctionDef | ast.AsyncFunctionDef, call: ast.Call,
                    lookup: conditions.Lookup) -> tuple[tuple[str, object], ...]:
    """Parameter values of `function` for this call: given constants, else defaults, else unknown."""
    params = function.args.posonlyargs + function.args.args
    defaults = [None] * (len(params) - len(function.args.defaults)) + list(function.args.defaults)
    pairs = list(zip(params, defaults, strict=True))
    pairs += list(zip(function.args.kwonlyargs, function.args.kw_defaults, strict=True))
    opaque = any(isinstance(a, ast.Starred) for a in call.args) or any(kw.arg is None for kw in call.keywords)
    given = {kw.arg: kw.value for kw in call.keywords if kw.arg}
    for param, arg in zip(params, call.args, strict=False):
        if isinstance(arg, ast.Starred):
            break
        given[param.arg] = arg
    env = []
    for param, default in pairs:
        if param.arg in given:
            env.append((param.arg, conditions.value(given[param.arg], lookup)))
        elif default is not None and not opaque:
            env.append((param.arg, constant(default)))
        else:
            env.append((param.arg, conditions.UNKNOWN))
    return tuple(env)


def _function_summary(module: project.Module, function, depth: int, env: tuple, seen: frozenset) -> Summary:
    """What calling `function` of a helper module pins, given its parameter values `env`."""
    key = (function.name, depth, env)
    if key in module.memo:
        return module.memo[key]
    values = dict(env)

    def lookup(node: ast.expr) -> object:
        return values.get(node.id, conditions.UNKNOWN) if isinstance(node, ast.Name) else conditions.UNKNOWN

    seen = seen | {(str(module.path), function.name)}
    total = NOTHING
    for node, guards, _ in conditions.walk(function.body, WALKED):
        if any(conditions.truth(test, lookup) is (not wanted) for test, wanted in guards):
            continue
        if isinstance(node, ast.Assign):
            total |= _summarise(assign_effects(node, module.imports.resolve), lookup)
        elif isinstance(node, ast.Call):
            total |= _helper_call(module, node, depth, lookup, seen)
    module.memo[key] = total
    return total


def _helper_call(module: project.Module, call: ast.Call, depth: int, lookup, seen: frozenset) -> Summary:
    direct = call_effects(call, module.imports.resolve(call.func))
    if direct:
        return _summarise(direct, lookup)
    func = call.func
    if isinstance(func, ast.Name) and func.id in module.functions:
        if (str(module.path), func.id) in seen:
            return NOTHING
        callee = module.functions[func.id]
        return _function_summary(module, callee, depth, _bind_arguments(callee, call, lookup), seen)
    followed = helper_summary(call, module.path.parent, module.local, module.functions, depth + 1, lookup)
    return followed if followed is not None else seeder_by_name(call)


def _summarise(effects: list[tuple[Summary, ast.expr | None]], lookup: conditions.Lookup) -> Summary:
    total = NOTHING
    for summary, guard in effects:
        if guard is None or conditions.truth(guard, lookup) is not False:
            total |= summary
    return total


# --- the linted file ---------------------------------------------------------------------------
def _analyse(ctx: FileContext) -> FileSeeding:
    project.find_module.cache_clear()  # module lookups are cached for one file's analysis only
    nodes = list(conditions.walk([ctx.tree], WALKED))
    defined = {node.name for node, _, _ in nodes if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))}
    local = project.local_imports(node for node, _, _ in nodes)
    folder = project.file_folder(ctx.path)
    seeding = FileSeeding([node for node, _, _ in nodes if isinstance(node, ast.Call)], [], _trains(ctx))
    for node, guards, function in nodes:
        if isinstance(node, ast.Assign):
            found = assign_effects(node, ctx.qualname)
        elif isinstance(node, ast.Call):
            found = _call(ctx, seeding, node, local, defined, folder, evaluation=_is_eval(function))
        else:
            continue
        for summary, guard in found:
            extra = ((guard, True),) if guard is not None else ()
            seeding.effects.append(Effect(node, summary, guards + extra, function))
    return seeding


def _call(ctx: FileContext, seeding: FileSeeding, call: ast.Call, local, defined, folder, evaluation: bool) -> list:
    qualified = ctx.call_qualname(call) or method_qualname(ctx, call)
    worker_init = keyword(call, "worker_init_fn")
    if worker_init is not None:
        seeding.worker_init.add(_function_name(worker_init))
    if not evaluation:
        _note_evidence(seeding, call, qualified)
    direct = call_effects(call, qualified)
    if direct or qualified is not None:
        return direct
    followed = helper_summary(call, folder, local, defined, 1, seeding.lookup)
    if followed is None:
        followed = NOTHING if _is_local_def(call, defined) or not _is_imported(ctx, call) else seeder_by_name(call)
    return [(followed, None)] if followed != NOTHING else []


def method_qualname(ctx: FileContext, call: ast.Call) -> str | None:
    """`lightning.Fabric.seed_everything` for `fabric.seed_everything()` when `fabric = L.Fabric(...)`."""
    func = call.func
    if not isinstance(func, ast.Attribute):
        return None
    owner = target_name(func.value)
    created = ctx.assigned_calls.get(owner) if owner is not None else None
    return f"{created}.{func.attr}" if created is not None else None


def _is_eval(function: str | None) -> bool:
    """Whether the innermost enclosing function is evaluation-only by its name (`validate`, `test_x`)."""
    return function is not None and EVAL_NAME.search(function) is not None


def _is_local_def(call: ast.Call, defined: set[str]) -> bool:
    return isinstance(call.func, ast.Name) and call.func.id in defined


def _is_imported(ctx: FileContext, call: ast.Call) -> bool:
    """Whether the callee is a bare name or an attribute of an imported module (not of some object)."""
    func = call.func
    if isinstance(func, ast.Name):
        return True
    while isinstance(func, ast.Attribute):
        func = func.value
    return isinstance(func, ast.Name) and func.id in ctx.imports.bindings


def _function_name(node: ast.expr) -> str:
    if isinstance(node, ast.Call) and node.args:  # functools.partial(seed_worker, ...)
        node = node.args[0]
    return getattr(node, "id", None) or getattr(node, "attr", "")


def _note_evidence(seeding: FileSeeding, call: ast.Call, qualified: str | None) -> None:
    """Record what a call says about the script: it trains, samples, or loads weights."""
    if qualified is not None:
        if qualified in catalogue.TRAINER_CLASSES or catalogue.is_optimizer_class(qualified):
            seeding.trains = True
        elif qualified in SAMPLING_DRAWS:
            seeding.samples = True
        elif qualified in WEIGHT_LOADERS:
            seeding.loads_weights = True
    if isinstance(call.func, ast.Attribute) and call.func.attr in WEIGHT_LOADING_METHODS:
        seeding.loads_weights = True


def _trains(ctx: FileContext) -> bool:
    """Whether the file runs training steps anywhere (module level, loops, functions) outside test code."""
    return (ctx.module_level_steps or any(info.steps for info in ctx.loops.values() if not _is_eval(info.function))
            or any(not _is_eval(name) for name in ctx.stepping_functions()))

"""What one call or assignment pins: generator families seeded, deterministic kernels, HCCL determinism, a
fixed NCCL algorithm.

Directly (catalogue knowledge: `torch.manual_seed`, `cudnn.deterministic = True`, `os.environ[...]`), or
through a helper defined in another file of the project, followed down its whole chain of project calls
(each function summarised once per set of argument values; a call back into a function being summarised adds
nothing), with the arguments of the call bound to the helper's parameters, so `set_seed(s, deterministic=False)`
takes the branch it takes at run time. `seeding` applies this to every statement of a linted file.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from msprobe_rewriter import catalogue, conditions, cpu_code, environment, project
from msprobe_rewriter.context import NOT_CONSTANT, argument, constant, keyword, target_name, unpacks

FAMILIES = frozenset(catalogue.SEED_CALLS)
# A function we cannot look into but whose name says it seeds (`set_seed`, `init_seeds`, ...).
SEEDER_NAME = re.compile(r"seed", re.IGNORECASE)
NOT_SEEDER = re.compile(r"^(get|initial|make|gen|new)_|worker", re.IGNORECASE)
# Keywords of a seeder that turn on deterministic kernels: `deterministic=`, `mode=`, `full_determinism=`, and
# any other naming determinism (`set_seed(seed, set_deterministic=True)`, fsdp_turbo's).
DETERMINISM_KEYWORD = re.compile(r"determinis|^mode$")
WALKED = (ast.Call, ast.Assign, ast.FunctionDef, ast.AsyncFunctionDef, ast.Import, ast.ImportFrom)
Resolve = Callable[[ast.AST], "str | None"]
# Seeding call -> the generator families it seeds.
SEEDER_FAMILIES: dict[str, frozenset[str]] = {
    **{seeder: frozenset(f for f, calls in catalogue.SEED_CALLS.items() if seeder in calls)
       for calls in catalogue.SEED_CALLS.values() for seeder in calls},
    **dict.fromkeys(catalogue.SEED_ALL_CALLS, FAMILIES),
    **dict.fromkeys(catalogue.SEEDING_LOADERS, FAMILIES),
    **dict.fromkeys(catalogue.MEGATRON_PRETRAIN, FAMILIES),  # with `--seed` (see MEGATRON_INITIALIZE)
    **dict.fromkeys(catalogue.COMPOSER_TRAINERS, FAMILIES),  # with `seed=` (see SEEDS_FROM_ENTROPY_WITHOUT_ARGUMENT)
    **dict.fromkeys(catalogue.SB3_SET_RANDOM_SEED | catalogue.SB3_ALGORITHMS, catalogue.SB3_SEEDED_FAMILIES),
}


@dataclass(frozen=True)
class Summary:
    """What some code pins: generator families seeded, deterministic kernels (the framework's switch, or only
    cuDNN's flag, which CUDA alone reads), HCCL determinism, NCCL's algorithm; and which of the families a helper
    seeds only when a value it tests for None is set (mindediting's `init_env`: `if cfg.system.mindspore_seed is not
    None: set_seed(...)`), with the first such test and its file's name; likewise which of the switches it turns on
    only under a determinism flag whose value it is not told (OpenRLHF's `setup_distributed`: `if
    self.full_determinism: transformers.enable_full_determinism(self.seed)`)."""

    families: frozenset[str] = frozenset()
    deterministic: bool = False
    hccl: bool = False
    nccl: bool = False
    cudnn: bool = False
    unsure: frozenset[str] = frozenset()
    unsure_when: tuple[ast.expr, str] | None = field(default=None, compare=False)  # the test, its file's name
    opt_in: frozenset[str] = frozenset()  # of SWITCHES
    opt_in_when: tuple[ast.expr, str] | None = field(default=None, compare=False)  # the flag, its file's name

    @property
    def sure(self) -> frozenset[str]:
        """The families seeded whatever the values tested for None hold."""
        return self.families - self.unsure

    @property
    def switches(self) -> frozenset[str]:
        """The switches (of SWITCHES) turned on, under any flag."""
        return frozenset(name for name in SWITCHES if getattr(self, name))

    def without_opt_in(self) -> Summary:
        """What is pinned whatever the determinism flags hold."""
        return replace(self, **dict.fromkeys(self.opt_in, False), opt_in=frozenset(), opt_in_when=None)

    def __or__(self, other: Summary) -> Summary:
        unsure = (self.unsure | other.unsure) - self.sure - other.sure
        when = next((s.unsure_when for s in (self, other) if s.unsure & unsure), None)
        opt_in = (self.opt_in | other.opt_in) - (self.switches - self.opt_in) - (other.switches - other.opt_in)
        flag = next((s.opt_in_when for s in (self, other) if s.opt_in & opt_in), None)
        return Summary(self.families | other.families, self.deterministic or other.deterministic,
                       self.hccl or other.hccl, self.nccl or other.nccl, self.cudnn or other.cudnn, unsure, when,
                       opt_in, flag)


SWITCHES = ("deterministic", "hccl", "nccl", "cudnn")
NOTHING = Summary()
DETERMINISTIC = Summary(deterministic=True)
CUDNN = Summary(cudnn=True)
HCCL = Summary(hccl=True)
NCCL = Summary(nccl=True)
TORCH_FAMILIES = frozenset({"torch", "torch-accelerator"})


# --- direct effects (catalogue knowledge) ------------------------------------------------------
def call_effects(call: ast.Call, qualified: str | None) -> list[tuple[Summary, ast.expr | None]]:
    """What a call to `qualified` pins, each with the argument that must be truthy for it (or None)."""
    if qualified is None:
        return []
    if qualified in catalogue.SB3_ALGORITHMS:
        return algorithm_seeding(call)
    found = []
    families = SEEDER_FAMILIES.get(qualified, frozenset())
    if qualified in catalogue.SEEDS_FROM_ENTROPY_WITHOUT_ARGUMENT:
        seed = argument(call, *catalogue.SEED_ARGUMENTS[qualified])
        if seed is None and not unpacks(call) or constant(seed) is None:
            families = frozenset()  # `random.seed()`, `np.random.seed(None)`, Composer's `Trainer(model=m)`: a fresh seed
    if qualified in catalogue.SEEDING_CLASSES:
        switch = catalogue.SEEDING_CLASSES[qualified]  # off: `LightningCLI(seed_everything_default=False)`
        families = FAMILIES if switch is None or constant(argument(call, *switch)) is not False else frozenset()
        if qualified in catalogue.TORCH_SEEDING_CLASSES:
            families = TORCH_FAMILIES
    if qualified in catalogue.MMENGINE_RUNNERS:
        found.extend(_runner_randomness(keyword(call, "randomness")))
    if families:
        found.append((Summary(families), None))
    for table, summary in ((catalogue.DETERMINISM_CALLS, DETERMINISTIC), (catalogue.HCCL_DETERMINISM_CALLS, HCCL)):
        if qualified in table:
            on, guard = _switch(call, table[qualified])
            if on:
                found.append((summary, guard))
    found.extend(_env_effects(environment.env_writes(call, qualified)))
    return found


def algorithm_seeding(call: ast.Call) -> list[tuple[Summary, ast.expr | None]]:
    """What building a Stable-Baselines3 algorithm pins (see `catalogue.SB3_ALGORITHMS`): with a `seed=` that is not
    None, `random`, NumPy and torch, and cuDNN's flag unless the device is the CPU; for an expression, only when
    it is not None (the condition: `<seed> is not None`, at the seed); a `**mapping` may hold the seed."""
    seed = keyword(call, "seed")
    literal = constant(seed) if seed is not None else None
    if literal is None:
        return [(Summary(catalogue.SB3_SEEDED_FAMILIES), None)] if seed is None and unpacks(call) else []
    guard = None
    if literal is NOT_CONSTANT:
        guard = ast.copy_location(ast.Compare(seed, [ast.IsNot()], [ast.Constant(None)]), seed)
    found = [(Summary(catalogue.SB3_SEEDED_FAMILIES), guard)]
    device = keyword(call, "device")
    if not catalogue.is_cpu_device(constant(device) if device is not None else "auto"):
        found.append((CUDNN, guard))  # `device="auto"` is CUDA where there is one
    return found


def assign_effects(node: ast.Assign, resolve: Resolve) -> list[tuple[Summary, ast.expr | None]]:
    """What an assignment pins: `cudnn.deterministic = True`, `os.environ["HCCL_DETERMINISTIC"] = ...`,
    `os.environ["NCCL_ALGO"] = "Ring"`."""
    found = []
    for target in node.targets:
        if (isinstance(target, ast.Attribute) and target.attr == catalogue.CUDNN_DETERMINISTIC_ATTR
                and resolve(target.value) in catalogue.CUDNN_MODULES):
            literal = constant(node.value)
            if literal is NOT_CONSTANT:
                found.append((CUDNN, node.value))
            elif literal:
                found.append((CUDNN, None))
    found.extend(_env_effects(environment.env_assignments(node, resolve)))
    return found


def _env_effects(pairs: list[tuple[str, ast.expr]]) -> list[tuple[Summary, None]]:
    found = []
    for name, value in pairs:
        if name in catalogue.HCCL_DETERMINISTIC_ENV and environment.env_enables(value):
            found.append((HCCL, None))
        elif name in catalogue.NCCL_ALGORITHM_ENV and constant(value) not in (None, ""):
            found.append((NCCL, None))
    return found


def _runner_randomness(randomness: ast.expr | None) -> list[tuple[Summary, ast.expr | None]]:
    """What an mmengine runner's `randomness=dict(seed=s, deterministic=d)` (a literal) pins: a seed that is not
    None seeds `random`, NumPy and torch (without one the runner draws its seed from NumPy's generator, so it
    pins nothing itself), `deterministic` sets cuDNN's flags and calls `torch.use_deterministic_algorithms(True)`
    (mmengine's `set_random_seed`)."""
    if isinstance(randomness, ast.Dict):
        fields = {constant(key): value for key, value in zip(randomness.keys, randomness.values, strict=True)}
    elif isinstance(randomness, ast.Call) and getattr(randomness.func, "id", None) == "dict":
        fields = {kw.arg: kw.value for kw in randomness.keywords}
    else:
        return []
    found = []
    seed = fields.get("seed")
    if seed is not None and constant(seed) is not None:
        found.append((Summary(FAMILIES), None))
    deterministic = fields.get("deterministic")
    literal = constant(deterministic) if deterministic is not None else False
    if literal is NOT_CONSTANT or literal:
        guard = deterministic if literal is NOT_CONSTANT else None
        found += [(CUDNN, guard), (DETERMINISTIC, guard)]  # and `torch.use_deterministic_algorithms(True)`
    return found


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
    if isinstance(literal, str):  # `set_context(deterministic="OFF")`
        return literal.strip().lower() not in catalogue.FALSE_SWITCH_VALUES, None
    return bool(literal), None


def seeder_by_name(call: ast.Call) -> Summary:
    """A call we cannot look into whose name says it seeds: assume it seeds everything it says."""
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    if not SEEDER_NAME.search(name) or NOT_SEEDER.search(name):
        return NOTHING
    wants_determinism = any(kw.arg is not None and DETERMINISM_KEYWORD.search(kw.arg) and constant(kw.value) is not False
                            for kw in call.keywords)
    return Summary(FAMILIES, deterministic=wants_determinism)


def outliving(function: ast.AST, resolve: Resolve) -> Callable[[ast.AST, Summary], Summary]:
    """What a statement of `function` pins that outlives the function: not the generator families it saves and puts
    back (`state = torch.get_rng_state()` ... `torch.set_rng_state(state)`), nor torch's inside a
    `with torch.random.fork_rng():` block."""
    saved = {}
    for node in ast.walk(function):
        value = node.value if isinstance(node, ast.Assign) and len(node.targets) == 1 else None
        value = value.body if isinstance(value, ast.IfExp) else value  # `... if torch.cuda.is_available() else None`
        if isinstance(value, ast.Call) and resolve(value.func) in catalogue.RNG_STATE_GETTERS:
            saved[target_name(node.targets[0])] = catalogue.RNG_STATE_GETTERS[resolve(value.func)]
    restored = frozenset(family for node in ast.walk(function) if isinstance(node, ast.Call) and node.args
                         and (family := catalogue.RNG_STATE_SETTERS.get(resolve(node.func) or "")) is not None
                         and saved.get(getattr(node.args[0], "id", None)) == family)
    forked = {id(inner) for node in ast.walk(function) if isinstance(node, (ast.With, ast.AsyncWith))
              and any(isinstance(item.context_expr, ast.Call) and resolve(item.context_expr.func) in catalogue.RNG_FORKS
                      for item in node.items) for inner in ast.walk(node)}

    def left(node: ast.AST, summary: Summary) -> Summary:
        gone = restored | (TORCH_FAMILIES if id(node) in forked else frozenset())
        return replace(summary, families=summary.families - gone) if summary.families & gone else summary

    return left


def summarise(effects: list[tuple[Summary, ast.expr | None]], lookup: conditions.Lookup) -> Summary:
    """Everything `effects` pin whose deciding argument may be truthy under `lookup`."""
    total = NOTHING
    for summary, guard in effects:
        if guard is None or conditions.truth(guard, lookup) is not False:
            total |= summary
    return total


# --- following project-local helpers -----------------------------------------------------------
Defined = tuple["project.Module", "ast.FunctionDef | ast.AsyncFunctionDef", "ast.ClassDef | None"]
MAX_HOPS = 6  # re-exports (packages re-export from subpackages), returned classes and base classes
MAX_IMPORT_HOPS = 3  # modules deep, an import's and those it runs in turn (a package's __init__.py, then its imports)


def helper_summary(call: ast.Call, folder, local: project.LocalImports, defined, lookup: conditions.Lookup,
                   seen: frozenset = frozenset()) -> Summary | None:
    """What a call into a project-local module pins (a class called runs its `__init__`); None when the
    call is not one (`seen`: the functions being summarised, see `_function_summary`)."""
    targets = project.call_targets(call, local, defined)
    if not targets:
        return None
    for ref, name in targets:
        module = _module(folder, ref)
        found = _resolve_function(module, name) if module is not None else None
        if isinstance(found, str):
            return summarise(call_effects(call, found), conditions.no_lookup)
        if found is not None:
            return _called(found, call, lookup, seen)
    return seeder_by_name(call)


def called_function(call: ast.Call, functions: dict[str, ast.AST], folder, local: project.LocalImports
                    ) -> tuple[ast.FunctionDef | ast.AsyncFunctionDef | None, Path | None]:
    """The function a call runs, and the project file it is in: one of the file's own (`functions`, by name; no
    file), or a project module's through the file's imports (following re-exports); (None, None) for anything
    else (a class, a library's function)."""
    if isinstance(call.func, ast.Name) and call.func.id in functions:
        return functions[call.func.id], None
    for ref, name in project.call_targets(call, local, functions):
        module = _module(folder, ref)
        found = _resolve_function(module, name) if module is not None else None
        if isinstance(found, tuple) and found[2] is None:
            return found[1], found[0].path
    return None, None


def built_class(call: ast.Call, folder, local: project.LocalImports) -> Defined | None:
    """`(module, __init__, class)` of the project class (of another file) that `call` builds, following re-exports;
    the `__init__` may be a base class's (then so is the class). None for anything else."""
    for ref, name in project.call_targets(call, local, ()):
        module = _module(folder, ref)
        found = _resolve_function(module, name) if module is not None else None
        if isinstance(found, tuple) and found[2] is not None:
            return found
    return None


def method_summary(creator: ast.Call, call: ast.Call, folder, local: project.LocalImports, defined,
                   lookup: conditions.Lookup) -> Summary | None:
    """What `call`, a method call on the object a project-local `creator` call made, pins: OpenRLHF's
    `strategy = get_strategy(args)` then `strategy.setup_distributed()`, which seeds. The object's class is
    the one `creator` calls, or the one the helper it calls returns. None when that is not known."""
    method = made_method(creator, call, folder, local, defined)
    return _called(method, call, lookup) if method is not None else None


def super_summary(module: project.Module, cls: ast.ClassDef, call: ast.Call, lookup: conditions.Lookup
                  ) -> Summary | None:
    """What `call`, a `super().name(...)` in a method of the class `cls` of `module`, pins: the method of a project
    base class it runs (torchtitan's forge example_train.py: `class Trainer(ForgeEngine)`, whose `__init__` calls
    `super().__init__(config)`, which seeds). None when that is not known."""
    bases = ast.ClassDef(name=cls.name, bases=cls.bases, keywords=[], body=[], decorator_list=[])
    method = class_method(module, bases, call.func.attr) if isinstance(call.func, ast.Attribute) else None
    return _called(method, call, lookup) if method is not None else None


def made_method(creator: ast.Call, call: ast.Call, folder, local: project.LocalImports, defined) -> Defined | None:
    """`(module, def, class)` of the method `call` runs on the object a project-local `creator` call made (see
    `method_summary`), or None."""
    if not isinstance(call.func, ast.Attribute):
        return None
    for ref, name in project.call_targets(creator, local, defined):
        module = _module(folder, ref)
        made = _made_class(module, name) if module is not None else None
        method = class_method(made[0], made[1], call.func.attr) if made is not None else None
        if method is not None:
            return method
    return None


def made_class(call: ast.Call, folder, local: project.LocalImports, defined) -> tuple[project.Module, ast.ClassDef] | None:
    """The project class (of another file) that `call` makes: the class it calls, or the one the function it calls
    returns (see `_made_class`); None when that is not known."""
    for ref, name in project.call_targets(call, local, defined):
        module = _module(folder, ref)
        made = _made_class(module, name) if module is not None else None
        if made is not None:
            return made
    return None


def _module(folder, ref: project.Ref) -> project.Module | None:
    path = project.find_module(folder, ref.module, ref.level)
    return project.load(path) if path is not None else None


def _called(found: Defined, call: ast.Call, lookup: conditions.Lookup, seen: frozenset = frozenset()) -> Summary:
    """What a call of a project function or method pins; a data class's methods (its `__init__` included: a data
    loader seeding `random` for its own sampling, Taichu-GLIDE's `MetaLoader`) seed no generator for the script."""
    module, function, owner = found
    env = conditions.bind_arguments(function, call, lookup, bound=owner is not None)
    summary = _function_summary(module, function, env, seen, owner)
    if owner is not None and _data_class(owner):
        return replace(summary, families=frozenset())
    return summary


def _data_class(cls: ast.ClassDef) -> bool:
    """A dataset, sampler or iterator class: one with `__getitem__`, `__iter__`, ... (`cpu_code.DATA_METHODS`)."""
    return any(isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and item.name in cpu_code.DATA_METHODS
               for item in cls.body)


def import_summary(node: ast.Import | ast.ImportFrom, folder) -> Summary:
    """What the project-local modules an import statement runs pin at their top level, on import (a model
    zoo's `src/utils.py` calling `set_seed(1)` outside any function, or a seeding function of its own); only
    unconditional statements count."""
    total = NOTHING
    for module in _modules_run(node, folder):
        if "on_import" not in module.memo:
            found = NOTHING
            for inner in _on_import(module):
                found |= _statement_summary(module, inner, conditions.no_lookup, frozenset())
            module.memo["on_import"] = found
        total |= module.memo["on_import"]
    return total


def import_seeder(node: ast.Import | ast.ImportFrom, folder) -> tuple[ast.Call, ast.expr | None] | None:
    """The first seeding call of a library (`mindspore.set_seed(5)`) that a project-local module an import
    statement runs makes at its top level, unconditionally, on import (mindrl's c51_trainer.py), if any, with its
    seed: the value that module assigns a name given as the seed at its top level (a2c.py's `SEED = 42`), once."""
    for module in _modules_run(node, folder):
        statements = _on_import(module)
        for inner in statements:
            if isinstance(inner, ast.Call) and SEEDER_FAMILIES.get(module.imports.resolve(inner.func) or ""):
                seed = argument(inner, 0, "seed")
                if isinstance(seed, ast.Name):
                    values = [statement.value for statement in statements if isinstance(statement, ast.Assign)
                              and [target_name(target) for target in statement.targets] == [seed.id]]
                    seed = values[0] if len(values) == 1 else None
                return inner, seed
    return None


def _modules_run(node: ast.Import | ast.ImportFrom, folder) -> list[project.Module]:
    """The project-local modules an import statement runs: those it loads and those their own unconditional
    top-level imports load, in turn, MAX_IMPORT_HOPS modules deep (mindrl's `from mindspore_rl.algorithm.a2c import
    config` runs the package's `__init__.py`, which imports a2c.py, which calls `np.random.seed(SEED)`)."""
    seen: dict[Path, project.Module] = {}
    layer = _imported_modules(node, folder)
    for _ in range(MAX_IMPORT_HOPS):
        layer = [module for module in layer if module.path not in seen]
        seen.update((module.path, module) for module in layer)
        layer = [found for module in layer for inner in _on_import(module)
                 if isinstance(inner, (ast.Import, ast.ImportFrom))
                 for found in _imported_modules(inner, module.path.parent)]
    return list(seen.values())


def _imported_modules(node: ast.Import | ast.ImportFrom, folder) -> list[project.Module]:
    """The project-local modules an import statement loads: `from package import module` loads the package's
    `__init__.py`, then the module, unless the package defines a function or class of that name."""
    if isinstance(node, ast.ImportFrom):
        wanted = [] if not node.level and (node.module or "").split(".", 1)[0] in project.NOT_LOCAL else [
            (node.module or "", node.level)]
    else:
        wanted = [(alias.name, 0) for alias in node.names if alias.name.split(".", 1)[0] not in project.NOT_LOCAL]
    paths = (project.find_module(folder, name, level) for name, level in wanted)
    found = [module for path in paths if path is not None and (module := project.load(path)) is not None]
    if isinstance(node, ast.ImportFrom) and found and found[0].path.name == "__init__.py":
        package = found[0]
        found += [module for alias in node.names if alias.name not in ("*", *package.functions, *package.classes)
                  and (path := project.find_module(package.path.parent, alias.name, 1)) is not None
                  and (module := project.load(path)) is not None]
    return found


def _on_import(module: project.Module) -> list[ast.AST]:
    """The calls, assignments and imports of `module` that run unconditionally when it is imported."""
    return [inner for inner, guards, function in conditions.walk(module.tree.body, WALKED)
            if function is None and not guards]


def _resolve_function(module: project.Module, name: str, hops: int = 0) -> Defined | str | None:
    """`(module, def, None)` defining `name` in `module` (following re-exports), `(module, __init__, class)`
    for a class, a library name, or None."""
    function = module.functions.get(name)
    if function is not None:
        return module, function, None
    if name in module.classes:
        return class_method(module, module.classes[name], "__init__")
    library = module.imports.resolve(ast.Name(id=name))
    if library is not None:
        return library
    target = _exported(module, name, hops)
    return _resolve_function(target[0], target[1], hops + 1) if target is not None else None


def _exported(module: project.Module, name: str, hops: int) -> tuple[project.Module, str] | None:
    """The module (and the name there) that a project-local import of `module` binds `name` from."""
    ref = module.local.refs.get(name)
    candidates = [(ref, ref.attr)] if ref is not None and ref.attr else [(star, name) for star in module.local.stars]
    for source, attr in candidates if hops < MAX_HOPS else ():
        target = _module(module.path.parent, source)
        if target is not None and (attr in target.functions or attr in target.classes or attr in target.local.refs
                                   or target.local.stars):
            return target, attr
    return None


def _made_class(module: project.Module, name: str, hops: int = 0) -> tuple[project.Module, ast.ClassDef] | None:
    """The project class that calling `name` in `module` makes: the class itself, or the class a function
    returns (`return Strategy(...)`, or a name assigned such a call)."""
    if name in module.classes:
        return module, module.classes[name]
    function = module.functions.get(name)
    if function is None:
        target = _exported(module, name, hops)
        return _made_class(target[0], target[1], hops + 1) if target is not None else None
    if hops >= MAX_HOPS:
        return None
    made = {}  # name -> the call assigned to it
    for node in ast.walk(function):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            made[node.targets[0].id] = node.value
    for node in ast.walk(function):
        value = node.value if isinstance(node, ast.Return) else None
        value = made.get(value.id) if isinstance(value, ast.Name) else value
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Name):
            found = _made_class(module, value.func.id, hops + 1)
            if found is not None:
                return found
    return None


def class_method(module: project.Module, cls: ast.ClassDef, name: str, hops: int = 0) -> Defined | None:
    """`(module, def, class)` of the method `name` of a project class, inherited from a project base class
    if need be."""
    for item in cls.body:
        if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and item.name == name:
            return module, item, cls
    for base in cls.bases if hops < MAX_HOPS else ():
        found = _made_class(module, base.id, MAX_HOPS) if isinstance(base, ast.Name) else None
        if found is None and isinstance(base, ast.Name) and base.id not in module.classes:
            target = _exported(module, base.id, hops)
            found = _made_class(target[0], target[1], MAX_HOPS) if target is not None else None
        method = class_method(found[0], found[1], name, hops + 1) if found is not None else None
        if method is not None:
            return method
    return None


def _function_summary(module: project.Module, function, env: tuple, seen: frozenset,
                      owner: ast.ClassDef | None = None) -> Summary:
    """What calling `function` of a helper module (a method of `owner`) pins, given its parameter values `env`,
    through every project function it calls in turn (dinov2's eval/linear.py `main` seeds four files down:
    `setup_and_build_model` -> `setup` -> `default_setup` -> `fix_random_seeds`); `seen`, the functions whose
    summary is being computed, cuts cycles (computed once per function and `env`)."""
    key = (id(function), env)
    if key in module.memo:
        return module.memo[key]
    if (str(module.path), function.lineno) in seen:
        return NOTHING
    lookup = conditions.parameter_lookup(dict(env), conditions.no_lookup)
    seen = seen | {(str(module.path), function.lineno)}
    total = NOTHING
    left = outliving(function, module.imports.resolve)
    for node, guards, _ in conditions.walk(function.body, WALKED):
        if not any(conditions.truth(test, lookup) is (not wanted) for test, wanted in guards):
            total |= _unsure(left(node, _statement_summary(module, node, lookup, seen, owner)), guards, lookup, module)
    module.memo[key] = total
    return total


def _unsure(summary: Summary, guards: tuple[conditions.Guard, ...], lookup: conditions.Lookup,
            module: project.Module) -> Summary:
    """`summary`, its families unsure when one of `guards` tests for None a value `lookup` does not know
    (`conditions.none_tested`), its switches opt-in when one needs a determinism flag it does not know
    (`conditions.determinism_flag`)."""
    flag = next((flag for guard in guards if (flag := conditions.determinism_flag(guard, lookup)) is not None), None)
    if flag is not None and summary.switches:
        summary = replace(summary, opt_in=summary.switches, opt_in_when=(flag, module.path.name))
    guard = next((guard for guard in guards if (subject := conditions.none_tested(guard[0])) is not None
                  and conditions.value(subject, lookup) is conditions.UNKNOWN), None)
    if guard is None or not summary.families:
        return summary
    return replace(summary, unsure=summary.families, unsure_when=(conditions.holding(guard), module.path.name))


def _statement_summary(module: project.Module, node: ast.AST, lookup, seen: frozenset,
                       owner: ast.ClassDef | None = None) -> Summary:
    """What one assignment or call of a helper module pins (calls into its own or other helpers, and
    `self.method()` calls of a method of `owner`, followed)."""
    if isinstance(node, ast.Assign):
        return summarise(assign_effects(node, module.imports.resolve), lookup)
    if isinstance(node, ast.Call):
        return _helper_call(module, node, lookup, seen, owner)
    return NOTHING


def _helper_call(module: project.Module, call: ast.Call, lookup, seen: frozenset,
                 owner: ast.ClassDef | None) -> Summary:
    direct = call_effects(call, module.imports.resolve(call.func))
    if direct:
        return summarise(direct, lookup)
    func = call.func
    own = None
    if isinstance(func, ast.Name) and func.id in module.functions:
        own = (module, module.functions[func.id], None)
    elif owner is not None and isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) \
            and func.value.id == "self":
        own = class_method(module, owner, func.attr)
    if own is not None:
        env = conditions.bind_arguments(own[1], call, lookup, bound=own[2] is not None)
        return _function_summary(own[0], own[1], env, seen, own[2])
    followed = helper_summary(call, module.path.parent, module.local, module.functions, lookup, seen)
    if followed is not None:
        return followed
    return seeder_by_name(call) if names_a_function(module.imports.bindings, call) else NOTHING


def names_a_function(bindings: dict[str, str], call: ast.Call) -> bool:
    """Whether the callee is a bare name or an attribute of an imported module (`bindings`: the file's imported
    names), so that its name says what it does: a method of some object (sd-scripts' `dataset.set_seed(seed)`)
    seeds that object only."""
    func = call.func
    while isinstance(func, ast.Attribute):
        func = func.value
    return isinstance(func, ast.Name) and (func is call.func or func.id in bindings)

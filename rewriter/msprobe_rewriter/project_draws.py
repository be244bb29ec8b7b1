"""Which global generators the project's functions and classes draw from, followed through the project code they
call: random-augment asks about the helpers of other modules that per-sample code calls, seed-partial about the
project code an entry script runs for training."""

from __future__ import annotations

import ast
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

from msprobe_rewriter import catalogue, pinning, project
from msprobe_rewriter.context import EVAL_FILE, EVAL_NAME, draws_globally, own_nodes

# The methods a built object runs without the script naming them: its constructor, a layer's step (torch's
# `forward`, MindSpore's `construct`), a callable's call, a dataset's or a sampler's items.
RUN_METHODS = ("__init__", "forward", "construct", "__call__", "__getitem__", "__iter__", "__next__")
Skip = Callable[[ast.AST], bool] | None
FAMILIES = frozenset(catalogue.ENTROPY_UNTIL_SEEDED_DRAWS.values())  # those global draws draw from


class Draw(NamedTuple):
    """A global draw found in project code."""

    qualified: str  # what draws: `random.randint`
    via: str  # the call leading there from the function asked about ('' for a draw of its own)
    path: Path  # the file drawing
    line: int
    where: str  # the function drawing: `name`, or `Class.name` for a method


def family(draw: str) -> str | None:
    """The generator family a global draw draws from."""
    return catalogue.ENTROPY_UNTIL_SEEDED_DRAWS.get(draw)


def seeds(nodes, resolve) -> frozenset[str]:
    """The generator families the calls among `nodes` seed (`np.random.seed(seed)`; not `random.seed()`)."""
    return frozenset(found for node in nodes if isinstance(node, ast.Call)
                     for summary, _ in pinning.call_effects(node, resolve(node.func)) for found in summary.families)


def first_draw(module: project.Module, function: ast.AST, skip: Skip = None) -> Draw | None:
    """The first global draw (in source order) of `function`, as `draws` finds them."""
    return next(iter(draws(module, function, skip).values()), None)


def draws(module: project.Module, function: ast.AST, skip: Skip = None, training: bool = False) -> dict[str | None, Draw]:
    """Each generator family's first global draw (in source order) in `function` of the project's `module`: its own,
    or through the project functions it calls (minddet's `prep_pointcloud` calls `prep.noise_per_object`, which draws
    `np.random.normal`) and the methods of its class it calls as `self.name(...)`, not through a function `skip`
    accepts; not a draw in an `except` block (another sample drawn when one fails to load), nor one of a generator
    seeded earlier in the function, by a library seeder or a project function seeding in its own body (fairseq's
    `with data_utils.numpy_seed(...)`). `training`: also through the project classes it builds (the RUN_METHODS of
    each), and not through evaluation code (a function named for evaluation, a module of an evaluation file that
    no training code reads). Computed once per function; a cycle adds nothing."""
    key = ("draws", id(function), skip, training)
    if key not in module.memo:
        module.memo[key] = {}
        module.memo[key] = _draws(module, function, skip, training)
    return module.memo[key]


def called(call: ast.Call, folder: Path, local: project.LocalImports, defined, creator: ast.Call | None = None
           ) -> dict[str | None, Draw]:
    """`draws` (`training`) of the project code a call in a file of `folder` (defining the functions `defined`) runs:
    a function of another project module, the RUN_METHODS of a project class it builds, or, `creator` being the call
    that made the object, the method it calls on it (`trainer = Trainer(cfg)` ... `trainer.fit()`)."""
    if isinstance(call.func, ast.Name) and call.func.id in defined:
        return {}
    if creator is not None:
        method = pinning.made_method(creator, call, folder, local, defined)
        return _method_draws(method) if method is not None else {}
    function, path = pinning.called_function(call, {}, folder, local)
    module = project.load(path) if path is not None else None
    if function is not None:
        return _method_draws((module, function, None)) if module is not None else {}
    made = pinning.made_class(call, folder, local, defined)
    return class_draws(*made) if made is not None else {}


def class_draws(module: project.Module, cls: ast.ClassDef) -> dict[str | None, Draw]:
    """`draws` (`training`) of what a project class runs once built: its RUN_METHODS, inherited ones too."""
    key = ("class draws", id(cls))
    if key not in module.memo:
        module.memo[key] = {}
        found: dict[str | None, Draw] = {}
        for name in RUN_METHODS:
            method = pinning.class_method(module, cls, name)
            for drawn, draw in (_method_draws(method) if method is not None else {}).items():
                found.setdefault(drawn, draw)
        module.memo[key] = found
    return module.memo[key]


def _method_draws(found: pinning.Defined) -> dict[str | None, Draw]:
    """`draws` (`training`) of a project function or method, none for evaluation code."""
    module, function, _ = found
    return {} if _evaluation(module, function) else draws(module, function, training=True)


def _evaluation(module: project.Module, function: ast.AST) -> bool:
    """Whether `function` of `module` is evaluation code: named for it, or in an evaluation file that no training
    code reads (see `project.builds_training_data`)."""
    if EVAL_NAME.search(function.name):
        return True
    key = "evaluation file"
    if key not in module.memo:
        module.memo[key] = EVAL_FILE.match(module.path.stem) is not None \
            and not project.builds_training_data(str(module.path), EVAL_FILE)
    return module.memo[key]


def _owner(module: project.Module, function: ast.AST) -> ast.ClassDef | None:
    """The class of the module whose method `function` is, if any."""
    if "owners" not in module.memo:
        module.memo["owners"] = {id(item): cls for cls in ast.walk(module.tree) if isinstance(cls, ast.ClassDef)
                                 for item in cls.body}
    return module.memo["owners"].get(id(function))


def _draws(module: project.Module, function: ast.AST, skip: Skip, training: bool) -> dict[str | None, Draw]:
    rescue = {id(node) for handler in ast.walk(function) if isinstance(handler, ast.ExceptHandler)
              for node in ast.walk(handler)}
    calls = sorted((node for node in ast.walk(function) if isinstance(node, ast.Call) and id(node) not in rescue),
                   key=lambda node: (node.lineno, node.col_offset))
    owner = _owner(module, function)
    where = f"{owner.name}.{function.name}" if owner is not None else function.name
    results_called = _results_called(calls, function) if training else set()
    seeded: frozenset[str] = frozenset()
    found: dict[str | None, Draw] = {}
    for call in calls:
        qualified = module.imports.resolve(call.func)
        if draws_globally(call, qualified):
            if family(qualified) not in seeded:
                found.setdefault(family(qualified), Draw(qualified, "", module.path, call.lineno, where))
            continue
        seeded |= seeds([call], module.imports.resolve)
        for target, callee in _callees(module, call, owner, training, id(call) in results_called):
            seeded |= seeds(own_nodes(callee), target.imports.resolve)
            if skip is not None and skip(callee) or training and _evaluation(target, callee):
                continue
            for drawn, draw in draws(target, callee, skip, training).items():
                if drawn not in seeded:
                    found.setdefault(drawn, draw._replace(via=ast.unparse(call.func)))
    return found


def _results_called(calls: list[ast.Call], function: ast.AST) -> set[int]:
    """The ids of the `calls` of `function` whose result it calls: `C(...)(x)`, or `x = C(...)` and `x(...)`."""
    called = {ast.unparse(node.func) for node in calls}
    found = {id(node.func) for node in calls}
    found.update(id(node.value) for node in ast.walk(function) if isinstance(node, ast.Assign)
                 and isinstance(node.value, ast.Call) and any(ast.unparse(target) in called for target in node.targets))
    return found


def _callees(module: project.Module, call: ast.Call, owner: ast.ClassDef | None, training: bool, result_called: bool
             ) -> list[tuple[project.Module, ast.AST]]:
    """The project functions (and methods) `call`, in `module`, runs: a function of the project, a method of
    `owner` called as `self.name(...)`, and with `training` the RUN_METHODS of a project class it builds (its
    `__call__` only when the function calls the object, `result_called`: a transform a factory builds and returns
    runs where it is used, if at all, as open_clip's audio transforms in an image model's run)."""
    callee, path = pinning.called_function(call, module.functions, module.path.parent, module.local)
    if callee is not None:
        target = project.load(path) if path is not None else module
        return [(target, callee)] if target is not None else []
    func = call.func
    if owner is not None and isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) \
            and func.value.id == "self":
        method = pinning.class_method(module, owner, func.attr)
        return [(method[0], method[1])] if method is not None else []
    if not training:
        return []
    built = (module, module.classes[func.id]) if isinstance(func, ast.Name) and func.id in module.classes \
        else pinning.made_class(call, module.path.parent, module.local, module.functions)
    if built is None:
        return []
    methods = (pinning.class_method(built[0], built[1], name) for name in RUN_METHODS
               if name != "__call__" or result_called)
    return [(method[0], method[1]) for method in methods if method is not None]

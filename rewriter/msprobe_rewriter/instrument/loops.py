"""Find the training loop: the innermost loop one iteration of which is one optimizer step.

Found, not guessed: a loop is a training loop when it contains a call that applies gradients
(`optimizer.step()`, `scaler.step(opt)`, a DeepSpeed engine's `engine.step()`/`engine.train_batch()`,
MindSpore `optimizer(grads)` or a `TrainOneStepCell` call, or of a
project's own train-step cell, or of a project cell built around train-step cells that calls them),
directly or through local functions that step outside any loop of their own (`train_step`), or through
such a function of a project module (WeNet's `update_parameter_and_lr(model, optimizer, ...)`) or such a
method of an object of a class of the project's (fairseq's `trainer.train_step(sample)`, a CycleGAN's
`model.optimize_parameters()`), or, without an optimizer, an update written by hand after a `backward()`
in the same loop (`param.data.add_(-lr * param.grad)`, `w -= lr * w.grad`). A loop
that only calls `backward()` (gradient accumulation's micro-steps) is not one; of an epoch loop and a
batch loop, the batch loop is. Training a library runs is found too, where it takes a step callback:
MindSpore's `Model.train(...)` call, a Hugging Face or Lightning trainer's construction.
Which models and optimizers each loop trains is found in `models.py`.
"""

from __future__ import annotations

import ast
from collections.abc import Container, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from msprobe_rewriter import catalogue, pinning, project, seeding
from msprobe_rewriter.context import (
    FUNCTION_TYPES,
    LOOP_TYPES,
    SCOPE_TYPES,
    FileContext,
    constant,
    keyword,
    target_name,
    walk_scope,
)
from msprobe_rewriter.instrument.models import TrainedModels, network_attributes, updated_by_hand
from msprobe_rewriter.instrument.scopes import (
    Function,
    argument,
    assigned_before,
    inside,
    parameters_of,
    root_name,
    source_text,
    taken_from_parameters,
)

CLASS_REFS = (ast.Name, ast.Attribute)  # how a construction names its class: `Cell(...)`, `module.Cell(...)`
HF_TRAINER_ROOTS = ("transformers", "trl")  # packages of the trainers that take a step callback (for notes)
LIGHTNING_ROOTS = ("lightning", "pytorch_lightning")
MMENGINE_ROOTS = ("mmengine",)
# What a trainer runs that trains nothing (Hugging Face's and mindformers' `evaluate`/`predict`, Lightning's
# `validate`/`test`/`predict`).
EVALUATION_RUNS = frozenset({"evaluate", "predict", "validate", "test"})
# The keyword a library's training takes its step callbacks by (else `callbacks`).
CALLBACK_KEYWORDS = {"mmengine": "custom_hooks"}


@dataclass
class TrainingLoop:
    """A loop to wrap, the expressions `start`/`monitor` need, and where a local debugger can go."""

    node: ast.stmt
    function: Function
    models: tuple[str, ...]  # every model an optimizer stepped in `node` updates (empty: none found)
    optimizer: str | None  # what `monitor` takes on MindSpore: the optimizer stepped, or a list of several
    conditional: bool  # the step runs only every few iterations (accumulation by counter)
    outermost: ast.stmt  # outermost loop around `node` in its function
    model_is_local: bool  # the model is created in that function (or module) before `outermost`
    inner_steps: bool = False  # a loop inside `node` steps an optimizer too (a GAN's critic, SAC's actor)
    built_inside: str | None = None  # a model `node` builds (then `models` is empty: not there yet)
    threshold: str | None = None  # the step runs only past a threshold (`global_step > args.learning_starts`)
    by_hand: bool = False  # every step applies gradients by hand (`w -= lr * w.grad`): no optimizer steps
    stepping: tuple[ast.AST, ...] = ()  # what applies gradients in `node`: step calls, calls of stepping functions

    @property
    def model(self) -> str | None:
        """The `model=` argument of `start()`: one model, or a list of several; None when none is known."""
        if len(self.models) > 1:
            return f"[{', '.join(self.models)}]"
        return self.models[0] if self.models else None


@dataclass
class CallbackTraining:
    """Training a library runs, which takes the debugger as a step callback in `callbacks=`: a MindSpore
    `Model(...).train(...)` call, or the construction of a Hugging Face or Lightning trainer or of an mmengine
    runner (`custom_hooks=`; `Runner.from_cfg(cfg)` takes none)."""

    call: ast.Call  # the call that takes `callbacks=`
    statement: ast.stmt
    function: Function
    library: str  # "mindspore", "transformers", "lightning", "mmengine", "mindformers" or "detectron2"
    position: int | None  # of `callbacks` among the positional arguments (None: by keyword only)
    optimizer: str | None  # MindSpore: the Model's optimizer, for `monitor`
    callbacks: str | None  # `callbacks=` is a name only ever assigned lists ("list": `name + [...]` works) or
    # one callback, a class's construction or a name assigned one ("one": `[it, ...]`; not Hugging Face's)
    takes_callbacks: bool = True  # False: a project's trainer subclass whose `__init__` takes no `callbacks`


@dataclass
class WarmUp:
    """A loop that steps an optimizer, the model it runs restored after it from a copy saved before it
    (modded-nanogpt's compile warm-up: its steps are thrown away): no training loop."""

    node: ast.stmt
    restore: ast.Call  # `model.load_state_dict(initial_state["model"])`
    saved: ast.stmt  # `initial_state = dict(model=copy.deepcopy(model.state_dict()), ...)`


@dataclass
class Analysis:
    """Training loops and library trainings of one file."""

    loops: list[TrainingLoop] = field(default_factory=list)
    callback_trainings: list[CallbackTraining] = field(default_factory=list)
    parents: dict[ast.AST, ast.AST] = field(default_factory=dict)  # child -> parent, whole file
    # functions and methods that apply gradients once per call, each with whether it does only under a
    # condition that counts calls (gradient accumulation)
    steppers: dict[str, bool] = field(default_factory=dict)
    warm_ups: list[WarmUp] = field(default_factory=list)  # loops that step, left out of `loops`


@dataclass
class _Step:
    call: ast.AST  # a call that applies gradients, or an update written by hand (`w -= lr * w.grad`)
    loop: ast.stmt | None
    function: Function
    conditional: bool


class _Collector:
    """Traversal handler: step calls, calls of local functions, `Model.train` calls, trainer constructions."""

    def __init__(self, ctx: FileContext) -> None:
        self.ctx = ctx
        self.steps: list[_Step] = []
        self.calls: list[tuple[str, ast.stmt | None, Function, bool, ast.Call]] = []
        self.method_calls: list[_Step] = []  # `obj.method(...)`, `self.obj.method(...)`: maybe a project object's step
        self.item_calls: list[_Step] = []  # `phase['network'](...)`: maybe a train-step cell kept in a dict
        self.trains: list[tuple[ast.Call, Function, str, bool]] = []  # (call, function, library, takes callbacks)

    def __call__(self, call: ast.Call) -> None:
        ctx = self.ctx
        function = _function(ctx.ancestors)
        loop = ctx.current_loop()
        conditional = _conditional(ctx.ancestors, loop)
        if ctx.is_optimizer_step(call):  # also a step told whether to update: MAE's `update_grad=(i + 1) % n == 0`
            loop = _step_loop(call, ctx.enclosing_loops())
            conditional = _conditional(ctx.ancestors, loop)
            conditional = conditional or any(counts(keyword.value) for keyword in call.keywords)
            self.steps.append(_Step(call, loop, function, conditional))
        elif (trainer := self._trainer(call)) is not None:
            self.trains.append((call, function, *trainer))
        elif isinstance(call.func, ast.Name):
            self.calls.append((call.func.id, loop, function, conditional, call))
        elif ctx.own_method_called(call) is not None:  # `self.run_step(...)`: a method of the same class
            self.calls.append((call.func.attr, loop, function, conditional, call))
        elif isinstance(call.func, ast.Attribute) and call.func.attr == "train" and self._model_train(call):
            self.trains.append((call, function, "mindspore", True))
        elif isinstance(call.func, ast.Attribute) and target_name(call.func.value) is not None:
            self.method_calls.append(_Step(call, loop, function, conditional))
        elif isinstance(call.func, ast.Subscript) and isinstance(constant(call.func.slice), str):
            loop = _step_loop(call, ctx.enclosing_loops())  # not a loop over the dicts: `for phase in phases`
            self.item_calls.append(_Step(call, loop, function, _conditional(ctx.ancestors, loop)))
        if loop is not None:  # a function handed to a call in a loop runs there: ijepa's `gpu_timer(train_step)`
            self.calls.extend((name, loop, function, conditional, call) for name in ctx.handed_functions(call))

    def _trainer(self, call: ast.Call) -> tuple[str, bool] | None:
        """(library, takes `callbacks=`) when `call` constructs a Hugging Face or Lightning trainer, a subclass of
        one defined in this file, an mmengine runner (from a config: no `custom_hooks=`) or a detectron2 trainer
        (hooks registered after it; also one of two: `(AMPTrainer if amp else SimpleTrainer)(...)`)."""
        callee = call.func
        if isinstance(callee, ast.IfExp) and {self._detectron2(callee.body), self._detectron2(callee.orelse)} == {True}:
            return self._detectron2_run()
        qualified = self.ctx.imports.resolve_any(callee)
        owner, _, method = (qualified or "").rpartition(".")
        if method == "from_cfg" and owner in catalogue.MMENGINE_RUNNERS:
            return "mmengine", False
        library = trainer_library(qualified)
        if library == "detectron2":
            return self._detectron2_run()
        return (library, _takes_callbacks(self.ctx, call)) if library is not None else None

    def _detectron2(self, callee: ast.expr) -> bool:
        return self.ctx.imports.resolve_any(callee) in catalogue.DETECTRON2_TRAINERS

    def _detectron2_run(self) -> tuple[str, bool] | None:
        """A detectron2 trainer the script runs; not one a class builds for itself (DiffusionDet's `DefaultTrainer`
        subclass makes `self._trainer = SimpleTrainer(...)` and runs only its `run_step`: its hooks never run)."""
        return None if any(isinstance(node, ast.ClassDef) for node in self.ctx.ancestors) else ("detectron2", False)

    def _model_train(self, call: ast.Call) -> bool:
        """`model.train(...)` of a MindSpore `Model`: built from the class (also on the spot: `Model(...).train(...)`),
        or taking Model.train's keywords."""
        ctx = self.ctx
        model = call.func.value
        built = ctx.call_qualname(model) if isinstance(model, ast.Call) else ctx.assigned_calls.get(target_name(model) or "")
        if built in catalogue.MINDSPORE_MODEL_CLASSES:
            return True
        return ctx.imports.imports_root("mindspore") and any(kw.arg in catalogue.MINDSPORE_MODEL_TRAIN_KEYWORDS for kw in call.keywords)


def trainer_library(qualified: str | None) -> str | None:
    """"transformers" for a Hugging Face trainer class (`transformers.Trainer`, `Seq2SeqTrainer`, trl's
    `SFTTrainer`, ...: lint's catalogue), "lightning" for Lightning's `Trainer`, "mmengine" for an mmengine
    runner, "mindformers" for mindformers' `Trainer`, "detectron2" for its trainers, else None (`TrainingArguments`, a callback, TRL's diffusion trainers, which take no `callbacks=`)."""
    if qualified in catalogue.HF_TRAINERS:
        return "transformers"
    if qualified in catalogue.MMENGINE_RUNNERS:
        return "mmengine"
    if qualified in catalogue.MINDFORMERS_TRAINERS:
        return "mindformers"
    if qualified in catalogue.DETECTRON2_TRAINERS:
        return "detectron2"
    return "lightning" if qualified in catalogue.LIGHTNING_TRAINER_BUILDS else None


def _takes_callbacks(ctx: FileContext, call: ast.Call) -> bool:
    """Whether a trainer construction takes `callbacks=`: a class of this file that stands for a library trainer
    (FileContext binds such subclasses to it) does when each `__init__` on its way to the library's, if any,
    names `callbacks` or takes `**kwargs`."""
    classes = {node.name: node for node in ctx.tree.body if isinstance(node, ast.ClassDef)}
    cls = classes.get(call.func.id) if isinstance(call.func, ast.Name) else None
    seen = set()
    while cls is not None and cls.name not in seen:
        seen.add(cls.name)
        init = next((item for item in cls.body if isinstance(item, FUNCTION_TYPES) and item.name == "__init__"), None)
        if init is not None and init.args.kwarg is None and not any(
                arg.arg == "callbacks" for arg in (*init.args.posonlyargs, *init.args.args, *init.args.kwonlyargs)):
            return False
        cls = next((classes[base.id] for base in cls.bases if isinstance(base, ast.Name) and base.id in classes), None)
    return True


def _calls_backward(scope: ast.AST) -> bool:
    """Whether `scope` (a loop or a function) calls `backward()` itself (nested functions aside)."""
    return any(isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "backward"
               for node in walk_scope(scope))


def _iterates_data(loop: ast.stmt) -> bool:
    """Whether `loop` goes over data (a loader, a dataset, `enumerate(loader)`), not a count (`range(n)`) or a
    condition (`while`)."""
    if not isinstance(loop, (ast.For, ast.AsyncFor)):
        return False
    source = loop.iter
    return not (isinstance(source, ast.Call) and isinstance(source.func, ast.Name) and source.func.id == "range")


def _function(ancestors: list[ast.AST]) -> Function:
    for node in reversed(ancestors):
        if isinstance(node, FUNCTION_TYPES):
            return node
    return None


def _step_loop(call: ast.Call, loops: list[ast.AST]) -> ast.AST | None:
    """The innermost of `loops` that repeats the step: not one over the optimizers it steps (modded-nanogpt's
    `for opt in self.optimizers: opt.step()` is one step of all of them, as `scaler.step(opt)` over `opt`; also
    over objects holding them, StyleGAN's `for phase in phases: ... phase.opt.step()`, whose G and D phases are
    one batch's step); the arguments of a cell or optimizer called itself are its data (`for x, y in data:
    train_net(x, y)`)."""
    method = isinstance(call.func, ast.Attribute)
    owner = call.func if isinstance(call.func, ast.Name) else getattr(call.func, "value", None)  # `phase['network']`
    operands = [owner, *(call.args if method else ())]
    stepped = {name for name in [*map(target_name, operands), *map(root_name, operands)] if name}
    for loop in loops:
        target = loop.target if isinstance(loop, (ast.For, ast.AsyncFor)) else None
        bound = {node.id for node in ast.walk(target) if isinstance(node, ast.Name)} if target is not None else set()
        if not bound & stepped:
            return loop
    return None


def _conditional(ancestors: list[ast.AST], loop: ast.AST | None) -> bool:
    """Whether the current node runs only every few iterations: under an `if` that counts (`i % accum == 0`,
    a name mentioning accumulation), or in a `with` that does (accelerate's `with accelerator.accumulate(model):`,
    whose optimizer skips the step between updates), between `loop` (or the function) and here; or after such an
    `if` that skips the rest of the iteration (open_clip's `if ((i + 1) % args.accum_freq) > 0: continue`); or in a
    loop over micro-batches (DeepSpeed's `for micro_step in range(steps * engine.gradient_accumulation_steps())`,
    whose `engine.step()` updates every few of them)."""
    if isinstance(loop, (ast.For, ast.AsyncFor)) and (counts(loop.iter) or _one_micro_batch(loop)):
        return True
    below = None
    for node in reversed(ancestors):
        if node is loop and below is not None:
            return _skips_before(loop, below)
        if node is loop or isinstance(node, SCOPE_TYPES):
            return False
        if isinstance(node, ast.If) and counts(node.test):
            return True
        if isinstance(node, (ast.With, ast.AsyncWith)) and any(counts(item.context_expr) for item in node.items):
            return True
        below = node
    return False


def _one_micro_batch(loop: ast.For | ast.AsyncFor) -> bool:
    """Whether `loop`'s target names a micro-batch (DeepSpeed's `micro_step`) that its body does not loop over in
    turn: LLaMA-Factory's `for micro_batches in self.train_batch_generator:` runs `for i, micro_batch in
    enumerate(micro_batches)` and steps the optimizer once after them, one update per iteration."""
    micro = {node.id for node in ast.walk(loop.target) if isinstance(node, ast.Name) and "micro" in node.id.lower()}
    looped = {node.id for inner in ast.walk(loop) if isinstance(inner, (ast.For, ast.AsyncFor)) and inner is not loop
              for node in ast.walk(inner.iter) if isinstance(node, ast.Name)}
    return bool(micro - looped)


def _skips_before(loop: ast.AST, statement: ast.AST) -> bool:
    """Whether the statements of `loop`'s body before `statement` hold an `if` that counts and ends the iteration
    (`continue`), also inside another `if` (not in a nested loop or function)."""
    body = loop.body
    earlier = body[:body.index(statement)] if statement in body else []
    return any(isinstance(node, ast.If) and counts(node.test)
               and any(isinstance(inner, ast.Continue) for inner in same_loop(node.body)) for node in same_loop(earlier))


def same_loop(statements: list[ast.stmt]) -> Iterator[ast.stmt]:
    """`statements` and the statements nested in them, not those of a nested loop or function."""
    todo = list(statements)
    while todo:
        node = todo.pop()
        yield node
        if not isinstance(node, (*LOOP_TYPES, *SCOPE_TYPES)):
            todo.extend(child for child in ast.iter_child_nodes(node) if isinstance(child, ast.stmt))


def counts(test: ast.expr) -> bool:
    """Whether `test` counts iterations: a remainder (not `"step-%d" % i`, a string's formatting), or a name
    that mentions accumulation."""
    for node in ast.walk(test):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod) and not (
                isinstance(node.left, ast.Constant) and isinstance(node.left.value, (str, bytes))):
            return True
        name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""
        if "accum" in name.lower():
            return True
    return False


def analyse(ctx: FileContext) -> Analysis:
    """Traverse `ctx` (which must not have been traversed yet) and find its training loops."""
    collector = _Collector(ctx)
    ctx.traverse({ast.Call: [collector]})
    finder = _Finder(ctx, collector)
    found = finder.loops()
    warm_ups = [warm_up for loop in found if (warm_up := finder.warm_up(loop)) is not None]
    return Analysis([loop for loop in found if not any(w.node is loop.node for w in warm_ups)],
                    finder.callback_trainings(), finder.parents,
                    {name: step.conditional for name, step in finder.steppers.items()}, warm_ups)


def _module_analysis(module: project.Module) -> Analysis:
    """`analyse` of a project module (computed once per module; empty while it is computed, so modules that
    import each other end)."""
    if "analysis" not in module.memo:
        module.memo["analysis"] = Analysis()
        module.memo["analysis"] = analyse(FileContext(str(module.path), module.source, module.tree))
    return module.memo["analysis"]


def loops_in_helpers(ctx: FileContext) -> list[tuple[str, Path, str]]:
    """Project-local functions this file calls whose bodies hold a training loop ("loop") or build a library
    trainer ("trainer"), with their files (`train_one_epoch` in `engine.py`, as MAE, DeiT and DINO are laid out),
    and the methods holding one of the classes it calls (`TrainLoop.run_loop` in improved-diffusion's
    `train_util.py`) or that a function it calls returns (mindyolo's `create_trainer` returns a `Trainer`), one
    level deep; a function handed to a call counts as called (`mp.Process(target=train, ...)`, as pytorch/examples'
    Hogwild trains), and one that calls a training function of its module stands for it."""
    local = project.local_imports(project.import_statements(ctx.tree.body, aliases=True))
    if not local.refs and not local.stars:
        return []
    defined = {node.name for node in ast.walk(ctx.tree) if isinstance(node, FUNCTION_TYPES)}
    calls = [node for node in ast.walk(ctx.tree) if isinstance(node, ast.Call)]
    handed = [ast.Call(func=arg, args=[], keywords=[]) for call in calls  # `mp.Process(target=train, ...)`,
              for arg in (*call.args, *(k.value for k in call.keywords)) if isinstance(arg, ast.Name)]  # `spawn(train)`
    typed = {id(call): call for call in _annotated_classes(ctx.tree, calls)}
    found: dict[tuple[str, Path, str], None] = {}
    built: list[tuple[project.Module, ast.ClassDef]] = []
    for call, name, module in project.reached([*calls, *handed, *typed.values()], local, defined,
                                              project.file_folder(ctx.path)):
        training = _training_functions(module)
        trainer = _training_callee(module, name, training) if id(call) not in typed else None
        if trainer is not None:
            found[(trainer, module.path, training[trainer])] = None
        built += [(module, node) for node in module.classes_built(name)
                  if id(call) not in typed or isinstance(node, ast.ClassDef) and node.name == name]
    called = {call.func.id for call in calls if isinstance(call.func, ast.Name)}
    factories = [node.name for node in ctx.tree.body if isinstance(node, FUNCTION_TYPES) and node.name in called
                 and project.registry_lookups(node)]  # LAVIS' `get_runner_class(cfg)(...)`
    own = project.file_module(ctx.path, ctx.tree, ctx.imports)
    built += [pair for name in factories for pair in project.registered_classes(own, name)]
    for module, node in built:
        training = _training_functions(module)
        found.update(((f"{node.name}.{item.name}", module.path, training[item.name]), None) for item in node.body
                     if isinstance(item, FUNCTION_TYPES) and item.name in training)
        found.update(dict.fromkeys(_delegated_loops(ctx, local, module, node)))
    return list(found)


def _annotated_classes(tree: ast.Module, calls: list[ast.Call]) -> list[ast.Call]:
    """A call of each class named in the annotation of a variable whose method the file calls: torchtitan's
    train.py `trainer: Trainer | None = None`, `trainer = config.build()`, `trainer.train()` (the object is built
    elsewhere, but its class is the one annotated)."""
    used = {call.func.value.id for call in calls
            if isinstance(call.func, ast.Attribute) and isinstance(call.func.value, ast.Name)}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.target.id in used:
            found += [ast.Call(func=name, args=[], keywords=[]) for name in ast.walk(node.annotation)
                      if isinstance(name, ast.Name) and name.id[:1].isupper()]
    return found


def inherited_loops(ctx: FileContext) -> list[tuple[str, str, Path]]:
    """(class, `Base.method`, file) for each class of the file that inherits a training loop from a class of another
    project module, through at most MAX_CLASS_FILES files (ultralytics' RTDETRTrainer subclasses DetectionTrainer,
    which subclasses BaseTrainer, whose `_do_train` trains)."""
    local = project.local_imports(project.import_statements(ctx.tree.body))
    found = []
    for cls in ctx.tree.body:
        if isinstance(cls, ast.ClassDef):
            inherited = _inherited_loop(cls, local, project.file_folder(ctx.path), project.MAX_CLASS_FILES)
            found += [(cls.name, *inherited)] if inherited is not None else []
    return found


def _inherited_loop(cls: ast.ClassDef, local: project.LocalImports, folder: Path, files_left: int,
                    start: Path | None = None) -> tuple[str, Path] | None:
    """The training method (`Base.method`, file) `cls` inherits; absolute imports also looked up from `start`, the
    first file's folder (a deep package's own folder may lie too deep to find its project's root)."""
    bases = [ast.Call(func=base, args=[], keywords=[]) for base in cls.bases]
    reached = (found for where in dict.fromkeys([folder, start or folder]) for found in
               project.reached(bases, local, (), where)) if files_left else ()
    for _, name, module in reached:
        base = module.classes.get(name)
        if base is None:
            continue
        training = _training_functions(module)
        method = next((item.name for item in base.body if isinstance(item, FUNCTION_TYPES) and item.name in training),
                      None)
        if method is not None:
            return f"{name}.{method}", module.path
        deeper = _inherited_loop(base, module.local, module.path.parent, files_left - 1, start or folder)
        if deeper is not None:
            return deeper
    return None


def _delegated_loops(ctx: FileContext, local: project.LocalImports, module: project.Module,
                     cls: ast.ClassDef) -> list[tuple[str, Path, str]]:
    """The loops a class of the project reaches by handing its optimizer to a training method of an object it holds
    (LAVIS' RunnerBase: `self.task.train_epoch(..., optimizer=self.optimizer)`): the methods of that name, of the
    classes of the project modules the file imports and those they import (LAVIS' train.py imports every task module
    for registration, `from lavis.tasks import *`), that hold a training loop or call one of their class's methods
    that does (BaseTask.train_epoch calls `self._train_inner_loop(...)`)."""
    context = FileContext(str(module.path), module.source, module.tree)  # optimizers by their names
    names = {call.func.attr for item in cls.body if isinstance(item, FUNCTION_TYPES)
             for call in seeding.delegated_training(context, item)}
    if not names:
        return []
    folder = project.file_folder(ctx.path)
    imported = [project.load(path) for ref in (*local.refs.values(), *local.stars)
                if (path := project.find_module(folder, ref.module, ref.level)) is not None]
    imported += [project.load(path) for other in filter(None, imported) for ref in other.local.refs.values()
                 if (path := project.find_module(other.path.parent, ref.module, ref.level)) is not None]
    found = []
    for other in {str(other.path): other for other in imported if other is not None}.values():
        training = _training_functions(other)
        for owner in other.classes.values():
            methods = {item.name: item for item in owner.body if isinstance(item, FUNCTION_TYPES)}
            for name in names & methods.keys():
                reached = _own_callee(methods, name, training)
                if reached is not None:
                    found.append((f"{owner.name}.{reached}", other.path, training[reached]))
    return found


def _own_callee(methods: dict[str, ast.FunctionDef | ast.AsyncFunctionDef], name: str,
                training: Container[str]) -> str | None:
    """`name` when that method is one of `training`, else the first of them it calls as `self.method(...)`, through
    the class's other methods."""
    todo, seen = [name], set()
    while todo:
        current = todo.pop(0)
        if current in seen or current not in methods:
            continue
        if current in training:
            return current
        seen.add(current)
        todo += [node.func.attr for node in walk_scope(methods[current]) if isinstance(node, ast.Call)
                 and isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name)
                 and node.func.value.id == "self"]
    return None


def _training_callee(module: project.Module, name: str, training: Container[str]) -> str | None:
    """`name` when the module's function of that name is one of `training`, else the first of them it calls,
    through the module's other functions (Hogwild's `train` calls `train_epoch`, which holds the loop)."""
    todo, seen = [name], set()
    while todo:
        current = todo.pop(0)
        if current in seen or current not in module.functions:
            continue
        if current in training:
            return current
        seen.add(current)
        todo += [node.func.id for node in walk_scope(module.functions[current])
                 if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)]
    return None


def _training_functions(module: project.Module) -> dict[str, str]:
    """The module's functions that hold a training loop ("loop") or build a library trainer ("trainer"), by name
    (computed once per module)."""
    if "training_functions" not in module.memo:
        analysis = _module_analysis(module)
        found = {t.function.name: "trainer" for t in analysis.callback_trainings
                 if t.function is not None and t.library != "mindspore"}
        found.update((loop.function.name, "loop") for loop in analysis.loops if loop.function is not None)
        module.memo["training_functions"] = found
    return module.memo["training_functions"]


class _Finder:
    def __init__(self, ctx: FileContext, collector: _Collector) -> None:
        self.ctx = ctx
        self.collector = collector
        self.parents: dict[ast.AST, ast.AST] = {}
        self.functions: dict[str, ast.AST] = {}
        self.assignments: dict[str, ast.expr] = {}  # simple target name -> value of its last assignment
        self.values: dict[str, list[ast.expr]] = {}  # simple target name -> the values of all its assignments
        self._lines: dict[str, int] = {}
        self._hand_updates: list[ast.AST] = []  # statements and calls that apply a gradient by hand
        self._index(ctx.tree)
        collector.steps += self._hand_steps()
        self.local = project.local_imports(project.import_statements(ctx.tree.body, aliases=True))  # project modules
        self.folder = project.file_folder(ctx.path)
        self._kinds: dict[int, str | None] = {}  # id of a cell construction -> `_cell_kind`
        self._handed: dict[tuple[int, str], bool] = {}  # (id of a function, parameter) -> `_handed_by_importers`
        self.steppers: dict[str, _Step] = {}  # found below, once the project's train-step cells are steps
        self.stepping_defs: set[int] = set()  # ids of the definitions `steppers` names
        cell_steps = self._cell_steps()
        collector.steps += cell_steps + self._helper_steps()
        self.steppers = self._steppers()
        method_steps = self._method_steps()
        if method_steps:
            collector.steps += [step for step, _ in method_steps]
            self.steppers = self._steppers()
        self.trained = TrainedModels(ctx, self.assignments, self.values, self.parents, self.functions,
                                     [step.call for step in cell_steps], self._held_steps,
                                     {step.call: attributes for step, attributes in method_steps})

    def _index(self, tree: ast.Module) -> None:
        """One walk: parent links, functions by name, last assignment of each name (`x`, `self.x` -> x)."""
        todo: list[ast.AST] = [tree]
        while todo:
            node = todo.pop()
            for child in ast.iter_child_nodes(node):
                self.parents[child] = node
                todo.append(child)
            if isinstance(node, (ast.AugAssign, ast.Assign, ast.Call)) and updated_by_hand(node) is not None:
                self._hand_updates.append(node)
            if isinstance(node, FUNCTION_TYPES):
                self.functions[node.name] = node
            elif isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
                for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                    name = target_name(target)
                    if name is None:
                        continue
                    self.values.setdefault(name, []).append(node.value)
                    current = self.assignments.get(name)
                    if current is None or node.lineno >= self._lines[name]:
                        self.assignments[name] = node.value
                        self._lines[name] = node.lineno

    def _cell_steps(self) -> list[_Step]:
        """Calls of train-step cells of the project's own (a MindSpore GAN's `GenTrainOneStepCell`,
        `TrainOneStepWithLossScaleCellv2`): a name assigned an instance of a class, defined in this file or
        imported from a project module, that subclasses one of MindSpore's train-step cells or whose
        `construct` applies an optimizer (`self.optimizer(grads)`)."""
        if not self.ctx.imports.imports_root("mindspore"):
            return []
        found = []
        for name, loop, function, conditional, call in self.collector.calls:
            if name in self.functions:
                continue
            values = self._handed_values(function, name) or [self.assignments.get(name)]
            if any(isinstance(value, ast.Call) and isinstance(value.func, CLASS_REFS) and self._cell_kind(value)
                   is not None for value in values) or values == [None] and self._handed_by_importers(function, name):
                found.append(_Step(call, loop, function, conditional))
        return found + [step for step in self.collector.item_calls if self._kept_cell(step)]

    def _kept_cell(self, step: _Step) -> bool:
        """Whether the item a call calls (`phase['network'](...)`) is a train-step cell that its function (or the
        module) keeps under that key in a dict (applications/stylegan2's `phases.append({..., 'network': network})`
        with `network = nn.TrainOneStepCell(...)`)."""
        key = constant(step.call.func.slice)
        kept = [value for node in walk_scope(step.function or self.ctx.tree) if isinstance(node, ast.Dict)
                for item, value in zip(node.keys, node.values, strict=True) if item is not None and constant(item) == key]
        values = [self.assignments.get(value.id) if isinstance(value, ast.Name) else value for value in kept]
        return any(isinstance(value, ast.Call) and isinstance(value.func, CLASS_REFS) and self._cell_kind(value)
                   is not None for value in values)

    def _handed_by_importers(self, function: Function, name: str) -> bool:
        """Whether a project file importing the file's function `function` hands its parameter `name` one of
        MindSpore's train-step cells (MoCo's main.py: `train_net = nn.TrainOneStepCell(models, optimizer)`, then
        `train(train_net, ...)` of train.py, which runs `net(im1, im2)` for each batch); asked once per parameter."""
        if function not in self.ctx.tree.body or name not in parameters_of(function):
            return False
        key = (id(function), name)
        if key not in self._handed:
            self._handed[key] = self._find_handed_cell(function, name)
        return self._handed[key]

    def _find_handed_cell(self, function: ast.FunctionDef | ast.AsyncFunctionDef, name: str) -> bool:
        args = function.args
        positional = [a.arg for a in (*args.posonlyargs, *args.args)]
        own = Path(self.ctx.path).resolve()
        for path in project.name_importers(self.ctx.path, {function.name}):
            module = project.load(Path(path))
            ref = module.local.refs.get(function.name) if module is not None else None
            found = project.find_module(module.path.parent, ref.module, ref.level) if ref and ref.attr else None
            if found is None or found.resolve() != own:
                continue
            assigned = {target.id: node.value for node in ast.walk(module.tree) if isinstance(node, ast.Assign)
                        for target in node.targets if isinstance(target, ast.Name)}
            for call in ast.walk(module.tree):
                if isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == function.name:
                    value = argument(call, positional.index(name) if name in positional else len(call.args), name)
                    value = assigned.get(value.id) if isinstance(value, ast.Name) else value
                    if (isinstance(value, ast.Call)
                            and module.imports.resolve_any(value.func) in catalogue.MINDSPORE_TRAIN_STEP_CELLS):
                        return True
        return False

    def _handed_values(self, function: Function, name: str) -> list[ast.expr | None]:
        """What the file's calls of `function` hand to its parameter `name` (a name's last assigned value, or the
        expression itself); empty when `name` is no parameter of it (mindspore-lab/models' ECAPA-TDNN:
        `train_net(rank, model_constructed, ...)` runs `model(data, labels)`, a `TrainOneStepWithLossScaleCell`)."""
        if function is None or name == "self" or name not in parameters_of(function):
            return []
        args = function.args
        positional = [a.arg for a in (*args.posonlyargs, *args.args)]
        handed = []
        for callee, _, _, _, call in self.collector.calls:
            if callee != function.name:
                continue
            bound = isinstance(call.func, ast.Attribute) and positional[:1] == ["self"]  # `self.train_net(...)`
            value = (argument(call, positional.index(name) - bound, name) if name in positional
                     else keyword(call, name))
            handed.append(self.assignments.get(value.id) if isinstance(value, ast.Name) else value)
        return handed

    def _helper_steps(self) -> list[_Step]:
        """Calls of a function imported from a project module where it applies gradients once per call (WeNet's
        executor calls `update_parameter_and_lr(model, optimizer, ...)` of its `train_utils`)."""
        if not self.local.refs and not self.local.stars:
            return []
        found = []
        for name, loop, function, conditional, call in self.collector.calls:
            if name in self.functions:
                continue
            for _, target, module in project.reached([call], self.local, self.functions, self.folder):
                steppers = _module_analysis(module).steppers
                if target in module.functions and target in steppers:
                    found.append(_Step(call, loop, function, conditional or steppers[target]))
                    break
        return found

    def _method_steps(self) -> list[tuple[_Step, tuple[str, ...]]]:
        """Calls of a method that applies gradients once per call (`self.steppers` of its file) on a name assigned
        an instance of a class defined in this file or imported from a project module (one of the classes it
        may be assigned: fairseq's `Trainer` or `MegatronTrainer`): fairseq's `trainer.train_step(sample)`, a
        CycleGAN's `model.optimize_parameters()`; each with the attributes of the object that hold the networks
        its class trains (those all its classes name)."""
        found = []
        for step in self.collector.method_calls:
            method = step.call.func.attr
            constructions = [value for value in self.values.get(target_name(step.call.func.value), ())
                             if isinstance(value, ast.Call) and isinstance(value.func, ast.Name)]
            classes = [cls for construction in constructions for cls, _, steppers in self._built_classes(construction)
                       if method in steppers and any(isinstance(item, FUNCTION_TYPES) and item.name == method and (
                           steppers is not self.steppers or id(item) in self.stepping_defs) for item in cls.body)]
            if classes:  # of several (a registry's), the networks all of them name: which one is built is configured
                named = list(map(network_attributes, classes))
                found.append((step, tuple(a for a in named[0] if all(a in other for other in named[1:]))))
        return found

    def _cell_kind(self, construction: ast.Call) -> str | None:
        """"step" when `construction` builds a train-step cell (MindSpore's, or a project class that steps an
        optimizer), "wrapper" when it builds a project cell around train-step cells it is given
        (`ColorModel(TrainOneStepWithLossScaleCell(...))`, `AnimeGAN(step_d, step_g)`) whose `construct` calls
        one of its attributes: calling it steps their optimizers; else None."""
        key = id(construction)
        if key not in self._kinds:
            self._kinds[key] = None  # a cell given itself (never in practice) is no train-step cell
            self._kinds[key] = self._find_cell_kind(construction)
        return self._kinds[key]

    def _find_cell_kind(self, construction: ast.Call) -> str | None:
        qualified = self.ctx.call_qualname(construction)
        if qualified in catalogue.MINDSPORE_TRAIN_STEP_CELLS:
            return "step"
        if qualified in catalogue.MINDSPORE_DATA_SINK:
            return "sink" if self._sinks_steps(construction) else None
        if not isinstance(construction.func, CLASS_REFS):
            return None
        classes = self._cell_classes(construction)
        if any(_applies_optimizer(cls, tracker) for cls, tracker in classes):
            return "step"
        if self._held_steps(construction) and (not classes or any(_calls_attribute(cls) for cls, _ in classes)):
            return "wrapper"
        return None

    def _held_steps(self, construction: ast.Call) -> list[ast.Call]:
        """The train-step cells among a cell construction's arguments (a name assigned one, or one built inline)."""
        held = []
        for arg in [*construction.args, *(k.value for k in construction.keywords)]:
            value = self.assignments.get(arg.id) if isinstance(arg, ast.Name) else arg
            if isinstance(value, ast.Call) and value is not construction and self._cell_kind(value) is not None:
                held.append(value)
        return held

    def _sinks_steps(self, sink: ast.Call) -> bool:
        """Whether `mindspore.data_sink(fn, dataset, ...)` runs training steps: `fn` is a train-step cell, a function of
        the file that applies gradients, or what the file does not define (a parameter, as mindrlhf's
        `PPOTrainer.train(self, ppo_with_grad, dataset)` is given its `TrainOneStepWithLossScaleCell`: data sinking
        is for training)."""
        fn = argument(sink, 0, "fn")
        if isinstance(fn, ast.Call):
            return self._cell_kind(fn) is not None
        name = target_name(fn) if fn is not None else None
        if name is None:
            return False
        value = self.assignments.get(name)
        if name in self.functions:
            return any(step.loop is None and step.function is self.functions[name] for step in self.collector.steps)
        return value is None or isinstance(value, ast.Call) and self._cell_kind(value) is not None

    def _cell_classes(self, construction: ast.Call) -> list[tuple[ast.ClassDef, object]]:
        """The class `construction` instantiates (defined in this file or in a project module), with the import
        tracker of its module; empty when it is neither."""
        return [(cls, tracker) for cls, tracker, _ in self._built_classes(construction)]

    def _built_classes(self, construction: ast.Call) -> list[tuple[ast.ClassDef, object, Container[str]]]:
        """`_cell_classes`, each with the functions of its file that apply gradients once per call; a project
        factory building them through a registry (BasicSR's `build_model(opt)`) builds those registered there."""
        func = construction.func  # `Cell(...)`, or `module.Cell(...)` of a project module (`import new_trainer`)
        name = func.id if isinstance(func, ast.Name) else func.attr
        if isinstance(func, ast.Name) and any(isinstance(node, ast.ClassDef) and node.name == name
                                              for node in self.ctx.tree.body):
            return [(node, self.ctx.imports, self.steppers) for node in self.ctx.tree.body
                    if isinstance(node, ast.ClassDef) and node.name == name]
        found = []
        for _, defined, module in project.reached([construction], self.local, self.functions, self.folder):
            built = [(module, module.classes[defined])] if defined in module.classes else []
            for owner, cls in built or project.registered_classes(module, defined):
                found.append((cls, owner.imports, _ModuleSteppers(owner)))
        return found

    def _hand_steps(self) -> list[_Step]:
        """Gradients applied by hand (`updated_by_hand`), as steps of the innermost loop around them that also
        calls `backward()` (pytorch/examples' regression: `for param in fc.parameters(): param.data.add_(-0.1 *
        param.grad)` after `output.backward()`), or of their function when it calls `backward()` outside any
        such loop. A custom optimizer's loop over its parameters computes no gradient: no step."""
        steps = []
        for update in self._hand_updates:
            ancestors = []
            node = self.parents.get(update)
            while node is not None:
                ancestors.append(node)
                node = self.parents.get(node)
            ancestors.reverse()
            function = _function(ancestors)
            for node in reversed(ancestors):
                if isinstance(node, LOOP_TYPES) and _calls_backward(node):
                    steps.append(_Step(update, node, function, _conditional(ancestors, node)))
                    break
                if isinstance(node, SCOPE_TYPES):
                    if node is function and _calls_backward(node):
                        steps.append(_Step(update, None, function, False))
                    break
        return steps

    def _steppers(self) -> dict[str, _Step]:
        """Local functions that apply gradients once per call (not inside a loop of their own). One with a loop
        over data that steps is a training loop, not one step, even with a step after that loop (minimind's
        `train_epoch` flushing what it accumulated, PyG's MemPool example's step on a loss summed over the data)."""
        batching = {id(step.function) for step in self.collector.steps
                    if step.loop is not None and _iterates_data(step.loop)}
        found: dict[str, _Step] = {}
        self.stepping_defs = set()  # the definitions themselves: a name may be defined twice (a nested `update`)
        for step in self.collector.steps:  # the first step of each: models are listed in the order they step
            if step.loop is None and step.function is not None and id(step.function) not in batching:
                found.setdefault(step.function.name, step)
                self.stepping_defs.add(id(step.function))
        changed = True
        while changed:
            changed = False
            for name, loop, function, _, _ in self.collector.calls:
                if name in found and loop is None and function is not None and id(function) not in self.stepping_defs:
                    found.setdefault(function.name, found[name])
                    self.stepping_defs.add(id(function))
                    changed = True
        return found

    def loops(self) -> list[TrainingLoop]:
        """The innermost loops that step the optimizer, directly or through local stepping functions; but a
        loop that steps an optimizer itself is the training step even with stepping loops inside it (a GAN's
        critic loop, SAC's delayed actor updates): those are parts of its iteration."""
        candidates: dict[int, tuple[ast.stmt, Function, _Step, bool]] = {}
        for step in self.collector.steps:
            if step.loop is not None:
                candidates.setdefault(id(step.loop), (step.loop, step.function, step, step.conditional))
        direct = set(candidates)
        repeated = set()  # stepping functions called in a loop: each call is one step
        for name, loop, function, conditional, _ in self.collector.calls:
            if loop is not None and name in self.steppers:
                candidates.setdefault(id(loop), (loop, function, self.steppers[name], conditional))
                repeated.add(name)
        for key in direct:  # a repeat loop in one such step is part of it: PyG's ARGVA steps its critic 5 times
            loop, function = candidates[key][:2]
            if function is not None and function.name in repeated and not _iterates_data(loop):
                del candidates[key]
        chosen = []
        for candidate in candidates.values():
            loop = candidate[0]
            inner = any(other[0] is not loop and inside(other[0], loop) for other in candidates.values())
            stepping_outer = any(other[0] is not loop and inside(loop, other[0]) and id(other[0]) in direct
                                 for other in candidates.values())
            if not stepping_outer and (not inner or id(loop) in direct):
                chosen.append((*candidate, inner))
        chosen.sort(key=lambda c: c[0].lineno)
        return [self._describe(*c) for c in chosen]

    def _describe(self, loop: ast.stmt, function: Function, step: _Step, conditional: bool,
                  inner_steps: bool) -> TrainingLoop:
        steps = [other.call for other in self._loop_steps(loop, step)]
        models = self.trained.models(steps, function)
        outermost = loop
        node = self.parents.get(loop)
        while node is not None and not isinstance(node, SCOPE_TYPES) and not isinstance(node, ast.Module):
            if isinstance(node, LOOP_TYPES):
                outermost = node
            node = self.parents.get(node)
        scope = function or self.ctx.tree
        roots = [model.split(".", 1)[0] for model in models]
        built_inside = next((model for model, root in zip(models, roots, strict=True)
                             if root not in parameters_of(function) and not assigned_before(scope, root, loop.lineno)
                             and assigned_before(loop, root, loop.end_lineno + 1)), None)
        if built_inside is not None:  # `start(model=net)` first in the body would run before `net = ...`
            models, roots = (), []
        local = bool(roots) and all(assigned_before(scope, root, outermost.lineno)
                                    and not taken_from_parameters(function, root) for root in roots)
        thresholds = [self._threshold(call, loop) for call in steps or [step.call]]
        threshold = thresholds[0] if None not in thresholds else None  # esrgan's G steps alone while warming up
        return TrainingLoop(loop, function, models, self.trained.optimizers(steps),
                            conditional or step.conditional, outermost, local, inner_steps, built_inside,
                            source_text(self.ctx.source, threshold) if threshold is not None else None,
                            all(updated_by_hand(step) is not None for step in steps), self._stepping_nodes(loop))

    def warm_up(self, loop: TrainingLoop) -> WarmUp | None:
        """`loop` as a warm-up: after its outermost loop, its function calls `model.load_state_dict(saved...)` on
        a model the loop trains (any it runs, when those are not known), `saved` holding a
        `copy.deepcopy(model.state_dict())` made before that loop and not replaced in between (a best-so-far copy
        the loop keeps, restored at the end, is training's)."""
        outer = loop.outermost
        statements = sorted(walk_scope(loop.function or self.ctx.tree), key=lambda node: getattr(node, "lineno", 0))
        used = {model.split(".", 1)[0] for model in loop.models} or {
            node.id for node in ast.walk(outer) if isinstance(node, ast.Name)}
        for call in statements:
            if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.args
                    and call.func.attr == "load_state_dict" and call.lineno > outer.end_lineno
                    and root_name(call.func.value) in used):
                continue
            saved = _subscripted_name(call.args[0])
            if saved is None:
                continue
            assigned = [node for node in statements if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign))
                        and saved in map(_subscripted_name, node.targets if isinstance(node, ast.Assign) else [node.target])]
            copies = [node for node in assigned if node.lineno < outer.lineno and node.value is not None
                      and self._copies_state(node.value, call.func.value)]
            if copies and not any(copies[-1].lineno < node.lineno < call.lineno for node in assigned):
                return WarmUp(loop.node, call, copies[-1])
        return None

    def _copies_state(self, value: ast.expr, model: ast.expr) -> bool:
        """Whether `value` holds `copy.deepcopy(model.state_dict())`."""
        return any(isinstance(node, ast.Call) and self.ctx.imports.resolve_any(node.func) == "copy.deepcopy"
                   and node.args and isinstance(node.args[0], ast.Call)
                   and isinstance(node.args[0].func, ast.Attribute) and node.args[0].func.attr == "state_dict"
                   and ast.dump(node.args[0].func.value) == ast.dump(model) for node in ast.walk(value))

    def _stepping_nodes(self, loop: ast.stmt) -> tuple[ast.AST, ...]:
        """What applies gradients in `loop` (inner loops included): step calls, and calls of stepping functions."""
        def within(inner: ast.stmt | None) -> bool:
            return inner is not None and (inner is loop or inside(inner, loop))

        steps = [step.call for step in self.collector.steps if within(step.loop)]
        return (*steps, *(call for name, inner, _, _, call in self.collector.calls
                          if name in self.steppers and within(inner)))

    def _threshold(self, call: ast.Call, loop: ast.stmt) -> ast.expr | None:
        """The test of an `if` between `loop` and the step `call` that compares against a bound (`if global_step >
        args.learning_starts:`: off-policy RL and warm-up phases step the optimizer only after it)."""
        node = self.parents.get(call)
        while node is not None and node is not loop and not isinstance(node, SCOPE_TYPES):
            if (isinstance(node, ast.If) and isinstance(node.test, ast.Compare)
                    and all(isinstance(op, (ast.Gt, ast.GtE, ast.Lt, ast.LtE)) for op in node.test.ops)
                    and not self._steps_in(node.orelse)):  # Swin's `if ACCUMULATION_STEPS > 1: ... else: step`
                return node.test
            node = self.parents.get(node)
        return None

    def _steps_in(self, body: list[ast.stmt]) -> bool:
        """Whether `body` applies gradients itself."""
        return any(isinstance(n, ast.Call) and self.ctx.is_optimizer_step(n) for s in body for n in ast.walk(s))

    def callback_trainings(self) -> list[CallbackTraining]:
        """The `Model.train(...)` calls and trainer constructions, with the statement they sit in, the optimizer
        a `Model` uses and what `callbacks=` holds."""
        found = []
        for call, function, library, takes_callbacks in self.collector.trains:
            statement = call
            while not isinstance(statement, ast.stmt):
                statement = self.parents[statement]
            if library != "mindspore" and self._only_evaluated(statement):
                continue
            position = 2 if library == "mindspore" else None  # Model.train(epoch, dataset, callbacks, ...)
            optimizer = None
            if library == "mindspore":
                model = call.func.value  # `Model(...).train(...)`, else the name assigned the Model
                if not isinstance(model, ast.Call):
                    model = self.assignments.get(target_name(model) or "")
                found_opt = argument(model, 2, "optimizer") if isinstance(model, ast.Call) else None
                if isinstance(found_opt, (ast.Name, ast.Attribute)):  # one built inline could not be monitored again
                    optimizer = source_text(self.ctx.source, found_opt)
            name = CALLBACK_KEYWORDS.get(library, "callbacks")
            callbacks = keyword(call, name) if position is None else argument(call, position, name)
            found.append(CallbackTraining(call, statement, function, library, position, optimizer,
                                          self._callbacks_kind(callbacks, library), takes_callbacks))
        return found

    def _only_evaluated(self, statement: ast.stmt) -> bool:
        """Whether the trainer `statement` assigns is only evaluated where it is built: the later statements of
        its block call its `evaluate`/`predict`/`validate`/`test` and nothing else of it (run_dpo.py's `run_mode ==
        'eval'` branch of mindformers): it trains nothing."""
        if not isinstance(statement, ast.Assign) or len(statement.targets) != 1:
            return False
        holder = target_name(statement.targets[0])
        block = next((getattr(self.parents.get(statement), field) for field in ("body", "orelse", "finalbody")
                      if statement in getattr(self.parents.get(statement), field, [])), [statement])
        runs = {node.func.attr for later in block[block.index(statement) + 1:] for node in ast.walk(later)
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and target_name(node.func.value) == holder}
        return bool(runs) and runs <= EVALUATION_RUNS

    def _callbacks_kind(self, callbacks: ast.expr | None, library: str) -> str | None:
        """"list" for a name only ever assigned lists (or what a project function returning only lists gives),
        "one" for a single callback (a class's construction, or a
        name assigned one; Hugging Face and mmengine take lists only), else None."""
        values = self.values.get(callbacks.id, []) if isinstance(callbacks, ast.Name) else []
        if values and all(isinstance(value, (ast.List, ast.ListComp)) or self._returns_list(value) for value in values):
            return "list"
        single = self.assignments.get(callbacks.id) if isinstance(callbacks, ast.Name) else callbacks
        if library in ("lightning", "mindspore") and isinstance(single, ast.Call) and constructs_class(single):
            return "one"
        return None

    def _returns_list(self, value: ast.expr) -> bool:
        """Whether `value` calls a project function (the file's or an imported module's) whose every `return` gives a
        list, or a name it only assigns lists (segment-anything's `create_callback(args.callback)`: `cb_list = []`,
        appended to, returned)."""
        function = pinning.called_function(value, self.functions, self.folder, self.local)[0] \
            if isinstance(value, ast.Call) else None
        returns = [node.value for node in ast.walk(function) if isinstance(node, ast.Return)] if function else []

        def listed(node: ast.expr | None) -> bool:
            if isinstance(node, ast.Name):
                assigned = [item.value for item in ast.walk(function) if isinstance(item, ast.Assign)
                            and any(target_name(target) == node.id for target in item.targets)]
                return bool(assigned) and all(isinstance(item, (ast.List, ast.ListComp)) for item in assigned)
            return isinstance(node, (ast.List, ast.ListComp))

        return bool(returns) and all(listed(node) for node in returns)

    def _loop_steps(self, loop: ast.stmt, step: _Step) -> list[_Step]:
        """`step`, then every step in `loop` (inner loops and local stepping functions called in it included, each
        with all its steps)."""
        steps = [step, *(other for other in self.collector.steps
                         if other.loop is not None and (other.loop is loop or inside(other.loop, loop)))]
        called = {self.steppers[name].function.name for name, inner, _, _, _ in self.collector.calls
                  if name in self.steppers and inner is not None and (inner is loop or inside(inner, loop))}
        return steps + [other for other in self.collector.steps  # every step of them: seq2seq's encoder and decoder,
                        if other.function is not None and other.function.name in called]  # a critic's in its loop


class _ModuleSteppers:
    """The stepping functions of a project module, analysed only when asked (a MindSpore cell's class needs none)."""

    def __init__(self, module: project.Module):
        self.module = module

    def __contains__(self, name: object) -> bool:
        return name in _module_analysis(self.module).steppers


def _subscripted_name(node: ast.expr) -> str | None:
    """The name a value is read from by subscripts (`initial_state` of `initial_state["model"]`), or the name."""
    while isinstance(node, ast.Subscript):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def constructs_class(call: ast.Call) -> bool:
    """Whether `call` looks like a class's construction (`ModelCheckpoint(...)`, `cb.LossMonitor()`)."""
    name = call.func.attr if isinstance(call.func, ast.Attribute) else getattr(call.func, "id", "")
    return name[:1].isupper()


def _applies_optimizer(cls: ast.ClassDef, tracker) -> bool:
    """A cell class that subclasses one of MindSpore's train-step cells, or whose `construct` calls an attribute
    named like an optimizer with the gradients (`self.optimizer(grads)`, `self.optimizerG(grads)`) or one its
    class assigns a train-step cell of MindSpore's (`self.step = nn.TrainOneStepCell(...)`), or calls a method of
    the class that calls such a parameter of its own (MindSpore-GAN's `self.trainD(..., self.optimizerD1, ...)`,
    whose body runs `optimizer(grads)`)."""
    if any(tracker.resolve(base) in catalogue.MINDSPORE_TRAIN_STEP_CELLS for base in cls.bases):
        return True
    steps = {target.attr for node in ast.walk(cls) if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)
             and tracker.resolve(node.value.func) in catalogue.MINDSPORE_TRAIN_STEP_CELLS
             for target in node.targets if _self_attribute(target)}
    methods = {item.name: item for item in cls.body if isinstance(item, FUNCTION_TYPES)}
    called = [methods[node.func.attr] for node in _attribute_calls(cls) if node.func.attr in methods]
    return any(node.args and ("optim" in node.func.attr.lower() or node.func.attr in steps)
               for node in _attribute_calls(cls)) or any(
        isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.args and "optim" in node.func.id.lower()
        and node.func.id in parameters_of(method) for method in called for node in ast.walk(method))


def _calls_attribute(cls: ast.ClassDef) -> bool:
    """Whether the cell class's `construct` calls one of its attributes (`self.step(x, y)`)."""
    return any(True for _ in _attribute_calls(cls))


def _attribute_calls(cls: ast.ClassDef) -> Iterator[ast.Call]:
    """The calls of `self.<attribute>(...)` in the class's `construct`."""
    construct = next((item for item in cls.body if isinstance(item, FUNCTION_TYPES) and item.name == "construct"), None)
    if construct is not None:
        yield from (node for node in ast.walk(construct)
                    if isinstance(node, ast.Call) and _self_attribute(node.func))


def _self_attribute(node: ast.expr) -> bool:
    return isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self"

"""Per-file analysis state shared by all rules: one source-order traversal, imports, loops, scopes."""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from msprobe_rewriter import catalogue, project
from msprobe_rewriter.imports import ImportTracker

LOOP_TYPES = (ast.For, ast.AsyncFor, ast.While)
SCOPE_TYPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
TRANSFER_TO_NPU = "torch_npu.contrib.transfer_to_npu"  # importing it makes `.cuda()` and `torch.cuda` the NPU's
FUNCTION_TYPES = (ast.FunctionDef, ast.AsyncFunctionDef)
# Methods that apply gradients: `optimizer.step()`, `scaler.step(optimizer)`, `trainer.optimize(optimizer)`,
# `strategy.optimizer_step(optimizer, model, scheduler)` (OpenRLHF's) and a DeepSpeed pipeline engine's whole step,
# `engine.train_batch()`.
STEP_METHODS = frozenset({"step", "optimize", "optimizer_step", "train_batch"})
# Methods that run a library trainer's training loop, by what builds the trainers they run: `trainer.train()`,
# `trainer.fit(m)`, mmengine's `runner.train()`, a Stable-Baselines3 algorithm's `model.learn(...)`.
TRAINER_RUNS = {"train": catalogue.HF_TRAINERS | catalogue.MMENGINE_RUNNER_BUILDS,
                "fit": catalogue.LIGHTNING_TRAINER_BUILDS | catalogue.SPEECHBRAIN_BRAINS | catalogue.COMPOSER_TRAINERS,
                catalogue.SB3_LEARN: catalogue.SB3_ALGORITHMS}


def walk_scope(scope: ast.AST) -> Iterator[ast.AST]:
    """Nodes of one scope, not entering nested functions, classes or lambdas."""
    todo = list(ast.iter_child_nodes(scope))
    while todo:
        node = todo.pop()
        yield node
        if not isinstance(node, SCOPE_TYPES):
            todo.extend(ast.iter_child_nodes(node))


FRAME_TYPES = frozenset((*LOOP_TYPES, *SCOPE_TYPES))
# Leaf node types that are not worth a visit unless a rule asks for them, and the fields holding them.
SINGLETON_TYPES = frozenset(cls for base in (ast.expr_context, ast.boolop, ast.operator, ast.unaryop, ast.cmpop)
                            for cls in base.__subclasses__())
_SINGLETON_FIELDS = frozenset({"ctx", "op", "ops"})
# Fields that hold identifiers, numbers or flags, never child nodes; `Constant` has no children at all.
_SCALAR_FIELDS = frozenset({"id", "attr", "arg", "module", "level", "kind", "conversion", "is_async",
                            "simple", "type_comment"})


# Functions, loaders and datasets whose names say "evaluation only" (post-processing of predictions too: detectron2's
# `sem_seg_postprocess`): their findings drop to info. A name that also says it trains (`train_eval`,
# `train_and_evaluate`, `fit_and_test`) is not evaluation only.
# Not a name that tests or picks what is allowed: `is_valid_field` in a training dataset (audiocraft),
# `check_valid_boxes`, `valid_mask`; `valid_epoch`, `valid_step` and `valid` do evaluate.
_VALID_PREDICATE = (r"(?!.*(?:^|_)(?:is|are|has|check|ensure|assert|filter|keep)_valid(?:_|$))"
                    r"(?!.*(?:^|_)valid_(?:masks?|inds?|indices|ids?|fields?|keys?|box|boxes|regions?|pixels?|points?"
                    r"|tokens?|len|length|range)(?:_|$))")
EVAL_NAME = re.compile(r"^(?!.*(?:^|_)(?:train|training|fit)(?:_|$))" + _VALID_PREDICATE + r"(?:.*_)?"
                       r"(eval|evaluate|evaluation|validate|validation|valid|val|test|testing|inference|postprocess"
                       r"|postprocessing)(_|$)", re.IGNORECASE)

# Where a class name's CamelCase words meet (`InferenceBenchmark` reads as `Inference_Benchmark` for EVAL_NAME).
CAMEL_BREAK = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")

# A variable named `valid_...` is evaluation data only when the rest names data (`valid_loader`, `valid_set`):
# `valid_inds`, `valid_mask` in a training augmentation mean "allowed".
VALID_ADJECTIVE = re.compile(r"(?:^|_)valid_(?!(?:loader|dataloader|data|dataset|ds|set|iter|sampler|transforms?"
                             r"|batch(?:es)?|samples|files|list|split|step)(?:_|$))", re.IGNORECASE)

# Scripts named for evaluation, inference or export (`eval_linear.py`, `test.py`, `validate.py`, `infer.py`,
# `predict.py`), also by a later word of the name (mindrlhf's `reward_eval.py` and `reward_infer.py`, open_clip's
# `genlip_zeroshot.py`) or its last (`utils_test.py`, a model zoo's `export.py` and `onnx_export.py`, which only export
# a model) when no word of it says it trains (a test module aside): not `train_eval.py`, `evaluate_and_train.py`,
# `lora_finetune_eval.py`. `val`, `validation` and `prediction` count first only: later they name the split a training
# config evaluates on (InternImage's `dino_..._lvis_val_ss.py`) or a training loss (`multi_token_prediction.py`).
_EVAL_WORDS = r"eval|evaluate|evaluation|validate|inference|infer|predict|zeroshot|zero_shot"
EVAL_FILE = re.compile(r"(?:test|testing)(?:_|$)"  # a test module, also one of training code (`test_train.py`)
                       r"|(?!.*(?:^|_)(?:train|training|fit|finetune|pretrain)(?:_|$))"
                       rf"(?:(?:validation|val|prediction)(?:_|$)|(?:.*_)?(?:(?:{_EVAL_WORDS})(?:_|$)|(?:test|export)$))",
                       re.IGNORECASE)
TEST_FILE = re.compile(r"(?:test|testing)(?:_|$)|.*_tests?$", re.IGNORECASE)  # a test module, by its name
# A package of evaluation metrics (mindediting's metrics/lpips.py, a score of predictions with its own networks): its
# files are evaluation code unless loss code imports one (a metric's network trained against as a loss).
METRICS_FOLDER = re.compile(r"metrics?", re.IGNORECASE)
LOSS_CODE = re.compile(r"(?:^|_)loss(?:es)?(?:_|$)", re.IGNORECASE)


def optimizer_like(name: str) -> bool:
    """Whether a name reads as an optimizer's (or a gradient scaler's, which steps one)."""
    lowered = name.lower()
    return "optim" in lowered or "scaler" in lowered or lowered in ("opt", "o") or lowered.startswith(
        "opt_") or lowered.endswith("_opt")


def steps_an_optimizer(tree: ast.Module) -> bool:
    """Whether a loop of the file, outside functions named for evaluation, calls `<optimizer>.step()`: it trains."""
    scopes = [tree, *(node for node in ast.walk(tree) if isinstance(node, FUNCTION_TYPES) and not EVAL_NAME.search(node.name))]
    return any(isinstance(loop, (ast.For, ast.While)) and any(
        isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "step"
        and optimizer_like(target_name(call.func.value) or "") for call in ast.walk(loop))
        for scope in scopes for loop in walk_scope(scope))


@dataclass
class Site:
    """Where a finding points, with the evaluation-path verdict taken while the node was visited."""

    node: ast.AST
    on_eval_path: bool
    switch: tuple[ast.expr, bool] | None = None  # the guard of a branch holding just this (see opt_in)


@dataclass
class LoopInfo:
    """What one loop does at its own level (not counting loops nested in it)."""

    node: ast.AST
    function: str | None
    steps: bool = False
    called: set[str] = field(default_factory=set)


@dataclass
class FunctionInfo:
    """Whether a function (by simple name) performs a training step itself or runs a library trainer's loop, and
    what it calls."""

    steps: bool = False
    called: set[str] = field(default_factory=set)
    trainer_run: bool = False  # `trainer.fit()` (is_trainer_run)


class FileContext:
    """Everything rules ask about one file; filled by `traverse` in source order."""

    def __init__(self, path: str, source: str, tree: ast.Module) -> None:
        self.path = path
        # not a file named for testing whose function builds a training run's data elsewhere (MoCo's dataset_test.py)
        # nor one named for evaluation whose own loop steps an optimizer (swav's eval_semisup.py fine-tunes the network)
        stem = Path(path).stem
        self.eval_file = (EVAL_FILE.match(stem) is not None and not project.builds_training_data(path, EVAL_FILE)
                          and (TEST_FILE.match(stem) is not None or not steps_an_optimizer(tree))
                          or METRICS_FOLDER.fullmatch(project.file_folder(path).name) is not None
                          and not project.imported_by(path, LOSS_CODE))
        self.source = source
        self.tree = tree
        self.lines = source.splitlines()
        self.imports = ImportTracker()
        self.ancestors: list[ast.AST] = []
        self._frames: list[ast.AST] = []  # the loops and scopes among `ancestors`, kept by `traverse`
        self.assigned_calls: dict[str, str] = {}  # simple/attr target name -> qualified callee
        self._grad_factories: dict[str, ast.Call] = {}  # name -> the gradient-function factory call it holds
        self._deepspeed_engines: set[str | None] | None = None  # names bound to `deepspeed.initialize`'s engine
        self.loops: dict[int, LoopInfo] = {}
        self.functions: dict[str, FunctionInfo] = {}
        self.module_level_steps = False
        self.module_level_trainer_run = False  # `trainer.train()` of a library trainer (is_trainer_run)
        self.module_level_calls: set[str] = set()  # the file's functions called at module level, outside loops
        self._trains_at_module_level: bool | None = None  # see `is_entry_script`
        self.has_main_guard = False
        self._stepping_functions: set[str] | None = None
        self._defined_functions: dict[int, set[str]] = {}  # id(scope) -> functions defined in it, read once
        self._pipeline_steps: set[int] = set()  # ids of torchrec train pipelines' `progress(...)` calls that train
        self._self_writes: dict[int, dict[str, list[ast.expr]]] = {}  # id(class) -> values put in `self.<name>`
        self._def_names: set[str] | None = None  # every function name defined in the file (`names_scaler`)
        self._ascend: bool | None = None
        self._preload_imports()

    def runs_on_ascend(self) -> bool:
        """Whether the file runs PyTorch on Ascend only: it imports torch_npu, or uses `torch.npu` (`import
        torch.npu`, `torch.npu.set_device(...)`: ModelZoo's scripts for torch 1.5) or `.npu()` other than under a
        test for an NPU (diffusers' `if is_torch_npu_available():`), and names no CUDA (`torch.cuda`, `.cuda()`,
        a "cuda" device: timm's scripts serve both) unless torch_npu's `transfer_to_npu` moves it to the NPU."""
        if self._ascend is None:
            nodes = list(_unless_npu_tested(self.tree))
            self._ascend = ((self.imports.imports_root("torch_npu") or any(map(self._uses_npu, nodes)))
                            and (self.imports.imports_root(TRANSFER_TO_NPU)  # its CUDA calls run on the NPU
                                 or not any(map(self._uses_cuda, ast.walk(self.tree)))))
        return self._ascend

    def _uses_npu(self, node: ast.AST) -> bool:
        if isinstance(node, ast.Import):
            return any(alias.name.startswith("torch.npu") for alias in node.names)
        return self._device_use(node, "npu")

    def _uses_cuda(self, node: ast.AST) -> bool:
        if isinstance(node, ast.Constant):
            return isinstance(node.value, str) and (node.value == "cuda" or node.value.startswith("cuda:"))
        return self._device_use(node, "cuda")

    def _device_use(self, node: ast.AST, device: str) -> bool:
        """`x.<device>()` or `torch.<device>`."""
        if isinstance(node, ast.Call):
            return isinstance(node.func, ast.Attribute) and node.func.attr == device
        return isinstance(node, ast.Attribute) and node.attr == device and self.imports.resolve(node.value) == "torch"

    # --- names -------------------------------------------------------------------------------
    def _preload_imports(self) -> None:
        """Module-level imports (also inside top-level if/try blocks) are known before any visit."""
        pending, statements = list(self.tree.body), []
        while pending:
            stmt = pending.pop(0)
            if isinstance(stmt, (ast.Import, ast.ImportFrom)):
                statements.append(stmt)
            elif isinstance(stmt, (ast.If, ast.Try)):
                pending.extend(stmt.body)
                pending.extend(stmt.orelse)
                pending.extend(getattr(stmt, "finalbody", []))
                for handler in getattr(stmt, "handlers", []):
                    pending.extend(handler.body)
        # the project classes an import anywhere in the file names (ms-swift's `from swift.tuners import LoraConfig`
        # inside `prepare_adapter`): bound as their library base when the traversal reaches that import
        local = project.local_imports(project.import_statements(self.tree.body))
        if local.refs:
            project.find_module.cache_clear()  # module lookups are cached for one file's analysis only
            folder = project.file_folder(self.path)
            self.imports.project_classes = project.imported_subclasses(local, folder, catalogue.SUBCLASSED_CLASSES)
            self.imports.project_functions = project.copied_functions(local, folder, catalogue.COPIED_FUNCTIONS)
        for stmt in statements:
            self.imports.add_import(stmt)
        self.imports.bind_subclasses(self.tree, catalogue.SUBCLASSED_CLASSES)

    def qualname(self, node: ast.AST) -> str | None:
        """Qualified name of a Name/Attribute expression rooted in a known import."""
        return self.imports.resolve(node)

    def call_qualname(self, call: ast.Call) -> str | None:
        """Qualified name of the callee of `call`, or of the class whose instance is called."""
        return self.imports.resolve(call.func)

    def built_qualname(self, call: ast.Call) -> str | None:
        """`call_qualname`, or a Stable-Baselines3 algorithm built or a call of mindtorch's torch API (libraries
        outside the known ones)."""
        qualified = self.call_qualname(call)
        if qualified is None and (found := self.imports.resolve_any(call.func)) is not None and (
                found in catalogue.SB3_ALGORITHMS or found.startswith(catalogue.TORCH_API_ON_MINDSPORE_PREFIXES)):
            return found
        return qualified

    def draw_qualname(self, call: ast.Call) -> str | None:
        """`call_qualname`, or `torch.Tensor.uniform_` for an in-place random fill of a tensor in a file that imports
        torch (`torch.empty(1).uniform_(a, b)`, `w.normal_()`; not a module's function, `init.normal_(w)`), which
        torch's generator for the tensor's device draws."""
        qualified = self.call_qualname(call)
        func = call.func
        if qualified is not None or not isinstance(func, ast.Attribute) \
                or func.attr not in catalogue.INPLACE_RANDOM_METHODS or not self.imports.imports_root("torch"):
            return qualified
        root = func.value
        while isinstance(root, ast.Attribute):
            root = root.value
        return None if isinstance(root, ast.Name) and root.id in self.imports.bindings else f"torch.Tensor.{func.attr}"

    def callee_name(self, call: ast.Call) -> str | None:
        """Last component of the callee's name, import aliases undone (`AD` -> `AlphaDropout`): a cheap
        pre-filter before `call_qualname`."""
        func = call.func
        if isinstance(func, ast.Attribute):
            return func.attr
        if isinstance(func, ast.Name):
            bound = self.imports.bindings.get(func.id)
            return bound.rsplit(".", 1)[-1] if bound else func.id
        return None

    # --- traversal ---------------------------------------------------------------------------
    def traverse(self, handlers: dict[type, list[Callable[[ast.AST], None]]]) -> None:
        """Visit every node once in source order, keeping `ancestors` and the loop/step bookkeeping.

        Expression contexts and operators (`Load`, `Add`, ...) are visited only when a rule has a
        handler for one of them; a node without children is never pushed onto `ancestors` (nothing
        is visited while it would be there). `_frames` mirrors the def/lambda/class/loop ancestors.
        """
        ancestors, frames = self.ancestors, self._frames
        plans: dict[type, tuple] = {}
        with_singletons = not SINGLETON_TYPES.isdisjoint(handlers)
        node_type = ast.AST
        todo: list = [self.tree]
        while todo:
            node = todo.pop()
            if node is None:
                if type(ancestors.pop()) in FRAME_TYPES:
                    frames.pop()
                continue
            kind = type(node)
            plan = plans.get(kind)
            if plan is None:
                plan = plans[kind] = self._plan(kind, handlers, with_singletons)
            note, visitors, fields, frame = plan
            if note is not None:
                note(node)
            for visit in visitors:
                visit(node)
            if frame and kind in LOOP_TYPES:
                self.loops[id(node)] = LoopInfo(node, self.current_function())
            children = []
            for name in fields:
                value = getattr(node, name, None)
                if type(value) is list:
                    children += [item for item in value if isinstance(item, node_type)]
                elif isinstance(value, node_type):
                    children.append(value)
            if children:
                ancestors.append(node)
                if frame:
                    frames.append(node)
                todo.append(None)
                children.reverse()
                todo.extend(children)

    def _plan(self, kind: type, handlers: dict, with_singletons: bool) -> tuple:
        """What `traverse` does for nodes of `kind`: bookkeeping, rule handlers, child fields, frame."""
        notes = {ast.Call: self._note_call, ast.Assign: self._note_assign, ast.AnnAssign: self._note_assign,
                 ast.Import: self.imports.add_import, ast.ImportFrom: self.imports.add_import,
                 ast.If: self._note_if}
        skip = _SCALAR_FIELDS if with_singletons else _SCALAR_FIELDS | _SINGLETON_FIELDS
        fields = () if kind is ast.Constant else tuple(name for name in kind._fields if name not in skip)
        return notes.get(kind), tuple(handlers.get(kind, ())), fields, kind in FRAME_TYPES

    def _note_if(self, node: ast.If) -> None:
        if len(self.ancestors) <= 1:
            self._note_main_guard(node)

    def _note_assign(self, node: ast.Assign | ast.AnnAssign) -> None:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        value = node.value
        for target in targets:
            name = target_name(target)
            if name is None:
                continue
            if isinstance(value, ast.Call):
                callee = self.built_qualname(value)
                if callee is not None:
                    self.assigned_calls[name] = callee
                    if callee in catalogue.GRAD_FUNCTION_FACTORIES:
                        self._grad_factories[name] = value
                else:
                    self.assigned_calls.pop(name, None)
            if isinstance(target, ast.Name) and isinstance(value, (ast.Name, ast.Attribute)):
                self.imports.add_alias(target.id, value)
            elif isinstance(target, ast.Name):
                self.imports.drop_alias(target.id)

    def _note_main_guard(self, node: ast.If) -> None:
        test = node.test
        if (isinstance(test, ast.Compare) and isinstance(test.left, ast.Name) and test.left.id == "__name__"
                and any(isinstance(c, ast.Constant) and c.value == "__main__" for c in test.comparators)):
            self.has_main_guard = True

    def _note_call(self, call: ast.Call) -> None:
        """Record training-step calls and calls of local functions (and of the class's own methods) against
        the enclosing loop/function."""
        func = call.func
        if self._pipeline_progress(call):
            self._pipeline_steps.add(id(call))
        callee_name = func.id if isinstance(func, ast.Name) else self.own_method_called(call)
        steps = self.is_step_call(call) and not self.in_autograd_function()
        loop = self.current_loop()
        function = self.current_function()
        if loop is not None:
            info = self.loops[id(loop)]
            info.steps |= steps
            if callee_name:
                info.called.add(callee_name)
            info.called.update(self.handed_functions(call))
        elif function is None:
            self.module_level_steps |= steps
            if callee_name:
                self.module_level_calls.add(callee_name)
        trainer_run = self.is_trainer_run(call)
        if function is None and trainer_run:
            self.module_level_trainer_run = True
        if function is not None:
            finfo = self.functions.setdefault(function, FunctionInfo())
            finfo.steps |= steps
            finfo.trainer_run |= trainer_run
            if callee_name:
                finfo.called.add(callee_name)

    def handed_functions(self, call: ast.Call) -> list[str]:
        """The functions of the enclosing function or the module that `call` is handed by name: they run there
        (ijepa's `gpu_timer(train_step)`); not a variable (`model(x, train=train)`)."""
        names = [arg.id for arg in (*call.args, *(kw.value for kw in call.keywords)) if isinstance(arg, ast.Name)]
        if not names:
            return []
        scopes = [self.tree] + ([self.current_def()] if self.current_def() is not None else [])
        defined = set().union(*(self._functions_defined_in(scope) for scope in scopes))
        return [name for name in names if name in defined]

    def _functions_defined_in(self, scope: ast.AST) -> set[str]:
        """The names of the functions defined directly in `scope` (also under its `if`s and loops)."""
        found = self._defined_functions.get(id(scope))
        if found is None:
            found = self._defined_functions[id(scope)] = {
                child.name for node in (scope, *own_nodes(scope)) for child in ast.iter_child_nodes(node)
                if isinstance(child, FUNCTION_TYPES)}
        return found

    def self_attribute_function(self, call: ast.Call) -> str | None:
        """The imported function a `self.name(...)` call runs: the one that every value but None the class around
        assigns to `self.name` names (OLMo's `self.flash_attn_func = flash_attn_func` in `__init__`); else None."""
        func = call.func
        if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self"):
            return None
        owner = next((node for node in reversed(self.ancestors) if isinstance(node, ast.ClassDef)), None)
        if owner is None:
            return None
        if id(owner) not in self._self_writes:
            writes: dict[str, list[ast.expr]] = {}
            for node in ast.walk(owner):
                if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
                    for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                        if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) \
                                and target.value.id == "self":
                            writes.setdefault(target.attr, []).append(node.value)
            self._self_writes[id(owner)] = writes
        values = [value for value in self._self_writes[id(owner)].get(func.attr, [])
                  if not (isinstance(value, ast.Constant) and value.value is None)]
        names = {self.imports.resolve_any(value) for value in values}
        return names.pop() if len(names) == 1 else None

    def own_method_called(self, call: ast.Call) -> str | None:
        """`run_step` for `self.run_step(...)` inside a method of a class that defines `run_step`."""
        func = call.func
        if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self"):
            return None
        for node in reversed(self.ancestors):
            if isinstance(node, ast.ClassDef):
                defined = any(isinstance(item, FUNCTION_TYPES) and item.name == func.attr for item in node.body)
                return func.attr if defined else None
        return None

    def is_step_call(self, call: ast.Call) -> bool:
        """Whether `call` performs (part of) a training step: backward, optimizer step, grad function."""
        func = call.func
        if self.is_library_train_step(call):
            return True
        if isinstance(func, ast.Attribute):
            if func.attr == "backward":
                return True
            if func.attr in STEP_METHODS:
                return self.is_optimizer_step(call)
            owner = target_name(func.value)
            if func.attr == "train" and owner is not None:
                return self.assigned_calls.get(owner) in catalogue.MINDSPORE_MODEL_CLASSES
        name = target_name(func)
        if name is None:
            return False
        origin = self.assigned_calls.get(name)
        if origin is None:
            if self.names_scaler(name):  # MAE/timm style: `loss_scaler(loss, optimizer, ...)`
                return any(self.is_optimizer_name(n) for n in map(target_name, call.args) if n)
            # MindSpore applies gradients by calling the optimizer: `optimizer(grads)`
            return self.imports.imports_root("mindspore") and self.is_optimizer_name(name) and bool(call.args)
        return (origin in catalogue.GRAD_FUNCTION_FACTORIES and not self._input_gradients(name)
                or origin in catalogue.MINDSPORE_TRAIN_STEP_CELLS
                or (origin.startswith("mindspore.") and catalogue.is_optimizer_class(origin)))

    def _input_gradients(self, name: str) -> bool:
        """Whether `name` holds a MindSpore gradient function of inputs only (`ops.value_and_grad(fn, 0,
        weights=None)`: DPM-Solver's classifier guidance, the gradient of a classifier with respect to the image
        being sampled), which trains no parameter. Not torch.func's `grad`: functional training passes the
        parameters as inputs."""
        call = self._grad_factories.get(name)
        if call is None or not self.assigned_calls[name].startswith("mindspore."):
            return False
        weights = argument(call, 2, "weights")
        return (weights is None or constant(weights) is None) and all(k.arg is not None for k in call.keywords)

    def is_trainer_run(self, call: ast.Call) -> bool:
        """Whether `call` runs a Hugging Face trainer's (`trainer.train()`, `Trainer(...).train()`), a Lightning
        or Composer trainer's (`trainer.fit(model)`, `trainer.fit()`), a SpeechBrain brain's (`asr_brain.fit(...)`),
        an mmengine runner's (`runner.train()`) or a Stable-Baselines3 algorithm's (`model.learn(...)`) training
        loop; the file's subclasses of them included."""
        func = call.func
        trainers = TRAINER_RUNS.get(func.attr) if isinstance(func, ast.Attribute) else None
        if trainers is None:
            return False
        owner = func.value
        if isinstance(owner, ast.Call):
            return self.built_qualname(owner) in trainers
        name = target_name(owner)
        return name is not None and self.assigned_calls.get(name) in trainers

    def is_library_train_step(self, call: ast.Call) -> bool:
        """Whether `call` is a library's whole training step (Megatron's `train_step(...)`, a torchrec train
        pipeline's `progress(...)`)."""
        return self.imports.resolve_any(call.func) in catalogue.LIBRARY_TRAIN_STEPS or id(call) in self._pipeline_steps

    def _pipeline_progress(self, call: ast.Call) -> bool:
        """Whether `call` is `pipeline.progress(...)` of a torchrec train pipeline (built into that name, or a
        parameter annotated with its class: DLRM's `_train(pipeline: TrainPipelineSparseDist, ...)`), not under
        `torch.no_grad()` (its `_evaluate` runs the same pipeline's progress to predict)."""
        func = call.func
        if not (isinstance(func, ast.Attribute) and func.attr == "progress" and isinstance(func.value, ast.Name)):
            return False
        owner, function = func.value.id, self.current_def()
        annotation = next((a.annotation for a in (*function.args.args, *function.args.kwonlyargs)
                           if a.arg == owner and a.annotation is not None), None) if function is not None else None
        built = self.imports.resolve_any(annotation) if annotation is not None else self.assigned_calls.get(owner)
        return built in catalogue.TORCHREC_TRAIN_PIPELINES and not any(
            self.imports.resolve_any(item.context_expr.func if isinstance(item.context_expr, ast.Call)
                                     else item.context_expr) in catalogue.GRAD_DISABLING_CONTEXTS
            for node in self.ancestors if isinstance(node, (ast.With, ast.AsyncWith)) for item in node.items)

    def is_optimizer_step(self, call: ast.Call) -> bool:
        """Whether `call` applies gradients (not just computes them): `optimizer.step()`, `scaler.step(opt)`,
        MindSpore `optimizer(grads)`, a `TrainOneStepCell`-style cell call, or a library's whole training step
        (Megatron's `train_step(...)`)."""
        func = call.func
        if self.is_library_train_step(call):
            return True
        if isinstance(func, ast.Attribute) and func.attr in STEP_METHODS:
            owner = target_name(func.value)
            if owner is not None and (func.attr == "step" and self.is_optimizer_name(owner)
                                      or self.is_deepspeed_engine(owner)):
                return True
            # a helper handed the optimizer steps it: guided-diffusion's `mp_trainer.optimize(self.opt)`
            return any(self.is_optimizer_name(name) for name in map(target_name, call.args) if name)
        name = target_name(func)
        if name is None:
            return False
        origin = self.assigned_calls.get(name)
        if origin is None:
            if self.names_scaler(name):  # MAE/timm style: `loss_scaler(loss, optimizer, ...)`
                return any(self.is_optimizer_name(n) for n in map(target_name, call.args) if n)
            return self.imports.imports_root("mindspore") and self.is_optimizer_name(name) and bool(call.args)
        return origin in catalogue.MINDSPORE_TRAIN_STEP_CELLS or (
            origin.startswith("mindspore.") and catalogue.is_optimizer_class(origin))

    def names_scaler(self, name: str) -> bool:
        """Whether a called name is a loss scaler handed in, which steps the optimizer it is given (MAE's and timm's
        NativeScaler: `loss_scaler(loss, optimizer, ...)`): not a function of this file (open_clip's
        `_make_train_step_no_accum_no_scaler(task, optimizer, ...)` only builds a step)."""
        if "scaler" not in name.lower():
            return False
        if self._def_names is None:
            self._def_names = {node.name for node in ast.walk(self.tree) if isinstance(node, FUNCTION_TYPES)}
        return name not in self._def_names

    def is_deepspeed_engine(self, name: str) -> bool:
        """A DeepSpeed engine: the first result of `deepspeed.initialize(...)`, or a name with "engine" in it in a
        file that imports deepspeed (`model_engine.step()` steps the engine's optimizer)."""
        if not self.imports.imports_root("deepspeed"):
            return False  # no engine without deepspeed; and no walk of the file for every `scheduler.step()`
        if self._deepspeed_engines is None:  # the whole file's: a training function may come before main()
            self._deepspeed_engines = {
                target_name(node.targets[0].elts[0]) for node in ast.walk(self.tree)
                if isinstance(node, ast.Assign) and isinstance(node.targets[0], (ast.Tuple, ast.List))
                and node.targets[0].elts and isinstance(node.value, ast.Call)
                and self.call_qualname(node.value) in catalogue.DEEPSPEED_INITIALIZE}
        return name in self._deepspeed_engines or "engine" in name.lower()

    def is_optimizer_name(self, name: str) -> bool:
        origin = self.assigned_calls.get(name)
        return origin is not None and catalogue.is_optimizer_class(origin) or optimizer_like(name)

    # --- where are we ------------------------------------------------------------------------
    def current_function(self) -> str | None:
        """Name of the innermost enclosing def, if any."""
        found = self.current_def()
        return found.name if found is not None else None

    def current_def(self) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
        """The innermost enclosing def, if any."""
        for node in reversed(self._frames):
            if isinstance(node, FUNCTION_TYPES):
                return node
        return None

    def is_custom_backward(self, function: ast.AST, owner: ast.AST | None) -> bool:
        """Whether `function`, defined directly in `owner`, is the `backward` of a torch.autograd.Function
        subclass or a MindSpore Cell's custom `bprop`."""
        if not isinstance(owner, ast.ClassDef):
            return False
        if function.name == "bprop":
            return self.imports.imports_root("mindspore")
        return function.name == "backward" and self._autograd_method(function, owner)

    def in_autograd_function(self) -> bool:
        """Whether the innermost enclosing def is the `forward` or `backward` of a torch.autograd.Function
        subclass: gradients taken there (icefall's activations and whitening penalty) belong to an operator."""
        frames = self._frames
        for index in range(len(frames) - 1, -1, -1):
            if isinstance(frames[index], FUNCTION_TYPES):
                owner = frames[index - 1] if index else None
                return isinstance(owner, ast.ClassDef) and self._autograd_method(frames[index], owner)
        return False

    def _autograd_method(self, function: ast.AST, owner: ast.ClassDef) -> bool:
        if any(self.qualname(base) in catalogue.AUTOGRAD_FUNCTION_BASES for base in owner.bases):
            return True
        args = function.args.posonlyargs + function.args.args  # unresolved base: `@staticmethod def backward(ctx, ...)`
        static = any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in function.decorator_list)
        return static and bool(args) and args[0].arg == "ctx"

    def current_loop(self) -> ast.AST | None:
        """Innermost enclosing loop within the current function (loops do not cross a def)."""
        frames = self._frames
        return frames[-1] if frames and isinstance(frames[-1], LOOP_TYPES) else None

    def enclosing_loops(self) -> list[ast.AST]:
        """All loops around the current node within the current function, innermost first."""
        loops = []
        for node in reversed(self._frames):
            if not isinstance(node, LOOP_TYPES):
                break
            loops.append(node)
        return loops

    def site(self, node: ast.AST) -> Site:
        """Snapshot `node` with its evaluation-path verdict, for findings reported later."""
        return Site(node, self.on_eval_path(node), switch_guard(node, self.ancestors))

    def on_eval_path(self, node: ast.AST) -> bool:
        """Whether `node` sits in evaluation-only code (file, function, class, variable or `train=False`)."""
        if self.eval_file:
            return True
        for ancestor in self.ancestors:
            if isinstance(ancestor, FUNCTION_TYPES) and EVAL_NAME.search(ancestor.name):
                return True
            if isinstance(ancestor, ast.ClassDef) and EVAL_NAME.search(CAMEL_BREAK.sub("_", ancestor.name)):
                return True  # mmdet's `class InferenceBenchmark`
        for candidate in (node, *self.ancestors[-3:], self._chain_statement()):
            if isinstance(candidate, ast.Call) and has_false_keyword(candidate, "train"):
                return True
            if isinstance(candidate, (ast.Assign, ast.AnnAssign)):
                targets = candidate.targets if isinstance(candidate, ast.Assign) else [candidate.target]
                names = [target_name(target) or "" for target in targets]
                if any(EVAL_NAME.search(name) and not VALID_ADJECTIVE.search(name) for name in names):
                    return True
        return False

    def _chain_statement(self) -> ast.AST | None:
        """The statement whose value is the method chain the current node is in (`test_dataset =
        CelebADataset(...).map(...).batch(12)`, MindSpore-GAN's context_encoder.py), else None."""
        for ancestor in reversed(self.ancestors):
            if isinstance(ancestor, ast.stmt):
                return ancestor
            if not isinstance(ancestor, (ast.Call, ast.Attribute)):
                return None
        return None

    # --- questions answered after the traversal ---------------------------------------------
    def stepping_functions(self) -> set[str]:
        """Local function names that perform a training step, directly or through local calls."""
        if self._stepping_functions is None:
            self._stepping_functions = self.functions_calling({name for name, info in self.functions.items()
                                                               if info.steps})
        return self._stepping_functions

    def functions_calling(self, names: set[str]) -> set[str]:
        """`names` and the local functions that call one of them by name, directly or through each other."""
        found = set(names)
        changed = True
        while changed:
            changed = False
            for name, info in self.functions.items():
                if name not in found and info.called & found:
                    found.add(name)
                    changed = True
        return found

    def is_step_loop(self, loop: ast.AST) -> bool:
        """Whether one iteration of `loop` runs a training step at its own level (after traversal)."""
        info = self.loops.get(id(loop))
        if info is None:
            return False
        return info.steps or bool(info.called & self.stepping_functions())

    def is_entry_script(self) -> bool:
        """A `__main__` guard, or a module-level training loop / `Model.train` call / library trainer run
        (`trainer.train()`, `trainer.fit(model)`) / call of a file function that trains (a tutorial's
        `model = train_model(model, optimizer, num_epochs=25)`), or module-level code building or calling the
        project's training code (`seeding.trains_at_module_level`) (after traversal)."""
        if self.has_main_guard or self.module_level_steps or self.module_level_trainer_run:
            return True
        if self.module_level_calls & self.stepping_functions():
            return True
        if any(info.function is None and self.is_step_loop(info.node) for info in self.loops.values()):
            return True
        if self._trains_at_module_level is None:
            from msprobe_rewriter import seeding  # built on this module

            self._trains_at_module_level = seeding.trains_at_module_level(self)
        return self._trains_at_module_level

    def line_text(self, lineno: int) -> str:
        """The source line `lineno` (1-based), or '' past the end."""
        return self.lines[lineno - 1] if 0 < lineno <= len(self.lines) else ""


def _unless_npu_tested(tree: ast.AST) -> Iterator[ast.AST]:
    """The nodes of `tree`, but not those under an `if` whose test names an NPU (`is_torch_npu_available()`)."""
    todo = [tree]
    while todo:
        node = todo.pop()
        yield node
        if isinstance(node, ast.If) and "npu" in ast.unparse(node.test).lower():
            todo.extend(node.orelse)
            continue
        todo.extend(ast.iter_child_nodes(node))


def target_name(node: ast.AST) -> str | None:
    """`x` for `x`, `optimizer` for `self.optimizer`; None for anything else."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def keyword(call: ast.Call, name: str) -> ast.expr | None:
    """The value passed to `call` as keyword `name`, if any."""
    for kw in call.keywords:
        if kw.arg == name:
            return kw.value
    return None


def own_nodes(node: ast.AST) -> Iterator[ast.AST]:
    """The nodes under `node`, not inside the functions defined in it (nor those functions themselves)."""
    stack = list(ast.iter_child_nodes(node))
    while stack:
        child = stack.pop()
        if not isinstance(child, FUNCTION_TYPES):
            yield child
            stack.extend(ast.iter_child_nodes(child))


def draws_globally(call: ast.Call, qualified: str | None) -> bool:
    """Whether `call` (named `qualified`, see FileContext.draw_qualname) draws from a process-global generator:
    Python's `random`, NumPy's legacy functions, torch's (its in-place fills too) without a `generator=` of its own."""
    generator = keyword(call, "generator")
    return qualified in catalogue.GLOBAL_RANDOM_DRAWS and (generator is None or constant(generator) is None)


def parameter_defaults(function: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> dict[str, ast.expr]:
    """The default of each parameter of `function` that has one: `{"seed": <0>}` for `def f(x, seed=0)`."""
    args = function.args
    positional = [*args.posonlyargs, *args.args]
    defaults = {arg.arg: default for arg, default in zip(positional[len(positional) - len(args.defaults):],
                                                          args.defaults, strict=True)}
    defaults.update((arg.arg, default) for arg, default in zip(args.kwonlyargs, args.kw_defaults, strict=True)
                    if default is not None)
    return defaults


def argument(call: ast.Call, position: int | None, name: str) -> ast.expr | None:
    """An argument given by keyword `name` or at `position` (no starred arguments before it; None: keyword only)."""
    value = keyword(call, name)
    if value is not None or position is None:
        return value
    args = call.args[: position + 1]
    if len(call.args) > position and not any(isinstance(a, ast.Starred) for a in args):
        return call.args[position]
    return None


def unpacks(call: ast.Call) -> bool:
    """Whether `call` passes `*args` or `**kwargs`, which may hold any argument."""
    return any(isinstance(arg, ast.Starred) for arg in call.args) or any(kw.arg is None for kw in call.keywords)


def constant(node: ast.AST | None) -> object:
    """The literal value of a Constant (also negative numbers), else the `NOT_CONSTANT` sentinel."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant):
        value = node.operand.value
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return -value
    return NOT_CONSTANT


def has_false_keyword(call: ast.Call, name: str) -> bool:
    """Whether `call` passes `name=False` literally."""
    return constant(keyword(call, name)) is False


def iter_calls(node: ast.AST) -> Iterator[ast.Call]:
    """Every call under `node`, without descending into nested scopes."""
    todo = [node]
    while todo:
        current = todo.pop()
        if isinstance(current, ast.Call):
            yield current
        for child in ast.iter_child_nodes(current):
            if not isinstance(child, SCOPE_TYPES):
                todo.append(child)


class _NotConstant:
    def __repr__(self) -> str:
        return "NOT_CONSTANT"


NOT_CONSTANT = _NotConstant()


MAX_GUARDED = 3  # simple statements a flag's branch may hold and still be the hazard's own switch


def switch_guard(node: ast.AST, ancestors: list[ast.AST]) -> tuple[ast.expr, bool] | None:
    """The guard (test, truth it needs) of the branch that holds just `node`'s hazard: the conditional
    expression it is a branch of, the operands before it in an `and`, or the `if` whose branch holds its
    statement among at most `MAX_GUARDED` simple statements (not a block that runs a whole mode, `if
    args.do_train:`), or any branch a constant test never runs (segment-anything's `if False:  # show image and
    mask for debug`); see opt_in."""
    path = _path_to(node, ancestors)
    for parent, child in zip(reversed(path[:-1]), reversed(path[1:]), strict=True):
        if isinstance(parent, ast.IfExp) and child is not parent.test:
            return parent.test, child is parent.body
        if isinstance(parent, ast.BoolOp) and isinstance(parent.op, ast.And) and child is not parent.values[0]:
            before = parent.values[:parent.values.index(child)]  # `args.random_flip and random.random() < 0.5`
            test = before[0] if len(before) == 1 else ast.copy_location(ast.BoolOp(ast.And(), before), before[0])
            return test, True
        if isinstance(child, ast.stmt):
            if not isinstance(parent, ast.If):
                return None
            branch, wanted = (parent.body, True) if child in parent.body else (parent.orelse, False)
            simple = all(isinstance(s, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr, ast.Return))
                         for s in branch)
            value = constant(parent.test)  # `if False:` (a debug block left off) holds anything
            dead = value is not NOT_CONSTANT and bool(value) is not wanted
            return (parent.test, wanted) if simple and len(branch) <= MAX_GUARDED or dead else None
    return None


def _path_to(node: ast.AST, ancestors: list[ast.AST]) -> list[ast.AST]:
    """`ancestors` down to `node`: a rule may report a part of the node it visits (an assignment's target),
    whose own ancestors below the visited node `ancestors` does not hold."""
    path = list(ancestors)
    current = path[-1] if path else None
    while current is not None and current is not node:
        current = next((child for child in ast.iter_child_nodes(current)
                        if child is node or _spans(child, node)), None)
        if current is not None:
            path.append(current)
    if not path or path[-1] is not node:
        path.append(node)
    return path


def _spans(outer: ast.AST, inner: ast.AST) -> bool:
    if not hasattr(outer, "lineno") or not hasattr(inner, "lineno"):
        return False
    start, end = (outer.lineno, outer.col_offset), (outer.end_lineno, outer.end_col_offset)
    return start <= (inner.lineno, inner.col_offset) and (inner.end_lineno, inner.end_col_offset) <= end

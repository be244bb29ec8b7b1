"""Which models and optimizers a training loop trains, found from the optimizers its step calls apply.

The model handed to `debugger.start(model=...)` is the one whose parameters the optimizer updates (also through
a helper returning a model's parameter groups, `AdamW(get_params_groups(student))`); when
the loop steps several optimizers of different models (a GAN's generator and discriminator, an actor and
its critic), all of them, as a list (msprobe names their records `Module.0.`, `Module.1.`, ...). What MindSpore's
gradient probe monitors is the optimizer stepped (a list when there are several).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable

from msprobe_rewriter import catalogue, project
from msprobe_rewriter.context import FUNCTION_TYPES, STEP_METHODS, FileContext, target_name, walk_scope
from msprobe_rewriter.instrument.scopes import (
    Function,
    argument,
    bound_names,
    is_name_chain,
    root_name,
    source_text,
)

PARAMETER_METHODS = frozenset({"parameters", "named_parameters", "trainable_params", "get_parameters"})
CONFIGURE_OPTIMIZERS = "configure_optimizers"  # a Lightning-style model method that returns its optimizer
MODEL_NAMES = ("model", "net", "network", "module", "classifier")
# methods only networks have: a name they are called on holds one
MODULE_METHODS = PARAMETER_METHODS | frozenset({"state_dict", "load_state_dict", "train", "eval", "modules",
                                                "named_modules", "children", "requires_grad_", "zero_grad",
                                                "cuda", "to", "set_train", "apply"})
MOVES = frozenset({"cuda", "to"})  # `net = Net().to(device)`
PARALLEL_WRAPPERS = frozenset({"DistributedDataParallel", "DataParallel", "FullyShardedDataParallel",
                               "convert_sync_batchnorm"})
NETWORK_MODULES = ("torch.nn.", "mindspore.nn.", "torchvision.models.", "timm.models.")
NOT_MODEL_OWNER = re.compile(r"(?i)(trainer|engine|runner|state|args|config|cfg|opt|accelerator|strategy)s?$")
COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
HAND_UPDATES = frozenset({"add_", "sub_", "copy_"})  # in-place updates that apply a gradient written out by hand


def updated_by_hand(node: ast.AST) -> ast.expr | None:
    """The tensor `node` updates from its gradient without an optimizer (plain SGD written out: `w -= lr * w.grad`,
    `p.data.add_(-lr * p.grad)`, `p.sub_(lr * p.grad)`, `p.data = p.data - lr * p.grad`, `p.copy_(p - lr * p.grad)`),
    else None. Only a descent counts (a `-`): `x = x + eps * x.grad.sign()` is an adversarial input, and
    `norm += p.grad.norm()` a statistic."""
    if isinstance(node, ast.AugAssign):
        target, value = node.target, node.value
        descends = isinstance(node.op, ast.Sub)
    elif isinstance(node, ast.Assign) and len(node.targets) == 1:
        target, value = node.targets[0], node.value
        descends = isinstance(value, ast.BinOp) and isinstance(value.op, ast.Sub)
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in HAND_UPDATES:
        target, value = node.func.value, node
        arguments = [*node.args, *(k.value for k in node.keywords)]
        descends = node.func.attr != "add_" or any(isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.USub)
                                                   for arg in arguments for n in ast.walk(arg))
        value = ast.Tuple(elts=arguments, ctx=ast.Load())
    else:
        return None
    if not descends or _reads_gradient(target) or not _reads_gradient(value):
        return None
    return target if isinstance(target, (ast.Name, ast.Attribute)) else None


def _held_by_model(optimizer: ast.expr) -> bool:
    """`policy.optimizer`, `self.policy.optimizer`: an optimizer kept on an object that is not the script's own
    (`self`), a trainer or a configuration, as stable-baselines3's policies keep theirs."""
    if not (isinstance(optimizer, ast.Attribute) and is_name_chain(optimizer.value)):
        return False
    owner = optimizer.value
    name = owner.attr if isinstance(owner, ast.Attribute) else owner.id
    return name != "self" and NOT_MODEL_OWNER.search(name) is None


def _reads_gradient(node: ast.expr) -> bool:
    return any(isinstance(n, ast.Attribute) and n.attr == "grad" for n in ast.walk(node))


class TrainedModels:
    """The models and optimizers of step calls (`optimizer.step()`, a train-step cell's call) of one file."""

    def __init__(self, ctx: FileContext, assignments: dict[str, ast.expr], values: dict[str, list[ast.expr]],
                 parents: dict[ast.AST, ast.AST], functions: dict[str, ast.AST], cell_steps: list[ast.Call],
                 held_steps: Callable[[ast.Call], list[ast.Call]],
                 object_steps: dict[ast.Call, tuple[str, ...]]) -> None:
        """`assignments`: each simple target name's last assigned value (`x`, `self.x` -> x); `values`: all of
        them; `parents`: child ->
        parent; `functions`: by name; `cell_steps`: the calls of the project's own train-step cells;
        `held_steps`: the train-step cells among a cell construction's arguments; `object_steps`: the calls of
        stepping methods of the project's objects (`trainer.train_step(sample)`), each with the object's
        attributes that hold the networks its class trains (`network_attributes`)."""
        self.ctx = ctx
        self.assignments = assignments
        self.values = values
        self.parents = parents
        self.functions = functions
        self.cell_callees = {id(call.func) for call in cell_steps}
        self.network_attributes = {id(call.func.value): attributes for call, attributes in object_steps.items()}
        self.stepping_objects = {source_text(ctx.source, call.func.value) for call in object_steps}
        self.held_steps = held_steps
        self.module_names = bound_names(ctx.tree)

    def models(self, steps: list[ast.AST], function: Function) -> tuple[str, ...]:
        """The models whose parameters the optimizers applied by `steps` update (or a step updates by hand: see
        `updated_by_hand`), the first step's first, as source valid inside `function`; when none is found, a
        model by its usual name (`model`, `net`, ...) if there is one and no step is its method."""
        models = tuple(dict.fromkeys(model for step in steps for model in (
            self._pipeline_model(step) or self._updated_models(self._optimizer(step), function)
            if updated_by_hand(step) is None else self._hand_updated_models(step, function))))
        models = tuple(model for model in models if not any(self._wraps(other, model) for other in models))
        if len(models) > 1:
            owner = _common_owner(models)  # `model.backbone` and `model.head`: `model`, one hook set for both
            return (owner,) if owner and owner not in self.stepping_objects else models  # `trainer` is no model
        if models:
            return models
        handed = self._handed_networks(steps, function)
        if handed:
            return handed
        fallback = self._usual_model(function)  # not a project object whose method steps: BasicSR's `model` is no module
        return (fallback,) if fallback is not None and fallback not in self.stepping_objects else ()

    def _pipeline_model(self, step: ast.AST) -> list[str]:
        """The model a torchrec train pipeline's `pipeline.progress(...)` trains: the one it keeps, `pipeline._model`."""
        if isinstance(step, ast.Call) and isinstance(step.func, ast.Attribute) and self.ctx.is_library_train_step(step):
            return [f"{source_text(self.ctx.source, step.func.value)}._model"]
        return []

    def _handed_networks(self, steps: list[ast.AST], function: Function) -> tuple[str, ...]:
        """The networks handed beside the optimizer to a helper that steps it, the arguments the file calls as a
        module (OpenRLHF's `strategy.optimizer_step(self.actor_optim, self.actor, ...)` and `self.actor(...)`),
        valid inside `function`."""
        called = {source_text(self.ctx.source, node.func) for node in ast.walk(self.ctx.tree)
                  if isinstance(node, ast.Call) and is_name_chain(node.func)}
        handed = (arg for step in steps if isinstance(step, ast.Call) and isinstance(step.func, ast.Attribute)
                  and step.func.attr in STEP_METHODS for arg in step.args)
        return tuple(dict.fromkeys(text for arg in handed if is_name_chain(arg)
                                   and not self.ctx.is_optimizer_name(target_name(arg) or "")
                                   and (text := source_text(self.ctx.source, arg)) in called
                                   and self._visible(root_name(arg), function)))

    def optimizers(self, steps: list[ast.AST]) -> str | None:
        """What the optimizers applied by `steps` are called, the first step's first: one, or a list of several (a
        MindSpore GAN's two train-step cells: the probe's `monitor` takes both)."""
        found = (self._step_optimizer(self._optimizer(step)) for step in steps if updated_by_hand(step) is None)
        texts = (source_text(self.ctx.source, node) for node in found if node is not None)
        names = list(dict.fromkeys(text for text in texts if text))
        return (f"[{', '.join(names)}]" if len(names) > 1 else names[0]) if names else None

    def _optimizer(self, call: ast.Call) -> ast.expr | None:
        """The optimizer expression a step call applies (a project object whose method steps: the object)."""
        func = call.func
        if isinstance(func, ast.Attribute) and id(func.value) in self.network_attributes:
            return func.value
        if isinstance(func, ast.Attribute) and func.attr in STEP_METHODS:
            owner = target_name(func.value) or ""
            if "scaler" in owner.lower() and call.args:
                return call.args[0]
            handed = next((arg for arg in call.args if self.ctx.is_optimizer_name(target_name(arg) or "")), None)
            if ((func.attr == "step" or self.ctx.is_deepspeed_engine(owner))
                    and (handed is None or self.ctx.is_optimizer_name(owner))):
                return func.value
            return handed  # `mp_trainer.optimize(self.opt)`: the optimizer handed to the helper
        if "scaler" in (target_name(func) or "").lower() and len(call.args) > 1:
            return call.args[1]  # timm's NativeScaler: `loss_scaler(loss, optimizer, ...)`
        if id(func) not in self.cell_callees:  # a project helper that steps: the optimizer handed to it, if any
            return next((arg for arg in call.args if self.ctx.is_optimizer_name(target_name(arg) or "")), func)
        return func

    def _updated_models(self, optimizer: ast.expr | None, function: Function) -> list[str]:
        """Source of the models whose parameters the optimizer updates (`itertools.chain(a.parameters(),
        b.parameters())`: both), those valid inside the loop."""
        candidates: list[ast.expr] = []
        if self.ctx.is_deepspeed_engine(target_name(optimizer) or ""):
            candidates.append(optimizer)  # the engine steps its own model
        value = self.assignments.get(target_name(optimizer) or "") if optimizer is not None else None
        if isinstance(value, ast.Call):
            origin = self.ctx.call_qualname(value)
            if origin in catalogue.MINDSPORE_TRAIN_STEP_CELLS or id(optimizer) in self.cell_callees:
                candidates.extend(self._cell_networks(value, function))
            elif id(optimizer) in self.network_attributes:
                candidates.extend(self._object_networks(value, function))
            else:
                candidates.extend(self._parameter_owners(value))
                if (origin is None and isinstance(value.func, ast.Attribute)
                        and value.func.attr == CONFIGURE_OPTIMIZERS):
                    candidates.append(value.func.value)  # model.configure_optimizers(...)
                elif not candidates:  # `self._optimizer = self._setup_optimizer(cfg)`: what the helper builds
                    candidates.extend(owner for built in self._returned_calls(value)
                                      for owner in self._parameter_owners(built))
        if not candidates and optimizer is not None and _held_by_model(optimizer):
            candidates.append(optimizer.value)  # SB3's `self.policy.optimizer.step()`: the policy holds it
        kept = self._self_attributes(function)  # `self.net = net`: the loop reads the model as `self.net`
        by_name = {name: f"self.{attribute}" for attribute, name in kept.items() if name is not None}
        sources = (source_text(self.ctx.source, c) for c in candidates if is_name_chain(c))
        texts = [by_name.get(text, text) for text in sources]
        visible = [text for text in texts if text and self._visible(text.split(".", 1)[0], function)]
        if not visible and id(optimizer) in self.network_attributes and is_name_chain(optimizer):
            owner = source_text(self.ctx.source, optimizer)  # `trainer.model`: the networks the object keeps
            if self._visible(owner.split(".", 1)[0], function):
                visible = [f"{owner}.{attribute}" for attribute in self.network_attributes[id(optimizer)]]
        return visible

    def _returned_calls(self, call: ast.Call) -> list[ast.Call]:
        """The calls a function or method of the file returns (directly, or through the names it returns):
        torchtune's `_setup_optimizer` returns the optimizer it builds."""
        func = call.func
        name = (func.attr if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)
                and func.value.id == "self" else func.id if isinstance(func, ast.Name) else None)
        definition = self.functions.get(name) if name is not None else None
        if not isinstance(definition, FUNCTION_TYPES):
            return []
        nodes = list(walk_scope(definition))
        returned = [node.value for node in nodes if isinstance(node, ast.Return) and node.value is not None]
        names = {value.id for value in returned if isinstance(value, ast.Name)}
        assigned = [node.value for node in nodes if isinstance(node, ast.Assign)
                    and any(isinstance(target, ast.Name) and target.id in names for target in node.targets)]
        return [value for value in (*returned, *assigned) if isinstance(value, ast.Call)]

    def _hand_updated_models(self, update: ast.AST, function: Function) -> list[str]:
        """`fc` for an update by hand of `param` in `for param in fc.parameters():` (also `named_parameters`), where
        `fc` can be read inside `function`."""
        target = updated_by_hand(update)
        root = root_name(target) if target is not None else None
        node = self.parents.get(update)
        while root is not None and node is not None and not isinstance(node, (*FUNCTION_TYPES, ast.ClassDef)):
            if isinstance(node, ast.For) and root in {n.id for n in ast.walk(node.target) if isinstance(n, ast.Name)}:
                call = node.iter
                if (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
                        and call.func.attr in PARAMETER_METHODS and is_name_chain(call.func.value)):
                    owner = source_text(self.ctx.source, call.func.value)
                    return [owner] if self._visible(owner.split(".", 1)[0], function) else []
                return []
            node = self.parents.get(node)
        return []

    def _cell_networks(self, cell: ast.Call, function: Function, seen: frozenset[int] = frozenset()) -> list[ast.expr]:
        """The networks a train-step cell's optimizer updates. MindSpore's: the owners of the parameters its
        optimizer is built from (`nn.Adam(net.trainable_params())`: `net`) where they can be read in `function`,
        else the network it wraps (`TrainOneStepCell(WithLossCell(net, loss), opt)`: `net`); a cell built around
        train-step cells: theirs; a project's own: what the optimizers among its arguments update, else the cells
        among its arguments (a GAN's take both networks), names, not optimizers, not given a plain value."""
        if self.ctx.call_qualname(cell) in catalogue.MINDSPORE_TRAIN_STEP_CELLS:
            owners = self._optimizer_owners([argument(cell, 1, "optimizer")], function)
            return owners or ([_innermost_network(cell.args[0])] if cell.args else [])
        if self.ctx.call_qualname(cell) in catalogue.MINDSPORE_DATA_SINK:  # `data_sink(train_step, dataset)`
            return self._sunk_networks(cell, function, seen)
        held = [step for step in self.held_steps(cell) if id(step) not in seen]  # a name rebound holds itself
        if held:
            return [network for step in held for network in self._cell_networks(step, function, seen | {id(cell)})]
        owners = self._given_optimizers_owners(cell, function)
        if owners:  # `Trainer(net, loss, opt)`, `TrainOneStepCell(..., optimizerd=d_opt, optimizerg=g_opt)`
            return owners
        networks = [_innermost_network(arg) for arg in cell.args]
        return [node for node in networks if isinstance(node, ast.Name)
                and isinstance(self.assignments.get(node.id, cell), ast.Call) and not self.ctx.is_optimizer_name(node.id)]

    def _sunk_networks(self, sink: ast.Call, function: Function, seen: frozenset[int]) -> list[ast.expr]:
        """The networks the function a `mindspore.data_sink(fn, ...)` sinks trains: a train-step cell's, or those
        the optimizers a function of the file applies update."""
        held = [step for step in self.held_steps(sink) if id(step) not in seen]
        if held:
            return [network for step in held for network in self._cell_networks(step, function, seen | {id(sink)})]
        fn = argument(sink, 0, "fn")
        definition = self.functions.get(fn.id) if isinstance(fn, ast.Name) else None
        if not isinstance(definition, FUNCTION_TYPES):
            return []
        return self._optimizer_owners([self._optimizer(node) for node in walk_scope(definition)
                                       if isinstance(node, ast.Call) and self.ctx.is_optimizer_step(node)], function)

    def _object_networks(self, construction: ast.Call, function: Function) -> list[ast.expr]:
        """The networks a project object whose method steps was built with: what the optimizers among its
        arguments update, else its arguments that hold a network (fairseq's `Trainer(cfg, task, model,
        criterion)`: `model`)."""
        owners = self._given_optimizers_owners(construction, function)
        if owners:
            return owners
        return [arg for arg in [*construction.args, *(k.value for k in construction.keywords)]
                if isinstance(arg, ast.Name) and not self.ctx.is_optimizer_name(arg.id)
                and self._holds_module(arg.id, construction)]

    def _given_optimizers_owners(self, construction: ast.Call, function: Function) -> list[ast.expr]:
        """`_optimizer_owners` of the names among a construction's arguments that name optimizers."""
        arguments = [*construction.args, *(k.value for k in construction.keywords)]
        return self._optimizer_owners([arg for arg in arguments if isinstance(arg, ast.Name)
                                       and self.ctx.is_optimizer_name(arg.id)], function)

    def _optimizer_owners(self, optimizers: list[ast.expr | None], function: Function) -> list[ast.expr]:
        """The owners of the parameters the given optimizers (names or constructions) are built from, those that
        can be read in `function` (or through an attribute of its class: `self.net = net`)."""
        kept = set(self._self_attributes(function).values())
        owners = []
        for optimizer in optimizers:
            value = self.assignments.get(optimizer.id) if isinstance(optimizer, ast.Name) else optimizer
            owners += self._parameter_owners(value) if isinstance(value, ast.Call) else []
        return [node for node in owners if is_name_chain(node)
                and (self._visible(root_name(node), function) or root_name(node) in kept)]

    def _parameter_owners(self, call: ast.Call) -> list[ast.expr]:
        """`m` for each `m.parameters()`-like call among the arguments of an optimizer constructor, also in the
        values of a name it is given, every one (`params = list(unet.parameters())`, then under a flag `params =
        params + list(text_encoder.parameters())`: both), and the model a helper returns the parameter groups
        of (`AdamW(utils.get_params_groups(student))`); for a submodule a method returns
        (`text_encoder.get_input_embeddings().parameters()`), the module it belongs to."""
        owners = []
        for node in self._expanded([*call.args, *(k.value for k in call.keywords)]):
            if not isinstance(node, ast.Call):
                continue
            if isinstance(node.func, ast.Attribute) and node.func.attr in PARAMETER_METHODS:
                owner = node.func.value
                while isinstance(owner, ast.Call) and isinstance(owner.func, ast.Attribute):
                    owner = owner.func.value
                owners.append(owner)
            elif (model := self._grouped_model(node)) is not None:
                owners.append(model)
        outside = (self._outside_comprehension(owner) for owner in owners)
        return [item for owner in outside if owner is not None for item in self._iterated(owner)]

    def _outside_comprehension(self, node: ast.expr) -> ast.expr | None:
        """`node`, or for a name a comprehension around it binds (which is not defined outside it), what that
        comprehension goes over: DLRM's `[p for emb in dlrm.emb_l for p in emb.parameters()]` has `dlrm.emb_l`
        for `emb`; None when that is no name chain."""
        root = root_name(node)
        scope = self.parents.get(node)
        while root is not None and scope is not None and not isinstance(scope, (*FUNCTION_TYPES, ast.ClassDef,
                                                                                 ast.Module)):
            if isinstance(scope, COMPREHENSIONS):
                for generator in scope.generators:
                    if root in {n.id for n in ast.walk(generator.target) if isinstance(n, ast.Name)}:
                        if not isinstance(node, ast.Name) or not is_name_chain(generator.iter):
                            return None
                        return self._outside_comprehension(generator.iter)
            scope = self.parents.get(scope)
        return node

    def _expanded(self, arguments: list[ast.expr]) -> list[ast.AST]:
        """The nodes of `arguments`, and of every value assigned to a name among them (names within followed too)."""
        found, seen, todo = [], set(), list(arguments)
        while todo:
            for node in ast.walk(todo.pop(0)):
                found.append(node)
                if isinstance(node, ast.Name) and node.id not in seen and node.id in self.values:
                    seen.add(node.id)
                    todo.extend(sorted(self.values[node.id], key=lambda value: (value.lineno, value.col_offset)))
        return found

    def _iterated(self, node: ast.expr) -> list[ast.expr]:
        """The items a name takes when a `for` over a literal sequence around `node` binds it (StyleGAN2-ADA builds
        its optimizers in `for name, module, opt_kwargs, reg_interval in [('G', G, ...), ('D', D, ...)]`:
        `module` stands for `G` and `D`), else `node` itself."""
        if not isinstance(node, ast.Name):
            return [node]
        scope = self.parents.get(node)
        while scope is not None and not isinstance(scope, (*FUNCTION_TYPES, ast.ClassDef, ast.Module)):
            if isinstance(scope, ast.For) and isinstance(scope.iter, (ast.List, ast.Tuple)):
                items = _loop_items(scope.target, node.id, scope.iter.elts)
                if items is not None:
                    return items
            scope = self.parents.get(scope)
        return [node]

    def _grouped_model(self, call: ast.Call) -> ast.expr | None:
        """The model whose parameter groups a helper call returns (`get_params_groups(student)`, timm's
        `param_groups_weight_decay(model, wd)`): its first argument, when the helper (defined in this file or
        in a project module) reads that argument's parameters; when the helper cannot be read, when it is named
        for parameters and the argument holds a module where it is called (built by a network class, moved
        to a device, wrapped for data parallelism, or used as one: `.parameters()`, `.train()`, ...)."""
        model = call.args[0] if call.args else None
        name = call.func.attr if isinstance(call.func, ast.Attribute) else getattr(call.func, "id", None)
        if model is None or name is None or not is_name_chain(model) or isinstance(model, ast.Name) and (
                model.id in ("self", "cls")):
            return None
        if isinstance(call.func, ast.Name) and name in self.functions:
            helpers = [self.functions[name]]
        else:
            local = project.local_imports(project.import_statements(self.ctx.tree.body))
            helpers = [module.functions[defined] for _, defined, module in project.reached(
                [call], local, self.functions, project.file_folder(self.ctx.path)) if defined in module.functions]
        if helpers:
            return model if any(_reads_parameters(helper) for helper in helpers) else None
        return model if "param" in name.lower() and self._holds_module(root_name(model), call) else None

    def _holds_module(self, name: str, near: ast.AST) -> bool:
        """Whether `name` holds a network in the scope of `near`: a usual model name, or built by a network class
        or factory, moved (`.cuda()`, `.to(device)`), wrapped for data parallelism, or used as one there."""
        if name in MODEL_NAMES:
            return True
        scope = self.parents.get(near)
        while scope is not None and not isinstance(scope, (*FUNCTION_TYPES, ast.Module)):
            scope = self.parents.get(scope)
        for node in walk_scope(scope if scope is not None else self.ctx.tree):
            if not isinstance(node, ast.Call):
                if (isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)
                        and any(isinstance(t, ast.Name) and t.id == name for t in node.targets)
                        and (_builds_network(self.ctx.call_qualname(node.value))
                             or isinstance(node.value.func, ast.Attribute) and node.value.func.attr in MOVES)):
                    return True
                continue
            func = node.func
            if (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == name
                    and func.attr in MODULE_METHODS):
                return True
            wrapper = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if wrapper in PARALLEL_WRAPPERS and node.args and root_name(node.args[0]) == name:
                return True
        return False

    def _wraps(self, outer: str, inner: str) -> bool:
        """Whether the cell `outer` was built around `inner` (`loss_G = GeneratorLoss(generator, ...)`): one
        hook set on `outer` records `inner`'s calls too."""
        value = self.assignments.get(outer)
        return outer != inner and isinstance(value, ast.Call) and any(
            isinstance(node, ast.Name) and node.id == inner for arg in (*value.args, *(k.value for k in value.keywords))
            for node in ast.walk(arg))

    def _usual_model(self, function: Function) -> str | None:
        """A model by its usual name (`self.net`, `model`, ...), valid inside `function`; else what `function`
        switches to training mode first (open_clip's `task.train()`: a module's `train()` takes at most a flag)."""
        kept = self._self_attributes(function)
        texts = [f"self.{name}" for name in MODEL_NAMES if name in kept] + list(MODEL_NAMES)
        usual = next((text for text in texts if self._visible(text.split(".", 1)[0], function)), None)
        if usual is not None or function is None:
            return usual
        switched = sorted((node.func.value for node in walk_scope(function) if isinstance(node, ast.Call)
                           and isinstance(node.func, ast.Attribute) and node.func.attr == "train" and len(node.args) <= 1
                           and not node.keywords and is_name_chain(node.func.value)),
                          key=lambda node: (node.lineno, node.col_offset))  # the first in the source
        texts = (source_text(self.ctx.source, node) for node in switched)
        return next((text for text in texts if self._visible(text.split(".", 1)[0], function)), None)

    def _self_attributes(self, function: Function) -> dict[str, str | None]:
        """In a method: the attributes its class assigns on `self`, each with the name assigned to it
        (`self.net = net` in `__init__`) or None (`self.net = Net()`); empty elsewhere."""
        arguments = function.args.args if function is not None else []
        owner = self.parents.get(function) if function is not None else None
        if not arguments or arguments[0].arg != "self" or not isinstance(owner, ast.ClassDef):
            return {}
        kept: dict[str, str | None] = {}
        for node in ast.walk(owner):
            if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
                for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                    if (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)
                            and target.value.id == "self" and kept.get(target.attr) is None):
                        kept[target.attr] = node.value.id if isinstance(node.value, ast.Name) else None
        return kept

    def _step_optimizer(self, optimizer: ast.expr | None) -> ast.expr | None:
        """The optimizer itself when `optimizer` names a `TrainOneStepCell` built around one. A project's cell
        (a GAN's wrapper around two train-step cells) stays: the MindSpore probe's `monitor` finds every
        optimizer the cell holds."""
        value = self.assignments.get(target_name(optimizer) or "") if optimizer is not None else None
        if isinstance(value, ast.Call) and self.ctx.call_qualname(value) in catalogue.MINDSPORE_TRAIN_STEP_CELLS:
            return argument(value, 1, "optimizer")
        return optimizer

    def _visible(self, root: str, function: Function) -> bool:
        """Whether the name `root` can be read in `function` (a parameter, a local or a global)."""
        if root in ("self", "cls") and function is not None:
            return any(a.arg == root for a in function.args.args)
        return root in self.module_names or (function is not None and root in bound_names(function))


def _loop_items(target: ast.expr, name: str, elements: list[ast.expr]) -> list[ast.expr] | None:
    """What `name` is bound to in turn by `for target in [elements]`: the elements (`for net in (G, D)`), or their
    items at `name`'s place in an unpacking target (`for label, net in [("G", G), ("D", D)]`); None when the
    target does not bind `name` or an element does not unpack to it."""
    if isinstance(target, ast.Name):
        return list(elements) if target.id == name else None
    if not isinstance(target, (ast.Tuple, ast.List)) or any(isinstance(item, ast.Starred) for item in target.elts):
        return None
    places = [index for index, item in enumerate(target.elts) if isinstance(item, ast.Name) and item.id == name]
    if not places or any(not isinstance(element, (ast.Tuple, ast.List)) or len(element.elts) != len(target.elts)
                         for element in elements):
        return None
    return [element.elts[places[0]] for element in elements]


def _innermost_network(node: ast.expr) -> ast.expr:
    """`net` of `nn.WithLossCell(net, loss_fn)`: the first argument of wrapping cells, followed inwards."""
    while isinstance(node, ast.Call) and node.args:
        node = node.args[0]
    return node


def _common_owner(models: tuple[str, ...]) -> str | None:
    """The attribute chain every one of `models` is or lies under (`model` for `model` and `model.head`), if it
    is more than `self`; else None."""
    chains = [model.split(".") for model in models]
    common = []
    for parts in zip(*chains, strict=False):  # up to the shortest chain
        if len(set(parts)) > 1:
            break
        common.append(parts[0])
    return ".".join(common) if common and common != ["self"] and common != ["cls"] else None


def _reads_parameters(helper: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Whether a helper calls `.parameters()`-like methods on its first parameter (`model.named_parameters()`,
    `model.module.parameters()`)."""
    params = [*helper.args.posonlyargs, *helper.args.args]
    if not params:
        return False
    first = params[0].arg
    return any(isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
               and node.func.attr in PARAMETER_METHODS and root_name(node.func.value) == first
               for node in ast.walk(helper))


def _builds_network(origin: str | None) -> bool:
    """Whether a call of `origin` returns a network: a class of a framework's network modules, or a model zoo's
    factory."""
    return origin is not None and (origin.startswith(NETWORK_MODULES) or origin.rsplit(".", 1)[-1] in (
        "DistributedDataParallel", "DataParallel", "create_model"))


def network_attributes(cls: ast.ClassDef) -> tuple[str, ...]:
    """The attributes of `self` whose parameters the class reads, the networks its optimizers update:
    `self.netG_A.parameters()`, or `model.parameters()` of a name it keeps as `self.model = model`."""
    kept: dict[str, str] = {}  # name -> the attribute of `self` assigned it
    for node in ast.walk(cls):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Name):
            for target in node.targets:
                if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self":
                    kept.setdefault(node.value.id, target.attr)
    found = []
    for node in ast.walk(cls):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in PARAMETER_METHODS:
            owner = node.func.value
            if isinstance(owner, ast.Attribute) and isinstance(owner.value, ast.Name) and owner.value.id == "self":
                found.append(owner.attr)
            elif isinstance(owner, ast.Name) and owner.id in kept:
                found.append(kept[owner.id])
    return tuple(dict.fromkeys(found))

"""Draws no line places on a device, made there because an accelerator is the default device or holds the model.

`torch.set_default_device("cuda")` (or `set_default_tensor_type(torch.cuda.FloatTensor)`) makes every module
built and every tensor drawn without `device=` afterwards live on the accelerator; `with torch.device(d):`
and Lightning Fabric's `with fabric.init_module():` do the same inside their block; `model.to_empty(device=d)`
materialises a model built on the meta device there, so its `init_weights()` (torchtitan) draws there. Each
means that initial weights or noise come from the accelerator's generator. `device_of(expr)` classifies a
device expression as device-rng does: "cpu" (also the meta device) or not.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable

from msprobe_rewriter import catalogue
from msprobe_rewriter.context import (
    FUNCTION_TYPES,
    SCOPE_TYPES,
    FileContext,
    argument,
    constant,
    keyword,
    parameter_defaults,
    walk_scope,
)

CPU = "cpu"
DeviceOf = Callable[[ast.expr], str]
SETTERS = frozenset({"torch.set_default_device"})
TENSOR_TYPE_SETTERS = frozenset({"torch.set_default_tensor_type"})
DEVICE_CONTEXTS = frozenset({"torch.device"})
FABRICS = frozenset({"lightning.Fabric", "lightning.fabric.Fabric"})
# Fabric strategies whose `init_module()` never enters the device (it builds on the CPU, or on the meta device with
# `empty_init=True`): FSDP's and model parallelism's, as classes and by their registered names.
SHARDED_STRATEGIES = frozenset({"FSDPStrategy", "XLAFSDPStrategy", "ModelParallelStrategy"})
SHARDED_STRATEGY_NAMES = frozenset({"fsdp", "fsdp_cpu_offload", "xla_fsdp"})
# Methods that (re)initialise a module's weights in place.
INIT_METHODS = frozenset({"init_weights", "_init_weights", "initialize_weights", "init_parameters",
                          "reset_parameters", "apply"})
TYPING_CAST = frozenset({"typing.cast"})
OVERWRITES = frozenset({"copy_", "zero_", "fill_"})  # in-place writes that replace a weight's values
# Builders that read weights rather than draw them (a checkpoint is loaded over whatever was drawn).
LOADERS = frozenset({"from_pretrained", "load_state_dict", "load"})
MODEL_WORDS = ("model", "net")
LOADER_NAME = re.compile(r"(?i)(^|_)load")  # `load_checkpoint`, `_load_model`; not `get_act_offloading_ctx_manager`
CONFIG_BUILDERS = frozenset({"instantiate"})  # hydra's and torchtune's `config.instantiate(cfg_model)` build from a config


def sets_default(ctx: FileContext, call: ast.Call, qualified: str | None, device_of: DeviceOf) -> bool:
    """`torch.set_default_device(d)` with `d` not the CPU, or `torch.set_default_tensor_type` of a CUDA (or NPU)
    tensor type."""
    if qualified in SETTERS:
        device = argument(call, 0, "device")
        return device is not None and device_of(device) != CPU
    if qualified in TENSOR_TYPE_SETTERS:
        kind = argument(call, 0, "t")
        text = constant(kind) if kind is not None else None
        named = text if isinstance(text, str) else ctx.qualname(kind) if kind is not None else None
        return named in catalogue.TORCH_CUDA_TENSOR_TYPES or isinstance(named, str) and named.startswith("torch.npu.")
    return False


def device_block(ctx: FileContext, block: ast.With | ast.AsyncWith, item: ast.expr, ancestors: list[ast.AST],
                 device_of: DeviceOf, made: ast.Call | None = None) -> bool:
    """Whether `with item:` makes a device that is not the CPU the default one (`torch.device(d)`, a Fabric's
    `init_module()` that initialises weights, or a device object `made` by such a call or a `get_device(...)`
    helper and held in a name: torchtune's `with self._device:`) and its block builds a module or draws in it; a
    block whose models get every weight loaded afterwards (`load_checkpoint(fabric, model, path)`, as
    fine-tuning does) does not count."""
    if not _makes_default(ctx, item, device_of, made):
        return False
    later = [other.context_expr for other in block.items[[i.context_expr for i in block.items].index(item) + 1:]]
    if any(isinstance(other, ast.Call) and ctx.call_qualname(other) in DEVICE_CONTEXTS
           and device_of(argument(other, 0, "type") or other) == CPU for other in later):
        return False  # `with fabric.init_module(), torch.device("meta"):` builds on the meta device
    if not any(_builds_or_draws(ctx, node) for node in walk_scope(block)):
        return False
    built = {target.id for node in walk_scope(block) if isinstance(node, ast.Assign)
             for target in node.targets if isinstance(target, ast.Name)}
    scope = _innermost(ancestors, SCOPE_TYPES) or ctx.tree
    return not any(isinstance(node, ast.Call) and node.lineno > block.end_lineno and _loads_into(node, built)
                   for node in walk_scope(scope))


def _makes_default(ctx: FileContext, item: ast.expr, device_of: DeviceOf, made: ast.Call | None) -> bool:
    """Whether `with item:` makes a device that is not the CPU the default one (see device_block); a Fabric's
    `device` (lit-llama's `with fabric.device:`) is its root device, a `torch.device`."""
    if made is None and isinstance(item, ast.Attribute) and item.attr == "device":
        return _is_fabric(ctx, item.value) and device_of(item) != CPU
    made = made if made is not None else item
    if not isinstance(made, ast.Call):
        return False
    if ctx.call_qualname(made) in DEVICE_CONTEXTS:
        device = argument(made, 0, "type")
        return device is not None and device_of(device) != CPU
    return made is not item or _fabric_init(ctx, item)


def initialised_on_device(call: ast.Call, ancestors: list[ast.AST], device_of: DeviceOf,
                          ctx: FileContext) -> bool:
    """Whether `call` initialises weights (`m.init_weights()`, `cast(Base, m).init_weights()`, `m.apply(fn)`) of a
    model that the same function materialised on a device that is not the CPU before it (`m.to_empty(device=d)`),
    and does not load every weight over afterwards (`m.load_state_dict(sd)`, not `strict=False`)."""
    func = call.func
    if not isinstance(func, ast.Attribute) or func.attr not in INIT_METHODS:
        return False
    model = uncast(ctx, func.value)
    if not isinstance(model, (ast.Name, ast.Attribute)):
        return False
    text = ast.unparse(model)
    scope = _innermost(ancestors, SCOPE_TYPES) or ctx.tree
    if loaded_over_after(model, ancestors):
        return False  # every weight it draws is loaded over right after (nanochat's strict `load_state_dict`)
    for node in walk_scope(scope):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "to_empty"
                and (node.lineno, node.col_offset) < (call.lineno, call.col_offset)
                and ast.unparse(node.func.value) == text):
            device = keyword(node, "device")
            if device is not None and device_of(device) != CPU:
                return True
    return False


def loaded_over_after(model: ast.expr, ancestors: list[ast.AST]) -> bool:
    """Whether the statements after the one at the end of `ancestors` load weights into the model named
    `model` (`model.load_state_dict(sd)`, or a loader given it): what it drew before does not survive."""
    return isinstance(model, ast.Name) and any(isinstance(node, ast.Call) and _loads_into(node, {model.id})
                                               for statement in following(ancestors) for node in ast.walk(statement))


def following(ancestors: list[ast.AST]) -> list[ast.stmt]:
    """The statements after the innermost statement around here, in its own block (straight after it)."""
    for index in range(len(ancestors) - 1, 0, -1):
        statement, parent = ancestors[index], ancestors[index - 1]
        if isinstance(statement, ast.stmt):
            for _, value in ast.iter_fields(parent):
                if isinstance(value, list) and any(item is statement for item in value):
                    return value[[id(item) for item in value].index(id(statement)) + 1:]
            return []
    return []


def weights_replaced(module: ast.Call, ancestors: list[ast.AST]) -> bool:
    """Whether the module built by `module` (assigned to a name or attribute) has its weight overwritten later in
    the same scope (`layer.weight.copy_(w)`, `.zero_()`, `.weight.data = w`, `layer.load_state_dict(sd)`): the
    weights it drew do not survive (diffusers' fused projections, Flux control's widened input layer)."""
    statement = _innermost(ancestors, (ast.Assign, ast.AnnAssign))
    target = statement.targets[0] if isinstance(statement, ast.Assign) else getattr(statement, "target", None)
    if target is None or getattr(statement, "value", None) is not module:
        return False
    held = ast.unparse(target)
    scope = _innermost(ancestors, SCOPE_TYPES) or ancestors[0]
    for node in walk_scope(scope):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.lineno > module.lineno:
            owner = node.func.value
            if isinstance(owner, ast.Attribute) and owner.attr == "data":  # `m.weight.data.copy_(w)`
                owner = owner.value
            if node.func.attr in OVERWRITES and isinstance(owner, ast.Attribute) and owner.attr == "weight" \
                    and ast.unparse(owner.value) == held:
                return True
            if node.func.attr == "load_state_dict" and ast.unparse(owner) == held:
                return True
        if isinstance(node, ast.Assign) and node.lineno > module.lineno and any(
                ast.unparse(t) in (f"{held}.weight", f"{held}.weight.data") for t in node.targets):
            return True
    return False


def cpu_by_default(device: ast.expr, ancestors: list[ast.AST]) -> bool:
    """Whether `device` is a parameter of the enclosing function that defaults to None or "cpu" (timm's
    `device=None`, the minGPT DDP example's `device="cpu"` factory arguments): the CPU unless a caller passes a
    device."""
    function = _innermost(ancestors, FUNCTION_TYPES)
    if not isinstance(device, ast.Name) or function is None:
        return False
    default = parameter_defaults(function).get(device.id)
    assigned = any(isinstance(node, ast.Name) and node.id == device.id and isinstance(node.ctx, ast.Store)
                   for node in walk_scope(function))
    return isinstance(default, ast.Constant) and default.value in (None, CPU) and not assigned


def _loads_into(call: ast.Call, built: set[str]) -> bool:
    """Whether `call` loads every weight of one of the `built` models: `model.load_state_dict(sd)` or a loader
    given the model (`load_checkpoint(fabric, model, path)`, `load_checkpoint(fabric, state["model"], path)`), not
    with `strict=False`."""
    if constant(keyword(call, "strict")) is False:
        return False
    func = call.func
    if isinstance(func, ast.Attribute) and func.attr == "load_state_dict":
        return isinstance(func.value, ast.Name) and func.value.id in built
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    given = [*call.args, *(k.value for k in call.keywords)]
    return LOADER_NAME.search(name) is not None and any(_names_built(arg, built) for arg in given)


def _names_built(node: ast.expr, built: set[str]) -> bool:
    """`model`, or `state["model"]` (litgpt hands its loader the model kept in its training state)."""
    if isinstance(node, ast.Name):
        return node.id in built
    return isinstance(node, ast.Subscript) and constant(node.slice) in built


def _fabric_init(ctx: FileContext, call: ast.Call) -> bool:
    """A Lightning Fabric's `init_module()` that initialises weights on the device (not `empty_init=True`, nor with
    only strategies that keep it off the device, see fabric_strategies)."""
    func = call.func
    if not (isinstance(func, ast.Attribute) and func.attr == "init_module" and _is_fabric(ctx, func.value)):
        return False
    return constant(keyword(call, "empty_init")) is not True and fabric_strategies(ctx) != {True}


def _is_fabric(ctx: FileContext, node: ast.expr) -> bool:
    """A name assigned a `Fabric(...)`, or called `fabric` in a file that imports lightning."""
    if not isinstance(node, ast.Name):
        return False
    return ctx.assigned_calls.get(node.id) in FABRICS or node.id == "fabric" and any(
        ctx.imports.imports_root(root) for root in ("lightning", "lightning_fabric"))


def fabric_strategies(ctx: FileContext) -> set[bool]:
    """For each strategy the file's `Fabric(...)` calls may get (a name followed to what its scope assigns it,
    TinyLlama's `FSDPStrategy(...)` or `"auto"` by device count), whether its `init_module()` stays off the device
    (Lightning's FSDP and model-parallel strategies never enter the root device); empty when no Fabric is made here."""
    found: set[bool] = set()
    for scope in (ctx.tree, *(node for node in ast.walk(ctx.tree) if isinstance(node, FUNCTION_TYPES))):
        for call in walk_scope(scope):
            if isinstance(call, ast.Call) and ctx.call_qualname(call) in FABRICS:
                strategy = keyword(call, "strategy")
                values = [strategy] if not isinstance(strategy, ast.Name) else [
                    node.value for node in walk_scope(scope) if isinstance(node, ast.Assign)
                    and any(isinstance(t, ast.Name) and t.id == strategy.id for t in node.targets)]
                found.update(flag for value in values for flag in _sharded(ctx, value))
    return found


def _sharded(ctx: FileContext, strategy: ast.expr | None) -> set[bool]:
    """Whether a strategy (each branch of `a if c else b`) keeps `init_module()` off the device: `FSDPStrategy(...)`,
    `strategy="fsdp"`."""
    if isinstance(strategy, ast.IfExp):
        return _sharded(ctx, strategy.body) | _sharded(ctx, strategy.orelse)
    return {_sharded_one(ctx, strategy)}


def _sharded_one(ctx: FileContext, strategy: ast.expr | None) -> bool:
    if isinstance(strategy, ast.Call):
        return (ctx.callee_name(strategy) or "") in SHARDED_STRATEGIES
    return constant(strategy) in SHARDED_STRATEGY_NAMES


def _builds_or_draws(ctx: FileContext, node: ast.AST) -> bool:
    """A call that draws without `device=` or builds a module: a class of torch.nn, a class of the project
    (`GPT(config)`, `Transformer.from_name(name)`), or a model factory (`build_model(cfg)`)."""
    if not isinstance(node, ast.Call):
        return False
    qualified = ctx.call_qualname(node)
    if qualified in catalogue.TORCH_DEVICE_DRAWS or qualified in catalogue.TORCH_INIT_DRAWS:
        return keyword(node, "device") is None
    func = node.func
    if qualified is not None and qualified.startswith("torch."):
        return catalogue.is_torch_module_class(qualified)
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    if name in LOADERS:
        return False
    if isinstance(func, ast.Attribute) and name.startswith("from_"):  # `Transformer.from_name(...)`
        receiver = func.value
        return isinstance(receiver, ast.Name) and receiver.id[:1].isupper()
    return name[:1].isupper() or name in CONFIG_BUILDERS or any(word in name.lower() for word in MODEL_WORDS)


def _innermost(ancestors: list[ast.AST], kinds: type | tuple[type, ...]) -> ast.AST | None:
    """The innermost of `ancestors` of one of `kinds`."""
    return next((node for node in reversed(ancestors) if isinstance(node, kinds)), None)


def uncast(ctx: FileContext, node: ast.expr) -> ast.expr:
    """`m` of `typing.cast(T, m)`; else the node."""
    if isinstance(node, ast.Call) and ctx.imports.resolve_any(node.func) in TYPING_CAST and len(node.args) == 2:
        return node.args[1]
    return node

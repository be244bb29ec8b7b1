"""L1 capture for MindSpore: thin wrappers around `mindspore.ops`, `mindspore.mint`, `mint.nn.functional`,
`Tensor` methods and operators, and the collectives of `communication.comm_func` and `mint.distributed`;
plus, for a given model, the primitives its cells hold (`nn.Dense`'s MatMul, `nn.LayerNorm`'s LayerNorm).

Record names follow msprobe's MindSpore side: `Functional.{op}` (ops), `Mint.{op}`, `MintFunctional.{op}`,
`Tensor.{method}`, `Distributed.{op}` (comm_func), `MintDistributed.{op}`, `Primitive.{attr}.{Class}`.
The wrappers are installed once and stay: outside a capture window, inside a wrapped call (only the
outermost call is recorded) or while MindSpore compiles a graph, a wrapper is one attribute read and a
call through. At level L0 they only tell the session that an in-place call is about to change a tensor.
"""

from __future__ import annotations

import functools
import inspect
import threading

import mindspore as ms
from mindspore import mint, nn, ops
from mindspore.common.api import _pynative_executor
from mindspore.ops.primitive import Primitive

from msprobe_runtime.core.naming import MS_API_PREFIXES, PRIMITIVE_PREFIX
from msprobe_runtime.core.patching import CaptureState, Patches

# how a call may change its arguments in place
MUTATES_NOTHING, MUTATES_FIRST, MUTATES_ALL = 0, 1, 2

# functions that are not computations: autodiff and graph machinery, debugging output, shape queries
_SKIP_MODULES = ("mindspore.ops.primitive", "mindspore.ops.composite.base", "mindspore.ops.op_info_register",
                 "mindspore.ops.operations.control_ops", "mindspore.ops.vm_impl_registry",
                 "mindspore.ops.operations._ms_kernel", "mindspore.ops.function.grad",
                 "mindspore.ops.function.vmap_func", "mindspore.ops.function.debug_func",
                 "mindspore.ops.function.comm_func", "mindspore.graph._utils", "mindspore.graph.api",
                 "mindspore.common._decorator", "mindspore.communication.management")
_SKIP_NAMES = frozenset("""
shape shape_ rank dtype size is_tensor is_floating_point is_complex isconstant typeof get_vm_impl_fn
mixed_precision_cast ref_to_embed move_to reshard depend partial constexpr print_ tensordump
barrier get_cache_group_rank get_cache_group_size
""".split())
_SKIP_PREFIXES = ("scalar_", "is_", "get_")
_TENSOR_SKIP = frozenset("""
asnumpy assign_value assign_value_cpp data_ptr data_sync delete_ dim flush_from_cache get_bytes hooks init_data
item itemset move_to ndimension nelement numel numpy offload offload_file_path pin_memory register_hook
remove_hook requires_grad_ set_ set_cast_dtype set_const_arg set_device_address set_dtype set_init_flag
storage storage_offset stride tolist to_dlpack type untyped_storage value wait_pipeline
""".split())
_TENSOR_OPERATORS = frozenset("""
__add__ __radd__ __iadd__ __sub__ __rsub__ __isub__ __mul__ __rmul__ __imul__ __truediv__ __rtruediv__
__itruediv__ __floordiv__ __rfloordiv__ __ifloordiv__ __mod__ __rmod__ __imod__ __pow__ __rpow__
__matmul__ __rmatmul__ __and__ __or__ __xor__ __neg__ __pos__ __abs__ __invert__ __eq__ __ne__ __lt__
__le__ __gt__ __ge__ __getitem__ __setitem__
""".split())
_IN_PLACE_OPERATORS = frozenset(name for name in _TENSOR_OPERATORS if name.startswith("__i")) | {"__setitem__"}
_QUERIES = frozenset({"Shape", "DType", "Rank", "Size", "TensorShape", "DynamicShape", "IsInstance"})  # primitives
_IN_PLACE_OPS = ("assign", "inplace_", "scatter_", "index_add")  # ops functions writing into a Parameter
_RUNNING_STATS_OPS = frozenset({"batch_norm"})  # functions updating their running_mean/var arguments in place


STATE = CaptureState()
_installed = Patches()
# Only the thread that opened the window records (MindSpore runs hooks on it too): calls of other threads
# (a logger, a checkpoint writer) would land among its records at points that differ from run to run.
_thread_id = threading.get_ident


class ApiSpec:
    """One wrapped API: its record stem (`Functional.dense`) and how it may change its arguments.

    `recorded=False` marks a guard: a call that changes tensors in place (an optimizer step, `set_data`)
    and is not itself recorded; calls made inside it are not recorded either. `skip_self` leaves the
    first argument (a primitive) out of the record. `unfilled` are outputs the kernel leaves unwritten,
    recorded as null."""

    __slots__ = ("stem", "mutation", "recorded", "skip_self", "unfilled")

    def __init__(self, stem: str, mutation: int, recorded: bool = True, skip_self: bool = False,
                 unfilled: tuple[int, ...] = ()):
        self.stem = stem
        self.mutation = mutation
        self.recorded = recorded
        self.skip_self = skip_self
        self.unfilled = unfilled


def _unfilled_outputs(primitive: Primitive) -> tuple[int, ...]:
    """Outputs of `primitive` that its kernel leaves unwritten here: in training, MindSpore's CPU BatchNorm
    updates the moving statistics in place and leaves its outputs 1 and 2 (documented as the batch mean and
    variance; the CPU kernel returns them as outputs 3 and 4) holding whatever memory they were given, so
    two identical runs would record different numbers."""
    if (type(primitive).__name__ == "BatchNorm" and primitive.attrs.get("is_training")
            and ms.get_context("device_target") == "CPU"):
        return (1, 2)
    return ()


def _make_wrapper(original, spec: ApiSpec):
    @functools.wraps(original)
    def wrapper(*args, **kwargs):
        session = STATE.session
        if session is None or STATE.depth or _thread_id() != session.thread:
            return original(*args, **kwargs)
        STATE.depth = 1
        try:
            return session.call_api(original, spec, args, kwargs)
        finally:
            STATE.depth = 0

    return wrapper


def _functions(module, prefix: str, extra_skip_modules: tuple = ()) -> list:
    table = []
    for name in dir(module):
        if name.startswith("_") or name in _SKIP_NAMES or name.startswith(_SKIP_PREFIXES):
            continue
        function = getattr(module, name)
        if inspect.isclass(function) or inspect.ismodule(function) or not callable(function):
            continue
        if str(getattr(function, "__module__", "")).startswith(_SKIP_MODULES + extra_skip_modules):
            continue
        in_place = name.startswith(_IN_PLACE_OPS) or name.endswith("_") or name in _RUNNING_STATS_OPS
        table.append((module, name, function, ApiSpec(f"{prefix}.{name}", MUTATES_FIRST if in_place else MUTATES_NOTHING)))
    return table


def _tensor_table() -> list:
    prefix = MS_API_PREFIXES["tensor"]
    table = []
    for name in dir(ms.Tensor):
        attribute = inspect.getattr_static(ms.Tensor, name)
        if not callable(attribute) or isinstance(attribute, (classmethod, staticmethod, property)):
            continue
        if name in _TENSOR_OPERATORS or (not name.startswith(("_", "is_")) and name not in _TENSOR_SKIP):
            in_place = name in _IN_PLACE_OPERATORS or (name.endswith("_") and not name.startswith("_"))
            spec = ApiSpec(f"{prefix}.{name}", MUTATES_FIRST if in_place else MUTATES_NOTHING)
            table.append((ms.Tensor, name, getattr(ms.Tensor, name), spec))
    return table


def _distributed_table() -> list:
    from mindspore.communication import comm_func

    table = []
    for module, key in ((comm_func, "communication"), (mint.distributed, "mint.distributed")):
        for owner, name, function, spec in _functions(module, MS_API_PREFIXES[key]):
            spec.mutation = MUTATES_ALL  # collectives write through their backends
            table.append((owner, name, function, spec))
            if key == "communication" and getattr(ops, name, None) is function:  # ops re-exports them
                table.append((ops, name, function, spec))
    return table


def _guard_table() -> list:
    """Calls that update tensors in place without going through a wrapped API: optimizer steps
    (parameters), `Parameter.set_data` and `Tensor.assign_value`."""
    from mindspore.experimental.optim.optimizer import Optimizer as MintOptimizer

    owners = ((nn.Optimizer, "__call__"), (MintOptimizer, "__call__"), (ms.Parameter, "set_data"),
              (ms.Tensor, "assign_value"))
    return [(owner, name, getattr(owner, name), ApiSpec(f"{owner.__name__}.{name}", MUTATES_ALL, recorded=False))
            for owner, name in owners]


def api_table() -> list[tuple[object, str, object, ApiSpec]]:
    """Every (owner, attribute, original, spec) capture wraps, in this MindSpore build."""
    return [*_functions(ops, MS_API_PREFIXES["ops"]), *_functions(mint, MS_API_PREFIXES["mint"]),
            *_functions(mint.nn.functional, MS_API_PREFIXES["mint.nn.functional"]), *_tensor_table(),
            *_distributed_table(), *_guard_table()]


def _backward_entry(original):
    """PyNative's grad entry point (every grad function, GradOperation and TrainOneStepCell goes through
    it, after the forward pass and before the backward pass): the session hooks the calls it recorded."""

    @functools.wraps(original)
    def grad(*args, **kwargs):
        session = STATE.session
        if session is not None and not STATE.depth and _thread_id() == session.thread:
            STATE.depth = 1
            try:
                session.before_backward()
            finally:
                STATE.depth = 0
        return original(*args, **kwargs)

    return grad


def install() -> None:
    """Wrap every API of `api_table()` and the grad entry point (idempotent; they stay until `uninstall`)."""
    if _installed:
        return
    executor = type(_pynative_executor)
    replacements = [(executor, "grad", executor.grad, _backward_entry(executor.grad))]
    wrappers: dict[tuple, object] = {}
    for owner, name, original, spec in api_table():
        wrapper = wrappers.get((id(original), spec.stem))
        if wrapper is None:
            wrapper = wrappers[(id(original), spec.stem)] = _make_wrapper(original, spec)
        replacements.append((owner, name, original, wrapper))
    for owner, name, original, wrapper in replacements:
        _installed.replace(owner, name, original, wrapper)


def uninstall() -> None:
    """Put every original back (where nobody replaced our wrapper since)."""
    _installed.restore()


class PrimitiveHooks:
    """The primitives held by a model's cells, recorded as `Primitive.{attribute}.{Class}` calls.

    Each such primitive instance gets a subclass of its class whose `__call__` goes through the capture
    (msprobe's approach); `remove()` gives every instance its class back. With `guards_only` (L0), only
    the primitives that write into their inputs are wrapped, unrecorded: the pending tensors are described
    before such a call (BatchNorm's moving statistics, which its cell's record holds as parameters)."""

    def __init__(self, model, guards_only: bool = False):
        self.swapped: list[tuple[Primitive, type]] = []
        seen: set[int] = set()
        for _, cell in model.cells_and_names():
            for attribute, value in vars(cell).items():
                if (isinstance(value, Primitive) and id(value) not in seen and type(value).__name__ not in _QUERIES
                        and (not guards_only or value.attrs.get("side_effect_mem"))):
                    seen.add(id(value))
                    self._wrap(value, f"{PRIMITIVE_PREFIX}.{attribute}.{type(value).__name__}", not guards_only)

    def _wrap(self, primitive: Primitive, stem: str, recorded: bool) -> None:
        cls = type(primitive)
        # a primitive marked side_effect_mem writes into its inputs (BatchNorm's moving statistics, Assign)
        mutation = MUTATES_FIRST if primitive.attrs.get("side_effect_mem") else MUTATES_NOTHING
        spec = ApiSpec(stem, mutation, recorded, skip_self=True, unfilled=_unfilled_outputs(primitive))
        call = _make_wrapper(cls.__call__, spec)
        try:
            primitive.__class__ = type(cls.__name__, (cls,), {"__call__": call, "__module__": cls.__module__})
        except TypeError:  # a primitive class that does not allow it: left unrecorded
            return
        self.swapped.append((primitive, cls))

    def remove(self) -> None:
        """Give every wrapped primitive its own class back."""
        for primitive, cls in self.swapped:
            primitive.__class__ = cls
        self.swapped.clear()

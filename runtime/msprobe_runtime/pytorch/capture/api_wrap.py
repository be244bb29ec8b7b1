"""L1 capture: thin wrappers around the public APIs of torch.nn.functional, torch.Tensor (methods and
operators), the torch namespace (with torch.linalg) and the torch.distributed collectives.

The wrappers are installed once and stay: outside a capture window, or inside a wrapped call (only the
outermost call is recorded), or while torch.compile traces, a wrapper is one attribute read and a call
through. Inside a window it hands the call to the active session (`STATE.session`), which records it.
At level L0 the same wrappers run in guard mode: they record nothing, they only tell the session that
an in-place call is about to change a tensor, so lazily computed statistics keep call-time values (and
only while some tensor's statistics are pending). At L0 a global optimizer step pre-hook computes the
pending statistics before any optimizer changes parameters and states in place, so those updates need
no copies and the optimizer's calls run straight through.
"""

from __future__ import annotations

import functools
import inspect
import pickle
import threading
import types

import torch
import torch._jit_internal as _jit_internal
import torch.distributed as dist
import torch.jit._builtins as jit_builtins
import torch.nn.functional as F
from torch.optim.optimizer import register_optimizer_step_pre_hook

from msprobe_runtime.core.naming import API_PREFIXES
from msprobe_runtime.core.patching import CaptureState, Patches
from msprobe_runtime.core.pickling import original_paths, with_originals

# Tensor methods that describe or manage a tensor instead of computing with it.
_TENSOR_SKIP = frozenset("""
as_subclass backward ccol_indices col_indices crow_indices indices values coalesce const_data_ptr data_ptr
dense_dim sparse_dim detach detach_ dim dim_order element_size get_device hash_tensor ipu mtia xpu item
tolist numpy module_load ndimension nelement numel new new_empty new_empty_strided pin_memory qscheme
int_repr record_stream register_hook register_post_accumulate_grad_hook reinforce requires_grad_
retain_grad share_memory_ size storage storage_offset storage_type stride type untyped_storage
resize_as_sparse_ sparse_resize_ sparse_resize_and_clear_ sparse_mask to_sparse to_sparse_bsc
to_sparse_bsr to_sparse_coo to_sparse_csc to_sparse_csr to_mkldnn to_padded_tensor eig symeig lstsq
solve smm
""".split())
_TENSOR_OPERATORS = frozenset("""
__add__ __radd__ __iadd__ __sub__ __rsub__ __isub__ __mul__ __rmul__ __imul__ __truediv__ __rtruediv__
__itruediv__ __div__ __rdiv__ __idiv__ __floordiv__ __rfloordiv__ __ifloordiv__ __mod__ __rmod__
__imod__ __pow__ __rpow__ __ipow__ __matmul__ __rmatmul__ __and__ __rand__ __iand__ __or__ __ror__
__ior__ __xor__ __rxor__ __ixor__ __lshift__ __rlshift__ __ilshift__ __rshift__ __rrshift__ __irshift__
__neg__ __pos__ __abs__ __invert__ __eq__ __ne__ __lt__ __le__ __gt__ __ge__ __getitem__ __setitem__
""".split())
_IN_PLACE_OPERATORS = frozenset(name for name in _TENSOR_OPERATORS if name.startswith("__i")) | {"__setitem__"}
_TORCH_SKIP_PREFIXES = ("is_", "empty", "sym_", "_")
_TORCH_SKIP = frozenset("""
numel result_type can_cast promote_types get_device from_file from_numpy frombuffer asarray as_tensor tensor
get_default_dtype set_default_dtype broadcast_shapes align_tensors
""".split())
_TORCH_PRIVATE_KEPT = ("_foreach_", "_fused_", "_amp_")
# calls that write their tensor arguments in place without bumping their version counters: GradScaler's
# unscale of the gradients (and its inf flag) and its scale update (the growth tracker), and the fused
# optimizer steps (`_fused_adamw_` and the like: parameters, moments and step counts)
_UNVERSIONED_WRITES = frozenset({"_amp_foreach_non_finite_check_and_unscale_", "_amp_update_scale_"})
_UNVERSIONED_PREFIX = "_fused_"  # with a trailing "_": in place
_FUNCTIONAL_SKIP = frozenset("""
boolean_dispatch assert_int_or_pair handle_torch_function has_torch_function has_torch_function_unary
has_torch_function_variadic
""".split())
_DISTRIBUTED = ("all_reduce", "all_gather", "all_gather_into_tensor", "reduce_scatter", "reduce_scatter_tensor",
                "broadcast", "reduce", "all_to_all", "all_to_all_single", "send", "recv", "isend", "irecv",
                "gather", "scatter", "batch_isend_irecv", "_reduce_scatter_base", "_all_gather_base")

# how a call may change its arguments in place
MUTATES_NOTHING, MUTATES_FIRST, MUTATES_ALL, MUTATES_RUNNING_STATS = 0, 1, 2, 3
# calls that update batch-norm running statistics in place without bumping their version counters: the
# position of running_mean (running_var follows; both may also come by keyword)
_RUNNING_STATS = {"Functional.batch_norm": 1, "Functional.instance_norm": 1, "Torch.batch_norm": 3,
                  "Torch.instance_norm": 3, "Torch.native_batch_norm": 3, "Torch.cudnn_batch_norm": 3,
                  "Torch.miopen_batch_norm": 3, "Torch.batch_norm_update_stats": 1}


STATE = CaptureState()
_thread_id = threading.get_ident
_compiling = torch.compiler.is_compiling
_graph_task = torch._C._current_graph_task_id  # >= 0 while this thread runs a backward pass
_installed = Patches()
_optimizer_hook = []  # the handle of the optimizer step pre-hook, while installed
# every wrapper ever made, by (id(original), stem): reinstalling reuses them, so no wrapper is freed and
# TorchScript's builtin table (keyed by id(function)) never meets a reused id
_wrappers: dict[tuple[int, str], object] = {}


class ApiSpec:
    """One wrapped API: its record stem (`Functional.linear`) and how it may change its arguments."""

    __slots__ = ("stem", "mutation", "inplace_position", "running_stats")

    def __init__(self, stem: str, mutation: int, inplace_position: int | None = None):
        self.stem = stem
        self.running_stats = _RUNNING_STATS.get(stem)  # where running_mean is, for batch-norm calls
        self.mutation = MUTATES_RUNNING_STATS if self.running_stats is not None else mutation
        self.inplace_position = inplace_position  # functionals with an `inplace` argument

    def mutates(self, args: tuple, kwargs: dict) -> bool:
        """True when this call may change one of its tensor arguments in place."""
        if self.mutation or "out" in kwargs:
            return True
        position = self.inplace_position
        if position is None:
            return False
        return bool(kwargs.get("inplace", args[position] if len(args) > position else False))


def records_here(session) -> bool:
    """Whether calls made now belong to `session`: not while torch.compile traces (compiled regions are
    skipped as a whole), and only on the thread that opened the window or one running a backward pass (on
    an accelerator, the autograd engine's own threads). Other threads (a logger, an asynchronous
    checkpoint) run untouched: recorded, their calls would land among the training thread's at points
    that differ from run to run, and two runs' records would no longer line up."""
    return not _compiling() and (_thread_id() == session.thread or _graph_task() >= 0)


def _make_wrapper(original, spec: ApiSpec):
    state, recording = STATE, records_here  # closure only: see _scriptable
    may_mutate = bool(spec.mutation) or spec.inplace_position is not None

    def wrapper(*args, **kwargs):
        session = state.session
        if session is None or state.depth or not (
                session.records_apis or ((may_mutate or "out" in kwargs) and session.stats.storages)) \
                or not recording(session):
            return original(*args, **kwargs)
        state.depth = 1
        try:
            return session.call_api(original, spec, args, kwargs)
        finally:
            state.depth = 0

    return _scriptable(original, wrapper)


def _scriptable(original, wrapper):
    """Keep TorchScript working on code that calls a wrapped API: a builtin keeps its ATen schema; a
    Python function gets its own globals, so TorchScript (which reads the original's source through
    __wrapped__) resolves its names. The wrapper only uses its closure, never globals."""
    if hasattr(original, "__globals__"):
        wrapper = types.FunctionType(wrapper.__code__, original.__globals__, wrapper.__name__,
                                     wrapper.__defaults__, wrapper.__closure__)
    functools.update_wrapper(wrapper, original)
    builtin = jit_builtins._find_builtin(original)
    if builtin is not None:
        jit_builtins._register_builtin(wrapper, builtin)
    dispatched = _jit_internal.boolean_dispatched
    if original in dispatched:
        dispatched[wrapper] = dispatched[original]
    return wrapper


def _inplace_position(function) -> int | None:
    try:
        parameters = list(inspect.signature(function).parameters)
    except (TypeError, ValueError):
        return None
    return parameters.index("inplace") if "inplace" in parameters else None


def api_table() -> list[tuple[object, str, str, ApiSpec]]:
    """Every (owner, attribute, original, spec) capture wraps, in this PyTorch build."""
    table = []
    tensor = API_PREFIXES["tensor"]
    for name in dir(torch.Tensor):
        attribute = inspect.getattr_static(torch.Tensor, name)
        if not callable(attribute) or isinstance(attribute, (classmethod, staticmethod, property)):
            continue
        if name in _TENSOR_OPERATORS or (not name.startswith("_") and name not in _TENSOR_SKIP
                                         and not name.startswith(("is_", "q_"))):
            in_place = name in _IN_PLACE_OPERATORS or (name.endswith("_") and not name.startswith("_"))
            spec = ApiSpec(f"{tensor}.{name}", MUTATES_FIRST if in_place else MUTATES_NOTHING)
            table.append((torch.Tensor, name, getattr(torch.Tensor, name), spec))
    functional = API_PREFIXES["functional"]
    for name in dir(F):
        function = getattr(F, name)
        if (name.startswith("_") or name in _FUNCTIONAL_SKIP or inspect.isclass(function)
                or not callable(function) or not getattr(function, "__module__", "").startswith("torch")):
            continue
        spec = ApiSpec(f"{functional}.{name}", MUTATES_FIRST if name.endswith("_") else MUTATES_NOTHING,
                       _inplace_position(function))
        table.append((F, name, function, spec))
    table.extend(_torch_table())
    table.extend(_distributed_table())
    return table


def _torch_table() -> list:
    prefix = API_PREFIXES["torch"]
    variable_functions = torch._C._VariableFunctions
    names = [name for name in dir(variable_functions)  # also when wrapped (dropout removal), seen through
             if inspect.unwrap(getattr(torch, name, None)) is getattr(variable_functions, name)]
    names += [name for name in torch.functional.__all__ if hasattr(torch, name)]
    table = []
    for name in sorted(set(names)):
        if name in _TORCH_SKIP or (name.startswith(_TORCH_SKIP_PREFIXES) and not name.startswith(_TORCH_PRIVATE_KEPT)):
            continue
        unversioned = name in _UNVERSIONED_WRITES or (name.startswith(_UNVERSIONED_PREFIX) and name.endswith("_"))
        mutation = MUTATES_ALL if unversioned else MUTATES_FIRST if name.endswith("_") else MUTATES_NOTHING
        table.append((torch, name, getattr(torch, name), ApiSpec(f"{prefix}.{name}", mutation)))
    for name in dir(torch.linalg):
        function = getattr(torch.linalg, name)
        if not name.startswith("_") and callable(function) and not inspect.isclass(function):
            table.append((torch.linalg, name, function, ApiSpec(f"{prefix}.linalg.{name}", MUTATES_NOTHING)))
    return table


def _distributed_table() -> list:
    if not dist.is_available():
        return []
    prefix = API_PREFIXES["distributed"]
    table = []
    for name in _DISTRIBUTED:
        original = getattr(dist.distributed_c10d, name, None)
        if original is None:
            continue
        spec = ApiSpec(f"{prefix}.{name}", MUTATES_ALL)
        for owner in (dist, dist.distributed_c10d):
            if getattr(owner, name, None) is original:
                table.append((owner, name, original, spec))
    return table


def _before_optimizer_step(optimizer, args, kwargs) -> None:
    """Compute the pending statistics now (on the device, no synchronisation): the optimizer is about
    to change parameters, gradients and states in place, and then no copy of them is needed."""
    session = STATE.session
    if session is None or session.records_apis or STATE.depth or not records_here(session):
        return  # records inside the optimizer share slots with earlier records of the same tensors
    STATE.depth = 1
    try:
        session.stats.materialize()
    finally:
        STATE.depth = 0


def _computing_pending_first(original):
    """`torch.autograd.backward` (which `Tensor.backward` calls) or `torch.autograd.grad`, computing the pending
    statistics first (on the device, no synchronisation): the pass writes in place into tensors recorded
    before it, unseen by the wrappers (a gradient accumulated into a `.grad` an optimizer step or a gradient
    norm read earlier in the step; DDP's all-reduce), which would leave their records stale."""

    def backward_pass(*args, **kwargs):
        session = STATE.session
        if session is not None and session.stats.storages and not STATE.depth and records_here(session):
            _unrecorded(session.stats.materialize)
        return original(*args, **kwargs)

    return functools.wraps(original)(backward_pass)


_BACKWARD_PASSES = {name: _computing_pending_first(getattr(torch.autograd, name)) for name in ("backward", "grad")}
_original_wait = dist.Work.wait if dist.is_available() else None


def _unrecorded(function, *args, **kwargs):
    """`function(*args, **kwargs)` as capture's own work: nothing it calls is recorded."""
    session = STATE.session
    if STATE.depth or session is None or not records_here(session):
        return function(*args, **kwargs)
    STATE.depth = 1
    try:
        return function(*args, **kwargs)
    finally:
        STATE.depth = 0


def _wait(work, *args, **kwargs):
    """Work.wait, then the capture session describes the result of the asynchronous collective."""
    done = _original_wait(work, *args, **kwargs)
    session = STATE.session
    if session is not None and records_here(session):  # another thread's wait: described at the window's end
        _unrecorded(session.collective_done, work)
    return done


_original_tensor_str = getattr(torch._tensor_str, "_str", None)  # what str(), repr() and format() of a tensor call


def _tensor_str(*args, **kwargs):
    """Printing a tensor, with nothing it calls recorded: its ~20 internal calls are not the model's
    computation, and a print in one run only would shift the call indexes that runs are compared by."""
    return _unrecorded(_original_tensor_str, *args, **kwargs)


_original_save = torch.save


def _save(obj, f, pickle_module=pickle, *args, **kwargs):
    """torch.save while the wrappers are in place: unrecorded (a checkpoint written inside the window is
    not the model's computation), and storing the functions they replaced (an `activation=F.relu` a
    model keeps) by their paths, which plain pickle refuses."""
    pickle_module = with_originals(pickle_module, original_paths(_installed.replaced()))
    return _unrecorded(_original_save, obj, f, pickle_module, *args, **kwargs)


def install() -> None:
    """Wrap every API of `api_table()`, hook optimizer steps, backward passes and Work.wait, keep tensor
    printing out of the records, let torch.save pickle what holds the originals (idempotent; until
    `uninstall`)."""
    if _installed:
        return
    _optimizer_hook.append(register_optimizer_step_pre_hook(_before_optimizer_step))
    for owner in (torch, torch.serialization):
        if getattr(owner, "save", None) is _original_save:
            _installed.replace(owner, "save", _original_save, _save)
    for name, wrapper in _BACKWARD_PASSES.items():
        if getattr(torch.autograd, name) is wrapper.__wrapped__:
            _installed.replace(torch.autograd, name, wrapper.__wrapped__, wrapper)
    if _original_wait is not None:
        _installed.replace(dist.Work, "wait", _original_wait, _wait)
    if _original_tensor_str is not None:
        _installed.replace(torch._tensor_str, "_str", _original_tensor_str, _tensor_str)
    for owner, name, original, spec in api_table():
        wrapper = _wrappers.get((id(original), spec.stem))
        if wrapper is None:
            wrapper = _wrappers[(id(original), spec.stem)] = _make_wrapper(original, spec)
        _installed.replace(owner, name, original, wrapper)


def uninstall() -> None:
    """Put every original back (where nobody replaced our wrapper since); unhook optimizer steps."""
    while _optimizer_hook:
        _optimizer_hook.pop().remove()
    _installed.restore()


def installed() -> bool:
    """True while the wrappers are in place."""
    return bool(_installed)

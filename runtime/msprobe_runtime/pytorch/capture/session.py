"""One capture window (one step on one rank): records, names, filters, stacks, construct, and the flush.

The API wrappers call `call_api`; module hooks and gradient hooks call `add_record`/`encode`. Tensors
become entries whose statistics are filled at `close()`, after the step's single device-to-host transfer
(capture.stats). Everything the session runs itself is marked as inside a wrapped call, so its own torch
calls are never recorded.
"""

from __future__ import annotations

import linecache
import os
import sys
import warnings
from collections import defaultdict

import torch

from msprobe_runtime.core import naming
from msprobe_runtime.core.config import DebuggerConfig
from msprobe_runtime.core.dump_writer import dump_header, step_folder, write_step
from msprobe_runtime.core.stats import (
    DATA_NAME,
    DTYPE,
    HASH,
    MAX,
    MD5,
    MEAN,
    MIN,
    NORM,
    REQUIRES_GRAD,
    SHAPE,
    TYPE,
    fill_statistics,
    finite,
    hash_text,
    md5_text,
)
from msprobe_runtime.pytorch.capture.api_wrap import MUTATES_ALL, STATE, ApiSpec
from msprobe_runtime.pytorch.capture.stats import DEFAULT_BUDGET_BYTES, StatBuffer

_OWN_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # msprobe_runtime/
_SCALARS = (bool, int, float, str)
_MAX_DEPTH = 32
_compiling = torch.compiler.is_compiling
_grad_enabled = torch.is_grad_enabled
Tensor = torch.Tensor
_GENERATED = "<eval_with_key"  # the file name of code torch.fx generates (compiled graphs)
_dtype_names: dict[torch.dtype, str] = {}
_codes: dict[int, object] = {}  # code objects seen in stacks, kept alive so their ids stay unique
_formatted: dict[tuple, tuple[str, ...]] = {}


def _dtype_name(dtype: torch.dtype) -> str:
    name = _dtype_names.get(dtype)
    if name is None:
        name = _dtype_names[dtype] = str(dtype)
    return name


def _special(value):
    """msprobe's encodings of torch and numpy objects that are not tensors; None when unknown."""
    if isinstance(value, torch.dtype):
        return {"type": "torch.dtype", "value": str(value)}
    if isinstance(value, torch.device):
        return {"type": "torch.device", "value": str(value)}
    if isinstance(value, torch.memory_format):
        return {"type": "torch.memory_format", "format": str(value).rpartition(".")[2]}
    if isinstance(value, slice):
        return {"type": "slice", "value": [value.start, value.stop, value.step]}
    if value is Ellipsis:
        return {"type": "ellipsis", "value": "..."}
    if hasattr(value, "dtype") and hasattr(value, "item") and getattr(value, "ndim", None) == 0:
        return {"type": type(value).__name__, "value": value.item()}  # numpy scalar
    if torch.distributed.is_available():
        if isinstance(value, torch.distributed.ReduceOp):
            return {"type": "torch.distributed.ReduceOp", "value": str(value)}
        if isinstance(value, torch.distributed.ProcessGroup):
            return {"type": "torch.ProcessGroup", "group_ranks": torch.distributed.get_process_group_ranks(value)}
    return None


class Modes:
    """The config's data_mode as four switches."""

    def __init__(self, data_mode: tuple[str, ...]):
        modes = set(data_mode)
        every = "all" in modes
        self.forward = every or "forward" in modes or not modes & {"forward", "backward"}
        self.backward = every or "backward" in modes or not modes & {"forward", "backward"}
        self.input = every or "input" in modes or not modes & {"input", "output"}
        self.output = every or "output" in modes or not modes & {"input", "output"}


class CaptureSession:
    """Everything recorded between start() and stop() for one step on one rank."""

    def __init__(self, config: DebuggerConfig, step: int, rank: int, budget_bytes: int = DEFAULT_BUDGET_BYTES):
        self.config = config
        self.folder = step_folder(config.dump_path, step, rank)
        tensor_mode = config.task == "tensor"
        self.tensor_folder = self.folder / naming.TENSOR_DATA_DIR if tensor_mode else None
        self.stats = StatBuffer(config.summary_mode, self.folder if tensor_mode else None, budget_bytes)
        self.modes = Modes(config.data_mode)
        self.records_apis = config.level in ("L1", "mix")
        self.records_modules = config.level in ("L0", "mix")
        self.data: dict[str, dict] = {}
        self.construct: dict[str, str | None] = {}
        self.module_stack: list[str] = []  # forward names of the modules running now
        self.module_frames: dict[int, list[dict]] = defaultdict(list)  # per module: calls still running
        self.parameter_grads: dict[int, tuple[int, dict]] = {}  # per module: its open parameters_grad record
        self.closed = False
        self._fills: list[tuple[dict, int]] = []
        self._counts: dict[str, int] = defaultdict(int)
        self._stacks: dict[tuple, int] = {}
        self._stack_items: list[tuple[list, list]] = []
        self._stack_lines: dict[tuple, int] = {}
        self._unwanted: set[str] = set()
        self._scope_state = 0 if config.scope else 1  # 0 before the scope, 1 inside, 2 after
        self.filtered = bool(config.list or config.scope)
        self._finalizers: list = []  # run at close(): module backward records still open

    # ---- names and filters -------------------------------------------------------------------
    def next_index(self, stem: str) -> int:
        """The call index of `stem` in this step (0, 1, ...)."""
        index = self._counts[stem]
        self._counts[stem] = index + 1
        return index

    def wanted(self, forward_name: str) -> bool:
        """Whether a forward record (and its backward) is dumped: the config's list and scope."""
        keep = True
        if self.config.list:
            keep = any(item in forward_name for item in self.config.list)
        if self.config.scope:
            first, last = self.config.scope
            if self._scope_state == 0 and _matches(forward_name, first):
                self._scope_state = 1
            keep = keep and self._scope_state == 1
            if self._scope_state == 1 and _matches(forward_name, last):
                self._scope_state = 2
        if not keep:
            self._unwanted.add(forward_name)
        return keep

    def wanted_backward(self, forward_name: str) -> bool:
        """Backward records follow their forward record's filter."""
        return self.modes.backward and forward_name not in self._unwanted

    # ---- encoding ----------------------------------------------------------------------------
    def encode(self, value, record: str, category: str, path: tuple = (), depth: int = 0):
        """msprobe's JSON form of an argument or result; tensors get a statistics entry."""
        if isinstance(value, torch.Tensor):
            return self.tensor(value, record, category, path)
        if value is None:
            return None
        kind = type(value)
        if kind in _SCALARS:
            return {"type": kind.__name__, "value": value if kind is not float else finite(value)}
        if kind is tuple or kind is list:  # the common case, without index paths unless files need them
            if self.tensor_folder is None:
                return [self.encode(item, record, category, path, depth + 1) if item is not None else None
                        for item in value] if depth < _MAX_DEPTH else None
        elif kind is torch.Size:
            return {"type": "torch.Size", "value": list(value)}
        if depth < _MAX_DEPTH:
            if isinstance(value, (list, tuple)):
                return [self.encode(item, record, category, (*path, index), depth + 1)
                        for index, item in enumerate(value)]
            if isinstance(value, dict):
                return {str(key): self.encode(item, record, category, (*path, key), depth + 1)
                        for key, item in value.items()}
        return _special(value)

    def tensor(self, t: torch.Tensor, record: str, category: str, path: tuple, snapshot: bool = False) -> dict:
        """A tensor's entry; its statistics (and data file) follow at close()."""
        dtype = _dtype_names.get(t.dtype) or _dtype_name(t.dtype)
        entry = {TYPE: "torch.Tensor", DTYPE: dtype, SHAPE: list(t.shape), MAX: None, MIN: None, MEAN: None,
                 NORM: None, REQUIRES_GRAD: t.requires_grad}
        if self.tensor_folder is None and not snapshot:
            self._fills.append((entry, self.stats.slot(t)))
            return entry
        file_name = None
        if self.tensor_folder is not None:
            file_name = entry[DATA_NAME] = naming.tensor_file_name(record, category, path)
        slot = self.stats.snapshot(t, file_name) if snapshot else self.stats.slot(t, file_name)
        self._fills.append((entry, slot))
        return entry

    def outputs(self, value, record: str) -> list:
        """A call's result as msprobe's `output` list."""
        encoded = self.encode(value, record, "output")
        return encoded if isinstance(encoded, list) else [encoded]

    # ---- records -----------------------------------------------------------------------------
    def add_record(self, name: str, record: dict, parent: str | None, stack: tuple | None = None,
                   construct: bool = True) -> None:
        """Insert a record (in completion order), its construct parent and its stack."""
        self.data[name] = record
        if self.records_modules and construct:
            self.construct[name] = parent
        if stack is not None:
            index = self._stacks.get(stack)
            if index is None:  # stacks differing only in instruction offsets share one entry
                lines = _format_stack(stack)
                index = self._stacks[stack] = self._stack_lines.setdefault(lines, len(self._stack_items))
                if index == len(self._stack_items):
                    self._stack_items.append(([], list(lines)))
            self._stack_items[index][0].append(name)

    def call_api(self, original, spec: ApiSpec, args: tuple, kwargs: dict):
        """Run one outermost API call and record it (or, at L0, only guard in-place calls).

        Calls made while torch.compile traces, or by a compiled graph's generated code, are not
        recorded: compiled regions are skipped as a whole."""
        if _compiling() or _from_generated_code():
            return original(*args, **kwargs)
        mutates = spec.mutation or (spec.mutates(args, kwargs) if kwargs or spec.inplace_position else False)
        if self.records_apis:
            stem = spec.stem
            index = self._counts[stem]
            self._counts[stem] = index + 1
            name = naming.api_name(stem, index, naming.FORWARD)
            keep = self.filtered is False or self.wanted(name)
        else:
            keep = False
        if not keep:
            if mutates:
                self.guard(spec, args, kwargs)
            return original(*args, **kwargs)
        modes = self.modes
        record = {}
        if modes.forward and modes.input:
            if self.tensor_folder is None:  # the common case, inlined: tensors and scalars
                tensor, encode = self.tensor, self.encode
                record["input_args"] = [tensor(arg, name, "", ()) if isinstance(arg, Tensor)
                                        else encode(arg, name, "input") for arg in args]
            else:
                record["input_args"] = self.encode(args, name, "input")
            record["input_kwargs"] = self.encode(kwargs, name, "kwargs") if kwargs else {}
        if mutates:
            self.guard(spec, args, kwargs)
        output = original(*args, **kwargs)
        if modes.forward:
            if modes.output:
                record["output"] = self.outputs(self._result(spec, output, args, kwargs), name)
            parent = self.module_stack[-1] if self.module_stack else None
            self.add_record(name, record, parent, capture_stack(sys._getframe()))
        if modes.backward and _grad_enabled():
            self._hook_api_backward(name, output, args)
        return output

    @staticmethod
    def _result(spec: ApiSpec, output, args: tuple, kwargs: dict):
        """What a call produced: its return value, or for a synchronous collective (which returns None
        and writes into its first argument) that argument after the call."""
        if spec.mutation == MUTATES_ALL and output is None and args and not kwargs.get("async_op"):
            return args[0]
        return output

    def guard(self, spec: ApiSpec, args: tuple, kwargs: dict) -> None:
        """Keep call-time values of the pending tensors this call may change in place."""
        targets = list(args) if spec.mutation == MUTATES_ALL else list(args[:1])
        if "out" in kwargs:
            targets.append(kwargs["out"])
        if spec.mutation == MUTATES_ALL:
            self.stats.forget_states()
        before = self.stats.before_mutation
        for target in targets:
            if isinstance(target, torch.Tensor):
                before(target)
            elif isinstance(target, (list, tuple)):
                for item in target:
                    if isinstance(item, torch.Tensor):
                        before(item)

    def _hook_api_backward(self, name: str, output, args: tuple) -> None:
        tensor = _first_tensor(output)
        if tensor is None or tensor.grad_fn is None:
            return
        for arg in args:  # the API returned an input unchanged: its node belongs to an earlier call
            if tensor is arg:
                return
        backward_name = naming.backward_of(name)
        if not self.wanted_backward(name):
            return
        parent = self.module_stack[-1] if self.module_stack else None

        def on_backward(grad_inputs, grad_outputs):
            if self.closed or STATE.depth:
                return
            STATE.depth = 1
            try:
                record = {}
                if self.modes.input:
                    record["input"] = self.encode(grad_outputs, backward_name, "input")
                if self.modes.output:
                    record["output"] = self.encode(grad_inputs, backward_name, "output")
                self.add_record(backward_name, record, naming.backward_of(parent) if parent else None)
            finally:
                STATE.depth = 0

        tensor.grad_fn.register_hook(on_backward)

    def on_close(self, finalizer) -> None:
        """Run `finalizer()` at close(), before statistics are filled (open backward records)."""
        self._finalizers.append(finalizer)

    # ---- flush -------------------------------------------------------------------------------
    def close(self) -> None:
        """Fill every statistic after one transfer per device and write the step's files."""
        self.closed = True
        for finalizer in self._finalizers:
            finalizer()
        rows = self.stats.to_host()
        kinds, numels, md5 = self.stats.kinds, self.stats.numels, self.stats.md5
        mode = self.config.summary_mode
        for entry, slot in self._fills:
            row = rows[slot]
            fill_statistics(entry, kinds[slot], numels[slot], row[0], row[1], row[2], row[3])
            if mode != "statistics":
                if mode == "hash" and row[4] is not None:
                    entry[HASH] = hash_text(row[4])
                elif mode == "md5" and slot in md5:
                    entry[MD5] = md5_text(md5[slot])
        if self.stats.stale:
            warnings.warn(f"msprobe-kit: {len(self.stats.stale)} tensor(s) were changed in place by code capture "
                          "cannot see before the step ended; their statistics are left null", stacklevel=3)
        header = dump_header(self.config.task, self.config.level, self.config.framework, self.tensor_folder)
        construct = self.construct if self.records_modules else {}
        write_step(self.folder, header, self.data, self._stack_items, construct)


def _from_generated_code() -> bool:
    """True when the wrapped API was called by code torch.fx generated (a compiled graph running)."""
    try:
        return sys._getframe(3).f_code.co_filename.startswith(_GENERATED)
    except ValueError:  # called from C with no Python caller
        return False


def _matches(name: str, pattern: str) -> bool:
    return name == pattern or name.startswith(pattern + ".")


def _first_tensor(value):
    if isinstance(value, torch.Tensor):
        return value
    if isinstance(value, (list, tuple)):
        for item in value:
            if isinstance(item, torch.Tensor):
                return item
    return None


def capture_stack(frame) -> tuple:
    """The call stack above our own frames as a flat (id(code), instruction, ...) tuple: cheap to build
    and hash; turned into source lines once per distinct stack."""
    while frame is not None and frame.f_code.co_filename.startswith(_OWN_DIR):
        frame = frame.f_back
    key = []
    append = key.append
    while frame is not None:
        code = frame.f_code
        if id(code) not in _codes:
            _codes[id(code)] = code
        append(id(code))
        append(frame.f_lasti)
        frame = frame.f_back
    return tuple(key)


def _format_stack(key: tuple) -> tuple[str, ...]:
    """msprobe's stack lines: `File {path}, line {n}, in {function}, \\n {source}` (cached per key)."""
    lines = _formatted.get(key)
    if lines is None:
        if len(_formatted) > 4096:
            _formatted.clear()
        lines = _formatted[key] = _stack_lines(key)
    return lines


def _stack_lines(key: tuple) -> tuple[str, ...]:
    lines = []
    for position in range(0, len(key), 2):
        code = _codes[key[position]]
        line = _line_of(code, key[position + 1])
        lines.append(f"File {code.co_filename}, line {line}, in {code.co_name}, \n "
                     f"{linecache.getline(code.co_filename, line).strip() if line else ''}")
    return tuple(lines)


def _line_of(code, instruction: int) -> int | None:
    for start, end, line in code.co_lines():
        if start <= instruction < end:
            return line
    return None

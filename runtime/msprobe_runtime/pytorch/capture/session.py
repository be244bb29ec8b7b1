"""One capture window (one step on one rank): records, names, filters, stacks, construct, and the flush.

The API wrappers call `call_api`; module hooks and gradient hooks call `add_record`/`tensor`/`encode`.
Tensors become entries whose statistics are filled after the step's single device-to-host transfer
(capture.stats), by the writer (core.dump_writer's process, or thread), which also encodes the JSON.
Everything the session runs itself is marked as inside a wrapped call, so its own torch calls are never
recorded.

A tensor's place in a record is a token string (core.dump_writer.ENTRY_TOKEN and the entry's number);
its JSON text is made by the writer from a cached head (type, dtype, shape) and the statistics.
What a step keeps is cheap for Python's garbage collector: tokens are strings, API records are flat (key, value, key, value, ...) tuples and argument
lists are tuples, which CPython stops tracking at its first look, so the hundreds of records of a step
do not make it run full collections of the whole process's heap.
"""

from __future__ import annotations

import json
import sys
import warnings
from collections import defaultdict

import torch

from msprobe_runtime.core import naming
from msprobe_runtime.core.call_gradients import tensors_in
from msprobe_runtime.core.config import DebuggerConfig
from msprobe_runtime.core.dump_writer import ENTRY_TOKEN, dump_header, step_folder, write_step
from msprobe_runtime.core.jsontext import json_value
from msprobe_runtime.core.records import StepRecords
from msprobe_runtime.core.stats import (
    DATA_NAME,
    HASH,
    MD5,
    entry_head,
    hash_text,
    md5_text,
)
from msprobe_runtime.pytorch.capture import api_wrap, stacks
from msprobe_runtime.pytorch.capture.api_wrap import MUTATES_ALL, MUTATES_RUNNING_STATS, ApiSpec
from msprobe_runtime.pytorch.capture.backward import hook_backward, input_edges, sequence_number
from msprobe_runtime.pytorch.capture.stats import DEFAULT_BUDGET_BYTES, HostStatistics, StatBuffer, version_of

_SCALARS = (bool, int, float, str)
_SEQUENCES = (list, tuple)
_MAX_DEPTH = 32
_CACHE_LIMIT = 4096
_grad_enabled = torch.is_grad_enabled
_getframe = sys._getframe
Tensor = torch.Tensor
_WORK = torch.distributed.Work if torch.distributed.is_available() else ()
_heads: dict[tuple, tuple[bytes, bool]] = {}  # (dtype, shape) -> (entry head text, 0-d), shared by steps


_TOKENS: list[str] = []  # entry number -> its token, made once per process


def _token(number: int) -> str:
    """The token of entry `number` (and of every entry before it, made in blocks)."""
    _TOKENS.extend(f"{ENTRY_TOKEN}{index}" for index in range(len(_TOKENS), max(number + 1, 2 * len(_TOKENS), 1024)))
    return _TOKENS[number]


def _head(key: tuple) -> tuple[bytes, bool]:
    """The entry head text of a (dtype, shape), and whether it is 0-d (cached)."""
    head = _heads.get(key)
    if head is None:
        if len(_heads) > _CACHE_LIMIT:
            _heads.clear()
        dtype, shape = key
        head = _heads[key] = (entry_head("torch.Tensor", str(dtype), tuple(shape)), not shape)
    return head


def _special(value):
    """msprobe's encodings of torch and numpy objects that are not tensors; None when unknown."""
    if isinstance(value, torch.dtype):
        return {"type": "torch.dtype", "value": str(value)}
    if isinstance(value, torch.device):
        return {"type": "torch.device", "value": str(value)}
    if isinstance(value, torch.memory_format):
        return {"type": "torch.memory_format", "format": str(value).rpartition(".")[2]}
    if value is Ellipsis:
        return {"type": "ellipsis", "value": "..."}
    if hasattr(value, "dtype") and hasattr(value, "item") and getattr(value, "ndim", None) == 0:
        return {"type": type(value).__name__, "value": json_value(value.item())}  # numpy scalar
    if torch.distributed.is_available():
        if isinstance(value, torch.distributed.ReduceOp):
            return {"type": "torch.distributed.ReduceOp", "value": str(value)}
        if isinstance(value, torch.distributed.ProcessGroup):
            return {"type": "torch.ProcessGroup", "group_ranks": torch.distributed.get_process_group_ranks(value)}
    return None


class CaptureSession(StepRecords):
    """Everything recorded between start() and stop() for one step on one rank."""

    stack_lines = staticmethod(stacks.stack_lines)

    def __init__(self, config: DebuggerConfig, step: int, rank: int, budget_bytes: int = DEFAULT_BUDGET_BYTES):
        super().__init__(config)
        self.folder = step_folder(config.dump_path, step, rank)
        tensor_mode = config.task == "tensor"
        self.tensor_folder = self.folder / naming.TENSOR_DATA_DIR if tensor_mode else None
        self.stats = StatBuffer(config.summary_mode, self.folder if tensor_mode else None, budget_bytes)
        if not self.records_apis:  # L0: the API wrappers only guard pending tensors; in place from the first
            self.stats.on_pending = api_wrap.install
        self.module_frames: dict[int, list] = defaultdict(list)  # per module: calls still running
        self.parameter_grads: dict[int, tuple] = {}  # per module: (index, name, record) of its open parameters_grad
        self.closed = False
        self.first_sequence = sequence_number()  # autograd nodes numbered below were made before the window
        # node -> the edges leaving the nodes of the call that made it (backward.hook_backward), for the walks of
        # the modules around it; None at L1, where no recorded call is inside another
        self.walks: dict | None = {} if self.records_modules else None
        # per tensor entry, by number: requires_grad and statistics slot (which knows dtype and shape)
        self._entry_grads: list[bool] = []
        self._entry_slots: list[int] = []
        self._data_names: dict[int, str] = {}  # tensor mode: per entry, its .npy file
        # asynchronous collectives: id(work) -> (work, [(entry number, tensor, version, data file), ...])
        self._async_results: dict[int, tuple] = {}
        self._unfinished: list | None = None  # while an asynchronous collective's result is encoded

    # ---- encoding ----------------------------------------------------------------------------
    def encode(self, value, record: str, category: str, path: tuple = (), depth: int = 0):
        """msprobe's JSON form of an argument or result (sequences as tuples); tensors get an entry."""
        if isinstance(value, Tensor):
            return self.tensor(value, record, category, path)
        if value is None:
            return None
        kind = type(value)
        if kind in _SCALARS:
            return {"type": kind.__name__, "value": json_value(value)}
        if kind is torch.Size:
            return {"type": "torch.Size", "value": tuple(value)}
        if kind is slice:
            return self.encode_slice(value, record, category, path, depth)
        if depth < _MAX_DEPTH:
            if isinstance(value, _SEQUENCES):
                if self.tensor_folder is None:  # no file names, so no index paths
                    return tuple([self.encode(item, record, category, path, depth + 1) for item in value])
                return tuple([self.encode(item, record, category, (*path, index), depth + 1)
                              for index, item in enumerate(value)])
            if isinstance(value, dict):
                return {str(key): self.encode(item, record, category, (*path, key), depth + 1)
                        for key, item in value.items()}
        return _special(value)

    def tensor(self, t: torch.Tensor, record: str, category: str, path: tuple, snapshot: bool = False,
               shared: bool = True) -> str:
        """The token of a tensor's entry; its statistics (and data file) follow after the step (`snapshot`
        and `shared`: see StatBuffer.slot's `copy` and `shared`)."""
        number = len(self._entry_slots)
        self._entry_grads.append(t.requires_grad)
        describe = self.stats.describe
        if describe is not None and self._unfinished is None:  # the statistics mode: the common case, inlined
            slot = describe(t, shared)
            self._entry_slots.append(slot if slot >= 0 else self.stats.keep(t, None, snapshot))
        else:
            file_name = naming.tensor_file_name(record, category, path) if self.tensor_folder is not None else None
            if self._unfinished is not None:  # an asynchronous collective's result: described once it is done
                self._unfinished.append((number, t, version_of(t), file_name))
                self._entry_slots.append(self.stats.unknown(t))
            else:
                if file_name is not None:
                    self._data_names[number] = file_name
                self._entry_slots.append(self.stats.slot(t, file_name, snapshot, shared))
        return _TOKENS[number] if number < len(_TOKENS) else _token(number)

    def input_args(self, args: tuple, record: str) -> tuple:
        """A call's positional arguments as msprobe's `input_args` (encode's common case inlined: without data
        files, whose names need each argument's index)."""
        if self.tensor_folder is not None:
            return self.encode(args, record, "input")
        tensor, encode = self.tensor, self.encode
        return tuple([tensor(arg, record, "input", ()) if isinstance(arg, Tensor) else encode(arg, record, "input", (), 1)
                      for arg in args])

    def outputs(self, value, record: str) -> tuple:
        """A call's result as msprobe's `output` list (a tensor, the common case, without encode)."""
        if isinstance(value, Tensor):
            return (self.tensor(value, record, "output", ()),)
        encoded = self.encode(value, record, "output")
        return encoded if encoded.__class__ is tuple else (encoded,)

    # ---- records -----------------------------------------------------------------------------
    def call_api(self, original, spec: ApiSpec, args: tuple, kwargs: dict):
        """Run one outermost API call and record it (or, at L0, only guard in-place calls).

        Calls made while torch.compile traces never get here (api_wrap.records_here); those of a compiled
        graph's generated code are not recorded: compiled regions are skipped as a whole."""
        caller = _getframe(2)  # the wrapper's caller
        if stacks.from_generated_code(caller):
            return original(*args, **kwargs)
        mutates = spec.mutation or ((kwargs or spec.inplace_position is not None) and spec.mutates(args, kwargs))
        if not self.records_apis:
            if mutates:
                self.guard(spec, args, kwargs)
            return original(*args, **kwargs)
        name = naming.api_name(spec.stem, self.next_index(spec.stem), naming.FORWARD)
        if self.filtered and not self.wanted(name):
            if mutates:
                self.guard(spec, args, kwargs)
            return original(*args, **kwargs)
        modes = self.modes
        record = ()
        if modes.forward and modes.input:
            record = ("input_args", self.input_args(args, name), "input_kwargs", self.encode(kwargs, name, "kwargs") if kwargs else {})
        backward = modes.backward and _grad_enabled() and self.wanted_backward(name)
        if backward:  # the call's tensors requiring grad, and where their gradients go before it changes any
            first = sequence_number()
            arguments = tensors_in(args, Tensor) + (tensors_in(kwargs, Tensor) if kwargs else [])
            grad_inputs = [arg for arg in arguments if arg.requires_grad]
            edges = input_edges(grad_inputs) if mutates and grad_inputs else None
        if mutates:
            self.guard(spec, args, kwargs)
        output = original(*args, **kwargs)
        parent = self.module_stack[-1] if self.module_stack else None
        if modes.forward:
            if modes.output:
                record += ("output", self._collective_output(args, kwargs, output, name)
                           if spec.mutation == MUTATES_ALL and args else self.outputs(output, name))
            self.add_record(name, record, parent, stacks.capture_stack(caller))
        if backward:
            self._hook_api_backward(name, parent, output, first, grad_inputs, edges)
        return output

    def _collective_output(self, args: tuple, kwargs: dict, output, name: str) -> tuple:
        """A collective's `output`: its tensor argument after a synchronous call that returns None; for an
        asynchronous one, that argument once its Work is done (waited for in this window, or finished by
        its end and not changed since; null otherwise); else what it returns."""
        if output is None and not kwargs.get("async_op"):
            return self.outputs(args[0], name)
        if not isinstance(output, _WORK):
            return self.outputs(output, name)
        self._unfinished = unfinished = []
        try:
            encoded = self.outputs(args[0], name)
        finally:
            self._unfinished = None
        if unfinished:
            self._async_results[id(output)] = (output, unfinished)
        return encoded

    def collective_done(self, work) -> None:
        """`work` was waited for: describe the result of the asynchronous collective that returned it."""
        pending = self._async_results.pop(id(work), None)  # the entry keeps its work alive: ids do not recur
        if pending is not None:
            self._describe_results(pending[1])

    def _describe_results(self, unfinished: list) -> None:
        self.stats.forget_states()  # backends write without bumping version counters
        for number, t, _, file_name in unfinished:
            if file_name is not None:
                self._data_names[number] = file_name
            self._entry_slots[number] = self.stats.slot(t, file_name)

    def _finish_collectives(self) -> None:
        """At the window's end: describe the results of collectives that finished unwaited, if unchanged."""
        pending, self._async_results = self._async_results, {}
        for work, unfinished in pending.values():
            if work.is_completed() and all(version is not None and version_of(t) == version
                                           for _, t, version, _ in unfinished):
                self._describe_results(unfinished)

    def guard(self, spec: ApiSpec, args: tuple, kwargs: dict) -> None:
        """Keep call-time values of the pending tensors this call may change in place."""
        before = self.stats.before_mutation
        if spec.mutation == MUTATES_ALL:
            self.stats.forget_states()
            targets = args
        elif spec.mutation == MUTATES_RUNNING_STATS:  # written without a version bump: share no earlier state
            self.stats.forget_states()
            position = spec.running_stats
            targets = (*args[position:position + 2], kwargs.get("running_mean"), kwargs.get("running_var"))
        else:
            targets = args[:1]
        if kwargs and "out" in kwargs:
            targets = (*targets, kwargs["out"])
        for target in targets:
            if isinstance(target, Tensor):
                before(target)
            elif isinstance(target, _SEQUENCES):
                for item in target:
                    if isinstance(item, Tensor):
                        before(item)

    def _hook_api_backward(self, name: str, parent: str | None, output, first: int, inputs: list,
                           edges: tuple | None) -> None:
        """Hook the backward record of a call whose autograd nodes start at number `first`; an output
        made before (an input returned unchanged) belongs to an earlier call."""
        outputs = [tensor for tensor in tensors_in(output, Tensor)
                   if (node := tensor.grad_fn) is not None and node._sequence_nr() >= first]
        if outputs:
            hook_backward(self, name, parent, first, inputs, outputs, edges)

    # ---- flush -------------------------------------------------------------------------------
    def close(self) -> None:
        """Move the statistics to the host (the step's one transfer) and hand the records to the writer
        thread, which fills in the statistics, encodes the JSON and writes the step's files."""
        self.closed = True
        self._finish_collectives()
        self.run_finalizers()
        self.walks = None  # they hold the step's autograd nodes
        stacks.release()
        host = self.stats.transfer()
        if self.stats.stale:
            warnings.warn(f"msprobe-kit: {len(self.stats.stale)} tensor(s) were changed in place by code capture "
                          "cannot see before the step ended; their statistics are left null", stacklevel=3)
        header = dump_header(self.config.task, self.config.level, self.config.framework, self.tensor_folder)
        write_step(self.folder, header, self.data, self.stack_items, self.construct_json(),
                   entries=self._entry_plan(host))

    def _entry_plan(self, host: HostStatistics) -> tuple:
        """What the writer needs to make every entry's JSON text (core.stats.planned_entry_texts)."""
        floats, ints, digests = host.rows()
        heads = [_head(key) for key in self.stats.layouts]  # per slot: (entry head text, 0-d)
        return (self.stats.kinds, self.stats.numels, [head[1] for head in heads], floats, ints,
                [head[0] for head in heads], self._entry_slots, self._entry_grads, self._extras(digests))

    def _extras(self, digests: dict[int, int]) -> list[bytes] | None:
        """Per entry, its data file (tensor mode) and md5 or hash text; None when there are none."""
        mode, names, md5 = self.config.summary_mode, self._data_names, self.stats.md5
        if not names and mode not in ("hash", "md5"):
            return None
        extras, stale = [], set(self.stats.stale)  # a stale tensor's data file is not written
        for number, slot in enumerate(self._entry_slots):
            extra = f', "{DATA_NAME}": {json.dumps(names[number])}' if number in names and slot not in stale else ""
            if mode == "hash" and slot in digests:
                extra += f', "{HASH}": "{hash_text(digests[slot])}"'
            elif mode == "md5" and slot in md5:
                extra += f', "{MD5}": "{md5_text(md5[slot])}"'
            extras.append(extra.encode())
        return extras


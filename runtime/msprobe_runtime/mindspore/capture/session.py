"""One MindSpore capture window (one step on one rank): encoding, API records, and the flush.

Names, filters, construct and stacks are core.records'; this module turns MindSpore values into msprobe's
JSON (tensors become statistic entries filled at `close()`, after the step's one transfer) and records
API calls. Everything the session runs itself is marked as inside a wrapped call, so it records nothing.
"""

from __future__ import annotations

import sys
import warnings

import mindspore as ms
import numpy as np
from mindspore.common.jit_context import jit_context

from msprobe_runtime.core import naming
from msprobe_runtime.core.config import DebuggerConfig
from msprobe_runtime.core.dump_writer import dump_header, step_folder, write_step
from msprobe_runtime.core.jsontext import json_value
from msprobe_runtime.core.records import StepRecords, capture_stack
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
    hash_text,
    md5_text,
)
from msprobe_runtime.mindspore.capture.api_wrap import MUTATES_ALL, ApiSpec
from msprobe_runtime.mindspore.capture.backward import hook_backward, recording_grad, tensors
from msprobe_runtime.mindspore.capture.stats import DEFAULT_BUDGET_BYTES, StatBuffer

TENSOR_TYPE = "mindspore.Tensor"  # msprobe's MindSpore spelling
_SCALARS = (bool, int, float, str)
_MAX_DEPTH = 32
_Tensor = ms.Tensor
_DTYPE = ms.dtype.Type  # the class of mindspore.float32 and the other dtypes


def _special(value):
    """msprobe's encodings of objects that are neither tensors nor plain values; None when unknown."""
    if isinstance(value, _DTYPE):
        return {"type": "mindspore.dtype", "value": str(value)}
    if value is Ellipsis:
        return {"type": "ellipsis", "value": "..."}
    if isinstance(value, np.generic):
        return {"type": type(value).__name__, "value": json_value(value.item())}
    return None


class CaptureSession(StepRecords):
    """Everything recorded between start() and stop() for one step on one rank."""

    def __init__(self, config: DebuggerConfig, step: int, rank: int, budget_bytes: int = DEFAULT_BUDGET_BYTES,
                 on_host: bool | None = None):
        super().__init__(config)
        self.folder = step_folder(config.dump_path, step, rank)
        self.tensor_folder = self.folder / naming.TENSOR_DATA_DIR if config.task == "tensor" else None
        self.stats = StatBuffer(config.summary_mode, self.folder if self.tensor_folder else None, budget_bytes,
                                on_host)
        self.module_frames: dict[int, list[dict]] = {}  # per cell: its calls still running
        self.parameter_grads: dict[int, tuple[int, dict]] = {}  # per cell: its open parameters_grad record
        self.closed = False
        self._fills: list[tuple[dict, int]] = []
        self._backward_calls: list[tuple] = []

    # ---- encoding ----------------------------------------------------------------------------
    def encode(self, value, record: str, category: str, path: tuple = (), depth: int = 0):
        """msprobe's JSON form of an argument or result; tensors get a statistics entry."""
        if isinstance(value, _Tensor):
            return self.tensor(value, record, category, path)
        if value is None:
            return None
        kind = type(value)
        if kind in _SCALARS:
            return {"type": kind.__name__, "value": json_value(value)}
        if kind is slice:
            return self.encode_slice(value, record, category, path, depth)
        if depth < _MAX_DEPTH:
            if isinstance(value, (list, tuple)):
                return [self.encode(item, record, category, (*path, index), depth + 1)
                        for index, item in enumerate(value)]
            if isinstance(value, dict):
                return {str(key): self.encode(item, record, category, (*path, key), depth + 1)
                        for key, item in value.items()}
        return _special(value)

    def tensor(self, t: ms.Tensor, record: str, category: str, path: tuple) -> dict:
        """A tensor's entry; its statistics (and data file) follow at close()."""
        entry = {TYPE: TENSOR_TYPE, DTYPE: None, SHAPE: None, MAX: None, MIN: None, MEAN: None, NORM: None,
                 REQUIRES_GRAD: None}  # described at the flush: reading anything of `t` now would wait for it
        file_name = None
        if self.tensor_folder is not None:
            file_name = entry[DATA_NAME] = naming.tensor_file_name(record, category, path)
        self._fills.append((entry, self.stats.slot(t, file_name)))
        return entry

    def outputs(self, value, record: str) -> list:
        """A call's result as msprobe's `output` list."""
        encoded = self.encode(value, record, "output")
        return encoded if isinstance(encoded, list) else [encoded]

    # ---- API calls ---------------------------------------------------------------------------
    def call_api(self, original, spec: ApiSpec, args: tuple, kwargs: dict):
        """Run one outermost API call and record it (or, at L0, only flush before in-place calls).

        Calls made while MindSpore compiles a graph (jit) run through unrecorded."""
        if jit_context() is not None:
            return original(*args, **kwargs)
        keep = self.records_apis and spec.recorded
        if keep:
            name = f"{spec.stem}.{self.next_index(spec.stem)}.forward"
            keep = not self.filtered or self.wanted(name)
        if not keep:
            if spec.mutation or "out" in kwargs:
                self.stats.flush()
            return original(*args, **kwargs)
        shown = args[1:] if spec.skip_self else args
        modes = self.modes
        record = {}
        if modes.forward and modes.input:
            record["input_args"] = self.encode(shown, name, "input")
            record["input_kwargs"] = self.encode(kwargs, name, "kwargs") if kwargs else {}
        if spec.mutation or "out" in kwargs:
            self.stats.flush()  # pending tensors are reduced before the call may change one of them
        output = original(*args, **kwargs)
        result = args[0] if spec.mutation == MUTATES_ALL and output is None and args else output
        if modes.forward:
            if modes.output:
                shown_result = [None if index in spec.unfilled else item for index, item in enumerate(result)] \
                    if spec.unfilled else result
                record["output"] = self.outputs(shown_result, name)
            self.add_record(name, record, self.parent(), capture_stack(sys._getframe()))
        if modes.backward and recording_grad() and self.wanted_backward(name):
            produced = [t for t in tensors(result) if not any(t is arg for arg in shown)]
            self.later_backward(naming.backward_of(name), _backward_parent(self.parent()), tensors(shown), produced)
        return output

    def later_backward(self, name: str, parent: str | None, inputs: list, outputs: list) -> None:
        """Remember a call whose backward record is wanted; its hooks go in when the backward pass starts.

        Reading a tensor's autograd node waits until the tensor is computed, so doing it here, call by
        call, would stop MindSpore's asynchronous pipeline after every call of the forward pass."""
        self._backward_calls.append((name, parent, inputs, outputs))

    def before_backward(self) -> None:
        """The backward pass is about to run: hook every call remembered since the last one."""
        calls, self._backward_calls = self._backward_calls, []
        for name, parent, inputs, outputs in calls:
            hook_backward(self, name, parent, inputs, outputs)

    # ---- flush -------------------------------------------------------------------------------
    def close(self) -> None:
        """Fill every statistic after one transfer and write the step's files."""
        self.closed = True
        self.run_finalizers()
        rows = self.stats.to_host()
        stats, mode = self.stats, self.config.summary_mode
        kinds, numels, md5, dtypes, shapes, flags = (stats.kinds, stats.numels, stats.md5, stats.dtypes, stats.shapes,
                                                     stats.requires_grad)
        for entry, slot in self._fills:
            row = rows[slot]
            entry[DTYPE], entry[SHAPE], entry[REQUIRES_GRAD] = dtypes[slot], shapes[slot], flags[slot]
            fill_statistics(entry, kinds[slot], numels[slot], row[0], row[1], row[2], row[3])
            if mode == "hash" and row[4] is not None:
                entry[HASH] = hash_text(row[4])
            elif mode == "md5" and slot in md5:
                entry[MD5] = md5_text(md5[slot])
        if not self.data and self.records_apis:
            warnings.warn("msprobe-kit: nothing was captured in this step: code compiled by mindspore.jit or "
                          "run in GRAPH_MODE is not visible to the capture", stacklevel=3)
        header = dump_header(self.config.task, self.config.level, self.config.framework, self.tensor_folder)
        write_step(self.folder, header, self.data, self.stack_items, self.construct_json())


def _backward_parent(parent: str | None) -> str | None:
    return naming.backward_of(parent) if parent else None

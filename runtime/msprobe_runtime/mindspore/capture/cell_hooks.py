"""L0 capture for MindSpore: every sub-cell's forward (inputs, kwargs, outputs, parameters), backward and
parameter gradients, as msprobe's `Cell.{path}.{Class}.forward.{n}` records, without changing training.

Forward records come from forward pre-hooks and hooks (with kwargs); backward records from hooks on the
cell's output tensors and on the autograd nodes that feed its inputs (capture.backward: no node is
added, unlike Cell.register_backward_hook, which msprobe uses); parameter gradients from tensor hooks on
the parameters. The hooks stay registered and do nothing outside a capture window.
"""

from __future__ import annotations

import sys
import threading
from functools import partial

from msprobe_runtime.core import naming
from msprobe_runtime.core.hooked import Hooked, taken
from msprobe_runtime.core.parameter_hooks import ParameterHooks
from msprobe_runtime.core.records import capture_stack
from msprobe_runtime.mindspore.capture.api_wrap import STATE
from msprobe_runtime.mindspore.capture.backward import recording_grad, tensors


class _Cell(Hooked):
    """What the hooks of one sub-cell need: the cell (`owner()`, None in a copy: see core.hooked), its path,
    class name, and the gradient hooks on its direct parameters (kept in step with the cell: see
    core.parameter_hooks)."""

    __slots__ = ("path", "class_name", "stem", "gradients")

    def __init__(self, path: str, cell):
        super().__init__(cell)
        self.path = path
        self.class_name = type(cell).__name__
        self.stem = f"{naming.CELL_PREFIX}.{path}.{self.class_name}.{naming.FORWARD}"
        self.gradients = ParameterHooks(self._hook_gradient)
        for name, parameter in cell._params.items():
            self.gradients.sync(name, parameter)

    def _hook_gradient(self, name: str, parameter):
        return parameter.register_hook(partial(_parameter_hook, self, name))


class CellHooks:
    """The hooks on one model's sub-cells (the root is not recorded, as in msprobe)."""

    def __init__(self, model, prefix: str = "", hooked: set[int] | None = None):
        """`prefix` starts every record's path (`"1."` for the second of several model chunks); cells whose
        ids are in `hooked` (hooked through another model) are left alone, and the ids of those hooked here
        are added to it."""
        self.model = model
        self.handles = []
        self.cells: list[_Cell] = []
        for path, cell in model.cells_and_names():
            if not path or taken(hooked, cell):
                continue
            info = _Cell(prefix + path, cell)
            self.handles.append(cell.register_forward_pre_hook(partial(_pre_hook, info), with_kwargs=True))
            self.handles.append(cell.register_forward_hook(partial(_forward_hook, info), with_kwargs=True,
                                                           always_call=True))  # also when construct raises
            self.cells.append(info)

    def remove(self) -> None:
        """Remove every hook."""
        for handle in self.handles:
            handle.remove()
        self.handles.clear()
        for info in self.cells:
            info.gradients.remove()


def _active():
    session = STATE.session
    if session is None or STATE.depth or not session.records_modules or threading.get_ident() != session.thread:
        return None
    return session


def _pre_hook(info: _Cell, cell, args, kwargs):
    session = _active()
    if session is None or cell is not info.owner():
        return
    STATE.depth = 1
    try:
        name = f"{info.stem}.{session.next_index(info.stem)}"
        frame = {"name": name, "parent": session.parent(), "wanted": session.wanted(name), "record": {}}
        modes = session.modes
        if frame["wanted"] and modes.forward:
            frame["stack"] = capture_stack(sys._getframe())
            if modes.input:
                frame["record"]["input_args"] = session.encode(args, name, "input")
                frame["record"]["input_kwargs"] = session.encode(kwargs, name, "kwargs")
            # before the call: it may update some in place (BatchNorm's moving statistics are parameters)
            frame["parameters"] = _parameters(session, info, cell, name)
        session.module_stack.append(name)
        session.module_frames.setdefault(id(info), []).append(frame)
    finally:
        STATE.depth = 0


def _forward_hook(info: _Cell, cell, args, kwargs, output):
    session = _active()
    if session is None or cell is not info.owner() or not session.module_frames.get(id(info)):
        return
    STATE.depth = 1
    try:
        frame = session.module_frames[id(info)].pop()
        name = frame["name"]
        if name in session.module_stack:
            session.module_stack.remove(name)
        if not frame["wanted"]:
            return
        modes, record = session.modes, frame["record"]
        if modes.forward:
            if modes.output:
                record["output"] = session.outputs(output, name)
            record["parameters"] = frame["parameters"]
            session.add_record(name, record, frame["parent"], frame["stack"])
        if session.wanted_backward(name) and recording_grad():
            inputs = tensors((args, kwargs))
            produced = [t for t in tensors(output) if not any(t is arg for arg in inputs)]
            parent = naming.backward_of(frame["parent"]) if frame["parent"] else None
            session.later_backward(naming.backward_of(name), parent, inputs, produced)
    finally:
        STATE.depth = 0


def _parameters(session, info: _Cell, cell, name: str) -> dict:
    """The `parameters` of a forward record: the cell's direct parameters as this call is given them (taken
    before it runs); one assigned or unfrozen since the last call gets its gradient hook now."""
    parameters = {}
    for key, value in cell._params.items():
        parameters[key] = session.tensor(value, name, "parameters", (key,))
        info.gradients.sync(key, value)
    return parameters


def _parameter_hook(info: _Cell, name: str, grad) -> None:
    session = _active()
    if session is None or session.closed or not session.modes.backward or grad is None or info.owner() is None:
        return  # (no owner: the hook of a copied cell's parameter)
    STATE.depth = 1
    try:
        index, record = session.parameter_grads.get(id(info), (-1, None))
        if record is None or name in record:
            index, record = index + 1, {}
            record_name = naming.params_grad_name(info.path, info.class_name, index, naming.CELL_PREFIX)
            if session.config.list and not any(item in record_name for item in session.config.list):
                return
            session.parameter_grads[id(info)] = (index, record)
            session.add_record(record_name, record, None, construct=False)
        record_name = naming.params_grad_name(info.path, info.class_name, index, naming.CELL_PREFIX)
        record[name] = [session.tensor(grad, record_name, name, ())]
    finally:
        STATE.depth = 0

"""L0 capture: every submodule's forward (inputs, kwargs, outputs, parameters), backward and parameter
gradients, recorded without changing a single bit of training.

msprobe uses full backward hooks, which wrap the module's inputs and outputs in extra autograd nodes;
that changes the order in which gradients are accumulated, and losses drift from about step 5. Here no
node is added: gradients of a module's outputs come from pre-hooks on the nodes that produced them
(tensor hooks for outputs without one); the module's own contribution to the gradients of its inputs
comes from post-hooks on the nodes created inside the module that feed those inputs (found by walking
the graph, bounded by autograd sequence numbers), summed on our side; parameter gradients come from
post-accumulate-grad hooks. Hooks only read gradients.
"""

from __future__ import annotations

import sys
from functools import partial

import torch

from msprobe_runtime.core import naming
from msprobe_runtime.core.call_gradients import CallGradients, tensors_in
from msprobe_runtime.pytorch.capture.api_wrap import STATE
from msprobe_runtime.pytorch.capture.stacks import capture_stack

_sequence_number = torch._C._autograd._get_sequence_nr
_compiling = torch.compiler.is_compiling
_grad_enabled = torch.is_grad_enabled
_ACCUMULATE_GRAD = torch._C._functions.AccumulateGrad  # the node of a leaf tensor
Tensor = torch.Tensor


class _Module:
    """What the hooks of one submodule need: its path, class name and direct parameters."""

    __slots__ = ("path", "class_name", "parameters", "stem", "has_inplace")

    def __init__(self, path: str, module: torch.nn.Module):
        self.path = path
        self.class_name = type(module).__name__
        self.parameters = tuple(module.named_parameters(recurse=False))
        self.stem = f"{naming.MODULE_PREFIX}.{path}.{self.class_name}.{naming.FORWARD}"
        self.has_inplace = hasattr(module, "inplace")  # nn.ReLU(inplace=True) and the like


class _Call:
    """One running forward call of a module: its record, until the forward hook completes it."""

    __slots__ = ("name", "parent", "wanted", "record", "sequence", "stack")

    def __init__(self, name: str, parent: str | None, wanted: bool):
        self.name, self.parent, self.wanted = name, parent, wanted
        self.record: dict = {}
        self.sequence = _sequence_number()
        self.stack = None


class ModuleHooks:
    """The hooks on one model's submodules (the root is not recorded, as in msprobe)."""

    def __init__(self, model: torch.nn.Module):
        self.model = model
        self.handles = []
        for path, module in model.named_modules():
            if not path:
                continue
            info = _Module(path, module)
            self.handles.append(module.register_forward_pre_hook(partial(_pre_hook, info), with_kwargs=True))
            self.handles.append(module.register_forward_hook(partial(_forward_hook, info), with_kwargs=True))
            for name, parameter in info.parameters:
                if parameter.requires_grad:
                    hook = partial(_parameter_hook, info, name)
                    self.handles.append(parameter.register_post_accumulate_grad_hook(hook))

    def remove(self) -> None:
        """Remove every hook."""
        for handle in self.handles:
            handle.remove()
        self.handles.clear()


def _active():
    session = STATE.session
    if session is None or STATE.depth or not session.records_modules or _compiling():
        return None
    return session


def _pre_hook(info: _Module, module, args, kwargs):
    session = _active()
    if session is None:
        return
    STATE.depth = 1
    try:
        name = naming.module_name(info.path, info.class_name, naming.FORWARD, session.next_index(info.stem))
        stack = session.module_stack
        call = _Call(name, stack[-1] if stack else None, not session.filtered or session.wanted(name))
        modes = session.modes
        if call.wanted and modes.forward:
            call.stack = capture_stack(sys._getframe())
            if modes.input:
                call.record["input_args"] = session.encode(args, name, "input")
                call.record["input_kwargs"] = session.encode(kwargs, name, "kwargs")
        if info.has_inplace and module.inplace:
            for tensor in tensors_in(args, Tensor):
                session.stats.before_mutation(tensor)
        stack.append(name)
        session.module_frames[id(info)].append(call)
    finally:
        STATE.depth = 0


def _forward_hook(info: _Module, module, args, kwargs, output):
    session = _active()
    if session is None or not session.module_frames[id(info)]:
        return
    STATE.depth = 1
    try:
        call = session.module_frames[id(info)].pop()
        name, stack = call.name, session.module_stack
        if stack and stack[-1] == name:
            stack.pop()
        elif name in stack:
            stack.remove(name)
        if not call.wanted:
            return
        modes, record = session.modes, call.record
        if modes.forward:
            if modes.output:
                record["output"] = session.outputs(output, name)
            record["parameters"] = {key: session.tensor(value, name, "parameters", (key,))
                                    for key, value in info.parameters}
            session.add_record(name, record, call.parent, call.stack)
        if session.wanted_backward(name) and _grad_enabled():
            _hook_backward(session, call, args, output)
    finally:
        STATE.depth = 0


def _parameter_hook(info: _Module, name: str, parameter) -> None:
    session = _active()
    if session is None or session.closed or not session.modes.backward:
        return
    grad = parameter.__dict__.get("main_grad")  # Megatron's; no attribute lookup that raises
    grad = parameter.grad if grad is None else grad
    if grad is None:
        return
    STATE.depth = 1
    try:
        index, record_name, record = session.parameter_grads.get(id(info), (-1, "", None))
        if record is None or name in record:  # a new record per module and accumulation
            index, record = index + 1, {}
            record_name = naming.params_grad_name(info.path, info.class_name, index)
            session.parameter_grads[id(info)] = (index, record_name, record)
            if session.config.list and not any(item in record_name for item in session.config.list):
                return
            session.add_record(record_name, record, None, construct=False)
        # C++ code (accumulation, DDP) may change .grad in place later: describe a copy taken now
        record[name] = (session.tensor(grad, record_name, name, (), snapshot=True),)
    finally:
        STATE.depth = 0


class _Gradients(CallGradients):
    """A module call's backward record; output gradients also arrive through pre-hooks on their nodes."""

    __slots__ = ()

    def output_grads(self, index: int, output_nr: int, grad_outputs) -> None:
        """Pre-hook on the node that produced output `index`: the gradient flowing into the module."""
        self.output_grad(index, grad_outputs[output_nr])


def _hook_backward(session, call: _Call, args, output) -> None:
    outputs = [tensor for tensor in tensors_in(output, Tensor) if tensor.requires_grad]
    if not outputs:
        return
    inputs = [tensor for tensor in tensors_in(args, Tensor) if tensor.requires_grad]
    parent = naming.backward_of(call.parent) if call.parent else None
    grads = _Gradients(session, STATE, naming.backward_of(call.name), parent, len(outputs), len(inputs))
    roots = []
    for index, tensor in enumerate(outputs):
        node = tensor.grad_fn
        if node is None:
            tensor.register_hook(partial(grads.output_grad, index))
        else:
            node.register_prehook(partial(grads.output_grads, index, tensor.output_nr))
            roots.append(node)
    if inputs and roots:
        for node, pairs in _edges_into(inputs, roots, call.sequence).items():
            for _, index in pairs:
                grads.expected[index] += 1
            node.register_hook(partial(grads.input_grads, pairs))
    session.on_close(grads.finish)


def _edges_into(inputs: list, roots: list, first_sequence: int) -> dict:
    """Nodes created inside the module (sequence number >= first_sequence) with edges into an input:
    {node: [(edge index, input index), ...]}."""
    targets, leaves = {}, {}
    for index, tensor in enumerate(inputs):
        if tensor.grad_fn is not None:  # a tensor passed twice: its whole contribution at its first place
            targets.setdefault((tensor.grad_fn, tensor.output_nr), index)
        else:
            leaves.setdefault(id(tensor), index)
    edges: dict = {}
    todo = [node for node in dict.fromkeys(roots) if node._sequence_nr() >= first_sequence]
    seen = set(todo)
    while todo:
        node = todo.pop()
        edge = -1
        for child, number in node.next_functions:
            edge += 1
            if child is None:
                continue
            index = targets.get((child, number))
            if index is None and leaves and child.__class__ is _ACCUMULATE_GRAD:
                index = leaves.get(id(child.variable))
            if index is not None:
                edges.setdefault(node, []).append((edge, index))
            elif child not in seen:
                seen.add(child)
                if child._sequence_nr() >= first_sequence:
                    todo.append(child)
    return edges

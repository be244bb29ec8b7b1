"""L0 capture: every submodule's forward (inputs, kwargs, outputs, parameters), backward and parameter
gradients, recorded without changing a single bit of training.

msprobe uses full backward hooks, which wrap the module's inputs and outputs in extra autograd nodes;
that changes the order in which gradients are accumulated, and losses drift from about step 5. Here no
node is added: a module call's backward record is read from the graph as an API call's is
(capture.backward). Hooks only read gradients.

Parameter gradients are read once per backward pass, after it (capture.engine): the ones it accumulated
into, found by their tensors' identities and version counters. That costs one Python call per pass
instead of one hook call per parameter. Where code may change a `.grad` during the pass, after its
accumulation (DDP's and FSDP's reducers, so whenever a process group is up; someone else's
post-accumulate-grad hook, such as an optimizer run in backward), each parameter gets a post-accumulate-grad
hook instead, which reads its gradient right after the accumulation.
"""

from __future__ import annotations

import sys
import warnings
from functools import partial

import torch

from msprobe_runtime.core import naming
from msprobe_runtime.core.call_gradients import tensors_in
from msprobe_runtime.core.hooked import Hooked, taken
from msprobe_runtime.core.parameter_hooks import ParameterHooks
from msprobe_runtime.pytorch.capture import engine, stacks
from msprobe_runtime.pytorch.capture.api_wrap import STATE, records_here
from msprobe_runtime.pytorch.capture.backward import hook_backward, sequence_number

_grad_enabled = torch.is_grad_enabled
Tensor = torch.Tensor
Parameter = torch.nn.Parameter


class _Module(Hooked):
    """What the hooks of one submodule need: the module (`owner()`, None in a copy: see core.hooked), its
    path, class name, and the gradient hooks on its direct parameters (kept in step with the module: see
    core.parameter_hooks)."""

    __slots__ = ("path", "class_name", "stem", "has_inplace", "gradients", "per_pass")

    def __init__(self, path: str, module: torch.nn.Module, per_pass: bool):
        super().__init__(module)
        self.path = path
        self.class_name = type(module).__name__
        self.stem = f"{naming.MODULE_PREFIX}.{path}.{self.class_name}.{naming.FORWARD}"
        self.has_inplace = hasattr(module, "inplace")  # nn.ReLU(inplace=True) and the like
        self.gradients = ParameterHooks(self._hook_gradient)
        self.per_pass = per_pass  # gradients read after each backward pass (else by a hook per parameter)
        if not per_pass:
            self.hook_gradients(module)

    def hook_gradients(self, module: torch.nn.Module) -> None:
        """Give each of the module's parameters its gradient hook (from now on, not read per pass)."""
        self.per_pass = False
        for name, parameter in module._parameters.items():
            if parameter is not None:
                self.gradients.sync(name, parameter)

    def _hook_gradient(self, name: str, parameter: torch.nn.Parameter):
        """The parameter's hook, put before the hooks it has (which may step an optimizer and drop the
        gradient): it only reads."""
        handle = parameter.register_post_accumulate_grad_hook(partial(_parameter_hook, self, name))
        hooks = parameter._post_accumulate_grad_hooks  # run in the order of the dict's own storage, which
        for key in [key for key in hooks if key != handle.id]:  # OrderedDict.move_to_end leaves as it was
            hooks[key] = hooks.pop(key)
        return handle


class _Call:
    """One running forward call of a module: its record, until the forward hook completes it."""

    __slots__ = ("name", "parent", "wanted", "record", "sequence", "stack")

    def __init__(self, name: str, parent: str | None, wanted: bool):
        self.name, self.parent, self.wanted = name, parent, wanted
        self.record: dict = {}
        self.sequence = sequence_number()
        self.stack = None


_PER_PASS: list[ModuleHooks] = []  # the hooks whose parameter gradients are read after each backward pass


class ModuleHooks:
    """The hooks on one model's submodules (the root is not recorded, as in msprobe)."""

    def __init__(self, model: torch.nn.Module, prefix: str = "", hooked: set[int] | None = None):
        """`prefix` starts every record's path (`"1."` for the second of several model chunks); submodules
        whose ids are in `hooked` (hooked through another model) are left alone, and the ids of those
        hooked here are added to it."""
        self.model = model
        self.handles = []
        self.modules: list[_Module] = []
        per_pass = not (torch.distributed.is_available() and torch.distributed.is_initialized())
        scripted = []
        for path, module in model.named_modules():
            if not path or taken(hooked, module):
                continue
            path = prefix + path
            if isinstance(module, torch.jit.ScriptModule):  # TorchScript runs it (and its submodules): no hooks
                if not scripted or not path.startswith(scripted[-1] + "."):
                    scripted.append(path)
                continue
            info = _Module(path, module, per_pass)
            self.handles.append(module.register_forward_pre_hook(partial(_pre_hook, info), with_kwargs=True))
            self.handles.append(module.register_forward_hook(partial(_forward_hook, info), with_kwargs=True,
                                                             always_call=True))  # also when forward raises
            self.modules.append(info)
        if per_pass:
            _PER_PASS.append(self)
            engine.install(_backward_pass)
        if scripted:
            warnings.warn(f"msprobe-kit: {len(scripted)} TorchScript submodule(s) cannot be hooked and are not "
                          f"recorded at L0/mix: {', '.join(scripted[:3])}{', ...' if len(scripted) > 3 else ''}",
                          stacklevel=4)

    def remove(self) -> None:
        """Remove every hook."""
        for handle in self.handles:
            handle.remove()
        self.handles.clear()
        for info in self.modules:
            info.gradients.remove()
        self._leave_per_pass()

    def gradient_states(self) -> list | None:
        """Per parameter that requires grad, in about the order a backward pass reaches them: (module info,
        name, parameter, gradient, its version counter) now; None when one has someone else's
        post-accumulate-grad hook, which may change its `.grad` before the pass ends."""
        states = []
        for info in reversed(self.modules):
            module = info.owner()
            if module is None:
                continue
            for name, parameter in module._parameters.items():
                if parameter is None or not parameter.requires_grad:
                    continue
                if parameter._post_accumulate_grad_hooks:
                    return None
                grad = _gradient(parameter)
                states.append((info, name, parameter, grad, -1 if grad is None else grad._version))
        return states

    def hook_each_parameter(self) -> None:
        """From now on, read each parameter's gradient with its own hook, right after its accumulation."""
        self._leave_per_pass()
        for info in self.modules:
            module = info.owner()
            if module is not None:
                info.hook_gradients(module)

    def _leave_per_pass(self) -> None:
        if self in _PER_PASS:
            _PER_PASS.remove(self)
            if not _PER_PASS:
                engine.uninstall()


def _active():
    session = STATE.session
    if session is None or STATE.depth or not session.records_modules or not records_here(session):
        return None
    return session


def _pre_hook(info: _Module, module, args, kwargs):
    session = _active()
    if session is None or module is not info.owner():
        return
    STATE.depth = 1
    try:
        name = f"{info.stem}.{session.next_index(info.stem)}"  # naming.module_name, its stem made once
        stack = session.module_stack
        call = _Call(name, stack[-1] if stack else None, not session.filtered or session.wanted(name))
        modes = session.modes
        if call.wanted and modes.forward:
            call.stack = stacks.capture_stack(sys._getframe())
            if modes.input:
                call.record["input_args"] = session.input_args(args, name)
                call.record["input_kwargs"] = session.encode(kwargs, name, "kwargs") if kwargs else {}
        if info.has_inplace and module.inplace:
            for tensor in tensors_in(args, Tensor):
                session.stats.before_mutation(tensor)
        stack.append(name)
        session.module_frames[id(info)].append(call)
    finally:
        STATE.depth = 0


def _forward_hook(info: _Module, module, args, kwargs, output):
    session = _active()
    if session is None or module is not info.owner() or not session.module_frames[id(info)]:
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
            record["parameters"] = _parameters(session, info, module, name)
            session.add_record(name, record, call.parent, call.stack)
        if session.wanted_backward(name) and _grad_enabled():
            _hook_backward(session, call, args, output)
    finally:
        STATE.depth = 0


def _parameters(session, info: _Module, module, name: str) -> dict:
    """The `parameters` of a forward record: the module's direct parameters as this call used them (after
    `load_state_dict(assign=True)`, a reassignment, or inside `torch.func.functional_call`); a parameter
    assigned or unfrozen since the last call gets its gradient hook now. Described anew at each call:
    between two calls (a GAN's discriminator, a module run per micro-batch) code may write a parameter
    through `p.data` (weight clipping, EMA), which its version counter does not show."""
    parameters = {}
    for key, value in module._parameters.items():
        if value is None:
            continue
        parameters[key] = session.tensor(value, name, "parameters", (key,), shared=False)
        if isinstance(value, Parameter) and not info.per_pass:  # functional_call's plain tensors get no .grad
            info.gradients.sync(key, value)
    return parameters


def _backward_pass():
    """Before a backward pass (capture.engine): the state of the gradients read per pass, and the function
    that records those the pass accumulated into (None when nothing is read)."""
    session = _active()
    if session is None or session.closed or not session.modes.backward:
        return None
    before = []
    for hooks in list(_PER_PASS):
        states = hooks.gradient_states()
        if states is None:
            hooks.hook_each_parameter()  # in time for this pass
        else:
            before.append(states)
    return partial(_record_accumulated, session, before) if before else None


def _record_accumulated(session, before: list) -> None:
    """After a backward pass: record each gradient it accumulated into (a new tensor, or a new version)."""
    if session.closed:
        return
    STATE.depth = 1
    try:
        for states in before:
            for info, name, parameter, grad, version in states:
                now = _gradient(parameter)
                if now is not None and (now is not grad or now._version != version):
                    _record_gradient(session, info, name, now)
    finally:
        STATE.depth = 0


def _parameter_hook(info: _Module, name: str, parameter) -> None:
    session = _active()
    if session is None or session.closed or not session.modes.backward:
        return
    module = info.owner()
    if module is None or module._parameters.get(name) is not parameter:  # a copied parameter's hook
        return
    grad = _gradient(parameter)
    if grad is None:
        return
    STATE.depth = 1
    try:
        _record_gradient(session, info, name, grad)
    finally:
        STATE.depth = 0


def _gradient(parameter):
    grad = parameter.__dict__.get("main_grad")  # Megatron's; no attribute lookup that raises
    return parameter.grad if grad is None else grad


def _record_gradient(session, info: _Module, name: str, grad) -> None:
    """Put a parameter's gradient in its module's open parameters_grad record (a new record per module and
    accumulation)."""
    index, record_name, record = session.parameter_grads.get(id(info), (-1, "", None))
    if record is None or name in record:
        index, record = index + 1, {}
        record_name = naming.params_grad_name(info.path, info.class_name, index)
        session.parameter_grads[id(info)] = (index, record_name, record)
        if session.config.list and not any(item in record_name for item in session.config.list):
            return
        session.add_record(record_name, record, None, construct=False)
    # C++ code (accumulation, DDP) may change .grad in place later: describe a copy taken now
    record[name] = (session.tensor(grad, record_name, name, (), snapshot=True),)


def _hook_backward(session, call: _Call, args, output) -> None:
    outputs = [tensor for tensor in tensors_in(output, Tensor) if tensor.requires_grad]
    if outputs:
        inputs = [tensor for tensor in tensors_in(args, Tensor) if tensor.requires_grad]
        hook_backward(session, call.name, call.parent, call.sequence, inputs, outputs)

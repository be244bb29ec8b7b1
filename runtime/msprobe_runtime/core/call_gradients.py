"""One call's backward record, filled as autograd hooks deliver its gradients (framework-free).

PyTorch's module hooks and MindSpore's API/cell backward capture read the same two things from their
autograd graphs: the gradients flowing into the call (hooks on its outputs: msprobe's backward `input`)
and its contribution to the gradients of its inputs (post-hooks on the nodes made during the call with
an edge into an input: msprobe's backward `output`), summed over those nodes. The framework finds the
nodes and registers the hooks; this class keeps the record.
"""

from __future__ import annotations


class CallGradients:
    """A backward record opened at the first gradient; `state` is the framework's capture state, whose
    `depth` marks the session's own work so the hooks' tensor calls are not recorded."""

    __slots__ = ("session", "state", "name", "parent", "record", "outputs", "inputs", "expected", "arrived", "sums")

    def __init__(self, session, state, name: str, parent: str | None, outputs: int, inputs: int):
        self.session, self.state, self.name, self.parent = session, state, name, parent
        self.record = None
        self.outputs, self.inputs = outputs, inputs
        self.expected = [0] * inputs  # per input: how many nodes contribute to its gradient
        self.arrived = [0] * inputs
        self.sums: list = [None] * inputs

    def _open(self) -> dict:
        if self.record is None:
            modes = self.session.modes
            self.record = {}
            if modes.input:
                self.record["input"] = [None] * self.outputs
            if modes.output:
                self.record["output"] = [None] * self.inputs
            self.session.add_record(self.name, self.record, self.parent)
        return self.record

    def output_grad(self, index: int, grad) -> None:
        """The gradient flowing into the call through output `index`."""
        if self.session.closed or self.state.depth:
            return
        self.state.depth = 1
        try:
            record = self._open()
            if "input" in record and grad is not None:
                record["input"][index] = self.session.tensor(grad, self.name, "input", (index,))
        finally:
            self.state.depth = 0

    def input_grads(self, pairs: list, grad_inputs, grad_outputs) -> None:
        """Node post-hook: this node's contributions (edge `grad_inputs`) to the gradients of the call's inputs."""
        if self.session.closed or self.state.depth:
            return
        self.state.depth = 1
        try:
            self._open()
            for edge, index in pairs:
                grad = grad_inputs[edge] if edge < len(grad_inputs) else None
                if grad is not None:
                    self.sums[index] = grad if self.sums[index] is None else self.sums[index] + grad
                self.arrived[index] += 1
                if self.arrived[index] == self.expected[index]:
                    self._emit(index)
        finally:
            self.state.depth = 0

    def _emit(self, index: int) -> None:
        grad, self.sums[index] = self.sums[index], None
        if grad is not None and "output" in self.record:
            self.record["output"][index] = self.session.tensor(grad, self.name, "output", (index,))

    def finish(self) -> None:
        """At close(): emit the sums whose last contribution never came (unused branches)."""
        if self.record is not None:
            for index in range(self.inputs):
                self._emit(index)

    def new_pass(self) -> None:
        """Another backward pass through the call (`retain_graph=True`, `autograd.grad`): finish the last
        one and count contributions afresh, so the record holds the latest pass, inputs and outputs alike
        (msprobe's record of a module's backward is also its last)."""
        self.finish()
        self.arrived = [0] * self.inputs


def tensors_in(value, tensor_class: type) -> list:
    """The `tensor_class` instances in a (nested list, tuple or dict) argument or result, in order."""
    if isinstance(value, tensor_class):
        return [value]
    if isinstance(value, dict):
        value = tuple(value.values())
    elif not isinstance(value, (list, tuple)):
        return []
    found = []
    for item in value:  # flat arguments, the common case, without a call per item
        if isinstance(item, tensor_class):
            found.append(item)
        elif isinstance(item, (list, tuple, dict)):
            found += tensors_in(item, tensor_class)
    return found

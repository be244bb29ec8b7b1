"""Backward records of an API or cell call, read from MindSpore's autograd graph without changing it.

MindSpore's PyNative autograd (2.x) exposes its graph as BackwardNodes (`tensor._grad_node`, with
`next_functions`, `register_hook` and a sequence number), like PyTorch's. A call's backward record holds
the gradients flowing into it (hooks on its output tensors: msprobe's backward `input`) and its own
contribution to the gradients of its inputs (msprobe's `output`): post-hooks on the nodes created during
the call that have edges into an input, found by walking from the outputs, summed by core's CallGradients. No node is added
to the graph (msprobe's cell backward hooks insert identity nodes), and hooks only read gradients.
"""

from __future__ import annotations

from collections import defaultdict
from functools import partial

import mindspore as ms
from mindspore.common.api import _pynative_executor

from msprobe_runtime.core.call_gradients import CallGradients, tensors_in
from msprobe_runtime.mindspore.capture.api_wrap import STATE

_LEAF_SEQUENCE = 2**64 - 1  # MindSpore's sequence number of leaf nodes (inputs, parameters)
recording_grad = _pynative_executor.requires_grad  # True while a grad function records the forward pass
# MindSpore marks every input of a grad function as taking part in autograd, integer ones too: only
# floating and complex inputs can receive gradients
_DIFFERENTIABLE = frozenset((ms.float16, ms.bfloat16, ms.float32, ms.float64, ms.complex64, ms.complex128))


def grad_node(t):
    """The tensor's autograd node, or None when it does not take part in autograd."""
    return t._grad_node if isinstance(t, ms.Tensor) else None


def tensors(value) -> list:
    """The MindSpore tensors in a (nested) argument or result, in order."""
    return tensors_in(value, ms.Tensor)


def hook_backward(session, name: str, parent: str | None, inputs: list, outputs: list) -> None:
    """Arrange for call `name`'s backward record; `inputs`/`outputs` are its tensors taking part in autograd."""
    outputs = [tensor for tensor in outputs if grad_node(tensor) is not None]
    if not outputs:
        return
    inputs = [tensor for tensor in inputs if grad_node(tensor) is not None and tensor.dtype in _DIFFERENTIABLE]
    grads = CallGradients(session, STATE, name, parent, len(outputs), len(inputs))
    for index, tensor in enumerate(outputs):  # removed at close: a Parameter a cell returns outlives the step
        session.on_close(tensor.register_hook(partial(grads.output_grad, index)).remove)
    for node, pairs in _edges_into(inputs, [grad_node(tensor) for tensor in outputs]).items():
        for _, index in pairs:
            grads.expected[index] += 1
        node.register_hook(partial(grads.input_grads, pairs))
    session.on_close(grads.finish)


def _edges_into(inputs: list, roots: list) -> dict:
    """Nodes created during the call with edges into an input: {node: [(edge index, input index), ...]}.

    Nodes created during the call have higher sequence numbers than the nodes of its inputs, so the walk
    from the outputs stops below that bound (and at leaves)."""
    targets: dict[tuple, int] = {}
    bound = -1
    for index, tensor in enumerate(inputs):
        node = tensor._grad_node
        targets.setdefault((node._unique_id(), tensor._output_index), index)  # a tensor passed twice: first place
        sequence = node._sequence_nr()
        if sequence != _LEAF_SEQUENCE:
            bound = max(bound, sequence)
    edges: dict = defaultdict(list)
    nodes: dict[int, object] = {}
    todo = []
    for root in roots:
        if root._sequence_nr() > bound and root._unique_id() not in nodes:
            nodes[root._unique_id()] = root
            todo.append(root)
    while todo:
        node = todo.pop()
        for edge, (child, number) in enumerate(node.next_functions):
            if child is None:
                continue
            key = child._unique_id()
            index = targets.get((key, number))
            if index is not None:
                edges[node._unique_id()].append((edge, index))
            elif key not in nodes and bound < child._sequence_nr() != _LEAF_SEQUENCE:
                nodes[key] = child
                todo.append(child)
    return {nodes[key]: pairs for key, pairs in edges.items()}

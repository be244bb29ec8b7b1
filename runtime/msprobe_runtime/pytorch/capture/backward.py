"""Backward records of a module or API call, read from PyTorch's autograd graph without changing it.

A call's backward record holds the gradients flowing into it (msprobe's backward `input`: read where
they arrive at the nodes that produced its outputs; tensor hooks on outputs without one) and its own
contribution to the gradients of its inputs (msprobe's `output`: read where they leave the nodes created
during the call that have an edge into an input, found by walking the graph from the outputs down to
the nodes made before the call; autograd sequence numbers tell them apart), summed by core's
CallGradients. Each such node gets one post-hook per call, which sees both. No node is added and hooks
only read gradients, so training is bit-identical with capture on.

msprobe reads an API's gradients from its first output's node alone. For a call that builds several
nodes (`F.cross_entropy`: log_softmax then nll_loss; `F.linear` on a 3-d input: a view, a matmul and
another view) that node's gradients are not those of the call's inputs (for `cross_entropy`: of the log
probabilities, not of the logits); here they are, in the order of the call's tensor arguments.

Walks are shared between nested calls (a module and the modules and API calls inside it, at L0 and
mix): a walk that reaches a node made by a call inside it, walked before, does not walk that call's
nodes again but goes on from the edges leaving them, which that call's walk kept. (A node made inside
that call and reached another way, an intermediate the inner module keeps, is walked as well: its
pairs come out the same either way.)
"""

from __future__ import annotations

from functools import partial

import torch

from msprobe_runtime.core import naming
from msprobe_runtime.core.call_gradients import CallGradients
from msprobe_runtime.pytorch.capture.api_wrap import STATE

try:  # the walk in C (_walk.c), where the package was built with a C compiler
    from msprobe_runtime.pytorch.capture import _walk
except ImportError:
    _walk = None

sequence_number = torch._C._autograd._get_sequence_nr  # the number the next autograd node will get
_graph_task = torch._C._current_graph_task_id  # which backward pass is running
_ACCUMULATE_GRAD = torch._C._functions.AccumulateGrad  # the node of a leaf tensor


class _Gradients(CallGradients):
    """A call's backward record; its hooks are post-hooks on autograd nodes (one per node), which see the
    gradients arriving at the node (for the call's outputs) and leaving it (for its inputs) at once."""

    __slots__ = ("graph_task", "output_nodes")

    def __init__(self, *args, output_nodes: bool):
        super().__init__(*args)
        self.graph_task = None  # the backward pass (autograd graph task) the record holds
        self.output_nodes = output_nodes  # whether the call's outputs were made by hooked nodes

    def node_grads(self, outputs: list, pairs: list, grad_inputs, grad_outputs) -> None:
        """Post-hook on a node: `outputs` are (output index, output_nr) of the call's outputs it made,
        `pairs` its (edge, input index) into the call's inputs. A pass starts at the nodes that made the
        outputs; one that reaches only nodes inside the call (a backward through the gradients of an
        earlier pass, made with `create_graph=True`: a WGAN-GP's gradient penalty) is not the call's
        backward and leaves its record as it was (msprobe's module hooks do not see it either)."""
        task = _graph_task()
        if task != self.graph_task:
            if not outputs and self.output_nodes:
                return
            if self.graph_task is not None:
                self.new_pass()
            self.graph_task = task
        for index, output_nr in outputs:
            self.output_grad(index, grad_outputs[output_nr])
        if pairs:
            self.input_grads(pairs, grad_inputs, grad_outputs)


def input_edges(inputs: list) -> tuple[dict, dict]:
    """Where the gradients of `inputs` leave a call: {(node, output_nr): input indices} for computed
    tensors, {id(tensor): input indices} for leaves (a tensor passed twice has two). Take them before a
    call that changes an input in place (it gets a new node)."""
    computed, leaves = {}, {}
    for index, tensor in enumerate(inputs):
        node = tensor.grad_fn
        if node is not None:
            computed.setdefault((node, tensor.output_nr), []).append(index)
        else:
            leaves.setdefault(id(tensor), []).append(index)
    return computed, leaves


def hook_backward(session, name: str, parent: str | None, first_sequence: int, inputs: list, outputs: list,
                  edges: tuple[dict, dict] | None = None) -> None:
    """Arrange for the backward record of the call recorded as `name` (inside `parent`, both forward
    names) whose first autograd node got `first_sequence`: `inputs` and `outputs` are its tensors that
    require grad; `edges` is `input_edges(inputs)` when taken before the call. Where the session keeps
    walks (`session.walks`: {node: the edges leaving the nodes of the call that made it}), this call's
    are kept too."""
    backward_parent = naming.backward_of(parent) if parent else None
    made: dict = {}  # node -> [(output index, output_nr), ...] of the outputs it made
    leaves = []  # (output index, tensor) of leaves returned as they are (a parameter, an input)
    for index, tensor in enumerate(outputs):
        node = tensor.grad_fn
        if node is None:
            leaves.append((index, tensor))
        else:
            made.setdefault(node, []).append((index, tensor.output_nr))
    grads = _Gradients(session, STATE, naming.backward_of(name), backward_parent, len(outputs), len(inputs),
                       output_nodes=bool(made))
    for index, tensor in leaves:  # a leaf outlives the step, its hook must not
        session.on_close(tensor.register_hook(partial(grads.output_grad, index)).remove)
    only = next(iter(made)) if len(made) == 1 else None
    walked = (only is None or len(made[only]) != len(outputs) or sequence_number() != first_sequence + 1
              or only._sequence_nr() != first_sequence)  # unless the call made one node (most APIs)
    found: dict = {}
    if inputs and made:
        edges = edges or input_edges(inputs)
        walks = session.walks
        found, exits = edges_into(edges, list(made), first_sequence, walked, walks)
        if exits is not None:
            for node in made:
                if node._sequence_nr() >= first_sequence:  # made by this call (not an input returned as it is)
                    walks[node] = exits
    for node in (*made, *(node for node in found if node not in made)):  # one hook per node
        pairs = found.get(node, ())
        for _, index in pairs:
            grads.expected[index] += 1
        handle = node.register_hook(partial(grads.node_grads, made.get(node, ()), pairs))
        if walked and node in made and node._sequence_nr() < session.first_sequence:  # made before the window
            session.on_close(handle.remove)  # (by code run once, say): it may outlive the step, its hook must not
    if walked:
        session.on_close(grads.finish)


def edges_into(edges: tuple[dict, dict], roots: list, first_sequence: int, walk: bool = True,
               walks: dict | None = None) -> tuple[dict, list | None]:
    """`_edges_into`, in C where it was built."""
    if _walk is None:
        return _edges_into(edges, roots, first_sequence, walk, walks)
    return _walk.edges_into(edges[0], edges[1], roots, first_sequence, walk, walks, _ACCUMULATE_GRAD)


def _edges_into(edges: tuple[dict, dict], roots: list, first_sequence: int, walk: bool = True,
                walks: dict | None = None) -> tuple[dict, list | None]:
    """Nodes created during the call (sequence number >= first_sequence) with edges into an input:
    {node: [(edge index, input index), ...]}, found by walking down from `roots` (with `walk` False, only
    the edges of `roots`, nodes the call made, are read); with `walks` ({node: exits} of calls walked
    before), also the edges leaving the call's nodes, [(node, [(edge index, (child, output_nr)), ...]),
    ...]. A tensor passed twice that a node takes twice (`x * x`) gets one edge per place, in order; the
    node's other edges go to its last place. One loop, no call per node: the walk visits every node of a
    module's call (dozens for a transformer block) that no walk of a call inside it visited."""
    computed, leaves = edges
    found: dict = {}
    exits = [] if walks is not None else None
    if walk:
        todo = [node for node in dict.fromkeys(roots) if node._sequence_nr() >= first_sequence]
        inside = dict.fromkeys(todo, True)  # node seen -> whether made during the call (then walked)
    else:  # one node, made by the call (most API calls)
        todo = list(roots)
        inside = None
    while todo:
        node = todo.pop()
        inner = walks.get(node) if walk and walks else None
        # made by a call inside this one: go on from the edges leaving its nodes
        groups = inner if inner is not None else ((node, enumerate(node.next_functions)),)
        for owner, owner_edges in groups:
            pairs = taken = leaving = None
            for item in owner_edges:
                edge, pair = item
                child = pair[0]
                if child is None:
                    continue
                if child.__class__ is _ACCUMULATE_GRAD:  # a leaf's node (a parameter's): nothing below it
                    indices = leaves.get(id(child.variable)) if leaves else None
                else:
                    indices = computed.get(pair)
                    if indices is None and walk:
                        made_here = inside.get(child)
                        if made_here is None:
                            made_here = inside[child] = child._sequence_nr() >= first_sequence
                            if made_here:
                                todo.append(child)
                        if made_here:
                            continue
                if exits is not None:  # an edge leaving the call's nodes
                    leaving = [] if leaving is None else leaving
                    leaving.append(item)
                if indices is None:
                    continue
                if pairs is None:
                    pairs = found[owner] = []
                if len(indices) == 1:
                    pairs.append((edge, indices[0]))
                    continue
                taken = {} if taken is None else taken
                place = taken[id(indices)] = taken.get(id(indices), -1) + 1
                pairs.append((edge, indices[min(place, len(indices) - 1)]))
            if leaving is not None:
                exits.append((owner, leaving))
    return found, exits

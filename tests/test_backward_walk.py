"""The walk over a call's autograd nodes that finds where its input gradients leave (capture.backward): the
compiled form (_walk.c) returns exactly what the Python one (the reference) returns, call for call, on
models whose graphs have every kind of edge: leaves and parameters, a tensor passed twice, inputs a
module returns unchanged, nested modules whose walks are reused, gradient checkpointing."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from capture_support import make_model, train_step, write_config
from msprobe_runtime.pytorch import PrecisionDebugger
from msprobe_runtime.pytorch.capture import backward
from torch.utils.checkpoint import checkpoint


class Mixed(torch.nn.Module):
    """Edges of every kind: x * x (one node, two places), q = k = v attention, an Identity returning its
    input, a checkpointed block, a GRU, a conv + batch norm."""

    def __init__(self):
        super().__init__()
        self.attn = torch.nn.MultiheadAttention(8, 2, batch_first=True)
        self.same = torch.nn.Identity()
        self.block = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.GELU(), torch.nn.Linear(8, 8))
        self.gru = torch.nn.GRU(8, 8, batch_first=True)
        self.conv = torch.nn.Sequential(torch.nn.Conv1d(8, 8, 3, padding=1), torch.nn.BatchNorm1d(8))

    def forward(self, x):
        x = self.same(x * x)
        x = x + self.attn(x, x, x, need_weights=False)[0]
        x = checkpoint(self.block, x, use_reentrant=False)
        x = self.gru(x)[0]
        return self.conv(x.transpose(1, 2)).sum() + torch.mul(x, x).mean()


@pytest.fixture
def compared(monkeypatch) -> list:
    """Every walk capture makes, run both ways; the list of calls compared."""
    if backward._walk is None:
        pytest.skip("the _walk extension was not built (no C compiler)")
    calls = []

    def both(edges, roots, first_sequence, walk=True, walks=None):
        reference = backward._edges_into(edges, roots, first_sequence, walk, walks)
        compiled = backward._walk.edges_into(edges[0], edges[1], roots, first_sequence, walk, walks,
                                             backward._ACCUMULATE_GRAD)
        assert compiled == reference
        calls.append(walk)
        return compiled

    monkeypatch.setattr(backward, "edges_into", both)
    return calls


@pytest.mark.parametrize("level", ["L0", "mix"])
def test_the_compiled_walk_finds_what_the_python_walk_finds(tmp_path, compared, level):
    debugger = PrecisionDebugger(config_path=write_config(tmp_path, level=level))
    mixed = Mixed()
    leaf = torch.randn(2, 5, 8, requires_grad=True)
    model, optimizer, tokens = make_model()
    for _ in range(2):
        with debugger.start([mixed, model]):
            mixed(leaf).backward()
            train_step(model, optimizer, tokens)
            F.linear(leaf, leaf[0, :2]).sum().backward()  # a leaf passed twice, at mix recorded as an API
    debugger.close()
    assert any(compared) and not all(compared)  # walked calls and single-node calls both ran


def test_bad_arguments_raise_instead_of_crashing():
    if backward._walk is None:
        pytest.skip("the _walk extension was not built (no C compiler)")
    inner = torch.ones(1, requires_grad=True) * 2
    node = (inner * 3).grad_fn
    with pytest.raises(TypeError):
        backward._walk.edges_into({}, {}, [node], 0, True, {node: [("not", "pairs", "at all")]},
                                  backward._ACCUMULATE_GRAD)
    with pytest.raises(TypeError):
        backward._walk.edges_into({(inner.grad_fn, 0): "not a list"}, {}, [node], 0, False, None,
                                  backward._ACCUMULATE_GRAD)
    with pytest.raises(AttributeError):
        backward._walk.edges_into({}, {}, [object()], 0, False, None, backward._ACCUMULATE_GRAD)

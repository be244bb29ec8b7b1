"""Capture is numerically neutral: losses and gradients are bit-identical with capture on, at every level."""

from __future__ import annotations

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F
from capture_support import (
    VOCAB,
    make_model,
    restore_torch,  # noqa: F401  (module-scoped autouse fixture)
    uninstall_wrappers,
    write_config,
)
from msprobe_runtime.pytorch import PrecisionDebugger

STEPS = 8


class Branchy(nn.Module):
    """One activation feeding four consumers (BatchNorm among them): accumulation order matters."""

    def __init__(self):
        super().__init__()
        self.a, self.b, self.c = nn.Linear(16, 16), nn.Linear(16, 16), nn.Linear(16, 16)
        self.bn = nn.BatchNorm1d(16)

    def forward(self, x):
        h = torch.tanh(self.a(x))
        return self.bn(h) + self.b(h) * self.c(h) + h


def _transformer():
    model, optimizer, tokens = make_model(seed=3)
    return model, optimizer, lambda: F.cross_entropy(model(tokens).reshape(-1, VOCAB), tokens.reshape(-1))


def _branchy():
    torch.manual_seed(5)
    model = Branchy()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)
    x = torch.randn(32, 16)
    return model, optimizer, lambda: (model(x) ** 2).mean()


def _train(build, debugger=None):
    """Losses and gradients of STEPS optimizer steps, capturing every step when a debugger is given."""
    model, optimizer, loss_of = build()
    history = []
    for _ in range(STEPS):
        if debugger is not None:
            debugger.start(model)
        loss = loss_of()
        loss.backward()
        history.append((loss.detach().clone(), [p.grad.clone() for p in model.parameters()]))
        optimizer.step()
        optimizer.zero_grad()
        if debugger is not None:
            debugger.stop()
            debugger.step()
    return history


@pytest.mark.parametrize("build", [_transformer, _branchy], ids=["transformer", "branchy"])
def test_losses_and_gradients_are_bit_identical(tmp_path, build):
    uninstall_wrappers()
    reference = _train(build)
    for level in ("L0", "L1", "mix"):
        debugger = PrecisionDebugger(config_path=write_config(tmp_path / level, level=level))
        captured = _train(build, debugger)
        debugger.close()
        for step, ((loss, grads), (loss_c, grads_c)) in enumerate(zip(reference, captured, strict=True)):
            assert torch.equal(loss, loss_c), (level, step, float(loss - loss_c))
            assert all(torch.equal(g, g_c) for g, g_c in zip(grads, grads_c, strict=True)), (level, step)
        assert (tmp_path / level / "dump" / f"step{STEPS - 1}" / "rank0" / "dump.json").exists()

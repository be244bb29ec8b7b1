"""Shared pieces of the MindSpore tests: a tiny network, a config writer, a dump reader.

Imported only by tests/test_mindspore_*.py, after `pytest.importorskip("mindspore")`.
"""

from __future__ import annotations

import json
from pathlib import Path

import mindspore as ms
import numpy as np
from mindspore import mint, nn, ops


class TinyNet(nn.Cell):
    """Dense (primitives), LayerNorm (a primitive), mint.nn.Linear, an ops function, Tensor operators."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Dense(8, 16)
        self.ln = nn.LayerNorm((16,))
        self.fc2 = mint.nn.Linear(16, 4)

    def construct(self, x):
        h = ops.gelu(self.fc1(x))
        return self.fc2(self.ln(h) + h * 2)


def batch():
    """A fixed (inputs, labels) batch."""
    rng = np.random.default_rng(0)
    return ms.Tensor(rng.standard_normal((4, 8)).astype(np.float32)), ms.Tensor(np.arange(4, dtype=np.int32))


def trainer(net, learning_rate=0.1):
    """(grad_fn, optimizer) for cross-entropy training of `net` with SGD."""
    optimizer = nn.SGD(net.trainable_params(), learning_rate=learning_rate)

    def loss_fn(x, y):
        return ops.cross_entropy(net(x), y)

    return ms.value_and_grad(loss_fn, None, optimizer.parameters), optimizer


def write_config(folder: Path, **top) -> Path:
    """A config.json in `folder` (dump_path inside it unless given)."""
    config = {"task": "statistics", "dump_path": str(folder / "dump"), **top}
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "config.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    return path


def dump(folder: Path, step: int = 0, rank: int = 0, name: str = "dump.json") -> dict:
    """One file of a step's dump, parsed."""
    return json.loads((folder / "dump" / f"step{step}" / f"rank{rank}" / name).read_text(encoding="utf-8"))

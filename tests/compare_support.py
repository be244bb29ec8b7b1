"""Shared by the compare tests: real dumps of a small model, written by our runtime, in variants.

`dump_run(folder, variant)` trains a two-layer network for `steps` steps under PrecisionDebugger and
returns the dump root. Variants: "base"; "gelu-tanh" (one argument changed: the injected change of
the worked example); "extra-call" (one more call in the forward pass); "dropout-seed" (dropout with
a different seed: a call whose inputs agree and whose outputs do not).
"""

from __future__ import annotations

import json
from pathlib import Path

import torch
from msprobe_runtime.pytorch import PrecisionDebugger
from torch import nn
from torch.nn import functional as F

HERE = Path(__file__)


class Net(nn.Module):
    def __init__(self, variant: str):
        super().__init__()
        self.variant = variant
        self.fc1 = nn.Linear(8, 16)
        self.fc2 = nn.Linear(16, 4)

    def forward(self, x):
        h = self.fc1(x)
        if self.variant == "gelu-tanh":
            h = F.gelu(h, approximate="tanh")  # MARK: changed argument
        else:
            h = F.gelu(h)
        if self.variant == "extra-call":
            h = h * 1.0  # MARK: extra call
        if self.variant == "dropout-seed":
            torch.manual_seed(1)
        h = F.dropout(h, p=0.25, training=self.training)  # MARK: dropout
        return self.fc2(h)


def line_of(marker: str) -> int:
    """The line of this file carrying `# MARK: marker`."""
    for number, text in enumerate(HERE.read_text().splitlines(), start=1):
        if f"# MARK: {marker}" in text:
            return number
    raise LookupError(marker)


def dump_run(folder: Path, variant: str = "base", steps: int = 1, summary_mode: str = "statistics",
             task: str = "statistics", level: str = "L1") -> Path:
    """Train under capture and return the dump root `folder/dump`."""
    config = {"task": task, "dump_path": str(folder / "dump"), "level": level, "step": list(range(steps)),
              task: {"summary_mode": summary_mode} if task == "statistics" else {}}
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(json.dumps(config))
    torch.manual_seed(0)
    model = Net(variant)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.linspace(-1, 1, 48).reshape(6, 8), torch.linspace(0, 1, 24).reshape(6, 4)
    debugger = PrecisionDebugger(config_path=str(folder / "config.json"))
    try:
        for _ in range(steps):
            torch.manual_seed(0)
            debugger.start(model)
            loss = F.mse_loss(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            debugger.stop()
            debugger.step()
    finally:
        debugger.close()
    return folder / "dump"

"""Reproducible, and drives its own PrecisionDebugger: msprobe-verify counts the debugger's steps."""

import torch
from msprobe_runtime.pytorch import PrecisionDebugger
from torch.nn import functional as F

torch.manual_seed(0)
model = torch.nn.Linear(4, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
debugger = PrecisionDebugger(dump_path="./never_written_by_verify", task="statistics", level="L1")
for step in range(3):
    debugger.start()
    loss = F.mse_loss(model(torch.ones(3, 4) * step), torch.zeros(3, 2))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    debugger.stop()
    debugger.step()

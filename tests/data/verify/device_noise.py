"""Hazard: a reduction whose summation order depends on how the device schedules it.

On a GPU, atomics in kernels such as index_add_ or a split-K matmul make this happen by themselves.
Here the CPU's thread count stands in for the scheduling: msprobe-verify numbers its runs in
MSPROBE_VERIFY_RUN, so the two runs reduce over different numbers of threads.
"""

import os

import torch
from torch.nn import functional as F

torch.manual_seed(0)
torch.set_num_threads(1 + int(os.environ.get("MSPROBE_VERIFY_RUN", "0")) % 2)
features = torch.randn(1 << 20)
weight = torch.zeros(1, requires_grad=True)
optimizer = torch.optim.SGD([weight], lr=0.1)
total = features.sum()  # HAZARD: the summation order follows the thread schedule
loss = F.mse_loss(weight * total, torch.ones(1))
optimizer.zero_grad()
loss.backward()
optimizer.step()

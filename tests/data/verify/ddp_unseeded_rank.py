"""Hazard under torchrun: every rank seeds its model, but rank 1 draws its batch from an unseeded generator.

Two ranks on gloo (CPU), DistributedDataParallel; launched as `torchrun --nproc_per_node 2 ...`.
"""

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel

dist.init_process_group("gloo")
torch.manual_seed(0)
model = DistributedDataParallel(nn.Sequential(nn.Linear(8, 16), nn.GELU(), nn.Linear(16, 1)))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
stray = torch.Generator().manual_seed(torch.seed())  # a fresh seed each run
for _ in range(3):
    if dist.get_rank() == 1:
        batch = torch.randn(4, 8, generator=stray)  # HAZARD: unseeded on rank 1
    else:
        batch = torch.ones(4, 8)
    loss = model(batch).pow(2).mean()
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
dist.destroy_process_group()

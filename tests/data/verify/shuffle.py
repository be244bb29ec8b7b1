"""Hazard: the weights start at zero (no random initialisation), but the loader shuffles unseeded."""

import torch
from torch import nn
from torch.nn import functional as F
from torch.utils.data import DataLoader, TensorDataset

model = nn.Linear(8, 1)
nn.init.zeros_(model.weight)
nn.init.zeros_(model.bias)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
data = TensorDataset(torch.linspace(-1, 1, 64 * 8).reshape(64, 8), torch.linspace(0, 1, 64).reshape(64, 1))
loader = DataLoader(data, batch_size=16, shuffle=True)
for x, y in loader:  # HAZARD: the shuffled order is drawn here, from the unseeded generator
    loss = F.mse_loss(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

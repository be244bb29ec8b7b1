"""Seeded everything: dropout, shuffling and initialisation all draw from seeded generators."""

import random

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F
from torch.utils.data import DataLoader, TensorDataset

random.seed(0)
np.random.seed(0)
torch.manual_seed(0)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.fc2 = nn.Linear(16, 1)

    def forward(self, x):
        return self.fc2(F.dropout(torch.relu(self.fc1(x)), p=0.2, training=self.training))


data = TensorDataset(torch.linspace(-1, 1, 64 * 8).reshape(64, 8), torch.linspace(0, 1, 64).reshape(64, 1))
loader = DataLoader(data, batch_size=16, shuffle=True, generator=torch.Generator().manual_seed(0))
model = Net()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for x, y in loader:
    loss = F.mse_loss(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

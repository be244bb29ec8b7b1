"""Hazard: no seed at all, so the layers are initialised differently in every run."""

import torch
from torch import nn
from torch.nn import functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 16)  # HAZARD: random initialisation, unseeded
        self.fc2 = nn.Linear(16, 1)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


x = torch.linspace(-1, 1, 32).reshape(4, 8)
y = torch.ones(4, 1)
model = Net()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(2):
    loss = F.mse_loss(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

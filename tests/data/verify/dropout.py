"""Hazard: deterministic weights and data, but an unseeded dropout mask in the forward pass."""

import torch
from torch import nn
from torch.nn import functional as F

torch.set_default_dtype(torch.float32)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.fc2 = nn.Linear(16, 1)
        for parameter in self.parameters():
            nn.init.constant_(parameter, 0.05)

    def forward(self, x):
        h = torch.relu(self.fc1(x))
        h = F.dropout(h, p=0.5, training=self.training)  # HAZARD: unseeded dropout mask
        return self.fc2(h)


x = torch.linspace(-1, 1, 32).reshape(4, 8)
y = torch.ones(4, 1)
model = Net()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
loss = F.mse_loss(model(x), y)
optimizer.zero_grad()
loss.backward()
optimizer.step()

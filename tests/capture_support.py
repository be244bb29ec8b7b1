"""Shared by the capture tests: a tiny transformer, a config writer, a dump reader, a training loop."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F
from msprobe_runtime.pytorch import PrecisionDebugger
from msprobe_runtime.pytorch.capture import api_wrap

VOCAB, WIDTH = 50, 32
# Tiny models run fastest on one thread (and a shared machine makes several threads spin-wait).
torch.set_num_threads(1)


class Block(nn.Module):
    def __init__(self, width: int = WIDTH, heads: int = 4):
        super().__init__()
        self.ln1 = nn.LayerNorm(width)
        self.attn = nn.MultiheadAttention(width, heads, batch_first=True)
        self.ln2 = nn.LayerNorm(width)
        self.fc1 = nn.Linear(width, 4 * width)
        self.fc2 = nn.Linear(4 * width, width)

    def forward(self, x):
        h = self.ln1(x)
        x = x + self.attn(h, h, h, need_weights=False)[0]
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))


class TinyTransformer(nn.Module):
    def __init__(self, blocks: int = 2, width: int = WIDTH):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, width)
        self.blocks = nn.ModuleList([Block(width) for _ in range(blocks)])
        self.head = nn.Linear(width, VOCAB)

    def forward(self, tokens):
        x = self.emb(tokens)
        for block in self.blocks:
            x = block(x)
        return self.head(x)


def make_model(seed: int = 0, blocks: int = 2):
    """A tiny transformer, its AdamW optimizer and one fixed batch of tokens."""
    torch.manual_seed(seed)
    model = TinyTransformer(blocks)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)
    tokens = torch.randint(0, VOCAB, (4, 8))
    return model, optimizer, tokens


def train_step(model, optimizer, tokens) -> torch.Tensor:
    """One forward, backward and optimizer step; returns the loss."""
    loss = F.cross_entropy(model(tokens).reshape(-1, VOCAB), tokens.reshape(-1))
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    return loss.detach()


def write_config(folder: Path, **fields) -> Path:
    """A config.json in `folder` dumping to folder/dump; `fields` override, a task section via `section`."""
    section = fields.pop("section", {})
    config = {"task": "statistics", "dump_path": str(folder / "dump"), "level": "L1", **fields}
    config[config["task"]] = section
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "config.json"
    path.write_text(json.dumps(config))
    return path


def load_dump(folder: Path, step: int = 0, rank: int = 0) -> tuple[dict, dict, dict]:
    """(dump.json, stack.json, construct.json) of one step and rank."""
    base = folder / "dump" / f"step{step}" / f"rank{rank}"
    return tuple(json.loads((base / name).read_text()) for name in ("dump.json", "stack.json", "construct.json"))


def capture(folder: Path, run, model=None, **fields) -> tuple[dict, dict, dict]:
    """Run `run()` inside one capture window with a fresh config; return step 0's files."""
    debugger = PrecisionDebugger(config_path=write_config(folder, **fields))
    try:
        debugger.start(model)
        run()
        debugger.stop()
    finally:
        debugger.close()
    return load_dump(folder)


def uninstall_wrappers() -> None:
    """Put torch's originals back (tests that compare against plain runs)."""
    api_wrap.uninstall()


@pytest.fixture(autouse=True, scope="module")
def restore_torch():
    """Imported by each capture test module: torch's originals are back once the module is done, so
    test modules that run later in the same process (dropout removal, seeding) see plain torch."""
    yield
    api_wrap.uninstall()

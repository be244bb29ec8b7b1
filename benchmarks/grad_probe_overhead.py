"""Gradient-probe overhead: the issue's 2-block transformer trained plain and with GradProbe, one thread.

Model: token embedding, 2 TransformerEncoderLayers (d=64, 4 heads), linear head; batch 8 x 16 tokens;
AdamW; CPU; torch.set_num_threads(1). The variants run interleaved in chunks (so a change of machine
load hits them alike); each chunk dumps into a fresh folder (as a run's new steps do) and ends with the
probe's files flushed, so the writer thread's work (statistics of CPU gradients, the CSV, one sign file
per parameter) is inside the time. Prints median wall time, process CPU time (all threads: training and
writer) and training-thread CPU time per step, their ratios to the plain step (medians of per-round
ratios, each against the plain chunk run just before), and the CPU time the probe's optimizer hook
takes on the training thread. File creation dominates the writer: `--dump-root /dev/shm` shows the
cost without the disk. Target (issue 3): <= 1.3x (msprobe 8.3.3's grad probe at L1: ~13-20 ms against
~4 ms plain).

    python benchmarks/grad_probe_overhead.py [--rounds 10] [--steps 20] [--dump-root DIR]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time

import torch
from msprobe_runtime.core.config import DebuggerConfig
from msprobe_runtime.pytorch.grad_probe import GradProbe
from torch import nn


class TinyTransformer(nn.Module):
    """Embedding, `blocks` encoder layers and a vocabulary head."""

    def __init__(self, vocab: int = 128, width: int = 64, heads: int = 4, blocks: int = 2):
        super().__init__()
        self.embed = nn.Embedding(vocab, width)
        self.blocks = nn.ModuleList(
            nn.TransformerEncoderLayer(width, heads, 4 * width, dropout=0.0, batch_first=True)
            for _ in range(blocks)
        )
        self.head = nn.Linear(width, vocab)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        hidden = self.embed(tokens)
        for block in self.blocks:
            hidden = block(hidden)
        return self.head(hidden)


class TimedProbe(GradProbe):
    """GradProbe that adds up the CPU time its optimizer hook takes on the training thread."""

    hook_seconds = 0.0

    def _on_optimizer_step(self, optimizer, args, kwargs) -> None:
        began = time.thread_time()
        super()._on_optimizer_step(optimizer, args, kwargs)
        TimedProbe.hook_seconds += time.thread_time() - began


class Variant:
    """One training setup (plain, or probed at one grad_level) that is timed in chunks of steps."""

    def __init__(self, level: str | None, dump_path: str):
        torch.manual_seed(0)
        self.level, self.dump_path = level, dump_path
        self.model = TinyTransformer()
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=1e-3)
        self.tokens = torch.randint(0, 128, (8, 16))
        self.targets = torch.randint(0, 128, (8, 16))
        self.wall: list[float] = []
        self.cpu: list[float] = []
        self.hook: list[float] = []
        self.main_cpu: list[float] = []

    def chunk(self, steps: int, record: bool) -> None:
        """Train `steps` steps (probe attached, files flushed at the end); record per-step times. Each
        chunk dumps into a new folder (removed afterwards, untimed), as a run's new steps would."""
        dump_path = tempfile.mkdtemp(dir=self.dump_path)
        config = DebuggerConfig(task="grad_probe", dump_path=dump_path, grad_level=self.level or "L1")
        probe = TimedProbe(config, self.model) if self.level else None
        TimedProbe.hook_seconds = 0.0
        wall, cpu, main_cpu = time.perf_counter(), time.process_time(), time.thread_time()
        for _ in range(steps):
            self.optimizer.zero_grad()
            loss = nn.functional.cross_entropy(self.model(self.tokens).flatten(0, 1), self.targets.flatten())
            loss.backward()
            self.optimizer.step()
        if probe is not None:
            probe.close()
        if record:
            self.wall.append((time.perf_counter() - wall) / steps)
            self.cpu.append((time.process_time() - cpu) / steps)
            self.hook.append(TimedProbe.hook_seconds / steps)
            self.main_cpu.append((time.thread_time() - main_cpu) / steps)
        shutil.rmtree(dump_path)


def main() -> None:
    """Print plain and probed step times (wall and process CPU, files flushed) and their ratios."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=10, help="chunks per variant, interleaved")
    parser.add_argument("--steps", type=int, default=20, help="steps per chunk")
    parser.add_argument("--dump-root", default=None, help="folder for the dumps (default: system temp)")
    args = parser.parse_args()
    torch.set_num_threads(1)
    with tempfile.TemporaryDirectory(dir=args.dump_root) as folder:
        variants = [Variant(level, folder) for level in (None, "L0", "L1", "L2")]
        for round_index in range(args.rounds + 1):  # round 0 warms up
            for variant in variants:
                variant.chunk(args.steps, record=round_index > 0)
    plain = variants[0]
    print(f"{'':8} {'wall ms/step':>12} {'ratio':>6} {'cpu ms/step':>12} {'ratio':>6} "
          f"{'training-thread cpu':>19} {'ratio':>6} {'hook cpu ms':>12}")
    for variant in variants:
        row = [variant.wall, variant.cpu, variant.main_cpu]
        medians = [statistics.median(times) * 1e3 for times in row]
        ratios = [statistics.median(a / b for a, b in zip(mine, base, strict=True))
                  for mine, base in zip(row, [plain.wall, plain.cpu, plain.main_cpu], strict=True)]
        name = f"grad {variant.level}" if variant.level else "plain"
        print(f"{name:8} {medians[0]:12.2f} {ratios[0]:5.2f}x {medians[1]:12.2f} {ratios[1]:5.2f}x "
              f"{medians[2]:19.2f} {ratios[2]:5.2f}x {statistics.median(variant.hook) * 1e3:12.2f}")

if __name__ == "__main__":
    main()

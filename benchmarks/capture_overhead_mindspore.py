"""Capture overhead on MindSpore: the same training step plain and under msprobe-kit's MindSpore
PrecisionDebugger (L0, L1, mix, grad probe), each configuration in a fresh interpreter.

The model matches the PyTorch benchmark's (benchmarks/capture_overhead.py): a 2-block transformer (d=64,
4 heads, hand-written attention), a batch of 8 x 16 tokens, AdamW (nn.AdamWeightDecay), PyNative mode on
the CPU. Reported per configuration: the median and fastest step (wall clock) and the median's ratio to
the plain step's; the median CPU time of the process (all threads, including the writer) and its ratio;
the resident memory growth between the end of the warm-up and the last step. MindSpore's CPU kernels are
slow and their thread pools make wall times noisy on a shared machine: the CPU-time ratio is steadier.

    python benchmarks/capture_overhead_mindspore.py [--steps 10] [--warmup 3] [--rounds 1]
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import tempfile

from overhead_harness import run_worker, time_steps, write_config

CONFIGS = {  # name: (task, level); None: no debugger
    "plain": (None, None),
    "msprobe-kit L0": ("statistics", "L0"),
    "msprobe-kit L1": ("statistics", "L1"),
    "msprobe-kit mix": ("statistics", "mix"),
    "msprobe-kit grad_probe L1": ("grad_probe", "L1"),
}


def _model():
    import mindspore as ms
    import numpy as np
    from mindspore import mint, nn, ops

    class Attention(nn.Cell):
        def __init__(self, d, heads):
            super().__init__()
            self.heads, self.qkv, self.proj = heads, mint.nn.Linear(d, 3 * d), mint.nn.Linear(d, d)

        def construct(self, x):
            b, t, d = x.shape
            qkv = self.qkv(x).reshape(b, t, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
            scores = ops.matmul(qkv[0], qkv[1].swapaxes(-2, -1)) / math.sqrt(d // self.heads)
            out = ops.matmul(ops.softmax(scores, axis=-1), qkv[2])
            return self.proj(out.permute(0, 2, 1, 3).reshape(b, t, d))

    class Block(nn.Cell):
        def __init__(self, d=64, heads=4):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm((d,), epsilon=1e-5), nn.LayerNorm((d,), epsilon=1e-5)
            self.attn = Attention(d, heads)
            self.fc1, self.fc2 = mint.nn.Linear(d, 4 * d), mint.nn.Linear(4 * d, d)

        def construct(self, x):
            x = x + self.attn(self.ln1(x))
            return x + self.fc2(ops.gelu(self.fc1(self.ln2(x)), approximate="none"))

    class Net(nn.Cell):
        def __init__(self, vocab=100, d=64):
            super().__init__()
            self.emb = nn.Embedding(vocab, d)
            self.blocks = nn.CellList([Block(d), Block(d)])
            self.head = mint.nn.Linear(d, vocab)

        def construct(self, tokens):
            x = self.emb(tokens)
            for block in self.blocks:
                x = block(x)
            return self.head(x)

    ms.set_context(mode=ms.PYNATIVE_MODE)
    ms.set_seed(0)
    model = Net()
    optimizer = nn.AdamWeightDecay(model.trainable_params())
    tokens = ms.Tensor(np.random.default_rng(0).integers(0, 100, (8, 16)).astype(np.int32))

    def loss_fn(tokens):
        return ops.cross_entropy(model(tokens).reshape(-1, 100), tokens.reshape(-1))

    grad_fn = ms.value_and_grad(loss_fn, None, optimizer.parameters)

    def step():
        loss, grads = grad_fn(tokens)
        optimizer(grads)
        loss.asnumpy()  # the step is over when its loss is known

    return model, optimizer, step


def _debugger(task: str, level: str, folder: str):
    from msprobe_runtime.mindspore import PrecisionDebugger

    return PrecisionDebugger(config_path=write_config(folder, task, level))


def worker(name: str, steps: int, warmup: int) -> dict:
    """Time `steps` captured steps of one configuration (run in a fresh interpreter)."""
    task, level = CONFIGS[name]
    model, optimizer, step = _model()
    with tempfile.TemporaryDirectory() as folder:
        debugger = _debugger(task, level, folder) if task else None
        if task == "grad_probe":
            debugger.monitor(optimizer)
        return time_steps(model, step, debugger, steps, warmup)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=10, help="timed steps per configuration")
    parser.add_argument("--warmup", type=int, default=3, help="untimed steps first")
    parser.add_argument("--rounds", type=int, default=1, help="runs of every configuration, interleaved")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print("RESULT " + json.dumps(worker(args.worker, args.steps, args.warmup)))
        return 0
    results: dict[str, list[dict]] = {name: [] for name in CONFIGS}
    for _ in range(args.rounds):
        for name in CONFIGS:
            result = run_worker(__file__, name, args.steps, args.warmup)
            if result is not None:
                results[name].append(result)
    rows = {name: {"median": statistics.median(statistics.median(run["wall"]) for run in runs) * 1e3,
                   "fastest": min(min(run["wall"]) for run in runs) * 1e3,
                   "cpu": statistics.median(statistics.median(run["cpu"]) for run in runs) * 1e3,
                   "rss": max(run["rss_growth"] for run in runs) / 2**20}
            for name, runs in results.items() if runs}
    if "plain" not in rows:
        print("the plain configuration failed: no ratios", file=sys.stderr)
        return 2
    plain, plain_cpu = rows["plain"]["median"], rows["plain"]["cpu"]
    print(f"{'configuration':28} {'median ms':>10} {'fastest ms':>11} {'x plain':>8} {'cpu ms':>8} {'x cpu':>6} "
          f"{'RSS +MiB':>9}")
    for name, row in rows.items():
        print(f"{name:28} {row['median']:10.2f} {row['fastest']:11.2f} {row['median'] / plain:8.2f} "
              f"{row['cpu']:8.2f} {row['cpu'] / plain_cpu:6.2f} {row['rss']:9.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Capture overhead: the same training step plain, under msprobe-kit's PrecisionDebugger (L0, L1, mix,
grad probe) and, when `msprobe` (mindstudio-probe) imports, under msprobe's, in one run.

The model is the runtime issue's: a 2-block transformer (d=64, 4 heads), a batch of 8 x 16 tokens,
AdamW, on the CPU with one thread. Every configuration runs in its own fresh interpreter, once per
round, the rounds interleaved (so a change of machine load hits every configuration alike); each
captures every step it times. Three clocks per step: the CPU time of the training thread
(`time.thread_time`: the steadiest on a shared machine, and what a step costs the training loop), the
CPU time of the whole process (all threads: it also counts the background writer, which encodes and
writes the files) and the wall clock. Each ratio to the plain step is the median over rounds of the
ratio of the round's medians, so it compares runs made minutes apart at most. `thread +ms` is the time
capture adds to the training thread's step (median over rounds of the difference): on a shared machine
it moves less than the plain step does, whose kernels slow down when the host is busy, so the ratios
are read with the plain step's range, printed last. Also reported: the resident memory growth between the end of the warm-up and the last step (largest over the rounds), and
`sleeps`: how often the training thread slept per step (Linux; median over rounds). A plain step never
sleeps; under capture the sleeps are mostly waits for the GIL while the writer thread holds it, each a
hand-over that costs the training thread time, so they show contention that the noisy clocks hide.
Creating files costs kernel time that depends on the file system (one inode per file: the grad probe
makes one per parameter and step); `--dump-root /dev/shm` shows the cost without the disk.

    python benchmarks/capture_overhead.py                      # msprobe-kit only
    python benchmarks/capture_overhead.py --dump-root /dev/shm # the same, dumping to memory
    /path/to/venv-with-mindstudio-probe/bin/python benchmarks/capture_overhead.py   # both
    python benchmarks/capture_overhead.py --baseline /tmp/old/runtime   # against another checkout, same rounds
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile

from overhead_harness import run_worker, time_steps, write_config

CONFIGS = {  # name: (tool, task, level)
    "plain": (None, None, None),
    "msprobe-kit L0": ("ours", "statistics", "L0"),
    "msprobe-kit L1": ("ours", "statistics", "L1"),
    "msprobe-kit mix": ("ours", "statistics", "mix"),
    "msprobe-kit grad_probe L1": ("ours", "grad_probe", "L1"),
    "msprobe L0": ("msprobe", "statistics", "L0"),
    "msprobe L1": ("msprobe", "statistics", "L1"),
    "msprobe mix": ("msprobe", "statistics", "mix"),
}  # msprobe 26.x has no grad_probe task any more (it was msprobe 8.x's)
_BASELINE = "baseline "  # msprobe-kit's configurations run from the --baseline checkout


def _model(d: int = 64):
    """The runtime issue's model (`d` wide unless told otherwise) and its training step."""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    class Block(nn.Module):
        def __init__(self, d=64, heads=4):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
            self.attn = nn.MultiheadAttention(d, heads, batch_first=True)
            self.fc1, self.fc2 = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

        def forward(self, x):
            h = self.ln1(x)
            x = x + self.attn(h, h, h, need_weights=False)[0]
            return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))

    class Net(nn.Module):
        def __init__(self, vocab=100):
            super().__init__()
            self.emb = nn.Embedding(vocab, d)
            self.blocks = nn.ModuleList([Block(d), Block(d)])
            self.head = nn.Linear(d, vocab)

        def forward(self, tokens):
            x = self.emb(tokens)
            for block in self.blocks:
                x = block(x)
            return self.head(x)

    torch.manual_seed(0)
    model = Net()
    optimizer = torch.optim.AdamW(model.parameters())
    tokens = torch.randint(0, 100, (8, 16))

    def step():
        loss = F.cross_entropy(model(tokens).reshape(-1, 100), tokens.reshape(-1))
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()

    return model, step


def _debugger(tool: str, task: str, level: str, folder: str):
    path = write_config(folder, task, level)
    if tool == "ours":
        from msprobe_runtime.pytorch import PrecisionDebugger
    else:
        from msprobe.pytorch import PrecisionDebugger
    return PrecisionDebugger(config_path=path)


def worker(name: str, steps: int, warmup: int, dump_root: str | None = None) -> dict:
    """Time `steps` captured steps of one configuration (run in a fresh interpreter)."""
    import torch

    torch.set_num_threads(1)
    tool, task, level = CONFIGS[name.replace(_BASELINE, "msprobe-kit ", 1)]
    model, step = _model()
    with tempfile.TemporaryDirectory(dir=dump_root) as folder:
        debugger = _debugger(tool, task, level, folder) if tool else None
        if debugger is not None and task == "grad_probe":
            debugger.monitor(model)
        return time_steps(model, step, debugger, steps, warmup)


def _msprobe_importable() -> bool:
    try:
        import msprobe.pytorch  # noqa: F401
    except Exception:  # any import failure means: not available here
        return False
    return True


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=30, help="timed steps per configuration")
    parser.add_argument("--warmup", type=int, default=10, help="untimed steps first")
    parser.add_argument("--rounds", type=int, default=5, help="runs of every configuration, interleaved")
    parser.add_argument("--only", nargs="+", choices=list(CONFIGS), help="these configurations (plain is always run)")
    parser.add_argument("--dump-root", help="folder for the dumps (default: the system's temporary folder)")
    parser.add_argument("--baseline", metavar="DIR", help="also run msprobe-kit's configurations with DIR (another "
                        "checkout's runtime/ folder) first on PYTHONPATH, as 'baseline ...', in the same rounds")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print("RESULT " + json.dumps(worker(args.worker, args.steps, args.warmup, args.dump_root)))
        return 0
    names = [name for name, (tool, _, _) in CONFIGS.items() if (tool != "msprobe" or _msprobe_importable())
             and (not args.only or name == "plain" or name in args.only)]
    if args.baseline:
        names += [name.replace("msprobe-kit ", _BASELINE, 1) for name in names if name.startswith("msprobe-kit ")]
    rounds: list[dict[str, dict]] = []
    for _ in range(args.rounds):
        extra = ("--dump-root", args.dump_root) if args.dump_root else ()
        results = {name: run_worker(__file__, name, args.steps, args.warmup, *extra,
                                    first_path=args.baseline if name.startswith(_BASELINE) else None)
                   for name in names}
        if results["plain"] is not None:
            rounds.append({name: result for name, result in results.items() if result is not None})
    clocks = ("thread", "cpu", "wall")
    print(f"{'configuration':26}" + "".join(f" {clock + ' ms':>10} {'x plain':>8}" for clock in clocks)
          + f" {'thread +ms':>10} {'RSS +MiB':>9} {'sleeps':>7}")
    for name in names:
        runs = [(result[name], result["plain"]) for result in rounds if name in result]
        if not runs:
            continue
        cells = []
        for clock in clocks:
            ms = statistics.median(statistics.median(run[clock]) for run, _ in runs) * 1e3
            ratio = statistics.median(statistics.median(run[clock]) / statistics.median(plain[clock])
                                      for run, plain in runs)
            cells.append(f" {ms:10.2f} {ratio:8.2f}")
        added = statistics.median(statistics.median(run["thread"]) - statistics.median(plain["thread"])
                                  for run, plain in runs) * 1e3
        cells.append(f" {added:10.2f}")
        rss = max(run["rss_growth"] for run, _ in runs) / 2**20
        sleeps = [run["sleeps"] for run, _ in runs if run.get("sleeps") is not None]
        print(f"{name:26}" + "".join(cells) + f" {rss:9.2f}" + (f" {statistics.median(sleeps):7.1f}" if sleeps else ""))
    plain_ms = [statistics.median(result["plain"]["thread"]) * 1e3 for result in rounds]
    print(f"({len(rounds)} rounds of {args.steps} timed steps after {args.warmup} warm-up steps; medians; "
          f"the plain step's thread time ranged {min(plain_ms):.2f}-{max(plain_ms):.2f} ms over the rounds)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""How long capture takes to describe one step's tensors on the CPU: the compiled one-pass reducer
(core._hoststats, each tensor described when it is recorded) against torch's batched reductions (tensors
kept pending, stacked per shape and reduced at the end of the step), in one run.

The tensors are those an L1 capture of capture_overhead.py's model describes in one step (shapes and
counts taken from that model's AdamW step: parameters, optimizer states, activations). Each round
records every tensor once into a fresh StatBuffer and then makes the step's transfer; between rounds
the tensors are rewritten, so they come from memory as in training, not from the cache of the last round.

    python benchmarks/capture_statistics_speed.py
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import torch
from msprobe_runtime.pytorch.capture import stats as stats_module

SHAPES = {(64,): 152, (): 56, (8, 16, 64): 26, (100, 64): 25, (192, 64): 24, (192,): 24, (64, 64): 24,
          (256, 64): 24, (256,): 24, (64, 256): 24, (100,): 12, (16, 8, 64): 8, (8, 16, 256): 8}


def _describe(tensors: list[torch.Tensor]) -> float:
    """Seconds to record every tensor and make the step's transfer (as a capture window does)."""
    started = time.perf_counter()
    buffer = stats_module.StatBuffer()
    for tensor in tensors:
        buffer.slot(tensor)
    buffer.transfer().rows()
    return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=200)
    args = parser.parse_args()
    if stats_module._describe is None:
        print("the _describe extension was not built (no C compiler): nothing to compare")
        return 1
    torch.set_num_threads(1)
    tensors = [torch.randn(shape) for shape, count in SHAPES.items() for _ in range(count)]
    compiled = stats_module._describe
    times: dict[str, list[float]] = {"one pass when recorded (C)": [], "batched torch reductions": []}
    for _ in range(args.rounds):
        for label, reducer in zip(times, (compiled, None), strict=True):
            for tensor in tensors:
                tensor.mul_(1.0)  # touch every tensor: its data comes from memory, as in a training step
            stats_module._describe = reducer
            times[label].append(_describe(tensors))
    stats_module._describe = compiled
    elements = sum(tensor.numel() for tensor in tensors)
    print(f"{len(tensors)} tensors, {elements} elements (float32), {args.rounds} rounds, medians:")
    medians = {label: statistics.median(values) for label, values in times.items()}
    for label, median in medians.items():
        print(f"  {label:28} {median * 1e3:7.3f} ms")
    one_pass, batched = medians.values()
    print(f"  batched / one pass: {batched / one_pass:.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())

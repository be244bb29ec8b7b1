"""What capture costs Python's garbage collector: collections per step of each generation, and their time.

A step's records live until the writer thread has written them, so whatever of them the collector tracks
outlives young collections and is promoted; enough promoted objects trigger a full collection, which
traces the whole heap (torch alone brings some 300,000 objects). The benchmark model of
`capture_overhead.py` is trained for `--steps` captured steps after a warm-up, in one interpreter per
level, counting collections with `gc.callbacks`.

    python benchmarks/capture_gc.py --steps 400
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
import tempfile
import time
from collections import defaultdict

from capture_overhead import _debugger, _model
from overhead_harness import captured_step, run_worker


class _Collections:
    """Per generation: [collections, seconds, objects freed], counted through `gc.callbacks`."""

    def __init__(self):
        self.totals: dict[int, list] = defaultdict(lambda: [0, 0.0, 0])
        self._started = 0.0

    def __call__(self, phase: str, info: dict) -> None:
        if phase == "start":
            self._started = time.perf_counter()
            return
        totals = self.totals[info["generation"]]
        totals[0] += 1
        totals[1] += time.perf_counter() - self._started
        totals[2] += info["collected"]


def worker(level: str, steps: int, warmup: int) -> dict:
    """Collections per generation (count, seconds, objects freed) over `steps` captured steps."""
    import torch

    torch.set_num_threads(1)
    model, step = _model()
    counter = _Collections()
    with tempfile.TemporaryDirectory() as folder:
        debugger = _debugger("ours", "statistics", level, folder) if level != "plain" else None
        for index in range(warmup + steps):
            if index == warmup:
                gc.callbacks.append(counter)
            captured_step(model, step, debugger)
        gc.callbacks.remove(counter)
        if debugger is not None:
            debugger.close()
    return {"objects": len(gc.get_objects()), "collections": {str(k): v for k, v in sorted(counter.totals.items())}}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=400)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print("RESULT " + json.dumps(worker(args.worker, args.steps, args.warmup)))
        return 0
    print(f"{args.steps} captured steps per level after {args.warmup} warm-up steps")
    print(f"{'level':6} {'objects':>8} {'gen':>4} {'per step':>9} {'ms each':>8} {'ms/step':>8} {'freed each':>11}")
    for level in ("plain", "L0", "L1", "mix"):
        result = run_worker(__file__, level, args.steps, args.warmup)
        if result is None:
            return 1
        rows = result["collections"].items() or [("-", [0, 0.0, 0])]
        for generation, (count, seconds, freed) in rows:
            print(f"{level:6} {result['objects']:8d} {generation:>4} {count / args.steps:9.2f} "
                  f"{seconds / max(count, 1) * 1e3:8.2f} {seconds / args.steps * 1e3:8.3f} {freed / max(count, 1):11.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

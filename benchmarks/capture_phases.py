"""Where capture's time goes: the training step of capture_overhead.py cut into its phases (start, forward,
backward, optimizer, stop), plain and under each level, in one process.

Every configuration runs a block of steps in turn, round after round (so a change of machine load hits
all alike); each phase is timed with the training thread's CPU clock, and the table gives, per phase,
the median over rounds of the block's median. The `+ms` row is each level's time over the plain step's,
phase by phase: what capture adds to the forward pass (module and API records, stacks, hooking the
backward records), to the backward pass (gradient hooks), to the optimizer (its API records at L1/mix)
and at the window's edges (opening a session; at stop, the one transfer and the hand-over to the
writer thread).

    python benchmarks/capture_phases.py
    python benchmarks/capture_phases.py --rounds 20 --dump-root /dev/shm
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time

PHASES = ("start", "forward", "backward", "optimizer", "stop", "step")


def _phase_times(model, optimizer, batch, debugger, steps: int) -> dict[str, float]:
    """Median seconds of each phase over `steps` steps (after two untimed ones)."""
    import torch.nn.functional as F

    clock = time.thread_time
    times: dict[str, list[float]] = {phase: [] for phase in PHASES}
    for index in range(steps + 2):
        t0 = clock()
        if debugger is not None:
            debugger.start(model)
        t1 = clock()
        loss = F.cross_entropy(model(batch).reshape(-1, 100), batch.reshape(-1))
        t2 = clock()
        loss.backward()
        t3 = clock()
        optimizer.step()
        optimizer.zero_grad()
        t4 = clock()
        if debugger is not None:
            debugger.stop()
            debugger.step()
        t5 = clock()
        if index >= 2:
            for phase, seconds in zip(PHASES, (t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4, t5 - t0), strict=True):
                times[phase].append(seconds)
    return {phase: statistics.median(values) for phase, values in times.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=12)
    parser.add_argument("--steps", type=int, default=10, help="timed steps per configuration and round")
    parser.add_argument("--levels", nargs="+", default=["L0", "L1", "mix"], choices=["L0", "L1", "mix"])
    parser.add_argument("--dump-root", help="folder for the dumps (default: the system's temporary folder)")
    args = parser.parse_args()

    import torch
    from capture_overhead import _model
    from msprobe_runtime.pytorch import PrecisionDebugger
    from overhead_harness import write_config

    torch.set_num_threads(1)
    model, _ = _model()
    optimizer = torch.optim.AdamW(model.parameters())
    batch = torch.randint(0, 100, (8, 16))
    names = ["plain", *args.levels]
    results: dict[str, list[dict]] = {name: [] for name in names}
    with tempfile.TemporaryDirectory(dir=args.dump_root) as folder:
        for _ in range(args.rounds):
            for name in names:
                debugger = None
                if name != "plain":
                    os.makedirs(os.path.join(folder, name), exist_ok=True)
                    debugger = PrecisionDebugger(config_path=write_config(os.path.join(folder, name), "statistics", name))
                results[name].append(_phase_times(model, optimizer, batch, debugger, args.steps))
                if debugger is not None:
                    debugger.close()
    print(f"{'ms per step':14}" + "".join(f"{phase:>11}" for phase in PHASES))
    plain = {phase: statistics.median(r[phase] for r in results["plain"]) * 1e3 for phase in PHASES}
    for name in names:
        row = {phase: statistics.median(r[phase] for r in results[name]) * 1e3 for phase in PHASES}
        print(f"{name:14}" + "".join(f"{row[phase]:11.2f}" for phase in PHASES))
        if name != "plain":
            added = {phase: statistics.median(r[phase] - p[phase] for r, p in zip(results[name], results["plain"], strict=True))
                     * 1e3 for phase in PHASES}
            print(f"{'  +ms':14}" + "".join(f"{added[phase]:+11.2f}" for phase in PHASES))
    print(f"({args.rounds} rounds of {args.steps} timed steps per configuration, thread CPU time, medians; "
          f"plain step {plain['step']:.2f} ms)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Instructions the training thread runs per captured step, counted by valgrind (callgrind): plain and
under msprobe-kit's PrecisionDebugger at L0, L1 and mix, on capture_overhead.py's model.

On a shared VM the clocks move with the host's load by more than a change to the capture is worth;
instruction counts do not. Every configuration runs once under valgrind, two at a time (the counts do
not depend on what else runs). valgrind counts only while the worker runs the captured steps, inside
`functools.reduce` (`--toggle-collect`; nothing in a step calls it), so the interpreter's start, the
imports, the warm-up and the exit are left out. (Subtracting a short run from a long one instead let a
garbage collection or the exit tip a comparison by a million instructions a step.) Only the training
thread is counted (`--separate-threads`): the background writer's work shows in capture_overhead.py's
cpu column. Counts are not times (a cache miss costs more than an addition), so they tell a change's
direction and size, and capture_overhead.py tells what a step costs.

    python benchmarks/capture_instructions.py                          # plain, L0, L1, mix
    python benchmarks/capture_instructions.py --baseline /tmp/old/runtime   # also another checkout's
"""

from __future__ import annotations

import argparse
import functools
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

LEVELS = ("plain", "L0", "L1", "mix")
_BASELINE = "baseline "


def worker(level: str, steps: int) -> None:
    """Run `steps` captured steps of one configuration (under valgrind, in a fresh interpreter)."""
    import torch

    torch.set_num_threads(1)
    from capture_overhead import _model
    from overhead_harness import captured_step, write_config

    model, step = _model()
    with tempfile.TemporaryDirectory() as folder:
        debugger = None
        if level != "plain":
            from msprobe_runtime.pytorch import PrecisionDebugger

            debugger = PrecisionDebugger(config_path=write_config(folder, "statistics", level))
        for _ in range(3):  # warm-up: caches, optimizer state
            captured_step(model, step, debugger)
        functools.reduce(lambda _, __: captured_step(model, step, debugger), range(steps), None)  # counted
        if debugger is not None:
            debugger.close()


def _count(level: str, steps: int, first_path: str | None) -> int:
    """Instructions of the training thread in `steps` captured steps of one run."""
    with tempfile.TemporaryDirectory() as folder:
        out = os.path.join(folder, "callgrind.out")
        env = {**os.environ}
        if first_path:
            env["PYTHONPATH"] = os.pathsep.join(filter(None, [first_path, env.get("PYTHONPATH")]))
        command = ["valgrind", "--tool=callgrind", "--separate-threads=yes", "--collect-atstart=no",
                   "--toggle-collect=functools_reduce", f"--callgrind-out-file={out}",
                   sys.executable, __file__, "--worker", level, "--steps", str(steps)]
        subprocess.run(command, capture_output=True, text=True, check=True, env=env)
        main_thread = sorted(glob.glob(out + "*-01"))[0]  # thread 1: the training thread
        with open(main_thread, encoding="utf-8") as handle:
            match = re.search(r"^(?:summary|totals): (\d+)", handle.read(), re.MULTILINE)
        return int(match.group(1))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=10, help="captured steps counted")
    parser.add_argument("--baseline", metavar="DIR", help="also count DIR (another checkout's runtime/ folder) "
                        "first on PYTHONPATH, as 'baseline ...'")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker, args.steps)
        return 0
    if shutil.which("valgrind") is None:
        print("capture_instructions: valgrind is not installed", file=sys.stderr)
        return 2
    runs = [(level, None) for level in LEVELS]
    if args.baseline:
        runs += [(_BASELINE + level, args.baseline) for level in LEVELS[1:]]
    with ThreadPoolExecutor(max_workers=2) as pool:
        counts = {name: pool.submit(_count, name.removeprefix(_BASELINE), args.steps, first_path)
                  for name, first_path in runs}
        per_step = {name: count.result() / args.steps for name, count in counts.items()}
    plain = per_step["plain"]
    print(f"{'configuration':18} {'M instr/step':>13} {'added M':>8} {'x plain':>8}")
    for name, count in per_step.items():
        print(f"{name:18} {count / 1e6:13.2f} {(count - plain) / 1e6:8.2f} {count / plain:8.2f}")
    print(f"(training thread, valgrind callgrind, {args.steps} captured steps after 3 warm-up steps)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""L0's overhead measured in one process: the plain step and the captured step side by side, on two copies of
capture_overhead.py's model, in alternating blocks of steps.

capture_overhead.py runs every configuration in its own interpreter, minutes apart at most; on a shared
machine the plain step itself moves by a factor of two between runs, and so do the ratios. Here each
round is one fresh interpreter holding three identical models (same seed, each with its own AdamW and
batch): one captured at L0 (statistics mode, every step), two never captured. Blocks of steps run on
them in turn, and each block's median is divided by the median of the plain block just before it, so a
change of machine load hits both sides of a ratio alike. The second plain model, timed the same way, shows
the method's own bias (it should be 1.00). Only L0 is measured so: at L1 and mix (API wrappers) and for the
gradient probe (the optimizer's step), capture patches functions that the plain model would run too.
Clocks: the training thread's CPU time and the wall clock (which also counts waits for the GIL while the
writer thread holds it). `--no-files` drops each step's records instead of handing them to the writer
thread (a diagnostic, not a way to run): what capture costs the training thread with no writer beside it.

    python benchmarks/capture_overhead_paired.py
    python benchmarks/capture_overhead_paired.py --rounds 5 --blocks 40 --dump-root /dev/shm
    python benchmarks/capture_overhead_paired.py --dump-root /dev/shm --no-files
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time

from capture_overhead import _debugger, _model
from overhead_harness import run_worker

NAMES = ("plain", "plain copy", "msprobe-kit L0")


def worker(steps: int, blocks: int, warmup: int, dump_root: str | None, no_files: bool) -> dict:
    """Per block and configuration, the median thread and wall seconds of its steps (one fresh interpreter)."""
    import torch

    torch.set_num_threads(1)
    if no_files:
        from msprobe_runtime.pytorch.capture import session

        session.write_step = lambda *args, **kwargs: None
    (_, plain_step), (_, copy_step), (model, step) = _model(), _model(), _model()
    with tempfile.TemporaryDirectory(dir=dump_root) as folder:
        debugger = _debugger("ours", "statistics", "L0", folder)

        def captured_step():
            debugger.start(model)
            step()
            debugger.stop()
            debugger.step()

        runs = dict(zip(NAMES, (plain_step, copy_step, captured_step), strict=True))
        for _ in range(warmup):
            for run in runs.values():
                run()
        medians = {name: {"thread": [], "wall": []} for name in NAMES}
        for _ in range(blocks):
            for name, run in runs.items():
                thread, wall = [], []
                for index in range(steps + 1):  # the first step of a block is not counted
                    started, started_thread = time.perf_counter(), time.thread_time()
                    run()
                    if index:
                        wall.append(time.perf_counter() - started)
                        thread.append(time.thread_time() - started_thread)
                medians[name]["thread"].append(statistics.median(thread))
                medians[name]["wall"].append(statistics.median(wall))
        debugger.close()
    return medians


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3, help="fresh interpreters, one after another")
    parser.add_argument("--blocks", type=int, default=30, help="blocks per configuration and round")
    parser.add_argument("--steps", type=int, default=5, help="counted steps per block")
    parser.add_argument("--warmup", type=int, default=10, help="untimed steps of each model first")
    parser.add_argument("--dump-root", help="folder for the dumps (default: the system's temporary folder)")
    parser.add_argument("--no-files", action="store_true", help="drop the records instead of writing them (a diagnostic)")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        result = worker(args.steps, args.blocks, args.warmup, args.dump_root, args.no_files)
        print("RESULT " + json.dumps(result))
        return 0
    extra = (*(("--dump-root", args.dump_root) if args.dump_root else ()), *(("--no-files",) if args.no_files else ()))
    rounds = [run_worker(__file__, "L0", args.steps, args.warmup, "--blocks", str(args.blocks), *extra)
              for _ in range(args.rounds)]
    rounds = [result for result in rounds if result is not None]
    if not rounds:
        return 1
    width = 25 if args.no_files else 16
    print(f"{'configuration':{width}}" + "".join(f" {clock + ' ms':>10} {'x plain':>8}" for clock in ("thread", "wall"))
          + f" {'thread x plain by round':>24}")
    for name in NAMES:
        cells, by_round = [], []
        for clock in ("thread", "wall"):
            ratios = [[mine / plain for mine, plain in zip(result[name][clock], result["plain"][clock], strict=True)]
                      for result in rounds]
            ms = statistics.median(value for result in rounds for value in result[name][clock]) * 1e3
            cells.append(f" {ms:10.2f} {statistics.median(sum(ratios, [])):8.2f}")
            if clock == "thread":
                by_round = [f"{statistics.median(values):.2f}" for values in ratios]
        label = f"{name}, no files" if args.no_files and name == NAMES[-1] else name
        print(f"{label:{width}}" + "".join(cells) + f" {' '.join(by_round):>24}")
    print(f"({len(rounds)} rounds of {args.blocks} blocks of {args.steps} steps per configuration; each block's median "
          "over the plain block's before it, medians of those ratios)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The walk over each module call's autograd nodes at L0 (capture.backward.edges_into): compiled (_walk.c)
against the Python reference, on capture_overhead.py's model, in one process.

Captured steps run in alternating blocks, one way then the other; the time spent in the walk is summed per
step (13 walks a step on this model), and each block's median is reported with the training step's.

    python benchmarks/backward_walk_speed.py
    python benchmarks/backward_walk_speed.py --blocks 40 --dump-root /dev/shm
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time

from capture_overhead import _debugger, _model


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--blocks", type=int, default=20, help="blocks per way")
    parser.add_argument("--steps", type=int, default=10, help="captured steps per block")
    parser.add_argument("--dump-root", help="folder for the dumps (default: the system's temporary folder)")
    args = parser.parse_args()

    import torch
    from msprobe_runtime.core.dump_writer import wait_for_writes
    from msprobe_runtime.pytorch.capture import backward

    if backward._walk is None:
        print("the _walk extension was not built (no C compiler): nothing to compare", file=sys.stderr)
        return 1
    torch.set_num_threads(1)
    compiled, walk_seconds = backward._walk, [0.0]
    original = backward.edges_into

    def timed(*walk_args):
        started = time.perf_counter()
        try:
            return original(*walk_args)
        finally:
            walk_seconds[0] += time.perf_counter() - started

    backward.edges_into = timed
    model, step = _model()
    results = {"compiled": {"walk": [], "step": []}, "python": {"walk": [], "step": []}}
    with tempfile.TemporaryDirectory(dir=args.dump_root) as folder:
        debugger = _debugger("ours", "statistics", "L0", folder)

        def block(way: str) -> None:
            backward._walk = compiled if way == "compiled" else None
            walks, steps = [], []
            for _ in range(args.steps):
                walk_seconds[0] = 0.0
                started = time.thread_time()
                debugger.start(model)
                step()
                debugger.stop()
                debugger.step()
                steps.append(time.thread_time() - started)
                walks.append(walk_seconds[0])
            results[way]["walk"].append(statistics.median(walks))
            results[way]["step"].append(statistics.median(steps))

        for way in ("compiled", "python"):  # warm-up
            block(way)
        for way in results:
            results[way] = {"walk": [], "step": []}
        for _ in range(args.blocks):
            for way in ("compiled", "python"):
                block(way)
        debugger.close()
        wait_for_writes()
    backward._walk, backward.edges_into = compiled, original
    print("walk       walk ms/step  training ms/step")
    medians = {way: {key: statistics.median(values) for key, values in timing.items()} for way, timing in results.items()}
    for way, timing in medians.items():
        print(f"{way:9s} {1e3 * timing['walk']:13.3f} {1e3 * timing['step']:17.3f}")
    print(f"{'ratio':9s} {medians['compiled']['walk'] / medians['python']['walk']:13.2f} "
          f"{medians['compiled']['step'] / medians['python']['step']:17.2f}")
    print(f"(medians of {args.blocks} blocks of {args.steps} captured steps per way; walk: wall time inside "
          "edges_into, training: the thread's CPU time)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

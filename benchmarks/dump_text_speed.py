"""The writer thread's work per captured step, with the dump files' JSON text made by core._dumptext (one
call per file and per step's statistics) and by Python (record by record), in one process.

capture_overhead.py's model and step; per level, one process runs blocks of captured steps, the two ways
in turn (so a change of machine load hits both alike; the first step of a block is not counted: the
previous block's files may still be being written). Per step it reports the CPU time of the writer thread's
job (making the texts, then the GIL-free file writes) and of the training thread, medians over the blocks'
steps. Python code the writer runs holds the GIL, so the training thread may wait for it; the writer's
time is also CPU taken from whatever else the machine runs (data-loading workers).

    python benchmarks/dump_text_speed.py
    python benchmarks/dump_text_speed.py --levels L1 --blocks 40
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time

from capture_overhead import _debugger, _model


def _measure(level: str, blocks: int, steps: int, dump_root: str | None) -> dict[str, dict[str, float]]:
    import torch
    from msprobe_runtime.core import dump_writer, stats

    try:
        from msprobe_runtime.core import _dumptext as compiled
    except ImportError:
        sys.exit("core._dumptext was not built (no C compiler): nothing to compare")
    torch.set_num_threads(1)
    writer_times: list[float] = []
    encode_and_write = dump_writer._encode_and_write

    def timed_job(*job):
        started = time.thread_time()
        try:
            encode_and_write(*job)
        finally:
            writer_times.append(time.thread_time() - started)

    dump_writer._encode_and_write = timed_job
    ways = {"compiled": compiled, "python": None}
    results = {way: {"writer": [], "training": []} for way in ways}
    model, step = _model()
    with tempfile.TemporaryDirectory(dir=dump_root) as folder:
        debugger = _debugger("ours", "statistics", level, folder)
        for _ in range(5):
            debugger.start(model)
            step()
            debugger.stop()
            debugger.step()
        for _ in range(blocks):
            for way, extension in ways.items():
                dump_writer._dumptext = stats._dumptext = extension
                dump_writer.wait_for_writes()
                writer_times.clear()
                for index in range(steps + 1):
                    started = time.thread_time()
                    debugger.start(model)
                    step()
                    debugger.stop()
                    debugger.step()
                    if index:
                        results[way]["training"].append(time.thread_time() - started)
                dump_writer.wait_for_writes()
                results[way]["writer"] += writer_times[1:]
        debugger.close()
    dump_writer._encode_and_write = encode_and_write
    dump_writer._dumptext = stats._dumptext = compiled
    return {way: {clock: statistics.median(times) * 1e3 for clock, times in clocks.items()}
            for way, clocks in results.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--levels", nargs="+", default=["L0", "L1", "mix"], choices=["L0", "L1", "mix"])
    parser.add_argument("--blocks", type=int, default=20)
    parser.add_argument("--steps", type=int, default=5, help="counted steps per block")
    parser.add_argument("--dump-root", help="folder for the dumps (default: the system's temporary folder)")
    args = parser.parse_args()
    print(f"{'level':6} {'text':9} {'writer ms':>10} {'training ms':>12}")
    for level in args.levels:
        results = _measure(level, args.blocks, args.steps, args.dump_root)
        for way, clocks in results.items():
            print(f"{level:6} {way:9} {clocks['writer']:10.3f} {clocks['training']:12.3f}")
        print(f"{level:6} {'ratio':9} {results['compiled']['writer'] / results['python']['writer']:10.2f} "
              f"{results['compiled']['training'] / results['python']['training']:12.2f}")
    print(f"(medians of {args.blocks} blocks of {args.steps} steps per way and level, CPU time per step)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

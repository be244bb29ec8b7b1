"""Capture's overhead measured in one process: the plain step and the captured step side by side, on copies of
capture_overhead.py's model, in alternating blocks of steps.

capture_overhead.py runs every configuration in its own interpreter, minutes apart at most; on a shared
machine the plain step itself moves by a factor of two between runs, and so do the ratios. Here each
round is one fresh interpreter holding three identical models (same seed, each with its own AdamW and
batch): one captured (at L0 unless `--config` says otherwise; statistics mode, every step), two never
captured. Blocks of steps run on them in turn (plain, plain copy, captured), and each block's median is
divided by the median of the block just before it (the captured block's by the plain copy's), so a change
of machine load hits both sides of a ratio alike. The plain copy's ratio to the plain block shows the
method's own bias (it should be 1.00; the plain block follows a captured one, whose after-effects, such as
the writer process finishing its last step, it may still feel). At L1 and mix the API wrappers are taken out
before each plain block (the captured model's `start()` puts them back), so the plain steps run torch as
it is. With the gradient probe every optimizer's step runs the probe's pre-hook, the plain models' too:
there it finds no gradient of the monitored model and returns, a few microseconds that make the grad
probe's ratios lean low by as much.
Clocks: the training thread's CPU time and the wall clock (which also counts its waits, for the GIL when
another thread holds it). `--no-files` drops each step's records instead of handing them to the writer
(a diagnostic, not a way to run): what capture costs the training thread with no writer beside it.
`--no-backward` (a diagnostic too, at L0 and mix) lets the module hooks arrange no backward records: no graph
walks, no autograd hooks, no statistics of the gradients that flow through the modules (parameter gradients
are still recorded); what the backward records cost.
`--writer thread` writes the files with the writer thread that the runtime falls back to where no writer
process can start (a diagnostic: the thread needs the GIL to make the texts, and the training thread
waits for it).
`--width D` makes the model D wide instead of 64 (same blocks, modules and tensors, more arithmetic in each):
capture's cost grows with the number of calls and tensors, the plain step with the arithmetic, so this
shows how the ratio moves on heavier models.

    python benchmarks/capture_overhead_paired.py
    python benchmarks/capture_overhead_paired.py --rounds 5 --blocks 40 --dump-root /dev/shm
    python benchmarks/capture_overhead_paired.py --dump-root /dev/shm --no-files
    python benchmarks/capture_overhead_paired.py --dump-root /dev/shm --no-backward
    python benchmarks/capture_overhead_paired.py --dump-root /dev/shm --writer thread
    python benchmarks/capture_overhead_paired.py --dump-root /dev/shm --width 256
    python benchmarks/capture_overhead_paired.py --dump-root /dev/shm --config grad_probe
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from functools import partial

from capture_overhead import _debugger, _model
from overhead_harness import captured_step, run_worker

PLAIN = ("plain", "plain copy")
CONFIGS = {"L0": ("statistics", "L0"), "L1": ("statistics", "L1"), "mix": ("statistics", "mix"),
           "grad_probe": ("grad_probe", "L1")}  # --config: (task, level)


def worker(config: str, steps: int, blocks: int, warmup: int, dump_root: str | None, width: int,
           dropped: tuple[str, ...]) -> dict:
    """Per block and configuration, the median thread and wall seconds of its steps (one fresh interpreter)."""
    import torch
    from msprobe_runtime.pytorch.capture import api_wrap

    torch.set_num_threads(1)
    if "files" in dropped:
        from msprobe_runtime.pytorch.capture import session

        session.write_step = lambda *args, **kwargs: None
    if "process" in dropped:
        from msprobe_runtime.core import dump_writer

        dump_writer._use_process = False
    if "backward" in dropped:
        from msprobe_runtime.pytorch.capture import module_hooks

        module_hooks._hook_backward = lambda *args: None
    (_, plain_step), (_, copy_step), (model, step) = _model(width), _model(width), _model(width)
    with tempfile.TemporaryDirectory(dir=dump_root) as folder:
        task, level = CONFIGS[config]
        debugger = _debugger("ours", task, level, folder)
        if task == "grad_probe":
            debugger.monitor(model)
        names = (*PLAIN, f"msprobe-kit {config}")
        runs = dict(zip(names, (plain_step, copy_step, partial(captured_step, model, step, debugger)), strict=True))
        for _ in range(warmup):
            for run in runs.values():
                run()
        medians = {name: {"thread": [], "wall": []} for name in names}
        for _ in range(blocks):
            for name, run in runs.items():
                if name in PLAIN:
                    api_wrap.uninstall()
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
    parser.add_argument("--no-backward", action="store_true", help="record no module backward (a diagnostic)")
    parser.add_argument("--writer", choices=("process", "thread"), default="process",
                        help="what writes the dump files (thread: a diagnostic)")
    parser.add_argument("--width", type=int, default=64, help="the model's width (the runtime issue's: 64)")
    parser.add_argument("--config", choices=list(CONFIGS), default="L0", help="what the captured model runs under")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        dropped = tuple(name for name, flag in (("files", args.no_files), ("backward", args.no_backward),
                                                ("process", args.writer == "thread")) if flag)
        result = worker(args.worker, args.steps, args.blocks, args.warmup, args.dump_root, args.width, dropped)
        print("RESULT " + json.dumps(result))
        return 0
    extra = (*(("--dump-root", args.dump_root) if args.dump_root else ()), *(("--no-files",) if args.no_files else ()),
             *(("--no-backward",) if args.no_backward else ()), "--writer", args.writer, "--width", str(args.width))
    rounds = [run_worker(__file__, args.config, args.steps, args.warmup, "--blocks", str(args.blocks), *extra)
              for _ in range(args.rounds)]
    rounds = [result for result in rounds if result is not None]
    if not rounds:
        return 1
    names = (*PLAIN, f"msprobe-kit {args.config}")
    suffix = "".join(text for text, flag in ((", no files", args.no_files), (", no backward", args.no_backward),
                                             (", writer thread", args.writer == "thread")) if flag)
    labels = dict(zip(names, (*PLAIN, names[-1] + suffix), strict=True))
    column = max(len(label) for label in labels.values()) + 2
    print(f"{'configuration':{column}}" + "".join(f" {clock + ' ms':>10} {'x plain':>8}" for clock in ("thread", "wall"))
          + f" {'thread x plain by round':>24}")
    for reference, name in zip((names[0], *names[:-1]), names, strict=True):  # each block over the one just before it
        cells, by_round = [], []
        for clock in ("thread", "wall"):
            ratios = [[mine / before for mine, before in zip(result[name][clock], result[reference][clock], strict=True)]
                      for result in rounds]
            ms = statistics.median(value for result in rounds for value in result[name][clock]) * 1e3
            cells.append(f" {ms:10.2f} {statistics.median(sum(ratios, [])):8.2f}")
            if clock == "thread":
                by_round = [f"{statistics.median(values):.2f}" for values in ratios]
        print(f"{labels[name]:{column}}" + "".join(cells) + f" {' '.join(by_round):>24}")
    print(f"({len(rounds)} rounds of {args.blocks} blocks of {args.steps} steps per configuration; each block's median "
          "over the one's before it, medians of those ratios" + (f"; width {args.width}" if args.width != 64 else "")
          + ")")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""How fast msprobe-compare is: synthetic statistics (and tensor) dumps of N entries, compared end to end.

    python benchmarks/compare_speed.py                       # 1,139, 250,000 and 1,000,000 entries
    python benchmarks/compare_speed.py --entries 1139 100000 --msprobe /tmp/msprobe-venv/bin/msprobe

An entry is one record of dump.json (one API call, as msprobe's progress bar counts them) with two tensor
inputs, one non-tensor argument and one tensor output: four rows of the comparison table (so 250,000
entries make the 1,000,000 rows that msprobe's second progress bar counts). The golden
dump is the target with a 0.1% change from the middle on. Each comparison runs in a fresh process (as a
user runs it) and prints wall time, the time inside compare and its three stages (reading both dumps; pairing,
metrics, Result rules and the divergence search; writing the CSV), peak memory of the process and of its
helper (GOLDEN of large dumps is read by a second process, core/compare/parallel.py) and the dump
size; with
--msprobe, MindStudio Probe's `msprobe compare` runs on the same files for reference. `--tensor`
also times tensor mode on the smallest size (msprobe's .pt files, read by both tools).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

_APIS = ("Functional.linear", "Functional.gelu", "Tensor.__add__", "Functional.layer_norm", "Torch.matmul",
         "Tensor.view", "Functional.dropout", "Torch.softmax")
_TENSOR = ('{"type":"torch.Tensor","dtype":"torch.float32","shape":[8,16,64],"Max":%r,"Min":%r,"Mean":%r,'
           '"Norm":%r,"requires_grad":true%s}')


def _tensor(rng: random.Random, data_name: str | None, factor: float) -> str:
    extra = f',"data_name":"{data_name}"' if data_name else ""
    values = (rng.random() * factor, -rng.random(), rng.random() - 0.5, rng.random() * 10 * factor)
    return _TENSOR % (*values, extra)


def write_dump(path: Path, entries: int, perturb: bool, data_names: bool = False) -> None:
    """A statistics (or, with data_names, tensor-mode) dump.json of `entries` records, one per line."""
    rng = random.Random(0)
    counts: dict[str, int] = {}
    path.parent.mkdir(parents=True, exist_ok=True)
    task = "tensor" if data_names else "statistics"
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(f'{{"task": "{task}", "level": "L1", "framework": "pytorch", "dump_data_dir": null, '
                     f'"version": 1,\n"data": {{\n')
        for index in range(entries):
            api = _APIS[index % len(_APIS)]
            number = counts.get(api, 0)
            counts[api] = number + 1
            name = f"{api}.{number}.forward"
            scale = 1.001 if perturb and index >= entries // 2 else 1.0
            files = [f"{name}.{kind}.pt" if data_names else None for kind in ("input.0", "input.1", "output.0")]
            first, second, result = (_tensor(rng, file, factor) for file, factor in zip(files, (1.0, 1.0, scale), strict=True))
            record = (f'{{"input_args":[{first},{second},{{"type":"int","value":-1}}],'
                      f'"input_kwargs":{{}},"output":[{result}]}}')
            handle.write(f'"{name}": {record}{"," if index < entries - 1 else ""}\n')
        handle.write("}}\n")


def write_tensors(dump: Path, entries: int, perturb: bool) -> None:
    """The .pt files of a tensor-mode dump (small tensors: the cost is in reading and pairing them)."""
    import torch

    folder = dump.parent / "dump_tensor_data"
    folder.mkdir(parents=True, exist_ok=True)
    generator = torch.Generator().manual_seed(0)
    for name in json.loads(dump.read_text())["data"]:
        for kind, position in (("input", 0), ("input", 1), ("output", 0)):
            value = torch.randn(8, 16, generator=generator)
            if perturb and kind == "output":
                value = value * 1.001
            torch.save(value, folder / f"{name}.{kind}.{position}.pt")


_MEASURE = """
import json, resource, sys, time
started = time.perf_counter()
from msprobe_runtime import compare
from msprobe_runtime.core.compare import engine, run
ready = time.perf_counter()
stages = {"read_s": 0.0, "write_s": 0.0}

def timed(stage, function):  # the stages of compare(): reading both dumps, writing the report
    def wrapper(*args, **kwargs):
        begun = time.perf_counter()
        try:
            return function(*args, **kwargs)
        finally:
            stages[stage] += time.perf_counter() - begun
    return wrapper

engine.load_pair = timed("read_s", engine.load_pair)
run.write_report = timed("write_s", run.write_report)
result = compare(sys.argv[1], sys.argv[2], sys.argv[3])
done = time.perf_counter()
print(json.dumps({"compare_s": done - ready, "import_s": ready - started, "rss_mb": resource.getrusage(
    resource.RUSAGE_SELF).ru_maxrss / 1024, "helper_rss_mb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    / 1024, "rows": result.pairs[0].counts["rows"], "exit": result.exit_code, **stages}))
"""


def ours(target: Path, golden: Path, output: Path) -> dict:
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", _MEASURE, str(target), str(golden), str(output)],
                          capture_output=True, text=True, check=True)
    numbers = json.loads(done.stdout.strip().splitlines()[-1])
    numbers["wall_s"] = time.perf_counter() - started
    return numbers


def theirs(msprobe: str, target: Path, golden: Path, output: Path) -> float:
    started = time.perf_counter()
    subprocess.run([msprobe, "compare", "-tp", str(target), "-gp", str(golden), "-o", str(output)],
                   capture_output=True, check=True)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, nargs="+", default=[1139, 250_000, 1_000_000])
    parser.add_argument("--msprobe", help="path of the msprobe command of a mindstudio-probe install")
    parser.add_argument("--tensor", action="store_true", help="also time tensor mode on the smallest size")
    options = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="compare-speed-"))
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; python {sys.version.split()[0]}")
    print(f"{'entries':>9} {'rows':>9} {'dump MB':>8} {'ours wall s':>11} {'in compare s':>12} {'read':>6}"
          f" {'pair':>6} {'write':>6} {'peak MB':>8} {'helper MB':>9} {'msprobe s':>9}")
    try:
        for entries in options.entries:
            target, golden = work / f"t{entries}" / "dump.json", work / f"g{entries}" / "dump.json"
            write_dump(target, entries, perturb=True)
            write_dump(golden, entries, perturb=False)
            numbers = ours(target, golden, work / "out")
            reference = theirs(options.msprobe, target, golden, work / "msprobe") if options.msprobe and entries <= 20000 else None
            size = target.stat().st_size / 2**20
            msprobe = "-" if reference is None else f"{reference:.2f}"
            pairing = numbers["compare_s"] - numbers["read_s"] - numbers["write_s"]
            print(f"{entries:>9} {numbers['rows']:>9} {size:>8.1f} {numbers['wall_s']:>11.2f} {numbers['compare_s']:>12.2f}"
                  f" {numbers['read_s']:>6.2f} {pairing:>6.2f} {numbers['write_s']:>6.2f} {numbers['rss_mb']:>8.0f}"
                  f" {numbers['helper_rss_mb']:>9.0f} {msprobe:>9}")
            shutil.rmtree(target.parent)
            shutil.rmtree(golden.parent)
        if options.tensor:
            entries = min(options.entries)
            target, golden = work / "tt" / "dump.json", work / "tg" / "dump.json"
            for path, perturb in ((target, True), (golden, False)):
                write_dump(path, entries, perturb, data_names=True)
                write_tensors(path, entries, perturb)
            numbers = ours(target, golden, work / "out")
            reference = theirs(options.msprobe, target, golden, work / "msprobe") if options.msprobe else None
            print(f"tensor mode, {entries} entries: ours {numbers['wall_s']:.2f} s wall "
                  f"({numbers['compare_s']:.2f} s in compare), msprobe "
                  f"{'not run' if reference is None else f'{reference:.2f} s'}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"peak memory of this driver: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")


if __name__ == "__main__":
    main()

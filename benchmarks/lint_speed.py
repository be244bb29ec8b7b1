"""How fast is msprobe-lint? Cold and warm runs next to the stdlib-`ast` floor.

    python benchmarks/lint_speed.py [FOLDER ...] [--repeat N] [--without CODE]

Without a folder it measures the installed torch package's sources (found without importing torch).
For each corpus, on the same files msprobe-lint would lint:
  - the floor: read + `ast.parse` + `ast.walk` of every file, in this process;
  - the engine alone (every rule, no cache, one process), in this process;
  - `msprobe-lint --select ALL` as a subprocess with an empty cache (cold, automatic --jobs), then
    again with the cache it wrote (warm);
  - with --without CODE, also the engine without that rule, which gives the rule's share of the time.
In-process timings are the best of --repeat rounds, floor and engine rounds interleaved so that a busy
machine slows both alike. Nothing here is a test: it prints numbers for docs/performance.md.
"""

from __future__ import annotations

import argparse
import ast
import importlib.util
import os
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

from msprobe_rewriter.lint.discovery import Discovery
from msprobe_rewriter.lint.engine import lint_source
from msprobe_rewriter.rules import ALL_RULES


def torch_sources() -> Path:
    """The installed torch package folder (not imported)."""
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("torch is not installed; pass a folder to measure")
    return Path(next(iter(spec.submodule_search_locations)))


def load(folder: Path) -> list[tuple[str, bytes]]:
    """The files msprobe-lint would lint under `folder`, with their bytes."""
    targets, _ = Discovery(folder).collect([str(folder)])
    files = []
    for target in targets:
        try:
            files.append((target.path, Path(target.path).read_bytes()))
        except OSError:
            continue
    return files


def floor(files: list[tuple[str, bytes]]) -> None:
    """The stdlib floor: parse and walk every file."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for path, data in files:
            try:
                tree = ast.parse(data, filename=path)
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                continue
            for _ in ast.walk(tree):
                pass


def engine(files: list[tuple[str, bytes]], rules=ALL_RULES) -> None:
    """The lint engine with `rules` (every rule by default), one process, no cache."""
    for path, data in files:
        lint_source(path, data, rules)


def best_of(repeat: int, *functions) -> list[float]:
    """Best wall time of each function over `repeat` interleaved rounds."""
    best = [float("inf")] * len(functions)
    for _ in range(repeat):
        for index, function in enumerate(functions):
            start = time.perf_counter()
            function()
            best[index] = min(best[index], time.perf_counter() - start)
    return best


def cli_run(folder: Path, cache_dir: str) -> float:
    """Wall time of one `msprobe-lint --select ALL` subprocess over `folder`."""
    env = dict(os.environ, MSPROBE_LINT_CACHE_DIR=cache_dir)
    command = [sys.executable, "-m", "msprobe_rewriter.lint", "--select", "ALL", "--exit-zero", "--format",
               "json", "--output", os.devnull, str(folder)]
    start = time.perf_counter()
    subprocess.run(command, env=env, check=True)
    return time.perf_counter() - start


def measure(folder: Path, repeat: int, without: str | None = None) -> None:
    """Print the table for one corpus (with `without`, also the engine without that rule code)."""
    files = load(folder)
    lines = sum(data.count(b"\n") for _, data in files)
    others = [rule for rule in ALL_RULES if rule.code != without]
    extra = [lambda: engine(files, others)] if without else []
    base, alone, *less = best_of(repeat, lambda: floor(files), lambda: engine(files), *extra)
    with tempfile.TemporaryDirectory() as cache_dir:
        cold = cli_run(folder, cache_dir)
        warm = cli_run(folder, cache_dir)
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print(f"\n{folder}: {len(files)} files, {lines / 1000:.0f} k lines; {cpus} CPUs; best of {repeat} "
          "for in-process rows")
    print(f"{'':34}{'seconds':>9}{'files/s':>10}{'vs floor':>10}")
    for label, seconds in (("ast.parse + ast.walk (the floor)", base), ("engine, all rules, 1 process", alone),
                           ("msprobe-lint cold (auto --jobs)", cold), ("msprobe-lint warm (cache)", warm)):
        print(f"{label:34}{seconds:9.2f}{len(files) / seconds:10.0f}{seconds / base:9.2f}x")
    if less:
        label = f"engine without {without}"
        print(f"{label:34}{less[0]:9.2f}{len(files) / less[0]:10.0f}{less[0] / base:9.2f}x"
              f"  ({without} costs {alone / less[0] - 1:.0%} of the engine's time)")


def main() -> None:
    """Measure each folder given (or the installed torch sources)."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folders", nargs="*", type=Path)
    parser.add_argument("--repeat", type=int, default=3, help="rounds of the in-process timings (best kept)")
    parser.add_argument("--without", metavar="CODE", help="also time the engine without this rule (its cost)")
    args = parser.parse_args()
    for folder in args.folders or [torch_sources()]:
        measure(folder.resolve(), max(1, args.repeat), args.without)


if __name__ == "__main__":
    main()

"""Time msprobe-lint against torchfix and the stdlib-ast floor on the same sample of files, in one run.

torchfix must be installed in its own environment (it pins an older libcst):
    python -m venv /tmp/tfx-venv && /tmp/tfx-venv/bin/pip install torchfix
    python benchmarks/lint_vs_torchfix.py --torchfix /tmp/tfx-venv/bin/torchfix [--files 136] [FOLDER]
FOLDER defaults to the installed torch package; the sample is its first N .py files in sorted order.
"""

from __future__ import annotations

import argparse
import ast
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def sample(folder: Path, count: int, into: Path) -> int:
    """Copy the first `count` parseable .py files of `folder` into `into`; return their line count."""
    lines = 0
    for index, path in enumerate(p for p in sorted(folder.rglob("*.py")) if _parses(p)):
        if index == count:
            break
        data = path.read_bytes()
        (into / f"f{index:04d}_{path.name}").write_bytes(data)
        lines += data.count(b"\n")
    return lines


def _parses(path: Path) -> bool:
    try:
        ast.parse(path.read_bytes())
        return True
    except (SyntaxError, ValueError):
        return False


def timed(command: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - start


def ast_floor(folder: Path) -> float:
    start = time.perf_counter()
    for path in folder.iterdir():
        for _ in ast.walk(ast.parse(path.read_bytes())):
            pass
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folder", nargs="?", type=Path)
    parser.add_argument("--torchfix", required=True)
    parser.add_argument("--files", type=int, default=136)
    args = parser.parse_args()
    if args.folder is None:
        import torch  # only to find its sources

        args.folder = Path(torch.__file__).parent
    work = Path(tempfile.mkdtemp(prefix="lint-vs-torchfix-"))
    try:
        lines = sample(args.folder, args.files, work)
        floor = ast_floor(work)
        ours = timed([sys.executable, "-m", "msprobe_rewriter.lint", "--no-cache", "--jobs", "1", "--exit-zero",
                      str(work)])
        theirs = timed([args.torchfix, "-j", "1", str(work)])
    finally:
        shutil.rmtree(work)
    print(f"{args.files} files, {lines} lines from {args.folder}")
    print(f"  stdlib ast parse+walk (in process)  {floor:7.2f} s")
    print(f"  msprobe-lint, cold, 1 job           {ours:7.2f} s   (whole command, interpreter start included)")
    print(f"  torchfix, 1 job                     {theirs:7.2f} s")
    print(f"  torchfix / msprobe-lint             {theirs / ours:7.1f}x")


if __name__ == "__main__":
    main()

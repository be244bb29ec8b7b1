"""Resident memory over many captured steps: capture_overhead.py's model and loop, every step captured,
the resident size printed every `--every` steps, so growth that stops (caches filling up to their limits)
can be told from growth that goes on (a leak).

    python benchmarks/capture_memory.py --level mix --steps 1200 --dump-root /dev/shm
"""

from __future__ import annotations

import argparse
import sys
import tempfile

import torch
from capture_overhead import _debugger, _model
from overhead_harness import _rss_bytes, captured_step


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--level", default="mix", choices=["L0", "L1", "mix"])
    parser.add_argument("--steps", type=int, default=1200)
    parser.add_argument("--every", type=int, default=150)
    parser.add_argument("--dump-root", help="folder for the dumps (default: the system's temporary folder)")
    args = parser.parse_args()
    torch.set_num_threads(1)
    model, step = _model()
    with tempfile.TemporaryDirectory(dir=args.dump_root) as folder:
        debugger = _debugger("ours", "statistics", args.level, folder)
        sizes = []
        for number in range(args.steps + 1):
            captured_step(model, step, debugger)
            if number % args.every == 0:
                sizes.append(f"{number}: {_rss_bytes() / 2**20:.1f}")
        debugger.close()
    print(f"resident MiB by step ({args.level}): " + ", ".join(sizes))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""How long msprobe-instrument takes on a 1,000-line training script (median of several runs).

    python benchmarks/instrument_speed.py [--lines N] [--runs R] [FILE...]

Builds the script from the bundled GPT fixture: its model classes repeated (renamed) until the file has
N lines, and its training `main` (seeding, the debugger with its try/finally wrap and `.contiguous()` all
have work to do). Prints the median time and its ratios to a bare `libcst.parse_module` and to `ast.parse` of the
same file: yardsticks that do not depend on how busy the machine is (the tool itself runs with the
garbage collector paused, so the yardsticks are measured that way too).
"""

from __future__ import annotations

import ast
import gc
import re
import statistics
import sys
import time
from pathlib import Path

import libcst
from msprobe_rewriter.instrument import Options, run

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "fixtures" / "pytorch" / "gpt_lm.py"


def build_script(lines: int) -> str:
    """A realistic training script of about `lines` lines."""
    text = FIXTURE.read_text(encoding="utf-8")
    head, _, rest = text.partition("\n\n\n")
    classes = rest[: rest.index("def load_corpus")]
    body = [head, ""]
    copy = 0
    while sum(part.count("\n") + 1 for part in body) + rest.count("\n") < lines:
        body.append(re.sub(r"\bclass (\w+)", lambda m, n=copy: f"class {m.group(1)}{n}", classes))
        copy += 1
    body.append(rest)
    return "\n\n".join(body)


def _timed(work) -> float:
    started = time.perf_counter()
    work()
    return time.perf_counter() - started


def measure(name: str, data: bytes, runs: int) -> float:
    """Median seconds to instrument `data`."""
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        result = run(name, data, Options())
        times.append(time.perf_counter() - started)
        if result.error:
            raise SystemExit(f"{name}: {result.error}")
    return statistics.median(times)


def main(argv: list[str]) -> int:
    lines, runs = 1000, 5
    if "--lines" in argv:
        lines = int(argv[argv.index("--lines") + 1])
    if "--runs" in argv:
        runs = int(argv[argv.index("--runs") + 1])
    files = [a for a in argv if a.endswith(".py")]
    samples = [(f, Path(f).read_bytes()) for f in files] or [(f"generated {lines}-line script",
                                                               build_script(lines).encode("utf-8"))]
    run("warm-up.py", FIXTURE.read_bytes(), Options())  # import and first-parse costs are not per file
    gc.disable()
    for name, data in samples:
        seconds = measure(name, data, runs)
        floor = statistics.median(_timed(lambda d=data: ast.parse(d)) for _ in range(runs))
        parse = statistics.median(_timed(lambda d=data: libcst.parse_module(d)) for _ in range(runs))
        count = data.count(b"\n")
        print(f"{name}: {count} lines, median {seconds * 1000:.0f} ms over {runs} runs; "
              f"{seconds / parse:.1f}x a bare libcst.parse_module ({parse * 1000:.0f} ms), "
              f"{seconds / floor:.0f}x ast.parse ({floor * 1000:.0f} ms)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""How fast one dump.json is read into a comparison table: the compiled reader (core/compare/_dumpscan.c)
against the Python reader it falls back to, on the synthetic dumps of compare_speed.py.

    python benchmarks/dump_reader_speed.py                  # 250,000 entries (1,000,000 rows)
    python benchmarks/dump_reader_speed.py --entries 1000000

Each reader reads the same file in a fresh process (best of --repeat reads there, the garbage collector
paused as compare() pauses it) and prints seconds and microseconds per row. Also printed: what handing the
table back from the helper process costs (pickling and unpickling it), the part of the read stage that
compare_speed.py's "read" column adds on top of reading.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from compare_speed import write_dump

_MEASURE = """
import gc, json, pickle, sys, time
gc.disable()
from msprobe_runtime.core.compare import table
if sys.argv[2] == "python":
    table._dumpscan = None
elif table._dumpscan is None:
    print(json.dumps(None))
    sys.exit()
best = float("inf")
for _ in range(int(sys.argv[3])):
    started = time.perf_counter()
    read = table.read_dump(sys.argv[1])
    best = min(best, time.perf_counter() - started)
started = time.perf_counter()
data = pickle.dumps(read, protocol=pickle.HIGHEST_PROTOCOL)
pickled = time.perf_counter() - started
started = time.perf_counter()
pickle.loads(data)
print(json.dumps({"seconds": best, "rows": len(read), "pickle": pickled, "unpickle": time.perf_counter() - started}))
"""


def measure(path: Path, reader: str, repeat: int) -> dict | None:
    done = subprocess.run([sys.executable, "-c", _MEASURE, str(path), reader, str(repeat)], capture_output=True,
                          text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=250_000)
    parser.add_argument("--repeat", type=int, default=2, help="reads per reader (the best is kept)")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="reader-speed-") as work:
        path = Path(work) / "dump.json"
        write_dump(path, options.entries, perturb=False)
        print(f"{options.entries} entries, {path.stat().st_size / 2**20:.1f} MB")
        print(f"{'reader':10} {'rows':>9} {'read s':>8} {'us/row':>7} {'pickle s':>9} {'unpickle s':>10}")
        for reader in ("compiled", "python"):
            numbers = measure(path, reader, options.repeat)
            if numbers is None:
                print(f"{reader:10} not built (no C compiler when the package was installed)")
                continue
            print(f"{reader:10} {numbers['rows']:>9} {numbers['seconds']:>8.2f} "
                  f"{numbers['seconds'] / numbers['rows'] * 1e6:>7.2f} {numbers['pickle']:>9.2f} "
                  f"{numbers['unpickle']:>10.2f}")


if __name__ == "__main__":
    main()

"""Round-trip msprobe-instrument over real code: instrument in memory, check that the result parses, that a
second run changes nothing and that `--undo` gives back the original bytes.

    python benchmarks/instrument_roundtrip.py                 # the installed torch package + fixtures/
    python benchmarks/instrument_roundtrip.py PATH... [--limit N] [--markdown]

Prints counts (and, with --markdown, the table for docs/instrument-roundtrip.md). Exit 1 on any failure.
"""

from __future__ import annotations

import ast
import os
import sys
import time
from collections import Counter
from pathlib import Path

from msprobe_rewriter.instrument import Options, run

ROOT = Path(__file__).resolve().parent.parent


def default_corpora() -> list[tuple[str, Path]]:
    """The installed torch package and the project's fixtures."""
    import importlib.util

    spec = importlib.util.find_spec("torch")
    corpora = []
    if spec is not None and spec.origin:
        corpora.append(("torch (installed)", Path(spec.origin).parent))
    corpora.append(("fixtures/", ROOT / "fixtures"))
    return corpora


def check_file(path: Path, options: Options) -> str:
    """One of: unchanged, instrumented, unparsable (the original), or a failure kind."""
    data = path.read_bytes()
    first = run(str(path), data, options)
    if first.error is not None:
        original_parses = True
        try:
            ast.parse(data)
        except (SyntaxError, ValueError):
            original_parses = False
        return "unparsable" if not original_parses else f"FAIL error: {first.error}"
    if not first.changed:
        return "unchanged"
    instrumented = first.source.encode(first.after)
    try:
        ast.parse(instrumented)
    except SyntaxError as exc:
        return f"FAIL output does not parse: {exc}"
    second = run(str(path), instrumented, options)
    if second.error is not None or second.after != first.after:
        return f"FAIL second run changed the file: {second.error or 'different text'}"
    undone = run(str(path), instrumented, None, undoing=True)
    if undone.error is not None or undone.source.encode(undone.after) != data:
        return f"FAIL undo did not restore the original: {undone.error or 'different bytes'}"
    return "instrumented"


def main(argv: list[str]) -> int:
    limit = None
    if "--limit" in argv:
        at = argv.index("--limit")
        limit = int(argv[at + 1])
        del argv[at: at + 2]
    markdown = "--markdown" in argv
    paths = [a for a in argv if not a.startswith("--")]
    corpora = [(p, Path(p)) for p in paths] or default_corpora()
    options = Options(grad_probe=True)
    failed = False
    rows = []
    for label, root in corpora:
        files = sorted(root.rglob("*.py")) if root.is_dir() else [root]
        files = files[:limit] if limit else files
        counts: Counter[str] = Counter()
        lines = 0
        started = time.perf_counter()
        for number, path in enumerate(files, 1):
            if number % 200 == 0:
                print(f"  {label}: {number}/{len(files)} files, {time.perf_counter() - started:.0f} s", file=sys.stderr)
            outcome = check_file(path, options)
            lines += path.read_bytes().count(b"\n")
            counts[outcome.split(":")[0] if outcome.startswith("FAIL") else outcome] += 1
            if outcome.startswith("FAIL"):
                failed = True
                print(f"{os.path.relpath(path, root)}: {outcome}", file=sys.stderr)
        seconds = time.perf_counter() - started
        rows.append((label, len(files), lines, counts, seconds))
        print(f"{label}: {len(files)} files, {lines} lines, {dict(counts)}, {seconds:.1f} s")
    if markdown:
        print("\n| corpus | files | lines | instrumented | unchanged | unparsable originals | failures | time |")
        print("| --- | --- | --- | --- | --- | --- | --- | --- |")
        for label, count, lines, counts, seconds in rows:
            failures = sum(v for k, v in counts.items() if k.startswith("FAIL"))
            print(f"| {label} | {count} | {lines} | {counts['instrumented']} | {counts['unchanged']} | "
                  f"{counts['unparsable']} | {failures} | {seconds:.0f} s |")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""`compare()` and `compare_distributed()`: pair the dumps, compare each pair, write one report per pair.

Report files are named `compare_result_{step}_{rank}.csv|xlsx` or `compare_report_{step}_{rank}.html`
(`compare_result.csv` for a single pair of files). Large tables are released once written; what is
returned is a light summary per pair.
"""

from __future__ import annotations

import gc
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from msprobe_runtime.core.compare import engine, html, report
from msprobe_runtime.core.compare.divergence import Divergence
from msprobe_runtime.core.compare.locate import CompareError, Pair, find_pairs

FORMATS = ("csv", "xlsx", "html")


@dataclass
class PairSummary:
    """The outcome of one pair: counts, the divergence (or None), the report written."""

    pair: Pair
    mode: str
    counts: dict
    divergence: Divergence | None
    output: Path
    seconds: float
    left_out_rows: int = 0


@dataclass
class CompareRun:
    """All pairs of one comparison."""

    pairs: list[PairSummary] = field(default_factory=list)

    @property
    def first(self) -> PairSummary | None:
        """The pair to report first: of the earliest step with a divergence or difference, the first rank
        where a call made the difference (a true divergence), else the first rank with any difference (one
        that arrived from outside the captured calls, e.g. through DDP's gradient all-reduce)."""
        differing = [summary for summary in self.pairs if summary.divergence is not None]
        if not differing:
            return None
        step = [summary for summary in differing if summary.pair.step == differing[0].pair.step]
        return next((summary for summary in step if summary.divergence.kind == "divergence"), step[0])

    @property
    def exit_code(self) -> int:
        """0 when every pair agrees, 1 when some pair differs."""
        return 1 if self.first is not None else 0


def _file_name(pair: Pair, fmt: str) -> str:
    parts = [f"step{pair.step}" if pair.step is not None else "", f"rank{pair.rank}" if pair.rank is not None else ""]
    label = "_".join(part for part in parts if part)
    stem = "compare_report" if fmt == "html" else "compare_result"
    return f"{stem}_{label}.{fmt}" if label else f"{stem}.{fmt}"


def write_report(result: engine.PairResult, output_dir: Path, fmt: str) -> tuple[Path, int]:
    """Write one pair's report in `fmt`; returns its path and the rows an XLSX sheet could not hold."""
    path = output_dir / _file_name(result.pair, fmt)
    left_out = 0
    if fmt == "csv":
        report.write_csv(result, path)
    elif fmt == "xlsx":
        left_out = report.write_xlsx(result, path)
    else:
        html.write_html(result, path)
    return path, left_out


def compare(target, golden, output_dir="./output", *, fmt: str = "csv", fuzzy_match: bool = False,
            rank: int | None = None, rtol: float = 0.0, progress=None) -> CompareRun:
    """Compare TARGET with GOLDEN (dump.json files, step folders or dump folders) and write reports.

    Raises CompareError (one line) when the dumps cannot be paired or read."""
    if fmt not in FORMATS:
        raise CompareError(f"unknown format '{fmt}'; allowed: {', '.join(FORMATS)}")
    if rtol < 0:
        raise CompareError("rtol must be 0 or more")
    pairs = find_pairs(target, golden, rank)
    output = Path(output_dir)
    try:
        output.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise CompareError(f"output folder '{output}' cannot be created: {error.strerror or error}") from None
    run = CompareRun()
    for pair in pairs:
        with _cycle_collector_paused():
            result = engine.compare_pair(pair, fuzzy=fuzzy_match, rtol=rtol, progress=progress)
            try:
                path, left_out = write_report(result, output, fmt)
            except OSError as error:
                raise CompareError(f"cannot write the report to '{output}': {error.strerror or error}") from None
        run.pairs.append(PairSummary(pair, result.mode, result.counts, result.divergence, path, result.seconds, left_out))
    return run


@contextmanager
def _cycle_collector_paused():
    """Reading a dump and writing its report create millions of short-lived containers and no reference
    cycles; the cyclic collector would scan every live one again and again (more than doubling the time)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def compare_distributed(target_dir, golden_dir, output_dir="./output", **options) -> CompareRun:
    """msprobe's name for comparing step (or dump) folders rank by rank: same as `compare`."""
    return compare(target_dir, golden_dir, output_dir, **options)

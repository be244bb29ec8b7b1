"""Compare one pair of dumps: read, pair rows, compute the mode's metrics, judge rows, find the divergence."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from msprobe_runtime.core.compare import crossframework, divergence, matching, parallel, rules, tensors
from msprobe_runtime.core.compare.jsonstream import DumpFormatError
from msprobe_runtime.core.compare.locate import STACK_FILE, CompareError, Pair
from msprobe_runtime.core.compare.progress import Progress
from msprobe_runtime.core.compare.statistics import VALUE, ZERO, StatisticsDiff, statistics_diff
from msprobe_runtime.core.compare.table import DumpTable, read_dump
from msprobe_runtime.core.naming import CONSTRUCT_FILE


@dataclass
class PairResult:
    """Everything known about one compared pair; `report_columns` (report.py) turns it into a table."""

    pair: Pair
    target: DumpTable
    golden: DumpTable
    mode: str
    record_match: np.ndarray
    partner: np.ndarray
    levels: np.ndarray
    message_bits: np.ndarray
    agree: np.ndarray
    error_curve: np.ndarray  # per row, the relative error plotted along execution order
    divergence: divergence.Divergence | None
    stats: StatisticsDiff | None = None
    tensor_columns: list[np.ndarray] | None = None
    tensor_messages: list[str] | None = None
    seconds: float = 0.0
    output: Path | None = None
    counts: dict = field(default_factory=dict)


def read_stacks(dump_file: Path) -> dict[str, list[str]]:
    """Record name -> stack lines from the stack.json beside `dump_file` ({} when absent or unreadable).

    Reads msprobe's two layouts: {"0": [[names...], [lines...]], ...} and {name: [lines...]}."""
    path = dump_file.parent / STACK_FILE
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(raw, dict):
        return {}
    stacks: dict[str, list[str]] = {}
    for key, value in raw.items():
        if isinstance(value, list) and len(value) == 2 and isinstance(value[0], list):
            for name in value[0]:
                stacks[str(name)] = value[1]
        elif isinstance(value, list):
            stacks[key] = value
    return stacks


def read_parents(dump_file: Path) -> dict[str, str | None]:
    """Record name -> the record of the module call it ran in, from the construct.json beside `dump_file`
    (L0 and mix; {} when absent or unreadable)."""
    try:
        raw = json.loads((dump_file.parent / CONSTRUCT_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {str(name): parent for name, parent in raw.items() if parent is None or isinstance(parent, str)} \
        if isinstance(raw, dict) else {}


def load(path: Path, role: str, progress=None) -> DumpTable:
    """Read a dump.json with its stacks; CompareError with one clear line when it cannot be used."""
    try:
        table = read_dump(path, read_stacks(path), progress)
        table.parents = read_parents(path)
    except DumpFormatError as error:
        raise CompareError(f"{role} '{path}' is not a valid dump.json: {error}") from None
    except OSError as error:
        raise CompareError(f"{role} '{path}' cannot be read: {error.strerror or error}") from None
    if not table.records:
        raise CompareError(f"{role} '{path}' is an empty dump (no records in \"data\")")
    if not len(table):
        raise CompareError(f"{role} '{path}' has records but no arguments or outputs to compare")
    return table


def load_pair(pair: Pair, progress: Progress) -> tuple[DumpTable, DumpTable]:
    """Both sides of `pair`; large ones side by side, GOLDEN in a forked process (parallel.py)."""
    sizes = _size(pair.target), _size(pair.golden)
    progress.start(f"reading {pair.label}", sum(sizes))
    try:
        if sum(sizes) < parallel.PARALLEL_BYTES or not parallel.available():
            return load(pair.target, "TARGET", progress.advance), load(pair.golden, "GOLDEN", progress.advance)
        golden = parallel.Beside(load, pair.golden, "GOLDEN")
        try:
            target = load(pair.target, "TARGET", progress.advance)
        except BaseException:
            golden.cancel()
            raise
        result = target, golden.result()
        progress.advance(sizes[1])
        return result
    finally:
        progress.finish()


def _common_mode(target: DumpTable, golden: DumpTable) -> str:
    modes = {target.mode, golden.mode}
    if len(modes) == 1:
        return target.mode
    if "tensor" in modes:
        raise CompareError(f"cannot compare a {target.mode} dump with a {golden.mode} dump: dump both with the same task")
    if modes == {"md5", "statistics"} or modes == {"md5", "hash"}:
        raise CompareError("cannot compare an md5 dump with a statistics dump: dump both with the same summary_mode")
    return "statistics"  # hash on one side only: compare statistics


def compare_pair(pair: Pair, fuzzy: bool = False, rtol: float = 0.0, progress: Progress | None = None) -> PairResult:
    """Compare one pair of dump.json files (no file is written here)."""
    started = time.perf_counter()
    progress = progress or Progress()
    target, golden = load_pair(pair, progress)
    mode = _common_mode(target, golden)
    aligned = crossframework.align(target, golden)  # MindSpore vs PyTorch: names, parameters, dtypes mapped
    record_match = crossframework.match_records(aligned, fuzzy)
    partner = matching.match_rows(aligned.target, aligned.golden, record_match)
    matched = partner >= 0
    rows = rules.Rows(aligned.target, aligned.golden, partner)
    stats = tensor_columns = tensor_messages = None
    if mode == "tensor":
        progress.start(f"comparing tensors of {pair.label}", len(target))
        try:
            tensor_columns, tensor_messages = tensors.tensor_metrics(target, golden, partner, progress.advance)
        finally:
            progress.finish()
        rows.thousandth = _numbers(tensor_columns[4])
        rows.cosine = _numbers(tensor_columns[0])
        max_abs, max_relative = _numbers(tensor_columns[2]), _numbers(tensor_columns[3])
        stats = statistics_diff(target, golden, partner)
        rows.max_equal = stats.equal[:, 0]
        exact = stats.equal.all(axis=1)
        agree = np.where(np.isnan(max_abs), exact, max_abs == 0 if rtol == 0 else max_relative <= rtol)
        curve = np.nan_to_num(max_relative, nan=0.0)
    else:
        stats = statistics_diff(target, golden, partner)
        rows.max_equal, rows.norm_relative = stats.equal[:, 0], stats.relatives[3]
        agree = _statistics_agree(stats, rtol)
        if mode in ("md5", "hash"):
            agree = _digests_agree(target, golden, partner, agree)
        curve = np.nan_to_num(np.abs(stats.relatives[3].fraction()), nan=0.0)
    levels, bits = rules.judge(rows, mode)
    agree &= matched
    found = divergence.find(target, golden, record_match, partner, agree)
    result = PairResult(pair, target, golden, mode, record_match, partner, levels, bits, agree, curve, found,
                        stats, tensor_columns, tensor_messages)
    result.counts = {
        "rows": len(target), "calls": len(target.records), "matched": int(matched.sum()),
        "unmatched": int((~matched).sum()), "differ": int((matched & ~agree).sum()),
        "golden_only_calls": int(len(golden.records) - len(np.unique(record_match[record_match >= 0]))),
        "pass": int((levels == rules.PASS).sum()), "warning": int((levels == rules.WARNING).sum()),
        "error": int((levels == rules.ERROR).sum()),
        "without_data": sum(message.startswith((tensors.NO_DATA, tensors.UNREADABLE))
                            for message in tensor_messages or ()),
    }
    result.seconds = time.perf_counter() - started
    return result


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _numbers(cells: np.ndarray) -> np.ndarray:
    """Object cells as floats (NaN where a cell is text)."""
    return np.array([cell if isinstance(cell, float) else np.nan for cell in cells.tolist()], dtype=float)


def _statistics_agree(stats: StatisticsDiff, rtol: float) -> np.ndarray:
    """Rows whose statistics are equal (rtol 0) or within rtol on Max, Min and Norm."""
    if rtol == 0:
        return stats.equal.all(axis=1)
    agree = np.ones(len(stats.equal), dtype=bool)
    for relative in (stats.relatives[0], stats.relatives[1], stats.relatives[3]):
        with np.errstate(invalid="ignore"):
            close = (relative.code == ZERO) | ((relative.code == VALUE) & (relative.value / 100.0 <= rtol))
        agree &= close
    return agree


def _digests_agree(target: DumpTable, golden: DumpTable, partner: np.ndarray, fallback: np.ndarray) -> np.ndarray:
    """Bit-exact agreement by hash/md5 where both rows have one; `fallback` (statistics) elsewhere."""
    other = np.where(partner >= 0, partner, 0)
    t_digest = np.asarray(target.digest, dtype=object)
    g_digest = np.asarray(golden.digest, dtype=object)[other]
    known = (t_digest != None) & (g_digest != None)  # noqa: E711 - elementwise on object arrays
    return np.where(known, t_digest == g_digest, fallback)

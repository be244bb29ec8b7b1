"""The gradient probe's files in msprobe's format, framework-free, written off the training thread.

Per optimizer step N and rank R (msprobe's grad_probe layout):
- `{dump_path}/rank{R}/grad_summary_{N}.csv`: one row per parameter; columns by grad_level
  (L0: param_name, MD5, max, min, norm, shape; L1: no MD5; L2: one column per interval cut by `bounds`,
  then "=0", max, min, norm, shape). UTF-8 with BOM and csv-module rows, as msprobe writes them;
  "MD5" holds msprobe's value: the CRC-32 of the gradient as float32 bytes.
- `{dump_path}/rank{R}/step{N}/{param}.npy` (L1, L2): the gradient's sign, `grad > 0`, as a bool array.
A step's sign folder appears whole (written aside, then renamed) and its CSV atomically, CSV last.
"""

from __future__ import annotations

import atexit
import csv
import functools
import io
import math
import os
import queue
import shutil
import threading
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path

import numpy as np

from msprobe_runtime.core.files import atomic_file_ops, run_file_ops, safe_filename

_LEVEL_COLUMNS = {
    "L0": ("MD5", "max", "min", "norm", "shape"),
    "L1": ("max", "min", "norm", "shape"),
    "L2": ("distribution", "max", "min", "norm", "shape"),
}
_SIGN_FILE_MODE = 0o640
_QUEUED_STEPS = 4  # steps in flight before the training thread waits: bounds the memory held


@dataclass(frozen=True)
class GradStep:
    """One optimizer step's gradient facts, already on the host.

    `stats` has one float64 row per parameter: max, min, norm, then at L2 the element count of each
    interval cut by `bounds` (len(bounds) + 1 of them) and the count of zeros. `signs` (L1, L2) and
    `values` (L0, float32) hold all parameters' elements flattened and concatenated in `names` order.
    """

    rank: int
    step: int
    level: str
    bounds: tuple[float, ...]
    names: tuple[str, ...]
    shapes: tuple[tuple[int, ...], ...]
    stats: np.ndarray
    signs: np.ndarray | None = None
    values: np.ndarray | None = None


def has_signs(level: str) -> bool:
    """True when `level` writes the per-parameter sign files (msprobe's have_grad_direction)."""
    return level in ("L1", "L2")


def interval_names(bounds) -> list[str]:
    """msprobe's L2 distribution headers: "(-inf, b0]", "(b0, b1]", ..., "(bn, inf)", "=0"."""
    edges = ["-inf", *(str(bound) for bound in bounds)]
    closed = [f"({low}, {high}]" for low, high in pairwise(edges)]
    return [*closed, f"({edges[-1]}, inf)", "=0"]


def summary_header(level: str, bounds) -> list[str]:
    """The CSV header row for `level`, exactly as msprobe writes it."""
    header = ["param_name"]
    for column in _LEVEL_COLUMNS[level]:
        header.extend(interval_names(bounds) if column == "distribution" else [column])
    return header


def summary_rows(record: GradStep) -> list[list]:
    """The CSV data rows of one step, in msprobe's cell formats."""
    rows, offset = [], 0
    for name, shape, stats in zip(record.names, record.shapes, record.stats.tolist(), strict=True):
        count = math.prod(shape)
        cells = {"max": stats[0], "min": stats[1], "norm": stats[2], "shape": list(shape)}
        if record.values is not None:
            cells["MD5"] = f"{zlib.crc32(record.values[offset : offset + count].tobytes()):08x}"
        if record.level == "L2":
            cells["distribution"] = [part / count if count else 0 for part in stats[3:]]
        row = [name]
        for column in _LEVEL_COLUMNS[record.level]:
            row.extend(cells[column] if column == "distribution" else [cells[column]])
        rows.append(row)
        offset += count
    return rows


def rank_folder(dump_path: str | os.PathLike, rank: int) -> Path:
    """`{dump_path}/rank{R}`."""
    return Path(dump_path) / f"rank{rank}"


def write_step(dump_path: str | os.PathLike, record: GradStep) -> None:
    """Write one step's sign folder (whole, by rename) and then its grad_summary CSV (atomically), in
    one batch of file operations (core.files.run_file_ops); an earlier run's folder of the same step,
    or a crash's leftovers, are removed and the batch run again."""
    folder = rank_folder(dump_path, record.rank)
    buffer = io.StringIO()
    csv.writer(buffer).writerows([summary_header(record.level, record.bounds), *summary_rows(record)])
    ops = [("makedirs", folder)]
    if record.signs is not None:
        target = folder / f"step{record.step}"
        partial = target.with_name(f".{target.name}.partial")
        ops += [("mkdir", partial), *_sign_file_ops(partial, record), ("rename", partial, target)]
    ops += atomic_file_ops(folder / f"grad_summary_{record.step}.csv", ("\ufeff" + buffer.getvalue()).encode("utf-8"))
    try:
        run_file_ops(ops)
    except OSError:
        if record.signs is not None:
            shutil.rmtree(partial, ignore_errors=True)
            shutil.rmtree(target, ignore_errors=True)
        run_file_ops(ops)


def _sign_file_ops(folder: Path, record: GradStep) -> list[tuple]:
    """One new file per parameter: the .npy header, then its signs (a view, not a copy)."""
    signs = memoryview(np.ascontiguousarray(record.signs, dtype=np.bool_)).cast("B")
    ops, offset = [], 0
    for name, shape in zip(record.names, record.shapes, strict=True):
        count = math.prod(shape)
        ops.append(("new", os.path.join(folder, _sign_file_name(name)), _SIGN_FILE_MODE, _bool_npy_header(shape),
                    signs[offset : offset + count]))
        offset += count
    return ops


@functools.lru_cache(maxsize=65536)
def _sign_file_name(param_name: str) -> str:
    """`{param}.npy`, made a safe single path component."""
    return f"{safe_filename(param_name)}.npy"


@functools.lru_cache(maxsize=65536)
def _bool_npy_header(shape: tuple[int, ...]) -> bytes:
    """The .npy header np.save writes for a C-ordered bool array of `shape` (format 1.0)."""
    buffer = io.BytesIO()
    np.lib.format.write_array_header_1_0(buffer, {"descr": "|b1", "fortran_order": False, "shape": shape})
    return buffer.getvalue()


class GradSummaryWriter:
    """Writes GradStep records on a background thread, in order; errors surface on the next call."""

    def __init__(self, dump_path: str | os.PathLike):
        self.dump_path = Path(dump_path)
        self._queue: queue.Queue = queue.Queue(maxsize=_QUEUED_STEPS)
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="msprobe-grad-writer", daemon=True)
        self._thread.start()
        atexit.register(self.close)

    def submit(self, record: GradStep | Callable[[], GradStep]) -> None:
        """Queue one step for writing (waits while the queue is full); a callable is called on the
        writer thread to make the step's record (work taken off the training thread)."""
        self._raise_pending()
        if not self._thread.is_alive():
            raise RuntimeError("grad summary writer is closed")
        self._queue.put(record)

    def flush(self) -> None:
        """Wait until every queued step is on disk."""
        self._queue.join()
        self._raise_pending()

    def close(self) -> None:
        """Flush and stop the thread; idempotent."""
        if self._thread.is_alive():
            self._queue.put(None)
            self._thread.join()
        atexit.unregister(self.close)
        self._raise_pending()

    def _run(self) -> None:
        while True:
            record = self._queue.get()
            try:
                if record is None:
                    return
                if self._error is None:
                    write_step(self.dump_path, record if isinstance(record, GradStep) else record())
            except BaseException as error:  # handed to the training thread by _raise_pending
                self._error = error
            finally:
                self._queue.task_done()

    def _raise_pending(self) -> None:
        error, self._error = self._error, None
        if error is not None:
            raise RuntimeError(f"writing the gradient probe's files under {self.dump_path} failed: {error}") from error

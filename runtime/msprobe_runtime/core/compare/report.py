"""The comparison table in msprobe 26.x's column order, and its CSV and XLSX files.

Columns: `NPU Name`, `Bench Name`, dtypes, shapes, requires_grad of both sides; then by mode the
statistics differences and relative errors (statistics), the six tensor metrics (tensor), or the two
MD5s (md5); both sides' statistics (not in md5 mode); for our hash mode also `NPU hash`/`Bench hash`;
then `Requires_grad Consistent`, `Result`, `Err_message`, `NPU_Stack_Info` (when stack.json exists; on
the first row of each call) and, in tensor mode, `Data_name`. "N/A" marks the golden side of an unpaired
row. Infinities are written " inf"/" -inf" so spreadsheets read them as text, as msprobe does.
"""

from __future__ import annotations

import csv
import io
import os
import shutil
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

from msprobe_runtime.core.compare import parallel, rules
from msprobe_runtime.core.compare.engine import PairResult
from msprobe_runtime.core.compare.statistics import DIFF_COLUMNS, RELATIVE_COLUMNS, Coded
from msprobe_runtime.core.compare.table import NULL, TEXT, DumpTable
from msprobe_runtime.core.compare.tensors import COLUMNS as TENSOR_COLUMNS
from msprobe_runtime.core.files import NEW_FILE_MODE, atomic_write_bytes

NA = "N/A"
BASIC = ("NPU Name", "Bench Name", "NPU Dtype", "Bench Dtype", "NPU Tensor Shape", "Bench Tensor Shape",
         "NPU Requires_grad", "Bench Requires_grad")
NPU_STATS = ("NPU max", "NPU min", "NPU mean", "NPU l2norm")
BENCH_STATS = ("Bench max", "Bench min", "Bench mean", "Bench l2norm")
EXCEL_ROWS = 1_048_575  # one header row + this many rows fill an Excel sheet


def _side(values, partner: np.ndarray, fill=NA) -> np.ndarray:
    """Golden cells for target rows paired as `partner` (`fill` where unpaired)."""
    cells = np.asarray(values, dtype=object)[np.where(partner >= 0, partner, 0)] if len(values) else \
        np.full(len(partner), fill, dtype=object)
    cells[partner < 0] = fill
    return cells


def _stat_cells(table: DumpTable, column: int, rows: np.ndarray | None = None) -> np.ndarray:
    """One statistic as report cells: numbers, "Nan" for NaN (msprobe's spelling), text, "None"."""
    rows = np.arange(len(table)) if rows is None else rows
    values, kinds = table.stats[rows, column], table.stat_kind[rows, column]
    cells = values.astype(object)
    cells[values == np.inf] = " inf"
    cells[values == -np.inf] = " -inf"
    integral = np.asarray(table.dtype, dtype=object)[rows] == "<class 'int'>"
    if integral.any():  # int arguments print as ints, as msprobe prints them
        cells[integral & (kinds == 0)] = values[integral & (kinds == 0)].astype(np.int64).astype(object)
    cells[np.isnan(values)] = "Nan"
    cells[kinds == NULL] = "None"
    for position in np.flatnonzero(kinds == TEXT):
        cells[position] = table.stat_text[(int(rows[position]), column)]
    return cells


def _digests(values: np.ndarray) -> np.ndarray:
    cells = values.astype(object)
    cells[pd.isna(cells)] = NA
    return cells


def _requires_grad(values: np.ndarray) -> np.ndarray:
    return np.array([NA, False, True], dtype=object)[values + 1]


def report_columns(result: PairResult, rows: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """Column name -> cells (object arrays) of `rows` (all by default), in msprobe's order for the mode."""
    target, golden = result.target, result.golden
    rows = np.arange(len(target)) if rows is None else rows
    partner = result.partner[rows]
    matched = partner >= 0
    other = np.where(matched, partner, 0)
    columns: dict[str, np.ndarray] = {
        "NPU Name": np.asarray(target.row_names(rows), dtype=object),
        "Bench Name": _side(golden.row_names(other), np.where(matched, np.arange(len(rows)), -1)),
        "NPU Dtype": target.dtype[rows], "Bench Dtype": _side(golden.dtype, partner),
        "NPU Tensor Shape": target.shape[rows], "Bench Tensor Shape": _side(golden.shape, partner),
        "NPU Requires_grad": _requires_grad(target.requires_grad[rows]),
        "Bench Requires_grad": np.where(matched, _requires_grad(golden.requires_grad[other]), NA),
    }
    if result.mode == "md5":
        columns["NPU MD5"] = _digests(target.digest[rows])
        columns["BENCH MD5"] = _digests(_side(golden.digest, partner))
    else:
        if result.mode == "tensor":
            columns.update((name, _text_infinities(cells[rows]))
                           for name, cells in zip(TENSOR_COLUMNS, result.tensor_columns, strict=True))
        else:
            for names, coded_columns in ((DIFF_COLUMNS, result.stats.diffs), (RELATIVE_COLUMNS, result.stats.relatives)):
                columns.update((name, Coded(coded.value[rows], coded.code[rows], coded.percent).objects())
                               for name, coded in zip(names, coded_columns, strict=True))
        for column, name in enumerate(NPU_STATS):
            columns[name] = _stat_cells(target, column, rows)
        for column, name in enumerate(BENCH_STATS):
            cells = _stat_cells(golden, column, other)
            cells[~matched] = NA
            columns[name] = cells
        if result.mode == "hash":
            columns["NPU hash"] = _digests(target.digest[rows])
            columns["Bench hash"] = _digests(_side(golden.digest, partner))
    columns["Requires_grad Consistent"] = columns["NPU Requires_grad"] == columns["Bench Requires_grad"]
    columns["Result"] = np.asarray(rules.LEVEL_TEXT, dtype=object)[result.levels[rows]]
    messages = rules.message_texts(result.message_bits[rows])
    if result.tensor_messages is not None:
        extras = [result.tensor_messages[row] for row in rows.tolist()]
        messages = np.asarray([f"{text} {extra}" if extra else text
                               for text, extra in zip(messages.tolist(), extras, strict=True)], dtype=object)
    columns["Err_message"] = messages
    if target.stacks:
        columns["NPU_Stack_Info"] = _stacks(target, rows)
    if result.mode == "tensor":
        no_file = "-1"  # msprobe's mark for a row without a data file
        golden_names = _side(golden.data_name, partner)
        columns["Data_name"] = np.array([str([a or no_file, b or no_file]) for a, b in
                                         zip(target.data_name[rows].tolist(), golden_names.tolist(), strict=True)],
                                        dtype=object)
    return columns


def _stacks(table: DumpTable, rows: np.ndarray) -> np.ndarray:
    """The call's stack (as msprobe writes it, a list) on its first row; empty on the others."""
    record = table.row_record
    first = np.r_[True, record[1:] != record[:-1]][rows] if len(record) else np.zeros(0, bool)
    cells = np.full(len(rows), "", dtype=object)
    for position in np.flatnonzero(first).tolist():
        lines = table.stacks.get(table.records[record[rows[position]]])
        if lines is not None:
            cells[position] = str(lines)
    return cells


def _text_infinities(cells: np.ndarray) -> np.ndarray:
    """Float infinities as " inf"/" -inf" (msprobe's spelling, so spreadsheets keep them as text)."""
    floats = np.array([type(cell) is float for cell in cells.tolist()], dtype=bool)
    if floats.any():
        values = cells[floats].astype(float)
        infinite = np.isinf(values)
        if infinite.any():
            cells = cells.copy()
            cells[np.flatnonzero(floats)[infinite]] = np.where(values[infinite] > 0, " inf", " -inf")
    return cells


def write_csv(result: PairResult, path: Path) -> None:
    """Write the table as CSV (UTF-8, msprobe's header) into place atomically; a large table is written in
    two halves at once, the second by a forked process (parallel.py), and joined."""
    path.parent.mkdir(parents=True, exist_ok=True)
    count = len(result.target)
    half = count // 2 if count >= parallel.PARALLEL_ROWS and parallel.available() else count
    handle = _temporary(path)
    second = None
    try:
        with handle:
            if half < count:
                second = _temporary(path)
                second.close()
                writer = parallel.Beside(_write_rows_to, result, half, count, second.name)
                try:
                    _write_rows(result, 0, half, handle, header=True)
                except BaseException:
                    writer.cancel()
                    raise
                writer.result()
                with open(second.name, "rb") as rest:
                    handle.flush()
                    shutil.copyfileobj(rest, handle.buffer, 1 << 22)
            else:
                _write_rows(result, 0, count, handle, header=True)
        os.replace(handle.name, path)
    finally:
        Path(handle.name).unlink(missing_ok=True)
        if second is not None:
            Path(second.name).unlink(missing_ok=True)


def _temporary(path: Path):
    handle = tempfile.NamedTemporaryFile("w", encoding="utf-8", newline="", dir=path.parent,
                                         prefix=f".{path.name}.", suffix=".tmp", delete=False)
    os.chmod(handle.name, NEW_FILE_MODE)
    return handle


def _write_rows_to(result: PairResult, start: int, stop: int, file_name: str) -> None:
    with open(file_name, "w", encoding="utf-8", newline="") as handle:
        _write_rows(result, start, stop, handle, header=False)


def _write_rows(result: PairResult, start: int, stop: int, handle, header: bool, chunk: int = 1 << 16) -> None:
    """CSV lines of rows [start, stop), a chunk at a time; the header line first when `header`."""
    writer = csv.writer(handle, lineterminator="\n")
    for first in range(start, max(stop, start + 1), chunk):
        columns = report_columns(result, np.arange(first, min(first + chunk, stop)))
        if header and first == start:
            writer.writerow(list(columns))
        writer.writerows(zip(*(cells.tolist() for cells in columns.values()), strict=True))


def write_xlsx(result: PairResult, path: Path) -> int:
    """Write the table as XLSX with msprobe's highlighting (error rows red, warning rows yellow).

    Returns the number of rows left out because a sheet holds at most 1,048,575 of them."""
    columns = report_columns(result, np.arange(min(len(result.target), EXCEL_ROWS)))
    from openpyxl import Workbook
    from openpyxl.cell import WriteOnlyCell
    from openpyxl.styles import Font, PatternFill

    fills = {"error": PatternFill("solid", fgColor="FF0000"), "warning": PatternFill("solid", fgColor="FFFF00")}
    book = Workbook(write_only=True)
    sheet = book.create_sheet("compare_result")
    header = []
    for name in columns:
        cell = WriteOnlyCell(sheet, value=name)
        cell.font = Font(bold=True)
        header.append(cell)
    sheet.append(header)
    names = list(columns)
    result_index = names.index("Result")
    for row in zip(*(cells.tolist() for cells in columns.values()), strict=True):
        fill = fills.get(row[result_index])
        if fill is None:
            sheet.append([_excel(value) for value in row])
            continue
        cells = []
        for value in row:
            cell = WriteOnlyCell(sheet, value=_excel(value))
            cell.fill = fill
            cells.append(cell)
        sheet.append(cells)
    buffer = io.BytesIO()
    book.save(buffer)
    atomic_write_bytes(path, buffer.getvalue())
    return max(0, len(result.target) - EXCEL_ROWS)


def _excel(value):
    if type(value) is float and np.isnan(value):
        return "Nan"
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    return value

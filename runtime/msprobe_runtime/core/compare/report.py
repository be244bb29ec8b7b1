"""The comparison table in msprobe 26.x's column order, and its CSV and XLSX files.

Columns: `NPU Name`, `Bench Name`, dtypes, shapes, requires_grad of both sides; then by mode the
statistics differences and relative errors (statistics), the six tensor metrics (tensor), or the two
MD5s (md5); both sides' statistics (not in md5 mode); for our hash mode also `NPU hash`/`Bench hash`;
then `Requires_grad Consistent`, `Result`, `Err_message`, `NPU_Stack_Info` (when stack.json exists; on
the first row of each call) and, in tensor mode, `Data_name`. "N/A" marks the golden side of an unpaired
row. NaN is written "Nan" and infinities " inf"/" -inf" so spreadsheets read them as text, as msprobe does.

Columns of numbers and of few distinct words are kept as arrays (`Cells`) until written: polars spells
the CSV (numbers in the shortest text that reads back as the same float64); XLSX and HTML get Python
objects (`report_columns`).
"""

from __future__ import annotations

import io
import os
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from msprobe_runtime.core.compare import rules
from msprobe_runtime.core.compare.engine import PairResult
from msprobe_runtime.core.compare.statistics import CODE_TEXT, DIFF_COLUMNS, RELATIVE_COLUMNS, Coded
from msprobe_runtime.core.compare.table import NULL, NUMBER, TEXT, DumpTable
from msprobe_runtime.core.compare.tensors import COLUMNS as TENSOR_COLUMNS
from msprobe_runtime.core.files import NEW_FILE_MODE, atomic_write_bytes

NA = "N/A"
BASIC = ("NPU Name", "Bench Name", "NPU Dtype", "Bench Dtype", "NPU Tensor Shape", "Bench Tensor Shape",
         "NPU Requires_grad", "Bench Requires_grad")
NPU_STATS = ("NPU max", "NPU min", "NPU mean", "NPU l2norm")
BENCH_STATS = ("Bench max", "Bench min", "Bench mean", "Bench l2norm")
EXCEL_ROWS = 1_048_575  # one header row + this many rows fill an Excel sheet
CSV_ROWS = 1 << 16  # rows turned into text at a time when writing CSV (bounds the memory held)


@dataclass
class Cells:
    """A column of a few distinct words and numbers: cell i is `words[codes[i]]` or, where that word is None,
    the number `values[i]` (an int where `integral[i]`, followed by "%" when `percent`). `number_cells`
    makes one of numbers."""

    codes: np.ndarray  # int: index into `words`
    words: list  # texts or True/False; None: the number
    values: np.ndarray | None = None  # float64
    integral: np.ndarray | None = None  # bool
    percent: bool = False


def _code(words: list, word) -> int:
    """The index of `word` in `words`, added at the end when missing."""
    if word not in words:
        words.append(word)
    return words.index(word)


def number_cells(values: np.ndarray, codes: np.ndarray | None = None, words=(None,), integral: np.ndarray | None = None,
                 percent: bool = False) -> Cells:
    """Cells of `values` (words where `codes` say so); a shown NaN becomes "Nan" and, outside percentages,
    infinities " inf"/" -inf"; `integral` rows print as ints where they fit an int64."""
    codes = np.zeros(len(values), np.intp) if codes is None else codes.astype(np.intp)
    words = list(words)
    shown = np.array([word is None for word in words])[codes]
    spelled = [(np.isnan(values), "Nan")] + ([] if percent else [(values == np.inf, " inf"), (values == -np.inf, " -inf")])
    for mask, text in spelled:
        if (shown & mask).any():
            codes[shown & mask] = _code(words, text)
    integral = None if integral is None else integral & (np.abs(values) < 2.0 ** 63)
    return Cells(codes, words, values, integral, percent)


def cell_objects(cells: Cells | np.ndarray) -> np.ndarray:
    """A column as Python objects, as XLSX and HTML take them: floats, ints, texts ("12.5%" for percentages),
    True/False."""
    if not isinstance(cells, Cells):
        return cells
    objects = np.empty(len(cells.words), dtype=object)
    objects[:] = cells.words
    objects = objects[cells.codes]
    if cells.values is not None:
        shown = np.equal(objects, None)
        numbers = cells.values.astype(object)
        if cells.integral is not None:
            numbers[cells.integral] = cells.values[cells.integral].astype(np.int64).astype(object)
        if cells.percent:
            numbers = np.char.add(numbers.astype(str), "%").astype(object)
        objects[shown] = numbers[shown]
    return objects


def _side(values, partner: np.ndarray, fill=NA) -> np.ndarray:
    """Golden cells for target rows paired as `partner` (`fill` where unpaired)."""
    cells = np.asarray(values, dtype=object)[np.where(partner >= 0, partner, 0)] if len(values) else \
        np.full(len(partner), fill, dtype=object)
    cells[partner < 0] = fill
    return cells


def _stat_cells(table: DumpTable, rows: np.ndarray, unpaired: np.ndarray | None = None) -> list[Cells]:
    """The four statistics of `rows`: numbers ("Nan" for NaN, msprobe's spelling), their text, "None" for
    null, "N/A" where `unpaired`; int arguments print as ints, as msprobe prints them."""
    stats, stat_kinds = table.stats[rows], table.stat_kind[rows]
    integral = np.asarray(table.dtype, dtype=object)[rows] == "<class 'int'>"
    columns = []
    for column in range(4):
        values, kinds = stats[:, column], stat_kinds[:, column]
        codes = np.where(kinds == NULL, 1, 0)
        texts = np.flatnonzero(kinds == TEXT)
        text_codes, words = pd.factorize(np.array([table.stat_text[(row, column)] for row in rows[texts].tolist()],
                                                  dtype=object))
        codes[texts] = text_codes + 3
        if unpaired is not None:
            codes[unpaired] = 2
        columns.append(number_cells(values, codes, [None, "None", NA, *words], integral & (kinds == NUMBER)))
    return columns


def _coded_cells(coded: Coded, rows: np.ndarray) -> Cells:
    """A statistics-mode difference column (statistics.py) at `rows`."""
    return number_cells(coded.value[rows], coded.code[rows], CODE_TEXT, percent=coded.percent)


def _metric_cells(cells: np.ndarray) -> Cells:
    """A tensor-mode metric column (floats and texts, tensors.py)."""
    numbers = np.fromiter((isinstance(cell, float) for cell in cells.tolist()), dtype=bool, count=len(cells))
    values = np.zeros(len(cells))
    values[numbers] = cells[numbers].astype(float)
    codes, texts = pd.factorize(cells[~numbers])
    all_codes = np.zeros(len(cells), np.intp)
    all_codes[~numbers] = codes + 1
    return number_cells(values, all_codes, [None, *texts])


def _requires_grad(flags: np.ndarray) -> Cells:
    """requires_grad cells from -1 (unknown), 0, 1."""
    return Cells(flags.astype(np.intp) + 1, [NA, False, True])


def _digests(values: np.ndarray) -> np.ndarray:
    cells = values.astype(object)
    cells[pd.isna(cells)] = NA
    return cells


def report_columns(result: PairResult, rows: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """Column name -> cells (object arrays) of `rows` (all by default), in msprobe's order for the mode."""
    return {name: cell_objects(cells) for name, cells in typed_columns(result, rows).items()}


def typed_columns(result: PairResult, rows: np.ndarray | None = None) -> dict[str, Cells | np.ndarray]:
    """Column name -> cells of `rows` (all by default), in msprobe's order for the mode: `Cells` for columns
    of numbers and few distinct words, object arrays of texts for the others."""
    target, golden = result.target, result.golden
    rows = np.arange(len(target)) if rows is None else rows
    partner = result.partner[rows]
    matched = partner >= 0
    other = np.where(matched, partner, 0)
    npu_grad = _requires_grad(target.requires_grad[rows])
    bench_grad = _requires_grad(np.where(matched, golden.requires_grad[other], -1))
    columns: dict[str, Cells | np.ndarray] = {
        "NPU Name": np.asarray(target.row_names(rows), dtype=object),
        "Bench Name": _side(golden.row_names(other), np.where(matched, np.arange(len(rows)), -1)),
        "NPU Dtype": target.dtype[rows], "Bench Dtype": _side(golden.dtype, partner),
        "NPU Tensor Shape": target.shape[rows], "Bench Tensor Shape": _side(golden.shape, partner),
        "NPU Requires_grad": npu_grad, "Bench Requires_grad": bench_grad,
    }
    if result.mode == "md5":
        columns["NPU MD5"] = _digests(target.digest[rows])
        columns["BENCH MD5"] = _digests(_side(golden.digest, partner))
    else:
        if result.mode == "tensor":
            columns.update((name, _metric_cells(cells[rows]))
                           for name, cells in zip(TENSOR_COLUMNS, result.tensor_columns, strict=True))
        else:
            for names, coded_columns in ((DIFF_COLUMNS, result.stats.diffs), (RELATIVE_COLUMNS, result.stats.relatives)):
                columns.update((name, _coded_cells(coded, rows)) for name, coded in zip(names, coded_columns, strict=True))
        columns.update(zip(NPU_STATS, _stat_cells(target, rows), strict=True))
        columns.update(zip(BENCH_STATS, _stat_cells(golden, other, ~matched), strict=True))
        if result.mode == "hash":
            columns["NPU hash"] = _digests(target.digest[rows])
            columns["Bench hash"] = _digests(_side(golden.digest, partner))
    columns["Requires_grad Consistent"] = Cells((npu_grad.codes == bench_grad.codes).astype(np.intp), [False, True])
    columns["Result"] = Cells(result.levels[rows], list(rules.LEVEL_TEXT))
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


def write_csv(result: PairResult, path: Path, chunk: int = CSV_ROWS) -> None:
    """Write the table as CSV (UTF-8, msprobe's header, LF line ends, quoted where needed) into place
    atomically, `chunk` rows at a time. polars spells and writes the cells of one chunk (on its own threads,
    without the GIL) while the columns of the next one are gathered here."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle = tempfile.NamedTemporaryFile("wb", dir=path.parent, prefix=f".{path.name}.", suffix=".tmp", delete=False)
    try:
        with handle, ThreadPoolExecutor(1) as writer:
            os.chmod(handle.name, NEW_FILE_MODE)
            count, written = len(result.target), None
            for start in range(0, max(count, 1), chunk):
                frame = _polars_frame(typed_columns(result, np.arange(start, min(start + chunk, count))))
                if written is not None:
                    written.result()
                written = writer.submit(_write_frame, frame, handle, start == 0)
            written.result()
        os.replace(handle.name, path)
    finally:
        Path(handle.name).unlink(missing_ok=True)


def _polars_frame(columns: dict[str, Cells | np.ndarray]):
    """The columns as a lazy polars frame of their texts."""
    import polars as pl  # here: its import costs a quarter second that other reports need not pay

    inputs, texts = {}, []
    for index, (name, cells) in enumerate(columns.items()):
        texts.append(_polars_text(cells, str(index), inputs).alias(name))
    return pl.DataFrame(inputs).lazy().select(texts)


def _write_frame(frame, handle, header: bool) -> None:
    frame.collect().write_csv(handle, include_header=header)


def _polars_text(cells: Cells | np.ndarray, key: str, inputs: dict):
    """A polars expression spelling one column, reading the arrays it adds to `inputs` (under names starting
    with `key`): numbers in their shortest round-trip spelling, words and True/False as str() spells them,
    an empty text as an empty field (as the csv module writes it)."""
    import polars as pl

    if not isinstance(cells, Cells):
        texts = cells.tolist()
        try:
            inputs[key] = pl.Series(texts, dtype=pl.String)
        except TypeError:  # not only texts (a dump with a number as dtype): as str() spells them
            inputs[key] = pl.Series([text if text is None or text.__class__ is str else str(text) for text in texts],
                                    dtype=pl.String)
        return pl.when(pl.col(key) != "").then(pl.col(key)) if "" in texts else pl.col(key)
    words = [None if word is None else str(word) for word in cells.words]
    shown = np.array([word is None for word in words])[cells.codes]  # where the number is shown
    if not shown.all():
        inputs[key + "c"] = cells.codes.astype(np.uint32)
        text = pl.lit(pl.Series(words, dtype=pl.String)).gather(pl.col(key + "c"))
        if not shown.any():
            return text
    inputs[key + "v"] = cells.values
    number = pl.col(key + "v").cast(pl.String)
    if cells.integral is not None and (cells.integral & shown).any():
        inputs[key + "i"] = cells.integral
        number = pl.when(pl.col(key + "i")).then(pl.col(key + "v").cast(pl.Int64, strict=False).cast(pl.String)) \
            .otherwise(number)
    number = number + "%" if cells.percent else number
    return number if shown.all() else pl.coalesce(text, number)


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

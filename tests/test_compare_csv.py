"""The CSV report, written by polars: every kind of cell (numbers, percentages, msprobe's texts, ints,
NaN and infinities, unpaired rows, True/False, stacks and messages with commas and quotes) reads back with
csv.reader and pandas to exactly the texts and float64 values of the table; chunks join seamlessly; a
failed write leaves no file behind."""

from __future__ import annotations

import csv
import json
import math
import stat

import numpy as np
import pandas as pd
import pytest
from msprobe_runtime.core.compare import report
from msprobe_runtime.core.compare.engine import compare_pair
from msprobe_runtime.core.compare.locate import Pair
from msprobe_runtime.core.files import NEW_FILE_MODE

EXTREMES = (1e-300, 5e-324, 1e300, -0.0, 0.1 + 0.2, 123456789.123, 2.5e-05, 1e16, 1.7976931348623157e308)
STACK = ['File "train.py", line 12, in step', 'loss = criterion(out, "target, \'quoted\'")']


def tensor(values, dtype="torch.float32", requires_grad=True) -> dict:
    top, low, mean, norm = values
    return {"type": "torch.Tensor", "dtype": dtype, "shape": [2, 3], "Max": top, "Min": low, "Mean": mean,
            "Norm": norm, "requires_grad": requires_grad}


def dump(folder, records: dict, stacks: dict | None = None):
    folder.mkdir(parents=True, exist_ok=True)
    lines = ",\n".join(f"{json.dumps(name)}: {json.dumps(record)}" for name, record in records.items())
    (folder / "dump.json").write_text(f'{{"task": "statistics", "level": "L1", "framework": "pytorch", '
                                      f'"version": 1,\n"data": {{\n{lines}\n}}}}\n')
    if stacks:
        (folder / "stack.json").write_text(json.dumps(stacks))
    return folder / "dump.json"


@pytest.fixture(scope="module")
def result(tmp_path_factory):
    """A pair whose table holds every kind of cell."""
    nan, inf = float("nan"), float("inf")
    extreme = [tensor((value, -value, value / 3, abs(value))) for value in EXTREMES]
    target = {
        "Functional.linear.0.forward": {"input_args": [*extreme, {"type": "int", "value": -1},
                                                       {"type": "int", "value": 2**70},
                                                       {"type": "str", "value": 'mode, "fast"'}],
                                        "output": [tensor((2.0, 1.0, 1.0000001, 3.0))]},
        "Tensor.add.0.forward": {"input_args": [tensor((nan, inf, -inf, 1.0)), tensor((None, 1.0, 2.0, 3.0)),
                                                {"type": "bool", "value": True}],
                                 "output": [tensor((1.0, 0.0, 1.0, 2.0), requires_grad=False)]},
        "Tensor.only.0.forward": {"output": [tensor((1.0, 2.0, 3.0, 4.0))]},
    }
    golden = json.loads(json.dumps(target))
    del golden["Tensor.only.0.forward"]
    golden["Functional.linear.0.forward"]["output"] = [tensor((1.0, 4.0, 1.0, 0.0))]
    golden["Functional.linear.0.forward"]["input_args"][-3] = {"type": "int", "value": 7}
    golden["Tensor.add.0.forward"]["input_args"][0] = tensor((1.0, 1.0, 1.0, 1.0))
    golden["Tensor.add.0.forward"]["input_args"][2] = {"type": "bool", "value": False}
    root = tmp_path_factory.mktemp("csv")
    stacks = {"0": [["Functional.linear.0.forward"], STACK]}
    pair = Pair(None, None, dump(root / "target", target, stacks), dump(root / "golden", golden))
    return compare_pair(pair)


def read_rows(path) -> list[list[str]]:
    with open(path, encoding="utf-8", newline="") as handle:
        return list(csv.reader(handle))


def same_float(text: str, value: float) -> bool:
    number = float(text)
    return number == value and math.copysign(1.0, number) == math.copysign(1.0, value)


def expected_text(cell) -> str | float:
    """What a cell of the table (as XLSX gets it) must read back as from the CSV: a float, or a text."""
    if isinstance(cell, (bool, np.bool_)):
        return str(bool(cell))
    if isinstance(cell, float):
        return cell
    return "" if cell is None else str(cell)


def test_every_cell_reads_back_as_the_table_holds_it(result, tmp_path):
    path = tmp_path / "compare_result.csv"
    report.write_csv(result, path)
    rows = read_rows(path)
    columns = report.report_columns(result)
    assert rows[0] == list(columns)
    assert len(rows) == len(result.target) + 1
    for name, cells in columns.items():
        index = rows[0].index(name)
        for row, cell in zip(rows[1:], cells.tolist(), strict=True):
            text, expected = row[index], expected_text(cell)
            if isinstance(expected, float):
                assert same_float(text, expected), (name, text, expected)
            elif expected.endswith("%") and text.endswith("%"):  # percentages: same number, shortest spelling
                assert same_float(text[:-1], float(expected[:-1])), (name, text, expected)
            else:
                assert text == expected, (name, row[0])
    assert path.read_bytes().count(b"\r") == 0 and path.read_text(encoding="utf-8").endswith("\n")
    assert stat.S_IMODE(path.stat().st_mode) == NEW_FILE_MODE


def test_msprobe_texts_ints_and_extremes(result, tmp_path):
    path = tmp_path / "r.csv"
    report.write_csv(result, path)
    rows = read_rows(path)
    table = {row[0]: dict(zip(rows[0], row, strict=True)) for row in rows[1:]}
    for position, value in enumerate(EXTREMES):
        row = table[f"Functional.linear.0.forward.input.{position}"]
        assert same_float(row["NPU max"], value) and same_float(row["Bench min"], -value)
        assert row["Max diff"] == "0" and row["MaxRelativeErr"] == "0" and row["Result"] == "pass"
    integer = table[f"Functional.linear.0.forward.input.{len(EXTREMES)}"]
    assert integer["NPU max"] == "-1" and integer["Bench max"] == "7" and integer["Max diff"] == "-8.0"
    assert integer["NPU Requires_grad"] == "N/A" and integer["Requires_grad Consistent"] == "True"
    huge = table[f"Functional.linear.0.forward.input.{len(EXTREMES) + 1}"]
    assert same_float(huge["NPU max"], float(2**70))  # beyond int64: written as the float it is
    text = table[f"Functional.linear.0.forward.input.{len(EXTREMES) + 2}"]
    assert text["NPU max"] == 'mode, "fast"' and text["Max diff"] == "0"
    output = table["Functional.linear.0.forward.output.0"]
    assert output["Max diff"] == "1.0" and output["MaxRelativeErr"] == "100.0%"
    assert output["Min diff"] == "-3.0" and output["MinRelativeErr"] == "75.0%"
    assert output["L2norm diff"] == "3.0" and output["NormRelativeErr"] == "inf"  # golden 0
    tiny = abs((1.0000001 - 1.0) / 1.0 * 100)  # spelled without an exponent: 0.0000100000000058...%
    assert output["MeanRelativeErr"].endswith("%") and same_float(output["MeanRelativeErr"][:-1], tiny)
    assert table["Functional.linear.0.forward.input.0"]["NPU_Stack_Info"] == str(STACK)  # the call's first row
    assert output["NPU_Stack_Info"] == ""
    special = table["Tensor.add.0.forward.input.0"]
    assert (special["NPU max"], special["NPU min"], special["NPU mean"]) == ("Nan", " inf", " -inf")
    assert (special["Max diff"], special["Min diff"], special["Mean diff"]) == ("Nan", "inf", "-inf")
    null = table["Tensor.add.0.forward.input.1"]
    assert null["NPU max"] == "None" and null["Max diff"] == "0"
    flag = table["Tensor.add.0.forward.input.2"]
    assert flag["NPU max"] == "True" and flag["Bench max"] == "False" and flag["Max diff"] == "Diff"
    assert json.loads(flag["Err_message"]) and flag["Result"] == "error"
    assert table["Tensor.add.0.forward.output.0"]["NPU Requires_grad"] == "False"
    unpaired = table["Tensor.only.0.forward.output.0"]
    assert unpaired["Bench Name"] == "N/A" and unpaired["Bench max"] == "N/A" and unpaired["Max diff"] == "N/A"
    assert unpaired["NPU_Stack_Info"] == "" and unpaired["Requires_grad Consistent"] == "False"
    frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    assert frame.columns.tolist() == rows[0] and frame.values.tolist() == rows[1:]


def test_chunks_join_into_the_same_file(result, tmp_path):
    report.write_csv(result, tmp_path / "one.csv")
    report.write_csv(result, tmp_path / "chunks.csv", chunk=3)
    assert (tmp_path / "chunks.csv").read_bytes() == (tmp_path / "one.csv").read_bytes()


def test_a_failed_write_leaves_the_old_report_and_no_temporary_file(result, tmp_path, monkeypatch):
    path = tmp_path / "compare_result.csv"
    path.write_text("old\n")
    calls = []

    def failing(*args):
        calls.append(args)
        if len(calls) > 1:
            raise MemoryError("out of memory")
        return typed(*args)

    typed = report.typed_columns
    monkeypatch.setattr(report, "typed_columns", failing)
    with pytest.raises(MemoryError):
        report.write_csv(result, path, chunk=2)
    assert path.read_text() == "old\n" and [item.name for item in tmp_path.iterdir()] == [path.name]


def test_number_cells_spell_nan_and_infinities_as_msprobe():
    values = np.array([1.5, float("nan"), float("inf"), -float("inf"), 3.0, 12.5])
    cells = report.number_cells(values, integral=np.array([False, False, False, False, True, False]))
    assert report.cell_objects(cells).tolist() == [1.5, "Nan", " inf", " -inf", 3, 12.5]
    percent = report.number_cells(values, percent=True)
    assert report.cell_objects(percent).tolist() == ["1.5%", "Nan", "inf%", "-inf%", "3.0%", "12.5%"]

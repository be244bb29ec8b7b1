"""The compiled dump reader (`_dumpscan`, used by table.read_dump for whole batches) against the Python
reader, which is the reference: every dump below must read into the same table both ways, and batches the
scanner does not take must fall back to Python without changing the result."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path

import numpy as np
import pytest
from compare_support import dump_run
from msprobe_runtime.core.compare import jsonstream, table
from msprobe_runtime.core.compare.jsonstream import Batch

DATA = Path(__file__).parent / "data" / "msprobe26"
pytestmark = pytest.mark.skipif(table._dumpscan is None, reason="the C extension _dumpscan was not built")


def _read_both(path: Path, monkeypatch, scanned: bool = False) -> tuple[table.DumpTable, table.DumpTable]:
    """The table read with the scanner and with Python only; `scanned`: no batch may fall back to Python."""
    left_to_python = []
    with monkeypatch.context() as patch:
        decode = Batch.records
        patch.setattr(Batch, "records", lambda batch: left_to_python.append(batch) or decode(batch))
        compiled = table.read_dump(path)
    with monkeypatch.context() as patch:
        patch.setattr(table, "_dumpscan", None)
        reference = table.read_dump(path)
    assert not (scanned and left_to_python), f"{path}: a batch was left to Python"
    return compiled, reference


def _assert_same(compiled: table.DumpTable, reference: table.DumpTable) -> None:
    assert compiled.records == reference.records
    assert compiled.row_names() == reference.row_names()
    assert compiled.mode == reference.mode
    for name in ("state", "requires_grad", "is_tensor", "stat_kind", "row_record"):
        np.testing.assert_array_equal(getattr(compiled, name), getattr(reference, name), err_msg=name)
    np.testing.assert_array_equal(compiled.stats, reference.stats, err_msg="stats")  # NaN equal to NaN
    assert np.signbit(compiled.stats).tolist() == np.signbit(reference.stats).tolist()
    for name in ("dtype", "shape", "digest", "data_name"):
        assert _cells(getattr(compiled, name)) == _cells(getattr(reference, name)), name
    assert compiled.stat_text == reference.stat_text


def _cells(column) -> list:
    """Object cells, with a missing value (None, or NaN as pandas makes it) spelled alike."""
    return ["<missing>" if cell is None or cell != cell else cell for cell in column]


def _write(path: Path, records: list[str]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    body = ",\n".join(records)
    path.write_text('{"task": "statistics", "level": "mix", "dump_data_dir": null,\n"data": {\n' + body + "\n}}\n",
                    encoding="utf-8")
    return path


TENSOR = ('{"type": "torch.Tensor", "dtype": "torch.float32", "shape": [2, 3], "Max": MAX, "Min": -1.5, '
          '"Mean": 0.25, "Norm": 3.0, "requires_grad": true}')


def tensor(maximum) -> str:
    """A float32 tensor leaf whose Max is spelled `maximum`."""
    return TENSOR.replace("MAX", str(maximum))


BOOL = ('{"type": "torch.Tensor", "dtype": "torch.bool", "shape": [], "Max": true, "Min": false, "Mean": null, '
        '"Norm": null, "requires_grad": false}')
INT = ('{"type": "torch.Tensor", "dtype": "torch.int64", "shape": [5], "Max": 9, "Min": "text", "Mean": 4.5, '
       '"Norm": 10, "requires_grad": false, "md5": "ab12", "hash": null}')
NO_DTYPE = ('{"type": "torch.Tensor", "dtype": null, "Max": 1, "Min": 0, "Mean": 0.5, "Norm": 1, '
            '"data_name": "Torch.sum.0.forward.output.0.npy"}')
EDGE_RECORDS = [
    f'"Functional.linear.0.forward": {{"input_args": [{tensor("1.0")}, {tensor("1e-300")}, null, 3, '
    f'{{"type": "int", "value": -7}}], "input_kwargs": {{"bias": {tensor("NaN")}, "inplace": {{"type": "bool", '
    f'"value": false}}, "size": [{tensor(2)}, null]}}, "output": [{tensor("Infinity")}]}}',
    f'"Module.fc1.Linear.forward.0": {{"input_args": [{tensor("-Infinity")}], "input_kwargs": {{}}, '
    f'"output": [{tensor("123456789012345678901")}], "parameters": {{"weight": {tensor("0.1")}, '
    f'"bias": {tensor("-0.0")}}}}}',
    f'"Module.fc1.Linear.parameters_grad.0": {{"weight": {tensor(2)}, "bias": null, "extra": [{tensor(3)}]}}',
    f'"Tensor.__getitem__.0.forward": {{"input_args": [{BOOL}, {{"type": "slice", "value": [1, 5, null]}}, '
    f'{{"type": "float", "value": 2.5e-05}}, {{"type": "float", "value": 3}}, {{"type": "int", "value": 1.0}}, '
    f'{{"type": "torch.Size", "value": [4, 5]}}], "output": null}}',
    f'"Torch.sum.0.forward": {{"input_args": [{INT}], "input_kwargs": {{"dim": {{"type": "int", "value": 0}}, '
    f'"dtype": null}}, "output": [{NO_DTYPE}]}}',
    '"Distributed.all_reduce.0.forward": {"input_args": [{"type": "torch.ProcessGroup", "group_ranks": [0, 1]}, '
    '{"type": "str", "value": "sum"}], "unknown": {"a": [1, 2]}, "output": []}',
    f'"Functional.ünïcode.0.forward": {{"input": [{tensor(5)}], "output": [[{tensor(6)}, {tensor(7)}]]}}',
    f'"Functional.escaped.0.forward": {{"input_args": [{{"type": "str", "value": "a\\"b"}}], '
    f'"output": [{tensor(8)}]}}',
]
LAST = f'"Functional.last.0.forward": {{"output": [{tensor(9)}]}}'  # read on its own, after the batch


def test_every_kind_of_argument_reads_the_same(tmp_path, monkeypatch):
    for index, record in enumerate(EDGE_RECORDS):  # in a batch of its own: the first six are the scanner's
        path = _write(tmp_path / f"one{index}" / "dump.json", [record, LAST])
        _assert_same(*_read_both(path, monkeypatch, scanned=index < 6))
    _assert_same(*_read_both(_write(tmp_path / "all" / "dump.json", [*EDGE_RECORDS, LAST]), monkeypatch))


def test_a_repeated_record_name_reads_as_json_does(tmp_path, monkeypatch):
    records = [EDGE_RECORDS[0], EDGE_RECORDS[1], EDGE_RECORDS[0].replace("1e-300", "2.5"), LAST]
    compiled, reference = _read_both(_write(tmp_path / "d" / "dump.json", records), monkeypatch)
    _assert_same(compiled, reference)
    assert compiled.records.count("Functional.linear.0.forward") == 1


def test_scanner_reads_plain_batches_itself(tmp_path):
    records = [f'"Functional.linear.{i}.forward": {{"input_args": [{tensor(i)}, {{"type": "int", "value": {i}}}], '
               f'"input_kwargs": {{}}, "output": [{tensor(i + 0.5)}]}}' for i in range(50)]
    body = ",\n".join(records).encode()
    columns = table._dumpscan.scan(body)
    assert columns is not None and columns["rows"] == 150 and len(columns["names"]) == 50
    assert table._dumpscan.scan(body + b', "bad": [') is None  # not JSON: left to Python, which reports it


@pytest.mark.parametrize("folder", sorted(str(path.relative_to(DATA)) for path in DATA.rglob("dump.json")))
def test_msprobe_dumps_read_the_same(folder, monkeypatch):
    _assert_same(*_read_both(DATA / folder, monkeypatch, scanned=True))


@pytest.mark.parametrize("level,summary_mode", [("L1", "statistics"), ("mix", "md5"), ("L0", "hash")])
def test_runtime_dumps_read_the_same(tmp_path, monkeypatch, level, summary_mode):
    root = dump_run(tmp_path, steps=2, level=level, summary_mode=summary_mode)
    dumps = sorted(root.rglob("dump.json"))
    assert dumps
    for path in dumps:
        _assert_same(*_read_both(path, monkeypatch, scanned=True))


def test_float_spellings_read_as_python_reads_them(tmp_path, monkeypatch):
    spellings = ["0.1", "1e-5", "1E+5", "-2.5e-308", "4.9e-324", "1.7976931348623157e308", "123456789.123456789",
                 "0", "-0", "17", "-3", "1e400"]
    records = [f'"Torch.x.{i}.forward": {{"input_args": [{tensor(text)}, {{"type": "float", "value": {text}}}], '
               f'"output": []}}' for i, text in enumerate(spellings)]
    compiled, reference = _read_both(_write(tmp_path / "d" / "dump.json", [*records, LAST]), monkeypatch,
                                     scanned=True)
    _assert_same(compiled, reference)
    assert compiled.stats[:-1:2, 0].tolist() == [float(json.loads(text)) if text != "1e400" else math.inf
                                                  for text in spellings]


@pytest.mark.parametrize("compiled", [True, False])
def test_bad_json_in_a_batch_names_its_line(tmp_path, monkeypatch, compiled):
    lines = ['{"task": "statistics",', '"data": {']
    lines += [f' "Functional.linear.{i}.forward": {{"input_args": [{tensor(i)}], "output": []}},' for i in range(3000)]
    lines[1500] = lines[1500].replace('"output": []', '"output": [}')  # line 1501
    lines += [' "Functional.last.0.forward": {"output": []}', "}}"]
    path = tmp_path / "dump.json"
    path.write_text("\n".join(lines) + "\n")
    monkeypatch.setattr(jsonstream, "_CHUNK", 50_000)  # many batches
    if not compiled:
        monkeypatch.setattr(table, "_dumpscan", None)
    with pytest.raises(jsonstream.DumpFormatError, match=r"\(line 1501\)"):
        table.read_dump(path)


def test_mutated_batches_are_read_as_python_reads_them_or_left_to_it():
    """Random damage to real dump text: the scanner never crashes, and whatever it still takes, the Python
    reader reads into the same table (an error on either side alone is a difference)."""
    rng = random.Random(5)
    sources = []
    for path in sorted(DATA.rglob("dump.json"))[:3]:
        text = path.read_text(encoding="utf-8")
        sources.append(text[text.index("{", text.index('"data"')) + 1:text.rindex("}", 0, text.rindex("}"))].strip())
    alphabet = '{}[]",:0123456789.-eE NaInfity\\\ntrue false null é'
    taken = 0
    for _ in range(1500):
        text = rng.choice(sources)
        for _ in range(rng.randint(1, 3)):  # replace a character, delete a few, or insert one
            position, change = rng.randrange(len(text) or 1), rng.random()
            removed = 1 if change < 0.4 else rng.randint(1, 20) if change < 0.7 else 0
            added = rng.choice(alphabet) if change < 0.4 or change >= 0.7 else ""
            text = text[:position] + added + text[position + removed:]
        if table._dumpscan.scan(text.encode()) is None:
            continue
        taken += 1
        _assert_same(*(_batch_table(text, compiled) for compiled in (True, False)))
    assert taken > 50


def _batch_table(text: str, compiled: bool) -> table.DumpTable:
    """The table of one batch of text, read with the scanner or by Python only."""
    builder = table._Builder()
    scanner = table._dumpscan
    table._dumpscan = scanner if compiled else None
    try:
        builder.add_batch(Batch(text, text, 0, 0))
    finally:
        table._dumpscan = scanner
    return builder.table(Path("dump.json"), {}, {})

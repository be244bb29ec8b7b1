"""msprobe-compare's parts on small hand-made dumps: reading, pairing, statistics cells, Result rules."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from msprobe_runtime.core.compare import jsonstream
from msprobe_runtime.core.compare.engine import compare_pair
from msprobe_runtime.core.compare.locate import Pair
from msprobe_runtime.core.compare.matching import align, exact_keys, split_name
from msprobe_runtime.core.compare.report import report_columns
from msprobe_runtime.core.compare.table import read_dump


def tensor(value: float, shape=(4,), dtype="torch.float32", requires_grad=False, **extra) -> dict:
    """A statistics entry whose four statistics are derived from `value`."""
    return {"type": "torch.Tensor", "dtype": dtype, "shape": list(shape), "Max": value, "Min": -value,
            "Mean": value / 2, "Norm": abs(value) * 2, "requires_grad": requires_grad, **extra}


def write(path, records: dict, task="statistics", indent=None, after_data=False):
    """A dump.json: msprobe's layout with `indent=1`, ours (one record per line) without."""
    if indent:
        document = {"task": task, "level": "L1", "framework": "pytorch", "dump_data_dir": None, "data": records}
        text = json.dumps(document, indent=indent)
    else:
        lines = ",\n".join(f"{json.dumps(name)}: {json.dumps(record)}" for name, record in records.items())
        tail = ', "extra": 1' if after_data else ""
        text = f'{{"task": "{task}", "level": "L1", "framework": "pytorch", "version": 1,\n"data": {{\n{lines}\n}}{tail}}}\n'
    path.write_text(text)
    return path


def call(value_in: float, value_out: float, **extra) -> dict:
    return {"input_args": [tensor(value_in), {"type": "int", "value": 1}], "input_kwargs": {},
            "output": [tensor(value_out, **extra)]}


def compared(tmp_path, target: dict, golden: dict, fuzzy=False, **options):
    result = compare_pair(Pair(0, 0, write(tmp_path / "t.json", target, **options),
                               write(tmp_path / "g.json", golden, **options)), fuzzy=fuzzy)
    return result, report_columns(result)


@pytest.mark.parametrize("indent", [None, 1])
def test_reader_names_rows_like_msprobe(tmp_path, indent):
    records = {
        "Functional.linear.0.forward": {"input_args": [tensor(1.0), [tensor(2.0), None]],
                                        "input_kwargs": {"alpha": {"type": "float", "value": float("nan")}},
                                        "output": [tensor(3.0)]},
        "Module.fc.Linear.forward.0": {"input_args": [tensor(1.0)], "input_kwargs": {}, "output": [tensor(3.0)],
                                       "parameters": {"weight": tensor(0.5)}},
        "Module.fc.Linear.parameters_grad.0": {"weight": [tensor(0.1)], "bias": [tensor(0.2)]},
    }
    table = read_dump(write(tmp_path / "d.json", records, indent=indent, after_data=not indent))
    assert table.row_names() == [
        "Functional.linear.0.forward.input.0", "Functional.linear.0.forward.input.1.0",
        "Functional.linear.0.forward.input.1.1", "Functional.linear.0.forward.input.alpha",
        "Functional.linear.0.forward.output.0",
        "Module.fc.Linear.forward.0.input.0", "Module.fc.Linear.forward.0.parameters.weight",
        "Module.fc.Linear.forward.0.output.0",
        "Module.fc.Linear.parameters_grad.0.weight", "Module.fc.Linear.parameters_grad.0.bias"]
    assert table.dtype[2] == "N/A" and table.dtype[3] == "<class 'float'>" and math.isnan(table.stats[3, 0])
    assert list(table.shape[:1]) == ["[4]"] and table.is_tensor.tolist()[:4] == [True, True, False, False]


def test_reader_streams_across_chunks_and_reports_bad_json(tmp_path, monkeypatch):
    monkeypatch.setattr(jsonstream, "_CHUNK", 97)  # every record crosses a chunk boundary
    records = {f"Tensor.add.{i}.forward": call(i + 0.5, i * 2.0) for i in range(50)}
    for indent in (None, 1):
        table = read_dump(write(tmp_path / "d.json", records, indent=indent))
        assert len(table.records) == 50 and table.stats[-1, 0] == 98.0
    text = (tmp_path / "d.json").read_text()
    (tmp_path / "bad.json").write_text(text.replace('"Max": 7.5', '"Max": 7.5.5', 1))
    with pytest.raises(jsonstream.DumpFormatError, match=r"line \d+"):
        read_dump(tmp_path / "bad.json")
    (tmp_path / "cut.json").write_text(text[: len(text) // 2])
    with pytest.raises(jsonstream.DumpFormatError, match="ends before"):
        read_dump(tmp_path / "cut.json")


def test_names_and_backward_renumbering_follow_msprobe():
    assert split_name("Functional.linear.3.backward") == ("Functional.linear", "3.backward", "backward")
    assert split_name("Module.blocks.0.fc1.Linear.forward.2") == ("Module.blocks.0.fc1.Linear", "forward.2", "forward")
    assert split_name("Module.fc.Linear.parameters_grad.0")[2] == "parameters_grad"
    keys = exact_keys(["Functional.linear.5.backward", "Functional.linear.2.backward", "Module.a.L.backward.7"])
    assert keys == ["Functional.linear.0.backward", "Functional.linear.1.backward", "Module.a.L.backward.0"]


def test_alignment_survives_inserted_and_missing_calls():
    a = np.array([1, 2, 3, 2, 3, 2, 3, 4])
    b = np.array([1, 2, 3, 2, 9, 3, 2, 3, 4])  # one call inserted in the middle
    matched = align(a, b)
    assert matched.tolist() == [0, 1, 2, 3, 5, 6, 7, 8]
    assert align(b, a).tolist() == [0, 1, 2, 3, -1, 4, 5, 6, 7]


def test_fuzzy_match_keeps_later_calls_of_the_same_api_paired(tmp_path):
    golden = {f"Functional.gelu.{i}.forward": call(float(i), float(i)) for i in range(6)}
    target = dict(golden)
    items = list(golden.items())
    target = dict(items[:2] + [("Functional.gelu.2.forward", call(100.0, 100.0))]
                  + [(f"Functional.gelu.{i + 1}.forward", record) for i, (_, record) in enumerate(items[2:], start=2)])
    exact, _ = compared(tmp_path, target, golden)
    fuzzy, columns = compared(tmp_path, target, golden, fuzzy=True)
    assert exact.counts["differ"] > 6  # exact names: every call after the inserted one is paired wrongly
    assert fuzzy.counts["differ"] == 0 and fuzzy.counts["unmatched"] == 3  # only the inserted call is unpaired
    assert fuzzy.divergence.call.name == "Functional.gelu.2.forward" and fuzzy.divergence.call.status == "only in target"
    assert list(columns["Bench Name"][:3]) == ["Functional.gelu.0.forward.input.0", "Functional.gelu.0.forward.input.1",
                                               "Functional.gelu.0.forward.output.0"]


def test_statistics_cells_follow_msprobe(tmp_path):
    nan, inf = float("nan"), float("inf")
    cases = [(2.0, 1.0), (1.0, 1.0), (1.0, 0.0), (nan, 1.0), (inf, 1.0), (-inf, 1.0), (1.0, inf), (nan, nan)]
    target = {f"Tensor.add.{i}.forward": {"output": [tensor(t)]} for i, (t, _) in enumerate(cases)}
    golden = {f"Tensor.add.{i}.forward": {"output": [tensor(g)]} for i, (_, g) in enumerate(cases)}
    target["Tensor.only.0.forward"] = {"output": [tensor(1.0)]}
    _, columns = compared(tmp_path, target, golden)
    assert list(columns["Max diff"]) == [1.0, "0", 1.0, "Nan", "inf", "-inf", "-inf", "0", "N/A"]
    assert list(columns["MaxRelativeErr"]) == ["100.0%", "0", "inf", "Nan", "inf", "-inf", "-inf", "0", "N/A"]
    assert columns["Bench max"][-1] == "N/A" and columns["NPU max"][3] == "Nan"


def test_result_rules_and_thresholds(tmp_path):
    target = {
        "Tensor.a.0.forward": call(1.0, 1.6),  # inputs agree, output NormRelativeErr 60% > 50%: error
        "Tensor.b.0.forward": call(1.0, 1.4),  # 40%: above 10% with exact inputs: warning only
        "Tensor.c.0.forward": call(1.0, 1.05),  # 5%: pass
        "Tensor.d.0.forward": call(1.01, 1.2),  # input 1%, output 20% (20x): warning
        "Tensor.e.0.forward": call(1.0, float("nan")),  # NaN in NPU max/min: error
        "Tensor.f.0.forward": {"output": [tensor(1.0, dtype="torch.float16")]},  # float dtypes differ: error
        "Tensor.g.0.forward": {"output": [tensor(1.0, shape=(5,))]},  # shape differs: error
        "Tensor.h.0.forward": {"output": [tensor(1.0, requires_grad=True)]},  # requires_grad differs: error
        "Tensor.i.0.forward": {"input_args": [{"type": "int", "value": 2}], "output": [tensor(1.0)]},  # scalar: error
        "Tensor.to.0.forward": call(1.0, 9.0),  # msprobe ignores `to` entirely: pass
        "Tensor.j.0.forward": {"output": [tensor(1.0, dtype="torch.int64")]},  # int vs float: unpaired, warning
    }
    golden = {name: call(1.0, 1.0) for name in target if name[7] in "abcdet"}
    golden.update({name: {"output": [tensor(1.0)]} for name in ("Tensor.f.0.forward", "Tensor.g.0.forward",
                                                                 "Tensor.h.0.forward", "Tensor.j.0.forward")})
    golden["Tensor.i.0.forward"] = {"input_args": [{"type": "int", "value": 3}], "output": [tensor(1.0)]}
    _, columns = compared(tmp_path, target, golden)
    result = dict(zip(columns["NPU Name"], columns["Result"], strict=True))
    messages = dict(zip(columns["NPU Name"], columns["Err_message"], strict=True))
    assert result["Tensor.a.0.forward.output.0"] == "error" and "greater than 0.5" in messages["Tensor.a.0.forward.output.0"]
    assert result["Tensor.b.0.forward.output.0"] == "warning"
    assert result["Tensor.c.0.forward.output.0"] == "pass"
    assert result["Tensor.d.0.forward.output.0"] == "warning" and "10 times" in messages["Tensor.d.0.forward.output.0"]
    assert result["Tensor.e.0.forward.output.0"] == "error" and "nan/inf" in messages["Tensor.e.0.forward.output.0"]
    assert result["Tensor.f.0.forward.output.0"] == "error" and "dtype" in messages["Tensor.f.0.forward.output.0"]
    assert result["Tensor.g.0.forward.output.0"] == "error" and "shape" in messages["Tensor.g.0.forward.output.0"]
    assert result["Tensor.h.0.forward.output.0"] == "error" and "Required_Grad" in messages["Tensor.h.0.forward.output.0"]
    assert result["Tensor.i.0.forward.input.0"] == "error" and "scalar" in messages["Tensor.i.0.forward.input.0"]
    assert result["Tensor.to.0.forward.output.0"] == "pass"
    assert result["Tensor.j.0.forward.output.0"] == "warning" and columns["Bench Name"][-1] == "N/A"
    assert json.loads(messages["Tensor.c.0.forward.output.0"]) == []


def test_md5_and_hash_modes(tmp_path):
    target = {"Tensor.a.0.forward": {"output": [tensor(1.0, md5="aaaaaaaa")]},
              "Tensor.b.0.forward": {"output": [tensor(1.0, md5="bbbbbbbb")]}}
    golden = {"Tensor.a.0.forward": {"output": [tensor(1.0, md5="aaaaaaaa")]},
              "Tensor.b.0.forward": {"output": [tensor(1.0, md5="cccccccc")]}}
    result, columns = compared(tmp_path, target, golden)
    assert result.mode == "md5" and list(columns["Result"]) == ["pass", "error"]
    assert "NPU max" not in columns and list(columns["BENCH MD5"]) == ["aaaaaaaa", "cccccccc"]
    assert result.divergence.call.name == "Tensor.b.0.forward"  # equal statistics, different bits
    target = {"Tensor.a.0.forward": call(1.0, 1.0, hash="1" * 16)}
    golden = {"Tensor.a.0.forward": call(1.0, 1.0, hash="2" * 16)}
    result, columns = compared(tmp_path, target, golden)
    assert result.mode == "hash" and "content hash" in columns["Err_message"][-1]
    assert result.divergence.kind == "divergence"


def test_tolerance_makes_small_differences_agree(tmp_path):
    target = {"Tensor.a.0.forward": call(1.0, 1.0000001)}
    golden = {"Tensor.a.0.forward": call(1.0, 1.0)}
    paths = write(tmp_path / "t.json", target), write(tmp_path / "g.json", golden)
    assert compare_pair(Pair(0, 0, *paths)).divergence is not None
    assert compare_pair(Pair(0, 0, *paths), rtol=1e-3).divergence is None


def test_first_pair_prefers_the_rank_where_a_call_made_the_difference():
    from types import SimpleNamespace

    from msprobe_runtime.core.compare.run import CompareRun, PairSummary

    def summary(step, rank, kind):
        divergence = None if kind is None else SimpleNamespace(kind=kind)
        return PairSummary(Pair(step, rank, Path("t"), Path("g")), "hash", {}, divergence, Path("o"), 0.0)

    run = CompareRun([summary(0, 0, "difference"), summary(0, 1, "divergence"), summary(1, 0, "divergence")])
    assert (run.first.pair.step, run.first.pair.rank) == (0, 1)
    run = CompareRun([summary(0, 0, None), summary(1, 0, "difference"), summary(1, 1, "difference")])
    assert (run.first.pair.step, run.first.pair.rank) == (1, 0)
    assert CompareRun([summary(0, 0, None)]).first is None and CompareRun([summary(0, 0, None)]).exit_code == 0

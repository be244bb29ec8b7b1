"""The JSON text of capture's dump files: the compiled form (core._dumptext, one call per file and per
step's statistics) and the Python one (the reference) write the same values, one record per line."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import torch
from capture_support import make_model, train_step, write_config
from extension_support import extension_or_fallback
from msprobe_runtime.core import dump_writer, jsontext, stats
from msprobe_runtime.core.jsontext import json_float
from msprobe_runtime.pytorch import PrecisionDebugger

TOKEN = dump_writer.ENTRY_TOKEN


@pytest.fixture(params=["compiled", "python"])
def text(request, monkeypatch) -> str:
    """Both ways the texts are made: by the extension where it was built, by Python."""
    extension_or_fallback(request, monkeypatch, dump_writer, "_dumptext", "python")
    if request.param == "python":
        monkeypatch.setattr(stats, "_dumptext", None)
    return request.param


def _python(monkeypatch, function, *args):
    """`function(*args)` with the extension turned off."""
    with monkeypatch.context() as patch:
        patch.setattr(dump_writer, "_dumptext", None)
        patch.setattr(stats, "_dumptext", None)
        return function(*args)


def _same(a: bytes, b: bytes) -> None:
    """Equal JSON (NaN equal to NaN), with the same members on the same lines."""
    assert repr(json.loads(a)) == repr(json.loads(b))
    assert [len(line) > 0 for line in a.split(b"\n")] == [len(line) > 0 for line in b.split(b"\n")]


RECORDS = {
    "Functional.linear.0.forward": ("input_args", (f"{TOKEN}0", None), "input_kwargs", {}, "output", (f"{TOKEN}1",)),
    "Module.fc.Linear.forward.0": {"input_args": [f"{TOKEN}2"], "parameters": {"weight": f"{TOKEN}0"}},
    "Torch.clamp.0.forward": ("input_kwargs", {"min": {"type": "float", "value": json_float(-math.inf)},
                                                "max": {"type": "float", "value": json_float(math.nan)},
                                                "eps": {"type": "float", "value": 1e-05}}),
    "Tensor.__getitem__.0.forward": ("input_args", ({"type": "slice", "value": [None, 2**70, -(2**63)]},
                                                    {"type": "ellipsis", "value": "..."})),
    'odd "names" \\ é 🙂\n\t\x01\x7f': {"value": [0.1, -0.0, 1e16, 5e-324, True, False, 0, [], {}, [[]]]},
    "not tokens": {"a": TOKEN, "b": f"{TOKEN}1x", "c": f"x{TOKEN}1", "d": TOKEN[:-1] + "1"},
}
ENTRIES = [b'{"type": "torch.Tensor", "Max": 1.5}', b'{"Max": NaN}', b"{}"]


def test_records_with_every_kind_of_value(text, monkeypatch):
    written = dump_writer._object_with_data({"task": "statistics"}, RECORDS, ENTRIES)
    _same(written, _python(monkeypatch, dump_writer._object_with_data, {"task": "statistics"}, RECORDS, ENTRIES))
    data = json.loads(written)["data"]
    assert data["Functional.linear.0.forward"]["input_args"] == [{"type": "torch.Tensor", "Max": 1.5}, None]
    assert data["Module.fc.Linear.forward.0"]["parameters"]["weight"]["Max"] == 1.5
    assert data["Tensor.__getitem__.0.forward"]["input_args"][0]["value"] == [None, 2**70, -(2**63)]
    assert data["not tokens"] == {"a": TOKEN, "b": f"{TOKEN}1x", "c": f"x{TOKEN}1", "d": TOKEN[:-1] + "1"}
    assert b"-Infinity" in written and b"NaN" in written
    assert len(written.splitlines()) == len(RECORDS) + 3  # the header, "data", a record a line, the end


def test_values_only_python_writes_fall_back_to_it(text, monkeypatch):
    """Keys that are not strings and lone surrogates: Python's json writes them; so does the file."""
    for records in ({"a": {1: "x", None: 2}}, {"a": ("key", "\ud800")}):
        written = dump_writer._lines_object(records, True)
        _same(written, _python(monkeypatch, dump_writer._lines_object, records, True))


def test_stack_and_construct_layout(text, monkeypatch):
    stacks = {"0": (["Functional.linear.0.forward"], ["File a.py, line 3, in f, \n x = F.linear(x, w)"]), "1": []}
    for mapping in (stacks, {}, {"Module.a.A.forward.0": None, "Module.a.b.B.forward.0": "Module.a.A.forward.0"}):
        written = dump_writer._lines_object(mapping)
        assert written == _python(monkeypatch, dump_writer._lines_object, mapping).replace(b'", "', b'","')
    assert dump_writer._lines_object({}) == b"{}\n"


def test_a_token_beyond_the_entries_is_an_error(text):
    with pytest.raises(IndexError):
        dump_writer._lines_object({"a": (f"{TOKEN}7",)}, False, ENTRIES)


SLOTS = {  # kind, numel, 0-d, (max, min, sum, norm) as floats, (max, min) as integers
    "float": (stats.KIND_FLOAT, 4, False, (2.5, -1.0, 3.0, 3.2), (0, 0)),
    "float nan": (stats.KIND_FLOAT, 4, False, (math.nan, math.inf, -math.inf, math.nan), (0, 0)),
    "float 0-d": (stats.KIND_FLOAT, 1, True, (0.1, 0.1, 0.1, 0.1), (0, 0)),
    "float tiny": (stats.KIND_FLOAT, 3, False, (-0.0, 5e-324, 1e-5, 1.0000000000000002), (0, 0)),
    "float huge": (stats.KIND_FLOAT, 7, False, (1.7976931348623157e308, -3.4028234663852886e38, 1e16, 1e300), (0, 0)),
    "int": (stats.KIND_INT, 3, False, (math.nan,) * 4, (2**62, -5)),
    "int extremes": (stats.KIND_INT, 2, False, (math.nan,) * 4, (2**63 - 1, -(2**63))),
    "int 0-d": (stats.KIND_INT, 1, True, (math.nan,) * 4, (-3, -3)),
    "int 0-d large": (stats.KIND_INT, 1, True, (math.nan,) * 4, (-(2**60) - 1, -(2**60) - 1)),
    "bool": (stats.KIND_BOOL, 6, False, (math.nan,) * 4, (1, 0)),
    "none": (stats.KIND_NONE, 0, False, (math.nan,) * 4, (0, 0)),
    "empty": (stats.KIND_FLOAT, 0, False, (math.nan,) * 4, (0, 0)),
}


def _slot_columns() -> list:
    """statistics_texts' arguments for SLOTS: the lists, then the float and integer slots and their rows."""
    kinds, numels, scalars, floats, ints = (list(column) for column in zip(*SLOTS.values(), strict=True))
    exact = [slot for slot, kind in enumerate(kinds) if kind in (stats.KIND_INT, stats.KIND_BOOL)]
    inexact = [slot for slot in range(len(kinds)) if slot not in exact][::-1]  # in any order
    return [kinds, numels, scalars, (inexact, np.array([floats[slot] for slot in inexact], dtype=np.float64).tobytes()),
            (exact, np.array([(*ints[slot], 0, 0) for slot in exact], dtype=np.int64).tobytes())]


@pytest.mark.parametrize("encoder", ["orjson", "json"])
def test_statistics_of_every_kind(text, monkeypatch, encoder):
    """Both ways, with either float encoder, the same texts; values as statistics_values makes them."""
    if encoder == "json":
        monkeypatch.setattr(jsontext, "orjson", None)
    elif jsontext.orjson is None:
        pytest.skip("orjson is not installed")
    columns = _slot_columns()
    written = stats.statistics_texts(*columns)
    assert written == _python(monkeypatch, stats.statistics_texts, *columns)
    parsed = {name: json.loads(b"{" + line + b"}") for name, line in zip(SLOTS, written, strict=True)}
    assert parsed["float"] == {"Max": 2.5, "Min": -1.0, "Mean": 0.75, "Norm": 3.2}
    assert repr(parsed["float nan"]) == repr({"Max": math.nan, "Min": math.inf, "Mean": -math.inf, "Norm": math.nan})
    assert parsed["float tiny"] == {"Max": -0.0, "Min": 5e-324, "Mean": 1e-5 / 3, "Norm": 1.0000000000000002}
    assert repr(parsed["float tiny"]["Max"]) == "-0.0"
    assert parsed["float huge"] == {"Max": 1.7976931348623157e308, "Min": -3.4028234663852886e38,
                                    "Mean": 1e16 / 7, "Norm": 1e300}
    assert parsed["int"] == {"Max": 2**62, "Min": -5, "Mean": None, "Norm": None}
    assert parsed["int extremes"] == {"Max": 2**63 - 1, "Min": -(2**63), "Mean": None, "Norm": None}
    assert parsed["int 0-d"] == {"Max": -3, "Min": -3, "Mean": -3.0, "Norm": 3.0}
    assert parsed["int 0-d large"] == {"Max": -(2**60) - 1, "Min": -(2**60) - 1, "Mean": float(-(2**60) - 1),
                                       "Norm": float(2**60 + 1)}
    assert parsed["bool"] == {"Max": True, "Min": False, "Mean": None, "Norm": None}
    assert parsed["none"] == parsed["empty"] == dict.fromkeys(("Max", "Min", "Mean", "Norm"))


def test_statistics_of_no_slot(text):
    assert stats.statistics_texts([], [], [], ([], b""), ([], b"")) == []


@pytest.mark.skipif(stats._dumptext is None, reason="the _dumptext extension was not built (no C compiler)")
def test_statistics_texts_refuse_what_does_not_fit():
    """The compiled statistics_texts checks its arguments and its float encoder's answer."""
    kinds, numels, scalars, (slots, floats), ints = _slot_columns()
    with pytest.raises(ValueError, match="four values per slot"):
        stats._dumptext.statistics_texts(kinds, numels, scalars, (slots, floats[:-8]), ints, jsontext.float_array_text)
    with pytest.raises(IndexError, match="out of range"):
        stats._dumptext.statistics_texts(kinds, numels, scalars, ([len(kinds)] + slots[1:], floats), ints,
                                         jsontext.float_array_text)
    with pytest.raises(ValueError, match="one number per value"):
        stats._dumptext.statistics_texts(kinds, numels, scalars, (slots, floats), ints, lambda raw: b"[1,2]")
    with pytest.raises(TypeError, match="must return bytes"):
        stats._dumptext.statistics_texts(kinds, numels, scalars, (slots, floats), ints, lambda raw: "[]")


def test_entries_join_their_slots_texts(text, monkeypatch):
    heads, texts = [b'{"type": "a", ', b'{"type": "b", '], [b'"Max": 1', b'"Max": 2']
    for extras in (None, [b', "md5": "00000001"', b"", b', "data_name": "x.npy"']):
        arguments = ([1, 0, 1], heads, texts, [True, False, False], extras)
        written = stats.entry_texts(*arguments)
        assert written == _python(monkeypatch, stats.entry_texts, *arguments)
        assert json.loads(written[0]) == {"type": "b", "Max": 2, "requires_grad": True,
                                          **({"md5": "00000001"} if extras else {})}


def test_a_captured_step_is_written_alike(tmp_path, monkeypatch):
    """A whole step (L0 and L1 records, stacks, construct) written both ways reads back the same."""
    if dump_writer._dumptext is None:
        pytest.skip("the _dumptext extension was not built (no C compiler)")
    files = {}
    for way in ("compiled", "python"):
        if way == "python":  # the texts made in this process (a writer process imports its own _dumptext)
            monkeypatch.setattr(dump_writer, "_use_process", False)
            monkeypatch.setattr(dump_writer, "_dumptext", None)
            monkeypatch.setattr(stats, "_dumptext", None)
        model, optimizer, tokens = make_model()
        debugger = PrecisionDebugger(config_path=write_config(tmp_path / way, level="mix"))
        debugger.start(model)
        train_step(model, optimizer, tokens)
        torch.clamp(tokens.float(), min=float("-inf"))
        debugger.stop()
        debugger.close()
        folder = tmp_path / way / "dump" / "step0" / "rank0"
        files[way] = {name: (folder / name).read_bytes() for name in ("dump.json", "stack.json", "construct.json")}
    for name, written in files["compiled"].items():
        _same(written, files["python"][name])
    assert b'"Module.blocks.0.fc1.Linear.backward.0"' in files["compiled"]["dump.json"]

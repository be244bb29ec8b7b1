"""msprobe-compare on real MindStudio Probe 26.2 dumps: same columns, same Result, same numbers as
msprobe's own compare. The dumps and msprobe's CSVs are in tests/data/msprobe26 (regenerate them with
its make_dumps.py in a virtual environment holding mindstudio-probe==26.2.0)."""

from __future__ import annotations

import csv
import math
from pathlib import Path

import pytest
from msprobe_runtime import compare

DATA = Path(__file__).parent / "data" / "msprobe26"
MODES = ("statistics", "md5", "tensor")
_TEXT_COLUMNS = {"NPU Name", "Bench Name", "NPU Dtype", "Bench Dtype", "NPU Tensor Shape", "Bench Tensor Shape",
                 "NPU MD5", "BENCH MD5", "Result"}


def read(path) -> list[dict]:
    with open(path, encoding="utf-8-sig", newline="") as handle:
        return list(csv.DictReader(handle))


def close(ours: str, theirs: str) -> bool:
    """Equal text, or numbers equal to 1e-9 relative (msprobe reads numbers back through pandas' fast,
    not correctly rounded, parser, so its differences can be off in the last digits)."""
    if ours == theirs:
        return True
    try:
        a, b = float(ours.rstrip("%")), float(theirs.rstrip("%"))
    except ValueError:
        return False
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-15) or (math.isnan(a) and math.isnan(b))


@pytest.fixture(scope="module", params=MODES)
def both(request, tmp_path_factory):
    mode = request.param
    output = tmp_path_factory.mktemp(mode)
    run = compare(DATA / f"{mode}_target", DATA / f"{mode}_golden", output)
    ours = read(run.pairs[0].output)
    theirs = read(DATA / f"msprobe_{mode}.csv")
    return mode, run, ours, theirs


def test_same_rows_and_columns(both):
    mode, run, ours, theirs = both
    assert run.pairs[0].mode == mode and run.pairs[0].pair.label == "step0"  # msprobe's proc folders pair
    assert list(ours[0]) == list(theirs[0])
    assert [row["NPU Name"] for row in ours] == [row["NPU Name"] for row in theirs]
    assert [row["Bench Name"] for row in ours] == [row["Bench Name"] for row in theirs]


def test_same_result_on_every_paired_row(both):
    _, _, ours, theirs = both
    paired = [(a, b) for a, b in zip(ours, theirs, strict=True) if b["Bench Name"] != "N/A"]
    assert len(paired) > 100
    differ = [(a["NPU Name"], a["Result"], b["Result"]) for a, b in paired if a["Result"] != b["Result"]]
    assert not differ
    assert {b["Result"] for _, b in paired} >= {"pass", "error"}


def test_unpaired_rows_are_warnings_where_msprobe_says_pass(both):
    mode, _, ours, theirs = both
    unpaired = [(a, b) for a, b in zip(ours, theirs, strict=True) if b["Bench Name"] == "N/A"]
    assert unpaired
    for a, b in unpaired:
        assert a["Result"] == "warning"
        assert b["Result"] == ("warning" if mode == "md5" else "pass")


def test_same_values_in_every_column(both):
    _, _, ours, theirs = both
    columns = [name for name in theirs[0] if name not in ("Err_message", "NPU_Stack_Info")]
    for a, b in zip(ours, theirs, strict=True):
        if b["Bench Name"] == "N/A":
            continue
        for name in columns:
            assert close(a[name], b[name]) if name not in _TEXT_COLUMNS else a[name] == b[name], (a["NPU Name"], name)


def test_error_messages_and_stacks(both):
    _, _, ours, theirs = both
    for a, b in zip(ours, theirs, strict=True):
        if b["Bench Name"] != "N/A":
            assert a["Err_message"].startswith(b["Err_message"].rstrip("]"))
    first_rows = [row for row in ours if row["NPU_Stack_Info"]]
    assert first_rows and "make_dumps.py" in first_rows[0]["NPU_Stack_Info"]


def test_first_difference_points_at_the_changed_line(both):
    _, run, _, _ = both
    found = run.first.divergence
    assert found.call.name == "Torch.mul.0.forward" and found.call.argument_differs
    assert found.call.source.file.endswith("make_dumps.py") and "scalar argument differs" in found.call.source.code

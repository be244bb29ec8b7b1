"""Large comparisons use a second process (GOLDEN read beside TARGET, tensor mode's files read in two
halves): the report must be byte-identical to the one-process run, and failures on either side must
surface as one clear CompareError, never a hang. The size thresholds are lowered so small real dumps take the parallel paths."""

from __future__ import annotations

import multiprocessing
import stat

import pytest
from compare_support import dump_run
from msprobe_runtime import compare
from msprobe_runtime.core.compare import CompareError, parallel

CAN_FORK = "fork" in multiprocessing.get_all_start_methods() and parallel._cpus() > 1
pytestmark = pytest.mark.skipif(not CAN_FORK, reason="needs fork and a second usable CPU")


@pytest.fixture(scope="module")
def dumps(tmp_path_factory):
    root = tmp_path_factory.mktemp("parallel")
    target = dump_run(root / "target", "dropout-seed", steps=1, summary_mode="hash") / "step0" / "rank0"
    golden = dump_run(root / "golden", "base", steps=1, summary_mode="hash") / "step0" / "rank0"
    return target, golden


def _report(target, golden, folder, parallel_on: bool, monkeypatch) -> bytes:
    for name in ("PARALLEL_BYTES", "PARALLEL_TENSOR_ROWS"):
        monkeypatch.setattr(parallel, name, 0 if parallel_on else 1 << 62)
    monkeypatch.setattr(parallel, "available", lambda: parallel_on)  # capture's writer thread would veto it
    result = compare(target, golden, folder)
    return result.pairs[0].output.read_bytes()


def test_parallel_report_is_byte_identical(dumps, tmp_path, monkeypatch):
    target, golden = dumps
    one = _report(target, golden, tmp_path / "one", False, monkeypatch)
    two = _report(target, golden, tmp_path / "two", True, monkeypatch)
    assert one == two and one.count(b"\n") > 10
    leftovers = [path.name for path in (tmp_path / "two").iterdir() if path.name.endswith(".tmp")]
    assert leftovers == []


def test_tensor_mode_in_two_halves_is_byte_identical(tmp_path, monkeypatch):
    target = dump_run(tmp_path / "target", "dropout-seed", task="tensor") / "step0" / "rank0"
    golden = dump_run(tmp_path / "golden", "base", task="tensor") / "step0" / "rank0"
    one = _report(target, golden, tmp_path / "one", False, monkeypatch)
    two = _report(target, golden, tmp_path / "two", True, monkeypatch)
    assert one == two and b"Cosine" in one.splitlines()[0] and one.count(b"\n") > 10


def test_report_file_is_readable_by_others_as_umask_allows(dumps, tmp_path, monkeypatch):
    target, golden = dumps
    _report(target, golden, tmp_path, True, monkeypatch)
    mode = stat.S_IMODE((tmp_path / "compare_result.csv").stat().st_mode)
    assert mode & stat.S_IRGRP and mode & stat.S_IROTH  # not 0600 from the temporary file


@pytest.mark.parametrize("side,text", [
    ("GOLDEN", '{"task": "statistics", "data": {"Functional.x.0.forward": {"input_args": [}'),  # read in the helper
    ("TARGET", '{"task": "statistics", "data": ['),  # read here: the helper is stopped
])
def test_a_corrupt_side_is_one_clear_error_naming_it(dumps, tmp_path, monkeypatch, side, text):
    target, golden = dumps
    corrupt = tmp_path / "dump.json"
    corrupt.write_text(text)
    monkeypatch.setattr(parallel, "PARALLEL_BYTES", 0)
    monkeypatch.setattr(parallel, "available", lambda: True)
    pair = (target / "dump.json", corrupt) if side == "GOLDEN" else (corrupt, golden / "dump.json")
    with pytest.raises(CompareError, match=f"{side} .* is not a valid dump.json"):
        compare(*pair, tmp_path / "out")


def test_beside_hands_back_values_and_exceptions():
    assert parallel.Beside(sum, [1, 2, 3]).result() == 6
    with pytest.raises(ZeroDivisionError):
        parallel.Beside(divmod, 1, 0).result()
    with pytest.raises(CompareError, match="could not hand back"):
        parallel.Beside(lambda: (lambda: None)).result()  # a function cannot be pickled


def test_no_fork_while_other_threads_run(monkeypatch):
    """A lock another thread holds at the fork would stay locked in the helper: only single-threaded
    processes (the CLIs) fork; compare() called from a training process with writer threads does not."""
    monkeypatch.setattr(parallel.threading, "active_count", lambda: 2)
    assert not parallel.available()
    monkeypatch.setattr(parallel.threading, "active_count", lambda: 1)
    assert parallel.available()

"""The dump writer process (core.writer_process): steps written beside training, failures sent back, and the
writer thread where no process can start."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time

import pytest
from msprobe_runtime.core import dump_writer, writer_process
from msprobe_runtime.core.dump_writer import ENTRY_TOKEN, wait_for_writes, write_step
from msprobe_runtime.core.stats import entry_head


def _plan() -> tuple:
    """An entries plan for one float32 tensor of shape [2] whose max, min, sum and norm are 2, 1, 3, 2.5."""
    import struct

    floats = ([0], struct.pack("<4d", 2.0, 1.0, 3.0, 2.5))
    return (["float"], [2], [False], floats, ([], b""), [entry_head("torch.Tensor", "torch.float32", (2,))],
            [0], [True], None)


def _step(folder, name: str = "Torch.neg.0.forward") -> None:
    write_step(folder, {"task": "statistics"}, {name: ("output", (f"{ENTRY_TOKEN}0",))}, [([name], ["File x"])],
               {name: None}, entries=_plan())


def test_a_step_is_written_by_the_writer_process(tmp_path):
    import json

    _step(tmp_path / "step0")
    writer = dump_writer._writer_process()
    assert writer is not None and writer.process.poll() is None
    wait_for_writes()
    dump = json.loads((tmp_path / "step0" / "dump.json").read_text())
    entry = dump["data"]["Torch.neg.0.forward"]["output"][0]
    assert entry == {"type": "torch.Tensor", "dtype": "torch.float32", "shape": [2], "Max": 2.0, "Min": 1.0,
                     "Mean": 1.5, "Norm": 2.5, "requires_grad": True}
    assert json.loads((tmp_path / "step0" / "construct.json").read_text()) == {"Torch.neg.0.forward": None}


def test_a_failed_step_raises_at_the_next_step_or_wait(tmp_path):
    (tmp_path / "step0" / "dump.json").mkdir(parents=True)  # a folder where the file goes
    _step(tmp_path / "step0")
    with pytest.raises(OSError, match="dump.json"):
        wait_for_writes()
    _step(tmp_path / "step1")  # the writer goes on after a failure
    wait_for_writes()
    assert (tmp_path / "step1" / "dump.json").is_file()


def test_steps_handed_over_are_written_when_the_training_process_ends(tmp_path):
    """A process that exits straight after handing steps over (no close, no wait) still gets their files:
    the writer process reads its pipe to the end."""
    script = textwrap.dedent(f"""
        import os, sys
        sys.path[:0] = {sys.path!r}
        from test_writer_process import _step
        for index in range(5):
            _step({str(tmp_path)!r} + f"/step{{index}}")
        os._exit(0)
        """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    for index in range(5):  # the writer process may still be writing: wait for it to end
        for _ in range(200):
            if (tmp_path / f"step{index}" / "construct.json").is_file():
                break
            time.sleep(0.05)
        assert (tmp_path / f"step{index}" / "dump.json").is_file()


def test_the_writer_thread_writes_where_no_process_starts(tmp_path, monkeypatch):
    monkeypatch.setattr(dump_writer, "_process", [])
    monkeypatch.setattr(writer_process.subprocess, "Popen", _refused)
    _step(tmp_path / "step0")
    assert dump_writer._process == [None]
    wait_for_writes()
    assert (tmp_path / "step0" / "dump.json").is_file()


def test_a_killed_writer_process_hands_over_to_the_writer_thread(tmp_path, monkeypatch):
    monkeypatch.setattr(dump_writer, "_process", [])
    _step(tmp_path / "step0")
    wait_for_writes()
    writer = dump_writer._process[0]
    writer.process.kill()
    writer.process.wait()
    with pytest.warns(UserWarning, match="writer thread"):
        for index in (1, 2):  # the first write into the dead pipe may still succeed
            _step(tmp_path / f"step{index}")
    wait_for_writes()
    assert dump_writer._process == [None]
    assert (tmp_path / "step2" / "dump.json").is_file()


def test_the_writer_process_imports_no_framework():
    code = ("import sys; sys.path.insert(0, sys.argv[1]); from msprobe_runtime.core import writer_process, dump_writer;"
            " print(sorted(name for name in ('torch', 'mindspore') if name in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code, writer_process._ROOT], capture_output=True, text=True,
                          timeout=60)
    assert done.stdout.strip() == "[]", done.stderr


def _refused(*args, **kwargs):
    raise OSError("no process can start here")

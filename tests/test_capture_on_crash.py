"""A step captured when the process exits (an uncaught exception in it) is written: the crashing step is the
one to inspect. Each case runs a training script in a subprocess and reads its dump."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

WARNING = "msprobe-kit: the process exits while step"

TORCH = """
import json, os, shutil, sys
import torch
from msprobe_runtime.core.dump_writer import wait_for_writes
from msprobe_runtime.pytorch import PrecisionDebugger

dump = sys.argv[1]
debugger = PrecisionDebugger(task="statistics", dump_path=dump, level="mix")
model = torch.nn.Sequential(torch.nn.Linear(4, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.ones(3, 4)
"""


def run(tmp_path: Path, script: str, prelude: str = TORCH) -> subprocess.CompletedProcess:
    path = tmp_path / "train.py"
    path.write_text(prelude + textwrap.dedent(script), encoding="utf-8")
    return subprocess.run([sys.executable, str(path), str(tmp_path / "dump")], capture_output=True, text=True,
                          timeout=300)


def records(tmp_path: Path, step: int) -> dict:
    return json.loads((tmp_path / "dump" / f"step{step}" / "rank0" / "dump.json").read_text(encoding="utf-8"))["data"]


def test_an_exception_in_a_step_writes_what_it_recorded(tmp_path):
    done = run(tmp_path, """
        for i in range(3):
            debugger.start(model)
            model(x).sum().backward()
            if i == 1:
                raise FloatingPointError("loss is NaN")
            debugger.stop()
            debugger.step()
        """)
    assert "FloatingPointError: loss is NaN" in done.stderr
    assert f"{WARNING} 1 is captured" in done.stderr
    assert records(tmp_path, 1).keys() == records(tmp_path, 0).keys()
    assert "Module.0.Linear.forward.0" in records(tmp_path, 1)
    assert not (tmp_path / "dump" / "step2").exists()


def test_a_stopped_step_is_not_written_again_at_exit(tmp_path):
    done = run(tmp_path, """
        debugger.start(model)
        model(x)
        debugger.stop()
        wait_for_writes()
        shutil.rmtree(os.path.join(dump, "step0"))  # written by stop(): an exit write would bring it back
        """)
    assert done.returncode == 0, done.stderr
    assert not (tmp_path / "dump" / "step0").exists() and WARNING not in done.stderr


def test_a_step_that_recorded_nothing_is_not_written(tmp_path):
    done = run(tmp_path, """
        debugger.start(model)
        raise RuntimeError("the data loader failed")
        """)
    assert "the data loader failed" in done.stderr
    assert not (tmp_path / "dump" / "step0").exists() and WARNING not in done.stderr


def test_a_forked_child_does_not_write_its_parents_step(tmp_path):
    done = run(tmp_path, """
        debugger.start(model)
        model(x)
        if os.fork() == 0:
            sys.exit(0)  # a normal exit runs the child's atexit functions
        os.wait()
        print(os.path.exists(os.path.join(dump, "step0")))
        os._exit(0)
        """)
    assert done.stdout == "False\n", done.stderr


def test_a_crash_in_a_micro_batch_that_does_not_step_keeps_the_update(tmp_path):
    """msprobe-instrument's loop with gradient accumulation stops and steps under the optimizer's condition."""
    done = run(tmp_path, """
        for i in range(4):
            debugger.start(model)
            try:
                model(x).sum().backward()
                if i == 2:
                    raise RuntimeError("shape mismatch")
                if (i + 1) % 2 == 0:
                    optimizer.step()
                    optimizer.zero_grad()
            finally:
                if (i + 1) % 2 == 0:
                    debugger.stop()
                    debugger.step()
        """)
    assert "shape mismatch" in done.stderr
    assert "Module.0.Linear.forward.1" in records(tmp_path, 0)
    crashed = records(tmp_path, 1)
    assert "Module.0.Linear.forward.0" in crashed and "Module.0.Linear.forward.1" not in crashed


def test_mindspore_writes_the_step_that_raised(tmp_path):
    pytest.importorskip("mindspore")
    prelude = f"""
import sys
sys.path.insert(0, {str(Path(__file__).parent)!r})
import mindspore as ms
from mindspore_support import TinyNet, batch, trainer
from msprobe_runtime.mindspore import PrecisionDebugger

ms.set_context(mode=ms.PYNATIVE_MODE)
debugger = PrecisionDebugger(task="statistics", dump_path=sys.argv[1], level="mix")
net = TinyNet()
grad_fn, optimizer = trainer(net)
x, y = batch()
"""
    done = run(tmp_path, """
        for i in range(2):
            debugger.start(model=net)
            loss, grads = grad_fn(x, y)
            if i == 1:
                raise FloatingPointError("loss is NaN")
            optimizer(grads)
            debugger.stop()
            debugger.step()
        """, prelude)
    assert "FloatingPointError: loss is NaN" in done.stderr
    assert f"{WARNING} 1 is captured" in done.stderr
    assert "Cell.fc1.Dense.forward.0" in records(tmp_path, 1)
    header = json.loads((tmp_path / "dump" / "step1" / "rank0" / "dump.json").read_text(encoding="utf-8"))
    assert header["framework"] == "mindspore"

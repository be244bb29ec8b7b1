"""The MindSpore fixtures are not reproducible as written (tests/test_fixtures.py shows their losses differ
between runs); after `msprobe-instrument --write` they run bit-identically twice and dump the configured
steps, with the MindSpore runtime: a value_and_grad training loop, and Model.train (the MsprobeStep
callback the codemod inserts). Slow (MindSpore starts four times): about two minutes on a busy machine.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("mindspore")

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "mindspore"
LOSS = re.compile(r"^(?:step \d+ loss \S+|epoch: \d+ step: \d+, loss is \S+)$", re.MULTILINE)
CASES = [("image_pipeline.py", ["--steps", "3"]), ("nlp_train.py", ["--use_model"])]


@pytest.mark.parametrize(("name", "args"), CASES, ids=["value_and_grad loop", "Model.train"])
def test_instrumented_fixture_runs_bit_identically_and_dumps(tmp_path, name, args):
    shutil.copy(FIXTURES / name, tmp_path / name)
    command = [sys.executable, "-m", "msprobe_rewriter.instrument", "--write", "--emit-config", name]
    written = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert written.returncode == 0, written.stderr
    runs = []
    for index in range(2):
        cwd = tmp_path / f"run{index}"
        cwd.mkdir()
        runs.append((cwd, subprocess.Popen([sys.executable, str(tmp_path / name), *args], cwd=cwd,
                                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)))
    losses = []
    for cwd, run in runs:
        out, err = run.communicate(timeout=600)
        assert run.returncode == 0, err[-3000:]
        losses.append(LOSS.findall(out))
        steps = sorted(path.name for path in (cwd / "msprobe_dump").iterdir())
        assert steps == ["step0", "step1"], steps
        assert (cwd / "msprobe_dump" / "step1" / "rank0" / "dump.json").is_file()
    assert len(losses[0]) >= 3
    assert losses[0] == losses[1]

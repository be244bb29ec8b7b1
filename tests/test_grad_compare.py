"""The gradient comparator on real gradient-probe dumps written by our runtime: msprobe's files, plus the verdict."""

from __future__ import annotations

import csv
import json
import shutil
import subprocess
import sys

import pytest
import torch
from msprobe_runtime.core.grad_compare import GradComparator, GradCompareError, verdict
from msprobe_runtime.pytorch import PrecisionDebugger
from torch import nn
from torch.nn import functional as F

STEPS = 4


def probe(folder, flip_from: int | None = None, level: str = "L1"):
    """Train a small network for STEPS steps with the gradient probe; from step `flip_from` the targets are
    negated (a precision problem that turns gradient signs around). Returns the dump folder."""
    config = {"task": "grad_probe", "dump_path": str(folder), "grad_probe": {"grad_level": level}}
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(json.dumps(config))
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 4))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    debugger = PrecisionDebugger(config_path=str(folder / "config.json"))
    debugger.monitor(model)
    x = torch.linspace(-1, 1, 64).reshape(8, 8)
    y = torch.linspace(0, 1, 32).reshape(8, 4)
    for step in range(STEPS):
        target = -y if flip_from is not None and step >= flip_from else y
        loss = F.mse_loss(model(x), target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    debugger.close()
    return folder


@pytest.fixture(scope="module")
def dumps(tmp_path_factory):
    root = tmp_path_factory.mktemp("grad")
    return {"base": probe(root / "base"), "again": probe(root / "again"), "flipped": probe(root / "flipped", 2)}


def read_csv(path) -> list[list[str]]:
    with open(path, encoding="utf-8", newline="") as handle:
        return list(csv.reader(handle))


def test_identical_runs_are_fully_similar(dumps, tmp_path):
    results = GradComparator.compare_distributed(dumps["base"], dumps["again"], tmp_path)
    assert [result.rank for result in results] == [0]
    rows = read_csv(tmp_path / "rank0" / "similarities.csv")
    assert rows[0] == ["step", "0", "1", "2", "3"]
    assert [row[0] for row in rows[1:]] == ["0.weight", "0.bias", "2.weight", "2.bias", "summary"]
    assert all(float(value) == 1.0 for row in rows[1:] for value in row[1:])
    assert results[0].verdict.step is None
    pictures = tmp_path / "rank0" / "similarities_picture"
    assert (pictures / "summary_similarities.png").is_file() and (pictures / "0.weight_similarities.png").is_file()


def test_verdict_names_the_step_where_signs_turn(dumps, tmp_path):
    result = GradComparator.compare_distributed(dumps["base"], dumps["flipped"], tmp_path)[0]
    summary = result.similarities["summary"]
    assert summary[0] == summary[1] == 1.0 and summary[2] < 0.97
    assert result.verdict.step == 2
    assert all("dropped" in reason for _, _, reason in result.verdict.parameters)
    assert "step 2" in (tmp_path / "rank0" / "verdict.txt").read_text()


def test_summary_is_weighted_by_element_count():
    values = {"big": [1.0, 0.99], "small": [1.0, 0.5], "summary": [1.0, 0.98]}
    assert verdict(0, [0, 1], values).parameters[0][0] == "small"
    assert verdict(0, [5, 6], {"p": [0.96, 0.96], "summary": [0.96, 0.96]}).step == 5  # below 0.97 at the first step
    assert verdict(0, [0, 1], {"p": [0.99, 0.965], "summary": [0.99, 0.965]}).step is None  # a 0.025 drop is fine


def test_ranks_and_steps_pair_and_mismatches_are_clear(dumps, tmp_path):
    two = tmp_path / "two"
    shutil.copytree(dumps["base"] / "rank0", two / "rank0")
    shutil.copytree(dumps["flipped"] / "rank0", two / "rank1")
    results = GradComparator.compare_distributed(two, dumps["base"], tmp_path / "out")
    assert [result.rank for result in results] == [0]  # only ranks present on both sides
    (tmp_path / "empty").mkdir()
    with pytest.raises(GradCompareError, match="no rank folder in both"):
        GradComparator.compare_distributed(tmp_path / "empty", dumps["base"], tmp_path / "x")
    level0 = probe(tmp_path / "l0", level="L0")
    with pytest.raises(GradCompareError, match="no step folder in both"):
        GradComparator.compare_distributed(level0, dumps["base"], tmp_path / "y")


def test_cli_grad_option(dumps, tmp_path):
    command = [sys.executable, "-m", "msprobe_runtime.compare_cli", "--grad", "-o", str(tmp_path)]
    done = subprocess.run([*command, str(dumps["base"]), str(dumps["flipped"])], capture_output=True, text=True)
    assert done.returncode == 1 and done.stdout.startswith("rank0: precision goes wrong at step 2")
    same = subprocess.run([*command, str(dumps["base"]), str(dumps["again"])], capture_output=True, text=True)
    assert same.returncode == 0 and "no suspicious step" in same.stdout
    bad = subprocess.run([*command, str(tmp_path / "nothing"), str(dumps["again"])], capture_output=True, text=True)
    assert bad.returncode == 2 and bad.stderr.startswith("msprobe-compare: error:") and "Traceback" not in bad.stderr

"""Capture that starts before `init_process_group` writes under the rank the launcher set (torchrun's RANK),
so the ranks of a torchrun job do not all write step0/rank0."""

from __future__ import annotations

import pytest
import torch
from msprobe_runtime.pytorch import PrecisionDebugger


def test_rank_comes_from_the_launcher_before_init(tmp_path, monkeypatch):
    monkeypatch.setenv("RANK", "3")
    debugger = PrecisionDebugger(dump_path=str(tmp_path / "dump"), task="statistics", level="L1", step=[0])
    debugger.start()
    torch.ones(2).sum()
    debugger.stop()
    debugger.step()
    debugger.close()
    assert [path.name for path in (tmp_path / "dump" / "step0").iterdir()] == ["rank3"]


def test_no_launcher_means_rank0(tmp_path, monkeypatch):
    monkeypatch.delenv("RANK", raising=False)
    debugger = PrecisionDebugger(dump_path=str(tmp_path / "dump"), task="statistics", level="L1", step=[0])
    with debugger.start():
        torch.ones(2).sum()
    debugger.close()
    assert [path.name for path in (tmp_path / "dump" / "step0").iterdir()] == ["rank0"]


def test_mindspore_rank_comes_from_msrun_before_init(monkeypatch):
    pytest.importorskip("mindspore", reason="MindSpore is not installed")
    from msprobe_runtime.mindspore.debugger import current_rank

    monkeypatch.setenv("RANK_ID", "2")
    assert current_rank() == 2
    monkeypatch.delenv("RANK_ID")
    assert current_rank() == 0

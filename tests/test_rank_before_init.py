"""Capture that starts before `init_process_group` writes under the rank the launcher set (torchrun's RANK),
so the ranks of a torchrun job do not all write step0/rank0."""

from __future__ import annotations

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

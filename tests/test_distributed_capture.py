"""Two processes under torch.distributed (gloo, CPU): each rank writes its own rank{R} folder."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest
import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _worker(rank: int, world: int, port: int, folder: str) -> None:
    from msprobe_runtime.pytorch import PrecisionDebugger

    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world)
    try:
        torch.manual_seed(0)
        model = torch.nn.Linear(4, 2)
        for name in ("all", "only1"):  # two configs: every rank, then rank 1 only
            debugger = PrecisionDebugger(config_path=str(Path(folder) / f"{name}.json"))
            with debugger.start(model):
                loss = model(torch.full((3, 4), float(rank + 1))).sum()
                loss.backward()
                for parameter in model.parameters():
                    dist.all_reduce(parameter.grad)
            model.zero_grad()
            debugger.close()
    finally:
        dist.destroy_process_group()


@pytest.mark.skipif(not dist.is_available(), reason="torch.distributed is not available")
def test_each_rank_writes_its_own_folder_and_rank_filters(tmp_path):
    for name, ranks in (("all", []), ("only1", [1])):
        config = {"task": "statistics", "dump_path": str(tmp_path / name), "level": "mix", "rank": ranks}
        (tmp_path / f"{name}.json").write_text(json.dumps(config))
    mp.spawn(_worker, args=(2, _free_port(), str(tmp_path)), nprocs=2, join=True)
    step = tmp_path / "all" / "step0"
    assert sorted(p.name for p in step.iterdir()) == ["rank0", "rank1"]
    for rank in (0, 1):
        data = json.loads((step / f"rank{rank}" / "dump.json").read_text())["data"]
        record = data["Distributed.all_reduce.0.forward"]
        assert record["input_args"][0]["Max"] == pytest.approx(3.0 * (rank + 1))  # local gradient, before
        assert record["output"][0]["Max"] == pytest.approx(9.0)  # after: summed over both ranks
        assert "Functional.linear.0.forward" in data and "Module.Linear.forward.0" not in data
    assert sorted(p.name for p in (tmp_path / "only1" / "step0").iterdir()) == ["rank1"]


def _async_worker(rank: int, world: int, port: int, folder: str) -> None:
    from msprobe_runtime.pytorch import PrecisionDebugger

    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world)
    try:
        debugger = PrecisionDebugger(config_path=str(Path(folder) / "config.json"))
        waited, finished, changed = (torch.full((3,), float(rank + 1)) for _ in range(3))
        with debugger.start():
            dist.all_reduce(waited, async_op=True).wait()  # described when waited for
            work = dist.all_reduce(finished, async_op=True)
            while not work.is_completed():  # done by the window's end, never waited for
                pass
            other = dist.all_reduce(changed, async_op=True)
            other.wait()
            changed.mul_(10)  # waited: described as it was then
            if rank == 0:  # rank 1 sends only once rank 0's window has closed: the result stays null
                late = dist.irecv(torch.zeros(2), src=1)
        if rank == 0:
            dist.send(torch.ones(1), dst=1)
            late.wait()
        else:
            dist.recv(torch.zeros(1), src=0)
            dist.send(torch.ones(2), dst=0)
        debugger.close()
    finally:
        dist.destroy_process_group()


@pytest.mark.skipif(not dist.is_available(), reason="torch.distributed is not available")
def test_asynchronous_collectives_record_their_results_once_done(tmp_path):
    config = {"task": "statistics", "dump_path": str(tmp_path / "dump"), "level": "L1"}
    (tmp_path / "config.json").write_text(json.dumps(config))
    mp.spawn(_async_worker, args=(2, _free_port(), str(tmp_path)), nprocs=2, join=True)
    for rank in (0, 1):
        data = json.loads((tmp_path / "dump" / "step0" / f"rank{rank}" / "dump.json").read_text())["data"]
        for index in range(3):
            record = data[f"Distributed.all_reduce.{index}.forward"]
            assert record["input_args"][0]["Max"] == pytest.approx(rank + 1.0)
            assert record["output"][0]["Max"] == pytest.approx(3.0)  # 1 + 2, summed over the ranks
            assert record["output"][0]["shape"] == [3]
        assert not any(".wait." in name for name in data)
    data = json.loads((tmp_path / "dump" / "step0" / "rank0" / "dump.json").read_text())["data"]
    late = data["Distributed.irecv.0.forward"]["output"][0]
    assert late["shape"] == [2] and late["Max"] is None and late["Norm"] is None

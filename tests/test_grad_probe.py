"""The gradient probe: msprobe's grad_summary CSV and sign files, step counting, filters, neutrality."""

from __future__ import annotations

import csv
import math
import os
import socket
import zlib

import numpy as np
import pytest
import torch
from msprobe_runtime.core.config import ConfigError, DebuggerConfig
from msprobe_runtime.core.grad_summary import interval_names, summary_header
from msprobe_runtime.pytorch.grad_probe import GradProbe
from torch import nn
from torch.optim.optimizer import register_optimizer_step_pre_hook


class Small(nn.Module):
    """Two linear layers and a layer norm: a few parameters of different shapes."""

    def __init__(self, dtype=torch.float32):
        super().__init__()
        self.fc1 = nn.Linear(6, 8, dtype=dtype)
        self.norm = nn.LayerNorm(8, dtype=dtype)
        self.fc2 = nn.Linear(8, 3, dtype=dtype)

    def forward(self, x):
        return self.fc2(torch.relu(self.norm(self.fc1(x))))


def config(tmp_path, **fields) -> DebuggerConfig:
    return DebuggerConfig(task="grad_probe", dump_path=str(tmp_path / "dump"), **fields)


def train(model: nn.Module, optimizer: torch.optim.Optimizer, steps: int) -> list[torch.Tensor]:
    """Deterministic training steps; returns the losses."""
    generator = torch.Generator().manual_seed(1)
    dtype = next(model.parameters()).dtype
    losses = []
    for _ in range(steps):
        x = torch.randn(4, 6, generator=generator).to(dtype)
        optimizer.zero_grad()
        loss = model(x).square().mean()
        loss.backward()
        optimizer.step()
        losses.append(loss.detach())
    return losses


def read_csv(path) -> list[list[str]]:
    with open(path, encoding="utf-8-sig", newline="") as handle:
        return list(csv.reader(handle))


def probe_and_train(tmp_path, steps=2, model=None, optimizer_class=torch.optim.SGD, **fields):
    torch.manual_seed(0)
    model = model or Small()
    probe = GradProbe(config(tmp_path, **fields), model)
    grads = []
    probe_hook = register_optimizer_step_pre_hook(
        lambda *_: grads.append({name: p.grad.clone() for name, p in model.named_parameters()}))
    try:
        train(model, optimizer_class(model.parameters(), lr=0.1), steps)
        probe.flush()
    finally:
        probe_hook.remove()
        probe.close()
    return tmp_path / "dump" / "rank0", grads


def test_headers_are_msprobes():
    assert summary_header("L0", [-1, 0, 1]) == ["param_name", "MD5", "max", "min", "norm", "shape"]
    assert summary_header("L1", [-1, 0, 1]) == ["param_name", "max", "min", "norm", "shape"]
    assert summary_header("L2", [-1, 0, 1]) == [
        "param_name", "(-inf, -1]", "(-1, 0]", "(0, 1]", "(1, inf)", "=0", "max", "min", "norm", "shape"]
    assert interval_names([-0.5, 2]) == ["(-inf, -0.5]", "(-0.5, 2]", "(2, inf)", "=0"]
    assert interval_names([0]) == ["(-inf, 0]", "(0, inf)", "=0"]


def msprobe_reference_row(name, grad, level, bounds):
    """The row msprobe 8.x computes for one gradient (its GradStatCsv, restated)."""
    row = [name]
    if level == "L0":
        row.append(f"{zlib.crc32(grad.float().numpy().tobytes()):08x}")
    if level == "L2":
        buckets = torch.bucketize(grad.float(), torch.tensor(bounds, dtype=torch.float32))
        counts = [(buckets == i).sum().item() for i in range(len(bounds) + 1)] + [(grad == 0).sum().item()]
        row.extend(count / grad.numel() for count in counts)
    row.extend([grad.max().float().item(), grad.min().float().item(), torch.norm(grad).float().item(),
                list(grad.shape)])
    return [str(cell) for cell in row]


@pytest.mark.parametrize("level", ["L0", "L1", "L2"])
def test_csv_rows_match_msprobes_values(tmp_path, level):
    bounds = (-0.01, 0, 0.01)
    rank_dir, grads = probe_and_train(tmp_path, steps=2, grad_level=level, bounds=bounds)
    assert sorted(os.listdir(rank_dir)) == (
        ["grad_summary_0.csv", "grad_summary_1.csv"] + (["step0", "step1"] if level != "L0" else []))
    for step in (0, 1):
        rows = read_csv(rank_dir / f"grad_summary_{step}.csv")
        assert rows[0] == summary_header(level, bounds)
        expected = [msprobe_reference_row(name, grad, level, bounds) for name, grad in grads[step].items()]
        assert [row[0] for row in rows[1:]] == [row[0] for row in expected]
        norm = rows[0].index("norm")
        for got, want in zip(rows[1:], expected, strict=True):
            assert got[:norm] + got[norm + 1 :] == want[:norm] + want[norm + 1 :]
            assert math.isclose(float(got[norm]), float(want[norm]), rel_tol=1e-6)


def test_csv_bytes_follow_msprobes_writer(tmp_path):
    rank_dir, _ = probe_and_train(tmp_path, steps=1, grad_level="L1")
    raw = (rank_dir / "grad_summary_0.csv").read_bytes()
    assert raw.startswith(b"\xef\xbb\xbfparam_name,max,min,norm,shape\r\n")  # utf-8-sig, csv-module rows
    assert b'"[8, 6]"' in raw


@pytest.mark.parametrize("level", ["L1", "L2"])
def test_sign_files_hold_grad_greater_than_zero(tmp_path, level):
    rank_dir, grads = probe_and_train(tmp_path, steps=2, grad_level=level)
    for step in (0, 1):
        folder = rank_dir / f"step{step}"
        assert sorted(os.listdir(folder)) == sorted(f"{name}.npy" for name in grads[step])
        for name, grad in grads[step].items():
            signs = np.load(folder / f"{name}.npy")
            assert signs.dtype == np.bool_ and signs.shape == tuple(grad.shape)
            assert np.array_equal(signs, (grad > 0).numpy())
    assert not [name for name in os.listdir(rank_dir) if name.startswith(".")]  # no partial folders left


def test_every_optimizer_step_counts_from_zero_for_any_optimizer(tmp_path):
    class PlainDescent(torch.optim.Optimizer):
        def __init__(self, params):
            super().__init__(params, {"lr": 0.1})

        @torch.no_grad()
        def step(self, closure=None):
            for group in self.param_groups:
                for param in group["params"]:
                    param.add_(param.grad, alpha=-group["lr"])

    model = Small()
    probe = GradProbe(config(tmp_path, grad_level="L1"), model)
    train(model, torch.optim.AdamW(model.parameters()), 2)
    train(model, PlainDescent(model.parameters()), 1)
    train(model, torch.optim.Adagrad(model.parameters()), 1)
    probe.close()
    assert probe.step == 3
    names = os.listdir(tmp_path / "dump" / "rank0")
    assert sorted(name for name in names if name.endswith(".csv")) == [f"grad_summary_{i}.csv" for i in range(4)]


def test_step_filter_and_param_list(tmp_path):
    rank_dir, _ = probe_and_train(tmp_path, steps=6, grad_level="L1", step=(1, 4, 5),
                                  param_list=("fc1.weight", "norm.bias"))
    assert sorted(os.listdir(rank_dir)) == [
        "grad_summary_1.csv", "grad_summary_4.csv", "grad_summary_5.csv", "step1", "step4", "step5"]
    assert [row[0] for row in read_csv(rank_dir / "grad_summary_4.csv")[1:]] == ["fc1.weight", "norm.bias"]
    assert sorted(os.listdir(rank_dir / "step4")) == ["fc1.weight.npy", "norm.bias.npy"]


def test_main_grad_is_used_when_present_and_missing_grads_are_skipped(tmp_path):
    model = Small()
    model.fc2.weight.requires_grad_(False)
    model.fc1.weight.main_grad = torch.full((8, 6), -2.0)
    probe = GradProbe(config(tmp_path, grad_level="L1"), model)
    train(model, torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.1), 1)
    probe.close()
    rows = {row[0]: row for row in read_csv(tmp_path / "dump" / "rank0" / "grad_summary_0.csv")[1:]}
    assert "fc2.weight" not in rows
    assert rows["fc1.weight"][1:4] == ["-2.0", "-2.0", str(torch.full((8, 6), -2.0).norm().item())]
    assert not np.load(tmp_path / "dump" / "rank0" / "step0" / "fc1.weight.npy").any()


@pytest.mark.parametrize("level", ["L0", "L1", "L2"])
def test_the_probe_is_numerically_neutral(tmp_path, level):
    def run(with_probe: bool):
        torch.manual_seed(0)
        model = Small()
        probe = GradProbe(config(tmp_path, grad_level=level), model) if with_probe else None
        losses = train(model, torch.optim.AdamW(model.parameters(), lr=1e-2), 6)
        if probe is not None:
            probe.close()
        return losses, [p.detach().clone() for p in model.parameters()]

    plain_losses, plain_params = run(False)
    probed_losses, probed_params = run(True)
    assert all(torch.equal(a, b) for a, b in zip(plain_losses, probed_losses, strict=True))
    assert all(torch.equal(a, b) for a, b in zip(plain_params, probed_params, strict=True))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float64])
@pytest.mark.parametrize("level", ["L0", "L2"])
def test_low_and_high_precision_gradients(tmp_path, dtype, level):
    model = Small(dtype=dtype)
    probe = GradProbe(config(tmp_path, grad_level=level), model)
    train(model, torch.optim.SGD(model.parameters(), lr=0.01), 1)
    probe.close()
    rows = read_csv(tmp_path / "dump" / "rank0" / "grad_summary_0.csv")
    grad = model.fc1.weight.grad
    fc1 = rows[1]
    column = rows[0].index
    assert float(fc1[column("max")]) == grad.max().float().item()
    assert float(fc1[column("min")]) == grad.min().float().item()
    assert math.isclose(float(fc1[column("norm")]), grad.double().norm().item(), rel_tol=1e-2)
    if level == "L0":
        assert fc1[column("MD5")] == f"{zlib.crc32(grad.float().numpy().tobytes()):08x}"


def test_scalar_empty_and_non_finite_gradients(tmp_path):
    model = nn.Module()
    model.scale = nn.Parameter(torch.tensor(2.0))
    model.nothing = nn.Parameter(torch.empty(0, 3))
    model.weird = nn.Parameter(torch.zeros(3))
    probe = GradProbe(config(tmp_path, grad_level="L2"), model)
    model.scale.grad = torch.tensor(-0.5)
    model.nothing.grad = torch.empty(0, 3)
    model.weird.grad = torch.tensor([float("nan"), float("inf"), 0.0])
    torch.optim.SGD(model.parameters(), lr=0.0).step()
    probe.close()
    rows = {row[0]: row for row in read_csv(tmp_path / "dump" / "rank0" / "grad_summary_0.csv")[1:]}
    assert rows["scale"][1:] == ["0.0", "1.0", "0.0", "0.0", "0.0", "-0.5", "-0.5", "0.5", "[]"]
    assert rows["nothing"][-4:-1] == ["nan", "nan", "0.0"] and rows["nothing"][-1] == "[0, 3]"
    assert rows["weird"][5] == str(1 / 3) and rows["weird"][6] == "nan" and rows["weird"][8] == "nan"
    folder = tmp_path / "dump" / "rank0" / "step0"
    assert np.load(folder / "scale.npy").shape == () and np.load(folder / "nothing.npy").shape == (0, 3)
    assert np.load(folder / "weird.npy").tolist() == [False, True, False]


@pytest.mark.parametrize("level", ["L0", "L2"])
def test_sparse_gradients_are_probed_as_the_dense_gradient(tmp_path, level):
    torch.manual_seed(0)
    sparse, dense = nn.Embedding(10, 4, sparse=True), nn.Embedding(10, 4)
    dense.load_state_dict(sparse.state_dict())
    tokens = torch.tensor([[1, 3, 3], [7, 1, 0]])  # repeated rows: the sparse gradient is uncoalesced
    for name, model in (("sparse", sparse), ("dense", dense)):
        probe = GradProbe(config(tmp_path / name, grad_level=level), model)
        model(tokens).square().sum().backward()
        torch.optim.SGD(model.parameters(), lr=0.1).step()  # SGD takes sparse gradients
        probe.close()
    assert sparse.weight.grad.is_sparse
    folders = [tmp_path / name / "dump" / "rank0" for name in ("sparse", "dense")]
    assert read_csv(folders[0] / "grad_summary_0.csv") == read_csv(folders[1] / "grad_summary_0.csv")
    if level == "L2":
        signs = [np.load(folder / "step0" / "weight.npy") for folder in folders]
        assert signs[0].shape == (10, 4) and (signs[0] == signs[1]).all()


def test_monitor_later_and_close_stops_probing(tmp_path):
    model = Small()
    probe = GradProbe(config(tmp_path, grad_level="L1", param_list=("fc2.bias",)))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    train(model, optimizer, 1)  # nothing monitored yet: counted, nothing written
    probe.monitor(model)
    train(model, optimizer, 1)
    probe.close()
    probe.close()  # idempotent
    train(model, optimizer, 1)
    assert sorted(os.listdir(tmp_path / "dump" / "rank0")) == ["grad_summary_1.csv", "step1"]


def test_a_list_of_models_is_monitored_with_their_indices(tmp_path):
    """A GAN's generator and discriminator: parameters named as start(model=[G, D]) names records."""
    generator, discriminator = Small(), Small()
    probe = GradProbe(config(tmp_path, grad_level="L0", param_list=("0.fc2.bias", "1.fc2.bias")))
    probe.monitor([generator, discriminator])
    optimizer = torch.optim.SGD([*generator.parameters(), *discriminator.parameters()], lr=0.1)
    optimizer.zero_grad()
    (generator(torch.ones(2, 6)).sum() + discriminator(torch.ones(2, 6)).sum()).backward()
    optimizer.step()
    probe.close()
    assert [row[0] for row in read_csv(tmp_path / "dump" / "rank0" / "grad_summary_0.csv")[1:]] == [
        "0.fc2.bias", "1.fc2.bias"]
    with pytest.raises(TypeError, match=r"monitor\(model\) takes a torch.nn.Module or a list or tuple"):
        probe.monitor([generator, "discriminator"])


def test_an_earlier_runs_step_folder_is_replaced(tmp_path):
    stale = tmp_path / "dump" / "rank0" / "step0"
    stale.mkdir(parents=True)
    (stale / "old.npy").write_bytes(b"x")
    probe_and_train(tmp_path, steps=1, grad_level="L1")
    assert "old.npy" not in os.listdir(stale)


def test_unwritable_dump_path_fails_at_construction(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(ConfigError, match="is not a writable folder"):
        GradProbe(DebuggerConfig(task="grad_probe", dump_path=str(blocker / "dump")), Small())


def test_a_write_failure_surfaces_on_the_training_thread(tmp_path):
    model = Small()
    probe = GradProbe(config(tmp_path, grad_level="L1"), model)
    (tmp_path / "dump" / "rank0").write_text("a file where the rank folder belongs")
    train(model, torch.optim.SGD(model.parameters(), lr=0.1), 1)
    with pytest.raises(RuntimeError, match="writing the gradient probe's files"):
        probe.close()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _two_rank_worker(rank: int, world: int, port: int, dump_path: str) -> None:
    torch.distributed.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world)
    try:
        torch.manual_seed(rank)
        model = Small()
        probes = [GradProbe(DebuggerConfig(task="grad_probe", dump_path=f"{dump_path}/{name}", rank=ranks), model)
                  for name, ranks in (("all", ()), ("only1", (1,)))]
        train(model, torch.optim.SGD(model.parameters(), lr=0.1), 2)
        for probe in probes:
            probe.close()
    finally:
        torch.distributed.destroy_process_group()


def test_two_ranks_write_their_own_folders_and_rank_filters(tmp_path):
    torch.multiprocessing.spawn(_two_rank_worker, args=(2, _free_port(), str(tmp_path)), nprocs=2)
    assert sorted(os.listdir(tmp_path / "all")) == ["rank0", "rank1"]
    assert sorted(os.listdir(tmp_path / "only1")) == ["rank1"]
    for folder in (tmp_path / "all" / "rank0", tmp_path / "all" / "rank1", tmp_path / "only1" / "rank1"):
        assert sorted(os.listdir(folder)) == ["grad_summary_0.csv", "grad_summary_1.csv", "step0", "step1"]

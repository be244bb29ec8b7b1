"""seed_all: real seeding on CPU; the CUDA and NPU branches through small recording stand-ins."""

from __future__ import annotations

import os
import random
import sys
import types

import numpy as np
import pytest
import torch
from msprobe_runtime.pytorch import seed_all
from msprobe_runtime.pytorch.dropout import restore_dropout

DETERMINISM_ENV = ("PYTHONHASHSEED", "CUBLAS_WORKSPACE_CONFIG", "HCCL_DETERMINISTIC", "LCCL_DETERMINISTIC",
                   "FLASH_ATTENTION_DETERMINISTIC")


@pytest.fixture(autouse=True)
def restore_global_state(monkeypatch):
    """seed_all changes process-wide switches: put them back after each test."""
    for name in DETERMINISM_ENV:
        monkeypatch.delenv(name, raising=False)
    saved = (torch.are_deterministic_algorithms_enabled(), torch.is_deterministic_algorithms_warn_only_enabled(),
             torch.backends.cudnn.deterministic, torch.backends.cudnn.benchmark)
    yield
    if saved[:2] != (torch.are_deterministic_algorithms_enabled(), torch.is_deterministic_algorithms_warn_only_enabled()):
        torch.use_deterministic_algorithms(saved[0], warn_only=saved[1])  # slow the first time: only when needed
    torch.backends.cudnn.deterministic, torch.backends.cudnn.benchmark = saved[2], saved[3]
    restore_dropout()


class RecordingCalls:
    """A callable that records its arguments."""

    def __init__(self, result=None):
        self.calls: list[tuple] = []
        self.result = result

    def __call__(self, *args):
        self.calls.append(args)
        return self.result


def draws() -> tuple:
    return random.random(), np.random.rand(), torch.rand(3).tolist(), torch.randn(2, generator=None).tolist()


def test_seeds_python_numpy_and_torch_on_cpu():
    seed_all(42)
    first = draws()
    random.random(), np.random.rand(), torch.rand(5)  # move every generator on
    seed_all(42)
    assert draws() == first
    assert os.environ["PYTHONHASHSEED"] == "42"
    seed_all(43)
    assert draws() != first


def test_default_seed_is_msprobes_1234():
    seed_all()
    expected = draws()
    seed_all(1234)
    assert draws() == expected and os.environ["PYTHONHASHSEED"] == "1234"


@pytest.mark.parametrize("seed", [0, 2**32 - 1])
def test_seed_bounds_are_accepted(seed):
    seed_all(seed)
    assert os.environ["PYTHONHASHSEED"] == str(seed)


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"seed": "1234"}, TypeError, "seed must be an integer"),
        ({"seed": 12.0}, TypeError, "seed must be an integer"),
        ({"seed": True}, TypeError, "seed must be an integer"),
        ({"seed": -1}, ValueError, r"seed must be an integer in \[0, 4294967295\], got -1"),
        ({"seed": 2**32}, ValueError, "got 4294967296"),
        ({"mode": 1}, TypeError, "mode must be True or False, got 1"),
        ({"mode": "true"}, TypeError, "mode must be True or False"),
        ({"rm_dropout": 0}, TypeError, "rm_dropout must be True or False, got 0"),
    ],
)
def test_bad_arguments_get_a_clear_error(kwargs, error, message):
    with pytest.raises(error, match=message):
        seed_all(**kwargs)


def test_mode_true_turns_on_deterministic_computation():
    seed_all(mode=True)
    assert torch.are_deterministic_algorithms_enabled()
    assert not torch.is_deterministic_algorithms_warn_only_enabled()
    assert torch.backends.cudnn.deterministic and not torch.backends.cudnn.benchmark
    assert os.environ["CUBLAS_WORKSPACE_CONFIG"] == ":4096:8"
    assert os.environ["HCCL_DETERMINISTIC"] == "true" and os.environ["LCCL_DETERMINISTIC"] == "1"
    assert os.environ["FLASH_ATTENTION_DETERMINISTIC"] == "1"  # read by transformers' FlashAttention calls


def test_mode_true_keeps_a_valid_cublas_setting_and_replaces_an_invalid_one(monkeypatch):
    monkeypatch.setenv("CUBLAS_WORKSPACE_CONFIG", ":16:8")
    seed_all(mode=True)
    assert os.environ["CUBLAS_WORKSPACE_CONFIG"] == ":16:8"
    monkeypatch.setenv("CUBLAS_WORKSPACE_CONFIG", ":0:0")
    seed_all(mode=True)
    assert os.environ["CUBLAS_WORKSPACE_CONFIG"] == ":4096:8"


def test_mode_false_leaves_determinism_the_user_turned_on():
    torch.use_deterministic_algorithms(True)
    torch.backends.cudnn.deterministic, torch.backends.cudnn.benchmark = True, False
    seed_all(mode=False)
    assert torch.are_deterministic_algorithms_enabled()
    assert torch.backends.cudnn.deterministic and not torch.backends.cudnn.benchmark
    assert "HCCL_DETERMINISTIC" not in os.environ and "CUBLAS_WORKSPACE_CONFIG" not in os.environ


def test_mode_false_does_not_turn_determinism_on():
    seed_all(mode=False)
    assert not torch.are_deterministic_algorithms_enabled()


def test_cuda_branch_seeds_every_device(monkeypatch):
    seed_all_devices = RecordingCalls()
    monkeypatch.setattr(torch.cuda, "manual_seed_all", seed_all_devices)
    seed_all(77)
    assert seed_all_devices.calls and all(call == (77,) for call in seed_all_devices.calls)


def test_seeding_does_not_initialise_cuda(monkeypatch):
    """A script may choose its GPU after seeding (guided diffusion sets CUDA_VISIBLE_DEVICES per rank in
    dist_util): seed_all neither asks CUDA whether it is there nor initialises it; the CUDA seed is queued."""
    for name in ("is_available", "device_count", "init", "_lazy_init"):
        monkeypatch.setattr(torch.cuda, name, RecordingCalls())
    seed_all(5)  # must not need a GPU either
    assert not any(getattr(torch.cuda, name).calls for name in ("is_available", "device_count", "init", "_lazy_init"))
    assert not torch.cuda.is_initialized()


def recording_torch_npu_stand_in() -> types.ModuleType:
    """A minimal stand-in for torch_npu: `torch_npu.npu.manual_seed_all` records its calls."""
    module = types.ModuleType("torch_npu")
    module.npu = types.SimpleNamespace(manual_seed_all=RecordingCalls(), manual_seed=RecordingCalls())
    return module


def test_npu_branch_seeds_every_npu_when_torch_npu_imports(monkeypatch):
    stand_in = recording_torch_npu_stand_in()
    monkeypatch.setitem(sys.modules, "torch_npu", stand_in)
    seed_all(99)
    assert stand_in.npu.manual_seed_all.calls == [(99,)]


def test_npu_branch_is_skipped_when_torch_npu_does_not_import(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch_npu", None)  # makes `import torch_npu` raise ImportError
    seed_all(3)
    assert os.environ["PYTHONHASHSEED"] == "3"


def test_dgl_generator_is_seeded_when_dgl_is_imported(monkeypatch):
    """DGL's neighbour samplers draw from its own C++ generator, which only `dgl.seed` seeds (recording stand-in:
    DGL is not installed here)."""
    stand_in = types.ModuleType("dgl")
    stand_in.seed = RecordingCalls()
    monkeypatch.setitem(sys.modules, "dgl", stand_in)
    seed_all(11)
    assert stand_in.seed.calls == [(11,)]


def test_rm_dropout_removes_dropout():
    x = torch.ones(1000)
    seed_all(rm_dropout=True)
    assert torch.equal(torch.nn.functional.dropout(x, 0.5, training=True), x)
    restore_dropout()
    assert not torch.equal(torch.nn.functional.dropout(x, 0.5, training=True), x)

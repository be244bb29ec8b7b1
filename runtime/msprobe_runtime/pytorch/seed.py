"""seed_all: pin every random number source of a PyTorch run (msprobe's API, stricter and complete)."""

from __future__ import annotations

import importlib
import os
import random

import torch

from msprobe_runtime.core.config import MAX_SEED
from msprobe_runtime.pytorch.dropout import remove_dropout

# Deterministic cuBLAS needs one of these workspace settings (set before the first cuBLAS call).
_CUBLAS_DETERMINISTIC = (":4096:8", ":16:8")


def seed_all(seed: int = 1234, mode: bool = False, rm_dropout: bool = False) -> None:
    """Seed random, PYTHONHASHSEED, NumPy, torch CPU/CUDA/NPU; `mode` adds deterministic kernels.

    `mode=True` turns on strict `torch.use_deterministic_algorithms(True)` (a non-deterministic kernel
    raises, naming itself), cuDNN deterministic with benchmark off, and the cuBLAS/HCCL/LCCL settings.
    `mode=False` leaves determinism switches as they are (msprobe would switch them off). `rm_dropout=True`
    makes every dropout a no-op (see msprobe_runtime.pytorch.dropout).
    """
    _check_arguments(seed, mode, rm_dropout)
    random.seed(seed)
    os.environ["PYTHONHASHSEED"] = str(seed)
    _seed_numpy(seed)
    torch.manual_seed(seed)
    if torch.cuda.is_available():
        torch.cuda.manual_seed_all(seed)
    npu = _torch_npu()
    if npu is not None:
        npu.npu.manual_seed_all(seed)
    if mode:
        _enable_determinism()
    if rm_dropout:
        remove_dropout()


def _check_arguments(seed, mode, rm_dropout) -> None:
    if not isinstance(seed, int) or isinstance(seed, bool):
        raise TypeError(f"seed_all: seed must be an integer in [0, {MAX_SEED}], got {seed!r}")
    if not 0 <= seed <= MAX_SEED:
        raise ValueError(f"seed_all: seed must be an integer in [0, {MAX_SEED}], got {seed}")
    for name, value in (("mode", mode), ("rm_dropout", rm_dropout)):
        if not isinstance(value, bool):
            raise TypeError(f"seed_all: {name} must be True or False, got {value!r}")


def _seed_numpy(seed: int) -> None:
    try:
        import numpy
    except ImportError:
        return
    numpy.random.seed(seed)


def _torch_npu():
    """The torch_npu module when it imports (Ascend), else None; never required."""
    try:
        return importlib.import_module("torch_npu")
    except (ImportError, OSError):  # absent, or installed without its CANN libraries
        return None


def _enable_determinism() -> None:
    if os.environ.get("CUBLAS_WORKSPACE_CONFIG") not in _CUBLAS_DETERMINISTIC:
        os.environ["CUBLAS_WORKSPACE_CONFIG"] = _CUBLAS_DETERMINISTIC[0]
    os.environ["HCCL_DETERMINISTIC"] = "true"
    os.environ["LCCL_DETERMINISTIC"] = "1"
    torch.use_deterministic_algorithms(True)
    torch.backends.cudnn.deterministic = True
    torch.backends.cudnn.benchmark = False

"""seed_all: pin every random number source of a PyTorch run (msprobe's API, stricter and complete)."""

from __future__ import annotations

import importlib
import os
import sys

import torch

from msprobe_runtime.core.seeding import check_seed_arguments, seed_python
from msprobe_runtime.pytorch.dropout import remove_dropout

# Deterministic cuBLAS needs one of these workspace settings (set before the first cuBLAS call).
_CUBLAS_DETERMINISTIC = (":4096:8", ":16:8")


def seed_all(seed: int = 1234, mode: bool = False, rm_dropout: bool = False) -> None:
    """Seed random, PYTHONHASHSEED, NumPy, torch CPU/CUDA/NPU, and DGL's generator when DGL is imported;
    `mode` adds deterministic kernels.

    `mode=True` turns on strict `torch.use_deterministic_algorithms(True)` (a non-deterministic kernel
    raises, naming itself), cuDNN deterministic with benchmark off, the cuBLAS/HCCL/LCCL settings, and
    `FLASH_ATTENTION_DETERMINISTIC=1`, which transformers reads at every FlashAttention call to pick the
    deterministic backward (torch's switch does not reach that kernel).
    `mode=False` leaves determinism switches as they are (msprobe would switch them off). `rm_dropout=True`
    makes every dropout a no-op (see msprobe_runtime.pytorch.dropout).
    """
    check_seed_arguments(seed, mode, rm_dropout)
    seed_python(seed)
    torch.manual_seed(seed)
    # Lazy: queued until CUDA initialises, so a script that picks its GPU after seeding (CUDA_VISIBLE_DEVICES
    # per rank, as guided diffusion's dist_util does) still gets it; `is_available()` would initialise CUDA here.
    torch.cuda.manual_seed_all(seed)
    npu = _torch_npu()
    if npu is not None:
        npu.npu.manual_seed_all(seed)
    dgl = sys.modules.get("dgl")  # its samplers draw from a C++ generator only `dgl.seed` seeds
    if dgl is not None and callable(getattr(dgl, "seed", None)):
        dgl.seed(seed)
    if mode:
        _enable_determinism()
    if rm_dropout:
        remove_dropout()


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
    os.environ["FLASH_ATTENTION_DETERMINISTIC"] = "1"
    torch.use_deterministic_algorithms(True)
    torch.backends.cudnn.deterministic = True
    torch.backends.cudnn.benchmark = False

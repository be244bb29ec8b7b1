"""seed_all for MindSpore: pin every random source of a MindSpore run (msprobe's API, stricter and complete).

msprobe's MindSpore `seed_all` leaves NumPy unseeded and always sets deterministic computation (off when
`mode=False`, overriding the user's choice); here NumPy is seeded and `mode=False` changes nothing. In a
mindnlp process, whose `torch` is mindtorch (a torch API on MindSpore with a generator of its own), that
generator is seeded too.
"""

from __future__ import annotations

import os
import sys
import warnings

import mindspore as ms

from msprobe_runtime.core.seeding import check_seed_arguments, seed_python
from msprobe_runtime.mindspore.dropout import remove_dropout


def seed_all(seed: int = 1234, mode: bool = False, rm_dropout: bool = False) -> None:
    """Seed random, PYTHONHASHSEED, NumPy and MindSpore (its global seed, which also seeds the dataset
    pipeline, and its default generator), and mindtorch's generator when mindnlp loaded it; `mode` adds
    determinism.

    `mode=True` turns on MindSpore's deterministic computation (`mindspore.set_deterministic(True)`, which
    also covers communication operators when called before `communication.init()`) and
    `HCCL_DETERMINISTIC=true`. `rm_dropout=True` makes every dropout a no-op (see ..mindspore.dropout).
    """
    check_seed_arguments(seed, mode, rm_dropout)
    seed_python(seed)
    ms.set_seed(seed)  # global seed: operators, initialisers and mindspore.dataset
    ms.manual_seed(seed)  # the default generator (mint's random functions, nn.MultiheadAttention's dropout)
    seed_mindtorch(seed)
    if mode:
        enable_determinism()
    if rm_dropout:
        remove_dropout()


def seed_mindtorch(seed: int) -> None:
    """Seed mindtorch's default generator (`torch.manual_seed` in a script that imported mindnlp: weights,
    `torch.rand*`, dropout), when mindtorch is loaded; it is not MindSpore's, so `set_seed` leaves it alone."""
    mindtorch = sys.modules.get("mindtorch")
    if mindtorch is not None:
        mindtorch.manual_seed(seed)


def enable_determinism() -> None:
    """Deterministic operators and collectives; a no-op when they are on already."""
    os.environ["HCCL_DETERMINISTIC"] = "true"
    if ms.get_context("deterministic") == "ON":
        return
    try:
        ms.set_deterministic(True)
    except RuntimeError:  # MindSpore allows one set_deterministic per process: it was set to False before
        warnings.warn("seed_all(mode=True): deterministic computation was switched off earlier in this process "
                      "(mindspore.set_deterministic(False)) and MindSpore cannot switch it again; call "
                      "seed_all before that", stacklevel=3)

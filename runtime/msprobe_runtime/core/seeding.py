"""The framework-free half of seed_all: argument checks and the Python-level random sources.

Each framework's `seed_all` calls `check_seed_arguments` first and `seed_python` next, then seeds its own
generators. Kept here so PyTorch and MindSpore give the same messages for the same mistakes.
"""

from __future__ import annotations

import os
import random

from msprobe_runtime.core.config import MAX_SEED


def check_seed_arguments(seed, mode, rm_dropout) -> None:
    """TypeError/ValueError naming the argument when seed is not an int in [0, 2**32-1] or a flag not a bool."""
    if not isinstance(seed, int) or isinstance(seed, bool):
        raise TypeError(f"seed_all: seed must be an integer in [0, {MAX_SEED}], got {seed!r}")
    if not 0 <= seed <= MAX_SEED:
        raise ValueError(f"seed_all: seed must be an integer in [0, {MAX_SEED}], got {seed}")
    for name, value in (("mode", mode), ("rm_dropout", rm_dropout)):
        if not isinstance(value, bool):
            raise TypeError(f"seed_all: {name} must be True or False, got {value!r}")


def seed_python(seed: int) -> None:
    """Seed `random`, set PYTHONHASHSEED and seed NumPy's global generator (when NumPy imports)."""
    random.seed(seed)
    os.environ["PYTHONHASHSEED"] = str(seed)
    try:
        import numpy
    except ImportError:
        return
    numpy.random.seed(seed)

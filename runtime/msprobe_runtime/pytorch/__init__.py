"""msprobe_runtime for PyTorch: the names instrumented scripts import."""

from msprobe_runtime.pytorch.debugger import PrecisionDebugger  # noqa: F401
from msprobe_runtime.pytorch.seed import seed_all  # noqa: F401

_CALLBACKS = ("MsprobeTrainerCallback", "MsprobeLightningCallback", "MsprobeMMEngineHook")  # built on first use: pytorch/callbacks.py


def __getattr__(name: str):
    if name in _CALLBACKS:
        from msprobe_runtime.pytorch import callbacks

        return getattr(callbacks, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

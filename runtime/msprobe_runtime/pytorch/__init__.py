"""msprobe_runtime for PyTorch: the names instrumented scripts import."""

from msprobe_runtime.pytorch.debugger import PrecisionDebugger  # noqa: F401
from msprobe_runtime.pytorch.seed import seed_all  # noqa: F401

# Built on first use (pytorch/callbacks.py): importing the runtime imports no trainer library.
_CALLBACKS = ("MsprobeTrainerCallback", "MsprobeLightningCallback", "MsprobeMMEngineHook", "MsprobeDetectron2Hook")


def __getattr__(name: str):
    if name in _CALLBACKS:
        from msprobe_runtime.pytorch import callbacks

        return getattr(callbacks, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

"""msprobe_runtime for PyTorch: the names instrumented scripts import."""

from msprobe_runtime.pytorch.debugger import PrecisionDebugger  # noqa: F401
from msprobe_runtime.pytorch.seed import seed_all  # noqa: F401

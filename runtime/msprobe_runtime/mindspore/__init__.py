"""msprobe_runtime for MindSpore: the names instrumented scripts import (msprobe.mindspore's API)."""

from msprobe_runtime.mindspore.callback import MsprobeStep  # noqa: F401
from msprobe_runtime.mindspore.debugger import PrecisionDebugger  # noqa: F401
from msprobe_runtime.mindspore.seed import seed_all  # noqa: F401

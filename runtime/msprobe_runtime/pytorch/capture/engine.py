"""Every backward pass, seen whole by capture: autograd's engine behind a thin stand-in.

Every way into a backward pass (`Tensor.backward`, `torch.autograd.backward` and `grad`, code that calls
the engine itself, as Megatron's pipeline schedules do) runs `Variable._execution_engine.run_backward`.
The stand-in calls `watch()` before the outermost pass of a thread (not before passes run inside it: a
reentrant checkpoint's) and, when the pass completes, the function that returned; everything else goes to
the engine as it is.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from torch.autograd.variable import Variable


class _Engine:
    """Autograd's engine, with `watch` called around each outermost backward pass."""

    __slots__ = ("engine", "watch", "running")

    def __init__(self, engine, watch: Callable[[], Callable[[], None] | None]):
        self.engine = engine
        self.watch = watch
        self.running = threading.local()  # whether this thread is inside a pass

    def run_backward(self, *args, **kwargs):
        if getattr(self.running, "pass_", False):
            return self.engine.run_backward(*args, **kwargs)
        finish = self.watch()
        self.running.pass_ = True
        try:
            result = self.engine.run_backward(*args, **kwargs)
        finally:
            self.running.pass_ = False
        if finish is not None:
            finish()
        return result

    def __getattr__(self, name: str):
        return getattr(self.engine, name)


def install(watch: Callable[[], Callable[[], None] | None]) -> None:
    """Put the stand-in in place, calling `watch` (once: a second call changes nothing)."""
    if not isinstance(Variable._execution_engine, _Engine):
        Variable._execution_engine = _Engine(Variable._execution_engine, watch)


def uninstall() -> None:
    """Put the engine back (unless somebody replaced the stand-in since)."""
    if isinstance(Variable._execution_engine, _Engine):
        Variable._execution_engine = Variable._execution_engine.engine

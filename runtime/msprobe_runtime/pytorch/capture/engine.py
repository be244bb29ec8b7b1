"""Every backward pass, seen whole by capture: autograd's engine behind a thin stand-in.

Every way into a backward pass (`Tensor.backward`, `torch.autograd.backward` and `grad`, code that calls
the engine itself, as Megatron's pipeline schedules do) runs `Variable._execution_engine.run_backward`.
The stand-in calls `watch()` before an outermost pass (not before a pass started while one runs on this
thread: a reentrant checkpoint's, also on an accelerator's autograd thread) and, when the pass completes,
the function that returned; everything else goes to the engine as it is.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch.autograd.variable import Variable

_graph_task = torch._C._current_graph_task_id  # >= 0 while this thread runs a backward pass


class _Engine:
    """Autograd's engine, with `watch` called around each outermost backward pass."""

    __slots__ = ("engine", "watch")

    def __init__(self, engine, watch: Callable[[], Callable[[], None] | None]):
        self.engine = engine
        self.watch = watch

    def run_backward(self, *args, **kwargs):
        finish = self.watch() if _graph_task() < 0 else None
        result = self.engine.run_backward(*args, **kwargs)
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

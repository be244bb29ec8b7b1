"""PrecisionDebugger for MindSpore: msprobe's capture API (start/stop/step, monitor, config.json), PyNative mode.

    debugger = PrecisionDebugger(config_path="config.json")
    for data, label in dataset.create_tuple_iterator():
        debugger.start(model=net)      # the model is needed at L0/mix (and for its primitives at L1)
        loss, grads = grad_fn(data, label)
        optimizer(grads)
        debugger.stop()
        debugger.step()

or `Model.train(..., callbacks=[MsprobeStep(debugger)])`. Same config schema and dump layout as the
PyTorch runtime (`"framework": "mindspore"` in dump.json); steps count from 0.

Graph mode: under GRAPH_MODE the network is compiled and runs as one graph, invisible to Python, so
nothing is captured (a message says so, once); in PyNative mode the calls inside `mindspore.jit`
functions and cells are compiled the same way and are missing from the dump, everything around them is
captured. The gradient probe needs PyNative mode too.
"""

from __future__ import annotations

import warnings

import mindspore as ms

from msprobe_runtime.core.debugger import StepDebugger, launcher_rank, model_chunks
from msprobe_runtime.mindspore.capture import api_wrap
from msprobe_runtime.mindspore.capture.api_wrap import STATE, PrimitiveHooks
from msprobe_runtime.mindspore.capture.cell_hooks import CellHooks
from msprobe_runtime.mindspore.capture.session import CaptureSession

GRAPH_MODE_MESSAGE = (
    "msprobe-kit: MindSpore runs in GRAPH_MODE: the network is compiled into one graph that Python never "
    "sees, so no API, cell or gradient is captured and nothing is dumped. Call "
    "mindspore.set_context(mode=mindspore.PYNATIVE_MODE) for the steps to debug (calls inside mindspore.jit "
    "functions are not captured in PyNative mode either; everything around them is).")


def current_rank() -> int:
    """This process's rank once mindspore.communication is initialised; before, msrun's RANK_ID; else 0."""
    from mindspore.communication import GlobalComm, get_rank

    return get_rank() if GlobalComm.INITED else launcher_rank("RANK_ID")


def graph_mode() -> bool:
    """True when MindSpore compiles whole networks (GRAPH_MODE)."""
    return ms.get_context("mode") == ms.GRAPH_MODE


def _warn_graph_mode(stacklevel: int) -> None:
    """Say that graph mode captures nothing, past the script's warning filters: training scripts often
    silence warnings (mindocr's `warnings.filterwarnings("ignore")`), and this one explains an empty dump."""
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        warnings.warn(GRAPH_MODE_MESSAGE, stacklevel=stacklevel)


class PrecisionDebugger(StepDebugger):
    """Captures API calls (L1), cell calls (L0) or both (mix) of chosen steps, msprobe-compatibly."""

    framework = "mindspore"
    state = STATE
    session_class = CaptureSession
    current_rank = staticmethod(current_rank)
    install = staticmethod(api_wrap.install)
    uninstall = staticmethod(api_wrap.uninstall)
    l0_needs_model = "level 'L0' captures cells: call start(model) with the network to capture"

    def __init__(self, config_path=None, task=None, dump_path=None, level=None, step=None):
        super().__init__(config_path, task, dump_path, level, step)
        self._warned_graph_mode = False

    # ---- capture -----------------------------------------------------------------------------
    def _attach(self, model) -> bool:
        if graph_mode():  # nothing to capture: the network runs as one compiled graph
            if not self._warned_graph_mode:
                _warn_graph_mode(stacklevel=4)  # at the user's start() call
                self._warned_graph_mode = True
            return False
        if model is not None:
            for prefix, cell in model_chunks(model, ms.nn.Cell, "mindspore.nn.Cell"):
                self._hook(cell, prefix)
        return True

    def _hook(self, cell, prefix: str) -> None:
        if id(cell) in self._hooks:
            return
        hooks = []
        if self.config.level in ("L0", "mix"):
            hooks.append(CellHooks(cell, prefix, self._hooked))
        hooks.append(PrimitiveHooks(cell, guards_only=self.config.level == "L0"))
        self._hooks[id(cell)] = hooks

    # ---- gradient probe ----------------------------------------------------------------------
    def monitor(self, optimizer) -> None:
        """Gradient probe (task grad_probe): grad_summary_{step}.csv per call of `optimizer` (msprobe's API), or
        of every optimizer in a cell (a TrainOneStepCell, a GAN's wrapper) or a list or tuple of them."""
        self._require_grad_probe()
        if graph_mode():
            _warn_graph_mode(stacklevel=3)
        from msprobe_runtime.mindspore.grad_probe import GradProbe

        if self._grad_probe is None:
            self._grad_probe = GradProbe(self.config)
        self._grad_probe.monitor(optimizer)

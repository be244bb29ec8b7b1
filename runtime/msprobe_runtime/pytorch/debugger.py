"""PrecisionDebugger: msprobe's capture API for PyTorch (start/stop/step, monitor, config.json).

    debugger = PrecisionDebugger(config_path="config.json")
    for batch in loader:
        debugger.start(model)          # model needed at L0/mix; start() alone suffices at L1
        loss = train_step(batch)
        debugger.stop()
        debugger.step()

or `with debugger.start(model): train_step(batch)` (stop and step on exit). Steps count from 0; only the
steps and ranks the config names are captured; each writes `{dump_path}/step{N}/rank{R}/`.
"""

from __future__ import annotations

import torch

from msprobe_runtime.core.debugger import StepDebugger, launcher_rank, model_chunks
from msprobe_runtime.pytorch.capture import api_wrap
from msprobe_runtime.pytorch.capture.api_wrap import STATE
from msprobe_runtime.pytorch.capture.module_hooks import ModuleHooks
from msprobe_runtime.pytorch.capture.session import CaptureSession


def current_rank() -> int:
    """This process's rank under torch.distributed; before it is initialised, torchrun's RANK; else 0."""
    distributed = torch.distributed
    if distributed.is_available() and distributed.is_initialized():
        return distributed.get_rank()
    return launcher_rank("RANK")


class PrecisionDebugger(StepDebugger):
    """Captures API calls (L1), module calls (L0) or both (mix) of chosen steps, msprobe-compatibly."""

    framework = "pytorch"
    state = STATE
    session_class = CaptureSession
    current_rank = staticmethod(current_rank)
    uninstall = staticmethod(api_wrap.uninstall)
    l0_needs_model = "level 'L0' captures modules: call start(model) with the model to capture"

    # ---- capture -----------------------------------------------------------------------------
    def install(self) -> None:
        """The API wrappers, at L1 and mix. At L0 they only copy pending tensors (statistics not yet
        computed: on a device, say) before an in-place change, and cost every call of a step (its
        optimizer's too) a Python function: the session puts them in place when it first keeps a tensor
        pending, so a CPU model at L0 never has them."""
        if self.config.level != "L0":
            api_wrap.install()

    def _attach(self, model) -> bool:
        if model is not None and self.config.level in ("L0", "mix"):
            for prefix, module in model_chunks(model, torch.nn.Module, "torch.nn.Module"):
                if id(module) not in self._hooks:
                    self._hooks[id(module)] = [ModuleHooks(module, prefix, self._hooked)]
        return True

    # ---- gradient probe ----------------------------------------------------------------------
    def monitor(self, model: torch.nn.Module | list | tuple) -> None:
        """Gradient probe (task grad_probe): write grad_summary_{step}.csv per optimizer step for `model` (or a
        list or tuple of models, as for start)."""
        self._require_grad_probe()
        from msprobe_runtime.pytorch.grad_probe import GradProbe

        if self._grad_probe is None:
            self._grad_probe = GradProbe(self.config, model)
        else:
            self._grad_probe.monitor(model)

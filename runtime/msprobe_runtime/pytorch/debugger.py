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

import os

import torch

from msprobe_runtime.core.config import ConfigError, DebuggerConfig, ensure_writable, load_config
from msprobe_runtime.core.dump_writer import wait_for_writes
from msprobe_runtime.pytorch.capture import api_wrap
from msprobe_runtime.pytorch.capture.api_wrap import STATE
from msprobe_runtime.pytorch.capture.module_hooks import ModuleHooks
from msprobe_runtime.pytorch.capture.session import CaptureSession


def current_rank() -> int:
    """This process's rank under torch.distributed; before it is initialised, the RANK that launchers such
    as torchrun set (so capture started before `init_process_group` does not put every rank in rank0); else 0."""
    distributed = torch.distributed
    if distributed.is_available() and distributed.is_initialized():
        return distributed.get_rank()
    rank = os.environ.get("RANK", "")
    return int(rank) if rank.isdigit() else 0


class PrecisionDebugger:
    """Captures API calls (L1), module calls (L0) or both (mix) of chosen steps, msprobe-compatibly."""

    def __init__(self, config_path=None, task=None, dump_path=None, level=None, step=None):
        self.config: DebuggerConfig = load_config(config_path, task=task, dump_path=dump_path, level=level,
                                                  step=step, framework="pytorch")
        ensure_writable(self.config.dump_path)
        self.current_step = 0
        self._session: CaptureSession | None = None
        self._hooks: dict[int, ModuleHooks] = {}
        self._grad_probe = None

    # ---- capture -----------------------------------------------------------------------------
    def start(self, model: torch.nn.Module | None = None) -> PrecisionDebugger:
        """Begin capturing the current step (if the config wants this step and rank); returns self."""
        config = self.config
        if config.task == "grad_probe":
            return self
        if model is not None and config.level in ("L0", "mix") and id(model) not in self._hooks:
            self._hooks[id(model)] = ModuleHooks(model)
        if config.level == "L0" and not self._hooks:
            raise ConfigError("level 'L0' captures modules: call start(model) with the model to capture")
        if self._session is not None or not config.wants_step(self.current_step):
            return self
        rank = current_rank()
        if not config.wants_rank(rank):
            return self
        if STATE.session is not None:
            raise RuntimeError("another PrecisionDebugger is capturing: stop it before starting this one")
        api_wrap.install()
        self._session = CaptureSession(config, self.current_step, rank)
        STATE.session = self._session
        return self

    def stop(self) -> None:
        """End the capture window and write the step's files (statistics cross to the host here, once)."""
        session, self._session = self._session, None
        if session is None:
            return
        if STATE.session is session:
            STATE.session = None
        STATE.depth = 1
        try:
            session.close()
        finally:
            STATE.depth = 0

    def step(self) -> None:
        """Finish the current step: stop a running capture and count one step."""
        self.stop()
        self.current_step += 1

    def __enter__(self) -> PrecisionDebugger:
        return self.start()

    def __exit__(self, *exc_info) -> None:
        self.step()

    # ---- gradient probe ----------------------------------------------------------------------
    def monitor(self, model: torch.nn.Module) -> None:
        """Gradient probe (task grad_probe): write grad_summary_{step}.csv per optimizer step for `model`."""
        if self.config.task != "grad_probe":
            raise ConfigError(f"monitor() needs \"task\": \"grad_probe\" in the config (task is '{self.config.task}')")
        from msprobe_runtime.pytorch.grad_probe import GradProbe

        if self._grad_probe is None:
            self._grad_probe = GradProbe(self.config, model)
        else:
            self._grad_probe.monitor(model)

    def close(self) -> None:
        """Stop capturing, wait for the files (async_dump), remove module hooks, finish the gradient probe."""
        self.stop()
        wait_for_writes()
        for hooks in self._hooks.values():
            hooks.remove()
        self._hooks.clear()
        if self._grad_probe is not None:
            self._grad_probe.close()
            self._grad_probe = None

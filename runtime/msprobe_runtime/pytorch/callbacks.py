"""Callbacks that run a PrecisionDebugger around every optimizer step of a library's training loop.

`MsprobeTrainerCallback(debugger)` goes in the `callbacks=` of transformers' `Trainer` (and of the trainers
built on it: `Seq2SeqTrainer`, TRL's), `MsprobeLightningCallback(debugger)` in those of Lightning's `Trainer`,
`MsprobeMMEngineHook(debugger)` in an mmengine `Runner`'s hooks (`runner.register_hook(...)`),
`MsprobeDetectron2Hook(debugger)` in a detectron2 trainer's (`trainer.register_hooks([...])`); msprobe-instrument
inserts them, as it inserts MindSpore's `MsprobeStep` for `Model.train`. One debugger
step is one optimizer step, with every micro-batch of gradient accumulation in it, as in a hand-written loop
wrapped by msprobe-instrument; evaluation, logging and checkpoints between steps are not captured. With
`"task": "grad_probe"` the callback also calls `debugger.monitor(model)` when training starts.

Each class subclasses its library's own callback class, so it is built on first use (this module's
`__getattr__`): importing msprobe_runtime.pytorch never imports transformers, Lightning, mmengine or detectron2.
"""

from __future__ import annotations

import sys
from functools import cache


class _DebuggedSteps:
    """The start/stop/step calls both callbacks make."""

    def __init__(self, debugger):
        super().__init__()
        self.debugger = debugger
        self._running = False

    def _train_begins(self, model) -> None:
        if self.debugger.config.task == "grad_probe":
            self.debugger.monitor(model)

    def _step_begins(self, model) -> None:
        if not self._running:
            self._running = True
            self.debugger.start(model=model)

    def _step_ends(self) -> None:
        self._running = False
        self.debugger.stop()
        self.debugger.step()

    def _train_ends(self) -> None:
        """Training stopped within a step (an exception, a limit): write what was captured, count no step."""
        if self._running:
            self._running = False
            self.debugger.stop()


@cache
def _trainer_callback() -> type:
    from transformers import TrainerCallback

    class MsprobeTrainerCallback(_DebuggedSteps, TrainerCallback):
        """transformers' TrainerCallback: capture from `on_step_begin` (before the step's first micro-batch)
        to `on_step_end` (after the optimizer step); in a trainer's own loop that calls only `on_step_end`, from
        one step's end to the next's (the first step is not captured, and the step numbers still match)."""

        def on_train_begin(self, args, state, control, model=None, **kwargs):
            self._train_begins(model)

        def on_step_begin(self, args, state, control, model=None, **kwargs):
            self._step_begins(model)

        def on_step_end(self, args, state, control, model=None, **kwargs):
            self._ends_only = getattr(self, "_ends_only", False) or not self._running
            self._step_ends()
            if self._ends_only:  # a loop that never signals a step's start (LLaMA-Factory's PPO): the next starts here
                self._step_begins(model)

        def on_train_end(self, args, state, control, **kwargs):
            self._train_ends()

    MsprobeTrainerCallback.__module__, MsprobeTrainerCallback.__qualname__ = __name__, "MsprobeTrainerCallback"
    return MsprobeTrainerCallback


def _lightning_bases() -> tuple[type, ...]:
    """The Callback classes of the Lightning packages imported (`lightning.pytorch` and `pytorch_lightning`
    are two packages, each checking for its own class); of one of them when neither is imported yet."""
    bases = tuple(sys.modules[name].Callback for name in ("lightning.pytorch", "pytorch_lightning")
                  if name in sys.modules)
    if bases:
        return bases
    try:
        from lightning.pytorch import Callback
    except ImportError:
        from pytorch_lightning import Callback
    return (Callback,)


@cache
def _lightning_callback(bases: tuple[type, ...]) -> type:
    class MsprobeLightningCallback(_DebuggedSteps, *bases):
        """Lightning's Callback: capture from the start of a training batch until the end of the batch in which
        the optimizer stepped (`on_before_optimizer_step`), so a step holds every accumulated batch. The batch
        and optimizer hooks take `*args`: Lightning 1.x passes `dataloader_idx` and `optimizer_idx` too."""

        def __init__(self, debugger):
            super().__init__(debugger)
            self._stepped = False

        def on_train_start(self, trainer, pl_module):
            self._train_begins(pl_module)

        def on_train_batch_start(self, trainer, pl_module, *args):
            self._step_begins(pl_module)

        def on_before_optimizer_step(self, trainer, pl_module, *args):
            self._stepped = True

        def on_train_batch_end(self, trainer, pl_module, *args):
            if self._stepped:
                self._stepped = False
                self._step_ends()

        def on_train_end(self, trainer, pl_module):
            self._train_ends()

    MsprobeLightningCallback.__module__ = __name__
    MsprobeLightningCallback.__qualname__ = "MsprobeLightningCallback"  # Lightning's state_key
    return MsprobeLightningCallback


@cache
def _mmengine_hook() -> type:
    from mmengine.hooks import Hook
    from mmengine.model import is_model_wrapper
    from torch.optim.optimizer import register_optimizer_step_post_hook

    class MsprobeMMEngineHook(_DebuggedSteps, Hook):
        """mmengine's Hook: capture from `before_train_iter` until the end of the iteration in which an optimizer
        stepped (an `OptimWrapper` with `accumulative_counts` steps every few iterations), before the other
        hooks' `after_train_iter` (EMA updates, logging): hence the highest priority."""

        priority = "VERY_HIGH"

        def __init__(self, debugger):
            super().__init__(debugger)
            self._stepped = False
            self._step_hook = None

        def before_train(self, runner):
            self._step_hook = register_optimizer_step_post_hook(self._optimizer_stepped)
            self._train_begins(self._model(runner))

        def before_train_iter(self, runner, batch_idx, data_batch=None):
            self._step_begins(self._model(runner))

        def after_train_iter(self, runner, batch_idx, data_batch=None, outputs=None):
            if self._stepped:
                self._stepped = False
                self._step_ends()

        def after_train(self, runner):
            if self._step_hook is not None:
                self._step_hook.remove()
            self._train_ends()

        def _optimizer_stepped(self, optimizer, args, kwargs):
            self._stepped = True

        @staticmethod
        def _model(runner):
            """The runner's model, out of its distributed wrapper (as the model is named in a script's own loop)."""
            return runner.model.module if is_model_wrapper(runner.model) else runner.model

    MsprobeMMEngineHook.__module__, MsprobeMMEngineHook.__qualname__ = __name__, "MsprobeMMEngineHook"
    return MsprobeMMEngineHook


@cache
def _detectron2_hook() -> type:
    from detectron2.engine import HookBase
    from torch.nn.parallel import DistributedDataParallel

    class MsprobeDetectron2Hook(_DebuggedSteps, HookBase):
        """detectron2's HookBase: capture from `before_step` to `after_step`, one iteration of `SimpleTrainer`/
        `AMPTrainer` (and `DefaultTrainer`, which runs one of them) being one optimizer step. When training begins
        it moves itself to the head of the trainer's hooks (`register_hooks` appends): its `after_step` then ends
        the capture before the others' (`LRScheduler`, `EvalHook` evaluating, `PeriodicCheckpointer`, writers)."""

        def before_train(self):
            hooks = getattr(self.trainer, "_hooks", None)
            if isinstance(hooks, list) and self in hooks:  # in the loop over the hooks: those after it keep their places
                hooks.insert(0, hooks.pop(hooks.index(self)))
            self._train_begins(self._model())

        def before_step(self):
            self._step_begins(self._model())

        def after_step(self):
            self._step_ends()

        def after_train(self):
            self._train_ends()

        def _model(self):
            """The trainer's model, out of its DistributedDataParallel (`create_ddp_model`)."""
            model = self.trainer.model
            return model.module if isinstance(model, DistributedDataParallel) else model

    MsprobeDetectron2Hook.__module__, MsprobeDetectron2Hook.__qualname__ = __name__, "MsprobeDetectron2Hook"
    return MsprobeDetectron2Hook


def __getattr__(name: str) -> type:
    if name == "MsprobeTrainerCallback":
        return _trainer_callback()
    if name == "MsprobeMMEngineHook":
        return _mmengine_hook()
    if name == "MsprobeLightningCallback":
        return _lightning_callback(_lightning_bases())
    if name == "MsprobeDetectron2Hook":
        return _detectron2_hook()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

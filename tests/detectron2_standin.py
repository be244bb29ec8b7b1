"""A stand-in for detectron2's training engine, clearly not the real one: detectron2 is not on PyPI (it builds
from source with its C++ ops), so the runtime's MsprobeDetectron2Hook is tested against this copy of the
parts it relies on, written after detectron2/engine/train_loop.py (v0.6 to main): `HookBase` with `trainer`
set by `register_hooks` as a weak proxy, hooks run in their list's order, `TrainerBase.train` calling
before_train / (before_step, run_step, after_step) per iteration / after_train, and `SimpleTrainer.run_step`
taking one batch, its loss dict summed, backward, then `optimizer.step()`."""

from __future__ import annotations

import sys
import types
import weakref


class HookBase:
    trainer = None

    def before_train(self):
        pass

    def after_train(self):
        pass

    def before_step(self):
        pass

    def after_backward(self):
        pass

    def after_step(self):
        pass


class TrainerBase:
    def __init__(self):
        self._hooks = []
        self.iter = self.start_iter = self.max_iter = 0

    def register_hooks(self, hooks):
        hooks = [h for h in hooks if h is not None]
        for h in hooks:
            assert isinstance(h, HookBase)
            h.trainer = weakref.proxy(self)
        self._hooks.extend(hooks)

    def train(self, start_iter, max_iter):
        self.iter = self.start_iter = start_iter
        self.max_iter = max_iter
        try:
            self._each("before_train")
            for self.iter in range(start_iter, max_iter):
                self._each("before_step")
                self.run_step()
                self._each("after_step")
            self.iter += 1
        finally:
            self._each("after_train")

    def _each(self, method):
        for h in self._hooks:
            getattr(h, method)()


class SimpleTrainer(TrainerBase):
    def __init__(self, model, data_loader, optimizer):
        super().__init__()
        model.train()
        self.model, self.data_loader, self.optimizer = model, data_loader, optimizer
        self._data_loader_iter = iter(data_loader)

    def run_step(self):
        data = next(self._data_loader_iter)
        loss_dict = self.model(data)
        losses = sum(loss_dict.values())
        self.optimizer.zero_grad()
        losses.backward()
        self._each("after_backward")
        self.optimizer.step()


def install(monkeypatch) -> None:
    """Make `detectron2.engine` this stand-in for one test."""
    engine = types.ModuleType("detectron2.engine")
    engine.HookBase, engine.TrainerBase, engine.SimpleTrainer = HookBase, TrainerBase, SimpleTrainer
    package = types.ModuleType("detectron2")
    package.engine = engine
    monkeypatch.setitem(sys.modules, "detectron2", package)
    monkeypatch.setitem(sys.modules, "detectron2.engine", engine)

"""MsprobeDetectron2Hook against a stand-in of detectron2's training engine (tests/detectron2_standin.py:
detectron2 is not on PyPI): one debugger step is one trainer iteration, the hook runs first among the
trainer's hooks, capture leaves training bit-identical."""

from __future__ import annotations

import json

import detectron2_standin
import pytest
import torch
import torch.nn.functional as F
from capture_support import VOCAB, TinyTransformer, restore_torch, write_config  # noqa: F401
from msprobe_runtime.pytorch import PrecisionDebugger, callbacks

STEPS = 3


@pytest.fixture(autouse=True)
def standin_detectron2(monkeypatch):
    detectron2_standin.install(monkeypatch)
    callbacks._detectron2_hook.cache_clear()
    yield
    callbacks._detectron2_hook.cache_clear()


class LanguageModel(torch.nn.Module):
    """A detectron2 model: called with a batch, it returns a dict of losses."""

    def __init__(self):
        super().__init__()
        self.net = TinyTransformer(blocks=1)

    def forward(self, tokens):
        return {"loss_lm": F.cross_entropy(self.net(tokens).reshape(-1, VOCAB), tokens.reshape(-1))}


class Recorder(detectron2_standin.HookBase):
    """A later hook (detectron2's EvalHook evaluates in after_step): was capture still on when it ran?"""

    def __init__(self, debugger):
        self.debugger, self.capturing = debugger, []

    def after_step(self):
        self.capturing.append(self.debugger._session is not None)


def _train(hooks=()) -> torch.nn.Module:
    torch.manual_seed(0)
    model = LanguageModel()
    rows = torch.randint(0, VOCAB, (STEPS * 2, 8), generator=torch.Generator().manual_seed(0))
    trainer = detectron2_standin.SimpleTrainer(model, torch.utils.data.DataLoader(rows, batch_size=2),
                                               torch.optim.AdamW(model.parameters(), lr=1e-2))
    trainer.register_hooks(list(hooks))
    trainer.train(0, STEPS)
    return model


def test_hook_captures_each_iteration_as_a_step_before_the_other_hooks_step_end(tmp_path):
    from msprobe_runtime.pytorch import MsprobeDetectron2Hook

    debugger = PrecisionDebugger(config_path=write_config(tmp_path, level="L0", step=[0, 1, 2]))
    hook = MsprobeDetectron2Hook(debugger)
    assert isinstance(hook, detectron2_standin.HookBase)
    later = Recorder(debugger)
    _train([later, hook])  # registered last, as msprobe-instrument adds it: it moves itself first
    debugger.close()
    assert sorted(path.name for path in (tmp_path / "dump").iterdir()) == ["step0", "step1", "step2"]
    data = json.loads((tmp_path / "dump" / "step1" / "rank0" / "dump.json").read_text())["data"]
    assert "Module.net.head.Linear.forward.0" in data
    assert debugger.current_step == STEPS
    assert later.capturing == [False] * STEPS


def test_capture_through_the_hook_leaves_training_bit_identical(tmp_path):
    from msprobe_runtime.pytorch import MsprobeDetectron2Hook

    plain = _train().state_dict()
    debugger = PrecisionDebugger(config_path=write_config(tmp_path, level="mix"))
    captured = _train([MsprobeDetectron2Hook(debugger)]).state_dict()
    debugger.close()
    assert (tmp_path / "dump" / "step2" / "rank0" / "dump.json").is_file()
    assert all(torch.equal(plain[name], captured[name]) for name in plain)


def test_hook_monitors_the_model_for_the_gradient_probe(tmp_path):
    from msprobe_runtime.pytorch import MsprobeDetectron2Hook

    debugger = PrecisionDebugger(config_path=write_config(tmp_path, task="grad_probe", section={"grad_level": "L0"}))
    _train([MsprobeDetectron2Hook(debugger)])
    debugger.close()  # the summaries are written on a background thread
    assert len(list(tmp_path.rglob("grad_summary_*.csv"))) == STEPS

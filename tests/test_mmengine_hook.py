"""MsprobeMMEngineHook with the real mmengine: a Runner trains a tiny transformer on the CPU with gradient
accumulation (OptimWrapper's `accumulative_counts`); one debugger step must be one optimizer step."""

from __future__ import annotations

import json

import pytest
import torch
import torch.nn.functional as F
from capture_support import VOCAB, TinyTransformer, restore_torch, write_config  # noqa: F401
from msprobe_runtime.pytorch import PrecisionDebugger

mmengine = pytest.importorskip("mmengine", reason="mmengine is not installed (pip install -e '.[trainers]')")
from mmengine.model import BaseModel  # noqa: E402
from mmengine.runner import Runner  # noqa: E402

STEPS, ACCUMULATE = 3, 2


class LanguageModel(BaseModel):
    """An mmengine model: `forward(..., mode="loss")` returns its losses."""

    def __init__(self):
        super().__init__()
        self.net = TinyTransformer(blocks=1)

    def forward(self, tokens, mode="loss"):
        return {"loss": F.cross_entropy(self.net(tokens).reshape(-1, VOCAB), tokens.reshape(-1))}


class Tokens(torch.utils.data.Dataset):
    def __init__(self):
        self.rows = torch.randint(0, VOCAB, (16, 8), generator=torch.Generator().manual_seed(0))

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, index):
        return {"tokens": self.rows[index]}


def _train(folder, hooks=None) -> torch.nn.Module:
    torch.manual_seed(0)
    model = LanguageModel()
    loader = torch.utils.data.DataLoader(Tokens(), batch_size=2)
    runner = Runner(model=model, work_dir=str(folder / "work"), train_dataloader=loader,
                    optim_wrapper={"optimizer": torch.optim.AdamW(model.parameters(), lr=1e-2),
                                   "accumulative_counts": ACCUMULATE},
                    train_cfg={"by_epoch": False, "max_iters": STEPS * ACCUMULATE},
                    default_hooks={"checkpoint": None, "logger": None}, custom_hooks=hooks,
                    randomness={"seed": 0}, log_level="ERROR")
    runner.train()
    return model


def _debugger(folder, **fields) -> PrecisionDebugger:
    return PrecisionDebugger(config_path=write_config(folder, level="L0", step=[0, 1, 2, 3], **fields))


def test_hook_captures_each_optimizer_step_with_its_accumulated_iterations(tmp_path):
    from msprobe_runtime.pytorch import MsprobeMMEngineHook

    debugger = _debugger(tmp_path)
    hook = MsprobeMMEngineHook(debugger)
    assert isinstance(hook, mmengine.hooks.Hook)
    _train(tmp_path, [hook])
    debugger.close()
    assert sorted(path.name for path in (tmp_path / "dump").iterdir()) == ["step0", "step1", "step2"]
    for step in range(STEPS):  # the step's two iterations, the model called once in each
        data = json.loads((tmp_path / "dump" / f"step{step}" / "rank0" / "dump.json").read_text())["data"]
        assert sorted(name for name in data if ".head.Linear.forward." in name) == [
            "Module.net.head.Linear.forward.0", "Module.net.head.Linear.forward.1"]
    assert debugger.current_step == STEPS


def test_capture_through_the_hook_leaves_training_bit_identical(tmp_path):
    from msprobe_runtime.pytorch import MsprobeMMEngineHook

    plain = _train(tmp_path / "plain").state_dict()
    debugger = PrecisionDebugger(config_path=write_config(tmp_path / "mix", level="mix"))
    captured = _train(tmp_path / "mix", [MsprobeMMEngineHook(debugger)]).state_dict()
    debugger.close()
    assert (tmp_path / "mix" / "dump" / "step2" / "rank0" / "dump.json").is_file()
    assert all(torch.equal(plain[name], captured[name]) for name in plain)


def test_hook_monitors_the_model_for_the_gradient_probe(tmp_path):
    from msprobe_runtime.pytorch import MsprobeMMEngineHook

    debugger = PrecisionDebugger(config_path=write_config(tmp_path, task="grad_probe", section={"grad_level": "L0"}))
    _train(tmp_path, [MsprobeMMEngineHook(debugger)])
    debugger.close()
    summaries = sorted((tmp_path / "dump" / "rank0").glob("grad_summary_*.csv"))
    assert [path.name for path in summaries] == [f"grad_summary_{step}.csv" for step in range(STEPS)]
    assert "net.head.weight" in summaries[0].read_text()

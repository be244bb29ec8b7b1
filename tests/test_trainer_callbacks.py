"""The PyTorch callbacks for library training loops, with the real libraries: transformers' Trainer and
Lightning's Trainer (both packages, `lightning.pytorch` and `pytorch_lightning`) train a tiny transformer
on the CPU with gradient accumulation; one debugger step must be one optimizer step."""

from __future__ import annotations

import json

import pytest
import torch
import torch.nn.functional as F
from capture_support import VOCAB, TinyTransformer, restore_torch, write_config  # noqa: F401
from msprobe_runtime.pytorch import PrecisionDebugger

transformers = pytest.importorskip("transformers", reason="transformers is not installed (pip install -e '.[trainers]')")
lightning = pytest.importorskip("lightning", reason="lightning is not installed (pip install -e '.[trainers]')")
pytorch_lightning = pytest.importorskip("pytorch_lightning", reason="pytorch_lightning is not installed")

STEPS, ACCUMULATE = 3, 2


class LanguageModel(torch.nn.Module):
    """A Hugging Face style model: keyword inputs, a dict with the loss out."""

    def __init__(self):
        super().__init__()
        self.net = TinyTransformer(blocks=1)

    def forward(self, input_ids, labels):
        logits = self.net(input_ids)
        return {"loss": F.cross_entropy(logits.reshape(-1, VOCAB), labels.reshape(-1)), "logits": logits}


def _tokens(count: int = 16) -> torch.Tensor:
    return torch.randint(0, VOCAB, (count, 8), generator=torch.Generator().manual_seed(0))


def _train_hf(folder, callbacks) -> torch.nn.Module:
    transformers.set_seed(0)
    model = LanguageModel()
    data = [{"input_ids": row, "labels": row} for row in _tokens()]
    args = transformers.TrainingArguments(
        output_dir=str(folder / "out"), max_steps=STEPS, per_device_train_batch_size=2,
        gradient_accumulation_steps=ACCUMULATE, learning_rate=1e-2, report_to="none", save_strategy="no",
        logging_strategy="no", use_cpu=True, disable_tqdm=True, dataloader_num_workers=0, seed=0)
    transformers.Trainer(model=model, args=args, train_dataset=data, callbacks=callbacks).train()
    return model


class LitModel:
    """A LightningModule of the given package around the tiny transformer."""

    @staticmethod
    def of(package):
        class Lit(package.LightningModule):
            def __init__(self):
                super().__init__()
                self.net = TinyTransformer(blocks=1)

            def training_step(self, batch, batch_idx):
                (tokens,) = batch
                return F.cross_entropy(self.net(tokens).reshape(-1, VOCAB), tokens.reshape(-1))

            def configure_optimizers(self):
                return torch.optim.AdamW(self.parameters(), lr=1e-2)

            def train_dataloader(self):
                return torch.utils.data.DataLoader(torch.utils.data.TensorDataset(_tokens()), batch_size=2)

        return Lit()


def _train_lightning(package, callbacks) -> torch.nn.Module:
    torch.manual_seed(0)
    model = LitModel.of(package)
    trainer = package.Trainer(max_steps=STEPS, accumulate_grad_batches=ACCUMULATE, accelerator="cpu", devices=1,
                              logger=False, enable_checkpointing=False, enable_progress_bar=False,
                              enable_model_summary=False, callbacks=callbacks)
    trainer.fit(model)
    return model


def _forward_calls(folder, step: int, module: str) -> list[str]:
    data = json.loads((folder / "dump" / f"step{step}" / "rank0" / "dump.json").read_text())["data"]
    return sorted(name for name in data if module in name and ".forward." in name)


def _debugger(folder, **fields) -> PrecisionDebugger:
    return PrecisionDebugger(config_path=write_config(folder, level="L0", step=[0, 1, 2, 3], **fields))


def test_trainer_callback_captures_each_optimizer_step_with_its_micro_batches(tmp_path):
    from msprobe_runtime.pytorch import MsprobeTrainerCallback

    debugger = _debugger(tmp_path)
    callback = MsprobeTrainerCallback(debugger)
    assert isinstance(callback, transformers.TrainerCallback)
    _train_hf(tmp_path, [callback])
    debugger.close()
    assert sorted(path.name for path in (tmp_path / "dump").iterdir()) == ["step0", "step1", "step2"]
    for step in range(STEPS):  # the step's two micro-batches, each model call once
        assert _forward_calls(tmp_path, step, ".head.Linear.") == [
            "Module.net.head.Linear.forward.0", "Module.net.head.Linear.forward.1"]
    assert debugger.current_step == STEPS


def test_trainer_callback_in_a_loop_that_only_ends_steps(tmp_path):
    """A trainer's own loop that calls `on_step_end` but never `on_step_begin` (LLaMA-Factory's PPO trainer):
    each step is captured from the previous step's end; the first is not, and the step numbers still match."""
    from msprobe_runtime.pytorch import MsprobeTrainerCallback

    debugger = _debugger(tmp_path)
    callback = MsprobeTrainerCallback(debugger)
    model = LanguageModel()
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-2)
    for tokens in _tokens(2 * STEPS).split(2):
        model(input_ids=tokens, labels=tokens)["loss"].backward()
        optimizer.step()
        callback.on_step_end(None, None, None, model=model)
    callback.on_train_end(None, None, None)
    debugger.close()
    folders = sorted(path.name for path in (tmp_path / "dump").iterdir())
    assert folders[:2] == ["step1", "step2"]  # (step3: what ran after the last step's end, at the end of training)
    for step in (1, 2):
        assert _forward_calls(tmp_path, step, ".head.Linear.") == ["Module.net.head.Linear.forward.0"]
    assert debugger.current_step == STEPS


@pytest.mark.parametrize("package", [lightning.pytorch, pytorch_lightning], ids=["lightning", "pytorch_lightning"])
def test_lightning_callback_captures_each_optimizer_step_with_its_accumulated_batches(tmp_path, package):
    from msprobe_runtime.pytorch import MsprobeLightningCallback

    debugger = _debugger(tmp_path)
    callback = MsprobeLightningCallback(debugger)
    assert isinstance(callback, lightning.pytorch.Callback) and isinstance(callback, pytorch_lightning.Callback)
    _train_lightning(package, [callback])
    debugger.close()
    assert sorted(path.name for path in (tmp_path / "dump").iterdir()) == ["step0", "step1", "step2"]
    for step in range(STEPS):
        assert _forward_calls(tmp_path, step, ".head.Linear.") == [
            "Module.net.head.Linear.forward.0", "Module.net.head.Linear.forward.1"]
    assert debugger.current_step == STEPS


def test_lightning_callback_takes_the_hook_arguments_of_lightning_1(tmp_path):
    """Lightning 1.x passes `dataloader_idx` to the batch hooks and `optimizer_idx` to `on_before_optimizer_step`
    (latent-diffusion pins 1.4): the callback takes them as it takes 2.x's."""
    from msprobe_runtime.pytorch import MsprobeLightningCallback

    debugger = _debugger(tmp_path)
    callback = MsprobeLightningCallback(debugger)
    model = LanguageModel()
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-2)
    callback.on_train_start(None, model)
    for batch_idx, tokens in enumerate(_tokens(STEPS).split(1)):
        callback.on_train_batch_start(None, model, tokens, batch_idx, 0)
        model(input_ids=tokens, labels=tokens)["loss"].backward()
        callback.on_before_optimizer_step(None, model, optimizer, 0)
        optimizer.step()
        callback.on_train_batch_end(None, model, None, tokens, batch_idx, 0)
    callback.on_train_end(None, model)
    debugger.close()
    assert sorted(path.name for path in (tmp_path / "dump").iterdir()) == ["step0", "step1", "step2"]
    assert debugger.current_step == STEPS


def test_capture_through_the_callbacks_leaves_training_bit_identical(tmp_path):
    from msprobe_runtime.pytorch import MsprobeLightningCallback, MsprobeTrainerCallback

    plain = _train_hf(tmp_path / "plain", None).state_dict()
    debugger = PrecisionDebugger(config_path=write_config(tmp_path / "hf", level="mix"))
    captured = _train_hf(tmp_path / "hf", [MsprobeTrainerCallback(debugger)]).state_dict()
    debugger.close()
    assert (tmp_path / "hf" / "dump" / "step2" / "rank0" / "dump.json").is_file()
    assert all(torch.equal(plain[name], captured[name]) for name in plain)

    plain = _train_lightning(lightning.pytorch, None).state_dict()
    debugger = PrecisionDebugger(config_path=write_config(tmp_path / "lightning", level="mix"))
    captured = _train_lightning(lightning.pytorch, [MsprobeLightningCallback(debugger)]).state_dict()
    debugger.close()
    assert (tmp_path / "lightning" / "dump" / "step2" / "rank0" / "dump.json").is_file()
    assert all(torch.equal(plain[name], captured[name]) for name in plain)


def test_callbacks_monitor_the_model_for_the_gradient_probe(tmp_path):
    from msprobe_runtime.pytorch import MsprobeLightningCallback, MsprobeTrainerCallback

    debugger = PrecisionDebugger(config_path=write_config(tmp_path / "hf", task="grad_probe",
                                                          section={"grad_level": "L0"}))
    _train_hf(tmp_path / "hf", [MsprobeTrainerCallback(debugger)])
    debugger.close()
    summaries = sorted((tmp_path / "hf" / "dump" / "rank0").glob("grad_summary_*.csv"))
    assert [path.name for path in summaries] == [f"grad_summary_{step}.csv" for step in range(STEPS)]
    assert "net.head.weight" in summaries[0].read_text()

    debugger = PrecisionDebugger(config_path=write_config(tmp_path / "lightning", task="grad_probe",
                                                          section={"grad_level": "L0"}))
    _train_lightning(lightning.pytorch, [MsprobeLightningCallback(debugger)])
    debugger.close()
    summaries = sorted((tmp_path / "lightning" / "dump" / "rank0").glob("grad_summary_*.csv"))
    assert [path.name for path in summaries] == [f"grad_summary_{step}.csv" for step in range(STEPS)]


def test_importing_the_runtime_imports_no_trainer_library():
    import subprocess
    import sys

    code = ("import sys, msprobe_runtime.pytorch; print(any(name in sys.modules for name in "
            "('transformers', 'lightning', 'pytorch_lightning', 'mmengine', 'detectron2')))")
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout == "False\n"

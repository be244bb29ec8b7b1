"""Scripts that import mindnlp: their `torch` is mindtorch, a torch API running on MindSpore, so lint gives
MindSpore's advice and the instrument imports MindSpore's runtime and adds no PyTorch trainer callback.
(mindnlp itself does not install against this MindSpore; the runtime side is tested with a stand-in in
test_mindspore_runtime.py.)"""

from __future__ import annotations

from msprobe_rewriter.instrument import Options, instrument_text
from msprobe_rewriter.instrument.markers import strip
from msprobe_rewriter.lint.engine import lint_source
from msprobe_rewriter.rules import RULES_BY_NAME
from msprobe_rewriter.rules.no_deterministic_algos import MINDSPORE_MESSAGE

SFT_SCRIPT = """\
import mindnlp
import torch
from transformers import AutoModelForCausalLM, Trainer, TrainingArguments


def main():
    model = AutoModelForCausalLM.from_pretrained("Qwen/Qwen2.5-0.5B", torch_dtype=torch.float16)
    trainer = Trainer(model=model, args=TrainingArguments(output_dir="out"), train_dataset=dataset)
    trainer.train()


if __name__ == "__main__":
    main()
"""


def test_lint_asks_for_mindspores_deterministic_switch():
    result = lint_source("train.py", SFT_SCRIPT.encode(), [RULES_BY_NAME["no-deterministic-algos"]])
    assert [f.message for f in result.findings] == [MINDSPORE_MESSAGE]


def test_instrument_seeds_through_mindspores_runtime_and_adds_no_pytorch_callback():
    out, notes = instrument_text("/project/train.py", SFT_SCRIPT, Options())
    out = strip(out)
    assert "from msprobe_runtime.mindspore import seed_all" in out
    assert "msprobe_runtime.pytorch" not in out and "Callback" not in out and "PrecisionDebugger" not in out
    assert any("trains mindtorch modules on MindSpore" in note for note in notes)

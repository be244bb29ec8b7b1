"""Scripts that import mindnlp: their `torch` is mindtorch, a torch API running on MindSpore, so lint gives
MindSpore's advice and the instrument imports MindSpore's runtime and adds no PyTorch trainer callback.
(mindnlp itself does not install against this MindSpore; the runtime side is tested with a stand-in in
test_mindspore_runtime.py.)"""

from __future__ import annotations

import textwrap

from msprobe_rewriter.instrument import Options, instrument_text
from msprobe_rewriter.instrument.markers import strip
from msprobe_rewriter.lint.engine import lint_source
from msprobe_rewriter.rules import RULES_BY_NAME
from msprobe_rewriter.rules.no_deterministic_algos import MINDSPORE_MESSAGE
from project_helpers import lint_findings, write

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


def test_a_module_of_a_package_importing_mindnlp_runs_on_mindspore(tmp_path):
    """mindnlp's ocr/finetune/train_full.py imports torch and `from .dataset import ...`: it runs as a module of the
    mindnlp package (`python -m`), whose `__init__` imports mindtorch first, so its `torch` is MindSpore's. The same
    file outside such a package gets PyTorch's advice."""
    script = """\
        import torch
        from .dataset import OCRDataset

        if __name__ == "__main__":
            model = torch.nn.Linear(4, 2)
            optimizer = torch.optim.AdamW(model.parameters())
            model(OCRDataset()[0]).sum().backward()
            optimizer.step()
        """
    root = write(tmp_path, {"mindnlp/__init__.py": "import mindtorch\n", "mindnlp/ocr/__init__.py": "",
                            "mindnlp/ocr/finetune/__init__.py": "", "mindnlp/ocr/finetune/dataset.py": "",
                            "mindnlp/ocr/finetune/train_full.py": script,
                            "plain/__init__.py": "", "plain/dataset.py": "", "plain/train_full.py": script})
    inside = lint_findings(root / "mindnlp/ocr/finetune/train_full.py", "no-deterministic-algos")
    outside = lint_findings(root / "plain/train_full.py", "no-deterministic-algos")
    assert [f.message for f in inside] == [MINDSPORE_MESSAGE]
    assert [f.message for f in outside] != [MINDSPORE_MESSAGE] and len(outside) == 1
    out, _ = instrument_text(str(root / "mindnlp/ocr/finetune/train_full.py"), textwrap.dedent(script), Options())
    assert "from msprobe_runtime.mindspore import seed_all" in strip(out)


def test_mindnlp_core_optimizers_and_gradient_functions_train(tmp_path):
    """mindnlp.core (mindtorch's torch API under its former name): `value_and_grad` from it computes a training
    step's gradients and `mindnlp.core.optim`'s optimizers step, whatever their names."""
    script = tmp_path / "finetune.py"
    script.write_text(textwrap.dedent("""\
        from mindnlp.core import value_and_grad
        from mindnlp.core.optim import AdamW

        model = build()
        updater = AdamW(model.parameters(), lr=5e-5)
        grad_fn = value_and_grad(lambda batch: model(**batch).loss, model.parameters())
        for batch in loader:
            grad_fn(batch)
            updater.step()
        """))
    found = lint_findings(script, "seed-missing", "no-deterministic-algos")
    assert [(f.name, f.line) for f in found] == [("seed-missing", 7), ("no-deterministic-algos", 7)]
    assert found[1].message == MINDSPORE_MESSAGE

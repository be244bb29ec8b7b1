"""Determinism switched on only under a determinism flag nothing here sets (MSP104, MSP602), training inherited from
a project base class, and files named for evaluation that train."""

from __future__ import annotations

import ast

from msprobe_rewriter.context import FileContext
from project_helpers import lint, lint_findings, write

PYPROJECT = "[project]\nname = 'demo'\n"
STRATEGY = """\
import deepspeed
import transformers


class Strategy:
    def __init__(self, seed=42, full_determinism=False):
        self.seed = seed
        self.full_determinism = full_determinism

    def setup_distributed(self):
        if self.full_determinism:
            transformers.enable_full_determinism(self.seed)
        else:
            transformers.set_seed(self.seed)
        deepspeed.init_distributed()


def get_strategy(args):
    return Strategy(seed=args.seed, full_determinism=getattr(args, "full_determinism", False))
"""
TRAIN = """\
import torch

from strategy import get_strategy


def train(args):
    strategy = get_strategy(args)
    strategy.setup_distributed()
    model = torch.nn.Linear(4, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for x in torch.randn(3, 2, 4):
        model(x).sum().backward()
        optimizer.step()


if __name__ == "__main__":
    train(parse())
"""


def test_a_helper_switching_determinism_on_only_under_its_flag_is_reported(tmp_path):
    """OpenRLHF's DeepspeedStrategy.setup_distributed calls `enable_full_determinism` only `if
    self.full_determinism:`, off unless `--train.full_determinism_enable` is given: the script is told at the call,
    naming the helper's flag; the helper's start of communication too. Unconditionally, nothing is reported."""
    root = write(tmp_path, {"pyproject.toml": PYPROJECT, "strategy.py": STRATEGY, "train.py": TRAIN})
    found = lint_findings(root / "train.py", "no-deterministic-algos")
    assert [(f.line, f.severity) for f in found] == [(8, "warning")]
    assert "`strategy.setup_distributed(...)` switches deterministic kernels on only when `self.full_determinism` " \
           "(strategy.py:11) is true" in found[0].message
    comm = lint_findings(root / "strategy.py", "dist-no-deterministic-comm")
    assert [(f.line, f.severity) for f in comm] == [(15, "warning")]
    assert "HCCL_DETERMINISTIC is set before it only when `self.full_determinism` (line 11) is true" in comm[0].message
    (root / "strategy.py").write_text(STRATEGY.replace("if self.full_determinism:", "if True:"))
    assert lint(root / "train.py", "no-deterministic-algos") == []
    assert lint(root / "strategy.py", "dist-no-deterministic-comm") == []


def test_hccl_set_only_under_an_option_off_by_default_is_reported(tmp_path):
    """A switch under `--deterministic` (store_true) does not run by default: the init call is reported, saying so."""
    root = write(tmp_path, {"train.py": """\
        import argparse
        import os

        import torch.distributed as dist

        parser = argparse.ArgumentParser()
        parser.add_argument("--deterministic", action="store_true")
        args = parser.parse_args()
        if args.deterministic:
            os.environ["HCCL_DETERMINISTIC"] = "true"
        dist.init_process_group("hccl")
        """})
    found = lint_findings(root / "train.py", "dist-no-deterministic-comm")
    assert [f.line for f in found] == [11]
    assert "only when `args.deterministic` (line 9), false by default" in found[0].message


BASE_TRAINER = """\
import torch


class BaseTrainer:
    def __init__(self, args, model):
        self.model = model
        self.optimizer = torch.optim.AdamW(model.parameters())

    def fit(self):
        for batch in self.loader:
            self.model(batch).sum().backward()
            self.optimizer.step()
"""
HELPER = """\
import torch


def set_seed(seed, full_determinism=False):
    torch.manual_seed(seed)
    if full_determinism:
        torch.use_deterministic_algorithms(True)
"""
SFT = """\
from .base_trainer import BaseTrainer
from .helper import set_seed


class SFTTrainer(BaseTrainer):
    def compute_loss(self, batch):
        return batch.sum()


def run_sft(args):
    set_seed(args.seed, full_determinism=args.full_determinism)
    SFTTrainer(args, load_model(args)).fit()


if __name__ == "__main__":
    run_sft(get_args())
"""


def test_a_script_training_through_the_project_base_class_of_its_own_class_needs_determinism(tmp_path):
    """LLaMA-Factory's v1 sft_trainer.py builds its `SFTTrainer(BaseTrainer)` and runs `fit()`, BaseTrainer's loop in
    another project file, and seeds with `full_determinism=` a config field: it trains, and its determinism is an
    opt-in nothing here sets (it said nothing at all)."""
    root = write(tmp_path, {"pyproject.toml": PYPROJECT, "pkg/__init__.py": "", "pkg/base_trainer.py": BASE_TRAINER,
                            "pkg/helper.py": HELPER, "pkg/sft.py": SFT})
    found = lint_findings(root / "pkg/sft.py", "no-deterministic-algos")
    assert [(f.line, f.severity) for f in found] == [(11, "warning")]
    assert found[0].message.startswith("deterministic kernels are switched on only when `args.full_determinism` is true")
    (root / "pkg/sft.py").write_text(SFT.replace("full_determinism=args.full_determinism", "full_determinism=True"))
    assert lint(root / "pkg/sft.py", "no-deterministic-algos") == []


ENGINE = """\
import torch


def set_determinism(config):
    torch.manual_seed(config.seed)
    if config.deterministic:
        torch.use_deterministic_algorithms(True)


class Engine:
    def __init__(self, config):
        set_determinism(config)
"""
FORGE_TRAIN = """\
import torch

from .engine import Engine


class Trainer(Engine):
    def __init__(self, config):
        super().__init__(config)
        self.model = torch.nn.Linear(4, 2)
        self.optimizer = torch.optim.AdamW(self.model.parameters())

    def train(self):
        for x in torch.randn(3, 2, 4):
            self.model(x).sum().backward()
            self.optimizer.step()


if __name__ == "__main__":
    Trainer(load_config()).train()
"""


def test_seeding_in_the_project_base_class_init_reached_by_super_counts(tmp_path):
    """torchtitan's forge example_train.py: `class Trainer(ForgeEngine)` calls `super().__init__(config)`, whose
    `set_determinism` seeds, and switches deterministic kernels on only under `config.deterministic` (False by
    default): seeded (no seed-missing), and the determinism opt-in is reported at the `super()` call."""
    root = write(tmp_path, {"pyproject.toml": PYPROJECT, "forge/__init__.py": "", "forge/engine.py": ENGINE,
                            "forge/example_train.py": FORGE_TRAIN})
    assert lint(root / "forge/example_train.py", "seed-missing") == []
    found = lint_findings(root / "forge/example_train.py", "no-deterministic-algos")
    assert [f.line for f in found] == [8]
    assert "`super().__init__(...)` switches deterministic kernels on only when `config.deterministic` (engine.py:6)" \
           in found[0].message


def test_a_file_named_for_evaluation_whose_loop_steps_an_optimizer_trains(tmp_path):
    """swav's eval_semisup.py fine-tunes the network (`optimizer.step()` in its epoch loop): not evaluation code by
    its name. A test module that steps an optimizer stays test code, and an evaluation loop without one stays
    evaluation code."""
    stepping = ("def train(model, optimizer, loader):\n    for x in loader:\n        model(x).sum().backward()\n"
                "        optimizer.step()\n")
    evaluating = "def main(model, loader):\n    for x in loader:\n        print(model(x).argmax())\n"
    verdicts = {name: FileContext(str(tmp_path / name), text, ast.parse(text)).eval_file
                for name, text in (("eval_semisup.py", stepping), ("test_train_step.py", stepping),
                                   ("eval_linear.py", evaluating), ("utils_test.py", stepping))}
    assert verdicts == {"eval_semisup.py": False, "test_train_step.py": True, "eval_linear.py": True,
                        "utils_test.py": True}


def test_training_imported_through_a_package_re_export_is_followed(tmp_path):
    """LLaMA-Factory's src/train.py runs `run_exp()` of train/tuner.py, which calls `run_sft` imported `from .sft`,
    whose sft/__init__.py re-exports it from .workflow, where a Hugging Face trainer trains: the entry script trains
    (it said nothing) and turns no deterministic kernels on."""
    root = write(tmp_path, {
        "pyproject.toml": PYPROJECT, "lf/__init__.py": "", "lf/train/__init__.py": "",
        "lf/train/sft/__init__.py": "from .workflow import run_sft\n",
        "lf/train/sft/workflow.py": "from transformers import Trainer\n\n\ndef run_sft(model, args, data):\n"
                                    "    trainer = Trainer(model=model, args=args, train_dataset=data)\n"
                                    "    trainer.train()\n",
        "lf/train/tuner.py": "from transformers import set_seed\n\nfrom .sft import run_sft\n\n\ndef run_exp():\n"
                             "    set_seed(42)\n    run_sft(None, None, None)\n",
        "train.py": "from lf.train.tuner import run_exp\n\n\ndef main():\n    run_exp()\n\n\n"
                    "if __name__ == \"__main__\":\n    main()\n"})
    assert lint(root / "train.py", "no-deterministic-algos", "seed-missing") == [("no-deterministic-algos", 8)]


def test_a_training_class_only_handed_on_is_not_run(tmp_path):
    """nanotron's examples/llama/convert_weights.py builds `OneForwardOneBackwardPipelineEngine()` (re-exported by
    nanotron.config) only as a parameter default handed to `ParallelismArgs(pp_engine=...)`: the weight converters
    using it train nothing. Running the engine itself trains."""
    engine = ("import torch\n\n\nclass Engine:\n    def train_batch_iter(self, model, optimizer, batches):\n"
              "        for batch in batches:\n            model(batch).sum().backward()\n            optimizer.step()\n")
    helper = ("from pkg import Engine\n\n\ndef make_config(engine=Engine()):\n    return dict(engine=engine)\n")
    root = write(tmp_path, {"pyproject.toml": PYPROJECT, "pkg/__init__.py": "from .engine import Engine\n",
                            "pkg/engine.py": engine, "helper.py": helper,
                            "convert.py": "import torch\n\nfrom helper import make_config\n\n"
                                          "if __name__ == \"__main__\":\n    torch.save(make_config(), 'c.pt')\n"})
    assert lint(root / "convert.py", "no-deterministic-algos", "seed-missing") == []
    (root / "helper.py").write_text(helper + "\n\ndef run(model, optimizer, batches):\n"
                                             "    Engine().train_batch_iter(model, optimizer, batches)\n")
    (root / "convert.py").write_text("from helper import run\n\nif __name__ == \"__main__\":\n    run(m, o, b)\n")
    assert lint(root / "convert.py", "seed-missing") == [("seed-missing", 3)]

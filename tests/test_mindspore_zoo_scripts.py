"""MindSpore model-zoo scripts across files: an export script, worker counts set by other files, a helper that seeds
only the data pipeline (minddet, mindaudio, mindrlhf)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from msprobe_rewriter.instrument import Options, instrument_text
from msprobe_rewriter.instrument.transforms import select
from msprobe_rewriter.lint.engine import lint_source
from msprobe_rewriter.rules import RULES_BY_NAME

CELLS = """import mindspore.nn as nn
import mindspore.ops as ops


class Backbone(nn.Cell):
    def __init__(self):
        super().__init__()
        self.dense = nn.Dense(4, 2)

    def construct(self, x):
        return self.dense(x)


class TrainStep(nn.Cell):
    def __init__(self, network, optimizer):
        super().__init__()
        self.network, self.optimizer = network, optimizer
        self.grad = ops.GradOperation(get_by_list=True)

    def construct(self, x):
        grads = self.grad(self.network, self.optimizer.parameters)(x)
        return self.optimizer(grads)


class DetEval(nn.Cell):
    def __init__(self):
        super().__init__()
        self.network = Backbone()

    def construct(self, x):
        return self.network(x)
"""


def lint(path: Path, *names: str) -> list[tuple[str, int, str]]:
    result = lint_source(str(path), path.read_bytes(), [RULES_BY_NAME[n] for n in names])
    assert not result.errors
    return [(f.name, f.line, f.severity) for f in result.findings]


def test_an_export_script_building_an_evaluation_cell_trains_nothing(tmp_path):
    """minddet's centernet export.py builds `CenterNetDetEval` from a module whose training cell's `construct` applies
    gradients: another class's method of the same name does not make the evaluation cell a training one."""
    (tmp_path / "cells.py").write_text(CELLS)
    main = ("import mindspore\nimport numpy as np\nfrom cells import {cls}\n\n\ndef run(path):\n    net = {cls}()\n"
            "    mindspore.load_param_into_net(net, mindspore.load_checkpoint(path))\n"
            "    mindspore.export(net, mindspore.Tensor(np.zeros([1, 4])), file_name=\"net\", file_format=\"MINDIR\")\n"
            "\n\nif __name__ == \"__main__\":\n    run(\"net.ckpt\")\n")
    exporting = tmp_path / "convert_model.py"
    exporting.write_text(main.format(cls="DetEval"))
    assert lint(exporting, "seed-missing", "no-deterministic-algos") == []
    training = tmp_path / "run_step.py"
    training.write_text(main.format(cls="TrainStep"))
    assert {name for name, _, _ in lint(training, "seed-missing", "no-deterministic-algos")} == {
        "seed-missing", "no-deterministic-algos"}


def test_a_worker_count_left_at_one_is_read_in_the_files_importing_it(tmp_path):
    """minddet's `build_dataloader(..., num_parallel_workers=1)` has no caller: one worker; a module-level function
    another file calls with 8 workers, or a method of a module other files import (centernet's
    `coco.create_train_dataset(..., num_parallel_workers=num_workers)` in its train.py), runs several."""
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    data = tmp_path / "data.py"
    data.write_text("import mindspore.dataset as ds\n\n\ndef build(source, workers=1):\n"
                    "    return ds.GeneratorDataset(source, [\"x\"], shuffle=False, num_parallel_workers=workers)\n\n\n"
                    "class Coco:\n    def create(self, source, workers=1):\n"
                    "        return ds.GeneratorDataset(source, [\"x\"], shuffle=False, num_parallel_workers=workers)\n")
    (tmp_path / "other.py").write_text("def build(source, workers=1):\n    return source\n")
    (tmp_path / "train.py").write_text("from data import Coco\nfrom other import build\n\n"
                                       "loader = build(rows, workers=8)\nCoco().create(rows, workers=8)\n")
    assert [line for _, line, _ in lint(data, "data-workers")] == [10]  # the method's; `build` here is other's
    (tmp_path / "train.py").write_text("import data\n\nloader = data.build(rows, workers=8)\n")
    assert [line for _, line, _ in lint(data, "data-workers")] == [5, 10]


def test_a_worker_count_is_read_in_the_files_importing_it_through_a_package(tmp_path):
    """mindpose's tools/train.py does `from mindpose.data import create_dataset` and passes the configured worker
    count; mindpose/data/__init__.py re-exports it from .data_factory."""
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    package = tmp_path / "demo" / "data"
    package.mkdir(parents=True)
    (tmp_path / "demo" / "__init__.py").write_text("")
    (package / "__init__.py").write_text("from .factory import build\n")
    factory = package / "factory.py"
    factory.write_text("import mindspore.dataset as ds\n\n\ndef build(source, workers=1):\n"
                       "    return ds.GeneratorDataset(source, [\"x\"], shuffle=False, num_parallel_workers=workers)\n")
    (tmp_path / "train.py").write_text("from demo.data import build\n\nloader = build(rows)\n")
    assert lint(factory, "data-workers") == []
    (tmp_path / "train.py").write_text("from demo.data import build\n\nloader = build(rows, workers=args.workers)\n")
    assert [line for _, line, _ in lint(factory, "data-workers")] == [5]


def test_a_helper_seeding_the_data_pipeline_is_noted_with_what_it_seeds(tmp_path):
    """mindrlhf's PPOTrainer calls `mindspore.dataset.config.set_seed(2023)` when built: after seed_all it reseeds
    `random`, NumPy and the data pipeline (MindSpore 2.10's `set_seed` there seeds all three), not the operators."""
    (tmp_path / "trainer.py").write_text("import mindspore\n\n\nclass PPOTrainer:\n    def __init__(self, path):\n"
                                         "        mindspore.dataset.config.set_seed(2023)\n        self.path = path\n")
    code = ("import mindspore as ms\nfrom trainer import PPOTrainer\n\n\ndef run(path):\n"
            "    trainer = PPOTrainer(path)\n    net = ms.nn.Dense(2, 2)\n"
            "    opt = ms.nn.Momentum(net.trainable_params(), 0.1, 0.9)\n"
            "    ms.train.Model(net, ms.nn.MSELoss(), opt).train(1, trainer.path)\n\n\n"
            "if __name__ == \"__main__\":\n    run(\"data\")\n")
    _, notes = instrument_text(str(tmp_path / "train.py"), code, replace(Options(), selected=select(["seed"], [])))
    assert any("`PPOTrainer(...)` seeds again after seed_all (Python's `random`, NumPy's global generator and "
               "MindSpore's data pipeline)" in note for note in notes), notes

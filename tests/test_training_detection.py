"""What counts as training, shared by lint (MSP101/MSP104) and msprobe-instrument's loop finder: a class picked in
if/elif branches, a registry factory's classes, a MindSpore train-step cell called on a loop's data."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from msprobe_rewriter.instrument import Options, instrument_text
from msprobe_rewriter.instrument.markers import strip
from msprobe_rewriter.instrument.transforms import select
from project_helpers import lint, write

EXPERIMENT = """
import torch


class Exp_{name}:
    def __init__(self, args):
        self.model = torch.nn.Linear(2, 2)

    def train(self, setting):
        optimizer = torch.optim.Adam(self.model.parameters())
        for x in range(3):
            optimizer.zero_grad()
            self.model(torch.randn(4, 2)).sum().backward()
            optimizer.step()
"""

# Time-Series-Library's run.py: the experiment class is chosen by --task_name, then built and trained.
PICKED = """
import torch

if __name__ == '__main__':
    if args.task_name == 'long':
        from exp.exp_long import Exp_Long
        Exp = Exp_Long
    else:
        from exp.exp_short import Exp_Short
        Exp = Exp_Short
    exp = Exp(args)
    exp.train('setting')
"""

REGISTRY = """
class Registry:
    def __init__(self, name):
        self._obj_map = {}

    def register(self, obj=None):
        def deco(cls):
            self._obj_map[cls.__name__] = cls
            return cls
        return deco

    def get(self, name):
        return self._obj_map[name]


MODEL_REGISTRY = Registry('model')
"""

# BasicSR: basicsr/models/__init__.py builds the configured model class from the registry.
FACTORY = """
from copy import deepcopy

from pkg.registry import MODEL_REGISTRY


def build_model(opt):
    opt = deepcopy(opt)
    model = MODEL_REGISTRY.get(opt['model_type'])(opt)
    return model
"""

SR_MODEL = """
import torch

from pkg.registry import MODEL_REGISTRY


@MODEL_REGISTRY.register()
class SRModel:
    def __init__(self, opt):
        self.net_g = torch.nn.Linear(2, 2)
        self.optimizer_g = torch.optim.Adam(self.net_g.parameters())

    def optimize_parameters(self, current_iter):
        self.optimizer_g.zero_grad()
        self.net_g(torch.randn(4, 2)).sum().backward()
        self.optimizer_g.step()
"""

TRAIN = """
import torch

from pkg.models import build_model


def train_pipeline(opt):
    model = build_model(opt)
    for current_iter, batch in enumerate(loader):
        model.optimize_parameters(current_iter)


if __name__ == '__main__':
    train_pipeline({'model_type': 'SRModel'})
"""


def notes_and_lines(path: Path) -> tuple[list[str], list[str]]:
    out, notes = instrument_text(path.name, path.read_text(), Options(selected=select(["debugger"], [], False)))
    return notes, [line.strip() for line in strip(out).splitlines()]


@pytest.fixture
def picked(tmp_path: Path, monkeypatch) -> Path:
    write(tmp_path, {"pyproject.toml": "[project]\nname = 'demo'\n", "exp/__init__.py": "",
                     "exp/exp_long.py": EXPERIMENT.format(name="Long"),
                     "exp/exp_short.py": EXPERIMENT.format(name="Short"), "run.py": PICKED})
    monkeypatch.chdir(tmp_path)
    return tmp_path / "run.py"


@pytest.fixture
def registered(tmp_path: Path, monkeypatch) -> Path:
    write(tmp_path, {"pyproject.toml": "[project]\nname = 'demo'\n", "pkg/__init__.py": "", "pkg/registry.py": REGISTRY,
                     "pkg/models/__init__.py": FACTORY, "pkg/models/sr_model.py": SR_MODEL, "pkg/train.py": TRAIN})
    monkeypatch.chdir(tmp_path)
    return tmp_path / "pkg" / "train.py"


def test_a_class_picked_in_if_elif_branches_trains_when_one_of_them_does(picked):
    assert lint(picked, "no-deterministic-algos", "seed-missing") == [("seed-missing", 4),
                                                                        ("no-deterministic-algos", 4)]
    picked.write_text(picked.read_text().replace("exp.train('setting')", "exp.test('setting')").replace(
        "Exp = Exp_Short", "Exp = Exp_Short\n    Exp = None"))  # a name also bound to something else is no alias
    assert lint(picked, "no-deterministic-algos") == []


def test_a_class_picked_in_if_elif_branches_names_every_loop(picked):
    notes, _ = notes_and_lines(picked)
    assert notes == ["run.py: the training loop is not in this file but in `Exp_Long.train` in exp/exp_long.py, "
                     "`Exp_Short.train` in exp/exp_short.py: instrument those files too (msprobe-instrument --write "
                     "run.py exp/exp_long.py exp/exp_short.py); debugger not added here"]


def test_a_registry_factory_builds_the_classes_registered_there(registered):
    assert lint(registered, "no-deterministic-algos") == [("no-deterministic-algos", 13)]
    evaluation = registered.with_name("test.py")  # an evaluation script that only builds the model trains nothing
    evaluation.write_text("import torch\nfrom pkg.models import build_model\n\nif __name__ == '__main__':\n"
                          "    model = build_model({'model_type': 'SRModel'})\n    model.validation(None)\n")
    assert lint(evaluation, "no-deterministic-algos") == []


def test_a_class_not_registered_is_not_built_by_the_factory(registered):
    registered.parent.joinpath("models", "sr_model.py").write_text(SR_MODEL.replace("@MODEL_REGISTRY.register()\n", ""))
    assert lint(registered, "no-deterministic-algos") == []


@pytest.mark.parametrize("gan", [False, True])
def test_a_loop_stepping_a_registry_built_object_is_wrapped(registered, gan):
    """The networks every registered class trains are started; where they differ (which class is built is
    configured), none is, and the object itself is not (it is no module)."""
    if gan:
        registered.parent.joinpath("models", "gan_model.py").write_text(textwrap.dedent(
            SR_MODEL.replace("SRModel", "GANModel").replace("net_g", "net_d").replace("optimizer_g", "optimizer_d")))
    notes, lines = notes_and_lines(registered)
    started = "debugger.start()" if gan else "debugger.start(model=model.net_g)"
    assert lines[lines.index("for current_iter, batch in enumerate(loader):") + 1] == started
    assert ("train.py:9: model not found: `start()` without a model dumps APIs only" in notes) is gan


@pytest.mark.parametrize("epochs", [False, True])
def test_a_train_step_cell_called_on_the_loop_data_steps_every_batch(epochs):
    """`for x, y in data: train_net(x, y)`: x and y are the cell's data, not what it steps (a loop over optimizers)."""
    loop = "    for x, y in data:\n        loss = train_net(x, y)\n"
    if epochs:
        loop = "    for epoch in range(3):\n" + textwrap.indent(loop, "    ")
    code = ("import mindspore as ms\nfrom mindspore import nn\n\n\ndef main(data):\n    net = nn.Dense(2, 2)\n"
            "    opt = nn.Adam(net.trainable_params())\n    loss_net = nn.WithLossCell(net, nn.MSELoss())\n"
            "    train_net = nn.TrainOneStepCell(loss_net, opt)\n" + loop)
    out, notes = instrument_text("/project/train.py", code, Options(selected=select(["debugger"], [], False)))
    lines = [line.strip() for line in strip(out).splitlines()]
    assert lines[lines.index("for x, y in data:") + 1] == "debugger.start(model=net)", notes


def test_a_train_step_cell_kept_in_a_dict_steps_where_it_is_called():
    """applications/stylegan2: `phases.append({'network': nn.TrainOneStepCell(...)})`, then `phase['network'](...)`
    for each phase of each batch: the batch loop is the step loop, not the loop over the phases."""
    code = ("import mindspore as ms\nfrom mindspore import nn\n\n\ndef main(data):\n    net = nn.Dense(2, 2)\n"
            "    phases = []\n    for m in [net]:\n        opt = nn.Adam(m.trainable_params())\n"
            "        network = nn.TrainOneStepCell(nn.WithLossCell(m, nn.MSELoss()), opt)\n"
            "        phases.append({'name': 'G', 'network': network})\n    for x, y in data:\n"
            "        for phase in phases:\n            loss = phase['network'](x, y)\n            print(phase['name'])\n")
    out, _ = instrument_text("/project/train.py", code, Options(selected=select(["debugger"], [], False)))
    lines = [line.strip() for line in strip(out).splitlines()]
    assert lines[lines.index("for x, y in data:") + 1].startswith("debugger.start(")
    assert "debugger.start" not in run_lines(code.replace("'network': network", "'network': m"))


def run_lines(code: str) -> str:
    return instrument_text("/project/train.py", code, Options(selected=select(["debugger"], [], False)))[0]


GAN_CELL = """
from mindspore import nn


class TrainOneStepCell(nn.Cell):
    def __init__(self, netD, optimizerD):
        super().__init__()
        self.netD = netD
        self.optimizerD = optimizerD
        self.grad = ops.GradOperation(get_by_list=True)

    def trainD(self, data, loss_net, optimizer):
        grads = self.grad(loss_net, optimizer.parameters)(data)
        optimizer(grads)

    def construct(self, data):
        return self.trainD(data, self.netD, self.optimizerD)
"""

# applications/mindspore-GAN/train.py: no `__main__` guard, the project cell comes through a star import.
GAN_SCRIPT = """
import numpy as np
from mindspore import nn
from src.TrainOneStep import *

net = nn.Dense(2, 2)
optimizer = nn.Adam(net.trainable_params())
GAN_train = TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), optimizer)
for epoch in range(10):
    for data in dataset:
        loss = GAN_train(data)
"""


def test_module_level_training_through_a_project_cell_makes_an_entry_script(tmp_path, monkeypatch):
    write(tmp_path, {"pyproject.toml": "[project]\nname = 'demo'\n", "src/__init__.py": "",
                     "src/TrainOneStep.py": GAN_CELL, "train.py": GAN_SCRIPT})
    monkeypatch.chdir(tmp_path)
    script = tmp_path / "train.py"
    assert lint(script, "seed-missing", "no-deterministic-algos") == [("seed-missing", 2),
                                                                        ("no-deterministic-algos", 2)]
    notes, lines = notes_and_lines(script)
    assert lines[lines.index("for data in dataset:") + 1] == "debugger.start(model=net)", notes
    library = tmp_path / "src" / "helpers.py"  # a module that only imports the cell is no script
    library.write_text("from src.TrainOneStep import TrainOneStepCell\n\n\ndef build(net, opt):\n"
                       "    return TrainOneStepCell(net, opt)\n")
    assert lint(library, "seed-missing", "no-deterministic-algos") == []


def test_a_train_step_cell_handed_by_the_importing_script_steps_the_helper_loop(tmp_path, monkeypatch):
    """MoCo: main.py hands `nn.TrainOneStepCell(models, optimizer)` to train.py's `train(net, ...)`, which calls
    `net(im1, im2)` for each batch."""
    helper = ("import mindspore\n\n\ndef train(net, train_data, epoch):\n    for data in train_data.create_dict_iterator():\n"
              "        loss = net(data['image1'], data['image2'])\n")
    main = ("from mindspore import nn\nfrom train import train\n\n\ndef main():\n    for epoch in range(3):\n"
            "        optimizer = nn.SGD(params=models.trainable_params(), learning_rate=0.1)\n"
            "        train_net = nn.TrainOneStepCell(models, optimizer)\n        train(train_net, data, epoch)\n\n\n"
            "if __name__ == '__main__':\n    main()\n")
    write(tmp_path, {"pyproject.toml": "[project]\nname = 'demo'\n", "train.py": helper, "main.py": main})
    monkeypatch.chdir(tmp_path)
    notes, _ = notes_and_lines(tmp_path / "main.py")
    assert notes[0] == ("main.py: the training loop is not in this file but in `train` in train.py: instrument that "
                        "file too (msprobe-instrument --write main.py train.py); debugger not added here")
    notes, lines = notes_and_lines(tmp_path / "train.py")
    assert lines[lines.index("for data in train_data.create_dict_iterator():") + 1] == "debugger.start(model=net)"


OWN_TRAINER = """\
import mindspore as ms
from mindnlp.core import value_and_grad
from mindnlp.core.optim import AdamW


class Trainer:
    def __init__(self, net, optimizer, dataset):
        self.net, self.optimizer, self.dataset = net, optimizer, dataset
        self.grad_fn = value_and_grad(fn=self.forward_fn, params_or_argnums=net.trainable_params())

    def forward_fn(self, batch):
        return self.net(**batch).loss

    def train_single(self, batch):
        self.optimizer.zero_grad()
        loss = self.grad_fn(batch)
        self.optimizer.step()
        return loss

    def train(self, epochs):
        for _ in range(epochs):
            for batch in self.dataset.create_dict_iterator():
                self.train_single(batch)
"""


def test_module_level_code_building_a_training_class_of_the_file_makes_an_entry_script(tmp_path, monkeypatch):
    """mindnlp's blip2_finetune_with_Food500Cap.py: no `__main__` guard, `trainer = Trainer(...)` of its own class
    (whose `train_single` steps a mindnlp.core optimizer) and `trainer.train(10)` at module level."""
    script = tmp_path / "finetune.py"
    script.write_text(OWN_TRAINER + "\n\nmodel = load()\ntrainer = Trainer(model, AdamW(model.trainable_params()), "
                                    "loader)\ntrainer.train(10)\n")
    monkeypatch.chdir(tmp_path)
    assert lint(script, "seed-missing", "no-deterministic-algos") == [("seed-missing", 27),
                                                                        ("no-deterministic-algos", 27)]
    out, notes = instrument_text(str(script), script.read_text(), Options())
    assert "seed_all(" in strip(out), notes
    library = tmp_path / "trainer.py"  # a module only defining the class is no script
    library.write_text(OWN_TRAINER)
    assert lint(library, "seed-missing", "no-deterministic-algos") == []


LAVIS_REGISTRY = """
class Registry:
    mapping = {"runner_name_mapping": {}}

    @classmethod
    def register_runner(cls, name):
        def wrap(runner_cls):
            cls.mapping["runner_name_mapping"][name] = runner_cls
            return runner_cls
        return wrap

    @classmethod
    def get_runner_class(cls, name):
        return cls.mapping["runner_name_mapping"].get(name, None)


registry = Registry()
"""

# LAVIS' runner hands its optimizer to the task it holds (built from another registry), whose loop steps it.
LAVIS_RUNNER = """
import torch

from lavis.common.registry import registry


@registry.register_runner("runner_base")
class RunnerBase:
    def __init__(self, cfg, task, model):
        self.task, self.model = task, model
        self.optimizer = torch.optim.AdamW(model.parameters())

    def train(self):
        for epoch in range(3):
            self.train_epoch(epoch)

    def train_epoch(self, epoch):
        return self.task.train_epoch(epoch=epoch, model=self.model, optimizer=self.optimizer)
"""

LAVIS_TASK = """
class BaseTask:
    def train_epoch(self, epoch, model, optimizer):
        return self._train_inner_loop(epoch, model, optimizer)

    def _train_inner_loop(self, epoch, model, optimizer):
        for samples in range(10):
            model(samples).backward()
            optimizer.step()
"""

LAVIS_TRAIN = """
import torch.backends.cudnn as cudnn

from lavis.common.registry import registry
from lavis.runners import *
from lavis.tasks import *


def setup_seeds(config):
    cudnn.benchmark = False
    cudnn.deterministic = True


def get_runner_class(cfg):
    runner_cls = registry.get_runner_class(cfg.run_cfg.get("runner", "runner_base"))
    return runner_cls


def main():
    cfg = Config(parse_args())
    setup_seeds(cfg)
    runner = get_runner_class(cfg)(cfg=cfg, task=task, model=model)
    runner.train()


if __name__ == "__main__":
    main()
"""


@pytest.fixture
def lavis(tmp_path: Path, monkeypatch) -> Path:
    write(tmp_path, {"setup.py": "", "lavis/__init__.py": "", "lavis/common/__init__.py": "",
                     "lavis/common/registry.py": LAVIS_REGISTRY,
                     "lavis/runners/__init__.py": "from lavis.runners.runner_base import RunnerBase\n",
                     "lavis/runners/runner_base.py": LAVIS_RUNNER,
                     "lavis/tasks/__init__.py": "from lavis.tasks.base_task import BaseTask\n",
                     "lavis/tasks/base_task.py": LAVIS_TASK, "train.py": LAVIS_TRAIN})
    monkeypatch.chdir(tmp_path)
    return tmp_path / "train.py"


def test_a_runner_registered_by_kind_and_handing_its_optimizer_to_a_task_trains(lavis):
    """LAVIS' train.py: `get_runner_class(cfg)` returns `registry.get_runner_class(name)`, the classes registered with
    `@registry.register_runner(...)`; RunnerBase trains through `self.task.train_epoch(..., optimizer=self.optimizer)`."""
    assert lint(lavis, "no-deterministic-algos") == [("no-deterministic-algos", 11)]
    runner = lavis.parent / "lavis" / "runners" / "runner_base.py"
    runner.write_text(LAVIS_RUNNER.replace('@registry.register_runner("runner_base")\n', ""))
    assert lint(lavis, "no-deterministic-algos") == []


def test_the_instrument_names_the_loop_a_registered_runner_delegates_to(lavis):
    """msprobe-instrument on LAVIS' train.py points to BaseTask's loop, which the runner reaches through the task."""
    notes, lines = notes_and_lines(lavis)
    assert notes == ["train.py: the training loop is not in this file but in `BaseTask._train_inner_loop` in "
                     "lavis/tasks/base_task.py: instrument that file too (msprobe-instrument --write train.py "
                     "lavis/tasks/base_task.py); debugger not added here"]


def test_a_trainer_subclass_module_names_the_loop_it_inherits(tmp_path, monkeypatch):
    """ultralytics' rtdetr/train.py: RTDETRTrainer subclasses DetectionTrainer (yolo/detect/train.py), which subclasses
    BaseTrainer, whose `_do_train` holds the loop: the note names it; a user script running `YOLO(...).train(...)`
    is told where ultralytics trains."""
    base = ("import torch\n\n\nclass BaseTrainer:\n    def _do_train(self):\n        for batch in self.loader:\n"
            "            self.model(batch).sum().backward()\n            self.optimizer.step()\n")
    write(tmp_path, {"pyproject.toml": "[project]\nname = 'demo'\n", "pkg/__init__.py": "",
                     "pkg/engine/__init__.py": "", "pkg/engine/trainer.py": base, "pkg/detect/__init__.py": "",
                     "pkg/detect/train.py": "from pkg.engine.trainer import BaseTrainer\n\n\n"
                                            "class DetectionTrainer(BaseTrainer):\n    pass\n",
                     "pkg/rtdetr.py": "import torch\nfrom pkg.detect.train import DetectionTrainer\n\n\n"
                                      "class RTDETRTrainer(DetectionTrainer):\n    pass\n"})
    monkeypatch.chdir(tmp_path)
    notes, _ = notes_and_lines(tmp_path / "pkg" / "rtdetr.py")
    assert notes == ["rtdetr.py: `RTDETRTrainer` trains in the loop it inherits, `BaseTrainer._do_train` in "
                     "pkg/engine/trainer.py: instrument that file; debugger not added here"]
    out, notes = instrument_text("train.py", "from ultralytics import YOLO\n\nYOLO('yolo11n.pt').train(seed=7)\n",
                                 Options(selected=select(["debugger"], [], False)))
    assert [note.split(": ", 1)[1][:70] for note in notes] == [
        "`YOLO('yolo11n.pt').train(...)` runs ultralytics' training loop, `Base"]

"""Seeding and determinism rules beyond their in-rule examples: project-local helpers (real files in a
temporary project), conditions evaluated with argparse defaults, and where whole-script findings point."""

from __future__ import annotations

import ast
import os
import textwrap
from pathlib import Path

import pytest
from msprobe_rewriter.lint.engine import lint_source
from msprobe_rewriter.rules import RULES_BY_NAME
from project_helpers import lint, lint_findings, write

TRAIN_LOOP = """
def train(model, loader):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for x in loader:
        optimizer.zero_grad()
        model(x).sum().backward()
        optimizer.step()
"""


def script(imports: str, body: str = "set_seed(0)") -> str:
    return f"import torch\n{imports}\n{TRAIN_LOOP}\n\nif __name__ == '__main__':\n    {body}\n    train(None, [])\n"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    return tmp_path


# --- following project-local helpers -----------------------------------------------------------
SEEDS_ALL = """
import random
import numpy as np
import torch


def set_seed(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
"""


@pytest.mark.parametrize(("files", "imports", "body"), [
    ({"utils.py": SEEDS_ALL}, "from utils import set_seed", "set_seed(0)"),
    ({"utils.py": SEEDS_ALL}, "import utils", "utils.set_seed(0)"),
    ({"utils.py": SEEDS_ALL}, "from utils import set_seed as fix", "fix(0)"),
    ({"tools/__init__.py": "", "tools/misc.py": SEEDS_ALL}, "from tools.misc import set_seed", "set_seed(1)"),
    ({"tools/__init__.py": "", "tools/misc.py": SEEDS_ALL}, "from tools import misc", "misc.set_seed(1)"),
    ({"tools/__init__.py": "from .misc import set_seed\n", "tools/misc.py": SEEDS_ALL}, "from tools import set_seed",
     "set_seed(1)"),
    ({"tools/__init__.py": "from .misc import *\n", "tools/misc.py": SEEDS_ALL}, "from tools import *",
     "set_seed(1)"),
])
def test_seeding_helper_in_another_file_counts(project, files, imports, body):
    write(project, files)
    write(project, {"train.py": script(imports, body)})
    assert lint(project / "train.py", "seed-missing") == []


PREPARE = SEEDS_ALL.replace("def set_seed(seed)", "def prepare(seed=0)")  # a name that says nothing of seeding


@pytest.mark.parametrize(("packaging", "text"), [
    ("pyproject.toml", '[tool.setuptools.packages.find]\nwhere = ["src"]\n'),  # nanotron, lerobot
    ("pyproject.toml", '[tool.setuptools]\npackage-dir = {"" = "src"}\n'),
    ("pyproject.toml", '[project]\nname = "demo-tools"\n\n[build-system]\nbuild-backend = "hatchling.build"\n'),
    ("setup.cfg", "[options]\npackage_dir =\n    =src\n"),
    ("setup.py", 'from setuptools import find_packages, setup\n\nsetup(packages=find_packages("src"))\n'),
])
def test_seeding_helper_in_a_src_layout_package_counts(tmp_path, packaging, text):
    """A src layout: the project's package is imported from `src/`, by a script at the root and by one of its own
    modules however deep."""
    (tmp_path / ".git").mkdir()
    write(tmp_path, {packaging: text, "src/demo_tools/__init__.py": "", "src/demo_tools/misc.py": PREPARE,
                     "train.py": script("from demo_tools.misc import prepare", "prepare()"),
                     "src/demo_tools/a/b/c/train.py": script("from demo_tools.misc import prepare", "prepare()")})
    assert lint(tmp_path / "train.py", "seed-missing") == []
    assert lint(tmp_path / "src" / "demo_tools" / "a" / "b" / "c" / "train.py", "seed-missing") == []


def test_a_src_folder_the_packaging_does_not_name_is_no_import_root(tmp_path):
    """jepa's scripts import `src.datasets...` (its setup.py names no packages): `import datasets` there is Hugging
    Face's, not src/datasets/."""
    (tmp_path / ".git").mkdir()
    write(tmp_path, {"setup.py": 'from setuptools import setup\n\nsetup(name="demo")\n',
                     "src/demo_tools/__init__.py": "", "src/demo_tools/misc.py": PREPARE,
                     "train.py": script("from demo_tools.misc import prepare", "prepare()")})
    assert lint(tmp_path / "train.py", "seed-missing") == [("seed-missing", 12)]


def test_relative_import_from_a_package_script(project):
    write(project, {"pkg/__init__.py": "", "pkg/misc.py": SEEDS_ALL,
                    "pkg/train.py": script("from .misc import set_seed as seed_everything", "seed_everything(3)")})
    assert lint(project / "pkg" / "train.py", "seed-missing") == []


def test_helper_found_but_not_seeding_fires(project):
    write(project, {"utils.py": "import logging\n\n\ndef set_seed(seed):\n    logging.info('seed %s', seed)\n",
                    "train.py": script("from utils import set_seed")})
    assert lint(project / "train.py", "seed-missing") == [("seed-missing", 12)]


def test_helper_of_a_helper_in_a_third_file_counts(project):
    write(project, {
        "common/rng.py": SEEDS_ALL,
        "setup_utils.py": "from common.rng import set_seed\n\n\ndef prepare(cfg):\n    set_seed(cfg.seed)\n",
        "train.py": script("from setup_utils import prepare", "prepare(cfg)"),
    })
    assert lint(project / "train.py", "seed-missing") == []


def test_helpers_are_followed_however_deep(project):
    """dinov2's eval/linear.py seeds four files down (`setup_and_build_model` -> `setup` -> `default_setup` ->
    `fix_random_seeds`), none named like a seeder on the way."""
    write(project, {
        "d.py": SEEDS_ALL.replace("def set_seed", "def init_rng"),
        "c.py": "from d import init_rng\n\n\ndef default_setup(cfg):\n    init_rng(cfg.seed)\n",
        "b.py": "from c import default_setup\n\n\ndef configure(cfg):\n    default_setup(cfg)\n",
        "a.py": "from b import configure\n\n\ndef prepare(cfg):\n    configure(cfg)\n",
        "train.py": script("from a import prepare", "prepare(cfg)"),
    })
    assert lint(project / "train.py", "seed-missing") == []


def test_helpers_calling_each_other_across_files_end(project):
    """A cycle of project functions (a calls b calls a) is followed once round: it adds nothing, and ends."""
    write(project, {
        "a.py": "import b\n\n\ndef prepare(n):\n    b.configure(n)\n",
        "b.py": "import a\n\n\ndef configure(n):\n    a.prepare(n)\n",
        "train.py": script("from a import prepare", "prepare(0)"),
    })
    assert lint(project / "train.py", "seed-missing") == [("seed-missing", 12)]


def test_a_mindformers_trainer_is_named_in_the_message(project):
    """mindformers' Trainer seeds only from a truthy config `seed` and not in (semi-)auto parallel mode
    (mindformers/trainer/trainer.py): the finding says so."""
    write(project, {"run_dpo.py": "from mindformers import Trainer\n\nif __name__ == '__main__':\n"
                                  "    Trainer(args=config).train()\n"})
    path = project / "run_dpo.py"
    result = lint_source(str(path), path.read_bytes(), [RULES_BY_NAME["seed-missing"]])
    assert [f.line for f in result.findings] == [3]
    assert "mindformers' `Trainer` seeds only from a truthy config `seed`" in result.findings[0].message


STRATEGY = """
import random
import numpy as np
import torch


class Base:
    def seed_everything(self):
        random.seed(self.seed)
        np.random.seed(self.seed)
        torch.manual_seed(self.seed)


class Strategy(Base):
    def __init__(self, seed, seed_now=False):
        self.seed = seed
        if seed_now:
            self.seed_everything()

    def setup_distributed(self):
        self.seed_everything()

    def log(self):
        pass
"""
FACTORY = "from .strategy import Strategy\n\n\ndef get_strategy(args):\n    from pkg.strategy import Strategy as S\n" \
          "    strategy = S(args.seed)\n    return strategy\n"


@pytest.mark.parametrize(("imports", "body", "expected"), [
    # OpenRLHF: `strategy = get_strategy(args); strategy.setup_distributed()`, seeding in a method
    ("from pkg import get_strategy", "strategy = get_strategy(args)\n    strategy.setup_distributed()", []),
    ("from pkg.strategy import Strategy", "strategy = Strategy(0)\n    strategy.setup_distributed()", []),
    # torchtune's recipes seed in `__init__`
    ("from pkg.strategy import Strategy", "recipe = Strategy(0, seed_now=True)", []),
    ("from pkg.strategy import Strategy", "recipe = Strategy(0)", [("seed-missing", 12)]),
    ("from pkg.strategy import Strategy", "strategy = Strategy(0)\n    strategy.log()", [("seed-missing", 12)]),
])
def test_seeding_in_a_project_class(project, imports, body, expected):
    write(project, {"pkg/__init__.py": "from .factory import get_strategy\n", "pkg/factory.py": FACTORY,
                    "pkg/strategy.py": STRATEGY, "train.py": script(imports, body)})
    assert lint(project / "train.py", "seed-missing") == expected


@pytest.mark.parametrize(("seeding", "arguments", "expected"), [
    ("pass", "", [("seed-missing", 8), ("no-deterministic-algos", 12)]),
    ("set_seed(7)", "seed=7, full_determinism=True", []),
])
def test_a_trainer_subclass_in_another_file_seeds_and_trains_as_its_base(project, seeding, arguments, expected):
    """ChatGLM's ptuning: `Seq2SeqTrainer(PrefixTrainer)` in one file, `PrefixTrainer(Trainer)` in another. Built, it
    seeds (so a model made before it is made unseeded) and runs Hugging Face's training loop."""
    write(project, {"trainer.py": "from transformers import Trainer\n\n\nclass PrefixTrainer(Trainer):\n    pass\n",
                    "trainer_seq2seq.py": "from trainer import PrefixTrainer\n\n\nclass Seq2SeqTrainer(PrefixTrainer):\n"
                                          "    pass\n",
                    "main.py": f"""\
                        from trainer_seq2seq import Seq2SeqTrainer
                        from transformers import AutoModelForSequenceClassification, TrainingArguments, set_seed


                        def main():
                            args = TrainingArguments(output_dir="out", {arguments})
                            {seeding}
                            model = AutoModelForSequenceClassification.from_pretrained("bert-base", num_labels=2)
                            Seq2SeqTrainer(model=model, args=args).train()


                        if __name__ == "__main__":
                            main()
                        """})
    assert lint(project / "main.py", "seed-missing", "no-deterministic-algos") == expected


def test_modules_above_the_project_root_are_not_searched(tmp_path):
    write(tmp_path, {"helpers.py": SEEDS_ALL.replace("def set_seed", "def prepare"),
                     "proj/pyproject.toml": "", "proj/train.py": script("from helpers import prepare", "prepare(0)")})
    assert lint(tmp_path / "proj" / "train.py", "seed-missing") == [("seed-missing", 12)]
    (tmp_path / "proj" / "pyproject.toml").unlink()  # no marker: the parent folder is searched too
    assert lint(tmp_path / "proj" / "train.py", "seed-missing") == []


def test_a_package_module_named_setup_is_no_project_root(tmp_path):
    """dinov2's `dinov2/eval/setup.py` is a module of the package, not a packaging script: imports of
    `pkg.utils` from `pkg/eval/` are still looked up from the repository root."""
    write(tmp_path, {"pyproject.toml": "", "pkg/__init__.py": "",
                     "pkg/utils.py": SEEDS_ALL.replace("def set_seed", "def prepare"),
                     "pkg/eval/__init__.py": "", "pkg/eval/setup.py": "from pkg.utils import prepare\n",
                     "pkg/eval/train.py": script("from pkg.utils import prepare", "prepare(0)")})
    assert lint(tmp_path / "pkg" / "eval" / "train.py", "seed-missing") == []
    (tmp_path / "pkg" / "eval" / "__init__.py").unlink()  # a folder with a packaging script: its own root
    assert lint(tmp_path / "pkg" / "eval" / "train.py", "seed-missing") == [("seed-missing", 12)]


@pytest.mark.parametrize("helper", [None, "def set_seed(seed:\n", "\x00\x01binary"])
def test_missing_or_broken_helper_falls_back_to_its_name(project, helper):
    if helper is not None:
        (project / "utils.py").write_bytes(helper.encode())
    write(project, {"train.py": script("from utils import set_seed")})
    assert lint(project / "train.py", "seed-missing", "seed-partial") == []


def test_edited_helper_is_read_again(project):
    write(project, {"utils.py": SEEDS_ALL, "train.py": script("from utils import set_seed")})
    assert lint(project / "train.py", "seed-missing") == []
    helper = project / "utils.py"
    helper.write_text("def set_seed(seed):\n    pass\n")
    os.utime(helper, ns=(helper.stat().st_atime_ns, helper.stat().st_mtime_ns + 10**9))
    assert lint(project / "train.py", "seed-missing") == [("seed-missing", 12)]


def test_partial_seeding_seen_through_a_helper(project):
    write(project, {"utils.py": "import torch\n\n\ndef set_seed(seed):\n    torch.manual_seed(seed)\n",
                    "train.py": script("import numpy as np\nfrom utils import set_seed",
                                       "set_seed(0)\n    np.random.shuffle([1, 2])")})
    assert lint(project / "train.py", "seed-partial") == [("seed-partial", 15)]


SAMPLER = """
import random

import numpy as np


class DistributedSampler:
    def __init__(self, size, seed=0):
        self.size, self.seed = size, seed
        self.reverse = random.random() < 0.5

    def __iter__(self):
        self.seed += 1
        np.random.seed(self.seed)
        order = np.random.permutation(self.size).tolist()
        return iter(order[::-1] if self.reverse else order)
"""


def test_library_module_seeding_for_its_own_use_is_not_partial(project):
    # The sampler reseeds NumPy for its own permutation; seeding `random` (drawn in `__init__`) is the job of
    # the entry script.
    write(project, {"sampler.py": SAMPLER,
                    "train.py": script("import random\nfrom sampler import DistributedSampler",
                                       "torch.manual_seed(0)\n    random.shuffle([1, 2])")})
    assert lint(project / "sampler.py", "seed-partial") == []
    assert lint(project / "train.py", "seed-partial") == [("seed-partial", 15)]
    # With a demo under its guard it is still the library train.py imports: the importer's seeding is what counts.
    (project / "sampler.py").write_text(SAMPLER + "\n\nif __name__ == '__main__':\n    print(list(DistributedSampler(4)))\n")
    assert lint(project / "sampler.py", "seed-partial") == []  # imported by no file, it is a script: see below


def test_library_function_is_held_to_its_own_seeding(project):
    # A draw in the very function that seeds is expected to follow that seed.
    write(project, {"sampler.py": SAMPLER.replace("        return iter(", "        random.shuffle(order)\n        return iter(")})
    ((line, message),) = messages(project / "sampler.py", "seed-partial")
    assert line == 16
    assert "which `__iter__` never seeds although it seeds NumPy's global generator" in message


DETERMINISM_HELPER = """
import torch


def set_seed(seed, deterministic=False):
    torch.manual_seed(seed)
    if deterministic:
        torch.use_deterministic_algorithms(True)
"""


@pytest.mark.parametrize(("call", "expected"), [
    ("set_seed(0)", [("no-deterministic-algos", 12)]),
    ("set_seed(0, deterministic=False)", [("no-deterministic-algos", 12)]),
    ("set_seed(0, True)", []),
    ("set_seed(0, deterministic=args.det)", []),  # unknown: assume it may
])
def test_helper_arguments_decide_its_branches(project, call, expected):
    write(project, {"utils.py": DETERMINISM_HELPER, "train.py": script("from utils import set_seed", call)})
    assert lint(project / "train.py", "no-deterministic-algos", "seed-missing") == expected


def test_a_parameter_the_helper_reassigns_is_not_the_callers_value(project):
    """`set_seed()` passes None, but the helper replaces it before the condition it seeds under."""
    helper = ("import torch\n\n\ndef set_seed(seed=None):\n    if seed is None:\n        seed = 42\n"
              "    if seed is not None:\n        torch.manual_seed(seed)\n")
    write(project, {"utils.py": helper, "train.py": script("from utils import set_seed", "set_seed()")})
    assert lint(project / "train.py", "seed-missing") == []


def test_weights_initialised_on_the_device_by_an_imported_helper(project):
    """DeepSpeedExamples' GAN: `weights_init` of the project's model module, applied after `.to(device)`."""
    write(project, {
        "gan_model.py": "import torch.nn as nn\n\n\ndef weights_init(m):\n"
                        "    if m.__class__.__name__.find('Conv') != -1:\n        nn.init.normal_(m.weight.data, 0.0, 0.02)\n\n\n"
                        "def freeze(m):\n    m.requires_grad_(False)\n",
        "train.py": "import torch\nfrom gan_model import freeze, weights_init\n\n\ndef build(net, cuda):\n"
                    "    device = torch.device('cuda:0' if cuda else 'cpu')\n    net = net.to(device)\n"
                    "    net.apply(freeze)\n    net.apply(weights_init)\n    return net\n",
    })
    assert lint(project / "train.py", "device-rng") == [("device-rng", 9)]


def test_a_package_wins_over_a_module_of_the_same_name(project):
    """`from train import set_seed` in `train.py` beside a `train/` package imports the package (SimpleNMT), whose
    helper seeds only when given a seed: the script, whose `--seed` defaults to None, seeds nothing."""
    helper = ("import torch\n\n\ndef set_seed(seed=None):\n    if seed is not None:\n        torch.manual_seed(seed)\n")
    body = ("import argparse\n    parser = argparse.ArgumentParser()\n    parser.add_argument('--seed', type=int)\n"
            "    set_seed(parser.parse_args().seed)")
    write(project, {"train/__init__.py": helper, "train.py": script("from train import set_seed", body)})
    assert lint(project / "train.py", "seed-missing") == [("seed-missing", 12)]


def test_hccl_set_in_a_helper(project):
    write(project, {
        "env.py": "import os\n\n\ndef setup_env():\n    os.environ['HCCL_DETERMINISTIC'] = 'true'\n",
        "dist.py": "import torch.distributed as dist\nfrom env import setup_env\n\nsetup_env()\n"
                   "dist.init_process_group('hccl')\n",
        "dist_bad.py": "import torch.distributed as dist\nfrom env import other\n\nother()\n"
                       "dist.init_process_group('hccl')\n",
    })
    write(project, {"env.py": (project / "env.py").read_text() + "\n\ndef other():\n    pass\n"})
    assert lint(project / "dist.py", "dist-no-deterministic-comm") == []
    assert lint(project / "dist_bad.py", "dist-no-deterministic-comm") == [("dist-no-deterministic-comm", 5)]


def test_dist_start_in_a_function_nothing_calls_is_info(project):
    """mindediting's init_utils.py: train.py uses `init_env`, nothing names `init_dist`; where an importer calls it,
    its start of NCCL is a warning."""
    utils = ("from mindspore.communication import init\n\n\ndef init_dist():\n    init('nccl')\n\n\n"
             "def init_env():\n    init()\n")
    train = "from utils.init_utils import init_env\n\ninit_env()\n"
    val = "from utils.init_utils import init_dist\n\ninit_dist()\n"
    write(project, {"a/pyproject.toml": "", "a/utils/init_utils.py": utils, "a/train.py": train,
                    "b/pyproject.toml": "", "b/utils/init_utils.py": utils, "b/train.py": train, "b/val.py": val})
    found = {f.line: f.severity for f in lint_findings(project / "a/utils/init_utils.py", "dist-no-deterministic-comm")}
    assert found == {5: "info", 9: "warning"}
    found = {f.line: f.severity for f in lint_findings(project / "b/utils/init_utils.py", "dist-no-deterministic-comm")}
    assert found == {5: "warning", 9: "warning"}


@pytest.mark.parametrize(("call", "expected"), [
    ("dist.init_process_group('fake', rank=0, world_size=8)", []),  # torchtitan's precompile: no communication
    ("dist.init_process_group(world_size=1, rank=0, store=dist.HashStore())", []),  # k-diffusion: one process
    ("dist.init_process_group(world_size=2, rank=0, store=dist.HashStore())", [5]),
    ("deepspeed.init_distributed(world_size=1)", []),
    ("dist.init_process_group(args.backend)", [5]),
])
def test_dist_start_without_communication(project, call, expected):
    write(project, {"a.py": "import torch.distributed as dist\nimport deepspeed\n\nargs = object()\n" + call + "\n"})
    assert [line for _, line in lint(project / "a.py", "dist-no-deterministic-comm")] == expected


def test_dist_backend_option_nccl_by_default_gets_the_nccl_advice(project):
    """moco-v3's `--dist-backend` (default 'nccl'): pinning NCCL's algorithm counts, and the message says why."""
    options = ("import argparse\nimport os\n\nimport torch.distributed as dist\n\nparser = argparse.ArgumentParser()\n"
               "parser.add_argument('--dist-backend', default='nccl', type=str)\nargs = parser.parse_args()\n{env}"
               "dist.init_process_group(backend=args.dist_backend)\n")
    write(project, {"a.py": options.format(env=""), "b.py": options.format(env="os.environ['NCCL_ALGO'] = 'Ring'\n")})
    (finding,) = lint_findings(project / "a.py", "dist-no-deterministic-comm")
    assert finding.message.startswith("NCCL communication") and "(`args.dist_backend` is nccl by default)" in finding.message
    assert lint(project / "b.py", "dist-no-deterministic-comm") == []


TRAINER_MODULE = """
import torch


class TrainLoop:
    def __init__(self, model, data):
        self.model, self.data = model, data
        self.opt = torch.optim.AdamW(model.parameters())

    def run_loop(self):
        for batch in self.data:
            self.run_step(batch)

    def run_step(self, batch):
        self.model(batch).sum().backward()
        self.opt.step()


def train_one_epoch(model, optimizer, loader):
    for x in loader:
        model(x).sum().backward()
        optimizer.step()


def create_loop(model, data):
    return TrainLoop(model, data)
"""
DELEGATING_SCRIPT = """
import argparse

from trainer import {name}


def main():
    args = argparse.ArgumentParser().parse_args()
    {call}


if __name__ == "__main__":
    main()
"""


@pytest.mark.parametrize(("name", "call"), [("TrainLoop", "TrainLoop(model, data).run_loop()"),
                                            ("train_one_epoch", "train_one_epoch(model, opt, data)"),
                                            ("create_loop", "create_loop(model, data).run_loop()")])
def test_a_script_training_through_a_project_module_needs_seeding(project, name, call):
    """improved-diffusion's image_train.py: the script itself mentions no framework; TrainLoop trains (also
    when built by a factory, as mindyolo's create_trainer builds its Trainer)."""
    write(project, {"trainer.py": TRAINER_MODULE,
                    "train.py": DELEGATING_SCRIPT.format(name=name, call=call)})
    assert lint(project / "train.py", "seed-missing", "no-deterministic-algos") == [
        ("seed-missing", 12), ("no-deterministic-algos", 12)]


def test_training_code_called_only_under_a_flag_off_by_default_is_not_followed(project):
    """yolov5's models/yolo.py: `elif opt.profile:` (a store_true flag) profiles forward and backward passes through
    a project helper; by default the script only builds the model."""
    call = ("parser = argparse.ArgumentParser()\n    parser.add_argument('--profile', action='store_true')\n"
            "    if parser.parse_args().profile:\n        train_one_epoch(None, None, [])")
    write(project, {"trainer.py": TRAINER_MODULE,
                    "train.py": DELEGATING_SCRIPT.format(name="train_one_epoch", call=call)})
    assert lint(project / "train.py", "seed-missing", "no-deterministic-algos") == []


def test_a_training_function_a_package_re_exports_is_followed(project):
    """pytorch/examples' FSDP T5 script imports `train` from utils/__init__.py, which imports it from .train_utils."""
    write(project, {"utils/train_utils.py": TRAINER_MODULE, "utils/__init__.py": "from .train_utils import train_one_epoch\n",
                    "train.py": DELEGATING_SCRIPT.format(name="train_one_epoch", call="train_one_epoch(model, opt, data)")
                    .replace("from trainer import", "from utils import")})
    assert lint(project / "train.py", "seed-missing") == [("seed-missing", 12)]


def test_an_evaluation_script_that_only_builds_a_training_class_needs_no_seeding(project):
    """mindspore-lab/models' Wide&Deep eval.py builds its TrainStepWrap only for `Model(train_net).eval(...)`."""
    evaluate = DELEGATING_SCRIPT.format(name="TrainLoop", call="loop = TrainLoop(model, data)")
    write(project, {"trainer.py": TRAINER_MODULE, "eval.py": evaluate, "train.py": evaluate})
    assert lint(project / "eval.py", "seed-missing") == []
    assert lint(project / "train.py", "seed-missing") == [("seed-missing", 12)]  # a training script builds it to train


def test_a_data_class_building_a_training_object_in_post_init_trains_nothing(project):
    """nanotron's config scripts build `ParallelismArgs(...)`, whose `__post_init__` builds its default pipeline
    engine (a class whose `train_batch_iter` runs backward) and only saves the config."""
    config = ("from dataclasses import dataclass\n\nfrom trainer import TrainLoop\n\n\n@dataclass\nclass Args:\n"
              "    loop: object = None\n\n    def __post_init__(self):\n        self.loop = TrainLoop(None, [])\n")
    write(project, {"trainer.py": TRAINER_MODULE, "config.py": config,
                    "make_config.py": DELEGATING_SCRIPT.format(name="Args", call="print(Args())")
                    .replace("from trainer import", "from config import")})
    assert lint(project / "make_config.py", "seed-missing") == []


def test_a_training_object_built_as_an_argument_is_handed_over(project):
    """nanotron's run_generate.py and checkpoint converters build `ParallelismArgs(pp_engine=
    OneForwardOneBackwardPipelineEngine())`: the engine's `train_batch_iter` runs backward, but only what receives
    the engine could run it (ParallelismArgs stores it)."""
    write(project, {"trainer.py": TRAINER_MODULE,
                    "convert.py": DELEGATING_SCRIPT.format(name="TrainLoop", call="print(dict(loop=TrainLoop(model, data)))")})
    assert lint(project / "convert.py", "seed-missing", "no-deterministic-algos") == []


STEP_HELPERS = """
import torch


def init_loader(data, seed=777):
    generator = torch.Generator()
    generator.manual_seed(seed)  # the loader's own generator: pins nothing global
    return torch.utils.data.DataLoader(data, shuffle=True, generator=generator)


def batch_backward(model, batch):
    model(batch).sum().backward()
"""
EXECUTOR = """
import torch
from utils.train_utils import batch_backward


class Executor:
    def train(self, model, optimizer, loader):
        for batch in loader:
            batch_backward(model, batch)
            optimizer.step()
"""


def test_a_script_training_through_two_project_modules_needs_seeding(project):
    """WeNet's train.py: `Executor.train` (utils/executor.py) steps through `batch_backward` (utils/train_utils.py)."""
    write(project, {"utils/__init__.py": "", "utils/train_utils.py": STEP_HELPERS,
                    "utils/executor.py": EXECUTOR.replace("            optimizer.step()\n", ""),
                    "train.py": DELEGATING_SCRIPT.replace("from trainer import {name}", "from utils.executor import {name}")
                    .format(name="Executor", call="Executor().train(model, opt, data)")})
    assert lint(project / "train.py", "seed-missing", "no-deterministic-algos") == [
        ("seed-missing", 12), ("no-deterministic-algos", 12)]


def test_project_modules_importing_each_other_end(project):
    write(project, {"a.py": "from b import step\n\n\ndef train(model, data):\n    for x in data:\n        step(model, x)\n",
                    "b.py": "from a import train\n\n\ndef step(model, x):\n    train(model, [x])\n",
                    "train.py": DELEGATING_SCRIPT.replace("from trainer", "from a").format(name="train",
                                                                                      call="train(model, data)")})
    assert lint(project / "train.py", "seed-missing") == []


def test_a_script_training_through_a_mindspore_module_gets_the_mindspore_message(project):
    trainer = ("from mindspore import nn\nfrom mindspore.train import Model\n\n\ndef fit(net, data):\n"
               "    model = Model(net, nn.MSELoss(), nn.Momentum(net.trainable_params(), 0.01, 0.9))\n"
               "    model.train(1, data)\n")
    write(project, {"trainer.py": trainer,
                    "train.py": DELEGATING_SCRIPT.format(name="fit", call="fit(model, data)")})
    result = lint_source(str(project / "train.py"), (project / "train.py").read_bytes(),
                         [RULES_BY_NAME["no-deterministic-algos"]])
    assert [(f.line, "MindSpore" in f.message) for f in result.findings] == [(12, True)]


@pytest.mark.parametrize(("pins", "expected"), [
    ("torch.backends.cudnn.deterministic = True", [("seed-missing", 12)]),
    # fairseq's Trainer seeds (`utils.set_torch_seed` in `_set_seed`) but switches no deterministic kernels on.
    ("set_seed(0)", [("no-deterministic-algos", 12)]),
    ("set_seed(0, deterministic=True)", []),
])
def test_a_project_module_that_trains_is_trusted_with_what_it_pins(project, pins, expected):
    """What a training module pins is not followed from the script: a module that seeds is trusted to seed,
    one that switches deterministic kernels on to switch them on, and nothing more."""
    write(project, {"trainer.py": TRAINER_MODULE.replace("    def run_loop(self):\n",
                                                         f"    def run_loop(self):\n        {pins}\n"),
                    "train.py": DELEGATING_SCRIPT.format(name="TrainLoop", call="TrainLoop(model, data).run_loop()")})
    assert lint(project / "train.py", "seed-missing", "no-deterministic-algos") == expected


def test_a_project_function_given_to_a_launcher_trains(project):
    """fairseq's hydra_train.py runs `fairseq_cli.train.main` through `distributed_utils.call_main(cfg, pre_main)`."""
    write(project, {"trainer.py": TRAINER_MODULE.replace("def train_one_epoch(model, optimizer, loader):\n",
                                                         "def train_one_epoch(model, optimizer, loader):\n"
                                                         "    set_seed(0)\n"),
                    "train.py": DELEGATING_SCRIPT.format(name="train_one_epoch as pre_main",
                                                         call="call_main(args, pre_main)")})
    assert lint(project / "train.py", "seed-missing", "no-deterministic-algos") == [("no-deterministic-algos", 12)]


def test_calling_a_project_module_that_only_evaluates_needs_no_seed(project):
    write(project, {"trainer.py": "def evaluate(model, data):\n    return [model(x) for x in data]\n",
                    "train.py": DELEGATING_SCRIPT.format(name="evaluate", call="evaluate(model, data)")})
    assert lint(project / "train.py", "seed-missing") == []


@pytest.mark.parametrize(("helper", "expected"), [
    ("from mindspore import set_seed\nset_seed(1)\n\n\ndef helper():\n    return 1\n", []),
    ("from mindspore import set_seed\n\n\ndef init_seeds(s):\n    set_seed(s)\n\n\ndef helper():\n    return 1\n\n\n"
     "init_seeds(1)\n", []),
    ("from mindspore import set_seed\n\n\ndef helper():\n    return 1\n\n\nif __name__ == '__main__':\n    set_seed(1)\n",
     [("seed-missing", 5)]),
])
def test_a_project_module_seeding_when_imported_counts(project, helper, expected):
    """mindspore model zoo (DeepID, tinynet): `src/utils.py` calls `set_seed(1)` at its top level."""
    write(project, {"src/__init__.py": "", "src/utils.py": helper,
                    "train.py": "from mindspore import nn\nfrom mindspore.train import Model\nfrom src.utils import helper\n\n"
                                "if __name__ == '__main__':\n    net = nn.Dense(4, 2)\n"
                                "    Model(net, nn.MSELoss(), nn.Momentum(net.trainable_params(), 0.01, 0.9)).train(1, None)\n"})
    assert lint(project / "train.py", "seed-missing") == expected


SEEDS_NUMPY_ON_IMPORT = "import numpy as np\n\nnp.random.seed(42)\n\n\nclass Actor:\n    pass\n"


@pytest.mark.parametrize(("files", "imports", "expected"), [
    ({"algo/__init__.py": "from algo.actor import Actor\n", "algo/actor.py": SEEDS_NUMPY_ON_IMPORT,
      "algo/config.py": "X = 1\n"}, "from algo import config", []),
    ({"algo/__init__.py": "", "algo/actor.py": SEEDS_NUMPY_ON_IMPORT,
      "algo/config.py": "from .actor import Actor\n"}, "from algo import config", []),
    ({"algo/__init__.py": "", "algo/actor.py": SEEDS_NUMPY_ON_IMPORT,
      "algo/config.py": "X = 1\n"}, "from algo import config", [("seed-missing", 5)]),
    ({"algo/__init__.py": "", "algo/more.py": "from algo.deeper import Y\n",
      "algo/deeper.py": "from algo.deepest import Z\n", "algo/deepest.py": "from algo.actor import Actor\n",
      "algo/actor.py": SEEDS_NUMPY_ON_IMPORT},
     "from algo.more import Y", [("seed-missing", 5)]),  # a fourth module: beyond MAX_IMPORT_HOPS
])
def test_a_seed_set_by_a_module_an_import_runs_in_turn_counts(project, files, imports, expected):
    """mindrl's example/a2c/train.py imports `mindspore_rl.algorithm.a2c.config`: the package's `__init__.py` (and
    config.py's `from .a2c import ...`) import a2c.py, which runs `np.random.seed(SEED)` at its top level."""
    write(project, {**files, "train.py": "from mindspore import nn\nfrom mindspore.train import Model\n"
                                         f"{imports}\n\nif __name__ == '__main__':\n    net = nn.Dense(4, 2)\n"
                                         "    Model(net, nn.MSELoss(), nn.Momentum(net.trainable_params(), 0.01, "
                                         "0.9)).train(1, None)\n"})
    assert lint(project / "train.py", "seed-missing") == expected


# --- conditions under the default arguments -----------------------------------------------------
def conditional_script(argument: str, condition: str) -> str:
    return textwrap.dedent(f"""\
        import argparse
        import torch

        parser = argparse.ArgumentParser()
        parser.add_argument({argument})
        {TRAIN_LOOP.strip().replace(chr(10), chr(10) + '        ')}


        if __name__ == "__main__":
            args = parser.parse_args()
            if {condition}:
                torch.manual_seed(0)
            train(None, [])
        """)


@pytest.mark.parametrize(("argument", "condition", "fires"), [
    ('"--seed", type=int', "args.seed is not None", True),
    ('"--seed", type=int, default=None', "args.seed is not None", True),
    ('"--seed", type=int, default=7', "args.seed is not None", False),
    ('"--seed", type=int, default=-1', "args.seed >= 0", True),
    ('"--seed", type=int, default=0', "args.seed", True),
    ('"--seed", type=int, default=3', "args.seed", False),
    ('"--no-seed", action="store_true"', "not args.no_seed", False),
    ('"--deterministic", action="store_true"', "args.deterministic", True),
    ('"--seed", dest="random_seed", type=int', "args.random_seed is not None and args.random_seed > 0", True),
    ('"--seed", type=int', "args.seed is not None or args.debug", False),  # unknown: may seed
    ('"--seed", type=int', "cfg.rng_seed is not None", "may"),  # not an argparse option: it may be None
    ('"--seed", type=int, required=True', "args.seed is not None", False),
])
def test_seeding_under_a_condition(tmp_path, argument, condition, fires):
    path = tmp_path / "train.py"
    path.write_text(conditional_script(argument, condition))
    found = lint(path, "seed-missing")
    assert found == ([("seed-missing", 16)] if fires else [])
    if fires:
        result = lint_source(str(path), path.read_bytes(), [RULES_BY_NAME["seed-missing"]])
        message = "may be unseeded" if fires == "may" else "false with the default arguments"
        assert message in result.findings[0].message


def test_set_defaults_overrides_the_argument_default(tmp_path):
    path = tmp_path / "train.py"
    text = conditional_script('"--seed", type=int', "args.seed is not None")
    path.write_text(text.replace("type=int)\n", "type=int)\nparser.set_defaults(seed=5)\n"))
    assert lint(path, "seed-missing") == []


# --- where whole-script findings point --------------------------------------------------------------
def test_whole_script_findings_point_at_the_main_guard(tmp_path):
    path = tmp_path / "train.py"
    path.write_text(script("", "pass"))
    result = lint_source(str(path), path.read_bytes(), [RULES_BY_NAME["seed-missing"]])
    (finding,) = result.findings
    assert (finding.line, finding.column, finding.end_line) == (12, 1, 12)
    assert finding.end_column == len("if __name__ == '__main__'") + 1


def test_whole_script_findings_point_at_the_module_level_loop(tmp_path):
    path = tmp_path / "train.py"
    path.write_text("import torch\n\nmodel = torch.nn.Linear(2, 2)\nopt = torch.optim.SGD(model.parameters())\n"
                    "for step, batch in enumerate(loader):\n    opt.zero_grad()\n    model(batch).sum().backward()\n"
                    "    opt.step()\n")
    result = lint_source(str(path), path.read_bytes(), [RULES_BY_NAME["seed-missing"],
                                                         RULES_BY_NAME["no-deterministic-algos"]])
    assert {(f.name, f.line, f.column, f.end_line) for f in result.findings} == {
        ("seed-missing", 5, 1, 5), ("no-deterministic-algos", 5, 1, 5)}


def test_evaluation_only_draws_do_not_make_a_script_need_seeds(tmp_path):
    path = tmp_path / "validate.py"
    path.write_text("import torch\n\n\ndef validate(model):\n    warmup = torch.randn(1, 3, 224, 224)\n"
                    "    return model(warmup)\n\n\nif __name__ == '__main__':\n    validate(torch.nn.Identity())\n")
    assert lint(path, "seed-missing", "no-deterministic-algos") == []


@pytest.mark.parametrize("main", [
    "model = Net()\n    assert model(torch.randn(2, 3, 32, 32)).shape == (2, 10)",  # a smoke test
    "for i in range(10):\n        writer.add_scalar('loss', random.random() * i, i)",  # fake data for a demo
    "stats = [x.mean() for x in torch.utils.data.DataLoader(dataset, shuffle=True)]",
])
def test_scripts_whose_randomness_does_not_matter(tmp_path, main):
    path = tmp_path / "demo.py"
    path.write_text(f"import random\n\nimport torch\n\nif __name__ == '__main__':\n    {main}\n")
    assert lint(path, "seed-missing", "no-deterministic-algos") == []


@pytest.mark.parametrize(("seeding", "fires"), [
    ("random.seed()", True),  # a fresh seed from the OS every run
    ("np.random.seed(None)", True),
    ("random.seed(a=None)", True),
    ("np.random.seed(seed=0)", False),
    ("random.seed(args_seed)", False),
])
def test_seeding_without_a_seed_is_not_seeding(tmp_path, seeding, fires):
    # Reported once, at the seeding call, by entropy-seed (seed-missing leaves such scripts to it).
    path = tmp_path / "train.py"
    path.write_text(script("import random\nimport numpy as np", seeding))
    assert [name for name, _ in lint(path, "seed-missing", "entropy-seed")] == (["entropy-seed"] if fires else [])


# --- MindSpore's three seeds (checked against MindSpore 2.10) -------------------------------------
def mindspore_script(seeding: str, draws: str) -> str:
    return ("import random\n\nimport mindspore as ms\nimport mindspore.dataset as ds\nimport numpy as np\n"
            "from mindspore import mint, nn, ops\n\n\ndef main():\n"
            f"    {seeding}\n    {draws}\n\n\nif __name__ == '__main__':\n    main()\n")


def messages(path: Path, *names: str) -> list[tuple[int, str]]:
    result = lint_source(str(path), path.read_bytes(), [RULES_BY_NAME[n] for n in names])
    return [(f.line, f.message) for f in result.findings]


@pytest.mark.parametrize(("seeding", "draws", "expected"), [
    # `mindspore.set_seed` seeds random, NumPy, the pipeline and the operators.
    ("ms.set_seed(1)", "random.shuffle(x); np.random.rand(3); ops.standard_normal((2,)); nn.Dropout(p=0.5)", []),
    # `dataset.config.set_seed` seeds random and NumPy but not the operators.
    ("ds.config.set_seed(1)", "random.shuffle(x); np.random.rand(3)", []),
    ("ds.config.set_seed(1)", "random.shuffle(x); y = ops.uniform((2,), a, b)", [11]),
    ("ds.config.set_seed(1)", "layer = nn.Dropout(keep_prob=0.9)", [11]),
    ("ds.config.set_seed(1)", "y = ops.randn(2, 3); z = ops.dropout(y, p=0.1)", [11]),
    # draws that do not use the global operator seed
    ("ds.config.set_seed(1)", "y = ops.standard_normal((2,), 7); z = ops.randn(2, seed=3)", []),
    ("ds.config.set_seed(1)", "a = nn.Dropout(p=0.0); b = nn.Dropout(1.0); c = ops.dropout(x, 0.0)", []),
    # `mint` draws follow `mindspore.manual_seed` only.
    ("ms.set_seed(1)", "y = mint.randn(2, 3)", [11]),
    ("ms.set_seed(1); ms.manual_seed(1)", "y = mint.randn(2, 3); z = ops.randn(2)", []),
    ("ms.set_seed(1)", "y = mint.rand(2, generator=g)", []),
])
def test_mindspore_seeding_semantics(tmp_path, seeding, draws, expected):
    path = tmp_path / "train.py"
    path.write_text(mindspore_script(seeding, draws))
    assert [line for line, _ in messages(path, "seed-partial")] == expected


def test_dataset_seed_message_says_to_seed_the_operators(tmp_path):
    path = tmp_path / "train.py"
    path.write_text(mindspore_script("ds.config.set_seed(1)", "y = ops.standard_normal((2,))"))
    ((_, message),) = messages(path, "seed-partial")
    assert "`mindspore.dataset.config.set_seed` does not seed operators" in message
    assert message.endswith("call `mindspore.set_seed(seed)`")


def test_mint_message_says_to_seed_the_default_generator(tmp_path):
    path = tmp_path / "train.py"
    path.write_text(mindspore_script("ms.set_seed(1)", "y = mint.normal(0.0, 1.0, (2,))"))
    ((_, message),) = messages(path, "seed-partial")
    assert "`mindspore.set_seed` does not seed it" in message and "`mindspore.manual_seed(seed)`" in message


def test_mindspore_initializers_draw_from_numpy(tmp_path):
    path = tmp_path / "init.py"
    path.write_text("import random\n\nfrom mindspore.common.initializer import Normal, initializer\n\n"
                    "random.seed(0)\nweight = initializer(Normal(0.02), [4, 4])\n")
    assert [line for line, _ in messages(path, "seed-partial")] == [6]


def test_dataset_seed_alone_counts_as_seeding(tmp_path):
    path = tmp_path / "train.py"
    path.write_text("import mindspore.dataset as ds\nfrom mindspore import nn\nfrom mindspore.train import Model\n\n"
                    "ds.config.set_seed(1)\nnet = nn.Dense(4, 2)\n"
                    "model = Model(net, nn.MSELoss(), nn.Momentum(net.trainable_params(), 0.01, 0.9))\n"
                    "model.train(1, train_dataset)\n")
    assert lint(path, "seed-missing") == []


# --- what is (not) read from other files --------------------------------------------------------------
def test_direct_seeding_settles_it_without_reading_helpers(project, monkeypatch):
    """Every family project code could draw from is seeded by the script itself: no helper is read, not even for
    seed-partial's draws in project code."""
    write(project, {"utils.py": SEEDS_ALL, "train.py": script(
        "import random\nimport numpy as np\nfrom utils import set_seed, prepare",
        "random.seed(0)\n    np.random.seed(0)\n    torch.manual_seed(0)\n    prepare()")})
    loaded = []
    monkeypatch.setattr("msprobe_rewriter.project.load", lambda path: loaded.append(path))
    assert lint(project / "train.py", "seed-missing", "seed-partial") == []
    assert loaded == []


def test_standard_library_modules_are_not_project_helpers(project):
    # Standard-library names are never looked up as project files (shadowing one is a bug of its own).
    write(project, {"logging.py": SEEDS_ALL.replace("def set_seed", "def info"),
                    "train.py": script("import logging", "logging.info(0)")})
    assert lint(project / "train.py", "seed-missing") == [("seed-missing", 12)]


def test_installed_packages_are_their_own_project_root(tmp_path):
    write(tmp_path, {"site-packages/helpers.py": SEEDS_ALL.replace("def set_seed", "def prepare"),
                     "site-packages/pkg/train.py": script("from helpers import prepare", "prepare(0)")})
    assert lint(tmp_path / "site-packages" / "pkg" / "train.py", "seed-missing") == [("seed-missing", 12)]


def test_imports_nested_in_blocks_of_a_helper_are_seen(project):
    helper = ("try:\n    import numpy\nexcept ImportError:\n    numpy = None\n\n\n"
              "def set_seed(seed):\n    import torch as T\n    if numpy is not None:\n        numpy.random.seed(seed)\n"
              "    T.manual_seed(seed)\n")
    write(project, {"rng.py": helper, "train.py": script("import numpy as np\nfrom rng import set_seed",
                                                         "set_seed(0)\n    np.random.rand(2)")})
    assert lint(project / "train.py", "seed-missing", "seed-partial") == []


SPEECHBRAIN_RECIPE = """
import sys

import speechbrain as sb
from hyperpyyaml import load_hyperpyyaml


class ASR(sb.Brain):
    pass


if __name__ == "__main__":
    hparams_file, run_opts, overrides = sb.parse_arguments(sys.argv[1:])
    with open(hparams_file) as fin:
        hparams = {load}
    ASR(modules=hparams["modules"], opt_class=hparams["opt_class"]).fit(range(2), hparams["train"])
"""


@pytest.mark.parametrize(("load", "expected"), [("load_hyperpyyaml(fin, overrides)", [("no-deterministic-algos", 12)]),
                                                ("dict(fin)", [("seed-missing", 12), ("no-deterministic-algos", 12)])],
                         ids=["hparams YAML", "no YAML"])
def test_a_speechbrain_recipe_trains_with_brain_fit_and_seeds_in_its_hparams(tmp_path, load, expected):
    """SpeechBrain recipes seed in their YAML (`!apply:speechbrain.utils.seed_everything`), which
    `load_hyperpyyaml` runs; `Brain.fit` trains, on PyTorch, with deterministic kernels off."""
    path = tmp_path / "train.py"
    path.write_text(textwrap.dedent(SPEECHBRAIN_RECIPE.format(load=load)))
    assert lint(path, "seed-missing", "no-deterministic-algos") == expected


def test_every_seeded_family_has_a_label():
    from msprobe_rewriter.catalogue import SEED_CALLS
    from msprobe_rewriter.rules.seed_partial import FAMILY_LABEL

    assert set(SEED_CALLS) <= set(FAMILY_LABEL)


# --- options defined by a project helper given the script's parser ------------------------------
ADDS_OPTIONS = """
def add_training_arguments(parser):
    parser.add_argument("--seed", type=int, default=None)
"""


def test_a_seed_option_defined_by_a_parser_helper_of_the_project_keeps_its_default(project):
    """sd-scripts' `train_util.add_training_arguments(parser)` defines `--seed` (None): `if args.seed is not None:`
    skips the seeding (seed-missing), and `args.seed = random.randint(...)` under `if args.seed is None:` draws
    the seed from the unseeded generator (entropy-seed)."""
    write(project, {"library/__init__.py": "", "library/train_util.py": ADDS_OPTIONS,
                    "guarded.py": """
                        import argparse
                        import torch
                        from accelerate.utils import set_seed
                        import library.train_util as train_util


                        def train(args):
                            if args.seed is not None:
                                set_seed(args.seed)
                            model = torch.nn.Linear(2, 2)
                            torch.optim.SGD(model.parameters(), lr=0.1).step()


                        if __name__ == "__main__":
                            parser = argparse.ArgumentParser()
                            train_util.add_training_arguments(parser)
                            train(parser.parse_args())
                        """,
                    "drawn.py": """
                        import argparse
                        import random
                        import torch
                        from accelerate.utils import set_seed
                        import library.train_util as train_util


                        def train(args):
                            if args.seed is None:
                                args.seed = random.randint(0, 2**32)
                            set_seed(args.seed)
                            model = torch.nn.Linear(2, 2)
                            torch.optim.SGD(model.parameters(), lr=0.1).step()


                        if __name__ == "__main__":
                            parser = argparse.ArgumentParser()
                            train_util.add_training_arguments(parser)
                            train(parser.parse_args())
                        """})
    assert lint(project / "guarded.py", "seed-missing") == [("seed-missing", 9)]
    assert lint(project / "drawn.py", "entropy-seed") == [("entropy-seed", 12)]


def test_an_object_seeded_from_a_draw_in_a_library_function_is_left_to_the_script(project):
    """sd-scripts' `config_util`: a dataset's seed drawn from `random` in a function scripts import is fixed once
    the script seeds `random`; the same code in the script itself, before it seeds, is reported."""
    body = """
        import random


        def build(datasets):
            seed = random.randint(0, 2**31)
            for dataset in datasets:
                dataset.set_seed(seed)
        """
    write(project, {"config_util.py": body, "train.py": "from config_util import build\n", "alone.py": body})
    assert lint(project / "config_util.py", "entropy-seed") == []
    assert lint(project / "alone.py", "entropy-seed") == [("entropy-seed", 8)]


MEGATRON_QUANTIZE = """
import torch
from megatron.training import get_model, initialize_megatron


def score(model, batches):
    for batch in batches:
        model(batch).mean().backward()


if __name__ == "__main__":
    initialize_megatron()
    score(get_model(model_provider), batches)
"""


def test_megatron_scripts_get_megatron_advice_at_its_set_up(tmp_path):
    """Megatron-LM's modelopt quantize.py trains (auto-quantize's backward) after `initialize_megatron`: seeded,
    but deterministic kernels and NCCL's algorithm come only with `--deterministic-mode`."""
    path = tmp_path / "quantize.py"
    path.write_text(MEGATRON_QUANTIZE)
    result = lint_source(str(path), path.read_bytes(), [RULES_BY_NAME[name] for name in (
        "seed-missing", "no-deterministic-algos", "dist-no-deterministic-comm")])
    assert [(f.name, f.line, "`--deterministic-mode`" in f.message) for f in result.findings] == [
        ("no-deterministic-algos", 12, True), ("dist-no-deterministic-comm", 12, True)]


# --- library training loops the file runs through a project's classes (MindSpore Reinforcement) -------------
RL_SESSION = """
from mindspore_rl.core import Session


class DQNSession(Session):
    def __init__(self, env_yaml=None, algo_yaml=None):
        super().__init__(config.algorithm_config, None, params=config.trainer_params)
"""
RL_SCRIPT = """
from mindspore import context
from mindspore_rl.algorithm.dqn.dqn_session import DQNSession
from mindspore_rl.algorithm.dqn.dqn_trainer import DQNTrainer


def train(episode=650):
    context.set_context(mode=context.GRAPH_MODE)
    dqn_session = DQNSession(None, None)
    dqn_session.run(class_type=DQNTrainer, {arguments})


if __name__ == "__main__":
    train()
"""


@pytest.mark.parametrize(("arguments", "expected"), [
    ("episode=episode", [("seed-missing", 13), ("no-deterministic-algos", 13)]),
    ("is_train=False", []),  # the example's eval.py
])
def test_a_mindspore_rl_session_subclass_in_the_project_trains(project, arguments, expected):
    """mindrl's examples: `DQNSession(Session)` lives in a package of the project; `run` builds the trainer and
    runs its episodes (mindspore_rl/core/session.py), unless told `is_train=False`."""
    write(project, {"mindspore_rl/algorithm/dqn/dqn_session.py": RL_SESSION,
                    "example/dqn/train.py": RL_SCRIPT.format(arguments=arguments)})
    assert lint(project / "example" / "dqn" / "train.py", "seed-missing", "no-deterministic-algos") == expected


def test_a_model_a_project_factory_builds_trains_by_model_trains_keywords(project):
    """mindediting's train.py: `create_trainer_by_name(...)` returns `Model(...)`; `trainer.train(...,
    dataset_sink_mode=...)` runs it (the debugger transform takes it for Model.train too)."""
    write(project, {"helpers.py": "import mindspore\n\n\ndef create_trainer_by_name(name, net, loss, opt):\n"
                                  "    return mindspore.train.model.Model(net, loss_fn=loss, optimizer=opt)\n",
                    "run.py": "import mindspore\nfrom helpers import create_trainer_by_name\n\n\n"
                              "def main(net, loss, opt, loader):\n    trainer = create_trainer_by_name('x', net, loss, opt)\n"
                              "    trainer.train(1, loader, callbacks=[], dataset_sink_mode=False)\n\n\n"
                              "if __name__ == '__main__':\n    main(None, None, None, None)\n"})
    assert lint(project / "run.py", "seed-missing", "no-deterministic-algos") == [
        ("seed-missing", 10), ("no-deterministic-algos", 10)]


# --- a project's own copy of Megatron ---------------------------------------------------------------------------
MEGATRON_SCRIPT = """
from megatron.training import pretrain


def main():
    pretrain(neox_args=neox_args)


if __name__ == "__main__":
    main()
"""


@pytest.mark.parametrize(("arguments", "fork"), [
    ("NEOX_ARGS = {'seed': 1234}\n", True),  # gpt-neox: YAML keys, no --deterministic-mode
    ("def add(parser):\n    parser.add_argument('--deterministic-mode', action='store_true')\n", False),  # Megatron-LM
])
def test_a_project_megatron_without_deterministic_mode_gets_other_advice(project, arguments, fork):
    """gpt-neox's `megatron` is its own fork, configured by YAML keys: `--deterministic-mode` does not exist there.
    MSP104 advises seed_all and NCCL_ALGO; MSP602 is left to the fork's own start of communication."""
    from msprobe_rewriter.context import FileContext
    from msprobe_rewriter.rules.dist_no_deterministic_comm import megatron_lacks_deterministic_mode

    write(project, {"megatron/__init__.py": "", "megatron/training.py": "def pretrain(neox_args):\n    pass\n",
                    "megatron/neox_arguments/arguments.py": arguments, "train.py": MEGATRON_SCRIPT})
    path = project / "train.py"
    source = path.read_text()
    assert megatron_lacks_deterministic_mode(FileContext(str(path), source, ast.parse(source))) is fork
    result = lint_source(str(path), path.read_bytes(), [RULES_BY_NAME["no-deterministic-algos"],
                                                        RULES_BY_NAME["dist-no-deterministic-comm"]])
    found = [(f.name, f.line, "--deterministic-mode`" in f.message and "pass" in f.message) for f in result.findings]
    if fork:
        assert found == [("no-deterministic-algos", 6, False)]
        assert "seed_all(seed, mode=True)" in result.findings[0].message
        assert "NCCL_ALGO" in result.findings[0].message
    else:
        assert found == [("no-deterministic-algos", 6, True), ("dist-no-deterministic-comm", 6, True)]


# --- determinism switches given as options ------------------------------------------------------------------------
SEED_HELPER_WITH_SWITCH = """
import random

import torch


def set_random_seed(seed, deterministic=False):
    random.seed(seed)
    torch.manual_seed(seed)
    if deterministic:
        torch.use_deterministic_algorithms(True)
"""


@pytest.mark.parametrize(("action", "expected"), [
    ("store_true", [("no-deterministic-algos", 17)]),  # off by default: reported at the option
    ("store_false", []),
])
def test_a_helpers_determinism_switch_given_as_an_option_counts_only_when_on(project, action, expected):
    """InternImage's `set_random_seed(seed, deterministic=args.deterministic)`, here a project helper: the switch is
    on only when the option is, so an off-by-default `--deterministic` is reported at that option."""
    body = ("parser = argparse.ArgumentParser()\n"
            f"    parser.add_argument('--deterministic', action='{action}')\n    args = parser.parse_args()\n"
            "    set_random_seed(0, deterministic=args.deterministic)")
    write(project, {"utils.py": SEED_HELPER_WITH_SWITCH,
                    "train.py": script("import argparse\nfrom utils import set_random_seed", body)})
    assert lint(project / "train.py", "seed-missing", "no-deterministic-algos") == expected


CONFIG_CLASS = """
from dataclasses import dataclass


@dataclass
class TrainPipelineConfig:
    seed: int | None = 1000
    cudnn_deterministic: bool = {value}
"""
CONFIG_SCRIPT = """
import torch
from configs.train import TrainPipelineConfig


def train(cfg: TrainPipelineConfig):
    if cfg.seed is not None:
        torch.manual_seed(cfg.seed)
    if cfg.cudnn_deterministic:
        torch.backends.cudnn.deterministic = True
    model = torch.nn.Linear(2, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for x in torch.randn(4, 8, 2):
        model(x).sum().backward()
        optimizer.step()


if __name__ == "__main__":
    train(parse())
"""


@pytest.mark.parametrize(("value", "expected"), [
    ("False", ("no-deterministic-algos", 9, "warning")),  # no switch at all by default: at its condition
    ("True", ("no-deterministic-algos", 10, "info")),  # cuDNN's flag is the only switch
])
def test_a_project_config_dataclass_gives_the_defaults_of_its_fields(project, value, expected):
    """lerobot's `def train(cfg: TrainPipelineConfig)`: the dataclass, in another file of the project, says
    `cudnn_deterministic` is False by default, and `seed` is not None."""
    write(project, {"configs/__init__.py": "", "configs/train.py": CONFIG_CLASS.format(value=value),
                    "train.py": CONFIG_SCRIPT})
    path = project / "train.py"
    result = lint_source(str(path), path.read_bytes(), [RULES_BY_NAME["seed-missing"],
                                                        RULES_BY_NAME["no-deterministic-algos"]])
    assert [(f.name, f.line, f.severity) for f in result.findings] == [expected]


LOADER_MODULE = """
import random

import numpy as np


class MetaLoader:
    def __init__(self, n):
        self.order = np.random.permutation(n)
        random.seed(1)

    def __getitem__(self, index):
        return self.order[index]
"""
DATA_MODULE = """
from loader import MetaLoader


def load_data(n):
    return MetaLoader(n)
"""


def test_a_data_loader_seeding_its_own_random_does_not_seed_the_script(project):
    """Taichu-GLIDE's `load_data(...)` builds a `MetaLoader` whose `__init__` calls `random.seed(1)` for its own
    sampling: that seeds no generator for the script, which still trains unseeded."""
    write(project, {"loader.py": LOADER_MODULE, "data.py": DATA_MODULE,
                    "train.py": script("from data import load_data", "loader = load_data(4)")})
    assert lint(project / "train.py", "seed-missing") == [("seed-missing", 12)]


# --- Composer (llm-foundry trains with it) -------------------------------------------------------------------------
COMPOSER_TRAIN = """
from composer import Trainer
from composer.utils import dist, get_device, reproducibility


def train(cfg):
    dist.initialize_dist(get_device(None), timeout=cfg.dist_timeout)
    {seeding}
    model = build_composer_model(cfg.model)
    trainer = Trainer(model=model, train_dataloader=loader, max_duration=cfg.max_duration, {arguments})
    trainer.fit()
    return trainer
"""


@pytest.mark.parametrize(("seeding", "arguments", "expected"), [
    # llm-foundry's command_utils/train.py: seeded, deterministic kernels off
    ("reproducibility.seed_all(cfg.seed)", "seed=cfg.seed", [("no-deterministic-algos", 5, True)]),
    ("reproducibility.configure_deterministic_mode()", "seed=cfg.seed", []),
    ("pass", "seed=cfg.seed, deterministic_mode=True", []),
    # without `seed=` the Trainer seeds from the clock: the module seeds nothing (entropy-seed reports it there)
    ("pass", "deterministic_mode=True", [("seed-missing", 5, False)]),
])
def test_a_script_training_through_a_project_module_running_composers_trainer(project, seeding, arguments, expected):
    """llm-foundry's scripts/train/train.py calls `train_from_yaml`, whose `train(cfg)` builds Composer's Trainer and
    runs `trainer.fit()`: the script trains, and is told about the Trainer's `deterministic_mode=`."""
    write(project, {"pkg/__init__.py": "", "pkg/train.py": COMPOSER_TRAIN.format(seeding=seeding, arguments=arguments),
                    "train.py": "import sys\n\nfrom pkg.train import train\n\nif __name__ == '__main__':\n"
                                "    train(sys.argv[1])\n"})
    path = project / "train.py"
    result = lint_source(str(path), path.read_bytes(), [RULES_BY_NAME[n] for n in ("seed-missing",
                                                                                  "no-deterministic-algos")])
    assert [(f.name, f.line, "`deterministic_mode=True`" in f.message) for f in result.findings] == expected


@pytest.mark.parametrize(("arguments", "expected"), [
    ("seed=17", []), ("seed=None", [("entropy-seed", 5)]), ("", [("entropy-seed", 5)]),
    ("**cfg.trainer", []),  # the seed may be among them
])
def test_composers_trainer_seeds_with_its_seed_and_from_the_clock_without_one(project, arguments, expected):
    write(project, {"train.py": "import torch\nfrom composer import Trainer\n\nif __name__ == '__main__':\n"
                                f"    trainer = Trainer(model=model, max_duration='1ep', {arguments})\n"
                                "    trainer.fit()\n"})
    assert lint(project / "train.py", "seed-missing", "entropy-seed") == expected


TRL_LORA_SCRIPT = """
import argparse

from peft import LoraConfig
from trl import GRPOConfig, ModelConfig, TrlParser, get_peft_config
from trainers import LocalTrainer

parser = argparse.ArgumentParser()
parser.add_argument("--use-lora", action="store_true")
args = parser.parse_args()
model_args = TrlParser(ModelConfig).parse_args_and_config()[0]
{config}
trainer = LocalTrainer(model="Qwen/Qwen2-0.5B", args=GRPOConfig(output_dir="out"), peft_config=peft_config)
trainer.train()
"""


@pytest.mark.parametrize(("config", "expected"), [
    ("peft_config = LoraConfig(r=8)", [("seed-missing", 13, "error")]),
    ("peft_config = None\nif args.use_lora:\n    peft_config = LoraConfig(r=8)", [("seed-missing", 15, "info")]),
    ("peft_config = get_peft_config(model_args)", [("seed-missing", 13, "info")]),
    ("peft_config = LoraConfig(r=8, init_lora_weights='pissa')", []),  # derived from the weights: nothing drawn
])
def test_a_project_subclass_of_a_trl_trainer_draws_its_lora_matrices_before_it_seeds(project, config, expected):
    """trl's GOLDTrainer(SFTTrainer) and a project's own subclass add LoRA matrices as their base does; a config made
    only under an option, or by trl's `get_peft_config` (only with `--use_peft`), is info naming that switch."""
    write(project, {"trainers.py": "from trl import SFTTrainer\n\n\nclass LocalTrainer(SFTTrainer):\n    pass\n",
                    "train.py": TRL_LORA_SCRIPT.format(config=config)})
    path = project / "train.py"
    result = lint_source(str(path), path.read_bytes(), [RULES_BY_NAME["seed-missing"]])
    assert [(f.name, f.line, f.severity) for f in result.findings] == expected


GENERATE_SCRIPT = """
import argparse

import torch
from transformers import GenerationConfig
from llava.model.builder import load_pretrained_model

parser = argparse.ArgumentParser()
parser.add_argument("--temperature", type=float, default={temperature})
parser.add_argument("--do-sample", action="store_true")


def eval_model(args):
    tokenizer, model, _, _ = load_pretrained_model(args.model_path)
    with torch.inference_mode():
        return model.generate(args.input_ids, {sampling})


if __name__ == "__main__":
    eval_model(parser.parse_args())
"""


@pytest.mark.parametrize(("temperature", "sampling", "expected"), [
    ("0.2", "do_sample=True if args.temperature > 0 else False", [("seed-missing", 19)]),  # LLaVA's eval scripts
    ("0", "do_sample=True if args.temperature > 0 else False", []),  # greedy with the default arguments
    ("0.2", "generation_config=GenerationConfig(do_sample=True)", [("seed-missing", 19)]),  # qlora's guanaco_generate
    ("0.2", "do_sample=args.do_sample", []),  # an option off by default
    ("0.2", "temperature=args.temperature", []),  # no do_sample: greedy, unless the model's generation config says
])
def test_sampling_with_transformers_generate_needs_a_seed(project, temperature, sampling, expected):
    """`model.generate(do_sample=True)` samples each token from torch's generator, in evaluation code too (the
    sampled answers are what is scored), whatever loads the model (LLaVA's `load_pretrained_model`)."""
    write(project, {"eval.py": GENERATE_SCRIPT.format(temperature=temperature, sampling=sampling)})
    assert lint(project / "eval.py", "seed-missing") == expected


LLAVA_TRAINER = """
import transformers
from torch.utils.data import RandomSampler


class LLaVATrainer(transformers.Trainer):
    def _get_train_sampler(self):
        if self.args.group_by_modality_length:
            return RandomSampler(self.train_dataset)
        return super()._get_train_sampler()
"""
LLAVA_TRAIN = """
from dataclasses import dataclass, field

import transformers
from llava_trainer import LLaVATrainer


@dataclass
class TrainingArguments(transformers.TrainingArguments):
    group_by_modality_length: bool = field(default={default})
"""


@pytest.mark.parametrize(("default", "expected"), [("False", "info"), ("True", "warning")])
def test_a_trainers_options_come_from_the_training_arguments_of_the_files_importing_it(project, default, expected):
    """LLaVA's llava_trainer.py reads `self.args.group_by_modality_length`, a field its importer train.py declares
    (False by default): the sampler under it is info there."""
    write(project, {"llava_trainer.py": LLAVA_TRAINER, "train.py": LLAVA_TRAIN.format(default=default)})
    path = project / "llava_trainer.py"
    result = lint_source(str(path), path.read_bytes(), [RULES_BY_NAME["data-shuffle"]])
    assert [(f.line, f.severity) for f in result.findings] == [(9, expected)]


@pytest.mark.parametrize(("imported", "expected"), [(True, []), (False, [("seed-partial", 7)])])
def test_a_library_module_with_a_tool_under_its_guard_leaves_its_functions_to_its_importers(project, imported,
                                                                                             expected):
    """dlrm's dlrm_data_pytorch.py: `make_criteo_data_and_loaders` (a `RandomSampler`) runs under the seeding of
    dlrm_s_pytorch.py, which imports it; the `np.random.seed` of its `__main__` trace tool is not that seeding."""
    write(project, {
        "data.py": "import numpy as np\nimport torch\nfrom torch.utils.data import DataLoader, RandomSampler\n\n\n"
                   "def make_loader(data):\n    return DataLoader(data, sampler=RandomSampler(data))\n\n\n"
                   "if __name__ == '__main__':\n    np.random.seed(123)\n    print(np.random.rand(3))\n",
        "main.py": ("import data\n" if imported else "") + "import torch\n\ntorch.manual_seed(0)\n"})
    assert lint(project / "data.py", "seed-partial") == expected


@pytest.mark.parametrize(("seeder", "expected"), [("np.random.seed(0)", [("seed-missing", 13)]),
                                                  ("torch.manual_seed(0)", [])])
def test_a_project_class_seeding_only_for_itself_is_not_the_script_seeding(project, seeder, expected):
    """torchrec's dlrm_main.py builds `Multihot`, whose lookup-table builder calls `np.random.seed(0)`: NumPy only,
    for its own tables; the torch model stays unseeded. A class seeding torch counts."""
    write(project, {
        "multi_hot.py": f"import numpy as np\nimport torch\n\n\nclass Multihot:\n    def __init__(self, sizes):\n"
                        f"        {seeder}\n        self.tables = [np.random.randint(9, size=s) for s in sizes]\n",
        "train.py": "import torch\nfrom multi_hot import Multihot\n\n\ndef main():\n    hot = Multihot([3])\n"
                    "    model = torch.nn.Linear(2, 2)\n    opt = torch.optim.SGD(model.parameters(), 0.1)\n"
                    "    model(torch.ones(2)).sum().backward()\n    opt.step()\n\n\n"
                    "if __name__ == '__main__':\n    main()\n"})
    assert lint(project / "train.py", "seed-missing") == expected


def test_a_mindspore_script_is_told_that_its_operators_are_unseeded(tmp_path):
    """applications' mindspore-GAN train.py seeds NumPy, shuffles fixed noise with `random`, and imports
    `mindspore.common.set_seed` without calling it: the finding on `random` says so, once."""
    path = tmp_path / "train.py"
    path.write_text("import random\n\nimport mindspore\nimport numpy as np\nfrom mindspore.common import set_seed\n\n"
                    "np.random.seed(2323)\nnoise = list(np.random.normal(size=(25, 4)))\nrandom.shuffle(noise)\n"
                    "random.random()\n\n\nif __name__ == '__main__':\n    mindspore.train.Model(net).train(1, data)\n")
    found = lint_source(str(path), path.read_bytes(), [RULES_BY_NAME["seed-partial"]]).findings
    assert [(f.line, "`mindspore.set_seed(seed)` too" in f.message) for f in found] == [(9, True)]


ENGINE = """
import random

import numpy as np


class Trainer:
    def __init__(self, model):
        self.model = model

    def fit(self, data):
        for batch in data:
            self.step(batch)

    def step(self, batch):
        return self.model(batch[np.random.permutation(len(batch))])


class StyleLoss:
    def __init__(self, mixing_prob=0.9):
        self.mixing_prob = mixing_prob

    def __call__(self, ws):
        if self.mixing_prob > 0:
            ws = ws[:random.randint(1, len(ws))]
        return ws.sum()


def evaluate(model, data):
    return [model(x) for x in random.sample(data, 10)]


def mix(batch):
    return batch * random.random()


def make_transform():
    return StyleLoss()
"""


def seeding_script(seeding: str, body: str) -> str:
    return ("import argparse\n\nimport numpy as np\nimport torch\n\nfrom engine import StyleLoss, Trainer, evaluate, mix\n"
            "from engine import make_transform\n\n\n"
            f"def main(args):\n    {seeding}\n    model = torch.nn.Linear(4, 4)\n"
            + "".join(f"    {line}\n" for line in body.split("; ")) + "\n\n"
            "if __name__ == '__main__':\n    parser = argparse.ArgumentParser()\n"
            "    parser.add_argument('--mix', action='store_true')\n    main(parser.parse_args())\n")


@pytest.mark.parametrize(("seeding", "body", "expected"), [
    # applications' stylegan2 style mixing: a loss class drawing from `random` each step, built by the script
    ("torch.manual_seed(0); np.random.seed(0)", "loss = StyleLoss(); loss(torch.randn(8))",
     [(11, "warning", "`StyleLoss.__call__` (engine.py:25), which this file runs through `StyleLoss(...)` (line 14), "
                      "draws `random.randint` from Python's `random`")]),
    # a project trainer's method, through the method it calls on itself
    ("torch.manual_seed(0)", "trainer = Trainer(model); trainer.fit([])",
     [(11, "warning", "`Trainer.step` (engine.py:16), which this file runs through `trainer.fit(...)` (line 14), "
                      "draws `numpy.random.permutation` from NumPy's global generator")]),
    # seeded: no finding; evaluation code is not the training run's
    ("torch.manual_seed(0); np.random.seed(0)", "trainer = Trainer(model); trainer.fit([])", []),
    ("torch.manual_seed(0); np.random.seed(0)", "evaluate(model, [])", []),
    # a callable a project factory builds and returns runs where it is used, if at all (open_clip's audio transforms
    # for an image model): the factory itself draws nothing
    ("torch.manual_seed(0); np.random.seed(0)", "transform = make_transform()", []),
    # MindSpore's `set_seed` seeds `random` too (through `dataset.config.set_seed`)
    ("torch.manual_seed(0); mindspore.set_seed(0)", "loss = StyleLoss(); loss(torch.randn(8))", []),
    # only behind an option off by default: info
    ("torch.manual_seed(0); np.random.seed(0)", "if args.mix:;     mix(torch.randn(4))",
     [(11, "info", "`mix` (engine.py:34), which this file runs through `mix(...)` (line 15), draws `random.random`")]),
])
def test_a_draw_in_project_code_the_script_runs_is_held_to_its_seeding(project, seeding, body, expected):
    """A family the script never seeds drawn in the project code it runs for training: reported at its first seeding
    statement, naming the drawing file and line."""
    text = seeding_script(seeding.replace("; ", "\n    "), body)
    text = text.replace("import argparse\n", "import argparse\n\nimport mindspore\n") if "mindspore" in seeding else text
    write(project, {"engine.py": ENGINE, "train.py": text})
    found = lint_source(str(project / "train.py"), (project / "train.py").read_bytes(),
                        [RULES_BY_NAME["seed-partial"]]).findings
    assert [(f.line, f.severity) for f in found] == [(line, severity) for line, severity, _ in expected]
    assert all(f.message.startswith(start) for f, (_, _, start) in zip(found, expected, strict=True))


INIT_ENV = """\
import random

import numpy as np
from mindspore import set_seed


def init_env(cfg):
    if cfg.system.random_seed is not None:
        random.seed(cfg.system.random_seed)
    if cfg.system.mindspore_seed is not None:
        set_seed(cfg.system.mindspore_seed)
    if cfg.system.numpy_seed is not None:
        np.random.seed(cfg.system.numpy_seed)
"""
INIT_ENV_TRAIN = """\
import mindspore
from mindspore import nn
from mindspore.train import Model

from utils.init_utils import init_env


def train(cfg):
    init_env(cfg)
    net = nn.Dense(4, 2)
    Model(net, nn.MSELoss(), nn.Adam(net.trainable_params())).train(1, dataset, dataset_sink_mode=False)


if __name__ == "__main__":
    train(parse_yaml("configs/train.yaml"))
"""


def test_seeding_only_when_a_config_value_is_not_none_in_a_helper_may_leave_the_run_unseeded(tmp_path):
    """mindediting's train.py calls init_env(cfg), which seeds each generator only `if cfg.system.<x>_seed is not
    None` (14 of its 23 training configs set them null): a warning at the call, naming the helper's test. A helper
    seeding unconditionally besides, or a seed the script's option gives, is sure."""
    root = write(tmp_path, {"pyproject.toml": "[project]\nname = 'demo'\n", "utils/__init__.py": "",
                            "utils/init_utils.py": INIT_ENV, "train.py": INIT_ENV_TRAIN})
    found = lint_findings(root / "train.py", "seed-missing")
    assert [(f.line, f.severity) for f in found] == [(9, "warning")]
    assert "`init_env(...)` seeds only when `cfg.system.random_seed is not None` (init_utils.py:8)" in found[0].message
    assert "may be unseeded" in found[0].message
    (root / "utils/init_utils.py").write_text(INIT_ENV + "    set_seed(0)\n")
    assert lint(root / "train.py", "seed-missing") == []


@pytest.mark.parametrize(("factory", "expected"), [
    ("def resnet50(classes):\n    return ResNet(classes)\n", [("seed-partial", 10)]),
    ("def resnet50(classes):\n    return classes\n", []),
])
def test_a_model_a_project_factory_builds_draws_its_weights(project, factory, expected):
    """step_into_llm's recompute/cifar_resnet50.py seeds only `random` and trains `resnet50(...)`, which returns
    resnet.py's `ResNet`, whose layers its `conv3x3` builds (MindSpore's initialisers draw from NumPy)."""
    write(project, {"resnet.py": "from mindspore import nn\n\n\ndef conv3x3(cin, cout):\n"
                                 "    return nn.Conv2d(cin, cout, 3, weight_init='XavierUniform')\n\n\n"
                                 "class ResNet(nn.Cell):\n    def __init__(self, classes):\n        super().__init__()\n"
                                 "        self.conv = conv3x3(3, classes)\n\n\n" + factory,
                    "train.py": "import random\n\nimport mindspore as ms\nfrom mindspore import nn\nfrom resnet import resnet50\n\n"
                                "random.seed(1)\n\nif __name__ == '__main__':\n    net = resnet50(10)\n"
                                "    model = ms.Model(net, nn.MSELoss(), nn.Momentum(net.trainable_params(), 0.01, 0.9))\n"
                                "    model.train(1, data, callbacks=[])\n"})
    assert lint(project / "train.py", "seed-partial") == expected

"""What other files of a project tell about a file: the data pipeline they hand its classes to (random-augment,
MSP303), and what their calls pass a parameter of its functions and classes (dropout MSP401, device-rng MSP201)."""

from __future__ import annotations

from pathlib import Path

from project_helpers import lint_findings
from project_helpers import write as write_project

# VideoMAE, cut down: datasets.py lists transforms.py's crop in a torchvision Compose and calls masking.py's
# generator, kept in an attribute, in its transform's `__call__`.
TRANSFORMS = """
import random


class GroupMultiScaleCrop(object):
    def __call__(self, img_group):
        size = self._sample_crop_size(img_group[0].size)
        return [img.crop(size) for img in img_group]

    def _sample_crop_size(self, im_size):
        return random.choice(self.pairs)


class GroupCenterCrop(object):
    def __call__(self, img_group):
        return [img.crop(self.box) for img in img_group]
"""
MASKING = """
import numpy as np


class TubeMaskingGenerator:
    def __call__(self):
        mask = np.hstack([np.zeros(self.visible), np.ones(self.masked)])
        np.random.shuffle(mask)
        return mask
"""
DATASETS = """
from torchvision import transforms
from transforms import *
from masking import TubeMaskingGenerator


class DataAugmentationForVideoMAE(object):
    def __init__(self, args):
        self.train_augmentation = GroupMultiScaleCrop(args.input_size)
        self.transform = transforms.Compose([self.train_augmentation, transforms.ToTensor()])
        self.masked_position_generator = TubeMaskingGenerator(args.window_size, args.mask_ratio)

    def __call__(self, images):
        return self.transform(images), self.masked_position_generator()
"""


def write(root: Path, files: dict[str, str]) -> Path:
    return write_project(root, {"pyproject.toml": "[project]\nname = 'demo'\n", **files})


def findings(path: Path, rule: str) -> list[tuple[int, str, str]]:
    return [(f.line, f.severity, f.message) for f in lint_findings(path, rule)]


def test_classes_another_file_hands_the_data_pipeline_draw_for_every_sample(tmp_path):
    root = write(tmp_path, {"transforms.py": TRANSFORMS, "masking.py": MASKING, "datasets.py": DATASETS})
    assert [line for line, *_ in findings(root / "transforms.py", "random-augment")] == [11]  # not the unused one
    found = findings(root / "masking.py", "random-augment")
    assert [line for line, *_ in found] == [8] and "shuffles with `numpy.random.shuffle`" in found[0][2]


def test_a_class_another_file_uses_only_once_is_not_per_sample(tmp_path):
    datasets = DATASETS.replace("self.masked_position_generator = TubeMaskingGenerator(args.window_size, "
                                "args.mask_ratio)", "self.mask = TubeMaskingGenerator(args.window_size, 0.9)()")
    root = write(tmp_path, {"masking.py": MASKING, "datasets.py": datasets.replace(
        ", self.masked_position_generator()", ", self.mask")})
    assert findings(root / "masking.py", "random-augment") == []


LAYERS = """
import torch.nn as nn


class Encoder(nn.Module):
    def __init__(self, channels, p_dropout=0.0):
        super().__init__()
        self.drop = nn.Dropout(p_dropout)
"""


def test_a_rate_another_file_passes_from_its_config_is_not_off(tmp_path):
    """vits: attentions.py's layers default to no dropout; models.py builds them with the rate of its JSON config."""
    root = write(tmp_path, {"layers.py": LAYERS, "models.py": "import layers\n\n\ndef build(hps):\n"
                                                              "    return layers.Encoder(192, hps.p_dropout)\n"})
    assert [severity for _, severity, _ in findings(root / "layers.py", "dropout")] == ["warning"]
    (root / "models.py").write_text("from layers import Encoder\n\nencoder = Encoder(192)\nsame = Encoder(8, 0.0)\n")
    assert [severity for _, severity, _ in findings(root / "layers.py", "dropout")] == ["info"]
    # VideoMAE's modeling_pretrain.py hands its own `drop_rate=0.` down, which no call there sets: still off
    (root / "models.py").write_text("from layers import Encoder\n\n\ndef build(drop_rate=0.0):\n"
                                    "    return Encoder(192, p_dropout=drop_rate)\n\n\nmodel = build()\n")
    assert [severity for _, severity, _ in findings(root / "layers.py", "dropout")] == ["info"]
    # minddiffusion's run_train.py passes an option whose default is off (`--random_crop`, default False)
    (root / "models.py").write_text("import argparse\n\nfrom layers import Encoder\n\n"
                                    "parser = argparse.ArgumentParser()\n"
                                    "parser.add_argument(\"--drop\", type=float, default=0.0)\n"
                                    "args = parser.parse_args()\nmodel = Encoder(192, p_dropout=args.drop)\n")
    assert [severity for _, severity, _ in findings(root / "layers.py", "dropout")] == ["info"]


def test_a_rate_set_by_a_file_importing_a_package_re_exporting_it_with_a_star(tmp_path):
    """applications' mobilevit: blocks/__init__.py does `from .layers import *`; transform.py builds the layer."""
    root = write(tmp_path, {"blocks/__init__.py": "from .layers import *\n", "blocks/layers.py": LAYERS,
                            "transform.py": "from blocks import Encoder\n\n\ndef block(rate):\n"
                                            "    return Encoder(8, p_dropout=rate)\n"})
    assert [severity for _, severity, _ in findings(root / "blocks" / "layers.py", "dropout")] == ["warning"]


ERASING = """
import torch


def _get_pixels(shape, device="cuda"):
    return torch.empty(shape, device=device).normal_()


class RandomErasing:
    def __init__(self, probability=0.5, device="cuda"):
        self.device = device

    def __call__(self, img):
        img[:, :4, :4] = _get_pixels((3, 4, 4), device=self.device)
        return img
"""


def test_a_device_every_caller_in_the_project_passes_the_cpu(tmp_path):
    """VideoMAE and SlowFast: `RandomErasing(device="cuda")` by default, but every dataset builds it on the CPU."""
    root = write(tmp_path, {"erasing.py": ERASING, "kinetics.py": "from erasing import RandomErasing\n\n"
                                                                  "erase = RandomErasing(0.25, device=\"cpu\")\n",
                            "ssv2.py": "import erasing\n\nerase = erasing.RandomErasing(device=\"cpu\")\n"})
    found = findings(root / "erasing.py", "device-rng")
    assert [(line, severity) for line, severity, _ in found] == [(6, "info")]
    assert "(the calls in the project pass `device` the CPU" in found[0][2]
    (root / "ssv2.py").write_text("import erasing\n\nerase = erasing.RandomErasing(0.25)\n")  # left on CUDA
    assert [(line, severity) for line, severity, _ in findings(root / "erasing.py", "device-rng")] == [(6, "error")]


def test_an_input_function_handed_to_a_project_subclass_of_autoparallel(tmp_path):
    """torchtitan's graph trainer: `AutoParallelGraph(model, input_fn, ...)`, its own subclass of AutoParallel, runs
    `input_fn` under FakeTensorMode; a class of the project that is no AutoParallel leaves the draw an error."""
    parallelize = ("import torch\nfrom autoparallel_api import AutoParallelGraph, Other\n\n\n"
                   "def parallelize(model, mesh, n, device):\n    def input_fn():\n"
                   "        return torch.randint(0, 100, (n,), device=device)\n\n"
                   "    def other_fn():\n        return torch.randint(0, 100, (n,), device=device)\n\n"
                   "    Other(model, other_fn)\n    return AutoParallelGraph(model, input_fn, mesh)\n")
    api = "from autoparallel.api import AutoParallel\n\n\nclass AutoParallelGraph(AutoParallel):\n    pass\n\n\nclass Other:\n    pass\n"
    root = write(tmp_path, {"autoparallel_api.py": api, "parallelize.py": parallelize})
    found = findings(root / "parallelize.py", "device-rng")
    assert [(line, severity) for line, severity, _ in found] == [(7, "info"), (10, "error")]

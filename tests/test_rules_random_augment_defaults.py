"""MSP303 random-augment: crops that keep the whole image, torchvision v2 transforms' `make_params`, transforms
and draws switched off by a parameter's default, and which draw a function's finding names."""

from __future__ import annotations

import textwrap

import pytest
from msprobe_rewriter.lint.engine import lint_source
from msprobe_rewriter.rules import RULES_BY_NAME
from project_helpers import lint_findings, write

RULE = RULES_BY_NAME["random-augment"]


def lint(code: str):
    """(line, severity, message) of each MSP303 finding on a dedented snippet."""
    result = lint_source("snippet.py", textwrap.dedent(code).encode(), [RULE])
    assert not result.errors, result.errors
    return [(f.line, f.severity, f.message) for f in result.findings if f.code == RULE.code]


@pytest.mark.parametrize(("crop", "expected"), [
    ("V.RandomResizedCrop(64, scale=(1., 1.), ratio=(1., 1.))", []),  # Taichu-GLIDE
    ("T.RandomResizedCrop(64, (1, 1))", []),
    ("T.RandomResizedCrop(64, scale=[1.0, 1.0], ratio=(0.75, 1.33))", []),  # the whole area: a centre crop at most
    ("V.RandomCropDecodeResize(64, scale=(1.0, 1.0))", []),
    ("T.RandomResizedCrop(64, scale=(0.5, 0.5))", [4]),  # half the area, at a random place
    ("T.RandomResizedCrop(64, scale=(0.08, 1.0))", [4]),
    ("T.RandomResizedCrop(64, ratio=(1., 1.))", [4]),
])
def test_resized_crop_of_the_whole_area_is_deterministic(crop, expected):
    code = f"import mindspore.dataset.vision as V\nfrom torchvision import transforms as T\n\ncrop = {crop}\n"
    assert [line for line, _, _ in lint(code)] == expected


def test_make_params_of_a_torchvision_v2_transform_runs_per_sample():
    """lerobot: `forward` of a v2 `Transform` calls `make_params` (`_get_params` before 0.21) for every sample."""
    found = lint("""\
        import torch
        from torchvision.transforms import v2


        class MotionBlur(v2.Transform):
            def make_params(self, flat_inputs):
                return {"size": int(torch.randint(0, 3, ()).item())}


        class Old(v2.Transform):
            def _get_params(self, flat_inputs):
                return {"angle": torch.rand(1).item()}


        class Helper:
            def make_params(self, n):
                return torch.randint(0, 3, (n,))
        """)
    assert [(line, severity) for line, severity, _ in found] == [(7, "warning"), (12, "warning")]


DATASET = """\
    import albumentations


    class ImageDataset:
        def __init__(self, size, random_crop={default}):
            self.random_crop = random_crop
            if not self.random_crop:
                self.cropper = albumentations.CenterCrop(height=size, width=size)
            else:
                self.cropper = albumentations.RandomCrop(height=size, width=size)
                self.flip = albumentations.HorizontalFlip(p=0.5)


    def load_data(size, random_crop=False):
        return ImageDataset(size, random_crop={passed})
"""


@pytest.mark.parametrize(("default", "passed", "severity"), [
    ("False", "random_crop", "info"),  # minddiffusion: False down to `load_data`'s own default
    ("False", "True", "warning"),
    ("True", "random_crop", "warning"),
])
def test_transform_built_under_a_parameter_off_by_default_is_info(default, passed, severity):
    found = lint(DATASET.format(default=default, passed=passed))
    assert [(line, found_severity) for line, found_severity, _ in found] == [(10, severity), (11, severity)]
    assert severity == "warning" or "built only when `self.random_crop`" in found[0][2]


def test_draw_named_is_the_first_in_the_function():
    """mindface's `color_distortion`: its first draw is `_rand()` (NumPy, through a helper), before `random`'s."""
    ((line, _, message),) = lint("""\
        import random

        import numpy as np


        def _rand(a=0., b=1.):
            return np.random.rand() * (b - a) + a


        def color_distortion(image):
            if _rand() > 0.5:
                image = image + random.randint(-18, 18)
            return image
        """)
    assert line == 11
    assert "`numpy.random.rand` (through `_rand`)" in message


def test_draw_named_is_one_that_runs_by_default():
    """Open-Sora: a draw under `if self.rand_sample_interval is not None:` (None by default) is named only when
    nothing else draws, and then at the info level."""
    code = """\
        import random

        from torch.utils.data import Dataset


        class Videos(Dataset):
            def __init__(self, rand_sample_interval=None):
                self.rand_sample_interval = rand_sample_interval

            def __getitem__(self, index):
                interval = 1
                if self.rand_sample_interval is not None:
                    interval = random.randint(1, self.rand_sample_interval)
                start = random.randint(0, 10)
                return self.frames[start::interval]
        """
    assert [(line, severity) for line, severity, _ in lint(code)] == [(14, "warning")]
    ((line, severity, message),) = lint(code.replace("start = random.randint(0, 10)", "start = 0"))
    assert (line, severity) == (13, "info")
    assert "drawn only when `self.rand_sample_interval is not None`" in message


def test_transform_under_an_option_handed_through_a_parse_args_function_is_info(tmp_path):
    """mindone's SD: train_text_to_image.py does `args = parse_args()` (its own function returning
    `parser.parse_args()`) and `build_dataset(args, ...)`; dataset.py passes `random_crop=args.random_crop` to
    `load_data(random_crop=False)`, which builds `ImageDataset(random_crop=random_crop)`: off by default throughout."""
    dataset = """\
        import albumentations


        class ImageDataset:
            def __init__(self, size, random_crop=False):
                self.random_crop = random_crop
                if not self.random_crop:
                    self.cropper = albumentations.CenterCrop(height=size, width=size)
                else:
                    self.cropper = albumentations.RandomCrop(height=size, width=size)


        def load_data(size, random_crop=False):
            return ImageDataset(size, random_crop=random_crop)


        def build_dataset(args):
            return load_data(args.size, random_crop=args.random_crop)
        """
    script = """\
        import argparse

        from dataset import build_dataset


        def parse_args():
            parser = argparse.ArgumentParser()
            parser.add_argument("--size", default=256, type=int)
            parser.add_argument("--random_crop", default={default}, type=bool)
            return parser.parse_args()


        if __name__ == "__main__":
            args = parse_args()
            build_dataset(args)
        """
    for default, severity in (("False", "info"), ("True", "warning")):
        root = write(tmp_path / default, {"pyproject.toml": "", "dataset.py": dataset,
                                          "train.py": script.replace("{default}", default)})
        assert [(f.line, f.severity) for f in lint_findings(root / "dataset.py", "random-augment")] == [(10, severity)]


@pytest.mark.parametrize(("passed", "severity"), [("args.random_crop", "info"), ("other.random_crop", "warning")])
def test_only_the_parsed_arguments_are_options(passed, severity):
    """An argument is an option at its default only when read off the parsed arguments (lerobot's
    `actions.device` is no `device` option of its config)."""
    found = lint(f"""\
        import argparse

        import albumentations


        class ImageDataset:
            def __init__(self, size, random_crop=False):
                if random_crop:
                    self.cropper = albumentations.RandomCrop(height=size, width=size)


        parser = argparse.ArgumentParser()
        parser.add_argument("--random_crop", action="store_true")
        args = parser.parse_args()
        data = ImageDataset(256, random_crop={passed})
        """)
    assert [(line, found_severity) for line, found_severity, _ in found] == [(9, severity)]

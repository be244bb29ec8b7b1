"""random-augment (MSP303) across the files of a project: draws followed into project modules from per-sample code,
and project functions (or `functools.partial`s of them) handed to the data pipeline or to a project dataset."""

from __future__ import annotations

from pathlib import Path

import pytest
from project_helpers import lint_findings, write

# minddet's pointpillars, cut down: core/preprocess.py draws, data/preprocess.py's prep function calls it, the
# dataset keeps a partial of what it is given for `__getitem__`, the builder gives it a partial of the prep function.
CORE = """
import numpy as np


def global_rotation(gt_boxes, points, rotation=0.78):
    angle = np.random.uniform(-rotation, rotation)
    return gt_boxes, points * angle
"""
PREP = """
from src.core import preprocess as prep


def prep_pointcloud(input_dict, training=True):
    points = input_dict["points"]
    if training:
        _, points = prep.global_rotation(None, points)
    return points


def _read_and_prep(info, prep_func):
    return prep_func(input_dict={"points": info})
"""
DATASET = """
from functools import partial

from src.data.preprocess import _read_and_prep


class KittiDataset:
    def __init__(self, infos, prep_func):
        self._infos = infos
        self._prep_func = partial(prep_func, training=True)

    def __getitem__(self, idx):
        return _read_and_prep(self._infos[idx], prep_func=self._prep_func)
"""
BUILDER = """
from functools import partial

import numpy as np
from src.data.dataset import KittiDataset
from src.data.preprocess import prep_pointcloud


def build(infos, training):
    prep_func = partial(prep_pointcloud, training=training)
    return KittiDataset(np.asarray(infos), prep_func=prep_func)
"""


def findings(path: Path) -> list[tuple[int, str]]:
    return [(f.line, f.message) for f in lint_findings(path, "random-augment")]


@pytest.fixture
def pointpillars(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    write(tmp_path, {"src/__init__.py": "", "src/core/__init__.py": "", "src/core/preprocess.py": CORE,
                     "src/data/__init__.py": "", "src/data/preprocess.py": PREP, "src/data/dataset.py": DATASET,
                     "src/builder/__init__.py": "", "src/builder/dataset_builder.py": BUILDER})
    return tmp_path


def test_a_partial_of_a_project_function_kept_by_a_dataset_for_its_samples(pointpillars):
    """The builder hands `KittiDataset` a partial of `prep_pointcloud`, which the dataset runs in `__getitem__`: the
    draw two files away (through `prep.global_rotation`) is reported where it is handed over."""
    found = findings(pointpillars / "src" / "builder" / "dataset_builder.py")
    assert [line for line, _ in found] == [11]
    assert found[0][1].startswith("`prep_pointcloud`, which `KittiDataset` runs for every sample, draws "
                                  "`numpy.random.uniform` (through `prep.global_rotation`)")
    for module in ("core/preprocess.py", "data/preprocess.py", "data/dataset.py"):  # nothing looks per-sample there
        assert findings(pointpillars / "src" / module) == []


def test_a_function_a_dataset_uses_only_when_built_is_not_per_sample(pointpillars):
    write(pointpillars, {"src/data/dataset.py": DATASET.replace("self._prep_func = partial(prep_func, training=True)",
                                                               "self._infos = [prep_func(i) for i in infos]")
                         .replace("prep_func=self._prep_func", "prep_func=None")})
    assert findings(pointpillars / "src" / "builder" / "dataset_builder.py") == []


def test_per_sample_code_calling_a_project_function_that_draws(pointpillars):
    """A dataset's `__getitem__` calling a project function that draws through another project module: reported at
    the call, as a call of a drawing function of the file is; not when that function is per-sample code by itself
    (its own file reports it)."""
    write(pointpillars, {"src/data/points.py": "import numpy as np\nfrom src.data.preprocess import prep_pointcloud\n\n\n"
                                               "class PointsDataset:\n    def __getitem__(self, idx):\n"
                                               "        return prep_pointcloud({'points': np.asarray(self.points[idx])})\n"})
    found = findings(pointpillars / "src" / "data" / "points.py")
    assert [line for line, _ in found] == [7]
    assert "draws `numpy.random.uniform` (through `prep_pointcloud`)" in found[0][1]
    write(pointpillars, {"src/data/preprocess.py": PREP.replace("def prep_pointcloud(input_dict,",
                                                                "def prep_pointcloud(sample,")
                         .replace('input_dict["points"]', 'sample["points"]')})
    assert findings(pointpillars / "src" / "data" / "points.py") == []


def test_a_partial_of_a_project_function_handed_to_the_loader(pointpillars):
    write(pointpillars, {"train.py": "from functools import partial\n\nfrom torch.utils.data import DataLoader\n\n"
                                     "from src.core.preprocess import global_rotation\n\n"
                                     "loader = DataLoader(data, collate_fn=partial(global_rotation, None))\n"})
    assert [line for line, _ in findings(pointpillars / "train.py")] == [7]


def test_project_functions_calling_each_other_end(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    write(tmp_path, {"a.py": "import b\n\n\ndef load(x):\n    return b.parse(x)\n",
                     "b.py": "import a\n\n\ndef parse(x):\n    return a.load(x)\n",
                     "data.py": "import numpy as np\nfrom a import load\n\n\nclass FramesDataset:\n"
                                "    def __getitem__(self, i):\n        return np.asarray(load(i))\n"})
    assert findings(tmp_path / "data.py") == []


def test_a_project_function_drawing_only_to_replace_a_sample_or_after_seeding(tmp_path):
    """Another sample drawn when one fails to load, and draws of a generator the function seeds first (from the
    sample's index, or in a `with` of a project function seeding it, fairseq's `numpy_seed`): not augmentation."""
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    write(tmp_path, {"utils.py": """
        import contextlib
        import random

        import numpy as np


        @contextlib.contextmanager
        def numpy_seed(seed):
            np.random.seed(seed)
            yield


        def load(items, index):
            try:
                return items[index]
            except IndexError:
                return items[random.randrange(len(items))]


        def crop(items, index):
            np.random.seed(index)
            return items[np.random.randint(4):]


        def mask(items, index):
            with numpy_seed(index):
                return items[np.random.permutation(len(items))]
        """, "data.py": "import numpy as np\nfrom utils import crop, load, mask\n\n\nclass FramesDataset:\n"
                        "    def __getitem__(self, i):\n"
                        "        return np.asarray([load(self.items, i), crop(self.items, i), mask(self.items, i)])\n"})
    assert findings(tmp_path / "data.py") == []


# DETR's datasets/transforms.py, cut down: coco.py builds RandomHorizontalFlip, never RandomPad; d2's mapper builds
# detectron2's `T.RandomCrop`, another library's class of the same name as this file's.
DETR_TRANSFORMS = """
import random

import torchvision.transforms as T


class RandomCrop:
    def __call__(self, img):
        return T.RandomCrop.get_params(img, (8, 8))


class RandomPad:
    def __call__(self, img):
        return img, random.randint(0, 8)


class RandomHorizontalFlip:
    def __call__(self, img):
        return img.flip(-1) if random.random() < 0.5 else img
"""


@pytest.mark.parametrize(("coco", "info"), [
    ("import datasets.transforms as T\n\nflip = T.RandomHorizontalFlip()\n", {9, 14}),
    ("import datasets.transforms as T\n\nflip = T.RandomHorizontalFlip()\npad = T.RandomPad()\n", {9}),
    ("from datasets.transforms import RandomCrop, RandomHorizontalFlip, RandomPad\n", set()),
])
def test_random_augment_class_no_project_code_builds_is_info(tmp_path: Path, coco: str, info: set[int]):
    write(tmp_path, {"pyproject.toml": "[project]\nname = 'demo'\n", "datasets/__init__.py": "",
                     "datasets/transforms.py": DETR_TRANSFORMS, "datasets/coco.py": coco,
                     "d2/mapper.py": "import detectron2.data.transforms as T\n\ncrop = T.RandomCrop('abs', (8, 8))\n"})
    found = lint_findings(tmp_path / "datasets" / "transforms.py", "random-augment")
    assert {f.line for f in found} == {9, 14, 19}
    assert {f.line for f in found if f.severity == "info"} == info
    assert all("which no code in the project builds" in f.message for f in found if f.line in info)


@pytest.mark.parametrize(("importer", "info"), [
    ("from loader import MetaLoader\n\nloader = MetaLoader()\n", False),
    ("from loader import helper\n\nhelper()\n", True),
])
def test_random_augment_class_of_an_entry_script_another_file_builds(tmp_path: Path, importer: str, info: bool):
    """minddiffusion's Loader.py runs a demo under `__main__`, and image_datasets.py builds its MetaLoader."""
    write(tmp_path, {"pyproject.toml": "[project]\nname = 'demo'\n", "data.py": importer, "loader.py": """
        import numpy as np
        import torch


        class MetaLoader(torch.utils.data.Dataset):
            def __getitem__(self, index):
                return np.random.permutation(self.items[index])


        def helper():
            return 1


        if __name__ == "__main__":
            print(helper())
        """})
    found = lint_findings(tmp_path / "loader.py", "random-augment")
    assert [(f.line, f.severity == "info") for f in found] == [(8, info)]


KARRAS = """
import torch


class KarrasAugmentationPipeline:
    def __call__(self, image):
        return image.flip(-1) if torch.rand([]) < 0.5 else image
"""


@pytest.mark.parametrize(("train", "info"), [
    ("tf = K.augmentation.KarrasAugmentationPipeline()\n", False),  # k-diffusion's train.py, through the package
    ("model = K.layers.Denoiser()\n", True),
])
def test_random_augment_class_built_through_a_package_alias(tmp_path: Path, train: str, info: bool):
    write(tmp_path, {"pyproject.toml": "[project]\nname = 'demo'\n", "k_diffusion/layers.py": "",
                     "k_diffusion/__init__.py": "from . import augmentation, layers\n",
                     "k_diffusion/augmentation.py": KARRAS, "train.py": "import k_diffusion as K\n\n" + train})
    found = lint_findings(tmp_path / "k_diffusion" / "augmentation.py", "random-augment")
    assert [(f.line, f.severity == "info") for f in found] == [(7, info)]


@pytest.mark.parametrize(("importer", "info"), [
    ("eval_retrieval_video.py", True),  # BLIP's VideoDataset: only a zero-shot evaluation builds it
    ("train_retrieval_video.py", False),
])
def test_random_augment_class_only_evaluation_code_builds_is_info(tmp_path: Path, importer: str, info: bool):
    write(tmp_path, {"pyproject.toml": "[project]\nname = 'demo'\n", "data/__init__.py": "",
                     "data/video_dataset.py": "import random\n\n\nclass VideoDataset:\n"
                                              "    def __getitem__(self, index):\n"
                                              "        return sorted(random.sample(range(8), 4))\n",
                     importer: "from data.video_dataset import VideoDataset\n\ndataset = VideoDataset()\n"})
    found = lint_findings(tmp_path / "data" / "video_dataset.py", "random-augment")
    assert [(f.line, f.severity == "info") for f in found] == [(6, info)]
    assert ("which only evaluation code builds: eval_retrieval_video.py" in found[0].message) is info

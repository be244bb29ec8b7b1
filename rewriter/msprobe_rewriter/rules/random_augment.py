"""MSP303 random-augment: random data augmentation (torchvision, MindSpore, timm, albumentations, open_clip,
detectron2)."""

from __future__ import annotations

import ast
import re
from collections import Counter

from msprobe_rewriter import catalogue, conditions, opt_in, pinning, project, project_draws, seeding
from msprobe_rewriter.call_defaults import LeftAtDefault
from msprobe_rewriter.context import FUNCTION_TYPES, argument, constant, draws_globally, keyword, own_nodes
from msprobe_rewriter.cpu_code import (
    ITEM_METHODS,
    ITEM_NAME,
    SAMPLE_METHODS,
    CpuCode,
    called_like,
    handed_callables,
    is_torchvision_transform,
    partial_bindings,
    per_sample,
)
from msprobe_rewriter.late_seeding import draws_identifier
from msprobe_rewriter.rules.base import Invalid, Rule
from msprobe_rewriter.values import UNKNOWN, FollowsValues, LocalValues

SHUFFLE_MESSAGE = ("`{function}` shuffles with `{draw}`{through}, from a global generator, for every sample or "
                   "batch: what it shuffles (samples, tokens, masked positions) changes every epoch and every run; "
                   "shuffle with a generator of its own seeded with a constant (`random.Random(seed).shuffle(items)`) "
                   "while debugging")
HAND_MESSAGE = ("`{function}` draws `{draw}`{through} for every sample: augmentation or sampling written by hand changes every "
                "epoch; make it deterministic while debugging (skip it behind a flag, or draw from a generator of "
                "its own seeded with a constant)")
SYNTHETIC_MESSAGE = ("`{function}` of `{owner}` draws `{draw}`{through} for every sample: the synthetic data it "
                     "makes up changes every epoch; draw it from a generator of its own seeded with the sample's index "
                     "(`torch.randn(n, generator=torch.Generator().manual_seed(idx))`) while debugging")
HANDED_MESSAGE = ("`{function}`, which `{receiver}` runs for every sample, draws `{draw}`{through}: augmentation or "
                  "sampling written by hand changes every epoch; make it deterministic while debugging (skip it behind "
                  "a flag, or draw from a generator of its own seeded with a constant)")
# A project class named so keeps the functions it is built with for its samples (see `_handed_to_dataset`).
DATASET_CLASS = re.compile(r"Dataset")
# Dataset classes named for data they make up (open_clip's `SyntheticAudioDataset`, a `DummyDataset`, `FakeData`).
SYNTHETIC_CLASS = re.compile(r"synthetic|dummy|fake", re.IGNORECASE)
OPEN_CLIP_MESSAGE = ("open_clip's `{function}` returns a training transform (the first of the two transforms it "
                     "returns, `preprocess_train`) that augments at random (random resized crops of images, random "
                     "cuts of audio, and what `aug_cfg` asks for): train with the validation transform, "
                     "`preprocess_val`, while debugging")


class RandomAugment(FollowsValues, Rule):
    code = "MSP303"
    name = "random-augment"
    severity = "warning"
    switched_by_flags = True
    frameworks = ("pytorch", "mindspore")
    fixable = True
    message = ("random augmentation changes every epoch: replace it with its deterministic twin (`RandomCrop` -> "
               "`CenterCrop`) or remove it while debugging")
    summary = ("Flags random transforms: torchvision `transforms`/`transforms.v2` `Random*`, `ColorJitter`, "
               "`AutoAugment`, `RandAugment`, `TrivialAugmentWide`, `AugMix`, `RandomErasing`, `ElasticTransform`, "
               "`CutMix`/`MixUp`, `GaussianBlur` with a sigma range (its default), `JPEG` with a quality range, v2 "
               "`GaussianNoise`, `RandomCrop.get_params`-style parameter draws; MindSpore `dataset.vision`/"
               "`dataset.transforms` `Random*`, `RandomColorAdjust`, `RandomChoice`/`RandomApply`, `AutoAugment`, "
               "`RandAugment`, `CutMixBatch`, `MixUpBatch`, `dataset.audio` `MaskAlongAxisIID`; timm `create_transform(is_training=True)`, "
               "`create_loader`/`create_naflex_loader(is_training=True)`, `Mixup`, `NaFlexMixup`; mindcv "
               "`create_transforms(is_training=True)` and `create_loader(is_training=True)` with `mixup`/`cutmix` "
               "(`is_training=True` read also from a `dict(..., is_training=True, **more)` passed as `**kwargs`); "
               "albumentations' `Random*` transforms and those that draw what they do (`Rotate`, `ShiftScaleRotate`, "
               "`Affine`, blurs, noise, `ColorJitter`, `CoarseDropout`, `OneOf`, ...) unless given `p=0`, those that "
               "do one fixed thing with probability `p`, 0.5 by default (`HorizontalFlip`, `ToGray`, `Sequential`, "
               "...), unless given `p` 0 or 1 or `always_apply=True`, and `Compose`, `Resize`, `Normalize`, ... when "
               "given a `p` below 1; open_clip's `create_model_and_transforms` when the training transform it "
               "returns is kept (not unpacked into `_` or a name the file never reads); "
               "detectron2's `data.transforms` `Random*` (`RandomFlip` unless given `prob` 0 or 1, `RandomApply`, "
               "`RandomCrop`, `RandomRotation` given a range or a choice, ...), `ResizeScale`, `FixedSizeCrop` and "
               "`ResizeShortestEdge` given several sizes (a literal list, or any with a `sample_style`). "
               "A transform given probability 0 (or 1, when applying it is its only randomness), or listed in a "
               "`RandomApply(..., p=0)`, or given only degenerate ranges (`degrees=(a, a)`), or a resized crop given "
               "`scale=(1, 1)` (the whole image), is not flagged; one built only under a condition on parameters "
               "(`if not self.random_crop:`) that every call in the file leaves off (a literal, an option off by default, "
               "mindone's `random_crop=args.random_crop`, also an option another file hands in its parsed arguments, or "
               "such a parameter of the caller's) is info, and so is anything in a top-level class of the file that "
               "no code in the project builds (nothing names it in the file, an entry script, or in the files "
               "importing it, also through a package that hands the module on, `K.augmentation.X` after `import "
               "k_diffusion as K`, not counting another library's class of the same name: DETR's `RandomCrop`, "
               "`RandomPad` and `RandomErasing` in datasets/transforms.py), or that only evaluation code builds (BLIP's "
               "`VideoDataset`, named only in eval_retrieval_video.py). "
               "Augmentation written by hand is reported too, once per function (in a dataset class named for made-up "
               "data, open_clip's `SyntheticAudioDataset`, a `DummyDataset`, as synthetic data): a draw from Python's `random`, "
               "NumPy's global generator or torch's (also an in-place fill, `torch.empty(1).uniform_(a, b)`; "
               "without `generator=`; detectron2's `self._rand_range()`; a "
               "shuffle is named one; a draw compared below an option that is 0 by default, `random.random() < "
               "args.proportion_empty_prompts`, or one under a condition left off by default, named only when "
               "nothing else draws, at the info level; else the first draw is named; not in an "
               "`except` block, which draws another sample when one fails to load, nor one assigning a `__getitem__`'s "
               "index in a loop, which retries with another sample (SlowFast's datasets); not an integer drawn only for a "
               "name of an identifier, as seed-missing reads it (minddet's `img_id = random.randint(0, 9999999)` "
               "naming a picture it saves); not one from a generator seeded "
               "just before: in a `with` of a project function that seeds it, fairseq's `numpy_seed`, after a "
               "seeding of it earlier in the function (also by a method of the class, dlrm's `self.reset_numpy_seed(seed)`), or in a function the file calls only from such places) "
               "in code that runs for every sample "
               "(a dataset's `__getitem__`/`__iter__`, a transform class's `__call__`, and the methods of the file's "
               "data classes those call as `self.name(...)`, as ultralytics' transforms override `get_params`; "
               "a transform class is one named for transforms, or derived from one of the file's, or registered in a "
               "registry named for transforms or data (segment-anything's `@TRANSFORM_REGISTRY.registry_module()`), or named as "
               "torchvision names its transforms, `RandomResize`, and the `forward` of such a module, `RandomMixup`, "
               "or of a subclass of a torchvision transform (the detection reference's `RandomHorizontalFlip`), and "
               "its `make_params`/`_get_params` (lerobot's v2 transforms), "
               "or a plain class (no base but `object`) whose `__call__` takes a sample (`img`, `image`, `sample`, "
               "`results`, mindocr's `data`, ...; not one named for scoring, a `CLIPLoss`), as DINO's `GaussianBlur` and "
               "`Solarization`, or whose objects the file or a project file importing it hands the data pipeline: "
               "listed in a torchvision or MindSpore `Compose`/`RandomApply`/`RandomChoice`/`RandomOrder`, given as "
               "a `DataLoader`'s dataset or a `GeneratorDataset`'s source (yolov7's `LoadImagesAndLabels`), or kept "
               "in an attribute that such a class's per-sample methods call (VideoMAE's "
               "`self.masked_position_generator()`), also through a name or attribute assigned the object; a function named for "
               "transforms, augmentation or collation, or handed to the data pipeline as `transform=`, "
               "`collate_fn=`, MindSpore's `map(operations=...)` (or its first argument; also called in a lambda there, or handed as a `functools.partial` of it; a "
               "method of the class handed as `self.name`, minddet's `self.preprocess_fn`) or a Hugging Face "
               "dataset's `with_transform`/`set_transform`), as in yolov5's mosaic and guided-diffusion's flips, "
               "also through a function of the file that draws, called there (mindocr's `sample_uniform`; also "
               "through a name bound to a `functools.partial` of it, called like it, `self.jitter = partial(jitter, "
               "scale=s)`), or through a function of another project module that draws, itself or through the project "
               "functions it calls, unless it is per-sample code by itself (named so, or taking a sample first), which "
               "its own file reports; a function of another project module (or a partial of one) handed to the data "
               "pipeline, or to a project dataset class whose `__init__` keeps it (or a partial of it) in an "
               "attribute its `__getitem__`/`__iter__`/`__call__` uses, and drawing so, is reported where it is handed "
               "over (minddet's pointpillars builder hands `KittiDataset` a partial of `prep_pointcloud`, which draws "
               "through `prep.noise_per_object`, `prep.global_rotation`, ...); and "
               "a draw from Python's or NumPy's generator in a function outside classes whose first parameter is a "
               "sample (WeNet's `spec_aug(sample)`, yolov5's `random_perspective(im, ...)`; not one that draws a "
               "picture, `vis_boxes(image)`) or that yields for each sample of its first parameter (a streaming "
               "pipeline's `for sample in data: ... yield sample`); "
               "msprobe-instrument leaves those to you.")
    why = ("Random augmentation draws from the data pipeline's generators, so every epoch (and every worker, "
           "device or framework) sees differently cropped, flipped and coloured images. Two runs that should match "
           "then differ from the first batch, and a precision comparison between them measures the augmentation, "
           "not the model.")
    fix = ("While debugging replace each random transform with its deterministic twin (`RandomCrop` -> "
           "`CenterCrop`, `RandomResizedCrop` -> `Resize` + `CenterCrop`, MindSpore `RandomCropDecodeResize` -> "
           "`Decode` + `Resize` + `CenterCrop`) or remove it (flips, colour jitter, AutoAugment, erasing, mixing); for timm and "
           "mindcv's `create_transforms` pass `is_training=False`, for mindcv's `create_loader` `mixup=0.0, "
           "cutmix=0.0`. albumentations: `RandomCrop` -> `CenterCrop`, `RandomResizedCrop`/`RandomSizedCrop` -> "
           "`Resize` (same `height`, `width`), the others removed (or given `p=0.0`), a `Compose` given `p` below 1 "
           "`p=1.0`; from 1.4.21 it draws from generators of its own, which `random.seed` does not reach: "
           "`Compose(seed=...)` repeats the augmentation from run to run, it does not remove it. open_clip: train "
           "with the validation transform `create_model_and_transforms` returns (`preprocess_val`). detectron2: "
           "`RandomFlip(prob=0.0)`, the other random augmentations removed, except those that size the image "
           "(`ResizeShortestEdge` given several sizes: give it one; `ResizeScale`, `FixedSizeCrop`). "
           "Draws written by hand: skip them behind a flag, or draw from a generator of the dataset's "
           "own seeded with a constant (`self.rng = random.Random(0)`), which nothing else can move. Restore them "
           "for real training.")
    valid = (
        # a `functools.partial` of a drawing function called only when the dataset is built: drawn once
        "import random\nfrom functools import partial\n\nfrom torch.utils.data import Dataset\n\n\n"
        "def subsample(items, k):\n    return random.sample(items, k)\n\n\nclass Subset(Dataset):\n"
        "    def __init__(self, items, k):\n        pick = partial(subsample, k=k)\n        self.items = pick(items)\n\n"
        "    def __getitem__(self, index):\n        return self.items[index]\n",
        # Another sample drawn only when one fails to load (mindocr's datasets): no augmentation.
        "import random\n\nfrom torch.utils.data import Dataset\n\n\nclass Images(Dataset):\n"
        "    def __getitem__(self, index):\n        try:\n            return self.load(index)\n"
        "        except OSError:\n            return self[random.randrange(len(self))]\n",
        "from torchvision import transforms\n\nval_tf = transforms.Compose([transforms.Resize(256), "
        "transforms.CenterCrop(224), transforms.ToTensor()])\n",
        "import torchvision.transforms.v2 as T\n\nflip = T.RandomHorizontalFlip(p=0.0)\n"
        "always = T.RandomApply([T.Grayscale()], p=1.0)\nnever = T.RandomErasing(p=0)\n",
        "from mindspore.dataset import vision\nimport mindspore.dataset.transforms as transforms\n\n"
        "ops = [vision.Decode(), vision.Resize(256), vision.CenterCrop(224), transforms.TypeCast(0)]\n",
        "import random\nimport numpy as np\n\n\nclass RandomCrop:  # a local class, not torchvision's\n"
        "    pass\n\n\ncrop = RandomCrop()\nangle = random.uniform(-10, 10)\n",
        # an in-place fill given a generator of the transform's own draws from it, not from torch's global one
        "import torch\nfrom torchvision.transforms.v2 import Transform\n\n\nclass SharpnessJitter(Transform):\n"
        "    def make_params(self, flat_inputs):\n"
        "        return {\"factor\": torch.empty(1).uniform_(0.5, 1.5, generator=self.generator).item()}\n",
        "import timm.data\n\ntf = timm.data.create_transform(224, is_training=False)\n"
        "loader = timm.data.create_loader(ds, 224, 32, is_training=True, no_aug=True)\n"
        "naflex = timm.data.create_naflex_loader(ds, batch_size=32, is_training=True, no_aug=True)\n",
        "from mindcv.data import create_loader, create_transforms\n\n"
        "tf = create_transforms(\"imagenet\", is_training=False)\n"
        "loader = create_loader(data, 32, True, transform=tf)  # no mixup / cutmix (0.0 by default)\n",
        "from mindspore.dataset import vision\n\n\ndef shear_x(img, level, **kwargs):\n"
        "    # AutoAugment-style op with one fixed magnitude: a degenerate range is deterministic\n"
        "    return vision.RandomAffine(degrees=0, shear=(level, level, 0, 0), **kwargs)(img)\n",
        "import torchvision.transforms as T\n\nblur = T.GaussianBlur(5, sigma=1.5)\nsame = T.GaussianBlur(5, (2.0, 2.0))\n",
        # Taichu-GLIDE: a resized crop asked for the whole area keeps the whole image (or the centre crop
        # torchvision and MindSpore fall back to)
        "import mindspore.dataset.vision as V\nfrom torchvision import transforms\n\n"
        "crop = V.RandomResizedCrop(64, scale=(1., 1.), ratio=(1., 1.))\nsame = transforms.RandomResizedCrop(64, (1, 1))\n",
        # a generator of the dataset's own, seeded; a draw once when the file list is built; a layer's noise
        "import random\n\nimport numpy as np\nimport torch\nfrom torch.utils.data import Dataset\n\n\n"
        "class Pairs(Dataset):\n    def __init__(self, files):\n        self.rng = np.random.default_rng(0)\n"
        "        self.files = random.sample(files, len(files))\n\n    def __getitem__(self, i):\n"
        "        return self.files[i], self.rng.random() < 0.5\n\n\nclass Noise(torch.nn.Module):\n"
        "    def __call__(self, x):\n        return x + torch.randn_like(x)\n\n\n"
        "def build_dataset(files):\n    random.shuffle(files)\n    return Pairs(files)\n",
        # a callable that samples tokens from logits, a diffusers pipeline run on an image: the model's business
        "import torch\nfrom diffusers import DiffusionPipeline\n\n\nclass TopK:\n    def __call__(self, logits):\n"
        "        return torch.multinomial(logits.topk(self.k).values.softmax(-1), 1)\n\n\n"
        "class Img2Img(DiffusionPipeline):\n    def __call__(self, image, prompt, strength=0.8):\n"
        "        return self.denoise(image + strength * torch.randn_like(image), prompt)\n",
        # a picture's colours; noise on diffusers' latent `sample` (torch's draws in a sample's function: model code)
        "import random\n\nimport torch\n\n\ndef vis_boxes(image, boxes):\n"
        "    colors = [random.randint(0, 255) for _ in boxes]\n    return draw(image, boxes, colors)\n\n\n"
        "def add_noise(sample, sigma):\n    return sample + sigma * torch.randn_like(sample)\n",
        # minddet's visualisation: an integer drawn only to name the picture saved (an identifier, not data)
        "import random\n\nimport cv2\n\n\ndef visual_image(img, annos, save_path):\n    if annos:\n"
        "        img_id = annos[0][\"image_id\"]\n    else:\n        img_id = random.randint(0, 9999999)\n"
        "    cv2.imwrite(f\"{save_path}/cv_image_{img_id}.png\", img)\n",
        # albumentations: fixed transforms applied always, a choice never made, flips told to run every time;
        # open_clip's training transform dropped
        "import albumentations as A\nimport open_clip\n\n"
        "val = A.Compose([A.SmallestMaxSize(256), A.CenterCrop(224, 224), A.Normalize()], p=1.0)\n"
        "never = A.OneOf([A.Blur(), A.GaussNoise()], p=0)\n"
        "flips = [A.HorizontalFlip(p=1.0), A.VerticalFlip(always_apply=True)]  # always_apply: before 2.0\n"
        "model, _, preprocess = open_clip.create_model_and_transforms(\"ViT-B-32\", pretrained=\"openai\")\n",
        # detectron2 at inference: a flip always applied, one size (a number, equal bounds, a name without a
        # sample style, as its test-time augmentation passes), one angle
        "from detectron2.data import transforms as T\n\n\ndef tta(cfg, min_size, angle):\n"
        "    flip = T.RandomFlip(prob=1.0)\n    resize = T.ResizeShortestEdge(800, 1333)\n"
        "    same = T.ResizeShortestEdge([cfg.MIN_SIZE_TEST, cfg.MIN_SIZE_TEST], cfg.MAX_SIZE_TEST)\n"
        "    return flip, resize, same, T.ResizeShortestEdge(min_size, 1333), T.RandomRotation(angle=angle)\n",
        # fairseq's datasets draw under a context manager of the project that seeds NumPy from the sample's index
        # (and puts its state back), in `self.` methods called there too; a dataset reseeding at each sample; a
        # function called only after a seeding (llama-cookbook's augmentations, built once)
        "import contextlib\nimport random\n\nimport numpy as np\nfrom torch.utils.data import Dataset\n\n\n"
        "@contextlib.contextmanager\ndef numpy_seed(seed, *more):\n    state = np.random.get_state()\n"
        "    np.random.seed(hash((seed, *more)) % 2**32)\n    try:\n        yield\n    finally:\n"
        "        np.random.set_state(state)\n\n\nclass Denoising(Dataset):\n    def __getitem__(self, index):\n"
        "        with numpy_seed(self.seed, self.epoch, index):\n            tokens = self.data[index]\n"
        "            if np.random.random() < 0.1:\n                tokens = self.roll(tokens)\n        return tokens\n\n"
        "    def roll(self, tokens):\n        return np.roll(tokens, np.random.randint(1, len(tokens)))\n\n\n"
        "class Cropped(Dataset):\n    def __getitem__(self, index):\n        np.random.seed(self.seed + index)\n"
        "        return self.data[index][np.random.randint(4):]\n\n\ndef augment_examples(examples):\n"
        "    return [random.sample(e, 2) for e in examples]\n\n\ndef build(examples, seed):\n"
        "    random.seed(seed)\n    return augment_examples(examples)\n",
        # SlowFast's datasets draw another video when one cannot be read; dlrm's RandomDataset reseeds NumPy through
        # a method of its own at the first index, so every epoch makes the same data; a loss choosing a prompt
        "import random\n\nimport numpy as np\nfrom torch.utils.data import Dataset\n\n\nclass Videos(Dataset):\n"
        "    def __getitem__(self, index):\n        for _ in range(10):\n            frames = self.load(index)\n"
        "            if frames is None:\n                index = random.randint(0, len(self) - 1)\n"
        "                continue\n            return frames\n\n\nclass RandomDataset(Dataset):\n"
        "    def reset_numpy_seed(self, seed):\n        np.random.seed(seed)\n\n    def __getitem__(self, index):\n"
        "        if index == 0:\n            self.reset_numpy_seed(self.seed)\n        return np.random.rand(4)\n\n\n"
        "class CLIPLoss:\n    def __call__(self, images):\n        text = self.texts[random.randint(0, 3)]\n"
        "        return -(self.encode(images) * text).sum()\n",
    )
    invalid = (
        # a `functools.partial` of a function of the file, handed to the loader or kept by a dataset and called like
        # the function in its `__getitem__`, runs for every batch or sample
        Invalid("import random\nfrom functools import partial\n\nfrom torch.utils.data import DataLoader, Dataset\n\n\n"
                "def mix(batch, alpha):\n    return batch, random.betavariate(alpha, alpha)\n\n\n"
                "def jitter(points, scale):\n    return points * random.uniform(1 - scale, 1 + scale)\n\n\n"
                "class Points(Dataset):\n    def __init__(self, points, scale):\n        self.points = points\n"
                "        self.jitter = partial(jitter, scale=scale)\n\n    def __getitem__(self, index):\n"
                "        return self.jitter(self.points[index])\n\n\n"
                "loader = DataLoader(Points([], 0.1), collate_fn=partial(mix, alpha=0.2))\n", lines=(8, 21)),
        # open_clip's synthetic benchmark dataset makes its waveforms up at random
        Invalid("import torch\nfrom torch.utils.data import Dataset\n\n\nclass SyntheticAudioDataset(Dataset):\n"
                "    def __getitem__(self, idx):\n        return torch.randn(1, 48000)\n", lines=(7,)),
        # minddet's COCOHP: a method handed to MindSpore's map as `self.preprocess_fn` runs for every sample
        Invalid("import mindspore.dataset as ds\nimport numpy as np\n\n\nclass COCOHP:\n"
                "    def preprocess_fn(self, image, bboxes):\n        if np.random.random() < 0.5:\n"
                "            image = image[:, ::-1]\n        return image, bboxes\n\n"
                "    def create_train_dataset(self, path, workers=8):\n"
                "        data = ds.MindDataset(path, shuffle=False)\n"
                "        return data.map(operations=self.preprocess_fn, input_columns=[\"image\"], "
                "num_parallel_workers=workers)\n", lines=(7,)),
        # A dataset that shuffles its samples by hand (mindformers' loaders): reported as a shuffle.
        Invalid("import random\n\n\nclass StreamingDataset:\n    def __iter__(self):\n"
                "        random.shuffle(self.samples)\n        yield from self.samples\n", lines=(6,)),
        # a context manager seeding NumPy does not seed torch; a function called after a seeding, but also handed
        # to the loader, runs for every batch
        Invalid("import contextlib\nimport random\n\nimport numpy as np\nimport torch\nfrom torch.utils.data import "
                "DataLoader, Dataset\n\n\n@contextlib.contextmanager\ndef numpy_seed(seed):\n"
                "    np.random.seed(seed)\n    yield\n\n\nclass Masked(Dataset):\n    def __getitem__(self, index):\n"
                "        with numpy_seed(self.seed + index):\n            return self.data[index][torch.randperm(8)]\n\n\n"
                "def collate_pairs(batch):\n    return random.sample(batch, len(batch))\n\n\n"
                "def first_batch(data):\n    random.seed(0)\n    return collate_pairs(data[:8])\n\n\n"
                "loader = DataLoader(Masked(), collate_fn=collate_pairs)\n", lines=(18, 22)),
        # torchvision's detection reference: a transform of torchvision's, subclassed to flip the boxes too.
        Invalid("import torch\nfrom torchvision.transforms import transforms as T\n\n\n"
                "class RandomHorizontalFlip(T.RandomHorizontalFlip):\n    def forward(self, image, target=None):\n"
                "        if torch.rand(1) < self.p:\n            image = image.flip(-1)\n        return image, target\n",
                lines=(7,)),
        # A class registered in a transform registry is one (segment-anything's BoxFormMask, built from a YAML
        # config); a draw in a debug block left off, `if False:`, is info.
        Invalid("import random\n\nfrom registry import TRANSFORM_REGISTRY\n\n\n@TRANSFORM_REGISTRY.registry_module()\n"
                "class BoxFormMask:\n    def __call__(self, result_dict):\n"
                "        result_dict[\"box\"] = [random.randint(0, 20) for _ in range(4)]\n        return result_dict\n",
                lines=(9,), severity="warning"),
        Invalid("import random\n\nfrom registry import TRANSFORM_REGISTRY\n\n\n"
                "@TRANSFORM_REGISTRY.registry_module()\nclass ImageNorm:\n    def __call__(self, result_dict):\n"
                "        if False:  # show image and mask for debug\n            import matplotlib.pyplot as plt\n\n"
                "            plt.imshow(result_dict[\"image\"] * random.random())\n            plt.show()\n"
                "        return result_dict\n", lines=(12,), severity="info"),
        # mindocr's transforms take a `data` dict, and draw through helpers of their module.
        Invalid("import random\n\nimport numpy as np\n\n\ndef sample_uniform(low, high):\n"
                "    return np.random.uniform(low, high)\n\n\nclass RecAug:\n    def __call__(self, data):\n"
                "        if random.random() <= self.prob:\n            data[\"image\"] = data[\"image\"][::-1]\n"
                "        return data\n\n\nclass CVRandomRotation:\n    def __call__(self, img):\n"
                "        return img.rotate(sample_uniform(-10, 10))\n", lines=(12, 19)),
        # A function handed to a Hugging Face dataset runs on every batch, whatever its name; a flip asked for
        # by a flag that is off by default is info.
        Invalid("import random\n\n\ndef preprocess_train(examples):\n"
                "    examples[\"text\"] = [random.choice(c) for c in examples[\"captions\"]]\n    return examples\n\n\n"
                "train = dataset.with_transform(preprocess_train)\n", lines=(5,)),
        Invalid("import argparse\nimport random\n\nparser = argparse.ArgumentParser()\n"
                "parser.add_argument(\"--random_flip\", action=\"store_true\")\nargs = parser.parse_args()\n\n\n"
                "def flip(examples):\n    if args.random_flip and random.random() < 0.5:\n"
                "        examples[\"pixels\"] = examples[\"pixels\"][::-1]\n    return examples\n\n\n"
                "flipped = dataset.with_transform(flip)\n", lines=(10,), severity="info"),
        # A flip only when asked for (`--random_flip`, off by default), as diffusers' scripts build it: info.
        Invalid("import argparse\n\nfrom torchvision import transforms\n\nparser = argparse.ArgumentParser()\n"
                "parser.add_argument(\"--random_flip\", action=\"store_true\")\nargs = parser.parse_args()\n"
                "flip = transforms.RandomHorizontalFlip() if args.random_flip else transforms.Lambda(lambda x: x)\n",
                lines=(8,), severity="info"),
        # detectron2's augmentations (DiffusionDet's mapper): a flip, a crop, a shorter edge chosen among three;
        # a subclass of its Augmentation drawing through the base's `self._rand_range()`
        Invalid("import numpy as np\nfrom detectron2.data import transforms as T\n\n\n"
                "def build_augmentation(cfg):\n    augs = [T.RandomFlip()]\n"
                "    crop = [T.ResizeShortestEdge([400, 500, 600], sample_style=\"choice\"), T.RandomCrop(\"absolute\", "
                "(384, 600))]\n    return augs, crop\n\n\nclass Grey(T.Augmentation):\n"
                "    def get_transform(self, image):\n        if self._rand_range() < 0.5:\n"
                "            return GreyTransform()\n        return T.NoOpTransform()\n", lines=(6, 7, 13)),
        # diffusers' ControlNet example: an empty prompt when `random.random() < args.proportion_empty_prompts`
        # (default 0, so never): the draw named is the caption chosen (`random.choice`); a function drawing only
        # that way is info
        Invalid("import argparse\nimport random\n\nparser = argparse.ArgumentParser()\n"
                "parser.add_argument(\"--proportion_empty_prompts\", type=float, default=0)\nargs = parser.parse_args()\n\n\n"
                "def main():\n    def tokenize_captions(examples):\n"
                "        return [\"\" if random.random() < args.proportion_empty_prompts else random.choice(c)\n"
                "                for c in examples[\"captions\"]]\n\n"
                "    def preprocess_train(examples):\n        examples[\"ids\"] = tokenize_captions(examples)\n"
                "        return examples\n\n    dataset.with_transform(preprocess_train)\n", lines=(15,)),
        Invalid("import argparse\nimport random\n\nparser = argparse.ArgumentParser()\n"
                "parser.add_argument(\"--proportion_empty_prompts\", type=float, default=0)\nargs = parser.parse_args()\n\n\n"
                "def drop_prompts(examples):\n"
                "    examples[\"text\"] = [\"\" if random.random() < args.proportion_empty_prompts else t\n"
                "                        for t in examples[\"text\"]]\n    return examples\n\n\n"
                "dataset.with_transform(drop_prompts)\n", lines=(10,), severity="info"),
        # x-transformers' TextSamplerDataset: a dataset named for sampling text, not a sampler.
        Invalid("import random\n\nfrom torch.utils.data import Dataset\n\n\nclass TextSamplerDataset(Dataset):\n"
                "    def __getitem__(self, index):\n        start = random.randint(0, len(self.data) - 1025)\n"
                "        return self.data[start:start + 1025]\n", lines=(8,)),
        # guided-diffusion's ImageDataset flips by hand; a transform class and a collate function draw too
        Invalid("import random\n\nimport numpy as np\nimport torch\nfrom torch.utils.data import Dataset\n\n\n"
                "class ImageDataset(Dataset):\n    def __getitem__(self, idx):\n        arr = self.images[idx]\n"
                "        if random.random() < 0.5:\n            arr = arr[:, ::-1]\n"
                "        return arr, random.randint(0, 9)\n\n\nclass SpecAugment:\n    def __call__(self, x):\n"
                "        t = np.random.randint(0, 10)\n        return x[t:]\n\n\ndef collate_fn(batch):\n"
                "    return torch.stack(batch)[torch.randperm(len(batch))]\n", lines=(11, 18, 23)),
        # WeNet's data pipeline: functions of one sample, and generator stages over a stream of samples
        Invalid("import random\n\nimport numpy as np\n\n\ndef spec_aug(sample, num_t_mask=2, max_t=50):\n"
                "    y = sample[\"feat\"].clone()\n    for _ in range(num_t_mask):\n"
                "        start = random.randint(0, y.size(0) - 1)\n        y[start:start + max_t] = 0\n"
                "    sample[\"feat\"] = y\n    return sample\n\n\ndef shuffle(data, size=10000):\n    buf = []\n"
                "    for sample in data:\n        buf.append(sample)\n        if len(buf) >= size:\n"
                "            np.random.shuffle(buf)\n            yield from buf\n            buf = []\n",
                lines=(9, 20)),
        # torchvision's reference scripts (segmentation, detection) write their transforms as torchvision names its own
        Invalid("import random\n\nimport torchvision.transforms.functional as F\n\n\nclass RandomResize:\n"
                "    def __call__(self, image, target):\n        size = random.randint(self.min_size, self.max_size)\n"
                "        return F.resize(image, size), F.resize(target, size)\n\n\nclass RandomHorizontalFlip:\n"
                "    def __call__(self, image, target):\n        if random.random() < self.flip_prob:\n"
                "            image, target = F.hflip(image), F.hflip(target)\n        return image, target\n",
                lines=(8, 14)),
        # ultralytics' transforms: the base class's __call__ calls methods its subclasses override to draw
        Invalid("import random\n\n\nclass BaseTransform:\n    def __call__(self, labels):\n"
                "        return self.apply(labels, self.get_params(labels))\n\n    def get_params(self, labels):\n"
                "        return {}\n\n\nclass Flip(BaseTransform):\n    def get_params(self, labels):\n"
                "        return {\"flip\": random.random() < 0.5}\n", lines=(14,)),
        # DINO's utils: transforms named for what they do; their __call__ takes the image. A class listed in
        # a Compose is a transform whatever its names.
        Invalid("import random\n\nimport numpy as np\nfrom PIL import ImageFilter\nfrom torchvision import transforms\n\n\n"
                "class GaussianBlur(object):\n    def __call__(self, img):\n        if random.random() > self.prob:\n"
                "            return img\n        return img.filter(ImageFilter.GaussianBlur(random.uniform(0.1, 2.0)))\n\n\n"
                "class Shift:\n    def __call__(self, x):\n        return np.roll(x, np.random.randint(-4, 5))\n\n\n"
                "pipeline = transforms.Compose([Shift(), GaussianBlur(), transforms.ToTensor()])\n",
                lines=(10, 17)),
        # torchvision's classification reference mixes batches with modules, called in its collate function
        Invalid("import torch\n\n\nclass RandomMixup(torch.nn.Module):\n"
                "    def forward(self, batch, target):\n        if torch.rand(1).item() >= self.p:\n"
                "            return batch, target\n        return batch.roll(1, 0), target\n", lines=(6,)),
        Invalid("import torchvision.transforms as T\nfrom torchvision.transforms import v2\n\n"
                "blur = T.GaussianBlur(kernel_size=23)  # sigma drawn from (0.1, 2.0) on every call\n"
                "noisy = v2.Compose([v2.GaussianNoise(), v2.JPEG((50, 100))])\n", lines=(4, 5)),
        Invalid("from mindspore.dataset import vision\n\ntrain_ops = [vision.CutOut(16), vision.HWC2CHW()]\n"
                "boxes = vision.BoundingBoxAugment(vision.Rotate(90), ratio=0.3)\n", lines=(3, 4)),
        Invalid("import mindspore.dataset.audio as audio\n\nmask = audio.MaskAlongAxisIID(mask_param=30, mask_value=0.0, "
                "axis=2)\n", lines=(3,)),
        Invalid("from torchvision import transforms\n\ntrain_tf = transforms.Compose([\n"
                "    transforms.RandomResizedCrop(224),\n    transforms.RandomHorizontalFlip(),\n"
                "    transforms.ColorJitter(0.4, 0.4, 0.4),\n    transforms.ToTensor(),\n])\n", lines=(4, 5, 6)),
        Invalid("import torchvision.transforms.v2 as T\nfrom torchvision.transforms import autoaugment\n\n"
                "tf = T.Compose([T.RandomCrop(32, padding=4), autoaugment.RandAugment(), T.RandomErasing(p=0.25)])\n",
                lines=(4,)),
        Invalid("from mindspore.dataset import vision\nimport mindspore.dataset.transforms as transforms\n\n"
                "ops = [\n    vision.RandomCropDecodeResize(224),\n    vision.RandomColorAdjust(0.4, 0.4, 0.4),\n"
                "    transforms.RandomApply([vision.Invert()], prob=0.5),\n]\n", lines=(5, 6, 7)),
        Invalid("import mindspore.dataset.vision as V\nimport mindspore.dataset as ds\n\n"
                "data = ds.Cifar10Dataset(\"cifar/\", shuffle=False)\n"
                "data = data.map([V.RandomHorizontalFlip(prob=0.5), "
                "V.HWC2CHW()], input_columns=\"image\")\nmix = V.CutMixBatch(V.ImageBatchFormat.NCHW, 1.0, 0.5)\n",
                lines=(5, 6)),
        Invalid("from timm.data import create_transform, Mixup\n\n\ndef build(args):\n"
                "    tf = create_transform(input_size=224, is_training=True, auto_augment=args.aa)\n"
                "    mixup = Mixup(mixup_alpha=0.8)\n    return tf, mixup\n", lines=(5, 6)),
        Invalid("import timm\n\nloader = timm.data.create_loader(dataset, (3, 224, 224), 64, True)\n", lines=(3,)),
        Invalid("from timm.data import NaFlexMixup, create_naflex_loader\n\n\ndef build(ds, args):\n"
                "    mixup = NaFlexMixup(mixup_alpha=0.8)\n"
                "    return create_naflex_loader(ds, batch_size=64, is_training=True, mixup_fn=mixup)\n",
                lines=(5, 6)),
        Invalid("from mindcv.data import create_loader, create_transforms\n\n\ndef build(data, args):\n"
                "    tf = create_transforms(args.dataset, 224, True)\n"
                "    return create_loader(data, 32, is_training=True, mixup=args.mixup, transform=tf)\n",
                lines=(5, 6)),
        Invalid("import torchvision.transforms as T\n\n\ndef crop(img, size):\n"
                "    i, j, h, w = T.RandomCrop.get_params(img, (size, size))\n    return img[..., i:i + h, j:j + w]\n",
                lines=(5,)),
        Invalid("from torchvision import transforms\n\n\ndef build_eval_transform():\n"
                "    return transforms.RandomCrop(224)\n", lines=(5,), severity="info"),

        # MoCo v3's blur: its sample is named `x`, and goes to PIL
        Invalid("import random\n\nimport torch\nfrom PIL import ImageFilter\n\n\nclass GaussianBlur(object):\n"
                "    def __call__(self, x):\n        sigma = random.uniform(0.1, 2.0)\n"
                "        return x.filter(ImageFilter.GaussianBlur(radius=sigma))\n", lines=(9,)),
        # OpenMMLab's transforms draw in helpers of `transform` (mmyolo's affine); detectron2's augmentations in
        # `get_transform` through a helper of their base class
        Invalid("import numpy as np\nimport torch\nfrom mmcv.transforms import BaseTransform\n\n\n"
                "class RandomAffine(BaseTransform):\n    def _matrix(self):\n        return np.random.uniform(-10, 10)\n\n"
                "    def transform(self, results):\n        results['angle'] = self._matrix()\n        return results\n\n\n"
                "class Augmentation:\n    def _rand_range(self, low=1.0):\n        return np.random.uniform(0, low)\n\n\n"
                "class RandomFlip(Augmentation):\n    def get_transform(self, image):\n"
                "        return image[:, ::-1] if self._rand_range() < 0.5 else image\n", lines=(8, 17)),
        # the diffusers examples: both functions nested in main(), one handed to Hugging Face datasets
        Invalid("import random\n\nimport torch\n\n\ndef main(dataset):\n    def tokenize_captions(examples):\n"
                "        return [random.choice(c) for c in examples[\"text\"]]\n\n"
                "    def preprocess_train(examples):\n        examples[\"input_ids\"] = tokenize_captions(examples)\n"
                "        return examples\n\n    return dataset.with_transform(preprocess_train)\n", lines=(11,)),
        # mindaudio's ECAPA recipe: a function handed to MindSpore's `map` by position draws a crop per sample
        Invalid("import random\nimport mindspore.dataset as ds\n\n\ndef crop(wav):\n"
                "    start = random.randint(0, len(wav) - 16000)\n    return wav[start:start + 16000]\n\n\n"
                "data = ds.GeneratorDataset(source, [\"wav\"], shuffle=False)\n"
                "data = data.map(lambda wav: crop(wav), input_columns=[\"wav\"])\n", lines=(6,)),
        # minddiffusion's dataset crops at random only when `random_crop`, False unless a call asks: info
        Invalid("import albumentations\n\n\nclass ImageDataset:\n    def __init__(self, size, random_crop=False):\n"
                "        self.random_crop = random_crop\n        if not self.random_crop:\n"
                "            self.cropper = albumentations.CenterCrop(height=size, width=size)\n        else:\n"
                "            self.cropper = albumentations.RandomCrop(height=size, width=size)\n\n\n"
                "def load_data(size, random_crop=False):\n    return ImageDataset(size, random_crop=random_crop)\n",
                lines=(10,), severity="info"),
        # ... also when the call passes an option that is off by default (mindone's `--random_crop`)
        Invalid("import argparse\n\nimport albumentations\n\n\nclass ImageDataset:\n"
                "    def __init__(self, size, random_crop=False):\n        if random_crop:\n"
                "            self.cropper = albumentations.RandomCrop(height=size, width=size)\n\n\n"
                "parser = argparse.ArgumentParser()\nparser.add_argument(\"--random_crop\", action=\"store_true\")\n"
                "args = parser.parse_args()\ndata = ImageDataset(256, random_crop=args.random_crop)\n",
                lines=(9,), severity="info"),
        # lerobot's torchvision v2 transforms draw their parameters in `make_params`, which `forward` calls
        Invalid("import torch\nfrom torchvision.transforms.v2 import Transform\n\n\nclass GaussianNoise(Transform):\n"
                "    def make_params(self, flat_inputs):\n        return {\"seed\": torch.randint(0, 2**31, ()).item()}\n\n"
                "    def transform(self, inpt, params):\n        return inpt + params[\"seed\"]\n", lines=(7,)),
        # lerobot's SharpnessJitter draws its factor with an in-place fill of a new tensor, from torch's generator
        Invalid("import torch\nfrom torchvision.transforms.v2 import Transform\n\n\nclass SharpnessJitter(Transform):\n"
                "    def make_params(self, flat_inputs):\n"
                "        return {\"factor\": torch.empty(1).uniform_(0.5, 1.5).item()}\n", lines=(7,)),
        # latent-diffusion's ImageNetSR crops with albumentations
        Invalid("import albumentations\n\n\nclass ImageNetSR:\n    def __init__(self, size, random_crop=True):\n"
                "        if random_crop:\n            self.cropper = albumentations.RandomCrop(height=size, width=size)\n"
                "        else:\n            self.cropper = albumentations.CenterCrop(height=size, width=size)\n",
                lines=(7,)),
        # every albumentations transform runs with probability `p`: flips at 0.5 by default, a Compose given 0.9
        Invalid("import albumentations as A\nfrom albumentations.pytorch import ToTensorV2\n\ntrain = A.Compose([\n"
                "    A.RandomResizedCrop(height=224, width=224),\n    A.HorizontalFlip(),\n"
                "    A.ShiftScaleRotate(p=0.5),\n    A.OneOf([A.Blur(p=0.01), A.ToGray(p=0.01)], p=0.5),\n"
                "    A.Normalize(),\n    ToTensorV2(),\n], p=0.9)\n", lines=(4, 5, 6, 7, 8)),
        # yolov7's dataset, a plain class handed to MindSpore's GeneratorDataset; VideoMAE's mask generator, kept by
        # its transform and called for every sample
        Invalid("import random\n\nimport mindspore.dataset as de\nimport numpy as np\n\n\nclass LoadImagesAndLabels:\n"
                "    def __getitem__(self, index):\n        mosaic = random.random() < self.hyp[\"mosaic\"]\n"
                "        return self.load(index, mosaic)\n\n\nclass TubeMaskingGenerator:\n    def __call__(self):\n"
                "        mask = np.hstack([np.zeros(self.visible), np.ones(self.masked)])\n        np.random.shuffle(mask)\n"
                "        return mask\n\n\nclass DataAugmentationForVideoMAE:\n    def __init__(self, args):\n"
                "        self.masked_position_generator = TubeMaskingGenerator(args.window_size, args.mask_ratio)\n\n"
                "    def __call__(self, images):\n        return images, self.masked_position_generator()\n\n\n"
                "def create_dataloader(path, hyp):\n    dataset = LoadImagesAndLabels(path, hyp)\n"
                "    return de.GeneratorDataset(dataset, column_names=[\"img\", \"label\"], shuffle=True)\n",
                lines=(9, 16)),
        # open_clip's training transform, kept; timm's `is_training=True` in a dict also holding `**aug_cfg`
        Invalid("import open_clip\nfrom timm.data import create_transform\n\n"
                "model, preprocess_train, preprocess_val = open_clip.create_model_and_transforms(\"ViT-B-32\")\n"
                "train_data = ImageFolder(\"train/\", transform=preprocess_train)\n\n\n"
                "def timm_transform(aug_cfg):\n    kwargs = dict(input_size=(3, 224, 224), is_training=True, **aug_cfg)\n"
                "    return create_transform(**kwargs)\n", lines=(4, 10)),
        # a transform class no code in the project builds (DETR's RandomPad): info
        Invalid("import random\n\nimport torch\n\n\nclass RandomPad:\n    def __call__(self, img):\n"
                "        pad = random.randint(0, 8)\n        return torch.nn.functional.pad(img, (pad, pad))\n\n\n"
                "if __name__ == \"__main__\":\n    print(torch.__version__)\n", lines=(8,), severity="info"),
    )

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.values = LocalValues(ctx, lambda value: None)  # only to see into `**kwargs` dicts
        self.cpu_code = CpuCode(ctx)
        self._draws: dict[int, list[tuple]] = {}  # function -> its draws by hand: (function, site, draw, through, threshold)
        # (per-sample function, site, callee name, families seeded there, whether only a sample's function): calls
        # of the file's functions
        self._helper_calls: list = []
        self._functions = _named_once(ctx.tree)
        self._methods = {item.name for cls in ast.walk(ctx.tree) if isinstance(cls, ast.ClassDef)
                         for item in cls.body if isinstance(item, FUNCTION_TYPES)}  # (where they draw is reported)
        self.seeded = Seedings(ctx)
        self.defaults = LeftAtDefault(ctx)
        # id(report) -> the function around what is reported, and what is done there ("built", "drawn")
        self._built: dict[int, tuple[ast.AST | None, str]] = {}
        self._partials: dict[str, ast.Call] | None = None  # names bound to `functools.partial(f, ...)`

    def report(self, where, message=None, severity=None, fixable=None) -> None:
        """Also keep the function around a transform reported where it is visited."""
        super().report(where, message, severity, fixable)
        self._built[id(self.reports[-1])] = (self.ctx.current_def(), "built")

    def visit_Call(self, node: ast.Call) -> None:
        self.values.call(node)
        qualified = self.ctx.draw_qualname(node)
        if draws_globally(node, qualified):
            self._drawn_by_hand(node, qualified)
            return
        method = _self_method(node)
        if method in catalogue.DRAWING_BASE_METHODS and method not in self._methods:  # detectron2's `_rand_range`
            self._drawn_by_hand(node, catalogue.DRAWING_BASE_METHODS[method], f" (through `{method}`)")
            return
        if isinstance(node.func, ast.Name) and node.func.id in self._functions or method in self._methods:
            self.seeded.note_call(node, node.func.id if method is None else method)
        if isinstance(node.func, ast.Name) and node.func.id in self._functions:
            self._helper_call(node, node.func.id)
        elif method is None or method not in self._methods:
            self._into_project(node)
        if node.keywords or node.args:
            self._handed_over(node)
        qualified = self._qualname(node)
        if qualified is None:
            return
        owner, _, short = qualified.rpartition(".")
        if catalogue.is_random_transform(qualified):
            if not self._never_random(node, qualified) and not self._never_applied():
                self.report(node, _twin_message(qualified))
        elif catalogue.is_sometimes_applied(qualified):
            if keyword(node, "p") is not None and _probability(node, qualified) not in (0, 1) \
                    and not self._never_applied():
                self.report(node, f"`{short}` given `p` below 1 runs on some samples only, at random: pass `p=1.0` "
                                  "while debugging")
        elif short == "get_params" and catalogue.is_random_transform(owner):
            self.report(node, f"`{owner.rpartition('.')[2]}.get_params` draws random augmentation parameters: use "
                              "fixed parameters while debugging")
        elif qualified in catalogue.TIMM_RANDOM_TRANSFORMS:
            self.report(node, f"timm's `{short}` augments at random: remove it while debugging")
        elif qualified in catalogue.TIMM_TRAINING_TRANSFORMS or qualified in catalogue.TIMM_TRAINING_LOADERS:
            position = catalogue.TIMM_TRAINING_TRANSFORMS.get(qualified, catalogue.TIMM_TRAINING_LOADERS.get(qualified))
            training = self._argument(node, "is_training", position)
            if training not in (None, UNKNOWN) and constant(training) not in (None, False, 0) \
                    and constant(self.values.keyword(node, "no_aug")) is not True:
                self.report(node, f"timm's `{short}(is_training=...)` builds random augmentation: pass "
                                  "`is_training=False` while debugging")
        elif qualified in catalogue.OPEN_CLIP_TRAINING_TRANSFORMS:
            if self._kept(node, catalogue.OPEN_CLIP_TRAINING_TRANSFORMS[qualified]):
                self.report(node, OPEN_CLIP_MESSAGE.format(function=short), fixable=False)
        else:
            self._mindcv(node, qualified)

    def _helper_call(self, node: ast.Call, name: str) -> None:
        """A call of the file's function `name`: noted, in code run for every sample, for `finish`."""
        item = self._item_function()
        function = item or self.cpu_code.sample_function()
        if function is not None:
            self._helper_calls.append((function, self.ctx.site(node), name, self.seeded.here(node), item is None))

    def _called(self, func: ast.expr) -> ast.expr:
        """What calling `func` calls: `f` for a name (or `self.` attribute) bound to `functools.partial(f, ...)`."""
        if self._partials is None:
            self._partials = partial_bindings(self.ctx.tree) if "partial(" in self.ctx.source else {}
        return called_like(func, self._partials)

    def _into_project(self, node: ast.Call) -> None:
        """A call, in code run for every sample, of a function of another project module (or of a name bound to a
        `functools.partial` of one, or of the file's) that draws from a global generator, itself or through the
        project functions it calls: noted at the call, as the file's own drawing helpers are (see `finish`)."""
        target = self._called(node.func)
        if target is not node.func and isinstance(target, ast.Name) and target.id in self._functions:
            self._helper_call(node, target.id)
            return
        folder, local, functions = self.seeded.project()
        if not project.call_targets(ast.Call(func=target, args=[], keywords=[]), local, functions):
            return  # a cheap test before the per-sample one
        item = self._item_function()
        function = item or self.cpu_code.sample_function()
        found = self._project_draw(target) if function is not None else None
        if found is None:
            return
        draw = found.qualified
        family = project_draws.family(draw)
        if not (family in self.seeded.here(node) or self.seeded.by_callers(function, family)
                or item is None and draw in catalogue.TORCH_RANDOM_DRAWS):
            self._draws.setdefault(id(function), []).append(
                (function, self.ctx.site(node), draw, f" (through `{ast.unparse(target)}`)", None))

    def _project_draw(self, target: ast.expr) -> project_draws.Draw | None:
        """The first global draw of the function of another project module that `target` names, if any, not
        through a function that runs for every sample by itself, whose own file reports its draws."""
        folder, local, functions = self.seeded.project()
        function, path = pinning.called_function(ast.Call(func=target, args=[], keywords=[]), functions, folder, local)
        module = project.load(path) if path is not None else None
        return project_draws.first_draw(module, function, _reports_itself) \
            if module is not None and not _reports_itself(function) else None

    def _handed_over(self, node: ast.Call) -> None:
        """A function of another project module (a `functools.partial` of one, or a name bound to such a partial)
        handed to the data pipeline to run on every sample (`collate_fn=`, MindSpore's `map(operations=...)`, ...),
        or given to a project dataset class that keeps it for its per-sample methods (minddet's `KittiDataset(...,
        prep_func=partial(prep_pointcloud, ...))`, whose `__getitem__` runs `self._prep_func`): reported at the
        argument when it draws from a global generator (where it is defined it does not look per-sample)."""
        for value in [*handed_callables(node), *self._dataset_arguments(node)]:
            target = self._called(value)
            found = self._project_draw(target) if isinstance(target, (ast.Name, ast.Attribute)) else None
            if found is not None:
                draw, via = found.qualified, found.via
                self.report(value, HANDED_MESSAGE.format(
                    function=ast.unparse(target), receiver=self.ctx.callee_name(node), draw=draw,
                    through=f" (through `{via}`)" if via else ""), fixable=False)
                self._built[id(self.reports[-1])] = (self.ctx.current_def(), "drawn")

    def _dataset_arguments(self, node: ast.Call) -> list[ast.expr]:
        """The arguments of a call building a project dataset class (named so) that its `__init__` keeps for the
        class's per-sample methods."""
        name = self.ctx.callee_name(node)
        if name is None or not DATASET_CLASS.search(name):
            return []
        folder, local, _ = self.seeded.project()
        built = pinning.built_class(node, folder, local)
        if built is None:
            return []
        _, init, cls = built
        return [given[0] for parameter, given in conditions.call_arguments(init, node, bound=True).items()
                if given is not None and given[1] and _kept_for_samples(cls, init, parameter)]

    def _qualname(self, node: ast.Call) -> str | None:
        """The callee's qualified name, also through imports of libraries the import tracker does not follow
        (mindcv, albumentations, open_clip)."""
        return self.ctx.call_qualname(node) or self.ctx.imports.resolve_any(node.func)

    def _argument(self, node: ast.Call, name: str, position: int | None) -> object:
        """`values.keyword`, also seeing through `**kwargs` bound to `dict(..., name=value, **more)` (open_clip's
        timm arguments): a keyword given there holds, as `more` holding it too raises."""
        value = self.values.keyword(node, name, position)
        if value is not UNKNOWN:
            return value
        for mapping in (kw.value for kw in node.keywords if kw.arg is None):
            if isinstance(mapping, ast.Name):
                bound = self.values.bindings.bound(mapping.id, mapping)
                mapping = bound[-1] if bound else None
            if isinstance(mapping, ast.Call) and isinstance(mapping.func, ast.Name) and mapping.func.id == "dict" \
                    and keyword(mapping, name) is not None:
                return keyword(mapping, name)
        return value

    def _kept(self, node: ast.Call, index: int) -> bool:
        """Whether the value at `index` of the tuple `node` returns is kept: not unpacked into `_` or a name the
        file never reads (`model, _, preprocess = ...`, `model, train, val = ...` with `train` unused)."""
        parent = self.ctx.ancestors[-1] if self.ctx.ancestors else None
        if not (isinstance(parent, ast.Assign) and parent.value is node
                and isinstance(parent.targets[0], (ast.Tuple, ast.List))
                and len(parent.targets[0].elts) > index):
            return True
        target = parent.targets[0].elts[index]
        return not isinstance(target, ast.Name) or any(
            isinstance(other, ast.Name) and other.id == target.id and isinstance(other.ctx, ast.Load)
            for other in ast.walk(self.ctx.tree))

    def _drawn_by_hand(self, node: ast.Call, qualified: str, through: str = "") -> None:
        """A global draw in code run for every sample: augmentation or sampling written by hand (reported in
        `finish`, once a function); not one in an `except` block or one drawing a new index in a loop (another
        sample drawn when one fails to load: mindocr's datasets, SlowFast's `index = random.randint(...)` when a
        video cannot be read), nor an integer drawn for an identifier (see `late_seeding.draws_identifier`)."""
        statement = next((a for a in reversed(self.ctx.ancestors) if isinstance(a, ast.stmt)), None)
        if any(isinstance(ancestor, ast.ExceptHandler) for ancestor in self.ctx.ancestors) \
                or self._retries(statement) or project_draws.family(qualified) in self.seeded.here(node) \
                or draws_identifier(self.ctx, node, statement):
            return
        function = self._item_function()
        if function is None and qualified not in catalogue.TORCH_RANDOM_DRAWS:
            # a sample function's draw from Python's or NumPy's generator (with torch's, a function of a
            # `sample` or `image` is as often model code: diffusers names its latents `sample`)
            function = self.cpu_code.sample_function()
        if function is not None:
            threshold = _threshold(node, self.ctx.ancestors[-1]) if self.ctx.ancestors else None
            self._draws.setdefault(id(function), []).append((function, self.ctx.site(node), qualified, through,
                                                             threshold))

    def _retries(self, statement: ast.stmt | None) -> bool:
        """Whether `statement`, in a loop of a dataset's `__getitem__`, assigns its index parameter: the loop tries
        another sample when one fails to load (SlowFast's Kinetics and ImageNet datasets)."""
        function = self.ctx.current_def()
        params = [*function.args.posonlyargs, *function.args.args][1:2] \
            if isinstance(function, FUNCTION_TYPES) and function.name == "__getitem__" else []
        return (isinstance(statement, ast.Assign) and bool(params)
                and any(isinstance(target, ast.Name) and target.id == params[0].arg for target in statement.targets)
                and any(isinstance(ancestor, (ast.For, ast.While)) for ancestor in
                        self.ctx.ancestors[self.ctx.ancestors.index(function):]))

    def _item_function(self) -> ast.AST | None:
        """The function around here that runs for every sample or batch (see `CpuCode.item_function`), or a
        torchvision transform's `make_params`."""
        return self.cpu_code.item_function() or self._parameter_method()

    def _parameter_method(self) -> ast.AST | None:
        """The `make_params` (or `_get_params`) around here of a subclass of a torchvision transform, which its
        `forward` calls for every sample (lerobot's `SharpnessJitter(v2.Transform)`)."""
        ancestors = self.ctx.ancestors
        for owner, method in zip(ancestors, ancestors[1:], strict=False):
            if (isinstance(owner, ast.ClassDef) and isinstance(method, FUNCTION_TYPES)
                    and method.name in catalogue.TORCHVISION_PARAMETER_METHODS
                    and owner.name in self.cpu_code.derived_classes("torchvision transform", is_torchvision_transform)):
                return method
        return None

    def finish(self) -> None:
        """Report one draw a function: the first that changes data with the default arguments (not `random.random()
        < args.p` with `p` 0 by default) and runs with them (not under `if self.rand_sample_interval is not None:`
        with a default of None, Open-Sora's), its own or through a function of the file that draws (mindocr's
        `CVRandomRotation.__call__` calls `sample_uniform`, which calls `np.random.uniform`: reported at the call);
        else the first of the others, at the info level. Transforms built only under a condition on parameters
        that every call in the file leaves off are info too."""
        found = {key: [draw for draw in draws if not self.seeded.by_callers(draw[0], project_draws.family(draw[2]))]
                 for key, draws in self._draws.items()}
        helpers = self._drawing_helpers() if self._helper_calls else {}
        for function, site, callee, seeded, sample_only in self._helper_calls:
            if callee in helpers:
                name, threshold = helpers[callee]
                if not (project_draws.family(name) in seeded or self.seeded.by_callers(function, project_draws.family(name))
                        or sample_only and name in catalogue.TORCH_RANDOM_DRAWS):
                    found.setdefault(id(function), []).append(
                        (function, site, name, f" (through `{callee}`)", threshold))
        for draws in filter(None, found.values()):
            self._report_draw(*min(draws, key=self._draw_rank))
        for report in self.reports:
            function, done = self._built[id(report)]
            if report.switch is not None and report.severity != "info":
                self.defaults.settle(report, function, [report.switch], done)
            owner = self._top_class(function)
            if report.severity != "info" and owner is not None and seeding.never_called(self.ctx, owner):
                report.severity = "info"
                report.message += f" (in `{owner.name}`, which no code in the project builds)"
            elif report.severity != "info" and owner is not None and (users := seeding.evaluation_users(self.ctx, owner)):
                report.severity = "info"
                report.message += f" (in `{owner.name}`, which only evaluation code builds: {', '.join(users)})"

    def _top_class(self, function: ast.AST | None) -> ast.ClassDef | None:
        """The top-level class whose method `function` is, if any."""
        return next((node for node in self.ctx.tree.body if isinstance(node, ast.ClassDef)
                     and any(item is function for item in node.body)), None)

    def _draw_rank(self, draw: tuple) -> tuple:
        """Which of a function's draws to name: one that changes data, then one that runs with the default
        arguments, then the first."""
        function, site = draw[0], draw[1]
        switched_off = site.switch is not None and (opt_in.off_by_default(self.ctx, site.switch) is not None
                                                    or self.defaults.off_guard(function, [site.switch]) is not None)
        return self._never_true(draw[-1]), switched_off, site.node.lineno, site.node.col_offset

    def _never_true(self, threshold: ast.expr | None) -> bool:
        """Whether a draw compared below `threshold` is never below it with the default arguments (0 by default:
        `random.random() < args.proportion_empty_prompts`)."""
        return threshold is not None and opt_in.default_value(self.ctx, threshold) == 0

    def _report_draw(self, function, site, draw: str, through: str, threshold: ast.expr | None) -> None:
        """Report a draw written by hand; at the info level when it is never below its threshold by default."""
        owner = next((node.name for node in ast.walk(self.ctx.tree) if isinstance(node, ast.ClassDef)
                      and any(item is function for item in node.body)), "")
        message = (SHUFFLE_MESSAGE if draw in catalogue.GLOBAL_SHUFFLES else SYNTHETIC_MESSAGE
                   if SYNTHETIC_CLASS.search(owner) else HAND_MESSAGE).format(
            function=function.name, owner=owner, draw=draw, through=through)
        if self._never_true(threshold):
            self.report(site, f"{message} (only when `{ast.unparse(threshold)}` > 0: 0 with the default arguments)",
                        severity="info", fixable=False)
        else:
            self.report(site, message, fixable=False)
        self._built[id(self.reports[-1])] = (function, "drawn")

    def _drawing_helpers(self) -> dict[str, tuple[str, ast.expr | None]]:
        """The file's functions (module-level, or nested under a name no other function has: the diffusers examples
        define `tokenize_captions` inside `main()`) that draw from a global generator, and are not reported
        themselves as per-sample code: name -> (the draw to name, the threshold it is compared below). The draw
        named is the first that changes the data with the default arguments (`random.choice(caption)`, not
        `random.random() < args.proportion_empty_prompts`, default 0), else the first."""
        found = {}
        for function in self._functions.values():
            if not self.cpu_code.runs_per_sample(function):
                compared = {id(call): threshold for compare in ast.walk(function) if isinstance(compare, ast.Compare)
                            for call in (compare.left, *compare.comparators)
                            if (threshold := _threshold(call, compare)) is not None}
                draws = [(qualified, compared.get(id(node))) for node in ast.walk(function) if isinstance(node, ast.Call)
                         and draws_globally(node, qualified := self.ctx.draw_qualname(node))]
                changing = [draw for draw in draws if not self._never_true(draw[1])]
                if draws:
                    found[function.name] = (changing or draws)[0]
        return found

    def _mindcv(self, node: ast.Call, qualified: str) -> None:
        """mindcv's `create_transforms(is_training=True)`, and `create_loader(is_training=True)` mixing batches."""
        if qualified in catalogue.MINDCV_TRAINING_TRANSFORMS:
            if self._true(self.values.keyword(node, "is_training", catalogue.MINDCV_TRAINING_TRANSFORMS[qualified])):
                self.report(node, "mindcv's `create_transforms(is_training=...)` builds random augmentation (random "
                                  "crops, flips, ...): pass `is_training=False` while debugging")
        elif qualified in catalogue.MINDCV_MIXING_LOADERS:
            position, rates = catalogue.MINDCV_MIXING_LOADERS[qualified]
            if self._true(self.values.keyword(node, "is_training", position)) and any(
                    rate not in (None, UNKNOWN) and constant(rate) != 0
                    for rate in (self.values.keyword(node, name, at) for at, name in rates)):
                self.report(node, "mindcv's `create_loader(is_training=..., mixup=/cutmix=...)` mixes batches at "
                                  "random: pass `mixup=0.0, cutmix=0.0` while debugging")

    @staticmethod
    def _true(value: object) -> bool:
        """Whether an `is_training=` argument can be true (an expression can; a hidden one we skip)."""
        return value not in (None, UNKNOWN) and constant(value) not in (None, False, 0)

    def _never_random(self, node: ast.Call, qualified: str) -> bool:
        """Probability 0, probability 1 when running is its only randomness, or only degenerate ranges."""
        library, short = catalogue.transform_library(qualified) or "", qualified.rpartition(".")[2]
        ranges = catalogue.RANGE_ONLY_TRANSFORMS.get(library, {}).get(short)
        if ranges is not None and not node.args:
            given = {kw.arg: kw.value for kw in node.keywords if kw.arg in ranges[0]}
            if given and ranges[1] <= given.keys() and all(map(_degenerate, given.values())):
                return True
        sampled = catalogue.SAMPLED_VALUES.get(library, {}).get(short)
        if sampled is not None and _one_value(argument(node, *sampled[0]), argument(node, *sampled[1])):
            return True
        whole = catalogue.WHOLE_AREA_CROPS.get(library, {}).get(short)
        if whole is not None and _whole_area(argument(node, *whole)):
            return True
        fixed_by = catalogue.FIXED_BY_NUMBER.get(library, {}).get(short)
        if fixed_by is not None:
            value = argument(node, *fixed_by)
            if value is not None and (isinstance(constant(value), (int, float)) or _degenerate(value)):
                return True
        probability = _probability(node, qualified)
        return probability == 0 or (probability == 1 and short in catalogue.PROBABILITY_ONLY_TRANSFORMS)

    def _never_applied(self) -> bool:
        """Inside `RandomApply([...], p=0)`: the transforms listed there never run."""
        for ancestor in reversed(self.ctx.ancestors):
            if isinstance(ancestor, (ast.List, ast.Tuple, ast.keyword)):
                continue
            qualified = self._qualname(ancestor) if isinstance(ancestor, ast.Call) else None
            return qualified is not None and _probability(ancestor, qualified) == 0
        return False


class Seedings:
    """Where the file draws from a generator seeded just before (its draws then repeat from run to run): in the
    block of a `with` of a project function that seeds it (fairseq's `with data_utils.numpy_seed(self.seed,
    self.epoch, index):`, which seeds NumPy and puts its state back afterwards), after a seeding of it earlier in an
    enclosing function (`np.random.seed(self.seed + index)`), or in a function the file calls only from such
    places (llama-cookbook's augmentations, called after `random.seed(configs.random_seed)`)."""

    def __init__(self, ctx) -> None:
        self.ctx = ctx
        self._earlier: dict[int, list[tuple[tuple[int, int], frozenset[str]]]] = {}  # function -> its seedings
        self._contexts: dict[int, frozenset[str]] = {}  # `with` statement -> what its context managers seed
        self._calls: dict[str, list[tuple[frozenset[str], ast.AST | None]]] = {}  # name -> (seeded there, caller)
        self._references: Counter | None = None
        self._project: tuple | None = None  # (folder, project imports, module-level functions), read once

    def here(self, node: ast.AST) -> frozenset[str]:
        """The generator families seeded where `node`, being visited, runs: in its own function (a function
        defined after `set_seed(...)` in `main()` runs later, when the data pipeline calls it)."""
        found: frozenset[str] = frozenset()
        ancestors = self.ctx.ancestors
        for index in range(len(ancestors) - 1, -1, -1):
            ancestor = ancestors[index]
            if isinstance(ancestor, (*FUNCTION_TYPES, ast.Lambda, ast.ClassDef)):
                return found | (self._seeded_before(ancestor, node) if isinstance(ancestor, FUNCTION_TYPES) else found)
            if isinstance(ancestor, (ast.With, ast.AsyncWith)) and index + 1 < len(ancestors) \
                    and any(statement is ancestors[index + 1] for statement in ancestor.body):
                found |= self._context_families(ancestor)
        return found

    def note_call(self, node: ast.Call, name: str) -> None:
        """A call of the file's function or method `name`, being visited."""
        self._calls.setdefault(name, []).append((self.here(node), self.ctx.current_def()))

    def by_callers(self, function: ast.AST, family: str | None, seen: frozenset[int] = frozenset()) -> bool:
        """Whether the file calls `function` only where `family` is seeded, or from functions it calls only so,
        and refers to it nowhere else (not handed to the data pipeline, not a method a library calls)."""
        calls = self._calls.get(function.name, [])
        if (family is None or not calls or function.name in SAMPLE_METHODS or id(function) in seen
                or len(calls) != self._referred()[function.name]):
            return False
        return all(family in seeded or caller is not None and self.by_callers(caller, family, seen | {id(function)})
                   for seeded, caller in calls)

    def _referred(self) -> Counter:
        """How often the file names each of its functions and methods (`name`, `self.name`)."""
        if self._references is None:
            self._references = Counter(node.id if isinstance(node, ast.Name) else _self_attribute(node)
                                       for node in ast.walk(self.ctx.tree) if isinstance(node, (ast.Name, ast.Attribute)))
        return self._references

    def _seeded_before(self, function: ast.AST, node: ast.AST) -> frozenset[str]:
        """The families `function` itself seeds before `node`."""
        if id(function) not in self._earlier:
            methods = next(({item.name: item for item in cls.body if isinstance(item, FUNCTION_TYPES)}
                            for cls in ast.walk(self.ctx.tree) if isinstance(cls, ast.ClassDef) and function in cls.body), {})
            self._earlier[id(function)] = [((call.lineno, call.col_offset), families) for call in own_nodes(function)
                                           if isinstance(call, ast.Call) and (families := project_draws.seeds([call], self.ctx.qualname)
                                                                              | self._seeded_by(call, methods))]
        position = (node.lineno, node.col_offset)
        return frozenset().union(*(families for at, families in self._earlier[id(function)] if at < position))

    def _context_families(self, statement: ast.With | ast.AsyncWith) -> frozenset[str]:
        """The families the project functions a `with` statement calls for its context managers seed."""
        if id(statement) not in self._contexts:
            self._contexts[id(statement)] = frozenset().union(*(
                self._seeded_by(item.context_expr) for item in statement.items if isinstance(item.context_expr, ast.Call)))
        return self._contexts[id(statement)]

    def project(self) -> tuple:
        """(the file's folder, its project imports, its module-level functions), read once."""
        if self._project is None:
            tree = self.ctx.tree
            self._project = (project.file_folder(self.ctx.path), project.local_imports(project.import_statements(tree.body)),
                             {node.name: node for node in tree.body if isinstance(node, FUNCTION_TYPES)})
        return self._project

    def _seeded_by(self, call: ast.Call, methods: dict[str, ast.AST] | None = None) -> frozenset[str]:
        """The families the project function `call` calls (or the method of `methods` it calls as `self.name(...)`:
        dlrm's `RandomDataset.reset_numpy_seed`) seeds in its own body."""
        folder, local, functions = self.project()
        function, path = pinning.called_function(call, functions, folder, local)
        if function is None and methods and _self_method(call) in methods:
            function = methods[_self_method(call)]
        module = project.load(path) if path is not None else None
        if function is None or path is not None and module is None:
            return frozenset()
        return project_draws.seeds(own_nodes(function), module.imports.resolve if module is not None else self.ctx.qualname)


def _reports_itself(function: ast.AST | None) -> bool:
    """Whether a module-level function is per-sample code by itself (named for transforms, or taking a sample
    first), so that its own file reports its draws."""
    return function is not None and (ITEM_NAME.search(function.name) is not None or per_sample(function))


def _kept_for_samples(cls: ast.ClassDef, init: ast.AST, parameter: str) -> bool:
    """Whether `init` keeps its function `parameter` (itself, or a `functools.partial` of it: `self._prep_func =
    partial(prep_func, ...)`) in an attribute that a per-sample method of `cls` (`__getitem__`, `__iter__`,
    `__call__`, ...) uses."""
    kept = {target.attr for node in ast.walk(init) if isinstance(node, ast.Assign)
            and isinstance(value := called_like(node.value, {}), ast.Name) and value.id == parameter
            for target in node.targets if _self_attribute(target) is not None}
    return bool(kept) and any(_self_attribute(node) in kept for item in cls.body
                              if isinstance(item, FUNCTION_TYPES) and item.name in ITEM_METHODS
                              for node in ast.walk(item) if isinstance(node, ast.Attribute))


def _probability(node: ast.Call, qualified: str) -> float | None:
    """The literal probability a transform is applied with, when it takes one and it is given (1 with
    albumentations' `always_apply=True`, before 2.0)."""
    spec = catalogue.probability_argument(qualified)
    if spec is None:
        return None
    if catalogue.transform_library(qualified) == "albumentations" and constant(keyword(node, "always_apply")) is True:
        return 1
    given = keyword(node, spec[0]) if spec[1] is None else argument(node, spec[1], spec[0])
    probability = constant(given)
    if isinstance(probability, bool) or not isinstance(probability, (int, float)):
        return None
    return probability


def _twin_message(qualified: str) -> str:
    """The finding's message: the deterministic twin when the catalogue knows one, else removal."""
    short = qualified.rpartition(".")[2]
    if catalogue.sizes_at_random(qualified):
        several = " when given several sizes" if short in catalogue.SAMPLED_VALUES.get("detectron2", {}) else ""
        return (f"`{short}` draws the size (or the position) of the image it returns{several}: give it one size "
                "while debugging (removing it would feed the images at the size they were read)")
    twins = catalogue.transform_twins(qualified)
    if twins:
        replacement = " + ".join(f"`{name}`" for name, _ in twins)
        return f"`{short}` augments at random: replace it with {replacement} while debugging"
    return f"`{short}` augments at random: remove it while debugging"


def _degenerate(value: ast.expr) -> bool:
    """A range with equal bounds: `0` (symmetric), `(a, a)` or `(a, a, b, b)`."""
    if constant(value) == 0:
        return True
    if not isinstance(value, (ast.Tuple, ast.List)) or len(value.elts) not in (2, 4):
        return False
    elts = value.elts
    return all(ast.dump(elts[i]) == ast.dump(elts[i + 1]) for i in range(0, len(elts), 2))


def _whole_area(value: ast.expr | None) -> bool:
    """An area range of `(1, 1)`: the crop keeps the whole image (see `catalogue.WHOLE_AREA_CROPS`)."""
    return isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == 2 and all(
        isinstance(constant(bound), (int, float)) and not isinstance(constant(bound), bool) and constant(bound) == 1
        for bound in value.elts)


def _one_value(values: ast.expr | None, style: ast.expr | None) -> bool:
    """Whether detectron2's `ResizeShortestEdge(values, sample_style=style)` resizes to one size (`RandomRotation`
    rotates by one angle): a number, equal values, or a name given without a sample style (`SAMPLED_VALUES`)."""
    if isinstance(values, (ast.Tuple, ast.List)):
        return len({ast.dump(value) for value in values.elts}) == 1
    return isinstance(constant(values), (int, float)) or style is None


def _threshold(node: ast.AST, parent: ast.AST) -> ast.expr | None:
    """What the draw `node` is compared below in `parent` (`random.random() < p`, `p > np.random.rand()`)."""
    if not isinstance(parent, ast.Compare) or len(parent.ops) != 1:
        return None
    if parent.left is node and isinstance(parent.ops[0], (ast.Lt, ast.LtE)):
        return parent.comparators[0]
    if parent.comparators[0] is node and isinstance(parent.ops[0], (ast.Gt, ast.GtE)):
        return parent.left
    return None


def _self_method(node: ast.Call) -> str | None:
    """The name of the method of its own `node` calls (`self.name(...)`), if any."""
    return _self_attribute(node.func)


def _self_attribute(node: ast.expr) -> str | None:
    """`name` of `self.name`, if `node` is one."""
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
        return node.attr
    return None


def _named_once(tree: ast.Module) -> dict[str, ast.FunctionDef | ast.AsyncFunctionDef]:
    """The file's module-level functions, and its nested ones whose name no other function of the file has
    (methods are not called by a bare name)."""
    methods = {id(item) for node in ast.walk(tree) if isinstance(node, ast.ClassDef) for item in node.body}
    functions: dict[str, list] = {}
    for node in ast.walk(tree):
        if isinstance(node, FUNCTION_TYPES) and id(node) not in methods:
            functions.setdefault(node.name, []).append(node)
    top = {node.name: node for node in tree.body if isinstance(node, FUNCTION_TYPES)}
    return {**{name: found[0] for name, found in functions.items() if len(found) == 1}, **top}

"""MSP301 data-shuffle: a data loader, sampler or MindSpore dataset that visits samples in random order."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from msprobe_rewriter import catalogue, conditions, opt_in, pinning, project, seeding
from msprobe_rewriter.call_defaults import default_elsewhere
from msprobe_rewriter.conditions import condition_text
from msprobe_rewriter.context import (
    FUNCTION_TYPES,
    NOT_CONSTANT,
    Site,
    argument,
    constant,
    keyword,
)
from msprobe_rewriter.imports import ImportTracker
from msprobe_rewriter.late_seeding import code_text
from msprobe_rewriter.pipeline import PipelineValues
from msprobe_rewriter.rules.base import Invalid, Report, Rule
from msprobe_rewriter.values import UNKNOWN, FollowsValues

LIBRARY_DATASETS, LIBRARY_WEBDATASET = "datasets", "webdataset"

# More positional arguments than this and a MindSpore dataset may get `shuffle` by position.
MAX_UNAMBIGUOUS_POSITIONALS = 3
MAX_HELPER_DEPTH = 3  # calls followed from a project sampler's `__iter__` into functions of its module
OPT_IN = " (only when `{switch}` is true: false with the default arguments)"
DISTRIBUTED_ONLY = (" (only in a run without torch.distributed: once it is initialised, the sampler built on line "
                    "{line} decides the order)")
DISTRIBUTED_INITIALISED = frozenset({"torch.distributed.is_initialized"})
LOADER_MESSAGE = "the data loader draws a random order each epoch"  # msprobe-instrument reads it as a prefix
LOADER_ADVICE = " (`{call}`): pass `shuffle=False` while debugging"
SEEDED_BY_BASE = "(seeded by `seed` + epoch, so the order depends on the world size)"
# a subclass with its own `__iter__`, which decides how the order is seeded
OWN_ITER = "(its own `__iter__` decides how, one share per replica: the order depends on the world size)"
DISTRIBUTED_MESSAGE = f"`{{name}}` {{shuffles}} {SEEDED_BY_BASE}: pass `shuffle=False` while debugging"
# A constant `num_replicas=`: the world size no longer decides the order, `seed` (0 unless given) with the epoch does.
REPLICAS_MESSAGE = ("`{name}` {shuffles}: pass `shuffle=False` while debugging (seeded by `seed` + epoch, with "
                    "`num_replicas` a constant: the order repeats in every run; it still differs from another framework's)")
DEEPSPEED_MESSAGE = ("`deepspeed.initialize(training_data=...)` builds a loader that shuffles (a `DistributedSampler`, "
                     "or a `RandomSampler` in one process): while debugging build a `DataLoader(..., shuffle=False)` "
                     "yourself and leave `training_data` out")
TIMM_MESSAGE = "timm's `{name}(is_training=...)` shuffles: pass `is_training=False` while debugging"
TIMM_SEEDED_NOTE = (" (with a generator of its own, seeded with `seed=` + the epoch: the order repeats on every "
                    "device; it still differs from another framework's)")
SEEDED_NOTE = (" (its own `generator=` repeats the order on every device; it still differs from another "
               "framework's)")
# MindSpore's dataset seed (`mindspore.dataset.config.set_seed`, also set by `mindspore.set_seed`) seeds each shuffle
# of the pipeline: what else the run draws does not move it.
PIPELINE_SEEDED_NOTE = (" (`{call}` before it seeds the data pipeline: the order repeats on every run; it still "
                        "differs from another framework's)")
SUBSET_ADVICE = ("pass its indices in order instead (`sampler=list(indices)`: any sequence of indices is a "
                 "sampler), or give it a seeded `generator=`,")
HF_SHUFFLE_MESSAGE = ("Hugging Face `datasets`' `shuffle()` {unseeded} takes its seed from NumPy's global "
                      "generator (a streamed dataset's from fresh entropy){state}: pass `seed=` or drop the shuffle "
                      "while debugging")
HF_SPLIT_MESSAGE = ("Hugging Face `datasets`' `train_test_split` {unseeded} shuffles, seeded from NumPy's global "
                    "generator{state}: pass `seed=` (or `shuffle=False`) while debugging")
# What NumPy's global generator holds there: seeded before (or unknown), never seeded by the script, seeded after.
NUMPY_DRAWN = ", so anything else that draws from NumPy changes the {what}"
NUMPY_UNSEEDED = ", which this script never seeds, so the {what} changes on every run"
NUMPY_SEEDED_LATER = ", which this script seeds only after it (`{seeder}`, line {line}), so the {what} changes on every run"
UNSEEDED = "without `seed=`"
# `seed=args.seed` with `--seed` defaulting to None: datasets then draws the seed from NumPy's global state.
SEED_NONE = "with `seed={seed}`, None with the default arguments,"
WEBDATASET_MESSAGE = ("webdataset's `{name}` seeds a generator of its own from the clock and the process id "
                      "(`random.Random(int((os.getpid() + time.time()) * 1e9))`) unless given `rng=` or `seed=`: "
                      "the order changes on every run, whatever the script seeds; pass `rng=random.Random(seed)` "
                      "(or `seed=`, where the version takes it) or drop the stage while debugging")
PROJECT_SAMPLER_MESSAGE = ("the project's `{name}` draws its order from a global generator (`{draw}` in {where}), "
                           "so anything else that draws changes it: {fix} while debugging")


class DataShuffle(FollowsValues, Rule):
    code = "MSP301"
    name = "data-shuffle"
    severity = "warning"
    frameworks = ("pytorch", "mindspore")
    fixable = True
    switched_by_flags = True
    message = "the data order is random: pass `shuffle=False` (and use a sequential sampler) while debugging"
    summary = ("Flags `DataLoader(shuffle=True)` (or a `shuffle=` expression; also the graph libraries' loaders, "
               "PyG's `DataLoader`, `NeighborLoader`, `LinkNeighborLoader`, ... and DGL's `DataLoader`, "
               "`GraphDataLoader`), `RandomSampler`, "
               "`SubsetRandomSampler`, `WeightedRandomSampler` (torchvision's `RandomClipSampler`, transformers' "
               "`LengthGroupedSampler`, torchdata's stateful samplers), `DistributedSampler` without `shuffle=False` (a "
               "subclass named as called: Open-Sora's `VariableVideoBatchSampler`; one defining its own `__iter__`, vits' "
               "`DistributedBucketSampler`, is said to draw its order its own way), "
               "MindSpore datasets created with `shuffle=True` or with neither `shuffle=` nor a sampler (they "
               "shuffle by default; `sampler=None` is no sampler, nor is a `sampler=` None with the default arguments, "
               "a parameter defaulting to None that no call in the file sets: mindediting's factories; and a `GeneratorDataset` over an iterator, or an "
               "object of the project's that iterates but cannot be indexed or whose `__getitem__` never reads its "
               "index (minddiffusion's `MetaLoader`, which returns the next batch of a loader), keeps its order), MindSpore's random samplers, and `dataset.shuffle(buffer_size)`; timm's "
               "`create_loader`/`create_naflex_loader(is_training=True)`, mindcv's `create_dataset` and mindyolo's "
               "`create_loader` (both shuffle unless given `shuffle=False`); `deepspeed.initialize(training_data=...)`, whose "
               "loader shuffles through a `DistributedSampler` (a `RandomSampler` in one process); webdataset's "
               "`shuffle` stage and a `WebDataset` pipeline's `.shuffle(n)` without `rng=` or `seed=` (seeded "
               "from the clock); a Hugging Face dataset's `.shuffle()` and `.train_test_split()` without `seed=` or "
               "`generator=` (seeded from NumPy's global generator; also given a `seed=` that is None with the default "
               "arguments, diffusers' `seed=args.seed`), where the value is known to come from "
               "`load_dataset`, `Dataset.from_...` or their methods. A torch `DistributedSampler` given a "
               "constant `num_replicas=` is information: its order, drawn from `seed` + epoch, no longer depends on the world "
               "size and repeats in every run (torchtune's `num_replicas=1, rank=0`), and so is a MindSpore dataset "
               "made after a statement `mindspore.dataset.config.set_seed(n)` (or `mindspore.set_seed(n)`) with a "
               "literal seed earlier in the same function, in its block or one around it (mindrlhf's PPOTrainer): "
               "the pipeline's seed repeats its order in every run. A class the file derives from `DataLoader` "
               "or `DistributedSampler` (yolov5's `InfiniteDataLoader`), or imports from a project module that "
               "derives it (through at most three files), counts as its base, and so does a name, or a `self` "
               "attribute within its class, every assignment binds to such classes (`loader = DataLoader if w "
               "else InfiniteDataLoader`, `self.sampler = RandomSampler if single else DistributedSampler`). A "
               "sampler class of the project (this file or a module it imports) is reported where it is built "
               "with its `shuffle` on when its `__iter__`, or a function of its module it calls, draws from a "
               "global generator (torch's without `generator=` or given None, NumPy's, `random`'s), with the "
               "arguments it is built with: Swin's `SubsetRandomSampler`, LLaVA's `LengthGroupedSampler` (built "
               "without a `generator=`); one that seeds a generator of its own (deit's `RASampler`, from the "
               "epoch) repeats its order and is not. A loader's `shuffle=` that is on only while its sampler is None "
               "(`shuffle if sampler is None else False`, `shuffle=sampler is None`), where the function built one "
               "before under `if ... and dist.is_initialized():` (OpenRLHF's `setup_dataloader`), is information: "
               "the loader shuffles itself only in a run without torch.distributed.")
    why = ("When two runs see the samples in different orders, their losses differ from the first step and no "
           "per-step comparison between them means anything. A seeded shuffle repeats on the same software, but "
           "it draws from the framework's generator, so any other change in random-number consumption (a GPU "
           "and an NPU run, PyTorch against MindSpore, a resumed run) changes the order; webdataset's buffer "
           "shuffle seeds itself from the clock and differs on every run. MindSpore datasets "
           "shuffle unless told otherwise: a missing `shuffle=` means random order. A `shuffle=` given by an "
           "expression (`shuffle=is_train`) is flagged: on the training path it is true; one false with the default "
           "arguments (a parameter that defaults to False and that no call in the file, nor in the project's files "
           "that import it, sets: nanotron's `get_sampler`; an option that defaults to False) is information, naming "
           "it, and so is one "
           "in a branch of a flag off with the default arguments (diffusers' `if args.max_train_samples is not None:`). "
           "An `and`/`or` false under every assignment of a name in it, read with the `if` tests the assignment runs "
           "under, is no shuffle (lerobot's `shuffle=shuffle and not cfg.dataset.streaming`).")
    fix = ("While debugging pass `shuffle=False` to `DataLoader`, `DistributedSampler` and MindSpore datasets, "
           "replace `RandomSampler` with `SequentialSampler` (torchvision's `RandomClipSampler` with `UniformClipSampler`, "
           "MindSpore's `SubsetRandomSampler` with `SubsetSampler`), pass a `SubsetRandomSampler`'s indices "
           "themselves in order (`sampler=list(indices)`), drop `dataset.shuffle(...)` or give a Hugging Face "
           "dataset's `shuffle`/`train_test_split` a `seed=` (webdataset's `shuffle` an "
           "`rng=random.Random(seed)`). To resume at step k in MindSpore use `dataset.skip(k)`.")
    valid = (
        "import torch\nfrom torch.utils.data import DataLoader as DL\n\n"
        "loader = DL(torch.arange(10), batch_size=2, shuffle=False)\nplain = DL(torch.arange(10), batch_size=2)\n",
        "from torch.utils.data import DataLoader, SequentialSampler\nfrom torch.utils.data.distributed import "
        "DistributedSampler\n\n\ndef build(ds):\n    sampler = DistributedSampler(ds, shuffle=False)\n"
        "    return DataLoader(ds, sampler=sampler), DataLoader(ds, sampler=SequentialSampler(ds))\n",
        "import mindspore.dataset as ds\n\ndata = ds.MnistDataset(\"mnist/\", shuffle=False)\n"
        "data = data.map(lambda x: x, input_columns=[\"image\"], num_parallel_workers=1).batch(32)\n"
        "cifar = ds.Cifar10Dataset(\"cifar/\", sampler=ds.SequentialSampler())\n"
        "padded = ds.PaddedDataset([{\"image\": 0}])\n",
        "import random\nimport numpy as np\nimport mindspore.dataset as ds\n\n"
        "items = list(range(10))\nrandom.shuffle(items)\nnp.random.shuffle(items)\nrng = np.random.default_rng(0)\n"
        "rng.shuffle(items)\n",
        "from mindspore.dataset import GeneratorDataset\n\n\ndef rows():\n    for i in range(10):\n        yield (i,)\n"
        "\n\ndata = GeneratorDataset(rows, [\"x\"])  # an iterable source keeps its order\n"
        "again = GeneratorDataset(rows(), [\"x\"], shuffle=True)  # which shuffle= cannot change\n",
        # a sampler parameter the file's call sets: the sampler decides the order
        "import mindspore.dataset as ds\n\n\ndef create(source, sampler=None):\n"
        "    return ds.GeneratorDataset(source=source, column_names=[\"HR\"], sampler=sampler)\n\n\n"
        "data = create([1, 2], sampler=ds.SequentialSampler())\n",
        "from torch.utils.data import DataLoader\n\nkwargs = {\"batch_size\": 8, \"shuffle\": False}\n"
        "loader = DataLoader([1, 2, 3], **kwargs)\n",
        "from mylib import DataLoader, RandomSampler\n\nloader = DataLoader([1, 2], shuffle=True, "
        "sampler=RandomSampler([1, 2]))  # not torch's\n",
        "from torch.utils.data import DataLoader, Dataset\n\n\nclass Loader(DataLoader):\n    pass\n\n\n"
        "class Images(Dataset):\n    pass\n\n\nloader = Loader(Images(), shuffle=False)\n",
        # deit's RASampler seeds a generator of its own from the epoch: the order repeats on every run
        "import numpy as np\nimport torch\nfrom torch.utils.data import Sampler\n\n\nclass RASampler(Sampler):\n"
        "    def __init__(self, dataset, shuffle=True):\n        self.dataset, self.shuffle, self.epoch = dataset, shuffle, 0\n"
        "\n    def __iter__(self):\n        g = torch.Generator()\n        g.manual_seed(self.epoch)\n"
        "        return iter(torch.randperm(len(self.dataset), generator=g).tolist())\n\n\n"
        "class ChunkSampler(Sampler):\n    def __init__(self, n, shuffle=True):\n        self.n, self.shuffle = n, shuffle\n\n"
        "    def __iter__(self):\n        return iter(np.random.permutation(self.n) if self.shuffle else range(self.n))\n\n\n"
        "train = RASampler(list(range(10)), shuffle=True)\nordered = ChunkSampler(10, shuffle=False)\n",
        "import timm.data\nfrom mindcv.data import create_dataset, create_loader\nimport mindyolo.data\n\n"
        "val = timm.data.create_naflex_loader(ds, batch_size=64, is_training=False)\n"
        "data = create_dataset(\"imagenet\", \"/data\", \"train\", False)\n"
        "loader = create_loader(data, 32, is_training=True)  # mindcv's loader keeps its dataset's order\n"
        "coco = mindyolo.data.create_loader(coco_ds, None, [], [], 8, shuffle=False, num_parallel_workers=1)\n",
        # seeded Hugging Face shuffles and splits (also by an option that defaults to a seed); an object not known
        # to be a dataset
        "import argparse\n\nimport torch\nfrom datasets import load_dataset\n\nparser = argparse.ArgumentParser()\n"
        "parser.add_argument(\"--seed\", type=int, default=42)\nargs = parser.parse_args()\n"
        "data = load_dataset(\"imagefolder\", data_dir=\"train/\")[\"train\"].shuffle(seed=args.seed)\n\n\n"
        "def build(path, cfg, seed):\n    data = load_dataset(\"json\", data_files=path)\n"
        "    split = data[\"train\"].train_test_split(test_size=0.1, seed=seed)\n"
        "    ordered = data[\"train\"].train_test_split(0.1, shuffle=False)\n"
        "    return split[\"train\"].shuffle(seed=seed), data.shuffle(seeds=seed), ordered, cfg.shuffle()\n",
        # webdataset's shuffle with a generator or a seed of its own; a buffer of one keeps the order
        "import random\nimport webdataset as wds\n\nstages = [wds.shuffle(1000, rng=random.Random(0)), "
        "wds.shuffle(1000, seed=0)]\ndata = wds.WebDataset(urls, shardshuffle=False).shuffle(0).decode(\"pil\")\n"
        "data = data.shuffle(500, rng=random.Random(1))\n",
        # the sampler class a `self` attribute holds is followed only when every assignment in the class is one
        "from torch.utils.data import DataLoader, RandomSampler, SequentialSampler\n\n\nclass Provider:\n"
        "    def __init__(self, sampler=None):\n        self.sampler = SequentialSampler\n"
        "        if sampler is not None:\n            self.sampler = sampler\n\n"
        "    def loader(self, ds):\n        return DataLoader(ds, sampler=self.sampler(ds))\n",
        # lerobot's training script: `shuffle` is false on either branch of the `if`, read with the test it runs
        # under; mosaicml-streaming's dataset shuffles with generators of its own seeded from `shuffle_seed`
        """\
from streaming import StreamingDataset
from torch.utils.data import DataLoader


def make(dataset, cfg, sampler):
    if not cfg.dataset.streaming:
        shuffle = False
    else:
        shuffle = True
        sampler = None
    streamed = StreamingDataset(remote=cfg.remote, shuffle=True)
    return streamed, DataLoader(dataset, shuffle=shuffle and not cfg.dataset.streaming, sampler=sampler)
""",
        # minddiffusion's `MetaLoader`: its `__getitem__` ignores the index and returns the next batch of a loader
        "import mindspore.dataset as ds\n\n\nclass MetaLoader:\n    def __init__(self, loader):\n"
        "        self.iterator = iter(loader)\n\n    def __getitem__(self, index):\n"
        "        return next(self.iterator)\n\n    def __len__(self):\n        return 100\n\n\n"
        "def build(loader):\n    metaloader = MetaLoader(loader)\n"
        "    return ds.GeneratorDataset(metaloader, column_names=[\"img\"], shuffle=True)\n",
    )
    invalid = (
        # LLaVA's `_get_train_sampler`: its sampler only when `group_by_modality_length`, a training argument that is
        # False by default: info, naming it
        Invalid("""\
from dataclasses import dataclass

import transformers
from torch.utils.data import RandomSampler


@dataclass
class TrainingArguments(transformers.TrainingArguments):
    group_by_modality_length: bool = False


class LLaVATrainer(transformers.Trainer):
    def _get_train_sampler(self):
        if self.args.group_by_modality_length:
            return RandomSampler(self.train_dataset)
        return super()._get_train_sampler()
""", lines=(15,), severity="info"),
        # `shuffle=` from a parameter that defaults to False (no call of the file passes another value), or from an
        # option that defaults to False: information, naming it.
        Invalid("""\
import argparse

from torch.utils.data import DataLoader


def build(ds, shuffle=False):
    return DataLoader(ds, batch_size=8, shuffle=shuffle)


parser = argparse.ArgumentParser()
parser.add_argument("--shuffle", action="store_true")
args = parser.parse_args()
loaders = [build(range(8)), build(range(8), False), DataLoader(range(8), shuffle=args.shuffle)]
""", lines=(7, 13), severity="info"),
        # OpenRLHF's `setup_dataloader`: the loader shuffles itself only where torch.distributed is not initialised,
        # else the `DistributedSampler` built just before decides the order: info. The ImageNet example's
        # `shuffle=(sampler is None)`, its sampler built only `if args.distributed:`, stays a warning.
        Invalid("""\
from torch import distributed as dist
from torch.utils.data import DataLoader, DistributedSampler


def setup_dataloader(data, batch_size, shuffle=True, sampler=None):
    if sampler is None and dist.is_initialized():
        sampler = DistributedSampler(data, shuffle=False)  # (OpenRLHF's own, seeded with seed + epoch)
    return DataLoader(data, batch_size, sampler=sampler, shuffle=shuffle if sampler is None else False)
""", lines=(8,), severity="info"),
        Invalid("""\
from torch.utils.data import DataLoader, DistributedSampler


def imagenet(data, args):
    sampler = None
    if args.distributed:
        sampler = DistributedSampler(data, shuffle=False)
    return DataLoader(data, 8, shuffle=(sampler is None), sampler=sampler)
""", lines=(8,), severity="warning"),
        # ... but a call that passes True makes it a warning.
        Invalid("""\
from torch.utils.data import DataLoader


def build(ds, shuffle=False):
    return DataLoader(ds, batch_size=8, shuffle=shuffle)


loaders = [build(range(8)), build(range(8), shuffle=True)]
""", lines=(5,), severity="warning"),
        # LLaVA's LengthGroupedSampler: its `__iter__` calls a function of its module that draws with the
        # `generator=None` it was built with (one built with a generator of its own repeats its order).
        Invalid("""\
import torch
from torch.utils.data import Sampler


def grouped_indices(lengths, generator=None):
    return torch.randperm(len(lengths), generator=generator).tolist()


class LengthGroupedSampler(Sampler):
    def __init__(self, lengths, generator=None):
        self.lengths = lengths
        self.generator = generator

    def __iter__(self):
        return iter(grouped_indices(self.lengths, generator=self.generator))


sampler = LengthGroupedSampler([3, 1, 2])
seeded = LengthGroupedSampler([3, 1, 2], generator=torch.Generator().manual_seed(0))
""", lines=(18,)),
        # InternVL's patch of the Trainer's sampler: transformers' samplers as `transformers.trainer` re-exports
        # them, and a sampler class of the file's own under the name of one imported
        Invalid("import torch\nfrom torch.utils.data import Sampler\n"
                "from transformers.trainer import LengthGroupedSampler, RandomSampler\n\n\n"
                "class LengthGroupedSampler(Sampler):\n    def __iter__(self):\n"
                "        return iter(torch.randperm(len(self.lengths)).tolist())\n\n\n"
                "def get_train_sampler(self):\n    if self.args.group_by_length:\n"
                "        return LengthGroupedSampler(self.lengths)\n    return RandomSampler(self.train_dataset)\n",
                lines=(13, 14)),
        # open_clip's webdataset pipeline: a buffer shuffle seeded from the clock, stage and method forms
        Invalid("import torch\nimport webdataset as wds\n\n\ndef pipeline(shards, size, initial):\n"
                "    stages = [wds.SimpleShardList(shards), wds.shuffle(bufsize=size, initial=initial)]\n"
                "    return wds.DataPipeline(*stages), wds.WebDataset(shards).shuffle(1000).decode(\"pil\")\n",
                lines=(6, 7)),
        # alpaca-lora's finetune.py: a Hugging Face dataset shuffled and split without a seed
        Invalid("import torch\nfrom datasets import load_dataset\n\n\ndef build(path, val_size):\n"
                "    data = load_dataset(\"json\", data_files=path)\n"
                "    train_val = data[\"train\"].train_test_split(test_size=val_size)\n"
                "    train_data = train_val[\"train\"].shuffle().map(len)\n    return train_data\n", lines=(7, 8)),
        # DeepSpeedExamples' bing_bert: the sampler class is picked once, held in an attribute, called later
        Invalid("from torch.utils.data import DataLoader, RandomSampler\n"
                "from torch.utils.data.distributed import DistributedSampler\n\n\nclass Provider:\n"
                "    def __init__(self, args):\n"
                "        self.datasampler = RandomSampler if args.local_rank == -1 else DistributedSampler\n\n"
                "    def loader(self, dataset):\n"
                "        return DataLoader(dataset, batch_size=8, sampler=self.datasampler(dataset))\n", lines=(10,)),
        # open_clip's synthetic subsets: the indices are drawn in a random order (MindSpore's twin: SubsetSampler)
        Invalid("import mindspore.dataset as ds\nfrom torch.utils.data import DataLoader, SubsetRandomSampler\n\n"
                "loader = DataLoader(data, sampler=SubsetRandomSampler(ids))\nsubset = ds.SubsetRandomSampler(ids)\n",
                lines=(4, 5)),
        # PyG's loaders pass DataLoader's keywords on.
        Invalid("from torch_geometric.loader import NeighborLoader\n\n"
                "loader = NeighborLoader(data, num_neighbors=[25, 10], batch_size=1024, shuffle=True)\n", lines=(3,)),
        # DeepSpeedExamples' CIFAR-10 script: DeepSpeed builds the loader.
        Invalid("""\
import deepspeed


def train(args, net, trainset):
    engine, optimizer, loader, _ = deepspeed.initialize(args=args, model=net, model_parameters=net.parameters(),
                                                        training_data=trainset)
    return engine, loader
""", lines=(5,)),
        Invalid("import torch\n\nloader = torch.utils.data.DataLoader(torch.arange(10), batch_size=2, shuffle=True)\n",
                lines=(3,)),
        Invalid("from torch.utils.data import DataLoader as DL\n\n\ndef make(ds, is_train):\n"
                "    return DL(ds, batch_size=4, shuffle=is_train)\n", lines=(5,)),
        Invalid("from torchdata.stateful_dataloader import StatefulDataLoader\n\n\n"
                "def make(ds, args):  # a drop-in DataLoader that checkpoints mid-epoch\n"
                "    return StatefulDataLoader(ds, args.batch_size, True, num_workers=0)\n", lines=(5,)),
        Invalid("from torch.utils.data import RandomSampler, DataLoader\nfrom torch.utils.data.distributed import "
                "DistributedSampler\n\n\ndef build(ds, distributed):\n    if distributed:\n"
                "        sampler = DistributedSampler(ds)\n    else:\n        sampler = RandomSampler(ds)\n"
                "    return DataLoader(ds, sampler=sampler)\n", lines=(7, 9)),
        # vits' `DistributedBucketSampler`: its own `__iter__` seeds a generator with the epoch alone
        Invalid("import torch\nfrom torch.utils.data.distributed import DistributedSampler\n\n\n"
                "class BucketSampler(DistributedSampler):\n    def __iter__(self):\n        g = torch.Generator()\n"
                "        g.manual_seed(self.epoch)\n        return iter(torch.randperm(len(self.dataset), generator=g))\n"
                "\n\nsampler = BucketSampler(data, shuffle=True)\n", lines=(12,)),
        # torchtune's recipes: torchdata's checkpointable samplers; with a constant `num_replicas=` the world size no
        # longer decides the order (seeded by `seed` + epoch): it repeats in every run
        Invalid("from torchdata.stateful_dataloader.sampler import StatefulDistributedSampler\n\n\n"
                "def sampler(ds):\n"
                "    return StatefulDistributedSampler(ds, num_replicas=1, rank=0, shuffle=True, seed=0)\n",
                lines=(5,), severity="info"),
        # diffusers' text-to-image script: `--seed` defaults to None, so the subset is drawn with NumPy's global
        # state; only with `--max_train_samples`, which defaults to None
        Invalid("import argparse\n\nimport torch\nfrom datasets import load_dataset\n\n"
                "parser = argparse.ArgumentParser()\nparser.add_argument(\"--seed\", type=int, default=None)\n"
                "parser.add_argument(\"--max_train_samples\", type=int, default=None)\nargs = parser.parse_args()\n"
                "dataset = load_dataset(\"imagefolder\", data_dir=\"train/\")\n"
                "if args.max_train_samples is not None:\n"
                "    dataset[\"train\"] = dataset[\"train\"].shuffle(seed=args.seed).select(range(args.max_train_samples))\n",
                lines=(12,), severity="info"),
        # torchvision's video references: clips drawn at random from each video
        Invalid("from torchvision.datasets.samplers import RandomClipSampler\n\n\n"
                "def train_sampler(dataset, args):\n"
                "    return RandomClipSampler(dataset.video_clips, args.clips_per_video)\n", lines=(5,)),
        Invalid("import mindspore.dataset as ds\n\ndata = ds.ImageFolderDataset(\"imagenet/train\")\n"
                "data = data.shuffle(buffer_size=1000)\n", lines=(3, 4)),
        Invalid("import mindspore as ms\nfrom mindspore.dataset import vision\n\n\ndef create(path, batch):\n"
                "    data = ms.dataset.Cifar10Dataset(path, shuffle=True)\n"
                "    data = data.map(vision.HWC2CHW(), input_columns=\"image\").batch(batch)\n    return data\n",
                lines=(6,)),
        Invalid("import mindspore.dataset as ds\n\ntrain = ds.ImageFolderDataset(\"train/\", sampler=None)\n",
                lines=(3,)),
        # mindrlhf's PPOTrainer seeds the data pipeline just before: the order repeats on every run (a seeding in
        # another branch, after the dataset is made, or with a seed that is no literal does not count)
        Invalid("import mindspore\nfrom mindspore.dataset import MindDataset\n\n\ndef prompts(path):\n"
                "    if path is not None:\n        mindspore.dataset.config.set_seed(2023)\n"
                "        return MindDataset(path).project(columns=[\"prompt_ids\"])\n", lines=(8,), severity="info"),
        Invalid("import mindspore\nfrom mindspore.dataset import MindDataset\n\n\ndef prompts(path, seeded, rank):\n"
                "    if seeded:\n        mindspore.set_seed(1)\n    else:\n        other = MindDataset(path)\n"
                "    late = MindDataset(path)\n    mindspore.dataset.config.set_seed(1000 + rank)\n"
                "    ranked = MindDataset(path)\n    return other, late, ranked\n", lines=(9, 10, 12)),
        # mindediting's factories: `sampler=None` by default and passed on (its training path passes `shuffle=True`)
        Invalid("import mindspore.dataset as ds\n\n\ndef create_div2k(source, shuffle=None, sampler=None):\n"
                "    return ds.GeneratorDataset(source=source, column_names=[\"HR\"], sampler=sampler, shuffle=shuffle)\n",
                lines=(5,)),
        Invalid("import mindspore.dataset as ds\n\n\ndef build(path, **kwargs):\n"
                "    return ds.Cifar10Dataset(path, shuffle=True, **kwargs)\n", lines=(5,)),
        Invalid("import mindspore.dataset as ds\n\n\ndef pairs(images, masks):\n"
                "    train = ds.zip((images, masks))\n    return train.shuffle(24)\n", lines=(6,)),
        Invalid("import mindspore.dataset as ds\n\n\ndef pipeline(dataset, buffer):\n"
                "    return dataset.shuffle(buffer)\n\n\nsampler = ds.DistributedSampler(8, 0)\n", lines=(5, 8)),
        Invalid("from torch.utils.data import DataLoader\n\nkwargs = {\"batch_size\": 8}\n"
                "kwargs.update({\"shuffle\": True})\nloader = DataLoader([1, 2, 3], **kwargs)\n", lines=(5,)),
        Invalid("from timm.data import create_loader\n\nloader = create_loader(dataset, (3, 224, 224), 64, "
                "is_training=True)\n", lines=(3,)),
        Invalid("from timm.data import create_naflex_loader\n\nloader = create_naflex_loader(dataset, batch_size=64, "
                "is_training=True, num_workers=8)\n", lines=(3,), severity="info"),
        Invalid("from mindcv.data import create_dataset\nfrom mindyolo.data import create_loader\n\n\n"
                "def build(args, coco):\n    train = create_dataset(name=\"imagenet\", root=args.data_dir, "
                "shuffle=args.shuffle)\n    other = create_dataset(\"cifar10\", args.data_dir, \"train\")\n"
                "    return train, other, create_loader(coco, None, [], [], 8, shuffle=True)\n", lines=(6, 7, 8)),
        Invalid("from torch.utils.data import DataLoader\n\nval_loader = DataLoader([1, 2, 3], shuffle=True)\n",
                lines=(3,), severity="info"),
        Invalid("import torch\nfrom torch.utils.data import DataLoader\n\n\ndef build(ds, seed):\n"
                "    g = torch.Generator().manual_seed(seed)\n    return DataLoader(ds, shuffle=True, generator=g)\n",
                lines=(7,), severity="info"),
        Invalid("from torch.utils.data import DataLoader\n\n\ndef build(ds):  # None: the global generator\n"
                "    return DataLoader(ds, batch_size=8, shuffle=True, generator=None)\n", lines=(5,)),
        # yolov5: the file's subclasses of DataLoader and DistributedSampler take their arguments
        Invalid("from torch.utils.data import dataloader, distributed\n\n\n"
                "class InfiniteDataLoader(dataloader.DataLoader):\n    pass\n\n\n"
                "class SmartDistributedSampler(distributed.DistributedSampler):\n    pass\n\n\n"
                "def build(ds, shuffle):\n    sampler = SmartDistributedSampler(ds)\n"
                "    return InfiniteDataLoader(ds, shuffle=shuffle, sampler=sampler)\n", lines=(13, 14)),
        # yolov5's create_dataloader picks the loader class first, then calls the name
        Invalid("import torch\nfrom torch.utils.data import DataLoader, dataloader\n\n\n"
                "class InfiniteDataLoader(dataloader.DataLoader):\n    pass\n\n\n"
                "def build(ds, shuffle, image_weights):\n    loader = DataLoader if image_weights else InfiniteDataLoader\n"
                "    return loader(ds, batch_size=16, shuffle=shuffle)\n", lines=(11,)),
        # `shuffle` true on one branch; a `__getitem__` that reads its index
        Invalid("""\
import mindspore.dataset as ds
from torch.utils.data import DataLoader


class Rows:
    def __getitem__(self, index):
        return (index,)


def make(dataset, cfg):
    if cfg.debug:
        shuffle = False
    else:
        shuffle = True
    rows = ds.GeneratorDataset(Rows(), column_names=["x"], shuffle=True)
    return rows, DataLoader(dataset, shuffle=shuffle and not cfg.dataset.streaming)
""", lines=(15, 16)),
        # the project's samplers: Swin's shuffles with torch.randperm, mindaudio-like ones with NumPy's global RNG
        Invalid("import torch\n\n\nclass SubsetRandomSampler(torch.utils.data.Sampler):\n"
                "    def __init__(self, indices):\n        self.indices = indices\n\n    def __iter__(self):\n"
                "        return (self.indices[i] for i in torch.randperm(len(self.indices)))\n\n\n"
                "sampler = SubsetRandomSampler(list(range(10)))\n", lines=(12,)),
        Invalid("import mindspore.dataset as ds\nimport numpy as np\n\n\nclass DistributedSampler:\n"
                "    def __init__(self, dataset, rank, group_size, shuffle=True):\n"
                "        self.size, self.rank, self.group, self.shuffle = len(dataset), rank, group_size, shuffle\n\n"
                "    def __iter__(self):\n"
                "        indices = np.random.permutation(self.size) if self.shuffle else np.arange(self.size)\n"
                "        return iter(indices[self.rank::self.group])\n\n\n"
                "data = ds.GeneratorDataset(source, [\"x\"], sampler=DistributedSampler(source, 0, 8))\n",
                lines=(14,)),
    )

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.data = PipelineValues(ctx)
        self.values = self.data.values
        self._iterable_sources: frozenset[str] | None = None
        self._classes: dict[str, ast.ClassDef] | None = None  # the file's top-level classes, by name
        self._local_imports: project.LocalImports | None = None
        self.instances: dict[str, ast.Call] = {}  # name -> the call of a local class or function it holds
        self._libraries: dict[int, str | None] = {}  # expression -> the data library whose object it holds
        self._installed: dict[str, bool] = {}  # library -> imported from site-packages (not a project module)
        self._attributes: dict[int, dict[str, list[ast.expr | None]]] = {}  # class -> `self.<attr>` values
        # the `shuffle=` expression that turned the call being visited's shuffling on: (it, whether None shuffles,
        # the function around the call); and the reports that rest on one, settled in `finish`
        self._switch: tuple[ast.expr, bool, ast.AST | None] | None = None
        self.by_option: list[tuple[Report, tuple[ast.expr, bool, ast.AST | None]]] = []
        # Hugging Face shuffles and splits given `seed=` an expression (`args.seed`), read with the default
        # arguments in `finish`: (where, the method, the seed, the function around the call)
        self.by_seed: list[tuple[Site, str, ast.expr, ast.AST | None]] = []
        # Hugging Face shuffles and splits, reported in `finish`: (where, the method, how unseeded, the function,
        # the `shuffle=` expression it rests on)
        self.hf_found: list[tuple[Site, str, str, ast.AST | None, tuple | None]] = []

    def visit_Assign(self, node: ast.Assign | ast.AnnAssign) -> None:
        super().visit_Assign(node)
        if isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Name):
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                if isinstance(target, ast.Name):
                    self.instances[target.id] = node.value

    visit_AnnAssign = visit_Assign

    def visit_Call(self, node: ast.Call) -> None:
        self.values.call(node)
        self._switch = None
        qualified = None if self._shadowed(node) else self.ctx.call_qualname(node)
        fixable = None
        if qualified is None:
            held = self._held_classes(node)
            if held is not None and len({name.rpartition(".")[2] for name in held}) > 1:
                self._report_choice(node, held)
                return
            qualified = held[0] if held else None
            # msprobe-instrument sets a loader's `shuffle=False` through a name holding its class, nothing else
            fixable = None if catalogue.loader_positions(qualified) is not None else False
        if qualified is None:
            zoo = self.ctx.imports.resolve_any(node.func)
            if zoo in catalogue.MINDSPORE_ZOO_SHUFFLING_LOADERS:
                self._zoo_loader(node, zoo)
            elif "Sampler" in (self.ctx.callee_name(node) or ""):
                self._project_sampler(node)
            elif not self._library_shuffle(node):
                self._dataset_shuffle(node)
            return
        short = qualified.rpartition(".")[2]
        message = self._order_message(node, qualified, short)
        if message is None:
            return
        subclass = self._subclass_called(node)
        if subclass is not None:  # name the class called (Open-Sora's `VariableVideoBatchSampler`), not its base
            message = message.replace(f"`{short}", f"`{subclass}", 1)
            if self._iterates_itself(subclass):
                message = message.replace(SEEDED_BY_BASE, OWN_ITER)
        if (_random_sampler(qualified) and not self._sampler_fixable(qualified)
                or qualified in catalogue.DEEPSPEED_TRAINING_DATA or qualified in catalogue.WEBDATASET_SHUFFLES):
            fixable = False  # no deterministic replacement msprobe-instrument could put in
        if qualified in catalogue.TIMM_SEEDED_SHUFFLE_LOADERS:
            self.report(self.data.site(node), message + TIMM_SEEDED_NOTE, "info", fixable)
            return
        if self._fixed_replicas(node, qualified):
            self.report(self.data.site(node), message, "info", fixable)
            return
        seeding_call = self._pipeline_seeding(node) if catalogue.shuffles_by_default(qualified) else None
        if seeding_call is not None:
            self.report(self.data.site(node), message + PIPELINE_SEEDED_NOTE.format(call=ast.unparse(seeding_call)),
                        "info", fixable)
            return
        generator = self.data.keyword(node, "generator")  # `generator=None`: the global generator
        seeded = catalogue.loader_positions(qualified) is not None or qualified in catalogue.TORCH_RANDOM_SAMPLERS
        if seeded and generator not in (None, UNKNOWN) and constant(generator) is not None:
            self.report(self.data.site(node), message + SEEDED_NOTE, "info", fixable)
        else:
            self.report(self.data.site(node), message, fixable=fixable)

    def report(self, where: ast.AST | Site, message: str | None = None, severity: str | None = None,
               fixable: bool | None = None) -> None:
        """Report, noting a warning that rests on a `shuffle=` expression (see `finish`)."""
        super().report(where, message, severity, fixable)
        if self._switch is not None and self.reports[-1].severity != "info":
            self.by_option.append((self.reports[-1], self._switch))

    def finish(self) -> None:
        """A `shuffle=` expression false with the default arguments (a parameter that every call of its function
        leaves false, in this file and, for a module-level function, in the project's files that import it:
        nanotron's `get_sampler(..., shuffle=False)`; an option that defaults to false) makes its finding
        information, naming it. A method of a module other files import is called from anywhere (a base class's
        `self.get_dataloader(..., shuffle=True)`, a registry's config): its parameters are not known."""
        for site, method, seed, function in self.by_seed:
            if opt_in.switch_default(self.ctx, seed, function, callers_elsewhere=True) is None:
                self._switch = None
                self._report_hf(site, method, SEED_NONE.format(seed=condition_text(seed, 30)), function)
        for site, method, unseeded, function, switch in self.hf_found:
            self._switch = switch  # a `shuffle=` expression: settled below
            split = method == "train_test_split"  # msprobe-instrument drops a shuffle, not a split
            state = self._numpy_state(site.node, function).format(what="split" if split else "order")
            message = HF_SPLIT_MESSAGE if split else HF_SHUFFLE_MESSAGE
            self.report(site, message.format(unseeded=unseeded, state=state), fixable=not split)
        self._switch = None
        for report, (value, none_shuffles, function) in self.by_option:
            built = self._sampler_when_distributed(value, function)
            if built is not None:
                report.severity = "info"
                report.message += DISTRIBUTED_ONLY.format(line=built.lineno)
                continue
            default = opt_in.switch_default(self.ctx, value, function, callers_elsewhere=False)
            if default is not conditions.UNKNOWN and isinstance(function, FUNCTION_TYPES):
                default = default_elsewhere(self.ctx, value, function, default)
            if default is not conditions.UNKNOWN and not (default or default is None and none_shuffles):
                report.severity = "info"
                report.message += OPT_IN.format(switch=condition_text(value))

    def _sampler_when_distributed(self, value: ast.expr, function: ast.AST | None) -> ast.Assign | None:
        """For `shuffle=shuffle if sampler is None else False` (or `shuffle=sampler is None`), an assignment of a
        sampler to that name earlier in the function under `if ... and dist.is_initialized():` (OpenRLHF's
        `setup_dataloader`, whose `DistributedSampler` is checked where it is built): the loader's own shuffle is on
        only in a run without torch.distributed."""
        test = value.test if isinstance(value, ast.IfExp) and constant(value.orelse) is False else value
        if not (isinstance(test, ast.Compare) and isinstance(test.left, ast.Name) and len(test.ops) == 1
                and isinstance(test.ops[0], ast.Is) and constant(test.comparators[0]) is None
                and isinstance(function, FUNCTION_TYPES)):
            return None
        return next((node for node, guards, _ in conditions.walk([function], (ast.Assign,))
                     if (node.lineno, node.col_offset) < (value.lineno, value.col_offset)
                     and isinstance(node.value, ast.Call)
                     and any(isinstance(target, ast.Name) and target.id == test.left.id for target in node.targets)
                     and any(wanted and self._tests_initialised(guard) for guard, wanted in guards)), None)

    def _tests_initialised(self, test: ast.expr) -> bool:
        """Whether `test` holds only where `torch.distributed.is_initialized()` is true (it, or an `and` of it)."""
        operands = test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) else [test]
        return any(isinstance(operand, ast.Call) and self.ctx.imports.resolve_any(operand.func)
                   in DISTRIBUTED_INITIALISED for operand in operands)

    def _numpy_state(self, node: ast.AST, function: ast.AST | None) -> str:
        """What NumPy's global generator holds where a Hugging Face shuffle draws its seed, in an entry script: never
        seeded (examples/datasets scripts), or seeded only later in the same function (a trainer built after
        the split: trl's sft_tiny_aya_tool_calling.py); else what else draws from it moves it."""
        if not self.ctx.is_entry_script():
            return NUMPY_DRAWN
        seeders = [effect for effect in seeding.analyse(self.ctx).effects if "numpy" in effect.summary.families]
        if not seeders:
            return NUMPY_UNSEEDED
        first = seeders[0].node
        if all(effect.function == getattr(function, "name", None) and (effect.node.lineno, effect.node.col_offset)
               > (node.lineno, node.col_offset) for effect in seeders):
            return NUMPY_SEEDED_LATER.format(seeder=code_text(first), line=first.lineno, what="{what}")
        return NUMPY_DRAWN

    def _pipeline_seeding(self, node: ast.Call) -> ast.Call | None:
        """The last statement `mindspore.dataset.config.set_seed(seed)` (or `mindspore.set_seed`) that runs before
        `node` in the same function (or module code), in its block or a block around it (mindrlhf's PPOTrainer
        seeds just before its `MindDataset`), when its seed is a literal: mindyolo's `1236517205 + rank *
        num_parallel_workers`, its worker count from the machine's CPU count, changes with the machine."""
        ancestors = self.ctx.ancestors
        for parent, child in zip(reversed(ancestors), reversed([*ancestors[1:], node]), strict=True):
            for block in (getattr(parent, name, None) for name in ("body", "orelse", "finalbody")):
                if isinstance(block, list) and child in block:
                    for statement in reversed(block[:block.index(child)]):
                        if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call) \
                                and self.ctx.call_qualname(statement.value) in catalogue.SEED_CALLS["mindspore-dataset"]:
                            seed = constant(argument(statement.value, 0, "seed"))
                            return statement.value if isinstance(seed, int) and not isinstance(seed, bool) else None
            if isinstance(parent, (*FUNCTION_TYPES, ast.Lambda, ast.ClassDef)):
                return None
        return None

    def _shadowed(self, node: ast.Call) -> bool:
        """A call of a class the file defines under the name of one it imports (InternVL's own
        `LengthGroupedSampler(Sampler)` beside `from transformers.trainer import LengthGroupedSampler`): the file's
        class, defined after the import; not a subclass taken for its base (yolov5's `InfiniteDataLoader`)."""
        if self._classes is None:
            self._classes = {item.name: item for item in self.ctx.tree.body if isinstance(item, ast.ClassDef)}
        cls = self._classes.get(node.func.id) if isinstance(node.func, ast.Name) else None
        return cls is not None and self.ctx.qualname(node.func) not in map(self.ctx.qualname, cls.bases)

    def _subclass_called(self, node: ast.Call) -> str | None:
        """The name of the project class `node` calls where it stands for its library base (yolov5's
        `InfiniteDataLoader`, a class of the file; Open-Sora's imported `VariableVideoBatchSampler`); else None."""
        if self._classes is None:
            self._classes = {item.name: item for item in self.ctx.tree.body if isinstance(item, ast.ClassDef)}
        name = node.func.id if isinstance(node.func, ast.Name) else None
        imported = {key[2] for key in self.ctx.imports.project_classes}
        return name if name in self._classes or name in imported else None

    def _iterates_itself(self, name: str) -> bool:
        """Whether the project class `name` (the file's, or one it imports) defines `__iter__`: it draws the order
        its own way, not as its base seeds it (vits' `DistributedBucketSampler` seeds with the epoch alone)."""
        cls = self._classes.get(name)
        if cls is None:
            key = next((key for key in self.ctx.imports.project_classes if key[2] == name), None)
            found = project.defining(project.file_folder(self.ctx.path), project.Ref(key[0], key[1]), name) \
                if key is not None else None
            cls = found[0].classes.get(found[1]) if found is not None else None
        return cls is not None and any(isinstance(item, FUNCTION_TYPES) and item.name == "__iter__"
                                       for item in cls.body)

    def _held_classes(self, node: ast.Call) -> list[str] | None:
        """The classes a called name or `self` attribute may hold, when every value assigned to it is a known
        class, under whatever import path (yolov5's `loader = DataLoader if image_weights else
        InfiniteDataLoader`; DeepSpeed's bing_bert `self.datasampler = RandomSampler if ... else DistributedSampler`)."""
        func = node.func
        values = (self.values.bindings.bound(func.id, node) if isinstance(func, ast.Name)
                  else self._attribute_values(func))
        branches = []
        for value in values:
            while isinstance(value, ast.IfExp):
                branches.append(value.body)
                value = value.orelse
            branches.append(value)
        names = [self.ctx.qualname(b) if isinstance(b, (ast.Name, ast.Attribute)) else None for b in branches]
        return names if names and None not in names else None

    def _report_choice(self, node: ast.Call, held: list[str]) -> None:
        """A call of one of several classes (`RandomSampler if single else DistributedSampler`): the order is
        random if any of them shuffles with these arguments."""
        messages = dict.fromkeys(message for name in held
                                 if (message := self._order_message(node, name, name.rpartition(".")[2])))
        self._switch = None  # another of the classes may shuffle whatever the switch says
        if messages:
            self.report(self.data.site(node), "; ".join(messages), fixable=False)

    def _attribute_values(self, func: ast.expr) -> list[ast.expr | None]:
        """What every assignment in the enclosing class gives `self.<attr>`, for `func` read as that in one of
        its methods (None for a value not known: a tuple target, `+=`)."""
        if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)):
            return []
        classes = [i for i, node in enumerate(self.ctx.ancestors) if isinstance(node, ast.ClassDef)]
        if not classes or classes[-1] + 1 >= len(self.ctx.ancestors):
            return []
        cls, method = self.ctx.ancestors[classes[-1]], self.ctx.ancestors[classes[-1] + 1]
        if not isinstance(method, FUNCTION_TYPES) or _owner(method) != func.value.id:
            return []
        if id(cls) not in self._attributes:
            self._attributes[id(cls)] = _class_attributes(cls)
        return self._attributes[id(cls)].get(func.attr, [])

    def _fixed_replicas(self, node: ast.Call, qualified: str) -> bool:
        """A torch `DistributedSampler` given a constant `num_replicas=` (torchtune's `num_replicas=1, rank=0`; not
        MAE's `num_replicas=num_tasks`, the world size): its order, drawn from `seed` + epoch by a generator of its
        own, no longer depends on the world size."""
        if qualified not in catalogue.TORCH_DISTRIBUTED_SAMPLERS:
            return False
        replicas = self.data.keyword(node, "num_replicas", 1)
        return isinstance(replicas, ast.expr) and isinstance(constant(replicas), int)

    def _sampler_fixable(self, qualified: str) -> bool:
        """Whether msprobe-instrument can put an ordered sampler in: a twin class, or the indices of torch's
        `SubsetRandomSampler` given as `sampler=` (any sequence of indices is a sampler)."""
        if qualified in catalogue.SAMPLER_TWINS:
            return True
        parent = self.ctx.ancestors[-1] if self.ctx.ancestors else None
        return (qualified.endswith(".SubsetRandomSampler") and isinstance(parent, ast.keyword)
                and parent.arg == "sampler")

    def _library_shuffle(self, node: ast.Call) -> bool:
        """`.shuffle()` or `.train_test_split()` on a Hugging Face dataset, `.shuffle(n)` on a webdataset
        pipeline: reported when they draw an order no seed repeats. Whether the receiver was one of those."""
        func = node.func
        if not isinstance(func, ast.Attribute) or func.attr not in catalogue.UNSEEDED_SPLITS:
            return False
        library = self._library_of(func.value)
        if library == LIBRARY_DATASETS and self._hf_shuffles(node, func.attr):
            seeds = self._hf_seeds(node, func.attr)
            if not seeds:
                self._report_hf(self.ctx.site(node), func.attr, UNSEEDED, self.ctx.current_def())
            elif len(seeds) == 1 and seeds[0] is not UNKNOWN and constant(seeds[0]) is NOT_CONSTANT:
                function = next((n for n in reversed(self.ctx.ancestors) if isinstance(n, FUNCTION_TYPES)), None)
                self.by_seed.append((self.ctx.site(node), func.attr, seeds[0], function))
        elif library == LIBRARY_WEBDATASET and func.attr == "shuffle":
            if self._buffers(node, "size", 0) and not self._given(node, "rng") and not self._given(node, "seed"):
                self.report(node, WEBDATASET_MESSAGE.format(name=".shuffle(size)"))
        return library is not None

    def _hf_shuffles(self, node: ast.Call, method: str) -> bool:
        """Whether `Dataset.shuffle`/`train_test_split` shuffles (not `shuffle=False`)."""
        switch = catalogue.UNSEEDED_SPLITS[method][1]
        shuffle = None if switch is None else self.data.keyword(node, switch[1], switch[0])
        return shuffle is None or self._shuffles(shuffle, False)

    def _hf_seeds(self, node: ast.Call, method: str) -> list[ast.expr | object]:
        """The seeds and generators a Hugging Face shuffle or split is given, but a None (UNKNOWN: `**kwargs`)."""
        values = [self.data.keyword(node, name, position) for position, name in catalogue.UNSEEDED_SPLITS[method][0]]
        return [value for value in values if value is UNKNOWN or value is not None and constant(value) is not None]

    def _report_hf(self, site: Site, method: str, unseeded: str, function: ast.AST | None) -> None:
        self.hf_found.append((site, method, unseeded, function, self._switch))

    def _given(self, node: ast.Call, name: str, position: int | None = None) -> bool:
        """Whether an argument other than None is given (or may be, in `**kwargs`)."""
        value = self.data.keyword(node, name, position)
        return value is UNKNOWN or value is not None and constant(value) is not None

    def _buffers(self, node: ast.Call, name: str, position: int) -> bool:
        """Whether a shuffle buffer's size may be 2 or more (one of fewer keeps the order)."""
        size = constant(self.data.keyword(node, name, position))  # not given: 1000 (a method needs one)
        return not isinstance(size, (int, float)) or size >= 2

    def _library_of(self, node: ast.expr) -> str | None:
        """The data library whose object `node` holds: a Hugging Face dataset (`load_dataset(...)`,
        `Dataset.from_dict(...)`, their methods and splits) or a webdataset pipeline (`WebDataset(urls)` and its
        methods); names are followed through every assignment before. None when not known."""
        key = id(node)
        if key not in self._libraries:
            self._libraries[key] = None  # a name bound to itself
            self._libraries[key] = self._find_library(node)
        return self._libraries[key]

    def _find_library(self, node: ast.expr) -> str | None:
        if isinstance(node, ast.Name):
            found = {self._library_of(v) if isinstance(v, ast.expr) else None
                     for v in self.values.bindings.bound(node.id, node)}
            return found.pop() if len(found) == 1 else None
        if isinstance(node, ast.Subscript):  # `dataset_dict["train"]`
            return LIBRARY_DATASETS if self._library_of(node.value) == LIBRARY_DATASETS else None
        if not isinstance(node, ast.Call):
            return None
        func = node.func
        if isinstance(func, ast.Attribute):
            library = self._library_of(func.value)
            methods = catalogue.HF_DATASET_METHODS if library == LIBRARY_DATASETS else catalogue.WEBDATASET_METHODS
            if library is not None and func.attr in methods:
                return library
        qualified = self.ctx.imports.resolve_any(func)
        if qualified is None:
            return None
        if catalogue.makes_hf_dataset(qualified) and self._library_installed(LIBRARY_DATASETS):
            return LIBRARY_DATASETS
        if qualified in catalogue.WEBDATASET_PIPELINES and self._library_installed(LIBRARY_WEBDATASET):
            return LIBRARY_WEBDATASET
        return None

    def _library_installed(self, library: str) -> bool:
        """Whether `import library` reaches the library, not a project module of that name (detr's `datasets/`)."""
        if library not in self._installed:
            self._installed[library] = project.find_module(project.file_folder(self.ctx.path), library, 0) is None
        return self._installed[library]

    def _project_sampler(self, node: ast.Call) -> None:
        """A sampler class of the project whose `__iter__` draws from a global generator (Swin's
        `SubsetRandomSampler` calls `torch.randperm`; LLaVA's `LengthGroupedSampler` calls functions of its module
        that do, with the `generator=None` it was built with), built with its `shuffle` on. One that seeds its own
        generator (deit's `RASampler`, from the epoch) repeats its order on every run and device: not reported."""
        found = self._project_class(node)
        if found is None:
            return
        cls, imports, functions = found
        methods = {item.name: item for item in cls.body if isinstance(item, FUNCTION_TYPES)}
        init = methods.get("__init__")
        draw = _global_draw(methods.get("__iter__"), imports, functions, _attribute_lookup(cls, init, node))
        if draw is None:
            return
        parameters = _parameters(init) if init is not None else {}
        fix = "iterate its indices in order (`sampler=list(indices)`)" if "indices" in parameters \
            else "use `SequentialSampler`"
        if "shuffle" in parameters:
            position, default = parameters["shuffle"]
            shuffle = self.data.keyword(node, "shuffle", position)
            if not self._shuffles(default if shuffle is None else shuffle, False):
                return
            fix = "pass `shuffle=False`"
        qualified, helper = draw
        where = f"`{helper}`, which its `__iter__` calls" if helper else "its `__iter__`"
        message = PROJECT_SAMPLER_MESSAGE.format(name=cls.name, draw=qualified, where=where, fix=fix)
        self.report(self.data.site(node), message, fixable=False)

    def _project_class(self, node: ast.Call) -> tuple[ast.ClassDef, ImportTracker, dict[str, ast.AST]] | None:
        """The class a call constructs, defined in this file or in a project module it imports, with the
        imports and the top-level functions of its file."""
        func = node.func
        for item in self.ctx.tree.body:
            if isinstance(item, ast.ClassDef) and isinstance(func, ast.Name) and item.name == func.id:
                functions = {n.name: n for n in self.ctx.tree.body if isinstance(n, FUNCTION_TYPES)}
                return item, self.ctx.imports, functions
        if self._local_imports is None:
            project.find_module.cache_clear()  # module lookups are cached for one file's analysis only
            self._local_imports = project.local_imports(project.import_statements(self.ctx.tree.body))
        for _, name, module in project.reached([node], self._local_imports, (), project.file_folder(self.ctx.path)):
            for item in module.tree.body:
                if isinstance(item, ast.ClassDef) and item.name == name:
                    return item, module.imports, module.functions
        return None

    def _order_message(self, node: ast.Call, qualified: str, short: str) -> str | None:
        """What makes this loader, sampler or dataset's order random, if it is."""
        positions = catalogue.loader_positions(qualified)
        if positions is not None:
            shuffle = self.data.keyword(node, "shuffle", positions.get("shuffle"))
            advice = LOADER_ADVICE.format(call=_called_with(short, "shuffle", shuffle))
            return LOADER_MESSAGE + advice if self._shuffles(shuffle, False) else None
        if _random_sampler(qualified):
            return f"`{short}` draws a random order: {_ordered_instead(qualified, short)} while debugging"
        if qualified in catalogue.WEBDATASET_SHUFFLES:
            bufsize = catalogue.WEBDATASET_SHUFFLES[qualified]
            seeded = self._given(node, "rng", bufsize + 2) or self._given(node, "seed", bufsize + 3)
            return None if seeded or not self._buffers(node, "bufsize", bufsize) else \
                WEBDATASET_MESSAGE.format(name=short)
        if qualified in catalogue.TORCH_DISTRIBUTED_SAMPLERS:
            shuffle = self.data.keyword(node, "shuffle", catalogue.DISTRIBUTED_SAMPLER_SHUFFLE_POSITION)
            template = REPLICAS_MESSAGE if self._fixed_replicas(node, qualified) else DISTRIBUTED_MESSAGE
            if shuffle is None:
                return template.format(name=short, shuffles="shuffles unless told otherwise")
            return template.format(name=_called_with(short, "shuffle", shuffle), shuffles="draws a random order") \
                if self._shuffles(shuffle, False) else None
        if qualified in catalogue.MINDSPORE_SHUFFLE_SAMPLERS:
            position, default = catalogue.MINDSPORE_SHUFFLE_SAMPLERS[qualified]
            shuffle = self.data.keyword(node, "shuffle", position)
            shuffles = (default and shuffle is None) or self._shuffles(shuffle, False)
            return f"`{short}` shuffles: pass `shuffle=False` while debugging" if shuffles else None
        if qualified in catalogue.TIMM_TRAINING_LOADERS:
            training = self.data.keyword(node, "is_training", catalogue.TIMM_TRAINING_LOADERS[qualified])
            return TIMM_MESSAGE.format(name=short) if self._shuffles(training, False) else None
        if qualified in catalogue.DEEPSPEED_TRAINING_DATA:
            data = self.data.keyword(node, "training_data", catalogue.DEEPSPEED_TRAINING_DATA[qualified])
            return DEEPSPEED_MESSAGE if data not in (None, UNKNOWN) and constant(data) is not None else None
        if catalogue.shuffles_by_default(qualified):
            return self._dataset_message(node, short)
        return None

    def _zoo_loader(self, node: ast.Call, qualified: str) -> None:
        """mindcv's `create_dataset` and mindyolo's `create_loader`: `shuffle` defaults to True (None shuffles)."""
        position, default = catalogue.MINDSPORE_ZOO_SHUFFLING_LOADERS[qualified]
        shuffle = self.data.keyword(node, "shuffle", position)
        library, short = qualified.split(".", 1)[0], qualified.rpartition(".")[2]
        if shuffle is None and default:
            self.report(self.data.site(node), f"{library}'s `{short}` shuffles unless told otherwise: pass "
                                              "`shuffle=False` while debugging")
        elif self._shuffles(shuffle, True):
            self.report(self.data.site(node), f"{library}'s `{_called_with(short, 'shuffle', shuffle)}` draws a random order: pass "
                                              "`shuffle=False` while debugging")

    def _dataset_message(self, node: ast.Call, short: str) -> str | None:
        """A MindSpore dataset shuffles with `shuffle=True`, or with neither `shuffle=` nor a sampler (a
        `sampler=None` is none); a `GeneratorDataset` over an iterator keeps its order whatever `shuffle=` says."""
        shuffle = self.data.keyword(node, "shuffle")
        for name in catalogue.MINDSPORE_SAMPLER_KEYWORDS:
            sampler = self.data.keyword(node, name)
            if sampler is UNKNOWN and shuffle not in (None, UNKNOWN):
                continue  # `shuffle=` given: MindSpore refuses a sampler beside it, so `**kwargs` holds none
            if sampler is not None and constant(sampler) is not None and not self._none_by_default(sampler):
                return None  # the sampler decides the order (and is checked where it is created)
        if self._iterable_source(node, short):
            return None
        if shuffle is None:
            if len(node.args) > MAX_UNAMBIGUOUS_POSITIONALS:
                return None
            return f"MindSpore's `{short}` shuffles unless told otherwise: pass `shuffle=False` while debugging"
        if self._shuffles(shuffle, True):
            return f"`{_called_with(short, 'shuffle', shuffle)}` draws a random order: pass `shuffle=False` while debugging"
        return None

    def _none_by_default(self, sampler: ast.expr | object) -> bool:
        """Whether a `sampler=` expression is None with the default arguments (mindediting's factories take
        `sampler=None` and pass it on; their training path gives none, and `shuffle=True`)."""
        function = next((n for n in reversed(self.ctx.ancestors) if isinstance(n, FUNCTION_TYPES)), None)
        return isinstance(sampler, ast.expr) and opt_in.switch_default(
            self.ctx, sampler, function, callers_elsewhere=False) is None

    def _dataset_shuffle(self, node: ast.Call) -> None:
        """`dataset.shuffle(buffer_size)` on a MindSpore dataset (or, in a MindSpore file, an unknown object)."""
        func = node.func
        if not isinstance(func, ast.Attribute) or func.attr != "shuffle":
            return
        verdict = self.data.is_dataset(func.value)
        if verdict is None:
            one_argument = len(node.args) + len(node.keywords) == 1 and (
                node.args or node.keywords[0].arg == "buffer_size")
            receiver = getattr(func.value, "id", None)
            verdict = (one_argument and receiver not in ("self", "cls")
                       and self.ctx.imports.imports_root("mindspore"))
        if verdict:
            self.report(node, "`dataset.shuffle(buffer_size)` draws a random order: remove it while debugging")

    def _shuffles(self, value: ast.expr | None | object, none_shuffles: bool) -> bool:
        """Whether a `shuffle=` argument can turn shuffling on (an expression can; a hidden one we skip)."""
        if value is None or value is UNKNOWN:
            return False
        literal = constant(value)
        if literal is NOT_CONSTANT and self._false_on_every_branch(value):
            return False
        if literal is NOT_CONSTANT:  # `shuffle=is_train`: true on the training path
            function = next((n for n in reversed(self.ctx.ancestors) if isinstance(n, FUNCTION_TYPES)), None)
            self._switch = (value, none_shuffles, function)
            return True
        return none_shuffles if literal is None else bool(literal)

    def _false_on_every_branch(self, value: object) -> bool:
        """Whether an `and`/`or` of names is false under each assignment of a name in it that reaches it, read with
        the `if` tests that assignment runs under (lerobot's `shuffle=shuffle and not cfg.dataset.streaming`, with
        `shuffle = False` under `if not cfg.dataset.streaming:` and `shuffle = True` in its `else:`)."""
        function = self.ctx.current_def()
        if not isinstance(value, ast.BoolOp) or function is None:
            return False
        guards = {id(node.value): tests for node, tests, _ in conditions.walk([function], (ast.Assign,))}
        operands = (part.operand if isinstance(part, ast.UnaryOp) else part for part in value.values)
        names = {part.id for part in operands if isinstance(part, ast.Name)}
        bound = {name: self.values.bindings.bound(name, value) for name in names}
        assigned = [(name, held) for name, values in bound.items() for held in values]
        return bool(assigned) and all(
            id(held) in guards and conditions.value(value, _branch_lookup(name, held, guards[id(held)])) is False
            for name, held in assigned)

    def _iterable_source(self, node: ast.Call, short: str) -> bool:
        """`GeneratorDataset` over a generator (function or expression) or an object that iterates but cannot be
        indexed (a class of the file's, or of a project module it imports: mindrlhf's `IteratorStore`) keeps the
        source's order."""
        if short != "GeneratorDataset":
            return False
        source = argument(node, 0, "source")
        if isinstance(source, (ast.GeneratorExp, ast.Lambda)):
            return True  # a callable source is called for an iterator
        if isinstance(source, ast.Name) and source.id in self.instances:
            source = self.instances[source.id]
        if isinstance(source, ast.Call):
            found = self._project_class(source)
            if found is not None and _keeps_source_order(found[0]):
                return True
            source = source.func
        if self._iterable_sources is None:
            self._iterable_sources = _iterable_sources(self.ctx.tree)
        return isinstance(source, ast.Name) and source.id in self._iterable_sources


def _branch_lookup(name: str, held: ast.expr, tests: tuple[conditions.Guard, ...]) -> conditions.Lookup:
    """A lookup answering `name` with the constant an assignment gives it, and the `if` tests (or what they
    negate) it runs under with their outcome there."""

    def lookup(node: ast.expr) -> object:
        if isinstance(node, ast.Name) and node.id == name:
            return conditions.value(held, conditions.no_lookup)
        for test, wanted in tests:
            if ast.dump(test) == ast.dump(node):
                return wanted
            if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not) and ast.dump(test.operand) == ast.dump(node):
                return not wanted
        return conditions.UNKNOWN

    return lookup


def _attribute_lookup(cls: ast.ClassDef, init: ast.AST | None, built: ast.Call) -> conditions.Lookup:
    """A lookup answering `self.<attr>` in a sampler's methods with the parameter of its `__init__` that the class
    stores there, and only there (`self.generator = generator`), as the call that builds it passes it."""
    if not isinstance(init, FUNCTION_TYPES):
        return conditions.no_lookup
    values = dict(conditions.bind_arguments(init, built, conditions.no_lookup, bound=True))
    attributes, owner = _class_attributes(cls), _owner(init)

    def lookup(node: ast.expr) -> object:
        own = isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == owner
        stored = attributes.get(node.attr, []) if own else []
        if len(stored) == 1 and isinstance(stored[0], ast.Name):
            return values.get(stored[0].id, conditions.UNKNOWN)
        return conditions.UNKNOWN

    return lookup


def _global_draw(function: ast.AST | None, imports: ImportTracker, functions: dict[str, ast.AST],
                 lookup: conditions.Lookup) -> tuple[str, str | None] | None:
    """A draw from a global generator (torch's without a `generator=`, or given one that is None under `lookup`;
    NumPy's; `random`'s) in `function` or the functions of its module it calls (arguments bound, at most
    `MAX_HELPER_DEPTH` deep), where the arguments let it run: (the draw, the function it is in, None for
    `function` itself). None also when any of them seeds a generator (mindaudio's sampler calls
    `np.random.seed(self.seed)`)."""
    draws = list(_draws(function, imports, functions, lookup, None, MAX_HELPER_DEPTH))
    return None if not draws or None in draws else draws[0]


def _draws(function: ast.AST | None, imports: ImportTracker, functions: dict[str, ast.AST],
           lookup: conditions.Lookup, name: str | None, depth: int) -> Iterator[tuple[str, str | None] | None]:
    """The global draws of `_global_draw`, in source order, but those under an `if` false under `lookup`
    (LLaVA's `if self.group_by_modality:`); None for a seeding call."""
    for call, guards, _ in conditions.walk([function], (ast.Call,)) if function is not None else ():
        if any(conditions.truth(test, lookup) is (not wanted) for test, wanted in guards):
            continue
        qualified = imports.resolve(call.func)
        generator = keyword(call, "generator")
        if qualified in pinning.SEEDER_FAMILIES:
            yield None
        elif qualified in catalogue.GLOBAL_RANDOM_DRAWS and (
                generator is None or conditions.value(generator, lookup) is None):
            yield qualified, name
        elif isinstance(call.func, ast.Name) and call.func.id in functions and depth > 1:
            helper = functions[call.func.id]
            values = dict(conditions.bind_arguments(helper, call, lookup))
            yield from _draws(helper, imports, functions, conditions.parameter_lookup(values, conditions.no_lookup),
                              call.func.id, depth - 1)


def _parameters(function: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, tuple[int | None, ast.expr | None]]:
    """A method's parameters after `self`: name -> (position in a call, or None if keyword-only; default)."""
    args = function.args
    positional = [*args.posonlyargs, *args.args]
    defaults = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    found = {arg.arg: (i - 1, default) for i, (arg, default) in enumerate(zip(positional, defaults, strict=True))}
    found.update({arg.arg: (None, default) for arg, default in zip(args.kwonlyargs, args.kw_defaults, strict=True)})
    return found


def _iterable_sources(tree: ast.Module) -> frozenset[str]:
    """The file's generator functions and classes that iterate but cannot be indexed."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if any(isinstance(n, (ast.Yield, ast.YieldFrom)) for n in ast.walk(node)):
                names.add(node.name)
        elif isinstance(node, ast.ClassDef) and _keeps_source_order(node):
            names.add(node.name)
    return frozenset(names)


def _keeps_source_order(cls: ast.ClassDef) -> bool:
    """Whether a class iterates (`__iter__` or `__next__`) but cannot be indexed (no `__getitem__`), or has a
    `__getitem__` that never reads its index (minddiffusion's `MetaLoader` returns the next batch of a loader it
    wraps): a shuffled index changes nothing."""
    methods = {s.name: s for s in cls.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))}
    getitem = methods.get("__getitem__")
    if getitem is None:
        return "__iter__" in methods or "__next__" in methods
    positional = [*getitem.args.posonlyargs, *getitem.args.args]
    index = positional[1].arg if len(positional) == 2 and not getitem.args.vararg else None
    return index is not None and not any(isinstance(node, ast.Name) and node.id == index for node in ast.walk(getitem))


def _ordered_instead(qualified: str, short: str) -> str:
    """How to read in a fixed order what a random sampler draws from."""
    twin = catalogue.SAMPLER_TWINS.get(qualified)
    if twin is not None:
        return f"use `{twin.rpartition('.')[2]}`"
    if short == "SubsetRandomSampler":  # torch's (MindSpore's has a twin, `SubsetSampler`)
        return SUBSET_ADVICE
    return f"use `{catalogue.ORDERED_SAMPLER_INSTEAD.get(short, 'SequentialSampler')}`"


def _owner(method: ast.FunctionDef | ast.AsyncFunctionDef) -> str | None:
    """The name a method calls its instance (or class) by: its first parameter."""
    positional = [*method.args.posonlyargs, *method.args.args]
    return positional[0].arg if positional else None


def _class_attributes(cls: ast.ClassDef) -> dict[str, list[ast.expr | None]]:
    """attribute -> the values the class body and its methods assign it (`x = ...`, `self.x = ...`); None for a
    value not known (a tuple target, `+=`)."""
    found: dict[str, list[ast.expr | None]] = {}
    for item in cls.body:
        if isinstance(item, (ast.Assign, ast.AnnAssign)):
            for target in item.targets if isinstance(item, ast.Assign) else [item.target]:
                if isinstance(target, ast.Name):
                    found.setdefault(target.id, []).append(item.value)
        if not isinstance(item, FUNCTION_TYPES) or _owner(item) is None:
            continue
        owner = _owner(item)
        for node in ast.walk(item):
            if not isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                continue
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                direct = None if isinstance(node, ast.AugAssign) else node.value
                for part in ast.walk(target):
                    if isinstance(part, ast.Attribute) and isinstance(part.value, ast.Name) \
                            and part.value.id == owner and isinstance(part.ctx, ast.Store):
                        found.setdefault(part.attr, []).append(direct if part is target else None)
    return found


def _called_with(short: str, name: str, value: object) -> str:
    """`DataLoader(shuffle=True)`: the call with the argument as the code gives it (`...` when `**kwargs` hides it)."""
    return f"{short}({name}={condition_text(value, 30) if isinstance(value, ast.expr) else '...'})"


def _random_sampler(qualified: str) -> bool:
    return qualified in catalogue.TORCH_RANDOM_SAMPLERS or qualified in catalogue.MINDSPORE_RANDOM_SAMPLERS

"""MSP302 data-workers: parallel data workers whose random streams are not under the run's control."""

from __future__ import annotations

import ast
import builtins
import re

from msprobe_rewriter import catalogue, opt_in, pinning, project, seeding
from msprobe_rewriter.call_defaults import LeftAtDefault, default_elsewhere
from msprobe_rewriter.conditions import condition_text
from msprobe_rewriter.context import (
    FUNCTION_TYPES,
    NOT_CONSTANT,
    Site,
    argument,
    constant,
    keyword,
    own_nodes,
)
from msprobe_rewriter.pipeline import DRAWING_METHODS, PipelineValues
from msprobe_rewriter.rules.base import Invalid, Rule
from msprobe_rewriter.values import UNKNOWN, FollowsValues

# Keywords that only MindSpore's `Dataset.map` takes: they tell it from `pool.map`, pandas or HF datasets.
MINDSPORE_MAP_KEYWORDS = frozenset({"operations", "input_columns", "output_columns", "python_multiprocessing"})
TORCH_MESSAGE = ("`DataLoader` worker `i` seeds torch, `random` and numpy from `i` and a base seed drawn, as the "
                 "workers start, from the loader's `generator=` (from the global torch generator when none is given): "
                 "for debugging runs pass a seeded `generator=torch.Generator().manual_seed(seed)` (msprobe-instrument "
                 "adds one) and keep `num_workers` equal across the runs you compare")
DEEPSPEED_MESSAGE = ("`deepspeed.initialize(training_data=...)` builds a `DataLoader` with 2 workers per device and no "
                     "`generator=`: their seeds come from the global torch generator. For debugging runs build the "
                     "`DataLoader` yourself, with a seeded `generator=`, and leave `training_data` out")
OPT_IN = " (only when `{workers}` > 0: no workers with the default arguments)"
MINDSPORE_MESSAGE = ("{what} runs on several parallel workers: rows keep their order, but random operations draw in "
                     "whatever order the workers are scheduled, so their results can differ between runs: use "
                     "`num_parallel_workers=1` for debugging runs")
MAX_HELPER_DEPTH = 3  # functions of the file followed from a batch or map function
# A name in a `worker_init_fn` that may seed something (`np.random.seed`, `default_rng`, `info.seed`, `set_state`).
SEEDING_WORDS = re.compile(r"seed|rng|random|generator|state", re.IGNORECASE)
SEEDS_NOTHING = "the `worker_init_fn` given (`{init}`) seeds no generator, and "


class DataWorkers(FollowsValues, Rule):
    code = "MSP302"
    name = "data-workers"
    severity = "warning"
    frameworks = ("pytorch", "mindspore")
    message = ("parallel data workers draw random numbers from per-worker seeds: for debugging runs derive those "
               "from the run's seed (PyTorch: a seeded `generator=`) or run one worker (MindSpore: "
               "`num_parallel_workers=1`)")
    fixable = True
    summary = ("Flags a PyTorch `DataLoader` (or a subclass of it, from this file or a project module it imports, "
               "or a graph library's loader: PyG's, DGL's, or webdataset's `WebLoader`, which builds one) with "
               "`num_workers` > 0 (or an expression) and neither `generator=` nor `worker_init_fn=` (a name some "
               "assignment sets to None, `init_fn = None` unless a flag is on, counts as none, but not one None only "
               "without workers; so do a function of the file or project that names nothing seed- or generator-like, "
               "itself or through the file's functions it calls (Megatron's closes file descriptors), and a call of "
               "a project function that returns None (SlowFast's `loader_worker_init_fn(dataset)`); a `**kwargs` dict a project function returns with its keys named, none of them "
               "these, hides neither), unless it reads a "
               "torchvision dataset whose transforms are known to draw nothing (`ImageFolder(valdir, "
               "Compose([Resize(256), CenterCrop(224), ToTensor()]))`: the same batches with any number of workers; "
               "`Lambda` of a lambda that calls nothing, `x * 2.0 - 1.0`, draws nothing), mosaicml-streaming's "
               "`StreamingDataset` (it reads shards, and shuffles with generators of its own seeded from "
               "`shuffle_seed`) "
               "or an object of a dataset class of the file or of a project module it imports whose `__getitem__`, "
               "`__iter__` and `__next__` (through its project base classes, and the methods and project functions "
               "they call, three deep) draw nothing from a global or unseeded generator (OLMo's `IterableDataset` "
               "shuffles once with a generator it seeds from `seed + epoch`; mindediting's image pairs only load "
               "files; llm-foundry's `StreamingTextDataset(StreamingDataset)` calls `super().__getitem__` and the "
               "tokenizer its `__init__` takes, annotated as a Hugging Face tokenizer, and shuffles with a generator "
               "it seeds there), nor the dataset it is built with and indexes (`self.dset[i]`: generative-models' "
               "`CIFAR10DataDictWrapper(CIFAR10(...))`); a dataset held in a `self` attribute is read from every "
               "assignment of it in the class; a callable the class is handed (`self.transform(img)`) may draw, and so may a `collate_fn=` "
               "that is not a function of the file drawing nothing; "
               "MindSpore `GeneratorDataset` (unless its source is such an object), `.map(...)` and "
               "`.batch(per_batch_map=...)` with "
               "`num_parallel_workers` > 1 (or an expression; not a parameter of the function around, or a `self.` "
               "attribute `__init__` stores from one, that defaults to 1 and that no call in the file, nor in the "
               "project's files importing a module-level function, sets otherwise: minddet's `build_dataloader(..., "
               "num_parallel_workers=1)`), unless the map or batch function is a function of the file, or "
               "one the functions around the call define (mindface's `read_data_from_dataset`), (or "
               "a `partial` of one, or a lambda calling only such functions: mindaudio's `lambda wav, start, stop: "
               "audio_pipeline(wav, start, stop)`) that draws no random number, itself or through the file's "
               "functions it calls (mindformers' padding `per_batch_map`), and calls no callable a name holds "
               "(mindface's `aug(image, annot)`, with `aug = Preproc(image_size)`), or a list of such functions and "
               "known deterministic transforms (`operations=[label_pipeline]`) (other source datasets, "
               "`ImageFolderDataset`, `MindDataset`, ..., read in the sampler's order and draw nothing on their "
               "workers); `.map(...)` with no `num_parallel_workers` (several workers by default) unless its "
               "operations are such functions or all known deterministic transforms (a list literal of them, "
               "or one the function builds only by appending them: mindpose's `image_funcs`) or the file "
               "calls `mindspore.dataset.config.set_num_parallel_workers(1)`; that call with more than one; and mindyolo's "
               "`create_loader` (a `GeneratorDataset`, 8 workers by default) without `num_parallel_workers=1`. "
               "A file that calls `mindspore.dataset.config.set_debug_mode(True)` (one thread, seeded) gets no "
               "MindSpore finding, and one that has Lightning seed the workers (`seed_everything(s, workers=True)`, "
               "`fabric.seed_everything(s)`, `LightningCLI`: Lightning's Trainer and `fabric.setup_dataloaders` then "
               "give each loader without one a `worker_init_fn`) no `DataLoader` finding. Hugging Face's Trainer "
               "builds its loaders itself, with a `worker_init_fn`: `dataloader_num_workers` is not flagged. "
               "`deepspeed.initialize(training_data=...)` is: DeepSpeed's loader runs 2 workers per device without a "
               "`generator=`, unless the data is such a torchvision dataset. A worker count that is 0 with the "
               "default arguments (an option's, or a Hugging Face trainer's `self.args.dataloader_num_workers`: "
               "TrainingArguments' default, as in trl's reference log-prob loaders) is reported as info.")
    why = ("Each PyTorch worker seeds torch and `random` with `base_seed + worker_id`, and numpy with a seed "
           "derived from both, where the base seed is drawn, as the workers start, from the loader's `generator`, "
           "or from the global torch generator when none is given. "
           "Random augmentation in a worker therefore depends on how many numbers the main process drew before "
           "the epoch started and on how many workers there are: a GPU run and an NPU run that differ in either "
           "augment the same sample differently. Generators of their own (`numpy.random.default_rng()` without a "
           "seed, ...) are not seeded by PyTorch at all. MindSpore's `map` runs Python and random operations on "
           "several workers (8 by default): rows keep their order, but random operations draw in whatever order the "
           "workers are scheduled.")
    fix = ("Workers are fine for throughput; for debugging runs derive their seeds from the run's seed: pass "
           "`generator=torch.Generator().manual_seed(seed)` and use the same `num_workers` in the runs you compare. "
           "PyTorch then seeds torch, `random` and numpy in every worker from it; a `worker_init_fn` is needed only "
           "for generators of their own. A loader given either of them is not flagged. msprobe-instrument adds "
           "`generator=torch.Generator().manual_seed(torch.initial_seed())` (with `--data strict`, `num_workers=0`); "
           "it leaves `deepspeed.initialize(training_data=...)`: build that `DataLoader` yourself. For MindSpore pass "
           "`num_parallel_workers=1` (or call `mindspore.dataset.config.set_num_parallel_workers(1)`) while "
           "debugging.")
    valid = (
        # A torchvision dataset whose transforms draw nothing: the same batches with any number of workers.
        "import torchvision.transforms as T\nfrom torch.utils.data import DataLoader\nfrom torchvision import datasets\n\n"
        "val_tf = T.Compose([T.Resize(256), T.CenterCrop(224), T.ToTensor()])\n"
        "images = datasets.ImageFolder(\"data/val\", val_tf)\nloader = DataLoader(images, batch_size=64, num_workers=8)\n"
        "digits = DataLoader(datasets.MNIST(\"data\", train=True, transform=T.ToTensor()), num_workers=2)\n",
        "import torch\nfrom torch.utils.data import DataLoader as DL\n\n\ndef seed_worker(worker_id):\n"
        "    pass\n\n\ng = torch.Generator()\ng.manual_seed(0)\nloader = DL(torch.arange(10), num_workers=4, "
        "worker_init_fn=seed_worker, generator=g)\nsingle = DL(torch.arange(10), num_workers=0)\n",
        "from torch.utils.data import DataLoader\n\nloader = DataLoader(range(10), batch_size=2)\n"
        "from multiprocessing import Pool\n\nsquares = Pool(4).map(abs, range(10))\n",
        "import mindspore.dataset as ds\nfrom mindspore.dataset import vision\n\n"
        "data = ds.ImageFolderDataset(\"train/\", shuffle=False, num_parallel_workers=1)\n"
        "trans = [vision.Decode(), vision.Resize(256), vision.CenterCrop(224), vision.HWC2CHW()]\n"
        "data = data.map(operations=trans, input_columns=\"image\")\ndata = data.batch(32, num_parallel_workers=8)\n"
        "# a source dataset's workers read files in the sampler's order: nothing random\n"
        "cifar = ds.Cifar10Dataset(\"cifar/\", shuffle=False, num_parallel_workers=8)\n",
        "import mindspore.dataset as ds\n\nds.config.set_num_parallel_workers(1)\n\n\ndef build(data, fn):\n"
        "    return data.map(operations=fn, input_columns=[\"text\"])\n",
        "import mindspore\n\n\ndef tokenize(dataset, tokenizer):\n    # a Hugging Face dataset: not MindSpore's map\n"
        "    return dataset.map(tokenizer, batched=True, num_proc=4)\n",
        "import mindspore.dataset as ds\n\nds.config.set_debug_mode(True)  # one thread, seeded: worker counts are ignored\n"
        "data = ds.GeneratorDataset(source, [\"x\"], num_parallel_workers=8)\n"
        "data = data.map(operations=augment, input_columns=\"x\")\n",
        "from mindyolo.data import create_loader\n\nloader = create_loader(data, None, [], [], 8, shuffle=False, "
        "num_parallel_workers=1)\n",
        # Lightning gives the loaders it runs a `worker_init_fn` of its own after `seed_everything(workers=True)`
        # (`fabric.seed_everything(s)` and LightningCLI switch it on by default).
        "import lightning as L\nfrom torch.utils.data import DataLoader\n\nL.seed_everything(42, workers=True)\n"
        "loader = DataLoader(range(64), batch_size=8, num_workers=4)\nL.Trainer().fit(model, loader)\n",
        # DeepSpeed's loader over a torchvision dataset whose transforms draw nothing: the same batches with any
        # number of workers (DeepSpeedExamples' CIFAR-10 script).
        "import deepspeed\nimport torchvision\nfrom torchvision import transforms\n\n\ndef main(args, net):\n"
        "    transform = transforms.Compose([transforms.ToTensor(), transforms.Normalize((0.5,), (0.5,))])\n"
        "    trainset = torchvision.datasets.CIFAR10(\"data\", train=True, transform=transform)\n"
        "    return deepspeed.initialize(args=args, model=net, training_data=trainset)\n",
        "import torch\nimport webdataset as wds\n\n\ndef make(dataset, args, seed):\n"
        "    return wds.WebLoader(dataset, batch_size=None, num_workers=args.workers,\n"
        "                         generator=torch.Generator().manual_seed(seed))\n",
        # Megatron's pretraining loader: `worker_init_fn` is None only without workers
        "from torch.utils.data import DataLoader\n\n\ndef build(dataset, args, worker_init_fn):\n"
        "    maybe_init = worker_init_fn if args.num_workers > 0 else None\n"
        "    return DataLoader(dataset, num_workers=args.num_workers, worker_init_fn=maybe_init)\n",
        # a `worker_init_fn` that seeds numpy in each worker
        "import numpy as np\nimport torch\nfrom torch.utils.data import DataLoader\n\n\ndef seed_worker(worker_id):\n"
        "    np.random.seed(torch.initial_seed() % 2**32)\n\n\n"
        "loader = DataLoader(range(10), num_workers=4, worker_init_fn=seed_worker)\n",
        # a project function's dict that may hold a `worker_init_fn` (handed to another call) or names it
        "from torch.utils.data import DataLoader\n\n\ndef loader_kwargs(args):\n    kwargs = {\"batch_size\": 8}\n"
        "    add_seeding(kwargs, args.seed)\n    return kwargs\n\n\ndef seeded_kwargs(init):\n"
        "    return {\"worker_init_fn\": init}\n\n\ndef build(dataset, args):\n"
        "    first = DataLoader(dataset, num_workers=4, **loader_kwargs(args))\n    kwargs = loader_kwargs(args)\n"
        "    second = DataLoader(dataset, num_workers=4, **kwargs)\n    more = seeded_kwargs(seed_worker)\n"
        "    return first, second, DataLoader(dataset, num_workers=4, **more)\n",
        # datasets of the file whose sample methods draw nothing: OLMo's shuffles once, with a generator of its own
        # seeded from `seed + epoch`; mindediting's only loads images (through its base class's loader)
        "import mindspore.dataset as ds\nimport numpy as np\nimport torch\nfrom torch.utils.data import DataLoader\n\n\n"
        "class Ordered(torch.utils.data.IterableDataset):\n    def __init__(self, data, seed):\n"
        "        self.data, self.seed = data, seed\n\n    def __iter__(self):\n"
        "        rng = np.random.Generator(np.random.PCG64(seed=self.seed))\n        order = np.arange(len(self.data))\n"
        "        rng.shuffle(order)\n        return (self.data[i] for i in order)\n\n\n"
        "class Base:\n    def _load(self, path):\n        return np.load(path)\n\n\nclass Pairs(Base):\n"
        "    def __init__(self, files):\n        self.files = files\n\n    def __getitem__(self, index):\n"
        "        return self._load(self.files[index])\n\n\ndef build(data, files, workers):\n"
        "    data = Ordered(data, seed=0)\n    loader = DataLoader(data, batch_size=8, num_workers=workers)\n"
        "    return loader, ds.GeneratorDataset(Pairs(files), [\"x\"], shuffle=False, num_parallel_workers=workers)\n",
        # stylegan3's images: the base class's `__getitem__` loads through the subclass's methods, which only read
        # files (its own methods are followed however deep)
        "import zipfile\n\nfrom torch.utils.data import DataLoader\n\n\nclass Base:\n"
        "    def __getitem__(self, index):\n        return self._load_raw_image(index)\n\n\nclass Folder(Base):\n"
        "    def __init__(self, path, names):\n        self.path, self.names = path, names\n\n"
        "    def _load_raw_image(self, index):\n        with self._open_file(self.names[index]) as f:\n"
        "            return f.read()\n\n    def _open_file(self, name):\n        return self._get_zipfile().open(name)\n\n"
        "    def _get_zipfile(self):\n        return zipfile.ZipFile(self.path)\n\n\ndef build(path, names):\n"
        "    return DataLoader(Folder(path, names), batch_size=1, num_workers=3)\n",
        # mindpose's pipeline: a list built by appends of known deterministic transforms
        "from mindspore.dataset import vision\n\n\ndef pipeline(dataset, normalize, workers):\n    image_funcs = []\n"
        "    if normalize:\n        image_funcs.append(vision.Normalize([0.5], [0.5]))\n"
        "    image_funcs.append(vision.HWC2CHW())\n"
        "    return dataset.map(image_funcs, input_columns=[\"image\"], num_parallel_workers=workers)\n",
        # llm-foundry's datasets: mosaicml-streaming's `StreamingDataset` reads shards and shuffles with generators
        # of its own seeded from `shuffle_seed`; its subclass only tokenizes (and shuffles with a seeded generator)
        """\
import numpy as np
from streaming import StreamingDataset
from torch.utils.data import DataLoader
from transformers import PreTrainedTokenizerBase


class StreamingTextDataset(StreamingDataset):
    def __init__(self, tokenizer: PreTrainedTokenizerBase, seed: int, **kwargs):
        super().__init__(**kwargs)
        self.tokenizer = tokenizer
        self._generator = np.random.default_rng(seed=seed)

    def __getitem__(self, idx):
        sample = super().__getitem__(idx)
        parts = sample["text"].split("|")
        self._generator.shuffle(parts)
        return self.tokenizer(parts, truncation=True)


def build(tokenizer, streams, workers):
    plain = DataLoader(StreamingDataset(streams=streams, shuffle=True), num_workers=workers)
    return plain, DataLoader(StreamingTextDataset(tokenizer, 0, streams=streams), num_workers=workers)
""",
        # generative-models' data module: a wrapper that indexes the torchvision dataset it is built with, held in
        # an attribute; `Lambda` of arithmetic draws nothing
        """\
import torchvision
from torch.utils.data import DataLoader, Dataset
from torchvision import transforms


class DataDictWrapper(Dataset):
    def __init__(self, dset):
        self.dset = dset

    def __getitem__(self, i):
        x, y = self.dset[i]
        return {"jpg": x, "cls": y}


class Loader:
    def __init__(self, workers):
        transform = transforms.Compose([transforms.ToTensor(), transforms.Lambda(lambda x: x * 2.0 - 1.0)])
        self.workers = workers
        self.train_dataset = DataDictWrapper(torchvision.datasets.CIFAR10("data", transform=transform))

    def train_dataloader(self):
        return DataLoader(self.train_dataset, batch_size=64, num_workers=self.workers)
""",
        # mindface's map function, defined in the function that builds the pipeline, only reads files
        "import cv2\nimport mindspore\n\n\ndef create_dataset(data, workers):\n    def read_data(image, annot):\n"
        "        return cv2.imread(image), annot.reshape(-1, 15)\n\n"
        "    return data.map(operations=read_data, input_columns=[\"image\", \"annot\"], num_parallel_workers=workers)\n",
        # mindaudio's ECAPA recipe: a list of a function and a lambda over one that draw nothing, with the default
        # workers; minddet's `build_dataloader`: a worker count left at its default of 1 by every call
        "import mindspore.dataset as ds\nfrom soundfile import read\n\n\ndef prepare(files, labels, workers=1):\n"
        "    def label_pipeline(spk):\n        return labels[str(spk)]\n\n"
        "    def audio_pipeline(wav, start, stop):\n        return read(wav)[0][int(start):int(stop)]\n\n"
        "    data = ds.CSVDataset(files, shuffle=False)\n"
        "    data = data.map(operations=[label_pipeline], input_columns=[\"spk\"])\n"
        "    data = data.map(lambda wav, start, stop: audio_pipeline(wav, start, stop), input_columns=[\"wav\"])\n"
        "    return data.map(operations=augment, input_columns=[\"wav\"], num_parallel_workers=workers)\n\n\n"
        "train = prepare(\"train.csv\", {})\n",
    )
    invalid = (
        # a lambda over a function that draws; a worker count a call in the file sets above 1
        Invalid("import random\n\nimport mindspore\n\n\ndef crop(wav):\n    start = random.randint(0, 100)\n    return wav[start:]\n\n\n"
                "def build(data, workers=1):\n    data = data.map(lambda wav: crop(wav), input_columns=[\"wav\"])\n"
                "    return data.map(operations=augment, input_columns=[\"x\"], num_parallel_workers=workers)\n\n\n"
                "loader = build(source, workers=4)\n", lines=(12, 13)),
        # a dataset of the file that calls the transform it is handed, or draws itself, may draw on any worker; so
        # does a list of transforms a random one is appended to
        Invalid("import random\n\nimport mindspore.dataset as ds\nfrom mindspore.dataset import vision\n"
                "from torch.utils.data import DataLoader, Dataset\n\n\nclass Images(Dataset):\n"
                "    def __init__(self, files, transform):\n        self.files, self.transform = files, transform\n\n"
                "    def __getitem__(self, index):\n        return self.transform(self.files[index])\n\n\n"
                "class Clips:\n    def __getitem__(self, index):\n        return index + random.randint(0, 4)\n\n\n"
                "def build(files, transform, dataset, workers):\n"
                "    loader = DataLoader(Images(files, transform), num_workers=workers)\n"
                "    clips = ds.GeneratorDataset(Clips(), [\"x\"], shuffle=False, num_parallel_workers=workers)\n"
                "    funcs = [vision.HWC2CHW()]\n    funcs.append(vision.RandomHorizontalFlip())\n"
                "    return loader, clips, dataset.map(funcs, input_columns=[\"image\"], num_parallel_workers=workers)\n",
                lines=(22, 23, 26)),
        # DGL's loader takes DataLoader's keywords.
        Invalid("import dgl\nimport torch\n\nloader = dgl.dataloading.DataLoader(g, train_ids, sampler, "
                "batch_size=1024, shuffle=False, num_workers=4)\n", lines=(4,)),
        # Workers only when asked for (`--dataloader_num_workers`, 0 by default): info.
        Invalid("import argparse\n\nfrom torch.utils.data import DataLoader\n\nparser = argparse.ArgumentParser()\n"
                "parser.add_argument(\"--dataloader_num_workers\", type=int, default=0)\nargs = parser.parse_args()\n"
                "loader = DataLoader(range(8), shuffle=False, num_workers=args.dataloader_num_workers)\n",
                lines=(8,), severity="info"),
        # a Hugging Face trainer's `self.args.dataloader_num_workers`: TrainingArguments' default is 0 (trl's
        # reference log-prob passes in its DPO and KTO trainers)
        Invalid("from torch.utils.data import DataLoader\nfrom transformers import Trainer\n\n\n"
                "class RefTrainer(Trainer):\n    def reference_logps(self, dataset):\n"
                "        params = {'batch_size': 8, 'num_workers': self.args.dataloader_num_workers, 'shuffle': False}\n"
                "        return DataLoader(dataset, **params)\n", lines=(8,), severity="info"),
        # DeepSpeed builds the loader, over a dataset that may draw.
        Invalid("""\
import deepspeed


def train(args, net, trainset):
    engine, optimizer, loader, _ = deepspeed.initialize(args=args, model=net, model_parameters=net.parameters(),
                                                        training_data=trainset)
    return engine, loader
""", lines=(5,)),
        Invalid("import torch\n\nloader = torch.utils.data.DataLoader(torch.arange(10), batch_size=2, num_workers=4)\n",
                lines=(3,)),
        # latent-diffusion's data module: the workers get no `worker_init_fn` unless a flag is on.
        Invalid("from torch.utils.data import DataLoader\n\n\ndef train_loader(data, workers, seeded):\n"
                "    if seeded:\n        init_fn = seed_worker\n    else:\n        init_fn = None\n"
                "    return DataLoader(data, batch_size=8, num_workers=workers, worker_init_fn=init_fn)\n",
                lines=(9,)),
        # webdataset's WebLoader builds a `DataLoader` with the arguments it is given (open_clip).
        Invalid("import torch\nimport webdataset as wds\n\n\ndef make(dataset, args):\n"
                "    return wds.WebLoader(dataset, batch_size=None, shuffle=False, num_workers=args.workers)\n",
                lines=(6,)),
        Invalid("from torchdata.stateful_dataloader import StatefulDataLoader\n\n\n"
                "def make(ds, args):  # OpenRLHF's, resumable mid-epoch\n"
                "    return StatefulDataLoader(ds, args.batch_size, True, num_workers=args.workers)\n", lines=(5,)),
        Invalid("from torch.utils.data import DataLoader as DL\n\n\ndef make(ds, args):\n"
                "    return DL(ds, batch_size=args.batch_size, num_workers=args.workers, pin_memory=True)\n",
                lines=(5,)),
        # llama-cookbook's finetuning.py: the loader's other arguments come from a function of the project whose
        # dict names its keys (a sampler, a collate function), none of them a generator or a `worker_init_fn`
        Invalid("from torch.utils.data import DataLoader, RandomSampler\n\n\ndef loader_kwargs(dataset, mode):\n"
                "    kwargs = {\"batch_size\": 8}\n    if mode == \"train\":\n"
                "        kwargs[\"sampler\"] = RandomSampler(dataset)\n    return kwargs\n\n\n"
                "def build(dataset, config, collate):\n    dl_kwargs = loader_kwargs(dataset, \"train\")\n"
                "    dl_kwargs[\"collate_fn\"] = collate\n"
                "    return DataLoader(dataset, num_workers=config.workers, pin_memory=True, **dl_kwargs)\n",
                lines=(14,)),
        Invalid("from torch.utils.data import DataLoader\n\nkwargs = {\"batch_size\": 8}\n"
                "kwargs.update({\"num_workers\": 2, \"pin_memory\": True})\nloader = DataLoader([1, 2, 3], **kwargs)\n",
                lines=(5,)),
        Invalid("import mindspore.dataset as ds\nfrom mindspore.dataset import vision\n\n"
                "data = ds.GeneratorDataset([(1,), (2,)], [\"x\"], shuffle=False, num_parallel_workers=4)\n"
                "data = data.map(operations=[vision.RandomHorizontalFlip()], input_columns=\"x\")\n", lines=(4, 5)),
        Invalid("import mindspore as ms\n\n\ndef build(dataset, augment, workers):\n"
                "    dataset = dataset.map(operations=augment, input_columns=[\"image\"])\n"
                "    return dataset.map(operations=augment, input_columns=\"label\", num_parallel_workers=workers)\n",
                lines=(5, 6)),
        Invalid("import mindspore.dataset as ds\n\nds.config.set_num_parallel_workers(8)\n", lines=(3,)),
        Invalid("from mindyolo.data import COCODataset, create_loader\n\n\ndef build(args):\n"
                "    data = COCODataset(dataset_path=args.path, is_training=True, augment=True)\n"
                "    return create_loader(data, None, [], [], 8, shuffle=False)  # 8 workers by default\n",
                lines=(6,)),
        Invalid("from torch.utils.data import DataLoader\n\ntest_loader = DataLoader([1, 2], num_workers=4)\n",
                lines=(3,), severity="info"),
        # Megatron's `worker_init_fn` closes file descriptors and seeds nothing; SlowFast's factory returns None.
        Invalid("import os\n\nfrom torch.utils.data import DataLoader\n\n\ndef no_init(dataset):\n    return None\n\n\n"
                "def build(dataset, args):\n    def worker_init_fn(_):\n        os.close(3)\n\n"
                "    maybe = worker_init_fn if args.num_workers > 0 else None\n"
                "    first = DataLoader(dataset, num_workers=args.num_workers, worker_init_fn=maybe)\n"
                "    return first, DataLoader(dataset, num_workers=4, worker_init_fn=no_init(dataset))\n",
                lines=(15, 16)),
        # The dataset draws nothing, but the collate function, run on the workers too, does.
        Invalid("import random\n\nfrom torch.utils.data import DataLoader, Dataset\n\n\nclass Items(Dataset):\n"
                "    def __getitem__(self, index):\n        return index\n\n\ndef crop(batch):\n"
                "    start = random.randint(0, 3)\n    return [item + start for item in batch]\n\n\n"
                "loader = DataLoader(Items(), num_workers=4, collate_fn=crop)\n", lines=(16,)),
        # a wrapper over a torchvision dataset that crops at random; a map function defined in the builder that draws
        Invalid("""\
import random

import mindspore
import torchvision
from torch.utils.data import DataLoader, Dataset
from torchvision import transforms


class Wrapper(Dataset):
    def __init__(self, dset):
        self.dset = dset

    def __getitem__(self, i):
        return self.dset[i]


def build(workers, data, make_augment):
    def jitter(image):
        return image + random.random()

    augment = make_augment()  # mindface's `aug = Preproc(image_size)`: a callable that may draw

    def augmentation(image):
        return augment(image)

    crop = transforms.Compose([transforms.RandomCrop(32), transforms.ToTensor()])
    images = Wrapper(torchvision.datasets.CIFAR10("data", transform=crop))
    loader = DataLoader(images, batch_size=64, num_workers=workers)
    data = data.map(operations=augmentation, input_columns=["image"], num_parallel_workers=workers)
    return loader, data.map(operations=jitter, input_columns=["image"], num_parallel_workers=workers)
""", lines=(28, 29, 30)),
        # Without `workers=True`, Lightning leaves the workers' seeds to PyTorch.
        Invalid("import lightning as L\nfrom torch.utils.data import DataLoader\n\nL.seed_everything(42)\n"
                "loader = DataLoader(range(64), batch_size=8, num_workers=4)\nL.Trainer().fit(model, loader)\n",
                lines=(5,)),
    )

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.data = PipelineValues(ctx)
        self.values = self.data.values
        self.one_worker_configured = False
        self.debug_mode = False  # `mindspore.dataset.config.set_debug_mode(True)`: one worker, seeded
        self.default_worker_maps: list = []
        self.mindspore_reports: list = []  # (site, message), reported at the end unless in debug mode
        # (site, message, worker count, fixable), reported at the end unless Lightning seeds the workers
        self.torch_reports: list[tuple[Site, str, ast.expr | None, bool | None]] = []
        self.lightning_seeds_workers = False
        self._project: tuple | None = None  # (module-level functions, folder, project imports), read once
        self.defaults = LeftAtDefault(ctx)

    def visit_Call(self, node: ast.Call) -> None:
        self.values.call(node)
        qualified = self.ctx.call_qualname(node)
        positions = catalogue.loader_positions(qualified)
        if positions is not None:
            self._dataloader(node, positions)
        elif qualified in catalogue.DEEPSPEED_TRAINING_DATA:
            data = self.data.keyword(node, "training_data", catalogue.DEEPSPEED_TRAINING_DATA[qualified])
            if data not in (None, UNKNOWN) and constant(data) is not None and not self.data.draws_nothing(data):
                self.torch_reports.append((self.data.site(node), DEEPSPEED_MESSAGE, None, False))
        elif (seeder := qualified or seeding.method_qualname(self.ctx, node)) in catalogue.LIGHTNING_WORKER_SEEDING:
            self.lightning_seeds_workers |= _seeds_workers(node, seeder)
        elif qualified in catalogue.MINDSPORE_DEBUG_MODE:
            self.debug_mode = self.debug_mode or constant(argument(node, 0, "debug_mode_flag")) is True
        elif qualified in catalogue.MINDSPORE_SET_WORKERS:
            workers = argument(node, 0, "num")
            if constant(workers) == 1:
                self.one_worker_configured = True
            elif self._several(workers):
                self._mindspore(node, "every dataset operation")
        elif qualified is not None and catalogue.is_mindspore_dataset_class(qualified):
            if (qualified.rpartition(".")[2] in catalogue.MINDSPORE_PYTHON_SOURCE_DATASETS
                    and self._several(self.data.keyword(node, catalogue.MINDSPORE_WORKER_KEYWORD))
                    and not self.data.draws_nothing(self.data.keyword(node, "source", 0))):
                self._mindspore(self.data.site(node), f"`{qualified.rpartition('.')[2]}`")
        elif qualified is None and self.ctx.imports.resolve_any(node.func) in catalogue.MINDSPORE_ZOO_WORKER_LOADERS:
            self._zoo_loader(node, self.ctx.imports.resolve_any(node.func))
        elif qualified is None and isinstance(node.func, ast.Attribute):
            if node.func.attr == "map":
                self._map(node)
            elif node.func.attr == "batch" and self.data.is_dataset(node.func.value) is not False \
                    and self.data.keyword(node, "per_batch_map") is not None:
                if self._several(self.data.keyword(node, catalogue.MINDSPORE_WORKER_KEYWORD)) and not self._draws_nothing(
                        self.data.keyword(node, "per_batch_map"), node):
                    self._mindspore(node, "`.batch(per_batch_map=...)`")

    def _dataloader(self, node: ast.Call, positions: dict[str, int]) -> None:
        workers = self.data.keyword(node, catalogue.TORCH_WORKER_KEYWORD, positions.get("num_workers"))
        if not _parallel(workers, more_than=0):
            return
        message = TORCH_MESSAGE
        for given in ("worker_init_fn", "generator"):
            value = self.data.keyword(node, given, positions.get(given))
            if value is UNKNOWN and self._hidden(node, given):
                return
            if isinstance(value, ast.expr) and not self._may_be_none(value, workers):
                if given == "generator" or not self._seeds_nothing(value, node):
                    return
                message = SEEDS_NOTHING.format(init=ast.unparse(value)) + TORCH_MESSAGE
        collate = self.data.keyword(node, "collate_fn", positions.get("collate_fn"))
        if self.data.draws_nothing(self.data.keyword(node, "dataset", 0)) and (
                collate in (None, UNKNOWN) or self._draws_nothing(collate, node)):
            return  # `DataLoader(ImageFolder(valdir, Compose([Resize(256), CenterCrop(224), ToTensor()])))`
        self.torch_reports.append((self.data.site(node), message, workers, None))

    def _seeds_nothing(self, value: ast.expr, at: ast.AST) -> bool:
        """Whether a `worker_init_fn` is known to seed nothing: every function it can be (through names, `a if c
        else b`, `partial(f, ...)`) is one of the file or the project that names nothing seed- or generator-like,
        itself or through the file's functions it calls (Megatron's closes the workers' GPU file descriptors)."""
        functions = self._worker_functions(value, at)
        own = {item.name: item for item in self.ctx.tree.body if isinstance(item, FUNCTION_TYPES)}
        return bool(functions) and None not in functions and not any(
            _may_seed(function, own, MAX_HELPER_DEPTH) for function in functions)

    def _worker_functions(self, value: ast.expr, at: ast.AST) -> list[ast.AST | None]:
        """The functions a `worker_init_fn` value can be; None in the list for one that is not known."""
        if isinstance(value, ast.IfExp):
            return [*self._worker_functions(value.body, at), *self._worker_functions(value.orelse, at)]
        if isinstance(value, ast.Call) and self.ctx.imports.resolve_any(value.func) == "functools.partial" and value.args:
            return self._worker_functions(value.args[0], at)
        if constant(value) is None:
            return []
        if isinstance(value, ast.Name):
            nested = _nested_functions(self.ctx.current_def()).get(value.id)
            if nested is not None:
                return [nested]
            bound = self.values.bindings.bound(value.id, at)
            if bound:
                return [item for held in bound for item in (
                    self._worker_functions(held, at) if isinstance(held, ast.expr) else [None])]
        if isinstance(value, (ast.Name, ast.Attribute)):
            return [self._project_function(ast.Call(func=value, args=[], keywords=[]))]
        return [None]

    def _project_function(self, call: ast.Call) -> ast.AST | None:
        """The function of this file or of a project module that `call` runs; None for anything else."""
        if self._project is None:
            tree = self.ctx.tree
            self._project = ({item.name: item for item in tree.body if isinstance(item, FUNCTION_TYPES)},
                             project.file_folder(self.ctx.path), project.local_imports(project.import_statements(tree.body)))
        return pinning.called_function(call, *self._project)[0]

    def _hidden(self, node: ast.Call, name: str) -> bool:
        """Whether keyword `name` may hide in a `**mapping` of `node` we cannot see into: not when each is a name
        the calling function binds once, to a call of a function of the project whose dict's keys can be read
        (llama-cookbook's `get_dataloader_kwargs`, which fills `kwargs["batch_sampler"]`, ... and returns it),
        and fills only by keys it names."""
        caller = self.ctx.current_def() or self.ctx.tree
        for mapping in (kw.value for kw in node.keywords if kw.arg is None):
            if self.values.bindings.dict_fact(mapping) is not None:
                continue
            bound = self.values.bindings.bound(mapping.id, node) if isinstance(mapping, ast.Name) else []
            made = bound[0] if len(bound) == 1 and isinstance(bound[0], ast.Call) else None
            keys = self._returned_keys(made) if made is not None else None
            added = _dict_keys(caller, mapping.id, made) if keys is not None else None
            if added is None or name in keys | added:
                return True
        return False

    def _returned_keys(self, call: ast.Call) -> set[str] | None:
        """The keys of the dicts the project function `call` calls returns (literals, or names it fills by
        keys it names); None when they cannot be read."""
        function = self._project_function(call)
        returned = [node.value for node in own_nodes(function) if isinstance(node, ast.Return)] if function else []
        keys: set[str] = set()
        for value in returned or [None]:
            found = (_dict_keys(function, value.id) if isinstance(value, ast.Name)
                     else _literal_keys(value) if value is not None else None)
            if found is None:
                return None
            keys |= found
        return keys

    def _may_be_none(self, value: ast.expr, workers: ast.expr) -> bool:
        """Whether an argument may be None while there are `workers`: the literal, a branch of `a if c else b`
        (not the one taken only without workers: Megatron's `worker_init_fn if args.num_workers > 0 else None`),
        or a name some earlier assignment in its scope binds to one of those (`init_fn = None` unless a flag is on)."""
        if isinstance(value, ast.IfExp):
            with_workers = _holds_with_workers(value.test, workers)
            return (with_workers is not False and self._may_be_none(value.body, workers)
                    or with_workers is not True and self._may_be_none(value.orelse, workers))
        if isinstance(value, ast.Name):
            return any(isinstance(bound, ast.expr) and self._may_be_none(bound, workers)
                       for bound in self.values.bindings.bound(value.id, value))
        if isinstance(value, ast.Call) and (function := self._project_function(value)) is not None:
            return _returns_none(function)  # SlowFast's `loader_worker_init_fn(dataset)`, which returns None
        return constant(value) is None

    def _zoo_loader(self, node: ast.Call, qualified: str) -> None:
        """mindyolo's `create_loader`: a `GeneratorDataset` over the Python dataset, 8 workers by default."""
        position, default = catalogue.MINDSPORE_ZOO_WORKER_LOADERS[qualified]
        workers = self.data.keyword(node, catalogue.MINDSPORE_WORKER_KEYWORD, position)
        if self._several(ast.Constant(default) if workers is None else workers):
            library, short = qualified.split(".", 1)[0], qualified.rpartition(".")[2]
            self._mindspore(self.data.site(node), f"{library}'s `{short}` (a `GeneratorDataset`)")

    def _map(self, node: ast.Call) -> None:
        verdict = self.data.is_dataset(node.func.value)
        if verdict is False or (verdict is None and not (
                self.ctx.imports.imports_root("mindspore")
                and any(kw.arg in MINDSPORE_MAP_KEYWORDS for kw in node.keywords))):
            return
        operations = self.data.keyword(node, "operations", 0)
        if self.data.is_deterministic(operations) or self._draws_nothing(operations, node):
            return
        workers = self.data.keyword(node, catalogue.MINDSPORE_WORKER_KEYWORD)
        if workers is None:
            self.default_worker_maps.append(self.ctx.site(node))
        elif self._several(workers):
            self._mindspore(node, "`.map(...)`")

    def _several(self, workers: ast.expr | None | object) -> bool:
        """Whether a MindSpore worker count can exceed 1 (see `_parallel`); not a parameter of the function around
        (or a `self.` attribute `__init__` stores from one) that every call in the file leaves at 1, a default of 1
        none overrides, nor the project's other files (minddet's `build_dataloader(..., num_parallel_workers=1)`,
        mindaudio's `create_asr_predict_dataset(..., num_workers=1)`, which its predict.py calls without it)."""
        if isinstance(workers, (ast.Name, ast.Attribute)):
            name, function = self.defaults.source(workers, self.ctx.current_def())
            if isinstance(name, ast.Name) and self.defaults.off(function, name.id, 1) \
                    and default_elsewhere(self.ctx, name, function, 1) == 1:
                return False
        return _parallel(workers)

    def _draws_nothing(self, value: ast.expr | None | object, at: ast.AST) -> bool:
        """Whether a `per_batch_map` or `.map` operation is None or a function of this file (`functools.partial` of
        one), through every value a name holds, that draws no random number, itself or through the file's
        functions it calls (mindformers' `dyn_batch_wrapper`, which pads); a lambda that draws none, calling such
        functions (mindaudio's `lambda wav, start, stop: audio_pipeline(wav, start, stop)`); a list of such
        operations and known deterministic transforms (`operations=[label_pipeline]`)."""
        if isinstance(value, (ast.List, ast.Tuple)):
            return bool(value.elts) and all(self.data.is_deterministic(item) or self._draws_nothing(item, at)
                                            for item in value.elts)
        if not isinstance(value, ast.expr):
            return False
        functions = self._visible_functions()
        if isinstance(value, ast.Lambda):
            return not self._draws(value, functions, MAX_HELPER_DEPTH)
        if isinstance(value, ast.Name) and value.id not in functions:
            bound = self.values.bindings.bound(value.id, at)
            return bool(bound) and all(isinstance(v, ast.expr) and self._draws_nothing(v, at) for v in bound)
        if isinstance(value, ast.Call) and self.ctx.imports.resolve_any(value.func) == "functools.partial" and value.args:
            value = value.args[0]
        if isinstance(value, ast.Constant):
            return value.value is None
        return isinstance(value, ast.Name) and value.id in functions and not self._draws(
            functions[value.id], functions, MAX_HELPER_DEPTH)

    def _visible_functions(self) -> dict[str, ast.AST]:
        """The functions a name in the function being visited may call: the file's, and those the functions around
        it define (mindface's `read_data_from_dataset`, defined in `create_dataset`), the innermost winning."""
        functions = {item.name: item for item in self.ctx.tree.body if isinstance(item, FUNCTION_TYPES)}
        for scope in (node for node in self.ctx.ancestors if isinstance(node, FUNCTION_TYPES)):
            functions.update(_nested_functions(scope))
        return functions

    def _draws(self, function: ast.AST, functions: dict[str, ast.AST], depth: int) -> bool:
        """Whether a function calls a random API (a global draw, a MindSpore random operator, a random transform,
        a generator's drawing method), a callable a name holds (mindface's `aug = Preproc(image_size)`, called in
        its `augmentation`), or a function of the file that does (`depth` deep; deeper counts as one)."""
        classes = {item.name for item in self.ctx.tree.body if isinstance(item, ast.ClassDef)}
        for call in (node for node in ast.walk(function) if isinstance(node, ast.Call)):
            qualified = self.ctx.imports.resolve_any(call.func) or ""
            if (qualified in catalogue.GLOBAL_RANDOM_DRAWS or qualified in catalogue.MINDSPORE_RANDOM_PRIMITIVES
                    or qualified.startswith(("random.", "numpy.random.")) or catalogue.is_random_transform(qualified)
                    or isinstance(call.func, ast.Attribute) and call.func.attr in DRAWING_METHODS):
                return True
            if isinstance(call.func, ast.Name) and not qualified and call.func.id not in functions \
                    and call.func.id not in classes and not hasattr(builtins, call.func.id):
                return True
            if isinstance(call.func, ast.Name) and call.func.id in functions and call.func.id != getattr(
                    function, "name", None) and (depth <= 1 or self._draws(functions[call.func.id], functions, depth - 1)):
                return True
        return False

    def _mindspore(self, where, what: str) -> None:
        self.mindspore_reports.append((where if isinstance(where, Site) else self.ctx.site(where),
                                       MINDSPORE_MESSAGE.format(what=what)))

    def finish(self) -> None:
        if not self.lightning_seeds_workers:
            for site, message, workers, fixable in self.torch_reports:
                if workers is not None and opt_in.default_value(self.ctx, workers) == 0:  # `num_workers=args.workers`
                    self.report(site, message + OPT_IN.format(workers=condition_text(workers)), "info", fixable)
                else:
                    self.report(site, message, fixable=fixable)
        if self.debug_mode:  # the whole pipeline runs on one thread, seeded
            return
        for site, message in self.mindspore_reports:
            self.report(site, message, fixable=_fixable(site.node))
        if self.one_worker_configured:
            return
        for site in self.default_worker_maps:
            self.report(site, MINDSPORE_MESSAGE.format(what="`.map(...)` without `num_parallel_workers`"),
                        fixable=_fixable(site.node))


def _fixable(call: ast.Call) -> bool | None:
    """False for a MindSpore call msprobe-instrument leaves: one whose worker count may hide in `*args`/`**kwargs`."""
    hidden = any(isinstance(a, ast.Starred) for a in call.args) or any(kw.arg is None for kw in call.keywords)
    return False if hidden and keyword(call, catalogue.MINDSPORE_WORKER_KEYWORD) is None else None


def _nested_functions(scope: ast.AST | None) -> dict[str, ast.AST]:
    """The functions `scope` defines in its own body, by name; none for no scope."""
    holders = [scope, *own_nodes(scope)] if scope is not None else []
    return {child.name: child for holder in holders for child in ast.iter_child_nodes(holder)
            if isinstance(child, FUNCTION_TYPES)}


def _returns_none(function: ast.AST) -> bool:
    """Whether a function may return None: a bare `return`, `return None`, or no `return` with a value at all."""
    returned = [node.value for node in own_nodes(function) if isinstance(node, ast.Return)]
    return not any(value is not None for value in returned) or any(
        value is None or constant(value) is None for value in returned)


def _may_seed(function: ast.AST, functions: dict[str, ast.AST], depth: int) -> bool:
    """Whether a function names anything seed- or generator-like (a call, an attribute, a name), itself or through
    the file's functions it calls (`depth` deep; deeper counts as seeding)."""
    for node in ast.walk(function):
        word = node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else ""
        if SEEDING_WORDS.search(word):
            return True
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in functions \
                and functions[node.func.id] is not function \
                and (depth <= 1 or _may_seed(functions[node.func.id], functions, depth - 1)):
            return True
    return False


def _seeds_workers(call: ast.Call, qualified: str) -> bool:
    """Whether a Lightning seeder call switches worker seeding on (`seed_everything(s, workers=True)`)."""
    position, name, default = catalogue.LIGHTNING_WORKER_SEEDING[qualified]
    switch = argument(call, position, name)
    return default if switch is None else constant(switch) is not False


def _dict_keys(function: ast.AST, name: str, given: ast.expr | None = None) -> set[str] | None:
    """The keys `function` may store in the dict it holds in `name`: those of the dict literals it assigns it and
    of its assignments to `name["key"]`; None when it may store others (another key, `update`, handing it to a
    call) or assigns it something else than a dict literal or `given`."""
    parents = {id(child): node for node in ast.walk(function) for child in ast.iter_child_nodes(node)}
    keys: set[str] = set()
    for node in ast.walk(function):
        if not (isinstance(node, ast.Name) and node.id == name):
            continue
        parent = parents.get(id(node))
        if isinstance(parent, ast.Subscript) and parent.value is node and isinstance(constant(parent.slice), str):
            keys |= {constant(parent.slice)} if isinstance(parent.ctx, ast.Store) else set()
        elif isinstance(parent, ast.Assign) and isinstance(node.ctx, ast.Store):
            literal = set() if parent.value is given else _literal_keys(parent.value)
            if literal is None:
                return None
            keys |= literal
        elif not (isinstance(parent, ast.keyword) and parent.arg is None or isinstance(parent, ast.Return)):
            return None
    return keys


def _literal_keys(value: ast.expr) -> set[str] | None:
    """The keys of a dict literal (`{"k": v}`, `dict(k=v)`) that names them all; else None."""
    if isinstance(value, ast.Dict) and all(isinstance(constant(key), str) for key in value.keys if key is not None) \
            and None not in value.keys:
        return {constant(key) for key in value.keys}
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "dict" \
            and not value.args and all(kw.arg for kw in value.keywords):
        return {kw.arg for kw in value.keywords}
    return None


def _holds_with_workers(test: ast.expr, workers: ast.expr) -> bool | None:
    """Whether `test` holds exactly when there are `workers` (`workers`, `workers > 0`, `workers >= 1`,
    `workers != 0`), True; exactly when there are none (`not workers`, `workers == 0`), False; else None."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = _holds_with_workers(test.operand, workers)
        return None if inner is None else not inner
    if ast.dump(test) == ast.dump(workers):
        return True
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and ast.dump(test.left) == ast.dump(workers)):
        return None
    bound, op = constant(test.comparators[0]), type(test.ops[0])
    if (bound, op) in ((0, ast.Gt), (1, ast.GtE), (0, ast.NotEq)):
        return True
    if (bound, op) in ((0, ast.Eq), (0, ast.LtE), (1, ast.Lt)):
        return False
    return None


def _parallel(workers: ast.expr | None | object, more_than: int = 1) -> bool:
    """Whether a worker count can exceed `more_than` (an expression can; a hidden one is skipped)."""
    if workers is None or workers is UNKNOWN:
        return False
    literal = constant(workers)
    if literal is NOT_CONSTANT:
        return True
    return isinstance(literal, int) and not isinstance(literal, bool) and literal > more_than

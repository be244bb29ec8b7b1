"""Read data in a fixed order, where `data-shuffle` fires.

`DataLoader(shuffle=True)` -> `shuffle=False` (also through a name holding a loader class, yolov5's `loader =
DataLoader if image_weights else InfiniteDataLoader`); `RandomSampler(ds)` -> `SequentialSampler(ds)` (MindSpore:
`RandomSampler()` -> `SequentialSampler()`); `DistributedSampler(...)` (or a subclass the file defines) and
MindSpore's samplers get `shuffle=False`; MindSpore datasets (which shuffle unless told otherwise) get `shuffle=False`
(beside a `sampler=s` that is None by default, `shuffle=False if s is None else <as given>`: MindSpore refuses
`shuffle=` beside a sampler),
and so do the model zoos' loader factories (mindcv's `create_dataset`, mindyolo's `create_loader`);
`dataset.shuffle(n)` is dropped from the pipeline (MindSpore's, a Hugging Face dataset's, a webdataset pipeline's).
`sampler=SubsetRandomSampler(indices)` -> `sampler=list(indices)` (MindSpore: `SubsetSampler(indices)`).
A sampler class of the project (the file's own, or a project module's) that draws its order from a global
generator gets `shuffle=False` when its `shuffle` parameter gates the draw: with it false, its `__iter__` (and
the functions of its module it calls) draws nothing (llama-cookbook's `LengthBasedBatchSampler`, `if
self.shuffle: random.shuffle(batches)`); otherwise a note.
A file that type-checks a sampler against torch's `RandomSampler` (SlowFast's `shuffle_dataset` asserts
`isinstance(loader.sampler, (RandomSampler, DistributedSampler))` every epoch) needs one: there a torch loader
and a `RandomSampler` keep shuffling, from a seeded `generator=torch.Generator().manual_seed(torch.initial_seed())`
(the order then repeats in every run with the same seed, though it still differs from another framework's), with
a note; `shuffle=False` would give the loader a `SequentialSampler` and fail that check.
"""

from __future__ import annotations

import ast

import libcst as cst

from msprobe_rewriter import catalogue
from msprobe_rewriter.context import FUNCTION_TYPES
from msprobe_rewriter.instrument import nodes
from msprobe_rewriter.instrument.data_elsewhere import project_class
from msprobe_rewriter.instrument.structure import span_of
from msprobe_rewriter.instrument.transforms.base import Example, Transform
from msprobe_rewriter.instrument.unit import Unit
from msprobe_rewriter.rules.data_shuffle import LOADER_MESSAGE, _attribute_lookup, _global_draw, _parameters

FALSE = cst.Name("False")
# Arguments a twin sampler keeps: (keyword, position or None).
TWIN_KEEPS = {"torch.utils.data.SequentialSampler": (("data_source", 0),),
              "mindspore.dataset.SequentialSampler": (("num_samples", None),),
              "mindspore.dataset.SubsetSampler": (("indices", 0), ("num_samples", 1))}
SUBSET_NOTE = "pass the indices in order, `sampler=list(indices)` (any sequence of indices is a sampler)"
TORCH_SEQUENTIAL = "torch.utils.data.SequentialSampler"  # the twin of torch's `RandomSampler` (and its re-exports)
RANDOM_SAMPLER_POSITIONS = {"generator": 3}  # RandomSampler(data_source, replacement, num_samples, generator)
KEPT_RANDOM = ("shuffling kept, from a seeded `generator=` (the order repeats in every run with the same seed): "
               "the file checks for a `RandomSampler`, which `shuffle=False` would take away")


class DataShuffle(Transform):
    name = "data-shuffle"
    fixes = ("data-shuffle",)
    rule = "data-shuffle"
    summary = "Turns shuffling off: `shuffle=False`, sequential samplers, no `dataset.shuffle(n)`."
    details = __doc__.split("\n\n", 1)[1].strip()
    examples = (
        Example("import torch\nfrom torch.utils.data import DataLoader, RandomSampler\n\n"
                "train = DataLoader(ds, batch_size=8, shuffle=True)\n"
                "other = DataLoader(ds, sampler=RandomSampler(ds))\n",
                "import torch\nfrom torch.utils.data import DataLoader, SequentialSampler\n\n"
                "train = DataLoader(ds, batch_size=8, shuffle=False)\n"
                "other = DataLoader(ds, sampler=SequentialSampler(ds))\n"),
        # ModelZoo's scripts import torch_npu under an `if` before torch.utils.data: the import there is renamed.
        Example("import torch\n\nif torch.__version__ >= \"1.8\":\n    import torch_npu\n"
                "from torch.utils.data import DataLoader, RandomSampler\n\n"
                "loader = DataLoader(range(8), sampler=RandomSampler(range(8)))\n",
                "import torch\n\nif torch.__version__ >= \"1.8\":\n    import torch_npu\n"
                "from torch.utils.data import DataLoader, SequentialSampler\n\n"
                "loader = DataLoader(range(8), sampler=SequentialSampler(range(8)))\n"),
        # Lightning's k-fold example: the subset's indices, read in order
        Example("from torch.utils.data import DataLoader, SubsetRandomSampler\n\n"
                "loader = DataLoader(dataset, batch_size=32, sampler=SubsetRandomSampler(train_ids))\n",
                "from torch.utils.data import DataLoader\n\n"
                "loader = DataLoader(dataset, batch_size=32, sampler=list(train_ids))\n"),
        Example("import mindspore.dataset as ds\n\ndata = ds.ImageFolderDataset(\"train/\")\ndata = data.shuffle(1000)\n",
                "import mindspore.dataset as ds\n\ndata = ds.ImageFolderDataset(\"train/\", shuffle=False)\ndata = data\n"),
        # yolov5's create_dataloader picks the loader class, then calls the name
        Example("from torch.utils.data import DataLoader, dataloader\n\n\nclass InfiniteDataLoader(dataloader.DataLoader):\n"
                "    pass\n\n\ndef build(ds, shuffle, image_weights):\n"
                "    loader = DataLoader if image_weights else InfiniteDataLoader\n"
                "    return loader(ds, batch_size=16, shuffle=shuffle)\n",
                "from torch.utils.data import DataLoader, dataloader\n\n\nclass InfiniteDataLoader(dataloader.DataLoader):\n"
                "    pass\n\n\ndef build(ds, shuffle, image_weights):\n"
                "    loader = DataLoader if image_weights else InfiniteDataLoader\n"
                "    return loader(ds, batch_size=16, shuffle=False)\n"),
        Example("from torch.utils.data import DistributedSampler\n\nsampler = DistributedSampler(train_set)\n",
                "from torch.utils.data import DistributedSampler\n\n"
                "sampler = DistributedSampler(train_set, shuffle=False)\n"),
        Example("from torch.utils.data import DistributedSampler\n\n\nclass Sampler(DistributedSampler):\n"
                "    pass\n\n\nsampler = Sampler(train_set)\n",
                "from torch.utils.data import DistributedSampler\n\n\nclass Sampler(DistributedSampler):\n"
                "    pass\n\n\nsampler = Sampler(train_set, shuffle=False)\n"),
        Example("from torch.utils.data import DataLoader\n\n\ndef build(ds, cuda):\n    kwargs = {\"batch_size\": 8}\n"
                "    if cuda:\n        kwargs.update({\"shuffle\": True, \"pin_memory\": True})\n"
                "    return DataLoader(ds, **kwargs)\n",
                "from torch.utils.data import DataLoader\n\n\ndef build(ds, cuda):\n    kwargs = {\"batch_size\": 8}\n"
                "    if cuda:\n        kwargs.update({\"shuffle\": True, \"pin_memory\": True})\n"
                "    return DataLoader(ds, **{**kwargs, \"shuffle\": False})\n"),
        Example("from mindcv.data import create_dataset\nfrom mindyolo.data import create_loader\n\n"
                "images = create_dataset(name=\"imagenet\", root=\"data/\", split=\"train\")\n"
                "boxes = create_loader(coco, collate, names, columns, 16, shuffle=True)\n",
                "from mindcv.data import create_dataset\nfrom mindyolo.data import create_loader\n\n"
                "images = create_dataset(name=\"imagenet\", root=\"data/\", split=\"train\", shuffle=False)\n"
                "boxes = create_loader(coco, collate, names, columns, 16, shuffle=False)\n"),
        # SlowFast's loader.py asserts `isinstance(loader.sampler, (RandomSampler, DistributedSampler))` each epoch
        Example("import torch\nfrom torch.utils.data import DistributedSampler, RandomSampler\n\n\n"
                "def build(ds, shuffle, sampler):\n"
                "    return torch.utils.data.DataLoader(ds, shuffle=(False if sampler else shuffle), sampler=sampler)\n\n\n"
                "def shuffle_dataset(loader):\n    assert isinstance(loader.sampler, (RandomSampler, DistributedSampler))\n",
                "import torch\nfrom torch.utils.data import DistributedSampler, RandomSampler\n\n\n"
                "def build(ds, shuffle, sampler):\n"
                "    return torch.utils.data.DataLoader(ds, shuffle=(False if sampler else shuffle), sampler=sampler, "
                "generator=torch.Generator().manual_seed(torch.initial_seed()))\n\n\n"
                "def shuffle_dataset(loader):\n    assert isinstance(loader.sampler, (RandomSampler, DistributedSampler))\n"),
        # mindediting's factories: MindSpore refuses `shuffle=` beside a sampler a caller may pass
        Example("import mindspore.dataset as ds\n\n\ndef create(source, shuffle=None, sampler=None):\n"
                "    return ds.GeneratorDataset(source, [\"HR\"], sampler=sampler, shuffle=shuffle)\n",
                "import mindspore.dataset as ds\n\n\ndef create(source, shuffle=None, sampler=None):\n"
                "    return ds.GeneratorDataset(source, [\"HR\"], sampler=sampler, shuffle=False if sampler is None "
                "else shuffle)\n"),
        # llama-cookbook's LengthBasedBatchSampler: its `shuffle` gates the only draw
        Example("import random\n\nimport torch\n\n\nclass LengthSampler(torch.utils.data.BatchSampler):\n"
                "    def __init__(self, data, batch_size, shuffle=True):\n        self.batches = [[i] for i in data]\n"
                "        self.shuffle = shuffle\n\n    def __iter__(self):\n        if self.shuffle:\n"
                "            random.shuffle(self.batches)\n        yield from self.batches\n\n\n"
                "sampler = LengthSampler(range(8), 2, shuffle=mode == \"train\")\n",
                "import random\n\nimport torch\n\n\nclass LengthSampler(torch.utils.data.BatchSampler):\n"
                "    def __init__(self, data, batch_size, shuffle=True):\n        self.batches = [[i] for i in data]\n"
                "        self.shuffle = shuffle\n\n    def __iter__(self):\n        if self.shuffle:\n"
                "            random.shuffle(self.batches)\n        yield from self.batches\n\n\n"
                "sampler = LengthSampler(range(8), 2, shuffle=False)\n"),
    )

    def apply(self, unit: Unit) -> None:
        for finding, call in unit.sites_for(self.rule, lambda n: isinstance(n, cst.Call)):
            if _keeps_random_sampler(unit, call):
                rewrite = _seeded_shuffle(unit, call, finding.line)
            else:
                rewrite = self._plan(unit, call, finding.message) or _project_sampler(unit, finding)
            if rewrite is None or isinstance(rewrite, str):
                unit.note(finding.line, f"shuffling not turned off here: {rewrite or 'no deterministic replacement known'}")
            else:
                unit.edits.rewrite(call, rewrite)

    def _plan(self, unit: Unit, call: cst.Call, message: str):
        """The call's rewrite, why it is left alone, or None when no deterministic replacement is known."""
        qualified = unit.names.qualname(call.func)
        if qualified is None and message.startswith(LOADER_MESSAGE):  # yolov5's `loader = DataLoader if w else ...`
            qualified = "torch.utils.data.DataLoader"  # a name holding a loader class: the arguments are a loader's
        if qualified in catalogue.DEEPSPEED_TRAINING_DATA:
            return "DeepSpeed builds that loader; build a `DataLoader(..., shuffle=False)` yourself and leave " \
                   "`training_data` out"
        positions = catalogue.loader_positions(qualified)
        if positions is not None:
            return lambda c: nodes.set_argument(c, "shuffle", FALSE, positions.get("shuffle"))
        if qualified in catalogue.TORCH_DISTRIBUTED_SAMPLERS:
            return lambda c: nodes.set_argument(c, "shuffle", FALSE, catalogue.DISTRIBUTED_SAMPLER_SHUFFLE_POSITION)
        if qualified in catalogue.MINDSPORE_SHUFFLE_SAMPLERS:
            position = catalogue.MINDSPORE_SHUFFLE_SAMPLERS[qualified][0]
            return lambda c: nodes.set_argument(c, "shuffle", FALSE, position)
        if qualified in catalogue.SAMPLER_TWINS:
            return self._twin(unit, call, qualified)
        if qualified in catalogue.TORCH_RANDOM_SAMPLERS and qualified.endswith(".SubsetRandomSampler"):
            return self._indices(unit, call, qualified)
        if qualified in catalogue.WEBDATASET_SHUFFLES:
            return "drop the stage, or give it `rng=random.Random(seed)`"
        if qualified in catalogue.MINDSPORE_ZOO_SHUFFLING_LOADERS:
            position = catalogue.MINDSPORE_ZOO_SHUFFLING_LOADERS[qualified][0]
            return lambda c: nodes.set_argument(c, "shuffle", FALSE, position)
        if qualified is not None and catalogue.is_mindspore_dataset_class(qualified):
            return _unshuffled_dataset(call)
        if qualified is None and isinstance(call.func, cst.Attribute) and call.func.attr.value == "shuffle":
            return lambda c: c.func.value
        if qualified is None and isinstance(call.func, cst.Attribute) and call.func.attr.value == "train_test_split":
            return "pass `seed=` (or `shuffle=False`)"
        return None

    @staticmethod
    def _indices(unit: Unit, call: cst.Call, qualified: str):
        """`sampler=SubsetRandomSampler(indices)` -> `sampler=list(indices)`, elsewhere a note."""
        parent = unit.structure.parent.get(call)
        indices = nodes.argument(call, "indices", 0)
        if (not isinstance(parent, cst.Arg) or parent.keyword is None or parent.keyword.value != "sampler"
                or indices is None or nodes.has_star(call) or "list" in unit.names.bound):
            return SUBSET_NOTE
        if isinstance(call.func, cst.Name):
            unit.edits.drop_import_if_unused(qualified, call.func.value)

        def rewrite(updated: cst.Call) -> cst.Call:
            arg = nodes.argument(updated, "indices", 0)
            return updated.with_changes(func=cst.Name("list"), args=[arg.with_changes(
                keyword=None, equal=cst.MaybeSentinel.DEFAULT, comma=cst.MaybeSentinel.DEFAULT)])

        return rewrite

    @staticmethod
    def _twin(unit: Unit, call: cst.Call, qualified: str):
        twin = catalogue.SAMPLER_TWINS[qualified]
        module, _, name = twin.rpartition(".")
        if isinstance(call.func, cst.Attribute):
            func = call.func.with_changes(attr=cst.Name(name))
        else:
            unit.edits.swap_import(qualified, call.func.value, module, name)
            unit.edits.drop_import_if_unused(qualified, call.func.value)
            func = cst.Name(name)
        keeps = TWIN_KEEPS.get(twin, ())

        def rewrite(updated: cst.Call) -> cst.Call:
            args = []
            for keyword, position in keeps:
                arg = nodes.argument(updated, keyword, position)
                if arg is not None:
                    args.append(arg.with_changes(comma=cst.MaybeSentinel.DEFAULT))
            return updated.with_changes(func=func, args=args)

        return rewrite


def _unshuffled_dataset(call: cst.Call):
    """`shuffle=False` for a MindSpore dataset; beside a `sampler=` that may be None (a parameter defaulting to None)
    only while it is: MindSpore refuses `shuffle=` beside a sampler, so with one the call keeps what it gave."""
    sampler = next((arg.value for name in catalogue.MINDSPORE_SAMPLER_KEYWORDS if (arg := nodes.argument(call, name))
                    is not None and not (isinstance(arg.value, cst.Name) and arg.value.value == "None")), None)
    if sampler is None:
        return lambda c: nodes.set_argument(c, "shuffle", FALSE)
    given = nodes.argument(call, "shuffle")
    kept = _grouped(given.value) if given is not None else "None"
    value = nodes.expression(f"False if {_grouped(sampler)} is None else {kept}")
    return lambda c: nodes.set_argument(c, "shuffle", value)


def _grouped(node: cst.BaseExpression) -> str:
    """The code of an expression, in parentheses unless a name, an attribute or a literal."""
    code = nodes.code_of(node)
    return code if isinstance(node, (cst.Name, cst.Attribute, cst.BaseNumber, cst.BaseString)) else f"({code})"


def _keeps_random_sampler(unit: Unit, call: cst.Call) -> bool:
    """Whether `call` is a torch loader or `RandomSampler` in a file that type-checks against `RandomSampler`."""
    qualified = unit.names.qualname(call.func)
    return (catalogue.loader_positions(qualified) is not None
            or catalogue.SAMPLER_TWINS.get(qualified) == TORCH_SEQUENTIAL) \
        and _checks_random_sampler(unit)


def _checks_random_sampler(unit: Unit) -> bool:
    """Whether the file type-checks something against torch's `RandomSampler`: `isinstance(x, RandomSampler)` (or a
    tuple holding it), `type(x) is RandomSampler`."""
    checked = []
    for node in ast.walk(unit.tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "isinstance" \
                and len(node.args) == 2:
            kinds = node.args[1]
            checked.extend(kinds.elts if isinstance(kinds, ast.Tuple) else [kinds])
        elif isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], (ast.Is, ast.Eq)):
            checked.extend(node.comparators)
    return any(catalogue.SAMPLER_TWINS.get(unit.ctx.imports.resolve(kind) or "") == TORCH_SEQUENTIAL
               for kind in checked if isinstance(kind, (ast.Name, ast.Attribute)))


def _seeded_shuffle(unit: Unit, call: cst.Call, line: int):
    """A seeded `generator=` for a loader or `RandomSampler` that must keep shuffling; why not, when it has one."""
    qualified = unit.names.qualname(call.func)
    position = (catalogue.loader_positions(qualified) or RANDOM_SAMPLER_POSITIONS).get("generator")
    if nodes.argument(call, "generator", position) is not None or nodes.has_star(call):
        return "the file checks for a `RandomSampler`, which `shuffle=False` would take away; its `generator=` is kept"
    unit.note(line, KEPT_RANDOM)
    torch = unit.module_name("torch")
    seeded = nodes.expression(f"{torch}.Generator().manual_seed({torch}.initial_seed())")
    return lambda c: nodes.set_argument(c, "generator", seeded, position)


def _project_sampler(unit: Unit, finding):
    """`shuffle=False` for a sampler class of the project whose `shuffle` parameter gates its draw from a global
    generator (its `__iter__` draws with the call's arguments, and nothing once `shuffle` is False); None else."""
    built = next((node for node in ast.walk(unit.tree) if isinstance(node, ast.Call)
                  and unit.span(node) == span_of(finding)), None)
    found = project_class(unit, built) if built is not None else None
    if found is None or any(isinstance(arg, ast.Starred) for arg in built.args):
        return None
    cls, module = found
    methods = {item.name: item for item in cls.body if isinstance(item, FUNCTION_TYPES)}
    init, iterate = methods.get("__init__"), methods.get("__iter__")
    if init is None or "shuffle" not in _parameters(init):
        return None
    position = _parameters(init)["shuffle"][0]
    imports = unit.ctx.imports if module is None else module.imports
    functions = {node.name: node for node in (unit.tree if module is None else module.tree).body
                 if isinstance(node, FUNCTION_TYPES)}
    given = position is not None and position < len(built.args)  # by position: replaced there
    unshuffled = ast.Call(func=built.func, args=[ast.Constant(False) if index == position else arg
                                                 for index, arg in enumerate(built.args)],
                          keywords=[*(keyword for keyword in built.keywords if keyword.arg != "shuffle"),
                                    *([] if given else [ast.keyword(arg="shuffle", value=ast.Constant(False))])])
    if (_global_draw(iterate, imports, functions, _attribute_lookup(cls, init, built)) is None
            or _global_draw(iterate, imports, functions, _attribute_lookup(cls, init, unshuffled)) is not None):
        return None
    return lambda c: nodes.set_argument(c, "shuffle", FALSE, position)

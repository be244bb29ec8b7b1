"""MSP304 unsorted-file-list: a dataset built from a directory listing in the file system's order."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

from msprobe_rewriter import catalogue, project
from msprobe_rewriter.context import FUNCTION_TYPES, SCOPE_TYPES, walk_scope
from msprobe_rewriter.cpu_code import CpuCode, is_data_base, is_model_base
from msprobe_rewriter.rules.base import Invalid, Rule

LISTING_FUNCTIONS = frozenset({"os.listdir", "os.scandir", "os.walk", "glob.glob", "glob.iglob"})
# pathlib.Path's listing methods (fsspec's and tf.io.gfile's `glob` do not sort either).
LISTING_METHODS = frozenset({"glob", "rglob", "iterdir"})
# Paths into an archive: they list its members in the order the archive stores them, the same on every machine.
ARCHIVE_PATHS = frozenset({"zipfile.Path", "zipfile._path.Path"})
LISTING_NAMES = LISTING_METHODS | {name.rpartition(".")[2] for name in LISTING_FUNCTIONS}
LISTING_MESSAGE = ("`{call}` lists files in the file system's order, which differs between machines and copies of the "
                   "data, so sample i is another file on the other side: {fix}")
# Consumers for which the order of what they are given does not matter.
ORDER_FREE = frozenset({"sorted", "set", "frozenset", "len", "any", "all", "max", "min", "sum", "bool", "Counter",
                        "natsorted", "os_sorted", "humansorted", "realsorted", "unique", "sort", "next"})
# Calls that hand on what they are given in its order.
ORDER_KEEPING = frozenset({"list", "tuple", "filter", "map", "enumerate", "reversed", "iter", "chain", "zip",
                           "array", "asarray", "Path", "join", "dumps"})
# Writing to a file: a manifest or file list that training reads later keeps the listing's order (mindaudio's
# conv_tasnet preprocess.py `json.dump`s each folder's listing, and training pairs the lists by position).
WRITE_FUNCTIONS = frozenset({"json.dump", "yaml.dump", "yaml.safe_dump", "pickle.dump", "numpy.save", "numpy.savetxt",
                             "torch.save"})
WRITE_METHODS = frozenset({"write", "writelines", "writerow", "writerows", "write_text"})
# Calls that pick by position: which items they choose depends on the order they are given.
PICKS = frozenset({"shuffle", "permutation", "sample", "choice", "choices", "train_test_split", "random_split",
                   "array_split"})
ACCUMULATES = frozenset({"append", "extend", "insert", "appendleft"})
# Functions that build a list of data: `get_image_paths`, `make_dataset`, `list_files` (not a checkpoint's).
DATA_FUNCTION = re.compile(r"data|file|path|image|img|sample|video|audio|wav|shard|record|clip|frame|annotation",
                           re.IGNORECASE)
NOT_DATA_FUNCTION = re.compile(r"ckpt|checkpoint|model|weight|log|output|save|resume|config|cfg", re.IGNORECASE)
DATA_CALL = re.compile(r"dataset|loader", re.IGNORECASE)
MAX_DEPTH = 4

FREE, ORDERED, DATA = 0, 1, 2  # what the order of a listing reaches: nothing, a list, the data


class UnsortedFileList(Rule):
    code = "MSP304"
    name = "unsorted-file-list"
    severity = "warning"
    frameworks = ("pytorch", "mindspore")
    fixable = True
    message = ("a directory listing comes in the file system's order, which differs between machines and copies of "
               "the data: sort it where it feeds data")
    summary = ("Flags `os.listdir`, `os.scandir`, `os.walk`, `glob.glob`/`glob.iglob` and pathlib's "
               "`glob`/`rglob`/`iterdir` whose order reaches the data: a listing kept by a dataset class (derived "
               "from torch's data classes, or with a `__getitem__`), one that is shuffled, sampled or split by "
               "position (`random.shuffle(files)`, `files[:n_train]`, `train_test_split(files)`), one handed to a "
               "dataset or loader, one written to a file (a manifest that training reads later: `json.dump(files, "
               "f)`, `np.save`, `f.write(name)` per entry to a file opened before the loop; mindaudio's conv_tasnet "
               "preprocess.py; not `sys.stdout.write`, nor a file of each entry's own), and one returned by a function that builds a file list (`get_image_paths`, "
               "`make_dataset`) or by any function one of whose calls keeps it in a dataset class or hands it to the "
               "data (judged per call: mindediting's `search(...)`, sorted by one caller, kept unsorted by another). A listing that is sorted (`sorted(...)`, `files.sort()` (not another list sorted in a loop over it), also later in the "
               "function, or the list collected from it, or a list it is added to: `files.extend(...)`), or only counted, tested or searched (`len`, `in`, "
               "`set`, `if os.listdir(d)`), is not flagged, nor one a function returns when every call of it in the file (by name or "
               "`getattr(self, f\"get_{kind}_files\")()`, none named by an importer; its own recursive calls aside) uses the "
               "result so, also through "
               "an attribute set with `setattr` and read with `getattr` (LAVIS's datasets), nor is a path into a zip archive (`zipfile.Path(zf).iterdir()`: the archive's stored order); `with os.scandir(d) as entries:` is followed through `entries`.")
    why = ("Directory listings come in the order the file system stores its entries: on ext4 a hash order, on other "
           "file systems creation order, and it changes when a dataset is copied to another machine. Index i of a "
           "dataset built from it is then another file, so a seeded shuffle, a fixed `shuffle=False` order and a "
           "train/validation split by position all select different samples on the GPU machine and on the NPU "
           "machine, and the two runs differ from the first batch.")
    fix = ("Sort every listing that feeds data: `sorted(os.listdir(root))`, `sorted(glob.glob(pattern))`, "
           "`sorted(path.rglob('*.jpg'))`; in an `os.walk` loop sort `dirs` in place and the files you take "
           "(`dirs.sort()`, `for name in sorted(files)`), or sort the collected list once at the end.")
    valid = (
        """\
import glob
import os

import torch


class Images(torch.utils.data.Dataset):
    def __init__(self, root):
        self.files = sorted(os.listdir(root))
        self.masks = glob.glob(os.path.join(root, "*.png"))
        self.masks.sort()
        self.count = len(os.listdir(root))

    def __getitem__(self, index):
        return self.files[index]
""",
        # Only tested or searched: the order does not matter.
        """\
import os

import torch


def resume(path):
    if not os.listdir(path):
        return None
    if "last.pt" in os.listdir(path):
        return torch.load(os.path.join(path, "last.pt"))
    return max(os.listdir(path))
""",
        # Collected in a walk, then sorted once.
        """\
import os

import torch


def get_image_paths(root):
    paths = []
    for folder, _, names in os.walk(root):
        for name in names:
            paths.append(os.path.join(folder, name))
    return sorted(paths)
""",
        # A path into a zip archive lists the members in the archive's stored order (audiocraft's cache).
        """\
import zipfile

import torch


class Cached(torch.utils.data.Dataset):
    def __init__(self, archive):
        root = zipfile.Path(zipfile.ZipFile(archive))
        self.items = list(root.iterdir())

    def __getitem__(self, index):
        return self.items[index]
""",
        # dinov2's ImageNet22k: a scandir bound by `with`, collected, then sorted.
        """\
import os

import torch


class Shards(torch.utils.data.Dataset):
    def __init__(self, path):
        found = []
        with os.scandir(path) as entries:
            for entry in entries:
                found.append(entry.name)
        self.ids = sorted(found)

    def __getitem__(self, index):
        return self.ids[index]
""",
        # A manifest written sorted; a listing only shown, or written a file per entry.
        """\
import json
import os
import sys

import torch


def write_manifest(root, out_path):
    with open(out_path, "w") as f:
        json.dump(sorted(os.listdir(root)), f)
    for name in os.listdir(root):
        sys.stdout.write(name + "\\n")
        with open(os.path.join(out_path, name + ".txt"), "w") as label:
            label.write(name)
""",
        # LAVIS's datasets: each listing is only intersected as a set to filter the annotations, whose order rules.
        """\
import os

import torch


class Clips(torch.utils.data.Dataset):
    def __init__(self, annotation, modalities):
        for modality in modalities:
            setattr(self, f"existing_{modality}", getattr(self, f"get_existing_{modality}_annotations")())
        ids = set.intersection(*[set(getattr(self, f"existing_{modality}")) for modality in modalities])
        self.annotation = [ann for ann in annotation if ann["id"] in ids]

    def get_existing_audio_annotations(self):
        return [name.split(".")[0] for name in os.listdir(self.audio_root)]

    def __getitem__(self, index):
        return self.annotation[index]
""",
        # Every call of a helper walking the folders keeps a sorted list (mindediting's imagenet.py, its `img_list`).
        """\
import os


def search(root):
    found = []
    for item in os.listdir(root):
        path = os.path.join(root, item)
        if os.path.isdir(path):
            found.extend(search(path))
        else:
            found.append(path)
    return found


class Images:
    def __init__(self, root):
        self.images = search(os.path.join(root, "train"))
        self.images.extend(search(os.path.join(root, "val")))
        self.images = sorted(self.images)

    def __getitem__(self, index):
        return self.images[index]
""",
    )
    invalid = (
        # ... but one call keeps the helper's list unsorted in a dataset (its `derain_img_list`): judged per call.
        Invalid("""\
import os
import random


def search(root):
    found = []
    for item in os.listdir(root):
        path = os.path.join(root, item)
        if os.path.isdir(path):
            found.extend(search(path))
        else:
            found.append(path)
    return found


class Images:
    def __init__(self, root):
        self.images = search(os.path.join(root, "train"))
        self.images.extend(search(os.path.join(root, "val")))
        self.images = sorted(self.images)
        self.rain = search(os.path.join(root, "rain"))

    def __getitem__(self, index):
        return self.images[index], self.rain[random.randint(0, len(self.rain) - 1)]
""", lines=(7,)),
        # The list a method returns is the one a sample picks from (LAVIS's ShapenetCaptionDataset).
        Invalid("""\
import os
import random

import torch


class Views(torch.utils.data.Dataset):
    def get_images_path(self, key):
        return [os.path.join(self.root, key, name) for name in os.listdir(os.path.join(self.root, key))]

    def __getitem__(self, index):
        paths = getattr(self, "get_images_path")(self.keys[index])
        return random.choice(paths)
""", lines=(9,)),
        Invalid("""\
import os

import torch


def list_image_files(path):
    with os.scandir(path) as entries:
        return [entry.path for entry in entries if entry.is_file()]
""", lines=(7,)),
        Invalid("""\
import os

from torch.utils.data import Dataset


class Frames(Dataset):
    def __init__(self, root):
        self.items = [os.path.join(root, f) for f in os.listdir(root) if f.endswith(".jpg")]

    def __getitem__(self, index):
        return self.items[index]
""", lines=(8,)),
        Invalid("""\
import glob
import random

import torch

files = glob.glob("data/*.npy")
random.seed(0)
random.shuffle(files)
train_files, val_files = files[:900], files[900:]
""", lines=(6,)),
        Invalid("""\
import os
from pathlib import Path

import mindspore.dataset as ds


def list_audio_files(root):
    found = []
    for folder, _, names in os.walk(root):
        for name in names:
            found.append(os.path.join(folder, name))
    return found


clips = ds.GeneratorDataset(list(Path("clips").rglob("*.wav")), ["path"], shuffle=False)
""", lines=(9, 15)),
        # mindediting's GoPro: each folder's frames are sorted, the folders themselves are not.
        Invalid("""\
import os

import torch


class Videos(torch.utils.data.Dataset):
    def __init__(self, root):
        folders = [os.path.join(root, name) for name in os.listdir(root)]
        self.frames = []
        for folder in folders:
            names = os.listdir(folder)
            names.sort()
            for name in names:
                self.frames.append(os.path.join(folder, name))

    def __getitem__(self, index):
        return self.frames[index]
""", lines=(8,)),
        # Manifests written in the listing's order (mindaudio's conv_tasnet preprocess.py: training pairs the
        # mixture and source lists by position).
        Invalid("""\
import json
import os

import mindspore


def preprocess_one_dir(in_dir, out_path):
    infos = []
    wavs = os.listdir(in_dir)
    for wav in wavs:
        infos.append((os.path.join(in_dir, wav), os.path.getsize(os.path.join(in_dir, wav))))
    with open(out_path, "w") as f:
        json.dump(infos, f)


def write_list(root, out_path):
    with open(out_path, "w") as f:
        for name in os.listdir(root):
            f.write(name + "\\n")
""", lines=(9, 18)),
        # Bound in one branch, emptied in the other: the loop after both still reads the listing's order
        # (minddiffusion's Taichu-GLIDE image_datasets.py).
        Invalid("""\
import os

import torch


def getfiles(root):
    return [name for name in os.listdir(root)]


def collect(root, listed):
    if listed:
        files = getfiles(root)
    else:
        files = []
    return [os.path.join(root, name) for name in files]


loader = torch.utils.data.DataLoader(collect("data", True))
""", lines=(7,)),
    )

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._cpu = CpuCode(ctx)
        self._parents: dict[int, dict[int, ast.AST]] = {}  # id(scope) -> id(node) -> parent, built when needed
        self._datasets: frozenset[str] | None = None

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        if self.ctx.callee_name(node) not in LISTING_NAMES:
            return
        qualified = self.ctx.call_qualname(node)
        if qualified is not None:
            if qualified not in LISTING_FUNCTIONS:
                return
            label = qualified
        elif isinstance(func, ast.Attribute) and func.attr in LISTING_METHODS:
            if self._archive_path(func.value):
                return
            module = self.ctx.imports.resolve_any(func)  # `glob.glob`: the module, not a Path's method
            label = module if module in LISTING_FUNCTIONS else f"Path.{func.attr}"
        else:
            return
        reach = self._reach(node, self._scope(), 0)
        if reach == DATA or reach == ORDERED and self._in_dataset_class():
            managed = bool(self.ctx.ancestors) and isinstance(self.ctx.ancestors[-1], ast.withitem)
            if label == "os.walk":
                fix = ("sort `dirs` in place and the files taken (`dirs.sort()`, `sorted(files)`), or sort the list "
                       "collected")
            elif managed:  # a sorted list is no context manager: the entries are sorted where they are read
                fix = "sort the entries where they are read (`sorted(entries, key=lambda entry: entry.name)`)"
            else:
                fix = f"wrap it in `sorted(...)`{_scandir_key(label)}"
            self.report(node, LISTING_MESSAGE.format(call=label, fix=fix), fixable=label != "os.walk" and not managed)

    # --- where the listing's order goes -------------------------------------------------------
    def _reach(self, node: ast.AST, scope: ast.AST, depth: int) -> int:
        """Whether the order of the value `node` computes reaches nothing, a kept list, or the data."""
        parents = self._parents_of(scope)
        child = node
        while True:
            parent = parents.get(id(child))
            if parent is None or isinstance(parent, ast.Expr):
                return FREE
            if isinstance(parent, ast.Call):
                if child is parent.func:
                    return ORDERED
                callee = self.ctx.callee_name(parent)
                if callee == "setattr" and len(parent.args) == 3 and child is parent.args[2]:
                    return self._set_attribute_reach(parent, depth)
                if callee in ORDER_FREE:
                    return FREE
                if callee in PICKS or self._builds_data(parent, callee) or self._writes_file(parent):
                    return DATA
                receiver = _key(parent.func.value) if isinstance(parent.func, ast.Attribute) else None
                if callee in ACCUMULATES and receiver is not None:  # `files.extend(listing)`: where `files` goes
                    return self._name_reach(receiver, parent, scope, depth)
                if callee not in ORDER_KEEPING:
                    return ORDERED
            elif isinstance(parent, ast.comprehension):
                if child is not parent.iter:
                    return FREE
                comprehension = parents.get(id(parent))
                if isinstance(comprehension, (ast.SetComp, ast.DictComp)):
                    return FREE
                child = comprehension
                continue
            elif isinstance(parent, ast.Compare):
                return FREE if child is not parent.left and all(
                    isinstance(op, (ast.In, ast.NotIn)) for op in parent.ops) else ORDERED
            elif isinstance(parent, (ast.If, ast.While, ast.IfExp, ast.Assert)) and child is parent.test:
                return FREE
            elif isinstance(parent, ast.UnaryOp) and isinstance(parent.op, ast.Not):
                return FREE
            elif isinstance(parent, ast.Subscript):  # a slice splits by position; `[0]` takes the one file found
                return DATA if isinstance(parent.slice, ast.Slice) else FREE
            elif isinstance(parent, (ast.For, ast.AsyncFor)):
                return self._loop_reach(parent, scope, depth) if child is parent.iter else FREE
            elif isinstance(parent, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                return self._assigned_reach(parent, scope, depth)
            elif isinstance(parent, ast.withitem):  # `with os.scandir(path) as entries:`
                key = _key(parent.optional_vars) if parent.optional_vars is not None else None
                return self._name_reach(key, parent.optional_vars, scope, depth) if key is not None else (
                    FREE if parent.optional_vars is None else ORDERED)
            elif isinstance(parent, (ast.Return, ast.Yield, ast.YieldFrom)):
                return self._result_reach(scope, depth)
            elif not isinstance(parent, (ast.Starred, ast.BinOp, ast.BoolOp, ast.List, ast.Tuple, ast.keyword,
                                         ast.ListComp, ast.GeneratorExp, ast.IfExp)):
                return ORDERED
            child = parent

    def _assigned_reach(self, assign: ast.Assign | ast.AnnAssign | ast.AugAssign, scope: ast.AST,
                        depth: int) -> int:
        targets = assign.targets if isinstance(assign, ast.Assign) else [assign.target]
        key = _key(targets[0]) if len(targets) == 1 else None
        return self._name_reach(key, assign, scope, depth) if key is not None else ORDERED

    def _loop_reach(self, loop: ast.For | ast.AsyncFor, scope: ast.AST, depth: int) -> int:
        """A loop over a listing: its order reaches what the loop collects (or yields)."""
        reach = FREE
        targets = {name.id for name in ast.walk(loop.target) if isinstance(name, ast.Name)}
        body = [n for statement in loop.body for n in walk_scope(statement)]
        bound = targets | {n.id for n in body if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
        for node in body:
            if isinstance(node, (ast.Yield, ast.YieldFrom)):
                reach = max(reach, DATA if self._builds_file_list(scope) else ORDERED)
            elif isinstance(node, ast.Call) and self._writes_file(node) and _shared_file(node, bound) and any(
                    isinstance(n, ast.Name) and n.id in bound for arg in node.args for n in ast.walk(arg)):
                reach = DATA  # `f.write(name + "\n")` per entry: the file lists them in the loop's order
            elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "sort"
                  and isinstance(node.func.value, ast.Name) and node.func.value.id in targets):
                return FREE  # `dirs.sort()` in an os.walk loop: the author orders the walk (not another list)
            elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ACCUMULATES
                  or isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Add)  # `files += [...]` too
                  and isinstance(node.value, (ast.List, ast.ListComp, ast.Tuple))):
                key = _key(node.func.value if isinstance(node, ast.Call) else node.target)
                reach = max(reach, self._name_reach(key, loop, scope, depth) if key is not None else ORDERED)
        return reach

    def _name_reach(self, name: str, binding: ast.AST, scope: ast.AST, depth: int) -> int:
        """Where the order of a list bound to `name` (`files`, `self.files`; by or in `binding`, or by a `with`
        item's target) goes: its later uses in the scope, up to the next assignment of the name."""
        if depth >= MAX_DEPTH:
            return ORDERED
        end = _end(binding)
        parents = self._parents_of(scope)
        blocks = {_block(statement, parents) for statement in _statements_around(binding, parents)}
        uses, rebound = [], None
        for node in walk_scope(scope):
            if isinstance(node, (ast.Name, ast.Attribute)) and _start(node) > end and _key(node) == name:
                if isinstance(node.ctx, ast.Store):  # uses up to the end of the statement that binds it anew count
                    statement = next(_statements_around(node, parents))
                    if _block(statement, parents) not in blocks:
                        continue  # in another branch, or one that may not run (minddiffusion's `else: files = []`)
                    statement_end = _end(statement)
                    rebound = statement_end if rebound is None else min(rebound, statement_end)
                else:
                    uses.append(node)
        reach = ORDERED if "." in name and rebound is None else FREE  # an attribute lives on after the function
        for use in uses:
            if rebound is not None and _start(use) > rebound:
                continue
            parent = parents.get(id(use))
            if isinstance(parent, ast.Attribute) and parent.attr == "sort":
                return FREE
            if isinstance(parent, ast.Attribute) and parent.attr in ACCUMULATES:
                continue  # `files.extend(more)`: the list grows; where its order goes, its other uses say
            reach = max(reach, self._reach(use, scope, depth + 1))
        return reach

    def _result_reach(self, function: ast.AST, depth: int) -> int:
        """Where a returned listing goes: nowhere when every call of the function in this file uses it order-free and
        no importer names it (LAVIS's `get_existing_audio_annotations()`, called as `getattr(self,
        f'get_existing_{modality}_annotations')()` and read only as a set), or when it is a nested function never
        named; to the data when one call hands it to the data or keeps it in a dataset class (judged per call:
        mindediting's `self.derain_img_list = search(...)`, whose other call's list is sorted), or when the function
        builds a file list."""
        fallback = DATA if self._builds_file_list(function) else ORDERED
        if not isinstance(function, FUNCTION_TYPES) or depth >= MAX_DEPTH or self._named_by_importers(function.name):
            return fallback
        calls = self._uses(function.name, calls=True)
        nested = any(isinstance(node, FUNCTION_TYPES) and function in node.body for node in ast.walk(self.ctx.tree))
        if calls is not None:
            calls = [(call, scope) for call, scope in calls if scope is not function]  # recursion returns it again
        if calls is None or not calls and not nested:
            return fallback
        reaches = [self._reach(call, scope, depth + 1) for call, scope in calls]
        if any(reach == DATA or reach == ORDERED and self._method_of_dataset(scope)
               for reach, (_, scope) in zip(reaches, calls, strict=True)):
            return DATA  # one call keeps it in a dataset (mindediting's imagenet.py sorts one `search(...)`, not another)
        return FREE if all(reach == FREE for reach in reaches) else fallback

    def _set_attribute_reach(self, call: ast.Call, depth: int) -> int:
        """`setattr(self, f"existing_{modality}_annotation", files)`: the order reaches what the file's reads of the
        attribute (`getattr(self, f"existing_{modality}_annotation")`, `self.existing_audio_annotation`) reach, when
        no importer names it."""
        spelling = _spelling(call.args[1])
        if spelling is None or depth >= MAX_DEPTH or self._named_by_importers(spelling):
            return ORDERED
        reads = self._uses(spelling, calls=False)
        return ORDERED if reads is None else max((self._reach(read, scope, depth + 1) for read, scope in reads),
                                                 default=FREE)

    def _uses(self, spelling: str, calls: bool) -> list[tuple[ast.AST, ast.AST]] | None:
        """Each use of a name `spelling` can spell (`obj.name`, `name`, `getattr(obj, f"...")`) in the file, with its
        scope: with `calls`, the calls of it (`name(...)`, `getattr(obj, f"...")(...)`), or None when it is named
        other than in a call."""
        found = []
        for scope in [self.ctx.tree, *(node for node in ast.walk(self.ctx.tree) if isinstance(node, SCOPE_TYPES))]:
            parents = self._parents_of(scope)
            for node in walk_scope(scope):
                if isinstance(node, ast.Call) and self.ctx.callee_name(node) == "getattr" and len(node.args) == 2:
                    named = _spelling(node.args[1])
                elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
                    named = node.attr
                else:
                    named = node.id if isinstance(node, ast.Name) and calls else None
                if named is None or not _agree(named, spelling):
                    continue
                parent = parents.get(id(node))
                if not calls:
                    found.append((node, scope))
                elif isinstance(parent, ast.Call) and parent.func is node:
                    found.append((parent, scope))
                else:
                    return None
        return found

    def _named_by_importers(self, spelling: str) -> bool:
        for importer in project.importers(self.ctx.path):
            module = project.load(Path(importer))
            if module is not None and any(isinstance(node, ast.Attribute) and _agree(node.attr, spelling)
                                          or isinstance(node, ast.Name) and _agree(node.id, spelling)
                                          for node in ast.walk(module.tree)):
                return True
        return False

    # --- what counts as data ------------------------------------------------------------------
    def _builds_data(self, call: ast.Call, callee: str | None) -> bool:
        """A loader or dataset built from what it is given: torch's `DataLoader`, a MindSpore dataset, a Hugging
        Face `load_dataset(data_files=...)`, the file's dataset classes, anything named for datasets."""
        qualified = self.ctx.call_qualname(call) or ""
        return (catalogue.loader_positions(qualified) is not None or catalogue.is_mindspore_dataset_class(qualified)
                or qualified.startswith("datasets.") or callee in self._dataset_classes()
                or callee is not None and DATA_CALL.search(callee) is not None)

    def _writes_file(self, call: ast.Call) -> bool:
        """`json.dump(items, f)`, `np.save(path, items)`, or a write method of a local object (`f.write(...)`,
        `writer.writerow(...)`; not `sys.stdout.write`, which only shows it)."""
        qualified = self.ctx.imports.resolve_any(call.func)
        return qualified in WRITE_FUNCTIONS or qualified is None and isinstance(call.func, ast.Attribute) \
            and call.func.attr in WRITE_METHODS

    def _in_dataset_class(self) -> bool:
        return any(isinstance(node, ast.ClassDef) and node.name in self._dataset_classes()
                   for node in self.ctx.ancestors)

    def _method_of_dataset(self, scope: ast.AST) -> bool:
        """Whether `scope` is a method of one of the file's dataset classes."""
        return any(isinstance(node, ast.ClassDef) and node.name in self._dataset_classes() and scope in node.body
                   for node in ast.walk(self.ctx.tree))

    def _dataset_classes(self) -> frozenset[str]:
        """The file's dataset classes: derived from torch's data classes, or not a module and indexable (read once)."""
        if self._datasets is None:
            models = self._cpu.derived_classes("model", is_model_base)
            indexable = {node.name for node in ast.walk(self.ctx.tree) if isinstance(node, ast.ClassDef) and any(
                isinstance(item, FUNCTION_TYPES) and item.name == "__getitem__" for item in node.body)}
            self._datasets = self._cpu.derived_classes("data", is_data_base) | frozenset(indexable - models)
        return self._datasets

    def _builds_file_list(self, scope: ast.AST) -> bool:
        return (isinstance(scope, FUNCTION_TYPES) and DATA_FUNCTION.search(scope.name) is not None
                and NOT_DATA_FUNCTION.search(scope.name) is None)

    def _archive_path(self, receiver: ast.expr) -> bool:
        """Whether a listing method's receiver is a path into an archive (`zipfile.Path(zf)`, or a name the scope
        binds only to one): its members come in the archive's stored order, and `sorted` would fail on them."""
        if isinstance(receiver, ast.Name):
            bound = [node.value for node in walk_scope(self._scope()) if isinstance(node, ast.Assign)
                     and any(isinstance(t, ast.Name) and t.id == receiver.id for t in node.targets)]
            return bool(bound) and all(self._archive_path(value) for value in bound)
        return isinstance(receiver, ast.Call) and self.ctx.imports.resolve_any(receiver.func) in ARCHIVE_PATHS

    def _scope(self) -> ast.AST:
        for node in reversed(self.ctx.ancestors):
            if isinstance(node, SCOPE_TYPES):
                return node
        return self.ctx.tree

    def _parents_of(self, scope: ast.AST) -> dict[int, ast.AST]:
        parents = self._parents.get(id(scope))
        if parents is None:
            parents = self._parents[id(scope)] = {}
            for node in [scope, *walk_scope(scope)]:
                if node is scope or not isinstance(node, SCOPE_TYPES):
                    for child in ast.iter_child_nodes(node):
                        parents[id(child)] = node
        return parents


def _key(node: ast.expr) -> str | None:
    """`files` for a name, `self.files` for an attribute of a name; None for anything else."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return f"{node.value.id}.{node.attr}"
    return None


def _shared_file(call: ast.Call, bound: set[str]) -> bool:
    """A write method called on a file opened before the loop (`outfile.write(line)`, `parts[i].write(line)`): not
    on one the loop opens per entry (mindyolo's voc2yolo.py writes each XML's labels to a file of its own)."""
    receiver = call.func.value if isinstance(call.func, ast.Attribute) else None
    while isinstance(receiver, (ast.Subscript, ast.Attribute)):
        receiver = receiver.value
    return isinstance(receiver, ast.Name) and receiver.id not in bound


def _spelling(node: ast.expr) -> str | None:
    """The name a string spells, with `{}` for each value an f-string puts in (`existing_{}_annotation`)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(part.value if isinstance(part, ast.Constant) else "{}" for part in node.values)
    return None


def _agree(first: str, second: str) -> bool:
    """Whether two spellings can name the same attribute (`get_existing_{}_annotations`, `get_existing_audio_...`)."""
    return any(re.fullmatch(".+".join(map(re.escape, one.split("{}"))), other) is not None
               for one, other in ((first, second), (second, first)))


def _statements_around(node: ast.AST, parents: dict[int, ast.AST]) -> Iterator[ast.stmt]:
    """The statement holding `node`, then the statements holding that one, outwards."""
    while id(node) in parents:
        if isinstance(node, ast.stmt):
            yield node
        node = parents[id(node)]


def _block(statement: ast.stmt, parents: dict[int, ast.AST]) -> tuple[int, str]:
    """The statement list `statement` sits in: its parent, and the field (`body`, `orelse`, ...) holding it."""
    parent = parents.get(id(statement))
    field = next((name for name, value in ast.iter_fields(parent) if isinstance(value, list) and any(
        item is statement for item in value)), "") if parent is not None else ""
    return id(parent), field


def _scandir_key(label: str) -> str:
    return " with `key=lambda entry: entry.name`" if label == "os.scandir" else ""


def _start(node: ast.AST) -> tuple[int, int]:
    return node.lineno, node.col_offset


def _end(node: ast.AST) -> tuple[int, int]:
    return node.end_lineno or node.lineno, node.end_col_offset or 0

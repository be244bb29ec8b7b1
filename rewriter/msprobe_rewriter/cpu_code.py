"""Code that runs on the CPU whatever the file does (weight initialisation, data loading), and the file's
classes derived from torch's (datasets, modules); shared by the rules that ask where code runs."""

from __future__ import annotations

import ast
import os
import re
import weakref
from collections.abc import Callable, Iterable
from pathlib import Path

from msprobe_rewriter import catalogue, project
from msprobe_rewriter.context import FUNCTION_TYPES, FileContext, argument, constant, own_nodes

# Weight initialisation (before the model is moved; also fill helpers named like `torch.nn.init`'s, such as
# `trunc_normal_`), data loading (datasets, collate functions, transforms). Not a NoisyNet layer's
# `reset_noise()`, which draws fresh noise into the model's buffers every training step.
INIT_NAME = re.compile(r"^(?!.*noise)(.*(^|_)(re_?)?(init|initiali[sz]e|reset)(_|$)|.*(normal|uniform)_$)",
                       re.IGNORECASE)
DATA_NAME = re.compile(r"collat|transform(?!er)|augment|dataset", re.IGNORECASE)
# Transform classes named as torchvision names its own (`RandomResize`, `RandomHorizontalFlip`), as the
# torchvision reference scripts and many projects write theirs.
TRANSFORM_CLASS = re.compile(r"Random[A-Z]")
# The first parameter of a transform's `__call__` (after self) names what it transforms: one sample
# (DINO's `GaussianBlur.__call__(self, img)`) or, in OpenMMLab's pipelines, its `results` dict.
SAMPLE_PARAMETER = re.compile(r"(img|im|image|pic|sample|clip|video|frame|audio|wav|waveform|spec|results)s?",
                              re.IGNORECASE)
# Library transforms that take a list of transforms to apply: the file's classes instantiated in one are transforms.
PIPELINE_CLASSES = frozenset({"Compose", "RandomApply", "RandomChoice", "RandomOrder"})
DATA_METHODS = frozenset({"__getitem__", "__getitems__", "__iter__", "__next__"})
# Code run for every sample or batch: a data class's item methods and a transform's call, functions named so.
ITEM_METHODS = DATA_METHODS | {"__call__"}
MODULE_CALLS = frozenset({"forward", "__call__"})
# A data class's methods that run for every sample, whatever library calls them: the item methods, OpenMMLab's
# `BaseTransform.transform`, detectron2's `Augmentation.get_transform`, a transform module's `forward`.
SAMPLE_METHODS = ITEM_METHODS | {"transform", "get_transform", "forward"}
# Where a script hands the data pipeline a function of its own to run on every sample or batch: these keywords
# (torchvision datasets, `DataLoader`), Hugging Face datasets' `with_transform`/`set_transform` and MindSpore's
# `map(operations=...)` (or its first argument).
HANDED_KEYWORDS = frozenset({"transform", "target_transform", "transforms", "collate_fn", "operations"})
HANDED_METHODS = frozenset({"with_transform", "set_transform"})
ITEM_NAME = re.compile(r"collat|transform(?!er)|augment", re.IGNORECASE)
# Functions that draw a picture (a random colour per box), not augment one: `vis_boxes(image)`, `plot_one_box`.
PICTURE_NAME = re.compile(r"(^|_)(vis|visuali[sz]e|draw|plot|show|render|display)(_|$)", re.IGNORECASE)
# Callable classes that score a model's output (torch-ngp's `CLIPLoss.__call__(self, images)`), not transform a sample.
SCORE_CLASS = re.compile(r"(Loss|Criterion|Metric)$")


def is_model_base(qualified: str) -> bool:
    return qualified.startswith(catalogue.TORCH_MODULE_PACKAGE + ".") or qualified in catalogue.LIGHTNING_MODULES


def is_data_base(qualified: str) -> bool:
    return qualified.startswith(catalogue.TORCH_DATA_PACKAGE + ".")


def is_torchvision_transform(qualified: str) -> bool:
    """A torchvision transform class (a module: its `forward` transforms a sample)."""
    return qualified.rpartition(".")[0] in catalogue.TORCHVISION_TRANSFORM_MODULES


class CpuCode:
    """One rule's view of where the visited code runs. `is_cpu_device` tells whether an expression is a
    CPU device (by default: `torch.device("cpu")` with a literal)."""

    def __init__(self, ctx: FileContext, is_cpu_device: Callable[[ast.expr], bool] | None = None,
                 importers: bool = True) -> None:
        self.ctx = ctx
        self.importers = importers  # whether the project files importing this one are read (see `_handed_in`)
        self.is_cpu_device = is_cpu_device or self._literal_cpu_device
        self._classes: dict[str, frozenset[str]] = {}  # per kind of class (or of method): names
        self._per_sample: dict[int, bool] = {}  # id(function) -> whether it processes one sample a call

    def here(self) -> bool:
        """Whether we are in code that runs on the CPU whatever the file does: weight initialisation, data
        loading (datasets, collate functions, transforms), or under `with torch.device("cpu")`. Names of
        data code do not count for an `nn.Module` or its methods (timm's `BilinearAttnTransform` is a layer)."""
        models = self.derived_classes("model", is_model_base)
        owner: ast.AST | None = None
        for node in self.ctx.ancestors:
            data_named = not (isinstance(owner, ast.ClassDef) and owner.name in models)
            if isinstance(node, FUNCTION_TYPES):
                if INIT_NAME.search(node.name) or data_named and (DATA_NAME.search(node.name)
                                                                   or node.name in DATA_METHODS):
                    return True
            elif isinstance(node, ast.ClassDef):
                if self._data_class(node):
                    return True
            elif isinstance(node, (ast.With, ast.AsyncWith)):
                if any(self.is_cpu_device(item.context_expr) for item in node.items):
                    return True
            owner = node
        return False

    def item_function(self) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
        """The outermost function around here that runs for every sample or batch, if any: `__getitem__`,
        `__iter__` or `__call__` of a dataset or transform class (derived from torch's data classes or named
        for data; not a sampler), or a function named for transforms, augmentation or collation (not a
        `test_...`); no other `nn.Module`'s than one named as torchvision names its transforms (the `forward` of
        torchvision's reference `RandomMixup`, a module applied in the collate function)."""
        models = self.derived_classes("model", is_model_base)
        samplers = self.derived_classes("sampler", lambda qualified: is_data_base(qualified)
                                        and qualified.endswith("Sampler"))
        owner: ast.AST | None = None
        for node in self.ctx.ancestors:
            if (isinstance(node, FUNCTION_TYPES) and isinstance(owner, ast.ClassDef) and node.name in MODULE_CALLS
                    and (owner.name in models and TRANSFORM_CLASS.match(owner.name)
                         or owner.name in self.derived_classes("torchvision transform", is_torchvision_transform))):
                return node
            if isinstance(node, FUNCTION_TYPES) and node.name in self._handed():
                return node
            if isinstance(node, FUNCTION_TYPES) and not (isinstance(owner, ast.ClassDef) and owner.name in models):
                data_class = isinstance(owner, ast.ClassDef) and self._data_class(owner)
                if data_class and (owner.name in samplers or owner.name.endswith("Sampler")):
                    return None  # a sampler's order: data-shuffle's concern (x-transformers' TextSamplerDataset is none)
                if (ITEM_NAME.search(node.name) and not node.name.startswith("test")  # a unit test's
                        or data_class and node.name in self._item_methods()):
                    return node
            owner = node
        return None

    def sample_function(self) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
        """The outermost function around here, outside any class, that processes one sample a call: its first
        parameter names a sample (WeNet's `spec_aug(sample)`, yolov5's `random_perspective(im, ...)`), or it
        yields for each sample of its first parameter (`for sample in data: ... yield sample`, a streaming
        pipeline's stage); not one that draws a picture (`vis_boxes(image)`) and not a `test_...`."""
        for node in self.ctx.ancestors:
            if isinstance(node, ast.ClassDef):
                return None  # a method: the data and transform classes' business (item_function)
            if isinstance(node, FUNCTION_TYPES):
                known = self._per_sample.get(id(node))
                if known is None:
                    known = self._per_sample[id(node)] = per_sample(node)
                if known:
                    return node
        return None

    def runs_per_sample(self, function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
        """Whether a module-level function is per-sample code by itself (named for transforms or collation,
        handed to the data pipeline, or taking a sample first): its own draws are reported there."""
        return (ITEM_NAME.search(function.name) is not None and not function.name.startswith("test")
                or function.name in self._handed() or per_sample(function))

    def _data_class(self, cls: ast.ClassDef) -> bool:
        """A dataset or transform class: derived from torch's data classes, or named for data (or `Random...`, as
        torchvision's transforms) or derived from such a class of the file (ultralytics' `Mosaic`, from its
        `BaseMixTransform`), and no module."""
        return (cls.name in self.derived_classes("data", is_data_base)
                or cls.name not in self.derived_classes("model", is_model_base)
                and cls.name in self._data_named_classes())

    def _data_named_classes(self) -> frozenset[str]:
        """The file's classes named for data or as torchvision's transforms, plain classes whose `__call__` takes a
        sample (`img`, ...), those whose objects the file or a project file importing it hands the data pipeline
        (see `pipeline_builds`), and the classes derived from them."""
        if "data-named" not in self._classes:
            classes = [node for node in ast.walk(self.ctx.tree) if isinstance(node, ast.ClassDef)]
            resolve = self.ctx.imports.resolve_any
            plain = _plain_classes(classes)
            found = {cls.name for cls in classes if DATA_NAME.search(cls.name) or TRANSFORM_CLASS.match(cls.name)
                     or _takes_a_sample(cls, resolve, plain) or _registered_as_data(cls)
                     or any(resolve(base) in catalogue.LIBRARY_TRANSFORM_BASES for base in cls.bases)}
            defined = {cls.name for cls in classes}
            found |= {call.func.id for call in pipeline_builds(self.ctx, lambda cls: _sample_methods(cls, found))
                      if isinstance(call.func, ast.Name) and call.func.id in defined}
            found |= self._handed_in(classes, found)
            grown = True
            while grown:  # and the classes derived from them, and the file's classes they derive from (the helpers
                before = len(found)  # mmpretrain's augmentations inherit, `random_disable`, draw)
                found |= {cls.name for cls in classes
                          if any(isinstance(base, ast.Name) and base.id in found for base in cls.bases)}
                found |= {base.id for cls in classes if cls.name in found for base in cls.bases
                          if isinstance(base, ast.Name) and base.id in plain}
                grown = len(found) > before
            self._classes["data-named"] = frozenset(found)
        return self._classes["data-named"]

    def _handed_in(self, classes: list[ast.ClassDef], found: set[str]) -> set[str]:
        """The file's classes with a per-sample method whose objects a project file importing this one hands its
        data pipeline (VideoMAE's datasets.py lists `GroupMultiScaleCrop(...)` of transforms.py in a `Compose`, and
        calls a `TubeMaskingGenerator` of masking_generator.py in its transform's `__call__`)."""
        candidates = {cls.name for cls in classes if cls.name not in found
                      and any(isinstance(item, FUNCTION_TYPES) and item.name in ITEM_METHODS for item in cls.body)}
        if not self.importers or not candidates:
            return set()
        own = os.path.abspath(self.ctx.path)
        return {name for importer in project.importers(self.ctx.path)
                for path, name in _sample_classes(Path(importer)) if path == own and name in candidates}

    def _handed(self) -> frozenset[str]:
        """Names of the file's functions it hands the data pipeline to run on every sample or batch
        (`DataLoader(collate_fn=pad_batch)`, `dataset.with_transform(preprocess_train)`, MindSpore's
        `data.map(operations=lambda x: audio_pipeline(x))`), whatever their names (read once per file)."""
        found = _HANDED.get(self.ctx)
        if found is None:
            found = _HANDED[self.ctx] = _handed_functions(self.ctx.tree)
        return found

    def _item_methods(self) -> frozenset[str]:
        """Names of the data classes' methods that run for every sample: SAMPLE_METHODS, and the methods of
        the file's data classes those call as `self.name(...)`, and so on (ultralytics' `BaseTransform.__call__`
        calls `get_params` and `apply_image`, which its subclasses override to draw)."""
        if "item methods" not in self._classes:
            methods: dict[str, list[ast.AST]] = {}
            for cls in ast.walk(self.ctx.tree):
                if isinstance(cls, ast.ClassDef) and self._data_class(cls):
                    for item in cls.body:
                        if isinstance(item, FUNCTION_TYPES):
                            methods.setdefault(item.name, []).append(item)
            reached = set(SAMPLE_METHODS)
            todo = [function for name in SAMPLE_METHODS for function in methods.get(name, ())]
            while todo:
                for node in ast.walk(todo.pop()):
                    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                            and isinstance(node.func.value, ast.Name) and node.func.value.id == "self"
                            and node.func.attr in methods and node.func.attr not in reached):
                        reached.add(node.func.attr)
                        todo.extend(methods[node.func.attr])
            self._classes["item methods"] = frozenset(reached)
        return self._classes["item methods"]

    def derived_classes(self, kind: str, is_base: Callable[[str], bool]) -> frozenset[str]:
        """Names of the file's classes that derive (directly or through each other) from a class `is_base`
        accepts by its qualified name; computed once per `kind`."""
        if kind not in self._classes:
            found: set[str] = set()
            for node in ast.walk(self.ctx.tree):
                if isinstance(node, ast.ClassDef) and any(self._derives(b, found, is_base) for b in node.bases):
                    found.add(node.name)
            self._classes[kind] = frozenset(found)
        return self._classes[kind]

    def _derives(self, base: ast.expr, local: set[str], is_base: Callable[[str], bool]) -> bool:
        qualified = self.ctx.qualname(base)
        if qualified is None:
            return isinstance(base, ast.Name) and base.id in local
        return is_base(qualified)

    def _literal_cpu_device(self, node: ast.expr) -> bool:
        if not (isinstance(node, ast.Call) and self.ctx.call_qualname(node) in catalogue.TORCH_DEVICE_CONSTRUCTORS):
            return False
        return catalogue.is_cpu_device(constant(argument(node, 0, "type")))


def per_sample(function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """`CpuCode.sample_function`'s test of one function."""
    params = [*function.args.posonlyargs, *function.args.args]
    if not params or PICTURE_NAME.search(function.name) or function.name.startswith("test"):
        return False
    first = params[0].arg
    if SAMPLE_PARAMETER.fullmatch(first):
        return True
    loops = [node for node in own_nodes(function) if isinstance(node, (ast.For, ast.AsyncFor))
             and isinstance(node.iter, ast.Name) and node.iter.id == first
             and isinstance(node.target, ast.Name) and SAMPLE_PARAMETER.fullmatch(node.target.id)]
    return any(isinstance(node, (ast.Yield, ast.YieldFrom)) for loop in loops for node in own_nodes(loop))


def pipeline_builds(ctx: FileContext, samples: Callable[[ast.ClassDef], Iterable[ast.AST]]) -> list[ast.Call]:
    """The calls building the objects a file hands its data pipeline to run for every sample: the items of a
    torchvision or MindSpore `Compose` (`RandomApply`, ...) list, the dataset of a `DataLoader`, the source of a
    MindSpore `GeneratorDataset` (yolov7's `LoadImagesAndLabels`), and what the methods `samples` gives of a class
    call as `self.name(...)`; also through a name or `self.` attribute assigned the call (VideoMAE's
    `self.masked_position_generator = TubeMaskingGenerator(...)`, called in its transform's `__call__`)."""
    bound: dict[tuple[int, str], list[ast.expr]] = {}  # (id(function or class), name or `self.name`) -> values
    handed: list[tuple[ast.AST | None, ast.AST | None, ast.expr]] = []  # (function, class, what is handed)
    for node, function, cls in _scoped(ctx.tree, None, None):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and (key := _bound_key(node.targets[0])):
            bound.setdefault((id(cls if key.startswith("self.") else function), key), []).append(node.value)
        elif isinstance(node, ast.Call):
            handed += [(function, cls, value) for value in _pipeline_values(ctx, node)]
        elif isinstance(node, ast.ClassDef):
            handed += [(None, node, call.func) for method in samples(node) for call in ast.walk(method)
                       if isinstance(call, ast.Call) and (_bound_key(call.func) or "").startswith("self.")]
    builds = []
    for function, cls, value in handed:
        key = _bound_key(value)
        values = bound.get((id(cls if key.startswith("self.") else function), key), []) if key else [value]
        builds += [value for value in values if isinstance(value, ast.Call)]
    return builds


def _pipeline_values(ctx: FileContext, call: ast.Call) -> list[ast.expr]:
    """What `call` hands the data pipeline to run for every sample: the items of a library pipeline transform's
    list, a loader's dataset, a MindSpore source dataset's source."""
    name = ctx.callee_name(call)
    if name in PIPELINE_CLASSES:
        module = (ctx.call_qualname(call) or "").rpartition(".")[0]
        if module in catalogue.TORCHVISION_TRANSFORM_MODULES or module in catalogue.MINDSPORE_TRANSFORM_MODULES:
            return [item for arg in call.args if isinstance(arg, (ast.List, ast.Tuple)) for item in arg.elts]
    elif name == "DataLoader" or name in catalogue.MINDSPORE_PYTHON_SOURCE_DATASETS:
        qualified = ctx.call_qualname(call) or ""
        loader = qualified in catalogue.TORCH_DATALOADERS
        if loader or catalogue.is_mindspore_dataset_class(qualified):
            found = argument(call, 0, "dataset" if loader else "source")
            return [found] if found is not None else []
    return []


def _scoped(node: ast.AST, function: ast.AST | None, cls: ast.AST | None):
    """Each node under `node`, with the innermost function and class around it."""
    for child in ast.iter_child_nodes(node):
        yield child, function, cls
        inner = (child, cls) if isinstance(child, FUNCTION_TYPES) else \
            (None, child) if isinstance(child, ast.ClassDef) else (function, cls)
        yield from _scoped(child, *inner)


def _sample_methods(cls: ast.ClassDef, names: Iterable[str], methods: Iterable[str] = SAMPLE_METHODS) -> list[ast.AST]:
    """The methods `methods` names of `cls`, when it is one of the classes `names`."""
    return [item for item in cls.body if isinstance(item, FUNCTION_TYPES) and item.name in methods] \
        if cls.name in names else []


def _sample_classes(path: Path) -> frozenset[tuple[str, str]]:
    """(file, name) of the project classes whose objects the project file `path` hands its data pipeline (see
    `pipeline_builds`; with the methods its data classes run for every sample); read once per file."""
    module = project.load(path)
    if module is None:
        return frozenset()
    if "sample classes" not in module.memo:
        cpu = CpuCode(FileContext(str(module.path), module.source, module.tree), importers=False)
        data = {cls.name for cls in ast.walk(module.tree) if isinstance(cls, ast.ClassDef) and cpu._data_class(cls)}
        defined = {*module.functions, *module.classes}
        found = set()
        for call in pipeline_builds(cpu.ctx, lambda cls: _sample_methods(cls, data, cpu._item_methods())):
            for ref, name in project.call_targets(call, module.local, defined):
                built = project.defining(module.path.parent, ref, name)
                if built is not None and built[1] in built[0].classes:
                    found.add((os.path.abspath(built[0].path), built[1]))
        module.memo["sample classes"] = frozenset(found)
    return module.memo["sample classes"]


def _plain_classes(classes: list[ast.ClassDef]) -> frozenset[str]:
    """The classes with no base but `object` and the file's plain classes."""
    plain: set[str] = set()
    grown = True
    while grown:
        before = len(plain)
        plain |= {cls.name for cls in classes if all(isinstance(base, ast.Name)
                                                     and (base.id == "object" or base.id in plain) for base in cls.bases)}
        grown = len(plain) > before
    return frozenset(plain)


def _registered_as_data(cls: ast.ClassDef) -> bool:
    """Whether a decorator registers the class in a registry named for data (segment-anything's
    `@TRANSFORM_REGISTRY.registry_module()`, OpenMMLab's `@TRANSFORMS.register_module()`), which builds it from a
    config for the data pipeline."""
    return any(isinstance(decorator, ast.Call) and isinstance(decorator.func, ast.Attribute)
               and DATA_NAME.search(ast.unparse(decorator.func.value)) is not None for decorator in cls.decorator_list)


def _takes_a_sample(cls: ast.ClassDef, resolve: Callable[[ast.expr], str | None], plain: frozenset[str]) -> bool:
    """Whether the class, a plain one (no base but `object` or the file's plain classes: a diffusers pipeline's
    `__call__(self, image, ...)` runs inference), has a `__call__` that takes a sample as its first argument
    (after self): named so, or handed to an image library (MoCo v3's `GaussianBlur.__call__(self, x)`:
    `x.filter(ImageFilter.GaussianBlur(...))`, `ImageOps.solarize(x)`); not one named for scoring (a loss)."""
    if cls.name not in plain or SCORE_CLASS.search(cls.name):
        return False
    for item in cls.body:
        if isinstance(item, FUNCTION_TYPES) and item.name == "__call__":
            params = [*item.args.posonlyargs, *item.args.args][1:2]  # mindocr's transforms take a `data` dict
            if not params:
                return False
            name = params[0].arg
            return SAMPLE_PARAMETER.fullmatch(name) is not None or name == "data" or _imaged(item, name, resolve)
    return False


def _imaged(function: ast.FunctionDef | ast.AsyncFunctionDef, name: str,
            resolve: Callable[[ast.expr], str | None]) -> bool:
    """Whether `function` hands its parameter `name` to an image library, or calls a method of it with one of the
    library's objects."""
    def library(node: ast.expr) -> bool:
        target = node.func if isinstance(node, ast.Call) else node
        return (resolve(target) or "").split(".", 1)[0] in catalogue.IMAGE_LIBRARIES

    for call in ast.walk(function):
        if not isinstance(call, ast.Call):
            continue
        if library(call) and any(isinstance(arg, ast.Name) and arg.id == name for arg in call.args):
            return True
        func = call.func
        if (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == name
                and any(library(arg) for arg in call.args)):
            return True
    return False


def _mindspore_map(call: ast.Call) -> bool:
    """MindSpore's `dataset.map(operations, input_columns=...)`, its operations given by position (mindaudio's
    ECAPA recipe)."""
    return call.func.attr == "map" and any(kw.arg == "input_columns" for kw in call.keywords)


_HANDED: weakref.WeakKeyDictionary[FileContext, frozenset[str]] = weakref.WeakKeyDictionary()


def _handed_functions(tree: ast.Module) -> frozenset[str]:
    """`CpuCode._handed`, from one walk of the file; a method handed as `self.name` within its class too (minddet's
    `dataset.map(operations=self.preprocess_fn, ...)`), and the function of a `functools.partial` handed, or of a
    name bound to one (`collate_fn=partial(pad_batch, pad_id=0)`)."""
    names, defined, classes, calls = set(), set(), [], []
    for node in ast.walk(tree):
        if isinstance(node, FUNCTION_TYPES):
            defined.add(node.name)
        elif isinstance(node, ast.ClassDef):
            classes.append(node)
        elif isinstance(node, ast.Call):
            calls.append(node)
    partials = partial_bindings(tree)
    names.update(item.id for call in calls for handed in handed_callables(call)
                 if isinstance(item := called_like(handed, partials), ast.Name))
    for cls in classes:
        methods = {item.name for item in cls.body if isinstance(item, FUNCTION_TYPES)}
        names.update(item.attr for call in ast.walk(cls) if isinstance(call, ast.Call)
                     for item in handed_callables(call) if isinstance(item, ast.Attribute)
                     and isinstance(item.value, ast.Name) and item.value.id == "self" and item.attr in methods)
    return frozenset(names & defined)


def partial_bindings(tree: ast.AST) -> dict[str, ast.Call]:
    """`name` (or `self.name`) -> the `functools.partial(f, ...)` call the code assigns to it (minddet's
    `self._prep_func = partial(prep_func, anchor_cache=anchor_cache)`)."""
    return {key: node.value for node in ast.walk(tree) if isinstance(node, ast.Assign) and len(node.targets) == 1
            and _is_partial(node.value) and (key := _bound_key(node.targets[0])) is not None}


def called_like(node: ast.expr, partials: dict[str, ast.Call]) -> ast.expr:
    """What calling `node` calls: `f` for `functools.partial(f, ...)` or a name bound to one (`partials`: see
    `partial_bindings`), else `node` itself."""
    key = _bound_key(node)
    node = partials.get(key, node) if key is not None else node
    return node.args[0] if _is_partial(node) else node


def _is_partial(node: ast.expr) -> bool:
    """`functools.partial(f, ...)` (or `partial(f, ...)`), given the function."""
    func = node.func if isinstance(node, ast.Call) else None
    return (isinstance(func, ast.Name) and func.id == "partial" or isinstance(func, ast.Attribute)
            and func.attr == "partial") and bool(node.args)


def _bound_key(node: ast.expr) -> str | None:
    """`name` for a name, `self.name` for an attribute of `self`, else None."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
        return f"self.{node.attr}"
    return None


def handed_callables(call: ast.Call) -> list[ast.expr]:
    """The callables `call` hands the data pipeline (`collate_fn=`, `map(operations=...)`, ...), list items one by
    one, and for a lambda the functions it calls (`lambda x: pipeline(x)`)."""
    values = [kw.value for kw in call.keywords if kw.arg in HANDED_KEYWORDS]
    if isinstance(call.func, ast.Attribute) and (call.func.attr in HANDED_METHODS or _mindspore_map(call)):
        values += call.args[:1]
    found = []
    for value in values:
        for item in value.elts if isinstance(value, (ast.List, ast.Tuple)) else [value]:
            if isinstance(item, ast.Lambda):
                found += [inner.func for inner in ast.walk(item.body) if isinstance(inner, ast.Call)]
            else:
                found.append(item)
    return found

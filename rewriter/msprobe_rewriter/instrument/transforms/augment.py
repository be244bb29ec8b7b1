"""Replace random augmentation by its deterministic twin, or drop it, where `random-augment` fires.

In a list of transforms (`Compose([...])`, MindSpore `map(operations=[...])`, any list or tuple of them)
`RandomCrop(s)` becomes `CenterCrop(s)`, `RandomResizedCrop(s)` becomes `Resize(s)` + `CenterCrop(s)`,
MindSpore `RandomCropDecodeResize(s)` becomes `Decode()` + `Resize(s)` + `CenterCrop(s)` (an int `s` resizes the
shorter edge only; the crop keeps the square the random transform returned), MindSpore `RandomResize(s)` (which
draws only the interpolation) `Resize(s)` (the catalogue's `TRANSFORM_TWINS`;
`Resize` keeps the `interpolation` and `antialias` given), albumentations' `RandomCrop(h, w)`
`CenterCrop(height=h, width=w)` and its `RandomResizedCrop`/`RandomSizedCrop` `Resize(height=h, width=w)`,
and every other random transform (flips, rotations, colour jitter, erasing, auto-augment) is removed.
timm's and mindcv's transform factories get `is_training=False` (their evaluation transforms), mindcv's
`create_loader` `mixup=0.0, cutmix=0.0`. Outside a list a single twin replaces the call, and a transform that only
flips a coin (or any of albumentations', all skipped with `p=0`) gets probability 0. An albumentations transform
that does one fixed thing, given `p` below 1 (`A.Compose([...], p=0.5)`), gets `p=1.0`.
A transform with an argument the twin would drop that calls something (`scale=cfg.pop("scale")`) is left, with a
note: the call may matter to the code around it; so is a crop whose size the twin cannot read (`**kwargs`,
albumentations 2's `size=(h, w)`), and open_clip's `create_model_and_transforms` (train with the `preprocess_val`
it returns). detectron2's `RandomFlip` gets `prob=0.0`, its other random augmentations are removed from lists,
except those that draw the size of the image they return (`ResizeShortestEdge` given several sizes,
`ResizeScale`, `FixedSizeCrop`, `RandomResize`): without them the images would keep the size they were read at,
so they are left, with a note.
A class of the project (the file's own, or a project module's) listed in a torchvision or MindSpore `Compose`
whose `__call__` takes one input and returns it, changed or not (`return img`: a step the list can do without),
is removed from the list, with a note, when msprobe-lint finds a draw from a global generator in it (LAVIS's
`RandomAugment(2, 5, isPIL=True, augs=[...])`, `np.random.choice` in its `__call__`); a class returning
anything else (views, an image with its target) stays.

A file that builds a multi-view wrapper, a class (its own or a project module's) whose `__call__` applies one
transform of its own several times to each sample (MoCo's `TwoCropsTransform`, DINO's local crops, SimCLR's
`[self.base_transform(x) for i in range(self.n_views)]`; also two of its transforms applied to each sample
where the file hands it two holding random augmentation, MoCo v3's `TwoCropsTransform(Compose(augmentation1),
Compose(augmentation2))`; not one transform applied to each frame, or to an image and its mask), or that defines one holding random augmentation, whoever builds it (DINOv2's
`DataAugmentationDINO`; its `forward` counts too), keeps its random augmentation, with a note: without it
the views would be identical and the contrastive task would be trivial. The loader's seeded `generator=` (the
data-workers transform) makes that augmentation repeat from run to run.
"""

from __future__ import annotations

import ast

import libcst as cst

from msprobe_rewriter import catalogue, project
from msprobe_rewriter.context import FUNCTION_TYPES, LOOP_TYPES, own_nodes
from msprobe_rewriter.instrument import nodes
from msprobe_rewriter.instrument.data_elsewhere import project_class
from msprobe_rewriter.instrument.structure import span_of
from msprobe_rewriter.instrument.transforms.base import Example, Transform
from msprobe_rewriter.instrument.unit import Unit, shown_path
from msprobe_rewriter.lint.engine import lint_source
from msprobe_rewriter.project import Module
from msprobe_rewriter.rules import RULES_BY_NAME

CONTAINERS = (cst.List, cst.Tuple)
PIPELINE_MODULES = (*catalogue.TORCHVISION_TRANSFORM_MODULES, *catalogue.MINDSPORE_TRANSFORM_MODULES)
# First parameters of a `__call__` that collates: it is given the list of samples of a batch.
BATCH_PARAMETERS = frozenset({"batch", "samples", "examples", "features", "instances", "data_list"})


class RandomAugment(Transform):
    name = "random-augment"
    fixes = ("random-augment",)
    rule = "random-augment"
    summary = "Replaces random crops by centre crops and removes the other random transforms from transform lists."
    details = __doc__.split("\n\n", 1)[1].strip()
    examples = (
        Example("import torchvision.transforms as T\n\ntrain_tf = T.Compose([\n    T.RandomResizedCrop(224),\n"
                "    T.RandomHorizontalFlip(),\n    T.ColorJitter(0.4, 0.4, 0.4),\n    T.ToTensor(),\n])\n",
                "import torchvision.transforms as T\n\ntrain_tf = T.Compose([\n    T.Resize(224),\n    T.CenterCrop(224),\n"
                "    T.ToTensor(),\n])\n"),
        Example("import mindspore.dataset.vision as vision\n\n"
                "ops = [vision.RandomCropDecodeResize(224, scale=(0.08, 1.0)), vision.RandomHorizontalFlip(prob=0.5), "
                "vision.HWC2CHW()]\n",
                "import mindspore.dataset.vision as vision\n\nops = [vision.Decode(), vision.Resize(224), "
                "vision.CenterCrop(224), vision.HWC2CHW()]\n"),
        # MoCo v3: a random transform wrapping others goes with them
        Example("import torchvision.transforms as T\n\n"
                "tf = T.Compose([T.RandomApply([T.ColorJitter(0.4, 0.4, 0.2, 0.1)], p=0.8), T.ToTensor()])\n",
                "import torchvision.transforms as T\n\ntf = T.Compose([T.ToTensor()])\n"),
        Example("from timm.data import create_transform\nfrom mindcv.data import create_loader\n\n"
                "train_tf = create_transform(224, is_training=True, auto_augment='rand-m9-mstd0.5')\n"
                "loader = create_loader(data, 32, is_training=True, mixup=0.8, cutmix=1.0)\n",
                "from timm.data import create_transform\nfrom mindcv.data import create_loader\n\n"
                "train_tf = create_transform(224, is_training=False, auto_augment='rand-m9-mstd0.5')\n"
                "loader = create_loader(data, 32, is_training=True, mixup=0.0, cutmix=0.0)\n"),
        Example("from torchvision.transforms import RandomCrop, RandomHorizontalFlip\n\ncrop = RandomCrop(32, padding=4)\n"
                "flip = RandomHorizontalFlip()\n",
                "from torchvision.transforms import CenterCrop, RandomHorizontalFlip\n\ncrop = CenterCrop(32)\n"
                "flip = RandomHorizontalFlip(p=0.0)\n"),
        Example("import torchvision.transforms as T\n\ncrop = T.Compose([\n"
                "    T.RandomResizedCrop(224, scale=(0.2, 1.0), interpolation=T.InterpolationMode.BICUBIC),\n])\n"
                "flips = T.Compose([\n    T.RandomHorizontalFlip(),\n    T.RandomVerticalFlip(),\n])\n",
                "import torchvision.transforms as T\n\ncrop = T.Compose([\n"
                "    T.Resize(224, interpolation=T.InterpolationMode.BICUBIC),\n    T.CenterCrop(224),\n])\n"
                "flips = T.Compose([])\n"),
        # albumentations: every transform runs with probability `p` (a Compose's own too)
        Example("import albumentations as A\nfrom albumentations.pytorch import ToTensorV2\n\ntrain = A.Compose([\n"
                "    A.RandomCrop(256, 256),\n    A.HorizontalFlip(),\n    A.Normalize(),\n    ToTensorV2(),\n], p=0.9)\n"
                "flip = A.VerticalFlip(p=0.5)\n",
                "import albumentations as A\nfrom albumentations.pytorch import ToTensorV2\n\ntrain = A.Compose([\n"
                "    A.CenterCrop(height=256, width=256),\n    A.Normalize(),\n    ToTensorV2(),\n], p=1.0)\n"
                "flip = A.VerticalFlip(p=0.0)\n"),
        # MindSpore's RandomResize draws only the interpolation: it still resizes, so it becomes a Resize.
        Example("import mindspore.dataset.vision as vision\n\n"
                "data = data.map(operations=[vision.RandomResize(28), vision.HWC2CHW()])\n",
                "import mindspore.dataset.vision as vision\n\n"
                "data = data.map(operations=[vision.Resize(28), vision.HWC2CHW()])\n"),
        # A class of the project returning the image it is given, drawing from a global generator: removed.
        Example("import random\n\nimport torchvision.transforms as T\nfrom PIL import ImageOps\n\n\nclass Solarize:\n"
                "    def __call__(self, img):\n        if random.random() < 0.2:\n"
                "            img = ImageOps.solarize(img)\n        return img\n\n\n"
                "tf = T.Compose([T.Resize(256), Solarize(), T.ToTensor()])\n",
                "import random\n\nimport torchvision.transforms as T\nfrom PIL import ImageOps\n\n\nclass Solarize:\n"
                "    def __call__(self, img):\n        if random.random() < 0.2:\n"
                "            img = ImageOps.solarize(img)\n        return img\n\n\n"
                "tf = T.Compose([T.Resize(256), T.ToTensor()])\n"),
    )

    def apply(self, unit: Unit) -> None:
        sites = unit.sites_for(self.rule, lambda n: isinstance(n, cst.Call))
        views = _multi_view_wrappers(unit, [finding.line for finding, _ in sites])
        if sites and views:
            unit.note(sites[0][0].line, f"`{views[0]}` applies a transform several times to each sample (views of "
                      "one image): random augmentation left, as the views would be identical without it (the "
                      "loader's seeded generator= repeats it from run to run)")
            return
        containers = unit.structure.innermost([span_of(f) for f, _ in sites], lambda n: isinstance(n, CONTAINERS))
        edits: dict[cst.CSTNode, dict[int, list]] = {}
        for finding, call in sites:
            qualified = unit.names.qualname(call.func)
            if qualified in catalogue.OPEN_CLIP_TRAINING_TRANSFORMS:
                unit.note(finding.line, f"`{qualified.rpartition('.')[2]}` not rewritten: train with the validation "
                                        "transform it returns (`preprocess_val`) while debugging")
                continue
            if not finding.fixable:  # a draw written by hand (`random.random() < 0.5` in `__getitem__`)
                unit.note(finding.line, "random draw written by hand not rewritten: make it deterministic yourself")
                continue
            factory = _factory_fix(qualified)
            if factory is not None:  # timm's and mindcv's factories: evaluation transforms, no batch mixing
                unit.edits.rewrite(call, factory)
                continue
            if qualified is not None and catalogue.is_sometimes_applied(qualified):  # `A.Compose([...], p=0.5)`
                unit.edits.rewrite(call, lambda c: nodes.set_argument(c, "p", cst.Float("1.0")))
                continue
            if qualified is None or not catalogue.is_random_transform(qualified):
                unit.note(finding.line, "random augmentation not rewritten (no deterministic twin known)")
                continue
            short = qualified.rpartition(".")[2]
            if catalogue.sizes_at_random(qualified):  # detectron2's `ResizeShortestEdge([640, 800], ...)`
                unit.note(finding.line, f"`{short}` not rewritten: it draws the size (or position) of the image it "
                                        "returns, and without it the images would keep the size they were read at; "
                                        "give it one size yourself")
                continue
            dropped = _dropped_call(call, qualified)
            if dropped is not None:
                unit.note(finding.line, f"`{short}` not rewritten: its argument `{nodes.code_of(dropped)}` calls "
                                        "something, which the rewrite would drop; make it deterministic yourself")
                continue
            missing = _missing_argument(call, qualified)
            if missing is not None:
                unit.note(finding.line, f"`{short}` not rewritten: its twin `{missing[0]}` needs the `{missing[1]}` "
                                        "it gives in another form (`**kwargs`, albumentations 2's `size=(h, w)`); "
                                        "replace it yourself")
                continue
            twins = [self._twin(unit, call, qualified, name, carry) for name, carry in
                     catalogue.transform_twins(qualified)]
            container = containers.get(span_of(finding))
            index = _element_index(container, call)
            if (index is not None or len(twins) == 1) and isinstance(call.func, cst.Name):
                unit.edits.drop_import_if_unused(qualified, call.func.value)
            if index is not None:
                edits.setdefault(container, {})[index] = twins
            elif len(twins) == 1:
                unit.edits.rewrite(call, twins[0])
            elif not self._never(unit, call, qualified, short):
                unit.note(finding.line, f"`{short}` outside a list of transforms: remove it yourself")
        for container, index, item, where in _project_random_steps(unit):
            edits.setdefault(container, {}).setdefault(index, [])
            unit.note(item.lineno, f"`{ast.unparse(item.func)}` removed from this list of transforms: it draws from "
                                   f"a global generator ({where})")
        for container, changes in edits.items():
            unit.edits.rewrite(container, lambda updated, changes=changes: _splice(updated, changes))

    @staticmethod
    def _twin(unit: Unit, call: cst.Call, qualified: str, name: str, carry: tuple[str, ...]):
        """A function building the twin call from the (updated) random one."""
        if isinstance(call.func, cst.Attribute):
            func = call.func.with_changes(attr=cst.Name(name))
        else:
            unit.edits.swap_import(qualified, call.func.value, qualified.rpartition(".")[0], name)
            func = cst.Name(name)

        def build(updated: cst.Call) -> cst.Call:
            twin = cst.Call(func=func)
            for argument in carry:
                given = nodes.argument(updated, argument, catalogue.twin_argument_position(qualified, argument))
                if given is None:
                    continue
                if argument == "size":
                    twin = nodes.append_argument(twin, cst.Arg(given.value))
                else:
                    twin = nodes.set_argument(twin, argument, given.value)
            return twin

        return build

    @staticmethod
    def _never(unit: Unit, call: cst.Call, qualified: str, short: str) -> bool:
        """Give a coin-flip transform (any of albumentations', which all skip their work with `p=0`) probability 0;
        False when it has no probability argument."""
        spec = catalogue.probability_argument(qualified)
        if spec is None or (short not in catalogue.PROBABILITY_ONLY_TRANSFORMS
                            and catalogue.transform_library(qualified) != "albumentations"):
            return False
        keyword, position = spec
        unit.edits.rewrite(call, lambda c: nodes.set_argument(c, keyword, cst.Float("0.0"), position))
        return True


PURE_BUILTINS = frozenset({"int", "float", "str", "bool", "tuple", "list", "len", "round", "min", "max", "abs"})


def _factory_fix(qualified: str | None):
    """The rewrite of a factory building random augmentation: `create_transform(..., is_training=False)` (timm,
    mindcv), mindcv's `create_loader(..., mixup=0.0, cutmix=0.0)`; None for anything else."""
    training = {**catalogue.TIMM_TRAINING_TRANSFORMS, **catalogue.MINDCV_TRAINING_TRANSFORMS}
    if qualified in training:
        return lambda call: nodes.set_argument(call, "is_training", cst.Name("False"), training[qualified])
    if qualified in catalogue.MINDCV_MIXING_LOADERS:
        rates = catalogue.MINDCV_MIXING_LOADERS[qualified][1]

        def no_mixing(call: cst.Call) -> cst.Call:
            for position, name in rates:
                call = nodes.set_argument(call, name, cst.Float("0.0"), position)
            return call
        return no_mixing
    return None


def _dropped_call(call: cst.Call, qualified: str) -> cst.BaseExpression | None:
    """An argument of `call` that no twin carries over and whose value calls something (open_clip's
    `scale=aug_cfg_dict.pop('scale')`, which its pipeline relies on): dropping it would drop that call."""
    carried = {id(found) for _, carry in catalogue.transform_twins(qualified) for name in carry
               if (found := nodes.argument(call, name, catalogue.twin_argument_position(qualified, name))) is not None}
    for arg in call.args:
        if id(arg) not in carried and _calls(arg.value):
            return arg.value
    return None


def _missing_argument(call: cst.Call, qualified: str) -> tuple[str, str] | None:
    """(twin, argument): an argument a twin cannot be built without (`size`, `height`, `width`) that `call` does
    not give where the twin reads it."""
    for twin, carry in catalogue.transform_twins(qualified):
        for name in carry:
            if name in catalogue.TWIN_REQUIRED_ARGUMENTS and nodes.argument(
                    call, name, catalogue.twin_argument_position(qualified, name)) is None:
                return twin, name
    return None


def _calls(node: cst.CSTNode) -> bool:
    """Whether `node` calls anything but a conversion or arithmetic builtin (`int(args.size)` is harmless) or a
    class it builds (`RandomApply([ColorJitter(0.4, 0.4, 0.2)], p=0.8)` drops the jitter with it)."""
    if isinstance(node, cst.Call):
        func = node.func.attr if isinstance(node.func, cst.Attribute) else node.func
        if not (isinstance(func, cst.Name) and (func.value in PURE_BUILTINS or func.value[:1].isupper())):
            return True
        return any(_calls(arg.value) for arg in node.args)
    return any(_calls(child) for child in node.children)


def _element_index(container: cst.CSTNode | None, call: cst.Call) -> int | None:
    if container is None:
        return None
    for index, element in enumerate(container.elements):
        if element.value is call:
            return index
    return None


def _splice(container: cst.List | cst.Tuple, changes: dict[int, list]) -> cst.CSTNode:
    """`container` with element i replaced by the twins built from it (none: removed), layout kept."""
    old = list(container.elements)
    new: list[cst.BaseElement] = []
    for index, element in enumerate(old):
        if index not in changes:
            new.append(element)
            continue
        twins = [build(element.value) for build in changes[index]]
        separator = element.comma if isinstance(element.comma, cst.Comma) and index < len(old) - 1 else cst.Comma(
            whitespace_after=_opening_whitespace(container))
        commas = [separator] * (len(twins) - 1) + [element.comma] if twins else []
        if len(twins) > 1:  # the element's end-of-line comment goes to the first twin's line only
            comment = _line_comment(element.comma)
            commas = [_with_line_comment(commas[0], comment)] + [_with_line_comment(c, None) for c in commas[1:]]
        new.extend(element.with_changes(value=twin, comma=comma) for twin, comma in zip(twins, commas, strict=True))
    if not new:  # `[]`, not the lines the elements stood on
        if isinstance(container, cst.List):
            return container.with_changes(elements=[], lbracket=cst.LeftSquareBracket(), rbracket=cst.RightSquareBracket())
        return container.with_changes(elements=[], lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    if (len(old) - 1) in changes and not changes[len(old) - 1]:
        new[-1] = new[-1].with_changes(comma=old[-1].comma)
    if isinstance(container, cst.Tuple) and len(new) == 1 and not isinstance(new[0].comma, cst.Comma):
        new[0] = new[0].with_changes(comma=cst.Comma())  # keep a one-element tuple a tuple
    return container.with_changes(elements=new)


def _line_comment(comma) -> cst.Comment | None:
    """The comment ending the line after `comma`, if any."""
    after = getattr(comma, "whitespace_after", None)
    return after.first_line.comment if isinstance(after, cst.ParenthesizedWhitespace) else None


def _with_line_comment(comma, comment: cst.Comment | None):
    """`comma` with `comment` (or none) ending its line, where the comma ends a line."""
    after = getattr(comma, "whitespace_after", None)
    if not isinstance(after, cst.ParenthesizedWhitespace) or after.first_line.comment == comment:
        return comma
    first_line = after.first_line.with_changes(comment=comment, whitespace=after.first_line.whitespace
                                               if comment is not None else cst.SimpleWhitespace(""))
    return comma.with_changes(whitespace_after=after.with_changes(first_line=first_line))


def _opening_whitespace(container: cst.List | cst.Tuple) -> cst.BaseParenthesizableWhitespace:
    """The line break and indent after the opening bracket of a list laid out one element a line, else a space."""
    opening = container.lbracket if isinstance(container, cst.List) else (container.lpar[0] if container.lpar else None)
    after = opening.whitespace_after if opening is not None else None
    return after if isinstance(after, cst.ParenthesizedWhitespace) else cst.SimpleWhitespace(" ")


def _project_random_steps(unit: Unit) -> list[tuple[cst.CSTNode, int, ast.Call, str]]:
    """(list, index, element, where it draws) for each element of a torchvision or MindSpore `Compose` list that
    builds a class of the project returning its input (`_returns_its_input`) in which msprobe-lint finds a draw."""
    found = []
    for node in ast.walk(unit.tree):
        steps = node.args[0] if isinstance(node, ast.Call) and node.args else None
        qualified = unit.ctx.call_qualname(node) if isinstance(steps, (ast.List, ast.Tuple)) else None
        if qualified is None or qualified.rpartition(".")[2] != "Compose" or \
                qualified.rpartition(".")[0] not in PIPELINE_MODULES:
            continue
        for index, item in enumerate(steps.elts):
            built = project_class(unit, item) if isinstance(item, ast.Call) else None
            where = _draw_in(unit, *built) if built is not None and _returns_its_input(built[0]) else None
            container = unit.node_for(steps, CONTAINERS) if where is not None else None
            if container is not None:
                found.append((container, index, item, where))
    return found


def _returns_its_input(cls: ast.ClassDef) -> bool:
    """Whether the class's `__call__` takes one input and returns it, changed or not (`return img`): a step that
    maps an image to an image, which a list of transforms can do without."""
    call = next((item for item in cls.body if isinstance(item, FUNCTION_TYPES) and item.name == "__call__"), None)
    if call is None or call.args.vararg or call.args.kwarg or call.args.kwonlyargs:
        return False
    parameters = [*call.args.posonlyargs, *call.args.args]
    if len(parameters) != 2:
        return False
    returns = [node for node in own_nodes(call) if isinstance(node, ast.Return)]
    return bool(returns) and all(isinstance(node.value, ast.Name) and node.value.id == parameters[1].arg
                                 for node in returns)


def _draw_in(unit: Unit, cls: ast.ClassDef, module: Module | None) -> str | None:
    """Where msprobe-lint's random-augment finds a draw inside `cls` (`path:line`); None when it finds none."""
    if module is None:
        path, findings = unit.path, unit.findings.get(RandomAugment.rule, [])
    else:
        path = module.path
        findings = module.memo.get(RandomAugment.rule)
        if findings is None:
            rules = [RULES_BY_NAME[RandomAugment.rule]]
            findings = module.memo[RandomAugment.rule] = lint_source(str(path), module.source.encode(), rules).findings
    line = next((finding.line for finding in findings
                 if cls.lineno <= finding.line <= (cls.end_lineno or cls.lineno)), None)
    return None if line is None else f"{shown_path(path)}:{line}"


def _multi_view_wrappers(unit: Unit, lines: list[int]) -> list[str]:
    """The classes whose `__call__` applies a transform of its own several times to each sample (views of it):
    those the file builds, its own or a project module's, and those it defines around random augmentation (at
    `lines`), whoever builds them (DINOv2's `DataAugmentationDINO`; their `forward` too)."""
    tree = unit.tree
    own = {node.name: node for node in tree.body if isinstance(node, ast.ClassDef)}
    calls = [node for node in ast.walk(tree) if isinstance(node, ast.Call)]
    built = [(call, own[call.func.id]) for call in calls if isinstance(call.func, ast.Name) and call.func.id in own]
    defined = {node.name for node in ast.walk(tree) if isinstance(node, FUNCTION_TYPES)} | set(own)
    local = project.local_imports(project.import_statements(tree.body))
    for call, name, module in project.reached(calls, local, defined, project.file_folder(unit.path)):
        built += [(call, cls) for cls in module.classes_built(name)]
    holding = [cls for cls in ast.walk(tree) if isinstance(cls, ast.ClassDef)
               and any(cls.lineno <= line <= (cls.end_lineno or cls.lineno) for line in lines)]
    views = [cls for call, cls in built if _applies_repeatedly(cls, ("__call__",))
             or _augmented_arguments(tree, call, lines) > 1 and _applies_repeatedly(cls, ("__call__",), any_own=True)]
    views += [cls for cls in holding if _applies_repeatedly(cls, ("__call__", "forward"))]
    return list(dict.fromkeys(cls.name for cls in views if not _collates(cls)))


def _collates(cls: ast.ClassDef) -> bool:
    """Whether a class collates a batch (named for it, or its `__call__` takes a batch): a draw per sample there
    is no view of one image (ijepa's `MaskCollator` samples a mask per sample)."""
    call = next((item for item in cls.body if isinstance(item, FUNCTION_TYPES) and item.name == "__call__"), None)
    first = call.args.args[1].arg if call is not None and len(call.args.args) > 1 else ""
    return "collat" in cls.name.lower() or first in BATCH_PARAMETERS


def _augmented_arguments(tree: ast.Module, call: ast.Call, lines: list[int]) -> int:
    """How many arguments of `call` hold random augmentation (a finding at `lines`), written there or through a
    name the file assigns (MoCo v3's `TwoCropsTransform(transforms.Compose(augmentation1), ...)`)."""
    assigned: dict[str, list[ast.AST]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    assigned.setdefault(target.id, []).append(node.value)

    def holds(node: ast.AST) -> bool:
        return any(node.lineno <= line <= (node.end_lineno or node.lineno) for line in lines)

    return sum(holds(arg) or any(holds(value) for name in _names(arg, ast.Load) for value in assigned.get(name, ()))
               for arg in (*call.args, *(keyword.value for keyword in call.keywords)))


def _applies_repeatedly(cls: ast.ClassDef, methods: tuple[str, ...], any_own: bool = False) -> bool:
    """Whether one of `methods` applies a transform of its own several times to one input: `self.<attribute>(x)`
    twice with the same arguments (with `any_own`, two of its transforms, MoCo v3's `self.base_transform1(x)` and
    `self.base_transform2(x)`), or in a loop or comprehension whose names its arguments do not use
    (`[self.t(x) for _ in range(n)]`, not `[self.t(frame) for frame in frames]`); not one feeding its input
    (`img = self.convert(img, ...)`, a chain of steps)."""
    seen: set[str] = set()
    repeating = (*LOOP_TYPES, ast.ListComp, ast.GeneratorExp, ast.SetComp, ast.DictComp)
    todo: list[tuple[ast.AST, frozenset[str] | None]] = [
        (item, None) for item in cls.body if isinstance(item, FUNCTION_TYPES) and item.name in methods]
    chained = {id(step.value) for method, _ in todo for step in ast.walk(method) if isinstance(step, ast.Assign)
               and _names(step.value, ast.Load) & set().union(*(_names(t, ast.Store) for t in step.targets))}
    while todo:
        node, bound = todo.pop()
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and id(node) not in chained
                and isinstance(node.func.value, ast.Name) and node.func.value.id == "self"):
            used = set().union(*(_names(arg, ast.Load) for arg in (*node.args, *node.keywords)))
            key = " ".join(map(ast.dump, (*node.args, *node.keywords))) if any_own else ast.dump(node)
            if bound is not None and not used & bound or key in seen:
                return True
            seen.add(key)
        once, outer = _evaluated_once(node), bound
        if isinstance(node, repeating):
            bound = (bound or frozenset()) | _names(node, ast.Store)
        todo += [(child, outer if child is once else bound) for child in ast.iter_child_nodes(node)]
    return False


def _evaluated_once(node: ast.AST) -> ast.AST | None:
    """What a loop or comprehension evaluates once, before repeating: a `for`'s iterable, a comprehension's first."""
    if isinstance(node, (ast.For, ast.AsyncFor)):
        return node.iter
    generators = getattr(node, "generators", None)
    return generators[0] if generators else None


def _names(node: ast.AST, context: type) -> set[str]:
    """The names `node` reads (`ast.Load`) or binds (`ast.Store`)."""
    return {name.id for name in ast.walk(node) if isinstance(name, ast.Name) and isinstance(name.ctx, context)}

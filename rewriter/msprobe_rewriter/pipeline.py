"""Data-pipeline values: which expressions hold a MindSpore dataset or only deterministic transforms.

Shared by the data rules. Names are followed with `LocalValues`, so `ds = ds.map(...)` chains and
`trans = [vision.Decode(), ...]` lists assigned a few statements earlier are recognised.
"""

from __future__ import annotations

import ast
import builtins
import copy

from msprobe_rewriter import catalogue, conditions, pinning, project
from msprobe_rewriter.context import (
    EVAL_NAME,
    FUNCTION_TYPES,
    FileContext,
    Site,
    argument,
    constant,
    draws_globally,
    has_false_keyword,
    keyword,
    own_nodes,
    target_name,
)
from msprobe_rewriter.project import BLOCK_FIELDS
from msprobe_rewriter.values import UNKNOWN, LocalValues

DATASET = "mindspore-dataset"
NOT_DATASET = "not-a-dataset"
DETERMINISTIC = "deterministic-transforms"
# Methods of a generator object, or of a tensor, that draw (`rng.integers(...)`, `state.shuffle(...)`, `x.normal_()`).
DRAWING_METHODS = frozenset({"rand", "randn", "randint", "random", "integers", "uniform", "normal", "choice",
                             "shuffle", "permutation", "sample", "binomial", "poisson"}) | catalogue.INPLACE_RANDOM_METHODS
# The methods through which a loader or a `GeneratorDataset` reads a dataset object's samples.
SAMPLE_METHODS = ("__getitem__", "__getitems__", "__iter__", "__next__")
MAX_HELPER_DEPTH = 3  # methods and functions followed from a dataset's sample methods (deeper counts as drawing)
LIST_ADDERS = frozenset({"append", "insert", "extend"})
SEEDING_METHODS = frozenset({"manual_seed", "seed"})  # `g = torch.Generator(); g.manual_seed(seed)`


class PipelineValues:
    """Follows names through assignments (feed `values` from the traversal, e.g. with `FollowsValues`)."""

    def __init__(self, ctx: FileContext) -> None:
        self.ctx = ctx
        self.values = LocalValues(ctx, self._classify)
        self.keyword = self.values.keyword
        self._following: set[str] = set()  # `self` attributes whose values `draws_nothing` is reading

    def _classify(self, value: ast.expr) -> str | None:
        verdict = self.is_dataset(value)
        if verdict is not None:
            return DATASET if verdict else (DETERMINISTIC if self.is_deterministic(value) else NOT_DATASET)
        return None

    def site(self, call: ast.Call) -> Site:
        """Where to report on a loader, sampler or dataset: evaluation-only when its data is for evaluation."""
        site = self.ctx.site(call)
        if not site.on_eval_path:
            site.on_eval_path = self._reads_evaluation_data(call)
        return site

    def _reads_evaluation_data(self, call: ast.Call) -> bool:
        """`DataLoader(MNIST(train=False))`, `DataLoader(val_set)`, `MnistDataset(path, usage="test")`."""
        data = argument(call, 0, "dataset")
        if isinstance(data, ast.Call) and has_false_keyword(data, "train"):
            return True
        name = target_name(data) if data is not None else None
        if name and EVAL_NAME.search(name):
            return True
        usages = (constant(keyword(call, key)) for key in ("usage", "split"))
        return any(isinstance(usage, str) and EVAL_NAME.search(usage) for usage in usages)

    def is_dataset(self, node: ast.expr) -> bool | None:
        """True for a MindSpore dataset, False for something known to be other, None when unknown."""
        if isinstance(node, ast.Call):
            qualified = self.ctx.call_qualname(node)
            if qualified is not None:
                return (catalogue.is_mindspore_dataset_class(qualified)
                        or qualified in catalogue.MINDSPORE_DATASET_FUNCTIONS)
            func = node.func
            if isinstance(func, ast.Attribute) and func.attr in catalogue.MINDSPORE_DATASET_METHODS:
                return self.is_dataset(func.value)
            return None
        if isinstance(node, ast.Name):
            fact = self.values.last(node.id, node)
            if fact == DATASET:
                return True
            if fact in (NOT_DATASET, DETERMINISTIC) or self.ctx.qualname(node) is not None:
                return False
            return None
        if isinstance(node, ast.Attribute):
            return False if self.ctx.qualname(node) is not None else None
        if isinstance(node, (ast.Constant, ast.List, ast.Tuple, ast.Dict, ast.Set, ast.ListComp, ast.DictComp,
                             ast.SetComp, ast.JoinedStr)):
            return False
        return None

    def draws_nothing(self, node: ast.expr | None) -> bool:
        """Whether `node` is a dataset (or a name every assignment of which gives one) whose samples are the same in
        any worker: a torchvision dataset whose transforms are known to draw no random numbers (or that has none),
        or an object of a project class whose sample methods draw nothing (see `_project_dataset_draws_nothing`)."""
        if isinstance(node, ast.Name):
            found = self._reaching(self.values.bindings.bound(node.id, node))
            return bool(found) and all(isinstance(value, ast.expr) and self.draws_nothing(value) for value in found)
        if isinstance(node, ast.Attribute) and node.attr not in self._following:  # not `self.a = self.b = self.a`
            self._following.add(node.attr)
            found = self._attribute_values(node)
            quiet = bool(found) and all(self.draws_nothing(value) for value in found)
            self._following.discard(node.attr)
            return quiet
        if not isinstance(node, ast.Call):
            return False
        if _quiet_library_class(self.ctx.imports, node.func, project.file_folder(self.ctx.path)):
            return True  # mosaicml-streaming's `StreamingDataset`
        positions = catalogue.TORCHVISION_DATASETS.get(self.ctx.call_qualname(node) or "")
        if positions is None:
            return self._project_dataset_draws_nothing(node)
        for name, position in zip(("transform", "target_transform"), positions, strict=True):
            given = self.values.keyword(node, name, position)
            if given is UNKNOWN or given is not None and constant(given) is not None and not self.is_deterministic(given):
                return False
        return self.values.keyword(node, "transforms") is None

    def _attribute_values(self, node: ast.Attribute) -> list[ast.expr]:
        """What every assignment in the class around the method being visited gives `self.<attr>` (`node`), the
        names bound once in the assigning method put in (generative-models' `self.train_dataset =
        Wrapper(CIFAR10(..., transform=transform))` in `__init__`, read in `train_dataloader`); none when one is not
        a plain assignment or `node` is no attribute of the method's instance."""
        method, classes = self.ctx.current_def(), [n for n in self.ctx.ancestors if isinstance(n, ast.ClassDef)]
        if not (classes and method in classes[-1].body and isinstance(node.value, ast.Name)
                and node.value.id == _first_parameter(method)):
            return []
        found = []
        for item in (item for item in classes[-1].body if isinstance(item, FUNCTION_TYPES)):
            owner = _first_parameter(item)
            for stored in ast.walk(item):
                if not (isinstance(stored, ast.Attribute) and isinstance(stored.ctx, ast.Store)
                        and stored.attr == node.attr and isinstance(stored.value, ast.Name) and stored.value.id == owner):
                    continue
                assign = next((a for a in ast.walk(item) if isinstance(a, ast.Assign) and a.targets == [stored]), None)
                if assign is None:
                    return []
                found.append(_inlined(assign.value, item))
        return found

    def _built_by_appends(self, node: ast.Name) -> bool:
        """Whether the function around `node` builds the list it names only from known deterministic transforms: list
        literals of them (or empty) assigned to it, `append`/`insert`/`extend` of them (mindpose's `image_funcs =
        []`, then `image_funcs.append(vision.Normalize(...))`), and no other use that could change it (handing it
        to a call other than a dataset's `.map`, another method)."""
        scope = self.ctx.current_def() or self.ctx.tree
        if node.id in _local_names(scope) - _assigned_names(scope):  # a parameter: a list of unknown content
            return False
        parents = {id(child): parent for parent in own_nodes(scope) for child in ast.iter_child_nodes(parent)}
        added, assigned = [], False
        for name in (n for n in own_nodes(scope) if isinstance(n, ast.Name) and n.id == node.id):
            parent = parents.get(id(name))
            if isinstance(name.ctx, ast.Store):
                if not (isinstance(parent, ast.Assign) and isinstance(parent.value, (ast.List, ast.Tuple))):
                    return False
                added.extend(parent.value.elts)
                assigned = True
            elif isinstance(parent, ast.Attribute) and isinstance(parents.get(id(parent)), ast.Call):
                call = parents[id(parent)]
                if parent.attr not in LIST_ADDERS or not call.args or parent is not call.func:
                    return False
                extended = call.args[-1]
                if parent.attr == "extend" and not isinstance(extended, (ast.List, ast.Tuple)):
                    return False
                added.extend(extended.elts if parent.attr == "extend" else [extended])
            elif isinstance(parent, (ast.Call, ast.keyword)) and not _map_argument(parent, parents):
                return False
        return assigned and bool(added) and all(self.is_deterministic(item) for item in added)

    def _reaching(self, bound: list[object]) -> list[object]:
        """The values of `bound` (a name's bindings before the node being visited) it may hold there: from the
        last one an assignment makes in a block around the node on, which hides those before it (OLMo's `dataset =
        build_memmap_dataset(...)`, then `dataset = IterableDataset(dataset, ...)`)."""
        blocks = (getattr(holder, field, None) for holder in self.ctx.ancestors for field in BLOCK_FIELDS)
        around = {id(statement.value) for block in blocks if isinstance(block, list)  # not a lambda's or `a if c else b`'s
                  for statement in block if isinstance(statement, (ast.Assign, ast.AnnAssign))}
        last = max((i for i, value in enumerate(bound) if id(value) in around), default=0)
        return bound[last:]

    def _project_dataset_draws_nothing(self, call: ast.Call) -> bool:
        """Whether `call` builds an object of a class of this file or of a project module it imports whose sample
        methods (`__getitem__`, `__iter__`, `__next__`, through its project base classes) draw nothing, nor the
        methods and functions they call (OLMo's `IterableDataset`, which shuffles once with a generator seeded
        from `seed + epoch`; mindediting's image pairs, which only load files). A callable attribute that is no
        method (`self.transform(img)`) may draw."""
        found = self._project_class(call)
        if found is None:
            return False
        module, cls = found
        methods = [method for name in SAMPLE_METHODS if (method := pinning.class_method(module, cls, name)) is not None]
        return bool(methods) and not any(
            _draws(defined[0], defined[1], found, MAX_HELPER_DEPTH, set()) for defined in methods) and all(
            self.draws_nothing(wrapped) for wrapped in self._wrapped_datasets(call, found, methods))

    def _wrapped_datasets(self, call: ast.Call, found: tuple[project.Module, ast.ClassDef], methods: list) -> list:
        """The datasets `call` hands a wrapper class that its sample methods index (`self.dset[i]`, with
        `self.dset = dset` in its `__init__`: generative-models' `CIFAR10DataDictWrapper(CIFAR10(...))`): the
        arguments that build a torchvision or project dataset, or name one (other values, file lists, are read
        as data)."""
        init = pinning.class_method(*found, "__init__")
        if init is None:
            return []
        given = conditions.call_arguments(init[1], call, bound=True)
        stored = _stored_parameters(init[1])
        wrapped = []
        for _, method, _ in methods:
            owner = _first_parameter(method)
            for node in ast.walk(method):
                if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute) \
                        and isinstance(node.value.value, ast.Name) and node.value.value.id == owner:
                    argument_given = given.get(stored.get(node.value.attr, ""))
                    if argument_given is not None and self._builds_dataset(argument_given[0]):
                        wrapped.append(argument_given[0])
        return wrapped

    def _builds_dataset(self, node: ast.expr) -> bool:
        """Whether `node` builds (or names, through every assignment) a torchvision dataset or a dataset class of
        the project (one with sample methods)."""
        if isinstance(node, ast.Name):
            found = self._reaching(self.values.bindings.bound(node.id, node))
            return bool(found) and all(isinstance(value, ast.expr) and self._builds_dataset(value) for value in found)
        if not isinstance(node, ast.Call):
            return False
        if (self.ctx.call_qualname(node) or "") in catalogue.TORCHVISION_DATASETS:
            return True
        found = self._project_class(node)
        return found is not None and any(pinning.class_method(*found, name) is not None for name in SAMPLE_METHODS)

    def _project_class(self, call: ast.Call) -> tuple[project.Module, ast.ClassDef] | None:
        """The class `call` builds, with its module: this file's (read as a module) or a project module's."""
        here = project.file_module(self.ctx.path, self.ctx.tree, self.ctx.imports)
        if isinstance(call.func, ast.Name) and call.func.id in here.classes:
            return here, here.classes[call.func.id]
        for _, name, module in project.reached([call], here.local, here.classes, project.file_folder(self.ctx.path)):
            if name in module.classes:
                return module, module.classes[name]
        return None

    def is_deterministic(self, node: ast.expr | None) -> bool:
        """Whether `node` is a transform call, or a list of them, known to draw no random numbers."""
        if isinstance(node, (ast.List, ast.Tuple)):
            return bool(node.elts) and all(self.is_deterministic(e) for e in node.elts)
        if isinstance(node, ast.Name):  # every assignment that may reach here (`if training: ... else: ...`)
            facts = self.values.facts(node.id, node)
            return bool(facts) and all(fact == DETERMINISTIC for fact in facts) or self._built_by_appends(node)
        return isinstance(node, ast.Call) and _deterministic_call(node, self.ctx.call_qualname(node), self.is_deterministic)


def _deterministic_call(node: ast.Call, qualified: str | None, elements) -> bool:
    """Whether a call of `qualified` is a transform known to draw no random number (a `Compose` when `elements`
    says its list is)."""
    if qualified is None or catalogue.transform_library(qualified) is None:
        return False
    if catalogue.is_random_transform(qualified):
        return False
    if qualified.rpartition(".")[2] in catalogue.USER_FUNCTION_TRANSFORMS:  # `Lambda(lambda x: x * 2.0 - 1.0)`:
        function = node.args[0] if node.args else None  # arithmetic, calling nothing, draws nothing
        return isinstance(function, ast.Lambda) and not any(isinstance(n, ast.Call) for n in ast.walk(function.body))
    if qualified.rpartition(".")[2] == "Compose":
        return elements(argument(node, 0, "transforms"))
    return True


def _module_transform(module: project.Module, name: str) -> bool:
    """Whether every top-level assignment of `name` in `module` gives a transform known to draw nothing (sd-scripts'
    `IMAGE_TRANSFORM = transforms.Compose([Resize(...), ToTensor(), Normalize(...)])`)."""
    values = [item.value for item in module.tree.body if isinstance(item, ast.Assign)
              and any(isinstance(target, ast.Name) and target.id == name for target in item.targets)]

    def deterministic(node: ast.expr | None) -> bool:
        if isinstance(node, (ast.List, ast.Tuple)):
            return bool(node.elts) and all(deterministic(element) for element in node.elts)
        return isinstance(node, ast.Call) and _deterministic_call(node, module.imports.resolve(node.func), deterministic)

    return bool(values) and all(deterministic(value) for value in values)


def _map_argument(parent: ast.AST, parents: dict[int, ast.AST]) -> bool:
    """Whether an argument (its parent: the call, or the keyword) is one of a `.map(...)` call."""
    call = parents.get(id(parent)) if isinstance(parent, ast.keyword) else parent
    return isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "map"


def _draws(module: project.Module, function: ast.AST, instance: tuple[project.Module, ast.ClassDef], depth: int,
           seen: set[int], method: bool = True) -> bool:
    """Whether a function of `module` (a sample method of `instance`'s class, or what one calls) may draw from a
    global or unseeded generator: a random API, a random transform, a drawing method of anything but a generator
    it seeds from a value, a callable a method cannot see (a `self` attribute that is no method, handed to a
    function of the project or called: `self.transform(img)`; a local name or parameter it calls; `super()`), or a
    method or function of the project that does (`depth` deep, deeper counts as drawing; the instance's own methods,
    each followed once, count no depth: stylegan3's `__getitem__` -> `_load_raw_image` -> `_open_file` -> `_get_zipfile`)."""
    if id(function) in seen:
        return False
    seen.add(id(function))
    seeded = _seeded_generators(function, module.imports)
    init = pinning.class_method(*instance, "__init__") if method else None
    if init is not None:  # contrastive pairs' `self._generator = np.random.default_rng(seed=self.shuffle_seed)`
        seeded |= {name for name in _seeded_generators(init[1], init[0].imports) if "." in name}
    for call in (node for node in ast.walk(function) if isinstance(node, ast.Call)):
        if _random_call(call, module.imports, seeded):
            return True
        callee = _callee(module, call, instance, function, method)
        if callee is None:
            continue
        own = callee is not UNKNOWN and callee[2]  # a method of the instance: no depth
        if callee is UNKNOWN or depth <= 1 and not own or _draws(
                callee[0], callee[1], instance, depth - (not own), seen, callee[2]):
            return True
    return False


def _random_call(call: ast.Call, imports, seeded: set[str]) -> bool:
    """A call of a random API (a global draw, a MindSpore random operator, a random transform) or a drawing method
    of anything but a name bound to a generator seeded from a value."""
    qualified = imports.resolve(call.func) or ""
    if draws_globally(call, qualified) or qualified in catalogue.MINDSPORE_RANDOM_PRIMITIVES \
            or catalogue.is_random_transform(qualified):
        return True
    func = call.func
    return isinstance(func, ast.Attribute) and func.attr in DRAWING_METHODS and _dotted(func.value) not in seeded \
        and not qualified


def _dotted(node: ast.expr) -> str | None:
    """`name` or `name.attr` as written; None for anything else."""
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return f"{node.value.id}.{node.attr}"
    return node.id if isinstance(node, ast.Name) else None


def _callee(module: project.Module, call: ast.Call, instance: tuple[project.Module, ast.ClassDef],
            function: ast.AST, method: bool):
    """What `call` in `function` runs that `_draws` follows: (module, function, whether a method) of a method of the
    instance's class or a function of the project; UNKNOWN for a callable a `method` cannot see, or a module's
    callable object not known to draw nothing (`AUGMENT(img)`); None for anything else (a library's, a builtin, a
    method of another object, what a plain function is handed)."""
    func, owner = call.func, _first_parameter(function) if method else None
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == owner:
        found = pinning.class_method(*instance, func.attr)
        if found is not None:
            return found[0], found[1], True
        return None if _holds_tokenizer(module, function, func.attr) else UNKNOWN
    local = isinstance(func, ast.Name) and func.id in _local_names(function)
    if method and isinstance(func, ast.Attribute) and isinstance(func.value, ast.Call) \
            and isinstance(func.value.func, ast.Name) and func.value.func.id == "super":
        return None if _quiet_bases(module, function) else UNKNOWN
    if method and local:
        return UNKNOWN
    handed = method and any(
        isinstance(arg, ast.Attribute) and isinstance(arg.value, ast.Name) and arg.value.id == owner
        and pinning.class_method(*instance, arg.attr) is None for arg in (*call.args, *(kw.value for kw in call.keywords)))
    found, path = pinning.called_function(call, module.functions, module.path.parent, module.local)
    if found is not None:
        return UNKNOWN if handed else ((module if path is None else project.load(path) or module), found, False)
    if isinstance(func, ast.Name) and not local and not hasattr(builtins, func.id) and func.id not in module.classes \
            and func.id not in module.local.refs and func.id not in module.imports.bindings:
        return None if _module_transform(module, func.id) else UNKNOWN
    return None


def _owner_class(module: project.Module, method: ast.AST) -> ast.ClassDef | None:
    """The class of `module` that defines `method`."""
    return next((cls for cls in module.tree.body if isinstance(cls, ast.ClassDef) and method in cls.body), None)


def _quiet_bases(module: project.Module, method: ast.AST) -> bool:
    """Whether the class of `module` that defines `method` derives only from library datasets that draw nothing
    (llm-foundry's `StreamingTextDataset(StreamingDataset)`): what `super()` reaches there draws nothing."""
    owner = _owner_class(module, method)
    return owner is not None and bool(owner.bases) and all(
        _quiet_library_class(module.imports, base, module.path.parent) for base in owner.bases)


def _quiet_library_class(imports, node: ast.expr, folder) -> bool:
    """Whether `node` names a library dataset class that draws nothing (`streaming.StreamingDataset`), imported from
    the library, not from a project module of that name."""
    qualified = imports.resolve_any(node) or ""
    return qualified in catalogue.QUIET_LIBRARY_DATASETS and project.find_module(
        folder, qualified.partition(".")[0], 0) is None


def _holds_tokenizer(module: project.Module, method: ast.AST, attribute: str) -> bool:
    """Whether the class that defines `method` (or the nearest project base class that stores `attribute`, llm-foundry's
    `StreamingTextDataset` for its subclass) stores there only the parameter of its `__init__` annotated as a Hugging
    Face tokenizer (`self.tokenizer = tokenizer`, `tokenizer: PreTrainedTokenizerBase`): tokenizing draws nothing."""
    owner = _owner_class(module, method)
    for _ in range(MAX_HELPER_DEPTH):
        if owner is None:
            return False
        stores = [node for node in ast.walk(owner) if isinstance(node, ast.Attribute)
                  and isinstance(node.ctx, ast.Store) and node.attr == attribute]
        if stores:
            return _stores_tokenizer(module, owner, stores)
        bases_only = ast.ClassDef(name=owner.name, bases=owner.bases, keywords=[], body=[], decorator_list=[])
        base = pinning.class_method(module, bases_only, "__init__")  # the nearest project base's `__init__`
        module, owner = (base[0], base[2]) if base is not None else (module, None)
    return False


def _stores_tokenizer(module: project.Module, owner: ast.ClassDef, stores: list[ast.Attribute]) -> bool:
    """Whether each of `stores` is `self.<attr> = <parameter of the class's __init__ annotated as a tokenizer>`."""
    init = next((item for item in owner.body if isinstance(item, FUNCTION_TYPES) and item.name == "__init__"), None)
    if init is None:
        return False
    given = [node.value for node in ast.walk(init) if isinstance(node, ast.Assign) and node.targets[0] in stores]
    parameters = {arg.arg: arg.annotation for arg in (*init.args.args, *init.args.kwonlyargs)}
    return len(given) == len(stores) and all(
        isinstance(value, ast.Name) and _tokenizer_type(module, parameters.get(value.id)) for value in given)


def _tokenizer_type(module: project.Module, annotation: ast.expr | None) -> bool:
    """Whether an annotation names a Hugging Face tokenizer class (`PreTrainedTokenizerBase`, `...Fast`)."""
    qualified = module.imports.resolve_any(annotation) if annotation is not None else None
    return bool(qualified) and qualified.startswith("transformers.") and "Tokenizer" in qualified


def _stored_parameters(init: ast.AST) -> dict[str, str]:
    """attribute -> the parameter an `__init__` stores in `self.<attribute>` (`self.dset = dset`)."""
    owner, parameters = _first_parameter(init), _local_names(init) - _assigned_names(init)
    return {node.targets[0].attr: node.value.id for node in ast.walk(init)
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Attribute)
            and isinstance(node.targets[0].value, ast.Name) and node.targets[0].value.id == owner
            and isinstance(node.value, ast.Name) and node.value.id in parameters}


def _inlined(value: ast.expr, function: ast.AST) -> ast.expr:
    """A copy of `value` with each name that `function` binds once, by a plain assignment, replaced by what it
    assigns (one level): the value read anywhere, not only in `function`'s scope."""
    assigned: dict[str, list[ast.expr]] = {}
    for node in ast.walk(function):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            assigned.setdefault(node.targets[0].id, []).append(node.value)
    once = {name: values[0] for name, values in assigned.items() if len(values) == 1}

    class Inline(ast.NodeTransformer):
        def visit_Name(self, node: ast.Name) -> ast.expr:
            held = once.get(node.id) if isinstance(node.ctx, ast.Load) else None
            return copy.deepcopy(held) if held is not None else node

    return Inline().visit(copy.deepcopy(value))


def _local_names(function: ast.AST) -> set[str]:
    """The names a function binds: its parameters and its assignments' targets."""
    args = function.args if isinstance(function, FUNCTION_TYPES) else None
    names = {arg.arg for arg in (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg)
             if arg is not None} if args is not None else set()
    return names | _assigned_names(function)


def _assigned_names(function: ast.AST) -> set[str]:
    return {node.id for node in ast.walk(function) if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)}


def _first_parameter(function: ast.AST | None) -> str | None:
    """The name a method calls its instance by (None for no function)."""
    positional = [*function.args.posonlyargs, *function.args.args] if isinstance(function, FUNCTION_TYPES) else []
    return positional[0].arg if positional else None


def _seeded_generators(function: ast.AST, imports) -> set[str]:
    """The names (and `self.<attr>`s) a function binds to a generator of its own seeded from a value
    (`np.random.default_rng(seed)`, `np.random.Generator(np.random.PCG64(seed))`, `random.Random(seed)`,
    `g = torch.Generator(); g.manual_seed(s)`)."""
    seeded = set()
    for node in ast.walk(function):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and _dotted(node.targets[0]) \
                and _seeded_generator(node.value, imports):
            seeded.add(_dotted(node.targets[0]))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in SEEDING_METHODS \
                and isinstance(node.func.value, ast.Name) and node.args and constant(node.args[0]) is not None:
            seeded.add(node.func.value.id)
    return seeded


def _seeded_generator(value: ast.expr, imports) -> bool:
    """A call making a generator seeded from a value (not None: a None seed draws fresh entropy)."""
    if not isinstance(value, ast.Call):
        return False
    qualified = imports.resolve(value.func)
    if qualified == "numpy.random.Generator":
        return bool(value.args) and _seeded_generator(value.args[0], imports)
    if isinstance(value.func, ast.Attribute) and value.func.attr in SEEDING_METHODS:  # `torch.Generator().manual_seed(s)`
        return bool(value.args) and constant(value.args[0]) is not None
    if qualified not in catalogue.GENERATOR_FACTORIES:
        return False
    seed = argument(value, *catalogue.GENERATOR_FACTORIES[qualified])
    return seed is not None and constant(seed) is not None

"""What a script draws before it first seeds (seed-missing's "seeded too late" findings): models built with new
weights and draws from a global generator before the default run's first seeding point, in straight-line code."""

from __future__ import annotations

import ast
import re

from msprobe_rewriter import catalogue, pinning, project, seeding
from msprobe_rewriter.assignments import is_main_guard
from msprobe_rewriter.conditions import Guard, condition_text
from msprobe_rewriter.context import (
    FUNCTION_TYPES,
    LOOP_TYPES,
    FileContext,
    argument,
    constant,
    draws_globally,
    iter_calls,
    keyword,
    target_name,
)
from msprobe_rewriter.cpu_code import CpuCode, is_model_base

# transformers model classes (`LlamaForCausalLM(config)` initialises every weight), not data collators.
# Calls that draw a layer's weights: torch and MindSpore layers, initialisers, torch draws.
WEIGHT_DRAWS = (catalogue.TORCH_WEIGHTED_LAYERS | catalogue.MINDSPORE_WEIGHTED_LAYERS | catalogue.TORCH_INIT_DRAWS
                | catalogue.MINDSPORE_INIT_DRAWS | catalogue.TORCH_RANDOM_DRAWS)
MAX_FOLLOW = 3  # calls of the file's functions, classes and methods are followed this many levels deep
# Names of numbers that identify a run or a resource (`session_id`, `master_port`): an integer drawn only for them
# is metadata, not data, weights or noise.
IDENTIFIER = re.compile(r"(?:^|_)(?:id|uid|session|port|nonce)$", re.IGNORECASE)
INTEGER_DRAWS = frozenset({"randint", "randrange", "getrandbits"})
HF_MODEL_CLASS = re.compile(r"(?!Auto|DataCollator)[A-Z]\w*(Model|For[A-Z]\w*)")


class LateDraws:
    """What a call draws before the first seeding: a model with new weights, or random numbers, and from which
    generator family."""

    def __init__(self, ctx: FileContext) -> None:
        self.ctx = ctx
        self.parents = {child: node for node in ast.walk(ctx.tree) for child in ast.iter_child_nodes(node)}
        self.models = _weighted_classes(ctx)
        self.definitions = {node.name: node for node in ctx.tree.body
                            if isinstance(node, (*FUNCTION_TYPES, ast.ClassDef))}
        self.assigned = [(node.targets[0].id, node.value) for node in ast.walk(ctx.tree) if isinstance(node, ast.Assign)
                         and isinstance(node.targets[0], ast.Name) and isinstance(node.value, ast.Call)]
        self.targets = {value: name for name, value in self.assigned}
        self.aliases = _class_aliases(ctx.tree, self.definitions)

    def anywhere(self) -> bool:
        """Whether any call of the file may be one (a cheap test before the seeding order is worked out)."""
        return any(self._kind(call, True) or self.ctx.call_qualname(call) in catalogue.TRL_PEFT_BEFORE_SEED
                   for call in ast.walk(self.ctx.tree) if isinstance(call, ast.Call))

    def builds(self, call: ast.Call, model: ast.expr | None) -> bool:
        """Whether `call` may build the model the trainer trains (`model`: its `model=` argument): it is that
        argument, or assigned to its name (`model = get_peft_model(model, config)`); a reward model loaded
        beside it has its head."""
        return call is model or isinstance(model, ast.Name) and self.targets.get(call) == model.id

    def first(self, call: ast.Call, with_model: bool, follow: int = MAX_FOLLOW,
              seen: frozenset[ast.AST] = frozenset()) -> tuple[str, str, str] | None:
        """`("model" | "draw", family, where)` for a call that builds a model with new weights (when `with_model`)
        or draws from a generator `family`; a call of a function, class or method of the file is followed `follow`
        levels deep (`where` names the draw inside; a model loaded with weights in the function that builds it is
        skipped)."""
        kind = self._kind(call, with_model)
        if kind is not None:
            return (*kind, "")
        definition = self.callee(call) if follow else None
        if definition is None or definition in seen:
            return None
        for inner in sorted(iter_calls(definition), key=position):
            found = self.first(inner, with_model, follow - 1, seen | {definition})
            if found is not None and not (found[0] == "model" and self.loaded(inner, definition)):
                return found[0], found[1], found[2] or f" (`{condition_text(inner.func)}`, line {inner.lineno})"
        return None

    def made_elsewhere(self, call: ast.Call) -> tuple[str, str, str] | None:
        """`("model", family, "")` for a call building a model class of another project module with new weights, or
        calling a function there that returns one (step_into_llm's recompute/cifar_resnet50.py: `resnet50(...)`
        returns resnet.py's `ResNet(...)`, whose `Conv2d` and `Dense` layers draw from NumPy); else None."""
        if not isinstance(call.func, ast.Name) or call.func.id in self.definitions:
            return None
        local = project.local_imports(project.import_statements(self.ctx.tree.body))
        made = pinning.made_class(call, project.file_folder(self.ctx.path), local, self.definitions)
        if made is None:
            return None
        module, cls = made
        if "weighted classes" not in module.memo:
            module.memo["weighted classes"] = _weighted_classes(FileContext(str(module.path), module.source, module.tree))
        family = module.memo["weighted classes"].get(cls.name)
        return ("model", family, "") if family is not None else None

    def callee(self, call: ast.Call) -> ast.AST | None:
        """What a call of the file's code runs: a function, a class's `__init__` (also through a name the class is
        assigned to, `dataset_cls = SupervisedDataset`), or a method of the class around it (`self.build()`)."""
        func = call.func
        if isinstance(func, ast.Name):
            return _init(self.definitions.get(self.aliases.get(func.id, func.id)))
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self":
            node = self.parents.get(call)
            while node is not None and not isinstance(node, ast.ClassDef):
                node = self.parents.get(node)
            return next((item for item in node.body if isinstance(item, FUNCTION_TYPES) and item.name == func.attr),
                        None) if node is not None else None
        return None

    def unused(self, call: ast.Call, points: list[tuple[ast.AST, frozenset[str]]]) -> bool:
        """Whether what `call` draws cannot outlive the seeding: its result is dropped and it is given nothing it
        could shuffle (`sanity_check()`, `torch.rand(3)`), it is an integer only bound to names of an
        identifier (`session_id`, `master_port`), or it becomes the seed (`seed = random.randint(...)`, entropy-seed's
        business)."""
        statement = self.statement(call)
        if isinstance(statement, ast.Expr) and statement.value is call:
            return not any(isinstance(a, (ast.Name, ast.Attribute, ast.Subscript))
                           for a in (*call.args, *(k.value for k in call.keywords)))
        if draws_identifier(self.ctx, call, statement):
            return True  # `session_id = random.randint(0, 2**32)`: it names the run, the computation never uses it
        names = _assigned(statement)
        return bool(names) and any(names & _mentioned(point) for point, _ in points
                                   if isinstance(point, ast.Call) and not is_trainer(self.ctx, point))

    def statement(self, node: ast.AST) -> ast.AST | None:
        while node is not None and not isinstance(node, ast.stmt):
            node = self.parents.get(node)
        return node

    def loaded(self, call: ast.Call, scope: ast.AST, until: tuple[int, int] | None = None) -> bool:
        """Whether the model `call` builds (`model = call`, `self.net = Wrapper(call)`) is given weights later in
        `scope` (before `until`, when given), under any condition: a `...load...` call naming it
        (`model.load_state_dict(sd)`, `load_checkpoint(model, path)`), or a new value not made from it (`model =
        torch.load(path)`)."""
        names = _assigned(self.statement(call))
        after = (call.end_lineno, call.end_col_offset)
        for node in ast.walk(scope) if names else ():
            if not isinstance(node, (ast.Call, ast.Assign)) or position(node) <= after \
                    or until is not None and position(node) >= until:
                continue
            if isinstance(node, ast.Call):
                if "load" in (self.ctx.callee_name(node) or "").lower() and names & _mentioned(node):
                    return True
            elif names & {target_name(t) for t in node.targets} and not names & _mentioned(node.value):
                return True
        return False

    def straight(self, node: ast.AST, scope: ast.AST | None) -> bool:
        """Whether `node` runs whenever `scope` (None: the function or module around it) runs up to it: in no
        loop, comprehension, branch (the main guard aside), `except` or `else` block."""
        return self.branches(node, scope) == []

    def branches(self, node: ast.AST, scope: ast.AST | None) -> list[Guard] | None:
        """The guards (`if` test, truth it needs) that `node` runs under in `scope` (None: the function or module
        around it), outermost first, when only `if` branches (the main guard aside) lie between them; None when a
        loop, comprehension, conditional expression, `except` or `else` block does."""
        guards: list[Guard] = []
        child, parent = node, self.parents.get(node)
        while parent is not scope and not (scope is None and isinstance(parent, (*FUNCTION_TYPES, ast.Module))):
            if parent is None or isinstance(parent, (*LOOP_TYPES, ast.IfExp, ast.BoolOp, ast.Match, ast.comprehension,
                                                     ast.ExceptHandler, ast.Lambda, ast.ClassDef, *FUNCTION_TYPES)):
                return None
            if isinstance(parent, ast.If) and child is not parent.test \
                    and not (is_main_guard(parent.test) and child in parent.body):
                guards.append((parent.test, child in parent.body))
            if isinstance(parent, ast.Try) and child not in parent.body:
                return None
            child, parent = parent, self.parents.get(parent)
        return guards[::-1]

    def _kind(self, call: ast.Call, with_model: bool) -> tuple[str, str] | None:
        """`("draw", family)` for a call that draws random numbers, `("model", family)` for one that builds a model
        with new weights (drawn from torch's generator, or NumPy's for MindSpore)."""
        qualified = self.ctx.draw_qualname(call)
        if draws_globally(call, qualified):
            return "draw", catalogue.DRAW_FAMILY[qualified]
        if _unseeded_split(call, qualified):
            return "draw", "numpy"
        if not with_model:
            return None
        name = getattr(call.func, "id", None)
        if name in self.models:
            return "model", self.models[name]
        if qualified in catalogue.PEFT_ADAPTERS \
                and self.random_lora(argument(call, 1, "peft_config"), call) == [] \
                or _hf_new_weights(qualified or "") or qualified in catalogue.TORCH_WEIGHTED_LAYERS:
            return "model", "torch"
        if qualified in catalogue.MINDSPORE_WEIGHTED_LAYERS:
            return "model", "numpy"
        return None

    def random_lora(self, config: ast.expr | None, user: ast.Call) -> list[Guard] | None:
        """When a PEFT config (inline, or the last one assigned to its name before `user`) is a LoRA config with a
        random `init_lora_weights`: the conditions it is made under beyond `user`'s (`if args.use_lora:`; trl's
        `get_peft_config(model_args)` returns one only when `model_args.use_peft`); else None."""
        guards: list[Guard] = []
        if isinstance(config, ast.Name):  # assigned where `user` runs, or under more conditions
            config = next((value for name, value in reversed(self.assigned) if name == config.id
                           and value.lineno < user.lineno), None)
            made, used = (self.branches(config, None), self.branches(user, None)) if config else (None, None)
            if made is None or used is None or made[:len(used)] != used[:len(made)]:
                return None
            guards = made[len(used):]
        if not isinstance(config, ast.Call):
            return None
        if self.ctx.call_qualname(config) in catalogue.TRL_PEFT_CONFIG_BUILDERS and config.args:
            return [*guards, (ast.Attribute(config.args[0], catalogue.TRL_PEFT_SWITCH), True)]
        if self.ctx.call_qualname(config) not in catalogue.PEFT_LORA_CONFIGS:
            return None
        init = keyword(config, "init_lora_weights")
        return guards if init is None or constant(init) in catalogue.PEFT_RANDOM_LORA_INITS else None


class FirstSeeding:
    """Where the default run seeds first. A scope (a function, or module level) has seeding points, in source
    order: the seeding calls and imports in it, and its calls of functions (or classes) of the file that seed."""

    def __init__(self, late: LateDraws, seeds: list[seeding.Effect]) -> None:
        self.late, self.module = late, late.ctx.tree
        self.own: dict[ast.AST, list[tuple[ast.AST, frozenset[str]]]] = {}
        for effect in seeds:
            scope = self.scope(effect.node)
            if scope is not None:
                self.own.setdefault(scope, []).append((effect.node, effect.summary.families))
        self.callers = [self.module, *filter(None, map(_init, late.definitions.values()))]
        self._families: dict[ast.AST, frozenset[str]] = {}
        self._reach: dict[ast.AST, set[ast.AST]] = {}

    def scope(self, node: ast.AST) -> ast.AST | None:
        """The function (or module) whose own code `node` is; None in a lambda or a class body."""
        node = self.late.parents.get(node)
        while not isinstance(node, (*FUNCTION_TYPES, ast.Module)):
            if node is None or isinstance(node, (ast.Lambda, ast.ClassDef)):
                return None
            node = self.late.parents.get(node)
        return node

    def callees(self, scope: ast.AST) -> list[tuple[ast.Call, ast.AST]]:
        """`scope`'s calls of functions (classes: their `__init__`) of the file, with what they run."""
        found = []
        for call in iter_calls(scope):
            target = _init(self.late.definitions.get(getattr(call.func, "id", None)))
            if target is not None:
                found.append((call, target))
        return found

    def families(self, scope: ast.AST) -> frozenset[str]:
        """The generator families `scope` seeds, itself or through the functions of the file it calls."""
        if scope not in self._families:
            self._families[scope] = frozenset()  # a recursive call adds nothing
            found = frozenset().union(*(families for _, families in self.own.get(scope, ())))
            for _, target in self.callees(scope):
                found |= self.families(target)
            self._families[scope] = found
        return self._families[scope]

    def reach(self, scope: ast.AST) -> set[ast.AST]:
        """The functions of the file `scope` runs, directly or not."""
        if scope not in self._reach:
            found: set[ast.AST] = set()
            todo = [scope]
            while todo:
                for _, target in self.callees(todo.pop()):
                    if target not in found:
                        found.add(target)
                        todo.append(target)
            self._reach[scope] = found
        return self._reach[scope]

    def points(self, scope: ast.AST) -> list[tuple[ast.AST, frozenset[str]]]:
        """`scope`'s seeding points in source order, with the families each seeds."""
        found = list(self.own.get(scope, ()))
        found += [(call, families) for call, target in self.callees(scope)
                  if target is not scope and (families := self.families(target))]
        return sorted(found, key=lambda point: position(point[0]))

    def first(self, scope: ast.AST) -> list[tuple[ast.AST, frozenset[str]]]:
        """`scope`'s seeding points when its first one is the default run's first seeding (none otherwise):
        nothing seeds at module level, or in a function of the file that runs `scope`, before `scope` runs."""
        points = self.points(scope)
        for caller in self.callers if points and scope is not self.module else ():
            if caller is scope or caller is not self.module and scope not in self.reach(caller):
                continue
            entry = next((call for call, target in self.callees(caller)
                          if target is scope or scope in self.reach(target)), None)
            if any(entry is None or position(point) < position(entry) for point, _ in self.points(caller)):
                return []
        return points

def _init(definition: ast.AST | None) -> ast.AST | None:
    """A function of the file, or the `__init__` of a class of the file."""
    if isinstance(definition, ast.ClassDef):
        return next((item for item in definition.body if isinstance(item, FUNCTION_TYPES) and item.name == "__init__"),
                    None)
    return definition


def _class_aliases(tree: ast.Module, definitions: dict[str, ast.AST]) -> dict[str, str]:
    """Names bound only to one class of the file (`dataset_cls = SupervisedDataset`), with that class's name."""
    bound: dict[str, set[str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    value = node.value.id if isinstance(node.value, ast.Name) else None
                    bound.setdefault(target.id, set()).add(value)
    return {name: values.pop() for name, values in bound.items()
            if len(values) == 1 and isinstance(definitions.get(next(iter(values))), ast.ClassDef)}


def _weighted_classes(ctx: FileContext) -> dict[str, str]:
    """The file's model classes (torch `nn.Module`s, Lightning modules, transformers models, MindSpore `Cell`s)
    that draw weights when built, by name, with the generator family: their bodies build a weighted layer
    (`nn.Linear`, `nn.Dense`, ..., also through a function of the file that builds one, a model zoo's
    `conv3x3(...)`), call an initialiser or a torch draw, build new transformers weights or
    another such class of the file, or they derive from one."""
    cpu = CpuCode(ctx)
    torch_models = cpu.derived_classes("weights", lambda q: is_model_base(q) or _hf_model_class(q))
    mindspore_cells = cpu.derived_classes("cells", lambda q: q.startswith("mindspore.nn."))
    classes = [node for node in ast.walk(ctx.tree) if isinstance(node, ast.ClassDef)
               and node.name in torch_models | mindspore_cells]
    layers = {node.name for node in ctx.tree.body if isinstance(node, FUNCTION_TYPES)  # `conv3x3(...)` helpers
              and any(_draws_weights(ctx, call, {}) for call in ast.walk(node) if isinstance(call, ast.Call))}
    found: dict[str, str] = {}
    changed = True
    while changed:
        changed = False
        for node in classes:
            if node.name not in found and (any(getattr(base, "id", None) in found for base in node.bases) or any(
                    _draws_weights(ctx, call, found) or getattr(call.func, "id", None) in layers
                    for call in ast.walk(node) if isinstance(call, ast.Call))):
                found[node.name] = "numpy" if node.name in mindspore_cells else "torch"
                changed = True
    return found


def _draws_weights(ctx: FileContext, call: ast.Call, weighted: dict[str, str]) -> bool:
    qualified = ctx.call_qualname(call) or ""
    return (qualified in WEIGHT_DRAWS or _hf_new_weights(qualified) or getattr(call.func, "id", None) in weighted
            or isinstance(call.func, ast.Attribute) and call.func.attr in catalogue.INPLACE_RANDOM_METHODS)


def draws_identifier(ctx: FileContext, call: ast.Call, statement: ast.AST | None) -> bool:
    """Whether `call` draws an integer only bound to names of an identifier (`session_id = random.randint(...)`, a
    `master_port`, minddet's `img_id` naming a saved picture): metadata, not data, weights or noise."""
    names = _assigned(statement)
    return bool(names) and all(IDENTIFIER.search(name) for name in names) \
        and (ctx.callee_name(call) or "") in INTEGER_DRAWS


def _assigned(statement: ast.AST | None) -> set[str]:
    """The names an assignment binds (`model` for `self.model = ...`)."""
    return {target_name(t) for t in statement.targets} - {None} if isinstance(statement, ast.Assign) else set()


def is_trainer(ctx: FileContext, node: ast.AST) -> bool:
    """Whether `node` builds a Hugging Face or Composer trainer (which seeds when built)."""
    return isinstance(node, ast.Call) and ctx.call_qualname(node) in catalogue.HF_TRAINERS | catalogue.COMPOSER_TRAINERS


def code_text(node: ast.AST) -> str:
    """`torch.manual_seed(...)` for a call, the statement for an import."""
    return f"{condition_text(node.func)}(...)" if isinstance(node, ast.Call) else condition_text(node)


def _mentioned(node: ast.AST) -> set[str]:
    return {getattr(n, "id", None) or getattr(n, "attr", None) for n in ast.walk(node)} - {None}


def position(node: ast.AST) -> tuple[int, int]:
    """A node's place in the source, for sorting calls."""
    return node.lineno, node.col_offset


def _hf_model_class(qualified: str) -> bool:
    return qualified.startswith("transformers.") and HF_MODEL_CLASS.fullmatch(qualified.rpartition(".")[2]) is not None


def _hf_new_weights(qualified: str) -> bool:
    """A transformers model built from a config, or loaded with a head the checkpoint lacks."""
    owner, _, name = qualified.rpartition(".")
    if not owner.startswith("transformers"):
        return False
    if name == "from_pretrained":
        return owner.endswith(catalogue.HF_NEW_HEADS)
    return name in catalogue.HF_FROM_CONFIG or _hf_model_class(qualified)


def _unseeded_split(call: ast.Call, qualified: str | None) -> bool:
    """`dataset.shuffle()`, `dataset.train_test_split(0.1)`, scikit-learn's `train_test_split(x)`: no seed."""
    method = call.func.attr if qualified is None and isinstance(call.func, ast.Attribute) else None
    spec = catalogue.UNSEEDED_SPLITS.get(qualified or method or "")
    if spec is None or any(kw.arg is None for kw in call.keywords):  # `**kwargs` may hold a seed
        return False
    seeds, shuffle = spec
    if any(_given(call, *seed) is not None for seed in seeds):
        return False
    return shuffle is None or constant(_given(call, *shuffle)) is not False


def _given(call: ast.Call, position: int | None, name: str) -> ast.expr | None:
    return argument(call, position, name) if position is not None else keyword(call, name)

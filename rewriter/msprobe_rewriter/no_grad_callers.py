"""Whether a project function only ever runs where no gradient is recorded: every place of the project naming it is
under `torch.no_grad()`/`inference_mode`, in data code (datasets, transforms, collate functions), or in another such
function, or in the `forward` of a module only ever called so (BasicSR's `filter2D`, which only `@torch.no_grad()`
`feed_data` and `USMSharp.forward` call, itself only called there). Used by MSP501 for ops whose backward alone is
not deterministic."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from msprobe_rewriter import catalogue, project
from msprobe_rewriter.context import FUNCTION_TYPES, FileContext
from msprobe_rewriter.cpu_code import CpuCode, is_model_base

MAX_DEPTH = 3  # callers of callers followed, at most
MODULE_CALLS = frozenset({"forward", "__call__"})  # what calling an instance runs
# Methods returning the module they are called on (`USMSharp().cuda()`).
SAME_MODULE = frozenset({"cuda", "cpu", "to", "eval", "train", "half", "float", "requires_grad_"})


def runs_without_gradient(module: project.Module, name: str, owner: str | None) -> bool:
    """Whether the top-level function `name` of `module` (or, with `owner`, the `forward`/`__call__` of its top-level
    class `owner`) is named somewhere in the project and runs only without gradient there; a function named nowhere,
    if its file is data code."""
    if owner:
        return _class_quiet(module, owner, MAX_DEPTH)
    return _function_quiet(module, name, MAX_DEPTH) if _named(module, name) else _data_module(module)


def _data_module(module: project.Module) -> bool:
    """A file of data code: it defines no module, and the project's other files call its functions, those they
    call at all, only without gradient (VideoMAE's video_transforms.py, whose functions only its datasets call)."""
    if _View.of(module).cpu_code.derived_classes("model", is_model_base):
        return False
    used = [name for name in module.functions if _named(module, name, elsewhere=True)]
    return bool(used) and all(_function_quiet(module, name, MAX_DEPTH) for name in used)


def _named(module: project.Module, name: str, elsewhere: bool = False) -> bool:
    """Whether a place of the project (another file, `elsewhere`) names `name` of `module`."""
    return any(not elsewhere or view is None or view.module is not module for view, _, _ in _places(module, name))


def _function_quiet(module: project.Module, name: str, depth: int) -> bool:
    """Every place naming the top-level function `name` of `module` runs without gradient."""
    key = ("no-grad function", name, depth)
    if key not in module.memo:
        module.memo[key] = False  # a cycle of callers proves nothing
        places = list(_places(module, name))
        module.memo[key] = bool(places) and all(
            view is not None and _quiet(view, stack, depth, _called(node, stack)) for view, node, stack in places)
    return module.memo[key]


def _called(node: ast.AST, stack: list[ast.AST]) -> bool:
    return bool(stack) and isinstance(stack[-1], ast.Call) and stack[-1].func is node


def _class_quiet(module: project.Module, cls: str, depth: int) -> bool:
    """Every place naming the top-level class `cls` of `module` builds an instance kept in `self.<name>` (also
    through `.cuda()` and the like), and each use of that attribute calls it without gradient."""
    key = ("no-grad class", cls, depth)
    if key not in module.memo:
        module.memo[key] = False
        places = list(_places(module, cls))
        module.memo[key] = bool(places) and all(
            view is not None and _held_quietly(view, node, stack, depth) for view, node, stack in places)
    return module.memo[key]


def _places(module: project.Module, name: str) -> Iterator[tuple[_View | None, ast.AST, list[ast.AST]]]:
    """Each name or attribute naming `name` in `module` (outside the definition itself) and in the project files
    importing it or naming `name` in their imports, with its file's view (None: unreadable) and ancestors."""
    path = str(module.path)
    for file in dict.fromkeys([path, *project.importers(path), *project.name_importers(path, {name})]):
        other = module if file == path else project.load(Path(file))
        if other is None:
            yield None, module.tree, []
            return
        for node, stack in _naming(other.tree, name):
            if not (other is module and stack and getattr(stack[0], "name", None) == name):
                yield _View.of(other), node, stack


def _naming(tree: ast.AST, name: str, stack: list[ast.AST] | None = None) -> Iterator[tuple[ast.AST, list[ast.AST]]]:
    """Each `Name` or `Attribute` under `tree` spelling `name`, with its ancestors (outermost first)."""
    stack = [] if stack is None else stack
    for child in ast.iter_child_nodes(tree):
        if getattr(child, "id", None) == name or isinstance(child, ast.Attribute) and child.attr == name:
            yield child, list(stack)
        stack.append(child)
        yield from _naming(child, name, stack)
        stack.pop()


def _held_quietly(view: _View, node: ast.AST, stack: list[ast.AST], depth: int) -> bool:
    """`self.x = Cls(...)` (also `.cuda()`, ...) in a class whose every other use of `self.x` calls it without
    gradient."""
    value = stack[-1] if stack else None
    if not (isinstance(value, ast.Call) and value.func is node):
        return False
    index = len(stack) - 1
    while index > 1 and isinstance(stack[index - 1], ast.Attribute) and stack[index - 1].attr in SAME_MODULE \
            and isinstance(stack[index - 2], ast.Call):
        index -= 2
    statement = stack[index - 1] if index else None
    owner = next((n for n in reversed(stack) if isinstance(n, ast.ClassDef)), None)
    if not (isinstance(statement, ast.Assign) and statement.value is stack[index] and owner is not None
            and len(statement.targets) == 1 and _self_attribute(statement.targets[0])):
        return False
    held = statement.targets[0].attr
    uses = [(use, inner) for use, inner in _naming(owner, held, [*stack[:stack.index(owner) + 1]])
            if _self_attribute(use) and use is not statement.targets[0]]
    return bool(uses) and depth > 0 and all(_called(use, inner) and _quiet(view, inner, depth - 1, True)
                                            for use, inner in uses)


def _quiet(view: _View, stack: list[ast.AST], depth: int, called: bool) -> bool:
    """Whether code with these ancestors runs without gradient: under a gradient-disabling context, in data
    code, or in a function (or a module's `forward`) that only runs so itself. A function named without being
    called (`self.fn = f`, handed on) may run anywhere: only a local of such a function may hold it."""
    top = stack[0] if stack and depth > 0 else None
    if not called:
        return isinstance(top, FUNCTION_TYPES) and _function_quiet(view.module, top.name, depth - 1)
    for node in stack:
        contexts = [item.context_expr for item in node.items] if isinstance(node, (ast.With, ast.AsyncWith)) \
            else node.decorator_list if isinstance(node, FUNCTION_TYPES) else []
        if any(view.ctx.qualname(c.func if isinstance(c, ast.Call) else c) in catalogue.GRAD_DISABLING_CONTEXTS
               for c in contexts):
            return True
    view.ctx.ancestors = stack
    try:
        if view.cpu_code.here():
            return True
    finally:
        view.ctx.ancestors = []
    if isinstance(top, FUNCTION_TYPES):
        return _function_quiet(view.module, top.name, depth - 1)
    if isinstance(top, ast.ClassDef) and len(stack) > 1 and isinstance(stack[1], FUNCTION_TYPES) \
            and stack[1].name in MODULE_CALLS:
        return _class_quiet(view.module, top.name, depth - 1)
    return False


def _self_attribute(node: ast.AST) -> bool:
    return isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self"


class _View:
    """A project file as the checks above read it: its context (for qualified names) and where its code runs."""

    def __init__(self, module: project.Module) -> None:
        self.module = module
        self.ctx = FileContext(str(module.path), module.source, module.tree)
        self.cpu_code = CpuCode(self.ctx)

    @classmethod
    def of(cls, module: project.Module) -> _View:
        view = module.memo.get("no-grad view")
        if view is None:
            view = module.memo["no-grad view"] = cls(module)
        return view

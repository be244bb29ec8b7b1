"""Whether an attribute a class's `__init__` builds ever runs: its instances in the project, read only for other
attributes (mindediting's metrics and losses keep `VGG(...).features` and drop the classifier, whose dropout never
runs)."""

from __future__ import annotations

import ast
from pathlib import Path

from msprobe_rewriter import catalogue, project
from msprobe_rewriter.context import FUNCTION_TYPES, FileContext, walk_scope

# Methods that load weights into a module without running it (`model.load_state_dict(sd)`).
LOADING_METHODS = frozenset({"load_state_dict"})


def stored_attribute(cls: ast.ClassDef, node: ast.AST) -> str | None:
    """`A` when `node` is (in) the value of `self.A = ...` in `cls.__init__`, else None."""
    for method in cls.body:
        if isinstance(method, FUNCTION_TYPES) and method.name == "__init__":
            for statement in ast.walk(method):
                if isinstance(statement, ast.Assign) and len(statement.targets) == 1 \
                        and _self_attribute(statement.targets[0]) and any(n is node for n in ast.walk(statement.value)):
                    return statement.targets[0].attr
    return None


def unreached(ctx: FileContext, cls: ast.ClassDef, attribute: str) -> list[str] | None:
    """The other attributes read off `cls`'s instances when every instance the project builds (directly or through
    a factory of the file returning one) is read only for them, passed to a weight loader, or returned by such a
    factory, in a function (a module's names are its importers'), and at least one is built outside the factories:
    `self.<attribute>` then never runs. None when an instance is used otherwise, or the class or a factory is
    decorated or named other than in a call (registered, subclassed, `Model.from_pretrained(...)`): built elsewhere."""
    stored = {t.attr for m in cls.body if isinstance(m, FUNCTION_TYPES) and m.name == "__init__"
              for t in ast.walk(m) if _self_attribute(t) and isinstance(t.ctx, ast.Store)} - {attribute}
    factories = {cls.name}
    while True:
        more = {f.name for f in ctx.tree.body if isinstance(f, FUNCTION_TYPES) and f.name not in factories
                and any(isinstance(r, ast.Return) and _builds(r.value, f, factories) for r in ast.walk(f))}
        if not more:
            break
        factories |= more
    if any(f.decorator_list for f in ctx.tree.body if isinstance(f, (*FUNCTION_TYPES, ast.ClassDef))
           and f.name in factories) or any(m.decorator_list for m in ast.walk(cls) if isinstance(m, ast.ClassDef)):
        return None
    modules = [ctx.tree, *(m.tree for m in map(project.load, map(Path, project.resolved_importers(ctx.path))) if m)]
    used: set[str] = set()
    outside = 0  # instances built outside the factories
    for tree in modules:
        names = factories if tree is ctx.tree else _bound_names(tree, factories)
        harmless = {id(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)} | _annotations(tree) | (
            {id(n) for n in ast.walk(cls)} if tree is ctx.tree else set())  # calls, annotations, `super(VGG, self)`
        if any(isinstance(n, ast.Name) and n.id in names and id(n) not in harmless for n in ast.walk(tree)):
            return None
        for scope in [tree, *(n for n in ast.walk(tree) if isinstance(n, FUNCTION_TYPES))]:
            parents = {id(c): p for p in walk_scope(scope) for c in ast.iter_child_nodes(p)}
            parents.update({id(c): scope for c in ast.iter_child_nodes(scope)})
            within = factories if tree is ctx.tree and getattr(scope, "name", None) in factories else set()
            for call in (n for n in walk_scope(scope) if isinstance(n, ast.Call) and (
                    isinstance(n.func, ast.Name) and n.func.id in names
                    or isinstance(n.func, ast.Attribute) and n.func.attr in factories)):
                outside += not within
                reads = _reads(call, parents, scope, stored, within)
                if reads is None:
                    return None
                used |= reads
    return sorted(used) if outside else None


def _reads(call: ast.Call, parents: dict, scope: ast.AST, stored: set[str], factories: set[str]) -> set[str] | None:
    """The stored attributes read off the instance `call` builds, or None when it is used otherwise."""
    parent = parents.get(id(call))
    if isinstance(parent, ast.Attribute):
        return {parent.attr} if parent.attr in stored else None
    if isinstance(parent, ast.Return):
        return set() if getattr(scope, "name", None) in factories else None
    if isinstance(scope, ast.Module) or not (isinstance(parent, ast.Assign) and len(parent.targets) == 1
                                             and isinstance(parent.targets[0], ast.Name)):
        return None  # a module's name is there for its importers
    name, reads = parent.targets[0].id, set()
    uses = [n for n in walk_scope(scope) if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)]
    if len(uses) != sum(isinstance(n, ast.Name) and n.id == name for n in ast.walk(scope)) - 1:
        return None  # bound again, or read in a nested function or lambda
    for use in uses:
        around = parents.get(id(use))
        if isinstance(around, ast.Attribute) and around.attr in stored:
            reads.add(around.attr)
        elif isinstance(around, ast.Attribute) and around.attr in LOADING_METHODS \
                or isinstance(around, ast.keyword) and _loads(parents.get(id(around))) or _loads(around):
            continue
        elif not (isinstance(around, ast.Return) and getattr(scope, "name", None) in factories):
            return None
    return reads


def _builds(value: ast.expr | None, function: ast.AST, factories: set[str]) -> bool:
    """`return C(...)`, or `return model` where the function's one assignment of `model` is `C(...)`."""
    if isinstance(value, ast.Call):
        return _callee(value) in factories
    assigned = [a.value for a in ast.walk(function) if isinstance(a, ast.Assign) and len(a.targets) == 1
                and isinstance(a.targets[0], ast.Name) and isinstance(value, ast.Name) and a.targets[0].id == value.id]
    return len(assigned) == 1 and isinstance(assigned[0], ast.Call) and _callee(assigned[0]) in factories


def _annotations(tree: ast.Module) -> set[int]:
    """The nodes of the annotations in `tree` (`-> VGG`, `model: VGG`)."""
    roots = [a for n in ast.walk(tree) for a in (
        [n.returns] if isinstance(n, FUNCTION_TYPES) else [n.annotation] if isinstance(n, (ast.arg, ast.AnnAssign))
        else []) if a is not None]
    return {id(n) for root in roots for n in ast.walk(root)}


def _bound_names(tree: ast.Module, factories: set[str]) -> set[str]:
    """The names an importer binds to the factories (`from ..alexnet import alexnet as models_alexnet`)."""
    return {(alias.asname or alias.name) for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
            for alias in node.names if alias.name in factories}


def _loads(call: ast.AST | None) -> bool:
    """MindSpore's `load_param_into_net(net, ...)` / `load_checkpoint(path, net)`: weights in, nothing run."""
    name = _callee(call) if isinstance(call, ast.Call) else None
    return name is not None and any(q.rpartition(".")[2] == name for q in catalogue.MINDSPORE_LOAD_PARAM) \
        or name == "load_checkpoint"


def _callee(call: ast.Call) -> str | None:
    return call.func.id if isinstance(call.func, ast.Name) else getattr(call.func, "attr", None)


def _self_attribute(node: ast.AST) -> bool:
    return isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self"

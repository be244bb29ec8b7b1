"""Follow simple names a few statements: what each was assigned, per scope, in source order.

`Bindings` records, once per file for all rules, which value each assignment gave a name. A rule reads
them through its own `LocalValues`, which classifies a value into a fact of the rule's own (a device,
"a MindSpore dataset", ...) the first time it is asked. Dicts become `DictFact`s, so that a call's
`**kwargs` can be looked into. Only plain names are followed and no control flow is modelled: every
assignment earlier in the source counts, which is what "provably" questions need.
"""

from __future__ import annotations

import ast
import weakref
from collections.abc import Callable
from dataclasses import dataclass

from msprobe_rewriter import catalogue
from msprobe_rewriter.context import FileContext, constant

SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
# List methods that change a list in place: what we knew about it no longer holds.
MUTATORS = frozenset({"append", "extend", "insert"})
# Module methods that move a module's weights in place (and return it): `model.cuda()` as a statement.
IN_PLACE_MOVES = catalogue.ACCELERATOR_METHODS | {"to", "cpu"}


@dataclass(frozen=True)
class DictFact:
    """A dict whose string keys are known (a literal, `dict(...)`, or updates of those)."""

    items: tuple[tuple[str, ast.expr], ...]

    def get(self, key: str) -> ast.expr | None:
        """The value stored under `key`, last write wins."""
        found = None
        for name, value in self.items:
            if name == key:
                found = value
        return found


class _Unknown:
    def __repr__(self) -> str:
        return "UNKNOWN"


# A keyword that may be hidden in a `**mapping` we cannot see into.
UNKNOWN = _Unknown()


class Bindings:
    """The values names were bound to, per scope; shared by every rule linting one file."""

    _per_file: weakref.WeakKeyDictionary[FileContext, Bindings] = weakref.WeakKeyDictionary()

    def __init__(self, ctx: FileContext) -> None:
        # A proxy: a strong reference would keep the `_per_file` key, and so every linted file, alive.
        self.ctx = weakref.proxy(ctx)
        # (scope, name) -> [(end of the binding statement, the bound value or a fact)]
        self.entries: dict[tuple[int, str], list[tuple[tuple[int, int], object]]] = {}
        self._last: ast.AST | None = None  # each rule forwards the same node: record it once
        self._dicts: dict[int, DictFact | None] = {}

    @classmethod
    def of(cls, ctx: FileContext) -> Bindings:
        """The file's shared instance."""
        found = cls._per_file.get(ctx)
        if found is None:
            found = cls._per_file[ctx] = cls(ctx)
        return found

    def _first_time(self, node: ast.AST) -> bool:
        if node is self._last:
            return False
        self._last = node
        return True

    # --- recording ---------------------------------------------------------------------------
    def assign(self, node: ast.Assign | ast.AnnAssign) -> None:
        """Record one assignment statement (call from `visit_Assign`/`visit_AnnAssign`)."""
        if node.value is None or not self._first_time(node):
            return
        for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
            self._bind(node, target, node.value)

    def parameters(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> None:
        """Parameters hide outer names and are unknown (call from `visit_FunctionDef`/`visit_Lambda`)."""
        if not self._first_time(node):
            return
        args = node.args
        for arg in (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg):
            if arg is not None:
                self.entries.setdefault((id(node), arg.arg), []).append(((0, 0), None))

    def augassign(self, node: ast.AugAssign) -> None:
        """`x += ...` makes `x` unknown (call from `visit_AugAssign`)."""
        if isinstance(node.target, ast.Name) and self._first_time(node):
            self._bind(node, node.target, None)

    def call(self, node: ast.Call) -> None:
        """Record `name.update({...})` on a known dict; `name.append/extend/insert` make a name unknown;
        `model.cuda()` or `model.to(device)` as a statement moves a module in place: the name holds that call."""
        func = node.func
        if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)) \
                or func.attr not in MUTATORS and func.attr not in IN_PLACE_MOVES and func.attr != "update" \
                or not self._first_time(node):
            return
        end = self._statement_end(node)
        if func.attr in IN_PLACE_MOVES:
            parent = self.ctx.ancestors[-1] if self.ctx.ancestors else None
            if isinstance(parent, ast.Expr) and parent.value is node:
                self._record(end, func.value.id, node)
            return
        if func.attr in MUTATORS:
            self._record(end, func.value.id, None)
            return
        current = self.dict_fact(func.value)
        if current is not None and len(node.args) <= 1:
            added = self.dict_fact(node.args[0]) if node.args else DictFact(())
            if added is not None:
                extra = tuple((kw.arg, kw.value) for kw in node.keywords if kw.arg)
                self._record(end, func.value.id, DictFact(current.items + added.items + extra))

    def _bind(self, statement: ast.stmt, target: ast.expr, value: ast.expr | None) -> None:
        end = (statement.end_lineno or statement.lineno, statement.end_col_offset or 0)
        if isinstance(target, ast.Name):
            self._record(end, target.id, value)
        elif isinstance(target, (ast.Tuple, ast.List)):
            values = value.elts if isinstance(value, (ast.Tuple, ast.List)) else None
            if values is not None and len(values) != len(target.elts):
                values = None
            for i, element in enumerate(target.elts):
                self._bind(statement, element, values[i] if values is not None else None)
        elif isinstance(target, ast.Starred):
            self._bind(statement, target.value, None)
        elif isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):
            key = constant(target.slice)
            current = self.dict_fact(target.value)
            if isinstance(key, str) and current is not None and value is not None:
                self._record(end, target.value.id, DictFact((*current.items, (key, value))))

    def _record(self, end: tuple[int, int], name: str, item: object) -> None:
        self.entries.setdefault((id(self._scope()), name), []).append((end, item))

    def _statement_end(self, node: ast.AST) -> tuple[int, int]:
        for ancestor in reversed(self.ctx.ancestors):
            if isinstance(ancestor, ast.stmt):
                return ancestor.end_lineno or ancestor.lineno, ancestor.end_col_offset or 0
        return node.end_lineno or node.lineno, node.end_col_offset or 0

    def _scope(self) -> ast.AST:
        for node in reversed(self.ctx.ancestors):
            if isinstance(node, SCOPES):
                return node
        return self.ctx.tree

    # --- reading -----------------------------------------------------------------------------
    def bound(self, name: str, at: ast.AST) -> list[object]:
        """What every binding of `name` before `at` stored, in the scope Python reads `name` from."""
        where = (getattr(at, "lineno", 0), getattr(at, "col_offset", 0))
        innermost = True
        for scope in (*(n for n in reversed(self.ctx.ancestors) if isinstance(n, SCOPES)), self.ctx.tree):
            if isinstance(scope, ast.ClassDef) and not innermost:
                continue  # class bodies are not visible from the methods inside them
            innermost = False
            entries = self.entries.get((id(scope), name))
            if entries:
                return [item for end, item in entries if end <= where]
        return []

    def dict_fact(self, value: object) -> DictFact | None:
        """The keys and values of a dict literal, `dict(...)`, or a name bound to one; else None."""
        if isinstance(value, DictFact) or not isinstance(value, ast.expr):
            return value if isinstance(value, DictFact) else None
        key = id(value)
        if key not in self._dicts:
            self._dicts[key] = self._make_dict_fact(value)
        return self._dicts[key]

    def _make_dict_fact(self, value: ast.expr) -> DictFact | None:
        if isinstance(value, ast.Dict):
            items = []
            for key, item in zip(value.keys, value.values, strict=True):
                if key is None:  # {**other}
                    inner = self.dict_fact(item)
                    if inner is None:
                        return None
                    items.extend(inner.items)
                elif isinstance(constant(key), str):
                    items.append((constant(key), item))
            return DictFact(tuple(items))
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "dict" \
                and not value.args:
            if any(kw.arg is None for kw in value.keywords):
                return None
            return DictFact(tuple((kw.arg, kw.value) for kw in value.keywords))
        if isinstance(value, ast.IfExp):  # `{...} if cuda else {}`: what either branch may hold
            body, orelse = self.dict_fact(value.body), self.dict_fact(value.orelse)
            return DictFact(orelse.items + body.items) if body is not None and orelse is not None else None
        if isinstance(value, ast.Name):
            found = self.bound(value.id, value)
            return self.dict_fact(found[-1]) if found else None
        return None


class LocalValues:
    """One rule's view of `Bindings`: each bound value classified by the rule's `classify`."""

    def __init__(self, ctx: FileContext, classify: Callable[[ast.expr], object]) -> None:
        self.bindings = Bindings.of(ctx)
        self.classify = classify
        self._classified: dict[int, object] = {}
        self.assign = self.bindings.assign
        self.parameters = self.bindings.parameters
        self.augassign = self.bindings.augassign
        self.call = self.bindings.call

    def facts(self, name: str, at: ast.AST) -> list[object]:
        """Facts of every assignment to `name` before `at`, in the scope Python reads `name` from."""
        return [self._fact(item) for item in self.bindings.bound(name, at)]

    def last(self, name: str, at: ast.AST) -> object:
        """The fact of the latest assignment to `name` before `at` (None if unknown)."""
        found = self.bindings.bound(name, at)
        return self._fact(found[-1]) if found else None

    def _fact(self, item: object) -> object:
        """Classify a bound value once (dicts become DictFacts); facts pass through."""
        if not isinstance(item, ast.expr):
            return item
        key = id(item)
        if key not in self._classified:
            fact = self.bindings.dict_fact(item)
            self._classified[key] = fact if fact is not None else self.classify(item)
        return self._classified[key]

    def keyword(self, call: ast.Call, name: str, position: int | None = None) -> ast.expr | None | _Unknown:
        """The argument `name` of `call` (by keyword, position or a known `**dict`); UNKNOWN if hidden."""
        for kw in call.keywords:
            if kw.arg == name:
                return kw.value
        if position is not None and len(call.args) > position:
            if any(isinstance(a, ast.Starred) for a in call.args[: position + 1]):
                return UNKNOWN
            return call.args[position]
        if position is not None and any(isinstance(a, ast.Starred) for a in call.args):
            return UNKNOWN
        hidden = False
        for kw in call.keywords:
            if kw.arg is None:
                mapping = self.bindings.dict_fact(kw.value)
                if mapping is None:
                    hidden = True
                elif mapping.get(name) is not None:
                    return mapping.get(name)
        return UNKNOWN if hidden else None


class FollowsValues:
    """Mixin for rules: feeds `self.values` from the traversal (their `visit_Call` calls `values.call`)."""

    values: LocalValues

    def visit_Assign(self, node: ast.Assign | ast.AnnAssign) -> None:
        self.values.assign(node)

    visit_AnnAssign = visit_Assign

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self.values.augassign(node)

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> None:
        self.values.parameters(node)

    visit_AsyncFunctionDef = visit_Lambda = visit_FunctionDef

"""What names and attribute chains hold in the default run of a script (the argparse defaults).

One statement-only pass per file records the assignments of names and attribute chains (`opt.manualSeed`),
per scope, with the `if` tests around each, and the calls on the lines a caller asks about (plus argparse's,
for the defaults). An assignment counts when its tests hold with the argparse defaults (or it is under the
`__main__` guard); one under a test that cannot be decided makes the value unknown.
"""

from __future__ import annotations

import ast
import bisect
import re
from dataclasses import dataclass

from msprobe_rewriter import conditions
from msprobe_rewriter.context import FileContext, constant, walk_scope

SCOPES = (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
ARGPARSE = re.compile(r"add_argument|set_defaults")
NEWLINE = re.compile(r"\n")
MAX_DEPTH = 12
Position = tuple[int, int]


@dataclass(frozen=True)
class Binding:
    """One assignment: where it ends, its value, the `if` tests around it, its scopes."""

    end: Position
    value: ast.expr | None  # None: bound to something we do not follow (a parameter, a loop variable)
    guards: tuple[conditions.Guard, ...]
    scopes: tuple[ast.AST, ...]
    definition: ast.AST | None = None  # the `def` or `class` statement that binds the name
    annotation: ast.expr | None = None  # a parameter's annotation

    @property
    def is_parameter(self) -> bool:
        """Whether it binds a parameter of its innermost scope (at the scope's start)."""
        return self.end == (0, 0)


@dataclass(frozen=True)
class CallSite:
    """A call with the `if` tests around it and its scopes."""

    node: ast.Call
    guards: tuple[conditions.Guard, ...]
    scopes: tuple[ast.AST, ...]  # module first, innermost last


class AssignmentTracer:
    """The assignments of one file, and what a name or attribute holds in the default run.

    `calls_on` selects the lines whose calls are recorded (each is handed to `note_call`)."""

    def __init__(self, ctx: FileContext, calls_on: re.Pattern) -> None:
        self.ctx = ctx
        self.bindings: dict[tuple[int, str], list[Binding]] = {}  # (scope id, key) -> in source order
        self.all_calls: list[CallSite] = []
        self._lookup: conditions.Lookup | None = None
        self._depth = 0
        self._walk(calls_on)

    # --- recording ---------------------------------------------------------------------------
    def _walk(self, calls_on: re.Pattern) -> None:
        """Visit statements only (cheap), with their `if` tests and scopes; look for calls only in the
        statements on the lines `calls_on` finds, and on those defining argparse options."""
        source = self.ctx.source
        starts = [m.start() for pattern in (calls_on, ARGPARSE) for m in pattern.finditer(source)]
        newlines = [m.start() for m in NEWLINE.finditer(source)] if starts else []
        lines = {bisect.bisect_left(newlines, start) + 1 for start in starts}
        stack: list[tuple[ast.AST, tuple, tuple]] = [(self.ctx.tree, (), ())]
        while stack:
            node, guards, scopes = stack.pop()
            if isinstance(node, SCOPES):
                if not isinstance(node, (ast.Module, ast.Lambda)):  # `def hash(...)` shadows the builtin
                    end = (node.end_lineno, node.end_col_offset)
                    self._bind(node.name, Binding(end, None, guards, scopes, definition=node))
                scopes = (*scopes, node)
                if not isinstance(node, (ast.Module, ast.ClassDef)):
                    args = node.args
                    for arg in (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg):
                        if arg is not None:
                            self._bind(arg.arg, Binding((0, 0), None, (), scopes, annotation=arg.annotation))
            elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)) and node.value is not None:
                value = node.value
                if isinstance(node, ast.AugAssign):
                    value = ast.copy_location(ast.BinOp(node.target, node.op, node.value), node)
                for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                    self._assign(target, value, node, guards, scopes)
            elif isinstance(node, (ast.For, ast.AsyncFor, ast.With, ast.AsyncWith)):
                targets = [node.target] if hasattr(node, "target") else [i.optional_vars for i in node.items]
                for target in targets:
                    if target is not None:
                        self._assign(target, None, node, guards, scopes)
            bodies, expressions = split_fields(node)
            if expressions and any(line in lines for line in range(first_line(node), header_end(node, bodies) + 1)):
                for expression in expressions:
                    self._note_calls(expression, guards, scopes)
            if isinstance(node, ast.If):
                inner = () if is_main_guard(node.test) else ((node.test, True),)
                stack += [(c, g, scopes) for c, g in reversed(conditions.block(node.orelse, guards + ((node.test, False),)))]
                stack += [(c, g, scopes) for c, g in reversed(conditions.block(node.body, guards + inner))]
                continue
            for _, value in reversed(list(ast.iter_fields(node))):  # statements after an early exit are guarded
                if isinstance(value, list) and value and isinstance(value[0], ast.stmt):
                    stack += [(c, g, scopes) for c, g in reversed(conditions.block(value, guards))]
                elif isinstance(value, list) and value and isinstance(value[0], (ast.excepthandler, ast.match_case)):
                    stack += [(c, guards, scopes) for c in reversed(value)]

    def _note_calls(self, expression: ast.AST, guards, scopes) -> None:
        for node in ast.walk(expression):
            if isinstance(node, ast.Call):
                self.note_call(CallSite(node, guards, scopes))

    def _assign(self, target: ast.expr, value: ast.expr | None, stmt: ast.AST, guards, scopes) -> None:
        end = (stmt.end_lineno or stmt.lineno, stmt.end_col_offset or 0)
        if isinstance(target, (ast.Tuple, ast.List)):
            values = value.elts if isinstance(value, (ast.Tuple, ast.List)) else None
            if values is not None and len(values) != len(target.elts):
                values = None
            for i, element in enumerate(target.elts):
                self._assign(element, values[i] if values is not None else None, stmt, guards, scopes)
        elif isinstance(target, ast.Starred):
            self._assign(target.value, None, stmt, guards, scopes)
        elif (name := key(target)) is not None:
            self._bind(name, Binding(end, value, guards, scopes), shared=not isinstance(target, ast.Name))

    def _bind(self, key: str, binding: Binding, shared: bool = False) -> None:
        """Record an assignment; attribute chains (`opt.manualSeed`) are shared by every scope of the file."""
        scope = self.ctx.tree if shared else binding.scopes[-1]
        self.bindings.setdefault((id(scope), key), []).append(binding)

    def note_call(self, call: CallSite) -> None:
        """A call on a selected line (subclasses look for theirs and call this)."""
        self.all_calls.append(call)

    # --- default-run questions ---------------------------------------------------------------
    def defaults(self, node: ast.expr) -> object:
        """The default of option `args.<dest>` (argparse's, or a dataclass field's; found on first use)."""
        if self._lookup is None:
            self._lookup = conditions.argparse_lookup(conditions.option_defaults(self.ctx.tree,
                                                                                 (c.node for c in self.all_calls)))
        return self._lookup(node)

    def runs(self, guards, scopes) -> bool | None:
        """Whether code under `guards` runs with the default arguments (None: cannot tell)."""
        verdict: bool | None = True
        for test, wanted in guards:
            truth = conditions.truth(test, lambda node, scopes=scopes: self.known(node, scopes))
            if truth is None:
                verdict = None
            elif truth is not wanted:
                return False
        return verdict

    def known(self, node: ast.expr, scopes) -> object:
        """The default-run value of a name or attribute in a test: its assignments (a parameter: what every
        call passes, when they agree), else argparse's default."""
        binding = self.latest(node, scopes)
        if binding is None:
            return self.defaults(node) if isinstance(node, ast.Attribute) else conditions.UNKNOWN
        if binding is False:
            return conditions.UNKNOWN
        if binding.value is None:
            passed = self.passed(node.id, binding) if binding.is_parameter and isinstance(node, ast.Name) else None
            values = [self.known_value(expression, where) for expression, where in passed or ()]
            return values[0] if values and all(v is not conditions.UNKNOWN and v == values[0] for v in values) \
                else conditions.UNKNOWN
        return self.known_value(binding.value, scopes)

    def known_value(self, expression: ast.expr, scopes) -> object:
        """The default-run value of `expression` read in `scopes`, else `UNKNOWN`."""
        if self._depth > MAX_DEPTH:
            return conditions.UNKNOWN
        self._depth += 1
        try:
            return conditions.value(expression, lambda inner: self.known(inner, scopes))
        finally:
            self._depth -= 1

    def passed(self, name: str, binding: Binding) -> list[tuple[ast.expr, tuple]] | None:
        """What the calls of a parameter's function pass for it (or its default), each with the scopes to read
        it in; None when not known. Here callers are not followed: subclasses that know them say."""
        return None

    def latest(self, node: ast.expr, scopes) -> Binding | None | bool:
        """The assignment `node` reads in the default run; None if never assigned, False if unknown."""
        name = key(node)
        if name is None:
            return False
        where = start(node)
        chain = reversed(scopes) if isinstance(node, ast.Name) else (self.ctx.tree,)
        for depth, scope in enumerate(chain):
            if isinstance(scope, ast.ClassDef) and depth:
                continue
            entries = self.bindings.get((id(scope), name))
            if not entries:
                continue
            for binding in reversed(entries):
                if depth == 0 and binding.end > where:
                    continue
                runs = self.runs(binding.guards, binding.scopes)
                if runs is None:
                    return False
                if runs:
                    return binding
            return None
        return None


def start(node: ast.AST) -> Position:
    """Where a node starts (line, column)."""
    return getattr(node, "lineno", 0), getattr(node, "col_offset", 0)


def is_main_guard(test: ast.expr) -> bool:
    """`__name__ == "__main__"`."""
    return (isinstance(test, ast.Compare) and isinstance(test.left, ast.Name) and test.left.id == "__name__"
            and any(constant(c) == "__main__" for c in test.comparators))


def key(node: ast.expr) -> str | None:
    """`seed` for a name, `opt.manualSeed` for an attribute chain of names; None for anything else."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute) and (root := key(node.value)) is not None:
        return f"{root}.{node.attr}"
    return None


def assigned_before(value: ast.expr | None, before: ast.AST, scope: ast.AST) -> ast.expr | None:
    """The value `scope` last assigned (`x = ...` or `x: T = ...`) to `value`'s name or attribute chain on a line
    before `before`, not looking into nested scopes; None if none."""
    name = key(value) if isinstance(value, (ast.Name, ast.Attribute)) else None
    if name is None:
        return None
    assignments = [node for node in walk_scope(scope) if isinstance(node, (ast.Assign, ast.AnnAssign))
                   and node.value is not None and node.lineno < before.lineno and any(
                       key(target) == name for target in (node.targets if isinstance(node, ast.Assign) else [node.target]))]
    last = max(assignments, key=lambda node: node.lineno, default=None)
    return last.value if last is not None else None


def split_fields(node: ast.AST) -> tuple[list[ast.AST], list[ast.AST]]:
    """A statement's nested statements (bodies, handlers, cases) and its own expressions."""
    bodies: list[ast.AST] = []
    expressions: list[ast.AST] = []
    for name, value in ast.iter_fields(node):
        if isinstance(value, list) and value and isinstance(value[0], (ast.stmt, ast.excepthandler, ast.match_case)):
            bodies += value
        elif name not in ("decorator_list", "args", "returns") or not isinstance(node, SCOPES):
            expressions += [v for v in (value if isinstance(value, list) else [value]) if isinstance(v, ast.expr)]
    return bodies, expressions


def first_line(node: ast.AST) -> int:
    """A statement's (or handler's, or `case`'s) first line; 0 for what has none."""
    return node.pattern.lineno if isinstance(node, ast.match_case) else getattr(node, "lineno", 0)


def header_end(node: ast.AST, bodies: list[ast.AST]) -> int:
    """The last line of a statement that is not in its nested statements."""
    return first_line(bodies[0]) - 1 if bodies else getattr(node, "end_lineno", None) or first_line(node)

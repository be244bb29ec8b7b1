"""libcst helpers shared by the transforms: names, arguments, and building small pieces of code.

Name resolution reuses the lint's `ImportTracker`, filled from every import of the file (the stdlib ast
already parsed it), so a transform asks "is this `torch.randn`?" exactly as a rule does.
"""

from __future__ import annotations

import ast

import libcst as cst

from msprobe_rewriter import catalogue
from msprobe_rewriter.imports import ImportTracker


def dotted(node: cst.BaseExpression) -> str | None:
    """`a.b.c` for a Name/Attribute chain, else None."""
    parts = []
    while isinstance(node, cst.Attribute):
        parts.append(node.attr.value)
        node = node.value
    if not isinstance(node, cst.Name):
        return None
    parts.append(node.value)
    return ".".join(reversed(parts))


class Names:
    """Qualified names of libcst expressions, and which simple names the file already binds."""

    def __init__(self, tree: ast.Module, project_classes: dict[tuple[str, int, str], str] | None = None) -> None:
        """`project_classes`: the library classes that classes imported from project modules derive from, and the
        library functions that functions imported from them copy (ImportTracker.project_classes, project_functions)."""
        self.tracker = ImportTracker()
        self.tracker.project_classes = project_classes or {}
        self.bound: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                self.tracker.add_import(node)
                self.bound.update((a.asname or a.name).split(".", 1)[0] for a in node.names)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                self.bound.add(node.id)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                self.bound.add(node.name)
            elif isinstance(node, ast.arg):
                self.bound.add(node.arg)
        self.tracker.bind_subclasses(tree, catalogue.SUBCLASSED_DATA_CLASSES)

    def qualname(self, node: cst.BaseExpression) -> str | None:
        """The qualified name `node` refers to through the file's imports, or None."""
        name = dotted(node)
        if name is None:
            return None
        root, _, rest = name.partition(".")
        base = self.tracker.bindings.get(root)
        if base is None:
            return None
        return f"{base}.{rest}" if rest else base

    def binds_any(self, qualified: frozenset[str]) -> bool:
        """Whether an import binds one of `qualified` (or a module they live in, e.g. `msprobe.pytorch`)."""
        return any(target in qualified or any(q.startswith(target + ".") for q in qualified)
                   for target in self.tracker.bindings.values())

    def module_alias(self, module: str) -> str | None:
        """A name the file binds to `module` itself (`torch`, or `T` for `import torch as T`)."""
        for name, target in self.tracker.bindings.items():
            if target == module:
                return name
        return None

    def free(self, wanted: str) -> str:
        """`wanted`, or `msprobe_<wanted>` when the file already uses that name for something else."""
        return wanted if wanted not in self.bound else f"msprobe_{wanted}"


def argument(call: cst.Call, name: str, position: int | None = None) -> cst.Arg | None:
    """The argument passed as keyword `name` or at `position` (no star arguments before it)."""
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg
    if position is None:
        return None
    positional = []
    for arg in call.args:
        if arg.keyword is not None or arg.star:
            break
        positional.append(arg)
    return positional[position] if position < len(positional) else None


def has_star(call: cst.Call) -> bool:
    """Whether `call` passes `*args` or `**kwargs` (an argument may then hide in them)."""
    return any(arg.star for arg in call.args)


def set_argument(call: cst.Call, name: str, value: cst.BaseExpression, position: int | None = None) -> cst.Call:
    """`call` with argument `name` (keyword, or the one at `position`) set to `value`, added when absent. Beside
    a `**mapping` (which may hold `name` too: a keyword given twice raises) it goes into the last mapping:
    `**{**mapping, "name": value}`."""
    current = argument(call, name, position)
    if current is not None:
        return call.with_changes(args=[a.with_changes(value=value) if a is current else a for a in call.args])
    mappings = [arg for arg in call.args if arg.star == "**"]
    if mappings:
        last = mappings[-1].value
        element = cst.DictElement(cst.SimpleString(f'"{name}"'), value)
        merged = (last.with_changes(elements=[*last.elements, element]) if isinstance(last, cst.Dict)
                  else cst.Dict([cst.StarredDictElement(last), element]))
        return call.with_changes(args=[a.with_changes(value=merged) if a is mappings[-1] else a for a in call.args])
    return append_argument(call, cst.Arg(value=value, keyword=cst.Name(name),
                                         equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace(""))))


def remove_argument(call: cst.Call, arg: cst.Arg) -> cst.Call:
    """`call` without `arg`, keeping the layout of the others (trailing comma and line breaks)."""
    args = list(call.args)
    index = args.index(arg)
    del args[index]
    if args and index == len(args):  # removed the last one: its predecessor takes its comma and spacing
        args[-1] = args[-1].with_changes(comma=arg.comma, whitespace_after_arg=arg.whitespace_after_arg)
    return call.with_changes(args=args)


def append_argument(call: cst.Call, new: cst.Arg) -> cst.Call:
    """`call` with `new` as its last argument, laid out like the existing ones."""
    args = list(call.args)
    if not args:
        return call.with_changes(args=[new])
    last = args[-1]
    multiline = isinstance(last.comma, cst.Comma) and isinstance(last.comma.whitespace_after,
                                                                 cst.ParenthesizedWhitespace)
    if multiline:  # `f(\n    a,\n    b,\n)`: the new argument gets its own line and the trailing comma
        separator = args[-2].comma if len(args) > 1 and isinstance(args[-2].comma, cst.Comma) else cst.Comma(
            whitespace_after=call.whitespace_before_args)
        args[-1] = last.with_changes(comma=separator)
        args.append(new.with_changes(comma=last.comma))
    elif isinstance(last.whitespace_after_arg, cst.ParenthesizedWhitespace):  # `f(\n    a\n)`
        separator = args[-2].comma if len(args) > 1 and isinstance(args[-2].comma, cst.Comma) else cst.Comma(
            whitespace_after=cst.SimpleWhitespace(" "))
        args[-1] = last.with_changes(comma=separator, whitespace_after_arg=cst.SimpleWhitespace(""))
        args.append(new.with_changes(whitespace_after_arg=last.whitespace_after_arg))
    else:
        comma = last.comma if isinstance(last.comma, cst.Comma) else cst.MaybeSentinel.DEFAULT
        args[-1] = last.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
        args.append(new.with_changes(comma=comma))
    return call.with_changes(args=args)


def expression(code: str) -> cst.BaseExpression:
    """Parse a small expression written by a transform."""
    return cst.parse_expression(code)


def statement(code: str) -> cst.SimpleStatementLine:
    """Parse one simple statement written by a transform."""
    node = cst.parse_statement(code)
    assert isinstance(node, cst.SimpleStatementLine)
    return node


def code_of(node: cst.CSTNode) -> str:
    """Source text of an expression node (for reusing it inside generated code)."""
    return cst.Module(body=[]).code_for_node(node)


def method_call(receiver: cst.BaseExpression, method: str, *args: cst.BaseExpression) -> cst.Call:
    """`receiver.method(args...)`, parenthesising the receiver when it needs it."""
    if not isinstance(receiver, (cst.Name, cst.Attribute, cst.Call, cst.Subscript)) and not receiver.lpar:
        receiver = receiver.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return cst.Call(func=cst.Attribute(value=receiver, attr=cst.Name(method)), args=[cst.Arg(a) for a in args])


def is_literal(node: cst.BaseExpression | None, value: object) -> bool:
    """Whether `node` is the literal `value` (True/False/None or a number)."""
    if node is None:
        return False
    if isinstance(node, cst.Name) and node.value in ("True", "False", "None"):
        return {"True": True, "False": False, "None": None}[node.value] is value
    if isinstance(node, (cst.Integer, cst.Float)):
        return not isinstance(value, bool) and node.evaluated_value == value
    return False


def is_pure(node: cst.BaseExpression) -> bool:
    """A Name/Attribute chain, also indexed by such chains, numbers or slices of them (BLIP's `weights_t2i[b]`,
    `x[:, 0]`): evaluating it twice is harmless and gives the same tensor."""
    while isinstance(node, (cst.Attribute, cst.Subscript)):
        if isinstance(node, cst.Subscript) and not all(_pure_index(element.slice) for element in node.slice):
            return False
        node = node.value
    return isinstance(node, cst.Name)


def _pure_index(index: cst.BaseSlice) -> bool:
    """An index of `is_pure`: a pure expression, a number (`-1` too), or a slice of them."""
    parts = [index.value] if isinstance(index, cst.Index) else [index.lower, index.upper, index.step]
    return all(part is None or isinstance(part, (cst.Integer, cst.Ellipsis)) or is_pure(part)
               or isinstance(part, cst.UnaryOperation) and isinstance(part.expression, cst.Integer) for part in parts)

"""Where statements sit and which names a scope binds, for the training-loop search (stdlib ast only)."""

from __future__ import annotations

import ast

from msprobe_rewriter.context import FUNCTION_TYPES, walk_scope

Function = ast.FunctionDef | ast.AsyncFunctionDef | None


def assigned_before(scope: ast.AST, name: str, line: int) -> bool:
    """Whether `scope` (a function or the module) assigns `name` a value before line `line`; a placeholder
    (`net = None`, built on the first iteration) is not one."""
    nodes = list(walk_scope(scope))
    placeholders = {id(target) for n in nodes if isinstance(n, (ast.Assign, ast.AnnAssign))
                    and isinstance(n.value, ast.Constant) and n.value.value is None
                    for target in (n.targets if isinstance(n, ast.Assign) else [n.target])}
    return any(isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store) and n.id == name and n.lineno < line
               and id(n) not in placeholders for n in nodes)


def top_statement(node: ast.stmt, parents: dict[ast.AST, ast.AST]) -> ast.stmt:
    """The statement of its function's (or the module's) own body that contains `node`."""
    while not isinstance(parents.get(node), (*FUNCTION_TYPES, ast.Module)):
        node = parents[node]
    return node


def first_in_common_block(statements: list[ast.stmt], parents: dict[ast.AST, ast.AST]) -> ast.stmt:
    """The first statement, of the innermost block of one function (or the module) holding all of
    `statements`, that contains one of them (an `if __name__ == "__main__":` block's loop that comes first);
    the compound statement around them when they lie in different blocks of it (an `if` and its `else`)."""
    chains = []
    for statement in statements:
        chain, node = [statement], statement
        while not isinstance(parents.get(node), (*FUNCTION_TYPES, ast.Module)):
            node = parents[node]
            if isinstance(node, ast.stmt):
                chain.append(node)
        chains.append(chain[::-1])  # from the function's own body down
    shared = 0  # how many statements every chain starts with
    while all(len(chain) > shared for chain in chains) and len({id(chain[shared]) for chain in chains}) == 1:
        shared += 1
    if shared and any(len(chain) == shared for chain in chains):  # one statement holds the others
        return chains[0][shared - 1]
    candidates = [chain[shared] for chain in chains]
    if shared and not _one_block(candidates, chains[0][shared - 1]):
        return chains[0][shared - 1]
    return min(candidates, key=lambda statement: statement.lineno)


def _one_block(statements: list[ast.stmt], owner: ast.stmt) -> bool:
    """Whether `statements`, each inside compound statement `owner`, all lie in one of its blocks."""
    blocks = [block for field in ("body", "orelse", "finalbody") if isinstance(block := getattr(owner, field, None), list)]
    blocks += [handler.body for handler in getattr(owner, "handlers", ())]
    blocks += [case.body for case in getattr(owner, "cases", ())]
    return any(all(any(item is statement for item in block) for statement in statements) for block in blocks)


def parameters_of(function: Function) -> set[str]:
    """The names of a function's parameters (none for the module)."""
    if not isinstance(function, FUNCTION_TYPES):
        return set()
    args = function.args
    return {a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg] if a is not None}


def taken_from_parameters(function: Function, name: str) -> bool:
    """Whether every assignment of `name` in `function` reads it off the function's parameters (open_clip's
    `task, optimizer = state.task, state.optimizer`; also a part of one, vits' `net_g, net_d = nets` or `nets[0]`):
    what it names lives outside the function, as a parameter's value does."""
    parameters = parameters_of(function)
    values: list[ast.expr] = []
    for node in walk_scope(function) if parameters else ():
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                values += _values_bound(target, node.value, name)
    values = [value.value if isinstance(value, ast.Subscript) else value for value in values]
    return bool(values) and all(is_name_chain(value) and root_name(value) in parameters for value in values)


def _values_bound(target: ast.expr, value: ast.expr, name: str) -> list[ast.expr]:
    """The values an assignment gives `name`, element by element when a tuple is unpacked from a tuple (a value
    unpacked whole for each part of it)."""
    if isinstance(target, ast.Name):
        return [value] if target.id == name else []
    if isinstance(target, (ast.Tuple, ast.List)):
        if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts):
            return [found for t, v in zip(target.elts, value.elts, strict=True) for found in _values_bound(t, v, name)]
        if any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(target)):
            return [value]
    return []


def bound_names(scope: ast.AST) -> set[str]:
    """The names a scope binds: its parameters, assignments and imports (not those of nested scopes)."""
    names = parameters_of(scope)
    for node in walk_scope(scope):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".", 1)[0] for a in node.names)
    return names
def root_name(node: ast.expr) -> str:
    """The name an attribute chain starts from (`model` of `model.module.head`; "" for other expressions)."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return node.id if isinstance(node, ast.Name) else ""


def is_name_chain(node: ast.expr) -> bool:
    """Whether `node` is a name or an attribute chain on one (`model`, `self.net.head`)."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name)


def argument(call: ast.Call, position: int, name: str) -> ast.expr | None:
    """A call's argument given by keyword `name` or at `position`, else None."""
    for kw in call.keywords:
        if kw.arg == name:
            return kw.value
    return call.args[position] if len(call.args) > position else None


def inside(inner: ast.stmt, outer: ast.stmt) -> bool:
    """Whether statement `inner` lies within statement `outer` (by lines)."""
    return outer.lineno <= inner.lineno and inner.end_lineno <= outer.end_lineno and inner is not outer


def source_text(source: str, node: ast.AST) -> str | None:
    """The source of `node`, its runs of whitespace collapsed when it lies on one line."""
    text = ast.get_source_segment(source, node)
    return " ".join(text.split()) if text is not None and "\n" not in text else text

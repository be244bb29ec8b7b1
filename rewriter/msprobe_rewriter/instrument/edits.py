"""A file's planned edits and the single pass that applies them all.

Transforms only plan: replace a node (a function from the updated node to its new version), or insert
statements before or after a statement. `apply` rebuilds the paths from the edited nodes to the module
in one pass (a full libcst visit costs as much as parsing), then adds and removes imports with libcst's
own import visitors, run on the module's leading imports only.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

import libcst as cst
from libcst.codemod import CodemodContext
from libcst.codemod.visitors import AddImportsVisitor, ImportItem, RemoveImportsVisitor
from libcst.helpers import get_full_name_for_node

Rewrite = Callable[[cst.CSTNode], cst.CSTNode]
FRAMEWORK_ROOTS = frozenset({"torch", "torch_npu", "mindspore"})  # what the runtime imports when imported


@dataclass
class Edits:
    """What one run will change in one file."""

    replace: dict[cst.CSTNode, list[Rewrite]] = field(default_factory=dict)
    before: dict[cst.CSTNode, list[cst.BaseStatement]] = field(default_factory=dict)
    after: dict[cst.CSTNode, list[cst.BaseStatement]] = field(default_factory=dict)
    module_start: list[cst.BaseStatement] = field(default_factory=list)
    imports: list[ImportItem] = field(default_factory=list)
    unused_imports: dict[tuple[str, str, str | None], int] = field(default_factory=dict)  # (module, name, alias)
    swaps: dict[tuple[str, str, str], tuple[str, str]] = field(default_factory=dict)  # old import -> new

    def rewrite(self, node: cst.CSTNode, rewrite: Rewrite) -> None:
        """Replace `node` by `rewrite(updated node)`."""
        self.replace.setdefault(node, []).append(rewrite)

    def insert_before(self, statement: cst.CSTNode, new: list[cst.BaseStatement]) -> None:
        """Put `new` right before `statement` (which keeps its blank lines and comments above the new code)."""
        self.before.setdefault(statement, []).extend(new)

    def insert_after(self, statement: cst.CSTNode | None, new: list[cst.BaseStatement]) -> None:
        """Put `new` right after `statement`; None means the top of the module (after docstring/futures)."""
        if statement is None:
            self.module_start.extend(new)
        else:
            self.after.setdefault(statement, []).extend(new)

    def add_import(self, module: str, name: str | None = None, alias: str | None = None) -> None:
        """`from module import name as alias` (or `import module`) unless the file has it."""
        item = ImportItem(module, name, alias)
        if item not in self.imports:
            self.imports.append(item)

    def drop_import_if_unused(self, qualified: str, local: str) -> None:
        """Remove the import binding `local` to `qualified` (`module.name`) when nothing uses it any more."""
        module, _, name = qualified.rpartition(".")
        key = (module, name, None if local == name else local)
        self.unused_imports[key] = self.unused_imports.get(key, 0) + 1

    def swap_import(self, qualified: str, local: str, module: str, name: str) -> None:
        """Code now uses `name` from `module` instead of `local` (bound to `qualified`): import it, renaming
        the old import in place when nothing uses the old name any more (see `drop_import_if_unused`)."""
        self.swaps[(qualified.rpartition(".")[0], qualified.rpartition(".")[2], local)] = (module, name)
        self.add_import(module, name)

    def __bool__(self) -> bool:
        return bool(self.replace or self.before or self.after or self.module_start or self.imports)


def _replace_child(parent: cst.CSTNode, old: cst.CSTNode, new) -> cst.CSTNode:
    """`parent` with its child `old` replaced by `new` (a node, a FlattenSentinel or a RemovalSentinel)."""
    for name in parent.__dataclass_fields__:
        value = getattr(parent, name)
        if value is old:
            return parent.with_changes(**{name: new})
        if isinstance(value, (tuple, list)) and any(item is old for item in value):
            items = []
            for item in value:
                if item is not old:
                    items.append(item)
                elif isinstance(new, cst.FlattenSentinel):
                    items.extend(new.nodes)
                elif not isinstance(new, cst.RemovalSentinel):
                    items.append(new)
            return parent.with_changes(**{name: items})
    raise ValueError(f"{type(old).__name__} is not a child of {type(parent).__name__}")


class _Rebuild:
    """Apply the edits by rebuilding only the paths from the edited nodes up to the module."""

    def __init__(self, edits: Edits, path: Callable[[cst.CSTNode], list[cst.CSTNode]], extra) -> None:
        self.edits = edits
        self.extra = extra  # more rewrites (node -> list), applied after the planned ones
        self.children: dict[cst.CSTNode, list[cst.CSTNode]] = {}
        targets = [*edits.replace, *edits.before, *edits.after, *extra]
        for target in targets:
            chain = path(target)
            for child, parent in zip(chain, chain[1:], strict=False):
                siblings = self.children.setdefault(parent, [])
                if child in siblings:
                    break
                siblings.append(child)

    def build(self, node: cst.CSTNode):
        updated = node
        for child in self.children.get(node, ()):
            updated = _replace_child(updated, child, self.build(child))
        for rewrite in [*self.edits.replace.get(node, ()), *self.extra.get(node, ())]:
            updated = rewrite(updated)
        if isinstance(updated, cst.Module) and self.edits.module_start:
            body = list(updated.body)
            at = 1 if body and _is_docstring(body[0]) else 0
            while at < len(body) and _is_future(body[at]):
                at += 1
            return updated.with_changes(body=[*body[:at], *self.edits.module_start, *body[at:]])
        before, after = self.edits.before.get(node), self.edits.after.get(node)
        if not before and not after:
            return updated
        nodes = list(updated.nodes) if isinstance(updated, cst.FlattenSentinel) else [updated]
        if before:
            lead = nodes[0]
            before = [before[0].with_changes(leading_lines=lead.leading_lines), *before[1:]]
            nodes[0] = lead.with_changes(leading_lines=[])
        return cst.FlattenSentinel([*(before or ()), *nodes, *(after or ())])


def _is_docstring(statement: cst.CSTNode) -> bool:
    return (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1
            and isinstance(statement.body[0], cst.Expr) and isinstance(statement.body[0].value,
                                                                       (cst.SimpleString, cst.ConcatenatedString)))


def _is_future(statement: cst.CSTNode) -> bool:
    return (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1
            and isinstance(statement.body[0], cst.ImportFrom) and isinstance(statement.body[0].module, cst.Name)
            and statement.body[0].module.value == "__future__")


def apply(module: cst.Module, edits: Edits, path: Callable[[cst.CSTNode], list[cst.CSTNode]], original_text: str,
          extra: dict | None = None) -> cst.Module:
    """`module` with every planned edit (then the `extra` rewrites, node -> list) applied and its imports
    fixed up; only the paths from edited nodes to the module are rebuilt."""
    result = rebuild(module, edits, path, extra)
    unused = {item for item, uses in edits.unused_imports.items() if _unused(original_text, item[2] or item[1], uses)}
    imports = list(edits.imports)
    renames = {}
    for (old_module, old_name, local), new in edits.swaps.items():
        key = (old_module, old_name, None if local == old_name else local)
        if key in unused and new[0] == old_module and local == old_name:
            imports.remove(ImportItem(*new))
            if not _imports_name(module, *new):  # else the old name just goes (no second `CenterCrop`)
                renames[(old_module, old_name)] = new[1]
                unused.discard(key)
    blocks: dict[int, tuple[dict, list]] = {}  # start of an import block -> its renames and unused imports
    for (module_name, name), new_name in renames.items():
        blocks.setdefault(_import_block(result, module_name, name), ({}, []))[0][(module_name, name)] = new_name
    for item in unused:
        blocks.setdefault(_import_block(result, item[0], item[1]), ({}, []))[1].append(item)
    for start in sorted(blocks, reverse=True):  # the later blocks first: the earlier ones keep their place
        block_renames, block_unused = blocks[start]
        visitors = [_Rename(block_renames)] if block_renames else []
        if block_unused:
            context = CodemodContext()
            for module_name, name, alias in sorted(block_unused, key=str):
                RemoveImportsVisitor.remove_unused_import(context, module_name, name, alias)
            visitors.append(RemoveImportsVisitor(context))
        result = _fixed_block(result, visitors, start)
    if imports:
        context = CodemodContext()
        for item in imports:
            AddImportsVisitor.add_needed_import(context, item.module, item.obj_name, item.alias)
        result = _fixed_block(result, [AddImportsVisitor(context)], _framework_block(result))
    return result


def _imports_name(module: cst.Module, module_name: str, name: str) -> bool:
    """Whether a top-level `from module_name import name` is in `module` already."""
    for statement in module.body:
        if not _is_import_line(statement):
            continue
        for item in statement.body:
            if (isinstance(item, cst.ImportFrom) and not item.relative and item.module is not None
                    and get_full_name_for_node(item.module) == module_name and not isinstance(item.names, cst.ImportStar)
                    and any(get_full_name_for_node(alias.name) == name and alias.asname is None for alias in item.names)):
                return True
    return False


def rebuild(module: cst.Module, edits: Edits, path: Callable[[cst.CSTNode], list[cst.CSTNode]],
            extra: dict | None = None) -> cst.Module:
    """`module` with the planned node edits (and `extra` rewrites) applied; imports untouched."""
    return _Rebuild(edits, path, extra or {}).build(module)


class _Rename(cst.CSTTransformer):
    """`from m import Old` -> `from m import New` for names a twin replaced everywhere."""

    def __init__(self, renames: dict[tuple[str, str], str]) -> None:
        super().__init__()
        self.renames = renames

    def transform_module(self, module: cst.Module) -> cst.Module:
        return module.visit(self)

    def leave_ImportFrom(self, original, updated):
        if updated.relative or isinstance(updated.names, cst.ImportStar) or updated.module is None:
            return updated
        module = cst.Module(body=[]).code_for_node(updated.module)
        names = [alias.with_changes(name=cst.Name(self.renames[(module, alias.name.value)]))
                 if isinstance(alias.name, cst.Name) and alias.asname is None
                 and (module, alias.name.value) in self.renames else alias for alias in updated.names]
        return updated.with_changes(names=names)


def _fixed_block(module: cst.Module, visitors: list, start: int) -> cst.Module:
    """`module` with the import visitors run on its block of top-level imports that begins at statement `start`
    (all they read or change).

    libcst's import visitors add after, and merge into, the first block of top-level imports; they see only
    this block, and the statement after it is replaced by a stand-in during the visit (libcst's visitors cost a
    lot per node).
    """
    body = list(module.body)
    at = start
    while at < len(body) and _is_import_line(body[at]):
        at += 1
    stand_in = [cst.SimpleStatementLine([cst.Pass()], leading_lines=body[at].leading_lines)] if at < len(body) else []
    head = module.with_changes(body=[*body[start:at], *stand_in])
    for visitor in visitors:
        head = visitor.transform_module(head)
    return module.with_changes(body=[*body[:start], *_joined(list(head.body), body[at:])])


def _first_statement(module: cst.Module) -> int:
    """Where the module's leading imports begin (after its docstring)."""
    return 1 if module.body and _is_docstring(module.body[0]) else 0


def _import_block(module: cst.Module, module_name: str, name: str | None) -> int:
    """Where the block of top-level imports that imports `name` from `module_name` (`module_name` itself when
    `name` is None) begins: not always the leading one (ModelZoo's scripts import `torch_npu` under an `if`
    before `from torch.utils.data import RandomSampler`); the leading imports if none."""
    body, first = list(module.body), _first_statement(module)
    for index, statement in enumerate(body):
        if _is_import_line(statement) and any(_imports(item, module_name, name) for item in statement.body):
            while index > first and _is_import_line(body[index - 1]):
                index -= 1
            return index
    return first


def _imports(statement: cst.BaseSmallStatement, module_name: str, name: str | None) -> bool:
    if isinstance(statement, cst.Import):
        return name is None and any(get_full_name_for_node(alias.name) == module_name for alias in statement.names)
    return (name is not None and not statement.relative and statement.module is not None
            and get_full_name_for_node(statement.module) == module_name and not isinstance(statement.names, cst.ImportStar)
            and any(get_full_name_for_node(alias.name) == name for alias in statement.names))


def _framework_block(module: cst.Module) -> int:
    """Where the block of top-level imports holding the file's first import of a framework begins: new imports (of
    the runtime, which imports the framework) go there, after any code the file runs before importing it
    (`os.environ["OMP_NUM_THREADS"] = "1"` read when torch is imported); the leading imports if none."""
    body, first = list(module.body), _first_statement(module)
    for index, statement in enumerate(body):
        if _is_import_line(statement) and any(_imports_framework(item) for item in statement.body):
            while index > first and _is_import_line(body[index - 1]):
                index -= 1
            return index
    return first


def _is_import_line(statement: cst.CSTNode) -> bool:
    return isinstance(statement, cst.SimpleStatementLine) and all(
        isinstance(s, (cst.Import, cst.ImportFrom)) for s in statement.body)


def _imports_framework(statement: cst.BaseSmallStatement) -> bool:
    if isinstance(statement, cst.Import):
        names = [get_full_name_for_node(alias.name) or "" for alias in statement.names]
    else:
        names = [get_full_name_for_node(statement.module) or ""] if statement.module and not statement.relative else []
    return any(name.split(".", 1)[0] in FRAMEWORK_ROOTS for name in names)


def _joined(head: list[cst.CSTNode], rest: list[cst.CSTNode]) -> list[cst.CSTNode]:
    """The new leading imports and the statements after them, unchanged: the blank line the visitors
    would put above the first of them is left out (it would be one more line to mark)."""
    return [*head[:-1], *rest] if rest else head


def _unused(text: str, name: str, replaced: int) -> bool:
    """Whether the original text uses `name` only in its import and the `replaced` places edits rewrote."""
    return len(re.findall(rf"(?<![\w.]){re.escape(name)}\b", text)) <= 1 + replaced

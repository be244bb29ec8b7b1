"""Code an entry script takes from project modules that the run leaves out: a note naming them.

Swin's and ConvNeXt's `main.py` build their loaders, samplers and augmentation in `data/build.py` or
`datasets.py`, sd-scripts draws its noise in `library/train_util.py`: instrumenting the entry script alone leaves
the data order, augmentation and device draws random. The note names each such module that msprobe-instrument
would change, with the findings it would fix there, so the user adds it to the run. A module with only findings
it cannot fix (draws written by hand) is not named: instrumenting it changes nothing. Also: the project class a
call builds, which the transforms read to fix its use (a sampler's `shuffle=`, a random transform in a list).
"""

from __future__ import annotations

import ast
import os
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from msprobe_rewriter import project
from msprobe_rewriter.assignments import is_main_guard
from msprobe_rewriter.context import FUNCTION_TYPES
from msprobe_rewriter.instrument.unit import Unit, shown_path
from msprobe_rewriter.lint.engine import lint_source
from msprobe_rewriter.rules import RULES_BY_NAME

# The transforms that fix code wherever it is (the others seed, wrap or switch in the entry script itself).
FOLLOWED = ("data-shuffle", "data-workers", "random-augment", "unsorted-file-list", "device-rng", "noncontiguous")
HOPS = 2  # the script's calls into project modules, and theirs


def followed(selected: frozenset[str]) -> frozenset[str]:
    """The selected transforms whose fixes in project modules the note is about."""
    return frozenset(name for name in FOLLOWED if name in selected)


def note_data_elsewhere(unit: Unit, would_change: Callable[[Path], bool]) -> None:
    """Note the project modules the entry script calls into that the followed transforms would change
    (`would_change`), when this run does not instrument them."""
    rules = [RULES_BY_NAME[name] for name in followed(unit.options.selected)]
    if not rules or not unit.ctx.is_entry_script():
        return
    found = []
    for path, (module, names) in _called_modules(unit).items():
        if os.path.abspath(path) in unit.options.given or os.path.abspath(path) == os.path.abspath(unit.path):
            continue
        unused = _unused_lines(module, names)
        findings = [finding for finding in lint_source(str(path), path.read_bytes(), rules).findings
                    if finding.fixable and not any(first <= finding.line <= last for first, last in unused)]
        if findings and would_change(path):
            counts = Counter(finding.code for finding in findings)
            found.append((path, ", ".join(f"{code} x{count}" for code, count in sorted(counts.items()))))
    if found:
        where = "; ".join(f"{shown_path(path)} ({counts})" for path, counts in found)
        files = " ".join(shown_path(path) for path, _ in found)
        unit.note(None, f"code msprobe-instrument would change in project modules this script calls, left out of "
                        f"this run: {where}: instrument them too (msprobe-instrument --write {unit.path} {files})")


def _called_modules(unit: Unit) -> dict[Path, tuple[project.Module, set[str]]]:
    """The project modules whose functions or classes the file calls, and those these functions call in turn
    (Swin's `data/__init__.py` `build_loader` hands over to `data/build.py`; each function called, BLIP's
    `create_dataset` after `create_sampler` of the same module), HOPS deep, in the order reached, each
    with the names of those called; a call of an item of a module's dict of its functions or classes calls them
    (DiT's `DiT_models[args.model](...)`), and one handed to a call runs (`mp.Process(target=train)`, OpenRLHF's
    `PPORayActorGroup(..., PolicyModelActor, ...)`)."""
    tree = unit.tree
    defined = {node.name for node in ast.walk(tree) if isinstance(node, (*FUNCTION_TYPES, ast.ClassDef))}
    todo = [(tree, project.local_imports(project.import_statements(tree.body, aliases=True)), defined,
             project.file_folder(unit.path))]
    modules: dict[Path, tuple[project.Module, set[str]]] = {}
    followed: set[int] = set()  # each member once, whichever call of its module comes first
    for _ in range(HOPS):
        reached = []
        for scope, local, names, folder in todo:
            if not local.refs and not local.stars:
                continue
            calls = [node for node in ast.walk(scope) if isinstance(node, ast.Call)]
            items = [ast.Call(func=call.func.value, args=[], keywords=[]) for call in calls
                     if isinstance(call.func, ast.Subscript)]  # `DiT_models[args.model](...)`: of `DiT_models`
            of_items = {id(item) for item in items}
            handed = [ast.Call(func=arg, args=[], keywords=[]) for call in calls  # OpenRLHF's actor classes, handed
                      for arg in (*call.args, *(k.value for k in call.keywords)) if isinstance(arg, ast.Name)]  # to Ray
            for call, name, module in project.reached([*calls, *items, *handed], local, names, folder):
                members = _members(module, name, dict_only=id(call) in of_items)
                if members is None:
                    continue
                reached += [(member, module.local, {*module.functions, *module.classes}, module.path.parent)
                            for member in members if id(member) not in followed]
                followed.update(map(id, members))
                modules.setdefault(module.path, (module, set()))[1].update(member.name for member in members)
        todo = reached
    return modules


def _unused_lines(module: project.Module, called: set[str]) -> list[tuple[int, int]]:
    """The line spans of a module that a script calling its functions and classes `called` never runs: its `__main__`
    block, and the functions and classes of its own that only that block names (FastChat's
    llama2_flash_attn_monkey_patch.py: its self-test `test()`). One named nowhere counts: a registry or the script
    may reach it by name (DINO's `vits.__dict__[args.arch]`)."""
    body = module.tree.body
    guards = [node for node in body if isinstance(node, ast.If) and is_main_guard(node.test)]
    members = {node.name: node for node in body if isinstance(node, (*FUNCTION_TYPES, ast.ClassDef))}

    def named(nodes: list[ast.AST]) -> set[str]:
        return {name.id for node in nodes for name in ast.walk(node) if isinstance(name, ast.Name)}

    tested = named(guards) - called
    unused = [node for name, node in members.items() if name in tested
              and name not in named([other for other in body if other is not node and other not in guards])]
    return [(node.lineno, node.end_lineno) for node in [*guards, *unused]]


def _members(module: project.Module, name: str, dict_only: bool) -> list[ast.AST] | None:
    """The module's functions or classes a call of its `name` runs: the function or class of that name (empty when
    it has none), or those a module-level dict display of that name holds as values; None when `dict_only` (an
    item of `name` is called) and `name` is no such dict."""
    members = {**module.functions, **module.classes}
    if not dict_only:
        return [members[name]] if name in members else []
    held = [value.id for node in module.tree.body if isinstance(node, ast.Assign) and isinstance(node.value, ast.Dict)
            and any(isinstance(target, ast.Name) and target.id == name for target in node.targets)
            for value in node.value.values if isinstance(value, ast.Name) and value.id in members]
    return [members[value] for value in dict.fromkeys(held)] or None


def project_class(unit: Unit, call: ast.Call) -> tuple[ast.ClassDef, project.Module | None] | None:
    """The class `call` builds: one the file defines (module None), or one of a project module it imports
    (llama-cookbook's `LengthBasedBatchSampler`, LAVIS's `RandomAugment`), with that module; None for any other."""
    if isinstance(call.func, ast.Name):
        own = next((node for node in unit.tree.body if isinstance(node, ast.ClassDef) and node.name == call.func.id),
                   None)
        if own is not None:
            return own, None
    local = project.local_imports(project.import_statements(unit.tree.body))
    for _, name, module in project.reached([call], local, (), project.file_folder(unit.path)):
        if name in module.classes:
            return module.classes[name], module
    return None

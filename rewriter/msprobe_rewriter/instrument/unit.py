"""Everything transforms read about one file, computed once: trees, names, loops, findings, positions."""

from __future__ import annotations

import ast
import builtins
import os
import re
from collections.abc import Callable
from pathlib import Path

import libcst as cst

from msprobe_rewriter import catalogue, project
from msprobe_rewriter.context import FileContext
from msprobe_rewriter.finding import Finding
from msprobe_rewriter.instrument import loops
from msprobe_rewriter.instrument.edits import FRAMEWORK_ROOTS, Edits
from msprobe_rewriter.instrument.nodes import Names
from msprobe_rewriter.instrument.options import Options
from msprobe_rewriter.instrument.structure import Structure, span_of
from msprobe_rewriter.lint.engine import char_column

# Module-level calls that neither draw random numbers nor build anything (seeding may go after them).
SAFE_MODULES = frozenset({"os", "sys", "warnings", "logging", "argparse", "pathlib", "typing", "dataclasses",
                          "collections", "functools", "math", "itertools", "json", "re", "time", "datetime"})
# Lines importing a framework, read in a folder's other files (`_folder_framework`).
FRAMEWORK_IMPORT_LINES = {"pytorch": re.compile(r"^\s*(?:import|from)\s+torch\b", re.MULTILINE),
                          "mindspore": re.compile(r"^\s*(?:import|from)\s+mindspore\b", re.MULTILINE)}
# Packages of other frameworks' models: a file that trains with one of them and takes from PyTorch at most
# `torch.utils` (TensorBoard's SummaryWriter, a DataLoader feeding JAX arrays) has nothing to instrument.
OTHER_FRAMEWORKS = {"jax": "JAX", "flax": "JAX", "tensorflow": "TensorFlow", "keras": "Keras", "paddle": "PaddlePaddle",
                    "caffe2": "Caffe2"}


def shown_path(path) -> str:
    """A path as the user would type it: relative to the working folder when it lies below it."""
    relative = os.path.relpath(path)
    return str(path) if relative.startswith("..") else relative


class Unit:
    """One file being instrumented."""

    def __init__(self, path: str, text: str, tree: ast.Module, options: Options, findings: list[Finding]) -> None:
        self.path = path
        self.text = text
        self.tree = tree
        self.options = options
        self.ctx = FileContext(path, text, tree)
        self.analysis = loops.analyse(self.ctx)
        self.names = Names(tree, {**self.ctx.imports.project_classes, **self.ctx.imports.project_functions})
        self._structure: Structure | None = None
        self.edits = Edits()
        self.notes: list[str] = []
        self.findings: dict[str, list[Finding]] = {}
        for finding in findings:
            self.findings.setdefault(finding.name, []).append(finding)
        imports = self.ctx.imports
        # mindnlp makes `torch` mindtorch, which runs on MindSpore: MindSpore's runtime seeds it (imported by the
        # file, or by the package `__init__` files a module of mindnlp runs after).
        self.torch_on_mindspore = any(tracker.imports_root(root) for root in catalogue.TORCH_ON_MINDSPORE for tracker in
                                      (imports, *(m.imports for m in project.package_inits(path, tree))))
        mindspore = imports.imports_root("mindspore") or any(imports.imports_root(r) for r in catalogue.MINDSPORE_SUITES)
        self.imports_framework = imports.imports_root("torch") or mindspore or self.torch_on_mindspore
        mindspore_only = mindspore and not imports.imports_root("torch")
        self.framework = "mindspore" if mindspore_only or self.torch_on_mindspore else "pytorch"
        if not self.imports_framework and _folder_framework(path) == "mindspore":
            self.framework = "mindspore"  # mindaudio's numpy-only reader.py beside its MindSpore train script
        self.other_framework = None if self._uses_torch_models() or imports.imports_root("mindspore") else next(
            (OTHER_FRAMEWORKS[root] for root in _imported_roots(imports) if root in OTHER_FRAMEWORKS), None)
        if self.other_framework and loops.loops_in_helpers(self.ctx):  # TensorFlow for its file utilities only
            self.other_framework = None  # (score_sde's main.py: tf.io.gfile; run_lib.train is PyTorch's loop)
        self._runtime_names: dict[str, str] = {}
        self.shared: dict[str, object] = {}  # what one transform leaves for a later one
        self.wraps: dict[cst.CSTNode, list] = {}  # loop -> rewrites for the try/finally wrap

    @property
    def structure(self) -> Structure:
        """The libcst module and its statement index (parsed on first use: many files need neither)."""
        if self._structure is None:
            self._structure = Structure(cst.parse_module(self.text), self.tree)
        return self._structure

    def note(self, line: int | None, message: str) -> None:
        """Explain something the run did not (or could not) do."""
        self.notes.append(f"{self.path}:{line}: {message}" if line else f"{self.path}: {message}")

    def _uses_torch_models(self) -> bool:
        return any(name.split(".", 1)[0] == "torch" and not name.startswith("torch.utils.")
                   for name in self.ctx.imports.bindings.values())

    # --- names -----------------------------------------------------------------------------
    def runtime(self, name: str) -> str:
        """The local name of the runtime's `name` (imported on first use; aliased if the name is taken)."""
        if name not in self._runtime_names:
            local = self.names.free(name)
            self.edits.add_import(self.options.module(self.framework), name, None if local == name else local)
            self._runtime_names[name] = local
        return self._runtime_names[name]

    def module_name(self, module: str, before: int | None = None) -> str:
        """A name bound to `module` in this file (`torch`, `T`), importing it when there is none (or, with
        `before`, none bound by a top-level import above that line: a notebook export imports `os` halfway down)."""
        alias = self.names.module_alias(module)
        if alias is not None and before is not None and not any(
                isinstance(node, ast.Import) and node.lineno < before
                and any(item.name == module and (item.asname or item.name) == alias for item in node.names)
                for node in self.tree.body):
            alias = None
        if alias is None:
            self.edits.add_import(module)
            alias = module
        return alias

    # --- from the stdlib ast to libcst ------------------------------------------------------
    def span(self, node: ast.AST) -> tuple[int, int, int, int]:
        """An ast node's span as (line, column, end line, end column), 0-based character columns."""
        line, end_line = node.lineno, node.end_lineno or node.lineno
        column = char_column(self.ctx.line_text(line), node.col_offset)
        end_column = char_column(self.ctx.line_text(end_line), node.end_col_offset or 0)
        return line, column, end_line, end_column

    def node_for(self, node: ast.AST, kind: type | tuple[type, ...]) -> cst.CSTNode | None:
        """The innermost libcst node of `kind` covering an ast node."""
        span = self.span(node)
        return self.structure.innermost([span], lambda n: isinstance(n, kind)).get(span)

    def statement(self, node: ast.stmt) -> cst.CSTNode | None:
        """The libcst statement an ast statement corresponds to."""
        return self.structure.statement(node)

    def sites_for(self, rule: str, accept: Callable[[cst.CSTNode], bool]) -> list[tuple[Finding, cst.CSTNode]]:
        """(finding, node) for each finding of `rule`, with the innermost accepted node around it."""
        findings = self.findings.get(rule, [])
        if not findings:
            return []
        found = self.structure.innermost([span_of(f) for f in findings], accept)
        return [(f, found[span_of(f)]) for f in findings if span_of(f) in found]

    # --- where module-level code goes -------------------------------------------------------
    def after_imports(self) -> cst.BaseStatement | None:
        """The statement module-level setup goes after: the last import before the first statement that
        runs anything but harmless setup (None: the top of the module)."""
        last = self._last_setup_import()
        return None if last is None else self.statement(last)

    def after_imports_line(self) -> int:
        """The line module-level setup runs at (see `after_imports`)."""
        last = self._last_setup_import()
        return 1 if last is None else (last.end_lineno or last.lineno) + 1

    def _last_setup_import(self) -> ast.stmt | None:
        body, last = self.tree.body, None
        for statement in body:
            if _is_import_block(statement, self._runs_code):
                last = statement
            elif self._runs_code(statement):
                break
        framework = next((i for i, s in enumerate(body) if _imports_framework(s)), None)
        if framework is not None and (last is None or framework > body.index(last)):
            # the runtime's import joins the framework's block (edits.apply), and setup that uses it follows
            while framework + 1 < len(body) and isinstance(body[framework + 1], (ast.Import, ast.ImportFrom)):
                framework += 1
            last = body[framework]
        return last

    def _runs_code(self, statement: ast.stmt) -> bool:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            return False
        for node in ast.walk(statement):
            if isinstance(node, ast.Call):
                func = node.func
                while isinstance(func, (ast.Attribute, ast.Call)):
                    func = func.value if isinstance(func, ast.Attribute) else func.func
                root = func.id if isinstance(func, ast.Name) else None
                module = self.names.tracker.bindings.get(root or "", "")
                if module.split(".", 1)[0] not in SAFE_MODULES and not (not module and hasattr(builtins, root or "")):
                    return True
        return False


def _is_import_block(statement: ast.stmt, runs_code: Callable[[ast.stmt], bool]) -> bool:
    """An import, or an `if`/`try` made only of imports and of fallbacks that run nothing (`X = None`): not an
    `if __name__ == "__main__":` block that imports argparse and then trains."""
    if isinstance(statement, (ast.Import, ast.ImportFrom)):
        return True
    if isinstance(statement, (ast.If, ast.Try)):
        inner = [*statement.body, *statement.orelse, *getattr(statement, "finalbody", [])]
        for handler in getattr(statement, "handlers", []):
            inner += handler.body
        has_import = any(isinstance(s, (ast.Import, ast.ImportFrom)) for s in inner)
        return has_import and all(isinstance(s, (ast.Import, ast.ImportFrom)) or
                                  (isinstance(s, (ast.Pass, ast.Assign, ast.Expr)) and not runs_code(s)) for s in inner)
    return False


def _folder_framework(path: str) -> str | None:
    """The framework most of the other Python files in `path`'s folder import ("pytorch", "mindspore"), for a
    file that imports none: its runtime import must not bring in a framework the project does not use."""
    counts = {"pytorch": 0, "mindspore": 0}
    for sibling in Path(path).parent.glob("*.py"):
        if sibling.name == Path(path).name:
            continue
        try:
            text = sibling.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        for framework, pattern in FRAMEWORK_IMPORT_LINES.items():
            counts[framework] += bool(pattern.search(text))
    if counts["pytorch"] == counts["mindspore"]:
        return None
    return max(counts, key=counts.get)


def _imports_framework(statement: ast.stmt) -> bool:
    """A top-level `import torch` / `from mindspore import nn` (where edits.apply adds the runtime's import)."""
    if isinstance(statement, ast.Import):
        return any(alias.name.split(".", 1)[0] in FRAMEWORK_ROOTS for alias in statement.names)
    return isinstance(statement, ast.ImportFrom) and not statement.level and statement.module is not None \
        and statement.module.split(".", 1)[0] in FRAMEWORK_ROOTS


def _imported_roots(imports) -> list[str]:
    """The top-level packages a file imports, in order (packages the resolver does not know included)."""
    roots = [name.split(".", 1)[0] for name in imports.bindings.values()]
    roots += [module.split(".", 1)[0] for module, level, _ in imports.local_modules if not level]
    return list(dict.fromkeys(roots))

"""Find and read the project-local modules a file imports, so rules can look inside its helpers.

`from utils import set_seed`, `from .misc import seed_everything` and `import utils; utils.set_seed()`
name functions in other files of the same project. Modules are looked up next to the importing file
and in its parent folders (up to the project root: a folder holding pyproject.toml, setup.py or .git,
or the top folder of an installed package; at most three levels up), then, in a src layout, in the project's
`src/` (nanotron's run_train.py imports `nanotron.trainer`, src/nanotron/trainer.py). Standard-library and framework
modules are never project-local. Parsed modules are cached per process; missing or unparsable files
simply resolve to nothing. Module lookups are cached only while one file is analysed (the caller
clears them): files may appear between runs of a long-lived process. msprobe-instrument reads the files
as their authors wrote them (`read_as_written`), without its own edits.
"""

from __future__ import annotations

import ast
import itertools
import os
import re
import sys
import warnings
from collections.abc import Callable, Container, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from msprobe_rewriter.imports import KNOWN_ROOTS, ImportTracker

ROOT_MARKERS = ("pyproject.toml", ".git")
# A packaging script marks a root too, unless it is a module of a package (dinov2's `dinov2/eval/setup.py`).
SETUP_SCRIPT = "setup.py"
# Folders holding installed packages: a package found there is its own project root.
PACKAGE_FOLDERS = frozenset({"site-packages", "dist-packages"})
# Modules that are never the project's own: the frameworks the catalogue knows, and the standard library.
NOT_LOCAL = KNOWN_ROOTS | sys.stdlib_module_names
MAX_PARENTS = 3
SRC = "src"
PACKAGING_FILES = ("pyproject.toml", "setup.cfg", "setup.py")
# A packaging file putting the packages under src/: setuptools' `where = ["src"]` (pyproject.toml), `where = src` or
# `package_dir =\n    =src` (setup.cfg), `find_packages("src")` or `package_dir={"": "src"}` (setup.py), poetry's
# `from = "src"`, pdm's `package-dir = "src"`.
SRC_DECLARED = re.compile(r"""(?:\bwhere\s*=\s*\[?\s*|find_(?:namespace_)?packages\(\s*|["']{2}\s*[:=]\s*|\bfrom\s*=\s*"""
                          r"""|package-dir\s*=\s*)["']src/?["']|^\s*(?:where\s*=|=)\s*src\s*$""", re.MULTILINE)
PROJECT_NAME = re.compile(r"""\bname\s*=\s*["']([\w.-]+)["']""")
MAX_CLASS_FILES = 3  # a project class's bases are followed through at most this many files
MAX_REEXPORTS = 3  # a name a module imports from another is followed through at most this many files
MAX_BYTES = 2_000_000  # a generated 5 MB file is nobody's seeding helper
BLOCK_FIELDS = ("body", "orelse", "finalbody", "handlers", "cases")  # fields holding statements
TRAINING_DATA = re.compile(r"(?:^|_)train(?:ing)?(?:_|$)", re.IGNORECASE)  # `train_data`, `training_set`
MAX_INDEXED_FILES = 5000  # files read to find who imports a module (`imported_elsewhere`)
MAX_REGISTRY_FILES = 40  # files importing a registry read for the classes registered in it
REGISTERING = frozenset({"register", "register_module"})  # `@MODEL_REGISTRY.register()`, mmengine's `@MODELS.register_module()`
REGISTRY_LOOKUP = re.compile(r"get(?:_(\w+?)(?:_class)?)?")  # `R.get(key)`; LAVIS' `registry.get_runner_class(name)`
SKIPPED_FOLDERS = frozenset({"__pycache__", "node_modules", "site-packages", "venv", "env", "build", "dist"})
# `from .helpers import (` on a line of its own names no module but the source (lerobot's policy_server.py).
IMPORT_LINE = re.compile(r"^[ \t]*(?:from[ \t]+([\w.]+)[ \t]+import[ \t]+\(?([\w, \t]*)|import[ \t]+([\w., \t]+))",
                         re.MULTILINE)


@dataclass(frozen=True)
class Ref:
    """A name bound by a project-local import: `module` (relative `level`) and `attr` inside it, if any."""

    module: str
    level: int
    attr: str | None = None

    def submodule(self, *parts: str) -> str:
        """Dotted module name of `parts` below this reference (`utils` + `misc` -> `utils.misc`)."""
        return ".".join(p for p in (self.module, self.attr, *parts) if p)


@dataclass
class LocalImports:
    """Project-local import bindings of one module: `name -> Ref`, plus `from x import *` modules."""

    refs: dict[str, Ref] = field(default_factory=dict)
    stars: list[Ref] = field(default_factory=list)
    # a name only ever assigned names `refs` binds (`Exp = Exp_Long_Term_Forecast` in each branch of an if/elif,
    # as Time-Series-Library's run.py picks its experiment class), with those names: it may be any of them
    aliases: dict[str, tuple[str, ...]] = field(default_factory=dict)


@dataclass
class Module:
    """One parsed project-local module."""

    path: Path
    source: str  # the text parsed (as written, for msprobe-instrument: see read_as_written)
    tree: ast.Module
    imports: ImportTracker
    local: LocalImports
    functions: dict[str, ast.FunctionDef | ast.AsyncFunctionDef]
    classes: dict[str, ast.ClassDef]
    memo: dict = field(default_factory=dict)  # per-module results of whoever analyses it

    def classes_built(self, name: str) -> list[ast.ClassDef]:
        """The module's classes a call of its `name` builds: the class itself, or those its function of that name
        returns (mindyolo's `create_trainer` ends in `return Trainer(...)`)."""
        if name in self.classes:
            return [self.classes[name]]
        function = self.functions.get(name)
        if function is None:
            return []
        returned = (node.value.func.id for node in ast.walk(function) if isinstance(node, ast.Return)
                    and isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Name))
        return [self.classes[cls] for cls in dict.fromkeys(returned) if cls in self.classes]


def registered_classes(module: Module, name: str) -> list[tuple[Module, ast.ClassDef]]:
    """The project's classes a call of `module`'s function `name` may build through a registry: it returns
    `REGISTRY.get(key)(...)` or the class `REGISTRY.get(key)` (or a name assigned either), and they are registered
    in REGISTRY, `@REGISTRY.register()` or `@REGISTRY.register_module()`, in `module` or in the project files
    importing REGISTRY (BasicSR's `build_model` returns `MODEL_REGISTRY.get(opt['model_type'])(opt)`, and
    sr_model.py registers SRModel); a lookup of one kind, `registry.get_runner_class(name)`, finds the classes
    registered as that kind, `@registry.register_runner("runner_base")` (LAVIS' train.py: `get_runner_class(cfg)(...)`);
    none past MAX_REGISTRY_FILES such files."""
    function = module.functions.get(name)
    registries = registry_lookups(function) if function is not None else {}
    if not registries:
        return []
    words = frozenset(f".{name}" for names in registries.values() for name in names)
    files = (file for file in name_importers(str(module.path), registries) if _mentions(file, words))
    files = list(itertools.islice(files, MAX_REGISTRY_FILES + 1))  # LAVIS: 104 files import `registry`, 3 name
    if len(files) > MAX_REGISTRY_FILES:                              # `register_runner`
        return []
    found = []
    for other in [module, *filter(None, map(load, map(Path, files)))]:
        found += [(other, cls) for cls in other.classes.values() if any(_registers(decorator, registries)
                                                                      for decorator in cls.decorator_list)]
    return found


def registry_lookups(function: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, set[str]]:
    """The registries whose lookups `function` returns, called or not (`REGISTRY.get(key)(opt)`, the class
    `registry.get_runner_class(name)`, also through a name assigned it), each with the decorators that register
    what its lookups find."""
    assigned = {target.id: node.value for node in ast.walk(function) if isinstance(node, ast.Assign)
                for target in node.targets if isinstance(target, ast.Name)}
    registries: dict[str, set[str]] = {}
    for node in ast.walk(function):
        value = node.value if isinstance(node, ast.Return) else None
        value = assigned.get(value.id) if isinstance(value, ast.Name) else value
        for lookup in (value, value.func) if isinstance(value, ast.Call) else ():
            found = _registry_lookup(lookup)
            if found is not None:
                registries.setdefault(found[0], set()).update(found[1])
    return registries


def _mentions(path: str, words: frozenset[str]) -> bool:
    """Whether the file at `path` holds one of `words` (cached while it is unchanged)."""
    try:
        return _holds(path, os.stat(path).st_mtime_ns, words)
    except OSError:
        return False


@lru_cache(maxsize=4096)
def _holds(path: str, mtime_ns: int, words: frozenset[str]) -> bool:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            text = handle.read(MAX_BYTES)
    except OSError:
        return False
    return any(word in text for word in words)


def _registry_lookup(node: ast.expr) -> tuple[str, frozenset[str]] | None:
    """(registry, the decorators registering what it finds) for a lookup in a registry by key: `R.get(key)` (R's
    `register`, `register_module`), `R.get_runner_class(key)` or `R.get_runner(key)` (R's `register_runner`)."""
    if not (isinstance(node, ast.Call) and node.args and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name)):
        return None
    kind = REGISTRY_LOOKUP.fullmatch(node.func.attr)
    if kind is None:
        return None
    return node.func.value.id, REGISTERING if kind.group(1) is None else frozenset({f"register_{kind.group(1)}"})


def _registers(decorator: ast.expr, registries: Mapping[str, Container[str]]) -> bool:
    """Whether `decorator` registers a class in one of `registries` by one of its registering methods:
    `@R.register`, `@R.register_module(...)`, `@registry.register_runner("name")`."""
    func = decorator.func if isinstance(decorator, ast.Call) else decorator
    return (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)
            and func.attr in registries.get(func.value.id, ()))


def local_imports(nodes: Iterable[ast.AST]) -> LocalImports:
    """Bindings made by the import statements among `nodes` of modules outside the known frameworks, and the
    aliases of those among the assignments in `nodes` (see `LocalImports.aliases`)."""
    result = LocalImports()
    assigned: dict[str, dict[str | None, None]] = {}  # name -> the names assigned to it, in order
    for node in nodes:
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    assigned.setdefault(target.id, {})[getattr(node.value, "id", None)] = None
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".", 1)[0] in NOT_LOCAL:
                    continue
                if alias.asname:
                    result.refs[alias.asname] = Ref(alias.name, 0)
                else:
                    root = alias.name.split(".", 1)[0]
                    result.refs[root] = Ref(root, 0)
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if not node.level and module.split(".", 1)[0] in NOT_LOCAL:
                continue
            for alias in node.names:
                if alias.name == "*":
                    result.stars.append(Ref(module, node.level))
                else:
                    result.refs[alias.asname or alias.name] = Ref(module, node.level, alias.name)
    result.aliases = {name: tuple(values) for name, values in assigned.items()
                      if name not in result.refs and all(value in result.refs for value in values)}
    return result


def call_targets(call: ast.Call, local: LocalImports, defined: Container[str]) -> list[tuple[Ref, str]]:
    """Candidate `(module ref, function name)` pairs a call may reach in project-local modules."""
    func = call.func
    parts: list[str] = []
    while isinstance(func, ast.Attribute):
        parts.append(func.attr)
        func = func.value
    if not isinstance(func, ast.Name):
        return []
    parts.reverse()
    ref = local.refs.get(func.id)
    if ref is None:
        if parts or func.id in defined:
            return []
        if func.id in local.aliases:
            return [(Ref(found.module, found.level), found.attr) for name in local.aliases[func.id]
                    if (found := local.refs[name]).attr]
        return [(star, func.id) for star in local.stars]
    if not parts:
        return [(Ref(ref.module, ref.level), ref.attr)] if ref.attr else []
    return [(Ref(ref.submodule(*parts[:-1]), ref.level), parts[-1])]


def reached(calls: Iterable[ast.Call], local: LocalImports, defined: Container[str],
            folder: Path) -> Iterator[tuple[ast.Call, str, Module]]:
    """(call, name, module) for each project-local module a call may reach, with the name it calls there: where
    the module only imports that name from another of the project's (a package's `__init__.py` re-exporting
    `from .train_utils import train`, as pytorch/examples' FSDP utils do, or `from .builder import *`, as
    mindocr's `mindocr/data/__init__.py` does), the module that defines it."""
    for call in calls:
        for ref, name in call_targets(call, local, defined):
            found = defining(folder, ref, name)
            if found is not None:
                yield call, found[1], found[0]


def defining(folder: Path, ref: Ref, name: str) -> tuple[Module, str] | None:
    """The project module `name` imported from `ref` (by a file in `folder`) comes from, and its name there: the
    module `ref` names, or, where that module only imports it from another of the project's (re-exports, `from x
    import *`), that one, at most MAX_REEXPORTS files on; None when there is no such module."""
    path = find_module(folder, ref.module, ref.level)
    module = load(path) if path is not None else None
    for _ in range(MAX_REEXPORTS):
        if module is None or name in module.functions or name in module.classes:
            break
        imported = module.local.refs.get(name)
        if imported is None:
            source = _star_source(module, name)
            if source is None:
                break
            module = source
            continue
        if not imported.attr:
            break
        path = find_module(module.path.parent, imported.module, imported.level)
        module, name = (load(path) if path is not None else None), imported.attr
    return (module, name) if module is not None else None


def copied_functions(local: LocalImports, folder: Path, copies: Mapping[str, tuple[str, tuple[str, ...]]]
                     ) -> dict[tuple[str, int, str], str]:
    """The functions that `from` imports of project modules name and that copy a library function (`copies`: name ->
    the library function, its leading parameters): defined in the project under its name with those parameters (a
    vendored diffusers pipeline's `from ...utils.torch_utils import randn_tensor`): (module, level, name) -> the
    library function."""
    found = {}
    for ref in local.refs.values():
        library, parameters = copies.get(ref.attr or "", (None, ()))
        source = defining(folder, Ref(ref.module, ref.level), ref.attr) if library is not None else None
        function = source[0].functions.get(source[1]) if source is not None else None
        if function is not None and tuple(a.arg for a in function.args.args[:len(parameters)]) == parameters:
            found[(ref.module, ref.level, ref.attr)] = library
    return found


def _star_source(module: Module, name: str) -> Module | None:
    """The module among those `module` imports with `from x import *` that `name` comes from: one that defines or
    imports it, or lists it in `__all__` (which, when given literally, decides: a name it leaves out is not
    exported)."""
    for star in module.local.stars:
        path = find_module(module.path.parent, star.module, star.level)
        source = load(path) if path is not None else None
        if source is None:
            continue
        exported = _all_names(source)
        if (name in exported if exported is not None else not name.startswith("_") and (
                name in source.functions or name in source.classes or name in source.local.refs)):
            return source
    return None


def _all_names(module: Module) -> frozenset[str] | None:
    """The names the module's `__all__` lists, when its top-level statements give them as string literals
    (`__all__ = [...]`, `+= [...]`, `.extend([...])`, `.append("...")`); None when it has no `__all__` or builds
    it otherwise (mindocr's `__all__.extend(builder.__all__)`)."""
    if "__all__" not in module.memo:
        names: set[str] | None = None
        for node in module.tree.body:
            value = _all_update(node)
            if value is None:
                continue
            strings = _strings(value)
            if strings is None or names is None and not isinstance(node, ast.Assign):
                names = None
                break
            names = strings if isinstance(node, ast.Assign) else names | strings
        module.memo["__all__"] = frozenset(names) if names is not None else None
    return module.memo["__all__"]


def _all_update(node: ast.stmt) -> ast.expr | None:
    """What a top-level statement sets `__all__` to or adds to it (an `.append`'s item as a list; for any other
    method's call, the call), else None."""
    if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
        return node.value
    if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name) and node.target.id == "__all__":
        return node.value
    call = node.value if isinstance(node, ast.Expr) else None
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
            and isinstance(call.func.value, ast.Name) and call.func.value.id == "__all__"):
        return None
    if call.func.attr == "append" and len(call.args) == 1:
        return ast.List([call.args[0]])
    return call.args[0] if call.func.attr == "extend" and len(call.args) == 1 else call


def _strings(value: ast.expr) -> set[str] | None:
    """The strings of a list or tuple display of string constants, else None."""
    if isinstance(value, (ast.List, ast.Tuple)) and all(
            isinstance(element, ast.Constant) and isinstance(element.value, str) for element in value.elts):
        return {element.value for element in value.elts}
    return None


def imported_subclasses(local: LocalImports, folder: Path, bases: Container[str]) -> dict[tuple[str, int, str], str]:
    """The classes that `from` imports of project modules name and that derive from one of the library
    classes `bases` (qualified names), through the classes and imports of their own files, at most
    MAX_CLASS_FILES files deep: (module, level, class name) -> the library class (yolov5's `from
    utils.dataloaders import InfiniteDataLoader`, a `torch.utils.data.DataLoader`). Only CapWords names are
    looked up: classes are named so."""
    found = {}
    for ref in local.refs.values():
        if ref.attr and ref.attr[:1].isupper():
            base = _imported_class_base(folder, ref, bases, MAX_CLASS_FILES)
            if base is not None:
                found[(ref.module, ref.level, ref.attr)] = base
    return found


def class_base(module: Module, name: str, bases: Container[str]) -> str | None:
    """The class of `bases` (qualified names, of any library) that class `name` of `module` is imported as or derives
    from, through the classes and imports of project files, at most MAX_CLASS_FILES files deep; else None."""
    return _class_base(module, name, bases, MAX_CLASS_FILES, set())


def file_module(path: str, tree: ast.Module, imports: ImportTracker) -> Module:
    """The file being analysed (its path, tree and import tracker) as a project `Module`."""
    return Module(Path(os.path.abspath(path)), "", tree, imports, local_imports(import_statements(tree.body)),
                  {node.name: node for node in tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))},
                  {node.name: node for node in tree.body if isinstance(node, ast.ClassDef)})


def _imported_class_base(folder: Path, ref: Ref, bases: Container[str], files_left: int) -> str | None:
    path = find_module(folder, ref.module, ref.level)
    module = load(path) if path is not None else None
    return None if module is None else _class_base(module, ref.attr, bases, files_left - 1, set())


def _class_base(module: Module, name: str, bases: Container[str], files_left: int, seen: set[str]) -> str | None:
    """The library class of `bases` that class `name` of `module` derives from, or None."""
    if name in seen:
        return None
    seen.add(name)
    node = module.classes.get(name)
    if node is None:  # imported there: its own file's class, or a package's re-export
        ref = module.local.refs.get(name)
        if ref is None or ref.attr is None or not files_left:
            return None
        return _imported_class_base(module.path.parent, ref, bases, files_left)
    for base in node.bases:
        qualified = module.imports.resolve_any(base)
        if qualified in bases:
            return qualified
        if isinstance(base, ast.Name):
            found = _class_base(module, base.id, bases, files_left, seen)
            if found is not None:
                return found
    return None


_search_limits: frozenset[Path] = frozenset()  # folders no search for a project root climbs above (`limit_search`)


def limit_search(paths: Iterable[str]) -> None:
    """Bound the search for the project root of the files a command was given: above a path, it climbs no further
    than the working directory when that holds the path (`msprobe-lint tools/train.py` from the project's top), else
    than the path itself (its folder for a file). A checkout without `.git` or packaging files (a zip, a `git
    archive`) is then its own project, instead of the folders above it with whatever other projects they hold."""
    global _search_limits
    here = Path(os.getcwd())
    folders = (Path(os.path.abspath(path)) for path in paths)
    folders = (folder if folder.is_dir() else folder.parent for folder in folders)
    _search_limits = frozenset(here if here == folder or here in folder.parents else folder for folder in folders)
    find_module.cache_clear()
    _project_imports.cache_clear()


def search_roots(folder: Path) -> list[Path]:
    """`folder` and its parents, up to the project root (or installed package), a folder `limit_search` set, or
    `MAX_PARENTS` levels up."""
    roots = [folder]
    current = folder
    for _ in range(MAX_PARENTS):
        if (current in _search_limits or any((current / marker).exists() for marker in ROOT_MARKERS)
                or current.parent == current
                or current.parent.name in PACKAGE_FOLDERS
                or (current / SETUP_SCRIPT).exists() and not (current / "__init__.py").exists()):
            break
        current = current.parent
        roots.append(current)
    return roots


def import_roots(folder: Path) -> list[Path]:
    """Where absolute imports from a file in `folder` are looked up: `search_roots`, then its project's `src/` in a
    src layout (`src_folder`)."""
    roots = search_roots(folder)
    src = src_folder(folder)
    return roots if src is None or src in roots else [*roots, src]


def src_folder(folder: Path) -> Path | None:
    """The `src/` of the project `folder` belongs to (its project root's, or that of the folder above the `src/` it
    lies in, however deep: lerobot's src/lerobot/policies/pi0/), when the project keeps its packages there, as
    setuptools' src layout does: its packaging files put them there, or name the project after a package there
    (the default of hatchling, poetry and uv: `src/<name>/`); else None."""
    tops = [search_roots(folder)[-1], *(parent.parent for parent in (folder, *folder.parents) if parent.name == SRC)]
    for top in tops[:2]:
        stamps = tuple(_stamp(top / name) for name in PACKAGING_FILES)
        if any(stamps) and _keeps_packages_in_src(top, stamps):
            return top / SRC
    return None


def project_root(folder: Path) -> Path:
    """The root of the project `folder` belongs to: above its `src/` in a src layout, else the last search root."""
    src = src_folder(folder)
    return src.parent if src is not None else search_roots(folder)[-1]


def _stamp(path: Path) -> tuple[int, int] | None:
    try:
        stat = path.stat()
    except OSError:
        return None
    return stat.st_mtime_ns, stat.st_size


@lru_cache(maxsize=64)
def _keeps_packages_in_src(top: Path, stamps: tuple[tuple[int, int] | None, ...]) -> bool:
    """Whether the packaging files of the project at `top` (whose `stamps` key the cache) put its packages in `src/`."""
    if not (top / SRC).is_dir():
        return False
    text = _packaging_text(top)
    names = (re.sub(r"[-.]+", "_", name).lower() for name in PROJECT_NAME.findall(text))
    return SRC_DECLARED.search(text) is not None or any((top / SRC / name / "__init__.py").is_file() for name in names)


@lru_cache(maxsize=1024)
def find_module(folder: Path, module: str, level: int) -> Path | None:
    """The file of `module` imported from a file in `folder` (`level` dots for relative imports)."""
    if level:
        base = folder
        for _ in range(level - 1):
            base = base.parent
        bases = [base]
    else:
        bases = import_roots(folder)
    relative = Path(*module.split(".")) if module else Path()
    for base in bases:
        candidate = base / relative
        # a package before a module of the same name, as Python's path finder looks (`train/` beside `train.py`)
        for path in (candidate / "__init__.py", candidate.with_suffix(".py") if module else None):
            if path is not None and path.is_file():
                return path
    return None if level or module.split(".", 1)[0] in NOT_LOCAL else _under_own_name(folder, module)


def _under_own_name(folder: Path, module: str) -> Path | None:
    """The project file `module` names by its path in a larger source tree holding the project under the project's
    own name (its folder's, or the name its packaging file gives): what follows that name, when it names a file here
    (SlowFast's `vision.fair.slowfast.tools.train_net`, Meta's internal path, is tools/train_net.py). A library's
    `mmcv.utils` never stands for the project's utils/: only a prefix ending in the project's name is dropped."""
    parts = module.split(".")
    if len(parts) < 3:
        return None
    root = project_root(folder)
    own = _project_names(root, tuple(_stamp(root / name) for name in PACKAGING_FILES))
    first = next((i for i, part in enumerate(parts[1:-1], 1) if part.lower() in own), None)
    return None if first is None else find_module(folder, ".".join(parts[first + 1:]), 0)


@lru_cache(maxsize=64)
def _project_names(top: Path, stamps: tuple[tuple[int, int] | None, ...]) -> frozenset[str]:
    """The names of the project at `top` (whose packaging files' `stamps` key the cache), normalised as imports
    spell them: its folder's and those its packaging files give."""
    names = {top.name, *PROJECT_NAME.findall(_packaging_text(top))}
    return frozenset(re.sub(r"[-.]+", "_", name).lower() for name in names)


def _packaging_text(top: Path) -> str:
    """The packaging files at `top` (pyproject.toml, setup.cfg, setup.py), as one text."""
    text = ""
    for name in PACKAGING_FILES:
        path = top / name
        try:
            if path.stat().st_size <= MAX_BYTES:
                text += path.read_text(encoding="utf-8", errors="replace") + "\n"
        except OSError:
            continue
    return text


_restore: Callable[[bytes], bytes] | None = None  # see read_as_written


@contextmanager
def read_as_written(restore: Callable[[bytes], bytes]) -> Iterator[None]:
    """Inside, `load` parses each file's bytes through `restore`: msprobe-instrument's undo of its own edits, so
    that what it decides for a file does not depend on which of the file's helpers it instrumented already."""
    global _restore
    previous, _restore = _restore, restore
    try:
        yield
    finally:
        _restore = previous


def load(path: Path) -> Module | None:
    """The parsed module at `path` (cached per process while the file is unchanged), or None."""
    try:
        stat = path.stat()
    except OSError:
        return None
    return _load(str(path), stat.st_mtime_ns, stat.st_size, _restore)


@lru_cache(maxsize=512)
def _load(path: str, mtime_ns: int, size: int, restore: Callable[[bytes], bytes] | None) -> Module | None:
    if size > MAX_BYTES:
        return None
    try:
        with open(path, "rb") as handle:
            data = handle.read()
        if restore is not None:
            data = restore(data)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(data, filename=path)
    except (OSError, SyntaxError, ValueError, RecursionError, MemoryError, UnicodeDecodeError):
        return None
    tracker = ImportTracker()
    imports = list(import_statements(tree.body))
    for node in imports:
        tracker.add_import(node)
    functions = {node.name: node for node in tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))}
    classes = {node.name: node for node in tree.body if isinstance(node, ast.ClassDef)}
    return Module(Path(path), data.decode("utf-8", errors="replace"), tree, tracker, local_imports(imports), functions,
                  classes)


def import_statements(body: list[ast.stmt], aliases: bool = False) -> Iterator[ast.stmt]:
    """The import statements in `body` and the blocks nested in it, in source order (expressions, which
    cannot hold one, are not walked); with `aliases`, also the assignments, for `LocalImports.aliases`."""
    for stmt in body:
        if isinstance(stmt, (ast.Import, ast.ImportFrom)) or aliases and isinstance(stmt, ast.Assign):
            yield stmt
            continue
        for name in BLOCK_FIELDS:
            block = getattr(stmt, name, None)
            if block:
                yield from import_statements(block, aliases)


def package_inits(path: str, tree: ast.Module) -> list[Module]:
    """The `__init__.py` modules Python runs before a file that imports relatively (`from .dataset import x`), which
    runs only as a module of its package (`python -m mindnlp.ocr.finetune.train_full`): those of the packages
    around it, innermost first (mindnlp's `__init__.py` imports mindtorch, which makes `torch` MindSpore's)."""
    if not any(isinstance(node, ast.ImportFrom) and node.level for node in import_statements(tree.body)):
        return []
    found = []
    folder = file_folder(path)
    while (init := folder / "__init__.py").is_file() and folder.parent != folder:
        module = load(init)
        if module is not None:
            found.append(module)
        folder = folder.parent
    return found


def file_folder(path: str) -> Path:
    """The absolute folder of a linted file's path (the working directory for `-` or bare names)."""
    return Path(os.path.abspath(path)).parent


def imported_elsewhere(path: str) -> bool:
    """Whether another Python file of `path`'s project imports it (by its module name, in any import line):
    it is a library module then, whatever else it runs under its `__main__` guard."""
    return any(True for _ in importers(path))


def importers(path: str) -> Iterator[str]:
    """The other Python files of `path`'s project that import it (by its module name, in any import line). The
    project's import lines are read once per process (one msprobe-instrument run), not once per file."""
    stem, own = Path(path).stem, os.path.abspath(path)
    return (importer for importer, names in _project_imports(project_root(file_folder(path)))
            if stem in names and importer != own)


def resolved_importers(path: str) -> Iterator[str]:
    """`importers` whose imports, looked up from their own folders, find `path` itself (not another project's
    `main.py` where no root marker bounds the project)."""
    own = Path(path).resolve()
    for importer in importers(path):
        module = load(Path(importer))
        refs = [*module.local.refs.values(), *module.local.stars] if module is not None else []
        if any(_finds(module, name, ref.level, own) for ref in refs for name in {ref.module, ref.submodule()}):
            yield importer


def _finds(module: Module, name: str, level: int, own: Path) -> bool:
    """Whether the import of `name` (at relative `level`) in `module` finds the file `own` (resolved)."""
    found = find_module(module.path.parent, name, level)
    return found is not None and found.resolve() == own


def function_importers(path: str, name: str) -> Iterator[str]:
    """The files that may call `path`'s `name`: its importers, and where one is a package's `__init__.py` that
    re-exports `name` (also by `from .module import *`: applications' mobilevit blocks) or the module itself
    (k-diffusion's `from . import augmentation`, whose train.py builds `K.augmentation.KarrasAugmentationPipeline`
    after `import k_diffusion as K`), the files importing that package (mindpose's tools/train.py does `from
    mindpose.data import create_dataset`, which mindpose/data/__init__.py imports from .data_factory), at most
    MAX_REEXPORTS packages up."""
    found, packages, stem = [*importers(path)], 0, Path(path).stem
    for importer in found:
        module = load(Path(importer)) if Path(importer).name == "__init__.py" else None
        if module is not None and (name in module.local.refs or _star_source(module, name) is not None
                                   or any(ref.submodule().rpartition(".")[2] == stem
                                          for ref in module.local.refs.values())) \
                and packages < MAX_REEXPORTS:
            packages += 1
            package = Path(importer).parent
            found += [other for other, parts in _project_imports(project_root(package))
                      if package.name in parts and other not in found and other != os.path.abspath(path)]
        yield importer


def builds_training_data(path: str, evaluation: re.Pattern) -> bool:
    """Whether another project file, not named like `evaluation`, names what a function of `path` returns as training
    data: MoCo's main.py does `train_data, memory_data, test_data = create_dataset(args.dataset)` with
    `create_dataset` from dataset_test.py, a file named for testing that the training run reads. An evaluation
    script's `train_features = extract_features(...)` (dino's eval_image_retrieval.py, from eval_knn.py) names the
    training split a frozen model is evaluated on, not a training run."""
    own = Path(path).resolve()
    for importer in importers(path):
        if evaluation.match(Path(importer).stem):
            continue
        module = load(Path(importer))
        bound = {name for name, ref in module.local.refs.items()
                 if ref.attr and _finds(module, ref.module, ref.level, own)} if module else ()
        for node in ast.walk(module.tree) if bound else ():
            if (isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)
                    and isinstance(node.value.func, ast.Name) and node.value.func.id in bound
                    and any(isinstance(name, ast.Name) and TRAINING_DATA.search(name.id)
                            for target in node.targets for name in ast.walk(target))):
                return True
    return False


def imported_by(path: str, named: re.Pattern) -> bool:
    """Whether a project file whose name or folder `named` matches imports `path` (loss/lpips_loss.py a metric's
    network)."""
    return any(named.search(Path(importer).stem) or named.search(Path(importer).parent.name)
               for importer in resolved_importers(path))


def name_importers(path: str, names: Container[str]) -> Iterator[str]:
    """The other Python files of `path`'s project whose import lines name one of `names` (`from ..functions import
    dcnv3_core_pytorch`: through a package, whatever module holds it)."""
    own = os.path.abspath(path)
    return (importer for importer, parts in _project_imports(project_root(file_folder(path)))
            if importer != own and any(name in parts for name in names))


@lru_cache(maxsize=8)
def _project_imports(root: Path) -> tuple[tuple[str, frozenset[str]], ...]:
    """Each Python file under `root` (at most `MAX_INDEXED_FILES`), with the dotted parts of what it imports."""
    found = []
    for folder, folders, files in os.walk(root):
        folders[:] = [name for name in folders if not name.startswith(".") and name not in SKIPPED_FOLDERS]
        for name in files:
            if not name.endswith(".py"):
                continue
            if len(found) >= MAX_INDEXED_FILES:
                return tuple(found)
            file = os.path.join(folder, name)
            if not os.path.isfile(file):
                continue  # a named pipe or a socket called *.py: opening it would wait for a writer
            try:
                with open(file, encoding="utf-8", errors="replace") as handle:
                    text = handle.read(MAX_BYTES)
            except OSError:
                continue
            parts = set()
            for source, names, modules in IMPORT_LINE.findall(text):
                for dotted in [source, *names.split(",")] if source else modules.split(","):
                    parts.update(dotted.split(" as ")[0].strip().split("."))
            found.append((os.path.abspath(file), frozenset(parts)))
    return tuple(found)

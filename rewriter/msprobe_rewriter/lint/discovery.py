"""Which files a run lints: command-line paths, folders walked recursively, `.gitignore` and excludes.

Folders are walked without following symlinked folders (no loops); `*.py` entries, symlinks included,
become targets, so a dangling or looping link is reported by the reader, not silently dropped. A path
named on the command line is linted even when excluded, unless `force_exclude` is set (pre-commit).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import pathspec

from msprobe_rewriter.finding import FileError

# Folder names never walked into: environments, build output, caches, version control.
DEFAULT_EXCLUDES = frozenset({
    ".git", ".hg", ".svn", ".venv", "venv", ".tox", ".nox", ".eggs", "__pycache__", "__pypackages__",
    "build", "dist", "node_modules", "site-packages", ".mypy_cache", ".pytest_cache", ".ruff_cache",
    ".msprobe_lint_cache", ".ipynb_checkpoints", ".direnv", "buck-out", "_build",
})

Spec = tuple[str, pathspec.GitIgnoreSpec]  # (folder the patterns are relative to, patterns)


@dataclass(frozen=True)
class Target:
    """A file to lint: the path shown to the user and the absolute path read from disk."""

    display: str
    path: str


def _join(shown: str, name: str) -> str:
    return name if shown == os.curdir else os.path.join(shown, name)


def relative_to(root: str, absolute: str) -> str | None:
    """`absolute` relative to the folder `root`, with `/` separators; None when outside it (or equal)."""
    prefix = root.rstrip(os.sep) + os.sep
    if not absolute.startswith(prefix):
        return None
    return absolute[len(prefix):].replace(os.sep, "/")


class Discovery:
    """Turns command-line paths into lint targets, honouring excludes and `.gitignore` files."""

    def __init__(self, root: Path, exclude: Iterable[str] = (), respect_gitignore: bool = True) -> None:
        self.root = os.path.abspath(root)
        self.exclude = pathspec.GitIgnoreSpec.from_lines(list(exclude))
        self.respect_gitignore = respect_gitignore

    def collect(self, paths: Iterable[str], force_exclude: bool = False) -> tuple[list[Target], list[FileError]]:
        """Targets (deduplicated, in a stable order) and errors for paths that do not exist."""
        targets: dict[str, Target] = {}
        errors: list[FileError] = []
        for given in paths:
            display = os.path.normpath(given)
            absolute = os.path.abspath(given)
            if force_exclude and self.is_excluded(absolute):
                continue
            if os.path.isdir(absolute):
                for target in self._walk(absolute, display, errors):
                    targets.setdefault(target.path, target)
            elif os.path.lexists(absolute):
                targets.setdefault(absolute, Target(display, absolute))
            else:
                errors.append(FileError(display, "no such file or directory"))
        return sorted(targets.values(), key=lambda t: t.display), errors

    def is_excluded(self, absolute: str) -> bool:
        """Whether a path named explicitly falls under an excluded folder or an `exclude` pattern."""
        relative = self._relative_to_root(absolute)
        if relative is None:
            return False
        parts = relative.split("/")
        if any(part in DEFAULT_EXCLUDES for part in parts[:-1]):
            return True
        prefixes = ["/".join(parts[: i + 1]) + "/" for i in range(len(parts) - 1)]
        return any(self.exclude.match_file(p) for p in (*prefixes, relative))

    def _relative_to_root(self, absolute: str) -> str | None:
        return relative_to(self.root, absolute)

    def _walk(self, top: str, shown_top: str, errors: list[FileError]) -> list[Target]:
        found: list[Target] = []
        stack: list[tuple[str, str, list[Spec]]] = [(top, shown_top, self._ancestor_gitignores(top))]
        while stack:
            folder, shown, specs = stack.pop()
            try:
                with os.scandir(folder) as scan:
                    entries = sorted(scan, key=lambda e: e.name)
            except OSError as exc:
                errors.append(FileError(shown, f"cannot list folder: {(exc.strerror or str(exc)).lower()}"))
                continue
            own = self._gitignore(folder)
            if own is not None:
                specs = [*specs, (folder.rstrip(os.sep), own)]
            subfolders = []
            for entry in entries:
                try:
                    is_dir = entry.is_dir(follow_symlinks=False)
                except OSError:
                    is_dir = False
                if is_dir:
                    if entry.name not in DEFAULT_EXCLUDES and not self._ignored(entry.path, True, specs):
                        subfolders.append((entry.path, _join(shown, entry.name), specs))
                elif entry.name.endswith(".py") and not self._ignored(entry.path, False, specs):
                    found.append(Target(_join(shown, entry.name), entry.path))
            stack.extend(reversed(subfolders))
        return found

    def _ignored(self, path: str, is_dir: bool, specs: list[Spec]) -> bool:
        suffix = "/" if is_dir else ""
        relative = self._relative_to_root(path)
        if relative is not None and self.exclude.match_file(relative + suffix):
            return True
        for base, spec in reversed(specs):  # the deepest .gitignore that has an opinion decides
            verdict = spec.check_file(path[len(base) + 1:].replace(os.sep, "/") + suffix).include
            if verdict is not None:
                return verdict
        return False

    def _gitignore(self, folder: str) -> pathspec.GitIgnoreSpec | None:
        if not self.respect_gitignore:
            return None
        try:
            with open(os.path.join(folder, ".gitignore"), encoding="utf-8", errors="replace") as handle:
                return pathspec.GitIgnoreSpec.from_lines(handle.read().splitlines())
        except OSError:
            return None

    def _ancestor_gitignores(self, top: str) -> list[Spec]:
        """`.gitignore` files above `top` up to the enclosing git work tree's top, outermost first."""
        if not self.respect_gitignore:
            return []
        ancestors = []
        folder = os.path.dirname(top)
        while True:
            ancestors.append(folder)
            if os.path.exists(os.path.join(folder, ".git")):
                break
            parent = os.path.dirname(folder)
            if parent == folder:
                return []  # not inside a git work tree: only .gitignore files inside the walk count
            folder = parent
        if os.path.exists(os.path.join(top, ".git")):
            return []
        specs = []
        for folder in reversed(ancestors):
            spec = self._gitignore(folder)
            if spec is not None:
                base = folder.rstrip(os.sep)
                specs.append((base, _below(spec, top[len(base) + 1:].replace(os.sep, "/"))))
        return specs


def _below(spec: pathspec.GitIgnoreSpec, top: str) -> pathspec.GitIgnoreSpec:
    """`spec` without the patterns that ignore the folder `top` itself or a folder above it.

    A folder named on the command line is linted even when an outer .gitignore ignores it as a whole
    (a virtual environment, site-packages); patterns about what lies inside it still apply.
    """
    parts = top.split("/")
    folders = ["/".join(parts[: i + 1]) + "/" for i in range(len(parts))]
    kept = [p for p in spec.patterns if not (p.include and any(p.match_file(f) for f in folders))]
    return spec if len(kept) == len(spec.patterns) else pathspec.GitIgnoreSpec(kept)

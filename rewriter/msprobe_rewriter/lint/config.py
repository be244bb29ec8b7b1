"""`[tool.msprobe-lint]` configuration: finding it, reading it, validating every key and value.

Keys: `select`, `ignore` (rule selectors), `per-file-ignores` (gitignore-style glob -> selectors),
`exclude` (gitignore-style globs added to the built-in skips). Globs are relative to the project root,
the folder holding the configuration file (the current folder when there is none).
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pathspec

from msprobe_rewriter.lint.discovery import relative_to
from msprobe_rewriter.lint.selection import SelectorError, resolve_all

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

SECTION = "msprobe-lint"
KEYS = ("select", "ignore", "per-file-ignores", "exclude")


class ConfigError(ValueError):
    """A configuration problem, phrased as one line naming the file and the key."""


@dataclass
class Config:
    """Validated settings; `select` is None when the configuration does not set it."""

    root: Path
    path: Path | None = None
    select: list[str] | None = None
    ignore: list[str] = field(default_factory=list)
    per_file_ignores: dict[str, list[str]] = field(default_factory=dict)
    exclude: list[str] = field(default_factory=list)


def load_config(explicit: str | None, cwd: Path) -> Config:
    """The configuration from `--config FILE`, else the nearest pyproject.toml having our table."""
    if explicit:
        path = Path(explicit)
        return parse_table(_read_table(path, explicit=True) or {}, path)
    for folder in (cwd, *cwd.parents):
        candidate = folder / "pyproject.toml"
        if candidate.is_file() and _mentions_section(candidate):
            table = _read_table(candidate, explicit=False)
            if table is not None:
                return parse_table(table, candidate)
    return Config(root=cwd)


def _mentions_section(path: Path) -> bool:
    try:
        return SECTION in path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False


def _read_table(path: Path, explicit: bool) -> dict | None:
    """Our table from a TOML file; None when a pyproject.toml found by walking up has none."""
    try:
        with path.open("rb") as handle:
            document = tomllib.load(handle)
    except FileNotFoundError:
        raise ConfigError(f"{path}: configuration file not found") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None
    tool = document.get("tool")
    if isinstance(tool, dict) and SECTION in tool:
        table = tool[SECTION]
        if not isinstance(table, dict):
            raise ConfigError(f"{path}: [tool.{SECTION}] must be a table")
        return table
    if explicit and path.name != "pyproject.toml":
        return document  # a dedicated file (`--config msprobe-lint.toml`) holds the keys at its top level
    return None


def parse_table(table: dict, path: Path) -> Config:
    """Validate a `[tool.msprobe-lint]` table into a Config rooted at the file's folder."""
    where = f"{path}: [tool.{SECTION}]"
    unknown = sorted(set(table) - set(KEYS))
    if unknown:
        raise ConfigError(f"{where} unknown key {unknown[0]!r} (known keys: {', '.join(KEYS)})")
    config = Config(root=path.resolve().parent, path=path)
    if "select" in table:
        config.select = _selectors(table["select"], f"{where} 'select'")
    config.ignore = _selectors(table.get("ignore", []), f"{where} 'ignore'")
    config.exclude = _strings(table.get("exclude", []), f"{where} 'exclude'")
    per_file = table.get("per-file-ignores", {})
    if not isinstance(per_file, dict):
        raise ConfigError(f"{where} 'per-file-ignores' must be a table of glob = [rules]")
    for glob, selectors in per_file.items():
        config.per_file_ignores[glob] = _selectors(selectors, f"{where} 'per-file-ignores' {glob!r}")
    return config


def _strings(value: object, what: str) -> list[str]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ConfigError(f"{what} must be a list of strings, got {type(value).__name__}")
    return value


def _selectors(value: object, what: str) -> list[str]:
    selectors = _strings(value, what)
    try:
        resolve_all(selectors)
    except SelectorError as exc:
        raise ConfigError(f"{what}: {exc}") from None
    return selectors


class PerFileIgnores:
    """`per-file-ignores` compiled: the codes to drop for a file, by gitignore-style glob."""

    def __init__(self, config: Config) -> None:
        self.root = str(config.root)
        self.entries = [(pathspec.GitIgnoreSpec.from_lines([glob]), resolve_all(selectors))
                        for glob, selectors in config.per_file_ignores.items()]

    def codes_for(self, path: str) -> frozenset[str]:
        """Codes ignored for the file at `path` (matched relative to the project root)."""
        if not self.entries:
            return frozenset()
        absolute = os.path.abspath(path)
        relative = relative_to(self.root, absolute) or absolute.lstrip(os.sep).replace(os.sep, "/")
        ignored: set[str] = set()
        for spec, codes in self.entries:
            if spec.match_file(relative):
                ignored |= codes
        return frozenset(ignored)


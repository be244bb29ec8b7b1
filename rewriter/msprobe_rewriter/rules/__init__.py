"""The rule registry: every `Rule` subclass in this package's modules, ordered by code."""

from __future__ import annotations

import importlib
import pkgutil

from msprobe_rewriter.rules.base import Invalid, Rule


def _discover() -> tuple[type[Rule], ...]:
    found: dict[str, type[Rule]] = {}
    for module_info in pkgutil.iter_modules(__path__):
        if module_info.name == "base":
            continue
        module = importlib.import_module(f"{__name__}.{module_info.name}")
        for value in vars(module).values():
            if isinstance(value, type) and issubclass(value, Rule) and value is not Rule and "code" in vars(value):
                found[value.code] = value
    return tuple(found[code] for code in sorted(found))


ALL_RULES: tuple[type[Rule], ...] = _discover()
RULES_BY_CODE = {rule.code: rule for rule in ALL_RULES}
RULES_BY_NAME = {rule.name: rule for rule in ALL_RULES}

__all__ = ["ALL_RULES", "RULES_BY_CODE", "RULES_BY_NAME", "Invalid", "Rule"]

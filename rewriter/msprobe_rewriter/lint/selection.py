"""Rule selectors (`MSP103`, `MSP1`, `cudnn-benchmark`, `ALL`) and the select/ignore layering.

Layers are applied in order (configuration, then command line), as ruff does: a layer's `select`
replaces the set chosen so far, then the layer's `ignore` removes from it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from msprobe_rewriter.rules import ALL_RULES, RULES_BY_CODE, RULES_BY_NAME, Rule

CODE_PREFIX = re.compile(r"^MSP\d{0,3}$")


class SelectorError(ValueError):
    """A selector that names no rule."""


def split_selectors(values: Iterable[str]) -> list[str]:
    """Flatten repeated and comma-separated option values into single selectors."""
    return [part.strip() for value in values for part in value.split(",") if part.strip()]


def resolve(selector: str) -> frozenset[str]:
    """The rule codes one selector stands for; raises SelectorError when it names none."""
    upper = selector.strip().upper()
    if upper == "ALL":
        return frozenset(RULES_BY_CODE)
    rule = RULES_BY_CODE.get(upper) or RULES_BY_NAME.get(selector.strip().lower())
    if rule is not None:
        return frozenset({rule.code})
    if CODE_PREFIX.match(upper):
        codes = frozenset(code for code in RULES_BY_CODE if code.startswith(upper))
        if codes:
            return codes
    raise SelectorError(f"unknown rule {selector!r} (run `msprobe-lint --list-rules`)")


def resolve_all(selectors: Iterable[str]) -> frozenset[str]:
    """The union of the codes of several selectors."""
    codes: set[str] = set()
    for selector in selectors:
        codes |= resolve(selector)
    return frozenset(codes)


def default_codes() -> frozenset[str]:
    """Codes of the rules that run when nothing is selected."""
    return frozenset(rule.code for rule in ALL_RULES if rule.default_enabled)


def layered(layers: Sequence[tuple[Sequence[str] | None, Sequence[str]]]) -> frozenset[str]:
    """Apply (select, ignore) layers in order over the default set; `None` select keeps the set."""
    codes = default_codes()
    for select, ignore in layers:
        if select is not None:
            codes = resolve_all(select)
        codes -= resolve_all(ignore)
    return codes


def rules_for(codes: Iterable[str]) -> tuple[type[Rule], ...]:
    """Rule classes for `codes`, ordered by code."""
    return tuple(RULES_BY_CODE[code] for code in sorted(set(codes)))


def find_rule(selector: str) -> type[Rule] | None:
    """The single rule named by code or name (for --explain), else None."""
    return RULES_BY_CODE.get(selector.strip().upper()) or RULES_BY_NAME.get(selector.strip().lower())

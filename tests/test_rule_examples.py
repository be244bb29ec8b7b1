"""Every rule's in-rule examples: invalid ones fire (on the given lines), valid ones stay silent."""

from __future__ import annotations

import pytest
from msprobe_rewriter.lint.engine import lint_source
from msprobe_rewriter.lint.suppressions import UNUSED_NOQA_CODE
from msprobe_rewriter.rules import ALL_RULES

VALID = [pytest.param(rule, code, id=f"{rule.name}-valid-{i}") for rule in ALL_RULES for i, code in
         enumerate(rule.valid)]
INVALID = [pytest.param(rule, example, id=f"{rule.name}-invalid-{i}") for rule in ALL_RULES for i, example in
           enumerate(rule.invalid)]


def findings_of(rule, code: str):
    # The unused-noqa meta rule judges other rules' suppressions, so its examples run with every rule.
    rules = ALL_RULES if rule.code == UNUSED_NOQA_CODE else [rule]
    result = lint_source("example.py", code.encode(), rules)
    assert not result.errors, result.errors
    return [f for f in result.findings if f.code == rule.code]


@pytest.mark.parametrize(("rule", "code"), VALID)
def test_valid_example_is_silent(rule, code):
    assert findings_of(rule, code) == []


@pytest.mark.parametrize(("rule", "example"), INVALID)
def test_invalid_example_fires(rule, example):
    found = findings_of(rule, example.code)
    assert found, f"{rule.name} did not fire on:\n{example.code}"
    if example.lines:
        assert sorted({f.line for f in found}) == sorted(example.lines)
    if example.severity:
        assert {f.severity for f in found} == {example.severity}


@pytest.mark.parametrize("rule", ALL_RULES, ids=lambda r: r.name)
def test_rule_metadata_is_complete(rule):
    assert rule.code.startswith("MSP") and len(rule.code) == 6
    assert rule.severity in ("error", "warning", "info")
    assert rule.name == rule.name.lower() and " " not in rule.name
    assert rule.message and rule.summary and rule.why and rule.fix
    assert rule.valid and rule.invalid
    assert set(rule.frameworks) <= {"pytorch", "mindspore", "python"}

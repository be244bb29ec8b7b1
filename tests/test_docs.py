"""Rule pages in docs/rules are generated from the rule classes and must not go stale."""

from __future__ import annotations

from pathlib import Path

import pytest
from lint_cli_helpers import lint
from msprobe_rewriter import docs
from msprobe_rewriter.rules import ALL_RULES

RULES_DIR = Path(__file__).resolve().parents[1] / "docs" / "rules"
SECTIONS = ("## What it does", "## Why it breaks reproducibility", "## How to fix", "## Example",
            "## Use instead", "## All examples")


def test_rule_docs_are_up_to_date():
    stale = docs.stale_pages(RULES_DIR)
    assert stale == [], f"stale rule docs {stale}: run `make docs` (python -m msprobe_rewriter.docs docs)"


@pytest.mark.parametrize("rule", ALL_RULES, ids=lambda rule: rule.name)
def test_each_page_has_every_section_and_the_examples(rule):
    page = docs.render_rule(rule)
    assert page.count(f"# {rule.code} `{rule.name}`") == 1
    assert all(section in page for section in SECTIONS)
    assert rule.summary in page and rule.why in page and rule.fix in page
    assert all(example.code.rstrip() in page for example in rule.invalid)
    assert all(code.rstrip() in page for code in rule.valid)
    assert f"| {rule.severity} |" in page


def test_index_links_every_rule():
    index = docs.render_index()
    assert all(f"[{rule.name}]({rule.name}.md)" in index for rule in ALL_RULES)


def test_explain_prints_the_page():
    rule = ALL_RULES[0]
    assert lint("--explain", rule.code).out == docs.render_rule(rule)


def test_generator_writes_checks_and_removes_pages(tmp_path):
    assert docs.main(["--check", str(tmp_path)]) == 1
    assert docs.main([str(tmp_path)]) == 0
    (tmp_path / "rules" / "retired-rule.md").write_text("old")
    assert docs.stale_pages(tmp_path / "rules") == ["retired-rule.md"]
    docs.main([str(tmp_path)])
    assert docs.main(["--check", str(tmp_path)]) == 0
    assert sorted(p.name for p in (tmp_path / "rules").iterdir()) == sorted(docs.expected_pages())
    assert docs.main([]) == 2

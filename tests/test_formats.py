"""Output formats: the JSON contract, SARIF 2.1.0 (schema + a real SARIF library), GitHub, text, statistics."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from lint_cli_helpers import lint, write
from msprobe_rewriter.finding import FileError, Finding
from msprobe_rewriter.lint.formats import RenderOptions, github, render, statistics, text
from msprobe_rewriter.lint.runner import RunReport
from msprobe_rewriter.rules import ALL_RULES
from sarif import loader

SCHEMA = Path(__file__).parent / "data" / "sarif-schema-2.1.0.json"
CONTRACT_KEYS = ["path", "line", "column", "end_line", "end_column", "code", "name", "severity", "message",
                 "fixable"]
MIXED = ("import torch\n\n"
         "torch.backends.cudnn.benchmark = True\n"           # MSP103 error
         "x = torch.randn(3, device='cuda')  # 噪声\n"       # MSP201 error, non-ASCII after
         "noise = torch.rand(2, device='cuda')\n")


@pytest.fixture(autouse=True)
def no_cache(monkeypatch, tmp_path):
    monkeypatch.setenv("MSPROBE_LINT_CACHE_DIR", str(tmp_path / "cache"))


@pytest.fixture
def project(tmp_path):
    write(tmp_path, "src/train.py", MIXED)
    write(tmp_path, "src/broken.py", "import torch\ndef f(:\n")
    return tmp_path


def finding(**changes) -> Finding:
    values = dict(path="a.py", line=3, column=1, end_line=3, end_column=31, code="MSP103", name="cudnn-benchmark",
                  severity="error", message="switch it off", fixable=True)
    values.update(changes)
    return Finding(**values)


# --- JSON ----------------------------------------------------------------------------------------
def test_json_is_exactly_the_contract(project):
    run = lint("--format", "json", "src", cwd=project)
    document = json.loads(run.out)
    assert list(document) == ["version", "findings", "errors"] and document["version"] == 1
    assert document["findings"] and all(list(f) == CONTRACT_KEYS for f in document["findings"])
    first = document["findings"][0]
    assert (first["path"], first["line"], first["column"], first["code"], first["name"], first["severity"]) == (
        "src/train.py", 3, 1, "MSP103", "cudnn-benchmark", "error")
    assert isinstance(first["fixable"], bool) and first["end_column"] > first["column"]
    assert document["errors"] == [{"path": "src/broken.py", "message": "cannot parse: invalid syntax (line 2)"}]


def test_json_fixable_is_per_finding(tmp_path):
    """MSP401's dropouts are fixed by msprobe-instrument (seed_all(rm_dropout=True)); its stochastic-depth
    findings are not, and say so."""
    write(tmp_path, "train.py", "import torch.nn as nn\nfrom timm.layers import DropPath\n\n"
                                "drop, path = nn.Dropout(0.1), DropPath(0.1)\n")
    findings = json.loads(lint("--format", "json", "train.py", cwd=tmp_path).out)["findings"]
    assert [(f["code"], f["fixable"]) for f in findings] == [("MSP401", True), ("MSP401", False)]


# --- SARIF ---------------------------------------------------------------------------------------
def sarif_of(project) -> tuple[dict, Path]:
    run = lint("--format", "sarif", "--output", "out.sarif", "src", cwd=project)
    assert run.code == 1
    path = project / "out.sarif"
    return json.loads(path.read_text(encoding="utf-8")), path


def test_sarif_validates_against_the_official_schema(project):
    document, _ = sarif_of(project)
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    jsonschema.validators.validator_for(schema)(schema).validate(document)


def test_sarif_loads_with_sarif_tools(project):
    _, path = sarif_of(project)
    sarif_file = loader.load_sarif_file(str(path))
    assert sarif_file.get_result_count() == 3
    assert [rule["name"] for rule in sarif_file.get_rules_by_id("MSP201")] == ["device-rng"]
    records = sarif_file.get_records()
    assert {(r["Location"], r["Line"]) for r in records} == {("src/train.py", 3), ("src/train.py", 4), ("src/train.py", 5)}
    assert {r["Severity"] for r in records} == {"error"}


def test_sarif_rules_results_and_notifications(project):
    document, _ = sarif_of(project)
    run = document["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == [rule.code for rule in ALL_RULES]
    cudnn = next(r for r in rules if r["id"] == "MSP103")
    assert cudnn["name"] == "cudnn-benchmark" and cudnn["helpUri"] == "docs/rules/cudnn-benchmark.md"
    assert cudnn["defaultConfiguration"]["level"] == "error"
    assert cudnn["shortDescription"]["text"] and cudnn["fullDescription"]["text"]
    result = run["results"][0]
    assert rules[result["ruleIndex"]]["id"] == result["ruleId"] == "MSP103"
    location = result["locations"][0]["physicalLocation"]
    assert location["artifactLocation"] == {"uri": "src/train.py", "uriBaseId": "%SRCROOT%"}
    assert location["region"]["startLine"] == 3 and location["region"]["startColumn"] == 1
    assert run["columnKind"] == "unicodeCodePoints"
    notes = run["invocations"][0]["toolExecutionNotifications"]
    assert [n["message"]["text"] for n in notes] == ["cannot parse: invalid syntax (line 2)"]
    assert run["invocations"][0]["executionSuccessful"] is True


def test_sarif_artifact_uris_are_escaped():
    report = RunReport(findings=[finding(path="dir with space/a#b.py")], files=1)
    document = json.loads(render("sarif", report, RenderOptions()))
    uri = document["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert uri == "dir%20with%20space/a%23b.py"


# --- GitHub --------------------------------------------------------------------------------------
def test_github_annotations_and_escaping():
    report = RunReport(findings=[finding(), finding(path="a,b:c.py", severity="info", message="50% off\nnow"),
                                 finding(severity="warning")],
                       errors=[FileError("x.py", "cannot parse: bad\r\nthing")], files=3)
    lines = render("github", report, RenderOptions()).splitlines()
    assert lines[0] == ("::error file=a.py,line=3,col=1,endLine=3,endColumn=31,"
                        "title=MSP103 [cudnn-benchmark]::switch it off")
    assert lines[1] == ("::notice file=a%2Cb%3Ac.py,line=3,col=1,endLine=3,endColumn=31,"
                        "title=MSP103 [cudnn-benchmark]::50%25 off%0Anow")
    assert lines[2].startswith("::warning ")
    assert lines[3] == "::error file=x.py,title=msprobe-lint::cannot parse: bad%0D%0Athing"
    assert github.escape_property("a:b,c%") == "a%3Ab%2Cc%25"


def test_github_format_end_to_end(project):
    run = lint("--format", "github", "src", cwd=project)
    assert run.out.splitlines()[0].startswith("::error file=src/train.py,line=3,col=1,")


# --- text ----------------------------------------------------------------------------------------
def test_caret_accounts_for_tabs_and_wide_characters():
    line = "\tx = '噪声' + torch.randn(3)"
    column = line.index("torch") + 1
    caret = text.caret_line(line, finding(column=column, end_column=column + 5))
    assert caret == "\t" + " " * (len("x = '噪声' + ") + 2) + "^~~~~"


def test_text_with_colour_and_errors_and_summary():
    report = RunReport(findings=[finding(), finding(line=4, severity="info", code="MSP502", name="host-sync")],
                       errors=[FileError("b.py", "cannot read: permission denied")], files=3)
    lines_of = {"a.py": ["import torch", "", "torch.backends.cudnn.benchmark = True", "y = 1"]}.get
    plain = render("text", report, RenderOptions(lines_of=lines_of))
    assert "b.py: error: cannot read: permission denied" in plain
    assert "2 findings (1 error, 0 warnings, 1 info) in 1 file (3 checked); 1 file could not be linted." in plain
    coloured = render("text", report, RenderOptions(lines_of=lines_of, color=True))
    assert "\033[1;31mMSP103\033[0m" in coloured and "\033[1;36mMSP502\033[0m" in coloured


def test_text_clean_run_summary():
    assert render("text", RunReport(files=4), RenderOptions()) == "No findings in 4 files checked.\n"


def test_long_source_lines_are_cut_in_the_echo():
    long_line = "x = " + "1 + " * 100 + "torch.randn(3, device='cuda')"
    report = RunReport(findings=[finding(line=1, column=5, end_line=1)], files=1)
    shown = render("text", report, RenderOptions(lines_of=lambda p: [long_line])).splitlines()
    assert len(shown[1]) <= 4 + text.MAX_ECHO and shown[2] == "    " + " " * 4 + "^" + "~" * 25


# --- statistics ----------------------------------------------------------------------------------
def test_statistics_table_counts_per_code():
    findings = [finding(), finding(code="MSP201", name="device-rng"), finding(code="MSP201", name="device-rng")]
    assert statistics.table(findings) == "2  MSP201  [device-rng]\n1  MSP103  [cudnn-benchmark]\n"
    assert statistics.table([]) == ""


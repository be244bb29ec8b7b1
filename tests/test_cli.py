"""The msprobe-lint command line: paths, selection, exit codes, stdin, output, jobs and the cache."""

from __future__ import annotations

import ast
import json
import os
from pathlib import Path

import msprobe_rewriter
import pytest
from lint_cli_helpers import HAZARD, lint, lint_subprocess, write
from msprobe_rewriter.lint import runner
from msprobe_rewriter.lint.cli import use_color
from msprobe_rewriter.rules import ALL_RULES

DEVICE_RNG = "import torch\n\nx = torch.randn(3, device='cuda')\n"  # MSP201 on line 3


@pytest.fixture(autouse=True)
def cache_dir(tmp_path, monkeypatch):
    folder = tmp_path / "lint-cache"
    monkeypatch.setenv("MSPROBE_LINT_CACHE_DIR", str(folder))
    return folder


def codes(run) -> list[str]:
    return [f["code"] for f in json.loads(run.out)["findings"]]


def test_exit_codes_clean_findings_and_exit_zero(tmp_path):
    write(tmp_path, "clean.py", "import torch\n\nx = torch.zeros(3)\n")
    write(tmp_path, "bad.py", HAZARD)
    assert lint("clean.py", cwd=tmp_path).code == 0
    assert lint("bad.py", cwd=tmp_path).code == 1
    assert lint("--exit-zero", "bad.py", cwd=tmp_path).code == 0


def test_text_output_has_location_rule_source_caret_and_summary(tmp_path):
    write(tmp_path, "bad.py", HAZARD)
    run = lint("bad.py", cwd=tmp_path)
    lines = run.out.splitlines()
    assert lines[0].startswith("bad.py:3:1: MSP103 [cudnn-benchmark] ")
    assert lines[1] == "    torch.backends.cudnn.benchmark = True"
    assert lines[2].startswith("    ^~~~")
    assert "1 finding (1 error, 0 warnings, 0 info) in 1 file (1 checked)" in run.out
    assert "--explain MSP103" in run.out
    assert "\033[" not in run.out  # no colour when not on a terminal


def test_folders_are_walked_recursively_in_stable_order(tmp_path):
    write(tmp_path, "pkg/b.py", HAZARD)
    write(tmp_path, "pkg/sub/a.py", HAZARD)
    write(tmp_path, "pkg/notes.txt", HAZARD)
    run = lint("--format", "json", "pkg", cwd=tmp_path)
    assert [f["path"] for f in json.loads(run.out)["findings"]] == [os.path.join("pkg", "b.py"),
                                                                     os.path.join("pkg", "sub", "a.py")]


def test_gitignore_nested_gitignore_and_default_excludes(tmp_path):
    write(tmp_path, ".gitignore", "generated/\n*_pb2.py\n")
    write(tmp_path, "generated/model.py", HAZARD)
    write(tmp_path, "proto_pb2.py", HAZARD)
    write(tmp_path, "sub/.gitignore", "local.py\n!keep_pb2.py\n")
    write(tmp_path, "sub/local.py", HAZARD)
    write(tmp_path, "sub/keep_pb2.py", HAZARD)
    write(tmp_path, "other/local.py", HAZARD)
    for skipped in (".venv", "venv", "build", "dist", "node_modules", ".tox", "site-packages", "__pycache__"):
        write(tmp_path, f"{skipped}/x.py", HAZARD)
    run = lint("--format", "json", ".", cwd=tmp_path)
    paths = sorted(f["path"] for f in json.loads(run.out)["findings"])
    assert paths == [os.path.join("other", "local.py"), os.path.join("sub", "keep_pb2.py")]


def test_explicit_paths_are_linted_even_when_excluded_unless_force_exclude(tmp_path):
    write(tmp_path, ".gitignore", "*_pb2.py\n")
    write(tmp_path, "pyproject.toml", '[tool.msprobe-lint]\nexclude = ["legacy/"]\n')
    write(tmp_path, "legacy/old.py", HAZARD)
    write(tmp_path, "build/gen.py", HAZARD)
    assert lint("legacy/old.py", "build/gen.py", cwd=tmp_path).code == 1
    forced = lint("--force-exclude", "legacy/old.py", "build/gen.py", cwd=tmp_path)
    assert (forced.code, forced.out) == (0, "")


def test_no_paths_exits_zero_quietly(tmp_path):
    run = lint(cwd=tmp_path)
    assert (run.code, run.out, run.err) == (0, "", "")
    assert json.loads(lint("--format", "json", cwd=tmp_path).out) == {"version": 1, "findings": [], "errors": []}


@pytest.mark.parametrize("selector", ["MSP201", "MSP2", "MSP20", "device-rng", "msp201", "MSP103,MSP201"])
def test_select_by_code_prefix_and_name(tmp_path, selector):
    write(tmp_path, "a.py", HAZARD + DEVICE_RNG)
    assert "MSP201" in codes(lint("--format", "json", "--select", selector, "a.py", cwd=tmp_path))
    assert "MSP201" not in codes(lint("--format", "json", "--ignore", selector, "a.py", cwd=tmp_path))


def test_select_is_repeatable_and_ignore_wins_within_the_command_line(tmp_path):
    write(tmp_path, "a.py", HAZARD + DEVICE_RNG)
    run = lint("--format", "json", "--select", "MSP103", "--select", "MSP201", "--ignore", "MSP103", "a.py",
               cwd=tmp_path)
    assert codes(run) == ["MSP201"]


def test_unknown_selector_is_a_usage_error(tmp_path):
    write(tmp_path, "a.py", HAZARD)
    run = lint("--select", "MSP999", "a.py", cwd=tmp_path)
    assert run.code == 2
    assert run.err.strip() == "msprobe-lint: error: unknown rule 'MSP999' (run `msprobe-lint --list-rules`)"


def test_bad_option_is_a_usage_error_without_traceback(tmp_path):
    run = lint("--format", "xml", "a.py", cwd=tmp_path)
    assert run.code == 2
    assert "Invalid value for '--format'" in run.err and "Traceback" not in run.err


def test_missing_path_is_reported_and_the_run_goes_on(tmp_path):
    write(tmp_path, "bad.py", HAZARD)
    run = lint("--format", "json", "nope.py", "bad.py", cwd=tmp_path)
    document = json.loads(run.out)
    assert run.code == 1
    assert document["errors"] == [{"path": "nope.py", "message": "no such file or directory"}]
    assert [f["code"] for f in document["findings"]] == ["MSP103"]


def test_stdin_with_stdin_filename(tmp_path):
    run = lint("--format", "json", "-", "--stdin-filename", "train.py", cwd=tmp_path, stdin=HAZARD.encode())
    assert run.code == 1
    finding = json.loads(run.out)["findings"][0]
    assert (finding["path"], finding["line"], finding["code"]) == ("train.py", 3, "MSP103")
    text = lint("-", cwd=tmp_path, stdin=HAZARD.encode())
    assert text.out.startswith("-:3:1: MSP103") and "    torch.backends.cudnn.benchmark = True" in text.out


def test_stdin_filename_honours_force_exclude_and_per_file_ignores(tmp_path):
    write(tmp_path, "pyproject.toml",
          '[tool.msprobe-lint]\nexclude = ["vendor/"]\nper-file-ignores = {"tests/*.py" = ["MSP103"]}\n')
    excluded = lint("--force-exclude", "--stdin-filename", "vendor/x.py", cwd=tmp_path, stdin=HAZARD.encode())
    assert (excluded.code, excluded.out) == (0, "")
    ignored = lint("--stdin-filename", "tests/test_x.py", cwd=tmp_path, stdin=HAZARD.encode())
    assert ignored.code == 0


def test_output_file_and_statistics(tmp_path):
    write(tmp_path, "a.py", HAZARD + DEVICE_RNG + "y = torch.rand(2, device='cuda')\n")
    run = lint("--output", "out.txt", "a.py", cwd=tmp_path)
    assert run.code == 1 and run.out == ""
    assert "MSP201 [device-rng]" in (tmp_path / "out.txt").read_text()
    stats = lint("--statistics", "a.py", cwd=tmp_path)
    assert stats.out.splitlines()[:2] == ["2  MSP201  [device-rng]", "1  MSP103  [cudnn-benchmark]"]
    machine = lint("--statistics", "--format", "json", "a.py", cwd=tmp_path)
    assert len(json.loads(machine.out)["findings"]) == 3 and "2  MSP201" in machine.err


def test_unwritable_output_is_a_failure(tmp_path):
    write(tmp_path, "a.py", HAZARD)
    run = lint("--output", str(tmp_path / "missing" / "dir" / "out.txt"), "a.py", cwd=tmp_path)
    assert run.code == 2 and run.err.startswith("msprobe-lint: error: cannot write")


def test_list_rules_explain_and_version(tmp_path):
    listing = lint("--list-rules").out.splitlines()
    assert len(listing) == len(ALL_RULES)
    assert any(line.startswith("MSP901  unused-noqa") and "off by default" in line for line in listing)
    as_json = json.loads(lint("--list-rules", "--format", "json").out)
    assert {"MSP103", "MSP901"} <= {rule["code"] for rule in as_json}
    for key in ("MSP103", "cudnn-benchmark"):
        explained = lint("--explain", key)
        assert explained.code == 0 and explained.out.startswith("<!--") and "# MSP103 `cudnn-benchmark`" in explained.out
    unknown = lint("--explain", "nope")
    assert unknown.code == 2 and "unknown rule 'nope'" in unknown.err
    assert lint("--version").out.strip().startswith("msprobe-lint ")


def test_report_unused_noqa(tmp_path):
    source = ("import torch\n\ntorch.backends.cudnn.benchmark = True  # noqa: MSP103\n"
              "torch.backends.cudnn.benchmark = False  # noqa: MSP103, E501\n")
    write(tmp_path, "a.py", source)
    assert lint("a.py", cwd=tmp_path).code == 0
    run = lint("--format", "json", "--report-unused-noqa", "a.py", cwd=tmp_path)
    findings = json.loads(run.out)["findings"]
    assert [(f["code"], f["line"]) for f in findings] == [("MSP901", 4)]
    assert codes(lint("--format", "json", "--select", "MSP103,unused-noqa", "a.py", cwd=tmp_path)) == ["MSP901"]


def test_parallel_jobs_give_the_same_report_as_one_process(tmp_path):
    for i in range(30):
        write(tmp_path, f"pkg/m{i:02}.py", HAZARD if i % 3 else DEVICE_RNG)
    one = lint("--no-cache", "--format", "json", "--jobs", "1", "pkg", cwd=tmp_path)
    many = lint("--no-cache", "--format", "json", "--jobs", "2", "pkg", cwd=tmp_path)
    assert one.out == many.out and len(json.loads(one.out)["findings"]) == 30


def test_internal_error_in_a_rule_is_exit_2_and_the_run_goes_on(tmp_path, monkeypatch):
    write(tmp_path, "a.py", HAZARD)
    write(tmp_path, "b.py", HAZARD)

    def broken(path, data, rules, report_unused_noqa=False):
        if path.endswith("a.py"):
            raise AttributeError("boom")
        return real(path, data, rules, report_unused_noqa)

    real = runner.lint_source
    monkeypatch.setattr(runner, "lint_source", broken)
    run = lint("--no-cache", "--format", "json", "a.py", "b.py", cwd=tmp_path)
    document = json.loads(run.out)
    assert run.code == 2
    assert document["errors"][0]["message"].startswith("internal error: AttributeError: boom")
    assert [f["path"] for f in document["findings"]] == ["b.py"]


def test_unexpected_exception_is_one_line_not_a_traceback(tmp_path, monkeypatch):
    monkeypatch.setattr("msprobe_rewriter.lint.cli.load_config", lambda *a: 1 / 0)
    write(tmp_path, "a.py", HAZARD)
    run = lint("a.py", cwd=tmp_path)
    assert run.code == 2
    assert run.err.startswith("msprobe-lint: internal error: ZeroDivisionError") and "Traceback" not in run.err


def test_console_script_entry_point_and_module(tmp_path):
    write(tmp_path, "a.py", HAZARD)
    run = lint_subprocess("a.py", cwd=tmp_path, env={"MSPROBE_LINT_CACHE_DIR": str(tmp_path / "c")})
    assert run.code == 1 and "a.py:3:1: MSP103" in run.out
    assert lint_subprocess("--select", "nope", "a.py", cwd=tmp_path).code == 2


def test_colour_only_on_a_terminal_and_never_with_no_color(monkeypatch):
    class Terminal:
        def isatty(self):
            return True

    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm")
    assert use_color(Terminal())
    monkeypatch.setenv("NO_COLOR", "1")
    assert not use_color(Terminal())


# --- the cache ---------------------------------------------------------------------------------
def count_lints(monkeypatch) -> list[str]:
    linted: list[str] = []
    real = runner.lint_source

    def counting(path, data, rules, report_unused_noqa=False):
        linted.append(path)
        return real(path, data, rules, report_unused_noqa)

    monkeypatch.setattr(runner, "lint_source", counting)
    return linted


def test_warm_run_reuses_results_and_sees_edits(tmp_path, cache_dir, monkeypatch):
    write(tmp_path, "a.py", HAZARD)
    write(tmp_path, "b.py", DEVICE_RNG)
    linted = count_lints(monkeypatch)
    cold = lint("--format", "json", ".", cwd=tmp_path)
    assert sorted(linted) == ["a.py", "b.py"] and list(cache_dir.glob("lint-*.json"))
    linted.clear()
    warm = lint("--format", "json", ".", cwd=tmp_path)
    assert warm.out == cold.out and linted == []
    write(tmp_path, "b.py", "import torch\n\nx = torch.randn(3)\n")
    edited = lint("--format", "json", ".", cwd=tmp_path)
    assert linted == ["b.py"] and codes(edited) == ["MSP103"]
    linted.clear()
    assert codes(lint("--format", "json", "--select", "MSP201", ".", cwd=tmp_path)) == []
    assert sorted(linted) == ["a.py", "b.py"]  # other rules: other cache entries


def test_cached_results_follow_the_path_as_shown(tmp_path):
    write(tmp_path, "pkg/a.py", HAZARD)
    lint("pkg", cwd=tmp_path)
    run = lint("--format", "json", "a.py", cwd=tmp_path / "pkg")
    assert json.loads(run.out)["findings"][0]["path"] == "a.py"


def test_corrupt_or_unwritable_cache_is_never_fatal(tmp_path, cache_dir, monkeypatch):
    write(tmp_path, "a.py", HAZARD)
    lint("a.py", cwd=tmp_path)
    for cache_file in cache_dir.glob("lint-*.json"):
        cache_file.write_text('{"entries": {"' + str(tmp_path / "a.py") + '": {"codes": 1, "payload": [1]}}')
    assert lint("a.py", cwd=tmp_path).code == 1
    for cache_file in cache_dir.glob("lint-*.json"):
        cache_file.write_bytes(b"\x00garbage")
    assert lint("a.py", cwd=tmp_path).code == 1
    blocker = write(tmp_path, "not-a-dir", "")
    monkeypatch.setenv("MSPROBE_LINT_CACHE_DIR", str(blocker / "cache"))
    run = lint("a.py", cwd=tmp_path)
    assert run.code == 1 and run.err == ""


def test_no_cache_writes_nothing_and_default_cache_lives_in_the_project_root(tmp_path, cache_dir, monkeypatch):
    write(tmp_path, "pyproject.toml", "[tool.msprobe-lint]\n")
    write(tmp_path, "src/a.py", HAZARD)
    lint("--no-cache", "a.py", cwd=tmp_path / "src")
    assert not cache_dir.exists()
    monkeypatch.delenv("MSPROBE_LINT_CACHE_DIR")
    lint("a.py", cwd=tmp_path / "src")
    assert list((tmp_path / ".msprobe_lint_cache").glob("lint-*.json"))


def test_a_checkout_without_project_markers_is_its_own_project(tmp_path):
    """A zip or `git archive` copy has no .git or pyproject.toml: the folders above the one linted (here a
    neighbour that imports its helper and takes a backward through it) are not its project."""
    checkout = tmp_path / "checkout"
    write(checkout, "utils.py", "import torch.nn.functional as F\n\n\n"
                                "def resize(x):\n    return F.interpolate(x, scale_factor=2, mode='bilinear')\n")
    write(checkout, "tools/show.py", "import torch\nfrom utils import resize\n\nwith torch.no_grad():\n"
                                     "    y = resize(torch.ones(1, 1, 2, 2))\n")
    write(tmp_path, "other/run.py", "import torch\nfrom utils import resize\n\n"
                                    "resize(torch.ones(1, 1, 2, 2, requires_grad=True)).sum().backward()\n")
    assert codes(lint("--format", "json", "--select", "MSP501", ".", cwd=checkout)) == []
    assert codes(lint("--format", "json", "--select", "MSP501", "checkout", cwd=tmp_path)) == ["MSP501"]


def test_cached_results_of_scripts_follow_their_project_helpers(tmp_path, monkeypatch):
    """seed-missing follows project-local imports: a helper's edit (or a new module) must show, yet an
    unchanged project must not be re-linted."""
    write(tmp_path, "pyproject.toml", "[tool.msprobe-lint]\n")
    write(tmp_path, "utils.py", "import torch\n\n\ndef setup(seed):\n    torch.manual_seed(seed)\n")
    write(tmp_path, "train.py", "import torch\nfrom utils import setup\nfrom helpers import prepare\n\n\n"
                                "def main():\n    setup(0)\n    prepare()\n    x = torch.randn(3)\n    x.backward()\n\n\n"
                                "if __name__ == '__main__':\n    main()\n")
    linted = count_lints(monkeypatch)
    lint_101 = ("--format", "json", "--select", "MSP101", "train.py")
    assert codes(lint(*lint_101, cwd=tmp_path)) == [] and linted == ["train.py"]
    assert codes(lint(*lint_101, cwd=tmp_path)) == [] and linted == ["train.py"]  # cached, helpers unchanged
    write(tmp_path, "utils.py", "import torch\n\n\ndef setup(seed):\n    pass\n")
    assert codes(lint(*lint_101, cwd=tmp_path)) == ["MSP101"] and len(linted) == 2
    write(tmp_path, "helpers.py", "import random\n\n\ndef prepare():\n    random.seed(0)\n")  # a new module
    lint(*lint_101, cwd=tmp_path)
    assert len(linted) == 3


def test_project_lookups_are_called_through_the_module():
    """The cache's dependency recorder wraps `project.find_module` / `project.load` on the module."""
    package = Path(msprobe_rewriter.__file__).parent
    for path in package.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_bytes())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[-1] == "project":
                bound = {alias.name for alias in node.names} & {"find_module", "load", "_load"}
                assert not bound, f"{path}: call project.{bound.pop()}(...) through the module"

"""`[tool.msprobe-lint]`: where it is found, what each key does, and one clear line for every mistake."""

from __future__ import annotations

import json

import pytest
from lint_cli_helpers import HAZARD, lint, write

DEVICE_RNG = "import torch\n\nx = torch.randn(3, device='cuda')\n"


@pytest.fixture(autouse=True)
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("MSPROBE_LINT_CACHE_DIR", str(tmp_path / "cache"))


def codes(run) -> list[str]:
    return sorted(f["code"] for f in json.loads(run.out)["findings"])


@pytest.fixture
def project(tmp_path):
    write(tmp_path, "src/a.py", HAZARD + DEVICE_RNG)
    return tmp_path


def configure(project, body: str) -> None:
    write(project, "pyproject.toml", f"[project]\nname = 'x'\n\n[tool.msprobe-lint]\n{body}")


def test_config_is_found_by_walking_up_from_the_current_folder(project):
    configure(project, 'select = ["MSP201"]\n')
    assert codes(lint("--format", "json", "a.py", cwd=project / "src")) == ["MSP201"]


def test_a_pyproject_without_our_table_is_skipped(project):
    configure(project, 'ignore = ["MSP103"]\n')
    write(project, "src/pyproject.toml", "[project]\nname = 'inner'\n")
    assert codes(lint("--format", "json", "a.py", cwd=project / "src")) == ["MSP201"]


def test_select_ignore_by_prefix_and_name(project):
    configure(project, 'select = ["MSP1", "device-rng"]\nignore = ["cudnn-benchmark"]\n')
    assert codes(lint("--format", "json", "src", cwd=project)) == ["MSP201"]


def test_command_line_select_replaces_the_configuration_and_ignore_adds(project):
    configure(project, 'select = ["MSP201"]\nignore = ["MSP103"]\n')
    assert codes(lint("--format", "json", "--select", "MSP103", "src", cwd=project)) == ["MSP103"]
    assert codes(lint("--format", "json", "--ignore", "MSP201", "src", cwd=project)) == []


def test_per_file_ignores(project):
    configure(project, '[tool.msprobe-lint.per-file-ignores]\n"src/*.py" = ["MSP103"]\n"tests/**" = ["ALL"]\n')
    write(project, "tests/unit/test_a.py", HAZARD + DEVICE_RNG)
    assert codes(lint("--format", "json", ".", cwd=project)) == ["MSP201"]


def test_exclude_is_gitignore_style_and_adds_to_the_builtin_skips(project):
    configure(project, 'exclude = ["legacy/", "*_generated.py"]\n')
    write(project, "legacy/old.py", HAZARD)
    write(project, "src/model_generated.py", HAZARD)
    write(project, "build/x.py", HAZARD)
    run = lint("--format", "json", ".", cwd=project)
    assert {f["path"] for f in json.loads(run.out)["findings"]} == {"src/a.py"}


def test_explicit_config_file(project):
    write(project, "conf/lint.toml", 'select = ["MSP103"]\n')
    write(project, "conf/pyproject.toml", '[tool.msprobe-lint]\nselect = ["MSP201"]\n')
    assert codes(lint("--format", "json", "--config", "conf/lint.toml", "src", cwd=project)) == ["MSP103"]
    assert codes(lint("--format", "json", "--config", "conf/pyproject.toml", "src", cwd=project)) == ["MSP201"]


@pytest.mark.parametrize(("body", "message"), [
    ('selct = ["MSP1"]\n', "[tool.msprobe-lint] unknown key 'selct' (known keys: select, ignore, "
                           "per-file-ignores, exclude)"),
    ('select = "MSP1"\nignore = 3\n', "[tool.msprobe-lint] 'ignore' must be a list of strings, got int"),
    ('select = ["MSP1", 2]\n', "[tool.msprobe-lint] 'select' must be a list of strings, got list"),
    ('ignore = ["MSP777"]\n', "[tool.msprobe-lint] 'ignore': unknown rule 'MSP777'"),
    ('per-file-ignores = ["a"]\n', "[tool.msprobe-lint] 'per-file-ignores' must be a table of glob = [rules]"),
    ('per-file-ignores = {"t/*" = ["nope"]}\n', "[tool.msprobe-lint] 'per-file-ignores' 't/*': unknown rule 'nope'"),
    ('exclude = [1]\n', "[tool.msprobe-lint] 'exclude' must be a list of strings, got list"),
])
def test_mistakes_are_one_line_naming_the_key_with_exit_2(project, body, message):
    configure(project, body)
    run = lint("src", cwd=project)
    assert run.code == 2 and run.out == ""
    assert run.err.count("\n") == 1 and message in run.err and "pyproject.toml" in run.err


def test_invalid_toml_and_missing_config_file(project):
    write(project, "pyproject.toml", "[tool.msprobe-lint]\nselect = [\n")
    broken = lint("src", cwd=project)
    assert broken.code == 2 and "pyproject.toml: invalid TOML:" in broken.err and broken.err.count("\n") == 1
    missing = lint("--config", "nope.toml", "src", cwd=project)
    assert missing.code == 2 and "nope.toml: configuration file not found" in missing.err
    table = lint("--config", "bad.toml", "src", cwd=write(project, "bad.toml", "[tool]\nmsprobe-lint = 1\n").parent)
    assert table.code == 2 and "[tool.msprobe-lint] must be a table" in table.err

"""The pre-commit hook, run for real with `pre-commit try-repo` against a temporary git repository."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import yaml
from lint_cli_helpers import HAZARD

REPO = Path(__file__).resolve().parents[1]
GIT_ENV = {"GIT_AUTHOR_NAME": "test", "GIT_AUTHOR_EMAIL": "test@example.com", "GIT_COMMITTER_NAME": "test",
           "GIT_COMMITTER_EMAIL": "test@example.com", "GIT_CONFIG_GLOBAL": os.devnull,
           "GIT_CONFIG_NOSYSTEM": "1"}


def git(*args: str, cwd: Path) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, env={**os.environ, **GIT_ENV}, capture_output=True, text=True,
                          check=True)
    return done.stdout


def snapshot_of_this_repository(destination: Path) -> Path:
    """A committed copy of the working tree (tracked and untracked files): try-repo installs from git."""
    listed = git("ls-files", "--cached", "--others", "--exclude-standard", "-z", cwd=REPO).split("\0")
    for name in filter(None, listed):
        source = REPO / name
        if source.is_file() and not source.is_symlink():
            target = destination / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    git("init", "-q", cwd=destination)
    git("add", "-A", cwd=destination)
    git("commit", "-q", "-m", "snapshot", cwd=destination)
    return destination


def try_repo(hook_repo: Path, project: Path, home: Path, *files: str) -> subprocess.CompletedProcess:
    env = {**os.environ, **GIT_ENV, "PRE_COMMIT_HOME": str(home), "MSPROBE_LINT_CACHE_DIR": str(home / "lint")}
    return subprocess.run(["pre-commit", "try-repo", str(hook_repo), "msprobe-lint", "--files", *files],
                          cwd=project, env=env, capture_output=True, text=True, timeout=900)


def test_hook_definition():
    hooks = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())
    hook = next(h for h in hooks if h["id"] == "msprobe-lint")
    assert hook["language"] == "python" and hook["types"] == ["python"] and hook["require_serial"] is True
    assert "--force-exclude" in hook["entry"]


def test_pre_commit_try_repo_fails_on_a_hazard_then_passes_with_noqa(tmp_path):
    hook_repo = snapshot_of_this_repository(tmp_path / "hook-repo")
    project = tmp_path / "project"
    project.mkdir()
    git("init", "-q", cwd=project)
    (project / "pyproject.toml").write_text('[tool.msprobe-lint]\nexclude = ["vendored/"]\n')
    (project / "train.py").write_text(HAZARD)
    (project / "vendored").mkdir()
    (project / "vendored" / "lib.py").write_text(HAZARD)
    git("add", "-A", cwd=project)

    failed = try_repo(hook_repo, project, tmp_path / "pre-commit-home", "train.py", "vendored/lib.py")
    output = failed.stdout + failed.stderr
    assert failed.returncode == 1, output
    assert "train.py:3:1: MSP103 [cudnn-benchmark]" in output and "vendored/lib.py" not in output

    (project / "train.py").write_text(HAZARD.replace("= True", "= True  # noqa: MSP103"))
    git("add", "-A", cwd=project)
    passed = try_repo(hook_repo, project, tmp_path / "pre-commit-home", "train.py", "vendored/lib.py")
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert "Passed" in passed.stdout

"""The msprobe-instrument command: modes, exit codes, file handling."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from msprobe_rewriter.instrument.markers import strip

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ("import torch\n\nmodel = torch.nn.Linear(2, 1)\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
          "for x in torch.utils.data.DataLoader(torch.randn(8, 2), batch_size=2, shuffle=True):\n"
          "    model(x).sum().backward()\n    opt.step()\n")


def cli(*args: str, cwd: Path, stdin: bytes | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "msprobe_rewriter.instrument", *args], cwd=cwd, input=stdin,
                          capture_output=True, timeout=300)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "train.py").write_text(SCRIPT)
    (tmp_path / "clean.py").write_text("print('no framework here')\n")
    return tmp_path


def test_default_prints_a_diff_and_changes_nothing(project):
    result = cli("train.py", "clean.py", cwd=project)
    assert result.returncode == 1
    assert b"--- a/train.py" in result.stdout and b"+++ b/train.py" in result.stdout
    assert (project / "train.py").read_text() == SCRIPT
    assert b"1 file would be instrumented, 1 unchanged" in result.stderr


def test_diff_headers_apply_with_patch(project):
    """Headed as git heads a diff (`a/`, `b/`; an absolute path without its leading `/`), so that `patch -p1`
    applies it: from the folder given, or from `/` for an absolute path."""
    relative = cli(os.path.join(".", "sub", "..", "train.py"), cwd=project).stdout
    assert relative.startswith(b"--- a/train.py\n+++ b/train.py\n")
    shown = str(project / "train.py").lstrip("/")
    assert cli(str(project / "train.py"), cwd=project).stdout.startswith(f"--- a/{shown}\n+++ b/{shown}\n".encode())


def test_write_check_undo_cycle_keeps_the_file_mode(project):
    path = project / "train.py"
    os.chmod(path, 0o750)
    assert cli("--write", "--emit-config", ".", cwd=project).returncode == 0
    assert "PrecisionDebugger" in path.read_text()
    assert stat.S_IMODE(path.stat().st_mode) == 0o750
    config = json.loads((project / "config.json").read_text())
    assert config["task"] == "statistics" and config["step"] == [0, 1] and config["level"] == "L1"
    assert cli("--check", ".", cwd=project).returncode == 0  # idempotent: nothing more to do
    assert cli("--check", "--undo", ".", cwd=project).returncode == 1  # instrumentation present
    assert cli("--undo", "--write", "train.py", cwd=project).returncode == 0
    assert path.read_text() == SCRIPT
    assert stat.S_IMODE(path.stat().st_mode) == 0o750
    assert cli("--check", "--undo", ".", cwd=project).returncode == 0
    assert not (project / "config.json").exists()  # what --emit-config wrote goes too


def test_undo_removes_an_emitted_config_only_when_unchanged_and_unused(project):
    """Undo takes away the config `--emit-config` wrote, but not while another script beside it still uses it,
    and never one edited since (it is the user's now)."""
    (project / "other.py").write_text(SCRIPT)
    config = project / "config.json"
    assert cli("--write", "--emit-config", "train.py", "other.py", cwd=project).returncode == 0
    undone = cli("--undo", "--write", "train.py", cwd=project)
    assert undone.returncode == 0 and config.exists() and b"removed" not in undone.stderr  # other.py uses it
    told = cli("--undo", "other.py", cwd=project)
    assert b"would remove" in told.stderr and config.exists()  # a dry run only tells
    undone = cli("--undo", "--write", "other.py", cwd=project)
    assert undone.returncode == 0 and b"removed" in undone.stderr and not config.exists()
    assert cli("--write", "--emit-config", "train.py", cwd=project).returncode == 0
    config.write_text(config.read_text().replace('"L1"', '"L0"'))
    assert cli("--undo", "--write", "train.py", cwd=project).returncode == 0
    assert json.loads(config.read_text())["level"] == "L0"  # edited: kept


def test_writing_a_script_and_its_helper_together_is_stable(tmp_path):
    """A script that trains through another entry script's main() (Megatron-LM's hybrid text-generation
    server imports run_text_generation_server): both get seed_all, and a second run changes nothing. The
    helper is read as written, without the seed_all this run added (before, the second run saw that
    seed_all run at import and took the script's own away again)."""
    helper = ("import torch\n\n\ndef main():\n    model = torch.nn.Linear(2, 2)\n"
              "    opt = torch.optim.SGD(model.parameters(), lr=0.1)\n    for x in torch.randn(4, 2, 2):\n"
              "        opt.zero_grad()\n        model(x).sum().backward()\n        opt.step()\n\n\n"
              "if __name__ == \"__main__\":\n    main()\n")
    script = "import os\nimport sys\n\nfrom helper import main\n\nif __name__ == \"__main__\":\n    main()\n"
    (tmp_path / "helper.py").write_text(helper)
    (tmp_path / "script.py").write_text(script)
    assert cli("--write", "script.py", "helper.py", cwd=tmp_path).returncode == 0
    assert "seed_all(" in (tmp_path / "script.py").read_text() and "seed_all(" in (tmp_path / "helper.py").read_text()
    assert cli("--check", "script.py", "helper.py", cwd=tmp_path).returncode == 0
    assert cli("--undo", "--write", "script.py", "helper.py", cwd=tmp_path).returncode == 0
    assert (tmp_path / "script.py").read_text() == script and (tmp_path / "helper.py").read_text() == helper


def test_write_analyses_every_file_before_writing_any(tmp_path, monkeypatch):
    """Each file is analysed beside the others as they were: a file written mid-run would be parsed anew
    for the files after it, beside modules parsed before the write (Megatron-LM's test_cuda_graphs.py, run
    after megatron/training/training.py, got a second debugger around a loop of whole training runs)."""
    from click.testing import CliRunner
    from msprobe_rewriter.instrument import cli as instrument_cli

    for name in ("a.py", "b.py"):
        (tmp_path / name).write_text(SCRIPT)
    events = []
    analyse, write = instrument_cli.run, instrument_cli._write
    monkeypatch.setattr(instrument_cli, "run", lambda path, *args, **kw: events.append("analyse") or analyse(path, *args, **kw))
    monkeypatch.setattr(instrument_cli, "_write", lambda *args: events.append("write") or write(*args))
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(instrument_cli.main, ["--write", "-q", "a.py", "b.py"])
    assert result.exit_code == 0, result.output
    assert events == ["analyse", "analyse", "write", "write"]


def test_test_files_in_a_folder_are_left_unless_named_or_included(project):
    """A test suite's files met in a folder walk are not instrumented: `test_*.py`, `*_test.py`, `conftest.py`, and
    files under `tests/` (or `*_tests/`) below the folder named; naming one, or `--include-tests`, does."""
    for name in ("test_train.py", "train_test.py", "conftest.py", "tests/helpers.py", "unit_tests/run.py"):
        (project / name).parent.mkdir(exist_ok=True)
        (project / name).write_text(SCRIPT)
    walked = cli(".", cwd=project)
    assert walked.stdout.count(b"+++ b/") == 1 and b"+++ b/train.py" in walked.stdout
    assert b"5 test files skipped (name them, or pass --include-tests)" in walked.stderr
    assert cli("test_train.py", cwd=project).stdout.count(b"+++ b/") == 1
    assert cli("tests", cwd=project).stdout.count(b"+++ b/") == 1  # the folder named is no test folder below it
    assert cli("--include-tests", ".", cwd=project).stdout.count(b"+++ b/") == 6
    assert cli("--write", ".", cwd=project).returncode == 0
    assert (project / "test_train.py").read_text() == SCRIPT


def test_a_rerun_keeps_the_options_an_instrumented_file_was_written_with(project):
    """A plain `--check` (a CI gate) or `--write` (one more script) must not turn `--deterministic` back off: options
    left at their defaults are read from the `seed_all` the earlier run added; options given still change it."""
    path = project / "train.py"
    assert cli("--write", "--deterministic", "--seed", "7", "train.py", cwd=project).returncode == 0
    assert "seed_all(seed=7, mode=True, rm_dropout=True)" in path.read_text()
    assert cli("--check", "train.py", cwd=project).returncode == 0
    assert cli("--write", "--keep-dropout", "train.py", cwd=project).returncode == 0
    assert "seed_all(seed=7, mode=True, rm_dropout=False)" in path.read_text()
    assert cli("--check", "--no-deterministic", "train.py", cwd=project).returncode == 1


def test_a_rerun_keeps_the_target_the_data_mode_and_the_gradient_probe(project):
    """`--target msprobe`, `--data strict` and `--grad-probe` are read back from the earlier run's edits (its
    import, its `num_workers=0`, its `monitor`) when not given again; given again, they change the file."""
    path = project / "train.py"
    path.write_text("from torch.utils.data import DataLoader\n" + SCRIPT.replace(
        "for x in", "loader = DataLoader(\n    ds,\n    num_workers=4,\n)\nfor x in"))
    assert cli("--write", "--target", "msprobe", "--data", "strict", "--grad-probe", "train.py",
               cwd=project).returncode == 0
    written = path.read_text()
    assert "from msprobe.pytorch import" in written and "num_workers=0," in written and ".monitor(model)" in written
    assert cli("--check", "train.py", cwd=project).returncode == 0
    assert cli("--write", "--seed", "3", "train.py", cwd=project).returncode == 0
    assert strip(path.read_text()) == strip(written).replace("seed=1234", "seed=3")
    assert cli("--write", "--target", "runtime", "--data", "default", "--no-grad-probe", "train.py",
               cwd=project).returncode == 0
    rewritten = path.read_text()
    assert "from msprobe_runtime.pytorch import" in rewritten and "num_workers=4," in rewritten
    assert ".monitor(" not in rewritten


def test_check_reports_pending_changes(project):
    assert cli("--check", "train.py", cwd=project).returncode == 1
    assert (project / "train.py").read_text() == SCRIPT


def test_unparsable_and_missing_files_exit_2_with_one_line_each(project):
    (project / "broken.py").write_text("import torch\ndef f(:\n")
    (project / "python2.py").write_text("import os\ntry:\n    pass\nexcept Exception, e:\n    pass\n")  # nothing to do
    result = cli("--write", "broken.py", "missing.py", "python2.py", "train.py", cwd=project)
    assert result.returncode == 2
    errors = [line for line in result.stderr.decode().splitlines()
              if line.startswith(("broken.py", "missing.py", "python2.py"))]
    assert len(errors) == 3 and "Traceback" not in result.stderr.decode()
    assert (project / "broken.py").read_text() == "import torch\ndef f(:\n"
    assert "PrecisionDebugger" in (project / "train.py").read_text()  # the good file is still done


def test_indentation_libcst_rejects_names_its_line(project):
    """Python accepts `  \t  ` under a 4-space block (tab stops of 8); libcst's tokenizer does not."""
    text = SCRIPT.replace("    model(x).sum().backward()\n", "    with torch.enable_grad():\n  \t  model(x).sum().backward()\n")
    (project / "tabs.py").write_text(text)
    result = cli("tabs.py", cwd=project)
    assert result.returncode == 2
    assert result.stderr.decode().splitlines()[0] == (
        "tabs.py: cannot parse: line 7 mixes tabs and spaces in its indentation, which Python accepts but libcst "
        "(the rewriting library) does not: indent it with spaces only")


def test_undo_refuses_an_edited_marked_line(project):
    cli("--write", "train.py", cwd=project)
    path = project / "train.py"
    path.write_text(path.read_text().replace("shuffle=False", "shuffle=None"))
    result = cli("--undo", "--write", "train.py", cwd=project)
    assert result.returncode == 2 and b"refusing to undo: line" in result.stderr


def test_stdin_to_stdout(project):
    result = cli("-", "--select", "data-shuffle", cwd=project, stdin=SCRIPT.encode())
    assert result.returncode == 0 and b"shuffle=False" in result.stdout and b"seed_all" not in result.stdout


def test_usage_errors_exit_2(project):
    assert cli("--select", "bogus", "train.py", cwd=project).returncode == 2
    assert cli("--write", "--check", "train.py", cwd=project).returncode == 2
    assert cli("--target", "nope", "train.py", cwd=project).returncode == 2


def test_no_paths_is_a_quiet_success(project):
    result = cli(cwd=project)
    assert result.returncode == 0 and result.stdout == b""


def test_target_msprobe_and_options_reach_the_code(project):
    result = cli("--target", "msprobe", "--seed", "7", "--deterministic", "--keep-dropout", "--config",
                 "cfg/debug.json", "train.py", cwd=project)
    out = result.stdout.decode()
    assert "from msprobe.pytorch import PrecisionDebugger, seed_all" in out
    assert "seed_all(seed=7, mode=True, rm_dropout=False)" in out
    assert 'os.path.join(os.path.dirname(__file__), "cfg/debug.json")' in out


def test_pre_commit_hook_is_declared():
    hooks = (ROOT / ".pre-commit-hooks.yaml").read_text()
    assert "id: msprobe-instrument-check" in hooks
    entry = hooks.split("id: msprobe-instrument-check", 1)[1]
    assert "msprobe-instrument" in entry and "--check" in entry and "--undo" in entry

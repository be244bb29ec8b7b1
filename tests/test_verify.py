"""msprobe-verify end to end: each fixture script is run twice for real, with capture injected."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "data" / "verify"


def verify(*arguments, cwd: Path) -> subprocess.CompletedProcess:
    """msprobe-verify run in `cwd`, its temporary folders made in `cwd/tmp` (not the machine's /tmp)."""
    (cwd / "tmp").mkdir(exist_ok=True)
    command = [sys.executable, "-m", "msprobe_runtime.verify.cli", *map(str, arguments)]
    return subprocess.run(command, capture_output=True, text=True, cwd=cwd, timeout=600,
                          env={**os.environ, "TMPDIR": str(cwd / "tmp")})


def hazard_line(script: Path) -> int:
    return next(number for number, text in enumerate(script.read_text().splitlines(), start=1) if "# HAZARD" in text)


def test_reproducible_script_over_two_steps(tmp_path):
    done = verify("--steps", "2", "--parallel", "--", sys.executable, FIXTURES / "reproducible.py", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith("reproducible: 2 step(s), ")
    assert not list((tmp_path / "tmp").glob("msprobe-verify-*"))  # its temporary folder is removed (no --keep)


@pytest.mark.parametrize("name, call, lint_code", [
    ("unseeded_init", "Tensor.uniform_.0.forward", "MSP101"),
    ("shuffle", "Tensor.random_.0.forward", "MSP301"),
    ("dropout", "Functional.dropout.0.forward", "MSP401"),
    ("device_noise", "Tensor.sum.0.forward", None),
])
def test_each_hazard_is_found_at_its_line(tmp_path, name, call, lint_code):
    script = FIXTURES / f"{name}.py"
    done = verify("--parallel", "--keep", tmp_path / "work", "--", sys.executable, script, cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    first = done.stdout.splitlines()[0]
    assert first == f"not reproducible: first diverging call {call} (step 0) at {script}:{hazard_line(script)}"
    assert "# HAZARD" in done.stdout  # the code line is quoted
    if lint_code:
        assert lint_code in done.stdout
    assert (tmp_path / "work" / "run0" / "dump" / "step0" / "rank0" / "dump.json").is_file()


def test_a_script_with_its_own_debugger(tmp_path):
    done = verify("--steps", "2", "--", sys.executable, FIXTURES / "own_debugger.py", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith("reproducible: 2 step(s)")
    assert not (tmp_path / "never_written_by_verify" / "step0").exists()


def test_errors_exit_2_with_one_line(tmp_path):
    failing = tmp_path / "failing.py"
    failing.write_text("raise SystemExit('boom: bad argument')\n")
    no_torch = tmp_path / "no_torch.py"
    no_torch.write_text("print('hello')\n")
    cases = [
        ((), "give the command to run"),
        (("--", sys.executable, failing), "run 1 failed with exit status 1: boom: bad argument"),
        (("--", sys.executable, no_torch), "nothing was captured"),
        (("--", tmp_path / "no-such-program"), "cannot run"),
        (("--config", tmp_path / "missing.json", "--", sys.executable, no_torch), "config file"),
    ]
    for arguments, message in cases:
        done = verify(*arguments, cwd=tmp_path)
        assert done.returncode == 2, (arguments, done.stdout, done.stderr)
        assert done.stderr.startswith("msprobe-verify: error: ") and message in done.stderr
        assert "Traceback" not in done.stderr


@pytest.mark.parametrize("hazard", [False, True])
def test_torchrun_workers_each_capture_their_rank(tmp_path, hazard):
    """Under torchrun the launcher captures nothing and each worker writes its own rank, from step 0 on
    (before init_process_group), so a hazard on rank 1 is found on rank 1."""
    script = FIXTURES / "ddp_unseeded_rank.py"
    if not hazard:
        script = tmp_path / "seeded.py"
        script.write_text((FIXTURES / "ddp_unseeded_rank.py").read_text().replace("torch.seed()", "1"))
    launcher = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2"]
    done = verify("--steps", "2", "--keep", tmp_path / "work", "--", *launcher, script, cwd=tmp_path)
    folders = sorted(path.relative_to(tmp_path / "work" / "run0" / "dump").as_posix()
                     for path in (tmp_path / "work" / "run0" / "dump").glob("step*/rank*"))
    assert folders == ["step0/rank0", "step0/rank1", "step1/rank0", "step1/rank1"], done.stdout + done.stderr
    if not hazard:
        assert done.returncode == 0 and done.stdout.startswith("reproducible: 2 step(s)"), done.stdout + done.stderr
        return
    assert done.returncode == 1, done.stdout + done.stderr
    first = done.stdout.splitlines()[0]
    assert first.startswith("not reproducible: first diverging call Torch.randn.0.forward (step 0, rank 1) at ")
    assert first.endswith(f"{script}:{hazard_line(script)}")


@pytest.mark.parametrize(("argv", "orig_argv", "launcher"), [
    (["-m"], ["python", "-m", "torch.distributed.run", "--nproc_per_node", "2", "train.py"], True),
    (["/usr/bin/torchrun"], ["python", "/usr/bin/torchrun", "train.py"], True),
    (["-m"], ["python", "-m", "train"], False),
    (["train.py"], ["python", "train.py", "-m", "torch.distributed.run"], False),
])
def test_the_launcher_is_told_while_its_package_imports_torch(monkeypatch, argv, orig_argv, launcher):
    """`python -m torch.distributed.run` imports torch (so capture starts) while sys.argv[0] is still "-m": a
    launcher that captured wrote an empty step0/rank0 at exit, over rank 0's."""
    from msprobe_runtime.verify import inprocess

    monkeypatch.setattr(sys, "argv", argv)
    monkeypatch.setattr(sys, "orig_argv", orig_argv)
    assert inprocess._is_launcher() is launcher

"""Run `msprobe-lint` in-process (fast) or as a subprocess (real entry point) and capture everything."""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from msprobe_rewriter.lint.cli import main

HAZARD = "import torch\n\ntorch.backends.cudnn.benchmark = True\n"  # MSP103 on line 3


@dataclass
class Run:
    code: int
    out: str
    err: str


def lint(*args: str, cwd: Path | str | None = None, stdin: bytes = b"") -> Run:
    """`msprobe-lint ARGS` in this process, from `cwd`, with `stdin` as standard input."""
    out, err = io.StringIO(), io.StringIO()
    previous_cwd, previous_stdin = os.getcwd(), sys.stdin
    sys.stdin = io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8")
    try:
        if cwd is not None:
            os.chdir(cwd)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(list(args))
    finally:
        os.chdir(previous_cwd)
        sys.stdin = previous_stdin
    return Run(code, out.getvalue(), err.getvalue())


def lint_subprocess(*args: str, cwd: Path | str | None = None, stdin: bytes = b"",
                    env: dict | None = None) -> Run:
    """`python -m msprobe_rewriter.lint ARGS` as a child process."""
    done = subprocess.run([sys.executable, "-m", "msprobe_rewriter.lint", *args], cwd=cwd, input=stdin,
                          capture_output=True, env={**os.environ, **(env or {})}, timeout=600)
    return Run(done.returncode, done.stdout.decode("utf-8", "replace"), done.stderr.decode("utf-8", "replace"))


def write(folder: Path, name: str, text: str | bytes) -> Path:
    """Create `folder/name` (and its parents) holding `text`."""
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path

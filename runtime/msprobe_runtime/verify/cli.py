"""`msprobe-verify [--steps N] [--config FILE] -- python train.py ARGS...`: is this script reproducible?

Runs the command twice with capture injected (the script is not changed), captures the first N steps
with content hashes, and compares the runs: "reproducible" (bit-identical) and exit 0, or "not
reproducible" with the first diverging call, its source line and the msprobe-lint findings at or near
it, and exit 1. Exit 2 when a run fails or nothing was captured.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import click

from msprobe_runtime.core.compare import CompareError, compare
from msprobe_runtime.verify import inprocess, lint

INJECT_DIR = Path(__file__).parent / "inject"
_STEP_PREFIX = "step"


class VerifyError(Exception):
    """A verification that could not be carried out; the message says why."""


def _environment(dump: Path, steps: int, config: Path | None, run: int) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(INJECT_DIR), env.get("PYTHONPATH", "")]))
    env[inprocess.ENV_DIR] = str(dump)
    env[inprocess.ENV_STEPS] = str(steps)
    env[inprocess.ENV_RUN] = str(run)
    if config is not None:
        env[inprocess.ENV_CONFIG] = str(config)
    else:
        env.pop(inprocess.ENV_CONFIG, None)
    return env


def run_twice(command: list[str], work: Path, steps: int, config: Path | None, parallel: bool) -> list[Path]:
    """Run `command` twice with capture injected; returns the two dump folders."""
    dumps, processes = [], []
    for run in (0, 1):
        folder = work / f"run{run}"
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        dumps.append(folder / "dump")
        log = open(folder / "output.log", "wb")  # noqa: SIM115 - closed below
        try:
            process = subprocess.Popen(command, env=_environment(folder / "dump", steps, config, run),
                                       stdout=log, stderr=subprocess.STDOUT)
        except OSError as error:
            log.close()
            raise VerifyError(f"cannot run {command[0]!r}: {error.strerror or error}") from None
        processes.append((process, log, folder))
        if not parallel:
            _wait(*processes[-1], run)
    if parallel:
        for run, entry in enumerate(processes):
            _wait(*entry, run)
    return dumps


def _wait(process: subprocess.Popen, log, folder: Path, run: int) -> None:
    code = process.wait()
    log.close()
    if code != 0:
        text = (folder / "output.log").read_text(encoding="utf-8", errors="replace").strip().splitlines()
        last = text[-1] if text else "no output"
        raise VerifyError(f"run {run + 1} failed with exit status {code}: {last} (full output: {folder / 'output.log'})")


def _steps(dump: Path) -> dict[int, Path]:
    found = {}
    if dump.is_dir():
        for child in dump.iterdir():
            if child.name.startswith(_STEP_PREFIX) and child.name[len(_STEP_PREFIX):].isdigit():
                found[int(child.name[len(_STEP_PREFIX):])] = child
    return found


def verify(command: list[str], work: Path, steps: int, config: Path | None, parallel: bool) -> tuple[int, list[str]]:
    """Run, compare and report: (exit code, lines to print)."""
    first, second = run_twice(command, work, steps, config, parallel)
    steps_first, steps_second = _steps(first), _steps(second)
    common = sorted(set(steps_first) & set(steps_second))
    if not common:
        raise VerifyError("nothing was captured: the command never imported torch (or made no step); "
                          f"output of the runs: {work / 'run0' / 'output.log'}")
    calls = rows = 0
    for step in common:
        run = compare(steps_first[step], steps_second[step], work / "compare", fuzzy_match=True)
        calls += sum(summary.counts["calls"] for summary in run.pairs)
        rows += sum(summary.counts["rows"] for summary in run.pairs)
        if run.first is not None:
            where = f"step {step}, rank {run.first.pair.rank}" if len(run.pairs) > 1 else f"step {step}"
            return 1, _not_reproducible(where, run.first, work)
    if set(steps_first) != set(steps_second):
        return 1, [f"not reproducible: run 1 captured steps {sorted(steps_first)}, run 2 captured {sorted(steps_second)}: "
                   "the runs made different numbers of optimizer steps", f"  dumps kept in {work}"]
    return 0, [f"reproducible: {len(common)} step(s), {calls} calls, {rows} tensors and arguments bit-identical in both runs"]


def _not_reproducible(label: str, summary, work: Path) -> list[str]:
    found = summary.divergence
    call = found.call
    where = f" at {call.source.file}:{call.source.line}" if call.source else ""
    what = "first diverging call" if found.kind == "divergence" else "first difference"
    lines = [f"not reproducible: {what} {call.name} ({label}){where}"]
    if found.kind == "divergence":
        lines.append("  its inputs are identical in both runs and its outputs are not: the randomness enters here")
    elif call.argument_differs:
        lines.append("  a non-tensor argument differs between the runs here (e.g. an index or a value drawn at random)")
    elif call.status == "only in target":
        lines.append("  only the first run made this call (control flow differs between the runs)")
    else:
        lines.append("  its inputs already differ: the difference enters before it, outside the captured calls")
    if call.source:
        lines.append(f"  code: {call.source.code}")
        lines.extend(_lint_lines(call.source))
    if found.previous:
        lines.append("  calls before it: " + ", ".join(f"{previous.name} [{previous.status}]" for previous in found.previous))
    lines.append(f"  report: {summary.output}; dumps: {work}")
    return lines


def _lint_lines(source) -> list[str]:
    path = Path(source.file)
    if not path.is_file():
        return []
    all_findings, problem = lint.findings(path)
    if problem:
        return [f"  ({problem})"]
    close = lint.near(all_findings, source.line)
    if close:
        return [f"  msprobe-lint at or near line {source.line}:"] + [f"    {finding}" for finding in close]
    lines = [f"  msprobe-lint: nothing within {lint.NEAR_LINES} lines of line {source.line}"]
    if all_findings:
        lines.append(f"  elsewhere in {path.name}:")
        lines.extend(f"    {finding}" for finding in all_findings[:5])
    return lines


@click.command(context_settings={"help_option_names": ["-h", "--help"], "ignore_unknown_options": True})
@click.option("--steps", type=click.IntRange(min=1), default=1, show_default=True, help="Optimizer steps to capture.")
@click.option("--config", "config", type=click.Path(path_type=Path), default=None,
              help="msprobe config.json whose task section (scope, list, data_mode) to use.")
@click.option("--keep", type=click.Path(path_type=Path), default=None,
              help="Folder for the runs' dumps and reports (kept); by default a temporary folder, removed when reproducible.")
@click.option("--parallel", is_flag=True, help="Run both runs at the same time (twice the memory).")
@click.argument("command", nargs=-1, type=click.UNPROCESSED)
def main(steps: int, config: Path | None, keep: Path | None, parallel: bool, command: tuple[str, ...]) -> None:
    """Run COMMAND twice and say whether it is reproducible (exit 0), or where it diverges (exit 1)."""
    if not command:
        _fail("give the command to run after --, e.g. msprobe-verify -- python train.py")
    if config is not None and not config.is_file():
        _fail(f"config file '{config}' does not exist")
    work = keep if keep is not None else Path(tempfile.mkdtemp(prefix="msprobe-verify-"))
    try:
        code, lines = verify(list(command), work.resolve(), steps, config.resolve() if config else None, parallel)
    except (VerifyError, CompareError, OSError) as error:
        _fail(str(error))
    for line in lines:
        click.echo(line)
    if code == 0 and keep is None:
        shutil.rmtree(work, ignore_errors=True)
    sys.exit(code)


def _fail(message: str) -> None:
    click.echo(f"msprobe-verify: error: {message}", err=True)
    sys.exit(2)


if __name__ == "__main__":  # pragma: no cover
    main()

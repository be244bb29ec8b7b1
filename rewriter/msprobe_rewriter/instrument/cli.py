"""The `msprobe-instrument` command: make training scripts reproducible, wire in the debugger, undo it.

Default: print a unified diff and change nothing. `--write` rewrites files atomically, `--check` only
tells (exit 1 when something would change; with `--undo`, when a file carries instrumentation, which is
what the pre-commit hook `msprobe-instrument-check` runs). Exit status: 0 nothing to change (or written),
1 changes pending (diff/check), 2 usage errors or files that cannot be parsed/undone, one line each.
"""

from __future__ import annotations

import difflib
import os
import sys
from dataclasses import replace
from pathlib import Path

import click
from click.core import ParameterSource

import msprobe_rewriter
from msprobe_rewriter import project
from msprobe_rewriter.instrument import config_file
from msprobe_rewriter.instrument.driver import Result, run
from msprobe_rewriter.instrument.options import Options
from msprobe_rewriter.instrument.textio import write_atomically
from msprobe_rewriter.instrument.transforms import SelectionError, select
from msprobe_rewriter.lint.discovery import Discovery, relative_to

EXIT_CLEAN, EXIT_CHANGES, EXIT_FAILURE = 0, 1, 2
STDIN = "-"
def _split(values: tuple[str, ...]) -> list[str]:
    return [part.strip() for value in values for part in value.split(",") if part.strip()]


@click.command(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("--write", is_flag=True, help="Rewrite the files in place (atomically).")
@click.option("--check", is_flag=True, help="Change nothing; exit 1 if anything would change.")
@click.option("--undo", is_flag=True, help="Restore the original files from the instrumented ones.")
@click.option("--seed", type=click.IntRange(0, 2**32 - 1), default=1234, show_default=True,
              help="Seed for seed_all when the script has none of its own (an instrumented file keeps its own).")
@click.option("--deterministic/--no-deterministic", default=False, show_default=True,
              help="seed_all(mode=...): also turn on deterministic kernels and communication (an instrumented "
                   "file keeps its own unless this is given).")
@click.option("--remove-dropout/--keep-dropout", default=True, show_default=True,
              help="seed_all(rm_dropout=...): switch dropout off at run time (an instrumented file keeps its own "
                   "unless this is given).")
@click.option("--config", "config", type=click.Path(dir_okay=False), metavar="PATH",
              help="Debugger config file (default: config.json beside each script).")
@click.option("--emit-config", is_flag=True, help="With --write: write a default config where none exists.")
@click.option("--grad-probe/--no-grad-probe", default=False,
              help="Also add debugger.monitor(...) (the gradient probe; an instrumented file keeps its own unless "
                   "this is given).")
@click.option("--target", type=click.Choice(["runtime", "msprobe"]), default="runtime", show_default=True,
              help="Import from msprobe_runtime, or from MindStudio Probe (msprobe) (an instrumented file keeps "
                   "its own unless this is given).")
@click.option("--select", "chosen", multiple=True, metavar="NAMES",
              help="Transforms to run, by name or by the lint rule they fix (comma-separated, repeatable).")
@click.option("--ignore", "ignored", multiple=True, metavar="NAMES", help="Transforms to skip (same forms).")
@click.option("--data", type=click.Choice(["default", "strict"]), default="default", show_default=True,
              help="strict: PyTorch loaders run without worker processes (num_workers=0) (an instrumented file "
                   "keeps its own unless this is given).")
@click.option("--include-tests", is_flag=True,
              help="Also instrument test files found in folders (test_*.py, *_test.py, conftest.py, tests/).")
@click.option("-q", "--quiet", is_flag=True, help="Print no notes and no summary.")
@click.version_option(msprobe_rewriter.__version__, "--version", prog_name="msprobe-instrument")
def main(paths, write, check, undo, seed, deterministic, remove_dropout, config, emit_config, grad_probe, target,
         chosen, ignored, data, include_tests, quiet) -> None:
    """Make PyTorch/MindSpore training scripts reproducible and add the precision debugger (reversibly)."""
    if write and check:
        _fail("--write and --check exclude each other")
    try:
        selected = select(_split(chosen), _split(ignored), grad_probe)
    except SelectionError as exc:
        _fail(str(exc))
    context = click.get_current_context()
    unset = frozenset({"data": "data_strict"}.get(name, name)
                      for name in ("seed", "deterministic", "remove_dropout", "target", "data", "grad_probe")
                      if context.get_parameter_source(name) is ParameterSource.DEFAULT)
    if chosen or ignored:  # transforms named: whether the probe runs is theirs to say
        unset -= {"grad_probe"}
    options = Options(seed=seed, deterministic=deterministic, remove_dropout=remove_dropout, config=config,
                      grad_probe=grad_probe or "grad-probe" in selected, target=target, data_strict=data == "strict",
                      selected=selected, unset=unset)
    project.limit_search(paths)
    if STDIN in paths:
        if len(paths) > 1:
            _fail("`-` (standard input) cannot be combined with other paths")
        sys.exit(_stdin(options, undo, check))
    targets, missing = Discovery(Path.cwd()).collect(paths)
    skipped = 0
    if not (undo or include_tests):  # test files met in the folders named (not those named themselves) are left
        folders = [os.path.abspath(path) for path in paths if os.path.isdir(path)]
        kept = [target for target in targets if not any(
            relative is not None and is_test_file(relative) for relative in (relative_to(f, target.path) for f in folders))]
        skipped, targets = len(targets) - len(kept), kept
    options = replace(options, given=frozenset(os.path.abspath(target.path) for target in targets))
    failures = [f"{m.path}: {m.message}" for m in missing]
    changed = 0
    restored: dict[str, str] = {}  # undo: script -> its text once restored, where it had the debugger
    pending = []  # written once every file is analysed, so that each is analysed beside the others as they were
    for target_file in targets:
        try:
            data_bytes = Path(target_file.path).read_bytes()
        except OSError as exc:
            failures.append(f"{target_file.display}: cannot read: {exc.strerror or exc}")
            continue
        result = run(target_file.display, data_bytes, options, undoing=undo)
        if result.error is not None:
            failures.append(f"{target_file.display}: {result.error}")
            continue
        if not quiet:
            for note in result.notes:
                click.echo(f"note: {note}", err=True)
        if result.changed:
            changed += 1
            if undo and config_file.uses_debugger(result.before):
                restored[target_file.path] = result.after
            if write:
                pending.append((target_file, result))
            elif not check:
                click.echo(_diff(target_file.display, result), nl=False)
        if not undo and "PrecisionDebugger(" in (result.after or ""):
            if write and emit_config:
                failures.extend(_emit_config(options, target_file.path, quiet))
            elif not quiet and not os.path.exists(options.config_for(target_file.path)[1]):
                click.echo(f"note: {target_file.display}: no debugger config at {options.config_for(target_file.path)[1]}"
                           " (pass --emit-config with --write, or --config PATH)", err=True)
    for target_file, result in pending:
        not_written = _write(target_file.path, target_file.display, result)
        if not_written:
            failures.extend(not_written)
            restored.pop(target_file.path, None)  # still uses its config
    if undo and restored and not check:
        failures.extend(_remove_configs(options, restored, write, quiet))
    for failure in failures:
        click.echo(failure, err=True)
    if not quiet:
        _summary(len(targets), changed, len(failures), write, undo, skipped)
    if failures:
        sys.exit(EXIT_FAILURE)
    sys.exit(EXIT_CHANGES if changed and not write else EXIT_CLEAN)


def _stdin(options: Options, undo: bool, check: bool) -> int:
    """`-`: read source from standard input, write the result to standard output."""
    result = run("<stdin>", sys.stdin.buffer.read(), options, undoing=undo)
    if result.error is not None:
        click.echo(f"<stdin>: {result.error}", err=True)
        return EXIT_FAILURE
    if not check:
        sys.stdout.buffer.write(result.source.encode(result.after))
    return EXIT_CHANGES if check and result.changed else EXIT_CLEAN


def _write(path: str, display: str, result: Result) -> list[str]:
    try:
        write_atomically(path, result.source.encode(result.after))
    except OSError as exc:
        return [f"{display}: cannot write: {exc.strerror or exc}"]
    return []


def _emit_config(options: Options, script: str, quiet: bool) -> list[str]:
    path, error = config_file.emit(options, script)
    if path is not None and not quiet:
        click.echo(f"wrote {path}", err=True)
    return [error] if error is not None else []


def _remove_configs(options: Options, restored: dict[str, str], write: bool, quiet: bool) -> list[str]:
    """After an undo: remove (with --write; else only tell) the configs `--emit-config` wrote that nothing
    uses any more."""
    failures = []
    for path in config_file.emitted_unused(options, restored):
        if write:
            try:
                os.remove(path)
            except OSError as exc:
                failures.append(f"{path}: cannot remove the config: {exc.strerror or exc}")
                continue
        if not quiet:
            click.echo(f"{'removed' if write else 'would remove'} {path} (written by --emit-config, unchanged)",
                       err=True)
    return failures


def _diff(display: str, result: Result) -> str:
    """The change as a unified diff, headed as git heads one (an absolute path loses its leading `/`)."""
    shown = display.lstrip("/")
    lines = difflib.unified_diff(result.before.splitlines(keepends=True), result.after.splitlines(keepends=True),
                                 fromfile=f"a/{shown}", tofile=f"b/{shown}")
    text = "".join(line if line.endswith(("\n", "\r")) else line + "\n\\ No newline at end of file\n"
                   for line in lines)
    return text


def _summary(total: int, changed: int, failed: int, write: bool, undo: bool, skipped: int) -> None:
    if total == 0 and failed == 0 and skipped == 0:
        return
    verb = ("restored" if write else "would be restored") if undo else ("instrumented" if write else
                                                                          "would be instrumented")
    parts = [f"{changed} file{'s' if changed != 1 else ''} {verb}", f"{total - changed - failed} unchanged"]
    if failed:
        parts.append(f"{failed} failed")
    if skipped:
        parts.append(f"{skipped} test file{'s' if skipped != 1 else ''} skipped (name them, or pass --include-tests)")
    click.echo(", ".join(parts) + ".", err=True)


def is_test_file(path: str) -> bool:
    """A test suite's file by its name or folder: `test_*.py`, `*_test.py`, `conftest.py`, or under a `test`,
    `tests` or `*_tests` folder."""
    *folders, name = Path(path).parts
    stem = name[:-3] if name.endswith(".py") else name
    return (stem.startswith("test_") or stem.endswith("_test") or stem == "conftest"
            or any(folder in ("test", "tests") or folder.endswith("_tests") for folder in folders))


def _fail(message: str) -> None:
    click.echo(f"msprobe-instrument: error: {message}", err=True)
    sys.exit(EXIT_FAILURE)


if __name__ == "__main__":
    main()

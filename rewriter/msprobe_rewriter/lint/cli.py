"""The `msprobe-lint` command: options, configuration, the run, the output and the exit status.

Exit status: 0 no findings; 1 findings, or files that could not be linted (unparsable, unreadable,
missing); 2 usage or configuration error, or a failure of the tool itself. Never a traceback
(set MSPROBE_LINT_DEBUG=1 to get one for an internal error).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import click

import msprobe_rewriter
from msprobe_rewriter import docs, project
from msprobe_rewriter.lint import runner
from msprobe_rewriter.lint.cache import LintCache, default_directory
from msprobe_rewriter.lint.config import Config, ConfigError, PerFileIgnores, load_config
from msprobe_rewriter.lint.discovery import Discovery
from msprobe_rewriter.lint.engine import decode_source
from msprobe_rewriter.lint.formats import FORMATS, RenderOptions, render
from msprobe_rewriter.lint.formats import statistics as stats
from msprobe_rewriter.lint.selection import SelectorError, find_rule, layered, split_selectors
from msprobe_rewriter.lint.suppressions import UNUSED_NOQA_CODE
from msprobe_rewriter.rules import ALL_RULES

EXIT_CLEAN, EXIT_FINDINGS, EXIT_FAILURE = 0, 1, 2
STDIN = "-"


class Failure(Exception):
    """A usage, configuration or output problem, reported as one line with exit status 2."""


@click.command(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("--select", multiple=True, metavar="RULES",
              help="Rules to run: codes (MSP201), code prefixes (MSP2), names (device-rng) or ALL; "
                   "comma-separated, repeatable. Replaces the configured selection.")
@click.option("--ignore", multiple=True, metavar="RULES", help="Rules to skip (same forms as --select).")
@click.option("--format", "output_format", type=click.Choice(FORMATS), default="text", show_default=True,
              help="Output format.")
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="Write the output to FILE.")
@click.option("--exit-zero", is_flag=True, help="Exit 0 even when there are findings.")
@click.option("--statistics", is_flag=True, help="Count findings per rule (text: instead of the list).")
@click.option("--config", "config_file", type=click.Path(dir_okay=False),
              help="Read settings from FILE instead of the nearest pyproject.toml.")
@click.option("-j", "--jobs", type=click.IntRange(min=0), default=0,
              help="Worker processes (default 0: automatic, by file count and CPUs).")
@click.option("--no-cache", is_flag=True, help="Neither read nor write the result cache.")
@click.option("--list-rules", is_flag=True, help="List every rule and exit.")
@click.option("--explain", metavar="RULE", help="Explain a rule (code or name) and exit.")
@click.option("--report-unused-noqa", is_flag=True,
              help=f"Report `# noqa` codes that suppress nothing ({UNUSED_NOQA_CODE} unused-noqa).")
@click.option("--force-exclude", is_flag=True, help="Apply excludes even to paths named on the command line.")
@click.option("--stdin-filename", metavar="NAME", help="The file name to report for source read from `-`.")
@click.version_option(msprobe_rewriter.__version__, "--version", prog_name="msprobe-lint",
                      message="%(prog)s %(version)s")
def command(paths: tuple[str, ...], select: tuple[str, ...], ignore: tuple[str, ...], output_format: str,
            output: str | None, exit_zero: bool, statistics: bool, config_file: str | None, jobs: int,
            no_cache: bool, list_rules: bool, explain: str | None, report_unused_noqa: bool,
            force_exclude: bool, stdin_filename: str | None) -> int:
    """Find reproducibility hazards in PyTorch and MindSpore code.

    PATH: files or folders (walked recursively, honouring .gitignore); `-` reads standard input.
    """
    if explain:
        rule = find_rule(explain)
        if rule is None:
            raise Failure(f"unknown rule {explain!r} (run `msprobe-lint --list-rules`)")
        emit(docs.render_rule(rule), output)
        return EXIT_CLEAN
    if list_rules:
        emit(rule_listing(output_format), output)
        return EXIT_CLEAN
    try:
        config = load_config(config_file, Path.cwd())
        codes = layered([(config.select, config.ignore),
                         (split_selectors(select) or None, split_selectors(ignore))])
    except (ConfigError, SelectorError) as exc:
        raise Failure(str(exc)) from None
    if report_unused_noqa:
        codes |= {UNUSED_NOQA_CODE}
    if stdin_filename and not paths:
        paths = (STDIN,)
    if not paths:  # e.g. pre-commit with no matching files: nothing to do, quietly
        if output_format in ("json", "sarif"):
            emit(render(output_format, runner.RunReport(), RenderOptions()), output)
        return EXIT_CLEAN
    report, stdin_lines = lint_paths(paths, config, codes, force_exclude, stdin_filename,
                                     jobs or None, None if no_cache else default_directory(config.root))
    color = output is None and use_color(sys.stdout)
    lines_of = source_reader(stdin_filename or STDIN, stdin_lines)
    emit(render(output_format, report, RenderOptions(lines_of, color, statistics)), output)
    if statistics and output_format != "text":
        click.echo(stats.table(report.findings), err=True, nl=False)
    if report.internal_errors:
        return EXIT_FAILURE
    if exit_zero or not (report.findings or report.errors):
        return EXIT_CLEAN
    return EXIT_FINDINGS


def lint_paths(paths: tuple[str, ...], config: Config, codes: frozenset[str], force_exclude: bool,
               stdin_filename: str | None, jobs: int | None,
               cache_dir: Path | None) -> tuple[runner.RunReport, list[str]]:
    """Discover, lint (through the cache) and merge; also returns the stdin source lines, if any."""
    project.limit_search([stdin_filename if path == STDIN and stdin_filename else path for path in paths])
    discovery = Discovery(config.root, config.exclude)
    per_file = PerFileIgnores(config)
    targets, errors = discovery.collect([p for p in paths if p != STDIN], force_exclude)
    tasks = [runner.Task(t, tuple(sorted(codes - per_file.codes_for(t.path)))) for t in targets]
    results = runner.run(tasks, LintCache(cache_dir), jobs)
    stdin_lines: list[str] = []
    if STDIN in paths:
        display = stdin_filename or STDIN
        absolute = os.path.abspath(display)
        if not (force_exclude and stdin_filename and discovery.is_excluded(absolute)):
            data = sys.stdin.buffer.read()
            results.append(runner.lint_bytes(display, data, tuple(sorted(codes - per_file.codes_for(absolute)))))
            stdin_lines = decoded_lines(data)
    return runner.collect(results, len(results), errors), stdin_lines


def decoded_lines(data: bytes) -> list[str]:
    """Source lines of `data` as the engine decodes it; none when it cannot be decoded."""
    try:
        return decode_source(data).splitlines()
    except (SyntaxError, UnicodeDecodeError, LookupError):
        return []


def source_reader(stdin_display: str, stdin_lines: list[str]):
    """A function giving a reported path's source lines (standard input's from memory)."""

    def lines_of(path: str) -> list[str]:
        if path == stdin_display:
            return stdin_lines
        try:
            with open(path, "rb") as handle:
                return decoded_lines(handle.read())
        except OSError:
            return []

    return lines_of


def use_color(stream) -> bool:
    """Colour only on a terminal, and never with NO_COLOR set (https://no-color.org) or TERM=dumb."""
    if os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def rule_listing(output_format: str) -> str:
    """Every rule: a table for people, a JSON list with --format json."""
    if output_format == "json":
        rows = [{"code": r.code, "name": r.name, "severity": r.severity, "frameworks": list(r.frameworks),
                 "fixable": r.fixable, "default_enabled": r.default_enabled, "message": r.message,
                 "summary": r.summary} for r in ALL_RULES]
        return json.dumps(rows, indent=2, ensure_ascii=False) + "\n"
    width = max(len(r.name) for r in ALL_RULES)
    frameworks = max(len("/".join(r.frameworks)) for r in ALL_RULES)
    lines = []
    for r in ALL_RULES:
        notes = ", ".join(n for n, on in (("fixable", r.fixable), ("off by default", not r.default_enabled)) if on)
        row = f"{r.code}  {r.name:<{width}}  {r.severity:<7}  {'/'.join(r.frameworks):<{frameworks}}  {notes}"
        lines.append(row.rstrip() + "\n")
    return "".join(lines)


def emit(text: str, output: str | None) -> None:
    """Write the run's output to `output`, or to standard output."""
    if output is None:
        click.echo(text, nl=False)
        return
    try:
        Path(output).write_text(text, encoding="utf-8")
    except OSError as exc:
        raise Failure(f"cannot write {output}: {(exc.strerror or str(exc)).lower()}") from None


def main(argv: list[str] | None = None) -> int:
    """Console-script entry point: run the command, map every outcome to exit status 0, 1 or 2."""
    try:
        status = command.main(args=argv, prog_name="msprobe-lint", standalone_mode=False)
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except click.ClickException as exc:  # usage errors: click prints the usage line and the problem
        exc.show()
        return EXIT_FAILURE
    except Failure as exc:
        click.echo(f"msprobe-lint: error: {exc}", err=True)
        return EXIT_FAILURE
    except (KeyboardInterrupt, click.exceptions.Abort):
        click.echo("msprobe-lint: interrupted", err=True)
        return EXIT_FAILURE
    except BrokenPipeError:
        sys.stderr.close()  # the reader went away (`| head`): nothing left to say
        return EXIT_FAILURE
    except Exception as exc:  # noqa: BLE001 - a bug must not print a traceback at users
        if os.environ.get("MSPROBE_LINT_DEBUG"):
            raise
        click.echo(f"msprobe-lint: internal error: {type(exc).__name__}: {exc} "
                   "(set MSPROBE_LINT_DEBUG=1 for a traceback, and please report it)", err=True)
        return EXIT_FAILURE
    return status if isinstance(status, int) else EXIT_CLEAN

"""`msprobe-compare`: compare two dumps (or, with --grad, two gradient-probe dumps) from the command line.

The first line printed is the answer: the first diverging call with its source line, or "no divergence".
Exit codes: 0 no divergence, 1 divergence, 2 usage error or dumps that cannot be compared.
"""

from __future__ import annotations

import os
import sys

import click

from msprobe_runtime.core.compare import CompareError, CompareRun, compare
from msprobe_runtime.core.compare.divergence import Call, Divergence
from msprobe_runtime.core.compare.progress import Progress

_BAR_MINIMUM = 32 * 2**20  # characters to read (or tensors to compare) before a progress bar is worth it


class _Bar(Progress):
    """A click progress bar on stderr for stages large enough to be worth one."""

    def __init__(self):
        self.bar = None

    def start(self, label: str, total: int) -> None:
        if total >= (_BAR_MINIMUM if label.startswith("reading") else 512) and sys.stderr.isatty():
            self.bar = click.progressbar(length=total, label=label, file=sys.stderr)
            self.bar.__enter__()

    def advance(self, count: int) -> None:
        if self.bar is not None:
            self.bar.update(count)

    def finish(self) -> None:
        if self.bar is not None:
            self.bar.__exit__(None, None, None)
            self.bar = None


def _call_line(call: Call) -> str:
    where = f" at {call.source}" if call.source else ""
    return f"{call.name} [{call.status}]{where}"


def divergence_lines(label: str, found: Divergence) -> list[str]:
    """The report of one divergence: headline, rows, calls before it."""
    call = found.call
    if found.kind == "divergence":
        head = f"first divergence ({label}): {call.name}"
        why = "inputs agree, outputs differ: this call made the difference"
    else:
        head = f"first difference ({label}): {call.name}"
        why = {"only in target": "this call has no partner in GOLDEN",
               "inputs differ": "its inputs already differ: the difference comes from outside the captured calls",
               }.get(call.status, "no call has agreeing inputs and differing outputs")
        if call.argument_differs:
            why = "a non-tensor argument differs: the code (or a setting) differs between the runs here"
        elif found.golden_only_before and call.status == "identical":
            why = "GOLDEN made calls just before this one that TARGET did not make"
    lines = [head + (f" at {call.source.file}:{call.source.line}" if call.source else ""),
             f"  {why}"]
    if call.source:
        lines.append(f"  source: {call.source.function}: {call.source.code}")
    if call.rows:
        lines.append(f"  differing rows: {', '.join(call.rows)}")
    if found.golden_only_before:
        lines.append(f"  GOLDEN made calls here that TARGET did not: {', '.join(found.golden_only_before)}")
    if found.previous:
        lines.append("  calls before it:")
        lines.extend(f"    {_call_line(previous)}" for previous in found.previous)
    return lines


def summary_lines(run: CompareRun) -> list[str]:
    """The terminal report: the first divergence first, then one line per compared pair."""
    first = run.first
    if first is None:
        rows = sum(summary.counts["rows"] for summary in run.pairs)
        differ = sum(summary.counts["differ"] for summary in run.pairs)
        lines = [f"no divergence: all {rows} rows of {len(run.pairs)} dump pair(s) agree" if not differ else
                 f"no divergence: {differ} of {rows} rows differ, each the old content of a tensor an in-place call "
                 "overwrote (memory never initialised, say); every result agrees"]
    else:
        lines = divergence_lines(first.pair.label, first.divergence)
    for summary in run.pairs:
        counts = summary.counts
        state = "identical" if summary.divergence is None else summary.divergence.kind
        lines.append(f"{summary.pair.label}: {summary.mode}, {counts['calls']} calls, {counts['rows']} rows "
                     f"({counts['differ']} differ, {counts['unmatched']} unpaired); pass {counts['pass']}, "
                     f"warning {counts['warning']}, error {counts['error']}; {state}; {summary.seconds:.2f} s "
                     f"-> {summary.output}")
        if counts["without_data"]:
            lines.append(f"  {counts['without_data']} tensor rows had no readable data file and were compared by "
                         "their statistics (see Err_message)")
        if summary.left_out_rows:
            lines.append(f"  {summary.left_out_rows} rows did not fit in the XLSX sheet: use --format csv for all")
    return lines


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("target", type=click.Path(path_type=str))
@click.argument("golden", type=click.Path(path_type=str))
@click.option("-o", "--output", "output", default="./output", show_default=True, help="Folder for the reports.")
@click.option("--format", "fmt", type=click.Choice(["csv", "xlsx", "html"]), default="csv", show_default=True)
@click.option("--fuzzy-match", is_flag=True, help="Pair calls by API name and call order (tolerates inserted calls).")
@click.option("--rank", type=click.IntRange(min=0), default=None, help="Compare only this rank.")
@click.option("--rtol", type=click.FloatRange(min=0), default=0.0, show_default=True,
              help="Relative tolerance under which statistics count as agreeing (0: exact).")
@click.option("--grad", is_flag=True, help="TARGET and GOLDEN are gradient-probe dumps (grad_probe task).")
def main(target, golden, output, fmt, fuzzy_match, rank, rtol, grad) -> None:
    """Compare TARGET with GOLDEN: dump.json files, step folders or whole dump folders."""
    try:
        code = _grad(target, golden, output) if grad else _dumps(target, golden, output, fmt, fuzzy_match, rank, rtol)
    except CompareError as error:
        raise _fail(str(error)) from None
    except (OSError, MemoryError, ValueError) as error:
        if os.environ.get("MSPROBE_KIT_DEBUG"):
            raise
        raise _fail(f"{type(error).__name__}: {error}") from None
    sys.exit(code)


def _fail(message: str) -> click.exceptions.Exit:
    click.echo(f"msprobe-compare: error: {message}", err=True)
    return click.exceptions.Exit(2)


def _dumps(target, golden, output, fmt, fuzzy_match, rank, rtol) -> int:
    run = compare(target, golden, output, fmt=fmt, fuzzy_match=fuzzy_match, rank=rank, rtol=rtol, progress=_Bar())
    for line in summary_lines(run):
        click.echo(line)
    return run.exit_code


def _grad(target, golden, output) -> int:
    from msprobe_runtime.core.grad_compare import GradComparator, GradCompareError

    try:
        results = GradComparator.compare_distributed(target, golden, output)
    except GradCompareError as error:
        raise CompareError(str(error)) from None
    suspicious = [result for result in results if result.verdict.step is not None]
    for result in sorted(suspicious, key=lambda r: (r.verdict.step, r.rank)) or results[:1]:
        click.echo(str(result.verdict))
    for result in results:
        summary = result.similarities["summary"]
        click.echo(f"rank{result.rank}: {len(result.steps)} steps, summary similarity "
                   f"{min(summary):.4f}..{max(summary):.4f} -> {result.output}")
    return 1 if suspicious else 0


if __name__ == "__main__":  # pragma: no cover
    main()

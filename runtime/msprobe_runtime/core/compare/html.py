"""The self-contained HTML report: divergence summary, relative error along execution order (a PNG
embedded as base64), the calls around the divergence and the rows judged warning or error."""

from __future__ import annotations

import base64
import html
import io
from pathlib import Path

import numpy as np

from msprobe_runtime.core.compare.engine import PairResult
from msprobe_runtime.core.compare.report import report_columns
from msprobe_runtime.core.files import atomic_write_text

MAX_LISTED_ROWS = 500
_PLOT_POINTS = 4000
_STYLE = """
body{font-family:system-ui,sans-serif;margin:2em;color:#222}h1{font-size:1.4em}h2{font-size:1.15em;margin-top:1.6em}
table{border-collapse:collapse;font-size:.85em}td,th{border:1px solid #ccc;padding:.25em .5em;text-align:left;vertical-align:top}
th{background:#f0f0f0}.error{background:#fdd}.warning{background:#ffc}.box{border-left:4px solid #c33;padding:.5em 1em;background:#fafafa}
.ok{border-left-color:#3a3}code{font-size:.95em}
"""


def plot_png(result: PairResult) -> bytes:
    """Relative error per row along execution order (log scale), the divergence marked; PNG bytes."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    curve = np.asarray(result.error_curve, dtype=float)
    positions = np.arange(len(curve))
    if len(curve) > _PLOT_POINTS:  # keep each bin's maximum, so no spike disappears
        edges = np.linspace(0, len(curve), _PLOT_POINTS + 1).astype(int)
        positions = edges[:-1]
        curve = np.maximum.reduceat(curve, positions)
    floor = 1e-12
    figure = Figure(figsize=(9, 3.2), dpi=100)
    FigureCanvasAgg(figure)
    axes = figure.add_subplot()
    axes.plot(positions, np.clip(np.where(np.isinf(curve), 1e12, curve), floor, None), linewidth=0.8)
    axes.set_yscale("log")
    axes.set_xlabel("row in execution order")
    axes.set_ylabel("MaxRelativeErr" if result.mode == "tensor" else "NormRelativeErr")
    found = result.divergence
    if found is not None:
        rows = np.flatnonzero(result.target.row_record == found.call.index)
        if len(rows):
            axes.axvline(int(rows[0]), color="#c33", linestyle="--", linewidth=1)
            axes.annotate(found.call.name, (int(rows[0]), floor * 10), color="#c33", fontsize=8)
    figure.tight_layout()
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png")
    return buffer.getvalue()


def _table(header: list[str], rows: list[list], classes: list[str] | None = None) -> str:
    head = "".join(f"<th>{html.escape(str(cell))}</th>" for cell in header)
    body = []
    for index, row in enumerate(rows):
        css = f' class="{classes[index]}"' if classes and classes[index] else ""
        body.append(f"<tr{css}>" + "".join(f"<td>{html.escape(str(cell))}</td>" for cell in row) + "</tr>")
    return f"<table><tr>{head}</tr>{''.join(body)}</table>"


def _divergence(result: PairResult) -> str:
    found = result.divergence
    if found is None:
        return '<div class="box ok"><b>No divergence:</b> every paired row is identical.</div>'
    title = "First divergence" if found.kind == "divergence" else "First difference"
    explain = ("its inputs agree, its outputs do not: this call made the difference"
               if found.kind == "divergence" else
               "no call has agreeing inputs and differing outputs; this is the first call that differs at all")
    call = found.call
    lines = [f"<b>{title}:</b> <code>{html.escape(call.name)}</code> ({html.escape(call.status)})",
             f"<br>{html.escape(explain)}"]
    if call.source is not None:
        lines.append(f"<br>source: <code>{html.escape(str(call.source))}</code>")
    if call.rows:
        lines.append("<br>rows that differ: " + ", ".join(f"<code>{html.escape(name)}</code>" for name in call.rows))
    previous = _table(["call", "status", "source"],
                      [[c.name, c.status, str(c.source or "")] for c in [*found.previous, call]])
    return f'<div class="box">{"".join(lines)}</div><h2>Calls before it</h2>{previous}'


def write_html(result: PairResult, path: Path) -> None:
    """Write the report as one HTML file with no external resources."""
    png = base64.b64encode(plot_png(result)).decode("ascii")
    counts = result.counts
    summary = _table(["target", "golden", "mode", "rows", "calls", "unpaired rows", "pass", "warning", "error", "seconds"],
                     [[result.pair.target, result.pair.golden, result.mode, counts["rows"], counts["calls"],
                       counts["unmatched"], counts["pass"], counts["warning"], counts["error"], f"{result.seconds:.2f}"]])
    flagged = np.flatnonzero(np.asarray(result.levels) > 0)[:MAX_LISTED_ROWS]
    columns = report_columns(result, flagged)
    shown = ["NPU Name", "Bench Name", "NPU Tensor Shape", *[name for name in ("MaxRelativeErr", "NormRelativeErr",
             "Cosine", "MaxAbsErr", "NPU MD5", "BENCH MD5", "NPU hash", "Bench hash") if name in columns],
             "Result", "Err_message"]
    listed = _table(shown, [[columns[name][row] for name in shown] for row in range(len(flagged))],
                    list(columns["Result"]))
    more = int((np.asarray(result.levels) > 0).sum()) - len(flagged)
    note = f"<p>{more} more rows are in the CSV/XLSX report.</p>" if more > 0 else ""
    page = (f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>msprobe-compare {html.escape(result.pair.label)}"
            f"</title><style>{_STYLE}</style></head><body><h1>msprobe-compare: {html.escape(result.pair.label)}</h1>"
            f"{summary}<h2>Divergence</h2>{_divergence(result)}<h2>Relative error along execution order</h2>"
            f"<img alt='relative error along execution order' src='data:image/png;base64,{png}'>"
            f"<h2>Rows judged warning or error ({len(flagged)} shown)</h2>{listed}{note}</body></html>")
    atomic_write_text(path, page)

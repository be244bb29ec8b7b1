"""`--undo`: restore the original text from the instrumented file alone.

First the tool's `try/finally` wrappers are taken apart with libcst (so re-indented code, multi-line
strings included, returns exactly), then every marked hunk is replaced by the text its marker recorded,
bottom-up. Lines without a marker are never touched, so the user's own edits survive; a marked line the
user edited makes the whole file refuse, naming the line.
"""

from __future__ import annotations

from msprobe_rewriter.instrument import markers, wrap
from msprobe_rewriter.instrument.textio import split_lines


def undo_text(text: str) -> str:
    """The original of an instrumented text; raises MarkerError (edited or damaged markers)."""
    found = markers.find(text)
    if not found:
        return text
    lines = split_lines(text)
    if any(wrap.is_wrapper_line(m, lines) for m in found):
        text = wrap.unwrap(text)
        found = markers.find(text)
        lines = split_lines(text)
    floor = len(lines)
    for marker in reversed(found):
        first = marker.line - marker.count
        if marker.line > floor:
            raise markers.MarkerError(marker.line, "this marker's lines overlap another marker's")
        markers.check(marker, lines)
        lines[first: marker.line] = [marker.restored(lines[marker.line - 1])]
        floor = first
    return "".join(lines)

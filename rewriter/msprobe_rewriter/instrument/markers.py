"""The marker comment every machine-written line carries, and how to read it back.

A marker ends the last line of a *hunk*: `n` consecutive lines (default 1) that replaced some original
text. It records that text and a short hash, so `--undo` needs nothing but the file itself:

    x = torch.randn(3).to(d)  # msprobe-instrument 1f2e3d was: 'x = torch.randn(3, device=d)'
    seed_all(seed=1234, mode=False, rm_dropout=True)  # msprobe-instrument 9ab0c1
    s = f(\"\"\"a           <- a line that cannot take a comment joins the hunk below it
    b\"\"\", 2)  # msprobe-instrument 77aa01 +2 was: 's = f(\"\"\"a\\nb\"\"\", 1)'

`was: R` restores `R` plus the marked line's own line ending, `raw: R` restores exactly `R`, and no
payload means the hunk was added (it is removed). The hash covers the hunk's code (trailing blanks of
the marked line ignored) and the payload, so an edit of a marked line is noticed.
"""

from __future__ import annotations

import ast
import hashlib
import io
import re
import tokenize
from dataclasses import dataclass

from msprobe_rewriter.instrument.textio import body, ending, split_lines

TAG = "msprobe-instrument"
_MARKER = re.compile(r"# msprobe-instrument ([0-9a-f]{6})(?: \+(\d+))?(?: (was|raw): (.*))?$")


@dataclass(frozen=True)
class Marker:
    """One marker read from line `line` (1-based): the hunk it closes and what it replaced."""

    line: int
    column: int  # where the marker comment starts on that line
    digest: str
    count: int
    kind: str  # "", "was" or "raw"
    payload: str

    def restored(self, marked_line: str) -> str:
        """The original text of the hunk whose last line is `marked_line`."""
        if self.kind == "was":
            return self.payload + ending(marked_line)
        return self.payload


def digest(code_lines: list[str], kind: str, payload: str) -> str:
    """Six hex digits over a hunk's code (without marker) and its payload."""
    text = "\n".join(code_lines[:-1] + [code_lines[-1].rstrip()]) if code_lines else ""
    raw = f"{text}\0{kind}\0{payload}".encode("utf-8", "surrogatepass")
    return hashlib.sha1(raw).hexdigest()[:6]


def render(code_lines: list[str], original: str, line_ending: str) -> str:
    """The marker comment (with its leading separator) closing a hunk of `code_lines` that replaced `original`.

    `code_lines` are the hunk's lines without line endings; `line_ending` is the marked line's ending.
    """
    if not original:
        kind, payload = "", ""
    elif line_ending and original.endswith(line_ending):
        kind, payload = "was", original[: -len(line_ending)]
    else:
        kind, payload = "raw", original
    text = f"# {TAG} {digest(code_lines, kind, payload)}"
    if len(code_lines) > 1:
        text += f" +{len(code_lines)}"
    if kind:
        text += f" {kind}: {payload!r}"
    last = code_lines[-1] if code_lines else ""
    separator = "" if not last.strip() else "  "
    return separator + text


def parse_comment(comment: str, line: int, column: int) -> Marker | None:
    """The marker inside a comment token, or None when the comment has none."""
    match = _MARKER.search(comment)
    if match is None:
        return None
    digest_, count, kind, payload = match.groups()
    value = ""
    if kind:
        try:
            value = ast.literal_eval(payload)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            value = None
        if not isinstance(value, str):
            raise MarkerError(line, "its recorded original text is damaged")
    return Marker(line, column + match.start(), digest_, int(count or 1), kind or "", value)


class MarkerError(Exception):
    """A marker that cannot be trusted (edited line, damaged payload); carries the 1-based line."""

    def __init__(self, line: int, reason: str) -> None:
        super().__init__(f"line {line}: {reason}")
        self.line = line
        self.reason = reason


def find(text: str) -> list[Marker]:
    """Every marker in `text`, in line order (comments only: never inside strings)."""
    if TAG not in text:
        return []
    markers = []
    for token in tokenize.generate_tokens(io.StringIO(text, newline="").readline):
        if token.type == tokenize.COMMENT and TAG in token.string:
            marker = parse_comment(token.string, token.start[0], token.start[1])
            if marker is not None:
                markers.append(marker)
    return markers


def check(marker: Marker, lines: list[str]) -> None:
    """Raise MarkerError unless the hunk `marker` closes is exactly what the tool wrote."""
    first = marker.line - marker.count
    if first < 0:
        raise MarkerError(marker.line, "its hunk starts before the first line")
    code = [body(line) for line in lines[first: marker.line]]
    code[-1] = code[-1][: marker.column]
    if digest(code, marker.kind, marker.payload) != marker.digest:
        raise MarkerError(marker.line, "this machine-written line was edited; restore it or remove its marker")


def strip(text: str) -> str:
    """`text` without the markers (for showing instrumented code): trace lines go, marker comments go."""
    found = find(text)
    if not found:
        return text
    lines = split_lines(text)
    for marker in reversed(found):
        line = lines[marker.line - 1]
        code = body(line)[: marker.column].rstrip()
        lines[marker.line - 1] = code + ending(line) if code.strip() else ""
    return "".join(lines)

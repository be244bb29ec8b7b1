"""Mark every line a transform added or changed: diff the original and the new text line by line.

Each changed line is paired with the original line it most resembles and records it; added lines get a
bare marker; removed lines leave a comment-only trace line that records them. A line that cannot end
in a comment (inside a multi-line string, or continued with a backslash) joins the hunk of the next
line that can, so markers never change what the code means.
"""

from __future__ import annotations

import difflib
import io
import os
import tokenize
from dataclasses import dataclass, field

from msprobe_rewriter.instrument import markers
from msprobe_rewriter.instrument.textio import body, ending, split_lines

SIMILAR = 0.5  # below this ratio a changed line is treated as a removal plus an addition
MAX_ALIGN = 2500  # larger hunks (old x new lines) are paired in order instead of by similarity


@dataclass
class _Unit:
    """New lines (possibly none: a removal) that together replace `old` original lines."""

    new: list[str] = field(default_factory=list)
    old: list[str] = field(default_factory=list)
    changed: bool = True


def commentable_rows(text: str) -> set[int]:
    """0-based indexes of the lines whose end is a real line end (a comment may be appended there)."""
    rows = set()
    for token in tokenize.generate_tokens(io.StringIO(text, newline="").readline):
        if token.type in (tokenize.NEWLINE, tokenize.NL):
            rows.add(token.start[0] - 1)
    return rows


def mark(old_text: str, new_text: str) -> str:
    """`new_text` with a marker on every hunk that differs from `old_text` (tokenizable new text only)."""
    return "".join(line for entry in mark_lines(old_text, new_text) for line in entry)


def mark_lines(old_text: str, new_text: str) -> list[list[str]]:
    """For each line of `new_text` (plus one slot for the end), the lines it becomes once marked:
    itself (with a marker when it closes a hunk), preceded by any trace lines of removed text."""
    new = split_lines(new_text)
    entries: list[list[str]] = [[] for _ in range(len(new) + 1)]
    if old_text == new_text:
        for row, line in enumerate(new):
            entries[row].append(line)
        return entries
    units = _units(split_lines(old_text), new)
    ok = commentable_rows(new_text)
    row = 0  # index in `new` of the next line to place
    group: _Unit | None = None
    start = 0
    for unit in units:
        if group is None and not unit.changed:
            entries[row].extend(unit.new)
            row += len(unit.new)
            continue
        if group is None:
            group, start = _Unit(), row
        group.new.extend(unit.new)
        group.old.extend(unit.old)
        row += len(unit.new)
        # A blank added line joins the next line's hunk rather than carrying a marker of its own.
        last_ok = (row - 1 in ok and new[row - 1].strip() != "") if group.new else (row == 0 or row - 1 in ok)
        if last_ok:
            _place(entries, _emit(group, new, row), start, bool(group.new))
            group = None
    if group is not None:  # cannot happen for tokenizable text: its last line always ends a token
        _place(entries, _emit(group, new, row), start, bool(group.new))
    return entries


def _place(entries: list[list[str]], lines: list[str], start: int, replaces: bool) -> None:
    """Put a marked group's lines in the entries of the new lines they stand for (a trace: before `start`)."""
    if replaces:
        for offset, line in enumerate(lines):
            entries[start + offset].append(line)
    else:
        entries[start].extend(lines)


def _emit(group: _Unit, new: list[str], row: int) -> list[str]:
    """The group's lines with the marker on the last one (a trace line when it added nothing)."""
    original = "".join(group.old)
    if not group.new:  # the trace goes at the outermost of the removed lines (not a bracket's inner line)
        indent = min((line[: len(line) - len(line.lstrip(" \t"))] for line in group.old if line.strip()),
                     key=len, default="")
        end = ending(group.old[-1]) or ending(new[row - 1] if row else "") or "\n"
        code = [indent]
        return [indent + markers.render(code, original, end).lstrip() + end]
    code = [body(line) for line in group.new]
    end = ending(group.new[-1])
    marked = code[-1] + markers.render(code, original, end) + end
    return group.new[:-1] + [marked]


def _units(old: list[str], new: list[str]) -> list[_Unit]:
    """Equal lines one by one, and each hunk split into changed, added and removed lines."""
    units: list[_Unit] = []
    start = 0
    while start < min(len(old), len(new)) and old[start] == new[start]:
        start += 1
    stop_old, stop_new = len(old), len(new)
    while stop_old > start and stop_new > start and old[stop_old - 1] == new[stop_new - 1]:
        stop_old -= 1
        stop_new -= 1
    units.extend(_Unit([line], [line], False) for line in new[:start])
    matcher = difflib.SequenceMatcher(None, old[start:stop_old], new[start:stop_new], autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        o, n = old[start + i1: start + i2], new[start + j1: start + j2]
        if tag == "equal":
            units.extend(_Unit([line], [line], False) for line in n)
        else:
            units.extend(_pair(o, n))
    units.extend(_Unit([line], [line], False) for line in new[stop_new:])
    return units


def _pair(old: list[str], new: list[str]) -> list[_Unit]:
    """Split one hunk: pair old and new lines in order by similarity (a small alignment DP)."""
    m, k = len(old), len(new)
    if m * k > MAX_ALIGN:
        units = [_Unit([n], [o]) for o, n in zip(old, new, strict=False)]
        units += [_Unit([n], []) for n in new[m:]] + ([_Unit([], old[k:])] if m > k else [])
        return units
    ratio = [[similarity(o.strip(), n.strip()) if _opens(o) == _opens(n) else 0.0 for n in new] for o in old]
    score = [[0.0] * (k + 1) for _ in range(m + 1)]
    for i in range(m - 1, -1, -1):
        for j in range(k - 1, -1, -1):
            paired = score[i + 1][j + 1] + ratio[i][j] if ratio[i][j] >= SIMILAR else -1.0
            score[i][j] = max(paired, score[i + 1][j], score[i][j + 1])
    units: list[_Unit] = []
    i = j = 0
    while i < m or j < k:
        if i < m and j < k:
            if ratio[i][j] >= SIMILAR and score[i][j] == score[i + 1][j + 1] + ratio[i][j]:
                units.append(_Unit([new[j]], [old[i]]))
                i, j = i + 1, j + 1
                continue
        if j < k and (i == m or score[i][j] == score[i][j + 1]):
            units.append(_Unit([new[j]], []))
            j += 1
        else:
            units.append(_Unit([], [old[i]]))
            i += 1
    return _merge_removals(units)


def _opens(line: str) -> int:
    """How many brackets `line` leaves open (or closes, below 0): a line opening a multi-line call
    (`T.RandomApply([`) is no edit of a whole one (`T.CenterCrop(224),`)."""
    return sum(line.count(c) for c in "([{") - sum(line.count(c) for c in ")]}")


def similarity(a: str, b: str) -> float:
    """How much two lines look like one edited into the other: the better of difflib's ratio and the share
    of the shorter line kept as a common prefix plus suffix (an argument appended or a name swapped)."""
    if not a or not b:
        return 1.0 if a == b else 0.0
    prefix = len(os.path.commonprefix([a, b]))
    suffix = len(os.path.commonprefix([a[prefix:][::-1], b[prefix:][::-1]]))
    return max(difflib.SequenceMatcher(None, a, b).ratio(), (prefix + suffix) / min(len(a), len(b)))


def _merge_removals(units: list[_Unit]) -> list[_Unit]:
    """Consecutive removed lines form one trace."""
    merged: list[_Unit] = []
    for unit in units:
        if merged and not unit.new and not merged[-1].new:
            merged[-1].old.extend(unit.old)
        else:
            merged.append(unit)
    return merged

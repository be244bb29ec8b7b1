"""Call stacks of recorded calls: cheap keys on the hot path, msprobe's stack.json lines once per stack.

A stack is numbered as a chain: the number of `(code, instruction, number of the chain below)`. While
a frame runs, the frames below it cannot change, and while it stays at one instruction, neither can
its own chain. So the frame of the last capture is remembered (a loop calling API after API, such as
an optimizer's, only looks at its own instruction), and so is the last stack walked, frame by frame
from the bottom, with the numbers: a walk stops at the first of its frames still at the same
instruction (sibling modules called from one forward walk only their new frames), and the frames
remembered above that one have returned: they are dropped, so no finished call's locals are kept
alive for long. Everything is forgotten at the end of each capture window. Generator frames, which may
resume under another caller, are never remembered. Numbers become msprobe's lines (`File {path}, line
{n}, in {function}, \n {source}`) once per distinct stack, cached across steps. The walk runs in C
where the package was built with a C compiler (_stacks.c, on this module's caches; hundreds of calls a
step at L1), else in Python.
"""

from __future__ import annotations

import linecache
import os

try:  # compiled when the package was built with a C compiler; else the walk below, in Python
    from msprobe_runtime.pytorch.capture import _stacks
except ImportError:  # pragma: no cover - depends on the build
    _stacks = None

_OWN_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # msprobe_runtime/
_GENERATED = "<eval_with_key"  # the file name of code torch.fx generates (compiled graphs)
_RESUMABLE = 0x20 | 0x80 | 0x200  # CO_GENERATOR | CO_COROUTINE | CO_ASYNC_GENERATOR: may resume elsewhere
_CACHE_LIMIT = 8192
_codes: dict[int, object] = {}  # code objects seen in stacks, kept alive so their ids stay unique
_chains: dict[tuple, int] = {}  # (id(code), instruction, number below) -> number
_links: list[tuple] = []  # number -> (id(code), instruction, number below)
_lines: dict[int, tuple[str, ...]] = {}
# the last stack walked, from the bottom: (frame, instruction, number) per frame, None for a generator's
_last_stack: list[tuple | None] = []
_places: dict[int, int] = {}  # id(frame) -> its place in _last_stack


class _Last:
    """The frame of the last capture and the number of the chain below it."""

    frame = None
    below = -1


def walk_stack(frame) -> int:
    """The number of the stack at `frame`, skipping msprobe_runtime's own frames (-1: no frame); in Python
    (`capture_stack` is the same walk in C, where it was built)."""
    while frame is not None and frame.f_code.co_filename.startswith(_OWN_DIR):
        frame = frame.f_back
    if frame is None:
        return -1
    if frame is _Last.frame:  # the same call, still running (a loop calling API after API): frames below
        return _link(frame.f_code, frame.f_lasti, _Last.below)  # it cannot have changed
    walked = []
    number = depth = -1  # the number and place of the remembered frame the walk stops at
    cursor = frame
    while cursor is not None:
        place = _places.get(id(cursor))
        if place is not None:
            seen = _last_stack[place]
            if seen[0] is cursor and seen[1] == cursor.f_lasti:
                number, depth = seen[2], place
                break
        walked.append(cursor)
        cursor = cursor.f_back
    for returned in _last_stack[depth + 1:]:  # the frames remembered above it have returned
        if returned is not None:
            del _places[id(returned[0])]
    del _last_stack[depth + 1:]
    for cursor in reversed(walked):
        number = _link(cursor.f_code, cursor.f_lasti, number)
        if cursor.f_code.co_flags & _RESUMABLE:  # a generator may resume under another caller
            _last_stack.append(None)
        else:
            _places[id(cursor)] = len(_last_stack)
            _last_stack.append((cursor, cursor.f_lasti, number))
    if not frame.f_code.co_flags & _RESUMABLE:
        _Last.frame, _Last.below = frame, _links[number][2]
    return number


_compiled = None if _stacks is None else _stacks.Stacks(_OWN_DIR, _codes, _chains, _links, _last_stack, _places)
capture_stack = walk_stack if _compiled is None else _compiled.capture


def _link(code, instruction: int, below: int) -> int:
    """The number of the chain (code, instruction) over the chain numbered `below`."""
    link = (id(code), instruction, below)
    number = _chains.get(link, -1)
    if number < 0:
        if id(code) not in _codes:
            _codes[id(code)] = code
        number = _chains[link] = len(_links)
        _links.append(link)
    return number


def from_generated_code(frame) -> bool:
    """True when `frame` runs code torch.fx generated (a compiled graph)."""
    return frame is not None and frame.f_code.co_filename.startswith(_GENERATED)


def stack_lines(number: int) -> tuple[str, ...]:
    """msprobe's stack lines, innermost first, for a number from `capture_stack` (cached)."""
    lines = _lines.get(number)
    if lines is None:
        chain = []
        while number >= 0 and number not in _lines:
            chain.append(number)
            number = _links[number][2]
        lines = _lines.get(number, ())
        for link_number in reversed(chain):
            code_id, instruction, _ = _links[link_number]
            lines = _lines[link_number] = (_line(_codes[code_id], instruction), *lines)
    return lines


def release() -> None:
    """Forget the remembered frames (end of a capture window); bound the caches."""
    _last_stack.clear()
    _places.clear()
    _Last.frame = None
    if _compiled is not None:
        _compiled.forget()
    if len(_links) > _CACHE_LIMIT:  # numbers and code ids go together: nothing refers to them between windows
        _chains.clear()
        _links.clear()
        _lines.clear()
        _codes.clear()


def _line(code, instruction: int) -> str:
    line = _line_of(code, instruction)
    source = linecache.getline(code.co_filename, line).strip() if line else ""
    return f"File {code.co_filename}, line {line}, in {code.co_name}, \n {source}"


def _line_of(code, instruction: int) -> int | None:
    for start, end, line in code.co_lines():
        if start <= instruction < end:
            return line
    return None

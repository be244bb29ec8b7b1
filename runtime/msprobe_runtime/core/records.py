"""The framework-free bookkeeping of one capture window: call numbers, filters, records, construct, stacks.

A framework's capture session (PyTorch's and MindSpore's build on `StepRecords`) turns tensors into statistic entries;
everything else it needs is here: the config's data_mode as switches, msprobe's `list`/`scope` filters,
the dump.json `data` in completion order, construct.json's parents, and stack.json's distinct stacks
(captured as cheap code-object keys, formatted once per distinct stack).
"""

from __future__ import annotations

import linecache
import os
import threading
from collections import defaultdict

from msprobe_runtime.core.config import DebuggerConfig

_OWN_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # msprobe_runtime/
_codes: dict[int, object] = {}  # code objects seen in stacks, kept alive so their ids stay unique
_formatted: dict[tuple, tuple[str, ...]] = {}


class Modes:
    """The config's data_mode as four switches."""

    def __init__(self, data_mode: tuple[str, ...]):
        modes = set(data_mode)
        every = "all" in modes
        self.forward = every or "forward" in modes or not modes & {"forward", "backward"}
        self.backward = every or "backward" in modes or not modes & {"forward", "backward"}
        self.input = every or "input" in modes or not modes & {"input", "output"}
        self.output = every or "output" in modes or not modes & {"input", "output"}


class StepRecords:
    """Names, filters and records of one step on one rank (no tensors: the framework session adds those)."""

    def __init__(self, config: DebuggerConfig):
        self.config = config
        self.thread = threading.get_ident()  # the thread that opened the window: whose calls are recorded
        self.modes = Modes(config.data_mode)
        self.records_apis = config.level in ("L1", "mix")
        self.records_modules = config.level in ("L0", "mix")
        self.filtered = bool(config.list or config.scope)
        self.data: dict[str, dict] = {}
        self.construct: dict[str, str | None] = {}
        self.module_stack: list[str] = []  # forward names of the modules (cells) running now
        self.stack_items: list[tuple[list, list]] = []  # stack.json: ([record names], [lines])
        self._counts: dict[str, int] = defaultdict(int)
        self._stacks: dict[tuple, int] = {}
        self._stack_lines: dict[tuple, int] = {}
        self._unwanted: set[str] = set()
        self._scope_state = 0 if config.scope else 1  # 0 before the scope, 1 inside, 2 after
        self._finalizers: list = []  # run at close: backward records still open

    def next_index(self, stem: str) -> int:
        """The call index of `stem` in this step (0, 1, ...)."""
        index = self._counts[stem]
        self._counts[stem] = index + 1
        return index

    def wanted(self, forward_name: str) -> bool:
        """Whether a forward record (and its backward) is dumped: the config's list and scope."""
        keep = True
        if self.config.list:
            keep = any(item in forward_name for item in self.config.list)
        if self.config.scope:
            first, last = self.config.scope
            if self._scope_state == 0 and _matches(forward_name, first):
                self._scope_state = 1
            keep = keep and self._scope_state == 1
            if self._scope_state == 1 and _matches(forward_name, last):
                self._scope_state = 2
        if not keep:
            self._unwanted.add(forward_name)
        return keep

    def on_close(self, finalizer) -> None:
        """Run `finalizer()` when the window closes, before statistics are filled (open backward records)."""
        self._finalizers.append(finalizer)

    def run_finalizers(self) -> None:
        """Run the finalizers, and drop them: they hold the session, which would otherwise be left in a
        reference cycle, freed (with every record of the step) only by the garbage collector."""
        finalizers, self._finalizers = self._finalizers, []
        for finalizer in finalizers:
            finalizer()

    def wanted_backward(self, forward_name: str) -> bool:
        """Backward records follow their forward record's filter."""
        return self.modes.backward and forward_name not in self._unwanted

    def parent(self) -> str | None:
        """The forward name of the innermost module running now (construct.json's parent)."""
        return self.module_stack[-1] if self.module_stack else None

    @staticmethod
    def stack_lines(key) -> tuple[str, ...]:
        """stack.json lines of a stack key from `capture_stack` (a session capturing stacks its own way overrides this)."""
        return format_stack(key)

    def add_record(self, name: str, record: dict | tuple, parent: str | None, stack=None,
                   construct: bool = True) -> None:
        """Insert a record (a dict, or a flat (key, value, ...) tuple; in completion order), its construct
        parent and its stack."""
        self.data[name] = record
        if self.records_modules and construct:
            self.construct[name] = parent
        if stack is not None:
            index = self._stacks.get(stack)
            if index is None:  # stacks differing only in instruction offsets share one entry
                lines = self.stack_lines(stack)
                index = self._stacks[stack] = self._stack_lines.setdefault(lines, len(self.stack_items))
                if index == len(self.stack_items):
                    self.stack_items.append(([], list(lines)))
            self.stack_items[index][0].append(name)

    def construct_json(self) -> dict:
        """construct.json's content: parents at L0 and mix, empty at L1 (as msprobe writes it)."""
        return self.construct if self.records_modules else {}

    def encode_slice(self, value: slice, record: str, category: str, path: tuple, depth: int) -> dict:
        """msprobe's form of a slice; a bound that is not an int (a tensor: `data[i:i + n]` with `i` drawn
        by randint; a numpy int) is encoded as an argument (the subclass's `encode`)."""
        return {"type": "slice", "value": [
            part if part is None or part.__class__ is int else self.encode(part, record, category, path, depth + 1)
            for part in (value.start, value.stop, value.step)]}


def _matches(name: str, pattern: str) -> bool:
    return name == pattern or name.startswith(pattern + ".")


def capture_stack(frame, own_dirs: tuple[str, ...] = (_OWN_DIR,)) -> tuple:
    """The call stack above msprobe-kit's own frames as a flat (id(code), instruction, ...) tuple: cheap
    to build and hash; turned into source lines once per distinct stack (`format_stack`)."""
    while frame is not None and frame.f_code.co_filename.startswith(own_dirs):
        frame = frame.f_back
    key = []
    append = key.append
    while frame is not None:
        code = frame.f_code
        if id(code) not in _codes:
            _codes[id(code)] = code
        append(id(code))
        append(frame.f_lasti)
        frame = frame.f_back
    return tuple(key)


def format_stack(key: tuple) -> tuple[str, ...]:
    """msprobe's stack lines: `File {path}, line {n}, in {function}, \\n {source}` (cached per key)."""
    lines = _formatted.get(key)
    if lines is None:
        if len(_formatted) > 4096:
            _formatted.clear()
        lines = _formatted[key] = _stack_lines(key)
    return lines


def _stack_lines(key: tuple) -> tuple[str, ...]:
    lines = []
    for position in range(0, len(key), 2):
        code = _codes[key[position]]
        line = _line_of(code, key[position + 1])
        lines.append(f"File {code.co_filename}, line {line}, in {code.co_name}, \n "
                     f"{linecache.getline(code.co_filename, line).strip() if line else ''}")
    return tuple(lines)


def _line_of(code, instruction: int) -> int | None:
    for start, end, line in code.co_lines():
        if start <= instruction < end:
            return line
    return None

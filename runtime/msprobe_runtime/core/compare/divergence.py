"""The first divergence: walking the calls in execution order, the first whose inputs agree and whose
outputs do not. That call made the difference; everything after it only carries it along.

Rows agree when their content hashes (or msprobe md5s) are equal; without hashes, when every statistic
is equal (tensor mode: when MaxAbsErr is 0), or within `rtol` when one is given. Inputs are positional
and keyword arguments and parameters; outputs are results and parameter gradients. The destination
argument of in-place fills (`uniform_`, `copy_`, ...) is not an input that matters. When no call
qualifies (the difference comes from outside the captured calls, e.g. the data, or from a call only one
run made), the first call with any difference is reported instead, as a "first difference". Backward
calls and parameter gradients also read what their forward call saved, so they qualify only when that
forward call was identical. A call whose differing outputs are all overwritten later (a random
initialisation replaced by `zeros_` or by a checkpoint) does not count: its difference reaches nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from msprobe_runtime.core.compare.table import OUTPUT, PARAMETERS_GRAD, DumpTable

_UNINITIALISED = frozenset({"empty", "empty_like", "empty_strided", "empty_with_format", "new_empty",
                            "new_empty_strided"})
_OVERWRITTEN_DESTINATION = frozenset({"uniform_", "normal_", "bernoulli_", "random_", "exponential_",
                                      "geometric_", "cauchy_", "log_normal_", "zero_", "fill_", "copy_",
                                      "set_", "resize_"})
_FRAME = re.compile(r"File (?P<file>.*?), line (?P<line>\d+), in (?P<function>.*?),\s*\n\s?(?P<code>.*)", re.DOTALL)
_LIBRARY_MARKERS = ("site-packages", "dist-packages", "/lib/python3", "\\lib\\python3", "<frozen")
PREVIOUS_CALLS = 3


@dataclass
class Source:
    """A user source line from stack.json."""

    file: str
    line: int
    function: str
    code: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line} in {self.function}: {self.code}".rstrip(": ")


@dataclass
class Call:
    """One call (record) of the target dump in the divergence report."""

    index: int
    name: str
    status: str  # "identical", "differs", "inputs differ", "only in target"
    source: Source | None
    rows: list[str] = field(default_factory=list)  # names of its rows that differ
    argument_differs: bool = False  # a non-tensor input (a constant in the code) differs


@dataclass
class Divergence:
    """The first diverging call (kind "divergence"), or the first call with any difference ("difference")."""

    kind: str
    call: Call
    previous: list[Call]
    golden_only_before: list[str] = field(default_factory=list)  # golden calls missing in target, just before


def user_frame(lines: list[str]) -> Source | None:
    """The innermost frame of a stack (msprobe order: innermost first) that is not library code."""
    frames = [match for match in (_FRAME.match(line) for line in lines or ()) if match]
    for match in frames:
        path = match["file"].replace("\\", "/")
        if not any(marker in path for marker in _LIBRARY_MARKERS) and "/torch/" not in path:
            return Source(match["file"], int(match["line"]), match["function"], match["code"].strip())
    if frames:
        match = frames[0]
        return Source(match["file"], int(match["line"]), match["function"], match["code"].strip())
    return None


def forward_name(record: str) -> str | None:
    """The forward call of a backward call or a parameter gradient (`...3.backward` -> `...3.forward`,
    `Module.m.L.parameters_grad.0` -> `Module.m.L.forward.0`); None for other calls."""
    parts = record.split(".")
    if parts[-1] == "backward":
        parts[-1] = "forward"
    elif len(parts) > 1 and parts[-2] in ("backward", "parameters_grad"):
        parts[-2] = "forward"
    else:
        return None
    return ".".join(parts)


def source_of(table: DumpTable, record: str) -> Source | None:
    """The user line that made call `record` (a backward call or gradient: its forward call's line)."""
    lines = table.stacks.get(record)
    if lines is None:
        lines = table.stacks.get(forward_name(record) or "")
    return user_frame(lines) if lines else None


def _producer_of(records: list[str]) -> np.ndarray:
    """Per call, the call whose data it also reads: a backward call reads what its forward call saved, a
    parameter gradient is made by its module's backward call. -1: none; -2: that call was not captured."""
    producer = np.full(len(records), -1, dtype=np.int64)
    readers = [index for index, name in enumerate(records) if "backward" in name or "parameters_grad" in name]
    position = {name: index for index, name in enumerate(records)} if readers else {}
    for index in readers:  # a forward call reads no saved data
        name = records[index]
        parts = name.split(".")
        if len(parts) > 1 and parts[-2] == "parameters_grad":
            producer[index] = position.get(".".join([*parts[:-2], "backward", parts[-1]]), -2)
        elif (forward := forward_name(name)) is not None:
            producer[index] = position.get(forward, -2)
    return producer


def _gradient_sources_agree(records: list[str], identical: np.ndarray) -> np.ndarray:
    """Per call, False for a parameter gradient whose module has a backward call (or its forward call) that
    differs: the gradient sums what every call of the module gave in its backward pass (a module called
    twice: a Siamese tower, CycleGAN's generator), not only the backward call of its own number."""
    agree = np.ones(len(records), dtype=bool)
    if not any("parameters_grad" in name for name in records):  # L1 dumps: nothing to look at
        return agree
    gradients: dict[str, list[int]] = {}
    backwards: dict[str, bool] = {}  # module prefix -> whether all its backward calls and their forwards agree
    position = {name: index for index, name in enumerate(records)}
    for index, name in enumerate(records):
        prefix, _, kind = name.rpartition(".")[0].rpartition(".")
        if kind == "parameters_grad":
            gradients.setdefault(prefix, []).append(index)
        elif kind == "backward":
            forward = position.get(forward_name(name) or "")
            both = identical[index] and (forward is None or identical[forward])
            backwards[prefix] = backwards.get(prefix, True) and bool(both)
    for prefix, indices in gradients.items():
        agree[indices] = backwards.get(prefix, True)
    return agree


def _holding(target: DumpTable, different: np.ndarray) -> np.ndarray:
    """Per call, whether a call made inside it (construct.json) differs: a module whose outputs differ
    because of a call inside it (at mix, a changed setting of the `gelu` in its `forward`) did not make
    the difference itself; the call inside it is named."""
    holding = np.zeros(len(target.records), dtype=bool)
    parents = target.parents
    if not parents or not different.any():
        return holding
    position = {name: index for index, name in enumerate(target.records)}
    for index in np.flatnonzero(different).tolist():
        parent = parents.get(target.records[index])
        while parent is not None and (at := position.get(parent)) is not None and not holding[at]:
            holding[at] = True
            parent = parents.get(parent)
    return holding


def _golden_only(record_match: np.ndarray, golden: DumpTable) -> tuple[int, list[str]] | None:
    """The first GOLDEN calls that TARGET did not make: (the target call they precede, their names)."""
    paired = np.zeros(len(golden.records), dtype=bool)
    paired[record_match[record_match >= 0]] = True
    missing = np.flatnonzero(~paired)
    if not len(missing) or not len(record_match):
        return None
    first = int(missing[0])
    run_end = first
    while run_end + 1 < len(paired) and not paired[run_end + 1]:
        run_end += 1
    names = [golden.records[g] for g in range(first, run_end + 1)][:PREVIOUS_CALLS]
    later = np.flatnonzero(record_match > first)
    return (int(later[0]) if len(later) else len(record_match) - 1), names


def _not_overwritten(target: DumpTable, candidates: np.ndarray, record: np.ndarray, bad_output_rows: np.ndarray,
                     destinations: np.ndarray) -> np.ndarray:
    """Drop candidates whose differing outputs are all overwritten later (e.g. a random initialisation
    followed by `zeros_` or a checkpoint's `copy_`): their difference never reaches anything. Tensors
    are recognised by content hash, so this needs hash or md5 dumps."""
    if not len(candidates) or not destinations.any() or all(digest is None for digest in target.digest[:1000]):
        return candidates
    last_overwrite: dict[str, int] = {}
    for row in np.flatnonzero(destinations).tolist():
        digest = target.digest[row]
        if digest is not None:
            last_overwrite[digest] = int(record[row])
    kept = []
    for candidate in candidates.tolist():
        digests = [target.digest[row] for row in np.flatnonzero((record == candidate) & bad_output_rows).tolist()]
        if not digests or any(digest is None or last_overwrite.get(digest, -1) <= candidate for digest in digests):
            kept.append(candidate)
    return np.asarray(kept, dtype=np.int64)


def find(target: DumpTable, golden: DumpTable, record_match: np.ndarray, partner: np.ndarray,
         agree: np.ndarray) -> Divergence | None:
    """The first divergence, else the first difference, else None (the dumps agree everywhere)."""
    records = len(target.records)
    record = target.row_record
    bad = (partner < 0) | ~agree
    output = (target.state == OUTPUT) | (target.state == PARAMETERS_GRAD)
    api = target.api_names
    bad_output = np.zeros(records, dtype=bool)
    bad_output[record[bad & output]] = True
    # the destination of an in-place fill, or of an in-place call whose result agrees (`empty_like(p).scatter_(0, p,
    # ...)`, as pack_padded_sequence inverts a permutation: memory never initialised, then all written)
    overwritten = np.array([name in _OVERWRITTEN_DESTINATION for name in api], dtype=bool)
    in_place = np.array([name.endswith("_") and not name.endswith("__") for name in api], dtype=bool)
    destination = (overwritten | (in_place & ~bad_output))[record]
    suffix_is_first = np.array([s == ".input.0" for s in target.suffixes], dtype=bool)
    ignored_input = destination & suffix_is_first[target.row_suffix]
    bad_input = np.zeros(records, dtype=bool)
    bad_input[record[bad & ~output & ~ignored_input]] = True
    paired = record_match >= 0
    identical = paired & ~bad_input & ~bad_output
    producer = _producer_of(target.records)
    golden_producer = _producer_of(golden.records)
    # a backward call also reads what its forward call saved: its inputs agree only if that call was
    # identical, and only if the two backward calls belong to forward calls that were paired together
    producer_index = np.maximum(producer, 0)
    same_producer = record_match[producer_index] == golden_producer[np.maximum(record_match, 0)]
    hidden_inputs_agree = (producer == -1) | ((producer >= 0) & identical[producer_index] & same_producer)
    # a parameter gradient also reads the forward call's inputs: its producer's producer must agree too
    second = np.where(producer >= 0, producer[producer_index], -1)
    hidden_inputs_agree &= (second == -1) | ((second >= 0) & identical[np.maximum(second, 0)])
    hidden_inputs_agree &= _gradient_sources_agree(target.records, identical)
    usable = paired & ~np.array([a in _UNINITIALISED for a in api], dtype=bool) & ~_holding(target, ~identical)
    diverging = np.flatnonzero(usable & hidden_inputs_agree & ~bad_input & bad_output)
    diverging = _not_overwritten(target, diverging, record, bad & output, ignored_input)
    different = np.flatnonzero(~paired | bad_input | bad_output)
    gap = _golden_only(record_match, golden)
    if len(diverging):
        index, kind = int(diverging[0]), "divergence"
    elif len(different) or gap is not None:
        starts = ([int(different[0])] if len(different) else []) + ([gap[0]] if gap is not None else [])
        index, kind = min(starts), "difference"
    else:
        return None

    def call(position: int) -> Call:
        rows = np.flatnonzero((record == position) & bad)
        if not paired[position]:
            status = "only in target"
        elif bad_input[position]:
            status = "inputs differ"
        else:
            status = "differs" if bad_output[position] else "identical"
        argument = bool(paired[position] and (~target.is_tensor[rows] & ~output[rows]).any())
        return Call(position, target.records[position], status, source_of(target, target.records[position]),
                    target.row_names(rows[:8]), argument)

    previous = [call(position) for position in range(max(0, index - PREVIOUS_CALLS), index)]
    missing = gap[1] if gap is not None and gap[0] == index else []
    return Divergence(kind, call(index), previous, missing)

"""Statistic records of dump.json (framework-free): msprobe 26.x's keys, in its order, and their values.

A tensor is described by ``{"type", "dtype", "shape", "Max", "Min", "Mean", "Norm", "requires_grad"}``
plus, by summary mode, ``"md5"`` (msprobe's: CRC32 of the raw bytes, 8 hex digits) or ``"hash"`` (ours:
a 64-bit position-weighted sum of the raw bits, computed on the device), and in tensor mode
``"data_name"`` (the .npy file). Any other argument is ``{"type", "value"}``; ``None`` stays ``null``.
A capture side either builds these dicts (`fill_statistics` completes them) or, cheaper, has the JSON
text of the entries made at once (`entry_head`, `statistics_texts`, `entry_texts`).

Values follow msprobe: integer tensors get Max/Min only (Mean/Norm null, except for 0-d tensors), bool
tensors get Max = any, Min = all; complex tensors are described by their magnitudes; empty tensors get
nulls. Unlike msprobe, float64 tensors get Mean and Norm too, and the Norm of a 0-d tensor is |x|.
NaN and infinities are written as msprobe (Python's json) writes them: ``NaN``, ``Infinity``.
"""

from __future__ import annotations

import json
from array import array

from msprobe_runtime.core.jsontext import float_array_text, json_value, number_texts

try:  # compiled when the package was built with a C compiler (_dumptext.c)
    from msprobe_runtime.core import _dumptext
except ImportError:  # pragma: no cover - exercised only without a C compiler
    _dumptext = None

TYPE, DTYPE, SHAPE = "type", "dtype", "shape"
MAX, MIN, MEAN, NORM = "Max", "Min", "Mean", "Norm"
REQUIRES_GRAD, MD5, HASH, DATA_NAME = "requires_grad", "md5", "hash", "data_name"
STAT_KEYS = (MAX, MIN, MEAN, NORM)

# how a tensor's statistics row is to be read
KIND_FLOAT, KIND_INT, KIND_BOOL, KIND_NONE = "float", "int", "bool", "none"
_NULLS = (None, None, None, None)


def statistics_values(kind: str, numel: int, scalar: bool, high, low, total, norm) -> tuple:
    """(Max, Min, Mean, Norm) from a row computed on the device (`total` is the sum of elements)."""
    if kind == KIND_NONE or numel == 0:
        return _NULLS
    if kind == KIND_BOOL:
        return bool(high), bool(low), None, None
    if kind == KIND_INT:
        if scalar:  # a 0-d integer: its value
            return int(high), int(low), float(high), float(abs(high))
        return int(high), int(low), None, None
    return high, low, total / numel, norm


def fill_statistics(entry: dict, kind: str, numel: int, high, low, total, norm) -> None:
    """Write Max/Min/Mean/Norm into a tensor entry dict (which has the four keys, as null)."""
    values = statistics_values(kind, numel, not entry[SHAPE], high, low, total, norm)
    entry[MAX], entry[MIN], entry[MEAN], entry[NORM] = [json_value(value) for value in values]


def entry_head(type_name: str, dtype: str, shape: tuple) -> bytes:
    """The JSON text of a tensor entry up to its statistics: `{"type": ..., "dtype": ..., "shape": [...], `."""
    return (f'{{"{TYPE}": {json.dumps(type_name)}, "{DTYPE}": {json.dumps(dtype)}, '
            f'"{SHAPE}": {json.dumps(list(shape))}, ').encode()


_STATISTICS = f'"{MAX}": %s, "{MIN}": %s, "{MEAN}": %s, "{NORM}": %s'.encode()
_ENTRY_TAIL = f'%s%s, "{REQUIRES_GRAD}": %s%s}}'.encode()
_BOOLS = (b"false", b"true")


def statistics_texts(kinds: list[str], numels: list[int], scalars: list[bool], floats: tuple[list[int], bytes],
                     ints: tuple[list[int], bytes]) -> list[bytes]:
    """Per slot (an item of each list), its statistics as entry text, `"Max": 1.0, "Min": ..., "Norm": ...`,
    as statistics_values makes them. `floats` holds the slots of float tensors and their (max, min, sum,
    norm), four float64 a slot as bytes; `ints` those of integer and bool tensors, four int64 a slot (max,
    min and two unread). In one C call where core._dumptext is built (the floats written by one encoder call)."""
    if _dumptext is not None:
        return _dumptext.statistics_texts(kinds, numels, scalars, floats, ints, float_array_text)
    rows = [(None,) * 4] * len(kinds)
    for (slots, packed), code in ((floats, "d"), (ints, "q")):
        values = array(code, packed)
        for number, slot in enumerate(slots):
            rows[slot] = values[4 * number:4 * number + 4]
    values = [value for row in zip(kinds, numels, scalars, rows, strict=True)
              for value in statistics_values(*row[:3], *row[3])]
    numbers = number_texts(values)
    return [_STATISTICS % quad for quad in zip(numbers[::4], numbers[1::4], numbers[2::4], numbers[3::4], strict=True)]


def entry_texts(slots: list[int], heads: list[bytes], statistics: list[bytes], requires_grad: list[bool],
                extras: list[bytes] | None = None) -> list[bytes]:
    """Tensor entries' JSON texts: per entry, the head and statistics text of its slot (`heads` and
    `statistics` are per slot), its requires_grad, then its extra text (`, "md5": ...`); in one C call
    where core._dumptext is built."""
    if _dumptext is not None:
        return _dumptext.entry_texts(slots, heads, statistics, requires_grad, extras)
    extras = extras if extras is not None else [b""] * len(slots)
    return [_ENTRY_TAIL % (heads[slot], statistics[slot], _BOOLS[flag], extra)
            for slot, flag, extra in zip(slots, requires_grad, extras, strict=True)]


def planned_entry_texts(plan: tuple) -> list[bytes]:
    """The entries' JSON texts from a plan made on the training side, which pickles (the writer process
    makes the texts): (kinds, numels, scalars, floats, ints) as statistics_texts takes them, then per
    slot its head text, then per entry its slot, requires_grad and extra text (or None)."""
    kinds, numels, scalars, floats, ints, heads, slots, requires_grad, extras = plan
    return entry_texts(slots, heads, statistics_texts(kinds, numels, scalars, floats, ints), requires_grad, extras)


def hash_text(value: int) -> str:
    """Our content hash as 16 hex digits."""
    return f"{value & 0xFFFFFFFFFFFFFFFF:016x}"


def md5_text(crc: int) -> str:
    """msprobe's `md5` field: the CRC32 of the tensor's raw bytes as 8 hex digits."""
    return f"{crc & 0xFFFFFFFF:08x}"

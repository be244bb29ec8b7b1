"""Statistic records of dump.json (framework-free): msprobe 26.x's keys, in its order, and their values.

A tensor is described by ``{"type", "dtype", "shape", "Max", "Min", "Mean", "Norm", "requires_grad"}``
plus, by summary mode, ``"md5"`` (msprobe's: CRC32 of the raw bytes, 8 hex digits) or ``"hash"`` (ours:
a 64-bit position-weighted sum of the raw bits, computed on the device), and in tensor mode
``"data_name"`` (the .npy file). Any other argument is ``{"type", "value"}``; ``None`` stays ``null``.
A capture side either builds these dicts (`fill_statistics` completes them) or, cheaper, has the JSON
text of each entry made at once (`entry_head` + `entry_text`).

Values follow msprobe: integer tensors get Max/Min only (Mean/Norm null, except for 0-d tensors), bool
tensors get Max = any, Min = all; complex tensors are described by their magnitudes; empty tensors get
nulls. Unlike msprobe, float64 tensors get Mean and Norm too, and the Norm of a 0-d tensor is |x|.
NaN and infinities are written as msprobe (Python's json) writes them: ``NaN``, ``Infinity``.
"""

from __future__ import annotations

import json

TYPE, DTYPE, SHAPE = "type", "dtype", "shape"
MAX, MIN, MEAN, NORM = "Max", "Min", "Mean", "Norm"
REQUIRES_GRAD, MD5, HASH, DATA_NAME = "requires_grad", "md5", "hash", "data_name"
STAT_KEYS = (MAX, MIN, MEAN, NORM)

# how a tensor's statistics row is to be read
KIND_FLOAT, KIND_INT, KIND_BOOL, KIND_NONE = "float", "int", "bool", "none"
_NULLS = (None, None, None, None)
_INFINITIES = {float("inf"): "Infinity", float("-inf"): "-Infinity"}


def finite(value: float) -> float:
    """`value` unchanged: NaN and infinities are written as msprobe (Python's json) writes them,
    `NaN`/`Infinity`/`-Infinity`. Kept for callers written when they needed finite stand-ins."""
    return value


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
    entry[MAX], entry[MIN], entry[MEAN], entry[NORM] = statistics_values(kind, numel, not entry[SHAPE], high, low,
                                                                          total, norm)


def entry_head(type_name: str, dtype: str, shape: tuple) -> str:
    """The JSON text of a tensor entry up to its statistics: `{"type": ..., "dtype": ..., "shape": [...], `."""
    return (f'{{"{TYPE}": {json.dumps(type_name)}, "{DTYPE}": {json.dumps(dtype)}, '
            f'"{SHAPE}": {json.dumps(list(shape))}, ')


def entry_text(head: str, values: tuple, requires_grad: bool, extra: str = "") -> str:
    """A tensor entry's JSON text: `head`, the four statistics, requires_grad, then `extra` (`, "md5": ...`)."""
    high, low, mean, norm = values
    return (f'{head}"{MAX}": {_number(high)}, "{MIN}": {_number(low)}, "{MEAN}": {_number(mean)}, '
            f'"{NORM}": {_number(norm)}, "{REQUIRES_GRAD}": {"true" if requires_grad else "false"}{extra}}}')


def _number(value) -> str:
    """A statistic as Python's json writes it."""
    if value.__class__ is float:
        if value - value == 0.0:
            return float.__repr__(value)
        return "NaN" if value != value else _INFINITIES[value]
    if value is None:
        return "null"
    if value.__class__ is bool:
        return "true" if value else "false"
    return int.__repr__(value)


def hash_text(value: int) -> str:
    """Our content hash as 16 hex digits."""
    return f"{value & 0xFFFFFFFFFFFFFFFF:016x}"


def md5_text(crc: int) -> str:
    """msprobe's `md5` field: the CRC32 of the tensor's raw bytes as 8 hex digits."""
    return f"{crc & 0xFFFFFFFF:08x}"

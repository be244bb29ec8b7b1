"""Statistic records of dump.json (framework-free): msprobe 26.x's keys, in its order, and their values.

A tensor is described by ``{"type", "dtype", "shape", "Max", "Min", "Mean", "Norm", "requires_grad"}``
(the capture side builds these dicts itself, on its hot path, with the key names below)
plus, by summary mode, ``"md5"`` (msprobe's: CRC32 of the raw bytes, 8 hex digits) or ``"hash"`` (ours:
a 64-bit position-weighted sum of the raw bits, computed on the device), and in tensor mode
``"data_name"`` (the .npy file). Any other argument is ``{"type", "value"}``; ``None`` stays ``null``.

Values follow msprobe: integer tensors get Max/Min only (Mean/Norm null, except for 0-d tensors), bool
tensors get Max = any, Min = all; complex tensors are described by their magnitudes; empty tensors get
nulls. Unlike msprobe, float64 tensors get Mean and Norm too, and the Norm of a 0-d tensor is |x|.
"""

from __future__ import annotations

TYPE, DTYPE, SHAPE = "type", "dtype", "shape"
MAX, MIN, MEAN, NORM = "Max", "Min", "Mean", "Norm"
REQUIRES_GRAD, MD5, HASH, DATA_NAME = "requires_grad", "md5", "hash", "data_name"
STAT_KEYS = (MAX, MIN, MEAN, NORM)

# how a tensor's statistics row is to be read
KIND_FLOAT, KIND_INT, KIND_BOOL, KIND_NONE = "float", "int", "bool", "none"


def finite(value: float) -> float:
    """`value` unchanged: NaN and infinities are written as msprobe (Python's json) writes them,
    `NaN`/`Infinity`/`-Infinity`. Kept for callers written when they needed finite stand-ins."""
    return value


def fill_statistics(entry: dict, kind: str, numel: int, high, low, total, norm) -> None:
    """Write Max/Min/Mean/Norm from a row computed on the device (`total` is the sum of elements)."""
    if kind == KIND_NONE or numel == 0:
        return
    if kind == KIND_BOOL:
        entry[MAX], entry[MIN] = bool(high), bool(low)
        return
    if kind == KIND_INT:
        entry[MAX], entry[MIN] = int(high), int(low)
        if not entry[SHAPE]:
            entry[MEAN], entry[NORM] = float(high), float(abs(high))  # a 0-d integer: its value
        return
    entry[MAX], entry[MIN] = high, low
    entry[MEAN] = total / numel
    entry[NORM] = norm


def hash_text(value: int) -> str:
    """Our content hash as 16 hex digits."""
    return f"{value & 0xFFFFFFFFFFFFFFFF:016x}"


def md5_text(crc: int) -> str:
    """msprobe's `md5` field: the CRC32 of the tensor's raw bytes as 8 hex digits."""
    return f"{crc & 0xFFFFFFFF:08x}"

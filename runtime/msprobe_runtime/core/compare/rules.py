"""`Result` (pass / warning / error) and `Err_message` of every row, by msprobe 26.x's checkers, vectorised.

msprobe judges each API or module call (all rows of one record) with a fixed list of checkers per mode
(indicator_analysis/algorithm.py); a row's Result is the worst level any checker gave it and its
Err_message the JSON list of their messages. See docs/compare-rules.md for each rule and threshold.
Here every checker is a handful of array operations over all rows, with per-record maxima and minima
taken by `reduceat` over the (contiguous) rows of each record.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np
import pandas as pd

from msprobe_runtime.core.compare.statistics import VALUE, Coded
from msprobe_runtime.core.compare.table import NUMBER, OUTPUT, DumpTable

PASS, WARNING, ERROR = 0, 1, 2
LEVEL_TEXT = ("pass", "warning", "error")
# message id -> text (the level is its prefix)
MESSAGES = (
    "error: There is nan/inf/-inf in the maximum or minimum value of NPU.",
    "error: The NormRelativeErr of output is greater than 0.5.",
    "error: The input/parameters of One Thousandth Err Ratio > 0.9 while the output < 0.6.",
    "error: The Required_Grad of NPU and Bench are inconsistent",
    "error: The scalar parameters of NPU and Bench are inconsistent.",
    "error: The dtype of NPU and Bench are inconsistent.",
    "error: The shape of NPU and Bench are inconsistent.",
    "warning: The norm relative error of output is 10 times that of input.",
    "warning: The input/parameters of Cosine > 0.9, and input/parameters - output > 0.1",
    "error: The CRC-32 value of NPU differs from that of the bench.",
    "warning: The parameter of NPU does not match the bench.",
    "error: The content hash of NPU differs from that of the bench.",
    "warning: No bench data matched.",
)
INF_NAN, RELATIVE_ERR, THOUSANDTH_ERR, REQUIRES_GRAD, PARAMETERS, DTYPE, SHAPE = range(7)
RELATIVE_WARN, COSINE_WARN, CRC32_ERR, CRC32_UNMATCHED, HASH_ERR, NO_BENCH = range(7, 13)
_LEVELS = np.array([ERROR if text.startswith("error") else WARNING for text in MESSAGES], dtype=np.int8)
# msprobe's ApiIndicatorCalculator ignore sets, by the API name (second part of the record name)
ALL_IGNORE = frozenset({"empty", "empty_like", "numpy", "to", "__setitem__", "empty_with_format",
                        "new_empty_strided", "new_empty", "empty_strided"})
INPUT_IGNORE = frozenset({"_reduce_scatter_base", "_all_gather_base", "all_to_all_single", "batch_isend_irecv"})


@dataclass
class Rows:
    """What the checkers read, one entry per target row."""

    target: DumpTable
    golden: DumpTable
    partner: np.ndarray  # golden row or -1
    max_equal: np.ndarray | None = None  # statistics: the Max statistic is equal
    norm_relative: Coded | None = None  # statistics: NormRelativeErr
    thousandth: np.ndarray | None = None  # tensor: One Thousandth Err Ratio (NaN when not a number)
    cosine: np.ndarray | None = None  # tensor: Cosine (NaN when not a number)


class Segments:
    """The rows of each record (contiguous in a DumpTable) as reduceat segments."""

    def __init__(self, record: np.ndarray, records: int):
        self.record = record
        self.records = records
        self.starts = np.flatnonzero(np.r_[True, record[1:] != record[:-1]]) if len(record) else np.zeros(0, int)
        self.ids = record[self.starts]

    def reduce(self, ufunc, values: np.ndarray, default) -> np.ndarray:
        """Per record: `ufunc` over its rows' `values` (`default` for records without rows)."""
        result = np.full(self.records, default, dtype=np.result_type(values, type(default)))
        if len(self.starts):
            result[self.ids] = ufunc.reduceat(values, self.starts)
        return result


def judge(rows: Rows, mode: str) -> tuple[np.ndarray, np.ndarray]:
    """(level per row, message bit mask per row) by msprobe's checkers for `mode`."""
    target, golden, partner = rows.target, rows.golden, rows.partner
    count = len(target)
    bits = np.zeros(count, dtype=np.int32)
    matched = partner >= 0
    other = np.where(matched, partner, 0)
    output = target.state == OUTPUT
    segments = Segments(target.row_record, len(target.records))
    all_ignored, input_ignored = _ignored(target, segments, output)
    checked = ~all_ignored[target.row_record] & (~input_ignored[target.row_record] | output)
    judged_record = ~(all_ignored | input_ignored)
    has_output = segments.reduce(np.maximum, output, False)
    first_output = segments.reduce(np.minimum, np.where(output, np.arange(count), count), count)

    def mark(mask: np.ndarray, message: int) -> None:
        bits[mask] |= 1 << message

    def mark_first_output(records: np.ndarray, message: int) -> None:
        chosen = first_output[records & judged_record & has_output]
        bits[chosen[chosen < count]] |= 1 << message

    if mode == "md5":
        t_digest = np.asarray(target.digest, dtype=object)
        g_digest = np.where(matched, np.asarray(golden.digest, dtype=object)[other], None)
        differs = checked & (t_digest != g_digest)
        missing = pd.isna(t_digest) | pd.isna(g_digest) | ~matched
        mark(differs & missing, CRC32_UNMATCHED)
        mark(differs & ~missing, CRC32_ERR)
        return _levels(bits), bits
    mark(~matched, NO_BENCH)
    mark(checked & _nonfinite_max_min(target, np.arange(count)) & ~(matched & _nonfinite_max_min(golden, other)),
         INF_NAN)
    if mode == "tensor":
        _ratio_checkers(rows, segments, output, mark_first_output)
    else:
        _relative_checkers(rows, segments, output, checked, judged_record, mark, mark_first_output)
    t_req, g_req = target.requires_grad, np.where(matched, golden.requires_grad[other], -1)
    mark(checked & matched & (t_req >= 0) & (g_req >= 0) & (t_req != g_req), REQUIRES_GRAD)
    t_dtype = np.asarray(target.dtype, dtype=object)
    g_dtype = np.asarray(golden.dtype, dtype=object)[other]
    if rows.max_equal is not None:
        scalar = (np.asarray(target.shape, dtype=object) == "[]") & _python_type(t_dtype) & _python_type(g_dtype)
        mark(judged_record[target.row_record] & ~output & matched & scalar & ~rows.max_equal, PARAMETERS)
    fused = np.array([("qkv" in name or "gate_up" in name) for name in golden.records], dtype=bool)
    mark(checked & matched & ~fused[golden.row_record[other]] & (t_dtype != g_dtype), DTYPE)
    t_shape, g_shape = np.asarray(target.shape, dtype=object), np.asarray(golden.shape, dtype=object)[other]
    mark(checked & matched & (t_shape != g_shape), SHAPE)
    if mode == "hash":
        t_digest, g_digest = np.asarray(target.digest, dtype=object), np.asarray(golden.digest, dtype=object)[other]
        mark(checked & matched & (t_digest != g_digest), HASH_ERR)
    return _levels(bits), bits


def _python_type(dtypes: np.ndarray) -> np.ndarray:
    """Rows whose dtype names a Python type ("<class 'int'>"), tested once per distinct dtype."""
    codes, uniques = pd.factorize(dtypes, use_na_sentinel=False)
    return np.array([isinstance(name, str) and "class" in name for name in uniques], dtype=bool)[codes]


def _ignored(target: DumpTable, segments: Segments, output: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per record: msprobe ignores every row (ALL_IGNORE) or the inputs (INPUT_IGNORE) of some APIs;
    it looks at the API name only when the record has an input row."""
    names = target.api_names
    has_input = segments.reduce(np.maximum, ~output, False)
    return (np.fromiter((name in ALL_IGNORE for name in names), bool, len(names)) & has_input,
            np.fromiter((name in INPUT_IGNORE for name in names), bool, len(names)) & has_input)


def _nonfinite_max_min(table: DumpTable, rows: np.ndarray) -> np.ndarray:
    values, kinds = table.stats[rows, :2], table.stat_kind[rows, :2]
    return ((kinds == NUMBER) & ~np.isfinite(values)).any(axis=1)


def _relative_checkers(rows: Rows, segments: Segments, output, checked, judged_record, mark, mark_first_output) -> None:
    """RelativeErrChecker and RelativeWarnChecker on NormRelativeErr (fractions of the % values)."""
    relative = rows.norm_relative
    fraction = relative.fraction()
    numeric = relative.code == VALUE
    in_max = segments.reduce(np.maximum, np.where(numeric & ~output, fraction, 0.0), 0.0)
    out_max = segments.reduce(np.maximum, np.where(numeric & output, fraction, 0.0), 0.0)
    record = rows.target.row_record
    with np.errstate(invalid="ignore"):
        too_large = np.abs(fraction) > 0.5
    mark(judged_record[record] & (in_max[record] < 0.1) & output & too_large, RELATIVE_ERR)
    with np.errstate(divide="ignore", invalid="ignore"):
        warn = np.where(in_max == 0, out_max > 0.1, out_max / np.where(in_max == 0, 1, in_max) > 10)
    mark_first_output(warn, RELATIVE_WARN)


def _ratio_checkers(rows: Rows, segments: Segments, output, mark_first_output) -> None:
    """OneThousandthErrChecker and CosineWarnChecker (tensor mode): minima over inputs and outputs."""
    def minimum(values: np.ndarray, where: np.ndarray) -> np.ndarray:
        return segments.reduce(np.minimum, np.where(where & ~np.isnan(values), values, 1.0), 1.0)

    in_ratio, out_ratio = minimum(rows.thousandth, ~output), minimum(rows.thousandth, output)
    mark_first_output((in_ratio > 0.9) & (out_ratio < 0.1), THOUSANDTH_ERR)
    in_cosine, out_cosine = minimum(rows.cosine, ~output), minimum(rows.cosine, output)
    mark_first_output((in_cosine > 0.9) & (in_cosine - out_cosine > 0.1), COSINE_WARN)


def _levels(bits: np.ndarray) -> np.ndarray:
    levels = np.zeros(len(bits), dtype=np.int8)
    for message, level in enumerate(_LEVELS):
        levels = np.where(bits & (1 << message), np.maximum(levels, level), levels)
    return levels


def message_texts(bits: np.ndarray) -> np.ndarray:
    """Err_message cells: the JSON list of each row's messages (computed once per distinct mask)."""
    unique, inverse = np.unique(bits, return_inverse=True)
    texts = [json.dumps([MESSAGES[m] for m in range(len(MESSAGES)) if mask & (1 << m)]) for mask in unique.tolist()]
    return np.asarray(texts, dtype=object)[inverse]

"""Statistics-mode metrics, vectorised: `Max diff` .. `L2norm diff` and the four relative errors.

msprobe's rules (CalcStatsDiff): equal values (compared as text) give "0" and "0"; two numbers give
`target - golden` and `|diff / golden| * 100` written with "%" ("inf" when golden is 0); NaN against a
number or an infinity gives "Nan"; infinities give "inf"/"-inf"; an unmatched row gives "N/A"; a
device string or any other text against anything else gives "Diff". Cells are kept as a float array plus
a small code array (which text, if any), and turned into text only when a report is written
(report.py).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from msprobe_runtime.core.compare.table import NULL, NUMBER, TEXT, DumpTable

DIFF_COLUMNS = ("Max diff", "Min diff", "Mean diff", "L2norm diff")
RELATIVE_COLUMNS = ("MaxRelativeErr", "MinRelativeErr", "MeanRelativeErr", "NormRelativeErr")
# cell codes: 0 means "the number in `value`"; the others name a text
VALUE, ZERO, NAN, INF, NEG_INF, NA, DIFF = range(7)
CODE_TEXT = (None, "0", "Nan", "inf", "-inf", "N/A", "Diff")
# value classes (msprobe's ValType)
_NUM, _NAN, _INF, _NEG_INF, _DEVICE, _NA, _OTHER = range(7)


@dataclass
class Coded:
    """A column of numbers and texts: `value` where `code` is VALUE, else CODE_TEXT[code]."""

    value: np.ndarray
    code: np.ndarray
    percent: bool = False

    def fraction(self) -> np.ndarray:
        """As msprobe's str2float reads a relative error: a fraction; "inf" is inf, other texts 0 or NaN."""
        result = np.where(self.code == VALUE, self.value / 100.0 if self.percent else self.value, 0.0)
        result[self.code == INF] = np.inf
        result[self.code == NEG_INF] = -np.inf
        result[self.code == NAN] = np.nan
        return result


@dataclass
class StatisticsDiff:
    """The eight statistics columns plus which statistics are equal (for divergence)."""

    diffs: list[Coded]
    relatives: list[Coded]
    equal: np.ndarray  # bool [rows, 4]


def _classes(values: np.ndarray, kinds: np.ndarray, texts: list[str | None]) -> np.ndarray:
    """msprobe's value class of each cell of one statistic."""
    classes = np.full(len(values), _OTHER, dtype=np.int8)
    number = kinds == NUMBER
    classes[number & np.isnan(values)] = _NAN
    classes[number & (values == np.inf)] = _INF
    classes[number & (values == -np.inf)] = _NEG_INF
    classes[number & np.isfinite(values)] = _NUM
    for row in np.flatnonzero(kinds == TEXT):
        text = texts[row].lower()
        if any(device in text for device in ("npu", "cpu", "cuda")):
            classes[row] = _DEVICE
    return classes


def _texts(table: DumpTable, rows: np.ndarray, column: int) -> list[str | None]:
    """The text of each TEXT cell of `column` at `rows` (None elsewhere), without a loop over numbers."""
    texts: list[str | None] = [None] * len(rows)
    kinds = table.stat_kind[rows, column]
    for position in np.flatnonzero(kinds == TEXT):
        texts[position] = table.stat_text[(int(rows[position]), column)]
    return texts


def statistics_diff(target: DumpTable, golden: DumpTable, partner: np.ndarray) -> StatisticsDiff:
    """Compare the statistics of every target row with its golden partner row (`partner`, -1: none).

    Both tables must have rows (the caller rejects empty dumps)."""
    rows = np.arange(len(target))
    matched = partner >= 0
    golden_rows = np.where(matched, partner, 0)
    diffs, relatives, equal_columns = [], [], []
    for column in range(4):
        t_value, g_value = target.stats[:, column], golden.stats[golden_rows, column]
        t_kind, g_kind = target.stat_kind[:, column], golden.stat_kind[golden_rows, column]
        t_text, g_text = _texts(target, rows, column), _texts(golden, golden_rows, column)
        equal = _equal(t_value, g_value, t_kind, g_kind, t_text, g_text) & matched
        t_class = _classes(t_value, t_kind, t_text)
        g_class = np.where(matched, _classes(g_value, g_kind, g_text), _NA)
        diff, relative = _differences(t_value, g_value, t_class, g_class, equal)
        diffs.append(diff)
        relatives.append(relative)
        equal_columns.append(equal)
    return StatisticsDiff(diffs, relatives, np.stack(equal_columns, axis=1))


def _equal(t_value, g_value, t_kind, g_kind, t_text, g_text) -> np.ndarray:
    both_numbers = (t_kind == NUMBER) & (g_kind == NUMBER)
    with np.errstate(invalid="ignore"):
        equal = both_numbers & ((t_value == g_value) | (np.isnan(t_value) & np.isnan(g_value)))
    equal |= (t_kind == NULL) & (g_kind == NULL)
    for row in np.flatnonzero((t_kind == TEXT) & (g_kind == TEXT)):
        equal[row] = t_text[row] == g_text[row]
    return equal


def _differences(t_value, g_value, t_class, g_class, equal) -> tuple[Coded, Coded]:
    count = len(t_value)
    diff = Coded(np.zeros(count), np.full(count, NA, dtype=np.int8))
    relative = Coded(np.zeros(count), np.full(count, NA, dtype=np.int8), percent=True)
    unequal = ~equal
    numbers = unequal & (t_class == _NUM) & (g_class == _NUM)
    with np.errstate(divide="ignore", invalid="ignore"):
        diff.value[numbers] = t_value[numbers] - g_value[numbers]
        relative.value[numbers] = np.abs(diff.value[numbers] / g_value[numbers] * 100)
    diff.code[numbers] = VALUE
    relative.code[numbers] = np.where(g_value[numbers] == 0, INF, VALUE)
    numeric = (_NUM, _NAN, _INF, _NEG_INF)
    t_numeric, g_numeric = np.isin(t_class, numeric), np.isin(g_class, numeric)
    rules = [
        (unequal & ((t_class == _NAN) & g_numeric | (g_class == _NAN) & t_numeric), NAN),
        (unequal & (t_class == _INF) & np.isin(g_class, (_NUM, _NEG_INF)), INF),
        (unequal & (t_class == _NEG_INF) & np.isin(g_class, (_NUM, _INF)), NEG_INF),
        (unequal & (t_class == _NUM) & (g_class == _INF), NEG_INF),
        (unequal & (t_class == _NUM) & (g_class == _NEG_INF), INF),
        (unequal & ((t_class == _DEVICE) | (t_class == _OTHER) | (g_class == _DEVICE) | (g_class == _OTHER))
         & (t_class != _NA) & (g_class != _NA) & ~((t_class == _DEVICE) & (g_class == _DEVICE)), DIFF),
    ]
    for mask, code in rules:
        diff.code[mask] = code
        relative.code[mask] = code
    diff.code[equal] = ZERO
    relative.code[equal] = ZERO
    return diff, relative

"""Pairing the records and rows of two dumps: exact (msprobe's) and fuzzy (API name + call order).

Exact: records pair by full name, with backward call numbers recounted in backward order (msprobe's
`update_backward_call`, so recomputation does not shift them); rows pair by name within paired records.
Fuzzy (`--fuzzy-match`): records pair by API/module name without the call number, aligned in execution
order by a minimal edit script (Myers' diff), so an inserted or missing call shifts nothing after it.
Rows whose dtypes differ (other than between float types) are left unpaired, as in msprobe.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from msprobe_runtime.core.compare.table import OUTPUT, DumpTable

_DIRECTIONS = ("forward", "backward")
_FLOAT_GROUPS = ({"Float16", "Float32", "Float64", "BFloat16"},
                 {"torch.float16", "torch.float32", "torch.float64", "torch.bfloat16"})
MAX_EDITS = 2000  # beyond this many inserted/missing calls, fuzzy matching falls back to call order


def split_name(name: str) -> tuple[str, str, str]:
    """msprobe's (name without call number, call+direction, direction); direction '' if not a record name."""
    parts = name.split(".")
    last, second = parts[-1], parts[-2] if len(parts) > 1 else ""
    if "parameters_grad" in (last, second):
        return ".".join(parts[:-1]), "parameters_grad", "parameters_grad"
    for direction in _DIRECTIONS:
        if direction in (last, second):
            return ".".join(parts[:-2]), f"{second}.{last}", direction
    return name, "", ""


def exact_keys(records: list[str]) -> list[str]:
    """Record keys for exact matching: the name, with backward call numbers recounted in order."""
    counts: dict[str, int] = {}
    keys = []
    for name in records:
        if "backward" not in name:  # most calls: no need to split the name
            keys.append(name)
            continue
        stem, call, direction = split_name(name)
        if direction != "backward":
            keys.append(name)
            continue
        order = counts.get(stem, 0)
        counts[stem] = order + 1
        head, _, tail = call.partition(".")
        call = f"{order}.{tail}" if head.isdigit() else f"{head}.{order}"
        keys.append(f"{stem}.{call}")
    return keys


def fuzzy_keys(records: list[str]) -> list[str]:
    """Record keys for fuzzy matching: the API/module name and direction, without the call number."""
    keys = []
    for name in records:
        stem, _, direction = split_name(name)
        keys.append(f"{stem}.{direction}" if direction else name)
    return keys


def match_records(target: DumpTable, golden: DumpTable, fuzzy: bool) -> np.ndarray:
    """For each target record, the index of its golden record, or -1.

    Fuzzy: calls are first aligned by name and input content (identical inputs anchor the pairing, so
    an inserted call of the same API is recognised), then the stretches between anchors by name alone."""
    if not fuzzy:
        return _first_positions(pd.Index(exact_keys(golden.records))).get_indexer(exact_keys(target.records))
    names = fuzzy_keys(target.records) + fuzzy_keys(golden.records)
    name_codes, _ = pd.factorize(pd.Index(names))
    signatures = np.concatenate([input_signatures(target), input_signatures(golden)])
    content_codes, _ = pd.factorize(pd.MultiIndex.from_arrays([name_codes, signatures]))
    count = len(target.records)
    anchors = align(content_codes[:count], content_codes[count:], fallback=False)
    return _fill_gaps(anchors, name_codes[:count], name_codes[count:])


def input_signatures(table: DumpTable) -> np.ndarray:
    """Per record, a 64-bit digest of its inputs (statistics, hashes, argument names); 0 without inputs."""
    frame = pd.DataFrame({"max": table.stats[:, 0], "min": table.stats[:, 1], "mean": table.stats[:, 2],
                          "norm": table.stats[:, 3], "digest": table.digest.astype(str), "suffix": table.row_suffix})
    row_hash = np.where(table.state < OUTPUT, pd.util.hash_pandas_object(frame, index=False).to_numpy(), np.uint64(0))
    signatures = np.zeros(len(table.records), dtype=np.uint64)
    if len(row_hash):
        starts = np.flatnonzero(np.r_[True, table.row_record[1:] != table.row_record[:-1]])
        signatures[table.row_record[starts]] = np.bitwise_xor.reduceat(row_hash, starts)
    return signatures


def _fill_gaps(anchors: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Align by name the unpaired stretches between consecutive anchored pairs."""
    result = anchors.copy()
    paired = np.flatnonzero(anchors >= 0)
    bounds_a = [-1, *paired.tolist(), len(a)]
    bounds_b = [-1, *anchors[paired].tolist(), len(b)]
    for low_a, high_a, low_b, high_b in zip(bounds_a, bounds_a[1:], bounds_b, bounds_b[1:], strict=False):
        if high_a - low_a > 1 and high_b - low_b > 1:
            inner = align(a[low_a + 1:high_a], b[low_b + 1:high_b])
            found = inner >= 0
            result[low_a + 1:high_a][found] = inner[found] + low_b + 1
    return result


def _first_positions(index: pd.Index) -> pd.Index:
    """An index that maps each key to its first position (duplicates after it are left unmatched)."""
    first = ~index.duplicated(keep="first")
    keys = index[first]
    return _Positions(keys, np.flatnonzero(first))


class _Positions:
    """get_indexer over unique keys, answering positions in the original (duplicated) index."""

    def __init__(self, keys: pd.Index, positions: np.ndarray):
        self.keys, self.positions = keys, positions

    def get_indexer(self, wanted) -> np.ndarray:
        found = self.keys.get_indexer(wanted)
        return np.where(found >= 0, self.positions[found], -1)


def align(a: np.ndarray, b: np.ndarray, fallback: bool = True) -> np.ndarray:
    """For each element of `a`, the index of its partner in `b` (or -1) in a longest common subsequence;
    past MAX_EDITS differences, the middle pairs by call order (`fallback`) or stays unpaired."""
    result = np.full(len(a), -1, dtype=np.int64)
    shortest = min(len(a), len(b))
    same = a[:shortest] == b[:shortest]
    prefix = shortest if same.all() else int(np.argmin(same))
    result[:prefix] = np.arange(prefix)
    rest = shortest - prefix
    tail_same = a[len(a) - rest:][::-1] == b[len(b) - rest:][::-1]
    suffix = rest if tail_same.all() else int(np.argmin(tail_same))
    if suffix:
        result[len(a) - suffix:] = np.arange(len(b) - suffix, len(b))
    middle_a, middle_b = a[prefix:len(a) - suffix], b[prefix:len(b) - suffix]
    pairs = _myers(middle_a.tolist(), middle_b.tolist())
    if pairs is None:
        pairs = _by_call_order(middle_a, middle_b) if fallback else []
    for i, j in pairs:
        result[prefix + i] = prefix + j
    return result


def _myers(a: list, b: list) -> list[tuple[int, int]] | None:
    """Matched (i, j) pairs of a shortest edit script from `a` to `b`; None past MAX_EDITS edits."""
    n, m = len(a), len(b)
    if not n or not m:
        return []
    offset = n + m + 1
    frontier = [0] * (2 * offset + 2)
    trace = []  # per edit count, the frontier it started from (diagonals -edits-1 .. edits+1)
    for edits in range(min(n + m, MAX_EDITS) + 1):
        trace.append(frontier[offset - edits - 1:offset + edits + 2])
        for k in range(-edits, edits + 1, 2):
            if k == -edits or (k != edits and frontier[offset + k - 1] < frontier[offset + k + 1]):
                x = frontier[offset + k + 1]
            else:
                x = frontier[offset + k - 1] + 1
            y = x - k
            while x < n and y < m and a[x] == b[y]:
                x += 1
                y += 1
            frontier[offset + k] = x
            if x >= n and y >= m:
                return _backtrack(trace, n, m)
    return None


def _backtrack(trace: list[list[int]], n: int, m: int) -> list[tuple[int, int]]:
    """Walk the saved frontiers back from (n, m), collecting the diagonal (matching) moves."""
    pairs = []
    x, y = n, m
    for depth in range(len(trace) - 1, -1, -1):
        saved = trace[depth]
        k = x - y
        down = k == -depth or (k != depth and saved[k + depth] < saved[k + depth + 2])
        previous_k = k + 1 if down else k - 1
        previous_x = saved[previous_k + depth + 1]
        previous_y = previous_x - previous_k
        while x > previous_x and y > previous_y:
            x -= 1
            y -= 1
            pairs.append((x, y))
        x, y = previous_x, previous_y
    pairs.reverse()
    return pairs


def _by_call_order(a: np.ndarray, b: np.ndarray) -> list[tuple[int, int]]:
    """The n-th call of each name in `a` with the n-th call of the same name in `b`."""
    frame_a = pd.DataFrame({"key": a, "n": pd.Series(a).groupby(a).cumcount(), "i": np.arange(len(a))})
    frame_b = pd.DataFrame({"key": b, "n": pd.Series(b).groupby(b).cumcount(), "j": np.arange(len(b))})
    merged = frame_a.merge(frame_b, on=["key", "n"]).sort_values("i")
    return list(zip(merged["i"].tolist(), merged["j"].tolist(), strict=True))


def match_rows(target: DumpTable, golden: DumpTable, record_match: np.ndarray) -> np.ndarray:
    """For each target row, the index of its golden row (same suffix in the paired record), or -1."""
    suffix_code = {suffix: code for code, suffix in enumerate(golden.suffixes)}
    target_suffix = np.array([suffix_code.get(s, -1) for s in target.suffixes], dtype=np.int64)
    width = max(len(golden.suffixes), 1)
    golden_keys = golden.row_record.astype(np.int64) * width + golden.row_suffix
    partner = record_match[target.row_record]
    suffix = target_suffix[target.row_suffix] if len(target_suffix) else np.zeros(0, dtype=np.int64)
    wanted = np.where((partner >= 0) & (suffix >= 0), partner * width + suffix, -1)
    order = np.argsort(golden_keys, kind="stable")
    sorted_keys = golden_keys[order]
    position = np.searchsorted(sorted_keys, wanted)
    position = np.minimum(position, max(len(sorted_keys) - 1, 0))
    found = (wanted >= 0) & (len(sorted_keys) > 0)
    if len(sorted_keys):
        found &= sorted_keys[position] == wanted
    rows = np.where(found, order[position] if len(order) else -1, -1)
    return _compatible_dtypes(target, golden, rows)


def _compatible_dtypes(target: DumpTable, golden: DumpTable, rows: np.ndarray) -> np.ndarray:
    """Unpair rows whose dtypes differ, unless both are float types (msprobe's gen_dtype_condition)."""
    paired = np.flatnonzero(rows >= 0)
    if not len(paired):
        return rows
    target_dtype = pd.Series(target.dtype, dtype=object).to_numpy()[paired]
    golden_dtype = pd.Series(golden.dtype, dtype=object).to_numpy()[rows[paired]]
    differ = np.flatnonzero(target_dtype != golden_dtype)  # most rows agree: test the float groups on the others
    if not len(differ):
        return rows
    ok = np.zeros(len(differ), dtype=bool)
    for group in _FLOAT_GROUPS:
        members = pd.Series(list(group))
        ok |= (pd.Series(target_dtype[differ]).isin(members).to_numpy()
               & pd.Series(golden_dtype[differ]).isin(members).to_numpy())
    rows = rows.copy()
    rows[paired[differ[~ok]]] = -1
    return rows

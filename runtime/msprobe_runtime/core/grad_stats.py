"""The gradient probe's statistics of gradients in host memory, framework-free: msprobe's CSV columns.

The gradients come joined in one flat float32 or float64 array. With the compiled core._hoststats the
whole array is described in one call that releases the GIL (a writer thread that summarises a step then
barely competes with the training thread for it); NumPy describes each gradient otherwise.
"""

from __future__ import annotations

import numpy as np

try:  # compiled when the package was built with a C compiler (_hoststats.c)
    from msprobe_runtime.core import _hoststats
except ImportError:  # pragma: no cover - exercised only without a C compiler
    _hoststats = None

_CODES = {np.dtype(np.float32): 0, np.dtype(np.float64): 1}  # _hoststats.segments' dtype codes


def statistics(joined: np.ndarray, sizes: list[int], bounds: tuple | None) -> np.ndarray:
    """float64 [len(sizes), 3 (+ len(bounds) + 2)] for the gradients joined in `joined`, in order: max and
    min (as float32 values, msprobe's), the L2 norm, and with `bounds` (L2) the element count per interval
    they cut (msprobe's bucketize intervals, NaN in the last) and the count of zeros. An empty gradient
    has NaN max and min."""
    if _hoststats is not None and joined.dtype in _CODES:
        raw = _hoststats.segments(np.ascontiguousarray(joined), _CODES[joined.dtype], sizes, bounds)
        rows = np.frombuffer(raw, dtype=np.float64).reshape(len(sizes), -1).copy()
    else:
        offsets = np.cumsum(sizes)[:-1] if sizes else []
        rows = np.asarray([_row(flat, bounds) for flat in np.split(joined, offsets)], dtype=np.float64)
        rows = rows.reshape(len(sizes), -1)
    rows[:, :3] = rows[:, :3].astype(np.float32)
    return rows


def _row(flat: np.ndarray, bounds: tuple | None) -> list[float]:
    if not flat.size:
        row = [np.nan, np.nan, 0.0]
    else:
        row = [float(flat.max()), float(flat.min()), float(np.sqrt(np.square(flat, dtype=np.float64).sum()))]
    if bounds is not None:
        at_most = [int(np.count_nonzero(flat <= flat.dtype.type(bound))) for bound in bounds]
        row += [*np.diff([0, *at_most, flat.size]).tolist(), int(np.count_nonzero(flat == 0))]
    return row

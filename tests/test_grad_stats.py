"""core.grad_stats, the gradient probe's host statistics: compiled and NumPy forms against torch's reductions."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from extension_support import extension_or_fallback
from msprobe_runtime.core import grad_stats

BOUNDS = (-1.0, 0.0, 0.1, 1.0)  # 0.1 is not a float32: compared as the data's type, as torch compares


def joined_gradients(dtype) -> tuple[np.ndarray, list[int]]:
    """Gradients of awkward sizes (empty, one element, a non-multiple of the C lanes) with zeros,
    infinities, a NaN and the float32 value of 0.1, joined."""
    rng = np.random.default_rng(0)
    parts = [rng.standard_normal(size).astype(dtype) for size in (0, 1, 37, 1000, 3)]
    parts[2][:5] = [0, 0, np.float32(0.1), np.inf, -np.inf]
    parts[4][1] = np.nan
    return np.concatenate(parts), [part.size for part in parts]


def torch_rows(joined: np.ndarray, sizes: list[int], bounds) -> np.ndarray:
    """The same rows from torch's reductions (the probe's device path)."""
    rows = []
    for grad in torch.from_numpy(joined).split(sizes):
        if not grad.numel():
            row = [np.nan, np.nan, 0.0]
        else:
            row = [grad.max().float().item(), grad.min().float().item(), grad.double().norm().float().item()]
        if bounds is not None:
            buckets = torch.bucketize(grad, torch.tensor(bounds, dtype=grad.dtype))
            row += [(buckets == i).sum().item() for i in range(len(bounds) + 1)] + [(grad == 0).sum().item()]
        rows.append(row)
    return np.asarray(rows, dtype=np.float64)


@pytest.fixture(params=["compiled", "numpy"])
def describe(request, monkeypatch):
    """grad_stats.statistics as built (C) and with its NumPy fallback."""
    extension_or_fallback(request, monkeypatch, grad_stats, "_hoststats", "numpy")
    return grad_stats.statistics


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("bounds", [None, BOUNDS])
def test_statistics_match_torchs_reductions(describe, dtype, bounds):
    joined, sizes = joined_gradients(dtype)
    got, want = describe(joined, sizes, bounds), torch_rows(joined, sizes, bounds)
    assert got.shape == want.shape == (len(sizes), 3 + (len(bounds) + 2 if bounds else 0))
    np.testing.assert_array_equal(np.delete(got, 2, axis=1), np.delete(want, 2, axis=1))
    np.testing.assert_allclose(got[:, 2], want[:, 2], rtol=1e-6)
    assert np.isnan(got[4, :3]).all()  # a NaN makes max, min and norm NaN
    if bounds:
        assert got[4, 3 + len(bounds)] >= 1  # ... and counts in the last interval
        assert got[2, -1] == 2 and got[2, 3 + BOUNDS.index(0.1)] >= 1  # zeros; float32(0.1) <= 0.1 as float32


def test_statistics_reject_sizes_beyond_the_data():
    if grad_stats._hoststats is None:
        pytest.skip("the _hoststats extension was not built (no C compiler)")
    with pytest.raises(ValueError, match="more than the buffer holds"):
        grad_stats.statistics(np.zeros(3, np.float32), [2, 2], None)

"""Tensor-mode metrics from the saved tensors, as msprobe computes them (npy_compare + builtin algorithms).

`Cosine`, `EucDist`, `MaxAbsErr`, `MaxRelativeErr`, `One Thousandth Err Ratio` and `Five Thousandths Err
Ratio` of each paired row. Like msprobe, tensors are squeezed; empty tensors, shape mismatches, missing
files and unpaired rows give "unsupported" (or "shape unmatched"); NaN/Inf at the same positions on both
sides count as 0, at different positions every metric is "N/A"; 0-d tensors get MaxAbsErr and
MaxRelativeErr only. Each pair needs its two files read, so this runs per pair, with NumPy inside.

Our runtime saves `.npy`; msprobe 26.x saves PyTorch `.pt` files, read (only then) with
`torch.load(weights_only=True)`: no pickled code runs.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from msprobe_runtime.core.compare import parallel
from msprobe_runtime.core.compare.table import DumpTable

COLUMNS = ("Cosine", "EucDist", "MaxAbsErr", "MaxRelativeErr", "One Thousandth Err Ratio",
           "Five Thousandths Err Ratio")
UNSUPPORTED, SHAPE_UNMATCH, NA, NAN = "unsupported", "shape unmatched", "N/A", "Nan"
# Err_message of a tensor pair without data to compare (then its statistics decide): none named, or unreadable
NO_DATA, UNREADABLE = "No real data.", "Dump file not readable"
_FLOAT_EPSILON = np.finfo(float).eps
_SCALAR_MESSAGE = ("This is type of 0-d tensor, can not calculate 'Cosine', 'EucDist', "
                   "'One Thousandth Err Ratio' and 'Five Thousandths Err Ratio'. ")


def data_folder(table: DumpTable) -> Path:
    """Where a dump's tensor files are: `dump_tensor_data` beside dump.json, else the header's folder."""
    beside = table.path.parent / "dump_tensor_data"
    if beside.is_dir() or not table.header.get("dump_data_dir"):
        return beside
    return Path(table.header["dump_data_dir"])


def load_tensor(path: Path) -> np.ndarray:
    """A saved tensor as a NumPy array (bfloat16 and float8 as float32), squeezed as msprobe does."""
    if path.suffix == ".pt":
        import torch  # msprobe's PyTorch dumps only

        value = torch.load(path, map_location="cpu", weights_only=True).detach()
        if value.dtype == torch.bfloat16 or "float8" in str(value.dtype):
            value = value.float()
        array = value.numpy()
    else:
        array = np.load(path, allow_pickle=False)
    return np.squeeze(array)


def tensor_metrics(target: DumpTable, golden: DumpTable, partner: np.ndarray, progress=None) -> tuple[list[np.ndarray], list[str]]:
    """The six metric columns (object arrays) and an error message per target row. Reading the files is
    most of the work: with many rows the second half is done by a forked process at the same time."""
    count = len(target)
    half = count // 2 if count >= parallel.PARALLEL_TENSOR_ROWS and parallel.available() else count
    second = parallel.Beside(_metrics, target, golden, partner, half, count, None) if half < count else None
    try:
        columns, messages = _metrics(target, golden, partner, 0, half, progress)
    except BaseException:
        if second is not None:
            second.cancel()
        raise
    if second is not None:
        rest_columns, rest_messages = second.result()
        columns = [np.concatenate([first, rest]) for first, rest in zip(columns, rest_columns, strict=True)]
        messages += rest_messages
        if progress is not None:
            progress(count - half)
    return columns, messages


def _metrics(target: DumpTable, golden: DumpTable, partner: np.ndarray, start: int, stop: int,
             progress=None) -> tuple[list[np.ndarray], list[str]]:
    """`tensor_metrics` of rows [start, stop)."""
    columns = [np.full(stop - start, UNSUPPORTED, dtype=object) for _ in COLUMNS]
    messages = [""] * (stop - start)
    target_dir, golden_dir = data_folder(target), data_folder(golden)
    for row in range(start, stop):
        at = row - start
        if progress is not None and at and at % 256 == 0:
            progress(256)
        other = int(partner[row])
        target_name = target.data_name[row]
        if other < 0:
            messages[at] = "Bench api/module unmatched."
            continue
        golden_name = golden.data_name[other]
        if not target_name or not golden_name:
            messages[at] = NO_DATA if target.is_tensor[row] else ""
            continue
        if not (is_file_name_safe(target_name) and is_file_name_safe(golden_name)):
            messages[at] = "Data file name leaves its folder; not read."
            continue
        try:
            values = load_tensor(target_dir / target_name), load_tensor(golden_dir / golden_name)
        except (OSError, ValueError, RuntimeError) as error:
            messages[at] = f"{UNREADABLE}: {error}"
            continue
        cells, messages[at] = compare_arrays(*values)
        for column, cell in zip(columns, cells, strict=True):
            column[at] = cell
    if progress is not None and (stop - start) % 256:
        progress((stop - start) % 256)
    return columns, messages


def compare_arrays(n_value: np.ndarray, b_value: np.ndarray) -> tuple[list, str]:
    """msprobe's six metrics of one pair of arrays and the message explaining any that are not numbers."""
    if n_value.size == 0:
        return [UNSUPPORTED] * 6, "This is empty data, can not compare."
    if n_value.shape != b_value.shape:
        return [SHAPE_UNMATCH] * 6, "Shape of NPU and bench tensor do not match. Skipped."
    message = ""
    if not n_value.shape:
        message = _SCALAR_MESSAGE
    else:
        n_value, b_value = _zero_matching_nonfinite(n_value, b_value)
        if n_value is None:
            return [NA] * 6, "The position of inf or nan in NPU and bench Tensor do not match."
        if n_value.dtype != b_value.dtype:
            message = "Dtype of NPU and bench tensor do not match."
    results = [_cosine(n_value, b_value), _euclidean(n_value, b_value), _max_abs(n_value, b_value),
               _max_relative(n_value, b_value), _ratio(n_value, b_value, 0.001), _ratio(n_value, b_value, 0.005)]
    cells = [cell for cell, _ in results]
    return cells, message + "".join(text for _, text in results)


def _format(value: float) -> float:
    return float(f"{value:.12f}")


def _zero_matching_nonfinite(n_value, b_value):
    """Set NaN/Inf to 0 when both sides have them at the same places; (None, None) when they differ."""
    try:
        n_float, b_float = n_value.astype(float), b_value.astype(float)
    except (TypeError, ValueError):
        return n_value, b_value
    n_inf, b_inf, n_nan, b_nan = np.isinf(n_float), np.isinf(b_float), np.isnan(n_float), np.isnan(b_float)
    if not (n_inf.any() or n_nan.any() or b_inf.any() or b_nan.any()):
        return n_value, b_value
    if not (np.array_equal(n_inf, b_inf) and np.array_equal(n_nan, b_nan)):
        return None, None
    n_value, b_value = n_value.copy(), b_value.copy()
    n_value[n_inf | n_nan] = 0
    b_value[b_inf | b_nan] = 0
    return n_value, b_value


def _flat(n_value, b_value):
    if not n_value.shape:
        return n_value.astype(float), b_value.astype(float)
    return n_value.reshape(-1).astype(float), b_value.reshape(-1).astype(float)


def _unsupported_shape(n_value, b_value) -> str | None:
    if n_value.ndim == 0 or b_value.ndim == 0:
        return "This is type of 0-d tensor, can not calculate"
    if n_value.size == 1 or b_value.size == 1:
        return "This is a 1-d tensor of length 1."
    return None


def _cosine(n_value, b_value):
    reason = _unsupported_shape(n_value, b_value)
    if reason:
        return UNSUPPORTED, "" if n_value.ndim == 0 else reason
    n_flat, b_flat = _flat(n_value, b_value)
    with np.errstate(divide="ignore", invalid="ignore"):
        n_norm, b_norm = np.linalg.norm(n_flat), np.linalg.norm(b_flat)
        if n_norm <= _FLOAT_EPSILON and b_norm <= _FLOAT_EPSILON:
            return 1.0, ""
        if n_norm <= _FLOAT_EPSILON:
            return NAN, "Cannot compare by Cosine Similarity, All the data is Zero in npu dump data."
        if b_norm <= _FLOAT_EPSILON:
            return NAN, "Cannot compare by Cosine Similarity, All the data is Zero in Bench dump data."
        cosine = np.dot(n_flat, b_flat) / (n_norm * b_norm)
    if np.isnan(cosine):
        return NAN, "Cannot compare by Cosine Similarity, the dump data has NaN."
    result = _format(cosine)
    return (round(result, 6) if result > 0.9999 else result), ""


def _euclidean(n_value, b_value):
    if n_value.ndim == 0 or b_value.ndim == 0:
        return UNSUPPORTED, ""
    n_flat, b_flat = _flat(n_value, b_value)
    return float(np.linalg.norm(n_flat - b_flat, ord=2)), ""


def _max_abs(n_value, b_value):
    n_flat, b_flat = _flat(n_value, b_value)
    value = np.max(np.abs(n_flat - b_flat))
    if np.isnan(value):
        return NAN, "Cannot compare by MaxAbsError, the data contains nan/inf/-inf in dump data."
    return _format(value), ""


def relative_errors(n_value, b_value) -> np.ndarray:
    """|n - b| / |b| per element, with the dtype's epsilon added where b is 0 (msprobe's get_relative_err)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        floats = (np.float16, np.float32, np.float64, np.longdouble)
        n_value = n_value if n_value.dtype.type in floats else n_value.astype(float)
        b_value = b_value if b_value.dtype.type in floats else b_value.astype(float)
        kind = np.result_type(n_value.dtype, b_value.dtype, np.float32)  # dtypes: no value-based casting
        n_copy, b_copy = n_value.astype(kind), b_value.astype(kind)
        zero = b_value == 0
        epsilon = np.finfo(kind).eps
        n_copy[zero] += epsilon
        b_copy[zero] += epsilon
        return np.abs((n_copy - b_copy) / b_copy)


def _max_relative(n_value, b_value):
    value = np.max(np.abs(relative_errors(n_value, b_value)))
    if np.isnan(value):
        return NAN, "Cannot compare by MaxRelativeError, the data contains nan/inf/-inf in dump data."
    return _format(value), ""


def _ratio(n_value, b_value, threshold: float):
    if n_value.ndim == 0 or b_value.ndim == 0:
        return UNSUPPORTED, ""
    errors = relative_errors(n_value, b_value)
    if not errors.size:
        return NAN, ""
    return _format(np.sum(errors < threshold) / errors.size), ""


def is_file_name_safe(name: str) -> bool:
    """A data file name must stay inside its folder."""
    return bool(name) and os.sep not in name and name not in (".", "..") and "/" not in name

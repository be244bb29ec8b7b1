"""Tensor statistics for MindSpore, computed where the tensor lives, crossing to the host once per step.

MindSpore runs operators asynchronously, and reading anything about a fresh tensor (even its dtype or
shape) waits until the pipeline has reached it. So `StatBuffer.slot(t)` only keeps a reference: no
kernel, no metadata, no wait; the same tensor object shares one slot until the next flush. A flush
waits once and then describes every pending tensor (dtype, shape, requires_grad) and reduces them in
batches, grouped by dtype and shape:

- on the CPU backend the tensor's memory is the host's: `asnumpy()` gives zero-copy views and NumPy
  reduces every group with a handful of calls;
- on a device (Ascend, GPU) each group is stacked and reduced by device operators, and `to_host()`
  moves every result as one int64 buffer (one transfer). md5, hash and tensor-mode files need the data
  itself: those modes copy each batch to the host.

MindSpore tensors have no version counter, so a pending tensor must be reduced before anything changes it
in place: the capture flushes the buffer before every in-place API call, before an optimizer runs
(parameters are updated in place) and when the pending tensors exceed a memory budget (their sizes are
read some calls late, when reading them no longer waits). Values follow core.stats; sums and norms
accumulate in float64 (float32 for bfloat16/float16 on a device).
"""

from __future__ import annotations

import zlib
from collections import defaultdict

import mindspore as ms
import numpy as np
from mindspore import ops

from msprobe_runtime.core.dump_writer import save_npy
from msprobe_runtime.core.stats import KIND_BOOL, KIND_FLOAT, KIND_INT, KIND_NONE

DEFAULT_BUDGET_BYTES = 256 * 2**20  # pending tensor bytes before a batch is reduced
_SIZE_LAG = 64  # the most recent pending tensors whose sizes are not read yet (reading would wait)
_KINDS = {"Bool": KIND_BOOL, **dict.fromkeys(("Int8", "Int16", "Int32", "Int64", "UInt8", "UInt16", "UInt32",
                                              "UInt64"), KIND_INT),
          **dict.fromkeys(("Float16", "BFloat16", "Float32", "Float64", "Complex64", "Complex128"), KIND_FLOAT)}
_BITS = {1: np.uint8, 2: np.int16, 4: np.int32, 8: np.int64}
_weights: dict[int, np.ndarray] = {}


def requires_grad(t: ms.Tensor) -> bool:
    """Whether `t` takes part in autograd as PyTorch would say it: a trainable parameter, or a floating
    tensor computed from one (MindSpore also marks every input of a grad function, integers too)."""
    if isinstance(t, ms.Parameter):
        return bool(t.requires_grad)
    return bool(t._requires_grad) and not t._is_leaf and _KINDS.get(str(t.dtype)) == KIND_FLOAT


def kind_of(t: ms.Tensor) -> str:
    """How statistics of `t` are read: float, int, bool, or none (unknown dtypes, uninitialised parameters)."""
    if getattr(t, "has_init", False):
        return KIND_NONE
    return _KINDS.get(str(t.dtype), KIND_NONE)


class StatBuffer:
    """The description and statistics (and md5, hash, .npy data) of every tensor recorded in one step.

    Per slot, filled at the flush: `dtypes` (msprobe's MindSpore spelling, `Float32`), `shapes`,
    `kinds`, `numels`, `requires_grad`."""

    def __init__(self, summary_mode: str = "statistics", data_folder=None, budget_bytes: int = DEFAULT_BUDGET_BYTES,
                 on_host: bool | None = None):
        self.summary_mode = summary_mode
        self.data_folder = data_folder  # tensor mode: the rank folder; .npy files go to its dump_tensor_data
        self.budget_bytes = budget_bytes
        self.on_host = ms.get_context("device_target") == "CPU" if on_host is None else on_host
        self.dtypes: list[str | None] = []
        self.shapes: list[list | None] = []
        self.kinds: list[str] = []
        self.numels: list[int] = []
        self.requires_grad: list[bool | None] = []
        self.files: dict[int, list[str]] = defaultdict(list)
        self.md5: dict[int, int] = {}
        self._cache: dict[int, tuple] = {}  # id(tensor) -> (tensor, slot), until the next flush
        self._pending: list[tuple] = []  # (tensor, slot)
        self._pending_bytes = 0
        self._sized = 0  # pending tensors whose sizes are counted in _pending_bytes
        self._host_blocks: list[tuple] = []  # (slots, high, low, total, norm, hash) as NumPy arrays
        self._device_blocks: list[tuple] = []  # (slots, high, low, total, norm) as device tensors

    def slot(self, t: ms.Tensor, file_name: str | None = None) -> int:
        """The slot describing `t` as it is now: a reference, no wait; repeated references share it."""
        hit = self._cache.get(id(t))
        if hit is not None and hit[0] is t:
            slot = hit[1]
        else:
            slot = len(self.kinds)
            for column in (self.dtypes, self.shapes, self.requires_grad):
                column.append(None)
            self.kinds.append(KIND_NONE)
            self.numels.append(0)
            self._pending.append((t, slot))
            self._cache[id(t)] = (t, slot)
            if len(self._pending) - self._sized >= 2 * _SIZE_LAG:
                self._count_sizes()
        if file_name is not None:
            self.files[slot].append(file_name)
        return slot

    def _count_sizes(self) -> None:
        """Add the sizes of all but the most recent pending tensors (computed by now); flush over budget."""
        upto = len(self._pending) - _SIZE_LAG
        self._pending_bytes += sum(tensor.nbytes for tensor, _ in self._pending[self._sized:upto])
        self._sized = upto
        if self._pending_bytes > self.budget_bytes:
            self.flush()

    def flush(self) -> None:
        """Describe and reduce every pending tensor now (before something may change one in place)."""
        pending, self._pending, self._pending_bytes, self._sized = self._pending, [], 0, 0
        self._cache.clear()
        groups: dict[tuple, list] = defaultdict(list)
        for tensor, slot in pending:  # the first read waits for the pipeline; the rest are ready then
            dtype, shape, kind = str(tensor.dtype), tensor.shape, kind_of(tensor)
            self.dtypes[slot], self.shapes[slot], self.kinds[slot] = dtype, list(shape), kind
            self.requires_grad[slot] = requires_grad(tensor)
            numel = self.numels[slot] = tensor.size if kind != KIND_NONE else 0
            if numel:
                groups[(dtype, shape)].append((tensor, slot))
            elif kind != KIND_NONE and self.data_folder is not None:
                for file_name in self.files.get(slot, ()):
                    save_npy(self.data_folder, file_name, _savable(_numpy(tensor)))
        for (dtype, _), items in groups.items():
            if self.on_host:
                self._reduce_host([_numpy(tensor) for tensor, _ in items], [slot for _, slot in items], dtype)
            else:
                self._reduce_device(items, dtype)

    def to_host(self) -> list[list]:
        """Per slot [max, min, sum, norm, hash] as Python numbers (the step's one device-to-host transfer)."""
        self.flush()
        rows: list[list] = [[None] * 5 for _ in self.kinds]
        for slots, *values in self._host_blocks:
            for field, value in enumerate(values):
                if value is not None:
                    for slot, number in zip(slots, value.tolist(), strict=True):
                        rows[slot][field] = number
        if self._device_blocks:
            self._device_to_rows(rows)
        self._host_blocks.clear()
        return rows

    # ---- the host path (CPU backend) -----------------------------------------------------------
    def _reduce_host(self, arrays: list[np.ndarray], slots: list[int], dtype: str) -> None:
        raw = arrays[0].reshape(1, -1) if len(arrays) == 1 else np.stack(arrays).reshape(len(arrays), -1)
        high, low, total, norm = _host_statistics(raw, dtype)
        digest = _hash(raw) if self.summary_mode == "hash" else None
        self._host_blocks.append((slots, high, low, total, norm, digest))
        self._to_files(raw, slots, [array.shape for array in arrays])

    def _to_files(self, raw: np.ndarray, slots: list[int], shapes: list) -> None:
        if self.summary_mode == "md5":
            for slot, row in zip(slots, raw, strict=True):
                self.md5[slot] = zlib.crc32(np.ascontiguousarray(row).view(np.uint8))
        if self.data_folder is None:
            return
        for slot, row, shape in zip(slots, raw, shapes, strict=True):
            for file_name in self.files.get(slot, ()):
                save_npy(self.data_folder, file_name, _savable(row.reshape(shape)))

    # ---- the device path (Ascend, GPU) ---------------------------------------------------------
    def _reduce_device(self, items: list, dtype: str) -> None:
        slots = [slot for _, slot in items]
        flat = [tensor.reshape(-1) for tensor, _ in items]
        raw = flat[0].reshape(1, -1) if len(flat) == 1 else ops.stack(flat)
        if dtype.startswith("Complex"):
            raw = ops.sqrt(ops.real(raw) ** 2 + ops.imag(raw) ** 2)
        elif dtype in ("BFloat16", "Float16"):
            raw = raw.astype(ms.float32)  # exact; reductions of every backend take it
        elif dtype == "Bool":
            raw = raw.astype(ms.uint8)
        high, low = ops.amax(raw, 1), ops.amin(raw, 1)
        total = norm = None
        if _KINDS[dtype] == KIND_FLOAT:
            wide = raw.astype(ms.float64 if dtype in ("Float64", "Complex128") else ms.float32)
            total, norm = wide.sum(1), ops.sqrt((wide * wide).sum(1))
        self._device_blocks.append((slots, high, low, total, norm))
        if self.summary_mode in ("md5", "hash") or self.data_folder is not None:
            host = np.stack([_numpy(tensor) for tensor, _ in items]).reshape(len(items), -1)
            if self.summary_mode == "hash":
                self._host_blocks.append((slots, None, None, None, None, _hash(host)))
            self._to_files(host, slots, [tensor.shape for tensor, _ in items])

    def _device_to_rows(self, rows: list[list]) -> None:
        """Every device result as int64 bits in one buffer, moved once, split back on the host."""
        parts, places = [], []
        for slots, *values in self._device_blocks:
            for field, value in enumerate(values):
                if value is not None:
                    floating = value.dtype in (ms.float16, ms.bfloat16, ms.float32, ms.float64)
                    bits = value.astype(ms.float64).view(ms.int64) if floating else value.astype(ms.int64)
                    parts.append(bits)
                    places.append((slots, field, floating))
        joined = (parts[0] if len(parts) == 1 else ops.cat(parts)).asnumpy()
        offset = 0
        for slots, field, floating in places:
            segment = joined[offset:offset + len(slots)]
            offset += len(slots)
            for slot, number in zip(slots, (segment.view(np.float64) if floating else segment).tolist(), strict=True):
                rows[slot][field] = number
        self._device_blocks.clear()


def _numpy(t: ms.Tensor) -> np.ndarray:
    """The tensor's data on the host (a zero-copy view on the CPU backend)."""
    return t.asnumpy()


def _savable(array: np.ndarray) -> np.ndarray:
    """bfloat16 (no NumPy type of its own) becomes float32, exactly."""
    return array.astype(np.float32) if array.dtype.name == "bfloat16" else array


def _host_statistics(raw: np.ndarray, dtype: str) -> tuple:
    """(max, min, sum, norm) per row; sum and norm only for floating and complex data."""
    if dtype.startswith("Complex"):
        raw = np.abs(raw)
    elif dtype == "BFloat16":
        raw = raw.astype(np.float32)
    elif dtype == "Bool":
        raw = raw.view(np.uint8)
    high, low = raw.max(axis=1), raw.min(axis=1)
    if _KINDS[dtype] != KIND_FLOAT:
        return high, low, None, None
    total = raw.sum(axis=1, dtype=np.float64)
    norm = np.sqrt(np.square(raw, dtype=np.float64).sum(axis=1))
    return high, low, total, norm


def _hash(raw: np.ndarray) -> np.ndarray:
    """Per row, sum(bits_i * w_i) modulo 2**64 with fixed odd weights: the PyTorch runtime's hash, bit for
    bit, so identical tensors hash alike across frameworks."""
    if raw.dtype.kind == "c":
        raw = raw.view(raw.real.dtype)
    bits = raw.view(_BITS[raw.itemsize]).astype(np.int64)
    with np.errstate(over="ignore"):
        return (bits * _position_weights(bits.shape[1])).sum(axis=1)


def _position_weights(length: int) -> np.ndarray:
    weights = _weights.get(length)
    if weights is None:
        if len(_weights) > 64:
            _weights.clear()
        positions = np.arange(1, length + 1, dtype=np.int64)
        with np.errstate(over="ignore"):
            weights = (positions * np.int64(-7046029254386353131) + np.int64(0x632BE59BD9B4E019)) | 1
        _weights[length] = weights
    return weights

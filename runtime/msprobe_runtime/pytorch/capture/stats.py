"""Tensor statistics computed on the tensor's device and moved to the host once per step.

The same tensor in the same state (same object, same version counter) shares one slot, so an activation
that is the output of one API and the input of the next is measured once.

On the CPU, in the statistics summary mode, a dense float32/float64/bfloat16, integer or bool tensor (its
elements back to back in memory, in any order of its dimensions) is described as soon as it is recorded:
one pass over its data in C (core._hoststats), while the data is still in the cache. Nothing is then left
pending, so later in-place changes need no copies. That path, and finding a state recorded before, run
in C too (_describe.c, on this module's bookkeeping): hundreds of tensors a step go through them.

Any other tensor (on an accelerator, other dtypes and layouts, the md5/hash/tensor modes, or a build
without the extension) is described lazily: `StatBuffer.slot(t)` takes a reference to its state (no
copy, no kernel), and pending tensors of one (dtype, shape, device) are later stacked and reduced
together with a handful of kernels.

Correctness under in-place ops: `before_mutation(t)` (called by the API wrappers before any in-place
call) clones the pending tensors that share `t`'s storage, so a record keeps the values as they were at call time;
`slot(t, copy=True)` does the same at once for tensors that C++ code may change later (parameter gradients).
A pending tensor whose version counter moved without warning is reported as stale (null statistics)
instead of being described with later values. `transfer()` makes the one device-to-host copy; turning
its result into rows of numbers (`HostStatistics.rows`) can then happen on another thread.

Bookkeeping is kept in flat parallel lists (no container per tensor), so a step's records hardly add
to the garbage collector's work.
"""

from __future__ import annotations

import weakref
import zlib
from collections import defaultdict

import numpy as np
import torch

from msprobe_runtime.core.dump_writer import save_npy

try:  # compiled when the package was built with a C compiler (_describe.c, _hoststats.c); else torch's reductions
    from msprobe_runtime.pytorch.capture import _describe
except ImportError:  # pragma: no cover - depends on the build
    _describe = None
from msprobe_runtime.core.stats import KIND_BOOL, KIND_FLOAT, KIND_INT, KIND_NONE

DEFAULT_BUDGET_BYTES = 256 * 2**20  # pending tensors and snapshots held before a batch is computed
_CHUNK_ELEMENTS = 2**24  # at most this many elements stacked at once
_HASH_FIELD = 4  # a block's fields: max, min, sum, norm, hash

_KINDS = {torch.bool: KIND_BOOL}
_KINDS.update({dtype: KIND_INT for dtype in (torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64)})
_KINDS.update({dtype: KIND_FLOAT for dtype in (torch.float16, torch.bfloat16, torch.float32, torch.float64,
                                               torch.complex64, torch.complex128)})
_FLOAT8 = frozenset(getattr(torch, name) for name in ("float8_e4m3fn", "float8_e5m2") if hasattr(torch, name))
_KINDS.update({dtype: KIND_FLOAT for dtype in _FLOAT8})
_ITEM_SIZE = {dtype: dtype.itemsize for dtype in _KINDS}
_PLAIN = (torch.Tensor, torch.nn.Parameter)
_STRIDED = torch.strided
_functorch_level = torch._C._functorch.peek_interpreter_stack  # not None inside a torch.func transform
_SPARSE_COO = torch.sparse_coo
_BITS = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}
# dtypes described at once on the host: core._hoststats' dtype codes (from _FIRST_INTEGER on, max and min
# come back as exact int64) and kinds
_HOST_CODES = {dtype: (code, _KINDS[dtype]) for dtype, code in (
    (torch.float32, 0), (torch.float64, 1), (torch.bfloat16, 2), (torch.int64, 3), (torch.int32, 4),
    (torch.int16, 5), (torch.int8, 6), (torch.uint8, 7), (torch.bool, 7))}
_FIRST_INTEGER = 3
_CACHE_LIMIT = 4096  # tensor states remembered for sharing slots (weakly: they keep no tensor alive)
_SHARED = -1  # StatBuffer._addresses: several tensor objects remembered at one address
_weights: dict[tuple, torch.Tensor] = {}
_workspaces: dict[tuple, torch.Tensor] = {}


class StatBuffer:
    """The statistics (and md5, hash, .npy data) of every tensor state recorded in one step."""

    def __init__(self, summary_mode: str = "statistics", data_folder=None, budget_bytes: int = DEFAULT_BUDGET_BYTES):
        self.summary_mode = summary_mode
        self.data_folder = data_folder  # tensor mode: the rank folder; .npy files go to its dump_tensor_data
        self.budget_bytes = budget_bytes
        # slots described at once on the host, in order, and their max, min, sum, norm: four float64 per
        # float slot, four int64 per integer slot (max, min, 0, 0)
        self.host_slots: tuple[list[int], list[int]] = ([], [])  # (float slots, integer slots)
        self.host_values: tuple[bytearray, bytearray] = (bytearray(), bytearray())
        self.kinds: list[str] = []
        self.numels: list[int] = []
        self.layouts: list[tuple] = []  # per slot: (dtype, shape)
        self.files: dict[int, list[str]] = defaultdict(list)
        self.md5: dict[int, int] = {}
        self.stale: list[int] = []
        # storage address -> newest pending position on it; empty when no pending tensor needs guarding
        self.storages: dict[int, int] = {}
        self.on_pending = None  # called when a tensor is kept pending while none is (guards must be in place)
        self._cache: dict[int, tuple] = {}  # id(tensor) -> (weak reference, version, slot) of its last state
        self._addresses: dict[int, int] = {}  # data address -> id of the tensor cached there last
        self._tensors: list[torch.Tensor] = []  # pending position -> tensor (or its call-time copy)
        self._versions: list[int] = []
        self._slots: list[int] = []
        self._previous: list[int] = []  # pending position -> the previous position on the same storage, or -1
        self._pending_bytes = 0
        self._blocks: list[tuple] = []  # (slots, high, low, total, norm, hash) on the device
        self._written: set[int] = set()  # tensor mode: slots whose data files are written (their batch was computed)
        # the statistics mode without data files, built with the C extensions: `describe(t, shared)` finds a
        # state seen before or describes a dense CPU tensor at once, in C (_describe.c, on the lists and dicts
        # above), and returns its slot; -1 for a tensor to `keep` pending
        self.describe = None
        if _describe is not None and summary_mode == "statistics" and data_folder is None:
            self.describe = _describe.Describer(self, _HOST_CODES, _PLAIN, _STRIDED, KIND_NONE, _SHARED, _CACHE_LIMIT,
                                                _FIRST_INTEGER).slot

    def slot(self, t: torch.Tensor, file_name: str | None = None, copy: bool = False, shared: bool = True) -> int:
        """The slot describing `t` as it is now; cheap and shared by equal states.

        In tensor mode `file_name` is where the data goes (one file per reference, as msprobe). With `copy`,
        a tensor kept pending is copied first, and shares no slot: for tensors that code capture cannot
        see may change in place (parameter gradients). Without `shared`, `t` is described anew even if an
        equal state was: for tensors that code capture cannot see may be written through an alias
        (`p.data`, which has a version counter of its own) between two records."""
        if self.describe is not None:
            slot = self.describe(t, shared)
            return slot if slot >= 0 else self.keep(t, file_name, copy)
        known = self._cache.get(id(t)) if shared else None
        if known is not None and known[0]() is t and known[1] == t._version:
            slot = known[2]
            if file_name is not None and slot in self._written:  # its batch was computed: this state, now
                save_npy(self.data_folder, file_name, _host_array(t.detach()))
            elif file_name is not None:
                self.files[slot].append(file_name)
            return slot
        return self.keep(t, file_name, copy)

    def keep(self, t: torch.Tensor, file_name: str | None = None, copy: bool = False) -> int:
        """A new slot for `t`, kept pending: a reference to its state (or a copy), described later with the
        batch (`slot` minus its shortcuts)."""
        dtype = t.dtype
        if t.layout is _SPARSE_COO and t.__class__ in _PLAIN and dtype in _KINDS:
            return self._sparse(t, file_name)
        # float, int or bool; none for other sparse layouts, meta, subclass and quantized tensors
        kind = (_KINDS.get(dtype, KIND_NONE) if t.__class__ in _PLAIN and t.layout is _STRIDED and not t.is_meta
                else KIND_NONE)
        numel = t.numel() if kind is not KIND_NONE else 0
        slot, address = self._open_slot(t, kind, numel, dtype)
        if file_name is not None:
            self.files[slot].append(file_name)
            if not numel and kind is not KIND_NONE:
                save_npy(self.data_folder, file_name, _host_array(t.detach()))
        if address is None:
            return slot
        version = version_of(t)
        if version is None:  # an inference tensor: in-place changes would go unseen, so describe it now
            with _NoGrad():
                self._reduce([t], [slot], dtype)
            return slot
        if copy:
            t = _copy(t)
            version = t._version
        else:
            self._remember(t, version, slot, address)
        if not self.storages and self.on_pending is not None:
            self.on_pending()
        self._tensors.append(t)
        self._versions.append(version)
        self._slots.append(slot)
        storage = _storage_address(t, dtype)
        self._previous.append(self.storages.get(storage, -1))
        self.storages[storage] = len(self._tensors) - 1
        self._pending_bytes += numel * _ITEM_SIZE[dtype]
        if self._pending_bytes > self.budget_bytes:
            self.materialize()
        return slot

    def _sparse(self, t: torch.Tensor, file_name: str | None) -> int:
        """A sparse COO tensor (`nn.Embedding(sparse=True)`'s gradient) described as the dense tensor it
        stands for: from a copy of its summed values, with a zero when some elements are implicit (O(nnz)
        memory); densified where every element counts (data files, md5, hash)."""
        with _NoGrad(), torch.inference_mode(False):
            if file_name is not None or self.summary_mode != "statistics":
                return self.slot(t.to_dense(), file_name)
            values = t.coalesce().values().reshape(-1)
            implicit = values.new_zeros(1 if values.numel() < t.numel() else 0)
            slot = self.slot(torch.cat([values, implicit]))
        self.numels[slot] = t.numel()  # the Mean is over every element
        self.layouts[slot] = (t.dtype, tuple(t.shape))
        return slot

    def unknown(self, t: torch.Tensor) -> int:
        """A slot of `t`'s dtype and shape with null statistics (its values cannot be read yet)."""
        return self._open_slot(t, KIND_NONE, 0, t.dtype)[0]

    def _open_slot(self, t: torch.Tensor, kind: str, numel: int, dtype: torch.dtype) -> tuple[int, int | None]:
        """A new slot for `t`, and the address of its data: None when there is none to read (no elements;
        no storage of its own, inside a torch.func transform such as vmap: then the slot gets no statistics)."""
        slot = len(self.kinds)
        self.kinds.append(kind)
        self.numels.append(numel)
        self.layouts.append((dtype, tuple(t.shape)))  # a plain tuple: the collector stops tracking it
        if not numel:
            return slot, None
        try:
            return slot, t.data_ptr()
        except RuntimeError:
            self.kinds[slot] = KIND_NONE
            return slot, None

    def _remember(self, t: torch.Tensor, version: int, slot: int, address: int) -> None:
        """Let later records of `t` in this state share `slot`; note who else lives at its address."""
        if len(self._cache) > _CACHE_LIMIT:
            self._cache.clear()
            self._addresses.clear()
        key = id(t)
        self._cache[key] = (weakref.ref(t), version, slot)
        known = self._addresses.get(address)
        if known is None or known == key or (known != _SHARED and _dead(self._cache.get(known))):
            self._addresses[address] = key
        else:  # another live tensor object over the same memory (`p` and `p.data`, a view)
            self._addresses[address] = _SHARED

    def forget_states(self) -> None:
        """Stop sharing slots with earlier states: for writers that do not bump version counters
        (collectives write through their backends)."""
        self._cache.clear()
        self._addresses.clear()

    def before_mutation(self, t: torch.Tensor) -> None:
        """`t` is about to change in place: copy every pending tensor sharing its storage (the copies
        are described with the rest of the batch, so records keep the values of call time). When `t` is
        another tensor object over the memory of a remembered state (`p.data.clamp_()` writes `p`
        without bumping `p`'s version counter), no earlier state is shared any more."""
        if self._addresses:
            try:
                known = self._addresses.get(t.data_ptr())
            except RuntimeError:  # no storage of its own
                known = None
            if known is not None and known != id(t):
                self.forget_states()
        if not self.storages or t.__class__ not in _PLAIN or t.layout is not _STRIDED or t.dtype not in _ITEM_SIZE:
            return
        try:
            position = self.storages.pop(_storage_address(t, t.dtype), -1)
        except RuntimeError:  # no storage of its own (inside a torch.func transform): nothing pending on it
            return
        if position < 0:
            return
        tensors, versions, copied = self._tensors, self._versions, 0
        while position >= 0:
            tensor = tensors[position]
            if tensor._version == versions[position]:
                copy = tensors[position] = _copy(tensor)
                versions[position] = copy._version
                copied += copy.numel() * _ITEM_SIZE[copy.dtype]
            position = self._previous[position]
        self._grow(copied)

    def materialize(self) -> None:
        """Compute the statistics of every pending tensor now, as device tensors (no synchronisation); not
        inside a torch.func transform (`vmap(grad(f))`), which would make the results its own wrapped
        tensors, without storage: there they wait for the next time. Nothing pending (a CPU model: its tensors
        are described when recorded) costs nothing."""
        if not self._tensors or _functorch_level() is not None:
            return
        tensors, versions, slots = self._tensors, self._versions, self._slots
        self._tensors, self._versions, self._slots, self._previous = [], [], [], []
        self.storages, self._pending_bytes = {}, 0
        groups: dict[tuple, tuple[list, list]] = {}
        for position, tensor in enumerate(tensors):
            if tensor._version != versions[position]:
                self.kinds[slots[position]] = KIND_NONE
                self.stale.append(slots[position])
                continue
            key = (tensor.dtype, tensor.shape, tensor.device)
            group = groups.get(key)
            if group is None:
                group = groups[key] = ([], [])
            group[0].append(tensor)
            group[1].append(slots[position])
        with _NoGrad():
            for (dtype, shape, _), (members, member_slots) in groups.items():
                per_chunk = max(1, _CHUNK_ELEMENTS // max(1, shape.numel()))
                for start in range(0, len(members), per_chunk):
                    self._reduce(members[start:start + per_chunk], member_slots[start:start + per_chunk], dtype)

    def transfer(self) -> HostStatistics:
        """Compute what is pending and move every result to the host: one copy per device."""
        self.materialize()
        blocks, self._blocks = self._blocks, []
        bins: dict[tuple, list] = defaultdict(list)
        places = []  # (bin key, position in bin, field, slots)
        for slots, *values in blocks:
            for field, value in enumerate(values):
                if value is not None:
                    key = (value.device, value.dtype)
                    places.append((key, len(bins[key]), field, slots))
                    bins[key].append(value)
        return HostStatistics(len(self.kinds), places, _transfer(bins), self.host_slots,
                              tuple(bytes(values) for values in self.host_values))

    def _grow(self, nbytes: int) -> None:
        self._pending_bytes += nbytes
        if self._pending_bytes > self.budget_bytes:
            self.materialize()

    def _reduce(self, tensors: list, slots: list, dtype: torch.dtype) -> None:
        if len(tensors) == 1:
            raw = tensors[0].reshape(1, -1)
        else:  # into a reused buffer: a fresh one would page-fault its memory in every step
            raw = torch.stack(tensors, out=_workspace(tensors[0], len(tensors))).view(len(tensors), -1)
        values = _statistics(raw, dtype)
        digest = _hash(raw) if self.summary_mode == "hash" else None
        self._blocks.append((slots, *values, digest))
        if self.summary_mode == "md5" or self.data_folder is not None:
            self._to_files(raw, slots, dtype, [tensor.shape for tensor in tensors])

    def _to_files(self, raw: torch.Tensor, slots: list, dtype: torch.dtype, shapes: list) -> None:
        if self.summary_mode == "md5":
            as_bytes = raw.view(torch.uint8).cpu().numpy()
            for slot, row in zip(slots, as_bytes, strict=True):
                self.md5[slot] = zlib.crc32(row)
        if self.data_folder is None:
            return
        host = _host_array(raw)
        for slot, row, shape in zip(slots, host, shapes, strict=True):
            for file_name in self.files.get(slot, ()):
                save_npy(self.data_folder, file_name, row.reshape(tuple(shape)))
        self._written.update(slots)


class HostStatistics:
    """A step's statistics on the host, still packed; `rows()` unpacks them (on any thread)."""

    def __init__(self, slots: int, places: list, host: dict, described: tuple[list, list],
                 values: tuple[bytes, bytes]):
        self._slots, self._places, self._host = slots, places, host
        self._described, self._values = described, values  # StatBuffer's host_slots and host_values

    def rows(self) -> tuple[tuple[list[int], bytes], tuple[list[int], bytes], dict[int, int]]:
        """The slots of float tensors and their (max, min, sum, norm), four float64 a slot as bytes; the
        slots of integer and bool tensors and their (max, min, 0, 0) as int64 (exact); the hash of each slot
        that has one (core.stats.statistics_texts reads the first two)."""
        (float_slots, int_slots), (float_values, int_values) = self._described, self._values
        if not self._places:
            return (float_slots, float_values), (int_slots, int_values), {}
        lazy = (np.zeros((self._slots, 4)), np.zeros((self._slots, 4), dtype=np.int64))  # float, integer
        found = (set(), set())
        digests = {}
        for key, position, field, slots in self._places:
            values = self._host[key][position]
            if field == _HASH_FIELD:
                digests.update(zip(slots, values.tolist(), strict=True))
                continue
            which = 0 if values.dtype == np.float64 else 1
            lazy[which][slots, field] = values
            found[which].update(slots)
        pairs = []
        for described, packed, rows, slots in zip(self._described, self._values, lazy, found, strict=True):
            slots = sorted(slots)
            pairs.append((described + slots, packed + rows[slots].tobytes()))
        return pairs[0], pairs[1], digests


_NUMPY_OK = {torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64, torch.float16,
             torch.float32, torch.float64, torch.complex64, torch.complex128}


def _dead(entry: tuple | None) -> bool:
    """Whether a cache entry is gone or its tensor was freed (its address may be another's now)."""
    return entry is None or entry[0]() is None


def version_of(t: torch.Tensor) -> int | None:
    """`t`'s version counter; None for an inference tensor (made under torch.inference_mode), which has none."""
    try:
        return t._version
    except RuntimeError:
        return None


def _copy(t: torch.Tensor) -> torch.Tensor:
    """A copy of `t` that has a version counter (not an inference tensor, even under inference_mode)."""
    with _NoGrad(), torch.inference_mode(False):
        return t.clone()


def _storage_address(t: torch.Tensor, dtype: torch.dtype) -> int:
    """Where `t`'s storage starts: shared by every view of it (computed without making the Python
    storage object that `untyped_storage()` would create and keep alive)."""
    return t.data_ptr() - t.storage_offset() * _ITEM_SIZE[dtype]


def _workspace(like: torch.Tensor, rows: int) -> torch.Tensor:
    """A buffer of `rows` stacked copies of `like`, carved from one kept per (device, dtype)."""
    key = (like.device, like.dtype)
    needed = rows * like.numel()
    buffer = _workspaces.get(key)
    if buffer is None or buffer.numel() < needed:
        buffer = _workspaces[key] = torch.empty(needed, dtype=like.dtype, device=like.device)
    return buffer[:needed].view(rows, *like.shape)


def _host_array(t: torch.Tensor) -> np.ndarray:
    """A host copy for .npy files; bfloat16 and float8 (no NumPy type) become float32, exactly."""
    return (t if t.dtype in _NUMPY_OK else t.float()).cpu().numpy()


def _statistics(raw: torch.Tensor, dtype: torch.dtype) -> tuple:
    """(max, min, sum, norm) per row; sum and norm only for floating and complex data."""
    if dtype.is_complex:
        raw = raw.abs()
    elif dtype is torch.bool:
        raw = raw.view(torch.uint8)
    elif dtype in _FLOAT8:
        raw = raw.float()  # no reductions of its own
    high, low = torch.amax(raw, dim=1), torch.amin(raw, dim=1)  # aminmax(dim=) is ~20x slower on CPU
    if not raw.is_floating_point():
        return high, low, None, None
    accumulate = torch.float64 if raw.dtype is torch.float64 else torch.float32
    return high, low, raw.sum(dim=1, dtype=accumulate), torch.linalg.vector_norm(raw, dim=1, dtype=accumulate)


def _hash(raw: torch.Tensor) -> torch.Tensor:
    """Per row, sum(bits_i * w_i) modulo 2**64 with fixed odd weights: any changed element changes it."""
    if raw.dtype.is_complex:
        raw = torch.view_as_real(raw).reshape(raw.shape[0], -1)
    bits = raw.view(_BITS[raw.element_size()]).to(torch.int64)
    return (bits * _position_weights(bits.shape[1], bits.device)).sum(dim=1)


def _position_weights(length: int, device: torch.device) -> torch.Tensor:
    key = (length, device)
    weights = _weights.get(key)
    if weights is None:
        if len(_weights) > 64:
            _weights.clear()
        positions = torch.arange(1, length + 1, dtype=torch.int64, device=device)
        weights = (positions * -7046029254386353131 + 0x632BE59BD9B4E019) | 1  # golden-ratio multiplier
        _weights[key] = weights
    return weights


def _transfer(bins: dict[tuple, list]) -> dict[tuple, list]:
    """Concatenate every result on a device as int64 bits, move it once, split it back on the host."""
    by_device: dict[torch.device, list] = defaultdict(list)
    for key, tensors in bins.items():
        flat = torch.cat(tensors) if len(tensors) > 1 else tensors[0]
        flat = flat.to(torch.float64).view(torch.int64) if flat.is_floating_point() else flat.to(torch.int64)
        by_device[key[0]].append((key, flat, [tensor.shape[0] for tensor in tensors]))
    host: dict[tuple, list] = {}
    for items in by_device.values():
        joined = torch.cat([flat for _, flat, _ in items]).cpu().numpy()
        offset = 0
        for key, _, lengths in items:
            segment = joined.view(np.float64) if key[1].is_floating_point else joined
            parts = host[key] = []
            for length in lengths:
                parts.append(segment[offset:offset + length])
                offset += length
    return host


class _NoGrad:
    """torch.no_grad() without its cost when gradients are already off (the usual case here)."""

    def __enter__(self):
        self.previous = torch.is_grad_enabled()
        if self.previous:
            torch._C._set_grad_enabled(False)

    def __exit__(self, *exc_info):
        if self.previous:
            torch._C._set_grad_enabled(True)

"""The gradient probe for PyTorch: msprobe's grad_probe task, at every optimizer step of any optimizer.

A global optimizer step pre-hook (torch.optim.Optimizer, so every optimizer class) counts steps from 0
and, for the steps and ranks the config wants, reads each monitored parameter's gradient (`main_grad`
when present, as Megatron keeps it). The gradients of one device are joined into flat tensors (in
chunks, to bound the extra memory): that one copy is all the training thread does for gradients on the
CPU; the statistics, signs and MD5 data are then computed from the copy on the writer thread, which also
writes the files (core.grad_summary). There float32 and float64 copies are described without torch, by
core.grad_stats and NumPy, so the writer takes the GIL a few times a step, not at every operation (each
hand-over costs the training thread time); other dtypes take a handful of torch operations. On an
accelerator the statistics are computed on the device and cross to the host as one byte buffer per
device. Gradients are only read, never changed, so training is bit-identical with and without the probe.
"""

from __future__ import annotations

from functools import partial

import numpy as np
import torch
from torch.optim.optimizer import register_optimizer_step_pre_hook

from msprobe_runtime.core.config import DebuggerConfig, ensure_writable
from msprobe_runtime.core.debugger import model_chunks
from msprobe_runtime.core.grad_stats import statistics
from msprobe_runtime.core.grad_summary import GradStep, GradSummaryWriter, has_signs

_SIXTEEN_BIT = (torch.float16, torch.bfloat16)
_NUMPY_DTYPES = {torch.float32: np.float32, torch.bool: np.bool_}
_NUMPY_FLOATS = (torch.float32, torch.float64)  # described on the host without torch (core.grad_stats)
_CHUNK_ELEMENTS = 1 << 24  # gradient elements joined per operation: ~10 bytes each of extra memory
_DEFERRED_ELEMENTS = 1 << 26  # CPU gradients up to this size are summarised on the writer thread


def _each_max(tensors: list[torch.Tensor]) -> list[torch.Tensor]:
    return [tensor.max() for tensor in tensors]


_foreach_max = getattr(torch, "_foreach_max", None) or _each_max  # torch < 2.4 lacks the fused form


class GradProbe:
    """Writes grad_summary_{step}.csv (and at L1/L2 the sign files) for the monitored models."""

    def __init__(self, config: DebuggerConfig, model: torch.nn.Module | None = None):
        self.config = config
        ensure_writable(config.dump_path)
        self.step = -1  # msprobe's numbering: the first optimizer step is step 0
        self._params: dict[torch.nn.Parameter, str] = {}
        self._writer = GradSummaryWriter(config.dump_path)
        self._hook = register_optimizer_step_pre_hook(self._on_optimizer_step)
        if model is not None:
            self.monitor(model)

    def monitor(self, model: torch.nn.Module | list | tuple) -> None:
        """Watch `model`'s parameters (those named in param_list, or all when it is empty); of a list or tuple
        of models, each one's parameters named after its index (`1.fc.weight`), as start(model) names records."""
        for prefix, module in model_chunks(model, torch.nn.Module, "torch.nn.Module", "monitor(model)"):
            for name, param in module.named_parameters():
                name = prefix + name
                if not self.config.param_list or name in self.config.param_list:
                    self._params.setdefault(param, name)

    def flush(self) -> None:
        """Wait until every finished step's files are on disk."""
        self._writer.flush()

    def close(self) -> None:
        """Stop probing and finish writing; idempotent."""
        self._hook.remove()
        self._writer.close()

    def _on_optimizer_step(self, optimizer, args, kwargs) -> None:
        self.step += 1
        rank = _rank()
        if not self.config.wants_step(self.step) or (rank is not None and not self.config.wants_rank(rank)):
            return
        named = [(name, _gradient(param)) for param, name in self._params.items()]
        named = [(name, grad) for name, grad in named if grad is not None]
        if not named:
            return
        groups = _by_device(named)
        summary = partial(_summary, rank or 0, self.step, self.config.grad_level, self.config.bounds, groups)
        on_cpu = all(group.device.type == "cpu" for group in groups)
        if on_cpu and sum(group.elements for group in groups) <= _DEFERRED_ELEMENTS:
            for group in groups:
                group.copy()  # the training thread's only work: the optimizer may change gradients next
            self._writer.submit(summary)  # the statistics are computed on the writer thread
        else:
            self._writer.submit(summary())  # device kernels from this thread; one transfer per device


class _DeviceGradients:
    """The monitored gradients of one device; `chunks()` joins them, at most _CHUNK_ELEMENTS at a time."""

    def __init__(self, device: torch.device, named: list[tuple[str, torch.Tensor]]):
        self.device = device
        self.names = tuple(name for name, _ in named)
        self.shapes = tuple(tuple(grad.shape) for _, grad in named)
        self.elements = sum(grad.numel() for _, grad in named)
        self._grads = [grad for _, grad in named]
        self._copies: list | None = None

    def copy(self) -> None:
        """Join every chunk now (a copy), so the gradients themselves are no longer needed; on the CPU,
        float32 and float64 copies become NumPy arrays (described without torch, see _describe)."""
        self._copies = list(self.chunks())
        self._grads = []
        if self.device.type == "cpu" and all(joined.dtype in _NUMPY_FLOATS for _, joined in self._copies):
            self._copies = [(sizes, joined.numpy()) for sizes, joined in self._copies]

    def chunks(self):
        """(sizes, joined gradients) per chunk; mixed dtypes promote exactly."""
        if self._copies is not None:
            yield from self._copies
            return
        with torch.no_grad():
            for chunk, sizes in _chunks(self._grads):
                yield sizes, torch.cat([grad.reshape(-1) for grad in chunk])


def _by_device(named: list[tuple[str, torch.Tensor]]) -> list[_DeviceGradients]:
    groups: dict[torch.device, list[tuple[str, torch.Tensor]]] = {}
    for name, grad in named:
        groups.setdefault(grad.device, []).append((name, _probed(grad)))
    return [_DeviceGradients(device, group) for device, group in groups.items()]


@torch.no_grad()
def _summary(rank: int, step: int, level: str, bounds: tuple, groups: list[_DeviceGradients]) -> GradStep:
    """One step's GradStep from the joined gradients: statistics, then one host copy per device."""
    names, shapes, stats, elements = [], [], [], []
    for group in groups:
        host_stats, host_elements = _describe(list(group.chunks()), level, bounds)
        names.extend(group.names)
        shapes.extend(group.shapes)
        stats.append(host_stats)
        elements.append(host_elements)
    elements_all = elements[0] if len(elements) == 1 else np.concatenate(elements)
    return GradStep(
        rank=rank,
        step=step,
        level=level,
        bounds=bounds,
        names=tuple(names),
        shapes=tuple(shapes),
        stats=np.concatenate(stats),
        signs=elements_all if has_signs(level) else None,
        values=None if has_signs(level) else elements_all,
    )


def _rank() -> int | None:
    """This process's rank under torch.distributed, else None (msprobe filters ranks only then)."""
    if torch.distributed.is_available() and torch.distributed.is_initialized():
        return torch.distributed.get_rank()
    return None


def _gradient(param: torch.nn.Parameter) -> torch.Tensor | None:
    main_grad = getattr(param, "main_grad", None)
    return main_grad if main_grad is not None else param.grad


def _probed(grad: torch.Tensor) -> torch.Tensor:
    """The gradient as the probe reads it: a sparse one (`nn.Embedding(sparse=True)`) as the dense
    gradient it stands for, a complex one as its real and imaginary parts (a trailing dimension of 2)."""
    if grad.layout is not torch.strided:
        grad = grad.to_dense()
    return torch.view_as_real(grad) if grad.is_complex() else grad


def _chunks(grads: list[torch.Tensor]):
    """Consecutive runs of `grads` of at most _CHUNK_ELEMENTS elements (a bigger one alone), with sizes."""
    chunk, sizes, total = [], [], 0
    for grad in grads:
        size = grad.numel()
        if chunk and total + size > _CHUNK_ELEMENTS:
            yield chunk, sizes
            chunk, sizes, total = [], [], 0
        chunk.append(grad)
        sizes.append(size)
        total += size
    if chunk:
        yield chunk, sizes


def _describe(chunks: list, level: str, bounds) -> tuple[np.ndarray, np.ndarray]:
    """One device's statistics rows and flat per-element data (signs at L1/L2, float32 values at L0) on
    the host: from NumPy copies without torch (one GIL-free C call per chunk, core.grad_stats: the writer
    thread then leaves the GIL to the training thread), else by torch's operations where the gradients are."""
    if not all(isinstance(joined, np.ndarray) for _, joined in chunks):
        return _to_host(*_summarise(chunks, level, bounds))
    wanted = bounds if level == "L2" else None
    rows = [statistics(joined, sizes, wanted) for sizes, joined in chunks]
    per_element = [joined > 0 if has_signs(level) else joined.astype(np.float32, copy=False) for _, joined in chunks]
    return np.concatenate(rows), per_element[0] if len(per_element) == 1 else np.concatenate(per_element)


def _summarise(chunks, level: str, bounds) -> tuple[torch.Tensor, list]:
    """Statistics rows (see _statistics) and per-element data (signs at L1/L2, float32 values at L0)."""
    rows, per_element = [], []
    for sizes, joined in chunks:
        rows.append(_statistics(joined, sizes, bounds if level == "L2" else None))
        per_element.append(joined > 0 if has_signs(level) else joined.float())
    return torch.cat(rows), per_element


def _statistics(joined: torch.Tensor, sizes: list[int], bounds) -> torch.Tensor:
    """float64 [n, 3 (+ len(bounds) + 2)] for the gradients joined in `joined`: max, min (as float32
    values, msprobe's) and the L2 norm; at L2 then the element count per interval cut by `bounds`
    (msprobe's bucketize intervals: NaN counts in the last) and the count of zeros. A few device
    operations whatever the number of gradients, no synchronisation."""
    views = joined.split(sizes)
    filler = joined.new_full((1,), float("nan"))  # max/min of an empty gradient
    highs = _foreach_max([view if view.numel() else filler for view in views])
    lows = _foreach_max([view if view.numel() else filler for view in (-joined).split(sizes)])
    wide = torch.float32 if joined.dtype in _SIXTEEN_BIT else None
    norms = torch._foreach_norm(views, 2, dtype=wide)
    columns = [torch.stack(highs).float(), -torch.stack(lows).float(), torch.stack(norms).float()]
    table = torch.stack(columns, dim=1).double()
    if bounds is None:
        return table
    values = joined.float() if joined.dtype in _SIXTEEN_BIT else joined
    at_most = torch.stack([_per_gradient(values <= bound, sizes) for bound in bounds], dim=1)
    total = torch.tensor(sizes, device=joined.device).unsqueeze(1)
    by_interval = torch.cat([at_most[:, :1], at_most.diff(dim=1), total - at_most[:, -1:]], dim=1)
    zeros = _per_gradient(values == 0, sizes).unsqueeze(1)
    return torch.cat([table, by_interval.double(), zeros.double()], dim=1)


def _per_gradient(mask: torch.Tensor, sizes: list[int]) -> torch.Tensor:
    """How many elements of each joined gradient satisfy `mask` (int64, exact)."""
    return torch.stack([part.sum() for part in mask.split(sizes)])


def _to_host(stats: torch.Tensor, per_element: list[torch.Tensor]) -> tuple[np.ndarray, np.ndarray]:
    """One device's statistics and per-element data (bool or float32) cross to the host as one byte
    buffer: one copy, one synchronisation. Returns the statistics and the flat per-element data."""
    parts = [stats.reshape(-1), *per_element]
    raw = torch.cat([part.view(torch.uint8) for part in parts]).cpu().numpy()
    split = stats.numel() * stats.element_size()
    dtype = _NUMPY_DTYPES[per_element[0].dtype]
    return raw[:split].view(np.float64).reshape(tuple(stats.shape)), raw[split:].view(dtype)

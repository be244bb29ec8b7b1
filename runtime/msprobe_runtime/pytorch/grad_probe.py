"""The gradient probe for PyTorch: msprobe's grad_probe task, at every optimizer step of any optimizer.

A global optimizer step pre-hook (torch.optim.Optimizer, so every optimizer class) counts steps from 0
and, for the steps and ranks the config wants, reads each monitored parameter's gradient (`main_grad`
when present, as Megatron keeps it). The gradients of one device are joined into one flat tensor (in
chunks, to bound the extra memory), so the statistics take a handful of device operations whatever
the parameter count; statistics, signs and MD5 data then cross to the host as one byte buffer per
device, and core.grad_summary writes the files on a background thread. Gradients are only read, never
changed, so training is bit-identical with and without the probe.
"""

from __future__ import annotations

import numpy as np
import torch
from torch.optim.optimizer import register_optimizer_step_pre_hook

from msprobe_runtime.core.config import DebuggerConfig, ensure_writable
from msprobe_runtime.core.grad_summary import GradStep, GradSummaryWriter, has_signs

_SIXTEEN_BIT = (torch.float16, torch.bfloat16)
_NUMPY_DTYPES = {torch.float32: np.float32, torch.bool: np.bool_}
_CHUNK_ELEMENTS = 1 << 24  # gradient elements joined per operation: ~10 bytes each of extra memory


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

    def monitor(self, model: torch.nn.Module) -> None:
        """Watch `model`'s parameters (those named in param_list, or all when it is empty)."""
        for name, param in model.named_parameters():
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
        if named:
            self._writer.submit(self._record(rank or 0, named))

    @torch.no_grad()
    def _record(self, rank: int, named: list[tuple[str, torch.Tensor]]) -> GradStep:
        level, bounds = self.config.grad_level, self.config.bounds
        groups: dict[torch.device, list[tuple[str, torch.Tensor]]] = {}
        for name, grad in named:
            groups.setdefault(grad.device, []).append((name, _real(grad)))
        names, shapes, stats, elements = [], [], [], []
        for group in groups.values():
            grads = [grad for _, grad in group]
            host_stats, host_elements = _to_host(*_summarise(grads, level, bounds))
            names.extend(name for name, _ in group)
            shapes.extend(tuple(grad.shape) for grad in grads)
            stats.append(host_stats)
            elements.append(host_elements)
        elements_all = elements[0] if len(elements) == 1 else np.concatenate(elements)
        return GradStep(
            rank=rank,
            step=self.step,
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


def _real(grad: torch.Tensor) -> torch.Tensor:
    """Complex gradients are probed as their real and imaginary parts (a trailing dimension of 2)."""
    return torch.view_as_real(grad) if grad.is_complex() else grad


def _chunks(grads: list[torch.Tensor]):
    """Consecutive runs of `grads` of at most _CHUNK_ELEMENTS elements (a bigger one alone)."""
    chunk, size = [], 0
    for grad in grads:
        if chunk and size + grad.numel() > _CHUNK_ELEMENTS:
            yield chunk
            chunk, size = [], 0
        chunk.append(grad)
        size += grad.numel()
    if chunk:
        yield chunk


def _summarise(grads: list[torch.Tensor], level: str, bounds) -> tuple[torch.Tensor, list[torch.Tensor]]:
    """Statistics rows (see _statistics) and per-element data (signs at L1/L2, float32 values at L0)."""
    rows, per_element = [], []
    for chunk in _chunks(grads):
        joined = torch.cat([grad.reshape(-1) for grad in chunk])  # mixed dtypes promote exactly
        sizes = [grad.numel() for grad in chunk]
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

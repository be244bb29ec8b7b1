"""The gradient probe for MindSpore: msprobe's grad_probe task, `monitor(optimizer)`, same files as PyTorch's.

MindSpore optimizers are cells called with the gradients (`optimizer(grads)`, also inside Model.train's
TrainOneStepCell), so a forward pre-hook on the optimizer sees every step's gradients, aligned with
`optimizer.parameters` (msprobe's approach). Steps count optimizer calls from 0. For the steps and ranks
the config wants, the gradients cross to the host once: on the CPU backend as zero-copy views after one
synchronisation, on a device joined into one float32 buffer and moved in one transfer. core.grad_stats
then computes max, min, norm and the L2 intervals, NumPy the signs, and core.grad_summary writes
`rank{R}/grad_summary_{step}.csv` (and `rank{R}/step{N}/{param}.npy`) on a background thread.
Gradients are only read: training is bit-identical with and without the probe. PyNative mode only.
"""

from __future__ import annotations

import mindspore as ms
import numpy as np
from mindspore import ops

from msprobe_runtime.core.config import DebuggerConfig, ensure_writable
from msprobe_runtime.core.grad_stats import statistics
from msprobe_runtime.core.grad_summary import GradStep, GradSummaryWriter, has_signs


class GradProbe:
    """Writes grad_summary_{step}.csv (and at L1/L2 the sign files) for the monitored optimizers."""

    def __init__(self, config: DebuggerConfig):
        self.config = config
        ensure_writable(config.dump_path)
        self.step = -1  # msprobe's numbering: the first optimizer step is step 0
        self.on_host = ms.get_context("device_target") == "CPU"
        self._writer = GradSummaryWriter(config.dump_path)
        self._handles = []

    def monitor(self, optimizer) -> None:
        """Probe every call of `optimizer` (its `parameters` name the gradients it receives)."""
        names = [param.name for param in optimizer.parameters]
        self._handles.append(optimizer.register_forward_pre_hook(lambda cell, args: self._on_step(names, args)))

    def flush(self) -> None:
        """Wait until every finished step's files are on disk."""
        self._writer.flush()

    def close(self) -> None:
        """Stop probing and finish writing; idempotent."""
        for handle in self._handles:
            handle.remove()
        self._handles.clear()
        self._writer.close()

    def _on_step(self, names: list[str], args: tuple) -> None:
        self.step += 1
        rank = _rank()
        if not self.config.wants_step(self.step) or (rank is not None and not self.config.wants_rank(rank)):
            return
        gradients = args[0] if args else ()
        chosen = [(name, grad) for name, grad in zip(names, gradients, strict=False)
                  if isinstance(grad, ms.Tensor) and (not self.config.param_list or name in self.config.param_list)]
        if chosen:
            self._writer.submit(self._record(rank or 0, chosen))

    def _record(self, rank: int, chosen: list) -> GradStep:
        names = tuple(name for name, _ in chosen)
        shapes = tuple(tuple(grad.shape) for _, grad in chosen)
        joined = self._joined([grad for _, grad in chosen])
        level = self.config.grad_level
        sizes = [grad.size for _, grad in chosen]
        stats = statistics(joined, sizes, self.config.bounds if level == "L2" else None)
        return GradStep(rank=rank, step=self.step, level=level, bounds=self.config.bounds, names=names,
                        shapes=shapes, stats=stats, signs=joined > 0 if has_signs(level) else None,
                        values=None if has_signs(level) else joined)

    def _joined(self, grads: list) -> np.ndarray:
        """The gradients as one flat float32 host array (one synchronisation, or one transfer from a device)."""
        if self.on_host:
            return np.concatenate([_float32(grad.asnumpy()).reshape(-1) for grad in grads])
        return ops.cat([grad.reshape(-1).astype(ms.float32) for grad in grads]).asnumpy()


def _rank() -> int | None:
    """This process's rank once mindspore.communication is initialised, else None (no rank filter then)."""
    from mindspore.communication import GlobalComm, get_rank

    return get_rank() if GlobalComm.INITED else None


def _float32(array: np.ndarray) -> np.ndarray:
    """Gradients as float32 values, msprobe's (exact for 16-bit floats)."""
    return array if array.dtype == np.float32 else array.astype(np.float32)


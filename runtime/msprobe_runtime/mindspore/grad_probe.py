"""The gradient probe for MindSpore: msprobe's grad_probe task, `monitor(optimizer)`, same files as PyTorch's.

MindSpore optimizers are cells called with the gradients (`optimizer(grads)`, also inside Model.train's
TrainOneStepCell), so a forward pre-hook on the optimizer sees every step's gradients, aligned with
`optimizer.parameters` (msprobe's approach). `monitor` also takes a cell holding optimizers (a
TrainOneStepCell, a GAN's cell around two of them) or a list of optimizers, and probes every one.
Steps count the calls of the monitored optimizers from 0, one counter for all of them (as msprobe does, and
as the PyTorch probe counts every optimizer's `step()`): a GAN's discriminator and generator updates are
two steps, each file holding the gradients that step's optimizer was given. For the steps and ranks
the config wants, the gradients cross to the host once: on the CPU backend as zero-copy views after one
synchronisation, on a device joined into one float32 buffer and moved in one transfer. core.grad_stats
then computes max, min, norm and the L2 intervals, NumPy the signs, and core.grad_summary writes
`rank{R}/grad_summary_{step}.csv` (and `rank{R}/step{N}/{param}.npy`) on a background thread.
Gradients are only read: training is bit-identical with and without the probe. PyNative mode only.
"""

from __future__ import annotations

import mindspore as ms
import numpy as np
from mindspore import nn, ops
from mindspore.experimental.optim.optimizer import Optimizer as MintOptimizer

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
        self._monitored: dict[int, nn.Cell] = {}  # id -> optimizer: each is hooked once, whatever monitor was given

    def monitor(self, target) -> None:
        """Probe every call of each optimizer in `target` (see `optimizers`); their `parameters` name the
        gradients they receive."""
        for optimizer in optimizers(target):
            if id(optimizer) not in self._monitored:
                self._monitored[id(optimizer)] = optimizer
                self._hook(optimizer)

    def _hook(self, optimizer) -> None:
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
        self._monitored.clear()
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


def optimizers(target) -> list[nn.Cell]:
    """The optimizers in `target`: an optimizer (`nn.*`, `mint.optim`), a cell holding optimizers (a
    TrainOneStepCell, a GAN's cell around two train-step cells), or a list or tuple of such. An optimizer
    that another one wraps (`nn.LARS(SGD)`) is not taken apart: the outer one's call is the step."""
    found: dict[int, nn.Cell] = {}
    for item in target if isinstance(target, (list, tuple)) else [target]:
        if not isinstance(item, nn.Cell):
            raise TypeError("monitor(optimizer) takes a MindSpore optimizer, a cell holding optimizers (a "
                            f"TrainOneStepCell) or a list or tuple of them, not {type(item).__name__}")
        found.update((id(optimizer), optimizer) for optimizer in _outermost_optimizers(item))
    if not found:
        raise TypeError(f"monitor(optimizer): no optimizer in the {type(target).__name__} given; pass the "
                        "optimizer, or a cell that holds it (a TrainOneStepCell)")
    return list(found.values())


def _outermost_optimizers(cell: nn.Cell) -> list[nn.Cell]:
    if isinstance(cell, (nn.Optimizer, MintOptimizer)):
        return [cell]
    return [optimizer for child in cell.cells() for optimizer in _outermost_optimizers(child)]


def _rank() -> int | None:
    """This process's rank once mindspore.communication is initialised, else None (no rank filter then)."""
    from mindspore.communication import GlobalComm, get_rank

    return get_rank() if GlobalComm.INITED else None


def _float32(array: np.ndarray) -> np.ndarray:
    """Gradients as float32 values, msprobe's (exact for 16-bit floats)."""
    return array if array.dtype == np.float32 else array.astype(np.float32)


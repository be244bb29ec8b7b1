"""The transform registry, in the order their edits are planned, and selection by name or lint rule."""

from __future__ import annotations

from collections.abc import Iterable

from msprobe_rewriter.instrument.transforms.augment import RandomAugment
from msprobe_rewriter.instrument.transforms.base import Example, Transform
from msprobe_rewriter.instrument.transforms.contiguous import Contiguous
from msprobe_rewriter.instrument.transforms.cudnn import CudnnBenchmark
from msprobe_rewriter.instrument.transforms.data_shuffle import DataShuffle
from msprobe_rewriter.instrument.transforms.data_workers import DataWorkers
from msprobe_rewriter.instrument.transforms.debugger import Debugger, GradProbe
from msprobe_rewriter.instrument.transforms.device_rng import DeviceRng
from msprobe_rewriter.instrument.transforms.file_order import FileOrder
from msprobe_rewriter.instrument.transforms.seed import Seed
from msprobe_rewriter.rules import RULES_BY_CODE

ALL_TRANSFORMS: tuple[type[Transform], ...] = (
    Seed, CudnnBenchmark, DeviceRng, DataShuffle, DataWorkers, FileOrder, RandomAugment, Contiguous, Debugger, GradProbe,
)
BY_NAME = {t.name: t for t in ALL_TRANSFORMS}


class SelectionError(ValueError):
    """An unknown transform or rule name on the command line."""


def _matching(selector: str) -> set[str]:
    selector = selector.strip()
    rule = RULES_BY_CODE.get(selector.upper())
    wanted = rule.name if rule is not None else selector.lower()
    found = {t.name for t in ALL_TRANSFORMS if t.name == wanted or wanted in t.fixes}
    if not found:
        raise SelectionError(f"unknown transform or rule {selector!r} (transforms: {', '.join(BY_NAME)})")
    return found


def select(chosen: Iterable[str], ignored: Iterable[str], grad_probe: bool = False) -> frozenset[str]:
    """Transform names to run: `chosen` (default: every default transform) minus `ignored`; the gradient
    probe brings the debugger along."""
    chosen = [s for s in chosen if s.strip()]
    names: set[str] = set()
    for selector in chosen:
        names |= _matching(selector)
    if not chosen:
        names = {t.name for t in ALL_TRANSFORMS if t.default}
    if grad_probe:
        names.add(GradProbe.name)
    if GradProbe.name in names:
        names.add(Debugger.name)  # the probe is the debugger's `monitor`
    for selector in ignored:
        if selector.strip():
            names -= _matching(selector)
    return frozenset(names)


__all__ = ["ALL_TRANSFORMS", "BY_NAME", "Example", "SelectionError", "Transform", "select"]

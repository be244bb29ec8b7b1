"""The Transform base class: a name, the lint rules it fixes, before/after examples, and `apply`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar

if TYPE_CHECKING:
    from msprobe_rewriter.instrument.unit import Unit


@dataclass(frozen=True)
class Example:
    """Code before, and after the transform (markers left out); `options` tweak the run."""

    before: str
    after: str
    options: dict = field(default_factory=dict)
    path: str = "train.py"


class Transform:
    """One kind of edit. Subclasses plan edits on a `Unit`; the driver applies all of them in one pass."""

    name: ClassVar[str]
    fixes: ClassVar[tuple[str, ...]]  # lint rule names whose hazards it removes (selectable by them)
    rule: ClassVar[str | None] = None  # the lint rule whose findings drive it, if any
    summary: ClassVar[str]
    details: ClassVar[str]
    examples: ClassVar[tuple[Example, ...]]
    default: ClassVar[bool] = True

    def apply(self, unit: Unit) -> None:
        """Plan this transform's edits on `unit` (add to `unit.edits`, explain skips with `unit.note`)."""
        raise NotImplementedError

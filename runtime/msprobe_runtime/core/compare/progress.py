"""Progress reporting hooks for long comparisons (the CLI draws them as a progress bar)."""

from __future__ import annotations


class Progress:
    """Silent progress: subclass and override to show it."""

    def start(self, label: str, total: int) -> None:
        """A stage of `total` units begins."""

    def advance(self, count: int) -> None:
        """`count` more units are done."""

    def finish(self) -> None:
        """The stage is over."""

"""What an output format may need beyond the findings themselves."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


def _no_lines(path: str) -> list[str]:
    return []


@dataclass
class RenderOptions:
    """Source access for the text caret, colour, and `--statistics`."""

    lines_of: Callable[[str], list[str]] = _no_lines
    color: bool = False
    statistics: bool = False

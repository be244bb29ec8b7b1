"""The Finding record every rule produces and every output format consumes."""

from __future__ import annotations

from dataclasses import asdict, dataclass

SEVERITIES = ("error", "warning", "info")


@dataclass(frozen=True)
class Finding:
    """One reported hazard; lines and columns are 1-based, columns count characters."""

    path: str
    line: int
    column: int
    end_line: int
    end_column: int
    code: str
    name: str
    severity: str
    message: str
    fixable: bool = False

    def to_dict(self) -> dict:
        """The JSON contract's field set, in contract order."""
        return asdict(self)


@dataclass(frozen=True)
class FileError:
    """A file that could not be linted, with a one-line reason."""

    path: str
    message: str

    def to_dict(self) -> dict:
        return asdict(self)

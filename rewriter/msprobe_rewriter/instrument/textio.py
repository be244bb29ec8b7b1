"""Source bytes <-> text without losing anything: BOM, PEP 263 encoding, line endings, file mode.

Text keeps its line endings as they are (no newline translation); `split_lines` splits where Python's
tokenizer does (`\\r\\n`, `\\r`, `\\n`) and keeps each line's ending.
"""

from __future__ import annotations

import io
import os
import re
import stat
import tempfile
import tokenize
from dataclasses import dataclass

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+")
_ENDING = re.compile(r"(\r\n|\r|\n)$")


@dataclass(frozen=True)
class Source:
    """Decoded source text and how to encode it back to the same bytes."""

    text: str
    encoding: str  # as `tokenize.detect_encoding` reports it; "utf-8-sig" keeps a BOM

    def encode(self, text: str) -> bytes:
        """`text` in this file's encoding (with its BOM when it had one)."""
        return text.encode(self.encoding)


def decode(data: bytes) -> Source:
    """Decode Python source bytes honouring a BOM and a PEP 263 cookie; raises SyntaxError/UnicodeError."""
    encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    return Source(data.decode(encoding), encoding)


def split_lines(text: str) -> list[str]:
    """Lines of `text`, each with its own line ending (the last one may have none)."""
    return _LINE.findall(text)


def ending(line: str) -> str:
    """The line ending of `line` ('' for a last line without one)."""
    match = _ENDING.search(line)
    return match.group(1) if match else ""


def body(line: str) -> str:
    """`line` without its line ending."""
    return line[: len(line) - len(ending(line))]


def write_atomically(path: str, data: bytes) -> None:
    """Replace `path` by `data` through a temporary file in the same folder; keep the file's mode."""
    target = os.path.realpath(path)
    mode = stat.S_IMODE(os.stat(target).st_mode)
    folder = os.path.dirname(target) or "."
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(target) + ".", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise

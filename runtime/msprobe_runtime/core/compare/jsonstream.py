"""Streaming reader for dump.json: the top-level keys are decoded whole, the `data` object in batches of
records, so memory holds one batch of JSON text and objects at a time whatever the file size.

Accepts what msprobe writes (indent=1, NaN/Infinity spelled as Python's json writes them) and what our
runtime writes (one record per line). Records of `data` start on their own line at one indentation, so a
batch is cut at the last line that starts a record and handed over as text (`Batch`), which its reader
scans (table.py) or decodes in one call (orjson when installed, with Python's json for batches holding NaN).
Files without that shape are decoded one record at a time. Bad JSON raises DumpFormatError with the line
number.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

try:  # optional: several times faster than the standard decoder
    import orjson
except ImportError:  # pragma: no cover - depends on the environment
    orjson = None

_CHUNK = 8 * 2**20  # characters read at a time
_SPACE = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()


class DumpFormatError(ValueError):
    """The file is not the JSON object a dump file must be."""


class _Text:
    """A window on a text file: `buffer[pos:]` is what is not yet decoded."""

    def __init__(self, handle, on_chunk=None):
        self.handle = handle
        self.on_chunk = on_chunk
        self.buffer = ""
        self.pos = 0
        self.consumed_lines = 0  # newlines in text dropped from the window (for error messages)
        self.eof = False

    def more(self) -> bool:
        """Read the next chunk into the window; False at end of file."""
        if self.eof:
            return False
        chunk = self.handle.read(_CHUNK)
        if not chunk:
            self.eof = True
            return False
        if self.on_chunk is not None:
            self.on_chunk(len(chunk))
        self.consumed_lines += self.buffer.count("\n", 0, self.pos)
        self.buffer = self.buffer[self.pos:] + chunk
        self.pos = 0
        return True

    def skip_space(self) -> str:
        """Skip whitespace; return the next character ('' at end of file)."""
        while True:
            self.pos = _SPACE.match(self.buffer, self.pos).end()
            if self.pos < len(self.buffer):
                return self.buffer[self.pos]
            if not self.more():
                return ""

    def expect(self, characters: str) -> str:
        """Consume one of `characters` (after whitespace) and return it."""
        found = self.skip_space()
        if not found:
            self.fail("the file ends before its JSON does (a truncated dump?)")
        if found not in characters:
            self.fail(f"expected {' or '.join(repr(c) for c in characters)}, found {found!r}")
        self.pos += 1
        return found

    def value(self):
        """Decode one JSON value, reading more text while it is incomplete."""
        self.skip_space()
        while True:
            try:
                value, end = _DECODER.raw_decode(self.buffer, self.pos)
            except json.JSONDecodeError as error:
                if self.more():
                    continue
                if not self.buffer[error.pos:].strip():
                    self.fail("the file ends before its JSON does (a truncated dump?)", error.pos)
                self.fail(error.msg, error.pos)
            if end == len(self.buffer) and not self.eof and self.more():
                continue  # a number may go on in the next chunk: decode again with it
            self.pos = end
            return value

    def fail(self, message: str, pos: int | None = None):
        where = self.pos if pos is None else pos
        line = self.consumed_lines + self.buffer.count("\n", 0, where) + 1
        raise DumpFormatError(f"{message} (line {line})")


@dataclass
class Batch:
    """Complete records of `data` as JSON text (`"name": {...}, "name": {...}`), cut from `window` at `start`
    (`lines_before` newlines were read before the window)."""

    text: str
    window: str = field(repr=False)
    start: int
    lines_before: int
    _encoded: bytes | None = field(default=None, repr=False)

    @property
    def first_line(self) -> int:
        """The line the batch starts on (counted only when an error is reported)."""
        return self.lines_before + self.window.count("\n", 0, self.start) + 1

    def encoded(self) -> bytes:
        """The text as UTF-8 (made once)."""
        if self._encoded is None:
            self._encoded = self.text.encode("utf-8")
        return self._encoded

    def records(self) -> dict:
        """The records, decoded (DumpFormatError with the line number of bad JSON)."""
        try:
            return _decode_batch(self.encoded())
        except json.JSONDecodeError as error:
            raise DumpFormatError(f"{error.msg} (line {self.first_line + error.lineno - 1})") from None


def read_object(handle, on_data: Callable[[Iterator[Batch | tuple[str, object]]], None], on_chunk=None) -> dict:
    """Decode the top-level JSON object from `handle`; the `data` member is not kept but handed to
    `on_data` as an iterator of `Batch`es and (record name, record) pairs in file order, consumed there.
    Returns the other members.
    `on_chunk(n)` is told the size of each chunk of text read (for progress bars)."""
    text = _Text(handle, on_chunk)
    text.expect("{")
    header: dict = {}
    if text.skip_space() == "}":
        text.pos += 1
        return header
    while True:
        key = text.value()
        if not isinstance(key, str):
            text.fail("expected a key string")
        text.expect(":")
        if key == "data" and text.skip_space() == "{":
            text.pos += 1
            header["data"] = True
            members = _members(text)
            on_data(members)
            for _ in members:  # whatever on_data left unread
                pass
        else:
            header[key] = text.value()
        if text.expect(",}") == "}":
            return header


def _record_marker(text: _Text) -> str | None:
    """The text that starts a record line ("\\n" + its indentation + a quote), from the first record;
    None when records do not start on their own lines."""
    while _SPACE.match(text.buffer, text.pos).end() == len(text.buffer) and text.more():
        pass
    start = text.pos
    space = text.buffer[start:_SPACE.match(text.buffer, start).end()]
    if "\n" not in space or text.buffer[start + len(space):start + len(space) + 1] != '"':
        return None
    return "\n" + space[space.rindex("\n") + 1:] + '"'


def _decode_batch(body: bytes) -> dict:
    """Decode `"name": {...}, "name": {...}` (complete records) as one object."""
    wrapped = b"{" + body + b"}"
    if orjson is not None:
        try:
            return orjson.loads(wrapped)
        except orjson.JSONDecodeError:
            pass  # NaN and Infinity, which orjson does not read; or bad JSON, reported below
    return json.loads(wrapped)


def _batches(text: _Text, marker: str) -> Iterator[Batch]:
    """Records a batch at a time, up to the last record start in the window; the rest (the last record and
    the closing brace) is left for the one-at-a-time reader."""
    while True:
        cut = text.buffer.rfind(marker, text.pos)
        if cut > text.pos:
            end = cut
            while end > text.pos and text.buffer[end - 1] in " \t\r\n":
                end -= 1
            end -= text.buffer[end - 1] == ","  # the comma after the last record of the batch
            batch = Batch(text.buffer[text.pos:end], text.buffer, text.pos, text.consumed_lines)
            text.pos = cut + 1
            yield batch
        if not text.more():
            return


def _members(text: _Text) -> Iterator[Batch | tuple[str, object]]:
    """The members of an object whose `{` was just consumed, up to and including its `}`."""
    marker = _record_marker(text)
    if marker is not None:
        yield from _batches(text, marker)
    if text.skip_space() == "}":
        text.pos += 1
        return
    while True:
        key = text.value()
        if not isinstance(key, str):
            text.fail("expected a record name")
        text.expect(":")
        yield key, text.value()
        if text.expect(",}") == "}":
            return

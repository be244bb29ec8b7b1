"""JSON text of dump files, fast: orjson when it is installed, Python's json otherwise, same meaning.

Values are written as Python's json writes them where it matters to readers: NaN and infinities as
`NaN`/`Infinity`/`-Infinity` (msprobe's spelling; orjson would write `null`). Records mark such floats
(`json_float`) with a float subclass that orjson refuses, so Python's json writes those records, and
only those. orjson writes compact JSON and spells some numbers differently (`1e-5` for `1e-05`): the
same values for every JSON reader.
"""

from __future__ import annotations

import json
from math import isfinite

import numpy as np

try:  # optional: ~10x faster than the standard encoder
    import orjson
except ImportError:  # pragma: no cover - depends on the environment
    orjson = None

_encode = json.JSONEncoder(check_circular=False).encode  # records are trees: no cycle check needed
_key = json.encoder.encode_basestring_ascii


class _NonFinite(float):
    """A NaN or an infinity in a record (see json_float)."""

    __slots__ = ()


def json_float(value: float) -> float:
    """`value` for a record: a NaN or an infinity marked so that it is written `NaN`, `Infinity`, as msprobe
    writes them (orjson refuses the mark and would write null)."""
    return value if isfinite(value) else _NonFinite(value)


def json_value(value):
    """`value` for a record: a float through json_float, anything else as it is."""
    return json_float(value) if value.__class__ is float else value


def json_bytes(value) -> bytes:
    """`value` as JSON (UTF-8); floats in it that may not be finite must come from json_float."""
    if orjson is not None:
        try:
            return orjson.dumps(value)
        except TypeError:  # what orjson refuses (json_float's marks, ints past 64 bits, non-string keys)
            pass
    return _encode(value).encode()


def key_bytes(key: str) -> bytes:
    """An object key as JSON text."""
    return _key(key).encode()


def number_texts(values: list) -> list[bytes]:
    """Each of `values` (None, bool, int or float) as JSON text, in one encoder call."""
    if not values:
        return []
    if orjson is None:
        return _encode(values)[1:-1].encode().split(b", ")
    texts = orjson.dumps(values)[1:-1].split(b",")
    if texts.count(b"null") == values.count(None):  # no NaN or infinity became null
        return texts
    return [_encode(value).encode() if text == b"null" and value is not None else text
            for value, text in zip(values, texts, strict=True)]


def float_array_text(raw: bytes) -> bytes:
    """float64 values (`raw`, native byte order) as one JSON array, in one encoder call; NaN and infinities
    come out as orjson or Python's json writes them (`null` or `NaN`): callers write those themselves."""
    values = np.frombuffer(raw, dtype=np.float64)
    if orjson is not None:
        return orjson.dumps(values, option=orjson.OPT_SERIALIZE_NUMPY)
    return _encode(values.tolist()).encode()

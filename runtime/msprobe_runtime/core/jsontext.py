"""JSON text of dump files, fast: orjson when it is installed, Python's json otherwise, same meaning.

Values are written as Python's json writes them where it matters to readers: NaN and infinities as
`NaN`/`Infinity`/`-Infinity` (msprobe's spelling; orjson would write `null`, so text in which orjson
wrote a `null` is made again by Python's json). orjson writes compact JSON and spells some numbers
differently (`1e-5` for `1e-05`): the same values for every JSON reader.
"""

from __future__ import annotations

import json

try:  # optional: ~10x faster than the standard encoder
    import orjson
except ImportError:  # pragma: no cover - depends on the environment
    orjson = None

_encode = json.JSONEncoder(check_circular=False).encode  # records are trees: no cycle check needed
_key = json.encoder.encode_basestring_ascii


def json_bytes(value) -> bytes:
    """`value` as JSON (UTF-8)."""
    if orjson is not None:
        try:
            text = orjson.dumps(value)
        except TypeError:  # what orjson refuses (ints past 64 bits, non-string keys): Python's json decides
            pass
        else:
            if b"null" not in text:  # a null may be a NaN or an infinity orjson could not spell
                return text
    return _encode(value).encode()


def key_bytes(key: str) -> bytes:
    """An object key as JSON text."""
    return _key(key).encode()


def number_texts(values: list) -> list[bytes]:
    """Each of `values` (None, bool, int or float) as JSON text, in one encoder call."""
    if not values:
        return []
    if orjson is not None:
        texts = orjson.dumps(values)[1:-1].split(b",")
        if texts.count(b"null") == values.count(None):  # no NaN or infinity became null
            return texts
    return _encode(values)[1:-1].encode().split(b", ")

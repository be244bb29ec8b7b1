"""A dump.json read into columns: one row per tensor or non-tensor argument, as msprobe's compare reads it.

Row names follow msprobe's `read_op`: `{record}.input.{i}` (positional and keyword arguments, keywords by
name), `{record}.parameters.{name}`, `{record}.output.{i}`, `{record}.{param}` for parameter gradients;
nested lists and dicts add `.{index}`/`.{key}`. Within a record rows are ordered inputs, parameters,
outputs, parameter gradients (msprobe's `reorder_index`). Statistics are float64 columns; a statistic
that is not a number (null, a bool, a string) is kept as text beside them, as msprobe compares text.
"""

from __future__ import annotations

import functools
import operator
import zlib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from msprobe_runtime.core.compare.jsonstream import Batch, DumpFormatError, read_object

try:  # compiled when the package was built with a C compiler (_dumpscan.c); the Python reader is the reference
    from msprobe_runtime.core.compare import _dumpscan
except ImportError:  # pragma: no cover - depends on the build
    _dumpscan = None

# row states, in msprobe's order within a record
INPUT, PARAMETERS, OUTPUT, PARAMETERS_GRAD = 0, 1, 2, 3
_SECTIONS = (("input_args", ".input", INPUT), ("input_kwargs", ".input", INPUT), ("input", ".input", INPUT),
             ("parameters", ".parameters", PARAMETERS), ("output", ".output", OUTPUT))
# kinds of a statistic cell
NUMBER, NULL, TEXT = 0, 1, 2
_STATS = ("Max", "Min", "Mean", "Norm")
_MAX_DEPTH = 64


@dataclass
class DumpTable:
    """One side of a comparison, column by column."""

    path: Path
    header: dict
    records: list[str]
    row_record: np.ndarray  # int32: index into `records`
    row_suffix: np.ndarray  # int32: index into `suffixes`
    suffixes: list[str]
    state: np.ndarray  # int8: INPUT, PARAMETERS, OUTPUT, PARAMETERS_GRAD
    dtype: np.ndarray  # object: str
    shape: np.ndarray  # object: str, msprobe's spelling "[3, 16]"
    stats: np.ndarray  # float64 [rows, 4]: Max, Min, Mean, Norm (NaN where not a number)
    stat_kind: np.ndarray  # int8 [rows, 4]: NUMBER, NULL, TEXT
    stat_text: dict[tuple[int, int], str]  # (row, column) -> text of a TEXT cell
    requires_grad: np.ndarray  # int8: -1 unknown, 0, 1
    digest: np.ndarray  # object: md5 (msprobe) or hash (ours); for non-tensors a CRC32 of the value
    data_name: np.ndarray  # object: tensor mode, the data file of the row
    is_tensor: np.ndarray  # bool
    mode: str = "statistics"  # statistics, tensor, md5, hash
    stacks: dict[str, list[str]] = field(default_factory=dict)  # record -> stack lines, innermost first
    parents: dict[str, str | None] = field(default_factory=dict)  # record -> its module's record (construct.json)

    def __len__(self) -> int:
        return len(self.row_record)

    @functools.cached_property
    def api_names(self) -> list[str]:
        """Per record, its API or module name: the second dotted part (`Functional.linear.0.forward`: `linear`)."""
        return [name.split(".", 2)[1] if "." in name else "" for name in self.records]

    def row_names(self, rows: np.ndarray | None = None) -> list[str]:
        """Full msprobe row names (`Functional.linear.0.forward.input.0`) of `rows` (all by default)."""
        rows = np.arange(len(self)) if rows is None else rows
        return (self._name_parts[0][self.row_record[rows]] + self._name_parts[1][self.row_suffix[rows]]).tolist()

    @functools.cached_property
    def _name_parts(self) -> tuple[np.ndarray, np.ndarray]:
        """The record names and suffixes as object arrays (rows' names are joined from them, vectorised)."""
        return np.asarray(self.records, dtype=object), np.asarray(self.suffixes, dtype=object)


_BASE_KEYS = ("dtype", "shape", "Max", "Min", "Mean", "Norm", "requires_grad")
_OPTIONAL_KEYS = ("md5", "hash", "data_name")
_SCALAR_TYPES = {"int": "<class 'int'>", "float": "<class 'float'>"}
_BLOCK = 1 << 16  # rows turned into arrays at a time (bounds the Python objects held)


class _Builder:
    """Accumulates rows while records stream in; every _BLOCK rows become compact arrays."""

    def __init__(self):
        self.records: list[str] = []
        self.codes: list[int] = []  # per pending row: record << 32 | suffix << 2 | state
        self.leaves: list[tuple] = []  # per pending tensor row: its values of `self.keys`
        self.others: list[tuple] = []  # per pending non-tensor row: (position, dtype, shape, stats, digest)
        self.keys: tuple[str, ...] = _BASE_KEYS  # with md5/hash and data_name when the first tensor has them
        self.getter = None
        self.suffix_codes: dict[str, int] = {}
        self.list_codes: dict[tuple[str, bool], list[int]] = {}
        self.odd: list[tuple[int, int, int, str]] = []  # (row, column, TEXT, text) of non-number statistics
        self.blocks: list[dict] = []
        self.rows = 0

    def add_batch(self, batch: Batch) -> None:
        """Add a batch of records: as columns when `_dumpscan` reads the whole batch, else record by record."""
        columns = _dumpscan.scan(batch.encoded()) if _dumpscan is not None else None
        if columns is None:
            for name, record in batch.records().items():
                self.add_record(name, record)
            return
        self._flush()
        self._add_columns(columns)

    def _add_columns(self, columns: dict) -> None:
        """The rows `_dumpscan.scan` read, as one block (the arrays `_flush` makes from walked records)."""
        count, first = columns["rows"], len(self.records)
        self.records += columns["names"]
        if not count:
            return
        self.keys += tuple(key for key, present in zip(_OPTIONAL_KEYS, columns["present"], strict=True)
                           if present and key not in self.keys)
        suffixes = np.array([self._suffix(text) >> 2 for text in columns["suffixes"]], dtype=np.int32)
        tensor = np.frombuffer(columns["tensor"], dtype=np.int8).astype(bool)
        dtype = np.array([*columns["dtypes"], None], dtype=object)[np.frombuffer(columns["dtype"], dtype=np.int32)]
        shape = np.array([*columns["shapes"], None], dtype=object)[np.frombuffer(columns["shape"], dtype=np.int32)]
        stats = np.frombuffer(columns["stats"], dtype=np.float64).reshape(count, 4).copy()
        kinds = np.frombuffer(columns["kinds"], dtype=np.int8).reshape(count, 4).copy()
        digest = self._digests(columns, tensor)
        for row, leaf in columns["python_rows"]:  # arguments the scanner does not describe
            dtype[row], shape[row], values, digest[row] = _describe(leaf)
            cells = self._number_cells(self.rows + row, values)
            stats[row] = [np.nan if cell is None else cell for cell in cells]
            kinds[row] = [NULL if cell is None else NUMBER for cell in cells]
        self.odd += [(self.rows + row, column, TEXT, text) for row, column, text in columns["texts"]]
        self.blocks.append({
            "record": np.frombuffer(columns["record"], dtype=np.int32) + np.int32(first),
            "suffix": suffixes[np.frombuffer(columns["suffix"], dtype=np.int32)],
            "state": np.frombuffer(columns["state"], dtype=np.int8).copy(), "tensor": tensor,
            "dtype": _shared(dtype), "shape": _shared(shape), "digest": digest,
            "data_name": np.array(columns["data_name"], dtype=object) if "data_name" in self.keys
            else np.full(count, None, dtype=object),
            "requires_grad": np.frombuffer(columns["requires_grad"], dtype=np.int8).copy(), "stats": stats,
            "stat_kind": kinds})
        self.rows += count

    def _digests(self, columns: dict, tensor: np.ndarray) -> np.ndarray:
        """The digest column of scanned rows: a tensor's md5 (else its hash) when the dump has them, a number
        argument's CRC-32."""
        digest = np.array(columns["digest"], dtype=object)
        if "md5" in self.keys:
            md5 = np.array(columns["md5"], dtype=object)
            chosen = np.where(pd.isna(md5), np.array(columns["hash"], dtype=object), md5) if "hash" in self.keys \
                else md5
        elif "hash" in self.keys:
            chosen = np.array(columns["hash"], dtype=object)
        else:
            chosen = np.full(len(digest), None, dtype=object)
        return np.where(tensor, chosen, digest)

    def add_record(self, name: str, record) -> None:
        """Add one decoded record."""
        if not isinstance(record, dict):
            raise DumpFormatError(f"record '{name}' is not an object")
        index = len(self.records)
        self.records.append(name)
        if "parameters_grad" in name.rsplit(".", 2)[-2:]:
            self._walk(record, "", index << 32 | PARAMETERS_GRAD, 0, grads=True)
        else:
            for key, prefix, state in _SECTIONS:
                if key in record:
                    self._walk(record[key], prefix, index << 32 | state, 0, grads=False)
        if len(self.codes) >= _BLOCK:
            self._flush()

    def _suffix(self, suffix: str) -> int:
        code = self.suffix_codes.get(suffix)
        if code is None:
            code = self.suffix_codes[suffix] = len(self.suffix_codes)
        return code << 2

    def _position_codes(self, suffix: str, count: int, grads: bool) -> list[int]:
        """Suffix codes of the items of a list at `suffix` (all `suffix` itself for gradients), cached."""
        key = (suffix, grads)
        codes = self.list_codes.get(key)
        if codes is None or len(codes) < count:
            codes = self.list_codes[key] = [self._suffix(suffix if grads else f"{suffix}.{position}")
                                            for position in range(max(count, 8))]
        return codes

    def _walk(self, value, suffix: str, base: int, depth: int, grads: bool) -> None:
        if depth > _MAX_DEPTH:
            raise DumpFormatError(f"record '{self.records[base >> 32]}' is nested too deeply")
        if value.__class__ is list:
            getter, width = self.getter, len(self.keys) + 1  # the keys and "type"
            codes = self._position_codes(suffix, len(value), grads)
            for position, item in enumerate(value):
                if getter is not None and item.__class__ is dict and len(item) == width and "dtype" in item:
                    try:  # the common case, in one C call: a tensor with every key
                        leaf = getter(item)
                    except KeyError:
                        pass
                    else:
                        self.codes.append(base | codes[position])
                        self.leaves.append(leaf)
                        continue
                elif item.__class__ is dict and len(item) == 2 and item.get("type") in _SCALAR_TYPES:
                    value = item.get("value")  # a number argument: its value is its statistics
                    if value.__class__ is not bool:
                        self.others.append((len(self.codes), _SCALAR_TYPES[item["type"]], "[]", (value,) * 4,
                                            f"{zlib.crc32(str(value).encode()):08x}"))
                        self.codes.append(base | codes[position])
                        continue
                self._walk(item, suffix if grads else f"{suffix}.{position}", base, depth + 1, grads)
        elif value.__class__ is dict:
            if isinstance(value.get("type"), str):
                self._leaf(value, suffix, base)
            else:
                for key, item in value.items():
                    self._walk(item, f"{suffix}.{key}", base, depth + 1, grads)
        elif value is None:
            self._other(suffix, base, "N/A", "N/A", (None,) * 4, None)

    def _leaf(self, leaf: dict, suffix: str, base: int) -> None:
        if "dtype" in leaf:
            new_keys = tuple(key for key in _OPTIONAL_KEYS if key in leaf and key not in self.keys)
            if new_keys or self.getter is None:  # keys only grow: earlier rows lack the new ones
                self.keys += new_keys
                self.getter = operator.itemgetter(*self.keys)
            self.codes.append(base | self._suffix(suffix))
            self.leaves.append(tuple(leaf.get(key) for key in self.keys))
            return
        self._other(suffix, base, *_describe(leaf))

    def _other(self, suffix: str, base: int, dtype: str, shape: str, stats: tuple, digest) -> None:
        """A row that is not a tensor; its statistics are its value (see `_number_cells`)."""
        position = len(self.codes)
        self.others.append((position, dtype, shape, self._number_cells(self.rows + position, stats), digest))
        self.codes.append(base | self._suffix(suffix))

    def _number_cells(self, row: int, stats: tuple) -> list:
        """Statistics of non-tensor row `row`: numbers and None stay, other values become None here and text
        in `odd` (the cell's kind becomes TEXT when the table is joined)."""
        cells = []
        for column, value in enumerate(stats):
            if value is None or value.__class__ in (int, float):
                cells.append(value)
            else:
                cells.append(None)
                self.odd.append((row, column, TEXT, str(value)))
        return cells

    def _flush(self) -> None:
        """Turn the pending rows into one block of arrays."""
        count = len(self.codes)
        if not count:
            return
        codes = np.fromiter(self.codes, dtype=np.int64, count=count)
        tensor = np.ones(count, dtype=bool)
        tensor[[other[0] for other in self.others]] = False
        block = {"record": (codes >> 32).astype(np.int32), "suffix": ((codes >> 2) & 0x3FFFFFFF).astype(np.int32),
                 "state": (codes & 3).astype(np.int8), "tensor": tensor}
        width = len(self.keys)  # keys only grow, so rows read before a new key are the shorter, first ones
        leaves = [leaf if len(leaf) == width else leaf + (None,) * (width - len(leaf)) for leaf in self.leaves] \
            if any(len(leaf) != width for leaf in self.leaves[:1] + self.leaves[-1:]) else self.leaves
        fields = dict(zip(self.keys, zip(*leaves, strict=True), strict=True)) if leaves else {}
        other_fields = list(zip(*self.others, strict=True)) if self.others else [[]] * 5
        places, other_places = np.flatnonzero(tensor), np.asarray(other_fields[0], dtype=np.int64)

        def column(key: str, other_values, default=None) -> np.ndarray:
            cells = np.full(count, default, dtype=object)
            if key in fields:
                values = fields[key] if key != "shape" else _shape_texts(fields[key])
                cells[places] = np.fromiter(values, dtype=object, count=len(places))
            if other_values:
                cells[other_places] = np.fromiter(other_values, dtype=object, count=len(other_places))
            return cells

        block["dtype"] = _shared(column("dtype", other_fields[1]))
        block["shape"] = _shared(column("shape", other_fields[2]))
        digests = column("md5" if "md5" in fields else "hash", other_fields[4])
        if "md5" in fields and "hash" in fields:
            digests = np.where(pd.isna(digests), column("hash", ()), digests)
        block["digest"] = digests
        block["data_name"] = column("data_name", None)
        block["requires_grad"] = _flags(column("requires_grad", None))
        other_stats = list(zip(*other_fields[3], strict=True)) if self.others else [()] * 4
        block["stats"], block["stat_kind"] = _statistics(
            [column(key, other_stats[index]) for index, key in enumerate(_STATS)], self.rows, self.odd)
        self.blocks.append(block)
        self.rows += count
        self.codes, self.leaves, self.others = [], [], []

    def table(self, path: Path, header: dict, stacks: dict) -> DumpTable:
        self._flush()
        blocks = self.blocks or [{"record": np.zeros(0, np.int32), "suffix": np.zeros(0, np.int32),
                                  "state": np.zeros(0, np.int8), "tensor": np.zeros(0, bool),
                                  "dtype": np.zeros(0, object), "shape": np.zeros(0, object),
                                  "digest": np.zeros(0, object), "data_name": np.zeros(0, object),
                                  "requires_grad": np.zeros(0, np.int8), "stats": np.zeros((0, 4)),
                                  "stat_kind": np.zeros((0, 4), np.int8)}]
        joined = {key: np.concatenate([block[key] for block in blocks]) for key in blocks[0]}
        stat_text = {}
        for row, column, kind, text in self.odd:
            joined["stat_kind"][row, column] = kind
            stat_text[(row, column)] = text
        _bool_statistics(joined["dtype"], joined["stats"], joined["stat_kind"], stat_text)
        return DumpTable(
            path=path, header=header, records=self.records, row_record=joined["record"],
            row_suffix=joined["suffix"], suffixes=list(self.suffix_codes), state=joined["state"],
            dtype=joined["dtype"], shape=joined["shape"], stats=joined["stats"], stat_kind=joined["stat_kind"],
            stat_text=stat_text, requires_grad=joined["requires_grad"], digest=joined["digest"],
            data_name=joined["data_name"], is_tensor=joined["tensor"], mode=_mode(header, self.keys), stacks=stacks)


def _describe(leaf: dict) -> tuple[str, str, tuple, str]:
    """msprobe's dtype, shape, statistics and digest of an argument that is not a tensor."""
    kind = leaf["type"]
    value = leaf.get("value")
    if kind == "torch.Size":
        dtype, shape, stats = kind, str(value), (None,) * 4
    elif kind == "slice":
        dtype, shape, stats = kind, str(np.shape(np.array(value))), (None,) * 4
    elif kind == "torch.ProcessGroup":
        value = leaf.get("group_ranks")
        dtype, shape, stats = kind, "[]", (str(value),) * 4
    else:
        dtype, shape, stats = f"<class '{kind}'>", "[]", (value,) * 4
    return dtype, shape, stats, f"{zlib.crc32(str(value).encode()):08x}"


def _bool_statistics(dtypes: np.ndarray, stats: np.ndarray, kinds: np.ndarray, texts: dict) -> None:
    """Bool tensors: msprobe compares their Max/Min as the text "True"/"False"."""
    for row in np.flatnonzero((dtypes == "torch.bool") | (dtypes == "Bool")).tolist():  # PyTorch, MindSpore
        for column in range(4):
            if kinds[row, column] == NUMBER and not np.isnan(stats[row, column]):
                kinds[row, column] = TEXT
                texts[(row, column)] = "True" if stats[row, column] else "False"
                stats[row, column] = np.nan


def _shape_texts(shapes: tuple) -> np.ndarray:
    """msprobe's spelling of each shape ("[3, 16]"), made once per distinct shape."""
    keys = np.fromiter((tuple(shape) if shape.__class__ is list else shape for shape in shapes), dtype=object,
                       count=len(shapes))
    codes, uniques = pd.factorize(keys, use_na_sentinel=False)
    texts = np.array([str(list(key)) if key.__class__ is tuple else "None" if pd.isna(key) else str(key)
                      for key in uniques], dtype=object)  # factorize turns a missing shape (None) into NaN
    return texts[codes]


def _shared(array: np.ndarray) -> np.ndarray:
    """The same strings, equal ones sharing one object (a block holds few distinct dtypes and shapes)."""
    codes, uniques = pd.factorize(array, use_na_sentinel=False)
    return np.asarray(uniques, dtype=object)[codes]


def _flags(cells: np.ndarray) -> np.ndarray:
    """requires_grad cells (True, False, None) as 1, 0, -1."""
    return np.where(cells == True, 1, np.where(cells == False, 0, -1)).astype(np.int8)  # noqa: E712


def _statistics(columns: list[np.ndarray], first_row: int, odd: list) -> tuple[np.ndarray, np.ndarray]:
    """Four statistic columns (object cells) as float64 [rows, 4] and their kinds (NULL where None)."""
    count = len(columns[0])
    stats = np.empty((count, 4))
    kinds = np.zeros((count, 4), dtype=np.int8)
    for column, array in enumerate(columns):
        values = array.tolist()
        kinds[:, column] = np.where(np.equal(array, None), NULL, NUMBER)
        try:
            stats[:, column] = array.astype(np.float64)  # None becomes NaN (its kind says NULL)
        except (TypeError, ValueError):  # text in a tensor's statistics: cell by cell
            for position, value in enumerate(values):
                if value is None or value.__class__ in (int, float, bool):  # bools as astype reads them
                    stats[position, column] = np.nan if value is None else float(value)
                else:
                    stats[position, column] = np.nan
                    odd.append((first_row + position, column, TEXT, str(value)))
    return stats, kinds


def _mode(header: dict, keys: tuple[str, ...]) -> str:
    if header.get("task") == "tensor":
        return "tensor"
    if "md5" in keys:
        return "md5"
    return "hash" if "hash" in keys else "statistics"


def read_dump(path: str | Path, stacks: dict | None = None, progress=None) -> DumpTable:
    """Read one dump.json into a DumpTable (DumpFormatError when it is not a dump; OSError when unreadable).

    `progress(n)` is told the number of characters read, chunk by chunk."""
    path = Path(path)
    builder = _Builder()

    def on_data(items) -> None:
        for item in items:
            if item.__class__ is Batch:
                builder.add_batch(item)
            else:
                builder.add_record(*item)

    with open(path, encoding="utf-8") as handle:
        try:
            header = read_object(handle, on_data, progress)
        except UnicodeDecodeError as error:
            raise DumpFormatError(f"not UTF-8 text ({error.reason})") from None
    if "data" not in header:
        raise DumpFormatError("no \"data\" object: not a dump.json written by msprobe or msprobe-kit")
    return builder.table(path, header, stacks or {})

"""Comparing a MindSpore dump with a PyTorch dump: names, parameters and dtypes mapped through a data table.

When the two dump.json headers name different frameworks, MindSpore's names are mapped to PyTorch's by
`crossframework.json` (package data): record prefixes (`Cell` -> `Module`, `Mint` -> `Torch`,
`MintFunctional` -> `Functional`), APIs (`Functional.dense` -> `Functional.linear`, `ops` functions with a
`torch` twin -> `Torch.*`), cell primitives by class (`LayerNorm` -> `Functional.layer_norm`), cell
classes (`Dense` -> `Linear`) and parameters (`gamma`/`beta` -> `weight`/`bias`); tensor dtypes of both
sides compare by group (`Int32` pairs with `torch.int64`, as in msprobe's cross-framework compare). Matching then tolerates different numbers of calls on each side:
forward calls are aligned in execution order by their mapped names (matching.align: a call one side
makes and the other does not shifts nothing after it), and every backward call and parameter gradient
pairs through its forward call. Only matching and the row checks see mapped names; reports keep each
side's own.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pandas as pd

from msprobe_runtime.core.compare import matching
from msprobe_runtime.core.compare.table import DumpTable

MINDSPORE, PYTORCH = "mindspore", "pytorch"
_TABLE = Path(__file__).with_name("crossframework.json")


@functools.lru_cache(maxsize=1)
def mapping_table() -> dict:
    """The mapping data (crossframework.json)."""
    data = json.loads(_TABLE.read_text(encoding="utf-8"))
    data["same"] = {name: family for family, names in data["same_name"].items() for name in names}
    return data


@dataclass
class Aligned:
    """The two sides as matching sees them: their record names and tables with mapped rows and dtypes."""

    cross: bool
    target_names: list[str]
    golden_names: list[str]
    target: DumpTable
    golden: DumpTable


def framework_of(table: DumpTable) -> str | None:
    """The framework a dump says it comes from (msprobe and msprobe-kit write it in dump.json)."""
    value = table.header.get("framework")
    return str(value).lower() if value else None


def align(target: DumpTable, golden: DumpTable) -> Aligned:
    """Map the MindSpore side to PyTorch's names when the frameworks differ; else leave both as they are."""
    frameworks = {framework_of(target), framework_of(golden)}
    if frameworks != {MINDSPORE, PYTORCH}:
        return Aligned(False, target.records, golden.records, target, golden)
    sides = []
    for table in (target, golden):
        mindspore = framework_of(table) == MINDSPORE
        sides.append(([pytorch_name(name) for name in table.records] if mindspore else table.records,
                      _rows_for_matching(table, mindspore)))
    return Aligned(True, sides[0][0], sides[1][0], sides[0][1], sides[1][1])


def pytorch_name(name: str) -> str:
    """A MindSpore record name as PyTorch's runtime would name the same call (unknown APIs keep theirs)."""
    table = mapping_table()
    prefix, _, rest = name.partition(".")
    if prefix == "Cell":
        return _cell_name(rest)
    stem, call, _ = matching.split_name(name)
    tail = name[len(stem):]  # ".{n}.{direction}"
    if prefix == "Primitive":  # Primitive.{attribute}.{Class}.{n}.{direction}
        api = table["primitives"].get(stem.rpartition(".")[2])
        return api + tail if api else name
    mapped = table["apis"].get(stem)
    if mapped is None:
        prefix = table["prefixes"].get(prefix, prefix)
        api = stem.partition(".")[2]
        if prefix == "Functional" and name.startswith("Functional."):  # an ops function
            prefix = table["same"].get(api, prefix)
        mapped = f"{prefix}.{api}"
    return mapped + tail


def _cell_name(rest: str) -> str:
    """`{path}.{Class}.{direction}.{n}` of a cell as a module record name."""
    table = mapping_table()
    parts = rest.split(".")
    for position in range(len(parts) - 1, 0, -1):
        if parts[position] in ("forward", "backward", "parameters_grad"):
            parts[position - 1] = table["cell_classes"].get(parts[position - 1], parts[position - 1])
            break
    return ".".join([table["prefixes"]["Cell"], *parts])


def _rows_for_matching(table: DumpTable, mindspore: bool) -> DumpTable:
    """The table with dtype groups for dtypes and, for MindSpore, PyTorch's parameter names in row suffixes."""
    data = mapping_table()
    groups, suffixes = data["dtype_groups"], table.suffixes
    if mindspore:
        parameters = data["parameters"]
        suffixes = []
        for suffix in table.suffixes:
            head, dot, leaf = suffix.rpartition(".")
            if leaf in parameters and head in ("", ".parameters"):
                suffix = f"{head}{dot}{parameters[leaf]}"
            suffixes.append(suffix)
    dtype = pd.Series(table.dtype, dtype=object).map(lambda value: groups.get(value, value)).to_numpy()
    return replace(table, suffixes=suffixes, dtype=dtype)


def match_records(aligned: Aligned, fuzzy: bool) -> np.ndarray:
    """For each target record, the index of its golden record, or -1 (cross-framework: see the module doc)."""
    if not aligned.cross:
        return matching.match_records(aligned.target, aligned.golden, fuzzy)
    target = _Side(aligned.target.records, aligned.target_names)
    golden = _Side(aligned.golden.records, aligned.golden_names)
    codes, _ = pd.factorize(pd.Index(target.forward_keys + golden.forward_keys))
    pairs = matching.align(codes[:len(target.forward_keys)], codes[len(target.forward_keys):])
    result = np.full(len(target.names), -1, dtype=np.int64)
    for position, partner in enumerate(pairs.tolist()):
        if partner >= 0:
            result[target.forward[position]] = golden.forward[partner]
    for index, forward_name in target.derived.items():
        forward = target.index.get(forward_name, -1)
        if forward >= 0 and result[forward] >= 0:
            partner_name = forward_of(golden.names[result[forward]], _direction(target.names[index]))
            result[index] = golden.index.get(partner_name, -1)
    return result


def forward_of(name: str, direction: str = "forward") -> str | None:
    """`name` with its direction replaced: the forward call of a backward record or parameter gradient
    (`Functional.linear.0.backward` -> `Functional.linear.0.forward`, `Module.fc.Linear.parameters_grad.0`
    -> `Module.fc.Linear.forward.0`), or the reverse with `direction`; None for other names."""
    parts = name.split(".")
    for position in (len(parts) - 1, len(parts) - 2):
        if position > 0 and parts[position] in ("forward", "backward", "parameters_grad"):
            return ".".join([*parts[:position], direction, *parts[position + 1:]])
    return None


def _direction(name: str) -> str:
    return matching.split_name(name)[2]


class _Side:
    """One side's records: forward calls (aligned by their mapped names) and the records derived from them."""

    def __init__(self, names: list[str], mapped: list[str]):
        self.names = names
        self.index = {name: position for position, name in enumerate(names)}
        self.forward: list[int] = []
        self.forward_keys: list[str] = []
        self.derived: dict[int, str] = {}  # backward record or parameter gradient -> its forward record
        for position, (name, key) in enumerate(zip(names, mapped, strict=True)):
            if _direction(name) in ("backward", "parameters_grad"):
                self.derived[position] = forward_of(name)
            else:
                self.forward.append(position)
                self.forward_keys.append(matching.fuzzy_keys([key])[0])

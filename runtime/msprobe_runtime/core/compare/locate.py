"""Which dump.json files to compare: TARGET and GOLDEN as files, rank folders, step folders or dump roots.

Layout (msprobe 26.x): `{root}/step{N}/rank{R}/dump.json`; msprobe names the folder `rank` or
`proc{pid}` when torch.distributed is not initialised. Steps pair by number, ranks by number; a single
rank folder on each side pairs with the other whatever its name. Anything that does not pair is a
CompareError naming what is missing where.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

DUMP_FILE, STACK_FILE = "dump.json", "stack.json"
_STEP = re.compile(r"^step(\d+)$")
_RANK = re.compile(r"^(?:rank(\d*)|proc\d+)$")


class CompareError(ValueError):
    """A comparison that cannot be made; the message says why, in one line."""


@dataclass(frozen=True)
class Pair:
    """One target/golden pair of dump.json files; `step`/`rank` are None when the input did not say."""

    step: int | None
    rank: int | None
    target: Path
    golden: Path

    @property
    def label(self) -> str:
        """`step0/rank1`, or `dump` for a pair of single files."""
        parts = [f"step{self.step}" if self.step is not None else "", f"rank{self.rank}" if self.rank is not None else ""]
        return "/".join(part for part in parts if part) or "dump"


def _kind(path: Path, role: str) -> str:
    if not path.exists():
        raise CompareError(f"{role} '{path}' does not exist")
    if path.is_file():
        return "file"
    if (path / DUMP_FILE).is_file():
        return "rank"
    if _ranks(path):
        return "step"
    if _steps(path):
        return "root"
    if any(path.glob("rank*/grad_summary_*.csv")):
        raise CompareError(f"{role} '{path}' holds gradient probe files: compare it with --grad")
    raise CompareError(f"{role} '{path}' holds no dump: expected dump.json, rank*/dump.json or step*/rank*/dump.json")


def _steps(folder: Path) -> dict[int, Path]:
    found = {}
    for child in folder.iterdir():
        match = _STEP.match(child.name)
        if match and child.is_dir() and _ranks(child):
            found[int(match[1])] = child
    return found


def _ranks(folder: Path) -> dict[str, Path]:
    """Rank folder name -> folder, for folders holding a dump.json."""
    return {child.name: child for child in folder.iterdir()
            if _RANK.match(child.name) and (child / DUMP_FILE).is_file()}


def _rank_number(name: str) -> int | None:
    match = _RANK.match(name)
    return int(match[1]) if match and match[1] else (0 if name == "rank" else None)


def _pair_ranks(target: Path, golden: Path, step: int | None, rank: int | None) -> list[Pair]:
    target_ranks, golden_ranks = _ranks(target), _ranks(golden)
    if len(target_ranks) == 1 and len(golden_ranks) == 1:
        (t_name, t_folder), = target_ranks.items()
        (g_name, g_folder), = golden_ranks.items()
        number = _rank_number(t_name) if _rank_number(t_name) is not None else _rank_number(g_name)
        if rank is not None and number not in (rank, None):
            raise CompareError(f"rank {rank} is not in '{target}' (it holds {t_name})")
        return [Pair(step, number, t_folder / DUMP_FILE, g_folder / DUMP_FILE)]
    t_numbers = {_rank_number(name): folder for name, folder in target_ranks.items()}
    g_numbers = {_rank_number(name): folder for name, folder in golden_ranks.items()}
    if rank is not None:
        for role, numbers, folder in (("TARGET", t_numbers, target), ("GOLDEN", g_numbers, golden)):
            if rank not in numbers:
                raise CompareError(f"rank {rank} is not in {role} '{folder}' (it holds {_names(numbers, 'rank')})")
        t_numbers, g_numbers = {rank: t_numbers[rank]}, {rank: g_numbers[rank]}
    if set(t_numbers) != set(g_numbers) or None in t_numbers:
        raise CompareError(f"ranks do not pair: TARGET '{target}' holds {_names(t_numbers, 'rank')}, "
                           f"GOLDEN '{golden}' holds {_names(g_numbers, 'rank')}; use --rank R to pick one")
    return [Pair(step, number, t_numbers[number] / DUMP_FILE, g_numbers[number] / DUMP_FILE)
            for number in sorted(t_numbers)]


def _names(numbers: dict, prefix: str) -> str:
    return ", ".join(f"{prefix}{number}" for number in sorted(n for n in numbers if n is not None)) or "none"


def find_pairs(target: str | Path, golden: str | Path, rank: int | None = None) -> list[Pair]:
    """Every (target, golden) pair of dump.json files to compare, in step then rank order."""
    target, golden = Path(target), Path(golden)
    kinds = _kind(target, "TARGET"), _kind(golden, "GOLDEN")
    single = {"file", "rank"}
    if kinds[0] in single and kinds[1] in single:
        files = [path if kind == "file" else path / DUMP_FILE for path, kind in zip((target, golden), kinds, strict=True)]
        return [Pair(None, rank, files[0], files[1])]
    if kinds[0] != kinds[1]:
        raise CompareError(f"TARGET '{target}' is a {_WORDS[kinds[0]]} but GOLDEN '{golden}' is a "
                           f"{_WORDS[kinds[1]]}: give both at the same level")
    if kinds[0] == "step":
        return _pair_ranks(target, golden, None, rank)
    target_steps, golden_steps = _steps(target), _steps(golden)
    if set(target_steps) != set(golden_steps):
        raise CompareError(f"steps do not pair: TARGET '{target}' holds {_names(target_steps, 'step')}, "
                           f"GOLDEN '{golden}' holds {_names(golden_steps, 'step')}; compare step folders instead")
    pairs = []
    for step in sorted(target_steps):
        pairs.extend(_pair_ranks(target_steps[step], golden_steps[step], step, rank))
    return pairs


_WORDS = {"file": "dump.json file", "rank": "rank folder", "step": "step folder", "root": "dump folder"}

"""Comparing two gradient-probe dumps (msprobe's GradComparator), plus a verdict msprobe does not give.

Input layout (grad_probe task, L1/L2): `{dump}/rank{R}/grad_summary_{N}.csv` and `{dump}/rank{R}/step{N}/
{param}.npy` holding each gradient's signs. Per rank and step, the similarity of a parameter is the share
of elements whose sign agrees; `summary` weights all parameters by element count. Output per rank, as
msprobe writes it: `rank{R}/similarities.csv` (header `step,0,1,...`, a row per parameter, `summary`
last) and `rank{R}/similarities_picture/{param}_similarities.png` (so `summary_similarities.png`).
Verdict: the first step where a parameter's similarity is below 0.97 at the first compared step, or
drops by more than 0.03 from one step to the next: where precision went wrong (knowledge.md 6.4).
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from msprobe_runtime.core.files import atomic_write_bytes, atomic_write_text, safe_filename

FIRST_STEP_THRESHOLD = 0.97
DROP_THRESHOLD = 0.03
SUMMARY = "summary"


class GradCompareError(ValueError):
    """Two gradient-probe dumps that cannot be compared; the message says why."""


@dataclass
class Verdict:
    """The first suspicious step of one rank, and the parameters that make it suspicious."""

    rank: int
    step: int | None
    parameters: list[tuple[str, float, str]] = field(default_factory=list)  # (name, similarity, reason)

    def __str__(self) -> str:
        if self.step is None:
            return (f"rank{self.rank}: no suspicious step (every similarity >= {FIRST_STEP_THRESHOLD} at the first "
                    f"step and no drop > {DROP_THRESHOLD} between steps)")
        names = "; ".join(f"{name} {value:.4f} ({reason})" for name, value, reason in self.parameters[:5])
        more = f" and {len(self.parameters) - 5} more" if len(self.parameters) > 5 else ""
        return f"rank{self.rank}: precision goes wrong at step {self.step}: {names}{more}"


@dataclass
class RankResult:
    """One rank's similarities (parameter -> one value per step) and verdict."""

    rank: int
    steps: list[int]
    similarities: dict[str, list[float]]
    verdict: Verdict
    output: Path


def _numbered(folder: Path, prefix: str) -> dict[int, Path]:
    pattern = re.compile(rf"^{prefix}(\d+)$")
    if not folder.is_dir():
        return {}
    return {int(match[1]): child for child in folder.iterdir() if (match := pattern.match(child.name)) and child.is_dir()}


def _parameter_order(rank1: Path, rank2: Path) -> list[str]:
    """Parameter names from the first grad_summary CSV present on both sides (msprobe's order)."""
    for summary in sorted(rank1.glob("grad_summary_*.csv")):
        if (rank2 / summary.name).is_file():
            with open(summary, encoding="utf-8-sig", newline="") as handle:
                rows = list(csv.reader(handle))
            if not rows or rows[0][:1] != ["param_name"]:
                raise GradCompareError(f"'{summary}' is not a grad_summary CSV (no param_name column)")
            return [row[0] for row in rows[1:] if row]
    raise GradCompareError(f"no grad_summary_*.csv in both '{rank1}' and '{rank2}': dump both with the same config")


def _sign_file(step_folder: Path, name: str) -> Path:
    for candidate in (f"{name}.npy", f"{safe_filename(name)}.npy"):
        if (step_folder / candidate).is_file():
            return step_folder / candidate
    raise GradCompareError(f"no sign file for parameter '{name}' in '{step_folder}' (grad_level must be L1 or L2)")


def _signs(path: Path) -> np.ndarray:
    try:
        array = np.load(path, allow_pickle=False)
    except (OSError, ValueError) as error:
        raise GradCompareError(f"'{path}' is not a readable .npy file: {error}") from None
    if array.dtype != np.bool_:
        raise GradCompareError(f"'{path}' does not hold gradient signs (dtype {array.dtype}, expected bool)")
    return array


def similarities(rank1: Path, rank2: Path, steps: list[int]) -> dict[str, list[float]]:
    """Parameter -> share of agreeing gradient signs per step; `summary` is element-weighted."""
    names = _parameter_order(rank1, rank2)
    result: dict[str, list[float]] = {name: [] for name in names}
    result[SUMMARY] = []
    for step in steps:
        same_total = count_total = 0
        for name in names:
            first = _signs(_sign_file(rank1 / f"step{step}", name))
            second = _signs(_sign_file(rank2 / f"step{step}", name))
            if first.shape != second.shape:
                raise GradCompareError(f"gradient of '{name}' has shape {first.shape} in '{rank1}' but "
                                       f"{second.shape} in '{rank2}' at step {step}")
            same = int(np.count_nonzero(first == second))
            result[name].append(same / first.size if first.size else 0.0)
            same_total += same
            count_total += first.size
        result[SUMMARY].append(same_total / count_total if count_total else 0.0)
    return result


def verdict(rank: int, steps: list[int], values: dict[str, list[float]]) -> Verdict:
    """The first step where a similarity is below 0.97 (first step) or drops by more than 0.03."""
    for position, step in enumerate(steps):
        flagged = []
        for name, series in values.items():
            if name == SUMMARY:
                continue
            value = series[position]
            if position == 0 and value < FIRST_STEP_THRESHOLD:
                flagged.append((name, value, f"below {FIRST_STEP_THRESHOLD} at the first step"))
            elif position > 0 and series[position - 1] - value > DROP_THRESHOLD:
                flagged.append((name, value, f"dropped {series[position - 1] - value:.4f} from step {steps[position - 1]}"))
        if flagged:
            return Verdict(rank, step, sorted(flagged, key=lambda item: item[1]))
    return Verdict(rank, None)


def _plot(path: Path, name: str, steps: list[int], series: list[float]) -> None:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(6, 3.5), dpi=100)
    FigureCanvasAgg(figure)
    axes = figure.add_subplot()
    axes.plot(steps, series, marker="o" if len(steps) < 30 else None)
    axes.set_xlabel("steps")
    axes.set_ylabel("similarities")
    axes.set_title(f"{name}_similarities")
    figure.tight_layout()
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png")
    atomic_write_bytes(path, buffer.getvalue())


class GradComparator:
    """msprobe's GradComparator API: compare(rank folders) and compare_distributed(dump folders)."""

    @classmethod
    def compare_distributed(cls, path1, path2, output_path) -> list[RankResult]:
        """Compare every rank present in both gradient dumps; write each rank's files under output_path."""
        path1, path2 = Path(path1), Path(path2)
        for role, path in (("first", path1), ("second", path2)):
            if not path.is_dir():
                raise GradCompareError(f"{role} gradient dump '{path}' is not a folder")
        ranks1, ranks2 = _numbered(path1, "rank"), _numbered(path2, "rank")
        ranks = sorted(set(ranks1) & set(ranks2))
        if not ranks:
            raise GradCompareError(f"no rank folder in both '{path1}' ({_list(ranks1, 'rank')}) and '{path2}' "
                                   f"({_list(ranks2, 'rank')}): dump both with the same configuration")
        return [cls.compare(ranks1[rank], ranks2[rank], Path(output_path) / f"rank{rank}", rank=rank) for rank in ranks]

    @classmethod
    def compare(cls, path1, path2, output_dir, rank: int = 0) -> RankResult:
        """Compare one rank folder of each dump; writes similarities.csv, the plots and verdict.txt."""
        path1, path2, output = Path(path1), Path(path2), Path(output_dir)
        steps1, steps2 = _numbered(path1, "step"), _numbered(path2, "step")
        steps = sorted(set(steps1) & set(steps2))
        if not steps:
            raise GradCompareError(f"no step folder in both '{path1}' ({_list(steps1, 'step')}) and '{path2}' "
                                   f"({_list(steps2, 'step')}): dump with grad_level L1 or L2 and the same steps")
        values = similarities(path1, path2, steps)
        result = RankResult(rank, steps, values, verdict(rank, steps, values), output / "similarities.csv")
        cls._save(result, output)
        return result

    @staticmethod
    def _save(result: RankResult, output: Path) -> None:
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(["step", *(str(step) for step in result.steps)])
        for name, series in result.similarities.items():
            writer.writerow([name, *series])
        atomic_write_text(output / "similarities.csv", buffer.getvalue())
        pictures = output / "similarities_picture"
        for name, series in result.similarities.items():
            _plot(pictures / f"{safe_filename(name)}_similarities.png", name, result.steps, series)
        atomic_write_text(output / "verdict.txt", str(result.verdict) + "\n")


def _list(numbers: dict, prefix: str) -> str:
    return ", ".join(f"{prefix}{number}" for number in sorted(numbers)) or "none"

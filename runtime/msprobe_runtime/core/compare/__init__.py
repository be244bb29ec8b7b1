"""Compare two dumps (ours or msprobe 26.x's): pair calls, judge rows as msprobe does, find the first divergence.

Framework-free: dump files in, reports out. Entry points: `compare`, `compare_distributed`.
"""

from msprobe_runtime.core.compare.locate import CompareError  # noqa: F401
from msprobe_runtime.core.compare.run import CompareRun, PairSummary, compare, compare_distributed  # noqa: F401

"""`--statistics`: how many findings each rule produced."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from msprobe_rewriter.finding import Finding


def table(findings: Iterable[Finding]) -> str:
    """One line per rule, most frequent first: count, code, name."""
    counts = Counter((f.code, f.name) for f in findings)
    if not counts:
        return ""
    width = len(str(max(counts.values())))
    rows = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    return "".join(f"{count:>{width}}  {code}  [{name}]\n" for (code, name), count in rows)

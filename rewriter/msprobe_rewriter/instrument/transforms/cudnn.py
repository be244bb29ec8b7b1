"""Switch cuDNN autotuning off where `cudnn-benchmark` fires: `benchmark = False`, `deterministic = True`."""

from __future__ import annotations

import libcst as cst

from msprobe_rewriter.instrument.transforms.base import Example, Transform
from msprobe_rewriter.instrument.unit import Unit

SAFE = {"benchmark": "False", "deterministic": "True"}


class CudnnBenchmark(Transform):
    name = "cudnn-benchmark"
    fixes = ("cudnn-benchmark",)
    rule = "cudnn-benchmark"
    summary = "Sets `cudnn.benchmark = False` / `cudnn.deterministic = True` where the script turns them the other way."
    details = ("`seed_all(mode=True)` configures cuDNN, but a later `torch.backends.cudnn.benchmark = True` in the "
               "script would undo it, so the assignment itself is flipped.")
    examples = (
        Example("import torch.backends.cudnn as cudnn\n\ncudnn.benchmark = True\ncudnn.deterministic = False\n",
                "import torch.backends.cudnn as cudnn\n\ncudnn.benchmark = False\ncudnn.deterministic = True\n"),
    )

    def apply(self, unit: Unit) -> None:
        for finding, assign in unit.sites_for(self.rule, lambda n: isinstance(n, cst.Assign)):
            target = assign.targets[0].target if len(assign.targets) == 1 else None
            if not isinstance(target, cst.Attribute) or target.attr.value not in SAFE:
                unit.note(finding.line, "cuDNN switch not rewritten (chained assignment)")
                continue
            value = cst.Name(SAFE[target.attr.value])
            unit.edits.rewrite(assign, lambda a, value=value: a.with_changes(value=value))

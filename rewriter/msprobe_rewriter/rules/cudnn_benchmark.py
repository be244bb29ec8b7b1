"""MSP103 cudnn-benchmark: cuDNN autotuning or non-deterministic cuDNN switched on."""

from __future__ import annotations

import ast

from msprobe_rewriter.context import constant
from msprobe_rewriter.rules.base import Invalid, Rule

# (attribute, value that breaks reproducibility)
HAZARDS = {"benchmark": True, "deterministic": False}


class CudnnBenchmark(Rule):
    code = "MSP103"
    name = "cudnn-benchmark"
    severity = "error"
    switched_by_flags = True
    frameworks = ("pytorch",)
    fixable = True
    message = ("cuDNN picks kernels by timing (or non-deterministically); set "
               "`torch.backends.cudnn.benchmark = False` and `torch.backends.cudnn.deterministic = True`")
    summary = "Flags `torch.backends.cudnn.benchmark = True` and `torch.backends.cudnn.deterministic = False`."
    why = ("In benchmark mode cuDNN times several convolution algorithms on the first batches and keeps the "
           "fastest. The winner depends on timing noise, and different algorithms sum in different orders, so "
           "two runs of the same script (or the GPU and NPU runs you want to compare) compute slightly different "
           "numbers. `deterministic = False` allows kernels whose results vary from run to run.")
    fix = ("Set `torch.backends.cudnn.benchmark = False` and `torch.backends.cudnn.deterministic = True` while "
           "debugging (msprobe-kit's `seed_all(mode=True)` does both). Beware the typo `cudnn.enable`, which "
           "silently does nothing.")
    valid = (
        "import torch\n\ntorch.backends.cudnn.benchmark = False\ntorch.backends.cudnn.deterministic = True\n",
        "import torch\n\nbenchmark = True  # a plain variable, not cuDNN's switch\n",
    )
    invalid = (
        Invalid("import torch\n\ntorch.backends.cudnn.benchmark = True\n", lines=(3,)),
        Invalid("from torch.backends import cudnn\n\ncudnn.deterministic = False\ncudnn.benchmark = True\n",
                lines=(3, 4)),
        Invalid("import torch.backends.cudnn as cudnn\n\n\ndef setup():\n    cudnn.benchmark = True\n", lines=(5,)),
    )

    def visit_Assign(self, node: ast.Assign) -> None:
        value = constant(node.value)
        for target in node.targets:
            if not isinstance(target, ast.Attribute) or target.attr not in HAZARDS:
                continue
            if self.ctx.qualname(target.value) == "torch.backends.cudnn" and value is HAZARDS[target.attr]:
                self.report(target)

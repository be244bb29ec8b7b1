"""MSP103 cudnn-benchmark: cuDNN autotuning or non-deterministic cuDNN switched on."""

from __future__ import annotations

import ast

from msprobe_rewriter import opt_in
from msprobe_rewriter.conditions import condition_text
from msprobe_rewriter.context import NOT_CONSTANT, constant, parameter_defaults, walk_scope
from msprobe_rewriter.rules.base import Invalid, Rule

ASCEND_MESSAGE = ("cuDNN's flags do nothing on Ascend (CANN never reads them): this matters only for a CUDA run "
                  "of the same script, where cuDNN picks kernels by timing; set `torch.backends.cudnn.benchmark = "
                  "False` and `torch.backends.cudnn.deterministic = True` there")
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
    summary = ("Flags `torch.backends.cudnn.benchmark = True` and `torch.backends.cudnn.deterministic = False`, also "
               "where the value is a name or option that holds them by default: a parameter defaulting to True "
               "(EDM's `training_loop(..., cudnn_benchmark=True)`), a local variable, an argparse option or "
               "dataclass field. In a script that runs on Ascend only (torch_npu, `torch.npu` or `.npu()`, and no "
               "CUDA) it is information: CANN never reads cuDNN's flags, so only a CUDA run of the same script is affected.")
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
        # Ascend: CANN ignores the flag; it matters only for a CUDA run of the same script.
        Invalid("import torch\nimport torch_npu\n\ntorch.backends.cudnn.benchmark = True\n", lines=(4,),
                severity="info"),
        Invalid("from torch.backends import cudnn\n\ncudnn.deterministic = False\ncudnn.benchmark = True\n",
                lines=(3, 4)),
        Invalid("import torch.backends.cudnn as cudnn\n\n\ndef setup():\n    cudnn.benchmark = True\n", lines=(5,)),
        # EDM's training loop takes the switch as a parameter that defaults to True.
        Invalid("import torch\n\n\ndef training_loop(cudnn_benchmark=True):\n"
                "    torch.backends.cudnn.benchmark = cudnn_benchmark\n", lines=(5,)),
    )

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.by_value: list[tuple[ast.Attribute, ast.expr]] = []  # switches set from a name or an option

    def report(self, where, message=None, severity=None, fixable=None) -> None:
        """On Ascend, information only: CANN's kernels never read cuDNN's flags."""
        if self.ctx.runs_on_ascend():
            message, severity = (message or self.message).replace(self.message, ASCEND_MESSAGE), "info"
        super().report(where, message, severity, fixable)

    def visit_Assign(self, node: ast.Assign) -> None:
        value = constant(node.value)
        for target in node.targets:
            if not isinstance(target, ast.Attribute) or target.attr not in HAZARDS:
                continue
            if self.ctx.qualname(target.value) != "torch.backends.cudnn":
                continue
            if value is HAZARDS[target.attr]:
                self.report(target)
            elif value is NOT_CONSTANT:
                known = self._local_default(node.value)
                if known is HAZARDS[target.attr]:
                    self.report(target, self.message + f" (`{condition_text(node.value)}` holds {known} by default)")
                elif known is NOT_CONSTANT:
                    self.by_value.append((target, node.value))

    def _local_default(self, value: ast.expr) -> object:
        """What a name holds where the enclosing function does not say otherwise: its parameter's default (EDM's
        `training_loop(..., cudnn_benchmark=True)`), or the constant the function last assigned it."""
        function = self.ctx.current_def()
        if not isinstance(value, ast.Name) or function is None:
            return NOT_CONSTANT
        defaults = parameter_defaults(function)
        assigned = [node.value for node in walk_scope(function) if isinstance(node, ast.Assign)
                    and node.lineno < value.lineno and any(isinstance(t, ast.Name) and t.id == value.id
                                                           for t in node.targets)]
        if assigned:
            return constant(assigned[-1]) if len(assigned) == 1 else NOT_CONSTANT
        return constant(defaults[value.id]) if value.id in defaults else NOT_CONSTANT

    def finish(self) -> None:
        """Switches set from an option (`cudnn.benchmark = args.benchmark`): reported when its default turns them on."""
        for target, value in self.by_value:
            known = opt_in.default_value(self.ctx, value)
            if known is HAZARDS[target.attr]:
                self.report(target, self.message + f" (`{condition_text(value)}` holds {known} by default)")

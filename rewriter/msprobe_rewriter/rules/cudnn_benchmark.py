"""MSP103 cudnn-benchmark: cuDNN autotuning or non-deterministic cuDNN switched on."""

from __future__ import annotations

import ast

from msprobe_rewriter import opt_in
from msprobe_rewriter.conditions import condition_text
from msprobe_rewriter.context import NOT_CONSTANT, constant, parameter_defaults, walk_scope
from msprobe_rewriter.rules.base import Invalid, Rule

ASCEND_MESSAGE = ("cuDNN's flags do nothing on Ascend (CANN never reads them): this matters only for a CUDA run "
                  "of the same script, where cuDNN picks kernels by timing or non-deterministic ones; set `torch.backends.cudnn.benchmark = "
                  "False` and `torch.backends.cudnn.deterministic = True` there")
# (attribute, value that breaks reproducibility)
HAZARDS = {"benchmark": True, "deterministic": False}
NONDETERMINISTIC_MESSAGE = ("`cudnn.deterministic = False` lets cuDNN use kernels whose results vary from run to run; "
                            "set `torch.backends.cudnn.deterministic = True`")
RESET_MESSAGE = ("`cudnn.deterministic = False` in a function that undoes this file's `cudnn.deterministic = True` "
                 "puts PyTorch's default back (a teardown after training, or the off branch of a determinism "
                 "switch): harmless after training, but a call before training turns determinism off")


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
               "dataclass field. `deterministic = False` as a function's own statement, where the file elsewhere sets it True "
               "(ultralytics' `unset_deterministic()`, run after training), is information: it puts PyTorch's "
               "default back. In a script that runs on Ascend only (torch_npu, `torch.npu` or `.npu()`, and no "
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
        # ultralytics' unset_deterministic(): restores the default that init_seeds changed, run in the trainer's
        # `finally:` after training.
        Invalid("import torch\n\n\ndef init_seeds(deterministic=True):\n    if deterministic:\n"
                "        torch.backends.cudnn.deterministic = True\n    else:\n        unset_deterministic()\n\n\n"
                "def unset_deterministic():\n    torch.use_deterministic_algorithms(False)\n"
                "    torch.backends.cudnn.deterministic = False\n", lines=(13,), severity="info"),
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
            message = message or self.message
            for own in (self.message, NONDETERMINISTIC_MESSAGE):
                message = message.replace(own, ASCEND_MESSAGE)
            severity = "info"
        super().report(where, message, severity, fixable)

    def visit_Assign(self, node: ast.Assign) -> None:
        value = constant(node.value)
        for target in node.targets:
            if not isinstance(target, ast.Attribute) or target.attr not in HAZARDS:
                continue
            if self.ctx.qualname(target.value) != "torch.backends.cudnn":
                continue
            if value is HAZARDS[target.attr]:
                self._report_constant(node, target)
            elif value is NOT_CONSTANT:
                known = self._local_default(node.value)
                if known is HAZARDS[target.attr]:
                    self.report(target, self._message(target) + f" (`{condition_text(node.value)}` holds {known} by "
                                "default)")
                elif known is NOT_CONSTANT:
                    self.by_value.append((target, node.value))

    def _report_constant(self, node: ast.Assign, target: ast.Attribute) -> None:
        """`benchmark = True`, or `deterministic = False`: information when it is a function's own statement
        (not under a condition of it) and the file elsewhere sets `deterministic = True`, so that the function
        is the off switch putting PyTorch's default back."""
        if target.attr == "deterministic" and self._resets(node):
            self.report(target, RESET_MESSAGE, "info")
        else:
            self.report(target, self._message(target))

    def _message(self, target: ast.Attribute) -> str:
        """The benchmark message claims timing; `deterministic = False` alone only allows varying kernels."""
        return self.message if target.attr == "benchmark" else NONDETERMINISTIC_MESSAGE

    def _resets(self, node: ast.Assign) -> bool:
        """Whether `node` is a function's own statement and the file sets `cudnn.deterministic = True` elsewhere."""
        function = self.ctx.current_def()
        if function is None or node not in function.body:
            return False
        inside = range(function.lineno, function.end_lineno + 1)
        return any(isinstance(other, ast.Assign) and other.lineno not in inside and constant(other.value) is True
                   and any(isinstance(target, ast.Attribute) and target.attr == "deterministic"
                           and self.ctx.qualname(target.value) == "torch.backends.cudnn" for target in other.targets)
                   for other in ast.walk(self.ctx.tree))

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
                self.report(target, self._message(target) + f" (`{condition_text(value)}` holds {known} by default)")

"""MSP503 backward-hook: module and tensor backward hooks, which can reorder gradient accumulation."""

from __future__ import annotations

import ast
import re

from msprobe_rewriter import catalogue
from msprobe_rewriter.context import target_name
from msprobe_rewriter.rules.base import Invalid, Rule

# Owners of a `register_hook` that is not autograd's (mmcv/mmengine runners, trainers, hook managers).
HOOK_NAMES = catalogue.BACKWARD_HOOK_METHODS | {catalogue.TENSOR_HOOK_METHOD} | {
    name.rsplit(".", 1)[1] for name in catalogue.BACKWARD_HOOK_CALLS}
NOT_AUTOGRAD_OWNER = re.compile(r"(?i)(runner|trainer|engine|manager|registry|callback|logger|app)s?$")


class BackwardHook(Rule):
    code = "MSP503"
    name = "backward-hook"
    severity = "info"
    frameworks = ("pytorch", "mindspore")
    message = ("backward hooks can change the order in which gradients are accumulated (grad norms move while the "
               "loss does not); remove them for comparison runs, or compare at dump level L1")
    summary = ("Flags `register_full_backward_hook`, `register_backward_hook`, `register_full_backward_pre_hook`, "
               "the global `register_module_*backward*_hook` functions, `Tensor.register_hook` (and autograd node "
               "hooks), MindSpore `Cell.register_backward_hook`/`register_backward_pre_hook` and `ops.HookBackward`.")
    why = ("A backward hook wraps the module's inputs and outputs in extra autograd nodes. That can change the order "
           "in which the engine accumulates gradients from different branches (for example a BatchNorm branch "
           "summed with a Linear branch), so floating-point sums round differently: the loss matches while "
           "gradient norms drift. msprobe's rule of thumb: if the grad norm changes at dump level L0 or mix but not "
           "at L1, the module hooks are the cause.")
    fix = ("Register backward hooks only in runs you do not compare, or compare at API level (L1) where module "
           "hooks are not installed. If a hook is needed, have it record statistics without modifying the "
           "gradient, and keep it identical on both sides of a comparison.")
    valid = (
        "import torch\n\n\ndef watch(model):\n    for module in model.modules():\n"
        "        module.register_forward_hook(lambda m, i, o: None)\n",
        "import torch\nfrom mmcv.runner import CheckpointHook\n\n\ndef setup(runner):\n"
        "    runner.register_hook(CheckpointHook(interval=1))\n",
        "class Bus:\n    def register_backward_hook(self, fn):\n        pass\n\n\n"
        "Bus().register_backward_hook(print)  # not a torch / MindSpore file\n",
        "import torch\n\n\ndef attach(trainer, hook):\n    trainer.register_hook(hook, priority='LOW')\n",
    )
    invalid = (
        Invalid("import torch.nn as nn\n\n\ndef add_hooks(model: nn.Module, store):\n"
                "    for name, module in model.named_modules():\n"
                "        module.register_full_backward_hook(lambda m, gi, go: store.append(go))\n"
                "        module.register_full_backward_pre_hook(lambda m, go: None)\n", lines=(6, 7)),
        Invalid("import torch\n\n\ndef clip_grads(model):\n    for p in model.parameters():\n"
                "        p.register_hook(lambda g: g.clamp(-1, 1))\n", lines=(6,)),
        Invalid("import torch\nfrom torch.nn.modules.module import register_module_full_backward_hook as reg\n\n"
                "handle = reg(lambda m, gi, go: None)\n", lines=(4,)),
        Invalid("import mindspore.nn as nn\nfrom mindspore import ops\n\n\ndef backward_hook_fn(cell, grad_input, "
                "grad_output):\n    return grad_input\n\n\nnet = nn.Dense(3, 4)\n"
                "net.register_backward_hook(backward_hook_fn)\nhook = ops.HookBackward(print)\n", lines=(10, 11)),
    )

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.framework_file = ctx.imports.imports_root("torch") or ctx.imports.imports_root("mindspore")
        self.local_functions: set[str] = set()

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self.local_functions.add(node.name)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Call(self, node: ast.Call) -> None:
        if not self.framework_file or self.ctx.callee_name(node) not in HOOK_NAMES:
            return
        qualified = self.ctx.call_qualname(node)
        if qualified in catalogue.BACKWARD_HOOK_CALLS:
            self.report(node)
            return
        func = node.func
        if not isinstance(func, ast.Attribute) or qualified is not None:
            return
        if func.attr in catalogue.BACKWARD_HOOK_METHODS or (
                func.attr == catalogue.TENSOR_HOOK_METHOD and self._is_autograd_hook(node, func.value)):
            self.report(node)

    def _is_autograd_hook(self, node: ast.Call, owner: ast.expr) -> bool:
        """`tensor.register_hook(fn)`: one callable argument, on something that is not a runner or trainer."""
        if len(node.args) != 1 or node.keywords:
            return False
        owner_name = target_name(owner) or ""
        if NOT_AUTOGRAD_OWNER.search(owner_name):
            return False
        hook = node.args[0]
        if isinstance(hook, ast.Lambda):
            return True
        if isinstance(hook, ast.Call):  # a factory such as `make_hook(p)`, not a `SomeHook(...)` instance
            name = target_name(hook.func) or ""
            return not name[:1].isupper()
        return isinstance(hook, ast.Attribute) or (isinstance(hook, ast.Name) and (
            hook.id in self.local_functions or "hook" in hook.id.lower()))

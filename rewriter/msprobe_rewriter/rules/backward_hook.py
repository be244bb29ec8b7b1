"""MSP503 backward-hook: module backward hooks, whose extra autograd nodes can reorder gradient accumulation."""

from __future__ import annotations

import ast

from msprobe_rewriter import catalogue
from msprobe_rewriter.rules.base import Invalid, Rule

HOOK_NAMES = catalogue.BACKWARD_HOOK_METHODS | {name.rsplit(".", 1)[1] for name in catalogue.BACKWARD_HOOK_CALLS}


class BackwardHook(Rule):
    code = "MSP503"
    name = "backward-hook"
    severity = "info"
    frameworks = ("pytorch", "mindspore")
    message = ("module backward hooks wrap the module in extra autograd nodes, which can change the order in which "
               "gradients are accumulated (grad norms move while the loss does not): keep the same hooks on both "
               "sides of a comparison (leave out ones that only observe), or compare at dump level L1")
    summary = ("Flags `register_full_backward_hook`, `register_backward_hook`, `register_full_backward_pre_hook`, "
               "the global `register_module_*backward*_hook` functions, MindSpore `Cell.register_backward_hook`/"
               "`register_backward_pre_hook` and `ops.HookBackward`. Not `Tensor.register_hook` or an autograd "
               "node's hook: they add no node to the graph (see why).")
    why = ("A backward hook wraps the module's inputs and outputs in extra autograd nodes. That can change the order "
           "in which the engine accumulates gradients from different branches (for example a BatchNorm branch "
           "summed with a Linear branch), so floating-point sums round differently: the loss matches while "
           "gradient norms drift. msprobe's rule of thumb: if the grad norm changes at dump level L0 or mix but not "
           "at L1, the module hooks are the cause. A tensor's `register_hook` (or a gradient accumulator's) adds "
           "no node: the engine calls it when that gradient is ready, in the same order every run, so it is not "
           "reported; such hooks are often part of training itself (Megatron's activation recompute, DDP's "
           "gradient-ready all-reduce) and must not be removed.")
    fix = ("Keep hooks that are part of the model (FSDP's pre-backward, a gradient clamp) identical on both sides of "
           "a comparison; register observation-only backward hooks only in runs you do not compare, or compare at "
           "API level (L1) where module hooks are not installed.")
    valid = (
        "import torch\n\n\ndef watch(model):\n    for module in model.modules():\n"
        "        module.register_forward_hook(lambda m, i, o: None)\n",
        "import torch\nfrom mmcv.runner import CheckpointHook\n\n\ndef setup(runner):\n"
        "    runner.register_hook(CheckpointHook(interval=1))\n",
        "class Bus:\n    def register_backward_hook(self, fn):\n        pass\n\n\n"
        "Bus().register_backward_hook(print)  # not a torch / MindSpore file\n",
        "import torch\n\n\ndef attach(trainer, hook):\n    trainer.register_hook(hook, priority='LOW')\n",
        # tensor and gradient-accumulator hooks add no autograd node (Megatron's recompute and DDP hooks)
        "import torch\n\n\ndef clip_grads(model, recompute, on_ready):\n    for p in model.parameters():\n"
        "        p.register_hook(lambda g: g.clamp(-1, 1))\n"
        "        p.expand_as(p).grad_fn.next_functions[0][0].register_hook(on_ready)\n"
        "    return recompute.hook_tensor.register_hook(recompute.run)\n",
    )
    invalid = (
        Invalid("import torch.nn as nn\n\n\ndef add_hooks(model: nn.Module, store):\n"
                "    for name, module in model.named_modules():\n"
                "        module.register_full_backward_hook(lambda m, gi, go: store.append(go))\n"
                "        module.register_full_backward_pre_hook(lambda m, go: None)\n", lines=(6, 7)),
        Invalid("import torch\nfrom torch.nn.modules.module import register_module_full_backward_hook as reg\n\n"
                "handle = reg(lambda m, gi, go: None)\n", lines=(4,)),
        Invalid("import mindspore.nn as nn\nfrom mindspore import ops\n\n\ndef backward_hook_fn(cell, grad_input, "
                "grad_output):\n    return grad_input\n\n\nnet = nn.Dense(3, 4)\n"
                "net.register_backward_hook(backward_hook_fn)\nhook = ops.HookBackward(print)\n", lines=(10, 11)),
    )

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.framework_file = ctx.imports.imports_root("torch") or ctx.imports.imports_root("mindspore")

    def visit_Call(self, node: ast.Call) -> None:
        if not self.framework_file or self.ctx.callee_name(node) not in HOOK_NAMES:
            return
        qualified = self.ctx.call_qualname(node)
        if qualified in catalogue.BACKWARD_HOOK_CALLS or qualified is None and isinstance(node.func, ast.Attribute) \
                and node.func.attr in catalogue.BACKWARD_HOOK_METHODS:
            self.report(node)

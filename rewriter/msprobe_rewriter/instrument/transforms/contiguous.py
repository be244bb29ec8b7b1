"""Add `.contiguous()` where `noncontiguous` fires: a transposed tensor reaching a matmul, `.view()` or a
custom backward's return is made contiguous first, so both sides of a comparison run the same kernel."""

from __future__ import annotations

import libcst as cst

from msprobe_rewriter.instrument import nodes
from msprobe_rewriter.instrument.transforms.base import Example, Transform
from msprobe_rewriter.instrument.unit import Unit


class Contiguous(Transform):
    name = "noncontiguous"
    fixes = ("noncontiguous",)
    rule = "noncontiguous"
    summary = "Appends `.contiguous()` to transposed operands of matmuls and views in custom backward code."
    details = ("The reported operand (`grad_output.t()`, `x.T`, or a variable holding a transpose) gets "
               "`.contiguous()`. This is the GLM4 fix: the same layout on every side of a comparison.")
    examples = (
        Example("import torch\n\n\nclass LinearFn(torch.autograd.Function):\n    @staticmethod\n"
                "    def backward(ctx, grad_output):\n        x, w = ctx.saved_tensors\n"
                "        return grad_output.mm(w), grad_output.t().matmul(x)\n",
                "import torch\n\n\nclass LinearFn(torch.autograd.Function):\n    @staticmethod\n"
                "    def backward(ctx, grad_output):\n        x, w = ctx.saved_tensors\n"
                "        return grad_output.mm(w), grad_output.t().contiguous().matmul(x)\n"),
        Example("import torch\n\n\ndef merge_heads(y, B, T, C):\n    y = y.permute(0, 2, 1, 3)\n    return y.view(B, T, C)\n",
                "import torch\n\n\ndef merge_heads(y, B, T, C):\n    y = y.permute(0, 2, 1, 3)\n"
                "    return y.contiguous().view(B, T, C)\n"),
    )

    def apply(self, unit: Unit) -> None:
        for _, node in unit.sites_for(self.rule, lambda n: isinstance(n, cst.BaseExpression)):
            unit.edits.rewrite(node, lambda updated: nodes.method_call(updated, "contiguous"))

"""MSP105 tf32-enabled: float32 matmuls/convolutions allowed to run in TF32 (HF32 on Ascend)."""

from __future__ import annotations

import ast

from msprobe_rewriter import catalogue
from msprobe_rewriter.context import NOT_CONSTANT, constant, keyword
from msprobe_rewriter.rules.base import Invalid, Rule

SWITCH_ATTRS = frozenset(attr for _, attr in catalogue.TF32_SWITCHES)
CALL_NAMES = frozenset(name.rpartition(".")[2] for name in (*catalogue.TF32_CALLS, *catalogue.MINDSPORE_SET_CONTEXT))


def same_literal(value: object, wanted: object) -> bool:
    """`value == wanted` for literals of the same type (so 1 is not True)."""
    return value is not NOT_CONSTANT and type(value) is type(wanted) and value == wanted


class Tf32Enabled(Rule):
    code = "MSP105"
    name = "tf32-enabled"
    severity = "warning"
    frameworks = ("pytorch", "mindspore")
    message = ("float32 math is allowed to run in TF32/HF32 (10-bit mantissa): keep full float32 while comparing "
               "runs (`allow_tf32 = False`, `torch.set_float32_matmul_precision(\"highest\")`)")
    summary = ("Flags `torch.backends.cuda.matmul.allow_tf32 = True`, `torch.backends.cudnn.allow_tf32 = True`, "
               "`fp32_precision = \"tf32\"` (PyTorch >= 2.9), `torch.set_float32_matmul_precision(\"high\" | "
               "\"medium\")`, Ascend's HF32 switches (`torch.npu.matmul.allow_hf32 = True`, "
               "`torch.npu.conv.allow_hf32 = True`, MindSpore `op_precision.matmul_allow_hf32(True)`, "
               "`set_context(ascend_config={\"matmul_allow_hf32\": True})`).")
    why = ("TF32 (NVIDIA Ampere and later) and HF32 (Ascend) round float32 inputs of matmuls and convolutions "
           "to a 10-bit mantissa. The results then depend on the GPU generation and differ from CPU, from older "
           "GPUs and from the NPU by ~1e-3 relative, enough to hide or fake a precision bug in a comparison. "
           "Note that cuDNN convolutions (`torch.backends.cudnn.allow_tf32`) and Ascend convolutions "
           "(`torch.npu.conv.allow_hf32`) already default to the reduced precision.")
    fix = ("While comparing runs set `torch.backends.cuda.matmul.allow_tf32 = False`, "
           "`torch.backends.cudnn.allow_tf32 = False` and `torch.set_float32_matmul_precision(\"highest\")` "
           "(Ascend: `torch.npu.matmul.allow_hf32 = False`, `torch.npu.conv.allow_hf32 = False`).")
    valid = (
        """\
import torch

torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False
torch.set_float32_matmul_precision("highest")
""",
        # `allow_tf32` of some other object is not PyTorch's switch.
        """\
import torch


class Settings:
    allow_tf32 = False


settings = Settings()
settings.allow_tf32 = True
""",
        # The value comes from a flag: nothing is switched on unconditionally here.
        """\
import torch


def configure(args):
    torch.backends.cuda.matmul.allow_tf32 = args.tf32
    torch.set_float32_matmul_precision(args.matmul_precision)
""",
        """\
import mindspore as ms

ms.set_context(ascend_config={"matmul_allow_hf32": False, "precision_mode": "must_keep_origin_dtype"})
""",
    )
    invalid = (
        Invalid("""\
import torch

torch.backends.cuda.matmul.allow_tf32 = True
torch.backends.cudnn.allow_tf32 = True
""", lines=(3, 4)),
        Invalid("""\
import torch as T
from torch import set_float32_matmul_precision as set_precision


def setup():
    T.set_float32_matmul_precision("high")
    set_precision("medium")
""", lines=(6, 7)),
        Invalid("""\
import torch
from torch.backends import cuda, cudnn

cuda.matmul.fp32_precision = "tf32"
cudnn.conv.fp32_precision = "tf32"
torch.backends.fp32_precision = "tf32"
""", lines=(4, 5, 6)),
        Invalid("""\
import torch
import torch_npu

torch.npu.matmul.allow_hf32 = True
torch_npu.npu.conv.allow_hf32 = True
""", lines=(4, 5)),
        Invalid("""\
import mindspore as ms
from mindspore.device_context.ascend import op_precision

op_precision.matmul_allow_hf32(True)
ms.set_context(device_target="Ascend", ascend_config={"conv_allow_hf32": True})
""", lines=(4, 5)),
    )

    def visit_Assign(self, node: ast.Assign) -> None:
        value = constant(node.value)
        for target in node.targets:
            if not isinstance(target, ast.Attribute) or target.attr not in SWITCH_ATTRS:
                continue
            wanted = catalogue.TF32_SWITCHES.get((self.ctx.qualname(target.value), target.attr), NOT_CONSTANT)
            if same_literal(value, wanted):
                self.report(target)

    def visit_Call(self, node: ast.Call) -> None:
        if isinstance(node.func, ast.Attribute) and node.func.attr not in CALL_NAMES:
            return  # cheap filter; plain names may be aliases (`set_float32_matmul_precision as fp32`)
        qualified = self.ctx.call_qualname(node)
        if qualified in catalogue.TF32_CALLS:
            given = node.args[0] if node.args else keyword(node, "precision") or keyword(node, "value")
            value = constant(given)
            if any(same_literal(value, wanted) for wanted in catalogue.TF32_CALLS[qualified]):
                self.report(node)
        elif qualified in catalogue.MINDSPORE_SET_CONTEXT:
            config = keyword(node, "ascend_config")
            if isinstance(config, ast.Dict) and any(
                    constant(k) in catalogue.MINDSPORE_HF32_KEYS and constant(v) is True
                    for k, v in zip(config.keys, config.values, strict=True) if k is not None):
                self.report(node)

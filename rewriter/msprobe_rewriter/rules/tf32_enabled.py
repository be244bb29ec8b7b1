"""MSP105 tf32-enabled: float32 matmuls/convolutions allowed to run in TF32 (HF32 on Ascend)."""

from __future__ import annotations

import ast

from msprobe_rewriter import catalogue
from msprobe_rewriter.context import NOT_CONSTANT, constant, keyword
from msprobe_rewriter.rules.base import Invalid, Rule
from msprobe_rewriter.values import Bindings

SWITCH_ATTRS = frozenset(attr for _, attr in catalogue.TF32_SWITCHES)
CALL_NAMES = frozenset(name.rpartition(".")[2] for name in (*catalogue.TF32_CALLS, *catalogue.MINDSPORE_SET_CONTEXT,
                                                             *catalogue.NPU_SET_OPTION,
                                                             *catalogue.MINDSPORE_PRECISION_MODE))
CANN_MESSAGE = "{options} lower{s} float32 precision on Ascend ({how}): set {fixes} while comparing runs"
# option -> (what it does, the value that keeps float32)
CANN_EFFECT = {"ACL_OP_SELECT_IMPL_MODE": ("approximate high-performance kernels", "high_precision")}
CANN_LOWER = ("float32 operators run in float16/bfloat16", "must_keep_origin_dtype")
# Switches that are on by default (PyTorch's cuDNN convolutions, torch_npu's): setting them on changes nothing.
DEFAULT_ON = frozenset({("torch.backends.cudnn", "allow_tf32"), ("torch.npu.conv", "allow_hf32"),
                        ("torch_npu.npu.conv", "allow_hf32")})
DEFAULT_MESSAGE = ("`{attr} = True` is already the default, so convolutions keep running float32 in TF32/HF32 "
                   "without this line: set it to False while comparing runs")
# The option that narrows ACL_OP_SELECT_IMPL_MODE to the operator types it lists (ModelZoo's "LayerNorm").
IMPL_MODE_TYPES = "ACL_OPTYPELIST_FOR_IMPLMODE"


def same_literal(value: object, wanted: object) -> bool:
    """`value == wanted` for literals of the same type (so 1 is not True)."""
    return value is not NOT_CONSTANT and type(value) is type(wanted) and value == wanted


class Tf32Enabled(Rule):
    code = "MSP105"
    name = "tf32-enabled"
    severity = "warning"
    switched_by_flags = True
    frameworks = ("pytorch", "mindspore")
    message = ("float32 math is allowed to run in TF32/HF32 (10-bit mantissa): keep full float32 while comparing "
               "runs (`allow_tf32 = False`, `torch.set_float32_matmul_precision(\"highest\")`)")
    summary = ("Flags `torch.backends.cuda.matmul.allow_tf32 = True`, `torch.backends.cudnn.allow_tf32 = True`, "
               "`fp32_precision = \"tf32\"` (PyTorch >= 2.9), `torch.set_float32_matmul_precision(\"high\" | "
               "\"medium\")`, Ascend's HF32 switches (`torch.npu.matmul.allow_hf32 = True`, "
               "`torch.npu.conv.allow_hf32 = True`, MindSpore `op_precision.matmul_allow_hf32(True)`, "
               "`set_context(ascend_config={\"matmul_allow_hf32\": True})`), and CANN options that lower float32 "
               "precision, through torch_npu's `torch.npu.set_option({...})`, MindSpore's `ascend_config` or "
               "`op_precision.precision_mode(...)`: "
               "`ACL_PRECISION_MODE`/`precision_mode` `allow_fp32_to_fp16`, `force_fp16`, `allow_mix_precision*`, "
               "`allow_fp32_to_bf16`, `force_lowerprecision`, and `ACL_OP_SELECT_IMPL_MODE: high_performance` (naming "
               "the operator types `ACL_OPTYPELIST_FOR_IMPLMODE` narrows it to). Setting a switch that is on by "
               "default (`torch.backends.cudnn.allow_tf32`, `torch.npu.conv.allow_hf32`) to True is information: "
               "the line changes nothing, the convolutions round float32 either way.")
    why = ("TF32 (NVIDIA Ampere and later) and HF32 (Ascend) round float32 inputs of matmuls and convolutions "
           "to a 10-bit mantissa. The results then depend on the GPU generation and differ from CPU, from older "
           "GPUs and from the NPU by ~1e-3 relative, enough to hide or fake a precision bug in a comparison. "
           "Note that cuDNN convolutions (`torch.backends.cudnn.allow_tf32`) and Ascend convolutions "
           "(`torch.npu.conv.allow_hf32`) already default to the reduced precision. CANN's precision modes go further: "
           "`allow_fp32_to_fp16` runs float32 operators that have no float32 kernel in float16, and the "
           "`high_performance` implementation mode picks approximate kernels.")
    fix = ("While comparing runs set `torch.backends.cuda.matmul.allow_tf32 = False`, "
           "`torch.backends.cudnn.allow_tf32 = False` and `torch.set_float32_matmul_precision(\"highest\")` "
           "(Ascend: `torch.npu.matmul.allow_hf32 = False`, `torch.npu.conv.allow_hf32 = False`, and "
           "`torch.npu.set_option({\"ACL_PRECISION_MODE\": \"must_keep_origin_dtype\", \"ACL_OP_SELECT_IMPL_MODE\": "
           "\"high_precision\"})`; MindSpore: `ascend_config={\"precision_mode\": \"must_keep_origin_dtype\"}`).")
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
        """\
import torch
import torch_npu

torch.npu.set_option({"ACL_PRECISION_MODE": "must_keep_origin_dtype", "ACL_OP_SELECT_IMPL_MODE": "high_precision"})
""",
    )
    invalid = (
        # diffusers' training scripts: TF32 only when asked for (`--allow_tf32`, off by default): info.
        Invalid("""\
import argparse

import torch

parser = argparse.ArgumentParser()
parser.add_argument("--allow_tf32", action="store_true")
args = parser.parse_args()
if args.allow_tf32:
    torch.backends.cuda.matmul.allow_tf32 = True
""", lines=(9,), severity="info"),
        Invalid("""\
import torch

torch.backends.cuda.matmul.allow_tf32 = True
torch.backends.cudnn.allow_tf32 = False
""", lines=(3,)),
        # PyTorch's and torch_npu's defaults for convolutions (detectron2's default_setup): information.
        Invalid("""\
import torch
import torch_npu

torch.backends.cudnn.allow_tf32 = True
torch_npu.npu.conv.allow_hf32 = True
""", lines=(4, 5), severity="info"),
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
torch_npu.npu.matmul.allow_hf32 = True
""", lines=(4, 5)),
        Invalid("""\
import mindspore as ms
from mindspore.device_context.ascend import op_precision

op_precision.matmul_allow_hf32(True)
ms.set_context(device_target="Ascend", ascend_config={"conv_allow_hf32": True})
""", lines=(4, 5)),
        Invalid("""\
import mindspore as ms
import torch
import torch_npu

torch.npu.set_option({"ACL_PRECISION_MODE": "allow_fp32_to_fp16"})
torch_npu.npu.set_option({"ACL_OP_SELECT_IMPL_MODE": "high_performance", "ACL_OPTYPELIST_FOR_IMPLMODE": "LayerNorm"})
ms.set_context(ascend_config={"precision_mode": "allow_mix_precision"})
ms.device_context.ascend.op_precision.precision_mode("allow_fp32_to_fp16")
""", lines=(5, 6, 7, 8)),
        # ModelZoo's scripts build the options one by one.
        Invalid("import torch\nimport torch_npu\n\noption = {}\noption[\"ACL_OP_SELECT_IMPL_MODE\"] = \"high_performance\"\n"
                "option[\"ACL_OPTYPELIST_FOR_IMPLMODE\"] = \"LayerNorm\"\ntorch.npu.set_option(option)\n", lines=(7,)),
    )

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.bindings = Bindings.of(ctx)  # the options dict a name holds (ModelZoo builds it item by item)

    def visit_Assign(self, node: ast.Assign) -> None:
        self.bindings.assign(node)
        value = constant(node.value)
        for target in node.targets:
            if not isinstance(target, ast.Attribute) or target.attr not in SWITCH_ATTRS:
                continue
            switch = (self.ctx.qualname(target.value), target.attr)
            if not same_literal(value, catalogue.TF32_SWITCHES.get(switch, NOT_CONSTANT)):
                continue
            if switch in DEFAULT_ON:
                self.report(target, DEFAULT_MESSAGE.format(attr=".".join(switch)), "info")
            else:
                self.report(target)

    def visit_Call(self, node: ast.Call) -> None:
        self.bindings.call(node)  # `option.update({...})`
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
            elif isinstance(config, ast.Dict):
                self._check_cann_options(node, _options(config))
        elif qualified in catalogue.NPU_SET_OPTION:
            options = self.bindings.dict_fact(node.args[0]) if node.args else None
            if options is not None:  # a literal, or ModelZoo's `option = {}; option["ACL_..."] = ...; set_option(option)`
                self._check_cann_options(node, list(options.items))
        elif qualified in catalogue.MINDSPORE_PRECISION_MODE:
            mode = node.args[0] if node.args else keyword(node, "mode")
            if mode is not None:
                self._check_cann_options(node, [("precision_mode", mode)])

    def _check_cann_options(self, node: ast.Call, options: list[tuple[object, ast.expr]]) -> None:
        """CANN options (name, value expression) that lower float32 precision: every such one is named."""
        lowered = [(option, chosen) for option, chosen in ((option, constant(value)) for option, value in options)
                   if option in catalogue.CANN_REDUCED_PRECISION and chosen in catalogue.CANN_REDUCED_PRECISION[option]]
        if lowered:
            effects = [_effect(option, options) for option, _ in lowered]
            self.report(node, CANN_MESSAGE.format(
                options=", ".join(f"`{option}: {chosen}`" for option, chosen in lowered),
                s="" if len(lowered) > 1 else "s", how="; ".join(how for how, _ in effects),
                fixes=" and ".join(f"`{option}: {fix}`" for (option, _), (_, fix) in zip(lowered, effects, strict=True))))


def _effect(option: object, options: list[tuple[object, ast.expr]]) -> tuple[str, str]:
    """What a lowering option does and the value that keeps float32; an implementation mode named only for
    some operator types (`ACL_OPTYPELIST_FOR_IMPLMODE: "LayerNorm"`) applies to those alone."""
    how, fix = CANN_EFFECT.get(option, CANN_LOWER)
    types = next((constant(value) for name, value in options if name == IMPL_MODE_TYPES), None)
    if option == "ACL_OP_SELECT_IMPL_MODE" and isinstance(types, str) and types.strip():
        how = f"{how} for `{types}` only, the types `{IMPL_MODE_TYPES}` lists"
    return how, fix


def _options(config: ast.Dict) -> list[tuple[object, ast.expr]]:
    """A literal options dict as (option name, value expression) pairs; `**other` entries are left out."""
    return [(constant(key), value) for key, value in zip(config.keys, config.values, strict=True) if key is not None]

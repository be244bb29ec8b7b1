"""MSP107 compile-autotune: torch.compile / Inductor choosing kernels by timing them."""

from __future__ import annotations

import ast

from msprobe_rewriter import catalogue, environment
from msprobe_rewriter.assignments import assigned_before
from msprobe_rewriter.context import NOT_CONSTANT, SCOPE_TYPES, constant, keyword
from msprobe_rewriter.rules.base import Invalid, Rule

INDUCTOR_PATCH = catalogue.INDUCTOR_CONFIG + ".patch"
ENV_CALL_NAMES = frozenset({"setdefault", "putenv", "update"})
CALL_NAMES = frozenset({"compile", "patch"}) | ENV_CALL_NAMES


def switched_on(node: ast.expr | None) -> bool:
    """Whether an option's value is a literal that turns it on."""
    value = constant(node) if node is not None else NOT_CONSTANT
    return value is not NOT_CONSTANT and bool(value)


def dict_enables(node: ast.expr | None) -> bool:
    """Whether a dict literal turns an autotuning option on."""
    return isinstance(node, ast.Dict) and any(
        k is not None and constant(k) in catalogue.AUTOTUNE_OPTIONS and switched_on(v)
        for k, v in zip(node.keys, node.values, strict=True))


class CompileAutotune(Rule):
    code = "MSP107"
    name = "compile-autotune"
    severity = "info"
    frameworks = ("pytorch",)
    message = ("torch.compile autotuning picks kernels by timing them, so runs may use different kernels: "
               "compile with the default mode (no max-autotune) while comparing runs")
    summary = ("Flags `torch.compile(..., mode=\"max-autotune\" | \"max-autotune-no-cudagraphs\")`, "
               "`options={\"max_autotune\": True, ...}` (also `max_autotune_gemm`, `max_autotune_pointwise`, "
               "`coordinate_descent_tuning`; the mode or options also through a name last assigned the literal in "
               "its scope or the module: torchtitan's class-level `inductor_configs`), the same switches set on `torch._inductor.config` (attribute or "
               "`config.patch(...)`), and their `TORCHINDUCTOR_*` environment variables.")
    why = ("Like `cudnn.benchmark`, autotuning benchmarks several kernel configurations (Triton tile sizes, "
           "cuBLAS vs Triton GEMMs) and keeps the fastest. Which one wins depends on timing noise and the "
           "machine, and different tilings sum in different orders, so two runs of the same compiled model can "
           "differ in the last bits and a GPU run cannot be matched against another device.")
    fix = ("Compile with the default mode (or `mode=\"reduce-overhead\"`) while debugging, or not at all; remove "
           "the autotuning options and environment variables. Autotuning results are cached, so clearing the "
           "Inductor cache between compared runs is not enough on its own.")
    valid = (
        """\
import torch

model = torch.nn.Linear(8, 8)
fast = torch.compile(model)
graphs = torch.compile(model, mode="reduce-overhead")
options = {"max_autotune": True}


def build(options):
    fast = torch.compile(model, options=options)  # the caller's, not the module's
    options = {"max_autotune": False}
    return fast, torch.compile(model, options=options)
""",
        """\
import torch
import torch._inductor.config as inductor_config

inductor_config.max_autotune = False
compiled = torch.compile(torch.nn.Linear(4, 4), options={"max_autotune": False, "triton.cudagraphs": True})
""",
        # re.compile and a local `compile` are not torch's.
        """\
import re

import torch

pattern = re.compile("max-autotune")


def compile(model, mode):
    return model


compile(torch.nn.Linear(2, 2), mode="max-autotune")
""",
    )
    invalid = (
        Invalid("""\
import torch

model = torch.nn.Linear(8, 8)
model = torch.compile(model, mode="max-autotune")
""", lines=(4,)),
        Invalid("""\
from torch import compile as tc, nn


class Block(nn.Module):
    def forward(self, x):
        return x * 2


@tc(mode="max-autotune-no-cudagraphs")
def step(x):
    return x + 1


block = tc(Block(), options={"max_autotune_gemm": True, "epilogue_fusion": True})
""", lines=(9, 14)),
        # torchtitan's FlexAttention: the options are a dict the class body binds.
        Invalid("""\
from typing import ClassVar

import torch
from torch.nn.attention.flex_attention import flex_attention

MODE = "max-autotune-no-cudagraphs"


class FlexAttention(torch.nn.Module):
    inductor_configs: ClassVar[dict[str, bool]] = {"max_autotune": True, "coordinate_descent_tuning": True}
    compiled = torch.compile(flex_attention, options=inductor_configs)


step = torch.compile(lambda x: x + 1, mode=MODE)
""", lines=(11, 14)),
        Invalid("""\
import os

import torch
import torch._inductor.config

os.environ["TORCHINDUCTOR_MAX_AUTOTUNE"] = "1"
torch._inductor.config.coordinate_descent_tuning = True
with torch._inductor.config.patch(max_autotune=True):
    fn = torch.compile(lambda x: x @ x)
""", lines=(6, 7, 8)),
    )

    def visit_Call(self, node: ast.Call) -> None:
        if isinstance(node.func, ast.Attribute) and node.func.attr not in CALL_NAMES:
            return  # cheap filter; plain names may be aliases (`compile as tc`)
        qualified = self.ctx.call_qualname(node)
        if qualified in catalogue.TORCH_COMPILE:
            mode = constant(self._bound(keyword(node, "mode"), node))
            if mode in catalogue.AUTOTUNE_COMPILE_MODES or dict_enables(self._bound(keyword(node, "options"), node)):
                self.report(node)
        elif qualified == INDUCTOR_PATCH:
            if any(kw.arg in catalogue.AUTOTUNE_OPTIONS and switched_on(kw.value) for kw in node.keywords) or (
                    node.args and dict_enables(self._bound(node.args[0], node))):
                self.report(node)
        elif self._sets_env(environment.env_writes(node, qualified)):
            self.report(node)

    def visit_Assign(self, node: ast.Assign) -> None:
        for target in node.targets:
            if (isinstance(target, ast.Attribute) and target.attr in catalogue.AUTOTUNE_OPTIONS
                    and self.ctx.qualname(target.value) == catalogue.INDUCTOR_CONFIG and switched_on(node.value)):
                self.report(target)
        if any(isinstance(t, ast.Subscript) for t in node.targets) and self._sets_env(
                environment.env_assignments(node, self.ctx.qualname)):
            self.report(node)

    def _bound(self, value: ast.expr | None, call: ast.Call) -> ast.expr | None:
        """`value`, or for a name what its scope (a function's, a class body's), else the module, last assigned it
        before `call`: torchtitan's `options=inductor_configs`, a dict the class body binds. A parameter is
        not followed."""
        if not isinstance(value, ast.Name):
            return value
        scope = next((node for node in reversed(self.ctx.ancestors) if isinstance(node, SCOPE_TYPES)), self.ctx.tree)
        found = assigned_before(value, call, scope)
        args = getattr(scope, "args", None)
        if found is not None or args is not None and any(
                arg is not None and arg.arg == value.id
                for arg in (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg)):
            return found
        return assigned_before(value, call, self.ctx.tree)

    @staticmethod
    def _sets_env(pairs: list[tuple[str, ast.expr]]) -> bool:
        return any(name in catalogue.AUTOTUNE_ENV and environment.env_enables(value) for name, value in pairs)

"""Rules on library code whose meaning decides the finding: a teardown restoring cuDNN's default, a state dict
written back into the model it came from, an albumentations Compose's own generator, a one-off draw for an
identifier, a profiling loop, a tensor whose device a function hands on, an OpenMMLab config's dropout."""

from __future__ import annotations

import textwrap

import pytest
from msprobe_rewriter.lint.engine import lint_source
from msprobe_rewriter.rules import RULES_BY_NAME


def findings(rule: str, code: str, path: str = "example.py") -> list[tuple[int, str, str]]:
    result = lint_source(path, textwrap.dedent(code).encode(), [RULES_BY_NAME[rule]])
    assert not result.errors, result.errors
    return [(f.line, f.severity, f.message) for f in result.findings]


# --- MSP103: `deterministic = False` --------------------------------------------------------------------------
RESET = """
import torch


def init_seeds(deterministic=True):
    if deterministic:
        torch.backends.cudnn.deterministic = True


def unset_deterministic():
    torch.backends.cudnn.deterministic = False
"""


def test_reset_function_is_information_without_timing_claim():
    [(line, severity, message)] = findings("cudnn-benchmark", RESET)
    assert (line, severity) == (11, "info")
    assert "timing" not in message and "default back" in message


@pytest.mark.parametrize("code", [
    # nothing in the file turns determinism on: no reset, the switch is turned off
    "import torch\n\n\ndef setup():\n    torch.backends.cudnn.deterministic = False\n",
    # under a condition of its function: a branch of a switch, not the function's own statement
    "import torch\n\n\ndef setup(fast):\n    if fast:\n        torch.backends.cudnn.deterministic = False\n"
    "    else:\n        torch.backends.cudnn.deterministic = True\n",
])
def test_deterministic_off_elsewhere_stays_an_error_without_timing_claim(code):
    found = [f for f in findings("cudnn-benchmark", code) if "= False" in f[2]]
    assert [(severity, "timing" in message) for _, severity, message in found] == [("error", False)]


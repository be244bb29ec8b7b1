"""call_defaults.LeftAtDefault: what every call in a file passes a parameter of one of its functions."""

from __future__ import annotations

import ast
import textwrap

import pytest
from msprobe_rewriter.call_defaults import LeftAtDefault, equals
from msprobe_rewriter.context import FUNCTION_TYPES, FileContext


def defaults_and_function(code: str, name: str) -> tuple[LeftAtDefault, ast.AST]:
    """A LeftAtDefault over a dedented snippet, and the (last) function of it called `name`."""
    source = textwrap.dedent(code)
    tree = ast.parse(source)
    function = [node for node in ast.walk(tree) if isinstance(node, FUNCTION_TYPES) and node.name == name][-1]
    return LeftAtDefault(FileContext("snippet.py", source, tree)), function


@pytest.mark.parametrize(("calls", "off"), [
    ("", True),  # no call: the default
    ("block(1, 0.0)\nblock(2)\n", True),
    ("block(1, 0.1)\n", False),
    ("def model(drop=0.0):\n    return block(1, drop)\n", True),  # handed on from a default of the caller's
    ("def model(drop=0.2):\n    return block(1, drop)\n", False),
    ("def model(**kwargs):\n    return block(1, **kwargs)\n\nmodel()\n", True),  # only the caller's own **kwargs
    ("def model(**kwargs):\n    return block(1, **kwargs)\n\nmodel(rate=0.5)\n", False),
    ("def model(rate):\n    options = dict(rate=rate)\n    return block(1, **options)\n\nmodel(0.0)\n", True),
    ("block(*sizes)\n", False),  # may pass anything
    ("torch.nn.functional.block(1, 0.5)\n", True),  # a library's function of the same name is not this one
])
def test_a_rate_every_call_leaves_off(calls, off):
    defaults, block = defaults_and_function("import torch\n\n\ndef block(dim, rate=0.0):\n    return rate\n\n\n"
                                            + calls, "block")
    assert defaults.off(block, "rate", 0) is off


def test_a_parameter_the_function_assigns_holds_nothing_of_its_callers():
    defaults, block = defaults_and_function("""\
        def block(rate=0.0):
            rate = rate * 2
            return rate
        """, "block")
    assert not defaults.off(block, "rate", 0)


def test_a_parameter_switched_off_in_the_function_still_holds_its_callers_value():
    """llm-foundry's `dropout_p = dropout_p if training else 0.0`."""
    defaults, block = defaults_and_function("""\
        def block(training, rate=0.0):
            rate = rate if training else 0.0
            return rate
        """, "block")
    assert defaults.off(block, "rate", 0)


def test_a_class_is_called_by_its_name_and_a_static_method_without_its_object():
    code = """\
        class Mlp:
            def __init__(self, dim, drop=0.0):
                self.drop = drop

            @staticmethod
            def make(dim, drop=0.0):
                return drop


        layer = Mlp(4, {init})
        value = Mlp.make(0.5, 0.0)
        """
    for passed, off in (("0.0", True), ("0.5", False)):
        defaults, init = defaults_and_function(code.format(init=passed), "__init__")
        assert defaults.off(init, "drop", 0) is off
    make = next(node for node in ast.walk(defaults.tree) if isinstance(node, ast.FunctionDef) and node.name == "make")
    assert defaults.off(make, "drop", 0)


def test_a_default_is_trusted_only_when_asked():
    code = "def sample(device=None):\n    return device\n\n\nsample('cuda')\n"
    defaults, sample = defaults_and_function(code, "sample")
    is_none = equals(type(None), None)
    assert not defaults.holds(sample, "device", is_none)
    assert defaults.holds(sample, "device", is_none, trust_default=True)


def test_a_number_is_no_bool():
    defaults, block = defaults_and_function("def block(flag=0):\n    return flag\n", "block")
    assert defaults.off(block, "flag", 0)
    assert not defaults.off(block, "flag", False)


def test_a_trusted_default_not_taken_holds_when_every_call_passes_one():
    """VideoMAE's `_get_pixels(..., device="cuda")`, which every call gives `device="cpu"`."""
    is_cpu = equals(str, "cpu")
    for calls, holds in (("sample('cpu')\n", True), ("sample('cpu')\nsample()\n", False), ("", False)):
        defaults, sample = defaults_and_function(f"def sample(device='cuda'):\n    return device\n\n\n{calls}", "sample")
        assert defaults.holds(sample, "device", is_cpu, trust_default=True) is holds

"""entropy-seed (MSP108) beyond its in-rule examples: messages, one finding per origin, the hand-off from
seed-missing, evaluation code, and the cases it must leave alone."""

from __future__ import annotations

import pytest
from msprobe_rewriter.lint.engine import lint_source
from msprobe_rewriter.rules import RULES_BY_CODE

TRAIN = """
model = torch.nn.Linear(4, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(3):
    optimizer.zero_grad()
    model(torch.randn(8, 4)).sum().backward()
    optimizer.step()
"""


def lint(code: str, *codes: str):
    result = lint_source("train.py", code.encode(), [RULES_BY_CODE[c] for c in codes or ("MSP108",)])
    assert not result.errors, result.errors
    return result.findings


def test_message_names_the_source_and_its_line():
    [found] = lint("import time\n\nimport torch\n\nseed = int(time.time())\ntorch.manual_seed(seed)\n")
    assert (found.line, found.column) == (6, 1)
    assert "`time.time()` (line 5)" in found.message and "use a fixed seed" in found.message


def test_one_finding_per_origin_naming_the_other_calls():
    code = ("import random\n\nimport numpy as np\nimport torch\n\nseed = random.randint(0, 99)\n"
            "random.seed(seed)\nnp.random.seed(seed)\ntorch.manual_seed(seed)\n")
    [found] = lint(code)
    assert found.line == 7 and "line 8, 9" in found.message


def test_initial_seed_after_torch_seed_is_one_finding():
    found = lint("import numpy as np\nimport torch\n\ntorch.seed()\nnp.random.seed(torch.initial_seed() % 2**32)\n")
    assert [(f.line, "torch.seed()" in f.message) for f in found] == [(5, True)]


@pytest.mark.parametrize("fallback", [
    "args.seed or int(time.time())",
    "args.seed if args.seed is not None else int(time.time())",
])
def test_fallbacks_taken_with_the_default_arguments(fallback):
    code = ("import argparse\nimport time\n\nimport torch\n\nparser = argparse.ArgumentParser()\n"
            "parser.add_argument('--seed', type=int, default={default})\nargs = parser.parse_args()\n"
            f"torch.manual_seed({fallback})\n")
    assert [f.line for f in lint(code.format(default=None))] == [9]
    assert lint(code.format(default=7)) == []


@pytest.mark.parametrize("code", [
    # The fallback runs only when the config says so: cannot be decided statically, so no finding.
    "import time\n\nimport torch\n\nseed = cfg.seed\nif seed < 0:\n    seed = int(time.time())\ntorch.manual_seed(seed)\n",
    # `args` is a parameter: its value is the caller's, who only calls this when a seed was given.
    "import argparse\nimport random\n\n\ndef set_random_seed(args):\n    random.seed(args.seed)\n\n\n"
    "parser = argparse.ArgumentParser()\nparser.add_argument('--seed', type=int, default=None)\n"
    "args = parser.parse_args()\nif args.seed:\n    set_random_seed(args)\n",
    # A torch-like library's `Generator.seed()`: drawing a fresh seed is its contract.
    "import time\n\n\nclass Generator:\n    def seed(self):\n        s = int(time.time() * 1e6)\n"
    "        self.manual_seed(s)\n        return s\n",
    # The clock seeds nothing here.
    "import time\n\nimport torch\n\nstart = time.time()\ntorch.manual_seed(0)\nprint(time.time() - start)\n",
    # Only under an option that is off by default.
    "import argparse\nimport time\n\nimport torch\n\nparser = argparse.ArgumentParser()\n"
    "parser.add_argument('--random-seed', action='store_true')\nargs = parser.parse_args()\n"
    "if args.random_seed:\n    torch.manual_seed(int(time.time()))\nelse:\n    torch.manual_seed(0)\n",
])
def test_left_alone(code):
    assert lint(code) == []


def test_seed_missing_leaves_an_entropy_only_script_to_entropy_seed():
    found = lint("import random\n\nimport torch\n\nrandom.seed()\ntorch.seed()\n" + TRAIN, "MSP101", "MSP108")
    assert [(f.line, f.code) for f in found] == [(5, "MSP108"), (6, "MSP108")]


def test_seed_missing_still_fires_when_only_a_generator_object_draws_from_entropy():
    code = "import time\n\nimport numpy as np\nimport torch\n\nrng = np.random.default_rng(int(time.time()))\n"
    found = lint(code + TRAIN, "MSP101", "MSP108")
    assert sorted(f.code for f in found) == ["MSP101", "MSP108"]


def test_evaluation_code_is_info():
    code = "import time\n\nimport torch\n\n\ndef evaluate(model):\n    torch.manual_seed(int(time.time()))\n"
    [found] = lint(code)
    assert found.severity == "info"


def test_unrelated_files_are_not_analysed():
    assert lint("import torch\n\nx = torch.ones(3)\n") == []


@pytest.mark.parametrize("seed", ["hash(name) % 2**32", "hash(f'{name}-0')", "hash(str(0.5))",
                                  "hash(name + 'x') % 1000", "hash(self) % 7"])
def test_salted_hash_seed_is_reported(seed):
    code = f"import random\n\n\ndef seed_for(name, self=None):\n    random.seed({seed})\n"
    [found] = lint(code)
    assert found.line == 5 and "salts afresh in every process" in found.message


@pytest.mark.parametrize("seed", ["hash(7)", "hash((1, 2))", "hash(-3)", "hash(len(name))", "hash(count)"])
def test_number_hash_seed_is_left_alone(seed):
    code = f"import random\n\ncount = 5\n\n\ndef seed_for(name):\n    random.seed({seed})\n"
    assert lint(code) == []


def test_shadowed_hash_is_left_alone():
    code = "import random\n\n\ndef hash(text):\n    return 7\n\n\nrandom.seed(hash('a'))\n"
    assert lint(code) == []


def test_function_returning_entropy_is_followed_into():
    code = ("import time\n\nimport torch\n\n\ndef seed_from_clock():\n    if time.time() > 0:\n"
            "        return int(time.time())\n    return time.time_ns()\n\n\ntorch.manual_seed(seed_from_clock())\n")
    [found] = lint(code)
    assert found.line == 12 and "which returns `time.time()`" in found.message


@pytest.mark.parametrize("body", ["return 1234", "if flag:\n        return 7\n    return int(time.time())",
                                  "def inner():\n        return time.time()\n    return 5", "pass"])
def test_function_with_a_fixed_return_is_left_alone(body):
    code = f"import time\n\nimport torch\n\n\ndef seed(flag=True):\n    {body}\n\n\ntorch.manual_seed(seed())\n"
    assert lint(code) == []

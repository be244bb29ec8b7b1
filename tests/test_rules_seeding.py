"""Seeding and determinism rules beyond their in-rule examples: project-local helpers (real files in a
temporary project), conditions evaluated with argparse defaults, and where whole-script findings point."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

import pytest
from msprobe_rewriter.lint.engine import lint_source
from msprobe_rewriter.rules import RULES_BY_NAME

TRAIN_LOOP = """
def train(model, loader):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for x in loader:
        optimizer.zero_grad()
        model(x).sum().backward()
        optimizer.step()
"""


def write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))


def lint(path: Path, *names: str) -> list[tuple[str, int]]:
    """(rule name, line) of every finding of the named rules on `path`."""
    result = lint_source(str(path), path.read_bytes(), [RULES_BY_NAME[n] for n in names])
    assert not result.errors
    return [(f.name, f.line) for f in result.findings]


def script(imports: str, body: str = "set_seed(0)") -> str:
    return f"import torch\n{imports}\n{TRAIN_LOOP}\n\nif __name__ == '__main__':\n    {body}\n    train(None, [])\n"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    return tmp_path


# --- following project-local helpers -----------------------------------------------------------
SEEDS_ALL = """
import random
import numpy as np
import torch


def set_seed(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
"""


@pytest.mark.parametrize(("files", "imports", "body"), [
    ({"utils.py": SEEDS_ALL}, "from utils import set_seed", "set_seed(0)"),
    ({"utils.py": SEEDS_ALL}, "import utils", "utils.set_seed(0)"),
    ({"utils.py": SEEDS_ALL}, "from utils import set_seed as fix", "fix(0)"),
    ({"tools/__init__.py": "", "tools/misc.py": SEEDS_ALL}, "from tools.misc import set_seed", "set_seed(1)"),
    ({"tools/__init__.py": "", "tools/misc.py": SEEDS_ALL}, "from tools import misc", "misc.set_seed(1)"),
    ({"tools/__init__.py": "from .misc import set_seed\n", "tools/misc.py": SEEDS_ALL}, "from tools import set_seed",
     "set_seed(1)"),
    ({"tools/__init__.py": "from .misc import *\n", "tools/misc.py": SEEDS_ALL}, "from tools import *",
     "set_seed(1)"),
])
def test_seeding_helper_in_another_file_counts(project, files, imports, body):
    write(project, files)
    write(project, {"train.py": script(imports, body)})
    assert lint(project / "train.py", "seed-missing") == []


def test_relative_import_from_a_package_script(project):
    write(project, {"pkg/__init__.py": "", "pkg/misc.py": SEEDS_ALL,
                    "pkg/train.py": script("from .misc import set_seed as seed_everything", "seed_everything(3)")})
    assert lint(project / "pkg" / "train.py", "seed-missing") == []


def test_helper_found_but_not_seeding_fires(project):
    write(project, {"utils.py": "import logging\n\n\ndef set_seed(seed):\n    logging.info('seed %s', seed)\n",
                    "train.py": script("from utils import set_seed")})
    assert lint(project / "train.py", "seed-missing") == [("seed-missing", 12)]


def test_helper_of_a_helper_in_a_third_file_counts(project):
    write(project, {
        "common/rng.py": SEEDS_ALL,
        "setup_utils.py": "from common.rng import set_seed\n\n\ndef prepare(cfg):\n    set_seed(cfg.seed)\n",
        "train.py": script("from setup_utils import prepare", "prepare(cfg)"),
    })
    assert lint(project / "train.py", "seed-missing") == []


def test_helpers_are_followed_two_files_deep_only(project):
    write(project, {
        "c.py": SEEDS_ALL.replace("def set_seed", "def init_rng"),
        "b.py": "from c import init_rng\n\n\ndef configure():\n    init_rng(0)\n",
        "a.py": "from b import configure\n\n\ndef prepare():\n    configure()\n",
        "train.py": script("from a import prepare", "prepare()"),
    })
    assert lint(project / "train.py", "seed-missing") == [("seed-missing", 12)]


def test_modules_above_the_project_root_are_not_searched(tmp_path):
    write(tmp_path, {"helpers.py": SEEDS_ALL.replace("def set_seed", "def prepare"),
                     "proj/pyproject.toml": "", "proj/train.py": script("from helpers import prepare", "prepare(0)")})
    assert lint(tmp_path / "proj" / "train.py", "seed-missing") == [("seed-missing", 12)]
    (tmp_path / "proj" / "pyproject.toml").unlink()  # no marker: the parent folder is searched too
    assert lint(tmp_path / "proj" / "train.py", "seed-missing") == []


@pytest.mark.parametrize("helper", [None, "def set_seed(seed:\n", "\x00\x01binary"])
def test_missing_or_broken_helper_falls_back_to_its_name(project, helper):
    if helper is not None:
        (project / "utils.py").write_bytes(helper.encode())
    write(project, {"train.py": script("from utils import set_seed")})
    assert lint(project / "train.py", "seed-missing", "seed-partial") == []


def test_edited_helper_is_read_again(project):
    write(project, {"utils.py": SEEDS_ALL, "train.py": script("from utils import set_seed")})
    assert lint(project / "train.py", "seed-missing") == []
    helper = project / "utils.py"
    helper.write_text("def set_seed(seed):\n    pass\n")
    os.utime(helper, ns=(helper.stat().st_atime_ns, helper.stat().st_mtime_ns + 10**9))
    assert lint(project / "train.py", "seed-missing") == [("seed-missing", 12)]


def test_partial_seeding_seen_through_a_helper(project):
    write(project, {"utils.py": "import torch\n\n\ndef set_seed(seed):\n    torch.manual_seed(seed)\n",
                    "train.py": script("import numpy as np\nfrom utils import set_seed",
                                       "set_seed(0)\n    np.random.shuffle([1, 2])")})
    assert lint(project / "train.py", "seed-partial") == [("seed-partial", 15)]


DETERMINISM_HELPER = """
import torch


def set_seed(seed, deterministic=False):
    torch.manual_seed(seed)
    if deterministic:
        torch.use_deterministic_algorithms(True)
"""


@pytest.mark.parametrize(("call", "expected"), [
    ("set_seed(0)", [("no-deterministic-algos", 12)]),
    ("set_seed(0, deterministic=False)", [("no-deterministic-algos", 12)]),
    ("set_seed(0, True)", []),
    ("set_seed(0, deterministic=args.det)", []),  # unknown: assume it may
])
def test_helper_arguments_decide_its_branches(project, call, expected):
    write(project, {"utils.py": DETERMINISM_HELPER, "train.py": script("from utils import set_seed", call)})
    assert lint(project / "train.py", "no-deterministic-algos", "seed-missing") == expected


def test_hccl_set_in_a_helper(project):
    write(project, {
        "env.py": "import os\n\n\ndef setup_env():\n    os.environ['HCCL_DETERMINISTIC'] = 'true'\n",
        "dist.py": "import torch.distributed as dist\nfrom env import setup_env\n\nsetup_env()\n"
                   "dist.init_process_group('hccl')\n",
        "dist_bad.py": "import torch.distributed as dist\nfrom env import other\n\nother()\n"
                       "dist.init_process_group('hccl')\n",
    })
    write(project, {"env.py": (project / "env.py").read_text() + "\n\ndef other():\n    pass\n"})
    assert lint(project / "dist.py", "dist-no-deterministic-comm") == []
    assert lint(project / "dist_bad.py", "dist-no-deterministic-comm") == [("dist-no-deterministic-comm", 5)]


# --- conditions under the default arguments -----------------------------------------------------
def conditional_script(argument: str, condition: str) -> str:
    return textwrap.dedent(f"""\
        import argparse
        import torch

        parser = argparse.ArgumentParser()
        parser.add_argument({argument})
        {TRAIN_LOOP.strip().replace(chr(10), chr(10) + '        ')}


        if __name__ == "__main__":
            args = parser.parse_args()
            if {condition}:
                torch.manual_seed(0)
            train(None, [])
        """)


@pytest.mark.parametrize(("argument", "condition", "fires"), [
    ('"--seed", type=int', "args.seed is not None", True),
    ('"--seed", type=int, default=None', "args.seed is not None", True),
    ('"--seed", type=int, default=7', "args.seed is not None", False),
    ('"--seed", type=int, default=-1', "args.seed >= 0", True),
    ('"--seed", type=int, default=0', "args.seed", True),
    ('"--seed", type=int, default=3', "args.seed", False),
    ('"--no-seed", action="store_true"', "not args.no_seed", False),
    ('"--deterministic", action="store_true"', "args.deterministic", True),
    ('"--seed", dest="random_seed", type=int', "args.random_seed is not None and args.random_seed > 0", True),
    ('"--seed", type=int', "args.seed is not None or args.debug", False),  # unknown: may seed
    ('"--seed", type=int', "cfg.rng_seed is not None", False),  # not an argparse option: unknown
    ('"--seed", type=int, required=True', "args.seed is not None", False),
])
def test_seeding_under_a_condition(tmp_path, argument, condition, fires):
    path = tmp_path / "train.py"
    path.write_text(conditional_script(argument, condition))
    found = lint(path, "seed-missing")
    assert found == ([("seed-missing", 16)] if fires else [])
    if fires:
        result = lint_source(str(path), path.read_bytes(), [RULES_BY_NAME["seed-missing"]])
        assert "false with the default arguments" in result.findings[0].message


def test_set_defaults_overrides_the_argument_default(tmp_path):
    path = tmp_path / "train.py"
    text = conditional_script('"--seed", type=int', "args.seed is not None")
    path.write_text(text.replace("type=int)\n", "type=int)\nparser.set_defaults(seed=5)\n"))
    assert lint(path, "seed-missing") == []


# --- where whole-script findings point --------------------------------------------------------------
def test_whole_script_findings_point_at_the_main_guard(tmp_path):
    path = tmp_path / "train.py"
    path.write_text(script("", "pass"))
    result = lint_source(str(path), path.read_bytes(), [RULES_BY_NAME["seed-missing"]])
    (finding,) = result.findings
    assert (finding.line, finding.column, finding.end_line) == (12, 1, 12)
    assert finding.end_column == len("if __name__ == '__main__'") + 1


def test_whole_script_findings_point_at_the_module_level_loop(tmp_path):
    path = tmp_path / "train.py"
    path.write_text("import torch\n\nmodel = torch.nn.Linear(2, 2)\nopt = torch.optim.SGD(model.parameters())\n"
                    "for step, batch in enumerate(loader):\n    opt.zero_grad()\n    model(batch).sum().backward()\n"
                    "    opt.step()\n")
    result = lint_source(str(path), path.read_bytes(), [RULES_BY_NAME["seed-missing"],
                                                         RULES_BY_NAME["no-deterministic-algos"]])
    assert {(f.name, f.line, f.column, f.end_line) for f in result.findings} == {
        ("seed-missing", 5, 1, 5), ("no-deterministic-algos", 5, 1, 5)}


def test_evaluation_only_draws_do_not_make_a_script_need_seeds(tmp_path):
    path = tmp_path / "validate.py"
    path.write_text("import torch\n\n\ndef validate(model):\n    warmup = torch.randn(1, 3, 224, 224)\n"
                    "    return model(warmup)\n\n\nif __name__ == '__main__':\n    validate(torch.nn.Identity())\n")
    assert lint(path, "seed-missing", "no-deterministic-algos") == []


@pytest.mark.parametrize("main", [
    "model = Net()\n    assert model(torch.randn(2, 3, 32, 32)).shape == (2, 10)",  # a smoke test
    "for i in range(10):\n        writer.add_scalar('loss', random.random() * i, i)",  # fake data for a demo
    "stats = [x.mean() for x in torch.utils.data.DataLoader(dataset, shuffle=True)]",
])
def test_scripts_whose_randomness_does_not_matter(tmp_path, main):
    path = tmp_path / "demo.py"
    path.write_text(f"import random\n\nimport torch\n\nif __name__ == '__main__':\n    {main}\n")
    assert lint(path, "seed-missing", "no-deterministic-algos") == []


@pytest.mark.parametrize(("seeding", "fires"), [
    ("random.seed()", True),  # a fresh seed from the OS every run
    ("np.random.seed(None)", True),
    ("random.seed(a=None)", True),
    ("np.random.seed(seed=0)", False),
    ("random.seed(args_seed)", False),
])
def test_seeding_without_a_seed_is_not_seeding(tmp_path, seeding, fires):
    path = tmp_path / "train.py"
    path.write_text(script("import random\nimport numpy as np", seeding))
    assert bool(lint(path, "seed-missing")) is fires

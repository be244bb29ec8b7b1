"""MSP102 seed-partial: a file that seeds some generators but draws from one it never seeds."""

from __future__ import annotations

import ast
import re

from msprobe_rewriter import catalogue, seeding
from msprobe_rewriter.context import Site, keyword
from msprobe_rewriter.rules.base import Invalid, Rule

# Generator family of each global draw, and how to seed it.
DRAW_FAMILY = {
    **dict.fromkeys(catalogue.PYTHON_RANDOM_DRAWS, "random"),
    **dict.fromkeys(catalogue.NUMPY_RANDOM_DRAWS, "numpy"),
    **dict.fromkeys(catalogue.TORCH_RANDOM_DRAWS | catalogue.TORCH_INIT_DRAWS, "torch"),
}
SAYS_SEED = re.compile("seed", re.IGNORECASE)
DRAW_NAMES = frozenset(name.rpartition(".")[2] for name in DRAW_FAMILY)
SEED_HINT = {"random": "`random.seed(seed)`", "numpy": "`np.random.seed(seed)`", "torch": "`torch.manual_seed(seed)`"}
FAMILY_LABEL = {"random": "Python's `random`", "numpy": "NumPy's global generator",
                "torch": "torch's global generator", "mindspore": "MindSpore"}


class SeedPartial(Rule):
    code = "MSP102"
    name = "seed-partial"
    severity = "warning"
    frameworks = ("pytorch", "mindspore", "python")
    message = "this draws from a generator the file never seeds, although it seeds others: seed every generator"
    summary = ("In a file that seeds at least one generator family (directly, through a library seeder, or "
               "through a project helper), flags the first draw from each family it leaves unseeded: Python's "
               "`random`, NumPy's global generator, torch's global generator (`torch.rand*`, `torch.nn.init`). "
               "`mindspore.set_seed` seeds MindSpore and NumPy but not `random`. A file that seeds nothing is "
               "left to seed-missing: for a module that is not an entry script, the seeding belongs to the "
               "script that imports it.")
    why = ("Seeding is all or nothing: one unseeded generator is enough for data order, augmentation or "
           "initialisation to change from run to run, and it is easy to miss because the script visibly seeds. "
           "MindSpore users hit this with `random.shuffle`/`random.choice` in dataset code after "
           "`mindspore.set_seed`, which does not touch Python's `random`.")
    fix = ("Seed the missing family next to the others (`random.seed(seed)`, `np.random.seed(seed)`, "
           "`torch.manual_seed(seed)`), or replace the lot with one `seed_all(seed)` call, which seeds them all. "
           "Better still, draw from an explicit seeded generator (`np.random.default_rng(seed)`).")
    valid = (
        """\
import random

import numpy as np
import torch

random.seed(0)
np.random.seed(0)
torch.manual_seed(0)
index = random.randrange(10)
noise = np.random.normal(size=3)
weights = torch.randn(3, 3)
""",
        # seed_everything seeds random, numpy and torch at once.
        """\
import random

import numpy as np
from lightning import seed_everything

seed_everything(7)
order = list(range(100))
random.shuffle(order)
mask = np.random.rand(100) > 0.5
""",
        # Seeds nothing at all: a library module (seed-missing covers entry scripts).
        """\
import random


def augment(sample):
    if random.random() < 0.5:
        return sample[::-1]
    return sample
""",
        # Draws from explicit generators, not the global ones.
        """\
import numpy as np
import torch

torch.manual_seed(0)
rng = np.random.default_rng(0)
g = torch.Generator().manual_seed(1)
x = rng.normal(size=4)
y = torch.randn(4, generator=g)
z = torch.rand(4)
""",
        # `np.random.seed` here is not NumPy's: a local module named np.
        """\
import torch
import mylib as np

torch.manual_seed(0)
np.random.shuffle([1, 2, 3])
""",
    )
    invalid = (
        Invalid("""\
import random

import numpy as np
import torch

torch.manual_seed(1234)
perm = np.random.permutation(100)
crop = random.randint(0, 32)
more = np.random.rand(3)
""", lines=(7, 8)),
        # mindspore.set_seed seeds MindSpore and NumPy, not Python's random.
        Invalid("""\
import random

import mindspore as ms
import numpy as np


def main():
    ms.set_seed(1)
    data = list(range(1000))
    random.shuffle(data)
    noise = np.random.normal(size=8)
    return data, noise


if __name__ == "__main__":
    main()
""", lines=(10,)),
        Invalid("""\
from random import choice as pick

import numpy as np
from torch import nn


def build(seed):
    np.random.seed(seed)
    layer = nn.Linear(4, 4)
    nn.init.kaiming_uniform_(layer.weight)
    return layer, pick(["sgd", "adam"])
""", lines=(10, 11)),
    )

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.first: dict[str, tuple[Site, str]] = {}

    def visit_Call(self, node: ast.Call) -> None:
        if isinstance(node.func, ast.Attribute) and node.func.attr not in DRAW_NAMES:
            return  # cheap filter; plain names may be aliases (`choice as pick`)
        qualified = self.ctx.call_qualname(node)
        family = DRAW_FAMILY.get(qualified)
        if family is None or family in self.first or keyword(node, "generator") is not None:
            return
        self.first[family] = (self.ctx.site(node), qualified)

    def finish(self) -> None:
        # A file that never says "seed" seeds nothing we could see (a project helper with another name at
        # most): skipping the analysis then only costs findings, never adds one.
        if not self.first or not SAYS_SEED.search(self.ctx.source):
            return
        seeded = seeding.analyse(self.ctx).families()
        if not seeded:
            return
        for family, (site, qualified) in self.first.items():
            if family not in seeded:
                self.report(site, self._message(family, qualified, seeded))

    @staticmethod
    def _message(family: str, qualified: str, seeded: frozenset[str]) -> str:
        others = ", ".join(FAMILY_LABEL[f] for f in sorted(seeded))
        note = " (`mindspore.set_seed` does not seed it)" if family == "random" and "mindspore" in seeded else ""
        return (f"`{qualified}` draws from {FAMILY_LABEL[family]}, which this file never seeds{note} although it "
                f"seeds {others}: add {SEED_HINT[family]}")

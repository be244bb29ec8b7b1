"""MSP102 seed-partial: a file that seeds some generators but draws from one it never seeds."""

from __future__ import annotations

import ast
import re

from msprobe_rewriter import catalogue, pinning, seeding
from msprobe_rewriter.context import Site, argument, constant, keyword
from msprobe_rewriter.rules.base import Invalid, Rule

# Generator family of each global draw, and how to seed it.
DRAW_FAMILY = {
    **dict.fromkeys(catalogue.PYTHON_RANDOM_DRAWS, "random"),
    **dict.fromkeys(catalogue.NUMPY_RANDOM_DRAWS | catalogue.MINDSPORE_INIT_DRAWS, "numpy"),
    **dict.fromkeys(catalogue.TORCH_RANDOM_DRAWS | catalogue.TORCH_INIT_DRAWS, "torch"),
    **dict.fromkeys(catalogue.MINDSPORE_OP_DRAWS, "mindspore"),
    **dict.fromkeys(catalogue.MINDSPORE_GENERATOR_DRAWS, "mindspore-generator"),
}
SAYS_SEED = re.compile("seed", re.IGNORECASE)
# Last name components of the draws and of the seeders: a cheap filter before resolving a callee.
WATCHED_NAMES = frozenset(name.rpartition(".")[2] for name in (*DRAW_FAMILY, *pinning.SEEDER_FAMILIES))
SEED_HINT = {"random": "`random.seed(seed)`", "numpy": "`np.random.seed(seed)`", "torch": "`torch.manual_seed(seed)`",
             "mindspore": "`mindspore.set_seed(seed)`", "mindspore-generator": "`mindspore.manual_seed(seed)`"}
FAMILY_LABEL = {"random": "Python's `random`", "numpy": "NumPy's global generator",
                "torch": "torch's global generator", "mindspore": "MindSpore's operator RNG",
                "mindspore-generator": "MindSpore's default generator", "mindspore-dataset": "MindSpore's data pipeline"}
# (unseeded family, a family seeded next to it) -> why the seeder of the second does not cover the first.
NOT_COVERED = {
    ("mindspore", "mindspore-dataset"): "`mindspore.dataset.config.set_seed` does not seed operators",
    ("mindspore-generator", "mindspore"): "`mindspore.set_seed` does not seed it",
}


class SeedPartial(Rule):
    code = "MSP102"
    name = "seed-partial"
    severity = "warning"
    frameworks = ("pytorch", "mindspore", "python")
    message = "this draws from a generator the file never seeds, although it seeds others: seed every generator"
    summary = ("In a file that seeds at least one generator family (directly, through a library seeder, or "
               "through a project helper), flags the first draw from each family it leaves unseeded: Python's "
               "`random`, NumPy's global generator (also behind `mindspore.common.initializer`), torch's global "
               "generator (`torch.rand*`, `torch.nn.init`), MindSpore's operator RNG (`ops.standard_normal`, "
               "`ops.uniform`, `ops.randn`, `ops.dropout`, `nn.Dropout`, ...; seeded by `mindspore.set_seed`, not "
               "by `mindspore.dataset.config.set_seed`) and MindSpore's default generator (`mint.randn`, ...; "
               "seeded only by `mindspore.manual_seed`). A draw given its own `seed=`/`generator=` is not global. "
               "A file that seeds nothing is left to seed-missing: for a module that is not an entry script, the "
               "seeding belongs to the script that imports it.")
    why = ("Seeding is all or nothing: one unseeded generator is enough for data order, augmentation, dropout "
           "masks or initialisation to change from run to run, and it is easy to miss because the script visibly "
           "seeds. MindSpore users hit this with `mindspore.dataset.config.set_seed`, which seeds `random`, NumPy "
           "and the data pipeline but not the random operators, and with `mint` draws, which follow "
           "`mindspore.manual_seed` instead of `mindspore.set_seed`.")
    fix = ("Seed the missing family next to the others (`random.seed(seed)`, `np.random.seed(seed)`, "
           "`torch.manual_seed(seed)`, `mindspore.set_seed(seed)`, `mindspore.manual_seed(seed)`), or replace the "
           "lot with one `seed_all(seed)` call, which seeds them all. Better still, draw from an explicit seeded "
           "generator (`np.random.default_rng(seed)`).")
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
        # `mindspore.set_seed` seeds `random`, NumPy, the data pipeline and the operators (MindSpore 2.10);
        # an operator given its own seed, a `mint` draw given a generator and a dropout of 0 are not global.
        """\
import random

import mindspore as ms
import numpy as np
from mindspore import mint, nn, ops

ms.set_seed(1)
order = random.sample(range(10), 10)
noise = np.random.normal(size=8)
x = ops.uniform((2, 2), ms.Tensor(0.0), ms.Tensor(1.0))
mask = mint.rand(8, generator=ms.Generator().manual_seed(1)) > 0.5
drop = mint.nn.Dropout(p=0.0)
z = ops.standard_normal((8,), seed=3)
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
        # `mindspore.dataset.config.set_seed` seeds random, NumPy and the pipeline, not the operators.
        Invalid("""\
import random

import mindspore.dataset as ds
import numpy as np
from mindspore import nn, ops


def main():
    ds.config.set_seed(1)
    data = list(range(1000))
    random.shuffle(data)
    noise = np.random.normal(size=8)
    mask = ops.standard_normal((8,)) > 0
    return data, noise, mask, nn.Dropout(p=0.1)


if __name__ == "__main__":
    main()
""", lines=(13,)),
        # `mint` draws follow `mindspore.manual_seed`, which `mindspore.set_seed` does not call.
        Invalid("""\
import mindspore as ms
from mindspore import mint, ops

ms.set_seed(0)
x = ops.randn(4, 4)
y = mint.randn(4, 4)
""", lines=(6,)),
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
        self.seeded: frozenset[str] = frozenset()  # by the catalogue's seeders, seen during the traversal

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func  # cheap filters first: this runs for every call of every file
        if type(func) is ast.Attribute:
            if func.attr not in WATCHED_NAMES:
                return
        elif type(func) is not ast.Name or func.id not in self.ctx.imports.bindings:
            return  # a builtin, a local function, a call of a call's result (`choice as pick` is bound)
        qualified = self.ctx.call_qualname(node) or seeding.method_qualname(self.ctx, node)
        if qualified in pinning.SEEDER_FAMILIES:
            for summary, _ in pinning.call_effects(node, qualified):
                self.seeded |= summary.families
            return
        family = DRAW_FAMILY.get(qualified)
        if family is None or family in self.first or not _draws_globally(node, qualified):
            return
        self.first[family] = (self.ctx.site(node), qualified)

    def finish(self) -> None:
        # A file that never says "seed" seeds nothing we could see (a project helper with another name at
        # most): skipping the analysis then only costs findings, never adds one.
        if not self.first or not SAYS_SEED.search(self.ctx.source):
            return
        seeded = self.seeded
        if not seeded.issuperset(self.first):  # only then can the whole-file analysis change the verdict
            seeded = seeding.analyse(self.ctx).families()
        if not seeded:
            return
        for family, (site, qualified) in self.first.items():
            if family not in seeded:
                self.report(site, self._message(family, qualified, seeded))

    @staticmethod
    def _message(family: str, qualified: str, seeded: frozenset[str]) -> str:
        others = ", ".join(FAMILY_LABEL[f] for f in sorted(seeded))
        notes = [note for (missing, present), note in NOT_COVERED.items() if missing == family and present in seeded]
        note = f" ({notes[0]})" if notes else ""
        return (f"`{qualified}` draws from {FAMILY_LABEL[family]}, which this file never seeds{note} although it "
                f"seeds {others}: call {SEED_HINT[family]}")


def _draws_globally(call: ast.Call, qualified: str) -> bool:
    """Whether a draw uses its family's global state: no `generator=`, no seed of its own, a dropout rate > 0."""
    if keyword(call, "generator") is not None:
        return False
    if qualified in catalogue.MINDSPORE_OP_DRAWS:
        position = catalogue.MINDSPORE_OP_DRAWS[qualified]
        seed = argument(call, position, "seed") if position is not None else keyword(call, "seed")
        if seed is not None and constant(seed) is not None:
            return False
    for name, position, off in catalogue.MINDSPORE_DROPOUT_OFF.get(qualified, ()):
        rate = argument(call, position, name) if position is not None else keyword(call, name)
        if rate is not None and constant(rate) == off:
            return False
    return True

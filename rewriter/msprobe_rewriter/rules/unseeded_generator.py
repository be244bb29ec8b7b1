"""MSP106 unseeded-generator: generator objects created without a seed (or never seeded afterwards)."""

from __future__ import annotations

import ast

from msprobe_rewriter import catalogue, conditions
from msprobe_rewriter.context import NOT_CONSTANT, Site, argument, constant, target_name
from msprobe_rewriter.rules.base import Invalid, Rule

FACTORY_NAMES = frozenset(name.rpartition(".")[2] for name in catalogue.GENERATOR_FACTORIES)
PRIMITIVE_NAMES = frozenset(name.rpartition(".")[2] for name in catalogue.MINDSPORE_RANDOM_PRIMITIVES)
CREATOR_NAMES = FACTORY_NAMES | PRIMITIVE_NAMES | frozenset(
    name.rpartition(".")[2] for name in catalogue.TORCH_GENERATOR_CLASSES)
SEEDING_METHODS = frozenset({"manual_seed", "set_state", "setstate"})
UNSEEDED = "`{name}()` without a seed starts from fresh OS entropy in every run: pass a seed (`{name}(seed)`)"
NONE_BY_DEFAULT = ("`{name}` is seeded from `{arg}`, which is None with the default arguments (fresh OS entropy): "
                   "give the seed option a default value")
TORCH_UNSEEDED = ("this `torch.Generator` is never seeded: it ignores `torch.manual_seed` and starts from the same "
                  "fixed seed as every other generator; call `.manual_seed(seed)` on it")
PRIMITIVE_UNSEEDED = ("`{name}()` with no non-zero seed draws from fresh entropy in every run, even after "
                      "`mindspore.set_seed`: pass a fixed `seed=` (non-zero)")


class UnseededGenerator(Rule):
    code = "MSP106"
    name = "unseeded-generator"
    severity = "warning"
    frameworks = ("pytorch", "mindspore", "python")
    message = "a random generator object is created without a seed: pass one (or call `.manual_seed(seed)`)"
    summary = ("Flags `np.random.default_rng()`, `np.random.RandomState()`, NumPy bit generators "
               "(`PCG64()`, ...), `np.random.SeedSequence()` and `random.Random()` created without a seed (or "
               "with a literal None, or an argparse option whose default is None) and a `torch.Generator(...)`, "
               "unless the variable holding it (a name in its function, an attribute in its class) is seeded "
               "later in the file (`.manual_seed(s)`, `.seed(s)`, `.set_state(...)`; a bare `.seed()` draws a "
               "fresh seed and does not count); also MindSpore "
               "random-operator primitives (`ops.StandardNormal()`, `ops.UniformReal()`, `ops.Gamma()`, ...) "
               "created with every seed 0 (the default).")
    why = ("A generator object has its own state: `np.random.seed` / `random.seed` / `torch.manual_seed` do not "
           "touch it. NumPy and `random` generators created without a seed take fresh entropy from the OS, so "
           "every run draws different numbers even in a fully seeded script. An unseeded `torch.Generator` "
           "starts from a fixed default seed that your `--seed` does not control, and every such generator "
           "draws the same stream. MindSpore's random primitives ignore `mindspore.set_seed`: with both seeds 0 "
           "they take a fresh random seed on every run.")
    fix = ("Pass the run's seed when creating the generator (`np.random.default_rng(seed)`, `random.Random(seed)`) "
           "or seed a torch generator right away: `g = torch.Generator(); g.manual_seed(seed)` "
           "(`torch.Generator().manual_seed(seed)` returns the generator). Give MindSpore primitives a fixed "
           "non-zero seed (`ops.StandardNormal(seed=seed)`), or use the functional ops (`ops.standard_normal`), "
           "which follow `mindspore.set_seed`.")
    valid = (
        """\
import random

import numpy as np
import torch

rng = np.random.default_rng(42)
legacy = np.random.RandomState(seed=0)
local = random.Random(7)
g = torch.Generator()
g.manual_seed(0)
loader_gen = torch.Generator().manual_seed(1)
shuffler = random.Random()
shuffler.seed(1234)
""",
        """\
import argparse

import numpy as np

parser = argparse.ArgumentParser()
parser.add_argument("--seed", type=int, default=0)
args = parser.parse_args()
rng = np.random.default_rng(args.seed)
""",
        """\
import torch
from torch.utils.data import DataLoader


class Loader:
    def __init__(self, dataset, seed):
        self.generator = torch.Generator()
        self.loader = DataLoader(dataset, shuffle=True, generator=self.generator)
        self.seed = seed

    def set_epoch(self, epoch):
        self.generator.manual_seed(self.seed + epoch)
""",
        # Not numpy's / Python's: local classes with the same names.
        """\
import numpy as np


class Random:
    pass


def default_rng():
    return None


r = Random()
g = default_rng()
""",
        """\
import mindspore.ops as ops
from mindspore.ops import operations as P

normal = ops.StandardNormal(seed=2)
uniform = P.UniformReal(seed=0, seed2=7)
shuffle = ops.RandomShuffle(seed=args.seed)
""",
        # Made only when a seed is given.
        """\
import argparse
import random

import numpy as np

parser = argparse.ArgumentParser()
parser.add_argument("--seed", type=int, default=None)
args = parser.parse_args()
if args.seed is not None:
    local = random.Random(args.seed)
rng = None if args.seed is None else np.random.Generator(np.random.PCG64(seed=args.seed))
""",
    )
    invalid = (
        Invalid("""\
import random

import numpy as np

rng = np.random.default_rng()
legacy = np.random.RandomState(None)
local = random.Random()
""", lines=(5, 6, 7)),
        Invalid("""\
from numpy.random import Generator, PCG64, default_rng as make_rng


def sampler():
    return Generator(PCG64()), make_rng(seed=None)
""", lines=(5,)),
        Invalid("""\
import torch
from torch.utils.data import DataLoader


def build(dataset):
    g = torch.Generator()
    sampler_gen = torch.Generator(device="cpu")
    sampler_gen.seed()
    return DataLoader(dataset, shuffle=True, generator=g), DataLoader(dataset, generator=torch.Generator())
""", lines=(6, 7, 9)),
        Invalid("""\
import argparse

import numpy as np

parser = argparse.ArgumentParser()
parser.add_argument("--seed", type=int, help="optional seed")
args = parser.parse_args()
rng = np.random.default_rng(args.seed)
""", lines=(8,)),
        Invalid("""\
import mindspore as ms
from mindspore import nn, ops


class Noise(nn.Cell):
    def __init__(self):
        super().__init__()
        self.normal = ops.StandardNormal()
        self.coin = ops.UniformReal(seed=0, seed2=0)

    def construct(self, x):
        return x + self.normal(x.shape) * self.coin((1,))


ms.set_seed(1)
""", lines=(8, 9)),
        # Each function's generator is its own, whatever its name.
        Invalid("""\
import numpy as np
from mindspore import ops


def rpn_targets(mask):
    sampler = ops.RandomChoiceWithMask(count=256)
    return sampler(mask)


def roi_targets(mask):
    sampler = ops.RandomChoiceWithMask(count=512)
    return sampler(mask)


def jitter():
    rng = np.random.RandomState()
    return rng.rand()


def seeded(seed):
    rng = np.random.RandomState()
    rng.seed(seed)
    return rng.rand()
""", lines=(6, 11, 16)),
    )

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.pending: list[tuple[tuple[int, str], Site, str]] = []  # (scope, variable), where made, message
        self.seeded: set[tuple[int, str]] = set()  # (scope, variable) seeded somewhere
        self._lookup: conditions.Lookup | None = None

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        if isinstance(func, ast.Attribute) and _seeds_object(node):
            name = target_name(func.value)
            if name is not None:
                self.seeded.add(self._key(name, func.value))
            return
        if isinstance(func, ast.Attribute) and func.attr not in CREATOR_NAMES:
            return  # cheap filters; plain names may be aliases, but only imported ones resolve
        if isinstance(func, ast.Name) and func.id not in self.ctx.imports.bindings:
            return
        qualified = self.ctx.call_qualname(node)
        if qualified in catalogue.GENERATOR_FACTORIES:
            message = self._factory_problem(node, qualified)
        elif qualified in catalogue.TORCH_GENERATOR_CLASSES:
            message = TORCH_UNSEEDED
        elif qualified in catalogue.MINDSPORE_RANDOM_PRIMITIVES:
            message = _primitive_problem(node, qualified)
        else:
            return
        if message is not None:
            self._unseeded(node, message)

    def _factory_problem(self, node: ast.Call, qualified: str) -> str | None:
        seed = argument(node, *catalogue.GENERATOR_FACTORIES[qualified])
        short = qualified.rpartition(".")[2]
        if seed is None or constant(seed) is None:
            return UNSEEDED.format(name=short)
        if (constant(seed) is NOT_CONSTANT and conditions.value(seed, self._defaults()) is None
                and self._runs_by_default(node)):
            return NONE_BY_DEFAULT.format(name=short, arg=ast.unparse(seed))
        return None

    def _runs_by_default(self, node: ast.AST) -> bool:
        """False when an enclosing `if` or conditional expression keeps `node` from running with the default
        arguments (`if args.seed is not None:`, `... if args.seed else None`)."""
        chain = [*self.ctx.ancestors, node]
        for outer, inner in zip(chain, chain[1:], strict=False):  # each ancestor and the next one down
            if isinstance(outer, (ast.If, ast.IfExp)) and inner is not outer.test:
                in_body = inner in outer.body if isinstance(outer, ast.If) else inner is outer.body
                truth = conditions.truth(outer.test, self._defaults())
                if truth is not None and truth is not in_body:
                    return False
        return True

    def _unseeded(self, node: ast.Call, message: str) -> None:
        """Report now, or when the file ends if the generator is stored in a name that may be seeded later."""
        parent = self.ctx.ancestors[-1] if self.ctx.ancestors else None
        if isinstance(parent, ast.Attribute) and parent.value is node and parent.attr in SEEDING_METHODS:
            return  # torch.Generator().manual_seed(seed)
        if isinstance(parent, (ast.Assign, ast.AnnAssign)) and parent.value is node:
            targets = parent.targets if isinstance(parent, ast.Assign) else [parent.target]
            names = [target_name(t) for t in targets]
            if all(names):
                self.pending += [(self._key(name, target), self.ctx.site(node), message)
                                 for name, target in zip(names, targets, strict=True)]
                return
        self.report(node, message)

    def _key(self, name: str, target: ast.expr) -> tuple[int, str]:
        """A generator variable in its scope: a plain name in its function (0: the module), an attribute
        (`self.rng`) in its class."""
        kinds = ast.ClassDef if isinstance(target, ast.Attribute) else (ast.FunctionDef, ast.AsyncFunctionDef,
                                                                        ast.Lambda)
        return next((id(a) for a in reversed(self.ctx.ancestors) if isinstance(a, kinds)), 0), name

    def _defaults(self) -> conditions.Lookup:
        if self._lookup is None:
            self._lookup = conditions.argparse_lookup(conditions.argparse_defaults(ast.walk(self.ctx.tree)))
        return self._lookup

    def finish(self) -> None:
        seeded_names = {name for _, name in self.seeded}
        for (scope, name), site, message in self.pending:
            # a module-level generator may be seeded in any function (a global)
            if (scope, name) not in self.seeded and not (scope == 0 and name in seeded_names):
                self.report(site, message)


def _seeds_object(call: ast.Call) -> bool:
    """`g.manual_seed(s)`, `rng.seed(s)` (with a seed: a bare `.seed()` reseeds from entropy), `set_state`."""
    attr = call.func.attr
    return attr in SEEDING_METHODS or (attr == "seed" and bool(call.args or call.keywords))


def _primitive_problem(call: ast.Call, qualified: str) -> str | None:
    """The message for a MindSpore random primitive whose seeds are all absent, None or a literal 0."""
    seeds = [argument(call, position, name) for position, name in catalogue.MINDSPORE_RANDOM_PRIMITIVES[qualified]]
    if all(seed is None or constant(seed) in (0, None) for seed in seeds):
        return PRIMITIVE_UNSEEDED.format(name=qualified.rpartition(".")[2])
    return None

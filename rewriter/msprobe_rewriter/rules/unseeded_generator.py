"""MSP106 unseeded-generator: generator objects created without a seed (or never seeded afterwards)."""

from __future__ import annotations

import ast
import re

from msprobe_rewriter import catalogue, conditions
from msprobe_rewriter.call_defaults import LeftAtDefault
from msprobe_rewriter.context import (
    NOT_CONSTANT,
    Site,
    argument,
    constant,
    parameter_defaults,
    target_name,
    unpacks,
    walk_scope,
)
from msprobe_rewriter.rules.base import Invalid, Rule

FACTORY_NAMES = frozenset(name.rpartition(".")[2] for name in catalogue.GENERATOR_FACTORIES)
MS_OPERATORS = {**catalogue.MINDSPORE_RANDOM_PRIMITIVES, **catalogue.MINDSPORE_SEEDED_FUNCTIONS}
CALL_SEEDED = catalogue.MINDSPORE_CALL_SEEDED_PRIMITIVES
CALL_SEEDED_NAMES = frozenset(name.rpartition(".")[2] for name in CALL_SEEDED)
# albumentations' `Compose` keeps generators of its own (1.4.21 and later), seeded by `seed=` only; a Compose nested in
# another takes the outer one's seed.
ALBUMENTATIONS_COMPOSE = frozenset(f"{module}.Compose" for module in catalogue.ALBUMENTATIONS_MODULES)
CREATOR_NAMES = FACTORY_NAMES | CALL_SEEDED_NAMES | {"Compose"} | frozenset(
    name.rpartition(".")[2] for name in (*MS_OPERATORS, *catalogue.TORCH_GENERATOR_CLASSES,
                                         *catalogue.MINDSPORE_GENERATOR_CLASSES))
# Names of values meant to differ in every run: a session or run id, a nonce (ultralytics' analytics
# `"session_id": round(random.Random().random() * 1e15)`).
IDENTIFIER = re.compile(r"(?:^|_)(?:id|uid|uuid|session|nonce)$", re.IGNORECASE)
# What a one-off draw's value may pass through on its way to the name it gets.
NUMBER_WRAPPERS = frozenset({"round", "int", "str", "hex", "abs"})
SEEDING_METHODS = frozenset({"manual_seed", "set_state", "setstate", "set_random_seed"})
UNSEEDED = "`{name}()` without a seed starts from fresh OS entropy in every run: pass a seed (`{name}(seed)`)"
NONE_BY_DEFAULT = ("`{name}` is seeded from `{arg}`, which is None with the default arguments (fresh OS entropy): "
                   "give the seed option a default value")
FALLBACK = " (only when a caller passes no `{name}`: every call in the project passes one)"
TORCH_UNSEEDED = ("this `torch.Generator` is never seeded: it ignores `torch.manual_seed` and starts from the same "
                  "fixed seed as every other generator; call `.manual_seed(seed)` on it")
ALBUMENTATIONS_UNSEEDED = ("albumentations' `Compose()` without `seed=` draws from generators of its own (albumentations "
                          "1.4.21 and later), seeded from the OS: `random.seed` and `np.random.seed` do not reach "
                          "them, so every run augments differently; pass `seed=` (`A.Compose(..., seed=seed)`)")
MINDSPORE_UNSEEDED = ("this MindSpore `Generator` is never seeded: it ignores `mindspore.manual_seed` and "
                      "`mindspore.set_seed` and starts from seed 0, like every other one; call `.manual_seed(seed)` "
                      "on it")
OPERATOR_UNSEEDED = ("`{name}` with {seeds} is seeded afresh in every run, even after `mindspore.set_seed`: "
                     "{fix} (on Ascend, where MindSpore ignores the seeds of most random operators, draw on the host "
                     "with seeded NumPy and copy the result to the device)")


class UnseededGenerator(Rule):
    code = "MSP106"
    name = "unseeded-generator"
    severity = "warning"
    frameworks = ("pytorch", "mindspore", "python")
    message = "a random generator object is created without a seed: pass one (or call `.manual_seed(seed)`)"
    summary = ("Flags `np.random.default_rng()`, `np.random.RandomState()`, NumPy bit generators "
               "(`PCG64()`, ...), `np.random.SeedSequence()` and `random.Random()` created without a seed (or "
               "with a literal None, or an argparse option whose default is None), a `torch.Generator(...)` and a "
               "MindSpore `Generator()` (which starts from seed 0), an albumentations `Compose(...)` without `seed=` (not one "
               "nested in another, which takes the outer one's seed, nor one of fixed transforms applied always: "
               "`Compose([Resize(...), CenterCrop(...)])`), "
               "but not a generator made to draw once for a value named as an identifier (`session_id`, a `uuid`), "
               "unless the variable holding it (a name in its function, an attribute in its class) is seeded "
               "later in the file (`.manual_seed(s)`, `.seed(s)`, `.set_state(...)`; a bare `.seed()` draws a "
               "fresh seed and does not count); also MindSpore random operators that ignore `mindspore.set_seed` "
               "and are left unseeded: primitives (`ops.StandardNormal()`, `ops.UniformReal()`, `ops.Gamma()`, "
               "`ops.Multinomial()`, `ops.UniformCandidateSampler(...)`, "
               "`ops.SampleDistortedBoundingBoxV2()`, `nn.SampledSoftmaxLoss(...)`, ...) created with every seed 0 "
               "(the default), `ops.Bernoulli()` with seed -1 (the default) and `ops.RandpermV2(seed=-1)` (both "
               "read the clock), `ops.Cauchy`, `ops.LogNormalReverse`, `ops.NonDeterministicInts` and `ops.Randperm`, "
               "which take no seed at all, "
               "`ops.RandomCategorical`, which takes its seed as the third input of each call, called with seed 0 "
               "(checked where the primitive is called at once or through the variable holding it), and the "
               "functions `ops.random_categorical` (seed 0), `ops.bernoulli` (no seed), "
               "`ops.uniform_candidate_sampler` (seed 0) and `ops.multinomial_with_replacement` (seed and offset 0). "
               "A seed that is a parameter of the enclosing function "
               "counts with its default value (`def __init__(self, seed=0)`). A generator made under `if <parameter> "
               "is None:` is information when every call of the function in the project passes that parameter "
               "(a `sample_dataset(..., random_state)` every caller gives a seeded `RandomState`; one handing on "
               "a parameter of its own counts only where that is so given in turn, minddiffusion's `plms_sampling(..., "
               "x_T=x_T)` from `sample(..., x_T=None)` does not).")
    why = ("A generator object has its own state: `np.random.seed` / `random.seed` / `torch.manual_seed` do not "
           "touch it. NumPy and `random` generators created without a seed take fresh entropy from the OS, so "
           "every run draws different numbers even in a fully seeded script. An unseeded `torch.Generator` "
           "starts from a fixed default seed that your `--seed` does not control, and every such generator "
           "draws the same stream. MindSpore's random primitives ignore `mindspore.set_seed`: with both seeds 0 "
           "they take a fresh random seed on every run (MindSpore 2.10, checked by running them twice); with a "
           "fixed non-zero seed each call still draws new numbers, and the whole sequence repeats from run to "
           "run. MindSpore documents that on Ascend the seed of most of them (`StandardNormal`, `UniformReal`, "
           "`Multinomial`, `RandomCategorical`, ...) has no effect: there even a seeded operator "
           "differs from run to run.")
    fix = ("Pass the run's seed when creating the generator (`np.random.default_rng(seed)`, `random.Random(seed)`) "
           "or seed a torch generator right away: `g = torch.Generator(); g.manual_seed(seed)` "
           "(`torch.Generator().manual_seed(seed)` returns the generator; so does MindSpore's). The dropout "
           "primitive `ops.Dropout` is MSP401's: turn it off (`keep_prob=1.0`) rather than seed it. Give MindSpore "
           "primitives a fixed "
           "non-zero seed (`ops.StandardNormal(seed=seed)`, `ops.random_categorical(logits, n, seed=seed)`; for "
           "`ops.RandomCategorical` a non-zero third input of each call; for `ops.Bernoulli` a seed of 0 or "
           "more), or use the functional ops (`ops.standard_normal`), which follow `mindspore.set_seed`. On "
           "Ascend, where MindSpore ignores these seeds, draw on the host (seeded NumPy) and copy the result to "
           "the device while debugging.")
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
import mindspore as ms
import mindspore.ops as ops
from mindspore import nn
from mindspore.ops import operations as P

normal = ops.StandardNormal(seed=2)
uniform = P.UniformReal(seed=0, seed2=7)
shuffle = ops.RandomShuffle(seed=args.seed)
coin = ops.Bernoulli(seed=0)
order = ops.RandpermV2()  # its default seed 0 is a fixed seed
drop = ops.Dropout(keep_prob=0.9)  # dropout: MSP401 (seeding it does not help on Ascend)
generator = ms.Generator().manual_seed(1)
tokens = ops.random_categorical(logits, 4, seed=5)
loss = nn.SampledSoftmaxLoss(64, 10000, seed=1)
picks = ops.multinomial_with_replacement(probs, 5, 0, 8, True)
""",
        # `RandomCategorical` takes its seed when called (mindspore models' GPT-2 sampler).
        """\
import mindspore.common.dtype as mstype
from mindspore import nn
from mindspore.ops import operations as P


class Sample(nn.Cell):
    def __init__(self):
        super().__init__()
        self.sample_function = P.RandomCategorical(mstype.int32)

    def construct(self, distribution):
        return self.sample_function(P.Softmax()(distribution), 1, 1)
""",
        # albumentations: the outer Compose's seed reaches the nested one.
        """\
import albumentations as A

transform = A.Compose([A.Blur(p=0.01), A.Compose([A.ToGray(p=0.01)])], seed=0)
""",
        # A Compose of fixed transforms applied always draws nothing that matters.
        """\
import albumentations as A

preprocess = A.Compose([A.SmallestMaxSize(max_size=256), A.CenterCrop(height=256, width=256)])
""",
        # ultralytics' analytics: a one-off draw for a session id, meant to differ in every run.
        """\
import random

metadata = {"session_id": round(random.Random().random() * 1e15), "version": 1}
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
        # a fallback for callers passing no generator: every call here passes one (a call leaving it out would
        # make it a warning)
        Invalid("""\
import numpy as np


def sample(items, n, random_state=None):
    if random_state is None:
        random_state = np.random.RandomState()
    return random_state.permutation(items)[:n]


picked = sample(range(10), 3, np.random.RandomState(42))
""", lines=(6,), severity="info"),
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
        # ultralytics' Albumentations: `init_seeds` seeds `random`, NumPy and torch, none of which Compose draws from.
        Invalid("""\
class Albumentations:
    def __init__(self, p=1.0):
        import albumentations as A

        self.transform = A.Compose([A.Blur(p=0.01), A.ToGray(p=0.01)])
""", lines=(5,)),
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
        # `RandomCategorical`'s seed is an input of each call; the seed parameter defaults to 0 (MindSpore's own
        # example); the functional form and `Bernoulli` (seed -1: the clock) likewise.
        Invalid("""\
import mindspore as ms
from mindspore import nn, ops


class Net(nn.Cell):
    def __init__(self, num_sample):
        super().__init__()
        self.random_categorical = ops.RandomCategorical(ms.int64)
        self.num_sample = num_sample

    def construct(self, logits, seed=0):
        return self.random_categorical(logits, self.num_sample, seed)


def draw(logits, probs):
    first = ops.RandomCategorical()(logits, 1, 0)
    return first, ops.random_categorical(logits, 4), ops.Bernoulli()(logits, probs)
""", lines=(12, 16, 17)),
        # A seed parameter that is 0 by default (and forced to 0 here): the default run is unseeded.
        Invalid("""\
from mindspore import nn, ops


class DropPath(nn.Cell):
    def __init__(self, drop_prob=None, seed=0):
        super().__init__()
        self.keep_prob = 1 - drop_prob
        seed = min(seed, 0)
        self.rand = ops.UniformReal(seed=seed)
        self.sampler = ops.UniformCandidateSampler(1, 5, True, 100)
""", lines=(9, 10)),
        # mindformers' parallel-core Dropout takes its seed and offset from a new generator, which starts from 0.
        Invalid("""\
import mindspore as ms
from mindspore.common.generator import Generator


class Dropout:
    def __init__(self):
        self.seed, self.offset = Generator()._step(ms.Tensor(1, ms.int64))
""", lines=(7,)),
        # Operators that take no seed, and a loss sampling its candidates with seed 0 (the default).
        Invalid("""\
import mindspore as ms
from mindspore import nn, ops

ms.set_seed(1)
noise = ops.Cauchy([4, 4])()
loss = nn.SampledSoftmaxLoss(num_sampled=64, num_classes=10000)
""", lines=(5, 6)),
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
        # Primitives seeded at each call (`ops.RandomCategorical`): (scope, variable) -> their catalogue name,
        # and the calls through a variable that pass them an unseeding seed (watched only in files naming them).
        self.call_seeded: dict[tuple[int, str], str] = {}
        self.unseeded_calls: list[tuple[tuple[int, str], Site]] = []
        self.watch_calls = any(name in ctx.source for name in CALL_SEEDED_NAMES)
        self.defaults = LeftAtDefault(ctx)

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        if self.watch_calls and isinstance(func, (ast.Name, ast.Attribute)):
            self._note_primitive_call(node)
        if isinstance(func, ast.Attribute) and _seeds_object(node):
            name = target_name(func.value)
            if name is not None:
                self.seeded.add(self._key(name, func.value))
            return
        if isinstance(func, ast.Attribute) and func.attr not in CREATOR_NAMES:
            return  # cheap filters; plain names may be aliases, but only imported ones resolve
        if isinstance(func, ast.Name) and func.id not in self.ctx.imports.bindings:
            return
        qualified = self.ctx.call_qualname(node) or self._compose(node)
        if qualified in catalogue.GENERATOR_FACTORIES:
            message = self._factory_problem(node, qualified)
        elif qualified in catalogue.TORCH_GENERATOR_CLASSES:
            message = TORCH_UNSEEDED
        elif qualified in catalogue.MINDSPORE_GENERATOR_CLASSES:
            message = MINDSPORE_UNSEEDED
        elif qualified in MS_OPERATORS:
            entry = MS_OPERATORS[qualified]
            message = _message(qualified, entry) if _unseeded(node, entry, self.ctx.current_def()) else None
        elif qualified in CALL_SEEDED:
            self._call_seeded_created(node, qualified)
            return
        elif qualified in ALBUMENTATIONS_COMPOSE:
            message = None if self._seeded_compose(node) or not self._may_draw(node) else ALBUMENTATIONS_UNSEEDED
        else:
            return
        if message is not None:
            self._unseeded(node, message)

    def _seeded_compose(self, node: ast.Call) -> bool:
        """An albumentations `Compose` given a seed that is not None, or nested in another `Compose` (which seeds it)."""
        seed = argument(node, None, "seed")
        if (seed is not None and constant(seed) is not None) or unpacks(node):
            return True
        return any(isinstance(outer, ast.Call) and self._compose(outer) for outer in self.ctx.ancestors)

    def _may_draw(self, transform: ast.expr) -> bool:
        """Whether an albumentations transform may draw: not when it is a fixed one applied always (`Resize`,
        `CenterCrop`, with no `p` below 1) or a `Compose` of a literal list of such, also held in names the function
        assigned before (minddiffusion's `self.preprocessor = Compose([self.rescaler, self.cropper])`)."""
        if isinstance(transform, (ast.Name, ast.Attribute)):
            transform = self._assigned_before(transform)
        qualified = self.ctx.imports.resolve_any(transform.func) if isinstance(transform, ast.Call) else None
        if qualified is None or catalogue.transform_library(qualified) != "albumentations":
            return True
        if catalogue.is_random_transform(qualified) or not catalogue.is_sometimes_applied(qualified):
            return True
        probability = argument(transform, None, "p")
        if probability is not None and constant(probability) != 1:
            return True
        if qualified not in ALBUMENTATIONS_COMPOSE:
            return False
        listed = argument(transform, 0, "transforms")
        return not isinstance(listed, (ast.List, ast.Tuple)) or any(map(self._may_draw, listed.elts))

    def _assigned_before(self, held: ast.expr) -> ast.expr | None:
        """The value `held` (a name, `self.rescaler`) holds here: the latest assignment to it in a block around here,
        before it, with no other assignment to it in between (minddiffusion's `self.cropper = CenterCrop(...)` in
        the `if` branch holding the Compose, `RandomCrop(...)` in the other); else None."""
        function, text = self.ctx.current_def(), ast.unparse(held)
        if function is None:
            return None
        path = self.ctx.ancestors[self.ctx.ancestors.index(function):]
        blocks = [block for outer, inner in zip(path, path[1:], strict=False)
                  for block in (getattr(outer, name, None) for name in ("body", "orelse", "finalbody"))
                  if isinstance(block, list) and inner in block]
        stores = sorted((node.lineno, node) for node in walk_scope(function) if isinstance(node, ast.Assign)
                        and node.lineno < held.lineno and any(ast.unparse(t) == text for t in node.targets))
        if not stores or not any(stores[-1][1] in block for block in blocks):
            return None
        return stores[-1][1].value

    def _compose(self, call: ast.Call) -> str | None:
        """`call`'s qualified name when it builds an albumentations `Compose` (a library the import tracker does not
        resolve by default)."""
        qualified = self.ctx.imports.resolve_any(call.func)
        return qualified if qualified in ALBUMENTATIONS_COMPOSE else None

    def _call_seeded_created(self, node: ast.Call, qualified: str) -> None:
        """`ops.RandomCategorical(...)`: called at once, its call is checked; stored in a variable, the calls
        through that variable are (when the file ends)."""
        parent = self.ctx.ancestors[-1] if self.ctx.ancestors else None
        if isinstance(parent, ast.Call) and parent.func is node:
            if _unseeded(parent, CALL_SEEDED[qualified], self.ctx.current_def()):
                self.report(parent, _message(qualified, CALL_SEEDED[qualified]))
        elif isinstance(parent, (ast.Assign, ast.AnnAssign)) and parent.value is node:
            for target in parent.targets if isinstance(parent, ast.Assign) else [parent.target]:
                name = target_name(target)
                if name is not None:
                    self.call_seeded[self._key(name, target)] = qualified

    def _note_primitive_call(self, node: ast.Call) -> None:
        """Remember a call through a variable that may hold a primitive seeded at each call, if its seed
        leaves it unseeded."""
        name = target_name(node.func)
        if name is None:
            return
        entry = next(iter(CALL_SEEDED.values()))  # one seed layout for all of them (RandomCategorical)
        if _unseeded(node, entry, self.ctx.current_def(), missing_is_unseeded=False):  # missing: a TypeError
            self.unseeded_calls.append((self._key(name, node.func), self.ctx.site(node)))

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
        if self._names_identifier(node):
            return
        severity, fallback = None, self._fallback_for(node)
        if fallback is not None:
            severity, message = "info", message + FALLBACK.format(name=fallback)
        if isinstance(parent, (ast.Assign, ast.AnnAssign)) and parent.value is node:
            targets = parent.targets if isinstance(parent, ast.Assign) else [parent.target]
            names = [target_name(t) for t in targets]
            if all(names):
                self.pending += [(self._key(name, target), self.ctx.site(node), message, severity)
                                 for name, target in zip(names, targets, strict=True)]
                return
        self.report(node, message, severity)

    def _fallback_for(self, node: ast.Call) -> str | None:
        """The parameter a generator made here stands in for, under `if <parameter> is None:`, when every call of
        the function in the project passes one (a `sample_dataset` whose callers pass a seeded
        `RandomState`); else None."""
        function = self.ctx.current_def()
        chain = [*self.ctx.ancestors, node]
        for outer, inner in zip(chain, chain[1:], strict=False):
            test = outer.test if isinstance(outer, ast.If) and inner in outer.body else None
            if (isinstance(test, ast.Compare) and isinstance(test.left, ast.Name) and len(test.ops) == 1
                    and isinstance(test.ops[0], ast.Is) and constant(test.comparators[0]) is None
                    and self.defaults.always_given(function, test.left.id)):
                return test.left.id
        return None

    def _names_identifier(self, node: ast.Call) -> bool:
        """Whether a generator made here only draws once, for a value named as an identifier (a dict key, a
        variable or a keyword: `session_id`, `run_uuid`): meant to differ in every run, never a training input."""
        child, drawn = node, False
        for parent in reversed(self.ctx.ancestors):
            if isinstance(parent, ast.Attribute) and parent.value is child and not drawn:
                drawn = True
            elif isinstance(parent, ast.Call) and (parent.func is child or (
                    isinstance(parent.func, ast.Name) and parent.func.id in NUMBER_WRAPPERS)):
                pass
            elif isinstance(parent, ast.Attribute) or not isinstance(parent, (ast.BinOp, ast.UnaryOp)):
                break
            child = parent
        else:
            return False
        if not drawn:
            return False
        if isinstance(parent, ast.Dict):
            names = [constant(k) for k, v in zip(parent.keys, parent.values, strict=True) if v is child]
        elif isinstance(parent, ast.keyword):
            names = [parent.arg]
        elif isinstance(parent, (ast.Assign, ast.AnnAssign)):
            names = [target_name(t) for t in (parent.targets if isinstance(parent, ast.Assign) else [parent.target])]
        else:
            return False
        return bool(names) and all(isinstance(name, str) and IDENTIFIER.search(name) for name in names)

    def _key(self, name: str, target: ast.expr) -> tuple[int, str]:
        """A generator variable in its scope: a plain name in its function (0: the module), an attribute
        (`self.rng`) in its class."""
        kinds = ast.ClassDef if isinstance(target, ast.Attribute) else (ast.FunctionDef, ast.AsyncFunctionDef,
                                                                        ast.Lambda)
        return next((id(a) for a in reversed(self.ctx.ancestors) if isinstance(a, kinds)), 0), name

    def _defaults(self) -> conditions.Lookup:
        if self._lookup is None:
            self._lookup = conditions.argparse_lookup(conditions.option_defaults(self.ctx.tree, ast.walk(self.ctx.tree)))
        return self._lookup

    def finish(self) -> None:
        seeded_names = {name for _, name in self.seeded}
        for (scope, name), site, message, severity in self.pending:
            # a module-level generator may be seeded in any function (a global)
            if (scope, name) not in self.seeded and not (scope == 0 and name in seeded_names):
                self.report(site, message, severity)
        for key, site in self.unseeded_calls:
            qualified = self.call_seeded.get(key) or self.call_seeded.get((0, key[1]))
            if qualified is not None:
                self.report(site, _message(qualified, CALL_SEEDED[qualified]))


def _seeds_object(call: ast.Call) -> bool:
    """`g.manual_seed(s)`, `rng.seed(s)` (with a seed: a bare `.seed()` reseeds from entropy), `set_state`."""
    attr = call.func.attr
    return attr in SEEDING_METHODS or (attr == "seed" and bool(call.args or call.keywords))


def _unseeded(call: ast.Call, entry: catalogue.RandomSeeds, function: ast.AST | None,
              missing_is_unseeded: bool = True) -> bool:
    """Whether every seed of a MindSpore random operator leaves it unseeded: absent (its default), or a
    literal, or a parameter of the enclosing `function` defaulting to, a value of `entry.entropy`."""
    for position, name in entry.seeds:
        seed = argument(call, position, name)
        if seed is None:
            if not missing_is_unseeded:
                return False
            value = entry.default
        else:
            value = constant(seed)
            if value is NOT_CONSTANT and isinstance(seed, ast.Name):
                value = _parameter_default(function, seed.id)
        if value not in entry.entropy:
            return False
    return True


def _message(qualified: str, entry: catalogue.RandomSeeds) -> str:
    return OPERATOR_UNSEEDED.format(name=qualified.rpartition(".")[2], seeds=entry.unseeded, fix=entry.fix)


def _parameter_default(function: ast.AST | None, name: str) -> object:
    """The literal default of parameter `name` of `function` (`def construct(self, logits, seed=0)`), or
    `NOT_CONSTANT`."""
    if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return NOT_CONSTANT
    default = parameter_defaults(function).get(name)
    return constant(default) if default is not None else NOT_CONSTANT

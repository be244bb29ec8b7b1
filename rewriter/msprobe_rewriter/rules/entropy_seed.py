"""MSP108 entropy-seed: a seeding call whose seed changes from run to run (clock, OS entropy, unseeded draw)."""

from __future__ import annotations

from msprobe_rewriter import entropy
from msprobe_rewriter.context import Site
from msprobe_rewriter.rules.base import Invalid, Rule


class EntropySeed(Rule):
    code = "MSP108"
    name = "entropy-seed"
    severity = "error"
    frameworks = ("pytorch", "mindspore", "python")
    message = ("this seed changes from run to run: every run seeds differently; use a fixed seed (log it if you "
               "want to vary it deliberately)")
    summary = ("Flags a seeding call (`random.seed`, `np.random.seed`, `torch.manual_seed`, `mindspore.set_seed`, "
               "`mindspore.manual_seed`, library seeders such as `seed_everything`, a generator's "
               "`.manual_seed(s)` / `.seed(s)`, `np.random.default_rng(s)`, `random.Random(s)`, and project "
               "helpers named like seeders) whose seed is missing or None where that means OS entropy "
               "(`random.seed()`, `np.random.seed(None)`, an argparse option, also one a project function given "
               "the parser defines, or a dataclass field tyro parses, defaulting to None), or comes from a "
               "clock (`time.time()`, `datetime.now()`), an entropy source (`os.urandom`, `secrets`, `uuid4()`, "
               "`os.getpid()`, `random.SystemRandom()`), `torch.seed()` (or a default generator's own `.seed()`: "
               "`torch.cuda.default_generators[i].seed()`), `torch.initial_seed()` after "
               "`torch.seed()`, a `random` / `np.random` / torch draw (torch's without `generator=`; an in-place "
               "fill too, `torch.empty((), dtype=torch.int64).random_()`) made before those "
               "generators are seeded (torch's default generators start from OS entropy too; information when "
               "the file seeds them first under a condition false with the default arguments, `if args.seed is not "
               "None:`, which seed-missing reports), or the "
               "builtin `hash()` of anything not known to be a number (`hash(name) % 2**32`), and a library setup "
               "that seeds from its config's seed field, which means OS entropy while the field keeps its negative "
               "default and the file never sets it (detectron2's `default_setup` with `cfg.SEED`, a LazyConfig's "
               "`cfg.train.seed`), Composer's `Trainer`, which seeds every generator with a seed drawn from the "
               "clock when not given `seed=`, a Stable-Baselines3 algorithm's `seed=` (`PPO(..., seed=int(time.time()))`), and torchtune's `training.set_seed`, which draws a seed from torch's unseeded "
               "generator when given None, given a config value or option whose default the file does not show "
               "(`seed=cfg.seed`; its configs ship `seed: null`). A seed from OpenMMLab's `init_random_seed(seed)` (mmdet, "
               "mmseg, mmcls, mmpose, ...), which returns one drawn from NumPy's global generator when given None, is "
               "reported when it gets None with the default arguments (`--seed` without a default) before NumPy is "
               "seeded. A draw before seeding that seeds an object "
               "(`dataset.set_seed(seed)`) in a function of a library module, one other project files import, is "
               "left alone: the scripts calling it seed the generator first. The seed "
               "is followed through plain assignments, attribute assignments (`opt.manualSeed = ...`) and the "
               "returns of functions defined in the file (when every `return` of one draws entropy), the "
               "parameters of functions defined in the file (what every call of one passes, or its default: "
               "detectron2's `seed_all_rng(seed=None)`, which draws a seed from the clock and the process id when "
               "called without one), "
               "including ones under a condition that holds with the default arguments. A bare `torch.seed()` is "
               "reported too.")
    why = ("A seed drawn from the clock or the OS is a different seed in every run: the script calls the seeding "
           "function, so it looks reproducible, but no two runs (nor the GPU and NPU runs you want to compare) "
           "start from the same state. The classic form is `if opt.seed is None: opt.seed = random.randint(1, "
           "10000)` followed by `random.seed(opt.seed)`: with the default arguments the seed comes from the "
           "unseeded `random` module. Printing or logging the seed does not help: rerunning means passing it "
           "back by hand, and nobody does for the run that went wrong. `hash(name)` looks like a stable per-name "
           "seed but is not: Python salts the hashes of str and bytes afresh in every process (unless "
           "PYTHONHASHSEED is set before the interpreter starts; setting it from inside the script is too late), "
           "and an object's default hash is its memory address. Left alone on purpose: "
           "`torch.initial_seed()` inside a `worker_init_fn` (the per-worker seed, derived from a seeded base), "
           "`base = torch.initial_seed()` after a fixed `manual_seed`, `args.seed + rank`, and seeds whose value "
           "depends on a condition that cannot be decided statically. A script whose only seeding draws from "
           "entropy gets this finding and not seed-missing's (one finding per hazard).")
    fix = ("Seed with a fixed value: give `--seed` a default (`parser.add_argument('--seed', type=int, "
           "default=1234)`) and drop the random fallback. If you do want a fresh seed per run, choose it outside "
           "the script (a launcher that passes `--seed`), so every run can be repeated from its command line. For a "
           "seed per name, hash the name stably: `zlib.crc32(name.encode())` (msprobe-instrument leaves such "
           "seeds to you, with a note: a fixed seed would give every name the same one).")
    valid = (
        # `init_random_seed` returns the seed it is given: `--seed` has a default.
        """\
import argparse

from mmseg.apis import init_random_seed, set_random_seed

parser = argparse.ArgumentParser()
parser.add_argument("--seed", type=int, default=0)
args = parser.parse_args()
set_random_seed(init_random_seed(args.seed))
""",
        # Without a seed the helper returns before seeding: nothing draws from OS entropy (seed-missing reports it).
        """\
import random


def set_seed(seed=None):
    if seed is None:
        return
    random.seed(seed)


set_seed()
""",
        # detectron2: the config's seed is set before default_setup reads it.
        """\
from detectron2.config import get_cfg
from detectron2.engine import default_setup


def setup(args):
    cfg = get_cfg()
    cfg.merge_from_file(args.config_file)
    cfg.SEED = 42
    cfg.freeze()
    default_setup(cfg, args)
    return cfg
""",
        """\
import argparse
import random

import numpy as np
import torch

parser = argparse.ArgumentParser()
parser.add_argument("--seed", type=int, default=1234)
args = parser.parse_args()
random.seed(args.seed)
np.random.seed(args.seed)
torch.manual_seed(args.seed + 1)
g = torch.Generator().manual_seed(args.seed)
rng = np.random.default_rng(args.seed)
""",
        # Per-worker seeds derive from the loader's base seed, itself drawn from the seeded torch generator.
        """\
import random

import numpy as np
import torch
from torch.utils.data import DataLoader


def seed_worker(worker_id):
    worker_seed = torch.initial_seed() % 2**32
    np.random.seed(worker_seed)
    random.seed(worker_seed + worker_id)


torch.manual_seed(0)
base_seed = torch.initial_seed()
np.random.seed(base_seed % 2**32)
loader = DataLoader(range(10), num_workers=2, worker_init_fn=seed_worker)
""",
        # The fallback runs only when `--seed` is negative; its default is 0.
        """\
import argparse
import random
import time

import torch

parser = argparse.ArgumentParser()
parser.add_argument("--seed", type=int, default=0)
opt = parser.parse_args()
if opt.seed < 0:
    opt.seed = int(time.time())
random.seed(opt.seed)
torch.manual_seed(opt.seed)
""",
        # `random` is seeded before the draw, so the derived seed repeats.
        """\
import random

import torch

random.seed(0)
seed = random.randint(0, 2**31)
torch.manual_seed(seed)
""",
        # A helper that draws from `random` after `main` seeded it: deterministic.
        """\
import random

import torch


def new_seed():
    return random.randint(0, 100)


def main():
    random.seed(0)
    torch.manual_seed(new_seed())
""",
        # Numbers hash to themselves in every process.
        """\
import random

random.seed(hash(42))
random.seed(hash((3, 4)))
""",
        # Parameters declared as numbers.
        """\
import numpy as np


def noise(seed: int, epoch: int, index: "int"):
    return np.random.default_rng(int(hash((seed, epoch, index)) % 1e6)).random()
""",
        # A seeding helper receives its seed from the caller: judged at the call site.
        """\
import random

import torch


def set_seed(seed, rank=0):
    random.seed(seed + rank)
    torch.manual_seed(seed + rank)
""",
        # The seeding runs only when a seed is passed, and none is: seed-missing reports the condition instead
        # (DeepSpeedExamples' vit_finetuning/main_cifar.py).
        """\
import argparse
import random

import numpy as np

parser = argparse.ArgumentParser()
parser.add_argument("--seed", type=int)
args = parser.parse_args()


def set_seed(seed=None):
    if seed is not None:
        random.seed(args.seed)
        np.random.seed(args.seed)


set_seed(args.seed)
""",
        # Composer's Trainer seeds every generator with the `seed=` it is given (llm-foundry's train.py).
        """\
from composer import Trainer

if __name__ == "__main__":
    trainer = Trainer(model=model, train_dataloader=loader, max_duration="1ep", seed=17)
    trainer.fit()
""",
    )
    invalid = (
        # InternImage's train.py: without `--seed`, mmdet's `init_random_seed` draws the seed from unseeded NumPy.
        Invalid("""\
import argparse

from mmdet.apis import init_random_seed, set_random_seed

parser = argparse.ArgumentParser()
parser.add_argument("--seed", type=int, default=None)
args = parser.parse_args()
seed = init_random_seed(args.seed, device="cuda")
set_random_seed(seed)
""", lines=(9,)),
        # A dataclass field that tyro or HfArgumentParser parses, None by default.
        Invalid("import random\nfrom dataclasses import dataclass, field\n\nimport tyro\n\n\n@dataclass\n"
                "class Args:\n    seed: int = field(default=None)\n\n\nargs = tyro.cli(Args)\nrandom.seed(args.seed)\n",
                lines=(13,)),
        # detectron2's seed_all_rng, called without a seed: it seeds from the clock and the process id.
        Invalid("""\
import os
import random
from datetime import datetime

import numpy as np


def seed_all_rng(seed=None):
    if seed is None:
        seed = os.getpid() + int(datetime.now().strftime("%S%f"))
    np.random.seed(seed)
    random.seed(seed)


seed_all_rng()
""", lines=(11,)),
        # Every call leaves the parameter None, which seeds from OS entropy.
        Invalid("""\
import random


def set_seed(seed=None, rank=0):
    random.seed(seed)


def main():
    set_seed(rank=0)


main()
""", lines=(5,)),
        # detectron2's tools/train_net.py: cfg.SEED stays -1, so default_setup seeds from the OS in every run.
        Invalid("""\
from detectron2.config import get_cfg
from detectron2.engine import default_argument_parser, default_setup


def setup(args):
    cfg = get_cfg()
    cfg.merge_from_file(args.config_file)
    cfg.merge_from_list(args.opts)
    cfg.freeze()
    default_setup(cfg, args)
    return cfg
""", lines=(10,)),
        Invalid("""\
import time

import torch

seed = int(time.time())
torch.manual_seed(seed)
""", lines=(6,)),
        # A `match` statement: its cases are followed like `if` branches.
        Invalid("""\
import random
import sys

match sys.argv[1:]:
    case [name] if name:
        random.seed(hash(name))
    case _:
        random.seed(0)
""", lines=(6,)),
        Invalid("""\
import random

import numpy as np

random.seed()
np.random.seed(None)
""", lines=(5, 6)),
        # pytorch/examples dcgan: with the default arguments the seed is drawn from the unseeded `random`.
        Invalid("""\
import argparse
import random

import torch

parser = argparse.ArgumentParser()
parser.add_argument("--manualSeed", type=int, help="manual seed")
opt = parser.parse_args()
if opt.manualSeed is None:
    opt.manualSeed = random.randint(1, 10000)
print("Random Seed: ", opt.manualSeed)
random.seed(opt.manualSeed)
torch.manual_seed(opt.manualSeed)
""", lines=(12,)),
        Invalid("""\
import os
import uuid
from datetime import datetime

import numpy as np
import torch as T

T.manual_seed(T.seed())
g = T.Generator().manual_seed(int.from_bytes(os.urandom(4), "little"))
np.random.seed(int(datetime.now().timestamp() * 1000) % 2**32)
rng = np.random.default_rng(uuid.uuid4().int)
""", lines=(8, 9, 10, 11)),
        Invalid("""\
import numpy as np
import torch

torch.seed()
seed = np.random.randint(0, 10000)
torch.manual_seed(seed)
""", lines=(4, 6)),
        # A default generator's own bare `.seed()` reseeds it from OS entropy (SlowFast's reversible MViT).
        Invalid("""\
import torch


def block_seed(device):
    return torch.cuda.default_generators[device].seed()


torch.manual_seed(torch.default_generator.seed())
""", lines=(5, 8)),
        Invalid("""\
import argparse

import numpy as np

parser = argparse.ArgumentParser()
parser.add_argument("--seed", type=int, help="optional seed")
args = parser.parse_args()
np.random.seed(args.seed)
""", lines=(8,)),
        # A helper that returns the clock: the seed is the clock.
        Invalid("""\
import time

import torch


def make_seed():
    return int(time.time() * 1000) % 2**32


def main():
    torch.manual_seed(make_seed())
""", lines=(11,)),
        # "Deterministic per ticker", except that str hashes are salted per process.
        Invalid("""\
import numpy as np


def simulated_prices(ticker):
    np.random.seed(hash(ticker) % 2**32)
    return np.random.randn(100)
""", lines=(5,)),
        Invalid("""\
import time

import mindspore as ms


def set_seed(seed):
    ms.set_seed(seed)


def main():
    set_seed(time.time_ns() % 2**32)


if __name__ == "__main__":
    main()
""", lines=(11,)),
        # EDM's default seed: a torch draw before torch is seeded (its generator starts from OS entropy).
        Invalid("""\
import torch


def main(seed=None):
    if seed is None:
        seed = int(torch.randint(1 << 31, size=[]))
    torch.manual_seed(seed)


main()
""", lines=(7,)),
        # ignite's DCGAN: `seed or random.randint(...)`; a comment naming `main` does not hide where it runs.
        Invalid("""\
import random

import torch


def check_manual_seed(seed):
    seed = seed or random.randint(1, 10000)
    random.seed(seed)
    torch.manual_seed(seed)


def main(seed=None):
    check_manual_seed(seed)  # the main function seeds first, then trains


main()
""", lines=(8,)),
        # torchtune's `set_seed` draws a seed from torch's generator for None; the config value is not known here.
        Invalid("""\
import torch
from torchtune import training


class Recipe:
    def __init__(self, cfg):
        self.seed = training.set_seed(seed=cfg.seed)
        self.model = torch.nn.Linear(2, 2)
""", lines=(7,)),
        # k-diffusion's train.py: torch is seeded first only when `--seed` is given (seed-missing reports that
        # condition); with it, the demo generator's seed repeats: info, naming the condition.
        Invalid("""\
import argparse

import torch

parser = argparse.ArgumentParser()
parser.add_argument("--seed", type=int)
args = parser.parse_args()
if args.seed is not None:
    torch.manual_seed(args.seed)
demo_gen = torch.Generator().manual_seed(torch.randint(-2 ** 63, 2 ** 63 - 1, ()).item())
""", lines=(10,), severity="info"),
        # a seed drawn as torch's DataLoader draws its base seed, with an in-place fill, before torch is seeded
        Invalid("import torch\n\nseed = int(torch.empty((), dtype=torch.int64).random_().item())\n"
                "torch.manual_seed(seed)\n", lines=(4,)),
        # Composer's Trainer without `seed=` seeds every generator with a seed drawn from the clock.
        Invalid("""\
from composer import Trainer

if __name__ == "__main__":
    trainer = Trainer(model=model, train_dataloader=loader, max_duration="1ep")
    trainer.fit()
""", lines=(4,)),
        # A Stable-Baselines3 algorithm's `seed=` seeds `random`, NumPy, torch, the env and its action space.
        Invalid("""\
import time

from stable_baselines3 import PPO

if __name__ == "__main__":
    PPO("MlpPolicy", "CartPole-v1", seed=int(time.time())).learn(total_timesteps=10_000)
""", lines=(6,)),
    )

    def finish(self) -> None:
        for found in entropy.analyse(self.ctx):
            self.report(Site(found.node, found.on_eval_path), found.message, "info" if found.seeded_when else None)

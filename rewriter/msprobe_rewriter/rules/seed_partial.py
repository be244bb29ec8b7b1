"""MSP102 seed-partial: an entry script (or a file seeding at import) that seeds some generators but draws
from one it never seeds."""

from __future__ import annotations

import ast
import os
import re

from msprobe_rewriter import catalogue, pinning, project, project_draws, seeding
from msprobe_rewriter.conditions import condition_text
from msprobe_rewriter.context import FUNCTION_TYPES, Site, argument, constant, keyword, own_nodes, target_name
from msprobe_rewriter.late_seeding import LateDraws
from msprobe_rewriter.rl_seeding import unseeded as unseeded_rl_generators
from msprobe_rewriter.rules.base import Invalid, Rule

SAYS_SEED = re.compile("seed", re.IGNORECASE)
TRAINER_RUN = "train"
# The family a framework's new weights draw from (MindSpore's initialisers use NumPy's generator).
MODEL_FAMILY = {"torch": "torch", "mindspore": "numpy"}
# Last name components of the draws and of the seeders: a cheap filter before resolving a callee.
WATCHED_NAMES = frozenset(name.rpartition(".")[2] for name in (*catalogue.DRAW_FAMILY, *pinning.SEEDER_FAMILIES,
                                                               *catalogue.TORCH_DATALOADERS,
                                                               *catalogue.TORCH_RANDOM_SAMPLERS))
SEED_HINT = {"random": "`random.seed(seed)`", "numpy": "`np.random.seed(seed)`", "torch": "`torch.manual_seed(seed)`",
             "torch-accelerator": "`torch.manual_seed(seed)`",
             "mindspore": "`mindspore.set_seed(seed)`", "mindspore-generator": "`mindspore.manual_seed(seed)`"}
FAMILY_LABEL = {"random": "Python's `random`", "numpy": "NumPy's global generator",
                "torch": "torch's global generator", "torch-accelerator": "torch's accelerator generators",
                "mindspore": "MindSpore's operator RNG",
                "mindspore-generator": "MindSpore's default generator", "mindspore-dataset": "MindSpore's data pipeline",
                "dgl": "DGL's generator"}
MINDSPORE_NOTE = ("; nor does it seed MindSpore's operator RNG, which its models' dropout and random operators draw "
                  "from: call `mindspore.set_seed(seed)` too")
# (unseeded family, a family seeded next to it) -> why the seeder of the second does not cover the first.
NOT_COVERED = {
    ("torch", "torch-accelerator"): "`torch.cuda.manual_seed_all` and the other device seeders seed only the "
                                    "accelerators' generators, not the CPU one",
    ("mindspore", "mindspore-dataset"): "`mindspore.dataset.config.set_seed` does not seed operators",
    ("mindspore-generator", "mindspore"): "`mindspore.set_seed` does not seed it",
    ("torch", "dgl"): "`dgl.seed` seeds only DGL's own generator (its samplers), not torch's",
}


class SeedPartial(Rule):
    code = "MSP102"
    name = "seed-partial"
    severity = "warning"
    frameworks = ("pytorch", "mindspore", "python")
    message = ("this draws from a generator the script (in a library module: the function) never seeds, although "
               "it seeds others: seed every generator")
    summary = ("In an entry script (a `__main__` guard, a module-level training loop or `Model.train`; see "
               "seed-missing), or a file with a seeding statement outside any function (it runs on import and "
               "seeds the process), that seeds at least one generator family (directly, through a library "
               "seeder, or through a project helper), flags the first draw from each family it leaves unseeded (in an entry script "
               "also the first model built with new weights, outside class bodies and not given weights later (before it "
               "trains: a checkpoint loaded after `model.train(...)` is for an evaluation), also by a project module's "
               "class or factory (step_into_llm's `resnet50(...)` returning resnet.py's `ResNet`, whose layers functions "
               "of that file build, `conv3x3(...)`), as "
               "seed-missing sees models: torch layers and models draw from torch's generator, MindSpore's "
               "initialisers from NumPy's): "
               "Python's "
               "`random`, NumPy's global generator (also behind `mindspore.common.initializer`), torch's global "
               "generator (`torch.rand*`, `torch.nn.init`, the order of a `DataLoader(shuffle=True)` or a random sampler "
               "given no `generator=`; `torch.cuda.manual_seed_all` and the other device seeders, "
               "Megatron's `model_parallel_cuda_manual_seed` among them, seed only the accelerators' generators, not "
               "this CPU one, which `torch.manual_seed` seeds with them; a draw given a `device=` other than the CPU, "
               "or an input tensor, `torch.rand_like(x)`, may use an accelerator's), MindSpore's operator RNG (`ops.standard_normal`, "
               "`ops.uniform`, `ops.randn`, `ops.dropout`, `nn.Dropout`, `nn.RReLU`, fractional max pooling, "
               "`mindspore.numpy.rand*`, ...; seeded by `mindspore.set_seed`, not by "
               "`mindspore.dataset.config.set_seed`) and MindSpore's default generator (`mint.randn`, "
               "`mint.nn.Dropout2d`, the in-place `ops.normal_`/`ops.uniform_`/`ops.bernoulli_`, ...; seeded only by "
               "`mindspore.manual_seed`); also NumPy's global generator behind `trainer.train()` of trl's PPOTrainer, which seeds torch alone "
               "(`torch.manual_seed(args.seed)`) and draws each update's minibatch order with `np.random.permutation`. "
               "In reinforcement learning, also the generators that `random`/NumPy/torch seeding does not reach: a "
               "Stable-Baselines3 (or sb3_contrib) algorithm the script trains (`model.learn(...)`) built with no "
               "`seed=`, `seed=None` or an option that is None by default (it then seeds nothing: the env starts "
               "from OS entropy, so do the action space's warm-up actions, and NumPy's global generator, which its "
               "replay sampling, minibatch order and exploration draw from, stays as the script left it), reported "
               "at the constructor; the first `reset()` given no `seed=` of an env a gymnasium (or gym) call made "
               "(`gym.make`, `gym.vector.SyncVectorEnv`, a wrapper), unless a reset given a seed, or `env.seed(s)`, "
               "came first (later resets continue the seeded generator), or a call the name was assigned was given "
               "`seed=` (cleanrl's `envs = isaacgymenvs.make(seed=args.seed, ...)`, then wrapped); with gym, the "
               "message also names `env.seed(seed)`, which gym before 0.26 needs; and the first `*.action_space.sample()` "
               "(or `single_action_space`) before any `*.action_space.seed(s)`. "
               "An entry script that other project files do not import is also held to the global draws from "
               "Python's `random`, NumPy's and torch's generators in the project code it runs for training: the "
               "project functions it calls, the project classes it builds (their `__init__`, `forward`/`construct`, "
               "`__call__`, `__getitem__`, `__iter__`), the methods it calls on objects those build, and what these "
               "run in turn (project functions, methods called as `self.name(...)`, classes built, whose `__call__` "
               "counts only where that code calls the object: a transform a factory returns runs where it is used), "
               "not through "
               "evaluation code (a function named for it, an evaluation file no training code reads); the first draw "
               "of each family it leaves unseeded is reported at its first seeding statement, naming the drawing file "
               "and line (a loss class drawing a style-mixing cutoff with `random.randint` every step), at the info "
               "level when only calls that a condition off with the default arguments skips "
               "reach it (a torch draw not when the script seeds an accelerator's generator, which it may use). "
               "A draw given its own `seed=`/`generator=` (or, for fractional pooling, "
               "its `_random_samples=`) is not global. "
               "A file that seeds nothing is left to seed-missing. In a library module (neither an entry script "
               "nor seeding on import), a seeding inside a function is that function's own business (a "
               "distributed sampler reseeding NumPy each epoch, a transform drawing a seed list after "
               "`random.seed(1234)`): only the draws that follow it in that same function are held to it, and "
               "seeding the "
               "generators the rest of the module draws from belongs to the script that imports it. A file other "
               "project files import is such a library module for its functions even with a script under its "
               "`__main__` guard (dlrm's dlrm_data_pytorch.py and its trace tool): only its draws outside functions "
               "are held to that script's seeding. In a MindSpore script that leaves `mindspore.set_seed` uncalled, "
               "the first finding also says that MindSpore's operator RNG is unseeded (its models' dropout and random "
               "operators draw from it, though the file itself shows no such draw).")
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
        # `set_seed` seeds NumPy for the PPO trainer's minibatch order.
        """\
from transformers import set_seed
from trl.experimental.ppo import PPOConfig, PPOTrainer

if __name__ == "__main__":
    set_seed(42)
    PPOTrainer(args=PPOConfig(output_dir="out"), processing_class=tok, model=policy, ref_model=None,
               reward_model=reward, train_dataset=data, value_model=value).train()
""",
        # The loader shuffles with a generator of its own, seeded.
        """\
import random

import torch
from torch.utils.data import DataLoader

if __name__ == "__main__":
    random.seed(0)
    loader = DataLoader(list(range(10)), shuffle=True, generator=torch.Generator().manual_seed(0))
    for batch in loader:
        print(batch)
""",
        # Megatron's tests: a CUDA draw after seeding the CUDA generators.
        """\
import torch
from megatron.core.tensor_parallel import model_parallel_cuda_manual_seed

model_parallel_cuda_manual_seed(123)
hidden_states = torch.randn((256, 2, 64), dtype=torch.bfloat16, device="cuda")
""",
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
        # A library module seeding `random` inside a method for its own seed list: the entry script importing
        # it seeds NumPy (mindspore models' YOLOv5 `src/transforms.py`).
        """\
import random

import numpy as np


def _rand(a=0.0, b=1.0):
    return np.random.rand() * (b - a) + a


class MultiScaleTrans:
    def generate_seed_list(self, init_seed=1234, seed_num=100):
        random.seed(init_seed)
        return [random.randint(1, 1000) for _ in range(seed_num)]
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
        # Fractional pooling draws its regions from the operator RNG, which `mindspore.set_seed` seeds, unless
        # given them; `mindspore.manual_seed` seeds the in-place fills.
        """\
import mindspore as ms
from mindspore import nn, ops

ms.set_seed(1)
ms.manual_seed(1)
pool = nn.FractionalMaxPool2d(3, output_ratio=0.5)
y = ops.fractional_max_pool2d(x, 3, output_ratio=0.5, _random_samples=samples)
w = ops.uniform_(w, -0.1, 0.1)
""",
        # `np.random.seed` here is not NumPy's: a local module named np.
        """\
import torch
import mylib as np

torch.manual_seed(0)
np.random.shuffle([1, 2, 3])
""",
        # cleanrl's layout: the envs' first reset and the action space seeded once, later resets continue.
        """\
import random

import gymnasium as gym
import numpy as np
import torch

if __name__ == "__main__":
    random.seed(1)
    np.random.seed(1)
    torch.manual_seed(1)
    envs = gym.vector.SyncVectorEnv([lambda: gym.make("CartPole-v1") for _ in range(4)])
    envs.single_action_space.seed(1)
    obs, _ = envs.reset(seed=1)
    for step in range(100):
        action = envs.single_action_space.sample()
        obs, _ = envs.reset()
""",
        # cleanrl's isaacgym script: the env is made with a seed, then wrapped; its reset needs none.
        """\
import random

import gym
import isaacgymenvs
import numpy as np

if __name__ == "__main__":
    random.seed(1)
    np.random.seed(1)
    envs = isaacgymenvs.make(seed=1, task="Ant", num_envs=64)
    envs = gym.wrappers.RecordVideo(envs, "videos")
    next_obs = envs.reset()
""",
        # A Stable-Baselines3 algorithm given the seed the script seeds torch with.
        """\
import torch
from stable_baselines3 import DQN

if __name__ == "__main__":
    torch.manual_seed(0)
    DQN("MlpPolicy", "CartPole-v1", seed=0).learn(total_timesteps=10_000)
""",
    )
    invalid = (
        # trl's PPOTrainer seeds torch alone (`torch.manual_seed(args.seed)`, never `Trainer.__init__`), and its
        # `train()` draws each update's minibatch order with `np.random.permutation`
        Invalid("""\
from trl.experimental.ppo import PPOConfig, PPOTrainer

if __name__ == "__main__":
    trainer = PPOTrainer(args=PPOConfig(output_dir="out"), processing_class=tok, model=policy, ref_model=None,
                         reward_model=reward, train_dataset=data, value_model=value)
    trainer.train()
""", lines=(6,)),
        # Megatron's simple training loop example: the loader's order comes from torch's CPU generator, which
        # `model_parallel_cuda_manual_seed` leaves unseeded.
        Invalid("""\
import torch
from megatron.core.tensor_parallel import model_parallel_cuda_manual_seed
from torch.utils.data import DataLoader


def train(model, dataset, optimizer):
    for batch in DataLoader(dataset, batch_size=8, shuffle=True):
        model(batch).sum().backward()
        optimizer.step()


if __name__ == "__main__":
    model_parallel_cuda_manual_seed(123)
    model = torch.nn.Linear(4, 1).cuda()
    train(model, torch.randn(64, 4, device="cuda"), torch.optim.SGD(model.parameters(), lr=0.1))
""", lines=(7,)),
        # DGL's seeder seeds its samplers' generator only.
        Invalid("import dgl\nimport torch\n\ndgl.seed(0)\nnoise = torch.randn(4, 8)\n", lines=(5,)),
        # An entry script's model draws its initial weights from torch's generator, which it leaves unseeded.
        Invalid("""\
import random

import numpy as np
import torch

if __name__ == "__main__":
    random.seed(0)
    np.random.seed(0)
    model = torch.nn.Linear(4, 2)
""", lines=(9,)),
        # Only the CUDA generators are seeded: the CPU generator's draws ignore the seed.
        Invalid("""\
import random

import torch

random.seed(0)
torch.cuda.manual_seed_all(0)
noise = torch.randn(4)
""", lines=(7,)),
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
        # A Cell trained from new weights: the checkpoint loaded after training is for the evaluation.
        Invalid("""\
import random

import mindspore as ms
from mindspore import nn


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, weight_init="XavierUniform")


if __name__ == "__main__":
    random.seed(1)
    net = Net()
    model = ms.Model(net, nn.MSELoss(), nn.Momentum(net.trainable_params(), 0.01, 0.9))
    model.train(1, data, callbacks=[])
    ms.load_param_into_net(net, ms.load_checkpoint("best.ckpt"))
    model.eval(data)
""", lines=(15,)),
        # Fractional pooling regions and the in-place `ops.normal_` draw from MindSpore's operator RNG and its
        # default generator, which NumPy's seed leaves alone.
        Invalid("""\
import numpy as np
from mindspore import nn, ops

np.random.seed(0)
pool = nn.FractionalMaxPool2d(3, output_ratio=0.5)
bias = ops.normal_(bias, 0.0, 0.02)
""", lines=(5, 6)),
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


if __name__ == "__main__":
    build(0)
""", lines=(10, 11)),
        # A library function that seeds for its own draw, but `mint` draws follow `mindspore.manual_seed`.
        Invalid("""\
import mindspore as ms


def get_noise(num_samples, height, width, seed):
    ms.set_seed(seed)
    return ms.mint.randn(num_samples, 16, height // 8, width // 8)
""", lines=(6,)),
        # Not an entry script, but its module-level seeding runs on import and seeds the process.
        Invalid("""\
import random

from mindspore.common.initializer import Normal, initializer

random.seed(0)


def make_weight(shape):
    return initializer(Normal(0.02), shape)
""", lines=(9,)),
        # SB3's `set_random_seed` seeds `random`, NumPy and torch, not the env or the action space: `seed=` does.
        Invalid("""\
from stable_baselines3 import SAC
from stable_baselines3.common.utils import set_random_seed

if __name__ == "__main__":
    set_random_seed(0)
    model = SAC("MlpPolicy", "Pendulum-v1", device="cuda")
    model.learn(total_timesteps=10_000)
""", lines=(6,)),
        # torch seeded, `--seed` None by default: the algorithm seeds nothing, and NumPy (replay sampling,
        # epsilon-greedy) stays unseeded too.
        Invalid("""\
import argparse

import torch
from stable_baselines3 import DQN

if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--seed", type=int, default=None)
    args = parser.parse_args()
    torch.manual_seed(0)
    model = DQN("MlpPolicy", "CartPole-v1", seed=args.seed)
    model.learn(total_timesteps=10_000)
""", lines=(11,)),
        # A hand-written gymnasium loop: the first reset and the action space draw from OS entropy.
        Invalid("""\
import random

import gymnasium as gym
import numpy as np

if __name__ == "__main__":
    random.seed(0)
    np.random.seed(0)
    env = gym.make("CartPole-v1")
    obs, _ = env.reset()
    for step in range(1000):
        action = env.action_space.sample() if random.random() < 0.1 else 0
        obs, reward, terminated, truncated, _ = env.step(action)
        if terminated or truncated:
            obs, _ = env.reset()
""", lines=(10, 12)),
    )

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.first: dict[str, tuple[Site, str]] = {}  # family -> its first global draw in the file
        self.outside: dict[str, tuple[Site, str]] = {}  # family -> its first global draw outside functions
        self.in_def: dict[ast.AST, list[tuple[str, Site, str]]] = {}  # each def's global draws, by def node
        self.seeded: frozenset[str] = frozenset()  # by the catalogue's seeders, seen during the traversal
        self.trainer_numpy = False  # a trainer seeding torch alone runs, drawing from NumPy (see `_trainer_draws`)

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func  # cheap filters first: this runs for every call of every file
        if type(func) is ast.Attribute:
            if func.attr == TRAINER_RUN:
                self._trainer_draws(node)
            if func.attr not in WATCHED_NAMES:
                return
        elif type(func) is not ast.Name or func.id not in self.ctx.imports.bindings:
            return  # a builtin, a local function, a call of a call's result (`choice as pick` is bound)
        qualified = self.ctx.call_qualname(node) or seeding.method_qualname(self.ctx, node)
        if qualified in pinning.SEEDER_FAMILIES:
            for summary, _ in pinning.call_effects(node, qualified):
                self.seeded |= summary.families
            return
        family = catalogue.DRAW_FAMILY.get(qualified)
        what = f"`{qualified}` draws"
        if family is None and _shuffles_globally(node, qualified):
            family, what = "torch", f"`{condition_text(node.func)}(...)` draws its random order"
        if family is None or not _draws_globally(node, qualified):
            return
        if family == "torch" and self._may_draw_on_accelerator(node, qualified):
            family = "torch-accelerator"
        site = self.ctx.site(node)
        self.first.setdefault(family, (site, what))
        function = self.ctx.current_def()
        if function is not None:
            self.in_def.setdefault(function, []).append((family, site, what))
        else:
            self.outside.setdefault(family, (site, what))

    def _trainer_draws(self, node: ast.Call) -> None:
        """`trainer.train()` of a trainer that seeds torch alone but draws from NumPy: trl's PPOTrainer (since
        0.12; trl 0.11's, which seeds NumPy too, has no `train()`) draws each update's minibatch order with
        `np.random.permutation`."""
        owner = node.func.value
        built = self.ctx.call_qualname(owner) if isinstance(owner, ast.Call) \
            else self.ctx.assigned_calls.get(target_name(owner) or "")
        if built in catalogue.TORCH_SEEDING_CLASSES:
            self.trainer_numpy = True
            what = f"`{built.rpartition('.')[2]}.train()` draws each update's minibatch order (`np.random.permutation`)"
            self.first.setdefault("numpy", (self.ctx.site(node), what))

    def _may_draw_on_accelerator(self, call: ast.Call, qualified: str) -> bool:
        """Whether a torch draw may use an accelerator's generator: it is given a `device=` other than the CPU, or
        an input tensor (`torch.rand_like(x)`), whose device is not known."""
        signature = catalogue.TORCH_DEVICE_DRAWS.get(qualified)
        if signature is None:
            return False
        device = keyword(call, "device")
        if device is not None:
            text = constant(device)
            if isinstance(device, ast.Call) and self.ctx.call_qualname(device) in catalogue.TORCH_DEVICE_CONSTRUCTORS:
                text = constant(argument(device, 0, "type"))
            return not catalogue.is_cpu_device(text)
        inputs = (argument(call, signature.positional.index(name), name) for name in signature.inputs)
        return any(given is not None and not isinstance(constant(given), (int, float)) for given in inputs)

    def finish(self) -> None:
        # A file that never says "seed" seeds nothing we could see (a project helper with another name at
        # most): skipping the analysis then only costs findings, never adds one.
        if not SAYS_SEED.search(self.ctx.source) and not self.trainer_numpy:
            return
        if self.ctx.is_entry_script():
            for node, message in unseeded_rl_generators(self.ctx):
                self.report(node, message)
        # A library module with a script under its `__main__` guard (dlrm's dlrm_data_pytorch.py and its trace
        # tool): the functions other files import run under their seeding, not the guard's.
        imported = self.ctx.has_main_guard and self.ctx.is_entry_script() and any(
            True for _ in project.resolved_importers(self.ctx.path))
        if self.ctx.is_entry_script():
            first = self.outside if imported else self.first
            weights = {MODEL_FAMILY[root] for root in MODEL_FAMILY if self.ctx.imports.imports_root(root)}
            seeded = self.seeded
            if not seeded.issuperset(first) or not seeded.issuperset(weights):
                seeded = seeding.analyse(self.ctx).families()  # only then can the whole-file analysis change the verdict
            if seeded and not imported and weights - seeded - first.keys():
                self._first_model(weights - seeded)  # into `first`, which is `self.first`
            self._report(first, seeded, "this file")
            if not imported:
                self._project_draws(seeded)
                return
        if not self.first:
            return
        effects = seeding.analyse(self.ctx).effects
        if not imported and any(_runs_on_import(effect) for effect in effects):
            self._report(self.first, frozenset().union(*(effect.summary.families for effect in effects)), "this file")
            return
        # A library module: a seeding inside a function is that function's own business (a sampler reseeding
        # NumPy each epoch); seeding the generators its other code draws from is the importing script's job.
        # Only the draws that follow it in the same function are held to it.
        for function, draws in self.in_def.items():
            own = {id(node) for node in own_nodes(function)}
            local = [effect for effect in effects if effect.summary.families and id(effect.node) in own]
            if not local:
                continue
            start = _position(local[0].node)  # effects come in source order
            after: dict[str, tuple[Site, str]] = {}
            for family, site, what in draws:
                if _position(site.node) > start:
                    after.setdefault(family, (site, what))
            self._report(after, frozenset().union(*(effect.summary.families for effect in local)),
                         f"`{function.name}`")

    def _project_draws(self, seeded: frozenset[str]) -> None:
        """The first draw of each family the script leaves unseeded in the project code it runs for training (the
        project functions it calls, the classes it builds, their methods it calls, and the project code these run:
        `project_draws.called`), reported at its first seeding statement, where the seed is missing, naming the
        drawing file and line; at the info level when only calls that a condition off with the default arguments
        skips reach it."""
        if not project_draws.FAMILIES - self.seeded - ({"torch"} if "torch-accelerator" in self.seeded else set()):
            return  # seeded here: no project file need be read
        analysis = seeding.analyse(self.ctx)
        seeder = next((effect.node for effect in analysis.effects if effect.summary.families), None)
        calls = analysis.training_calls()
        if seeder is None or not calls:
            return
        seeded = analysis.families()
        folder = project.file_folder(self.ctx.path)
        local = project.local_imports(project.import_statements(self.ctx.tree.body))
        defined = {node.name for node in ast.walk(self.ctx.tree) if isinstance(node, FUNCTION_TYPES)}
        found: dict[str, tuple[project_draws.Draw, ast.Call, ast.expr | None]] = {}
        for call, off in calls:
            draws = project_draws.called(call, folder, local, defined, analysis.creators.get(id(call)))
            for family, draw in draws.items():
                if (family is None or family in self.first or family in seeded
                        or family == "torch" and "torch-accelerator" in seeded  # maybe a device's draw
                        or family in found and (found[family][2] is None or off is not None)):
                    continue
                found[family] = (draw, call, off)
        for family, (draw, call, off) in found.items():
            where = f"{os.path.relpath(draw.path, folder)}:{draw.line}"
            what = (f"`{draw.where}` ({where}), which this file runs through `{condition_text(call.func)}(...)` (line "
                    f"{call.lineno}), draws `{draw.qualified}`")
            message = self._message(family, what, seeded, "this file")
            if off is not None:
                message += f" (only when `{condition_text(off)}`: off with the default arguments)"
            self.report(seeder, message, "info" if off is not None else None)

    def _first_model(self, families: set[str]) -> None:
        """The first call building a model with new weights from one of `families` (an `nn.Linear`, a model class of
        the file, a transformers model from its config: see `late_seeding.LateDraws`; or of another project module,
        also through a factory there) that is not given weights later, before it trains (step_into_llm's
        cifar_resnet50.py loads a checkpoint only to evaluate after `model.train(...)`), recorded as that family's
        first draw."""
        late = LateDraws(self.ctx)
        for call in sorted(_calls_outside_classes(self.ctx.tree), key=_position):
            found = late.first(call, True, follow=False) or late.made_elsewhere(call)
            if found is None or found[0] != "model" or found[1] not in families or found[1] in self.first:
                continue
            scope = late.parents.get(call)
            while scope is not None and not isinstance(scope, (*FUNCTION_TYPES, ast.Module)):
                scope = late.parents.get(scope)
            trains = [_position(node) for node in ast.walk(scope or self.ctx.tree) if isinstance(node, ast.Call)
                      and (self.ctx.is_trainer_run(node) or seeding.runs_library_training(self.ctx, node))]
            if not late.loaded(call, scope or self.ctx.tree, min(trains, default=None)):  # not an evaluation's load after training
                self.first[found[1]] = (self.ctx.site(call), f"`{condition_text(call.func)}(...)` builds new weights")

    def _report(self, draws: dict[str, tuple[Site, str]], seeded: frozenset[str], scope: str) -> None:
        if not seeded:
            return
        # a MindSpore script leaving the operators' generator unseeded, which no draw of the file shows (its
        # models' dropout and random operators draw from it): said with the first finding (applications'
        # mindspore-GAN train.py imports `set_seed` and never calls it)
        note = MINDSPORE_NOTE if scope == "this file" and self.ctx.imports.imports_root("mindspore") \
            and "mindspore" not in seeded and "mindspore" not in draws else ""
        for family, (site, what) in draws.items():
            if family == "torch-accelerator" and "torch" in draws and "torch" not in seeded:
                continue  # one finding: `torch.manual_seed` seeds both
            if family not in seeded:
                self.report(site, self._message(family, what, seeded, scope) + note)
                note = ""

    @staticmethod
    def _message(family: str, what: str, seeded: frozenset[str], scope: str) -> str:
        shown = seeded - {"torch-accelerator"} if "torch" in seeded else seeded  # `torch.manual_seed` seeds both
        others = ", ".join(FAMILY_LABEL[f] for f in sorted(shown))
        notes = [note for (missing, present), note in NOT_COVERED.items() if missing == family and present in seeded]
        note = f" ({notes[0]})" if notes else ""
        return (f"{what} from {FAMILY_LABEL[family]}, which {scope} never seeds{note} although it "
                f"seeds {others}: call {SEED_HINT[family]}")


def _calls_outside_classes(tree: ast.Module) -> list[ast.Call]:
    """The calls of the module and its functions, not those in classes (a model's own layers are built where the
    model is)."""
    found, todo = [], [tree]
    while todo:
        node = todo.pop()
        if isinstance(node, ast.Call):
            found.append(node)
        todo += [child for child in ast.iter_child_nodes(node) if not isinstance(child, ast.ClassDef)]
    return found


def _runs_on_import(effect: seeding.Effect) -> bool:
    """Whether a seeding statement of the file stands outside any function: it runs when the file is run or
    imported, so it seeds the process, not a local use. (Seeding by an imported project module is that
    module's.)"""
    return (effect.function is None and bool(effect.summary.families)
            and not isinstance(effect.node, (ast.Import, ast.ImportFrom)))


def _position(node: ast.AST) -> tuple[int, int]:
    return node.lineno, node.col_offset


def _shuffles_globally(call: ast.Call, qualified: str | None) -> bool:
    """A torch data loader given `shuffle=True`, or a random sampler, with no `generator=`: its order comes from torch's
    global generator."""
    if qualified in catalogue.TORCH_RANDOM_SAMPLERS:
        return True
    if qualified not in catalogue.TORCH_DATALOADERS:
        return False
    positions = catalogue.DATALOADER_POSITIONS
    given = {name: argument(call, positions[name], name) for name in ("shuffle", "sampler", "batch_sampler", "generator")}
    return constant(given["shuffle"]) is True and not any(given[name] for name in ("sampler", "batch_sampler",
                                                                                   "generator"))


def _draws_globally(call: ast.Call, qualified: str) -> bool:
    """Whether a draw uses its family's global state: no `generator=`, no seed of its own, a dropout rate > 0, no
    samples given in place of the draw (`_random_samples=`)."""
    samples = catalogue.MINDSPORE_GIVEN_SAMPLES.get(qualified)
    if keyword(call, "generator") is not None or (samples is not None and argument(call, *samples) is not None):
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

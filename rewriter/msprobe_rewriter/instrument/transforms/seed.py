"""Seed everything with the runtime's `seed_all` in the entry script, keeping the user's own seed."""

from __future__ import annotations

import ast
import builtins
import re
import sys
from collections.abc import Iterator
from pathlib import Path

import libcst as cst

from msprobe_rewriter import catalogue, conditions, cpu_code, entropy, pinning, project, rl_seeding, seeding
from msprobe_rewriter.assignments import is_main_guard, key
from msprobe_rewriter.context import FUNCTION_TYPES, argument, constant
from msprobe_rewriter.context import keyword as keyword_argument
from msprobe_rewriter.instrument import loops, nodes, scopes
from msprobe_rewriter.instrument.scopes import is_name_chain
from msprobe_rewriter.instrument.transforms.base import Example, Transform
from msprobe_rewriter.instrument.unit import Unit
from msprobe_rewriter.late_seeding import LateDraws
from msprobe_rewriter.rules.dropout import DROPOUT_NAMES
from msprobe_rewriter.rules.seed_missing import CONFIG_RUNNER_BUILDS
from msprobe_rewriter.rules.seed_partial import FAMILY_LABEL

BLOCK_FIELDS = ("body", "orelse", "finalbody")
STANDARD_LIBRARY = frozenset(sys.stdlib_module_names) - {"random"}  # modules whose calls draw from no seeded generator
BUILTIN_NAMES = frozenset(dir(builtins))
SEED_KEY = re.compile(r"[\w.]*seed[\w.]*", re.IGNORECASE)  # a config key naming a seed: "seed", "train.seed"
SEED_ALL = frozenset(f"{m}.seed_all" for m in ("msprobe_runtime.pytorch", "msprobe_runtime.mindspore",
                                               "msprobe.pytorch", "msprobe.mindspore"))


class Seed(Transform):
    name = "seed"
    fixes = ("seed-missing", "seed-partial", "dropout", "no-deterministic-algos", "entropy-seed")
    rule = "unseeded-generator"  # generators of their own, which seed_all does not reach: each gets a note
    summary = "Adds `seed_all(seed=..., mode=..., rm_dropout=...)` to the entry script, before anything random runs."
    details = (
        "Generators of their own (`np.random.default_rng()`, `random.Random()`, a `torch.Generator()`, MindSpore "
        "operators created with seed 0, which `mindspore.set_seed` does not reach), which msprobe-lint reports as "
        "unseeded-generator, are beyond seed_all: each gets a note, in any file, to seed it where it is made. "
        "Only entry scripts are seeded (a `__main__` guard or a module-level training loop), and only those that "
        "train, sample, draw, build weights or dropout, or seed something, or call a function of the project that trains "
        "(LLaVA's train_mem.py only calls train.py's `train()`) (not a download script or a checkpoint "
        "converter, nor a script that drives Ray without training itself, MindSpeed-LLM's rlhf_gpt.py: Ray's workers "
        "and actors do not run its module code, so a note says to seed them where they are defined); a file that trains nowhere and only tries its model under its `__main__` guard (a model "
        "file's self-test), with nothing outside the guard but imports, definitions and values the standard "
        "library makes (`logger = logging.getLogger(__name__)`; also through the file's own functions that call "
        "only it, as a registry's `default_cfgs = {\"m\": _cfg(url=\"\")}`), and `if`/`try` blocks of those "
        "(`sys.path` set-up, optional imports), or a file another file of the project imports (a library module "
        "with a demo under its guard), is seeded first thing in that block, so that "
        "importing it seeds nothing and keeps dropout. A module that is no entry script gets seed_all only in a function of it that "
        "trains (holds the training loop, or calls one that does) and seeds with a seed of its own, where "
        "a seed_all with that seed would go in an entry script (SlowFast's tools/train_net.py: `train(cfg)` seeds "
        "NumPy and torch with `cfg.RNG_SEED`, and run_net.py, which hands it to `launch_job`, cannot read that seed). A submitit launcher (dinov2's run/train/train.py, ConvNeXt's "
        "run_with_submitit.py) only submits the job under `__main__`; submitit runs the submitted `Trainer.__call__` "
        "(or function) in a process of its own, so seed_all goes first there, with a note. A Hugging Face trainer "
        "built with `args=training_args` that a parser gave (`HfArgumentParser(...).parse_args_into_dataclasses()`) "
        "or the function's parameters hold seeds with `training_args.seed`: seed_all takes it right after the parse. "
        "When the script "
        "already seeds unconditionally (`torch.manual_seed(args.seed)`, `set_seed(cfg.seed)`, "
        "`mindspore.set_seed(...)`, also a seed read from a config by its key, Open-Sora's `set_seed(cfg.get(\"seed\", "
        "1024))`), its seed is kept: a literal seed goes to the module level, an expression "
        "right after the statement that binds its names or fills their object (after `args = parse_args()`, after "
        "icefall's `params.update(vars(args))`, after any call given the object, also in a tuple or list, as "
        "llama-cookbook's `update_config((train_config, fsdp_config), **kwargs)`, a builtin's but `setattr`'s "
        "excepted), at the top of the function for a parameter, and then also at the top of "
        "each other function that seeds with the same parameter, under a condition too, as DeepSpeed's pipeline example "
        "seeds `args.seed` in `train_base(args)` and in `train_pipe(args)`, one or the other of which runs), so it "
        "runs before the model is built or distributed communication starts. "
        "A script that seeds only through a project module it imports, which seeds at its top level (mindrl's "
        "c51_trainer.py runs `set_seed(5)`; also imported under the `__main__` guard, as mindpose's train_on_openi.py "
        "imports tools/train.py, which runs `ms.set_seed(0)`), keeps that seed when it is a literal (`seed_all(seed=5)` after the "
        "imports; a name the module assigns a literal once at its top level is read, mindrl's a2c.py `SEED = 42` / "
        "`np.random.seed(SEED)`, reached through the package's __init__.py); any other gets a note. "
        "A script that seeds nothing itself but has a `--seed` option (of its own parser, or of the options a project "
        "module parses at its top level and the script imports, as applications' mae/src/pretrain.py imports "
        "`mae_train_config` from config/config.py) gets `seed_all(seed=args.seed)` right after the parse (or the "
        "import), `seed_all(seed=args.seed if args.seed is not None else 1234)` when the option defaults to None "
        "(torchrec's dlrm_main.py); where it spawns processes that never run the parse, first in the function they "
        "start, given the options (MoCo v3's `mp.spawn(main_worker, args=(ngpus_per_node, args))`: `args.seed` "
        "in `main_worker`), and not when they are not handed them. "
        "A seeder that returns the seed it used, kept in a seed variable (`seed = L.seed_everything(args.seed)`), "
        "is followed by `seed_all` with that variable. A project helper that tests the seed it is given against "
        "None and then draws one (ADDA's `init_random_seed(config.manual_seed)`, `null` in its YAML), or torchtune's "
        "`training.set_seed`, which draws one from torch's generator, is followed by "
        "`seed_all(seed=<seed> if <seed> is not None else 1234)`, as seed_all takes no None; OpenMMLab's "
        "`seed = init_random_seed(args.seed)`, which draws one from NumPy's unseeded generator, is given "
        "`args.seed if args.seed is not None else 1234` instead, and `seed_all` follows with the seed it returns; when the script keeps "
        "the seed it returns (torchtune's `self.seed = training.set_seed(seed=cfg.seed, debug_mode=...)`), "
        "`seed_all` goes before it instead, so the seed it draws, and then uses for the sampler, comes from seeded "
        "generators, and `seed_all(mode=False)` does not switch off the deterministic mode it sets. "
        "Seeding under the `__main__` guard counts as unconditional; seeding in a function of the script that runs "
        "only under a condition false with the default arguments (`if args.seed is not None: set_seed(args.seed)`) "
        "does not, nor does seeding that the processes `mp.spawn` starts never run (they re-import the script "
        "without its `__main__` block): then `seed_all` goes after the imports, which those processes run too. "
        "Seeding the run never reaches does not count either: a function of the script that nothing calls, a "
        "method of a dataset or sampler class (DLRM's `reset_numpy_seed`, which `__getitem__` calls), a `__call__` "
        "(a `worker_init_fn` object). "
        "The user's own seeding calls stay (they set the same value again). Otherwise `seed_all(seed=1234)` "
        "(`--seed N`) goes right after the imports; where the script seeds through a project helper that takes "
        "no seed from here (OpenRLHF's `strategy.setup_distributed()` seeds `args.seed` inside), a note says that "
        "the helper reseeds with the script's seed, to give the same with `--seed` (also where `seed_all` goes under the "
        "`__main__` guard, llm-foundry's train.py, whose `train_from_yaml(...)` seeds with its YAML's seed); a helper "
        "whose every seeding uses one literal seed gives seed_all that seed (segment-anything's `set_env(args)`: "
        "`ms.set_seed(42)`). A seed that changes from run to run (entropy-seed) is "
        "fixed where it varies: a seed variable assigned a draw (`opt.manualSeed = random.randint(1, 10000)` "
        "when no seed was given) is assigned the fixed seed instead, so a seed given on the command line still "
        "wins and the seed the script logs is the one it uses; a seeding call that varies by itself "
        "(`random.seed()`, `torch.manual_seed(int(time.time()))`) gets the fixed seed as its argument; a library "
        "setup that seeds from its config's seed field, drawing from the OS while it keeps its negative default "
        "(detectron2's `default_setup` with `cfg.SEED` -1), is followed by `seed_all`, with a note. "
        "An mmengine runner built from a config (OpenMMLab's tools/train.py: `Runner.from_cfg(cfg)`, or "
        "`RUNNERS.build(cfg)`) reseeds everything with the config's `randomness` seed, drawing one when there is none: "
        "before it is built the config gets seed_all's seed where it sets none (a seed it sets is kept), and with "
        "`--deterministic` `randomness.deterministic=True` (else cuDNN benchmarking the config's `env_cfg` turns on "
        "stays on). "
        "`--deterministic` sets `mode=True` (deterministic kernels, "
        "HCCL determinism; where the user's seed is known only after communication starts, `seed = args.seed + "
        "dist.get_rank()` or a seed read after `Accelerator()`, a `seed_all(mode=True)` with the fixed seed also "
        "goes before that start (before the `if` it sits in, so every branch gets it; also before a call of a "
        "project module's function that starts it, DETR's and MAE's `utils.init_distributed_mode(args)`, and before "
        "module-level code that starts it on import, as Arcface's `try: init_process_group(...)`), since "
        "HCCL reads its settings when its communicators are made); "
        "In reinforcement learning seed_all does not reach every generator: a Stable-Baselines3 (or sb3_contrib) "
        "algorithm the script trains with no `seed=` gets seed_all's seed (it then seeds the env and the action space "
        "too; a seed option that is None by default stays in charge when given: `seed=args.seed if args.seed is not "
        "None else 1234`), the first reset of a gymnasium env given no seed gets `seed=` (later resets continue its "
        "generator; in a file importing gym, whose releases before 0.26 take no seed there, a note says what to call), "
        "and an action space sampled before any `action_space.seed(...)` gets a note. "
        "`--keep-dropout` sets `rm_dropout=False`.")
    examples = (
        Example("import torch\n\n\ndef main():\n    model = torch.nn.Linear(2, 2)\n"
                "    opt = torch.optim.SGD(model.parameters(), lr=0.1)\n    for x in torch.randn(4, 8, 2):\n"
                "        model(x).sum().backward()\n        opt.step()\n\n\n"
                "if __name__ == \"__main__\":\n    main()\n",
                "import torch\nfrom msprobe_runtime.pytorch import seed_all\nseed_all(seed=1234, mode=False, "
                "rm_dropout=True)\n\n\ndef main():\n    model = torch.nn.Linear(2, 2)\n"
                "    opt = torch.optim.SGD(model.parameters(), lr=0.1)\n    for x in torch.randn(4, 8, 2):\n"
                "        model(x).sum().backward()\n        opt.step()\n\n\n"
                "if __name__ == \"__main__\":\n    main()\n"),
        Example("import argparse\n\nimport torch\n\n\ndef main():\n    parser = argparse.ArgumentParser()\n"
                "    parser.add_argument(\"--seed\", type=int, default=0)\n    args = parser.parse_args()\n"
                "    model = torch.nn.Linear(2, 2)\n    torch.manual_seed(args.seed)\n\n\n"
                "if __name__ == \"__main__\":\n    main()\n",
                "import argparse\n\nimport torch\nfrom msprobe_runtime.pytorch import seed_all\n\n\ndef main():\n"
                "    parser = argparse.ArgumentParser()\n    parser.add_argument(\"--seed\", type=int, default=0)\n"
                "    args = parser.parse_args()\n    seed_all(seed=args.seed, mode=False, rm_dropout=True)\n"
                "    model = torch.nn.Linear(2, 2)\n    torch.manual_seed(args.seed)\n\n\n"
                "if __name__ == \"__main__\":\n    main()\n"),
        # A Hugging Face trainer seeds with its arguments' `seed` (TrainingArguments' default 42): seed_all takes it
        # right after HfArgumentParser has parsed them.
        Example("import torch\nfrom transformers import HfArgumentParser, Trainer, TrainingArguments\n\n\n"
                "def main():\n    parser = HfArgumentParser(TrainingArguments)\n"
                "    (training_args,) = parser.parse_args_into_dataclasses()\n    model = torch.nn.Linear(2, 2)\n"
                "    Trainer(model=model, args=training_args).train()\n\n\n"
                "if __name__ == \"__main__\":\n    main()\n",
                "import torch\nfrom transformers import HfArgumentParser, Trainer, TrainingArguments\n"
                "from msprobe_runtime.pytorch import seed_all\n\n\ndef main():\n"
                "    parser = HfArgumentParser(TrainingArguments)\n"
                "    (training_args,) = parser.parse_args_into_dataclasses()\n"
                "    seed_all(seed=training_args.seed, mode=False, rm_dropout=True)\n    model = torch.nn.Linear(2, 2)\n"
                "    Trainer(model=model, args=training_args).train()\n\n\n"
                "if __name__ == \"__main__\":\n    main()\n"),
        # mmengine's runner reseeds everything from the config's `randomness` (drawing a seed when it has none):
        # the config gets seed_all's seed, unless it sets its own.
        Example("from mmengine.config import Config\nfrom mmengine.runner import Runner\n\n\ndef main():\n"
                "    cfg = Config.fromfile(\"configs/retinanet.py\")\n    runner = Runner.from_cfg(cfg)\n"
                "    runner.train()\n\n\nif __name__ == \"__main__\":\n    main()\n",
                "from mmengine.config import Config\nfrom mmengine.runner import Runner\n"
                "from msprobe_runtime.pytorch import seed_all\nseed_all(seed=1234, mode=True, rm_dropout=True)\n\n\n"
                "def main():\n    cfg = Config.fromfile(\"configs/retinanet.py\")\n"
                "    cfg.randomness = dict(cfg.get(\"randomness\") or {})\n"
                "    if cfg.randomness.get(\"seed\") is None:\n        cfg.randomness[\"seed\"] = 1234\n"
                "    cfg.randomness[\"deterministic\"] = True\n    runner = Runner.from_cfg(cfg)\n"
                "    runner.train()\n\n\nif __name__ == \"__main__\":\n    main()\n", {"deterministic": True}),
        # detectron2: default_setup seeds from the OS while the config's SEED is -1 (its default).
        Example("from detectron2.config import get_cfg\nfrom detectron2.engine import default_setup\n\n\n"
                "def setup(args):\n    cfg = get_cfg()\n    cfg.merge_from_file(args.config_file)\n    cfg.freeze()\n"
                "    default_setup(cfg, args)\n    return cfg\n\n\nif __name__ == \"__main__\":\n    setup(parse())\n",
                "from detectron2.config import get_cfg\nfrom detectron2.engine import default_setup\n"
                "from msprobe_runtime.pytorch import seed_all\n\n\n"
                "def setup(args):\n    cfg = get_cfg()\n    cfg.merge_from_file(args.config_file)\n    cfg.freeze()\n"
                "    default_setup(cfg, args)\n    seed_all(seed=1234, mode=False, rm_dropout=True)\n    return cfg\n\n\n"
                "if __name__ == \"__main__\":\n    setup(parse())\n"),
        Example("import mindspore as ms\n\nms.set_seed(7)\nnet = ms.nn.Dense(2, 2)\n"
                "if __name__ == \"__main__\":\n    print(net)\n",
                "import mindspore as ms\nfrom msprobe_runtime.mindspore import seed_all\nseed_all(seed=7, mode=True, "
                "rm_dropout=False)\n\nms.set_seed(7)\nnet = ms.nn.Dense(2, 2)\nif __name__ == \"__main__\":\n"
                "    print(net)\n", {"deterministic": True, "remove_dropout": False}),
        # CleanRL's multi-GPU PPO: the seed is known only once the process group is up (`args.seed += rank`);
        # with --deterministic, a seed_all before it sets what HCCL reads when its communicators are made.
        Example("import torch\nimport torch.distributed as dist\n\n\ndef main(args):\n"
                "    dist.init_process_group(\"nccl\")\n    seed = args.seed + dist.get_rank()\n"
                "    torch.manual_seed(seed)\n    model = torch.nn.Linear(2, 2)\n\n\nif __name__ == \"__main__\":\n"
                "    main(parse_args())\n",
                "import torch\nimport torch.distributed as dist\nfrom msprobe_runtime.pytorch import seed_all\n\n\n"
                "def main(args):\n    seed_all(seed=1234, mode=True, rm_dropout=True)\n"
                "    dist.init_process_group(\"nccl\")\n    seed = args.seed + dist.get_rank()\n"
                "    seed_all(seed=seed, mode=True, rm_dropout=True)\n"
                "    torch.manual_seed(seed)\n    model = torch.nn.Linear(2, 2)\n\n\nif __name__ == \"__main__\":\n"
                "    main(parse_args())\n", {"deterministic": True}),
        Example("import argparse\nimport random\n\nimport torch\n\nparser = argparse.ArgumentParser()\n"
                "parser.add_argument(\"--manualSeed\", type=int)\nopt = parser.parse_args()\n"
                "if opt.manualSeed is None:\n    opt.manualSeed = random.randint(1, 10000)\n"
                "print(\"Random Seed: \", opt.manualSeed)\ntorch.manual_seed(opt.manualSeed)\n"
                "for epoch in range(2):\n    torch.nn.Linear(2, 2)(torch.randn(1, 2)).sum().backward()\n",
                "import argparse\nimport random\n\nimport torch\nfrom msprobe_runtime.pytorch import seed_all\n\n"
                "parser = argparse.ArgumentParser()\nparser.add_argument(\"--manualSeed\", type=int)\n"
                "opt = parser.parse_args()\nif opt.manualSeed is None:\n    opt.manualSeed = 1234\n"
                "seed_all(seed=opt.manualSeed, mode=False, rm_dropout=True)\n"
                "print(\"Random Seed: \", opt.manualSeed)\ntorch.manual_seed(opt.manualSeed)\n"
                "for epoch in range(2):\n    torch.nn.Linear(2, 2)(torch.randn(1, 2)).sum().backward()\n"),
        # The seed's object is filled by a call after it is made (icefall's `params.update(vars(args))`): after that.
        Example("import argparse\n\nimport torch\n\n\ndef main():\n    parser = argparse.ArgumentParser()\n"
                "    parser.add_argument(\"--seed\", type=int, default=42)\n    params = argparse.Namespace(lr=0.1)\n"
                "    params.__dict__.update(vars(parser.parse_args()))\n    torch.manual_seed(params.seed)\n"
                "    model = torch.nn.Linear(2, 2)\n\n\nif __name__ == \"__main__\":\n    main()\n",
                "import argparse\n\nimport torch\nfrom msprobe_runtime.pytorch import seed_all\n\n\ndef main():\n"
                "    parser = argparse.ArgumentParser()\n    parser.add_argument(\"--seed\", type=int, default=42)\n"
                "    params = argparse.Namespace(lr=0.1)\n    params.__dict__.update(vars(parser.parse_args()))\n"
                "    seed_all(seed=params.seed, mode=False, rm_dropout=True)\n    torch.manual_seed(params.seed)\n"
                "    model = torch.nn.Linear(2, 2)\n\n\nif __name__ == \"__main__\":\n    main()\n"),
        # llama-cookbook: a call given the seed's object, also in a tuple, fills it (`--seed 7`): after that call.
        Example("import torch\n\n\ndef main(**kwargs):\n    train_config, fsdp_config = TrainConfig(), FsdpConfig()\n"
                "    update_config((train_config, fsdp_config), **kwargs)\n    torch.manual_seed(train_config.seed)\n"
                "    model = torch.nn.Linear(2, 2)\n\n\nif __name__ == \"__main__\":\n    main()\n",
                "import torch\nfrom msprobe_runtime.pytorch import seed_all\n\n\ndef main(**kwargs):\n"
                "    train_config, fsdp_config = TrainConfig(), FsdpConfig()\n"
                "    update_config((train_config, fsdp_config), **kwargs)\n"
                "    seed_all(seed=train_config.seed, mode=False, rm_dropout=True)\n    torch.manual_seed(train_config.seed)\n"
                "    model = torch.nn.Linear(2, 2)\n\n\nif __name__ == \"__main__\":\n    main()\n"),
        # A model file whose `__main__` block only tries the model: seeded there, so importing it seeds nothing.
        Example("import torch\n\n\nclass Net(torch.nn.Module):\n    pass\n\n\nif __name__ == \"__main__\":\n"
                "    print(Net()(torch.randn(2, 4)))\n",
                "import torch\nfrom msprobe_runtime.pytorch import seed_all\n\n\nclass Net(torch.nn.Module):\n    pass\n\n\n"
                "if __name__ == \"__main__\":\n    seed_all(seed=1234, mode=False, rm_dropout=True)\n"
                "    print(Net()(torch.randn(2, 4)))\n"),
        # Lightning's seeder draws a seed when given None and returns the one it used: seed_all takes that.
        Example("import argparse\n\nimport lightning as L\nimport torch\n\n\ndef main():\n"
                "    parser = argparse.ArgumentParser()\n    parser.add_argument(\"--seed\", type=int)\n"
                "    args = parser.parse_args()\n    seed = L.seed_everything(args.seed)\n"
                "    model = torch.nn.Linear(2, 2)\n\n\nif __name__ == \"__main__\":\n    main()\n",
                "import argparse\n\nimport lightning as L\nimport torch\nfrom msprobe_runtime.pytorch import seed_all\n\n\n"
                "def main():\n    parser = argparse.ArgumentParser()\n    parser.add_argument(\"--seed\", type=int)\n"
                "    args = parser.parse_args()\n    seed = L.seed_everything(args.seed)\n"
                "    seed_all(seed=seed, mode=False, rm_dropout=True)\n"
                "    model = torch.nn.Linear(2, 2)\n\n\nif __name__ == \"__main__\":\n    main()\n"),
        # The script's seeding function runs only when --seed is given: seed_all takes the option, and the fixed
        # seed while it is None, right after the parse.
        Example("import argparse\n\nimport torch\n\n\ndef seed_everything(seed):\n    torch.manual_seed(seed)\n\n\n"
                "def main():\n    parser = argparse.ArgumentParser()\n    parser.add_argument(\"--seed\", type=int)\n"
                "    args = parser.parse_args()\n    if args.seed is not None:\n        seed_everything(args.seed)\n"
                "    model = torch.nn.Linear(2, 2)\n    opt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
                "    for x in torch.randn(4, 8, 2):\n        model(x).sum().backward()\n        opt.step()\n\n\n"
                "if __name__ == \"__main__\":\n    main()\n",
                "import argparse\n\nimport torch\nfrom msprobe_runtime.pytorch import seed_all\n\n\n"
                "def seed_everything(seed):\n    torch.manual_seed(seed)\n\n\n"
                "def main():\n    parser = argparse.ArgumentParser()\n    parser.add_argument(\"--seed\", type=int)\n"
                "    args = parser.parse_args()\n"
                "    seed_all(seed=args.seed if args.seed is not None else 1234, mode=False, rm_dropout=True)\n"
                "    if args.seed is not None:\n        seed_everything(args.seed)\n"
                "    model = torch.nn.Linear(2, 2)\n    opt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
                "    for x in torch.randn(4, 8, 2):\n        model(x).sum().backward()\n        opt.step()\n\n\n"
                "if __name__ == \"__main__\":\n    main()\n"),
        # A seeder the script defines but never calls seeds nothing; one a data loader's worker calls is no start-up.
        Example("import numpy as np\nimport torch\n\n\ndef seed_everything(seed):\n    torch.manual_seed(seed)\n\n\n"
                "class WorkerInit:\n    def __call__(self, worker_id):\n        np.random.seed(worker_id)\n\n\n"
                "if __name__ == \"__main__\":\n    model = torch.nn.Linear(2, 2)\n"
                "    loader = torch.utils.data.DataLoader(range(4), num_workers=2, worker_init_fn=WorkerInit())\n"
                "    opt = torch.optim.SGD(model.parameters(), lr=0.1)\n    for x in loader:\n"
                "        model(x).sum().backward()\n        opt.step()\n",
                "import numpy as np\nimport torch\nfrom msprobe_runtime.pytorch import seed_all\n"
                "seed_all(seed=1234, mode=False, rm_dropout=True)\n\n\n"
                "def seed_everything(seed):\n    torch.manual_seed(seed)\n\n\n"
                "class WorkerInit:\n    def __call__(self, worker_id):\n        np.random.seed(worker_id)\n\n\n"
                "if __name__ == \"__main__\":\n    model = torch.nn.Linear(2, 2)\n"
                "    loader = torch.utils.data.DataLoader(range(4), num_workers=2, worker_init_fn=WorkerInit())\n"
                "    opt = torch.optim.SGD(model.parameters(), lr=0.1)\n    for x in loader:\n"
                "        model(x).sum().backward()\n        opt.step()\n"),
        # The processes mp.spawn starts run the module level, not the `__main__` block that seeds.
        Example("import torch\nimport torch.multiprocessing as mp\n\n\ndef worker(rank):\n"
                "    model = torch.nn.Linear(2, 2)\n    opt = torch.optim.SGD(model.parameters(), lr=0.1)\n\n\n"
                "if __name__ == \"__main__\":\n    seed = 3\n    torch.manual_seed(seed)\n"
                "    mp.spawn(worker, nprocs=2)\n",
                "import torch\nimport torch.multiprocessing as mp\nfrom msprobe_runtime.pytorch import seed_all\n"
                "seed_all(seed=1234, mode=False, rm_dropout=True)\n\n\ndef worker(rank):\n"
                "    model = torch.nn.Linear(2, 2)\n    opt = torch.optim.SGD(model.parameters(), lr=0.1)\n\n\n"
                "if __name__ == \"__main__\":\n    seed = 3\n    torch.manual_seed(seed)\n"
                "    mp.spawn(worker, nprocs=2)\n"),
        # Reseeding in a nested event handler (ignite's RL examples) is no seeding at start-up: seed_all takes the
        # script's `--seed` option right after the parse.
        Example("import argparse\n\nimport torch\n\n\ndef main(args):\n    model = torch.nn.Linear(2, 2)\n"
                "    opt = torch.optim.SGD(model.parameters(), lr=0.1)\n    epoch = 0\n\n    def on_epoch_start():\n"
                "        torch.manual_seed(args.seed + epoch)\n\n    for x in torch.randn(4, 8, 2):\n"
                "        on_epoch_start()\n        model(x).sum().backward()\n        opt.step()\n\n\n"
                "if __name__ == \"__main__\":\n    parser = argparse.ArgumentParser()\n"
                "    parser.add_argument(\"--seed\", type=int, default=543)\n    args = parser.parse_args()\n    main(args)\n",
                "import argparse\n\nimport torch\nfrom msprobe_runtime.pytorch import seed_all\n"
                "\n\ndef main(args):\n    model = torch.nn.Linear(2, 2)\n"
                "    opt = torch.optim.SGD(model.parameters(), lr=0.1)\n    epoch = 0\n\n    def on_epoch_start():\n"
                "        torch.manual_seed(args.seed + epoch)\n\n    for x in torch.randn(4, 8, 2):\n"
                "        on_epoch_start()\n        model(x).sum().backward()\n        opt.step()\n\n\n"
                "if __name__ == \"__main__\":\n    parser = argparse.ArgumentParser()\n"
                "    parser.add_argument(\"--seed\", type=int, default=543)\n    args = parser.parse_args()\n"
                "    seed_all(seed=args.seed, mode=False, rm_dropout=True)\n    main(args)\n"),
        # OpenMMLab's `init_random_seed` draws a seed from unseeded NumPy for None: it gets the fixed one instead.
        Example("import argparse\n\nfrom mmdet.apis import init_random_seed, set_random_seed, train_detector\n\n"
                "parser = argparse.ArgumentParser()\nparser.add_argument(\"--seed\", type=int)\nargs = parser.parse_args()\n\n"
                "if __name__ == \"__main__\":\n    seed = init_random_seed(args.seed)\n    set_random_seed(seed)\n"
                "    train_detector(model, datasets, cfg)\n",
                "import argparse\n\nfrom mmdet.apis import init_random_seed, set_random_seed, train_detector\n"
                "from msprobe_runtime.pytorch import seed_all\n\n"
                "parser = argparse.ArgumentParser()\nparser.add_argument(\"--seed\", type=int)\nargs = parser.parse_args()\n\n"
                "if __name__ == \"__main__\":\n    seed = init_random_seed(args.seed if args.seed is not None else 1234)\n"
                "    seed_all(seed=seed, mode=False, rm_dropout=True)\n    set_random_seed(seed)\n"
                "    train_detector(model, datasets, cfg)\n"),
        # Open-Sora: a seed read from the config by its key is the script's own seed.
        Example("import torch\nfrom colossalai.utils import set_seed\n\n\ndef main():\n    cfg = parse_configs()\n"
                "    model = torch.nn.Linear(2, 2)\n    set_seed(cfg.get(\"seed\", 1024))\n\n\n"
                "if __name__ == \"__main__\":\n    main()\n",
                "import torch\nfrom colossalai.utils import set_seed\nfrom msprobe_runtime.pytorch import seed_all\n\n\n"
                "def main():\n    cfg = parse_configs()\n    seed_all(seed=cfg.get(\"seed\", 1024), mode=False, rm_dropout=True)\n"
                "    model = torch.nn.Linear(2, 2)\n    set_seed(cfg.get(\"seed\", 1024))\n\n\n"
                "if __name__ == \"__main__\":\n    main()\n"),
        Example("import random\n\nimport torch\n\nif __name__ == \"__main__\":\n    seed = 3\n"
                "    random.seed(seed)\n    torch.manual_seed(seed)\n",
                "import random\n\nimport torch\nfrom msprobe_runtime.pytorch import seed_all\n\n"
                "if __name__ == \"__main__\":\n    seed = 3\n    seed_all(seed=seed, mode=False, rm_dropout=True)\n"
                "    random.seed(seed)\n    torch.manual_seed(seed)\n"),
        # Stable-Baselines3 seeds the env and the action space only through the algorithm's `seed=`.
        Example("from stable_baselines3 import PPO\n\nif __name__ == \"__main__\":\n"
                "    model = PPO(\"MlpPolicy\", \"CartPole-v1\")\n    model.learn(total_timesteps=1000)\n",
                "from stable_baselines3 import PPO\nfrom msprobe_runtime.pytorch import seed_all\n\n"
                "if __name__ == \"__main__\":\n    seed_all(seed=1234, mode=False, rm_dropout=True)\n"
                "    model = PPO(\"MlpPolicy\", \"CartPole-v1\", seed=1234)\n    model.learn(total_timesteps=1000)\n"),
        # A gymnasium env seeds its generator from the OS at its first reset given no seed.
        Example("import gymnasium as gym\nimport torch\n\nif __name__ == \"__main__\":\n    torch.manual_seed(0)\n"
                "    env = gym.make(\"CartPole-v1\")\n    obs, _ = env.reset()\n",
                "import gymnasium as gym\nimport torch\nfrom msprobe_runtime.pytorch import seed_all\n\n"
                "if __name__ == \"__main__\":\n    seed_all(seed=0, mode=False, rm_dropout=True)\n"
                "    torch.manual_seed(0)\n    env = gym.make(\"CartPole-v1\")\n    obs, _ = env.reset(seed=0)\n"),
    )

    def apply(self, unit: Unit) -> None:
        for finding, _ in unit.sites_for(self.rule, lambda n: isinstance(n, cst.Call)):
            unit.note(finding.line, "seed_all does not reach this generator: " + finding.message)
        if unit.names.binds_any(SEED_ALL):
            return
        if not unit.ctx.is_entry_script():
            self._seed_where_training_seeds(unit)
            return
        if _drives_ray(unit) and not (unit.analysis.loops or unit.analysis.callback_trainings):
            unit.note(None, "this script drives Ray (`ray.init`, `@ray.remote`): Ray's workers and actors do not run "
                            "this module's code, so seed_all here would not reach training; seed them where they are "
                            "defined (at the start of a remote function, in an actor's `__init__`): seed_all not added")
            return
        findings = entropy.analyse(unit.ctx)
        facts = seeding.analyse(unit.ctx)
        if not (findings or facts.random_work or facts.samples or facts.families() or _draws(unit)
                or loops.loops_in_helpers(unit.ctx)):  # LLaVA's train_mem.py only calls train.py's `train()`
            return  # trains, samples, draws and seeds nothing: a download script, a checkpoint converter
        setup = next((finding.node for finding in findings if finding.config_seeded), None)
        options = unit.options
        for finding in findings:
            if finding.salted_hash:  # a seed per name or item, meant to differ: only its hash must be stable
                unit.note(finding.node.lineno, "this seed hashes a string or object, which Python salts afresh in "
                          "every process: use a stable hash such as `zlib.crc32(str(value).encode())`")
        varying = set()  # seeding calls whose seed still varies (salted hashes), or is fixed right in the call
        fixes = []  # (edit, the assignment or call it fixes)
        for finding in findings:
            if finding.config_seeded:  # a library setup seeding from its config: seed_all goes after it (below)
                continue
            calls = [call for call in (finding.node, *finding.also) if isinstance(call, ast.Call)]
            if _given_maybe_none(finding.node, unit):  # `training.set_seed(seed=cfg.seed)`: see `_user_seeds`
                continue
            if _drawn_for_none(finding.origin, unit):  # `seed = init_random_seed(args.seed)`: keep a seed given
                fixes.append((self._fix_given_seed, finding.origin))
                continue
            drawn = None if finding.salted_hash else _seed_assignment(finding, unit.analysis.parents)
            if drawn is not None:  # `opt.manualSeed = random.randint(1, 10000)`: fix the draw, keep a given seed
                fixes.append((self._fix_value, drawn))
                continue
            varying.update(id(call) for call in calls)
            if not finding.salted_hash:
                fixes += [(self._fix_seed, call) for call in calls]
        seeds = list(self._user_seeds(unit, varying)) or _imported_seeds(unit) or _option_seed(unit)
        seed, binding = seeds[0] if seeds else (None, None)
        fixed = seed if seed is not None and binding is None else str(options.seed)  # the seed seed_all sets
        for fix, node in fixes:  # `random.seed()` gets the same literal seed as seed_all (a rerun then matches)
            fix(unit, node, fixed)
        _seed_rl(unit, fixed)
        _seed_runner_config(unit, fixed)
        if setup is not None and binding is not None:  # the user's seed expression may not be defined after the setup
            seed = None
        statement = nodes.statement(_seed_all(unit, seed if seed is not None else options.seed))
        if setup is not None:  # detectron2's default_setup: reseeded from the OS unless the config sets its seed
            unit.note(setup.lineno, "this setup seeds from the OS while the config's seed is negative (its default): "
                                    "seed_all goes right after it; set the seed in the config to keep your own")
            unit.edits.insert_after(unit.statement(_statement_of(setup, unit.analysis.parents)), [statement])
            return
        if binding is None:
            job = _submitit_job(unit)
            if job is not None:  # the `__main__` of a submitit launcher only submits the job
                unit.edits.insert_before(unit.statement(_body_start(job)), [statement])
                owner = unit.analysis.parents.get(job)
                shown = f"{owner.name}.__call__" if isinstance(owner, ast.ClassDef) else job.name
                unit.note(job.lineno, f"submitit runs `{shown}` in a process of its own, for the job: seed_all goes first "
                                      "in it, since this script's `__main__` only submits the job")
                return
            self_test = None if facts.spawned else _self_test(unit)  # spawned processes do not run `__main__` blocks
            if self_test is not None:  # a model file's self-test: importing the module must not seed anything
                unit.edits.insert_before(self_test, [statement])
            else:
                unit.edits.insert_after(unit.after_imports(), [statement])
            if seed is None:
                _note_helper_seeding(unit, varying)
            return
        where, anchor = binding
        target = unit.statement(anchor)
        if target is None:
            unit.edits.insert_after(unit.after_imports(), [statement])
            return
        if where == "after":
            unit.edits.insert_after(target, [statement])
        else:
            unit.edits.insert_before(target, [statement])
            alternatives = list(self._user_seeds(unit, varying, conditional=True))
            for other in _alternative_starts(alternatives, seed, anchor, unit.analysis.parents):
                unit.edits.insert_before(unit.statement(other), [statement])
        if options.deterministic:
            self._determinism_first(unit, anchor)

    def _seed_where_training_seeds(self, unit: Unit) -> None:
        """In a module that is no entry script, seed_all where a function that trains seeds with a seed of its own
        (SlowFast's tools/train_net.py: `train(cfg)` seeds NumPy and torch with `cfg.RNG_SEED`, then runs the
        epochs; run_net.py hands it to `launch_job`, whose processes run it): that seed is the run's, and the entry
        script's seed_all, which cannot read it, is overridden there for those generators only."""
        training = _training_functions(unit)
        for seed, binding in self._user_seeds(unit, set()) if training else ():
            anchor = binding[1] if binding is not None else None
            scope = _scope_of(anchor, unit.analysis.parents) if anchor is not None else None
            target = unit.statement(anchor) if anchor is not None else None
            if isinstance(scope, FUNCTION_TYPES) and scope.name in training and target is not None:
                statement = nodes.statement(_seed_all(unit, seed))
                insert = unit.edits.insert_after if binding[0] == "after" else unit.edits.insert_before
                insert(target, [statement])
                if unit.options.deterministic:  # SlowFast's `du.init_distributed_training(cfg)` comes first
                    self._determinism_first(unit, anchor)
                return

    @staticmethod
    def _determinism_first(unit: Unit, anchor: ast.stmt) -> None:
        """With `--deterministic`, where the user's seed is known only after communication has started (`seed =
        args.seed + dist.get_rank()`, a seed read after `Accelerator()`): `seed_all(mode=True)` also goes before
        that start (a call of the framework's, or of a project function that makes one), since HCCL and LCCL read
        their determinism settings when their communicators are made; before the `if` it sits in, so that every
        branch gets it."""
        parents = unit.analysis.parents
        scope = _scope_of(anchor, parents)
        calls = [node for node in ast.walk(scope) if isinstance(node, ast.Call)
                 and _scope_of(node, parents) is scope and node.lineno < anchor.lineno]
        starts = _starts_communication(unit)
        init = min((node for node in calls if starts(node)), key=lambda node: (node.lineno, node.col_offset),
                   default=None)
        if init is None and scope is not unit.tree:  # Arcface starts HCCL at module level, on import
            scope = unit.tree
            init = min((node for node in ast.walk(unit.tree) if isinstance(node, ast.Call) and starts(node)
                        and _scope_of(node, parents) is scope), key=lambda node: (node.lineno, node.col_offset),
                       default=None)
        if init is None:
            return
        start = _statement_of(init, parents)
        while isinstance(parents.get(start), (ast.If, ast.Try)) and parents[start] is not scope:
            start = parents[start]  # accelerate's `if args.with_tracking: Accelerator(log_with=...) else: Accelerator()`
        target = unit.statement(start)
        if target is None:
            return
        unit.edits.insert_before(target, [nodes.statement(_seed_all(unit, unit.options.seed))])
        unit.note(init.lineno, "seed_all(mode=True) also goes before communication starts here, where HCCL and LCCL "
                               "read their determinism settings; the seed_all after it sets your seed")

    @staticmethod
    def _fix_value(unit: Unit, assignment: ast.Assign | ast.AnnAssign, seed: str) -> None:
        """Assign the fixed seed where a seed variable was given a value that varies from run to run."""
        node = unit.node_for(assignment.value, cst.BaseExpression)
        if node is not None:
            unit.edits.rewrite(node, lambda _: cst.Integer(seed))

    @staticmethod
    def _fix_given_seed(unit: Unit, call: ast.Call, seed: str) -> None:
        """Give a library call that draws a seed when given None (OpenMMLab's `init_random_seed(args.seed)`) the fixed
        seed in place of None: `init_random_seed(args.seed if args.seed is not None else 1234)`."""
        given = argument(call, *catalogue.SEEDS_DRAWN_FOR_NONE[unit.ctx.imports.resolve_any(call.func)])
        text = ast.get_source_segment(unit.text, given) if given is not None else None
        Seed._fix_seed(unit, call, f"{text} if {text} is not None else {seed}" if text and "\n" not in text else seed)

    @staticmethod
    def _fix_seed(unit: Unit, call: ast.Call, seed: str) -> None:
        """Give a seeding call whose seed varies from run to run the fixed seed (`seed=` or its first argument)."""
        node = unit.node_for(call, cst.Call)
        if node is None or nodes.has_star(node):
            unit.note(call.lineno, "this seed changes from run to run: give it a fixed value yourself")
            return
        value = cst.parse_expression(seed)
        positional = [arg for arg in node.args if arg.keyword is None]
        if nodes.argument(node, "seed") is None and not positional and node.args:
            unit.note(call.lineno, "this seed changes from run to run: give it a fixed value yourself")
            return

        def fix(updated: cst.Call) -> cst.Call:
            if nodes.argument(updated, "seed") is not None:
                return nodes.set_argument(updated, "seed", value)
            first = next((arg for arg in updated.args if arg.keyword is None), None)
            if first is None:  # `random.seed()`
                return nodes.append_argument(updated, cst.Arg(value=value))
            return updated.with_changes(args=[arg.with_changes(value=value) if arg is first else arg
                                              for arg in updated.args])

        unit.edits.rewrite(node, fix)

    @staticmethod
    def _user_seeds(unit: Unit, varying: set[int], conditional: bool = False
                    ) -> Iterator[tuple[str, tuple[str, ast.stmt] | None]]:
        """The user's seed expressions, one per seeding call that runs unconditionally (with `conditional`, also
        under a condition that does not test the seed, as `if args.seed is not None:` does), each with where
        `seed_all` must go for it to be defined (None: after imports); seeding calls in `varying` (seeds from
        entropy, fixed by `_fix_seed`) do not count."""
        for call in _start_up_seedings(unit, varying, conditional):
            value = _seed_argument(call, unit)
            drawn = value is not None and _draws_when_none(call, value, unit)
            returned = _returned_seed(call, unit)
            if returned is not None and not drawn:
                yield returned
                continue
            if value is None:
                parsed = _parsed_trainer_seed(call, unit)
                if parsed is not None:
                    yield parsed
                elif (inside := _helper_literal_seed(call, unit)) is not None:
                    yield inside, None
                continue
            literal = constant(value)
            if isinstance(literal, int) and not isinstance(literal, bool):
                yield str(literal), None
                continue
            text = ast.get_source_segment(unit.text, value)
            if text is None or "\n" in text:
                continue
            if drawn:  # ADDA's `init_random_seed(config.manual_seed)`, null in its YAML; torchtune's `set_seed`
                # A seeder whose drawn seed is kept (`self.seed = training.set_seed(seed=cfg.seed)`) gets seed_all
                # before it: its draw then comes from seeded generators, and a determinism switch it makes stays on.
                yield (f"{text} if {text} is not None else {unit.options.seed}",
                       ("before" if returned else "after", _statement_of(call, unit.analysis.parents)))
                continue
            yield text, _placement(call, value, unit.analysis.parents, unit.tree)


def _training_functions(unit: Unit) -> set[str]:
    """The names of the file's functions holding a training loop, and of those calling one of them."""
    names = {loop.function.name for loop in unit.analysis.loops if isinstance(loop.function, FUNCTION_TYPES)}
    functions = [node for node in ast.walk(unit.tree) if isinstance(node, FUNCTION_TYPES)]
    while True:
        callers = {function.name for function in functions if function.name not in names and any(
            isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in names
            for node in ast.walk(function))}
        if not callers:
            return names
        names |= callers


def _imported_seeds(unit: Unit) -> list[tuple[str, None]]:
    """The literal seed a project module seeds with at its top level when the script imports it (mindrl's
    c51_trainer.py runs `set_seed(5)`, a2c.py `np.random.seed(SEED)` after `SEED = 42`; also an import under the
    `__main__` guard, mindpose's train_on_openi.py `from train import train`, whose tools/train.py runs
    `ms.set_seed(0)`), for seed_all after the imports to keep;
    a seed there that is no literal is noted, as seed_all replaces it."""
    facts = seeding.analyse(unit.ctx)
    folder = project.file_folder(unit.ctx.path)
    for effect in facts.effects:
        node = effect.node
        if (not isinstance(node, (ast.Import, ast.ImportFrom)) or not effect.summary.families
                or not all(is_main_guard(test) for test, _ in effect.guards) or effect.function is not None):
            continue
        call, seed = pinning.import_seeder(node, folder) or (None, None)
        literal = constant(seed)
        if isinstance(literal, int) and not isinstance(literal, bool):
            return [(str(literal), None)]
        if call is not None:
            unit.note(node.lineno, f"importing this seeds (`{ast.unparse(call)}` in that module), with a seed "
                                   f"seed_all cannot read here: seed_all sets {unit.options.seed} after it; give "
                                   "msprobe-instrument the same seed with --seed")
            return []
    return []


def _option_seed(unit: Unit) -> list[tuple[str, tuple[str, ast.stmt]]]:
    """The script's own seed option (`--seed`), which the script seeds nothing with, for seed_all right after the
    options are parsed: `args.seed` (applications' mae/src/pretrain.py imports `mae_train_config`, which
    config/config.py parses with `--seed` 2022), or `args.seed if args.seed is not None else 1234` when it defaults
    to None (torchrec's dlrm_main.py). Where spawned processes re-import the script without running that, first in
    the function they start, through its parameter that the options are handed to (MoCo v3's
    `mp.spawn(main_worker, args=(ngpus_per_node, args))`: `args.seed` in `main_worker(gpu, ngpus_per_node, args)`)."""
    spawned = seeding.analyse(unit.ctx).spawned
    local = project.local_imports(ast.walk(unit.tree))
    folder = project.file_folder(unit.ctx.path)
    found = []
    for node in ast.walk(unit.tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            found += [(node.targets[0].id, default, node) for default in [_parsed_seed(unit.tree, node.value)] if default]
        elif isinstance(node, ast.ImportFrom) and node in unit.tree.body:
            found += [(alias.asname or alias.name, default, node) for alias in node.names
                      if (default := _imported_seed_option(local.refs.get(alias.asname or alias.name), folder))]
    if len(found) != 1:
        return []
    name, default, node = found[0]
    binding = ("after", node)
    if spawned:
        started = {_handed_to(unit.tree, call, target, name) for call, target in spawned}
        if len(started) != 1 or None in started:
            return []
        name, function = started.pop()
        binding = ("before", _body_start(function))
    seed = f"{name}.seed" if default == "int" else f"{name}.seed if {name}.seed is not None else {unit.options.seed}"
    return [(seed, binding)]


def _handed_to(tree: ast.Module, call: ast.Call, target: str, name: str) -> tuple[str, ast.FunctionDef] | None:
    """(parameter, function): the parameter of the file's function `target`, which `call` (`mp.spawn(target,
    args=(...))`) starts, that is handed `name`; spawn gives the process index first."""
    function = next((node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name == target), None)
    handed = argument(call, 1, "args")
    if function is None or not isinstance(handed, ast.Tuple):
        return None
    index = next((i for i, item in enumerate(handed.elts) if isinstance(item, ast.Name) and item.id == name), None)
    parameters = function.args.args
    return (parameters[index + 1].arg, function) if index is not None and index + 1 < len(parameters) else None


def _imported_seed_option(ref: project.Ref | None, folder: Path) -> str | None:
    """What the `--seed` option defaults to ("int" or "None") when `ref` imports the options a project module parses
    at its top level (`mae_train_config = train_parse_args()`), else None."""
    source = project.defining(folder, ref, ref.attr) if ref is not None and ref.attr else None
    if source is None:
        return None
    module, name = source
    values = [node.value for node in module.tree.body if isinstance(node, ast.Assign)
              and [ast.unparse(target) for target in node.targets] == [name]]
    return _parsed_seed(module.tree, values[0]) if len(values) == 1 else None


def _parsed_seed(tree: ast.Module, value: ast.expr) -> str | None:
    """"int" or "None", what the `--seed` option defaults to, when `value` parses the options of `tree`'s parser
    (`parser.parse_args()`, or a call of a function of `tree` that returns it); else None."""
    if not isinstance(value, ast.Call):
        return None
    functions = {node.name: node for node in tree.body if isinstance(node, FUNCTION_TYPES)}
    called = functions.get(value.func.id) if isinstance(value.func, ast.Name) else None
    parses = [node for node in ast.walk(called or value) if isinstance(node, ast.Call)
              and isinstance(node.func, ast.Attribute) and node.func.attr == "parse_args"]
    if not parses:
        return None
    default = conditions.argparse_defaults(ast.walk(tree)).get("seed", conditions.UNKNOWN)
    if isinstance(default, int) and not isinstance(default, bool):
        return "int"
    return "None" if default is None else None


def _note_helper_seeding(unit: Unit, varying: set[int]) -> None:
    """Note a call that seeds at start-up through a project helper with a seed seed_all cannot read from here
    (OpenRLHF's `strategy.setup_distributed()` seeds `args.seed` inside): it runs after the fixed seed_all,
    so its seed is the one the run draws with."""
    call = next((call for call in _start_up_seedings(unit, varying)
                 if _seed_argument(call, unit) is None and _returned_seed(call, unit) is None
                 and _helper_literal_seed(call, unit) is None), None)
    if call is not None:
        facts = seeding.analyse(unit.ctx)
        effect = next(effect for effect in facts.effects if effect.node is call)
        summary = effect.summary
        # seeding only where a value it tests for None is set (mindediting's `init_env`, by `cfg.system.*_seed`)
        seeds, where, then = ("seeds", "", "")
        if not summary.sure and facts.unsure_inside(effect):
            test, file = summary.unsure_when
            seeds, where, then = "may seed", f", depending on `{ast.unparse(test)}` ({file}:{test.lineno})", \
                "where it does, "
        defaults = {key: value for key, value in conditions.argparse_defaults(ast.walk(unit.tree)).items()
                    if SEED_KEY.fullmatch(key) and isinstance(value, int) and not isinstance(value, bool)}
        option, default = next(iter(defaults.items())) if len(defaults) == 1 else (None, None)
        own = f" (`--{option}`, {default} unless given)" if option else ""
        same = f" (--seed {default} for the default)" if option else ""
        unit.note(call.lineno, f"`{ast.unparse(call.func)}(...)` {seeds} again after seed_all "
                               f"({_family_list(summary.families)}){where}, with the script's own seed{own}, which "
                               f"seed_all does not follow there (it sets {unit.options.seed}): {then}the run draws from "
                               f"the script's seed there; give msprobe-instrument the same with --seed{same}")


def _family_list(families: frozenset[str]) -> str:
    """What a seeding seeds, in words ("Python's `random`, NumPy's global generator and MindSpore's data pipeline" for
    mindrlhf's PPOTrainer, which calls `mindspore.dataset.config.set_seed`: MindSpore's operators keep seed_all's
    seed); "every generator" for a seeding of all (a Hugging Face trainer's `set_seed`), whose list would name
    frameworks the script does not use."""
    if families >= pinning.FAMILIES:
        return "every generator"
    labels = [label for family, label in FAMILY_LABEL.items() if family in families]
    return ", ".join(labels[:-1]) + " and " + labels[-1] if len(labels) > 1 else "".join(labels)


def _start_up_seedings(unit: Unit, varying: set[int], conditional: bool = False) -> Iterator[ast.Call]:
    """The seeding calls the run makes at start-up, unconditionally (with `conditional`, also under a condition
    that does not test the seed, as `if args.seed is not None:` does; `if args.seed:` around the call of a helper
    that seeds counts as one that does); not those in `varying`, those in a loop, handler or data callback, nor
    those the processes `mp.spawn` starts never run."""
    facts = seeding.analyse(unit.ctx)
    for effect in facts.effects:
        call = effect.node
        skipping = facts.skipping_guard(effect)  # false with the defaults, also around every call
        if conditional:
            guarded = any(_reads_as_seed(test) for test in (*(t for t, _ in effect.guards), skipping) if test)
        else:
            guarded = skipping is not None or not all(is_main_guard(test) for test, _ in effect.guards)
        if (not isinstance(call, ast.Call) or not effect.summary.families or id(call) in varying or guarded
                or facts.spawned and not facts.runs_in_workers(effect)):  # mp.spawn's processes never run it
            continue
        if not (_inside_loop_or_handler(call, unit.analysis.parents) or _in_callback(call, unit.analysis.parents)):
            yield call


def _alternative_starts(seeds: list, seed: str, anchor: ast.stmt, parents: dict[ast.AST, ast.AST]) -> list[ast.stmt]:
    """The first statements of the other functions that seed, also under a condition, with the same
    parameter-borne seed as the one whose start `anchor` is (DeepSpeed's pipeline example seeds `args.seed` in
    both `train_base(args)` and `train_pipe(args)`, which `__main__` calls one or the other of): each path gets
    `seed_all` at its start."""
    if not _starts_function(anchor, parents):
        return []
    found: dict[int, ast.stmt] = {}
    for text, binding in seeds:
        if (text == seed and binding is not None and binding[0] == "before" and binding[1] is not anchor
                and _starts_function(binding[1], parents)):
            found.setdefault(id(binding[1]), binding[1])
    return list(found.values())


def _starts_function(statement: ast.stmt, parents: dict[ast.AST, ast.AST]) -> bool:
    function = parents.get(statement)
    return isinstance(function, FUNCTION_TYPES) and statement is _body_start(function)


def _body_start(function: ast.FunctionDef | ast.AsyncFunctionDef) -> ast.stmt:
    """The first statement of a function's body after its docstring."""
    first = function.body[0]
    docstring = isinstance(first, ast.Expr) and isinstance(constant(first.value), str) and len(function.body) > 1
    return function.body[1 if docstring else 0]


def _seed_assignment(finding: entropy.EntropySeed, parents: dict[ast.AST, ast.AST]) -> ast.Assign | ast.AnnAssign | None:
    """The assignment to a seed variable (`opt.manualSeed = random.randint(1, 10000)`, `seed = int(time.time())`)
    whose value is where the finding's varying seed comes from; None when it comes from anywhere else (the
    seeding call's own argument, an argparse default, a function's return, a variable not named as a seed,
    which may be used for more than seeding)."""
    seeding_calls = (finding.node, *finding.also)
    node = finding.origin
    while node is not None and not isinstance(node, ast.stmt):
        if any(node is call for call in seeding_calls):
            return None
        node = parents.get(node)
    if isinstance(node, ast.Assign) and len(node.targets) == 1:
        target = node.targets[0]
    elif isinstance(node, ast.AnnAssign) and node.value is not None:
        target = node.target
    else:
        return None
    name = key(target)
    return node if name is not None and "seed" in name.rpartition(".")[2].lower() else None


def _returned_seed(call: ast.Call, unit: Unit) -> tuple[str, tuple[str, ast.stmt]] | None:
    """The seed a seeder returns, when the script keeps it (`self.seed = training.set_seed(seed=cfg.seed)`,
    `seed = seed_everything(args.seed)`), and the statement that keeps it: seed_all goes right after it, with
    that value. Such seeders (torchtune's, Lightning's) draw a seed when given None, which seed_all rejects:
    the argument may be None, the result is the seed in use. A library seeder that returns anything else
    (`torch.manual_seed` returns a generator) does not count; a project's helper counts when the name it is
    kept in reads as a seed."""
    statement = unit.analysis.parents.get(call)
    if not (isinstance(statement, ast.Assign) and statement.value is call and len(statement.targets) == 1):
        return None
    target = statement.targets[0]
    qualified = unit.ctx.call_qualname(call) or seeding.method_qualname(unit.ctx, call)
    if qualified is not None and qualified not in catalogue.SEED_RETURNING:
        return None
    if not isinstance(target, (ast.Name, ast.Attribute)) or not _reads_as_seed(target):
        return None
    text = ast.get_source_segment(unit.text, target)
    return (text, ("after", statement)) if text is not None and "\n" not in text else None


def _drawn_for_none(node: ast.AST | None, unit: Unit) -> bool:
    """Whether `node` calls a library function that draws a seed when given None (`catalogue.SEEDS_DRAWN_FOR_NONE`)."""
    return isinstance(node, ast.Call) and unit.ctx.imports.resolve_any(node.func) in catalogue.SEEDS_DRAWN_FOR_NONE


def _given_maybe_none(node: ast.AST, unit: Unit) -> bool:
    """A call of a seeder that draws for None given a seed that may be None: `_user_seeds` adds `seed_all(seed=<seed>
    if <seed> is not None else 1234)` for it, keeping a seed the user gives."""
    value = _seed_argument(node, unit) if isinstance(node, ast.Call) else None
    return value is not None and _draws_when_none(node, value, unit)


def _draws_when_none(call: ast.Call, value: ast.expr, unit: Unit) -> bool:
    """Whether the project helper `call` hands `value` to a parameter it tests against None (a seed it takes
    None for: ADDA's `init_random_seed` then draws one with `random.randint`), which seed_all would reject; or
    `call` is a library seeder that draws a seed for None (torchtune's `set_seed`)."""
    functions = {node.name: node for node in unit.tree.body if isinstance(node, FUNCTION_TYPES)}
    definition, _ = pinning.called_function(
        call, functions, project.file_folder(unit.path), project.local_imports(project.import_statements(unit.tree.body)))
    if definition is None:
        return unit.ctx.imports.resolve_any(call.func) in catalogue.SEEDERS_DRAWING_FOR_NONE
    names = {name for name, argument in conditions.call_arguments(definition, call).items()
             if argument is not None and argument[0] is value}
    return any(isinstance(node, ast.Compare) and isinstance(node.left, ast.Name) and node.left.id in names
               and any(isinstance(other, ast.Constant) and other.value is None for other in node.comparators)
               for node in ast.walk(definition))


def _helper_literal_seed(call: ast.Call, unit: Unit) -> str | None:
    """The literal seed every seeding call of a project helper (the file's or an imported module's function) seeds
    with, when it takes none from its caller: segment-anything's `set_env(args)` runs `ms.set_seed(42)`."""
    functions = {node.name: node for node in unit.tree.body if isinstance(node, FUNCTION_TYPES)}
    local = project.local_imports(ast.walk(unit.tree))
    function, path = pinning.called_function(call, functions, project.file_folder(unit.ctx.path), local)
    module = project.load(path) if path is not None else None
    qualname = (lambda inner: module.imports.resolve(inner.func)) if module is not None else unit.ctx.call_qualname
    seeds = {constant(argument(inner, 0, "seed")) for inner in ast.walk(function) if isinstance(inner, ast.Call)
             and qualname(inner) in pinning.SEEDER_FAMILIES} if function is not None else set()
    literal = seeds.pop() if len(seeds) == 1 else None
    return str(literal) if isinstance(literal, int) and not isinstance(literal, bool) else None


def _seed_argument(call: ast.Call, unit: Unit) -> ast.expr | None:
    """The seed a seeding call receives: `seed=`, or the first positional argument of a seeding API
    (`torch.manual_seed(s)`) or of a helper named like a seeder when it reads as a seed (`set_seed(cfg.seed)`).
    Any other helper that seeds somewhere inside (`setup(args)`, `do_test(cfg, model)`) says nothing about
    its arguments. A value derived from `initial_seed()` is 64 bits wide: not a seed `seed_all` takes."""
    value = next((kw.value for kw in call.keywords if kw.arg == "seed"), None)
    if value is None and call.args and not isinstance(call.args[0], ast.Starred):
        qualified = unit.ctx.call_qualname(call)
        if qualified in pinning.SEEDER_FAMILIES:  # a seeding API; a configuration's loader takes no seed
            value = call.args[0] if qualified in catalogue.SEED_ARGUMENTS else None
        elif pinning.seeder_by_name(call).families and _reads_as_seed(call.args[0]):
            value = call.args[0]
    if value is None or any(isinstance(node, ast.Call) and _called_name(node) == "initial_seed"
                            for node in ast.walk(value)):
        return None
    return value


def _parsed_trainer_seed(call: ast.Call, unit: Unit) -> tuple[str, tuple[str, ast.stmt]] | None:
    """`training_args.seed` and where seed_all can read it, for a Hugging Face trainer (TRL's, a subclass) built with
    `args=training_args` that a parser gave (`HfArgumentParser(...).parse_args_into_dataclasses()`, TRL's
    `parse_args_and_config()`) or the function's parameters hold: the trainer seeds with it (TrainingArguments'
    default 42), and seed_all goes right after the parse, as after `args = parser.parse_args()`. Arguments built
    in the script (`TrainingArguments(..., seed=args.seed)`) come after the model, too late for seed_all."""
    given = next((kw.value for kw in call.keywords if kw.arg == "args"), None)
    if unit.ctx.call_qualname(call) not in catalogue.HF_TRAINERS or given is None or not is_name_chain(given):
        return None
    text = ast.get_source_segment(unit.text, given)
    parents = unit.analysis.parents
    where, anchor = _placement(call, ast.Attribute(value=given, attr="seed", ctx=ast.Load()), parents, unit.tree)
    parsed = (where == "after" and isinstance(anchor, ast.Assign) and isinstance(anchor.value, ast.Call)
              and isinstance(anchor.value.func, ast.Attribute) and anchor.value.func.attr.startswith("parse"))
    if text is None or "\n" in text or not (parsed or where == "before" and _starts_function(anchor, parents)):
        return None
    return f"{text}.seed", (where, anchor)


def _reads_as_seed(node: ast.expr) -> bool:
    """An int literal, or an expression naming a seed (`args.seed`, `cfg.SEED + rank`, `opt.manualSeed`), also by its
    key in a config (Open-Sora's `cfg.get("seed", 1024)`, `config["seed"]`)."""
    literal = constant(node)
    if isinstance(literal, int) and not isinstance(literal, bool):
        return True
    return any("seed" in (getattr(n, "id", None) or getattr(n, "attr", None) or "").lower() for n in ast.walk(node)
               if isinstance(n, (ast.Name, ast.Attribute))) or any(
        isinstance(n, ast.Constant) and isinstance(n.value, str) and SEED_KEY.fullmatch(n.value) for n in ast.walk(node))


def _called_name(call: ast.Call) -> str:
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")


def _seed_runner_config(unit: Unit, seed: str) -> None:
    """Give the config of the mmengine runner the script builds from one (OpenMMLab's tools/train.py:
    `Runner.from_cfg(cfg)`, or `RUNNERS.build(cfg)` in the other branch) seed_all's seed where it sets none, before
    the runner is built: the runner reseeds random, NumPy and torch in `set_randomness(**cfg.randomness)`, with a
    seed it draws when the config has none; with `--deterministic` also `deterministic=True` (else cuDNN benchmarking
    the config's `env_cfg` turns on stays on)."""
    builds = [node for node in ast.walk(unit.tree) if isinstance(node, ast.Call) and node.args
              and unit.ctx.imports.resolve_any(node.func) in CONFIG_RUNNER_BUILDS]
    if not builds or len({ast.unparse(call.args[0]) for call in builds}) != 1 or not is_name_chain(builds[0].args[0]):
        return
    parents = unit.analysis.parents
    statements = [_statement_of(call, parents) for call in builds]
    target = unit.statement(scopes.first_in_common_block(statements, parents))
    if target is None:
        return
    config = ast.unparse(builds[0].args[0])
    code = [f"{config}.randomness = dict({config}.get(\"randomness\") or {{}})",
            f"if {config}.randomness.get(\"seed\") is None:\n    {config}.randomness[\"seed\"] = {seed}\n"]
    if unit.options.deterministic:
        code.append(f"{config}.randomness[\"deterministic\"] = True")
    unit.edits.insert_before(target, [cst.parse_statement(line) for line in code])


def _seed_rl(unit: Unit, seed: str) -> None:
    """Seed what seed_all does not reach in reinforcement learning: a Stable-Baselines3 algorithm the script trains
    that seeds nothing gets `seed=` (it seeds the env and the action space, with `random`, NumPy and torch; a seed
    option that is None by default is kept when given: `args.seed if args.seed is not None else 1234`), the first
    reset of a gymnasium env given no seed gets `seed=` (later resets continue its generator; with gym, whose releases
    before 0.26 take none, a note); an action space drawn from unseeded gets a note."""
    for algorithm in rl_seeding.unseeded_algorithms(unit.ctx):
        given = keyword_argument(algorithm, "seed")
        text = ast.get_source_segment(unit.text, given) if given is not None and constant(given) is not None else None
        _give_seed(unit, algorithm, f"{text} if {text} is not None else {seed}" if text and "\n" not in text else seed)
    old = rl_seeding.old_gym(unit.ctx)  # gym before 0.26 takes no `reset(seed=)`: which gym runs is not known
    for call, kind in rl_seeding.gym_draws(unit.ctx):
        owner = ast.unparse(call.func.value)
        if kind == "reset" and not old:
            _give_seed(unit, call, seed)
        elif kind == "reset":
            unit.note(call.lineno, f"the env seeds its generator from OS entropy, which seed_all does not reach: call "
                                   f"`{owner}.reset(seed={seed})` once at the start (before gym 0.26: `{owner}.seed({seed})`)")
        else:
            unit.note(call.lineno, f"the action space draws from a generator of its own, which seed_all does not reach: "
                                   f"call `{owner}.seed({seed})` once at the start")


def _give_seed(unit: Unit, call: ast.Call, seed: str) -> None:
    """Set a call's `seed=` keyword to `seed`."""
    node = unit.node_for(call, cst.Call)
    if node is None:
        unit.note(call.lineno, f"give this call `seed={seed}` yourself")
        return
    value = cst.parse_expression(seed)
    unit.edits.rewrite(node, lambda updated: nodes.set_argument(updated, "seed", value))


def _seed_all(unit: Unit, seed: object) -> str:
    """The `seed_all(...)` call with `seed` (a literal or the user's expression) and the run's options."""
    options = unit.options
    return f"{unit.runtime('seed_all')}(seed={seed}, mode={options.deterministic}, rm_dropout={options.remove_dropout})"


def _scope_of(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> ast.AST:
    """The function (or the module) `node` runs in."""
    node = parents.get(node)
    while node is not None and not isinstance(node, (*FUNCTION_TYPES, ast.Module)):
        node = parents.get(node)
    return node


def _statement_of(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> ast.stmt:
    """The statement holding `node`."""
    while not isinstance(node, ast.stmt):
        node = parents[node]
    return node


def _inside_loop_or_handler(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> bool:
    """In a loop or an except block of its function, or in a function nested in another (an event handler:
    ignite's `@trainer.on(EPISODE_STARTED)` reseeding with `args.seed + trainer.state.epoch`)."""
    parent = parents.get(node)
    while parent is not None and not isinstance(parent, (*FUNCTION_TYPES, ast.Module)):
        if isinstance(parent, (ast.For, ast.AsyncFor, ast.While, ast.ExceptHandler)):
            return True
        parent = parents.get(parent)
    while parent is not None and not isinstance(parent, ast.Module):
        parent = parents.get(parent)
        if isinstance(parent, FUNCTION_TYPES):
            return True
    return False


def _in_callback(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> bool:
    """In a method that data loading or a caller's protocol runs, not the script's start-up: any method of a
    dataset, sampler or iterator class (one with `__getitem__`, `__iter__`, ...: DLRM's `reset_numpy_seed`, which
    `__getitem__` calls every epoch), or a `__call__` (BERT's `WorkerInitObj`, given as `worker_init_fn`)."""
    function = _scope_of(node, parents)
    owner = parents.get(function)
    if not isinstance(owner, ast.ClassDef):
        return False
    methods = {item.name for item in owner.body if isinstance(item, FUNCTION_TYPES)}
    return function.name == "__call__" or bool(methods & cpu_code.DATA_METHODS)


def _submitit_job(unit: Unit) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """What a submitit launcher runs as its job, in a fresh process (dinov2's run/train/train.py, ConvNeXt's
    run_with_submitit.py): in a file that uses submitit, the `__call__` of the one class of the file that defines it
    and is used outside itself (`executor.submit(Trainer(args))`, `submit_jobs(Trainer, args)`), or a function of the
    file handed to `executor.submit(fn, ...)`."""
    tree = unit.tree
    if not any(isinstance(node, ast.Import) and any(alias.name.split(".")[0] == "submitit" for alias in node.names)
               or isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "submitit"
               for node in ast.walk(tree)):
        return None
    functions = {node.name: node for node in tree.body if isinstance(node, FUNCTION_TYPES)}
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "submit"
                and node.args and isinstance(node.args[0], ast.Name) and node.args[0].id in functions):
            return functions[node.args[0].id]
    calls = {}
    for cls in (node for node in tree.body if isinstance(node, ast.ClassDef)):
        call = next((item for item in cls.body if isinstance(item, FUNCTION_TYPES) and item.name == "__call__"), None)
        inside = {id(node) for node in ast.walk(cls)}
        if call is not None and any(isinstance(node, ast.Name) and node.id == cls.name and id(node) not in inside
                                    for node in ast.walk(tree)):
            calls[cls.name] = call
    return next(iter(calls.values())) if len(calls) == 1 else None


def _drives_ray(unit: Unit) -> bool:
    """Whether the file starts Ray (`ray.init(...)`) or defines Ray tasks or actors (`@ray.remote`)."""
    resolve = unit.ctx.imports.resolve_any
    for node in ast.walk(unit.tree):
        if isinstance(node, ast.Call) and resolve(node.func) == "ray.init":
            return True
        if isinstance(node, (*FUNCTION_TYPES, ast.ClassDef)) and any(
                resolve(d.func if isinstance(d, ast.Call) else d) == "ray.remote" for d in node.decorator_list):
            return True
    return False


def _draws(unit: Unit) -> bool:
    """Whether the file draws random numbers, builds weights (a layer, a model class of its own) or dropout."""
    ctx = unit.ctx
    return (any(isinstance(node, ast.Call) and ctx.callee_name(node) in DROPOUT_NAMES for node in ast.walk(ctx.tree))
            or LateDraws(ctx).anywhere())


def _self_test(unit: Unit) -> cst.CSTNode | None:
    """The first statement under the `__main__` guard of a file another file of the project imports, or of one
    that trains nowhere (no training loop, `Model.train` or project helper holding one: a model file's self-test,
    `if __name__ == "__main__": test()`),
    where its seeding goes, so that importing the module (the training script does) seeds nothing and keeps
    its dropout; None for any other file."""
    analysis, body = unit.analysis, unit.tree.body
    guard = next((node for node in body if isinstance(node, ast.If) and is_main_guard(node.test)), None)
    if guard is not None and project.imported_elsewhere(unit.path):  # a library module with a demo or a test
        return unit.statement(guard.body[0])
    resolve = unit.ctx.imports.resolve_any
    plain = _plain_functions(unit.tree, resolve)
    if guard is None or not all(node is guard or _declares(node, resolve, plain) for node in body):
        return None  # code outside the guard runs on import: it may draw, and the seed must come first
    if analysis.loops or analysis.callback_trainings or loops.loops_in_helpers(unit.ctx):
        return None
    return unit.statement(guard.body[0])


def _starts_communication(unit: Unit):
    """A test of calls: whether one starts distributed communication, itself (`init_process_group`, `Accelerator()`)
    or through a function of a project module (DETR's, DeiT's and MAE's `utils.init_distributed_mode(args)`)."""
    project.find_module.cache_clear()  # module lookups are cached for one file's analysis only
    local = project.local_imports(project.import_statements(unit.tree.body))
    folder = project.file_folder(unit.path)

    def starts(call: ast.Call) -> bool:
        if unit.ctx.call_qualname(call) in catalogue.DISTRIBUTED_INIT_CALLS:
            return True
        for _, name, module in project.reached([call], local, (), folder):
            function = module.functions.get(name)
            if function is not None and any(
                    isinstance(node, ast.Call) and module.imports.resolve(node.func) in catalogue.DISTRIBUTED_INIT_CALLS
                    for node in ast.walk(function)):
                return True
        return False
    return starts


def _plain_functions(tree: ast.Module, resolve) -> frozenset[str]:
    """The file's module-level functions that call only the standard library (timm's and mindyolo's `_cfg`,
    which builds the dict of `default_cfgs = {"yolov5": _cfg(url="")}`)."""
    return frozenset(node.name for node in tree.body if isinstance(node, FUNCTION_TYPES)
                     and all(_standard(statement, resolve) for statement in node.body))


def _declares(node: ast.stmt, resolve, plain: frozenset[str] = frozenset()) -> bool:
    """An import, a definition, a docstring, or a value made by the standard library (not `random`) or by one of the
    file's `plain` functions: module-level code that draws nothing (`EPS = 1e-5`, `logger =
    logging.getLogger(__name__)`, `Pred = namedtuple(...)`)."""
    if isinstance(node, (ast.Import, ast.ImportFrom, ast.ClassDef, *FUNCTION_TYPES, ast.Pass)):
        return True
    if isinstance(node, (ast.If, ast.Try)):  # yolov5's `if str(ROOT) not in sys.path: sys.path.append(...)`
        inner = [*node.body, *node.orelse, *getattr(node, "finalbody", []),
                 *(statement for handler in getattr(node, "handlers", []) for statement in handler.body)]
        test = [node.test] if isinstance(node, ast.If) else []
        return all(_standard(value, resolve, plain) for value in test) and all(
            _declares(statement, resolve, plain) for statement in inner)
    value = getattr(node, "value", None) if isinstance(node, (ast.Expr, ast.Assign, ast.AnnAssign)) else None
    return value is not None and _standard(value, resolve, plain)


def _standard(node: ast.AST, resolve, plain: frozenset[str] = frozenset()) -> bool:
    """Whether every call in `node` is of the standard library (not `random`): a builtin (`str(ROOT)`), a method
    of what such a call returns (`Path(__file__).resolve()`), or one of the file's `plain` functions."""
    for call in ast.walk(node):
        if not isinstance(call, ast.Call):
            continue
        func = call.func
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Call):
            continue  # the call it is made on is checked in its turn
        qualified = resolve(func)
        if qualified is None and isinstance(func, ast.Name) and (func.id in BUILTIN_NAMES or func.id in plain):
            continue
        if (qualified or "").split(".", 1)[0] not in STANDARD_LIBRARY:
            return False
    return True


def _placement(call: ast.Call, value: ast.expr, parents: dict[ast.AST, ast.AST],
               tree: ast.Module) -> tuple[str, ast.stmt]:
    """("after", statement binding the seed's names) or ("before", the seeding statement)."""
    roots = {n.id for n in ast.walk(value) if isinstance(n, ast.Name)}
    reads = _read_paths(value)
    statement = call
    while not (isinstance(statement, ast.stmt) and _block_of(statement, parents) is not None):
        statement = parents[statement]
    current: ast.AST = statement
    while True:
        parent = parents.get(current)
        block = _block_of(current, parents)
        if block is not None:
            for earlier in reversed(block[: block.index(current)]):
                if _binds(earlier, inside=True, reads=reads) & roots:
                    return "after", earlier
        if parent is None or isinstance(parent, ast.Module):
            break
        if isinstance(parent, FUNCTION_TYPES):
            params = {a.arg for a in [*parent.args.posonlyargs, *parent.args.args, *parent.args.kwonlyargs]}
            if params & roots:
                return "before", _body_start(parent)
            return _global_binding(roots, tree) or ("before", statement)
        current = parent
    return "before", statement


def _global_binding(roots: set[str], tree: ast.Module) -> tuple[str, ast.stmt] | None:
    """The last module-level statement (also inside module-level if/with/try) binding one of `roots`; None when
    one of them is bound only elsewhere (a local of the function around a nested event handler: ignite's
    `args.seed + trainer.state.epoch`), so seed_all cannot use the expression at module level."""
    found, bound = None, set()
    todo = list(tree.body)
    while todo:
        statement = todo.pop(0)
        names = _binds(statement) | ({statement.name} if isinstance(statement, (*FUNCTION_TYPES, ast.ClassDef))
                                     else set())
        bound |= names
        if names & roots:
            found = statement
        elif isinstance(statement, (ast.If, ast.With, ast.Try)):
            for name in BLOCK_FIELDS:
                todo.extend(getattr(statement, name, []))
    if found is None or not roots <= bound | set(dir(builtins)):
        return None
    return "after", found


def _block_of(statement: ast.AST, parents: dict[ast.AST, ast.AST]) -> list[ast.stmt] | None:
    parent = parents.get(statement)
    if parent is None:
        return None
    for name in BLOCK_FIELDS:
        block = getattr(parent, name, None)
        if isinstance(block, list) and statement in block:
            return block
    return None


def _binds(statement: ast.stmt, inside: bool = False, reads: set[str] | None = None) -> set[str]:
    """Names a statement binds or assigns into (`x = ...`, `x.seed = ...`, imports), or may fill through a
    call made for its effect (`params.update(vars(args))`, `cfg.merge_from_file(path)`, `setattr(x, ...)`);
    with `inside`, also in the blocks of an `if`/`with`/`try`/loop it heads (`if args.seed is None:
    args.seed = ...`), not in nested functions. Given the dotted names the seed `reads` (`args.seed`), an
    attribute assigned that is none of them (`args.global_rank = dist.get_rank()`) binds nothing."""
    found: set[str] = set()
    todo: list[ast.AST] = [statement]
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            found |= {n.id for t in targets if reads is None or _touches(t, reads)
                      for n in ast.walk(t) if isinstance(n, ast.Name)}
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            found |= {(a.asname or a.name).split(".", 1)[0] for a in node.names}
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
            found |= _filled(node.value)
        elif inside and not isinstance(node, (*FUNCTION_TYPES, ast.ClassDef)):
            todo.extend(child for child in ast.iter_child_nodes(node) if isinstance(child, ast.stmt))
    return found


def _read_paths(value: ast.expr) -> set[str]:
    """The dotted names an expression reads, each as long as it goes (`args.seed + rank` -> args.seed, rank)."""
    paths, inner = set(), set()
    for node in ast.walk(value):
        if isinstance(node, ast.Attribute) and id(node) not in inner:
            path = _dotted(node)
            if path is not None:
                paths.add(path)
                inner |= {id(part) for part in ast.walk(node)}
    return paths | {n.id for n in ast.walk(value) if isinstance(n, ast.Name) and id(n) not in inner}


def _touches(target: ast.expr, reads: set[str]) -> bool:
    """Whether assigning `target` can change a value read by one of the dotted names `reads`: a plain name, a
    subscript, or an attribute on the path of one of them (`args.seed`, or `args` itself)."""
    path = _dotted(target) if isinstance(target, ast.Attribute) else None
    if path is None:
        return True
    return any(read == path or read.startswith(path + ".") or path.startswith(read + ".") for read in reads)


def _dotted(node: ast.expr) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    return ".".join([node.id, *reversed(parts)]) if isinstance(node, ast.Name) else None


def _filled(call: ast.Call) -> set[str]:
    """The names whose objects a call made as a statement may change: the receiver of a method
    (`params.update(...)`, `args.__dict__.update(...)`, `vars(args).update(...)`) and the objects it is given,
    also in a tuple or list (`setattr(x, ...)`, llama-cookbook's `update_config((train_config, fsdp_config),
    **kwargs)`); a builtin but `setattr` changes none of its arguments (`print(args)`)."""
    func = call.func
    found = set()
    if isinstance(func, ast.Attribute):
        target = func
        while isinstance(target, ast.Attribute):
            target = target.value
        if isinstance(target, ast.Call) and isinstance(target.func, ast.Name) and target.func.id == "vars" and target.args:
            target = target.args[0]
        found |= {target.id} if isinstance(target, ast.Name) else set()
    elif isinstance(func, ast.Name) and func.id in BUILTIN_NAMES and func.id != "setattr":
        return found
    for given in (*call.args, *(keyword.value for keyword in call.keywords)):
        given = given.value if isinstance(given, ast.Starred) else given
        items = given.elts if isinstance(given, (ast.Tuple, ast.List)) else [given]
        found |= {item.id for item in items if isinstance(item, ast.Name)}
    return found

"""MSP101 seed-missing: an entry script that trains or samples without ever seeding its generators."""

from __future__ import annotations

import ast
from collections.abc import Callable

from msprobe_rewriter import catalogue, entropy, opt_in, project, seeding
from msprobe_rewriter.assignments import is_main_guard
from msprobe_rewriter.conditions import Guard, condition_text, holding, truth
from msprobe_rewriter.context import (
    EVAL_NAME,
    FUNCTION_TYPES,
    FileContext,
    argument,
    iter_calls,
    keyword,
    target_name,
)
from msprobe_rewriter.late_seeding import FirstSeeding, LateDraws, code_text, is_trainer, position
from msprobe_rewriter.rules.base import Invalid, Rule

CONDITIONAL = ("seeding runs only when `{condition}`, which is false with the default arguments: seed "
               "unconditionally (or give the seed option a default value)")
PARENT_ONLY = ("`{spawn}` starts `{target}` in new processes, which re-import this file without running its `__main__` "
               "block: the seeding at line {line} runs in this parent process only, so the workers draw from "
               "unseeded generators: seed at the start of `{target}`")
SEED_FIRST = "call `transformers.set_seed(seed)` (or msprobe's `seed_all(seed)`) before"
COMPOSER_SEED_FIRST = ("call `composer.utils.reproducibility.seed_all(seed)` with the trainer's seed (or msprobe's "
                       "`seed_all(seed)`) before it, as Composer's documentation advises")
SEED_EARLIER = "seed before it (move the seeding up, or call msprobe's `seed_all(seed)` first)"
LATE_MODEL = ("`{call}(...)` initialises new weights{via} before `{seeder}` seeds (line {line}), so they differ run "
              "to run: {fix}")
LATE_DRAW = "`{call}(...)` draws{via} before `{seeder}` seeds (line {line}), from an unseeded generator: {fix}"
UNSEEDED = "this entry script trains or samples but never seeds its random number generators"
MAY_BE_UNSEEDED = ("{what} only when {condition}, a value the code tests for None and this script does not set: the "
                   "run may be unseeded; seed unconditionally (msprobe's `seed_all(seed)`), or make sure every config "
                   "gives it a value")
# The generators each framework's weights and operators draw from (MindSpore's initialisers use NumPy's).
FRAMEWORK_FAMILIES = {"torch": ("torch",), "mindspore": ("mindspore", "numpy")}
SEED_AT_STARTUP = ("call `seed_all(seed)` (msprobe), or `random.seed`, `np.random.seed` and `torch.manual_seed` / "
                   "`mindspore.set_seed`, at startup")
# mindformers/trainer/trainer.py seeds only `if self.config.seed and` the parallel mode is not (semi-)auto parallel.
MINDFORMERS_NOTE = ("(mindformers' `Trainer` seeds only from a truthy config `seed`, not 0, and never in "
                    "(semi-)auto parallel mode)")
# Stable-Baselines3's algorithms seed only through `seed=` (see catalogue.SB3_ALGORITHMS).
SB3_SEED = ("pass `seed=seed` to `{algorithm}(...)`, which seeds `random`, NumPy, torch, the env and its action space "
            "(Stable-Baselines3 seeds nothing without it)")
DRAWN_SEED = ("`{call}(...)` draws the seed itself, from a generator nothing has seeded yet, so every run seeds "
              "differently: give the seed option a default value instead of drawing one")


# mmengine runners built from a config: they seed from the config's `randomness`, else from an unseeded NumPy draw.
CONFIG_RUNNER_BUILDS = frozenset(name for name in catalogue.MMENGINE_RUNNER_BUILDS
                                 if name.endswith((".from_cfg", ".RUNNERS.build")))
CONFIG_RUNNER_MESSAGE = ("the mmengine runner this script builds from its config seeds with the config's "
                         "`randomness.seed`, and without one draws a seed from NumPy's unseeded generator, a new one "
                         "every run: pass `--cfg-options randomness.seed=1234 randomness.deterministic=True` (or set "
                         "them in the config), or call `seed_all(seed)` first")


def entry_location(ctx: FileContext) -> ast.AST:
    """Where a whole-script finding points: the first module-level training loop, else the main guard."""
    loops = [info.node for info in ctx.loops.values() if info.function is None and ctx.is_step_loop(info.node)]
    if loops:
        return header(min(loops, key=lambda n: (n.lineno, n.col_offset)))
    for stmt in ctx.tree.body:
        if isinstance(stmt, ast.If) and is_main_guard(stmt.test):
            return header(stmt)
    # a module-level `model.train(...)` (MindSpore Model), `trainer.train()`, or a call of a training function or
    # class of the file (`trainer = Trainer(...)`, whose methods step)
    training = ctx.stepping_functions() | seeding.own_training_classes(ctx)
    for stmt in ctx.tree.body:
        if not isinstance(stmt, (*FUNCTION_TYPES, ast.ClassDef)) and any(
                ctx.is_step_call(c) or ctx.is_trainer_run(c) or getattr(c.func, "id", None) in training
                for c in ast.walk(stmt) if isinstance(c, ast.Call)):
            return stmt
    return ctx.tree.body[0] if ctx.tree.body else ctx.tree


def header(stmt: ast.stmt) -> ast.AST:
    """A node spanning only the header of a compound statement (`for batch in loader`, `if ...`)."""
    last = getattr(stmt, "iter", None) or getattr(stmt, "test", None) or stmt
    return ast.Pass(lineno=stmt.lineno, col_offset=stmt.col_offset, end_lineno=last.end_lineno,
                    end_col_offset=last.end_col_offset)


class SeedMissing(Rule):
    code = "MSP101"
    name = "seed-missing"
    severity = "error"
    frameworks = ("pytorch", "mindspore", "python")
    message = f"{UNSEEDED}: {SEED_AT_STARTUP}"
    summary = ("Flags an entry script (an `if __name__ == \"__main__\":` guard, a module-level training loop, "
               "`Model.train`, a trainer's `train()`/`fit()`, a module-level call of a function of the file that "
               "trains, as tutorials run theirs, or module-level code building the project's training code, as "
               "MindSpore-GAN's train.py builds its own `TrainOneStepCell` of `from src.TrainOneStep import *`, or a "
               "class of the file whose methods train, mindnlp's blip2 finetuning `Trainer(...)`; a whole-script "
               "finding without a `__main__` guard or module-level loop points at that call) that trains (training steps, not counting gradients taken inside a `torch.autograd.Function`; mindtorch's `value_and_grad` and optimizers also under their former name `mindnlp.core`; an optimizer, a trainer, OpenMMLab 1.x's `train_detector(...)` (mmseg's `train_segmentor`, mmcls's `train_model`, ...), MindSpore's `Model.train` told by its keywords (`dataset_sink_mode=`, `callbacks=`: also of a model a project factory builds, mindediting's `create_trainer_by_name(...)`), MindSpore Reinforcement's `session.run(class_type=...)` (not given `is_train=False`) or `trainer.train(...)` of its `Session` or `Trainer` or a project's subclass of them (mindrl's `DQNSession`), a Stable-Baselines3 or sb3_contrib algorithm's `model.learn(...)` (`PPO`, `SAC`, `DQN`, ...; not one `PPO.load(...)` restored, whose saved seed is not known), or a function or class of "
               "another file of the project that runs training steps, as improved-diffusion's `TrainLoop`, itself or "
               "through the training functions it imports from further files, as WeNet's `Executor`; three files "
               "deep; also one the script hands to a launcher, fairseq's `call_main(cfg, main)`; a module that seeds itself is trusted to) or "
               "samples from weights it loads (torch draws, or a sampler method of the project's objects that draws in code the file does not show, guided diffusion's `diffusion.p_sample_loop(...)`, latent diffusion's `sampler.sample(...)`, but not one given `sampling=False`, nor the `sample(...)` of fairseq's hub models, which searches by beam unless given `sampling=True`; plus `torch.load`/`from_pretrained`/...; draws in a function that exports the model, `torch.onnx.export` or `torch.jit.trace`, are example inputs, not samples), or samples text with transformers' `model.generate(..., do_sample=...)` true with the default arguments (or `generation_config=GenerationConfig(do_sample=True)`; also in evaluation code: the sampled answers are what is scored; a file without a main guard doing so at module level, or in a function of the file called there, is such a script), but never "
               "seeds: not directly, "
               "not through a library seeder (`seed_everything`, `transformers.set_seed`, OpenMMLab's `set_random_seed`, ...) or a library class that seeds when built (Hugging Face's `Trainer` and its subclasses, in the script or in a project module it imports, `LightningCLI` unless given `seed_everything_default=False`, an mmengine runner given `randomness=dict(seed=s)`, a Stable-Baselines3 algorithm given a `seed=` that is not None (it seeds nothing without one: the message says to pass it; an option that is None by default is seeding under a condition that is false); one built from a config, `Runner.from_cfg(cfg)`, draws its seed from NumPy unless the config sets one, and trains when its `train()` is called), not by loading a SpeechBrain recipe's hparams with `load_hyperpyyaml` (recipes seed there, `!apply:speechbrain.utils.seed_everything`; a SpeechBrain `Brain` trains when its `fit()` is called), not by Megatron's `pretrain(...)`, which seeds with `--seed` before it trains, and not through a "
               "seeding helper imported from another file of the project (followed down its whole chain of project "
               "calls, dinov2's `main` -> `setup_and_build_model` -> `setup` -> `default_setup` -> "
               "`fix_random_seeds` four files down; a helper "
               "that cannot be found but is named like a seeder counts), and not by importing a project module "
               "that seeds at its top level, or that a module it imports runs in turn (a package's `__init__.py` and its "
               "imports, three modules deep: mindrl's `from mindspore_rl.algorithm.a2c import config` runs a2c.py's "
               "`np.random.seed(SEED)`). Seeding that a function undoes does not count: of a generator whose state "
               "it saved and puts back (`torch.set_rng_state(state)` after sampling with seeds of its own, "
               "sd-scripts' `sample_images`), or torch's in a `with torch.random.fork_rng():` block. `super().__init__("
               "...)` in a method of a class of the script runs its project base class's (torchtitan's forge "
               "example_train.py seeds there). In such a script, seeding only under a "
               "condition that is false with the default arguments (`if args.seed is not None:` with `--seed` "
               "defaulting to None, also where a project function given the script's parser defines it, sd-scripts' "
               "`train_util.add_training_arguments(parser)`; `if seed is not None:` in a function of the file every call of which passes such a "
               "value, or leaves a None default) is reported at that condition. A script whose every seeding in the default run tests for None a value read from an object that nothing here tells (`if cfg.seed is not None:`, a config loaded from a file; also inside the project helper it calls, mindediting's `init_env(cfg)`, reported at that call naming the helper's test) gets a warning that the run may be unseeded. A script whose only seeding draws a fresh seed every run "
               "(`random.seed()`, `torch.seed()`) is left to entropy-seed (MSP108), which points at that call: "
               "one finding per hazard. A script that seeds too late is reported at the first call that, before the "
               "default run's first seeding (nothing seeded earlier: not at module level or on import before the "
               "function runs, not in a function of the file that runs it), in the same straight-line code (no "
               "loop, branch other than the main guard, or `except` between them; a call under `if` branches is "
               "reported only when no such call is, naming the condition: at the info level when it is off with "
               "the default arguments, Qwen's `if training_args.use_lora:`, as a warning when the defaults do not "
               "tell) and in the same function or at module level, builds a model with new weights from a generator that seeding seeds (an `nn.Module`, "
               "Lightning module or MindSpore `Cell` of the file whose code builds a weighted layer such as "
               "`nn.Linear`/`nn.Dense` or draws; such a layer itself; `from_pretrained` of a transformers class "
               "whose head a base checkpoint lacks: sequence, token, image or audio classification, question "
               "answering, CTC...; `from_config`; a transformers model class built directly; PEFT's "
               "`get_peft_model` with a `LoraConfig` of random `init_lora_weights`) or draws (`torch.randint`, an "
               "in-place fill such as `torch.empty(n).normal_()`, "
               "`random.shuffle`, `np.random.permutation`, `dataset.shuffle()` or `train_test_split` without a "
               "seed), itself or in a function, class (also through a name bound to it, `dataset_cls = "
               "SupervisedDataset`) or `self.` method of the file it calls, followed three calls deep (FastChat's "
               "`make_supervised_data_module` builds a dataset whose `__init__` shuffles). An integer drawn only "
               "for a name of an identifier (`session_id = random.randint(0, 2**32)`, a `master_port`) is "
               "metadata, not data, weights or noise: it is not reported. A draw assigned to a seed (EDM's `seed = "
               "torch.randint(1 << 31, size=[])` when `--seed` is not given) is the run's seed: the advice is to give "
               "the seed option a default value. The seeding may be a seeding call, "
               "a function of the file that seeds, or a Hugging Face trainer, which seeds only when constructed "
               "(then only the model it is given counts, and `Trainer(model_init=...)` builds the model after "
               "seeding), or a Composer `Trainer(seed=...)`, likewise (the advice is Composer's "
               "`reproducibility.seed_all(seed)` first). A model given weights afterwards (`model.load_state_dict(...)`, "
               "`load_checkpoint(model, ...)`, `model = torch.load(...)`) is not reported. A causal or masked LM's "
               "`from_pretrained`, a tokenizer or `load_dataset` draws nothing. A TRL trainer given a random-init "
               "LoRA `peft_config=` (SFT, DPO, KTO, GRPO, RLOO, ..., and their subclasses such as GOLD; not "
               "`RewardTrainer`, which seeds first) is itself reported when it is the first seeding: it adds the LoRA "
               "matrices before its `__init__` seeds (through `Trainer.__init__`; PPO's with `torch.manual_seed`); a config made only under an `if` (`if args.use_lora:`), "
               "or trl's `get_peft_config(model_args)` (a LoraConfig only with `--use_peft`), names that condition. "
               "A module-level `trainer.train()` of a Hugging Face trainer or "
               "`trainer.fit(...)` of a Lightning or Composer one makes a file an entry script, as a main guard does. A script that "
               "seeds only in the parent process that `torch.multiprocessing.spawn` (or `start_processes`) starts a "
               "function of the file from is reported at that call: the new processes re-import the file without its "
               "`__main__` block and draw from fresh generators, so only seeding at module level or in the code the "
               "spawned function runs reaches them (the pattern of PyTorch's ImageNet example, MoCo and many "
               "ModelZoo scripts). A script training with mindformers' `Trainer` is told that it seeds only from a "
               "truthy config `seed` (mindrlhf's YAMLs set `seed: 0`) and never in (semi-)auto parallel mode. A "
               "project class whose methods seed none of the generators the script's framework draws from (torchrec's "
               "`Multihot`, `np.random.seed(0)` for its own lookup tables, in a torch script) does not count as the "
               "script seeding.")
    why = ("Without a seed, weight initialisation, data order, augmentation and dropout start from a different "
           "random state in every run, so no two runs (or the GPU and NPU runs you want to compare) compute the "
           "same numbers, and a precision difference cannot be told apart from noise. A seed behind an optional "
           "`--seed` flag is the same problem in disguise: the default run is unseeded. So is a seed set after the model "
           "is built or the data shuffled, a Hugging Face `Trainer` built after the model (it seeds in its "
           "constructor) or a TRL trainer adding LoRA matrices in its constructor before it seeds: the new weights "
           "(the whole model, a classifier head, LoRA matrices) and the data order have been drawn from a generator "
           "that every process seeds from OS entropy. Processes started by `mp.spawn` are fresh interpreters: the "
           "parent's seed does not reach them.")
    fix = ("Seed every generator once at startup, before building the model and the data pipeline: "
           "`from msprobe_runtime.pytorch import seed_all; seed_all(1234)` (or `random.seed(s)`, "
           "`np.random.seed(s)`, `torch.manual_seed(s)`; MindSpore: `mindspore.set_seed(s)`, which seeds `random`, "
           "NumPy and the data pipeline too, plus `mindspore.manual_seed(s)` for `mint` draws). "
           "Give `--seed` a default value instead of None. Seed before the first model or draw, not after. With a "
           "Hugging Face trainer, call "
           "`transformers.set_seed(training_args.seed)` before loading the model and the data, as transformers' "
           "example scripts do, or pass the trainer a `model_init=` function that builds the model; with a TRL "
           "trainer and `peft_config=`, call `set_seed` before building the trainer.")
    valid = (
        # It seeds whatever the config holds, and again with the config's seed when there is one.
        """\
import torch

if __name__ == "__main__":
    cfg = load_config("train.yaml")
    torch.manual_seed(0)
    if cfg.train.seed is not None:
        torch.manual_seed(cfg.train.seed)
    model = torch.nn.Linear(4, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    model(torch.randn(2, 4)).sum().backward()
    optimizer.step()
""",
        # `--seed` defaults to 42: the test for None holds in the default run.
        """\
import argparse

import torch

if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--seed", type=int, default=42)
    args = parser.parse_args()
    if args.seed is not None:
        torch.manual_seed(args.seed)
    model = torch.nn.Linear(4, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    model(torch.randn(2, 4)).sum().backward()
    optimizer.step()
""",
        # transformers' `generate` searches greedily unless `do_sample=` is true: `--temperature` is 0 by default.
        """\
import argparse

from transformers import AutoModelForCausalLM


def eval_model(args):
    model = AutoModelForCausalLM.from_pretrained(args.model_path)
    return model.generate(args.input_ids, do_sample=True if args.temperature > 0 else False)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--model-path", default="gpt2")
    parser.add_argument("--temperature", type=float, default=0)
    eval_model(parser.parse_args())
""",
        # mmdet's `set_random_seed` seeds `random`, NumPy and torch before `train_detector` trains.
        """\
from mmdet.apis import set_random_seed, train_detector

if __name__ == "__main__":
    set_random_seed(0)
    train_detector(model, datasets, cfg)
""",
        # The RNG state put back comes from a checkpoint, not from before the seeding: the seeding stays.
        """\
import torch


def setup(checkpoint):
    torch.manual_seed(0)
    state = torch.load(checkpoint)["rng_state"]
    torch.set_rng_state(state)


if __name__ == "__main__":
    setup("last.pt")
    model = torch.nn.Linear(4, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    model(torch.randn(2, 4)).sum().backward()
    optimizer.step()
""",
        # An `if` that raises ends the run: the seeding after it runs in every run that goes on.
        """\
import argparse

import torch

if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--name", default="")
    parser.add_argument("--resume", default="")
    args = parser.parse_args()
    if args.name and args.resume:
        raise ValueError("--name and --resume exclude each other")
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    model(torch.randn(2, 4)).sum().backward()
    optimizer.step()
""",
        # The option is given a value before the seeding helper checks it.
        """\
import argparse

import torch


def set_seed(seed=None):
    if seed is not None:
        torch.manual_seed(seed)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--seed", type=int)
    args = parser.parse_args()
    if args.seed is None:
        args.seed = 42
    set_seed(args.seed)
    model = torch.nn.Linear(4, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    model(torch.randn(2, 4)).sum().backward()
    optimizer.step()
""",
        # sd-scripts: a session id drawn before seeding names the run; the computation never uses it.
        """\
import random

import torch


def train(seed=0):
    session_id = random.randint(0, 2**32)
    torch.manual_seed(seed)
    model = torch.nn.Linear(4, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    model(torch.randn(2, 4)).sum().backward()
    optimizer.step()
    torch.save({"session_id": session_id, "model": model.state_dict()}, "out.pt")


if __name__ == "__main__":
    train()
""",
        # Each spawned worker seeds itself.
        """\
import torch
import torch.multiprocessing as mp


def main_worker(rank, seed):
    torch.manual_seed(seed)
    model = torch.nn.Linear(4, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    model(torch.randn(2, 4)).sum().backward()
    optimizer.step()


if __name__ == "__main__":
    mp.spawn(main_worker, nprocs=2, args=(0,))
""",
        # An mmengine runner seeds with its `randomness` seed; its model given as a config is built after that.
        """\
from mmengine.runner import Runner

if __name__ == "__main__":
    runner = Runner(model=dict(type="ResNet", depth=50), work_dir="work", train_dataloader=loader,
                    optim_wrapper=optim, train_cfg=dict(max_iters=10), randomness=dict(seed=0))
    runner.train()
""",
        # OpenMMLab's tools/test.py: a runner that only tests does not train.
        """\
from mmengine.config import Config
from mmengine.runner import Runner

if __name__ == "__main__":
    runner = Runner.from_cfg(Config.fromfile("configs/retinanet.py"))
    runner.test()
""",
        """\
import random

import numpy as np
import torch


def main():
    random.seed(0)
    np.random.seed(0)
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(10):
        optimizer.zero_grad()
        model(torch.randn(8, 4)).sum().backward()
        optimizer.step()


if __name__ == "__main__":
    main()
""",
        """\
import lightning as L
from torch import nn, optim


class LitModel(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(8, 1)

    def configure_optimizers(self):
        return optim.AdamW(self.parameters())


if __name__ == "__main__":
    L.seed_everything(42, workers=True)
    L.Trainer(max_epochs=1).fit(LitModel())
""",
        """\
import argparse

import torch
from utils import set_seed  # a project helper this check cannot see: its name says it seeds


def main(args):
    set_seed(args.seed)
    model = torch.nn.Linear(4, 2)
    opt = torch.optim.Adam(model.parameters())
    for x in torch.randn(10, 8, 4):
        opt.zero_grad()
        model(x).mean().backward()
        opt.step()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--seed", type=int, default=0)
    main(parser.parse_args())
""",
        # `--seed` has a default, so the condition holds in the default run.
        """\
import argparse

import torch

parser = argparse.ArgumentParser()
parser.add_argument("--seed", type=int, default=42)
parser.add_argument("--epochs", type=int, default=1)


def train(args):
    if args.seed is not None:
        torch.manual_seed(args.seed)
    model = torch.nn.Linear(4, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(args.epochs):
        optimizer.zero_grad()
        model(torch.ones(2, 4)).sum().backward()
        optimizer.step()


if __name__ == "__main__":
    train(parser.parse_args())
""",
        # The default run takes the `else` branch, which seeds.
        """\
import argparse

import torch


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seed", type=int)
    args = parser.parse_args()
    if args.seed is not None:
        torch.manual_seed(args.seed)
    else:
        torch.manual_seed(1234)
    model = torch.nn.Linear(4, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    optimizer.zero_grad()
    model(torch.ones(2, 4)).sum().backward()
    optimizer.step()


if __name__ == "__main__":
    main()
""",
        # Not an entry script: a library module whose caller seeds.
        """\
import torch


def train_one_epoch(model, loader, optimizer):
    for images, targets in loader:
        loss = torch.nn.functional.cross_entropy(model(images), targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
""",
        # An entry script that neither trains nor draws: nothing to seed.
        """\
import sys

import torch


def convert(src, dst):
    state = torch.load(src, map_location="cpu")
    torch.save({k.removeprefix("module."): v for k, v in state.items()}, dst)


if __name__ == "__main__":
    convert(sys.argv[1], sys.argv[2])
""",
        # Hugging Face's Trainer seeds every generator with `args.seed` (default 42) when constructed. Nothing
        # before it draws: a causal LM's head is in the checkpoint, PiSSA derives LoRA's weights from the model's
        # (SVD), and the shuffle has its seed.
        """\
from datasets import load_dataset
from peft import LoraConfig, get_peft_model
from transformers import AutoModelForCausalLM, AutoTokenizer, Trainer, TrainingArguments


def main():
    tokenizer = AutoTokenizer.from_pretrained("gpt2")
    model = AutoModelForCausalLM.from_pretrained("gpt2")
    model = get_peft_model(model, LoraConfig(init_lora_weights="pissa"))
    data = load_dataset("imdb", split="train").shuffle(seed=42)
    trainer = Trainer(model=model, args=TrainingArguments(output_dir="out"), train_dataset=data,
                      processing_class=tokenizer)
    trainer.train()


if __name__ == "__main__":
    main()
""",
        # `model_init=`: the Trainer builds the model after seeding; `set_seed` first seeds the classifier head.
        """\
from transformers import AutoModelForSequenceClassification, Trainer, TrainingArguments, set_seed


def build():
    return AutoModelForSequenceClassification.from_pretrained("bert-base-uncased", num_labels=2)


def main():
    Trainer(model_init=build, args=TrainingArguments(output_dir="out")).train()


def finetune(args):
    set_seed(args.seed)
    model = AutoModelForSequenceClassification.from_pretrained("bert-base-uncased", num_labels=2)
    Trainer(model=model, args=args).train()


if __name__ == "__main__":
    main()
""",
        # A Trainer subclass of the script's own seeds when constructed, as the Trainer does.
        """\
import torch
from transformers import AutoModelForCausalLM, Trainer, TrainingArguments


class LoggingTrainer(Trainer):
    def log(self, logs, start_time=None):
        super().log({**logs, "stage": "sft"}, start_time)


if __name__ == "__main__":
    model = AutoModelForCausalLM.from_pretrained("gpt2")
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    LoggingTrainer(model=model, args=TrainingArguments(output_dir="out"), optimizers=(optimizer, None)).train()
""",
        # LightningCLI calls `seed_everything(1234, workers=True)` before it builds the model.
        """\
from lightning.pytorch import LightningModule
from lightning.pytorch.cli import LightningCLI
from torch import nn, optim


class LitModel(LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(8, 1)

    def configure_optimizers(self):
        return optim.AdamW(self.parameters())


if __name__ == "__main__":
    LightningCLI(LitModel, seed_everything_default=1234)
""",
        # It seeds, but from OS entropy: entropy-seed (MSP108) reports `random.seed()` and `torch.seed()`.
        """\
import random

import torch

random.seed()
torch.seed()
model = torch.nn.Linear(4, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(10):
    optimizer.zero_grad()
    model(torch.randn(8, 4)).sum().backward()
    optimizer.step()
""",
        """\
import mindspore as ms
from mindspore import nn
from mindspore.train import Model

ms.set_seed(1)
net = nn.Dense(4, 2)
model = Model(net, nn.MSELoss(), nn.Momentum(net.trainable_params(), 0.01, 0.9))
model.train(1, train_dataset)
""",
        # Neither trains nor samples: its seeding, conditional or not, is its own business.
        """\
import argparse
import random


def main(args):
    if args.seed:
        random.seed(args.seed)
    print(random.choice(["a", "b"]))


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--seed", type=int, default=0)
    main(parser.parse_args())
""",
        # `mindspore.dataset.set_seed` is `mindspore.dataset.config.set_seed` (it seeds `random` and NumPy too).
        """\
import mindspore.dataset as ds
from mindspore import nn
from mindspore.train import Model

ds.set_seed(1)
net = nn.Dense(4, 2)
Model(net, nn.MSELoss(), nn.Momentum(net.trainable_params(), 0.01, 0.9)).train(1, train_dataset)
""",
        # The model built before the seed is given loaded weights; each run seeds, then builds its model.
        """\
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)


def main(args):
    model = Net()
    torch.manual_seed(args.seed)
    model.load_state_dict(torch.load(args.checkpoint))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for x in torch.randn(10, 8, 4):
        optimizer.zero_grad()
        model(x).sum().backward()
        optimizer.step()


def sweep(seeds):
    for seed in seeds:
        torch.manual_seed(seed)
        model = Net()
        torch.optim.SGD(model.parameters(), lr=0.1).step()


if __name__ == "__main__":
    main(None)
""",
        # A draw in the other branch than the seed, a seed inside a condition, a seed at module level before
        # `main()` runs: nothing is drawn before the first seeding.
        """\
import argparse
import random

import numpy as np
import torch

random.seed(0)


def main(args):
    if args.shuffle:
        order = np.random.permutation(10)
    else:
        np.random.seed(args.seed)
    model = torch.nn.Linear(4, 2)
    if args.seed is not None:
        torch.manual_seed(args.seed)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    optimizer.step()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--seed", type=int, default=0)
    main(parser.parse_args())
""",
        # A MindSpore loss cell holds no weights; `mindspore.set_seed` seeds before the network is built.
        """\
import mindspore as ms
from mindspore import nn
from mindspore.train import Model


class SmoothL1(nn.Cell):
    def construct(self, x, y):
        return (x - y).abs().mean()


loss = SmoothL1()
ms.set_seed(1)
net = nn.Dense(4, 2)
model = Model(net, loss, nn.Momentum(net.trainable_params(), 0.01, 0.9))
model.train(1, train_dataset)
""",
        # RewardTrainer calls `set_seed` before it adds the LoRA matrices.
        """\
from peft import LoraConfig
from trl import RewardConfig, RewardTrainer

trainer = RewardTrainer(model="Qwen/Qwen2-0.5B", args=RewardConfig(output_dir="out"), peft_config=LoraConfig(r=8))
trainer.train()
""",
        # Draws in a function that exports the model are example inputs to trace it with, not samples.
        """\
import torch


def export(checkpoint):
    model = torch.nn.Linear(80, 4)
    model.load_state_dict(torch.load(checkpoint))
    x = torch.rand(1, 80)
    torch.onnx.export(model, (x,), "model.onnx")


if __name__ == "__main__":
    export("model.pt")
""",
        # Gradients taken inside a torch.autograd.Function (icefall's whitening penalty) are no training step.
        """\
import torch


class Whiten(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        with torch.enable_grad():
            x = x.detach().requires_grad_()
            (x ** 2).mean().backward()
        return grad + x.grad


if __name__ == "__main__":
    print(Whiten.apply(torch.ones(3, requires_grad=True)))
""",
        # Megatron's set-up seeds random, NumPy, torch and the tensor-parallel generators with `args.seed`; its
        # `train_step` runs each step (MindSpeed-LLM's pretrain_gpt.py reaches both through `pretrain`).
        """\
import torch
from megatron.training.initialize import initialize_megatron
from megatron.training.training import train_step

if __name__ == "__main__":
    initialize_megatron()
    model = [torch.nn.Linear(4, 1)]
    optimizer = torch.optim.SGD(model[0].parameters(), lr=0.1)
    for _ in range(10):
        train_step(forward_step, data_iterator, model, optimizer, scheduler, config)
""",
        # Megatron's `pretrain` runs that set-up (seeding with `--seed`, 1234 by default), then trains.
        """\
from megatron.core.enums import ModelType
from megatron.training import pretrain

if __name__ == "__main__":
    pretrain(train_valid_test_datasets_provider, model_provider, ModelType.encoder_or_decoder, forward_step)
""",
        # fairseq's hub models' `sample(...)` searches by beam unless given `sampling=True`: nothing is drawn.
        """\
import torch
from fairseq.models.bart import BARTModel


@torch.no_grad()
def summarize(bart, lines, **kwargs):
    return bart.sample(lines, **kwargs)


if __name__ == "__main__":
    bart = BARTModel.from_pretrained("checkpoints", checkpoint_file="model.pt").eval()
    print(summarize(bart, ["text"], beam=4, lenpen=2.0))
""",
        # MindSpore Reinforcement's evaluation script: `run(..., is_train=False)` only evaluates.
        """\
from mindspore_rl.core import Session

if __name__ == "__main__":
    session = Session(config.algorithm_config)
    session.run(class_type=DQNTrainer, is_train=False)
""",
        # llm-foundry's train.py: Composer's `seed_all` before the model is built, the same seed for the Trainer.
        """\
from composer import Trainer
from composer.utils import reproducibility

if __name__ == "__main__":
    reproducibility.seed_all(17)
    model = build_composer_model(cfg.model)
    Trainer(model=model, train_dataloader=loader, max_duration="1ep", seed=17).fit()
""",
        # A Stable-Baselines3 algorithm given a seed seeds `random`, NumPy, torch, the env and its action space.
        """\
from stable_baselines3 import SAC

if __name__ == "__main__":
    model = SAC("MlpPolicy", "Pendulum-v1", seed=0, device="cuda")
    model.learn(total_timesteps=10_000)
""",
    )
    invalid = (
        # EDM's train.py: without `--seed` the seed training_loop seeds with is drawn from torch's unseeded generator.
        Invalid("""\
import torch


def training_loop(seed=0):
    torch.manual_seed(seed)
    model = torch.nn.Linear(2, 2)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for x in torch.randn(4, 8, 2):
        model(x).sum().backward()
        opt.step()


def main(opts):
    c = {}
    if opts.seed is not None:
        c["seed"] = opts.seed
    else:
        seed = torch.randint(1 << 31, size=[])
        c["seed"] = int(seed)
    training_loop(**c)


if __name__ == "__main__":
    main(parse())
""", lines=(18,), severity="warning"),
        # OpenMMLab 1.x's `train_detector` runs mmcv's training loop; nothing seeds.
        Invalid("""\
from mmdet.apis import train_detector

if __name__ == "__main__":
    train_detector(model, datasets, cfg)
""", lines=(3,)),
        # ... and samples when told to.
        Invalid("""\
from fairseq.models.speech_dlm import SpeechDLM

if __name__ == "__main__":
    model = SpeechDLM.from_pretrained("checkpoints", checkpoint_file="model.pt").eval()
    print(model.sample(["units"], sampling=True, sampling_topk=10))
""", lines=(3,)),
        # sd-scripts: the sampling helper seeds for each prompt and then puts the saved states back, so the one
        # seeding that outlives it is skipped with `--seed` at its default.
        Invalid("""\
import argparse

import torch


def sample_images(model, prompt_seed):
    rng_state = torch.get_rng_state()
    cuda_rng_state = torch.cuda.get_rng_state() if torch.cuda.is_available() else None
    torch.manual_seed(prompt_seed)
    model(torch.randn(1, 4))
    torch.set_rng_state(rng_state)
    if cuda_rng_state is not None:
        torch.cuda.set_rng_state(cuda_rng_state)


def train(args):
    if args.seed is not None:
        torch.manual_seed(args.seed)
    model = torch.nn.Linear(4, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(10):
        model(torch.randn(2, 4)).sum().backward()
        optimizer.step()
        sample_images(model, 42)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--seed", type=int, default=None)
    train(parser.parse_args())
""", lines=(17,)),
        # Seeding inside `fork_rng` ends with the block: the training after it is unseeded.
        Invalid("""\
import torch


def main():
    with torch.random.fork_rng():
        torch.manual_seed(1)
        preview = torch.randn(4)
    model = torch.nn.Linear(4, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    model(torch.randn(2, 4) + preview).sum().backward()
    optimizer.step()


if __name__ == "__main__":
    main()
"""),
        # guided diffusion's sampling scripts: the weights are loaded, and the project's sampler draws the noise.
        Invalid("""\
import torch
from guided_diffusion.script_util import create_model_and_diffusion


def main(args):
    model, diffusion = create_model_and_diffusion(**vars(args))
    model.load_state_dict(torch.load(args.model_path, map_location="cpu"))
    return diffusion.p_sample_loop(model, (args.batch_size, 3, 64, 64))


if __name__ == "__main__":
    main(parse())
""", lines=(11,)),
        # A tutorial: no main guard, the training function called at module level.
        Invalid("""\
import torch


def train_model(model, optimizer, num_epochs):
    for _ in range(num_epochs):
        model(torch.randn(4, 2)).sum().backward()
        optimizer.step()
    return model


model = torch.nn.Linear(2, 1)
model = train_model(model, torch.optim.SGD(model.parameters(), lr=0.1), num_epochs=3)
""", lines=(12,)),
        # The spawned workers re-import the file; the seeding under the main guard never runs in them.
        Invalid("""\
import torch
import torch.multiprocessing as mp


def main_worker(rank, world_size):
    model = torch.nn.Linear(4, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    model(torch.randn(2, 4)).sum().backward()
    optimizer.step()


if __name__ == "__main__":
    torch.manual_seed(0)
    mp.spawn(main_worker, nprocs=2, args=(2,))
""", lines=(14,)),
        # OpenMMLab's tools/train.py: the runner draws its seed from NumPy unless the config gives one.
        Invalid("""\
from mmengine.config import Config
from mmengine.runner import Runner

if __name__ == "__main__":
    runner = Runner.from_cfg(Config.fromfile("configs/retinanet.py"))
    runner.train()
""", lines=(4,)),
        # mmdet's and mmyolo's: a config naming its runner type is built by the package's registry, mmengine's child.
        Invalid("""\
from mmengine.config import Config
from mmengine.runner import Runner
from mmyolo.registry import RUNNERS

if __name__ == "__main__":
    cfg = Config.fromfile("configs/yolov5_s.py")
    if "runner_type" not in cfg:
        runner = Runner.from_cfg(cfg)
    else:
        runner = RUNNERS.build(cfg)
    runner.train()
""", lines=(5,)),
        # A runner trained at module level, no `__main__` guard: an entry script all the same.
        Invalid("""\
from mmengine.runner import Runner

runner = Runner(model=dict(type="ResNet"), work_dir="work", train_dataloader=loader, optim_wrapper=optim)
runner.train()
""", lines=(4,)),
        # mindtorch's torch API under its former name, mindnlp.core: its gradient function and optimizer train.
        Invalid("""\
from mindnlp.core import value_and_grad
from mindnlp.core.optim import AdamW

model = build()
updater = AdamW(model.parameters(), lr=5e-5)
grad_fn = value_and_grad(loss_fn, model.parameters())
for batch in loader:
    grad_fn(batch)
    updater.step()
""", lines=(7,)),
        # Module-level code builds a training class of the file and runs it, no `__main__` guard (mindnlp's
        # blip2_finetune_with_Food500Cap.py): an entry script, reported where the class is built.
        Invalid("""\
import mindspore as ms
from mindspore import nn


class Trainer:
    def __init__(self, net, optimizer):
        self.net, self.opt = net, optimizer
        self.grad_fn = ms.value_and_grad(net, None, optimizer.parameters)

    def train(self, epochs):
        for _ in range(epochs):
            loss, grads = self.grad_fn(ms.ops.ones((2, 4)))
            self.opt(grads)


net = nn.Dense(4, 1)
trainer = Trainer(net, nn.Adam(net.trainable_params()))
trainer.train(10)
""", lines=(17,)),
        # An mmengine runner seeds in its constructor, after the module it is given was built (a config dict is not).
        Invalid("""\
import torch
from mmengine.runner import Runner


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(4, 2)


if __name__ == "__main__":
    runner = Runner(model=Net(), work_dir="work", train_dataloader=loader, optim_wrapper=optim,
                    train_cfg=dict(max_iters=10), randomness=dict(seed=0))
    runner.train()
""", lines=(12,)),
        Invalid("""\
import torch
from torch import nn


def main():
    model = nn.Linear(4, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(10):
        loss = model(torch.randn(8, 4)).sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


if __name__ == "__main__":
    main()
""", lines=(15,)),
        # A module-level training loop; the only seeding happens inside DataLoader workers, derived from
        # torch's own (unseeded) state.
        Invalid("""\
import numpy as np
import torch as T
from torch.utils.data import DataLoader as DL, TensorDataset


def seed_worker(worker_id):
    np.random.seed(T.initial_seed() % 2**32)


model = T.nn.Linear(4, 1)
opt = T.optim.Adam(model.parameters())
loader = DL(TensorDataset(T.randn(64, 4)), batch_size=8, shuffle=True, worker_init_fn=seed_worker)
for (x,) in loader:
    opt.zero_grad()
    model(x).mean().backward()
    opt.step()
""", lines=(13,)),
        # Seeds only when --seed is given: argparse's default for `--seed` is None.
        Invalid("""\
import argparse
import random

import numpy as np
import torch


def main(args):
    if args.seed is not None:
        random.seed(args.seed)
        np.random.seed(args.seed)
        torch.manual_seed(args.seed)
    model = torch.nn.Linear(4, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    optimizer.zero_grad()
    model(torch.ones(2, 4)).sum().backward()
    optimizer.step()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--seed", type=int, help="random seed (optional)")
    main(parser.parse_args())
""", lines=(9,)),
        # Seeds only when the config gives a seed: the code tests it for None, and a YAML config may leave it null
        # (mindediting's init_env: 14 of its 23 training configs set `mindspore_seed: null`).
        Invalid("""\
import mindspore as ms
import yaml
from mindspore import nn
from mindspore.train import Model


def main(path):
    cfg = Config(yaml.safe_load(open(path)))
    if cfg.system.mindspore_seed is not None:
        ms.set_seed(cfg.system.mindspore_seed)
    net = nn.Dense(4, 2)
    Model(net, nn.MSELoss(), nn.Adam(net.trainable_params())).train(1, dataset, dataset_sink_mode=False)


if __name__ == "__main__":
    main("configs/train.yaml")
""", lines=(9,), severity="warning"),
        # The seeding helper checks its parameter, and its one call passes `--seed`, None by default
        # (DeepSpeedExamples' vit_finetuning/main_cifar.py).
        Invalid("""\
import argparse
import random

import torch


def set_seed(seed=None):
    if seed is not None:
        random.seed(seed)
        torch.manual_seed(seed)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seed", type=int)
    args = parser.parse_args()
    set_seed(args.seed)
    model = torch.nn.Linear(4, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    model(torch.randn(2, 4)).sum().backward()
    optimizer.step()


if __name__ == "__main__":
    main()
""", lines=(8,)),
        # The helper returns early without a seed: the rest of it runs only when `seed is not None`.
        Invalid("""\
import argparse

import torch


def set_seed(seed):
    if seed is None:
        return
    torch.manual_seed(seed)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--seed", type=int)
    set_seed(parser.parse_args().seed)
    model = torch.nn.Linear(4, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    model(torch.randn(2, 4)).sum().backward()
    optimizer.step()
""", lines=(7,)),
        # The file's seeding function runs only when --seed is given (Tacotron2's train.py in Ascend's ModelZoo).
        Invalid("""\
import argparse

import torch


def seed_everything(seed):
    torch.manual_seed(seed)
    torch.backends.cudnn.deterministic = True


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seed", type=int, help="set a seed of all randoms")
    args = parser.parse_args()
    if args.seed is not None:
        seed_everything(args.seed)
    model = torch.nn.Linear(4, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    model(torch.randn(2, 4)).sum().backward()
    optimizer.step()


if __name__ == "__main__":
    main()
""", lines=(15,)),
        # `if args.seed:` is false for the default 0.
        Invalid("""\
import argparse

import mindspore as ms
from mindspore import nn
from mindspore.train import Model


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if args.seed:
        ms.set_seed(args.seed)
    net = nn.Dense(4, 2)
    model = Model(net, nn.MSELoss(), nn.Momentum(net.trainable_params(), 0.01, 0.9))
    model.train(1, train_dataset)


if __name__ == "__main__":
    main()
""", lines=(12,)),
        # A MindSpore script training at module level, no main guard.
        Invalid("""\
from mindspore import nn
from mindspore.train import Model as M

net = nn.Dense(4, 2)
model = M(net, nn.MSELoss(), nn.Momentum(net.trainable_params(), 0.01, 0.9))
model.train(1, train_dataset)
""", lines=(6,)),
        # LightningCLI seeds unless told not to.
        Invalid("""\
from lightning.pytorch.cli import LightningCLI
from lightning.pytorch.demos.boring_classes import BoringDataModule, BoringModel

if __name__ == "__main__":
    LightningCLI(BoringModel, BoringDataModule, seed_everything_default=False)
""", lines=(4,)),
        # The Trainer seeds when built, after the classifier head has been drawn.
        Invalid("""\
from transformers import AutoModelForSequenceClassification, Trainer, TrainingArguments


def main():
    model = AutoModelForSequenceClassification.from_pretrained("bert-base-uncased", num_labels=2)
    trainer = Trainer(model=model, args=TrainingArguments(output_dir="out"))
    trainer.train()


if __name__ == "__main__":
    main()
""", lines=(5,)),
        # Data drawn before the Trainer seeds differs run to run (here in a helper of the file).
        Invalid("""\
import torch
from transformers import AutoModelForCausalLM, Trainer, TrainingArguments


def fake_batches(n):
    return [{"input_ids": torch.randint(0, 50257, (16,))} for _ in range(n)]


if __name__ == "__main__":
    model = AutoModelForCausalLM.from_pretrained("gpt2")
    data = fake_batches(64)
    Trainer(model=model, args=TrainingArguments(output_dir="out"), train_dataset=data).train()
""", lines=(11,)),
        # FastChat's train_flant5.py: a helper builds the dataset through a name bound to its class, whose
        # `__init__` shuffles in a method it calls (followed three calls deep).
        Invalid("""\
import random

import transformers


class SupervisedDataset:
    def __init__(self, n):
        self.items = self.load(n)

    def load(self, n):
        items = list(range(n))
        random.shuffle(items)
        return items


def make_data_module(n):
    dataset_cls = SupervisedDataset
    return dict(train_dataset=dataset_cls(n))


if __name__ == "__main__":
    model = transformers.AutoModelForCausalLM.from_pretrained("gpt2")
    data_module = make_data_module(64)
    transformers.Trainer(model=model, args=transformers.TrainingArguments("out"), **data_module).train()
""", lines=(23,)),
        # alpaca-lora: LoRA's A matrices are drawn when the adapter is added (the shuffle after it draws too;
        # the first draw is reported).
        Invalid("""\
import transformers
from datasets import load_dataset
from peft import LoraConfig, get_peft_model


def train(base_model="huggyllama/llama-7b"):
    model = transformers.AutoModelForCausalLM.from_pretrained(base_model)
    config = LoraConfig(r=8, lora_alpha=16, target_modules=["q_proj", "v_proj"], task_type="CAUSAL_LM")
    model = get_peft_model(model, config)
    train_data = load_dataset("json", data_files="alpaca_data.json")["train"].shuffle()
    trainer = transformers.Trainer(model=model, train_dataset=train_data,
                                   args=transformers.TrainingArguments(output_dir="out"))
    trainer.train()


if __name__ == "__main__":
    train()
""", lines=(9,)),
        # Qwen's finetune.py: LoRA is added under a switch that is off with the default arguments (its LoRA
        # shell scripts turn it on); the finding names the switch, at the info level.
        Invalid("""\
from dataclasses import dataclass, field

import transformers
from peft import LoraConfig, get_peft_model


@dataclass
class TrainingArguments(transformers.TrainingArguments):
    use_lora: bool = field(default=False)


def train():
    (training_args,) = transformers.HfArgumentParser(TrainingArguments).parse_args_into_dataclasses()
    model = transformers.AutoModelForCausalLM.from_pretrained("Qwen/Qwen-7B")
    if training_args.use_lora:
        lora_config = LoraConfig(r=64, lora_alpha=16, target_modules=["c_attn"])
        model = get_peft_model(model, lora_config)
    trainer = transformers.Trainer(model=model, args=training_args)
    trainer.train()


if __name__ == "__main__":
    train()
""", lines=(17,), severity="info"),
        # A draw under a condition whose value the defaults do not tell: a warning naming it.
        Invalid("""\
import random

import torch


def main(cfg):
    if cfg.data.shuffle_files:
        random.shuffle(cfg.data.files)
    random.seed(cfg.seed)
    torch.manual_seed(cfg.seed)
    model = torch.nn.Linear(4, 2)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for path in cfg.data.files:
        loss = model(torch.load(path)).sum()
        loss.backward()
        opt.step()


if __name__ == "__main__":
    main(load_config())
""", lines=(8,), severity="warning"),
        # Sampling script: draws noise but never seeds.
        Invalid("""\
import torch


@torch.no_grad()
def sample(model, steps=50):
    x = torch.randn(1, 3, 64, 64)
    for t in reversed(range(steps)):
        x = model(x, t) + 0.1 * torch.randn_like(x)
    return x


if __name__ == "__main__":
    model = torch.load("model.pt", weights_only=False)
    torch.save(sample(model), "sample.pt")
""", lines=(12,)),
        # Noise drawn with an in-place fill at import, before `main()` seeds.
        Invalid("""\
import torch

noise = torch.empty(8, 4).normal_()


def main():
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for x in noise:
        optimizer.zero_grad()
        model(x).sum().backward()
        optimizer.step()


if __name__ == "__main__":
    main()
""", lines=(3,)),
        # The model's weights are drawn before `torch.manual_seed` seeds.
        Invalid("""\
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)


def main(args):
    model = Net()
    torch.manual_seed(args.seed)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for x in torch.randn(10, 8, 4):
        optimizer.zero_grad()
        model(x).sum().backward()
        optimizer.step()


if __name__ == "__main__":
    main(None)
""", lines=(12,)),
        # A split drawn before the file's seeding helper seeds NumPy (torch's draw after it is seeded).
        Invalid("""\
import random

import numpy as np
import torch


def set_seed(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def main():
    order = np.random.permutation(100)
    set_seed(0)
    model = torch.nn.Linear(4, 2)
    torch.optim.SGD(model.parameters(), lr=0.1).step()


if __name__ == "__main__":
    main()
""", lines=(14,)),
        # MindSpore: `nn.Dense` draws its weights when built, before `mindspore.set_seed`.
        Invalid("""\
import mindspore as ms
from mindspore import nn
from mindspore.train import Model

net = nn.Dense(4, 2)
ms.set_seed(1)
model = Model(net, nn.MSELoss(), nn.Momentum(net.trainable_params(), 0.01, 0.9))
model.train(1, train_dataset)
""", lines=(5,)),
        # TRL's SFTTrainer adds the LoRA matrices of `peft_config=` before `Trainer.__init__` seeds; a module-level
        # `trainer.train()` makes this an entry script.
        Invalid("""\
from peft import LoraConfig
from trl import SFTConfig, SFTTrainer

peft_config = LoraConfig(r=16, lora_alpha=32, target_modules="all-linear")
trainer = SFTTrainer(model="Qwen/Qwen2-0.5B", args=SFTConfig(output_dir="out"), peft_config=peft_config)
trainer.train()
""", lines=(5,)),
        # LLaVA's eval scripts: `generate` samples each answer (`--temperature` 0.2 by default) from torch's
        # unseeded generator, so the scored answers change from run to run.
        Invalid("""\
import argparse

from transformers import AutoModelForCausalLM


def eval_model(args):
    model = AutoModelForCausalLM.from_pretrained(args.model_path)
    return model.generate(args.input_ids, do_sample=True if args.temperature > 0 else False)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--model-path", default="gpt2")
    parser.add_argument("--temperature", type=float, default=0.2)
    eval_model(parser.parse_args())
""", lines=(11,)),
        # qlora's guanaco_generate.py: no main guard, but it samples when run (a function of the file called at module
        # level generates with `do_sample=True`)
        Invalid("""\
from transformers import AutoModelForCausalLM, GenerationConfig

model = AutoModelForCausalLM.from_pretrained("gpt2")


def generate(prompt_ids):
    return model.generate(prompt_ids, generation_config=GenerationConfig(do_sample=True, top_p=0.9))


generate(None)
""", lines=(1,)),
        # trl's GOLDTrainer is an SFTTrainer (trl.experimental.gold): the same LoRA matrices, drawn before it seeds.
        Invalid("""\
from peft import LoraConfig
from trl.experimental.gold import GOLDConfig, GOLDTrainer

trainer = GOLDTrainer(model="Qwen/Qwen2-0.5B", args=GOLDConfig(output_dir="out"), peft_config=LoraConfig(r=8))
trainer.train()
""", lines=(4,)),
        # A LoRA config made only under an option (trl's openenv examples): info, naming the option.
        Invalid("""\
import argparse

from peft import LoraConfig
from trl import GRPOConfig, GRPOTrainer

parser = argparse.ArgumentParser()
parser.add_argument("--use-lora", action="store_true")
args = parser.parse_args()
peft_config = None
if args.use_lora:
    peft_config = LoraConfig(r=16, lora_alpha=32, target_modules="all-linear")
trainer = GRPOTrainer(model="Qwen/Qwen2-0.5B", reward_funcs=[], args=GRPOConfig(output_dir="out"),
                      peft_config=peft_config)
trainer.train()
""", lines=(12,), severity="info"),
        # trl's `get_peft_config(model_args)` returns a LoraConfig only with `--use_peft` (trl/scripts/sft.py): info.
        Invalid("""\
from trl import ModelConfig, ScriptArguments, SFTConfig, SFTTrainer, TrlParser, get_peft_config

if __name__ == "__main__":
    script_args, training_args, model_args = TrlParser((ScriptArguments, SFTConfig, ModelConfig)).parse_args_and_config()
    trainer = SFTTrainer(model=model_args.model_name_or_path, args=training_args, peft_config=get_peft_config(model_args))
    trainer.train()
""", lines=(5,), severity="info"),
        # A module-level Lightning script without a main guard that never seeds.
        Invalid("""\
import lightning as L
from torch import nn, optim


class LitModel(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(8, 1)

    def configure_optimizers(self):
        return optim.AdamW(self.parameters())


trainer = L.Trainer(max_epochs=1)
trainer.fit(LitModel())
""", lines=(15,)),
        # mindrl's examples: a project subclass of MindSpore Reinforcement's Session runs the trainer's episodes.
        Invalid("""\
from mindspore_rl.core import Session


class DQNSession(Session):
    pass


if __name__ == "__main__":
    session = DQNSession(config.algorithm_config)
    session.run(class_type=DQNTrainer, episode=650)
""", lines=(8,)),
        # mindediting: a project factory builds the MindSpore Model; Model.train's keywords tell its `train`.
        Invalid("""\
import mindspore
from mindediting import create_trainer_by_name

if __name__ == "__main__":
    trainer = create_trainer_by_name(cfg.model.name, net, loss, optimizer, cfg)
    trainer.train(cfg.epoch_size, loader_train, dataset_sink_mode=True, callbacks=callbacks)
""", lines=(4,)),
        # mindrlhf's run_dpo.py: mindformers' Trainer seeds only `if self.config.seed` (its YAMLs set 0) and not in
        # (semi-)auto parallel mode, so it is no seeding; the message says so.
        Invalid("""\
from mindformers import MindFormerConfig, Trainer

if __name__ == "__main__":
    config = MindFormerConfig("run_dpo.yaml")
    trainer = Trainer(args=config, task="text_generation", train_dataset=dataset)
    trainer.train()
""", lines=(3,)),
        # Composer's Trainer seeds only when built: the model it is given drew its weights before.
        Invalid("""\
import torch
from composer import Trainer

if __name__ == "__main__":
    model = torch.nn.Linear(2, 2)
    trainer = Trainer(model=model, train_dataloader=loader, max_duration="1ep", seed=17)
    trainer.fit()
""", lines=(5,)),
        # Stable-Baselines3 seeds only through the algorithm's `seed=`; `learn()` trains (a module-level script).
        Invalid("""\
import gymnasium as gym
from stable_baselines3 import PPO

env = gym.make("CartPole-v1")
model = PPO("MlpPolicy", env, verbose=1)
model.learn(total_timesteps=10_000)
""", lines=(6,)),
        # Its `seed=args.seed` with `--seed` None by default: SB3 seeds nothing then (reported at the seed).
        Invalid("""\
import argparse

from stable_baselines3 import DQN

if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--seed", type=int, default=None)
    args = parser.parse_args()
    DQN("MlpPolicy", "CartPole-v1", seed=args.seed).learn(total_timesteps=10_000)
""", lines=(9,)),
    )

    def finish(self) -> None:
        ctx = self.ctx
        if not (ctx.is_entry_script() or _samples_when_run(ctx)):
            return
        facts = seeding.analyse(ctx)
        verdict = facts.default_run(lambda e: bool(e.summary.families) and e.function not in facts.worker_init
                                    and not self._class_seeding_for_itself(e))
        if not verdict.pinned and any(found.global_seed for found in entropy.analyse(ctx)):
            return  # it seeds, but from entropy (`random.seed()`, `torch.seed()`): entropy-seed reports that
        report_whole_script(self, facts, verdict, CONDITIONAL, _library_message(ctx))
        report_parent_only(self, facts, lambda e: bool(e.summary.families) and e.function not in facts.worker_init,
                           PARENT_ONLY)
        if verdict.pinned:
            self._report_unsure(facts)
            self._seeded_late(facts)

    def _report_unsure(self, facts: seeding.FileSeeding) -> None:
        """Warn when the default run seeds only if a value the code tests for None is set, which nothing here tells
        (`seeding.FileSeeding.unsure_run`): at that test, or at the call of the project helper that tests it."""
        found = facts.unsure_run(lambda e: bool(e.summary.families) and e.function not in facts.worker_init
                                 and not self._class_seeding_for_itself(e))
        if found is None or not facts.random_work:
            return
        effect, test = found
        if test is not None:
            self.report(test, MAY_BE_UNSEEDED.format(what="seeding runs", condition=f"`{condition_text(test)}`"),
                        severity="warning")
        else:
            test, file = effect.summary.unsure_when
            self.report(effect.node, MAY_BE_UNSEEDED.format(
                what=f"`{code_text(effect.node)}` seeds", condition=f"`{condition_text(test)}` ({file}:{test.lineno})"),
                severity="warning")

    def _class_seeding_for_itself(self, effect: seeding.Effect) -> bool:
        """Whether `effect` is a project class built whose methods seed none of the generators the script's
        frameworks draw from (torchrec's dlrm_main.py builds `Multihot`, whose lookup-table builder calls
        `np.random.seed(0)` for its own tables; the torch model stays unseeded): the class's own business."""
        frameworks = {family for root, families in FRAMEWORK_FAMILIES.items() if self.ctx.imports.imports_root(root)
                      for family in families}
        if not frameworks or effect.summary.families & frameworks or not isinstance(effect.node, ast.Call):
            return False
        local = project.local_imports(project.import_statements(self.ctx.tree.body))
        return any(name in module.classes for _, name, module in project.reached(
            [effect.node], local, self._defined(), project.file_folder(self.ctx.path)))

    def _defined(self) -> set[str]:
        return {node.name for node in self.ctx.tree.body if isinstance(node, (*FUNCTION_TYPES, ast.ClassDef))}

    def _seeded_late(self, facts: seeding.FileSeeding) -> None:
        """Report the first call that builds a model with new weights, or draws, before the default run first
        seeds: in the straight-line code of the function (or module level) that seeds first, before that seeding,
        or a TRL trainer that adds random LoRA matrices before it seeds."""
        late = LateDraws(self.ctx)
        if not late.anywhere():
            return
        seeds = [effect for effect in facts.effects if effect.summary.families
                 and effect.function not in facts.worker_init and facts.skipping_guard(effect) is None]
        order = FirstSeeding(late, seeds)
        for scope in (self.ctx.tree, *(node for node in ast.walk(self.ctx.tree) if isinstance(node, FUNCTION_TYPES))):
            if isinstance(scope, FUNCTION_TYPES) and EVAL_NAME.search(scope.name):
                continue  # a test reseeding before it compares two models: the draws before are its inputs
            points = order.first(scope)
            if points and (late.straight(points[0][0], scope) or is_trainer(self.ctx, points[0][0])):
                self._report_late(late, scope, points)

    def _report_late(self, late: LateDraws, scope: ast.AST, points: list[tuple[ast.AST, frozenset[str]]]) -> None:
        """Report in `scope`, whose first seeding point (`points`: all of them, in source order) is the default
        run's first seeding, the first call before it that draws from a generator a later point seeds: the first
        in straight-line code, else the first under `if` branches (with their condition)."""
        ctx, first = self.ctx, points[0][0]
        trainer = is_trainer(ctx, first)
        model = argument(first, 0, "model") if trainer and keyword(first, "model_init") is None else None
        end = (first.end_lineno, first.end_col_offset)
        guarded = None
        for call in sorted(iter_calls(scope), key=position):
            guards = late.branches(call, scope)
            if call is first or (call.end_lineno, call.end_col_offset) > end or guards is None \
                    or guards and guarded is not None:
                continue
            found = late.first(call, late.builds(call, model) if trainer else True)
            if found is None or found[0] == "model" and late.loaded(call, scope) or late.unused(call, points):
                continue
            kind, family, via = found
            kind = "seed" if kind == "draw" and not via and _names_a_seed(late.statement(call)) else kind
            seeder = next((node for node, families in points if family in families), None)
            if seeder is None or not (late.straight(seeder, scope) or seeder is first):
                continue
            late_call = (call, kind, via, seeder, trainer and seeder is first, guards)
            if not guards:
                self._report_one(*late_call)
                return
            guarded = late_call
        adapter = keyword(first, "peft_config") if trainer else None
        lora = late.random_lora(adapter, first) if adapter is not None \
            and ctx.call_qualname(first) in catalogue.TRL_PEFT_BEFORE_SEED else None
        if lora is not None:
            self._report_one(first, "model", " (the LoRA matrices of its `peft_config=`)", first, True, lora,
                             seeder_text=f"{condition_text(first.func)}.__init__")  # PPO's: torch.manual_seed
        elif guarded is not None:
            self._report_one(*guarded)

    def _report_one(self, call: ast.Call, kind: str, via: str, seeder: ast.AST, trainer: bool,
                    guards: list[Guard] = (), seeder_text: str | None = None) -> None:
        """Report a late call; one under `if` branches names their condition, at the info level when it is off
        with the default arguments, as a warning when that is unknown."""
        composer = trainer and self.ctx.call_qualname(seeder) in catalogue.COMPOSER_TRAINERS  # no `model_init=`
        fix = COMPOSER_SEED_FIRST if composer else SEED_FIRST + " it" if trainer else SEED_EARLIER
        if kind == "model" and trainer and not composer and seeder is not call:
            fix += ", or build the model in the trainer's `model_init=`"
        text = LATE_MODEL if kind == "model" else DRAWN_SEED if kind == "seed" else LATE_DRAW
        message = text.format(call=condition_text(call.func), via=via, line=seeder.lineno,
                              seeder=seeder_text or code_text(seeder), fix=fix)
        off = next(filter(None, (opt_in.off_by_default(self.ctx, guard) for guard in guards)), None)
        unknown = [guard for guard in guards if truth(guard[0], seeding.analyse(self.ctx).lookup) is None]
        if off is not None:
            self.report(call, f"{message} (only when `{condition_text(off)}`: off with the default arguments)",
                        severity="info")
        elif unknown:
            self.report(call, f"{message} (when `{condition_text(holding(unknown[-1]))}`)", severity="warning")
        else:
            self.report(call, message)


def _library_message(ctx: FileContext) -> str | None:
    """The message for a script that builds a library runner or trainer that seeds only sometimes, else None."""
    calls = [node for node in ast.walk(ctx.tree) if isinstance(node, ast.Call)]
    if any(ctx.call_qualname(call) in CONFIG_RUNNER_BUILDS for call in calls):
        return CONFIG_RUNNER_MESSAGE
    if any(ctx.imports.resolve_any(call.func) in catalogue.MINDFORMERS_TRAINERS for call in calls):
        return f"{UNSEEDED} {MINDFORMERS_NOTE}: {SEED_AT_STARTUP}"
    algorithm = next((call for call in calls if ctx.built_qualname(call) in catalogue.SB3_ALGORITHMS), None)
    if algorithm is not None:
        return f"{UNSEEDED}: {SB3_SEED.format(algorithm=condition_text(algorithm.func))}"
    return None


def _samples_when_run(ctx: FileContext) -> bool:
    """Whether a file without a main guard samples text with `generate(do_sample=...)` at module level, or in a
    function of the file called there (qlora's examples/guanaco_generate.py): a script, run rather than imported."""
    if f".{catalogue.HF_GENERATE}(" not in ctx.source:
        return False
    generates = seeding.analyse(ctx).generates
    return None in generates or bool(generates & ctx.module_level_calls)


def _names_a_seed(statement: ast.AST | None) -> bool:
    """Whether a statement assigns a seed (`seed = torch.randint(1 << 31, size=[])`, EDM's when `--seed` is not given)."""
    targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target] \
        if isinstance(statement, ast.AnnAssign) else []
    return any("seed" in (target_name(target) or "").lower() for target in targets)


def report_whole_script(rule: Rule, facts: seeding.FileSeeding, verdict: seeding.Verdict, conditional: str,
                        message: str | None = None, trusted: seeding.Trusted = seeding.seeds,
                        at: ast.AST | None = None) -> None:
    """Report an entry script that trains or samples and pins nothing (a project module it trains through that
    pins what `trusted` accepts is trusted to): at the condition that skips its pinning code, or at `at`, else
    at the script (with `message`, else the rule's)."""
    if verdict.pinned or not facts.needs(trusted):
        return
    if verdict.skipped_by is not None:
        rule.report(verdict.skipped_by, conditional.format(condition=condition_text(verdict.skipped_by)))
    else:
        rule.report(at or entry_location(rule.ctx), message)


def report_parent_only(rule: Rule, facts: seeding.FileSeeding, wanted: Callable[[seeding.Effect], bool],
                       message: str, trusted: seeding.Trusted = seeding.seeds) -> None:
    """Report the first `mp.spawn` of a file whose pinning code (the effects `wanted` accepts) all runs in the
    parent process only, where the spawned processes never run it (`trusted`: see `report_whole_script`)."""
    if not facts.spawned or not facts.needs(trusted):
        return
    pinning = [effect for effect in facts.effects if wanted(effect)]
    if pinning and not any(facts.runs_in_workers(effect) for effect in pinning):
        call, target = facts.spawned[0]
        rule.report(call, message.format(spawn=condition_text(call.func), target=target, line=pinning[0].node.lineno))

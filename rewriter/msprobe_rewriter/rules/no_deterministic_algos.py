"""MSP104 no-deterministic-algos: a PyTorch or MindSpore entry script that never asks for deterministic
kernels."""

from __future__ import annotations

import ast
from collections.abc import Callable

from msprobe_rewriter import catalogue, project, seeding
from msprobe_rewriter.conditions import condition_text
from msprobe_rewriter.context import FileContext
from msprobe_rewriter.imports import ImportTracker
from msprobe_rewriter.late_seeding import code_text
from msprobe_rewriter.rules.base import Invalid, Rule
from msprobe_rewriter.rules.dist_no_deterministic_comm import (
    communicates_over_hccl,
    megatron_lacks_deterministic_mode,
)
from msprobe_rewriter.rules.seed_missing import report_parent_only, report_whole_script

# Packages that train with PyTorch (transformers' and TRL's trainers included: a script may import nothing else).
PYTORCH_ROOTS = ("torch", "torchvision", "torch_npu", "lightning", "pytorch_lightning", "deepspeed",  # torch itself,
                 "timm", "accelerate", "transformers", "trl", "mmengine", "speechbrain",  # then libraries on it
                 "detectron2", "megatron", "composer")
TORCH_ITSELF = 6
CONDITIONAL = ("deterministic kernels are switched on only when `{condition}`, which is false with the "
               "default arguments: switch them on unconditionally while comparing runs")
OPT_IN = ("{what} only when {flag} is true, an opt-in that this script does not turn on (determinism options are "
          "usually off by default: they slow training): unless every run sets it, switch them on unconditionally "
          "while comparing runs")
PARENT_ONLY = ("`{spawn}` starts `{target}` in new processes, which re-import this file without running its "
               "`__main__` block: deterministic kernels are switched on (line {line}) in this parent process only, "
               "and the workers compute with the default kernels: switch them on at the start of `{target}`")
ASCEND_CUDNN_MESSAGE = ("this entry script runs on Ascend (torch_npu), where `cudnn.deterministic` does "
                        "nothing: call `torch.use_deterministic_algorithms(True)`, which torch_npu honours, or "
                        "`seed_all(seed, mode=True)`")
ASCEND_MESSAGE = ("this entry script runs on Ascend (torch_npu) and never turns on deterministic algorithms: call "
                  "`torch.use_deterministic_algorithms(True)`, which torch_npu honours (cuDNN's flags do nothing "
                  "there), or `seed_all(seed, mode=True)`")
CUDNN_ONLY_MESSAGE = ("cuDNN's flag is this script's only determinism switch: it fixes convolutions, but the other "
                      "CUDA kernels (`gather`/`index_select` backward, `scatter_add`, `index_add`, cuBLAS reductions) "
                      "still sum in a different order every run: also call `torch.use_deterministic_algorithms(True)` "
                      "(with `CUBLAS_WORKSPACE_CONFIG=:4096:8`), or `seed_all(seed, mode=True)`")
MEGATRON_MESSAGE = ("Megatron's set-up (`{call}`) seeds but leaves deterministic kernels off unless `--deterministic-mode` "
                    "is passed: pass `--deterministic-mode` (Megatron then calls `torch.use_deterministic_algorithms(True)`"
                    " and sets, or requires, a fixed `NCCL_ALGO`; recent releases also set `CUBLAS_WORKSPACE_CONFIG` "
                    "and `NVTE_ALLOW_NONDETERMINISTIC_ALGO=0`), or call `seed_all(seed, mode=True)` first")
MEGATRON_FORK_MESSAGE = ("`{call}` is the project's own Megatron, which has no `--deterministic-mode` option and leaves "
                         "deterministic kernels off: call `seed_all(seed, mode=True)` before it (deterministic "
                         "algorithms, `CUBLAS_WORKSPACE_CONFIG`, HCCL determinism), and on NCCL set "
                         "`os.environ[\"NCCL_ALGO\"] = \"Ring\"` before communication starts")
COMPOSER_MESSAGE = ("{trainer} leaves deterministic kernels off unless given "
                    "`deterministic_mode=True`: pass it (Composer then calls `torch.use_deterministic_algorithms(True)`, "
                    "sets `cudnn.deterministic` and `CUBLAS_WORKSPACE_CONFIG=:4096:8`), and call "
                    "`reproducibility.configure_deterministic_mode()` first for what runs before the trainer is built")
MINDSPORE_MESSAGE = ("this MindSpore entry script never turns on deterministic computation: call "
                     "`mindspore.set_deterministic(True)` (it also sets HCCL_DETERMINISTIC), or "
                     "`seed_all(seed, mode=True)`")


class NoDeterministicAlgos(Rule):
    code = "MSP104"
    name = "no-deterministic-algos"
    severity = "warning"
    frameworks = ("pytorch", "mindspore")
    message = ("this PyTorch entry script never turns on deterministic algorithms: call "
               "`torch.use_deterministic_algorithms(True)` (with `CUBLAS_WORKSPACE_CONFIG=:4096:8`) and set "
               "`torch.backends.cudnn.deterministic = True`, or `seed_all(seed, mode=True)`")
    summary = ("Flags a PyTorch entry script (`__main__` guard, module-level training loop or trainer run, or "
               "module-level code building the project's training code) that trains or "
               "samples from loaded weights (as seed-missing decides) but never calls `torch.use_deterministic_algorithms(True)`, never sets "
               "`torch.backends.cudnn.deterministic = True`, and calls no helper that does (msprobe's "
               "`seed_all(..., mode=True)`, `transformers.enable_full_determinism`, `set_seed(..., "
               "deterministic=True)`, Lightning's `Trainer(deterministic=True)`, Hugging Face's "
               "`TrainingArguments(full_determinism=True)`, an mmengine runner's `randomness=dict(..., deterministic=True)`, "
               "SpeechBrain's `seed_everything(..., deterministic=True)`, mmengine's `set_random_seed(..., "
               "deterministic=True)` (mmcv's, mmdet's, mmseg's and mmcls's set cuDNN's flags only), Composer's "
               "`Trainer(deterministic_mode=True)` and `reproducibility.configure_deterministic_mode()`, "
               "or a project helper that does one of these; a script "
               "that imports only transformers, TRL, mmengine, SpeechBrain, Megatron, Composer or detectron2 (whose "
               "`DefaultTrainer`, "
               "`SimpleTrainer` and `AMPTrainer` train, subclasses included) counts as PyTorch). A MindSpore entry script likewise (one that "
               "imports mindnlp or mindtorch too, or is a module of a package whose `__init__` does, run with `python -m` as its "
               "relative imports require, mindnlp's own `ocr/finetune/train_full.py`: their `torch` runs on MindSpore, and their "
               "`torch.use_deterministic_algorithms(True)` switches MindSpore's on, so it counts), when it never calls "
               "`mindspore.set_deterministic(True)` or `set_context(deterministic=\"ON\")` (or msprobe's MindSpore "
               "`seed_all(..., mode=True)`). A switch behind a flag that is off by default is reported at its "
               "condition, also one a helper is given as an option (`set_random_seed(seed, deterministic="
               "args.deterministic)`, of a library or of the project), and a config field the script's function takes "
               "from a dataclass of the project (lerobot's `def train(cfg: TrainPipelineConfig)` with `if "
               "cfg.cudnn_deterministic:`, False by default). A switch behind a flag named for determinism whose value "
               "nothing here tells (`if cfg[\"deterministic\"]:` of a config read from a file; in a project helper, "
               "OpenRLHF's `if self.full_determinism:` in `strategy.setup_distributed()`, torchtitan's `if "
               "debug_config.deterministic:`) gets a warning at that flag or at the call of the helper: such options "
               "are off unless a run sets them. A class of the script that a project base class gives its training "
               "loop trains when built (LLaMA-Factory's v1 `SFTTrainer(BaseTrainer)`), and `super().__init__(...)` in "
               "its methods runs the base's (torchtitan's forge example_train.py). OpenMMLab 1.x's `train_detector(...)` (mmseg's "
               "`train_segmentor`, mmcls's `train_model`, ...) trains. A script that names no framework but trains through a project module (improved-"
               "diffusion's `image_train.py` and its `TrainLoop`) is checked for the framework that module "
               "imports; a training module that switches deterministic kernels on itself is trusted (one that only seeds, as "
               "fairseq's `Trainer`, is not; a project function the script hands to a launcher, fairseq's "
               "`call_main(cfg, main)`, counts as called; a name bound to a project class in each branch of an if/elif, "
               "Time-Series-Library's `Exp = Exp_Long_Term_Forecast`, trains when one of them does, and a project "
               "factory returning `REGISTRY.get(key)(...)`, BasicSR's `build_model(opt)`, builds the classes "
               "registered there with `@REGISTRY.register()`). Megatron's `pretrain(...)` seeds (with `--seed`) and trains, "
               "and its set-up (also `initialize_megatron`) switches deterministic kernels on only under "
               "`--deterministic-mode`: a script calling it is reported at that call, with that advice; where `megatron` is "
               "the project's own copy and its argument files declare no such option (gpt-neox's fork, configured by "
               "YAML keys), the advice is `seed_all(seed, mode=True)` and a fixed `NCCL_ALGO` instead. A script "
               "building Composer's `Trainer` without `deterministic_mode=True` is reported at that call, with that "
               "advice; one that trains through a project module building it (llm-foundry's scripts/train/train.py) "
               "gets that advice too (a function running a library trainer's loop, `trainer.fit()`, trains). A "
               "script that switches them on only in the parent process that `torch.multiprocessing.spawn` (or "
               "`start_processes`) starts a function of the file from is reported at that call: the new processes "
               "re-import the file without its `__main__` block, so only switches at module level or in the code "
               "the spawned function runs reach them. In a script that runs on Ascend (it imports torch_npu, or uses "
               "`torch.npu` or `.npu()` and names no CUDA, as ModelZoo's scripts for torch 1.5 do), "
               "`cudnn.deterministic = True` does not count: CANN's kernels never read cuDNN's flags; elsewhere a "
               "script whose only switch is that flag gets information at it (the other CUDA kernels stay "
               "non-deterministic).")
    why = ("Seeding pins the random numbers, not the arithmetic: many CUDA kernels (atomics in scatter/index_add "
           "backward, cuBLAS split-K reductions, cuDNN algorithm choice) sum in a different order on every run, "
           "so two seeded runs still drift apart after a few steps and a GPU-vs-NPU comparison sees noise where "
           "it looks for a bug. MindSpore does not compute deterministically by default either (its "
           "`set_deterministic` documentation says so): on Ascend, kernels and HCCL reductions vary run to run.")
    fix = ("At startup: `torch.use_deterministic_algorithms(True)`, `torch.backends.cudnn.deterministic = True`, "
           "`torch.backends.cudnn.benchmark = False`, and `CUBLAS_WORKSPACE_CONFIG=:4096:8` in the environment; "
           "or `seed_all(seed, mode=True)` from msprobe_runtime, which does all of it. Through a library: "
           "`TrainingArguments(full_determinism=True)` (`--full_determinism`) for Hugging Face's Trainer, "
           "`Trainer(deterministic=True)` for Lightning, `Trainer(deterministic_mode=True)` for Composer, `randomness=dict(seed=s, deterministic=True)` for an mmengine "
           "runner (in its config: `--cfg-options randomness.deterministic=True`; it sets cuDNN's flags and calls "
           "`torch.use_deterministic_algorithms(True)`). MindSpore: "
           "`mindspore.set_deterministic(True)` at startup (MindSpore 2.10 deprecates "
           "`set_context(deterministic=\"ON\")`, which still works), or msprobe_runtime.mindspore's `seed_all(seed, "
           "mode=True)`.")
    valid = (
        # mmengine's `set_random_seed(..., deterministic=True)` also calls `torch.use_deterministic_algorithms(True)`.
        """\
import torch
from mmengine.runner import set_random_seed

set_random_seed(0, deterministic=True)
model = torch.nn.Linear(2, 2)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for x in torch.randn(4, 8, 2):
    model(x).sum().backward()
    opt.step()
""",
        # A seeder of a library this tool cannot read, told by a keyword that names determinism (fsdp_turbo's
        # `set_seed(seed, set_deterministic=...)` in MindSpeed-LLM): its switch is taken at its word.
        """\
import torch
from fsdp_turbo.utils.random import set_seed


def main(deterministic=True):
    set_seed(42, set_deterministic=deterministic)
    model = torch.nn.Linear(2, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for x in torch.randn(4, 8, 2):
        model(x).sum().backward()
        optimizer.step()


if __name__ == "__main__":
    main()
""",
        # mmengine's runner switches deterministic kernels on itself when its randomness says so.
        """\
from mmengine.runner import Runner

if __name__ == "__main__":
    runner = Runner(model=model, work_dir="work", train_dataloader=loader, optim_wrapper=optim,
                    train_cfg=dict(max_iters=10), randomness=dict(seed=0, deterministic=True))
    runner.train()
""",
        """\
import torch


def main():
    torch.manual_seed(0)
    torch.use_deterministic_algorithms(True)
    model = torch.nn.Linear(4, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    optimizer.zero_grad()
    model(torch.randn(2, 4)).sum().backward()
    optimizer.step()


if __name__ == "__main__":
    main()
""",
        """\
from msprobe_runtime.pytorch import seed_all as seed_everything
import torch


if __name__ == "__main__":
    seed_everything(1234, mode=True)
    model = torch.nn.Linear(4, 2)
    optimizer = torch.optim.AdamW(model.parameters())
""",
        """\
import speechbrain as sb
from speechbrain.utils import seed_everything

if __name__ == "__main__":
    seed_everything(1986, deterministic=True)
    sb.Brain(modules={"model": model}, opt_class=opt_class).fit(range(2), train_data)
""",
        """\
import lightning as L
from torch import nn


if __name__ == "__main__":
    L.seed_everything(0)
    trainer = L.Trainer(deterministic=True, max_epochs=1)
    trainer.fit(L.LightningModule())
""",
        # Lightning 1.x builds its trainer from parsed arguments; the keywords override them.
        """\
from pytorch_lightning.trainer import Trainer

if __name__ == "__main__":
    trainer = Trainer.from_argparse_args(opt, deterministic=True)
    trainer.fit(model, data)
""",
        """\
import mindspore as ms
from mindspore import nn

if __name__ == "__main__":
    ms.set_seed(0)
    ms.set_deterministic(True)
    net = nn.Dense(4, 2)
    opt = nn.Adam(net.trainable_params())
""",
        # A MindSpore script that only evaluates: no training, nothing to pin.
        """\
import mindspore as ms
from mindspore import nn

if __name__ == "__main__":
    net = nn.Dense(4, 2)
    print(net(ms.Tensor([[1.0, 2.0, 3.0, 4.0]])))
""",
        # An entry script that only converts weights: no kernels to pin.
        """\
import sys

import torch

if __name__ == "__main__":
    state = torch.load(sys.argv[1], map_location="cpu")
    torch.save({k: v.half() for k, v in state.items()}, sys.argv[2])
""",
        # A determinism flag whose value the script tells: on by default, and the only call passes none.
        """\
import torch


def setup(seed, deterministic=True):
    torch.manual_seed(seed)
    if deterministic:
        torch.use_deterministic_algorithms(True)


if __name__ == "__main__":
    setup(0)
    model = torch.nn.Linear(4, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for x in torch.randn(3, 2, 4):
        model(x).sum().backward()
        optimizer.step()
""",
        # Composer's Trainer switches deterministic kernels on itself when given `deterministic_mode=True`.
        """\
from composer import Trainer

if __name__ == "__main__":
    Trainer(model=model, train_dataloader=loader, seed=17, deterministic_mode=True).fit()
""",
        # ... as does its `reproducibility.configure_deterministic_mode()`.
        """\
from composer import Trainer
from composer.utils import reproducibility

if __name__ == "__main__":
    reproducibility.configure_deterministic_mode()
    Trainer(model=model, train_dataloader=loader, seed=17).fit()
""",
    )
    invalid = (
        # InternImage: mmdet's `set_random_seed` switches cuDNN's flags only under `--deterministic`, off by default.
        Invalid("""\
import argparse

import torch
from mmdet.apis import set_random_seed, train_detector

parser = argparse.ArgumentParser()
parser.add_argument("--deterministic", action="store_true")
args = parser.parse_args()

if __name__ == "__main__":
    set_random_seed(0, deterministic=args.deterministic)
    train_detector(model, datasets, cfg)
""", lines=(11,)),
        # mmcv's `set_random_seed(..., deterministic=True)` sets cuDNN's flags only.
        Invalid("""\
import torch
from mmcv.runner import set_random_seed

set_random_seed(0, deterministic=True)
model = torch.nn.Linear(2, 2)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for x in torch.randn(4, 8, 2):
    model(x).sum().backward()
    opt.step()
""", lines=(4,), severity="info"),
        # Megatron's `pretrain` seeds and trains, with deterministic kernels only under `--deterministic-mode`.
        Invalid("""\
from megatron.core.enums import ModelType
from megatron.training import pretrain

if __name__ == "__main__":
    pretrain(train_valid_test_datasets_provider, model_provider, ModelType.encoder_or_decoder, forward_step)
""", lines=(5,)),
        # ModelZoo's scripts for torch 1.5 use `torch.npu` without torch_npu: cuDNN's flag does nothing there.
        Invalid("import torch\nimport torch.npu\n\ntorch.npu.set_device(\"npu:0\")\n"
                "torch.backends.cudnn.deterministic = True\nmodel = torch.nn.Linear(2, 2).to(\"npu:0\")\n"
                "opt = torch.optim.SGD(model.parameters(), lr=0.1)\nfor x in torch.randn(4, 8, 2):\n"
                "    model(x.to(\"npu:0\")).sum().backward()\n    opt.step()\n", lines=(8,)),
        # cuDNN's flag alone (cleanrl's scripts): information, the other kernels stay non-deterministic.
        Invalid("""\
import torch.backends.cudnn as cudnn
from torch import nn, optim

cudnn.deterministic = True
cudnn.benchmark = False
model = nn.Linear(4, 2)
opt = optim.SGD(model.parameters(), lr=0.1)
for batch in loader:
    opt.zero_grad()
    model(batch).sum().backward()
    opt.step()
""", lines=(4,), severity="info"),
        # MindSpore training that takes only its tokenizer from transformers (mindnlp's bert_pet): MindSpore's advice.
        Invalid("import mindspore\nfrom mindspore import nn\nfrom transformers import AutoTokenizer\n\n\ndef main():\n"
                "    mindspore.set_seed(1)\n    net = nn.Dense(3, 3)\n    opt = nn.Adam(net.trainable_params())\n"
                "    grad_fn = mindspore.value_and_grad(lambda x: net(x).sum(), None, opt.parameters)\n"
                "    for x in range(3):\n        loss, grads = grad_fn(x)\n        opt(grads)\n\n\n"
                "if __name__ == \"__main__\":\n    main()\n", lines=(16,)),
        # CleanRL's options are a dataclass that tyro parses: `torch_deterministic` is off by default here.
        Invalid("from dataclasses import dataclass\n\nimport torch\nimport tyro\n\n\n@dataclass\nclass Args:\n"
                "    torch_deterministic: bool = False\n\n\nif __name__ == \"__main__\":\n    args = tyro.cli(Args)\n"
                "    torch.backends.cudnn.deterministic = args.torch_deterministic\n"
                "    torch.use_deterministic_algorithms(args.torch_deterministic)\n"
                "    model = torch.nn.Linear(2, 2)\n    opt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
                "    for x in torch.randn(4, 2):\n        model(x).sum().backward()\n        opt.step()\n",
                lines=(14,)),
        # mindformers' run_mindformer.py names no mindspore: its Trainer trains on MindSpore.
        Invalid("from mindformers import MindFormerConfig, Trainer\n\nif __name__ == \"__main__\":\n"
                "    Trainer(MindFormerConfig(\"run.yaml\")).train()\n", lines=(3,)),
        # Ascend: cuDNN's flag is all this script sets, and CANN's kernels do not read it.
        Invalid("""\
import torch
import torch.backends.cudnn as cudnn
import torch_npu

if __name__ == "__main__":
    torch.manual_seed(0)
    cudnn.deterministic = True
    model = torch.nn.Linear(4, 1).npu()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for x in torch.randn(3, 2, 4):
        model(x.npu()).sum().backward()
        optimizer.step()
""", lines=(10,)),
        # The spawned workers start with cuDNN's and PyTorch's default (non-deterministic) settings.
        Invalid("""\
import torch
import torch.backends.cudnn as cudnn
from torch.multiprocessing import spawn


def train(rank, args):
    torch.manual_seed(args.seed)
    net = torch.nn.Conv2d(3, 8, 3).cuda(rank)
    sgd = torch.optim.SGD(net.parameters(), lr=args.lr)
    for images in torch.randn(args.steps, 2, 3, 8, 8):
        net(images.cuda(rank)).mean().backward()
        sgd.step()


if __name__ == "__main__":
    cudnn.deterministic = True
    spawn(train, args=(parse_args(),), nprocs=torch.cuda.device_count())
""", lines=(17,)),
        # MindSpore: seeded, trained with Model.train, never deterministic (model zoo scripts).
        Invalid("""\
import mindspore as ms
from mindspore import nn
from mindspore.train import Model

ms.set_seed(1)
ms.set_context(mode=ms.GRAPH_MODE, deterministic="OFF")
net = nn.Dense(4, 2)
model = Model(net, nn.MSELoss(), nn.Momentum(net.trainable_params(), 0.01, 0.9))
if __name__ == "__main__":
    model.train(1, None)
""", lines=(9,)),
        Invalid("""\
import torch
from torch import nn


def main():
    torch.manual_seed(0)
    torch.backends.cudnn.benchmark = False
    model = nn.Linear(4, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    optimizer.zero_grad()
    model(torch.randn(2, 4)).sum().backward()
    optimizer.step()


if __name__ == "__main__":
    main()
""", lines=(15,)),
        # Turned on only behind a store_true flag (off by default), as in torchvision's references.
        Invalid("""\
import argparse

import torch


def main(args):
    if args.use_deterministic_algorithms:
        torch.backends.cudnn.benchmark = False
        torch.use_deterministic_algorithms(True)
    else:
        torch.backends.cudnn.benchmark = True
    model = torch.nn.Linear(4, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    optimizer.zero_grad()
    model(torch.randn(2, 4)).sum().backward()
    optimizer.step()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--use-deterministic-algorithms", action="store_true")
    main(parser.parse_args())
""", lines=(7,)),
        # Deterministic kernels only under a config's determinism flag, whose value nothing here tells (torchtitan's
        # `if debug_config.deterministic:`, OpenRLHF's `if self.full_determinism:`): they are usually off.
        Invalid("""\
import torch
import yaml


def main(cfg):
    torch.manual_seed(cfg["seed"])
    if cfg["deterministic"]:
        torch.use_deterministic_algorithms(True)
    model = torch.nn.Linear(4, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for x in torch.randn(3, 2, 4):
        model(x).sum().backward()
        optimizer.step()


if __name__ == "__main__":
    with open("config.yaml") as f:
        main(yaml.safe_load(f))
""", lines=(7,)),
        # A SpeechBrain recipe: seeded by its hparams YAML (`!apply:speechbrain.utils.seed_everything`), which
        # leaves deterministic kernels off; `Brain.fit` trains.
        Invalid("""\
import sys

import speechbrain as sb
from hyperpyyaml import load_hyperpyyaml


class ASR(sb.Brain):
    def compute_objectives(self, predictions, batch, stage):
        return self.hparams.ctc_loss(predictions, batch.phn_encoded)


if __name__ == "__main__":
    hparams_file, run_opts, overrides = sb.parse_arguments(sys.argv[1:])
    with open(hparams_file) as fin:
        hparams = load_hyperpyyaml(fin, overrides)
    asr = ASR(modules=hparams["modules"], opt_class=hparams["opt_class"], hparams=hparams, run_opts=run_opts)
    asr.fit(hparams["epoch_counter"], train_data, valid_data)
""", lines=(12,)),
        # Latent and stable diffusion's main.py: Lightning's Trainer imported from its `trainer` package, built
        # from parsed arguments (`--deterministic` is off unless given).
        Invalid("""\
from pytorch_lightning import seed_everything
from pytorch_lightning.trainer import Trainer

if __name__ == "__main__":
    seed_everything(opt.seed)
    trainer = Trainer.from_argparse_args(trainer_opt, **trainer_kwargs)
    trainer.fit(model, data)
""", lines=(4,)),
        # detectron2's tools/train_net.py: a DefaultTrainer subclass trains; default_setup seeds, nothing switches.
        Invalid("""\
from detectron2.engine import DefaultTrainer, default_setup, launch


class Trainer(DefaultTrainer):
    pass


def main(args):
    cfg = setup(args)
    default_setup(cfg, args)
    trainer = Trainer(cfg)
    return trainer.train()


if __name__ == "__main__":
    launch(main, args.num_gpus, args=(args,))
""", lines=(15,)),
        # TRL's trainers are Hugging Face Trainers, and their configs TrainingArguments.
        Invalid("""\
from trl import SFTConfig, SFTTrainer

if __name__ == "__main__":
    SFTTrainer(model="Qwen/Qwen2.5-0.5B", args=SFTConfig(output_dir="out"), train_dataset=dataset).train()
""", lines=(3,)),
        # An mmengine runner (OpenMMLab's tools/train.py) built from a config: deterministic only if the config says so.
        Invalid("""\
from mmengine.config import Config
from mmengine.runner import Runner

if __name__ == "__main__":
    runner = Runner.from_cfg(Config.fromfile("configs/retinanet.py"))
    runner.train()
""", lines=(4,)),
        # mindnlp runs transformers' Trainer on MindSpore (its `torch` is mindtorch): MindSpore's switch is missing.
        Invalid("""\
import mindnlp
from transformers import Trainer, TrainingArguments

if __name__ == "__main__":
    Trainer(model=model, args=TrainingArguments(output_dir="out", seed=42), train_dataset=dataset).train()
""", lines=(4,)),
        # `mode=False` (the default) seeds but leaves kernels non-deterministic; deterministic=False too.
        Invalid("""\
import torch as T
from msprobe_runtime.pytorch import seed_all
from transformers import set_seed

seed_all(1234, mode=False)
set_seed(1234, deterministic=False)
T.use_deterministic_algorithms(False)
model = T.nn.Linear(4, 2)
opt = T.optim.Adam(model.parameters())
for x in T.randn(10, 2, 4):
    opt.zero_grad()
    model(x).sum().backward()
    opt.step()
""", lines=(10,)),
        # Composer's Trainer leaves deterministic kernels off unless given `deterministic_mode=True`.
        Invalid("""\
from composer import Trainer

if __name__ == "__main__":
    trainer = Trainer(model=model, train_dataloader=loader, max_duration="1ep", seed=17)
    trainer.fit()
""", lines=(4,)),
    )

    def finish(self) -> None:
        ctx = self.ctx
        if not ctx.is_entry_script():
            return
        facts = seeding.analyse(ctx)
        # A script that names no framework (improved-diffusion's image_train.py) runs that of the project
        # modules it trains through.
        trackers = ([ctx.imports] if _framework([ctx.imports])
                    else [m.imports for m in facts.training_modules(seeding.switches_on)])
        framework = _framework(trackers, [m.imports for m in project.package_inits(ctx.path, ctx.tree)])
        if framework is None:
            return
        # HCCL as the backend: distributed runs are Ascend's even where a CUDA branch is kept (speech-transformer)
        only_ascend = ctx.runs_on_ascend() or communicates_over_hccl(ctx)  # else CUDA too: its advice stays CUDA's
        ascend = only_ascend or any(tracker.imports_root("torch_npu") for tracker in trackers)

        def switches_on(effect: seeding.Effect) -> bool:  # cuDNN's flag does nothing on Ascend
            return effect.summary.deterministic or effect.summary.cudnn and not ascend

        message = MINDSPORE_MESSAGE if framework == "mindspore" else ASCEND_MESSAGE if only_ascend else None
        if ascend and any(effect.summary.cudnn for effect in facts.effects):
            message = ASCEND_CUDNN_MESSAGE
        setup = first_call(ctx, catalogue.MEGATRON_SETUPS)  # `--deterministic-mode` is the switch, on CUDA and on Ascend
        if setup is not None:
            advice = MEGATRON_FORK_MESSAGE if megatron_lacks_deterministic_mode(ctx) else MEGATRON_MESSAGE
            message = advice.format(call=condition_text(setup.func))
        elif (setup := first_call(ctx, catalogue.COMPOSER_TRAINERS)) is not None:  # its `deterministic_mode=`
            message = COMPOSER_MESSAGE.format(trainer="Composer's `Trainer`")
        elif trackers != [ctx.imports] and any(catalogue.COMPOSER_TRAINERS & set(t.bindings.values()) for t in trackers):
            message = COMPOSER_MESSAGE.format(trainer="the Composer `Trainer` this script trains through")
        verdict = facts.default_run(switches_on)
        report_whole_script(self, facts, verdict, CONDITIONAL, message, seeding.switches_on, setup)
        report_parent_only(self, facts, switches_on, PARENT_ONLY, seeding.switches_on)
        if verdict.pinned and facts.needs(seeding.switches_on):
            self._report_opt_in(facts, switches_on)
        if framework == "pytorch" and verdict.pinned and facts.needs(seeding.switches_on) and not any(
                effect.summary.deterministic for effect in facts.effects):
            cudnn = next(effect for effect in facts.effects if effect.summary.cudnn)
            if not facts.spawned or facts.runs_in_workers(cudnn):  # else: only in the parent (PARENT_ONLY)
                self.report(cudnn.node, CUDNN_ONLY_MESSAGE, "info")


    def _report_opt_in(self, facts: seeding.FileSeeding, switches_on: Callable[[seeding.Effect], bool]) -> None:
        """Warn when the default run switches deterministic kernels on only under a determinism flag whose value
        nothing here tells (`seeding.FileSeeding.opt_in_run`): at that flag, or at the call of the project helper
        that tests it."""
        found = facts.opt_in_run(switches_on)
        if found is None:
            return
        effect, flag = found
        if flag is not None:
            self.report(flag, OPT_IN.format(what="deterministic kernels are switched on",
                                            flag=f"`{condition_text(flag)}`"))
        else:
            flag, file = effect.summary.opt_in_when
            self.report(effect.node, OPT_IN.format(what=f"`{code_text(effect.node)}` switches deterministic kernels on",
                                                   flag=f"`{condition_text(flag)}` ({file}:{flag.lineno})"))


def first_call(ctx: FileContext, names: frozenset[str]) -> ast.Call | None:
    """The file's first call of one of `names`, if any."""
    calls = [node for node in ast.walk(ctx.tree) if isinstance(node, ast.Call) and ctx.call_qualname(node) in names]
    return min(calls, key=lambda node: (node.lineno, node.col_offset), default=None)


def _framework(trackers: list[ImportTracker], packages: list[ImportTracker] = ()) -> str | None:
    """"pytorch" or "mindspore": what the files with these imports use (PyTorch first, unless mindnlp makes
    `torch` MindSpore's mindtorch, imported by them or by the `packages` run before them, see
    `project.package_inits`; a MindSpore suite, mindformers, counts as MindSpore; a library built on torch, such as
    transformers, counts as PyTorch only where MindSpore is not imported), or None."""
    if any(tracker.imports_root(root) for tracker in (*trackers, *packages) for root in catalogue.TORCH_ON_MINDSPORE):
        return "mindspore"
    if any(tracker.imports_root(root) for tracker in trackers for root in PYTORCH_ROOTS[:TORCH_ITSELF]):
        return "pytorch"
    if any(tracker.imports_root(root) for tracker in trackers for root in ("mindspore", *catalogue.MINDSPORE_SUITES)):
        return "mindspore"  # transformers imported only for its tokenizer (mindnlp's bert_pet)
    return "pytorch" if any(tracker.imports_root(root) for tracker in trackers for root in PYTORCH_ROOTS) else None

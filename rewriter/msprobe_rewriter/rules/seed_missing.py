"""MSP101 seed-missing: an entry script that trains or samples without ever seeding its generators."""

from __future__ import annotations

import ast
import re

from msprobe_rewriter import catalogue, entropy, seeding
from msprobe_rewriter.assignments import is_main_guard
from msprobe_rewriter.context import (
    FUNCTION_TYPES,
    FileContext,
    argument,
    constant,
    draws_globally,
    iter_calls,
    keyword,
)
from msprobe_rewriter.cpu_code import CpuCode, is_model_base
from msprobe_rewriter.rules.base import Invalid, Rule

CONDITIONAL = ("seeding runs only when `{condition}`, which is false with the default arguments: seed "
               "unconditionally (or give the seed option a default value)")
SEED_FIRST = "call `transformers.set_seed(seed)` (or msprobe's `seed_all(seed)`) before"
LATE_MODEL = ("`{call}(...)` initialises new weights{via} before `{trainer}(...)` seeds (line {line}), so they "
              f"differ run to run: {SEED_FIRST} it, or build the model in the trainer's `model_init=`")
LATE_DRAW = ("`{call}(...)` draws{via} before `{trainer}(...)` seeds (line {line}), from an unseeded generator: "
             f"{SEED_FIRST} it")
# transformers model classes (`LlamaForCausalLM(config)` initialises every weight), not data collators.
HF_MODEL_CLASS = re.compile(r"(?!Auto|DataCollator)[A-Z]\w*(Model|For[A-Z]\w*)")


def entry_location(ctx: FileContext) -> ast.AST:
    """Where a whole-script finding points: the first module-level training loop, else the main guard."""
    loops = [info.node for info in ctx.loops.values() if info.function is None and ctx.is_step_loop(info.node)]
    if loops:
        return header(min(loops, key=lambda n: (n.lineno, n.col_offset)))
    for stmt in ctx.tree.body:
        if isinstance(stmt, ast.If) and is_main_guard(stmt.test):
            return header(stmt)
    for stmt in ctx.tree.body:  # a module-level `model.train(...)` (MindSpore Model)
        if any(ctx.is_step_call(c) for c in ast.walk(stmt) if isinstance(c, ast.Call)):
            return stmt
    return ctx.tree.body[0] if ctx.tree.body else ctx.tree


def header(stmt: ast.stmt) -> ast.AST:
    """A node spanning only the header of a compound statement (`for batch in loader`, `if ...`)."""
    last = getattr(stmt, "iter", None) or getattr(stmt, "test", None) or stmt
    return ast.Pass(lineno=stmt.lineno, col_offset=stmt.col_offset, end_lineno=last.end_lineno,
                    end_col_offset=last.end_col_offset)


def condition_text(node: ast.expr, limit: int = 60) -> str:
    """Source of a condition, shortened for a one-line message."""
    text = ast.unparse(node)
    return text if len(text) <= limit else text[: limit - 3] + "..."


class SeedMissing(Rule):
    code = "MSP101"
    name = "seed-missing"
    severity = "error"
    frameworks = ("pytorch", "mindspore", "python")
    message = ("this entry script trains or samples but never seeds its random number generators: call "
               "`seed_all(seed)` (msprobe), or `random.seed`, `np.random.seed` and `torch.manual_seed` / "
               "`mindspore.set_seed`, at startup")
    summary = ("Flags an entry script (an `if __name__ == \"__main__\":` guard, a module-level training loop or "
               "`Model.train`) that trains (training steps, an optimizer, a trainer, or a function or class of "
               "another file of the project that runs training steps, as improved-diffusion's `TrainLoop`) or "
               "samples from weights it loads (torch draws plus `torch.load`/`from_pretrained`/...), but never "
               "seeds: not directly, "
               "not through a library seeder (`seed_everything`, `transformers.set_seed`, ...) or a library class that seeds when built (Hugging Face's `Trainer` and the script's subclasses of it, `LightningCLI` unless given `seed_everything_default=False`), and not through a "
               "seeding helper imported from another file of the project (followed two files deep; a helper "
               "that cannot be found but is named like a seeder counts), and not by importing a project module "
               "that seeds at its top level. In such a script, seeding only under a "
               "condition that is false with the default arguments (`if args.seed is not None:` with `--seed` "
               "defaulting to None) is reported at that condition. A script whose only seeding draws a fresh seed every run "
               "(`random.seed()`, `torch.seed()`) is left to entropy-seed (MSP108), which points at that call: "
               "one finding per hazard. A script whose only seeding is a Hugging Face trainer, which seeds only when "
               "constructed, is reported at the first call before that construction (in the same function, or at "
               "module level) that builds the model the trainer trains with new weights (`from_pretrained` of a "
               "class whose head a base checkpoint lacks: sequence, token, image or audio classification, question "
               "answering, CTC...; `from_config`; a transformers model class or an `nn.Module` of the file built "
               "directly; PEFT's `get_peft_model` with a `LoraConfig` of random `init_lora_weights`) or draws "
               "(`torch.randint`, `random.shuffle`, `np.random.permutation`, `dataset.shuffle()` or "
               "`train_test_split` without a seed), itself or in a function or class of the file it calls. A causal "
               "or masked LM's `from_pretrained`, a tokenizer or `load_dataset` draws nothing, and "
               "`Trainer(model_init=...)` builds the model after seeding.")
    why = ("Without a seed, weight initialisation, data order, augmentation and dropout start from a different "
           "random state in every run, so no two runs (or the GPU and NPU runs you want to compare) compute the "
           "same numbers, and a precision difference cannot be told apart from noise. A seed behind an optional "
           "`--seed` flag is the same problem in disguise: the default run is unseeded. So is a Hugging Face "
           "`Trainer` built after the model: it seeds in its constructor, once the new weights (a classifier head, "
           "LoRA matrices) and the data order have been drawn from torch's CPU generator, which every process "
           "seeds from OS entropy.")
    fix = ("Seed every generator once at startup, before building the model and the data pipeline: "
           "`from msprobe_runtime.pytorch import seed_all; seed_all(1234)` (or `random.seed(s)`, "
           "`np.random.seed(s)`, `torch.manual_seed(s)`; MindSpore: `mindspore.set_seed(s)`, which seeds `random`, "
           "NumPy and the data pipeline too, plus `mindspore.manual_seed(s)` for `mint` draws). "
           "Give `--seed` a default value instead of None. With a Hugging Face trainer, call "
           "`transformers.set_seed(training_args.seed)` before loading the model and the data, as transformers' "
           "example scripts do, or pass the trainer a `model_init=` function that builds the model.")
    valid = (
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
    )
    invalid = (
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
    )

    def finish(self) -> None:
        ctx = self.ctx
        if not ctx.is_entry_script():
            return
        facts = seeding.analyse(ctx)
        verdict = facts.default_run(lambda e: bool(e.summary.families) and e.function not in facts.worker_init)
        if not verdict.pinned and any(found.global_seed for found in entropy.analyse(ctx)):
            return  # it seeds, but from entropy (`random.seed()`, `torch.seed()`): entropy-seed reports that
        report_whole_script(self, facts, verdict, CONDITIONAL)
        if verdict.pinned:
            self._seeded_late(facts)

    def _seeded_late(self, facts: seeding.FileSeeding) -> None:
        """When a Hugging Face trainer's construction is the only seeding of the default run, report the first
        model built with new weights, or draw, before it in the function (or module level) that builds it."""
        ctx = self.ctx
        trainers = [effect.node for effect in facts.direct if isinstance(effect.node, ast.Call)
                    and ctx.call_qualname(effect.node) in catalogue.HF_TRAINERS and facts.skipping_guard(effect) is None]
        if not trainers or facts.default_run(lambda e: bool(e.summary.families) and e.node not in trainers
                                             and e.function not in facts.worker_init).pinned:
            return
        late = _LateDraws(ctx)
        for scope in (ctx.tree, *(node for node in ast.walk(ctx.tree) if isinstance(node, FUNCTION_TYPES))):
            calls = sorted(iter_calls(scope), key=lambda c: (c.lineno, c.col_offset))
            trainer = next((call for call in calls if call in trainers), None)
            if trainer is None:
                continue
            end = (trainer.end_lineno, trainer.end_col_offset)
            model = argument(trainer, 0, "model") if keyword(trainer, "model_init") is None else None
            for call in calls:
                found = (call is not trainer and (call.end_lineno, call.end_col_offset) <= end
                         and late.first(call, late.builds(call, model), follow=True))
                if found:
                    kind, via = found
                    text = LATE_MODEL if kind == "model" else LATE_DRAW
                    self.report(call, text.format(call=condition_text(call.func), via=via, line=trainer.lineno,
                                                  trainer=condition_text(trainer.func)))
                    break


def report_whole_script(rule: Rule, facts: seeding.FileSeeding, verdict: seeding.Verdict, conditional: str,
                        message: str | None = None) -> None:
    """Report an entry script that trains or samples and pins nothing: at the condition that skips its
    pinning code, or at the script (with `message`, else the rule's)."""
    if verdict.pinned or not facts.random_work:
        return
    if verdict.skipped_by is not None:
        rule.report(verdict.skipped_by, conditional.format(condition=condition_text(verdict.skipped_by)))
    else:
        rule.report(entry_location(rule.ctx), message)


class _LateDraws:
    """What a call draws before a trainer seeds: a model with new weights, or random numbers."""

    def __init__(self, ctx: FileContext) -> None:
        self.ctx = ctx
        self.models = CpuCode(ctx).derived_classes("weights", lambda q: is_model_base(q) or _hf_model_class(q))
        self.definitions = {node.name: node for node in ctx.tree.body
                            if isinstance(node, (*FUNCTION_TYPES, ast.ClassDef))}
        self.assigned = [(node.targets[0].id, node.value) for node in ast.walk(ctx.tree) if isinstance(node, ast.Assign)
                         and isinstance(node.targets[0], ast.Name) and isinstance(node.value, ast.Call)]
        self.targets = {value: name for name, value in self.assigned}

    def builds(self, call: ast.Call, model: ast.expr | None) -> bool:
        """Whether `call` may build the model the trainer trains (`model`: its `model=` argument): it is that
        argument, or assigned to its name (`model = get_peft_model(model, config)`); a reward model loaded
        beside it has its head."""
        return call is model or isinstance(model, ast.Name) and self.targets.get(call) == model.id

    def first(self, call: ast.Call, with_model: bool, follow: bool) -> tuple[str, str] | None:
        """`("model" | "draw", where)` for a call that builds a model with new weights (when `with_model`) or
        draws; a call of a function or class of the file is followed one level (`where` names the call inside)."""
        kind = self._kind(call, with_model)
        if kind is not None:
            return kind, ""
        definition = self.definitions.get(getattr(call.func, "id", None)) if follow else None
        if isinstance(definition, ast.ClassDef):
            definition = next((item for item in definition.body
                               if isinstance(item, FUNCTION_TYPES) and item.name == "__init__"), None)
        for inner in sorted(iter_calls(definition), key=lambda c: (c.lineno, c.col_offset)) if definition else ():
            found = self.first(inner, with_model, follow=False)
            if found is not None:
                return found[0], f" (`{condition_text(inner.func)}`, line {inner.lineno})"
        return None

    def _kind(self, call: ast.Call, with_model: bool) -> str | None:
        """Whether a call draws random numbers ("draw") or builds a model with new weights ("model")."""
        qualified = self.ctx.call_qualname(call)
        if draws_globally(call, qualified) or _unseeded_split(call, qualified):
            return "draw"
        if with_model and (qualified in catalogue.PEFT_ADAPTERS and self._random_lora(call)
                           or getattr(call.func, "id", None) in self.models or _hf_new_weights(qualified or "")):
            return "model"
        return None

    def _random_lora(self, adapter: ast.Call) -> bool:
        """Whether `get_peft_model`'s config is a LoRA config (inline, or the last one assigned to its name
        before) with a random `init_lora_weights`."""
        config = argument(adapter, 1, "peft_config")
        if isinstance(config, ast.Name):
            config = next((value for name, value in reversed(self.assigned) if name == config.id
                           and value.lineno < adapter.lineno), None)
        if not isinstance(config, ast.Call) or self.ctx.call_qualname(config) not in catalogue.PEFT_LORA_CONFIGS:
            return False
        init = keyword(config, "init_lora_weights")
        return init is None or constant(init) in catalogue.PEFT_RANDOM_LORA_INITS


def _hf_model_class(qualified: str) -> bool:
    return qualified.startswith("transformers.") and HF_MODEL_CLASS.fullmatch(qualified.rpartition(".")[2]) is not None


def _hf_new_weights(qualified: str) -> bool:
    """A transformers model built from a config, or loaded with a head the checkpoint lacks."""
    owner, _, name = qualified.rpartition(".")
    if not owner.startswith("transformers"):
        return False
    if name == "from_pretrained":
        return owner.endswith(catalogue.HF_NEW_HEADS)
    return name in catalogue.HF_FROM_CONFIG or _hf_model_class(qualified)


def _unseeded_split(call: ast.Call, qualified: str | None) -> bool:
    """`dataset.shuffle()`, `dataset.train_test_split(0.1)`, scikit-learn's `train_test_split(x)`: no seed."""
    method = call.func.attr if qualified is None and isinstance(call.func, ast.Attribute) else None
    spec = catalogue.UNSEEDED_SPLITS.get(qualified or method or "")
    if spec is None or any(kw.arg is None for kw in call.keywords):  # `**kwargs` may hold a seed
        return False
    seeds, shuffle = spec
    if any(_given(call, *seed) is not None for seed in seeds):
        return False
    return shuffle is None or constant(_given(call, *shuffle)) is not False


def _given(call: ast.Call, position: int | None, name: str) -> ast.expr | None:
    return argument(call, position, name) if position is not None else keyword(call, name)

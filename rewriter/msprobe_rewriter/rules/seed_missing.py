"""MSP101 seed-missing: an entry script that trains or samples without ever seeding its generators."""

from __future__ import annotations

import ast

from msprobe_rewriter import entropy, seeding
from msprobe_rewriter.assignments import is_main_guard
from msprobe_rewriter.context import FileContext
from msprobe_rewriter.rules.base import Invalid, Rule

CONDITIONAL = ("seeding runs only when `{condition}`, which is false with the default arguments: seed "
               "unconditionally (or give the seed option a default value)")


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
               "one finding per hazard.")
    why = ("Without a seed, weight initialisation, data order, augmentation and dropout start from a different "
           "random state in every run, so no two runs (or the GPU and NPU runs you want to compare) compute the "
           "same numbers, and a precision difference cannot be told apart from noise. A seed behind an optional "
           "`--seed` flag is the same problem in disguise: the default run is unseeded.")
    fix = ("Seed every generator once at startup, before building the model and the data pipeline: "
           "`from msprobe_runtime.pytorch import seed_all; seed_all(1234)` (or `random.seed(s)`, "
           "`np.random.seed(s)`, `torch.manual_seed(s)`; MindSpore: `mindspore.set_seed(s)`, which seeds `random`, "
           "NumPy and the data pipeline too, plus `mindspore.manual_seed(s)` for `mint` draws). "
           "Give `--seed` a default value instead of None.")
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
        # Hugging Face's Trainer seeds every generator with `args.seed` (default 42) when constructed.
        """\
from transformers import AutoModelForSequenceClassification, Trainer, TrainingArguments


def main():
    model = AutoModelForSequenceClassification.from_pretrained("bert-base-uncased")
    trainer = Trainer(model=model, args=TrainingArguments(output_dir="out"))
    trainer.train()


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

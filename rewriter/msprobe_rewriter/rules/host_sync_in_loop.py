"""MSP502 host-sync-in-loop: reading device values on the host in every training step."""

from __future__ import annotations

import ast
import builtins
import re
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

from msprobe_rewriter import catalogue, conditions, default_device, opt_in, pinning, project
from msprobe_rewriter.call_defaults import LeftAtDefault
from msprobe_rewriter.conditions import condition_text, dataclass_defaults
from msprobe_rewriter.context import (
    FUNCTION_TYPES,
    NOT_CONSTANT,
    LoopInfo,
    Site,
    constant,
    iter_calls,
    keyword,
    target_name,
    walk_scope,
)
from msprobe_rewriter.rules.base import Invalid, Rule

Position = tuple[int, int]  # (line, column)
Function = ast.FunctionDef | ast.AsyncFunctionDef
MAX_CLOSURE_DEPTH = 3  # closures in closures followed to the loop that runs them
LOOP_WORD = re.compile(r"\b(?:for|while)\b")
STEP_COUNTER = re.compile(r"(?:^|_)(?:step|iter|iteration)$")  # `global_step`, `cur_iter` (not an epoch: many steps)
# Functions that measure rather than train (ultralytics' `profile_ops`, timing forward and backward for AutoBatch):
# their `backward()` applies no gradients.
MEASURING_NAME = re.compile(r"(?i)(?:^|_)(?:profile|profiling|bench|benchmark|warm_?up)(?:_|$)")
OVERFLOW = re.compile(r"overflow", re.IGNORECASE)  # a loss scaler's flag: true in the rare steps that overflow
FINITE = re.compile(r"finite", re.IGNORECASE)  # `grads_finite`: false in those steps
LOSS_NAME = re.compile(r"^(?!(?:use|is|has|enable|with|do|compute|apply|return|log|print)_)(?:loss|\w+_loss|loss_(?!(?:fn|fns|func|function|type|name|weight|weights|scale|scaler|"
                       r"history|list|log|logs|meter|dict|cfg|config|kwargs|args|mask|key|keys|mode|kind)(?:_|$))\w+)$")
# Receivers of `.cpu()` that are models, not tensors.
MODULE_NAME = re.compile(r"(?:^|_)(?:self|model|models|net|network|module|encoder|decoder|ema|backbone|head)$")
# Methods that return Python values (or a host copy) rather than device tensors.
HOST_VALUE_METHODS = catalogue.HOST_SYNC_METHODS | {"size", "dim", "numel", "nelement", "element_size",
                                                     "data_ptr", "is_contiguous", "get_device", "__len__"}
MODULE_METHODS = frozenset({"parameters", "named_parameters", "state_dict", "modules", "named_modules", "buffers",
                            "children", "eval", "train", "load_state_dict"})
HOST_VALUE_BUILTINS = frozenset({"float", "int", "len", "str", "repr", "bool", "format"})
# Builtins that return what they are given: `sum(losses)`, `max(a, b)`, `abs(x)` of tensors are tensors.
PASSTHROUGH_BUILTINS = frozenset({"sum", "max", "min", "abs", "round"})
# Modules whose lowercase functions return tensors.
TENSOR_FUNCTION_MODULES = frozenset({"torch", "torch.nn.functional", "torch.linalg", "torch.fft", "torch.special",
                                     "mindspore.ops", "mindspore.mint", "mindspore.numpy"})
NOT_TENSOR_FUNCTIONS = frozenset({"is_tensor", "numel", "is_floating_point", "is_complex", "get_default_dtype",
                                  "is_grad_enabled", "device", "get_rank", "typename"})
# Functions outside those modules that return a tensor: the total gradient norm (jepa's `float(_enc_norm)`).
TENSOR_FUNCTIONS = frozenset({"torch.nn.utils.clip_grad_norm_", "torch.nn.utils.clip_grad.clip_grad_norm_",
                              "torch.nn.utils.clip_grad_norm", "torch.nn.utils.get_total_norm"})
# The tensors PyTorch's optimizers keep per parameter (`optimizer.state_dict()['state'][i]['exp_avg']`).
OPTIMIZER_STATE_KEYS = frozenset({"exp_avg", "exp_avg_sq", "max_exp_avg_sq", "momentum_buffer", "square_avg",
                                  "acc_delta", "grad_avg"})
HOST_TENSOR_MAKERS = frozenset({"torch.tensor", "torch.as_tensor", "torch.scalar_tensor"})  # `device=` or the host
EXITS = frozenset({"sys.exit", "exit", "quit", "os._exit"})  # calls that end the run
HELPER_READS = frozenset({"item", "tolist", "numpy"})  # host reads looked for in the helpers a step calls
BUILTIN_NAMES = frozenset(dir(builtins))
SYNC_NAMES = catalogue.HOST_SYNC_METHODS | {name.rsplit(".", 1)[1] for name in catalogue.HOST_SYNC_CALLS}
# Calls that act on a host value: RL's `envs.step(actions)`, `scheduler.step(val_loss)`, a NaN check.
HOST_CONSUMERS = frozenset({"step", "isfinite", "isnan", "isinf"})
NEEDED = ("{use}, so the host needs this value and the sync stays; keep it the same in every run you compare (a host "
          "read changes how device work is scheduled)")
# A branch on the value that a condition false by default short-circuits (SB3's PPO, `target_kl=None`).
OFF_BRANCH = " (the host branches on `{found}` only when `{condition}`: not so by default)"
REMEDY = ("it forces a host-device sync every step, which changes scheduling and can hide a NaN; keep statistics "
          "on the device (msprobe's async dump) and read them every N steps")
FORWARD_REMEDY = ("it forces a host-device sync every step, which changes scheduling and can hide a NaN; return "
                  "statistics as tensors for the loop to read every N steps (lerobot's `loss_dict`), and index with the "
                  "tensor itself (`x[idx]`, `torch.gather`) rather than a Python number")


class Runs(NamedTuple):
    """Where a piece of code runs at every iteration: the loops around it in its function, the `% N` guards it is
    under (their N: known once the file is read), and the closure it is in (`(scope, name)`), whose runs add."""

    loops: list[ast.AST]
    guards: list[tuple[list[ast.expr], Function | None]]
    closure: tuple[int, str] | None


class HostSyncInLoop(Rule):
    code = "MSP502"
    name = "host-sync-in-loop"
    severity = "info"
    frameworks = ("pytorch", "mindspore")
    message = "host-device sync inside the training loop; " + REMEDY
    summary = ("Flags, inside the body of a loop that runs a training step, `.item()`, `.cpu()`, `.numpy()`, "
               "`.tolist()`, `.asnumpy()`, `float()`/`int()` of a tensor (also of the total norm `clip_grad_norm_` returns, of a custom autograd "
               "function's output, jepa's `AllReduce.apply(x)`, or of an optimizer's state entry, `s['exp_avg']`), printing or formatting a tensor (f-string, `str.format`), "
               "testing one in an `if` or `while` (`if not torch.isfinite(loss):` calls `bool()` on it, also one operand of "
               "`or`/`and`; not a tensor made on the host of a Python value, LLaMA-Factory's `torch.isfinite(torch.tensor(grad_norm))` "
               "after `grad_norm = total_norm.item()`, unless the file sets an accelerator as the default device; not after a latch the branch sets, "
               "swav's `if use_the_queue or not torch.all(...): use_the_queue = True`, tested only until the queue is full), a call of a function "
               "(of the file or a project module, also called on the module: DINO's `utils.clip_gradients(...)`) or of the class's own method whose body reads a tensor with `.item()`, "
               "`.tolist()`, `.numpy()` or `float()` of what a torch function returns (or of an optimizer's state, jepa's "
               "`adamw_logger`) at every call (Swin's "
               "`get_grad_norm(model.parameters())`, one `.item()` per parameter; "
               "under no `if` but a presence check, DINO's `if p.grad is not None:`, or a filter of the items it walks, "
               "ijepa's `grad_logger`, and after no early `return`/`continue` under another test: torchtitan's `train_step` "
               "returns before its logged `.item()` unless `should_log`), "
               "and `torch.cuda.synchronize()`; also in a module's `forward` that returns a loss and is not under `torch.no_grad()` (a "
               "training step runs it once: BLIP's hard negatives drawn with `torch.multinomial(weights[b], 1).item()` per sample, and its "
               "`_dequeue_and_enqueue` reading the buffer `int(self.queue_ptr)`; a registered buffer is a tensor), or in a function defined in the loop's function that the loop calls or "
               "hands to a call (ijepa's `gpu_timer(train_step)`, an optimizer's `step(closure)`; not XLA's "
               "`xm.add_step_closure`, which runs it after the step's device work). A MindSpore gradient function of inputs only "
               "(`ops.value_and_grad(fn, 0, weights=None)`: DPM-Solver's classifier guidance while sampling) runs no "
               "training step, and neither does a loop in a function named for profiling, a benchmark or a warm-up that "
               "steps no optimizer (ultralytics' `profile_ops` times forward and backward for AutoBatch). A method that runs "
               "`backward()` per micro-batch is part of the step of the method that calls it and steps the optimizer "
               "(OLMo's `train_batch` in `train_step`). A name bound in one arm of an `if` keeps its earlier kind in "
               "the other arms (SlowFast's `loss = loss.item()` for detection only). "
               "Reads under a periodic guard (`if step % N == 0:`, or after `if step % N != 0: continue`, with N not 1 by the defaults: a literal, a module "
               "constant, a parameter's or an option's default; lit-llama's `log_interval = 1` reads every step; "
               "or the field of that name in a dataclass of the project modules the file imports classes from: "
               "nanotron's `self.config.logging.iteration_step_info_interval`, 1 by default; or one true in a single "
               "iteration, `if i == 100:` on the loop's variable or a step counter, or a few chosen ones, `if self.global_step in "
               "self.opt.upsample_model_steps:` (torch-ngp); unless it steps an "
               "optimizer the loop steps nowhere else, or zeroes its gradients: gradient accumulation's guard runs at every training step) are the usual "
               "remedy and are not reported; neither are reads in an error message or a branch that ends the run "
               "(`raise`, `sys.exit(1)`: DINO prints the non-finite loss once, on the way out) or a branch taken only when "
               "the gradients overflow (`if overflow:`, `if not grads_finite:`: yolov7_mindspore prints the loss "
               "scale there), `.cpu()` on a model, numbers that are already Python "
               "values, or the batches a `DataLoader` of the file yields, which stay on the host until the loop moves "
               "them (`labels.numpy()` of PyTorch-GAN's InfoGAN). A read the host acts on (a branch on it, or a call that acts on it, `math.isfinite(...)` "
               "or RL's `envs.step(actions)`, directly or through the name it is assigned to) is reported with a "
               "message that says the sync stays.")
    why = ("Reading a device value on the host waits for every queued kernel. That changes how work is scheduled "
           "and overlapped, so observing a run can change it: a NaN that appears without the print may vanish with "
           "it, and the same script with and without logging (or with `CUDA_LAUNCH_BLOCKING=1` / "
           "`ASCEND_LAUNCH_BLOCKING=1`) behaves differently. If results change the same way under the blocking "
           "variable, the sync is the cause.")
    fix = ("Accumulate statistics on the device (`total += loss.detach()`) and read them every N steps or once per "
           "epoch; for debugging comparisons use msprobe's async dump, which keeps statistics on the device and "
           "transfers them once per step.")
    valid = (
        # DINO prints the loss in the branch that ends the run: once, on the way out.
        "import sys\n\nimport torch\n\n\ndef train(model, loader, optimizer):\n    for x in loader:\n"
        "        loss = model(x).sum()\n        loss.backward()\n        optimizer.step()\n"
        "        if optimizer.state.get('failed'):\n            print('Loss is {}'.format(loss.item()))\n"
        "            sys.exit(1)\n",
        # ModelZoo's ResNet50 times the first 100 steps: the sync runs once.
        "import torch\n\nfor i, (x, y) in enumerate(loader):\n    loss = model(x).sum()\n    loss.backward()\n"
        "    optimizer.step()\n    if i == 100:\n        torch.cuda.synchronize()\n",
        # torch-ngp's TensoRF upsamples its grids at a few chosen steps; yolov7_mindspore prints the loss scale only
        # in the steps whose gradients overflow.
        "import torch\n\n\ndef train(self, loader, scaler, optimizer):\n    for x in loader:\n"
        "        self.global_step += 1\n        loss, overflow, finite = self.model(x)\n        loss.backward()\n"
        "        optimizer.step()\n        if overflow:\n            print(scaler.scale.asnumpy())\n"
        "        if finite:\n            print('ok')\n        else:\n            print(scaler.scale.asnumpy())\n"
        "        if self.global_step in self.opt.upsample_steps:\n"
        "            aabb = self.model.aabb.cpu().numpy()\n            self.model.upsample(aabb.tolist())\n",
        # The periodic guard kept in a name (open_clip's `is_metric_step`).
        "import torch\n\n\ndef train(model, loader, optimizer, every=10):\n    for i, x in enumerate(loader):\n"
        "        loss = model(x).sum()\n        loss.backward()\n        optimizer.step()\n"
        "        is_log_step = (i % every == 0) or i == len(loader) - 1\n        if is_log_step:\n"
        "            print(loss.item())\n",
        "import torch\n\n\ndef train(model, loader, optimizer, log_every=50):\n    total = torch.zeros(())\n"
        "    for step, (x, y) in enumerate(loader):\n        loss = torch.nn.functional.cross_entropy(model(x), y)\n"
        "        loss.backward()\n        optimizer.step()\n        total += loss.detach()\n"
        "        if step % log_every == 0:\n            print(f'step {step} loss {loss.item():.4f}')\n"
        "    print(total.item())  # once per epoch\n",
        # ultralytics' `profile_ops`: timing forward and backward, no optimizer step.
        "import torch\n\n\ndef profile_ops(x, ops, n=10):\n    for m in ops:\n        for _ in range(n):\n"
        "            m(x).sum().backward()\n            print(m.stride.tolist())\n",
        "import torch\n\n\ndef evaluate(model, loader):\n    correct = 0\n    for x, y in loader:\n"
        "        correct += (model(x).argmax(1) == y).sum().item()  # no training step here\n    return correct\n",
        "import torch\n\n\ndef train(model, loader, optimizer, epochs):\n    for epoch in range(epochs):\n"
        "        for x, y in loader:\n            loss = model(x, y)\n            loss.backward()\n"
        "            optimizer.step()\n            lr = float(optimizer.param_groups[0]['lr'])\n"
        "            print(f'epoch {epoch} lr {lr}')\n        model.cpu()\n",
        "import torch\n\n\ndef train(model, loader, optimizer):\n    for x, y in loader:\n"
        "        loss = model(x, y)\n        loss.backward()\n        optimizer.step()\n        loss = loss.detach()\n"
        "        loss_value = 0.5\n        print(loss_value)\n",
        # StyleGAN2's lazy regularisation: every 4th iteration one more update, so the read under it is periodic
        "import torch\n\nfor i, x in enumerate(loader):\n    g_loss = g(x).mean()\n    g_loss.backward()\n"
        "    g_optim.step()\n    if i % 4 == 0:\n        path_loss = g.path(x).mean()\n        path_loss.backward()\n"
        "        g_optim.step()\n        print(path_loss.item())\n",
        # PyTorch-GAN's InfoGAN: the labels a DataLoader yields stay on the host; reading them syncs nothing
        "import numpy as np\nimport torch\n\nloader = torch.utils.data.DataLoader(data, batch_size=8)\n"
        "for i, (imgs, labels) in enumerate(loader):\n    codes = np.eye(10)[labels.numpy()]\n"
        "    loss = model(imgs.cuda(), codes).sum()\n    loss.backward()\n    optimizer.step()\n",
        # diffusers' XLA script hands its print to `xm.add_step_closure`: it runs after the step's device work
        "import torch\nimport torch_xla.core.xla_model as xm\n\n\ndef train(model, loader, optimizer):\n"
        "    for x in loader:\n        loss = model(x).sum()\n        loss.backward()\n        optimizer.step()\n\n"
        "        def print_loss(loss):\n            print(f'loss {loss}')\n\n"
        "        xm.add_step_closure(print_loss, args=(loss,))\n",
        # DPM-Solver's classifier guidance samples: a gradient with respect to the image (no weights) trains nothing
        "import mindspore as ms\nfrom mindspore import ops\n\n\ndef sample(model, classifier, x, ts):\n"
        "    grad_fn = ops.value_and_grad(lambda x_in: classifier(x_in).sum(), 0, weights=None)\n"
        "    for t in ts:\n        x = x - model(x, t) + grad_fn(x)[1]\n        print(t.item())\n    return x\n",
        # a closure called under a periodic guard, whose N is a module constant
        "import torch\n\nlog_interval = 10\n\n\ndef train(model, loader, optimizer):\n    def log(loss):\n"
        "        print(loss.item())\n\n    for i, x in enumerate(loader):\n        loss = model(x).sum()\n"
        "        loss.backward()\n        optimizer.step()\n        if i % log_interval == 0:\n            log(loss)\n",
        # torchtitan's `train_step` returns before its logged reads unless the step logs; a periodic early exit
        "import torch\n\n\nclass Trainer:\n    def train_step(self, x):\n        loss = self.model(x).sum()\n"
        "        loss.backward()\n        self.optimizer.step()\n        if not self.metrics.should_log(self.step):\n"
        "            return\n        self.metrics.log(loss.item())\n\n    def train(self, loader, every=10):\n"
        "        for i, x in enumerate(loader):\n            self.train_step(x)\n            if i % every != 0:\n"
        "                continue\n            print(self.model.w.grad.norm().item())\n",
        # swav tests its queue only until it is full: the branch sets the latch that short-circuits the test
        "import torch\n\nuse_queue = False\nfor x in loader:\n    loss = model(x).sum()\n"
        "    if use_queue or not torch.all(queue[-1] == 0):\n        use_queue = True\n    loss.backward()\n"
        "    optimizer.step()\n",
        # a module's forward that returns no loss, or runs without gradients: no training step of its own
        "import torch\nfrom torch import nn\n\n\nclass Router(nn.Module):\n    def forward(self, x):\n"
        "        counts = x.argmax(-1).bincount().tolist()\n        return x.split(counts)\n\n\n"
        "class Teacher(nn.Module):\n    @torch.no_grad()\n    def forward(self, x):\n        loss = x.sum()\n"
        "        print(loss.item())\n        return loss\n",
    )
    invalid = (
        # NVIDIA's ImageNet example names a loss class `loss` in another function: this `loss` is a tensor.
        Invalid("import torch.nn as nn\n\n\ndef build():\n    loss = nn.CrossEntropyLoss\n    return loss()\n\n\n"
                "def train(loader, model, criterion, optimizer, losses):\n    for images, target in loader:\n"
                "        loss = criterion(model(images), target)\n        losses.append(loss.item())\n"
                "        loss.backward()\n        optimizer.step()\n", lines=(12,)),
        # mindrlhf's PPO loop prints its losses with `str.format` every step.
        Invalid("import torch\n\n\ndef train(model, loader, optimizer):\n    for x in loader:\n"
                "        loss = model(x).sum()\n        loss.backward()\n        optimizer.step()\n"
                "        print(\"loss: {}\".format(loss))\n", lines=(9,), severity="info"),
        # PPO's early stop on the KL read into a name: the sync stays ("the host branches on `kl`").
        Invalid("import torch\n\n\ndef train(model, loader, optimizer, target_kl=0.01):\n    for x in loader:\n"
                "        loss = model(x).sum()\n        kl = torch.mean(loss).item()\n        if kl > 1.5 * target_kl:\n"
                "            break\n        loss.backward()\n        optimizer.step()\n", lines=(7,), severity="info"),
        # SB3's PPO stops early on the KL only when `target_kl` is set, which it is not by default: the message says
        # so ("only when `self.target_kl is not None`: not so by default") and keeps the sync-removing advice.
        Invalid("import torch\n\n\nclass PPO:\n    def __init__(self, target_kl=None):\n"
                "        self.target_kl = target_kl\n\n    def train(self, model, loader, optimizer):\n"
                "        for x in loader:\n            loss = model(x).sum()\n"
                "            kl = torch.mean(loss).cpu().numpy()\n"
                "            if self.target_kl is not None and kl > 1.5 * self.target_kl:\n                break\n"
                "            loss.backward()\n            optimizer.step()\n", lines=(11,), severity="info"),
        # Reads the host acts on (CleanRL hands the actions to the environment; a NaN check stops the run): reported
        # with a message that says the sync stays.
        Invalid("import math\n\nimport torch\n\n\ndef train(agent, envs, opt, obs):\n    while True:\n"
                "        actions = agent(obs).argmax(-1)\n        obs, reward = envs.step(actions.cpu().numpy())\n"
                "        loss = -reward.mean()\n        loss.backward()\n        opt.step()\n"
                "        if not math.isfinite(loss.item()):\n            break\n", lines=(9, 13)),
        Invalid("import torch\n\n\ndef train(model, loader, optimizer, criterion):\n    for x, y in loader:\n"
                "        optimizer.zero_grad()\n        loss = criterion(model(x), y)\n        loss.backward()\n"
                "        optimizer.step()\n        running = loss.item()\n"
                "        preds = model(x).argmax(1).cpu().numpy()\n", lines=(10, 11)),
        Invalid("import torch\n\nfor batch in loader:\n    loss = model(**batch).loss\n    loss.backward()\n"
                "    optimizer.step()\n    torch.cuda.synchronize()\n    print(loss)\n    print(f'loss={loss:.3f}')\n",
                lines=(7, 8, 9)),
        Invalid("import torch\n\n\ndef train_step(model, batch, opt):\n    loss = model(batch)\n    loss.backward()\n"
                "    opt.step()\n    return loss\n\n\ndef main(model, loader, opt):\n    for batch in loader:\n"
                "        loss = train_step(model, batch, opt)\n        value = float(loss)\n", lines=(14,)),
        Invalid("import mindspore as ms\n\n\ndef train(net, dataset, optimizer, loss_fn):\n"
                "    grad_fn = ms.value_and_grad(loss_fn, None, optimizer.parameters)\n"
                "    for data, label in dataset.create_tuple_iterator():\n"
                "        loss, grads = grad_fn(data, label)\n        optimizer(grads)\n"
                "        print(loss.asnumpy())\n", lines=(9,)),
        # torchtune: the gradient accumulation guard runs at every optimizer step
        Invalid("import torch\n\n\ndef train(model, loader, optimizer, accum):\n"
                "    for idx, x in enumerate(loader):\n        loss = model(x).sum() / accum\n        loss.backward()\n"
                "        if (idx + 1) % accum == 0:\n            optimizer.step()\n"
                "            print(loss.detach().item())\n", lines=(10,)),
        # open_clip skips a step on a non-finite loss: testing a tensor calls `bool()` on it (a sync that stays)
        Invalid("import torch\n\nfor x in loader:\n    loss = model(x).sum()\n    if not torch.isfinite(loss):\n"
                "        continue\n    loss.backward()\n    optimizer.step()\n", lines=(5,)),
        # ... but once the loop moves them to the device, reading them syncs
        Invalid("import torch\n\nloader = torch.utils.data.DataLoader(data, batch_size=8)\n"
                "for imgs, labels in loader:\n    labels = labels.cuda()\n    loss = model(imgs.cuda()).sum()\n"
                "    loss.backward()\n    optimizer.step()\n    print(labels.tolist())\n", lines=(9,)),
        # DINO's clip_gradients: the read is under a presence check, which holds for every trained parameter
        Invalid("import torch\n\n\ndef clip_gradients(model, clip):\n    norms = []\n"
                "    for name, p in model.named_parameters():\n        if p.grad is not None:\n"
                "            param_norm = p.grad.data.norm(2)\n            norms.append(param_norm.item())\n"
                "    return norms\n\n\ndef train(model, loader, optimizer):\n    for x in loader:\n"
                "        model(x).sum().backward()\n        clip_gradients(model, 3.0)\n        optimizer.step()\n",
                lines=(16,)),
        # Swin's SimMIM: a helper called every step reads each parameter's gradient norm on the host
        Invalid("import torch\n\n\ndef get_grad_norm(parameters):\n    total = 0.0\n    for p in parameters:\n"
                "        total += p.grad.norm().item() ** 2\n    return total ** 0.5\n\n\n"
                "def train(model, loader, optimizer):\n    for x in loader:\n        model(x).sum().backward()\n"
                "        norm = get_grad_norm(model.parameters())\n        optimizer.step()\n", lines=(14,)),
        # SlowFast: the detection branch's `loss = loss.item()` leaves `loss` a tensor in the other branch
        Invalid("import torch\n\n\ndef train(model, loader, optimizer, detection):\n    for x in loader:\n"
                "        loss = model(x).sum()\n        loss.backward()\n        optimizer.step()\n"
                "        if detection:\n            loss = loss.item()\n        else:\n"
                "            loss, top1 = (loss.item(), 0.0)\n", lines=(10, 12)),
        # lit-llama: a log interval of 1 (a module constant) reads at every step
        Invalid("import torch\n\nlog_interval = 1\n\n\ndef train(model, loader, optimizer):\n"
                "    for iter_num, x in enumerate(loader):\n        loss = model(x).sum()\n        loss.backward()\n"
                "        optimizer.step()\n        if iter_num % log_interval == 0:\n"
                "            print(f'loss {loss.item():.4f}')\n", lines=(12,)),
        # ijepa: the step is a closure the loop hands to a timer; it returns `float(loss)` and logs each
        # parameter's gradient norm with `float(torch.norm(...))`
        Invalid("import torch\n\n\ndef grad_logger(named_params):\n    norms = []\n    for n, p in named_params:\n"
                "        if p.grad is not None and not n.endswith('.bias'):\n"
                "            norms.append(float(torch.norm(p.grad.data)))\n    return norms\n\n\n"
                "def main(encoder, loader, optimizer, gpu_timer):\n    for imgs in loader:\n"
                "        def train_step():\n            loss = encoder(imgs).mean()\n            loss.backward()\n"
                "            optimizer.step()\n            stats = grad_logger(encoder.named_parameters())\n"
                "            return float(loss), stats\n        (loss, stats), etime = gpu_timer(train_step)\n",
                lines=(18, 19)),
        # OLMo: `train_batch` runs `backward()` per micro-batch; the method the loop calls, `train_step`, then
        # steps the optimizer and reads the loss: one step per call
        Invalid("import torch\n\n\nclass Trainer:\n    def train_batch(self, batch):\n"
                "        for micro_batch in batch:\n            loss = self.model(micro_batch).mean()\n"
                "            loss.backward()\n        return loss\n\n    def train_step(self, batch):\n"
                "        loss = self.train_batch(batch)\n        self.optim.step()\n"
                "        self.cur_train_loss = loss.item()\n\n    def fit(self):\n"
                "        for batch in self.train_loader:\n            self.train_step(batch)\n", lines=(18,)),
        # jepa: a helper reads the optimizer's state per parameter; the clipped gradient norm and a custom autograd
        # function's output read with `float()`
        Invalid("import torch\n\n\nclass AllReduce(torch.autograd.Function):\n    @staticmethod\n"
                "    def forward(ctx, x):\n        return x\n\n\ndef adamw_logger(optimizer):\n"
                "    state = optimizer.state_dict().get('state')\n    means = []\n    for key in state:\n"
                "        means.append(float(state.get(key).get('exp_avg').abs().mean()))\n    return means\n\n\n"
                "def train(encoder, loader, optimizer):\n    for x in loader:\n        encoder(x).mean().backward()\n"
                "        norm = torch.nn.utils.clip_grad_norm_(encoder.parameters(), 1.0)\n        optimizer.step()\n"
                "        stats = adamw_logger(optimizer)\n        grad_norm = float(norm)\n"
                "        var = float(AllReduce.apply(x.var()))\n", lines=(23, 24, 25)),
        # DETR: the logged loss is a `sum()` of a dict of device tensors
        Invalid("import torch\n\n\ndef train(model, loader, optimizer, weights):\n    for x, y in loader:\n"
                "        parts = model(x, y)\n        scaled = {k: v * weights[k] for k, v in parts.items()}\n"
                "        total = sum(scaled.values())\n        total.backward()\n        optimizer.step()\n"
                "        value = total.item()\n        print(sum([1, 2]), max(0, value))\n", lines=(11,)),
        # LLaMA-Factory reads the norm with `.item()`; `torch.tensor(grad_norm)` of that float is a host tensor, whose
        # test syncs nothing more. A test of two device tensors is one finding; a helper skipping absent gradients
        # still reads the others at every call
        Invalid("import torch\n\n\ndef norms(parameters):\n    out = []\n    for p in parameters:\n"
                "        if p.grad is None:\n            continue\n        out.append(p.grad.norm().item())\n"
                "    return out\n\n\ndef train(model, loader, optimizer):\n    for x in loader:\n"
                "        loss = model(x).sum()\n        if torch.isnan(loss) or torch.isinf(loss):\n            continue\n"
                "        loss.backward()\n        grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0).item()\n"
                "        if torch.isfinite(torch.tensor(grad_norm)):\n            optimizer.step()\n"
                "        stats = norms(model.parameters())\n", lines=(16, 19, 22)),
        # BLIP's forward returns its losses: a training step runs it, with a hard negative drawn and read per sample
        # and the queue pointer, a buffer, read in the method it calls
        Invalid("import torch\nfrom torch import nn\n\n\nclass Pretrain(nn.Module):\n    def __init__(self):\n"
                "        super().__init__()\n        self.register_buffer('queue_ptr', torch.zeros(1, dtype=torch.long))\n\n"
                "    def forward(self, image, text):\n        weights = (image @ text.T).softmax(1)\n        negatives = []\n"
                "        for b in range(image.size(0)):\n            neg_idx = torch.multinomial(weights[b], 1).item()\n"
                "            negatives.append(image[neg_idx])\n        self._dequeue_and_enqueue(image)\n"
                "        loss_itm = torch.stack(negatives).mean()\n        return loss_itm\n\n"
                "    @torch.no_grad()\n    def _dequeue_and_enqueue(self, feats):\n        ptr = int(self.queue_ptr)\n"
                "        self.queue_ptr[0] = (ptr + feats.size(0)) % 64\n", lines=(14, 16)),
    )

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        # (scope, name) -> its bindings in source order: (from where, holds a tensor?, the other arms of its `if`s)
        self.bindings: dict[tuple[int, str], list[tuple[Position, bool | None, list[tuple[Position, Position]]]]] = {}
        self.candidates: list[tuple[Site, Runs, str]] = []
        self.closures: dict[tuple[int, str], Function] = {}  # (scope, name) -> a function defined in a function
        self.closure_runs: dict[tuple[int, str], list[Runs]] = {}  # where each closure is called or handed on
        # Scopes (function ids, 0 for the module) whose text has a loop: only there can a name matter.
        self.looping_scopes: set[int] = {0} if LOOP_WORD.search(ctx.source) else set()
        self._project: project.LocalImports | None = None  # the file's imports of project modules, read once
        self._functions: dict[str, ast.AST] = {}  # the file's top-level functions, by name (read with `_project`)
        self._config_trees: list[ast.Module] | None = None  # the modules the file imports classes from, read once
        self._autograd_functions: dict[str, bool] = {}  # class name -> whether it is a torch.autograd.Function
        self._defaults: LeftAtDefault | None = None  # the file's parameters left at their defaults, made when needed
        self._off_branch = ""  # OFF_BRANCH for the read being judged, where `_use_of_names` found one
        self._class_buffers: dict[int, frozenset[str]] = {}  # id of a class -> the buffers it registers
        self.forwards: dict[int, str] = {}  # id of a module's `forward` that returns a loss -> its class's name
        self._sets_default_device: bool | None = None  # whether the file sets a default device, read when needed

    # --- what names hold -------------------------------------------------------------------
    def visit_Assign(self, node: ast.Assign | ast.AnnAssign) -> None:
        if node.value is None or self._scope() not in self.looping_scopes:
            return
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        for target in targets:
            if isinstance(target, ast.Tuple) and isinstance(node.value, ast.Tuple) and len(
                    target.elts) == len(node.value.elts):  # `total, steps = 0, 0`
                pairs = list(zip(target.elts, node.value.elts, strict=True))
            else:
                pairs = [(target, node.value)]
            for element, value in pairs:
                name = target_name(element)
                if name is not None:
                    self._bind_later(node, name, self._tensorish(value))
                for unpacked in _unpacked(element):  # `loss, acc = fn()`: each holds what the code cannot tell
                    self._bind_later(node, unpacked, None)

    visit_AnnAssign = visit_Assign

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        name = target_name(node.target)
        if name is None or self._scope() not in self.looping_scopes:
            return
        if self._tensorish(node.value):  # `total += loss` makes `total` a tensor
            self._bind_later(node, name, True)

    def visit_For(self, node: ast.For | ast.AsyncFor) -> None:
        iterated = node.iter.elts if isinstance(node.iter, (ast.List, ast.Tuple)) else None
        literal = iterated is not None and all(self._tensorish(e) is False for e in iterated)
        on_host = literal or self._loader_batches(node.iter)
        for target in ast.walk(node.target):  # `for flag in [False, True]:` binds Python values
            if isinstance(target, ast.Name):
                self._bind(node, (self._scope(), target.id), (node.lineno, node.col_offset),
                           False if on_host else None)

    def _loader_batches(self, iterated: ast.expr) -> bool:
        """Whether a loop iterates `DataLoader`s the file builds (also through `enumerate`/`tqdm`/`zip`): their
        batches are host tensors until moved, so reading them (PyTorch-GAN's `to_categorical(labels.numpy(), ...)`)
        is no device sync; a name the loop rebinds (`labels = labels.cuda()`) takes the kind of its new value."""
        while isinstance(iterated, ast.Call) and iterated.args and target_name(iterated.func) in ("enumerate", "tqdm"):
            iterated = iterated.args[0]
        zipped = iterated.args if isinstance(iterated, ast.Call) and target_name(iterated.func) == "zip" else [iterated]
        names = [target_name(item) if isinstance(item, (ast.Name, ast.Attribute)) else None for item in zipped]
        return all(name is not None and self.ctx.assigned_calls.get(name) in catalogue.TORCH_DATALOADERS
                   for name in names)

    visit_AsyncFor = visit_For

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        owner = next((a for a in reversed(self.ctx.ancestors) if isinstance(a, (*FUNCTION_TYPES, ast.ClassDef))), None)
        closure = isinstance(owner, FUNCTION_TYPES) and id(owner) in self.looping_scopes
        if closure:  # ijepa's `def train_step():` in its loop: runs wherever the loop calls it
            self.closures[(id(owner), node.name)] = node
        elif isinstance(owner, ast.ClassDef) and self._training_forward(node):
            self.forwards[id(node)] = owner.name
        elif not self.looping_scopes or not LOOP_WORD.search(
                "\n".join(self.ctx.lines[node.lineno - 1:node.end_lineno])):
            return
        self.looping_scopes.add(id(node))
        arguments = node.args.posonlyargs + node.args.args + node.args.kwonlyargs
        defaults = [None] * (len(node.args.posonlyargs + node.args.args) - len(node.args.defaults))
        defaults += node.args.defaults + node.args.kw_defaults
        for argument, default in zip(arguments, defaults, strict=True):
            annotation = argument.annotation
            scalar = isinstance(annotation, ast.Name) and annotation.id in ("bool", "int", "float", "str")
            if scalar or isinstance(default, ast.Constant) and default.value is not None:
                self._bind(node, (id(node), argument.arg), (node.lineno, node.col_offset), False)  # a number / flag

    visit_AsyncFunctionDef = visit_FunctionDef

    def _training_forward(self, function: Function) -> bool:
        """Whether a method is a module's `forward` that returns a loss (BLIP's `return loss_ita, loss_itm, loss_lm`,
        MoCo v3's `return self.contrastive_loss(q1, k2) + ...`), not under `torch.no_grad()`: a training step runs it
        once."""
        if function.name != "forward" or any(
                self.ctx.qualname(d.func if isinstance(d, ast.Call) else d) in catalogue.GRAD_DISABLING_CONTEXTS
                for d in function.decorator_list):
            return False
        return any(isinstance(node, ast.Return) and node.value is not None and any(
            LOSS_NAME.match(target_name(part.func if isinstance(part, ast.Call) else part) or "")
            for part in ast.walk(node.value) if isinstance(part, (ast.Name, ast.Call)))
            for node in walk_scope(function))

    def _bind_later(self, node: ast.stmt, name: str, kind: bool | None) -> None:
        """Bind after the statement's own value was visited (`loss = float(loss)` reads the old `loss`)."""
        self._bind(node, (self._scope(), name), (node.end_lineno or 0, node.end_col_offset or 0), kind)

    def _bind(self, node: ast.stmt, key: tuple[int, str], start: Position, kind: bool | None) -> None:
        """Record a binding by statement `node` from `start` on, except in the other arms of the `if`s around it
        (SlowFast's `loss = loss.item()` for detection leaves `loss` a tensor in the classification `else:`)."""
        path = [*self.ctx.ancestors, node]
        others = [_span(parent.orelse) for parent, child in zip(path, path[1:], strict=False)
                  if isinstance(parent, ast.If) and parent.orelse and any(child is s for s in parent.body)]
        self.bindings.setdefault(key, []).append((start, kind, others))

    def _scope(self) -> int:
        return next((id(a) for a in reversed(self.ctx.ancestors) if isinstance(a, FUNCTION_TYPES)), 0)

    def _kind_of(self, name: str, at: ast.AST) -> bool | None:
        """What the latest binding of `name` that reaches `at` holds (None: unknown or unbound)."""
        position = (at.lineno, at.col_offset)
        for start, kind, others in reversed(self.bindings.get((self._scope(), name), ())):
            if start <= position and not any(first <= position <= last for first, last in others):
                return kind
        return None

    def _tensorish(self, expr: ast.AST) -> bool | None:
        """True: holds a device tensor; False: a Python value or a non-tensor; None: cannot tell."""
        if isinstance(expr, (ast.Name, ast.Attribute)):
            name = target_name(expr) or ""
            kind = self._kind_of(name, expr)
            if kind is not None:
                return kind
            origin = self.ctx.assigned_calls.get(name)
            if origin is not None:
                return self._qualified_kind(origin)
            return True if LOSS_NAME.match(name) or _own_attribute(expr, self._buffers()) else None
        if isinstance(expr, ast.Call):
            return self._call_kind(expr)
        if isinstance(expr, ast.Subscript) and _optimizer_state(expr):
            return True
        if isinstance(expr, ast.BinOp):
            sides = (self._tensorish(expr.left), self._tensorish(expr.right))
            return True if True in sides else (False if sides == (False, False) else None)
        if isinstance(expr, ast.UnaryOp):
            return self._tensorish(expr.operand)
        if isinstance(expr, ast.IfExp):
            branches = {self._tensorish(expr.body), self._tensorish(expr.orelse)}
            return branches.pop() if len(branches) == 1 else None
        if isinstance(expr, (ast.Constant, ast.JoinedStr, ast.List, ast.Tuple, ast.Dict, ast.Set, ast.ListComp,
                             ast.DictComp, ast.Compare, ast.BoolOp)):
            return False
        return None

    def _call_kind(self, call: ast.Call) -> bool | None:
        qualified = self.ctx.call_qualname(call)
        if qualified is not None:
            return False if self._host_tensor(call, qualified) else self._qualified_kind(qualified)
        func = call.func
        if isinstance(func, ast.Name):
            if func.id in HOST_VALUE_BUILTINS and func.id not in self.ctx.imports.bindings:
                return False
            if func.id in PASSTHROUGH_BUILTINS and func.id not in self.ctx.imports.bindings:
                kinds = {self._tensorish(arg) for arg in call.args}
                return True if True in kinds else (False if kinds == {False} else None)
            origin = self.ctx.assigned_calls.get(func.id)  # `criterion(out, y)` of an nn loss module
            return True if origin is not None and origin.startswith("torch.nn.") else None
        if isinstance(func, ast.Attribute):
            if func.attr in HOST_VALUE_METHODS:
                return False
            if func.attr == "apply" and isinstance(func.value, ast.Name) and self._autograd_function(func.value.id):
                return True  # jepa's `AllReduce.apply(x)`: a custom autograd function's output
            return True if _optimizer_state(call) or self._tensorish(func.value) else None
        return None

    def _host_tensor(self, call: ast.Call, qualified: str | None) -> bool:
        """Whether a torch call makes a tensor on the host: `torch.tensor(x)` of a Python value without `device=`
        (LLaMA-Factory's `torch.tensor(grad_norm)` of the norm read with `.item()`), or a torch function of such
        tensors (`torch.isfinite(torch.tensor(grad_norm))`); never where the file makes an accelerator the default
        device."""
        module = (qualified or "").rpartition(".")[0]
        if module not in TENSOR_FUNCTION_MODULES or keyword(call, "device") is not None or self._default_device():
            return False
        if qualified in HOST_TENSOR_MAKERS:
            return bool(call.args) and self._tensorish(call.args[0]) is False
        tensors = [arg for arg in call.args if not isinstance(arg, ast.Constant)]
        return bool(tensors) and all(isinstance(arg, ast.Call) and self._host_tensor(arg, self.ctx.call_qualname(arg))
                                     for arg in tensors)

    def _default_device(self) -> bool:
        """Whether the file sets a default device (`torch.set_default_device`, `with torch.device(d):`), read once."""
        if self._sets_default_device is None:
            setters = default_device.SETTERS | default_device.TENSOR_TYPE_SETTERS | default_device.DEVICE_CONTEXTS
            self._sets_default_device = any(self.ctx.call_qualname(node) in setters for node in ast.walk(self.ctx.tree)
                                            if isinstance(node, ast.Call))
        return self._sets_default_device

    def _autograd_function(self, name: str) -> bool:
        """Whether `name` is a `torch.autograd.Function` subclass of the file or of a project module it imports."""
        if name not in self._autograd_functions:
            module = project.file_module(self.ctx.path, self.ctx.tree, self.ctx.imports)
            self._autograd_functions[name] = name[:1].isupper() and project.class_base(
                module, name, catalogue.AUTOGRAD_FUNCTION_BASES) is not None
        return self._autograd_functions[name]

    @staticmethod
    def _qualified_kind(qualified: str) -> bool | None:
        module, _, name = qualified.rpartition(".")
        if module in TENSOR_FUNCTION_MODULES and name[:1].islower() and name not in NOT_TENSOR_FUNCTIONS \
                or qualified in TENSOR_FUNCTIONS:
            return True
        if qualified.startswith("torch.nn.") and name[:1].isupper():
            return False  # a module or loss object, not a tensor
        return None

    # --- syncs -------------------------------------------------------------------------------
    def visit_Call(self, node: ast.Call) -> None:
        if self._scope() not in self.looping_scopes:
            return
        self._note_closure_run(node)
        func = node.func
        qualified = self.ctx.call_qualname(node) if self.ctx.callee_name(node) in SYNC_NAMES else None
        if qualified in catalogue.HOST_SYNC_CALLS:
            self._candidate(node, f"`{qualified}()`")
        elif isinstance(func, ast.Attribute) and func.attr in catalogue.HOST_SYNC_METHODS and not node.args:
            parent = self.ctx.ancestors[-1] if self.ctx.ancestors else None
            if isinstance(parent, ast.Attribute) and parent.attr in MODULE_METHODS:
                return  # `model.cpu().parameters()`: a module moved, not a tensor read
            if qualified is None and self._syncs_receiver(func.attr, func.value):
                self._candidate(node, f"`.{func.attr}()`")
        elif (isinstance(func, ast.Attribute) and func.attr == "format" and isinstance(func.value, ast.Constant)
              and isinstance(func.value.value, str)):  # `"loss: {}".format(out[0])`
            formatted = next((a for a in [*node.args, *(k.value for k in node.keywords)] if self._tensorish(a)), None)
            if formatted is not None:
                self._candidate(formatted, "formatting a tensor with `str.format`")
        elif isinstance(func, ast.Name) and func.id not in self.ctx.imports.bindings and len(node.args) >= 1:
            if func.id in ("float", "int") and len(node.args) == 1 and self._tensorish(node.args[0]):
                self._candidate(node, f"`{func.id}()` of a tensor")
            elif func.id == "print":
                printed = next((a for a in node.args if self._tensorish(a)), None)
                if printed is not None:
                    self._candidate(printed, "printing a tensor")
        if qualified is None:
            self._helper_sync(node)

    def _note_closure_run(self, call: ast.Call) -> None:
        """Record where a closure runs: called (`step()`) or handed to a call (ijepa's `gpu_timer(train_step)`, an
        optimizer's `step(closure)`), which runs it; not to XLA's `add_step_closure`, which runs it after the step."""
        scope = self._scope()
        handed = [call.func, *call.args, *(k.value for k in call.keywords)]
        names = {n.id for n in handed if isinstance(n, ast.Name) and (scope, n.id) in self.closures}
        if not names or self.ctx.imports.resolve_any(call.func) in catalogue.DEFERRED_STEP_CLOSURES:
            return
        runs = self._runs(call)
        if runs is None:
            return
        for name in names:
            self.closure_runs.setdefault((scope, name), []).append(runs)

    def visit_If(self, node: ast.If | ast.While) -> None:
        """`if torch.isnan(loss):`, `while not flag.any():`, `if torch.isnan(x) or torch.isinf(x):`: testing a
        tensor calls `bool()` on it, a sync."""
        if self._scope() not in self.looping_scopes:
            return
        test = next((t for t in _operands(node.test, node.body) if isinstance(t, ast.Call) and self._call_kind(t)), None)
        if test is not None:  # the first: one finding per test
            self._candidate(test, f"testing a tensor (`{condition_text(test, 40)}`)", "the host branches on it")

    visit_While = visit_If

    def _helper_sync(self, node: ast.Call) -> None:
        """A call of a function of the file or of a project module, or of the class's own method, whose body reads
        a tensor on the host (Swin's `get_grad_norm(...)`, one `.item()` per parameter; guided diffusion's
        `log_loss_dict(...)`): the sync runs wherever it is called."""
        definition, path = self._definition(node)
        read = _host_read(definition, self._buffers()) if definition is not None else None
        if read is not None:
            where = f"{_read_text(read)} on line {read.lineno}" + (f" of {path.name}" if path else "")
            self._candidate(node, f"`{condition_text(node.func, 40)}(...)` reads a tensor on the host ({where})")

    def _definition(self, node: ast.Call) -> tuple[ast.FunctionDef | ast.AsyncFunctionDef | None, Path | None]:
        """The function a call runs, and its project file (None: this file): the file's own (a function, or a
        method of the class around the call), or a project module's, through the file's imports (`clip_gradients(...)`
        imported from it, or DINO's `utils.clip_gradients(...)` on the module)."""
        own = self.ctx.own_method_called(node)
        if own is not None:
            cls = next((a for a in reversed(self.ctx.ancestors) if isinstance(a, ast.ClassDef)), None)
            found = [item for item in cls.body if isinstance(item, FUNCTION_TYPES) and item.name == own] if cls else []
            return (found[-1] if found else None), None
        if self._project is None:
            self._project = project.local_imports(project.import_statements(self.ctx.tree.body))
            self._functions = {item.name: item for item in self.ctx.tree.body if isinstance(item, FUNCTION_TYPES)}
        return pinning.called_function(node, self._functions, project.file_folder(self.ctx.path), self._project)

    def _buffers(self) -> frozenset[str]:
        """The buffers the class around the code registers (`self.register_buffer("queue_ptr", ...)`): tensors."""
        cls = next((a for a in reversed(self.ctx.ancestors) if isinstance(a, ast.ClassDef)), None)
        if cls is None:
            return frozenset()
        if id(cls) not in self._class_buffers:
            self._class_buffers[id(cls)] = frozenset(
                name for call in ast.walk(cls) if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
                and call.func.attr == "register_buffer" and target_name(call.func.value) == "self" and call.args
                and isinstance(name := constant(call.args[0]), str))
        return self._class_buffers[id(cls)]

    def visit_FormattedValue(self, node: ast.FormattedValue) -> None:
        if self._scope() in self.looping_scopes and self._tensorish(node.value):
            self._candidate(node.value, "formatting a tensor in an f-string")

    def _syncs_receiver(self, method: str, receiver: ast.AST) -> bool:
        """Whether `receiver.<method>()` reads a device tensor not already read by an inner sync."""
        inner = receiver
        while isinstance(inner, (ast.Call, ast.Attribute, ast.Subscript)):
            if isinstance(inner, ast.Call) and isinstance(inner.func, ast.Attribute) and (
                    inner.func.attr in catalogue.HOST_SYNC_METHODS):
                return False  # `x.cpu().numpy()`: reported at `.cpu()`
            inner = inner.func if isinstance(inner, ast.Call) else inner.value
        if self.ctx.qualname(receiver) is not None:
            return False  # a module attribute
        name = target_name(receiver)
        if name is None:
            return True
        if self.ctx.assigned_calls.get(name, "").startswith("numpy."):
            return False
        if method == "cpu" and (MODULE_NAME.search(name) or self._tensorish(receiver) is False):
            return False
        return self._tensorish(receiver) is not False

    def _candidate(self, node: ast.AST, what: str, use: str | None = None) -> None:
        if any(isinstance(a, ast.Raise) for a in self.ctx.ancestors) or self._on_the_way_out(node):
            return  # an error message: runs once, on the way out
        runs = self._runs(node)
        region = runs and (runs.loops[0] if runs.loops else self.closures.get(runs.closure))
        if region is not None:
            self._off_branch = ""
            use = use or self._host_use(node, region)
            forward = next((self.forwards[id(f)] for f in runs.loops if id(f) in self.forwards), None)
            where = f"in `{forward}.forward`, which returns a loss, so a training step runs it" if forward else \
                "in the training loop"
            remedy = FORWARD_REMEDY if forward else REMEDY + self._off_branch
            message = f"{what} {where}: " + (NEEDED.format(use=use) if use else remedy)
            self.candidates.append((self.ctx.site(node), runs, message))

    def _on_the_way_out(self, node: ast.AST) -> bool:
        """Whether `node` is in a branch that ends the run (`print(loss.item()); sys.exit(1)` after a non-finite
        loss, DINO): it runs once, not every step."""
        path = [*self.ctx.ancestors, node]
        for parent, child in zip(path, path[1:], strict=False):
            branch = parent.body if isinstance(parent, ast.If) and child in parent.body else \
                parent.orelse if isinstance(parent, ast.If) and child in parent.orelse else None
            last = branch[-1] if branch else None
            if isinstance(last, ast.Raise) or isinstance(last, ast.Expr) and isinstance(last.value, ast.Call) \
                    and ast.unparse(last.value.func) in EXITS:
                return True
        return False

    def _host_use(self, node: ast.AST, loop: ast.AST) -> str | None:
        """What needs the value on the host, where the code shows it: a branch (`if loss.item() > best:`, early
        stopping), or a call that acts on it (`envs.step(actions)`, RL's environment; `math.isfinite(loss)`),
        directly or through the name it is assigned to in the loop; None for statistics (printed, logged, kept)."""
        path = [*self.ctx.ancestors, node]
        for parent, child in zip(reversed(path[:-1]), reversed(path[1:]), strict=True):
            if isinstance(parent, (ast.If, ast.While, ast.IfExp, ast.Assert)) and child is parent.test:
                return "the host branches on it"
            if isinstance(parent, ast.Call) and child is not parent.func:
                return f"`{condition_text(parent.func, 40)}` takes it" if self._acts_on(parent) else None
            if isinstance(parent, ast.Assign):
                return self._use_of_names({t.id for t in parent.targets if isinstance(t, ast.Name)}, parent, loop)
            if isinstance(parent, ast.stmt):
                return None
        return None

    def _use_of_names(self, names: set[str], assign: ast.Assign, loop: ast.AST) -> str | None:
        """What needs a value assigned to `names` later in the loop: a branch on it (`kl = ....item()`, then
        `if kl > target: break`), or a call acting on it (`math.isnan(sum(losses.values()))`)."""
        nodes = list(ast.walk(loop))
        for node in nodes:
            if isinstance(node, ast.Call) and self._acts_on(node):
                for value in (*node.args, *(k.value for k in node.keywords)):
                    found = _mentioned(value, names, assign.lineno)
                    if found is not None:
                        return f"`{condition_text(node.func, 40)}` takes `{found}`"
        for node in nodes:
            if isinstance(node, (ast.If, ast.While, ast.IfExp, ast.Assert)):
                found = _mentioned(node.test, names, assign.lineno)
                off = self._off_before(node.test, names, assign.lineno) if found is not None else None
                if off is not None:
                    self._off_branch = OFF_BRANCH.format(found=found, condition=condition_text(off, 40))
                elif found is not None:
                    return f"the host branches on `{found}`"
        return None

    def _off_before(self, test: ast.expr, names: set[str], after: int) -> ast.expr | None:
        """The operand of an `and` test, before the first reading `names`, that is false with the defaults (a
        parameter every call in the file leaves so, or `self.x` that `__init__` stores from one; an option's
        default): SB3's PPO `if self.target_kl is not None and approx_kl_div > 1.5 * self.target_kl:`, with
        `target_kl=None`, never reads the value by default."""
        if not (isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And)):
            return None
        self._defaults = self._defaults or LeftAtDefault(self.ctx)
        parameters, options = self._defaults.lookup(self.ctx.current_def()), opt_in.options(self.ctx)

        def lookup(node: ast.expr) -> object:
            found = parameters(node)
            return options(node) if found is conditions.UNKNOWN else found

        for operand in test.values:
            if _mentioned(operand, names, after) is not None:
                return None
            if conditions.truth(operand, lookup) is False:
                return operand
        return None

    def _runs(self, node: ast.AST) -> Runs | None:
        """Where every iteration evaluates `node` (see Runs; not in a `for` header); None under a guard true in
        one iteration only (`if i == 100:`)."""
        ancestors = self.ctx.ancestors
        runs = Runs([], [], None)
        for index in range(len(ancestors) - 1, -1, -1):
            ancestor = ancestors[index]
            child = ancestors[index + 1] if index + 1 < len(ancestors) else node
            block = _block_of(ancestor, child) or []
            for at, exit_ in enumerate(block[:block.index(child)] if block else ()):
                divisors = self._divisors(exit_.test) if _exits_early(exit_) else None  # `if i % N != 0: continue`
                if divisors and not self._steps_optimizer(block[at + 1:], ancestors[:index + 1]):
                    runs.guards.append((divisors, self.ctx.current_def()))
            if isinstance(ancestor, FUNCTION_TYPES):
                if id(ancestor) in self.forwards:
                    runs.loops.append(ancestor)  # runs once per training step
                outer = next((a for a in reversed(ancestors[:index]) if isinstance(a, FUNCTION_TYPES)), None)
                key = (id(outer), ancestor.name)
                return runs._replace(closure=key if self.closures.get(key) is ancestor else None)
            if isinstance(ancestor, (ast.Lambda, ast.ClassDef)):
                break
            if isinstance(ancestor, ast.If) and child is not ancestor.test and _on_overflow(
                    ancestor.test, any(s is child for s in ancestor.body)):
                return None
            if isinstance(ancestor, ast.If) and any(s is child for s in ancestor.body):
                once, divisors = _once(ancestor.test, ancestors[:index]), self._divisors(ancestor.test)
                if (once or divisors) and not self._steps_optimizer(ancestor.body, ancestors[:index]):
                    if once:
                        return None
                    runs.guards.append((divisors, self.ctx.current_def()))
            if isinstance(ancestor, (ast.For, ast.AsyncFor, ast.While)):
                if not (isinstance(ancestor, (ast.For, ast.AsyncFor)) and child in (ancestor.iter, ancestor.target)):
                    runs.loops.append(ancestor)
        return runs

    def _divisors(self, test: ast.expr) -> list[ast.expr]:
        """The N of each `step % N` a guard tests, also through a name the function assigns one to (open_clip's
        `is_metric_step = (i_accum % metric_every == 0) or is_console_step`)."""
        found = _divisors(test)
        names = {node.id for node in ast.walk(test) if isinstance(node, ast.Name)}
        if found or not names:
            return found
        scope = self.ctx.current_def() or self.ctx.tree
        return [divisor for node in walk_scope(scope) if isinstance(node, ast.Assign)
                and any(isinstance(target, ast.Name) and target.id in names for target in node.targets)
                for divisor in _divisors(node.value)]

    def _skips_steps(self, guard: tuple[list[ast.expr], Function | None]) -> bool:
        """Whether a `% N` guard skips iterations: not when each N is 1 (lit-llama's module-level `log_interval =
        1`; an option or a parameter that defaults to 1)."""
        divisors, function = guard
        return any(self._value(divisor, function) != 1 for divisor in divisors)

    def _value(self, node: ast.expr, function: Function | None) -> object:
        """What `node` holds with the defaults: a literal, a module constant (a name the file binds once, at
        the top level), an option's default or a parameter's value (see opt_in.switch_default)."""
        parameters = {a.arg for a in ast.walk(function.args) if isinstance(a, ast.arg)} if function else set()
        if isinstance(node, ast.Name) and node.id not in parameters:
            return self._module_constant(node.id)
        value = opt_in.switch_default(self.ctx, node, function, True)
        return self._config_default(node.attr) if value is NOT_CONSTANT and isinstance(node, ast.Attribute) else value

    def _config_default(self, field: str) -> object:
        """The default of the dataclass field `field` in the project modules the file imports classes from (and those
        a package re-exports with `*`): nanotron's `self.config.logging.iteration_step_info_interval`, a field of
        `LoggingArgs` that defaults to 1; NOT_CONSTANT when none has it or their defaults differ."""
        if self._config_trees is None:
            self._config_trees = _imported_class_modules(self.ctx.tree, project.file_folder(self.ctx.path))
        found = {defaults[field] for defaults in map(dataclass_defaults, self._config_trees) if field in defaults}
        return found.pop() if len(found) == 1 else NOT_CONSTANT

    def _module_constant(self, name: str) -> object:
        """The literal a name is bound to by its only binding in the file, a top-level assignment, else
        NOT_CONSTANT."""
        stores = [node for node in ast.walk(self.ctx.tree)
                  if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Store)]
        assign = next((statement for statement in self.ctx.tree.body if isinstance(statement, ast.Assign)
                       and len(stores) == 1 and stores[0] in statement.targets), None)
        return constant(assign.value) if assign is not None else NOT_CONSTANT

    def _acts_on(self, call: ast.Call) -> bool:
        """Whether a call acts on the host values it is given: an environment's or a plateau scheduler's `step`, a
        finiteness check (not a statistic printed, logged or kept)."""
        return self.ctx.callee_name(call) in HOST_CONSUMERS

    def _steps_optimizer(self, guarded: list[ast.stmt], outer: list[ast.AST]) -> bool:
        """Whether the statements a `% N` guard runs step the optimizer: gradient accumulation (`if (i + 1) % accum
        == 0:`), whose body runs at every training step, not every N-th; not when the loop around it steps that
        optimizer outside the guard too (StyleGAN2's lazy regularisation: every 4th iteration one more update)."""
        inside = self._stepped(guarded)
        if self._stepped(guarded, zeroing=True) - inside:
            return True  # gradients zeroed, not stepped, here: the update of accumulation stepped in a closure (timm)
        if not inside:
            return False
        loop = next((node for node in reversed(outer) if isinstance(node, (ast.For, ast.AsyncFor, ast.While))), None)
        if loop is None:
            return True
        elsewhere = self._stepped(s for s in loop.body if not any(_holds(s, g) for g in guarded))
        return not inside <= elsewhere

    def _stepped(self, statements, zeroing: bool = False) -> set[str]:
        """The optimizers (by source text) the optimizer steps among `statements` apply; with `zeroing`, also those
        whose gradients they zero (`optimizer.zero_grad()` after `if not need_update: continue`, timm's gradient
        accumulation, whose step runs in a closure called before)."""
        return {ast.unparse(node.func) if self.ctx.is_optimizer_step(node) else f"{ast.unparse(node.func.value)}.step"
                for statement in statements for node in ast.walk(statement) if isinstance(node, ast.Call) and (
                    self.ctx.is_optimizer_step(node) or zeroing and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "zero_grad" and self.ctx.is_optimizer_name(target_name(node.func.value) or ""))}

    def finish(self) -> None:
        if not self.candidates:
            return
        epoch_level = self._epoch_level_functions()
        per_step = self.ctx.stepping_functions() - epoch_level
        for site, runs, message in self.candidates:
            if any(self._runs_a_step(loop, per_step, epoch_level) for loop in self._loops_of(runs)):
                self.report(site, message)

    def _loops_of(self, runs: Runs, depth: int = 0) -> list[ast.AST]:
        """The loops each of whose iterations runs the code: its own, and in a closure those where the closure
        is called or handed on; none under a guard that skips iterations."""
        if any(map(self._skips_steps, runs.guards)):
            return []
        loops = list(runs.loops)
        if runs.closure is not None and depth < MAX_CLOSURE_DEPTH:
            for outer in self.closure_runs.get(runs.closure, ()):
                loops += self._loops_of(outer, depth + 1)
        return loops

    def _epoch_level_functions(self) -> set[str]:
        """Functions that run a whole epoch per call, not one step: a step loop of their own (other than the
        micro-batches of one step: OLMo's `train_batch` runs `backward()` per micro-batch, and its caller
        `train_step` then steps the optimizer), or a call of such a function."""
        ctx = self.ctx
        appliers = self._applying_functions()
        epoch_level = {info.function for info in ctx.loops.values() if info.function and ctx.is_step_loop(info.node)
                       and not self._accumulates(info, appliers)}
        changed = True
        while changed:
            callers = {name for name, info in ctx.functions.items() if info.called & epoch_level}
            changed = not callers <= epoch_level
            epoch_level |= callers
        return epoch_level

    def _applying_functions(self) -> set[str]:
        """The file's functions that step an optimizer themselves (not through another function)."""
        return {node.name for node in ast.walk(self.ctx.tree) if isinstance(node, FUNCTION_TYPES)
                and any(map(self.ctx.is_optimizer_step, iter_calls(node)))}

    def _accumulates(self, info: LoopInfo, appliers: set[str]) -> bool:
        """Whether a step loop accumulates the gradients of one step: it steps no optimizer (nor calls a function
        that does), and a function that calls its function does."""
        ctx = self.ctx
        if any(map(ctx.is_optimizer_step, iter_calls(info.node))) or info.called & ctx.functions_calling(appliers):
            return False
        return any(info.function in ctx.functions[name].called for name in appliers if name in ctx.functions)

    def _runs_a_step(self, loop: ast.AST, per_step: set[str], epoch_level: set[str]) -> bool:
        """Whether each iteration of `loop` runs one training step: not a whole epoch through a helper, which also
        runs the step function handed to it (mindcv's `train_epoch(..., train_step, ...)`)."""
        if id(loop) in self.forwards:
            return True
        info = self.ctx.loops.get(id(loop))
        if info is None or self._measures(info):
            return False
        return info.steps or bool(info.called & per_step) and not _callees(loop) & epoch_level

    def _measures(self, info: LoopInfo) -> bool:
        """Whether the loop's function is named for profiling, a benchmark or a warm-up and steps no optimizer."""
        if not info.function or MEASURING_NAME.search(info.function) is None:
            return False
        return not any(self.ctx.is_optimizer_step(call) for node in ast.walk(self.ctx.tree)
                       if isinstance(node, FUNCTION_TYPES) and node.name == info.function for call in iter_calls(node))


def _imported_class_modules(tree: ast.Module, folder: Path) -> list[ast.Module]:
    """The project modules the file imports CapWords names (classes) from, and those they import everything from
    (`from nanotron.config.config import *` in the package's `__init__.py`)."""
    local = project.local_imports(project.import_statements(tree.body))
    todo = [(folder, project.Ref(ref.module, ref.level), True) for ref in local.refs.values()
            if (ref.attr or "")[:1].isupper()]
    modules: dict[Path, ast.Module] = {}
    while todo:
        base, ref, outer = todo.pop()
        path = project.find_module(base, ref.module, ref.level)
        module = project.load(path) if path is not None and path not in modules else None
        if module is not None:
            modules[path] = module.tree
            if outer:
                todo += [(path.parent, star, False) for star in module.local.stars]
    return list(modules.values())


def _callees(loop: ast.AST) -> set[str]:
    """The functions (`f(...)`) and own methods (`self.f(...)`) a loop calls, not those merely handed to a call
    (a flag named `train` is no call of a method `train`)."""
    return {call.func.id if isinstance(call.func, ast.Name) else call.func.attr for call in iter_calls(loop)
            if isinstance(call.func, ast.Name) or isinstance(call.func, ast.Attribute)
            and isinstance(call.func.value, ast.Name) and call.func.value.id == "self"}


def _host_read(function: ast.FunctionDef | ast.AsyncFunctionDef, buffers: frozenset[str]) -> ast.Call | None:
    """The first read of a tensor on the host a function runs at every call (see `_every_call`), one under no
    `if` first: `.item()`, `.tolist()` or `.numpy()` (not on what NumPy returns), or `float()`/`int()` of what a
    torch function returns (ijepa's `float(torch.norm(p.grad.data))`) or of one of the class's `buffers` (BLIP's
    `int(self.queue_ptr)`); None if none."""
    numpy_values = {target.id for node in walk_scope(function) if isinstance(node, ast.Assign)
                    and _numpy_call(node.value) for target in node.targets if isinstance(target, ast.Name)}
    reads = [(guarded, node.lineno, node.col_offset, node) for node, guarded in _every_call(function)
             if isinstance(node, ast.Call) and (_converts_torch_value(node, buffers) or _reads_tensor(node, numpy_values))]
    return min(reads, key=lambda read: read[:3], default=(None,) * 4)[3]


def _reads_tensor(call: ast.Call, numpy_values: set[str]) -> bool:
    """`x.item()`, `x.tolist()`, `x.numpy()`, not on what NumPy returns (`numpy_values`: names bound to it)."""
    func = call.func
    return (isinstance(func, ast.Attribute) and func.attr in HELPER_READS and not call.args
            and not _numpy_call(func.value) and not (isinstance(func.value, ast.Name) and func.value.id in numpy_values))


def _converts_torch_value(call: ast.Call, buffers: frozenset[str]) -> bool:
    """`float(torch.norm(g))`, `int(torch.argmax(x))`: a Python number made of a tensor a torch function returns, of
    an optimizer's state (jepa's `float(s.get('exp_avg').abs().mean())`) or of a buffer of the class."""
    return (isinstance(call.func, ast.Name) and call.func.id in ("float", "int") and len(call.args) == 1
            and _torch_value(call.args[0], buffers))


def _torch_value(node: ast.AST, buffers: frozenset[str]) -> bool:
    """A tensor by where it comes from: what a torch function returns, an optimizer's state entry, a buffer of the
    class (`self.queue_ptr`), or what tensor methods make of any (`.abs().mean()`)."""
    while not _optimizer_state(node) and not _own_attribute(node, buffers):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            return False
        name, owner = node.func.attr, node.func.value
        if isinstance(owner, ast.Name) and owner.id == "torch":
            return name[:1].islower() and name not in NOT_TENSOR_FUNCTIONS
        if name in HOST_VALUE_METHODS:
            return False
        node = owner
    return True


def _own_attribute(node: ast.AST, names: frozenset[str]) -> bool:
    """`self.<name>` for one of `names`."""
    return isinstance(node, ast.Attribute) and node.attr in names and target_name(node.value) == "self"


def _optimizer_state(node: ast.AST) -> bool:
    """`state['exp_avg']` or `state.get('exp_avg')`: a tensor an optimizer keeps per parameter."""
    if isinstance(node, ast.Subscript):
        key = node.slice
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get" and node.args:
        key = node.args[0]
    else:
        return False
    return constant(key) in OPTIMIZER_STATE_KEYS


def _read_text(read: ast.Call) -> str:
    return f"`{read.func.id}()`" if isinstance(read.func, ast.Name) else f"`.{read.func.attr}()`"


def _every_call(function: ast.AST) -> Iterator[tuple[ast.AST, bool]]:
    """The nodes of a function that run at every call, each with whether an `if` guards it: not under an `if`
    other than a presence check (DINO's `if p.grad is not None:` over the parameters) or a filter of the items
    a loop of the function walks (ijepa's `if (p.grad is not None) and not n.endswith('.bias'):` over the named
    parameters), nor after an early exit under one (torchtitan's `if not should_log: return` before the logged
    `.item()`: what follows runs only when the test is false), not in a conditional expression, not in a nested
    function or class."""
    todo = [(child, frozenset(), guarded) for child, guarded in _children(function, frozenset())]
    while todo:
        node, items, guarded = todo.pop()
        yield node, guarded
        if isinstance(node, ast.If):
            if _presence_check(node.test) or _filters(node.test, items):
                todo.extend((child, items, True) for child in node.body)
        elif not isinstance(node, (ast.IfExp, *FUNCTION_TYPES, ast.Lambda, ast.ClassDef)):
            if isinstance(node, (ast.For, ast.AsyncFor)):
                items = items | {name.id for name in ast.walk(node.target) if isinstance(name, ast.Name)}
            todo.extend((child, items, guarded or early) for child, early in _children(node, items))


def _children(node: ast.AST, items: frozenset[str]) -> Iterator[tuple[ast.AST, bool]]:
    """The child nodes of `node`, each with whether an early exit before it in its block guards it (`if p.grad is
    None: continue`); none of a block after an exit whose test is other than a presence check or a filter."""
    for value in (value for _, value in ast.iter_fields(node)):
        nodes = value if isinstance(value, list) else [value]
        guarded = False
        for child in nodes:
            if isinstance(child, ast.AST):
                yield child, guarded
            if _exits_early(child):
                if not (_absence_check(child.test) or _filters(child.test, items)):
                    break
                guarded = True


def _exits_early(statement: object) -> bool:
    """`if test: ... return` (or `continue`, `break`): the rest of the block runs only when `test` is false."""
    return isinstance(statement, ast.If) and isinstance(statement.body[-1], (ast.Return, ast.Continue, ast.Break))


def _absence_check(test: ast.expr) -> bool:
    """`x is None` (or `not x is not None`): false where a presence check is true."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return _presence_check(test.operand)
    return (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Is)
            and isinstance(test.comparators[0], ast.Constant) and test.comparators[0].value is None)


def _filters(test: ast.expr, items: frozenset[str]) -> bool:
    """Whether a test reads nothing but the items a loop walks (and builtins): it picks items, every call."""
    names = {node.id for node in ast.walk(test) if isinstance(node, ast.Name)}
    return bool(names & items) and names <= items | BUILTIN_NAMES


def _presence_check(test: ast.expr) -> bool:
    """`x is not None`: a test of whether something exists, not a switch that logging or a period turns on."""
    return (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.IsNot)
            and isinstance(test.comparators[0], ast.Constant) and test.comparators[0].value is None)


def _numpy_call(node: ast.AST) -> bool:
    """`np.mean(x)`, `numpy.asarray(...)`: a call into NumPy (by the usual names)."""
    while isinstance(node, ast.Call):
        node = node.func
    root = node
    while isinstance(root, ast.Attribute):
        root = root.value
    return isinstance(root, ast.Name) and root.id in ("np", "numpy")


def _span(statements: list[ast.stmt]) -> tuple[Position, Position]:
    """Where a block of statements starts and ends."""
    return (statements[0].lineno, statements[0].col_offset), (statements[-1].end_lineno or 0,
                                                              statements[-1].end_col_offset or 0)


def _unpacked(target: ast.expr) -> Iterator[str]:
    """The names an unpacking target binds (`loss, (a, b), *rest`), none for a plain name."""
    if isinstance(target, ast.Starred):
        target = target.value
    if isinstance(target, (ast.Tuple, ast.List)):
        for element in target.elts:
            inner = element.value if isinstance(element, ast.Starred) else element
            name = target_name(inner)
            if name is not None:
                yield name
            yield from _unpacked(inner)


def _operands(test: ast.expr, body: list[ast.stmt]) -> Iterator[ast.expr]:
    """The parts of a test that Python calls `bool()` on (`not x`: x; `a or b`: a and b); none after a latch the
    branch sets (swav's `if use_the_queue or not torch.all(queue[i, -1, :] == 0): use_the_queue = True`: the
    tensor is tested only until the latch is set, not at every step)."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        yield from _operands(test.operand, body)
    elif isinstance(test, ast.BoolOp):
        for operand in test.values:
            yield from _operands(operand, body)
            if isinstance(test.op, ast.Or) and isinstance(operand, (ast.Name, ast.Attribute)) and _sets_true(body, operand):
                return
    else:
        yield test


def _sets_true(body: list[ast.stmt], latch: ast.expr) -> bool:
    """Whether a block assigns `latch = True` (a name or `self.use_queue`, mmpretrain's SwAVLoss) at its own level."""
    text = ast.unparse(latch)
    return any(isinstance(s, ast.Assign) and constant(s.value) is True
               and any(ast.unparse(t) == text for t in s.targets) for s in body)


def _block_of(parent: ast.AST, child: ast.AST) -> list[ast.stmt] | None:
    """The statement list of `parent` that holds `child` (a body, an `else:`, a `finally:`), if any."""
    return next((block for field in ("body", "orelse", "finalbody") if isinstance(block := getattr(parent, field, None), list)
                 and any(s is child for s in block)), None)


def _holds(statement: ast.stmt, node: ast.AST) -> bool:
    return any(inner is node for inner in ast.walk(statement))


def _mentioned(expression: ast.AST, names: set[str], after: int) -> str | None:
    """The first of `names` read in `expression` after line `after`."""
    return next((node.id for node in ast.walk(expression) if isinstance(node, ast.Name) and node.id in names
                 and isinstance(node.ctx, ast.Load) and node.lineno > after), None)


def _once(test: ast.expr, outer: list[ast.AST]) -> bool:
    """A guard true in few iterations: `if i == 100:` on a loop's own variable or a step counter (ResNet50's
    `torch.npu.synchronize()` to time the first 100 steps), or a counter among chosen steps (torch-ngp's `if
    self.global_step in self.opt.upsample_model_steps:`)."""
    counters = {name.id for loop in outer if isinstance(loop, (ast.For, ast.AsyncFor))
                for name in ast.walk(loop.target) if isinstance(name, ast.Name)}
    return (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], (ast.Eq, ast.In))
            and any(isinstance(side, ast.Name) and side.id in counters or _names(side, STEP_COUNTER)
                    for side in (test.left, *test.comparators)[:1 if isinstance(test.ops[0], ast.In) else None]))


def _on_overflow(test: ast.expr, taken: bool) -> bool:
    """Whether the branch of `if test:` (`taken`: its body) runs only in the steps whose gradients overflow
    (yolov7_mindspore's `if overflow:`, `if not grads_finite:` and the `else:` of `if grads_finite:`, printing the
    loss scale)."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return _on_overflow(test.operand, not taken)
    return _names(test, OVERFLOW if taken else FINITE)


def _names(node: ast.expr, pattern: re.Pattern) -> bool:
    """Whether `node` is a name or attribute whose name `pattern` matches."""
    name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else None
    return name is not None and pattern.search(name) is not None


def _divisors(test: ast.AST) -> list[ast.expr]:
    """The N of each `step % N` in a `step % N == 0`-style guard (the sync runs once every N iterations)."""
    return [node.right for node in ast.walk(test) if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod)]

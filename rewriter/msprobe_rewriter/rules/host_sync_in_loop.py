"""MSP502 host-sync-in-loop: reading device values on the host in every training step."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

from msprobe_rewriter import catalogue, pinning, project
from msprobe_rewriter.conditions import condition_text
from msprobe_rewriter.context import FUNCTION_TYPES, Site, target_name, walk_scope
from msprobe_rewriter.rules.base import Invalid, Rule

LOOP_WORD = re.compile(r"\b(?:for|while)\b")
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
EXITS = frozenset({"sys.exit", "exit", "quit", "os._exit"})  # calls that end the run
HELPER_READS = frozenset({"item", "tolist", "numpy"})  # host reads looked for in the helpers a step calls
SYNC_NAMES = catalogue.HOST_SYNC_METHODS | {name.rsplit(".", 1)[1] for name in catalogue.HOST_SYNC_CALLS}
# Calls that act on a host value: RL's `envs.step(actions)`, `scheduler.step(val_loss)`, a NaN check.
HOST_CONSUMERS = frozenset({"step", "isfinite", "isnan", "isinf"})
NEEDED = ("{use}, so the host needs this value and the sync stays; keep it the same in every run you compare (a host "
          "read changes how device work is scheduled)")
REMEDY = ("it forces a host-device sync every step, which changes scheduling and can hide a NaN; keep statistics "
          "on the device (msprobe's async dump) and read them every N steps")


class HostSyncInLoop(Rule):
    code = "MSP502"
    name = "host-sync-in-loop"
    severity = "info"
    frameworks = ("pytorch", "mindspore")
    message = "host-device sync inside the training loop; " + REMEDY
    summary = ("Flags, inside the body of a loop that runs a training step, `.item()`, `.cpu()`, `.numpy()`, "
               "`.tolist()`, `.asnumpy()`, `float()`/`int()` of a tensor, printing or formatting a tensor (f-string, `str.format`), "
               "testing one in an `if` or `while` (`if not torch.isfinite(loss):` calls `bool()` on it), a call of a function "
               "(of the file or a project module, also called on the module: DINO's `utils.clip_gradients(...)`) or of the class's own method whose body reads a tensor with `.item()`, "
               "`.tolist()` or `.numpy()` at every call (Swin's `get_grad_norm(model.parameters())`, one `.item()` per parameter; "
               "under no `if` but a presence check, DINO's `if p.grad is not None:`), "
               "and `torch.cuda.synchronize()`. Reads under a periodic guard (`if step % N == 0:`, or one true in a single "
               "iteration, `if i == 100:` on the loop's variable; unless it steps an "
               "optimizer the loop steps nowhere else: gradient accumulation's guard runs at every training step) are the usual "
               "remedy and are not reported; neither are reads in an error message or a branch that ends the run "
               "(`raise`, `sys.exit(1)`: DINO prints the non-finite loss once, on the way out), `.cpu()` on a model, numbers that are already Python "
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
        # DETR: the logged loss is a `sum()` of a dict of device tensors
        Invalid("import torch\n\n\ndef train(model, loader, optimizer, weights):\n    for x, y in loader:\n"
                "        parts = model(x, y)\n        scaled = {k: v * weights[k] for k, v in parts.items()}\n"
                "        total = sum(scaled.values())\n        total.backward()\n        optimizer.step()\n"
                "        value = total.item()\n        print(sum([1, 2]), max(0, value))\n", lines=(11,)),
    )

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.kinds: dict[tuple[int, str], bool | None] = {}  # (scope, name) -> holds a tensor?
        self.pending: list[tuple[tuple[int, int], tuple[int, str], bool | None]] = []
        self.candidates: list[tuple[Site, list[ast.AST], str]] = []
        # Scopes (function ids, 0 for the module) whose text has a loop: only there can a name matter.
        self.looping_scopes: set[int] = {0} if LOOP_WORD.search(ctx.source) else set()
        self._project: project.LocalImports | None = None  # the file's imports of project modules, read once
        self._functions: dict[str, ast.AST] = {}  # the file's top-level functions, by name (read with `_project`)

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
                self.kinds[(self._scope(), target.id)] = False if on_host else None

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
        if not self.looping_scopes or not LOOP_WORD.search("\n".join(self.ctx.lines[node.lineno - 1:node.end_lineno])):
            return
        self.looping_scopes.add(id(node))
        arguments = node.args.posonlyargs + node.args.args + node.args.kwonlyargs
        defaults = [None] * (len(node.args.posonlyargs + node.args.args) - len(node.args.defaults))
        defaults += node.args.defaults + node.args.kw_defaults
        for argument, default in zip(arguments, defaults, strict=True):
            annotation = argument.annotation
            scalar = isinstance(annotation, ast.Name) and annotation.id in ("bool", "int", "float", "str")
            if scalar or isinstance(default, ast.Constant) and default.value is not None:
                self.kinds[(id(node), argument.arg)] = False  # a Python number / flag parameter

    visit_AsyncFunctionDef = visit_FunctionDef

    def _bind_later(self, node: ast.stmt, name: str, kind: bool | None) -> None:
        """Bind after the statement's own value was visited (`loss = float(loss)` reads the old `loss`)."""
        self.pending.append(((node.end_lineno or 0, node.end_col_offset or 0), (self._scope(), name), kind))

    def _scope(self) -> int:
        return next((id(a) for a in reversed(self.ctx.ancestors) if isinstance(a, FUNCTION_TYPES)), 0)

    def _kind_of(self, name: str, at: ast.AST) -> bool | None:
        position = (at.lineno, at.col_offset)
        ready = [p for p in self.pending if p[0] <= position]
        if ready:
            self.pending = [p for p in self.pending if p[0] > position]
            for _, key, kind in ready:
                self.kinds[key] = kind
        return self.kinds.get((self._scope(), name))

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
            return True if LOSS_NAME.match(name) else None
        if isinstance(expr, ast.Call):
            return self._call_kind(expr)
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
            return self._qualified_kind(qualified)
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
            return True if self._tensorish(func.value) else None
        return None

    @staticmethod
    def _qualified_kind(qualified: str) -> bool | None:
        module, _, name = qualified.rpartition(".")
        if module in TENSOR_FUNCTION_MODULES and name[:1].islower() and name not in NOT_TENSOR_FUNCTIONS:
            return True
        if qualified.startswith("torch.nn.") and name[:1].isupper():
            return False  # a module or loss object, not a tensor
        return None

    # --- syncs -------------------------------------------------------------------------------
    def visit_Call(self, node: ast.Call) -> None:
        if self._scope() not in self.looping_scopes:
            return
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

    def visit_If(self, node: ast.If | ast.While) -> None:
        """`if torch.isnan(loss):`, `while not flag.any():`: testing a tensor calls `bool()` on it, a sync."""
        test = node.test.operand if isinstance(node.test, ast.UnaryOp) and isinstance(node.test.op, ast.Not) \
            else node.test
        if self._scope() in self.looping_scopes and isinstance(test, ast.Call) and self._call_kind(test):
            self._candidate(test, f"testing a tensor (`{condition_text(test, 40)}`)", "the host branches on it")

    visit_While = visit_If

    def _helper_sync(self, node: ast.Call) -> None:
        """A call of a function of the file or of a project module, or of the class's own method, whose body reads
        a tensor on the host (Swin's `get_grad_norm(...)`, one `.item()` per parameter; guided diffusion's
        `log_loss_dict(...)`): the sync runs wherever it is called."""
        definition, path = self._definition(node)
        read = _host_read(definition) if definition is not None else None
        if read is not None:
            where = f"`.{read.func.attr}()` on line {read.lineno}" + (f" of {path.name}" if path else "")
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
        loops = self._loops_running(node)
        if loops:
            use = use or self._host_use(node, loops[0])
            message = f"{what} in the training loop: " + (NEEDED.format(use=use) if use else REMEDY)
            self.candidates.append((self.ctx.site(node), loops, message))

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
                if found is not None:
                    return f"the host branches on `{found}`"
        return None

    def _loops_running(self, node: ast.AST) -> list[ast.AST]:
        """Loops whose every iteration evaluates `node` (not a `for` header, not under `if step % N`)."""
        ancestors = self.ctx.ancestors
        loops = []
        for index in range(len(ancestors) - 1, -1, -1):
            ancestor = ancestors[index]
            child = ancestors[index + 1] if index + 1 < len(ancestors) else node
            if isinstance(ancestor, FUNCTION_TYPES + (ast.Lambda, ast.ClassDef)):
                break
            if (isinstance(ancestor, ast.If) and any(s is child for s in ancestor.body)
                    and (self._periodic(ancestor.test) or _once(ancestor.test, ancestors[:index]))
                    and not self._steps_optimizer(ancestor, ancestors[:index])):
                return []
            if isinstance(ancestor, (ast.For, ast.AsyncFor, ast.While)):
                if not (isinstance(ancestor, (ast.For, ast.AsyncFor)) and child in (ancestor.iter, ancestor.target)):
                    loops.append(ancestor)
        return loops

    def _periodic(self, test: ast.expr) -> bool:
        """A `step % N == 0`-style guard, also through a name the function assigns one to (open_clip's
        `is_metric_step = (i_accum % metric_every == 0) or is_console_step`)."""
        if _is_periodic(test):
            return True
        names = {node.id for node in ast.walk(test) if isinstance(node, ast.Name)}
        scope = self.ctx.current_def() or self.ctx.tree
        return bool(names) and any(
            isinstance(node, ast.Assign) and _is_periodic(node.value)
            and any(isinstance(target, ast.Name) and target.id in names for target in node.targets)
            for node in walk_scope(scope))

    def _acts_on(self, call: ast.Call) -> bool:
        """Whether a call acts on the host values it is given: an environment's or a plateau scheduler's `step`, a
        finiteness check (not a statistic printed, logged or kept)."""
        return self.ctx.callee_name(call) in HOST_CONSUMERS

    def _steps_optimizer(self, guard: ast.If, outer: list[ast.AST]) -> bool:
        """Whether a `% N` guard steps the optimizer: gradient accumulation (`if (i + 1) % accum == 0:`), whose
        body runs at every training step, not every N-th; not when the loop around it steps that optimizer
        outside the guard too (StyleGAN2's lazy regularisation: every 4th iteration one more update)."""
        inside = self._stepped(guard.body)
        if not inside:
            return False
        loop = next((node for node in reversed(outer) if isinstance(node, (ast.For, ast.AsyncFor, ast.While))), None)
        if loop is None:
            return True
        elsewhere = self._stepped(s for s in loop.body if s is not guard and not _holds(s, guard))
        return not inside <= elsewhere

    def _stepped(self, statements) -> set[str]:
        """The optimizers (by source text) the optimizer steps among `statements` apply."""
        return {ast.unparse(node.func) for statement in statements for node in ast.walk(statement)
                if isinstance(node, ast.Call) and self.ctx.is_optimizer_step(node)}

    def finish(self) -> None:
        per_step = self._per_step_functions()
        for site, loops, message in self.candidates:
            if any(self._runs_a_step(loop, per_step) for loop in loops):
                self.report(site, message)

    def _per_step_functions(self) -> set[str]:
        """Stepping functions that run one step per call, not a whole epoch (a step loop of their own)."""
        ctx = self.ctx
        epoch_level = {info.function for info in ctx.loops.values() if info.function and ctx.is_step_loop(info.node)}
        changed = True
        while changed:
            callers = {name for name, info in ctx.functions.items() if info.called & epoch_level}
            changed = not callers <= epoch_level
            epoch_level |= callers
        return ctx.stepping_functions() - epoch_level

    def _runs_a_step(self, loop: ast.AST, per_step: set[str]) -> bool:
        """Whether each iteration of `loop` runs one training step (not a whole epoch through a helper)."""
        info = self.ctx.loops.get(id(loop))
        return info is not None and (info.steps or bool(info.called & per_step))


def _host_read(function: ast.FunctionDef | ast.AsyncFunctionDef) -> ast.Call | None:
    """The first `.item()`, `.tolist()` or `.numpy()` a function runs on a tensor at every call (not under an
    `if`, as a trainer's `if should_log:` is; not on what NumPy returns; not in a nested function), None if none."""
    numpy_values = {target.id for node in walk_scope(function) if isinstance(node, ast.Assign)
                    and _numpy_call(node.value) for target in node.targets if isinstance(target, ast.Name)}
    reads = [node for node in _unconditional(function) if isinstance(node, ast.Call)
             and isinstance(node.func, ast.Attribute) and node.func.attr in HELPER_READS and not node.args
             and not _numpy_call(node.func.value)
             and not (isinstance(node.func.value, ast.Name) and node.func.value.id in numpy_values)]
    return min(reads, key=lambda node: (node.lineno, node.col_offset), default=None)


def _unconditional(function: ast.AST) -> Iterator[ast.AST]:
    """The nodes of a function that run at every call: not under an `if` (other than a presence check, DINO's
    `if p.grad is not None:` over the parameters) or in a conditional expression, not in a nested function or
    class."""
    todo = list(ast.iter_child_nodes(function))
    while todo:
        node = todo.pop()
        yield node
        if isinstance(node, ast.If) and _presence_check(node.test):
            todo.extend(node.body)
        elif not isinstance(node, (ast.If, ast.IfExp, *FUNCTION_TYPES, ast.Lambda, ast.ClassDef)):
            todo.extend(ast.iter_child_nodes(node))


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


def _holds(statement: ast.stmt, node: ast.AST) -> bool:
    return any(inner is node for inner in ast.walk(statement))


def _mentioned(expression: ast.AST, names: set[str], after: int) -> str | None:
    """The first of `names` read in `expression` after line `after`."""
    return next((node.id for node in ast.walk(expression) if isinstance(node, ast.Name) and node.id in names
                 and isinstance(node.ctx, ast.Load) and node.lineno > after), None)


def _once(test: ast.expr, outer: list[ast.AST]) -> bool:
    """`if i == 100:` on a loop's own variable: true in one iteration (ResNet50's `torch.npu.synchronize()` to
    time the first 100 steps)."""
    counters = {name.id for loop in outer if isinstance(loop, (ast.For, ast.AsyncFor))
                for name in ast.walk(loop.target) if isinstance(name, ast.Name)}
    return (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)
            and any(isinstance(side, ast.Name) and side.id in counters for side in (test.left, *test.comparators)))


def _is_periodic(test: ast.AST) -> bool:
    """`step % N == 0`-style guards: the sync runs once every N iterations."""
    return any(isinstance(n, ast.BinOp) and isinstance(n.op, ast.Mod) for n in ast.walk(test))

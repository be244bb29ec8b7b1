"""Draw random numbers on the CPU and move them, where `device-rng` fires.

`torch.randn(*shape, device=d, dtype=t, generator=g, requires_grad=r)` becomes
`torch.randn(*shape, dtype=t, generator=g).to(d).requires_grad_(r)`: the same numbers as a CPU draw, the
same dtype, device and `requires_grad` everywhere. `*_like(x)` draws on the CPU (`device="cpu"`: x's
shape, dtype and memory layout, the numbers a CPU run draws) and moves to `x.device` (or to its `device=`); `bernoulli`/`multinomial`/`poisson` of a device tensor draw from `x.cpu()`;
`torch.empty(..., device=d).normal_()` fills on the CPU and moves, and so does a fill of a fresh `*_like(x)` tensor
(`torch.rand_like(x).uniform_()`, `torch.empty_like(x).exponential_()`: made on the CPU, filled, moved to
`x.device`); a torch.nn module built with `device=d` is built on the
CPU and moved (`nn.Linear(n, n).to(d)`: the weights a CPU run draws); `x.normal_()` on a device tensor
copies a CPU draw into `x`. A draw whose result is read on the host right away (`torch.multinomial(w, 1).item()`,
`.tolist()`, `.cpu()`) is drawn on the CPU and not moved back. The generator is kept; one made on a device in the same file
(`g = torch.Generator(device).manual_seed(s)`, also `None if seed is None else torch.Generator(device)`), which a CPU
draw would refuse, is made on the CPU. A draw given a generator made elsewhere (a parameter, an attribute), which may
be on the device, is left with a note: that generator must be made on the CPU where it is made.
Modules and draws that an accelerator gets as the default device (`torch.set_default_device`, `with
torch.device(d):`, Fabric's `init_module()`, `init_weights()` or `apply(fn)` on a model already on the device)
are left with a note: where the model is built is the script's design. So is a module built on a device that may be
the meta device (`device=config.init_device`: a CPU build of a meta model), and one initialised again right after
(`init_method(layer.weight)`: that draw, on the device, is the one that survives). So are draws in an RNG tracker's fork
(Megatron's `with get_cuda_rng_tracker().fork():`): a CPU draw would leave the tracker's per-rank stream; the note
gives the finding's advice (a CPU generator seeded as the tracker's state, or `--use-cpu-initialization`). So are samples of a `torch.distributions` distribution
whose parameters live on a device (`Categorical(logits=logits).sample()`): sampling from CPU copies of its
parameters is a change to the policy's code. An input named twice by the rewrite may be a name, an attribute or
an index of them (BLIP's `torch.multinomial(weights_t2i[b], 1).item()` draws from `weights_t2i[b].cpu()`). A draw
it cannot rewrite (a `torch.nn.init` fill, an input computed by a call or an operator, `out=`, ...) is left with a note that says why and shows the CPU draw the finding suggests.
diffusers' `latent_dist.sample()` (also of a posterior kept in a name or a list) and
`randn_tensor(shape, device=d)` get torch's global CPU generator, `generator=torch.default_generator` (`generator or
torch.default_generator` for a generator parameter that no call in the file sets: a caller elsewhere may pass one): given a
CPU generator, diffusers draws on the CPU and moves the result; diffusers logs that it does so at the info level
on each such call, which a note says once per file. A `with` block that makes the default device one held in a
name (torchtune's `with self._device:`) is noted as `with torch.device(d):` is.
"""

from __future__ import annotations

import ast
import re

import libcst as cst

from msprobe_rewriter import catalogue
from msprobe_rewriter.context import constant
from msprobe_rewriter.instrument import nodes
from msprobe_rewriter.instrument.structure import span_of
from msprobe_rewriter.instrument.transforms.base import Example, Transform
from msprobe_rewriter.instrument.unit import Unit
from msprobe_rewriter.rules.device_rng import SAME_SEED, generator_leaves

LIKE = frozenset({"torch.rand_like", "torch.randn_like", "torch.randint_like"})
INPUT_DRAWS = frozenset({"torch.bernoulli", "torch.multinomial", "torch.poisson"})
MOVED_AFTER = ("device", "requires_grad")  # keywords that leave the draw for `.to()`/`.requires_grad_()`
# diffusers' randn_tensor(shape, generator, device, ...): where it takes its generator
_DIFFUSERS_GENERATOR_POSITION = dict.fromkeys(catalogue.DIFFUSERS_RANDN_TENSOR, 1)
SCALAR_FILLS = frozenset({"normal_", "uniform_", "random_", "exponential_", "geometric_", "cauchy_", "log_normal_"})
DIFFUSERS_LOG_NOTE = ("diffusers logs \"The passed generator was created on 'cpu' even though a tensor on ... was "
                      "expected\" at the info level on each call given `torch.default_generator` (a script that sets "
                      "diffusers' verbosity to info prints it every step): it is expected, the draw is on the CPU as "
                      "intended")
SUGGESTED = re.compile(r"\(`(.+)`\)")  # the CPU draw a finding's message shows


class DeviceRng(Transform):
    name = "device-rng"
    fixes = ("device-rng",)
    rule = "device-rng"
    summary = "Draws random tensors on the CPU and moves them to the device (numerically identical on the CPU)."
    details = __doc__.split("\n\n", 1)[1].strip()
    examples = (
        Example("import torch\n\n\ndef noise(x, device):\n    return torch.randn(x.shape[0], 4, device=device, "
                "requires_grad=True)\n",
                "import torch\n\n\ndef noise(x, device):\n    return torch.randn(x.shape[0], 4).to(device)"
                ".requires_grad_()\n"),
        Example("import torch\n\n\ndef q_sample(x0, device):\n    x0 = x0.to(device)\n"
                "    t = torch.randint(0, 1000, (x0.shape[0],), device=device)\n    return x0 + torch.randn_like(x0), t\n",
                "import torch\n\n\ndef q_sample(x0, device):\n    x0 = x0.to(device)\n"
                "    t = torch.randint(0, 1000, (x0.shape[0],)).to(device)\n"
                "    return x0 + torch.randn_like(x0, device=\"cpu\").to(x0.device), t\n"),
        Example("import torch\n\nmask = torch.empty(4, 4, device=\"cuda\").uniform_()\nx = torch.zeros(4).cuda()\n"
                "x.normal_(0.0, 0.02)\n",
                "import torch\n\nmask = torch.empty(4, 4).uniform_().to(\"cuda\")\nx = torch.zeros(4).cuda()\n"
                "x.copy_(torch.empty(x.shape, dtype=x.dtype).normal_(0.0, 0.02))\n"),
        Example("import torch\n\n\ndef gumbel(logits):\n    logits = logits.cuda()\n"
                "    return logits - torch.empty_like(logits).exponential_().log()\n",
                "import torch\n\n\ndef gumbel(logits):\n    logits = logits.cuda()\n"
                "    return logits - torch.empty_like(logits, device=\"cpu\").exponential_().to(logits.device).log()\n"),
        Example("import torch.nn as nn\n\n\ndef head(dim, device):\n    return nn.Linear(dim, 10, device=device, bias=False)\n",
                "import torch.nn as nn\n\n\ndef head(dim, device):\n    return nn.Linear(dim, 10, bias=False).to(device)\n"),
        Example("import torch\n\n\ndef negative(weights):\n    weights = weights.cuda()\n"
                "    return torch.multinomial(weights, 1).item()\n",
                "import torch\n\n\ndef negative(weights):\n    weights = weights.cuda()\n"
                "    return torch.multinomial(weights.cpu(), 1).item()\n"),
        Example("import torch\n\ng = torch.Generator(device=\"cuda\").manual_seed(0)\n"
                "noise = torch.randn(4, device=\"cuda\", generator=g)\n",
                "import torch\n\ng = torch.Generator().manual_seed(0)\nnoise = torch.randn(4, generator=g).to(\"cuda\")\n"),
        Example("import torch\n\n\ndef noise(kind, n):\n    match kind:\n        case \"gauss\":\n"
                "            return torch.randn(n, device=\"cuda\")\n        case _:\n            return torch.zeros(n)\n",
                "import torch\n\n\ndef noise(kind, n):\n    match kind:\n        case \"gauss\":\n"
                "            return torch.randn(n).to(\"cuda\")\n        case _:\n            return torch.zeros(n)\n"),
        Example("import torch\nfrom diffusers.utils.torch_utils import randn_tensor\n\n\n"
                "def latents(vae, pixels, device):\n    z = vae.encode(pixels.to(device)).latent_dist.sample()\n"
                "    return z + randn_tensor(z.shape, device=device)\n",
                "import torch\nfrom diffusers.utils.torch_utils import randn_tensor\n\n\n"
                "def latents(vae, pixels, device):\n"
                "    z = vae.encode(pixels.to(device)).latent_dist.sample(generator=torch.default_generator)\n"
                "    return z + randn_tensor(z.shape, device=device, generator=torch.default_generator)\n"),
        Example("import torch\nfrom diffusers import AutoencoderKL\n\n\n"
                "def train(vae, unet, loader, device):\n"
                "    latents_cache = []\n    for batch in loader:\n"
                "        latents_cache.append(vae.encode(batch.to(device)).latent_dist)\n"
                "    for step in range(len(latents_cache)):\n"
                "        unet(latents_cache[step].sample()).backward()\n",
                "import torch\nfrom diffusers import AutoencoderKL\n\n\n"
                "def train(vae, unet, loader, device):\n"
                "    latents_cache = []\n    for batch in loader:\n"
                "        latents_cache.append(vae.encode(batch.to(device)).latent_dist)\n"
                "    for step in range(len(latents_cache)):\n"
                "        unet(latents_cache[step].sample(generator=torch.default_generator)).backward()\n"),
    )

    def apply(self, unit: Unit) -> None:
        device_generators = _device_generators(unit)
        moved: set[cst.Call] = set()  # generators made on the CPU here, for the draws that use them
        left = []
        sites = unit.sites_for(self.rule, lambda n: isinstance(n, cst.Call))
        sited = {id(finding) for finding, _ in sites}  # the others name a device held in a name: `with self._device:`
        left += [(finding, None) for finding in unit.findings.get(self.rule, []) if id(finding) not in sited]
        host = _read_on_host(unit)
        plans = {call: _unmoved(self._plan(unit, call)) if span_of(finding) in host else self._plan(unit, call)
                 for finding, call in sites if finding.fixable}
        logged = False  # whether diffusers' log line about CPU generators has been noted
        refilled = {call.func.value: plan for call, plan in plans.items() if isinstance(call.func, cst.Attribute)}
        for finding, call in sites:
            if not finding.fixable:  # an accelerator as the default device, a distribution's sample: the user's design
                left.append((finding, call))
                continue
            rewrite = plans[call]
            if call in refilled:  # `torch.rand_like(x).uniform_()`: the fill redraws what this drew
                if isinstance(refilled[call], str):
                    _note(unit, finding, "its tensor is filled again on the device, which is not rewritten either")
                continue
            if isinstance(rewrite, str):
                _note(unit, finding, rewrite)
                continue
            unit.edits.rewrite(call, rewrite)
            if not logged and _diffusers_generator(unit, call) is not None:
                unit.note(finding.line, DIFFUSERS_LOG_NOTE)
                logged = True
            generator = nodes.argument(call, "generator")
            name = generator.value.value if generator is not None and isinstance(generator.value, cst.Name) else None
            for made in device_generators.pop(name, ()):  # each generator once
                node = unit.node_for(made, cst.Call)
                if node is not None:
                    unit.edits.rewrite(node, _generator_on_cpu)
                    moved.add(node)
        for finding, call in left:
            if call not in moved:
                what = finding.message.split(": ", 1)[0]
                unit.note(finding.line, f"not rewritten: {what}; {_advice(finding.message)} (msprobe-lint --explain "
                                        "device-rng)")

    def _plan(self, unit: Unit, call: cst.Call):
        """The rewrite of a reported call, or why there is none."""
        if nodes.has_star(call) and not _only_star_size(call):
            return "its arguments are spread with `*`/`**`"
        qualified = unit.names.qualname(call.func)
        if nodes.argument(call, "out") is not None:
            return "it writes into `out=`"
        diffusers_generator = _diffusers_generator(unit, call)
        if diffusers_generator is not None:
            return lambda updated: _default_generator(updated, unit.module_name("torch"), diffusers_generator)
        if qualified in LIKE:  # first: with a `device=` moved out, `rand_like(x)` would draw on x's device
            return _impure_input(call) or _like_on_cpu
        if ((qualified in catalogue.TORCH_DEVICE_DRAWS or qualified in catalogue.TORCH_RANDOM_INIT_MODULES)
                and nodes.argument(call, "device") is not None):
            return _move_after
        if qualified in INPUT_DRAWS:
            return _impure_input(call) or _draw_from_cpu_copy
        if qualified in catalogue.TORCH_INIT_DRAWS:
            return "an initialiser fills its tensor in place"
        if qualified is None and isinstance(call.func, cst.Attribute):
            return self._plan_method(unit, call.func.value, call.func.attr.value)
        return "a draw from tensors on the device"

    def _plan_method(self, unit: Unit, receiver: cst.BaseExpression, method: str):
        """The rewrite of a tensor method that draws (`x.normal_()`, `p.bernoulli()`), or why there is none."""
        fresh = isinstance(receiver, cst.Call) and _is_like(unit.names.qualname(receiver.func))
        if fresh and method in SCALAR_FILLS:  # `torch.empty_like(x).exponential_()`: made, filled, moved
            return _impure_input(receiver) or (lambda updated: _fill_then_move(updated, like=True))
        if isinstance(receiver, cst.Call) and nodes.argument(receiver, "device") is not None:
            return _fill_then_move
        if not nodes.is_pure(receiver):
            return f"it fills `{nodes.code_of(receiver)}`, not a plain name or an index of one"
        if method in SCALAR_FILLS:
            torch = unit.module_name("torch")
            return lambda updated: _fill_copy(updated, torch)
        if method in catalogue.TENSOR_DRAW_METHODS:
            return _method_on_cpu_copy
        return f"`{method}` may take a probability tensor on the device"


def _read_on_host(unit: Unit) -> set[tuple[int, int, int, int]]:
    """The spans of calls whose result is read to the host right away (`torch.multinomial(w, 1).item()`)."""
    return {unit.span(node.func.value) for node in ast.walk(unit.tree) if isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute) and node.func.attr in catalogue.HOST_SYNC_METHODS
            and isinstance(node.func.value, ast.Call)}


def _unmoved(rewrite):
    """A rewrite without its final move, for a draw read on the host right away: `torch.multinomial(w.cpu(), 1)`."""
    if isinstance(rewrite, str):
        return rewrite

    def unmoved(updated: cst.Call) -> cst.BaseExpression:
        draw = rewrite(updated)
        moved = isinstance(draw, cst.Call) and isinstance(draw.func, cst.Attribute) and draw.func.attr.value == "to"
        return draw.func.value if moved else draw
    return unmoved


def _note(unit: Unit, finding, reason: str) -> None:
    """Say why a reported draw is left as it is, with the CPU draw its finding suggests."""
    suggested = SUGGESTED.search(finding.message)
    how = f"draw on the CPU as the finding shows (`{suggested.group(1)}`)" if suggested else "draw it on the CPU yourself"
    unit.note(finding.line, f"device draw not rewritten ({reason}): {how}")


def _advice(message: str) -> str:
    """What a finding left to the user advises, after its reason (an RNG tracker's draw: a seeded CPU generator,
    not a plain CPU draw), else a CPU draw with the finding's notes (a generator that may be made on the device)."""
    _, found, advice = message.rpartition(SAME_SEED)
    return advice[2:] if found and advice.startswith(": ") else "draw on the CPU yourself" + advice


def _is_like(qualified: str | None) -> bool:
    """`torch.empty_like`, `torch.rand_like`, ...: a new tensor of x's shape, dtype and device."""
    return qualified is not None and qualified.startswith("torch.") and qualified.endswith("_like")


def _impure_input(call: cst.Call) -> str | None:
    """Why a draw from its input tensor cannot be rewritten (the rewrite names it twice), or None."""
    source = nodes.argument(call, "input", 0)
    if source is None:
        return "its input is not given first or as `input=`"
    return None if nodes.is_pure(source.value) else (f"its input `{nodes.code_of(source.value)}` is not a plain name "
                                                     "or an index of one")


def _diffusers_generator(unit: Unit, call: cst.Call) -> int | None:
    """Where a reported diffusers draw (`randn_tensor`, `latent_dist.sample`) takes its generator; None for others."""
    qualified = unit.names.qualname(call.func)
    return _DIFFUSERS_GENERATOR_POSITION.get(qualified) if qualified else 0 if _is_latent_sample(call) else None


def _is_latent_sample(call: cst.Call) -> bool:
    """diffusers' `<posterior>.sample(...)`: a `.sample()` call that device-rng reports is one (the VAE's
    `latent_dist`, kept or not)."""
    func = call.func
    return isinstance(func, cst.Attribute) and func.attr.value == "sample"


def _device_generators(unit: Unit) -> dict[str, list[ast.Call]]:
    """Names assigned a `torch.Generator` made on a device (`g = torch.Generator(device).manual_seed(s)`, also in a
    branch of `None if seed is None else torch.Generator(device)`), with those calls."""
    found: dict[str, list[ast.Call]] = {}
    for node in ast.walk(unit.tree):
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)):
            continue
        for call in generator_leaves(node.value):
            if isinstance(call, ast.Call) and unit.ctx.call_qualname(call) in catalogue.TORCH_GENERATOR_CLASSES:
                device = next((kw.value for kw in call.keywords if kw.arg == "device"), call.args[0] if call.args else None)
                if device is not None and constant(device) != "cpu":
                    found.setdefault(node.targets[0].id, []).append(call)
    return found


def _default_generator(updated: cst.Call, torch: str, position: int) -> cst.Call:
    """A diffusers draw given torch's global CPU generator (`generator=torch.default_generator`), or, when it passes
    on a parameter no call in the file sets, that generator if a caller passes one (`generator or ...`)."""
    given = nodes.argument(updated, "generator", position)
    kept = "" if given is None or nodes.is_literal(given.value, None) else f"{nodes.code_of(given.value)} or "
    return nodes.set_argument(updated, "generator", nodes.expression(f"{kept}{torch}.default_generator"), position)


def _generator_on_cpu(updated: cst.Call) -> cst.Call:
    """`torch.Generator(device)` -> `torch.Generator()`."""
    return nodes.remove_argument(updated, nodes.argument(updated, "device", 0))


def _only_star_size(call: cst.Call) -> bool:
    """`torch.randn(*shape, device=d)`: a star argument that only spreads the size is fine."""
    return all(arg.star != "**" for arg in call.args)


def _split(call: cst.Call) -> tuple[cst.Call, dict[str, cst.BaseExpression]]:
    """`call` without `device=`/`requires_grad=`, and those values."""
    moved = {}
    for name in MOVED_AFTER:
        arg = nodes.argument(call, name)
        if arg is not None:
            moved[name] = arg.value
            call = nodes.remove_argument(call, arg)
    return call, moved


def _finish(draw: cst.BaseExpression, moved: dict[str, cst.BaseExpression]) -> cst.BaseExpression:
    """`draw.to(device)`, then `.requires_grad_(...)` when the original asked for gradients."""
    if "device" in moved:
        draw = nodes.method_call(draw, "to", moved["device"])
    grad = moved.get("requires_grad")
    if grad is not None and not nodes.is_literal(grad, False):
        draw = nodes.method_call(draw, "requires_grad_") if nodes.is_literal(grad, True) else nodes.method_call(
            draw, "requires_grad_", grad)
    return draw


def _move_after(updated: cst.Call) -> cst.BaseExpression:
    return _finish(*_split(updated))


def _like_on_cpu(updated: cst.Call) -> cst.BaseExpression:
    """`torch.randn_like(x, ...)` -> `torch.randn_like(x, ..., device="cpu").to(x.device)`."""
    return _finish(*_like_split(updated))


def _like_split(call: cst.Call) -> tuple[cst.Call, dict[str, cst.BaseExpression]]:
    """`torch.X_like(x, ...)` made on the CPU, and what `_finish` adds: moved to its `device=`, else to `x.device`."""
    x = nodes.code_of(nodes.argument(call, "input", 0).value)
    draw, moved = _split(call)
    moved.setdefault("device", nodes.expression(f"{x}.device"))
    return nodes.set_argument(draw, "device", nodes.expression('"cpu"')), moved


def _draw_from_cpu_copy(updated: cst.Call) -> cst.BaseExpression:
    """`torch.bernoulli(p)` -> `torch.bernoulli(p.cpu()).to(p.device)`."""
    source = nodes.argument(updated, "input", 0)
    x = nodes.code_of(source.value)
    draw = updated.with_changes(args=[a.with_changes(value=nodes.expression(f"{x}.cpu()")) if a is source else a
                                      for a in updated.args])
    return nodes.method_call(draw, "to", nodes.expression(f"{x}.device"))


def _fill_then_move(updated: cst.Call, like: bool = False) -> cst.BaseExpression:
    """`torch.empty(s, device=d).normal_()` -> `torch.empty(s).normal_().to(d)`; `torch.rand_like(x).uniform_()`
    (`like`) -> `torch.rand_like(x, device="cpu").uniform_().to(x.device)`."""
    receiver, moved = (_like_split if like else _split)(updated.func.value)
    return _finish(updated.with_changes(func=updated.func.with_changes(value=receiver)), moved)


def _fill_copy(updated: cst.Call, torch: str) -> cst.BaseExpression:
    """`x.normal_(m, s)` -> `x.copy_(torch.empty(x.shape, dtype=x.dtype).normal_(m, s))`."""
    x = nodes.code_of(updated.func.value)
    fill = updated.with_changes(func=updated.func.with_changes(
        value=nodes.expression(f"{torch}.empty({x}.shape, dtype={x}.dtype)")))
    return nodes.method_call(updated.func.value, "copy_", fill)


def _method_on_cpu_copy(updated: cst.Call) -> cst.BaseExpression:
    """`p.bernoulli()` -> `p.cpu().bernoulli().to(p.device)`."""
    x = nodes.code_of(updated.func.value)
    draw = updated.with_changes(func=updated.func.with_changes(value=nodes.expression(f"{x}.cpu()")))
    return nodes.method_call(draw, "to", nodes.expression(f"{x}.device"))

"""MSP201 device-rng: random numbers drawn by an accelerator's generator instead of the CPU's."""

from __future__ import annotations

import ast
import builtins
import functools
import re
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

from msprobe_rewriter import catalogue, conditions, default_device, project
from msprobe_rewriter.call_defaults import LeftAtDefault
from msprobe_rewriter.conditions import condition_text
from msprobe_rewriter.context import (
    FUNCTION_TYPES,
    SCOPE_TYPES,
    argument,
    constant,
    keyword,
    walk_scope,
)
from msprobe_rewriter.cpu_code import INIT_NAME, CpuCode, is_model_base
from msprobe_rewriter.rules.base import Invalid, Rule
from msprobe_rewriter.values import FollowsValues, LocalValues

# Where a tensor or a device lives: surely the CPU, surely an accelerator, or a device that is not
# provably the CPU (`torch.device(args.device)`, a parameter). None: unknown (an unknown tensor).
CPU, ACCELERATOR, DEVICE = "cpu", "accelerator", "device"
ON_DEVICE = (ACCELERATOR, DEVICE)
# Names that hold a device by convention, as in `x.to(rank)`.
DEVICE_NAMES = frozenset({"dev", "gpu", "gpu_id", "rank", "local_rank"})
FABRIC_SETUPS = frozenset({"setup", "setup_module"})  # `fabric.setup(model)` moves the model to the Fabric's device
MOVES = catalogue.ACCELERATOR_METHODS | {"to"}
DRAW_METHODS = catalogue.INPLACE_RANDOM_METHODS | catalogue.TENSOR_DRAW_METHODS
MODEL_CODE_NOTE = " (in an `nn.Module` method its input lives on the model's device)"
HOOK_NOTE = " (in a module's hook the tensors it is given live on the module's device)"
ACCELERATOR_FILE_NOTE = " (this file runs on an accelerator, so this tensor may live there)"
SAME_SEED = "GPU and NPU generators give different numbers for one seed"
DEFAULT_MESSAGE = ("`{call}` makes an accelerator the default device: modules built and tensors drawn without "
                   f"`device=` after it take their numbers from its generator, and {SAME_SEED}: keep the CPU "
                   "default while comparing runs (build and draw on the CPU, then move)")
BLOCK_MESSAGE = ("modules built and tensors drawn without `device=` in this `with {call}:` block take their "
                 f"numbers (initial weights too) from the device's generator, and {SAME_SEED}: build on the CPU "
                 "and move (`Net().to(device)`), or on `torch.device(\"meta\")` and load the weights")
REINIT_MESSAGE = ("`{call}` initialises again the weights of a `{module}` built on a device: its generator draws "
                  "them, and " + SAME_SEED + ": build it on the CPU, initialise it there, then move it (`{module}(...)`, "
                  "then `{call}`, then `.to(device)`)")
LOADED_NOTE = " (a loader of its weights runs after it: only what the checkpoint does not hold keeps these draws)"
META_NOTE = (" (`{device}` may be the meta device, where nothing is drawn: build on the CPU only where it is not; "
             "msprobe-instrument leaves this to you)")
SHARDED_NOTE = (" (only where the file's Fabric gets a strategy other than FSDP's: FSDP's `init_module()` builds on "
                "the CPU)")
MODULE_MESSAGE = ("`{module}(..., device=...)` draws its initial weights on that device, and " + SAME_SEED
                  + ": build it on the CPU and move it (`{module}(...).to(device)`)")
INIT_MESSAGE = ("`{call}` initialises weights that `to_empty(device=...)` put on a device: its generator draws "
                f"them, and {SAME_SEED}: materialise and initialise on the CPU, then move (or load a seed "
                "checkpoint)")
APPLY_MESSAGE = ("`{call}` initialises the weights of a model already on a device: `{fn}` draws them with that "
                 "device's generator, and " + SAME_SEED + ": initialise it before it is moved (`{first}`, then "
                 "`.to(device)` or `fabric.setup(model)`; in a LightningModule, in `__init__`)")
GENERATOR_MESSAGE = ("`{call}` makes a generator on the device: what it draws{what} comes from that device's "
                     "generator, and " + SAME_SEED + ": make it on the CPU, `torch.Generator().manual_seed(seed)`, "
                     "{then}")
GENERATOR_USES = {  # what a device generator draws, and how to draw with a CPU one, in a diffusers file and elsewhere
    True: (" (a diffusers pipeline's latents, validation images)", "and diffusers draws on the CPU and moves"),
    False: ("", "and draw without `device=`, moving the result (`torch.randn(shape, generator=g).to(device)`): a "
                "CPU generator cannot draw on the device"),
}
DISTRIBUTION_MESSAGE = ("`{call}` draws where the distribution's parameters live, and " + SAME_SEED + ": sample from "
                        "CPU copies and move the result (`Normal(mu.cpu(), std.cpu()).rsample().to(mu.device)`), or "
                        "draw the noise on the CPU yourself (`mu + std * torch.randn(mu.shape).to(mu.device)`)")
DISTRIBUTION_DRAWS = frozenset({"sample", "rsample", "sample_n"})
NUMBER_MODULES = frozenset({"math", "numpy", "random"})  # their calls give numbers, not tensors
PRETRAINED_LIBRARIES = frozenset({"diffusers", "transformers"})  # `from_pretrained` loads on the CPU
BUILTINS = frozenset(dir(builtins))
DIFFUSERS_MESSAGE = ("diffusers' `{draw}` draws on {where}, and " + SAME_SEED + ": pass it a CPU generator, `generator=torch.default_generator`, and it draws on the "
                     "CPU and moves the result")


SKIPPED_NOTE = (" (only when `{condition}`: `{function}` returns before this otherwise, and no call of it in the project "
                "passes a value that gets past that test)")
SAMPLING_NOTE = (" (it only feeds a diffusers pipeline's sampling after the loop of training steps: the images "
                 "it samples differ between the runs, the training does not)")
CPU_DEFAULT_NOTE = " (`{name}` defaults to the CPU: this draws on a device only where a caller passes one)"
# Module methods that iterate over a module's submodules or tensors, which live where the module does.
MODULE_ITERATORS = frozenset({"modules", "children", "parameters", "buffers", "named_modules", "named_children",
                              "named_parameters", "named_buffers"})


DRAWN_ON_DEVICE = f"this draws with the device's generator, and {SAME_SEED}: "  # what is wrong, before the fix
MOVE_MESSAGE = DRAWN_ON_DEVICE + "draw on the CPU and move the result (`{example}`)"
THROWAWAY_NAME = re.compile(r"(?i)(^|_)(warm_?up|bench(mark)?|dummy)(_|$)")  # functions whose draws are thrown away
FAKE_INPUTS_NOTE = " (in an input function run under FakeTensorMode to trace the model: nothing is drawn)"
THROWAWAY_NOTE = " (what it draws is thrown away: a warm-up, a benchmark's input, a dummy step)"
DATA_BUILDER = re.compile(r"(?i)(^|_)data(set|loader)?(_|$)")  # a dummy data builder's draws are the data
GENERATOR_NOTE = (" (with `generator={generator}`, which may be made on the device: a CPU draw needs a CPU generator, "
                  "so make it on the CPU where it is made; msprobe-instrument leaves this to you)")
CALLERS_CPU_NOTE = (" (the calls in the project pass `{name}` the CPU, or a parameter defaulting to it: this draws on a "
                    "device only where a caller passes one)")
NONE_GENERATOR_NOTE = " (`{name}` defaults to None, and no call in this file passes another)"
# What gives torch's global CPU generator: `torch.manual_seed(s)` returns it (diffusers' tests' generator on "mps").
CPU_GENERATORS = frozenset({"torch.default_generator", "torch.random.default_generator", "torch.manual_seed",
                            "torch.random.manual_seed"})
# Draws whose result is a constant: a spread given as a literal 0 (`w.normal_(mean=1, std=0)`), or two bounds given
# alike (`w.uniform_(a, a)`); per draw, (position, keyword) of its spread, or of its two bounds.
CONSTANT_WHEN = {
    "normal_": ((1, "std"),), "log_normal_": ((1, "std"),), "cauchy_": ((1, "sigma"),),
    "torch.normal": ((1, "std"),), "torch.nn.init.normal_": ((2, "std"),),
    "uniform_": ((0, "from"), (1, "to")), "torch.nn.init.uniform_": ((1, "a"), (2, "b")),
}
RNG_TRACKER = "rng_tracker"  # Megatron's `get_cuda_rng_tracker()`, MindSpeed's and DeepSpeed's trackers alike
TRACKER_MESSAGE = ("`{call}` in `with {fork}:` draws from the CUDA generator state an RNG tracker keeps per "
                   "model-parallel rank, and " + SAME_SEED + ": {how}")
TRACKER_ADVICE = {  # in weight initialisation, and elsewhere
    True: "initialise the weights on the CPU and move them (Megatron's `--use-cpu-initialization`)",
    False: ("a plain CPU draw would leave the tracker's stream and its per-rank seed: draw with a CPU "
            "`torch.Generator` seeded as the tracker seeds this state (`model_parallel_cuda_manual_seed`), then move "
            "the result"),
}
PLAIN = (ast.Name, ast.Attribute, ast.Subscript)  # tensors an example may name twice (`w.copy_(... w.shape ...)`)
SHOWN_LENGTH = 30  # an expression longer than this is named by a free name in an example
FREE_NAMES = ("x", "t", "w", "tensor")


def _moved(lead: str, draw: str, device: str, host: bool) -> str:
    """Advice to draw on the CPU and move the result to `device`; no move for a result read on the `host` right away
    (BLIP's `torch.multinomial(weights[b], 1).item()`)."""
    if host:
        return f"{DRAWN_ON_DEVICE}{lead}, where its result is read right away (`{draw}`)"
    return f"{DRAWN_ON_DEVICE}{lead} and move the result (`{draw}.to({device})`)"


def _input_message(call: ast.Call, qualified: str, inputs: list[ast.expr | None], free: str, host: bool) -> str:
    """For a draw from a tensor, the move that fits it: `rand_like(x)` from `rand(x.shape, dtype=x.dtype)`,
    `multinomial(probs, n)` (also `randint_like(x, n)`, `normal(0, std)`) from CPU copies of its tensors (see
    `_shown` for `free`, `_moved` for `host`)."""
    name = qualified.rpartition(".")[2]
    tensors = [i for i in inputs if i is not None and not _is_number(i)]
    shown = _shown(tensors[0] if tensors else None, free)
    if name.endswith("_like") and name != "randint_like":
        return _moved("draw on the CPU", f"torch.{name[:-5]}({shown}.shape, dtype={shown}.dtype)", f"{shown}.device",
                      host)

    def on_cpu(value: ast.expr) -> ast.expr:
        return ast.Name(f"{_shown(value, free)}.cpu()") if any(value is t for t in tensors) else value

    copied = ast.Call(call.func, [on_cpu(a) for a in call.args], [ast.keyword(k.arg, on_cpu(k.value)) for k in call.keywords])
    return _moved("draw from a CPU copy", _short(copied), f"{shown}.device", host)


def _shown(tensor: ast.expr | None, free: str) -> str:
    """How an example names a tensor (written twice or more): its source when plain, or short (parenthesised unless
    a call: `c.float().shape`, `(x * 2).shape`), else `free`, a name the file does not use."""
    if isinstance(tensor, PLAIN):
        return ast.unparse(tensor)
    text = ast.unparse(tensor) if tensor is not None else ""
    if not text or len(text) > SHOWN_LENGTH:
        return free
    return text if isinstance(tensor, ast.Call) else f"({text})"


def _scopes_to(tree: ast.AST, target: ast.AST | None) -> list[ast.AST]:
    """The functions and classes from `tree` down to `target` (one of them), as ancestors for reading names there;
    [] when `target` is None or not found."""
    todo: list[tuple[ast.AST, list[ast.AST]]] = [(tree, [])]
    while todo and target is not None:
        node, path = todo.pop()
        for child in ast.iter_child_nodes(node):
            inner = [*path, child] if isinstance(child, SCOPE_TYPES) else path
            if child is target:
                return inner
            todo.append((child, inner))
    return []


def _free_name(tree: ast.AST) -> str:
    """A name for a tensor in a message's example that the file does not use (`x`, else `t`, ...)."""
    used = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
    used |= {node.arg for node in ast.walk(tree) if isinstance(node, ast.arg)}
    return next(name for name in (*FREE_NAMES, *(f"x{i}" for i in range(len(used) + 1))) if name not in used)


def _device_message(call: ast.Call, device: ast.expr, host: bool) -> str:
    """For a draw given `device=`: the same call without it, then moved (`torch.rand(16, 100).to(device)`); a
    `*_like(x)` draw, which would follow x's device without it, given the CPU (`torch.randn_like(x,
    device='cpu').to(x.device)`, as msprobe-instrument writes it)."""
    on_cpu = _without_device(call)
    if ast.unparse(call.func).endswith("_like"):
        on_cpu.keywords.append(ast.keyword("device", ast.Constant("cpu")))
    return _moved("draw on the CPU", _short(on_cpu), _short(device), host)


def _without_device(call: ast.Call) -> ast.Call:
    return ast.Call(call.func, call.args, [kw for kw in call.keywords if kw.arg != "device"])


def _init_message(call: ast.Call, free: str, torch: str) -> str:
    """For a `torch.nn.init` draw: the same initialiser on a CPU tensor of that shape, copied in through `.data`
    (as the initialiser, outside autograd: `w.data.copy_(nn.init.kaiming_uniform_(torch.empty(w.shape), a=1))`;
    `torch`: the name the file binds torch to)."""
    tensor = argument(call, 0, "tensor")
    shown = _shown(tensor, free)
    empty = ast.Name(f"{torch}.empty({shown}.shape)")
    on_cpu = ast.unparse(ast.Call(call.func, [empty, *call.args[1:]], [kw for kw in call.keywords if kw.arg != "tensor"]))
    if len(on_cpu) > 72:  # its other arguments elided (a one-line message)
        on_cpu = ast.unparse(ast.Call(call.func, [empty, ast.Name("...")], []))
    data = shown if shown.endswith(".data") else f"{shown}.data"
    return MOVE_MESSAGE.format(example=f"{data}.copy_({on_cpu})")


def _init_message_on_device(call: ast.Call, fn: str) -> str:
    """For weights initialised on a model once moved: the same call on the model before its move (`model.apply(fn)`
    for `model.to(device).apply(fn)`)."""
    model = call.func.value
    while isinstance(model, ast.Call) and isinstance(model.func, ast.Attribute) and model.func.attr in MOVES:
        model = model.func.value
    first = ast.Call(ast.Attribute(model, call.func.attr), call.args, call.keywords)
    return APPLY_MESSAGE.format(call=_short(call), fn=fn, first=_short(first))


def _method_message(call: ast.Call, free: str, host: bool, torch: str) -> str:
    """For a tensor method that draws: the same draw on the CPU, then moved: copied into a tensor shown by name
    (`w.copy_(torch.empty(w.shape, dtype=w.dtype).uniform_(-1, 1))`), drawn from a CPU copy (`p.cpu().bernoulli()`),
    or on a new CPU tensor (`torch.empty(4).exponential_().to(device)`, `torch.empty(shape)` when not shown; a new
    `*_like(x)` made on the CPU: `torch.empty_like(x, device="cpu").exponential_().to(x.device)`; see `_moved` for
    `host`; `torch`: the name the file binds torch to, `th` for `import torch as th`)."""
    receiver, method = call.func.value, call.func.attr
    draw = _short(ast.Call(ast.Name(method), call.args, call.keywords))
    shown = _shown(receiver, free)
    if method in catalogue.TENSOR_DRAW_METHODS:
        return _moved("draw on the CPU", f"{shown}.cpu().{draw}", f"{shown}.device", host)
    if isinstance(receiver, PLAIN):
        return MOVE_MESSAGE.format(example=f"{shown}.copy_({torch}.empty({shown}.shape, dtype={shown}.dtype).{draw})")
    if (isinstance(receiver, ast.Call) and ast.unparse(receiver.func).endswith("_like") and receiver.args
            and isinstance(source := receiver.args[0], PLAIN)):
        on_cpu = ast.keyword("device", ast.Constant("cpu"))
        made = ast.unparse(ast.Call(receiver.func, receiver.args, [*_without_device(receiver).keywords, on_cpu]))
        if len(made) > 72:  # its other arguments elided
            made = ast.unparse(ast.Call(receiver.func, [source, ast.Name("...")], [on_cpu]))
        moved_to = keyword(receiver, "device") or ast.Name(f"{ast.unparse(source)}.device")
        return MOVE_MESSAGE.format(example=f"{made}.{draw}.to({_short(moved_to)})")
    device = keyword(receiver, "device") if isinstance(receiver, ast.Call) else None
    if device is None:
        return MOVE_MESSAGE.format(example=f"{torch}.empty(shape).{draw}.to(device)")
    return MOVE_MESSAGE.format(example=f"{_short(_without_device(receiver))}.{draw}.to({_short(device)})")


class DeviceRng(FollowsValues, Rule):
    code = "MSP201"
    name = "device-rng"
    severity = "error"
    frameworks = ("pytorch",)
    fixable = True
    message = MOVE_MESSAGE.format(example="torch.randn(shape).to(device)")
    summary = ("Flags torch draws (`randn`, `rand`, `randint`, `randperm`, `normal`, `bernoulli`, `multinomial`, "
               "`poisson`, `*_like`, in-place `normal_()`/`uniform_()`/..., `nn.init.*_`) that run on an "
               "accelerator: `device=` a non-CPU device or a device not provably the CPU, or an input tensor "
               "known (in the same function) to live on a device, or whose `.device` the function passes as a "
               "`device=` (RT-DETR's `torch.randperm(n, device=gt_bbox.device)`, then `torch.rand_like(gt_bbox."
               "repeat(2, 1))`); an attribute the function assigns holds what it was last given, a None aside. "
               "A draw on a tensor whose device is not shown "
               "(`torch.randn_like(x0)` on a parameter, `x.new_empty(s).bernoulli_(p)`) is a warning in "
               "module methods (of `nn.Module` subclasses, Lightning modules, subclasses of a deep-learning "
               "library's layers named as such, peft's `LoraParallelLinear`, Megatron's `MegatronModule`, "
               "transformers' `PreTrainedModel`, and of a project module's class that is one), in functions the file registers "
               "as a module's hook (ms-swift's NEFTune `register_forward_hook(neftune_hook)`), and in files that run "
               "on an accelerator (`.cuda()`, `.to(device)`, "
               "`device=`, `torch.device(\"cuda\")`, DDP, `init_process_group`, Lightning, accelerate, "
               "DeepSpeed, torch_npu), except in code that runs on the CPU: weight initialisation (`*init*`, "
               "`reset*` but not a NoisyNet's `reset_noise`, `*normal_`/`*uniform_` helpers, an in-place initialiser "
               "named as `torch.nn.init`'s filling the tensor it is given, timm's `variance_scaling_(tensor)`), "
               "datasets, collate "
               "functions, transforms, and "
               "`with torch.device(\"cpu\")`; in data code (per-sample or per-batch code, and a function of the file only "
               "such code calls: ms-swift's gemma `_update_inputs` from its `_data_collator`) the `.device` of a tensor "
               "whose device is not shown is the CPU. What a project function given `device=d` returns lives on `d` "
               "(torchtitan's Flux `preprocess_data(device=self.device, ...)`, then `torch.randn_like(labels)`). A `torch.Generator` made on a device (diffusers' validation "
               "`torch.Generator(device=accelerator.device)`) is flagged too, and so is a diffusers pipeline "
               "(`DiffusionPipeline.from_pretrained(...)`, moved to a device) called without a generator, as "
               "DreamBooth generates its class images; both are info where they only feed a pipeline's sampling "
               "after the loop of training steps (images to look at: `pipeline(prompt, generator=g)` after it, also "
               "after it in each epoch), not before it. A draw, generator or module on a device that is a parameter "
               "defaulting to the CPU (`device=None`, `device=\"cpu\"`), a field so defaulting of a parameter's class "
               "(`config.init_device` of `config: ModelConfig`), or a parameter that every call passes the CPU or such "
               "a parameter of its own (lerobot's `rand_device`; the calls in the project's files importing a "
               "module-level function or class are read too: every caller of VideoMAE's `RandomErasing` passes "
               "`device=\"cpu\"`), is info: it draws on a device only where "
               "a caller passes one; so is a model's tensor where the model was loaded by `from_pretrained(..., "
               "device_map=...)` such a parameter (OpenRLHF's reward head; a model loaded without a device map is on the "
               "CPU), unless a `with deepspeed.zero.GatheredParameters([...])` gathers it (on the accelerator). A draw from a tensor parameter that every call of its function in the file "
               "makes on the CPU is not flagged (LAVIS's ALBEF `self.mask(..., probability_matrix=...)` after "
               "`torch.full(labels.shape, p)`). A draw given a generator that may be made on the device (a parameter, an "
               "attribute) needs a CPU generator for its CPU draw: msprobe-instrument leaves it to you, but makes on "
               "the CPU, with the draw, a generator the file makes on a device (`g = torch.Generator(d)`, also `None if "
               "seed is None else torch.Generator(d)`); a generator parameter defaulting to None that no call in the "
               "file sets is none (Open-Sora's copy of diffusers' `DiagonalGaussianDistribution.sample`). A draw whose "
               "result is a constant (a literal spread of 0, `w.normal_(mean=1, std=0)`, or equal bounds, "
               "`w.uniform_(a, a)`) is not reported. A draw whose result is read on the host right away (`.item()`, "
               "`.tolist()`) is advised (and rewritten) without the move back. A model built in the function and moved to a device only later (`model.cuda(args.gpu)`) is on "
               "the CPU until then, and so are its submodules and tensors (`for layer in model.modules()`). "
               "`sample()`/`rsample()` of a `torch.distributions` distribution "
               "(`Categorical(logits=logits).sample()`, also one kept in a name) draws where its parameters live, "
               "checked as those inputs are (msprobe-instrument leaves these to you). A random method of a module "
               "(a name an import binds: audiocraft's `utils.multinomial(probs, 1)`) is not a tensor's. In files that import diffusers it also flags diffusers' own draws "
               "without a generator: `randn_tensor(shape, device=d)` on a device (also a project's copy of it, "
               "imported from the project module defining it with diffusers' parameters: a vendored diffusers "
               "pipeline's `from ...utils.torch_utils import randn_tensor`), and "
               "`vae.encode(x).latent_dist.sample()` (the VAE's device, shown or not, as above, and in data code "
               "too), also of a posterior kept in a name (`posterior = vae.encode(x).latent_dist`, or a name "
               "ending in `latent_dist`) or in a list it is appended to (`latents_cache[step].sample()`, "
               "DreamBooth's `--cache_latents`). A torch.nn module built with `device=` a device (`nn.Linear(d, d, "
               "device=\"cuda\")`, also `Conv*`, `Embedding`, RNNs, `MultiheadAttention`, `Transformer*` layers: those "
               "whose construction draws weights) is flagged too, unless its weights are loaded over, or every weight (the "
               "module given to an initialiser, or the weight of one without bias) is initialised again by the "
               "statement after it (then that initialiser, on the device, is flagged instead: gpt-neox's "
               "`init_method(self.layer.weight)`; msprobe-instrument leaves it to you) or by an initialising method of "
               "its class (OLMo's `reset_parameters()`, flagged where it runs on a device); one on a device that may be the meta device "
               "(`device=config.init_device`, or one the file compares with \"meta\") is left to you (a CPU build "
               "of a meta model). It also flags an accelerator made the default device, where "
               "modules are built and tensors drawn without `device=`: `torch.set_default_device(\"cuda\")`, "
               "`torch.set_default_tensor_type(torch.cuda.FloatTensor)`, a `with torch.device(d):` block (`d` not "
               "the CPU or meta; also a device object held in a name, `dev = torch.device(d)` or torchtune's "
               "`self._device = utils.get_device(...)`, then `with self._device:`; a Lightning Fabric's root device, "
               "lit-llama's `with fabric.device:`) or a Lightning Fabric's `with fabric.init_module():` block (unless "
               "`empty_init=True`; not with Lightning's FSDP or model-parallel strategy, whose `init_module()` builds "
               "on the CPU, a warning where the file gives its Fabric such a strategy only in some runs) "
               "that builds a module or draws (unless every weight of the models it builds is loaded afterwards, "
               "`load_checkpoint(fabric, model, path)` or `model.load_state_dict(sd)`, not `strict=False`), and "
               "`init_weights()`, `reset_parameters()` or `apply(fn)` on a model "
               "that `to_empty(device=d)` materialised on a device (torchtitan's initialisation; info where a loader of the model's weights runs after it: "
               "`dcp.load(sd)` of a state dict taken from it), and `model.apply(fn)` on "
               "a model moved to a device (also in place: `model.cuda()` as a statement), where `fn` is a function of the "
               "file, or of a project module it imports, that draws (DCGAN's `netG = Generator().to(device)` then "
               "`netG.apply(weights_init)`), and a model's initialising method (`init_weights()`, `reset_parameters()`, "
               "`_init_weights()`, ...) called on a model on a device (moved, `fabric.setup(model)`, or `self.model` "
               "in a LightningModule hook that runs after the Trainer moved it, `on_train_start`) when it draws: "
               "read in the class that built the model (the file's or a project module's), or, when that cannot be "
               "read, a conventional initialiser (`init_weights`, `reset_parameters`); msprobe-instrument leaves "
               "these to you. Tensors made without `device=`, and what is computed from them alone (views, "
               "arithmetic, indexing, comparisons, torch functions), are on the CPU, and so is a module built into an "
               "attribute (`self.proj = nn.Linear(...)`) or by a module class (the file's or a project module's) whose "
               "`__init__` puts nothing on a device. Draws in an RNG tracker's fork (Megatron's `with "
               "get_cuda_rng_tracker().fork():`, also kept in a name) take the CUDA generator state it keeps per "
               "model-parallel rank: they are errors with the tracker's advice (a CPU generator seeded as the "
               "tracker's state; in weight initialisation, `--use-cpu-initialization`), and so is such a block that "
               "hands weights to an initialiser (`init_method(weight)`); msprobe-instrument leaves them to you. A draw "
               "whose value is thrown away (in a function named for a warm-up, a benchmark or a dummy step, but not "
               "one that yields its draws or builds data, as nanotron's `dummy_infinite_data_generator`; or bound to "
               "names `del`eted later, or named so: torchtitan's `dummy_inputs` to trace a step; or in an input function handed to AutoParallel, or "
               "a project subclass of it, which runs it under FakeTensorMode to trace the model) is info, and so is one in code a function reaches only past a test of one "
               "of its parameters that it returns on and that every call of it in the project passes (or leaves at "
               "a default) a value for making it return (fairseq's `quant_noise` in BEATs: `if p <= 0: return "
               "module` before the hook that draws, with every caller's `q_noise=0.0`).")
    why = ("Every device has its own generator. Seeded alike, CUDA's Philox generator and the NPU's generator "
           "produce different numbers, so diffusion noise, masks or initial weights drawn on the device differ "
           "between the GPU run and the NPU run you want to compare, and nothing downstream can match. Draws on "
           "the CPU are the same everywhere for one seed. `torch.randn_like(x)` draws where `x` lives: in a "
           "training script that moves its batches to the GPU, the DDPM loss's `noise = torch.randn_like(x0)` "
           "is a GPU draw although no line says so. Fine-tuning scripts built on diffusers draw twice a step "
           "where no line names a device: the latents, `vae.encode(x).latent_dist.sample()`, on the VAE's device. "
           "Initial weights are draws too: a model built under `with torch.device(\"cuda\")` (or with CUDA as the "
           "default device), or built on the meta device and initialised after `to_empty(device=\"cuda\")`, "
           "starts from different weights on the GPU and on the NPU, so the runs differ before the first step.")
    fix = ("Draw on the CPU the same draw, with the same distribution, and move the result (the message shows it "
           "for the flagged call): `torch.rand(shape).to(device)` instead of `torch.rand(shape, device=device)`, "
           "`torch.randn(x.shape, dtype=x.dtype).to(x.device)` instead of `torch.randn_like(x)`, "
           "`torch.empty(shape).exponential_().to(device)` instead of `torch.empty_like(x).exponential_()` (Gumbel "
           "noise), `w.copy_(torch.empty(w.shape, dtype=w.dtype).uniform_(a, b))` instead of filling a device "
           "tensor in place, `w.data.copy_(nn.init.kaiming_uniform_(torch.empty(w.shape)))` instead of initialising "
           "it on the device. "
           "Draws with no `device=` are on the CPU already. A variable counts as the CPU only when every "
           "assignment to it in the function is a CPU device (`\"cpu\"`, `torch.device(\"cpu\")`). Where a "
           "warning's tensor is in fact on the CPU the rewrite gives the very same numbers, so applying it is "
           "harmless; or say so with `x = x.cpu()` or `# noqa: device-rng`. diffusers draws on the CPU and moves "
           "the result when given a CPU generator: `latent_dist.sample(generator=torch.default_generator)`, "
           "`randn_tensor(shape, generator=torch.default_generator, device=d)` (torch's global CPU generator, "
           "the numbers of `torch.randn(shape).to(d)`; diffusers logs this at the info level). Build models on the "
           "CPU and move them (`Net().to(device)`), or on `torch.device(\"meta\")` and load weights saved once "
           "(torchtitan's seed checkpoint); initialise after `to_empty(device=\"cpu\")`, then move; keep the "
           "CPU as the default device while comparing runs.")
    valid = (
        # A pipeline given a CPU generator draws on the CPU; one never moved runs there.
        "import torch\nfrom diffusers import DiffusionPipeline\n\n\ndef sample(args, device):\n"
        "    pipeline = DiffusionPipeline.from_pretrained(args.model).to(device)\n"
        "    on_cpu = DiffusionPipeline.from_pretrained(args.model)\n"
        "    return pipeline(args.prompt, generator=torch.Generator().manual_seed(0)).images, on_cpu(args.prompt)\n",
        "import torch\n\ng = torch.Generator().manual_seed(0)\nh = torch.Generator(\"cpu\")\n",
        # ms-swift's gemma template: a helper only its collate function calls draws on the device of the batch it
        # builds, on the CPU.
        "import torch\n\n\nclass Template:\n    def _data_collator(self, batch):\n"
        "        return self._update_inputs(torch.stack(batch))\n\n    def _update_inputs(self, ids):\n"
        "        device = ids.device\n        return torch.where(torch.rand(ids.shape, device=device) < 0.5, ids, 0)\n",
        # nanochat: every weight initialised on the device is loaded over (strictly) right after.
        "import torch\n\n\ndef build(model, device, state):\n    model.to_empty(device=device)\n    model.init_weights()\n"
        "    model.load_state_dict(state, strict=True, assign=True)\n    return model\n",
        "import torch\n\n\ndef noise(shape, device):\n    return torch.randn(shape).to(device)\n",
        "import torch\n\n\ndef gumbel(logits):\n    logits = logits.cuda()\n"
        "    return -torch.empty(logits.shape).exponential_().log().to(logits.device)\n",
        # Initialised on the CPU, then moved.
        "import torch\nimport torch.nn as nn\n\n\ndef weights_init(m):\n    if isinstance(m, nn.Conv2d):\n"
        "        m.weight.data.normal_(0.0, 0.02)\n\n\ndef build(device):\n"
        "    net = nn.Sequential(nn.Conv2d(3, 8, 3))\n    net.apply(weights_init)\n    return net.to(device)\n",
        # Weights overwritten right after the construction: what it drew does not survive.
        "import torch\nimport torch.nn as nn\n\n\ndef widen(old, extra):\n"
        "    new = nn.Linear(old.in_features + extra, old.out_features, device=old.weight.device)\n"
        "    with torch.no_grad():\n        new.weight.zero_()\n        new.weight[:, :old.in_features].copy_(old.weight)\n"
        "    return new\n",
        # The meta device draws nothing; weights initialised on the CPU, or a block that only computes, are fine.
        "import torch\nfrom model import GPT\n\n\ndef build(config, device):\n    with torch.device(\"meta\"):\n"
        "        model = GPT(config)\n    model.to_empty(device=\"cpu\")\n    model.init_weights()\n"
        "    with torch.device(device):\n        positions = torch.arange(16) * 2\n    return model.to(device)\n",
        "import lightning as L\nfrom model import GPT\n\nfabric = L.Fabric()\nwith fabric.init_module(empty_init=True):\n"
        "    model = GPT(config)\nmodel.load_state_dict(torch.load(\"init.pt\"))\ntorch.set_default_device(\"cpu\")\n",
        # Fine-tuning: every weight is loaded over the ones drawn on the device.
        "import lightning as L\nimport torch\nfrom model import GPT\n\n\ndef main(fabric, config, path):\n"
        "    with fabric.init_module(empty_init=fabric.world_size > 1):\n        model = GPT(config)\n"
        "    load_checkpoint(fabric, model, path)\n    with fabric.init_module(empty_init=False), torch.device(\"meta\"):\n"
        "        shell = GPT(config)  # the innermost context wins: nothing is drawn\n",
        "import torch\n\nx = torch.rand(4, 4, device=\"cpu\")\nmask = torch.bernoulli(torch.full((4,), 0.5))\n",
        # A distribution of CPU tensors samples on the CPU.
        "import torch\nfrom torch.distributions import Normal\n\n\ndef explore(mean, device):\n"
        "    return Normal(mean.cpu(), 1.0).rsample().to(device), Normal(torch.zeros(3), 1.0).sample()\n",
        "import torch as T\n\n\ndef make(n):\n    device = T.device(\"cpu\")\n"
        "    return T.randperm(n, device=device)\n",
        "import torch\n\n\ndef f(x):\n    x = x.cpu()\n    return torch.randn_like(x) + x.normal_()\n",
        # LAVIS's ALBEF: every call of `mask` passes a probability matrix `torch.full` made on the CPU
        "import torch\nfrom torch import nn\n\n\nclass MLM(nn.Module):\n    def forward(self, ids, p):\n"
        "        probs = torch.full(ids.shape, p)\n        return self.mask(ids, probability_matrix=probs)\n\n"
        "    def mask(self, ids, probability_matrix=None):\n        return ids * torch.bernoulli(probability_matrix)\n",
        "from torch import randn as rn, randn_like\n\n\ndef sample(batch):\n"
        "    # this file never puts anything on a device: `batch` is not known to live on one\n"
        "    return rn(batch.shape) + randn_like(batch)\n",
        "import numpy as np\nimport random\n\nx = np.random.randn(3)\ny = random.random()\n"
        "\n\ndef randn(*size, device=None):\n    return size\n\n\nz = randn(3, device=\"cuda\")  # not torch's\n",
        "import torch\n\nw = torch.empty(3, 3)\ntorch.nn.init.kaiming_normal_(w)\nw.normal_()\nw = w.cuda()\n",
        "import torch\nfrom torch.utils.data import Dataset\n\n\nclass Noisy(Dataset):\n"
        "    def __getitem__(self, i):\n        return torch.randn_like(self.items[i])\n\n\n"
        "def collate(batch):\n    return torch.stack(batch).bernoulli_(0.5)\n\n\n"
        "def init_weights(w):\n    w.normal_(0.0, 0.02)\n\n\n"
        "def build(layers):\n    with torch.device(\"cpu\"):\n        return [w.uniform_() for w in layers]\n\n\n"
        "def main(model, loader):\n    model.cuda()  # the file runs on a GPU, but these draws do not\n",
        # MoCo's and SimSiam's linear probes: a model picked by name from torchvision's models (or a timm model)
        # is built on the CPU, its head initialised there, then moved.
        "import torch\nimport timm\nimport torchvision.models as models\n\n\ndef build(args):\n"
        "    model = models.__dict__[args.arch]()\n    getattr(model, args.head).weight.data.normal_(mean=0.0, std=0.01)\n"
        "    head = timm.create_model(args.arch)\n    head.head.weight.data.normal_()\n"
        "    return model.cuda(args.gpu), head.cuda()\n",
        # ModelZoo's ResNet-50: a model built here (by a project's factory, or torchvision's) and moved only later
        # is still on the CPU while its layers are initialised; so are its submodules and parameters.
        "import math\n\nimport torch\nimport torch.nn as nn\nimport torchvision.models as models\n"
        "import resnet as nvmodels\n\n\ndef main(args):\n    if args.pretrained:\n"
        "        model = nvmodels.build_resnet(\"resnet50\", \"classic\")\n    else:\n"
        "        model = models.__dict__[args.arch](num_classes=args.num_classes)\n"
        "    for layer in model.modules():\n        if isinstance(layer, nn.Linear):\n"
        "            torch.nn.init.kaiming_normal_(layer.weight, a=math.sqrt(5))\n"
        "    for name, p in model.named_parameters():\n        p.data.normal_()\n"
        "    model.cuda(args.gpu)\n    return model.to(torch.float16)\n",
        # fairseq's compute_block_mask_2d: tensors made here without `device=`, and what is computed from them
        # (views, arithmetic, indexing, comparisons, `.float()`, torch functions of them), are on the CPU; so is a
        # module just built into an attribute, or by a module class whose `__init__` puts nothing on a device.
        "import torch\nimport torch.nn.functional as F\nfrom torch import nn\n\n\ndef block_mask(B, sz, n, nbs):\n"
        "    inp = torch.zeros((B, 1, sz, sz))\n    first = torch.multinomial(1 - inp.view(B, -1), n)\n"
        "    mask = F.conv_transpose2d(inp, torch.ones((1, 1, 2, 2)), stride=2).squeeze(1).reshape(B, -1)\n"
        "    m = mask[0]\n    cands = (1 - m + nbs[0]) > 1\n"
        "    return first, torch.multinomial(cands.float(), n), torch.multinomial(-m, n)\n\n\n"
        "class Decoder(nn.Module):\n    def build_output_projection(self, dim, vocab):\n"
        "        self.output_projection = nn.Linear(dim, vocab, bias=False)\n"
        "        nn.init.normal_(self.output_projection.weight, std=dim**-0.5)\n"
        "        self.embed = Embedding(vocab, dim)\n        nn.init.normal_(self.embed.weight)\n\n\n"
        "class Embedding(nn.Embedding):\n    pass\n\n\ndef main(model):\n    model.cuda()\n",
        # fairseq's layer factories: a module just built is on the CPU, and so are its parameters
        "import torch.nn as nn\n\n\ndef Linear(n_in, n_out):\n    m = nn.Linear(n_in, n_out)\n"
        "    nn.init.xavier_uniform_(m.weight)\n    return m.cuda()\n",
        "import torch\nfrom diffusers.utils.torch_utils import randn_tensor\n\n\n"
        "def latents(vae, pixels, device):\n"
        "    z = vae.encode(pixels.to(device)).latent_dist.sample(generator=torch.default_generator)\n"
        "    return z + randn_tensor(z.shape, generator=torch.default_generator, device=device)\n",
        # Initialised before the move, initialised with constants only, or loaded over right after; a Lightning
        # `setup` hook runs before the Trainer moves the module; a Fabric on the CPU.
        "import lightning as L\nimport torch\nfrom torch import nn\n\n\nclass Net(nn.Module):\n"
        "    def reset_parameters(self):\n        nn.init.ones_(self.norm.weight)\n\n"
        "    def init_weights(self):\n        nn.init.normal_(self.proj.weight)\n\n\n"
        "class Module(L.LightningModule):\n    def setup(self, stage):\n        self.net.init_weights()\n\n"
        "    def __init__(self):\n        self.net = Net()\n\n\n"
        "def build(device, state):\n    net = Net()\n    net.init_weights()\n    net = net.to(device)\n"
        "    net.reset_parameters()\n    net.init_weights()\n    net.load_state_dict(state)\n"
        "    fabric = L.Fabric(accelerator=\"cpu\")\n    model = fabric.setup(Net())\n    model.init_weights()\n",
        # timm's in-place initialiser helpers fill the weights they are given, wherever those are initialised.
        "import math\n\nimport torch\n\n\ndef variance_scaling_(tensor, scale=1.0):\n"
        "    tensor.normal_(std=math.sqrt(scale))\n\n\ndef main(model):\n    model.cuda()\n",
        # A library class that is not a module (a callback, a config): its methods are not model code.
        "import torch\nfrom transformers import TrainerCallback\n\n\nclass Jitter(TrainerCallback):\n"
        "    def on_step_end(self, args, state, control, weights=None):\n        return torch.randn_like(weights)\n",
        "import torch  # no diffusers here: another library's `latent_dist`\n\n\n"
        "def encode(model, x):\n    return model.encode(x.cuda()).latent_dist.sample()\n",
        "import torch\nfrom diffusers import AutoencoderKL\n\n\n"
        "def train(vae, loader, dist):\n    cache = [vae.encode(x).latent_dist for x in loader]\n"
        "    return [d.sample(generator=torch.default_generator) for d in cache] + [dist.sample()]  # not a posterior\n",
        # audiocraft: a name an import binds is a module (`utils.multinomial` is its function, reported in its file).
        "import torch\nfrom torch import nn\nfrom ..utils import utils\nimport helpers.sampling\n\n\n"
        "class LM(nn.Module):\n    def forward(self, probs):\n"
        "        return utils.multinomial(probs, num_samples=1), helpers.sampling.bernoulli(probs)\n",
        # OLMo: a class whose `reset_parameters()` draws every weight again (a module given to an initialiser, or the
        # weight of one without bias); what counts is where that runs.
        "import torch\nfrom torch import nn\nfrom .initialization import init_normal\n\n\nclass Block(nn.Module):\n"
        "    def __init__(self, config):\n"
        "        self.ff = nn.Linear(config.d_model, config.d_model, device=config.init_device)\n"
        "        self.blocks = nn.ModuleDict(dict(wte=nn.Embedding(9, 8, device=config.init_device)))\n\n"
        "    def reset_parameters(self):\n        init_normal(self.ff, std=0.02)\n"
        "        nn.init.normal_(self.blocks.wte.weight)\n",
        # TinyLlama, lit-gpt: Lightning's FSDP strategy builds in `init_module()` on the CPU (never the root device).
        "import lightning as L\nfrom lightning.fabric.strategies import FSDPStrategy\nfrom model import GPT\n\n\n"
        "def main(config, devices):\n    strategy = FSDPStrategy(auto_wrap_policy={GPT}) if devices > 1 else \"fsdp\"\n"
        "    fabric = L.Fabric(devices=devices, strategy=strategy)\n    with fabric.init_module(empty_init=False):\n"
        "        model = GPT(config)\n    return fabric.setup(model)\n",
        # SAM3's ViTDet: the attribute holds a CPU tensor made just before (or None, which holds no tensor).
        "import torch\nimport torch.nn as nn\n\n\nclass Attention(nn.Module):\n"
        "    def setup_rel_pos(self, size, zero_init=True):\n        if size is None:\n"
        "            self.rel_pos_h = None\n            return\n"
        "        self.rel_pos_h = nn.Parameter(torch.zeros(2 * size - 1, 64))\n"
        "        if not zero_init:\n            nn.init.trunc_normal_(self.rel_pos_h, std=0.02)\n",
        # modded-nanogpt: a spread of 0, or equal bounds, give a constant on any device: nothing is drawn.
        "import torch\n\n\ndef gains(x):\n    x = x.cuda()\n"
        "    return x.normal_(mean=1, std=0), x.uniform_(2.0, 2.0), torch.normal(x, 0.0)\n",
        # A diffusers draw given a generator by a caller in this file draws where that generator is.
        "import torch\nfrom diffusers.utils.torch_utils import randn_tensor\n\n\nclass Posterior:\n"
        "    def sample(self, generator=None):\n"
        "        return randn_tensor(self.mean.shape, generator=generator, device=self.mean.device)\n\n\n"
        "def encode(posterior):\n    return posterior.sample(generator=torch.Generator().manual_seed(0))\n",
    )
    invalid = (
        # The DCGAN tutorial: wrapped for data parallelism between the move and the initialisation.
        Invalid("import torch\nimport torch.nn as nn\n\n\ndef weights_init(m):\n    nn.init.normal_(m.weight.data, 0.0, 0.02)\n\n\n"
                "device = torch.device(\"cuda\")\nnetG = nn.Linear(3, 3).to(device)\n"
                "netG = nn.DataParallel(netG, [0, 1])\nnetG.apply(weights_init)\n", lines=(12,), severity="error"),
        # torchtune's LoRA recipes: the device object kept on the recipe, used as a context manager; the adapters'
        # weights stay as drawn (the base checkpoint is loaded non-strictly).
        Invalid("import torch\nfrom torchtune import config, utils\n\n\nclass Recipe:\n    def __init__(self, cfg):\n"
                "        self._device = utils.get_device(device=cfg.device)\n\n    def setup(self, cfg, state):\n"
                "        with self._device:\n            model = config.instantiate(cfg.model)\n"
                "        model.load_state_dict(state, strict=False)\n        return model\n\n\n"
                "def build():\n    dev = torch.device(\"cuda\")\n    with dev:\n        return torch.nn.Linear(8, 8)\n",
                lines=(10, 18), severity="error"),
        # DreamBooth's prior preservation: class images generated by a pipeline on the device, no generator given.
        Invalid("import torch\nfrom diffusers import DiffusionPipeline\n\n\ndef class_images(args, accelerator, prompts):\n"
                "    pipeline = DiffusionPipeline.from_pretrained(args.model)\n    pipeline.to(accelerator.device)\n"
                "    return [pipeline(prompt).images for prompt in prompts]\n", lines=(8,)),
        # diffusers' training scripts sample validation images with a generator made on the device (info: an
        # evaluation function); one made in a training step is an error.
        Invalid("import torch\n\n\ndef log_validation(pipeline, args, accelerator):\n"
                "    generator = torch.Generator(device=accelerator.device).manual_seed(args.seed)\n"
                "    return pipeline(args.prompt, generator=generator).images\n", lines=(5,), severity="info"),
        # Images sampled to look at after the loop of training steps (diffusers' final inference, or its
        # unconditional script's samples after each epoch): the training does not see them.
        Invalid("import torch\nfrom diffusers import DDPMPipeline, StableDiffusionPipeline\n\n\n"
                "def main(args, accelerator, unet, scheduler, loader, optimizer):\n    for epoch in range(args.epochs):\n"
                "        for batch in loader:\n            unet(batch).loss.backward()\n            optimizer.step()\n"
                "        pipeline = DDPMPipeline(unet=unet, scheduler=scheduler)\n"
                "        generator = torch.Generator(device=pipeline.device).manual_seed(0)\n"
                "        images = pipeline(generator=generator, batch_size=4).images\n"
                "    pipeline = StableDiffusionPipeline.from_pretrained(args.model, unet=unet)\n"
                "    pipeline = pipeline.to(accelerator.device)\n"
                "    generator = torch.Generator(device=accelerator.device).manual_seed(args.seed)\n"
                "    return images, [pipeline(p, generator=generator).images[0] for p in args.prompts], pipeline(args.prompt)\n",
                lines=(11, 15, 16), severity="info"),
        # Images sampled before training are its data (DreamBooth's class images); a generator also used elsewhere.
        Invalid("import torch\nfrom diffusers import StableDiffusionPipeline\n\n\n"
                "def main(args, device, unet, loader, optimizer):\n"
                "    pipeline = StableDiffusionPipeline.from_pretrained(args.model).to(device)\n"
                "    generator = torch.Generator(device).manual_seed(0)\n"
                "    images = pipeline(args.prompt, generator=generator).images\n    for batch in loader:\n"
                "        unet(batch, images).loss.backward()\n        optimizer.step()\n"
                "    generator = torch.Generator(device).manual_seed(1)\n"
                "    return pipeline(args.prompt, generator=generator), torch.randn(4, generator=generator, device=device)\n",
                lines=(7, 12, 13), severity="error"),
        Invalid("import torch\n\n\ndef train_step(unet, latents, device):\n"
                "    g = torch.Generator(device).manual_seed(0)\n"
                "    return unet(latents + torch.randn(latents.shape, generator=g, device=device))\n",
                lines=(5, 6), severity="error"),
        Invalid("import torch\n\nnoise = torch.randn(8, 3, device=\"cuda\")\n", lines=(3,)),
        # pytorch/examples' DCGAN: the initialisation runs after the move, on the device's generator.
        Invalid("import torch\nimport torch.nn as nn\n\n\ndef weights_init(m):\n"
                "    if isinstance(m, nn.Conv2d):\n        nn.init.normal_(m.weight, 0.0, 0.02)\n\n\n"
                "device = torch.device(\"cuda:0\" if torch.cuda.is_available() else \"cpu\")\n"
                "netG = nn.Sequential(nn.Conv2d(3, 8, 3)).to(device)\nnetG.apply(weights_init)\n", lines=(12,)),
        # Initialised after the move: on the device's generator (also through its modules).
        Invalid("import torch\nimport torchvision.models as models\n\n\ndef build(args):\n"
                "    model = models.__dict__[args.arch]()\n    model.cuda(args.gpu)\n"
                "    model.fc.weight.data.normal_(mean=0.0, std=0.01)\n    for layer in model.modules():\n"
                "        torch.nn.init.zeros_(layer.bias)\n        torch.nn.init.normal_(layer.weight)\n",
                lines=(8, 11)),
        # PyTorch-GAN: a module moved in place (`generator.cuda()` as a statement) is on the device too.
        Invalid("import torch\nfrom models import Generator, weights_init_normal\n\n"
                "cuda = torch.cuda.is_available()\ngenerator = Generator()\nif cuda:\n    generator.cuda()\n"
                "generator.apply(weights_init)\n\n\ndef weights_init(m):\n    m.weight.data.normal_(0.0, 0.02)\n",
                lines=(8,)),
        # A module built on the device draws its initial weights there.
        Invalid("import torch.nn as nn\n\nproj = nn.Linear(64, 64, device=\"cuda\")\nnorm = nn.LayerNorm(64, device=\"cuda\")\n",
                lines=(3,)),
        # A factory argument that is None (or "cpu") by default: info, for callers that pass a device (diffusers'
        # `compute_density_for_timestep_sampling(..., device="cpu")`).
        Invalid("import torch\nimport torch.nn as nn\n\n\ndef create_head(dim, classes, device=None):\n"
                "    return nn.Linear(dim, classes, device=device)\n\n\n"
                "def density(batch_size, device: torch.device | str = \"cpu\"):\n"
                "    return torch.rand(size=(batch_size,), device=device)\n", lines=(6, 10), severity="info"),
        # An accelerator as the default device: the model's initial weights are drawn there.
        Invalid("import torch\n\ntorch.set_default_device(\"cuda\")\nmodel = torch.nn.Linear(4, 4)\n", lines=(3,)),
        Invalid("import torch\nfrom model import GPT\n\n\ndef build(config, device):\n    with torch.device(device):\n"
                "        return GPT(config)\n", lines=(6,)),
        Invalid("import lightning as L\nfrom model import GPT\n\nfabric = L.Fabric(accelerator=\"cuda\")\n"
                "with fabric.init_module():\n    model = GPT(config)\n", lines=(5,)),
        # torchtitan: built on the meta device, materialised on the GPU, initialised there.
        Invalid("from typing import cast\n\nimport torch\n\n\ndef materialise(model, device_type):\n"
                "    model.to_empty(device=device_type)\n    with torch.no_grad():\n"
                "        cast(BaseModel, model).init_weights()\n", lines=(9,)),
        Invalid("import torch as T\n\n\ndef step(x, device):\n"
                "    t = T.randint(0, 1000, (x.shape[0],), device=device)\n"
                "    return t\n", lines=(5,)),
        Invalid("from torch import randn as rn\n\n\ndef sample(img):\n    return rn(img.shape, device=img.device)\n",
                lines=(5,)),
        Invalid("import torch\n\ndevice = \"cuda\" if torch.cuda.is_available() else \"cpu\"\n"
                "z = torch.rand(16, 100, device=device)\n", lines=(4,)),
        Invalid("import torch\n\n\ndef q_sample(x0, device):\n    x0 = x0.to(device)\n"
                "    noise = torch.randn_like(x0)\n    return x0 + noise\n", lines=(6,)),
        Invalid("import torch\n\n\ndef infer(spect, sigma=0.6):\n"
                "    audio = torch.cuda.FloatTensor(spect.size(0), 8, spect.size(2)).normal_()\n"
                "    return sigma * audio\n", lines=(5,)),
        # Gumbel sampling and an initialiser on device tensors: the message names the same draw done on the CPU.
        Invalid("import math\n\nimport torch\nfrom torch import nn\n\n\ndef sample(logits, weight):\n"
                "    weight = weight.cuda()\n    nn.init.kaiming_uniform_(weight, a=math.sqrt(5))\n"
                "    gumbel = -torch.empty_like(logits.cuda()).exponential_().log()\n"
                "    return weight, (logits.cuda() + gumbel).argmax(-1)\n", lines=(9, 10)),
        Invalid("import torch\n\nmask = torch.empty(4, 4, device=torch.device(\"npu:0\")).uniform_()\n"
                "x = torch.zeros(4).cuda()\nx.bernoulli_(0.5)\n", lines=(3, 5)),
        Invalid("import torch\n\n\ndef init(w):\n    w = w.to(\"cuda:0\")\n    torch.nn.init.normal_(w)\n"
                "    probs = torch.softmax(w, 0).float()\n    return torch.multinomial(probs.cuda(), 1)\n",
                lines=(6, 8)),
        Invalid("import torch\n\n\ndef evaluate(shape):\n    return torch.randn(shape, device=\"cuda\")\n",
                lines=(5,), severity="info"),
        Invalid("import torch\nimport torch.nn.functional as F\n\n\ndef training_loss(model, x0, t):\n"
                "    noise = torch.randn_like(x0)  # x0 comes from a batch moved to the GPU below\n"
                "    return F.mse_loss(model(x0 + noise, t), noise)\n\n\n"
                "def train(model, loader, device):\n    for x0, t in loader:\n"
                "        training_loss(model, x0.to(device), t.to(device)).backward()\n",
                lines=(6,), severity="warning"),
        Invalid("import torch\nimport torch.nn as nn\n\n\ndef build(device):\n"
                "    model = nn.Sequential(nn.Linear(4, 4)).to(device)\n    nn.init.normal_(model[0].weight)\n",
                lines=(7,), severity="error"),
        # fairseq's quant_noise (BEATs): the hook that draws is installed only past `if p <= 0: return`, and every
        # call passes a rate that is 0.0 by default
        Invalid("import torch\nfrom torch import nn\n\n\ndef quant_noise(module, p, block_size):\n    if p <= 0:\n"
                "        return module\n\n    def hook(mod, input):\n"
                "        mask = torch.zeros(mod.weight.size(0), device=mod.weight.device)\n        mask.bernoulli_(p)\n\n"
                "    module.register_forward_pre_hook(hook)\n    return module\n\n\nclass Attention(nn.Module):\n"
                "    def __init__(self, dim, q_noise=0.0):\n        super().__init__()\n"
                "        self.proj = quant_noise(nn.Linear(dim, dim), q_noise, 8)\n", lines=(11,), severity="info"),
        Invalid("import lightning as L\nimport torch\n\n\ndef drop_path(x, keep_prob):\n"
                "    mask = x.new_empty((x.shape[0], 1)).bernoulli_(keep_prob)\n    return x * mask / keep_prob\n",
                lines=(6,), severity="warning"),
        Invalid("import torch\nfrom torch import nn\n\n\nclass NoiseTransform(nn.Module):  # a layer, not data code\n"
                "    def forward(self, x):\n        return x + torch.randn_like(x)\n", lines=(7,), severity="warning"),
        Invalid("from diffusers.utils.torch_utils import randn_tensor\n\n\n"
                "def noise(latents, device):\n    return randn_tensor(latents.shape, device=device)\n",
                lines=(5,), severity="error"),
        Invalid("import torch\nfrom accelerate import Accelerator\nfrom diffusers import AutoencoderKL\n\n\n"
                "def train_step(vae, unet, batch):\n"
                "    latents = vae.encode(batch[\"pixel_values\"]).latent_dist.sample()\n"
                "    return unet(latents, torch.randint(0, 1000, (latents.shape[0],)))\n",
                lines=(7,), severity="warning"),
        # diffusers' DreamBooth scripts with --cache_latents: posteriors kept, drawn from at each step
        Invalid("import torch\nfrom diffusers import AutoencoderKL\n\n\n"
                "def train(vae, unet, loader, device):\n    latents_cache = []\n    for batch in loader:\n"
                "        latents_cache.append(vae.encode(batch.to(device)).latent_dist)\n"
                "    for step in range(len(latents_cache)):\n        z = latents_cache[step].sample()\n"
                "        posterior = vae.encode(torch.zeros(1, 3, 8, 8, device=device)).latent_dist\n"
                "        unet(z + posterior.sample()).backward()\n",
                lines=(10, 12), severity="warning"),
        Invalid("import torch\nfrom diffusers import AutoencoderKL\n\n\n"
                "def collate_fn(examples):  # posteriors the main process encoded on the GPU\n"
                "    for example in examples:\n        latent_dist, image_latent_dist = example[\"latents\"]\n"
                "        yield latent_dist.sample(), image_latent_dist.sample()\n\n\n"
                "def encode(vae, videos):\n    return vae.encode(videos.cuda()).latent_dist\n",
                lines=(8,), severity="warning"),
        # CleanRL's agents: a policy's distribution is built from the network's outputs, on its device.
        Invalid("import torch\nfrom torch import nn\nfrom torch.distributions import Categorical, Normal\n\n\n"
                "class Agent(nn.Module):\n    def act(self, x):\n        probs = Categorical(logits=self.actor(x))\n"
                "        return probs.sample()\n\n\n"
                "def explore(mean, device):\n    return Normal(mean.to(device), 1.0).rsample()\n",
                lines=(9, 13)),
        # Lightning's tensor-parallel examples: weights initialised after Fabric's setup moved the model, or in a
        # Trainer hook that runs on the device; a model given as a parameter, re-initialised once moved.
        Invalid("import lightning as L\nfrom torch import nn\n\n\nclass Transformer(nn.Module):\n"
                "    def init_weights(self):\n        self.apply(self._init_weights)\n\n"
                "    def _init_weights(self, m):\n        nn.init.trunc_normal_(m.weight, std=0.02)\n\n\n"
                "def train():\n    fabric = L.Fabric(accelerator=\"cuda\", devices=4)\n"
                "    with fabric.init_module(empty_init=True):\n        model = Transformer()\n"
                "    model = fabric.setup(model)\n    model.init_weights()\n\n\n"
                "class Llama(L.LightningModule):\n    def __init__(self):\n        self.model = Transformer()\n\n"
                "    def on_train_start(self):\n        self.model.init_weights()\n\n\n"
                "def k_fold(model, device, folds):\n    for fold in folds:\n"
                "        model.to(device).reset_parameters()\n", lines=(18, 26, 31), severity="error"),
        # A project's subclass of a library layer (MindSpeed-LLM's LoRA layer, of peft's) is model code.
        Invalid("import torch\nfrom peft.tuners.lora.tp_layer import LoraParallelLinear\n\n\n"
                "class LULoRAParallelLinear(LoraParallelLinear):\n    def enable_lu_lora(self, name):\n"
                "        self.lora_B[name].weight.data = torch.randn_like(self.lora_B[name].weight.data) * 1e-4\n",
                lines=(7,), severity="warning"),
        # A module built into an attribute and moved; a module class whose `__init__` allocates on the GPU (Megatron's
        # parallel layers): its weights' device is not the CPU.
        Invalid("import torch\nfrom torch import nn\n\n\nclass ParallelLinear(nn.Module):\n    def __init__(self, n):\n"
                "        self.weight = nn.Parameter(torch.empty(n, n, device=torch.cuda.current_device()))\n\n"
                "    def build(self, n):\n        self.proj = nn.Linear(n, n).cuda()\n"
                "        nn.init.normal_(self.proj.weight)\n\n\n"
                "def build(n):\n    layer = ParallelLinear(n)\n    nn.init.normal_(layer.weight)\n    return layer\n",
                lines=(11, 16)),
        # Megatron's RNG tracker: draws in its fork take the CUDA generator state it keeps per model-parallel rank,
        # also weights initialised there by an initialiser handed in (`_initialize_affine_weight_gpu`).
        Invalid("import torch\nfrom megatron.core.tensor_parallel import get_cuda_rng_tracker\n\n\n"
                "def route(logits):\n    with get_cuda_rng_tracker().fork():\n"
                "        return logits + torch.randn(logits.shape[-1], device=logits.device) + logits.clone().normal_()\n"
                "\n\ndef _initialize_affine_weight_gpu(weight, init_method):\n"
                "    with get_cuda_rng_tracker().fork():\n        init_method(weight)\n",
                lines=(7, 11), severity="error"),
        # Megatron's JIT warm-up and a value deleted after use: what is drawn is thrown away.
        Invalid("import torch\n\n\ndef _warmup_jit_function(fn):\n    fn(torch.rand(8, device=\"cuda\"))\n\n\n"
                "def probe(fn):\n    x = torch.rand(8, device=\"cuda\")\n    fn(x)\n    del x\n",
                lines=(5, 9), severity="info"),
        # Rainbow's NoisyLinear: fresh noise in the device model's buffers at every step (not initialisation).
        Invalid("import torch\nfrom torch import nn\n\n\nclass NoisyLinear(nn.Linear):\n"
                "    def reset_noise(self):\n        self.weight_epsilon.normal_()\n", lines=(7,), severity="warning"),
        # lit-llama: a Fabric's `device` is its root device; `with fabric.device:` builds every weight there.
        Invalid("import lightning as L\nfrom model import LLaMA\n\n\ndef main(config):\n"
                "    fabric = L.Fabric(accelerator=\"cuda\", devices=4, strategy=\"fsdp\")\n    with fabric.device:\n"
                "        model = LLaMA(config)\n    return fabric.setup_module(model)\n", lines=(7,), severity="error"),
        # TinyLlama: FSDP's `init_module()` builds on the CPU, the single-device strategy ("auto") on the device.
        Invalid("import lightning as L\nfrom lightning.fabric.strategies import FSDPStrategy\nfrom model import GPT\n\n\n"
                "def main(config, devices):\n    strategy = FSDPStrategy() if devices > 1 else \"auto\"\n"
                "    fabric = L.Fabric(devices=devices, strategy=strategy)\n    with fabric.init_module(empty_init=False):\n"
                "        model = GPT(config)\n", lines=(9,), severity="warning"),
        # gpt-neox's router: a layer built on the GPU and initialised again there; the draw that survives is that one.
        Invalid("import torch\n\n\nclass Router(torch.nn.Module):\n    def __init__(self, args, init_method):\n"
                "        self.layer = torch.nn.Linear(args.hidden, args.experts, bias=False, device=\"cuda\")\n"
                "        init_method(self.layer.weight)\n", lines=(7,), severity="error"),
        # OLMo: a config field that defaults to None (the CPU) is info, as such a parameter is; one that may be the
        # meta device is left to the user (a CPU build of a meta model).
        Invalid("from dataclasses import dataclass\n\nfrom torch import nn\n\n\n@dataclass\nclass ModelConfig:\n"
                "    init_device: str | None = None\n\n\nclass Head(nn.Module):\n"
                "    def __init__(self, config: ModelConfig):\n"
                "        self.out = nn.Linear(8, 8, device=config.init_device)\n", lines=(13,), severity="info"),
        # BLIP: a negative drawn and read on the host right away (`.item()`) need not move back.
        Invalid("import torch\n\n\ndef negatives(weights):\n    weights = weights.cuda()\n"
                "    return [torch.multinomial(weights[b], 1).item() for b in range(4)]\n", lines=(6,), severity="error"),
        # lerobot: a device every call in this file passes the CPU by default (a parameter defaulting to it) is info,
        # the generator made on it too.
        Invalid("import torch\n\n\nclass Policy(torch.nn.Module):\n    def _latents(self, n, seed, rand_device):\n"
                "        generator = None if seed is None else torch.Generator(device=rand_device).manual_seed(seed)\n"
                "        return torch.randn(n, generator=generator, device=rand_device).to(self.device)\n\n"
                "    def infer(self, n, seed=None, rand_device=\"cpu\"):\n        return self._latents(n, seed, rand_device)\n",
                lines=(6, 7), severity="info"),
        # VideoMAE's random erasing: a device defaulting to CUDA that every call passes the CPU (its callers are in
        # other project files, read too) is info
        Invalid("import torch\n\n\ndef _get_pixels(shape, device=\"cuda\"):\n"
                "    return torch.empty(shape, device=device).normal_()\n\n\nclass RandomErasing:\n"
                "    def __init__(self, device=\"cuda\"):\n        self.device = device\n\n    def __call__(self, img):\n"
                "        img[:, :4, :4] = _get_pixels((3, 4, 4), device=self.device)\n        return img\n\n\n"
                "erase = RandomErasing(device=\"cpu\")\n", lines=(5,), severity="info"),
        # A diffusers pipeline's generator, handed in, may be made on the device: the CPU draw needs a CPU one.
        Invalid("import torch\n\n\ndef prepare_latents(shape, generator, device):\n"
                "    return torch.randn(shape, generator=generator, device=device)\n", lines=(5,), severity="error"),
        # Open-Sora's copy of diffusers' `DiagonalGaussianDistribution`: a generator parameter that no call in this
        # file sets is None, and randn_tensor then draws on the device.
        Invalid("from diffusers.utils.torch_utils import randn_tensor\n\n\nclass DiagonalGaussianDistribution:\n"
                "    def sample(self, generator=None):\n"
                "        return randn_tensor(self.mean.shape, generator=generator, device=self.parameters.device)\n\n\n"
                "def encode(posterior):\n    return posterior.sample(generator=None)\n", lines=(6,), severity="error"),
        # nanotron: a dummy data generator yields the training data when no dataset is set; it throws nothing away.
        Invalid("import torch\n\n\ndef dummy_infinite_data_generator(vocab_size, seed):\n    def data_generator():\n"
                "        generator = torch.Generator(device=\"cuda\")\n        generator.manual_seed(seed)\n"
                "        while True:\n            yield torch.randint(0, vocab_size, (4, 16), device=\"cuda\", "
                "generator=generator)\n    return data_generator\n", lines=(6, 9), severity="error"),
        # ultralytics: AGLU's weights made with `device=` a parameter defaulting to None (info); RT-DETR's denoising
        # draws `_like` a tensor whose `.device` the function hands to another draw (errors, as that one is).
        Invalid("import torch\nimport torch.nn as nn\n\n\nclass AGLU(nn.Module):\n"
                "    def __init__(self, device=None):\n        super().__init__()\n"
                "        self.kappa = nn.Parameter(nn.init.uniform_(torch.empty(1, device=device)))\n",
                lines=(8,), severity="info"),
        # ms-swift's NEFTune: noise drawn in a forward hook, on the embeddings' output, on the model's device.
        Invalid("import torch\n\n\ndef prepare(model, alpha):\n    def neftune_hook(module, args, output):\n"
                "        return output + torch.zeros_like(output).uniform_(-alpha, alpha)\n\n"
                "    model.embed.register_forward_hook(neftune_hook)\n", lines=(6,), severity="warning"),
        # torchtitan's Flux: a project function handed the device returns the latents there; tracing a step on dummy
        # inputs throws them away; random weights that a checkpoint is loaded over (DCP) right after are info.
        Invalid("import torch\nimport torch.distributed.checkpoint as dcp\n\n\ndef preprocess(batch, device):\n"
                "    return {\"latents\": batch.to(device)}\n\n\ndef step(model, batch, device):\n"
                "    labels = preprocess(batch, device=device)[\"latents\"]\n    return model(labels + torch.randn_like(labels))\n",
                lines=(11,), severity="error"),
        Invalid("import torch\nimport torch.distributed.checkpoint as dcp\n\n\ndef trace(step_fn, device):\n    dummy_inputs = torch.randint(0, 8, (4,), device=device)\n"
                "    return step_fn(dummy_inputs)\n\n\ndef load(model, device, path):\n"
                "    model.to_empty(device=device)\n    model.init_weights()\n    state_dict = model.state_dict()\n"
                "    dcp.load(state_dict, checkpoint_id=path)\n",
                lines=(6, 12), severity="info"),
        # OpenRLHF's reward model: a head loaded with `device_map=` a parameter defaulting to None (the CPU) is info;
        # ZeRO-3's gathered parameters are on the accelerator.
        Invalid("import deepspeed\n\n\ndef load(cls, path, dschf, device_map=None):\n"
                "    model = cls.from_pretrained(path, device_map=device_map)\n    head = getattr(model, \"score\")\n"
                "    if dschf is None:\n        head.weight.data.normal_(std=0.02)\n    return model\n",
                lines=(8,), severity="info"),
        # AutoParallel runs its `input_fn` under FakeTensorMode for example inputs to trace (torchtitan's graph trainer).
        Invalid("import torch\nfrom autoparallel.api import AutoParallel\n\n\ndef parallelize(model, mesh, n, device):\n"
                "    def input_fn():\n        return torch.randint(0, 100, (n,), device=device)\n\n"
                "    with AutoParallel(model, input_fn, mesh) as autop:\n        return autop.apply_placement()\n",
                lines=(7,), severity="info"),
        Invalid("import deepspeed\n\n\ndef load(model):\n"
                "    with deepspeed.zero.GatheredParameters([model.score.weight], modifier_rank=0):\n"
                "        model.score.weight.data.normal_(std=0.02)\n", lines=(6,), severity="error"),
        Invalid("import torch\n\n\ndef denoising(gt_bbox, n):\n    idx = torch.randperm(n, device=gt_bbox.device)\n"
                "    dn_bbox = gt_bbox.repeat(2, 1)\n    return idx, torch.rand_like(dn_bbox)\n",
                lines=(5, 7), severity="error"),
    )

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.values = LocalValues(ctx, self.placement)
        self.cpu_code = CpuCode(ctx, self._is_cpu_device)
        self._accelerator_file = False
        self._unknown_draws: list = []  # Sites of draws on tensors whose device the file does not show
        self._latent_names: tuple[set[str], set[str]] | None = None  # see _posterior_names
        self._materialises = "to_empty" in ctx.source  # `init_weights()` after `to_empty(device=d)` is possible
        self._definitions: dict[str, tuple[ast.AST, Definitions] | None] = {}  # see _definition
        self._modules: frozenset[str] | None = None  # see _module_classes
        self._hooks: frozenset[str] | None = None  # see _module_hooks
        self._fakes: set[str | None] | None = None  # see _fake_inputs
        self._project_modules: set[str] | None = None  # see _module_base
        self._local: project.LocalImports | None = None  # the file's imports of project modules
        self._samplings: dict[int, Sampling] = {}  # id(a diffusers pipeline's call) -> where it samples
        self._fed: dict[int, Sampling] = {}  # id(the `generator=` value of a pipeline's call) -> that sampling
        self._generator_uses: dict[int, list[ast.expr]] = {}  # id(a device generator) -> what passes it on
        self._moves: dict[int, dict[str, list[tuple[tuple[int, int], bool]]]] = {}  # see _moves_in
        self._free = _free_name(ctx.tree)  # see _shown
        self._attributes: dict[int, dict[str, list[tuple[tuple[int, int], ast.expr]]]] = {}  # see _attribute_values
        self._imported: set[str] | None = None  # names the file's imports bind, see _is_module
        self._meta: set[str] | None = None  # see _may_be_meta
        self._passing: set[int] = set()  # ids of the parameters `_passed_placement` is following
        self.defaults = LeftAtDefault(ctx)  # what the calls in the project pass the parameters of its functions

    def visit_With(self, node: ast.With | ast.AsyncWith) -> None:
        for item in node.items:
            expr = item.context_expr
            if self._forks(expr) and (init := self._opaque_initialiser(node)) is not None:
                self.report(expr, TRACKER_MESSAGE.format(call=_short(init), fork=_short(expr), how=TRACKER_ADVICE[True]),
                            fixable=False)
            made = None if isinstance(expr, ast.Call) else self._device_object(expr)
            if default_device.device_block(self.ctx, node, expr, self.ctx.ancestors, self.device_of, made):
                sharded = (isinstance(expr, ast.Call) and getattr(expr.func, "attr", None) == "init_module"
                           and True in default_device.fabric_strategies(self.ctx))  # only in some runs
                self.report(expr, BLOCK_MESSAGE.format(call=_short(expr)) + (SHARDED_NOTE if sharded else ""),
                            "warning" if sharded else None, fixable=False)

    def _report_draw(self, node: ast.Call, message: str, severity: str | None = None,
                     fixable: bool | None = None) -> None:
        """Report a draw; one in an RNG tracker's fork with the tracker's advice (weights initialised on the CPU
        where it initialises them), left to the user."""
        fork = self._tracker_fork()
        skipped = self.defaults.skipped_before(self.ctx.ancestors) if severity != "info" and fork is None else None
        if skipped is not None:
            function, guard = skipped
            self.report(node, message + SKIPPED_NOTE.format(condition=condition_text(conditions.holding(guard)),
                                                            function=function.name), "info", fixable)
        elif fork is None and severity != "info" and self._fake_inputs():
            self.report(node, message + FAKE_INPUTS_NOTE, "info", fixable)
        elif fork is None and severity != "info" and self._thrown_away(node):
            self.report(node, message + THROWAWAY_NOTE, "info", fixable)
        elif fork is None:
            self.report(node, message, severity, fixable)
        else:
            how = TRACKER_ADVICE[self.cpu_code.here()]
            self.report(node, TRACKER_MESSAGE.format(call=_short(node), fork=_short(fork), how=how), fixable=False)

    def _fake_inputs(self) -> bool:
        """Whether the function around here is handed to a class that runs it under FakeTensorMode for example
        inputs (torchtitan's `AutoParallelGraph(model, input_fn, ...)`, a project subclass of AutoParallel's class)."""
        function = self.ctx.current_def()
        if function is None:
            return False
        if self._fakes is None:
            self._fakes = set()
            module = project.file_module(self.ctx.path, self.ctx.tree, self.ctx.imports)
            for call in ast.walk(self.ctx.tree):
                if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name)):
                    continue
                base = self.ctx.imports.resolve_any(call.func)
                if base not in catalogue.FAKE_INPUT_FUNCTIONS:
                    base = project.class_base(module, call.func.id, catalogue.FAKE_INPUT_FUNCTIONS)
                if base is not None:
                    given = argument(call, *catalogue.FAKE_INPUT_FUNCTIONS[base])
                    self._fakes.add(getattr(given, "id", None))
        return function.name in self._fakes

    def _thrown_away(self, node: ast.Call) -> bool:
        """Whether what `node` draws is thrown away: in a function named for a warm-up, a benchmark or a dummy step
        (Megatron's `_warmup_jit_function`, `bench_gemms`, `dummy_step`), unless in one that yields it or builds data
        (nanotron's `dummy_infinite_data_generator`, the training data when no dataset is set), or bound to names the
        function `del`s later (`del bias, input`) or that are named so (torchtitan's `dummy_inputs` to trace a step)."""
        functions = [n for n in self.ctx.ancestors if isinstance(n, FUNCTION_TYPES)]
        if any(THROWAWAY_NAME.search(function.name) for function in functions):
            return not any(_yields(function) or DATA_BUILDER.search(function.name) for function in functions)
        statement = next((n for n in reversed(self.ctx.ancestors) if isinstance(n, ast.stmt)), None)
        if not functions or not isinstance(statement, ast.Assign):
            return False
        names = {t.id for t in statement.targets if isinstance(t, ast.Name)}
        if names and len(names) == len(statement.targets) and all(map(THROWAWAY_NAME.search, names)):
            return True
        deleted = {t.id for n in walk_scope(functions[-1]) if isinstance(n, ast.Delete) and n.lineno > statement.lineno
                   for t in n.targets if isinstance(t, ast.Name)}
        return len(names) == len(statement.targets) and names <= deleted

    # --- RNG trackers -----------------------------------------------------------------------
    def _tracker_fork(self) -> ast.expr | None:
        """The item of a `with` around here, in this function, that forks an RNG tracker's CUDA generator state
        (Megatron's `with get_cuda_rng_tracker().fork():`, also kept in a name first), if any."""
        for node in reversed(self.ctx.ancestors):
            if isinstance(node, SCOPE_TYPES):
                return None
            if isinstance(node, (ast.With, ast.AsyncWith)):
                found = next((item.context_expr for item in node.items if self._forks(item.context_expr)), None)
                if found is not None:
                    return found
        return None

    def _forks(self, expr: ast.expr, follow: bool = True) -> bool:
        """`<tracker>.fork(...)`, either branch of `a if c else b`, or a name bound to one
        (`rng_context = tracker.fork(name) if tracker.is_initialized() else nullcontext()`)."""
        if isinstance(expr, ast.IfExp):
            return self._forks(expr.body, follow) or self._forks(expr.orelse, follow)
        if isinstance(expr, ast.Name) and follow:
            return any(isinstance(value, ast.expr) and self._forks(value, False)
                       for value in self.values.bindings.bound(expr.id, expr))
        return (isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr == "fork"
                and self._is_tracker(expr.func.value))

    def _is_tracker(self, expr: ast.expr, follow: bool = True) -> bool:
        """An RNG tracker: `get_cuda_rng_tracker()` (any `*rng_tracker` getter or attribute), or a name bound to one."""
        if isinstance(expr, ast.Name) and follow:
            return any(isinstance(value, ast.expr) and self._is_tracker(value, False)
                       for value in self.values.bindings.bound(expr.id, expr))
        if isinstance(expr, ast.Attribute):
            return expr.attr.endswith(RNG_TRACKER)
        return isinstance(expr, ast.Call) and (self.ctx.callee_name(expr) or "").endswith(RNG_TRACKER)

    def _opaque_initialiser(self, block: ast.With | ast.AsyncWith) -> ast.Call | None:
        """A call in a block that initialises weights with a function this file cannot read as a draw, named as an
        initialiser and given a tensor (Megatron's `init_method(weight)`), if any."""
        return next((node for node in walk_scope(block) if isinstance(node, ast.Call) and node.args
                     and INIT_NAME.search(name := self.ctx.callee_name(node) or "") and name not in DRAW_METHODS
                     and not (self.ctx.call_qualname(node) or "").startswith("torch.")), None)

    def _device_object(self, expr: ast.expr) -> ast.Call | None:
        """The call that made the device object a name holds (`dev = torch.device("cuda")`; `self._device =
        utils.get_device(cfg.device)` anywhere in the class), if it made one."""
        if isinstance(expr, ast.Name):
            found = self.values.bindings.bound(expr.id, expr)
            values = found[-1:]
        elif isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name) and expr.value.id == "self":
            values = self._self_values(expr.attr)[-1:]
        else:
            return None
        value = values[0] if values else None
        if isinstance(value, ast.Call) and (self.ctx.call_qualname(value) in catalogue.TORCH_DEVICE_CONSTRUCTORS
                                            or self.ctx.callee_name(value) == "get_device"):
            return value
        return None

    def _self_values(self, attr: str) -> list[ast.expr]:
        """What the enclosing class assigns to `self.<attr>` anywhere in its methods, in source order."""
        owner = next((node for node in reversed(self.ctx.ancestors) if isinstance(node, ast.ClassDef)), None)
        return [] if owner is None else [
            node.value for node in ast.walk(owner) if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self"
                and t.attr == attr for t in node.targets)]

    visit_AsyncWith = visit_With

    def visit_Call(self, node: ast.Call) -> None:
        self.values.call(node)
        qualified = self.ctx.call_qualname(node)
        pipeline = qualified is None and isinstance(node.func, ast.Name) and self._is_pipeline(node.func)
        if pipeline:
            self._note_sampling(node)
        if not self._accelerator_file:
            self._accelerator_file = self._shows_accelerator(node, qualified)
        if default_device.sets_default(self.ctx, node, qualified, self.device_of):
            self.report(node, DEFAULT_MESSAGE.format(call=_short(node)), fixable=False)
        elif self._materialises and default_device.initialised_on_device(node, self.ctx.ancestors, self.device_of,
                                                                         self.ctx):
            loaded = self._loaded_after(default_device.uncast(self.ctx, node.func.value))
            self.report(node, INIT_MESSAGE.format(call=_short(node)) + (LOADED_NOTE if loaded else ""),
                        "info" if loaded else None, fixable=False)
        elif self._applies_drawing_init(node):
            self.report(node, _init_message_on_device(node, node.args[0].id), fixable=False)
        elif self._initialises_on_device(node):
            self.report(node, _init_message_on_device(node, node.func.attr), fixable=False)
        host = self._read_on_host(node)
        if _constant_draw(node, qualified or getattr(node.func, "attr", None)):
            return
        if qualified in catalogue.TORCH_DEVICE_DRAWS:
            signature = catalogue.TORCH_DEVICE_DRAWS[qualified]
            device = keyword(node, "device")
            if device is not None:
                if self.device_of(device) != CPU:
                    note = self._cpu_default_note(device)
                    message, fixable = self._with_generator(node, _device_message(node, device, host) + note, None)
                    self._report_draw(node, message, "info" if note else None, fixable)
                return
            inputs = [argument(node, signature.positional.index(name), name) for name in signature.inputs]
            self._check_inputs(node, [i for i in inputs if i is not None],
                               _input_message(node, qualified, inputs, self._free, host))
        elif qualified in catalogue.TORCH_INIT_DRAWS:
            tensor = argument(node, 0, "tensor")
            note = self._made_note(tensor)
            self._check_inputs(node, [tensor], _init_message(node, self._free, self._torch()) + note, severity="info" if note else None)
        elif qualified in catalogue.TORCH_RANDOM_INIT_MODULES:
            device = keyword(node, "device")
            if (device is not None and self.device_of(device) != CPU
                    and not default_device.weights_replaced(node, self.ctx.ancestors)):
                self._check_module(node, qualified.rpartition(".")[2], device)
        elif qualified in catalogue.TORCH_GENERATOR_CLASSES:
            device = argument(node, 0, "device")
            if device is not None and self.device_of(device) != CPU:
                what, then = GENERATOR_USES[self.ctx.imports.imports_root("diffusers")]
                note = self._cpu_default_note(device)
                self.report(node, GENERATOR_MESSAGE.format(call=_short(node), what=what, then=then) + note,
                            "info" if note else None, fixable=False)
                self._generator_uses[id(node)] = self._generator_carriers(node)
        elif qualified in catalogue.DIFFUSERS_RANDN_TENSOR:
            device, unset = argument(node, 2, "device"), self._without_generator(node, 1)
            if unset is not None and device is not None and self.device_of(device) != CPU:
                self.report(node, DIFFUSERS_MESSAGE.format(draw="randn_tensor(..., device=...)", where="that device")
                            + unset)
        elif (qualified is None and isinstance(node.func, ast.Attribute) and node.func.attr in DRAW_METHODS
              and not self._is_module(node.func.value)):
            note = self._made_note(node.func.value)
            self._check_inputs(node, [node.func.value], _method_message(node, self._free, host, self._torch()) + note,
                               severity="info" if note else None)
        elif (qualified is None and isinstance(node.func, ast.Attribute) and node.func.attr in DISTRIBUTION_DRAWS
              and (made := self._distribution(node.func.value)) is not None):
            parameters = [*made.args, *(kw.value for kw in made.keywords if kw.arg != "validate_args")]
            if any(self._tensor_valued(p) for p in parameters):  # Beta(alpha, alpha) of floats samples on the CPU
                self._check_inputs(node, parameters, DISTRIBUTION_MESSAGE.format(call=_short(node)), fixable=False)
        elif pipeline and (unset := self._without_generator(node, None)) is not None:
            # a diffusers pipeline draws its initial latents on its own device unless given a generator
            self._check_inputs(node, [node.func], DIFFUSERS_MESSAGE.format(draw=f"{node.func.id}(...)",
                                                                           where="the pipeline's device") + unset,
                               fixable=False)
        elif self._is_latent_sample(node) and (unset := self._without_generator(node, 0)) is not None:
            # a posterior holds the VAE's outputs, on its device even in data code (latents cached by the
            # main process and drawn from in a collate function)
            self._check_inputs(node, [node.func.value],
                               DIFFUSERS_MESSAGE.format(draw="latent_dist.sample()", where="the VAE's device") + unset,
                               in_data_code=True)

    # --- modules built on a device ------------------------------------------------------------
    def _check_module(self, node: ast.Call, module: str, device: ast.expr) -> None:
        """Report a module built on a device, unless what initialises every weight again follows it (the statement
        after it, or an initialising method of its class: OLMo's `reset_parameters()`, whose draws count where it
        runs); report such a statement's initialiser on the device (gpt-neox's `init_method(self.layer.weight)` of a
        layer without bias), unless it reports itself (a torch.nn.init draw, the module's own `reset_parameters()`)."""
        held = self._held_name(node)
        if held is not None and self._initialised_by_class(node, held, module):
            return
        note = self._cpu_default_note(device)  # a factory argument, the CPU by default
        severity = "info" if note else None
        again = None if held is None else next(
            (later.value for later in default_device.following(self.ctx.ancestors) if isinstance(later, ast.Expr)
             and isinstance(later.value, ast.Call) and self._initialises(later.value, held)), None)
        if again is not None and not (self.ctx.call_qualname(again) in catalogue.TORCH_INIT_DRAWS
                                      or getattr(again.func, "attr", None) in default_device.INIT_METHODS):
            self.report(again, REINIT_MESSAGE.format(call=_short(again), module=module) + note, severity, fixable=False)
        if again is None or not _initialises_all(node, again, module):
            meta = self._may_be_meta(device)  # `.to(init_device)` would build a meta model on the CPU
            self._report_draw(node, MODULE_MESSAGE.format(module=module) + note
                              + (META_NOTE.format(device=_short(device)) if meta else ""), severity,
                              False if meta else None)

    def _held_name(self, module: ast.Call) -> str | None:
        """What holds the module built here: the target it is assigned to (`self.ff`), or its key in a dict given to
        what is assigned or updated (OLMo's `self.transformer = nn.ModuleDict(dict(wte=...))`, `self.transformer.update(
        {"wpe": ...})`: `self.transformer.wte`, `self.transformer.wpe`); None if none."""
        key, child = "", module
        for parent in reversed(self.ctx.ancestors):
            if isinstance(parent, ast.keyword) and not key and parent.arg:
                key = "." + parent.arg
            elif isinstance(parent, ast.Dict) and not key:
                found = next((k for k, v in zip(parent.keys, parent.values, strict=True) if v is child), None)
                key = f".{constant(found)}" if isinstance(constant(found), str) else ""
            elif isinstance(parent, (ast.Assign, ast.AnnAssign)) and parent.value is not None:
                return ast.unparse(parent.targets[0] if isinstance(parent, ast.Assign) else parent.target) + key
            elif isinstance(parent, ast.Call) and getattr(parent.func, "attr", None) == "update" and key:
                return ast.unparse(parent.func.value) + key
            elif isinstance(parent, ast.stmt):
                return None
            child = parent
        return None

    def _initialised_by_class(self, module: ast.Call, held: str, name: str) -> bool:
        """Whether the class (of the file) of the method around here, or a base class of it, has another method named
        as an initialiser that initialises every weight of `self.<...>` the module is built into again."""
        function, owner = self._method_owner()
        found = self._definition(owner.name) if owner is not None else None
        if found is None or found[0] is not owner or not held.startswith("self."):
            return False
        methods = [method for cls in _class_chain(owner, found[1].classes) for method in cls.body
                   if isinstance(method, FUNCTION_TYPES) and method is not function
                   and not method.name.startswith("__") and INIT_NAME.search(method.name)]
        return any(isinstance(call, ast.Call) and self._initialises(call, held) and _initialises_all(module, call, name)
                   for method in methods for call in ast.walk(method))

    def _initialises(self, call: ast.Call, held: str) -> bool:
        """Whether `call` initialises the module `held` names: an initialiser given it or its weight first
        (`init_method(self.layer.weight)`, `init_normal(self.ff_out, std)`), or its own (`self.layer.reset_parameters()`)."""
        func = call.func
        if isinstance(func, ast.Attribute) and func.attr in default_device.INIT_METHODS:
            return ast.unparse(func.value) == held
        given = call.args[0] if call.args else None
        return (given is not None and INIT_NAME.search(self.ctx.callee_name(call) or "") is not None
                and ast.unparse(given) in (held, f"{held}.weight", f"{held}.weight.data"))

    def _may_be_meta(self, device: ast.expr) -> bool:
        """Whether a device may be the meta device: named `init_device` (OLMo's `config.init_device`), or what the
        file compares with or sets to "meta" (`device.type == "meta"`)."""
        if self._meta is None:
            self._meta = set()
            for node in ast.walk(self.ctx.tree):
                if isinstance(node, ast.Compare):
                    operands = [node.left, *node.comparators]
                elif isinstance(node, ast.Assign):
                    operands = [*node.targets, node.value]
                else:
                    continue
                if any(constant(operand) == "meta" for operand in operands):
                    self._meta.update(ast.unparse(_untyped(operand)) for operand in operands)
        name = device.attr if isinstance(device, ast.Attribute) else getattr(device, "id", None)
        return name == "init_device" or ast.unparse(device) in self._meta

    def finish(self) -> None:
        imports = self.ctx.imports
        if self._unknown_draws and imports.imports_root("torch") and (  # torch's `x.normal_()`, not another's
                self._accelerator_file or any(imports.imports_root(r) for r in catalogue.ACCELERATOR_FRAMEWORK_ROOTS)):
            for site, message, severity, fixable in self._unknown_draws:
                self.report(site, message, severity, fixable)
        for report in self.reports:
            if report.severity != "info" and self._only_samples(report.node):
                report.severity = "info"
                report.message += SAMPLING_NOTE

    # --- sampling after training -----------------------------------------------------------------
    def _note_sampling(self, call: ast.Call) -> None:
        """Keep where a diffusers pipeline's call samples, and the generator it is given."""
        sampling = Sampling(call.lineno, self.ctx.current_def(), tuple(self.ctx.enclosing_loops()))
        self._samplings[id(call)] = sampling
        generator = keyword(call, "generator")
        if generator is not None:
            self._fed[id(generator)] = sampling

    def _generator_carriers(self, made: ast.Call) -> list[ast.expr]:
        """What passes on the generator `made` (with `.manual_seed(s)` chained on it, also in a branch of `a if c
        else b`): the later reads of the name it is assigned to in this scope, or itself, given as an argument; none
        when it goes elsewhere."""
        expr, ancestors = made, self.ctx.ancestors
        index = len(ancestors) - 1
        while (index >= 1 and isinstance(ancestors[index], ast.Attribute) and ancestors[index].value is expr
               and isinstance(ancestors[index - 1], ast.Call) and ancestors[index - 1].func is ancestors[index]):
            expr, index = ancestors[index - 1], index - 2
        if index >= 0 and isinstance(ancestors[index], ast.IfExp) and ancestors[index].test is not expr:
            expr, index = ancestors[index], index - 1  # `None if seed is None else torch.Generator(d)`
        parent = ancestors[index] if index >= 0 else None
        if isinstance(parent, ast.keyword):
            return [expr]
        if not (isinstance(parent, ast.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0], ast.Name)):
            return []
        name, end = parent.targets[0].id, (parent.end_lineno, parent.end_col_offset)
        scope = next((node for node in reversed(ancestors) if isinstance(node, SCOPE_TYPES)), self.ctx.tree)
        return [node for node in walk_scope(scope) if isinstance(node, ast.Name) and node.id == name
                and isinstance(node.ctx, ast.Load) and (node.lineno, node.col_offset) > end]

    def _only_samples(self, node: ast.AST) -> bool:
        """Whether a reported call only feeds a diffusers pipeline's sampling after the training loop: the
        pipeline's call itself, or a device generator passed on only as such a call's `generator=`."""
        if id(node) in self._samplings:
            return self._after_training(self._samplings[id(node)])
        uses = self._generator_uses.get(id(node))
        return bool(uses) and all(id(use) in self._fed and self._after_training(self._fed[id(use)]) for use in uses)

    def _after_training(self, sampling: Sampling) -> bool:
        """Whether a sampling comes after a loop of its function that runs training steps, and in none: what it
        draws (images to look at) does not feed the training, as a pipeline's call before it may (DreamBooth's
        class images)."""
        if any(self.ctx.is_step_loop(loop) for loop in sampling.loops):
            return False
        function = sampling.function
        return any(info.function == (function.name if function else None) and self.ctx.is_step_loop(info.node)
                   and (function is None or function.lineno <= info.node.lineno)
                   and info.node.end_lineno < sampling.line for info in self.ctx.loops.values())

    def _made_note(self, tensor: ast.expr | None) -> str:
        """For a tensor made here with `device=` a parameter defaulting to the CPU (AGLU's `torch.empty(1,
        device=device)`, `device=None`), what that means (see `_cpu_default_note`); else ""."""
        made = keyword(tensor, "device") if isinstance(tensor, ast.Call) else self._device_map(tensor)
        if made is None or self.device_of(made) == CPU or self.placement(tensor) == ACCELERATOR:
            return ""
        return self._cpu_default_note(made)

    def _device_map(self, tensor: ast.expr | None, depth: int = 0) -> ast.expr | None:
        """The `device_map=` of the `from_pretrained(...)` that loaded the model a tensor belongs to, through names
        (OpenRLHF's `value_head = getattr(model, prefix)` of `model = cls.from_pretrained(..., device_map=device_map)`),
        if any."""
        while isinstance(tensor, (ast.Attribute, ast.Subscript)) or isinstance(tensor, ast.Call) and getattr(
                tensor.func, "id", None) == "getattr" and tensor.args:
            tensor = tensor.args[0] if isinstance(tensor, ast.Call) else tensor.value
        if isinstance(tensor, ast.Call) and getattr(tensor.func, "attr", None) == "from_pretrained":
            return keyword(tensor, "device_map")
        if not isinstance(tensor, ast.Name) or depth > 3:
            return None
        found = (self._device_map(value, depth + 1) for value in self.values.bindings.bound(tensor.id, tensor)
                 if isinstance(value, ast.expr))
        return next((device_map for device_map in found if device_map is not None), None)

    def _cpu_default_note(self, device: ast.expr) -> str:
        """For a device that is a parameter, or a field of a parameter's class (`config.init_device` of `config:
        ModelConfig`), defaulting to the CPU (None or "cpu"), or a parameter every call in this file passes such a
        parameter of its own (lerobot's `_make_action_latents(..., rand_device)`), what that means; else ""."""
        if default_device.cpu_by_default(device, self.ctx.ancestors) or self._field_cpu_default(device):
            return CPU_DEFAULT_NOTE.format(name=ast.unparse(device))
        function = self.ctx.current_def()
        if isinstance(device, ast.Name) and function is not None and self.defaults.holds(function, device.id, _is_cpu, trust_default=True):
            return CALLERS_CPU_NOTE.format(name=device.id)
        return ""

    # --- generators ------------------------------------------------------------------------------
    def _without_generator(self, call: ast.Call, position: int | None) -> str | None:
        """"" where `call` passes no generator (or None) as keyword `generator` or at `position` (None: keyword only);
        a note where it passes a parameter defaulting to None that no call in this file sets (diffusers'
        `DiagonalGaussianDistribution.sample(self, generator=None)`); None where it may pass one."""
        if any(isinstance(a, ast.Starred) for a in call.args) or any(kw.arg is None for kw in call.keywords):
            return None
        generator = keyword(call, "generator") if position is None else argument(call, position, "generator")
        if generator is None or constant(generator) is None:
            return ""
        return NONE_GENERATOR_NOTE.format(name=generator.id) if self._none_parameter(generator) else None

    def _none_parameter(self, node: ast.expr) -> bool:
        """A parameter of the function around here that defaults to None and that no call in this file sets."""
        function = self.ctx.current_def()
        return isinstance(node, ast.Name) and function is not None and self.defaults.holds(function, node.id, _is_none)

    def _with_generator(self, call: ast.Call, message: str, fixable: bool | None) -> tuple[str, bool | None]:
        """A draw's message and fixability, given its generator: one that may be made on the device (a parameter,
        an attribute) must become a CPU one where it is made, which msprobe-instrument leaves to the user."""
        generator = keyword(call, "generator")
        if generator is None or self._cpu_generator(generator):
            return message, fixable
        return message + GENERATOR_NOTE.format(generator=_short(generator)), False

    def _cpu_generator(self, generator: ast.expr) -> bool:
        """Whether a draw's generator is, or becomes where msprobe-instrument rewrites the draw, a CPU one (or None):
        made here on the CPU (`torch.Generator().manual_seed(s)`), or a name bound only to generators made here (one
        made on a device is made on the CPU with the draw; also `None if seed is None else torch.Generator(d)`), or
        a parameter defaulting to None that no call in this file sets."""
        if not isinstance(generator, ast.Name):
            return all(self._made_generator(leaf, cpu=True) for leaf in generator_leaves(generator))
        bound = self.values.bindings.bound(generator.id, generator)
        return self._none_parameter(generator) or bool(bound) and all(
            isinstance(value, ast.expr) and all(self._made_generator(leaf, cpu=False) for leaf in generator_leaves(value))
            for value in bound)

    def _made_generator(self, leaf: ast.expr, cpu: bool) -> bool:
        """None, torch's global CPU generator (`torch.manual_seed(s)`), or `torch.Generator(...)` (on the CPU, where
        `cpu`)."""
        made = self.ctx.call_qualname(leaf) if isinstance(leaf, ast.Call) else self.ctx.qualname(leaf)
        if constant(leaf) is None or made in CPU_GENERATORS:
            return True
        if not (isinstance(leaf, ast.Call) and self.ctx.call_qualname(leaf) in catalogue.TORCH_GENERATOR_CLASSES):
            return False
        device = argument(leaf, 0, "device")
        return not cpu or device is None or self.device_of(device) == CPU

    def _field_cpu_default(self, device: ast.expr) -> bool:
        """`config.init_device` where the function's parameter `config` is annotated with a class (the file's or a
        project module's) whose field `init_device` defaults to None or "cpu" (OLMo's `ModelConfig`)."""
        function = self.ctx.current_def()
        if function is None or not (isinstance(device, ast.Attribute) and isinstance(device.value, ast.Name)):
            return False
        args = function.args
        given = next((a for a in (*args.posonlyargs, *args.args, *args.kwonlyargs) if a.arg == device.value.id), None)
        found = self._definition(given.annotation.id) if given is not None and isinstance(
            given.annotation, ast.Name) else None
        if found is None or not isinstance(found[0], ast.ClassDef):
            return False
        default = next((node.value for node in found[0].body if isinstance(node, ast.AnnAssign)
                        and isinstance(node.target, ast.Name) and node.target.id == device.attr), None)
        return isinstance(default, ast.Constant) and default.value in (None, CPU)

    def _torch(self) -> str:
        """The name the file binds torch to (`th` for Stable-Baselines3's `import torch as th`), for the code in
        messages; `torch` when it binds none."""
        return next((name for name, target in self.ctx.imports.bindings.items() if target == "torch"), "torch")

    def _check_inputs(self, node: ast.Call, inputs: list, message: str | None = None,
                      in_data_code: bool = False, fixable: bool | None = None, severity: str | None = None) -> None:
        """Report a draw whose input tensor lives on a device (at `severity`: info where the device is a parameter
        every call passes the CPU); one whose tensor's device is unknown is a warning in model code, or (at the
        end) in a file that runs on an accelerator, unless on the CPU (in data code, unless `in_data_code`)."""
        message, fixable = self._with_generator(node, message or self.message, fixable)
        found = [self.placement(i) or self._passed_placement(i) for i in inputs if not _is_number(i)]
        forked = self._tracker_fork() is not None and found and CPU not in found  # drawn for the tracker's stream
        if any(p in ON_DEVICE for p in found) or forked:
            self._report_draw(node, message, severity, fixable=fixable)
        elif (found and CPU not in found and not any(map(self._last_on_cpu, inputs))
              and (in_data_code or not (self.cpu_code.here() or self._fills_argument(node)))):
            if note := self._model_code_note():
                self._report_draw(node, message + note, severity or "warning", fixable)
            elif self._thrown_away(node):
                self._unknown_draws.append((self.ctx.site(node), message + THROWAWAY_NOTE, "info", fixable))
            else:
                self._unknown_draws.append((self.ctx.site(node), message + ACCELERATOR_FILE_NOTE, severity or "warning",
                                            fixable))

    def _passed_placement(self, node: ast.expr | None) -> str | None:
        """CPU where `node` is a parameter of the function around here, not bound in it, that every call of the
        function in the file passes a tensor on the CPU (LAVIS's ALBEF `self.mask(..., probability_matrix=
        probability_matrix)` after `probability_matrix = torch.full(labels.shape, p)`); else None. Only for a
        top-level function or method that the file names in calls alone and no importer names: a nested one is found
        by name in other scopes too, and one handed on (lerobot's `original_denoise_step_partial=mock_denoiser`) is
        called with anything."""
        function = self.ctx.current_def()
        if not isinstance(node, ast.Name) or function is None or id(function) in self._passing \
                or node.id not in {a.arg for a in (*function.args.posonlyargs, *function.args.args,
                                                    *function.args.kwonlyargs)} \
                or any(isinstance(n, ast.Name) and n.id == node.id and isinstance(n.ctx, ast.Store)
                       for n in walk_scope(function)) \
                or function not in self.ctx.tree.body and self.defaults.owner(function) not in self.ctx.tree.body:
            return None
        passed = self.defaults.passed(function, node.id)
        named = [n for n in ast.walk(self.ctx.tree) if getattr(n, "id", None) == function.name
                 or isinstance(n, ast.Attribute) and n.attr == function.name]
        if passed is None or len(named) != len(passed) or any(
                module is not None and any(getattr(n, "id", None) == function.name or getattr(n, "attr", None)
                                           == function.name for n in ast.walk(module.tree))
                for module in map(project.load, map(Path, project.importers(self.ctx.path)))):
            return None
        saved = self.ctx.ancestors
        self._passing.add(id(function))
        try:
            for value, caller in passed or [(None, None)]:
                self.ctx.ancestors = _scopes_to(self.ctx.tree, caller) if value is not None else []
                if not self.ctx.ancestors or self.placement(value) != CPU:
                    return None
        finally:
            self.ctx.ancestors = saved
            self._passing.discard(id(function))
        return CPU

    def _tensor_valued(self, node: ast.expr, follow: bool = True) -> bool:
        """Whether `node` shows itself a tensor: on a device, or computed by a call that is not a Python or
        NumPy number's (`self.actor(x)`, `log_std.exp()`), directly or through the name it was last bound to."""
        if self.placement(node) in ON_DEVICE:
            return True
        if isinstance(node, ast.BinOp):
            return self._tensor_valued(node.left, follow) or self._tensor_valued(node.right, follow)
        if isinstance(node, ast.Call):
            if isinstance(node.func, ast.Name) and node.func.id in BUILTINS:
                return False
            qualified = self.ctx.imports.resolve_any(node.func) or ""
            return qualified.partition(".")[0] not in NUMBER_MODULES
        if isinstance(node, ast.Name) and follow:
            bound = self.values.bindings.bound(node.id, node)
            return bool(bound) and isinstance(bound[-1], ast.expr) and self._tensor_valued(bound[-1], follow=False)
        return False

    def _distribution(self, receiver: ast.expr) -> ast.Call | None:
        """The `torch.distributions` construction `receiver` is (`Normal(mu, std)`) or a name was last bound
        to in this function (`probs = Categorical(logits=logits)`), else None."""
        if isinstance(receiver, ast.Name):
            bound = self.values.bindings.bound(receiver.id, receiver)
            receiver = bound[-1] if bound else None
        if isinstance(receiver, ast.Call) and (self.ctx.call_qualname(receiver) or "").startswith(
                catalogue.TORCH_DISTRIBUTIONS + "."):
            return receiver
        return None

    def _applies_drawing_init(self, call: ast.Call) -> bool:
        """`model.apply(fn)` on a model that lives on a device, where `fn`, a function of the file or of a project
        module it imports, draws (`nn.init.normal_(m.weight, 0.0, 0.02)`, `m.weight.data.normal_()`): DCGAN's
        `netG = Generator().to(device)` then `netG.apply(weights_init)`."""
        func = call.func
        if not (isinstance(func, ast.Attribute) and func.attr == "apply" and len(call.args) == 1
                and isinstance(call.args[0], ast.Name) and not call.keywords):
            return False
        found = self._definition(call.args[0].id)
        return (found is not None and isinstance(found[0], FUNCTION_TYPES) and _draws(found[0], found[1].resolve)
                and self.placement(func.value) in ON_DEVICE)

    def _initialises_on_device(self, call: ast.Call) -> bool:
        """`model.init_weights()` (a method named as an initialiser, see cpu_code.INIT_NAME: `reset_parameters`,
        `_init_weights`, ...) on a model on a device, or in a LightningModule's hook that runs after the Trainer
        moved it (`self.model.init_weights()` in `on_train_start`), unless every weight is loaded over right after:
        when the class that built it can be read (the file's or a project module's), whether that method draws
        (`_method_draws`), else whether it is a conventional initialiser (`init_weights`, `reset_parameters`)."""
        func = call.func
        if not (isinstance(func, ast.Attribute) and func.attr not in DRAW_METHODS and func.attr != "apply"
                and INIT_NAME.search(func.attr)):
            return False
        model = func.value
        if (self.placement(model) not in ON_DEVICE and not self._after_trainer_move(model)) or self._loaded_after(model):
            return False
        built = self._built_by(model)
        drawn = None if built is None else self._method_draws(*built, func.attr, set())
        return drawn if drawn is not None else func.attr in default_device.INIT_METHODS

    def _loaded_after(self, model: ast.expr) -> bool:
        """`model.load_state_dict(sd)` (or a loader given the model) right after: what was drawn does not survive."""
        return default_device.loaded_over_after(model, self.ctx.ancestors)

    def _after_trainer_move(self, node: ast.expr) -> bool:
        """`self...` in a LightningModule's hook that runs after the Trainer moved it to its device."""
        while isinstance(node, (ast.Attribute, ast.Subscript)):
            node = node.value
        function, owner = self._method_owner()
        lightning = self.cpu_code.derived_classes("lightning", catalogue.LIGHTNING_MODULES.__contains__)
        return (isinstance(node, ast.Name) and node.id == "self" and owner is not None and owner.name in lightning
                and function.name in catalogue.LIGHTNING_DEVICE_HOOKS)

    def _built_by(self, node: ast.expr | None) -> tuple[ast.ClassDef, Definitions] | None:
        """The class (the file's or a project module's) whose call built the model `node` holds: through the names
        and `self` attributes it was bound to, moves (`.to(device)`, `.cuda()`) and wrappers that take it first
        (`fabric.setup(model)`, `DistributedDataParallel(model)`); None when unknown."""
        for _ in range(8):
            if isinstance(node, ast.Name):
                bound = self.values.bindings.bound(node.id, node)
                node = bound[-1] if bound else None
            elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
                node = next(iter(self._self_values(node.attr)[-1:]), None)
            elif not isinstance(node, ast.Call):
                return None
            elif isinstance(node.func, ast.Name):
                found = self._definition(node.func.id)
                return found if found is not None and isinstance(found[0], ast.ClassDef) else None
            elif isinstance(node.func, ast.Attribute) and node.func.attr in MOVES:
                node = node.func.value
            elif node.args and (isinstance(node.func, ast.Attribute) and node.func.attr in FABRIC_SETUPS
                                or self.ctx.call_qualname(node) in catalogue.DATA_PARALLEL_WRAPPERS):
                node = node.args[0]
            else:
                return None
        return None

    def _method_draws(self, cls: ast.ClassDef, scope: Definitions, name: str, seen: set[str]) -> bool | None:
        """Whether method `name` of `cls` (or of a base class its module defines) draws weights: itself (`_draws`),
        through the class's methods it calls (`self._init_weights()`, `self.apply(self._init_weights)`), a function
        of its module it applies, or another module's initialiser, told by its name (`layer.init_weights()`); None
        when neither `cls` nor those bases define it."""
        method = _method(cls, name, scope.classes)
        if method is None or name in seen:
            return None if method is None else False
        seen.add(name)
        if _draws(method, scope.resolve):
            return True
        for call in (node for node in ast.walk(method) if isinstance(node, ast.Call)):
            applied = call.args[0] if getattr(call.func, "attr", None) == "apply" and call.args else None
            target = applied if applied is not None else call.func
            if _on_self(target):
                if self._method_draws(cls, scope, target.attr, seen) or target.attr in default_device.INIT_METHODS:
                    return True
            elif isinstance(applied, ast.Name) and applied.id in scope.functions:
                if _draws(scope.functions[applied.id], scope.resolve):
                    return True
            elif getattr(call.func, "attr", None) in default_device.INIT_METHODS and applied is None:
                return True
        return False

    def _definition(self, name: str) -> tuple[ast.AST, Definitions] | None:
        """The class or function `name` names: the file's own, or one that a project module it imports defines."""
        if name not in self._definitions:
            self._definitions[name] = self._find_definition(name)
        return self._definitions[name]

    def _find_definition(self, name: str) -> tuple[ast.AST, Definitions] | None:
        tree = self.ctx.tree
        own = Definitions({node.name: node for node in tree.body if isinstance(node, ast.ClassDef)},
                          {node.name: node for node in ast.walk(tree) if isinstance(node, FUNCTION_TYPES)},
                          self.ctx.imports.resolve)
        if name in own.classes or name in own.functions:
            return own.classes.get(name) or own.functions[name], own
        project.find_module.cache_clear()  # module lookups are cached for one file's analysis only
        reference = ast.Call(func=ast.Name(name, ast.Load()), args=[], keywords=[])
        for _, found, module in project.reached([reference], self._local_imports(), (),
                                                project.file_folder(self.ctx.path)):
            definition = module.classes.get(found) or module.functions.get(found)
            if definition is not None:
                return definition, Definitions(module.classes, module.functions, module.imports.resolve)
        return None

    def _local_imports(self) -> project.LocalImports:
        if self._local is None:
            self._local = project.local_imports(project.import_statements(self.ctx.tree.body))
        return self._local

    def _fills_argument(self, call: ast.Call) -> bool:
        """A fill of the tensor an in-place initialiser is given, named with a trailing `_` as torch.nn.init's
        are (timm's `variance_scaling_(tensor, ...)`: `tensor.normal_(std=s)`): initialisation code, which runs
        where its caller's weights are (see cpu_code's `trunc_normal_` helpers)."""
        function, _ = self._method_owner()
        params = [*function.args.posonlyargs, *function.args.args] if function is not None else []
        if not params or not function.name.endswith("_") or function.name.endswith("__"):
            return False
        func = call.func
        if isinstance(func, ast.Attribute) and func.attr in catalogue.INPLACE_RANDOM_METHODS:
            filled = func.value
        elif self.ctx.call_qualname(call) in catalogue.TORCH_INIT_DRAWS:
            filled = argument(call, 0, "tensor")
        else:
            return False
        while isinstance(filled, ast.Attribute) and filled.attr in catalogue.DEVICE_PRESERVING_ATTRIBUTES:
            filled = filled.value  # `tensor.data`
        return isinstance(filled, ast.Name) and filled.id == params[0].arg

    def _is_pipeline(self, name: ast.Name) -> bool:
        """Whether `name` was last bound to a diffusers pipeline (`DiffusionPipeline.from_pretrained(...)`, one built
        from its parts, `DDPMPipeline(unet=unet, scheduler=scheduler)`, also moved: `pipeline = pipeline.to(device)`)."""
        bound = self.values.bindings.bound(name.id, name)
        index = len(bound) - 1
        value = bound[index] if bound else None
        while isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "to":
            value = value.func.value  # `pipeline.to(device)`: the pipeline it moves
            if isinstance(value, ast.Name) and value.id == name.id:  # `pipeline = pipeline.to(device)`
                index -= 1
                value = bound[index] if index >= 0 else None
        if not isinstance(value, ast.Call):
            return False
        loaded = isinstance(value.func, ast.Attribute) and value.func.attr == "from_pretrained"
        qualified = self.ctx.qualname(value.func.value if loaded else value.func) or ""
        return qualified.startswith("diffusers.") and "Pipeline" in qualified.rpartition(".")[2]

    def _is_latent_sample(self, call: ast.Call) -> bool:
        """`<posterior>.sample(...)` in a file that imports diffusers: `vae.encode(x).latent_dist.sample()`, or
        a posterior kept in a name (`posterior = vae.encode(x).latent_dist`) or in a list it was appended
        to (`latents_cache[step].sample()`): drawn on the VAE's device."""
        func = call.func
        if not (isinstance(func, ast.Attribute) and func.attr == "sample") or not self.ctx.imports.imports_root(
                "diffusers"):
            return False
        receiver = func.value
        if _is_posterior(receiver):
            return True
        names, lists = self._posterior_names()
        if isinstance(receiver, ast.Name):
            return receiver.id in names
        return isinstance(receiver, ast.Subscript) and isinstance(receiver.value, ast.Name) \
            and receiver.value.id in lists

    def _posterior_names(self) -> tuple[set[str], set[str]]:
        """Names the file assigns a posterior to, and names of lists it appends posteriors to (read once)."""
        if self._latent_names is None:
            names, lists = set(), set()
            for node in ast.walk(self.ctx.tree):
                if isinstance(node, ast.Assign) and _is_posterior(node.value):
                    names.update(target.id for target in node.targets if isinstance(target, ast.Name))
                elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "append"
                      and isinstance(node.func.value, ast.Name) and len(node.args) == 1 and _is_posterior(node.args[0])):
                    lists.add(node.func.value.id)
            self._latent_names = names, lists
        return self._latent_names

    def _read_on_host(self, call: ast.Call) -> bool:
        """Whether what `call` draws is read to the host right away (`.item()`, `.tolist()`, `.cpu()`)."""
        ancestors = self.ctx.ancestors
        return (len(ancestors) >= 2 and isinstance(attribute := ancestors[-1], ast.Attribute)
                and attribute.attr in catalogue.HOST_SYNC_METHODS and isinstance(ancestors[-2], ast.Call)
                and ancestors[-2].func is attribute)

    def _is_module(self, node: ast.expr) -> bool:
        """A name an import binds, not bound again here, or an attribute of one (audiocraft's `from ..utils import
        utils`, then `utils.multinomial(probs, 1)`): a module's function, never a tensor's method."""
        while isinstance(node, ast.Attribute):
            node = node.value
        if not isinstance(node, ast.Name) or self.values.bindings.bound(node.id, node):
            return False
        if self._imported is None:
            self._imported = {alias.asname or alias.name.partition(".")[0] for statement in ast.walk(self.ctx.tree)
                              if isinstance(statement, (ast.Import, ast.ImportFrom)) for alias in statement.names}
        return node.id in self._imported

    def _last_on_cpu(self, node: ast.expr) -> bool:
        """A name whose latest assignment puts it on the CPU (`x = x.cpu()`), whatever came before."""
        return isinstance(node, ast.Name) and self.values.last(node.id, node) == CPU

    def _shows_accelerator(self, call: ast.Call, qualified: str | None) -> bool:
        """Whether `call` puts work on an accelerator: `.cuda()`, `.to(device)`, `device=` a device not
        provably the CPU, `torch.device("cuda")`, DDP, `init_process_group`, ..."""
        if qualified in catalogue.ACCELERATOR_USE_CALLS or qualified in catalogue.TORCH_CUDA_TENSOR_TYPES:
            return True
        if qualified in catalogue.TORCH_DEVICE_CONSTRUCTORS:
            return self._call_placement(call) in ON_DEVICE
        device = keyword(call, "device")
        if device is not None:
            return self.device_of(device) != CPU
        func = call.func
        if qualified is not None or not isinstance(func, ast.Attribute):
            return False
        if func.attr in catalogue.ACCELERATOR_METHODS:
            return True
        return func.attr == "to" and bool(call.args) and self._moved_to(call.args[0], func.value) in ON_DEVICE

    def _is_cpu_device(self, node: ast.expr) -> bool:
        return (isinstance(node, ast.Call) and self.ctx.call_qualname(node) in catalogue.TORCH_DEVICE_CONSTRUCTORS
                and self._call_placement(node) == CPU)

    def _loaded_after(self, model: ast.expr) -> bool:
        """Whether a loader runs after the statement here, in its block or after the `with` and `try` blocks around it
        (not past an `if` or a loop, whose other branch may load instead: the FSDP2 example's `else:
        checkpointer.load_model(model)`), and loads the model `model` names: a loader given it, or a state dict taken
        from it (torchtitan's `dcp.load(ModelWrapper(model)._get_state_dict())`), or called on it (not
        `strict=False`), or a method named as a loader of the object holding it (torchtitan's vLLM wrapper
        `self._maybe_initial_load_weights()`)."""
        ancestors = self.ctx.ancestors
        levels = [depth for depth in range(len(ancestors) - 1, 0, -1) if isinstance(ancestors[depth], ast.stmt)]
        statements: list[ast.stmt] = []
        for index, depth in enumerate(levels):
            node = ancestors[depth]
            if isinstance(node, SCOPE_TYPES) or index and not isinstance(node, (ast.With, ast.AsyncWith, ast.Try)):
                break
            statements += default_device.following(ancestors[:depth + 1])
        derived = {ast.unparse(model)}
        holder = ast.unparse(model.value) if isinstance(model, ast.Attribute) else None
        for statement in statements:
            for node in ast.walk(statement):
                if not (isinstance(node, ast.Call) and default_device.LOADER_NAME.search(self.ctx.callee_name(node) or "")
                        and constant(keyword(node, "strict")) is not False):
                    continue
                given = [*node.args, *(k.value for k in node.keywords)]
                on = ast.unparse(node.func.value) if isinstance(node.func, ast.Attribute) else None
                if on in derived or on is not None and on == holder or any(ast.unparse(a) in derived for a in given):
                    return True
            if isinstance(statement, ast.Assign) and any(
                    ast.unparse(n) in derived for n in ast.walk(statement.value) if isinstance(n, (ast.Name, ast.Attribute))):
                derived |= {ast.unparse(target) for target in statement.targets}
        return False

    def _in_data_code(self) -> bool:
        """Whether the code here runs in the data pipeline: per-sample or per-batch code (a collate function, a
        dataset's item method, a transform), or a function of the file that only such code calls (ms-swift's gemma
        template `_update_inputs`, called from its `_data_collator` alone)."""
        if self.cpu_code.item_function() is not None:
            return True
        function = self.ctx.current_def()
        callers = self.defaults.callers(function) if function is not None else None
        if not callers or None in callers:
            return False
        saved = self.ctx.ancestors
        try:
            for caller in callers:
                self.ctx.ancestors = _scopes_to(self.ctx.tree, caller)
                if not self.ctx.ancestors or self.cpu_code.item_function() is None:
                    return False
        finally:
            self.ctx.ancestors = saved
        return True

    def _model_code_note(self) -> str:
        """What says we are in model code: a method of a module class (see _module_classes), or a function the file
        hands a module as its hook (ms-swift's NEFTune `register_forward_hook(neftune_hook)` on the embeddings: the
        output it is given is the module's); "" when neither."""
        function, owner = self._method_owner()
        if owner is not None and owner.name in self._module_classes():
            return MODEL_CODE_NOTE
        return HOOK_NOTE if function is not None and function.name in self._module_hooks() else ""

    def _module_hooks(self) -> frozenset[str]:
        """Names of the functions (or methods, `self.hook`) the file registers as a module's hooks."""
        if self._hooks is None:
            self._hooks = frozenset(
                node.args[0].id if isinstance(node.args[0], ast.Name) else node.args[0].attr
                for node in ast.walk(self.ctx.tree) if isinstance(node, ast.Call) and node.args
                and isinstance(node.func, ast.Attribute) and node.func.attr in catalogue.MODULE_HOOK_METHODS
                and (isinstance(node.args[0], ast.Name) or _on_self(node.args[0])))
        return self._hooks

    def _method_owner(self) -> tuple[ast.FunctionDef | ast.AsyncFunctionDef | None, ast.ClassDef | None]:
        """The innermost function around here, and the class it is a method of (None if none)."""
        ancestors = self.ctx.ancestors
        for i in range(len(ancestors) - 1, 0, -1):
            if isinstance(ancestors[i], FUNCTION_TYPES):
                owner = ancestors[i - 1]
                return ancestors[i], owner if isinstance(owner, ast.ClassDef) else None
        return None, None

    def _module_classes(self) -> frozenset[str]:
        """The file's classes that are modules, derived (directly or through each other) from torch.nn's or a
        Lightning module, from a deep-learning library's layer (catalogue.is_library_module: peft's
        `LoraParallelLinear`, Megatron's `MegatronModule`), or from a project module's class that is one."""
        if self._modules is None:
            found: set[str] = set()
            for node in ast.walk(self.ctx.tree):
                if isinstance(node, ast.ClassDef) and any(self._module_base(base, found) for base in node.bases):
                    found.add(node.name)
            self._modules = frozenset(found)
        return self._modules

    def _module_base(self, base: ast.expr, found: set[str]) -> bool:
        """Whether a base class is a module: one of `found` (the file's), or see _module_classes."""
        if isinstance(base, ast.Name) and base.id in found:
            return True
        qualified = self.ctx.imports.resolve_any(base)
        if qualified is not None and _is_module_base(qualified):
            return True
        if not (isinstance(base, ast.Name) and base.id in self._local_imports().refs):
            return False
        if self._project_modules is None:  # names bound to a project module's module class, looked up once
            local = self._local_imports()
            project.find_module.cache_clear()
            derived = project.imported_subclasses(local, project.file_folder(self.ctx.path), _ModuleBases())
            self._project_modules = {name for name, ref in local.refs.items()
                                     if (ref.module, ref.level, ref.attr) in derived}
        return base.id in self._project_modules

    # --- where values live -------------------------------------------------------------------
    def placement(self, node: ast.expr | None) -> str | None:
        """Where the tensor (or device) `node` lives, as far as this function shows."""
        if isinstance(node, ast.Constant):
            return _device_string(node.value) if isinstance(node.value, str) else None
        if isinstance(node, ast.JoinedStr):
            head = node.values[0] if node.values else None
            if isinstance(head, ast.Constant) and isinstance(head.value, str) and head.value.strip(":"):
                return _device_string(head.value)
            return None
        if isinstance(node, ast.Name):
            facts = self.values.facts(node.id, node)
            if not facts:
                return self._iterated_placement(node) or self._device_handed(node)
            if all(fact == CPU for fact in facts):
                return CPU
            if facts[-1] in ON_DEVICE:
                return facts[-1]
            return CPU if self._built_then_moved(node, facts) else self._device_handed(node)
        if isinstance(node, ast.Attribute):
            if self._gathered(node):
                return ACCELERATOR
            assigned = self._attribute_placement(node)
            if assigned is not None:
                return assigned
            if node.attr == "device" and (fabric := self._fabric_device(node.value)) is not None:
                return fabric  # a Lightning Fabric's root device
            if node.attr == "device":  # a data pipeline's tensors are on the CPU, as for a `*_like` draw there
                return self.placement(node.value) or (CPU if self._in_data_code() else None)
            if node.attr in catalogue.DEVICE_PRESERVING_ATTRIBUTES:
                return self.placement(node.value)
            if isinstance(node.value, (ast.Name, ast.Attribute, ast.Subscript, ast.Call)):  # `layer.weight`: where its module is
                return self.placement(node.value)
            return None
        if isinstance(node, ast.Subscript):
            return self.placement(node.value)
        if isinstance(node, ast.BinOp):
            return _combine(self.placement(node.left), self.placement(node.right), both=False)
        if isinstance(node, ast.Compare):
            return functools.reduce(lambda a, b: _combine(a, b, both=False),
                                    map(self.placement, node.comparators), self.placement(node.left))
        if isinstance(node, ast.UnaryOp):
            return self.placement(node.operand)
        if isinstance(node, ast.IfExp):
            return _combine(self.placement(node.body), self.placement(node.orelse), both=True)
        if isinstance(node, ast.Call):
            return self._call_placement(node)
        return None

    def _gathered(self, node: ast.Attribute) -> bool:
        """Whether `node` (or the tensor whose `.data` it is) is a parameter that a `with
        deepspeed.zero.GatheredParameters([...]):` around here gathers, whole, on the accelerator (ZeRO-3's)."""
        text = ast.unparse(node.value if node.attr == "data" else node)
        for ancestor in self.ctx.ancestors:
            for item in ancestor.items if isinstance(ancestor, (ast.With, ast.AsyncWith)) else ():
                call = item.context_expr
                if isinstance(call, ast.Call) and self.ctx.call_qualname(call) in catalogue.DEEPSPEED_GATHERS:
                    params = argument(call, 0, "params")
                    listed = params.elts if isinstance(params, (ast.List, ast.Tuple)) else [params]
                    if text in {ast.unparse(param) for param in listed if param is not None}:
                        return True
        return False

    def _device_handed(self, name: ast.Name) -> str | None:
        """DEVICE where the function around here passes `name.device` as a `device=` (RT-DETR's denoising queries:
        `torch.randperm(n, device=gt_bbox.device)`, then `torch.rand_like(gt_bbox.repeat(...))`): a tensor it
        takes for the device is on it as much as that `device=` is; else None."""
        function = self.ctx.current_def()
        handed = function is not None and any(
            isinstance(node, ast.keyword) and node.arg == "device" and isinstance(node.value, ast.Attribute)
            and node.value.attr == "device" and isinstance(node.value.value, ast.Name)
            and node.value.value.id == name.id for node in walk_scope(function))
        return DEVICE if handed else None

    def _iterated_placement(self, name: ast.Name) -> str | None:
        """Where a module's submodule or tensor lives that a loop around here takes (`for layer in
        model.modules()`, `for n, p in model.named_parameters()`): where the module does."""
        for node in reversed(self.ctx.ancestors):
            if isinstance(node, SCOPE_TYPES):
                return None
            if (isinstance(node, (ast.For, ast.AsyncFor)) and any(
                    isinstance(t, ast.Name) and t.id == name.id for t in ast.walk(node.target))):
                made = node.iter
                if (isinstance(made, ast.Call) and isinstance(made.func, ast.Attribute)
                        and made.func.attr in MODULE_ITERATORS):
                    return self.placement(made.func.value)
                return None
        return None

    def _built_then_moved(self, name: ast.Name, facts: list) -> bool:
        """Whether the name holds what calls built on no known device (a model from a project's factory, or
        torchvision's) and this function moves it to a device later (`model.cuda(args.gpu)`): it is still on the
        CPU here."""
        bound = self.values.bindings.bound(name.id, name)
        if not bound or not all(isinstance(value, ast.Call) for value in bound) or any(f in ON_DEVICE for f in facts):
            return False
        scope = next((node for node in reversed(self.ctx.ancestors) if isinstance(node, SCOPE_TYPES)), self.ctx.tree)
        here = (name.lineno, name.col_offset)
        later = sorted(event for event in self._moves_in(scope).get(name.id, ()) if event[0] > here)
        return bool(later) and later[0][1]  # moved before it is bound again

    def _moves_in(self, scope: ast.AST) -> dict[str, list[tuple[tuple[int, int], bool]]]:
        """Per name, where a scope moves it to a device (True: `x.cuda()`, `x.to(device)`,
        `nn.DataParallel(x).cuda()`) or binds it anew (False, where the assignment ends)."""
        if id(scope) not in self._moves:
            found: dict[str, list[tuple[tuple[int, int], bool]]] = {}
            for node in walk_scope(scope):
                if isinstance(node, ast.Call) and self._moves_to_device(node):
                    moved = node.func.value
                    if isinstance(moved, ast.Call) and moved.args:  # a wrapper, moved with what it wraps
                        moved = moved.args[0]
                    if isinstance(moved, ast.Name):
                        found.setdefault(moved.id, []).append(((node.lineno, node.col_offset), True))
                elif isinstance(node, ast.Assign):
                    for target in node.targets:
                        if isinstance(target, ast.Name):
                            end = (node.end_lineno, node.end_col_offset)
                            found.setdefault(target.id, []).append((end, False))
            self._moves[id(scope)] = found
        return self._moves[id(scope)]

    def _moves_to_device(self, call: ast.Call) -> bool:
        """`.cuda()`, `.npu()`, or `.to(d)` with a device not literally the CPU (not a dtype: `.to(torch.half)`)."""
        func = call.func
        if not isinstance(func, ast.Attribute):
            return False
        if func.attr in catalogue.ACCELERATOR_METHODS:
            return True
        target = keyword(call, "device") or (call.args[0] if func.attr == "to" and call.args else None)
        if func.attr != "to" or target is None:
            return False
        if isinstance(target, ast.Constant):
            return isinstance(target.value, str) and not catalogue.is_cpu_device(target.value)
        if not isinstance(target, ast.Call):
            return self.ctx.qualname(target) is None
        qualified = self.ctx.call_qualname(target)
        return qualified is None or (qualified in catalogue.TORCH_DEVICE_CONSTRUCTORS
                                     and not catalogue.is_cpu_device(constant(argument(target, 0, "type"))))

    def device_of(self, node: ast.expr) -> str:
        """Where a device argument points: a device that is not provably the CPU counts as DEVICE."""
        if isinstance(node, ast.Constant):
            return CPU if node.value is None else _device_string(str(node.value))
        return self.placement(node) or DEVICE

    def _call_placement(self, call: ast.Call) -> str | None:
        qualified = self.ctx.call_qualname(call)
        device = keyword(call, "device")
        if device is not None and isinstance(call.func, ast.Name) and self._definition(call.func.id) is not None:
            return self.device_of(device)  # a project function handed the device makes what it returns there
        if qualified is not None:
            if catalogue.is_cpu_model_factory(qualified):
                return CPU if device is None else self.device_of(device)
            if qualified.endswith(".from_pretrained") and qualified.split(".", 1)[0] in PRETRAINED_LIBRARIES:
                return _pretrained_placement(call)
            if qualified in catalogue.TORCH_DEVICE_CONSTRUCTORS:
                target = argument(call, 0, "type")
                return self.device_of(target) if target is not None else None
            if qualified in catalogue.DATA_PARALLEL_WRAPPERS:  # DCGAN's `netG = nn.DataParallel(netG, gpus)`
                return self.placement(argument(call, 0, "module"))
            if not qualified.startswith("torch."):
                return None
            if qualified in catalogue.TORCH_CUDA_TENSOR_TYPES:
                return ACCELERATOR
            if qualified in catalogue.TORCH_TENSOR_WRAPPERS:  # `nn.Parameter(torch.empty(n, device=d))`
                return self.placement(argument(call, 0, "data"))
            if device is not None:
                return self.device_of(device)
            if qualified in catalogue.TORCH_TENSOR_FACTORIES or catalogue.is_torch_module_class(qualified):
                return CPU  # a module is built on the CPU, unless given `device=`
            signature = catalogue.TORCH_DEVICE_DRAWS.get(qualified)
            if signature is not None and signature.inputs or qualified.endswith("_like"):
                return self.placement(argument(call, 0, "input"))
            return self._computed_on_cpu(call.args)
        if isinstance(call.func, ast.Name) and call.func.id == "getattr" and len(call.args) >= 2:
            return self.placement(call.args[0])  # an attribute lives where its object does, as `x.attr` does
        if self._module_registry(call.func) or self._builds_cpu_module(call):  # `models.__dict__[args.arch]()`
            return CPU if device is None else self.device_of(device)
        if not isinstance(call.func, ast.Attribute):
            return None
        method, receiver = call.func.attr, call.func.value
        if method == "from_pretrained":  # a Hugging Face loader, however its class is named
            return _pretrained_placement(call)
        if method in FABRIC_SETUPS and call.args:
            return self._fabric_device(receiver)
        if device is not None and (method == "to" or method.startswith("new_")):
            return self.device_of(device)
        if method in catalogue.ACCELERATOR_METHODS:
            return ACCELERATOR
        if method == "cpu":
            return CPU
        if method == "to":
            return self._moved_to(call.args[0], receiver) if call.args else self.placement(receiver)
        if method in catalogue.DEVICE_PRESERVING_METHODS or method in DRAW_METHODS or method.startswith("new_"):
            return self.placement(receiver)
        if device is not None or method == "type":  # `x.type(torch.cuda.FloatTensor)` moves it
            return None
        return CPU if self.placement(receiver) == CPU else None  # a CPU tensor's method computes on the CPU

    def _computed_on_cpu(self, args: list[ast.expr]) -> str | None:
        """Where a torch function computes from its tensor arguments (`F.conv2d(inp, w)`, `torch.cat(parts)`):
        the CPU when those it is given show the CPU and none a device (strings and numbers are not tensors)."""
        found = {self.placement(arg) for arg in args if not isinstance(arg, (ast.Constant, ast.JoinedStr))}
        return CPU if CPU in found and not found & set(ON_DEVICE) else None

    def _builds_cpu_module(self, call: ast.Call) -> bool:
        """Whether `call` builds a module class of the file, or of a project module it imports (fairseq's
        `LinearizedConvolution(...)`), whose `__init__` puts nothing on a device (no `device=` but the CPU's,
        `.cuda()`, `.to(...)`, as Megatron's parallel layers do): its weights are on the CPU."""
        func = call.func
        if not isinstance(func, ast.Name) or not (func.id in self._module_classes() or self._module_base(func, set())):
            return False
        found = self._definition(func.id)
        if found is None or not isinstance(found[0], ast.ClassDef):
            return func.id in self._module_classes()
        init = _method(found[0], "__init__", found[1].classes)
        return init is None or not any(_places_on_device(node) for node in ast.walk(init))

    def _attribute_placement(self, node: ast.Attribute) -> str | None:
        """Where `self.proj` (an attribute chain) lives when this function assigned it before here (fairseq's
        `self.output_projection = nn.Linear(...)`, then `nn.init.normal_(self.output_projection.weight)`), or
        moved it in place (`self.proj.cuda()`): the CPU when every such value is, else the last's device; None
        when not assigned here."""
        if not isinstance(node.value, (ast.Name, ast.Attribute)) or not isinstance(node.ctx, ast.Load):
            return None
        function = self.ctx.current_def()
        if function is None:
            return None
        text, here = ast.unparse(node), (node.lineno, node.col_offset)
        values = [value for where, value in self._attribute_values(function).get(text, ())
                  if where <= here and constant(value) is not None]  # `self.rel_pos_h = None` holds no tensor
        facts = [self.placement(value) for value in values]
        if not facts:
            return None
        return CPU if all(fact == CPU for fact in facts) else facts[-1] if facts[-1] in ON_DEVICE else None

    def _attribute_values(self, function: ast.AST) -> dict[str, list[tuple[tuple[int, int], ast.expr]]]:
        """Per attribute chain (`self.proj`), what a function assigns it or moves it by, with where that ends."""
        if id(function) not in self._attributes:
            found: dict[str, list[tuple[tuple[int, int], ast.expr]]] = {}
            for statement in walk_scope(function):
                if isinstance(statement, ast.Assign):
                    targets, value = statement.targets, statement.value
                elif (isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call)
                      and isinstance(statement.value.func, ast.Attribute) and statement.value.func.attr in MOVES):
                    targets, value = [statement.value.func.value], statement.value  # `self.proj.cuda()`
                else:
                    continue
                end = (statement.end_lineno, statement.end_col_offset)
                for target in targets:
                    if isinstance(target, ast.Attribute) and isinstance(target.value, (ast.Name, ast.Attribute)):
                        found.setdefault(ast.unparse(target), []).append((end, value))
            self._attributes[id(function)] = found
        return self._attributes[id(function)]

    def _fabric_device(self, fabric: ast.expr) -> str | None:
        """Where a Lightning Fabric puts what it sets up: a name assigned `Fabric(...)` (the CPU when made with
        `accelerator="cpu"`), or a name `fabric` not assigned here in a file that imports lightning."""
        if not isinstance(fabric, ast.Name):
            return None
        bound = self.values.bindings.bound(fabric.id, fabric)
        made = bound[-1] if bound else None
        if isinstance(made, ast.Call) and self.ctx.call_qualname(made) in default_device.FABRICS:
            return CPU if catalogue.is_cpu_device(constant(keyword(made, "accelerator"))) else DEVICE
        named = fabric.id == "fabric" and made is None and self.ctx.imports.imports_root("lightning")
        return DEVICE if named else None

    def _module_registry(self, func: ast.expr) -> bool:
        """`<imported module>.__dict__[name]`: a model looked up by name in a models module (torchvision's, or
        the project's `models_vit`, as MoCo, SimSiam and MAE pick their architecture), which builds on the CPU."""
        if not (isinstance(func, ast.Subscript) and isinstance(func.value, ast.Attribute)
                and func.value.attr == "__dict__" and isinstance(func.value.value, ast.Name)):
            return False
        return func.value.value.id in self.ctx.imports.bindings

    def _moved_to(self, target: ast.expr, receiver: ast.expr) -> str | None:
        """Where `receiver.to(target)` lives: a device, another tensor's device, or unchanged for a dtype."""
        if isinstance(target, ast.Constant):
            return self.device_of(target)
        qualified = self.ctx.qualname(target) or (self.ctx.call_qualname(target)
                                                 if isinstance(target, ast.Call) else None)
        if qualified is not None and qualified not in catalogue.TORCH_DEVICE_CONSTRUCTORS:
            return self.placement(receiver)  # a dtype such as torch.float16 keeps the device
        found = self.placement(target)
        if found is not None:
            return found
        name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
        return DEVICE if "device" in name.lower() or name in DEVICE_NAMES else None


class Sampling(NamedTuple):
    """Where a diffusers pipeline's call samples: its line, its function (None: module level), the loops around it."""

    line: int
    function: ast.FunctionDef | ast.AsyncFunctionDef | None
    loops: tuple[ast.AST, ...]


class Definitions(NamedTuple):
    """One module's classes and functions by name, and how its names resolve (the linted file's, or a project
    module's)."""

    classes: dict[str, ast.ClassDef]
    functions: dict[str, ast.FunctionDef | ast.AsyncFunctionDef]
    resolve: Callable[[ast.AST], str | None]


class _ModuleBases:
    """The qualified names of module base classes, as a container (for project.imported_subclasses)."""

    def __contains__(self, qualified: object) -> bool:
        return isinstance(qualified, str) and _is_module_base(qualified)


def _is_module_base(qualified: str) -> bool:
    return is_model_base(qualified) or catalogue.is_library_module(qualified)


def _method(cls: ast.ClassDef, name: str, classes: dict[str, ast.ClassDef], depth: int = 0):
    """Method `name` of `cls`, or of the first base class (defined in the same module) that has it, else None."""
    own = next((node for node in cls.body if isinstance(node, FUNCTION_TYPES) and node.name == name), None)
    if own is not None or depth > 8:
        return own
    bases = (classes[base.id] for base in cls.bases if isinstance(base, ast.Name) and base.id in classes)
    return next((found for base in bases if (found := _method(base, name, classes, depth + 1)) is not None), None)


def _class_chain(cls: ast.ClassDef, classes: dict[str, ast.ClassDef]) -> list[ast.ClassDef]:
    """`cls` and the base classes its module defines, nearest first."""
    chain, todo = [], [cls]
    while todo and len(chain) < 8:
        current = todo.pop(0)
        chain.append(current)
        todo += [classes[b.id] for b in current.bases if isinstance(b, ast.Name) and b.id in classes]
    return chain


def _initialises_all(module: ast.Call, again: ast.Call, name: str) -> bool:
    """Whether `again` initialises every weight `module` drew: its own initialiser, one given the module, or one
    given its weight where it has no bias (`bias=False`, an embedding)."""
    given = again.args[0] if again.args and getattr(again.func, "attr", None) not in default_device.INIT_METHODS else None
    weight_only = given is not None and ast.unparse(given).endswith((".weight", ".weight.data"))
    return not weight_only or constant(keyword(module, "bias")) is False or "Embedding" in name


def _pretrained_placement(call: ast.Call) -> str:
    """Where `from_pretrained(...)` loads: on the CPU unless given a device map (not a literal None)."""
    device_map = keyword(call, "device_map")
    return CPU if device_map is None or constant(device_map) is None else DEVICE


def _untyped(node: ast.expr) -> ast.expr:
    """A device of `device.type`, else the node."""
    return node.value if isinstance(node, ast.Attribute) and node.attr == "type" else node


def _on_self(node: ast.expr | None) -> bool:
    """`self.<name>`: a method (or attribute) of the instance itself."""
    return isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self"


def _draws(function: ast.AST, resolve) -> bool:
    """Whether a function draws (`resolve` names its callees): a `torch.nn.init` draw, or an in-place random method
    (`w.data.normal_()`)."""
    return any(isinstance(node, ast.Call) and (resolve(node.func) in catalogue.TORCH_INIT_DRAWS
                                               or getattr(node.func, "attr", None) in DRAW_METHODS)
               for node in ast.walk(function))


def _places_on_device(node: ast.AST) -> bool:
    """A call in a module's `__init__` that puts tensors on a device: `device=` not None or "cpu", `.cuda()`,
    `.to(...)`."""
    if not isinstance(node, ast.Call):
        return False
    device = keyword(node, "device")
    if device is not None and not (isinstance(device, ast.Constant) and (device.value is None or isinstance(
            device.value, str) and catalogue.is_cpu_device(device.value))):
        return True
    return isinstance(node.func, ast.Attribute) and node.func.attr in MOVES


def _short(call: ast.expr) -> str:
    """A call's source, its arguments elided when long."""
    text = ast.unparse(call)
    return text if len(text) <= 60 else ast.unparse(call.func) + "(...)" if isinstance(call, ast.Call) else text[:60]


def _device_string(text: str) -> str:
    """CPU for "cpu"/"meta" (and "cpu:0"), an accelerator for any other device string."""
    return CPU if catalogue.is_cpu_device(text) else ACCELERATOR


def _combine(first: str | None, second: str | None, both: bool) -> str | None:
    """Placement of a value built from two others: either branch of `a if c else b` (`both`), or `a * b` (a CPU
    tensor and one not shown: torch mixes devices only with a 0-dim CPU tensor, so the CPU)."""
    if first == second:
        return first
    if not both and CPU in (first, second) and None in (first, second):
        return CPU
    if first in ON_DEVICE or second in ON_DEVICE:
        return DEVICE if both or ACCELERATOR not in (first, second) else ACCELERATOR
    return None


def _is_posterior(node: ast.expr) -> bool:
    """`<...>.latent_dist`, or a name spelled like it (`latent_dist`, `image_latent_dist`)."""
    latent = catalogue.DIFFUSERS_LATENT_DISTRIBUTION
    return (isinstance(node, ast.Attribute) and node.attr == latent) or (isinstance(node, ast.Name)
                                                                        and node.id.endswith(latent))


def generator_leaves(value: ast.expr) -> list[ast.expr]:
    """What a generator expression makes: both branches of `a if c else b`, each without the calls chained on it
    (`torch.Generator(d).manual_seed(s)`: `torch.Generator(d)`)."""
    if isinstance(value, ast.IfExp):
        return [*generator_leaves(value.body), *generator_leaves(value.orelse)]
    while isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and isinstance(value.func.value, ast.Call):
        value = value.func.value
    return [value]


def _is_none(value: object) -> bool:
    """A literal None."""
    return value is None


def _is_cpu(value: object) -> bool:
    """A literal device that is the CPU: None (the default device) or "cpu"."""
    return value is None or isinstance(value, str) and catalogue.is_cpu_device(value)


def _yields(function: ast.AST) -> bool:
    """Whether a function is a generator: what it draws is handed on, not thrown away."""
    return any(isinstance(node, (ast.Yield, ast.YieldFrom)) for node in walk_scope(function))


def _constant_draw(call: ast.Call, name: str | None) -> bool:
    """A draw whose result is a constant on any device (see CONSTANT_WHEN): `w.normal_(mean=1, std=0)`,
    `nn.init.uniform_(w, a, a)`."""
    given = [argument(call, position, key) for position, key in CONSTANT_WHEN.get(name, ())]
    if not given or None in given:
        return False
    if len(given) == 1:
        return _is_number(given[0]) and constant(given[0]) == 0
    low, high = given
    if _is_number(low) and _is_number(high):
        return constant(low) == constant(high)
    return isinstance(low, ast.Name) and isinstance(high, ast.Name) and low.id == high.id


def _is_number(node: ast.expr) -> bool:
    """A literal number, as in `torch.normal(0.0, 1.0, size)`: not a tensor."""
    return isinstance(constant(node), (int, float))

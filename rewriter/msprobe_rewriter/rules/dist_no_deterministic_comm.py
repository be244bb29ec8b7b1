"""MSP602 dist-no-deterministic-comm: collectives initialised without HCCL_DETERMINISTIC in the file."""

from __future__ import annotations

import ast
from functools import lru_cache
from pathlib import Path

from msprobe_rewriter import catalogue, opt_in, project, seeding
from msprobe_rewriter.assignments import assigned_before
from msprobe_rewriter.conditions import condition_text
from msprobe_rewriter.context import FileContext, Site, argument, constant, keyword
from msprobe_rewriter.late_seeding import code_text
from msprobe_rewriter.rules.base import Invalid, Rule

STARTS = catalogue.DISTRIBUTED_INIT_CALLS | catalogue.MEGATRON_SETUPS  # Megatron's starts NCCL (`--distributed-backend`)
CONDITIONAL_HCCL = ("distributed communication is initialised, but HCCL_DETERMINISTIC is set before it only when "
                    "{condition}: set `os.environ[\"HCCL_DETERMINISTIC\"] = \"true\"` unconditionally before this call "
                    "while comparing runs (on NCCL, pin NCCL_ALGO/NCCL_PROTO)")
CONDITIONAL_NCCL = ("NCCL communication is initialised, but its algorithm is pinned before it only when {condition}: set "
                    "`os.environ[\"NCCL_ALGO\"] = \"Ring\"` (and `NCCL_PROTO=Simple`) unconditionally before this call "
                    "while comparing runs; on Ascend, where the backend is HCCL, set `HCCL_DETERMINISTIC=true`")
INIT_NAMES = frozenset(name.rpartition(".")[2] for name in STARTS)


class DistNoDeterministicComm(Rule):
    code = "MSP602"
    name = "dist-no-deterministic-comm"
    severity = "warning"
    frameworks = ("pytorch", "mindspore")
    message = ("distributed communication is initialised but HCCL_DETERMINISTIC is never set: set "
               "`os.environ[\"HCCL_DETERMINISTIC\"] = \"true\"` before this call (on NCCL, pin NCCL_ALGO/NCCL_PROTO)")
    nccl_message = ("NCCL communication is initialised but its algorithm is never pinned: set "
                    "`os.environ[\"NCCL_ALGO\"] = \"Ring\"` (and `NCCL_PROTO=Simple`) before this call; on Ascend, "
                    "where the backend is HCCL, set `HCCL_DETERMINISTIC=true`")
    megatron_message = ("Megatron's set-up starts NCCL communication here (`--distributed-backend` is nccl by default) "
                        "and fixes its algorithm only under `--deterministic-mode`: pass `--deterministic-mode` (Megatron "
                        "then sets, or requires, a fixed `NCCL_ALGO`), or set `os.environ[\"NCCL_ALGO\"] = \"Ring\"` "
                        "before this call; on Ascend, where the backend is HCCL, set `HCCL_DETERMINISTIC=true`")
    summary = ("Flags `torch.distributed.init_process_group`, `deepspeed.init_distributed`, "
               "`mindspore.communication.init` (and Accelerate's `Accelerator` / Lightning's `Fabric`, which "
               "initialise the process group themselves, as does OpenMMLab's `init_dist` from mmcv or mmengine, and Composer's "
               "`dist.initialize_dist(device)`, whose backend is its device's: NCCL for the default device, the GPU "
               "when there is one, gloo for `\"cpu\"`) in a file that never sets `HCCL_DETERMINISTIC` (set "
               "after the call in the same function it is too late: it is read when communication starts; several "
               "calls in one function, the branches of an `if` or a `try`, are reported once per backend (HCCL or "
               "NCCL), at the first) "
               "(`os.environ[...] =`, `os.environ.setdefault`, `os.environ.update`, `os.putenv`, directly or in "
               "a project helper it calls) and calls no seeder that does (msprobe's `seed_all(..., mode=True)`, "
               "`transformers.enable_full_determinism`, MindSpore's `set_context(deterministic=\"ON\")` and "
               "`set_deterministic(True)`). Setting it to a false value counts as not set, and so does setting it only under "
               "a condition false with the default arguments or under a flag named for determinism whose value nothing "
               "here tells (OpenRLHF's `if self.full_determinism: transformers.enable_full_determinism(self.seed)`): "
               "the message names that condition. A `Fabric` "
               "given one device, and the `gloo` backend (MindSpore's `mccl` too; an option defaulting to it is info; also MPI, oneCCL's `ccl`, "
               "`xla`, SageMaker's `smddp`, which neither setting concerns), a "
               "`Fabric(accelerator=\"cpu\")` or "
               "`Accelerator(cpu=True)` (no HCCL or NCCL), torch's `fake` backend (no communication at all) and "
               "`init_process_group(world_size=1)` (one process) are not flagged; `deepspeed.initialize` counts when it is "
               "the first of an entry script (it starts communication itself). With the `nccl` backend named (also as one branch of a conditional, or as the default of the option passed), "
               "pinning NCCL's algorithm (`NCCL_ALGO`, set the same ways) also counts, and the message says so; so too for "
               "MindSpore's `init()` in the branch of an `if` comparing with `\"GPU\"` (mindediting's `elif "
               "device_target == \"GPU\":`), where it picks NCCL. A start in a top-level function that nothing in the "
               "project calls (an entry script's unused function, or one the files importing its module never name: "
               "mindediting's `init_dist`) is info. "
               "Megatron's set-up (`pretrain`, `initialize_megatron` unless given `skip_mpu_initialization=True`), called in an "
               "entry script, starts NCCL communication itself "
               "(`--distributed-backend` is nccl by default) and fixes its algorithm only under `--deterministic-mode`: "
               "it is reported likewise, with that advice; not where `megatron` is the project's own copy without that "
               "option (gpt-neox's fork): its own start of communication is reported in its file.")
    why = ("All-reduce and the other collectives sum partial results in an order that depends on timing and "
           "topology. On Ascend, HCCL only fixes that order when `HCCL_DETERMINISTIC=true`, so gradients of a "
           "multi-device run differ in the last bits from run to run, and the difference grows over the steps.")
    fix = ("Set `os.environ[\"HCCL_DETERMINISTIC\"] = \"true\"` at the top of the script, before the process group "
           "is created (or export it in the launch script), or call `seed_all(seed, mode=True)` first. On NVIDIA "
           "GPUs pin NCCL's algorithm and protocol (`NCCL_ALGO=Ring`, `NCCL_PROTO=Simple`) for the same effect.")
    valid = (
        # MindSpore's collectives for CPU hardware (mindrl's ppo example).
        "from mindspore.communication import init\n\ninit(\"mccl\")\n",
        # Intel's oneCCL (XPU): neither HCCL's nor NCCL's settings concern it.
        "import torch.distributed as dist\n\ndist.init_process_group(backend=\"ccl\", rank=0, world_size=2)\n",
        """\
import os

import torch.distributed as dist

os.environ["HCCL_DETERMINISTIC"] = "true"


def setup(rank, world_size):
    dist.init_process_group("hccl", rank=rank, world_size=world_size)
""",
        """\
import os

import deepspeed

os.environ.setdefault("HCCL_DETERMINISTIC", "1")
deepspeed.init_distributed()
""",
        """\
from os import environ

from mindspore.communication import init

environ.update({"HCCL_DETERMINISTIC": "true", "HCCL_CONNECT_TIMEOUT": "600"})
init()
""",
        """\
import torch
from msprobe_runtime.pytorch import seed_all

seed_all(42, mode=True)
torch.distributed.init_process_group(backend="hccl")
""",
        # A method of some other object, not torch.distributed's.
        """\
import torch


class Launcher:
    def init_process_group(self):
        return None


Launcher().init_process_group()
""",
        # MindSpore's deterministic switch sets HCCL_DETERMINISTIC itself.
        """\
import mindspore as ms
from mindspore.communication import init

ms.set_context(mode=ms.GRAPH_MODE, deterministic="ON")
init()
""",
        # On the CPU: no HCCL or NCCL.
        """\
import torch.distributed as dist

dist.init_process_group("gloo", rank=0, world_size=2)
""",
        """\
import torch
from accelerate import Accelerator
from lightning import Fabric

fabric = Fabric(accelerator="cpu")
accelerator = Accelerator(cpu=True)
""",
        # NVIDIA GPUs: NCCL's algorithm pinned.
        """\
import os

import torch.distributed as dist

os.environ["NCCL_ALGO"] = "Ring"
os.environ["NCCL_PROTO"] = "Simple"
dist.init_process_group(backend="nccl")
""",
        # torch reads backend names in any case, and per device in a mapping: NCCL for CUDA, pinned.
        """\
import os

import torch.distributed as dist

os.environ["NCCL_ALGO"] = "Ring"
dist.init_process_group(backend="cpu:gloo,cuda:NCCL")
""",
        # TRL's `prepare_deepspeed`: a library's engine, built after the script has started communicating.
        """\
import deepspeed


def prepare_deepspeed(model, config):
    engine, *_ = deepspeed.initialize(model=model, config=config)
    return engine
""",
        """\
import os

from megatron.training import initialize_megatron

if __name__ == "__main__":
    os.environ["NCCL_ALGO"] = "Ring"
    initialize_megatron(extra_args_provider=add_args)
""",
        # Megatron-LM's tools/report_theoretical_memory.py: the set-up stops before it starts communication.
        """\
from megatron.training.initialize import initialize_megatron

if __name__ == "__main__":
    initialize_megatron(allow_no_cuda=True, skip_mpu_initialization=True)
""",
        # MindSpeed's patched `pretrain`, a library function: the entry script calling it is given the option.
        """\
from megatron.training.initialize import initialize_megatron


def pretrain(train_valid_test_dataset_provider, model_provider, extra_args_provider=None, args_defaults=None):
    initialize_megatron(extra_args_provider=extra_args_provider, args_defaults=args_defaults)
""",
        # yolov5: NCCL where it is available, else gloo; NCCL pinned.
        """\
import os

import torch.distributed as dist

os.environ["NCCL_ALGO"] = "Ring"
dist.init_process_group(backend="nccl" if dist.is_nccl_available() else "gloo")
""",
        # Composer's `initialize_dist` on the CPU starts gloo.
        "from composer.utils import dist\n\ndist.initialize_dist(\"cpu\")\n",
        # torchtitan's single-process precompile: the fake backend communicates nothing; k-diffusion's fallback
        # group of one process has no other device to communicate with.
        """\
import torch.distributed as dist


def precompile(world_size):
    dist.init_process_group("fake", rank=0, world_size=world_size)


def ensure_distributed():
    if not dist.is_initialized():
        dist.init_process_group(world_size=1, rank=0, store=dist.HashStore())
""",
    )
    invalid = (
        # Megatron's `pretrain` (and `initialize_megatron`) start NCCL communication, with a fixed algorithm only
        # under `--deterministic-mode`.
        Invalid("""\
from megatron.core.enums import ModelType
from megatron.training import pretrain

if __name__ == "__main__":
    pretrain(train_valid_test_datasets_provider, model_provider, ModelType.encoder_or_decoder, forward_step)
""", lines=(5,)),
        # ArcFace: the two branches of one try/except.
        Invalid("import torch.distributed as dist\n\ntry:\n    dist.init_process_group(backend=\"hccl\")\n"
                "except KeyError:\n    dist.init_process_group(backend=\"hccl\", init_method=\"tcp://127.0.0.1:1\")\n",
                lines=(4,)),
        # CleanRL's multi-GPU PPO: `--backend` is gloo unless told otherwise (info).
        Invalid("""\
import argparse

import torch.distributed as dist

parser = argparse.ArgumentParser()
parser.add_argument("--backend", type=str, default="gloo")
args = parser.parse_args()
dist.init_process_group(args.backend)
""", lines=(8,), severity="info"),
        # moco-v3: `--dist-backend` is nccl unless told otherwise (the NCCL advice).
        Invalid("""\
import argparse

import torch.distributed as dist

parser = argparse.ArgumentParser()
parser.add_argument("--dist-backend", default="nccl", type=str)
args = parser.parse_args()
dist.init_process_group(backend=args.dist_backend, init_method="env://")
""", lines=(8,)),
        # OpenRLHF's strategy sets HCCL_DETERMINISTIC (through `enable_full_determinism`) only under its
        # determinism flag, which its scripts leave off unless asked.
        Invalid("""\
import os

import torch.distributed as dist


class Strategy:
    def __init__(self, full_determinism=False):
        self.full_determinism = full_determinism

    def setup_distributed(self):
        if self.full_determinism:
            os.environ["HCCL_DETERMINISTIC"] = "true"
        dist.init_process_group("hccl")
""", lines=(13,)),
        # mmcv's launcher helper initialises the process group (ModelZoo's mmdetection-based scripts).
        Invalid("""\
import torch_npu
from mmcv.runner import init_dist

if __name__ == "__main__":
    init_dist("pytorch", backend="hccl")
""", lines=(5,)),
        # Set after the communication is initialised: too late.
        Invalid("""\
import mindspore as ms
from mindspore.communication import init

init()
ms.set_context(deterministic="ON")
""", lines=(4,)),
        Invalid("""\
import mindspore as ms
from mindspore.communication import init

ms.set_context(deterministic="OFF")
init()
""", lines=(5,)),
        Invalid("""\
import torch
import torch.distributed as dist


def init_distributed(args):
    torch.cuda.set_device(args.local_rank)
    dist.init_process_group(backend="nccl", init_method="env://")
    dist.barrier()
""", lines=(7,)),
        Invalid("""\
import os

from mindspore.communication import init as init_comm
import mindspore as ms

os.environ["HCCL_DETERMINISTIC"] = "false"
ms.set_context(mode=ms.GRAPH_MODE)
init_comm()
""", lines=(8,)),
        # Alternatives of one start (if/else, try/except) are reported once, at the first.
        Invalid("""\
import os

import deepspeed
from torch.distributed import init_process_group as ipg

os.environ["HCCL_CONNECT_TIMEOUT"] = "1200"
if os.environ.get("USE_DEEPSPEED"):
    deepspeed.init_distributed(dist_backend="hccl")
else:
    ipg("hccl")
""", lines=(8,)),
        # mindediting's init_env: MindSpore's `init()` on the GPU starts NCCL, advised apart from the HCCL branch.
        Invalid("""\
from mindspore import context
from mindspore.communication import init


def init_env(cfg):
    if cfg.device_target == "Ascend":
        init()
    elif cfg.device_target == "GPU":
        init()
""", lines=(7, 9)),
        # A function nothing calls starts nothing (info).
        Invalid("""\
from mindspore.communication import init


def init_dist():
    init("nccl")


if __name__ == "__main__":
    train()
""", lines=(5,), severity="info"),
        # HelloDeepSpeed: `deepspeed.initialize` starts communication itself (after `init_distributed`, it does not)
        Invalid("""\
import deepspeed


def train(model, args):
    engine, _, _, _ = deepspeed.initialize(args=args, model=model, model_parameters=model.parameters())
    return engine


def train_again(model, args):
    deepspeed.init_distributed()
    return deepspeed.initialize(args=args, model=model)


if __name__ == "__main__":
    train(build_model(), parse_args())
""", lines=(5, 10)),
        # llm-foundry: Composer's `initialize_dist` on the default device (the GPU when there is one) starts NCCL.
        Invalid("""\
from composer.utils import dist, get_device


def _initialize_dist_with_barrier(dist_timeout):
    dist.initialize_dist(get_device(None), timeout=dist_timeout)
    dist.barrier()
""", lines=(5,)),
    )

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        # (site, whether it names nccl, the backend argument, its function's definition)
        self.sites: list[tuple[Site, bool, ast.expr | None, ast.AST | None]] = []
        self.engine_starts = False  # the first site is a `deepspeed.initialize`, which starts communication itself

    def visit_Call(self, node: ast.Call) -> None:
        if isinstance(node.func, ast.Attribute) and node.func.attr not in INIT_NAMES:
            return  # cheap filter; plain names may be aliases (`init_process_group as ipg`)
        qualified = self.ctx.call_qualname(node)
        if qualified in catalogue.DEEPSPEED_INITIALIZE:
            if constant(keyword(node, "dist_init_required")) is False or self.sites:
                return  # communication started already, or by an earlier init call of the file
            self.engine_starts = True
        if qualified in catalogue.MEGATRON_SETUPS:
            if constant(keyword(node, catalogue.MEGATRON_SKIP_DISTRIBUTED)) is True:
                return  # tools/report_theoretical_memory.py: no communication
            self.sites.append((self.ctx.site(node), True, None, self.ctx.current_def()))
        elif qualified in catalogue.DISTRIBUTED_INIT_CALLS and not self._no_accelerator_collectives(node, qualified):
            position = catalogue.DISTRIBUTED_BACKEND_ARGUMENT.get(qualified)
            backend = argument(node, *position) if position is not None else None
            scope = self.ctx.current_def() or self.ctx.tree
            assigned = (assigned_before(argument(node, 0, "device"), node, scope)  # `device = get_device(None)`
                        if qualified in catalogue.COMPOSER_INITIALIZE_DIST else _assigned_literal(backend, node, scope))
            on_nccl = bool(named_backends(node, qualified, assigned) & catalogue.NCCL_BACKENDS) or (
                backend is None and qualified.startswith("mindspore.") and self._on_gpu(node))
            self.sites.append((self.ctx.site(node), on_nccl, backend, self.ctx.current_def()))

    def _on_gpu(self, node: ast.Call) -> bool:
        """Whether `node` sits in the branch of an `if` comparing with "GPU" (mindediting's `elif
        cfg.system.device_target == "GPU":`): MindSpore's `init()` picks NCCL for the GPU."""
        path = [*self.ctx.ancestors, node]
        return any(isinstance(parent, ast.If) and child in parent.body and isinstance(parent.test, ast.Compare)
                   and len(parent.test.ops) == 1 and isinstance(parent.test.ops[0], ast.Eq)
                   and any(str(constant(side)).upper() == "GPU" for side in (parent.test.left, *parent.test.comparators))
                   for parent, child in zip(path, path[1:], strict=False))

    @staticmethod
    def _no_accelerator_collectives(node: ast.Call, qualified: str) -> bool:
        """`Fabric(devices=1)` (or `devices=[0]`) and `init_process_group(world_size=1)` run one process; the gloo
        backend, `Fabric(accelerator="cpu")` and `Accelerator(cpu=True)` run on the CPU, the fake one communicates
        nothing: nothing to pin."""
        backends = named_backends(node, qualified)
        if backends and backends <= catalogue.OTHER_BACKENDS:
            return True
        cpu = catalogue.DISTRIBUTED_CPU_KEYWORD.get(qualified)
        if cpu is not None and constant(keyword(node, cpu[0])) == cpu[1]:
            return True
        name = catalogue.DISTRIBUTED_DEVICES_KEYWORD.get(qualified)
        devices = keyword(node, name) if name else None
        if isinstance(devices, (ast.List, ast.Tuple)):
            return len(devices.elts) == 1
        return devices is not None and constant(devices) == 1

    def finish(self) -> None:
        if not self.sites or self.engine_starts and not self.ctx.is_entry_script():
            return  # a library's `deepspeed.initialize` (TRL's `prepare_deepspeed`) runs after the script's start
        facts = seeding.analyse(self.ctx)
        reported = set()  # (function, backend) reported once already: other calls are alternatives (try/except, if/else)
        entry = self.ctx.is_entry_script()
        for site, on_nccl, backend, definition in self.sites:
            megatron = self.ctx.call_qualname(site.node) in catalogue.MEGATRON_SETUPS
            if megatron and (not entry or megatron_lacks_deterministic_mode(self.ctx)):
                continue  # a library's (MindSpeed's patched `pretrain`): the entry script is given the option; a
                # project's fork without the option: its own start of communication is reported in its file
            function = definition.name if definition is not None else None
            default = opt_in.default_value(self.ctx, backend) if backend is not None else None
            default = default.lower() if isinstance(default, str) else None
            nccl_by_default = default in catalogue.NCCL_BACKENDS and not on_nccl  # moco-v3's `--dist-backend`
            on_nccl |= nccl_by_default
            hccl_pinned, hccl_condition = _set_before(facts, "hccl", site.node, function)
            if hccl_pinned or (id(definition), on_nccl) in reported:
                continue
            reported.add((id(definition), on_nccl))
            dead = seeding.never_called(self.ctx, definition)
            note, severity = (f" (in `{function}`, which nothing in the project calls)", "info") if dead else ("", None)
            if nccl_by_default:
                note += f" (`{condition_text(backend)}` is {default} by default)"
            if default in catalogue.OTHER_BACKENDS:  # `--backend` gloo by default
                self.report(site, self.message + f" (only when `{condition_text(backend)}` is not {default}, as it is "
                                                 "with the default arguments)", "info")
            elif not on_nccl:
                self.report(site, (CONDITIONAL_HCCL.format(condition=hccl_condition) if hccl_condition
                                   else self.message) + note, severity)
            elif not (nccl := _set_before(facts, "nccl", site.node, function))[0]:
                message = self.megatron_message if megatron else self.nccl_message
                self.report(site, (CONDITIONAL_NCCL.format(condition=nccl[1]) if nccl[1] else message) + note, severity)


def _assigned_literal(value: ast.expr | None, call: ast.Call, scope: ast.AST) -> ast.expr | None:
    """The string literal the function last assigned to `value`'s name before `call` (ConvNeXt's
    `args.dist_backend = 'nccl'` before `init_process_group(backend=args.dist_backend)`), else None."""
    assigned = assigned_before(value, call, scope)
    return assigned if isinstance(constant(assigned), str) else None


def named_backends(node: ast.Call, qualified: str, assigned: ast.expr | None = None) -> frozenset[str]:
    """The backends an init call names (or `assigned`, the literal its argument holds), as torch reads them: in
    any case (`"NCCL"`), and per device in a mapping (`"cpu:gloo,cuda:nccl"`), in every branch of a
    conditional; empty when one is not a constant."""
    if qualified in catalogue.COMPOSER_INITIALIZE_DIST:
        return _composer_backends(assigned or argument(node, 0, "device"))
    position = catalogue.DISTRIBUTED_BACKEND_ARGUMENT.get(qualified)
    value = assigned or (argument(node, *position) if position is not None else None)
    branches = []
    while isinstance(value, ast.IfExp):  # yolov5's `"nccl" if dist.is_nccl_available() else "gloo"`: either
        branches.append(value.body)
        value = value.orelse
    names = [constant(branch) for branch in [*branches, value]]
    if not all(isinstance(name, str) for name in names):
        return frozenset()
    return frozenset(part.rpartition(":")[2].strip() for name in names for part in name.lower().split(","))


def _composer_backends(device: ast.expr | None) -> frozenset[str]:
    """The backends Composer's `initialize_dist(device)` may start for a device named by a string (in every branch
    of a conditional), also through `get_device(name)`, or left None (`catalogue.COMPOSER_DEVICE_BACKENDS`); empty
    when one is not known."""
    if isinstance(device, ast.Call) and getattr(device.func, "attr", getattr(device.func, "id", None)) == "get_device":
        device = argument(device, 0, "device")
    if isinstance(device, ast.IfExp):  # llm-foundry's tests: `get_device('gpu' if gpu is not None else 'cpu')`
        branches = (_composer_backends(device.body), _composer_backends(device.orelse))
        return branches[0] | branches[1] if all(branches) else frozenset()
    name = catalogue.COMPOSER_DEFAULT_DEVICE if device is None or constant(device) is None else constant(device)
    backend = catalogue.COMPOSER_DEVICE_BACKENDS.get(name.lower()) if isinstance(name, str) else None
    return frozenset({backend}) if backend else frozenset()


def communicates_over_hccl(ctx) -> bool:
    """Whether the file starts its collectives with HCCL, named as the only backend (ModelZoo's
    `init_process_group(backend='hccl')`): its distributed runs are on Ascend, whatever CUDA fallback it keeps."""
    calls = (node for node in ast.walk(ctx.tree) if isinstance(node, ast.Call))
    return any(named_backends(call, qualified) == {"hccl"} for call in calls
               if (qualified := ctx.call_qualname(call)) in catalogue.DISTRIBUTED_INIT_CALLS)


def megatron_lacks_deterministic_mode(ctx: FileContext) -> bool:
    """Whether the `megatron` the file imports is a copy among the project's files (found as imports are) whose
    argument files do not declare `--deterministic-mode` (gpt-neox's fork, configured by YAML keys): Megatron's
    advice to pass that option does not apply there."""
    roots = project.import_roots(project.file_folder(ctx.path))
    package = next((root / catalogue.MEGATRON_ROOT for root in roots if (root / catalogue.MEGATRON_ROOT).is_dir()), None)
    return package is not None and not _declares_deterministic_mode(package)


@lru_cache(maxsize=16)
def _declares_deterministic_mode(package: Path) -> bool:
    """Whether a Megatron package declares `--deterministic-mode` in its argument files (Megatron-LM's
    megatron/training/arguments.py)."""
    for path in package.rglob("*argument*.py"):
        try:
            if catalogue.MEGATRON_DETERMINISTIC_OPTION in path.read_text(errors="replace"):
                return True
        except OSError:
            continue
    return False


def _set_before(facts: seeding.FileSeeding, kind: str, node: ast.AST, function: str | None) -> tuple[bool, str | None]:
    """Whether the default run sets `kind` ("hccl": HCCL_DETERMINISTIC, "nccl": NCCL_ALGO) before the init call
    `node` (in `function`) whatever its options hold; if not, when it would (None: nowhere): under a condition
    false with the default arguments, or a determinism flag nothing here sets (OpenRLHF's `if self.full_determinism:
    transformers.enable_full_determinism(self.seed)`, see `seeding.FileSeeding.opt_in_run`)."""

    def wanted(effect: seeding.Effect) -> bool:
        return getattr(effect.summary, kind) and _before(effect, node, function)

    verdict = facts.default_run(wanted)
    if not verdict.pinned:
        skipped_by = verdict.skipped_by
        return False, skipped_by and f"`{condition_text(skipped_by)}` (line {skipped_by.lineno}), false by default"
    found = facts.opt_in_run(wanted)
    if found is None:
        return True, None
    effect, flag = found
    if flag is not None:
        return False, f"`{condition_text(flag)}` (line {flag.lineno}) is true, an opt-in nothing here turns on"
    flag, file = effect.summary.opt_in_when
    return False, (f"`{condition_text(flag)}` ({file}:{flag.lineno}) is true, an opt-in of `{code_text(effect.node)}` "
                   "that nothing here turns on")


def _before(effect: seeding.Effect, node: ast.AST, function: str | None) -> bool:
    """Whether `effect` can run before the init call `node` (in `function`): earlier in the same function
    (or at module level above it), or anywhere else, whose order the file does not show. MindSpore reads
    HCCL_DETERMINISTIC when communication is initialised: set after `init()`, it changes nothing."""
    return effect.function != function or effect.node.lineno < node.lineno

"""MSP601 partial-ckpt-load: checkpoints loaded incompletely, leaving parameters at their random init."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

from msprobe_rewriter import catalogue, conditions, opt_in, pinning, project, seeding
from msprobe_rewriter.call_defaults import LeftAtDefault
from msprobe_rewriter.context import FUNCTION_TYPES, LOOP_TYPES, Site, argument, constant, keyword
from msprobe_rewriter.rules.base import Invalid, Rule

# Module names whose `load(..., strict=False)` is about parsing, not checkpoints.
PARSER_MODULES = frozenset({"json", "simplejson", "orjson", "ujson", "yaml", "toml", "tomllib", "pickle"})
# Words naming data sets: a loader so named, or called on an object so named, reads samples, and its `strict=` is
# about malformed rows (ms-swift's `load_dataset(..., strict=False)`, `dataset_meta.loader(..., strict=strict)`).
DATA_WORDS = frozenset({"data", "dataset", "datasets", "dataloader"})
NON_STRICT = ("`{call}(..., strict=False)` loads the checkpoint partially: parameters it misses keep their "
              "random initialisation; load complete checkpoints (strict=True) while comparing runs")
POPPED = ("keys removed from `{name}` before it is loaded non-strictly: those parameters keep their random "
          "initialisation; load one complete checkpoint while comparing runs")
HELPER_NOTE = " (by the project's `{helper}`, which raises nothing for the keys it misses)"
OVERLAY = ("`{call}(..., strict=False)` overlays part of a checkpoint on a model `from_pretrained` built: the "
           "parameters it misses keep the weights that loaded (random only where that checkpoint lacks them, as "
           "transformers warns); check that every key of the overlay loads")
PRETRAINED_PARTS = ("`{call}(..., strict=False)` loads a checkpoint into a model whose other parts were built "
                    "pretrained (`pretrained={flag}`, which this load's `if` also needs): the parameters it misses keep those pretrained weights; check that every key of the "
                    "checkpoint loads")
LIVE_WEIGHTS = ("`{call}(..., strict=False)` copies a live model's weights (its `state_dict()`) into a model that "
                "already holds its own: the parameters it misses keep what they hold (random only if that model "
                "was never loaded); check that every key meant to be copied loads")
OWN_STATE = ("`{call}(..., strict=False)` writes part of `{model}`'s own state back into it (read from `{model}` "
             "itself, then transformed: mmdet's SyncNormHook averages its norm buffers across ranks): the keys it "
             "leaves out keep what `{model}` holds")
SAVED_SUBSET = ("`{call}(..., strict=False)` loads `{key}`, which this file saves as the part of a model's "
                "`state_dict()` its keys select (ultralytics' `qat_state`: the quantizer ranges): the other "
                "parameters are not in it by design and keep what the model holds, so load its weights first")
# A model's methods that read its own state (what a function given the model builds a dict from).
STATE_READERS = frozenset({"state_dict", "named_parameters", "named_buffers", "parameters", "buffers"})
SHARE = ("`{call}(..., strict=False)` loads `{part}`'s share of a whole model's state dict (the keys renamed from "
         "`{part}.`): strict=False skips the other modules' keys; where the dict holds none of `{part}`'s, it keeps "
         "its new initialisation (a new head, which the seeding rules cover)")
PARTS_SHARE = ("`{call}(..., strict=False)` hands each of `{parts}` the whole state this class's `state_dict()` "
               "gathers from them all (a wrapper restored by torch.distributed.checkpoint, which fills that dict in "
               "place): strict=False skips the other parts' keys; a key the dict lacks would still pass unnoticed")
HUB_NOTE = (" (a torch.hub entry point: hubconf.py builds models for the repository's users, and no training run "
            "of the project loads through it)")
POPPED_OVERLAY = ("keys removed from `{name}` before it is overlaid non-strictly on a model `from_pretrained` built: "
                  "those parameters keep the weights that loaded")
RECOMPUTED_NOTE = (" (for the keys this function deletes, which the model makes again without drawing: buffers it "
                   "computes from its configuration, tensors just filled with a constant; any other key the "
                   "checkpoint lacks would still keep its random initialisation unnoticed)")
CHECKED_NOTE = (" (the keys it returns are checked here, so the partial load is deliberate: the parameters it "
                "leaves still start from their random initialisation)")
FALLBACK_NOTE = (" (a fallback after a strict load of the same checkpoint failed: the keys that failure named keep "
                 "their random initialisation)")
NO_TRAINING_NOTE = " (in a script that trains nothing: evaluation, inference or visualisation)"
# Calls that only show a value: passing the missing keys to them is no check.
REPORTING_CALLS = frozenset({"print", "info", "warning", "warn", "debug", "log", "error", "write", "echo", "format",
                             "pprint", "str", "repr", "len"})
# A network's methods listing its parameters (to compare their names with a checkpoint's keys).
PARAMETER_LISTINGS = frozenset({"parameters_and_names", "parameters_dict", "get_parameters", "trainable_params",
                                "named_parameters", "state_dict"})
MS_UNCHECKED = ("`{call}` skips the parameters it cannot find in the checkpoint and only logs a warning naming "
                "them (`strict_load=True` does not change that): take the `param_not_load` list "
                "`load_param_into_net` returns and check that it is empty")
MS_WRONG_LIST = ("`load_param_into_net` returns `(param_not_load, ckpt_not_load)` (MindSpore 2.x): this checks the second list, the "
                 "checkpoint's parameters the network lacks, and discards the first, the network's parameters the "
                 "checkpoint lacks, which keep their random initialisation: check `param_not_load`")
REPORTED_DROPS = (" (the loop filling the dict leaves out, with a printed warning, the entries it rejects: a deliberate "
                  "partial load, whose left-out parameters keep their random initialisation)")
# A network's methods returning all its parameters as a dict (one given back to it loads every parameter).
NET_OWN_DICTS = frozenset({"parameters_dict", "state_dict"})
MS_FILTERED = ("`load_checkpoint(..., {arg}=...)` loads only part of the checkpoint: the other parameters keep "
               "their random initialisation")


@dataclass(frozen=True)
class _Load:
    """A torch load as the traversal saw it: the call, its name, the project helper it runs (if one), its
    `strict=` argument, its function, whether it overlays a `from_pretrained` model, whether its result is checked,
    whether it is the fallback of a strict load that failed, and the keys deleted before it from the dicts it loads (dict name, deletion sites)."""

    node: ast.Call
    name: str
    helper: ast.FunctionDef | ast.AsyncFunctionDef | None
    strict: ast.expr | None
    function: ast.AST | None
    overlay: str | None  # the information message when the model already holds weights the load does not replace
    checked: str | None  # how the keys it returns are checked (see `_result_checked`)
    fallback: bool
    removed: list
    recomputed: bool  # keys deleted from the dicts it loads, all made again without drawing


class PartialCkptLoad(Rule):
    code = "MSP601"
    name = "partial-ckpt-load"
    severity = "warning"
    frameworks = ("pytorch", "mindspore")
    message = ("the checkpoint is loaded partially, so some parameters keep their random initialisation: load it "
               "completely (strict) while comparing runs")
    summary = ("Flags `load_state_dict(..., strict=False)` (and other loaders called with `strict=False`, such as "
               "Lightning's `load_from_checkpoint`, not a loader named for data sets, whose `strict=` is about malformed "
               "rows: ms-swift's `load_dataset`, `dataset_meta.loader`; a `strict=` parameter or option counts with the value every "
               "call of its function in the file passes, else its default, so open_clip's `strict=strict` defaulting "
               "to True is strict, and a literal False in the branch where the function's own `strict` parameter is false is "
               "its caller's decision, as in MindSpeed's `load_state_dict` override; nothing when a missing key fails the "
               "load (`if result.missing_keys: raise`, `assert len(missing) == 0`: LLaMA-Factory's restore, BLIP's "
               "`blip_decoder`); as information when the keys it returns are otherwise checked: read in an `assert` or "
               "an `if` that does more than print or log them, or passed on to a function that does more than print "
               "them, when it is the fallback in the `except` of a `try` that loaded the same dict strictly (LAVIS's "
               "best-model reload), and when the model was last "
               "assigned a `from_pretrained(...)`, whose weights the keys it misses keep, as in LLaVA's builder, or "
               "built from parts made with `pretrained=flag` under an `if flag:` that the load also needs (dinov2's hub "
               "depthers load their head so), when the dict is a live model's `state_dict()` (also filtered by a loop "
               "over its `.items()`, or handed in by every call in the file: trl's BEMA callback updating its "
               "reference model), when the dict is read from the model it is loaded into, through calls of this file that read "
               "its state (mmdet's SyncNormHook: `get_norm_states(module)`, averaged across ranks, written back), or "
               "is `state['key']` where this file saves under that key a part of a model's `state_dict()` selected "
               "by key (ultralytics' `restore_qat`: the quantizer ranges), and when a submodule is given its share of a whole model's dict, the keys renamed "
               "from its name (trl's value head `post_init`: `k.replace('v_head.', '')`), or each part of a wrapper "
               "whose own `state_dict()` gathers theirs is given the whole in its `load_state_dict` (torchtitan's "
               "`ModelWrapper`, restored by torch.distributed.checkpoint)); "
               "keys popped or deleted from a dict that the same function then loads non-strictly (unless the key is "
               "stored again under a new name in the same pass of its loop, ms-swift's adapter renames, or the load's "
               "missing keys are checked, moco-v3's lincls), itself or through "
               "a project function (this file's, or an imported module's) that loads with `strict=False` or "
               "`_load_from_state_dict` and raises nothing for the keys it misses, as BEiT's and ConvNeXt's "
               "`utils.load_state_dict` (not buffers the model computes from its configuration, Swin's "
               "`relative_position_index` or `attn_mask`, nor a tensor the function has just filled with a constant; a non-strict load whose dict lost only such "
               "keys is information, as Swin's `load_pretrained`); MindSpore `load_param_into_net` whose result (the parameters it did not "
               "load) is discarded (a bare call, `_ = ...`, or a name never read afterwards) or only printed or "
               "logged (unless the function then lists the network's parameters and raises: a comparison by hand; not "
               "given the network's own `parameters_dict()` updated from a checkpoint, which holds every parameter; "
               "information when a loop filling the dict leaves out, printing them, the entries it rejects, RCNN's "
               "heads of another class count; a check of the second list only, `_, not_load = ...`, is told it reads the "
               "checkpoint's leftovers, not the network's), keys popped or deleted from the dict it loads, and `load_checkpoint` with "
               "`choice_func=`/`filter_prefix=`/`specify_prefix=` whose dict goes into a network (not resume counters read "
               "by name, nor a `filter_prefix=` that leaves out only optimizer and loop state, `learning_rate`, "
               "`global_step`, `moments`, ...), or with `net=` (it loads into the network "
               "and discards that list). MindSpore's `strict_load` only decides how names are matched (by "
               "suffix or exactly) and whether dtypes are converted: a parameter missing from the checkpoint is "
               "skipped either way. A load under an `if` that the options' defaults make false (a resume's `if "
               "opt.epoch != 0:`, `--epoch` defaulting to 0) is information, naming the condition, and so is every load "
               "of a script that trains nothing, itself or through project code (evaluation, inference, "
               "visualisation), or of a `hubconf.py` no project file imports (torch.hub entry points for the "
               "repository's users, swav's).")
    why = ("Parameters a partial load skips keep whatever the model's initialiser drew, so they differ between "
           "runs (and between frameworks) unless every generator is seeded identically, and the missing keys "
           "are easy to overlook. PyTorch's `load_state_dict(strict=False)` raises nothing and warns nothing: it "
           "only returns the missing and unexpected keys. MindSpore's `load_param_into_net` logs a warning "
           "naming the parameters it did not load (and returns them), but carries on: two log lines among many, "
           "not a failure. Two runs that should start from the same weights then start from different ones.")
    fix = ("Initialise both runs from one complete checkpoint and load it strictly (PyTorch: `strict=True`; "
           "MindSpore: `param_not_load, _ = load_param_into_net(net, params)` and `assert not param_not_load`); if "
           "some layers must be new (a fresh classification head), save the initialised model once and load that "
           "file in every run.")
    valid = (
        # Resume counters read by name (mindformers), and optimizer state left out (mindaudio): every weight loads.
        """\
import mindspore as ms


def resume(path, net):
    counters = ms.load_checkpoint(path, choice_func=lambda x: x in ["epoch_num", "step_num"])
    params = ms.load_checkpoint(path, filter_prefix=["learning_rate", "global_step", "moments"])
    not_loaded, _ = ms.load_param_into_net(net, params)
    assert not not_loaded
    return int(counters["epoch_num"])
""",
        """\
import torch

model = torch.nn.Linear(4, 2)
model.load_state_dict(torch.load("init.pt", map_location="cpu"))
model.load_state_dict(torch.load("init.pt"), strict=True)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
optimizer.load_state_dict(torch.load("optim.pt"))
""",
        # Renaming keys is not dropping them, and the load is strict.
        """\
import torch


def load(model, path):
    state = torch.load(path, map_location="cpu")
    for key in list(state):
        state[key.removeprefix("module.")] = state.pop(key)
    state.pop("n_averaged", None)  # a buffer the model does not have: strict load still checks the rest
    model.load_state_dict(state)
""",
        # json's `strict` is about control characters.
        """\
import json

import torch

with open("config.json") as handle:
    config = json.load(handle, strict=False)
model = torch.nn.Linear(config["in"], config["out"])
""",
        """\
import mindspore as ms

net = ms.nn.Dense(4, 2)
params = ms.load_checkpoint("net.ckpt")
not_loaded, _ = ms.load_param_into_net(net, params)
assert not not_loaded, f"parameters missing from net.ckpt: {not_loaded}"
""",
        # The network's own full dict, updated from a checkpoint (DiffuASR's `load_pretrained_model`): every
        # parameter is in it, so none is skipped.
        """\
import mindspore as ms


def load_pretrained(path, model):
    model_dict = model.parameters_dict()
    pretrained = ms.load_checkpoint(path)
    model_dict.update({k: v for k, v in pretrained.items() if k in model_dict})
    ms.load_param_into_net(model, model_dict)
    return model
""",
        # Unpacked and tested, or returned to the caller (mindformers' `load_param_into_net` wrappers).
        """\
from mindspore import load_param_into_net


def load(model, state_dict):
    msgs = load_param_into_net(model, state_dict)
    missing, unexpected = msgs
    if missing:
        raise ValueError(f"not loaded: {missing}")


def load_returning(model, state_dict):
    not_loaded = load_param_into_net(model, state_dict)
    return not_loaded
""",
        # mindediting's wrapper compares the network's parameter names with the checkpoint's itself, and raises.
        """\
import mindspore as ms


def load(model, path):
    params = ms.load_checkpoint(path)
    ms.load_param_into_net(model, params)
    names = [param.name for _, param in model.parameters_and_names()]
    missing = [name for name in names if name not in params]
    if missing:
        raise RuntimeError(f"not in the checkpoint: {missing}")
""",
        # ms-swift's dataset loaders: their `strict=False` skips malformed rows, and no model is loaded.
        """\
def build(self, dataset_meta, names):
    train, val = self.load_dataset(names, strict=False)
    return dataset_meta.loader(num_proc=4, strict=False), train, val
""",
        # A missing key fails the load (LLaMA-Factory's checkpoint restore, BLIP's `assert len(msg.missing_keys) ==
        # 0`): strict=False only lets unexpected keys through.
        """\
import torch


def restore(model, path):
    incompatible_keys = model.load_state_dict(torch.load(path), strict=False)
    if incompatible_keys.missing_keys:
        raise RuntimeError(f"missing keys: {incompatible_keys.missing_keys}")
    missing, unexpected = model.load_state_dict(torch.load(path), strict=False)
    assert len(missing) == 0, missing
""",
        # MindSpeed's override: a literal False where the caller's own `strict` is false is the caller's decision.
        """\
import torch


class Layer(torch.nn.Module):
    def load_state_dict(self, state_dict, strict=True):
        if strict:
            return super().load_state_dict(state_dict, strict=True)
        else:
            return super().load_state_dict(state_dict, strict=False)
""",
        # open_clip: `strict=` is a parameter that defaults to True, and the file's call passes True too.
        """\
import torch


def load_checkpoint(model, path, strict=True):
    state_dict = torch.load(path, map_location="cpu")
    if "position_ids" in state_dict and not hasattr(model, "text.position_ids"):
        del state_dict["text.position_ids"]
    return model.load_state_dict(state_dict, strict=strict)


load_checkpoint(torch.nn.Linear(4, 2), "clip.pt", strict=True)
""",
        # A project helper that raises on the keys it misses unless told `strict=False` (mmcv's `load_state_dict`).
        """\
import torch


def load_state_dict(module, state_dict, strict=True):
    missing_keys, unexpected_keys, errors = [], [], []
    module._load_from_state_dict(state_dict, "", {}, True, missing_keys, unexpected_keys, errors)
    if strict and missing_keys:
        raise RuntimeError(f"missing keys: {missing_keys}")


def finetune(model, path):
    checkpoint = torch.load(path, map_location="cpu")
    del checkpoint["head.weight"]
    load_state_dict(model, checkpoint)
""",
    )
    invalid = (
        # Listing the parameters for the optimizer, and a raise elsewhere, check nothing (mindspore models' VIGOR).
        Invalid("""\
import mindspore as ms


def main(args, net):
    params = ms.load_checkpoint(args.ckpt)
    ms.load_param_into_net(net, params)
    optimizer = ms.nn.Adam(net.trainable_params())
    if args.device not in ("Ascend", "GPU"):
        raise ValueError(args.device)
    return optimizer
""", lines=(6,)),
        # BEiT and ConvNeXt fine-tuning: the project's `load_state_dict` walks the modules with
        # `_load_from_state_dict`, which only collects the keys it misses, and prints them.
        Invalid("""\
import torch


def load_state_dict(model, state_dict, prefix=""):
    missing_keys, unexpected_keys, error_msgs = [], [], []

    def load(module, prefix=""):
        module._load_from_state_dict(state_dict, prefix, {}, True, missing_keys, unexpected_keys, error_msgs)
        for name, child in module._modules.items():
            load(child, prefix + name + ".")

    load(model, prefix=prefix)
    if missing_keys:
        print(f"Weights not initialized from pretrained model: {missing_keys}")


def finetune(model, path):
    checkpoint_model = torch.load(path, map_location="cpu")["model"]
    state_dict = model.state_dict()
    for k in ["head.weight", "head.bias"]:
        if k in checkpoint_model and checkpoint_model[k].shape != state_dict[k].shape:
            del checkpoint_model[k]
    load_state_dict(model, checkpoint_model, prefix="")
""", lines=(22,)),
        # dinov2's hub depthers: a head checkpoint loaded into a model whose backbone was built pretrained under
        # the same flag; trl's BEMA callback copying a live model's weights; trl's value head taking its share of
        # a whole model's dict (information).
        Invalid("""\
import torch


def make_depther(pretrained=True):
    backbone = make_backbone(pretrained=pretrained)
    model = Depther(backbone=backbone, head=Head())
    if pretrained:
        model.load_state_dict(torch.hub.load_state_dict_from_url(URL), strict=False)
    return model


class Callback:
    def on_step_end(self, model):
        self._update(model, self.running_model.state_dict())

    def _update(self, model, weights):
        kept = {}
        for key, value in weights.items():
            if not key.startswith("lora_"):
                kept[key] = value
        model.load_state_dict(kept, strict=False)


class ValueHead(torch.nn.Module):
    def post_init(self, state_dict):
        for k in list(state_dict.keys()):
            state_dict[k.replace("v_head.", "")] = state_dict.pop(k)
        self.v_head.load_state_dict(state_dict, strict=False)
""", lines=(8, 21, 28), severity="info"),
        # mmdet's SyncNormHook writes the rank-averaged norm buffers back into the model they were read from;
        # ultralytics' restore_qat loads the quantizer ranges that qat_state saved from a model's state_dict
        # (information).
        Invalid("""\
import torch


def get_norm_states(module):
    return {name: v for name, child in module.named_modules() for k, v in child.state_dict().items()}


def before_val_epoch(runner):
    module = runner.model
    norm_states = get_norm_states(module)
    norm_states = all_reduce_dict(norm_states, op="mean")
    module.load_state_dict(norm_states, strict=False)


def qat_state(model):
    return {"modelopt": modelopt_state(model),
            "ranges": {k: v for k, v in model.state_dict().items() if "quantizer" in k}}


def restore_qat(model, state):
    restore_from_modelopt_state(model, state["modelopt"])
    model.load_state_dict(state["ranges"], strict=False)
""", lines=(12, 22), severity="info"),
        # torchtitan's ModelWrapper: a Stateful over the model parts, whose own state_dict() gathers theirs; each
        # part takes its keys from the whole (information).
        Invalid("""\
import torch


class ModelWrapper:
    def state_dict(self):
        return {k: v for model in self.model for k, v in model.state_dict().items()}

    def load_state_dict(self, state_dict):
        for model in self.model:
            model.load_state_dict(state_dict, strict=False)
""", lines=(10,), severity="info"),
        # A dict from a function that is given the model but reads no state of it (a checkpoint found for it).
        Invalid("""\
import torch


def find_checkpoint(model):
    return torch.load(model.name + ".pt")


def finetune(model):
    weights = find_checkpoint(model)
    model.load_state_dict(weights, strict=False)
""", lines=(10,)),
        # LLaVA's builder: projector weights overlaid on a model `from_pretrained` loaded (information).
        Invalid("""\
import torch
from transformers import AutoModelForCausalLM


def load(model_base, projector):
    model = AutoModelForCausalLM.from_pretrained(model_base)
    weights = torch.load(projector, map_location="cpu")
    model.load_state_dict(weights, strict=False)
    return model
""", lines=(8,), severity="info"),
        # `strict=` from a parameter that defaults to False, which no call of the file changes.
        Invalid("""\
import torch


def restore(model, path, strict=False):
    model.load_state_dict(torch.load(path), strict=strict)


restore(torch.nn.Linear(4, 2), "init.pt")
""", lines=(5,)),
        # latent diffusion: either branch's keys (one finding for the line) are only printed, as MindSpore's are
        Invalid("""\
import torch


def init_from_ckpt(self, path, only_model=False):
    sd = torch.load(path, map_location="cpu")["state_dict"]
    missing, unexpected = self.load_state_dict(sd, strict=False) if not only_model else self.model.load_state_dict(
        sd, strict=False)
    if len(missing) > 0:
        print(f"Missing Keys: {missing}")
""", lines=(6,), severity="warning"),
        # ... and checked to be only the new head's: information; so is LAVIS's fallback after a strict load of the
        # same dict failed
        Invalid("""\
import logging

import torch


def init_from_ckpt(self, path, only_model=False):
    sd = torch.load(path, map_location="cpu")["state_dict"]
    missing, unexpected = self.load_state_dict(sd, strict=False) if not only_model else self.model.load_state_dict(
        sd, strict=False)
    if any(not key.startswith("head.") for key in missing):
        raise KeyError(missing)


def reload_best(model, path):
    checkpoint = torch.load(path, map_location="cpu")
    try:
        model.load_state_dict(checkpoint["model"])
    except RuntimeError:
        logging.warning("key mismatch: loading with strict=False")
        model.load_state_dict(checkpoint["model"], strict=False)
    return model
""", lines=(8, 20), severity="info"),
        # mindrlhf's PPO trainer: the list is only printed, and the value head stays random.
        Invalid("""\
import mindspore


def load(model, path):
    param_dict = mindspore.load_checkpoint(path)
    param_not_load, ckpt_not_load = mindspore.load_param_into_net(model, param_dict)
    print(f"param not load: {param_not_load}", flush=True)
""", lines=(6,)),
        Invalid("""\
import torch
import torchvision

model = torchvision.models.resnet50(num_classes=10)
state = torch.load("resnet50.pth", map_location="cpu")
missing, unexpected = model.load_state_dict(state, strict=False)
""", lines=(6,)),
        # The MAE fine-tuning pattern: drop the head, then load the rest non-strictly.
        Invalid("""\
import torch


def load_pretrained(model, path):
    checkpoint_model = torch.load(path, map_location="cpu")["model"]
    state_dict = model.state_dict()
    for k in ["head.weight", "head.bias"]:
        if k in checkpoint_model and checkpoint_model[k].shape != state_dict[k].shape:
            del checkpoint_model[k]
    checkpoint_model.pop("fc_norm.weight", None)
    msg = model.load_state_dict(checkpoint_model, strict=False)
    print(msg)
""", lines=(9, 10, 11)),
        # torchtune's LoRA recipes: the keys missing are checked to be only the new adapter weights
        Invalid("""\
import torch


def setup(model, state_dict):
    base_missing, base_unexpected = model.load_state_dict(state_dict, strict=False)
    validate_missing_and_unexpected_for_lora(base_missing=base_missing, base_unexpected=base_unexpected)
""", lines=(5,), severity="info"),
        Invalid("""\
from lightning import LightningModule


class Classifier(LightningModule):
    pass


model = Classifier.load_from_checkpoint("last.ckpt", strict=False)
""", lines=(8,)),
        Invalid("""\
import mindspore as ms
from mindspore import load_checkpoint, load_param_into_net as load_into

net = ms.nn.Dense(4, 2)
params = load_checkpoint("net.ckpt", choice_func=lambda name: not name.startswith("head"))
load_into(net, params)
ms.load_checkpoint("net.ckpt", net=net, strict_load=True)
""", lines=(5, 6, 7)),
        # Assigned, but never looked at (mindspore model zoo eval scripts).
        Invalid("""\
import mindspore as ms


def restore(net, path):
    _ = ms.load_param_into_net(net, ms.load_checkpoint(path))
    not_loaded, _ = ms.load_param_into_net(net, ms.load_checkpoint(path))
    return net
""", lines=(5, 6)),
        # The second list checked, the first discarded (mindrl's agent/trainer.py): the message says so.
        Invalid("""\
from mindspore import load_checkpoint, load_param_into_net


def restore(net, path):
    _, not_load = load_param_into_net(net, load_checkpoint(path))
    if not_load:
        raise RuntimeError("Load params into net failed!")
""", lines=(5,)),
        # Heads whose shape does not fit the classes left out with a printed warning (RCNN's train.py): info.
        Invalid("""\
import mindspore as ms


def finetune(network, path, classes):
    params = ms.load_checkpoint(path)
    kept = {}
    for name, data in params.items():
        if "bbox_cls" in name and data.shape[0] != classes + 1:
            print(f"[WARNING] param {name}'s shape {data.shape} does not match {classes} classes")
            continue
        kept[name] = data
    ms.load_param_into_net(network, kept)
""", lines=(12,), severity="info"),
        # `strict_load=True` matches names exactly; a parameter missing from the dict is still skipped.
        Invalid("""\
import mindspore as ms


def restore(net, path):
    params = ms.load_checkpoint(path)
    params.pop("head.bias")
    ms.load_param_into_net(net, params, strict_load=True)
""", lines=(6, 7)),
        # A resume that runs only when `--epoch` is given (MindSpore-GAN's cyclegan.py): info, naming the condition.
        Invalid("""\
import argparse

import mindspore as ms

parser = argparse.ArgumentParser()
parser.add_argument("--epoch", type=int, default=0)
opt = parser.parse_args()
net = ms.nn.Dense(4, 2)
if opt.epoch != 0:
    # Load the models saved at that epoch
    ms.load_checkpoint(f"saved_models/net_{opt.epoch}.ckpt", net)
    ms.load_checkpoint(f"saved_models/head_{opt.epoch}.ckpt", net)
    ms.load_checkpoint(f"saved_models/tail_{opt.epoch}.ckpt", net)
    ms.load_checkpoint(f"saved_models/neck_{opt.epoch}.ckpt", net)
""", lines=(11, 12, 13, 14), severity="info"),
        # A script that trains nothing (mindpose's tools/visual/visual_pred_heatmap_ae.py draws heatmaps): info.
        Invalid("""\
import mindspore as ms


def main(path, images):
    net = ms.nn.Dense(4, 2)
    ms.load_checkpoint(path, net)
    for image in images[:10]:
        print(net(image))


if __name__ == "__main__":
    main("net.ckpt", [])
""", lines=(6,), severity="info"),
        # Swin's load_pretrained: the only keys it leaves out are buffers the model computes and a head it has just
        # filled with zeros, so strict=False is for those (information).
        Invalid("""\
import torch


def load_pretrained(model, path):
    state_dict = torch.load(path, map_location="cpu")["model"]
    for k in [k for k in state_dict.keys() if "relative_position_index" in k]:
        del state_dict[k]
    torch.nn.init.constant_(model.head.weight, 0.)
    del state_dict["head.weight"]
    model.load_state_dict(state_dict, strict=False)
""", lines=(10,), severity="info"),
    )

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.removed: dict[tuple[int, str], list[Site]] = {}  # (function id, dict name) -> removal sites
        self.recomputed: set[tuple[int, str]] = set()  # (function id, dict name): keys made again deleted from it
        self.loads: list[_Load] = []  # torch loads, judged in `finish`
        self._local: project.LocalImports | None = None  # the file's imports of project modules, read once
        self._functions: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = {}  # the file's top-level functions
        self.defaults = LeftAtDefault(ctx)

    def visit_Delete(self, node: ast.Delete) -> None:
        for target in node.targets:
            if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):
                if self._reinitialised(target.slice):
                    self.recomputed.add((self._scope(), target.value.id))
                else:
                    self._removed(target.value.id, node, target.slice)

    def _reinitialised(self, key: ast.expr) -> bool:
        """A deleted key the model makes again without drawing: a buffer computed from its configuration (Swin's
        `relative_position_index`, picked by `"relative_position_index" in k`), or a tensor the function has just
        filled with a constant (`nn.init.constant_(model.head.weight, 0.)` before `del state_dict["head.weight"]`)."""
        function = self._function()
        literal = constant(key)
        if isinstance(literal, str):
            names = {literal}
        elif isinstance(key, ast.Name) and function is not None:
            names = self._key_filters(key.id, function)
        else:
            return False
        if names and all(name.rpartition(".")[2] in catalogue.RECOMPUTED_BUFFERS for name in names):
            return True
        if not isinstance(literal, str) or function is None:
            return False
        filled = {ast.unparse(tensor) for call in ast.walk(function) if isinstance(call, ast.Call)
                  and self.ctx.call_qualname(call) in catalogue.CONSTANT_INITS
                  and (tensor := argument(call, 0, "tensor")) is not None}
        return any(name.endswith("." + literal) for name in filled)

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        if name == "pop" and isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            if self.ctx.ancestors and isinstance(self.ctx.ancestors[-1], ast.Expr):  # result discarded
                self._removed(func.value.id, node, argument(node, 0, "key"))
            return
        if isinstance(func, ast.Attribute) and "load" not in name:
            return  # cheap filter; plain names may be aliases (`load_param_into_net as put`)
        qualified = self.ctx.call_qualname(node)
        if qualified in catalogue.MINDSPORE_LOAD_PARAM:
            self._check_load_param(node)
        elif qualified in catalogue.MINDSPORE_LOAD_CHECKPOINT:
            self._check_load_checkpoint(node)
        elif "load" in name and qualified is None and not self._is_parser(func) and not _reads_data(func):
            self._check_torch_load(node, name)

    def _check_torch_load(self, node: ast.Call, name: str) -> None:
        """Note what the load shows here (the traversal's view: its function, the keys deleted before it, whether
        its result is checked); whether it is non-strict needs the whole file's defaults, so `finish` decides."""
        helper = self._project_helper(node)
        strict = keyword(node, "strict")
        if strict is None and name == "load_state_dict" and len(node.args) > 1 and helper is None:
            strict = node.args[1]
        if strict is not None and constant(strict) is False and self._strict_refused(node):
            return  # the caller asked for a non-strict load, and is reported where it does
        if helper is not None:
            loaded = [*node.args, *(kw.value for kw in node.keywords)]
        else:
            loaded = [argument(node, 0, "state_dict")] if name == "load_state_dict" and strict is not None else []
        checked = self._result_checked()
        if checked == "refused":
            self._take_removed(loaded)  # a key it lost fails the load
            return
        removed = self._take_removed(loaded)
        recomputed = not removed and any(isinstance(item, ast.Name) and (self._scope(), item.id) in self.recomputed
                                         for item in loaded)
        self.loads.append(_Load(node, name, helper, strict, self._function(), self._overlay(node, name, bool(checked)),
                                checked, self._fallback(node), removed, recomputed))

    def _overlay(self, node: ast.Call, name: str, checked: bool) -> str | None:
        """The information message for a load into a model that already holds the weights it does not replace:
        built `from_pretrained`, or from parts built pretrained under the flag this load's `if` needs, or given
        another live model's weights (unless the keys it returns are checked: a new model given a base model's
        weights, torchtune's and litgpt's LoRA tests, whose missed keys keep their random initialisation); or a
        submodule given its share of a whole model's dict."""
        if self._pretrained(node.func):
            return OVERLAY.format(call=name)
        flag = self._pretrained_parts(node)
        if flag is not None:
            return PRETRAINED_PARTS.format(call=name, flag=flag)
        part = self._own_share(node)
        if part is not None:
            return SHARE.format(call=name, part=part)
        parts = self._parts_share(node)
        if parts is not None:
            return PARTS_SHARE.format(call=name, parts=parts)
        loaded = argument(node, 0, "state_dict")
        if name != "load_state_dict" or loaded is None or checked:
            return None
        if self._live_weights(loaded, self._function(), 3):
            return LIVE_WEIGHTS.format(call=name)
        model = node.func.value if isinstance(node.func, ast.Attribute) else None
        if model is not None and self._own_state(loaded, ast.unparse(model), node.lineno, 3):
            return OWN_STATE.format(call=name, model=ast.unparse(model))
        return SAVED_SUBSET.format(call=name, key=ast.unparse(loaded)) if self._saved_subset(loaded) else None

    def _own_state(self, value: ast.expr, model: str, before: int, depth: int) -> bool:
        """Whether `value` is read from `model` itself: a name every assignment before the load binds to a call of
        `model` and such names (and constants) only, at least one of them `model` given to a function of this file
        that reads its state (`get_norm_states(module)` then `all_reduce_dict(norm_states, op='mean')`)."""
        if depth == 0 or not isinstance(value, ast.Name):
            return False
        function = self._function_or_module()
        stores = [node.value for node in ast.walk(function) if isinstance(node, ast.Assign) and node.lineno < before
                  and any(isinstance(t, ast.Name) and t.id == value.id for t in node.targets)]
        if not stores or not all(isinstance(store, ast.Call) for store in stores):
            return False
        for store in stores:
            given = [*store.args, *(kw.value for kw in store.keywords)]
            if any(isinstance(arg, ast.Starred) for arg in store.args) or any(kw.arg is None for kw in store.keywords):
                return False
            own = [arg for arg in given if ast.unparse(arg) == model]
            derived = [arg for arg in given if arg not in own and not isinstance(arg, ast.Constant)]
            if own and not self._reads_state(store.func):
                return False
            if not own and not derived:
                return False
            if not all(self._own_state(arg, model, store.lineno, depth - 1) for arg in derived):
                return False
        return True

    def _reads_state(self, func: ast.expr) -> bool:
        """Whether `func` names a function of this file that reads a module's state (`.state_dict()`, ...)."""
        if not isinstance(func, ast.Name):
            return False
        defined = next((n for n in self.ctx.tree.body if isinstance(n, FUNCTION_TYPES) and n.name == func.id), None)
        return defined is not None and any(
            isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr in STATE_READERS
            for call in ast.walk(defined))

    def _saved_subset(self, loaded: ast.expr) -> bool:
        """Whether `loaded` is `state["key"]`, and a dict this file builds stores under that key a comprehension
        over a model's `state_dict().items()` that selects keys (`{k: v for k, v in model.state_dict().items() if
        "quantizer" in k}`)."""
        key = constant(loaded.slice) if isinstance(loaded, ast.Subscript) else None
        if not isinstance(key, str):
            return False
        return any(isinstance(node, ast.Dict) and any(constant(k) == key and isinstance(v, ast.DictComp)
                                                      and _selects_state(v) for k, v in zip(node.keys, node.values,
                                                                                            strict=True))
                   for node in ast.walk(self.ctx.tree))

    def _pretrained_parts(self, node: ast.Call) -> str | None:
        """`model.load_state_dict(head, strict=False)` under `if pretrained:`, where `model` was last built from a
        call given `pretrained=pretrained`, or from a part so built (dinov2's `backbone = _make_dinov2_model(...,
        pretrained=pretrained)` then `DepthEncoderDecoder(backbone=backbone, ...)`): the flag's text, else None."""
        func = node.func
        if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)):
            return None
        path = [*self.ctx.ancestors, node]
        tests = {ast.dump(parent.test) for parent, child in zip(path[:-1], path[1:], strict=True)
                 if isinstance(parent, ast.If) and any(child is s for s in parent.body)}
        built = self._last_assigned(func.value.id, node.lineno)
        if not isinstance(built, ast.Call):
            return None
        parts = [built, *(self._last_assigned(a.id, node.lineno) for a in [*built.args, *(k.value for k in built.keywords)]
                          if isinstance(a, ast.Name))]
        flags = [keyword(part, "pretrained") for part in parts if isinstance(part, ast.Call)]
        return next((ast.unparse(flag) for flag in flags if flag is not None and ast.dump(flag) in tests), None)

    def _last_assigned(self, name: str, before: int) -> ast.expr | None:
        """The value last assigned to `name` before line `before` in the function around the call (or the module)."""
        assigned = [node for node in ast.walk(self._function_or_module()) if isinstance(node, ast.Assign)
                    and node.lineno < before and any(isinstance(t, ast.Name) and t.id == name for t in node.targets)]
        return max(assigned, key=lambda node: node.lineno).value if assigned else None

    def _own_share(self, node: ast.Call) -> str | None:
        """`self.v_head.load_state_dict(state_dict, strict=False)` in a function that renames the dict's keys from
        `v_head.` (trl's value head `post_init`: a whole model's state dict): `v_head`, else None."""
        func = node.func
        target = func.value if isinstance(func, ast.Attribute) else None
        if not (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self"):
            return None
        prefix = f"{target.attr}."
        renames = any(isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "replace"
                      and len(call.args) == 2 and constant(call.args[0]) == prefix and constant(call.args[1]) == ""
                      for call in ast.walk(self._function_or_module()))
        return target.attr if renames else None

    def _parts_share(self, node: ast.Call) -> str | None:
        """`for model in self.model: model.load_state_dict(state_dict, strict=False)` in the `load_state_dict(self,
        state_dict)` method of a class whose methods gather a state dict from `.state_dict()` of each item of that
        same `self.model` (torchtitan's `ModelWrapper`, a Stateful over the pipeline's model parts): `self.model`,
        else None."""
        function, loaded = self._function(), argument(node, 0, "state_dict")
        owner = next((a for a in reversed(self.ctx.ancestors) if isinstance(a, ast.ClassDef)), None)
        if owner is None or function is None or function.name != "load_state_dict" or not isinstance(loaded, ast.Name) \
                or loaded.id not in {a.arg for a in function.args.args[1:]}:
            return None
        receiver = ast.unparse(node.func.value) if isinstance(node.func, ast.Attribute) else None
        loop = next((a for a in reversed(self.ctx.ancestors) if isinstance(a, ast.For) and isinstance(a.target, ast.Name)
                     and a.target.id == receiver), None)
        if loop is None or not (isinstance(loop.iter, ast.Attribute) and ast.unparse(loop.iter.value) == "self"):
            return None
        parts = ast.unparse(loop.iter)
        gathers = any(_reads_each_state(walk, parts) for method in owner.body
                      if isinstance(method, FUNCTION_TYPES) and method is not function for walk in ast.walk(method))
        return parts if gathers else None

    def _live_weights(self, value: ast.expr, function: ast.AST | None, depth: int) -> bool:
        """Whether a loaded dict holds a live model's weights: its `state_dict()`, a name bound to one or to a dict
        filled from one's `.items()` (trl's BEMA callback, leaving adapter keys out), or a parameter every call in
        the file passes such a dict (`depth` steps)."""
        if isinstance(value, ast.Call):
            return isinstance(value.func, ast.Attribute) and value.func.attr == "state_dict" and not value.args
        if depth == 0 or not isinstance(value, ast.Name) or not isinstance(function, FUNCTION_TYPES):
            return False
        stores = [node.value for node in ast.walk(function) if isinstance(node, ast.Assign)
                  and any(isinstance(t, ast.Name) and t.id == value.id for t in node.targets)]
        if stores and all(isinstance(store, ast.Dict) and not store.keys for store in stores):
            loops = [loop for loop in ast.walk(function) if isinstance(loop, ast.For) and any(
                isinstance(n, ast.Subscript) and isinstance(n.ctx, ast.Store) and isinstance(n.value, ast.Name)
                and n.value.id == value.id for n in ast.walk(loop))]
            return bool(loops) and all(
                isinstance(loop.iter, ast.Call) and isinstance(loop.iter.func, ast.Attribute)
                and loop.iter.func.attr == "items" and self._live_weights(loop.iter.func.value, function, depth - 1)
                for loop in loops)
        if stores:
            return all(self._live_weights(store, function, depth - 1) for store in stores)
        passed = self.defaults.passed(function, value.id)
        return bool(passed) and all(given is not None and self._live_weights(given, caller, depth - 1)
                                    for given, caller in passed)

    def _fallback(self, node: ast.Call) -> bool:
        """Whether the load runs in an `except` handler of a `try` that first loads the same dict with the same
        method strictly (LAVIS's best-model reload: `try: model.load_state_dict(ckpt["model"])` `except
        RuntimeError: model.load_state_dict(ckpt["model"], strict=False)`)."""
        handler = next((a for a in reversed(self.ctx.ancestors) if isinstance(a, ast.ExceptHandler)), None)
        attempt = next((a for a in reversed(self.ctx.ancestors) if isinstance(a, ast.Try)
                        and any(h is handler for h in a.handlers)), None)
        if attempt is None or not node.args:
            return False
        loaded, method = ast.dump(node.args[0]), ast.dump(node.func)
        return any(isinstance(call, ast.Call) and len(call.args) == 1 and ast.dump(call.func) == method
                   and ast.dump(call.args[0]) == loaded and _strict(keyword(call, "strict"))
                   for statement in attempt.body for call in ast.walk(statement))

    def _strict_refused(self, node: ast.Call) -> bool:
        """Whether the load runs in a branch where the function's own `strict` parameter is false: MindSpeed's
        `def load_state_dict(self, state_dict, strict=True)` ending in `else: return super().load_state_dict(
        state_dict, strict=False)`."""
        function = self._function()
        if function is None:
            return False
        parameters = [*function.args.posonlyargs, *function.args.args, *function.args.kwonlyargs]
        switches = {parameter.arg for parameter in parameters if "strict" in parameter.arg}
        path = [*self.ctx.ancestors, node]
        for parent, child in zip(path[:-1], path[1:], strict=True):
            if not isinstance(parent, ast.If):
                continue
            test, negated = parent.test, False
            if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
                test, negated = test.operand, True
            if isinstance(test, ast.Name) and test.id in switches and (child in parent.orelse) != negated:
                return True
        return False

    def finish(self) -> None:
        for load in self.loads:
            self._judge_torch_load(load)
        seen: set[tuple[int, str]] = set()  # one finding per line: a conditional expression picks between two loads
        kept = []
        for report in self.reports:
            key = (report.node.lineno, report.message)
            if key not in seen:
                seen.add(key)
                kept.append(report)
        self.reports = kept
        self._settle_modes()
        if any(report.severity != "info" for report in self.reports):
            note = HUB_NOTE if self._hub_entry() else NO_TRAINING_NOTE if self._trains_nothing() else None
            for report in self.reports:
                if note and report.severity != "info":
                    report.severity = "info"
                    report.message += note

    def _hub_entry(self) -> bool:
        """Whether the file is torch.hub's `hubconf.py`, which no project file imports: its functions build models
        for the users of `torch.hub.load` (swav's `resnet50(pretrained=True)`), not for the project's training."""
        return Path(self.ctx.path).name == "hubconf.py" and not any(project.resolved_importers(self.ctx.path))

    def _trains_nothing(self) -> bool:
        """Whether the file is a script that trains nothing, itself or through project code (mindpose's
        tools/visual/visual_pred_heatmap_ae.py loads a checkpoint to draw heatmaps of ten images)."""
        if not self.ctx.is_entry_script() or any(True for _ in project.resolved_importers(self.ctx.path)):
            return False
        facts = seeding.analyse(self.ctx)
        return not facts.trains and not facts.training_modules(seeding.trusts_none)

    def _settle_modes(self) -> None:
        """A load under an `if` that the options' defaults make false is info, naming the condition: the resume of
        MindSpore-GAN's `if opt.epoch != 0:` (`--epoch` defaults to 0) loads nothing in the run as written."""
        reported = {id(report.node): report for report in self.reports if report.severity != "info"}
        if not reported:
            return
        for node, guards, _ in conditions.walk([self.ctx.tree], (ast.Call, ast.Delete)):
            report = reported.get(id(node))
            needed = next(filter(None, (opt_in.off_by_default(self.ctx, guard) for guard in guards)), None) \
                if report is not None else None
            if needed is not None:
                report.severity = "info"
                report.message += f" (only when `{conditions.condition_text(needed)}`: off with the default arguments)"

    def _judge_torch_load(self, load: _Load) -> None:
        # a caller elsewhere that passes `strict=False` is reported where it does
        value = None if load.strict is None else opt_in.switch_default(self.ctx, load.strict, load.function,
                                                                       callers_elsewhere=False)
        if value is False:
            if load.overlay:
                self.report(load.node, load.overlay, "info")
            elif load.checked or load.fallback or load.recomputed:
                note = CHECKED_NOTE if load.checked else FALLBACK_NOTE if load.fallback else RECOMPUTED_NOTE
                self.report(load.node, NON_STRICT.format(call=load.name) + note, "info")
            else:
                self.report(load.node, NON_STRICT.format(call=load.name))
        if load.checked == "checked":
            return  # the keys it misses are checked here, the removed ones among them: its finding covers them
        if load.helper is not None:
            if self._loads_partially(load.helper, load.node):
                self._report_removed(load.removed, HELPER_NOTE.format(helper=ast.unparse(load.node.func)))
        elif load.strict is not None and value is not True:
            self._report_removed(load.removed, overlay=load.overlay is not None)

    def _project_helper(self, node: ast.Call) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
        """The project function a call runs: one of this file's, or of a project module it imports (ConvNeXt's
        `utils.load_state_dict(model, checkpoint_model)`)."""
        if self._local is None:
            project.find_module.cache_clear()  # module lookups are cached for one file's analysis only
            self._local = project.local_imports(project.import_statements(self.ctx.tree.body))
            self._functions = {n.name: n for n in self.ctx.tree.body if isinstance(n, FUNCTION_TYPES)}
        return pinning.called_function(node, self._functions, project.file_folder(self.ctx.path), self._local)[0]

    def _loads_partially(self, helper: ast.FunctionDef | ast.AsyncFunctionDef, call: ast.Call) -> bool:
        """Whether a project helper, given `call`'s arguments, loads a state dict non-strictly and raises nothing:
        it calls `load_state_dict(..., strict=False)` or `_load_from_state_dict` (which only collects the keys it
        misses), and no `raise` or `assert` of it runs with those arguments (mmcv's `if strict: raise ...`)."""
        values = dict(conditions.bind_arguments(helper, call, seeding.analyse(self.ctx).lookup))
        lookup = conditions.parameter_lookup(values, conditions.no_lookup)
        if not any(isinstance(node, ast.Call) and _non_strict(node, lookup) for node in ast.walk(helper)):
            return False
        return all(any(conditions.truth(test, lookup) is (not wanted) for test, wanted in guards)
                   for _, guards, _ in conditions.walk([helper], (ast.Raise, ast.Assert)))

    def _pretrained(self, func: ast.expr) -> bool:
        """Whether the model a `model.load_state_dict` call loads into was last assigned, before the call in its
        function, a `from_pretrained(...)` (LLaVA's builder overlays projector weights on such a model)."""
        if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)):
            return False
        last = self._last_assigned(func.value.id, func.lineno)
        return (isinstance(last, ast.Call) and isinstance(last.func, ast.Attribute)
                and last.func.attr in catalogue.PRETRAINED_CONSTRUCTORS)

    def _check_load_param(self, node: ast.Call) -> None:
        assigned = bool(self.ctx.ancestors) and isinstance(self.ctx.ancestors[-1], ast.Assign)
        unchecked = self._result_dropped() or assigned and not self._result_checked()  # never looked at, or printed
        if unchecked and not self._checked_by_hand(node) and not self._net_own_dict(node):
            holder = self._result_holder()
            second = self._checked(holder, self._function_or_module(), True, frozenset({1}))
            if second:
                self.report(node, MS_WRONG_LIST)
            elif self._drops_reported(argument(node, 1, "parameter_dict")):
                self.report(node, MS_UNCHECKED.format(call="load_param_into_net") + REPORTED_DROPS, "info")
            else:
                self.report(node, MS_UNCHECKED.format(call="load_param_into_net"))
        self._report_removed(self._take_removed([argument(node, 1, "parameter_dict")]))

    def _net_own_dict(self, node: ast.Call) -> bool:
        """Whether the dict given is the network's own, last assigned its `parameters_dict()` (then updated from a
        checkpoint: DiffuASR's `load_pretrained_model`): it holds every parameter of the network, so none is skipped."""
        net, loaded = argument(node, 0, "net"), argument(node, 1, "parameter_dict")
        value = self._last_assigned(loaded.id, node.lineno) if isinstance(loaded, ast.Name) and net else None
        return (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and not value.args
                and value.func.attr in NET_OWN_DICTS and ast.dump(value.func.value) == ast.dump(net))

    def _drops_reported(self, loaded: ast.expr | None) -> bool:
        """Whether the dict is filled in a loop that leaves out, after printing or logging them, the entries it
        rejects (RCNN's train.py: `continue` after a warning for a head whose shape does not fit the classes)."""
        return isinstance(loaded, ast.Name) and any(
            isinstance(loop, LOOP_TYPES) and any(
                isinstance(store, ast.Subscript) and isinstance(store.value, ast.Name) and store.value.id == loaded.id
                and isinstance(store.ctx, ast.Store) for store in ast.walk(loop))
            and any(isinstance(skip, ast.If) and isinstance(skip.body[-1], ast.Continue) and len(skip.body) > 1
                    and _only_reports(skip.body[:-1]) for skip in ast.walk(loop))
            for loop in ast.walk(self._function_or_module()))

    def _checked_by_hand(self, node: ast.Call) -> bool:
        """Whether the function compares the network's parameter names with the checkpoint's itself after the load
        and raises (mindediting's wrapper): it lists the network's parameters, reads the loaded dict again, tests
        names with `in`/`not in`, and raises."""
        net, loaded = argument(node, 0, "net"), argument(node, 1, "parameter_dict")
        if net is None or not isinstance(loaded, ast.Name):
            return False
        later = [inner for inner in ast.walk(self._function_or_module()) if getattr(inner, "lineno", 0) > node.lineno]
        lists = any(isinstance(inner, ast.Call) and isinstance(inner.func, ast.Attribute)
                    and inner.func.attr in PARAMETER_LISTINGS and ast.dump(inner.func.value) == ast.dump(net)
                    for inner in later)
        reads = any(isinstance(inner, ast.Name) and inner.id == loaded.id for inner in later)
        tests = any(isinstance(inner, ast.Compare) and any(isinstance(op, (ast.In, ast.NotIn)) for op in inner.ops)
                    for inner in later)
        return lists and reads and tests and any(isinstance(inner, ast.Raise) for inner in later)

    def _result_checked(self) -> str | None:
        """Whether the keys the call being visited returns are checked: the names it is assigned to (or that
        those are unpacked into) are read in an `assert`, an `if` test (whose branches do more than print or log),
        a `while` test, passed to a call that does not
        only print or log them (torchtune's `validate_missing_and_unexpected_for_lora(base_missing=...)`), or
        returned to the caller: one that checks them, where the file's own calls of its function are all there is
        to see (BLIP's `blip_nlvr` only prints the `msg` that `load_checkpoint` returns), else any. "refused" when
        a missing key fails the load (`if result.missing_keys: raise ...`, `assert len(missing) == 0`; through the
        callers: all of them, and no other file can call it), "checked" when the keys are otherwise looked at here,
        "returned" when only its callers look at them, None when nothing does."""
        return self._checked(self._result_holder(), self._function_or_module(), follow_returns=True)

    def _checked(self, holder: ast.AST | None, scope: ast.AST, follow_returns: bool,
                 positions: frozenset[int] | None = None) -> str | None:
        """How the names `holder` (an assignment) binds, only those at `positions` of a tuple target when given,
        are checked later in `scope` (see `_result_checked`)."""
        if not (isinstance(holder, ast.Assign) and len(holder.targets) == 1):
            return None
        target = holder.targets[0]
        if positions is not None and isinstance(target, ast.Tuple):
            target = ast.Tuple(elts=[item for index, item in enumerate(target.elts) if index in positions])
        names = {n.id for n in ast.walk(target) if isinstance(n, ast.Name) and n.id != "_"}
        whole, missing = _split_keys(target, names, positions is None)
        for node in ast.walk(scope):  # `missing, unexpected = msgs`: those names hold them too
            if (isinstance(node, ast.Assign) and isinstance(node.value, ast.Name) and node.value.id in whole
                    and node.lineno >= holder.end_lineno and len(node.targets) == 1):
                names |= {n.id for n in ast.walk(node.targets[0]) if isinstance(n, ast.Name)}
                more_whole, more_missing = _split_keys(node.targets[0], names, True)
                whole, missing = whole | more_whole, missing | more_missing
        found = None
        shown = {id(inner) for node in ast.walk(scope) if isinstance(node, ast.Call)
                 and self.ctx.callee_name(node) in REPORTING_CALLS for inner in ast.walk(node)}
        for node in ast.walk(scope):
            if isinstance(node, ast.If) and _only_reports(node.body) and _only_reports(node.orelse) or id(node) in shown:
                continue  # `if len(missing) > 0: print(missing)` (`', '.join(missing)` in it too) shows them
            returned = isinstance(node, (ast.Return, ast.Yield)) and node.value is not None
            if isinstance(node, (ast.Assert, ast.If, ast.While)):
                tested = node.test
            elif returned:
                tested = node.value  # handed to the caller, who may check them
            elif isinstance(node, ast.Call) and self.ctx.callee_name(node) not in REPORTING_CALLS:
                tested = ast.Tuple(elts=[*node.args, *(kw.value for kw in node.keywords)])
            else:
                continue
            if getattr(node, "lineno", 0) < holder.end_lineno or not any(
                    isinstance(n, ast.Name) and n.id in names for n in ast.walk(tested)):
                continue
            if _refuses_missing(node, whole, missing):
                return "refused"
            if not (returned and follow_returns):
                found = "checked"
            elif (by_callers := self._callers_check(scope, tested, names)) == "refused":
                return by_callers
            else:
                found = found or by_callers
        return found

    def _callers_check(self, function: ast.AST, returned: ast.expr, names: set[str]) -> str | None:
        """How the callers of a module-level `function` returning the keys in `returned` check them: "refused"
        when every call in the file fails on a missing key and no other file can call it (BLIP's `load_checkpoint`
        is also called by blip_vqa.py, which does not check), "returned" when any call checks them, or when the file
        calls it nowhere (its callers are elsewhere, unseen), None when no call does."""
        tree = self.ctx.tree
        if function not in tree.body:
            return "returned"
        parents = {id(child): node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
        calls = [node for node in ast.walk(tree) if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                 and node.func.id == getattr(function, "name", None)]
        positions = frozenset(index for index, item in enumerate(returned.elts) if any(
            isinstance(n, ast.Name) and n.id in names for n in ast.walk(item))) if isinstance(returned, ast.Tuple) else None
        checks = []
        for call in calls:
            holder, scope = parents.get(id(call)), call
            while scope is not tree and not isinstance(scope, FUNCTION_TYPES):
                scope = parents[id(scope)]
            checks.append(self._checked(holder, scope, follow_returns=False, positions=positions))
        if calls and all(check == "refused" for check in checks) and not any(
                project.function_importers(self.ctx.path, function.name)):
            return "refused"
        return "returned" if any(checks) or not calls else None

    def _result_dropped(self) -> bool:
        """Whether the call being visited has its result (or the first item of it) thrown away: a bare
        call, `_ = ...`, `_, _ = ...`, or a name assigned and never read after in its function."""
        parent = self._result_holder()
        if isinstance(parent, ast.Expr):
            return True
        if not (isinstance(parent, ast.Assign) and len(parent.targets) == 1):
            return False
        target = parent.targets[0]
        if isinstance(target, (ast.Tuple, ast.List)) and target.elts:
            target = target.elts[0]
        if not isinstance(target, ast.Name):
            return False
        if target.id == "_":
            return True
        scope = self._function_or_module()
        return not any(isinstance(n, ast.Name) and n.id == target.id and isinstance(n.ctx, ast.Load)
                       and n.lineno >= parent.end_lineno for n in ast.walk(scope))

    def _result_holder(self) -> ast.AST | None:
        """The node that takes the result of the call being visited, through the conditional expressions it is a
        branch of (latent diffusion's `missing, unexpected = self.load_state_dict(sd, strict=False) if not
        only_model else self.model.load_state_dict(sd, strict=False)`)."""
        ancestors = self.ctx.ancestors
        index = len(ancestors) - 1
        while index > 0 and isinstance(ancestors[index], ast.IfExp):
            index -= 1
        return ancestors[index] if index >= 0 else None

    def _function_or_module(self) -> ast.AST:
        """The function around the call being visited, else the module."""
        return self._function() or self.ctx.tree

    def _function(self) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
        """The function around the node being visited, if any."""
        return next((n for n in reversed(self.ctx.ancestors) if isinstance(n, FUNCTION_TYPES)), None)

    def _check_load_checkpoint(self, node: ast.Call) -> None:
        into_net = argument(node, 1, "net") is not None
        for arg in catalogue.MINDSPORE_CHECKPOINT_FILTERS:
            value = keyword(node, arg)
            if value is None or constant(value) is None or _training_state_only(arg, value):
                continue
            if into_net or self._loaded_into_net():
                self.report(node, MS_FILTERED.format(arg=arg))
            return  # a filtered read kept as a dict (resume counters): no weights loaded
        if into_net:
            self.report(node, MS_UNCHECKED.format(call="load_checkpoint(..., net=...)"))

    def _loaded_into_net(self) -> bool:
        """Whether the dict the call being visited returns goes into a network: given straight to a call, or the
        name it is assigned to passed to `load_param_into_net` (or any call but a print) later in its function."""
        parent = self.ctx.ancestors[-1] if self.ctx.ancestors else None
        if not isinstance(parent, ast.Assign):
            return True
        names = {n.id for t in parent.targets for n in ast.walk(t) if isinstance(n, ast.Name)}
        return any(isinstance(node, ast.Call) and self.ctx.callee_name(node) not in REPORTING_CALLS
                   and node.lineno >= parent.end_lineno
                   and any(isinstance(a, ast.Name) and a.id in names for a in (*node.args, *(k.value for k in node.keywords)))
                   for node in ast.walk(self._function_or_module()))

    def _key_filters(self, key: str, function: ast.AST) -> set[str]:
        """The names a deleted key `key` was picked by (`"relative_position_index" in k`): in an `if` around the
        deletion, or in the comprehension the loop that binds it walks (directly or through a name)."""
        found: set[str] = set()
        for node in reversed(self.ctx.ancestors):
            if node is function:
                break
            if isinstance(node, ast.If):
                found |= _names_in(node.test, key)
            elif isinstance(node, (ast.For, ast.AsyncFor)) and isinstance(node.target, ast.Name) and node.target.id == key:
                source = node.iter
                if isinstance(source, ast.Name):
                    bound = [item.value for item in ast.walk(function) if isinstance(item, ast.Assign)
                             and item.lineno < node.lineno and len(item.targets) == 1
                             and isinstance(item.targets[0], ast.Name) and item.targets[0].id == source.id]
                    source = max(bound, key=lambda value: value.lineno) if bound else source
                if isinstance(source, (ast.ListComp, ast.SetComp, ast.GeneratorExp)):
                    for generator in source.generators:
                        if isinstance(generator.target, ast.Name):
                            for test in generator.ifs:
                                found |= _names_in(test, generator.target.id)
                break
        return found

    def _removed(self, name: str, node: ast.AST, key: ast.expr | None) -> None:
        if not self._stored_again(name, node, key):
            self.removed.setdefault((self._scope(), name), []).append(self.ctx.site(node))

    def _stored_again(self, name: str, node: ast.AST, key: ast.expr | None) -> bool:
        """Whether a key removed from dict `name` at `node` is stored again under a new name: a statement after the
        removal, in the same pass of the loop binding `key` (or of its function), assigns `name[...]` (ms-swift's
        `state_dict.pop(key)`, `key = key.replace('lora_A.', ...)`, ..., `state_dict[key] = value`)."""
        bound = key.id if isinstance(key, ast.Name) else None
        path = [*self.ctx.ancestors, node]
        for parent, child in zip(reversed(path[:-1]), reversed(path[1:]), strict=True):
            if isinstance(parent, FUNCTION_TYPES):
                return False
            for block in ("body", "orelse", "finalbody"):
                statements = getattr(parent, block, None)
                if isinstance(statements, list) and any(child is s for s in statements):
                    after = statements[[id(s) for s in statements].index(id(child)) + 1:]
                    if any(isinstance(s, ast.Assign) and any(
                            isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name) and t.value.id == name
                            for t in s.targets) for s in after):
                        return True
            if isinstance(parent, ast.While) or isinstance(parent, (ast.For, ast.AsyncFor)) and (
                    bound is None or any(isinstance(n, ast.Name) and n.id == bound for n in ast.walk(parent.target))):
                return False
        return False

    def _take_removed(self, loaded: list[ast.expr | None]) -> list[tuple[str, list[Site]]]:
        """The keys deleted, in the function being visited, from the dicts among `loaded`: (dict name, sites)."""
        taken = [(item.id, self.removed.pop((self._scope(), item.id), [])) for item in loaded
                 if isinstance(item, ast.Name)]
        return [(name, sites) for name, sites in taken if sites]

    def _report_removed(self, removed: list[tuple[str, list[Site]]], note: str = "", overlay: bool = False) -> None:
        for name, sites in removed:
            for site in sites:
                if overlay:
                    self.report(site, POPPED_OVERLAY.format(name=name), "info")
                else:
                    self.report(site, POPPED.format(name=name) + note)

    def _scope(self) -> int:
        for node in reversed(self.ctx.ancestors):
            if isinstance(node, FUNCTION_TYPES):
                return id(node)
        return 0

    def _is_parser(self, func: ast.expr) -> bool:
        """Whether `func` is an attribute of an imported parsing module (`json.load`)."""
        while isinstance(func, ast.Attribute):
            func = func.value
        bound = self.ctx.imports.bindings.get(func.id) if isinstance(func, ast.Name) else None
        return bound is not None and bound.split(".", 1)[0] in PARSER_MODULES


def _only_reports(statements: list[ast.stmt]) -> bool:
    """Statements that only print or log (or do nothing)."""
    return all(isinstance(s, ast.Pass) or isinstance(s, ast.Expr) and (isinstance(s.value, ast.Constant) or (
        isinstance(s.value, ast.Call) and _callee(s.value.func) in REPORTING_CALLS)) for s in statements)


def _reads_data(func: ast.expr) -> bool:
    """Whether a loader's name, or that of the object it is called on, names a data set (`load_dataset`,
    `dataset_meta.loader`): it loads samples, not a model's state (`load_state_dict` always does)."""
    if _callee(func) == "load_state_dict":
        return False
    words = re.findall(r"[a-z]+", re.sub(r"([a-z])([A-Z])", r"\1_\2", ast.unparse(func)).lower())
    return not DATA_WORDS.isdisjoint(words)


def _reads_each_state(node: ast.AST, parts: str) -> bool:
    """Whether `node` is a loop or comprehension over `parts` (`self.model`) that calls `.state_dict()` of each."""
    loops = [node] if isinstance(node, ast.For) else getattr(node, "generators", [])
    names = {loop.target.id for loop in loops if ast.unparse(loop.iter) == parts and isinstance(loop.target, ast.Name)}
    return bool(names) and any(isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
                               and call.func.attr == "state_dict" and ast.unparse(call.func.value) in names
                               for call in ast.walk(node))


def _split_keys(target: ast.expr, names: set[str], unpacked: bool) -> tuple[set[str], set[str]]:
    """The names of an assignment `target` that hold a load's whole result, and those that hold its missing keys
    alone (the first of a tuple the result is unpacked into, when `unpacked`: `missing, unexpected = ...`)."""
    if isinstance(target, ast.Name):
        return {target.id} & names, set()
    if unpacked and isinstance(target, ast.Tuple) and target.elts and isinstance(target.elts[0], ast.Name):
        return set(), {target.elts[0].id}
    return {n.id for n in getattr(target, "elts", []) if isinstance(n, ast.Name)} & names, set()


def _refuses_missing(node: ast.AST, whole: set[str], missing: set[str]) -> bool:
    """Whether `node` fails the load on any missing key: `if <missing>: raise ...` (`len(...) > 0`, `... or ...`) or
    `assert not <missing>` (`len(...) == 0`), where <missing> is a name in `missing`, or `.missing_keys` (or `[0]`)
    of one in `whole`."""
    def keys(expr: ast.expr) -> bool:
        if isinstance(expr, ast.Call) and _callee(expr.func) == "len" and len(expr.args) == 1:
            expr = expr.args[0]
        if isinstance(expr, ast.Name):
            return expr.id in missing
        held = expr.value if isinstance(expr, (ast.Attribute, ast.Subscript)) else None
        return isinstance(held, ast.Name) and held.id in whole and (
            getattr(expr, "attr", None) == "missing_keys" or isinstance(expr, ast.Subscript) and constant(expr.slice) == 0)

    def some(test: ast.expr) -> bool:  # true exactly when a key is missing (or, in an `or`, then at least)
        if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or):
            return any(some(value) for value in test.values)
        if isinstance(test, ast.Compare) and len(test.ops) == 1:
            bound = constant(test.comparators[0])
            return keys(test.left) and (isinstance(test.ops[0], (ast.Gt, ast.NotEq)) and bound == 0
                                        or isinstance(test.ops[0], ast.GtE) and bound == 1)
        return keys(test)

    def none(test: ast.expr) -> bool:  # true only when no key is missing
        if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
            return any(none(value) for value in test.values)
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            return some(test.operand)
        return (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)
                and constant(test.comparators[0]) == 0 and keys(test.left))

    if isinstance(node, ast.Assert):
        return none(node.test)
    return isinstance(node, ast.If) and some(node.test) and any(isinstance(s, ast.Raise) for s in node.body)


def _selects_state(comprehension: ast.DictComp) -> bool:
    """`{k: v for k, v in <model>.state_dict().items() if <test>}`: a part of a model's state, chosen by key."""
    generators = comprehension.generators
    if len(generators) != 1 or not generators[0].ifs:
        return False
    items = generators[0].iter
    return (isinstance(items, ast.Call) and isinstance(items.func, ast.Attribute) and items.func.attr == "items"
            and isinstance(items.func.value, ast.Call) and isinstance(items.func.value.func, ast.Attribute)
            and items.func.value.func.attr == "state_dict")


def _strict(value: ast.expr | None) -> bool:
    """A `strict=` argument left out (True by default) or a literal True."""
    return value is None or constant(value) is True


def _callee(func: ast.expr) -> str | None:
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None


def _non_strict(call: ast.Call, lookup: conditions.Lookup) -> bool:
    """`_load_from_state_dict(...)`, or `load_state_dict(..., strict=...)` false under `lookup`."""
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    strict = argument(call, 1, "strict") if name == "load_state_dict" else None
    return name == "_load_from_state_dict" or strict is not None and conditions.value(strict, lookup) is False


def _names_in(test: ast.expr, key: str) -> set[str]:
    """The strings `test` looks for in `key` (`"attn_mask" in k`)."""
    return {constant(node.left) for node in ast.walk(test) if isinstance(node, ast.Compare)
            and isinstance(node.ops[0], ast.In) and isinstance(node.comparators[0], ast.Name)
            and node.comparators[0].id == key and isinstance(constant(node.left), str)}


def _training_state_only(arg: str, value: ast.expr) -> bool:
    """`filter_prefix=["learning_rate", "global_step"]`: it leaves out optimizer and loop state only, and the
    network's weights all load."""
    try:
        prefixes = ast.literal_eval(value)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False
    prefixes = [prefixes] if isinstance(prefixes, str) else prefixes
    return (arg == "filter_prefix" and isinstance(prefixes, (list, tuple)) and bool(prefixes)
            and all(isinstance(p, str) and p.split(".", 1)[0] in catalogue.MINDSPORE_TRAINING_STATE for p in prefixes))

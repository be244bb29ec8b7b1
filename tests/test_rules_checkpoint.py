"""partial-ckpt-load (MSP601): what in-rule examples cannot express — project helpers in other files, how a
`strict=` switch is read, and the messages."""

from __future__ import annotations

import textwrap

import pytest
from msprobe_rewriter.lint.engine import lint_source
from msprobe_rewriter.rules import RULES_BY_NAME

RULE = RULES_BY_NAME["partial-ckpt-load"]

# BEiT's and ConvNeXt's `utils.load_state_dict`: `_load_from_state_dict` only collects the keys it misses.
CONVNEXT_UTILS = """\
def load_state_dict(model, state_dict, prefix="", ignore_missing="relative_position_index"):
    missing_keys, unexpected_keys, error_msgs = [], [], []
    state_dict = state_dict.copy()

    def load(module, prefix=""):
        module._load_from_state_dict(state_dict, prefix, {}, True, missing_keys, unexpected_keys, error_msgs)
        for name, child in module._modules.items():
            if child is not None:
                load(child, prefix + name + ".")

    load(model, prefix=prefix)
    if len(missing_keys) > 0:
        print("Weights of {} not initialized from pretrained model: {}".format(type(model), missing_keys))
"""

# mmcv's `load_state_dict`: raises on missing keys only when told `strict=True`.
MMCV_UTILS = """\
def load_state_dict(module, state_dict, strict=False, logger=None):
    missing_keys, unexpected_keys, err_msg = [], [], []
    module._load_from_state_dict(state_dict, "", {}, True, missing_keys, unexpected_keys, err_msg)
    if len(err_msg) > 0:
        if strict:
            raise RuntimeError(err_msg)
        print(err_msg)


def load_weights(model, state_dict, strict=True):
    return model.load_state_dict(state_dict, strict=strict)
"""

FINETUNE = """\
import torch
{imports}


def main(args, model):
    checkpoint_model = torch.load(args.finetune, map_location="cpu")["model"]
    state_dict = model.state_dict()
    for k in ["head.weight", "head.bias"]:
        if k in checkpoint_model and checkpoint_model[k].shape != state_dict[k].shape:
            del checkpoint_model[k]
    {load}
"""


def findings(tmp_path, utils: str, imports: str, load: str):
    """MSP601's findings on a fine-tuning script beside a `utils.py`, as (line, severity, message)."""
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    (tmp_path / "utils.py").write_text(utils)
    script = tmp_path / "main.py"
    script.write_text(FINETUNE.format(imports=imports, load=load))
    result = lint_source(str(script), script.read_bytes(), [RULE])
    assert not result.errors, result.errors
    return [(f.line, f.severity, f.message) for f in result.findings]


@pytest.mark.parametrize(("imports", "load"), [
    ("import utils", "utils.load_state_dict(model, checkpoint_model, prefix=args.model_prefix)"),
    ("from utils import load_state_dict", "load_state_dict(model, checkpoint_model)"),
])
def test_keys_deleted_before_a_project_helper_that_loads_non_strictly(tmp_path, imports, load):
    """ConvNeXt's main.py deletes the head's keys, then loads the rest through its own non-strict helper."""
    [(line, severity, message)] = findings(tmp_path, CONVNEXT_UTILS, imports, load)
    assert (line, severity) == (10, "warning")
    assert "keys removed from `checkpoint_model`" in message
    assert f"the project's `{load.partition('(')[0]}`, which raises nothing" in message


@pytest.mark.parametrize(("load", "expected"), [
    ("utils.load_state_dict(model, checkpoint_model)", [10]),  # strict=False by default: warns only
    ("utils.load_state_dict(model, checkpoint_model, strict=True)", []),  # raises on the keys it misses
    ("utils.load_weights(model, checkpoint_model)", []),  # `strict=strict`, True by default
    ("utils.load_weights(model, checkpoint_model, False)", [10]),
])
def test_project_helpers_are_read_with_the_arguments_given(tmp_path, load, expected):
    assert [line for line, _, _ in findings(tmp_path, MMCV_UTILS, "import utils", load)] == expected


def test_a_helper_that_does_not_load_is_not_followed(tmp_path):
    """A project function named like a loader that loads nothing (it reads a file): the deletion is no partial load."""
    utils = "import torch\n\n\ndef load_checkpoint(model, state_dict):\n    return torch.load(state_dict)\n"
    assert findings(tmp_path, utils, "import utils", "utils.load_checkpoint(model, checkpoint_model)") == []


def lint(code: str):
    result = lint_source("snippet.py", textwrap.dedent(code).encode(), [RULE])
    assert not result.errors, result.errors
    return [(f.line, f.severity, f.message) for f in result.findings]


OPEN_CLIP = """\
import torch


def load_checkpoint(model, path, strict=True):
    state_dict = torch.load(path, map_location="cpu")
    position_id_key = "text.transformer.embeddings.position_ids"
    if position_id_key in state_dict and not hasattr(model, position_id_key):
        del state_dict[position_id_key]
    return model.load_state_dict(state_dict, strict=strict)
"""


@pytest.mark.parametrize(("calls", "expected"), [
    ("", []),  # no call here: its default, True
    ("load_checkpoint(model, path, strict=True)\n", []),  # open_clip's factory
    ("load_checkpoint(model, path)\nload_checkpoint(model, path, strict=False)\n", [8]),  # either
])
def test_strict_from_a_parameter_takes_what_the_calls_pass(calls, expected):
    found = lint(OPEN_CLIP + calls)
    assert [line for line, _, _ in found if line <= 9] == expected


def test_strict_false_from_every_call_is_a_partial_load():
    found = lint(OPEN_CLIP + "load_checkpoint(model, path, strict=False)\n")
    assert [(line, severity) for line, severity, _ in found] == [(8, "warning"), (9, "warning"), (10, "warning")]


def test_an_overlay_on_a_pretrained_model_says_what_the_missing_keys_keep():
    """LLaVA's builder: the projector's weights on a model `from_pretrained` built; the keys the overlay misses keep
    the pretrained weights, not a random initialisation."""
    found = lint("""\
        import torch
        from transformers import AutoModelForCausalLM


        def load(model_base, projector, untrained):
            model = AutoModelForCausalLM.from_pretrained(model_base)
            weights = torch.load(projector, map_location="cpu")
            weights.pop("lm_head.weight")
            model.load_state_dict(weights, strict=False)
            fresh = untrained()
            fresh.load_state_dict(weights, strict=False)
            return model, fresh
        """)
    assert [(line, severity) for line, severity, _ in found] == [(8, "info"), (9, "info"), (11, "warning")]
    assert "from_pretrained" in found[1][2] and "keep the weights that loaded" in found[1][2]
    assert "random initialisation" not in found[0][2] + found[1][2]


LOAD_RETURNING_KEYS = """\
    import torch


    def load_checkpoint(model, path):
        msg = model.load_state_dict(torch.load(path), strict=False)
        return model, msg

"""


@pytest.mark.parametrize(("caller", "severity"), [
    # BLIP's `blip_nlvr`: the caller only prints the keys returned
    ("def build(model, path):\n    model, msg = load_checkpoint(model, path)\n    print(msg.missing_keys)\n"
     "    return model\n", "warning"),
    # BLIP's `blip_decoder`: the caller asserts nothing is missing, so the load is complete
    ("def build(model, path):\n    model, msg = load_checkpoint(model, path)\n"
     "    assert len(msg.missing_keys) == 0\n    return model\n", None),
    ("", "info"),  # no caller in the file: the callers elsewhere may check them
])
def test_keys_returned_to_the_caller_count_as_checked_where_the_caller_checks_them(caller, severity):
    found = lint(LOAD_RETURNING_KEYS + textwrap.indent(caller, "    "))
    assert [(line, found_severity) for line, found_severity, _ in found] == ([(5, severity)] if severity else [])


@pytest.mark.parametrize(("code", "expected"), [
    # dinov2's depthers: the head loads under the flag the backbone was built pretrained with ...
    ("def make(pretrained=True):\n    backbone = build(pretrained=pretrained)\n    model = Depther(backbone)\n"
     "    if pretrained:\n        model.load_state_dict(torch.load('h.pt'), strict=False)\n", "info"),
    # ... not under another condition, nor after a backbone built without weights
    ("def make(pretrained=True, head=True):\n    backbone = build(pretrained=pretrained)\n    model = Depther(backbone)\n"
     "    if head:\n        model.load_state_dict(torch.load('h.pt'), strict=False)\n", "warning"),
    ("def make(pretrained=True):\n    model = Depther(build())\n"
     "    if pretrained:\n        model.load_state_dict(torch.load('h.pt'), strict=False)\n", "warning"),
    # trl's BEMA callback copies a live model's weights; a checkpoint handed in the same way is no such copy
    ("class C:\n    def step(self, model):\n        self._update(model, self.running.state_dict())\n\n"
     "    def _update(self, model, weights):\n        model.load_state_dict(weights, strict=False)\n", "info"),
    ("class C:\n    def step(self, model, path):\n        self._update(model, torch.load(path))\n\n"
     "    def _update(self, model, weights):\n        model.load_state_dict(weights, strict=False)\n", "warning"),
    # torchtune's LoRA parity test: a new model given a base model's weights, the missed (LoRA) keys checked
    ("def test(lora, ref):\n    missing, unexpected = lora.load_state_dict(ref.state_dict(), strict=False)\n"
     "    assert all('lora' in key for key in missing)\n", "info"),
    # trl's value head renames its share of a whole model's dict; a head loaded from a plain dict is not so
    ("class V(torch.nn.Module):\n    def post_init(self, sd):\n"
     "        sd = {k.replace('v_head.', ''): v for k, v in sd.items()}\n"
     "        self.v_head.load_state_dict(sd, strict=False)\n", "info"),
    ("class V(torch.nn.Module):\n    def post_init(self, sd):\n        self.v_head.load_state_dict(sd, strict=False)\n",
     "warning"),
])
def test_loads_into_models_that_hold_weights_are_information(code, expected):
    ((_, severity, message),) = lint("import torch\n\n\n" + code)
    assert severity == expected
    assert ("keys it returns are checked" in message) == ("missing, unexpected" in code)


@pytest.mark.parametrize(("default", "expected"), [("0", "info"), ("5", "warning")])
def test_a_resume_off_with_the_default_arguments_is_information(default, expected):
    """MindSpore-GAN's `if opt.epoch != 0:` resume (`--epoch` defaults to 0), also a torch load under it with
    keys popped first; with another default the loads run and stay warnings."""
    found = lint(f"""\
        import argparse

        import mindspore as ms
        import torch

        parser = argparse.ArgumentParser()
        parser.add_argument("--epoch", type=int, default={default})
        opt = parser.parse_args()
        if opt.epoch != 0:
            ms.load_checkpoint(f"G_{{opt.epoch}}.ckpt", G)
            ms.load_checkpoint(f"D_{{opt.epoch}}.ckpt", D)
            ms.load_checkpoint(f"E_{{opt.epoch}}.ckpt", E)
            ms.load_checkpoint(f"F_{{opt.epoch}}.ckpt", F)
            state = torch.load("model.pt")
            state.pop("head.weight")
            model.load_state_dict(state, strict=False)
        """)
    assert [(line, severity) for line, severity, _ in found] == [(line, expected) for line in (10, 11, 12, 13, 15, 16)]
    assert all(("`opt.epoch != 0`" in message) == (expected == "info") for _, _, message in found)


@pytest.mark.parametrize(("step", "expected"), [
    ("train_step = print", "info"),
    ("train_step = ms.nn.TrainOneStepCell(ms.nn.WithLossCell(net, ms.nn.MSELoss()), ms.nn.Momentum(net.trainable_params(), 0.1, 0.9))",
     "warning")])
def test_a_script_that_trains_nothing_loads_for_evaluation(step, expected):
    """mindpose's tools/visual scripts load a checkpoint to draw heatmaps; tools/train.py's load feeds training."""
    found = lint(f"""\
        import mindspore as ms


        def main(path, data):
            net = ms.nn.Dense(4, 2)
            ms.load_checkpoint(path, net)
            {step}
            for x in data:
                train_step(net(x))


        if __name__ == "__main__":
            main("net.ckpt", [])
        """)
    assert [(line, severity) for line, severity, _ in found] == [(6, expected)]


@pytest.mark.parametrize(("deleted", "severity"), [
    # Swin's load_pretrained: buffers the model computes, a head just filled with zeros
    ("    for k in [k for k in sd if 'attn_mask' in k]:\n        del sd[k]\n"
     "    torch.nn.init.constant_(model.head.bias, 0.)\n    del sd['head.bias']\n", "info"),
    # one key that is neither: reported where it is deleted, and the load stays a warning
    ("    del sd['relative_position_index']\n    del sd['fc.weight']\n", "warning"),
    ("", "warning"),  # nothing deleted: strict=False hides whatever the checkpoint lacks
])
def test_partial_load_that_only_drops_recomputed_keys_is_info(deleted, severity):
    code = ("import torch\n\n\ndef load_pretrained(model, path):\n    sd = torch.load(path)['model']\n"
            + deleted + "    model.load_state_dict(sd, strict=False)\n")
    result = lint_source("snippet.py", code.encode(), [RULE])
    load = [f for f in result.findings if "strict=False)` loads" in f.message]
    assert [f.severity for f in load] == [severity]
    assert ("makes again without drawing" in load[0].message) is (severity == "info")


# ms-swift's adapter load renames keys (pop, new name, store); moco-v3's lincls copies the kept keys under their
# stripped names, deletes the originals and asserts the keys that end missing are the new head's.
RENAMING = """\
import torch


def load_adapter(model, state_dict, adapter_name, modules):
    for key, value in list(state_dict.items()):
        for module_name in modules:
            if module_name in key:
                state_dict.pop(key)
                key = key.replace(module_name, f"{module_name}.{adapter_name}")
                break
        if "lora_A" in key:
            state_dict.pop(key, None)
            key = key.replace("lora_A.", f"lora_A.{adapter_name}.")
        state_dict[key] = value
    model.load_state_dict(state_dict, strict=False)


def load_lincls(model, state_dict):
    for k in list(state_dict.keys()):
        if k.startswith("module.base_encoder") and not k.startswith("module.base_encoder.fc"):
            state_dict[k[len("module.base_encoder."):]] = state_dict[k]
        del state_dict[k]
    msg = model.load_state_dict(state_dict, strict=False)
    assert set(msg.missing_keys) == {"fc.weight", "fc.bias"}


def load_dropping(model, state_dict):
    for k in list(state_dict.keys()):
        if k.startswith("head."):
            state_dict.pop(k)
        state_dict.get(k)
    model.load_state_dict(state_dict, strict=False)
"""


def test_renamed_keys_and_checked_loads_lose_nothing_unnoticed():
    """A key stored again under a new name in the same pass is not lost; deletions before a load whose missing
    keys are checked are covered by that check (the load's own finding, information); a plain drop stays."""
    found = lint(RENAMING)
    assert [(line, severity) for line, severity, _ in found] == [
        (15, "warning"), (23, "info"), (30, "warning"), (32, "warning")]
    assert "keys removed from `state_dict`" in found[2][2]


def test_hubconf_entry_points_are_information(tmp_path):
    """swav's hubconf.py: torch.hub builds these models for the repository's users, no training run of it."""
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    hub = tmp_path / "hubconf.py"
    hub.write_text("import torch\n\n\ndef resnet50(pretrained=True):\n    model = build()\n    if pretrained:\n"
                   "        model.load_state_dict(torch.hub.load_state_dict_from_url(URL), strict=False)\n"
                   "    return model\n")
    result = lint_source(str(hub), hub.read_bytes(), [RULE])
    assert [(f.line, f.severity) for f in result.findings] == [(7, "info")]
    assert "torch.hub entry point" in result.findings[0].message


@pytest.mark.parametrize(("code", "expected"), [
    # DiffuASR: the network's own full dict, updated from a checkpoint, holds every parameter.
    ("model_dict = net.parameters_dict()\n    model_dict.update(ms.load_checkpoint(path))\n"
     "    ms.load_param_into_net(net, model_dict)\n", []),
    ("model_dict = other.parameters_dict()\n    model_dict.update(ms.load_checkpoint(path))\n"
     "    ms.load_param_into_net(net, model_dict)\n", [(7, "warning", "take the `param_not_load` list")]),
    # mindrl's agent/trainer.py: the second list checked, the first (the network's skipped parameters) discarded.
    ("_, not_load = ms.load_param_into_net(net, ms.load_checkpoint(path))\n    if not_load:\n        raise ValueError\n",
     [(5, "warning", "this checks the second list")]),
    ("not_load, _ = ms.load_param_into_net(net, ms.load_checkpoint(path))\n    if not_load:\n        raise ValueError\n",
     []),
    # RCNN's train.py: heads of another class count left out with a printed warning.
    ("kept = {}\n    for name, data in ms.load_checkpoint(path).items():\n        if data.shape[0] != 3:\n"
     "            print('skipping', name)\n            continue\n        kept[name] = data\n"
     "    ms.load_param_into_net(net, kept)\n", [(11, "info", "leaves out, with a printed warning")]),
    ("kept = {}\n    for name, data in ms.load_checkpoint(path).items():\n        if data.shape[0] != 3:\n"
     "            continue\n        kept[name] = data\n    ms.load_param_into_net(net, kept)\n",
     [(10, "warning", "take the `param_not_load` list")]),
])
def test_what_a_mindspore_load_param_into_net_is_given_and_checks(code, expected):
    found = lint(f"import mindspore as ms\n\n\ndef restore(net, other, path):\n    {code}")
    assert [(line, severity) for line, severity, _ in found] == [(line, severity) for line, severity, _ in expected]
    assert all(part in message for (_, _, message), (_, _, part) in zip(found, expected, strict=True))


BLIP = """\
import torch


def load_checkpoint(model, path):
    state_dict = torch.load(path)["model"]
    for key in model.state_dict().keys():
        if key in state_dict and state_dict[key].shape != model.state_dict()[key].shape:
            del state_dict[key]
    msg = model.load_state_dict(state_dict, strict=False)
    return model, msg


def blip_decoder(model, pretrained):
    model, msg = load_checkpoint(model, pretrained)
    assert len(msg.missing_keys) == 0
    return model
"""


@pytest.mark.parametrize(("other", "expected"), [
    ("", []),  # every call fails on a missing key: the load is complete
    # BLIP's blip_vqa.py also calls it, and checks nothing: the load is partial there, the deletion drops weights
    ("from blip import load_checkpoint\n\n\ndef blip_vqa(model, path):\n    model, msg = load_checkpoint(model, path)\n",
     [(8, "warning"), (9, "info")]),
])
def test_keys_refused_by_the_callers_only_when_no_other_file_calls(tmp_path, other, expected):
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    blip = tmp_path / "blip.py"
    blip.write_text(BLIP)
    if other:
        (tmp_path / "blip_vqa.py").write_text(other)
    result = lint_source(str(blip), blip.read_bytes(), [RULE])
    assert [(f.line, f.severity) for f in result.findings] == expected


def test_keys_joined_into_a_log_line_are_not_checked():
    """timm's `load_pretrained` logs `", ".join(load_result.missing_keys)`: shown, not checked, so the classifier
    keys it pops stay reported."""
    found = lint("""\
        import torch


        def load_pretrained(model, state_dict, logger):
            state_dict.pop("fc.weight", None)
            load_result = model.load_state_dict(state_dict, strict=False)
            if load_result.missing_keys:
                logger.info(f"Missing keys ({', '.join(load_result.missing_keys)})")
        """)
    assert [(line, severity) for line, severity, _ in found] == [(5, "warning"), (6, "warning")]

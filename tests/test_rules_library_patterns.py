"""Rules on library code whose meaning decides the finding: a teardown restoring cuDNN's default, a state dict
written back into the model it came from, an albumentations Compose's own generator, a one-off draw for an
identifier, a profiling loop, a tensor whose device a function hands on, an OpenMMLab config's dropout."""

from __future__ import annotations

import textwrap

import pytest
from msprobe_rewriter.lint.engine import lint_source
from msprobe_rewriter.rules import RULES_BY_NAME


def findings(rule: str, code: str, path: str = "example.py") -> list[tuple[int, str, str]]:
    result = lint_source(path, textwrap.dedent(code).encode(), [RULES_BY_NAME[rule]])
    assert not result.errors, result.errors
    return [(f.line, f.severity, f.message) for f in result.findings]


# --- MSP103: `deterministic = False` --------------------------------------------------------------------------
RESET = """
import torch


def init_seeds(deterministic=True):
    if deterministic:
        torch.backends.cudnn.deterministic = True


def unset_deterministic():
    torch.backends.cudnn.deterministic = False
"""


def test_reset_function_is_information_without_timing_claim():
    [(line, severity, message)] = findings("cudnn-benchmark", RESET)
    assert (line, severity) == (11, "info")
    assert "timing" not in message and "default back" in message


@pytest.mark.parametrize("code", [
    # nothing in the file turns determinism on: no reset, the switch is turned off
    "import torch\n\n\ndef setup():\n    torch.backends.cudnn.deterministic = False\n",
    # under a condition of its function: a branch of a switch, not the function's own statement
    "import torch\n\n\ndef setup(fast):\n    if fast:\n        torch.backends.cudnn.deterministic = False\n"
    "    else:\n        torch.backends.cudnn.deterministic = True\n",
])
def test_deterministic_off_elsewhere_stays_an_error_without_timing_claim(code):
    found = [f for f in findings("cudnn-benchmark", code) if "= False" in f[2]]
    assert [(severity, "timing" in message) for _, severity, message in found] == [("error", False)]


# --- MSP106: albumentations' Compose, identifiers ---------------------------------------------------------------
@pytest.mark.parametrize(("code", "lines"), [
    ("from albumentations import Compose, Blur\n\nt = Compose([Blur()], seed=None)\n", [3]),
    ("import albumentations as A\n\nt = A.Compose([A.Blur()], **options)\n", []),
    ("import albumentations as A\n\nt = A.Compose([A.Blur()])\nt.set_random_seed(3)\n", []),
    ("import albumentations as A\n\nt = A.Compose([A.Blur()], seed=args.seed)\n", []),
    # fixed transforms applied always draw nothing; one applied sometimes, or a list not written here, may
    ("import albumentations as A\n\nt = A.Compose([A.Resize(8, 8, p=1.0), A.Compose([A.Normalize()])])\n", []),
    ("import albumentations as A\n\nt = A.Compose([A.Resize(8, 8)], p=0.5)\n", [3]),
    ("import albumentations as A\n\nt = A.Compose([A.Resize(8, 8, p=0.5)])\n", [3]),
    ("import albumentations as A\n\nt = A.Compose(transforms)\n", [3]),
    # held in names assigned once before: what they hold decides
    ("import albumentations as A\n\n\ndef build(self):\n    self.resize = A.Resize(8, 8)\n"
     "    self.flip = A.HorizontalFlip()\n    return A.Compose([self.resize]), A.Compose([self.resize, self.flip])\n",
     [7]),
    ("import albumentations as A\n\n\ndef build(self, random):\n    self.resize = A.Resize(8, 8)\n"
     "    if not random:\n        self.crop = A.CenterCrop(4, 4)\n        return A.Compose([self.resize, self.crop])\n"
     "    self.crop = A.RandomCrop(4, 4)\n    return A.Compose([self.resize, self.crop])\n", [10]),
    ("import albumentations as A\n\n\ndef build(self, random):\n    self.crop = A.CenterCrop(4, 4)\n"
     "    if random:\n        self.crop = A.RandomCrop(4, 4)\n    return A.Compose([self.crop])\n", [8]),
])
def test_albumentations_compose_seed(code, lines):
    assert [line for line, _, _ in findings("unseeded-generator", code)] == lines


@pytest.mark.parametrize(("code", "lines"), [
    ("import random\n\nsend(session_id=random.Random().randint(0, 10**9))\n", []),
    ("import random\n\nrun_uuid = str(random.Random().getrandbits(64))\n", []),
    # a value named otherwise may feed training; a generator kept in a name may draw again
    ("import random\n\nmix = random.Random().random() * 0.5\n", [3]),
    ("import random\n\nrng = random.Random()\nsession_id = rng.random()\n", [3]),
])
def test_one_off_draw_for_an_identifier(code, lines):
    assert [line for line, _, _ in findings("unseeded-generator", code)] == lines


# --- MSP601: the model's own state written back ---------------------------------------------------------------
def test_own_state_needs_a_function_reading_the_models_state():
    code = """
    import torch


    def states(module):
        return torch.load(module.path)


    def sync(module):
        norm_states = states(module)
        module.load_state_dict(norm_states, strict=False)
    """
    assert [(line, severity) for line, severity, _ in findings("partial-ckpt-load", code)] == [(11, "warning")]


def test_own_state_read_from_another_model_is_not_the_models_own():
    code = """
    import torch


    def get_norm_states(module):
        return {k: v for k, v in module.state_dict().items() if "bn" in k}


    def copy(teacher, student):
        states = get_norm_states(teacher)
        student.load_state_dict(states, strict=False)
    """
    assert [(line, severity) for line, severity, _ in findings("partial-ckpt-load", code)] == [(11, "warning")]


def test_saved_subset_needs_a_key_filter():
    code = """
    import torch


    def save_state(model):
        return {"weights": {k: v for k, v in model.state_dict().items()}}


    def restore(model, state):
        model.load_state_dict(state["weights"], strict=False)
    """
    assert [(line, severity) for line, severity, _ in findings("partial-ckpt-load", code)] == [(10, "warning")]


# --- MSP201: a tensor whose device the function hands on ------------------------------------------------------
def test_like_draw_of_a_tensor_whose_device_is_not_handed_on_keeps_its_level():
    code = """
    import torch


    def noise(x):
        return torch.rand_like(x)
    """
    assert findings("device-rng", code) == []


def test_hooks_of_tensors_are_not_module_hooks_and_method_hooks_are():
    code = """
    import torch


    class Noise:
        def attach(self, layer, x):
            layer.register_forward_pre_hook(self.perturb)
            x.register_hook(grad_noise)

        def perturb(self, module, args):
            return (args[0] + torch.randn_like(args[0]),)


    def grad_noise(grad):
        return grad + torch.randn_like(grad)
    """
    assert [(line, severity) for line, severity, _ in findings("device-rng", code)] == [(11, "warning")]


def test_device_of_a_batch_is_the_cpu_only_where_data_code_alone_calls_the_helper():
    code = """
    import torch


    class Template:
        def _data_collator(self, batch):
            return self._noise(torch.stack(batch))

        def step(self, model, ids):
            return model(self._noise(ids))

        def _noise(self, ids):
            return torch.rand(ids.shape, device=ids.device)
    """
    assert [(line, severity) for line, severity, _ in findings("device-rng", code)] == [(13, "error")]


def test_project_function_given_the_cpu_and_a_partial_load_after_initialising():
    code = """
    import torch


    def encode(batch, device):
        return batch.to(device)


    def noise(batch):
        return torch.randn_like(encode(batch, device="cpu"))


    def build(model, device, state):
        model.to_empty(device=device)
        model.init_weights()
        model.load_state_dict(state, strict=False)


    def resume(model, device, checkpointer, optim):
        if checkpointer.fresh:
            model.to_empty(device=device)
            model.reset_parameters()
        else:
            checkpointer.load_model(model)
        checkpointer.load_optim(model, optim)
    """
    assert [(line, severity) for line, severity, _ in findings("device-rng", code)] == [(15, "error"), (22, "error")]


# --- MSP502: profiling loops ----------------------------------------------------------------------------------
def test_profiling_function_that_steps_an_optimizer_still_trains():
    code = """
    import torch


    def profile_training(model, loader, optimizer):
        for x in loader:
            loss = model(x).sum()
            loss.backward()
            optimizer.step()
            print(loss.item())
    """
    assert [line for line, _, _ in findings("host-sync-in-loop", code)] == [10]


# --- MSP401: OpenMMLab configs --------------------------------------------------------------------------------
@pytest.mark.parametrize("code", [
    "_base_ = ['base.py']\nmodel = dict(backbone=dict(dropout=0.1))\n",  # no `type=`: not a model built by registry
    "_base_ = ['base.py']\nmodel = dict(type='DETR')\ntrain_cfg = dict(dropout=0.1)\n",  # not the model's dict
    "_base_ = ['base.py']\nmodel = dict(type='DETR', head=dict(dropout=0.0, ffn_drop=0))\n",
])
def test_config_dropout_only_in_the_models_dict(code):
    assert findings("dropout", code) == []

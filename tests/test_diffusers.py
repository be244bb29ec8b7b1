"""diffusers' own draws in fine-tuning scripts: `vae.encode(x).latent_dist.sample()` and `randn_tensor(shape,
device=d)` draw on the device (device-rng flags them); the instrument passes torch's global CPU generator, with
which diffusers draws on the CPU and moves the result. Checked against the real diffusers: the rewritten draws
take the numbers of a seeded CPU draw, and draw on the CPU for a tensor that lives elsewhere ("meta" stands in
for an accelerator here)."""

from __future__ import annotations

import pytest
from msprobe_rewriter.instrument import Options, instrument_text
from msprobe_rewriter.instrument.markers import strip
from msprobe_rewriter.lint.engine import lint_source
from msprobe_rewriter.rules import RULES_BY_NAME

torch = pytest.importorskip("torch", reason="needs PyTorch (the torch extra)")
diffusers = pytest.importorskip("diffusers", reason="needs diffusers (the trainers extra)")

FINE_TUNE = """\
import torch
import torch.nn.functional as F
from accelerate import Accelerator
from diffusers.utils.torch_utils import randn_tensor


def train_step(vae, denoiser, pixels, device):
    latents = vae.encode(pixels).latent_dist.sample()
    noise = randn_tensor(latents.shape, device=device)
    return F.mse_loss(denoiser(latents + noise), noise)
"""


def test_lint_flags_both_draws_and_the_instrumented_script_is_clean():
    rule = [RULES_BY_NAME["device-rng"]]
    found = lint_source("train.py", FINE_TUNE.encode(), rule).findings
    assert [(f.line, f.severity) for f in found] == [(8, "warning"), (9, "error")]
    assert all("generator=torch.default_generator" in f.message for f in found)
    out, _ = instrument_text("/project/train.py", FINE_TUNE, Options(selected=frozenset({"device-rng"})))
    assert lint_source("train.py", strip(out).encode(), rule).findings == []


def _tiny_vae():
    from diffusers import AutoencoderKL

    return AutoencoderKL(block_out_channels=(8,), down_block_types=("DownEncoderBlock2D",),
                         up_block_types=("UpDecoderBlock2D",), latent_channels=4, norm_num_groups=8,
                         layers_per_block=1)


def test_the_rewritten_draws_are_a_seeded_cpu_draw():
    out, _ = instrument_text("/project/train.py", FINE_TUNE, Options(selected=frozenset({"device-rng"})))
    namespace: dict = {}
    exec(compile(strip(out), "train.py", "exec"), namespace)
    vae, pixels = _tiny_vae(), torch.randn(2, 3, 16, 16)
    posterior = vae.encode(pixels).latent_dist
    torch.manual_seed(0)
    loss = namespace["train_step"](vae, torch.nn.Identity(), pixels, "cpu")
    torch.manual_seed(0)
    latents = posterior.mean + posterior.std * torch.randn(posterior.mean.shape)
    noise = torch.randn(latents.shape)
    assert torch.equal(loss, torch.nn.functional.mse_loss(latents + noise, noise))


def test_a_cpu_generator_makes_diffusers_draw_on_the_cpu_for_another_device():
    from diffusers.utils.torch_utils import randn_tensor

    state = torch.get_rng_state()
    on_device = randn_tensor((2, 3), device=torch.device("meta"))
    assert on_device.device.type == "meta" and torch.equal(state, torch.get_rng_state())  # the device's generator
    moved = randn_tensor((2, 3), generator=torch.default_generator, device=torch.device("meta"))
    assert moved.device.type == "meta" and not torch.equal(state, torch.get_rng_state())  # the CPU's generator

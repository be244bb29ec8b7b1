"""What names a draw or a kernel decorator: torch's in-place random fills as global draws (lerobot's
`torch.empty(1).uniform_(a, b)`), Triton's pre-MLIR fork as Triton (InternVL's copy of FlashAttention's old kernel),
and a project's copy of diffusers' `randn_tensor` (a vendored pipeline's relative import) as diffusers'."""

from __future__ import annotations

import ast
import textwrap

import pytest
from msprobe_rewriter.context import FileContext
from msprobe_rewriter.lint.engine import lint_source
from msprobe_rewriter.rules import RULES_BY_NAME


def lines(rule_name: str, code: str, path: str = "snippet.py") -> list[int]:
    rule = RULES_BY_NAME[rule_name]
    result = lint_source(path, textwrap.dedent(code).encode(), [rule])
    assert not result.errors, result.errors
    return [f.line for f in result.findings if f.code == rule.code]


@pytest.mark.parametrize(("code", "expected"), [
    ("import torch\nx = torch.empty(1).uniform_(0, 1)\n", "torch.Tensor.uniform_"),
    ("import torch\nx = w.data.normal_()\n", "torch.Tensor.normal_"),
    ("import torch\nx = torch.Tensor.bernoulli_(w, 0.5)\n", "torch.Tensor.bernoulli_"),
    ("import torch.nn as nn\nx = nn.init.normal_(w)\n", "torch.nn.init.normal_"),  # a module's function
    ("import torch\nfrom mylib import init\nx = init.normal_(w)\n", None),
    ("import mindspore\nx = w.uniform_()\n", None),  # a MindSpore tensor's fill: its own generator
    ("import torch\nx = w.uniform(0, 1)\n", None),
])
def test_draw_qualname(code, expected):
    tree = ast.parse(code)
    ctx = FileContext("snippet.py", code, tree)
    call = tree.body[-1].value
    assert ctx.draw_qualname(call) == expected


SHARPNESS = """\
    import torch
    from torchvision.transforms.v2 import Transform


    class SharpnessJitter(Transform):
        def make_params(self, flat_inputs):
            return {{"factor": torch.empty(1).{fill}.item()}}
"""


@pytest.mark.parametrize(("fill", "expected"), [
    ("uniform_(0.5, 1.5)", [7]),  # lerobot
    ("random_(0, 10)", [7]),
    ("uniform_(0.5, 1.5, generator=self.generator)", []),
    ("uniform_(0.5, 1.5, generator=None)", [7]),
])
def test_in_place_fill_is_augmentation_by_hand(fill, expected):
    assert lines("random-augment", SHARPNESS.format(fill=fill)) == expected


def test_in_place_fill_draws_before_seeding():
    code = """\
        import torch

        noise = torch.empty(8, 4).normal_()
        weights = torch.empty(8, 4).normal_(generator=torch.Generator().manual_seed(0))


        def main():
            torch.manual_seed(0)
            model = torch.nn.Linear(4, 2)
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            for x in noise + weights:
                optimizer.zero_grad()
                model(x).sum().backward()
                optimizer.step()


        if __name__ == "__main__":
            main()
    """
    assert lines("seed-missing", code) == [3]


def test_seed_drawn_with_an_in_place_fill():
    """torch's DataLoader draws its base seed so; before torch is seeded, that is OS entropy."""
    code = "import torch\n\nseed = int(torch.empty((), dtype=torch.int64).random_().item())\ntorch.manual_seed(seed)\n"
    assert lines("entropy-seed", code) == [4]
    assert lines("entropy-seed", "import torch\n\ntorch.manual_seed(0)\n" + code.split("\n", 2)[2]) == []


TRITON = """\
    import torch
    import {module} as triton
    import {module}.language as tl


    @triton.jit
    def bwd(dq_ptr, dq, counts, BLOCK: tl.constexpr):
        tl.atomic_add(dq_ptr + tl.arange(0, BLOCK), dq)
        tl.atomic_add(counts, 1)
"""


@pytest.mark.parametrize("module", ["triton", "triton_pre_mlir"])
def test_pre_mlir_triton_is_triton(module):
    """InternVL's copy of MPT's `flash_attn_triton.py` imports the pre-MLIR fork as `triton`."""
    assert lines("nondeterministic-op", TRITON.format(module=module)) == [8]


def test_bare_import_of_pre_mlir_triton():
    code = ("import torch\nimport triton_pre_mlir\nfrom triton_pre_mlir import language as tl\n\n\n"
            "@triton_pre_mlir.jit\ndef bwd(dq_ptr, dq):\n    tl.atomic_add(dq_ptr, dq)\n")
    assert lines("nondeterministic-op", code) == [8]


def _vendored(root, utils: str, import_line: str) -> str:
    """A project vendoring diffusers: `proj/utils/torch_utils.py` (`utils`) and a pipeline importing from it."""
    (root / "pyproject.toml").write_text("")
    pipeline = root / "proj" / "pipelines" / "flux"
    pipeline.mkdir(parents=True)
    (root / "proj" / "utils").mkdir()
    for folder in (root / "proj", root / "proj" / "pipelines", pipeline, root / "proj" / "utils"):
        (folder / "__init__.py").write_text("")
    (root / "proj" / "utils" / "torch_utils.py").write_text(utils)
    (root / "proj" / "utils" / "__init__.py").write_text("from .torch_utils import randn_tensor\n")
    path = pipeline / "pipeline_flux.py"
    path.write_text(f"import torch\n{import_line}\n\n\ndef latents(shape, device):\n"
                    "    return randn_tensor(shape, device=device)\n")
    return str(path)


COPY = ("import torch\n\n\ndef randn_tensor(shape, generator=None, device=None, dtype=None, layout=None):\n"
        "    return torch.randn(shape, generator=generator, device=device, dtype=dtype, layout=layout)\n")


@pytest.mark.parametrize(("utils", "import_line", "expected"), [
    (COPY, "from ...utils.torch_utils import randn_tensor", [6]),
    (COPY, "from ...utils import randn_tensor", [6]),  # diffusers before 0.20 re-exported it from utils
    (COPY, "from proj.utils.torch_utils import randn_tensor", [6]),
    # a project function of that name that is not diffusers' (other parameters)
    ("def randn_tensor(size, std=1.0):\n    return size\n", "from ...utils.torch_utils import randn_tensor", []),
    (COPY, "from ...utils.torch_utils import other as randn_tensor", []),
])
def test_vendored_randn_tensor_is_diffusers(tmp_path, utils, import_line, expected):
    path = _vendored(tmp_path, utils, import_line)
    with open(path) as file:
        assert lines("device-rng", file.read(), path) == expected

"""Network and observation rules (dropout, noncontiguous, nondeterministic-op, host-sync-in-loop, backward-hook):
what in-rule examples cannot express — severities, messages, columns, whole-file facts."""

from __future__ import annotations

import textwrap

import pytest
from msprobe_rewriter import catalogue
from msprobe_rewriter.lint.engine import lint_source
from msprobe_rewriter.rules import ALL_RULES, RULES_BY_NAME


def lint(rule_name: str, code: str):
    """Findings of one rule on a dedented snippet, as (line, severity, message) tuples."""
    rule = RULES_BY_NAME[rule_name]
    result = lint_source("snippet.py", textwrap.dedent(code).encode(), [rule])
    assert not result.errors, result.errors
    return [(f.line, f.severity, f.message) for f in result.findings if f.code == rule.code]


def lines(rule_name: str, code: str) -> list[int]:
    return [line for line, _, _ in lint(rule_name, code)]


# --- dropout ---------------------------------------------------------------------------------------
@pytest.mark.parametrize(("code", "expected"), [
    ("import torch as T\nd = T.nn.Dropout(0.2)\n", [2]),
    ("from torch.nn import AlphaDropout as AD\nd = AD(0.1)\n", [2]),
    ("import torch\nDrop = torch.nn.Dropout\nd = Drop(0.1)\n", [3]),
    ("from torch.nn import functional as F\ny = F.dropout(x, p, training=False)\n", []),
    ("from torch.nn import functional as F\ny = F.dropout(x, p, self.training)\n", [2]),
    ("from torch.nn import functional as F\ny = F.dropout(x, 0.0, True)\n", []),
    ("import torch\ny = torch.dropout(x, 0.1, False)\n", []),
    ("import torch.nn as nn\nlayer = nn.TransformerEncoderLayer(256, 4, 1024, 0.0)\n", []),  # positional dropout
    ("import torch.nn as nn\nlayer = nn.TransformerEncoderLayer(256, 4, **cfg)\n", []),  # may pass dropout
    ("import torch.nn as nn\nrnn = nn.RNN(8, 8, 2, 'tanh', True, False, 0.5)\n", [2]),
    ("import torch.nn as nn\nrnn = nn.LSTM(8, 8, num_layers=layers, dropout=0.5)\n", [2]),
    ("import mindspore.nn as nn\nd = nn.Dropout(0.9)  # keep_prob\n", [2]),
    ("import mindspore.nn as nn\nd = nn.Dropout(1.0)\n", []),
    ("import mindspore.nn as nn\nd = nn.Dropout()\n", [2]),
    ("from mindspore import mint\ny = mint.nn.functional.dropout(x, p=0.1, training=False)\n", []),
    ("from mindspore import ops\nd = ops.Dropout(keep_prob=0.8)\n", [2]),
])
def test_dropout_arguments(code, expected):
    assert lines("dropout", code) == expected


V2 = "import torch_npu\nout = torch_npu.npu_fusion_attention_v2(q, k, v, 8, 'BNSD', "
MINDSPEED = "import torch\nimport mindspeed.ops.fusion_attention_v2 as fa\nout = fa."


@pytest.mark.parametrize(("code", "expected"), [
    (V2 + "keep_prob=1 - p)[0]\n", [2]),
    (V2 + "scale=s, keep_prob=1.0)[0]\n", []),
    (V2 + "None, None, None, None, None, 1.0, 0.9)[0]\n", []),  # keep_prob is keyword only: not these
    (V2 + "**options)[0]\n", []),
    (MINDSPEED + "npu_fusion_attention(q, k, v, 8, 'SBH', keep_prob=keep_prob)\n", [3]),
    (MINDSPEED + "npu_fusion_attention(q, k, v, 8, 'SBH', scale=s)\n", []),
    (MINDSPEED + "npu_fusion_attention_grad(q, k, v, dout, 8, 'SBH', keep_prob=0.9)\n", []),  # replays the mask
    ("import mindspore\nfrom mindnlp.peft import LoraConfig\nconfig = LoraConfig(r=8, lora_dropout=0.1)\n", [3]),
])
def test_dropout_fused_attention_v2_and_untracked_libraries(code, expected):
    assert lines("dropout", code) == expected


def test_dropout_fused_attention_v2_removed_by_seed_all():
    code = """
        import torch_npu
        from mindspeed.ops.fusion_attention_v2 import npu_fusion_attention
        from msprobe_runtime.pytorch import seed_all

        seed_all(1234, False, True)
        a = torch_npu.npu_fusion_attention_v2(q, k, v, 8, "BNSD", keep_prob=0.9)
        b = npu_fusion_attention(q, k, v, 8, "SBH", keep_prob=0.9)
    """
    assert lint("dropout", code) == []


def test_dropout_transformer_default_says_so():
    ((_, severity, message),) = lint("dropout", "import torch.nn as nn\nm = nn.Transformer(512, 8)\n")
    assert severity == "warning" and "dropout=0.1 by default" in message


def test_dropout_in_evaluation_code_is_info():
    code = """
        import torch.nn.functional as F

        def evaluate(model, x):
            return F.dropout(model(x), 0.1)
    """
    assert [s for _, s, _ in lint("dropout", code)] == ["info"]


# --- noncontiguous -----------------------------------------------------------------------------
BACKWARD = """
    import torch

    class Fn(torch.autograd.Function):
        @staticmethod
        def backward(ctx, grad):
            x, w = ctx.saved_tensors
{body}
"""


def backward(body: str) -> str:
    return BACKWARD.format(body=textwrap.indent(textwrap.dedent(body), " " * 12))


@pytest.mark.parametrize(("body", "expected"), [
    ("return grad.t() @ x, None\n", [(8, "error")]),
    ("g = grad.t()\ng = g.contiguous()\nreturn torch.mm(g, x), None\n", []),
    ("g = grad.t()\nreturn torch.addmm(w, g, x), g\n", [(9, "warning"), (9, "warning")]),
    ("if w is not None:\n    g = grad.transpose(0, 1)\n    return g.matmul(x), None\n", [(10, "warning")]),
    ("return grad.mm(w), torch.matmul(x.T, grad, out=w)\n", [(8, "error")]),
    ("return grad.reshape(-1, 4).t().contiguous().mm(x), None\n", []),
])
def test_noncontiguous_in_custom_backward(body, expected):
    assert [(line, severity) for line, severity, _ in lint("noncontiguous", backward(body))] == expected


def test_noncontiguous_backward_detected_without_resolving_the_base():
    code = """
        import torch
        from .autograd_utils import Function

        class Gather(Function):
            @staticmethod
            def backward(ctx, grad):
                return torch.mm(grad.t(), ctx.x)
    """
    assert lines("noncontiguous", code) == [8]


def test_noncontiguous_forward_matmul_is_not_flagged_but_view_is():
    code = """
        import torch

        class Attention(torch.nn.Module):
            def forward(self, q, k, v):
                att = q @ k.transpose(-2, -1)
                out = torch.matmul(att, v.permute(0, 1, 3, 2))
                return out.transpose(1, 2).view(q.size(0), -1)
    """
    assert [(line, severity) for line, severity, _ in lint("noncontiguous", code)] == [(8, "error")]


def test_noncontiguous_view_through_variable_until_reassigned():
    code = """
        import torch

        def f(x, y):
            x = x.transpose(1, 2)
            a = x.view(-1)
            x = x.contiguous()
            b = x.view(-1)
            for y in range(2):
                pass
            return y.view(-1)
    """
    assert [(line, severity) for line, severity, _ in lint("noncontiguous", code)] == [(6, "warning")]


def test_noncontiguous_numpy_transpose_and_eval_downgrade():
    code = """
        import numpy as np
        import torch

        def validate(y):
            arr = np.zeros((3, 4))
            arr.T.view(np.int64)
            return y.permute(0, 2, 1).view(-1)
    """
    assert [(line, severity) for line, severity, _ in lint("noncontiguous", code)] == [(8, "info")]


def test_noncontiguous_bprop_return_is_pytorch_only():
    """MindSpore's transpose makes a new tensor: a `bprop` returning one is fine (mindediting's unfold); a matmul on a
    transposed operand there is still reported."""
    code = """
        from mindspore import nn, ops

        class Unfold(nn.Cell):
            def bprop(self, x, w, out, dout):
                dx = dout.reshape(4, 4, 2, 3)
                dx = dx.transpose(2, 3, 0, 1)
                return (dx,), ops.matmul(dout.T, x), dout.T
    """
    assert lines("noncontiguous", code) == [8]


def test_dist_mindspore_init_on_the_gpu_is_advised_nccl():
    """mindediting's init_env and mindnlp's run_pretrain: the HCCL start and the NCCL one are each reported."""
    code = """
        from mindspore.communication import init

        if args.device_target == "Ascend":
            init()
        elif args.device_target.upper() == "GPU":
            init()
        else:
            init("nccl")
    """
    found = [(line, "NCCL_ALGO\"] =" in message) for line, _, message in lint("dist-no-deterministic-comm", code)]
    assert found == [(5, False), (7, True)]


# --- nondeterministic-op -----------------------------------------------------------------------
def test_nondeterministic_message_names_the_alternative():
    code = "import torch.nn.functional as F\ny = F.interpolate(x, scale_factor=2, mode='bilinear')\n"
    ((_, severity, message),) = lint("nondeterministic-op", code)
    assert severity == "warning" and message.startswith("`F.interpolate` is not deterministic on CUDA")
    assert "mode='nearest'" in message


def test_nondeterministic_on_ascend_gives_ascend_advice():
    code = "import torch\nimport torch_npu\n\nctc = torch.nn.CTCLoss(blank=0).npu()\nout.index_add_(0, idx, src)\n"
    messages = [message for _, _, message in lint("nondeterministic-op", code)]
    assert len(messages) == 2 and all("on Ascend" in m and "CUBLAS" not in m and "CUDA" not in m for m in messages)
    assert lines("nondeterministic-op", "import torch\n" + code.replace("\n\n", "\n\ntorch.use_deterministic_algorithms(True)\n")) == []


def test_nondeterministic_switch_silences_only_what_it_fixes():
    code = """
        import torch
        import torch.nn.functional as F

        torch.use_deterministic_algorithms(True, warn_only=True)

        def step(out, idx, src, img):
            out.index_add_(0, idx, src)
            out.scatter_reduce_(0, idx, src, "sum")
            out.scatter_reduce_(0, idx, src, "prod")
            return F.interpolate(img, scale_factor=2, mode="bicubic")
    """
    assert lines("nondeterministic-op", code) == [10, 11]


@pytest.mark.parametrize(("switch", "expected"), [
    ("torch.use_deterministic_algorithms(False)", [4]),
    ("torch.use_deterministic_algorithms(mode=args.deterministic)", []),
    ("torch.set_deterministic_debug_mode('warn')", []),
    ("torch.set_deterministic_debug_mode(0)", [4]),
])
def test_nondeterministic_switch_values(switch, expected):
    code = f"import torch\n{switch}\n\nout.index_copy_(0, idx, src)\n"
    assert lines("nondeterministic-op", code) == expected


def test_nondeterministic_backward_only_ops_are_silent_without_grad():
    code = """
        import torch
        import torch.nn.functional as F

        def sample(x, idx, src):
            with torch.no_grad():
                y = F.interpolate(x, scale_factor=2, mode="bilinear")
                y.index_add_(0, idx, src)
            with torch.inference_mode():
                up = torch.nn.Upsample(scale_factor=2, mode="bilinear")  # runs where it is called
                return F.grid_sample(y, idx), up
    """
    assert lines("nondeterministic-op", code) == [8, 10]


@pytest.mark.parametrize(("body", "expected"), [
    # a parameter named for a checkpoint, a mapping handed to `load_state_dict`: weights, no backward
    ("def resize(checkpoint_model):\n    return F.interpolate(checkpoint_model['pos'], size=9, mode='bicubic')\n", []),
    ("def resize(model, sd, merge):\n    sd = merge(sd)\n    sd['pos'] = F.interpolate(sd['pos'], size=9, mode='bicubic')\n"
     "    model.load_state_dict(sd)\n", []),
    # the checkpoint parameter bound anew to activations, a merged mapping never loaded: may need a gradient
    ("def resize(model, x, ckpt):\n    ckpt = model(x)\n    return F.interpolate(ckpt, size=9, mode='bicubic')\n", [6]),
    ("def resize(model, sd, merge):\n    sd = merge(sd)\n    return F.interpolate(sd['pos'], size=9, mode='bicubic')\n", [6]),
])
def test_nondeterministic_checkpoint_weights_need_no_gradient(body, expected):
    """Resizing weights on their way into a model (LAVIS's `interpolate_pos_embed`, Swin's `load_pretrained`)."""
    assert lines("nondeterministic-op", "import torch.nn.functional as F\n\n\n" + body) == expected


@pytest.mark.parametrize(("code", "expected"), [
    ("import torch\ny = torch.index_put(x, (i,), v, True)\n", [2]),
    ("import torch\ny = torch.index_put(x, (i,), v)\n", []),
    ("import torch\nx.put_(i, v)\n", [2]),
    ("import torch\nv, i = torch.median(x, 0)\n", [2]),
    ("import torch\nv = torch.median(x)\n", []),
    ("import torch\nc = torch.bincount(x, w)\n", [2]),
    ("import torch\nx.scatter_(1, idx, src, reduce='add')\n", [2]),
    ("import torch\nx.scatter_(1, idx, 1.0)\n", []),
    ("import torch.nn as nn\np = nn.AdaptiveAvgPool3d((1, 1, 1))\nq = nn.AdaptiveMaxPool2d(1)\n", [3]),
    ("import torch.nn as nn\nc = nn.Conv2d(3, 8, 3, padding=1, padding_mode='reflect')\n", [2]),
    ("import torch.nn.functional as F\ny = F.pad(x, (1, 1), mode='circular')\n", []),
    ("from torch.nn import Upsample\nu = Upsample(None, 2, 'trilinear')\n", [2]),
    ("from torch.nn.functional import interpolate as up\ny = up(x, scale_factor=2, mode='bilinear')\n", [2]),
])
def test_nondeterministic_conditions(code, expected):
    assert lines("nondeterministic-op", code) == expected


def test_nondeterministic_index_copy_names_duplicate_indices():
    code = "import torch\n\n\ndef write(t, idx, val, input_pos):\n    t.index_copy_(1, input_pos, val)\n" \
           "    return t.index_copy_(1, idx.cuda(), val)\n"
    ((line, _, message),) = lint("nondeterministic-op", code)
    assert line == 6 and message.startswith("`index_copy_` with duplicate indices is not deterministic on CUDA")


@pytest.mark.parametrize(("index", "expected"), [
    ("torch.sort(ids, stable=True)[1]", []),  # ms-swift's NPU MoE: a permutation
    ("ids.sort().indices.cuda()", []),
    ("torch.topk(ids, 4).indices[:2]", []),
    ("ids.sort().values.long()", [6]),
    ("torch.sort(ids)[0]", [6]),
    ("torch.from_numpy(np.sort(ids)[1])", [6]),  # the second of NumPy's sorted values
])
def test_nondeterministic_index_of_sort_indices_is_unique(index, expected):
    code = f"import numpy as np\nimport torch\n\n\ndef write(out, ids, val):\n    out.index_copy_(0, {index}, val)\n"
    assert lines("nondeterministic-op", code) == expected


@pytest.mark.parametrize(("made", "after", "expected"), [
    ("torch.zeros(n)", "    metrics['loss'] = stats\n", "info"),
    ("losses.new_zeros(n)", "    for c in range(n):\n        log_dict[f'loss_{c}'] = stats[c]\n", "info"),
    ("torch.zeros(n)", "    metrics['loss'] = stats\n    return stats\n", "warning"),  # handed on too
    ("torch.zeros(n)", "    cache['loss'] = stats\n", "warning"),  # a mapping not named for reported values
    ("torch.zeros(n)", "", "warning"),  # nothing stored
    ("self.embed_sum", "    metrics['codebook'] = stats\n", "warning"),  # a module's state (a VQ codebook's sums)
])
def test_nondeterministic_accumulation_only_reported_is_info(made, after, expected):
    """ms-swift's megatron trainer sums per-channel losses with `index_add_` only to store them in `metrics`."""
    code = (f"import torch\n\n\ndef channel_loss(self, losses, channel, n, metrics, log_dict, cache):\n"
            f"    stats = {made}\n    stats.index_add_(0, channel, losses.detach())\n{after}")
    (finding,) = lint_source("m.py", code.encode(), [RULES_BY_NAME["nondeterministic-op"]]).findings
    assert (finding.line, finding.severity) == (6, expected)


@pytest.mark.parametrize(("body", "expected"), [
    ("def build(m):\n    return torch.compile(m, options=OPTIONS)\n", [7]),  # a module constant, read in a function
    ("def build(m, OPTIONS):\n    return torch.compile(m, options=OPTIONS)\n", []),  # a parameter hides it
    ("def build(m):\n    OPTIONS = {}\n    return torch.compile(m, options=OPTIONS)\n", []),
    ("with torch._inductor.config.patch(OPTIONS):\n    pass\n", [6]),
])
def test_compile_autotune_options_through_a_name(body, expected):
    code = "import torch\nimport torch._inductor.config\n\nOPTIONS = {'max_autotune': True}\n\n" + body
    assert lines("compile-autotune", code) == expected


@pytest.mark.parametrize(("folders", "package", "extra", "expected"), [
    (("slowfast", "datasets"), True, "", []),  # SlowFast's transforms of a sample's frames
    (("slowfast", "datasets"), True, "class Head(torch.nn.Module):\n    pass\n", [6]),  # it defines a module
    (("slowfast", "datasets"), False, "", [6]),  # a folder named so, but no package: a checkout under /data/
    (("slowfast", "models"), True, "", [6]),
])
def test_nondeterministic_data_package(tmp_path, folders, package, extra, expected):
    folder = tmp_path.joinpath(*folders)
    folder.mkdir(parents=True)
    for level in (folder, folder.parent) if package else ():
        (level / "__init__.py").write_text("")
    code = ("import torch\n\n\ndef random_short_side_scale_jitter(images, size, index, src):\n"
            "    images.index_add_(0, index, src)  # forward accumulation: its device decides\n"
            "    return torch.nn.functional.interpolate(images, size=size, mode='bilinear')\n\n\n" + extra)
    path = folder / "transform.py"
    path.write_text(code)
    result = lint_source(str(path), code.encode(), [RULES_BY_NAME["nondeterministic-op"]])
    assert sorted(f.line for f in result.findings) == [5, *expected]


def test_nondeterministic_namespace_data_package(tmp_path):
    """jepa's `src/datasets/utils/video/transforms.py`: no `__init__.py`, but the file imports a module beside it as
    `src.datasets.utils.video.functional`, naming its package folders."""
    folder = tmp_path.joinpath("src", "datasets", "video")
    folder.mkdir(parents=True)
    (folder / "functional.py").write_text("")
    code = ("import torch\nimport src.datasets.video.functional as FF\n\n\ndef uniform_crop(images, size):\n"
            "    return torch.nn.functional.interpolate(images, size=size, mode='bilinear')\n")
    rule = [RULES_BY_NAME["nondeterministic-op"]]
    for imported, expected in (("src.datasets.video.functional", []), ("datasets.video.other", [6]),
                               ("src.models.video.functional", [6])):
        path = folder / "transforms.py"
        source = code.replace("src.datasets.video.functional", imported)
        path.write_text(source)
        assert [f.line for f in lint_source(str(path), source.encode(), rule).findings] == expected, imported


@pytest.mark.parametrize(("folder", "name", "expected"), [
    ("data_preprocessors", "data_preprocessor.py", [11]), ("models", "data_preprocessor.py", [11]),
    ("models", "batch_resize.py", [10, 11])])
def test_nondeterministic_data_preprocessor(tmp_path, folder, name, expected):
    """mmdet's `models/data_preprocessors/`: its modules (`BatchSyncRandomResize`) resize the loader's batch before
    the model runs, so no gradient flows back through their interpolation; a float accumulation there still
    counts, and a module elsewhere taking `inputs` may be a layer."""
    package = tmp_path.joinpath("mmdet", folder)
    package.mkdir(parents=True)
    for level in (package, package.parent):
        (level / "__init__.py").write_text("")
    code = ("import torch\nimport torch.nn.functional as F\nfrom torch import nn\n\n\n"
            "class BatchSyncRandomResize(nn.Module):\n    def forward(self, inputs, data_samples, idx, src):\n"
            "        h, w = inputs.shape[-2:]\n        out = torch.zeros(4, device=inputs.device)\n"
            "        inputs = F.interpolate(inputs, size=(h * 2, w * 2), mode='bilinear', align_corners=False)\n"
            "        return inputs, out.index_add_(0, idx, src)\n")
    path = package / name
    path.write_text(code)
    assert _nondeterministic_lines(path) == expected


def test_nondeterministic_counts_are_info():
    """Float counts (adding ones, `torch.histc`) are exact in any order below 2**24: info that says so; a count
    added into a tensor an integer dtype made is not reported."""
    code = """\
        import torch


        def counts(i, n, x):
            hist = torch.zeros(n, device=i.device)
            offsets = torch.zeros(n, dtype=torch.long, device=i.device)
            offsets.scatter_add_(0, i, torch.ones_like(i))
            hist.scatter_add_(0, i, torch.ones(len(i), device=i.device))
            return hist.index_add_(0, i, x), torch.histc(x, bins=n)
        """
    found = lint("nondeterministic-op", code)
    assert [(line, severity) for line, severity, _ in found] == [(8, "info"), (9, "warning"), (9, "info")]
    assert "below 2**24" in found[0][2] and "below 2**24" not in found[1][2]


def test_nondeterministic_training_branch_stays_a_warning():
    """Only code that runs when `self.training` is false is inference: the upsampling before `if self.training:
    return`, in its branch, or after one that does not return, trains; a nested function is no `predict` method."""
    code = """\
        import torch.nn.functional as F
        from torch import nn


        class Head(nn.Module):
            def forward(self, x):
                x = F.interpolate(x, scale_factor=2, mode='bilinear')
                if self.training:
                    x = F.interpolate(x, scale_factor=2, mode='bilinear')
                if self.training:
                    print(x)
                return F.interpolate(x, scale_factor=2, mode='bilinear')


        def predict(x):
            return F.interpolate(x, scale_factor=2, mode='bilinear')
        """
    assert [(line, severity) for line, severity, _ in lint("nondeterministic-op", code)] == [
        (7, "warning"), (9, "warning"), (12, "warning"), (16, "warning")]


def test_nondeterministic_project_wrapper_of_an_op(tmp_path):
    """DETR's util/misc.py `interpolate` hands its parameters on to `F.interpolate` in their order: models/detr.py's
    bilinear call of it is the op's; another name that reorders them is not followed."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "util").mkdir()
    (tmp_path / "util" / "__init__.py").write_text("")
    (tmp_path / "util" / "misc.py").write_text(
        "import torch\n\n\ndef interpolate(input, size=None, scale_factor=None, mode='nearest', align_corners=None):\n"
        "    return torch.nn.functional.interpolate(input, size, scale_factor, mode, align_corners)\n\n\n"
        "def resize(input, mode, size):\n    return torch.nn.functional.interpolate(input, size, None, mode)\n")
    path = tmp_path / "detr.py"
    path.write_text("import torch\nfrom util.misc import interpolate, resize\n\n\ndef loss_masks(src_masks, size):\n"
                    "    up = interpolate(src_masks, size=size, mode='bilinear', align_corners=False)\n"
                    "    return up, interpolate(src_masks, size), resize(src_masks, 'bilinear', size)\n")
    assert _nondeterministic_lines(path) == [6]
    (tmp_path / "util" / "flash.py").write_text(
        "from flash_attn import flash_attn_func as fa2\n\n\ndef flash_attn_func(q, k, v):\n    return fa2(q, k, v)\n")
    path.write_text("import torch\nfrom util.flash import flash_attn_func\n\n\ndef attend(q, k, v):\n"
                    "    return flash_attn_func(q, k, v)\n")
    assert _nondeterministic_lines(path) == []  # the wrapper's own call is reported, where `deterministic=` goes


def _project(root, files: dict[str, str]):
    (root / ".git").mkdir()
    for name, code in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(code))


def _nondeterministic_lines(path) -> list[int]:
    rule = [RULES_BY_NAME["nondeterministic-op"]]
    return sorted(f.line for f in lint_source(str(path), path.read_bytes(), rule).findings)


@pytest.mark.parametrize(("extra", "expected"), [("", []), ("def train(x, k):\n    return filter2D(x, k)\n", [5])])
def test_nondeterministic_helper_called_without_gradient_in_other_files(tmp_path, extra, expected):
    """BasicSR's `filter2D`: called by `@torch.no_grad()` `feed_data` in the model files, and by `USMSharp.forward`,
    whose module (re-exported by `basicsr/utils/__init__.py`) only `feed_data` calls."""
    _project(tmp_path, {
        "utils/__init__.py": "from .img_process_util import USMSharp\n",
        "utils/img_process_util.py": """\
            import torch
            from torch.nn import functional as F

            def filter2D(img, kernel):
                img = F.pad(img, (1, 1, 1, 1), mode='reflect')
                return F.conv2d(img, kernel)

            class USMSharp(torch.nn.Module):
                def __init__(self):
                    super(USMSharp, self).__init__()

                def forward(self, img):
                    return img - filter2D(img, self.kernel)
            """,
        "models/sr_model.py": """\
            import torch
            from utils import USMSharp
            from utils.img_process_util import filter2D

            class SRModel:
                def __init__(self):
                    self.usm_sharpener = USMSharp().cuda()

                @torch.no_grad()
                def feed_data(self, data):
                    self.gt_usm = self.usm_sharpener(data['gt'])
                    self.lq = filter2D(self.gt_usm, data['kernel'])
            """ + extra,
    })
    assert _nondeterministic_lines(tmp_path / "utils" / "img_process_util.py") == expected


@pytest.mark.parametrize(("extra", "expected"), [("", []), ("loss = jitter(model(x), 8).mean()\n", [4, 7])])
def test_nondeterministic_module_of_data_code(tmp_path, extra, expected):
    """VideoMAE's flat video_transforms.py: its functions are called only through kinetics.py's dataset (one through a
    helper), so the file is data code, its uncalled function too; not once training calls one."""
    _project(tmp_path, {
        "video_transforms.py": """\
            import torch

            def jitter(images, size):
                return torch.nn.functional.interpolate(images, size=size, mode='bilinear')

            def crop_img(images, size):
                return torch.nn.functional.interpolate(images, size=size, mode='bilinear')
            """,
        "kinetics.py": """\
            import video_transforms
            from torch.utils.data import Dataset

            def spatial_sampling(frames, size):
                return video_transforms.jitter(frames, size)

            class VideoClsDataset(Dataset):
                def __getitem__(self, index):
                    return spatial_sampling(self.frames[index], 224)
            """,
        "train.py": "from video_transforms import jitter\n\n" + extra,
    })
    assert _nondeterministic_lines(tmp_path / "video_transforms.py") == expected


def test_nondeterministic_catalogue_is_consistent():
    ops = catalogue.NONDETERMINISTIC_OPS
    assert catalogue.NONDETERMINISTIC_FIXED_BY_SWITCH <= ops.keys()
    assert catalogue.NONDETERMINISTIC_BACKWARD_ONLY <= ops.keys()
    assert all(name.startswith(("torch.", "xformers.", "mmcv.ops.", *catalogue.FLASH_ATTENTION_MODULES)) and fix
               for name, fix in ops.items())


@pytest.mark.parametrize(("body", "expected"), [
    ("return F.grid_sample(x, grid)", []),
    ("with torch.enable_grad():\n            return F.grid_sample(x, grid)", [9]),
    ("return torch.ops.aten.grid_sampler_2d_backward(x, x, grid, 0, 0, False, (True, True))", [8]),
])
def test_nondeterministic_autograd_function_forward(body, expected):
    """stylegan3's grid_sample_gradfix: a torch.autograd.Function's forward is not recorded (its `F.grid_sample` has
    no backward) unless it enables grad mode; grid_sample's backward op called explicitly is reported."""
    code = ("import torch\nimport torch.nn.functional as F\n\n\nclass Sample(torch.autograd.Function):\n"
            "    @staticmethod\n    def forward(ctx, x, grid):\n        " + body + "\n")
    assert lines("nondeterministic-op", code) == expected


def test_nondeterministic_xformers_attention_is_fixed_by_the_switch():
    """dinov2's MemEffAttention: xformers (0.0.22 and later) picks its deterministic cutlass backward under the
    switch; no backward, no finding."""
    code = ("import torch\nfrom xformers.ops import memory_efficient_attention\n\n\n"
            "def attend(q, k, v):\n    return memory_efficient_attention(q, k, v, attn_bias=None)\n\n\n"
            "@torch.no_grad()\ndef infer(q, k, v):\n    return memory_efficient_attention(q, k, v)\n")
    ((line, _, message),) = lint("nondeterministic-op", code)
    assert line == 6 and "torch.use_deterministic_algorithms(True)" in message and "0.0.22" in message
    assert lines("nondeterministic-op", code.replace("\n\n\ndef attend", "\ntorch.use_deterministic_algorithms(True)\n\n\ndef attend")) == []


def test_nondeterministic_unique_index_add_and_single_scatter():
    """dinov2's stochastic depth adds each kept row once; trl's scatter adds one value per output."""
    code = ("import torch\n\n\ndef f(x, res, ids, bump, n, idx):\n"
            "    brange = torch.randperm(x.shape[0], device=x.device)[:n]\n"
            "    a = torch.index_add(x, 0, brange, res)\n"
            "    b = x.scatter_add(2, ids.unsqueeze(-1), bump[:, :, None].expand(-1, n, 1))\n"
            "    c = x.scatter_add(-1, ids.unsqueeze(-1), bump)\n"
            "    d = x.scatter_add(2, ids.unsqueeze(-1), bump)  # dimensions unknown\n"
            "    return x.index_add_(0, idx[:n], res), a, b, c, d\n")
    assert lines("nondeterministic-op", code) == [9, 10]


def test_nondeterministic_loss_module_behind_a_local_of_its_name():
    """open_clip's CoCaLoss: `caption_loss = self.caption_loss(...)` binds a local named like the attribute."""
    code = ("import torch.nn as nn\n\n\nclass CoCaLoss(nn.Module):\n    def __init__(self):\n"
            "        super().__init__()\n        self.caption_loss = nn.CrossEntropyLoss(ignore_index=0)\n\n"
            "    def forward(self, logits, labels):\n"
            "        caption_loss = self.caption_loss(logits.permute(0, 2, 1), labels)\n"
            "        caption_loss = self.caption_loss(logits.permute(0, 2, 1), labels)\n        return caption_loss\n")
    assert lines("nondeterministic-op", code) == [10, 11]


@pytest.mark.parametrize(("main", "expected"), [
    ("from train import evaluate\n\nevaluate(None, [])\n", "info"),
    ("from train import generative_loss\n\nloss = generative_loss(None, None)\n", "warning"),  # named elsewhere
    ("from train import generative_loss\n\n\ndef eval_knn(m):\n    return generative_loss(m, None)\n", "info"),
    ("from train import (\n    generative_loss,\n)\n\nloss = generative_loss(None, None)\n", "warning"),
    ("from train import generative_loss  # handed on: a package's __init__\n", "warning"),
    ("from package import generative_loss\n\n\ndef forward(x):\n    return generative_loss(x, None)\n", "warning"),
])
def test_nondeterministic_helper_only_evaluation_calls(tmp_path, main, expected):
    """open_clip's `maybe_compute_generative_loss`: only `evaluate()` calls it (through a helper of its own here),
    unless another project file names it outside evaluation code (dinov2's `extract_features`: `eval_knn`)."""
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    (tmp_path / "main.py").write_text(main)
    code = ("import torch.nn.functional as F\n\n\ndef generative_loss(logits, labels):\n"
            "    return F.cross_entropy(logits.permute(0, 2, 1), labels)\n\n\n"
            "def losses(model, x, y):\n    return generative_loss(model(x), y)\n\n\n"
            "def evaluate(model, loader):\n    return [losses(model, x, y) for x, y in loader]\n")
    path = tmp_path / "train.py"
    path.write_text(code)
    ((finding),) = lint_source(str(path), code.encode(), [RULES_BY_NAME["nondeterministic-op"]]).findings
    assert (finding.line, finding.severity) == (5, expected)
    assert ("only evaluation code calls `generative_loss`" in finding.message) == (expected == "info")


# --- host-sync-in-loop ---------------------------------------------------------------------------
def test_host_sync_per_epoch_helper_loop_is_not_a_step_loop():
    code = """
        import torch

        def train_one_epoch(model, loader, optimizer):
            for x, y in loader:
                loss = model(x, y)
                loss.backward()
                optimizer.step()
            return loss

        def main(model, loader, optimizer):
            for epoch in range(10):
                loss = train_one_epoch(model, loader, optimizer)
                print(f"epoch {epoch} loss {loss}")
    """
    assert lint("host-sync-in-loop", code) == []


def test_host_sync_reads_the_value_before_rebinding():
    code = """
        import torch

        def train(model, loader, optimizer):
            for x in loader:
                loss = model(x)
                loss.backward()
                optimizer.step()
                loss = float(loss)
                print(loss)
    """
    assert [(line, severity) for line, severity, _ in lint("host-sync-in-loop", code)] == [(9, "info")]


def test_host_sync_periodic_guard_else_branch_and_while_test():
    code = """
        import torch

        def train(model, batches, optimizer, loss):
            step = 0
            while loss.item() > 0.1:
                loss = model(next(batches))
                loss.backward()
                optimizer.step()
                if step % 100 == 0:
                    print(loss.item())
                else:
                    logits = model.head.weight.detach().cpu().numpy()
                step += 1
    """
    assert lines("host-sync-in-loop", code) == [6, 13]


def test_host_sync_rare_branches_are_not_every_step():
    """Reads in the overflow branches (yolov7_mindspore's train.py) and at chosen steps (torch-ngp's TensoRF) are not
    every step; the other arms of those tests, and a counter outside the chosen steps, still are."""
    code = """
        import torch

        def train(self, loader, scaler, optimizer):
            for x in loader:
                self.global_step += 1
                loss, overflow, grads_finite = self.model(x)
                loss.backward()
                optimizer.step()
                if not grads_finite:
                    print(scaler.scale.asnumpy())
                else:
                    print(loss.asnumpy())
                if overflow:
                    print(scaler.scale.asnumpy())
                if self.global_step in self.opt.upsample_steps:
                    print(self.model.aabb.cpu())
                if self.global_step not in self.opt.upsample_steps:
                    print(self.model.aabb.cpu())
    """
    assert lines("host-sync-in-loop", code) == [13, 19]


def test_host_sync_ignores_models_python_values_and_flags():
    code = """
        import torch

        def train(model, loader, optimizer, use_aux_loss: bool):
            for x, y in loader:
                out = model(x)
                loss = torch.nn.functional.mse_loss(out, y)
                loss.backward()
                optimizer.step()
                weights = [p.grad for p in model.cpu().parameters()]
                for aux_loss in [0.1, 0.2]:
                    print(f"{aux_loss} {use_aux_loss} {len(weights)}")
                total, count = 0.0, 0
                avg_loss = total / max(count, 1)
                print(avg_loss)
                if not torch.isfinite(loss):
                    raise RuntimeError(f"loss is {loss}")
    """
    # only the finiteness test itself, a sync the host needs (the message formatted on the way out is none)
    assert [(line, "the sync stays" in message) for line, _, message in lint("host-sync-in-loop", code)] == [(16, True)]


def test_host_sync_periodic_guard_reads_n_from_the_defaults():
    """`% N` skips steps unless N is 1 with the defaults: an option's, a parameter's, a module constant's."""
    code = """
        import argparse

        import torch

        parser = argparse.ArgumentParser()
        parser.add_argument("--log_every", type=int, default=1)
        parser.add_argument("--save_every", type=int, default=100)
        args = parser.parse_args()
        every = 10


        def train(model, loader, opt, print_freq=1, other=5):
            for i, x in enumerate(loader):
                loss = model(x).sum()
                loss.backward()
                opt.step()
                if i % args.log_every == 0:
                    print(loss.item())
                if i % args.save_every == 0:
                    print(loss.item())
                if i % print_freq == 0:
                    print(loss.item())
                if i % other == 0:
                    print(loss.item())
                if i % every == 0:
                    print(loss.item())
                if i % unknown == 0:
                    print(loss.item())


        train(None, [], None)
    """
    assert lines("host-sync-in-loop", code) == [19, 23]


def test_host_sync_periodic_guard_reads_n_from_an_imported_dataclass(tmp_path):
    """nanotron: `% self.config.logging.iteration_step_info_interval`, a field of a dataclass in the project module
    the trainer imports its config classes from (through a package's `*` re-export), which defaults to 1."""
    package = tmp_path / "proj" / "config"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("from proj.config.config import *\n")
    (package / "config.py").write_text(
        "from dataclasses import dataclass\n\n\n@dataclass\nclass LoggingArgs:\n    info_interval: int = 1\n"
        "    save_interval: int = 100\n\n\n@dataclass\nclass Config:\n    logging: LoggingArgs\n")
    code = ("import torch\nfrom proj.config import Config\n\n\nclass Trainer:\n    def train(self, loader):\n"
            "        for step, x in enumerate(loader):\n            loss = self.model(x).sum()\n"
            "            loss.backward()\n            self.optimizer.step()\n"
            "            if step % self.config.logging.info_interval == 0:\n                print(loss.item())\n"
            "            if step % self.config.logging.save_interval == 0:\n                print(loss.item())\n")
    path = tmp_path / "proj" / "trainer.py"
    path.write_text(code)
    found = lint_source(str(path), code.encode(), [RULES_BY_NAME["host-sync-in-loop"]]).findings
    assert [f.line for f in found] == [12]


def test_host_sync_unpacking_forgets_what_a_name_held():
    """SlowFast: `top1_err = None` early, then `top1_err, top5_err = [...]` of device values."""
    code = """
        import torch

        def train(model, loader, optimizer):
            for x, y in loader:
                loss = model(x).sum()
                loss.backward()
                optimizer.step()
                top1_err, top5_err = None, None
                top1_err, top5_err = [1.0 - c for c in model.correct(x, y)]
                print(top1_err.item())
    """
    assert lines("host-sync-in-loop", code) == [11]


def test_host_sync_closures_run_where_the_loop_calls_or_hands_them():
    """An optimizer's `step(closure)` runs it every step; a closure called under `% 10` or never is no sync."""
    code = """
        import torch


        def train(model, loader, opt):
            def closure():
                opt.zero_grad()
                loss = model(x).sum()
                loss.backward()
                print(loss.item())
                return loss

            def log():
                print(f"{loss.item()}")

            def unused():
                print(loss.item())

            for i, x in enumerate(loader):
                opt.step(closure)
                if i % 10 == 0:
                    log()
    """
    assert lines("host-sync-in-loop", code) == [10]


def test_host_sync_backward_loop_whose_callers_step_nothing_is_an_epoch():
    """Only a caller that steps the optimizer makes a backward-only loop the micro-batches of one step."""
    code = """
        import torch


        def train_epoch(model, loader):
            for x in loader:
                loss = model(x).sum()
                loss.backward()
            return loss


        def main(model, loader):
            for epoch in range(10):
                loss = train_epoch(model, loader)
                print(loss.item())
    """
    assert lines("host-sync-in-loop", code) == []


def test_host_sync_loop_handing_the_step_to_an_epoch_function_runs_epochs():
    """mindcv's `train_epoch(loader, ..., train_step, ...)`: the step runs in the helper's loop, not per epoch."""
    code = """
        import mindspore as ms


        def build_train_step(grad_fn, optimizer):
            def train_step(data, label):
                loss, grads = grad_fn(data, label)
                optimizer(grads)
                return loss
            return train_step


        def train_epoch(loader, train_step):
            for data, label in loader:
                loss = train_step(data, label)
            return loss


        def train(loader, train_step, epochs):
            for epoch in range(epochs):
                loss = train_epoch(loader, train_step)
                print(loss.asnumpy())
    """
    assert lines("host-sync-in-loop", code) == []


def test_host_sync_helper_float_read_under_a_switch_is_not_every_call():
    code = """
        import torch


        def grad_stats(params, verbose):
            for p in params:
                if verbose:
                    print(float(torch.norm(p.grad)))
                norm = float(p.grad)


        def train(model, loader, optimizer):
            for x in loader:
                model(x).sum().backward()
                grad_stats(model.parameters(), False)
                optimizer.step()
    """
    assert lines("host-sync-in-loop", code) == []


# --- backward-hook -----------------------------------------------------------------------------
@pytest.mark.parametrize(("code", "expected"), [
    # a tensor's or an autograd node's hook adds no node to the graph: not reported
    ("import torch\n\ndef hook(g):\n    return g\n\nx.register_hook(hook)\n", []),
    ("import torch\nnode.register_hook(make_hook(p))\n", []),
    ("import torch\nrunner.register_hook(hook)\n", []),
    ("import torch\nmodel.register_hook(EvalHook(loader))\n", []),
    ("from mindspore import nn\nnet.register_backward_pre_hook(fn)\n", [2]),
    ("model.register_full_backward_hook(fn)\n", []),
])
def test_backward_hook_owners(code, expected):
    assert lines("backward-hook", code) == expected


def test_loss_scaler_call_counts_as_a_training_step():
    """MAE/timm apply gradients through `loss_scaler(loss, optimizer)`: its loop is a training loop."""
    source = (
        "import torch\n\n\ndef train(model, loader, optimizer, loss_scaler):\n"
        "    for x, y in loader:\n        loss = model(x)\n"
        "        loss_scaler(loss, optimizer, parameters=model.parameters())\n"
        "        print(loss.item())\n"
    )
    found = lint_source("train.py", source.encode(), ALL_RULES).findings
    assert [(f.line, f.code) for f in found] == [(8, "MSP502")]



@pytest.mark.parametrize(("line", "use"), [
    ("kl = torch.mean(loss).item()\n    if kl > 1.5:\n        break", "the host branches on `kl`"),
    ("losses = {k: v.item() for k, v in parts.items()}\n    if math.isnan(sum(losses.values())):\n        break",
     "`math.isnan` takes `losses`"),
])
def test_host_sync_names_what_needs_a_value_read_into_a_name(line, use):
    """A read the host acts on later in the loop, through the name it is assigned to, keeps its sync."""
    code = ("import math\n\nimport torch\n\nfor x in range(3):\n    loss = model(x)\n    parts = {'a': loss}\n    "
            + line + "\n    loss.backward()\n    optimizer.step()\n")
    assert [message.split(": ", 1)[1].split(",")[0] for _, _, message in lint("host-sync-in-loop", code)] == [use]


@pytest.mark.parametrize(("built", "needed"), [("", False), ("\n\nppo = PPO(target_kl=0.02)\n", True)])
def test_host_sync_branch_that_a_default_short_circuits(built, needed):
    """SB3's PPO `if self.target_kl is not None and approx_kl_div > ...` reads the KL only when `target_kl` (None by
    default) is set: the sync-removing advice with the condition named; a call in the file that sets it keeps the
    sync."""
    code = ("import torch\n\n\nclass PPO:\n    def __init__(self, target_kl=None):\n        self.target_kl = target_kl\n\n"
            "    def train(self, model, loader, optimizer):\n        for x in loader:\n            loss = model(x).sum()\n"
            "            kl = torch.mean(loss).cpu().numpy()\n"
            "            if self.target_kl is not None and kl > 1.5 * self.target_kl:\n                break\n"
            "            loss.backward()\n            optimizer.step()\n" + built)
    [(line, _, message)] = lint("host-sync-in-loop", code)
    assert line == 11
    if needed:
        assert "the host branches on `kl`, so the host needs this value" in message
    else:
        assert "keep statistics on the device" in message
        assert message.endswith("(the host branches on `kl` only when `self.target_kl is not None`: not so by default)")


def test_no_deterministic_algos_advises_mindspore_where_transformers_only_tokenizes():
    code = """
        import mindspore
        from mindspore import nn
        from transformers import AutoTokenizer

        if __name__ == "__main__":
            net = nn.Dense(3, 3)
            opt = nn.Adam(net.trainable_params())
            grad_fn = mindspore.value_and_grad(lambda x: net(x).sum(), None, opt.parameters)
            for x in range(3):
                loss, grads = grad_fn(x)
                opt(grads)
    """
    assert [message.split(" never")[0] for _, _, message in lint("no-deterministic-algos", code)] == [
        "this MindSpore entry script"]


def test_dist_comm_reads_the_backend_a_name_was_given_before_the_call():
    """ConvNeXt's `args.dist_backend = 'nccl'` before `init_process_group(backend=args.dist_backend)`: NCCL's
    message, as for the literal."""
    code = """
        import torch


        def init_distributed_mode(args):
            args.dist_backend = 'nccl'
            torch.distributed.init_process_group(backend=args.dist_backend, init_method=args.dist_url)
    """
    assert [message.split(" is initialised")[0] for _, _, message in lint("dist-no-deterministic-comm", code)] == [
        "NCCL communication"]


@pytest.mark.parametrize(("setup", "expected"), [
    ("dist.initialize_dist()", ["NCCL communication"]),  # the GPU when there is one
    ("dist.initialize_dist(get_device(None), timeout=30)", ["NCCL communication"]),
    ("device = get_device(None)\n    dist.initialize_dist(device)", ["NCCL communication"]),
    # llm-foundry's tests/fixtures/autouse.py
    ("dist.initialize_dist(get_device('gpu' if gpu else 'cpu'))", ["NCCL communication"]),
    ("dist.initialize_dist(get_device('cpu'))", []), ("dist.initialize_dist('tpu')", []),
    ("dist.initialize_dist(device)", ["distributed communication"]),  # not known: both advices
])
def test_dist_comm_composer_starts_the_backend_of_its_device(setup, expected):
    """Composer's `dist.initialize_dist(device)` calls init_process_group with its device's backend."""
    code = f"from composer.utils import dist, get_device\n\n\ndef start(device, gpu):\n    {setup}\n"
    assert [message.split(" is initialised")[0] for _, _, message in lint("dist-no-deterministic-comm", code)] == \
        expected


@pytest.mark.parametrize("importing", ["import utils", "from . import utils", "import utils as U"])
def test_host_sync_follows_helpers_called_on_a_project_module(tmp_path, importing):
    """DINO's `utils.clip_gradients(student, clip)`: a function of an imported project module, called on the
    module, whose body reads a tensor on the host at every call."""
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    (tmp_path / "__init__.py").write_text("")
    (tmp_path / "utils.py").write_text(textwrap.dedent("""\
        import torch


        def clip_gradients(model, clip):
            norms = torch.stack([p.grad.norm() for p in model.parameters()])
            coef = (clip / (norms + 1e-6)).cpu().numpy()
            return coef
        """))
    alias = importing.rpartition(" ")[2]
    source = (f"import torch\n{importing}\n\n\ndef train(model, loader, optimizer):\n    for x in loader:\n"
              f"        model(x).sum().backward()\n        {alias}.clip_gradients(model, 3.0)\n"
              f"        {alias}.missing(model)\n        optimizer.step()\n")
    path = tmp_path / "train.py"
    path.write_text(source)
    found = lint_source(str(path), source.encode(), [RULES_BY_NAME["host-sync-in-loop"]]).findings
    assert [(f.line, f.code) for f in found] == [(8, "MSP502")]
    assert "`.numpy()` on line 6 of utils.py" in found[0].message


def test_no_deterministic_algos_hccl_backend_gets_ascend_advice():
    code = """
        import torch
        import torch.distributed as dist

        if __name__ == "__main__":
            if args.is_npu:
                torch.npu.set_device(args.local_rank)
            else:
                torch.cuda.set_device(args.local_rank)
            dist.init_process_group(backend="hccl", init_method="env://")
            model = torch.nn.Linear(2, 2)
            opt = torch.optim.SGD(model.parameters(), lr=0.1)
            model(torch.randn(2, 2)).sum().backward()
            opt.step()
    """
    ((_, _, message),) = lint("no-deterministic-algos", code)
    assert "runs on Ascend" in message and "CUBLAS" not in message


def test_tf32_impl_mode_names_the_operator_types_it_is_narrowed_to():
    code = """
        import torch
        import torch_npu

        option = {"ACL_OP_SELECT_IMPL_MODE": "high_performance", "ACL_OPTYPELIST_FOR_IMPLMODE": "LayerNorm"}
        torch.npu.set_option(option)
    """
    ((_, severity, message),) = lint("tf32-enabled", code)
    assert severity == "warning" and "for `LayerNorm` only" in message


LLAVA_TRAIN = """
import transformers


def train(attn_implementation=None):
    model = transformers.AutoModelForCausalLM.from_pretrained("m", attn_implementation=attn_implementation)
    transformers.Trainer(model=model, args=transformers.TrainingArguments("out")).train()
"""


@pytest.mark.parametrize(("launcher", "expected"), [
    ('from llava.train import train\n\nif __name__ == "__main__":\n    train(attn_implementation="flash_attention_2")\n',
     [4]),
    ('import os\n\nfrom llava.train import train\n\nos.environ["FLASH_ATTENTION_DETERMINISTIC"] = "1"\n\n'
     'if __name__ == "__main__":\n    train(attn_implementation="flash_attention_2")\n', []),
    ('from llava.train import train\n\nif __name__ == "__main__":\n    train(attn_implementation="sdpa")\n', []),
])
def test_transformers_flash_attention_chosen_by_a_launcher_of_project_training(tmp_path, launcher, expected):
    """LLaVA's train_mem.py hands `attn_implementation="flash_attention_2"` to train.py's `train()`, which trains
    with HF's Trainer: the FlashAttention backward is atomic unless FLASH_ATTENTION_DETERMINISTIC=1."""
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'llava'\n")
    (tmp_path / "llava").mkdir()
    (tmp_path / "llava" / "__init__.py").write_text("")
    (tmp_path / "llava" / "train.py").write_text(LLAVA_TRAIN)
    path = tmp_path / "train_mem.py"
    path.write_text(launcher)
    result = lint_source(str(path), path.read_bytes(), [RULES_BY_NAME["nondeterministic-op"]])
    assert [f.line for f in result.findings] == expected


@pytest.mark.parametrize(("setup", "expected"), [("", [8]), ("torch.set_default_device('cuda')\n", [8, 9])])
def test_host_sync_tensor_made_of_a_python_value(setup, expected):
    """LLaMA-Factory's `torch.isfinite(torch.tensor(grad_norm))` of the norm read with `.item()` tests a host tensor:
    only the read syncs, unless the file makes an accelerator the default device."""
    code = ("import torch\n" + setup + "\nfor x in loader:\n    loss = model(x).sum()\n    loss.backward()\n"
            "    norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)\n"
            "    grad_norm = norm.item()\n    if torch.isfinite(torch.tensor(grad_norm)):\n        optimizer.step()\n")
    shift = setup.count("\n")
    assert lines("host-sync-in-loop", code) == [line + shift - 1 for line in expected]


@pytest.mark.parametrize("update", ["optimizer.step()", "optimizer.zero_grad()"])
def test_host_sync_early_exit_of_gradient_accumulation_runs_every_step(update):
    """`if (i + 1) % accum != 0: continue` before the optimizer step: what follows runs at every training step; so
    where it only zeroes the gradients, the step running in a closure called before (timm's train.py, `if not
    need_update: continue` then `optimizer.zero_grad()` and `torch.cuda.synchronize()`)."""
    code = ("import torch\n\nfor i, x in enumerate(loader):\n    loss = model(x).sum()\n    loss.backward()\n"
            "    if (i + 1) % accum != 0:\n        continue\n    " + update + "\n    print(loss.item())\n")
    assert lines("host-sync-in-loop", code) == [9]


def test_host_sync_latch_attribute_short_circuits_the_test():
    """mmpretrain's SwAVLoss: `if self.use_queue or not torch.all(...): self.use_queue = True`."""
    code = ("import torch\n\nfor x in loader:\n    loss = model(x).sum()\n"
            "    if self.use_queue or not torch.all(queue[-1] == 0):\n        self.use_queue = True\n"
            "    if self.other or not torch.all(queue[0] == 0):\n        self.use_queue = True\n"
            "    loss.backward()\n    optimizer.step()\n")
    assert lines("host-sync-in-loop", code) == [7]


def test_host_sync_accumulation_stepped_in_a_closure():
    """timm's train.py steps in `_backward` under `if need_update:` and, after `if not need_update: continue`,
    zeroes the gradients and synchronizes: the sync runs at every optimizer step (one a batch by default)."""
    code = ("import torch\n\nfor i, x in enumerate(loader):\n    need_update = (i + 1) % accum == 0\n\n"
            "    def _backward(loss):\n        loss.backward()\n        if need_update:\n            optimizer.step()\n\n"
            "    _backward(model(x).sum())\n    if not need_update:\n        continue\n    optimizer.zero_grad()\n"
            "    torch.cuda.synchronize()\n")
    assert lines("host-sync-in-loop", code) == [15]

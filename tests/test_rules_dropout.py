"""MSP401 dropout: fused attention kernels outside torch, layers derived from torch's and MindSpore's, dropouts
built only under a parameter's condition, and the wording of Transformer Engine's findings."""

from __future__ import annotations

import textwrap

import pytest
from msprobe_rewriter.lint.engine import lint_source
from msprobe_rewriter.rules import RULES_BY_NAME
from project_helpers import lint_findings, write

RULE = RULES_BY_NAME["dropout"]


def lint(code: str):
    """(line, severity, message) of each MSP401 finding on a dedented snippet."""
    result = lint_source("snippet.py", textwrap.dedent(code).encode(), [RULE])
    assert not result.errors, result.errors
    return [(f.line, f.severity, f.message) for f in result.findings if f.code == RULE.code]


def lines(code: str) -> list[int]:
    return [line for line, _, _ in lint(code)]


FA = "import torch\nfrom flash_attn import flash_attn_func, flash_attn_qkvpacked_func, flash_attn_varlen_func\n"
FA1 = "import torch\nfrom flash_attn.flash_attn_interface import flash_attn_unpadded_func, flash_attn_unpadded_qkvpacked_func\n"
XF = "import torch\nimport xformers.ops as xops\nfrom xformers.ops import memory_efficient_attention\n"


@pytest.mark.parametrize(("code", "expected"), [
    (FA + "out = flash_attn_func(q, k, v, 0.1)\n", [3]),  # dropout_p is the fourth argument
    (FA + "out = flash_attn_func(q, k, v, 0.0, causal=True)\n", []),
    (FA + "out = flash_attn_func(q, k, v, dropout_p=p if training else 0.0)\n", [3]),
    (FA + "out = flash_attn_qkvpacked_func(qkv, 0.1)\n", [3]),
    (FA + "out = flash_attn_varlen_func(q, k, v, cu, cu, n, n, 0.1)\n", [3]),
    (FA + "out = flash_attn_varlen_func(q, k, v, cu, cu, n, n)\n", []),  # dropout_p defaults to 0
    (FA1 + "out = flash_attn_unpadded_func(q, k, v, cu, cu, n, n, 0.1)\n", [3]),
    (FA1 + "out = flash_attn_unpadded_qkvpacked_func(qkv, cu, n, 0.0)\n", []),
    (XF + "out = xops.memory_efficient_attention(q, k, v, mask, 0.2)\n", [4]),  # p is the fifth argument
    (XF + "out = memory_efficient_attention(q, k, v, p=0.0)\n", []),
    (XF + "out = xops.memory_efficient_attention(q, k, v)\n", []),
])
def test_kernel_attention_dropout(code, expected):
    assert lines(code) == expected


def test_kernel_attention_dropout_is_out_of_seed_alls_reach():
    found = lint(FA + "from msprobe_runtime.pytorch import seed_all\n\nseed_all(1234, rm_dropout=True)\n"
                      "out = flash_attn_func(q, k, v, dropout_p=0.1)\n")
    ((line, severity, message),) = found
    assert (line, severity) == (6, "warning")
    assert "`seed_all(rm_dropout=True)` does not reach" in message and "dropout_p=0.0" in message


def test_attribute_alias_is_per_class():
    """`self.attend = flash_attn_func` makes `self.attend(...)` that function in its class only."""
    assert lines(FA + textwrap.dedent("""\


        class FlashAttention(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.attend = flash_attn_func

            def forward(self, q, k, v):
                return self.attend(q, k, v, dropout_p=0.1)


        class Plain(torch.nn.Module):
            def forward(self, q, k, v):
                return self.attend(q, k, v, dropout_p=0.1)
        """)) == [11]


@pytest.mark.parametrize(("init", "expected"), [
    ("super().__init__(d_model, nhead, 2048, 0.1, batch_first=True)", [7]),
    ("super().__init__(d_model, nhead, dropout=0.0)", []),
    ("super().__init__(d_model, nhead)", [7]),  # dropout=0.1 by default
    ("super().__init__(d_model, nhead, **kwargs)", []),  # may pass it
    ("super().__init__(d_model, nhead, *kwargs.values())", []),  # likewise
    ("super(Layer, self).__init__(d_model, nhead, dropout=dropout)", [7]),  # dropout=0.1 below
])
def test_subclass_of_transformer_layer_is_checked_at_super_init(init, expected):
    assert lines(f"""\
        import torch.nn as nn


        class Layer(nn.TransformerEncoderLayer):
            def __init__(self, d_model, nhead, dropout=0.1, **kwargs):
                x = 1
                {init}
        """) == expected


def test_subclass_of_transformer_layer_is_removed_by_seed_all():
    """seed_all(rm_dropout=True) reaches torch's layers, derived or not (unlike Transformer Engine's)."""
    assert lint("""\
        import torch.nn as nn
        from msprobe_runtime.pytorch import seed_all

        seed_all(1234, rm_dropout=True)


        class Layer(nn.TransformerEncoderLayer):
            def __init__(self, d_model, nhead):
                super().__init__(d_model, nhead, 2048, 0.1)
        """) == []


MS_DROPOUT = """\
import mindspore.nn as nn


class Dropout(nn.Dropout):
    def __init__(self, drop_prob):
        super().__init__(keep_prob=1 - drop_prob)

"""


def test_project_dropout_with_own_parameters_is_checked_at_super_init():
    """mindediting's `Dropout(drop_prob)`: its calls take a drop probability (keep_prob advice would not run)."""
    found = lint(MS_DROPOUT + "\nhead = Dropout(0.1)\noff = Dropout(0.0)\n")
    assert [(line, severity) for line, severity, _ in found] == [(6, "warning")]


def test_project_dropout_off_in_every_call_is_info():
    ((_, severity, message),) = lint(MS_DROPOUT + "\noff = Dropout(0.0)\n")
    assert severity == "info" and "`drop_prob` > 0: 0 in every call in this file" in message


def test_project_dropout_handing_arguments_on_is_checked_where_built():
    assert lines("""\
        import torch.nn as nn


        class Dropout(nn.Dropout):
            def __init__(self, *args, **kwargs):
                super().__init__(*args, **kwargs)


        head = Dropout(0.1)
        """) == [9]


NAF_BLOCK = """\
import mindspore.nn as nn


class Block(nn.Cell):
    def __init__(self, c, drop_out_rate=0.0):
        super().__init__()
        self.dropout = nn.Dropout(p=drop_out_rate) if drop_out_rate > 0.0 else None
"""


@pytest.mark.parametrize(("call", "severity"), [
    ("Block(8)", "info"),
    ("Block(8, drop_out_rate=0.0)", "info"),
    ("Block(8, drop_out_rate=0.1)", "warning"),
    ("Block(8, 0.1)", "warning"),
])
def test_dropout_built_under_a_parameters_condition(call, severity):
    ((_, found, _),) = lint(NAF_BLOCK + f"\n\nblock = {call}\n")
    assert found == severity


def test_condition_on_a_parameter_the_model_turns_on_stays_a_warning():
    """LPIPS: the linear layer's `use_dropout=False`, but the model passes its own `use_dropout=True`."""
    found = lint("""\
        import mindspore.nn as nn


        class NetLinLayer(nn.Cell):
            def __init__(self, chn_in, use_dropout=False):
                super().__init__()
                self.layers = [nn.Dropout(p=0.5)] if use_dropout else []


        class Model(nn.Cell):
            def __init__(self, use_dropout=True):
                super().__init__()
                self.lin = NetLinLayer(64, use_dropout=use_dropout)
        """)
    assert [(line, severity) for line, severity, _ in found] == [(7, "warning")]


def test_rate_through_float_is_traced():
    """mindrl's `nn.Dropout(p=float(dropout))`, with `dropout=0.` that no call sets."""
    ((_, severity, message),) = lint("""\
        import mindspore.nn as nn


        class RNN(nn.Cell):
            def __init__(self, hidden, dropout=0.):
                super().__init__()
                self.dropout_op = nn.Dropout(p=float(dropout))
        """)
    assert severity == "info" and "`dropout` > 0" in message


def test_rate_stored_in_init_is_traced_to_its_parameter():
    """InternViT's FlashAttention: `self.dropout_p = attention_dropout` (0.0, no call sets it), used only in training."""
    ((_, severity, message),) = lint(FA + textwrap.dedent("""\


        class FlashAttention(torch.nn.Module):
            def __init__(self, softmax_scale=None, attention_dropout=0.0):
                super().__init__()
                self.dropout_p = attention_dropout

            def forward(self, qkv, cu, n):
                return flash_attn_varlen_func(qkv, qkv, qkv, cu, cu, n, n, self.dropout_p if self.training else 0.0)
        """))
    assert severity == "info" and "`attention_dropout` > 0" in message


def test_rate_passed_in_a_dict_of_options_counts():
    """audiocraft: the layer hands its `dropout=0.1` to the attention in `attn_kwargs`."""
    ((_, severity, _),) = lint("""\
        import torch.nn as nn


        class Attention(nn.Module):
            def __init__(self, dim, dropout=0.0):
                super().__init__()
                self.drop = nn.Dropout(dropout)


        class Layer(nn.Module):
            def __init__(self, dim, dropout=0.1):
                super().__init__()
                attn_kwargs = {"dim": dim, "dropout": dropout}
                self.attn = Attention(**attn_kwargs)
        """)
    assert severity == "warning"


EDM_BLOCK = """\
    import torch


    class Block(torch.nn.Module):
        def __init__(self, c, dropout=0):
            super().__init__()
            self.dropout = dropout

        def forward(self, x):
            return torch.nn.functional.dropout(x, p=self.dropout, training=self.training)


    class UNet(torch.nn.Module):
        def __init__(self, dropout=0.10, **kwargs):
            super().__init__()
"""


@pytest.mark.parametrize(("build", "severity"), [
    ("            block_kwargs = dict(c=4, dropout=dropout)\n            self.a = Block(**block_kwargs)\n", "warning"),
    ("            self.a = Block(4, **self.options)\n", "warning"),  # may pass any rate
    ("            self.a = Block(4, **kwargs)\n", "info"),  # its own `**kwargs`, unlike `dropout`, cannot hold it
    # a mapping without the rate, which later code may add: unknown
    ("            block_kwargs = dict(c=4)\n            self.a = Block(**block_kwargs, **kwargs)\n", "warning"),
    ("            self.a = Block(4, **kwargs)\n\n\n    def build(**kwargs):\n        return Block(4, **kwargs)\n", "info"),
    ("            self.a = Block(4, **kwargs)\n\n\n    def build(**kwargs):\n        return Block(4, **kwargs)\n\n\n"
     "    net = build(dropout=0.3)\n", "warning"),
    ("            block_kwargs = dict(dropout=0.0)\n            self.a = Block(4, **block_kwargs)\n", "info"),
    ("            self.a = Block(4)\n", "info"),
])
def test_rate_behind_double_star_is_unknown_unless_read(build, severity):
    """edm hands its blocks `dropout=0.10` in `block_kwargs = dict(...)`; an unread `**mapping` may pass any."""
    ((_, found, _),) = lint(EDM_BLOCK + build)
    assert found == severity


@pytest.mark.parametrize(("call", "severity"), [
    ("", "info"),  # the factory's own `**kwargs`: nothing in this file passes a rate
    ("model = iresnet18(num_features=128)\n", "info"),
    ("model = iresnet18(dropout=0.2)\n", "warning"),
    ("model = iresnet18(**config)\n", "warning"),
])
def test_rate_through_a_factorys_own_kwargs_follows_its_callers(call, severity):
    """mindface's and mindcv's model factories hand their `**kwargs` to the model: what their callers pass."""
    ((_, found, _),) = lint("""\
        import torch.nn as nn


        class IResNet(nn.Module):
            def __init__(self, layers, dropout=0, num_features=512):
                super().__init__()
                self.dropout = nn.Dropout(p=dropout)


        def _iresnet(layers, pretrained, **kwargs):
            return IResNet(layers, **kwargs)


        def iresnet18(pretrained=False, **kwargs):
            return _iresnet([2, 2, 2, 2], pretrained, **kwargs)


        """ + call)
    assert found == severity


def test_rate_of_a_closure_is_its_outer_functions_parameter():
    """minddiffusion's PLMS: the dropout in a nested function reads the sampler method's `noise_dropout=0.`."""
    code = """\
        from mindspore import ops


        class Sampler:
            def sample(self, x, noise_dropout=0.):
                return self.p_sample(x, noise_dropout=noise_dropout)

            def p_sample(self, x, noise_dropout=0.):
                def step(noise):
                    if noise_dropout > 0.:
                        noise, _ = ops.dropout(noise, p=noise_dropout)
                    return noise

                return step(x)
        """
    ((line, severity, message),) = lint(code)
    assert (line, severity) == (11, "info")
    assert "`noise_dropout` > 0" in message
    ((_, severity, _),) = lint(code.replace("noise_dropout=noise_dropout", "noise_dropout=0.1"))
    assert severity == "warning"


@pytest.mark.parametrize(("options", "expected"), [
    ('module_kwargs={"p": config.embd_pdrop}', [(5, "warning")]),
    ("module_kwargs={}", [(5, "warning")]),  # nn.Dropout's p=0.5
    ('module_kwargs={"p": 0.0}', []),
    ("module_kwargs=kwargs", []),  # its arguments not seen here
])
def test_dropout_class_handed_to_a_builder(options, expected):
    """nanotron: `PipelineBlock(module_builder=nn.Dropout, module_kwargs={...})`."""
    found = lint(f"""\
        import torch.nn as nn


        def build(config, p2p, kwargs):
            return PipelineBlock(p2p=p2p, module_builder=nn.Dropout,
                                 {options})
        """)
    assert [(line, severity) for line, severity, _ in found] == expected


def test_dropout_under_a_stored_switch_off_by_default_is_info():
    """`if self.use_dropout:` where `__init__` stores `use_dropout=False`, which no call in the file sets."""
    ((_, severity, message),) = lint("""\
        import torch.nn as nn


        class Head(nn.Module):
            def __init__(self, use_dropout=False):
                super().__init__()
                self.use_dropout = use_dropout
                if self.use_dropout:
                    self.drop = nn.Dropout(0.1)
        """)
    assert severity == "info"
    assert "built only when `self.use_dropout`" in message


def test_parameter_of_forward_is_not_settled_by_calls_by_name():
    """A module's `forward` runs through `module(x, p)`: its parameters are not known to stay at their defaults."""
    ((_, severity, _),) = lint("""\
        import torch.nn as nn
        import torch.nn.functional as F


        class Head(nn.Module):
            def forward(self, x, p=0.0):
                return F.dropout(x, p, self.training)
        """)
    assert severity == "warning"


TE = "import transformer_engine as te\n\n\nclass Attention(te.pytorch.{base}):\n    def __init__(self, args):\n"


@pytest.mark.parametrize(("base", "init", "named", "unnamed"), [
    # gpt-neox passes its option: no default to speak of
    ("MultiheadAttention", "super().__init__(args.hidden, args.heads, attention_dropout=args.attention_dropout)",
     "`attention_dropout=` inside", "default"),
    ("MultiheadAttention", "super().__init__(args.hidden, args.heads)", "`attention_dropout=` (default 0.1)", None),
    ("TransformerLayer", "super().__init__(args.hidden, args.ffn, args.heads, hidden_dropout=0.0)",
     "`attention_dropout=` (default 0.1)", "hidden_dropout"),
])
def test_transformer_engine_names_default_only_when_not_given(base, init, named, unnamed):
    ((_, _, message),) = lint(TE.format(base=base) + f"        {init}\n")
    assert named in message
    assert unnamed is None or unnamed not in message


HTSAT = '''
import torch
import torch.nn as nn


class DropPath(nn.Module):
    def __init__(self, drop_prob=None):
        super().__init__()
        self.drop_prob = drop_prob


class Block(nn.Module):
    def __init__(self, dim, drop=0.0, drop_path=0.0):
        super().__init__()
        self.drop = nn.Dropout(drop)
        self.drop_path = DropPath(drop_path) if drop_path > 0.0 else nn.Identity()


class Layer(nn.Module):
    def __init__(self, dim, depth, drop=0.0, drop_path=0.0):
        super().__init__()
        self.blocks = nn.ModuleList([
            Block(dim, drop=drop, drop_path=drop_path[i] if isinstance(drop_path, list) else drop_path)
            for i in range(depth)])


class Encoder(nn.Module):
    def __init__(self, dim=96, depths=(2, 2), drop_rate=0.0, drop_path_rate=0.1):
        super().__init__()
        self.drop_rate = drop_rate
        self.drop_path_rate = drop_path_rate
        dpr = [x.item() for x in torch.linspace(0, self.drop_path_rate, sum(depths))]
        self.layers = nn.ModuleList([Layer(dim, d, drop=self.drop_rate, drop_path=dpr[:d]) for d in depths])


model = Encoder({args})
'''


@pytest.mark.parametrize(("args", "expected"), [
    ("dim=128", [(15, "info"), (16, "warning")]),
    ("dim=128, drop_path_rate=0.0", [(15, "info")]),  # the file's only call sets the default off
    ("dim=128, drop_rate=0.1, **extra", [(15, "warning")]),  # the options may set anything
])
def test_rates_handed_down_a_constructor_chain(args, expected):
    """open_clip's HTSAT: rates stored in attributes (`drop=self.drop_rate`) and a stochastic depth rate spread over
    the blocks from a non-zero default (`dpr = ...linspace(0, self.drop_path_rate, n)`, `dpr[:d]`, `drop_path[i]`)."""
    found = lint(HTSAT.format(args=args))
    assert [(line, severity) for line, severity, _ in found] == expected
    if (16, "warning") in expected:
        assert found[-1][2].endswith("(its rate comes from `Encoder(drop_path_rate=0.1)`, a default that no call in "
                                     "this file changes)")


ALEXNET = """\
import mindspore as ms
from mindspore import nn


class AlexNet(nn.Cell):
    def __init__(self, num_classes=1000):
        super().__init__()
        self.features = nn.SequentialCell(nn.Conv2d(3, 64, 11), nn.ReLU())
        self.classifier = nn.SequentialCell(nn.Dropout(), nn.Dense(256, num_classes))

    def construct(self, x):
        return self.classifier(self.features(x))


def alexnet(pretrained=None):
    model = AlexNet()
    if pretrained:
        ms.load_param_into_net(model, ms.load_checkpoint(pretrained), strict_load=True)
    return model
"""


@pytest.mark.parametrize(("use", "severity"), [
    ("self.features = models_alexnet(path).features", "info"),
    ("net = models_alexnet(path)\n        self.features = net.features\n        self.head = net", "warning"),
    ("self.net = models_alexnet(path)", "warning"),
    ("self.build = models_alexnet  # called elsewhere, its instance unknown", "warning"),
    ("net = models_alexnet(path)\n        self.features = net.features\n        self.run = lambda x: net(x)", "warning"),
])
def test_dropout_in_an_attribute_no_instance_runs_is_info(tmp_path, use, severity):
    """mindediting's metrics/lpips.py takes `alexnet(path).features` only: the classifier's dropout never runs."""
    metric = ("from mindspore import nn\n\nfrom models.alexnet import alexnet as models_alexnet\n\n\n"
              f"class Perceptual(nn.Cell):\n    def __init__(self, path):\n        super().__init__()\n        {use}\n")
    root = write(tmp_path, {"pyproject.toml": "", "models/alexnet.py": ALEXNET, "perceptual.py": metric})
    found = lint_findings(root / "models/alexnet.py", "dropout")
    assert [(f.line, f.severity) for f in found] == [(9, severity)]
    assert (severity == "info") == ("`self.classifier` never runs" in found[0].message)


SWIFT_PEFT = """
import peft


class LoraConfig(peft.LoraConfig):
    lora_dtype = None
"""


def test_project_subclass_of_lora_config_imported_in_a_function(tmp_path):
    """ms-swift's prepare_adapter: `from swift.tuners import LoraConfig` (its package's re-export of its own subclass
    of peft's) inside the function, the rate in the dict it unpacks into the config."""
    tuner = ("import torch\n\n\ndef prepare_adapter(args, modules):\n    from swift.tuners import LoraConfig\n"
             "    lora_kwargs = {'r': args.lora_rank, 'target_modules': modules, 'lora_dropout': args.lora_dropout}\n"
             "    return LoraConfig(task_type='CAUSAL_LM', **lora_kwargs)\n")
    root = write(tmp_path, {"pyproject.toml": "", "swift/__init__.py": "", "swift/tuners/peft.py": SWIFT_PEFT,
                            "swift/tuners/__init__.py": "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n"
                                                        "    from .peft import LoraConfig\n",
                            "swift/train/tuner.py": tuner})
    found = lint_findings(root / "swift/train/tuner.py", "dropout")
    assert [(f.line, f.severity) for f in found] == [(7, "warning")]

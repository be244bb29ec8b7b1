"""MSP401 dropout: layers, functions and attention arguments that drop activations at random."""

from __future__ import annotations

import ast
import re

from msprobe_rewriter import catalogue, conditions, instances, opt_in
from msprobe_rewriter.call_defaults import PARAMETER_DEPTH, LeftAtDefault, dict_items, is_value
from msprobe_rewriter.conditions import condition_text
from msprobe_rewriter.context import (
    FUNCTION_TYPES,
    NOT_CONSTANT,
    argument,
    constant,
    keyword,
    parameter_defaults,
    switch_guard,
    target_name,
)
from msprobe_rewriter.rules.base import Invalid, Rule
from msprobe_rewriter.values import UNKNOWN, FollowsValues, LocalValues

# Last components of every dropout API: calls named otherwise are skipped without resolving them.
DROPOUT_NAMES = frozenset(q.rsplit(".", 1)[1] for table in (
    catalogue.TORCH_DROPOUT_MODULES, catalogue.TORCH_DROPOUT_FUNCTIONS, catalogue.TORCH_DROPOUT_KEYWORD_MODULES,
    catalogue.SDPA_FUNCTIONS, catalogue.MINDSPORE_DROPOUT, catalogue.MINDSPORE_FUSED_DROPOUT_MASKS,
    catalogue.NPU_DROP_PROBABILITY, catalogue.ADAPTER_DROPOUT_CONFIGS, catalogue.MINDSPORE_CALL_TIME_DROPOUT,
    catalogue.MINDSPORE_DROPOUT_OPS, catalogue.FUSED_ATTENTION_KEEP_PROBABILITY, catalogue.TE_DROPOUT_MODULES,
    catalogue.KERNEL_ATTENTION_DROPOUT)
    for q in table)
# Library classes whose dropout a derived class sets in its `super().__init__(...)` (Megatron's
# `TEDotProductAttention`, audiocraft's `StreamingTransformerLayer(nn.TransformerEncoderLayer)`, mindediting's
# `Dropout(nn.Dropout)`): checked there, with the base's arguments.
DROPOUT_BASES = (frozenset(catalogue.TE_DROPOUT_MODULES) | frozenset(catalogue.TORCH_DROPOUT_KEYWORD_MODULES)
                 | catalogue.SUBCLASSED_DROPOUT)
# Kernels whose drop probability is an argument of the call, always applied: name -> its (position, keyword).
DROP_PROBABILITY = {**catalogue.NPU_DROP_PROBABILITY, **catalogue.MINDSPORE_DROPOUT_OPS}
# ... and of every stochastic-depth (DropPath) API.
STOCHASTIC_DEPTH_NAMES = frozenset(q.rsplit(".", 1)[1] for table in (
    catalogue.STOCHASTIC_DEPTH_MODULES, catalogue.STOCHASTIC_DEPTH_FUNCTIONS) for q in table) | {
    catalogue.STOCHASTIC_DEPTH_CLASS}
FACTORY_DROPOUT_MESSAGE = ("`drop_rate=` turns on the model's dropout layers, each drawing a new random mask every "
                           "step: pass `drop_rate=0.` while debugging")
# OpenMMLab configs (`model = dict(type=..., ...)` at module level): the keys of the model's layer configs that set a
# dropout probability (mmdet's DETR: `self_attn_cfg=dict(..., dropout=0.1)`, `ffn_cfg=dict(..., ffn_drop=0.1)`).
CONFIG_DROPOUT_KEYS = frozenset({"dropout", "drop_rate", "attn_drop_rate", "attn_drop", "ffn_drop", "proj_drop",
                                 "dropout_rate"})
CONFIG_DROPOUT_MESSAGE = ("`{key}={value}` in the model's config builds dropout, which draws a new random mask every "
                          "training step: set it to 0. while debugging")
DROP_PATH_MESSAGE = ("{what} turns on stochastic depth: every training step drops whole residual branches at random, "
                     "which msprobe's `seed_all(rm_dropout=True)` leaves on (msprobe-kit's turns it off); {fix} while "
                     "debugging")

# Functions that drop whole samples' paths at random, named so (stochastic depth written by hand), and the draws
# of their masks.
HAND_DROP_NAME = re.compile(r"_?(drop_?connect|drop_?path|drop_?block|layer_?drop|stochastic_?depth)$", re.IGNORECASE)
MASK_DRAWS = frozenset({"bernoulli_", "bernoulli", "rand", "rand_like", "uniform_"})
HAND_DROP_MESSAGE = ("`{function}` drops paths at random (stochastic depth written by hand), with a new mask every "
                     "step; pass it a rate of 0 while debugging (`seed_all(rm_dropout=True)` does not reach code "
                     "written by hand)")
FUSED_NOTE = " (`seed_all(rm_dropout=True)` does not reach MindSpore's fused attention)"
FUSED_MASK_MESSAGE = ("`DropoutGenMask` draws the dropout masks of fused attention, new every step; keep the attention's "
                      "keep_prob at 1.0 while debugging (`seed_all(rm_dropout=True)` does not reach it)")
MINDSPORE_KEEP_MESSAGE = ("dropout draws a new random mask every step; pass `keep_prob=1.0` (or `p=0.0`) while "
                          "debugging (its first argument is the probability of keeping, and 0 raises)")
SEED_NOTE = "; its `Seed0`/`Seed1` do not make it repeat on Ascend, which ignores them"
CALL_TIME_MESSAGE = ("`{name}` drops at random with the probability each call passes, with a new mask every step; "
                     "pass p=0 to its calls while debugging (`seed_all(rm_dropout=True)` removes it in PyNative mode "
                     "only: graph mode compiles it)")
TE_MESSAGE = ("`{name}` drops with {rates} inside Transformer Engine's fused kernels, with a "
              "new mask every step, which `seed_all(rm_dropout=True)` does not reach: set it to 0 while debugging "
              "(Megatron: `--attention-dropout 0 --hidden-dropout 0`)")
KERNEL_ATTENTION_MESSAGE = ("`{name}` drops attention weights with `{keyword}=` inside its own kernel, with a new mask "
                            "every step, which `seed_all(rm_dropout=True)` does not reach: pass {keyword}=0.0 while "
                            "debugging")
KEEP_PROB_MESSAGE = ("`keep_prob` below 1 drops attention weights at random, with a new mask every step; pass "
                     "keep_prob=1.0 while debugging")


class Dropout(FollowsValues, Rule):
    code = "MSP401"
    name = "dropout"
    severity = "warning"
    switched_by_flags = True
    frameworks = ("pytorch", "mindspore")
    fixable = True
    message = "dropout draws a new random mask every step; set its probability to 0 while debugging"
    summary = ("Flags PyTorch and MindSpore dropout layers and functions, `dropout=` of attention, transformer and "
               "stacked recurrent modules (including `nn.Transformer*`'s implicit 0.1; in a class derived from one, at its "
               "`super().__init__(...)`), a non-zero literal `dropout=`, `ffn_drop=`, `attn_drop=`, `drop_rate=`, ... in a "
               "`dict(...)` of an OpenMMLab config's `model = dict(type=..., ...)` (mmdet's DETR), and `dropout_p=` of `scaled_dot_product_attention`, PEFT's (and mindnlp's) `LoraConfig(lora_dropout=p)` (also a project's "
               "subclass of it, imported anywhere in the file, and a `lora_dropout` key of a dict the function "
               "builds and unpacks into it: ms-swift's `LoraConfig(..., **lora_kwargs)`), unless the "
               "probability is a literal 0 (keep_prob 1); one taken from an option or a parameter that is 0 by default "
               "(a layer's `drop=0.` that no call in the file sets, nor a call in another project file importing its "
               "module (vits' models.py builds attentions.py's `Encoder(..., p_dropout)` from its config: a warning), "
               "down through the models that hand it on, also in "
               "`**options` set to a dict display or `dict(...)` and through a factory's own `**kwargs` (what its callers in the "
               "file pass; any other mapping may set it), and in a nested function; also through "
               "`float(p)`, a keep probability `1 - p`, `p if self.training else 0.0`, an attribute `__init__` stores "
               "from such a parameter, `self.dropout_p`, also one a caller hands down, `drop=self.drop_rate`, and the "
               "rate of the dropout layer `__init__` builds, `self.attn_drop.p`) is info, naming it, and so is a dropout built only under a "
               "condition on such parameters (`nn.Dropout(rate) if rate > 0.0 else None`, `if use_dropout:`), or under an `if` "
               "that the options' defaults make false (a LoRA config under `if training_args.use_lora:`, a DropPath under "
               "a config data class's `if cfg.drop_path_rate > 1e-6:` with `drop_path_rate: float = 0.0`), and `drop_rate=` on timm's and mindcv's `create_model` (the dropout "
               "layers of the model it builds). Also flags stochastic depth: `drop_path_rate=` on any call (timm's and mindcv's `create_model`, "
               "`torch.hub.load`, DINO/DeiT/MAE model factories; timm blocks' `drop_path=`), timm's and mindcv's "
               "`DropPath`, torchvision's `StochasticDepth`, and the `DropPath(p)` copies model code defines, "
               "unless the rate is a literal 0 (also `0 or rate`, which is `rate`: BLIP's `create_vit`) or a per-block value (`dpr[i]`; not a config entry read by name, "
               "`config['drop_path_rate']`) / parameter handed down inside model code, save where that rate comes from "
               "a non-zero default the file's calls leave (open_clip's HTSAT `drop_path_rate=0.1`, spread over the "
               "blocks by `torch.linspace(0, self.drop_path_rate, n)` and handed down as `dpr[a:b]`, `drop_path[i]`); "
               "a dropout class handed to a builder with a "
               "dict of its arguments (nanotron's `PipelineBlock(module_builder=nn.Dropout, module_kwargs={'p': ...})`). On "
               "Ascend: torch_npu's `nn.DropoutWithByteMask` (and its functional and contrib forms), "
               "`npu_dropout_with_add_softmax`, `_npu_dropout`, `npu_dropout_gen_mask`, the old `torch.npu_dropoutV2`, and "
               "`npu_fusion_attention` (and its older name `npu_flash_attention`) and `npu_fusion_attention_v2` (and MindSpeed's `npu_fusion_attention` from "
               "`mindspeed.ops.fusion_attention_v2`) with a `keep_prob` other than 1; Transformer Engine's `DotProductAttention`, `MultiheadAttention` and "
               "`TransformerLayer` (Megatron's default `transformer_impl`; also `super().__init__` in a class derived "
               "from one) with an `attention_dropout=` / `hidden_dropout=` other than 0, and FlashAttention's "
               "`flash_attn_func` (and its packed, varlen and 1.x `unpadded` forms; `dropout_p`) and xformers' "
               "`memory_efficient_attention` (`p`), also called through an attribute (`self.attend = flash_attn_func`) "
               "(all reported even where `seed_all(rm_dropout=True)` runs: their fused kernels are out of its reach); "
               "MindSpore's `FlashAttentionScore` and "
               "`flash_attention_score` likewise, the keep_prob primitives however imported (`P.Dropout(keep_prob)`), the "
               "generated `ops.auto_generate.DropoutExt` / `FuncDropoutExt` / `Dropout2dExt` (which take the probability "
               "with each call: reported where made), their `*_op` instances and `dropout_ext`, and `ops.DropoutGenMask`, which draws the masks of fused attention "
               "(mindformers' flash attention; reported even where `seed_all(rm_dropout=True)` runs, which does not "
               "reach them), and stochastic depth written by hand: a mask drawn in a module-level function named "
               "for it (`drop_connect`, `drop_path`, `drop_block`, `layer_drop`, `stochastic_depth`) in a file "
               "without timm's `DropPath` class (likewise reported where seed_all runs). A file that calls msprobe-kit's "
               "`seed_all(..., rm_dropout=True)` (msprobe-instrument adds it) runs with all of it off and gets no "
               "finding; one that calls msprobe's own gets the stochastic-depth findings only. A dropout built into an attribute of a class "
               "(`self.classifier = nn.Sequential(..., nn.Dropout())`) that no instance the project builds runs is info: "
               "every instance (directly or from a factory of its file returning one) is only read for other attributes "
               "(`vgg16(path).features`, mindediting's perceptual losses and metrics), passed to a weight loader or "
               "returned by such a factory, in a function, and the class and its factories are named only in calls (not "
               "registered, subclassed or built by `Model.from_pretrained(...)`). A project subclass of a "
               "dropout layer with parameters of its own (mindediting's `Dropout(drop_prob)` passing "
               "`keep_prob=1 - drop_prob`) is checked at its `super().__init__(...)`, not where it is built.")
    why = ("Dropout zeroes a random subset of activations in every training step. Even with the same seed, the "
           "masks differ between devices (GPU vs NPU) and between frameworks, so two runs that should match "
           "diverge from the first step, and a precision comparison cannot tell dropout noise from a real bug. "
           "Stochastic depth (DropPath) does the same to whole residual branches, per sample.")
    fix = ("While debugging set the probability to 0 (`nn.Dropout(p=0.0)`, `dropout=0.0`, `dropout_p=0.0`; "
           "MindSpore `keep_prob=1.0` or `p=0.0`), or run the compared steps in `model.eval()` mode. msprobe's "
           "PrecisionDebugger patches `torch.nn.functional.dropout*` and `nn.Dropout*` to p=0 for the same reason. "
           "It does not patch stochastic depth (`DropPath` draws with `bernoulli_`/`torch.rand`): pass "
           "`drop_path_rate=0.` to the model (or construct `DropPath(0.)`) while debugging. msprobe-kit's "
           "`seed_all(rm_dropout=True)`, which `msprobe-instrument` adds, also removes torch_npu's dropouts (not the old "
           "fork's `torch.npu_dropoutV2` and `torch.npu_dropout_gen_mask`; it passes keep_prob=1.0 to "
           "`npu_fusion_attention` (and `npu_flash_attention`), `npu_fusion_attention_v2` and their `_grad` functions, and "
           "to MindSpeed's when "
           "`mindspeed.ops.fusion_attention_v2` is imported before it runs), and makes stochastic depth the "
           "identity, by name: `DropPath` (also `NpuDropPath` and any class named `...DropPath`), `StochasticDepth` "
           "and `DropBlock2d` modules and cells (timm's, "
           "torchvision's, mindcv's and model code's own) and `drop_path`/`stochastic_depth` functions. On MindSpore "
           "it makes the dropout cells the identity in both modes, but the primitives (`ops.Dropout`, "
           "`DropoutExt`, ...) only in PyNative mode: graph mode compiles them, so pass keep_prob=1.0 / p=0 there. "
           "Seeding `ops.Dropout` (`Seed0`/`Seed1`) does not make it repeat on Ascend, which ignores its seeds. "
           "FlashAttention (`dropout_p=`), xformers (`p=`) and Transformer Engine drop inside their own kernels, "
           "which no patching reaches: pass 0.0 there for debugging runs.")
    valid = (
        # Instrumented: msprobe-kit's seed_all(rm_dropout=True) switches every dropout off at run time.
        "import torch.nn as nn\nfrom msprobe_runtime.pytorch import seed_all\n\nseed_all(seed=1234, mode=False, "
        "rm_dropout=True)\nhead = nn.Sequential(nn.Linear(8, 8), nn.Dropout(0.1))\n",
        "import torch.nn as nn\n\nlayer = nn.Dropout(p=0.0)\nattn = nn.MultiheadAttention(512, 8)\n"
        "rnn = nn.LSTM(128, 256, dropout=0.3)  # one layer: dropout never runs\n",
        "import torch.nn.functional as F\n\n\ndef head(x, p):\n    x = F.dropout(x, p, training=False)\n"
        "    return F.alpha_dropout(x, 0.2)  # training defaults to False\n",
        "from torch import nn\n\nenc = nn.TransformerEncoderLayer(d_model=256, nhead=4, dropout=0.0)\n"
        "gru = nn.GRU(64, 64, num_layers=2, dropout=0)\n",
        "import torch\nimport torch.nn.functional as F\n\n\ndef attend(q, k, v):\n"
        "    return F.scaled_dot_product_attention(q, k, v, is_causal=True)\n",
        "import mindspore.nn as nn\nfrom mindspore import ops\n\nkeep = nn.Dropout(keep_prob=1.0)\n"
        "drop = nn.Dropout(p=0.0)\nop = ops.Dropout(1.0)\n",
        "import keras\n\nlayer = keras.layers.Dropout(0.5)  # not torch / MindSpore\n",
        "import torch_npu\n\n\ndef attend(q, k, v, scale):\n"
        "    return torch_npu.npu_fusion_attention(q, k, v, 8, \"BNSD\", scale=scale)[0]  # keep_prob=1.0\n",
        # torch_npu's v2 kernel keeps everything by default; a backward replays the mask its forward drew.
        "import torch_npu\nfrom mindspeed.ops.fusion_attention_v2 import npu_fusion_attention_grad\n\n\n"
        "def attend(q, k, v, n):\n    return torch_npu.npu_fusion_attention_v2(q, k, v, n, \"BNSD\", keep_prob=1.0)[0]\n\n\n"
        "def backward(q, k, v, dout, n, keep_prob):\n"
        "    return npu_fusion_attention_grad(q, k, v, dout, n, \"SBH\", keep_prob=keep_prob)\n",
        "from mindspore.ops.operations.nn_ops import FlashAttentionScore\n\n"
        "attention = FlashAttentionScore(head_num=8, keep_prob=1.0, input_layout=\"BNSD\")\n",
        "from mindspore.ops import operations as P\n\ndrop = P.Dropout(keep_prob=1.0)\n",
        # ModelZoo's ChatGLM2 sets keep_prob once, just before the call.
        "import torch_npu\n\n\ndef attend(q, k, v, n):\n    keep_prob = 1.0\n"
        "    return torch_npu.npu_flash_attention(q, k, v, n, \"SBH\", keep_prob=keep_prob)[0]\n",
        "import torch\n\n\nclass Dropout:\n    pass\n\n\nd = Dropout()  # a local class\n",
        "import timm\nfrom timm.layers import DropPath, drop_path\n\n"
        "model = timm.create_model(\"vit_base_patch16_224\", drop_rate=0., drop_path_rate=0.)\n"
        "layer = DropPath()  # drop_prob defaults to 0\nout = drop_path(layer, 0.1)  # training defaults to False\n",
        "import torch.nn as nn\nfrom timm.models.vision_transformer import Block, VisionTransformer\n\n\n"
        "class Net(VisionTransformer):  # rates handed down: decided (and checked) where the model is built\n"
        "    def __init__(self, depth, drop_path_rate=0., **kwargs):\n"
        "        super().__init__(depth=depth, drop_path_rate=drop_path_rate, **kwargs)\n"
        "        dpr = [drop_path_rate * i / depth for i in range(depth)]\n"
        "        self.extra = nn.ModuleList([Block(8, 2, drop_path=dpr[i]) for i in range(depth)])\n",
        # a block's rate, a parameter defaulting to 0 (DeiT's CaiT and ResMLP blocks): its model passes the rate;
        # BLIP's `create_vit` hands its own on as `0 or drop_path_rate`
        "from models.vit import VisionTransformer\n\n\ndef create_vit(image_size, drop_path_rate=0):\n"
        "    return VisionTransformer(img_size=image_size, drop_path_rate=0 or drop_path_rate)\n",
        "import torch.nn as nn\nfrom timm.models.layers import DropPath\n\n\nclass Block(nn.Module):\n"
        "    def __init__(self, dim, drop_path=0.):\n        super().__init__()\n"
        "        self.drop_path = DropPath(drop_path) if drop_path > 0. else nn.Identity()\n",
        # Transformer Engine's attention with its rate at 0 (DotProductAttention's default)
        "import torch\nimport transformer_engine as te\n\nattention = te.pytorch.DotProductAttention(16, 64)\n"
        "layer = te.pytorch.TransformerLayer(1024, 4096, 16, hidden_dropout=0.0, attention_dropout=0.0)\n",
        # FlashAttention's dropout_p defaults to 0; its Triton version and the kv-cache kernel have no dropout.
        "from flash_attn import flash_attn_func, flash_attn_with_kvcache\n"
        "from flash_attn.flash_attn_triton import flash_attn_func as triton_attention\n\n\n"
        "def attend(q, k, v, bias, k_cache, v_cache):\n    out = flash_attn_func(q, k, v, causal=True)\n"
        "    return out + triton_attention(q, k, v, bias, True) + flash_attn_with_kvcache(q, k_cache, v_cache)\n",
        # An OpenMMLab config with dropout off; a dict that is not the model's config.
        "model = dict(type='DETR', encoder=dict(layer_cfg=dict(self_attn_cfg=dict(dropout=0.0), ffn_drop=0)))\n"
        "head = dict(dropout=0.1)\n",
    )
    invalid = (
        # mindediting's losses and metrics keep only `VGG(...).features`: the classifier's dropout never runs (info);
        # a network that is called runs it
        Invalid("import torch\nimport torch.nn as nn\n\n\nclass VGG(nn.Module):\n    def __init__(self, features):\n"
                "        super().__init__()\n        self.features = features\n"
                "        self.classifier = nn.Sequential(nn.Linear(512, 10), nn.Dropout())\n\n"
                "    def forward(self, x):\n        return self.classifier(self.features(x).flatten(1))\n\n\n"
                "def vgg(layers):\n    model = VGG(layers)\n    model.load_state_dict(torch.load(\"vgg.pt\"))\n"
                "    return model\n\n\nclass Perceptual(nn.Module):\n    def __init__(self, layers):\n"
                "        super().__init__()\n        self.stages = vgg(layers).features\n", lines=(9,), severity="info"),
        Invalid("import torch.nn as nn\n\n\nclass VGG(nn.Module):\n    def __init__(self, features):\n"
                "        super().__init__()\n        self.features = features\n"
                "        self.classifier = nn.Sequential(nn.Linear(512, 10), nn.Dropout())\n\n"
                "    def forward(self, x):\n        return self.classifier(self.features(x).flatten(1))\n\n\n"
                "def classify(layers, x):\n    return VGG(layers)(x)\n", lines=(8,), severity="warning"),
        # Megatron's Transformer Engine modules (its default transformer_impl): fused kernels, which no seed_all reaches
        Invalid("import torch\nimport transformer_engine as te\nfrom msprobe_runtime.pytorch import seed_all\n\n"
                "seed_all(1234, rm_dropout=True)\n\n\nclass TEDotProductAttention(te.pytorch.DotProductAttention):\n"
                "    def __init__(self, config, attention_dropout=None):\n"
                "        super().__init__(num_attention_heads=config.num_attention_heads, attention_dropout=(\n"
                "            config.attention_dropout if attention_dropout is None else attention_dropout))\n\n\n"
                "layer = te.pytorch.TransformerLayer(1024, 4096, 16, attention_dropout=0.0)\n", lines=(10, 14)),
        # FlashAttention and xformers drop in their own kernels, out of seed_all's reach: also a rate that only
        # training uses (gpt-neox), and a function kept as an attribute (OLMo).
        Invalid("import torch\nfrom flash_attn import flash_attn_func, flash_attn_varlen_func\n"
                "from msprobe_runtime.pytorch import seed_all\nfrom xformers import ops\n\nseed_all(1234, rm_dropout=True)\n\n\n"
                "class Attention(torch.nn.Module):\n    def __init__(self, p=0.1):\n        super().__init__()\n"
                "        self.p = p\n        self.varlen = flash_attn_varlen_func\n\n"
                "    def forward(self, q, k, v, cu, n):\n"
                "        a = flash_attn_func(q, k, v, self.p if self.training else 0.0, causal=True)\n"
                "        b = self.varlen(q, k, v, cu, cu, n, n, dropout_p=self.p)\n"
                "        return a + b + ops.memory_efficient_attention(q, k, v, None, p=0.1)\n", lines=(16, 17, 18)),
        # audiocraft's layer derives from torch's, which drops with the rate its `super().__init__` passes.
        Invalid("import torch.nn as nn\n\n\nclass Layer(nn.TransformerEncoderLayer):\n"
                "    def __init__(self, d_model, num_heads, dim_feedforward=2048, dropout=0.1, **kwargs):\n"
                "        super().__init__(d_model, num_heads, dim_feedforward, dropout, batch_first=True, **kwargs)\n",
                lines=(6,)),
        # mindediting's `Dropout` takes torch's drop probability (`Dropout(0.0)` is off): checked where it passes
        # keep_prob on, 1 - 0 in every call of the file.
        Invalid("import mindspore.nn as nn\n\n\nclass Dropout(nn.Dropout):\n    def __init__(self, drop_prob):\n"
                "        super().__init__(keep_prob=1 - drop_prob)\n\n\nclass Mlp(nn.Cell):\n"
                "    def __init__(self, dim, drop=0.0):\n        super().__init__()\n"
                "        self.drop = Dropout(drop) if drop > 0.0 else nn.Identity()\n        self.off = Dropout(0.0)\n",
                lines=(6,), severity="info"),
        # audiocraft hands the layer's rate to its attention in a dict of options: not 0 by default then.
        Invalid("import torch.nn as nn\n\n\nclass Attention(nn.Module):\n    def __init__(self, dropout=0.0):\n"
                "        super().__init__()\n        self.drop = nn.Dropout(dropout)\n\n\nclass Layer(nn.Module):\n"
                "    def __init__(self, dropout=0.1):\n        super().__init__()\n"
                "        attn_kwargs = {\"dropout\": dropout}\n        self.attn = Attention(**attn_kwargs)\n",
                lines=(7,), severity="warning"),
        # edm hands the model's rate to its blocks in `dict(...)` options, and `**kwargs` may pass any: not 0 then.
        Invalid("import torch\n\n\nclass Block(torch.nn.Module):\n    def __init__(self, c, dropout=0):\n"
                "        super().__init__()\n        self.dropout = dropout\n\n    def forward(self, x):\n"
                "        return torch.nn.functional.dropout(x, p=self.dropout, training=self.training)\n\n\n"
                "class UNet(torch.nn.Module):\n    def __init__(self, dropout=0.10, **kwargs):\n        super().__init__()\n"
                "        block_kwargs = dict(dropout=dropout)\n        self.a = Block(4, **block_kwargs)\n"
                "        self.b = Block(4, **kwargs)\n", lines=(10,), severity="warning"),
        # minddiffusion's PLMS sampler drops noise in a nested function, at a rate its callers leave at 0: info.
        Invalid("from mindspore import ops\n\n\nclass Sampler:\n    def sample(self, x, noise_dropout=0.):\n"
                "        return self.p_sample(x, noise_dropout=noise_dropout)\n\n"
                "    def p_sample(self, x, noise_dropout=0.):\n        def step(noise):\n"
                "            return ops.dropout(noise, p=noise_dropout)[0]\n\n        return step(x)\n",
                lines=(10,), severity="info"),
        # nanotron builds its embedding dropout in a pipeline block, from the class and a dict of its arguments.
        Invalid("import torch.nn as nn\nfrom nanotron.parallel.pipeline_parallel.block import PipelineBlock\n\n\n"
                "def build(config, p2p):\n    off = PipelineBlock(p2p=p2p, module_builder=nn.Dropout, module_kwargs={\"p\": 0.0})\n"
                "    return off, PipelineBlock(p2p=p2p, module_builder=nn.Dropout, module_kwargs={\"p\": config.embd_pdrop})\n",
                lines=(7,)),
        # InternViT's FlashAttention stores its rate (0 unless a call sets it) for training: info.
        Invalid("import torch\nfrom flash_attn import flash_attn_varlen_qkvpacked_func\n\n\n"
                "class FlashAttention(torch.nn.Module):\n    def __init__(self, attention_dropout=0.0):\n"
                "        super().__init__()\n        self.dropout_p = attention_dropout\n\n"
                "    def forward(self, qkv, cu, n):\n"
                "        return flash_attn_varlen_qkvpacked_func(qkv, cu, n, self.dropout_p if self.training else 0.0)\n",
                lines=(11,), severity="info"),
        # NAFNet's and mindrl's dropouts, built only when a parameter that no call sets asks for them: info.
        Invalid("import mindspore.nn as nn\n\n\nclass Block(nn.Cell):\n"
                "    def __init__(self, c, drop_out_rate=0.0, keep_probs=None, dropout=0.0):\n        super().__init__()\n"
                "        self.dropout1 = nn.Dropout(drop_out_rate) if drop_out_rate > 0.0 else None\n"
                "        self.dropout2 = nn.Dropout(p=float(dropout))\n        if keep_probs:\n"
                "            self.drops = nn.CellList([nn.Dropout(keep_prob=k) for k in keep_probs])\n\n\n"
                "blocks = [Block(8) for _ in range(4)]\n", lines=(7, 8, 10), severity="info"),
        # ModelZoo's ChatGLM2: `npu_flash_attention`, the older name of `npu_fusion_attention`.
        Invalid("import torch_npu\n\n\ndef attend(q, k, v, n, mask):\n    return torch_npu.npu_flash_attention("
                "q, k, v, n, pse=None, atten_mask=mask, keep_prob=0.9, input_layout=\"SBH\")[0]\n", lines=(5,)),
        # Swin's layers take rates defaulting to 0 that the model hands down and no call in the file sets: info.
        Invalid("import torch.nn as nn\n\n\nclass Mlp(nn.Module):\n    def __init__(self, dim, drop=0.):\n"
                "        super().__init__()\n        self.drop = nn.Dropout(drop)\n\n\nclass Net(nn.Module):\n"
                "    def __init__(self, drop_rate=0., **kwargs):\n        super().__init__()\n"
                "        self.mlp = Mlp(8, drop=drop_rate)\n\n\nmodel = Net(depth=2)\n", lines=(7,), severity="info"),
        # open_clip's HTSAT: the encoder stores its rates (0 by default) and hands them down its layers; its
        # stochastic depth rate defaults to 0.1, spread over the blocks (`dpr`), and a project DropPath draws.
        Invalid("import torch\nimport torch.nn as nn\n\n\nclass DropPath(nn.Module):\n"
                "    def __init__(self, drop_prob=None):\n        super().__init__()\n        self.drop_prob = drop_prob\n\n\n"
                "class Block(nn.Module):\n    def __init__(self, dim, drop=0.0, drop_path=0.0):\n        super().__init__()\n"
                "        self.drop = nn.Dropout(drop)\n"
                "        self.drop_path = DropPath(drop_path) if drop_path > 0.0 else nn.Identity()\n\n\n"
                "class Layer(nn.Module):\n    def __init__(self, dim, depth, drop=0.0, drop_path=0.0):\n        super().__init__()\n"
                "        self.blocks = nn.ModuleList([Block(dim, drop=drop, drop_path=drop_path[i] if isinstance("
                "drop_path, list) else drop_path) for i in range(depth)])\n\n\n"
                "class Encoder(nn.Module):\n    def __init__(self, dim=96, depths=(2, 2), drop_rate=0.0, drop_path_rate=0.1):\n"
                "        super().__init__()\n        self.drop_rate = drop_rate\n        self.drop_path_rate = drop_path_rate\n"
                "        dpr = [x.item() for x in torch.linspace(0, self.drop_path_rate, sum(depths))]\n"
                "        self.layers = nn.ModuleList([Layer(dim, d, drop=self.drop_rate, drop_path=dpr[:d]) for d in depths])\n\n\n"
                "model = Encoder(dim=128)\n", lines=(14, 15)),
        # open_clip's attention: SDPA given the rate of the dropout layer `__init__` builds (0 by default), and a
        # DropPath built under a config data class's switch that is off by default: info.
        Invalid("from dataclasses import dataclass\n\nimport torch.nn as nn\nimport torch.nn.functional as F\n"
                "from timm.layers import DropPath\n\n\n@dataclass\nclass TrunkCfg:\n    drop_path_rate: float = 0.0\n\n\n"
                "class Attention(nn.Module):\n    def __init__(self, dim, attn_drop=0.0):\n        super().__init__()\n"
                "        self.attn_drop = nn.Dropout(attn_drop)\n\n    def forward(self, q, k, v):\n"
                "        return F.scaled_dot_product_attention(q, k, v, dropout_p=self.attn_drop.p if self.training else 0.)\n\n\n"
                "class Block(nn.Module):\n    def __init__(self, cfg: TrunkCfg):\n        super().__init__()\n"
                "        self.attn = Attention(8)\n        if cfg.drop_path_rate > 1e-6:\n"
                "            self.drop_path = DropPath(cfg.drop_path_rate)\n", lines=(16, 19, 27), severity="info"),
        # ... unless a call sets one; a model's stochastic depth read from a config by name is not handed down.
        Invalid("import torch.nn as nn\n\n\nclass Mlp(nn.Module):\n    def __init__(self, dim, drop=0.):\n"
                "        super().__init__()\n        self.drop = nn.Dropout(drop)\n\n\n"
                "def build(config, make_model):\n    head = Mlp(8, drop=0.1)\n"
                "    return head, make_model(drop_path_rate=config['drop_path_rate'])\n", lines=(7, 12)),
        # Qwen's LoRA: built only in the mode its default-off switch turns on.
        Invalid("from dataclasses import dataclass\n\nimport transformers\nfrom peft import LoraConfig, get_peft_model\n\n\n"
                "@dataclass\nclass TrainingArguments(transformers.TrainingArguments):\n    use_lora: bool = False\n\n\n"
                "def train(model):\n    parser = transformers.HfArgumentParser((TrainingArguments,))\n"
                "    (training_args,) = parser.parse_args_into_dataclasses()\n    if training_args.use_lora:\n"
                "        modules = [\"c_attn\"]\n        config = LoraConfig(r=8, lora_dropout=0.05, target_modules=modules)\n"
                "        model = get_peft_model(model, config)\n        model.print_trainable_parameters()\n"
                "    return model\n", lines=(17,), severity="info"),
        # mindformers: the keep_prob primitive imported as `P`, and the generated one taking p with each call.
        Invalid("import mindspore as ms\nfrom mindspore import nn\nfrom mindspore.ops import operations as P\n"
                "from mindspore.ops.function.nn_func import dropout_ext\n\n\nclass Dropout(nn.Cell):\n"
                "    def __init__(self, keep_prob=0.5):\n        super().__init__()\n"
                "        self.dropout = P.Dropout(keep_prob)\n"
                "        self.dropout_ext = ms.ops.auto_generate.DropoutExt().add_prim_attr(\"side_effect_hidden\", True)\n\n"
                "    def construct(self, x):\n        return dropout_ext(x, 0.1)\n", lines=(10, 11, 14)),
        # ModelZoo's GPT-2 draws dropout masks ahead on a side stream.
        Invalid("import torch_npu\n\n\ndef mask(x, p):\n    return torch_npu.npu_dropout_gen_mask(x.shape, p=p)\n",
                lines=(5,)),
        # PEFT's LoRA dropout (default 0), and a project's own subclass of a dropout layer (mindcv's compatibility
        # `Dropout(nn.Dropout)`).
        Invalid("import torch.nn as nn\nfrom peft import LoraConfig\n\n\nclass Dropout(nn.Dropout):\n    pass\n\n\n"
                "config = LoraConfig(r=8, lora_alpha=16, lora_dropout=0.05)\nplain = LoraConfig(r=8)\n"
                "head = Dropout(p=0.2)\n", lines=(9, 11)),
        # ms-swift's prepare_adapter: the rate in a dict the function builds and unpacks into the config.
        Invalid("import torch\nfrom peft import LoraConfig\n\n\ndef prepare(args, modules):\n"
                "    lora_kwargs = {'r': args.lora_rank, 'target_modules': modules, 'lora_dropout': args.lora_dropout}\n"
                "    return LoraConfig(task_type='CAUSAL_LM', **lora_kwargs)\n", lines=(7,)),
        # DreamBooth's `--lora_dropout` defaults to 0: on only when asked.
        Invalid("import argparse\n\nimport torch\nfrom peft import LoraConfig\n\nparser = argparse.ArgumentParser()\n"
                "parser.add_argument(\"--lora_dropout\", type=float, default=0.0)\nargs = parser.parse_args()\n"
                "config = LoraConfig(r=4, lora_dropout=args.lora_dropout)\n", lines=(9,), severity="info"),
        # Stochastic depth written by hand (pytorch-cifar's EfficientNet): no seed_all reaches it.
        Invalid("import torch\n\n\ndef drop_connect(x, drop_ratio):\n    keep = 1.0 - drop_ratio\n"
                "    mask = torch.empty([x.shape[0], 1, 1, 1], dtype=x.dtype, device=x.device)\n"
                "    mask.bernoulli_(keep)\n    return x / keep * mask\n", lines=(7,)),
        # msprobe-kit's MindSpore seed_all does not reach fused attention: still reported.
        Invalid("from mindspore import ops\nfrom mindspore.ops.operations.nn_ops import FlashAttentionScore\n"
                "from msprobe_runtime.mindspore import seed_all\n\nseed_all(seed=1, rm_dropout=True)\n"
                "attention = FlashAttentionScore(head_num=8, keep_prob=0.9)\nmasks = ops.DropoutGenMask()\n"
                "drop = ops.Dropout(keep_prob=0.9)  # removed by seed_all\n", lines=(6, 7)),
        # mindformers' flash attention: attention dropout in the fused kernel, and the masks it is given.
        Invalid("from mindspore import ops\nfrom mindspore.ops.operations.nn_ops import FlashAttentionScore\n\n"
                "attention = FlashAttentionScore(head_num=8, keep_prob=0.9, input_layout=\"BNSD\")\n"
                "masks = ops.DropoutGenMask()\n", lines=(4, 5)),
        # timm's and mindcv's model factories: `drop_rate=` turns on the dropout layers of the model they build
        # (an option defaulting to 0 is information).
        Invalid("import timm\n\nmodel = timm.create_model(\"vit_small_patch16_224\", drop_rate=0.1)\n", lines=(3,)),
        Invalid("import argparse\n\nimport timm\n\nparser = argparse.ArgumentParser()\n"
                "parser.add_argument(\"--drop\", type=float, default=0.0)\nargs = parser.parse_args()\n"
                "model = timm.create_model(\"resnet50\", drop_rate=args.drop)\n", lines=(8,), severity="info"),
        # mmdet's DETR config: the layer configs of `model = dict(type=...)` set dropout the runner builds.
        Invalid("_base_ = ['../_base_/default_runtime.py']\nmodel = dict(\n    type='DETR',\n"
                "    encoder=dict(layer_cfg=dict(self_attn_cfg=dict(embed_dims=256, dropout=0.1),\n"
                "                                ffn_cfg=dict(embed_dims=256, ffn_drop=0.1))))\n", lines=(4, 5)),
        # msprobe's own seed_all(rm_dropout=True) leaves stochastic depth on.
        Invalid("import timm\nimport torch\nfrom msprobe.pytorch import seed_all\n\nseed_all(1234, False, True)\n"
                "model = timm.create_model(\"vit_base_patch16_224\", drop_path_rate=0.1)\nhead = torch.nn.Dropout(0.1)\n",
                lines=(6,)),
        Invalid("import torch.nn as nn\n\n\nclass Head(nn.Module):\n    def __init__(self, dim, p=0.1):\n"
                "        super().__init__()\n        self.drop = nn.Dropout(p)\n        self.drop2 = nn.Dropout2d()\n",
                lines=(7, 8)),
        Invalid("import torch\nimport torch.nn.functional as F\n\n\ndef forward(x, training):\n"
                "    x = F.dropout(x, p=0.1, training=training)\n    return torch.dropout(x, 0.2, True)\n",
                lines=(6, 7)),
        Invalid("from torch import nn\n\nmodel = nn.Transformer(d_model=256, nhead=4)  # default dropout=0.1\n"
                "mha = nn.MultiheadAttention(256, 4, dropout=0.1)\n"
                "lstm = nn.LSTM(128, 256, num_layers=2, dropout=0.2)\n", lines=(3, 4, 5)),
        Invalid("import torch.nn.functional as F\n\n\ndef attend(self, q, k, v):\n"
                "    p = self.dropout if self.training else 0.0\n"
                "    return F.scaled_dot_product_attention(q, k, v, dropout_p=p, is_causal=True)\n", lines=(6,)),
        Invalid("from torch.nn import AlphaDropout as AD, FeatureAlphaDropout\n\nlayers = [AD(0.1), "
                "FeatureAlphaDropout(0.05)]\n", lines=(3,)),
        # Ascend: torch_npu's byte-mask dropout (which it adds to torch.nn) and fused kernels.
        Invalid("import torch.nn as nn\nimport torch_npu\n\n\nclass Attention(nn.Module):\n"
                "    def __init__(self, p=0.1):\n        super().__init__()\n        self.drop = nn.DropoutWithByteMask(p)\n"
                "        self.p = p\n\n    def forward(self, scores, mask, q, k, v):\n"
                "        _, _, probs = torch_npu.npu_dropout_with_add_softmax(scores, mask, 0.125, self.p, -1)\n"
                "        out = torch_npu.npu_fusion_attention(q, k, v, 8, \"BNSD\", keep_prob=0.9)[0]\n"
                "        return self.drop(probs) + out\n", lines=(8, 12, 13)),
        # MindSpeed-LLM: torch_npu's v2 kernel (keep_prob keyword only) and MindSpeed's wrapper in ring attention.
        Invalid("import torch_npu\nfrom mindspeed.ops.fusion_attention_v2 import npu_fusion_attention\n\n\n"
                "def attend(q, k, v, n, dropout, keep_prob):\n"
                "    out = torch_npu.npu_fusion_attention_v2(q, k, v, n, \"BNSD\", keep_prob=1 - dropout)[0]\n"
                "    return npu_fusion_attention(q, k, v, n, \"SBH\", keep_prob=keep_prob)[0] + out\n", lines=(6, 7)),
        Invalid("import mindspore.nn as nn\nfrom mindspore import ops, mint\n\n\nclass Net(nn.Cell):\n"
                "    def __init__(self):\n        super().__init__()\n        self.drop = nn.Dropout(keep_prob=0.9)\n"
                "        self.drop2 = nn.Dropout(p=0.1)\n        self.drop3 = mint.nn.Dropout(0.1)\n\n"
                "    def construct(self, x):\n        return ops.dropout(x, p=0.1)\n", lines=(8, 9, 10, 13)),
        Invalid("import timm\nfrom timm.layers import DropPath\n\n\ndef build(args):\n"
                "    model = timm.create_model(args.model, drop_path_rate=args.drop_path)\n"
                "    return model, DropPath(0.2)\n", lines=(6, 7)),
        # ConvNeXt's `--drop_path` is 0 unless given: information, naming the option
        Invalid("import argparse\n\nimport timm\n\nparser = argparse.ArgumentParser()\n"
                "parser.add_argument(\"--drop_path\", type=float, default=0)\nargs = parser.parse_args()\n"
                "model = timm.create_model(\"convnext_tiny\", drop_path_rate=args.drop_path)\n", lines=(8,),
                severity="info"),
        Invalid("import torch\nimport vision_transformer as vits\n\n\ndef build(args):\n"
                "    student = vits.__dict__[args.arch](patch_size=16, drop_path_rate=args.drop_path_rate)\n"
                "    xcit = torch.hub.load(\"facebookresearch/xcit:main\", args.arch, drop_path_rate=0.1)\n"
                "    return student, xcit\n", lines=(6, 7)),
        Invalid("import torch\nimport torch.nn as nn\n\n\nclass DropPath(nn.Module):  # copied from timm\n"
                "    def __init__(self, drop_prob=None):\n        super().__init__()\n        self.drop_prob = drop_prob\n\n"
                "\nclass Block(nn.Module):\n    def __init__(self, dim, drop_path=0.1):\n        super().__init__()\n"
                "        self.drop_path = DropPath(drop_path) if drop_path > 0. else nn.Identity()\n", lines=(14,)),
    )

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.removed: bool | None = None  # seed_all(rm_dropout=True) runs: True when it removes stochastic depth too
        self.stochastic_depth: list = []  # the reports of stochastic depth
        self.unreached: list = []  # the reports seed_all leaves on: MindSpore's fused attention, drops written by hand
        self.hand_written: set[str] = set()  # functions reported for stochastic depth written by hand
        # (report, probability, its value when off, the function around it) where the probability is an expression
        # (`args.dropout`, a parameter `drop`)
        self.by_option: list = []
        self.defaults = LeftAtDefault(ctx)
        self.built: dict[int, tuple] = {}  # id(report) -> (the function around it, the guards of its branch)
        self.values = LocalValues(ctx, lambda _: None)  # the dicts a call's `**kwargs` unpacks

    def report(self, where, message=None, severity=None, fixable=None) -> None:
        """Also keep where the reported dropout is built: the function around it, and the conditions it needs."""
        super().report(where, message, severity, fixable)
        node = self.reports[-1].node
        switch = switch_guard(node, self.ctx.ancestors)
        self.built[id(self.reports[-1])] = (self.ctx.current_def(),
                                            [switch, *self._enclosing_guards(node)] if switch else
                                            self._enclosing_guards(node))

    def visit_Call(self, node: ast.Call) -> None:
        self.values.call(node)
        if node.keywords:
            self._check_drop_path_rate(node)
            self._check_builder(node)
            self._check_model_config(node)
        name = self.ctx.callee_name(node)
        if name == "seed_all":
            self._note_seed_all(node)
            return
        if name in STOCHASTIC_DEPTH_NAMES:
            self._check_stochastic_depth(node, name)
            return
        if name in MASK_DRAWS:
            self._check_hand_written(node)
        qualified = self._callee(node, name)
        if qualified is None:
            return
        if qualified in catalogue.TORCH_DROPOUT_MODULES:
            self._check_probability(node, argument(node, 0, "p"), default_fires=True)
        elif qualified in catalogue.TORCH_DROPOUT_FUNCTIONS:
            self._check_function(node, qualified)
        elif qualified in catalogue.TORCH_DROPOUT_KEYWORD_MODULES:
            self._check_keyword_module(node, qualified)
        elif qualified in catalogue.TE_DROPOUT_MODULES:
            self._check_transformer_engine(node, qualified)
        elif qualified in catalogue.SDPA_FUNCTIONS:
            self._check_probability(node, argument(node, 4, "dropout_p"), default_fires=False)
        elif qualified in catalogue.KERNEL_ATTENTION_DROPOUT:
            position, name = catalogue.KERNEL_ATTENTION_DROPOUT[qualified]
            self._check_unreached(node, argument(node, position, name), False, KERNEL_ATTENTION_MESSAGE.format(
                name=qualified.rpartition(".")[2], keyword=name))
        elif qualified in catalogue.ADAPTER_DROPOUT_CONFIGS:
            name = catalogue.ADAPTER_DROPOUT_CONFIGS[qualified]
            rate = self.values.keyword(node, name)  # also from a dict of the function: ms-swift's `**lora_kwargs`
            self._check_probability(node, None if rate is UNKNOWN else rate, default_fires=False,
                                    message=f"`{name}=` puts a dropout before every adapter layer, with a new mask "
                                            f"every step; pass {name}=0.0 while debugging")
        elif qualified in catalogue.MINDSPORE_FUSED_DROPOUT_MASKS:
            self.report(node, FUSED_MASK_MESSAGE, fixable=False)
            self.unreached.append(self.reports[-1])
        elif qualified in catalogue.MINDSPORE_DROPOUT:
            self._check_mindspore(node, qualified)
        elif qualified in catalogue.MINDSPORE_CALL_TIME_DROPOUT:
            self.report(node, CALL_TIME_MESSAGE.format(name=qualified.rpartition(".")[2]))
        elif qualified in DROP_PROBABILITY:
            self._check_probability(node, argument(node, *DROP_PROBABILITY[qualified]), default_fires=True)
        elif qualified in catalogue.FUSED_ATTENTION_KEEP_PROBABILITY:
            position, name = catalogue.FUSED_ATTENTION_KEEP_PROBABILITY[qualified]
            keep = keyword(node, name) if position is None else argument(node, position, name)
            mindspore = qualified.startswith("mindspore.")
            if keep is not None and self._literal(keep) != 1:
                self.report(node, KEEP_PROB_MESSAGE + (FUSED_NOTE if mindspore else ""), fixable=False if mindspore else None)
                if mindspore:
                    self.unreached.append(self.reports[-1])

    def _check_builder(self, node: ast.Call) -> None:
        """A dropout layer handed to another call to build, with a dict of its arguments beside it (nanotron's
        `PipelineBlock(module_builder=nn.Dropout, module_kwargs={"p": config.embd_pdrop})`)."""
        if any(isinstance(kw.value, (ast.Name, ast.Attribute))
               and self.ctx.imports.resolve_any(kw.value) in catalogue.TORCH_DROPOUT_MODULES for kw in node.keywords):
            options = next((kw.value for kw in node.keywords if isinstance(kw.value, ast.Dict)), None)
            if options is not None:  # else built with arguments not seen here
                rate = next((value for key, value in dict_items(options) if key == "p"), None)
                self._check_probability(node, rate, default_fires=True)

    def _callee(self, node: ast.Call, name: str | None) -> str | None:
        """The dropout API a call reaches: by its name (also from libraries the import tracker does not follow:
        MindSpeed's, mindnlp's), through an attribute alias (`self.flash_attn_func(...)`), or, for
        `super().__init__(...)`, the library class its class derives from; not a project class with parameters of
        its own (mindediting's `Dropout(drop_prob)`), whose `super().__init__` is checked instead."""
        if name == "__init__":
            return self._dropout_base(node)
        aliased = self.ctx.self_attribute_function(node)  # `self.flash_attn_func = flash_attn_func` (OLMo)
        if aliased is not None and aliased.rpartition(".")[2] in DROPOUT_NAMES:
            return aliased
        if name not in DROPOUT_NAMES or self._own_parameters(node.func):
            return None
        return self.ctx.call_qualname(node) or self.ctx.imports.resolve_any(node.func)

    def _own_parameters(self, func: ast.expr) -> bool:
        """Whether `func` names a class of the file whose `__init__` takes parameters of its own, not only
        `*args, **kwargs` handed on."""
        if not isinstance(func, ast.Name):
            return False
        owner = next((n for n in self.ctx.tree.body if isinstance(n, ast.ClassDef) and n.name == func.id), None)
        init = next((n for n in owner.body if isinstance(n, FUNCTION_TYPES) and n.name == "__init__"), None) \
            if owner is not None else None
        arguments = init.args if init is not None else None
        return arguments is not None and (len(arguments.posonlyargs + arguments.args + arguments.kwonlyargs) > 1
                                          or not (arguments.vararg or arguments.kwarg))

    def _check_unreached(self, node: ast.Call, value: ast.expr | None, default_fires: bool, message: str) -> bool:
        """`_check_probability` for a dropout no `seed_all` reaches: reported also where one runs."""
        before = len(self.reports)
        self._check_probability(node, value, default_fires=default_fires, fixable=False, message=message)
        if len(self.reports) > before:
            self.unreached.append(self.reports[-1])
        return len(self.reports) > before

    def _check_transformer_engine(self, node: ast.Call, qualified: str) -> None:
        """Transformer Engine's attention and layer modules (Megatron's default `transformer_impl`): their dropout
        runs in fused kernels that no `seed_all` reaches; one finding per call, for the first rate that is on,
        naming the rates that may be (with their default where not given)."""
        rates = catalogue.TE_DROPOUT_MODULES[qualified]
        given = {name: argument(node, position, name) for name, (position, _) in rates.items()}
        message = TE_MESSAGE.format(name=qualified.rpartition(".")[2], rates=" and ".join(
            f"`{name}=`" if given[name] is not None else f"`{name}=` (default {default:g})"
            for name, (_, default) in rates.items()
            if (default > 0 if given[name] is None else not is_value(self._literal(given[name]), 0))))
        for name, (_, default) in rates.items():
            if self._check_unreached(node, given[name], default > 0, message):
                return

    def _dropout_base(self, node: ast.Call) -> str | None:
        """The library class with dropout that `super().__init__(...)` builds, in a class derived from one
        (Megatron's `TEDotProductAttention(te.pytorch.DotProductAttention)`, audiocraft's
        `StreamingTransformerLayer(nn.TransformerEncoderLayer)`)."""
        func = node.func
        if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Call)
                and isinstance(func.value.func, ast.Name) and func.value.func.id == "super"):
            return None
        owner = next((a for a in reversed(self.ctx.ancestors) if isinstance(a, ast.ClassDef)), None)
        bases = (self.ctx.imports.resolve_any(base) for base in owner.bases) if owner is not None else ()
        return next((q for q in bases if q in DROPOUT_BASES), None)

    def _enclosing_guards(self, node: ast.AST) -> list[conditions.Guard]:
        """The (test, branch) of every `if` around `node`, innermost first: an adapter exists only in the mode
        that builds it (`if training_args.use_lora:`), however long that block is."""
        chain = [*self.ctx.ancestors, node]
        return [(outer.test, inner in outer.body) for outer, inner in zip(reversed(chain[:-1]), reversed(chain[1:]),
                                                                           strict=True)
                if isinstance(outer, ast.If) and inner is not outer.test]

    def _check_hand_written(self, node: ast.Call) -> None:
        """A mask drawn in a module-level function named for stochastic depth (EfficientNet's `drop_connect(x,
        rate)`, a `drop_path(x, p, training)` copied without timm's `DropPath` class): once per function."""
        function = self.ctx.ancestors[1] if len(self.ctx.ancestors) > 1 else None
        if (isinstance(function, FUNCTION_TYPES) and HAND_DROP_NAME.match(function.name)
                and function.name not in self.hand_written and not self._defines_drop_path_class()):
            self.hand_written.add(function.name)
            self.report(node, HAND_DROP_MESSAGE.format(function=function.name), fixable=False)
            self.unreached.append(self.reports[-1])

    def _defines_drop_path_class(self) -> bool:
        """Whether the file defines timm's `DropPath` (whose construction is reported, and which seed_all removes)."""
        return any(isinstance(node, ast.ClassDef) and node.name == catalogue.STOCHASTIC_DEPTH_CLASS
                   for node in self.ctx.tree.body)

    def _note_seed_all(self, node: ast.Call) -> None:
        found = catalogue.RM_DROPOUT_SEEDERS.get(self.ctx.call_qualname(node) or "")
        if found is not None and constant(argument(node, found[0], "rm_dropout")) is True:
            self.removed = bool(self.removed) or found[1]

    def finish(self) -> None:
        """A file that calls `seed_all(..., rm_dropout=True)` runs with its dropout off: nothing to report, but
        the stochastic depth msprobe's own `seed_all` leaves on, and what no `seed_all` reaches. A probability
        taken from an option that defaults to 0 (`lora_dropout=args.lora_dropout`) is info, naming the option, and
        so is one built under a condition the options' defaults make false (`if training_args.use_lora:`, a config
        data class's `if cfg.drop_path_rate > 1e-6:` with `drop_path_rate: float = 0.0`)."""
        for report, value, off, function in self.by_option:
            if report.severity != "info":
                self._settle_default(report, value, off, function)
        for report in self.reports:
            needed = next(filter(None, (opt_in.off_by_default(self.ctx, guard) for guard in self.built[id(report)][1])),
                          None) if report.severity != "info" else None
            if needed is not None:
                report.severity = "info"
                report.message += f" (only when `{condition_text(needed)}`: off with the default arguments)"
            elif report.severity != "info":
                self.defaults.settle(report, *self.built[id(report)])
            if report.severity != "info":
                self._settle_unreached(report)
        if self.removed is not None:
            kept = self.unreached + ([] if self.removed else self.stochastic_depth)
            self.reports = [report for report in self.reports if any(report is k for k in kept)]

    def _settle_unreached(self, report) -> None:
        """Info when the dropout is built into an attribute of a class (`self.classifier = nn.Sequential(...)`) that
        no instance the project builds runs: each is read only for other attributes (mindediting's `VGG(...).features`
        in its DISTS loss and its metrics)."""
        for cls in (node for node in ast.walk(self.ctx.tree) if isinstance(node, ast.ClassDef)):
            attribute = instances.stored_attribute(cls, report.node)
            used = instances.unreached(self.ctx, cls, attribute) if attribute is not None else None
            if used is not None:
                report.severity = "info"
                reads = f"; each is read only for {', '.join(f'`.{name}`' for name in used)}" if used else ""
                report.message += f" (`self.{attribute}` never runs: no `{cls.name}` the project builds is called{reads})"
                return

    def _literal(self, value: ast.expr) -> object:
        """A literal, or a local name the function around it sets once to one (ChatGLM2's `keep_prob = 1.0`
        before `npu_flash_attention(..., keep_prob=keep_prob)`); else `NOT_CONSTANT`."""
        function = self.ctx.current_def()
        if constant(value) is not NOT_CONSTANT or not isinstance(value, ast.Name) or function is None:
            return constant(value)
        stores = [node for node in ast.walk(function) if isinstance(node, ast.Name) and node.id == value.id
                  and not isinstance(node.ctx, ast.Load)]
        assigned = [node.value for node in ast.walk(function) if isinstance(node, ast.Assign)
                    and len(node.targets) == 1 and node.targets[0] in stores]
        parameters = {a.arg for a in ast.walk(function.args) if isinstance(a, ast.arg)}
        if len(stores) != 1 or len(assigned) != 1 or value.id in parameters:
            return NOT_CONSTANT
        return constant(assigned[0])

    def _settle_default(self, report, value: ast.expr, off: float, function: ast.AST | None) -> None:
        """Info, naming the option or parameter, when the probability is off with the default arguments: an option
        defaulting to it, or a parameter of `function` defaulting to it that no call in the file sets otherwise
        (Swin's `Mlp(drop=0.)`, built by models whose own `drop_rate=0.` no call sets)."""
        value, off = _rate(value, off)
        value, function = self.defaults.source(*self._layer_rate(value, function))
        if opt_in.default_value(self.ctx, value) == off:
            settled = "with the default arguments"
        elif isinstance(value, ast.Name) and self.defaults.off(function, value.id, off):
            settled = ("by default, and no call in this file passes another value"
                       if value.id in parameter_defaults(function) else "in every call in this file")
        else:
            return
        report.severity = "info"
        report.message += f" (only when `{condition_text(value)}` {'<' if off else '>'} {off:g}: {off:g} {settled})"

    def _layer_rate(self, value: ast.expr, function: ast.AST | None) -> tuple[ast.expr, ast.AST | None]:
        """For `self.attn_drop.p`, the rate of the dropout layer the class's `__init__` stores in `self.attn_drop`
        (its only store; open_clip's SDPA `dropout_p=self.attn_drop.p if self.training else 0.` beside
        `self.attn_drop = nn.Dropout(attn_drop)`), with that `__init__`; else `value` and `function`."""
        layer = value.value if isinstance(value, ast.Attribute) and value.attr == "p" else None
        owner = self.defaults.owner(function) if isinstance(function, FUNCTION_TYPES) else None
        if not (owner is not None and isinstance(layer, ast.Attribute) and isinstance(layer.value, ast.Name)
                and layer.value.id == "self"):
            return value, function
        stores = [(node.value, method) for method in owner.body if isinstance(method, FUNCTION_TYPES)
                  for node in ast.walk(method) if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign))
                  for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
                  if isinstance(target, ast.Attribute) and target.attr == layer.attr
                  and isinstance(target.value, ast.Name) and target.value.id == "self"]
        if len(stores) != 1 or stores[0][1].name != "__init__" or not isinstance(stores[0][0], ast.Call) \
                or self.ctx.imports.resolve_any(stores[0][0].func) not in catalogue.TORCH_DROPOUT_MODULES:
            return value, function
        rate = argument(stores[0][0], 0, "p")
        return (rate, stores[0][1]) if rate is not None else (value, function)

    def _report_stochastic_depth(self, node: ast.Call, what: str, fix: str) -> None:
        self.report(node, DROP_PATH_MESSAGE.format(what=what, fix=fix), fixable=False)
        self.stochastic_depth.append(self.reports[-1])

    def _check_drop_path_rate(self, node: ast.Call) -> None:
        """`drop_path_rate=` on any call (a model factory), `drop_path=` on a call into timm (a block); `drop_rate=`
        on timm's and mindcv's `create_model` (the model's dropout layers)."""
        rate = keyword(node, catalogue.FACTORY_DROPOUT_KEYWORD)
        if rate is not None and not self._decided_elsewhere(rate) and (
                self.ctx.imports.resolve_any(node.func) in catalogue.DROPOUT_MODEL_FACTORIES):
            self.report(node, FACTORY_DROPOUT_MESSAGE)
            if constant(rate) is NOT_CONSTANT:  # `drop_rate=args.drop`, 0 by default
                self.by_option.append((self.reports[-1], rate, 0, None))
        for kw in node.keywords:
            if kw.arg == catalogue.STOCHASTIC_DEPTH_KEYWORD or (
                    kw.arg == catalogue.STOCHASTIC_DEPTH_BLOCK_KEYWORD
                    and (self.ctx.call_qualname(node) or "").startswith("timm.")):
                if not self._decided_elsewhere(kw.value):
                    self._report_stochastic_depth(node, f"`{kw.arg}=`", f"pass `{kw.arg}=0.`")
                    if constant(kw.value) is NOT_CONSTANT:  # `drop_path_rate=args.drop_path`, 0 by default
                        self.by_option.append((self.reports[-1], kw.value, 0, None))
                return

    def _check_model_config(self, node: ast.Call) -> None:
        """A non-zero literal dropout key (`dropout=0.1`) of a `dict(...)` inside an OpenMMLab config's module-level
        `model = dict(type=..., ...)`, which the runner builds the model from."""
        if not (isinstance(node.func, ast.Name) and node.func.id == "dict" and "dict" not in self.ctx.imports.bindings):
            return
        top = self.ctx.ancestors[1] if len(self.ctx.ancestors) > 1 else None
        if not (isinstance(top, ast.Assign) and [target_name(t) for t in top.targets] == ["model"]
                and isinstance(top.value, ast.Call) and isinstance(top.value.func, ast.Name)
                and top.value.func.id == "dict" and keyword(top.value, "type") is not None):
            return
        for kw in node.keywords:
            value = constant(kw.value)
            if kw.arg in CONFIG_DROPOUT_KEYS and isinstance(value, (int, float)) and not isinstance(value, bool) \
                    and value > 0:
                self.report(kw, CONFIG_DROPOUT_MESSAGE.format(key=kw.arg, value=value), fixable=False)

    def _decided_elsewhere(self, value: ast.expr) -> bool:
        """A literal 0 (or None: timm's `create_model` drops it), or model code handing a rate down: a
        per-block rate (`dpr[i]`, `dpr[start:end]`; not a config entry read by name, `config['drop_path_rate']`),
        `self.<attribute>`, or a parameter of the enclosing function that is required or defaults to 0 (its
        caller passes the rate, and is checked there). `0 or rate` is `rate` (BLIP's `create_vit`)."""
        value = _or_operand(value) or value
        if _is_off(constant(value)) or (isinstance(value, ast.Subscript)
                                        and not isinstance(constant(value.slice), str)):
            return True
        if isinstance(value, ast.Attribute) and isinstance(value.value, ast.Name) and value.value.id == "self":
            return True
        if not isinstance(value, ast.Name):
            return False
        function = self.ctx.current_def()
        if function is None:
            return False
        arguments = function.args
        if value.id not in {a.arg for a in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs)}:
            return False
        defaults = parameter_defaults(function)
        return value.id not in defaults or _is_off(constant(defaults[value.id]))

    def _check_stochastic_depth(self, node: ast.Call, name: str) -> None:
        """timm's / mindcv's `DropPath(p)` and `drop_path(x, p, training)`, torchvision's `StochasticDepth`,
        and any other `DropPath(p)`: model code copies timm's layer under its name."""
        qualified = self.ctx.call_qualname(node) or self.ctx.imports.resolve_any(node.func)
        if qualified in catalogue.STOCHASTIC_DEPTH_FUNCTIONS:
            rate, training, training_default = catalogue.STOCHASTIC_DEPTH_FUNCTIONS[qualified]
            flag = argument(node, *training)
            if (flag is None and not training_default) or constant(flag) is False:
                return
            value = argument(node, *rate)
        elif qualified in catalogue.STOCHASTIC_DEPTH_MODULES:
            value = argument(node, *catalogue.STOCHASTIC_DEPTH_MODULES[qualified])
        elif name == catalogue.STOCHASTIC_DEPTH_CLASS:
            value = argument(node, 0, "drop_prob") or keyword(node, "p")
        else:
            return
        fix = "give it a rate of 0 (or pass `drop_path_rate=0.` to the model)"
        if value is None:  # absent: the layers default to 0
            return
        if not self._decided_elsewhere(value):
            self._report_stochastic_depth(node, f"`{name}`", fix)
            return
        origin = self._default_rate(value, self.ctx.current_def(), PARAMETER_DEPTH)
        if origin is not None:
            self._report_stochastic_depth(node, f"`{name}`", fix)
            self.reports[-1].message += (f" (its rate comes from `{origin}`, a default that no call in this file "
                                         f"changes)")

    def _default_rate(self, value: ast.expr, function: ast.AST | None, depth: int) -> str | None:
        """For a stochastic-depth rate model code hands down, the non-zero parameter default it comes from where the
        file's calls leave it so (`depth` calls up), as `owner(name=default)`; else None. Followed through per-block
        rates (`dpr[i]`, `rates[i] if isinstance(rates, list) else rates`, a local list drawn from
        `torch.linspace(0, rate, n)`) and the attribute `__init__` stores a parameter in: open_clip's HTSAT
        `drop_path_rate=0.1` -> `dpr = [x.item() for x in torch.linspace(0, self.drop_path_rate, n)]` ->
        `BasicLayer(drop_path=dpr[a:b])` -> `SwinTransformerBlock(drop_path=drop_path[i] ...)` -> `DropPath(drop_path)`."""
        if depth == 0 or not isinstance(function, FUNCTION_TYPES):
            return None
        value, function = self.defaults.source(value, function)
        if isinstance(value, ast.IfExp):
            return self._default_rate(value.body, function, depth) or self._default_rate(value.orelse, function, depth)
        if isinstance(value, ast.Subscript):
            return self._default_rate(value.value, function, depth)
        if not (isinstance(value, ast.Name) and isinstance(function, FUNCTION_TYPES)):
            return None
        defaults = parameter_defaults(function)
        parameters = {a.arg for a in (*function.args.posonlyargs, *function.args.args, *function.args.kwonlyargs)}
        if value.id not in parameters:
            stores = [node.value for node in ast.walk(function) if isinstance(node, ast.Assign)
                      and any(isinstance(t, ast.Name) and t.id == value.id for t in node.targets)]
            schedule = [node for node in ast.walk(stores[0]) if isinstance(node, ast.Call) and (
                self.ctx.imports.resolve_any(node.func) or "").endswith(".linspace")] if len(stores) == 1 else []
            end = argument(schedule[0], 1, "end") if len(schedule) == 1 else None
            return self._default_rate(end, function, depth - 1) if end is not None else None
        passed = self.defaults.passed(function, value.id)
        if not passed:
            return None
        default = constant(defaults.get(value.id))
        if any(given is None for given, _ in passed) and isinstance(default, (int, float)) \
                and not isinstance(default, bool) and default > 0:
            owner = self.defaults.owner(function)
            where = owner.name if owner is not None and function.name == "__init__" else function.name
            return f"{where}({value.id}={default!r})"
        return next(filter(None, (self._default_rate(given, caller, depth - 1) for given, caller in passed
                                  if given is not None)), None)

    def _check_probability(self, node: ast.Call, value: ast.expr | None, default_fires: bool,
                           message: str | None = None, off: float = 0, fixable: bool | None = None) -> None:
        """Report unless the probability is a literal 0 (`off`: a keep probability of 1), or absent with a
        default that is off."""
        if value is None:
            if default_fires and not _has_double_star(node):
                self.report(node, message, fixable=fixable)
            return
        literal = self._literal(value)
        if literal is NOT_CONSTANT or isinstance(literal, bool) or literal != off:
            self.report(node, message, fixable=fixable)
            if literal is NOT_CONSTANT:
                self.by_option.append((self.reports[-1], value, off, self.ctx.current_def()))

    def _check_function(self, node: ast.Call, qualified: str) -> None:
        # torch.dropout(input, p, train) / F.dropout(input, p=0.5, training=True)
        training_name = "train" if qualified.startswith("torch.") and qualified.count(".") == 1 else "training"
        training = argument(node, 2, training_name)
        if training is None and qualified in catalogue.TORCH_DROPOUT_OFF_BY_DEFAULT:
            return
        if constant(training) is False:
            return
        self._check_probability(node, argument(node, 1, "p"), default_fires=True)

    def _check_keyword_module(self, node: ast.Call, qualified: str) -> None:
        if qualified in catalogue.TORCH_RNN_MODULES:
            layers = argument(node, 2, "num_layers")
            if layers is None or constant(layers) == 1:
                return  # dropout only acts between stacked layers
        value = argument(node, catalogue.TORCH_DROPOUT_KEYWORD_POSITIONS.get(qualified, 99), "dropout")
        default_fires = catalogue.TORCH_DROPOUT_KEYWORD_MODULES[qualified] > 0
        if value is None and default_fires and not _has_double_star(node):
            self.report(node, "`" + qualified.rsplit(".", 1)[1] + "` applies dropout=0.1 by default; pass "
                        "dropout=0.0 while debugging")
            return
        self._check_probability(node, value, default_fires=False)

    def _check_mindspore(self, node: ast.Call, qualified: str) -> None:
        functional = qualified.rsplit(".", 1)[1][0].islower()
        if functional:  # ops.dropout(input, p=0.5, training=True)
            if constant(argument(node, 2, "training")) is not False:
                self._check_probability(node, argument(node, 1, "p"), default_fires=True)
            return
        if qualified in catalogue.MINDSPORE_KEEP_PROB_DROPOUT:
            p = keyword(node, "p")
            if p is not None:
                self._check_probability(node, p, default_fires=True)
                return
            keep = argument(node, 0, "keep_prob")
            primitive = qualified.endswith(".Dropout") and not qualified.startswith("mindspore.nn.")
            self._check_probability(node, keep, default_fires=True, off=1,
                                    message=MINDSPORE_KEEP_MESSAGE + (SEED_NOTE if primitive else ""))
            return
        self._check_probability(node, argument(node, 0, "p"), default_fires=True)


def _rate(value: ast.expr, off: float) -> tuple[ast.expr, float]:
    """The rate behind a conversion, a complement or a switch to off, and its value when off: `float(dropout)` is
    `dropout`, a keep probability `1 - drop_prob` is off when `drop_prob` is 0, and `p if self.training else 0.0`
    is `p` (the other branch is off), and `0 or p` is `p`."""
    while True:
        if _or_operand(value) is not None:
            value = _or_operand(value)
        elif isinstance(value, ast.IfExp) and is_value(constant(value.orelse), off):
            value = value.body
        elif (isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id in ("float", "int")
                and len(value.args) == 1 and not value.keywords):
            value = value.args[0]
        elif isinstance(value, ast.BinOp) and isinstance(value.op, ast.Sub) and is_value(constant(value.left), 1):
            value, off = value.right, 1 - off
        else:
            return value, off


def _or_operand(value: ast.expr) -> ast.expr | None:
    """The operand an `or` evaluates to where the literals before it decide it (`0 or rate` is `rate`, `0.1 or rate`
    is 0.1); None for anything else."""
    if not (isinstance(value, ast.BoolOp) and isinstance(value.op, ast.Or)):
        return None
    for operand in value.values[:-1]:
        literal = constant(operand)
        if literal is NOT_CONSTANT:
            return None
        if literal:
            return operand
    return value.values[-1]


def _is_off(value: object) -> bool:
    """A literal rate that turns stochastic depth off: 0, or None (the layer's / model's default)."""
    return value is None or is_value(value, 0)


def _has_double_star(node: ast.Call) -> bool:
    """Whether `**kwargs` (or `*args`) may pass the argument we look for."""
    return any(kw.arg is None for kw in node.keywords) or any(isinstance(a, ast.Starred) for a in node.args)

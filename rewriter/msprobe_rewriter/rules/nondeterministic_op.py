"""MSP501 nondeterministic-op: operators PyTorch documents as non-deterministic on CUDA."""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterator
from itertools import pairwise
from pathlib import Path

from msprobe_rewriter import catalogue, environment, no_grad_callers, opt_in, pinning, project, seeding
from msprobe_rewriter.context import (
    EVAL_FILE,
    EVAL_NAME,
    FUNCTION_TYPES,
    NOT_CONSTANT,
    FileContext,
    Site,
    argument,
    constant,
    keyword,
    target_name,
    walk_scope,
)
from msprobe_rewriter.cpu_code import CpuCode, is_model_base
from msprobe_rewriter.rules.base import Invalid, Rule
from msprobe_rewriter.rules.dist_no_deterministic_comm import communicates_over_hccl
from msprobe_rewriter.values import DictFact, FollowsValues, LocalValues

LINEAR_MODES = frozenset({"linear", "bilinear", "bicubic", "trilinear"})
NONDETERMINISTIC_PADDING = frozenset({"reflect", "replicate"})
DETERMINISTIC_REDUCTIONS = frozenset({"amax", "amin"})
SEGMENTATION_VOID_LABEL = 255
# Calls that switch PyTorch's deterministic mode on (their first argument must not be a literal off value).
SWITCH_CALLS = {"torch.use_deterministic_algorithms": (False,), "torch.set_deterministic_debug_mode": (0, "default")}
# Asks whether the switch is on: under `if torch.are_deterministic_algorithms_enabled():` the kernels it fixes run.
SWITCH_QUERY = "torch.are_deterministic_algorithms_enabled"
# Image augmentation libraries that work on the CPU (NumPy arrays): a file using one and defining no module is
# data-pipeline code (latent-diffusion's BSRGAN degradations).
CPU_AUGMENTATION_LIBRARIES = ("albumentations", "imgaug")
EMPTY_MAPPING = "collections.OrderedDict"  # called without arguments (or `dict()`, `{}`): a new empty mapping
# Accumulating ops -> the positions of their index (None: a tuple of them) and of the values they add (method
# form; one more for the function form). Not `put_` without `accumulate`: duplicates pick a winner, of any dtype.
ACCUMULATED_SOURCE = {"index_add": (1, 2, "source"), "scatter_add": (1, 2, "src"), "index_put": (None, 1, "values"),
                      "scatter_reduce": (1, 2, "src"), "scatter": (1, 2, "src")}
INTEGER_DTYPES = frozenset(f"torch.{name}" for name in (
    "long", "int", "short", "int64", "int32", "int16", "int8", "uint8", "bool"))
INTEGER_CASTS = frozenset({"long", "int", "short", "byte", "bool"})
INTEGER_LIKE = frozenset({"torch.ones_like", "torch.zeros_like", "torch.full_like", "torch.empty_like"})
ONES = frozenset({"torch.ones", "torch.ones_like"})
# Counting in floats (`torch.histc`, adding ones): each count is an integer, exact in any order below 2**24.
COUNTS = ("counts in floats: exact, whatever the order of its adds, while each count stays below 2**24 (float32's "
          "last exact integer); past that it may differ run to run on CUDA")
# `index_copy` is non-deterministic only when its index repeats (the copy written last wins), and `index_add` too
# (each row it adds to receives one atomic add of one source row: exact; its backward is `index_select`). Indices
# unique by construction: these calls (a range, a permutation, sorted distinct values), what keeps their elements
# (a slice of one: dinov2's stochastic depth `torch.randperm(b)[:k]`), a tensor of a list built from consecutive
# ranges, and token positions (a KV cache written at `input_pos`).
DUPLICATE_INDEX_OPS = frozenset({"index_copy"})
UNIQUE_INDEX_EXACT = DUPLICATE_INDEX_OPS | {"index_add"}
# Scatters that add (or reduce) into each output the source elements whose index points at it: with an index of
# size 1 along the scatter dim (`ids.unsqueeze(dim)`), each output gets at most one, an exact result.
SCATTER_REDUCING = frozenset({"scatter_add", "scatter_reduce", "scatter"})
# Tensor methods whose literal arguments give the number of dimensions of what they return.
SHAPING_METHODS = frozenset({"expand", "view", "reshape"})
UNIQUE_INDEX_CALLS = frozenset({"torch.arange", "torch.randperm", "torch.argsort", "torch.unique"})
UNIQUE_INDEX_METHODS = frozenset({"argsort", "unique"})
# Calls returning (values, indices), whose indices are distinct positions: `torch.sort(x)[1]` is a permutation
# (ms-swift's NPU MoE `torch.sort(flatten_indices.float(), stable=True)[1]`), `topk`'s are k distinct positions.
INDEXED_RESULT_CALLS = frozenset({"torch.sort", "torch.topk"})
INDEXED_RESULT_METHODS = frozenset({"sort", "topk"})
# Calls making a new tensor (nothing else holds it).
NEW_TENSOR_CALLS = INTEGER_LIKE | frozenset({"torch.zeros", "torch.empty", "torch.full"})
NEW_TENSOR_METHODS = frozenset({"new_zeros", "new_empty", "new_full"})
# Parts of a mapping's name (`metrics`, `log_dict`) saying that what it holds is reported, not trained on (not
# `stats`: a layer's running statistics are).
LOGGED_NAME_PARTS = frozenset({"metric", "metrics", "log", "logs", "logging"})
INDEX_KEEPING_METHODS = frozenset({"to", "cuda", "cpu", "long", "int", "contiguous", "clone", "detach"})
INDEX_TENSORS = frozenset({"torch.tensor", "torch.as_tensor", "torch.LongTensor", "torch.IntTensor"})
POSITION_INDEX = re.compile(r"(input_|cache_)?pos(ition)?s?")
# Calls that change the list or tensor they are called on (what it holds, or whether it needs a gradient).
CHANGING_CALLS = frozenset({"append", "extend", "insert", "requires_grad_"})
# Folders of a data package (SlowFast's `slowfast/datasets/`): code there prepares samples, which need no gradient.
DATA_FOLDERS = frozenset({"data", "datasets", "dataset", "dataloader", "dataloaders"})
# Folders and files of data preprocessors (mmengine's `model.data_preprocessor` and its `batch_augments`, mmdet's
# `models/data_preprocessors/`): modules that move the loader's batch to the device, normalise and resize it before
# the model runs, so no gradient flows back through them.
DATA_PREPROCESSORS = frozenset({"data_preprocessor", "data_preprocessors"})
# A parameter named for images (or frames, audio) or a loader's batch, of a function that is no module's method,
# holds data (ultralytics' `DetectionTrainer.preprocess_batch(batch)` resizes `batch["img"]`).
DATA_PARAMETER = re.compile(r"(img|image|pic|frame|video|audio|wav|waveform)s?|batch(es)?", re.IGNORECASE)
# A parameter named for a checkpoint or a state dict (`checkpoint_model`, `pos_embed_checkpoint`, `state_dict`,
# `ckpt`): weights read from a file, which need no gradient (LAVIS's `interpolate_pos_embed(model, checkpoint_model)`).
CHECKPOINT_PARAMETER = re.compile(r"\w*(checkpoint|ckpt|state_dict)\w*", re.IGNORECASE)
# Ground truth (`gt_masks`, `gt_instances.masks`): targets, which need no gradient (mmdet's YOLACT resizes its
# `gt_masks` to the prototypes' size).
GROUND_TRUTH = re.compile(r"gts?|gt_\w+", re.IGNORECASE)
# Hugging Face's loader of compiled kernels from the Hub, and the names of FlashAttention's repositories there
# (`kernels-community/flash-attn3`, `varunneal/flash-attention-3`).
HUB_KERNEL_LOADER = "kernels.get_kernel"
HF_FLASH_FIX = ("transformers' FlashAttention backward adds the query gradients with atomics unless the environment "
                "holds `FLASH_ATTENTION_DETERMINISTIC=1`, which torch's deterministic switch does not set: set "
                "`os.environ[\"FLASH_ATTENTION_DETERMINISTIC\"] = \"1\"` (read at every call), call "
                "`transformers.enable_full_determinism(seed)` or pass `full_determinism=True` to the training "
                "arguments, or `seed_all(seed, mode=True)` (msprobe), while debugging")
HUB_FLASH_ATTENTION = re.compile(r"flash[-_]?att(n|ention)", re.IGNORECASE)
# Triton's atomic addition, in a kernel (`@triton.jit`): program instances add in the order they reach it.
TRITON_ATOMIC_ADD = "triton.language.atomic_add"
TRITON_JIT = frozenset({"triton.jit", "triton.runtime.jit", "triton.runtime.jit.jit"})
TRITON_INTEGER_DTYPE = re.compile(r"triton\.language\.u?int(8|16|32|64)")
TRITON_ATOMIC_FIX = ("`tl.atomic_add` of floats in a Triton kernel is not deterministic: the program instances add in "
                     "whatever order they reach it, and no deterministic switch reaches Triton: while debugging, write "
                     "each block's part to a slot of its own and sum the slots in a fixed order (a second kernel or "
                     "`torch.sum`)")
# Last components of every name the rule knows: calls named otherwise are skipped without resolving them.
# Contexts that record the operations in them even where autograd otherwise does not (a custom Function's forward).
GRAD_ENABLING = frozenset({"torch.enable_grad", "torch.autograd.enable_grad", "torch.set_grad_enabled",
                           "torch.autograd.set_grad_enabled"})
KNOWN_NAMES = frozenset(name.rsplit(".", 1)[1] for name in (*catalogue.NONDETERMINISTIC_OPS, *SWITCH_CALLS,
                                                             *catalogue.DETERMINISM_CALLS))


def _given(value: ast.expr | None) -> bool:
    """An argument that is passed and not a literal None/False."""
    return value is not None and constant(value) not in (None, False)


def _in(value: ast.expr | None, allowed: frozenset[str]) -> bool:
    """A literal string argument from `allowed` (a variable does not count)."""
    literal = constant(value)
    return isinstance(literal, str) and literal in allowed


def _all_ones(value: ast.expr | None) -> bool:
    """`1`, `(1, 1)`, `[1, 1, 1]`: a global-pooling output size."""
    if isinstance(value, (ast.Tuple, ast.List)):
        return bool(value.elts) and all(constant(e) == 1 for e in value.elts)
    return constant(value) == 1


def _classes_moved_to_dim1(value: ast.expr | None) -> bool:
    """`logits.transpose(1, 2)`, `x.permute(0, 3, 1, 2)`: a tensor of 3 or more dimensions (an index of 2 or
    more, or three permuted dimensions), as a loss's input moved so its classes come in dim 1. The shape of
    any other input is unknown (2-D classification logits are the common case and are deterministic)."""
    if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute)):
        return False
    literals = [constant(arg) for arg in value.args]
    if value.func.attr in ("transpose", "swapaxes", "swapdims") and len(literals) == 2:
        return any(isinstance(i, int) and (i >= 2 or i <= -3) for i in literals)
    if value.func.attr == "permute":
        return len(literals) >= 3 or len(literals) == 1 and isinstance(value.args[0], (ast.Tuple, ast.List)) \
            and len(value.args[0].elts) >= 3
    return False


def _runs_nll_2d(ignore_index: int, reduction: int, takes_input: bool) -> Condition:
    """The condition of a negative log-likelihood loss (function or module, its arguments at these positions) that
    runs `nll_loss2d` and reduces: its input moved so the classes come in dim 1, or `ignore_index=255`, the void
    label of segmentation masks (VOC, Cityscapes, ADE20K), whose losses take (N, C, H, W) scores."""
    def condition(call: ast.Call, off: int) -> bool:
        spatial = (constant(argument(call, ignore_index, "ignore_index")) == SEGMENTATION_VOID_LABEL
                   or takes_input and _classes_moved_to_dim1(argument(call, 0, "input")))
        return spatial and not _in(argument(call, reduction, "reduction"), frozenset({"none"}))
    return condition


# Whether a tensor needs no gradient: GRADIENT_FREE (no conditions), None (it may need one), or the loops whose
# headers bind it, which must turn out to be training loops (known after the traversal) for it to need none.
Verdict = frozenset[ast.AST] | None
GRADIENT_FREE: frozenset[ast.AST] = frozenset()


def _both(first: Verdict, second: Verdict) -> Verdict:
    """Gradient-free when both are (an operation on two tensors needs a gradient if either does)."""
    return None if first is None or second is None else first | second


# Short op name -> whether this call takes the non-deterministic path. `off` is 1 for the function form
# (`torch.index_put(x, ...)`) and 0 for the method form (`x.index_put_(...)`), which lacks `self`.
Condition = Callable[[ast.Call, int], bool]
CONDITIONS: dict[str, Condition] = {
    "index_put": lambda call, off: _given(argument(call, 2 + off, "accumulate")),
    "scatter": lambda call, off: _given(keyword(call, "reduce")),
    "scatter_reduce": lambda call, off: not _in(argument(call, 3 + off, "reduce"), DETERMINISTIC_REDUCTIONS),
    "bincount": lambda call, off: _given(argument(call, off, "weights")),
    "median": lambda call, off: argument(call, off, "dim") is not None,
    "EmbeddingBag": lambda call, off: _in(argument(call, 5, "mode"), frozenset({"max"})),
    "embedding_bag": lambda call, off: _in(argument(call, 6, "mode"), frozenset({"max"})),
    "interpolate": lambda call, off: _in(argument(call, 3, "mode"), LINEAR_MODES),
    "upsample": lambda call, off: _in(argument(call, 3, "mode"), LINEAR_MODES),
    "Upsample": lambda call, off: _in(argument(call, 2, "mode"), LINEAR_MODES),
    "AdaptiveAvgPool2d": lambda call, off: not _all_ones(argument(call, 0, "output_size")),
    "AdaptiveAvgPool3d": lambda call, off: not _all_ones(argument(call, 0, "output_size")),
    "adaptive_avg_pool2d": lambda call, off: not _all_ones(argument(call, 1, "output_size")),
    "adaptive_avg_pool3d": lambda call, off: not _all_ones(argument(call, 1, "output_size")),
    "pad": lambda call, off: _in(argument(call, 2, "mode"), NONDETERMINISTIC_PADDING),
    "Conv1d": lambda call, off: _in(argument(call, 8, "padding_mode"), NONDETERMINISTIC_PADDING),
    "Conv2d": lambda call, off: _in(argument(call, 8, "padding_mode"), NONDETERMINISTIC_PADDING),
    "Conv3d": lambda call, off: _in(argument(call, 8, "padding_mode"), NONDETERMINISTIC_PADDING),
    **dict.fromkeys(("cross_entropy", "nll_loss"), _runs_nll_2d(ignore_index=4, reduction=6, takes_input=True)),
    **dict.fromkeys(("CrossEntropyLoss", "NLLLoss"), _runs_nll_2d(ignore_index=2, reduction=4, takes_input=False)),
    **dict.fromkeys((*catalogue.FLASH_ATTENTION_FUNCTIONS, *catalogue.FLASH_ATTENTION_1_FUNCTIONS),
                    lambda call, off: not _given(keyword(call, "deterministic"))),
}


NLL_LOSS_MODULES = frozenset({"torch.nn.CrossEntropyLoss", "torch.nn.NLLLoss"})
# In a file that runs on Ascend only, CANN's kernels are what run: they accumulate in a varying order until
# deterministic computing is on, which torch_npu switches on with PyTorch's deterministic switch.
ASCEND_FIX = ("is not deterministic on Ascend until deterministic computing is on: call "
              "`torch.use_deterministic_algorithms(True)` (torch_npu passes it on to CANN) or `seed_all(seed, "
              "mode=True)`, which also sets `HCCL_DETERMINISTIC=true` for the collectives")


class NondeterministicOp(FollowsValues, Rule):
    code = "MSP501"
    name = "nondeterministic-op"
    severity = "warning"
    switched_by_flags = True
    frameworks = ("pytorch",)
    message = ("this operator is not deterministic on CUDA; use its deterministic alternative or "
               "`torch.use_deterministic_algorithms(True)`")
    summary = ("Flags calls of operators that `torch.use_deterministic_algorithms` documents as non-deterministic "
               "on CUDA (`index_add_`, `scatter_add_`, `scatter_reduce_`, `index_put_(accumulate=True)`, `put_`, "
               "`index_copy_` (it and `index_add_` only with duplicate indices: not on a range, permutation, "
               "`argsort` or `unique` index, the indices of `sort` or `topk` (`torch.sort(x)[1]`, `.indices`), or a "
               "slice of one (dinov2's stochastic depth `torch.randperm(b)[:k]`), a "
               "tensor of a list of consecutive ranges (TinyLlama's LoRA `lora_ind`) or token positions (a KV cache "
               "written at `input_pos`); scatters not with an index of size 1 along the scatter dim, `ids.unsqueeze(dim)`: "
               "each output gets at most one value), "
               "`bincount(weights=)`, `histc`, `median(dim)` (as a tensor method: when its indices "
               "are read), `EmbeddingBag(mode='max')`, `ctc_loss`, `interpolate`/`Upsample` in linear and bicubic modes, adaptive and 3-D pooling, reflection and "
               "replication padding, `grid_sample`, `MaxUnpool`, `NLLLoss2d`, and `cross_entropy`/`nll_loss` on an input transposed or permuted so that its classes come in dim 1 (DETR's `F.cross_entropy(logits.transpose(1, 2), target)`) or given `ignore_index=255`, the void label of segmentation masks (also `nn.CrossEntropyLoss`/`nn.NLLLoss`, given `ignore_index=255` or called, through the name or attribute holding one, on such a moved input: open_clip's `self.caption_loss(logits.permute(0, 2, 1), labels)`): 3 or more dimensions run `nll_loss2d`; the shape of other inputs is unknown), and FlashAttention's `flash_attn_func` / `flash_attn_varlen_func` (and "
               "their packed forms; versions 2 and 3; also through an attribute the class sets to one, OLMo's "
               "`self.flash_attn_func = flash_attn_func`, or on a module Hugging Face's `kernels.get_kernel` loads "
               "from a Hub repository of FlashAttention, modded-nanogpt's `get_kernel('kernels-community/flash-attn3')"
               ".flash_attn_interface`) and version 1.0's `flash_attn_unpadded_func` (and its packed and split forms) "
               "without `deterministic=True`, xformers' `memory_efficient_attention` (its backward adds atomically "
               "until the deterministic switch makes xformers 0.0.22 and later pick the deterministic cutlass one), "
               "transformers' FlashAttention chosen in a file that trains (itself or through the project modules it "
               "calls) by `attn_implementation=\"flash_attention_2\"` (or 3, or a Hub FlashAttention kernel; a "
               "literal, or an option or parameter whose default is one, given to `from_pretrained`, a dict of model "
               "keywords or a project function handing it on: LLaVA's `train(attn_implementation=...)`), unless the "
               "file sets `FLASH_ATTENTION_DETERMINISTIC=1`, calls `enable_full_determinism`, passes "
               "`full_determinism=True` to the training arguments or calls `seed_all(mode=True)`, "
               "and `tl.atomic_add` in a Triton kernel (`@triton.jit`; also of `triton_pre_mlir`, the "
               "pre-MLIR fork FlashAttention's old Triton kernel imports as `triton`) unless what it adds "
               "is an integer (a literal, a cast to an integer dtype: counters are exact), naming the deterministic "
               "way out (also through a function of the project, of the same name, that hands its parameters on to the op in "
               "their order: DETR's util/misc.py `interpolate`), and mmcv's CUDA ops whose backward adds with `atomicAdd` beyond the switch's reach (`RoIAlign`, "
               "`DeformConv2d`, `ModulatedDeformConv2d`, `MultiScaleDeformableAttention` and their function forms; "
               "`point_sample` runs `grid_sample`). "
               "Ops that the deterministic switch fixes are not reported in a file that turns it on (also through "
               "`seed_all(mode=True)`, `set_seed(..., deterministic=True)` or `enable_full_determinism()`); none is "
               "reported in code that runs on the CPU (datasets, collate functions, transforms, weight "
               "initialisation), and those whose forward is deterministic (interpolation, pooling, padding, "
               "`grid_sample`, ...) not where no gradient flows back through them: under `torch.no_grad()` or "
               "`inference_mode`; in a top-level function (or a module's `forward`) that every place of the project "
               "naming it calls so, in data code (datasets, transforms) or from other such functions, a module only "
               "through the `self.` attribute holding it (BasicSR's `filter2D`, called by `@torch.no_grad()` "
               "`feed_data` and by `USMSharp.forward`, which only `feed_data` calls; vits' `spectrogram_torch`, "
               "called only by its dataset); in a file defining no module whose functions other files call only so "
               "(VideoMAE's flat video_transforms.py, which its datasets use); or on a tensor read from a checkpoint (`torch.load(...)`, `state_dict()`; also "
               "through a loop over its `.items()` or `.values()`, or renamed into a new mapping that the function "
               "only fills with such tensors: VideoMAE's `new_dict[key[9:]] = checkpoint_model[key]`; a parameter named "
               "for a checkpoint or state dict, LAVIS's `interpolate_pos_embed(model, checkpoint_model)`; a mapping the "
               "function hands to `load_state_dict`, Swin's `load_pretrained`), a parameter created with `requires_grad=False` "
               "(also handed to a method of its class: ijepa's `pos_embed`), a dict entry holding such a tensor, "
               "detached, a new tensor (`torch.Tensor(x.asnumpy())`: what a statement of the function's own body "
               "binds replaces what the name held before, ICON's `im_feat`), an entry of a `self.` mapping the class fills only with such tensors (SlowFast's "
               "Grad-CAM hooks keep `output.clone().detach()`), what torch functions make of such tensors alone "
               "(`torch.sum(weights * activations, dim=1)`, `F.relu(x)`), or a batch that a training loop's header binds (`for i, (imgs, targets) in "
               "enumerate(loader):` of a loop that runs training steps and makes no tensor require a gradient; "
               "not the targets of other loops), also after dtype, device and layout methods, these ops and "
               "arithmetic with constants or new tensors (yolov5's multi-scale `interpolate(imgs.float() / 255, ...)`), "
               "a result detached before any other use (`x = F.interpolate(x, ...)` then `x = x.detach()`) or replaced by a "
               "comparison of it (mask2former's `attn_mask = attn_mask.sigmoid() < 0.5`; also after layout methods "
               "rebinding it), ground truth (`gt_masks`, `gt_instances.masks`: mmdet's YOLACT targets), an image or "
               "batch parameter (`image`, `imgs`, `frame`, `batch`: ultralytics' `preprocess_batch`) of a method of a "
               "plain class (no module), or in a file or package folder of data preprocessors (`data_preprocessor(s)`: "
               "mmdet's `BatchSyncRandomResize` resizes the loader's batch). Findings in a "
               "top-level function that only evaluation code names (functions named for it, evaluation scripts), "
               "directly or through other such functions, in this file and the project's others, are info, tagged "
               "evaluation only (open_clip's `maybe_compute_generative_loss`, which only `evaluate()` calls; dinov2's "
               "`extract_features`, called only by `eval_knn` and `eval_log_regression`); not methods (a framework "
               "calls `training_step` unnamed), registered functions (decorated: a config names them), those a file "
               "imports and hands on (a package's `__init__.py`), nor because of `no_grad` or `inference_mode`, under which training "
               "computes targets, updates and hand-written backwards too (MaskFeat's HOG `scatter_add_`, nanotron's "
               "ring attention backward). So are those in a module's inference path: a method named `predict` (mmdet 3.x's "
               "heads, whose training path is `loss`), or code that runs only when `self.training` is false (`if not "
               "self.training:`, the `else:` of `if self.training:`, after an `if self.training:` branch that returns: "
               "ultralytics' segmentation head). Nor are "
               "ops the switch fixes inside `if torch.are_deterministic_algorithms_enabled():`, accumulations of "
               "integer tensors (counts: exact in any order; also into a tensor made with an integer dtype, "
               "ultralytics' `offsets = torch.zeros(n, dtype=torch.long)`), or anything in a data-pipeline file (it uses "
               "albumentations or imgaug and defines no module); nor those whose forward is deterministic in a file "
               "of a data package (a package folder named `data`, `datasets`, ...: SlowFast's `datasets/transform.py`; "
               "also a namespace package, as the file's imports of a module beside it name it: jepa's "
               "`src/datasets/utils/video/transforms.py` imports `src.datasets.utils.video.functional`) "
               "that defines no module. Counting in floats (`histc`, adding ones) is info: exact in any order while "
               "each count stays below 2**24. So is an in-place accumulation into a new tensor (`torch.zeros`, "
               "`new_zeros`) that the statements after it only store, whole or by item, in a mapping named for "
               "reported values (`metrics`, `log_dict`: ms-swift's per-channel loss metrics). In "
               "a file that runs on Ascend only (it imports torch_npu or uses NPU devices, and names no CUDA; or it "
               "starts its collectives with the `hccl` backend) the "
               "advice is Ascend's, without cuBLAS's variable: CANN's kernels vary run to run until deterministic "
               "computing is on, which `torch.use_deterministic_algorithms(True)` (torch_npu honours it) or "
               "`seed_all(seed, mode=True)` turns on, so there the switch silences every op. PyTorch "
               "only: MindSpore (2.10) documents no operator as non-deterministic by atomic accumulation (its "
               "docstrings only warn that duplicate indices leave the winner of `TensorScatterUpdate`, "
               "`ScatterUpdate`, `tensor_scatter_elements` or `Tensor.index_copy_` undefined), and on Ascend "
               "many kernels that accumulate, matmul included, are non-deterministic until deterministic "
               "computing is on, so for MindSpore the check is that switch: no-deterministic-algos (MSP104).")
    why = ("These kernels accumulate with atomic additions (or pick among duplicate indices) in whatever order the "
           "GPU threads happen to run, so floating-point sums differ in the last bits from run to run even with "
           "every seed fixed. The differences grow through training, and a GPU-vs-NPU comparison cannot separate "
           "them from real precision bugs. Some have no deterministic CUDA kernel at all: with the deterministic "
           "switch on they raise.")
    fix = ("Call `torch.use_deterministic_algorithms(True)` (set `CUBLAS_WORKSPACE_CONFIG=:4096:8` on CUDA) for the "
           "ops that have a deterministic kernel; for the others use the alternative in the message (nearest "
           "interpolation, plain pooling, zero padding, computing on the CPU) while debugging. On Ascend the switch "
           "(torch_npu turns CANN's deterministic computing on) or `seed_all(seed, mode=True)` covers every op, "
           "and `HCCL_DETERMINISTIC=true` the collectives. Convolutions are "
           "covered by cudnn-benchmark; `gather`/`index_select` backward and `cumsum` (mostly on integer "
           "positions) are left to the deterministic switch and are not reported one by one.")
    valid = (
        # transformers' FlashAttention-2 under `enable_full_determinism` (through `full_determinism=True`), or only
        # generating (no backward)
        "from transformers import AutoModelForCausalLM, Trainer, TrainingArguments\n\n"
        "if __name__ == '__main__':\n"
        "    model = AutoModelForCausalLM.from_pretrained('gpt2', attn_implementation='flash_attention_2')\n"
        "    Trainer(model=model, args=TrainingArguments('out', full_determinism=True)).train()\n",
        "from transformers import AutoModelForCausalLM\n\n"
        "if __name__ == '__main__':\n"
        "    model = AutoModelForCausalLM.from_pretrained('gpt2', attn_implementation='flash_attention_2')\n"
        "    print(model.generate(max_new_tokens=8))\n",
        "import torch\nimport torch.nn.functional as F\n\n\ndef up(x):\n"
        "    x = F.interpolate(x, scale_factor=2)  # nearest by default\n"
        "    return F.interpolate(x, scale_factor=2, mode='nearest')\n",
        "import torch.nn as nn\n\npool = nn.AdaptiveAvgPool2d((1, 1))  # global pooling computes a mean\n"
        "bag = nn.EmbeddingBag(1000, 64, mode='sum')\nconv = nn.Conv2d(3, 8, 3, padding=1)\n",
        "import torch\n\ntorch.use_deterministic_algorithms(True)\n\n\ndef accumulate(out, idx, src):\n"
        "    out.index_add_(0, idx, src)\n    return out.scatter_add_(0, idx, src)\n",
        # what msprobe-instrument --deterministic writes switches the kernels on too
        "import torch\nfrom msprobe_runtime.pytorch import seed_all\n\nseed_all(seed=1234, mode=True)\n\n\n"
        "def accumulate(out, idx, src):\n    return out.index_add_(0, idx, src)\n",
        "import numpy as np\nimport torch\n\ncounts = np.bincount([1, 2, 2], weights=[0.5, 1.0, 1.0])\n"
        "mid = np.median(np.arange(5), axis=0)\n",
        # Ascend (ModelZoo's CRNN): the deterministic switch covers CANN's CTC loss too
        "import torch\nimport torch_npu\n\ntorch.use_deterministic_algorithms(True)\n"
        "criterion = torch.nn.CTCLoss(blank=0).npu()\n",
        "import torch\n\n\ndef stats(x, idx):\n    hist = torch.bincount(idx)  # no weights: deterministic\n"
        "    top = x.scatter_reduce(0, idx, x, reduce='amax')\n    return x.median(), hist, top\n",
        "import statistics\nimport torch\n\nvalue = statistics.median([1, 2, 3])\n",
        "import numpy as np\nimport torch\n\n\nclass History:\n    def __init__(self):\n        self.values = []\n\n"
        "    def median(self, window):\n        return float(np.median(self.values[-window:]))\n\n\n"
        "eta = History().median(20) * 100\n\n\ndef middle(x):\n    return x.median(1).values  # the values are deterministic\n",
        "def accumulate(out, idx, src):  # not a torch file\n    return out.index_add_(0, idx, src)\n",
        # (N, C) logits, flattened positions, or a loss per element: deterministic kernels
        "import torch.nn.functional as F\n\n\ndef losses(logits, target, seq_logits, seq_target):\n"
        "    plain = F.cross_entropy(logits, target)\n"
        "    flat = F.cross_entropy(seq_logits.flatten(0, 1), seq_target.flatten())\n"
        "    each = F.cross_entropy(seq_logits.transpose(1, 2), seq_target, reduction='none')\n"
        "    return plain, flat, each, F.nll_loss(logits.transpose(0, 1), target)\n",
        "import torch\nimport torch.nn.functional as F\n\n\n@torch.no_grad()\ndef resize_pos_embed(pos, size):\n"
        "    return F.interpolate(pos, size=size, mode='bicubic')  # no backward, forward is deterministic\n",
        # deit's fine-tuning: a position embedding read from a checkpoint needs no gradient
        "import torch\nimport torch.nn.functional as F\n\n\ndef finetune(model, path):\n"
        "    checkpoint = torch.load(path, map_location='cpu')\n    pos = checkpoint['model']['pos_embed']\n"
        "    tokens = pos[:, 1:].reshape(1, 14, 14, -1).permute(0, 3, 1, 2)\n"
        "    tokens = F.interpolate(tokens, size=(16, 16), mode='bicubic')\n"
        "    current = F.interpolate(model.state_dict()['pos_embed'], size=(16, 16), mode='bicubic')\n"
        "    return tokens, current\n\n\ndef show(pred, size):\n    with torch.no_grad():\n"
        "        big = F.interpolate(pred, size=size, mode='bilinear')\n"
        "    return big, F.interpolate(pred.detach(), size=size, mode='bilinear')\n",
        # data loading runs on the CPU (yolov5's collate_fn4)
        "import torch\nimport torch.nn.functional as F\nfrom torch.utils.data import Dataset\n\n\n"
        "class Images(Dataset):\n    def __getitem__(self, i):\n"
        "        return F.interpolate(self.items[i][None], scale_factor=2, mode='bilinear')[0]\n\n\n"
        "def collate_fn4(batch):\n    out = torch.zeros(len(batch), 4)\n"
        "    return out.index_add_(0, torch.arange(len(batch)), torch.stack(batch))\n",
        # yolov5's multi-scale training: the batch a training loop reads needs no gradient, nor what dtype and
        # device changes and arithmetic with constants or new tensors make of it
        "import torch\nimport torch.nn.functional as F\nfrom tqdm import tqdm\n\n\n"
        "def train(model, loader, optimizer, device, sizes):\n"
        "    mean = torch.tensor([0.485, 0.456, 0.406], device=device).view(1, 3, 1, 1)\n"
        "    for epoch in range(10):\n        pbar = tqdm(enumerate(loader))\n"
        "        for i, (imgs, targets) in pbar:\n"
        "            imgs = imgs.to(device, non_blocking=True).float() / 255\n"
        "            imgs = F.interpolate(imgs, size=sizes[i % 3], mode='bilinear', align_corners=False)\n"
        "            small = F.interpolate((imgs - mean) / 0.225, scale_factor=0.5, mode='bilinear')\n"
        "            loss = model(imgs, small, targets)\n            loss.backward()\n"
        "            optimizer.step()\n",
        # the step runs in a function the loop calls
        "import torch.nn.functional as F\n\n\ndef train_step(model, optimizer, images):\n"
        "    loss = model(images).mean()\n    loss.backward()\n    optimizer.step()\n\n\n"
        "def train(model, optimizer, loader):\n    for batch in loader:\n"
        "        images = F.interpolate(batch['image'].cuda(), scale_factor=2, mode='bicubic')\n"
        "        train_step(model, optimizer, images)\n",
        # latent-diffusion's get_input: the resized batch is detached before any other use; segment-anything's
        # resize transform of an input image (a plain class); counts added as integers are exact
        "import torch\nimport torch.nn.functional as F\n\n\nclass Model(torch.nn.Module):\n"
        "    def get_input(self, batch, k, size):\n        x = batch[k].float()\n        if size != x.shape[2]:\n"
        "            x = F.interpolate(x, size=size, mode='bicubic')\n        x = x.detach()\n        return x\n\n\n"
        "class ResizeLongestSide:\n    def apply_image_torch(self, image, size):\n"
        "        return F.interpolate(image, size, mode='bilinear', align_corners=False)\n\n\n"
        "def batched_bincount(index, n, dim=-1):\n    out = index.new_zeros(n)\n"
        "    out.scatter_add_(dim, index, torch.ones_like(index, dtype=index.dtype))\n"
        "    return out.index_add_(0, index, torch.ones(len(index), dtype=torch.long))\n",
        # latent-diffusion's BSRGAN degradations: a data-pipeline file (a CPU augmentation library, no module)
        "import albumentations\nimport torch\n\n\ndef blur(x, k):\n"
        "    x = torch.nn.functional.pad(x, pad=(1, 1, 1, 1), mode='replicate')\n"
        "    return torch.nn.functional.conv2d(x, k)\n",
        # VideoMAE's fine-tuning: a checkpoint's entries renamed into a new mapping need no gradient either
        "import torch\nfrom collections import OrderedDict\n\n\ndef finetune(model, path, size):\n"
        "    checkpoint = torch.load(path, map_location='cpu')['model']\n    renamed = OrderedDict()\n"
        "    for key in list(checkpoint):\n        renamed[key.replace('backbone.', '')] = checkpoint[key]\n"
        "    checkpoint = renamed\n"
        "    pos = torch.nn.functional.interpolate(checkpoint['pos_embed'], size=size, mode='bicubic')\n"
        "    checkpoint['pos_embed'] = pos\n    model.load_state_dict(checkpoint)\n",
        # LAVIS's `interpolate_pos_embed(model, checkpoint_model)`: a parameter named for a checkpoint holds weights;
        # Swin's `load_pretrained`: a mapping the function loads into a model holds weights, whoever built it
        "import torch\nimport torch.nn.functional as F\n\n\ndef interpolate_pos_embed(model, checkpoint_model):\n"
        "    pos = checkpoint_model['pos_embed'].float()[:, 1:].reshape(1, 14, 14, -1).permute(0, 3, 1, 2)\n"
        "    checkpoint_model['pos_embed'] = F.interpolate(pos, size=(16, 16), mode='bicubic')\n\n\n"
        "def load_pretrained(model, path, merge):\n    state_dict = merge(torch.load(path, map_location='cpu'))\n"
        "    for k in [k for k in state_dict if 'bias_table' in k]:\n"
        "        state_dict[k] = F.interpolate(state_dict[k][None], size=(27, 27), mode='bicubic')[0]\n"
        "    model.load_state_dict(state_dict, strict=False)\n",
        # ICON's feature sampling: both tensors are made anew from host arrays (the statement of the function's body
        # replaces what the parameter held before)
        "import torch\n\n\nclass Extractor(torch.nn.Module):\n    def sampling(self, points, im_feat=None):\n"
        "        if im_feat is None:\n            im_feat = self.im_feat\n"
        "        points = torch.Tensor(points.asnumpy())\n        im_feat = torch.Tensor(im_feat.asnumpy())\n"
        "        return torch.nn.functional.grid_sample(im_feat, points.unsqueeze(2), align_corners=True)\n",
        # SlowFast's Grad-CAM: torch functions of what its hooks keep detached
        "import torch\nimport torch.nn.functional as F\n\n\nclass GradCAM:\n    def __init__(self, model, layer):\n"
        "        self.model = model\n        self.gradients = {}\n        self.activations = {}\n\n"
        "        def keep_gradient(module, grad_input, grad_output):\n"
        "            self.gradients[layer] = grad_output[0].detach()\n\n"
        "        def keep_activation(module, inputs, output):\n"
        "            self.activations[layer] = output.clone().detach()\n\n"
        "        layer.register_forward_hook(keep_activation)\n        layer.register_full_backward_hook(keep_gradient)\n\n"
        "    def localize(self, inputs, layer, size):\n        self.model(inputs).max().backward()\n"
        "        weights = torch.mean(self.gradients[layer], dim=(2, 3), keepdim=True)\n"
        "        cam = F.relu(torch.sum(weights * self.activations[layer], dim=1, keepdim=True))\n"
        "        return F.interpolate(cam, size=size, mode='bilinear')\n",
        # only called without gradient: BasicSR's `filter2D`, called by a `@torch.no_grad()` method and by a module's
        # `forward` that only that method calls; vits' `spectrogram_torch`, called only by its dataset
        "import torch\nimport torch.nn.functional as F\nfrom torch.utils.data import Dataset\n\n\n"
        "def filter2d(img, kernel):\n    img = F.pad(img, (1, 1, 1, 1), mode='reflect')\n"
        "    return F.conv2d(img, kernel)\n\n\nclass Sharpen(torch.nn.Module):\n    def forward(self, img):\n"
        "        return img + filter2d(img, self.kernel)\n\n\nclass Degrade:\n    def __init__(self):\n"
        "        self.sharpen = Sharpen().cuda()\n\n    @torch.no_grad()\n    def feed_data(self, data):\n"
        "        self.gt = self.sharpen(data['gt'])\n        self.lq = filter2d(self.gt, data['kernel'])\n\n\n"
        "def spectrogram(y, n):\n    return F.pad(y.unsqueeze(1), (n, n), mode='reflect')\n\n\n"
        "class Audio(Dataset):\n    def __getitem__(self, i):\n        return spectrogram(self.wavs[i], 512)\n",
        # `index_copy` on indices unique by construction: a KV cache written at the new tokens' positions
        # (lit-llama), a range, and TinyLlama's LoRA `lora_ind`, extended by consecutive ranges
        "import torch\n\n\nclass LoRAQKV(torch.nn.Module):\n    def __init__(self, q, kv, enable_k):\n"
        "        super().__init__()\n        self.lora_ind = []\n        self.lora_ind.extend(range(0, q))\n"
        "        if enable_k:\n            self.lora_ind.extend(range(q, q + kv))\n\n"
        "    def zero_pad(self, x, out):\n        result = x.new_zeros(x.shape[0], out)\n"
        "        return result.index_copy(1, torch.tensor(self.lora_ind, device=x.device), x)\n\n"
        "    def cache(self, cache_k, k, input_pos):\n        rows = torch.arange(k.size(0)).to(k.device)\n"
        "        return cache_k.index_copy_(2, input_pos, k), cache_k.index_copy(0, rows, k)\n",
        # the indices of a sort (a permutation) or of `topk`: ms-swift's NPU MoE unpermutes its expert outputs
        "import torch\n\n\ndef unpermute(out, routing, down, scores, update, k):\n"
        "    order = torch.sort(routing.view(-1).float(), stable=True)[1]\n    out.index_copy_(0, order, down)\n"
        "    out.index_add_(0, scores.sort(descending=True).indices[:k].long(), update)\n"
        "    return out.index_copy(0, torch.topk(scores, k)[1], update)\n",
        # no gradient: a new tensor kept in a dict (audiocraft's saliency), a checkpoint's tensors through
        # `.items()` (SlowFast's loader), a parameter created frozen and handed to a method (ijepa)
        "import torch\nimport torch.nn.functional as F\nfrom torch import nn\n\n\ndef salience(d, rate):\n"
        "    out = {}\n    out['salience'] = torch.Tensor(d['salience']).float().permute(1, 0)\n"
        "    return F.interpolate(out['salience'].unsqueeze(0), scale_factor=rate, mode='linear')\n\n\n"
        "def load_pretrained(path, size):\n    state = torch.load(path, map_location='cpu')['model_state']\n"
        "    for k, v in state.items():\n        v = v.t().unsqueeze(0)\n"
        "        state[k] = F.interpolate(v, size=size, mode='linear')[0].t()\n    return state\n\n\n"
        "class ViT(nn.Module):\n    def __init__(self, n, d):\n        super().__init__()\n"
        "        self.pos_embed = nn.Parameter(torch.zeros(1, n, d), requires_grad=False)\n\n"
        "    def forward(self, x):\n        return x + self.resize(x, self.pos_embed)\n\n"
        "    def resize(self, x, pos_embed):\n        return F.interpolate(pos_embed, size=x.shape[-1], mode='bicubic')\n",
        # a Triton kernel counting with atomics (Megatron's MoE permutation): integer sums are exact
        "import torch\nimport triton\nimport triton.language as tl\n\n\n@triton.jit\n"
        "def count(ids_ptr, counts_ptr, BLOCK: tl.constexpr):\n    ids = tl.load(ids_ptr + tl.arange(0, BLOCK))\n"
        "    one = 1\n    tl.atomic_add(counts_ptr + ids, one)\n    tl.atomic_add(counts_ptr, (ids > 0).to(tl.int32))\n",
        # FlashAttention 1.x told to be deterministic; a Hub kernel of another operator
        "import torch\nfrom flash_attn.flash_attn_interface import flash_attn_unpadded_func\nfrom kernels import "
        "get_kernel\n\nnorms = get_kernel('kernels-community/layer-norm', version=1)\n\n\n"
        "def attend(q, k, v, cu, n):\n"
        "    out = flash_attn_unpadded_func(q, k, v, cu, cu, n, n, 0.0, deterministic=True)\n"
        "    return norms.flash_attn_varlen_func(out)\n",
        # exact adds: dinov2's stochastic depth adds each kept row once (a slice of a permutation), and trl's
        # diffusion loss adds one value per output (an index of size 1 along the scatter dim); xformers' attention
        # under the deterministic switch (xformers picks its deterministic backward)
        "import torch\nfrom xformers.ops import memory_efficient_attention\n\n"
        "torch.use_deterministic_algorithms(True)\n\n\ndef drop_add(x, residual_func, ratio):\n"
        "    b = x.shape[0]\n    k = max(int(b * (1 - ratio)), 1)\n"
        "    brange = (torch.randperm(b, device=x.device))[:k]\n    residual = residual_func(x[brange])\n"
        "    return torch.index_add(x.flatten(1), 0, brange, residual.flatten(1), alpha=b / k)\n\n\n"
        "def correct(logits, ids, bump, n):\n"
        "    return logits.float().scatter_add(2, ids.unsqueeze(-1), bump[:, :, None].expand(-1, n, 1))\n\n\n"
        "def attend(q, k, v):\n    return memory_efficient_attention(q, k, v)\n",
        # FlashAttention kept in an attribute, told to be deterministic
        "import torch\nfrom flash_attn import flash_attn_func\n\n\nclass Attention(torch.nn.Module):\n"
        "    def __init__(self):\n        super().__init__()\n        self.attn_fn = flash_attn_func\n\n"
        "    def forward(self, q, k, v):\n        return self.attn_fn(q, k, v, causal=True, deterministic=True)\n",
        # no gradient: a trainer's batch (a `batch` parameter of a plain class: ultralytics' multi-scale
        # `preprocess_batch`), ground truth (mmdet's YOLACT `gt_masks`), a resized prediction only compared
        # (mask2former's attention mask, `attn_mask.sigmoid() < 0.5`); counts added into an integer tensor
        "import torch\nimport torch.nn.functional as F\nfrom torch import nn\n\n\nclass Trainer:\n"
        "    def preprocess_batch(self, batch, size):\n        imgs = batch['img'].float() / 255\n"
        "        batch['img'] = F.interpolate(imgs, size=size, mode='bilinear', align_corners=False)\n"
        "        return batch\n\n\nclass Head(nn.Module):\n    def targets(self, mask_preds, gt_instances):\n"
        "        gt_masks = gt_instances.masks.to_tensor(dtype=torch.bool, device=mask_preds.device).float()\n"
        "        gt_masks = F.interpolate(gt_masks.unsqueeze(0), mask_preds.shape[-2:], mode='bilinear')\n"
        "        return gt_masks.gt(0.5).float()\n\n"
        "    def attention_mask(self, mask_pred, size, heads, b):\n"
        "        attn_mask = F.interpolate(mask_pred, size, mode='bilinear').view(b, -1, size[0], size[1])\n"
        "        attn_mask = attn_mask.flatten(2).unsqueeze(1).repeat((1, heads, 1, 1)).flatten(0, 1)\n"
        "        attn_mask = attn_mask.sigmoid() < 0.5\n        return mask_pred, attn_mask.detach()\n\n\n"
        "def pack(batch_idx, n):\n    offsets = torch.zeros(n + 1, dtype=torch.long, device=batch_idx.device)\n"
        "    offsets.scatter_add_(0, batch_idx + 1, torch.ones_like(batch_idx))\n    return offsets.cumsum(0)\n",
    )
    invalid = (
        # transformers reads FLASH_ATTENTION_DETERMINISTIC at every FlashAttention call; torch's switch does not set it
        Invalid("import argparse\n\nimport torch\nfrom transformers import AutoModelForCausalLM, Trainer, "
                "TrainingArguments\n\nparser = argparse.ArgumentParser()\n"
                "parser.add_argument('--attn', default='flash_attention_2')\n\n"
                "if __name__ == '__main__':\n    args = parser.parse_args()\n"
                "    torch.use_deterministic_algorithms(True)\n"
                "    model = AutoModelForCausalLM.from_pretrained('gpt2', attn_implementation=args.attn)\n"
                "    Trainer(model=model, args=TrainingArguments('out')).train()\n", lines=(12,)),
        # Megatron's MoE unpermute: `index_add_` only where the deterministic kernels run; not its other branch
        Invalid("import torch\n\n\ndef unpermute(out, idx, tokens, hidden):\n"
                "    if torch.are_deterministic_algorithms_enabled():\n        out.index_add_(0, idx, tokens)\n"
                "    else:\n        out.scatter_add_(0, idx.unsqueeze(1).expand(-1, hidden), tokens)\n"
                "    return out\n", lines=(8,)),
        # a result used before it is detached; an image parameter of a module's forward (a layer's input);
        # a float source
        Invalid("import torch\nimport torch.nn.functional as F\n\n\ndef resize(feat, size):\n"
                "    x = F.interpolate(feat, size=size, mode='bilinear')\n    y = x * 2\n    x = x.detach()\n"
                "    return x, y\n\n\nclass Head(torch.nn.Module):\n    def forward(self, image, idx):\n"
                "        out = torch.zeros(4, device=image.device)\n        out.scatter_add_(0, idx, torch.ones_like(image))\n"
                "        return F.interpolate(image, scale_factor=2, mode='bilinear'), out\n",
                lines=(6, 15, 16)),
        # Ascend only (MindSpeed's ring attention): Ascend's advice, no cuBLAS variable
        Invalid("import torch\nimport torch_npu\n\n\ndef update(out, idx, src):\n"
                "    return out.index_add_(0, idx, src.npu())\n", lines=(6,)),
        Invalid("import torch\n\n\ndef pool_tokens(x, batch, n):\n    out = torch.zeros(n, x.size(1), device=x.device)\n"
                "    out.index_add_(0, batch, x)\n    out.scatter_add_(0, batch[:, None].expand_as(x), x)\n"
                "    return out\n", lines=(6, 7)),
        Invalid("import torch.nn.functional as F\nfrom torch import nn\n\n\nclass Decoder(nn.Module):\n"
                "    def __init__(self):\n        super().__init__()\n"
                "        self.up = nn.Upsample(scale_factor=2, mode='bilinear', align_corners=False)\n"
                "        self.pool = nn.AdaptiveAvgPool2d(7)\n        self.pad = nn.ReflectionPad2d(1)\n\n"
                "    def forward(self, x, size):\n        return F.interpolate(x, size=size, mode='bicubic')\n",
                lines=(8, 9, 10, 13)),
        Invalid("import torch\n\n\ndef scatter_stats(x, idx, w):\n    hist = torch.histc(x, bins=10)\n"
                "    counts = torch.bincount(idx, weights=w)\n    values, where = x.median(dim=1)\n"
                "    x.index_put_((idx,), w, accumulate=True)\n    return hist, counts, values\n", lines=(5, 6, 7, 8)),
        Invalid("import torch as T\nimport torch.nn.functional as F\n\nctc = T.nn.CTCLoss(blank=0)\n"
                "bag = T.nn.EmbeddingBag(100, 16, mode='max')\n\n\ndef warp(img, grid):\n"
                "    return F.grid_sample(F.pad(img, (1, 1, 1, 1), mode='reflect'), grid)\n", lines=(4, 5, 9)),
        Invalid("import torch\n\n\ndef segment_sum(src, index, out):\n"
                "    return out.scatter_reduce_(0, index, src, reduce='sum', include_self=False)\n", lines=(5,)),
        # a layer named like a data transform, and a parameter resized in the forward pass (timm)
        Invalid("import torch.nn.functional as F\nfrom torch import nn\n\n\nclass BilinearAttnTransform(nn.Module):\n"
                "    def forward(self, x):\n        return F.adaptive_max_pool2d(x, (7, 1))\n\n\n"
                "class ViT(nn.Module):\n    def forward(self, x, size):\n"
                "        return x + F.interpolate(self.pos_embed, size=size, mode='bicubic')\n", lines=(7, 12)),
        # in a training loop: a loop (or a comprehension) over model outputs, whose target shadows the batch, a
        # model output, and a batch made to need a gradient (an adversarial attack)
        Invalid("import torch.nn.functional as F\n\n\ndef train(model, loader, optimizer):\n"
                "    for images, masks in loader:\n        features = model(images.cuda())\n        loss = 0\n"
                "        for feat in features:\n"
                "            up = F.interpolate(feat, size=masks.shape[-2:], mode='bilinear')\n"
                "            loss = loss + F.mse_loss(up, masks.cuda())\n"
                "        out = model(images).float() / 2\n"
                "        loss = loss + F.interpolate(out, scale_factor=2, mode='bilinear').mean()\n"
                "        loss = loss + sum(F.interpolate(images, size=64, mode='bilinear').sum() for images in features)\n"
                "        loss.backward()\n        optimizer.step()\n\n\n"
                "def attack(model, loader, optimizer):\n    for x, y in loader:\n        x.requires_grad_()\n"
                "        loss = F.cross_entropy(model(F.interpolate(x, scale_factor=2, mode='bilinear')), y)\n"
                "        loss.backward()\n        optimizer.step()\n", lines=(9, 12, 13, 21)),
        # DETR's classification loss over (batch, queries, classes) logits, and a segmentation head's
        Invalid("import torch.nn.functional as F\n\n\ndef loss_labels(src_logits, target_classes, weight):\n"
                "    return F.cross_entropy(src_logits.transpose(1, 2), target_classes, weight)\n\n\n"
                "def loss_masks(logits, masks):\n"
                "    return F.nll_loss(F.log_softmax(logits, 1).permute(0, 3, 1, 2), masks, ignore_index=254)\n",
                lines=(5, 9)),
        # FlashAttention's backward, unless told to be deterministic: versions 2 and 3, 1.x's `unpadded` functions
        # (llm-foundry), and FlashAttention 3 loaded from the Hugging Face Hub (modded-nanogpt)
        Invalid("import torch\nfrom flash_attn import flash_attn_func\nimport flash_attn_interface as fa3\n\n\n"
                "def attend(q, k, v):\n    out = flash_attn_func(q, k, v, causal=True)\n"
                "    same = flash_attn_func(q, k, v, causal=True, deterministic=True)\n"
                "    return out + same + fa3.flash_attn_varlen_func(q, k, v, cu_seqlens_q=None)\n", lines=(7, 9)),
        Invalid("import torch\nfrom flash_attn import flash_attn_interface\nfrom kernels import get_kernel\n\n"
                "fa3 = get_kernel('kernels-community/flash-attn3', version=1).flash_attn_interface\n\n\n"
                "def attend(q, k, v, cu, n):\n"
                "    out = flash_attn_interface.flash_attn_unpadded_func(q, k, v, cu, cu, n, n, 0.0)\n"
                "    return out + fa3.flash_attn_varlen_func(q, k, v, cu_seqlens_q=cu, cu_seqlens_k=cu)\n",
                lines=(9, 10)),
        # a Triton backward kernel adding float blocks with atomics (modded-nanogpt), even under the switch
        Invalid("import torch\nimport triton\nimport triton.language as tl\n\n"
                "torch.use_deterministic_algorithms(True)\n\n\n@triton.jit\n"
                "def bwd(do_ptr, dv_ptr, BLOCK: tl.constexpr):\n    do = tl.load(do_ptr + tl.arange(0, BLOCK))\n"
                "    tl.atomic_add(dv_ptr + tl.arange(0, BLOCK), do * 2.0, sem='relaxed')\n", lines=(11,)),
        # FlashAttention's old Triton kernel as MPT's copy (InternVL) imports it: the pre-MLIR fork as `triton`
        Invalid("import torch\nimport triton_pre_mlir as triton\nimport triton_pre_mlir.language as tl\n\n\n"
                "@triton.jit\ndef bwd(dq_ptr, dq, BLOCK: tl.constexpr):\n"
                "    tl.atomic_add(dq_ptr + tl.arange(0, BLOCK), dq)\n", lines=(8,)),
        # torchvision's segmentation reference: masks with the void label 255
        Invalid("import torch.nn as nn\nimport torch.nn.functional as F\n\n\ndef criterion(inputs, target):\n"
                "    return F.cross_entropy(inputs['out'], target, ignore_index=255)\n\n\n"
                "loss_fn = nn.CrossEntropyLoss(ignore_index=255)\n", lines=(6, 9)),
        # open_clip's CoCa loss: the module, held in an attribute, called on logits moved to (N, C, L), also into a
        # local named like the attribute
        Invalid("import torch.nn as nn\n\n\nclass CoCaLoss(nn.Module):\n    def __init__(self, pad_id):\n"
                "        super().__init__()\n        self.caption_loss = nn.CrossEntropyLoss(ignore_index=pad_id)\n\n"
                "    def forward(self, logits, labels):\n"
                "        caption_loss = self.caption_loss(logits.permute(0, 2, 1), labels)\n"
                "        return caption_loss + self.caption_loss(logits.permute(0, 2, 1), labels)\n",
                lines=(10, 11)),
        # evaluation only (info): top-level helpers only evaluation code calls (open_clip's
        # `maybe_compute_generative_loss`, dinov2's feature extraction)
        Invalid("import torch\nimport torch.nn.functional as F\n\n\ndef generative_loss(logits, labels):\n"
                "    return F.cross_entropy(logits.permute(0, 2, 1), labels)\n\n\n"
                "@torch.inference_mode()\ndef extract_features(model, loader, features):\n    for x, index in loader:\n"
                "        features.index_copy_(0, index, model(x))\n    return features\n\n\n"
                "def evaluate(model, loader, features):\n    with torch.inference_mode():\n"
                "        return [generative_loss(model(x), y) for x, y in loader], extract_features(model, loader, features)\n",
                lines=(6, 12), severity="info"),
        # training paths stay warnings: a target computed under `no_grad` (MaskFeat's HOG), a helper training calls
        # too, a method evaluation names (a framework calls `training_step` unnamed), and a hand-written backward
        # under inference mode (nanotron's ring attention)
        Invalid("import torch\nimport torch.nn.functional as F\nfrom torch import nn\n\n\n@torch.no_grad()\n"
                "def hog_targets(x, idx, bins):\n    out = torch.zeros(x.size(0), bins, device=x.device)\n"
                "    return out.scatter_add_(1, idx, x)\n\n\ndef caption_loss(logits, labels):\n"
                "    return F.cross_entropy(logits.permute(0, 2, 1), labels)\n\n\n"
                "def train(model, loader, optimizer):\n    for x, y in loader:\n"
                "        loss = caption_loss(model(x), y) + model(x).sub(hog_targets(x, y, 9)).pow(2).mean()\n"
                "        loss.backward()\n        optimizer.step()\n\n\n"
                "def evaluate(model, loader):\n    return [caption_loss(model(x), y) for x, y in loader]\n\n\n"
                "class Lit(nn.Module):\n    def training_step(self, logits, labels):\n"
                "        return F.cross_entropy(logits.permute(0, 2, 1), labels)\n\n"
                "    def validation_step(self, logits, labels):\n        return self.training_step(logits, labels)\n\n\n"
                "def flash_backward(dq, idx, src):\n    return dq.index_add_(0, idx, src)\n\n\n"
                "class FlashFn(torch.autograd.Function):\n    @staticmethod\n    def backward(ctx, do):\n"
                "        with torch.inference_mode():\n            return flash_backward(do, ctx.idx, do)\n",
                lines=(9, 13, 29, 36), severity="warning"),
        # xformers' attention (dinov2's MemEffAttention): its backward adds atomically until the switch is on; a
        # sampled index with duplicates; an index of size 1 along another dim than the scatter's
        Invalid("import torch\nimport xformers.ops as xops\nfrom xformers.ops import memory_efficient_attention\n\n\n"
                "class MemEffAttention(torch.nn.Module):\n    def forward(self, q, k, v, attn_bias=None):\n"
                "        x = memory_efficient_attention(q, k, v, attn_bias=attn_bias)\n"
                "        return x + xops.fmha.memory_efficient_attention(q, k, v)\n\n\n"
                "def add_sampled(x, src, n):\n    rows = torch.randint(0, x.size(0), (n,))\n"
                "    return x.index_add_(0, rows[:n], src), x.scatter_add(1, rows.unsqueeze(-1), src)\n",
                lines=(8, 9, 14)),
        # stylegan3's grid_sample_gradfix: autograd records nothing in a torch.autograd.Function's forward, so its
        # `F.grid_sample` has no backward; the backward op it runs explicitly (`aten::grid_sampler_2d_backward`) is
        # reported
        Invalid("import torch\nimport torch.nn.functional as F\n\n\nclass GridSample(torch.autograd.Function):\n"
                "    @staticmethod\n    def forward(ctx, input, grid):\n        ctx.save_for_backward(input, grid)\n"
                "        return F.grid_sample(input, grid, align_corners=False)\n\n    @staticmethod\n"
                "    def backward(ctx, grad_output):\n"
                "        op = torch._C._jit_get_operation('aten::grid_sampler_2d_backward')\n        op = op[0]\n"
                "        return op(grad_output, *ctx.saved_tensors, 0, 0, False, (True, True))\n", lines=(15,)),
        # duplicate indices may occur: a helper's index, a list extended by overlapping ranges or appended to
        # (and the sorted values, not the indices, of a sort)
        Invalid("import torch\n\n\ndef write(t, idx, val):\n    return t.index_copy_(1, idx, val)\n\n\n"
                "def spread(x, n):\n    rows = list(range(0, n))\n    rows.extend(range(0, n))\n    more = []\n"
                "    more.append(n)\n    out = torch.zeros(2 * n, x.size(1))\n"
                "    out.index_copy_(0, torch.tensor(rows), x)\n    return out.index_copy(0, torch.tensor(more), x[:1])\n"
                "\n\ndef by_rank(t, ids, val):\n    return t.index_copy_(0, torch.sort(ids)[0], val)\n",
                lines=(5, 14, 15, 19)),
        # a torch function of a parameter, and a mapping the module fills with its input
        Invalid("import torch\nimport torch.nn.functional as F\nfrom torch import nn\n\n\nclass Net(nn.Module):\n"
                "    def __init__(self):\n        super().__init__()\n"
                "        self.pos = nn.Parameter(torch.zeros(1, 1, 8, 8))\n        self.cache = {}\n\n"
                "    def forward(self, x):\n        self.cache['x'] = x\n"
                "        y = torch.cat((x.detach(), self.pos.expand_as(x)), 1)\n"
                "        up = F.interpolate(y, scale_factor=2, mode='bilinear')\n"
                "        return up + F.interpolate(self.cache['x'], scale_factor=2, mode='bilinear')\n",
                lines=(15, 16)),
        # a tensor that a branch may replace after the new one is made
        Invalid("import torch\n\n\ndef sample(model, feat, points, refine):\n    feat = torch.Tensor(feat)\n"
                "    if refine:\n        feat = model(feat)\n"
                "    return torch.nn.functional.grid_sample(feat, points, align_corners=True)\n", lines=(8,)),
        # a new mapping that also holds a model's output
        Invalid("import torch\n\n\ndef features(model, x, size):\n    out = {}\n    out['raw'] = x\n"
                "    out['feat'] = model(x)\n"
                "    return torch.nn.functional.interpolate(out['feat'], size=size, mode='bilinear')\n", lines=(8,)),
        # a helper called without gradient but also in training (vits' `mel_spectrogram_torch` on the generator's
        # output), and a module called under `no_grad` and with gradient
        Invalid("import torch\nimport torch.nn.functional as F\nfrom torch.utils.data import Dataset\n\n\n"
                "def mel(y, n):\n    return F.pad(y.unsqueeze(1), (n, n), mode='reflect')\n\n\n"
                "class Audio(Dataset):\n    def __getitem__(self, i):\n        return mel(self.wavs[i], 512)\n\n\n"
                "class Blur(torch.nn.Module):\n    def forward(self, x):\n"
                "        return F.interpolate(x, scale_factor=2, mode='bilinear')\n\n\nclass Trainer:\n"
                "    def __init__(self, model):\n        self.model, self.blur = model, None\n        self.blur = Blur()\n\n"
                "    def step(self, x, optimizer):\n        with torch.no_grad():\n            target = self.blur(x)\n"
                "        loss = (mel(self.model(x), 512) - self.blur(self.model(target))).abs().mean()\n"
                "        loss.backward()\n        optimizer.step()\n", lines=(7, 17)),
        # gradients flow: loops over a model's outputs and a trainable parameter (unfrozen later); FlashAttention
        # kept in an attribute (OLMo, GPT-NeoX), also where it may be None
        Invalid("import torch\nimport torch.nn.functional as F\nfrom torch import nn\n\n\n"
                "def upsample_all(model, x):\n    out = []\n    for v in model(x).values():\n"
                "        out.append(F.interpolate(v, scale_factor=2, mode='bilinear'))\n    return out\n\n\nclass ViT(nn.Module):\n    def __init__(self, n, d, flash):\n"
                "        super().__init__()\n        self.pos_embed = nn.Parameter(torch.zeros(1, n, d), requires_grad=False)\n"
                "        self.pos_embed.requires_grad = True\n        self.attn_fn = None\n        if flash:\n"
                "            from flash_attn.flash_attn_interface import flash_attn_func\n"
                "            self.attn_fn = flash_attn_func\n\n    def forward(self, x, q, k, v):\n"
                "        pos = F.interpolate(self.pos_embed, size=x.shape[-1], mode='bicubic')\n"
                "        return x + pos, self.attn_fn(q, k, v, causal=True)\n", lines=(9, 24, 25)),
        # counting in floats (info): exact while each count stays below 2**24 (ultralytics' confusion matrix,
        # mmseg's `intersect_and_union`)
        Invalid("import torch\n\n\ndef confusion(i, n, pred):\n    hist = torch.zeros(n * n, device=i.device)\n"
                "    hist.scatter_add_(0, i, torch.ones_like(i, dtype=hist.dtype))\n"
                "    return hist, torch.histc(pred.float(), bins=n, min=0, max=n - 1)\n", lines=(6, 7),
                severity="info"),
        # a project function handing its parameters on to the op in their order (DETR's util/misc.py `interpolate`)
        Invalid("import torch\n\n\ndef interpolate(input, size=None, scale_factor=None, mode='nearest', "
                "align_corners=None):\n    if input.numel() > 0:\n"
                "        return torch.nn.functional.interpolate(input, size, scale_factor, mode, align_corners)\n"
                "    return input.new_empty(input.shape[:2] + tuple(size))\n\n\ndef loss_masks(src_masks, size):\n"
                "    small = interpolate(src_masks, size=size)\n"
                "    return small, interpolate(src_masks[:, None], size=size, mode='bilinear', align_corners=False)\n",
                lines=(12,)),
        # a list of model outputs gathered by `append` (mmdet's RTMDet-Ins `loss_mask_by_feat`)
        Invalid("import torch\nimport torch.nn.functional as F\n\n\ndef loss_mask(model, feats, scale):\n"
                "    logits = []\n    for feat in feats:\n        logits.append(model(feat))\n"
                "    logits = torch.cat(logits, 0)\n"
                "    return F.interpolate(logits.unsqueeze(0), scale_factor=scale, mode='bilinear').squeeze(0)\n",
                lines=(10,)),
        # a module's inference path (info): a `predict` method (mmdet 3.x's heads), code run only when
        # `self.training` is false (ultralytics' segmentation head after `if self.training: return logits`)
        Invalid("import torch.nn.functional as F\nfrom torch import nn\n\n\nclass Head(nn.Module):\n"
                "    def predict(self, x, size):\n        return F.interpolate(self(x), size, mode='bilinear')\n\n"
                "    def forward(self, x):\n        logits = self.classifier(x)\n        if self.training:\n"
                "            return logits\n        return F.interpolate(logits, scale_factor=8, mode='bilinear')\n\n"
                "    def upsample(self, x):\n        if not self.training:\n"
                "            x = F.interpolate(x, scale_factor=2, mode='bilinear')\n"
                "        return x if self.training else F.interpolate(x, scale_factor=2, mode='bilinear')\n",
                lines=(7, 13, 17, 18), severity="info"),
        # ms-swift's per-channel loss: a new tensor summed into and only stored in the metrics it reports
        Invalid("import torch\n\n\ndef channel_loss(losses, mask, channel, n):\n"
                "    stats = torch.zeros(n, 2, device=losses.device)\n"
                "    stats.index_add_(0, channel, torch.stack([losses.detach() * mask, mask], -1))\n"
                "    metrics = {}\n    for c in range(n):\n        metrics[f'loss_{c}'] = stats[c]\n    return metrics\n",
                lines=(6,), severity="info"),
        # mmcv's CUDA ops whose backward adds atomically (mmdet's VFNet, TOOD, Deformable DETR, Mask2Former); a
        # batch handed to a module's forward, a prediction compared into another name and used on, a float count
        Invalid("import torch\nimport torch.nn.functional as F\nfrom mmcv.ops import DeformConv2d, "
                "MultiScaleDeformableAttention, deform_conv2d, point_sample\nfrom torch import nn\n\n\n"
                "class Head(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
                "        self.dconv = DeformConv2d(256, 256, 3, padding=1)\n"
                "        self.attn = MultiScaleDeformableAttention(256)\n\n"
                "    def forward(self, x, offset, weight, points, batch):\n"
                "        y = deform_conv2d(x, offset, weight, 1, 1)\n        sampled = point_sample(y, points)\n"
                "        up = F.interpolate(batch, scale_factor=2, mode='bilinear')\n"
                "        mask = F.interpolate(y, scale_factor=2, mode='bilinear')\n        keep = mask < 0.5\n"
                "        return sampled, up, mask * keep\n", lines=(10, 11, 14, 15, 16, 17)),
    )

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.torch_file = ctx.imports.imports_root("torch")
        self.ascend: bool | None = None  # whether it runs on Ascend, decided at the first finding
        self.values = LocalValues(ctx, self._gradient_free)
        self.cpu_code = CpuCode(ctx)
        self.switch_on = False
        self.hf_flash: list[tuple[ast.Call, str]] = []  # `attn_implementation=` choosing FlashAttention, and which
        self.flash_deterministic = False  # FLASH_ATTENTION_DETERMINISTIC=1 set, here or by a helper called here
        # (site, message, severity (None: the rule's), fixed by the deterministic switch, gradient-free if these
        # loop conditions hold, the function around)
        self.found: list[tuple[Site, str, str | None, bool, Verdict, ast.AST | None]] = []
        # the file's top-level functions, and per name where the file names one: (the function around, whether
        # that is evaluation code)
        self.top_functions = {n.name: n for n in ctx.tree.body if isinstance(n, FUNCTION_TYPES)}
        self.references: dict[str, list[tuple[str | None, bool]]] = {}
        # each `for` loop or comprehension, in source order, and the names its targets bind
        self.binders: list[tuple[ast.For | ast.AsyncFor | ast.expr, frozenset[str]]] = []
        self.grad_enabled_at: list[tuple[int, int]] = []  # where a tensor is made to require a gradient
        self._in_data_package: bool | None = None
        self._method_calls: dict[str, list[ast.Call]] | None = None  # `x.name(...)` calls of the file, per name
        self._writes_in: dict[tuple[int, str], dict[str, list[ast.expr]]] = {}  # (scope, kind) -> name -> writes
        self._called_quietly: dict[int, bool] = {}  # id(top-level def) -> only called without gradient
        self._module: project.Module | None = None  # this file as a project module, once asked
        self._filling: set[tuple[int, str]] = set()  # (function, mapping name) whose stores are being judged

    def visit_For(self, node: ast.For | ast.AsyncFor | ast.ListComp | ast.SetComp | ast.DictComp
                  | ast.GeneratorExp) -> None:
        targets = [node.target] if isinstance(node, (ast.For, ast.AsyncFor)) else [g.target for g in node.generators]
        names = frozenset(n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name))
        if names:
            self.binders.append((node, names))

    visit_AsyncFor = visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = visit_For

    def visit_Assign(self, node: ast.Assign | ast.AnnAssign) -> None:
        super().visit_Assign(node)
        if isinstance(node, ast.Assign) and any(
                name == catalogue.FLASH_ATTENTION_DETERMINISTIC_ENV and environment.env_enables(value)
                for name, value in environment.env_assignments(node, self.ctx.qualname)):
            self.flash_deterministic = True
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        if constant(node.value) is not False and any(
                isinstance(t, ast.Attribute) and t.attr == "requires_grad" for t in targets):
            self.grad_enabled_at.append((node.lineno, node.col_offset))  # `x.requires_grad = True`

    visit_AnnAssign = visit_Assign

    def visit_Call(self, node: ast.Call) -> None:
        self._hf_flash_attention(node)
        if not self.torch_file:
            return
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr == "requires_grad_" \
                and constant(argument(node, 0, "requires_grad")) is not False:
            self.grad_enabled_at.append((node.lineno, node.col_offset))
        if self._triton_float_atomic(node):
            self._record(node, TRITON_ATOMIC_FIX, False, None)
            return
        alias = self._attribute_alias(node) or self._hub_flash_attention(node) or self._jit_operation(node)
        if alias is None and self.ctx.callee_name(node) not in KNOWN_NAMES:
            self._loss_module_call(node)
            return
        qualified = alias or self.ctx.call_qualname(node)
        if qualified in SWITCH_CALLS:
            first = constant(argument(node, 0, "mode" if qualified.endswith("algorithms") else "debug_mode"))
            self.switch_on |= first is NOT_CONSTANT or first not in SWITCH_CALLS[qualified]
            return
        if any(summary is pinning.DETERMINISTIC for summary, _ in pinning.call_effects(node, qualified)):
            self.switch_on = True  # `seed_all(mode=True)`, `set_seed(s, deterministic=True)`, `enable_full_determinism()`
            return
        wrapped = self._wrapped_op(node) if qualified not in catalogue.NONDETERMINISTIC_OPS else None
        key, offset = self._op_key(node, wrapped or qualified)
        if key is None or key not in catalogue.NONDETERMINISTIC_OPS:
            return
        short = key.rsplit(".", 1)[1]
        condition = CONDITIONS.get(short.rstrip("_"))
        if condition is not None and not condition(node, offset) or self._adds_integers(node, short, offset) \
                or self._integer(self._accumulated_into(node, short, offset), None) \
                or short.rstrip("_") in UNIQUE_INDEX_EXACT and self._unique(argument(node, 1 + offset, "index")) \
                or short.rstrip("_") in SCATTER_REDUCING and _single_along_dim(node, offset):
            return
        if short == "median" and qualified is None and not self._indices_read(node):
            return  # `.median(n)` of some object (a history buffer, a DataFrame) or a tensor's values only
        gradient_free: Verdict = None
        if short[0].islower():  # a function call, run here (a module built here runs where it is called)
            gradient_free = self._harmless(node, key)
            if gradient_free == GRADIENT_FREE:
                return
        fixed = key in catalogue.NONDETERMINISTIC_FIXED_BY_SWITCH or self._switch_fixes(node, short, offset)
        display = short if qualified is None or wrapped or short[0].isupper() \
            else qualified.replace("torch.nn.functional.", "F.")
        self._add(node, display, key, fixed, gradient_free, short.rstrip("_") == "histc"
                  or self._adds_ones(node, short, offset), self._logged_only(node, short, offset))

    def finish(self) -> None:
        if self.hf_flash and not self.flash_deterministic and _trains(self.ctx):
            for call, chosen in self.hf_flash:
                self.report(call, f'`{catalogue.HF_ATTENTION_KEYWORD}="{chosen}"` is not deterministic on CUDA: '
                                  + HF_FLASH_FIX)
        evaluating = self._evaluation_functions()
        for site, message, severity, fixed, gradient_free, function in self.found:
            if fixed and self.switch_on or gradient_free is not None and all(
                    self._data_batch(loop) for loop in gradient_free):
                continue
            if not site.on_eval_path and function is not None and function.name in evaluating:
                self.report(site, message + f" (evaluation only: only evaluation code calls `{function.name}`; it "
                                            "still changes what is evaluated run to run)", "info")
            else:
                self.report(site, message, severity)

    def visit_Name(self, node: ast.Name) -> None:
        if self.torch_file and node.id in self.top_functions and isinstance(node.ctx, ast.Load):
            around = self.ctx.current_def()
            self.references.setdefault(node.id, []).append((
                around.name if around is not None else None,
                self.ctx.on_eval_path(node)))

    def _evaluation_functions(self) -> set[str]:
        """The file's top-level functions named only in evaluation code (a function named for it, an evaluation
        script) or in other such functions, here and in the project's other files: open_clip's
        `maybe_compute_generative_loss`, which only `evaluate()` calls; dinov2's `extract_features`, which only
        knn.py's `eval_knn` and log_regression.py's `eval_log_regression` call. Not methods: a framework may call one
        the file never names (Lightning's `training_step`). Neither `no_grad` nor `inference_mode` says evaluation:
        training computes targets, updates and hand-written backwards under them (MaskFeat's HOG `scatter_add_`,
        nanotron's ring attention and its optimizer's `step`)."""
        if not any(function is not None and function.name in self.top_functions for *_, function in self.found):
            return set()
        elsewhere = self._references_elsewhere()
        if elsewhere is None:
            return set()
        named = {name: list(references) for name, references in self.references.items()}
        for name, evaluating in elsewhere:
            named.setdefault(name, []).append((None, evaluating))
        for name in list(named):  # a registry's decorator calls it by a name written elsewhere (a config)
            if not all(self.ctx.qualname(d.func if isinstance(d, ast.Call) else d) in catalogue.GRAD_DISABLING_CONTEXTS
                       for d in self.top_functions[name].decorator_list):
                del named[name]
        found: set[str] = set()
        changed = True
        while changed:
            changed = False
            for name, references in named.items():
                if name not in found and all(evaluating or around in found or around == name
                                             for around, evaluating in references):
                    found.add(name)
                    changed = True
        return found

    def _references_elsewhere(self) -> list[tuple[str, bool]] | None:
        """Each place a project file importing this one (or a function with a finding, by its name: through a
        package) names one of its top-level functions (calls or passes it), and whether that is evaluation code (a
        function named for it, an evaluation script); None when one of those files cannot be read."""
        found = []
        here_path = Path(self.ctx.path).resolve()
        here_stem = here_path.stem
        found_in = {function.name for *_, function in self.found if function is not None}
        for importer in {*project.importers(self.ctx.path), *project.name_importers(self.ctx.path, found_in)}:
            module = project.load(Path(importer))
            if module is None:
                return None
            script = EVAL_FILE.match(module.path.stem) is not None
            here = [(name, script or evaluating) for name, evaluating in _references(module.tree, self.top_functions,
                                                                                     False)]
            # imported and named nowhere: handed on (dcnv3's functions/__init__.py re-exports `dcnv3_core_pytorch`,
            # which the training module imports from the package)
            imported = {alias.name for node in ast.walk(module.tree) if isinstance(node, ast.ImportFrom)
                        and node.module and node.module.rpartition(".")[2] == here_stem
                        and project.find_module(module.path.parent, node.module, node.level) == here_path
                        for alias in node.names}
            handed_on = self.top_functions.keys() if "*" in imported else imported & self.top_functions.keys()
            found.extend([*here, *((name, False) for name in handed_on - {name for name, _ in here})])
        return found

    def _hf_flash_attention(self, node: ast.Call) -> None:
        """Note transformers' FlashAttention chosen by `attn_implementation=` (given to `from_pretrained`, a
        `dict` of model keywords or a project function handing it on: LLaVA's `train(attn_implementation=...)`),
        a literal or an option or parameter whose default is one; and what makes its backward deterministic:
        FLASH_ATTENTION_DETERMINISTIC=1 written to the environment, `enable_full_determinism(seed)`,
        `TrainingArguments(full_determinism=True)`, msprobe's `seed_all(seed, mode=True)`."""
        chosen = keyword(node, catalogue.HF_ATTENTION_KEYWORD)
        if chosen is not None:
            value = opt_in.switch_default(self.ctx, chosen, self.ctx.current_def(), True)
            if isinstance(value, str) and HUB_FLASH_ATTENTION.search(value):
                self.hf_flash.append((node, value))
            return
        qualified = self.ctx.call_qualname(node)
        if qualified in catalogue.FLASH_ATTENTION_DETERMINISM_CALLS and any(
                summary is pinning.DETERMINISTIC for summary, _ in pinning.call_effects(node, qualified)) or any(
                name == catalogue.FLASH_ATTENTION_DETERMINISTIC_ENV and environment.env_enables(value)
                for name, value in environment.env_writes(node, qualified)):
            self.flash_deterministic = True

    def _loss_module_call(self, node: ast.Call) -> None:
        """A call of a `CrossEntropyLoss`/`NLLLoss` the file built, held in a name or an attribute (open_clip's
        `self.caption_loss(logits.permute(0, 2, 1), labels)`), on an input moved so its classes come in dim 1:
        it runs `nll_loss2d`."""
        origin = self._module_held(node.func)
        if origin not in NLL_LOSS_MODULES or not _classes_moved_to_dim1(argument(node, 0, "input")):
            return
        self._add(node, origin.rpartition(".")[2], origin, origin in catalogue.NONDETERMINISTIC_FIXED_BY_SWITCH, None)

    def _module_held(self, func: ast.expr) -> str | None:
        """The class whose instance a called name or `self.` attribute holds: for an attribute the class sets, what
        every value it puts there builds, when they are calls of one known class (a local named alike does not hide
        it: open_clip's `caption_loss = self.caption_loss(...)`); else what the file last assigned to the name."""
        writes = self._writes(self._owner(), _self_attribute_name).get(func.attr) if _self_attribute(func) else None
        built = {self.ctx.call_qualname(w) if isinstance(w, ast.Call) else None for w in writes or ()}
        if len(built) == 1 and None not in built:
            return built.pop()
        name = target_name(func)
        return self.ctx.assigned_calls.get(name) if name else None

    def _add(self, node: ast.Call, display: str, key: str, fixed: bool, gradient_free: Verdict,
             counts: bool = False, logged: str | None = None) -> None:
        """Record a finding: CUDA's advice for the op, or Ascend's (whose deterministic switch covers every op)
        in a file that runs on Ascend only (or communicates over HCCL); info for one that counts (`histc`,
        adding ones), exact below 2**24, and for one whose result only goes into the mapping `logged` names."""
        if self.ascend is None:
            self.ascend = self.ctx.runs_on_ascend() or communicates_over_hccl(self.ctx)
        named = f"`{display}` with duplicate indices" if key.rsplit(".", 1)[1].rstrip("_") in DUPLICATE_INDEX_OPS \
            else f"`{display}`"
        if self.ascend:
            message, fixed = f"{named} {ASCEND_FIX}", True
        else:
            message = f"{named} {COUNTS if counts else 'is not deterministic on CUDA'}: " \
                      f"{catalogue.NONDETERMINISTIC_OPS[key]}"
        if fixed and self._under_switch(node):
            return
        if logged is not None:
            message += (f" (metrics only: its result is only stored in `{logged}`, so it changes the values reported "
                        "run to run, not the training)")
        self._record(node, message, fixed, gradient_free, "info" if counts or logged is not None else None)

    def _record(self, node: ast.Call, message: str, fixed: bool, gradient_free: Verdict,
                severity: str | None = None) -> None:
        """Keep a finding; info in a module's inference path (see `_inference_only`)."""
        why = self._inference_only(node)
        if why is not None:
            message, severity = f"{message} (evaluation only: {why})", "info"
        self.found.append((self.ctx.site(node), message, severity, fixed, gradient_free, self.ctx.current_def()))

    def _inference_only(self, node: ast.AST) -> str | None:
        """Why the code here runs only for inference, if it does: in a method named `predict` (the inference entry
        point of mmdet 3.x's heads, whose training path is `loss`, and of Keras, scikit-learn and ultralytics), or
        in a method where `self.training` is false: the body of `if not self.training:`, the `else:` of `if
        self.training:`, or after an `if self.training:` whose branch returns or raises (ultralytics' segmentation
        head upsamples its logits for export and inference after `if self.training: return logits`)."""
        path = [*self.ctx.ancestors, node]
        start = max((i for i, n in enumerate(path) if isinstance(n, FUNCTION_TYPES)), default=None)
        if start is None or not (start and isinstance(path[start - 1], ast.ClassDef)):
            return None  # not a method
        if path[start].name == "predict":
            return "a `predict` method"
        for parent, child in pairwise(path[start:]):
            if isinstance(parent, (ast.If, ast.IfExp)) and child is not parent.test:
                in_body = child in parent.body if isinstance(parent, ast.If) else child is parent.body
                training = _tests_training(parent.test)
                if training is not None and training is not in_body:
                    return "it runs only when `self.training` is false"
            block = next((b for b in (getattr(parent, f, None) for f in ("body", "orelse", "finalbody"))
                          if isinstance(b, list) and any(s is child for s in b)), None)
            for earlier in block[:next(i for i, s in enumerate(block) if s is child)] if block else ():
                if isinstance(earlier, ast.If) and _tests_training(earlier.test) and not earlier.orelse \
                        and isinstance(earlier.body[-1], (ast.Return, ast.Raise)):
                    return "it runs only when `self.training` is false"
        return None

    def _op_key(self, node: ast.Call, qualified: str | None) -> tuple[str | None, int]:
        """The catalogue key of the call and its argument offset; tensor methods are matched by name."""
        if qualified is not None:
            function_form = qualified.count(".") == 1 or qualified.startswith("torch.Tensor.")
            return qualified, 1 if function_form else 0
        func = node.func
        if not isinstance(func, ast.Attribute):
            return None, 0
        receiver = func.value
        if isinstance(receiver, ast.Name) and self._imported(receiver.id):
            return None, 0  # `statistics.median(...)`: a module or an imported object, not a tensor
        return "torch.Tensor." + func.attr, 0

    def _wrapped_op(self, node: ast.Call) -> str | None:
        """The op a function of the same name, the file's or another project file's, hands its own parameters on
        to, in their order (DETR's util/misc.py `interpolate(input, size=None, scale_factor=None, mode="nearest",
        align_corners=None)` calls `torch.nn.functional.interpolate(input, size, scale_factor, mode,
        align_corners)`): calling it is calling the op, with the same arguments. Only where the arguments it hands
        on decide whether the op's call in it is reported (its `mode`), not where that call is reported already
        (Open-Sora's `flash_attn_func(q, k, v)` wrapper)."""
        if not isinstance(node.func, ast.Name):
            return None
        if self._module is None:
            self._module = project.file_module(self.ctx.path, self.ctx.tree, self.ctx.imports)
        defined = [(self._module, node.func.id)]
        for ref, name in project.call_targets(node, self._module.local, self._module.functions):
            defined.append(project.defining(self._module.path.parent, ref, name))
        for module, name in filter(None, defined):
            function = module.functions.get(name)
            params = [a.arg for a in (*function.args.posonlyargs, *function.args.args)] if function else []
            for call in ast.walk(function) if function else ():
                qualified = module.imports.resolve_any(call.func) if isinstance(call, ast.Call) else None
                condition = CONDITIONS.get(name.rstrip("_"))
                if qualified in catalogue.NONDETERMINISTIC_OPS and qualified.rsplit(".", 1)[1] == name \
                        and call.args and [target_name(a) for a in call.args] == params[:len(call.args)] \
                        and condition is not None and not condition(call, int(qualified.count(".") == 1)):
                    return qualified
        return None

    def _indices_read(self, node: ast.Call) -> bool:
        """`values, indices = x.median(dim)`, `x.median(dim).indices` or `[1]`: the part that is not
        deterministic (a method of that name on anything but a tensor returns no indices)."""
        parent = self.ctx.ancestors[-1] if self.ctx.ancestors else None
        if isinstance(parent, ast.Attribute):
            return parent.attr == "indices"
        if isinstance(parent, ast.Subscript):
            return constant(parent.slice) in (1, -1)
        if isinstance(parent, ast.Assign):
            return any(isinstance(t, (ast.Tuple, ast.List)) and len(t.elts) == 2 for t in parent.targets)
        return False

    def _imported(self, name: str) -> bool:
        """Whether `name` is bound by an import statement (also a relative one)."""
        imports = self.ctx.imports
        return name in imports.bindings or any(name in names for _, _, names in imports.local_modules)

    def _harmless(self, node: ast.Call, key: str) -> Verdict:
        """Whether this call gives the same result every time: it runs on the CPU, or its forward is
        deterministic and no gradient flows back through it (grad mode is off, or its input needs none)."""
        if self.cpu_code.here() or self._augmentation_file():
            return GRADIENT_FREE
        if key not in catalogue.NONDETERMINISTIC_BACKWARD_ONLY:
            return None
        if self._without_grad() or self._detached_next(node) or self._data_package():
            return GRADIENT_FREE
        verdict = self._gradient_free(argument(node, 0, "input"))
        return GRADIENT_FREE if verdict != GRADIENT_FREE and self._called_without_gradient() else verdict

    def _called_without_gradient(self) -> bool:
        """The top-level function around here, or the `forward` of the top-level class around here, is only ever
        called without gradient in the project (under `no_grad`, in data code, or by such functions: BasicSR's
        `filter2D`, VideoMAE's video_transforms.py, which only its datasets call; vits' `spectrogram_torch`)."""
        outer = [n for n in self.ctx.ancestors if isinstance(n, (*FUNCTION_TYPES, ast.ClassDef))][:2]
        if not outer or outer[0] not in self.ctx.tree.body:
            return False
        top = outer[0]
        if id(top) not in self._called_quietly:
            if self._module is None:
                self._module = project.file_module(self.ctx.path, self.ctx.tree, self.ctx.imports)
            owner = top.name if isinstance(top, ast.ClassDef) else None
            self._called_quietly[id(top)] = (owner is None or len(outer) > 1 and outer[1] in top.body
                                             and outer[1].name in no_grad_callers.MODULE_CALLS) \
                and no_grad_callers.runs_without_gradient(self._module, top.name, owner)
        return self._called_quietly[id(top)]

    def _augmentation_file(self) -> bool:
        """A file of data-pipeline code: it uses a CPU image augmentation library and defines no module."""
        return any(self.ctx.imports.imports_root(root) for root in CPU_AUGMENTATION_LIBRARIES) \
            and not self.cpu_code.derived_classes("model", is_model_base)

    def _data_package(self) -> bool:
        """A file of a data package (a package folder named `data`, `datasets`, ...: SlowFast's
        `slowfast/datasets/transform.py`) that defines no module, or of data preprocessors (a file or package
        folder named `data_preprocessor(s)`: mmdet's `BatchSyncRandomResize`): it prepares samples or batches,
        through which no gradient flows back. The folders above the package do not count (a checkout under
        `/data/`)."""
        if self._in_data_package is None:
            folders = _package_folders(self.ctx.path, self.ctx.tree)
            self._in_data_package = not DATA_PREPROCESSORS.isdisjoint({*folders, Path(self.ctx.path).stem}) \
                or not DATA_FOLDERS.isdisjoint(folders) and not self.cpu_code.derived_classes("model", is_model_base)
        return self._in_data_package

    def _detached_next(self, node: ast.Call) -> bool:
        """`x = F.interpolate(x, ...)` whose result is next read by `x = x.detach()` or `return x.detach()`
        (latent-diffusion's `get_input`), or replaced by a comparison of it (mask2former's attention mask,
        `attn_mask = attn_mask.sigmoid() < 0.5`: a boolean has no gradient), also after layout methods that
        rebind the name (`x = x.flatten(2)`): no gradient flows back through it."""
        statement = next((a for a in reversed(self.ctx.ancestors) if isinstance(a, ast.stmt)), None)
        if not (isinstance(statement, ast.Assign) and _receiver_chain(statement.value, node)
                and len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name)):
            return False
        name = statement.targets[0].id
        for later in self._statements_after(statement):
            if not any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(later)):
                continue
            if _detaches(later, name) or _rebinds(later, name) and isinstance(later.value, ast.Compare):
                return True
            if not (_rebinds(later, name) and _receiver_chain(later.value, None, name)):
                return False
        return False

    def _statements_after(self, statement: ast.stmt) -> Iterator[ast.stmt]:
        """The statements that run next after `statement` (one around the node being visited), in order, also
        after the `if`, `with` and `try` blocks holding it, but not past the end of a loop's body or a function's."""
        child: ast.AST = statement
        above = next(i for i, a in enumerate(self.ctx.ancestors) if a is statement)
        for parent in reversed(self.ctx.ancestors[:above]):
            block = next((b for b in (getattr(parent, f, None) for f in ("body", "orelse", "finalbody"))
                          if isinstance(b, list) and any(s is child for s in b)), None)
            if block is None:
                return
            yield from block[next(i for i, s in enumerate(block) if s is child) + 1:]
            if not isinstance(parent, (ast.If, ast.With, ast.AsyncWith, ast.Try)):
                return
            child = parent

    def _under_switch(self, node: ast.Call) -> bool:
        """Inside `if torch.are_deterministic_algorithms_enabled():` (or its `else` after `if not ...`): there
        the deterministic kernels run (Megatron's MoE unpermute picks `index_add_` so)."""
        path = [*self.ctx.ancestors, node]
        for parent, child in zip(path[:-1], path[1:], strict=True):
            if isinstance(parent, ast.If) and child is not parent.test:
                wanted = any(s is child for s in parent.body)
            elif isinstance(parent, ast.IfExp) and child is not parent.test:
                wanted = child is parent.body
            else:
                continue
            if self._asks_switch(parent.test, wanted):
                return True
        return False

    def _asks_switch(self, test: ast.expr, wanted: bool) -> bool:
        """Whether `test` having the truth `wanted` means the deterministic switch is on."""
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            return self._asks_switch(test.operand, not wanted)
        if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) and wanted:
            return any(self._asks_switch(value, True) for value in test.values)
        return wanted and isinstance(test, ast.Call) and self.ctx.call_qualname(test) == SWITCH_QUERY

    def _adds_integers(self, node: ast.Call, short: str, offset: int) -> bool:
        """An accumulating op adding an integer tensor (a count: fairseq's `scatter_add_(dim, index,
        torch.ones_like(index))`): integer sums are exact in any order."""
        positions = ACCUMULATED_SOURCE.get(short.rstrip("_"))
        if positions is None:
            return False
        index_at, source_at, source_name = positions
        index = argument(node, index_at + offset, "index") if index_at is not None else None
        return self._integer(argument(node, source_at + offset, source_name), index)

    def _accumulated_into(self, node: ast.Call, short: str, offset: int) -> ast.expr | None:
        """The tensor an accumulating op adds into (`out` of `out.scatter_add_(...)`, `torch.index_add(out, ...)`),
        whose dtype the values added take."""
        if short.rstrip("_") not in ACCUMULATED_SOURCE:
            return None
        return argument(node, 0, "input") if offset else getattr(node.func, "value", None)

    def _logged_only(self, node: ast.Call, short: str, offset: int) -> str | None:
        """The mapping named for reported values (`metrics`, `log_dict`) that the new tensor an accumulating op adds
        into in place is only stored in, whole or by item, by the statements after it (ms-swift's per-channel loss
        `stats = torch.zeros(...)`, `stats.index_add_(...)`, then `metrics[f'loss_{c}'] = stats[idx]`), else None."""
        into = self._accumulated_into(node, short, offset)
        statement = self.ctx.ancestors[-1] if self.ctx.ancestors else None
        if not (isinstance(into, ast.Name) and short.endswith("_") and isinstance(statement, ast.Expr)
                and statement.value is node):
            return None
        bound = self.values.bindings.bound(into.id, into)
        if not bound or not all(isinstance(value, ast.Call) and (
                self.ctx.call_qualname(value) in NEW_TENSOR_CALLS
                or isinstance(value.func, ast.Attribute) and value.func.attr in NEW_TENSOR_METHODS) for value in bound):
            return None
        stored: set[str] = set()
        for later in self._statements_after(statement):
            allowed = set()
            for assign in (n for n in ast.walk(later) if isinstance(n, ast.Assign)):
                value = assign.value.value if isinstance(assign.value, ast.Subscript) else assign.value
                names = {target_name(t.value) for t in assign.targets if isinstance(t, ast.Subscript)}
                if isinstance(value, ast.Name) and value.id == into.id and len(names) == len(assign.targets) \
                        and None not in names \
                        and all(LOGGED_NAME_PARTS & set(name.lower().split("_")) for name in names):
                    allowed.add(id(value))
                    stored |= names
            uses = [n for n in ast.walk(later) if isinstance(n, ast.Name) and n.id == into.id]
            if any(isinstance(use.ctx, ast.Store) for use in uses):
                break
            if any(id(use) not in allowed for use in uses):
                return None
        return min(stored) if len(stored) == 1 else None

    def _adds_ones(self, node: ast.Call, short: str, offset: int) -> bool:
        """An accumulating op adding ones (`torch.ones_like(i, dtype=hist.dtype)`): a count."""
        positions = ACCUMULATED_SOURCE.get(short.rstrip("_"))
        source = argument(node, positions[1] + offset, positions[2]) if positions else None
        return isinstance(source, ast.Call) and (self.ctx.call_qualname(source) in ONES
                                                 or isinstance(source.func, ast.Attribute)
                                                 and source.func.attr == "new_ones")

    def _integer(self, node: ast.expr | None, index: ast.expr | None) -> bool:
        """An integer tensor: the op's own index, one cast to an integer dtype, made with one (`dtype=torch.long`,
        `dtype=index.dtype`), made like an integer tensor (`torch.ones_like(index)`, `index.new_ones(n)`), or a
        name only ever bound to such (ultralytics' `offsets = torch.zeros(n, dtype=torch.long)`)."""
        if node is None:
            return False
        if index is not None and ast.dump(node) == ast.dump(index):
            return True
        if isinstance(node, ast.Name):
            bound = self.values.bindings.bound(node.id, node)
            return bool(bound) and all(isinstance(value, ast.expr) and self._integer(value, index) for value in bound)
        if not isinstance(node, ast.Call):
            return False
        dtype = keyword(node, "dtype")
        if dtype is not None:
            return self._integer_dtype(dtype, index)
        func = node.func
        if self.ctx.call_qualname(node) in INTEGER_LIKE:
            return self._integer(argument(node, 0, "input"), index)
        if not isinstance(func, ast.Attribute):
            return False
        if func.attr in INTEGER_CASTS and not node.args:
            return True
        if func.attr in ("to", "type") and node.args:
            return self._integer_dtype(node.args[0], index)
        return func.attr.startswith("new_") and self._integer(func.value, index)

    def _integer_dtype(self, dtype: ast.expr, index: ast.expr | None) -> bool:
        """`torch.long` and the like, or the dtype of an integer tensor (`index.dtype`)."""
        if isinstance(dtype, ast.Attribute) and dtype.attr == "dtype":
            return self._integer(dtype.value, index)
        return self.ctx.qualname(dtype) in INTEGER_DTYPES

    def _gradient_free(self, node: ast.expr | None) -> Verdict:
        """Whether a tensor needs no gradient as far as this function shows: read from a loaded checkpoint or
        a `state_dict()` (deit's `checkpoint['model']['pos_embed']`, sliced and reshaped), detached, a constant
        or a new tensor (`torch.tensor([...])`), or a batch a training loop reads (`for i, (imgs, targets) in
        pbar:`); also what layout, dtype and device methods, arithmetic and the ops checked here whose forward
        is deterministic make of those (`imgs.float() / 255`, `F.interpolate(imgs, ...)`).
        A loop's batch is gradient-free only if that loop turns out to run training steps: the verdict is
        GRADIENT_FREE, None (it may need one), or the loops it depends on, judged in `finish`."""
        if isinstance(node, ast.Constant) or _ground_truth(node):
            return GRADIENT_FREE
        if isinstance(node, ast.Name):
            return self._name_gradient_free(node)
        if isinstance(node, ast.Subscript):
            stored = self._dict_item(node)
            if stored is None and self._gradient_free_mapping(node.value):
                return GRADIENT_FREE
            return self._gradient_free(node.value if stored is None else stored)
        if isinstance(node, ast.UnaryOp):
            return self._gradient_free(node.operand)
        if isinstance(node, (ast.Tuple, ast.List)):
            verdict: Verdict = GRADIENT_FREE
            for item in node.elts:
                verdict = _both(verdict, self._gradient_free(item))
            return verdict
        if isinstance(node, ast.BinOp):
            return _both(self._gradient_free(node.left), self._gradient_free(node.right))
        if isinstance(node, ast.Attribute):
            return GRADIENT_FREE if node.attr == "data" or self._frozen_attribute(node) else None
        if not isinstance(node, ast.Call):
            return None
        qualified = self.ctx.call_qualname(node)
        if qualified in catalogue.TORCH_CHECKPOINT_LOADS:
            return GRADIENT_FREE
        if qualified in catalogue.NONDETERMINISTIC_BACKWARD_ONLY and qualified.rsplit(".", 1)[1][0].islower():
            return self._gradient_free(argument(node, 0, "input"))  # `F.interpolate(imgs, ...)` of a batch
        if qualified in catalogue.TORCH_TENSOR_FACTORIES:  # a new leaf tensor, unless asked to need a gradient
            requires_grad = keyword(node, "requires_grad")
            return GRADIENT_FREE if requires_grad is None or constant(requires_grad) is False else None
        if qualified is not None and qualified.startswith("torch.") and qualified.rpartition(".")[2][:1].islower() \
                and (node.args or node.keywords):  # `torch.sum(weights * activations, dim=1)`, `F.relu(x)`
            return self._gradient_free(ast.Tuple([*node.args, *(k.value for k in node.keywords)]))
        func = node.func
        if not isinstance(func, ast.Attribute):
            return None
        if func.attr in ("detach", "state_dict"):
            return GRADIENT_FREE
        return self._gradient_free(func.value) if func.attr in catalogue.RECEIVER_ONLY_METHODS else None

    def _name_gradient_free(self, node: ast.Name) -> Verdict:
        """Every earlier assignment to the name (in source order) bound a gradient-free value and, where the
        name is the target of an enclosing `for` loop, that loop runs training steps (see `_data_batch`)."""
        loop = self._binding_loop(node)
        if loop is not None and not isinstance(loop, (ast.For, ast.AsyncFor)):
            return None  # `[F.interpolate(x, ...) for x in features]`: a comprehension's target
        verdict: Verdict = GRADIENT_FREE if loop is None else self._loop_verdict(loop)
        bound = self.values.bindings.bound(node.id, node)
        facts = [GRADIENT_FREE if self._filled_gradient_free(value, node.id) else fact for value, fact
                 in zip(bound, self.values.facts(node.id, node), strict=True)]
        if self._loaded_mapping(node.id):
            return GRADIENT_FREE
        data = self._data_parameter(node.id) or self._checkpoint_parameter(node.id) or self._given_frozen(node.id)
        function = self.ctx.current_def()
        whole = {id(s.value) for s in function.body if isinstance(s, ast.Assign) and len(s.targets) == 1
                 and isinstance(s.targets[0], ast.Name) and s.targets[0].id == node.id} if function else set()
        last = max((i for i, value in enumerate(bound) if id(value) in whole), default=0)
        if last:
            facts = facts[last:]  # a statement of the function's own body: the bindings before it are replaced
        elif data:
            facts = facts[1:]  # the parameter's own entry comes first: unknown, but data
        if not facts and loop is None and not data:
            return None
        for fact in facts:
            verdict = _both(verdict, fact if isinstance(fact, frozenset) else None)
        for write in self._writes(function, _name_id).get(node.id, []) if verdict is not None else ():
            if isinstance(write, ast.Call) and isinstance(write.func, ast.Attribute) \
                    and write.func.attr in ("append", "extend", "insert") and _name_id(write.func.value) == node.id:
                verdict = _both(verdict, self._gradient_free(write.args[-1] if write.args else None))
        return verdict  # a list the function appends to holds what it appends (rtmdet-ins' mask logits)

    def _filled_gradient_free(self, value: object, name: str) -> bool:
        """`value`, bound to `name`, is a new empty mapping into which the function only stores gradient-free values
        (VideoMAE's `new_dict[key[9:]] = checkpoint_model[key]`, renaming a checkpoint's keys)."""
        return _empty_mapping(value, self.ctx.imports.resolve_any) and self._stores_gradient_free(
            self.ctx.current_def(), lambda held: isinstance(held, ast.Name) and held.id == name, name)

    def _gradient_free_mapping(self, node: ast.expr) -> bool:
        """`self.name` that the class only sets to a new empty mapping and fills with gradient-free values (SlowFast's
        Grad-CAM hooks: `self.activations[layer_name] = output.clone().detach()`)."""
        owner = self._owner()
        writes = self._writes(owner, _self_attribute_name).get(node.attr, []) if _self_attribute(node) else []
        return bool(writes) and all(isinstance(w, ast.Subscript) or _empty_mapping(w, self.ctx.imports.resolve_any)
                                    for w in writes) \
            and self._stores_gradient_free(owner, lambda held: _self_attribute_name(held) == node.attr, node.attr)

    def _stores_gradient_free(self, scope: ast.AST | None, holds: Callable[[ast.expr], bool], name: str) -> bool:
        """Every `holder[key] = value` in `scope` whose holder `holds` accepts stores a gradient-free value (a cycle
        through the mapping proves nothing)."""
        if scope is None or (id(scope), name) in self._filling:
            return False
        self._filling.add((id(scope), name))
        try:
            return all(self._gradient_free(statement.value) == GRADIENT_FREE for statement in ast.walk(scope)
                       if isinstance(statement, ast.Assign)
                       and any(isinstance(t, ast.Subscript) and holds(t.value) for t in statement.targets))
        finally:
            self._filling.discard((id(scope), name))

    def _data_parameter(self, name: str) -> bool:
        """`name` is a parameter named for images (`image`, `imgs`) of the innermost function, a method of a
        plain class (no module): data, which needs no gradient (segment-anything's `ResizeLongestSide.
        apply_image_torch`). Not of a module-level function: a helper named so may warp features that are being
        optimised (FRESCO's `bilinear_sample(img, ...)`, which `flow_warp(feature, ...)` calls)."""
        if not DATA_PARAMETER.fullmatch(name):
            return False
        ancestors = self.ctx.ancestors
        index = next((i for i in range(len(ancestors) - 1, -1, -1) if isinstance(ancestors[i], FUNCTION_TYPES)), None)
        if index is None:
            return False
        args = ancestors[index].args
        owner = ancestors[index - 1] if index else None
        models = self.cpu_code.derived_classes("model", is_model_base)
        return any(a.arg == name for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)) \
            and isinstance(owner, ast.ClassDef) and owner.name not in models

    def _checkpoint_parameter(self, name: str) -> bool:
        """`name` is a parameter of the current function named for a checkpoint: its tensors are weights read from a
        file (LAVIS's `interpolate_pos_embed(model, checkpoint_model)`)."""
        function = self.ctx.current_def()
        args = function.args if function is not None else None
        return args is not None and CHECKPOINT_PARAMETER.fullmatch(name) is not None \
            and any(a.arg == name for a in (*args.posonlyargs, *args.args, *args.kwonlyargs))

    def _loaded_mapping(self, name: str) -> bool:
        """The current function hands `name` to a model's `load_state_dict`: a mapping of weights, copied into the
        model without gradient (Swin's `load_pretrained` resizes `state_dict[k]` that `merge_moe_model_state_dict`
        built from two checkpoints, then loads it)."""
        function = self.ctx.current_def()
        return function is not None and any(
            isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "load_state_dict"
            and _name_id(argument(node, 0, "state_dict")) == name for node in walk_scope(function))

    def _given_frozen(self, name: str) -> bool:
        """`name` is a parameter of a method that the file calls only as `self.method(...)` in its class, each
        time with a frozen attribute for it (ijepa's `self.interpolate_pos_encoding(x, self.pos_embed)`)."""
        owner, function = self._owner(), self.ctx.current_def()
        if owner is None or function is None or function not in owner.body:
            return False
        params = [a.arg for a in (*function.args.posonlyargs, *function.args.args)]
        if name not in params[1:]:
            return False
        if self._method_calls is None:
            self._method_calls = {}
            for call in ast.walk(self.ctx.tree):
                if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute):
                    self._method_calls.setdefault(call.func.attr, []).append(call)
        calls = self._method_calls.get(function.name, [])
        return bool(calls) and all(
            _self_attribute(c.func) and owner.lineno <= c.lineno <= (owner.end_lineno or owner.lineno)
            and self._frozen_attribute(argument(c, params.index(name) - 1, name)) for c in calls)

    def _frozen_attribute(self, node: ast.expr | None) -> bool:
        """`self.name` that the class only ever sets to `nn.Parameter(..., requires_grad=False)` (ijepa's sin-cos
        `pos_embed`) and never makes require a gradient."""
        if not _self_attribute(node):
            return False
        writes = self._writes(self._owner(), _self_attribute_name).get(node.attr)
        return bool(writes) and all(
            isinstance(w, ast.Call) and self.ctx.call_qualname(w) in catalogue.TORCH_TENSOR_WRAPPERS
            and constant(argument(w, 1, "requires_grad")) is False for w in writes)

    def _attribute_alias(self, node: ast.Call) -> str | None:
        """The known op that a `self.name(...)` call runs: every value but None that the class assigns to
        `self.name` is that imported function (OLMo's `self.flash_attn_func = flash_attn_func` in `__init__`)."""
        alias = self.ctx.self_attribute_function(node)
        return alias if alias in catalogue.NONDETERMINISTIC_OPS else None

    def _jit_operation(self, node: ast.Call) -> str | None:
        """The aten op of the catalogue a call of a name runs that the function binds to
        `torch._C._jit_get_operation("aten::<op>")` (or to one of its overloads, `op = op[0]`): stylegan3's
        grid_sample_gradfix runs `aten::grid_sampler_2d_backward` so, as `torch.ops.aten.<op>`."""
        if not isinstance(node.func, ast.Name) or "aten::" not in self.ctx.source:
            return None
        found = set()
        for value in self.values.bindings.bound(node.func.id, node):
            if isinstance(value, ast.Subscript) and isinstance(value.value, ast.Name) and value.value.id == node.func.id:
                continue
            named = constant(argument(value, 0, "name")) if isinstance(value, ast.Call) and \
                self.ctx.imports.resolve_any(value.func) == "torch._C._jit_get_operation" else None
            if not isinstance(named, str) or not named.startswith("aten::"):
                return None
            found.add("torch.ops.aten." + named.removeprefix("aten::"))
        return found.pop() if len(found) == 1 and next(iter(found)) in catalogue.NONDETERMINISTIC_OPS else None

    def _triton_float_atomic(self, node: ast.Call) -> bool:
        """`tl.atomic_add(ptr, val)` in a `@triton.jit` function (modded-nanogpt's backward kernels), unless `val` is
        an integer (a counter: `tl.atomic_add(counts + i, 1)`; integer sums are exact in any order)."""
        if self.ctx.callee_name(node) != "atomic_add" or self.ctx.imports.resolve_any(node.func) != TRITON_ATOMIC_ADD:
            return False
        kernel = self.ctx.current_def()
        return kernel is not None and any(
            self.ctx.imports.resolve_any(d.func if isinstance(d, ast.Call) else d) in TRITON_JIT
            for d in kernel.decorator_list) and not self._triton_integer(argument(node, 1, "val"))

    def _triton_integer(self, value: ast.expr | None) -> bool:
        """An integer literal, a cast to an integer dtype (`x.to(tl.int32)`), or a name only ever bound to those."""
        if isinstance(value, ast.Name):
            bound = self.values.bindings.bound(value.id, value)
            return bool(bound) and all(isinstance(item, ast.expr) and self._triton_integer(item) for item in bound)
        if isinstance(constant(value), int):
            return True
        return isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "to" \
            and bool(value.args) and TRITON_INTEGER_DTYPE.fullmatch(self.ctx.imports.resolve_any(value.args[0]) or "") \
            is not None

    def _hub_flash_attention(self, node: ast.Call) -> str | None:
        """The FlashAttention function a call runs on a module that Hugging Face's `kernels.get_kernel` loads from a
        Hub repository of FlashAttention, directly or through a name holding it (modded-nanogpt's
        `flash_attn_interface = get_kernel('kernels-community/flash-attn3', version=1).flash_attn_interface`)."""
        func = node.func
        if not (isinstance(func, ast.Attribute) and func.attr in catalogue.FLASH_ATTENTION_FUNCTIONS):
            return None
        module = func.value
        if isinstance(module, ast.Name):
            bound = self.values.bindings.bound(module.id, module)
            module = bound[-1] if bound else None
        while isinstance(module, ast.Attribute):
            module = module.value
        if not (isinstance(module, ast.Call) and self.ctx.imports.resolve_any(module.func) == HUB_KERNEL_LOADER):
            return None
        repository = constant(argument(module, 0, "repo_id"))
        return f"flash_attn.{func.attr}" if isinstance(repository, str) and HUB_FLASH_ATTENTION.search(repository) \
            else None

    def _owner(self) -> ast.ClassDef | None:
        """The innermost class around here."""
        return next((n for n in reversed(self.ctx.ancestors) if isinstance(n, ast.ClassDef)), None)

    def _writes(self, scope: ast.AST | None, name_of: Callable[[ast.AST], str | None]) -> dict[str, list[ast.expr]]:
        """Per name (`name_of` of a node), what every statement of `scope` writes into it: the assigned value, or
        the target or call that changes it otherwise (`x += ...`, `x[i] = ...`, `x.extend(...)`)."""
        if scope is None:
            return {}
        key = (id(scope), name_of.__name__)
        if key not in self._writes_in:
            found: dict[str, list[ast.expr]] = {}
            for node in ast.walk(scope):
                if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                    whole = node.value if isinstance(node, (ast.Assign, ast.AnnAssign)) else None
                    for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                        for part in ast.walk(target):
                            if name_of(part) is not None:
                                found.setdefault(name_of(part), []).append(
                                    whole if part is target and whole is not None else target)
                elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                        and node.func.attr in CHANGING_CALLS and name_of(node.func.value) is not None:
                    found.setdefault(name_of(node.func.value), []).append(node)
            self._writes_in[key] = found
        return self._writes_in[key]

    def _unique(self, index: ast.expr | None) -> bool:
        """An index without duplicates by construction: `torch.arange(n)`, `randperm`, `argsort`, `unique`, the
        indices of `sort` or `topk` (`[1]` or `.indices`; also moved or cast), a tensor of a list built from consecutive ranges, a name only ever
        bound to those, or token positions (`input_pos`: a KV cache written where each new token goes)."""
        if isinstance(index, (ast.Name, ast.Attribute)) and POSITION_INDEX.fullmatch(target_name(index) or ""):
            return True
        if isinstance(index, ast.Name):
            bound = self.values.bindings.bound(index.id, index)
            return bool(bound) and all(isinstance(value, ast.expr) and self._unique(value) for value in bound)
        if isinstance(index, ast.Subscript) and isinstance(index.slice, ast.Slice):
            return self._unique(index.value)
        if isinstance(index, ast.Subscript) and constant(index.slice) == 1 \
                or isinstance(index, ast.Attribute) and index.attr == "indices":
            call = index.value
            qualified = self.ctx.call_qualname(call) if isinstance(call, ast.Call) else None
            return qualified in INDEXED_RESULT_CALLS or qualified is None and isinstance(call, ast.Call) \
                and isinstance(call.func, ast.Attribute) and call.func.attr in INDEXED_RESULT_METHODS
        if not isinstance(index, ast.Call):
            return False
        qualified = self.ctx.call_qualname(index)
        if qualified in UNIQUE_INDEX_CALLS:
            return True
        if qualified in INDEX_TENSORS:
            return self._range_list(argument(index, 0, "data"))
        func = index.func
        if qualified is not None or not isinstance(func, ast.Attribute):
            return False
        return func.attr in UNIQUE_INDEX_METHODS or func.attr in INDEX_KEEPING_METHODS and self._unique(func.value)

    def _range_list(self, value: ast.expr | None) -> bool:
        """`range(n)`, `list(range(a, b))`, or a list (a local name or a `self.` attribute) only ever set to `[]`
        or a range and extended by ranges, each starting where the one before stops (TinyLlama's LoRA
        `lora_ind`, extended by the query, key and value ranges that are enabled)."""
        if _range_bounds(value) is not None:
            return True
        if _self_attribute(value):
            writes = self._writes(self._owner(), _self_attribute_name).get(value.attr, [])
        elif isinstance(value, ast.Name):
            writes = self._writes(self.ctx.current_def(), _name_id).get(value.id, [])
        else:
            return False
        ranges = []
        for write in writes:
            if isinstance(write, ast.List) and not write.elts:
                continue
            if isinstance(write, ast.Call) and isinstance(write.func, ast.Attribute) and write.func.attr == "extend" \
                    and len(write.args) == 1:
                write = write.args[0]
            bounds = _range_bounds(write)
            if bounds is None:
                return False
            ranges.append(((write.lineno, write.col_offset), *bounds))
        ranges.sort()
        return bool(ranges) and all(later[1] == earlier[2] for earlier, later in pairwise(ranges))

    def _dict_item(self, node: ast.Subscript) -> ast.expr | None:
        """What was last stored under a literal key of a dict a name holds (audiocraft's
        `saliency_dict_['salience'] = torch.Tensor(...)`), if known."""
        key = constant(node.slice)
        if not (isinstance(key, str) and isinstance(node.value, ast.Name)):
            return None
        fact = self.values.last(node.value.id, node)
        return fact.get(key) if isinstance(fact, DictFact) else None

    def _loop_verdict(self, loop: ast.AST) -> Verdict:
        """What a `for` loop's targets hold: the entries of a gradient-free mapping when it runs over its
        `.items()` or `.values()` (a checkpoint's state dict); otherwise a batch, if the loop runs training steps."""
        iterable = getattr(loop, "iter", None)
        if isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Attribute) \
                and iterable.func.attr in ("items", "values") and not iterable.args:
            source = self._gradient_free(iterable.func.value)
            if source is not None:
                return source
        return frozenset({loop})

    def _binding_loop(self, node: ast.Name) -> ast.AST | None:
        """The innermost `for` loop (its body or else clause) or comprehension around `node` whose targets bind
        `node`'s name."""
        where = (node.lineno, node.col_offset)
        found = None
        for binder, names in self.binders:
            first = binder.body[0] if isinstance(binder, (ast.For, ast.AsyncFor)) else binder
            if node.id in names and (first.lineno, first.col_offset) <= where \
                    <= (binder.end_lineno, binder.end_col_offset):
                found = binder  # recorded in source order: a later one that holds `node` is inside
        return found

    def _data_batch(self, loop: ast.AST) -> bool:
        """What a loop's header binds is a data batch, which needs no gradient: the loop runs training steps
        (after the traversal) and makes no tensor require a gradient in its body (adversarial examples)."""
        start, end = (loop.lineno, loop.col_offset), (loop.end_lineno, loop.end_col_offset)
        return self.ctx.is_step_loop(loop) and not any(start <= at <= end for at in self.grad_enabled_at)

    def _without_grad(self) -> bool:
        """Inside `with torch.no_grad():`, a function decorated with `@torch.no_grad()` / `inference_mode`, or the
        `forward` of a torch.autograd.Function, which autograd does not record unless it enables grad mode (its
        `backward` gives the gradient: stylegan3's grid_sample_gradfix)."""
        function = self.ctx.current_def()
        if function is not None and function.name == "forward" and self.ctx.in_autograd_function():
            return not any(self.ctx.qualname(item.context_expr.func) in GRAD_ENABLING for ancestor in self.ctx.ancestors
                           if isinstance(ancestor, (ast.With, ast.AsyncWith)) for item in ancestor.items
                           if isinstance(item.context_expr, ast.Call))
        for ancestor in self.ctx.ancestors:
            if isinstance(ancestor, (ast.With, ast.AsyncWith)):
                contexts = [item.context_expr for item in ancestor.items]
            elif isinstance(ancestor, (ast.FunctionDef, ast.AsyncFunctionDef)):
                contexts = ancestor.decorator_list
            else:
                continue
            for expr in contexts:
                target = expr.func if isinstance(expr, ast.Call) else expr
                if self.ctx.qualname(target) in catalogue.GRAD_DISABLING_CONTEXTS:
                    return True
        return False

    @staticmethod
    def _switch_fixes(node: ast.Call, short: str, offset: int) -> bool:
        """Variants the deterministic switch fixes although their entry has another alternative."""
        if short.startswith("scatter_reduce"):
            return _in(argument(node, 3 + offset, "reduce"), frozenset({"sum", "mean"}))
        if short == "pad":
            return _in(argument(node, 2, "mode"), frozenset({"replicate"}))
        return False


def _references(node: ast.AST, names: set[str], evaluating: bool) -> Iterator[tuple[str, bool]]:
    """Each place under `node` that names one of `names` (a name or an attribute, not an import), and whether a
    function named for evaluation holds it."""
    for child in ast.iter_child_nodes(node):
        inner = evaluating or isinstance(child, FUNCTION_TYPES) and EVAL_NAME.search(child.name) is not None
        named = child.id if isinstance(child, ast.Name) else child.attr if isinstance(child, ast.Attribute) else None
        if named in names:
            yield named, inner
        yield from _references(child, names, inner)


def _empty_mapping(value: object, resolve: Callable[[ast.expr], str | None]) -> bool:
    """`{}`, `dict()` or `OrderedDict()`: a new empty mapping."""
    return isinstance(value, ast.Dict) and not value.keys or isinstance(value, ast.Call) and not value.args \
        and not value.keywords and (resolve(value.func) == EMPTY_MAPPING
                                    or isinstance(value.func, ast.Name) and value.func.id == "dict")


def _tests_training(test: ast.expr) -> bool | None:
    """True for `self.training`, False for `not self.training`, None for any other test."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = _tests_training(test.operand)
        return None if inner is None else not inner
    return True if _self_attribute(test) and test.attr == "training" else None


def _ground_truth(node: ast.AST | None) -> bool:
    """A name or attribute named for ground truth (`gt_masks`), or an attribute of one (`gt_instances.masks`):
    targets, which need no gradient."""
    while isinstance(node, ast.Attribute) and not GROUND_TRUTH.fullmatch(node.attr):
        node = node.value
    return GROUND_TRUTH.fullmatch(target_name(node) or "") is not None


def _self_attribute(node: ast.AST | None) -> bool:
    """`self.name`."""
    return isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self"


def _self_attribute_name(node: ast.AST) -> str | None:
    return node.attr if _self_attribute(node) else None


def _name_id(node: ast.AST) -> str | None:
    return node.id if isinstance(node, ast.Name) else None


def _single_along_dim(call: ast.Call, offset: int) -> bool:
    """A scatter whose index has size 1 along the scatter dim: `ids.unsqueeze(d)` for scatter dim `d` (trl's
    `logits.scatter_add(2, ids.unsqueeze(-1), bump)`, where the source's `.expand(-1, n, 1)` shows 3 dimensions)."""
    dim, index = constant(argument(call, offset, "dim")), argument(call, 1 + offset, "index")
    if not (isinstance(dim, int) and isinstance(index, ast.Call) and isinstance(index.func, ast.Attribute)
            and index.func.attr == "unsqueeze" and len(index.args) == 1):
        return False
    added = constant(index.args[0])
    if not isinstance(added, int) or isinstance(added, bool) or isinstance(dim, bool):
        return False
    if added == dim:
        return True
    dims = _dimensions(argument(call, 2 + offset, "src")) or _dimensions(call.func.value if not offset else None)
    return dims is not None and added % dims == dim % dims


def _dimensions(value: ast.expr | None) -> int | None:
    """The number of dimensions of `x.expand(a, b, c)`, `x.view((a, b))`, `x.reshape(...)` with literal shapes."""
    if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute)
            and value.func.attr in SHAPING_METHODS and value.args and not value.keywords):
        return None
    shape = value.args[0].elts if len(value.args) == 1 and isinstance(value.args[0], (ast.Tuple, ast.List)) \
        else value.args
    return None if any(isinstance(item, ast.Starred) for item in shape) else len(shape)


def _range_bounds(value: ast.expr | None) -> tuple[str, str] | None:
    """The start and stop (dumped) of `range(stop)`, `range(start, stop)` or `list(...)` of one."""
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "list" \
            and len(value.args) == 1:
        value = value.args[0]
    if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "range"
            and 1 <= len(value.args) <= 2 and not value.keywords):
        return None
    start = ast.dump(value.args[0]) if len(value.args) == 2 else ast.dump(ast.Constant(0))
    return start, ast.dump(value.args[-1])


def _package_folders(path: str, tree: ast.Module) -> list[str]:
    """The names of the package folders holding the file: those with `__init__.py` (up to the package's top) or,
    in a namespace package, those its own imports name as the package of a module beside it (jepa's
    `src/datasets/utils/video/transforms.py` imports `src.datasets.utils.video.functional`)."""
    folder = project.file_folder(path)
    names = []
    while (folder / "__init__.py").is_file() and folder.parent != folder:
        names.append(folder.name)
        folder = folder.parent
    if names:
        return names
    for node in project.import_statements(tree.body):
        modules = [alias.name for alias in node.names] if isinstance(node, ast.Import) \
            else [node.module] if node.module and not node.level else []
        for *package, module in (name.split(".") for name in modules):
            if package and folder.parts[-len(package):] == tuple(package) \
                    and ((folder / module).is_dir() or (folder / f"{module}.py").is_file()):
                return package
    return []


def _receiver_chain(value: ast.expr, inner: ast.expr | None, name: str | None = None) -> bool:
    """`value` is `inner` (or the name `name`) under layout, dtype and device methods only (`x.flatten(2)`)."""
    while isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) \
            and value.func.attr in catalogue.RECEIVER_ONLY_METHODS and value is not inner:
        value = value.func.value
    return value is inner if inner is not None else isinstance(value, ast.Name) and value.id == name


def _rebinds(statement: ast.stmt, name: str) -> bool:
    """`name = ...`."""
    return isinstance(statement, ast.Assign) and len(statement.targets) == 1 \
        and isinstance(statement.targets[0], ast.Name) and statement.targets[0].id == name


def _detaches(statement: ast.stmt, name: str) -> bool:
    """`name = name.detach()` or `return name.detach()`."""
    if not (_rebinds(statement, name) or isinstance(statement, ast.Return)):
        return False
    value = statement.value
    return isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "detach" \
        and isinstance(value.func.value, ast.Name) and value.func.value.id == name


def _trains(ctx: FileContext) -> bool:
    """Whether the file trains, itself or through the project modules it calls (LLaVA's train_mem.py runs
    train.py's `train()`): only then does a backward run."""
    facts = seeding.analyse(ctx)
    return facts.trains or bool(facts.training_modules(_trusts_none))


def _trusts_none(summary: pinning.Summary) -> bool:
    """Every training module counts, whatever it pins (seeding.Trusted)."""
    return False

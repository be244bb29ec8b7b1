"""remove_dropout: every dropout form is a no-op in training mode, including names bound beforehand."""

from __future__ import annotations

import copy
import json
import sys
import types

import pytest
import torch
import torch.nn.functional as F
from msprobe_runtime.pytorch import PrecisionDebugger
from msprobe_runtime.pytorch.capture import api_wrap
from msprobe_runtime.pytorch.dropout import no_dropout, remove_dropout, restore_dropout
from torch import dropout as bound_torch_dropout
from torch import nn
from torch.nn.functional import dropout as bound_dropout
from torch.nn.functional import scaled_dot_product_attention as bound_sdpa
from torch.nn.utils.rnn import pack_padded_sequence

# Imported above, before any removal: the names a user's module binds at import time.
ORIGINALS = {"sdpa": torch._C._nn.scaled_dot_product_attention}  # in a dict: removal rebinds module globals


@pytest.fixture(autouse=True)
def no_capture_wrappers():
    """These tests check which function object a name holds: an earlier test's L1 capture leaves its API
    wrappers installed (they stay for the process), so take them out first."""
    api_wrap.uninstall()


@pytest.fixture
def removed():
    remove_dropout()
    yield
    restore_dropout()


def sample(*shape: int) -> torch.Tensor:
    return torch.rand(*shape, generator=torch.Generator().manual_seed(0)) + 0.5  # no zeros: dropout shows


FUNCTIONAL = [
    (F.dropout, (4, 8, 6)),
    (F.dropout1d, (4, 8, 6)),
    (F.dropout2d, (2, 4, 6, 6)),
    (F.dropout3d, (2, 4, 3, 3, 3)),
    (F.alpha_dropout, (4, 8, 6)),
    (F.feature_alpha_dropout, (2, 4, 6, 6)),
    (bound_dropout, (4, 8, 6)),
]
FUNCTIONAL_IDS = [f"{function.__module__}.{function.__name__}" for function, _ in FUNCTIONAL[:-1]] + ["bound-dropout"]


@pytest.mark.parametrize(("function", "shape"), FUNCTIONAL, ids=FUNCTIONAL_IDS)
def test_functional_dropout_draws_without_removal(function, shape):
    x = sample(*shape)
    assert not torch.equal(function(x, 0.5, True), x)


@pytest.mark.parametrize(("function", "shape"), FUNCTIONAL, ids=FUNCTIONAL_IDS)
@pytest.mark.parametrize("inplace", [False, True])
def test_functional_dropout_is_identity(removed, function, shape, inplace):
    x = sample(*shape)
    expected = x.clone()
    assert torch.equal(function(x, p=0.5, training=True, inplace=inplace), expected)
    assert torch.equal(x, expected)


def test_functional_dropout_still_checks_p(removed):
    with pytest.raises(ValueError, match="dropout probability"):
        F.dropout(sample(3), p=1.5)


def test_gradient_passes_unchanged(removed):
    x = sample(5, 5).requires_grad_()
    F.dropout(x, 0.5, True).sum().backward()
    assert torch.equal(x.grad, torch.ones(5, 5))


@pytest.mark.parametrize(
    "call",
    [
        lambda x: torch.dropout(x, 0.5, True),
        lambda x: torch.dropout(x, p=0.5, train=True),
        lambda x: torch.dropout_(x.clone(), 0.5, True),
        lambda x: torch.feature_dropout(x, 0.5, True),
        lambda x: torch.feature_dropout_(x.clone(), 0.5, True),
        lambda x: torch.alpha_dropout(x, 0.5, True),
        lambda x: torch.alpha_dropout_(x.clone(), 0.5, True),
        lambda x: torch.feature_alpha_dropout(x, 0.5, True),
        lambda x: torch.feature_alpha_dropout_(x.clone(), 0.5, True),
        lambda x: torch.native_dropout(x, 0.5, True)[0],
        lambda x: bound_torch_dropout(x, 0.5, True),
    ],
    ids=["dropout", "dropout-kw", "dropout_", "feature_dropout", "feature_dropout_", "alpha_dropout",
         "alpha_dropout_", "feature_alpha_dropout", "feature_alpha_dropout_", "native_dropout", "bound-torch-dropout"],
)
def test_torch_namespace_dropout_is_identity(removed, call):
    x = sample(4, 8, 6)
    assert torch.equal(call(x), x)


MODULES = [
    (nn.Dropout, (4, 8, 6)),
    (nn.Dropout1d, (4, 8, 6)),
    (nn.Dropout2d, (2, 4, 6, 6)),
    (nn.Dropout3d, (2, 4, 3, 3, 3)),
    (nn.AlphaDropout, (4, 8, 6)),
    (nn.FeatureAlphaDropout, (2, 4, 6, 6)),
]


@pytest.mark.parametrize(("module_class", "shape"), MODULES, ids=[cls.__name__ for cls, _ in MODULES])
def test_dropout_modules_created_before_and_after_are_identity(module_class, shape):
    before = module_class(0.5).train()
    remove_dropout()
    try:
        after = module_class(p=0.5).train()
        x = sample(*shape)
        assert torch.equal(before(x), x) and torch.equal(after(x), x)
    finally:
        restore_dropout()
    assert not torch.equal(before(x), x)


def twice_equal(module: nn.Module, *inputs) -> bool:
    first, second = module(*inputs), module(*inputs)
    first = first[0] if isinstance(first, tuple) else first
    second = second[0] if isinstance(second, tuple) else second
    return torch.equal(first, second)


def without_dropout_settings(module: nn.Module) -> nn.Module:
    """A copy of `module` whose own dropout settings are all zero (the reference output)."""
    twin = copy.deepcopy(module)
    for sub in twin.modules():
        if isinstance(sub, nn.modules.dropout._DropoutNd):
            sub.p = 0.0
        if isinstance(sub, (nn.MultiheadAttention, nn.RNNBase)):
            sub.dropout = 0.0
    return twin


@pytest.mark.parametrize("need_weights", [True, False])
def test_multihead_attention(removed, need_weights):
    attention = nn.MultiheadAttention(16, 4, dropout=0.5, batch_first=True).train()
    x = sample(2, 5, 16)
    out = attention(x, x, x, need_weights=need_weights)[0]
    assert twice_equal(lambda q: attention(q, q, q, need_weights=need_weights), x)
    reference = without_dropout_settings(attention)
    assert torch.equal(out, reference(x, x, x, need_weights=need_weights)[0])


def test_multihead_attention_draws_without_removal():
    attention = nn.MultiheadAttention(16, 4, dropout=0.5, batch_first=True).train()
    x = sample(2, 5, 16)
    assert not twice_equal(lambda q: attention(q, q, q), x)


@pytest.mark.parametrize(
    "make",
    [
        lambda: nn.TransformerEncoderLayer(16, 4, 32, dropout=0.5, batch_first=True),
        lambda: nn.TransformerDecoderLayer(16, 4, 32, dropout=0.5, batch_first=True),
        lambda: nn.Transformer(16, 4, 1, 1, 32, dropout=0.5, batch_first=True),
    ],
    ids=["encoder-layer", "decoder-layer", "transformer"],
)
def test_transformers_are_deterministic_and_match_zero_dropout(make):
    model = make().train()
    x = sample(2, 5, 16)
    inputs = (x,) if isinstance(model, nn.TransformerEncoderLayer) else (x, x)
    assert not twice_equal(model, *inputs)
    reference = without_dropout_settings(model)
    with no_dropout():
        assert twice_equal(model, *inputs)
        assert torch.equal(model(*inputs), reference(*inputs))


@pytest.mark.parametrize(
    ("attention", "is_causal"),
    [
        (lambda q: F.scaled_dot_product_attention(q, q, q, None, 0.5), False),
        (lambda q: F.scaled_dot_product_attention(q, q, q, dropout_p=0.5), False),
        (lambda q: bound_sdpa(q, q, q, dropout_p=0.5, is_causal=True), True),
    ],
    ids=["positional", "keyword", "bound-name"],
)
def test_scaled_dot_product_attention(removed, attention, is_causal):
    q = sample(2, 4, 5, 8)
    assert torch.equal(attention(q), F.scaled_dot_product_attention(q, q, q, is_causal=is_causal))


def test_scaled_dot_product_attention_draws_without_removal():
    q = sample(2, 4, 5, 8)
    assert not torch.equal(bound_sdpa(q, q, q, dropout_p=0.5), bound_sdpa(q, q, q))


@pytest.mark.parametrize("rnn_class", [nn.LSTM, nn.GRU, nn.RNN])
def test_recurrent_inter_layer_dropout(removed, rnn_class):
    rnn = rnn_class(6, 6, num_layers=3, dropout=0.5).train()
    x = sample(5, 2, 6)
    assert twice_equal(rnn, x)
    assert torch.equal(rnn(x)[0], without_dropout_settings(rnn)(x)[0])
    packed = pack_padded_sequence(x, torch.tensor([5, 3]))
    assert torch.equal(rnn(packed)[0].data, rnn(packed)[0].data)


def test_small_model_with_every_kind_is_deterministic_without_reseeding():
    model = nn.Sequential(nn.Linear(16, 16), nn.Dropout(0.3), nn.AlphaDropout(0.2),
                          nn.TransformerEncoderLayer(16, 4, 32, dropout=0.4, batch_first=True)).train()
    x = sample(2, 5, 16)
    with no_dropout():
        assert twice_equal(model, x)
    assert not twice_equal(model, x)


# A library module imported before any removal, as timm.layers.drop is (its DropPath calls its drop_path).
STOCHASTIC_DEPTH_SOURCE = """
import torch.nn as nn


def drop_path(x, drop_prob: float = 0.0, training: bool = False, scale_by_keep: bool = True):
    if drop_prob == 0.0 or not training:
        return x
    keep_prob = 1 - drop_prob
    random_tensor = x.new_empty((x.shape[0],) + (1,) * (x.ndim - 1)).bernoulli_(keep_prob)
    return x * random_tensor.div_(keep_prob) if scale_by_keep else x * random_tensor


class DropPath(nn.Module):
    def __init__(self, drop_prob=0.0):
        super().__init__()
        self.drop_prob = drop_prob

    def forward(self, x):
        return drop_path(x, self.drop_prob, self.training)
"""


@pytest.fixture
def stochastic_depth_library(monkeypatch):
    module = types.ModuleType("stochastic_depth_library")
    exec(compile(STOCHASTIC_DEPTH_SOURCE, "stochastic_depth_library.py", "exec"), vars(module))
    monkeypatch.setitem(sys.modules, module.__name__, module)
    return module


def test_stochastic_depth_by_library_and_own_copies_is_identity(stochastic_depth_library):
    library, x = stochastic_depth_library, sample(64, 3)
    bound_drop_path, before = library.drop_path, library.DropPath(0.5).train()
    assert not torch.equal(before(x), x)
    with no_dropout():

        class StochasticDepth(nn.Module):  # defined after the call, drawing inline (DeiT's and ConvNeXt's copies)
            def __init__(self, p):
                super().__init__()
                self.p = p

            def forward(self, x):
                keep = 1 - self.p
                return x.div(keep) * (keep + torch.rand((x.shape[0], 1))).floor_()

        class NpuDropPath(nn.Module):  # Ascend ModelZoo's, by its name's suffix
            def forward(self, x):
                return x * (torch.rand((x.shape[0], 1)) > 0.5)

        for module in (before, library.DropPath(0.9).train(), StochasticDepth(0.5).train(), NpuDropPath().train()):
            assert module(x) is x
        assert library.drop_path(x, 0.5, True) is x
        assert library.drop_path(x=x, drop_prob=0.5, training=True) is x
        assert bound_drop_path(x, 0.5, True) is not x, "a name bound by code not imported as a module is left"
    assert not torch.equal(before(x), x) and not torch.equal(StochasticDepth(0.5).train()(x), x)
    assert library.drop_path is bound_drop_path and "__init_subclass__" not in vars(nn.Module)


def test_restore_puts_everything_back():
    original = ORIGINALS["sdpa"]
    remove_dropout()
    remove_dropout()  # idempotent
    try:
        assert F.scaled_dot_product_attention is not original
        assert globals()["bound_sdpa"] is not original
    finally:
        restore_dropout()
    assert F.scaled_dot_product_attention is original and torch._C._nn.scaled_dot_product_attention is original
    assert globals()["bound_sdpa"] is original
    assert torch.dropout is torch._C._VariableFunctions.dropout
    assert "dropout" not in vars(torch._VF)
    x = sample(1000)
    assert not torch.equal(F.dropout(x, 0.5, True), x)


def test_names_bound_while_removed_pass_through_after_restore():
    with no_dropout():
        from torch import dropout as late_bound
    x = sample(1000)
    assert not torch.equal(late_bound(x, 0.5, True), x)


def test_no_dropout_keeps_an_outer_removal():
    remove_dropout()
    try:
        with no_dropout():
            pass
        x = sample(100)
        assert torch.equal(F.dropout(x, 0.5, True), x)
    finally:
        restore_dropout()



def _capture_with_removal(tmp_path, capture_first: bool) -> dict:
    """PrecisionDebugger's API wrappers (installed by start()) and dropout removal in either order, both
    undone in reverse order; returns the step's records."""
    x, q = sample(4, 8, 6), sample(2, 4, 5, 8)
    debugger = PrecisionDebugger(dump_path=str(tmp_path / "dump"), level="L1")
    steps = [debugger.start, remove_dropout] if capture_first else [remove_dropout, debugger.start]
    undo = [restore_dropout, api_wrap.uninstall] if capture_first else [api_wrap.uninstall, restore_dropout]
    try:
        for step in steps:
            step()
        assert torch.equal(torch.dropout(x, 0.5, True), x)
        assert torch.equal(F.scaled_dot_product_attention(q, q, q, dropout_p=0.5),
                           F.scaled_dot_product_attention(q, q, q))
        assert torch.equal(F.dropout(x, 0.5, True), x)
        debugger.stop()
    finally:
        for step in undo:
            step()
    debugger.close()
    return json.loads((tmp_path / "dump" / "step0" / "rank0" / "dump.json").read_text())["data"]


@pytest.mark.parametrize("capture_first", [True, False], ids=["capture-first", "removal-first"])
def test_removal_sees_through_capture_wrappers_in_either_order(tmp_path, capture_first):
    data = _capture_with_removal(tmp_path, capture_first)
    # recorded either way: the probability the call ran with when removal wraps capture's wrapper, the
    # caller's when capture wraps the dropout-free function
    probability = 0.0 if capture_first else 0.5
    assert data["Torch.dropout.0.forward"]["input_args"][1] == {"type": "float", "value": probability}
    assert "Functional.scaled_dot_product_attention.0.forward" in data
    assert torch.dropout is torch._C._VariableFunctions.dropout  # everything is put back
    assert F.scaled_dot_product_attention is ORIGINALS["sdpa"] and globals()["bound_sdpa"] is ORIGINALS["sdpa"]
    x = sample(1000)
    assert not torch.equal(torch.dropout(x, 0.5, True), x)


class RecordingNpuOp:
    """Stands in for one of torch_npu's dropout builtins: records the arguments it is called with."""

    def __init__(self) -> None:
        self.calls: list[tuple[tuple, dict]] = []

    def __call__(self, *args, **kwargs):
        self.calls.append((args, kwargs))
        return args[0]


def recording_torch_npu_stand_in() -> types.ModuleType:
    """A stand-in for torch_npu (which cannot run without Ascend hardware): its dropout entry points record
    their calls. `nn.DropoutWithByteMask` and torch_npu.contrib's function look `dropout_with_byte_mask` up on
    the module at call time, as the first call below does."""
    module = types.ModuleType("torch_npu")
    for name in ("dropout_with_byte_mask", "_npu_dropout", "npu_dropout_with_add_softmax", "npu_fusion_attention",
                 "npu_flash_attention", "npu_dropout_gen_mask", "npu_fusion_attention_v2", "npu_fusion_attention_grad",
                 "npu_fusion_attention_grad_v2"):
        setattr(module, name, RecordingNpuOp())
    return module


def test_torch_npu_dropouts_pass_no_dropout(monkeypatch):
    stand_in = recording_torch_npu_stand_in()
    monkeypatch.setitem(sys.modules, "torch_npu", stand_in)
    x = sample(4)
    user = types.ModuleType("user_model")  # `from torch_npu import npu_fusion_attention` in model code
    user.npu_fusion_attention = stand_in.npu_fusion_attention
    monkeypatch.setitem(sys.modules, "user_model", user)
    ops = {name: getattr(stand_in, name) for name in vars(stand_in) if not name.startswith("__")}
    with no_dropout():
        sys.modules["torch_npu"].dropout_with_byte_mask(x, 0.1, True)
        stand_in._npu_dropout(x, p=0.3)
        stand_in.npu_dropout_with_add_softmax(x, x, 0.125, 0.1, -1)
        user.npu_fusion_attention(x, x, x, 8, "BNSD", keep_prob=0.9)
        stand_in.npu_fusion_attention(x, x, x, 8, "BNSD", None, None, None, 1.0, 0.9)
        stand_in.npu_dropout_gen_mask(x.shape, p=0.1)
        stand_in.npu_flash_attention(x, x, x, 8, pse=None, atten_mask=x, scale=0.1, keep_prob=0.9, input_layout="SBH")
        stand_in.npu_flash_attention(x, x, x, 8, "BNSD", None, None, None, 1.0, 0.9)
    assert ops["dropout_with_byte_mask"].calls[0][0][1:] == (0.0, True)
    assert ops["npu_dropout_gen_mask"].calls[0][1] == {"p": 0.0}
    assert ops["_npu_dropout"].calls[0][1] == {"p": 0.0}
    assert ops["npu_dropout_with_add_softmax"].calls[0][0][3] == 0.0
    assert [call[1].get("keep_prob", call[0][9] if len(call[0]) > 9 else None)
            for call in ops["npu_fusion_attention"].calls] == [1.0, 1.0]
    assert ops["npu_flash_attention"].calls[0][1]["keep_prob"] == 1.0 == ops["npu_flash_attention"].calls[1][0][9]
    assert all(getattr(stand_in, name) is op for name, op in ops.items()), "restored on the way out"
    stand_in.npu_fusion_attention(x, x, x, 8, "BNSD", keep_prob=0.9)
    assert ops["npu_fusion_attention"].calls[-1][1] == {"keep_prob": 0.9}


def test_torch_npu_v2_attention_and_backwards_keep_everything(monkeypatch):
    """`npu_fusion_attention_v2` and the `_grad` functions take keep_prob by keyword only (after `*`): a forward
    keeps everything, and a backward called by hand (ring attention) replays no mask."""
    stand_in = recording_torch_npu_stand_in()
    monkeypatch.setitem(sys.modules, "torch_npu", stand_in)
    x = sample(4)
    names = ("npu_fusion_attention_v2", "npu_fusion_attention_grad", "npu_fusion_attention_grad_v2")
    ops = {name: getattr(stand_in, name) for name in names}
    with no_dropout():
        stand_in.npu_fusion_attention_v2(x, x, x, 8, "BNSD", scale=0.1, keep_prob=0.9)
        stand_in.npu_fusion_attention_v2(x, x, x, 8, "BNSD", None)  # positional: not keep_prob, left alone
        stand_in.npu_fusion_attention_grad(x, x, x, x, 8, "BNSD", keep_prob=0.9)
        stand_in.npu_fusion_attention_grad_v2(x, x, x, x, 8, "BNSD", keep_prob=0.9)
    assert [call[1] for call in ops["npu_fusion_attention_v2"].calls] == [{"scale": 0.1, "keep_prob": 1.0}, {}]
    assert ops["npu_fusion_attention_v2"].calls[1][0][5:] == (None,)
    assert ops["npu_fusion_attention_grad"].calls[0][1] == {"keep_prob": 1.0}
    assert ops["npu_fusion_attention_grad_v2"].calls[0][1] == {"keep_prob": 1.0}
    assert all(getattr(stand_in, name) is op for name, op in ops.items()), "restored on the way out"


def mindspeed_fusion_attention_stand_in() -> tuple[types.ModuleType, list]:
    """A stand-in for `mindspeed.ops.fusion_attention_v2` (MindSpeed needs Ascend hardware): plain functions with
    its keyword-only signatures, recording the keep_prob each call runs with."""
    module = types.ModuleType("mindspeed.ops.fusion_attention_v2")
    kept: list = []

    def npu_fusion_attention(query, key, value, head_num, input_layout, *, scale=1.0, keep_prob=1.0):
        kept.append(("forward", keep_prob))
        return query

    def npu_fusion_attention_grad(query, key, value, grad_outputs, head_num, input_layout, *, keep_prob=1.0):
        kept.append(("backward", keep_prob))
        return query

    module.npu_fusion_attention = npu_fusion_attention
    module.npu_fusion_attention_grad = npu_fusion_attention_grad
    return module, kept


def test_mindspeed_fusion_attention_keeps_everything_when_imported(monkeypatch):
    stand_in, kept = mindspeed_fusion_attention_stand_in()
    monkeypatch.setitem(sys.modules, "mindspeed.ops.fusion_attention_v2", stand_in)
    ring = types.ModuleType("ring_attention")  # `from mindspeed.ops.fusion_attention_v2 import ...` in model code
    ring.npu_fusion_attention = stand_in.npu_fusion_attention
    ring.npu_fusion_attention_grad = stand_in.npu_fusion_attention_grad
    monkeypatch.setitem(sys.modules, "ring_attention", ring)
    originals = dict(vars(stand_in))
    x = sample(4)
    with no_dropout():
        ring.npu_fusion_attention(x, x, x, 8, "SBH", keep_prob=0.9)
        ring.npu_fusion_attention_grad(x, x, x, x, 8, "SBH", keep_prob=0.9)
        stand_in.npu_fusion_attention(x, x, x, 8, "SBH")  # later `from ... import` binds the wrapper
    assert kept == [("forward", 1.0), ("backward", 1.0), ("forward", 1.0)]
    assert vars(stand_in) == originals and ring.npu_fusion_attention is originals["npu_fusion_attention"]
    ring.npu_fusion_attention(x, x, x, 8, "SBH", keep_prob=0.9)
    assert kept[-1] == ("forward", 0.9)

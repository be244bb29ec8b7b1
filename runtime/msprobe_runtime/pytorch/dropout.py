"""Dropout removal for debugging runs: every PyTorch dropout becomes a no-op (p=0), reversibly.

msprobe replaces three names in torch.nn.functional, so a name bound earlier (`from
torch.nn.functional import dropout`), nn.AlphaDropout, attention dropout and RNN dropout still draw
random masks. Here the removal happens where every path meets:

- the kernels behind torch._VF (`dropout`, `feature_dropout`, `alpha_dropout`,
  `feature_alpha_dropout`, their in-place forms, and the RNN kernels' inter-layer `dropout`): every
  Python dropout in torch.nn.functional calls them at call time, so F.dropout/dropout1d/2d/3d,
  F.alpha_dropout, F.feature_alpha_dropout, the nn.Dropout* modules (old and new) and
  nn.MultiheadAttention's weights dropout all pass p=0, however their names were bound;
- the builtins that can be called directly (`torch.dropout`, `torch.native_dropout`, ...,
  `scaled_dot_product_attention`): every module-level binding of them in sys.modules is rebound to a
  wrapper that passes p=0 (this covers torch, torch.nn.functional, MultiheadAttention's fast attention
  and `from ... import` bindings made before the call).

Bindings that are Python wrappers of those builtins (found through `__wrapped__`, as functools.wraps
sets it: PrecisionDebugger's API wrappers, installed by its first `start()`) are wrapped in turn, so the
order of `start()` and `seed_all(rm_dropout=True)` does not matter and the capture still records the
call (with probability 0).

On Ascend, torch_npu's dropouts are covered the same way once torch_npu is imported (seed_all imports it):
`dropout_with_byte_mask` (behind `nn.DropoutWithByteMask` and torch_npu.contrib's function),
`_npu_dropout`, `npu_dropout_with_add_softmax`, `npu_dropout_gen_mask` (probability 0), and
`npu_fusion_attention` (and its older name `npu_flash_attention`), `npu_fusion_attention_v2` and their `_grad`
functions (keep_prob 1: a backward
called by hand, as ring attention does, then replays no mask its forward did not apply). So are MindSpeed's
`npu_fusion_attention` and `npu_fusion_attention_grad` (mindspeed.ops.fusion_attention_v2, MindSpeed-LLM's
ring attention) when that module is imported before the removal: it is never imported here, as importing
`mindspeed` applies MindSpeed's patches to Megatron in some versions.

Stochastic depth, which drops whole residual branches at random, is removed too, by name (see
core.stochastic_depth): the `forward` of `DropPath`, `StochasticDepth` and `DropBlock2d` modules (timm's,
torchvision's, and model code's own copies, including classes defined after the call) returns its input,
and module-level `drop_path`/`stochastic_depth` functions return theirs.

Not reachable: TorchScript-compiled code and builtins held elsewhere than in a module's globals.
Wrappers pass their arguments through untouched once `restore_dropout()` has run.
"""

from __future__ import annotations

import contextlib
import functools
import sys
import types

import torch

from msprobe_runtime.core.stochastic_depth import (
    is_stochastic_depth_function,
    module_namespaces,
    returning_input,
    stochastic_depth_classes,
    watch_subclasses,
)

_VARIABLE_FUNCTIONS = torch._C._VariableFunctions
_DROPOUT_KERNELS = (
    "dropout", "dropout_", "feature_dropout", "feature_dropout_", "alpha_dropout", "alpha_dropout_",
    "feature_alpha_dropout", "feature_alpha_dropout_", "native_dropout",
)
_RNN_KERNELS = ("lstm", "gru", "rnn_tanh", "rnn_relu")


def _rnn_dropout_position(args: tuple) -> int:
    """RNN kernels take (input, hx, params, has_biases, layers, dropout, ...) or, for packed
    sequences, (data, batch_sizes, hx, params, has_biases, layers, dropout, ...)."""
    return 5 if len(args) > 3 and isinstance(args[3], bool) else 6


# (object holding the original, name, position of the dropout probability, its keyword)
_TARGETS = (
    *((_VARIABLE_FUNCTIONS, name, 1, "p") for name in _DROPOUT_KERNELS),
    *((_VARIABLE_FUNCTIONS, name, _rnn_dropout_position, "dropout") for name in _RNN_KERNELS),
    (torch._C._nn, "scaled_dot_product_attention", 4, "dropout_p"),
)
# Ascend libraries' dropouts, looked up in modules already imported: module -> {name: (position, keyword, value
# without dropout)}, position None for a keyword-only argument. `dropout_with_byte_mask` is what
# `nn.DropoutWithByteMask` and the contrib function call at call time; fused attention takes the probability to
# keep, and so does its backward, which must replay the forward's (absent) mask.
_KEEP_ALL = (None, "keep_prob", 1.0)
_LIBRARY_TARGETS = {
    "torch_npu": {
        "dropout_with_byte_mask": (1, "p", 0.0), "_npu_dropout": (1, "p", 0.0),
        "npu_dropout_with_add_softmax": (3, "prob", 0.0), "npu_fusion_attention": (9, "keep_prob", 1.0),
        "npu_flash_attention": (9, "keep_prob", 1.0),  # its older name (ModelZoo's ChatGLM2), same arguments
        "npu_dropout_gen_mask": (1, "p", 0.0),  # a mask drawn ahead for `npu_dropout_do_mask` (ModelZoo's GPT-2)
        "npu_fusion_attention_v2": _KEEP_ALL, "npu_fusion_attention_grad": _KEEP_ALL,
        "npu_fusion_attention_grad_v2": _KEEP_ALL,
    },
    "mindspeed.ops.fusion_attention_v2": {"npu_fusion_attention": _KEEP_ALL, "npu_fusion_attention_grad": _KEEP_ALL},
}


_WRAPPER_DEPTH = 8  # wrappers of wrappers followed through __wrapped__


class _State:
    active = False
    targets: dict[int, tuple[object, object, str, float]] = {}  # id(builtin) -> (builtin, position, keyword, value)
    covered: dict[str, types.ModuleType] = {}  # library modules whose dropouts are among the targets
    wrappers: dict[int, tuple[object, object]] = {}  # id(function) -> (function, its dropout-free wrapper)
    ours: set[int] = set()  # ids of the dropout-free wrappers
    rebound: list[tuple[dict, str, object, object]] = []  # (namespace, name, previous value, wrapper)
    classes: list[tuple[type, object, object]] = []  # stochastic depth modules: (class, its forward, wrapper)
    unwatch = None  # stops covering stochastic depth classes defined from now on


def _without_dropout(original, position, keyword: str, value: float):
    """A wrapper of `original` that passes `value` (probability 0) as its dropout argument while removal is
    active."""

    @functools.wraps(original)
    def dropout_free(*args, **kwargs):
        if _State.active:
            if keyword in kwargs:
                kwargs[keyword] = value
            elif position is not None:
                index = position(args) if callable(position) else position
                if len(args) > index:
                    args = (*args[:index], value, *args[index + 1 :])
        return original(*args, **kwargs)

    return dropout_free


def _targets() -> dict[int, tuple[object, object, str, float]]:
    if not _State.targets:
        for owner, name, position, keyword in _TARGETS:
            original = getattr(owner, name)
            _State.targets[id(original)] = (original, position, keyword, 0.0)
    for module_name, names in _LIBRARY_TARGETS.items():
        module = sys.modules.get(module_name)
        if isinstance(module, types.ModuleType) and _State.covered.get(module_name) is not module:
            for name, (position, keyword, value) in names.items():
                original = getattr(module, name, None)
                if original is not None:
                    _State.targets[id(original)] = (original, position, keyword, value)
            _State.covered[module_name] = module
    return _State.targets


def _dropout_free(function):
    """The dropout-free wrapper of `function`: a dropout builtin, or a Python function wrapping one
    (through `__wrapped__`); None for anything else. One wrapper per function."""
    found = _State.wrappers.get(id(function))
    if found is not None and found[0] is function:
        return found[1]
    targets, inner = _targets(), function
    for _ in range(_WRAPPER_DEPTH):
        target = targets.get(id(inner))
        if target is not None and target[0] is inner:
            return _wrapped(function, functools.partial(_without_dropout, position=target[1], keyword=target[2],
                                                        value=target[3]))
        if type(inner) is not types.FunctionType or id(inner) in _State.ours:
            return None  # only plain functions are looked into: their getattr has no side effects
        inner = getattr(inner, "__wrapped__", None)
    return None


def _active() -> bool:
    return _State.active


def _wrapped(function, make):
    """`make(function)`, made once per function and kept with it (so neither id is another's later)."""
    found = _State.wrappers.get(id(function))
    if found is not None and found[0] is function:
        return found[1]
    wrapper = make(function)
    _State.wrappers[id(function)] = (function, wrapper)
    _State.ours.add(id(wrapper))
    return wrapper


def _input_returning(name: str, function):
    """The wrapper of a stochastic depth function that returns its input; None for any other."""
    if not is_stochastic_depth_function(name, function) or id(function) in _State.ours:
        return None
    return _wrapped(function, functools.partial(returning_input, active=_active))


def _cover_class(cls: type) -> None:
    """A stochastic depth module class: its own forward returns its input while removal is active."""
    forward = vars(cls).get("forward")
    if forward is None or id(forward) in _State.ours:
        return
    wrapper = _wrapped(forward, functools.partial(returning_input, active=_active, method=True))
    _State.classes.append((cls, forward, wrapper))
    cls.forward = wrapper


def _namespaces():
    yield vars(torch._C._nn)
    yield from module_namespaces()


def remove_dropout() -> None:
    """Make every PyTorch dropout a no-op (probability 0) until restore_dropout(); idempotent."""
    for owner, name, _, _ in _TARGETS:
        if owner is _VARIABLE_FUNCTIONS:
            setattr(torch._VF, name, _dropout_free(getattr(owner, name)))
    targets = _targets()
    for namespace in _namespaces():
        for name, value in list(namespace.items()):
            if type(value) is not types.FunctionType and id(value) not in targets:
                continue
            wrapper = _dropout_free(value) or _input_returning(name, value)
            if wrapper is not None:
                namespace[name] = wrapper
                _State.rebound.append((namespace, name, value, wrapper))
    for cls in stochastic_depth_classes(torch.nn.Module):
        _cover_class(cls)
    if _State.unwatch is None:
        _State.unwatch = watch_subclasses(torch.nn.Module, _cover_class)
    _State.active = True


def restore_dropout() -> None:
    """Undo remove_dropout(): what was bound is back; wrappers bound since then pass through."""
    _State.active = False
    for _, name, _, _ in _TARGETS:
        torch._VF.__dict__.pop(name, None)
    for namespace, name, previous, wrapper in reversed(_State.rebound):
        if namespace.get(name) is wrapper:
            namespace[name] = previous
    _State.rebound.clear()
    for cls, forward, wrapper in reversed(_State.classes):
        if vars(cls).get("forward") is wrapper:
            cls.forward = forward
    _State.classes.clear()
    if _State.unwatch is not None:
        _State.unwatch()
        _State.unwatch = None


@contextlib.contextmanager
def no_dropout():
    """Context manager: every dropout is a no-op inside, as before outside."""
    was_active = _State.active
    remove_dropout()
    try:
        yield
    finally:
        if not was_active:
            restore_dropout()

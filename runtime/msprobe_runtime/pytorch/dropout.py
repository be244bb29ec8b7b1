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

Not reachable: TorchScript-compiled code and builtins held elsewhere than in a module's globals.
Wrappers pass their arguments through untouched once `restore_dropout()` has run.
"""

from __future__ import annotations

import contextlib
import functools
import sys

import torch

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


class _State:
    active = False
    wrappers: dict[int, tuple[object, object]] = {}  # id(original) -> (original, wrapper)
    rebound: list[tuple[dict, str, object]] = []  # (namespace, name, original)


def _without_dropout(original, position, keyword: str):
    """A wrapper of `original` that sets its dropout probability to 0 while removal is active."""

    @functools.wraps(original)
    def dropout_free(*args, **kwargs):
        if _State.active:
            if keyword in kwargs:
                kwargs[keyword] = 0.0
            else:
                index = position(args) if callable(position) else position
                if len(args) > index:
                    args = (*args[:index], 0.0, *args[index + 1 :])
        return original(*args, **kwargs)

    return dropout_free


def _wrappers() -> dict[int, tuple[object, object]]:
    if not _State.wrappers:
        for owner, name, position, keyword in _TARGETS:
            original = getattr(owner, name)
            _State.wrappers[id(original)] = (original, _without_dropout(original, position, keyword))
    return _State.wrappers


def _namespaces():
    yield vars(torch._C._nn)
    for module in list(sys.modules.values()):
        namespace = getattr(module, "__dict__", None)
        if isinstance(namespace, dict):
            yield namespace


def remove_dropout() -> None:
    """Make every PyTorch dropout a no-op (probability 0) until restore_dropout(); idempotent."""
    wrappers = _wrappers()
    for owner, name, _, _ in _TARGETS:
        if owner is _VARIABLE_FUNCTIONS:
            setattr(torch._VF, name, wrappers[id(getattr(owner, name))][1])
    for namespace in _namespaces():
        for name, value in list(namespace.items()):
            found = wrappers.get(id(value))
            if found is not None and found[0] is value:
                namespace[name] = found[1]
                _State.rebound.append((namespace, name, value))
    _State.active = True


def restore_dropout() -> None:
    """Undo remove_dropout(): originals back where they were; wrappers bound since then pass through."""
    _State.active = False
    for _, name, _, _ in _TARGETS:
        torch._VF.__dict__.pop(name, None)
    for namespace, name, original in _State.rebound:
        if namespace.get(name) is _State.wrappers[id(original)][1]:
            namespace[name] = original
    _State.rebound.clear()


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

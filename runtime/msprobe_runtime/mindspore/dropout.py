"""Dropout removal for MindSpore debugging runs: every dropout becomes the identity, reversibly.

msprobe swaps the classes `ops.Dropout`/`nn.Dropout` and the name `nn.functional.dropout` for new ones, so
instances created earlier, `ops.dropout`, `mint.nn.functional.dropout` and names bound by `from ... import`
still draw random masks. Here removal happens where every path meets, at the class level:

- the dropout Cells (`nn.Dropout`, `nn.Dropout1d/2d/3d`, `mint.nn.Dropout`, `mint.nn.Dropout2d`): their
  `construct` returns its input, for instances created before or after, in PyNative and graph mode;
- the dropout primitives (`ops.Dropout`, `ops.Dropout2D`, `ops.Dropout3D`, the one behind
  `mint.nn.functional.dropout`/`mint.nn.Dropout`, and `ops.auto_generate.DropoutExt`, which mindformers'
  parallel-core `Dropout` calls with its own seed and offset): calling one returns its input (and an all-ones
  mask where the primitive returns a mask: a uint8 one of the input's shape for `DropoutExt`). Every functional dropout (`ops.dropout`, `ops.dropout1d/2d/3d`,
  `mint.nn.functional.dropout`, `MultiheadAttention`'s) creates or calls one of them at call time, so
  they are covered however their names were bound. This path is PyNative's: graph mode compiles
  primitives without calling them from Python (dropout *cells* are covered there too).

Stochastic depth, which drops whole residual branches at random, is removed too, by name (see
core.stochastic_depth): the `construct` of `DropPath`, `StochasticDepth` and `DropBlock2d` cells (mindcv's
and model code's own copies, including classes defined after the call) returns its input, and
module-level `drop_path` functions return theirs.
"""

from __future__ import annotations

import contextlib

import mindspore as ms
from mindspore import mint, nn, ops
from mindspore.ops.auto_generate import gen_ops_prim

from msprobe_runtime.core.stochastic_depth import (
    is_stochastic_depth_function,
    module_namespaces,
    stochastic_depth_classes,
    watch_subclasses,
)


def _identity_construct(self, input, *args, **kwargs):  # noqa: A002 - MindSpore's parameter name
    return input


def _first_argument(self, *args, **kwargs):
    """The input, however it is passed (`input=` for the generated primitives, `x=` for `ops.Dropout`)."""
    return args[0] if args else kwargs.get("input", kwargs.get("x"))


def _mask_of(dtype):
    def call(self, *args, **kwargs):
        x = _first_argument(self, *args, **kwargs)
        return x, ops.ones_like(x, dtype=dtype or x.dtype)

    return call


def _input_of(x, *args, **kwargs):
    """What a stochastic depth function (`drop_path(x, drop_prob, training)`) stands for with probability 0; a
    plain function, which graph mode compiles (a wrapper deciding at call time would be compiled once)."""
    return x


_CELLS = tuple(dict.fromkeys(getattr(owner, name) for owner, name in (
    (nn, "Dropout"), (nn, "Dropout1d"), (nn, "Dropout2d"), (nn, "Dropout3d"), (nn, "DropoutExt"),
    (nn, "Dropout2dExt"), (mint.nn, "Dropout"), (mint.nn, "Dropout2d")) if hasattr(owner, name)))
# primitive class -> the __call__ that replaces its own: mask-returning ones return an all-ones mask
_PRIMITIVES = {
    ops.Dropout: _mask_of(None),
    ops.Dropout2D: _mask_of(ms.bool_),
    ops.Dropout3D: _mask_of(ms.bool_),
    gen_ops_prim.DropoutExt: _mask_of(ms.uint8),  # (input, p, seed, offset): mindformers' parallel-core Dropout
    gen_ops_prim.FuncDropoutExt: _first_argument,
    gen_ops_prim.Dropout2dExt: _first_argument,
}


class _State:
    active = False
    saved: list[tuple[type, str, object]] = []  # (class, attribute, its own value before; None if inherited)
    rebound: list[tuple[dict, str, object, object]] = []  # (module namespace, name, previous value, wrapper)
    unwatch = None  # stops covering stochastic depth cells defined from now on


def _replace(owner: type, name: str, value) -> None:
    _State.saved.append((owner, name, vars(owner).get(name)))
    setattr(owner, name, value)


def _cover_cell(cls: type) -> None:
    """A stochastic depth cell class with a construct of its own: it returns its input."""
    if vars(cls).get("construct", _identity_construct) is not _identity_construct:
        _replace(cls, "construct", _identity_construct)


def _remove_stochastic_depth() -> None:
    for cls in stochastic_depth_classes(nn.Cell):
        _cover_cell(cls)
    for namespace in module_namespaces():
        for name, value in list(namespace.items()):
            if is_stochastic_depth_function(name, value):
                namespace[name] = _input_of
                _State.rebound.append((namespace, name, value, _input_of))
    _State.unwatch = watch_subclasses(nn.Cell, _cover_cell)


def remove_dropout() -> None:
    """Make every MindSpore dropout the identity until restore_dropout(); idempotent."""
    if _State.active:
        return
    for cell in _CELLS:
        _replace(cell, "construct", _identity_construct)
    for primitive, call in _PRIMITIVES.items():
        _replace(primitive, "__call__", call)
    _remove_stochastic_depth()
    _State.active = True


def restore_dropout() -> None:
    """Undo remove_dropout()."""
    if _State.unwatch is not None:
        _State.unwatch()
        _State.unwatch = None
    while _State.saved:
        owner, name, original = _State.saved.pop()
        if original is None:
            delattr(owner, name)
        else:
            setattr(owner, name, original)
    while _State.rebound:
        namespace, name, previous, wrapper = _State.rebound.pop()
        if namespace.get(name) is wrapper:
            namespace[name] = previous
    _State.active = False


@contextlib.contextmanager
def no_dropout():
    """Context manager: every dropout is the identity inside, as before outside."""
    was_active = _State.active
    remove_dropout()
    try:
        yield
    finally:
        if not was_active:
            restore_dropout()

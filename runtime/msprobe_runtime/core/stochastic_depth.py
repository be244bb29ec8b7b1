"""Stochastic depth found by name, for `seed_all(rm_dropout=True)` in every framework (framework-free).

Stochastic depth drops a residual branch per sample with a random mask, as dropout drops activations:
timm's `DropPath` and `DropBlock2d`, torchvision's `StochasticDepth`, mindcv's `DropPath`, and the copies
of `DropPath` and `drop_path` that model code keeps (DeiT, ConvNeXt, Swin, MAE, ...; any class named `...DropPath`,
as Ascend ModelZoo's `NpuDropPath`). No framework has
one of its own to patch, so removal finds them by these names: the subclasses of the framework's module
base class, whose forward then returns its input, and the plain functions bound in imported modules,
which then return their first argument (what each does with probability 0). Classes defined later, such
as a training script's own `DropPath` below its `seed_all` call, are found as they are defined
(`watch_subclasses`).
"""

from __future__ import annotations

import functools
import sys
import types
from collections.abc import Callable, Iterator

CLASS_NAMES = frozenset({"DropPath", "StochasticDepth", "DropBlock2d"})
CLASS_SUFFIX = "DropPath"  # Ascend ModelZoo's `NpuDropPath`, which draws its masks on a side stream
FUNCTION_NAMES = frozenset({"drop_path", "stochastic_depth", "drop_block_2d", "drop_block_fast_2d"})


def module_namespaces() -> Iterator[dict]:
    """The globals of every imported module."""
    for module in list(sys.modules.values()):
        namespace = getattr(module, "__dict__", None)
        if isinstance(namespace, dict):
            yield namespace


def stochastic_depth_classes(base: type) -> list[type]:
    """The subclasses of `base` defined so far, at any depth and wherever defined (inside a function too),
    that are named as stochastic depth layers."""
    seen, todo = set(), [base]
    while todo:
        for cls in todo.pop().__subclasses__():
            if cls not in seen:
                seen.add(cls)
                todo.append(cls)
    return [cls for cls in seen if is_stochastic_depth_class(cls.__name__)]


def is_stochastic_depth_class(name: str) -> bool:
    """Whether a module class named `name` is a stochastic depth layer (`DropPath`, `NpuDropPath`, ...)."""
    return name in CLASS_NAMES or name.endswith(CLASS_SUFFIX)


def is_stochastic_depth_function(name: str, value) -> bool:
    """Whether `value`, bound as `name`, is a plain function named as a stochastic depth function."""
    return type(value) is types.FunctionType and name in FUNCTION_NAMES and value.__code__.co_argcount > 0


def returning_input(function: Callable, active: Callable[[], bool], method: bool = False) -> Callable:
    """A wrapper of `function` that returns its input (its first argument; a `method`'s first after `self`)
    while `active()`, else calls it."""
    position = int(method)
    name = function.__code__.co_varnames[position]

    @functools.wraps(function)
    def without_stochastic_depth(*args, **kwargs):
        if active():
            return args[position] if len(args) > position else kwargs[name]
        return function(*args, **kwargs)

    return without_stochastic_depth


def watch_subclasses(base: type, found: Callable[[type], None]) -> Callable[[], None]:
    """Call `found(cls)` for each stochastic depth subclass of `base` defined from now on; returns the undo."""

    own = vars(base).get("__init_subclass__")  # neither torch.nn.Module nor mindspore.nn.Cell has one now

    def init_subclass(cls, **kwargs):
        if own is None:
            super(base, cls).__init_subclass__(**kwargs)
        else:
            own.__get__(None, cls)(**kwargs)
        if is_stochastic_depth_class(cls.__name__):
            found(cls)

    base.__init_subclass__ = classmethod(init_subclass)

    def undo() -> None:
        if own is None:
            del base.__init_subclass__
        else:
            base.__init_subclass__ = own

    return undo

"""Pickling objects that hold functions capture's API wrappers replaced.

Pickle stores a function as its module and name, and refuses one that is not what that name finds now:
with `torch.nn.functional.relu` holding a wrapper, a model that kept the original (a Transformer layer's
`activation=F.relu`) cannot be saved. `with_originals` gives a pickle module whose pickler stores those
originals as a path that `pkgutil.resolve_name` finds when loaded (the original, where no wrapper is in
place), so the file needs nothing but the framework to load.

Framework-free: PyTorch's `torch.save` is given such a module while the wrappers are in place.
"""

from __future__ import annotations

import pkgutil
import types
from collections.abc import Iterable


def original_paths(replaced: Iterable[tuple[object, str, object]]) -> dict[int, tuple[object, str]]:
    """id(original) -> (original, "module:attribute path") for each (owner, name, original) replaced on a
    module or a class."""
    paths = {}
    for owner, name, original in replaced:
        if isinstance(owner, types.ModuleType):
            path = f"{owner.__name__}:{name}"
        elif isinstance(owner, type):
            path = f"{owner.__module__}:{owner.__qualname__}.{name}"
        else:
            continue
        paths.setdefault(id(original), (original, path))
    return paths


def with_originals(pickle_module, paths: dict[int, tuple[object, str]]):
    """A copy of `pickle_module` (pickle, dill, ...) whose Pickler stores the originals in `paths` by path."""
    base = pickle_module.Pickler

    class Pickler(base):
        def reducer_override(self, obj):
            found = paths.get(id(obj))
            if found is not None and found[0] is obj:
                return pkgutil.resolve_name, (found[1],)
            inherited = getattr(super(), "reducer_override", None)
            return NotImplemented if inherited is None else inherited(obj)

    module = types.ModuleType(pickle_module.__name__, pickle_module.__doc__)
    module.__dict__.update(vars(pickle_module))
    module.Pickler = Pickler
    return module

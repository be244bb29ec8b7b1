"""The module (cell) that one set of capture hooks serves, held weakly (framework-free).

Hooks travel with a model when it is copied (`copy.deepcopy` for an EMA model) or pickled whole
(`torch.save(model)` checkpoints). A copy keeps no owner, so its hooks record nothing: not under the
original's names, and not in a later session after the checkpoint is loaded.
"""

from __future__ import annotations

import weakref


def _no_owner() -> None:
    """The owner of copied or unpickled hooks: none."""
    return None


class Hooked:
    """Base of what a module's (cell's) hooks need; `owner()` is the module, or None in a copy."""

    __slots__ = ("owner",)

    def __init__(self, owner):
        self.owner = weakref.ref(owner)

    def __getstate__(self) -> dict:
        names = [name for cls in type(self).__mro__ for name in getattr(cls, "__slots__", ())]
        return {name: getattr(self, name) for name in names if name != "owner"}

    def __setstate__(self, state: dict) -> None:
        for name, value in state.items():
            setattr(self, name, value)
        self.owner = _no_owner


def taken(hooked: set[int] | None, module) -> bool:
    """Whether `module` (a submodule or cell) is hooked already through another model; if not, it is counted
    as hooked now. `hooked` None: nothing is tracked."""
    if hooked is None:
        return False
    if id(module) in hooked:
        return True
    hooked.add(id(module))
    return False

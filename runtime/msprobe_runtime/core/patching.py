"""Attributes of modules and classes replaced by capture (API wrappers), and putting them back.

Framework-free: PyTorch's and MindSpore's API wrapping both replace attributes this way.
"""

from __future__ import annotations

import os


class CaptureState:
    """The active capture session (None outside a window) and the outermost-call flag: `depth` is 1 while
    a wrapped call or the session's own work runs, so nested calls are not recorded."""

    session = None
    depth = 0

    def __init__(self):
        if hasattr(os, "register_at_fork"):
            os.register_at_fork(after_in_child=self.leave)

    def leave(self) -> None:
        """In a forked child (a DataLoader worker forked inside the window): not the process whose step is
        captured, so it records nothing."""
        self.session = None
        self.depth = 0


class Patches:
    """Attributes replaced on modules and classes; truthy while any is in place."""

    def __init__(self):
        self._done: list[tuple[object, str, object, object, bool]] = []  # (owner, name, original, value, own)

    def __bool__(self) -> bool:
        return bool(self._done)

    def replace(self, owner, name: str, original, value) -> None:
        """`owner.name = value`, remembering `original` (and whether a class defined the name itself)."""
        self._done.append((owner, name, original, value, isinstance(owner, type) and name in vars(owner)))
        setattr(owner, name, value)

    def replaced(self) -> list[tuple[object, str, object]]:
        """(owner, name, original) of every attribute replaced."""
        return [(owner, name, original) for owner, name, original, _, _ in self._done]

    def restore(self) -> None:
        """Put every original back, latest first, except where someone replaced our value since; an
        attribute a class only inherited is deleted again."""
        while self._done:
            owner, name, original, value, own = self._done.pop()
            if getattr(owner, name, None) is not value:
                continue
            if isinstance(owner, type) and not own:
                delattr(owner, name)
            else:
                setattr(owner, name, original)

"""The gradient hooks on one module's (cell's) direct parameters, kept in step with it (framework-free).

A module's parameters can change after capture hooked it: assigned anew (`module.weight = ...`,
`load_state_dict(assign=True)`) or unfrozen (`requires_grad_(True)`). The forward hook calls `sync` for
each parameter the call used; a parameter not hooked yet gets its hook then, and one it replaces under
the same name is let go.
"""

from __future__ import annotations

from collections.abc import Callable


class ParameterHooks:
    """`register(name, parameter)` puts the framework's gradient hook on a parameter and returns its handle."""

    __slots__ = ("register", "hooked")

    def __init__(self, register: Callable[[str, object], object]):
        self.register = register
        self.hooked: dict[str, tuple] = {}  # name -> (parameter, handle; None while it needs no grad)

    def sync(self, name: str, parameter) -> None:
        """Make sure `parameter`, this module's `name`, has its hook if it requires grad."""
        known = self.hooked.get(name)
        if known is not None and known[0] is parameter and (known[1] is not None or not parameter.requires_grad):
            return
        if known is not None and known[1] is not None:
            known[1].remove()
        self.hooked[name] = (parameter, self.register(name, parameter) if parameter.requires_grad else None)

    def remove(self) -> None:
        """Remove every hook."""
        for _, handle in self.hooked.values():
            if handle is not None:
                handle.remove()
        self.hooked.clear()

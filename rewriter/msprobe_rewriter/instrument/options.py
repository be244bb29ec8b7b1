"""What a run of `msprobe-instrument` does: seed value, switches, target package, selected transforms."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field, replace

TARGETS = {  # --target -> framework -> module the instrumented code imports from
    "runtime": {"pytorch": "msprobe_runtime.pytorch", "mindspore": "msprobe_runtime.mindspore"},
    "msprobe": {"pytorch": "msprobe.pytorch", "mindspore": "msprobe.mindspore"},
}
DEFAULT_CONFIG = "config.json"
# The seeding call an earlier run added (the marker follows it): what it was run with.
ADDED_SEED_ALL = re.compile(r"seed_all\(seed=(?P<seed>[^,]*), mode=(?P<mode>True|False), "
                            r"rm_dropout=(?P<rm_dropout>True|False)\)\s*# msprobe-instrument ")

# The import an earlier run added: the package it targeted.
ADDED_IMPORT = re.compile(r"^from (?P<package>msprobe|msprobe_runtime)\.(?:pytorch|mindspore) import [^#\n]*"
                          r"# msprobe-instrument ", re.MULTILINE)
ADDED_MONITOR = re.compile(r"\.monitor\([^#\n]*# msprobe-instrument ")  # the gradient probe it added
# A line an earlier run changed to `num_workers=0` (`--data strict`): the line before had no such argument.
CHANGED_WORKERS = re.compile(r"\bnum_workers=0\b[^#\n]*# msprobe-instrument \w+(?: \+\d+)? (?:was|raw): (?P<was>.*)")


@dataclass(frozen=True)
class Options:
    """Options shared by every file of one run."""

    seed: int = 1234
    deterministic: bool = False
    remove_dropout: bool = True
    config: str | None = None  # as given on the command line; None: config.json beside the script
    grad_probe: bool = False
    target: str = "runtime"
    data_strict: bool = False
    selected: frozenset[str] = field(default_factory=frozenset)  # transform names; empty: the defaults
    given: frozenset[str] = field(default_factory=frozenset)  # absolute paths of the files this run instruments
    # Options left to their defaults on the command line (`seed`, `deterministic`, `remove_dropout`, `target`,
    # `data_strict`, `grad_probe`): a file instrumented before keeps the values it was instrumented with.
    unset: frozenset[str] = field(default_factory=frozenset)

    def as_instrumented(self, text: str) -> Options:
        """These options, with those left unset taken from what an earlier run added to `text` (so a plain
        re-run or `--check` does not turn `--deterministic`, `--target msprobe`, `--data strict` or
        `--grad-probe` back off)."""
        if not self.unset:
            return self
        changes: dict[str, object] = {}
        package = ADDED_IMPORT.search(text)
        if "target" in self.unset and package is not None:
            changes["target"] = "msprobe" if package["package"] == "msprobe" else "runtime"
        if "data_strict" in self.unset and any("num_workers=0" not in found["was"]
                                               for found in CHANGED_WORKERS.finditer(text)):
            changes["data_strict"] = True
        if "grad_probe" in self.unset and ADDED_MONITOR.search(text):
            changes["grad_probe"] = True
            changes["selected"] = self.selected | {"grad-probe", "debugger"} if self.selected else self.selected
        added = [match.groupdict() for match in ADDED_SEED_ALL.finditer(text)]
        if not added:
            return replace(self, **changes)
        if "deterministic" in self.unset:
            changes["deterministic"] = added[0]["mode"] == "True"
        if "remove_dropout" in self.unset:
            changes["remove_dropout"] = added[0]["rm_dropout"] == "True"
        literal = next((int(found["seed"]) for found in added if found["seed"].isdigit()), None)
        if "seed" in self.unset and literal is not None:
            changes["seed"] = literal
        return replace(self, **changes)

    def module(self, framework: str) -> str:
        """The package the instrumented code imports `seed_all` and `PrecisionDebugger` from."""
        return TARGETS[self.target][framework]

    def config_for(self, script: str) -> tuple[str | None, str]:
        """(relative path or None, absolute path) of the debugger config for `script`.

        A relative result is relative to the script's folder (the generated code resolves it against
        `__file__`, so the script finds its config from any working directory).
        """
        folder = os.path.dirname(os.path.abspath(script))
        if self.config is None:
            return DEFAULT_CONFIG, os.path.join(folder, DEFAULT_CONFIG)
        if os.path.isabs(self.config):
            return None, self.config
        absolute = os.path.abspath(self.config)
        return os.path.relpath(absolute, folder).replace(os.sep, "/"), absolute

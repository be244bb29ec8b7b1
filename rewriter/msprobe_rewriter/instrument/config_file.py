"""The debugger config that `--emit-config` writes beside instrumented scripts, and its removal on `--undo`.

Undo takes away only what the tool wrote: a config whose bytes are still exactly a default one (not
edited since), that no other script in its folder still uses (one still carrying the tool's debugger).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from msprobe_rewriter.instrument.markers import TAG
from msprobe_rewriter.instrument.options import Options

# The default config: statistics of every API at level L1, steps 0 and 1 (with --grad-probe: the gradient
# probe at level L1 for those steps). msprobe's config.json schema.
DEFAULT_CONFIG = {
    "task": "statistics",
    "dump_path": "./msprobe_dump",
    "rank": [],
    "step": [0, 1],
    "level": "L1",
    "statistics": {"scope": [], "list": [], "data_mode": ["all"], "summary_mode": "statistics"},
}
GRAD_PROBE_CONFIG = {
    "task": "grad_probe",
    "dump_path": "./msprobe_dump",
    "rank": [],
    "step": [0, 1],
    "grad_probe": {"grad_level": "L1", "param_list": [], "bounds": [-1, 0, 1]},
}
DEBUGGER = "PrecisionDebugger("


def _text(config: dict) -> str:
    return json.dumps(config, indent=4) + "\n"


def emit(options: Options, script: str) -> tuple[str | None, str | None]:
    """Write the default config for `script` where none exists: (the path written or None, an error or None)."""
    _, path = options.config_for(script)
    if os.path.exists(path):
        return None, None
    try:
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        Path(path).write_text(_text(GRAD_PROBE_CONFIG if options.grad_probe else DEFAULT_CONFIG), encoding="utf-8")
    except OSError as exc:
        return None, f"{path}: cannot write the config: {exc.strerror or exc}"
    return path, None


def uses_debugger(text: str) -> bool:
    """Whether a script's text carries the debugger this tool added."""
    return DEBUGGER in text and TAG in text


def emitted_unused(options: Options, restored: dict[str, str]) -> list[str]:
    """The configs that undoing `restored` ({script path: its text once restored}) leaves to remove: the
    default config of each script, where it is exactly as `emit` wrote it and no script in its folder,
    restored or not, still uses the debugger."""
    candidates = {options.config_for(script)[1] for script in restored}
    unused = []
    for config in sorted(candidates):
        try:
            written = Path(config).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        if written in (_text(DEFAULT_CONFIG), _text(GRAD_PROBE_CONFIG)) and not _still_used(config, restored):
            unused.append(config)
    return unused


def _still_used(config: str, restored: dict[str, str]) -> bool:
    folder = os.path.dirname(config) or "."
    restored_here = {os.path.abspath(path): text for path, text in restored.items()}
    for entry in os.scandir(folder):
        if not entry.name.endswith(".py") or not entry.is_file():
            continue
        text = restored_here.get(os.path.abspath(entry.path))
        if text is None:
            try:
                text = Path(entry.path).read_text(encoding="utf-8", errors="replace")
            except OSError:
                return True  # cannot tell: keep the config
        if uses_debugger(text):
            return True
    return False

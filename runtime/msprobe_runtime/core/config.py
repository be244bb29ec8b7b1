"""msprobe's config.json, parsed and validated into one frozen DebuggerConfig (framework-free).

The schema is MindStudio Probe's: top-level keys (task, dump_path, rank, step, level, ...) plus one
section per task ("statistics", "tensor", "grad_probe", ...). Defaults follow msprobe's bundled
config.json. Every bad value raises ConfigError naming the key and what is allowed; keys msprobe knows
but msprobe-kit does not use are accepted (with a warning when set to a non-default value), so real
msprobe configs load.
"""

from __future__ import annotations

import json
import os
import tempfile
import warnings
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path

TASKS = ("statistics", "tensor", "grad_probe")
LEVELS = ("L0", "L1", "mix")
GRAD_LEVELS = ("L0", "L1", "L2")
DATA_MODES = ("all", "input", "output", "forward", "backward")
SUMMARY_MODES = ("statistics", "md5", "hash")
FRAMEWORKS = ("pytorch", "mindspore")
MAX_SEED = 2**32 - 1
MAX_STEP_OR_RANK = 10**6  # msprobe's STEP_RANK_MAXIMUM_VALUE
BOUND_LIMITS = (-(2**63), 2**63 - 1)  # msprobe: bounds must fit int64

# msprobe tasks and levels we recognise but do not implement: named in the error message.
_MSPROBE_ONLY_TASKS = ("overflow_check", "free_benchmark", "run_ut", "structure", "exception_dump")
_MSPROBE_ONLY_LEVELS = ("L2", "debug")

# Known to msprobe, unused here: key -> msprobe's default (a different value earns a warning).
_IGNORED_TOP = {"enable_dataloader": False, "precision": "low", "acl_config": None}
_IGNORED_SECTION = {
    "statistics": {"tensor_list": [], "device": "host"},
    "tensor": {"file_format": "npy"},
    "grad_probe": {"scope": [], "list": [], "data_mode": ["all"]},
}
_SECTION_KEYS = {
    "statistics": ("scope", "list", "data_mode", "summary_mode"),
    "tensor": ("scope", "list", "data_mode", "summary_mode"),
    "grad_probe": ("grad_level", "param_list", "bounds"),
}
_TOP_KEYS = ("task", "dump_path", "rank", "step", "level", "async_dump", "seed", "is_deterministic")


class ConfigError(ValueError):
    """A config value msprobe-kit cannot accept; the message names the key and the allowed values."""


@dataclass(frozen=True)
class DebuggerConfig:
    """Everything the capture side and the gradient probe need, validated and normalised."""

    task: str = "statistics"
    dump_path: str = "./dump_path"
    rank: tuple[int, ...] = ()
    step: tuple[int, ...] = ()
    level: str = "L1"
    async_dump: bool = False
    seed: int = 1234
    is_deterministic: bool = False
    framework: str = "pytorch"
    scope: tuple[str, ...] = ()
    list: tuple[str, ...] = ()
    data_mode: tuple[str, ...] = ("all",)
    summary_mode: str = "statistics"
    grad_level: str = "L1"
    param_list: tuple[str, ...] = ()
    bounds: tuple[float, ...] = (-1, 0, 1)

    def wants_step(self, step: int) -> bool:
        """True when `step` is to be dumped (an empty step list means every step)."""
        return not self.step or step in self.step

    def steps_done(self, step: int) -> bool:
        """True when the step list is finite and `step` comes after all of it."""
        return bool(self.step) and step > max(self.step)

    def wants_rank(self, rank: int) -> bool:
        """True when `rank` is to be dumped (an empty rank list means every rank)."""
        return not self.rank or rank in self.rank


def load_config(
    config_path: str | os.PathLike | None = None,
    *,
    task: str | None = None,
    dump_path: str | None = None,
    level: str | None = None,
    step: list | tuple | None = None,
    framework: str = "pytorch",
) -> DebuggerConfig:
    """Read msprobe's config.json (or defaults when no path), apply keyword overrides, validate."""
    raw = _read_json(config_path) if config_path is not None else {}
    overrides = {"task": task, "dump_path": dump_path, "level": level, "step": step}
    top = {**raw, **{key: value for key, value in overrides.items() if value is not None}}
    _check_keys(top, _TOP_KEYS + tuple(_IGNORED_TOP) + TASKS + _MSPROBE_ONLY_TASKS, "top-level key", "")
    _warn_ignored(top, _IGNORED_TOP, "")
    chosen = _choice(top.get("task", "statistics"), "task", TASKS, _MSPROBE_ONLY_TASKS)
    section = top.get(chosen, {})
    if not isinstance(section, dict):
        raise ConfigError(f"config key '{chosen}' must be an object (the {chosen} task's settings)")
    where = f"{chosen}."
    _check_keys(section, _SECTION_KEYS[chosen] + tuple(_IGNORED_SECTION[chosen]), "key", where)
    _warn_ignored(section, _IGNORED_SECTION[chosen], where)
    level_value = top.get("level", "L1")
    levels = LEVELS + _MSPROBE_ONLY_LEVELS if chosen == "grad_probe" else LEVELS
    return DebuggerConfig(
        task=chosen,
        dump_path=_dump_path(top.get("dump_path", "./dump_path")),
        rank=_steps_or_ranks(top.get("rank", []), "rank"),
        step=_steps_or_ranks(top.get("step", []), "step"),
        level=_choice(level_value, "level", levels, _MSPROBE_ONLY_LEVELS),
        async_dump=_boolean(top.get("async_dump", False), "async_dump"),
        seed=_seed(top.get("seed", 1234)),
        is_deterministic=_boolean(top.get("is_deterministic", False), "is_deterministic"),
        framework=_choice(framework, "framework", FRAMEWORKS),
        scope=_scope(section.get("scope", []), f"{where}scope"),
        list=_strings(section.get("list", []), f"{where}list"),
        data_mode=_data_mode(section.get("data_mode", ["all"]), f"{where}data_mode"),
        summary_mode=_choice(section.get("summary_mode", "statistics"), f"{where}summary_mode", SUMMARY_MODES),
        grad_level=_choice(section.get("grad_level", "L1"), f"{where}grad_level", GRAD_LEVELS),
        param_list=_strings(section.get("param_list", []), f"{where}param_list"),
        bounds=_bounds(section.get("bounds", [-1, 0, 1]), f"{where}bounds"),
    )


def ensure_writable(path: str | os.PathLike) -> Path:
    """Create `path` as a folder if needed and prove a file can be written there; ConfigError if not."""
    folder = Path(path)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as error:
        raise ConfigError(f"dump_path '{folder}' is not a writable folder: {error.strerror or error}") from None
    return folder


def _read_json(config_path: str | os.PathLike) -> dict:
    try:
        text = Path(config_path).read_text(encoding="utf-8")
    except OSError as error:
        raise ConfigError(f"cannot read config file '{config_path}': {error.strerror or error}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise ConfigError(f"config file '{config_path}' is not valid JSON: {error}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"config file '{config_path}' must hold a JSON object at the top level")
    return data


def _allowed(values) -> str:
    return ", ".join(str(value) for value in values)


def _check_keys(mapping: dict, known: tuple, what: str, where: str) -> None:
    for key in mapping:
        if key not in known:
            raise ConfigError(f"unknown {what} '{where}{key}'; allowed keys: {_allowed(known)}")


def _warn_ignored(mapping: dict, ignored: dict, where: str) -> None:
    for key, default in ignored.items():
        if key in mapping and mapping[key] != default:
            warnings.warn(f"config key '{where}{key}' is not used by msprobe-kit and is ignored", stacklevel=3)


def _choice(value, key: str, allowed: tuple, unsupported: tuple = ()) -> str:
    if value in allowed:
        return value
    if value in unsupported:
        raise ConfigError(f"config key '{key}': '{value}' is an msprobe option msprobe-kit does not support; "
                          f"allowed values: {_allowed(allowed)}")
    raise ConfigError(f"config key '{key}': {value!r} is not allowed; allowed values: {_allowed(allowed)}")


def _boolean(value, key: str) -> bool:
    if not isinstance(value, bool):
        raise ConfigError(f"config key '{key}': {value!r} is not allowed; allowed values: true, false")
    return value


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _seed(value) -> int:
    if not _is_int(value) or not 0 <= value <= MAX_SEED:
        raise ConfigError(f"config key 'seed': {value!r} is not allowed; allowed values: integers 0..{MAX_SEED}")
    return value


def _dump_path(value) -> str:
    if not isinstance(value, (str, os.PathLike)) or not str(value).strip():
        raise ConfigError(f"config key 'dump_path': {value!r} is not allowed; allowed values: a non-empty path")
    return str(value)


def _steps_or_ranks(value, key: str) -> tuple[int, ...]:
    allowed = f"allowed values: a list of integers 0..{MAX_STEP_OR_RANK} and ranges like \"4-6\""
    if not isinstance(value, (list, tuple)):
        raise ConfigError(f"config key '{key}': {value!r} is not allowed; {allowed}")
    numbers: set[int] = set()
    for element in value:
        if _is_int(element) and 0 <= element <= MAX_STEP_OR_RANK:
            numbers.add(element)
            continue
        bounds = element.split("-") if isinstance(element, str) else []
        if len(bounds) != 2 or not all(part.strip().isdigit() for part in bounds):
            raise ConfigError(f"config key '{key}': element {element!r} is not allowed; {allowed}")
        low, high = int(bounds[0]), int(bounds[1])
        if low > high or high > MAX_STEP_OR_RANK:
            raise ConfigError(f"config key '{key}': range {element!r} is not allowed; {allowed}")
        numbers.update(range(low, high + 1))
    return tuple(sorted(numbers))


def _strings(value, key: str) -> tuple[str, ...]:
    if not isinstance(value, (list, tuple)) or not all(isinstance(item, str) for item in value):
        raise ConfigError(f"config key '{key}': {value!r} is not allowed; allowed values: a list of strings")
    return tuple(value)


def _scope(value, key: str) -> tuple[str, ...]:
    names = _strings(value, key)
    if len(names) not in (0, 2):
        raise ConfigError(f"config key '{key}': {value!r} is not allowed; allowed values: [] or two names "
                          f"[first, last] marking a range")
    return names


def _data_mode(value, key: str) -> tuple[str, ...]:
    modes = _strings(value, key)
    for mode in modes:
        _choice(mode, key, DATA_MODES)
    if not modes or ("all" in modes and len(modes) > 1):
        raise ConfigError(f"config key '{key}': {value!r} is not allowed; allowed values: [\"all\"] or a "
                          f"combination of {_allowed(DATA_MODES[1:])}")
    return modes


def _bounds(value, key: str) -> tuple[float, ...]:
    allowed = "allowed values: a strictly ascending list of numbers within the int64 range"
    if not isinstance(value, (list, tuple)) or not value:
        raise ConfigError(f"config key '{key}': {value!r} is not allowed; {allowed}")
    for element in value:
        if not (_is_int(element) or isinstance(element, float)) or not BOUND_LIMITS[0] <= element <= BOUND_LIMITS[1]:
            raise ConfigError(f"config key '{key}': element {element!r} is not allowed; {allowed}")
    if any(low >= high for low, high in pairwise(value)):
        raise ConfigError(f"config key '{key}': {value!r} is not allowed; {allowed}")
    return tuple(value)

"""msprobe config.json parsing: defaults, every field, keyword overrides, bad values, dump_path checks."""

from __future__ import annotations

import dataclasses
import json
import warnings

import pytest
from msprobe_runtime.core.config import ConfigError, DebuggerConfig, ensure_writable, load_config

# msprobe's bundled config.json (debug/accuracy_tools/msprobe/config.json), verbatim in content.
MSPROBE_DEFAULT_CONFIG = {
    "task": "statistics",
    "dump_path": "./dump_path",
    "rank": [],
    "step": [],
    "level": "L1",
    "enable_dataloader": False,
    "async_dump": False,
    "tensor": {"scope": [], "list": [], "data_mode": ["all"], "file_format": "npy"},
    "statistics": {"scope": [], "list": [], "data_mode": ["all"], "summary_mode": "statistics"},
    "overflow_check": {"overflow_nums": 1, "check_mode": "all"},
    "run_ut": {"white_list": [], "black_list": [], "error_data_path": "./"},
    "grad_probe": {"grad_level": "L1", "param_list": [], "bounds": [-1, 0, 1]},
    "free_benchmark": {
        "scope": [], "list": [], "fuzz_device": "npu", "pert_mode": "improve_precision",
        "handler_type": "check", "fuzz_level": "L1", "fuzz_stage": "forward", "if_preheat": False,
        "preheat_step": 15, "max_sample": 20,
    },
}


def write(tmp_path, data) -> str:
    path = tmp_path / "config.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return str(path)


def test_defaults_follow_msprobe_without_a_file():
    config = load_config()
    assert config == DebuggerConfig()
    assert (config.task, config.dump_path, config.level, config.seed) == ("statistics", "./dump_path", "L1", 1234)
    assert (config.rank, config.step, config.data_mode, config.summary_mode) == ((), (), ("all",), "statistics")
    assert (config.grad_level, config.param_list, config.bounds) == ("L1", (), (-1, 0, 1))
    assert (config.async_dump, config.is_deterministic, config.framework) == (False, False, "pytorch")


def test_msprobe_bundled_config_loads_silently(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        config = load_config(write(tmp_path, MSPROBE_DEFAULT_CONFIG))
    assert config == DebuggerConfig()


def test_every_field_is_read(tmp_path):
    data = {
        "task": "tensor", "dump_path": "/tmp/out", "rank": [1, "3-4"], "step": [0, "4-6", 2, 5],
        "level": "mix", "async_dump": True, "seed": 7, "is_deterministic": True,
        "tensor": {"scope": ["Module.a.forward.0", "Module.b.forward.0"], "list": ["relu"],
                   "data_mode": ["forward", "input"], "summary_mode": "md5"},
    }
    config = load_config(write(tmp_path, data))
    assert config.task == "tensor" and config.dump_path == "/tmp/out" and config.level == "mix"
    assert config.rank == (1, 3, 4) and config.step == (0, 2, 4, 5, 6)
    assert config.async_dump and config.is_deterministic and config.seed == 7
    assert config.scope == ("Module.a.forward.0", "Module.b.forward.0") and config.list == ("relu",)
    assert config.data_mode == ("forward", "input") and config.summary_mode == "md5"


def test_grad_probe_section(tmp_path):
    data = {"task": "grad_probe", "grad_probe": {"grad_level": "L2", "param_list": ["fc.weight"], "bounds": [-0.5, 0, 2]}}
    config = load_config(write(tmp_path, data))
    assert (config.task, config.grad_level, config.param_list, config.bounds) == (
        "grad_probe", "L2", ("fc.weight",), (-0.5, 0, 2))


def test_hash_summary_mode(tmp_path):
    assert load_config(write(tmp_path, {"statistics": {"summary_mode": "hash"}})).summary_mode == "hash"


def test_keyword_arguments_override_the_file(tmp_path):
    path = write(tmp_path, {"task": "statistics", "dump_path": "a", "level": "L1", "step": [1],
                            "grad_probe": {"grad_level": "L0"}})
    config = load_config(path, task="grad_probe", dump_path="b", level="L0", step=[2, "5-6"])
    assert (config.task, config.dump_path, config.level, config.step) == ("grad_probe", "b", "L0", (2, 5, 6))
    assert config.grad_level == "L0"  # the section of the overriding task is the one read


def test_wants_step_and_rank():
    everything = DebuggerConfig()
    assert everything.wants_step(0) and everything.wants_step(10**6) and everything.wants_rank(7)
    some = DebuggerConfig(step=(1, 3), rank=(0,))
    assert some.wants_step(3) and not some.wants_step(2)
    assert some.wants_rank(0) and not some.wants_rank(1)


def test_config_is_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        DebuggerConfig().level = "L0"


@pytest.mark.parametrize(
    ("data", "named", "allowed"),
    [
        ({"task": "dump"}, "'task'", "statistics, tensor, grad_probe"),
        ({"task": "overflow_check"}, "'task'", "does not support"),
        ({"level": "L3"}, "'level'", "L0, L1, mix"),
        ({"level": "L2"}, "'level'", "does not support"),
        ({"dump_path": 3}, "'dump_path'", "non-empty path"),
        ({"dump_path": ""}, "'dump_path'", "non-empty path"),
        ({"rank": 0}, "'rank'", "a list of integers"),
        ({"rank": [-1]}, "'rank'", "a list of integers"),
        ({"step": [True]}, "'step'", "a list of integers"),
        ({"step": [1.5]}, "'step'", "a list of integers"),
        ({"step": ["6-4"]}, "'step'", "ranges like"),
        ({"step": ["a-b"]}, "'step'", "ranges like"),
        ({"step": ["1-2-3"]}, "'step'", "ranges like"),
        ({"step": [10**6 + 1]}, "'step'", "0..1000000"),
        ({"async_dump": "yes"}, "'async_dump'", "true, false"),
        ({"is_deterministic": 1}, "'is_deterministic'", "true, false"),
        ({"seed": -1}, "'seed'", "0..4294967295"),
        ({"seed": 2**32}, "'seed'", "0..4294967295"),
        ({"seed": True}, "'seed'", "integers"),
        ({"seed": "1234"}, "'seed'", "integers"),
        ({"statistics": []}, "'statistics'", "must be an object"),
        ({"statistics": {"scope": ["only.one"]}}, "'statistics.scope'", "two names"),
        ({"statistics": {"list": "relu"}}, "'statistics.list'", "a list of strings"),
        ({"statistics": {"list": [1]}}, "'statistics.list'", "a list of strings"),
        ({"statistics": {"data_mode": ["sideways"]}}, "'statistics.data_mode'", "all, input, output"),
        ({"statistics": {"data_mode": ["all", "input"]}}, "'statistics.data_mode'", "combination"),
        ({"statistics": {"data_mode": []}}, "'statistics.data_mode'", "combination"),
        ({"statistics": {"summary_mode": "crc"}}, "'statistics.summary_mode'", "statistics, md5, hash"),
        ({"statistics": {"summary_mode": ["max"]}}, "'statistics.summary_mode'", "statistics, md5, hash"),
        ({"tensor": {"summary_mode": "sha"}, "task": "tensor"}, "'tensor.summary_mode'", "statistics, md5"),
        ({"task": "grad_probe", "grad_probe": {"grad_level": "L3"}}, "'grad_probe.grad_level'", "L0, L1, L2"),
        ({"task": "grad_probe", "grad_probe": {"param_list": "w"}}, "'grad_probe.param_list'", "list of strings"),
        ({"task": "grad_probe", "grad_probe": {"bounds": [1, 0]}}, "'grad_probe.bounds'", "ascending"),
        ({"task": "grad_probe", "grad_probe": {"bounds": [0, 0]}}, "'grad_probe.bounds'", "ascending"),
        ({"task": "grad_probe", "grad_probe": {"bounds": []}}, "'grad_probe.bounds'", "ascending"),
        ({"task": "grad_probe", "grad_probe": {"bounds": [False, 1]}}, "'grad_probe.bounds'", "numbers"),
        ({"task": "grad_probe", "grad_probe": {"bounds": [2**63]}}, "'grad_probe.bounds'", "int64"),
        ({"task": "grad_probe", "grad_probe": {"bounds": "0"}}, "'grad_probe.bounds'", "ascending"),
    ],
)
def test_bad_values_name_the_key_and_the_allowed_values(tmp_path, data, named, allowed):
    with pytest.raises(ConfigError) as caught:
        load_config(write(tmp_path, data))
    assert named in str(caught.value) and allowed in str(caught.value)


def test_unknown_keys_are_rejected_with_the_known_ones(tmp_path):
    with pytest.raises(ConfigError, match=r"unknown top-level key 'levle'; allowed keys: task, dump_path"):
        load_config(write(tmp_path, {"levle": "L0"}))
    with pytest.raises(ConfigError, match=r"unknown key 'statistics.scopes'; allowed keys: scope, list"):
        load_config(write(tmp_path, {"statistics": {"scopes": []}}))


def test_other_tasks_sections_are_not_validated(tmp_path):
    config = load_config(write(tmp_path, {"task": "statistics", "tensor": {"anything": 1}}))
    assert config.task == "statistics"


@pytest.mark.parametrize(
    "data",
    [
        {"enable_dataloader": True},
        {"precision": "high"},
        {"acl_config": "./acl.json"},
        {"statistics": {"tensor_list": ["relu"]}},
        {"task": "tensor", "tensor": {"file_format": "bin"}},
    ],
)
def test_known_but_unused_msprobe_keys_warn(tmp_path, data):
    with pytest.warns(UserWarning, match="not used by msprobe-kit"):
        load_config(write(tmp_path, data))


def test_keyword_overrides_are_validated():
    with pytest.raises(ConfigError, match="'task'"):
        load_config(task="tensors")
    with pytest.raises(ConfigError, match="'level'"):
        load_config(level="L9")
    with pytest.raises(ConfigError, match="'step'"):
        load_config(step=["x"])
    with pytest.raises(ConfigError, match="'framework'.*pytorch, mindspore"):
        load_config(framework="jax")
    assert load_config(framework="mindspore").framework == "mindspore"


def test_grad_probe_accepts_msprobe_levels_it_ignores(tmp_path):
    assert load_config(write(tmp_path, {"task": "grad_probe", "level": "L2"})).task == "grad_probe"


@pytest.mark.parametrize(
    ("content", "message"),
    [("{not json", "not valid JSON"), ("[1, 2]", "JSON object"), (None, "cannot read config file")],
)
def test_unreadable_config_files(tmp_path, content, message):
    path = tmp_path / "config.json"
    if content is not None:
        path.write_text(content, encoding="utf-8")
    with pytest.raises(ConfigError, match=message):
        load_config(path)


def test_ensure_writable_creates_the_folder(tmp_path):
    target = tmp_path / "a" / "b"
    assert ensure_writable(target) == target and target.is_dir()


def test_ensure_writable_rejects_paths_that_cannot_be_folders(tmp_path):
    blocker = tmp_path / "file.txt"
    blocker.write_text("x")
    with pytest.raises(ConfigError, match=r"dump_path '.*file.txt' is not a writable folder"):
        ensure_writable(blocker)
    with pytest.raises(ConfigError, match="is not a writable folder"):
        ensure_writable(blocker / "inside")

"""PrecisionDebugger's API: config handling, errors, ranks, the gradient probe, atomic files, memory."""

from __future__ import annotations

import gc
import multiprocessing
import os
import tracemalloc
import warnings

import pytest
import torch
from capture_support import (
    load_dump,
    make_model,
    restore_torch,  # noqa: F401  (module-scoped autouse fixture)
    train_step,
    write_config,
)
from msprobe_runtime.core.config import ConfigError
from msprobe_runtime.core.debugger import launcher_rank
from msprobe_runtime.core.dump_writer import wait_for_writes
from msprobe_runtime.pytorch import PrecisionDebugger
from msprobe_runtime.pytorch.capture import api_wrap
from msprobe_runtime.pytorch.capture.api_wrap import STATE


def test_unwritable_dump_path_fails_at_construction(tmp_path):
    blocker = tmp_path / "a_file"
    blocker.write_text("")
    with pytest.raises(ConfigError, match="dump_path .* is not a writable folder"):
        PrecisionDebugger(dump_path=str(blocker / "dump"))


def test_bad_config_names_the_key(tmp_path):
    with pytest.raises(ConfigError, match="level"):
        PrecisionDebugger(config_path=write_config(tmp_path, level="L9"))


def test_keyword_arguments_override_the_config(tmp_path):
    debugger = PrecisionDebugger(config_path=write_config(tmp_path), level="mix", step=[2],
                                 dump_path=str(tmp_path / "other"))
    assert (debugger.config.level, debugger.config.step, debugger.config.dump_path) == ("mix", (2,),
                                                                                       str(tmp_path / "other"))


def test_l0_needs_a_model(tmp_path):
    debugger = PrecisionDebugger(config_path=write_config(tmp_path, level="L0"))
    with pytest.raises(ConfigError, match="start\\(model\\)"):
        debugger.start()


def test_start_stop_step_counting_and_idempotence(tmp_path):
    model, optimizer, tokens = make_model()
    debugger = PrecisionDebugger(config_path=write_config(tmp_path, step=[1]))
    debugger.start()
    assert STATE.session is None  # step 0 is not wanted
    debugger.stop()
    debugger.step()
    debugger.start()
    debugger.start()  # idempotent
    train_step(model, optimizer, tokens)
    debugger.step()  # stops, then counts
    assert STATE.session is None and debugger.current_step == 2
    debugger.close()
    assert load_dump(tmp_path, step=1)[0]["data"]


@pytest.mark.parametrize("level", ["L0", "L1", "mix"])
def test_after_the_last_step_training_runs_without_capture(tmp_path, level):
    """Once the config's last step is written, hooks and wrappers go: later steps run plain (and a model
    pickles plainly), and start(), even without the model at L0, does nothing."""
    model, optimizer, tokens = make_model()
    debugger = PrecisionDebugger(config_path=write_config(tmp_path, level=level, step=[0, 1]))
    for step in range(3):
        debugger.start(model if step < 2 else None)
        train_step(model, optimizer, tokens)
        debugger.stop()
        assert api_wrap.installed() == (level != "L0" and step < 2)  # a CPU model at L0 needs none
        debugger.step()
    assert not api_wrap.installed() and STATE.session is None
    assert not any(module._forward_hooks or module._forward_pre_hooks for module in model.modules())
    debugger.close()
    assert load_dump(tmp_path, step=1)[0]["data"] and not (tmp_path / "dump" / "step2").exists()


def test_set_init_step_before_the_last_step_keeps_capturing(tmp_path):
    debugger = PrecisionDebugger(config_path=write_config(tmp_path, step=[5]))
    debugger.set_init_step(5)
    debugger.start()
    assert STATE.session is not None
    debugger.close()


@pytest.mark.parametrize("inside_window", [False, True])
def test_a_model_keeping_a_wrapped_function_saves_and_loads(tmp_path, inside_window):
    """nn.TransformerEncoderLayer keeps activation=F.relu: with F.relu wrapped, plain pickle refuses it
    ("not the same object as torch.nn.functional.relu"); torch.save stores it by its path instead."""
    layer = torch.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0)
    debugger = PrecisionDebugger(config_path=write_config(tmp_path))
    debugger.start(layer)
    layer(torch.ones(3, 2, 8)).sum().backward()
    if not inside_window:
        debugger.stop()
    path = tmp_path / "layer.pt"
    torch.save(layer, path)
    debugger.close()
    assert not api_wrap.installed()
    loaded = torch.load(path, weights_only=False)
    assert loaded.activation is torch.nn.functional.relu
    assert torch.equal(loaded(torch.ones(3, 2, 8)), layer(torch.ones(3, 2, 8)))


def _ranks_in_child(connection) -> None:
    os.environ.pop("RANK", None)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ranks = [launcher_rank("RANK"), launcher_rank("RANK")]
    connection.send((ranks, [str(warning.message) for warning in caught]))


def test_a_child_process_without_a_rank_is_told_once_that_it_shares_rank0(monkeypatch):
    """Hogwild (pytorch/examples mnist_hogwild): processes started by multiprocessing, no process group."""
    monkeypatch.delenv("RANK", raising=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert launcher_rank("RANK") == 0  # the main process: no warning
    context = multiprocessing.get_context("fork")
    receive, send = context.Pipe(duplex=False)
    child = context.Process(target=_ranks_in_child, args=(send,))
    child.start()
    ranks, messages = receive.recv()
    child.join()
    assert ranks == [0, 0] and len(messages) == 1 and "overwrite each other" in messages[0]


def test_rank_filter_skips_this_process(tmp_path):
    debugger = PrecisionDebugger(config_path=write_config(tmp_path, rank=[1]))
    debugger.start()
    torch.neg(torch.ones(2))
    debugger.stop()
    debugger.close()
    assert not (tmp_path / "dump" / "step0").exists()


def test_one_capture_at_a_time(tmp_path):
    first = PrecisionDebugger(config_path=write_config(tmp_path / "a"))
    second = PrecisionDebugger(config_path=write_config(tmp_path / "b"))
    first.start()
    try:
        with pytest.raises(RuntimeError, match="another PrecisionDebugger"):
            second.start()
    finally:
        first.close()


def test_context_manager_stops_on_error(tmp_path):
    debugger = PrecisionDebugger(config_path=write_config(tmp_path))
    with pytest.raises(ValueError), debugger:
        torch.neg(torch.ones(2))
        raise ValueError("boom")
    assert STATE.session is None and debugger.current_step == 1
    debugger.close()  # the files are written in the background: wait for them
    assert "Torch.neg.0.forward" in load_dump(tmp_path)[0]["data"]


def test_async_dump_files_are_complete_after_close(tmp_path):
    debugger = PrecisionDebugger(config_path=write_config(tmp_path, async_dump=True))
    with debugger:
        torch.neg(torch.ones(2))
    debugger.close()
    assert "Torch.neg.0.forward" in load_dump(tmp_path)[0]["data"]


def test_monitor_wires_the_gradient_probe(tmp_path):
    model, optimizer, tokens = make_model()
    debugger = PrecisionDebugger(config_path=write_config(tmp_path, task="grad_probe",
                                                          section={"grad_level": "L1"}))
    debugger.monitor(model)
    for _ in range(2):
        debugger.start(model)  # a no-op for grad_probe, as in msprobe
        train_step(model, optimizer, tokens)
        debugger.stop()
        debugger.step()
    debugger.close()
    assert (tmp_path / "dump" / "rank0" / "grad_summary_1.csv").exists()
    with pytest.raises(ConfigError, match="grad_probe"):
        PrecisionDebugger(config_path=write_config(tmp_path / "s")).monitor(model)


def test_a_failed_write_leaves_earlier_steps_readable(tmp_path):
    debugger = PrecisionDebugger(config_path=write_config(tmp_path))
    with debugger:
        torch.neg(torch.ones(2))
    wait_for_writes()
    step1 = tmp_path / "dump" / "step1" / "rank0"
    (step1 / "dump.json").mkdir(parents=True)  # a folder in the way: step 1's dump.json cannot be written
    with debugger:  # files are written in the background: the failure surfaces at the next wait
        torch.neg(torch.ones(2))
    with pytest.raises(OSError, match="dump.json"):
        debugger.close()
    assert "Torch.neg.0.forward" in load_dump(tmp_path, step=0)[0]["data"]
    assert not list((step1 / "dump.json").iterdir())  # nothing written where dump.json should be
    assert not list(step1.glob("*.tmp")) and not list(step1.glob(".*"))  # no temporary file left


def test_odd_module_names_become_safe_file_names(tmp_path):
    model = torch.nn.Module()
    model.add_module("a/b", torch.nn.Linear(2, 2))
    debugger = PrecisionDebugger(config_path=write_config(tmp_path, task="tensor", level="L0"))
    with debugger.start(model):
        getattr(model, "a/b")(torch.ones(1, 2))
    debugger.close()
    folder = tmp_path / "dump" / "step0" / "rank0" / "dump_tensor_data"
    files = list(folder.iterdir())
    assert files and all(path.parent == folder and "/" not in path.name for path in files)
    assert any(path.name.startswith("Module.a_b.Linear.forward.0") for path in files)


def test_no_memory_growth_across_steps(tmp_path):
    model, optimizer, tokens = make_model()
    debugger = PrecisionDebugger(config_path=write_config(tmp_path, level="mix"))
    before = objects = None
    for step in range(18):
        with debugger.start(model):
            train_step(model, optimizer, tokens)
        if step == 7:  # caches (stacks seen, buffers) are warm by now
            wait_for_writes()  # the step's records are freed once its files are written
            gc.collect()
            tracemalloc.start()
            before, objects = tracemalloc.get_traced_memory()[0], len(gc.get_objects())
    wait_for_writes()
    gc.collect()
    after = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    debugger.close()
    assert after - before < 64 * 1024, after - before
    assert len(gc.get_objects()) - objects < 200


@pytest.mark.parametrize("level", ["L0", "L1", "mix"])
def test_a_step_is_freed_without_the_garbage_collector(tmp_path, level):
    """A finished step leaves no reference cycle: its session and records go as soon as its files are
    written, so steps do not feed the collector thousands of objects to trace (and promote)."""
    model, optimizer, tokens = make_model()
    debugger = PrecisionDebugger(config_path=write_config(tmp_path, level=level))
    with debugger.start(model):
        train_step(model, optimizer, tokens)
    wait_for_writes()
    gc.collect()
    gc.disable()
    try:
        with debugger.start(model):
            train_step(model, optimizer, tokens)
        wait_for_writes()
        assert gc.collect() == 0
    finally:
        gc.enable()
        debugger.close()

"""Capture output follows msprobe 26.x: layout, record names, keys, values, stacks, construct, modes."""

from __future__ import annotations

import copy
import gc
import json
import multiprocessing
import os
import re
import threading
import zlib

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from capture_support import (
    capture,
    load_dump,
    make_model,
    restore_torch,  # noqa: F401  (module-scoped autouse fixture)
    train_step,
    write_config,
)
from msprobe_runtime.pytorch import PrecisionDebugger
from msprobe_runtime.pytorch.capture import api_wrap
from msprobe_runtime.pytorch.capture.session import CaptureSession

TENSOR_KEYS = ["type", "dtype", "shape", "Max", "Min", "Mean", "Norm", "requires_grad"]


def _step(model, optimizer, tokens):
    return lambda: train_step(model, optimizer, tokens)


def test_l1_layout_header_and_names(tmp_path):
    model, optimizer, tokens = make_model()
    dump, stack, construct = capture(tmp_path, _step(model, optimizer, tokens))
    folder = tmp_path / "dump" / "step0" / "rank0"
    assert sorted(p.name for p in folder.iterdir()) == ["construct.json", "dump.json", "stack.json"]
    assert list(dump) == ["task", "level", "framework", "dump_data_dir", "version", "data"]
    assert (dump["task"], dump["level"], dump["framework"], dump["dump_data_dir"]) == ("statistics", "L1", "pytorch",
                                                                                       None)
    names = list(dump["data"])
    for name in ("Functional.embedding.0.forward", "Functional.linear.0.forward", "Functional.linear.0.backward",
                 "Tensor.__add__.0.forward", "Functional.cross_entropy.0.backward", "Tensor.addcdiv_.0.forward"):
        assert name in names
    assert construct == {}
    record = dump["data"]["Functional.linear.0.forward"]
    assert list(record) == ["input_args", "input_kwargs", "output"]
    assert [list(entry) for entry in record["input_args"]] == [TENSOR_KEYS] * 3
    assert list(dump["data"]["Functional.linear.0.backward"]) == ["input", "output"]
    # every forward record has a stack; stacks group names and hold msprobe-style lines
    stacked = {name for names_, _ in stack.values() for name in names_}
    assert stacked == {name for name in names if name.endswith(".forward")}
    assert any("test_capture_format.py" in line for _, lines in stack.values() for line in lines)
    assert all(line.startswith("File ") and ", line " in line and ", in " in line
               for _, lines in stack.values() for line in lines)


def test_values_types_and_outermost_only(tmp_path):
    x = torch.arange(6, dtype=torch.float32).reshape(2, 3)

    def run():
        F.normalize(x, p=2.0, dim=1)  # calls norm, clamp_min, expand_as, div inside: not recorded
        torch.matmul(x, x.t())
        torch.sum(x, dim=0, keepdim=True, dtype=torch.float64)

    dump, _, _ = capture(tmp_path, run)
    data = dump["data"]
    assert [name.rsplit(".", 2)[0] for name in data] == ["Functional.normalize", "Tensor.t", "Torch.matmul",
                                                         "Torch.sum"]
    entry = data["Torch.matmul.0.forward"]["input_args"][0]
    assert entry == {"type": "torch.Tensor", "dtype": "torch.float32", "shape": [2, 3], "Max": 5.0, "Min": 0.0,
                     "Mean": 2.5, "Norm": pytest.approx(float(x.norm())), "requires_grad": False}
    normalize = data["Functional.normalize.0.forward"]
    assert normalize["input_kwargs"] == {"p": {"type": "float", "value": 2.0}, "dim": {"type": "int", "value": 1}}
    summed = data["Torch.sum.0.forward"]
    assert summed["input_kwargs"]["dim"] == {"type": "int", "value": 0}
    assert summed["input_kwargs"]["keepdim"] == {"type": "bool", "value": True}
    assert summed["input_kwargs"]["dtype"] == {"type": "torch.dtype", "value": "torch.float64"}
    assert summed["output"][0]["dtype"] == "torch.float64"


def test_printing_a_tensor_records_nothing(tmp_path):
    x = torch.randn(3, 4)

    def run():
        y = torch.exp(x)
        print(y, f"{y.sum():.3f}", repr(y[0]), f"{y}")  # ~20 internal calls each
        torch.abs(y)

    dump, _, _ = capture(tmp_path, run)
    assert list(dump["data"]) == ["Torch.exp.0.forward", "Tensor.sum.0.forward", "Tensor.__getitem__.0.forward",
                                  "Torch.abs.0.forward"]  # y[0] is the caller's: printing's own indexing is not


def test_indexing_is_recorded_with_tensor_and_numpy_slice_bounds(tmp_path):
    """nanoGPT's get_batch slices with 0-d tensors from torch.randint; numpy ints come from samplers."""
    data = torch.arange(50.0)

    def run():
        start = torch.tensor(7)
        torch.stack([data[start:start + 4], data[np.int64(3):10:2][:4]])

    data_records = capture(tmp_path, run)[0]["data"]
    first, second = (data_records[f"Tensor.__getitem__.{index}.forward"]["input_args"][1] for index in (0, 1))
    assert first["type"] == "slice" and first["value"][2] is None
    assert [bound["Max"] for bound in first["value"][:2]] == [7, 11]
    assert first["value"][0]["type"] == "torch.Tensor" and first["value"][0]["shape"] == []
    assert second == {"type": "slice", "value": [{"type": "int64", "value": 3}, 10, 2]}


def test_l0_modules_parameters_and_construct(tmp_path):
    model, optimizer, tokens = make_model()
    dump, stack, construct = capture(tmp_path, _step(model, optimizer, tokens), model, level="L0")
    data = dump["data"]
    assert not any(name.startswith(("Functional", "Tensor", "Torch")) for name in data)
    fc1 = data["Module.blocks.0.fc1.Linear.forward.0"]
    assert list(fc1) == ["input_args", "input_kwargs", "output", "parameters"]
    assert sorted(fc1["parameters"]) == ["bias", "weight"] and list(fc1["parameters"]["weight"]) == TENSOR_KEYS
    assert data["Module.blocks.0.Block.forward.0"]["parameters"] == {}
    grads = data["Module.blocks.0.fc1.Linear.parameters_grad.0"]
    assert sorted(grads) == ["bias", "weight"] and grads["weight"][0]["shape"] == [4 * 32, 32]
    backward = data["Module.blocks.0.fc1.Linear.backward.0"]
    assert backward["input"][0]["shape"] == [4, 8, 128] and backward["output"][0]["shape"] == [4, 8, 32]
    assert "Module.TinyTransformer.forward.0" not in data and not any(".TinyTransformer." in n for n in data)
    assert construct["Module.blocks.0.fc1.Linear.forward.0"] == "Module.blocks.0.Block.forward.0"
    assert construct["Module.blocks.0.Block.forward.0"] is None
    assert construct["Module.blocks.0.fc1.Linear.backward.0"] == "Module.blocks.0.Block.backward.0"
    assert "Module.emb.Embedding.forward.0" in {n for names, _ in stack.values() for n in names}


def test_l0_model_chunks_are_named_by_their_index_as_in_msprobe(tmp_path):
    chunks = (torch.nn.Sequential(torch.nn.Linear(4, 4)), torch.nn.Sequential(torch.nn.Linear(4, 2)))
    dump, _, _ = capture(tmp_path, lambda: chunks[1](chunks[0](torch.randn(3, 4))), list(chunks), level="L0")
    assert list(dump["data"]) == ["Module.0.0.Linear.forward.0", "Module.1.0.Linear.forward.0"]
    debugger = PrecisionDebugger(config_path=write_config(tmp_path, level="mix"))
    with pytest.raises(TypeError, match=r"takes a torch.nn.Module or a list or tuple of them, not dict"):
        debugger.start({"model": chunks[0]})


def test_l0_a_none_among_the_models_is_a_model_this_run_does_without(tmp_path):
    """`start(model=[unet, text_encoder])` where the text encoder is optional (None): the others are hooked,
    under their own indices."""
    chunks = (None, torch.nn.Sequential(torch.nn.Linear(4, 2)))
    dump, _, _ = capture(tmp_path, lambda: chunks[1](torch.randn(3, 4)), list(chunks), level="L0")
    assert list(dump["data"]) == ["Module.1.0.Linear.forward.0"]


def test_l0_a_module_two_given_models_hold_is_hooked_once(tmp_path):
    """A GAN's generator-loss module holds the discriminator, passed with it: D's modules are recorded once,
    under the name they got first, with one parameters_grad record."""
    discriminator = torch.nn.Sequential(torch.nn.Linear(4, 1))
    generator_loss = torch.nn.Sequential(torch.nn.Linear(4, 4), discriminator)
    dump, _, _ = capture(tmp_path, lambda: generator_loss(torch.randn(3, 4)).sum().backward(),
                         [generator_loss, discriminator], level="L0")
    assert [name for name in dump["data"] if ".forward." in name or ".parameters_grad." in name] == [
        "Module.0.0.Linear.forward.0", "Module.0.1.0.Linear.forward.0", "Module.0.1.Sequential.forward.0",
        "Module.0.1.0.Linear.parameters_grad.0", "Module.0.0.Linear.parameters_grad.0"]


def test_l0_parameters_are_the_ones_each_call_used(tmp_path):
    """Parameters assigned after start(), unfrozen later, or swapped in by torch.func.functional_call."""
    model = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.Linear(2, 1))
    model[1].requires_grad_(False)

    def run():
        torch.func.functional_call(model, {"0.weight": torch.full((2, 2), 7.0)}, (torch.ones(1, 2),))
        model[0].weight = torch.nn.Parameter(torch.full((2, 2), 3.0))  # assigned: its gradients count too
        model[1].requires_grad_(True)  # unfrozen
        model(torch.ones(1, 2)).sum().backward()

    dump, _, _ = capture(tmp_path, run, model, level="L0")
    data = dump["data"]
    assert data["Module.0.Linear.forward.0"]["parameters"]["weight"]["Max"] == 7.0
    assert data["Module.0.Linear.forward.1"]["parameters"]["weight"]["Max"] == 3.0
    assert sorted(data["Module.0.Linear.parameters_grad.0"]) == ["bias", "weight"]
    assert sorted(data["Module.1.Linear.parameters_grad.0"]) == ["bias", "weight"]
    assert data["Module.0.Linear.parameters_grad.0"]["weight"][0]["Max"] == float(model[0].weight.grad.max())


def test_a_module_call_that_raises_leaves_no_parent_behind(tmp_path):
    """A forward that raises (and the user catches) is closed too: later calls are not nested in it."""

    class Picky(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = torch.nn.Linear(4, 4)

        def forward(self, x):
            y = self.fc(x)
            if x.shape[0] == 1:
                raise ValueError("one row")
            return y

    model = torch.nn.Sequential(Picky(), torch.nn.Linear(4, 2))

    def run():
        with pytest.raises(ValueError):
            model(torch.randn(1, 4))
        model(torch.randn(3, 4))

    dump, _, construct = capture(tmp_path, run, model, level="mix")
    assert construct["Module.0.Picky.forward.1"] is None and construct["Module.1.Linear.forward.0"] is None
    assert construct["Module.0.fc.Linear.forward.1"] == "Module.0.Picky.forward.1"
    assert dump["data"]["Module.0.Picky.forward.0"]["output"] == [None]  # the failed call, without a result


def test_l0_skips_torchscript_submodules_with_a_warning(tmp_path):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.jit.script(torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU())),
                                torch.nn.Linear(4, 2), torch.jit.trace(torch.nn.Linear(2, 2), torch.randn(1, 2)))
    with pytest.warns(UserWarning, match=r"2 TorchScript submodule\(s\) cannot be hooked .*: 0, 2$"):
        dump, _, _ = capture(tmp_path, lambda: model(torch.randn(3, 4)).sum().backward(), model, level="L0")
    assert sorted(dump["data"]) == ["Module.1.Linear.backward.0", "Module.1.Linear.forward.0",
                                    "Module.1.Linear.parameters_grad.0"]


def test_l0_backward_is_the_module_own_contribution(tmp_path):
    """A residual input's gradient: the module's backward output holds its own share, not the total."""
    torch.manual_seed(0)
    linear = torch.nn.Linear(4, 4)
    model = torch.nn.ModuleDict({"inner": linear})
    x = torch.randn(3, 4, requires_grad=True)

    def run():
        y = model["inner"](x) + x  # x has two consumers: the module and the residual
        y.sum().backward()

    dump, _, _ = capture(tmp_path, run, model, level="L0")
    own = dump["data"]["Module.inner.Linear.backward.0"]["output"][0]
    expected = torch.ones(3, 4) @ linear.weight.detach()  # d(sum(xW^T + b))/dx through the module only
    assert own["Max"] == pytest.approx(float(expected.max())) and own["Norm"] == pytest.approx(float(expected.norm()))
    assert own["Norm"] != pytest.approx(float(x.grad.norm()))


@pytest.mark.parametrize("level", ["L0", "mix"])
def test_walks_shared_by_nested_calls_give_the_records_of_whole_walks(tmp_path, monkeypatch, level):
    """A module's walk goes on from the edges leaving the calls inside it, walked before: the same backward
    records as walking every node, also where a node made inside a call is reached both through the
    call's output and directly (an intermediate the inner module keeps), where a module returns its
    inner module's output or its input as it is, and where a tensor is taken twice."""

    class Keeps(torch.nn.Module):  # keeps an intermediate, which the caller uses too
        def __init__(self):
            super().__init__()
            self.linear = torch.nn.Linear(4, 4)

        def forward(self, x):
            self.kept = torch.tanh(x) * 3
            return self.linear(self.kept) + x

    class Outer(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.keeps, self.identity, self.last = Keeps(), torch.nn.Identity(), torch.nn.Linear(4, 4)

        def forward(self, x):
            h = self.identity(self.keeps(x))
            return self.last(h * h + self.keeps.kept)  # the kept node, reached both ways; h taken twice

    def records(folder, share: bool):
        if not share:
            original = CaptureSession.__init__

            def without_walks(self, *args, **kwargs):
                original(self, *args, **kwargs)
                self.walks = None

            monkeypatch.setattr(CaptureSession, "__init__", without_walks)
        torch.manual_seed(0)
        model = torch.nn.ModuleDict({"outer": Outer()})
        x = torch.randn(3, 4, requires_grad=True)
        dump, _, _ = capture(folder, lambda: model["outer"](x * 1).sum().backward(), model, level=level)
        monkeypatch.undo()
        return dump["data"]

    shared, whole = records(tmp_path / "shared", True), records(tmp_path / "whole", False)
    assert shared == whole
    outer = shared["Module.outer.Outer.backward.0"]
    assert outer["output"][0] is not None and outer["input"][0] is not None


@pytest.mark.parametrize("reentrant", [False, True])
def test_l0_under_gradient_checkpointing(tmp_path, reentrant):
    """torch.utils.checkpoint recomputes a block's forward in backward: the recomputation is recorded as
    the block's next call. Non-reentrant: PyTorch stops it once the saved tensors are back (so, as in
    msprobe, its output is null) and gradients flow through the first call's nodes, whose index the
    backward records carry; reentrant: the first call ran without grad, so the recomputed one has them."""
    torch.manual_seed(0)
    block = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU(), torch.nn.Linear(4, 4))
    model = torch.nn.ModuleDict({"block": block})
    x = torch.randn(3, 4, requires_grad=True)

    def run():
        torch.utils.checkpoint.checkpoint(model["block"], x, use_reentrant=reentrant).sum().backward()

    dump, _, _ = capture(tmp_path, run, model, level="L0")
    data = dump["data"]
    first, again = data["Module.block.Sequential.forward.0"], data["Module.block.Sequential.forward.1"]
    assert again["input_args"][0]["Norm"] == first["input_args"][0]["Norm"]
    if reentrant:
        assert again["output"][0]["Norm"] == first["output"][0]["Norm"]
    else:
        assert again["output"] == [None]
    index = int(reentrant)
    assert f"Module.block.Sequential.backward.{1 - index}" not in data
    assert data[f"Module.block.Sequential.backward.{index}"]["output"][0]["Norm"] == pytest.approx(float(x.grad.norm()))


@pytest.mark.parametrize("level", ["L0", "mix"])
def test_a_second_backward_pass_gives_the_whole_record(tmp_path, level):
    """Two backward passes through one forward (`retain_graph=True`, as GAN steps do): each backward
    record holds the last pass, gradients in and out alike (msprobe's record is also the last)."""
    torch.manual_seed(0)

    class Scaled(torch.nn.Module):  # several autograd nodes: its record's graph is walked
        def forward(self, x):
            return torch.tanh(x) * 2

    model = torch.nn.Sequential(torch.nn.Tanh(), Scaled())  # Tanh: one node
    x = torch.randn(3, 4, requires_grad=True)
    grads = []

    def run():
        y = model(x)
        for scale in (1.0, 3.0):
            x.grad = None
            (scale * y.sum()).backward(retain_graph=True)
            grads.append(x.grad.clone())

    dump, _, _ = capture(tmp_path, run, model, level=level)
    tanh = dump["data"]["Module.0.Tanh.backward.0"]
    scaled = dump["data"]["Module.1.Scaled.backward.0"]
    assert scaled["input"][0]["Max"] == 3.0 and scaled["input"][0]["Min"] == 3.0
    assert tanh["output"][0]["Norm"] == pytest.approx(float(grads[1].norm()))
    assert tanh["output"][0]["Norm"] != pytest.approx(float(grads[0].norm()))
    if level == "mix":
        api = dump["data"]["Torch.tanh.0.backward"]
        assert api["output"][0]["Norm"] == pytest.approx(float(grads[1].norm()))


def test_a_pass_through_the_gradients_of_an_earlier_pass_leaves_the_record(tmp_path):
    """WGAN-GP's gradient penalty: `autograd.grad(create_graph=True)`, then a backward through that gradient,
    which reaches the weight through a node made inside the call (`W.t()`) but not the call's output. The
    record keeps the first pass, the one that reached its output, whole; it is not mixed with the second."""
    weight = torch.nn.Parameter(torch.randn(1, 3))
    x = torch.randn(2, 3, requires_grad=True)

    def run():
        y = torch.nn.functional.linear(x, weight)
        gradient, = torch.autograd.grad(y, x, torch.ones_like(y), create_graph=True)
        (gradient.norm(2, dim=1) - 1).pow(2).mean().backward()

    dump, _, _ = capture(tmp_path, run)
    record = dump["data"]["Functional.linear.0.backward"]
    assert record["input"][0]["Max"] == 1.0  # the first pass's ones
    assert record["output"][0]["Norm"] == pytest.approx(float(weight.detach().norm()) * 2 ** 0.5)  # dy/dx rows: W
    assert record["output"][1] is None  # the first pass computed no weight gradient
    assert weight.grad is not None  # the second did


def test_hooks_on_tensors_that_outlive_the_step_are_removed_at_stop(tmp_path):
    """A module returning a parameter (a learned table) or passing a leaf input through (Identity) gets its
    backward `input` from a hook on that tensor, which outlives the step: each step's hook (holding that
    step's records) must go at stop(), or they pile up, one per step."""

    class Table(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.table = torch.nn.Parameter(torch.randn(3, 4))

        def forward(self):
            return self.table

    class Cached(torch.nn.Module):  # returns a tensor computed once, before the steps
        def forward(self):
            return cached

    table, identity, linear = Table(), torch.nn.Identity(), torch.nn.Linear(4, 1)
    model = torch.nn.ModuleDict({"table": table, "identity": identity, "linear": linear, "cached": Cached()})
    x = torch.randn(3, 4, requires_grad=True)
    cached = x * 2
    debugger = PrecisionDebugger(config_path=write_config(tmp_path, level="L0"))
    for _ in range(3):
        with debugger.start(model):
            linear(identity(x) + table() + model["cached"]()).sum().backward(retain_graph=True)
    debugger.close()
    assert not table.table._backward_hooks and not x._backward_hooks
    gc.collect()
    kept = [o for o in gc.get_objects() if type(o) is CaptureSession and str(tmp_path) in str(o.folder)]
    assert not kept  # no hook left anywhere (the cached tensor's node included) holds a step's records
    dump, _, _ = load_dump(tmp_path, step=2)
    assert dump["data"]["Module.table.Table.backward.0"]["input"][0]["shape"] == [3, 4]
    assert dump["data"]["Module.identity.Identity.backward.0"]["input"][0]["shape"] == [3, 4]


def test_stacks_stay_right_when_their_caches_are_cleared(tmp_path, monkeypatch):
    """Stack numbers, code ids and lines are cached across windows and dropped together past a bound."""
    from msprobe_runtime.pytorch.capture import stacks

    monkeypatch.setattr(stacks, "_CACHE_LIMIT", 0)  # every window's end clears them
    model, optimizer, tokens = make_model()
    debugger = PrecisionDebugger(config_path=write_config(tmp_path, level="mix"))
    for _ in range(3):  # the first optimizer step also makes its state: compare the next two
        with debugger.start(model):
            train_step(model, optimizer, tokens)
    debugger.close()
    assert not stacks._codes and not stacks._links
    assert load_dump(tmp_path, step=1)[1] == load_dump(tmp_path, step=2)[1]


def test_other_threads_calls_are_not_recorded(tmp_path):
    """Only the thread that opened the window records (and, on an accelerator, the autograd engine's
    threads during its backward): a logger or checkpoint thread's calls, which would land among the
    training thread's at points that differ from run to run, are left out, and neither its calls nor its
    prints keep the training thread's calls from being recorded."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU(), torch.nn.Linear(8, 1))
    x = torch.randn(4, 8)

    def names(folder, background: bool) -> list:
        stop = threading.Event()

        def other():
            while not stop.is_set():
                repr(torch.arange(3).sum())

        thread = threading.Thread(target=other)
        debugger = PrecisionDebugger(config_path=write_config(folder, level="mix"))
        if background:
            thread.start()
        try:
            with debugger.start(model):
                for _ in range(20):
                    model(x).sum().backward()
        finally:
            stop.set()
            if background:
                thread.join()
            debugger.close()
        return list(load_dump(folder)[0]["data"])

    alone, beside = names(tmp_path / "alone", False), names(tmp_path / "beside", True)
    assert beside == alone and not any("arange" in name for name in beside)


def _collate_in_worker(batch):
    """A DataLoader worker's collate: the stacked batch, and whether the worker saw a capture window."""
    return torch.stack([item[0] for item in batch]), api_wrap.STATE.session is not None


def _capture_one_step(folder) -> None:
    model, optimizer, tokens = make_model()
    debugger = PrecisionDebugger(config_path=write_config(folder))
    with debugger.start(model):
        train_step(model, optimizer, tokens)
    debugger.close()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_forked_processes_record_nothing_and_can_capture_their_own_steps(tmp_path):
    """A DataLoader worker forked inside the window records nothing (it is not the captured process);
    a process forked after a step was written (a fork-started DDP worker, say) captures its own steps:
    the parent's writer thread, which a fork does not copy, is not waited for."""
    context = multiprocessing.get_context("fork")
    data = torch.utils.data.TensorDataset(torch.randn(8, 3))
    model = torch.nn.Sequential(torch.nn.Linear(3, 1))
    debugger = PrecisionDebugger(config_path=write_config(tmp_path / "parent"))
    with debugger.start(model):
        loader = torch.utils.data.DataLoader(data, batch_size=4, num_workers=1, collate_fn=_collate_in_worker,
                                             multiprocessing_context=context)
        seen = [in_window for _, in_window in loader]
    debugger.close()
    assert seen == [False, False]
    child = context.Process(target=_capture_one_step, args=(tmp_path / "child",))
    child.start()
    child.join(120)
    if child.is_alive():  # stuck waiting for a writer thread it does not have
        child.kill()
    assert child.exitcode == 0
    assert "Functional.linear.0.forward" in load_dump(tmp_path / "child")[0]["data"]


def test_copies_of_a_hooked_model_record_nothing(tmp_path):
    """A hooked model copied inside the window (`copy.deepcopy` for an EMA model) or pickled whole
    (`torch.save(model)` checkpoints) carries capture's hooks along; the copies record nothing: not under
    the original's names, and not in a later session after `torch.load`."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU(), torch.nn.Linear(4, 1))
    x = torch.randn(2, 4, requires_grad=True)
    saved = tmp_path / "model.pt"
    debugger = PrecisionDebugger(config_path=write_config(tmp_path / "first", level="L0"))
    with debugger.start(model):
        model(x).sum().backward()
        ema = copy.deepcopy(model)
        ema(x).sum().backward()
        torch.save(model, saved)
    debugger.close()
    names = list(load_dump(tmp_path / "first")[0]["data"])
    assert [name for name in names if name.endswith(".forward.0")] == [
        "Module.0.Linear.forward.0", "Module.1.ReLU.forward.0", "Module.2.Linear.forward.0"]
    assert not any(".forward.1" in name or "parameters_grad.1" in name for name in names)
    loaded = torch.load(saved, weights_only=False)
    other = torch.nn.Sequential(torch.nn.Linear(4, 1))
    debugger = PrecisionDebugger(config_path=write_config(tmp_path / "later", level="L0"))
    with debugger.start(other):
        loaded(x).sum().backward()
        other(x).sum().backward()
    debugger.close()
    assert sorted(load_dump(tmp_path / "later")[0]["data"]) == [
        "Module.0.Linear.backward.0", "Module.0.Linear.forward.0", "Module.0.Linear.parameters_grad.0"]


def _expect_statistics(entry, tensor):
    assert entry["shape"] == list(tensor.shape)
    assert entry["Max"] == pytest.approx(float(tensor.max())) and entry["Norm"] == pytest.approx(float(tensor.norm()))


def test_l1_backward_holds_the_gradients_of_the_call_inputs(tmp_path):
    """Calls that build several autograd nodes (cross_entropy: log_softmax, nll_loss; linear on 3-d input:
    view, matmul, view) record the gradients of their own arguments, in argument order (msprobe records
    those of the last node's inputs)."""
    torch.manual_seed(0)
    x = torch.randn(4, 3, 8, requires_grad=True)
    weight, bias = torch.randn(5, 8, requires_grad=True), torch.randn(5, requires_grad=True)
    target = torch.tensor([0, 1, 2, 3, 4, 0, 1, 2, 3, 4, 0, 1])
    kept = {}

    def run():
        logits = kept["logits"] = F.linear(x, weight, bias).reshape(-1, 5)
        logits.retain_grad()
        F.cross_entropy(logits, target).backward()

    dump, _, _ = capture(tmp_path, run)
    data = dump["data"]
    loss_backward = data["Functional.cross_entropy.0.backward"]
    assert loss_backward["input"][0]["shape"] == [] and loss_backward["input"][0]["Max"] == 1.0
    assert len(loss_backward["output"]) == 1  # the target does not require grad
    _expect_statistics(loss_backward["output"][0], kept["logits"].grad)
    linear_output = data["Functional.linear.0.backward"]["output"]
    for entry, tensor in zip(linear_output, (x, weight, bias), strict=True):
        _expect_statistics(entry, tensor.grad)


def test_l1_backward_of_an_in_place_call_reaches_its_input(tmp_path):
    """An in-place call gives its tensor a new node: the gradient is read where it was before the call."""
    x = torch.randn(3, 4, requires_grad=True)

    def run():
        h = x * 1.0
        h.mul_(3.0)
        h.sum().backward()

    dump, _, _ = capture(tmp_path, run)
    in_place = dump["data"]["Tensor.mul_.0.backward"]
    _expect_statistics(in_place["output"][0], torch.full((3, 4), 3.0))


def test_l1_backward_of_a_tensor_passed_twice_gives_each_place_its_edge(tmp_path):
    """`torch.mul(x, x)` makes one node that takes x twice: each place gets that edge's gradient (g * x);
    a computed tensor (h) and a leaf (x) alike."""
    x = torch.randn(3, 4, requires_grad=True)
    upstream = torch.randn(3, 4)
    kept = {}

    def run():
        h = kept["h"] = x + 1.0
        (torch.mul(x, x) * upstream).sum().backward(retain_graph=True)
        (torch.mul(h, h) * upstream).sum().backward()

    dump, _, _ = capture(tmp_path, run)
    data = dump["data"]
    for name, tensor in (("Torch.mul.0.backward", x), ("Torch.mul.1.backward", kept["h"])):
        output = data[name]["output"]
        assert len(output) == 2
        for entry in output:
            _expect_statistics(entry, upstream * tensor.detach())


def test_mix_records_both_and_nests_apis_in_modules(tmp_path):
    model, optimizer, tokens = make_model()
    dump, _, construct = capture(tmp_path, _step(model, optimizer, tokens), model, level="mix")
    data = dump["data"]
    assert "Functional.linear.0.forward" in data and "Module.blocks.0.fc1.Linear.forward.0" in data
    assert construct["Functional.linear.0.forward"] == "Module.blocks.0.fc1.Linear.forward.0"
    assert construct["Functional.linear.0.backward"] == "Module.blocks.0.fc1.Linear.backward.0"
    assert construct["Tensor.__add__.0.forward"] == "Module.blocks.0.Block.forward.0"


def test_tensor_mode_saves_npy_not_pickles(tmp_path):
    x = torch.randn(3, 4)
    w = torch.randn(5, 4).to(torch.bfloat16)
    dump, _, _ = capture(tmp_path, lambda: (torch.matmul(x, x.t()), w.float()), task="tensor")
    folder = tmp_path / "dump" / "step0" / "rank0"
    assert dump["dump_data_dir"] == str(folder / "dump_tensor_data")
    entry = dump["data"]["Torch.matmul.0.forward"]["input_args"][0]
    assert entry["data_name"] == "Torch.matmul.0.forward.input.0.npy"
    files = sorted(p.name for p in (folder / "dump_tensor_data").iterdir())
    assert files and all(name.endswith(".npy") for name in files)
    saved = np.load(folder / "dump_tensor_data" / entry["data_name"], allow_pickle=False)
    assert np.array_equal(saved, x.numpy())
    output = np.load(folder / "dump_tensor_data" / dump["data"]["Torch.matmul.0.forward"]["output"][0]["data_name"])
    assert np.array_equal(output, (x @ x.t()).numpy())
    bf16 = dump["data"]["Tensor.float.0.forward"]["input_args"][0]
    assert bf16["dtype"] == "torch.bfloat16"
    assert np.array_equal(np.load(folder / "dump_tensor_data" / bf16["data_name"]), w.float().numpy())


def test_md5_is_msprobe_crc32_of_raw_bytes(tmp_path):
    x = torch.randn(4, 5).t()  # non-contiguous: hashed in logical order, as msprobe (contiguous copy)
    dump, _, _ = capture(tmp_path, lambda: torch.exp(x), section={"summary_mode": "md5"})
    entry = dump["data"]["Torch.exp.0.forward"]["input_args"][0]
    assert entry["md5"] == f"{zlib.crc32(x.contiguous().numpy().tobytes()):08x}"
    assert list(entry) == [*TENSOR_KEYS, "md5"]


def test_hash_is_bit_exact(tmp_path):
    x = torch.randn(64)
    y = x.clone()
    z = x.clone()
    z[17] = torch.nextafter(z[17], torch.tensor(10.0))  # one ulp
    dump, _, _ = capture(tmp_path, lambda: (torch.abs(x), torch.abs(y), torch.abs(z)), section={"summary_mode": "hash"})
    hashes = [dump["data"][f"Torch.abs.{i}.forward"]["input_args"][0]["hash"] for i in range(3)]
    assert hashes[0] == hashes[1] != hashes[2] and len(hashes[0]) == 16
    assert dump["data"]["Torch.abs.0.forward"]["input_args"][0]["Max"] == float(x.max())


def test_data_mode_list_and_scope(tmp_path):
    model, optimizer, tokens = make_model()
    dump, _, _ = capture(tmp_path / "a", _step(model, optimizer, tokens), section={"data_mode": ["forward"]})
    assert dump["data"] and all(name.endswith(".forward") for name in dump["data"])
    dump, _, _ = capture(tmp_path / "b", _step(model, optimizer, tokens), section={"data_mode": ["input"]})
    assert all("output" not in record for record in dump["data"].values())
    assert any(name.endswith(".backward") for name in dump["data"])
    dump, _, _ = capture(tmp_path / "c", _step(model, optimizer, tokens), section={"list": ["linear"]})
    assert dump["data"] and all(".linear." in name for name in dump["data"])
    scope = ["Functional.layer_norm.1.forward", "Functional.linear.1.forward"]
    dump, _, _ = capture(tmp_path / "d", _step(model, optimizer, tokens), section={"scope": scope})
    forward = [name for name in dump["data"] if name.endswith(".forward")]
    assert forward[0] == scope[0] and forward[-1] == scope[1]
    assert "Functional.linear.0.backward" in dump["data"] and "Functional.linear.2.backward" not in dump["data"]


def test_steps_config_and_context_manager(tmp_path):
    model, optimizer, tokens = make_model()
    debugger = PrecisionDebugger(config_path=write_config(tmp_path, step=["1-2", 4]))
    for _ in range(5):
        with debugger:
            train_step(model, optimizer, tokens)
    debugger.close()
    assert sorted(p.name for p in (tmp_path / "dump").iterdir()) == ["step1", "step2", "step4"]
    dump, _, _ = load_dump(tmp_path, step=2)
    assert "Functional.linear.0.forward" in dump["data"]


def test_start_stop_and_step_may_be_called_on_the_class_as_in_msprobe(tmp_path):
    """msprobe's start/stop/step are class functions: `PrecisionDebugger.start()` inside a forward, say."""
    model = torch.nn.Sequential(torch.nn.Linear(4, 4))

    class Wrapped(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = model

        def forward(self, x):
            PrecisionDebugger.start(self)
            out = self.inner(x)
            PrecisionDebugger.stop()
            return out

    PrecisionDebugger(config_path=write_config(tmp_path / "earlier"))  # not the latest: not the one used
    debugger = PrecisionDebugger(config_path=write_config(tmp_path, level="mix"))
    wrapped = Wrapped()
    for _ in range(2):
        torch.relu(wrapped(torch.ones(2, 4)))  # the relu is outside the window
        PrecisionDebugger.step()
    debugger.close()
    assert debugger.current_step == 2
    dump, _, _ = load_dump(tmp_path, step=1)
    assert sorted(dump["data"]) == ["Functional.linear.0.forward", "Module.inner.0.Linear.forward.0",
                                    "Module.inner.Sequential.forward.0"]
    assert not any((tmp_path / "earlier" / "dump").iterdir())


def test_class_level_calls_before_any_debugger_say_so(monkeypatch):
    monkeypatch.setattr(PrecisionDebugger, "latest", None)
    with pytest.raises(RuntimeError, match=r"PrecisionDebugger.start\(\) was called before any debugger was made"):
        PrecisionDebugger.start()


def test_files_are_plain_json_even_with_nan(tmp_path):
    x = torch.tensor([1.0, float("nan"), float("inf")])
    dump, _, _ = capture(tmp_path, lambda: torch.abs(x))
    entry = dump["data"]["Torch.abs.0.forward"]["input_args"][0]
    assert np.isnan(entry["Max"]) and np.isnan(entry["Mean"])
    text = (tmp_path / "dump" / "step0" / "rank0" / "dump.json").read_text()
    assert "NaN" in text and json.loads(text)["version"] == 1
    assert not list((tmp_path / "dump" / "step0" / "rank0").glob("*.tmp"))


def test_non_finite_arguments_are_written_as_msprobe_writes_them(tmp_path):
    """NaN and infinities given as arguments (Python floats and NumPy scalars) are
    `NaN`, `Infinity`, `-Infinity` in the file, as Python's json writes them; None stays null."""
    x = torch.tensor([1.0, float("nan"), float("inf")])

    def run():
        torch.nan_to_num(x, nan=float("nan"), posinf=float("inf"), neginf=None)
        torch.clamp(x, min=np.float64("-inf"))

    dump, _, _ = capture(tmp_path, run)
    kwargs = dump["data"]["Torch.nan_to_num.0.forward"]["input_kwargs"]
    assert np.isnan(kwargs["nan"]["value"]) and kwargs["posinf"]["value"] == np.inf and kwargs["neginf"] is None
    assert dump["data"]["Torch.clamp.0.forward"]["input_kwargs"]["min"] == {"type": "float64", "value": -np.inf}
    text = (tmp_path / "dump" / "step0" / "rank0" / "dump.json").read_text()
    for spelling in ("NaN", "Infinity", "-Infinity"):
        assert re.search(f'"value": ?{spelling}[,}}]', text)


def test_set_init_step_numbers_the_steps_of_a_resumed_run(tmp_path):
    """msprobe's set_init_step: after resuming at step 100, step 101 of the config is the second step run."""
    model, optimizer, tokens = make_model()
    debugger = PrecisionDebugger(config_path=write_config(tmp_path, step=[101]))
    PrecisionDebugger.set_init_step(100)
    for _ in range(2):
        with debugger:
            train_step(model, optimizer, tokens)
    debugger.close()
    assert debugger.current_step == 102
    assert sorted(p.name for p in (tmp_path / "dump").iterdir()) == ["step101"]
    for bad in (-1, 1.5, True, "3"):
        with pytest.raises(ValueError, match="set_init_step"):
            debugger.set_init_step(bad)


@pytest.mark.parametrize("reentrant", [None, False, True])
def test_l0_parameter_gradients_once_per_backward_pass(tmp_path, reentrant):
    """Read after each pass: micro-batches accumulating into .grad give one record per pass, holding the
    sum so far; a checkpoint's backward run inside the pass (reentrant) adds no record of its own; after
    close() autograd's own engine is back."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.Tanh(), torch.nn.Linear(4, 1))
    batches = torch.randn(2, 3, 4)
    sums = []

    def run():
        for batch in batches:
            out = model(batch) if reentrant is None else \
                torch.utils.checkpoint.checkpoint(model, batch.requires_grad_(), use_reentrant=reentrant)
            out.sum().backward()
            sums.append(float(model[0].weight.grad.norm()))

    engine = torch.autograd.Variable._execution_engine
    dump, _, _ = capture(tmp_path, run, model, level="L0")
    assert torch.autograd.Variable._execution_engine is engine
    data = dump["data"]
    assert [name for name in data if ".parameters_grad." in name] == [
        "Module.2.Linear.parameters_grad.0", "Module.0.Linear.parameters_grad.0",
        "Module.2.Linear.parameters_grad.1", "Module.0.Linear.parameters_grad.1"]
    assert [data[f"Module.0.Linear.parameters_grad.{i}"]["weight"][0]["Norm"] for i in (0, 1)] == pytest.approx(sums)


def test_l0_parameter_gradients_that_an_optimizer_in_backward_consumes(tmp_path):
    """Someone else's post-accumulate-grad hook (an optimizer run in backward, which steps and drops the
    gradient before the pass ends): each parameter's gradient is read by its own hook, right after its
    accumulation."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.Linear(4, 1))
    optimizers = {p: torch.optim.SGD([p], lr=0.1) for p in model.parameters()}
    norms = {}

    def step_in_backward(parameter):
        norms[parameter] = float(parameter.grad.norm())
        optimizers[parameter].step()
        parameter.grad = None

    for parameter in model.parameters():
        parameter.register_post_accumulate_grad_hook(step_in_backward)
    dump, _, _ = capture(tmp_path, lambda: model(torch.randn(3, 4)).sum().backward(), model, level="L0")
    data = dump["data"]
    assert data["Module.0.Linear.parameters_grad.0"]["weight"][0]["Norm"] == pytest.approx(norms[model[0].weight])
    assert data["Module.1.Linear.parameters_grad.0"]["bias"][0]["Norm"] == pytest.approx(norms[model[1].bias])

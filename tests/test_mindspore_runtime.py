"""msprobe_runtime.mindspore with real MindSpore (CPU, PyNative): seed_all, dropout removal, capture at
L0/L1/mix in every task and summary mode, filters, in-place and optimizer safety, graph mode, the gradient
probe and the Model.train callback. One process, tiny networks: MindSpore's import is the slow part.
"""

from __future__ import annotations

import copy
import csv
import json
import os
import random
import sys
import threading
import types
import warnings

import numpy as np
import pytest

ms = pytest.importorskip("mindspore")
from mindspore import mint, nn, ops  # noqa: E402
from mindspore_support import TinyNet, batch, dump, trainer, write_config  # noqa: E402
from msprobe_runtime.core.compare import compare  # noqa: E402
from msprobe_runtime.core.config import ConfigError  # noqa: E402
from msprobe_runtime.mindspore import MsprobeStep, PrecisionDebugger, seed_all  # noqa: E402
from msprobe_runtime.mindspore.capture.stats import StatBuffer, _hash  # noqa: E402
from msprobe_runtime.mindspore.debugger import GRAPH_MODE_MESSAGE  # noqa: E402
from msprobe_runtime.mindspore.dropout import no_dropout  # noqa: E402

ms.set_context(mode=ms.PYNATIVE_MODE)


def train(tmp_path, steps=1, model=True, **config):
    """Train TinyNet for `steps` steps under a debugger with `config`; returns the network."""
    seed_all(0)
    net = TinyNet()
    grad_fn, optimizer = trainer(net)
    x, y = batch()
    debugger = PrecisionDebugger(config_path=write_config(tmp_path, **config))
    for _ in range(steps):
        debugger.start(model=net if model else None)
        _, grads = grad_fn(x, y)
        optimizer(grads)
        debugger.stop()
        debugger.step()
    debugger.close()
    return net


# ---- seed_all and dropout ------------------------------------------------------------------------
@pytest.mark.parametrize(("arguments", "error"), [({"seed": -1}, ValueError), ({"seed": 2**32}, ValueError),
                                                  ({"seed": "1"}, TypeError), ({"mode": 1}, TypeError),
                                                  ({"rm_dropout": None}, TypeError)])
def test_seed_all_rejects_bad_arguments(arguments, error):
    with pytest.raises(error, match="seed_all"):
        seed_all(**arguments)


def test_seed_all_repeats_every_source():
    def draw():
        return (random.random(), np.random.rand(), ops.uniform((3,), ms.Tensor(0.0), ms.Tensor(1.0)).asnumpy().tolist(),
                nn.Dense(3, 3).weight.asnumpy().tolist())

    seed_all(7)
    first = draw()
    seed_all(7)
    assert draw() == first


def test_seed_all_seeds_the_default_generator():
    """`mindspore.set_seed` leaves the default generator (`mint`'s random functions draw from it) at its own
    seed; `mindspore.manual_seed` sets it. (Those functions have no CPU kernels here to draw with.)"""
    for seed in (7, 8):
        seed_all(seed)
        assert ms.default_generator.initial_seed() == seed


def test_seed_all_seeds_mindtorch_when_mindnlp_loaded_it(monkeypatch):
    """mindnlp's `torch` is mindtorch, whose generator is not MindSpore's. mindnlp does not install against
    this MindSpore, so a recording stand-in (`fake_mindtorch`) takes its place in sys.modules."""
    fake_mindtorch = types.ModuleType("mindtorch")
    fake_mindtorch.seeds = []
    fake_mindtorch.manual_seed = fake_mindtorch.seeds.append
    monkeypatch.setitem(sys.modules, "mindtorch", fake_mindtorch)
    seed_all(11)
    assert fake_mindtorch.seeds == [11]


def test_seed_all_mode_turns_on_determinism(monkeypatch):
    monkeypatch.delenv("HCCL_DETERMINISTIC", raising=False)
    seed_all(1, mode=True)
    assert ms.get_context("deterministic") == "ON"
    assert os.environ["HCCL_DETERMINISTIC"] == "true"
    seed_all(1, mode=True)  # MindSpore allows one set_deterministic per process: a second call is fine


def test_rm_dropout_covers_cells_functions_and_primitives_created_before():
    x = ms.Tensor(np.ones((2, 3, 4, 5), np.float32))
    cells = [nn.Dropout(p=0.5), nn.Dropout(keep_prob=0.5), mint.nn.Dropout(0.5), nn.Dropout2d(0.5)]
    for cell in cells:
        cell.set_train(True)
    primitive = ops.Dropout(keep_prob=0.5)
    calls = [*cells, lambda t: ops.dropout(t, 0.5), lambda t: ops.dropout2d(t, 0.5),
             lambda t: primitive(t)[0], lambda t: mint.nn.functional.dropout(t, 0.5)]
    with no_dropout():
        for call in calls:
            assert (call(x).asnumpy() == 1).all()
        mask = primitive(x)[1].asnumpy()
        assert mask.shape == x.shape and (mask == 1).all()
    assert not (cells[0](x).asnumpy() == 1).all(), "restored: dropout draws masks again"


def test_rm_dropout_covers_the_generated_dropout_primitive():
    """mindformers' parallel-core Dropout calls `ops.auto_generate.DropoutExt()` by keyword with its own seed and
    offset (an Ascend kernel: on CPU only the removed primitive can run)."""
    x = ms.Tensor(np.ones((2, 3), np.float32))
    primitive, original = ms.ops.auto_generate.DropoutExt(), ms.ops.auto_generate.DropoutExt.__call__
    seed, offset = ms.Tensor(0, ms.int64), ms.Tensor(0, ms.int64)
    with no_dropout():
        out, mask = primitive(input=x, p=0.5, seed=seed, offset=offset)
        assert (out.asnumpy() == 1).all() and (mask.asnumpy() == 1).all() and mask.dtype == ms.uint8
        assert (primitive(x, 0.5, seed, offset)[0].asnumpy() == 1).all()
    assert ms.ops.auto_generate.DropoutExt.__call__ is original, "restored"


def test_rm_dropout_covers_stochastic_depth_cells_and_functions(monkeypatch):
    """mindcv's DropPath and model code's own copies, defined before or after the call, return their input."""
    library = types.ModuleType("stochastic_depth_library")
    exec(compile("def drop_path(x, drop_prob=0.0, training=False):\n    return x * 0 if training else x\n",
                 "stochastic_depth_library.py", "exec"), vars(library))
    monkeypatch.setitem(sys.modules, library.__name__, library)

    class DropPath(nn.Cell):
        def __init__(self, p):
            super().__init__()
            self.keep = 1 - p

        def construct(self, x):
            return x / self.keep * ops.floor(self.keep + ops.rand((x.shape[0], 1)))

    x = ms.Tensor(np.ones((64, 3), np.float32))
    with no_dropout():

        class StochasticDepth(DropPath):
            def construct(self, x):
                return x * ops.floor(self.keep + ops.rand((x.shape[0], 1)))

        for cell in (DropPath(0.5), StochasticDepth(0.5)):
            cell.set_train(True)
            assert (cell(x).asnumpy() == 1).all()
        assert library.drop_path(x, 0.5, True) is x
    assert not (DropPath(0.5)(x).asnumpy() == 1).all(), "restored: stochastic depth draws again"
    assert (library.drop_path(x, 0.5, True).asnumpy() == 0).all() and "__init_subclass__" not in vars(nn.Cell)


def test_rm_dropout_covers_a_drop_path_function_called_in_graph_mode(tmp_path, monkeypatch):
    """A cell whose construct calls its module's drop_path, compiled in graph mode after the call."""
    (tmp_path / "graph_drop_path.py").write_text(
        "from mindspore import nn, ops\n\n\ndef drop_path(x, drop_prob=0.0, training=False):\n"
        "    if drop_prob == 0.0 or not training:\n        return x\n"
        "    return x * ops.floor(1 - drop_prob + ops.rand((x.shape[0], 1))) / (1 - drop_prob)\n\n\n"
        "class Block(nn.Cell):\n    def construct(self, x):\n        return drop_path(x, 0.5, self.training)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import graph_drop_path

    x = ms.Tensor(np.ones((64, 3), np.float32))
    ms.set_context(mode=ms.GRAPH_MODE)
    try:
        with no_dropout():
            block = graph_drop_path.Block()
            block.set_train(True)
            assert (block(x).asnumpy() == 1).all()
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
        sys.modules.pop("graph_drop_path", None)


# ---- capture -------------------------------------------------------------------------------------
def test_l1_records_functions_primitives_operators_and_backward(tmp_path):
    train(tmp_path, level="L1")
    data = dump(tmp_path)
    assert data["framework"] == "mindspore" and data["level"] == "L1" and data["version"] == 1
    names = list(data["data"])
    for name in ("Primitive.matmul.MatMul.0.forward", "Primitive.layer_norm.LayerNorm.0.forward",
                 "Functional.gelu.0.forward", "Tensor.__mul__.0.forward", "Functional.cross_entropy.0.forward",
                 "Functional.gelu.0.backward", "Primitive.matmul.MatMul.0.backward"):
        assert name in names
    assert not any("Shape" in name for name in names), "shape queries are not recorded"
    assert names.index("Functional.cross_entropy.0.forward") < names.index("Functional.cross_entropy.0.backward")
    gelu = data["data"]["Functional.gelu.0.forward"]["input_args"][0]
    assert gelu["type"] == "mindspore.Tensor" and gelu["dtype"] == "Float32" and gelu["shape"] == [4, 16]
    assert gelu["requires_grad"] is True
    labels = data["data"]["Functional.cross_entropy.0.forward"]["input_args"][1]
    assert labels["dtype"] == "Int32" and labels["Mean"] is None and labels["requires_grad"] is False
    backward = data["data"]["Primitive.matmul.MatMul.0.backward"]
    assert backward["input"][0]["shape"] == [4, 16] and backward["output"][1]["shape"] == [16, 8]
    stack = json.loads((tmp_path / "dump" / "step0" / "rank0" / "stack.json").read_text())
    assert any("test_mindspore_runtime.py" in line for _, lines in stack.values() for line in lines)


def test_l0_records_cells_parameters_and_gradients_with_construct(tmp_path):
    net = train(tmp_path, level="L0")
    data = dump(tmp_path)["data"]
    assert list(data)[:3] == ["Cell.fc1.Dense.forward.0", "Cell.ln.LayerNorm.forward.0", "Cell.fc2.Linear.forward.0"]
    assert set(data["Cell.ln.LayerNorm.parameters_grad.0"]) == {"gamma", "beta"}
    assert data["Cell.fc2.Linear.backward.0"]["output"][0]["shape"] == [4, 16]
    assert data["Cell.fc1.Dense.backward.0"]["output"] == [None]  # the network input gets no gradient
    assert data["Cell.fc1.Dense.forward.0"]["parameters"]["weight"]["shape"] == [16, 8]
    construct = dump(tmp_path, name="construct.json")
    assert construct["Cell.fc1.Dense.forward.0"] is None
    assert net.fc1.weight.shape == (16, 8)


def test_l0_model_chunks_are_named_by_their_index(tmp_path):
    first, second = nn.SequentialCell([nn.Dense(8, 8)]), nn.SequentialCell([nn.Dense(8, 2)])
    debugger = PrecisionDebugger(config_path=write_config(tmp_path, level="L0"))
    debugger.start(model=[first, second])
    second(first(batch()[0]))
    debugger.stop()
    debugger.close()
    assert list(dump(tmp_path)["data"]) == ["Cell.0.0.Dense.forward.0", "Cell.1.0.Dense.forward.0"]
    with pytest.raises(TypeError, match="takes a mindspore.nn.Cell or a list or tuple of them, not str"):
        PrecisionDebugger(config_path=write_config(tmp_path, level="L0")).start(model=[first, "second"])


def test_l0_a_cell_two_given_models_hold_is_hooked_once(tmp_path):
    """A GAN's generator-loss cell holds the discriminator, passed with it: D's cells are recorded once."""
    discriminator = nn.SequentialCell([nn.Dense(8, 2)])
    generator_loss = nn.SequentialCell([nn.Dense(8, 8), discriminator])
    debugger = PrecisionDebugger(config_path=write_config(tmp_path, level="L0"))
    debugger.start(model=[generator_loss, discriminator])
    generator_loss(batch()[0])
    debugger.stop()
    debugger.close()
    assert list(dump(tmp_path)["data"]) == ["Cell.0.0.Dense.forward.0", "Cell.0.1.0.Dense.forward.0",
                                            "Cell.0.1.SequentialCell.forward.0"]


def test_start_stop_and_step_may_be_called_on_the_class(tmp_path):
    net = nn.SequentialCell([nn.Dense(8, 2)])
    debugger = PrecisionDebugger(config_path=write_config(tmp_path, level="L0"))
    PrecisionDebugger.start(model=net)
    net(batch()[0])
    PrecisionDebugger.stop()
    PrecisionDebugger.step()
    debugger.close()
    assert debugger.current_step == 1 and list(dump(tmp_path)["data"]) == ["Cell.0.Dense.forward.0"]


def test_set_init_step_numbers_the_steps_from_the_given_one(tmp_path):
    net = nn.SequentialCell([nn.Dense(8, 2)])
    debugger = PrecisionDebugger(config_path=write_config(tmp_path, level="L0", step=[7]))
    PrecisionDebugger.set_init_step(7)
    with debugger.start(model=net):
        net(batch()[0])
    debugger.close()
    assert debugger.current_step == 8 and (tmp_path / "dump" / "step7").is_dir()


def test_after_the_last_step_the_network_runs_without_capture(tmp_path):
    """Once the config's last step is written, cell hooks and API wrappers go: later steps run plain."""
    original = ops.matmul
    seed_all(0)
    net = TinyNet()
    grad_fn, optimizer = trainer(net)
    x, y = batch()
    debugger = PrecisionDebugger(config_path=write_config(tmp_path, level="mix", step=[0]))
    for step in range(2):
        debugger.start(model=net)
        optimizer(grad_fn(x, y)[1])
        debugger.stop()
        assert (ops.matmul is original) == (step == 1)
        debugger.step()
    assert ops.matmul is original
    assert not any(cell._forward_pre_hook or cell._forward_hook for _, cell in net.cells_and_names())
    debugger.close()
    assert [p.name for p in (tmp_path / "dump").iterdir()] == ["step0"]


def test_hooks_on_a_parameter_a_cell_returns_are_removed_at_stop(tmp_path):
    class Table(nn.Cell):
        def __init__(self):
            super().__init__()
            self.table = ms.Parameter(ms.Tensor(np.ones((4, 8), np.float32)))

        def construct(self):
            return self.table

    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.table, self.fc = Table(), nn.Dense(8, 2)

        def construct(self, x):
            return self.fc(x + self.table()).sum()

    net = Net()
    debugger = PrecisionDebugger(config_path=write_config(tmp_path, level="L0"))
    grad = ms.value_and_grad(net, None, net.trainable_params())
    for _ in range(3):
        with debugger.start(model=net):
            grad(batch()[0])
    debugger.close()
    assert not net.table.table.hooks()
    assert "Cell.table.Table.backward.0" in dump(tmp_path, step=2)["data"]


def test_batch_norm_moving_statistics_keep_call_time_values(tmp_path):
    """BatchNorm updates its moving mean and variance in place (a primitive marked side_effect_mem, and
    ops.batch_norm): each call's record holds the values it was given, not those of a later read."""
    norm = nn.BatchNorm1d(3)
    norm.set_train(True)
    x = ms.Tensor((np.random.default_rng(0).standard_normal((8, 3)) * 5 + 2).astype(np.float32))
    mean, var = ms.Parameter(ms.Tensor(np.zeros(3, np.float32)), name="m"), ms.Parameter(ms.Tensor(np.ones(3, np.float32)), name="v")
    given = {}
    debugger = PrecisionDebugger(config_path=write_config(tmp_path, level="L1"))
    debugger.start(model=norm)
    for index in range(2):
        given[f"Primitive.bn_train.BatchNorm.{index}.forward"] = (3, float(norm.moving_mean.asnumpy().max()))
        norm(x)
        given[f"Functional.batch_norm.{index}.forward"] = (1, float(mean.asnumpy().max()))
        ops.batch_norm(x, mean, var, ms.Tensor(np.ones(3, np.float32)), ms.Tensor(np.zeros(3, np.float32)),
                       training=True)
    debugger.stop()
    debugger.close()
    data = dump(tmp_path)["data"]
    for name, (position, value) in given.items():
        assert data[name]["input_args"][position]["Max"] == pytest.approx(value), name
    assert given["Functional.batch_norm.1.forward"][1] > 0


def test_a_batch_norm_cells_record_holds_the_moving_statistics_it_was_given(tmp_path):
    """L0: the cell's `parameters` are read before its call, which updates the moving statistics in place."""
    net = nn.SequentialCell(nn.Dense(4, 3), nn.BatchNorm1d(3))
    net.set_train(True)
    x = ms.Tensor((np.random.default_rng(0).standard_normal((8, 4)) + 5).astype(np.float32))
    debugger = PrecisionDebugger(config_path=write_config(tmp_path, level="L0"))
    given = []
    for _ in range(2):
        given.append(float(net[1].moving_mean.asnumpy().max()))
        with debugger.start(model=net):
            net(x)
    debugger.close()
    recorded = [dump(tmp_path, step=step)["data"]["Cell.1.BatchNorm1d.forward.0"]["parameters"]["moving_mean"]["Max"]
                for step in (0, 1)]
    assert recorded == pytest.approx(given) and given[0] == 0.0 and given[1] != 0.0


@pytest.mark.skipif(ms.get_context("device_target") != "CPU", reason="a CPU kernel's behaviour")
def test_batch_norm_outputs_the_cpu_kernel_leaves_unwritten_are_null(tmp_path):
    """In training, MindSpore's CPU BatchNorm leaves its outputs 1 and 2 holding earlier memory: recorded,
    two identical runs would differ there."""
    norm = nn.BatchNorm1d(3)
    norm.set_train(True)
    debugger = PrecisionDebugger(config_path=write_config(tmp_path, level="L1"))
    with debugger.start(model=norm):
        norm(ms.Tensor(np.ones((4, 3), np.float32)))
    debugger.close()
    output = dump(tmp_path)["data"]["Primitive.bn_train.BatchNorm.0.forward"]["output"]
    assert output[1] is None and output[2] is None
    assert output[0]["shape"] == [4, 3] and output[3]["shape"] == [3]


def test_other_threads_calls_are_not_recorded(tmp_path):
    """Only the thread that opened the window records: another thread's calls would land among its
    records at points that differ from run to run (and used to make some of its own calls go unrecorded)."""
    def names(folder, background: bool) -> list:
        net = TinyNet()
        stop = threading.Event()

        def other():
            while not stop.is_set():
                ops.arange(3).sum()

        thread = threading.Thread(target=other)
        debugger = PrecisionDebugger(config_path=write_config(folder, level="mix"))
        grad = ms.value_and_grad(net, None, net.trainable_params())
        if background:
            thread.start()
        try:
            with debugger.start(model=net):
                for _ in range(5):
                    grad(batch()[0])
        finally:
            stop.set()
            if background:
                thread.join()
            debugger.close()
        return list(dump(folder)["data"])

    alone, beside = names(tmp_path / "alone", False), names(tmp_path / "beside", True)
    assert beside == alone and not any("arange" in name for name in beside)


def test_a_copy_of_a_hooked_network_records_nothing(tmp_path):
    """copy.deepcopy of a hooked network (an EMA copy) carries capture's hooks along; they record nothing."""
    net = nn.SequentialCell([nn.Dense(8, 4), nn.ReLU()])
    debugger = PrecisionDebugger(config_path=write_config(tmp_path, level="L0"))
    with debugger.start(model=net):
        net(batch()[0])
        copy.deepcopy(net)(batch()[0])
    debugger.close()
    assert sorted(dump(tmp_path)["data"]) == ["Cell.0.Dense.forward.0", "Cell.1.ReLU.forward.0"]


def test_a_cell_call_that_raises_leaves_no_parent_behind(tmp_path):
    class Picky(nn.Cell):
        def __init__(self):
            super().__init__()
            self.fc = nn.Dense(8, 8)

        def construct(self, x):
            y = self.fc(x)
            if x.shape[0] == 1:
                raise ValueError("one row")
            return y

    net = nn.SequentialCell([Picky(), nn.Dense(8, 2)])
    debugger = PrecisionDebugger(config_path=write_config(tmp_path, level="L0"))
    debugger.start(model=net)
    with pytest.raises(ValueError):
        net(batch()[0][:1])
    net(batch()[0])
    debugger.stop()
    debugger.close()
    construct = dump(tmp_path, name="construct.json")
    assert construct["Cell.0.Picky.forward.1"] is None and construct["Cell.1.Dense.forward.0"] is None
    assert construct["Cell.0.fc.Dense.forward.1"] == "Cell.0.Picky.forward.1"


def test_l0_parameters_are_the_ones_each_call_used(tmp_path):
    net = nn.SequentialCell([nn.Dense(8, 2)])
    debugger = PrecisionDebugger(config_path=write_config(tmp_path, level="L0"))
    debugger.start(model=net)
    net(batch()[0])
    net[0].weight = ms.Parameter(ms.Tensor(np.full((2, 8), 3.0, np.float32)), name="weight")  # assigned anew
    grad_fn = ms.value_and_grad(lambda x: net(x).sum(), None, net.trainable_params())
    grad_fn(batch()[0])
    debugger.stop()
    debugger.close()
    data = dump(tmp_path)["data"]
    assert data["Cell.0.Dense.forward.1"]["parameters"]["weight"]["Max"] == 3.0
    assert sorted(data["Cell.0.Dense.parameters_grad.0"]) == ["bias", "weight"]


def test_mix_nests_apis_in_cells_and_compares_clean_with_itself(tmp_path):
    train(tmp_path, steps=2, level="mix")
    construct = dump(tmp_path, name="construct.json")
    assert construct["Primitive.matmul.MatMul.0.forward"] == "Cell.fc1.Dense.forward.0"
    assert construct["Primitive.matmul.MatMul.0.backward"] == "Cell.fc1.Dense.backward.0"
    run = compare(tmp_path / "dump", tmp_path / "dump", tmp_path / "out")
    assert run.exit_code == 0 and len(run.pairs) == 2


def test_parameters_keep_their_values_from_before_the_optimizer_step(tmp_path):
    seed_all(0)
    net = TinyNet()
    before = net.fc1.weight.asnumpy().copy()
    grad_fn, optimizer = trainer(net)
    debugger = PrecisionDebugger(config_path=write_config(tmp_path, level="L0"))
    debugger.start(model=net)
    _, grads = grad_fn(*batch())
    optimizer(grads)
    debugger.close()
    recorded = dump(tmp_path)["data"]["Cell.fc1.Dense.forward.0"]["parameters"]["weight"]
    assert recorded["Max"] == float(before.max()) and recorded["Max"] != float(net.fc1.weight.asnumpy().max())


def test_in_place_calls_keep_call_time_values(tmp_path):
    debugger = PrecisionDebugger(config_path=write_config(tmp_path, level="L1"))
    with debugger:
        x = ms.Tensor(np.arange(6, dtype=np.float32))
        y = x * 2
        y.add_(100)
    debugger.close()
    data = dump(tmp_path)["data"]
    assert data["Tensor.__mul__.0.forward"]["output"][0]["Max"] == 10.0
    assert data["Tensor.add_.0.forward"]["output"][0]["Max"] == 110.0


def test_nan_and_infinities_are_written_as_msprobe_writes_them(tmp_path):
    """NaN statistics and non-finite scalar arguments: `NaN`, `Infinity` in the file, never null."""
    debugger = PrecisionDebugger(config_path=write_config(tmp_path, level="L1"))
    with debugger:
        x = ms.Tensor(np.array([1.0, np.nan, np.inf], dtype=np.float32))
        ops.clamp(x, -float("inf"), float(np.float64(np.nan)))
    debugger.close()
    text = (tmp_path / "dump" / "step0" / "rank0" / "dump.json").read_text(encoding="utf-8")
    record = json.loads(text)["data"]["Functional.clamp.0.forward"]
    assert np.isnan(record["input_args"][0]["Max"]) and np.isnan(record["input_args"][0]["Mean"])
    assert record["input_args"][1]["value"] == -np.inf and np.isnan(record["input_args"][2]["value"])
    assert "NaN" in text and "-Infinity" in text


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float64", "int64", "bool", "complex64"])
def test_statistics_of_every_dtype_match_numpy(dtype):
    values = np.array([[-3.0, 0.5, 2.0], [1.0, 0.0, -0.25]])
    tensor = ms.Tensor(values.astype(np.float32)).astype(getattr(ms, dtype))
    expected = tensor.astype(ms.float32).asnumpy().astype(np.float64) if dtype != "complex64" else np.abs(values)
    for on_host in (True, False):
        buffer = StatBuffer(on_host=on_host)
        slot = buffer.slot(tensor)
        high, low, total, norm, _ = buffer.to_host()[slot]
        assert (high, low) == (pytest.approx(expected.max()), pytest.approx(expected.min()))
        if dtype in ("int64", "bool"):
            assert total is None and norm is None
        else:
            assert total == pytest.approx(expected.sum(), rel=1e-3)
            assert norm == pytest.approx(np.linalg.norm(expected), rel=1e-3)


def test_hash_equals_the_pytorch_runtimes_bit_for_bit():
    torch = pytest.importorskip("torch")
    from msprobe_runtime.pytorch.capture.stats import _hash as torch_hash

    values = np.random.default_rng(1).standard_normal((3, 40)).astype(np.float32)
    for ms_dtype, torch_dtype in ((ms.float32, torch.float32), (ms.float16, torch.float16),
                                  (ms.bfloat16, torch.bfloat16), (ms.bool_, torch.bool)):
        host = ms.Tensor(values).astype(ms_dtype).asnumpy()
        assert _hash(host).tolist() == torch_hash(torch.from_numpy(values).to(torch_dtype)).tolist()


def test_tensor_md5_and_hash_modes(tmp_path):
    train(tmp_path / "tensor", task="tensor", level="L1")
    data = dump(tmp_path / "tensor")
    entry = data["data"]["Functional.gelu.0.forward"]["output"][0]
    saved = np.load(tmp_path / "tensor" / "dump" / "step0" / "rank0" / "dump_tensor_data" / entry["data_name"])
    assert saved.shape == (4, 16) and float(saved.max()) == entry["Max"]
    for mode in ("md5", "hash"):
        train(tmp_path / mode, level="L1", statistics={"summary_mode": mode})
        entry = dump(tmp_path / mode)["data"]["Functional.gelu.0.forward"]["input_args"][0]
        assert len(entry[mode]) == (8 if mode == "md5" else 16)


def test_list_scope_and_data_mode_filter(tmp_path):
    train(tmp_path / "list", level="L1", statistics={"list": ["gelu"]})
    assert set(dump(tmp_path / "list")["data"]) == {"Functional.gelu.0.forward", "Functional.gelu.0.backward"}
    train(tmp_path / "scope", level="L0", statistics={"scope": ["Cell.ln.LayerNorm.forward.0",
                                                                 "Cell.fc2.Linear.forward.0"],
                                                       "data_mode": ["forward"]})
    assert list(dump(tmp_path / "scope")["data"]) == ["Cell.ln.LayerNorm.forward.0", "Cell.fc2.Linear.forward.0"]


def test_steps_and_bad_configs(tmp_path):
    train(tmp_path, steps=3, level="L1", step=[1])
    assert [p.name for p in (tmp_path / "dump").iterdir()] == ["step1"]
    with pytest.raises(ConfigError, match="unknown top-level key 'levle'"):
        PrecisionDebugger(config_path=write_config(tmp_path, levle="L1"))
    with pytest.raises(ConfigError, match="start\\(model\\)"):
        PrecisionDebugger(config_path=write_config(tmp_path, level="L0")).start()


def test_graph_mode_and_jit_never_crash(tmp_path):
    debugger = PrecisionDebugger(config_path=write_config(tmp_path, level="L1"))

    @ms.jit
    def compiled(x):
        return ops.matmul(x, x) + 1

    x = ms.Tensor(np.eye(3, dtype=np.float32))
    with debugger:
        y = compiled(x) * 2
    debugger.close()
    assert (y.asnumpy() == (np.eye(3) + 1) * 2).all()
    assert "Functional.matmul.0.forward" not in dump(tmp_path)["data"], "calls inside jit are compiled"
    net = TinyNet()
    eager = net(batch()[0]).asnumpy()
    ms.set_context(mode=ms.GRAPH_MODE)
    try:
        with pytest.warns(UserWarning, match="GRAPH_MODE"):
            debugger.start(model=net)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            debugger.start(model=net)  # said once
        compiled_output = net(batch()[0]).asnumpy()  # compiles with the wrappers and hooks installed
        debugger.stop()
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
    np.testing.assert_allclose(compiled_output, eager, rtol=1e-5)
    assert "PYNATIVE_MODE" in GRAPH_MODE_MESSAGE


def test_the_graph_mode_message_gets_past_a_script_that_silences_warnings(tmp_path):
    """mindocr's train.py runs `warnings.filterwarnings("ignore")`: the message that explains an empty dump is
    still shown."""
    debugger = PrecisionDebugger(config_path=write_config(tmp_path, level="L1"))
    ms.set_context(mode=ms.GRAPH_MODE)
    try:
        with pytest.warns(UserWarning, match="GRAPH_MODE"):
            warnings.filterwarnings("ignore")
            debugger.start(model=TinyNet())
        debugger.stop()
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
        debugger.close()


# ---- gradient probe and Model.train --------------------------------------------------------------
@pytest.mark.parametrize("level", ["L0", "L1", "L2"])
def test_grad_probe_writes_msprobe_files(tmp_path, level):
    seed_all(0)
    net = TinyNet()
    grad_fn, optimizer = trainer(net)
    config = write_config(tmp_path, task="grad_probe", grad_probe={"grad_level": level, "bounds": [-0.1, 0, 0.1]})
    debugger = PrecisionDebugger(config_path=config)
    debugger.monitor(optimizer)
    x, y = batch()
    for _ in range(2):
        _, grads = grad_fn(x, y)
        optimizer(grads)
    debugger.close()
    rank = tmp_path / "dump" / "rank0"
    with open(rank / "grad_summary_1.csv", encoding="utf-8-sig") as handle:
        rows = list(csv.reader(handle))
    assert rows[0][0] == "param_name" and ("MD5" in rows[0]) == (level == "L0") and ("=0" in rows[0]) == (level == "L2")
    assert [row[0] for row in rows[1:]] == [param.name for param in optimizer.parameters]
    if level != "L0":
        signs = np.load(rank / "step1" / "fc1.weight.npy")
        assert signs.dtype == bool and signs.shape == (16, 8)


def test_msprobe_step_callback_dumps_model_train_steps_with_the_users_cell_names(tmp_path):
    seed_all(0)
    net = TinyNet()
    x, y = batch()
    dataset = ms.dataset.NumpySlicesDataset({"x": x.asnumpy(), "y": y.asnumpy()}, shuffle=False).batch(2)
    model = ms.train.Model(net, loss_fn=nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean"),
                           optimizer=nn.SGD(net.trainable_params(), learning_rate=0.1))
    debugger = PrecisionDebugger(config_path=write_config(tmp_path, level="mix", step=[0, 1]))
    model.train(1, dataset, callbacks=[MsprobeStep(debugger)], dataset_sink_mode=False)
    debugger.close()
    assert sorted(p.name for p in (tmp_path / "dump").iterdir()) == ["step0", "step1"]
    assert "Cell.fc1.Dense.forward.0" in dump(tmp_path, step=1)["data"]

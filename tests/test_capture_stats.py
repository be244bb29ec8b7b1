"""Statistics: every dtype and edge case, in-place correctness, one host transfer per step, compile."""

from __future__ import annotations

import math
import zlib

import numpy as np
import pytest
import torch
from capture_support import (
    capture,
    load_dump,
    restore_torch,  # noqa: F401  (module-scoped autouse fixture)
    uninstall_wrappers,
    write_config,
)
from extension_support import extension_or_fallback
from msprobe_runtime.core.stats import md5_text
from msprobe_runtime.pytorch import PrecisionDebugger
from msprobe_runtime.pytorch.capture import api_wrap
from msprobe_runtime.pytorch.capture import stats as stats_module


@pytest.fixture(params=["host", "torch"])
def reducer(request, monkeypatch) -> str:
    """Both ways CPU statistics are computed: at once by the compiled host reducer, or lazily, in batches,
    by torch's reductions (as on an accelerator, or when the extension was not built)."""
    return extension_or_fallback(request, monkeypatch, stats_module, "_describe", "torch")


def _first_input(dump, name):
    return dump["data"][name]["input_args"][0]


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32, torch.float64])
def test_floating_dtypes(tmp_path, dtype, reducer):
    x = (torch.randn(5, 7) * 3).to(dtype)
    dump, _, _ = capture(tmp_path, lambda: torch.neg(x))
    entry = _first_input(dump, "Torch.neg.0.forward")
    exact = x.double()
    assert entry["dtype"] == str(dtype)
    assert entry["Max"] == float(exact.max()) and entry["Min"] == float(exact.min())
    assert entry["Mean"] == pytest.approx(float(exact.mean()), rel=1e-5, abs=1e-6)
    assert entry["Norm"] == pytest.approx(float(exact.norm()), rel=1e-5)


@pytest.mark.parametrize("dtype", [torch.int8, torch.uint8, torch.int16, torch.int32, torch.int64])
def test_integer_dtypes(tmp_path, dtype, reducer):
    x = torch.tensor([[3, 9], [0, 5]], dtype=dtype)
    dump, _, _ = capture(tmp_path, lambda: torch.abs(x))
    entry = _first_input(dump, "Torch.abs.0.forward")
    assert (entry["Max"], entry["Min"], entry["Mean"], entry["Norm"]) == (9, 0, None, None)
    assert isinstance(entry["Max"], int)


def test_large_int64_is_exact(tmp_path, reducer):
    x = torch.tensor([2**62 + 1, -(2**61) - 3])
    dump, _, _ = capture(tmp_path, lambda: torch.abs(x))
    entry = _first_input(dump, "Torch.abs.0.forward")
    assert (entry["Max"], entry["Min"]) == (2**62 + 1, -(2**61) - 3)


def test_bool_complex_scalar_empty(tmp_path, reducer):
    flags = torch.tensor([True, False, True])
    z = torch.tensor([3 + 4j, 0 + 1j], dtype=torch.complex64)
    scalar = torch.tensor(-2.5)
    integer = torch.tensor(7)
    empty = torch.empty(0, 3)

    def run():
        torch.logical_not(flags)
        torch.conj_physical(z)
        torch.neg(scalar)
        torch.neg(integer)
        torch.neg(empty)

    dump, _, _ = capture(tmp_path, run)
    assert {k: _first_input(dump, "Torch.logical_not.0.forward")[k] for k in ("Max", "Min", "Mean")} == {
        "Max": True, "Min": False, "Mean": None}
    complex_entry = _first_input(dump, "Torch.conj_physical.0.forward")
    assert (complex_entry["Max"], complex_entry["Min"], complex_entry["Mean"]) == (5.0, 1.0, 3.0)
    assert complex_entry["Norm"] == pytest.approx(math.sqrt(26))
    scalar_entry = _first_input(dump, "Torch.neg.0.forward")
    assert scalar_entry["shape"] == [] and (scalar_entry["Max"], scalar_entry["Mean"], scalar_entry["Norm"]) == (
        -2.5, -2.5, 2.5)
    assert {k: _first_input(dump, "Torch.neg.1.forward")[k] for k in ("Max", "Mean", "Norm")} == {
        "Max": 7, "Mean": 7.0, "Norm": 7.0}
    empty_entry = _first_input(dump, "Torch.neg.2.forward")
    assert empty_entry["shape"] == [0, 3] and empty_entry["Max"] is None and empty_entry["Norm"] is None


def test_nan_inf_views_and_non_contiguous(tmp_path, reducer):
    bad = torch.tensor([1.0, float("inf"), -2.0])
    base = torch.arange(12.0).reshape(3, 4)
    transposed = base.t()  # non-contiguous
    view = base[1]  # a view with an offset

    def run():
        torch.neg(bad)
        torch.neg(transposed)
        torch.neg(view)

    dump, _, _ = capture(tmp_path, run)
    entry = _first_input(dump, "Torch.neg.0.forward")
    assert entry["Max"] == math.inf and entry["Min"] == -2.0 and entry["Mean"] == math.inf
    assert _first_input(dump, "Torch.neg.1.forward")["shape"] == [4, 3]
    assert _first_input(dump, "Torch.neg.1.forward")["Mean"] == pytest.approx(5.5)
    assert (_first_input(dump, "Torch.neg.2.forward")["Max"], _first_input(dump, "Torch.neg.2.forward")["Min"]) == (
        7.0, 4.0)


def test_in_place_ops_keep_call_time_values(tmp_path, reducer):
    x = torch.ones(4)

    def run():
        y = torch.exp(x)  # y recorded (lazily) as output
        y.mul_(2)  # in-place on y: the exp record must still say e
        y[1:3].add_(10)  # in-place through a view of y
        x.add_(1)  # in-place on an earlier input

    dump, _, _ = capture(tmp_path, run)
    data = dump["data"]
    assert data["Torch.exp.0.forward"]["output"][0]["Max"] == pytest.approx(math.e)
    assert data["Torch.exp.0.forward"]["input_args"][0]["Max"] == 1.0
    mul = data["Tensor.mul_.0.forward"]
    assert mul["input_args"][0]["Max"] == pytest.approx(math.e)
    assert mul["output"][0]["Max"] == pytest.approx(2 * math.e)
    assert data["Tensor.add_.0.forward"]["input_args"][0]["Max"] == pytest.approx(2 * math.e)
    add = data["Tensor.add_.1.forward"]
    assert add["input_args"][0]["Max"] == 1.0 and add["output"][0]["Max"] == 2.0


@pytest.mark.parametrize("level", ["L1", "mix"])
def test_inference_mode_tensors_keep_call_time_values(tmp_path, reducer, level):
    """Tensors made under torch.inference_mode have no version counter: they are described when recorded,
    so an in-place change that capture cannot tell by a version keeps off the earlier record."""
    model = torch.nn.Sequential(torch.nn.Linear(4, 4))

    def run():
        with torch.inference_mode():
            y = torch.exp(model(torch.zeros(2, 4)) * 0)  # ones, an inference tensor
            y.mul_(3)
            y.add_(1)

    dump, _, _ = capture(tmp_path, run, model=model, level=level)
    data = dump["data"]
    assert data["Torch.exp.0.forward"]["output"][0]["Max"] == 1.0
    assert data["Tensor.mul_.0.forward"]["output"][0]["Max"] == 3.0
    assert data["Tensor.add_.0.forward"]["input_args"][0]["Max"] == 3.0
    assert data["Tensor.add_.0.forward"]["output"][0]["Max"] == 4.0
    if level == "mix":
        assert isinstance(data["Module.0.Linear.forward.0"]["output"][0]["Max"], float)


@pytest.mark.parametrize("level", ["L0", "L1", "mix"])
def test_writes_through_data_are_seen_by_later_records(tmp_path, reducer, level):
    """`p.data.clamp_()` (WGAN weight clipping; EMA and hand-written updates alike) writes `p` without
    bumping `p`'s version counter: a later record of `p` in the same step is described anew."""
    torch.manual_seed(0)
    linear = torch.nn.Linear(4, 4)
    model = torch.nn.Sequential(linear)
    x = torch.randn(2, 4)
    maxima = []

    def run():
        for _ in range(2):
            model(x)
            maxima.append(float(linear.weight.detach().max()))
            linear.weight.data.clamp_(-0.01, 0.01)

    dump, _, _ = capture(tmp_path, run, model=model, level=level)
    data = dump["data"]
    for index, expected in enumerate(maxima):
        if level != "L1":
            assert data[f"Module.0.Linear.forward.{index}"]["parameters"]["weight"]["Max"] == pytest.approx(expected)
        if level != "L0":
            assert data[f"Functional.linear.{index}.forward"]["input_args"][1]["Max"] == pytest.approx(expected)
    assert maxima[1] == pytest.approx(0.01)


@pytest.mark.parametrize("summary_mode", ["statistics", "md5"])
def test_batch_norm_running_statistics_keep_call_time_values(tmp_path, reducer, summary_mode):
    """batch_norm updates running_mean/var in place without bumping their version counters: each call's
    record holds the values it was given (none shared with an earlier record, none read after the call)."""
    torch.manual_seed(0)
    norm = torch.nn.BatchNorm1d(3)
    x = torch.randn(8, 3) * 5 + 2
    given = []

    def run():
        for _ in range(2):
            given.append(norm.running_mean.clone())
            norm(x)
        given.append(norm.running_var.clone())
        torch.batch_norm(x, None, None, norm.running_mean, norm.running_var, True, 0.1, 1e-5, False)

    dump, _, _ = capture(tmp_path, run, level="L1", section={"summary_mode": summary_mode})
    data = dump["data"]
    for index in range(2):
        recorded = data[f"Functional.batch_norm.{index}.forward"]["input_args"][1]
        assert recorded["Max"] == pytest.approx(float(given[index].max()))
        if summary_mode == "md5":
            assert recorded["md5"] == md5_text(zlib.crc32(given[index].numpy().tobytes()))
    assert data["Torch.batch_norm.0.forward"]["input_args"][4]["Max"] == pytest.approx(float(given[2].max()))


@pytest.mark.parametrize("summary_mode", ["statistics", "md5"])
def test_sparse_gradients_are_described_as_dense(tmp_path, reducer, summary_mode):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Embedding(10, 3, sparse=True))
    tokens = torch.tensor([[1, 4, 4], [7, 1, 0]])  # repeated rows: the gradient is uncoalesced
    dump, _, _ = capture(tmp_path, lambda: model(tokens).square().sum().backward(), model=model, level="L0",
                         section={"summary_mode": summary_mode})
    entry = dump["data"]["Module.0.Embedding.parameters_grad.0"]["weight"][0]
    dense = model[0].weight.grad.to_dense().double()
    assert model[0].weight.grad.is_sparse and entry["shape"] == [10, 3]
    assert entry["Max"] == pytest.approx(float(dense.max())) and entry["Min"] == pytest.approx(float(dense.min()))
    assert entry["Mean"] == pytest.approx(float(dense.mean())) and entry["Norm"] == pytest.approx(float(dense.norm()))
    assert entry["Min"] == 0.0 or entry["Max"] == 0.0 or dense.min() * dense.max() < 0  # implicit zeros count


def test_in_place_change_capture_cannot_see_is_reported_not_misreported(tmp_path, reducer):
    """A change below the wrapped API surface: described at once, the record keeps its call-time value;
    described lazily, it is reported as stale (null), never with the later value."""
    x = torch.ones(3)

    def run():
        y = torch.exp(x)
        torch.ops.aten.mul_.Tensor(y, torch.tensor(2.0))  # below the wrapped API surface

    if reducer == "host":
        dump, _, _ = capture(tmp_path, run)
        assert dump["data"]["Torch.exp.0.forward"]["output"][0]["Max"] == pytest.approx(math.e)
    else:
        with pytest.warns(UserWarning, match="changed in place"):
            dump, _, _ = capture(tmp_path, run)
        assert dump["data"]["Torch.exp.0.forward"]["output"][0]["Max"] is None


def test_a_stale_tensor_names_no_data_file(tmp_path):
    """Tensor mode: a state changed below the wrapped API surface has no data, so its entry names no file."""

    def run():
        y = torch.exp(torch.ones(3))
        torch.ops.aten.mul_.Tensor(y, torch.tensor(2.0))

    with pytest.warns(UserWarning, match="changed in place"):
        dump, _, _ = capture(tmp_path, run, task="tensor")
    output = dump["data"]["Torch.exp.0.forward"]["output"][0]
    assert output["Max"] is None and "data_name" not in output


@pytest.mark.parametrize("task, section", [("tensor", {}), ("statistics", {"summary_mode": "md5"})])
def test_a_gradient_recorded_before_a_later_backward_keeps_its_values(tmp_path, task, section):
    """A GAN: D's optimizer step reads D's `.grad`, then G's backward accumulates into it (in C++, unseen by
    the wrappers): the optimizer's record keeps the gradient it used, computed before that pass."""
    weight = torch.nn.Parameter(torch.ones(4))
    optimizer = torch.optim.SGD([weight], lr=0.1)

    def run():
        (weight * 2).sum().backward()
        optimizer.step()  # Tensor.add_ reads weight.grad (all 2.0)
        (weight * 3).sum().backward()  # accumulates into weight.grad in place: 5.0

    dump, _, _ = capture(tmp_path, run, task=task, section=section)
    used = dump["data"]["Tensor.add_.0.forward"]["input_args"][1]
    assert (used["Max"], used["Min"]) == (2.0, 2.0)
    if task == "tensor":
        data = np.load(tmp_path / "dump" / "step0" / "rank0" / "dump_tensor_data" / used["data_name"])
        assert data.tolist() == [2.0] * 4


def test_one_transfer_per_step_and_no_item_or_host_copy(tmp_path, monkeypatch):
    transfers = []
    real_transfer = stats_module._transfer
    monkeypatch.setattr(stats_module, "_transfer", lambda bins: transfers.append(len(bins)) or real_transfer(bins))

    def no_files(*args, **kwargs):
        raise AssertionError("statistics mode copied tensor data")

    monkeypatch.setattr(stats_module.StatBuffer, "_to_files", no_files)
    real_item = torch.Tensor.item
    items = []
    x = torch.randn(16, 16, requires_grad=True)

    def run():
        monkeypatch.setattr(torch.Tensor, "item", lambda self: items.append(1) or real_item(self))
        loss = torch.relu(x @ x).sum()
        loss.backward()
        monkeypatch.setattr(torch.Tensor, "item", real_item)

    dump, _, _ = capture(tmp_path, run)
    assert transfers and len(transfers) == 1 and items == []
    assert dump["data"]["Torch.relu.0.forward"]["output"][0]["Max"] is not None


@pytest.mark.parametrize("level", ["L0", "mix"])
def test_module_records_describe_parameters_before_the_optimizer_step(tmp_path, level, reducer):
    """Parameter statistics of module records are those of the forward pass, not of the parameters the
    optimizer step changed later in the window, step after step (L0 computes them before the step)."""
    model = torch.nn.Sequential(torch.nn.Linear(4, 3))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
    x = torch.randn(2, 4)
    debugger = PrecisionDebugger(config_path=write_config(tmp_path, level=level))
    expected = []
    try:
        for _ in range(3):
            debugger.start(model)
            weight = float(model[0].weight.detach().max())
            model(x).square().sum().backward()
            expected.append((weight, float(model[0].weight.grad.max())))
            optimizer.step()
            optimizer.zero_grad()
            debugger.step()
    finally:
        debugger.close()
    for step, (weight, grad) in enumerate(expected):
        data = load_dump(tmp_path, step)[0]["data"]
        assert data["Module.0.Linear.forward.0"]["parameters"]["weight"]["Max"] == pytest.approx(weight)
        assert data["Module.0.Linear.parameters_grad.0"]["weight"][0]["Max"] == pytest.approx(grad)


def test_l0_wraps_apis_only_once_a_tensor_is_kept_pending(tmp_path, reducer):
    """At L0 the API wrappers only guard tensors whose statistics are pending: described at once (CPU,
    compiled reducer) no API is wrapped; kept pending, the first such tensor puts the wrappers in place,
    and a later in-place change still leaves the module record its call-time values."""
    uninstall_wrappers()
    model = torch.nn.Sequential(torch.nn.Linear(4, 3))
    x = torch.randn(2, 4)
    expected, installed = [], []

    def run():
        out = model(x)
        expected.append(float(out.detach().max()))
        out.mul_(-10)
        installed.append(api_wrap.installed())

    dump, _, _ = capture(tmp_path, run, model=model, level="L0")
    assert installed == [reducer == "torch"]
    assert dump["data"]["Module.0.Linear.forward.0"]["output"][0]["Max"] == pytest.approx(expected[0])


def test_a_state_recorded_again_after_its_batch_was_computed_gets_its_data_file(tmp_path):
    """Tensor mode: past the memory budget the pending batch is computed and its .npy files written; a later
    record of a tensor in the same state shares the slot and still gets its own file."""
    x, y = torch.arange(6.0), torch.arange(6.0) * 2
    buffer = stats_module.StatBuffer("statistics", data_folder=tmp_path, budget_bytes=40)
    first = buffer.slot(x, "x.0.npy")
    buffer.slot(y, "y.npy")  # 48 bytes pending: over the budget, computed and written
    assert buffer.slot(x, "x.1.npy") == first
    buffer.transfer()
    for name, tensor in (("x.0.npy", x), ("y.npy", y), ("x.1.npy", x)):
        assert np.array_equal(np.load(tmp_path / "dump_tensor_data" / name), tensor.numpy())


def test_statistics_batch_is_computed_in_few_kernels(reducer):
    """Same-shaped tensors are reduced together: kernel count does not grow with the tensor count."""
    buffer = stats_module.StatBuffer()
    tensors = [torch.randn(8, 8) for _ in range(50)]
    slots = [buffer.slot(t) for t in tensors]
    assert buffer.slot(tensors[0]) == slots[0]  # same state, same slot
    rows = _rows(buffer.transfer())
    for tensor, slot in zip(tensors, slots, strict=True):
        high, low, _, norm = rows[slot]
        assert high == float(tensor.max()) and low == float(tensor.min())
        assert norm == pytest.approx(float(tensor.norm()), rel=1e-6)


_NOT_BUILT = "the _describe and _hoststats extensions were not built (no C compiler)"


def _rows(host: stats_module.HostStatistics) -> dict[int, list]:
    """Per slot, its (max, min, sum, norm) as HostStatistics.rows gives them (floats, or exact integers)."""
    rows = {}
    for (slots, packed), dtype in zip(host.rows()[:2], (np.float64, np.int64), strict=True):
        values = np.frombuffer(packed, dtype=dtype).reshape(-1, 4).tolist()
        rows.update(zip(slots, values, strict=True))
    return rows


def _described_at_once(cases: list) -> tuple[dict, list]:
    """The statistics rows of `cases`, each described at once by the compiled reducer, and their slots."""
    buffer = stats_module.StatBuffer()
    slots = [buffer.slot(case) for case in cases]
    assert sorted(buffer.host_slots[0] + buffer.host_slots[1]) == slots
    return _rows(buffer.transfer()), slots


@pytest.mark.skipif(stats_module._describe is None, reason=_NOT_BUILT)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16])
@pytest.mark.parametrize("size", [1, 15, 16, 17, 511, 512, 513, 5000])
def test_host_reducer_matches_torch(dtype, size):
    """The compiled one-pass reducer: every length (lanes, blocks, tail), NaN anywhere, infinities."""
    generator = torch.Generator().manual_seed(size)
    cases = [torch.randn(size, generator=generator).to(dtype) * 100]
    for position in {0, size // 2, size - 1}:
        for special in (math.nan, math.inf, -math.inf):
            case = cases[0].clone()
            case[position] = special
            cases.append(case)
    rows, slots = _described_at_once(cases)
    for case, slot in zip(cases, slots, strict=True):
        exact = case.double()
        expected = [exact.max(), exact.min(), exact.sum(), exact.norm()]
        for value, reference in zip(rows[slot], (float(item) for item in expected), strict=True):
            assert value == pytest.approx(reference, rel=1e-5, nan_ok=True)


@pytest.mark.skipif(stats_module._describe is None, reason=_NOT_BUILT)
@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8, torch.bool])
@pytest.mark.parametrize("size", [1, 16, 17, 1000])
def test_host_reducer_integer_range_is_exact(dtype, size):
    info = torch.iinfo(dtype) if dtype is not torch.bool else None
    low, high = (info.min, info.max) if info else (0, 1)
    case = torch.randint(max(low, -1000), min(high, 1000) + 1, (size,)).to(dtype)
    case[size // 2] = high
    case[0] = low if size > 1 else high
    rows, (slot,) = _described_at_once([case])
    assert rows[slot] == [int(case.max()), int(case.min()), 0, 0]


def test_rows_join_tensors_described_at_once_and_later():
    """HostStatistics.rows: tensors described when recorded and tensors reduced at the end of the step
    (here strided views and float16) come out together, floats as floats and integers exactly; in the hash
    summary mode every slot has its hash."""
    buffer = stats_module.StatBuffer()
    base, integers = torch.arange(12.0).reshape(3, 4), torch.tensor([[2**62 + 1, 5], [-7, 0]])
    slots = [buffer.slot(tensor) for tensor in (base, base[:, ::2], torch.ones(3, dtype=torch.float16), integers,
                                                integers[:, ::2], torch.tensor([True, False])[::2])]
    rows = _rows(buffer.transfer())
    assert [rows[slot] for slot in slots] == [[11.0, 0.0, 66.0, pytest.approx(22.4944, rel=1e-5)],
                                              [10.0, 0.0, 30.0, pytest.approx(14.8324, rel=1e-5)],
                                              [1.0, 1.0, 3.0, pytest.approx(1.7321, rel=1e-4)],
                                              [2**62 + 1, -7, 0, 0], [2**62 + 1, -7, 0, 0], [1, 1, 0, 0]]
    hashed = stats_module.StatBuffer("hash")
    slots = [hashed.slot(tensor) for tensor in (base, integers)]
    assert sorted(hashed.transfer().rows()[2]) == slots


def test_host_reducer_takes_dense_host_tensors_only():
    """Float and integer tensors whose elements lie back to back (contiguous, transposed, channels-last,
    a contiguous view) are described at once; strided views with gaps, expanded tensors, float16 and
    complex tensors, a view whose values are its memory's negated (the negative bit), and the md5 summary
    mode, go to torch's reductions."""
    buffer = stats_module.StatBuffer()
    base = torch.arange(12.0).reshape(3, 4)
    for tensor in (base[:, ::2], torch.ones(3, 1).expand(3, 4), torch.ones(3, dtype=torch.float16),
                   torch.ones(2, dtype=torch.complex64)):
        buffer.slot(tensor)
    negated = buffer.slot(torch._neg_view(base[0]))
    offset = buffer.slot(base[1])
    transposed = buffer.slot(base.t())
    images = torch.randn(2, 3, 4, 5).to(memory_format=torch.channels_last)
    channels_last = buffer.slot(images)
    integers = buffer.slot(torch.tensor([2**62 + 1, -7]))
    built = stats_module._describe is not None
    assert [len(slots) for slots in buffer.host_slots] == ([3, 1] if built else [0, 0])
    assert stats_module.StatBuffer("md5").describe is None
    rows = _rows(buffer.transfer())
    assert rows[offset][:2] == [7.0, 4.0]
    assert rows[transposed][:3] == [11.0, 0.0, 66.0]
    assert rows[channels_last][:2] == [float(images.max()), float(images.min())]
    assert rows[channels_last][2] == pytest.approx(float(images.double().sum()), rel=1e-5, abs=1e-5)
    assert rows[integers][:2] == [2**62 + 1, -7]
    assert rows[negated][:3] == [0.0, -3.0, -6.0]


def test_torch_func_transforms_are_recorded_without_statistics(tmp_path, reducer):
    """Inside vmap and grad, tensors are wrappers without storage: their calls are recorded (with the
    per-sample shape) and null statistics, and capture never fails on them, in-place calls included."""
    x = torch.randn(3, 4)
    results = []

    def run():
        results.append(torch.vmap(torch.sin)(x))
        results.append(torch.vmap(lambda row: row.clone().mul_(2))(x))
        results.append(torch.func.grad(lambda a: torch.sin(a).sum())(x))

    dump, _, _ = capture(tmp_path, run)
    entry = _first_input(dump, "Torch.sin.0.forward")
    assert entry["shape"] == [4] and entry["Max"] is None
    assert "Tensor.mul_.0.forward" in dump["data"]
    assert torch.equal(results[0], torch.sin(x)) and torch.equal(results[1], x * 2)
    assert torch.allclose(results[2], torch.cos(x))


@pytest.mark.parametrize("mode", [{"summary_mode": "md5"}, {"task": "tensor"}])
def test_per_sample_gradients_with_tensors_pending(tmp_path, mode):
    """md5 and tensor modes keep tensors pending; `vmap(grad(f))` calls torch.autograd.grad inside its
    transform, where computing them would make storage-less wrappers: they wait for the step's end."""
    torch.manual_seed(0)
    linear = torch.nn.Linear(4, 2)
    x, y = torch.randn(3, 4), torch.tensor([0, 1, 1])
    params = {name: value.detach() for name, value in linear.named_parameters()}

    def loss(p, xi, yi):
        return torch.nn.functional.cross_entropy(torch.func.functional_call(linear, p, (xi[None],)), yi[None])

    def run():
        linear(x).tanh()
        torch.func.vmap(torch.func.grad(loss), in_dims=(None, 0, 0))(params, x, y)

    dump, _, _ = capture(tmp_path, run, torch.nn.Sequential(linear), level="mix",
                         **({"section": mode} if "summary_mode" in mode else mode))
    entry = _first_input(dump, "Tensor.tanh.0.forward")
    assert entry["Max"] == pytest.approx(float(linear(x).detach().max()))


def test_compiled_region_is_skipped_cleanly(tmp_path):
    torch._dynamo.reset()

    @torch.compile(backend="eager", fullgraph=True)
    def compiled(a, b):
        return torch.relu(a @ b) + 1

    a, b = torch.randn(3, 3), torch.randn(3, 3)
    expected = torch.relu(a @ b) + 1

    results = []

    def run():
        results.append(compiled(a, b))
        torch.neg(results[0])

    dump, _, _ = capture(tmp_path, run)
    assert list(dump["data"]) == ["Torch.neg.0.forward"]
    assert torch.equal(results[0], expected)


def test_torchscript_still_compiles_after_wrapping(tmp_path):
    capture(tmp_path, lambda: torch.neg(torch.ones(1)))  # the wrappers are installed from here on
    model = torch.nn.Sequential(torch.nn.Linear(3, 3), torch.nn.LayerNorm(3), torch.nn.ReLU(), torch.nn.Dropout(0.0))
    scripted = torch.jit.script(model)
    x = torch.randn(2, 3)
    assert torch.equal(scripted(x), model(x))


def test_gradients_unscaled_by_a_grad_scaler_are_described_anew(tmp_path):
    """GradScaler.unscale_ divides the gradients in place without bumping their version counters: records
    after it (clip_grad_norm_'s) describe the unscaled values, not those the parameters_grad records saw."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Linear(8, 3))
    optimizer = torch.optim.SGD(model.parameters(), 1e-3)
    scaler = torch.amp.GradScaler("cpu", init_scale=1024.0)
    unscaled = []

    def run():
        scaler.scale(torch.nn.functional.cross_entropy(model(torch.randn(4, 4)), torch.randint(0, 3, (4,)))).backward()
        scaler.unscale_(optimizer)
        unscaled.extend(float(p.grad.max()) for p in model.parameters())
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1e9)
        scaler.step(optimizer)
        scaler.update()

    dump, _, _ = capture(tmp_path, run, model, level="mix")
    norms = dump["data"]["Torch._foreach_norm.0.forward"]["input_args"][0]
    assert [entry["Max"] for entry in norms] == pytest.approx(unscaled)


@pytest.mark.parametrize("summary_mode", ["statistics", "hash"])
def test_a_fused_optimizer_step_is_seen_by_later_records(tmp_path, summary_mode):
    """`_fused_adamw_` (AdamW(fused=True), nanoGPT's) writes parameters and moments in place without bumping
    their version counters: the moment recorded fresh keeps its zeros, and a later record of the parameter
    describes the updated values."""
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 4)
    optimizer = torch.optim.AdamW(model.parameters(), lr=0.1, fused=True)
    updated = []

    def run():
        model(torch.randn(8, 4)).square().mean().backward()
        optimizer.step()
        updated.append(float(model.weight.detach().max()))
        model.weight.abs()

    data = capture(tmp_path, run, section={"summary_mode": summary_mode})[0]["data"]
    fresh_moment = data["Torch.zeros_like.0.forward"]["output"][0]
    assert fresh_moment["Max"] == fresh_moment["Min"] == 0.0
    assert data["Torch._fused_adamw_.0.forward"]["input_args"][2][0]["Max"] == 0.0  # exp_avgs at call time
    assert data["Tensor.abs.0.forward"]["input_args"][0]["Max"] == pytest.approx(updated[0])

"""Tensor indexing at L1/mix with real MindSpore (CPU, PyNative): `Tensor.__getitem__` is recorded for ints,
slices (also with tensor bounds), boolean masks and tuples, with its backward, in a training step; the
calls MindSpore's indexing makes itself (`Tensor.nonzero` for a mask) are not; a numpy int, which MindSpore
refuses as an index, fails as it does without capture.
"""

from __future__ import annotations

import numpy as np
import pytest

ms = pytest.importorskip("mindspore")
from mindspore import nn, ops  # noqa: E402
from mindspore_support import dump, write_config  # noqa: E402
from msprobe_runtime.mindspore import PrecisionDebugger, seed_all  # noqa: E402

ms.set_context(mode=ms.PYNATIVE_MODE)


class IndexingNet(nn.Cell):
    """A Dense layer whose output is indexed four ways before the loss."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Dense(8, 6)

    def construct(self, x, start):
        h = self.fc(x)
        rows = h[start:start + 2]  # a slice with tensor bounds (a batch offset drawn as a tensor)
        first = h[0]
        columns = h[:, 1:4]
        positive = h[h > 0]
        return rows.sum() + first.sum() + columns.sum() + positive.sum()


def test_indexing_is_recorded_in_a_training_step_with_its_backward(tmp_path):
    seed_all(0)
    net = IndexingNet()
    optimizer = nn.SGD(net.trainable_params(), learning_rate=0.1)
    grad_fn = ms.value_and_grad(net, None, optimizer.parameters)
    x, start = ms.Tensor(np.random.default_rng(0).standard_normal((4, 8)).astype(np.float32)), ms.Tensor(1)
    debugger = PrecisionDebugger(config_path=write_config(tmp_path, level="mix"))
    debugger.start(model=net)
    loss, grads = grad_fn(x, start)
    optimizer(grads)
    debugger.stop()
    debugger.close()
    data = dump(tmp_path)["data"]
    index = [data[f"Tensor.__getitem__.{n}.forward"]["input_args"][1] for n in range(4)]
    bounds = index[0]["value"]
    assert index[0]["type"] == "slice" and bounds[2] is None
    assert [(bound["type"], bound["shape"], bound["Max"]) for bound in bounds[:2]] == [("mindspore.Tensor", [], 1),
                                                                                       ("mindspore.Tensor", [], 3)]
    assert index[1] == {"type": "int", "value": 0}
    assert index[2] == [{"type": "slice", "value": [None, None, None]}, {"type": "slice", "value": [1, 4, None]}]
    assert index[3]["dtype"] == "Bool" and index[3]["shape"] == [4, 6]
    outputs = [data[f"Tensor.__getitem__.{n}.forward"]["output"][0]["shape"] for n in range(4)]
    assert outputs[:3] == [[2, 6], [6], [4, 3]] and len(outputs[3]) == 1
    assert data["Tensor.__getitem__.0.backward"]["output"][0]["shape"] == [4, 6]
    assert not any(name.startswith("Tensor.nonzero") for name in data), "indexing's own calls are not recorded"
    assert np.isfinite(loss.asnumpy())


def test_assignment_through_a_slice_with_tensor_bounds_is_recorded(tmp_path):
    debugger = PrecisionDebugger(config_path=write_config(tmp_path, level="L1"))
    with debugger:
        x = ops.zeros((4, 3), ms.float32)
        start = ms.Tensor(2)
        x[start:] = 1.0
        x[1]
    debugger.close()
    data = dump(tmp_path)["data"]
    assert data["Tensor.__setitem__.0.forward"]["input_args"][1]["value"][0]["Max"] == 2
    assert data["Tensor.__getitem__.0.forward"]["input_args"][1] == {"type": "int", "value": 1}


def test_a_numpy_int_index_fails_as_without_capture(tmp_path):
    """MindSpore 2.10 refuses numpy ints in an index (PyTorch takes them): the same error, and the window closes."""
    x = ms.Tensor(np.arange(6, dtype=np.float32))
    with pytest.raises(RuntimeError) as plain:
        x[np.int64(1):3]
    debugger = PrecisionDebugger(config_path=write_config(tmp_path, level="L1"))
    with debugger:
        with pytest.raises(RuntimeError) as captured:
            x[np.int64(1):3]
        x[1:3]
    debugger.close()
    assert str(captured.value) == str(plain.value)
    assert dump(tmp_path)["data"]["Tensor.__getitem__.1.forward"]["output"][0]["shape"] == [2]

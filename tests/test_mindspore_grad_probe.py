"""The MindSpore gradient probe with several optimizers (real MindSpore, CPU, PyNative): a GAN-like pair of
cells trained through a wrapper cell around two TrainOneStepCells, or by a loop calling two optimizers. Every
optimizer found is probed once; each optimizer call is a step (as the PyTorch probe counts every optimizer's
`step()`, and as msprobe counts MindSpore optimizer calls), its file holding the gradients that call got.
"""

from __future__ import annotations

import csv

import numpy as np
import pytest

ms = pytest.importorskip("mindspore")
from mindspore import mint, nn, ops  # noqa: E402
from mindspore_support import write_config  # noqa: E402
from msprobe_runtime.mindspore import PrecisionDebugger, seed_all  # noqa: E402

ms.set_context(mode=ms.PYNATIVE_MODE)


class Generator(nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc = nn.Dense(4, 8)

    def construct(self, z):
        return ops.tanh(self.fc(z))


class Discriminator(nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc = nn.Dense(8, 1)

    def construct(self, x):
        return self.fc(x)


class DiscriminatorLoss(nn.Cell):
    def __init__(self, generator, discriminator):
        super().__init__()
        self.generator, self.discriminator = generator, discriminator

    def construct(self, real, z):
        fake = ops.stop_gradient(self.generator(z))
        return ops.softplus(-self.discriminator(real)).mean() + ops.softplus(self.discriminator(fake)).mean()


class GeneratorLoss(nn.Cell):
    def __init__(self, generator, discriminator):
        super().__init__()
        self.generator, self.discriminator = generator, discriminator

    def construct(self, real, z):
        return ops.softplus(-self.discriminator(self.generator(z))).mean()


class GANStep(nn.Cell):
    """One training step: the discriminator's update, then the generator's (as MindSpore's DCGAN tutorial)."""

    def __init__(self, step_d, step_g):
        super().__init__()
        self.step_d, self.step_g = step_d, step_g

    def construct(self, real, z):
        return self.step_d(real, z), self.step_g(real, z)


def gan():
    seed_all(0)
    generator, discriminator = Generator(), Discriminator()
    optimizer_d = nn.Adam(discriminator.trainable_params(), learning_rate=0.01)
    optimizer_g = mint.optim.Adam(generator.trainable_params(), lr=0.01)  # one of each optimizer family
    return generator, discriminator, optimizer_d, optimizer_g


def inputs():
    rng = np.random.default_rng(0)
    return (ms.Tensor(rng.standard_normal((4, 8)).astype(np.float32)),
            ms.Tensor(rng.standard_normal((4, 4)).astype(np.float32)))


def summary(tmp_path, step: int) -> dict[str, list[str]]:
    """param_name -> the rest of its row in grad_summary_{step}.csv."""
    with open(tmp_path / "dump" / "rank0" / f"grad_summary_{step}.csv", encoding="utf-8-sig") as handle:
        rows = list(csv.reader(handle))
    assert rows[0] == ["param_name", "max", "min", "norm", "shape"]
    return {row[0]: row[1:] for row in rows[1:]}


def probe(tmp_path, **config) -> PrecisionDebugger:
    return PrecisionDebugger(config_path=write_config(tmp_path, task="grad_probe", grad_probe={"grad_level": "L1"},
                                                      **config))


def test_a_wrapper_cell_around_two_train_steps_probes_both_optimizers(tmp_path):
    generator, discriminator, optimizer_d, optimizer_g = gan()
    train = GANStep(nn.TrainOneStepCell(DiscriminatorLoss(generator, discriminator), optimizer_d),
                    nn.TrainOneStepCell(GeneratorLoss(generator, discriminator), optimizer_g))
    debugger = probe(tmp_path)
    debugger.monitor(train)
    debugger.monitor(optimizer_d)  # already probed: hooked once, its calls counted once
    for _ in range(2):
        train(*inputs())
    debugger.close()
    names_d, names_g = ([param.name for param in optimizer.parameters] for optimizer in (optimizer_d, optimizer_g))
    assert sorted((tmp_path / "dump" / "rank0").glob("grad_summary_*.csv")) == [
        tmp_path / "dump" / "rank0" / f"grad_summary_{step}.csv" for step in range(4)]
    for step, names in enumerate([names_d, names_g] * 2):
        assert list(summary(tmp_path, step)) == names
        assert (tmp_path / "dump" / "rank0" / f"step{step}" / f"{names[0]}.npy").is_file()


def test_a_loop_calling_two_optimizers_counts_each_call_and_reads_its_gradients(tmp_path):
    generator, discriminator, optimizer_d, optimizer_g = gan()
    loss_d, loss_g = DiscriminatorLoss(generator, discriminator), GeneratorLoss(generator, discriminator)
    grad_d = ms.value_and_grad(loss_d, None, optimizer_d.parameters)
    grad_g = ms.value_and_grad(loss_g, None, optimizer_g.parameters)
    debugger = probe(tmp_path, step=[2, 3])
    debugger.monitor([optimizer_d, optimizer_g])
    given = []
    for _ in range(2):
        _, grads = grad_d(*inputs())
        given.append(grads)
        optimizer_d(grads)
        _, grads = grad_g(*inputs())
        given.append(grads)
        optimizer_g(grads)
    debugger.close()
    assert not (tmp_path / "dump" / "rank0" / "grad_summary_1.csv").exists()
    for step, optimizer in ((2, optimizer_d), (3, optimizer_g)):
        rows = summary(tmp_path, step)
        for param, grad in zip(optimizer.parameters, given[step], strict=True):
            assert float(rows[param.name][0]) == pytest.approx(float(grad.asnumpy().max()))


def test_monitor_rejects_what_holds_no_optimizer(tmp_path):
    debugger = probe(tmp_path)
    with pytest.raises(TypeError, match="no optimizer"):
        debugger.monitor(Generator())
    with pytest.raises(TypeError, match="not str"):
        debugger.monitor(["optimizer"])
    debugger.close()


class Wrapping(nn.Optimizer):
    """An optimizer that calls another (as nn.LARS calls the one it wraps; LARS has no CPU kernel)."""

    def __init__(self, inner):
        super().__init__(0.1, inner.parameters)
        self.inner = inner

    def construct(self, gradients):
        return self.inner(gradients)


def test_an_optimizer_wrapping_another_is_one_step(tmp_path):
    """The outer call is the step; the call of the optimizer it wraps is not counted again."""
    seed_all(0)
    generator = Generator()
    train = nn.TrainOneStepCell(nn.WithLossCell(generator, nn.MSELoss()),
                                Wrapping(nn.SGD(generator.trainable_params(), learning_rate=0.1)))
    debugger = probe(tmp_path)
    debugger.monitor(train)
    z = inputs()[1]
    for _ in range(2):
        train(z, ops.zeros((4, 8), ms.float32))
    debugger.close()
    assert sorted(path.name for path in (tmp_path / "dump" / "rank0").glob("*.csv")) == [
        "grad_summary_0.csv", "grad_summary_1.csv"]


def test_the_model_train_callback_probes_models_optimizer_also_one_built_inline(tmp_path):
    """MsprobeStep monitors Model's optimizer when training begins (a monitor() of it before changes nothing)."""
    from msprobe_runtime.mindspore import MsprobeStep

    seed_all(0)
    generator = Generator()
    z = inputs()[1].asnumpy()
    dataset = ms.dataset.NumpySlicesDataset({"z": z, "x": np.zeros((4, 8), np.float32)}, shuffle=False).batch(2)
    model = ms.train.Model(generator, loss_fn=nn.MSELoss(),
                           optimizer=nn.SGD(generator.trainable_params(), learning_rate=0.1))
    debugger = probe(tmp_path)
    model.train(2, dataset, callbacks=[MsprobeStep(debugger)], dataset_sink_mode=False)
    debugger.close()
    assert sorted(path.name for path in (tmp_path / "dump" / "rank0").glob("*.csv")) == [
        f"grad_summary_{step}.csv" for step in range(4)]
    assert list(summary(tmp_path, 0)) == [param.name for param in generator.trainable_params()]


def test_the_model_train_callback_probes_the_optimizer_of_a_train_step_cell_given_to_model(tmp_path):
    """`Model(TrainOneStepWrapper(...))` with no optimizer of Model's own (mindocr, mindyolo): the callback probes
    the optimizer inside the train network."""
    from msprobe_runtime.mindspore import MsprobeStep

    seed_all(0)
    generator = Generator()
    z = inputs()[1].asnumpy()
    dataset = ms.dataset.NumpySlicesDataset({"z": z, "x": np.zeros((4, 8), np.float32)}, shuffle=False).batch(2)
    train = nn.TrainOneStepCell(nn.WithLossCell(generator, nn.MSELoss()),
                                nn.SGD(generator.trainable_params(), learning_rate=0.1))
    debugger = probe(tmp_path)
    ms.train.Model(train).train(2, dataset, callbacks=[MsprobeStep(debugger)], dataset_sink_mode=False)
    debugger.close()
    assert sorted(path.name for path in (tmp_path / "dump" / "rank0").glob("*.csv")) == [
        f"grad_summary_{step}.csv" for step in range(4)]
    assert list(summary(tmp_path, 0)) == [param.name for param in generator.trainable_params()]

"""Training-loop finding, debugger placement and seeding placement."""

from __future__ import annotations

import textwrap
from dataclasses import replace

import msprobe_runtime.pytorch
import pytest
from msprobe_rewriter import project
from msprobe_rewriter.instrument import Options, instrument_text, undo_source_text
from msprobe_rewriter.instrument.markers import strip
from msprobe_rewriter.instrument.transforms import select

HEAD = "import torch\n\n\n"


def run(code: str, *names: str, **options) -> tuple[str, list[str]]:
    opts = Options(**options)
    if names:
        opts = replace(opts, selected=select(names, [], opts.grad_probe))
    out, notes = instrument_text("/project/train.py", code, opts)
    assert undo_source_text(out) == code
    return strip(out), notes


def lines_of(out: str) -> list[str]:
    return [line.strip() for line in out.splitlines()]


def seed_all_after(code: str, anchor: str) -> str:
    """The line the seed transform leaves right after the line `anchor`."""
    lines = lines_of(run(code, "seed")[0])
    return lines[lines.index(anchor) + 1]


def test_epoch_and_batch_loops_wrap_the_batch_loop():
    out, _ = run(HEAD + "def main():\n    model = Net()\n    opt = torch.optim.SGD(model.parameters(), lr=1)\n"
                        "    for epoch in range(3):\n        for x in loader:\n            model(x).sum().backward()\n"
                        "            opt.step()\n", "debugger")
    lines = lines_of(out)
    assert lines.index("debugger = PrecisionDebugger(config_path=os.path.join(os.path.dirname(__file__), "
                       "\"config.json\"))") < lines.index("for epoch in range(3):")
    assert lines[lines.index("for x in loader:") + 1] == "debugger.start(model=model)"


def test_a_loop_over_objects_holding_the_optimizers_is_part_of_the_step():
    """StyleGAN's training_loop.py: `while True:` fetches a batch, then `for phase in phases:` steps each phase's
    `phase.opt` (G and D, their regularisation every few batches): one debugger step per batch, not per phase."""
    out, _ = run(HEAD + "def train(G, D, loader):\n    phases = []\n"
                        "    for name, module in [('G', G), ('D', D)]:\n"
                        "        phases += [dnnlib.EasyDict(module=module, opt=torch.optim.Adam(module.parameters()))]\n"
                        "    while True:\n        x = next(loader)\n        for phase in phases:\n"
                        "            phase.module(x).sum().backward()\n            phase.opt.step()\n"
                        "        batch_idx += 1\n", "debugger")
    lines = lines_of(out)
    assert lines[lines.index("while True:") + 1].startswith("debugger.start(")
    assert lines[lines.index("for phase in phases:") + 1] == "phase.module(x).sum().backward()"


def test_gradient_accumulation_wraps_the_loop_around_the_micro_steps():
    out, _ = run(HEAD + "def main():\n    model = Net()\n    optimizer = torch.optim.AdamW(model.parameters())\n"
                        "    for step in range(10):\n        for micro in range(4):\n            model(x).sum().backward()\n"
                        "        optimizer.step()\n", "debugger")
    lines = lines_of(out)
    assert lines[lines.index("for step in range(10):") + 1] == "debugger.start(model=model)"
    assert lines[lines.index("for micro in range(4):") + 1] == "model(x).sum().backward()"


@pytest.mark.parametrize("step", [
    "    model(x).sum().backward()\n    if (i + 1) % accum == 0:\n        opt.step()\n",
    # MAE's and ConvNeXt's loss scaler, told when to update
    "    loss_scaler(model(x).sum(), opt, update_grad=(i + 1) % accum == 0)\n",
])
def test_a_counted_step_steps_the_debugger_only_when_the_optimizer_steps(step):
    """ConvNeXt's engine.py: `if (data_iter_step + 1) % update_freq == 0: optimizer.step()`: `finally` stops and steps
    under the same condition, so the micro-batches of one update are one dump step (`start` again changes nothing
    while the capture runs)."""
    out, notes = run(HEAD + "model = Net()\nopt = torch.optim.SGD(model.parameters(), lr=1)\n"
                            "for i, x in enumerate(loader):\n" + step, "debugger")
    assert "    finally:\n        if (i + 1) % accum == 0: debugger.stop(); debugger.step()\n" in out
    assert not any("only every few iterations" in note for note in notes), notes


def test_a_condition_the_loop_changes_is_not_evaluated_again():
    """`if accum_step % n == 0:` on a counter the body advances reads differently in `finally`: the note stays."""
    out, notes = run(HEAD + "model = Net()\nopt = torch.optim.SGD(model.parameters(), lr=1)\naccum_step = 0\n"
                            "for x in loader:\n    model(x).sum().backward()\n    accum_step += 1\n"
                            "    if accum_step % 4 == 0:\n        opt.step()\n", "debugger")
    assert "    finally:\n        debugger.stop()\n        debugger.step()\n" in out
    assert any("only every few iterations" in note for note in notes), notes


def test_iterations_that_end_before_the_step_do_not_step_the_debugger():
    """ConvNeXt skips the batches past `num_training_steps_per_epoch` after computing `step` (no call: `start` goes
    after the check); open_clip's `_train_step_eager` returns None for a micro-batch it keeps for later, and the loop
    ends that iteration: the `try` begins after that check, so only an iteration that stepped steps the debugger."""
    code = (HEAD + "model = Net()\nopt = torch.optim.SGD(model.parameters(), lr=1)\n\n\n"
            "def train_step(x, kept):\n    kept.append(x)\n    if len(kept) < accum:\n        return None\n"
            "    model(torch.cat(kept)).sum().backward()\n    opt.step()\n    return kept.clear()\n\n\n"
            "for i, x in enumerate(loader):\n    step = i // accum\n    if step >= steps_per_epoch:\n        continue\n"
            "    result = train_step(x, kept)\n    if result is None:\n        continue\n    log(result)\n")
    out, _ = run(code, "debugger")
    assert ("    if step >= steps_per_epoch:\n        continue\n    debugger.start(model=model)\n"
            "    result = train_step(x, kept)\n    if result is None:\n        continue\n    try:\n        log(result)\n"
            "    finally:\n        debugger.stop()\n        debugger.step()\n") in out


def test_a_string_formatted_with_percent_is_no_condition():
    """fairseq's `with record_function("train_step-%d" % i):` formats a label; it counts nothing."""
    _, notes = run(HEAD + "model = Net()\nopt = torch.optim.SGD(model.parameters(), lr=1)\n"
                          "for i, x in enumerate(loader):\n    with torch.autograd.profiler.record_function(\"step-%d\" % i):\n"
                          "        model(x).sum().backward()\n        opt.step()\n", "debugger")
    assert not any("under a condition" in note for note in notes)


@pytest.mark.parametrize("step", [
    "    with accelerator.accumulate(model):\n        model(x).sum().backward()\n        opt.step()\n",
    "    loss_scaler(model(x).sum(), opt, update_grad=(i + 1) % accum_iter == 0 and ready())\n",
])
def test_a_step_that_skips_between_updates_is_noted(step):
    """accelerate's optimizer steps only when `accumulate` syncs; a loss scaler told by a call when to update: the
    debugger cannot tell when, and steps per iteration."""
    _, notes = run(HEAD + "model = Net()\nopt = torch.optim.SGD(model.parameters(), lr=1)\n"
                          "for i, x in enumerate(loader):\n" + step, "debugger")
    assert any("only every few iterations" in note for note in notes)


def test_a_helper_handed_the_optimizer_steps_it():
    """guided-diffusion: `mp_trainer.optimize(opt)` applies the gradients; `scheduler.step(epoch)` does not."""
    out, notes = run(HEAD + "def main():\n    model = Net()\n    opt = torch.optim.AdamW(model.parameters())\n"
                            "    mp_trainer = MixedPrecisionTrainer(model=model)\n    for step in range(10):\n"
                            "        mp_trainer.backward(model(x).sum())\n        mp_trainer.optimize(opt)\n"
                            "    for epoch in range(3):\n        scheduler.step(epoch)\n", "debugger")
    lines = lines_of(out)
    assert lines[lines.index("for step in range(10):") + 1] == "debugger.start(model=model)"
    assert lines[lines.index("for epoch in range(3):") + 1] == "scheduler.step(epoch)"


def test_a_stepping_function_handed_to_a_call_in_the_loop_is_its_step():
    """ijepa: `train_step` is defined in the loop and run through `gpu_timer(train_step)`, which times it."""
    out, notes = run(HEAD + "def main(loader, model):\n    opt = torch.optim.AdamW(model.parameters())\n"
                            "    for x in loader:\n        def train_step():\n            model(x).sum().backward()\n"
                            "            opt.step()\n            return 0.0\n"
                            "        loss, elapsed = gpu_timer(train_step)\n", "debugger")
    lines = lines_of(out)
    assert lines[lines.index("for x in loader:") + 1].startswith("debugger.start(")
    assert not any("no training loop found" in note for note in notes)


def test_model_found_through_configure_optimizers_and_scaler():
    out, _ = run(HEAD + "def main():\n    net = GPT()\n    optim = net.configure_optimizers(0.1)\n"
                        "    scaler = torch.cuda.amp.GradScaler()\n    for batch in loader:\n"
                        "        scaler.scale(net(batch)).backward()\n        scaler.step(optim)\n        scaler.update()\n",
                 "debugger")
    assert "debugger.start(model=net)" in out


def test_a_trainer_class_loop_starts_with_the_model_it_keeps():
    """The optimizer is built in `__init__` from its `net` parameter, kept as `self.net`: the loop in another
    method reads `self.net` (the global the script happens to name `net` may be another model)."""
    code = ("import torch\n\n\nclass Trainer:\n    def __init__(self, net, loader):\n        self.net = net\n"
            "        self.loader = loader\n        self.opt = torch.optim.SGD(net.parameters(), lr=0.1)\n\n"
            "    def epoch(self):\n        for x in self.loader:\n            self.net(x).sum().backward()\n"
            "            self.opt.step()\n\n\nif __name__ == \"__main__\":\n    net = torch.nn.Linear(2, 1)\n"
            "    Trainer(net, [torch.ones(1, 2)]).epoch()\n")
    assert "debugger.start(model=self.net)" in lines_of(run(code, "debugger")[0])
    given = code.replace("self.opt = torch.optim.SGD(net.parameters(), lr=0.1)", "self.opt = make_optimizer()").replace(
        "self.net", "self.model")  # an optimizer that does not show its model: the model by its usual name
    assert "debugger.start(model=self.model)" in lines_of(run(given, "debugger")[0])


def test_helper_that_receives_the_model_gets_a_module_level_debugger():
    out, notes = run(HEAD + "def train_one_epoch(model, loader, optimizer):\n    for x in loader:\n"
                            "        model(x).sum().backward()\n        optimizer.step()\n\n\n"
                            "def main():\n    model = Net()\n    opt = torch.optim.SGD(model.parameters(), lr=1)\n"
                            "    for epoch in range(3):\n        train_one_epoch(model, loader, opt)\n",
                     "debugger", grad_probe=True)
    lines = lines_of(out)
    assert lines.index("debugger = PrecisionDebugger(config_path=os.path.join(os.path.dirname(__file__), "
                       "\"config.json\"))") < lines.index("def train_one_epoch(model, loader, optimizer):")
    assert "debugger.start(model=model)" in out
    assert any("grad-probe" in note for note in notes)


@pytest.mark.parametrize("taken", ["net_g, net_d = nets", "net_g, net_d = nets[0], nets[1]"])
def test_models_unpacked_from_a_parameter_get_a_module_level_debugger(taken):
    """vits' `train_and_evaluate(rank, epoch, hps, nets, ...)` runs once per epoch and unpacks `net_g, net_d = nets`:
    a debugger created there would restart its step count every epoch."""
    out, _ = run(HEAD + f"def train_and_evaluate(epoch, nets, optims, loader):\n    {taken}\n"
                        "    optim_g, optim_d = optims\n    for x in loader:\n"
                        "        net_d(x).sum().backward()\n        optim_d.step()\n"
                        "        net_g(x).sum().backward()\n        optim_g.step()\n", "debugger")
    lines = lines_of(out)
    assert lines.index("debugger = PrecisionDebugger(config_path=os.path.join(os.path.dirname(__file__), "
                       "\"config.json\"))") < lines.index("def train_and_evaluate(epoch, nets, optims, loader):")
    assert "debugger.start()" in lines


@pytest.mark.parametrize("outer", ["while True:", "for epoch in range(self.epochs):"])
def test_a_package_module_creates_its_debugger_when_it_first_trains(tmp_path, outer):
    """ultralytics' engine/trainer.py (imported by every `from ultralytics import YOLO`, to predict too) and
    stable-baselines3's ppo.py, whose `train()` runs once per rollout: the module level only binds the name, and the
    training method creates the debugger on its first call, so importing the package creates none and later calls
    keep its step count."""
    (tmp_path / "engine").mkdir()
    (tmp_path / "engine" / "__init__.py").write_text("")
    path = tmp_path / "engine" / "trainer.py"
    code = (HEAD + "class Trainer:\n    def train(self):\n        self.model.train()\n"
            f"        {outer}\n            for x in self.loader:\n                self.model(x).sum().backward()\n"
            "                self.optimizer.step()\n")
    out, _ = instrument_text(str(path), code, Options(selected=select(["debugger"], [], False)))
    assert undo_source_text(out) == code
    lines = strip(out).splitlines()
    assert lines[lines.index("from msprobe_runtime.pytorch import PrecisionDebugger") + 1] == "debugger = None"
    created = lines.index(f"        {outer}") - 3
    assert lines[created:created + 3] == [
        "        global debugger", "        if debugger is None:",
        "            debugger = PrecisionDebugger(config_path=os.path.join(os.path.dirname(__file__), \"config.json\"))"]
    compile(strip(out), str(path), "exec")
    script = code + "\n\nif __name__ == \"__main__\":\n    Trainer().train()\n"  # run as a script: made at module level
    lines = strip(instrument_text(str(path), script, Options(selected=select(["debugger"], [], False)))[0]).splitlines()
    assert "debugger = None" not in lines and "        global debugger" not in lines


def test_a_torchrec_train_pipelines_progress_is_the_training_step():
    """torchrec's dlrm_main.py: `pipeline.progress(batched_iterator)` of a TrainPipelineSparseDist runs forward, backward
    and the optimizer step; its `_evaluate` runs the same pipeline's progress under `torch.no_grad()` to predict."""
    code = ("import itertools\n\nimport torch\nfrom torchrec.distributed import TrainPipelineSparseDist\n\n\n"
            "def _evaluate(pipeline: TrainPipelineSparseDist, it):\n    pipeline._model.eval()\n"
            "    with torch.no_grad():\n        while True:\n            try:\n                pipeline.progress(it)\n"
            "            except StopIteration:\n                break\n\n\n"
            "def _train(pipeline: TrainPipelineSparseDist, it):\n    pipeline._model.train()\n"
            "    for i in itertools.count():\n        try:\n            pipeline.progress(it)\n"
            "        except StopIteration:\n            break\n")
    lines = lines_of(run(code, "debugger")[0])
    assert lines.index("debugger = PrecisionDebugger(config_path=os.path.join(os.path.dirname(__file__), "
                       "\"config.json\"))") < lines.index("def _evaluate(pipeline: TrainPipelineSparseDist, it):")
    assert lines.count("debugger.start(model=pipeline._model)") == 1
    assert lines[lines.index("for i in itertools.count():") + 1] == "debugger.start(model=pipeline._model)"


def test_no_training_loop_is_said_and_nothing_added():
    code = HEAD + "def evaluate(model, loader):\n    for x in loader:\n        model(x)\n"
    out, notes = run(code, "debugger")
    assert out == code and notes == []  # a library module: nothing to say
    code += "\n\nif __name__ == \"__main__\":\n    evaluate(Net(), loader)\n"
    out, notes = run(code, "debugger")
    assert out == code and any("no training loop found" in note for note in notes)


def test_mindspore_train_step_function_and_grad_probe():
    code = ("import mindspore as ms\nfrom mindspore import nn\n\n\ndef main():\n    net = Net()\n"
            "    optimizer = nn.Momentum(net.trainable_params(), 0.1, 0.9)\n"
            "    grad_fn = ms.value_and_grad(forward, None, optimizer.parameters)\n\n"
            "    def train_step(x, y):\n        loss, grads = grad_fn(x, y)\n        optimizer(grads)\n        return loss\n\n"
            "    for epoch in range(2):\n        for x, y in ds.create_tuple_iterator():\n            train_step(x, y)\n")
    out, _ = run(code, "debugger", grad_probe=True)
    assert "from msprobe_runtime.mindspore import PrecisionDebugger" in out
    assert "debugger.monitor(optimizer)" in out
    lines = lines_of(out)
    assert lines[lines.index("for x, y in ds.create_tuple_iterator():") + 1] == "debugger.start(model=net)"


@pytest.mark.parametrize(("call", "expected"), [
    ("model.train(2, ds)", "model.train(2, ds, callbacks=[MsprobeStep(debugger)])"),
    ("model.train(2, ds, callbacks=[LossMonitor()])", "model.train(2, ds, callbacks=[MsprobeStep(debugger), LossMonitor()])"),
    ("model.train(2, ds, [LossMonitor()], dataset_sink_mode=False)",
     "model.train(2, ds, [MsprobeStep(debugger), LossMonitor()], dataset_sink_mode=False)"),
    ("cbs = [LossMonitor()]\nmodel.train(2, ds, callbacks=cbs)", "model.train(2, ds, callbacks=[MsprobeStep(debugger)] + cbs)"),
])
def test_mindspore_model_train_gets_the_callback(call, expected):
    code = f"import mindspore as ms\n\nmodel = ms.Model(net, loss, opt)\n{call}\n"
    if "cbs" in call:  # a factory instead of the Model class: Model.train's keywords are the evidence
        code = code.replace("ms.Model(net, loss, opt)", "create_trainer(net, loss, opt)")
    out, _ = run(code, "debugger", target="msprobe")
    assert expected in out
    assert "from msprobe.mindspore import MsprobeStep, PrecisionDebugger" in out


@pytest.mark.parametrize(("code", "expected"), [
    ("from mindspore import Model\n\nModel(net, loss, opt).train(2, ds)\n",
     "Model(net, loss, opt).train(2, ds, callbacks=[MsprobeStep(debugger)])"),
    ("import mindspore as ms\n\nms.Model(net, loss_fn=loss, optimizer=opt).train(2, ds, [cb])\n",
     "ms.Model(net, loss_fn=loss, optimizer=opt).train(2, ds, [MsprobeStep(debugger), cb])"),
], ids=["imported class", "through the module"])
def test_chained_mindspore_model_train_gets_the_callback(code, expected):
    """`Model(...).train(...)` on one line is a Model.train call too, its optimizer read from the construction
    (monitored by msprobe-kit's MsprobeStep itself; with `--target msprobe`, whose MsprobeStep does not, by a line)."""
    out, notes = run(code, "debugger", "grad-probe", grad_probe=True)
    assert expected in out and "monitor(" not in out
    assert not any("no training loop" in note for note in notes)
    out, _ = run(code, "debugger", "grad-probe", grad_probe=True, target="msprobe")
    assert expected in out and "debugger.monitor(opt)" in out


def test_an_optimizer_built_inside_model_is_not_monitored_anew():
    """`Model(net, optimizer=nn.Adam(...))` with `--target msprobe`: monitoring that expression would build a second
    optimizer (msprobe-kit's MsprobeStep monitors it: nothing to say)."""
    code = ("import mindspore as ms\n\nmodel = ms.Model(net, loss_fn=loss, optimizer=ms.nn.Adam(net.trainable_params()))\n"
            "model.train(2, ds)\n")
    out, notes = run(code, "debugger", "grad-probe", grad_probe=True)
    assert "monitor(" not in out and not any("monitor" in note for note in notes)
    out, notes = run(code, "debugger", "grad-probe", grad_probe=True, target="msprobe")
    assert "monitor(" not in out
    assert any("monitor" in note and "yourself" in note for note in notes)


def test_msprobe_has_no_callback_for_hugging_face_or_lightning_trainers():
    code = ("from transformers import Trainer\nimport lightning as L\n\n"
            "Trainer(model=model, args=args).train()\nL.Trainer(max_epochs=1).fit(model)\n")
    out, notes = run(code, "debugger", target="msprobe")
    assert out == code
    assert [note.split(": ", 1)[1] for note in notes] == [
        f"MindStudio Probe has no step callback for this {library} trainer: debugger not added (`--target runtime` "
        "adds msprobe-kit's)" for library in ("transformers", "lightning")]


class Recorder:
    """Stands in for PrecisionDebugger: counts the calls."""

    calls: list[str] = []

    def __init__(self, config_path=None):
        Recorder.calls.append("init")

    def start(self, model=None):
        Recorder.calls.append("start")

    def stop(self):
        Recorder.calls.append("stop")

    def step(self):
        Recorder.calls.append("step")


def test_every_way_out_of_an_iteration_stops_and_steps(monkeypatch):
    monkeypatch.setattr(msprobe_runtime.pytorch, "PrecisionDebugger", Recorder)
    Recorder.calls = []
    code = (HEAD + "class Opt:\n    def step(self):\n        pass\n\n\nopt = Opt()\n\ntry:\n"
                   "    for i in range(10):\n        x = i\n        opt.step()\n        if x == 1:\n            continue\n"
                   "        if i == 3:\n            raise KeyError(i)\nexcept KeyError:\n    pass\n"
                   "for i in range(10):\n    opt.step()\n    if i == 2:\n        break\n")
    out, _ = run(code, "debugger")
    exec(compile(out, "/project/train.py", "exec"), {"__file__": "/project/train.py", "__name__": "x"})
    assert Recorder.calls == ["init"] + ["start", "stop", "step"] * (4 + 3)


def test_micro_batches_ended_before_the_step_take_no_step(monkeypatch):
    """open_clip's legacy loop: `if ((i + 1) % accum_freq) > 0: continue` before the step ends a micro-batch; it
    starts (or keeps) the capture but does not step it: one debugger step per optimizer step."""
    monkeypatch.setattr(msprobe_runtime.pytorch, "PrecisionDebugger", Recorder)
    Recorder.calls = []
    code = (HEAD + "class Opt:\n    def step(self):\n        pass\n\n\nopt = Opt()\n"
                   "for i in range(6):\n    x = float(i)\n    if (i + 1) % 2 > 0:\n        continue\n    opt.step()\n")
    out, notes = run(code, "debugger")
    exec(compile(out, "/project/train.py", "exec"), {"__file__": "/project/train.py", "__name__": "x"})
    assert Recorder.calls == ["init"] + ["start", "start", "stop", "step"] * 3
    assert not any("only every few iterations" in note for note in notes), notes


def test_skipped_iterations_take_no_step(monkeypatch):
    """A resumed run's `if step < resume_step: continue` opening the body runs before `start`: the iterations
    it skips are not captured and step the debugger not, so step N is the same batch as in a fresh run."""
    monkeypatch.setattr(msprobe_runtime.pytorch, "PrecisionDebugger", Recorder)
    Recorder.calls = []
    code = (HEAD + "class Opt:\n    def step(self):\n        pass\n\n\nopt = Opt()\nresume_step = 3\n"
                   "for i in range(5):\n    if i < resume_step:\n        continue\n    opt.step()\n")
    out, _ = run(code, "debugger")
    exec(compile(out, "/project/train.py", "exec"), {"__file__": "/project/train.py", "__name__": "x"})
    assert Recorder.calls == ["init"] + ["start", "stop", "step"] * 2


def test_nested_resume_skip_stays_before_start(monkeypatch):
    """TinyLlama: `if resume:` / `if curr_iter < initial_iter: ... continue` / `else: resume = False`."""
    monkeypatch.setattr(msprobe_runtime.pytorch, "PrecisionDebugger", Recorder)
    Recorder.calls = []
    code = (HEAD + "class Opt:\n    def step(self):\n        pass\n\n\nopt = Opt()\nresume, done = True, 0\n"
                   "for i in range(5):\n    if resume:\n        if done < 3:\n            done += 1\n            continue\n"
                   "        else:\n            resume = False\n    opt.step()\n")
    out, _ = run(code, "debugger")
    lines = lines_of(out)
    assert lines.index("resume = False") < lines.index("debugger.start()")
    exec(compile(out, "/project/train.py", "exec"), {"__file__": "/project/train.py", "__name__": "x"})
    assert Recorder.calls == ["init"] + ["start", "stop", "step"] * 2


def test_guards_after_data_unpacking_stay_before_start(monkeypatch):
    """dlrm: `if j < skip_upto_batch: continue`, `X = unpack_batch(batch)`, `if j >= nbatches: break`, `if X.size(0) %
    ranks: continue`: no forward has run, so `start` goes after them all, and a `break` leaves no capture running."""
    monkeypatch.setattr(msprobe_runtime.pytorch, "PrecisionDebugger", Recorder)
    Recorder.calls = []
    code = (HEAD + "def unpack_batch(b):\n    return b\n\n\ndlrm = torch.nn.Linear(1, 1)\n"
                   "opt = torch.optim.SGD(dlrm.parameters(), lr=0.1)\n"
                   "for j, batch in enumerate(range(8)):\n    if j < 2:\n        continue\n    X = unpack_batch(batch)\n"
                   "    if j >= 6:\n        break\n    if X % 3 == 0:\n        print(X)\n        continue\n"
                   "    dlrm(torch.ones(1)).sum().backward()\n    opt.step()\n")
    out, _ = run(code, "debugger")
    lines = lines_of(out)
    assert lines[lines.index("debugger.start(model=dlrm)") + 1] == "try:"
    exec(compile(out, "/project/train.py", "exec"), {"__file__": "/project/train.py", "__name__": "x"})
    assert Recorder.calls == ["init"] + ["start", "stop", "step"] * 3  # j = 2, 4, 5
    forward = code.replace("    if j >= 6:", "    dlrm(torch.ones(1))\n    if j >= 6:")  # a forward first: start too
    lines = lines_of(run(forward, "debugger")[0])
    assert lines[lines.index("X = unpack_batch(batch)") - 1] == "debugger.start(model=dlrm)"


# --- seeding ------------------------------------------------------------------------------------------
MAIN = "\n\nif __name__ == \"__main__\":\n    main()\n"


def test_seed_goes_after_the_imports_with_the_default_seed():
    out, _ = run(HEAD + "x = torch.randn(3)\n\n\ndef main():\n    pass\n" + MAIN, "seed")
    lines = lines_of(out)
    assert lines.index("seed_all(seed=1234, mode=False, rm_dropout=True)") < lines.index("x = torch.randn(3)")


def test_setup_goes_above_a_main_block_that_imports_and_trains():
    """An `if __name__ == "__main__":` block that imports argparse and then calls main() is no import block:
    seed_all and the debugger go after the imports above it. Put after it (pytorch/examples' DDP tutorial
    scripts), they ran once main() had trained, and the loop's debugger.start() raised NameError."""
    code = (HEAD + "def main():\n    model = Net()\n    opt = torch.optim.SGD(model.parameters(), lr=1)\n"
            "    for x in data:\n        opt.zero_grad()\n        model(x).sum().backward()\n        opt.step()\n\n\n"
            "if __name__ == \"__main__\":\n    import argparse\n    args = argparse.ArgumentParser().parse_args()\n"
            "    main()\n")
    lines = lines_of(run(code, "seed", "debugger")[0])
    main_block = lines.index('if __name__ == "__main__":')
    assert lines.index("seed_all(seed=1234, mode=False, rm_dropout=True)") < main_block
    assert next(index for index, line in enumerate(lines) if line.startswith("debugger = PrecisionDebugger(")) < main_block


def test_seed_all_after_detectron2_setup_takes_no_seed_expression_of_elsewhere():
    """detectron2's default_setup reseeds from the OS while cfg.SEED is -1: seed_all goes right after it, with the
    fixed seed, since the user's seed expression (`args.seed`, bound in main) may not be defined in setup()."""
    code = ("import torch\nfrom detectron2.config import get_cfg\nfrom detectron2.engine import default_setup\n\n\n"
            "def setup(opts):\n    cfg = get_cfg()\n    default_setup(cfg, opts)\n    return cfg\n\n\n"
            "def main(args):\n    torch.manual_seed(args.seed)\n    setup(args)\n\n\n"
            "if __name__ == \"__main__\":\n    main(parse())\n")
    lines = lines_of(run(code, "seed")[0])
    assert lines[lines.index("default_setup(cfg, opts)") + 1] == "seed_all(seed=1234, mode=False, rm_dropout=True)"


def test_literal_seed_is_kept():
    out, _ = run(HEAD + "def main():\n    torch.manual_seed(42)\n" + MAIN, "seed", remove_dropout=False)
    assert "seed_all(seed=42, mode=False, rm_dropout=False)" in out


def test_argparse_seed_goes_after_parse_args_and_before_distributed_init():
    out, _ = run("import argparse\nimport torch\nimport torch.distributed as dist\n\n\ndef main():\n"
                 "    parser = argparse.ArgumentParser()\n    parser.add_argument(\"--seed\", type=int, default=3)\n"
                 "    args = parser.parse_args()\n    dist.init_process_group(\"gloo\")\n    model = Net()\n"
                 "    torch.manual_seed(args.seed)\n" + MAIN, "seed")
    lines = lines_of(out)
    seeded = lines.index("seed_all(seed=args.seed, mode=False, rm_dropout=True)")
    assert lines.index("args = parser.parse_args()") < seeded < lines.index("dist.init_process_group(\"gloo\")")


def test_seed_from_a_parameter_goes_first_in_the_function():
    out, _ = run(HEAD + "def main(cfg):\n    \"\"\"Train.\"\"\"\n    model = Net()\n    torch.manual_seed(cfg.seed)\n"
                 + MAIN, "seed")
    lines = lines_of(out)
    assert lines[lines.index('"""Train."""') + 1] == "seed_all(seed=cfg.seed, mode=False, rm_dropout=True)"


def test_a_training_function_of_a_library_module_gets_seed_all_where_it_seeds():
    """SlowFast's tools/train_net.py (no entry script): `train(cfg)` seeds NumPy and torch with `cfg.RNG_SEED` and runs
    the epochs; run_net.py hands it to `launch_job`. A seeding helper that trains nothing gets nothing."""
    code = (HEAD + "import numpy as np\n\n\ndef train_epoch(model, loader, opt):\n    for x in loader:\n"
            "        model(x).sum().backward()\n        opt.step()\n\n\n"
            "def train(cfg):\n    du.init_distributed_training(cfg)\n    np.random.seed(cfg.RNG_SEED)\n"
            "    torch.manual_seed(cfg.RNG_SEED)\n    model = Net()\n"
            "    for epoch in range(3):\n        train_epoch(model, loader, opt)\n")
    lines = lines_of(run(code, "seed")[0])
    assert lines[lines.index("du.init_distributed_training(cfg)") + 1] == (
        "seed_all(seed=cfg.RNG_SEED, mode=False, rm_dropout=True)")
    helper = HEAD + "def set_seed(seed):\n    torch.manual_seed(seed)\n"
    assert run(helper, "seed")[0] == helper
    started = code.replace("def train(cfg):\n    du.init_distributed_training(cfg)\n",
                           "def train(path):\n    torch.distributed.init_process_group('nccl')\n    cfg = load(path)\n")
    lines = lines_of(run(started, "seed", deterministic=True)[0])  # HCCL reads its settings when communication starts
    assert lines[lines.index("torch.distributed.init_process_group('nccl')") - 1] == (
        "seed_all(seed=1234, mode=True, rm_dropout=True)")


def test_an_mmengine_runner_config_gets_the_seed_unless_it_sets_one():
    """OpenMMLab's tools/train.py builds its runner with `Runner.from_cfg(cfg)` or `RUNNERS.build(cfg)`, which reseed
    everything with `cfg.randomness` (a drawn seed when it has none): the config gets seed_all's seed before the `if`
    choosing between them; a seed the config sets wins."""
    config = pytest.importorskip("mmengine.config")
    code = ("from mmengine.registry import RUNNERS\nfrom mmengine.runner import Runner\n\n\ndef main(cfg):\n"
            "    if 'runner_type' not in cfg:\n        runner = Runner.from_cfg(cfg)\n    else:\n"
            "        runner = RUNNERS.build(cfg)\n    runner.train()\n" + MAIN)
    lines = run(code, "seed")[0].splitlines()
    added = lines[lines.index("    if 'runner_type' not in cfg:") - 3:lines.index("    if 'runner_type' not in cfg:")]
    assert added[0] == '    cfg.randomness = dict(cfg.get("randomness") or {})'
    for given, seed in [({}, 1234), ({"randomness": {"seed": 0, "diff_rank_seed": True}}, 0)]:
        cfg = config.Config(given)
        exec(textwrap.dedent("\n".join(added)), {"cfg": cfg})
        assert cfg.randomness == {**given.get("randomness", {}), "seed": seed}


def test_seed_from_module_level_args():
    out, _ = run(HEAD + "def main():\n    torch.manual_seed(args.seed)\n\n\nif __name__ == \"__main__\":\n"
                        "    args = parse()\n    main()\n", "seed")
    lines = lines_of(out)
    assert lines[lines.index("args = parse()") + 1] == "seed_all(seed=args.seed, mode=False, rm_dropout=True)"


def test_conditional_seed_falls_back_to_the_default_at_module_level():
    out, _ = run(HEAD + "def main():\n    if args.seed is not None:\n        torch.manual_seed(args.seed)\n"
                 "    for x in data:\n        model(x).sum().backward()\n        optimizer.step()\n" + MAIN,
                 "seed", seed=99)
    assert out.splitlines()[1:3] == ["from msprobe_runtime.pytorch import seed_all",
                                     "seed_all(seed=99, mode=False, rm_dropout=True)"]


def test_a_model_files_self_test_is_seeded_under_its_guard():
    """A model file that trains nowhere and tries its model under `__main__`: seeded there, since the training
    script imports it (seeding on import would reseed that script and remove its dropout)."""
    code = HEAD + "def test():\n    print(torch.nn.Dropout(0.5)(torch.ones(4)))\n" + MAIN.replace("main()", "test()")
    lines = run(code, "seed")[0].splitlines()
    assert lines[lines.index('if __name__ == "__main__":') + 1] == "    seed_all(seed=1234, mode=False, rm_dropout=True)"


def test_a_self_test_beside_standard_library_values_is_seeded_under_its_guard():
    """Module-level values the standard library makes (a logger, a namedtuple) draw nothing: importing the module
    must still seed nothing."""
    code = ("import logging\nfrom collections import namedtuple\n\nimport torch\n\n"
            "logger = logging.getLogger(__name__)\nPair = namedtuple('Pair', ['a', 'b'])\n\n\n"
            "def test():\n    print(torch.nn.Linear(2, 2)(torch.ones(2)))\n" + MAIN.replace("main()", "test()"))
    lines = run(code, "seed")[0].splitlines()
    assert lines[lines.index('if __name__ == "__main__":') + 1] == "    seed_all(seed=1234, mode=False, rm_dropout=True)"


def test_a_self_test_after_path_setup_is_seeded_under_its_guard():
    """yolov5's models/yolo.py puts its root on `sys.path` and imports an optional package before its profiling
    `__main__` block, mindyolo's model files fill a registry of configs with a function of their own: that runs
    nothing random, so importing the model file (every script of the project does) seeds nothing."""
    code = ("import platform\nimport sys\nfrom pathlib import Path\n\nimport torch\n\n"
            "FILE = Path(__file__).resolve()\nROOT = FILE.parents[1]\nif str(ROOT) not in sys.path:\n"
            "    sys.path.append(str(ROOT))\nif platform.system() != 'Windows':\n    ROOT = Path(ROOT.name)\n"
            "try:\n    import thop\nexcept ImportError:\n    thop = None\n\n\n"
            "def _cfg(url='', **kwargs):\n    return {'url': url, **kwargs}\n\n\n"
            "default_cfgs = {'yolov5': _cfg(url='')}\n\n\n"
            "def test():\n    print(torch.nn.Linear(2, 2)(torch.ones(2)))\n" + MAIN.replace("main()", "test()"))
    lines = run(code, "seed")[0].splitlines()
    assert lines[lines.index('if __name__ == "__main__":') + 1] == "    seed_all(seed=1234, mode=False, rm_dropout=True)"


def test_a_file_without_a_framework_takes_its_folders(tmp_path, monkeypatch):
    """mindaudio's ECAPA reader.py seeds NumPy and imports no framework; its train script is MindSpore's: the
    seeding must not import torch (absent on a MindSpore machine)."""
    (tmp_path / "train.py").write_text("import mindspore as ms\nfrom reader import Reader\n")
    code = "import numpy as np\n\nnp.random.seed(58)\n\n\nclass Reader:\n    pass\n" + MAIN
    monkeypatch.chdir(tmp_path)
    out, _ = instrument_text("reader.py", code, Options(selected=select(["seed"], [], False)))
    assert "from msprobe_runtime.mindspore import seed_all" in out


def test_determinism_before_communication_goes_before_the_if_that_starts_it():
    """accelerate's examples build the Accelerator in both branches of `if args.with_tracking:` (off by default):
    seed_all(mode=True) goes before the `if`, so the default run gets it too."""
    code = ("import torch\nfrom accelerate import Accelerator\n\n\ndef main(args):\n    if args.with_tracking:\n"
            "        accelerator = Accelerator(log_with='all')\n    else:\n        accelerator = Accelerator()\n"
            "    seed = args.seed + accelerator.process_index\n    torch.manual_seed(seed)\n"
            "    model = torch.nn.Linear(2, 2)\n" + MAIN.replace("main()", "main(parse_args())"))
    lines = run(code, "seed", deterministic=True)[0].splitlines()
    assert lines[lines.index("    if args.with_tracking:") - 1] == "    seed_all(seed=1234, mode=True, rm_dropout=True)"


def test_an_attribute_set_on_the_options_after_parsing_does_not_move_the_seed_past_the_model():
    """DeepSpeed-Chat sets `args.global_rank = dist.get_rank()` after parsing: `seed=args.seed` is known right
    after `parse_args()`, before the model and before communication starts."""
    code = ("import argparse\n\nimport torch\nimport torch.distributed as dist\n\n\ndef main():\n"
            "    parser = argparse.ArgumentParser()\n    parser.add_argument('--seed', type=int, default=7)\n"
            "    args = parser.parse_args()\n    dist.init_process_group('nccl')\n    args.rank = dist.get_rank()\n"
            "    model = torch.nn.Linear(2, 2)\n    torch.manual_seed(args.seed)\n" + MAIN)
    lines = run(code, "seed", deterministic=True)[0].splitlines()
    assert lines[lines.index("    args = parser.parse_args()") + 1] == "    seed_all(seed=args.seed, mode=True, rm_dropout=True)"
    assert sum("seed_all(seed=" in line for line in lines) == 1


def test_determinism_before_communication_started_by_a_project_helper(tmp_path, monkeypatch):
    """DETR, DeiT and MAE start communication in `utils.init_distributed_mode(args)` and seed with the rank after
    it: seed_all(mode=True) goes before that call."""
    (tmp_path / "utils.py").write_text("import torch\n\n\ndef init_distributed_mode(args):\n"
                                       "    torch.distributed.init_process_group(backend='nccl')\n"
                                       "    torch.distributed.barrier()\n\n\ndef get_rank():\n    return 0\n")
    code = ("import torch\nimport utils\n\n\ndef main(args):\n    utils.init_distributed_mode(args)\n"
            "    seed = args.seed + utils.get_rank()\n    torch.manual_seed(seed)\n"
            "    model = torch.nn.Linear(2, 2)\n" + MAIN.replace("main()", "main(parse_args())"))
    monkeypatch.chdir(tmp_path)
    out, _ = instrument_text("main.py", code, Options(selected=select(["seed"], [], False), deterministic=True))
    lines = strip(out).splitlines()
    assert lines[lines.index("    utils.init_distributed_mode(args)") - 1] == (
        "    seed_all(seed=1234, mode=True, rm_dropout=True)")


def test_a_raise_before_the_seeding_keeps_the_users_seed():
    """latent-diffusion's and DeiT's main.py raise on bad options before they seed: the seeding still runs in every run
    that goes on, so seed_all takes the script's seed."""
    code = ("import argparse\n\nimport torch\n\nif __name__ == \"__main__\":\n    parser = argparse.ArgumentParser()\n"
            "    parser.add_argument(\"--seed\", type=int, default=23)\n    parser.add_argument(\"--resume\", default=\"\")\n"
            "    opt = parser.parse_args()\n    if opt.resume and opt.seed:\n        raise ValueError(\"both\")\n"
            "    torch.manual_seed(opt.seed)\n    model = torch.nn.Linear(2, 2)\n")
    lines = run(code, "seed")[0].splitlines()
    assert lines[lines.index("    opt = parser.parse_args()") + 1] == "    seed_all(seed=opt.seed, mode=False, rm_dropout=True)"


def test_the_runtime_is_imported_after_the_code_run_before_the_framework_is():
    """nanochat's scripts set environment variables read when torch is imported (`OMP_NUM_THREADS`) between
    `import os` and `import torch`: the runtime, which imports torch, is imported after them."""
    code = ("import os\nos.environ[\"OMP_NUM_THREADS\"] = \"1\"\nimport torch\nimport numpy as np\n\n"
            "x = torch.randn(3)\n\n\ndef main():\n    pass\n" + MAIN)
    lines = run(code, "seed")[0].splitlines()
    assert lines[:5] == ["import os", 'os.environ["OMP_NUM_THREADS"] = "1"', "import torch", "import numpy as np",
                         "from msprobe_runtime.pytorch import seed_all"]


def test_module_level_setup_follows_the_runtime_import_when_code_runs_between_import_blocks():
    """modded-nanogpt reads its own source (`with open(sys.argv[0]) as f: code = f.read()`) between `import sys`
    and `import torch`: seed_all and the debugger go after the framework's block, where the runtime is imported,
    not after the first block (a NameError when the script starts)."""
    code = ("import os\nimport sys\n\nwith open(sys.argv[0]) as f:\n    code = f.read()\n\nimport torch\n\n"
            "model = torch.nn.Linear(2, 2)\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
            "for step in range(3):\n    model(torch.randn(4, 2)).sum().backward()\n    opt.step()\n")
    lines = [line.split("  # msprobe")[0] for line in run(code)[0].splitlines()]
    at = lines.index("import torch")
    assert lines[at + 1] == "from msprobe_runtime.pytorch import PrecisionDebugger, seed_all"
    assert lines[at + 2].startswith("seed_all(seed=1234")
    assert lines.index("model = torch.nn.Linear(2, 2)") < [i for i, x in enumerate(lines) if x.startswith("debugger =")][0]


def test_a_script_doing_nothing_random_is_not_seeded():
    """A checkpoint converter or a download script: no training, sampling, draws, weights, dropout or seeding."""
    converter = HEAD + ("def convert(src, dst):\n    state = torch.load(src, map_location='cpu')\n"
                        "    torch.save({k.replace('module.', ''): v for k, v in state.items()}, dst)\n"
                        + MAIN.replace("main()", "convert('a.pt', 'b.pt')"))
    assert run(converter, "seed")[0] == converter


def test_library_module_and_already_seeded_script_are_left_alone():
    library = HEAD + "def build():\n    return torch.nn.Linear(2, 2)\n"
    assert run(library, "seed")[0] == library
    seeded = ("from msprobe_runtime.pytorch import seed_all\nimport torch\n\nseed_all(seed=1)\n\n\ndef main():\n"
              "    pass\n" + MAIN)
    assert run(seeded, "seed")[0] == seeded


ENGINE = ("import torch\n\n\ndef train_one_epoch(model, data_loader, optimizer, loss_scaler):\n"
          "    for samples in data_loader:\n        loss = model(samples).mean()\n"
          "        loss_scaler(loss, optimizer, parameters=model.parameters())\n        optimizer.zero_grad()\n")
ENTRY = ("import torch\n\nfrom engine import train_one_epoch\n\n\ndef main():\n    model = torch.nn.Linear(2, 1)\n"
        "    optimizer = torch.optim.AdamW(model.parameters())\n    for epoch in range(3):\n"
        "        train_one_epoch(model, loader, optimizer, scaler)\n\n\nif __name__ == \"__main__\":\n    main()\n")


def test_a_native_scaler_call_is_the_step_of_a_helper_loop():
    """timm/MAE style: `loss_scaler(loss, optimizer, ...)` applies the gradients inside `train_one_epoch`."""
    out, _ = run(ENGINE, "debugger")
    lines = lines_of(out)
    assert lines[lines.index("for samples in data_loader:") + 1] == "debugger.start(model=model)"
    assert lines.index("debugger = PrecisionDebugger(config_path=os.path.join(os.path.dirname(__file__), "
                       "\"config.json\"))") < lines.index("def train_one_epoch(model, data_loader, optimizer, loss_scaler):")


def test_a_helper_handed_to_a_process_and_calling_the_loop_names_the_loop(tmp_path, monkeypatch):
    """pytorch/examples' Hogwild: `mp.Process(target=train, ...)`, and `train` calls `train_one_epoch`."""
    (tmp_path / "engine.py").write_text(ENGINE + "\n\ndef train(model, loader, optimizer):\n"
                                        "    for epoch in range(3):\n        train_one_epoch(model, loader, optimizer, None)\n")
    entry = ("import torch.multiprocessing as mp\n\nfrom engine import train\n\n\nif __name__ == \"__main__\":\n"
             "    p = mp.Process(target=train, args=(model, loader, optimizer))\n    p.start()\n")
    monkeypatch.chdir(tmp_path)
    assert instrument_text("main.py", entry, Options(selected=select(["debugger"], [], False)))[1] == [
        "main.py: the training loop is not in this file but in `train_one_epoch` in engine.py: instrument that file "
        "too (msprobe-instrument --write main.py engine.py); debugger not added here"]


def test_a_helper_a_package_re_exports_is_followed_to_its_module(tmp_path, monkeypatch):
    """pytorch/examples' FSDP T5 script: `from utils import train`, which utils/__init__.py imports from .train_utils."""
    (tmp_path / "utils").mkdir()
    (tmp_path / "utils" / "__init__.py").write_text("from .engine import train_one_epoch\n")
    (tmp_path / "utils" / "engine.py").write_text(ENGINE)
    monkeypatch.chdir(tmp_path)
    entry = ENTRY.replace("from engine import", "from utils import")
    assert instrument_text("main.py", entry, Options(selected=select(["debugger"], [], False)))[1] == [
        "main.py: the training loop is not in this file but in `train_one_epoch` in utils/engine.py: instrument that "
        "file too (msprobe-instrument --write main.py utils/engine.py); debugger not added here"]


@pytest.mark.parametrize(("exported", "found"), [("", True), ("__all__ = ['train_one_epoch']\n", True),
                                               ("__all__ = ['other']\n", False)],
                         ids=["no __all__", "listed in __all__", "left out of __all__"])
def test_a_helper_a_package_re_exports_with_a_star_is_followed_to_its_module(tmp_path, monkeypatch, exported, found):
    """mindocr's `from mindocr.data import build_dataset`, which mindocr/data/__init__.py takes `from .builder
    import *`: `__all__`, when the module gives it, says what the star brings."""
    (tmp_path / "utils").mkdir()
    (tmp_path / "utils" / "__init__.py").write_text("from .engine import *\n")
    (tmp_path / "utils" / "engine.py").write_text(exported + ENGINE)
    monkeypatch.chdir(tmp_path)
    entry = ENTRY.replace("from engine import", "from utils import")
    notes = instrument_text("main.py", entry, Options(selected=select(["debugger"], [], False)))[1]
    assert (notes == ["main.py: the training loop is not in this file but in `train_one_epoch` in utils/engine.py: "
                      "instrument that file too (msprobe-instrument --write main.py utils/engine.py); debugger not "
                      "added here"]) is found, notes


def test_a_loop_in_a_src_layout_package_is_named(tmp_path, monkeypatch):
    """nanotron's run_train.py: `trainer = DistributedTrainer(config_file)` ... `trainer.train(dataloader)`, the
    class in src/nanotron/trainer.py (imported as the installed `nanotron.trainer`)."""
    (tmp_path / "pyproject.toml").write_text('[tool.setuptools.packages.find]\nwhere = ["src"]\n')
    (tmp_path / "src" / "pkg").mkdir(parents=True)
    (tmp_path / "src" / "pkg" / "__init__.py").write_text("")
    (tmp_path / "src" / "pkg" / "trainer.py").write_text(TRAIN_LOOP_CLASS)
    monkeypatch.chdir(tmp_path)
    entry = ("import torch\nfrom pkg.trainer import TrainLoop\n\nif __name__ == \"__main__\":\n"
             "    trainer = TrainLoop(model, data)\n    trainer.run_loop()\n")
    assert instrument_text("run_train.py", entry, Options(selected=select(["debugger"], [], False)))[1] == [
        "run_train.py: the training loop is not in this file but in `TrainLoop.run_loop` in src/pkg/trainer.py: "
        "instrument that file too (msprobe-instrument --write run_train.py src/pkg/trainer.py); debugger not added here"]


def test_a_trainer_built_elsewhere_is_named_by_the_class_its_variable_is_annotated_with(tmp_path, monkeypatch):
    """torchtitan's train.py: `trainer: Trainer | None = None`, `trainer = config.build()`, `trainer.train()`;
    the loop is `Trainer.train` in torchtitan/trainer.py, whose class the annotation names."""
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "trainer.py").write_text(TRAIN_LOOP_CLASS)
    monkeypatch.chdir(tmp_path)
    entry = ("import torch\nfrom pkg.trainer import TrainLoop\n\n\ndef main(config):\n"
             "    trainer: TrainLoop | None = None\n    trainer = config.build()\n    trainer.run_loop()\n\n\n"
             "if __name__ == \"__main__\":\n    main(parse())\n")
    assert instrument_text("train.py", entry, Options(selected=select(["debugger"], [], False)))[1] == [
        "train.py: the training loop is not in this file but in `TrainLoop.run_loop` in pkg/trainer.py: "
        "instrument that file too (msprobe-instrument --write train.py pkg/trainer.py); debugger not added here"]


def test_training_further_on_than_the_helpers_note_follows_is_named_where_the_script_calls_it(tmp_path, monkeypatch):
    """LLaMA-Factory's src/train.py: `run_exp()` of tuner.py calls `run_sft` of sft.py, which builds and runs a
    Hugging Face trainer in workflow.py: the script is told which call trains."""
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "workflow.py").write_text(
        "from transformers import Trainer\n\n\ndef run_workflow(model, args):\n"
        "    Trainer(model=model, args=args).train()\n")
    (tmp_path / "pkg" / "sft.py").write_text(
        "from pkg.workflow import run_workflow\n\n\ndef run_sft(model, args):\n    run_workflow(model, args)\n")
    (tmp_path / "pkg" / "tuner.py").write_text(
        "from pkg.sft import run_sft\n\n\ndef run_exp():\n    run_sft(None, None)\n")
    monkeypatch.chdir(tmp_path)
    entry = "from pkg.tuner import run_exp\n\n\ndef main():\n    run_exp()\n\n\nif __name__ == \"__main__\":\n    main()\n"
    assert instrument_text("train.py", entry, Options(selected=select(["debugger"], [], False)))[1] == [
        "train.py:5: `run_exp` in pkg/tuner.py runs the training, through more project files than msprobe-instrument "
        "follows to its loop or trainer: instrument the file that holds the loop or builds the trainer; debugger not "
        "added here"]


def test_a_module_imported_by_its_path_in_a_larger_tree_is_the_projects(tmp_path, monkeypatch):
    """SlowFast's tools/run_net.py imports `vision.fair.slowfast.tools.train_net` (Meta's internal path, ending in the
    project's name, setup.py's `name="slowfast"`): tools/train_net.py. A library's `mmcv.utils` is not utils/."""
    (tmp_path / "setup.py").write_text('from setuptools import setup\n\nsetup(name="slowfast")\n')
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "train_net.py").write_text(ENGINE)
    (tmp_path / "utils").mkdir()
    (tmp_path / "utils" / "__init__.py").write_text("")
    monkeypatch.chdir(tmp_path)
    entry = ENTRY.replace("from engine import", "from vision.fair.slowfast.tools.train_net import")
    assert instrument_text("tools/run_net.py", entry, Options(selected=select(["debugger"], [], False)))[1] == [
        "tools/run_net.py: the training loop is not in this file but in `train_one_epoch` in tools/train_net.py: "
        "instrument that file too (msprobe-instrument --write tools/run_net.py tools/train_net.py); debugger not "
        "added here"]
    tools = (tmp_path / "tools").resolve()
    assert project.find_module(tools, "mmcv.utils", 0) is None
    assert project.find_module(tools, "slowfast.tools.train_net", 0) is None  # no prefix: not under its name


def test_an_entry_script_whose_loop_is_in_a_project_helper_names_that_file(tmp_path, monkeypatch):
    (tmp_path / "engine.py").write_text(ENGINE)
    (tmp_path / "main.py").write_text(ENTRY)
    monkeypatch.chdir(tmp_path)
    out, notes = instrument_text("main.py", ENTRY, Options(selected=select(["debugger"], [], False)))
    assert out == ENTRY
    assert notes == ["main.py: the training loop is not in this file but in `train_one_epoch` in engine.py: "
                     "instrument that file too (msprobe-instrument --write main.py engine.py); debugger not added here"]
    both = Options(selected=select(["debugger"], [], False), given=frozenset({str(tmp_path / "engine.py")}))
    assert instrument_text("main.py", ENTRY, both)[1] == [
        "main.py: the training loop is not in this file but in `train_one_epoch` in engine.py: this run instruments it; "
        "debugger not added here"]


TRAIN_LOOP_CLASS = ("import torch\n\n\nclass TrainLoop:\n    def __init__(self, model, data):\n        self.model = model\n"
                    "        self.data = data\n        self.opt = torch.optim.AdamW(model.parameters())\n\n"
                    "    def run_loop(self):\n        while True:\n            self.run_step(next(self.data))\n\n"
                    "    def run_step(self, batch):\n        self.model(batch).sum().backward()\n        self.opt.step()\n")
CLASS_ENTRY = ("from train_util import TrainLoop\n\n\ndef main():\n    TrainLoop(make_model(), make_data()).run_loop()\n\n\n"
               "if __name__ == \"__main__\":\n    main()\n")


def test_a_loop_stepping_itself_around_a_critic_loop_is_the_one_wrapped():
    """WGAN, cleanrl SAC: the generator (critic) steps in the outer loop, the critic (actor) in an inner one."""
    code = ("import torch\n\nG = torch.nn.Linear(2, 2)\nD = torch.nn.Linear(2, 1)\n"
            "opt_g = torch.optim.SGD(G.parameters(), lr=0.1)\nopt_d = torch.optim.SGD(D.parameters(), lr=0.1)\n"
            "for x in torch.randn(4, 8, 2):\n    for _ in range(5):\n        D(G(x).detach()).mean().backward()\n"
            "        opt_d.step()\n    (-D(G(x)).mean()).backward()\n    opt_g.step()\n")
    out, notes = run(code, "debugger")
    lines = lines_of(out)
    assert lines[lines.index("for x in torch.randn(4, 8, 2):") + 1] == "debugger.start(model=[G, D])"  # both trained
    assert lines.count("debugger.step()") == 1
    assert any("an optimizer also steps in a loop inside this one" in note for note in notes)


@pytest.mark.parametrize("before, guard", [("", "True"), ("    model = None\n", "model is None")],
                         ids=["built in the loop", "None before the loop"])
def test_a_model_built_inside_the_loop_is_not_passed_before_it_exists(before, guard):
    """`start(model=model)` first in the body would run before `model = ...` (or pass None at L0)."""
    code = (f"import torch\n\n\ndef train(data):\n{before}    for x in data:\n        if {guard}:\n"
            "            model = torch.nn.Linear(2, 1)\n            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
            "        model(x).sum().backward()\n        optimizer.step()\n")
    out, notes = run(code, "debugger")
    lines = lines_of(out)
    assert lines[lines.index("for x in data:") + 1] == "debugger.start()"
    assert any("the model (`model`) is built inside this loop" in note for note in notes)


WARM_UP = ("import copy\nimport torch\n\nmodel = torch.nn.Linear(2, 1)\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
           "initial_state = dict(model=copy.deepcopy(model.state_dict()), optimizer=copy.deepcopy(opt.state_dict()))\n"
           "for step in warmup_steps:\n    model(x).sum().backward()\n    opt.step()\n"
           "model.load_state_dict(initial_state[\"model\"])\nopt.load_state_dict(initial_state[\"optimizer\"])\n"
           "for step in range(10):\n    model(next(data)).sum().backward()\n    opt.step()\n")


def test_a_warm_up_loop_whose_weights_are_put_back_is_not_the_training_loop():
    """modded-nanogpt compiles with a few steps, then restores the model and optimizer saved before them: the
    debugger's steps are the real loop's."""
    out, notes = run(WARM_UP, "debugger")
    lines = lines_of(out)
    assert lines.count("debugger.start(model=model)") == 1
    assert lines[lines.index("for step in range(10):") + 1] == "debugger.start(model=model)"
    assert lines.index("initial_state = dict(model=copy.deepcopy(model.state_dict()), "
                       "optimizer=copy.deepcopy(opt.state_dict()))") < lines.index(
        "debugger = PrecisionDebugger(config_path=os.path.join(os.path.dirname(__file__), \"config.json\"))")
    assert notes == ["/project/train.py:7: this loop steps the optimizer, but `model.load_state_dict("
                     "initial_state[\"model\"])` (line 10) puts back the weights saved before it (line 6): a warm-up "
                     "whose steps are thrown away, not the training loop; the debugger is not added around it"]


def test_weights_restored_from_a_best_copy_the_loop_keeps_do_not_make_it_a_warm_up():
    """The transfer-learning tutorial saves `best = copy.deepcopy(model.state_dict())` before and on each better
    epoch, and loads the best at the end: that loop trains."""
    code = ("import copy\nimport torch\n\n\ndef train(model, opt, data):\n    best = copy.deepcopy(model.state_dict())\n"
            "    for epoch in range(3):\n        for x in data:\n            model(x).sum().backward()\n"
            "            opt.step()\n        if better():\n            best = copy.deepcopy(model.state_dict())\n"
            "    model.load_state_dict(best)\n")
    lines = lines_of(run(code, "debugger")[0])
    assert lines[lines.index("for x in data:") + 1] == "debugger.start(model=model)"


def test_a_loop_that_steps_through_a_method_of_its_class_is_wrapped():
    """improved-diffusion's TrainLoop.run_loop: `self.run_step(...)` applies the gradients."""
    lines = lines_of(run(TRAIN_LOOP_CLASS, "debugger")[0])
    assert lines[lines.index("while True:") + 1] == "debugger.start(model=self.model)"


def test_an_entry_script_training_through_a_project_class_is_seeded_and_told(tmp_path, monkeypatch):
    """improved-diffusion's image_train.py names no framework: its training is TrainLoop's."""
    (tmp_path / "train_util.py").write_text(TRAIN_LOOP_CLASS)
    monkeypatch.chdir(tmp_path)
    out, notes = instrument_text("main.py", CLASS_ENTRY, Options())
    assert "seed_all(seed=1234, mode=False, rm_dropout=True)" in lines_of(strip(out))
    assert notes == ["main.py: the training loop is not in this file but in `TrainLoop.run_loop` in train_util.py: "
                     "instrument that file too (msprobe-instrument --write main.py train_util.py); debugger not added here"]
    plain = "import sys\n\n\ndef main():\n    print(sys.argv)\n\n\nif __name__ == \"__main__\":\n    main()\n"
    assert instrument_text("tool.py", plain, Options()) == (plain, [])  # not a training script: nothing, no note


def test_an_entry_script_training_through_a_factory_built_class_is_told(tmp_path, monkeypatch):
    """mindyolo's train.py: `trainer = create_trainer(...)` returns a Trainer whose train() holds the loop."""
    factory = TRAIN_LOOP_CLASS + "\n\ndef create_loop(model, data):\n    return TrainLoop(model, data)\n"
    (tmp_path / "train_util.py").write_text(factory)
    monkeypatch.chdir(tmp_path)
    entry = CLASS_ENTRY.replace("import TrainLoop", "import create_loop").replace(
        "TrainLoop(make_model(), make_data()).run_loop()", "loop = create_loop(make_model(), make_data())\n    loop.run_loop()")
    assert instrument_text("main.py", entry, Options())[1] == [
        "main.py: the training loop is not in this file but in `TrainLoop.run_loop` in train_util.py: "
        "instrument that file too (msprobe-instrument --write main.py train_util.py); debugger not added here"]


STEPPING_TRAINER = ("import torch\n\n\nclass Trainer:\n    def __init__(self, cfg, model):\n        self.model = model\n"
                    "        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n\n"
                    "    def train_step(self, sample):\n        self.optimizer.zero_grad()\n        self.backward(sample)\n"
                    "        self.optimizer.step()\n\n    def backward(self, sample):\n"
                    "        self.model(sample).sum().backward()\n\n    def valid_step(self, sample):\n"
                    "        return self.model(sample)\n")
TRAINER_ENTRY = ("import torch\nfrom trainer import Trainer\n\n\ndef main(cfg):\n    model = torch.nn.Linear(4, 1)\n"
                 "    trainer = Trainer(cfg, model)\n    for epoch in range(2):\n        for sample in torch.randn(8, 2, 4):\n"
                 "            trainer.{method}(sample)\n\n\nif __name__ == \"__main__\":\n    main(None)\n")


def test_a_loop_stepping_through_a_method_of_a_project_object_is_wrapped(tmp_path, monkeypatch):
    """fairseq's `trainer.train_step(samples)`, a CycleGAN's `model.optimize_parameters()`: the method of a
    project class applies the gradients once per call; the model the object was built with is started."""
    (tmp_path / "trainer.py").write_text(STEPPING_TRAINER)
    monkeypatch.chdir(tmp_path)
    options = Options(selected=select(["debugger"], [], False))
    out, notes = instrument_text("train.py", TRAINER_ENTRY.format(method="train_step"), options)
    lines = lines_of(strip(out))
    assert lines[lines.index("for sample in torch.randn(8, 2, 4):") + 1] == "debugger.start(model=model)"
    assert not any("no training loop" in note for note in notes)
    out, notes = instrument_text("train.py", TRAINER_ENTRY.format(method="valid_step"), options)
    assert "debugger.start" not in out and any("no training loop" in note for note in notes)
    passed = ("import torch\nfrom trainer import Trainer\n\n\ndef train(trainer, data):\n    for sample in data:\n"
              "        trainer.train_step(sample)\n\n\ndef main(cfg, data):\n"
              "    train(Trainer(cfg, torch.nn.Linear(4, 1)), data)\n    trainer = Trainer(cfg, torch.nn.Linear(4, 1))\n"
              "    train(trainer, data)\n\n\nif __name__ == \"__main__\":\n    main(None, [])\n")
    lines = lines_of(strip(instrument_text("train.py", passed, options)[0]))
    assert lines[lines.index("for sample in data:") + 1] == "debugger.start(model=trainer.model)"  # what the class trains


def test_a_loop_stepping_through_a_method_of_a_class_of_the_file_is_wrapped():
    code = (STEPPING_TRAINER + "\n\ndef main(cfg, data):\n    net = torch.nn.Linear(4, 1)\n    trainer = Trainer(cfg, net)\n"
            "    for sample in data:\n        trainer.train_step(sample)\n")
    lines = lines_of(run(code, "debugger")[0])
    assert lines[lines.index("for sample in data:") + 1] == "debugger.start(model=net)"


def test_a_loop_over_the_optimizers_is_one_step_of_the_loop_calling_it():
    """modded-nanogpt's `for opt in self.optimizers: opt.step()` steps every optimizer once: the caller's loop is
    the training loop, not that one (it would start and stop the debugger once per optimizer)."""
    code = ("import torch\n\n\nclass Manager:\n    def __init__(self, model):\n        self.model = model\n"
            "        self.optimizers = [torch.optim.SGD(model.parameters(), lr=0.1), torch.optim.Adam(model.parameters())]\n\n"
            "    def step_optimizers(self):\n        for opt in self.optimizers:\n            opt.step()\n\n\n"
            "def main():\n    model = torch.nn.Linear(2, 2)\n    manager = Manager(model)\n    for step in range(10):\n"
            "        model(torch.randn(4, 2)).sum().backward()\n        manager.step_optimizers()\n")
    lines = lines_of(run(code, "debugger")[0])
    assert lines[lines.index("for step in range(10):") + 1] == "debugger.start(model=model)"
    assert lines[lines.index("for opt in self.optimizers:") + 1] == "opt.step()"


def test_project_modules_that_import_each_other_are_analysed_once(tmp_path, monkeypatch):
    """Each module's stepping methods are found once: trainer.py asks about train.py's `Helper`, whose module
    asks about trainer.py's `Trainer` in turn."""
    trainer = STEPPING_TRAINER.replace("import torch\n", "import torch\nfrom train import Helper\n", 1).replace(
        "        self.optimizer.step()\n", "        self.optimizer.step()\n        helper = Helper()\n        helper.log()\n")
    (tmp_path / "trainer.py").write_text(trainer)
    code = TRAINER_ENTRY.format(method="train_step") + "\n\nclass Helper:\n    def log(self):\n        pass\n"
    (tmp_path / "train.py").write_text(code)
    monkeypatch.chdir(tmp_path)
    out, _ = instrument_text("train.py", code, Options(selected=select(["debugger"], [], False)))
    assert "debugger.start(model=model)" in lines_of(strip(out))


SETUP_HELPERS = ("import torch\n\n\ndef setup(args):\n    torch.manual_seed(args.seed)\n\n\n"
                 "def set_seed(s):\n    torch.manual_seed(s)\n")
SETUP_ENTRY = ("import argparse\n\nimport torch\nfrom helpers import set_seed, setup\n\n\ndef main(args):\n    {call}\n"
               "    model = torch.nn.Linear(2, 1)\n    opt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
               "    for x in torch.randn(3, 2):\n        model(x).sum().backward()\n        opt.step()\n\n\n"
               "if __name__ == \"__main__\":\n    main(argparse.ArgumentParser().parse_args())\n")


@pytest.mark.parametrize(("call", "expected"), [
    ("setup(args)", "seed_all(seed=1234, mode=False, rm_dropout=True)"),  # detectron2's default_setup(cfg, args)
    ("set_seed(args.seed)", "seed_all(seed=args.seed, mode=False, rm_dropout=True)"),
    ("torch.manual_seed(torch.initial_seed() + 1)", "seed_all(seed=1234, mode=False, rm_dropout=True)"),
])
def test_only_a_seed_is_taken_for_seed_all(tmp_path, monkeypatch, call, expected):
    """A helper that seeds somewhere inside says nothing about its arguments: `setup(args)` gave
    `seed_all(seed=args)`, which raised at startup."""
    (tmp_path / "helpers.py").write_text(SETUP_HELPERS)
    monkeypatch.chdir(tmp_path)
    code = SETUP_ENTRY.format(call=call)
    out, _ = instrument_text("train.py", code, Options(selected=select(["seed"], [], False)))
    assert expected in lines_of(strip(out))


def test_seeds_from_entropy_get_the_fixed_seed_where_they_vary():
    """A seed variable given a clock value when no seed was given gets the fixed seed there (and seed_all
    takes the variable); seeding calls that draw from entropy by themselves get it as their argument."""
    code = ("import argparse\nimport random\nimport time\n\nimport numpy as np\nimport torch\n\n\ndef main():\n"
            "    parser = argparse.ArgumentParser()\n    parser.add_argument(\"--seed\", type=int, default=None)\n"
            "    args = parser.parse_args()\n    if args.seed is None:\n        args.seed = int(time.time()) % 100_000\n"
            "    torch.manual_seed(args.seed)\n    random.seed()\n    np.random.seed(None)\n"
            "    g = torch.Generator().manual_seed(torch.seed())\n    model = torch.nn.Linear(2, 2)\n\n\n"
            "if __name__ == \"__main__\":\n    main()\n")
    out, _ = run(code, "seed")
    lines = lines_of(out)
    assert lines[lines.index("args.seed = 1234") + 1] == "seed_all(seed=args.seed, mode=False, rm_dropout=True)"
    assert {"torch.manual_seed(args.seed)", "random.seed(1234)", "np.random.seed(1234)",
            "g = torch.Generator().manual_seed(1234)"} <= set(lines)


def test_a_spawned_worker_handed_the_options_seeds_with_their_seed():
    """MoCo v3's main_moco.py: `main()` parses `--seed` (None by default) and seeds only under `if args.seed is not
    None:`, which `mp.spawn`'s processes never run; they start `main_worker(gpu, ngpus_per_node, args)`, which
    gets the options: seed_all goes first there, with their seed."""
    code = ("import argparse\n\nimport torch\nimport torch.multiprocessing as mp\n\n"
            "parser = argparse.ArgumentParser()\nparser.add_argument('--seed', default=None, type=int)\n\n\n"
            "def main():\n    args = parser.parse_args()\n    if args.seed is not None:\n"
            "        torch.manual_seed(args.seed)\n    mp.spawn(main_worker, nprocs=2, args=(2, args))\n\n\n"
            "def main_worker(gpu, ngpus_per_node, args):\n    model = torch.nn.Linear(2, 2)\n"
            "    opt = torch.optim.SGD(model.parameters(), lr=0.1)\n    for x in torch.randn(4, 8, 2):\n"
            "        model(x).sum().backward()\n        opt.step()\n\n\nif __name__ == '__main__':\n    main()\n")
    assert seed_all_after(code, "def main_worker(gpu, ngpus_per_node, args):") == (
        "seed_all(seed=args.seed if args.seed is not None else 1234, mode=False, rm_dropout=True)")
    assert "seed_all(" not in run(code.replace("args=(2, args)", "args=(2,)"), "seed")[0].split("def main():")[1]


def test_seed_all_goes_after_a_fallback_that_fills_the_seed_in():
    code = ("import torch\n\n\ndef main():\n    args = parse_args()\n    if args.seed is None:\n"
            "        args.seed = pick_seed()\n    torch.manual_seed(args.seed)\n    model = torch.nn.Linear(2, 2)\n\n\n"
            "if __name__ == \"__main__\":\n    main()\n")
    assert seed_all_after(code, "args.seed = pick_seed()") == "seed_all(seed=args.seed, mode=False, rm_dropout=True)"


def test_a_drawn_fallback_seed_is_fixed_where_it_is_drawn():
    """pytorch/examples dcgan: one random fallback seed, passed to `random.seed` and `torch.manual_seed`. Fixed
    at the draw, a `--manualSeed` given still wins, and every call (and the log line) uses the same seed."""
    code = ("import argparse\nimport random\n\nimport torch\n\nparser = argparse.ArgumentParser()\n"
            "parser.add_argument(\"--manualSeed\", type=int)\nopt = parser.parse_args()\n"
            "if opt.manualSeed is None:\n    opt.manualSeed = random.randint(1, 10000)\n"
            "random.seed(opt.manualSeed)\ntorch.manual_seed(opt.manualSeed)\nmodel = torch.nn.Linear(2, 2)\n"
            "if __name__ == \"__main__\":\n    print(model)\n")
    assert seed_all_after(code, "opt.manualSeed = 1234") == "seed_all(seed=opt.manualSeed, mode=False, rm_dropout=True)"
    lines = lines_of(run(code, "seed")[0])
    assert "random.seed(opt.manualSeed)" in lines and "torch.manual_seed(opt.manualSeed)" in lines


def test_a_seed_not_named_as_one_is_fixed_at_the_seeding_call():
    """`stamp = time.time()` may name a run folder too: the seeding call gets the fixed seed, not the variable."""
    code = ("import time\n\nimport torch\n\nstamp = int(time.time())\nrun_dir = f\"runs/{stamp}\"\n"
            "torch.manual_seed(stamp)\nmodel = torch.nn.Linear(2, 2)\nif __name__ == \"__main__\":\n    print(model)\n")
    lines = lines_of(run(code, "seed")[0])
    assert "stamp = int(time.time())" in lines and "torch.manual_seed(1234)" in lines


def test_seeding_under_the_main_guard_keeps_the_users_seed():
    """cleanrl, pyGAT: the seed comes from the command line inside `if __name__ == "__main__":`."""
    code = ("import random\n\nimport torch\n\n\ndef parse_args():\n    return None\n\n\n"
            "if __name__ == \"__main__\":\n    args = parse_args()\n    random.seed(args.seed)\n"
            "    torch.manual_seed(args.seed)\n    model = torch.nn.Linear(2, 2)\n")
    assert seed_all_after(code, "args = parse_args()") == "seed_all(seed=args.seed, mode=False, rm_dropout=True)"
    assert "seed_all(seed=1234, mode=False, rm_dropout=True)" not in lines_of(run(code, "seed")[0])


@pytest.mark.parametrize("setup, started", [
    # CycleGAN, cleanrl SAC: one optimizer over two models' parameters
    ("G = torch.nn.Linear(2, 2)\nF = torch.nn.Linear(2, 2)\nmodel = torch.nn.Sequential(G, F)\n"
     "opt = torch.optim.Adam(itertools.chain(G.parameters(), F.parameters()))\nopt_b = opt\n", "[G, F]"),
    # a backbone and a head with optimizers of their own: one model, hooked once, named as usual
    ("model = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.Linear(2, 1))\n"
     "opt = torch.optim.SGD(model.head.parameters(), lr=0.1)\nopt_b = torch.optim.SGD(model.base.parameters())\n",
     "model"),
], ids=["two models, one optimizer", "parts of one model"])
def test_every_model_the_optimizers_update_is_started(setup, started):
    code = (f"import itertools\n\nimport torch\n\n{setup}for x in torch.randn(4, 8, 2):\n"
            "    model(x).sum().backward()\n    opt.step()\n    opt_b.step()\n")
    out, _ = run(code, "debugger")
    lines = lines_of(out)
    assert lines[lines.index("for x in torch.randn(4, 8, 2):") + 1] == f"debugger.start(model={started})"


def test_the_gradient_probe_monitors_every_model():
    code = ("import torch\n\n\ndef main():\n    G = torch.nn.Linear(2, 2)\n    D = torch.nn.Linear(2, 1)\n"
            "    opt_g = torch.optim.SGD(G.parameters(), lr=0.1)\n    opt_d = torch.optim.SGD(D.parameters(), lr=0.1)\n"
            "    for x in torch.randn(4, 8, 2):\n        D(G(x)).sum().backward()\n        opt_g.step()\n"
            "        opt_d.step()\n")
    out, _ = run(code, "debugger", grad_probe=True)
    assert "    debugger.monitor([G, D])" in out.splitlines()



MS_GAN_CELLS = '''from mindspore import nn


class GenTrainOneStepCell(nn.Cell):
    def __init__(self, netG, netD, optimizerG):
        super().__init__()
        self.net, self.optimizerG = nn.WithLossCell(netG, netD), optimizerG

    def construct(self, noise):
        grads = self.grad(self.net, self.weights)(noise)
        return self.optimizerG(grads)


class DisTrainOneStepCell(nn.TrainOneStepCell):
    pass
'''
MS_GAN_TRAIN = ("import mindspore as ms\nfrom mindspore import nn\nfrom cells import DisTrainOneStepCell, GenTrainOneStepCell\n\n\n"
                "def main(args):\n    netG, netD = Generator(), Discriminator()\n"
                "    optimizerG = nn.Adam(netG.trainable_params())\n    optimizerD = nn.Adam(netD.trainable_params())\n"
                "    netG_train = GenTrainOneStepCell(netG, netD, optimizerG)\n"
                "    netD_train = DisTrainOneStepCell(nn.WithLossCell(netD, loss), optimizerD, args.clip)\n"
                "    for real, noise in data:\n        netD_train(real, noise)\n        netG_train(noise)\n")


@pytest.mark.parametrize("imported", ["from", "module"])
def test_mindspore_train_step_cells_of_the_project_are_steps(tmp_path, monkeypatch, imported):
    """A MindSpore GAN's own train-step cells (mindspore models' WGAN, CGAN, CycleGAN): one whose `construct`
    applies its optimizer, one subclassing `nn.TrainOneStepCell`; the networks built outside go to start(). Also
    built as attributes of the imported module (CDAN's `new_trainer.CustomTrainOneStepCell_G(...)`)."""
    (tmp_path / "cells.py").write_text(MS_GAN_CELLS)
    monkeypatch.chdir(tmp_path)
    code = MS_GAN_TRAIN if imported == "from" else MS_GAN_TRAIN.replace(
        "from cells import DisTrainOneStepCell, GenTrainOneStepCell", "import cells").replace(
        "= GenTrainOneStepCell(", "= cells.GenTrainOneStepCell(").replace("= DisTrainOneStepCell(", "= cells.DisTrainOneStepCell(")
    out, notes = instrument_text("train.py", code, Options(selected=select(["debugger"], [], False)))
    lines = lines_of(strip(out))
    assert lines[lines.index("for real, noise in data:") + 1] == "debugger.start(model=[netD, netG])"
    assert not any("no training loop" in note for note in notes)
    out, _ = instrument_text("train.py", code, Options(selected=select(["debugger"], [], True), grad_probe=True))
    assert "debugger.monitor([netD_train, netG_train])" in lines_of(strip(out))  # both cells' optimizers


@pytest.mark.parametrize("call", ["train_net(0, step_cell, data)", "train_net(0, data=data, cell=step_cell)",
                                  "self.train_net(0, step_cell, data)"])
def test_a_train_step_cell_handed_to_the_function_that_loops_is_its_step(call):
    """mindspore-lab/models' ECAPA-TDNN: `train_net(rank, model_constructed, ...)` loops over `model(data, labels)`,
    `model` being the TrainOneStepWithLossScaleCell its caller built."""
    method = call.startswith("self.")
    header = "class Runner:\n    def train_net(self, rank, cell, data):\n" if method else "def train_net(rank, cell, data):\n"
    body = "    for x, y in data:\n        cell(x, y)\n"
    if method:  # called by another method of its class
        body = "".join("    " + line + "\n" for line in body.splitlines()) + f"\n    def run(self):\n        {call}\n"
    code = ("import mindspore as ms\nfrom mindspore import nn\n\n\n" + header + body + "\n\n"
            "net = nn.WithLossCell(nn.Dense(2, 1), nn.MSELoss())\n"
            "step_cell = nn.TrainOneStepCell(net, nn.SGD(net.trainable_params()))\n"
            + ("Runner().run()" if method else call) + "\n")
    lines = lines_of(run(code, "debugger")[0])
    assert lines[lines.index("for x, y in data:") + 1].startswith("debugger.start(")


@pytest.mark.parametrize(("code", "loop", "start"), [
    # cluster_gan, cleanrl ppo_rnd, the captioning tutorial: the parameter list is built first, then given.
    ("import itertools\n\nimport torch\n\nG = torch.nn.Linear(2, 2)\nE = torch.nn.Linear(2, 2)\n"
     "params = itertools.chain(G.parameters(), E.parameters())\nopt = torch.optim.Adam(params)\n"
     "for x in torch.randn(4, 8, 2):\n    E(G(x)).sum().backward()\n    opt.step()\n",
     "for x in torch.randn(4, 8, 2):", "debugger.start(model=[G, E])"),
    # diffusers' DreamBooth LoRA: the UNet's parameters, and the text encoder's added under a flag.
    ("import torch\n\nunet = torch.nn.Linear(2, 2)\ntext_encoder = torch.nn.Linear(2, 2)\n"
     "params = list(filter(lambda p: p.requires_grad, unet.parameters()))\nif train_text_encoder:\n"
     "    params = params + list(text_encoder.parameters())\nopt = torch.optim.AdamW(params)\n"
     "for x in torch.randn(4, 8, 2):\n    unet(text_encoder(x)).sum().backward()\n    opt.step()\n",
     "for x in torch.randn(4, 8, 2):", "debugger.start(model=[unet, text_encoder])"),
    # diffusers' textual inversion trains the text encoder's input embeddings only: the text encoder is the
    # model (not the frozen UNet that the script also switches to training mode).
    ("import torch\n\nunet = torch.nn.Linear(2, 2)\ntext_encoder = torch.nn.Embedding(4, 2)\nunet.train()\n"
     "opt = torch.optim.AdamW(text_encoder.get_input_embeddings().parameters())\n"
     "for x in torch.randint(0, 4, (4, 8)):\n    unet(text_encoder(x)).sum().backward()\n    opt.step()\n",
     "for x in torch.randint(0, 4, (4, 8)):", "debugger.start(model=text_encoder)"),
], ids=["parameters in a variable", "every assignment of it", "a submodule's module"])
def test_the_started_model_is_the_one_the_optimizer_updates(code, loop, start):
    lines = lines_of(run(code, "debugger")[0])
    assert lines[lines.index(loop) + 1] == start


def test_a_step_past_a_threshold_is_noted():
    """Off-policy RL (cleanrl DQN, DDPG, SAC): the optimizer first steps after `learning_starts` env steps."""
    code = ("import torch\n\nq = torch.nn.Linear(2, 1)\nopt = torch.optim.Adam(q.parameters())\n"
            "for global_step in range(100):\n    if global_step > 10:\n        q(torch.randn(2)).sum().backward()\n"
            "        opt.step()\n")
    _, notes = run(code, "debugger")
    assert any("steps here only when `global_step > 10`" in note for note in notes)


def test_a_comparison_whose_else_steps_too_is_no_threshold():
    """Swin's SimMIM: `if ACCUMULATION_STEPS > 1:` accumulates, its `else:` steps every iteration."""
    code = ("import torch\n\nq = torch.nn.Linear(2, 1)\nopt = torch.optim.Adam(q.parameters())\n"
            "for i in range(100):\n    q(torch.randn(2)).sum().backward()\n    if ACCUMULATION_STEPS > 1:\n"
            "        if (i + 1) % ACCUMULATION_STEPS == 0:\n            opt.step()\n    else:\n        opt.step()\n")
    _, notes = run(code, "debugger")
    assert not any("steps here only when" in note for note in notes)


def test_a_warm_up_branch_that_steps_and_continues_is_no_threshold():
    """PyTorch-GAN's ESRGAN: while warming up, G steps alone and the iteration ends; afterwards G and D step: every
    iteration steps an optimizer."""
    code = ("import torch\n\ng = torch.nn.Linear(2, 1)\nd = torch.nn.Linear(1, 1)\n"
            "opt_g = torch.optim.Adam(g.parameters())\nopt_d = torch.optim.Adam(d.parameters())\n"
            "for i in range(100):\n    if i < warmup:\n        g(torch.randn(2)).sum().backward()\n"
            "        opt_g.step()\n        continue\n    d(g(torch.randn(2))).sum().backward()\n    opt_g.step()\n"
            "    opt_d.step()\n")
    _, notes = run(code, "debugger")
    assert not any("steps here only when" in note for note in notes), notes


PARAM_GROUPS = ("import torch\n\nimport utils\n\n\ndef groups(cfg):\n    return [{{'params': cfg.weights}}]\n\n\n"
                "def main(args, loader):\n    student = build(args)\n{setup}    opt = torch.optim.AdamW({groups})\n"
                "    for x in loader:\n        student(x).sum().backward()\n        opt.step()\n")


@pytest.mark.parametrize("setup, groups, started", [
    # DINO: an imported helper named for parameters, the student moved to the GPU and wrapped in DDP
    ("    student = student.cuda()\n    student = torch.nn.parallel.DistributedDataParallel(student)\n",
     "utils.get_params_groups(student)", "student"),
    # MAE: layer-wise decay groups through a variable, the model moved with `.to(device)`
    ("    student.to(args.device)\n    params = utils.param_groups_lrd(student, 0.05)\n", "params", "student"),
    # not a network there: a config given to a parameter-named helper, a helper that reads no parameters
    ("", "utils.get_params_groups(args)", None),
    ("    student = student.cuda()\n", "groups(student)", None),
], ids=["imported helper", "through a variable", "not a network", "helper reads no parameters"])
def test_models_given_to_a_parameter_group_helper_are_started(setup, groups, started):
    out, notes = run(PARAM_GROUPS.format(setup=setup, groups=groups), "debugger")
    lines = lines_of(out)
    expected = f"debugger.start(model={started})" if started else "debugger.start()"
    assert lines[lines.index("for x in loader:") + 1] == expected
    assert any("model not found" in note for note in notes) == (started is None)


@pytest.mark.parametrize("sink, noted", [("", None), (", dataset_sink_mode=False", None),
                                         (", dataset_sink_mode=True", "is on"), (", False, 4", None),
                                         (", args.sink", "may be on")])
def test_data_sinking_is_noted(sink, noted):
    """MindSpore models' scripts often train with dataset_sink_mode=True: a step callback then sees a sink of steps."""
    code = f"import mindspore as ms\n\nmodel = ms.Model(net, loss, opt)\nmodel.train(2, ds, [cb]{sink})\n"
    _, notes = run(code, "debugger")
    said = [state for state in ("is on", "may be on") for note in notes if f"dataset_sink_mode {state}:" in note]
    assert said == ([noted] if noted else [])


MS_WRAPPER_CELLS = '''from mindspore import nn


class AnimeGAN(nn.Cell):
    def __init__(self, train_one_step_cell_d, train_one_step_cell_g):
        super().__init__()
        self.train_one_step_cell_g = train_one_step_cell_g
        self.train_one_step_cell_d = train_one_step_cell_d

    def construct(self, img, anime):
        return self.train_one_step_cell_d(img, anime), self.train_one_step_cell_g(img)


class Holder(nn.Cell):
    def __init__(self, step):
        super().__init__()
        self.step = step

    def construct(self, x):
        return x


class PairStep(nn.Cell):
    def __init__(self, loss_netd, loss_netg, optimizerd, optimizerg):
        super().__init__()
        self.loss_netd, self.loss_netg, self.optimizerd, self.optimizerg = loss_netd, loss_netg, optimizerd, optimizerg

    def construct(self, x, y):
        return self.optimizerd(self.grad(self.loss_netd)(x, y)), self.optimizerg(self.grad(self.loss_netg)(x, y))


class Trainer(nn.Cell):
    def __init__(self, net, loss, opt):
        super().__init__()
        self.step = nn.TrainOneStepCell(nn.WithLossCell(net, loss), opt)

    def construct(self, x, y):
        return self.step(x, y)
'''


@pytest.mark.parametrize("build, started", [
    # animeganv2: both loss cells take both networks; each optimizer updates one of them
    ("    step_d = nn.TrainOneStepCell(DiscriminatorLoss(D, G, args), opt_d)\n"
     "    step_g = nn.TrainOneStepWithLossScaleCell(GeneratorLoss(D, G, args), opt_g, scale_sense=sense)\n"
     "    model = AnimeGAN(step_d, step_g)\n", "[D, G]"),
    # a cell that builds its train-step cell itself
    ("    loss = nn.MSELoss()\n    model = Trainer(G, loss, opt_g)\n", "G"),
    # pix2pix: a project train-step cell given its optimizers by keyword; the loss cells take both networks
    ("    model = PairStep(loss_netd=LossD(G, D), loss_netg=LossG(G, D), optimizerd=opt_d, optimizerg=opt_g)\n",
     "[D, G]"),
    # a cell that holds a train-step cell but never calls it is no step
    ("    model = Holder(nn.TrainOneStepCell(nn.WithLossCell(G, loss), opt_g))\n", None),
], ids=["two train-step cells", "built inside", "optimizers by keyword", "held, not called"])
def test_mindspore_cells_around_train_step_cells_are_steps(tmp_path, monkeypatch, build, started):
    """mindspore-courses' Colorization and animeganv2: the train-step cells go into a cell of the project's own
    whose `construct` calls them, and the loop calls that cell."""
    (tmp_path / "cells.py").write_text(MS_WRAPPER_CELLS)
    monkeypatch.chdir(tmp_path)
    code = ("import mindspore as ms\nfrom mindspore import nn\nfrom cells import AnimeGAN, Holder, PairStep, Trainer\n\n\n"
            "def main(args, data):\n    G, D = Generator(), Discriminator()\n"
            "    opt_g = nn.Adam(G.trainable_params())\n    opt_d = nn.Adam(D.trainable_params())\n"
            f"{build}    for img, anime in data:\n        model(img, anime)\n")
    out, _ = instrument_text("train.py", code, Options(selected=select(["debugger"], [], False)))
    lines = lines_of(strip(out))
    if started is None:
        assert "for img, anime in data:" in lines and not any("debugger" in line for line in lines)
    else:
        assert lines[lines.index("for img, anime in data:") + 1] == f"debugger.start(model={started})"
        probed, _ = instrument_text("train.py", code, Options(selected=select(["debugger"], [], True),
                                                              grad_probe=True))
        assert "debugger.monitor(model)" in lines_of(strip(probed))  # every optimizer the cell holds


# --- library trainers: Hugging Face and Lightning ------------------------------------------------------
HF = "from transformers import Trainer, TrainingArguments\n\n"
PL = "import pytorch_lightning as pl\nfrom pytorch_lightning.callbacks import ModelCheckpoint\n\n"


@pytest.mark.parametrize(("code", "expected"), [
    (HF + "trainer = Trainer(model=m, args=TrainingArguments('o'), callbacks=None)\n",
     "trainer = Trainer(model=m, args=TrainingArguments('o'), callbacks=[MsprobeTrainerCallback(debugger)])"),
    (HF + "cbs = []\ncbs.append(Early())\ntrainer = Trainer(model=m, callbacks=cbs)\n",
     "trainer = Trainer(model=m, callbacks=[MsprobeTrainerCallback(debugger)] + cbs)"),
    # a name that may hold None, or a helper's result: `add_callback` after the construction
    (HF + "cbs = None\nif x:\n    cbs = [Early()]\ntrainer = Trainer(model=m, callbacks=cbs)\n",
     "trainer.add_callback(MsprobeTrainerCallback(debugger))"),
    (HF + "trainer = Trainer(model=m, callbacks=get_callbacks())\n", "trainer.add_callback(MsprobeTrainerCallback(debugger))"),
    ("import transformers\n\ntrainer = transformers.Seq2SeqTrainer(model=m)\n",
     "trainer = transformers.Seq2SeqTrainer(model=m, callbacks=[MsprobeTrainerCallback(debugger)])"),
    # Lightning's callbacks= may be one callback
    (PL + "trainer = pl.Trainer(callbacks=ModelCheckpoint(dirpath='c'))\n",
     "trainer = pl.Trainer(callbacks=[MsprobeLightningCallback(debugger), ModelCheckpoint(dirpath='c')])"),
    (PL + "ckpt = ModelCheckpoint(dirpath='c')\ntrainer = pl.Trainer(callbacks=ckpt)\n",
     "trainer = pl.Trainer(callbacks=[MsprobeLightningCallback(debugger), ckpt])"),
    ("from lightning.pytorch import Trainer\n\ntrainer = Trainer(max_epochs=1, callbacks=[])\n",
     "trainer = Trainer(max_epochs=1, callbacks=[MsprobeLightningCallback(debugger)])"),
], ids=["None", "a list by name", "maybe None", "a helper's result", "module alias", "one callback",
        "one callback by name", "empty list"])
def test_a_trainer_gets_the_callback(code, expected):
    out, notes = run(code + "trainer.fit(model)\n" if "pl" in code or "lightning" in code else code + "trainer.train()\n",
                     "debugger")
    assert expected in lines_of(out), out
    assert not notes


def test_the_callback_goes_first_in_a_list_across_lines():
    """First, so that the step's end stops capture before the other callbacks' step-end work (latent diffusion's
    ImageLogger samples the model in `on_train_batch_end`); a list across lines keeps one callback a line."""
    code = PL + "trainer = pl.Trainer(\n    callbacks=[\n        ImageLogger(),\n        ModelCheckpoint(),\n    ],\n)\n"
    out, _ = run(code + "trainer.fit(model)\n", "debugger")
    assert ("    callbacks=[\n        MsprobeLightningCallback(debugger),\n        ImageLogger(),\n"
            "        ModelCheckpoint(),\n    ],\n") in strip(out)


@pytest.mark.parametrize("code", [
    PL + "trainer = pl.Trainer(**cfg.trainer)\ntrainer.fit(model)\n",
    PL + "trainer = pl.Trainer(callbacks=get_callbacks())\ntrainer.fit(model)\n",
    HF + "def build(**kw):\n    return Trainer(model=m, **kw)\n",
], ids=["Lightning **kwargs", "Lightning: a helper's result", "returned, not assigned"])
def test_a_trainer_whose_callbacks_cannot_be_read_is_left_with_a_note(code):
    out, notes = run(code, "debugger")
    assert out == code
    assert any("add MsprobeLightningCallback(debugger) to its callbacks yourself" in note
               or "add MsprobeTrainerCallback(debugger) to its callbacks yourself" in note for note in notes), notes


def test_the_one_mapping_holding_a_callbacks_list_gets_the_callback_through_a_filtering_comprehension():
    """generative-models' main.py: `Trainer(**trainer_opt, **trainer_kwargs)`, trainer_kwargs rebuilt by
    `{key: val for key, val in trainer_kwargs.items() if key not in trainer_opt}` after its callbacks were set."""
    code = (PL + "def main(opt, model):\n    trainer_kwargs = dict()\n    trainer_kwargs[\"callbacks\"] = [ModelCheckpoint()]\n"
            "    trainer_opt = vars(opt)\n"
            "    trainer_kwargs = {key: val for key, val in trainer_kwargs.items() if key not in trainer_opt}\n"
            "    trainer = pl.Trainer(**trainer_opt, **trainer_kwargs)\n    trainer.fit(model)\n")
    lines = lines_of(run(code, "debugger")[0])
    assert lines[lines.index("trainer = pl.Trainer(**trainer_opt, **trainer_kwargs)") - 1] == (
        "trainer_kwargs[\"callbacks\"].insert(0, MsprobeLightningCallback(debugger))")
    rebuilt = code.replace("trainer_kwargs.items()", "defaults.items()")  # another mapping's entries: unknown
    out, notes = run(rebuilt, "debugger")
    assert out == rebuilt and any("callbacks= may be among them" in note for note in notes)


def test_a_callback_left_to_the_user_is_told_with_its_import_and_the_debugger_it_needs():
    """When nothing in the file gets the debugger, the note says how to create it; else the callback's import."""
    alone = PL + "trainer = pl.Trainer(**cfg.trainer)\ntrainer.fit(model)\n"
    assert run(alone, "debugger")[1] == [
        "/project/train.py:4: trainer with *args/**kwargs (callbacks= may be among them): add "
        "MsprobeLightningCallback(debugger) to its callbacks yourself, creating `debugger` first: `from "
        "msprobe_runtime.pytorch import MsprobeLightningCallback, PrecisionDebugger`, then `debugger = "
        "PrecisionDebugger(config_path=os.path.join(os.path.dirname(__file__), \"config.json\"))`; debugger not added"]
    with_loop = (PL + "model = torch.nn.Linear(2, 1)\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
                 "for x in data:\n    model(x).sum().backward()\n    opt.step()\n" + alone[len(PL):])
    out, notes = run("import torch\n" + with_loop, "debugger")
    assert "debugger.start(model=model)" in lines_of(out)
    assert notes == ["/project/train.py:10: trainer with *args/**kwargs (callbacks= may be among them): add "
                     "MsprobeLightningCallback(debugger) to its callbacks yourself (`from msprobe_runtime.pytorch "
                     "import MsprobeLightningCallback`)"]


@pytest.mark.parametrize(("init", "expected"), [
    ("", "trainer = MyTrainer(model=m, callbacks=[MsprobeTrainerCallback(debugger)])"),
    ("    def __init__(self, *args, alpha=1.0, **kwargs):\n        super().__init__(*args, **kwargs)\n",
     "trainer = MyTrainer(model=m, callbacks=[MsprobeTrainerCallback(debugger)])"),
    ("    def __init__(self, model, alpha=1.0):\n        super().__init__(model=model)\n",
     "trainer.add_callback(MsprobeTrainerCallback(debugger))"),
], ids=["no __init__", "**kwargs", "no callbacks parameter"])
def test_a_trainer_subclass_takes_the_callback_where_its_init_lets_it(init, expected):
    code = (HF + f"class Base(Trainer):\n    pass\n\n\nclass MyTrainer(Base):\n{init or '    pass'}\n\n\n"
            "trainer = MyTrainer(model=m)\ntrainer.train()\n")
    assert expected in lines_of(run(code, "debugger")[0])


@pytest.mark.parametrize("code", [
    "import torch\nfrom transformers import TrainerCallback, TrainingArguments\n\nargs = TrainingArguments('o')\n"
    "cb = TrainerCallback()\n",
    "import torch\nfrom mingpt.trainer import Trainer\n\ntrainer = Trainer(config, model, data)\ntrainer.run()\n",
    "import torch\nfrom lightning.fabric import Fabric\n\nfabric = Fabric()\n",
    "import torch\nfrom trl import DDPOTrainer\n\nDDPOTrainer(config, reward_fn, prompt_fn, pipeline).train()\n",
], ids=["arguments and callbacks", "minGPT", "Fabric", "TRL's diffusion trainer takes no callbacks"])
def test_only_library_trainers_taking_callbacks_are_trainers(code):
    out, _ = run(code, "debugger")
    assert out == code


@pytest.mark.parametrize("module", ["trl.experimental.cpo", "trl.experimental.gold", "trl.trainer.sft_trainer"])
def test_trl_trainers_imported_from_their_modules_are_trainers(module):
    """TRL moved most of its trainers under `trl.experimental` (19 of its example scripts import them there)."""
    name = {"trl.experimental.cpo": "CPOTrainer", "trl.experimental.gold": "GOLDTrainer"}.get(module, "SFTTrainer")
    code = f"from {module} import {name}\n\ntrainer = {name}(model=m)\ntrainer.train()\n"
    assert f"trainer = {name}(model=m, callbacks=[MsprobeTrainerCallback(debugger)])" in lines_of(run(code, "debugger")[0])


def test_an_mmengine_runner_built_in_either_branch_gets_the_hook_before_it_trains():
    """OpenMMLab's tools/train.py: `Runner.from_cfg(cfg)` or, for a config naming its runner type,
    `RUNNERS.build(cfg)`; then `runner.train()`. The hook goes before the train call, for both runners."""
    code = ("from mmengine.registry import RUNNERS\nfrom mmengine.runner import Runner\n\n\ndef main(cfg):\n"
            "    if 'runner_type' not in cfg:\n        runner = Runner.from_cfg(cfg)\n    else:\n"
            "        runner = RUNNERS.build(cfg)\n    runner.train()\n")
    lines = lines_of(run(code, "debugger")[0])
    assert lines[lines.index("runner.train()") - 1] == "runner.register_hook(MsprobeMMEngineHook(debugger))"
    assert lines.count("runner.register_hook(MsprobeMMEngineHook(debugger))") == 1


def test_trainers_monitor_by_themselves_under_grad_probe():
    code = HF + "trainer = Trainer(model=m)\ntrainer.train()\n"
    out, notes = run(code, "debugger", grad_probe=True)
    assert "monitor(" not in out and not any("grad-probe" in note for note in notes)
    assert "trainer = Trainer(model=m, callbacks=[MsprobeTrainerCallback(debugger)])" in lines_of(out)


@pytest.mark.parametrize(("call", "expected"), [
    ("model.train(2, ds, callbacks=None)", "model.train(2, ds, callbacks=[MsprobeStep(debugger)])"),
    ("model.train(2, ds, callbacks=LossMonitor())", "model.train(2, ds, callbacks=[MsprobeStep(debugger), LossMonitor()])"),
], ids=["None", "one callback"])
def test_model_train_callbacks_none_or_one(call, expected):
    out, _ = run(f"import mindspore as ms\n\nmodel = ms.Model(net, loss, opt)\n{call}\n", "debugger")
    assert expected in lines_of(out)


def test_model_train_callbacks_that_may_be_none_are_left_with_a_note():
    code = "import mindspore as ms\n\nmodel = ms.Model(net, loss, opt)\ncbs = None\nif x:\n    cbs = [cb]\nmodel.train(2, ds, cbs)\n"
    out, notes = run(code, "debugger")
    assert out == code and any("callbacks= is not a list" in note for note in notes)


@pytest.mark.parametrize(("returned", "added"), [("cb_list", True), ("cb_list or None", False)])
def test_model_train_callbacks_from_a_function_returning_a_list_get_the_callback(returned, added):
    """segment-anything's train.py: `callbacks = create_callback(args.callback)`, whose every return is the list
    it builds (`cb_list = []`, appended to)."""
    code = ("import mindspore as ms\n\n\ndef create_callback(args):\n    cb_list = []\n    if args is None:\n"
            "        return cb_list\n    for cb in args:\n        cb_list.append(cb)\n"
            f"    return {returned}\n\n\nmodel = ms.Model(net, loss, opt)\ncallbacks = create_callback(None)\n"
            "model.train(2, ds, callbacks=callbacks)\n")
    out, notes = run(code, "debugger")
    assert ("model.train(2, ds, callbacks=[MsprobeStep(debugger)] + callbacks)" in lines_of(out)) is added
    assert any("callbacks= is not a list" in note for note in notes) is not added


TRAINER_HELPER = ("from transformers import Trainer\n\n\ndef build_trainer(model, data):\n"
                  "    return Trainer(model=model, train_dataset=data)\n")


def test_an_entry_script_whose_trainer_is_built_in_a_project_helper_names_that_file(tmp_path, monkeypatch):
    (tmp_path / "helpers.py").write_text(TRAINER_HELPER)
    entry = ("import torch\nfrom helpers import build_trainer\n\n\nif __name__ == \"__main__\":\n"
             "    build_trainer(torch.nn.Linear(2, 1), None).train()\n")
    monkeypatch.chdir(tmp_path)
    out, notes = instrument_text("main.py", entry, Options(selected=select(["debugger"], [], False)))
    assert out == entry
    assert notes == ["main.py: the trainer is built not in this file but in `build_trainer` in helpers.py: instrument that "
                     "file too (msprobe-instrument --write main.py helpers.py); debugger not added here"]


@pytest.mark.parametrize("code, callback", [
    ("import lightning as L\n\n\ndef run(trainer: L.Trainer, model):\n    trainer.fit(model)\n\n\n"
     "if __name__ == \"__main__\":\n    run(make(), LitModel())\n", "MsprobeLightningCallback(debugger)"),
    ("import hydra\nfrom transformers import TrainingArguments\n\n\nif __name__ == \"__main__\":\n"
     "    trainer = hydra.utils.instantiate(cfg.trainer)\n    trainer.train()\n", "MsprobeTrainerCallback(debugger)"),
], ids=["a parameter", "built by a function"])
def test_a_trainer_run_but_not_built_here_is_noted(code, callback):
    out, notes = run(code, "debugger")
    assert out == code
    assert len(notes) == 1 and "runs a trainer this file does not construct" in notes[0] and callback in notes[0], notes


def test_a_lightning_cli_is_told_where_the_callback_goes():
    code = ("from lightning.pytorch.cli import LightningCLI\n\n\nclass MyCLI(LightningCLI):\n    pass\n\n\n"
            "if __name__ == \"__main__\":\n    MyCLI(LitModel, DataModule)\n")
    out, notes = run(code, "debugger")
    assert out == code
    assert notes == ["/project/train.py:9: `MyCLI(...)` builds and runs the trainer: pass "
                     "trainer_defaults={\"callbacks\": [MsprobeLightningCallback(debugger)]}; debugger not added"]
    # trainer_defaults holding callbacks already (pytorch-lightning's autoencoder example): keep them
    _, notes = run(code.replace("DataModule)", "DataModule, trainer_defaults={\"callbacks\": ImageSampler()})"),
                   "debugger")
    assert "add MsprobeLightningCallback(debugger) first to the callbacks of its trainer_defaults" in notes[0]


DEEPSPEED = ("import deepspeed\nimport torch\n\n\ndef train(args, model, loader):\n    for batch in loader:\n"
             "        {step}\n\n\ndef main(args, net, data):\n"
             "    {engine}, optimizer, loader, _ = deepspeed.initialize(args=args, model=net, training_data=data)\n"
             "    train(args, {engine}, loader)\n")


@pytest.mark.parametrize("engine, step, started", [
    # a training function written before main(), where the engine is built (bing_bert)
    ("model.network", "model.network.backward(model.network(batch))\n        model.network.step()", "model.network"),
    # a pipeline engine's whole step (DeepSpeedExamples' pipeline_parallelism)
    ("model", "loss = model.train_batch()", "model"),
], ids=["engine.step", "engine.train_batch"])
def test_a_deepspeed_engines_step_is_the_training_step(engine, step, started):
    out, _ = run(DEEPSPEED.format(engine=engine, step=step), "debugger")
    lines = lines_of(out)
    assert lines[lines.index("for batch in loader:") + 1] == f"debugger.start(model={started})"


def test_a_name_holding_a_deepspeed_engine_steps_where_deepspeed_is_imported():
    code = ("import deepspeed\n\n\ndef train(model_engine, loader):\n    for x, y in loader:\n"
            "        model_engine.backward(model_engine(x).sum())\n        model_engine.step()\n")
    lines = lines_of(run(code, "debugger")[0])
    assert lines[lines.index("for x, y in loader:") + 1] == "debugger.start(model=model_engine)"
    out, _ = run(code.replace("import deepspeed", "import torch"), "debugger")  # not known to be an engine
    assert "debugger" not in out


def test_a_strategy_handed_the_optimizer_steps_it():
    """OpenRLHF's trainers: `self.strategy.optimizer_step(self.optimizer, self.model, self.scheduler)` applies the
    gradients (DeepSpeed's engine step behind it); the loop is wrapped and starts with the model the class keeps."""
    code = ("import torch\n\n\nclass SFTTrainer:\n    def __init__(self, model, strategy, optimizer, scheduler):\n"
            "        self.model = model\n        self.strategy = strategy\n"
            "        self.optimizer = optimizer\n        self.scheduler = scheduler\n\n"
            "    def fit(self, loader):\n        for inputs in loader:\n"
            "            loss = self.model(inputs).mean()\n            self.strategy.backward(loss, self.model, self.optimizer)\n"
            "            self.strategy.optimizer_step(self.optimizer, self.model, self.scheduler)\n")
    lines = lines_of(run(code, "debugger")[0])
    assert lines[lines.index("for inputs in loader:") + 1] == "debugger.start(model=self.model)"
    assert "debugger.step()" in lines


def test_gradient_accumulation_by_continue_steps_the_debugger_after_the_check():
    """open_clip's legacy_train: a micro-batch that is not the last of its group ends the iteration before the step:
    the `try` begins after that check, so such an iteration does not step the debugger (and needs no note)."""
    code = ("import torch\n\nmodel = torch.nn.Linear(2, 1)\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
            "for i, x in enumerate(loader):\n    model(x).sum().backward()\n    if accum > 1:\n"
            "        if ((i + 1) % accum) > 0:\n            continue\n    opt.step()\n")
    out, notes = run(code, "debugger")
    assert "            continue\n    try:\n        opt.step()\n    finally:\n" in out
    assert not any("only every few iterations" in note for note in notes), notes
    first = code.replace("    model(x).sum().backward()\n    if accum > 1:\n        if ((i + 1) % accum) > 0:\n"
                         "            continue\n", "    if (i + 1) % accum:\n        continue\n    model(x).sum().backward()\n")
    out, notes = run(first, "debugger")  # the check first in the body: before `start`
    assert "        continue\n    debugger.start(model=model)\n    try:\n" in out
    assert not any("only every few iterations" in note for note in notes), notes


def test_gradient_accumulation_over_micro_batches_gets_the_note():
    """DeepSpeed's pipeline example: a loop over micro-batches, the engine updating every few."""
    code = ("import torch\n\nmodel = torch.nn.Linear(2, 1)\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
            "for micro_step in range(steps * gas):\n    model(next(it)).sum().backward()\n    opt.step()\n")
    _, notes = run(code, "debugger")
    assert any("the optimizer may update the weights only every few iterations here" in note for note in notes), notes


def test_a_loop_over_groups_of_micro_batches_steps_once_per_iteration():
    """LLaMA-Factory v1's BaseTrainer.fit: each `micro_batches` is the list of one optimizer step's micro-batches,
    run by an inner loop; the optimizer steps once per iteration of the outer loop, which the debugger wraps."""
    code = ("import torch\n\nmodel = torch.nn.Linear(2, 1)\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
            "for micro_batches in batches:\n    for i, micro_batch in enumerate(micro_batches):\n"
            "        model(micro_batch).sum().backward()\n    opt.step()\n")
    out, notes = run(code, "debugger")
    assert "for micro_batches in batches:\n    debugger.start(model=model)\n" in out
    assert not any("only every few iterations" in note for note in notes), notes


def test_a_continue_that_skips_no_step_gets_no_accumulation_note():
    code = ("import torch\n\nmodel = torch.nn.Linear(2, 1)\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
            "for i, x in enumerate(loader):\n    if x is None:\n        continue\n    model(x).sum().backward()\n"
            "    opt.step()\n    for j in range(3):\n        if j % 2:\n            continue\n")
    _, notes = run(code, "debugger")
    assert not any("under a condition" in note for note in notes), notes


def test_a_megatron_training_loop_steps_through_megatrons_train_step():
    """MindSpeed-LLM's `train`: `while iteration < args.train_iters:` around Megatron's `train_step(forward_step_func,
    data_iterator, model, optimizer, ...)`, which runs the whole step, optimizer update included."""
    code = ("import torch\nfrom megatron.training.training import train_step\n\n\n"
            "def train(forward_step_func, model, optimizer, scheduler, data_iterator, config, args):\n"
            "    iteration = 0\n    while iteration < args.train_iters:\n"
            "        loss_dict, *_ = train_step(forward_step_func, data_iterator, model, optimizer, scheduler, config)\n"
            "        iteration += 1\n")
    lines = lines_of(strip(run(code, "debugger")[0]))
    assert lines[lines.index("while iteration < args.train_iters:") + 1] == "debugger.start(model=model)"


STEP_HELPERS = ("import torch\n\n\ndef batch_backward(model, batch):\n    model(batch).sum().backward()\n\n\n"
                "def update_parameter_and_lr(model, optimizer, info):\n"
                "    if (info[\"batch_idx\"] + 1) % info[\"accum_grad\"] == 0:\n        optimizer.step()\n"
                "        optimizer.zero_grad()\n\n\ndef log_per_step(info):\n    print(info)\n")
EXECUTOR = ("import torch\nfrom train_utils import batch_backward, log_per_step, update_parameter_and_lr\n\n\n"
            "class Executor:\n"
            "    def train(self, model, optimizer, loader, info):\n        for batch_idx, batch in enumerate(loader):\n"
            "            info[\"batch_idx\"] = batch_idx\n            batch_backward(model, batch)\n"
            "            {call}\n            log_per_step(info)\n")


def test_a_loop_stepping_through_a_function_of_a_project_module_is_wrapped(tmp_path, monkeypatch):
    """WeNet's Executor.train: `update_parameter_and_lr(model, optimizer, ...)` of train_utils.py applies the
    gradients (every `accum_grad` batches); the entry script that calls `executor.train(...)` is told where."""
    (tmp_path / "train_utils.py").write_text(STEP_HELPERS)
    monkeypatch.chdir(tmp_path)
    options = Options(selected=select(["debugger"], [], False))
    out, notes = instrument_text("executor.py", EXECUTOR.format(call="update_parameter_and_lr(model, optimizer, info)"),
                                 options)
    lines = lines_of(strip(out))
    assert lines[lines.index("for batch_idx, batch in enumerate(loader):") + 1] == "debugger.start(model=model)"
    assert any("the optimizer may update the weights only every few iterations here" in note for note in notes)
    out, notes = instrument_text("executor.py", EXECUTOR.format(call="log_per_step(info)"), options)
    assert "debugger.start" not in out  # only backward() through the helper: no step, no training loop
    (tmp_path / "executor.py").write_text(EXECUTOR.format(call="update_parameter_and_lr(model, optimizer, info)"))
    entry = ("import torch\nfrom executor import Executor\n\n\ndef main():\n    executor = Executor()\n"
             "    for epoch in range(2):\n        executor.train(model, optimizer, loader, {})\n\n\n"
             "if __name__ == \"__main__\":\n    main()\n")
    assert instrument_text("train.py", entry, options)[1] == [
        "train.py: the training loop is not in this file but in `Executor.train` in executor.py: instrument that file "
        "too (msprobe-instrument --write train.py executor.py); debugger not added here"]


def test_a_speechbrain_recipe_is_told_where_its_loop_is_and_keeps_its_yaml_seed():
    """`Brain.fit` runs SpeechBrain's loop, which calls the brain's batch hooks; `load_hyperpyyaml(fin)` seeds
    through the YAML but `fin` is no seed."""
    code = ("import speechbrain as sb\nfrom hyperpyyaml import load_hyperpyyaml\n\n\nclass ASR(sb.Brain):\n    pass\n\n\n"
            "if __name__ == \"__main__\":\n    with open(\"hparams.yaml\") as fin:\n        hparams = load_hyperpyyaml(fin)\n"
            "    asr = ASR(modules=hparams[\"modules\"])\n    asr.fit(range(2), hparams[\"train\"])\n")
    out, notes = instrument_text("train.py", code, Options())
    assert "seed_all(seed=1234, mode=False, rm_dropout=True)" in lines_of(strip(out))
    assert any(note.startswith("train.py:13: `asr.fit(...)` runs SpeechBrain's training loop") for note in notes)


@pytest.mark.parametrize(("run", "told"), [("session.run(class_type=Trainer, episode=10)", True),
                                           ("session.run(class_type=Trainer, is_train=False)", False)])
def test_a_mindspore_reinforcement_session_is_told_where_its_loop_is(run, told):
    """mindrl's examples train through `Session.run(class_type=...)`: the loop is the library's `Trainer.train`,
    which runs no optimizer step to find, and the Session's callbacks around each episode; seed_all is added (not
    for `is_train=False`, which evaluates)."""
    code = ("from mindspore_rl.agent import Trainer\nfrom mindspore_rl.core import Session\n\n\n"
            f"if __name__ == \"__main__\":\n    session = Session({{}})\n    {run}\n")
    out, notes = instrument_text("train.py", code, Options())
    assert ("seed_all(seed=1234, mode=False, rm_dropout=True)" in lines_of(strip(out))) == told
    assert any(note.startswith("train.py:7: `session.run(...)` runs MindSpore Reinforcement's training loop, "
                               "`Trainer.train` in mindspore_rl/agent/trainer.py") for note in notes) == told


HAND_SGD_TUTORIAL = ("import torch\n\nx = torch.linspace(-1, 1, 20)\na = torch.randn((), requires_grad=True)\n"
                     "for t in range(100):\n    loss = (a * x - x).pow(2).sum()\n    loss.backward()\n"
                     "    with torch.no_grad():\n        a -= 1e-3 * a.grad\n        a.grad = None\n")


def test_gradients_applied_by_hand_make_the_training_loop():
    """PyTorch's tutorial (`w -= lr * w.grad` under no_grad): no model to start with, and no optimizer for the
    gradient probe to count steps at."""
    out, notes = run(HAND_SGD_TUTORIAL, "debugger", "grad-probe")
    lines = lines_of(out)
    assert lines[lines.index("for t in range(100):") + 1] == "debugger.start()"
    assert "debugger.monitor" not in out
    assert any("the gradients are applied by hand" in note for note in notes)
    assert any("model not found" in note for note in notes)


@pytest.mark.parametrize("code", [
    # a custom optimizer's loop over its parameters: no gradient is computed there
    "import torch\n\n\nclass SGD(torch.optim.Optimizer):\n    def step(self, closure=None):\n"
    "        for group in self.param_groups:\n            for p in group['params']:\n"
    "                p.data.add_(p.grad, alpha=-group['lr'])\n",
    # a gradient norm summed after backward, and an adversarial input climbing its gradient
    "import torch\n\n\ndef probe(model, x):\n    for _ in range(3):\n        model(x).sum().backward()\n"
    "        norm = 0.0\n        for p in model.parameters():\n            norm += p.grad.norm()\n"
    "        x = x + 0.1 * x.grad.sign()\n",
], ids=["custom optimizer", "statistics and ascent"])
def test_what_reads_gradients_without_descending_is_no_step(code):
    assert run(code, "debugger")[0] == code


@pytest.mark.parametrize(("code", "line", "start"), [
    ("import torch\n\nmodel = torch.compile(torch.nn.Linear(2, 1))\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
     "for x in torch.randn(4, 8, 2):\n    model(x).sum().backward()\n    opt.step()\n", 3, "`torch.compile`"),
    ("import mindspore as ms\nfrom mindspore import nn\n\nms.set_context(mode=ms.GRAPH_MODE)\nnet = nn.Dense(2, 1)\n"
     "opt = nn.SGD(net.trainable_params())\ngrad_fn = ms.value_and_grad(lambda x: net(x).sum(), None, opt.parameters)\n\n\n"
     "@ms.jit\ndef train_step(x):\n    loss, grads = grad_fn(x)\n    opt(grads)\n    return loss\n\n\n"
     "for x in data:\n    train_step(x)\n", 4, "GRAPH_MODE"),
], ids=["torch.compile", "GRAPH_MODE and jit"])
def test_code_compiled_out_of_capture_is_noted(code, line, start):
    """nanoGPT compiles its model; MindSpore's quick start compiles its train step with `@mindspore.jit`."""
    out, notes = run(code, "debugger")
    assert "debugger.start(" in out
    assert any(note.startswith(f"/project/train.py:{line}: {start}") for note in notes)
    if "ms.jit" in code:
        assert any(note.startswith("/project/train.py:10: `mindspore.jit`") for note in notes)


@pytest.mark.parametrize(("order", "noted"), [("before", True), ("after", False)])
def test_a_model_compiled_after_its_hugging_face_trainer_is_built_is_not_noted(order, noted):
    """alpaca-lora compiles `model` after `Trainer(model=model)`: the trainer keeps the uncompiled module."""
    build = "trainer = transformers.Trainer(model=model)\n"
    compile_it = "model = torch.compile(model)\n"
    body = compile_it + build if order == "before" else build + compile_it
    code = "import torch\nimport transformers\n\nmodel = get_model()\n" + body + "trainer.train()\n"
    _, notes = run(code, "debugger")
    assert any("`torch.compile`" in note for note in notes) is noted, notes


@pytest.mark.parametrize(("mode", "note"), [
    ("0", "GRAPH_MODE"), ("args.mode", "GRAPH_MODE"), ("cfg.system.mode", "`mode=cfg.system.mode`: if that is GRAPH_MODE"),
    ("1", None), ("ms.PYNATIVE_MODE", None),
])
def test_graph_mode_is_noted_however_it_is_written(mode, note):
    """mindaudio's `mode=0`, an option defaulting to 0, mindocr's `mode=cfg.system.mode` read from a config."""
    code = ("import argparse\n\nimport mindspore as ms\nfrom mindspore import nn\n\nparser = argparse.ArgumentParser()\n"
            "parser.add_argument(\"--mode\", type=int, default=0)\nargs = parser.parse_args()\n"
            f"ms.set_context(mode={mode})\nnet = nn.Dense(2, 1)\n"
            "model = ms.Model(net, loss_fn=nn.MSELoss(), optimizer=nn.SGD(net.trainable_params()))\n"
            "model.train(1, dataset, dataset_sink_mode=False)\n").replace("--mode", "--mode" if mode != "cfg.system.mode"
                                                                          else "--other")
    _, notes = run(code, "debugger")
    found = [n for n in notes if n.startswith("/project/train.py:9: ")]
    assert (found[0].startswith(f"/project/train.py:9: {note}") if note else not found), notes



@pytest.mark.parametrize("code, loop, started", [
    # seq2seq's tutorial: a stepping function that steps two optimizers, each of its own model
    ("import torch\n\n\ndef train(x, encoder, decoder, encoder_optimizer, decoder_optimizer):\n"
     "    decoder(encoder(x)).sum().backward()\n    encoder_optimizer.step()\n    decoder_optimizer.step()\n\n\n"
     "def train_iters(encoder, decoder):\n    encoder_optimizer = torch.optim.SGD(encoder.parameters(), lr=0.1)\n"
     "    decoder_optimizer = torch.optim.SGD(decoder.parameters(), lr=0.1)\n    for x in torch.randn(4, 8, 2):\n"
     "        train(x, encoder, decoder, encoder_optimizer, decoder_optimizer)\n",
     "for x in torch.randn(4, 8, 2):", "[encoder, decoder]"),
    # torchtune's recipes: the optimizer a method of the class builds and returns
    ("import torch\n\n\nclass Recipe:\n    def setup(self, cfg):\n        self._model = torch.nn.Linear(4, 4)\n"
     "        self._optimizer = self._setup_optimizer(cfg)\n\n    def _setup_optimizer(self, cfg):\n"
     "        optimizer = torch.optim.AdamW(self._model.parameters())\n        return optimizer\n\n"
     "    def train(self, loader):\n        for batch in loader:\n            self._model(batch).sum().backward()\n"
     "            self._optimizer.step()\n", "for batch in loader:", "self._model"),
    # stable-baselines3: the policy keeps its optimizer
    ("import torch\n\n\nclass PPO:\n    def train(self, batches):\n        for batch in batches:\n"
     "            self.policy.evaluate_actions(batch).sum().backward()\n            self.policy.optimizer.step()\n",
     "for batch in batches:", "self.policy"),
], ids=["two optimizers in a stepping function", "optimizer from a method", "optimizer kept by the policy"])
def test_the_trained_model_is_found(code, loop, started):
    lines = lines_of(run(code, "debugger")[0])
    assert lines[lines.index(loop) + 1] == f"debugger.start(model={started})"


def test_a_mindformers_trainer_gets_its_callback_and_the_sink_and_graph_mode_notes():
    """run_mindformer.py: mindformers sinks data and runs in graph mode unless its config says otherwise."""
    code = ("from mindformers import Trainer, MindFormerConfig\n\n\ndef main(config):\n"
            "    trainer = Trainer(config)\n    trainer.train()\n\n\nif __name__ == \"__main__\":\n"
            "    main(MindFormerConfig(\"run.yaml\"))\n")
    out, notes = run(code, "debugger")
    assert "callbacks=[MsprobeStep(debugger)]" in out
    assert any("sink_mode to False" in note for note in notes), notes
    assert any("set `context.mode: 1` (PYNATIVE_MODE)" in note for note in notes), notes


def test_a_detectron2_trainer_subclass_gets_the_hook_and_its_inner_trainer_none():
    """detectron2's tools/train_net.py runs a DefaultTrainer subclass; DiffusionDet's subclass also builds
    `self._trainer = SimpleTrainer(...)` for itself, whose hooks never run: only the script's trainer gets it."""
    code = ("from detectron2.engine import DefaultTrainer, SimpleTrainer\n\n\nclass Trainer(DefaultTrainer):\n"
            "    def __init__(self, cfg):\n        super().__init__(cfg)\n"
            "        self._trainer = SimpleTrainer(self.model, self.data_loader, self.optimizer)\n\n\n"
            "def main(cfg):\n    trainer = Trainer(cfg)\n    trainer.resume_or_load(resume=False)\n"
            "    return trainer.train()\n\n\nif __name__ == \"__main__\":\n    main(setup())\n")
    out, _ = run(code, "debugger")
    assert out.count("register_hooks([MsprobeDetectron2Hook(debugger)])") == 1
    assert "    trainer = Trainer(cfg)\n    trainer.register_hooks([MsprobeDetectron2Hook(debugger)])\n" in strip(out)


def test_validation_and_saving_after_the_step_stay_outside_the_window():
    code = (HEAD + "model = Net()\nopt = torch.optim.SGD(model.parameters(), lr=1)\n"
            "for i, x in enumerate(loader):\n    model(x).sum().backward()\n    opt.step()\n"
            "    if i % 10 == 0:\n        print(i)\n\n    # end of step\n"
            "    valid_losses, should_stop = validate_and_save(model)\n    if should_stop:\n        break\n")
    lines = lines_of(run(code, "debugger")[0])
    assert lines.index("debugger.step()") < lines.index("# end of step") < lines.index(
        "valid_losses, should_stop = validate_and_save(model)")
    assert lines.index("print(i)") < lines.index("finally:")  # the step's logging stays in


def test_callbacks_after_a_stepping_method_stay_outside_the_window():
    code = (HEAD + "class Trainer:\n    def __init__(self, model):\n        self.model = model\n"
            "        self.optimizer = torch.optim.SGD(model.parameters(), lr=1)\n\n"
            "    def run(self):\n        while True:\n            self.model(x).sum().backward()\n"
            "            self.optimizer.step()\n            self.trigger_callbacks('on_batch_end')\n"
            "            self.iter_num += 1\n")
    lines = lines_of(run(code, "debugger")[0])
    assert lines.index("debugger.step()") < lines.index("self.trigger_callbacks('on_batch_end')")


def test_evaluation_before_the_step_stays_before_start():
    code = (HEAD + "model = Net()\nopt = torch.optim.SGD(model.parameters(), lr=1)\nwhile True:\n"
            "    lr = get_lr(it)\n    if it % eval_interval == 0:\n        losses = estimate_loss()\n"
            "        torch.save(model.state_dict(), 'ckpt.pt')\n    model(x).sum().backward()\n    opt.step()\n")
    lines = lines_of(run(code, "debugger")[0])
    assert lines.index("torch.save(model.state_dict(), 'ckpt.pt')") < lines.index("debugger.start(model=model)")
    assert lines.index("debugger.start(model=model)") + 1 == lines.index("try:")


def test_activation_checkpointing_is_part_of_the_step():
    code = ("import torch\nfrom torch.utils.checkpoint import checkpoint\n\nmodel = Net()\n"
            "opt = torch.optim.SGD(model.parameters(), lr=1)\nfor x in loader:\n"
            "    if use_ckpt:\n        y = checkpoint(model, x)\n    y.sum().backward()\n    opt.step()\n")
    lines = lines_of(run(code, "debugger")[0])
    assert lines.index("debugger.start(model=model)") < lines.index("y = checkpoint(model, x)")


def test_data_sink_of_a_train_step_function_is_the_step_with_a_note():
    code = ("import mindspore\nfrom mindspore import nn\n\nnet = nn.Dense(2, 1)\nopt = nn.Adam(net.trainable_params())\n\n\n"
            "def train_step(x, y):\n    loss, grads = grad_fn(x, y)\n    opt(grads)\n    return loss\n\n\n"
            "sink_process = mindspore.data_sink(train_step, dataset, sink_size=4)\nfor epoch in range(10):\n"
            "    loss = sink_process()\n")
    out, notes = run(code, "debugger")
    assert lines_of(out)[lines_of(out).index("for epoch in range(10):") + 1] == "debugger.start(model=net)"
    assert any("pass sink_size=1" in note for note in notes)


def test_data_sink_of_a_step_cell_handed_in_is_the_step():
    code = ("import mindspore\n\n\nclass PPOTrainer:\n    def train(self, ppo_with_grad, dataset):\n"
            "        sink_process = mindspore.data_sink(ppo_with_grad, dataset, sink_size=self.sink_size)\n"
            "        for epoch in range(3):\n            out = sink_process()\n")
    out, _ = run(code, "debugger")
    assert "out = sink_process()" in lines_of(out)[lines_of(out).index("try:") + 1]


def test_data_sink_of_an_evaluation_function_is_no_step():
    code = ("import mindspore\n\n\ndef eval_step(x, y):\n    return net(x)\n\n\n"
            "sink_process = mindspore.data_sink(eval_step, dataset)\nfor epoch in range(3):\n    out = sink_process()\n")
    assert "debugger" not in run(code, "debugger")[0]


def test_megatron_pretrain_points_at_its_training_loop():
    code = ("from megatron.training import pretrain\n\nif __name__ == \"__main__\":\n"
            "    pretrain(train_valid_test_datasets_provider, model_provider, forward_step)\n")
    _, notes = run(code, "debugger")
    assert any("megatron/training/training.py" in note and "--deterministic-mode" in note for note in notes)


def test_a_megatron_fork_of_the_project_points_at_its_own_loop(tmp_path):
    """gpt-neox: `megatron` is the project's own copy (no `--deterministic-mode`), its loop in megatron/training.py."""
    (tmp_path / "megatron").mkdir()
    (tmp_path / "megatron" / "__init__.py").write_text("")
    (tmp_path / "megatron" / "neox_arguments.py").write_text("seed = 1234\n")
    (tmp_path / "megatron" / "training.py").write_text("def pretrain(neox_args):\n    pass\n")
    code = "from megatron.training import pretrain\n\nif __name__ == \"__main__\":\n    pretrain(neox_args=None)\n"
    _, notes = instrument_text(str(tmp_path / "train.py"), code, Options(selected=select(["debugger"], [], False)))
    assert any("project's own Megatron, in" in note and note.endswith(
        "megatron/training.py: instrument that file too; debugger not added here") for note in notes), notes
    assert not any("--deterministic-mode" in note for note in notes)


def test_the_network_handed_to_a_stepping_helper_is_the_model():
    code = (HEAD + "class Trainer:\n    def __init__(self, actor, actor_optim, strategy):\n"
            "        self.actor, self.actor_optim, self.strategy = actor, actor_optim, strategy\n\n"
            "    def fit(self, loader):\n        for x in loader:\n            loss = self.actor(x).sum()\n"
            "            self.strategy.backward(loss, self.actor, self.actor_optim)\n"
            "            self.strategy.optimizer_step(self.actor_optim, self.actor, self.scheduler)\n")
    assert "debugger.start(model=self.actor)" in lines_of(run(code, "debugger")[0])


def test_a_trainer_only_evaluated_gets_no_callback():
    code = ("from mindformers import Trainer\n\nif __name__ == \"__main__\":\n    if mode == 'train':\n"
            "        trainer = Trainer(args=config, task=task)\n        trainer.train()\n    else:\n"
            "        trainer = Trainer(args=config, task=task)\n        trainer.evaluate()\n")
    out, _ = run(code, "debugger")
    assert out.count("MsprobeStep(debugger)") == 1

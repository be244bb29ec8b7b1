"""Wire in the precision debugger: created once, started/stopped/stepped around every training step.

This transform creates `debugger = PrecisionDebugger(config_path=...)`, puts a marked
`debugger.start(model=...)` first in each training loop's body (the wrap pass then puts the rest of the
body into `try:` ... `finally: debugger.stop(); debugger.step()`), and adds the runtime's step callback to
training a library runs: MindSpore `Model.train(...)`, a Hugging Face or Lightning trainer's construction.
`GradProbe` adds `debugger.monitor(...)` after the creation.
"""

from __future__ import annotations

import ast
import json
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import libcst as cst

from msprobe_rewriter import catalogue, project, seeding
from msprobe_rewriter.assignments import is_main_guard
from msprobe_rewriter.context import LOOP_TYPES, target_name, walk_scope
from msprobe_rewriter.instrument import loops, nodes, scopes, wrap
from msprobe_rewriter.instrument.compiled import compiled_notes
from msprobe_rewriter.instrument.transforms.base import Example, Transform
from msprobe_rewriter.instrument.unit import Unit, shown_path
from msprobe_rewriter.rules.dist_no_deterministic_comm import megatron_lacks_deterministic_mode

DEBUGGERS = frozenset(f"{m}.PrecisionDebugger" for m in ("msprobe_runtime.pytorch", "msprobe_runtime.mindspore",
                                                        "msprobe.pytorch", "msprobe.mindspore"))
# The runtime's step callback for each library (MindSpore's is msprobe.mindspore's name; msprobe has none for
# the other two). msprobe-kit's callbacks also call `monitor` themselves when the config's task is grad_probe.
CALLBACKS = {"mindspore": "MsprobeStep", "mindformers": "MsprobeStep", "transformers": "MsprobeTrainerCallback",
             "lightning": "MsprobeLightningCallback", "mmengine": "MsprobeMMEngineHook",
             "detectron2": "MsprobeDetectron2Hook"}
# How a trainer built already takes one more callback, by library: the call, `{}` the callback.
ADD_CALLBACK = {"transformers": "add_callback({})", "mmengine": "register_hook({})", "detectron2": "register_hooks([{}])"}
RUN_AFTER = ("mmengine", "detectron2")  # the callback goes right before `holder.train(...)`, when there is one
MSPROBE_CALLBACKS = ("mindspore", "mindformers")
AFTER_CREATION = "after-debugger-creation"  # unit.shared: (statement, code) to insert before it once the debugger exists


@dataclass
class Placement:
    """Where the debugger was created, for `GradProbe` to add `monitor` right after it."""

    name: str
    insert: Callable[[list[cst.BaseStatement]], None]  # puts statements where the creation went
    monitored: str | None  # what `monitor` takes (PyTorch: the model, MindSpore: the optimizer)
    line: int | None
    by_callbacks: bool = False  # only trainers train here, and their callbacks call `monitor` themselves


class Debugger(Transform):
    name = "debugger"
    fixes = ()
    summary = ("Creates `PrecisionDebugger(config_path=...)` once and runs `start`/`stop`/`step` around every "
               "iteration of the training loop, on every way out of it.")
    details = (
        "The training loop is the innermost loop that applies gradients (`optimizer.step()`, "
        "`scaler.step(optimizer)`, a DeepSpeed engine's `engine.step()` or `engine.train_batch()` (the engine, "
        "from `deepspeed.initialize`, is the model `start` takes), Megatron's `train_step(forward_step_func, "
        "data_iterator, model, optimizer, ...)` (MindSpeed-LLM's loop), a torchrec train pipeline's "
        "`pipeline.progress(batches)` (forward, backward and optimizer step; not under `torch.no_grad()`, where it "
        "predicts; the model `start` takes is `pipeline._model`, DLRM's torchrec_dlrm/dlrm_main.py), MindSpore `optimizer(grads)` or a "
        "`TrainOneStepCell` call, a `mindspore.data_sink(fn, dataset, sink_size=...)` function's call when `fn` "
        "is a train-step cell, a function of the file that applies an optimizer, or given from outside, as mindrlhf's "
        "`PPOTrainer.train(ppo_with_grad, ...)` is (a note says each call runs sink_size steps: pass sink_size=1 "
        "while debugging), also of a "
        "train-step cell of the project's own that subclasses one or whose `construct` applies an optimizer, "
        "as MindSpore GANs have (also through a method it hands the optimizer, MindSpore-GAN's `self.trainD(..., "
        "self.optimizerD1, ...)`), or of a cell of the project's own that is given train-step cells and calls them "
        "in its `construct`, as `ColorModel(TrainOneStepWithLossScaleCell(...))` or `AnimeGAN(step_d, step_g)` are; "
        "also a cell kept in a dict and called by its key, stylegan2's `phase['network'](...)`, and a parameter of "
        "the file's function that a script importing it hands a train-step cell, MoCo's `train(train_net, ...)`), "
        "directly or "
        "through a local `train_step` function or such a function imported from a project module (WeNet's "
        "`update_parameter_and_lr(model, optimizer, ...)`, whose optimizer is the one handed to it), or through "
        "a method that steps once per call of an object of a "
        "class of the file or of a project module (fairseq's `trainer.train_step(samples)`, a CycleGAN's "
        "`model.optimize_parameters()`; a name bound to a project class in each branch of an if/elif stands for "
        "each, Time-Series-Library's `Exp = Exp_Long_Term_Forecast`, and a project factory returning "
        "`REGISTRY.get(key)(...)` builds the classes registered with `@REGISTRY.register()`, BasicSR's "
        "`build_model(opt)`, whose `start` gets the networks all of them train), or, with no optimizer at all, an update written by hand after a "
        "`backward()` in the same loop (`param.data.add_(-lr * param.grad)`, `w -= lr * w.grad`; the model is the "
        "module a `for param in fc.parameters():` around it runs over); with gradient accumulation it is the loop around the "
        "micro-steps, with epoch and batch loops the batch loop (not a loop over the optimizers, or over objects holding them, "
        "StyleGAN's `for phase in phases: ... phase.opt.step()` inside its `while True:` batch loop: those are one "
        "step of all of them; also when the function holding the batch loop steps once "
        "more after it, flushing what it accumulated; a function stepping once per call, with a counted loop inside "
        "that steps too, PyG's ARGVA stepping its discriminator 5 times, is one step of the loop calling it). The debugger "
        "steps where the optimizer does, so that the micro-batches of one update are one dump step (`start` again "
        "while it captures changes nothing): under an `if` that counts, or told by a switch when to update "
        "(ConvNeXt's `if (data_iter_step + 1) % update_freq == 0: optimizer.step()`, MAE's `loss_scaler(..., "
        "update_grad=(i + 1) % accum_iter == 0)`), `finally` stops and steps only under that condition (when it calls "
        "nothing and reads nothing the loop body assigns); an iteration that ends with `continue` before the step "
        "(open_clip's legacy `if ((i + 1) % args.accum_freq) > 0: continue`), or when a stepping helper gave None "
        "(open_clip's `if result is None: continue` after `result = _train_step_eager(...)`, which keeps a micro-batch "
        "for later), ends before the `try`, which begins after that check (an exception before it leaves the capture "
        "unwritten). Otherwise (accelerate's `with accelerator.accumulate(model):`, a loop over micro-batches, "
        "`for micro_step in range(steps * engine.gradient_accumulation_steps())`; not a loop whose body loops over "
        "the micro-batches it is given, LLaMA-Factory's `for micro_batches in self.train_batch_generator:`, one "
        "update per iteration) a note says the debugger steps once per iteration. The model passed to `start` is the one whose "
        "parameters the optimizer updates (through every value of a name it is given, `params = params + "
        "list(text_encoder.parameters())` under a flag too; the module a submodule belongs to, "
        "`text_encoder.get_input_embeddings().parameters()`; an optimizer a function or method of the file "
        "builds and returns, torchtune's `self._optimizer = self._setup_optimizer(cfg)`; the object an optimizer "
        "is kept on, stable-baselines3's `self.policy.optimizer`; a None among the models at run time is left out; "
        "MindSpore: those the train-step cell's optimizer is built from; "
        "`AdamW(get_params_groups(student))`: the model given to a helper that reads its parameters, or, when "
        "the helper cannot be read, to one named for parameters when the name holds a network there: built by "
        "a network class, moved with `.cuda()`/`.to(...)`, wrapped in `DistributedDataParallel`, or given "
        "`.parameters()`, `.train()` and the like; for such an object, the networks among the arguments it was "
        "built with, else the attributes whose parameters its class reads, `start(model=trainer.model)`; when the "
        "optimizer cannot be read, the network handed beside it to a helper that steps it and called as a module in "
        "the file, OpenRLHF's `strategy.optimizer_step(self.actor_optim, self.actor, ...)`; when no "
        "optimizer leads to one, a model by its usual name, `model`, `net`, ..., else what the function first switches to "
        "training mode, open_clip's `task.train()`); "
        "when the loop steps the optimizers of several models (also through a stepping function, seq2seq's `train(...)` stepping `encoder_optimizer` and `decoder_optimizer`) (a GAN's "
        "generator and discriminator, an actor and its critics) it gets all of them as a list, "
        "`start(model=[G, D])`, and records are named by their index, `Module.0.`..., as msprobe names model "
        "chunks (also when one optimizer construction serves several models in a loop over a literal list, "
        "StyleGAN2-ADA's `for name, module, ... in [('G', G, ...), ('D', D, ...)]`: `module` stands for each). The debugger is created right before the outermost loop of the "
        "function that builds the model; when the loop lives in a helper that receives the model "
        "(`train_one_epoch(model, ...)`, or `task = state.task`, vits' `net_g, net_d = nets` from its parameters) it is "
        "created at module level "
        "instead, so it exists once; in a package's module that is no script (ultralytics' engine/trainer.py, "
        "which `from ultralytics import YOLO` imports to predict too; stable-baselines3's ppo.py) the module level "
        "only binds `debugger = None`, and each function that trains creates it on its first call (`global "
        "debugger` / `if debugger is None:`), so importing the package creates none. "
        "The loop body's checks that skip an iteration before it trains (`if step < resume_step: continue`, as "
        "resumed runs skip the batches done, also nested in another `if`: `if resume:` / `if i < done: continue`; "
        "or leave the loop, dlrm's `if nbatches > 0 and j >= nbatches: break`; also after statements that call "
        "nothing, ConvNeXt's `step = data_iter_step // update_freq` / `if step >= "
        "num_training_steps_per_epoch: continue`, or nothing naming the model, dlrm's `X, ... = unpack_batch(batch)`, "
        "unless the check counts micro-batches) stay before `start`: a skipped iteration is not captured and takes no "
        "step, so step N is the same batch in a resumed run as in one from the start, and no capture is left running "
        "after a `break`. The window ends after "
        "the statement that steps (and its logging), before the first one after it that does work between steps, "
        "named for it: validation, evaluation, checkpoint saving, step-end callbacks (fairseq's `validate_and_save(...)`, "
        "minGPT's `self.trigger_callbacks('on_batch_end')`, Megatron's `save_checkpoint_and_time(...)`), and starts "
        "after an `if` doing such work before the statement that trains (nanoGPT's `if iter_num % eval_interval == 0:` "
        "evaluating and saving): their forwards are not dumped as part of the step. A loop whose model is put back "
        "after it from a copy saved before it (modded-nanogpt's compile warm-up: `initial_state = dict(model="
        "copy.deepcopy(model.state_dict()), ...)`, the loop, `model.load_state_dict(initial_state[\"model\"])`) is a "
        "warm-up whose steps are thrown away, not the training loop: a note says so (a best-so-far copy the loop "
        "replaces is no such copy). "
        "MindSpore `Model.train(...)` gets `MsprobeStep(debugger)` in `callbacks=`, with a note when "
        "`dataset_sink_mode` may be on (data sinking runs a sink of steps per callback: one dump would cover "
        "them all). Training a library trainer runs gets the runtime's callback in the trainer's construction, "
        "the debugger created before it (not a trainer the block building it only evaluates, calling its "
        "`evaluate`/`predict`/`validate`/`test`): a Hugging Face trainer (`Trainer`, `Seq2SeqTrainer`, any `...Trainer` "
        "class of `transformers` or `trl` such as `SFTTrainer`, also a subclass of one defined in the file) "
        "`MsprobeTrainerCallback(debugger)`, Lightning's `Trainer` (`lightning`, `lightning.pytorch`, "
        "`pytorch_lightning`; also built by Lightning 1.x's `Trainer.from_argparse_args(args, **kwargs)`) "
        "`MsprobeLightningCallback(debugger)`, an mmengine `Runner` or `FlexibleRunner` "
        "(OpenMMLab) `MsprobeMMEngineHook(debugger)` in `custom_hooks=`, or, built by `Runner.from_cfg(cfg)`, "
        "through `runner.register_hook(...)` after it, mindformers' `Trainer` `MsprobeStep(debugger)` (it trains "
        "through Model.train; notes say to turn its data sinking and graph mode off), a detectron2 trainer "
        "(`DefaultTrainer` or a subclass, `SimpleTrainer`, `AMPTrainer`) `MsprobeDetectron2Hook(debugger)` through "
        "`trainer.register_hooks([...])` (the hook puts itself first when training begins); they start, stop and step the debugger around "
        "each optimizer step. The callback goes first, so that the step's end stops capture before the other "
        "callbacks' step-end work (latent diffusion's image logger samples the model there, mindocr's evaluator "
        "runs validation): an absent or `None` `callbacks=` becomes a list, a list gets it at its head, a name only "
        "ever assigned lists (or what a project function whose every return is a list gives, segment-anything's "
        "`create_callback(...)`) becomes `[...] + name`, one callback `[..., it]`, the `**mapping` (of one or several) whose "
        "`\"callbacks\"` entry was last given a list (`trainer_kwargs[\"callbacks\"] = [...]`, as latent diffusion's "
        "main.py builds its trainer; a dict comprehension over a mapping's `.items()` keeps its entries, as "
        "generative-models' `{key: val for key, val in trainer_kwargs.items() if key not in trainer_opt}` does) gets "
        "`mapping[\"callbacks\"].insert(0, ...)` before the construction; where `callbacks=` cannot be read "
        "(`**kwargs` that may hold it, a helper's result, a subclass whose `__init__` takes none) a Hugging Face "
        "trainer assigned to a name gets `trainer.add_callback(...)` after its construction (an mmengine runner "
        "`runner.register_hook(...)`, right before its `runner.train()` when a block around the construction has "
        "one, so that OpenMMLab's `RUNNERS.build(cfg)` in the other branch gets it too), anything else a note naming "
        "the callback's import (and, when the run creates no debugger, the debugger's creation); a "
        "`runner.train()` on a runner the file builds only otherwise (mmengine's `RUNNERS.build(cfg)`) gets a note. "
        "A file that imports mindnlp (or mindtorch) runs these trainers on MindSpore, `torch` being mindtorch: the "
        "PyTorch callback cannot capture there, so a note says so and nothing is added (its seeding comes from "
        "msprobe_runtime.mindspore, which seeds mindtorch too). "
        "A project class named `Trainer` is no library's: its loop, if it has one, is the training loop. The config is "
        "`config.json` beside the script (`--config PATH`; `--emit-config` writes a default one). When no "
        "loop is found the tool says so and adds nothing (for Megatron's `pretrain(...)` the note names its loop, "
        "`train()` in megatron/training/training.py, to instrument, and the flags that make runs comparable, "
        "`--deterministic-mode --attention-dropout 0 --hidden-dropout 0`: seed_all's rm_dropout does not reach "
        "Transformer Engine; for a fork among the project's files without that option, gpt-neox's, the project's "
        "own file that holds `pretrain`); when the step runs only past a bound (`if global_step > "
        "args.learning_starts:`, as off-policy RL does) a note says the first captured steps may hold no "
        "update; when an entry script's loop lives in a function it "
        "imports from another file of the project (`train_one_epoch` in `engine.py`, as MAE, DeiT and DINO are "
        "laid out; also through a package's `from .engine import *`, and from a package under the project's `src/`, "
        "nanotron's `DistributedTrainer.train` in src/nanotron/trainer.py; a class the script names in the annotation of "
        "a variable whose method it calls, torchtitan's `trainer: Trainer | None` built by `config.build()`), or its "
        "trainer is built there, the note "
        "names that file: instrument both (also for a class the script's own factory looks up in a registry, LAVIS' "
        "`get_runner_class(cfg)(...)` returning `registry.get_runner_class(name)`, the classes registered with "
        "`@registry.register_runner(...)`; where such a class hands its optimizer to a training method of an object "
        "it holds, RunnerBase's `self.task.train_epoch(..., optimizer=self.optimizer)`, the note names the method "
        "of that name among the classes of the project modules the script imports that reaches a loop, "
        "`BaseTask._train_inner_loop` in lavis/tasks/base_task.py); a module whose class inherits its training loop "
        "from a class of another project file, ultralytics' RTDETRTrainer through DetectionTrainer from BaseTrainer, is "
        "told that file (`BaseTrainer._do_train` in engine/trainer.py), and a script running an ultralytics model's "
        "`train(...)` (`YOLO(...).train(data=..., seed=7)`) is told that loop, or the model's `on_train_batch_start` "
        "and `on_train_batch_end` callbacks to start and stop the debugger in (one running MindSpore Reinforcement's "
        "`session.run(class_type=...)`, mindrl's examples, is told `Trainer.train` in mindspore_rl/agent/trainer.py "
        "and a Callback's `episode_begin`/`episode_end`); a script that "
        "calls `trainer.train()`/`.fit(...)` on a trainer built elsewhere (a parameter, `build_trainer(cfg)`, "
        "`hydra.utils.instantiate(cfg.trainer)`) is told to add the callback where it is built; a SpeechBrain "
        "recipe's `brain.fit(...)` (the library's loop, which takes no callbacks) is told to start the debugger in "
        "its Brain's `on_fit_batch_start` and stop and step it in `on_fit_batch_end`; a script whose training lies "
        "further on in the project (LLaMA-Factory's src/train.py: `run_exp()`, whose trainer is built three files on) "
        "is told the call that starts it. Where the debugger is added, code "
        "compiled out of capture's sight gets a note to turn it off while debugging: `torch.compile` (its regions "
        "are skipped; not `model = torch.compile(model)` after the Hugging Face trainer that trains was built with "
        "`model`, as alpaca-lora does: the trainer keeps the uncompiled module), `mindspore.jit` (calls inside are not recorded) and `set_context(mode=mindspore.GRAPH_MODE)` "
        "(nothing is captured in graph mode; also `mode=0` or an option whose default is 0, and a mode read from "
        "elsewhere, `mode=cfg.system.mode`, with an `if`).")
    examples = (
        Example("import torch\n\nmodel = torch.nn.Linear(2, 1)\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
                "for x in torch.randn(4, 8, 2):\n    loss = model(x).sum()\n    loss.backward()\n"
                "    opt.step()\n    opt.zero_grad()\n",
                "import torch\nimport os\nfrom msprobe_runtime.pytorch import PrecisionDebugger\n\n"
                "model = torch.nn.Linear(2, 1)\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
                "debugger = PrecisionDebugger(config_path=os.path.join(os.path.dirname(__file__), \"config.json\"))\n"
                "for x in torch.randn(4, 8, 2):\n    debugger.start(model=model)\n    try:\n"
                "        loss = model(x).sum()\n        loss.backward()\n        opt.step()\n        opt.zero_grad()\n"
                "    finally:\n        debugger.stop()\n        debugger.step()\n"),
        # A name a comprehension binds is not defined at the loop: DLRM's `emb` stands for `dlrm.emb_l`, part of `dlrm`.
        Example("import torch\n\n\ndef main(dlrm, world_size):\n"
                "    parameters = dlrm.parameters() if world_size == 1 else [\n"
                "        {\"params\": [p for emb in dlrm.emb_l for p in emb.parameters()]},\n"
                "        {\"params\": dlrm.top_l.parameters()},\n    ]\n"
                "    optimizer = torch.optim.SGD(parameters, lr=0.1)\n    for x in torch.randn(4, 8, 2):\n"
                "        dlrm(x).sum().backward()\n        optimizer.step()\n",
                "import torch\nimport os\nfrom msprobe_runtime.pytorch import PrecisionDebugger\n"
                "debugger = PrecisionDebugger(config_path=os.path.join(os.path.dirname(__file__), \"config.json\"))\n"
                "\n\ndef main(dlrm, world_size):\n"
                "    parameters = dlrm.parameters() if world_size == 1 else [\n"
                "        {\"params\": [p for emb in dlrm.emb_l for p in emb.parameters()]},\n"
                "        {\"params\": dlrm.top_l.parameters()},\n    ]\n"
                "    optimizer = torch.optim.SGD(parameters, lr=0.1)\n"
                "    for x in torch.randn(4, 8, 2):\n        debugger.start(model=dlrm)\n"
                "        try:\n            dlrm(x).sum().backward()\n            optimizer.step()\n"
                "        finally:\n            debugger.stop()\n            debugger.step()\n"),
        # A function with the batch loop is no step of the epoch loop calling it, even when it steps once more after
        # that loop (minimind's `train_epoch` flushes the gradients it accumulated). The debugger steps where the
        # optimizer does: the micro-batches of one update are one dump step.
        Example("import torch\n\nmodel = torch.nn.Linear(2, 1)\n"
                "opt = torch.optim.SGD(model.parameters(), lr=0.1)\n\n\ndef train_epoch(loader):\n"
                "    for i, x in enumerate(loader):\n        model(x).sum().backward()\n"
                "        if i % 4 == 3:\n            opt.step()\n    opt.step()\n\n\n"
                "for epoch in range(2):\n    train_epoch(torch.randn(4, 8, 2))\n",
                "import torch\nimport os\nfrom msprobe_runtime.pytorch import PrecisionDebugger\n"
                "debugger = PrecisionDebugger(config_path=os.path.join(os.path.dirname(__file__), \"config.json\"))\n"
                "\nmodel = torch.nn.Linear(2, 1)\n"
                "opt = torch.optim.SGD(model.parameters(), lr=0.1)\n\n\ndef train_epoch(loader):\n"
                "    for i, x in enumerate(loader):\n        debugger.start(model=model)\n"
                "        try:\n            model(x).sum().backward()\n            if i % 4 == 3:\n"
                "                opt.step()\n        finally:\n"
                "            if i % 4 == 3: debugger.stop(); debugger.step()\n    opt.step()\n\n\nfor epoch in range(2):\n"
                "    train_epoch(torch.randn(4, 8, 2))\n"),
        # A resumed run skips the batches done: those iterations are not captured and take no debugger step, so
        # step N is the same batch in a resumed run and in one from the start.
        Example("import torch\n\nmodel = torch.nn.Linear(2, 1)\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
                "for step, x in enumerate(torch.randn(4, 8, 2)):\n    if step < resume_step:\n        continue\n"
                "    model(x).sum().backward()\n    opt.step()\n",
                "import torch\nimport os\nfrom msprobe_runtime.pytorch import PrecisionDebugger\n\n"
                "model = torch.nn.Linear(2, 1)\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
                "debugger = PrecisionDebugger(config_path=os.path.join(os.path.dirname(__file__), \"config.json\"))\n"
                "for step, x in enumerate(torch.randn(4, 8, 2)):\n    if step < resume_step:\n        continue\n"
                "    debugger.start(model=model)\n    try:\n        model(x).sum().backward()\n        opt.step()\n"
                "    finally:\n        debugger.stop()\n        debugger.step()\n"),
        # Saving a checkpoint after the step is work between steps: the window ends before it, so that what it
        # runs (a validation pass's forwards, fairseq's `validate_and_save(...)`) is not dumped as part of the step.
        Example("import torch\n\nmodel = torch.nn.Linear(2, 1)\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
                "for step, x in enumerate(torch.randn(4, 8, 2)):\n    model(x).sum().backward()\n    opt.step()\n"
                "    if step % 2 == 0:\n        torch.save(model.state_dict(), \"ckpt.pt\")\n",
                "import torch\nimport os\nfrom msprobe_runtime.pytorch import PrecisionDebugger\n\n"
                "model = torch.nn.Linear(2, 1)\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
                "debugger = PrecisionDebugger(config_path=os.path.join(os.path.dirname(__file__), \"config.json\"))\n"
                "for step, x in enumerate(torch.randn(4, 8, 2)):\n    debugger.start(model=model)\n    try:\n"
                "        model(x).sum().backward()\n        opt.step()\n"
                "    finally:\n        debugger.stop()\n        debugger.step()\n"
                "    if step % 2 == 0:\n        torch.save(model.state_dict(), \"ckpt.pt\")\n"),
        # Plain SGD written out (pytorch/examples' regression): the update after backward() is the step, and the
        # model is the module whose parameters it runs over.
        Example("import torch\n\nfc = torch.nn.Linear(4, 1)\nfor x in torch.randn(4, 8, 4):\n    fc.zero_grad()\n"
                "    fc(x).sum().backward()\n    for param in fc.parameters():\n        param.data.add_(-0.1 * param.grad)\n",
                "import torch\nimport os\nfrom msprobe_runtime.pytorch import PrecisionDebugger\n\n"
                "fc = torch.nn.Linear(4, 1)\n"
                "debugger = PrecisionDebugger(config_path=os.path.join(os.path.dirname(__file__), \"config.json\"))\n"
                "for x in torch.randn(4, 8, 4):\n    debugger.start(model=fc)\n    try:\n        fc.zero_grad()\n"
                "        fc(x).sum().backward()\n        for param in fc.parameters():\n"
                "            param.data.add_(-0.1 * param.grad)\n"
                "    finally:\n        debugger.stop()\n        debugger.step()\n"),
        # The optimizer wrapped by Lightning's Fabric: the model is still the one it updates, not `fabric`.
        Example("import torch\nfrom lightning import Fabric\n\nfabric = Fabric()\n"
                "model = fabric.setup(torch.nn.Linear(2, 1))\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
                "opt = fabric.setup_optimizers(opt)\nfor x in torch.randn(4, 8, 2):\n"
                "    fabric.backward(model(x).sum())\n    opt.step()\n",
                "import torch\nfrom lightning import Fabric\nimport os\nfrom msprobe_runtime.pytorch import PrecisionDebugger\n\n"
                "fabric = Fabric()\nmodel = fabric.setup(torch.nn.Linear(2, 1))\n"
                "opt = torch.optim.SGD(model.parameters(), lr=0.1)\nopt = fabric.setup_optimizers(opt)\n"
                "debugger = PrecisionDebugger(config_path=os.path.join(os.path.dirname(__file__), \"config.json\"))\n"
                "for x in torch.randn(4, 8, 2):\n    debugger.start(model=model)\n    try:\n"
                "        fabric.backward(model(x).sum())\n        opt.step()\n"
                "    finally:\n        debugger.stop()\n        debugger.step()\n"),
        # A GAN: the loop steps the optimizers of two models, and both are captured.
        Example("import torch\n\nG = torch.nn.Linear(2, 2)\nD = torch.nn.Linear(2, 1)\n"
                "opt_g = torch.optim.Adam(G.parameters())\nopt_d = torch.optim.Adam(D.parameters())\n"
                "for z in torch.randn(4, 8, 2):\n    (-D(G(z)).mean()).backward()\n    opt_g.step()\n"
                "    D(G(z).detach()).mean().backward()\n    opt_d.step()\n",
                "import torch\nimport os\nfrom msprobe_runtime.pytorch import PrecisionDebugger\n\n"
                "G = torch.nn.Linear(2, 2)\nD = torch.nn.Linear(2, 1)\n"
                "opt_g = torch.optim.Adam(G.parameters())\nopt_d = torch.optim.Adam(D.parameters())\n"
                "debugger = PrecisionDebugger(config_path=os.path.join(os.path.dirname(__file__), \"config.json\"))\n"
                "for z in torch.randn(4, 8, 2):\n    debugger.start(model=[G, D])\n    try:\n"
                "        (-D(G(z)).mean()).backward()\n        opt_g.step()\n"
                "        D(G(z).detach()).mean().backward()\n        opt_d.step()\n"
                "    finally:\n        debugger.stop()\n        debugger.step()\n"),
        # Two training phases in a `__main__` block: one debugger, made in the block before the first phase.
        Example("import torch\n\nif __name__ == \"__main__\":\n    model = torch.nn.Linear(2, 1)\n"
                "    opt = torch.optim.SGD(model.parameters(), lr=0.1)\n    for x in torch.randn(4, 8, 2):\n"
                "        model(x).sum().backward()\n        opt.step()\n    for x in torch.randn(4, 8, 2):\n"
                "        model(x).mean().backward()\n        opt.step()\n",
                "import torch\nimport os\nfrom msprobe_runtime.pytorch import PrecisionDebugger\n\n"
                "if __name__ == \"__main__\":\n    model = torch.nn.Linear(2, 1)\n"
                "    opt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
                "    debugger = PrecisionDebugger(config_path=os.path.join(os.path.dirname(__file__), \"config.json\"))\n"
                "    for x in torch.randn(4, 8, 2):\n        debugger.start(model=model)\n        try:\n"
                "            model(x).sum().backward()\n            opt.step()\n        finally:\n"
                "            debugger.stop()\n            debugger.step()\n"
                "    for x in torch.randn(4, 8, 2):\n        debugger.start(model=model)\n        try:\n"
                "            model(x).mean().backward()\n            opt.step()\n        finally:\n"
                "            debugger.stop()\n            debugger.step()\n"),
        # The optimizer built from parameter groups a helper returns (DINO's `utils.get_params_groups`): the
        # model is the one the helper reads the parameters of.
        Example("import torch\n\n\ndef get_params_groups(model):\n"
                "    decay = [p for p in model.parameters() if p.ndim > 1]\n"
                "    no_decay = [p for p in model.parameters() if p.ndim <= 1]\n"
                "    return [{\"params\": decay}, {\"params\": no_decay, \"weight_decay\": 0.0}]\n\n\n"
                "student = torch.nn.Linear(2, 1)\nparams_groups = get_params_groups(student)\n"
                "opt = torch.optim.AdamW(params_groups)\nfor x in torch.randn(4, 8, 2):\n"
                "    student(x).sum().backward()\n    opt.step()\n",
                "import torch\nimport os\nfrom msprobe_runtime.pytorch import PrecisionDebugger\n\n\n"
                "def get_params_groups(model):\n"
                "    decay = [p for p in model.parameters() if p.ndim > 1]\n"
                "    no_decay = [p for p in model.parameters() if p.ndim <= 1]\n"
                "    return [{\"params\": decay}, {\"params\": no_decay, \"weight_decay\": 0.0}]\n\n\n"
                "student = torch.nn.Linear(2, 1)\nparams_groups = get_params_groups(student)\n"
                "opt = torch.optim.AdamW(params_groups)\n"
                "debugger = PrecisionDebugger(config_path=os.path.join(os.path.dirname(__file__), \"config.json\"))\n"
                "for x in torch.randn(4, 8, 2):\n    debugger.start(model=student)\n    try:\n"
                "        student(x).sum().backward()\n        opt.step()\n"
                "    finally:\n        debugger.stop()\n        debugger.step()\n"),
        # The step is a method of a trainer object (fairseq's `trainer.train_step(samples)`): the model is the
        # network its class updates, read through the object.
        Example("import torch\n\n\nclass Trainer:\n    def __init__(self, model):\n        self.model = model\n"
                "        self.opt = torch.optim.SGD(model.parameters(), lr=0.1)\n\n"
                "    def train_step(self, x):\n        self.model(x).sum().backward()\n        self.opt.step()\n\n\n"
                "trainer = Trainer(torch.nn.Linear(2, 1))\nfor x in torch.randn(4, 8, 2):\n    trainer.train_step(x)\n",
                "import torch\nimport os\nfrom msprobe_runtime.pytorch import PrecisionDebugger\n\n\n"
                "class Trainer:\n    def __init__(self, model):\n        self.model = model\n"
                "        self.opt = torch.optim.SGD(model.parameters(), lr=0.1)\n\n"
                "    def train_step(self, x):\n        self.model(x).sum().backward()\n        self.opt.step()\n\n\n"
                "trainer = Trainer(torch.nn.Linear(2, 1))\n"
                "debugger = PrecisionDebugger(config_path=os.path.join(os.path.dirname(__file__), \"config.json\"))\n"
                "for x in torch.randn(4, 8, 2):\n    debugger.start(model=trainer.model)\n    try:\n"
                "        trainer.train_step(x)\n"
                "    finally:\n        debugger.stop()\n        debugger.step()\n"),
        # A local function named for a scaler that only builds the step (open_clip's
        # `_make_train_step_no_accum_no_scaler(task, optimizer, ...)`) is no loss scaler: the batch loop is the step.
        Example("import torch\n\n\ndef make_step_no_scaler(model, optimizer):\n    def step(x):\n"
                "        model(x).sum().backward()\n        optimizer.step()\n\n    return step\n\n\n"
                "def train(model, optimizer, loader, epochs):\n    for epoch in range(epochs):\n"
                "        step = make_step_no_scaler(model, optimizer)\n        for x in loader:\n            step(x)\n",
                "import torch\nimport os\nfrom msprobe_runtime.pytorch import PrecisionDebugger\n"
                "debugger = PrecisionDebugger(config_path=os.path.join(os.path.dirname(__file__), \"config.json\"))\n\n\n"
                "def make_step_no_scaler(model, optimizer):\n    def step(x):\n        model(x).sum().backward()\n"
                "        optimizer.step()\n\n    return step\n\n\ndef train(model, optimizer, loader, epochs):\n"
                "    for epoch in range(epochs):\n        step = make_step_no_scaler(model, optimizer)\n"
                "        for x in loader:\n            debugger.start(model=model)\n            try:\n"
                "                step(x)\n            finally:\n                debugger.stop()\n"
                "                debugger.step()\n"),
        # The model read off a parameter (open_clip's `task = state.task`), found by its `train()`: the helper runs
        # once per epoch, so the debugger is created once, at module level.
        Example("import torch\n\n\ndef train_one_epoch(state, loader):\n    task, optimizer = state.task, state.optimizer\n"
                "    task.train()\n    for batch in loader:\n        optimizer.zero_grad()\n        task(batch).backward()\n"
                "        optimizer.step()\n",
                "import torch\nimport os\nfrom msprobe_runtime.pytorch import PrecisionDebugger\n"
                "debugger = PrecisionDebugger(config_path=os.path.join(os.path.dirname(__file__), \"config.json\"))\n\n\n"
                "def train_one_epoch(state, loader):\n    task, optimizer = state.task, state.optimizer\n    task.train()\n"
                "    for batch in loader:\n        debugger.start(model=task)\n        try:\n            optimizer.zero_grad()\n"
                "            task(batch).backward()\n            optimizer.step()\n        finally:\n"
                "            debugger.stop()\n            debugger.step()\n"),
        # MindSpore: a cell of the project's own that calls the train-step cell it is given (Colorization's
        # `ColorModel`): calling it is the step, and the model is the network the optimizer updates.
        Example("import mindspore as ms\nfrom mindspore import nn\n\n\nclass Wrap(nn.Cell):\n"
                "    def __init__(self, step):\n        super().__init__()\n        self.step = step\n\n"
                "    def construct(self, x, y):\n        return self.step(x, y)\n\n\n"
                "net = nn.Dense(2, 1)\nopt = nn.Adam(net.trainable_params())\n"
                "model = Wrap(nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), opt))\n"
                "for x, y in dataset:\n    model(x, y)\n",
                "import mindspore as ms\nfrom mindspore import nn\nimport os\n"
                "from msprobe_runtime.mindspore import PrecisionDebugger\n\n\nclass Wrap(nn.Cell):\n"
                "    def __init__(self, step):\n        super().__init__()\n        self.step = step\n\n"
                "    def construct(self, x, y):\n        return self.step(x, y)\n\n\n"
                "net = nn.Dense(2, 1)\nopt = nn.Adam(net.trainable_params())\n"
                "model = Wrap(nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), opt))\n"
                "debugger = PrecisionDebugger(config_path=os.path.join(os.path.dirname(__file__), \"config.json\"))\n"
                "for x, y in dataset:\n    debugger.start(model=net)\n    try:\n        model(x, y)\n"
                "    finally:\n        debugger.stop()\n        debugger.step()\n"),
        Example("import mindspore as ms\n\nnet = ms.nn.Dense(2, 1)\n"
                "model = ms.Model(net, loss_fn=ms.nn.MSELoss(), optimizer=ms.nn.SGD(net.trainable_params()))\n"
                "model.train(1, dataset, callbacks=[ms.train.LossMonitor()])\n",
                "import mindspore as ms\nimport os\nfrom msprobe_runtime.mindspore import MsprobeStep, PrecisionDebugger\n\n"
                "net = ms.nn.Dense(2, 1)\n"
                "model = ms.Model(net, loss_fn=ms.nn.MSELoss(), optimizer=ms.nn.SGD(net.trainable_params()))\n"
                "debugger = PrecisionDebugger(config_path=os.path.join(os.path.dirname(__file__), \"config.json\"))\n"
                "model.train(1, dataset, callbacks=[MsprobeStep(debugger), ms.train.LossMonitor()])\n"),
        # mindformers' Trainer runs MindSpore's Model.train: its callbacks are MindSpore's. The script names no
        # `mindspore`, and is a MindSpore script all the same.
        Example("from mindformers import Trainer\n\ntrainer = Trainer(config)\ntrainer.train()\n",
                "from mindformers import Trainer\nimport os\nfrom msprobe_runtime.mindspore import MsprobeStep, "
                "PrecisionDebugger\n\n"
                "debugger = PrecisionDebugger(config_path=os.path.join(os.path.dirname(__file__), \"config.json\"))\n"
                "trainer = Trainer(config, callbacks=[MsprobeStep(debugger)])\ntrainer.train()\n"),
        # A Hugging Face trainer, here a subclass of the project's: the callback goes into `callbacks=`.
        Example("from transformers import Trainer, TrainingArguments\n\n\nclass MyTrainer(Trainer):\n"
                "    def compute_loss(self, model, inputs, return_outputs=False, **kwargs):\n"
                "        return model(**inputs).loss\n\n\ndef main(model, data):\n"
                "    args = TrainingArguments(\"out\", seed=0)\n"
                "    trainer = MyTrainer(model=model, args=args, train_dataset=data)\n    trainer.train()\n",
                "from transformers import Trainer, TrainingArguments\nimport os\n"
                "from msprobe_runtime.pytorch import MsprobeTrainerCallback, PrecisionDebugger\n\n\n"
                "class MyTrainer(Trainer):\n    def compute_loss(self, model, inputs, return_outputs=False, **kwargs):\n"
                "        return model(**inputs).loss\n\n\ndef main(model, data):\n"
                "    args = TrainingArguments(\"out\", seed=0)\n"
                "    debugger = PrecisionDebugger(config_path=os.path.join(os.path.dirname(__file__), \"config.json\"))\n"
                "    trainer = MyTrainer(model=model, args=args, train_dataset=data, "
                "callbacks=[MsprobeTrainerCallback(debugger)])\n    trainer.train()\n"),
        # trl's trainers are Hugging Face trainers too; a `callbacks=` list is appended to.
        Example("from transformers import EarlyStoppingCallback\nfrom trl import SFTTrainer\n\n"
                "trainer = SFTTrainer(model=\"Qwen/Qwen2-0.5B\", train_dataset=data, "
                "callbacks=[EarlyStoppingCallback(3)])\ntrainer.train()\n",
                "from transformers import EarlyStoppingCallback\nfrom trl import SFTTrainer\nimport os\n"
                "from msprobe_runtime.pytorch import MsprobeTrainerCallback, PrecisionDebugger\n\n"
                "debugger = PrecisionDebugger(config_path=os.path.join(os.path.dirname(__file__), \"config.json\"))\n"
                "trainer = SFTTrainer(model=\"Qwen/Qwen2-0.5B\", train_dataset=data, "
                "callbacks=[MsprobeTrainerCallback(debugger), EarlyStoppingCallback(3)])\ntrainer.train()\n"),
        # `**kwargs` may hold `callbacks=` (Stanford Alpaca's `**data_module`): a Hugging Face trainer is given
        # the callback with `add_callback` instead.
        Example("import transformers\n\ntrainer = transformers.Trainer(model=model, args=args, **data_module)\n"
                "trainer.train()\n",
                "import transformers\nimport os\n"
                "from msprobe_runtime.pytorch import MsprobeTrainerCallback, PrecisionDebugger\n\n"
                "debugger = PrecisionDebugger(config_path=os.path.join(os.path.dirname(__file__), \"config.json\"))\n"
                "trainer = transformers.Trainer(model=model, args=args, **data_module)\n"
                "trainer.add_callback(MsprobeTrainerCallback(debugger))\ntrainer.train()\n"),
        # Lightning's Trainer, in a `__main__` block: the debugger is created in the block.
        Example("import lightning as L\n\nif __name__ == \"__main__\":\n    model = LitModel()\n"
                "    trainer = L.Trainer(max_epochs=1)\n    trainer.fit(model, loader)\n",
                "import lightning as L\nimport os\n"
                "from msprobe_runtime.pytorch import MsprobeLightningCallback, PrecisionDebugger\n\n"
                "if __name__ == \"__main__\":\n    model = LitModel()\n"
                "    debugger = PrecisionDebugger(config_path=os.path.join(os.path.dirname(__file__), \"config.json\"))\n"
                "    trainer = L.Trainer(max_epochs=1, callbacks=[MsprobeLightningCallback(debugger)])\n"
                "    trainer.fit(model, loader)\n"),
        # One optimizer construction in a loop over the models (StyleGAN2-ADA's training phases): the loop variable
        # stands for each model the list holds. A loop over the optimizers is one step of them all (a GAN's
        # generator and discriminator steps), so the loop around it is the training loop.
        Example("import torch\n\nG, D = torch.nn.Linear(2, 2), torch.nn.Linear(2, 1)\nphases = []\n"
                "for name, module in [(\"G\", G), (\"D\", D)]:\n    opt = torch.optim.Adam(module.parameters())\n"
                "    phases.append(opt)\nfor x in torch.randn(4, 8, 2):\n    for opt in phases:\n"
                "        D(G(x)).sum().backward()\n        opt.step()\n",
                "import torch\nimport os\nfrom msprobe_runtime.pytorch import PrecisionDebugger\n\n"
                "G, D = torch.nn.Linear(2, 2), torch.nn.Linear(2, 1)\nphases = []\n"
                "for name, module in [(\"G\", G), (\"D\", D)]:\n    opt = torch.optim.Adam(module.parameters())\n"
                "    phases.append(opt)\n"
                "debugger = PrecisionDebugger(config_path=os.path.join(os.path.dirname(__file__), \"config.json\"))\n"
                "for x in torch.randn(4, 8, 2):\n    debugger.start(model=[G, D])\n    try:\n        for opt in phases:\n"
                "            D(G(x)).sum().backward()\n            opt.step()\n    finally:\n"
                "        debugger.stop()\n        debugger.step()\n"),
        # Lightning 1.x builds a trainer from parsed arguments, its keywords in a mapping that holds a list of
        # callbacks (latent diffusion's main.py): the callback joins that list.
        Example("from pytorch_lightning.trainer import Trainer\n\n\ndef main(opt, model, data):\n"
                "    trainer_kwargs = dict()\n    trainer_kwargs[\"callbacks\"] = [cb(c) for c in opt.callbacks]\n"
                "    trainer = Trainer.from_argparse_args(opt, **trainer_kwargs)\n    trainer.fit(model, data)\n",
                "from pytorch_lightning.trainer import Trainer\nimport os\n"
                "from msprobe_runtime.pytorch import MsprobeLightningCallback, PrecisionDebugger\n\n\n"
                "def main(opt, model, data):\n    trainer_kwargs = dict()\n"
                "    trainer_kwargs[\"callbacks\"] = [cb(c) for c in opt.callbacks]\n"
                "    debugger = PrecisionDebugger(config_path=os.path.join(os.path.dirname(__file__), \"config.json\"))\n"
                "    trainer_kwargs[\"callbacks\"].insert(0, MsprobeLightningCallback(debugger))\n"
                "    trainer = Trainer.from_argparse_args(opt, **trainer_kwargs)\n    trainer.fit(model, data)\n"),
        # A project's own `Trainer` is no library's: its hand-written loop is the training loop.
        Example("import torch\n\n\nclass Trainer:\n    def __init__(self, model):\n        self.model = model\n"
                "        self.opt = torch.optim.SGD(model.parameters(), lr=0.1)\n\n    def fit(self, loader):\n"
                "        for x in loader:\n            self.model(x).sum().backward()\n            self.opt.step()\n\n\n"
                "Trainer(torch.nn.Linear(2, 1)).fit(torch.randn(4, 8, 2))\n",
                "import torch\nimport os\nfrom msprobe_runtime.pytorch import PrecisionDebugger\n"
                "debugger = PrecisionDebugger(config_path=os.path.join(os.path.dirname(__file__), \"config.json\"))\n\n\n"
                "class Trainer:\n    def __init__(self, model):\n        self.model = model\n"
                "        self.opt = torch.optim.SGD(model.parameters(), lr=0.1)\n\n    def fit(self, loader):\n"
                "        for x in loader:\n            debugger.start(model=self.model)\n            try:\n"
                "                self.model(x).sum().backward()\n                self.opt.step()\n"
                "            finally:\n                debugger.stop()\n                debugger.step()\n\n\n"
                "Trainer(torch.nn.Linear(2, 1)).fit(torch.randn(4, 8, 2))\n"),
        # mmengine's Runner (OpenMMLab) takes the hook in `custom_hooks=`; one built from a config takes it through
        # `register_hook`.
        Example("from mmengine.runner import Runner\n\nrunner = Runner(model=model, work_dir='work', "
                "train_dataloader=loader, optim_wrapper=optim, train_cfg=dict(max_iters=10))\nrunner.train()\n",
                "from mmengine.runner import Runner\nimport os\n"
                "from msprobe_runtime.pytorch import MsprobeMMEngineHook, PrecisionDebugger\n\n"
                "debugger = PrecisionDebugger(config_path=os.path.join(os.path.dirname(__file__), \"config.json\"))\n"
                "runner = Runner(model=model, work_dir='work', train_dataloader=loader, optim_wrapper=optim, "
                "train_cfg=dict(max_iters=10), custom_hooks=[MsprobeMMEngineHook(debugger)])\nrunner.train()\n"),
        Example("from mmengine.config import Config\nfrom mmengine.runner import Runner\n\n"
                "runner = Runner.from_cfg(Config.fromfile('configs/retinanet.py'))\nrunner.train()\n",
                "from mmengine.config import Config\nfrom mmengine.runner import Runner\nimport os\n"
                "from msprobe_runtime.pytorch import MsprobeMMEngineHook, PrecisionDebugger\n\n"
                "debugger = PrecisionDebugger(config_path=os.path.join(os.path.dirname(__file__), \"config.json\"))\n"
                "runner = Runner.from_cfg(Config.fromfile('configs/retinanet.py'))\n"
                "runner.register_hook(MsprobeMMEngineHook(debugger))\nrunner.train()\n"),
        # detectron2's trainers take hooks through `register_hooks([...])`, before `trainer.train(...)` (the lazy-config
        # script builds one of two); the hook puts itself first among the trainer's hooks when training begins.
        Example("from detectron2.engine import AMPTrainer, SimpleTrainer\n\n"
                "trainer = (AMPTrainer if amp else SimpleTrainer)(model, loader, optim)\n"
                "trainer.register_hooks([hooks.IterationTimer()])\ntrainer.train(0, 100)\n",
                "from detectron2.engine import AMPTrainer, SimpleTrainer\nimport os\n"
                "from msprobe_runtime.pytorch import MsprobeDetectron2Hook, PrecisionDebugger\n\n"
                "debugger = PrecisionDebugger(config_path=os.path.join(os.path.dirname(__file__), \"config.json\"))\n"
                "trainer = (AMPTrainer if amp else SimpleTrainer)(model, loader, optim)\n"
                "trainer.register_hooks([hooks.IterationTimer()])\n"
                "trainer.register_hooks([MsprobeDetectron2Hook(debugger)])\ntrainer.train(0, 100)\n"),
        # mindnlp runs transformers' Trainer on MindSpore (its `torch` is mindtorch): the PyTorch callback would
        # not work there, and nothing is added (with a note).
        Example("import mindnlp\nfrom transformers import Trainer\n\ntrainer = Trainer(model=model, args=args)\n"
                "trainer.train()\n",
                "import mindnlp\nfrom transformers import Trainer\n\ntrainer = Trainer(model=model, args=args)\n"
                "trainer.train()\n"),
        # A trainer of another library (detectron2's): its loop is not this file's, and nothing is added.
        Example("from detectron2.engine import DefaultTrainer\n\n\nclass Trainer(DefaultTrainer):\n    pass\n\n\n"
                "Trainer(cfg).train()\n",
                "from detectron2.engine import DefaultTrainer\n\n\nclass Trainer(DefaultTrainer):\n    pass\n\n\n"
                "Trainer(cfg).train()\n"),
    )

    def apply(self, unit: Unit) -> None:
        if unit.names.binds_any(DEBUGGERS):
            unit.note(None, "already imports a PrecisionDebugger: debugger left as it is")
            return
        analysis = unit.analysis
        for warm_up in analysis.warm_ups:
            restore = scopes.source_text(unit.text, warm_up.restore)
            unit.note(warm_up.node.lineno, f"this loop steps the optimizer, but `{restore}` (line "
                      f"{warm_up.restore.lineno}) puts back the weights saved before it (line {warm_up.saved.lineno}): "
                      "a warm-up whose steps are thrown away, not the training loop; the debugger is not added around it")
        if not analysis.loops and not analysis.callback_trainings:
            if unit.ctx.is_entry_script():  # library modules without a training loop are the normal case
                self._no_loop_note(unit)
            elif (library := _ultralytics_train(unit)) is not None:  # `YOLO(...).train()` at module level, or in a helper
                unit.note(*library)
            for cls, method, path in loops.inherited_loops(unit.ctx):
                unit.note(None, f"`{cls}` trains in the loop it inherits, `{method}` in {shown_path(path)}: "
                                "instrument that file; debugger not added here")
            return
        name = unit.names.free("debugger")
        starts = [self._start(unit, name, loop) for loop in analysis.loops]
        problems = [(train, self._callback(unit, name, train)) for train in analysis.callback_trainings
                    if self._has_callback(unit, train)]
        created = any(starts) or any(problem is None for _, problem in problems)
        for train, problem in problems:
            if problem is not None:
                unit.note(train.call.lineno, _by_hand(unit, name, train, problem, created))
        if not created:
            return
        anchor = self._anchor(unit)
        firsts = self._first_trainings(unit) if anchor is None else None

        def create(line: int) -> str:
            return f"{name} = {unit.runtime('PrecisionDebugger')}(config_path={_config(unit, line)})"

        if anchor is not None:
            target = unit.statement(anchor)
            placement = Placement(name, lambda new: unit.edits.insert_before(target, new), self._monitored(unit),
                                  anchor.lineno)
            placement.insert([nodes.statement(create(anchor.lineno))])
        elif firsts:  # a package's module: created on the first call that trains, not when anything imports it
            unit.edits.insert_after(unit.after_imports(), [nodes.statement(f"{name} = None")])
            for first in firsts:
                unit.edits.insert_before(unit.statement(first), [
                    nodes.statement(f"global {name}"), cst.parse_statement(f"if {name} is None:\n    {create(first.lineno)}\n")])
            placement = Placement(name, lambda new: None, None, firsts[0].lineno)
        else:  # the model lives in a helper's parameters: create the debugger once, at module level
            after = unit.after_imports()
            placement = Placement(name, lambda new: unit.edits.insert_after(after, new), None, None)
            placement.insert([nodes.statement(create(unit.after_imports_line()))])
        placement.by_callbacks = not analysis.loops and unit.options.target == "runtime"
        for line, note in compiled_notes(unit.ctx):
            if not _compiled_after_its_trainer(unit, line):
                unit.note(line, note)
        for statement, code in unit.shared.pop(AFTER_CREATION, []):  # after the creation, when both go before one statement
            unit.edits.insert_before(statement, [nodes.statement(code)])
        unit.shared["debugger"] = placement

    @staticmethod
    def _no_loop_note(unit: Unit) -> None:
        megatron = _megatron_pretrain(unit)
        if megatron is not None:
            unit.note(*megatron)
            return
        helpers = loops.loops_in_helpers(unit.ctx)
        if helpers:
            where = ", ".join(f"`{name}` in {shown_path(path)}" for name, path, _ in helpers)
            missing = [path for path in dict.fromkeys(shown_path(path) for _, path, _ in helpers)
                       if os.path.abspath(path) not in unit.options.given]
            what = "the trainer is built" if all(kind == "trainer" for _, _, kind in helpers) else "the training loop is"
            files = "those files" if len(missing) > 1 else "that file"
            advice = (f"instrument {files} too (msprobe-instrument --write {unit.path} {' '.join(missing)})" if missing
                      else "this run instruments it")
            unit.note(None, f"{what} not in this file but in {where}: {advice}; debugger not added here")
            return
        elsewhere = _trainer_elsewhere(unit) or _brain_fit(unit) or _ultralytics_train(unit) or _mindspore_rl_run(unit)
        if elsewhere is not None:
            unit.note(*elsewhere)
        elif (deeper := _training_deeper(unit)) is not None:
            unit.note(*deeper)
        elif unit.imports_framework:  # a script that names no framework and calls no training code: nothing to say
            unit.note(None, "no training loop found (no loop around an optimizer step, no Model.train call, no "
                            "Hugging Face or Lightning trainer): debugger not added")

    def _start(self, unit: Unit, name: str, loop) -> bool:
        node = unit.statement(loop.node)
        if node is None or not isinstance(getattr(node, "body", None), cst.IndentedBlock):
            unit.note(loop.node.lineno, "training loop body is on the header line: wrap it yourself")
            return False
        head, tail = _window(unit, loop, node)
        unguarded, counted = _unstepped(unit, loop, node, head, tail)
        condition = _step_condition(unit, loop) if loop.conditional else None
        if loop.conditional and condition is None and not counted:
            unit.note(loop.node.lineno, "the optimizer may update the weights only every few iterations here "
                                        "(gradient accumulation): the debugger steps once per iteration of this "
                                        "loop, that is once per micro-batch")
        if loop.threshold is not None:
            unit.note(loop.node.lineno, f"the optimizer steps here only when `{loop.threshold}`: the debugger steps once "
                                        "per iteration, so the first captured steps may hold no update (set the "
                                        "config's \"step\" past it)")
        if loop.inner_steps:
            unit.note(loop.node.lineno, "an optimizer also steps in a loop inside this one (a critic or actor "
                                        "update): the debugger steps once per iteration of this loop, around both")
        sink = next((node for node in loop.stepping if isinstance(node, ast.Call) and unit.ctx.assigned_calls.get(
            target_name(node.func) or "") in catalogue.MINDSPORE_DATA_SINK), None)
        if sink is not None:
            unit.note(sink.lineno, f"`{scopes.source_text(unit.text, sink.func)}()` comes from mindspore.data_sink: "
                                   "each call runs sink_size steps, and the debugger steps once per call, so a dump "
                                   "covers them all; pass sink_size=1 (and no jit_config) while debugging")
        call = f"{name}.start(model={loop.model})" if loop.model else f"{name}.start()"
        if loop.built_inside is not None:
            unit.note(loop.node.lineno, f"the model (`{loop.built_inside}`) is built inside this loop: `start()` gets "
                                        "no model and dumps APIs only; at L0 or mix pass it yourself once it exists")
        elif loop.model is None:
            unit.note(loop.node.lineno, "model not found: `start()` without a model dumps APIs only")
        start = nodes.statement(call)
        unit.edits.rewrite(node, lambda updated: updated.with_changes(
            body=updated.body.with_changes(body=[*updated.body.body[:head], start, *updated.body.body[head:]])))
        unit.wraps[node] = [wrap.wrap_loop(name, unit.structure.module.default_indent, head, tail, unguarded, condition)]
        return True

    @staticmethod
    def _has_callback(unit: Unit, train: loops.CallbackTraining) -> bool:
        """Whether the target package has a step callback for the library (msprobe has MindSpore's only; neither
        has one for transformers or Lightning running on mindnlp's mindtorch)."""
        if unit.torch_on_mindspore and train.library != "mindspore":
            unit.note(train.call.lineno, f"this {train.library} trainer trains mindtorch modules on MindSpore "
                                         "(the file imports mindnlp): msprobe-kit's callback for it is PyTorch's, "
                                         "so debugger not added")
            return False
        if unit.options.target == "runtime" or train.library in MSPROBE_CALLBACKS:
            return True
        unit.note(train.call.lineno, f"MindStudio Probe has no step callback for this {train.library} trainer: "
                                     "debugger not added (`--target runtime` adds msprobe-kit's)")
        return False

    def _callback(self, unit: Unit, name: str, train: loops.CallbackTraining) -> str | None:
        """Add the library's step callback to `callbacks=` of the call that takes it (a Hugging Face trainer whose
        `callbacks=` cannot take it gets `trainer.add_callback(...)` instead); else why not, for the note."""
        node = unit.node_for(train.call, cst.Call)
        what = {"mindspore": "Model.train call", "mmengine": "runner"}.get(train.library, "trainer")
        if node is None:
            return f"{what} not found in the source"
        if train.library == "mindspore":
            sinking = nodes.argument(node, "dataset_sink_mode", 3)
            literal = sinking.value.value if sinking is not None and isinstance(sinking.value, cst.Name) else None
            if sinking is not None and literal != "False":
                state = "is on" if literal == "True" else "may be on"
                unit.note(train.call.lineno, f"dataset_sink_mode {state}: with data sinking (Ascend, GPU) Model.train "
                          "runs a sink of steps between two step callbacks, so a dump would cover them all; pass "
                          "dataset_sink_mode=False while debugging")
        elif train.library == "mindformers":
            unit.note(train.call.lineno, "mindformers sinks data by default (`runner_config.sink_mode`): Model.train "
                      "then runs a sink of steps between two step callbacks, so a dump would cover them all; set "
                      "sink_mode to False in the config while debugging")
            unit.note(train.call.lineno, "mindformers runs in graph mode unless its config says otherwise "
                      "(`context.mode`, default GRAPH_MODE), where nothing is captured and dropout cells are not "
                      "switched off: set `context.mode: 1` (PYNATIVE_MODE) in the config, or pass `--mode 1`, while "
                      "debugging")
        keyword = loops.CALLBACK_KEYWORDS.get(train.library, "callbacks")
        current = nodes.argument(node, keyword, train.position)
        value = current.value if current is not None else None
        if not train.takes_callbacks:
            problem = f"the {what}'s construction takes no {keyword}="
        elif current is None and nodes.has_star(node):
            holder = _callbacks_mapping(train, keyword, unit.tree)
            if holder is not None:  # `Trainer.from_argparse_args(opt, **trainer_kwargs)`, its callbacks a list
                callback = f"{unit.runtime(CALLBACKS[train.library])}({name})"
                unit.shared.setdefault(AFTER_CREATION, []).append(
                    (unit.statement(train.statement), f'{holder}["{keyword}"].insert(0, {callback})'))
                return None
            problem = f"{what} with *args/**kwargs ({keyword}= may be among them)"
        elif current is not None and not _extendable(value, train):
            problem = f"{keyword}= is not a list"
        else:
            callback = nodes.expression(f"{unit.runtime(CALLBACKS[train.library])}({name})")
            unit.edits.rewrite(node, lambda updated: _add_callback(updated, train, keyword, callback))
            return None
        holder = _assigned_to(train)
        if train.library in ADD_CALLBACK and holder is not None:
            callback = f"{unit.runtime(CALLBACKS[train.library])}({name})"
            added = nodes.statement(f"{holder}.{ADD_CALLBACK[train.library].format(callback)}")
            run = _runner_train(unit, train, holder) if train.library in RUN_AFTER else None
            if run is not None:  # OpenMMLab's tools/train.py builds the runner in either branch of an `if`
                unit.edits.insert_before(unit.statement(run), [added])
            else:
                unit.edits.insert_after(unit.statement(train.statement), [added])
            return None
        return problem

    def _anchor(self, unit: Unit) -> ast.stmt | None:
        """The statement to create the debugger before, in the function that trains (None: module level).

        That is the first statement of the function's own body that leads to training, when every model
        is created before it and it is no `__main__` guard; else the first statement leading to training in the
        innermost block that holds every loop (a `__main__` block's), when every model is created before that;
        else, for a single loop, its outermost loop. Never inside a loop."""
        analysis = unit.analysis
        anchors = [(loop.outermost, loop.function, loop.models) for loop in analysis.loops if loop.model_is_local]
        anchors += [(self._outermost(unit, t.statement), t.function, ()) for t in analysis.callback_trainings]
        if (len(anchors) != len(analysis.loops) + len(analysis.callback_trainings)
                or len({id(f) for _, f, _ in anchors}) != 1):
            return None
        function = anchors[0][1]
        first = min((scopes.top_statement(a, analysis.parents) for a, _, _ in anchors), key=lambda s: s.lineno)
        scope = function or unit.tree
        if self._models_before(scope, anchors, first) and not (isinstance(first, ast.If) and is_main_guard(first.test)):
            return first
        inner = scopes.first_in_common_block([a for a, _, _ in anchors], analysis.parents)  # in `if __name__ ...`
        return inner if len(anchors) == 1 or self._models_before(scope, anchors, inner) else None

    @staticmethod
    def _first_trainings(unit: Unit) -> list[ast.stmt] | None:
        """In a package's module run as no script (ultralytics' engine/trainer.py, which every `from ultralytics
        import YOLO` imports, to predict too), the statement of each function that trains where it first does;
        None elsewhere, or when training runs at module level. The debugger is created there on the first call,
        kept in a module-level name: once per process, also when the function runs once per epoch."""
        if unit.ctx.is_entry_script() or not (Path(unit.path).parent / "__init__.py").is_file():
            return None
        analysis = unit.analysis
        starts = [(loop.outermost, loop.function) for loop in analysis.loops]
        starts += [(Debugger._outermost(unit, t.statement), t.function) for t in analysis.callback_trainings]
        if any(function is None for _, function in starts):
            return None
        by_function: dict[int, list[ast.stmt]] = {}
        for statement, function in starts:
            by_function.setdefault(id(function), []).append(statement)
        return [scopes.first_in_common_block(statements, analysis.parents) for statements in by_function.values()]

    @staticmethod
    def _models_before(scope: ast.AST, anchors: list, statement: ast.stmt) -> bool:
        return all(scopes.assigned_before(scope, model.split(".", 1)[0], statement.lineno)
                   for _, _, models in anchors for model in models)

    @staticmethod
    def _outermost(unit: Unit, statement: ast.stmt) -> ast.stmt:
        outermost, node = statement, unit.analysis.parents.get(statement)
        while node is not None and not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Module)):
            if isinstance(node, LOOP_TYPES):
                outermost = node
            node = unit.analysis.parents.get(node)
        return outermost

    @staticmethod
    def _monitored(unit: Unit) -> str | None:
        analysis = unit.analysis
        if unit.framework == "mindspore":  # msprobe-kit's MsprobeStep monitors Model's optimizer itself
            found = [loop.optimizer for loop in analysis.loops] + [
                t.optimizer for t in analysis.callback_trainings if unit.options.target == "msprobe"]
        else:
            found = [loop.model for loop in analysis.loops]
        return next((f for f in found if f), None)


class GradProbe(Transform):
    name = "grad-probe"
    fixes = ()
    default = False
    summary = "Adds `debugger.monitor(model)` (MindSpore: the optimizer) next to the debugger (`--grad-probe`)."
    details = (
        "The gradient probe writes per-step gradient statistics when the config's task is `grad_probe`. "
        "PyTorch monitors the model whose parameters the optimizer updates, MindSpore the optimizer: every "
        "optimizer the training loop steps (a list when there are several, as in a GAN), or the project's cell "
        "that holds them (`monitor` finds the optimizers inside). msprobe-kit's step callbacks (Hugging Face, "
        "Lightning, MindSpore `Model.train`) monitor the model or optimizer themselves when the config's task is "
        "`grad_probe`: nothing is added for them (with `--target msprobe`, whose `MsprobeStep` does not, "
        "`monitor` gets Model's optimizer). "
        "The call goes right after the debugger is created; when that is at module level (the model is "
        "only known inside a helper), the tool says so and leaves it to you.")
    examples = (
        Example("import torch\n\n\ndef main():\n    model = torch.nn.Linear(2, 1)\n"
                "    opt = torch.optim.SGD(model.parameters(), lr=0.1)\n    for x in torch.randn(4, 8, 2):\n"
                "        model(x).sum().backward()\n        opt.step()\n",
                "import torch\nimport os\nfrom msprobe_runtime.pytorch import PrecisionDebugger\n\n\ndef main():\n"
                "    model = torch.nn.Linear(2, 1)\n    opt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
                "    debugger = PrecisionDebugger(config_path=os.path.join(os.path.dirname(__file__), "
                "\"config.json\"))\n    debugger.monitor(model)\n    for x in torch.randn(4, 8, 2):\n"
                "        debugger.start(model=model)\n        try:\n            model(x).sum().backward()\n"
                "            opt.step()\n        finally:\n            debugger.stop()\n            debugger.step()\n",
                {"grad_probe": True}),
    )

    def apply(self, unit: Unit) -> None:
        placement = unit.shared.get("debugger")
        if placement is None:
            if "debugger" not in unit.options.selected:
                unit.note(None, "grad-probe needs the debugger transform: not added")
            return
        if placement.by_callbacks:
            return  # the trainers' callbacks monitor their model themselves
        if unit.analysis.loops and all(loop.by_hand for loop in unit.analysis.loops):
            unit.note(placement.line, "grad-probe: the gradients are applied by hand, and the probe counts steps "
                                      "at optimizer.step(): monitor not added")
            return
        if placement.monitored is None:
            unit.note(placement.line, "grad-probe: the model is not known where the debugger is created; "
                                      f"call `{placement.name}.monitor(model)` yourself")
            return
        placement.insert([nodes.statement(f"{placement.name}.monitor({placement.monitored})")])


def _compiled_after_its_trainer(unit: Unit, line: int) -> bool:
    """Whether the code compiled at `line` is `model = torch.compile(model)` after every training there is, each a
    Hugging Face trainer built with that model (alpaca-lora): the trainer keeps the module it was given, uncompiled."""
    trainings = unit.analysis.callback_trainings
    if unit.analysis.loops or not trainings:
        return False
    assignment = next((node for node in ast.walk(unit.tree) if isinstance(node, ast.Assign) and node.lineno == line
                       and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                       and isinstance(node.value, ast.Call)), None)
    if assignment is None:
        return False
    name = assignment.targets[0].id
    return all(t.library == "transformers" and t.call.lineno < line
               and any(isinstance(node, ast.Name) and node.id == name for node in ast.walk(t.call)) for t in trainings)


def _extendable(value: cst.BaseExpression, train: loops.CallbackTraining) -> bool:
    """Whether `_add_callback` can add to the `callbacks=` value: None, a list, a name holding a list, one callback."""
    return (isinstance(value, cst.List) or isinstance(value, cst.Name) and value.value == "None"
            or train.callbacks is not None)


def _add_callback(call: cst.Call, train: loops.CallbackTraining, keyword: str, callback: cst.BaseExpression) -> cst.Call:
    """`call` with `callback` first in its `keyword=` (`callbacks=`, mmengine's `custom_hooks=`): put at the head
    of a list, before a name holding a list (`[callback] + cbs`), listed before one callback, an absent or None
    one set to `[callback]`."""
    arg = nodes.argument(call, keyword, train.position)
    value = arg.value if arg is not None else None
    if value is None or isinstance(value, cst.Name) and value.value == "None":
        return nodes.set_argument(call, keyword, cst.List([cst.Element(callback)]), train.position)
    if isinstance(value, cst.List):
        elements = list(value.elements)
        if elements:  # the new head takes the separator the old head has (its line break in a list across lines)
            comma = elements[0].comma
            comma = comma if isinstance(comma, cst.Comma) else cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
            elements.insert(0, cst.Element(callback, comma=comma))
        else:
            elements = [cst.Element(callback)]
        new = value.with_changes(elements=elements)
    elif train.callbacks == "list":
        new = cst.BinaryOperation(cst.List([cst.Element(callback)]), cst.Add(), value)
    else:  # one callback
        new = cst.List([cst.Element(callback, comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))),
                        cst.Element(value)])
    return nodes.set_argument(call, keyword, new, train.position)


def _callbacks_mapping(train: loops.CallbackTraining, keyword: str, tree: ast.Module) -> str | None:
    """The name of the one `**mapping` of a trainer's construction whose `keyword` entry is a list there, by the
    last assignment before it, in its scope, to the mapping or to that entry (latent diffusion's
    `trainer_kwargs["callbacks"] = [...]`, `kwargs = dict(callbacks=[...])`; generative-models' `Trainer(
    **trainer_opt, **trainer_kwargs)`: no other mapping can hold the entry too, or the call would fail)."""
    scope = train.function or tree
    listed = [k.value.id for k in train.call.keywords if k.arg is None and isinstance(k.value, ast.Name)
              and _listed_entry(scope, k.value.id, keyword, train.call.lineno)]
    return listed[0] if len(listed) == 1 else None


def _listed_entry(scope: ast.AST, name: str, key: str, line: int) -> bool:
    """Whether the last assignment in `scope` before `line` to mapping `name` or to its `key` entry gives that entry
    a list; a mapping rebuilt from itself or another by a comprehension over `.items()` (`{k: v for k, v in
    kw.items() if k not in opt}`) keeps that mapping's entries."""
    last = None
    for node in walk_scope(scope):
        if (isinstance(node, ast.Assign) and len(node.targets) == 1 and node.lineno < line
                and _assigns_entry(node.targets[0], name, key)
                and (last is None or (node.lineno, node.col_offset) > (last.lineno, last.col_offset))):
            last = node
    if last is None:
        return False
    if isinstance(last.targets[0], ast.Subscript):
        return isinstance(last.value, (ast.List, ast.ListComp))
    kept = _items_kept(last.value)
    if kept is not None:
        return _listed_entry(scope, kept, key, last.lineno)
    return isinstance(_entry(last.value, key), (ast.List, ast.ListComp))


def _assigns_entry(target: ast.expr, name: str, key: str) -> bool:
    """Whether `target` is mapping `name` or its `key` entry (`name["key"]`)."""
    if isinstance(target, ast.Name):
        return target.id == name
    return (isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name) and target.value.id == name
            and isinstance(target.slice, ast.Constant) and target.slice.value == key)


def _items_kept(value: ast.expr) -> str | None:
    """The mapping whose entries a dict comprehension `{k: v for k, v in name.items() ...}` keeps (filtered or
    not), else None."""
    if not (isinstance(value, ast.DictComp) and len(value.generators) == 1):
        return None
    generator = value.generators[0]
    source, target = generator.iter, generator.target
    if not (isinstance(source, ast.Call) and not source.args and isinstance(source.func, ast.Attribute)
            and source.func.attr == "items" and isinstance(source.func.value, ast.Name)
            and isinstance(target, ast.Tuple) and len(target.elts) == 2):
        return None
    names = [element.id if isinstance(element, ast.Name) else None for element in (value.key, value.value)]
    bound = [element.id if isinstance(element, ast.Name) else None for element in target.elts]
    return source.func.value.id if None not in names and names == bound else None


def _entry(mapping: ast.expr, key: str) -> ast.expr | None:
    """The value a dict display or `dict(...)` call gives `key`."""
    if isinstance(mapping, ast.Dict):
        return next((v for k, v in zip(mapping.keys, mapping.values, strict=True)
                     if isinstance(k, ast.Constant) and k.value == key), None)
    if isinstance(mapping, ast.Call) and isinstance(mapping.func, ast.Name) and mapping.func.id == "dict":
        return next((k.value for k in mapping.keywords if k.arg == key), None)
    return None


def _assigned_to(train: loops.CallbackTraining) -> str | None:
    """The name (or attribute chain) the trainer's construction is assigned to, if its statement is just that."""
    statement = train.statement
    if isinstance(statement, ast.Assign) and statement.value is train.call and len(statement.targets) == 1:
        target = statement.targets[0]
    elif isinstance(statement, ast.AnnAssign) and statement.value is train.call:
        target = statement.target
    else:
        return None
    return ast.unparse(target) if scopes.is_name_chain(target) else None


def _window(unit: Unit, loop, node: cst.CSTNode) -> tuple[int, int]:
    """How many statements of the loop's body stay before `start` and after the `try`, as counted in `node` (the
    loop's libcst body). Before: the checks that skip an iteration before it trains (`if step < resume_step:
    continue`: a skipped iteration takes no step of the debugger's), and an `if` doing work between steps before
    the first statement that trains (nanoGPT's `if iter_num % eval_interval == 0:` evaluating and saving); after:
    the statements from the first one after the last step that does work between steps (fairseq's
    `validate_and_save(...)`, minGPT's `trigger_callbacks('on_batch_end')`): no validation forward is dumped as
    part of a step."""
    body = loop.node.body
    holding = [i for i, statement in enumerate(body) if _trains(unit, statement, loop.stepping)]
    if not holding:
        return 0, 0
    head = 0
    for i, statement in enumerate(body[:holding[0]]):
        # ConvNeXt's `step = data_iter_step // update_freq` / `if step >= num_training_steps_per_epoch: continue`
        if (_skips(unit, statement, loop.stepping) and _nothing_done(loop, statement, body[head:i])
                or isinstance(statement, ast.If) and _between_steps(unit, statement)):
            head = i + 1
    tail = next((len(body) - i for i in range(holding[-1] + 1, len(body)) if _between_steps(unit, body[i])), 0)
    statements = list(node.body.body)

    def index(statement: ast.stmt) -> int | None:
        found = unit.statement(statement)
        return statements.index(found) if found in statements else None

    first = index(body[head - 1]) if head else -1
    last = index(body[len(body) - tail]) if tail else len(statements)
    if first is None or last is None:
        return 0, 0
    return first + 1, len(statements) - last


def _unstepped(unit: Unit, loop, node: cst.CSTNode, head: int, tail: int) -> tuple[int, bool]:
    """How many statements of the loop's body, after the first `head`, stay out of the `try`: those up to the last one
    holding a `continue` that ends an iteration before it steps (open_clip's legacy `if ((i + 1) % args.accum_freq) > 0:
    continue`), or when a stepping call gave None (open_clip's `result = _train_step_eager(...)` / `if result is None:
    continue`, a micro-batch kept for later). Such an iteration took no optimizer step, so it must not step the
    debugger, and the capture it started goes on into the next (`start` again changes nothing). With whether one of
    those checks counts iterations (gradient accumulation)."""
    body = loop.node.body
    stepping = {id(step) for step in loop.stepping}
    first = next((i for i, statement in enumerate(body) if any(id(node) in stepping for node in ast.walk(statement))),
                 len(body))
    results = {target.id for statement in ast.walk(loop.node) if isinstance(statement, ast.Assign)
               and statement.value in loop.stepping for target in statement.targets if isinstance(target, ast.Name)}
    skips = [(i, inner) for i, statement in enumerate(body) for inner in loops.same_loop([statement])
             if isinstance(inner, ast.If) and any(isinstance(end, ast.Continue) for end in inner.body)
             and (i < first or _tests_none(inner.test, results))]
    last = max((i for i, _ in skips), default=-1)
    statements = list(node.body.body)
    found = unit.statement(body[last]) if last >= 0 else None
    after = statements.index(found) + 1 if found in statements else 0
    if not after or after >= len(statements) - tail:  # none, or nothing left to guard
        return 0, False
    return max(after - head, 0), any(loops.counts(inner.test) for _, inner in skips)  # checks before `start` skip too


def _tests_none(test: ast.expr, names: set[str]) -> bool:
    """Whether `test` is `name is None` for one of `names`."""
    return (isinstance(test, ast.Compare) and isinstance(test.left, ast.Name) and test.left.id in names
            and len(test.ops) == 1 and isinstance(test.ops[0], ast.Is)
            and isinstance(test.comparators[0], ast.Constant) and test.comparators[0].value is None)


def _step_condition(unit: Unit, loop) -> str | None:
    """The condition every optimizer step of a gradient-accumulation loop runs under, when it can be evaluated again
    at the end of the iteration: the counting `if` around the step, or the switch the step is told to update by
    (ConvNeXt's `if (data_iter_step + 1) % update_freq == 0: optimizer.step()` and `loss_scaler(..., update_grad=(
    data_iter_step + 1) % update_freq == 0)`), calling nothing and reading nothing the loop's body assigns."""
    parents = unit.analysis.parents
    tests = []
    for step in loop.stepping:
        node, test = parents.get(step), None
        while node is not None and node is not loop.node and test is None:
            if isinstance(node, ast.If) and loops.counts(node.test) and not _inside(step, node.orelse):
                test = node.test
            node = parents.get(node)
        if test is None and isinstance(step, ast.Call):
            test = next((keyword.value for keyword in step.keywords if loops.counts(keyword.value)), None)
        if test is None:
            return None
        tests.append(test)
    assigned = {node.id for statement in loop.node.body for node in ast.walk(statement)
                if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load)}
    if not tests or len({ast.dump(test) for test in tests}) > 1 or any(
            isinstance(node, (ast.Call, ast.NamedExpr)) or isinstance(node, ast.Name) and node.id in assigned
            for node in ast.walk(tests[0])):
        return None
    text = ast.get_source_segment(unit.text, tests[0])
    return text if text is not None and "\n" not in text else None


def _inside(node: ast.AST, statements: list[ast.stmt]) -> bool:
    return any(node is inner for statement in statements for inner in ast.walk(statement))


def _skips(unit: Unit, statement: ast.stmt, stepping: tuple[ast.AST, ...]) -> bool:
    """Whether `statement` is a check that ends the iteration before it trains (`if step < resume_step: continue`,
    also nested: TinyLlama's `if resume:` / `if curr_iter < initial_iter: ... continue` / `else: resume = False`; or
    leaves the loop, dlrm's `if nbatches > 0 and j >= nbatches: break`)."""
    return (isinstance(statement, ast.If) and not _trains(unit, statement, stepping)
            and any(isinstance(node, (ast.Continue, ast.Break, ast.Return)) for node in loops.same_loop([statement])))


def _nothing_done(loop, check: ast.stmt, earlier: list[ast.stmt]) -> bool:
    """Whether the iteration has done none of the step's work when `check` ends it after `earlier`: they call
    nothing, or, when `check` counts no micro-batches, nothing that names a model the loop trains (dlrm's
    `X, lS_o, lS_i, T, W, CBPP = unpack_batch(inputBatch)` before `if X.size(0) % ext_dist.my_size != 0: continue`
    is no forward; a counted check after a forward keeps a micro-batch for the next step)."""
    calls = [node for statement in earlier for node in ast.walk(statement) if isinstance(node, ast.Call)]
    if not calls:
        return True
    models = set(loop.models)
    return bool(models) and not any(isinstance(node, ast.If) and loops.counts(node.test)
                                    for node in loops.same_loop([check])) and not any(
        isinstance(node, (ast.Name, ast.Attribute)) and ast.unparse(node) in models
        for call in calls for node in ast.walk(call))


def _between_steps(unit: Unit, statement: ast.stmt) -> bool:
    """Whether `statement` calls what is done between training steps, by the called name's words: validation,
    evaluation, saving a checkpoint, step-end callbacks (not activation checkpointing, part of the step)."""
    for node in ast.walk(statement):
        if not isinstance(node, ast.Call):
            continue
        name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        words = {word.lower() for word in re.findall(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])", name)}
        if words & catalogue.BETWEEN_STEPS_WORDS and not (unit.ctx.imports.resolve_any(node.func) or "").startswith(
                catalogue.ACTIVATION_CHECKPOINT_MODULES):
            return True
    return False


def _runner_train(unit: Unit, train: loops.CallbackTraining, holder: str) -> ast.stmt | None:
    """The statement `runner.train()` of the runner a construction binds, later in a block around it (the hook
    goes there, so a runner built in another branch gets it too)."""
    parents = unit.analysis.parents
    around, node = set(), train.statement
    while node is not None:
        around.add(id(node))
        node = parents.get(node)
    for node in ast.walk(train.function or unit.tree):
        if (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)
                and isinstance(node.value.func, ast.Attribute) and node.value.func.attr == "train"
                and target_name(node.value.func.value) == holder and node.lineno > train.statement.lineno
                and id(parents.get(node)) in around):
            return node
    return None


def _trains(unit: Unit, statement: ast.stmt, stepping: tuple[ast.AST, ...]) -> bool:
    """Whether `statement` applies gradients (one of `stepping`, an optimizer step) or computes them."""
    ids = {id(node) for node in stepping}
    return any(id(n) in ids or isinstance(n, ast.Call) and (
        unit.ctx.is_optimizer_step(n) or getattr(n.func, "attr", "") == "backward") for n in ast.walk(statement))


def _trainer_elsewhere(unit: Unit) -> tuple[int, str] | None:
    """(line, note) for training run by a trainer this file does not construct, in a file importing a trainer
    library: `LightningCLI(...)` (it builds the trainer), or `trainer.train()`/`.fit(...)` on a parameter or on
    what a function returns (`build_trainer(cfg)`, `hydra.utils.instantiate(cfg.trainer)`, mmengine's
    `RUNNERS.build(cfg)` for a `runner`)."""
    if not any(unit.ctx.imports.imports_root(root)
               for root in (*loops.HF_TRAINER_ROOTS, *loops.LIGHTNING_ROOTS, *loops.MMENGINE_ROOTS)):
        return None
    built = {target_name(target): node.value for node in ast.walk(unit.tree) if isinstance(node, (ast.Assign, ast.AnnAssign))
             for target in (node.targets if isinstance(node, ast.Assign) else [node.target])}
    holders = ("trainer", "runner") if unit.ctx.imports.imports_root("mmengine") else ("trainer",)
    clis = {"LightningCLI"} | {node.name for node in ast.walk(unit.tree) if isinstance(node, ast.ClassDef) and any(
        (unit.ctx.imports.resolve_any(base) or "").endswith(".LightningCLI") for base in node.bases)}
    for node in ast.walk(unit.tree):
        if not isinstance(node, ast.Call):
            continue
        if target_name(node.func) in clis:
            callback = f"{CALLBACKS['lightning']}(debugger)"
            advice = (f"add {callback} first to the callbacks of its trainer_defaults (keeping those it holds)"
                      if any(k.arg == "trainer_defaults" for k in node.keywords)
                      else f"pass trainer_defaults={{\"callbacks\": [{callback}]}}")
            return node.lineno, (f"`{scopes.source_text(unit.text, node.func)}(...)` builds and runs the trainer: "
                                 f"{advice}; debugger not added")
        if (isinstance(node.func, ast.Attribute) and node.func.attr in ("train", "fit")
                and any(word in (target_name(node.func.value) or "").lower() for word in holders)):
            value = built.get(target_name(node.func.value))
            if not (isinstance(value, ast.Call) and loops.constructs_class(value)):
                return node.lineno, (f"`{scopes.source_text(unit.text, node.func)}(...)` runs a trainer this file does "
                                     f"not construct: add {_trainer_callbacks(unit)} to its callbacks where it is "
                                     "built; debugger not added")
    return None


def _training_deeper(unit: Unit) -> tuple[int, str] | None:
    """(line, note) for a call of the project's training code whose loop or trainer lies further on than the
    helpers note follows (LLaMA-Factory's src/train.py: `run_exp()` of llamafactory/train/tuner.py, whose
    `run_sft` builds the Hugging Face trainer in sft/workflow.py); a function returning nothing, not one handing
    back a training object it builds (OpenRLHF's `get_strategy(args)`, whose strategy wraps the optimizer step)."""
    calls = [node for node in ast.walk(unit.tree) if isinstance(node, ast.Call)]
    call, name, module = next((found for found in seeding.training_calls(unit.ctx, calls)
                               if found[1] in found[2].functions and not _returns_value(found[2].functions[found[1]])),
                              (None, None, None))
    if call is None:
        return None
    return call.lineno, (f"`{name}` in {shown_path(module.path)} runs the training, through more project files than "
                         "msprobe-instrument follows to its loop or trainer: instrument the file that holds the loop "
                         "or builds the trainer; debugger not added here")


def _returns_value(function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Whether `function` returns something other than None (not counting its nested functions)."""
    return any(isinstance(node, ast.Return) and not (node.value is None or isinstance(node.value, ast.Constant) and node.value.value is None)
               for node in walk_scope(function))


def _megatron_pretrain(unit: Unit) -> tuple[int, str] | None:
    """(line, note) for Megatron's `pretrain(...)`: its training loop is `train()` in Megatron's
    megatron/training/training.py (that file of the checkout beside the script, when there is one)."""
    call = next((node for node in ast.walk(unit.tree) if isinstance(node, ast.Call)
                 and unit.ctx.imports.resolve_any(node.func) in catalogue.MEGATRON_PRETRAIN), None)
    if call is None:
        return None
    if megatron_lacks_deterministic_mode(unit.ctx):  # a fork among the project's files (gpt-neox): no such flags
        module = unit.ctx.imports.resolve_any(call.func).rpartition(".")[0]
        path = project.find_module(project.file_folder(unit.path), module, 0)
        where = shown_path(str(path)) if path is not None else "the project's megatron package"
        return call.lineno, (f"`{scopes.source_text(unit.text, call.func)}(...)` runs the training loop of the "
                             f"project's own Megatron, in {where}: instrument that file too; debugger not added here")
    beside = os.path.join(os.path.dirname(unit.path), "megatron", "training", "training.py")
    where = (f"instrument {shown_path(beside)}" if os.path.isfile(beside)
             else "instrument megatron/training/training.py of the Megatron checkout in use")
    return call.lineno, (f"`{scopes.source_text(unit.text, call.func)}(...)` runs Megatron's training loop, `train()` "
                         f"in megatron/training/training.py: {where}; to compare runs, pass `--deterministic-mode "
                         "--attention-dropout 0 --hidden-dropout 0` (seed_all's rm_dropout does not reach Transformer "
                         "Engine's dropout); debugger not added here")


def _brain_fit(unit: Unit) -> tuple[int, str] | None:
    """(line, note) for `brain.fit(...)` of a SpeechBrain `Brain` (the file's subclass): the training loop is
    the library's (`Brain.fit_batch`), which takes no callbacks but calls the brain's own batch hooks."""
    for node in ast.walk(unit.tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "fit"
                and unit.ctx.is_trainer_run(node) and unit.ctx.imports.imports_root("speechbrain")):
            return node.lineno, (f"`{scopes.source_text(unit.text, node.func)}(...)` runs SpeechBrain's training loop "
                                 "(`Brain.fit_batch`): in your Brain, call `debugger.start(model=self.modules)` in "
                                 "`on_fit_batch_start` and `debugger.stop()` and `debugger.step()` in "
                                 "`on_fit_batch_end`; debugger not added")
    return None


def _ultralytics_train(unit: Unit) -> tuple[int, str] | None:
    """(line, note) for `model.train(...)` of an ultralytics model (`YOLO("yolo11n.pt").train(data=..., seed=7)`):
    the training loop is the library's, `BaseTrainer._do_train` in ultralytics/engine/trainer.py."""
    if not unit.ctx.imports.imports_root("ultralytics"):
        return None
    assigned = {target_name(target): node.value for node in ast.walk(unit.tree) if isinstance(node, ast.Assign)
                for target in node.targets}
    for node in ast.walk(unit.tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "train"):
            continue
        owner = node.func.value
        built = owner if isinstance(owner, ast.Call) else assigned.get(target_name(owner))
        if isinstance(built, ast.Call) and (unit.ctx.imports.resolve_any(built.func) or "").startswith("ultralytics."):
            return node.lineno, (f"`{scopes.source_text(unit.text, node.func)}(...)` runs ultralytics' training loop, "
                                 "`BaseTrainer._do_train` in ultralytics/engine/trainer.py of the installed package: "
                                 "instrument that file, or add callbacks to the model: `on_train_batch_start` calling "
                                 "`debugger.start(model=trainer.model)`, `on_train_batch_end` calling "
                                 "`debugger.stop()` and `debugger.step()`; debugger not added")
    return None


def _mindspore_rl_run(unit: Unit) -> tuple[int, str] | None:
    """(line, note) for MindSpore Reinforcement's `session.run(class_type=...)` or `trainer.train(...)` (mindrl's
    example/dqn/train.py): the training loop is the library's, `Trainer.train` in mindspore_rl/agent/trainer.py,
    which runs the Session's callbacks around each episode."""
    if not unit.ctx.imports.imports_root("mindspore_rl"):
        return None
    assigned = {target_name(target): node.value for node in ast.walk(unit.tree) if isinstance(node, ast.Assign)
                for target in node.targets}
    for node in ast.walk(unit.tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr in catalogue.MINDSPORE_RL_RUNS):
            continue
        creator = assigned.get(target_name(node.func.value))
        if seeding.runs_library_training(unit.ctx, node, creator if isinstance(creator, ast.Call) else None):
            return node.lineno, (f"`{scopes.source_text(unit.text, node.func)}(...)` runs MindSpore Reinforcement's "
                                 "training loop, `Trainer.train` in mindspore_rl/agent/trainer.py, one "
                                 "`self.train_one_episode()` an iteration (no optimizer step there to find): start and "
                                 "stop the debugger around that call, or give the Session a mindspore_rl Callback "
                                 "whose `episode_begin` calls `debugger.start()` and `episode_end` calls "
                                 "`debugger.stop()` and `debugger.step()`; debugger not added")
    return None


def _trainer_callbacks(unit: Unit) -> str:
    """The runtime callback(s) for the trainer libraries the file imports."""
    found = [f"{CALLBACKS[library]}(debugger)" for library, roots in (("transformers", loops.HF_TRAINER_ROOTS),
                                                                      ("lightning", loops.LIGHTNING_ROOTS),
                                                                      ("mmengine", loops.MMENGINE_ROOTS))
             if any(unit.ctx.imports.imports_root(root) for root in roots)]
    return " or ".join(found)


def _by_hand(unit: Unit, name: str, train: loops.CallbackTraining, problem: str, created: bool) -> str:
    """The note for a training whose step callback is left to the user: what to add, with its import, and, when
    this run creates no debugger, the debugger's creation too."""
    callback, module = CALLBACKS[train.library], unit.options.module(unit.framework)
    add = f"{problem}: add {callback}({name}) to its {loops.CALLBACK_KEYWORDS.get(train.library, 'callbacks')} yourself"
    if created:
        return f"{add} (`from {module} import {callback}`)"
    return (f"{add}, creating `{name}` first: `from {module} import {callback}, PrecisionDebugger`, then `{name} = "
            f"PrecisionDebugger(config_path={_config_code(unit, 'os')})`; debugger not added")


def _config(unit: Unit, line: int) -> str:
    """The config's path, as code that runs at `line`."""
    relative, _ = unit.options.config_for(unit.path)
    return _config_code(unit, unit.module_name("os", before=line) if relative is not None else "os")


def _config_code(unit: Unit, os_name: str) -> str:
    """The config's path as code, `os_name` naming the `os` module (unused for an absolute path)."""
    relative, absolute = unit.options.config_for(unit.path)
    if relative is None:
        return json.dumps(absolute)
    return f"{os_name}.path.join({os_name}.path.dirname(__file__), {json.dumps(relative)})"

"""What msprobe's PrecisionDebugger does the same way for every framework: read the config, open one
step's capture window when the config wants that step and rank, close it (writing the step's files),
count steps, work as a context manager, write the step still captured when the process exits (a crash
in it). The PyTorch and MindSpore debuggers add their hooks and name their capture state, session class,
API wrapping and rank lookup.
"""

from __future__ import annotations

import atexit
import functools
import multiprocessing
import os
import warnings
from collections.abc import Callable

from msprobe_runtime.core.config import ConfigError, DebuggerConfig, ensure_writable, load_config
from msprobe_runtime.core.dump_writer import start_writer, wait_for_writes, write_in_foreground
from msprobe_runtime.core.patching import CaptureState


def launcher_rank(variable: str) -> int:
    """The rank a launcher exported in `variable` (torchrun's RANK, msrun's RANK_ID), else 0: capture that
    starts before the process group is initialised must not put every rank in rank0. A process started by
    multiprocessing without one (Hogwild training, a worker that captures before it joins the process
    group) is told, once, that it shares rank0 with its siblings."""
    rank = os.environ.get(variable, "")
    if rank.isdigit():
        return int(rank)
    if multiprocessing.parent_process() is not None and not _warned_unranked:
        _warned_unranked.append(True)
        warnings.warn(f"msprobe-kit: this process was started by multiprocessing and has no rank ({variable} is "
                      "unset and the process group is not initialised): it writes rank0 like its sibling processes, "
                      "and their dump files overwrite each other; initialise the process group before start(), or "
                      f"set os.environ[\"{variable}\"] in each process", stacklevel=2)
    return 0


_warned_unranked: list[bool] = []  # launcher_rank's warning, once per process


def model_chunks(model, module_type: type, type_name: str, call: str = "start(model)") -> list[tuple[str, object]]:
    """msprobe's `model` argument as (name prefix, module) pairs: one module (no prefix), or a list or tuple
    of them, such as pipeline-parallel model chunks or a GAN's two models, each named by its index
    (`Module.1.layers.0...`); `call` names the method in the error for anything else. A None in a list is
    a model this run does without (`[unet, text_encoder]` where the text encoder is optional): left out, the
    others keep their indices."""
    chunks = [(f"{index}.", item) for index, item in enumerate(model) if item is not None] \
        if isinstance(model, (list, tuple)) else [("", model)]
    for _, item in chunks:
        if not isinstance(item, module_type):
            raise TypeError(f"{call} takes a {type_name} or a list or tuple of them, not {type(item).__name__}")
    return chunks


class on_instance_or_class:  # noqa: N801  (used as a decorator, like staticmethod)
    """A method that, as in msprobe, may also be called on the class (`PrecisionDebugger.start(model)`, say
    inside a model's forward where the debugger object is out of reach): there it acts on the debugger
    of that class made last. Fetched without binding (`inspect.getattr_static`), it is the function."""

    def __init__(self, function):
        self.function = function
        functools.update_wrapper(self, function)

    def __call__(self, *args, **kwargs):
        return self.function(*args, **kwargs)

    def __get__(self, instance, owner):
        if instance is None:
            instance = owner.latest
            if instance is None:
                return functools.partial(_no_debugger_yet, f"{owner.__name__}.{self.function.__name__}")
        return self.function.__get__(instance, owner)


def _no_debugger_yet(call: str, *args, **kwargs):
    raise RuntimeError(f"{call}() was called before any debugger was made: create one first, for example "
                       f"{call.split('.')[0]}(config_path='config.json')")


class StepDebugger:
    """The capture life cycle; subclasses set the class attributes below."""

    latest: StepDebugger | None = None  # the debugger made last (per class): what class-level calls act on

    framework: str
    state: CaptureState  # the framework's capture state (its API wrappers read `state.session`)
    session_class: type  # a framework CaptureSession: (config, step, rank)
    current_rank: Callable[[], int]  # this process's rank
    install: Callable[[], None]  # puts the framework's API wrappers in place (idempotent)
    uninstall: Callable[[], None]  # takes them out again
    l0_needs_model: str  # the error when level L0 is started without a model

    def __init__(self, config_path=None, task=None, dump_path=None, level=None, step=None):
        self.config: DebuggerConfig = load_config(config_path, task=task, dump_path=dump_path, level=level,
                                                  step=step, framework=self.framework)
        ensure_writable(self.config.dump_path)
        self.current_step = 0
        self._session = None
        self._hooks: dict[int, list] = {}  # id(model) -> the framework's hooks on it (each has remove())
        # ids of the submodules (cells) hooked: one that two given models hold (a generator's loss cell
        # holding the discriminator, passed with it) is hooked once, under the name it got first
        self._hooked: set[int] = set()
        self._grad_probe = None
        type(self).latest = self

    @on_instance_or_class
    def start(self, model=None) -> StepDebugger:
        """Begin capturing the current step (if the config wants this step and rank); returns self."""
        config = self.config
        if config.task == "grad_probe" or config.steps_done(self.current_step) or not self._attach(model):
            return self
        if self.config.level == "L0" and not self._hooks:
            raise ConfigError(self.l0_needs_model)
        self._open_window()
        return self

    def _attach(self, model) -> bool:
        """Put the framework's hooks on `model` (None: none given); False when nothing can be captured now."""
        raise NotImplementedError

    def _open_window(self) -> None:
        """Start the current step's capture session, if the config wants this step and this rank."""
        config = self.config
        if self._session is not None or not config.wants_step(self.current_step):
            return
        rank = self.current_rank()
        if not config.wants_rank(rank):
            return
        if self.state.session is not None:
            raise RuntimeError("another PrecisionDebugger is capturing: stop it before starting this one")
        self.install()
        start_writer()
        self._session = self.session_class(config, self.current_step, rank)
        self.state.session = self._session
        atexit.register(self._stop_at_exit)

    @on_instance_or_class
    def stop(self) -> None:
        """End the capture window and write the step's files (statistics cross to the host here, once)."""
        session, self._session = self._session, None
        if session is None:
            return
        atexit.unregister(self._stop_at_exit)
        state = self.state
        if state.session is session:
            state.session = None
        state.depth = 1
        try:
            session.close()
        finally:
            state.depth = 0

    def _stop_at_exit(self) -> None:
        """The process exits (an uncaught exception, often the very step being captured) with the window
        open: write what the step recorded so far, as stop() would, unless it recorded nothing or this is a
        forked child (whose capture state let the parent's session go)."""
        session = self._session
        if session is None or self.state.session is not session or not session.data:
            return
        warnings.warn(f"msprobe-kit: the process exits while step {self.current_step} is captured (stop() was not "
                      f"called): what it recorded so far is written to {session.folder}", stacklevel=1)
        write_in_foreground()
        self.stop()

    @on_instance_or_class
    def step(self) -> None:
        """Finish the current step: stop a running capture and count one step."""
        self.stop()
        self.current_step += 1
        if self.config.task != "grad_probe" and self.config.steps_done(self.current_step):
            self._release()

    def close(self) -> None:
        """Stop capturing, wait for the files (async_dump), take capture's hooks and wrappers away, finish
        the gradient probe."""
        self.stop()
        wait_for_writes()
        self._release()
        if self._grad_probe is not None:
            self._grad_probe.close()
            self._grad_probe = None

    def _release(self) -> None:
        """Take capture's hooks off the models and, unless another debugger is capturing, the API wrappers
        out: after the last step the config names, training runs (and pickles) as it would without us."""
        for hooks in self._hooks.values():
            for hook in hooks:
                hook.remove()
        self._hooks.clear()
        self._hooked.clear()
        if self.state.session is None:
            self.uninstall()

    @on_instance_or_class
    def set_init_step(self, step: int) -> None:
        """Number steps from `step` on, as msprobe's `set_init_step` (a run resumed from a checkpoint dumps
        `step{N}` under the step numbers of the run it continues); the config's `step` list uses them too."""
        if isinstance(step, bool) or not isinstance(step, int) or step < 0:
            raise ValueError(f"set_init_step(step) takes an int >= 0, not {step!r}")
        self.current_step = step

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc_info) -> None:
        self.step()

    def _require_grad_probe(self) -> None:
        if self.config.task != "grad_probe":
            raise ConfigError(f"monitor() needs \"task\": \"grad_probe\" in the config (task is '{self.config.task}')")

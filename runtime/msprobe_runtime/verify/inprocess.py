"""What runs inside each run of msprobe-verify (started from `inject/sitecustomize.py`).

Settings come from the environment msprobe-verify sets: MSPROBE_VERIFY_DIR (this run's dump folder),
MSPROBE_VERIFY_STEPS (steps to capture), MSPROBE_VERIFY_CONFIG (an optional msprobe config.json whose
task section - scope, list, data_mode - is kept) and MSPROBE_VERIFY_RUN (0 or 1).

Once `torch` is imported, L1 capture with content hashes starts at once, so model construction is in
step 0. When the script has no PrecisionDebugger of its own, steps end at each `optimizer.step()` (a
global optimizer hook, any optimizer); otherwise the script's debugger is redirected to our dump folder
and its `step()` calls count. After the last wanted step the files are written and the process exits
(status 0): the rest of the training is not needed. Under torchrun each worker captures its own rank (the
launcher captures nothing).
"""

from __future__ import annotations

import atexit
import dataclasses
import importlib.abc
import importlib.machinery
import importlib.util
import inspect
import os
import sys
from pathlib import Path

from msprobe_runtime.core.debugger import on_instance_or_class

ENV_DIR, ENV_STEPS, ENV_CONFIG, ENV_RUN = "MSPROBE_VERIFY_DIR", "MSPROBE_VERIFY_STEPS", "MSPROBE_VERIFY_CONFIG", "MSPROBE_VERIFY_RUN"


class _AfterImport(importlib.abc.MetaPathFinder):
    """Calls `callback` right after the module `name` has been executed."""

    def __init__(self, name: str, callback):
        self.name, self.callback = name, callback

    def find_spec(self, fullname, path, target=None):
        if fullname != self.name:
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(fullname)
        if spec is None or spec.loader is None:
            return spec
        exec_module = spec.loader.exec_module
        callback = self.callback

        def exec_then_callback(module):
            exec_module(module)
            callback()

        spec.loader.exec_module = exec_then_callback
        return spec


def activate() -> None:
    """Arrange for capture to start when torch is imported (nothing happens outside msprobe-verify)."""
    if not os.environ.get(ENV_DIR):
        return
    if "torch" in sys.modules:
        _start()
    else:
        sys.meta_path.insert(0, _AfterImport("torch", _start))


def chain_sitecustomize(own_file: str) -> None:
    """Run the next `sitecustomize` on sys.path, if the environment has one besides ours."""
    own_folder = os.path.dirname(os.path.abspath(own_file))
    for folder in sys.path:
        candidate = Path(folder or ".").resolve() / "sitecustomize.py"
        if candidate.is_file() and str(candidate.parent) != own_folder:
            spec = importlib.util.spec_from_file_location("_msprobe_verify_next_sitecustomize", candidate)
            if spec is not None and spec.loader is not None:
                spec.loader.exec_module(importlib.util.module_from_spec(spec))
            return


def _settings():
    from msprobe_runtime.core.config import load_config

    steps = int(os.environ.get(ENV_STEPS, "1"))
    base = load_config(os.environ.get(ENV_CONFIG) or None, task="statistics", dump_path=os.environ[ENV_DIR],
                       level="L1", step=list(range(steps)))
    return dataclasses.replace(base, summary_mode="hash", rank=(), async_dump=False), steps


def _script_has_debugger() -> bool:
    script = sys.argv[0] if sys.argv else ""
    try:
        return "PrecisionDebugger" in Path(script).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False


def _exit_after_last_step(debugger) -> None:
    debugger.close()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def _is_launcher() -> bool:
    """torchrun (or torch.distributed.launch) itself: it starts the workers and trains nothing. Run as
    `python -m torch.distributed.run`, sys.argv[0] is still "-m" while the package imports torch: the
    command line tells then."""
    script = sys.argv[0] if sys.argv else ""
    if os.path.basename(script) == "torchrun" or script.endswith(_LAUNCHER_MODULES):
        return True
    options = iter(getattr(sys, "orig_argv", [])[1:])  # the interpreter's options, up to what it runs
    for option in options:
        if option == "-m":
            return next(options, None) in _LAUNCHER_NAMES
        if not option.startswith("-") or option == "-c":  # a script, or code
            return False
        if option in ("-W", "-X"):  # an option with a separate value
            next(options, None)
    return False


_LAUNCHER_MODULES = (os.path.join("distributed", "run.py"), os.path.join("distributed", "launch.py"))
_LAUNCHER_NAMES = ("torch.distributed.run", "torch.distributed.launch")


def _start() -> None:
    if _is_launcher():
        return
    from msprobe_runtime.pytorch import debugger as debugger_module

    config, steps = _settings()
    if _script_has_debugger():
        _redirect(debugger_module.PrecisionDebugger, config, steps)
        return
    debugger = debugger_module.PrecisionDebugger(dump_path=config.dump_path, task="statistics", level="L1")
    debugger.config = config
    debugger.start()
    atexit.register(debugger.close)

    def after_optimizer_step(optimizer, args, kwargs) -> None:
        debugger.stop()
        debugger.step()
        if debugger.current_step >= steps:
            _exit_after_last_step(debugger)
        debugger.start()

    from torch.optim.optimizer import register_optimizer_step_post_hook

    register_optimizer_step_post_hook(after_optimizer_step)


def _redirect(debugger_class, config, steps: int) -> None:
    """The script drives its own PrecisionDebugger: send its files to our folder, hashed, for our steps."""
    original_init, original_step = debugger_class.__init__, inspect.getattr_static(debugger_class, "step")

    def init(self, *args, **kwargs):
        original_init(self, *args, **kwargs)
        if self.config.task != "grad_probe":
            self.config = dataclasses.replace(self.config, task="statistics", dump_path=config.dump_path,
                                              summary_mode="hash", step=config.step, rank=(), async_dump=False)
            atexit.register(self.close)

    def step(self):
        original_step(self)
        if self.config.dump_path == config.dump_path and self.current_step >= steps:
            _exit_after_last_step(self)

    debugger_class.__init__, debugger_class.step = init, on_instance_or_class(step)

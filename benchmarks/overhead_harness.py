"""Shared by the capture-overhead benchmarks (PyTorch and MindSpore): the config they capture with, the
timed step loop, and running one configuration in a fresh interpreter."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time


def write_config(folder: str, task: str, level: str) -> str:
    """An msprobe config.json in `folder` capturing every step and rank (statistics, or the grad probe)."""
    section = ({"grad_level": level, "param_list": [], "bounds": [-1, 0, 1]} if task == "grad_probe" else
               {"scope": [], "list": [], "data_mode": ["all"], "summary_mode": "statistics"})
    config = {"task": task, "dump_path": os.path.join(folder, "dump"), "rank": [], "step": [], task: section}
    if task != "grad_probe":
        config["level"] = level
    path = os.path.join(folder, "config.json")
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(config, handle)
    return path


def _rss_bytes() -> int:
    with open("/proc/self/statm", encoding="ascii") as handle:
        return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _voluntary_switches() -> int | None:
    """How often this thread has slept so far (Linux): for a training thread, mostly waits for the GIL
    while another thread holds it."""
    try:
        with open("/proc/thread-self/status", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("voluntary_ctxt_switches:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def captured_step(model, step, debugger) -> None:
    """One training step, inside a capture window when there is a debugger."""
    if debugger is not None:
        debugger.start(model)
    step()
    if debugger is not None:
        debugger.stop()
        debugger.step()


def time_steps(model, step, debugger, steps: int, warmup: int) -> dict:
    """Per timed step (each captured when there is a debugger): wall, process CPU and training-thread CPU
    seconds; the training thread's sleeps per step (None where the system does not tell); and the
    resident-memory growth from the end of the warm-up to the last step."""
    for _ in range(warmup):
        captured_step(model, step, debugger)
    rss = _rss_bytes()
    switches = _voluntary_switches()
    wall, cpu, thread = [], [], []
    for _ in range(steps):
        started, started_cpu, started_thread = time.perf_counter(), time.process_time(), time.thread_time()
        captured_step(model, step, debugger)
        wall.append(time.perf_counter() - started)
        cpu.append(time.process_time() - started_cpu)
        thread.append(time.thread_time() - started_thread)
    growth = _rss_bytes() - rss
    sleeps = None if switches is None else (_voluntary_switches() - switches) / steps
    if debugger is not None and hasattr(debugger, "close"):
        debugger.close()
    return {"wall": wall, "cpu": cpu, "thread": thread, "sleeps": sleeps, "rss_growth": growth}


def run_worker(script: str, name: str, steps: int, warmup: int, *extra: str, first_path: str | None = None) -> dict | None:
    """Run `script --worker name ...` in a fresh interpreter and return what its `RESULT ` line says;
    `first_path` goes first on its PYTHONPATH (another checkout's source root, to compare with)."""
    command = [sys.executable, script, "--worker", name, "--steps", str(steps), "--warmup", str(warmup), *extra]
    env = None
    if first_path:
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [first_path, os.environ.get("PYTHONPATH")]))}
    done = subprocess.run(command, capture_output=True, text=True, check=False, env=env)
    for line in reversed(done.stdout.splitlines()):
        if line.startswith("RESULT "):
            return json.loads(line[len("RESULT "):])
    print(f"{name}: failed\n{done.stderr[-2000:]}", file=sys.stderr)
    return None

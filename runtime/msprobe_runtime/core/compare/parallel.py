"""The second core on large comparisons: one job runs in a forked process while this one does another.

Reading GOLDEN while TARGET is read here, and reading the second half of tensor mode's files, roughly
halve those stages on two cores. The child inherits everything through `fork`
(nothing is pickled on the way in) and sends back its return value or its exception. Where `fork` does
not exist, only one CPU is usable, or the work is small, callers run everything here, in order: the
results are the same either way.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
from collections.abc import Callable

from msprobe_runtime.core.compare.locate import CompareError

PARALLEL_BYTES = 48 * 2**20  # dumps (both sides together) at least this large are read side by side
PARALLEL_TENSOR_ROWS = 512  # tensor-mode comparisons of at least this many rows read their files in two halves


def _cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not on Linux
        return os.cpu_count() or 1


def available() -> bool:
    """Whether a forked helper process can run beside this one on another CPU: `fork` exists, a second CPU
    is usable, and this process runs no other thread (a lock another thread holds at the fork would stay
    locked in the child: compare() called from a training process with writer threads runs in one process)."""
    return "fork" in multiprocessing.get_all_start_methods() and _cpus() > 1 and threading.active_count() == 1


class Beside:
    """`function(*args)` running in a forked child; `result()` waits for it and returns its value or raises
    its exception; `cancel()` stops it (used when this side failed first)."""

    def __init__(self, function: Callable, *args):
        context = multiprocessing.get_context("fork")
        self._receive, send = context.Pipe(duplex=False)
        self._process = context.Process(target=_run, args=(send, function, args), daemon=True)
        self._process.start()
        send.close()

    def result(self):
        """The child's return value (its exception is raised here)."""
        try:
            ok, value = self._receive.recv()
        except EOFError:
            raise CompareError("a helper process ended without an answer (out of memory?)") from None
        finally:
            self._receive.close()
            self._process.join()
        if ok:
            return value
        raise value

    def cancel(self) -> None:
        """Stop the child without waiting for its answer."""
        self._process.terminate()
        self._process.join()
        self._receive.close()


def _run(send, function: Callable, args: tuple) -> None:
    try:
        answer = (True, function(*args))
    except BaseException as error:  # handed to the parent, which raises it
        answer = (False, error)
    try:
        send.send(answer)
    except Exception as error:  # an answer that cannot be pickled
        send.send((False, CompareError(f"a helper process could not hand back its result: {error}")))
    finally:
        send.close()

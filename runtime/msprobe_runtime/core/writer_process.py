"""The process that writes capture's dump files, beside the training process (framework-free).

A writer thread in the training process needs the GIL to turn a step's records into text, and on a busy
step the training thread then waits for it: a sleep and a wake-up, each time it finds the GIL taken, that
cost the step more than the writing itself (about a tenth of the issue model's step, measured in
docs/performance.md, Round 17). Here the training process only pickles the step's records, which are
small, and sends them down a pipe; this process, started once per training process with the same Python,
makes the texts and writes the files (core.dump_writer, atomically as ever), and answers on a pipe of its
own (not stdout, where anything may print) a step that failed, and each sync. It ignores Ctrl-C, so a
step handed over is still written while the training process stops, and it ends when the pipe closes:
when the training process exits, however it exits, after writing what it was sent. It never imports a
framework.
"""

from __future__ import annotations

import os
import pickle
import select
import signal
import struct
import subprocess
import sys
import time

_LENGTH = struct.Struct("<Q")
_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # above msprobe_runtime/
_SERVE = ("import sys; sys.path.insert(0, sys.argv[1]); "
          "from msprobe_runtime.core.writer_process import serve; serve(sys.argv[2], int(sys.argv[3]))")


class WriterGone(RuntimeError):
    """The writer process ended before it answered."""


_SYNC = None  # the message asking the writer process to answer once every step sent before it is written
_POLL_SECONDS = (0.0005, 0.02)  # how long the writer process sleeps between looks at its pipe: busy, idle
_IDLE_AFTER = 2000  # empty looks after which it counts as idle (about a second)
_PIPE_BYTES = 1 << 20  # what the pipe holds before a write waits (Linux's default 64 KB is one L1 step)


def available() -> bool:
    """Whether a writer process can run here: a Python executable to start, and poll() (not on Windows)."""
    return bool(sys.executable) and hasattr(select, "poll")


class WriterProcess:
    """The training side: `submit(job)` hands a step over, `wait()` blocks until all handed over are written.

    The process answers only a failed step (at once) and `wait()`; `submit` looks for such an answer without
    blocking and raises it, as the writer thread's error surfaced at the next step. The process looks at
    its pipe every half millisecond instead of sleeping in a read: a step handed over then wakes nothing,
    and the training thread's write is a copy into the pipe."""

    def __init__(self, entry_token: str):
        """Start the process (OSError when it cannot start); `entry_token` is core.dump_writer's ENTRY_TOKEN."""
        self.answers, answer_end = os.pipe()  # its own pipe: what anything prints goes to the usual stdout
        try:
            self.process = subprocess.Popen([sys.executable, "-c", _SERVE, _ROOT, entry_token.encode().hex(),
                                             str(answer_end)], stdin=subprocess.PIPE, bufsize=0, pass_fds=(answer_end,))
        except BaseException:
            os.close(self.answers)
            raise
        finally:
            os.close(answer_end)
        try:
            import fcntl

            fcntl.fcntl(self.process.stdin.fileno(), fcntl.F_SETPIPE_SZ, _PIPE_BYTES)
        except (OSError, AttributeError):  # not Linux, or above the system's pipe-max-size: the default
            pass
        os.set_blocking(self.answers, False)
        self.answered = select.poll()  # whether an answer has come, asked without blocking
        self.answered.register(self.answers, select.POLLIN)

    def submit(self, job: tuple) -> None:
        """Send one step's job: core.dump_writer's (folder, header, data, stacks, construct, entries);
        raise the failure of a step sent before, if one has come back."""
        answer = self._answer(block=False)
        if answer is not None:
            raise answer[1]
        self._send(job)

    def wait(self) -> None:
        """Block until every step sent is written; raise the first failure among them."""
        self._send(_SYNC)
        failure = None
        while (answer := self._answer(block=True))[0] != "synced":
            failure = failure or answer[1]
        if failure is not None:
            raise failure

    def close(self) -> None:
        """Close the pipe (the process ends once it has written what it was sent) and reap it."""
        self.process.stdin.close()
        os.close(self.answers)
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:  # a stuck file system: leave it, it ends with the pipe closed
            pass

    def forget(self) -> None:
        """In a forked child: drop this process's copies of the pipes, leaving the parent's writer alone."""
        self.process.stdin.close()
        os.close(self.answers)
        self.process.returncode = 0  # not the child's to reap

    def _send(self, message) -> None:
        try:
            _send(self.process.stdin.fileno(), pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL))
        except OSError as error:
            raise WriterGone(f"msprobe-kit: the dump writer process has ended ({error}); the steps it was sent since "
                             "the last one written are lost") from None

    def _answer(self, block: bool) -> tuple | None:
        """("failed", error) or ("synced", None); None when nothing came (only without `block`)."""
        if not self.answered.poll(None if block else 0):
            return None
        payload = _receive(self.answers, wait=_readable)
        if payload is None:
            raise WriterGone("msprobe-kit: the dump writer process ended before writing every step "
                             f"(exit status {self.process.poll()})")
        return pickle.loads(payload)


def serve(token_hex: str, answer: int) -> None:
    """The writer process: write each step read from standard input; answer a failure, and each sync, on the
    pipe `answer`."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    from msprobe_runtime.core import dump_writer

    dump_writer.adopt_entry_token(bytes.fromhex(token_hex).decode())
    read = sys.stdin.fileno()
    os.set_blocking(read, False)
    while True:
        _polled(read)
        payload = _receive(read, wait=_polled)
        if payload is None:
            return
        message = pickle.loads(payload)
        if message is _SYNC:
            _send(answer, pickle.dumps(("synced", None)))
            continue
        try:
            dump_writer.write_job(message)
        except Exception as failure:  # noqa: BLE001 - every failure goes back to the training process
            _send(answer, _pickled_failure(failure))


def _pickled_failure(error: Exception) -> bytes:
    try:
        return pickle.dumps(("failed", error))
    except Exception:  # noqa: BLE001 - an exception that does not pickle is sent as its text
        return pickle.dumps(("failed", RuntimeError(f"{type(error).__name__}: {error}")))


def _send(fd: int, payload: bytes) -> None:
    """One message on a blocking `fd` (both pipes' write ends are)."""
    view = memoryview(_LENGTH.pack(len(payload)) + payload)
    while view:
        view = view[os.write(fd, view):]


def _readable(fd: int) -> None:
    """Wait (in the kernel) until `fd` has data."""
    select.select([fd], [], [])


_empty_looks = [0]  # the writer process's empty looks at its pipe since the last message


def _polled(fd: int) -> None:
    """Wait until `fd` has data (or its end) by looking at it now and then: a sleep between looks wakes no
    one up, where a read waiting in the kernel is woken by the sender."""
    while not select.select([fd], [], [], 0)[0]:
        _empty_looks[0] += 1
        time.sleep(_POLL_SECONDS[_empty_looks[0] > _IDLE_AFTER])
    _empty_looks[0] = 0


def _receive(fd: int, wait) -> bytes | None:
    """One message from a non-blocking `fd` that has data, or None at the end of the pipe (a message cut short
    by a dying sender counts as the end); `wait(fd)` waits for the rest of one."""
    head = _read_exactly(fd, _LENGTH.size, wait)
    return None if head is None else _read_exactly(fd, _LENGTH.unpack(head)[0], wait)


def _read_exactly(fd: int, size: int, wait) -> bytes | None:
    parts, left = [], size
    while left:
        try:
            part = os.read(fd, left)
        except BlockingIOError:
            wait(fd)
            continue
        if not part:
            return None
        parts.append(part)
        left -= len(part)
    return b"".join(parts)

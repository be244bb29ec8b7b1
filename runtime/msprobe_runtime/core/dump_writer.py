"""Writes one step of one rank: dump.json, stack.json, construct.json and the .npy tensor files.

Layout (msprobe 26.x): ``{dump_path}/step{N}/rank{R}/{dump,stack,construct}.json`` and, in tensor mode,
``dump_tensor_data/*.npy``. Every file is written atomically (temporary file + rename), so a crash
mid-write never leaves a broken file and earlier steps stay readable; a step's three JSON files are
written by one batch of file operations (core.files.run_file_ops), without the GIL. JSON is encoded one
record per line (valid JSON that any reader accepts, several times faster than ``indent=1``; NaN and
infinities as ``NaN``/``Infinity``, as msprobe writes them), away from the training thread: the training
process only hands the step's records over, to a writer process (core.writer_process: no second thread
takes the GIL from the training thread), or to a writer thread where no process can be started. Each
file's text is made in one call of core._dumptext where it is built, else record by record
(core.jsontext: orjson when installed).
"""

from __future__ import annotations

import atexit
import io
import json
import os
import re
import secrets
import warnings
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from msprobe_runtime.core import naming
from msprobe_runtime.core.files import atomic_file_ops, atomic_write_bytes, run_file_ops
from msprobe_runtime.core.jsontext import json_bytes, key_bytes
from msprobe_runtime.core.stats import planned_entry_texts
from msprobe_runtime.core.writer_process import WriterGone, WriterProcess
from msprobe_runtime.core.writer_process import available as writer_process_available

try:  # compiled when the package was built with a C compiler (_dumptext.c)
    from msprobe_runtime.core import _dumptext
except ImportError:  # pragma: no cover - exercised only without a C compiler
    _dumptext = None

DUMP_FORMAT_VERSION = 1  # our own "version" field in dump.json; bump on an incompatible change
# A record may hold, instead of a tensor entry, this token followed by the entry's number (`f"{ENTRY_TOKEN}{n}"`):
# the text that write_step's `entries` plan makes for entry n replaces it when the file is written. The
# random part keeps any user string from looking like one.
ENTRY_TOKEN = f"\x00{secrets.token_hex(6)}:"


def _entry_pattern(token: str) -> re.Pattern:
    return re.compile(re.escape(json.dumps(token)[:-1].encode()) + rb'(\d+)"')


_ENTRY_PATTERN = _entry_pattern(ENTRY_TOKEN)
_executor: ThreadPoolExecutor | None = None
_process: list[WriterProcess | None] = []  # the writer process once tried: [it], or [None] where none started
_use_process = True  # tests of the in-process text paths turn it off
_pending_write: Callable[[], None] | None = None  # waits for the step handed over last, raising its error
_foreground = False  # set at interpreter exit, when the executor takes no more jobs


def step_folder(dump_path: str | Path, step: int, rank: int) -> Path:
    """`{dump_path}/step{N}/rank{R}`."""
    return Path(os.path.join(dump_path, naming.step_folder(step), naming.rank_folder(rank)))  # one parse, not three


def dump_header(task: str, level: str, framework: str, tensor_dir: Path | None) -> dict:
    """dump.json's keys besides `data`, in msprobe's order, plus our `version`."""
    return {"task": task, "level": level, "framework": framework,
            "dump_data_dir": str(tensor_dir) if tensor_dir is not None else None,
            "version": DUMP_FORMAT_VERSION}


def write_step(folder: Path, header: dict, data: dict, stacks: list[tuple[list, list]], construct: dict,
               background: bool = True, entries: tuple | None = None) -> None:
    """Write the three JSON files of one step and rank (tensor files are written before, see save_npy).

    A record is a dict, or a flat (key, value, key, value, ...) tuple (cheaper to keep while a step
    runs: CPython stops tracking such tuples in its garbage collector). `entries`, where the records hold
    ENTRY_TOKEN tokens, is the plan of those entries' texts (core.stats.planned_entry_texts). With
    `background` the texts are made and the files written by the writer process (or thread) while
    training goes on; everything handed over must pickle, and the caller must not change it afterwards.
    `wait_for_writes()` (called by the debugger's close() and at interpreter exit) waits for them and
    re-raises a failure, which also surfaces at a later write. Every file is atomic either way."""
    global _pending_write
    job = (folder, header, data, stacks, construct, entries)
    writer = _writer_process() if background and not _foreground else None
    if writer is not None:  # steps queue in its pipe; one that failed raises here, once its answer has come
        if _pending_write is not None and _pending_write != writer.wait:
            wait_for_writes()  # a step the writer thread still writes
        try:
            writer.submit(job)
        except WriterGone as gone:  # killed, say: the writer thread takes over
            warnings.warn(f"{gone}; from this step on a writer thread writes them", stacklevel=3)
            _process[:] = [None]
            _pending_write = None
        else:
            _pending_write = writer.wait
            return
    wait_for_writes()
    if not background or _foreground:
        write_job(job)
    else:
        _pending_write = _writer_thread().submit(_run, list(job)).result


def wait_for_writes() -> None:
    """Block until the background writer has finished; re-raise its error, if any."""
    global _pending_write
    pending, _pending_write = _pending_write, None
    if pending is not None:
        pending()


def write_in_foreground() -> None:
    """From now on write every step on the calling thread: at interpreter exit the writer thread is gone
    (concurrent.futures refuses new jobs once its exit hook has run, before the atexit functions)."""
    global _foreground
    _foreground = True


def write_job(job: tuple) -> None:
    """Make the texts of one step and write its files: `job` as write_step hands it over."""
    folder, header, data, stacks, construct, entries = job
    folder = Path(folder)
    texts = planned_entry_texts(entries) if entries is not None else None
    files = [(folder / naming.DUMP_FILE, _object_with_data(header, data, texts)),
             (folder / naming.STACK_FILE, _lines_object({str(i): item for i, item in enumerate(stacks)})),
             (folder / naming.CONSTRUCT_FILE, _lines_object(construct))]
    ops = [("makedirs", folder)]
    for path, text in files:
        ops += atomic_file_ops(path, text)
    run_file_ops(ops)  # one GIL-free batch where core._filebatch is built


def adopt_entry_token(token: str) -> None:
    """Read entry tokens as `token` (the writer process reads its training process's records)."""
    global ENTRY_TOKEN, _ENTRY_PATTERN
    ENTRY_TOKEN, _ENTRY_PATTERN = token, _entry_pattern(token)


def _run(job: list) -> None:
    """The writer thread's job: write one step, then drop the records (before the waiting thread is woken:
    the executor would keep them until its thread runs again)."""
    try:
        write_job(tuple(job))
    finally:
        job.clear()


def _forget_writer() -> None:
    """In a forked child: the writer thread was not copied, and the writer process is the parent's."""
    global _executor, _pending_write
    if _process and _process[0] is not None:
        _process[0].forget()
    _process.clear()
    _executor = _pending_write = None


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_writer)


def start_writer() -> None:
    """Start the writer process now, if it is to run and is not running (its start, an interpreter and
    numpy, then overlaps the step being captured rather than the steps after)."""
    _writer_process()


def _writer_process() -> WriterProcess | None:
    """The writer process, started on first use; None where none can start (writer_process.available)."""
    if not _use_process:
        return None
    if not _process:
        try:
            _process.append(WriterProcess(ENTRY_TOKEN) if writer_process_available() else None)
        except OSError:
            _process.append(None)
        if _process[0] is not None:
            atexit.register(_close_process, _process[0])
            atexit.register(wait_for_writes)  # runs first: the last step's files, and their error if any
    return _process[0] if _process else None


def _close_process(writer: WriterProcess) -> None:
    if _process and _process[0] is writer:
        writer.close()


def _writer_thread() -> ThreadPoolExecutor:
    global _executor
    if _executor is None:
        _executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="msprobe-kit-writer")
        atexit.register(wait_for_writes)  # the last step's files, and their error if any
    return _executor


def save_npy(folder: Path, file_name: str, array: np.ndarray) -> None:
    """Atomically save one tensor as `folder/dump_tensor_data/file_name` (.npy, never a pickle)."""
    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=False)
    atomic_write_bytes(folder / naming.TENSOR_DATA_DIR / file_name, buffer.getvalue())


def _lines_object(mapping: dict, flat: bool = False, entries: list[bytes] | None = None, prefix: bytes = b"",
                  suffix: bytes = b"\n") -> bytes:
    """`prefix`, a JSON object with one member per line, then `suffix`. With `flat`, tuple values are flat
    (key, value, ...) records; with `entries`, entry tokens become their entries' texts. In one C call
    where core._dumptext is built and takes every value (it leaves what only Python's json writes, such
    as non-string keys, to Python)."""
    if _dumptext is not None:
        try:
            return _dumptext.lines_object(mapping, flat, entries, ENTRY_TOKEN, prefix, suffix)
        except (TypeError, ValueError):
            pass
    if flat:
        mapping = {name: dict(zip(value[::2], value[1::2], strict=True)) if value.__class__ is tuple else value
                   for name, value in mapping.items()}
    members = b",\n".join(key_bytes(key) + b": " + json_bytes(value) for key, value in mapping.items())
    text = prefix + (b"{\n" + members + b"\n}" if mapping else b"{}") + suffix
    if not entries:
        return text
    parts = _ENTRY_PATTERN.split(text)  # text, entry number, text, entry number, ..., text
    parts[1::2] = [entries[int(number)] for number in parts[1::2]]
    return b"".join(parts)


def _object_with_data(header: dict, data: dict, entries: list[bytes] | None) -> bytes:
    """dump.json: the header, then `data` with one record per line (flat tuples become objects, entry
    tokens their entries' texts)."""
    return _lines_object(data, True, entries, b"{" + json_bytes(header)[1:-1] + b',\n"data": ', b"}\n")

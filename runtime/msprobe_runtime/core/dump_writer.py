"""Writes one step of one rank: dump.json, stack.json, construct.json and the .npy tensor files.

Layout (msprobe 26.x): ``{dump_path}/step{N}/rank{R}/{dump,stack,construct}.json`` and, in tensor mode,
``dump_tensor_data/*.npy``. Every file is written atomically (temporary file + rename), so a crash
mid-write never leaves a broken file and earlier steps stay readable. JSON is encoded one record per
line with the C encoder: valid JSON that any reader accepts, several times faster than ``indent=1``.
"""

from __future__ import annotations

import atexit
import io
import json
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import numpy as np

try:  # optional: several times faster than the standard encoder
    import orjson
except ImportError:  # pragma: no cover - depends on the environment
    orjson = None

from msprobe_runtime.core import naming
from msprobe_runtime.core.files import atomic_write_bytes, atomic_write_text
from msprobe_runtime.core.stats import SENTINEL_TEXT

DUMP_FORMAT_VERSION = 1  # our own "version" field in dump.json; bump on an incompatible change
_executor: ThreadPoolExecutor | None = None
_pending_write: Future | None = None


def step_folder(dump_path: str | Path, step: int, rank: int) -> Path:
    """`{dump_path}/step{N}/rank{R}`."""
    return Path(dump_path) / naming.step_folder(step) / naming.rank_folder(rank)


def dump_header(task: str, level: str, framework: str, tensor_dir: Path | None) -> dict:
    """dump.json's keys besides `data`, in msprobe's order, plus our `version`."""
    return {"task": task, "level": level, "framework": framework,
            "dump_data_dir": str(tensor_dir) if tensor_dir is not None else None,
            "version": DUMP_FORMAT_VERSION}


def write_step(folder: Path, header: dict, data: dict, stacks: list[tuple[list, list]], construct: dict,
               background: bool = True) -> None:
    """Write the three JSON files of one step and rank (tensor files are written before, see save_npy).

    The text is encoded here; with `background` the files are written by a writer thread while
    training goes on, and `wait_for_writes()` (called by the next write, by the debugger's close() and at
    interpreter exit) waits for them and re-raises a failure. Every file is atomic either way."""
    files = [(folder / naming.DUMP_FILE, _object_with_data(header, data)),
             (folder / naming.STACK_FILE, _lines_object({str(i): list(item) for i, item in enumerate(stacks)})),
             (folder / naming.CONSTRUCT_FILE, _lines_object(construct))]
    wait_for_writes()
    if background:
        global _pending_write
        _pending_write = _writer().submit(_write_files, folder, files)
    else:
        _write_files(folder, files)


def wait_for_writes() -> None:
    """Block until the background writer has finished; re-raise its error, if any."""
    global _pending_write
    pending, _pending_write = _pending_write, None
    if pending is not None:
        pending.result()


def _write_files(folder: Path, files: list) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for path, text in files:
        atomic_write_text(path, text)


def _writer() -> ThreadPoolExecutor:
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


def _dumps(value) -> str:
    if orjson is None:
        return json.dumps(value)
    try:
        return orjson.dumps(value).decode()
    except TypeError:  # an int beyond 64 bits, or a non-str key
        return json.dumps(value)


def _lines_object(mapping: dict) -> str:
    if not mapping:
        return "{}\n"
    body = ",\n".join(f"{_dumps(key)}: {_dumps(value)}" for key, value in mapping.items())
    for sentinel, text in SENTINEL_TEXT.items():  # NaN and infinities, as msprobe (Python's json) writes them
        if sentinel in body:
            body = body.replace(sentinel, text)
    return "{\n" + body + "\n}\n"



def _object_with_data(header: dict, data: dict) -> str:
    head = ", ".join(f"{_dumps(key)}: {_dumps(value)}" for key, value in header.items())
    return "{" + head + ',\n"data": ' + _lines_object(data).rstrip("\n") + "}\n"

"""core.files.run_file_ops, the batches of file operations the writer threads use: the compiled form
(core._filebatch, one GIL-free call) and the Python one do the same, and fail the same way."""

from __future__ import annotations

import os
import stat

import numpy as np
import pytest
from extension_support import extension_or_fallback
from msprobe_runtime.core import files


@pytest.fixture(params=["compiled", "python"])
def run_file_ops(request, monkeypatch):
    """run_file_ops as built and one by one in Python."""
    extension_or_fallback(request, monkeypatch, files, "_filebatch", "python")
    return files.run_file_ops


def test_every_kind_of_operation(tmp_path, run_file_ops):
    body = np.frombuffer(b"0123456789", np.uint8)
    folder = tmp_path / "a" / "b"
    (tmp_path / "old.txt").write_bytes(b"old")
    run_file_ops([
        ("makedirs", folder),
        ("makedirs", folder),  # existing: fine
        ("mkdir", folder / "part"),
        ("new", str(folder / "part" / "é x.npy"), 0o640, b"head:", memoryview(body)[2:6]),
        ("new", folder / "empty", 0o666),
        ("rename", folder / "part", folder / "whole"),
        ("new", tmp_path / "new.txt", 0o666, b"new"),
        ("rename", tmp_path / "new.txt", tmp_path / "old.txt"),  # replaces a file
    ])
    assert (folder / "whole" / "é x.npy").read_bytes() == b"head:2345"
    assert stat.S_IMODE((folder / "whole" / "é x.npy").stat().st_mode) == 0o640 & ~_umask()
    assert (folder / "empty").read_bytes() == b"" and (tmp_path / "old.txt").read_bytes() == b"new"
    assert not (folder / "part").exists() and not (tmp_path / "new.txt").exists()


def test_the_first_failure_stops_the_batch_and_names_its_path(tmp_path, run_file_ops):
    (tmp_path / "taken").write_bytes(b"earlier")
    ops = [("new", tmp_path / "first", 0o666, b"x"), ("new", str(tmp_path / "taken"), 0o666, b"y"),
           ("new", tmp_path / "never", 0o666, b"z")]
    with pytest.raises(FileExistsError) as raised:
        run_file_ops(ops)
    assert raised.value.filename == str(tmp_path / "taken")
    assert (tmp_path / "taken").read_bytes() == b"earlier" and (tmp_path / "first").read_bytes() == b"x"
    assert not (tmp_path / "never").exists()


def test_folders_are_never_merged_or_made_over_files(tmp_path, run_file_ops):
    (tmp_path / "target").mkdir()
    (tmp_path / "target" / "kept").write_bytes(b"")
    (tmp_path / "source").mkdir()
    (tmp_path / "source" / "new").write_bytes(b"")
    with pytest.raises(OSError):
        run_file_ops([("rename", tmp_path / "source", tmp_path / "target")])
    assert os.listdir(tmp_path / "target") == ["kept"]
    (tmp_path / "file").write_bytes(b"")
    for op in (("makedirs", tmp_path / "file"), ("makedirs", tmp_path / "file" / "below"), ("mkdir", tmp_path / "file")):
        with pytest.raises(OSError):
            run_file_ops([op])


def test_atomic_file_ops_leave_no_temporary_behind(tmp_path, run_file_ops):
    (tmp_path / "dump.json").write_bytes(b"earlier step")
    ops = files.atomic_file_ops(tmp_path / "dump.json", b"{", b"}")
    run_file_ops(ops)
    assert os.listdir(tmp_path) == ["dump.json"] and (tmp_path / "dump.json").read_bytes() == b"{}"
    with pytest.raises(FileNotFoundError):
        run_file_ops(files.atomic_file_ops(tmp_path / "missing" / "dump.json", b"{}"))
    (tmp_path / "blocked").mkdir()
    with pytest.raises(OSError):  # the rename fails, a folder in the way: its temporary file is removed
        run_file_ops(files.atomic_file_ops(tmp_path / "blocked", b"x"))
    assert sorted(os.listdir(tmp_path)) == ["blocked", "dump.json"]


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask

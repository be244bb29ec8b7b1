"""Bad input: each broken file gets one clear `errors` entry (or lints fine) and the run goes on."""

from __future__ import annotations

import json
import os
import sys

import pytest
from lint_cli_helpers import HAZARD, lint, write

IS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0


@pytest.fixture(autouse=True)
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("MSPROBE_LINT_CACHE_DIR", str(tmp_path / "cache"))


def run_json(folder, *paths):
    run = lint("--format", "json", *paths, cwd=folder)
    assert "Traceback" not in run.err
    return run, json.loads(run.out)


def by_path(items) -> dict:
    found: dict[str, list] = {}
    for item in items:
        found.setdefault(item["path"], []).append(item)
    return found


def only_finding(folder, name: str, data: bytes) -> dict:
    write(folder, name, data)
    run, document = run_json(folder, name)
    assert document["errors"] == [] and len(document["findings"]) == 1, document
    return document["findings"][0]


def test_broken_files_each_get_one_error_and_the_run_goes_on(tmp_path):
    write(tmp_path, "good.py", HAZARD)
    write(tmp_path, "syntax.py", "import torch\n\ndef broken(:\n    pass\n")
    write(tmp_path, "python2.py", 'import torch\n\nprint "loss", torch.zeros(1)\n')
    write(tmp_path, "nul.py", b"import torch\x00\nx = 1\n")
    write(tmp_path, "undecodable.py", b"import torch\nname = '\xff\xfe'\n")
    write(tmp_path, "bad_cookie.py", b"# -*- coding: klingon -*-\nimport torch\n")
    write(tmp_path, "deep.py", "import torch\nx = " + "(" * 500 + "1" + ")" * 500 + "\n")
    write(tmp_path, "empty.py", b"")
    os.symlink("nowhere.py", tmp_path / "dangling.py")
    os.symlink("loop.py", tmp_path / "loop.py")
    os.mkfifo(tmp_path / "fifo.py")
    os.symlink(".", tmp_path / "cycle")  # a folder symlink cycle: never followed
    run, document = run_json(tmp_path, ".")
    errors = {e["path"]: e["message"] for e in document["errors"]}
    assert errors == {
        "syntax.py": "cannot parse: invalid syntax (line 3)",
        "python2.py": "cannot parse: Missing parentheses in call to 'print'. Did you mean print(...)? (line 3); "
                      "Python 2 code is not supported",
        "nul.py": "cannot parse: the file contains NUL bytes (is it a binary file?)",
        "undecodable.py": errors["undecodable.py"],
        "bad_cookie.py": "cannot decode: unknown encoding: klingon",
        "deep.py": "cannot parse: too many nested parentheses (line 2)",
        "dangling.py": "cannot read: no such file or directory (a dangling symlink)",
        "loop.py": "cannot read: too many levels of symbolic links (a symlink loop)",
        "fifo.py": "cannot read: not a regular file",
    }
    assert errors["undecodable.py"].startswith("cannot decode: 'utf-8' codec can't decode byte 0xff")
    assert [f["path"] for f in document["findings"]] == ["good.py"]
    assert run.code == 1


def test_text_output_lists_errors_and_counts_them(tmp_path):
    write(tmp_path, "good.py", HAZARD)
    write(tmp_path, "syntax.py", "import torch\n)\n")
    run = lint(".", cwd=tmp_path)
    assert "syntax.py: error: cannot parse: unmatched ')' (line 2)" in run.out
    assert "1 file could not be linted" in run.out


def test_only_errors_still_exit_1(tmp_path):
    write(tmp_path, "syntax.py", "import torch\n)\n")
    assert lint("syntax.py", cwd=tmp_path).code == 1


def test_pep263_latin1_cookie_and_character_columns(tmp_path):
    data = "# -*- coding: latin-1 -*-\nimport torch\nname = 'café'; torch.backends.cudnn.benchmark = True\n"
    found = only_finding(tmp_path, "latin.py", data.encode("latin-1"))
    assert (found["line"], found["column"]) == (3, data.splitlines()[2].index("torch") + 1)


def test_utf8_columns_count_characters_not_bytes(tmp_path):
    data = "import torch\n\nnote = '随机'; torch.backends.cudnn.benchmark = True\n"
    found = only_finding(tmp_path, "cjk.py", data.encode())
    assert found["column"] == data.splitlines()[2].index("torch") + 1
    assert found["end_column"] == data.splitlines()[2].index(" = True") + 1


def test_bom(tmp_path):
    found = only_finding(tmp_path, "bom.py", b"\xef\xbb\xbf" + HAZARD.encode())
    assert (found["line"], found["column"]) == (3, 1)


def test_crlf_lines_and_columns(tmp_path):
    data = "import torch\r\n\r\ndef setup():\r\n    torch.backends.cudnn.benchmark = True\r\n"
    found = only_finding(tmp_path, "crlf.py", data.encode())
    assert (found["line"], found["column"], found["end_column"]) == (4, 5, 35)
    text = lint("crlf.py", cwd=tmp_path).out
    assert "\r" not in text and "        torch.backends.cudnn.benchmark = True\n        ^~~" in text


def test_empty_file_lints_clean(tmp_path):
    write(tmp_path, "empty.py", b"")
    run, document = run_json(tmp_path, "empty.py")
    assert run.code == 0 and document == {"version": 1, "findings": [], "errors": []}


def test_unreadable_file(tmp_path):
    path = write(tmp_path, "secret.py", HAZARD)
    path.chmod(0)
    try:
        run, document = run_json(tmp_path, "secret.py")
    finally:
        path.chmod(0o644)
    if IS_ROOT:  # root reads it anyway: then it simply lints
        assert [f["code"] for f in document["findings"]] == ["MSP103"]
    else:
        assert document["errors"] == [{"path": "secret.py", "message": "cannot read: permission denied"}]
    assert run.code == 1


def test_unlistable_folder_is_an_error_not_a_crash(tmp_path, monkeypatch):
    write(tmp_path, "pkg/a.py", HAZARD)
    real_scandir = os.scandir

    def failing(path):
        if str(path).endswith("pkg"):
            raise PermissionError(13, "Permission denied")
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", failing)
    run, document = run_json(tmp_path, ".")
    assert document["errors"] == [{"path": "pkg", "message": "cannot list folder: permission denied"}]


def test_five_megabyte_generated_file(tmp_path):
    """Generated code (an embedded data blob, some tables, code) that is large but valid lints as usual."""
    blob = "".join(f"{i:08x}" * 12 + "\n" for i in range(52_000))
    tables = "".join(f"TABLE_{i} = torch.tensor([{i}, {i + 1}, {i + 2}])\n" for i in range(2_000))
    data = f'import torch\n_BLOB = """\n{blob}"""\n{tables}torch.backends.cudnn.benchmark = True\n'
    assert len(data) > 5_000_000
    write(tmp_path, "generated.py", data)
    write(tmp_path, "after.py", HAZARD)
    run, document = run_json(tmp_path, "generated.py", "after.py")
    assert document["errors"] == []
    last_line = data.count("\n")
    assert [(f["path"], f["line"]) for f in document["findings"]] == [("after.py", 3), ("generated.py", last_line)]


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="Python 3.12 parses PEP 695 syntax")
def test_python312_syntax_names_the_python_to_run(tmp_path):
    """lerobot's `class Backtrackable[T]:` and `type FeatureDict = ...` (PEP 695) parse only under Python 3.12."""
    write(tmp_path, "alias.py", "import torch\n\ntype FeatureDict = dict[str, torch.Tensor]\n")
    write(tmp_path, "generic.py", "import torch\n\n\nclass Backtrackable[T]:\n    pass\n")
    write(tmp_path, "function.py", "import torch\n\n\ndef first[T](items: list[T]) -> T:\n    return items[0]\n")
    _, document = run_json(tmp_path, ".")
    hint = "the file uses Python 3.12 syntax (`type` alias / type parameters); run msprobe-lint under Python >= 3.12"
    assert {e["path"]: e["message"] for e in document["errors"]} == {
        "alias.py": f"cannot parse: invalid syntax (line 3); {hint}",
        "generic.py": f"cannot parse: invalid syntax (line 4); {hint}",
        "function.py": f"cannot parse: expected '(' (line 4); {hint}",
    }


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="Python 3.12 parses PEP 695 syntax")
def test_python312_syntax_names_the_instrument_command():
    from msprobe_rewriter.instrument.driver import run

    result = run("alias.py", b"import torch\n\ntype FeatureDict = dict[str, torch.Tensor]\n", None)
    assert result.error == ("cannot parse: invalid syntax (line 3); the file uses Python 3.12 syntax (`type` alias / "
                            "type parameters); run msprobe-instrument under Python >= 3.12")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes need a POSIX system")
def test_the_project_import_index_skips_a_named_pipe(tmp_path):
    """A `fifo.py` beside the project's files would block the index of who imports what (open waits for a writer)."""
    from msprobe_rewriter import project

    (tmp_path / ".git").mkdir()  # the project's root
    os.mkfifo(tmp_path / "fifo.py")
    (tmp_path / "train.py").write_text("import model\n")
    (tmp_path / "model.py").write_text("import torch\n")
    assert str(tmp_path / "train.py") in project.importers(str(tmp_path / "model.py"))

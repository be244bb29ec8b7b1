"""Markers and undo: every changed line is marked, undo restores the original bytes from the file alone."""

from __future__ import annotations

import pytest
from msprobe_rewriter.instrument import (
    InstrumentError,
    Options,
    instrument_text,
    markers,
    marking,
    run,
    undo_source_text,
)
from msprobe_rewriter.instrument.textio import split_lines

SCRIPT = '''"""A tiny training script."""
import torch
from torch.utils.data import DataLoader

model = torch.nn.Linear(4, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
loader = DataLoader(torch.randn(16, 4), batch_size=4, shuffle=True)
for x in loader:
    note = """a multi-line string
    that must keep its indentation"""
    noise = torch.randn(4, 1, device="cuda" if torch.cuda.is_available() else "cpu")
    loss = (model(x) - noise).pow(2).mean()
    loss.backward()
    opt.step()
    opt.zero_grad()
'''


def instrumented(text: str = SCRIPT, **options) -> str:
    return instrument_text("/project/train.py", text, Options(**options))[0]


def test_every_changed_line_is_marked_and_undo_restores_the_original():
    out = instrumented()
    original = {line.strip() for line in split_lines(SCRIPT)}
    for line in split_lines(out):  # lines re-indented inside the marked `try:` need no marker of their own
        assert markers.TAG in line or line.strip() in original, line
    assert undo_source_text(out) == SCRIPT


def test_multiline_string_is_not_reindented_by_the_wrap():
    out = instrumented()
    assert '    that must keep its indentation"""\n' in out
    assert "        note = \"\"\"a multi-line string\n" in out


def test_second_run_changes_nothing():
    out = instrumented()
    assert instrumented(out) == out


def test_rerun_with_other_options_starts_from_the_original():
    out = instrumented()
    again = instrumented(out, seed=7, deterministic=True)
    assert "seed_all(seed=7, mode=True" in again
    assert undo_source_text(again) == SCRIPT


@pytest.mark.parametrize("tail", [
    "\n            # t.update(len(x))  deeper than the loop body\n",
    "          # between the two indents\n\n",
    "\n                # deeper still\n    # at the loop's own level\n",
])
@pytest.mark.parametrize("after", ["    print(epoch)\n", ""])
def test_comments_trailing_the_loop_body_round_trip(tail, after):
    text = ("import torch\nmodel = torch.nn.Linear(4, 1)\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
            "for epoch in range(2):\n    for x in torch.randn(8, 2, 4):\n        model(x).sum().backward()\n"
            "        opt.step()\n" + tail + after)
    out = instrumented(text)
    assert "finally:" in out
    assert instrumented(out) == out
    assert undo_source_text(out) == text


def test_user_edits_to_unmarked_lines_survive_undo():
    out = instrumented()
    edited = out.replace("opt.zero_grad()", "opt.zero_grad(set_to_none=True)  # edited by hand")
    edited = "# a header comment the user added\n" + edited
    restored = undo_source_text(edited)
    assert restored == "# a header comment the user added\n" + SCRIPT.replace(
        "opt.zero_grad()", "opt.zero_grad(set_to_none=True)  # edited by hand")


def test_edit_of_a_marked_line_refuses_and_names_it():
    out = instrumented()
    lines = split_lines(out)
    row = next(i for i, line in enumerate(lines) if "shuffle=False" in line)
    lines[row] = lines[row].replace("batch_size=4", "batch_size=8")
    with pytest.raises(InstrumentError, match=f"line {row + 1}:"):
        undo_source_text("".join(lines))


def test_edit_of_the_wrapper_refuses():
    out = instrumented()
    broken = out.replace("debugger.step()", "debugger.step(); print('x')", 1)
    with pytest.raises(InstrumentError, match="line"):
        undo_source_text(broken)


def test_instrumenting_an_edited_file_refuses_too():
    out = instrumented().replace("shuffle=False", "shuffle=None")
    with pytest.raises(InstrumentError, match="cannot undo the previous instrumentation"):
        instrumented(out)


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_line_endings_are_kept(newline):
    text = SCRIPT.replace("\n", newline)
    out = instrumented(text)
    assert out.count("\r\n") == (out.count("\n") if newline == "\r\n" else 0)
    assert undo_source_text(out) == text


def test_bom_and_pep263_encoding_round_trip():
    for data in (b"\xef\xbb\xbf" + SCRIPT.encode("utf-8"),
                 ("# -*- coding: latin-1 -*-\n# d\xe9j\xe0 vu\n" + SCRIPT).encode("latin-1")):
        first = run("train.py", data, Options())
        assert first.error is None and first.changed
        written = first.source.encode(first.after)
        assert written[:3] == data[:3]
        back = run("train.py", written, None, undoing=True)
        assert back.source.encode(back.after) == data


def test_file_without_final_newline():
    text = SCRIPT.rstrip("\n")
    out = instrumented(text)
    assert not out.endswith("\n")
    assert undo_source_text(out) == text


def test_removed_lines_leave_a_marked_trace():
    old = "x = [\n    a,\n    b,\n    c,\n]\n"
    new = "x = [\n    a,\n    c,\n]\n"
    out = marking.mark(old, new)
    assert "    # msprobe-instrument " in out and "was: '    b,'" in out
    assert undo_source_text(out) == old


def test_a_line_opening_brackets_is_no_edit_of_a_whole_line_and_traces_keep_the_outer_indent():
    """MoCo v3's augmentation list: `RandomResizedCrop` becomes `Resize` + `CenterCrop`, and the
    `RandomApply([ColorJitter(...)], p=0.8)` spread over three lines goes; `CenterCrop` is no edit of `RandomApply([`,
    and the trace of the removed lines stands at the list's indent, not the jitter's."""
    old = ("aug = [\n    T.RandomResizedCrop(224, scale=(0.2, 1.)),\n    T.RandomApply([\n"
           "        T.ColorJitter(0.4, 0.4, 0.2, 0.1)  # not strengthened\n    ], p=0.8),\n    T.ToTensor(),\n]\n")
    new = "aug = [\n    T.Resize(224),\n    T.CenterCrop(224),\n    T.ToTensor(),\n]\n"
    out = marking.mark(old, new)
    assert "was:" not in next(line for line in out.splitlines() if "CenterCrop" in line)
    assert "\n    # msprobe-instrument " in out and "\n        # msprobe-instrument" not in out
    assert undo_source_text(out) == old


def test_line_that_cannot_take_a_comment_joins_the_next_hunk():
    old = 's = f("""a\nb""", 1)\ny = 2\n'
    new = 's = f("""a\nb""", 2)\ny = 2\n'
    out = marking.mark(old, new)
    assert out.splitlines()[0] == 's = f("""a'  # the string is untouched
    assert undo_source_text(out) == old
    old = "x = 1 + \\\n    2\n"
    new = "x = 3 + \\\n    2\n"
    out = marking.mark(old, new)
    assert out.splitlines()[0] == "x = 3 + \\"
    assert "+2" in out and undo_source_text(out) == old


def test_strip_leaves_the_code():
    out = instrumented()
    assert markers.TAG not in markers.strip(out)


def test_unparsable_file_is_an_error_not_a_crash():
    result = run("bad.py", b"import torch\ndef f(:\n", Options())
    assert result.after is None and result.error.startswith("cannot parse")
    result = run("bin.py", b"import torch\x00\n", Options())
    assert result.after is None and result.error


TRICKY = '''# -*- coding: utf-8 -*-
"""Odd but valid code: every statement form, one-line bodies, semicolons, continuations, tabs."""
from __future__ import annotations
import torch, os
from torch.utils.data import DataLoader
if True: import numpy as np
try:
    import torchvision.transforms as T
except ImportError:  # pragma: no cover
    T = None


class A:
    @staticmethod
    def f(x): return torch.randn(3, device="cuda")

    def g(self, d):
        match d:
            case "a":
                return torch.rand(2, device=d)
            case _:
                pass


def train(model, opt, loader, dev):
\tfor epoch in range(2):
\t\tfor i, x in enumerate(loader):
\t\t\tif i == 0: continue
\t\t\telif i == 1:
\t\t\t\ty = torch.randn(
\t\t\t\t    2,
\t\t\t\t    device=dev,
\t\t\t\t)
\t\t\telse:
\t\t\t\ty = torch.randn(2, \\
\t\t\t\t    device=dev)
\t\t\ts = f"""{i}
            multi"""; t = 1
\t\t\tloss = model(x); loss.backward(); opt.step()
\t\telse:
\t\t\tpass


while False: opt.step()
loader = DataLoader(range(4), shuffle=True); other = DataLoader(range(4),
    shuffle=True)
'''


def test_tricky_code_round_trips():
    out = instrumented(TRICKY, grad_probe=True)
    compile(out, "tricky.py", "exec")
    assert markers.strip(out).count("torch.randn(2).to(dev)") == 1
    assert "\t\t\ttry:" in out  # the inner loop, indented with tabs like its body
    assert instrumented(out, grad_probe=True) == out
    assert undo_source_text(out) == TRICKY


def test_user_try_right_after_the_imports_is_not_taken_for_a_wrapper():
    code = ("import torch\ntry:\n    import safetensors\nexcept ImportError:\n    safetensors = None\n"
            "x = torch.randn(2)\n\nif __name__ == \"__main__\":\n    print(x)\n")
    out = instrumented(code)
    assert "seed_all(" in out
    assert instrumented(out) == out
    assert undo_source_text(out) == code

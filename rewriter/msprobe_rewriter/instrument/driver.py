"""Instrument or undo one file: bytes in, bytes out, never a partial result and never a traceback
(set MSPROBE_INSTRUMENT_DEBUG=1 to see one for an internal error).

`instrument_text` starts from the file's original (an instrumented file is undone first), and reads the
project modules it follows as originals too, so running the tool twice gives the same text, whichever
files it instrumented before, and changing options re-instruments cleanly. After planning and
applying every selected transform in one pass, the changed lines are marked and the training loops
wrapped; the result must parse, or the file is reported and left alone.
"""

from __future__ import annotations

import ast
import functools
import gc
import os
import re
import tokenize
import warnings
from dataclasses import dataclass, field, replace
from pathlib import Path

import libcst as cst

from msprobe_rewriter import project
from msprobe_rewriter.instrument import edits, markers, marking, undo, wrap
from msprobe_rewriter.instrument.data_elsewhere import followed, note_data_elsewhere
from msprobe_rewriter.instrument.options import Options
from msprobe_rewriter.instrument.structure import MismatchError
from msprobe_rewriter.instrument.textio import Source, decode
from msprobe_rewriter.instrument.transforms import ALL_TRANSFORMS, select
from msprobe_rewriter.instrument.unit import Unit
from msprobe_rewriter.lint import engine as lint_engine
from msprobe_rewriter.lint.engine import lint_source, parse_error_message
from msprobe_rewriter.rules import RULES_BY_NAME

# Every file lint reads (a transform fixes lint's findings: a data module naming only numpy or mindspore.dataset
# still gets its workers and file order fixed), and more: `Trainer`, `mmengine`, `deepspeed`: a Hugging Face or
# Lightning trainer, an mmengine runner, a DeepSpeed engine; `mindocr`, ...: a model zoo's trainer.
PREFILTER = re.compile(lint_engine.PREFILTER.pattern + r"|Trainer|ultralytics|mind(yolo|formers|ocr|one|audio)")


class InstrumentError(Exception):
    """A file that cannot be instrumented or undone; the message is one line for the user."""


@dataclass
class Result:
    """One file's outcome: its text before and after (None on error), notes, and how to encode it."""

    path: str
    before: str = ""
    after: str | None = None
    source: Source | None = None
    notes: list[str] = field(default_factory=list)
    error: str | None = None

    @property
    def changed(self) -> bool:
        """Whether the file would change."""
        return self.after is not None and self.after != self.before


def _original(text: str) -> str:
    try:
        return undo.undo_text(text)
    except markers.MarkerError as exc:
        raise InstrumentError(f"cannot undo the previous instrumentation: {exc}") from None


def _as_written(data: bytes) -> bytes:
    """A project module's bytes without this tool's edits (as they are where those cannot be undone)."""
    if markers.TAG.encode() not in data:
        return data
    try:
        source = decode(data)
        return source.encode(undo.undo_text(source.text))
    except (markers.MarkerError, SyntaxError, UnicodeError, LookupError, tokenize.TokenError, cst.ParserSyntaxError):
        return data


def instrument_text(path: str, text: str, options: Options, source: Source | None = None) -> tuple[str, list[str]]:
    """The instrumented text of `text` and notes about what was left alone."""
    instrumented = markers.TAG in text
    original = _original(text) if instrumented else text
    if not PREFILTER.search(original):
        _parse(path, original)  # nothing to instrument, but bad input is still reported
        return original, []
    if instrumented:
        options = options.as_instrumented(text)
    with project.read_as_written(_as_written):
        return _instrument(path, original, options, source)


def _parse(path: str, text: str) -> ast.Module:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ast.parse(text, filename=path)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        raise InstrumentError(parse_error_message(exc, "msprobe-instrument")) from None


def _instrument(path: str, original: str, options: Options, source: Source | None,
                follow: bool = True) -> tuple[str, list[str]]:
    selected = options.selected or select((), (), options.grad_probe)
    tree = _parse(path, original)
    rules = [RULES_BY_NAME[t.rule] for t in ALL_TRANSFORMS
             if t.name in selected and t.rule is not None and t.rule in RULES_BY_NAME]
    data = source.encode(original) if source is not None else original.encode("utf-8")
    findings = lint_source(path, data, rules).findings if rules else []
    unit = Unit(path, original, tree, _with_selection(options, selected), findings)
    if unit.other_framework:
        torch_utils = unit.ctx.imports.imports_root("torch")
        if torch_utils or unit.ctx.is_entry_script():  # a library module of another framework: nothing to say
            utils = " (from PyTorch it takes only torch.utils)" if torch_utils else ""
            unit.note(None, f"this file is written for {unit.other_framework}{utils}: msprobe-instrument instruments "
                            "PyTorch and MindSpore code, so it is left unchanged")
        return original, unit.notes
    try:
        for transform in ALL_TRANSFORMS:
            if transform.name in selected:
                transform().apply(unit)
        if follow:
            note_data_elsewhere(unit, lambda module: _changes_module(module, unit.options))
        if not unit.edits:
            return original, unit.notes
        result = _render(unit)
    except cst.ParserSyntaxError as exc:
        raise InstrumentError(f"cannot parse: {_libcst_failure(exc, original)}") from None
    except MismatchError as exc:
        raise InstrumentError(f"internal error: libcst and ast disagree ({exc}); file left unchanged") from None
    except RecursionError:  # a bug of ours (the file parsed): not a parse error
        raise InstrumentError("internal error: analysis recursed too deep; file left unchanged") from None
    try:
        ast.parse(result)
    except SyntaxError as exc:
        raise InstrumentError(f"internal error: the rewritten code does not parse ({exc.msg}, line {exc.lineno}); "
                              "file left unchanged") from None
    return result, unit.notes


def _changes_module(path: Path, options: Options) -> bool:
    """Whether the transforms that fix code anywhere would change the project module `path` (one that an entry
    script calls into; several entry scripts of one folder run share the answer while the file is unchanged)."""
    try:
        stat = path.stat()
    except OSError:
        return False
    return _changes_file(path, stat.st_mtime_ns, stat.st_size, options)


@functools.lru_cache(maxsize=64)
def _changes_file(path: Path, _mtime: int, _size: int, options: Options) -> bool:
    try:
        text = decode(path.read_bytes()).text
        if markers.TAG in text or not PREFILTER.search(text):
            return False
        return _instrument(str(path), text, replace(options, selected=followed(options.selected)), None,
                           follow=False)[0] != text
    except (InstrumentError, OSError, SyntaxError, UnicodeError, LookupError, tokenize.TokenError):
        return False


def _libcst_failure(exc: cst.ParserSyntaxError, text: str) -> str:
    """Why libcst rejects a file that Python parses: its tokenizer refuses some indentation that mixes tabs
    and spaces (the column Python computes with tab stops of 8), which a re-indent fixes."""
    try:
        for token in tokenize.generate_tokens(iter(text.splitlines(keepends=True)).__next__):
            if token.type == tokenize.INDENT and "\t" in token.string and " " in token.string:
                return (f"line {token.start[0]} mixes tabs and spaces in its indentation, which Python accepts but "
                        "libcst (the rewriting library) does not: indent it with spaces only")
    except (tokenize.TokenError, SyntaxError):
        pass
    return f"libcst, the rewriting library, rejects what Python accepts ({exc.message}): please report it"


def _render(unit: Unit) -> str:
    """Apply the planned edits, mark the changed lines, and wrap the training loops (one rendering)."""
    structure = unit.structure
    rendered = edits.apply(structure.module, unit.edits, structure.path, unit.text, unit.wraps).code
    if not unit.wraps:
        return marking.mark(unit.text, rendered)
    plain, wrapped = wrap.split(rendered)
    entries = marking.mark_lines(unit.text, plain)
    return wrap.merge(entries, wrapped)


def _with_selection(options: Options, selected: frozenset[str]) -> Options:
    return replace(options, selected=selected)


def undo_source_text(text: str) -> str:
    """The original of an instrumented text (InstrumentError when a marked line was edited)."""
    try:
        return undo.undo_text(text)
    except markers.MarkerError as exc:
        raise InstrumentError(f"refusing to undo: {exc}") from None
    except (tokenize.TokenError, SyntaxError) as exc:
        raise InstrumentError(f"cannot undo: the file does not tokenize ({exc})") from None
    except cst.ParserSyntaxError as exc:
        raise InstrumentError(f"cannot undo: cannot parse: {_libcst_failure(exc, text)}") from None


def run(path: str, data: bytes, options: Options | None, undoing: bool = False) -> Result:
    """Instrument (or, with `undoing`, undo) one file's bytes."""
    result = Result(path)
    collecting = gc.isenabled()
    gc.disable()  # syntax trees hold no cycles; the collector would rescan them again and again
    try:
        result.source = decode(data)
        result.before = result.source.text
        if undoing:
            result.after = undo_source_text(result.before)
        else:
            result.after, result.notes = instrument_text(path, result.before, options or Options(), result.source)
        result.source.encode(result.after)
    except InstrumentError as exc:
        result.error, result.after = str(exc), None
    except (SyntaxError, UnicodeError, LookupError) as exc:
        result.error, result.after = parse_error_message(exc, "msprobe-instrument"), None
    except (tokenize.TokenError, RecursionError, MemoryError) as exc:
        result.error, result.after = parse_error_message(exc), None
    except Exception as exc:  # a bug of ours: one line for this file, the others go on
        if os.environ.get("MSPROBE_INSTRUMENT_DEBUG"):
            raise
        result.error, result.after = f"internal error ({type(exc).__name__}: {exc}); file left unchanged", None
    finally:
        if collecting:
            gc.enable()
    return result

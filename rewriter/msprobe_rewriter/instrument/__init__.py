"""msprobe-instrument: a reversible libcst codemod that makes training scripts reproducible and wires in
the precision debugger. `run` instruments or undoes one file; `cli` is the command line."""

from msprobe_rewriter.instrument.driver import InstrumentError, Result, instrument_text, run, undo_source_text
from msprobe_rewriter.instrument.options import Options

__all__ = ["InstrumentError", "Options", "Result", "instrument_text", "run", "undo_source_text"]

"""`python -m msprobe_rewriter.instrument`: the msprobe-instrument command."""

from msprobe_rewriter.instrument.cli import main

main()

"""`python -m msprobe_runtime.verify`: the same as the `msprobe-verify` command."""

from msprobe_runtime.verify.cli import main

main()

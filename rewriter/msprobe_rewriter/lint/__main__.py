"""`python -m msprobe_rewriter.lint`: the same as the `msprobe-lint` command."""

import sys

from msprobe_rewriter.lint.cli import main

sys.exit(main())

"""msprobe-verify: run a training script twice with capture injected and say whether it is reproducible.

`cli` runs the script and reports; `inprocess` is what runs inside each run (started by the
`inject/sitecustomize.py` that msprobe-verify puts on PYTHONPATH); `lint` asks msprobe-lint (in a
subprocess: the runtime never imports the rewriter) about the diverging line.
"""

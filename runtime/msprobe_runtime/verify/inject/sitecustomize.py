"""Put first on PYTHONPATH by msprobe-verify: starts capture in this process, then runs any other
sitecustomize the environment has (this file would otherwise hide it)."""

from msprobe_runtime.verify import inprocess

inprocess.activate()
inprocess.chain_sitecustomize(__file__)

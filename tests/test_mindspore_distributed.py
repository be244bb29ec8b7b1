"""Two MindSpore processes on the CPU (msrun, MindSpore's own launcher): each rank dumps into its own
`rank{R}` folder, the `rank` filter applies, and collectives are recorded with their results.

On this CPU build `mint.distributed` and the `ops.AllReduce`-style primitives work across processes;
`communication.comm_func` collectives do not (no CPU kernel for InnerCommAllReduce).
"""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
from pathlib import Path

import pytest

pytest.importorskip("mindspore")

WORKER = """
import json, sys
import mindspore as ms
import mindspore.mint.distributed as dist
from mindspore import nn, ops
from mindspore.communication import get_rank, init
sys.path.insert(0, {tests!r})
from mindspore_support import TinyNet, batch, trainer
from msprobe_runtime.mindspore import PrecisionDebugger, seed_all

ms.set_context(mode=ms.PYNATIVE_MODE)
ms.set_device("CPU")
init()
seed_all(0)
net = TinyNet()
grad_fn, optimizer = trainer(net)
x, y = batch()
x = x + get_rank()  # each rank its own data
debugger = PrecisionDebugger(config_path={config!r})
for step in range(2):
    debugger.start(model=net)
    loss, grads = grad_fn(x, y)
    for grad in grads:
        dist.all_reduce(grad)  # data parallel by hand: sum the gradients of both ranks
    optimizer(grads)
    debugger.stop()
    debugger.step()
debugger.close()
print("WEIGHT", float(net.fc1.weight.sum().asnumpy()), flush=True)
"""


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.mark.skipif(shutil.which("msrun") is None, reason="MindSpore's msrun launcher is not installed")
def test_two_ranks_dump_their_own_folders_and_record_collectives(tmp_path):
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"task": "statistics", "level": "L1", "dump_path": str(tmp_path / "dump"),
                                  "rank": [1], "step": []}), encoding="utf-8")
    script = tmp_path / "worker.py"
    script.write_text(WORKER.format(tests=str(Path(__file__).parent), config=str(config)), encoding="utf-8")
    logs = tmp_path / "logs"
    command = ["msrun", "--worker_num=2", "--local_worker_num=2", f"--master_port={_free_port()}",
               f"--log_dir={logs}", "--join=True", str(script)]
    done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=600, check=False)
    worker_logs = {path.name: path.read_text(errors="replace") for path in logs.glob("worker_*.log")}
    assert done.returncode == 0, "\n".join(text[-2000:] for text in worker_logs.values())
    weights = {line for text in worker_logs.values() for line in text.splitlines() if line.startswith("WEIGHT")}
    assert len(weights) == 1, weights  # both ranks applied the same summed gradients
    assert sorted(path.name for path in (tmp_path / "dump" / "step0").iterdir()) == ["rank1"]
    data = json.loads((tmp_path / "dump" / "step1" / "rank1" / "dump.json").read_text(encoding="utf-8"))["data"]
    reduced = data["MintDistributed.all_reduce.0.forward"]
    assert reduced["output"][0]["shape"] == reduced["input_args"][0]["shape"]
    assert reduced["output"][0]["Norm"] != reduced["input_args"][0]["Norm"], "output: the summed gradient"

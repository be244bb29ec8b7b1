"""Regenerates the real MindStudio Probe 26.2 dumps and compare results in this folder (run once, by hand).

    python -m venv --system-site-packages /tmp/msprobe-venv
    /tmp/msprobe-venv/bin/pip install mindstudio-probe==26.2.0
    /tmp/msprobe-venv/bin/python tests/data/msprobe26/make_dumps.py

Two runs of one small model differ on purpose, in ways that trip each of msprobe's Result rules: a
scalar argument (3 vs 1), a dtype (float64 vs float32), a shape, a NaN, requires_grad, and a 0.1%
change amplified by pow (a warning). Each run is dumped by msprobe in statistics, md5 and tensor mode
(level mix, step 0), then `msprobe compare` writes its CSV for each mode (`msprobe_<mode>.csv`).
"""

import glob
import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def run(side: str, task: str, summary_mode: str) -> None:
    import torch
    from msprobe.pytorch import PrecisionDebugger
    from torch import nn
    from torch.nn import functional as F

    target = side == "target"
    dump = os.path.join(HERE, f"{summary_mode if task == 'statistics' else task}_{side}")
    config = {"task": task, "dump_path": dump, "rank": [], "step": [0], "level": "mix",
              task: {"scope": [], "list": [], "data_mode": ["all"]}}
    if task == "statistics":
        config[task]["summary_mode"] = summary_mode
    config_path = os.path.join(HERE, f"config_{side}.json")
    with open(config_path, "w") as handle:
        json.dump(config, handle)
    torch.manual_seed(0)

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(8, 16)
            self.fc2 = nn.Linear(16, 4)

        def forward(self, x):
            h = torch.mul(self.fc1(x), 3.0 if target else 1.0)  # scalar argument differs
            h = F.relu(h)
            extra = torch.zeros(4, dtype=torch.float64 if target else torch.float32)  # dtype differs
            shaped = torch.ones(5 if target else 4)  # shape differs
            bad = torch.log(torch.tensor([-1.0 if target else 1.0]))  # NaN on the target side
            flag = torch.ones(3, requires_grad=target)  # requires_grad differs
            base = torch.mul(torch.full((6,), 1.1), 1.001 if target else 1.0)
            amplified = torch.pow(base, 30)  # a 0.1% input change becomes ~3% at the output
            return self.fc2(h).sum() + extra.sum() + shaped.sum() + bad.sum() * 0 + flag.sum() + amplified.sum()

    model = Net()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(3, 8)
    debugger = PrecisionDebugger(config_path=config_path)
    debugger.start(model)
    loss = model(x)
    loss.backward()
    optimizer.step()
    debugger.stop()
    debugger.step()
    os.remove(config_path)


def main() -> None:
    if len(sys.argv) == 4:
        run(*sys.argv[1:])
        return
    for name in glob.glob(os.path.join(HERE, "*_target")) + glob.glob(os.path.join(HERE, "*_golden")):
        shutil.rmtree(name)
    for task, summary_mode in (("statistics", "statistics"), ("statistics", "md5"), ("tensor", "statistics")):
        for side in ("target", "golden"):
            subprocess.run([sys.executable, __file__, side, task, summary_mode], check=True, capture_output=True)
        mode = summary_mode if task == "statistics" else task
        target_json = glob.glob(os.path.join(HERE, f"{mode}_target", "step0", "*", "dump.json"))[0]
        golden_json = glob.glob(os.path.join(HERE, f"{mode}_golden", "step0", "*", "dump.json"))[0]
        output = os.path.join(HERE, "out")
        subprocess.run([os.path.join(os.path.dirname(sys.executable), "msprobe"), "compare", "-tp", target_json,
                        "-gp", golden_json, "-o", output], check=True, capture_output=True)
        produced = glob.glob(os.path.join(output, "compare_result*.csv"))[0]
        shutil.move(produced, os.path.join(HERE, f"msprobe_{mode}.csv"))
        shutil.rmtree(output)
    for folder in glob.glob(os.path.join(HERE, "*_*", "step0", "proc*")):  # process ids vary: one fixed name
        os.rename(folder, os.path.join(os.path.dirname(folder), "proc0"))


if __name__ == "__main__":
    main()

"""Cross-framework compare: the name mapping (data in core/compare/crossframework.json), and the example of
fixtures/crossframework end to end: a PyTorch model and its MindSpore port with the same weights compare
clean; with MindSpore's default LayerNorm epsilon the report names that LayerNorm first.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from msprobe_runtime.compare_cli import summary_lines
from msprobe_runtime.core.compare import compare
from msprobe_runtime.core.compare.crossframework import forward_of, pytorch_name

EXAMPLE = Path(__file__).resolve().parent.parent / "fixtures" / "crossframework"


@pytest.mark.parametrize(("mindspore", "pytorch"), [
    ("Cell.blocks.0.fc1.Dense.forward.0", "Module.blocks.0.fc1.Linear.forward.0"),
    ("Cell.layers.SequentialCell.backward.1", "Module.layers.Sequential.backward.1"),
    ("Cell.ln.LayerNorm.parameters_grad.0", "Module.ln.LayerNorm.parameters_grad.0"),
    ("Functional.dense.3.forward", "Functional.linear.3.forward"),
    ("Functional.matmul.0.backward", "Torch.matmul.0.backward"),
    ("Functional.softmax.1.forward", "Functional.softmax.1.forward"),
    ("Functional.swapaxes.0.forward", "Torch.transpose.0.forward"),
    ("Mint.matmul.2.forward", "Torch.matmul.2.forward"),
    ("MintFunctional.gelu.0.forward", "Functional.gelu.0.forward"),
    ("Primitive.layer_norm.LayerNorm.0.forward", "Functional.layer_norm.0.forward"),
    ("Primitive.bias_add.BiasAdd.0.forward", "Primitive.bias_add.BiasAdd.0.forward"),
    ("Tensor.swapaxes.1.forward", "Tensor.transpose.1.forward"),
    ("Tensor.__add__.0.forward", "Tensor.__add__.0.forward"),
    ("Distributed.all_reduce.0.forward", "Distributed.all_reduce.0.forward"),
])
def test_mindspore_names_map_to_pytorch_names(mindspore, pytorch):
    assert pytorch_name(mindspore) == pytorch


def test_backward_records_and_gradients_find_their_forward_call():
    assert forward_of("Functional.linear.0.backward") == "Functional.linear.0.forward"
    assert forward_of("Module.fc.Linear.parameters_grad.2") == "Module.fc.Linear.forward.2"
    assert forward_of("Module.fc.Linear.forward.2", "backward") == "Module.fc.Linear.backward.2"


def _run(command, cwd):
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]


def test_the_example_compares_clean_and_names_the_injected_layernorm_epsilon(tmp_path):
    pytest.importorskip("mindspore")
    pytest.importorskip("torch")
    clean, buggy = tmp_path / "clean", tmp_path / "eps"
    clean.mkdir()
    _run([sys.executable, str(EXAMPLE / "model_pytorch.py"), str(clean)], clean)
    shutil.copytree(clean, buggy)
    runs = [subprocess.Popen([sys.executable, str(EXAMPLE / "model_mindspore.py"), str(folder), "--bug", bug],
                             cwd=folder, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for folder, bug in ((clean, "none"), (buggy, "eps"))]
    for run in runs:
        _, err = run.communicate(timeout=600)
        assert run.returncode == 0, err[-3000:]
    result = compare(clean / "dump_mindspore", clean / "dump_pytorch", tmp_path / "out", rtol=1e-5)
    assert result.exit_code == 0, summary_lines(result)
    assert all(pair.counts["unmatched"] == 0 and pair.counts["calls"] == 61 for pair in result.pairs)
    result = compare(buggy / "dump_mindspore", buggy / "dump_pytorch", tmp_path / "out", rtol=1e-5)
    lines = summary_lines(result)
    assert lines[0].startswith("first divergence (step0/rank0): Cell.blocks.0.ln1.LayerNorm.forward.0 at ")
    assert "inputs agree, outputs differ" in lines[1]

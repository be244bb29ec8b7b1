"""The decisive test: training scripts that are not reproducible as written become bit-identical after
`msprobe-instrument --write`, and the debugger writes dumps for the configured steps.

Each fixture runs as a subprocess twice before (the loss sequences must differ) and twice after
instrumenting a copy (they must be equal, character for character). Slow: a few minutes in all.
MindSpore fixtures are rewritten and checked for parse, idempotence and undo (their runs come with the
MindSpore runtime).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from msprobe_rewriter.instrument import Options, run

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
LOSS = re.compile(r"^step (\d+) loss (\S+)$", re.MULTILINE)
RUNNABLE = [("pytorch/mlp_regression.py", ["--steps", "3"]),
            ("pytorch/diffusion_sampler.py", ["--steps", "3"]),
            ("pytorch/gpt_lm.py", ["--steps", "3", "--eval-iters", "0"]),
            ("pytorch/ddp_train.py", ["--steps", "3"]),
            ("pytorch/hf_text_classifier.py", ["--steps", "3"])]


def losses(script: Path, args: list[str]) -> list[tuple[str, str]]:
    result = subprocess.run([sys.executable, script.name, *args], cwd=script.parent, capture_output=True,
                            text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    found = LOSS.findall(result.stdout)
    assert found, result.stdout[-2000:]
    return found


@pytest.mark.parametrize(("name", "args"), RUNNABLE, ids=[n for n, _ in RUNNABLE])
def test_instrumented_fixture_is_bit_identical_and_dumps(tmp_path, name, args):
    script = tmp_path / Path(name).name
    shutil.copy(FIXTURES / name, script)
    assert losses(script, args) != losses(script, args), "the fixture is reproducible as written"
    command = [sys.executable, "-m", "msprobe_rewriter.instrument", "--write", "--emit-config", script.name]
    written = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert written.returncode == 0, written.stderr
    first, second = losses(script, args), losses(script, args)
    assert first == second
    assert len(first) == int(args[1])
    steps = sorted(p.name for p in (tmp_path / "msprobe_dump").iterdir())
    assert steps == ["step0", "step1"]
    for step in steps:
        assert (tmp_path / "msprobe_dump" / step / "rank0" / "dump.json").is_file()


ALL_FIXTURES = sorted(p.relative_to(FIXTURES).as_posix() for p in FIXTURES.rglob("*.py"))


@pytest.mark.parametrize("name", ALL_FIXTURES)
def test_every_fixture_round_trips(name):
    data = (FIXTURES / name).read_bytes()
    first = run(str(FIXTURES / name), data, Options(grad_probe=True))
    assert first.error is None, first.error
    compile(first.after, name, "exec")
    instrumented = first.source.encode(first.after)
    assert run(str(FIXTURES / name), instrumented, Options(grad_probe=True)).after == first.after
    undone = run(str(FIXTURES / name), instrumented, None, undoing=True)
    assert undone.source.encode(undone.after) == data


@pytest.mark.parametrize("name", ["mindspore/image_pipeline.py", "mindspore/nlp_train.py"])
def test_mindspore_fixtures_get_the_mindspore_runtime(name):
    result = run(str(FIXTURES / name), (FIXTURES / name).read_bytes(), Options())
    assert "from msprobe_runtime.mindspore import" in result.after
    assert "seed_all(" in result.after and "PrecisionDebugger(" in result.after

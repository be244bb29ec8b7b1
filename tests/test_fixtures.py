"""The realistic fixtures: snapshot tests of their lint findings, and checks that they are what they claim.

Snapshots live in tests/snapshots/<path under fixtures/, "/" -> "__">.txt, one finding per line as
`line:col CODE name severity`. Regenerate them with `UPDATE_SNAPSHOTS=1 python -m pytest tests/test_fixtures.py`
and review the diff like code. Fixtures under a `fixed/` folder are the hand-repaired twins of the others:
no error or warning findings, and (where runnable) bit-identical losses from two runs; the originals give
different losses from two runs, which the codemod's run-twice test relies on.
"""

from __future__ import annotations

import difflib
import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from msprobe_rewriter.lint.engine import lint_source
from msprobe_rewriter.rules import ALL_RULES

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
SNAPSHOTS = Path(__file__).resolve().parent / "snapshots"
META_RULES = {"MSP901"}  # unused-noqa reports on suppressions, not on training code
STEP_LINE = re.compile(r"^step (\d+) loss (\S+)$", re.MULTILINE)

ALL_FIXTURES = sorted(p for p in FIXTURES.rglob("*.py") if p.name != "__init__.py")
FIXED = [p for p in ALL_FIXTURES if "fixed" in p.relative_to(FIXTURES).parts]
BAD = [p for p in ALL_FIXTURES if p not in FIXED]
# Scripts that run on a CPU-only machine in seconds (the torchvision classifier cannot run here).
# Value: whether two runs must agree bit for bit (True) or must differ (False).
RUNNABLE = {
    "pytorch/gpt_lm.py": False,
    "pytorch/diffusion_sampler.py": False,
    "pytorch/ddp_train.py": False,
    "pytorch/mlp_regression.py": False,
    "pytorch/project/train.py": True,
    "pytorch/hf_text_classifier.py": False,
    "pytorch/fixed/hf_text_classifier.py": True,
    "pytorch/fixed/gpt_lm.py": True,
    "pytorch/fixed/diffusion_sampler.py": True,
    "pytorch/fixed/ddp_train.py": True,
    "pytorch/fixed/mlp_regression.py": True,
    "mindspore/image_pipeline.py": False,
    "mindspore/nlp_train.py": False,
    "mindspore/fixed/image_pipeline.py": True,
    "mindspore/fixed/nlp_train.py": True,
}


def rel(path: Path) -> str:
    """The fixture's path under fixtures/, with forward slashes."""
    return path.relative_to(FIXTURES).as_posix()


def snapshot_path(path: Path) -> Path:
    """Where the snapshot of `path` lives."""
    return SNAPSHOTS / (rel(path).replace("/", "__") + ".txt")


def findings(path: Path):
    """All findings of every rule on `path` (linted under its real path, so project-local imports resolve)."""
    result = lint_source(str(path), path.read_bytes(), ALL_RULES)
    assert not result.errors, result.errors
    return result.findings


def render(path: Path) -> str:
    """One line per finding: `line:col CODE name severity`."""
    return "".join(f"{f.line}:{f.column} {f.code} {f.name} {f.severity}\n" for f in findings(path))


@pytest.mark.parametrize("path", ALL_FIXTURES, ids=rel)
def test_snapshot(path):
    rendered = render(path)
    snapshot = snapshot_path(path)
    if os.environ.get("UPDATE_SNAPSHOTS") == "1":
        SNAPSHOTS.mkdir(exist_ok=True)
        snapshot.write_text(rendered, encoding="utf-8")
        return
    assert snapshot.exists(), f"no snapshot for {rel(path)}: run UPDATE_SNAPSHOTS=1 python -m pytest {__file__}"
    expected = snapshot.read_text(encoding="utf-8")
    diff = "".join(difflib.unified_diff(expected.splitlines(True), rendered.splitlines(True),
                                        "snapshot", "now"))
    assert rendered == expected, f"findings on {rel(path)} changed:\n{diff}"


def test_every_snapshot_has_a_fixture():
    known = {snapshot_path(p).name for p in ALL_FIXTURES}
    stale = sorted(p.name for p in SNAPSHOTS.glob("*.txt") if p.name not in known)
    assert not stale, f"snapshots without a fixture (delete them): {stale}"


def test_every_fixed_fixture_has_a_bad_twin():
    for path in FIXED:
        twin = FIXTURES / rel(path).replace("fixed/", "")
        assert twin.exists(), f"{rel(path)} has no original at {twin}"


@pytest.mark.parametrize("path", FIXED, ids=rel)
def test_fixed_fixture_has_no_error_or_warning(path):
    loud = [f"{f.line}:{f.column} {f.code} {f.name} {f.severity}: {f.message}" for f in findings(path)
            if f.severity != "info"]
    assert not loud, "\n".join(loud)


def test_every_rule_fires_on_a_bad_fixture():
    fired = {f.code for path in BAD for f in findings(path)}
    silent = sorted(f"{rule.code} {rule.name}" for rule in ALL_RULES
                    if rule.code not in fired and rule.code not in META_RULES)
    assert not silent, f"rules no bad fixture exercises: {silent}"


def run_twice(script: Path, tmp_path: Path) -> tuple[list[str], list[str]]:
    """Run `script --steps 3` twice at once (cwd: a temp dir); return each run's loss strings."""
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONWARNINGS="ignore", GLOG_v="3")
    runs = []
    for i in range(2):
        cwd = tmp_path / f"run{i}"
        cwd.mkdir()
        runs.append(subprocess.Popen([sys.executable, str(script), "--steps", "3"], cwd=cwd, env=env,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    losses = []
    for proc in runs:
        out, err = proc.communicate(timeout=180)
        assert proc.returncode == 0, f"{script.name} failed ({proc.returncode}):\n{err[-3000:]}"
        steps = STEP_LINE.findall(out)
        assert [int(s) for s, _ in steps] == [0, 1, 2], f"expected step lines 0..2 in:\n{out}"
        for _, loss in steps:
            float(loss)
        losses.append([loss for _, loss in steps])
    return losses[0], losses[1]


@pytest.mark.parametrize("name", sorted(RUNNABLE))
def test_runnable_fixture(name, tmp_path):
    if name.startswith("mindspore/") and importlib.util.find_spec("mindspore") is None:
        pytest.skip("mindspore is not installed in this environment")
    first, second = run_twice(FIXTURES / name, tmp_path)
    if RUNNABLE[name]:
        assert first == second, f"{name} claims to be reproducible but two runs differ: {first} vs {second}"
    else:
        assert first != second, f"{name} should not be reproducible as written, but two runs agree: {first}"


@pytest.mark.parametrize("path", ALL_FIXTURES, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_each_rule_finds_alone_what_it_finds_beside_the_others(path):
    """Rules share per-file analyses (seeding facts, bindings): one that reads a whole-file analysis mid-traversal
    would cache it half-built and change what the others report (nanochat's MSP104 vanished that way)."""
    data = path.read_bytes()
    together = {(f.code, f.line, f.message) for f in lint_source(str(path), data, ALL_RULES).findings
                if f.code not in META_RULES}
    alone = {(f.code, f.line, f.message) for rule in ALL_RULES if rule.code not in META_RULES
             for f in lint_source(str(path), data, [rule]).findings}
    assert together == alone

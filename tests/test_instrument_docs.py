"""docs/transforms/ is generated from the transforms (a stale page fails), and a sample of real code
(the installed torch package) round-trips: instrument in memory, parse, second run no-op, undo exact."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from msprobe_rewriter.instrument import docs

ROOT = Path(__file__).resolve().parent.parent


def test_transform_pages_are_up_to_date():
    stale = docs.stale_pages(ROOT / "docs" / "transforms")
    assert not stale, f"stale: {stale}; run `python -m msprobe_rewriter.instrument.docs docs`"


def _roundtrip_module():
    spec = importlib.util.spec_from_file_location("instrument_roundtrip", ROOT / "benchmarks" / "instrument_roundtrip.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _torch_sample(count: int = 40) -> list[Path]:
    torch_dir = Path(importlib.util.find_spec("torch").origin).parent
    files = sorted(torch_dir.rglob("*.py"))
    return files[:: max(1, len(files) // count)][:count]


@pytest.mark.parametrize("path", _torch_sample(), ids=lambda p: p.name)
def test_torch_sample_round_trips(path):
    roundtrip = _roundtrip_module()
    outcome = roundtrip.check_file(path, roundtrip.Options(grad_probe=True))
    assert not outcome.startswith("FAIL"), outcome

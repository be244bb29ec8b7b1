"""unseeded-generator (MSP106) across the files of a project: a generator made as a fallback for callers that
pass none."""

from __future__ import annotations

from pathlib import Path

import pytest
from project_helpers import lint_findings, write


@pytest.mark.parametrize(("call", "severity"), [
    ("sample_dataset(data, 3, np.random.RandomState(42))", "info"),  # every caller passes a seeded state
    ("sample_dataset(data, 3, random_state=np.random.RandomState(data.seed))", "info"),
    ("sample_dataset(data, 3)", "warning"),
    ("sample_dataset(data, 3, None)", "warning"),
    ("sample_dataset(data, 3, state)", "warning"),  # `load`'s own parameter, which nothing is known to pass
])
def test_unseeded_generator_as_a_fallback_every_caller_replaces(tmp_path: Path, call: str, severity: str):
    utils = ("import numpy as np\n\n\ndef sample_dataset(dataset, n, random_state=None):\n"
             "    if random_state is None:\n        random_state = np.random.RandomState()\n"
             "    return dataset.select(random_state.permutation(len(dataset))[:n])\n")
    loader = f"import numpy as np\n\nfrom data.utils import sample_dataset\n\n\ndef load(data, state):\n    return {call}\n"
    write(tmp_path, {"pyproject.toml": "", "data/__init__.py": "", "data/utils.py": utils, "loader.py": loader})
    found = lint_findings(tmp_path / "data" / "utils.py", "unseeded-generator")
    assert [(f.line, f.severity) for f in found] == [(6, severity)]


"""Tests that run a C extension's path and its fallback: one helper for their fixtures."""

from __future__ import annotations

import pytest


def extension_or_fallback(request, monkeypatch, module, attribute: str, fallback: str) -> str:
    """For a fixture parametrized with an extension's case and `fallback`: the fallback case sets
    `module.attribute` (the imported extension) to None; the other skips when it was not built."""
    if request.param == fallback:
        monkeypatch.setattr(module, attribute, None)
    elif getattr(module, attribute) is None:
        pytest.skip(f"the {attribute} extension was not built (no C compiler)")
    return request.param

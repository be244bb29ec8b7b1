"""A crash in C code (a fatal signal) ends pytest with no report but faulthandler's tracebacks, whose start
(the crashing test's frames) scrolls away above the pytest frames of every thread. So they go to
build/pytest-crash.log, after a line naming each test as it starts; `make test` prints the crash's
start from there, last, where the tail of a CI log shows it.
"""

from __future__ import annotations

import faulthandler
from pathlib import Path

import pytest

CRASH_LOG = Path(__file__).resolve().parent.parent / "build" / "pytest-crash.log"
_log = None


@pytest.hookimpl(trylast=True)  # after pytest's faulthandler plugin, which enables it on stderr
def pytest_configure(config):
    global _log
    CRASH_LOG.parent.mkdir(exist_ok=True)
    _log = CRASH_LOG.open("w", encoding="utf-8")
    faulthandler.enable(_log, all_threads=True)


def pytest_runtest_logstart(nodeid):
    _log.write(f"running {nodeid}\n")
    _log.flush()


@pytest.hookimpl(tryfirst=True)  # before pytest's plugin, which restores the handler it found
def pytest_unconfigure(config):
    faulthandler.disable()
    _log.close()

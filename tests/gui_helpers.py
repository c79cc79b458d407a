"""Helpers for the tests that drive the real window (pytest-qt); the window fixture is
in ``conftest.py``."""

from __future__ import annotations

RUN_TIMEOUT = 30_000


def run_and_wait(qtbot, win):
    """Start a run and wait until its result (and the worker's end) arrived."""
    with qtbot.waitSignals([win.runner.signals.returned, win.runner.signals.finished],
                           timeout=RUN_TIMEOUT):
        assert win.run()


def run_and_fail(qtbot, win):
    """Start a run whose settings are wrong: the worker's check reports the error."""
    with qtbot.waitSignals([win.runner.signals.errored, win.runner.signals.finished],
                           timeout=RUN_TIMEOUT):
        assert win.run()  # prepared on the worker: the window never blocks

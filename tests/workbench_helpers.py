"""Helpers for the workbench tests (``test_workbench*.py``): a second window, waiting for
file tasks, and comparing a written table with a result."""

from __future__ import annotations

import numpy as np
import pandas as pd

from core.io import read_table
from tests.gui_helpers import RUN_TIMEOUT

__all__ = ["IO_TIMEOUT", "guard_dialogs", "new_window", "wait_for_io", "assert_released_qis",
           "run_on_sample"]

IO_TIMEOUT = 30_000


def guard_dialogs(win) -> None:
    """Replace the window's remaining question dialogs so that none can open modally:
    each question is recorded in ``win.questions`` and answered "no"."""
    win.questions = []
    win.confirm_export = lambda warnings: win.questions.append(("export", warnings)) and False
    win.ask_merge_strata = lambda message, stratum, nearest: win.questions.append(
        ("merge", stratum)) and False
    win.choose_sheet = lambda file_name, names: win.questions.append(("sheet", names)) and None


def new_window(qtbot):
    """Another main window, as the ``window`` fixture makes it (errors collected)."""
    from microagg_desktop.main_window import MainWindow

    win = MainWindow(store={})
    win.errors = []
    win.show_error = win.errors.append
    win.closing_questions = []
    win.ask_to_close = lambda reasons: win.closing_questions.append(reasons) or "discard"
    win.ask_to_replace = lambda reasons: win.closing_questions.append(reasons) or "discard"
    guard_dialogs(win)
    qtbot.addWidget(win)
    win.show()
    return win


def wait_for_io(qtbot, win, start) -> None:
    """Call ``start()`` (a ``wait=False`` file task) and wait for ``io_runner`` to finish."""
    with qtbot.waitSignal(win.io_runner.signals.finished, timeout=IO_TIMEOUT):
        assert start()
    qtbot.waitUntil(lambda: not win.io_runner.running, timeout=IO_TIMEOUT)


def assert_released_qis(path, result) -> pd.DataFrame:
    """The table written to ``path`` has the result's masked quasi-identifiers."""
    written = read_table(path)
    assert len(written) == len(result.masked)
    for column in result.roles.quasi_identifiers:
        np.testing.assert_allclose(written[column].to_numpy(dtype=float),
                                   result.masked[column].to_numpy(dtype=float), rtol=1e-9)
    return written


def run_on_sample(qtbot, win, k: int = 3):
    """Open the sample, run MDAV with ``k``, return the result (the window works)."""
    assert win.open_sample()
    win.method_panel.set_method("mdav")
    win.method_panel.set_parameter("k", k)
    with qtbot.waitSignals([win.runner.signals.returned, win.runner.signals.finished],
                           timeout=RUN_TIMEOUT):
        assert win.run()
    assert win.result is not None and win.result.passed
    return win.result

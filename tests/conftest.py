"""Shared fixtures. The benchmark data sets live in ``../shared/data`` beside the repository."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pandas as pd
import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
# Qt's settings (recent files, remembered roles) go to a test location, never the user's.
os.environ["XDG_CONFIG_HOME"] = tempfile.mkdtemp(prefix="microagg-test-config-")

REPO = Path(__file__).resolve().parent.parent
DATA_DIR = Path(os.environ.get("MICROAGG_SHARED_DATA", REPO.parent / "shared" / "data"))

CENSUS_COLUMNS = ("AFNLWGT", "AGI", "EMCONTRB", "FEDTAX", "PTOTVAL", "STATETAX", "TAXINC",
                  "POTHVAL", "INTVAL", "PEARNVAL", "FICA", "WSALVAL", "ERNVAL")


def cancelled_at_step(step: int):
    """A TaskState that cancels itself at its ``step``-th progress report, and the
    ``(fraction, message)`` reports it received."""
    from core import TaskState

    seen = []

    def report(fraction, message):
        seen.append((fraction, message))
        if len(seen) == step:
            state.cancel()

    state = TaskState(report)
    return state, seen


def shared_data(name: str) -> Path:
    path = DATA_DIR / name
    if not path.exists():
        pytest.fail(f"benchmark data {path} is missing; set MICROAGG_SHARED_DATA")
    return path


@pytest.fixture(scope="session")
def census() -> pd.DataFrame:
    return pd.read_csv(shared_data("census.csv"))


@pytest.fixture(scope="session")
def sample_path() -> Path:
    return REPO / "resources" / "sample_survey.csv"


@pytest.fixture(scope="session")
def compiled_engine() -> None:
    """The engine's kernels compiled, as the application does at its first start
    (:mod:`microagg_desktop.engine_warmup`): on a fresh machine the first run would
    otherwise spend half a minute compiling, and a window test's wait would time that
    rather than the window. Once the kernels are cached this takes about a second."""
    from core.pipeline.warmup import warm_up

    warm_up(report=None)  # nothing to do when the compiled path is off


@pytest.fixture
def window(qtbot, compiled_engine):
    """The main window, shown offscreen; errors are collected in ``window.errors``."""
    from microagg_desktop.main_window import MainWindow

    win = MainWindow(store={})
    win.errors = []
    win.show_error = win.errors.append  # no modal message boxes in tests
    win.closing_questions = []
    win.ask_to_close = lambda reasons: win.closing_questions.append(reasons) or "discard"
    win.ask_to_replace = lambda reasons: win.closing_questions.append(reasons) or "discard"
    qtbot.addWidget(win)
    win.show()
    yield win
    win.runner.cancel()
    win.runner.wait(5000)

"""Shared fixtures. The benchmark data sets live in ``../shared/data`` beside the repository."""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd
import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

REPO = Path(__file__).resolve().parent.parent
DATA_DIR = Path(os.environ.get("MICROAGG_SHARED_DATA", REPO.parent / "shared" / "data"))

CENSUS_COLUMNS = ("AFNLWGT", "AGI", "EMCONTRB", "FEDTAX", "PTOTVAL", "STATETAX", "TAXINC",
                  "POTHVAL", "INTVAL", "PEARNVAL", "FICA", "WSALVAL", "ERNVAL")


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


@pytest.fixture
def window(qtbot):
    """The main window, shown offscreen; errors are collected in ``window.errors``."""
    from microagg_desktop.main_window import MainWindow

    win = MainWindow()
    win.errors = []
    win.show_error = win.errors.append  # no modal message boxes in tests
    qtbot.addWidget(win)
    win.show()
    yield win
    win.runner.cancel()
    win.runner.wait(5000)

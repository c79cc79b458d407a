"""The release workbench window end to end (pytest-qt, offscreen): one method of each
family from run to export and report, the history and comparison, the stale banner, the
sweep, cancelling, every error path, missing values, closing, Help and the layout."""

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from core import Role  # noqa: E402
from core.project import file_sha256  # noqa: E402
from microagg_desktop.history import method_short_name  # noqa: E402
from tests.gui_helpers import RUN_TIMEOUT, run_and_fail, run_and_wait  # noqa: E402
from tests.workbench_helpers import assert_released_qis, run_on_sample  # noqa: E402

pytestmark = pytest.mark.gui

QIS = ("age", "years_education", "income", "hours_worked", "household_size")

# One method of each family, with settings that suit the 600-record sample.
FAMILIES = {
    "k-anonymity": ("mdav", {"k": 5}, None, {}),
    "t-closeness": ("tc-tfirst", {"k": 4, "t": 0.2}, None, {}),
    "buckets": ("tc-bucket", {"k": 5, "t": 1.5}, None, {"diagnosis": Role.NON_CONFIDENTIAL}),
    # health_spending lies in [0, 3629.86] on the sample, inside the bounds given.
    "differential privacy": ("mdav", {"k": 5}, (1.0, "health_spending=0:5000", 7),
                             {"diagnosis": Role.NON_CONFIDENTIAL}),
    "no record-level guarantee": ("mic1d", {"k": 6}, None, {}),
}


def _choose(window, method, parameters, noise=None, roles=None):
    for column, role in (roles or {}).items():
        window.role_editor.set_role(column, role)
    window.method_panel.set_method(method)
    for name, value in parameters.items():
        window.method_panel.set_parameter(name, value)
    if noise is not None:
        window.method_panel.set_noise(*noise)


@pytest.mark.parametrize("family", list(FAMILIES))
def test_one_method_of_each_family_from_run_to_report(qtbot, window, tmp_path, family):
    method, parameters, noise, roles = FAMILIES[family]
    asked = []
    window.confirm_export = lambda questions: asked.append(questions) or True
    assert window.open_sample()
    _choose(window, method, parameters, noise, roles)

    run_and_wait(qtbot, window)

    assert window.errors == []
    assert len(window.history) == 1
    record = window.history.get(1)
    assert record.label.startswith(f"#1 {method_short_name(method)}")
    assert f"k={parameters['k']}" in record.label
    result = record.result
    assert window.result is result and window.shown_record is record
    assert window.history_panel.model.rowCount() == 1
    # A method without a record-level guarantee is not "passed" (its classes are not
    # k-anonymous), but its check passes: there was nothing to guarantee.
    assert result.passed or not result.guarantee.record_level
    assert result.check.passed and window.export_action.isEnabled()
    assert result.parameters["k"] == parameters["k"]
    if noise is not None:
        assert result.noise is not None and result.noise.seed == noise[2]
    assert not record.exported

    for name in ("released.csv", "released.xlsx"):
        assert window.export_to(tmp_path / name)
        assert (tmp_path / name).is_file()
        written = assert_released_qis(tmp_path / name, result)
        assert "person_id" not in written.columns  # the identifier is never released
    assert window.history.get(1).exported
    # Exporting asks only when the release has warnings, and then lists them all.
    assert asked == ([[w.message for w in result.warnings]] * 2 if result.warnings else [])

    sha = file_sha256(window.data_path)
    assert window.export_report_to(tmp_path / "report.html")
    assert sha in (tmp_path / "report.html").read_text(encoding="utf-8")
    assert window.export_report_to(tmp_path / "report.pdf")
    assert (tmp_path / "report.pdf").read_bytes()[:4] == b"%PDF"
    assert window.errors == []

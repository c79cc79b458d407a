"""The release workbench window end to end (pytest-qt, offscreen): one method of each
family from run to export and report, the history and comparison, the stale banner, the
sweep, cancelling, every error path, missing values, closing, Help and the layout."""

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from core import Role  # noqa: E402
from core.data.roles import Level  # noqa: E402
from core.project import file_sha256  # noqa: E402
from core.pipeline.stored import same_result  # noqa: E402
from microagg_desktop.history import method_short_name  # noqa: E402
from tests.gui_helpers import RUN_TIMEOUT, run_and_fail, run_and_wait  # noqa: E402
from tests.workbench_helpers import (assert_released_qis, guard_dialogs,  # noqa: E402
                                     run_on_sample, wait_for_io)

pytestmark = pytest.mark.gui


@pytest.fixture(autouse=True)
def _no_modal_dialogs(window):
    """No question may open a modal box: each is recorded and answered "no"."""
    guard_dialogs(window)

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
    assert same_result(window.result, result) and window.shown_record is record
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


def _run_k(qtbot, window, k):
    window.method_panel.set_parameter("k", k)
    run_and_wait(qtbot, window)
    return window.shown_record


def test_history_compare_go_back_and_remove(qtbot, window):
    assert window.open_sample()
    window.method_panel.set_method("mdav")
    records = [_run_k(qtbot, window, k) for k in (3, 4, 6)]
    assert [r.number for r in window.history.records] == [1, 2, 3]
    assert [r.result.parameters["k"] for r in records] == [3, 4, 6]
    assert window.history_panel.model.rowCount() == 3

    window.compare_runs([1, 2, 3])
    frame = window.compare_view.frame
    assert list(frame.columns) == [r.label for r in records]
    il = frame.loc["Information loss IL (%)"]
    for record in records:
        assert il[record.label] == record.result.metrics.il
    assert window.tabs.currentWidget() is window.history_page

    # Change a role and k, then go back to run 1: both come back, and it is shown.
    window.role_editor.set_role("household_size", Role.NON_CONFIDENTIAL)
    window.method_panel.set_parameter("k", 9)
    assert window.results_panel.is_stale
    window.restore_run(1)
    assert window.method_panel.parameters()["k"] == 3
    assert window.role_editor.roles() == records[0].request["roles"]
    assert "household_size" in window.role_editor.roles().quasi_identifiers
    assert same_result(window.result, records[0].result)
    assert not window.results_panel.is_stale

    # Removing the shown run through the history panel clears the Results tab.
    window.history_panel.select_numbers([1])
    assert window.history_panel.remove_button.isEnabled()
    window.history_panel.remove_button.click()
    assert [r.number for r in window.history.records] == [2, 3]
    assert window.result is None and window.shown_record is None
    assert not window.export_action.isEnabled()
    assert window.errors == []


def test_stale_banner_follows_the_settings_and_export_asks(qtbot, window, tmp_path):
    assert window.open_sample()
    window.method_panel.set_method("mdav")
    _run_k(qtbot, window, 5)
    assert not window.results_panel.is_stale and window.stale_text == ""

    window.method_panel.set_parameter("k", 6)
    assert window.results_panel.is_stale
    assert "k: 5 → 6" in window.stale_text
    assert window.results_panel.stale_banner.isVisibleTo(window.results_panel)
    window.method_panel.set_parameter("k", 5)
    assert not window.results_panel.is_stale and window.stale_text == ""

    window.role_editor.set_role("household_size", Role.NON_CONFIDENTIAL)
    assert window.results_panel.is_stale and "household_size" in window.stale_text

    asked = []
    window.confirm_export = lambda questions: asked.append(questions) or False
    target = tmp_path / "stale.csv"
    assert not window.export_to(target) and not target.exists()
    assert asked and "no longer match the settings" in asked[0][0]
    assert "household_size" in asked[0][0]
    assert not window.history.get(1).exported
    window.confirm_export = lambda questions: True
    assert window.export_to(target) and target.exists()
    assert window.history.get(1).exported

    # The report asks the same (it said nothing before).
    asked.clear()
    window.confirm_export = lambda questions: asked.append(questions) or False
    report = tmp_path / "stale.html"
    assert not window.export_report_to(report) and not report.exists()
    assert "no longer match the settings" in asked[0][0] and "household_size" in asked[0][0]
    window.confirm_export = lambda questions: True
    assert window.export_report_to(report) and report.exists()
    assert "<th>Run</th><td>#1 MDAV k=5 of this session</td>" in \
        report.read_text(encoding="utf-8").replace("\n", "")


def test_sweep_over_k_and_add_a_point_to_the_history(qtbot, window):
    assert window.open_sample()
    window.method_panel.set_method("mdav")
    panel = window.sweep_panel
    assert panel.method == "mdav"
    panel.set_range(2, 6, step=1)
    parameter, values = panel.parameter_box.currentData(), panel.sweep_values()
    assert parameter == "k" and values == [2, 3, 4, 5, 6]
    with qtbot.waitSignals([window.runner.signals.returned, window.runner.signals.finished],
                           timeout=RUN_TIMEOUT):
        assert window.start_sweep(parameter, values)
    assert window.errors == []
    assert [p.value for p in panel.points] == values
    assert all(p.result is not None and p.result.passed for p in panel.points)
    il = [p.result.metrics.il for p in panel.points]
    assert all(a <= b for a, b in zip(il, il[1:]))  # more per group, more loss
    assert len(window.history) == 0  # a sweep adds nothing by itself

    panel.choose(3)
    assert panel.chosen_point().value == 5 and panel.add_button.isEnabled()
    with qtbot.waitSignal(panel.add_to_history, timeout=1000):
        panel.add_button.click()
    assert len(window.history) == 1
    record = window.history.get(1)
    assert record.request["k"] == 5 and record.result.parameters["k"] == 5
    assert same_result(record.result, panel.points[3].result)
    assert same_result(window.result, record.result)
    assert "k=5" in record.label

    # Changing a role leaves the points as they were run, and the tab says so.
    assert not panel.stale_label.isVisibleTo(panel)
    window.role_editor.set_role("income", Role.NON_CONFIDENTIAL)
    assert panel.stale_label.isVisibleTo(panel)
    assert "These points were run with other settings: 'income'" in panel.stale_label.text()
    window.method_panel.set_parameter("k", 9)  # the swept parameter is not a change
    assert "k:" not in panel.stale_label.text()
    window.role_editor.set_role("income", Role.QUASI_IDENTIFIER)
    assert not panel.stale_label.isVisibleTo(panel)


def test_the_sweep_says_how_long_its_runs_will_take(qtbot, window):
    """The sweep's preview adds up the estimate of each value's run, from the Method
    tab's settings and the table, and follows the roles and settings."""
    from microagg_desktop.estimate import estimate_seconds, estimate_text

    rng = np.random.default_rng(4)
    big = pd.DataFrame(rng.normal(size=(200_000, 6)), columns=[f"x{i}" for i in range(6)])
    window.set_table(big, "synthetic.csv",
                     roles={c: Role.QUASI_IDENTIFIER for c in big.columns})
    window.method_panel.set_method("mdav")
    panel = window.sweep_panel
    panel.set_range(2, 10, step=1)

    def expected(d, refine="none"):
        return estimate_text(sum(estimate_seconds("mdav", 200_000, d, k=k, refine=refine)
                                 for k in range(2, 11)))

    assert expected(6).startswith("Expected time") and expected(6) != expected(5)
    assert panel.preview.text().endswith(expected(6))
    window.role_editor.set_role("x5", Role.NON_CONFIDENTIAL)
    assert panel.preview.text().endswith(expected(5))
    window.method_panel.set_parameter("refine", "igd")
    assert panel.preview.text().endswith(expected(5, "igd")) and "minutes" in \
        panel.preview.text()
    assert window.open_sample()  # 600 records: runs too short to be worth a word
    panel.set_range(2, 3, step=1)
    assert panel.preview.text() == "2 run(s): 2, 3"


def test_cancel_a_large_run_leaves_no_run_and_the_window_usable(qtbot, window):
    rng = np.random.default_rng(3)
    big = pd.DataFrame(rng.normal(size=(30_000, 5)), columns=[f"x{i}" for i in range(5)])
    window.set_table(big, "big", roles={c: Role.QUASI_IDENTIFIER for c in big})
    window.method_panel.set_method("mdav")
    window.method_panel.set_parameter("k", 3)
    assert window.run()
    qtbot.waitUntil(lambda: window.progress.value() > 0, timeout=RUN_TIMEOUT)
    assert window.runner.running and window.cancel_action.isEnabled()
    with qtbot.waitSignals([window.runner.signals.cancelled, window.runner.signals.finished],
                           timeout=RUN_TIMEOUT):
        window.cancel()
    assert not window.runner.running
    assert len(window.history) == 0 and window.result is None
    assert window.status_label.text() == "Run cancelled."
    assert window.run_action.isEnabled() and not window.cancel_action.isEnabled()
    assert window.errors == []

    result = run_on_sample(qtbot, window)
    assert result.metrics.n_records == 600 and len(window.history) == 1


def test_every_error_path_reaches_show_error_and_the_window_stays_usable(
        qtbot, window, tmp_path, sample_path):
    # Run with no table.
    assert not window.run()
    assert "Open a table first" in window.errors[-1]

    # A missing file, named.
    missing = tmp_path / "nowhere.csv"
    assert not window.open_file(missing)
    assert "nowhere.csv" in window.errors[-1]

    # A corrupt workbook, named.
    corrupt = tmp_path / "broken.xlsx"
    corrupt.write_bytes(b"this is not a zip archive at all")
    count = len(window.errors)
    assert not window.open_file(corrupt)
    assert len(window.errors) == count + 1 and "broken.xlsx" in window.errors[-1]
    assert window.table is None

    # A project file that is not JSON.
    bad_project = tmp_path / "bad.microagg"
    bad_project.write_text("this is { not json", encoding="utf-8")
    count = len(window.errors)
    assert not window.open_project(bad_project)
    assert len(window.errors) == count + 1 and "bad.microagg" in window.errors[-1]

    # No quasi-identifier: the worker's check says so.
    assert window.open_sample()
    for qi in QIS:
        window.role_editor.set_role(qi, Role.NON_CONFIDENTIAL)
    run_and_fail(qtbot, window)
    assert "quasi-identifier" in window.errors[-1].lower()
    # An invalid parameter (k above the number of records), named with its value.
    for qi in QIS:
        window.role_editor.set_role(qi, Role.QUASI_IDENTIFIER)
    window.method_panel.set_method("mdav")
    window.method_panel.set_parameter("k", 700)
    run_and_fail(qtbot, window)
    assert "k = 700" in window.errors[-1]
    assert window.result is None and len(window.history) == 0

    # A stratum smaller than k: the window offers to merge; declining runs nothing.
    table = pd.read_csv(sample_path)
    table.loc[:2, "region"] = "Island"
    small = tmp_path / "strata.csv"
    table.to_csv(small, index=False)
    assert window.open_file(small)
    for qi in ("age", "income"):
        window.role_editor.set_role(qi, Role.QUASI_IDENTIFIER)
    window.role_editor.set_role("region", "stratum")
    window.method_panel.set_parameter("k", 5)
    offers = []
    window.ask_merge_strata = lambda message, stratum, nearest: offers.append(
        (message, stratum)) or False
    count = len(window.errors)
    with qtbot.waitSignal(window.runner.signals.finished, timeout=RUN_TIMEOUT):
        assert window.run()
    assert offers and offers[0][1] == "Island"
    assert "not run" in window.status_label.text().lower()
    assert len(window.errors) == count and len(window.history) == 0

    run_on_sample(qtbot, window)


@pytest.fixture
def with_missing(sample_path):
    table = pd.read_csv(sample_path)
    rows = [4, 17, 250, 599]
    table.loc[rows, "income"] = np.nan
    table.loc[17, "age"] = np.nan  # two missing values in one record count once
    return table, len(rows)


def test_missing_values_stop_or_are_excluded(qtbot, window, with_missing):
    from microagg_desktop.state import SAMPLE_ROLES

    table, n_missing = with_missing
    before = table.copy()
    window.set_table(table, "holes.csv", roles=SAMPLE_ROLES)
    window.method_panel.set_method("mdav")
    window.method_panel.set_parameter("k", 4)
    window.data_page.set_missing("stop")
    run_and_fail(qtbot, window)
    assert "income" in window.errors[-1] or "age" in window.errors[-1]
    assert len(window.history) == 0

    count = len(window.errors)
    window.data_page.set_missing("exclude")
    run_and_wait(qtbot, window)
    assert len(window.errors) == count
    result = window.result
    assert result.passed
    assert int(result.masked["unmasked_missing"].sum()) == n_missing
    assert any("unmasked" in w.message.lower() or "missing" in w.message.lower()
               for w in result.warnings)
    assert window.history.get(1).request["missing"] == "exclude"
    pd.testing.assert_frame_equal(table, before)  # the input is never modified


def test_closing_asks_about_unsaved_runs_until_saved(qtbot, window, tmp_path):
    run_on_sample(qtbot, window)
    window.closing_questions.clear()
    asked = []
    window.ask_to_close = lambda reasons: asked.append(reasons) or "cancel"
    window.close()
    assert asked and "#1" in asked[0][0]
    assert window.isVisible()

    assert window.save_project_to(tmp_path / "kept.microagg")
    assert window.unsaved_work() == []
    asked.clear()
    window.close()
    assert asked == [] and not window.isVisible()


def test_help_dialogs_build_offline(qtbot, window, monkeypatch):
    import socket

    from microagg_desktop.help_dialogs import AboutDialog, GuideDialog

    def no_network(*args, **kwargs):
        raise AssertionError("the Help windows must not use the network")

    monkeypatch.setattr(socket, "socket", no_network)
    monkeypatch.setattr(socket, "create_connection", no_network)
    about = AboutDialog(window)
    qtbot.addWidget(about)
    names = [about.components.item(row, 0).text().lower().replace("_", "-")
             for row in range(about.components.rowCount())]
    for expected in ("numpy", "pandas", "microagg-desktop"):
        assert expected in names, names
    # Qt for Python is installed as PySide6 or as its Essentials/Addons wheels.
    assert any(name.startswith("pyside6") for name in names), names
    assert all(about.components.item(row, 1).text() for row in range(len(names)))
    guide = GuideDialog(window)
    qtbot.addWidget(guide)
    assert "k-anonymity" in guide.browser.toPlainText()


@pytest.mark.parametrize("size", [(1024, 640), (1366, 768)])
def test_the_window_keeps_the_size_it_is_given(qtbot, window, size):
    from PySide6.QtCore import QSize
    from PySide6.QtWidgets import QApplication

    run_on_sample(qtbot, window)
    window.compare_runs([1])  # one run: nothing to compare, the tab still shows
    window.resize(*size)
    QApplication.processEvents()
    for index in range(window.tabs.count()):
        window.tabs.setCurrentIndex(index)
        for _ in range(3):
            QApplication.processEvents()
        assert window.size() == QSize(*size), window.tabs.tabText(index)


def test_going_back_to_a_run_without_noise_turns_the_noise_off(qtbot, window):
    assert window.open_sample()
    window.role_editor.set_role("diagnosis", Role.NON_CONFIDENTIAL)
    window.method_panel.set_method("mdav")
    _run_k(qtbot, window, 4)
    window.method_panel.set_noise(0.5, "health_spending=0:5000", seed=11)
    _run_k(qtbot, window, 4)
    assert window.result.noise is not None

    window.restore_run(1)
    assert window.method_panel.noise_options() == {}
    assert not window.results_panel.is_stale, window.stale_text


def _click_run(qtbot, window, row, modifier):
    from PySide6.QtCore import Qt

    view = window.history_panel.view
    rect = view.visualRect(window.history_panel.model.index(row, 1))
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, modifier, rect.center())


def test_ctrl_click_selects_two_runs_to_compare(qtbot, window):
    from PySide6.QtCore import Qt

    assert window.open_sample()
    window.method_panel.set_method("mdav")
    for k in (3, 4, 5):
        _run_k(qtbot, window, k)
    window.tabs.setCurrentWidget(window.history_page)
    panel = window.history_panel
    _click_run(qtbot, window, 0, Qt.KeyboardModifier.NoModifier)
    assert panel.selected_numbers() == [1] and window.shown_record.number == 1
    _click_run(qtbot, window, 1, Qt.KeyboardModifier.ControlModifier)
    assert panel.selected_numbers() == [1, 2]
    assert panel.compare_button.isEnabled()
    panel.select_numbers([3, 1])  # the panel's own method, the shown run not among them
    assert panel.selected_numbers() == [1, 3]


def test_going_back_restores_a_confidential_columns_distance(qtbot, window):
    """Run 1 compares household_size (a confidential column of numbers) by the equal
    distance, run 2 by the ordered one; going back to run 1 brings the equal distance
    back, so a re-run gives run 1's figures."""
    assert window.open_sample()
    editor = window.role_editor
    editor.set_role("household_size", Role.CONFIDENTIAL)
    editor.set_level("household_size", "nominal")
    window.method_panel.set_method("tc-merge")
    window.method_panel.set_parameter("k", 5)
    window.method_panel.set_parameter("t", 0.5)
    run_and_wait(qtbot, window)
    first = window.shown_record
    assert first.result.roles.confidential_kinds == {"household_size": "nominal"}
    editor.set_level("household_size", "numeric")
    assert ("'household_size' is now compared by the default distance (was nominal)"
            in window.stale_text)
    run_and_wait(qtbot, window)
    assert window.result.roles.confidential_kinds is None

    window.restore_run(first.number)
    assert editor.level("household_size") is Level.NOMINAL
    assert editor.roles() == first.request["roles"]
    assert not window.results_panel.is_stale, window.stale_text
    run_and_wait(qtbot, window)
    assert window.result.measures.max_emd == first.result.measures.max_emd


def test_opening_another_table_asks_before_runs_are_lost(qtbot, window, tmp_path):
    assert window.open_sample()
    window.method_panel.set_method("mdav")
    _run_k(qtbot, window, 4)
    _run_k(qtbot, window, 5)
    reasons = window.unsaved_work()
    assert reasons and "#1, #2" in reasons[0]
    asked = []
    window.ask_to_replace = lambda why: asked.append(why) or "cancel"
    other = tmp_path / "other.csv"
    pd.DataFrame({"a": np.arange(20.0), "b": np.arange(20.0) % 7}).to_csv(other, index=False)
    assert not window.open_file(other)
    assert asked == [reasons] and len(window.history) == 2  # nothing replaced
    assert not window.open_sample() and len(window.history) == 2
    window.ask_to_replace = lambda why: asked.append(why) or "discard"
    assert window.open_file(other)
    assert len(window.history) == 0 and list(window.table.columns) == ["a", "b"]
    assert window.errors == []


def test_opening_a_table_while_a_file_is_written_is_refused(qtbot, window, tmp_path):
    """Opening cancelled the export or report being written, without a word."""
    assert window.open_sample()
    window.method_panel.set_method("mdav")
    _run_k(qtbot, window, 4)
    report = tmp_path / "report.html"

    def start():
        window.export_report_to(report, wait=False)
        assert window.io_pending
        assert not window.open_sample()  # refused while the report is written
        return True

    wait_for_io(qtbot, window, start)
    assert window.errors and "A file is being written" in window.errors[-1]
    qtbot.waitUntil(lambda: not window.io_pending, timeout=30_000)
    assert report.is_file() and window.source == "sample_survey.csv"

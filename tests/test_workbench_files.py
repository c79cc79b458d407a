"""The workbench window's files, end to end (pytest-qt, offscreen): projects that reopen
by recomputing every run, ``microagg rerun`` and *Copy as command* reproducing the
window's release, recent files, drag and drop, and the file tasks' ``wait=False`` paths
(waited on through ``io_runner``)."""

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import shlex  # noqa: E402
import shutil  # noqa: E402
from pathlib import Path  # noqa: E402

import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from PySide6.QtCore import QMimeData, QPoint, QPointF, Qt, QUrl  # noqa: E402
from PySide6.QtGui import QDragEnterEvent, QDropEvent, QGuiApplication  # noqa: E402

from core import Role  # noqa: E402
from core.cli.main import main as cli_main  # noqa: E402
from core.pipeline.stored import same_result  # noqa: E402
from core.project import file_sha256  # noqa: E402
from microagg_desktop.state import SAMPLE_ROLES  # noqa: E402
from tests.gui_helpers import RUN_TIMEOUT, run_and_wait  # noqa: E402
from tests.workbench_helpers import (IO_TIMEOUT, assert_released_qis,  # noqa: E402
                                     guard_dialogs, new_window, run_on_sample,
                                     wait_for_io)

pytestmark = pytest.mark.gui


@pytest.fixture(autouse=True)
def _no_modal_dialogs(window):
    """No question may open a modal box: each is recorded and answered "no"."""
    guard_dialogs(window)


@pytest.fixture
def survey(tmp_path, sample_path) -> Path:
    """A copy of the sample in a folder of its own (the test may change or delete it)."""
    folder = tmp_path / "data"
    folder.mkdir()
    path = folder / "survey.csv"
    shutil.copyfile(sample_path, path)
    return path


def _open_with_sample_roles(window, path) -> None:
    assert window.open_file(path)
    for column, role in SAMPLE_ROLES.items():
        window.role_editor.set_role(column, role)


def _wait_for_restore(qtbot, window, count: int) -> None:
    qtbot.waitUntil(lambda: len(window.history) == count and not window.runner.running,
                    timeout=RUN_TIMEOUT)


def _three_runs(qtbot, window) -> None:
    """Run 1 (removed later), run 2 MDAV k=4, run 3 MDAV k=5 with seeded Laplace noise."""
    window.method_panel.set_method("mdav")
    for k in (3, 4):
        window.method_panel.set_parameter("k", k)
        run_and_wait(qtbot, window)
    window.role_editor.set_role("diagnosis", Role.NON_CONFIDENTIAL)
    window.method_panel.set_parameter("k", 5)
    window.method_panel.set_noise(0.5, "health_spending=0:5000", seed=11)
    run_and_wait(qtbot, window)
    window.show_run(1)  # see test_workbench.py: selecting another run first loses it
    window.history_panel.select_numbers([1])
    window.history_panel.remove_button.click()
    assert [r.number for r in window.history.records] == [2, 3]


def test_project_round_trip_recomputes_the_same_runs(qtbot, window, survey, tmp_path):
    _open_with_sample_roles(window, survey)
    _three_runs(qtbot, window)
    window.show_run(2)
    project = tmp_path / "study.microagg"
    assert window.save_project_to(project)
    assert window.project_path == project.resolve() and not window.project_dirty

    other = new_window(qtbot)
    assert other.open_project(project)
    _wait_for_restore(qtbot, other, 2)
    assert other.errors == []
    assert other.project_path == project.resolve() and not other.project_dirty
    assert other.data_path == survey.resolve()
    assert [r.number for r in other.history.records] == [2, 3]
    for number in (2, 3):
        before, after = window.history.get(number), other.history.get(number)
        assert after.label == before.label
        pd.testing.assert_frame_equal(after.result.masked, before.result.masked)
        assert after.measures["il"] == before.measures["il"]
    assert other.shown_record.number == 2  # the run selected when it was saved
    assert same_result(other.result, other.history.get(2).result)
    assert other.role_editor.roles() == window.role_editor.roles()
    assert "study.microagg" in other.windowTitle()

    # microagg rerun writes what the window exports for the same run.
    exported, rerun = tmp_path / "window_run2.csv", tmp_path / "rerun_run2.csv"
    window.show_run(2)  # the settings are run 3's: Export asks first (answered yes)
    window.confirm_export = lambda questions: True
    assert window.export_to(exported)
    assert cli_main(["rerun", str(project), "--run", "2", "-o", str(rerun)]) == 0
    assert rerun.read_bytes() == exported.read_bytes()
    assert_released_qis(rerun, window.history.get(2).result)


def test_a_project_whose_data_changed_is_refused_by_name(qtbot, window, survey, tmp_path):
    _open_with_sample_roles(window, survey)
    window.method_panel.set_method("mdav")
    run_and_wait(qtbot, window)
    project = tmp_path / "changed.microagg"
    assert window.save_project_to(project)
    with survey.open("a", encoding="utf-8") as handle:
        handle.write("P999999,North,40,12,20000,40,2,100.0,none\n")

    other = new_window(qtbot)
    assert not other.open_project(project)
    assert len(other.errors) == 1
    assert "survey.csv" in other.errors[0] and "changed" in other.errors[0]
    assert other.table is None and len(other.history) == 0
    assert not other.io_runner.running and not other.runner.running
    run_on_sample(qtbot, other)  # still usable


def test_a_project_opens_without_waiting_and_by_drop(qtbot, window, survey, tmp_path):
    _open_with_sample_roles(window, survey)
    window.method_panel.set_method("mdav")
    run_and_wait(qtbot, window)
    project = tmp_path / "dropped.microagg"
    assert window.save_project_to(project)

    other = new_window(qtbot)
    wait_for_io(qtbot, other, lambda: other.open_project(project, wait=False))
    _wait_for_restore(qtbot, other, 1)
    assert other.errors == [] and other.project_path == project.resolve()

    third = new_window(qtbot)
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(project))])
    drop = QDropEvent(QPointF(10, 10), Qt.DropAction.CopyAction, mime,
                      Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier)
    wait_for_io(qtbot, third, lambda: third.dropEvent(drop) or True)
    _wait_for_restore(qtbot, third, 1)
    assert third.errors == [] and third.project_path == project.resolve()
    pd.testing.assert_frame_equal(third.result.masked, window.result.masked)


@pytest.mark.parametrize("setup", ["blocks and noise", "t-closeness"])
def test_copied_command_writes_what_export_writes(qtbot, window, survey, tmp_path, setup):
    _open_with_sample_roles(window, survey)
    if setup == "blocks and noise":
        window.role_editor.set_role("diagnosis", Role.NON_CONFIDENTIAL)
        window.method_panel.set_method("mdav")
        window.method_panel.set_parameter("k", 4)
        window.method_panel.set_blocks("age,income;years_education,hours_worked,"
                                       "household_size")
        window.method_panel.set_intruder("pairs")
        # The noise's seed fresh for the run: the command carries the one it drew.
        window.method_panel.set_noise(2.0, "health_spending=0:5000")
    else:
        window.method_panel.set_method("tc-merge")
        window.method_panel.set_parameter("k", 3)
        window.method_panel.set_parameter("t", 0.3)
    run_and_wait(qtbot, window)
    assert window.copy_command_action.isEnabled()

    command = window.copy_command()
    assert command is not None and window.errors == []
    assert QGuiApplication.clipboard().text() == command
    args = shlex.split(command)
    assert args[:3] == ["microagg", "anonymize", str(survey.resolve())]
    from_command, from_window = tmp_path / "command.csv", tmp_path / "window.csv"
    args[args.index("-o") + 1] = str(from_command)
    assert cli_main(args[1:]) == 0
    window.confirm_export = lambda questions: True
    assert window.export_to(from_window)
    assert from_command.read_bytes() == from_window.read_bytes()


def test_exports_and_reports_without_waiting(qtbot, window, tmp_path):
    result = run_on_sample(qtbot, window, k=4)
    csv, html = tmp_path / "out" / "released.csv", tmp_path / "out" / "report.html"
    csv.parent.mkdir()
    wait_for_io(qtbot, window, lambda: window.export_to(csv, wait=False))
    assert window.errors == [] and window.history.get(1).exported
    assert_released_qis(csv, result)
    assert window.recent.folder() == str(csv.parent.resolve())
    assert "released.csv" in window.status_label.text()
    wait_for_io(qtbot, window, lambda: window.export_report_to(html, wait=False))
    assert window.errors == []
    assert file_sha256(window.data_path) in html.read_text(encoding="utf-8")
    assert window.run_action.isEnabled() and window.export_action.isEnabled()


def test_recent_files_skip_what_is_gone(qtbot, window, survey, tmp_path, sample_path):
    assert window.open_file(survey)
    assert window.recent.paths()[0] == survey.resolve()
    second = tmp_path / "second.csv"
    shutil.copyfile(sample_path, second)
    wait_for_io(qtbot, window, lambda: window.open_any(second, wait=False))
    assert window.data_path == second.resolve() and window.table is not None
    assert window.recent.paths()[:2] == [second.resolve(), survey.resolve()]

    second.unlink()
    assert window.recent.paths()[0] == survey.resolve()
    assert second.resolve() not in window.recent.paths()
    assert not window.open_file(second)  # gone: named, and forgotten
    assert "second.csv" in window.errors[-1]

    # The last folder is offered only while it exists.
    assert window.recent.folder() == str(tmp_path.resolve())
    assert window.open_file(survey)
    assert window.recent.folder() == str(survey.parent.resolve())
    shutil.rmtree(survey.parent)
    assert window.recent.paths() == []
    assert Path(window.recent.folder()).is_dir()
    assert Path(window.recent.folder(tmp_path / "also-missing")).is_dir()
    assert window.recent.folder(tmp_path) == str(tmp_path)


def _mime(path) -> QMimeData:
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(path))])
    return mime


def test_dropping_a_table_opens_it_and_other_files_are_ignored(qtbot, window, survey,
                                                               tmp_path):
    keep = {}
    for name, expected in (("survey.csv", True), ("setup.exe", False)):
        path = survey if expected else tmp_path / name
        if not expected:
            path.write_bytes(b"MZ not a table")
        mime = keep[name] = _mime(path)
        enter = QDragEnterEvent(QPoint(10, 10), Qt.DropAction.CopyAction, mime,
                                Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier)
        window.dragEnterEvent(enter)
        assert enter.isAccepted() is expected
        drop = QDropEvent(QPointF(10, 10), Qt.DropAction.CopyAction, mime,
                          Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier)
        if expected:
            with qtbot.waitSignal(window.io_runner.signals.finished, timeout=IO_TIMEOUT):
                window.dropEvent(drop)
            assert drop.isAccepted()
            assert window.data_path == survey.resolve() and len(window.table) == 600
            assert window.recent.paths()[0] == survey.resolve()
        else:
            window.dropEvent(drop)
            assert not drop.isAccepted() and not window.io_runner.running
            assert window.data_path == survey.resolve()  # the table stays
    assert window.errors == []

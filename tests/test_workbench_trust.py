"""What would make the person who signs a release wrong without noticing: each test is a
way the window could show or save numbers that do not describe the release."""

import json
import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import shutil  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from core import MicroaggError, Role  # noqa: E402
from core.project import file_sha256, load_project  # noqa: E402
from microagg_desktop.state import SAMPLE_ROLES  # noqa: E402
from tests.gui_helpers import RUN_TIMEOUT, run_and_wait  # noqa: E402
from tests.workbench_helpers import guard_dialogs, new_window  # noqa: E402
from core.pipeline.stored import same_result

pytestmark = pytest.mark.gui


@pytest.fixture(autouse=True)
def _no_modal_dialogs(window):
    guard_dialogs(window)


@pytest.fixture
def survey(tmp_path, sample_path):
    path = tmp_path / "survey.csv"
    shutil.copyfile(sample_path, path)
    return path


def _open(window, path):
    assert window.open_file(path)
    for column, role in SAMPLE_ROLES.items():
        window.role_editor.set_role(column, role)


def _edit_file(path):
    table = pd.read_csv(path)
    table.loc[0, "health_spending"] = 99_999.0
    table.to_csv(path, index=False)


def test_a_data_file_changed_after_opening_is_not_passed_off_as_the_released_one(
        qtbot, window, survey, tmp_path):
    _open(window, survey)
    read_checksum = file_sha256(survey)
    run_and_wait(qtbot, window)
    _edit_file(survey)
    # The report names the bytes the release was made from, not the file as it is now.
    assert window.export_report_to(tmp_path / "report.html")
    page = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert read_checksum in page and file_sha256(survey) not in page
    # A project would tie the runs to the changed file: it is refused, by name.
    assert not window.save_project_to(tmp_path / "p.microagg")
    assert "survey.csv" in window.errors[-1] and "changed" in window.errors[-1]
    assert not (tmp_path / "p.microagg").exists()


def test_a_cancelled_project_recomputation_loses_no_run_on_saving(qtbot, window, survey,
                                                                  tmp_path):
    _open(window, survey)
    for k in (3, 4):
        window.method_panel.set_parameter("k", k)
        run_and_wait(qtbot, window)
    project = tmp_path / "p.microagg"
    assert window.save_project_to(project)

    other = new_window(qtbot)
    # Cancel as soon as the recomputation starts (it may still finish first: both ways
    # every run must survive), and wait for its end, however fast it comes.
    other.runner.signals.started.connect(other.cancel)
    with qtbot.waitSignal(other.runner.signals.finished, timeout=RUN_TIMEOUT):
        assert other.open_project(project, wait=False)
    kept = len(other.history) + len(other._unrestored_runs)
    assert kept == 2
    if other._unrestored_runs:
        assert other.unsaved_work()  # closing would say so
    assert other.save_project_to(project)
    assert [r.number for r in load_project(project).runs] == [1, 2]
    # A new run is numbered after the saved ones, recomputed or not: before, it took #1
    # beside the saved #1, so `microagg rerun --run 1` ran the new one, and reopening
    # the project dropped the saved runs.
    other.runner.signals.started.disconnect(other.cancel)
    other.method_panel.set_parameter("k", 10)
    run_and_wait(qtbot, other)
    assert other.history.records[-1].number == 3
    assert other.save_project_to(project)
    assert [r.number for r in load_project(project).runs] == [1, 2, 3]
    # A file that names two runs alike cannot say which one a rerun means: refused.
    data = json.loads(project.read_text(encoding="utf-8"))
    data["runs"][2]["number"] = 1
    twice = tmp_path / "twice.microagg"
    twice.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(MicroaggError, match="twice.microagg: The project has two runs "
                                            "numbered #1"):
        load_project(twice)



def test_a_project_whose_data_file_moved_asks_where_it_is(qtbot, window, survey,
                                                          tmp_path):
    """The window asks for the moved file, checks it is the same (SHA-256), recomputes
    the runs and remembers the new place once saved; a cancelled question or another
    file opens nothing."""
    _open(window, survey)
    run_and_wait(qtbot, window)
    project = tmp_path / "p.microagg"
    assert window.save_project_to(project)
    moved = tmp_path / "elsewhere" / survey.name
    moved.parent.mkdir()
    shutil.move(survey, moved)

    other = new_window(qtbot)
    asked = []
    other.ask_moved_data = lambda data, path: asked.append(data) or ""
    assert not other.open_project(project)
    assert asked == [survey] and "does not exist" in other.errors[-1]
    edited = tmp_path / "edited.csv"
    edited.write_text(moved.read_text() + "\n")
    other.ask_moved_data = lambda data, path: str(edited)
    assert not other.open_project(project)
    assert "has changed since the project was saved" in other.errors[-1]
    other.ask_moved_data = lambda data, path: str(moved)
    assert other.open_project(project)
    qtbot.waitUntil(lambda: len(other.history) == 1 and not other.runner.running,
                    timeout=RUN_TIMEOUT)
    assert other.data_path == moved.resolve() and other.project_dirty
    assert "save the project to remember the new place" in other.status_label.text()
    assert other.save_project_to(project)
    assert load_project(project).data_path == str(moved.resolve())


def test_a_sweep_point_keeps_the_settings_the_sweep_ran_with(qtbot, window):
    assert window.open_sample()
    window.method_panel.set_method("mdav")
    with qtbot.waitSignals([window.runner.signals.returned, window.runner.signals.finished],
                           timeout=RUN_TIMEOUT):
        assert window.start_sweep("k", [3, 5])
    swept = window.sweep_panel.points[1].result
    window.role_editor.set_role("household_size", Role.NON_CONFIDENTIAL)  # after the sweep
    window.method_panel.set_parameter("k", 4)
    run_and_wait(qtbot, window)
    window.add_sweep_point(swept)
    record = window.history.selected
    assert same_result(record.result, swept)
    assert "household_size" in record.request["roles"].quasi_identifiers
    assert record.request["k"] == 5


def test_a_run_of_the_previous_table_never_lands_in_the_new_one(qtbot, window):
    rng = np.random.default_rng(1)
    big = pd.DataFrame(rng.normal(size=(20_000, 3)), columns=list("abc"))
    window.set_table(big, "big", roles={c: Role.QUASI_IDENTIFIER for c in big})
    assert window.run()
    qtbot.waitUntil(lambda: window.progress.value() > 0, timeout=RUN_TIMEOUT)
    assert window.open_sample()  # while the run goes on
    window.runner.wait(RUN_TIMEOUT)
    for _ in range(20):
        qtbot.wait(10)
    assert len(window.history) == 0 and window.result is None


def test_a_reopened_project_shows_its_run_as_it_was_not_stale(qtbot, window, survey,
                                                              tmp_path):
    _open(window, survey)
    window.method_panel.set_method("mdav")
    window.method_panel.set_parameter("k", 4)
    window.method_panel.set_parameter("refine", "igd")
    window.data_page.set_missing("exclude")
    run_and_wait(qtbot, window)
    assert window.save_project_to(tmp_path / "p.microagg")
    other = new_window(qtbot)
    assert other.open_project(tmp_path / "p.microagg")
    qtbot.waitUntil(lambda: len(other.history) == 1 and not other.runner.running,
                    timeout=RUN_TIMEOUT)
    assert not other.results_panel.is_stale, other.stale_text
    assert other.method_panel.parameters()["k"] == 4
    assert other.data_page.missing() == "exclude"


def test_a_merged_strata_run_is_not_called_stale(qtbot, window):
    assert window.open_sample()
    table = window.table.copy()
    table.loc[:2, "region"] = "Islands"  # a stratum of 3 records
    window.set_table(table, "strata.csv", roles=SAMPLE_ROLES)
    window.role_editor.set_role("region", "stratum")
    window.method_panel.set_parameter("k", 4)
    window.ask_merge_strata = lambda message, stratum, nearest: True
    with qtbot.waitSignals([window.runner.signals.returned], timeout=RUN_TIMEOUT):
        assert window.run()
    qtbot.waitUntil(lambda: window.result is not None and not window.runner.running,
                    timeout=RUN_TIMEOUT)
    assert window.result.strata_merges
    assert not window.results_panel.is_stale, window.stale_text


def test_runs_with_different_unmasked_records_get_no_best_value(qtbot, window):
    assert window.open_sample()
    table = window.table.copy()
    table.loc[[3, 40, 77], "age"] = np.nan
    window.set_table(table, "holes.csv", roles=SAMPLE_ROLES)
    window.data_page.set_missing("exclude")
    run_and_wait(qtbot, window)
    window.role_editor.set_role("age", Role.NON_CONFIDENTIAL)
    run_and_wait(qtbot, window)
    window.compare_runs([1, 2])
    frame = window.compare_view.frame
    assert list(frame.loc["Records released unmasked"]) == [3, 0]
    # Their IL and risk cover different records: none of them is marked best.
    best_rows = {row for row, _ in window.compare_view.best_cells()}
    assert best_rows == {"Records released unmasked"}
    assert window.compare_view.title.text() == (
        "Comparing 2 runs. No best value is marked: they release different numbers of "
        "records unmasked.")


def test_cancel_is_off_while_an_export_is_written(qtbot, window, survey, tmp_path,
                                                  monkeypatch):
    """A file being written is finished, never cut: Cancel is not offered meanwhile
    (it would only say "Cancelling…"), and it is offered again afterwards."""
    import threading

    import microagg_desktop.window_outputs as outputs

    _open(window, survey)
    run_and_wait(qtbot, window)
    assert not window.cancel_action.isEnabled()
    gate = threading.Event()
    real = outputs.export_task

    def held(*args, **kwargs):
        gate.wait(RUN_TIMEOUT / 1000)
        return real(*args, **kwargs)

    monkeypatch.setattr(outputs, "export_task", held)
    assert window.export_to(tmp_path / "released.csv", wait=False)
    qtbot.waitUntil(lambda: window.io_runner.running, timeout=RUN_TIMEOUT)
    assert not window.cancel_action.isEnabled()
    gate.set()
    qtbot.waitUntil(lambda: not window.io_pending, timeout=RUN_TIMEOUT)
    assert (tmp_path / "released.csv").exists()
    assert window.run() and window.cancel_action.isEnabled()  # a run can be cancelled
    qtbot.waitUntil(lambda: not window.runner.running, timeout=RUN_TIMEOUT)

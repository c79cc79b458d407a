"""The history panel, the compare view and the sweep panel (pytest-qt, offscreen)."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from core import anonymize, read_table
from core.pipeline.sweep import sweep
from microagg_desktop.compare_view import CompareView
from microagg_desktop.history import History
from microagg_desktop.history_panel import HistoryPanel
from microagg_desktop.sweep_panel import SweepPanel
from core.pipeline.stored import same_result
from tests.test_sweep import ROLES


@pytest.fixture(scope="module")
def sample(sample_path):
    return read_table(sample_path)


def _request(method, **parameters):
    return {"roles": ROLES, "method": method, "blocks": None, "merge_small_strata": False,
            "intruder": "all", **parameters}


@pytest.fixture(scope="module")
def runs(sample):
    requests = [_request("mdav", k=3), _request("cbfs", k=5),
                _request("individual-ranking", k=3), _request("mdav", k=7)]
    out = []
    for request in requests:
        options = dict(request)
        out.append((request, anonymize(sample, options.pop("roles"), options.pop("method"),
                                       **options)))
    return out


@pytest.fixture
def history(runs):
    history = History()
    for request, result in runs:
        history.add(request, result)
    return history


@pytest.fixture
def panel(qtbot, history):
    panel = HistoryPanel()
    qtbot.addWidget(panel)
    panel.set_history(history)
    return panel


def test_history_model_passes_the_model_tester(qtmodeltester, panel):
    qtmodeltester.check(panel.model)


def test_the_table_shows_the_records(panel, history):
    model = panel.model
    assert model.rowCount() == 4
    row = [model.index(2, c).data() for c in range(model.columnCount())]
    m = history.get(3).measures
    assert row == ["#3", "Individual ranking", "k=3", f"{m['il']:.2f}",
                   f"{m['k_prime']:.2f}", f"{m['dld']:.1f}", "—", str(m["warnings"])]
    # Individual ranking promises no record-level k-anonymity: nothing to verify, so
    # neither a tick nor a cross; a record-level run that failed would show ✗.
    assert not m["record_level"] and not m["verified"]
    assert panel.selected_numbers() == [4]  # the last run added is selected


def test_compare_go_back_and_remove(qtbot, panel, history):
    panel.select_numbers([1, 3])
    assert panel.compare_button.isEnabled() and not panel.restore_button.isEnabled()
    with qtbot.waitSignal(panel.compare_requested) as compared:
        qtbot.mouseClick(panel.compare_button, Qt.MouseButton.LeftButton)
    assert compared.args == [[1, 3]]

    panel.select_numbers([2])
    with qtbot.waitSignal(panel.restore_requested) as restored:
        qtbot.mouseClick(panel.restore_button, Qt.MouseButton.LeftButton)
    assert restored.args == [2]
    assert history.selected.number == 2 and history.selected.request["k"] == 5

    with qtbot.waitSignal(panel.run_removed) as removed:
        qtbot.mouseClick(panel.remove_button, Qt.MouseButton.LeftButton)
    assert removed.args == [2]
    assert [r.number for r in history.records] == [1, 3, 4]
    assert panel.model.rowCount() == 3 and not panel.remove_button.isEnabled()


def test_keyboard_moves_the_current_run(qtbot, panel):
    panel.view.setFocus()
    panel.view.setCurrentIndex(panel.model.index(0, 0))
    with qtbot.waitSignal(panel.run_selected) as selected:
        qtbot.keyClick(panel.view, Qt.Key.Key_Down)
    assert selected.args == [2]
    for widget in (panel.view, panel.compare_button, panel.restore_button,
                   panel.remove_button):
        assert widget.accessibleName() and widget.toolTip()
        assert widget.focusPolicy() & Qt.FocusPolicy.TabFocus


def test_empty_history_shows_a_hint(qtbot):
    panel = HistoryPanel()
    qtbot.addWidget(panel)
    assert not panel.hint.isHidden() and panel.model.rowCount() == 0
    assert not panel.compare_button.isEnabled()


def test_compare_view_highlights_the_best_value_per_measure(qtbot, history):
    view = CompareView()
    qtbot.addWidget(view)
    view.show()
    assert not view.table.isVisible()  # no empty strip before there is a comparison
    view.set_runs(history, [1, 2, 4])
    assert view.table.isVisible()
    frame = view.frame
    assert view.table_model.columnCount() == 3 and view.table_model.rowCount() == len(frame)
    best = set(view.best_cells())
    il = {label: history.get(n).measures["il"] for label, n in zip(frame.columns, [1, 2, 4])}
    assert ("Information loss IL (%)", min(il, key=il.get)) in best
    assert ("Linkage disclosure DLD (%)", "#4 MDAV k=7") in best
    assert not any(row in ("Time (s)", "Setting: k") for row, _ in best)
    assert view.table_model.verticalHeaderItem(len(frame) - 1).text() == "Setting: k"
    assert view.table_model.headerData(0, Qt.Orientation.Vertical,
                                       Qt.ItemDataRole.ToolTipRole) \
        == "Information loss IL (%): lower is better"
    # the bars are drawn from the records, the map holds every run of the history
    bars = view.bars.figure.axes[0].patches
    assert [p.get_height() for p in bars] == list(il.values())
    offsets = view.map.canvas.figure.axes[0].collections
    assert sum(len(c.get_offsets()) for c in offsets[:2]) == 4

    view.map.set_risk("dr")
    assert view.map.canvas.figure.axes[0].get_ylabel() == "Disclosure risk DR (%)"
    history.remove(2)
    view.refresh()
    assert list(view.frame.columns) == ["#1 MDAV k=3", "#4 MDAV k=7"]
    view.set_runs(history, [])
    assert not view.table.isVisible() and view.frame is None


def test_a_run_without_a_guarantee_is_never_the_best_beside_guaranteed_ones(qtbot, history):
    """Individual ranking protects no record, so its loss is small: beside MDAV runs it
    is not marked best, and its Verified cell says there is nothing to verify."""
    view = CompareView()
    qtbot.addWidget(view)
    view.set_runs(history, [1, 3, 4])
    frame = view.frame
    ranking = "#3 individual-ranking k=3" if "#3 individual-ranking k=3" in frame.columns \
        else next(c for c in frame.columns if c.startswith("#3"))
    assert frame.loc["Verified", ranking] is None
    assert frame.loc["Verified", "#1 MDAV k=3"] is True
    row = list(frame.index).index("Verified")
    assert view.table_model.item(row, list(frame.columns).index(ranking)).text() == "—"
    il = frame.loc["Information loss IL (%)"]
    assert il[ranking] < il["#1 MDAV k=3"]  # the smallest loss, yet not the best
    best = set(view.best_cells())
    assert ("Information loss IL (%)", "#1 MDAV k=3") in best
    assert not any(column == ranking for _, column in best)
    assert "among the runs with a record-level guarantee" in view.title.text()
    view.set_runs(history, [1, 4])
    assert "among the runs" not in view.title.text()


def test_sweep_panel_form_is_checked_against_the_constraint(qtbot):
    panel = SweepPanel()
    qtbot.addWidget(panel)
    panel.set_method("tc-kfirst")
    assert [panel.parameter_box.itemData(i) for i in range(panel.parameter_box.count())] \
        == ["k", "t"]
    panel.parameter_box.setCurrentIndex(1)
    assert panel.start_spin.minimum() > 0  # t is in (0, 1]
    panel.set_range(0.1, 0.5, count=5)
    assert panel.sweep_values() == [0.1, 0.2, 0.3, 0.4, 0.5]
    panel.set_method("mdav")
    panel.set_range(2, 100, step=1)
    assert not panel.run_button.isEnabled() and "at most 50" in panel.preview.text()
    panel.set_range(2, 10, step=2)
    with qtbot.waitSignal(panel.sweep_requested) as requested:
        qtbot.mouseClick(panel.run_button, Qt.MouseButton.LeftButton)
    assert requested.args == ["k", [2, 4, 6, 8, 10]]


def test_sweep_panel_shows_points_and_adds_the_chosen_one(qtbot, sample):
    panel = SweepPanel()
    qtbot.addWidget(panel)
    panel.set_range(2, 5, step=1)
    points = sweep(sample, _request("mdav"), "k", panel.sweep_values() + [700])
    panel.show_sweep("k", points)
    assert panel.list.rowCount() == 5
    assert panel.list.item(4, 4).text() == "failed" and "700" in panel.list.item(4, 0).toolTip()
    assert not panel.add_button.isEnabled()
    panel.list.setCurrentCell(2, 0)  # k = 4, as a click in the list
    assert panel.chosen_point().value == 4
    with qtbot.waitSignal(panel.add_to_history) as added:
        qtbot.mouseClick(panel.add_button, Qt.MouseButton.LeftButton)
    assert same_result(added.args[0], points[2].result)
    panel.choose(4)  # a failed value cannot be added
    assert not panel.add_button.isEnabled()
    lines = panel.canvas.figure.axes[0].get_lines()
    assert list(lines[0].get_xdata()) == [2, 3, 4, 5]
    assert lines[-1].get_label() == "chosen: k = 700"


def test_a_click_on_the_sweep_plot_chooses_the_nearest_value(qtbot, sample):
    from matplotlib.backend_bases import MouseEvent

    panel = SweepPanel()
    qtbot.addWidget(panel)
    panel.show_sweep("k", sweep(sample, _request("mdav"), "k", [2, 3, 4]))
    canvas = panel.canvas
    canvas.draw()
    x, y = canvas.figure.axes[0].transData.transform((3.2, 10.0))
    MouseEvent("button_press_event", canvas, x, y, button=1)._process()
    assert panel.chosen_point().value == 3 and panel.list.currentRow() == 1

"""Qt models, plain view state, the method panel and the worker (pytest-qt, offscreen)."""

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import logging  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from PySide6.QtCore import Qt  # noqa: E402
from PySide6.QtWidgets import QComboBox, QDoubleSpinBox, QSpinBox  # noqa: E402

import core  # noqa: E402
from core import MicroaggError, Role  # noqa: E402
from core.methods.registry import Interval, Method, Options, Parameter, methods  # noqa: E402
from microagg_desktop import method_panel as method_panel_module  # noqa: E402
from microagg_desktop import state as state_module  # noqa: E402
from microagg_desktop.method_panel import MethodPanel, parameter_widget  # noqa: E402
from microagg_desktop.paths import resource_path  # noqa: E402
from microagg_desktop.role_editor import ROLE, RoleEditor, RoleModel  # noqa: E402
from microagg_desktop.state import (SAMPLE_ROLES, MethodState, RoleState,  # noqa: E402
                                    default_role, describe_column, format_number)
from microagg_desktop.table_model import DataFrameModel, format_value  # noqa: E402
from microagg_desktop.worker import TaskRunner  # noqa: E402

pytestmark = pytest.mark.gui

DISPLAY = Qt.ItemDataRole.DisplayRole


@pytest.fixture
def mixed_frame():
    return pd.DataFrame({
        "id": ["a", "b", "c", "d"],
        "age": [20, 31, 45, 60],
        "income": [1234.5, np.nan, 1e7 / 3, 0.000123456],
        "flag": [True, False, True, False],
        "when": pd.to_datetime(["2020-01-01", None, "2021-06-30", "2022-12-31"]),
        "note": ["x", None, "z", "w"],
    })


# -- DataFrameModel ----------------------------------------------------------------------

def test_dataframe_model_passes_qtmodeltester(qtmodeltester, mixed_frame):
    qtmodeltester.check(DataFrameModel(mixed_frame))
    qtmodeltester.check(DataFrameModel(pd.DataFrame()))


def test_dataframe_model_cells_headers_and_missing(mixed_frame):
    before = mixed_frame.copy()
    model = DataFrameModel(mixed_frame)
    assert (model.rowCount(), model.columnCount()) == (4, 6)
    assert model.headerData(1, Qt.Orientation.Horizontal, DISPLAY) == "age"
    assert model.headerData(0, Qt.Orientation.Vertical, DISPLAY) == "1"
    assert model.headerData(3, Qt.Orientation.Vertical, DISPLAY) == "4"
    assert model.data(model.index(0, 2), DISPLAY) == "1234.5"
    assert model.data(model.index(2, 2), DISPLAY) == "3333333.3333333335"  # all digits
    assert model.data(model.index(1, 2), DISPLAY) == "NA"
    assert model.data(model.index(1, 5), DISPLAY) == "NA"
    assert model.data(model.index(0, 3), DISPLAY) == "true"
    assert model.data(model.index(1, 4), DISPLAY) == "NA"
    assert model.data(model.index(1, 2), Qt.ItemDataRole.ForegroundRole) is not None
    assert model.data(model.index(0, 1), Qt.ItemDataRole.TextAlignmentRole) & \
        Qt.AlignmentFlag.AlignRight
    assert not model.flags(model.index(0, 0)) & Qt.ItemFlag.ItemIsEditable
    assert model.frame is mixed_frame
    pd.testing.assert_frame_equal(mixed_frame, before)  # never modified


def test_million_row_frame_opens_without_touching_every_cell():
    n = 1_000_000
    frame = pd.DataFrame({"x": np.arange(n, dtype=float) / 7, "y": np.arange(n)})
    model = DataFrameModel(frame)
    assert model.rowCount() == n
    assert model.data(model.index(n - 1, 1), DISPLAY) == str(n - 1)
    assert model.headerData(n - 1, Qt.Orientation.Vertical, DISPLAY) == str(n)


@pytest.mark.parametrize("value, text", [
    (2.0, "2"), (45.333333333, "45.3333"), (1234567.891, "1234568"), (0.0, "0"),
    (-0.5, "-0.5"), (1e-7, "1e-07"), (float("nan"), "NA"), (float("inf"), "inf"),
])
def test_format_number(value, text):
    assert format_number(value) == text


def test_format_value_types():
    assert format_value(np.int64(7)) == "7"
    assert format_value(None) == "NA"
    assert format_value(pd.NA) == "NA"
    assert format_value("text") == "text"


# -- plain state -------------------------------------------------------------------------

@pytest.mark.parametrize("name, role", [
    ("id", Role.IDENTIFIER), ("ID", Role.IDENTIFIER), ("person_id", Role.IDENTIFIER),
    ("household id", Role.IDENTIFIER), ("id_card", Role.IDENTIFIER),
    ("idle", Role.NON_CONFIDENTIAL), ("valid", Role.NON_CONFIDENTIAL),
    ("income", Role.NON_CONFIDENTIAL),
])
def test_default_role_marks_only_id_like_names(name, role):
    assert default_role(name) == role


def test_role_state_defaults_presets_and_spec(mixed_frame):
    state = RoleState(mixed_frame, {"age": "quasi-identifier", "absent": Role.CONFIDENTIAL})
    assert state.role("id") == Role.IDENTIFIER
    assert state.role("income") == Role.NON_CONFIDENTIAL
    state.set_role("income", Role.QUASI_IDENTIFIER)
    spec = state.roles()
    assert spec.quasi_identifiers == ("age", "income")
    assert spec.identifiers == ("id",)
    with pytest.raises(KeyError):
        state.set_role("absent", Role.CONFIDENTIAL)
    with pytest.raises(ValueError):
        state.set_role("age", "secret")


def test_describe_column_summaries(mixed_frame):
    age = describe_column("age", mixed_frame["age"])
    assert (age.kind, age.summary) == ("numeric", "min 20 · mean 39 · max 60")
    note = describe_column("note", mixed_frame["note"])
    assert note.kind == "text"
    assert note.summary.startswith("3 distinct") and note.summary.endswith("1 missing")
    assert describe_column("flag", mixed_frame["flag"]).kind == "text"


def test_sample_roles_cover_the_sample_columns():
    table = core.read_table(resource_path("sample_survey.csv"))
    assert set(SAMPLE_ROLES) == set(table.columns)
    RoleState(table, SAMPLE_ROLES).roles().validate(table)


def test_method_state_resolves_defaults_and_rejects_bad_values():
    state = MethodState()
    first = methods()[0]
    assert state.method == first.name
    assert state.parameters() == first.resolve({})
    state.set_value("k", 1)
    with pytest.raises(MicroaggError, match="'k'"):
        state.parameters()
    with pytest.raises(KeyError):
        state.set_value("no-such-parameter", 3)


# -- role editor -------------------------------------------------------------------------

def test_role_model_passes_qtmodeltester(qtmodeltester, mixed_frame):
    qtmodeltester.check(RoleModel(RoleState(mixed_frame)))


def test_role_model_edits_through_setdata(qtbot, mixed_frame):
    model = RoleModel(RoleState(mixed_frame))
    index = model.index(1, ROLE)
    with qtbot.waitSignal(model.rolesChanged):
        assert model.setData(index, "quasi-identifier")
    assert model.data(index, Qt.ItemDataRole.EditRole) == "quasi-identifier"
    assert model.setData(index, Role.CONFIDENTIAL)
    assert model.state.role("age") == Role.CONFIDENTIAL
    assert not model.setData(index, "secret")
    assert not model.setData(model.index(1, 0), "quasi-identifier")
    assert model.flags(index) & Qt.ItemFlag.ItemIsEditable
    assert not model.flags(model.index(1, 0)) & Qt.ItemFlag.ItemIsEditable


def test_role_editor_dropdowns_follow_the_model(qtbot, mixed_frame):
    editor = RoleEditor()
    qtbot.addWidget(editor)
    editor.set_table(mixed_frame)
    editor.set_role("age", Role.QUASI_IDENTIFIER)
    assert editor.roles().quasi_identifiers == ("age",)
    combo = editor.view.indexWidget(editor.model.index(2, ROLE))
    assert isinstance(combo, QComboBox)
    combo.setCurrentIndex(combo.findData(Role.QUASI_IDENTIFIER.value))  # the user's choice
    assert editor.roles().quasi_identifiers == ("age", "income")
    with pytest.raises(KeyError):
        editor.set_role("absent", Role.CONFIDENTIAL)


# -- method panel ------------------------------------------------------------------------

def test_parameter_widgets_follow_constraints(qtbot):
    spin = parameter_widget(Parameter("k", Interval(int, 2, 50), 3))
    assert isinstance(spin, QSpinBox)
    assert (spin.minimum(), spin.maximum(), spin.value()) == (2, 50, 3)
    real = parameter_widget(Parameter("t", Interval(float, 0.0, 1.0), 0.25))
    assert isinstance(real, QDoubleSpinBox) and real.value() == 0.25
    assert real.maximum() == 1.0
    choice = parameter_widget(Parameter("d", Options(("a", "b")), "b"))
    assert isinstance(choice, QComboBox) and choice.currentText() == "b"


def test_method_panel_lists_every_registered_method(qtbot):
    panel = MethodPanel()
    qtbot.addWidget(panel)
    names = [panel.method_box.itemData(i) for i in range(panel.method_box.count())]
    # grouped by guarantee: every method once, plus one unselectable header per group
    assert sorted(n for n in names if n) == sorted(m.name for m in methods())
    for method in methods():
        panel.set_method(method.name)
        assert panel.method_name() == method.name
        assert set(panel.widgets) == {p.name for p in method.parameters}
        assert panel.parameters() == {p.name: p.default for p in method.parameters}


def test_a_new_registry_method_appears_without_gui_changes(qtbot, monkeypatch):
    fake = Method(
        name="fake", label="Fake method", function=lambda data, *, state, **_: None,
        parameters=(Parameter("k", Interval(int, 2, None), 4, label="k"),
                    Parameter("t", Interval(float, 0.0, 1.0), 0.5, label="t"),
                    Parameter("mode", Options(("x", "y")), "x", label="mode")),
        description="A method the GUI has never heard of.")
    registry = {m.name: m for m in methods()} | {"fake": fake}
    monkeypatch.setattr(method_panel_module, "methods", lambda: tuple(registry.values()))
    for module in (method_panel_module, state_module):
        monkeypatch.setattr(module, "get_method", registry.__getitem__)
    panel = MethodPanel()
    qtbot.addWidget(panel)
    with qtbot.waitSignal(panel.changed):
        panel.set_method("fake")
    assert panel.description.text() == fake.description
    assert isinstance(panel.widgets["t"], QDoubleSpinBox)
    assert isinstance(panel.widgets["mode"], QComboBox)
    panel.set_parameter("k", 7)
    panel.set_parameter("mode", "y")
    assert panel.parameters() == {"k": 7, "t": 0.5, "mode": "y"}


# -- worker ------------------------------------------------------------------------------

def _steps(n_steps, *, state, pause=0.0, result="done"):
    for i in range(n_steps):
        state.step((i + 1) / n_steps, f"step {i + 1}")
        if pause:
            time.sleep(pause)
    return result


def test_worker_returns_and_throttles_progress(qtbot):
    runner = TaskRunner()
    progress, returned = [], []
    runner.signals.progress.connect(lambda f, m: progress.append(f))
    runner.signals.returned.connect(returned.append)
    with qtbot.waitSignals([runner.signals.started, runner.signals.returned,
                            runner.signals.finished], order="strict"):
        runner.start(_steps, 20_000)
    assert returned == ["done"]
    qtbot.waitUntil(lambda: not runner.running)
    assert 1 <= len(progress) < 200  # 20,000 steps, throttled
    assert progress[-1] == 1.0


def test_worker_reports_errors_as_messages(qtbot, caplog):
    runner = TaskRunner()

    def bad_input(*, state):
        raise MicroaggError("Column 'age' is wrong.")

    def bug(*, state):
        raise RuntimeError("boom")

    with qtbot.waitSignal(runner.signals.errored) as blocker:
        runner.start(bad_input)
    assert blocker.args == ["Column 'age' is wrong."]
    with caplog.at_level(logging.ERROR), qtbot.waitSignal(runner.signals.errored) as blocker:
        runner.start(bug)
    assert "RuntimeError" in blocker.args[0] and "boom" in blocker.args[0]
    assert "Traceback" not in blocker.args[0]
    assert any("boom" in r.exc_text for r in caplog.records if r.exc_text)
    runner.wait(2000)


def test_worker_cancels_and_a_new_start_cancels_the_old_task(qtbot):
    runner = TaskRunner()
    returned = []
    runner.signals.returned.connect(returned.append)
    with qtbot.waitSignal(runner.signals.started):
        first = runner.start(_steps, 10_000, pause=0.001, result="first")
    with qtbot.waitSignal(runner.signals.returned, timeout=5000):
        runner.start(_steps, 3, result="second")
    assert first.state.cancelled
    assert returned == ["second"]  # the old task's reports are not passed on
    with qtbot.waitSignal(runner.signals.started):
        runner.start(_steps, 10_000, pause=0.001)
    with qtbot.waitSignal(runner.signals.cancelled, timeout=1000):
        runner.cancel()
    assert runner.wait(2000)
    assert not runner.running

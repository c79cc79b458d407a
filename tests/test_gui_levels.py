"""Measurement levels in the GUI: RoleState (no Qt), the role editor and real runs.

The first half needs no display and no Qt; the Qt tests import the widgets themselves.
"""

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

import core  # noqa: E402
from core import Role  # noqa: E402
from core.data.encoding import encode  # noqa: E402
from core.data.roles import Level, RoleSpec  # noqa: E402
from microagg_desktop.state import RoleState  # noqa: E402
from tests.gui_helpers import run_and_wait  # noqa: E402

QI = Role.QUASI_IDENTIFIER
DIAGNOSIS_ORDER = ("none", "asthma", "hypertension", "diabetes", "depression")


@pytest.fixture
def frame():
    return pd.DataFrame({
        "age": [20, 31, 45, 60, 38, 52],
        "income": [1.5, 2.0, 3.5, 4.0, 2.5, 3.0],
        "region": ["north", "south", "east", "north", "west", "east"],
        "grade": pd.Categorical(["lo", "hi", "mid", "lo", "hi", "lo"],
                                categories=["lo", "mid", "hi", "top"]),
        "flag": [True, False, True, True, False, False],
        "size": [3, 1, 2, 3, 1, 2],
    })


# -- RoleState, no Qt --------------------------------------------------------------------

def test_levels_default_from_the_data(frame):
    state = RoleState(frame)
    assert {c: state.level(c) for c in frame} == {
        "age": Level.NUMERIC, "income": Level.NUMERIC, "region": Level.NOMINAL,
        "grade": Level.NOMINAL, "flag": Level.NOMINAL, "size": Level.NUMERIC}
    assert state.level_choices("age") == (Level.NUMERIC, Level.ORDINAL, Level.NOMINAL)
    for column in ("region", "grade", "flag"):
        assert state.level_choices(column) == (Level.ORDINAL, Level.NOMINAL)
    # Presets: a categorical's categories (unused 'top' included), else sorted values.
    assert state.categories("grade") == ("lo", "mid", "hi", "top")
    assert state.categories("region") == ("east", "north", "south", "west")
    assert state.categories("flag") == (False, True)
    assert state.categories("size") == (1, 2, 3)
    assert all(type(v) is int for v in state.categories("size"))
    assert state.order("region") is None  # nominal: no order


def test_numeric_columns_are_not_scanned_until_made_ordinal(frame, monkeypatch):
    scanned = []
    value_counts = pd.Series.value_counts

    def recording(series, *args, **kwargs):
        scanned.append(series.name)
        return value_counts(series, *args, **kwargs)

    monkeypatch.setattr(pd.Series, "value_counts", recording)
    state = RoleState(frame, {c: QI for c in frame})
    state.roles()
    assert not {"age", "income", "size"} & set(scanned)
    state.set_level("size", Level.ORDINAL)
    assert state.roles().order_of("size") == (1, 2, 3)
    assert scanned.count("size") == 1
    state.roles()
    assert scanned.count("size") == 1  # the categories are kept once computed


def test_set_level_checks_the_column_and_the_level(frame):
    state = RoleState(frame)
    with pytest.raises(ValueError, match="'region' does not hold numbers.*ordinal"):
        state.set_level("region", Level.NUMERIC)
    with pytest.raises(ValueError, match="'flag' does not hold numbers"):
        state.set_level("flag", "numeric")  # booleans are categories, not numbers
    with pytest.raises(ValueError, match="'interval'.*numeric, ordinal, nominal"):
        state.set_level("age", "interval")
    with pytest.raises(KeyError):
        state.set_level("absent", Level.NOMINAL)
    assert state.level("region") is Level.NOMINAL  # nothing changed by the refusals
    state.set_level("age", "nominal")
    state.set_level("region", "ordinal")
    assert (state.level("age"), state.level("region")) == (Level.NOMINAL, Level.ORDINAL)
    state.set_level("age", Level.NUMERIC)
    assert state.level("age") is Level.NUMERIC


def test_set_order_accepts_only_a_permutation_of_the_categories(frame):
    state = RoleState(frame)
    with pytest.raises(ValueError, match="'region' is nominal; declare it ordinal"):
        state.set_order("region", ["east", "north", "south", "west"])
    state.set_level("region", Level.ORDINAL)
    with pytest.raises(ValueError, match="leaves out 'west'"):
        state.set_order("region", ["east", "north", "south"])
    with pytest.raises(ValueError, match="'centre', which is not a category"):
        state.set_order("region", ["east", "north", "south", "west", "centre"])
    with pytest.raises(ValueError, match="'north' twice"):
        state.set_order("region", ["north", "east", "north", "south", "west"])
    assert state.order("region") == ("east", "north", "south", "west")  # still the preset
    state.set_order("region", ["south", "west", "east", "north"])
    assert state.order("region") == ("south", "west", "east", "north")
    state.set_level("grade", Level.ORDINAL)
    with pytest.raises(ValueError, match="leaves out 'top'"):  # an unused category too
        state.set_order("grade", ["hi", "mid", "lo"])
    # Numbers are matched by their text and stored as the column's values.
    state.set_level("size", Level.ORDINAL)
    state.set_order("size", ["3", "1", "2"])
    assert state.order("size") == (3, 1, 2)
    # The order survives a change of level and back.
    state.set_level("region", Level.NOMINAL)
    assert state.order("region") is None
    state.set_level("region", Level.ORDINAL)
    assert state.order("region") == ("south", "west", "east", "north")


def test_roles_declare_every_quasi_identifier_level_and_ordinal_order(frame):
    before = frame.copy()
    state = RoleState(frame, {"age": QI, "region": QI, "grade": QI, "size": "stratum"})
    state.set_level("grade", Level.ORDINAL)
    state.set_level("flag", Level.ORDINAL)  # not a quasi-identifier: not in the spec
    spec = state.roles()
    assert spec.quasi_identifiers == ("age", "region", "grade")
    assert dict(spec.levels) == {"age": Level.NUMERIC, "region": Level.NOMINAL,
                                 "grade": Level.ORDINAL}
    assert dict(spec.orders) == {"grade": ("lo", "mid", "hi", "top")}
    assert spec.strata == ("size",)
    spec.validate(frame)
    # The preset order is the one the engine would choose without it.
    implicit = RoleSpec(quasi_identifiers=spec.quasi_identifiers,
                        levels={"grade": Level.ORDINAL})
    for column in ("region", "grade"):
        shown = encode(frame, spec).attribute(column)
        default = encode(frame, implicit).attribute(column)
        assert shown.level == default.level
        assert list(shown.categories) == list(default.categories)
    state.set_order("grade", ["top", "hi", "mid", "lo"])
    encoded = encode(frame, state.roles()).attribute("grade")
    assert list(encoded.categories) == ["top", "hi", "mid", "lo"]
    pd.testing.assert_frame_equal(frame, before)


def test_level_warning_for_text_that_is_mostly_numbers():
    table = pd.DataFrame({"income": ["1200", "1500", "unknown", "900"],
                          "town": ["a", "b", "c", "7"],
                          "zip": ["01234", "02345", "01234", "09999"],
                          "age": [1, 2, 3, 4]})
    state = RoleState(table)
    warning = state.level_warning("income")
    assert "'income'" in warning and "'unknown'" in warning
    assert state.level("income") is Level.NOMINAL
    assert "'zip' is a number stored as text" in state.level_warning("zip")
    assert state.level_warning("town") is None and state.level_warning("age") is None


# -- Qt: model, editor, dialog -----------------------------------------------------------

@pytest.mark.gui
def test_role_model_with_levels_passes_qtmodeltester(qtmodeltester, frame):
    from microagg_desktop.role_editor import RoleModel
    state = RoleState(frame, {"age": QI, "region": QI, "grade": QI})
    state.set_level("grade", Level.ORDINAL)
    model = RoleModel(state)
    qtmodeltester.check(model)
    model.set_level(model.row_of("age"), Level.ORDINAL)
    qtmodeltester.check(model)


@pytest.mark.gui
def test_text_of_numbers_is_flagged_on_the_quasi_identifier_row(qtbot):
    from PySide6.QtCore import Qt

    from microagg_desktop.role_editor import LEVEL, NAME, RoleEditor
    table = pd.DataFrame({"zip": ["01234", "02345", "01234"], "age": [30, 40, 50]})
    editor = RoleEditor()
    qtbot.addWidget(editor)
    editor.set_table(table, {"age": QI})
    name = editor.model.index(0, NAME)
    assert name.data(Qt.ItemDataRole.DecorationRole) is None  # only quasi-identifiers
    editor.set_role("zip", QI)  # opens its level drop-down, which shows the warning
    assert not name.data(Qt.ItemDataRole.DecorationRole).isNull()
    assert "stored as text" in name.data(Qt.ItemDataRole.ToolTipRole)
    level = editor.view.indexWidget(editor.model.index(0, LEVEL))
    assert "stored as text" in level.combo.toolTip()


@pytest.mark.gui
def test_level_cells_follow_the_role_and_the_column(qtbot, frame):
    from PySide6.QtCore import Qt

    from microagg_desktop.role_editor import LEVEL, LEVEL_CHOICES_ROLE, ROLE, RoleModel
    model = RoleModel(RoleState(frame))
    assert model.headerData(LEVEL, Qt.Orientation.Horizontal) == "Level"
    assert model.headerData(LEVEL - 1, Qt.Orientation.Horizontal) == "Role"
    region = model.index(model.row_of("region"), LEVEL)
    assert region.data() == ""  # not a quasi-identifier yet
    assert not model.flags(region) & Qt.ItemFlag.ItemIsEditable
    assert not model.setData(region, "ordinal")
    assert "apply to quasi-identifiers, and to confidential columns of numbers" in \
        region.data(Qt.ItemDataRole.ToolTipRole)

    with qtbot.waitSignal(model.dataChanged):
        assert model.setData(model.index(region.row(), ROLE), QI)
    assert region.data() == "Nominal (categories)"
    assert model.flags(region) & Qt.ItemFlag.ItemIsEditable
    assert region.data(LEVEL_CHOICES_ROLE) == ["ordinal", "nominal"]
    assert not model.setData(region, "numeric")  # refused: text is not numbers
    assert model.state.level("region") is Level.NOMINAL
    with qtbot.waitSignal(model.rolesChanged):
        assert model.setData(region, Level.ORDINAL)
    assert region.data() == "Ordinal (ordered categories)"
    assert region.data(Qt.ItemDataRole.EditRole) == "ordinal"
    model.set_order(region.row(), ["west", "south", "north", "east"])
    assert "west < south < north < east" in region.data(Qt.ItemDataRole.ToolTipRole)
    age = model.index(model.row_of("age"), LEVEL)
    assert age.data(LEVEL_CHOICES_ROLE) == ["numeric", "ordinal", "nominal"]


@pytest.mark.gui
def test_level_dropdowns_open_for_quasi_identifiers_and_edit_the_order(qtbot, frame):
    from PySide6.QtCore import Qt

    from microagg_desktop.role_editor import LEVEL, LevelEditor, RoleEditor
    editor = RoleEditor()
    qtbot.addWidget(editor)
    editor.set_table(frame, {"age": QI})
    editor.show()
    cell = editor.model.index(editor.model.row_of("region"), LEVEL)
    assert editor.view.indexWidget(cell) is None  # not a quasi-identifier: empty cell
    age_level = editor.view.indexWidget(editor.model.index(0, LEVEL))
    assert isinstance(age_level, LevelEditor) and age_level.level() == "numeric"

    editor.set_role("region", QI)
    level = editor.view.indexWidget(cell)
    assert isinstance(level, LevelEditor)
    assert [level.combo.itemData(i) for i in range(level.combo.count())] == \
        ["ordinal", "nominal"]
    assert level.combo.accessibleName() == "Measurement level of region"
    assert not level.order_button.isVisible()
    level.combo.setCurrentIndex(level.combo.findData("ordinal"))  # the user's choice
    assert editor.level("region") is Level.ORDINAL
    assert level.order_button.isVisible()
    assert "east < north < south < west" in level.combo.toolTip()
    header = editor.view.horizontalHeader()
    assert header.sectionSize(LEVEL) >= level.sizeHint().width()  # nothing clipped

    level.order_button.click()
    dialog = editor.order_dialog
    assert dialog.isVisible() and dialog.values() == ("east", "north", "south", "west")
    dialog.list.setCurrentRow(3)
    dialog.move_up()
    dialog.move_up()
    assert dialog.values() == ("east", "west", "north", "south")
    dialog.reject()
    assert editor.order("region") == ("east", "north", "south", "west")  # cancelled

    editor.activateWindow()
    level.combo.setFocus()
    qtbot.waitUntil(level.combo.hasFocus)
    qtbot.keyClick(level.combo, Qt.Key.Key_O, Qt.KeyboardModifier.ControlModifier |
                   Qt.KeyboardModifier.ShiftModifier)
    dialog = editor.order_dialog
    assert dialog.isVisible()
    qtbot.waitUntil(dialog.list.hasFocus)  # the keyboard starts in the list
    qtbot.keyClick(dialog.list, Qt.Key.Key_Down, Qt.KeyboardModifier.ControlModifier)
    with qtbot.waitSignal(editor.rolesChanged):
        dialog.accept()
    assert editor.roles().order_of("region") == ("north", "east", "south", "west")

    editor.set_role("region", Role.CONFIDENTIAL)
    assert editor.view.indexWidget(cell) is None
    assert editor.roles().levels == (("age", Level.NUMERIC),)


@pytest.mark.gui
def test_a_confidential_column_of_codes_can_be_declared_nominal(qtbot, frame):
    """A confidential column of numbers has a level drop-down for its t-closeness
    distance (ordered or equal); a text one has none (always equal). The choice reaches
    the run: the method, the verifier and the measures use the equal distance."""
    from microagg_desktop.role_editor import LEVEL, LevelEditor, RoleEditor
    editor = RoleEditor()
    qtbot.addWidget(editor)
    editor.set_table(frame, {"age": QI, "income": QI})
    editor.show()
    cell = editor.model.index(editor.model.row_of("size"), LEVEL)
    assert editor.view.indexWidget(cell) is None  # non-confidential: no level
    editor.set_role("size", Role.CONFIDENTIAL)
    level = editor.view.indexWidget(cell)
    assert isinstance(level, LevelEditor) and level.choices() == ["numeric", "nominal"]
    assert level.combo.currentText() == "Numeric (ordered distance)"
    assert editor.roles().confidential_kinds is None  # the default: ordered
    with qtbot.waitSignal(editor.rolesChanged):
        level.combo.setCurrentIndex(level.combo.findData("nominal"))
    assert cell.data() == "Nominal (codes, equal distance)"
    roles = editor.roles()
    assert roles.confidential_kinds == {"size": "nominal"}
    result = core.anonymize(frame, roles, "tc-merge", k=2, t=0.5)
    assert result.passed and result.tcloseness.kinds == ("nominal",)
    editor.set_role("region", Role.CONFIDENTIAL)  # text: equal distance, nothing to choose
    region = editor.model.index(editor.model.row_of("region"), LEVEL)
    assert editor.view.indexWidget(region) is None and region.data() == ""
    editor.set_role("size", QI)  # the quasi-identifier's choices again
    assert editor.view.indexWidget(cell).choices() == ["numeric", "ordinal", "nominal"]


@pytest.mark.gui
def test_order_dialog_buttons_and_reset(qtbot):
    from microagg_desktop.order_dialog import OrderDialog
    dialog = OrderDialog("size", (3, 1, 2), preset=(1, 2, 3))
    qtbot.addWidget(dialog)
    assert [dialog.list.item(i).text() for i in range(3)] == ["3", "1", "2"]
    assert not dialog.up_button.isEnabled() and dialog.down_button.isEnabled()
    dialog.up_button.click()  # already first: nothing moves
    dialog.down_button.click()
    assert dialog.values() == (1, 3, 2)
    dialog.list.setCurrentRow(2)
    assert dialog.up_button.isEnabled() and not dialog.down_button.isEnabled()
    dialog.reset_button.click()
    assert dialog.values() == (1, 2, 3) and all(type(v) is int for v in dialog.values())
    assert dialog.list.accessibleName() == "Categories of size, lowest first"


# -- Qt: the main window on the sample ---------------------------------------------------


@pytest.mark.gui
def test_sample_region_as_nominal_quasi_identifier(qtbot, window):
    from microagg_desktop.paths import resource_path
    from microagg_desktop.role_editor import LEVEL
    assert window.open_sample()
    editor = window.role_editor
    editor.set_role("region", QI)
    cell = editor.model.index(editor.model.row_of("region"), LEVEL)
    assert cell.data() == "Nominal (categories)"
    assert editor.view.indexWidget(cell).level() == "nominal"
    window.method_panel.set_method("mdav")
    window.method_panel.set_parameter("k", 5)

    run_and_wait(qtbot, window)

    result = window.result
    assert window.errors == []
    assert result.passed and result.verification.passed
    assert result.roles.level_of("region") is Level.NOMINAL
    original = core.read_table(resource_path("sample_survey.csv"))
    masked = result.masked
    assert set(masked["region"]) <= set(original["region"])
    groups = pd.Series(result.labels)
    assert groups.value_counts().min() >= 5
    for label, rows in groups.groupby(groups).groups.items():
        released = masked["region"].iloc[rows]
        assert released.nunique() == 1  # one category per group ...
        counts = original["region"].iloc[rows].value_counts()
        assert counts[released.iloc[0]] == counts.max()  # ... its most frequent one
    assert masked.groupby(list(result.roles.quasi_identifiers)).size().min() >= 5


@pytest.mark.gui
def test_the_time_estimate_weighs_a_nominal_quasi_identifier(qtbot, window):
    """The method tab's estimate learns each nominal quasi-identifier's categories from
    the data tab's column summary, and follows the roles."""
    from microagg_desktop.estimate import QuasiIdentifiers
    from microagg_desktop.paths import resource_path
    assert window.open_sample()
    qtbot.waitUntil(lambda: bool(window.data_page.summary.summary), timeout=10_000)
    original = core.read_table(resource_path("sample_survey.csv"))
    editor = window.role_editor
    numeric = len(editor.roles().quasi_identifiers)
    editor.set_role("region", QI)
    qtbot.waitUntil(lambda: window.method_panel.attributes is not None
                    and bool(window.method_panel.attributes.nominal), timeout=10_000)
    found = window.method_panel.attributes
    assert found.nominal == (original["region"].nunique(),)
    assert found.numeric == numeric
    editor.set_level("region", Level.ORDINAL)
    qtbot.waitUntil(lambda: window.method_panel.attributes.nominal == (), timeout=10_000)
    assert window.method_panel.attributes.numeric == numeric + 1
    assert isinstance(window.method_panel.attributes, QuasiIdentifiers)


@pytest.mark.gui
def test_the_estimate_waits_for_a_large_tables_summary(qtbot, window):
    """A table summarised off the GUI thread: the estimate takes the categories when
    the summary arrives, never the previous table's."""
    from microagg_desktop.column_summary_view import _IN_THREAD_CELLS
    n = _IN_THREAD_CELLS // 2 + 1
    rng = np.random.default_rng(3)
    table = pd.DataFrame({"age": rng.integers(18, 90, n).astype(float),
                          "region": rng.choice(["north", "south", "east"], n)})
    qis = {"age": QI, "region": QI}
    window.set_table(table.copy(), "first.csv", roles=qis)
    qtbot.waitUntil(lambda: window.method_panel.attributes is not None, timeout=20_000)
    assert window.method_panel.attributes.nominal == (3,)
    table["region"] = rng.choice([f"r{i}" for i in range(40)], n)
    window.set_table(table, "second.csv", roles=qis)
    assert window.method_panel.attributes is None  # not the first table's figures
    qtbot.waitUntil(lambda: window.method_panel.attributes is not None, timeout=20_000)
    assert window.method_panel.attributes.nominal == (40,)


@pytest.mark.gui
def test_declared_order_reaches_the_run(qtbot, window):
    from microagg_desktop.paths import resource_path
    assert window.open_sample()
    editor = window.role_editor
    editor.set_role("diagnosis", QI)
    editor.set_level("diagnosis", Level.ORDINAL)
    editor.set_order("diagnosis", DIAGNOSIS_ORDER)
    with pytest.raises(ValueError, match="'diagnosis'"):
        editor.set_level("diagnosis", Level.NUMERIC)
    assert editor.roles().order_of("diagnosis") == DIAGNOSIS_ORDER
    window.method_panel.set_method("mdav")
    window.method_panel.set_parameter("k", 5)

    run_and_wait(qtbot, window)

    result = window.result
    assert window.errors == [] and result.passed
    assert result.roles.level_of("diagnosis") is Level.ORDINAL
    assert result.roles.order_of("diagnosis") == DIAGNOSIS_ORDER
    original = core.read_table(resource_path("sample_survey.csv"))
    rank = {category: r for r, category in enumerate(DIAGNOSIS_ORDER)}
    ranks = original["diagnosis"].map(rank).to_numpy()
    released = result.masked["diagnosis"].map(rank).to_numpy()
    assert not np.isnan(released).any()  # only categories of the order are released
    for label in np.unique(result.labels):
        rows = np.flatnonzero(result.labels == label)
        assert rows.size >= 5 and np.unique(released[rows]).size == 1
        ordered = np.sort(ranks[rows])
        low, high = ordered[(rows.size - 1) // 2], ordered[rows.size // 2]
        assert low <= released[rows[0]] <= high  # a median in the declared order

"""Role suggestions and remembered roles: Qt-free logic, then the role editor."""

from __future__ import annotations

import json
import os

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import core
from core import Role
from microagg_desktop.paths import resource_path
from microagg_desktop.role_memory import RoleMemory, column_signature
from microagg_desktop.role_suggestions import (MIN_RECORDS_FOR_DATA, RoleSuggester,
                                               name_suggestion, suggest_roles)
from microagg_desktop.state import SAMPLE_ROLES, RoleState

QI, ID, CONF = Role.QUASI_IDENTIFIER, Role.IDENTIFIER, Role.CONFIDENTIAL
ADULT = "/work/shared/data/adult.csv"


@pytest.fixture(scope="module")
def adult():
    if not os.path.exists(ADULT):
        pytest.skip("Adult data not available")
    return core.read_table(ADULT)


@pytest.fixture(scope="module")
def sample():
    return core.read_table(resource_path("sample_survey.csv"))


# -- suggestions, no Qt ------------------------------------------------------------------

def test_adult_education_is_flagged_once_education_num_is_a_quasi_identifier(adult):
    before = adult.copy()
    suggester = RoleSuggester(adult)
    assert suggester.suggestions({})["education"].evidence == "name"
    found = suggester.suggestions({"education-num": QI, "age": QI})
    flag = found["education"]
    assert flag.is_warning and flag.related == "education-num"
    assert "'education' maps one-to-one to the quasi-identifier 'education-num'" in \
        flag.reason
    assert "identifier so it is dropped" in flag.reason
    # once both are quasi-identifiers, or education is dropped, the flag goes away
    assert not suggester.suggestions({"education-num": QI, "education": QI})[
        "education"].is_warning
    assert "education" not in {c for c, s in suggester.suggestions(
        {"education-num": QI, "education": ID}).items() if s.is_warning}
    pd.testing.assert_frame_equal(adult, before)  # input untouched


def test_adult_name_suggestions(adult):
    found = suggest_roles(adult)
    for column in ("age", "sex", "race", "marital-status", "occupation", "native-country"):
        assert found[column].role is QI, column
        assert column in found[column].reason
    assert "fnlwgt" not in found and "hours-per-week" not in found


def test_sample_suggestions(sample):
    found = suggest_roles(sample)
    assert found["person_id"].role is ID and found["person_id"].evidence == "data"
    assert "600" in found["person_id"].reason
    assert found["diagnosis"].role is CONF and "Only a suggestion" in \
        found["diagnosis"].reason
    assert found["income"].role is CONF
    assert found["age"].role is QI


def test_determination_only_counts_true_functional_dependence():
    n = 60
    rng = np.random.default_rng(1)
    grade = rng.integers(1, 5, n)
    table = pd.DataFrame({
        "label": pd.Series(grade).map({1: "low", 2: "mid", 3: "high", 4: "top"}),
        "coarse": pd.Series(grade).map({1: "a", 2: "a", 3: "b", 4: "b"}),  # grade→coarse
        "grade": grade,
        "noise": rng.choice(["x", "y"], n),
    })
    suggester = RoleSuggester(table)
    assert suggester.determines("label", "grade") and suggester.determines("grade", "label")
    assert suggester.determines("label", "coarse")
    assert not suggester.determines("coarse", "grade")
    found = suggester.suggestions({"grade": QI})
    assert found["label"].is_warning and "maps one-to-one" in found["label"].reason
    assert "coarse" not in found and "noise" not in found
    found = suggester.suggestions({"coarse": QI})
    assert found["label"].is_warning and "'label' determines" in found["label"].reason


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 4), st.integers(0, 3)), min_size=1, max_size=40),
       st.sampled_from([1, 80]))
def test_determines_agrees_with_groupby(pairs, repeat):
    """Also on columns longer than the first stretch the target is screened on (each
    pair repeated 80 times: up to 3,200 rows)."""
    table = pd.DataFrame(np.repeat(np.array(pairs), repeat, axis=0),
                         columns=["a", "b"]).astype({"a": str})
    expected = bool((table.groupby("a")["b"].nunique() <= 1).all())
    assert RoleSuggester(table).determines("a", "b") == expected


def test_all_distinct_columns_are_identifiers_unless_decimals_or_tiny():
    n = MIN_RECORDS_FOR_DATA + 5
    table = pd.DataFrame({"code": [f"c{i}" for i in range(n)], "serial": range(n),
                          "weight": np.linspace(0.5, 9.7, n),
                          "whole": np.arange(n, dtype=float), "dup": [1, 2, 3] * (n // 3)})
    found = suggest_roles(table)
    assert found["code"].role is ID and found["serial"].role is ID
    assert found["whole"].role is ID
    assert "weight" not in found and "dup" not in found
    assert suggest_roles(table.head(3)) == {}


def test_one_fraction_anywhere_makes_a_float_column_measured():
    """Whole numbers for a first stretch then one fraction: a measurement, not a key."""
    whole = np.arange(3000, dtype=float)
    late, early = whole.copy(), whole.copy()
    late[2500] += 0.5
    early[3] += 0.5
    found = suggest_roles(pd.DataFrame({"whole": whole, "late": late, "early": early}))
    assert found["whole"].role is ID and "late" not in found and "early" not in found


@pytest.mark.parametrize("name, role", [
    ("PersonID", ID), ("e-mail", ID), ("email", ID), ("ZipCode", QI), ("postcode", QI),
    ("date_of_birth", QI), ("Gender", QI), ("annual_income", CONF),
    ("diagnosis_code", CONF), ("idle_time", None), ("stage", None)])
def test_name_suggestions(name, role):
    found = name_suggestion(name)
    assert (found.role if found else None) is role


# -- memory, no Qt -----------------------------------------------------------------------

def test_memory_round_trip_with_levels_and_orders(sample):
    store: dict[str, str] = {}
    memory = RoleMemory(store)
    state = RoleState(sample, SAMPLE_ROLES)
    state.set_choice("region", "stratum")
    state.set_role("household_size", QI)
    state.set_level("household_size", "ordinal")
    state.set_order("household_size", sorted(state.categories("household_size"),
                                             reverse=True))
    memory.remember(sample, state)
    assert len(store) == 1 and json.loads(next(iter(store.values())))["version"] == 1
    again = RoleState(sample)
    assert memory.recall(sample, again) and memory.notes == []
    assert again.roles() == state.roles()


def test_memory_needs_the_same_columns_in_the_same_order_and_kinds(sample):
    memory = RoleMemory({})
    memory.remember(sample, RoleState(sample, SAMPLE_ROLES))
    reordered = sample[list(reversed(sample.columns))]
    retyped = sample.assign(age=sample["age"].astype(str))
    assert column_signature(reordered) != column_signature(sample)
    assert column_signature(retyped) != column_signature(sample)
    assert not memory.recall(reordered, RoleState(reordered))
    assert not memory.recall(retyped, RoleState(retyped))
    fewer_rows = sample.head(50)
    assert memory.recall(fewer_rows, RoleState(fewer_rows))


def test_memory_skips_what_no_longer_fits_and_ignores_garbage():
    table = pd.DataFrame({"grade": ["a", "b", "c"], "age": [1, 2, 3]})
    store: dict[str, str] = {}
    memory = RoleMemory(store)
    state = RoleState(table, {"grade": QI, "age": QI})
    state.set_level("grade", "ordinal")
    state.set_order("grade", ["c", "b", "a"])
    memory.remember(table, state)
    changed = pd.DataFrame({"grade": ["a", "b", "d"], "age": [1, 2, 3]})
    again = RoleState(changed)
    assert memory.recall(changed, again)
    assert again.role("grade") is QI and again.level("grade").value == "ordinal"
    assert memory.notes == ["the category order of 'grade'"]
    store[memory.key(table)] = "not json"
    assert not memory.recall(table, RoleState(table))


# -- the role editor ---------------------------------------------------------------------

pytest.importorskip("pytestqt")
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


def _editor(qtbot):
    from microagg_desktop.role_editor import RoleEditor
    editor = RoleEditor()
    qtbot.addWidget(editor)
    editor.resize(1024, 640)
    return editor


def test_editor_shows_suggestions_and_applies_only_when_asked(qtbot, adult):
    from PySide6.QtCore import Qt
    from microagg_desktop.role_editor import SUGGESTION
    editor = _editor(qtbot)
    editor.set_table(adult)
    model = editor.model
    assert editor.roles().quasi_identifiers == ()  # nothing applied silently
    row = model.row_of("age")
    assert model.data(model.index(row, SUGGESTION)) == "→ Quasi-identifier"
    assert "intruder" in model.data(model.index(row, SUGGESTION),
                                    Qt.ItemDataRole.ToolTipRole)
    assert editor.apply_all_button.isEnabled()
    assert not editor.apply_selected_button.isEnabled()  # nothing selected
    editor.set_role("education-num", QI)
    flagged = model.row_of("education")
    assert model.data(model.index(flagged, SUGGESTION)).startswith("⚠")
    assert "'education'" in editor.suggestion_label.text()
    editor.view.selectRow(flagged)
    assert editor.apply_selected_button.isEnabled()
    with qtbot.waitSignal(editor.rolesChanged):
        editor.apply_selected_button.click()
    assert editor.role("education") is QI and editor.role("age") is not QI
    changed = editor.apply_suggestions()
    assert "age" in changed and editor.role("sex") is QI
    assert editor.pending_suggestions() == {}
    assert model.data(model.index(row, SUGGESTION)) == "✓ Quasi-identifier"
    assert not editor.apply_all_button.isEnabled()


def test_editor_restores_remembered_roles_with_a_visible_label(qtbot, sample):
    editor = _editor(qtbot)
    memory = RoleMemory({})
    editor.set_table(sample, memory=memory)  # nothing remembered yet
    assert not editor.restored and editor.restored_label.isHidden()
    for column, role in SAMPLE_ROLES.items():
        editor.set_role(column, role)
    editor.set_role("region", "stratum")
    editor.set_level("household_size", "ordinal")
    editor.remember(memory)
    editor.set_table(sample.copy(), memory=memory)
    assert editor.restored and not editor.restored_label.isHidden()
    assert "Roles restored from the last time" in editor.restored_label.text()
    assert editor.roles().strata == ("region",)
    assert editor.level("household_size").value == "ordinal"
    editor.set_table(sample, roles={"age": QI}, memory=memory)  # preset roles win
    assert not editor.restored and editor.roles().quasi_identifiers == ("age",)


def test_every_editor_control_has_a_name_and_tooltip(qtbot, sample):
    from PySide6.QtWidgets import QAbstractButton, QComboBox
    editor = _editor(qtbot)
    editor.set_table(sample, SAMPLE_ROLES)
    editor.show()
    controls = [c for c in editor.findChildren(QComboBox) + editor.findChildren(
        QAbstractButton) if not c.objectName().startswith("qt_")]  # Qt's own corner
    assert len(controls) > 10
    for control in controls:
        assert control.accessibleName(), control
        assert control.toolTip(), control.accessibleName()


def test_qsettings_store_is_a_mutable_mapping_the_memory_can_use(tmp_path, sample):
    from PySide6.QtCore import QSettings
    from microagg_desktop.settings_store import QSettingsStore
    settings = QSettings(str(tmp_path / "memory.ini"), QSettings.Format.IniFormat)
    store = QSettingsStore("role-memory", settings)
    assert len(store) == 0 and "x" not in store
    store["a"] = "1"
    store["b"] = "two"
    assert dict(store) == {"a": "1", "b": "two"}
    del store["a"]
    assert list(store) == ["b"]
    with pytest.raises(KeyError):
        del store["a"]
    with pytest.raises(KeyError):
        store["a/b"] = "x"
    memory = RoleMemory(store)
    memory.remember(sample, RoleState(sample, SAMPLE_ROLES))
    settings.sync()
    reread = RoleMemory(QSettingsStore("role-memory", QSettings(
        str(tmp_path / "memory.ini"), QSettings.Format.IniFormat)))
    again = RoleState(sample)
    assert reread.recall(sample, again)
    assert again.roles() == RoleState(sample, SAMPLE_ROLES).roles()

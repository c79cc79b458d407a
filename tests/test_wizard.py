"""The method wizard: grouping by guarantee, values kept across methods, the plain-words
guarantee and *What will happen* (Qt-free), then the panel itself."""

from __future__ import annotations

import math
import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core import RoleSpec
from core.methods.registry import Interval, Method, Parameter, get_method, methods
from core.methods.tfirst import tfirst_cluster_size
from core.verify.guarantees import GUARANTEES, T_CLOSENESS
from microagg_desktop.estimate import QuasiIdentifiers
from microagg_desktop.state import MethodState
from microagg_desktop.wizard_state import (carry_values, group_methods, guarantee_text,
                                           parameter_tooltip, quasi_identifiers,
                                           run_seconds, what_will_happen)

ROLES = RoleSpec(quasi_identifiers=("age", "income", "hours"), confidential=("spend",))


# -- grouping ----------------------------------------------------------------------------

def test_every_method_is_in_the_group_of_its_guarantee():
    groups = group_methods(methods())
    listed = [m.name for g in groups for m in g.methods]
    assert sorted(listed) == sorted(m.name for m in methods())
    assert len(listed) == len(set(listed))
    for group in groups:
        assert all(m.guarantee == group.guarantee for m in group.methods)
    assert [g.guarantee for g in groups] == [g for g in GUARANTEES
                                             if any(m.guarantee == g for m in methods())]
    titles = [g.title for g in groups]
    assert titles[0] == "K-anonymity" and "No record-level guarantee" in titles


def test_a_newly_registered_method_joins_its_group():
    fake = Method(name="fake-t", label="Fake t", function=lambda *a, **k: None,
                  parameters=(), description="d", guarantee=T_CLOSENESS)
    groups = group_methods([*methods(), fake])
    closeness = next(g for g in groups if g.guarantee == T_CLOSENESS)
    assert closeness.methods[-1] is fake


# -- values kept across methods ----------------------------------------------------------

def test_k_set_in_mdav_stays_in_cbfs_and_comes_back_after_mic1d():
    state = MethodState("mdav")
    state.set_value("k", 7)
    state.set_method("cbfs")
    assert state.values["k"] == 7 and state.notes == []
    state.set_method("mic1d")  # its k counts values: another parameter
    assert state.values["k"] == 3000
    assert "means something else" in state.notes[0]
    state.set_method("tc-tfirst")
    assert state.values["k"] == 7 and state.parameters()["k"] == 7


def test_a_value_the_new_method_refuses_falls_back_with_a_note():
    state = MethodState("mdav")
    state.set_value("growth", "nc")
    state.set_method("gsms")
    assert state.values["growth"] == "nn"
    assert state.notes and "'growth' = 'nc' is not allowed by GSMS" in state.notes[0]
    assert "back to its default" in state.notes[0]
    state.set_method("mdav")
    assert state.values["growth"] == "nc" and state.notes == []


def test_an_emd_t_is_not_read_as_a_multiplicative_t():
    state = MethodState("tc-merge")
    state.set_value("t", 0.15)
    state.set_method("tc-bucket")
    assert state.values["t"] == 1.5 and "means something else" in state.notes[0]
    state.set_method("tc-kfirst")
    assert state.values["t"] == 0.15


def test_a_narrower_constraint_refuses_a_carried_value():
    narrow = Method(name="narrow", label="Narrow", function=lambda *a, **k: None,
                    parameters=(Parameter("k", Interval(int, 2, 10), 4,
                                          label="k (minimum group size)"),),
                    description="d")
    values, notes = carry_values(narrow, {("k", "k (minimum group size)"): 25})
    assert values == {"k": 4} and "[2, 10]" in notes[0]
    values, notes = carry_values(narrow, {("k", "k (minimum group size)"): 9})
    assert values == {"k": 9} and notes == []


@settings(max_examples=25, deadline=None)
@given(st.integers(2, 5000), st.floats(0.01, 1.0), st.permutations(
    [m.name for m in methods()]))
def test_carried_values_always_satisfy_the_new_method(k, t, order):
    state = MethodState(order[0])
    if "k" in state.values:
        state.set_value("k", k)
    if "t" in state.values and get_method(order[0]).guarantee.t_kind == "emd":
        state.set_value("t", t)
    for name in order[1:]:
        state.set_method(name)
        state.parameters()  # raises if a carried value broke a constraint


def test_parameter_tooltips_give_meaning_and_range():
    for method in methods():
        for parameter in method.parameters:
            tip = parameter_tooltip(parameter)
            assert parameter.constraint.describe() in tip
            assert (parameter.help or parameter.label) in tip


# -- plain words -------------------------------------------------------------------------

def test_guarantee_text_for_each_kind():
    text = guarantee_text(get_method("mdav"), {"k": 5})
    assert "at least 4 other records (k = 5)" in text and "disclosed" in text
    text = guarantee_text(get_method("tc-tfirst"), {"k": 3, "t": 0.2})
    assert "earth mover's distance t = 0.2" in text
    text = guarantee_text(get_method("tc-bucket"), {"k": 3, "t": 1.5})
    assert f"ε = 2·ln t = {2 * math.log(1.5):.3g}" in text
    for name in ("mic1d", "individual-ranking"):
        assert guarantee_text(get_method(name), {"k": 3}).startswith(
            "No record-level promise")


def test_what_will_happen_tfirst_group_size():
    lines = what_will_happen(get_method("tc-tfirst"), {"k": 3, "t": 0.05}, n_records=600,
                             roles=ROLES)
    size = tfirst_cluster_size(600, 3, 0.05)
    assert size > 3
    assert any(line.startswith(f"Groups of {size} records") for line in lines)
    assert lines[0].startswith("600 records; 3 quasi-identifier(s)")


def test_what_will_happen_estimates_tc_kfirst_from_t():
    kfirst = get_method("tc-kfirst")
    strict, loose = (" ".join(what_will_happen(kfirst, {"k": 5, "t": t}, n_records=300_000,
                                               roles=ROLES)) for t in (0.05, 0.3))
    assert "Expected time on this computer" in strict and "minutes" in strict
    assert "seconds" in loose


def test_what_will_happen_warnings():
    mdav = get_method("mdav")
    lines = what_will_happen(mdav, {"k": 700}, n_records=600, roles=ROLES)
    assert any("k = 700 is more than the 600 records" in line for line in lines)
    lines = what_will_happen(mdav, {"k": 3}, n_records=600, roles=ROLES,
                             blocks="age,income;hours", noise={"dp_epsilon": 0.5})
    assert any("2 attribute blocks" in line for line in lines)
    assert any("Laplace noise (ε = 0.5)" in line and "'spend'" in line for line in lines)
    lines = what_will_happen(get_method("mic1d"), {"k": 3000}, n_records=600, roles=ROLES)
    assert any("no record-level k-anonymity" in line for line in lines)
    lines = what_will_happen(get_method("tc-merge"), {"k": 3, "t": 0.1}, n_records=600,
                             roles=RoleSpec(quasi_identifiers=("age",)))
    assert any("needs at least one confidential attribute" in line for line in lines)
    assert any("beyond k" in line for line in lines)
    assert what_will_happen(mdav, {"k": 3}) == [
        "Open a table to see what the run will do with it."]


def test_time_estimate_only_for_large_inputs():
    mdav = get_method("mdav")
    small = what_will_happen(mdav, {"k": 3}, n_records=600, roles=ROLES)
    large = what_will_happen(mdav, {"k": 3}, n_records=500_000, roles=ROLES)
    assert not any("Expected time" in line for line in small)
    assert any(line.startswith("Expected time on this computer: about")
               for line in large)


def test_quasi_identifiers_for_the_estimate():
    """Levels as the engine resolves them (declared, else nominal for a column without
    numbers), categories from the column summary, the distinct rows bounded by the
    product of the columns' distinct values when it is below the records."""
    roles = RoleSpec(quasi_identifiers=("age", "region", "sex", "grade"),
                     levels={"sex": "nominal", "grade": "ordinal"},
                     orders={"grade": ("a", "b", "c")})
    columns = {"age": ("number", 90), "region": ("text", 20), "sex": ("number", 2),
               "grade": ("text", 3), "income": ("number", 5000)}
    found = quasi_identifiers(roles, 1_000_000, columns)
    assert found == QuasiIdentifiers(numeric=2, nominal=(20, 2), distinct=10_800)
    assert quasi_identifiers(roles, 10_000, columns).distinct is None
    assert quasi_identifiers(roles, 10_000, {"age": ("number", 90)}) is None  # not summarised
    assert quasi_identifiers(None, 10, columns) is None
    mdav = get_method("mdav")
    counted = what_will_happen(mdav, {"k": 5}, n_records=300_000, roles=roles)
    weighed = what_will_happen(mdav, {"k": 5}, n_records=300_000, roles=roles,
                               attributes=quasi_identifiers(roles, 300_000, columns))
    assert [line for line in counted if "Expected" in line] != \
        [line for line in weighed if "Expected" in line]
    assert run_seconds(mdav, {"k": 5}, 300_000, QuasiIdentifiers(0, (12,))) is not None


def test_what_will_happen_says_the_memory_of_a_large_run(monkeypatch):
    """The run's peak by core.data.memory's model, the one the run is refused by (MDAV
    at 1,000,000 records peaked 3.85 GiB above the program's own with 124 embedded
    columns, 0.84 GiB with 10 numeric ones); and, above three quarters of the
    computer's memory, that the run will be refused and what to do."""
    import core.data.memory as memory

    roles = RoleSpec(quasi_identifiers=("a", "b", "c"))
    wide = QuasiIdentifiers(2, (2, 20, 30, 20, 50))
    mdav, tfirst = get_method("mdav"), get_method("tc-tfirst")

    def memory_lines(n, attributes=None, spec=mdav, values=None):
        lines = what_will_happen(spec, values or {"k": 5}, n_records=n, roles=roles,
                                 attributes=attributes)
        return [line for line in lines if line.startswith("Memory")]

    monkeypatch.setattr(memory, "physical_memory", lambda: 64 * 2**30)
    assert memory_lines(1_000_000, wide) == ["Memory the run needs at its peak: about "
                                             "4.0 GiB (the categories make 124 columns)."]
    assert memory_lines(100_000, wide) == []  # below 1 GiB
    assert memory_lines(1_000_000, QuasiIdentifiers(10)) == []  # 0.91 GiB
    assert memory_lines(5_000_000, QuasiIdentifiers(10)) == [
        "Memory the run needs at its peak: about 4.0 GiB."]
    assert memory_lines(5_000_000) == ["Memory the run needs at its peak: about 3.2 GiB."]
    # the method's own needs: an index per subset, a refinement's lists (IGD's grown to
    # 64 groups a record where 16 fail, as after PCP)
    assert memory_lines(1_000_000, wide, tfirst, {"k": 5, "t": 0.2}) == [
        "Memory the run needs at its peak: about 7.1 GiB (the categories make 124 "
        "columns)."]
    assert memory_lines(5_000_000, QuasiIdentifiers(10), values={"k": 5, "refine": "igd"}) \
        == ["Memory the run needs at its peak: about 13.1 GiB."]
    monkeypatch.setattr(memory, "physical_memory", lambda: 4 * 2**30)
    assert memory_lines(1_000_000, wide) == [
        "Memory the run needs at its peak: about 4.0 GiB (the categories make 124 "
        "columns). That is more than three quarters of this computer's 4 GiB of memory, "
        "so the run will be refused: run in blocks (Advanced), or recode the nominal "
        "attributes with the most categories into fewer."]
    assert memory_lines(5_000_000, QuasiIdentifiers(10))[0].endswith(
        "so the run will be refused: run in blocks (Advanced).")
    # blocked on a Dask cluster: one block at a time, nothing refused
    blocked = what_will_happen(mdav, {"k": 5}, n_records=5_000_000, roles=roles,
                               attributes=wide, block_size=250_000)
    assert [line for line in blocked if line.startswith("Memory")] == [
        "Memory each block needs at its peak: about 1.0 GiB (blocks of about 250,000 "
        "records; the categories make 124 columns)."]
    # tc-merge holds its base method's structures
    merge = get_method("tc-merge")
    assert memory_lines(2_000_000, wide, merge, {"k": 5, "t": 0.2, "base": "gsms"}) != \
        memory_lines(2_000_000, wide, merge, {"k": 5, "t": 0.2, "base": "mdav"})


# -- the panel ---------------------------------------------------------------------------

pytest.importorskip("pytestqt")
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


@pytest.fixture
def panel(qtbot):
    from microagg_desktop.method_panel import MethodPanel
    widget = MethodPanel()
    qtbot.addWidget(widget)
    widget.resize(1024, 640)
    return widget


def test_headers_cannot_be_chosen_and_the_keyboard_skips_them(panel, qtbot):
    from PySide6.QtCore import Qt
    box = panel.method_box
    headers = [i for i in range(box.count()) if box.itemData(i) is None]
    assert len(headers) == len(group_methods(methods()))
    for i in headers:
        assert not box.model().item(i).isEnabled()
    k_group = group_methods(methods())[0]
    panel.set_method(k_group.methods[-1].name)
    box.setFocus()
    qtbot.keyClick(box, Qt.Key.Key_Down)
    assert box.currentData() == group_methods(methods())[1].methods[0].name
    assert panel.method_name() == box.currentData()


def test_panel_keeps_k_and_shows_notes(panel):
    panel.set_method("mdav")
    panel.set_parameter("k", 7)
    panel.set_parameter("growth", "nc")
    panel.set_method("cbfs")
    assert panel.widgets["k"].value() == 7 and panel.parameters()["k"] == 7
    assert panel.carry_note.isHidden()
    panel.set_method("gsms")
    assert panel.widgets["growth"].currentText() == "nn"
    assert not panel.carry_note.isHidden() and "'nc'" in panel.carry_note.text()
    assert "at least 6 other records (k = 7)" in panel.guarantee_label.text()


def test_context_updates_what_will_happen(panel, qtbot):
    panel.set_method("tc-tfirst")
    panel.set_parameter("t", 0.05)
    panel.set_context(600, ROLES)
    size = tfirst_cluster_size(600, 3, 0.05)
    assert f"Groups of {size} records" in panel.forecast.text()
    panel.set_parameter("k", 40)
    assert f"Groups of {tfirst_cluster_size(600, 40, 0.05)} records" in \
        panel.forecast.text()
    panel.set_method("mdav")
    panel.set_noise(1.0, "spend=0:10")
    assert "Laplace noise" in panel.forecast.text()
    panel.set_context(0, None)
    assert "Open a table" in panel.forecast.text()


def test_every_panel_control_has_a_name_and_tooltip(panel):
    from PySide6.QtWidgets import QAbstractSpinBox, QComboBox, QGroupBox, QLineEdit
    for name in ("tc-bucket", "mdav"):
        panel.set_method(name)
        controls = [w for kind in (QComboBox, QAbstractSpinBox, QLineEdit)
                    for w in panel.findChildren(kind) if not w.objectName().startswith("qt_")
                    and not isinstance(w.parent(), QAbstractSpinBox)]
        controls += [b for b in panel.findChildren(QGroupBox) if b.isCheckable()]
        assert len(controls) >= 5
        for control in controls:
            assert control.accessibleName(), control
            assert control.toolTip(), control.accessibleName()


def test_what_will_happen_says_how_t_is_measured():
    from core.data.roles import RoleSpec
    tfirst = get_method("tc-tfirst")
    lines = what_will_happen(tfirst, {"k": 3, "t": 0.2}, n_records=600, roles=ROLES)
    assert any(line.startswith("t is measured on each confidential attribute by the "
                               "ordered distance") and line.endswith("(none declared).")
               for line in lines)
    codes = RoleSpec(quasi_identifiers=ROLES.quasi_identifiers, confidential=("dx", "pay"),
                     levels={"dx": "nominal"})
    lines = what_will_happen(tfirst, {"k": 3, "t": 0.2}, n_records=600, roles=codes)
    assert any(line.endswith("(declared: 'dx').") for line in lines)
    mdav = what_will_happen(get_method("mdav"), {"k": 3}, n_records=600, roles=codes)
    assert not any(line.startswith("t is measured") for line in mdav)

"""The real main window driven with qtbot (offscreen): open, roles, run, cancel, export."""

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import logging  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from tests.conftest import shared_data  # noqa: E402
from tests.gui_helpers import RUN_TIMEOUT, run_and_fail, run_and_wait  # noqa: E402
import pytest  # noqa: E402
from PySide6.QtCore import QStandardPaths  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

import core  # noqa: E402
from core import Role  # noqa: E402
from microagg_desktop import main_window as main_window_module  # noqa: E402
from microagg_desktop.main_window import MainWindow  # noqa: E402
from microagg_desktop.paths import resource_path  # noqa: E402

pytestmark = pytest.mark.gui

QIS = ("age", "years_education", "income", "hours_worked", "household_size")


def test_sample_run_verify_and_export(qtbot, window, tmp_path):
    assert window.open_sample()
    assert window.data_model.rowCount() == 600
    assert not window.export_action.isEnabled()
    for column in ("region", "health_spending"):
        window.role_editor.set_role(column, Role.NON_CONFIDENTIAL)
    window.role_editor.set_role("diagnosis", Role.CONFIDENTIAL)
    assert window.role_editor.roles().quasi_identifiers == QIS
    window.method_panel.set_method("mdav")
    window.method_panel.set_parameter("k", 5)

    run_and_wait(qtbot, window)

    result = window.result
    assert result.parameters["k"] == 5 and result.verification.passed
    panel = window.results_panel
    assert panel.values["il"].text() == f"{core_format(result.metrics.il)} %"
    assert "Verified" in panel.status.text() and "≥ 5" in panel.status.text()
    assert panel.values["groups"].text() == str(result.metrics.n_groups)
    assert window.tabs.currentWidget() is panel
    assert window.run_action.isEnabled() and not window.cancel_action.isEnabled()
    assert window.export_action.isEnabled()
    assert window.errors == []

    original = core.read_table(resource_path("sample_survey.csv"))
    xlsx, csv = tmp_path / "released.xlsx", tmp_path / "released.csv"
    assert window.export_to(xlsx) and window.export_to(csv)
    sheets = pd.read_excel(xlsx, sheet_name=None, engine="openpyxl")
    assert set(sheets) == {"masked", "summary"}
    for masked in (sheets["masked"], pd.read_csv(csv)):
        assert len(masked) == len(original)
        assert "person_id" not in masked.columns
        for qi in QIS:  # every quasi-identifier equals its group mean
            means = original[qi].groupby(result.labels).transform("mean")
            np.testing.assert_allclose(masked[qi], means, rtol=1e-9)
            assert masked.groupby(result.labels)[qi].nunique().max() == 1
        assert masked.groupby(list(QIS)).size().min() >= 5
        pd.testing.assert_series_equal(masked["diagnosis"], original["diagnosis"])
    assert "MDAV" in " ".join(map(str, sheets["summary"]["value"].dropna()))


def core_format(il):
    from microagg_desktop.state import format_number
    return format_number(il, 4)


def test_open_file_and_defaults_roles(window, tmp_path):
    path = tmp_path / "people.csv"
    pd.DataFrame({"id": [1, 2, 3], "age": [30, 40, 50], "town": list("abc")}).to_csv(
        path, index=False)
    assert window.open_file(path)
    assert window.source == "people.csv"
    assert window.data_model.rowCount() == 3
    spec = window.role_editor.roles()
    assert spec.identifiers == ("id",) and spec.quasi_identifiers == ()
    assert window.run_action.isEnabled() and not window.export_action.isEnabled()


def test_what_the_reader_noticed_is_shown_in_full_on_the_data_tab(window, tmp_path):
    """A long read note (a code column kept as text) is on the Data tab whole, under
    the table's size, where the status bar would cut it; opening another table without
    notes clears it."""
    path = tmp_path / "codes.csv"
    pd.DataFrame({"age": [30, 40, 50], "zip": ["00094", "02074", "12345"]}).to_csv(
        path, index=False)
    assert window.open_file(path)
    assert window.table["zip"].tolist() == ["00094", "02074", "12345"]
    lines = window.data_page.info.text().split("\n")
    assert lines[0] == "codes.csv: 3 records × 2 columns."
    assert lines[1].startswith("Read: Column 'zip' has values written with leading "
                               "zeros, such as '00094' (data row 1)")
    assert lines[1].endswith("remove the zeros in the file and open it again.")
    assert window.status_label.toolTip() == window.status_label.text()
    plain = tmp_path / "plain.csv"
    pd.DataFrame({"age": [30, 40, 50]}).to_csv(plain, index=False)
    assert window.open_file(plain)
    assert window.data_page.info.text() == "plain.csv: 3 records × 1 columns."


def test_xlsx_with_several_sheets_asks_which(window, tmp_path, monkeypatch):
    path = tmp_path / "book.xlsx"
    with pd.ExcelWriter(path) as writer:
        pd.DataFrame({"a": [1, 2]}).to_excel(writer, sheet_name="first", index=False)
        pd.DataFrame({"b": [1, 2, 3]}).to_excel(writer, sheet_name="second", index=False)
    asked = []

    def choose(file_name, names):
        asked.append(names)
        return names[-1]

    monkeypatch.setattr(window, "choose_sheet", choose)
    assert window.open_file(path)
    assert asked == [["first", "second"]]
    assert list(window.table.columns) == ["b"]
    monkeypatch.setattr(window, "choose_sheet", lambda file_name, names: None)
    assert not window.open_file(path)  # the user cancelled: nothing changes
    assert list(window.table.columns) == ["b"]
    assert window.errors == []


def test_errors_are_shown_and_the_window_stays_usable(qtbot, window, tmp_path):
    assert not window.open_file(tmp_path / "missing.csv")
    assert "missing.csv" in window.errors[-1] and "does not exist" in window.errors[-1]
    garbage = tmp_path / "garbage.csv"
    garbage.write_bytes(b"\x00\x01\x02binary\x00junk")
    assert not window.open_file(garbage)
    assert "garbage.csv" in window.errors[-1]
    assert window.table is None and not window.run_action.isEnabled()

    assert window.open_sample()
    for qi in QIS:
        window.role_editor.set_role(qi, Role.NON_CONFIDENTIAL)
    run_and_fail(qtbot, window)
    assert "quasi-identifier" in window.errors[-1].lower()
    window.role_editor.set_role("diagnosis", Role.QUASI_IDENTIFIER)
    window.method_panel.set_method("individual-ranking")  # needs ordered attributes
    run_and_fail(qtbot, window)
    assert "diagnosis" in window.errors[-1] and "nominal" in window.errors[-1]
    window.method_panel.set_method("mdav")
    window.role_editor.set_role("diagnosis", Role.CONFIDENTIAL)
    window.role_editor.set_role("age", Role.QUASI_IDENTIFIER)
    window.method_panel.set_parameter("k", 601)  # more than the 600 records
    run_and_fail(qtbot, window)  # prepare_run reports it before the algorithm starts
    assert "k = 601" in window.errors[-1] and "600" in window.errors[-1]
    assert window.run_action.isEnabled()
    assert window.result is None and not window.export_action.isEnabled()

    window.method_panel.set_parameter("k", 3)
    run_and_wait(qtbot, window)
    assert window.result.verification.passed
    assert not window.export_to(tmp_path / "released.txt")
    assert ".xlsx" in window.errors[-1]


def test_unexpected_engine_error_is_logged_and_shown(qtbot, window, monkeypatch, caplog):
    def broken(*args, state, **kwargs):
        raise ZeroDivisionError("engine bug")

    monkeypatch.setattr(main_window_module, "plan_and_run", broken)
    assert window.open_sample()
    with caplog.at_level(logging.ERROR), \
            qtbot.waitSignal(window.runner.signals.finished, timeout=RUN_TIMEOUT):
        assert window.run()
    assert "ZeroDivisionError" in window.errors[-1] and "engine bug" in window.errors[-1]
    assert "Traceback" not in window.errors[-1]
    assert any(r.exc_info for r in caplog.records)
    assert window.run_action.isEnabled() and window.result is None


def test_cancel_stops_a_long_run_quickly(qtbot, window):
    rng = np.random.default_rng(0)
    big = pd.DataFrame(rng.normal(size=(200_000, 5)), columns=[f"x{i}" for i in range(5)])
    window.set_table(big, "synthetic", roles={c: Role.QUASI_IDENTIFIER for c in big})
    window.method_panel.set_method("mdav")
    window.method_panel.set_parameter("k", 3)
    with qtbot.waitSignal(window.runner.signals.progress, timeout=RUN_TIMEOUT):
        assert window.run()
    assert not window.run_action.isEnabled() and window.cancel_action.isEnabled()
    qtbot.wait(300)  # the window keeps processing events while MDAV runs
    assert window.runner.running
    started = time.monotonic()
    with qtbot.waitSignal(window.runner.signals.cancelled, timeout=2000):
        window.cancel()
    assert time.monotonic() - started < 2.0
    qtbot.waitUntil(lambda: window.run_action.isEnabled(), timeout=2000)
    assert not window.cancel_action.isEnabled() and window.result is None
    assert window.errors == []

    assert window.open_sample()
    run_and_wait(qtbot, window)
    assert window.result.verification.passed


def test_the_progress_gives_the_method_its_estimated_share(qtbot, window, monkeypatch):
    """The bar keeps the clock's pace: the run's progress is split by the Method page's
    estimate of the method's share (at 20 quasi-identifiers record linkage outlasts
    MDAV), and the share is not a setting the history keeps."""
    from microagg_desktop.estimate import estimate_parts, method_share

    seen, real = [], main_window_module.run

    def spy(plan, state, *, method_share=None):
        seen.append(method_share)
        return real(plan, state, method_share=method_share)

    monkeypatch.setattr(main_window_module, "run", spy)
    rng = np.random.default_rng(2)
    wide = pd.DataFrame(rng.normal(size=(2_000, 20)), columns=[f"x{i}" for i in range(20)])
    window.set_table(wide, "wide", roles={c: Role.QUASI_IDENTIFIER for c in wide})
    window.method_panel.set_method("mdav")
    window.method_panel.set_parameter("k", 5)
    run_and_wait(qtbot, window)
    attributes = window.method_panel.attributes
    assert attributes is not None and attributes.count == 20
    expected = method_share(estimate_parts("mdav", 2_000, attributes, k=5))
    assert 0.0 < expected < 1.0 and seen == [pytest.approx(expected)]
    assert window.result.verification.passed
    assert "method_share" not in window.history.records[-1].request


def test_a_new_run_replaces_the_running_one(qtbot, window):
    rng = np.random.default_rng(1)
    big = pd.DataFrame(rng.normal(size=(200_000, 3)), columns=["a", "b", "c"])
    window.set_table(big, "synthetic", roles={c: Role.QUASI_IDENTIFIER for c in big})
    with qtbot.waitSignal(window.runner.signals.started, timeout=RUN_TIMEOUT):
        window.run()
    slow = window.runner.current
    assert window.open_sample()  # opening a table cancels the run on the old one
    run_and_wait(qtbot, window)
    assert slow.state.cancelled
    assert window.result.metrics.n_records == 600


@pytest.mark.parametrize("given", ["file", "--sample"])
def test_app_main_opens_the_file_given(qtbot, tmp_path, monkeypatch, given):
    from microagg_desktop import app as app_module

    QStandardPaths.setTestModeEnabled(True)
    monkeypatch.setattr(sys, "excepthook", sys.excepthook)
    handlers = list(logging.getLogger().handlers)
    path = tmp_path / "given.csv"
    pd.DataFrame({"x": [1.0, 2.0], "y": [3, 4]}).to_csv(path, index=False)
    seen = []

    def run_briefly(app):
        # Instead of the real event loop (which would end pytest-qt's): let the queued
        # open happen, look at the window, close it.
        def shown():
            return [w for w in QApplication.topLevelWidgets()
                    if isinstance(w, MainWindow) and w.isVisible()]

        qtbot.waitUntil(lambda: any(w.table is not None for w in shown()))
        for w in shown():
            seen.append(w.source)
            w.close()
        return 0

    monkeypatch.setattr(QApplication, "exec", run_briefly)
    try:
        argument = str(path) if given == "file" else "--sample"
        assert app_module.main(["microagg-desktop", argument]) == 0
    finally:
        for handler in logging.getLogger().handlers[:]:
            if handler not in handlers:
                logging.getLogger().removeHandler(handler)
                handler.close()
    assert ("given.csv" if given == "file" else "sample_survey.csv") in seen
    assert QApplication.applicationName() == "MicroAgg Desktop"


def test_strata_blocks_refinement_and_merge_offer(qtbot, window, tmp_path):
    """The k-anonymity family from the window: a stratum role, refinement, blocks, and
    the offer to merge a stratum that is too small."""
    table = pd.read_csv(resource_path("sample_survey.csv"))
    table.loc[:2, "region"] = "Island"  # a stratum of 3 records
    path = tmp_path / "survey.csv"
    table.to_csv(path, index=False)
    assert window.open_file(path)
    for qi in ("age", "income", "hours_worked"):
        window.role_editor.set_role(qi, Role.QUASI_IDENTIFIER)
    window.role_editor.set_role("region", "stratum")
    assert window.role_editor.roles().strata == ("region",)
    window.method_panel.set_method("cbfs")
    window.method_panel.set_parameter("k", 5)
    window.method_panel.set_parameter("growth", "nc")
    window.method_panel.set_parameter("refine", "igd")

    offers = []
    window.ask_merge_strata = lambda message, stratum, nearest: offers.append(
        (stratum, nearest)) or False
    with qtbot.waitSignal(window.runner.signals.finished, timeout=RUN_TIMEOUT):
        assert window.run()  # the plan, on the worker, finds the small stratum
    assert offers and offers[0][0] == "Island" and window.errors == []
    assert window.result is None  # the user declined the merge: nothing ran

    window.ask_merge_strata = lambda message, stratum, nearest: True
    assert window.run()
    qtbot.waitUntil(lambda: window.result is not None, timeout=RUN_TIMEOUT)
    result = window.result
    assert result.verification.passed and result.parameters["refine"] == "igd"
    assert result.strata_merges and "Island" in result.strata_merges[0]
    text = window.results_panel.status.text()
    assert text.startswith("✔ Verified") and "within strata of region" in text
    regions = result.masked["region"].to_numpy()
    for g in np.unique(result.labels):
        assert len(set(regions[result.labels == g])) == 1

    window.role_editor.set_role("region", Role.NON_CONFIDENTIAL)
    window.method_panel.set_method("mdav")
    window.method_panel.set_blocks("age,income;hours_worked")
    run_and_wait(qtbot, window)
    assert window.result.blocks == (("age", "income"), ("hours_worked",))
    assert "2 attribute blocks" in window.results_panel.status.text()

    window.method_panel.set_intruder("pairs")
    run_and_wait(qtbot, window)
    assert [sc.known for sc in window.result.measures.scenarios] == [
        ("age", "income"), ("age", "hours_worked"), ("income", "hours_worked")]

    window.method_panel.set_method("individual-ranking")
    assert window.method_panel.blocks() is None  # not offered for per-attribute methods
    run_and_wait(qtbot, window)
    assert window.results_panel.status.text().startswith("⚠ No k-anonymity guarantee")
    assert window.export_action.isEnabled()


def test_t_closeness_method_from_the_window(qtbot, window, tmp_path):
    assert window.open_sample()  # health_spending and diagnosis are confidential
    window.method_panel.set_method("tc-tfirst")
    window.method_panel.set_parameter("k", 4)
    window.method_panel.set_parameter("t", 0.15)
    assert window.method_panel.blocks() is None  # no blocks for whole-table methods
    run_and_wait(qtbot, window)
    result = window.result
    assert result.passed and result.tcloseness.passed
    text = window.results_panel.status.text()
    assert text.startswith("✔ Verified") and "Largest EMD" in text and "t = 0.15" in text
    assert window.export_to(tmp_path / "tc.xlsx")
    items = dict(pd.read_excel(tmp_path / "tc.xlsx", sheet_name="summary",
                               engine="openpyxl").values)
    assert "t-closeness PASSED" in items["t-closeness"]
    assert window.results_panel.values["il1"].text().endswith("%")
    assert window.results_panel.values["risk"].text().count("%") == 3
    assert "health_spending" in window.results_panel.values["emd"].text()
    assert window.report_action.isEnabled()
    assert window.export_report_to(tmp_path / "tc_report.html")
    page = (tmp_path / "tc_report.html").read_text(encoding="utf-8")
    assert "Verification passed" in page and "t-closeness PASSED" in page


def test_bucket_t_closeness_and_laplace_noise_from_the_window(qtbot, window):
    assert window.open_sample()
    window.role_editor.set_role("diagnosis", Role.NON_CONFIDENTIAL)  # one confidential
    window.method_panel.set_method("tc-bucket")
    window.method_panel.set_parameter("k", 5)
    window.method_panel.set_parameter("t", 1.5)
    assert window.method_panel.noise_options() == {}  # noise is for k-anonymity methods
    run_and_wait(qtbot, window)
    assert window.result.passed and window.result.multiplicative
    assert "Largest multiplicative distance" in window.results_panel.status.text()

    window.method_panel.set_method("mdav")
    window.method_panel.set_noise(1.0, "health_spending=0:100")  # values lie above 100
    with qtbot.waitSignal(window.runner.signals.errored, timeout=RUN_TIMEOUT):
        assert window.run()
    assert "health_spending" in window.errors[-1]
    qtbot.waitUntil(window.run_action.isEnabled)
    window.method_panel.set_noise(1.0, "health_spending=0:5000", seed=4)
    run_and_wait(qtbot, window)
    assert window.result.noise is not None and window.result.noise.seed == 4
    assert "stochastic t" in window.results_panel.status.text()

    # By default the noise's seed is fresh for every run (whoever knows it can subtract
    # the noise): the run's record keeps the one it drew, for a project to recompute
    # it; the results do not go stale for it, and no change description states it.
    window.method_panel.set_noise(1.0, "health_spending=0:5000")
    assert window.method_panel.seed_spin.text() == "fresh for every run"
    assert window.method_panel.noise_options()["noise_seed"] is None
    drawn = []
    for _ in range(2):
        run_and_wait(qtbot, window)
        drawn.append(window.result.noise.seed)
        assert window.shown_record.request["noise_seed"] == window.result.noise.seed
        assert not window.results_panel.is_stale and window.stale_text == ""
    assert drawn[0] != drawn[1] and not window.result.noise.seed_given
    window.show_run(window.history.records[-2].number)  # back to the run before
    assert window.method_panel.noise_options()["noise_seed"] is None


def test_nothing_is_ever_written_onto_the_opened_file(qtbot, window, tmp_path):
    """Export, the report and a project saved onto the file the table was read from
    (or another name for it) are refused with a message; the file is unchanged."""
    source = tmp_path / "survey.csv"
    source.write_bytes(resource_path("sample_survey.csv").read_bytes())
    before = source.read_bytes()
    assert window.open_file(source)
    for column in QIS:
        window.role_editor.set_role(column, Role.QUASI_IDENTIFIER)
    window.method_panel.set_method("mdav")
    run_and_wait(qtbot, window)
    assert window.result is not None and window.errors == []
    (tmp_path / "sub").mkdir()
    for write in (window.export_to, window.export_report_to, window.save_project_to):
        for name in (source, tmp_path / "sub" / ".." / "survey.csv"):
            window.errors.clear()
            assert not write(name)
            assert window.errors == ["'survey.csv' is the file the table was read from; "
                                     "MicroAgg Desktop never writes to its input. Choose "
                                     "another name."]
    assert source.read_bytes() == before
    assert window.export_to(tmp_path / "released.csv")  # any other name is written


def test_a_release_with_warnings_says_so_and_export_asks_first(qtbot, window, tmp_path):
    adult = pd.read_csv(shared_data("adult.csv")).head(1500)
    path = tmp_path / "adult.csv"
    adult.to_csv(path, index=False)
    assert window.open_file(path)
    for column in ("age", "education-num"):
        window.role_editor.set_role(column, Role.QUASI_IDENTIFIER)
    window.method_panel.set_method("mdav")
    window.method_panel.set_parameter("k", 5)
    run_and_wait(qtbot, window)
    banner = window.results_panel.status.text()
    assert banner.startswith("⚠ Verified, but read before publishing")
    assert "'education'" in banner and "education-num" in banner
    asked = []
    window.confirm_export = lambda warnings: asked.append(warnings) or False
    target = tmp_path / "released.csv"
    assert not window.export_to(target) and not target.exists()
    assert asked and "education" in asked[0][0]
    window.confirm_export = lambda warnings: True
    assert window.export_to(target) and target.exists()


def test_import_settings_say_what_the_file_is(qtbot, window, tmp_path):
    from microagg_desktop.import_dialog import ImportDialog

    path = tmp_path / "locale.csv"
    rows = [f"{i};{1000 + 37 * i:,}".replace(",", ".") + f",{i % 10}" for i in range(60)]
    path.write_text("id;income\n" + "\n".join(rows) + "\n", encoding="utf-8")
    dialog = ImportDialog(path.name)
    qtbot.addWidget(dialog)
    dialog.decimal.setCurrentIndex(dialog.decimal.findData(","))
    dialog.thousands.setCurrentIndex(dialog.thousands.findData("."))
    options = dialog.options().as_kwargs()
    assert options == {"decimal": ",", "thousands": "."}
    assert window.open_file(path, **options)
    assert window.table["income"].iloc[1] == pytest.approx(1037.1)
    assert window.table["income"].iloc[30] == pytest.approx(2110.0)

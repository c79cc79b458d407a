"""The Results tab (plots drawn lazily, stale banner, tooltips) and the PDF report."""

import re

import pytest
from PySide6.QtWidgets import QComboBox, QLabel

from core import RoleSpec, anonymize, read_table
from microagg_desktop.pdf_report import write_pdf
from microagg_desktop.results_panel import (CHANGES, CLOSENESS, GROUPS, SCATTER,
                                            ResultsPanel)
from microagg_desktop.state import SAMPLE_ROLES


@pytest.fixture(scope="module")
def survey(sample_path):
    return read_table(sample_path)


@pytest.fixture(scope="module")
def mdav(survey):
    return anonymize(survey, RoleSpec.from_mapping(SAMPLE_ROLES), "mdav", k=5)


@pytest.fixture()
def panel(qtbot):
    widget = ResultsPanel()
    qtbot.addWidget(widget)
    widget.resize(1024, 640)
    return widget


def test_only_the_visible_plot_is_built(panel, mdav, survey):
    panel.show_result(mdav, survey)
    assert panel.result is mdav and panel.original is survey
    assert panel.plots.currentIndex() == GROUPS and panel.plots.is_built(GROUPS)
    assert not any(panel.plots.is_built(i) for i in (CLOSENESS, SCATTER, CHANGES))
    panel.plots.setCurrentIndex(CHANGES)
    assert panel.plots.is_built(CHANGES) and not panel.plots.is_built(SCATTER)
    title = panel.plots.canvases[CHANGES].figure._suptitle.get_text()
    assert title.startswith("Change in means")
    panel.show_result(mdav, survey)  # a new result: the shown tab again, only it
    assert panel.plots.is_built(CHANGES) and not panel.plots.is_built(GROUPS)


def test_the_attribute_choosers_redraw_the_scatter(panel, mdav, survey):
    panel.show_result(mdav, survey)
    panel.plots.setCurrentIndex(SCATTER)
    assert (panel.scatter_x.currentText(), panel.scatter_y.currentText()) == (
        "age", "years_education")
    panel.scatter_y.setCurrentText("income")
    figure = panel.plots.canvases[SCATTER].figure
    assert figure._suptitle.get_text().startswith("'age' against 'income'")
    assert figure.axes[0].get_ylabel() == "income"


def test_without_the_original_the_comparing_tabs_say_so(panel, mdav):
    panel.show_result(mdav)
    panel.plots.setCurrentIndex(CHANGES)
    canvas = panel.plots.canvases[CHANGES]
    assert canvas.figure is None and "original table is not available" in canvas.message.text()
    panel.plots.setCurrentIndex(CLOSENESS)
    assert panel.plots.is_built(CLOSENESS)


def test_stale_banner(panel, mdav, survey):
    panel.show()
    panel.show_result(mdav, survey)
    assert not panel.is_stale and not panel.stale_banner.isVisible()
    panel.set_stale("k changed from 5 to 3")
    assert panel.is_stale and panel.stale_banner.isVisible()
    assert panel.stale_banner.text().endswith(
        "These results no longer match the settings: k changed from 5 to 3. Run again, or "
        "go back to this run in the history.")
    panel.set_stale(None)
    assert not panel.is_stale and not panel.stale_banner.isVisible()
    panel.set_stale("the roles changed")
    panel.show_result(mdav, survey)  # a fresh result matches the settings
    assert not panel.is_stale
    panel.set_stale("the roles changed")
    panel.clear()
    assert not panel.is_stale and panel.result is None


def test_every_measure_and_control_is_explained(panel, mdav, survey):
    panel.show_result(mdav, survey)
    for key, value in panel.values.items():
        assert value.toolTip().strip(), key
        assert value.accessibleName(), key
        assert value.text() != "—" or key in ("emd",), key
    controls = [panel.plots, panel.scatter_x, panel.scatter_y, panel.masked_view,
                panel.stale_banner, panel.status, *panel.plots.canvases]
    for control in controls:
        assert control.accessibleName() and control.toolTip(), control
    for index in range(panel.plots.count()):
        assert panel.plots.tabToolTip(index)
    assert all(c.focusPolicy() != 0 for c in panel.findChildren(QComboBox))


def test_small_window_scrolls_instead_of_clipping(panel, mdav, survey, qtbot):
    panel.show_result(mdav, survey)
    panel.show()
    qtbot.waitExposed(panel)
    content = panel.scroll.widget()
    assert content.height() >= content.minimumHeight() > panel.scroll.viewport().height()
    assert panel.scroll.verticalScrollBar().maximum() > 0
    assert panel.plots.height() >= 460


def test_summary_values_get_every_wrapped_line_under_a_tall_banner(qtbot, survey):
    """A release warned about fills the banner with several lines, and its summary
    values wrap (five quasi-identifiers, classes that merged groups): every value label
    gets the height its text needs at its width, so no line is cut off."""
    roles = RoleSpec(quasi_identifiers=("age", "years_education", "income", "hours_worked",
                                        "household_size"), identifiers=("person_id",),
                     confidential=("health_spending", "diagnosis"))
    result = anonymize(survey, roles, "mdav", k=3,
                       blocks="age,years_education;income,hours_worked,household_size")
    assert result.warnings
    widget = ResultsPanel()
    qtbot.addWidget(widget)
    widget.resize(1280, 689)
    widget.show()
    qtbot.waitExposed(widget)
    widget.show_result(anonymize(survey, roles, "mdav", k=3), survey)  # a run before
    qtbot.wait(50)
    widget.show_result(result, survey)
    qtbot.wait(50)
    for key in ("qi", "classes", "method", "emd"):
        label = widget.values[key]
        assert label.height() >= label.heightForWidth(label.width()), key


def test_pdf_report_has_pages_and_images(tmp_path, qtbot, survey, sample_path):
    roles = RoleSpec(quasi_identifiers=("age", "years_education", "income"),
                     confidential=("health_spending",), identifiers=("person_id",))
    result = anonymize(survey, roles, "tc-tfirst", k=5, t=0.3)
    path = write_pdf(result, tmp_path / "report.pdf", input_path=sample_path,
                     original=survey)
    data = path.read_bytes()
    assert data.startswith(b"%PDF")
    assert len(re.findall(rb"/Type\s*/Page[^s]", data)) >= 3
    assert len(re.findall(rb"/Subtype\s*/Image", data)) >= 4
    assert [p.name for p in tmp_path.iterdir()] == ["report.pdf"]  # no temporary left


def test_pdf_report_on_a_worker_deletes_its_qt_objects_there(tmp_path, qtbot, survey, mdav,
                                                             monkeypatch):
    """The document and the PDF writer made on a worker thread are deleted on it:
    matplotlib's mathtext keeps tracebacks (and so the frames that made the document)
    until its next parse, and a document destroyed later from the GUI thread made Qt
    report "QBasicTimer::stop: Failed" (pdf_report's notes)."""
    import threading

    import shiboken6

    from microagg_desktop import pdf_report

    made = []
    document_of = pdf_report.report_document

    def recorded_document(*args, **kwargs):
        made.append(document_of(*args, **kwargs))
        return made[-1]

    class RecordedWriter(pdf_report.QPdfWriter):
        def __init__(self, *args):
            super().__init__(*args)
            made.append(self)

    monkeypatch.setattr(pdf_report, "report_document", recorded_document)
    monkeypatch.setattr(pdf_report, "QPdfWriter", RecordedWriter)
    written = []
    worker = threading.Thread(target=lambda: written.append(
        write_pdf(mdav, tmp_path / "report.pdf", original=survey)))
    worker.start()
    worker.join(120)
    assert written and written[0].read_bytes().startswith(b"%PDF")
    assert [type(thing).__name__ for thing in made] == ["QTextDocument", "RecordedWriter"]
    assert not any(shiboken6.isValid(thing) for thing in made)  # deleted on the worker


def test_banner_of_a_release_with_records_set_aside_says_what_was_verified(panel, survey):
    table = survey.copy()
    table.loc[[4, 40], "age"] = float("nan")
    roles = RoleSpec(quasi_identifiers=("age", "income"), identifiers=("person_id",),
                     confidential=("health_spending",))
    result = anonymize(table, roles, "mdav", k=5, missing="exclude", dp_epsilon=1.0,
                       confidential_bounds={"health_spending": (0, 5000)})
    panel.show_result(result, table)
    text = panel.status.text()
    assert text.startswith("⚠ Verified, but read before publishing: 2 records with missing")
    assert "every class of the masked records has ≥ 5 records" in text
    assert "Every masked record is indistinguishable" in text
    assert "Every released record" not in text
    assert text.count("Laplace noise") == 1  # said once, in the guarantee's sentence


def test_banner_puts_each_warning_on_a_line_of_its_own(panel, survey):
    """Two findings of the follows check: each starts its own line, the verdict last."""
    import numpy as np

    table = survey.copy()
    rng = np.random.default_rng(4)
    table["wages"] = (table["income"] * rng.uniform(0.3, 0.7, len(table))).round(0)
    table["other_income"] = table["income"] - table["wages"]
    table["income_per_hour"] = (table["income"] / table["hours_worked"]).round(2)
    roles = RoleSpec(quasi_identifiers=("age", "years_education", "income", "hours_worked"),
                     identifiers=("person_id",), confidential=("wages", "other_income"),
                     non_confidential=("income_per_hour",))
    result = anonymize(table, roles, "mdav", k=5)
    panel.show_result(result, table)
    lines = panel.status.text().split("\n")
    assert len(result.warnings) == 2 and len(lines) == 3
    assert lines[0].startswith("⚠ Verified, but read before publishing: Column "
                               "'income_per_hour', released as it is, nearly follows")
    assert lines[1].startswith("⚠ Columns 'wages' and 'other_income', released as they are")
    assert lines[2].startswith("✔ Verified: every class has ≥ 5 records")

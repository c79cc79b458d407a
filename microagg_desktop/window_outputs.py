"""The window's outputs: the released table, the report (HTML or PDF), the equivalent
command line. Writing runs on the worker, never on the GUI thread.

A mixin of :class:`~.main_window.MainWindow`; :meth:`OutputsMixin.export_to` and
:meth:`OutputsMixin.export_report_to` do the work, the dialogs only ask for a name.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QFileDialog, QMessageBox

from core import get_method
import core.project as projects
from core.report.documents import export_result, write_report
from microagg_desktop.pdf_report import write_pdf

__all__ = ["OutputsMixin", "export_task", "report_task"]

XLSX_FILTER, CSV_FILTER = "Excel workbook (*.xlsx)", "CSV file (*.csv)"
HTML_FILTER, PDF_FILTER = "HTML report (*.html)", "PDF report (*.pdf)"


def export_task(result, path, *, state, source=""):
    """The worker's task for Export: the released table, atomically."""
    state.step(0.0, f"Writing {Path(path).name}…")
    return export_result(result, path, source=source, state=state)


def report_task(result, path, *, state, **keywords):
    """The worker's task for the report: PDF through Qt's writer, else HTML."""
    if Path(path).suffix.lower() == ".pdf":
        return write_pdf(result, path, state=state, **keywords)
    return write_report(result, path, state=state, **keywords)


class OutputsMixin:
    """Export, report and copy-as-command; needs ``MainWindow``'s attributes."""

    def _exportable(self) -> bool:
        result = self.result
        return result is not None and (result.passed or
                                       not get_method(result.method).guarantee.record_level)

    def _stem(self) -> str:
        return (self.data_path.stem if self.data_path is not None
                else Path(self.source.split(" [")[0]).stem) or "released"

    def export_dialog(self) -> None:
        """Ask for a file name (.xlsx by default, or .csv), then :meth:`export_to` it."""
        if not self._exportable():
            self.show_error("There is no verified result to export yet. Run a method first.")
            return
        suggested = str(Path(self.recent.folder(self.default_folder))
                        / f"{self._stem()}_masked.xlsx")
        path, chosen = QFileDialog.getSaveFileName(
            self, "Export the released table", suggested, f"{XLSX_FILTER};;{CSV_FILTER}",
            XLSX_FILTER)
        if not path:
            return
        if Path(path).suffix.lower() not in (".xlsx", ".csv"):
            path += ".csv" if chosen == CSV_FILTER else ".xlsx"
        self.export_to(path, wait=False)

    def export_to(self, path, *, wait: bool = True) -> bool:
        """Write the shown result to ``path`` (.xlsx with a summary sheet, or .csv).

        Asks first when the release has warnings or no longer matches the settings.
        With ``wait`` the call returns once the file is written (scripts and tests).
        """
        result = self.result
        if result is None or not self._exportable():
            self.show_error("There is no verified result to export yet. Run a method first.")
            return False
        if self.refuse_input_path(path):
            return False
        questions = [w.message for w in result.warnings]
        if self.results_panel.is_stale:
            questions.insert(0, "These results no longer match the settings on the Roles "
                                "and Method tabs: " + self.stale_text)
        if questions and not self.confirm_export(questions):
            self.set_status("Not exported.")
            return False
        record = self.shown_record
        done_path: list[Path] = []

        def done(written):
            done_path.append(Path(written))
            self.recent.set_folder(Path(written).parent)
            if record is not None:
                self.history.mark_exported(record.number)
            self.set_status(f"Exported to {written}.")

        self.start_io(export_task, result, Path(path), source=self.source,
                      message=f"Exporting to {Path(path).name}…", done=done, writes=True)
        if wait:
            self.wait_for_io()
            return bool(done_path)
        return True

    def confirm_export(self, warnings: list[str]) -> bool:
        """Ask before exporting a release with warnings (tests replace this)."""
        text = ("Read this before exporting:\n\n" + "\n\n".join(f"• {w}" for w in warnings)
                + "\n\nExport it anyway?")
        answer = QMessageBox.warning(
            self, self.APP_TITLE, text,
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
            QMessageBox.StandardButton.No)
        return answer == QMessageBox.StandardButton.Yes

    def export_report_dialog(self) -> None:
        """Ask for an .html or .pdf file name, then :meth:`export_report_to` it."""
        if self.result is None:
            self.show_error("There is no result to report yet. Run a method first.")
            return
        suggested = str(Path(self.recent.folder(self.default_folder))
                        / f"{self._stem()}_report.html")
        path, chosen = QFileDialog.getSaveFileName(
            self, "Export the report", suggested, f"{HTML_FILTER};;{PDF_FILTER}",
            HTML_FILTER)
        if path:
            if Path(path).suffix.lower() not in (".html", ".pdf"):
                path += ".pdf" if chosen == PDF_FILTER else ".html"
            self.export_report_to(path, wait=False)

    def export_report_to(self, path, *, wait: bool = True) -> bool:
        """Write the report of the shown result (HTML, or PDF for a ``.pdf`` name);
        asks first when the result no longer matches the settings, as Export does."""
        result = self.result
        if result is None:
            self.show_error("There is no result to report yet. Run a method first.")
            return False
        if self.refuse_input_path(path):
            return False
        if self.results_panel.is_stale and not self.confirm_export(
                ["These results no longer match the settings on the Roles and Method "
                 "tabs: " + self.stale_text + ". The report describes the run shown."]):
            self.set_status("No report written.")
            return False
        written_paths: list[Path] = []

        def done(written):
            written_paths.append(Path(written))
            self.set_status(f"Report written to {written}.")

        record = self.shown_record
        self.start_io(report_task, result, Path(path), source=self.source,
                      run=None if record is None else f"{record.label} of this session",
                      input_path=self.data_path,
                      input_sha256=self.data_sha256, original=self.table,
                      message=f"Writing the report {Path(path).name}…", done=done,
                      writes=True)
        if wait:
            self.wait_for_io()
            return bool(written_paths)
        return True

    # -- the equivalent command ---------------------------------------------------------

    def command_for(self, record=None) -> str:
        """The ``microagg anonymize`` command line that reproduces ``record`` (default:
        the run shown)."""
        record = record or self.shown_record
        if record is None or self.data_path is None:
            raise ValueError("no run to describe")
        settings = projects.RunSettings.from_request(record.request)
        output = Path(self.recent.folder(self.default_folder)) / \
            f"{self._stem()}_run{record.number}.csv"
        return projects.command_line(settings, record.request["roles"], self.data_path,
                                     output, read_settings=projects.ReadSettings(
                                         **self.read_settings))

    def copy_command(self) -> str | None:
        """Put the equivalent command line of the shown run on the clipboard."""
        if self.shown_record is None or self.data_path is None:
            self.show_error("Run a method on a table opened from a file first; the "
                            "command line reads that file.")
            return None
        command = self._guarded("writing the command line", self.command_for)
        if command is None:
            return None
        QGuiApplication.clipboard().setText(command)
        self.set_status("Copied the equivalent command line to the clipboard.")
        return command

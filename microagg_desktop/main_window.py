"""The main window: open a table, choose roles and a method, run, inspect, export.

Every dialog is a thin wrapper around a method that does the work without one
(:meth:`MainWindow.open_file`, :meth:`MainWindow.export_to`), and every error reaches the
user through :meth:`MainWindow.show_error`, so tests drive the window without modal
dialogs. The computation runs on a :class:`~.worker.TaskRunner`; the window only reacts
to its signals.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from pathlib import Path

import pandas as pd
from PySide6.QtCore import QStandardPaths, Qt
from PySide6.QtGui import QAction, QCloseEvent, QGuiApplication, QKeySequence
from PySide6.QtWidgets import (QFileDialog, QInputDialog, QLabel, QMainWindow, QMessageBox,
                               QProgressBar, QStyle, QTabWidget, QToolBar, QVBoxLayout,
                               QWidget)

from core import (AnonymizationResult, MicroaggError, Role, SmallStratumError, TaskState,
                  get_method, prepare_run, read_table, run)
from core.io import READABLE_SUFFIXES, read_table_with_report, sheet_names
from core.report.documents import export_result, write_report
from microagg_desktop.import_dialog import ImportDialog
from microagg_desktop.method_panel import MethodPanel
from microagg_desktop.paths import resource_path
from microagg_desktop.results_panel import ResultsPanel
from microagg_desktop.role_editor import RoleEditor
from microagg_desktop.state import SAMPLE_ROLES
from microagg_desktop.table_model import DataFrameModel
from microagg_desktop.table_view import DataFrameView
from microagg_desktop.worker import TaskRunner

__all__ = ["MainWindow"]

log = logging.getLogger(__name__)

APP_TITLE = "MicroAgg Desktop"
SAMPLE_NAME = "sample_survey.csv"
_OPEN_FILTER = ("Tables ({});;All files (*)"
                .format(" ".join(f"*{suffix}" for suffix in READABLE_SUFFIXES)))
_XLSX_FILTER, _CSV_FILTER = "Excel workbook (*.xlsx)", "CSV file (*.csv)"


def plan_and_run(table, *, state: TaskState, roles, method, **options):
    """The worker's task: :func:`core.prepare_run`, then :func:`core.pipeline.run`.

    A stratum smaller than k is returned (not raised) so the window can offer to merge
    it and start again.
    """
    try:
        plan = prepare_run(table, roles, method, **options)
    except SmallStratumError as error:
        return error
    return run(plan, state)


class MainWindow(QMainWindow):
    """The application's one window.

    Attributes
    ----------
    table : DataFrame or None
        The table opened last; never modified.
    source : str
        Its file name (shown in the title, written into the export's summary).
    runner : TaskRunner
        Runs :func:`core.anonymize`; tests wait on ``runner.signals``.
    """

    def __init__(self, parent=None):
        super().__init__(parent)
        self._request: dict = {}  # the settings of the last run started
        self.table: pd.DataFrame | None = None
        self.source = ""
        self._last_folder = QStandardPaths.writableLocation(
            QStandardPaths.StandardLocation.DocumentsLocation)
        self.runner = TaskRunner(self)

        self.data_view = DataFrameView(self)
        self.data_info = QLabel("Open a table (CSV, XLSX or Stata .dta) with File ▸ Open…, "
                                "or try the bundled sample with Open sample.", self)
        self.data_info.setWordWrap(True)
        self.data_page = QWidget(self)
        data_layout = QVBoxLayout(self.data_page)
        data_layout.addWidget(self.data_info)
        data_layout.addWidget(self.data_view, 1)

        self.role_editor = RoleEditor(self)
        self.method_panel = MethodPanel(self)
        self.results_panel = ResultsPanel(self)
        self.tabs = QTabWidget(self)
        self.tabs.setDocumentMode(True)
        self.tabs.addTab(self.data_page, "1  Data")
        self.tabs.addTab(self.role_editor, "2  Roles")
        self.tabs.addTab(self.method_panel, "3  Method")
        self.tabs.addTab(self.results_panel, "4  Results")
        self.setCentralWidget(self.tabs)

        self.progress = QProgressBar(self)
        self.progress.setRange(0, 1000)
        self.progress.setFixedWidth(260)
        self.progress.setTextVisible(True)
        self.progress.setFormat("%p%")
        self.progress.setValue(0)
        self.status_label = QLabel("Ready.", self)
        self.statusBar().addWidget(self.status_label, 1)
        self.statusBar().addPermanentWidget(self.progress)

        self._make_actions()
        self._connect_runner()
        self.setWindowTitle(APP_TITLE)
        self.resize(1200, 800)
        self._update_actions()

    # -- construction -------------------------------------------------------------------

    def _make_actions(self) -> None:
        icon = self.style().standardIcon
        pixmap = QStyle.StandardPixmap

        def action(text: str, slot: Callable, shortcut=None, icon_name=None, tip=""):
            act = QAction(text, self)
            if shortcut is not None:
                act.setShortcuts(shortcut if isinstance(shortcut, list) else [shortcut])
            if icon_name is not None:
                act.setIcon(icon(icon_name))
            act.setStatusTip(tip)
            act.setToolTip(tip or text)
            act.triggered.connect(slot)
            return act

        self.open_action = action("&Open…", self.open_dialog, QKeySequence.StandardKey.Open,
                                  pixmap.SP_DialogOpenButton, "Open a CSV, XLSX or DTA table")
        self.open_settings_action = action(
            "Open with &settings…", self.open_with_settings_dialog, None, None,
            "Open a table and say its separators, encoding or header line")
        self.sample_action = action("Open &sample", self.open_sample, None,
                                    pixmap.SP_FileIcon,
                                    "Open the bundled synthetic survey (600 records)")
        self.run_action = action("&Run", self.run,
                                 [QKeySequence("Ctrl+R"), QKeySequence("F5")],
                                 pixmap.SP_MediaPlay, "Microaggregate with the chosen method")
        self.cancel_action = action("&Cancel", self.cancel, QKeySequence("Esc"),
                                    pixmap.SP_MediaStop, "Stop the running method")
        self.export_action = action("&Export…", self.export_dialog, QKeySequence("Ctrl+E"),
                                    pixmap.SP_DialogSaveButton,
                                    "Save the released table and its summary")
        self.report_action = action("Export &report…", self.export_report_dialog, None,
                                    pixmap.SP_FileDialogDetailedView,
                                    "Save an HTML report of the parameters, metrics and "
                                    "verification")
        self.quit_action = action("&Quit", self.close, QKeySequence.StandardKey.Quit)

        toolbar = QToolBar("Main", self)
        toolbar.setObjectName("main_toolbar")
        toolbar.setMovable(False)
        toolbar.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        for act in (self.open_action, self.sample_action, None, self.run_action,
                    self.cancel_action, None, self.export_action, self.report_action):
            toolbar.addSeparator() if act is None else toolbar.addAction(act)
        self.addToolBar(toolbar)

        menu = self.menuBar()
        file_menu = menu.addMenu("&File")
        for act in (self.open_action, self.open_settings_action, self.sample_action, None,
                    self.export_action,
                    self.report_action, None, self.quit_action):
            file_menu.addSeparator() if act is None else file_menu.addAction(act)
        run_menu = menu.addMenu("&Run")
        run_menu.addAction(self.run_action)
        run_menu.addAction(self.cancel_action)

    def _connect_runner(self) -> None:
        signals = self.runner.signals
        signals.started.connect(self._on_started)
        signals.progress.connect(self._on_progress)
        signals.returned.connect(self._on_returned)
        signals.errored.connect(self._on_errored)
        signals.cancelled.connect(self._on_cancelled)
        signals.finished.connect(self._on_finished)

    # -- state of the actions -----------------------------------------------------------

    @property
    def data_model(self) -> DataFrameModel:
        """The model of the Data tab."""
        return self.data_view.model()

    @property
    def result(self) -> AnonymizationResult | None:
        """The result shown in the Results tab."""
        return self.results_panel.result

    def _exportable(self) -> bool:
        result = self.result
        return result is not None and (result.passed or
                                       not get_method(result.method).guarantee.record_level)

    def _update_actions(self) -> None:
        running = self.runner.running
        self.run_action.setEnabled(self.table is not None and not running)
        self.cancel_action.setEnabled(running)
        self.export_action.setEnabled(self._exportable() and not running)
        self.report_action.setEnabled(self.result is not None and not running)
        self.open_action.setEnabled(True)
        self.sample_action.setEnabled(True)

    def set_status(self, text: str) -> None:
        """Show ``text`` in the status bar."""
        self.status_label.setText(text)

    # -- errors -------------------------------------------------------------------------

    def show_error(self, text: str) -> None:
        """Tell the user what went wrong (a modal message box; tests replace this)."""
        log.info("error shown to the user: %s", text)
        self.set_status("Error: " + text.splitlines()[0] if text else "Error.")
        QMessageBox.critical(self, APP_TITLE, text)

    def _guarded(self, what: str, function: Callable, *args):
        """Call ``function``; turn any exception into :meth:`show_error`, never a crash."""
        try:
            return function(*args)
        except MicroaggError as error:
            self.show_error(str(error))
        except Exception as error:
            log.exception("unexpected error while %s", what)
            self.show_error(f"Unexpected error while {what} ({type(error).__name__}): "
                            f"{error}. Details were written to the log.")
        return None

    # -- opening ------------------------------------------------------------------------

    def open_dialog(self) -> None:
        """Ask for a table file, then :meth:`open_file` it."""
        path, _ = QFileDialog.getOpenFileName(self, "Open a table", self._last_folder,
                                              _OPEN_FILTER)
        if path:
            self.open_file(path)

    def open_sample(self) -> bool:
        """Open the bundled sample survey with its roles preset."""
        def load():
            path = resource_path(SAMPLE_NAME)
            table = read_table(path)
            self.set_table(table, path.name, roles=SAMPLE_ROLES)
            return True
        return bool(self._guarded("opening the sample", load))

    def open_file(self, path: str | Path, sheet: str | None = None, **options) -> bool:
        """Read ``path`` (asking for the sheet of a multi-sheet workbook) and show it.

        ``options`` are the import settings of :func:`core.io.read_table_with_report`
        (delimiter, decimal, thousands, encoding, skip_rows, header_row); what the reader
        noticed (a dropped empty row, a detected thousands separator) is shown in the
        status bar.

        Returns
        -------
        bool
            True if a table was opened; on failure :meth:`show_error` was called.
        """
        return bool(self._guarded("opening a file", self._open_file, Path(path), sheet,
                                  options))

    def open_with_settings_dialog(self) -> None:
        """Ask for a file, then for its import settings, then open it."""
        path, _ = QFileDialog.getOpenFileName(self, "Open a table with settings",
                                              self._last_folder, _OPEN_FILTER)
        if not path:
            return
        sheets = None
        if Path(path).suffix.lower() in (".xlsx", ".xlsm"):
            sheets = self._guarded("reading the sheet names", sheet_names, path)
            if sheets is None:
                return
        dialog = ImportDialog(Path(path).name, sheets, self)
        if dialog.exec() == ImportDialog.DialogCode.Accepted:
            self.open_file(path, **dialog.options().as_kwargs())

    def _open_file(self, path: Path, sheet: str | None, options: dict | None = None) -> bool:
        if sheet is None and path.suffix.lower() in (".xlsx", ".xlsm") and path.is_file():
            names = sheet_names(path)
            if len(names) > 1:
                sheet = self.choose_sheet(path.name, names)
                if sheet is None:
                    return False
        QGuiApplication.setOverrideCursor(Qt.CursorShape.WaitCursor)
        try:
            table, report = read_table_with_report(path, sheet=sheet, **(options or {}))
        finally:
            QGuiApplication.restoreOverrideCursor()
        self._last_folder = str(path.parent)
        self.set_table(table, path.name + (f" [{sheet}]" if sheet else ""))
        if report.notes:
            self.set_status(f"Opened {path.name}. " + " ".join(report.notes))
        return True

    def choose_sheet(self, file_name: str, names: list[str]) -> str | None:
        """Ask which worksheet to open (the first is preselected); None if cancelled."""
        name, ok = QInputDialog.getItem(
            self, "Choose a sheet", f"'{file_name}' has several sheets. Open which one?",
            names, 0, False)
        return name if ok and name else None

    def set_table(self, table: pd.DataFrame, source: str = "",
                  roles: Mapping[str, Role | str] | None = None) -> None:
        """Show ``table`` (not copied) and describe its columns; forget the last result.

        A running computation on the previous table is cancelled.
        """
        self.runner.cancel()
        self.table, self.source = table, source
        self.data_view.show_frame(DataFrameModel(table, parent=self.data_view))
        self.data_info.setText(f"{source or 'Table'}: {len(table):,} records × "
                               f"{table.shape[1]} columns.")
        self.role_editor.set_table(table, roles)
        self.results_panel.clear()
        self.progress.setValue(0)
        self.setWindowTitle(f"{source} — {APP_TITLE}" if source else APP_TITLE)
        self.set_status(f"Opened {source or 'a table'}. Check the roles, then Run.")
        self.tabs.setCurrentWidget(self.role_editor if roles else self.data_page)
        self._update_actions()

    # -- running ------------------------------------------------------------------------

    def run(self) -> bool:
        """Start the chosen method on the current table (a running one is cancelled).

        Everything is checked and prepared on the worker (:func:`core.prepare_run`), so
        even a large table never blocks the window; a mistake comes back as an error
        message, a too-small stratum as the offer to merge it.

        Returns
        -------
        bool
            True if a run was started.
        """
        if self.table is None:
            self.show_error("Open a table first (File ▸ Open… or Open sample).")
            return False
        parameters = self._guarded("checking the parameters", self.method_panel.parameters)
        if parameters is None:
            return False
        self._request = {
            "roles": self.role_editor.roles(), "method": self.method_panel.method_name(),
            "blocks": self.method_panel.blocks(), "merge_small_strata": False,
            "intruder": self.method_panel.intruder(), **self.method_panel.noise_options(),
            **parameters,
        }
        self._start_run()
        return True

    def _start_run(self) -> None:
        self.results_panel.clear()
        self.runner.start(plan_and_run, self.table, **self._request)
        self.set_status(f"Checking the settings, then running "
                        f"{get_method(self._request['method']).label}…")
        self._update_actions()

    def ask_merge_strata(self, message: str, stratum: str, nearest: str) -> bool:
        """Offer to merge a too-small stratum into its nearest one (tests replace this)."""
        answer = QMessageBox.question(
            self, APP_TITLE,
            f"{message}\n\nMerge small strata with their nearest stratum and run? Merged "
            f"strata are released under a combined label (e.g. '{nearest} + {stratum}').",
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
            QMessageBox.StandardButton.No)
        return answer == QMessageBox.StandardButton.Yes

    def cancel(self) -> None:
        """Ask the running method to stop; the window stays usable meanwhile."""
        if self.runner.running:
            self.runner.cancel()
            self.cancel_action.setEnabled(False)
            self.set_status("Cancelling…")

    def _on_started(self) -> None:
        self.progress.setValue(0)
        self._update_actions()

    def _on_progress(self, fraction: float, message: str) -> None:
        self.progress.setValue(round(fraction * 1000))
        if message:
            self.set_status(message)

    def _on_returned(self, result: AnonymizationResult | SmallStratumError) -> None:
        if isinstance(result, SmallStratumError):
            self.progress.setValue(0)
            if self.ask_merge_strata(str(result), result.stratum, result.nearest):
                self._request["merge_small_strata"] = True
                self._start_run()
            else:
                self.set_status("Not run: a stratum is smaller than k.")
            return
        self.results_panel.show_result(result)
        self.progress.setValue(1000)
        verdict = "verified" if result.passed else "NOT verified"
        self.set_status(f"Done in {result.seconds:.2f} s: IL {result.metrics.il:.2f} %, "
                        f"{verdict}.")
        self.tabs.setCurrentWidget(self.results_panel)

    def _on_errored(self, text: str) -> None:
        self.progress.setValue(0)
        self.show_error(text)  # looked up at call time, so tests can replace it

    def _on_cancelled(self) -> None:
        self.progress.setValue(0)
        self.set_status("Run cancelled.")

    def _on_finished(self) -> None:
        self._update_actions()

    # -- exporting ----------------------------------------------------------------------

    def export_dialog(self) -> None:
        """Ask for a file name (.xlsx by default, or .csv), then :meth:`export_to` it."""
        if not self._exportable():
            self.show_error("There is no verified result to export yet. Run a method first.")
            return
        stem = Path(self.source.split(" [")[0]).stem or "released"
        suggested = str(Path(self._last_folder) / f"{stem}_masked.xlsx")
        path, chosen = QFileDialog.getSaveFileName(
            self, "Export the released table", suggested, f"{_XLSX_FILTER};;{_CSV_FILTER}",
            _XLSX_FILTER)
        if not path:
            return
        if Path(path).suffix.lower() not in (".xlsx", ".csv"):
            path += ".csv" if chosen == _CSV_FILTER else ".xlsx"
        self.export_to(path)

    def export_to(self, path: str | Path) -> bool:
        """Write the current result to ``path`` (.xlsx with a summary sheet, or .csv)."""
        result = self.result
        if result is None or not self._exportable():
            self.show_error("There is no verified result to export yet. Run a method first.")
            return False
        if result.warnings and not self.confirm_export(
                [w.message for w in result.warnings]):
            self.set_status("Not exported: the release has warnings.")
            return False

        def write():
            QGuiApplication.setOverrideCursor(Qt.CursorShape.WaitCursor)
            try:
                return export_result(result, path, source=self.source)
            finally:
                QGuiApplication.restoreOverrideCursor()

        written = self._guarded("exporting", write)
        if written is None:
            return False
        self._last_folder = str(Path(written).parent)
        self.set_status(f"Exported to {written}.")
        return True

    def confirm_export(self, warnings: list[str]) -> bool:
        """Ask before exporting a release with warnings (tests replace this)."""
        text = ("This release passed verification, but it should not be published as it "
                "is:\n\n" + "\n\n".join(f"• {w}" for w in warnings)
                + "\n\nExport it anyway?")
        answer = QMessageBox.warning(
            self, APP_TITLE, text,
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
            QMessageBox.StandardButton.No)
        return answer == QMessageBox.StandardButton.Yes

    def export_report_dialog(self) -> None:
        """Ask for an .html file name, then :meth:`export_report_to` it."""
        if self.result is None:
            self.show_error("There is no result to report yet. Run a method first.")
            return
        stem = Path(self.source.split(" [")[0]).stem or "released"
        path, _ = QFileDialog.getSaveFileName(
            self, "Export the report", str(Path(self._last_folder) / f"{stem}_report.html"),
            "HTML report (*.html)")
        if path:
            if Path(path).suffix.lower() != ".html":
                path += ".html"
            self.export_report_to(path)

    def export_report_to(self, path: str | Path) -> bool:
        """Write the HTML report of the current result (also for an unverified one)."""
        result = self.result
        if result is None:
            self.show_error("There is no result to report yet. Run a method first.")
            return False
        written = self._guarded("writing the report",
                                lambda: write_report(result, path, source=self.source))
        if written is None:
            return False
        self.set_status(f"Report written to {written}.")
        return True

    # -- closing ------------------------------------------------------------------------

    def closeEvent(self, event: QCloseEvent) -> None:
        """Stop a running method before the window goes away."""
        self.runner.cancel()
        self.runner.wait(5000)
        super().closeEvent(event)

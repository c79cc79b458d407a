"""The main window: the release workbench.

Data → Roles → Method → Results, with every run kept in the History (select, compare,
go back), a Sweep over k or t, and project files. Every dialog is a thin wrapper around a
method that does the work without one (:meth:`~.window_files.FilesMixin.open_file`,
:meth:`~.window_outputs.OutputsMixin.export_to`...), and every error reaches the user
through :meth:`MainWindow.show_error`, so tests drive the window without modal dialogs.
Computations run on :class:`~.worker.TaskRunner` s: ``runner`` for runs and sweeps,
``io_runner`` for reading and writing files; the window only reacts to their signals.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, MutableMapping
from pathlib import Path

import pandas as pd
from PySide6.QtCore import QStandardPaths, Qt
from PySide6.QtGui import QAction, QCloseEvent, QKeySequence
from PySide6.QtWidgets import (QFileDialog, QLabel, QMainWindow, QMessageBox, QProgressBar, QSplitter,
                               QStyle, QTabWidget, QToolBar)

from core import (AnonymizationResult, MicroaggError, RoleSpec, SmallStratumError,
                  TaskState, get_method, prepare_run, read_table, run)
from core.pipeline.sweep import sweep
from core.project import RunSettings
from microagg_desktop.compare_view import CompareView
from microagg_desktop.data_page import DataPage
from microagg_desktop.help_dialogs import AboutDialog, GuideDialog
from microagg_desktop.history import History
from microagg_desktop.history_panel import HistoryPanel
from microagg_desktop.method_panel import MethodPanel
from microagg_desktop.paths import resource_path
from microagg_desktop.progress_clock import ProgressClock
from microagg_desktop.recent_files import RecentFiles
from microagg_desktop.results_panel import ResultsPanel
from microagg_desktop.role_editor import RoleEditor
from microagg_desktop.role_memory import RoleMemory
from microagg_desktop.cluster_panel import blocked_refusals, blocked_summary, run_blocked
from microagg_desktop.settings_store import QSettingsStore
from microagg_desktop.state import SAMPLE_ROLES
from microagg_desktop.sweep_panel import SweepPanel
from microagg_desktop.window_files import FilesMixin
from microagg_desktop.window_outputs import OutputsMixin
from microagg_desktop.window_session import SessionMixin
from microagg_desktop.worker import TaskRunner

__all__ = ["MainWindow", "plan_and_run"]

log = logging.getLogger(__name__)

APP_TITLE = "MicroAgg Desktop"
SAMPLE_NAME = "sample_survey.csv"


def plan_and_run(table, *, state: TaskState, roles, method, method_share=None, **options):
    """The worker's task: :func:`core.prepare_run`, then :func:`core.pipeline.run`, its
    progress split by ``method_share`` (the Method page's estimate; not a setting of
    the run, so not in the request the history keeps).

    A stratum smaller than k is returned (not raised) so the window can offer to merge
    it and start again.
    """
    try:
        plan = prepare_run(table, roles, method, **options)
    except SmallStratumError as error:
        return error
    return run(plan, state, method_share=method_share)


class MainWindow(FilesMixin, OutputsMixin, SessionMixin, QMainWindow):
    """The application's one window.

    Parameters
    ----------
    store : MutableMapping[str, str], optional
        Where recent files, the last folder and remembered roles are kept; Qt's settings
        by default (tests pass a dict).

    Attributes
    ----------
    table : DataFrame or None
        The table opened last; never modified.
    source : str
        Its file name (shown in the title, written into the export's summary).
    data_path : Path or None
        The file it was read from, with ``read_settings`` the import settings used.
    history : History
        Every run of this session.
    runner, io_runner : TaskRunner
        Run the methods and sweeps, and read and write files; tests wait on their
        ``signals``.
    """

    APP_TITLE = APP_TITLE

    def __init__(self, parent=None, store: MutableMapping[str, str] | None = None):
        super().__init__(parent)
        self.store = store if store is not None else QSettingsStore("workbench")
        self.recent = RecentFiles(self.store)
        self.role_memory = RoleMemory(self.store)
        self.default_folder = QStandardPaths.writableLocation(
            QStandardPaths.StandardLocation.DocumentsLocation)
        self.table: pd.DataFrame | None = None
        self.source = ""
        self.data_path: Path | None = None
        self.data_sha256: str | None = None  # of the bytes read (None: not from a file)
        self._sweep_request: dict | None = None
        self._unrestored_runs: list = []  # project runs not recomputed, kept for saving
        self.read_settings: dict = {}
        self.project_path: Path | None = None
        self.project_dirty = False
        self.history = History()
        self.shown_record = None
        self.stale_text = ""
        self._request: dict = {}  # the settings of the run being computed
        self._task = ""           # what ``runner`` is doing: "run" or "sweep"
        self._io_done: Callable | None = None
        self.io_pending = False   # a file task started and its ``finished`` not handled
        self._io_writing = False  # that task writes a file: Cancel does not cut it
        self._sweep_method = ""
        self.clock = ProgressClock()
        self.runner = TaskRunner(self)
        self.io_runner = TaskRunner(self)

        self.data_page = DataPage(self)
        self.data_view = self.data_page.view
        self.role_editor = RoleEditor(self)
        self.method_panel = MethodPanel(self)
        self.results_panel = ResultsPanel(self)
        self.history_panel = HistoryPanel(self)
        self.history_panel.set_history(self.history)
        self.compare_view = CompareView(self)
        self.history_page = QSplitter(Qt.Orientation.Vertical, self)
        self.history_page.addWidget(self.history_panel)
        self.history_page.addWidget(self.compare_view)
        self.history_page.setChildrenCollapsible(False)
        self.sweep_panel = SweepPanel(self)
        self.tabs = QTabWidget(self)
        self.tabs.setDocumentMode(True)
        self.tabs.setAccessibleName("Workflow steps")
        for widget, title, tip in (
                (self.data_page, "1  &Data", "The table as read and its columns"),
                (self.role_editor, "2  R&oles", "What each column is"),
                (self.method_panel, "3  &Method", "The method, its guarantee and "
                                                  "parameters"),
                (self.results_panel, "4  Re&sults", "The run shown: measures, "
                                                    "verification and plots"),
                (self.history_page, "5  H&istory", "Every run of this session; compare "
                                                   "them"),
                (self.sweep_panel, "6  S&weep", "Run a method over a range of k or t")):
            self.tabs.setTabToolTip(self.tabs.addTab(widget, title), tip)
        self.setCentralWidget(self.tabs)
        self.setAcceptDrops(True)

        self.progress = QProgressBar(self)
        self.progress.setRange(0, 1000)
        self.progress.setFixedWidth(220)
        self.progress.setFormat("%p%")
        self.progress.setValue(0)
        self.progress.setAccessibleName("Progress")
        self.status_label = QLabel("Ready.", self)
        self.status_label.setAccessibleName("Status")
        self.clock_label = QLabel("", self)
        self.clock_label.setAccessibleName("Elapsed and remaining time")
        self.statusBar().addWidget(self.status_label, 1)
        self.statusBar().addPermanentWidget(self.clock_label)
        self.statusBar().addPermanentWidget(self.progress)

        self._make_actions()
        self._connect()
        self.setWindowTitle(APP_TITLE)
        self.resize(1200, 800)
        self._update_actions()

    # -- construction -------------------------------------------------------------------

    def _make_actions(self) -> None:
        icon, pixmap = self.style().standardIcon, QStyle.StandardPixmap

        def action(text, slot, shortcut=None, icon_name=None, tip=""):
            act = QAction(text, self)
            if shortcut is not None:
                act.setShortcuts(shortcut if isinstance(shortcut, list) else [shortcut])
            if icon_name is not None:
                act.setIcon(icon(icon_name))
            act.setStatusTip(tip)
            act.setToolTip(tip or text.replace("&", ""))
            act.triggered.connect(lambda _=False: slot())
            return act

        self.open_action = action("&Open…", self.open_dialog, QKeySequence.StandardKey.Open,
                                  pixmap.SP_DialogOpenButton,
                                  "Open a table (CSV, XLSX, DTA, SAV, SAS) or a project")
        self.open_settings_action = action(
            "Open with &settings…", self.open_with_settings_dialog, None, None,
            "Preview a table and say its separators, encoding, header line or sheet")
        self.sample_action = action("Open &sample", self.open_sample, None,
                                    pixmap.SP_FileIcon,
                                    "Open the bundled synthetic survey (600 records)")
        self.open_project_action = action("Open &project…", self.open_project_dialog, None,
                                          None, "Open a saved .microagg project")
        self.save_project_action = action("Save pro&ject", self.save_project_dialog,
                                          QKeySequence.StandardKey.Save, None,
                                          "Save the data path, roles and every run")
        self.save_project_as_action = action(
            "Save project &as…", lambda: self.save_project_dialog(save_as=True),
            QKeySequence("Ctrl+Shift+S"), None, "Save the project under another name")
        self.run_action = action("&Run", self.run, [QKeySequence("Ctrl+R"),
                                                    QKeySequence("F5")],
                                 pixmap.SP_MediaPlay, "Microaggregate with the chosen method")
        self.cancel_action = action("&Cancel", self.cancel, QKeySequence("Esc"),
                                    pixmap.SP_MediaStop, "Stop the running task")
        self.export_action = action("&Export…", self.export_dialog, QKeySequence("Ctrl+E"),
                                    pixmap.SP_DialogSaveButton,
                                    "Save the released table and its summary")
        self.report_action = action("Export &report…", self.export_report_dialog,
                                    QKeySequence("Ctrl+Shift+E"),
                                    pixmap.SP_FileDialogDetailedView,
                                    "Save a report of the run for a release board "
                                    "(HTML or PDF)")
        self.copy_command_action = action(
            "Copy as &command", self.copy_command, QKeySequence("Ctrl+Shift+C"), None,
            "Copy the equivalent 'microagg anonymize' command line of the run shown")
        self.guide_action = action("&Guide", self.show_guide, QKeySequence.StandardKey.HelpContents,
                                   pixmap.SP_DialogHelpButton, "A short guide to the workflow")
        self.about_action = action("&About MicroAgg Desktop", self.show_about, None, None,
                                   "Version, licences and bill of materials")
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
        for act in (self.open_action, self.open_settings_action, self.sample_action):
            file_menu.addAction(act)
        self.recent_menu = file_menu.addMenu("Recent &files")
        self.recent_menu.aboutToShow.connect(
            lambda: self._fill_recent_menu(self.recent_menu))
        for act in (None, self.open_project_action, self.save_project_action,
                    self.save_project_as_action, None, self.export_action,
                    self.report_action, None, self.quit_action):
            file_menu.addSeparator() if act is None else file_menu.addAction(act)
        edit_menu = menu.addMenu("&Edit")
        edit_menu.addAction(self.copy_command_action)
        run_menu = menu.addMenu("&Run")
        run_menu.addAction(self.run_action)
        run_menu.addAction(self.cancel_action)
        help_menu = menu.addMenu("&Help")
        help_menu.addAction(self.guide_action)
        help_menu.addAction(self.about_action)

    def _connect(self) -> None:
        signals = self.runner.signals
        signals.started.connect(self._on_started)
        signals.progress.connect(self._on_progress)
        signals.returned.connect(self._on_returned)
        signals.errored.connect(self._on_errored)
        signals.cancelled.connect(self._on_cancelled)
        signals.finished.connect(self._on_finished)
        io = self.io_runner.signals
        io.started.connect(self._on_started)
        io.progress.connect(self._on_progress)
        io.returned.connect(self._on_io_returned)
        io.errored.connect(self._on_errored)
        io.cancelled.connect(lambda: self.set_status("Cancelled."))
        io.finished.connect(self._on_io_finished)
        self.role_editor.rolesChanged.connect(self.settings_changed)
        self.method_panel.changed.connect(self.settings_changed)
        self.data_page.changed.connect(self.settings_changed)
        # the columns' categories, for the time estimate, come once they are summarised
        self.data_page.summary.ready.connect(self.settings_changed)
        self.history_panel.run_selected.connect(self.show_run)
        self.history_panel.compare_requested.connect(self.compare_runs)
        self.history_panel.restore_requested.connect(self.restore_run)
        self.history_panel.run_removed.connect(self.remove_run)
        self.sweep_panel.sweep_requested.connect(self.start_sweep)
        self.sweep_panel.add_to_history.connect(self.add_sweep_point)
        self.sweep_panel.run_seconds = self.method_panel.run_seconds

    # -- state of the actions -----------------------------------------------------------

    @property
    def data_model(self):
        """The model of the Data tab."""
        return self.data_view.model()

    @property
    def result(self) -> AnonymizationResult | None:
        """The result shown in the Results tab."""
        return self.results_panel.result

    def _update_actions(self) -> None:
        busy = self.runner.running or self.io_runner.running
        self.run_action.setEnabled(self.table is not None and not busy)
        # A file being written is finished, never cut: Cancel is off meanwhile.
        self.cancel_action.setEnabled(self.runner.running or (self.io_runner.running
                                                              and not self._io_writing))
        self.export_action.setEnabled(self._exportable() and not busy)
        self.report_action.setEnabled(self.result is not None and not busy)
        self.copy_command_action.setEnabled(self.shown_record is not None
                                            and self.data_path is not None)
        self.save_project_action.setEnabled(self.data_path is not None and not busy)
        self.save_project_as_action.setEnabled(self.data_path is not None and not busy)
        self.sweep_panel.setEnabled(self.table is not None and not busy)

    def _update_title(self) -> None:
        name = self.project_path.name if self.project_path is not None else self.source
        dirty = " *" if self.project_dirty else ""
        self.setWindowTitle(f"{name}{dirty} — {APP_TITLE}" if name else APP_TITLE)

    def set_status(self, text: str) -> None:
        """Show ``text`` in the status bar (in full in its tooltip, where it is cut)."""
        self.status_label.setText(text)
        self.status_label.setToolTip(text)

    # -- errors -------------------------------------------------------------------------

    def show_error(self, text: str) -> None:
        """Tell the user what went wrong (a modal message box; tests replace this)."""
        log.info("error shown to the user: %s", text)
        self.set_status("Error: " + text.splitlines()[0] if text else "Error.")
        QMessageBox.critical(self, APP_TITLE, text)

    def _guarded(self, what: str, function: Callable, *args, **kwargs):
        """Call ``function``; turn any exception into :meth:`show_error`, never a crash."""
        try:
            return function(*args, **kwargs)
        except MicroaggError as error:
            self.show_error(str(error))
        except Exception as error:
            log.exception("unexpected error while %s", what)
            self.show_error(f"Unexpected error while {what} ({type(error).__name__}): "
                            f"{error}. Details were written to the log.")
        return None

    # -- files --------------------------------------------------------------------------

    def refuse_input_path(self, path) -> bool:
        """True, after telling the user, when ``path`` is the file the table was read
        from: the input file is never written to (an export, a report or a project
        saved onto it would destroy the original data)."""
        if self.data_path is None:
            return False
        target = Path(path)
        try:
            same = target.resolve() == self.data_path or (
                target.exists() and self.data_path.exists()
                and os.path.samefile(target, self.data_path))
        except OSError:
            same = False
        if same:
            self.show_error(f"'{target.name}' is the file the table was read from; MicroAgg "
                            "Desktop never writes to its input. Choose another name.")
        return same

    def start_io(self, function: Callable, *args, message: str, done: Callable,
                 writes: bool = False, **kwargs) -> None:
        """Run a file task on ``io_runner``; ``done(value)`` is called with its result."""
        self._io_done = done
        self.io_pending = True
        self._io_writing = writes
        self.clock.start()
        self.io_runner.start(function, *args, **kwargs)
        self.set_status(message)
        self._update_actions()

    def _on_io_finished(self) -> None:
        self.io_pending = False
        self._io_writing = False
        self._on_finished()

    def _on_io_returned(self, value) -> None:
        done, self._io_done = self._io_done, None
        self.progress.setValue(1000)
        if done is not None:
            self._guarded("finishing the file task", done, value)

    def open_sample(self) -> bool:
        """Open the bundled sample survey with its roles preset."""
        path = resource_path(SAMPLE_NAME)
        if not self.ready_to_replace():
            return False

        def load():
            self.data_path, self.read_settings = path.resolve(), {}
            self.set_table(read_table(path), path.name, roles=SAMPLE_ROLES)
            return True
        return bool(self._guarded("opening the sample", load))

    def set_table(self, table: pd.DataFrame, source: str = "", roles=None,
                  prepared=None) -> None:
        """Show ``table`` (not copied) and describe its columns; start a new session.

        A running computation on the previous table is cancelled, and the history of
        the previous table is cleared (a project keeps it).
        """
        # A run of the previous table must not land in this table's history, even if
        # its result is already queued.
        self.runner.abandon()
        self._task, self._sweep_request, self._unrestored_runs = "", None, []
        self.data_sha256 = None
        self.table, self.source = table, source
        # A sweep of the previous table is forgotten (before the roles, whose change
        # would otherwise redraw it once more).
        self._sweep_method = self.method_panel.method_name()
        self.sweep_panel.set_method(self._sweep_method)
        self.data_page.set_frame(table, source)
        self.role_editor.set_table(table, roles, memory=self.role_memory,
                                   prepared=prepared)
        self.history = History()
        self.history_panel.set_history(self.history)
        if self.compare_view.history is not None and len(self.compare_view.history):
            self.compare_view.set_runs(self.history, [])  # forget the old table's runs
        self.shown_record, self.project_path, self.project_dirty = None, None, False
        self.results_panel.clear()
        self.method_panel.set_context(len(table), self._current_roles(), self._attributes())
        self.sweep_panel.refresh()
        self.progress.setValue(0)
        self._update_title()
        self.set_status(f"Opened {source or 'a table'}. Check the roles, then Run.")
        self.tabs.setCurrentWidget(self.role_editor if roles else self.data_page)
        self._update_actions()

    def _current_roles(self) -> RoleSpec | None:
        try:
            return self.role_editor.roles()
        except MicroaggError:
            return None

    # -- running ------------------------------------------------------------------------

    def current_request(self) -> dict:
        """The settings of the Roles, Method and Data tabs as a run request, in the one
        form every run of the history, the sweep and a project share
        (:meth:`core.project.RunSettings.request`: defaults filled in, blocks and bounds
        as text), so two requests of the same run compare equal.

        Raises
        ------
        MicroaggError
            A parameter outside its constraint.
        """
        roles = self.role_editor.roles()
        return RunSettings.from_request({
            "roles": roles, "method": self.method_panel.method_name(),
            "blocks": self.method_panel.blocks(), "merge_small_strata": False,
            "intruder": self.method_panel.intruder(), "missing": self.data_page.missing(),
            **self.method_panel.noise_options(), **self.method_panel.parameters(),
        }).request(roles)

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
        request = self._guarded("checking the parameters", self.current_request)
        if request is None:
            return False
        self._request = request
        self._guarded("remembering the roles", self.role_editor.remember, self.role_memory)
        blocked = self.method_panel.cluster_box.options()
        if blocked is not None:
            return self._start_blocked(request, blocked)
        self._start_run()
        return True

    def ask_blocked_output(self) -> str:
        """The folder a blocked run writes its parts to ("" if none; tests replace this)."""
        suggested = str(Path(self.recent.folder(self.default_folder))
                        / f"{self._stem()}_released_parts")
        path, _ = QFileDialog.getSaveFileName(
            self, "Write the release as a folder of Parquet parts", suggested,
            "Folder of parts (*)")
        return path

    def _start_blocked(self, request: dict, blocked: dict) -> bool:
        """Run blocked on Dask (Method ▸ Advanced); the release goes to a folder of parts.
        Refused while a setting is on that a blocked run does not apply
        (:func:`~microagg_desktop.cluster_panel.blocked_refusals`)."""
        refused = blocked_refusals(request)
        if refused:
            self.show_error("A blocked run (Method ▸ Advanced) does not apply "
                            + "; ".join(refused) + ". Turn that off, or run on this "
                            "computer (untick the blocked run).")
            return False
        output = self.ask_blocked_output()
        if not output:
            return False
        self._task = "blocked"
        self.clock.start()
        self.runner.start(run_blocked, self.table, roles=request["roles"],
                          method=request["method"], output=output,
                          parameters=self.method_panel.parameters(),
                          blocks=request.get("blocks") or None, **blocked)
        where = blocked["scheduler"] or "a local Dask cluster"
        self.set_status(f"Running {get_method(request['method']).label} blocked on {where}…")
        self._update_actions()
        return True

    def show_blocked(self, result) -> None:
        """A blocked run's summary (a message box; tests replace this)."""
        QMessageBox.information(self, APP_TITLE, blocked_summary(result))

    def _start_run(self) -> None:
        self._task = "run"
        self.clock.start()
        self.runner.start(plan_and_run, self.table, **self._request,
                          method_share=self.method_panel.method_share())
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
        """Ask the running task to stop; the window stays usable meanwhile."""
        if self.runner.running or self.io_runner.running:
            self.runner.cancel()
            if not self._io_writing:  # a file being written is finished, never cut
                self.io_runner.cancel()
            self.cancel_action.setEnabled(False)
            self.set_status("Cancelling…")

    def _on_started(self) -> None:
        self.progress.setValue(0)
        self._update_actions()

    def _on_progress(self, fraction: float, message: str) -> None:
        self.progress.setValue(round(fraction * 1000))
        self.clock.update(fraction)
        self.clock_label.setText(self.clock.text())
        if message:
            self.set_status(message)

    def _on_returned(self, value) -> None:
        if not self._task:  # abandoned: the table changed since it started
            return
        if self._task == "restore":
            self._restored(value)
            return
        if self._task == "blocked":
            self.progress.setValue(1000)
            verdict = "verified" if value.verification.passed else "NOT verified"
            if value.warnings:
                verdict += (f", {len(value.warnings)} warning(s) to read before "
                            "publishing")
            self.set_status(f"Blocked run done in {value.seconds:.1f} s: IL {value.il:.2f} %, "
                            f"{verdict}; written to {value.output}.")
            self.show_blocked(value)
            return
        if self._task == "sweep":
            self.sweep_panel.show_sweep(self._sweep_parameter, value)
            self.set_status(f"Sweep done: {len(value)} runs. Pick a point to add it to "
                            "the history.")
            return
        if isinstance(value, SmallStratumError):
            self.progress.setValue(0)
            if self.ask_merge_strata(str(value), value.stratum, value.nearest):
                self._request["merge_small_strata"] = True
                self._start_run()
            else:
                self.set_status("Not run: a stratum is smaller than k.")
            return
        record = self.history.add(dict(self._request), value)
        self.project_dirty = True
        self.show_run(record.number)
        self.progress.setValue(1000)
        verdict = ("no record-level guarantee to verify" if not value.guarantee.record_level
                   else "verified" if value.passed else "NOT verified")
        self.set_status(f"Run #{record.number} done in {value.seconds:.2f} s: "
                        f"IL {value.metrics.il:.2f} %, {verdict}.")
        self.tabs.setCurrentWidget(self.results_panel)

    def _on_errored(self, text: str) -> None:
        self.progress.setValue(0)
        self._keep_unrestored()
        self.show_error(text)  # looked up at call time, so tests can replace it

    def _on_cancelled(self) -> None:
        self.progress.setValue(0)
        self._keep_unrestored()
        self.set_status({"run": "Run cancelled.", "sweep": "Sweep cancelled.",
                         "blocked": "Blocked run cancelled: nothing was written."}.get(
            self._task, "Cancelled: the project's runs were not all recomputed."))

    def _on_finished(self) -> None:
        if not (self.runner.running or self.io_runner.running):
            self.clock.stop()
            self.clock_label.setText(self.clock.text())
            self.sweep_panel.set_running(False)
        self._update_actions()

    # -- sweep --------------------------------------------------------------------------

    def start_sweep(self, parameter: str, values: list) -> bool:
        """Run the chosen method once per value of ``parameter`` on the worker."""
        if self.table is None:
            self.show_error("Open a table first (File ▸ Open… or Open sample).")
            return False
        request = self._guarded("checking the parameters", self.current_request)
        if request is None:
            return False
        self._request, self._task, self._sweep_parameter = request, "sweep", parameter
        self._sweep_request = dict(request)
        self.sweep_panel.set_running(True)
        self.clock.start()
        self.runner.start(sweep, self.table, request, parameter, list(values))
        self.set_status(f"Sweeping {parameter} over {len(values)} values…")
        self._update_actions()
        return True

    def add_sweep_point(self, result: AnonymizationResult) -> None:
        """Add a sweep's chosen run to the history and show it."""
        if self._sweep_request is None or result.method != self._sweep_request["method"]:
            self.show_error("This sweep belongs to a table or method no longer shown; "
                            "run the sweep again.")
            return
        request = dict(self._sweep_request)  # the settings the sweep ran with
        request.update(result.parameters)
        record = self.history.add(request, result)
        self.project_dirty = True
        self.show_run(record.number)
        self.tabs.setCurrentWidget(self.results_panel)

    # -- help and closing ---------------------------------------------------------------

    def show_guide(self) -> None:
        GuideDialog(self).exec()

    def show_about(self) -> None:
        AboutDialog(self).exec()

    def ask_to_close(self, reasons: list[str]) -> str:
        """Ask what to do with unsaved work: "save", "discard" or "cancel" (tests
        replace this)."""
        return self._ask_about_work("Close MicroAgg Desktop?", reasons)

    def ask_to_replace(self, reasons: list[str]) -> str:
        """Ask what to do with unsaved work before another table replaces this one:
        "save", "discard" or "cancel" (tests replace this)."""
        return self._ask_about_work(
            "Open another table? This session's runs are then closed.", reasons)

    def _ask_about_work(self, question: str, reasons: list[str]) -> str:
        box = QMessageBox(QMessageBox.Icon.Warning, APP_TITLE,
                          question + "\n\n" + "\n".join(f"• {r}" for r in reasons),
                          QMessageBox.StandardButton.Save | QMessageBox.StandardButton.Discard
                          | QMessageBox.StandardButton.Cancel, self)
        box.setDefaultButton(QMessageBox.StandardButton.Cancel)
        answer = box.exec()
        return {QMessageBox.StandardButton.Save: "save",
                QMessageBox.StandardButton.Discard: "discard"}.get(answer, "cancel")

    def ready_to_replace(self) -> bool:
        """Whether another table (a file, the sample, a project) may replace this one
        now: not while an export or report is being written (opening cancelled it
        without a word), and, when runs would be lost, only once the user said so
        (:meth:`ask_to_replace`, as closing the window asks)."""
        if self._io_writing:
            self.show_error("A file is being written. Wait until it is finished (the "
                            "status bar says so), then open the other table.")
            return False
        reasons = self.unsaved_work()
        if not reasons:
            return True
        answer = self.ask_to_replace(reasons)
        return answer == "discard" or (answer == "save" and self.save_project_dialog())

    def unsaved_work(self) -> list[str]:
        """Why closing now would lose something (empty when nothing would be lost)."""
        reasons = []
        unexported = self.history.unexported()
        if self._unrestored_runs:
            reasons.append(f"{len(self._unrestored_runs)} run(s) of the project were not "
                           "recomputed; saving keeps them as they were.")
        if unexported and self.project_dirty:
            numbers = ", ".join(f"#{r.number}" for r in unexported)
            reasons.append(f"Run(s) {numbers} were neither exported nor saved in a "
                           "project.")
        elif self.project_dirty and self.history.records:
            reasons.append("The project has changes that are not saved.")
        return reasons

    def closeEvent(self, event: QCloseEvent) -> None:
        """Ask before losing unexported, unsaved results; stop running tasks."""
        reasons = self.unsaved_work()
        if reasons:
            answer = self.ask_to_close(reasons)
            if answer == "cancel" or (answer == "save" and not self.save_project_dialog()):
                event.ignore()
                return
        self.runner.cancel()
        self.io_runner.cancel()
        self.runner.wait(5000)
        self.io_runner.wait(5000)
        super().closeEvent(event)

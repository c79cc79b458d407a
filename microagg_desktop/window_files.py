"""The window's file side: opening tables (off the GUI thread), recent files, drag and
drop, and project files.

A mixin of :class:`~.main_window.MainWindow`; every dialog is a thin wrapper around a
method that does the work (:meth:`FilesMixin.open_file`, :meth:`FilesMixin.open_project`,
:meth:`FilesMixin.save_project_to`), so tests drive them without modal dialogs.
"""

from __future__ import annotations

import logging
from pathlib import Path

from PySide6.QtCore import QEventLoop
from PySide6.QtGui import QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import QFileDialog, QInputDialog, QMenu

from core import MicroaggError
from core.io import READABLE_SUFFIXES, read_table_with_report, sheet_names
import core.project as projects
from microagg_desktop.import_dialog import ImportDialog
from microagg_desktop.role_editor import prepare_roles

__all__ = ["FilesMixin", "PROJECT_SUFFIX", "read_task"]

log = logging.getLogger(__name__)

PROJECT_SUFFIX = ".microagg"
_WORKBOOKS = (".xlsx", ".xlsm")
OPEN_FILTER = ("Tables and projects ({});;Tables ({});;MicroAgg projects (*{});;"
               "All files (*)".format(
                   " ".join(f"*{s}" for s in (*READABLE_SUFFIXES, PROJECT_SUFFIX)),
                   " ".join(f"*{s}" for s in READABLE_SUFFIXES), PROJECT_SUFFIX))
PROJECT_FILTER = f"MicroAgg project (*{PROJECT_SUFFIX})"


def read_task(path: Path, *, state, sheet=None, options=None, project=None):
    """The worker's task for opening a table: the table, the reader's report, the role
    editor's description of its columns and the SHA-256 of the bytes read (all O(n)
    work, kept off the GUI thread). With ``project``, the file must be the one it was
    saved with (:func:`core.project.check_project_data`).
    """
    before = projects.check_project_data(project, data_path=path) if project is not None \
        else projects.file_sha256(path)
    table, report = read_table_with_report(path, sheet=sheet, state=state,
                                           **(options or {}))
    if projects.file_sha256(path) != before:
        raise MicroaggError(f"The file '{Path(path).name}' changed while it was being "
                            "read. Wait until whatever writes it has finished, then open "
                            "it again.")
    state.step(1.0, "Describing the columns…")
    return table, report, prepare_roles(table), before


class FilesMixin:
    """Opening tables and projects; needs the attributes set by ``MainWindow.__init__``."""

    # -- opening a table ----------------------------------------------------------------

    def open_dialog(self) -> None:
        """Ask for a table or project file, then open it."""
        path, _ = QFileDialog.getOpenFileName(self, "Open a table or project",
                                              self.recent.folder(self.default_folder),
                                              OPEN_FILTER)
        if path:
            self.open_any(path, wait=False)

    def open_with_settings_dialog(self) -> None:
        """Ask for a table, show its preview with the import settings, then open it."""
        path, _ = QFileDialog.getOpenFileName(self, "Open a table with settings",
                                              self.recent.folder(self.default_folder),
                                              OPEN_FILTER)
        if not path:
            return
        dialog = self._guarded("reading the file", ImportDialog, path, self)
        if dialog is not None and dialog.exec() == ImportDialog.DialogCode.Accepted:
            options = dialog.options().as_kwargs()
            sheet = options.pop("sheet", None)
            self.load_file(path, sheet, **options)

    def open_any(self, path, *, wait: bool = True) -> bool:
        """Open a project (``.microagg``) or a table, whichever ``path`` is."""
        if Path(path).suffix.lower() == PROJECT_SUFFIX:
            return self.open_project(path, wait=wait)
        return self.open_file(path) if wait else self.load_file(path)

    def open_file(self, path, sheet: str | None = None, **options) -> bool:
        """Open ``path`` and wait until it is shown (scripts and tests).

        The reading itself runs on the worker like :meth:`load_file`; the window keeps
        painting meanwhile.

        Returns
        -------
        bool
            True if the table was opened; otherwise :meth:`show_error` was called.
        """
        if not self.load_file(path, sheet, **options):
            return False
        self.wait_for_io()
        return self.table is not None and self.data_path == Path(path).resolve()

    def wait_for_io(self) -> None:
        """Process events until the file task (open, export, report) has finished and
        its outcome was handled.

        The worker may be done before this is called; its reports are then still
        queued for the GUI thread, so the wait is on the window having handled
        ``finished`` (``io_pending``), not on the worker.
        """
        if not self.io_pending:
            return
        loop = QEventLoop(self)
        self.io_runner.signals.finished.connect(loop.quit)
        try:
            while self.io_pending:
                loop.exec()
        finally:
            self.io_runner.signals.finished.disconnect(loop.quit)

    def load_file(self, path, sheet: str | None = None, **options) -> bool:
        """Start reading ``path`` on the worker (asking for the sheet of a workbook).

        ``options`` are the import settings of :func:`core.io.read_table_with_report`.

        Returns
        -------
        bool
            True if reading started.
        """
        path = Path(path)
        if not self.ready_to_replace():
            return False
        if not path.is_file():
            self.recent.remove(path)
            self.show_error(f"The file '{path}' does not exist (any more). Check the name, "
                            "or open it from its new folder.")
            return False
        if sheet is None and path.suffix.lower() in _WORKBOOKS:
            names = self._guarded("reading the sheet names", sheet_names, path)
            if names is None:
                return False
            if len(names) > 1:
                sheet = self.choose_sheet(path.name, names)
                if sheet is None:
                    return False
        settings = {"sheet": sheet, **options}
        self.start_io(read_task, path, sheet=sheet, options=options,
                      message=f"Reading {path.name}…",
                      done=lambda value: self._opened(path, settings, *value))
        return True

    def _opened(self, path: Path, settings: dict, table, report, prepared=None,
                checksum: str | None = None) -> None:
        sheet = settings.get("sheet")
        self.data_path = path.resolve()
        self.read_settings = {k: v for k, v in settings.items() if v is not None}
        self.recent.add(path)
        self.set_table(table, path.name + (f" [{sheet}]" if sheet else ""),
                       prepared=prepared)
        self.data_sha256 = checksum  # of the bytes read, for projects and reports
        if report.notes:
            self.data_page.set_notes(report.notes)
            self.set_status(f"Opened {path.name}. " + " ".join(report.notes))

    def choose_sheet(self, file_name: str, names: list[str]) -> str | None:
        """Ask which worksheet to open (the first is preselected); None if cancelled."""
        name, ok = QInputDialog.getItem(
            self, "Choose a sheet", f"'{file_name}' has several sheets. Open which one?",
            names, 0, False)
        return name if ok and name else None

    # -- recent files and drag and drop -------------------------------------------------

    def _fill_recent_menu(self, menu: QMenu) -> None:
        menu.clear()
        paths = self.recent.paths()
        for number, path in enumerate(paths, 1):
            action = menu.addAction(f"&{number % 10}  {path.name}")
            action.setToolTip(str(path))
            action.setStatusTip(str(path))
            action.triggered.connect(lambda _=False, p=path: self.open_any(p, wait=False))
        if not paths:
            menu.addAction("No recent files").setEnabled(False)
        else:
            menu.addSeparator()
            menu.addAction("&Clear the list", self.recent.clear)

    @staticmethod
    def _dropped_path(event) -> Path | None:
        urls = event.mimeData().urls() if event.mimeData().hasUrls() else []
        if len(urls) != 1 or not urls[0].isLocalFile():
            return None
        path = Path(urls[0].toLocalFile())
        suffixes = (*READABLE_SUFFIXES, PROJECT_SUFFIX)
        return path if path.suffix.lower() in suffixes else None

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        if self._dropped_path(event) is not None:
            event.acceptProposedAction()
        else:
            event.ignore()

    def dropEvent(self, event: QDropEvent) -> None:
        path = self._dropped_path(event)
        if path is None:
            event.ignore()
            return
        event.acceptProposedAction()
        self.open_any(path, wait=False)

    # -- projects -----------------------------------------------------------------------

    def open_project_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open a project",
                                              self.recent.folder(self.default_folder),
                                              PROJECT_FILTER)
        if path:
            self.open_project(path, wait=False)

    def open_project(self, path, *, wait: bool = True) -> bool:
        """Open a saved project: its table (checked against its SHA-256), roles and runs.

        Every run is then recomputed on the worker and checked against the measures
        saved with it (:meth:`~.window_session.SessionMixin.restore_project`).
        """
        path = Path(path)
        if not self.ready_to_replace():
            return False
        project = self._guarded("opening the project", projects.load_project, path)
        if project is None:
            return False
        data = Path(project.data_path)
        moved = not data.is_file()
        if moved:  # the file moved: where is it now? (its checksum is still checked)
            found = self.ask_moved_data(data, path)
            if not found:
                self.show_error(f"The project's data file {data} does not exist. Open the "
                                "project again and give the file's new location; it must "
                                "be the same file (its SHA-256 is checked).")
                return False
            data = Path(found)
        settings = project.read_settings.kwargs()
        sheet = settings.pop("sheet", None)

        def restore(table, report, prepared, read_checksum):
            self._opened(data, {"sheet": sheet, **settings}, table, report, prepared,
                         read_checksum)
            self.restore_project(project, path)

        self.start_io(read_task, data, sheet=sheet, options=settings, project=project,
                      message=f"Checking and reading {data.name}…",
                      done=lambda value: restore(*value))
        if wait:
            self.wait_for_io()
            return self.project_path == path.resolve()
        return True

    def ask_moved_data(self, data: Path, project_path: Path) -> str:
        """Ask where a project's data file is now ("" if cancelled; tests replace this)."""
        found, _ = QFileDialog.getOpenFileName(
            self, f"Where is {data.name} now? The project's data file is not at {data}",
            str(Path(project_path).parent), f"{data.name} (*{data.suffix});;All files (*)")
        return found

    def save_project_dialog(self, save_as: bool = False) -> bool:
        """Save the session to its project file (asking for one the first time)."""
        if self.table is None or self.data_path is None:
            self.show_error("Open a table first: a project remembers a data file.")
            return False
        path = self.project_path
        if path is None or save_as:
            stem = self.data_path.stem
            suggested = str(Path(self.recent.folder(self.data_path.parent))
                            / f"{stem}{PROJECT_SUFFIX}")
            chosen, _ = QFileDialog.getSaveFileName(self, "Save the project", suggested,
                                                    PROJECT_FILTER)
            if not chosen:
                return False
            path = Path(chosen if chosen.lower().endswith(PROJECT_SUFFIX)
                        else chosen + PROJECT_SUFFIX)
        return self.save_project_to(path)

    def save_project_to(self, path) -> bool:
        """Write the project (data path and checksum, roles, every run) to ``path``."""
        if self.refuse_input_path(path):
            return False
        project = self._guarded("preparing the project", self.current_project)
        if project is None:
            return False
        written = self._guarded("saving the project", projects.save_project, project,
                                Path(path))
        if written is None:
            return False
        self.project_path = Path(written).resolve()
        self.project_dirty = False
        self.recent.add(written)
        self._update_title()
        self.set_status(f"Project saved to {written}.")
        return True

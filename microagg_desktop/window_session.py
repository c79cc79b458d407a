"""The window's session: showing a run of the history, comparing runs, going back to a
run's settings, telling when the shown result no longer matches the settings, and the
project a session is saved to.

A mixin of :class:`~.main_window.MainWindow`.
"""

from __future__ import annotations

import logging
from pathlib import Path

from core import MicroaggError, anonymize
import core.project as projects
from microagg_desktop.history import describe_changes
from microagg_desktop.wizard_state import quasi_identifiers

__all__ = ["SessionMixin", "restore_task"]

log = logging.getLogger(__name__)


def restore_task(table, runs, *, state):
    """Recompute a project's runs (the same settings give the same tables).

    Returns
    -------
    list of (ProjectRun, dict, AnonymizationResult or str)
        Each run, its request, and its result or the error that stopped it.
    """
    out = []
    for position, saved in enumerate(runs):
        part = state.sub(position / len(runs), (position + 1) / len(runs))
        request = saved.request()
        try:
            result = anonymize(table, state=part, **request)
        except MicroaggError as error:
            result = str(error)
        out.append((saved, request, result))
    return out


class SessionMixin:
    """History, comparison, stale results and projects; needs ``MainWindow``'s
    attributes."""

    # -- the run shown ------------------------------------------------------------------

    def show_run(self, number: int) -> None:
        """Show run ``number`` of the history in the Results tab."""
        if getattr(self, "_showing", False):  # the history panel re-selects it
            return
        self._showing = True
        try:
            record = self.history.select(number)
            self.history_panel.show_selected()
            if self.shown_record is not record:
                self.shown_record = record
                self.results_panel.show_result(record.result, original=self.table)
            self.compare_view.refresh()
            self.settings_changed()
            self._update_actions()
        finally:
            self._showing = False

    def remove_run(self, number: int) -> None:
        """A run left the history: stop showing it (the panel removed it)."""
        if self.shown_record is not None and self.shown_record.number == number:
            self.shown_record = None
            self.results_panel.clear()
        self.compare_view.refresh()
        self.project_dirty = True
        self._update_title()
        self._update_actions()

    def compare_runs(self, numbers: list[int]) -> None:
        """Show runs ``numbers`` side by side (measures, bars, risk–utility map)."""
        if len(numbers) < 2:
            self.set_status("Select two runs or more in the history to compare them.")
            return
        self.compare_view.set_runs(self.history, list(numbers))
        self.tabs.setCurrentWidget(self.history_page)

    def restore_run(self, number: int) -> None:
        """Go back to run ``number``: its roles and parameters, and its result shown."""
        record = self.history.select(number)
        self._guarded("restoring the run's settings", self.apply_request, record.request)
        self.show_run(number)
        self.set_status(f"Back to run #{number}: its roles and parameters are restored.")

    def apply_request(self, request: dict) -> None:
        """Set the Roles, Method and Data tabs to a run's settings."""
        roles = request["roles"]
        self.role_editor.apply_roles(roles)
        self.method_panel.set_method(request["method"])
        spec_parameters = {p.name for p in self._method_parameters(request["method"])}
        for name in spec_parameters & set(request):
            self.method_panel.set_parameter(name, request[name])
        if request.get("blocks"):
            self.method_panel.set_blocks(request["blocks"])
        else:
            self.method_panel.set_blocks("")
        self.method_panel.set_intruder(request.get("intruder", "all"))
        if request.get("dp_epsilon") is not None:
            # The seed a run drew stays with that run: the next run draws its own.
            self.method_panel.set_noise(request["dp_epsilon"],
                                        request.get("confidential_bounds") or "")
        else:
            self.method_panel.clear_noise()
        self.data_page.set_missing(request.get("missing", "stop"))

    @staticmethod
    def _method_parameters(name: str):
        from core import get_method

        return get_method(name).parameters

    # -- stale results ------------------------------------------------------------------

    def _attributes(self):
        """What the quasi-identifiers are, for the time estimate
        (:func:`~.wizard_state.quasi_identifiers`; None until the columns are
        summarised)."""
        columns = {row.name: (row.kind, row.distinct)
                   for row in self.data_page.summary.summary}
        return quasi_identifiers(self._current_roles(), len(self.table), columns)

    def _sweep_stale(self) -> None:
        """Tell the Sweep tab when its points were run with settings other than the
        tabs' now (the swept parameter aside)."""
        ran = getattr(self, "_sweep_request", None)
        if ran is None or not self.sweep_panel.points:
            self.sweep_panel.set_stale(None)
            return
        try:
            current = self.current_request()
        except MicroaggError as error:
            self.sweep_panel.set_stale(f"a setting is not valid ({error})")
            return
        swept = self.sweep_panel.parameter
        changes = describe_changes({k: v for k, v in ran.items() if k != swept},
                                   {k: v for k, v in current.items() if k != swept})
        self.sweep_panel.set_stale("; ".join(changes) or None)

    def settings_changed(self) -> None:
        """Compare the settings with those of the run shown; say so when they differ."""
        if self.table is not None:
            self.method_panel.set_context(len(self.table), self._current_roles(),
                                          self._attributes())
        if self.method_panel.method_name() != self._sweep_method:
            self._sweep_method = self.method_panel.method_name()
            self.sweep_panel.set_method(self._sweep_method)
        else:  # the table, the roles or a setting changed: so may the expected time
            self.sweep_panel.refresh()
            self._sweep_stale()
        record = self.shown_record
        if record is None or self.results_panel.result is None:
            self.stale_text = ""
            self.results_panel.set_stale(None)
            return
        try:
            current = self.current_request()
        except MicroaggError as error:
            changes = [f"a setting is not valid ({error})"]
        else:
            # Merging small strata is asked at run time, not set on a tab.
            current["merge_small_strata"] = record.request.get("merge_small_strata", False)
            changes = describe_changes(record.request, current)
        if self.method_panel.cluster_box.options() is not None:
            changes.append("a blocked run is chosen (Method ▸ Advanced), and what is shown "
                           "was run on this computer: Export writes this run, not a "
                           "blocked release")
        self.stale_text = "; ".join(changes)
        self.results_panel.set_stale(self.stale_text or None)

    # -- projects -----------------------------------------------------------------------

    def current_project(self):
        """The session as a :class:`core.project.project.Project`."""
        if self.data_path is None:
            raise MicroaggError("Open a table from a file first: a project remembers it.")
        now = projects.file_sha256(self.data_path)
        checksum = self.data_sha256 or now  # the bundled sample is not read through io
        if now != checksum:
            raise MicroaggError(
                f"The data file '{self.data_path}' has changed since it was opened; the "
                "runs of this session were made on the table as it was. Open the file "
                "again and redo the runs before saving a project.")
        runs = [projects.ProjectRun.from_record(r) for r in self.history.records]
        runs = sorted(runs + list(self._unrestored_runs), key=lambda run: run.number)
        selected = self.history.selected.number if self.history.selected else None
        return projects.Project(
            data_path=str(self.data_path), data_sha256=checksum,
            read_settings=projects.ReadSettings(**self.read_settings),
            roles=self.role_editor.roles(), runs=runs, selected=selected)

    def restore_project(self, project, path: Path) -> None:
        """Put a loaded project's roles back and recompute its runs on the worker (the
        table is already shown); each recomputed run is checked against the headline
        measures saved with it."""
        self.role_editor.apply_roles(project.roles)
        self.project_path = Path(path).resolve()
        self.project_dirty = self._data_moved(project)
        self._update_title()
        if not project.runs:
            return
        # A new run is numbered after every saved one, even one never recomputed (a
        # cancelled or failed recomputation keeps it in the project file).
        self.history.reserve(r.number for r in project.runs)
        self._task = "restore"
        self._restoring = project
        self.clock.start()
        self.runner.start(restore_task, self.table, list(project.runs))
        self.set_status(f"Recomputing the project's {len(project.runs)} run(s)…")
        self._update_actions()

    def _data_moved(self, project) -> bool:
        """Whether the table was read from another place than the project says (it
        moved, and was found again): the project has then changed until it is saved."""
        return Path(project.data_path).resolve() != self.data_path

    def _keep_unrestored(self) -> None:
        """A project's recomputation stopped: its runs stay in the project file."""
        project = getattr(self, "_restoring", None)
        if self._task == "restore" and project is not None:
            done = {r.number for r in self.history.records}
            self._unrestored_runs = [r for r in project.runs if r.number not in done]
            self._restoring = None

    def _restored(self, outcomes) -> None:
        project, self._restoring = self._restoring, None
        problems = []
        for saved, request, result in outcomes:
            if isinstance(result, str):
                problems.append(f"run #{saved.number}: {result}")
                self._unrestored_runs.append(saved)  # kept in the file, not dropped
                continue
            try:
                record = self.history.add(request, result, number=saved.number)
            except MicroaggError as error:  # two saved runs with one number
                problems.append(f"run #{saved.number}: {error}")
                self._unrestored_runs.append(saved)
                continue
            il = saved.headline.get("il")
            if il is not None and abs(record.measures["il"] - il) > 1e-9 * max(1.0, abs(il)):
                problems.append(f"run #{saved.number} gave IL {record.measures['il']:.6g} %, "
                                f"the project says {il:.6g} %")
        self.history_panel.refresh()
        numbers = [r.number for r in self.history.records]
        shown = project.selected if project.selected in numbers else \
            (numbers[-1] if numbers else None)
        if shown is not None:
            # The tabs show the shown run's settings, then the project's current roles,
            # so the banner only reports a real difference.
            self._guarded("restoring the run's settings", self.apply_request,
                          self.history.get(shown).request)
            self.role_editor.apply_roles(project.roles)
            self.show_run(shown)
        self.project_dirty = self._data_moved(project)
        self._update_title()
        if problems:
            self.show_error("The project's runs could not all be reproduced exactly:\n"
                            + "\n".join(problems))
        else:
            self.set_status(f"Opened project {self.project_path.name}: "
                            f"{len(numbers)} run(s) recomputed and reproduced exactly."
                            + (f" Its data file was found at {self.data_path}; save the "
                               "project to remember the new place."
                               if self._data_moved(project) else ""))

"""The Sweep tab: run one method for a range of k (or t, γ) and see IL and risk move.

The panel builds the list of values (:func:`core.pipeline.sweep.sweep_values`, checked
against the parameter's constraint) and asks the window to run the sweep through
``sweep_requested``; the window runs :func:`core.pipeline.sweep.sweep` on its worker and
hands the points back to :meth:`SweepPanel.show_sweep`. The user picks a point (on the
plot or in the list) and "Add to history" passes that point's result on.
"""

from __future__ import annotations

from collections.abc import Callable

from matplotlib.backends.backend_qtagg import FigureCanvasQTAgg
from matplotlib.figure import Figure
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (QAbstractItemView, QComboBox, QDoubleSpinBox, QFormLayout,
                               QGroupBox, QHBoxLayout, QHeaderView, QLabel, QPushButton,
                               QSizePolicy, QSplitter, QTableWidget, QTableWidgetItem,
                               QVBoxLayout, QWidget)

from core import MicroaggError, get_method
from core.pipeline.sweep import MAX_POINTS, default_range, sweep_values, sweepable_parameters
from core.report.run_plots import RISKS, sweep_figure
from microagg_desktop.estimate import estimate_text

__all__ = ["SweepPanel"]

_STEP, _COUNT = "step", "count"


def _labelled(text: str, widget: QWidget, tip: str) -> QWidget:
    widget.setAccessibleName(text.replace("&", "").rstrip(":"))
    widget.setToolTip(tip)
    return widget


class SweepPanel(QWidget):
    """Choose a parameter and a range, run the sweep, pick a point, add it to the history.

    Signals
    -------
    sweep_requested(str, list)
        The parameter and its values, checked.
    add_to_history(object)
        The chosen point's :class:`core.AnonymizationResult`.
    """

    sweep_requested = Signal(str, list)
    add_to_history = Signal(object)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.method = ""
        self.parameter = ""
        # Seconds one run would take with the parameter at a value, or None (the window
        # sets it from the Method tab's settings and the table): the preview's estimate.
        self.run_seconds: Callable[[str, float], float | None] = lambda name, value: None
        self.points: list = []
        self.values: list = []
        self._chosen: int | None = None

        self.method_label = QLabel(self)
        self.method_label.setWordWrap(True)
        self.stale_label = QLabel(self)  # the points were run with other settings
        self.stale_label.setWordWrap(True)
        self.stale_label.setStyleSheet("color: #8a5a00; font-weight: bold")
        self.stale_label.hide()
        self.parameter_box = _labelled("Parameter", QComboBox(self),
                                       "The numeric parameter of the method to vary")
        self.start_spin = _labelled("From", QDoubleSpinBox(self),
                                    "The first value of the sweep")
        self.stop_spin = _labelled("To", QDoubleSpinBox(self),
                                   "The last value of the sweep (included)")
        self.mode_box = _labelled("Spacing", QComboBox(self),
                                  "Space the values by a step, or give how many there are")
        self.mode_box.addItem("Step", _STEP)
        self.mode_box.addItem("Number of points", _COUNT)
        self.spacing_spin = _labelled("Step or number of points", QDoubleSpinBox(self),
                                      f"The step between values, or the number of values "
                                      f"(at most {MAX_POINTS})")
        self.preview = QLabel(self)
        self.preview.setWordWrap(True)
        self.run_button = QPushButton("Run &sweep", self)
        self.run_button.setAccessibleName("Run sweep")
        self.run_button.setToolTip("Run the method once for every value (each run is "
                                   "measured and verified)")
        self.run_button.clicked.connect(self._request)

        form_box = QGroupBox("Sweep", self)
        form = QFormLayout(form_box)
        form.addRow(self.method_label)
        form.addRow(self.stale_label)
        for text, widget in (("&Parameter:", self.parameter_box), ("&From:", self.start_spin),
                             ("&To:", self.stop_spin), ("Spa&cing:", self.mode_box),
                             ("St&ep:", self.spacing_spin)):
            label = QLabel(text, form_box)
            label.setBuddy(widget)
            form.addRow(label, widget)
        self.spacing_label = label
        form.addRow(self.preview)
        form.addRow(self.run_button)

        self.list = QTableWidget(0, 5, self)
        self.list.setHorizontalHeaderLabels(["Value", "IL %", "DLD %", "DR %", "Verified"])
        self.list.setAccessibleName("Sweep points")
        self.list.setToolTip("One row per value; choose one to add its run to the history")
        self.list.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.list.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.list.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.list.verticalHeader().setVisible(False)
        self.list.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.list.horizontalHeader().setSectionResizeMode(
            4, QHeaderView.ResizeMode.ResizeToContents)
        self.list.currentCellChanged.connect(lambda row, *_: self.choose(row))
        self.add_button = QPushButton("&Add to history", self)
        self.add_button.setAccessibleName("Add to history")
        self.add_button.setToolTip("Keep the chosen point's run in the history, to "
                                   "compare or export it")
        self.add_button.clicked.connect(self._add)

        self.risk_box = _labelled("Risk measure", QComboBox(self),
                                  "The disclosure risk drawn beside information loss")
        for key, name in RISKS.items():
            self.risk_box.addItem(name, key)
        self.risk_box.currentIndexChanged.connect(self._draw)
        self.canvas = FigureCanvasQTAgg(Figure(figsize=(5, 3.5), layout="constrained"))
        self.canvas.setParent(self)
        self.canvas.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self.canvas.setMinimumSize(300, 220)
        self.canvas.setAccessibleName("Sweep plot")
        self.canvas.setToolTip("Information loss and risk against the parameter; click "
                               "near a value to choose it")
        self.canvas.mpl_connect("button_press_event", self._clicked)

        left = QWidget(self)
        left.setMinimumWidth(340)
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 0, 0)
        left_layout.addWidget(form_box)
        left_layout.addWidget(self.list, 1)
        left_layout.addWidget(self.add_button)
        right = QWidget(self)
        right_layout = QVBoxLayout(right)
        right_layout.setContentsMargins(0, 0, 0, 0)
        risk_row = QHBoxLayout()
        risk_label = QLabel("&Risk:", right)
        risk_label.setBuddy(self.risk_box)
        risk_row.addWidget(risk_label)
        risk_row.addWidget(self.risk_box)
        risk_row.addStretch(1)
        right_layout.addLayout(risk_row)
        right_layout.addWidget(self.canvas, 1)
        splitter = QSplitter(Qt.Orientation.Horizontal, self)
        splitter.addWidget(left)
        splitter.addWidget(right)
        splitter.setStretchFactor(0, 0)
        splitter.setStretchFactor(1, 1)
        splitter.setChildrenCollapsible(False)
        QVBoxLayout(self).addWidget(splitter)

        self.parameter_box.currentIndexChanged.connect(self._parameter_changed)
        for widget in (self.start_spin, self.stop_spin, self.spacing_spin):
            widget.valueChanged.connect(self._update_preview)
        self.mode_box.currentIndexChanged.connect(self._mode_changed)
        self.set_method("mdav")

    # -- the form -----------------------------------------------------------------------

    def set_method(self, name: str) -> None:
        """Offer the numeric parameters of method ``name``; forget a previous sweep."""
        spec = get_method(name)
        self.method = name
        self.method_label.setText(f"Method: <b>{spec.label}</b>")
        self.parameter_box.blockSignals(True)
        self.parameter_box.clear()
        for p in sweepable_parameters(name):
            self.parameter_box.addItem(p.label or p.name, p.name)
            self.parameter_box.setItemData(self.parameter_box.count() - 1, p.help,
                                           Qt.ItemDataRole.ToolTipRole)
        self.parameter_box.blockSignals(False)
        self.show_sweep("", [])
        self._parameter_changed()

    def _spec(self):
        found = {p.name: p for p in sweepable_parameters(self.method)}
        return found.get(self.parameter_box.currentData())

    def _parameter_changed(self) -> None:
        parameter = self._spec()
        self.run_button.setEnabled(parameter is not None)
        if parameter is None:
            self.preview.setText("This method has no numeric parameter to sweep.")
            return
        low, high = default_range(parameter)
        integer = parameter.constraint.kind is int
        for spin in (self.start_spin, self.stop_spin):
            spin.blockSignals(True)
            spin.setDecimals(0 if integer else 3)
            spin.setSingleStep(1 if integer else 0.05)
            spin.setRange(low, high)
            spin.blockSignals(False)
        self.start_spin.setValue(low)
        self.stop_spin.setValue(min(high, low + 8) if integer else high)
        self._mode_changed()

    def _mode_changed(self) -> None:
        parameter = self._spec()
        integer = parameter is not None and parameter.constraint.kind is int
        by_step = self.mode_box.currentData() == _STEP
        self.spacing_spin.blockSignals(True)
        if by_step:
            self.spacing_spin.setDecimals(0 if integer else 3)
            self.spacing_spin.setRange(1 if integer else 0.001, 1000)
            self.spacing_spin.setSingleStep(1 if integer else 0.05)
            self.spacing_spin.setValue(1 if integer else 0.1)
        else:
            self.spacing_spin.setDecimals(0)
            self.spacing_spin.setRange(1, MAX_POINTS)
            self.spacing_spin.setSingleStep(1)
            self.spacing_spin.setValue(9)
        self.spacing_spin.blockSignals(False)
        self.spacing_label.setText("St&ep:" if by_step else "Poi&nts:")
        self._update_preview()

    def set_range(self, start: float, stop: float, *, step: float | None = None,
                  count: int | None = None) -> None:
        """Fill the form as a user would (one of ``step`` and ``count``)."""
        self.mode_box.setCurrentIndex(self.mode_box.findData(_STEP if step else _COUNT))
        self.start_spin.setValue(start)
        self.stop_spin.setValue(stop)
        self.spacing_spin.setValue(step if step else count)

    def sweep_values(self) -> list:
        """The values of the form; :class:`MicroaggError` if they are not allowed."""
        parameter = self._spec()
        if parameter is None:
            raise MicroaggError(f"{get_method(self.method).label} has no numeric parameter "
                                "to sweep; choose another method.")
        spacing = self.spacing_spin.value()
        if self.mode_box.currentData() == _STEP:
            return sweep_values(parameter, self.start_spin.value(), self.stop_spin.value(),
                                step=spacing)
        return sweep_values(parameter, self.start_spin.value(), self.stop_spin.value(),
                            count=int(spacing))

    def _update_preview(self) -> None:
        try:
            values = self.sweep_values()
        except MicroaggError as error:
            self.preview.setText(f"<span style='color:#b71c1c'>{error}</span>")
            self.run_button.setEnabled(False)
            return
        shown = ", ".join(f"{v:g}" for v in values[:6]) + (" …" if len(values) > 6 else "")
        expected = self.expected_text(values)
        self.preview.setText(f"{len(values)} run(s): {shown}"
                             + (f"\n{expected}" if expected else ""))
        self.run_button.setEnabled(True)

    def expected_text(self, values: list) -> str:
        """"Expected time on this computer: …" for the runs of ``values`` in all, or ""
        when it is short or cannot be estimated."""
        name = self.parameter_box.currentData()
        seconds = [self.run_seconds(name, value) for value in values]
        if not values or any(s is None for s in seconds):
            return ""
        return estimate_text(sum(seconds))

    def refresh(self) -> None:
        """Show the preview again (the table, the roles or the settings changed)."""
        if self._spec() is not None:
            self._update_preview()

    def set_stale(self, changes: str | None) -> None:
        """Say that the points shown were run with other settings (``changes``, what
        differs), or, with None, that they were not."""
        if changes and self.points:
            self.stale_label.setText(
                f"⟳ These points were run with other settings: {changes}. Run the sweep "
                "again to see the current settings; a point added to the history keeps "
                "the settings it was run with.")
            self.stale_label.show()
        else:
            self.stale_label.clear()
            self.stale_label.hide()

    def set_running(self, running: bool) -> None:
        """Disable the form while the window runs a sweep."""
        self.run_button.setEnabled(not running)
        self.add_button.setEnabled(not running and self.chosen_point() is not None)

    def _request(self) -> None:
        try:
            values = self.sweep_values()
        except MicroaggError as error:
            self.preview.setText(f"<span style='color:#b71c1c'>{error}</span>")
            return
        self.sweep_requested.emit(self.parameter_box.currentData(), values)

    # -- the outcome --------------------------------------------------------------------

    def show_sweep(self, parameter: str, points: list) -> None:
        """Show :func:`core.pipeline.sweep.sweep`'s points for ``parameter``."""
        self.parameter, self.points = parameter, list(points)
        self.values = [p.value for p in self.points]
        self._chosen = None
        self.list.blockSignals(True)
        self.list.setRowCount(len(self.points))
        for row, point in enumerate(self.points):
            r = point.summary  # the figures; the table stays compact
            m = r.measures if r is not None else None
            cells = [f"{point.value:g}"]
            if r is None:
                cells += ["—", "—", "—", "failed"]
            else:
                cells += [f"{r.metrics.il:.2f}", "—" if m is None else f"{m.dld:.1f}",
                          "—" if m is None else f"{m.dr:.1f}", "✓" if r.passed else "✗"]
            for column, text in enumerate(cells):
                item = QTableWidgetItem(text)
                item.setToolTip(point.error or f"{parameter} = {point.value:g}")
                item.setTextAlignment(Qt.AlignmentFlag.AlignCenter)
                self.list.setItem(row, column, item)
        self.list.blockSignals(False)
        self.add_button.setEnabled(False)
        self.set_stale(None)
        self._draw()

    def choose(self, row: int) -> None:
        """Choose point ``row`` (as clicking it in the list or on the plot does)."""
        if not 0 <= row < len(self.points):
            return
        self._chosen = row
        if self.list.currentRow() != row:
            self.list.blockSignals(True)
            self.list.selectRow(row)
            self.list.blockSignals(False)
        self.add_button.setEnabled(self.points[row].ok)
        self._draw()

    def chosen_point(self):
        """The chosen :class:`SweepPoint`, or None."""
        return None if self._chosen is None else self.points[self._chosen]

    def _clicked(self, event) -> None:
        if event.xdata is None or not self.values:
            return
        nearest = min(range(len(self.values)),
                      key=lambda i: abs(float(self.values[i]) - event.xdata))
        self.choose(nearest)

    def _add(self) -> None:
        point = self.chosen_point()
        if point is not None and point.ok:
            self.add_to_history.emit(point.result)

    def _draw(self) -> None:
        chosen = self.chosen_point()
        sweep_figure(self.parameter or "parameter", self.values, self.points,
                     risk=self.risk_box.currentData(),
                     selected=None if chosen is None else chosen.value,
                     figure=self.canvas.figure)
        self.canvas.draw_idle()

"""Runs side by side: the measures table with the best value marked, bars, and the map.

:class:`CompareView` shows :meth:`History.compare` for two or more runs (the best value
of every measure in bold on green), bars of IL, DLD and k′ per run, and the
:class:`RiskUtilityMap` of every run of the session. Nothing is computed here: every
figure comes from the history's records.
"""

from __future__ import annotations

from matplotlib.backends.backend_qtagg import FigureCanvasQTAgg
from matplotlib.figure import Figure
from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QColor, QFont, QStandardItem, QStandardItemModel
from PySide6.QtWidgets import (QComboBox, QHBoxLayout, QHeaderView, QLabel, QSizePolicy,
                               QSplitter, QTableView, QTabWidget, QVBoxLayout, QWidget)

from core.report.run_plots import RISKS, comparison_bars, risk_utility_figure
from microagg_desktop.history import (MEASURES, History, best_columns, guaranteed_columns,
                                      incomparable)

__all__ = ["RiskUtilityMap", "CompareView"]

_BEST = QColor("#dff3e0")
_TIPS = {m.name: f"{m.name}: {'lower' if m.better == 'low' else 'higher'} is better"
         if m.better else m.name for m in MEASURES}


def _canvas(parent) -> FigureCanvasQTAgg:
    canvas = FigureCanvasQTAgg(Figure(figsize=(5, 3.5), layout="constrained"))
    canvas.setParent(parent)
    canvas.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
    canvas.setMinimumSize(300, 220)
    return canvas


def _cell(value) -> str:
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "✓ yes" if value else "✗ no"
    if isinstance(value, float):
        return f"{value:.2f}" if abs(value) >= 0.01 or value == 0 else f"{value:.3g}"
    return str(value)


class RiskUtilityMap(QWidget):
    """Every run by information loss (x) against DLD or DR (y), with a chooser."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self._points = []
        self.risk_box = QComboBox(self)
        for key, name in RISKS.items():
            self.risk_box.addItem(name, key)
        self.risk_box.setAccessibleName("Risk measure of the map")
        self.risk_box.setToolTip("The disclosure risk on the vertical axis: DLD (records "
                                 "linked) or DR (mean of DLD and interval disclosure)")
        self.risk_box.currentIndexChanged.connect(self._draw)
        label = QLabel("&Risk axis:", self)
        label.setBuddy(self.risk_box)
        self.canvas = _canvas(self)
        self.canvas.setAccessibleName("Risk–utility map")
        self.canvas.setToolTip("Every run placed by information loss and disclosure risk; "
                               "lower left is better. Hollow red crosses were not verified.")
        top = QHBoxLayout()
        top.addWidget(label)
        top.addWidget(self.risk_box)
        top.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(top)
        layout.addWidget(self.canvas, 1)
        self._draw()

    @property
    def risk(self) -> str:
        return self.risk_box.currentData()

    def set_risk(self, risk: str) -> None:
        self.risk_box.setCurrentIndex(self.risk_box.findData(risk))

    def set_points(self, points) -> None:
        """Draw ``points`` (:class:`core.report.run_plots.RunPoint`)."""
        self._points = list(points)
        self._draw()

    def _draw(self) -> None:
        risk_utility_figure(self._points, self.risk, figure=self.canvas.figure)
        self.canvas.draw_idle()


class CompareView(QWidget):
    """Two or more runs side by side: measures, differing settings, bars and the map."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.history: History | None = None
        self.numbers: list[int] = []
        self.frame = None
        self.title = QLabel("Choose two or more runs in the History tab and press "
                            "Compare selected.", self)
        self.title.setWordWrap(True)
        self.table_model = QStandardItemModel(self)
        self.table = QTableView(self)
        self.table.setModel(self.table_model)
        self.table.setEditTriggers(QTableView.EditTrigger.NoEditTriggers)
        self.table.setAccessibleName("Measures of the compared runs")
        self.table.setToolTip("One column per run. The best value of every measure is in "
                              "bold on green; 'Setting' rows list what differs.")
        self.table.horizontalHeader().setSectionResizeMode(
            QHeaderView.ResizeMode.ResizeToContents)
        self.table.verticalHeader().setSectionResizeMode(
            QHeaderView.ResizeMode.ResizeToContents)
        self.bars = _canvas(self)
        self.bars.setAccessibleName("Bars of IL, DLD and k′ per run")
        self.bars.setToolTip("Information loss, linkage disclosure and k′ of every "
                             "compared run")
        self.map = RiskUtilityMap(self)
        self.plots = QTabWidget(self)
        self.plots.addTab(self.bars, "&Bars")
        self.plots.addTab(self.map, "Risk–utility &map")
        self.plots.setAccessibleName("Comparison plots")
        self.plots.setToolTip("Bars per run, or every run on the risk–utility map")
        splitter = QSplitter(Qt.Orientation.Horizontal, self)
        splitter.addWidget(self.table)
        splitter.addWidget(self.plots)
        splitter.setStretchFactor(0, 1)
        splitter.setStretchFactor(1, 1)
        self.splitter = splitter
        splitter.setChildrenCollapsible(False)
        layout = QVBoxLayout(self)
        layout.addWidget(self.title)
        layout.addWidget(splitter, 1)
        self.table.hide()  # until there is something to compare (an empty strip else)
        self._draw_bars()

    def set_runs(self, history: History, numbers: list[int]) -> None:
        """Compare the runs ``numbers`` of ``history`` (the map shows all its runs)."""
        self.history, self.numbers = history, list(numbers)
        self.refresh()

    def refresh(self) -> None:
        """Read the history again (a compared run may have been removed)."""
        if self.history is None:
            return
        present = {r.number for r in self.history.records}
        self.numbers = [n for n in self.numbers if n in present]
        self.map.set_points(self.history.points())
        self.table_model.clear()
        if not self.numbers:
            self.frame = None
            self.title.setText("Choose two or more runs in the History tab and press "
                               "Compare selected.")
            self.table.hide()
            self._draw_bars()
            return
        self.table.show()
        frame = self.frame = self.history.compare(self.numbers)
        guaranteed = guaranteed_columns(frame)
        among = ("" if len(guaranteed) in (0, len(frame.columns)) else
                 " among the runs with a record-level guarantee (a run without one, "
                 "Verified —, protects no record, so its small loss is no merit)")
        reason = incomparable(frame)
        self.title.setText(
            f"Comparing {len(self.numbers)} runs. " + (
                f"No best value is marked: {reason}." if reason else
                f"Best value per measure in bold on green{among}."))
        best = best_columns(frame)
        bold = QFont(self.table.font())
        bold.setBold(True)
        self.table_model.setHorizontalHeaderLabels([str(c) for c in frame.columns])
        self.table_model.setVerticalHeaderLabels([str(i) for i in frame.index])
        for row, name in enumerate(frame.index):
            tip = _TIPS.get(name, f"{name.removeprefix('Setting: ')} differs between the "
                                  "runs")
            self.table_model.setHeaderData(row, Qt.Orientation.Vertical, tip,
                                           Qt.ItemDataRole.ToolTipRole)
            for column, label in enumerate(frame.columns):
                item = QStandardItem(_cell(frame.iat[row, column]))
                item.setToolTip(f"{label}: {name}")
                item.setTextAlignment(Qt.AlignmentFlag.AlignRight
                                      | Qt.AlignmentFlag.AlignVCenter)
                if label in best.get(name, ()):
                    item.setBackground(QBrush(_BEST))
                    item.setFont(bold)
                    item.setToolTip(f"{label}: {name} (best of the compared runs)")
                self.table_model.setItem(row, column, item)
        self._draw_bars()
        self._fit_table()

    def _fit_table(self) -> None:
        """Give the table the width its columns need, up to 60 % of the view."""
        self.table.resizeColumnsToContents()
        header = self.table.verticalHeader()
        needed = (header.sizeHint().width() + self.table.frameWidth() * 2 + 4
                  + sum(self.table.columnWidth(c)
                        for c in range(self.table_model.columnCount())))
        total = max(sum(self.splitter.sizes()), self.width() - 20)
        table = min(needed, int(total * 0.6))
        self.splitter.setSizes([table, max(total - table, 300)])

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._fit_table()

    def best_cells(self) -> list[tuple[str, str]]:
        """(row, column) of every highlighted cell, for tests and accessibility."""
        out = []
        for row in range(self.table_model.rowCount()):
            for column in range(self.table_model.columnCount()):
                item = self.table_model.item(row, column)
                if item is not None and item.font().bold():
                    out.append((self.table_model.verticalHeaderItem(row).text(),
                                self.table_model.horizontalHeaderItem(column).text()))
        return out

    def _draw_bars(self) -> None:
        if self.history is None or not self.numbers:
            comparison_bars([], {}, figure=self.bars.figure)
        else:
            records = [self.history.get(n) for n in self.numbers]
            comparison_bars([r.label for r in records], {
                "IL (%)": [r.measures["il"] for r in records],
                "DLD (%)": [r.measures["dld"] for r in records],
                "k′": [r.measures["k_prime"] for r in records]}, figure=self.bars.figure)
        self.bars.draw_idle()

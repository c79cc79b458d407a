"""Matplotlib figures in the window: a canvas that takes any figure, and tabs of plots
built only when their tab is shown.

The figures come from :mod:`core.report.plots` (no Qt there); this module only shows
them, through ``FigureCanvasQTAgg`` (pyplot and its global backend are never used).
"""

from __future__ import annotations

from collections.abc import Callable

from matplotlib.backends.backend_qtagg import FigureCanvasQTAgg
from matplotlib.figure import Figure
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QLabel, QSizePolicy, QTabWidget, QVBoxLayout, QWidget

__all__ = ["PlotCanvas", "LazyPlotTabs"]


class PlotCanvas(QWidget):
    """A place for one figure; :meth:`set_figure` swaps it, :meth:`show_message` clears.

    Parameters
    ----------
    name : str
        Accessible name and tooltip of the drawing ("Group sizes plot", ...).
    """

    def __init__(self, name: str, parent=None):
        super().__init__(parent)
        self.setAccessibleName(name)
        self.figure: Figure | None = None
        self.canvas: FigureCanvasQTAgg | None = None
        self.message = QLabel(self)
        self.message.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.message.setWordWrap(True)
        self.message.setStyleSheet("QLabel { color: palette(dark); padding: 12px; }")
        self._layout = QVBoxLayout(self)
        self._layout.setContentsMargins(0, 0, 0, 0)
        self._layout.addWidget(self.message)
        self.setMinimumSize(360, 240)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)

    def set_figure(self, figure: Figure) -> None:
        """Show ``figure`` (replacing the previous one)."""
        self._drop_canvas()
        self.figure = figure
        self.canvas = FigureCanvasQTAgg(figure)
        self.canvas.setParent(self)
        self.canvas.setAccessibleName(self.accessibleName())
        self.canvas.setToolTip(self.toolTip())
        self.canvas.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.canvas.setSizePolicy(QSizePolicy.Policy.Expanding,
                                  QSizePolicy.Policy.Expanding)
        self.message.hide()
        self._layout.addWidget(self.canvas)
        self.canvas.draw_idle()

    def show_message(self, text: str) -> None:
        """Drop the figure and show ``text`` instead."""
        self._drop_canvas()
        self.figure = None
        self.message.setText(text)
        self.message.show()

    def _drop_canvas(self) -> None:
        if self.canvas is not None:
            self._layout.removeWidget(self.canvas)
            self.canvas.deleteLater()
            self.canvas = None


class LazyPlotTabs(QTabWidget):
    """Tabs of plots; a tab's figure is built when the tab is shown, once per result.

    Each page is a widget holding a :class:`PlotCanvas`; :meth:`set_builders` gives one
    callable per page (returning a Figure). Switching to a page whose figure is out of
    date builds it; the others wait, so a large result never draws four figures at once.
    """

    built = Signal(int)
    """Emitted with the page index after its figure was drawn."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.canvases: list[PlotCanvas] = []
        self._builders: list[Callable[[], Figure] | None] = []
        self._stale: list[bool] = []
        self.currentChanged.connect(lambda _index: self.refresh())

    def add_page(self, page: QWidget, canvas: PlotCanvas, title: str, tip: str) -> int:
        """Add ``page`` (which holds ``canvas``) under ``title``; returns its index."""
        index = self.addTab(page, title)
        self.setTabToolTip(index, tip)
        canvas.setToolTip(tip)
        page.setAccessibleName(f"{title} tab")
        self.canvases.append(canvas)
        self._builders.append(None)
        self._stale.append(False)
        return index

    def set_builders(self, builders: list[Callable[[], Figure] | None],
                     empty: str = "") -> None:
        """New figures for every page (None: show ``empty``); builds the current one."""
        self._builders = list(builders)
        self._stale = [True] * len(builders)
        for canvas in self.canvases:
            canvas.show_message(empty)
        self.refresh()

    def invalidate(self, index: int) -> None:
        """Page ``index`` needs drawing again (built now if it is the current page)."""
        self._stale[index] = True
        self.refresh()

    def is_built(self, index: int) -> bool:
        """True when page ``index`` shows the figure of the current builders."""
        return not self._stale[index] and self.canvases[index].figure is not None

    def refresh(self) -> None:
        """Build the current page's figure if it is out of date."""
        index = self.currentIndex()
        if not 0 <= index < len(self._builders) or not self._stale[index]:
            return
        self._stale[index] = False
        build = self._builders[index]
        if build is not None:
            self.canvases[index].set_figure(build())
            self.built.emit(index)

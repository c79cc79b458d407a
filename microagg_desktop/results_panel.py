"""The Results tab: the verdict, the headline measures, the plots and the released table.

It shows a :class:`core.AnonymizationResult` and computes no figure itself: numbers come
from ``result.metrics``, ``result.measures`` and ``result.verification``, plots from
:mod:`core.report.plots` (built only for the plot tab on show). A banner says when the
result no longer matches the settings (:meth:`ResultsPanel.set_stale`).
"""

from __future__ import annotations

import pandas as pd
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (QComboBox, QFormLayout, QGroupBox, QHBoxLayout, QLabel,
                               QScrollArea, QVBoxLayout, QWidget)

from core import AnonymizationResult, get_method
from core.report import plots
from core.report.meanings import meaning
from microagg_desktop.plot_canvas import LazyPlotTabs, PlotCanvas
from microagg_desktop.state import format_number
from microagg_desktop.table_model import DataFrameModel
from microagg_desktop.table_view import DataFrameView

__all__ = ["ResultsPanel", "quasi_identifier_text", "stale_text"]

_PASSED_STYLE = ("QLabel { background: #dff3e0; color: #1b5e20; border: 1px solid #81c784;"
                 " border-radius: 4px; padding: 8px; font-weight: bold; }")
_FAILED_STYLE = ("QLabel { background: #fde2e1; color: #b71c1c; border: 1px solid #e57373;"
                 " border-radius: 4px; padding: 8px; font-weight: bold; }")
_WARNING_STYLE = ("QLabel { background: #fff4d6; color: #7a4f01; border: 1px solid #f0b429;"
                  " border-radius: 4px; padding: 8px; font-weight: bold; }")
_EMPTY_STYLE = "QLabel { color: palette(dark); padding: 8px; }"
_STALE_STYLE = ("QLabel { background: #e8eaf6; color: #1a237e; border: 2px solid #5c6bc0;"
                " border-radius: 4px; padding: 8px; font-weight: bold; }")
_TIPS = {"method": "The method and the parameters this result was produced with.",
         "qi": "The quasi-identifiers, with the measurement level of each categorical one.",
         "seconds": "Wall time of the whole run, verification and measures included."}
GROUPS, CLOSENESS, SCATTER, CHANGES = range(4)


def stale_text(message: str) -> str:
    """The stale banner's sentence for ``message`` (what changed)."""
    return (f"These results no longer match the settings: {message.rstrip('.')}. "
            "Run again, or go back to this run in the history.")


def quasi_identifier_text(result: AnonymizationResult) -> str:
    """The quasi-identifiers with the level of every categorical one, e.g. "age, sex (nominal)"."""
    return ", ".join(c if result.levels.get(c, "numeric") == "numeric"
                     else f"{c} ({result.levels[c]})" for c in result.roles.quasi_identifiers)


class ResultsPanel(QWidget):
    """Verdict, headline measures, plots in tabs and the released table, scrolling when
    the window is small.

    Attributes
    ----------
    result : AnonymizationResult or None
        The result shown.
    original : DataFrame or None
        The original table it was made from, for the plots that compare with it.
    """

    def __init__(self, parent=None):
        super().__init__(parent)
        self.result: AnonymizationResult | None = None
        self.original: pd.DataFrame | None = None
        self._stale_message: str | None = None
        self.stale_banner = QLabel(self)
        self.stale_banner.setWordWrap(True)
        self.stale_banner.setStyleSheet(_STALE_STYLE)
        self.stale_banner.setAccessibleName("Results out of date")
        self.stale_banner.setToolTip("The roles or the method changed after this run.")
        self.stale_banner.hide()
        self.status = QLabel(self)
        self.status.setWordWrap(True)
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.status.setAccessibleName("Verification verdict")
        self.status.setToolTip("What the independent verifier found on the released table.")

        self.values: dict[str, QLabel] = {}
        metrics_box = QGroupBox("Summary", self)
        form = QFormLayout(metrics_box)
        form.setLabelAlignment(Qt.AlignmentFlag.AlignLeft)
        form.setRowWrapPolicy(QFormLayout.RowWrapPolicy.WrapLongRows)
        for key, label in (
            ("method", "Method"),
            ("qi", "Quasi-identifiers"),
            ("il", "Information loss (IL)"),
            ("sse", "SSE / SST"),
            ("records", "Records"),
            ("groups", "Groups"),
            ("sizes", "Group size min / mean / max"),
            ("classes", "Released classes"),
            ("k_prime", "k′ (records per QI tuple)"),
            ("il1", "IL1 (paper's information loss)"),
            ("risk", "Risk DLD / ID / DR"),
            ("score", "Score (lower is better)"),
            ("emd", "Largest class EMD"),
            ("seconds", "Elapsed time"),
        ):
            tip = _TIPS.get(key) or (meaning("dr") + " " + meaning("dld") if key == "risk"
                                     else meaning(key))
            value = QLabel("—", metrics_box)
            value.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            value.setWordWrap(key in ("qi", "method", "emd", "records", "classes"))
            value.setAccessibleName(label)
            value.setToolTip(tip)
            caption = QLabel(f"{label}:", metrics_box)
            caption.setToolTip(tip)
            self.values[key] = value
            form.addRow(caption, value)
        font = self.values["il"].font()
        font.setPointSizeF(font.pointSizeF() * 1.4)
        font.setBold(True)
        self.values["il"].setFont(font)
        metrics_box.setMaximumWidth(400)
        self._metrics_box = metrics_box

        self.plots = LazyPlotTabs(self)
        self.plots.setAccessibleName("Plots of the result")
        self.plots.setToolTip("Plots of the result; each is drawn when its tab is opened.")
        for title, tip in (
                ("Group sizes", "How many groups have each size; the dashed line is k."),
                ("Closeness", "Every class's distance to the whole table for each "
                              "confidential attribute, against t."),
                ("Original vs released", "Two attributes in the original and in the "
                                         "released table, side by side."),
                ("Changes", "How the means, variances and correlations changed.")):
            canvas = PlotCanvas(f"{title} plot")
            page = canvas
            if title == "Original vs released":
                page = self._scatter_page(canvas)
            self.plots.add_page(page, canvas, title, tip)

        self.masked_view = DataFrameView(self)
        self.masked_view.setAccessibleName("Released table")
        self.masked_view.setToolTip("The table to release, as it will be exported.")
        masked_box = QGroupBox("Released table (masked)", self)
        QVBoxLayout(masked_box).addWidget(self.masked_view)

        top = QWidget(self)
        top_layout = QHBoxLayout(top)
        top_layout.setContentsMargins(0, 0, 0, 0)
        top_layout.addWidget(metrics_box, 0)
        top_layout.addWidget(masked_box, 1)
        self.plots.setMinimumHeight(460)

        content = QWidget(self)
        content_layout = QVBoxLayout(content)
        content_layout.setContentsMargins(0, 0, 0, 0)
        content_layout.addWidget(top, 0)
        content_layout.addWidget(self.plots, 1)
        # Below this size the panel scrolls instead of squeezing text and plots; the
        # plots take the whole width so that every figure stays readable.
        self._top, self._content = top, content
        self._fit_content()
        self.scroll = QScrollArea(self)
        self.scroll.setWidgetResizable(True)
        self.scroll.setWidget(content)
        self.scroll.setFrameShape(QScrollArea.Shape.NoFrame)
        layout = QVBoxLayout(self)
        layout.addWidget(self.stale_banner)
        layout.addWidget(self.status)
        layout.addWidget(self.scroll, 1)
        self.clear()

    def _fit_content(self) -> None:
        """The scrolled content's minimum size: the summary as tall as its values now
        need, wrapped lines included (a long list of quasi-identifiers, a tall banner
        above leaving less room), and the plots below it."""
        box = self._metrics_box
        summary = box.heightForWidth(min(box.maximumWidth(), max(box.width(), 300)))
        self._top.setMinimumHeight(max(summary, 0))
        self._content.setMinimumSize(900, self._top.minimumSizeHint().height() + 470)

    def _scatter_page(self, canvas: PlotCanvas) -> QWidget:
        page = QWidget(self)
        bar = QHBoxLayout()
        self.scatter_x, self.scatter_y = QComboBox(page), QComboBox(page)
        for axis, combo in (("Horizontal", self.scatter_x), ("Vertical", self.scatter_y)):
            combo.setAccessibleName(f"{axis} attribute")
            combo.setToolTip(f"The attribute on the {axis.lower()} axis of both panels.")
            combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
            label = QLabel(f"{axis} &axis:" if axis == "Horizontal" else "&Vertical axis:",
                           page)
            label.setBuddy(combo)
            bar.addWidget(label)
            bar.addWidget(combo)
            combo.currentIndexChanged.connect(lambda _i: self.plots.invalidate(SCATTER)
                                              if self.result is not None else None)
        bar.addStretch(1)
        layout = QVBoxLayout(page)
        layout.setContentsMargins(0, 4, 0, 0)
        layout.addLayout(bar)
        layout.addWidget(canvas, 1)
        return page

    # -- stale --------------------------------------------------------------------------

    def set_stale(self, message: str | None) -> None:
        """Say that the result no longer matches the settings (``message``: what changed),
        or, with None, that it does."""
        self._stale_message = message or None
        if self._stale_message is None:
            self.stale_banner.hide()
            self.stale_banner.clear()
        else:
            self.stale_banner.setText("⟳ " + stale_text(self._stale_message))
            self.stale_banner.show()

    @property
    def is_stale(self) -> bool:
        """True while the stale banner is up."""
        return self._stale_message is not None

    # -- result -------------------------------------------------------------------------

    def clear(self) -> None:
        """Show that there is no result yet."""
        self.result = None
        self.original = None
        self.set_stale(None)
        self.status.setText("No result yet: choose the roles and a method, then Run.")
        self.status.setStyleSheet(_EMPTY_STYLE)
        for value in self.values.values():
            value.setText("—")
        for combo in (self.scatter_x, self.scatter_y):
            combo.blockSignals(True)
            combo.clear()
            combo.blockSignals(False)
        self.plots.set_builders([None] * self.plots.count(),
                                "Run a method to see the plots.")
        self._show_masked(None)
        self._fit_content()

    @property
    def masked_model(self) -> DataFrameModel:
        """The model of the released-table preview."""
        return self.masked_view.model()

    def _show_masked(self, frame: pd.DataFrame | None) -> None:
        self.masked_view.show_frame(DataFrameModel(frame, parent=self.masked_view))

    def _set_attributes(self, result: AnonymizationResult, original) -> None:
        names = plots.plot_attributes(result, original) if original is not None else []
        numeric = [c for c in names if plots.numeric_view(result, original, c) is not None]
        for combo, default in ((self.scatter_x, 0), (self.scatter_y, 1)):
            combo.blockSignals(True)
            combo.clear()
            combo.addItems(names)
            if numeric:
                combo.setCurrentText(numeric[min(default, len(numeric) - 1)])
            combo.setEnabled(bool(names))
            combo.blockSignals(False)

    def _scatter(self):
        return plots.scatter_figure(self.result, self.original,
                                    self.scatter_x.currentText() or None,
                                    self.scatter_y.currentText() or None)

    def show_result(self, result: AnonymizationResult, original: pd.DataFrame | None = None,
                    ) -> None:
        """Show every measure of ``result``, its verification and its plots.

        ``original`` (the table it was made from) enables the plots that compare with
        it; without it their tabs say so. Plots are drawn when their tab is opened.
        """
        self.result, self.original = result, original
        self.set_stale(None)
        m, v = result.metrics, result.verification
        method = get_method(result.method)
        parameters = ", ".join(f"{name} = {value}" for name, value in
                               result.parameters.items())
        self.values["method"].setText(f"{method.label} ({parameters})" if parameters
                                      else method.label)
        self.values["qi"].setText(quasi_identifier_text(result))
        orders = "\n".join(f"{c}: {' < '.join(map(str, order))}"
                           for c, order in result.orders.items())
        self.values["qi"].setToolTip(_TIPS["qi"] + ("\n" + orders if orders else ""))
        self.values["il"].setText(f"{format_number(m.il, 4)} %")
        self.values["sse"].setText(f"{format_number(m.sse)} / {format_number(m.sst)}")
        unmasked = len(getattr(result, "excluded", ()))
        self.values["records"].setText(
            f"{m.n_records:,}" if not unmasked else
            f"{m.n_records:,} masked of {m.n_records + unmasked:,} released "
            f"({unmasked:,} unmasked, not in these figures)")
        self.values["groups"].setText(f"{m.n_groups:,}")
        self.values["sizes"].setText(f"{m.min_group_size} / "
                                     f"{format_number(m.mean_group_size, 4)} / "
                                     f"{m.max_group_size}")
        self.values["classes"].setText(
            f"{m.n_classes:,} (sizes {m.min_class_size} to {m.max_class_size})"
            + ("; groups that released the same values are one class"
               if m.classes_differ else "") if m.n_classes else "—")
        self.values["k_prime"].setText(format_number(m.k_prime, 4))
        self.values["seconds"].setText(f"{result.seconds:.2f} s")
        ms = result.measures
        for key in ("il1", "risk", "score", "emd"):
            self.values[key].setText("—")
        if ms is not None:
            self.values["il1"].setText(f"{format_number(ms.il1, 4)} %")
            self.values["risk"].setText(f"{format_number(ms.dld, 4)} % / "
                                        f"{format_number(ms.id, 4)} % / "
                                        f"{format_number(ms.dr, 4)} %")
            self.values["score"].setText(format_number(ms.score, 4))
            self.values["emd"].setText(", ".join(
                f"{name} {value:.4f}" for name, value in ms.max_emd.items()) or "—")
        self._show_status(result)
        self._set_attributes(result, original)
        missing = ("The original table is not available here, so the release cannot be "
                   "compared with it.")
        self.plots.set_builders(
            [lambda: plots.group_size_figure(result), lambda: plots.closeness_figure(result),
             self._scatter if original is not None else None,
             (lambda: plots.changes_figure(result, original)) if original is not None
             else None], missing)
        self._show_masked(result.masked)
        self._fit_content()

    def _show_status(self, result: AnonymizationResult) -> None:
        v = result.verification
        merges = " ".join(result.strata_merges)
        if not result.guarantee.record_level:
            self.status.setText(" ".join([f"⚠ {result.guarantee_text}"]
                                         + [w.message for w in result.warnings]))
            self.status.setStyleSheet(_WARNING_STYLE)
        elif result.passed:
            scope = (f"in each of the {len(result.blocks)} attribute blocks, every class"
                     if len(result.blocks) > 1 else "every class")
            if len(result.excluded):
                scope += " of the masked records"
            # (the noise and the unmasked records are said in the guarantee's sentence)
            closeness = " " + result.check.banner() if result.tcloseness else ""
            self.status.setText(
                f"✔ Verified: {scope} has ≥ {v.k_required} records "
                f"(smallest class {v.smallest_class}, {v.n_classes:,} classes).{closeness} "
                f"{result.guarantee_text} {merges}".strip())
            self.status.setStyleSheet(_PASSED_STYLE)
            if result.warnings:  # each on a line of its own, the verdict after them
                first, *more = (w.message for w in result.warnings)
                self.status.setText(
                    f"⚠ Verified, but read before publishing: {first}"
                    + "".join(f"\n⚠ {message}" for message in more)
                    + f"\n{self.status.text()}")
                self.status.setStyleSheet(_WARNING_STYLE)
        else:
            notes = " ".join(v.notes) or "the verifier did not confirm the guarantee."
            self.status.setText(f"✘ Not verified: {notes}")
            self.status.setStyleSheet(_FAILED_STYLE)

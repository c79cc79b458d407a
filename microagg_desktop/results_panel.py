"""The Results tab: information loss, group sizes, verification and a histogram.

It shows a :class:`core.AnonymizationResult` and never computes anything itself: every
number comes from ``result.metrics`` and ``result.verification``.
"""

from __future__ import annotations

import pandas as pd
# The Qt canvas is used directly; pyplot (and its global backend) is never imported.
from matplotlib.backends.backend_qtagg import FigureCanvasQTAgg
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (QFormLayout, QGroupBox, QHBoxLayout, QLabel, QSizePolicy,
                               QSplitter, QVBoxLayout, QWidget)

from core import AnonymizationResult, get_method
from microagg_desktop.state import format_number
from microagg_desktop.table_model import DataFrameModel
from microagg_desktop.table_view import DataFrameView

__all__ = ["ResultsPanel", "GroupSizeHistogram"]

_PASSED_STYLE = ("QLabel { background: #dff3e0; color: #1b5e20; border: 1px solid #81c784;"
                 " border-radius: 4px; padding: 8px; font-weight: bold; }")
_FAILED_STYLE = ("QLabel { background: #fde2e1; color: #b71c1c; border: 1px solid #e57373;"
                 " border-radius: 4px; padding: 8px; font-weight: bold; }")
_WARNING_STYLE = ("QLabel { background: #fff4d6; color: #7a4f01; border: 1px solid #f0b429;"
                  " border-radius: 4px; padding: 8px; font-weight: bold; }")
_EMPTY_STYLE = "QLabel { color: palette(dark); padding: 8px; }"


class GroupSizeHistogram(FigureCanvasQTAgg):
    """Bar chart of how many groups have each size (one bar per integer size)."""

    def __init__(self, parent=None):
        self.figure = Figure(figsize=(5, 3), layout="constrained")
        super().__init__(self.figure)
        self.setParent(parent)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self.setMinimumSize(320, 220)
        self.axes = self.figure.add_subplot()
        self.clear()

    def clear(self) -> None:
        """An empty chart with a hint."""
        self.axes.clear()
        self.axes.set_axis_off()
        self.axes.text(0.5, 0.5, "Run a method to see the group sizes", ha="center",
                       va="center", color="grey", transform=self.axes.transAxes)
        self.draw_idle()

    def show_counts(self, counts: dict[int, int], k: int | None = None) -> None:
        """Draw ``counts`` ({group size: number of groups}); mark ``k`` if given."""
        self.axes.clear()
        self.axes.set_axis_on()
        sizes = sorted(counts)
        heights = [counts[s] for s in sizes]
        bars = self.axes.bar(sizes, heights, width=0.7, color="#4e79a7")
        self.axes.bar_label(bars, labels=[str(h) for h in heights], padding=2, fontsize=9)
        if k is not None:
            self.axes.axvline(k - 0.5, color="#c62828", linestyle="--", linewidth=1)
            self.axes.text(k - 0.5, 1.0, f" k = {k}", color="#c62828", fontsize=9,
                           va="top", transform=self.axes.get_xaxis_transform())
        low = min(sizes + ([k] if k is not None else []))
        self.axes.set_xlim(low - 1, max(sizes) + 1)
        self.axes.set_ylim(0, max(heights) * 1.15)
        self.axes.xaxis.set_major_locator(MaxNLocator(integer=True))
        self.axes.yaxis.set_major_locator(MaxNLocator(integer=True))
        self.axes.set_xlabel("Group size (records)")
        self.axes.set_ylabel("Number of groups")
        self.axes.set_title("Group sizes", fontsize=10)
        self.axes.spines[["top", "right"]].set_visible(False)
        self.draw_idle()


def quasi_identifier_text(result: AnonymizationResult) -> str:
    """The quasi-identifiers with the level of every categorical one, e.g. "age, sex (nominal)"."""
    return ", ".join(c if result.levels.get(c, "numeric") == "numeric"
                     else f"{c} ({result.levels[c]})" for c in result.roles.quasi_identifiers)


class ResultsPanel(QWidget):
    """Metrics, verification status, group-size histogram and the released table."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.result: AnonymizationResult | None = None
        self.status = QLabel(self)
        self.status.setWordWrap(True)
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        self.values: dict[str, QLabel] = {}
        metrics_box = QGroupBox("Summary", self)
        form = QFormLayout(metrics_box)
        form.setLabelAlignment(Qt.AlignmentFlag.AlignLeft)
        for key, label in (
            ("method", "Method"),
            ("qi", "Quasi-identifiers"),
            ("il", "Information loss (IL)"),
            ("sse", "SSE / SST"),
            ("records", "Records"),
            ("groups", "Groups"),
            ("sizes", "Group size min / mean / max"),
            ("k_prime", "k′ (records per distinct QI tuple)"),
            ("il1", "IL1 (data, covariances, variances, correlations)"),
            ("risk", "Disclosure risk: DLD / ID / DR"),
            ("score", "Score = 0.5·IL1 + 0.5·DR (lower is better)"),
            ("emd", "Largest class EMD (confidential)"),
            ("seconds", "Elapsed time"),
        ):
            value = QLabel("—", metrics_box)
            value.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            value.setWordWrap(key == "qi")
            self.values[key] = value
            form.addRow(f"{label}:", value)
        font = self.values["il"].font()
        font.setPointSizeF(font.pointSizeF() * 1.4)
        font.setBold(True)
        self.values["il"].setFont(font)

        self.histogram = GroupSizeHistogram(self)
        top = QWidget(self)
        top_layout = QHBoxLayout(top)
        top_layout.setContentsMargins(0, 0, 0, 0)
        top_layout.addWidget(metrics_box, 0)
        top_layout.addWidget(self.histogram, 1)

        self.masked_view = DataFrameView(self)
        masked_box = QGroupBox("Released table (masked)", self)
        QVBoxLayout(masked_box).addWidget(self.masked_view)

        splitter = QSplitter(Qt.Orientation.Vertical, self)
        splitter.addWidget(top)
        splitter.addWidget(masked_box)
        splitter.setStretchFactor(0, 3)
        splitter.setStretchFactor(1, 2)
        splitter.setChildrenCollapsible(False)
        layout = QVBoxLayout(self)
        layout.addWidget(self.status)
        layout.addWidget(splitter, 1)
        self.clear()

    def clear(self) -> None:
        """Show that there is no result yet."""
        self.result = None
        self.status.setText("No result yet: choose the roles and a method, then Run.")
        self.status.setStyleSheet(_EMPTY_STYLE)
        for value in self.values.values():
            value.setText("—")
        self.histogram.clear()
        self._show_masked(None)

    @property
    def masked_model(self) -> DataFrameModel:
        """The model of the released-table preview."""
        return self.masked_view.model()

    def _show_masked(self, frame: pd.DataFrame | None) -> None:
        self.masked_view.show_frame(DataFrameModel(frame, parent=self.masked_view))

    def show_result(self, result: AnonymizationResult) -> None:
        """Show every metric of ``result``, its verification and its group sizes."""
        self.result = result
        m, v = result.metrics, result.verification
        method = get_method(result.method)
        parameters = ", ".join(f"{name} = {value}" for name, value in
                               result.parameters.items())
        self.values["method"].setText(f"{method.label} ({parameters})" if parameters
                                      else method.label)
        self.values["qi"].setText(quasi_identifier_text(result))
        self.values["qi"].setToolTip("\n".join(
            f"{c}: {' < '.join(map(str, order))}" for c, order in result.orders.items()))
        self.values["il"].setText(f"{format_number(m.il, 4)} %")
        self.values["sse"].setText(f"{format_number(m.sse)} / {format_number(m.sst)}")
        self.values["records"].setText(f"{m.n_records:,}")
        self.values["groups"].setText(f"{m.n_groups:,}")
        self.values["sizes"].setText(f"{m.min_group_size} / "
                                     f"{format_number(m.mean_group_size, 4)} / "
                                     f"{m.max_group_size}")
        self.values["k_prime"].setText(format_number(m.k_prime, 4))
        self.values["seconds"].setText(f"{result.seconds:.2f} s")
        ms = result.measures
        if ms is not None:
            self.values["il1"].setText(f"{format_number(ms.il1, 4)} %")
            self.values["risk"].setText(f"{format_number(ms.dld, 4)} % / "
                                        f"{format_number(ms.id, 4)} % / "
                                        f"{format_number(ms.dr, 4)} %")
            self.values["score"].setText(format_number(ms.score, 4))
            self.values["emd"].setText(", ".join(
                f"{name} {value:.4f}" for name, value in ms.max_emd.items()) or "—")
        merges = " ".join(result.strata_merges)
        if not result.guarantee.record_level:
            self.status.setText(" ".join([f"⚠ {result.guarantee_text}"]
                                         + [w.message for w in result.warnings]))
            self.status.setStyleSheet(_WARNING_STYLE)
        elif result.passed:
            scope = (f"in each of the {len(result.blocks)} attribute blocks, every class"
                     if len(result.blocks) > 1 else "every class")
            closeness = " " + result.check.banner() if result.tcloseness else ""
            if result.noise is not None:
                closeness += (f" Laplace noise, ε = {result.noise.epsilon:g}: stochastic "
                              f"t = {result.noise.stochastic_t:.4g} (Proposition 1).")
            self.status.setText(
                f"✔ Verified: {scope} has ≥ {v.k_required} records "
                f"(smallest class {v.smallest_class}, {v.n_classes:,} classes).{closeness} "
                f"{result.guarantee_text} {merges}".strip())
            self.status.setStyleSheet(_PASSED_STYLE)
            if result.warnings:
                self.status.setText(
                    "⚠ Verified, but read before publishing: "
                    + " ".join(w.message for w in result.warnings)
                    + f"\n{self.status.text()}")
                self.status.setStyleSheet(_WARNING_STYLE)
        else:
            notes = " ".join(v.notes) or "the verifier did not confirm the guarantee."
            self.status.setText(f"✘ Not verified: {notes}")
            self.status.setStyleSheet(_FAILED_STYLE)
        self.histogram.show_counts(m.group_size_counts, v.k_required)
        self._show_masked(result.masked)

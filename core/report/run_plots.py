"""Figures of several runs: the risk–utility map, a parameter sweep, comparison bars.

Plain :class:`matplotlib.figure.Figure` objects (never pyplot, no GUI): the desktop
application draws them on its canvases, a script can save them. Every function takes an
optional ``figure`` to draw into (it is cleared first), so a canvas keeps its figure.

The *risk–utility map* places every run by its information loss IL (x, percent) and its
disclosure risk (y: DLD or DR, percent); lower left is better on both. A run whose
guarantee was not verified is drawn as a hollow red cross.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from core.errors import MicroaggError
from core.pipeline.sweep import SweepPoint

__all__ = ["RunPoint", "RISKS", "risk_utility_figure", "sweep_figure", "comparison_bars"]

RISKS = {"dld": "Linkage disclosure DLD (%)", "dr": "Disclosure risk DR (%)"}
"""The risk measures a map or a sweep can show on its y axis."""

_VERIFIED, _UNVERIFIED, _SELECTED = "#4e79a7", "#c62828", "#f28e2b"
_IL_COLOUR, _GREY = "#4e79a7", "#9e9e9e"
# Label offsets (points) tried in turn, so that labels of nearby runs do not overlap.
_OFFSETS = ((7, 6), (7, -12), (-7, 6), (-7, -12), (7, 18), (-7, 18), (7, -24), (-7, -24))
_OFFSETS_LEFT = tuple(dict.fromkeys((-abs(dx), dy) for dx, dy in _OFFSETS))  # right edge


@dataclass(frozen=True)
class RunPoint:
    """One run on the risk–utility map.

    Attributes
    ----------
    label : str
        E.g. ``"#3 MDAV k=5"``.
    il : float
        Information loss, percent.
    dld, dr : float or None
        Linkage disclosure and disclosure risk, percent (None when not measured).
    verified : bool
    selected : bool
    """

    label: str
    il: float
    dld: float | None
    dr: float | None
    verified: bool = True
    selected: bool = False


def _new(figure: Figure | None, size=(6.0, 4.0)) -> Figure:
    if figure is None:
        return Figure(figsize=size, layout="constrained")
    figure.clear()
    return figure


def _check_risk(risk: str) -> None:
    if risk not in RISKS:
        raise MicroaggError(f"Unknown risk measure '{risk}' for the map. Use one of: "
                            f"{', '.join(RISKS)}.")


def _empty(axes, text: str) -> None:
    axes.set_axis_off()
    axes.text(0.5, 0.5, text, ha="center", va="center", color="grey", wrap=True,
              transform=axes.transAxes)


def _limit(values: Sequence[float]) -> float:
    """An upper axis limit with room for labels, never above what percent needs."""
    top = max(values) if values else 1.0
    return min(max(top * 1.2, top + 2.0, 5.0), 105.0) if top <= 100 else top * 1.1


def risk_utility_figure(points: Sequence[RunPoint], risk: str = "dld", *,
                        figure: Figure | None = None) -> Figure:
    """Every run placed by information loss (x) against disclosure risk (y).

    Parameters
    ----------
    points : sequence of RunPoint
    risk : {"dld", "dr"}
        The risk measure on the y axis.
    figure : Figure, optional
        Drawn into (cleared first) instead of a new figure.

    Examples
    --------
    >>> fig = risk_utility_figure([RunPoint("#1 MDAV k=3", 8.0, 30.5, 39.3)])
    >>> fig.axes[0].get_xlabel()
    'Information loss IL (%)'
    """
    _check_risk(risk)
    figure = _new(figure)
    axes = figure.add_subplot()
    placed = [p for p in points if getattr(p, risk) is not None]
    if not placed:
        _empty(axes, "Run a method to place it on the map")
        return figure
    xs = [p.il for p in placed]
    ys = [getattr(p, risk) for p in placed]
    x_top, y_top = _limit(xs), _limit(ys)
    axes.set_xlim(-0.02 * x_top, x_top)  # a run at 0 is drawn whole
    axes.set_ylim(-0.02 * y_top, y_top)
    for group, style in ((True, dict(marker="o", s=55, color=_VERIFIED, label="verified")),
                         (False, dict(marker="X", s=70, facecolors="none",
                                      edgecolors=_UNVERIFIED, linewidths=1.6,
                                      label="not verified"))):
        chosen = [p for p in placed if p.verified is group]
        if chosen:
            axes.scatter([p.il for p in chosen], [getattr(p, risk) for p in chosen],
                         zorder=3, **style)
    for p in placed:
        if p.selected:
            axes.scatter([p.il], [getattr(p, risk)], s=260, facecolors="none",
                         edgecolors=_SELECTED, linewidths=2.2, zorder=4, label="selected")
    taken: list[tuple[float, float, int]] = []
    for p in sorted(placed, key=lambda q: (q.il, getattr(q, risk))):
        x, y = p.il / x_top, getattr(p, risk) / y_top  # in axes fractions
        near = sum(1 for (a, b, _) in taken if abs(a - x) < 0.12 and abs(b - y) < 0.07)
        offsets = _OFFSETS_LEFT if x > 0.75 else _OFFSETS  # labels stay inside the axes
        dx, dy = offsets[near % len(offsets)]
        taken.append((x, y, near))
        axes.annotate(p.label, (p.il, getattr(p, risk)), xytext=(dx, dy),
                      textcoords="offset points", fontsize=8,
                      ha="left" if dx > 0 else "right",
                      fontweight="bold" if p.selected else "normal",
                      color="#212121" if p.verified else _UNVERIFIED,
                      bbox=dict(boxstyle="round,pad=0.15", fc="white", ec="none",
                                alpha=0.75))
    axes.set_xlabel("Information loss IL (%)")
    axes.set_ylabel(RISKS[risk])
    axes.set_title("Risk–utility map (lower left is better)", fontsize=10)
    axes.grid(True, color="#e0e0e0", linewidth=0.6)
    axes.set_axisbelow(True)
    axes.spines[["top", "right"]].set_visible(False)
    axes.legend(loc="upper right", fontsize=8, framealpha=0.85)
    return figure


def sweep_figure(parameter: str, values: Sequence[float], points: Sequence[SweepPoint], *,
                 risk: str = "dld", selected: float | None = None,
                 figure: Figure | None = None) -> Figure:
    """Information loss and disclosure risk against the swept parameter.

    Parameters
    ----------
    parameter : str
        The swept parameter's name (x axis), e.g. ``"k"``.
    values : sequence of numbers
        The values swept, one per point.
    points : sequence of SweepPoint
        :func:`core.pipeline.sweep.sweep`'s output; a failed value is marked with a grey
        cross on the x axis.
    risk : {"dld", "dr"}
    selected : number, optional
        The value marked with a vertical line.
    figure : Figure, optional
    """
    _check_risk(risk)
    if len(values) != len(points):
        raise MicroaggError(f"The sweep has {len(points)} points for {len(values)} values; "
                            "give one point per value.")
    figure = _new(figure)
    axes = figure.add_subplot()
    done = [(v, p.summary) for v, p in zip(values, points) if p.ok]  # figures only
    failed = [v for v, p in zip(values, points) if not p.ok]
    if not done and not failed:
        _empty(axes, "Choose a range of values and run the sweep")
        return figure
    xs = [v for v, _ in done]
    il = [r.metrics.il for _, r in done]
    risks = [getattr(r.measures, risk) if r.measures is not None else float("nan")
             for _, r in done]
    axes.plot(xs, il, "o-", color=_IL_COLOUR, label="Information loss IL (%)")
    axes.plot(xs, risks, "s--", color=_UNVERIFIED, label=RISKS[risk])
    if failed:
        axes.plot(failed, [0.0] * len(failed), "x", color=_GREY, markersize=9,
                  clip_on=False, label="failed (see the list)")
    if selected is not None:
        axes.axvline(selected, color=_SELECTED, linewidth=2, alpha=0.8,
                     label=f"chosen: {parameter} = {selected:g}")
    axes.set_ylim(0, _limit([*il, *[r for r in risks if r == r]] or [1.0]))
    if all(float(v).is_integer() for v in values):
        axes.xaxis.set_major_locator(MaxNLocator(integer=True))
    axes.set_xlabel(parameter)
    axes.set_ylabel("Percent")
    axes.set_title(f"Information loss and risk against {parameter}", fontsize=10)
    axes.grid(True, color="#e0e0e0", linewidth=0.6)
    axes.spines[["top", "right"]].set_visible(False)
    axes.legend(loc="best", fontsize=8, framealpha=0.85)
    return figure


def comparison_bars(labels: Sequence[str], measures: Mapping[str, Sequence[float | None]], *,
                    figure: Figure | None = None) -> Figure:
    """One bar chart per measure, one bar per run.

    Parameters
    ----------
    labels : sequence of str
        The runs, e.g. ``["#1 MDAV k=3", "#2 CBFS k=5"]``.
    measures : mapping of title to sequence
        E.g. ``{"IL (%)": [8.0, 13.4], "DLD (%)": [30.5, 17.8], "k′": [3, 5]}``; one value
        per run (None: not measured, no bar).
    figure : Figure, optional
    """
    figure = _new(figure)
    if not labels or not measures:
        _empty(figure.add_subplot(), "Choose two or more runs to compare")
        return figure
    colours = ["#4e79a7", "#f28e2b", "#59a14f", "#b07aa1", "#76b7b2", "#edc948",
               "#ff9da7", "#9c755f", "#bab0ac", "#e15759"]
    short = [label.split(" ")[0] for label in labels]  # "#3": full labels in the legend
    axes_list = figure.subplots(1, len(measures), squeeze=False)[0]
    for axes, (title, values) in zip(axes_list, measures.items()):
        if len(values) != len(labels):
            raise MicroaggError(f"'{title}' has {len(values)} values for {len(labels)} runs.")
        heights = [0.0 if v is None else float(v) for v in values]
        bars = axes.bar(range(len(labels)), heights,
                        color=[colours[i % len(colours)] for i in range(len(labels))])
        axes.bar_label(bars, labels=["—" if v is None else f"{v:.3g}" for v in values],
                       padding=2, fontsize=8)
        axes.set_xticks(range(len(labels)), short, fontsize=8)
        axes.set_title(title, fontsize=9)
        axes.set_ylim(0, max(heights + [1e-9]) * 1.2 or 1.0)
        axes.spines[["top", "right"]].set_visible(False)
        axes.tick_params(axis="y", labelsize=8)
    handles = [axes_list[0].patches[i] for i in range(len(labels))]
    figure.legend(handles, labels, loc="outside lower center", fontsize=8,
                  ncols=min(len(labels), 3), frameon=False)
    return figure

"""Groups are what the method formed; classes are what the released file shows (records
with the same released quasi-identifiers). Groups that release the same values are one
class, and every view says how many classes there are and how large."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from core import RoleSpec, anonymize
from core.report import plots
from core.report.summary import summary_frame


@pytest.fixture(scope="module")
def repeated():
    """20 identical records among 30 others: MDAV's groups of them release one value."""
    rng = np.random.default_rng(4)
    others = pd.DataFrame({"a": rng.normal(50, 10, 30), "b": rng.normal(0, 1, 30)})
    same = pd.DataFrame({"a": [42.0] * 20, "b": [0.5] * 20})
    table = pd.concat([others, same], ignore_index=True)
    return table, anonymize(table, RoleSpec(quasi_identifiers=("a", "b")), "mdav", k=5)


def _file_classes(result):
    return result.masked.groupby(["a", "b"]).size()


def test_metrics_hold_the_released_classes_beside_the_groups(repeated):
    _, result = repeated
    m = result.metrics
    sizes = _file_classes(result)
    assert m.n_groups == 10 and m.group_size_counts == {5: 10}
    assert m.n_classes == len(sizes) < m.n_groups and m.classes_differ
    assert (m.min_class_size, m.max_class_size) == (sizes.min(), sizes.max())
    assert m.max_class_size >= 15
    counts = {int(s): int(c) for s, c in sizes.value_counts().sort_index().items()}
    assert m.class_size_counts == counts
    summary = result.summary()
    assert summary["n_classes"] == len(sizes) and summary["n_groups"] == 10
    assert summary["class_size_counts"] == {str(s): c for s, c in counts.items()}


def test_a_release_whose_groups_are_its_classes():
    rng = np.random.default_rng(0)
    table = pd.DataFrame({"a": rng.normal(size=40), "b": rng.normal(size=40)})
    m = anonymize(table, RoleSpec(quasi_identifiers=("a", "b")), "mdav", k=4).metrics
    assert not m.classes_differ and m.n_classes == m.n_groups == 10
    assert m.class_size_counts == m.group_size_counts


def test_the_size_plot_shows_the_classes_when_groups_merged(repeated):
    _, result = repeated
    sizes = _file_classes(result)
    figure = plots.group_size_figure(result)
    axes = figure.axes[0]
    assert figure._suptitle.get_text().startswith(
        f"Class sizes of the released table: {len(sizes)} classes of 50 records (smallest "
        f"{sizes.min()}, largest {sizes.max()}), from the 10 groups")
    heights = sorted(p.get_height() for p in axes.patches)
    assert heights == sorted(sizes.value_counts().tolist())
    assert axes.get_xlabel() == "Class size (records)"
    assert axes.get_ylabel() == "Number of classes"


def test_summary_sheet_and_report_give_the_classes(repeated):
    table, result = repeated
    sizes = _file_classes(result)
    items = dict(summary_frame(result).itertuples(index=False))
    assert items["Classes in the released table (distinct quasi-identifier values)"] == \
        len(sizes)
    assert items["Smallest class"] == sizes.min() and items["Largest class"] == sizes.max()
    assert items[f"Classes of size {sizes.max()}"] == (sizes == sizes.max()).sum()
    assert items["Groups of size 5"] == 10


def test_results_panel_says_the_classes(qtbot, repeated):
    from microagg_desktop.results_panel import ResultsPanel
    table, result = repeated
    panel = ResultsPanel()
    qtbot.addWidget(panel)
    panel.show_result(result, table)
    assert panel.values["groups"].text() == "10"
    sizes = _file_classes(result)
    assert panel.values["classes"].text() == (
        f"{len(sizes)} (sizes {sizes.min()} to {sizes.max()}); groups that released the same "
        "values are one class")

"""The figures of a result (core.report.plots): Qt-free, labelled, readable at any size."""

from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from core import RoleSpec, anonymize, read_table
from core.report import plots

QI = ("age", "years_education", "income", "hours_worked", "household_size")


@pytest.fixture(scope="module")
def survey(sample_path):
    return read_table(sample_path)


@pytest.fixture(scope="module")
def mdav(survey):
    return anonymize(survey, RoleSpec(quasi_identifiers=QI, confidential=("health_spending",),
                                      identifiers=("person_id",)), "mdav", k=5)


def _bars(axes):
    return [p for p in axes.patches if isinstance(p, Rectangle)]


def _texts(figure: Figure) -> str:
    out = [figure._suptitle.get_text() if figure._suptitle else ""]
    for axes in figure.axes:
        out += [axes.get_title(), axes.get_xlabel(), axes.get_ylabel()]
        out += [t.get_text() for t in axes.texts]
    return " ".join(out)


def test_group_sizes_one_bar_per_size_and_k_marked(mdav):
    figure = plots.group_size_figure(mdav)
    axes = figure.axes[0]
    assert len(_bars(axes)) == len(mdav.metrics.group_size_counts)
    assert sorted(round(b.get_x() + b.get_width() / 2) for b in _bars(axes)) == sorted(
        mdav.metrics.group_size_counts)
    assert [b.get_height() for b in _bars(axes)] == [
        mdav.metrics.group_size_counts[s] for s in sorted(mdav.metrics.group_size_counts)]
    assert any(np.allclose(line.get_xdata(), 4.5) for line in axes.lines)  # k = 5
    assert "Group size (records)" in axes.get_xlabel() and "k = 5" in _texts(figure)


def test_group_sizes_many_sizes_integer_bins_and_log_axis():
    counts = {size: (10_000 if size == 5 else 1 + size % 3) for size in range(5, 200)}
    result = SimpleNamespace(
        metrics=SimpleNamespace(group_size_counts=counts, n_groups=sum(counts.values()),
                                n_records=sum(s * c for s, c in counts.items()),
                                min_group_size=5, max_group_size=199),
        verification=SimpleNamespace(k_required=5), parameters={"k": 5})
    axes = plots.group_size_figure(result).axes[0]
    bars = _bars(axes)
    assert 1 < len(bars) <= 30
    for bar in bars:  # no bin splits a size: edges at half-integers, whole widths
        assert bar.get_x() % 1 == pytest.approx(0.5)
        assert bar.get_width() == pytest.approx(round(bar.get_width()))
    assert sum(b.get_height() for b in bars) == sum(counts.values())
    assert axes.get_yscale() == "log"


def test_one_group_result():
    table = pd.DataFrame({"x": np.arange(8.0), "y": np.arange(8.0) ** 2,
                          "c": [1, 2, 3, 4, 5, 6, 7, 8]})
    result = anonymize(table, RoleSpec(quasi_identifiers=("x", "y"), confidential=("c",)),
                       "mdav", k=8)
    assert result.metrics.n_groups == 1
    assert len(_bars(plots.group_size_figure(result).axes[0])) == 1
    closeness = plots.closeness_figure(result)
    assert "'c'" in _texts(closeness)
    scatter = plots.scatter_figure(result, table)
    released = scatter.axes[1].collections[0].get_offsets()
    assert len(np.unique(np.asarray(released), axis=0)) == 1  # one group: one point
    changes = plots.changes_figure(result, table)
    assert "Variances" in _texts(changes)


def test_closeness_t_line_and_multiplicative_ratio(survey):
    roles = RoleSpec(quasi_identifiers=QI, confidential=("health_spending",),
                     identifiers=("person_id",))
    tfirst = anonymize(survey, roles, "tc-tfirst", k=5, t=0.3)
    axes = plots.closeness_figure(tfirst).axes[0]
    assert any(np.allclose(line.get_ydata(), 0.3) for line in axes.lines)
    drawn = np.asarray(axes.lines[0].get_ydata(), dtype=float)
    assert drawn.max() == pytest.approx(tfirst.tcloseness.max_emd[0])
    assert len(drawn) == tfirst.tcloseness.n_classes

    bucket = anonymize(survey, roles, "tc-bucket", k=5, t=1.5)
    figure = plots.closeness_figure(bucket)
    assert "Multiplicative" in figure.axes[0].get_ylabel()
    distances = plots._multiplicative_distances(bucket)["health_spending"]
    assert distances.max() == pytest.approx(bucket.tcloseness.max_distance[0])


def test_no_confidential_attribute_says_why(survey):
    result = anonymize(survey, RoleSpec(quasi_identifiers=QI, identifiers=("person_id",)),
                       "mdav", k=5)
    text = _texts(plots.closeness_figure(result))
    assert "no confidential attribute" in text.lower()
    names = [t.get_text() for t in plots.changes_figure(result, survey).axes[0].get_yticklabels()]
    assert names == list(QI)


def test_changes_are_the_relative_changes(mdav, survey):
    figure = plots.changes_figure(mdav, survey)
    variances = figure.axes[1]
    for bar, column in zip(_bars(variances), list(QI) + ["health_spending"]):
        before, after = survey[column].var(ddof=0), mdav.masked[column].var(ddof=0)
        assert bar.get_width() == pytest.approx(100 * (after - before) / before)
    assert all(b.get_width() == pytest.approx(0, abs=1e-9) for b in _bars(figure.axes[0]))


def test_nominal_and_ordinal_quasi_identifiers(survey):
    roles = RoleSpec(quasi_identifiers=("age", "region", "years_education"),
                     identifiers=("person_id",), levels={"region": "nominal",
                                                         "years_education": "ordinal"})
    result = anonymize(survey, roles, "mdav", k=5)
    assert plots.plot_attributes(result, survey)[-1] == "region"
    nominal = plots.scatter_figure(result, survey, "age", "region")
    assert "nominal" in _texts(nominal)
    categories = [t.get_text() for t in nominal.axes[0].get_xticklabels()]
    assert set(categories) == set(survey["region"].astype(str))
    ordinal = plots.scatter_figure(result, survey, "age", "years_education")
    assert "category rank" in _texts(ordinal)
    names = [t.get_text() for t in plots.changes_figure(result, survey).axes[0].get_yticklabels()]
    assert names == ["age", "years_education"]


def test_without_the_original_the_figures_say_so(mdav):
    for figure in (plots.scatter_figure(mdav, None), plots.changes_figure(mdav, None)):
        assert "original table is not available" in _texts(figure)


def test_a_200000_record_result_is_subsampled():
    rng = np.random.default_rng(1)
    n = 200_000
    table = pd.DataFrame({"a": rng.normal(size=n), "b": rng.integers(0, 100, n),
                          "c": rng.exponential(size=n)})
    result = anonymize(table, RoleSpec(quasi_identifiers=("a", "b"), confidential=("c",)),
                       "pcp", k=5)
    figure = plots.scatter_figure(result, table)
    assert all(len(ax.collections[0].get_offsets()) == plots.MAX_SCATTER_POINTS
               for ax in figure.axes)
    assert "random 20,000 of 200,000 records, seed 0" in _texts(figure)
    again = plots.scatter_figure(result, table)
    np.testing.assert_array_equal(figure.axes[0].collections[0].get_offsets(),
                                  again.axes[0].collections[0].get_offsets())
    for build in (plots.group_size_figure, plots.closeness_figure):
        assert isinstance(build(result), Figure)
    assert "Correlations" in _texts(plots.changes_figure(result, table))


@settings(max_examples=80, deadline=None)
@given(st.integers(1, 40), st.integers(1, 5), st.integers(0, 2**32 - 1),
       st.sampled_from(["normal", "constant column", "missing", "few values"]))
def test_column_moments_are_pandas_figures(rows, columns, seed, kind):
    """The changes plot's means, variances and correlations: numpy's pass when nothing
    is missing, pandas' pairwise figures otherwise; the same numbers to rounding."""
    rng = np.random.default_rng(seed)
    values = rng.normal(size=(rows, columns)) * 10.0 ** rng.integers(-3, 4, columns)
    if kind == "constant column":  # means that are not exact, as a release's can be
        values[:, 0] = 0.1
        values[:, -1] = 1.0 / 3.0
    elif kind == "missing":
        values[rng.random(values.shape) < 0.3] = np.nan
    elif kind == "few values":
        values = rng.integers(0, 3, values.shape).astype(float)
    frame = pd.DataFrame(values, columns=[f"c{j}" for j in range(columns)])
    mean, var, corr = plots.column_moments(frame)
    expected = (frame.mean(), frame.var(ddof=0), frame.corr())
    for got, want in zip((mean, var, corr), expected):
        want = want.to_numpy(float)
        assert got.shape == want.shape
        assert np.array_equal(np.isnan(got), np.isnan(want))
        assert np.allclose(got[~np.isnan(got)], want[~np.isnan(want)], rtol=1e-9,
                           atol=1e-12)
    if kind == "constant column":  # no variance, and no correlation either way
        assert var[0] == 0.0 and np.isnan(corr[0]).all() and np.isnan(corr[:, 0]).all()

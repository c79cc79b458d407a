"""Projected microaggregation (PCP and Z-scores), Nin, Mic1D-k, Algorithm 1."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from core.errors import MicroaggError
from core.measures.partition import sse
from core.data.prepare import standardize
from core.progress import TaskState
from core.methods.projection import pcp, pcp_projection, zscores, zscores_projection
from core.methods.univariate import optimal_univariate
from tests.conftest import CENSUS_COLUMNS
from tests.test_univariate import VALUES, assert_runs_of_order, best_run_sse, close

METHODS = {"pcp": (pcp, pcp_projection), "zscores": (zscores, zscores_projection)}


@pytest.mark.parametrize("name", METHODS)
@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_optimal_cut_of_the_projected_order(name, data):
    method, project = METHODS[name]
    k = data.draw(st.integers(2, 4), label="k")
    n = data.draw(st.integers(k, 13), label="n")
    d = data.draw(st.integers(1, 3), label="d")
    X = data.draw(arrays(np.float64, (n, d), elements=VALUES), label="X")
    before = X.copy()
    labels = method(X, k=k)
    assert np.array_equal(X, before)
    order = np.argsort(project(X), kind="stable")
    assert_runs_of_order(labels, order, k)
    # The edge cost is the SSE of the original d attributes, not of the projection.
    assert close(sse(X, labels), best_run_sse(X[order], k))


def test_zscores_projection_is_the_row_sum():
    X = np.random.default_rng(1).normal(size=(50, 4))
    assert np.array_equal(zscores_projection(X), X.sum(axis=1))


@settings(max_examples=100, deadline=None)
@given(st.data())
def test_pcp_on_a_line_is_optimal_univariate_on_the_line(data):
    k = data.draw(st.integers(2, 4), label="k")
    n = data.draw(st.integers(k, 40), label="n")
    t = data.draw(arrays(np.float64, n, elements=st.integers(-50, 50).map(float)),
                  label="t")
    direction = np.array([3.0, -4.0, 0.0])  # length 5: SSE on the line times 25
    X = 2.0 + t[:, None] * direction
    line = sse(t[:, None], optimal_univariate(t, k=k))
    assert close(sse(X, pcp(X, k=k)), 25.0 * line)
    if np.ptp(t) > 0:
        # The component is ±direction/5, signed so that its largest loading (−4/5 → 4/5)
        # is positive: the scores are −(t − mean)·5.
        assert np.allclose(pcp_projection(X), -5.0 * (t - t.mean()), atol=1e-8 * 250)


def test_pcp_sign_makes_the_largest_loading_positive():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(200, 3)) * [1.0, 3.0, 0.5]
    centred = X - X.mean(axis=0)
    _, vectors = np.linalg.eigh(centred.T @ centred / len(X))
    component = vectors[:, -1]
    assert abs(component[1]) == np.abs(component).max()
    expected = centred @ (component * np.sign(component[1]))
    assert np.allclose(pcp_projection(X), expected)
    # Negating the data keeps the covariance, hence the component: the scores flip.
    assert np.allclose(pcp_projection(-X), -expected)
    assert np.allclose(pcp_projection(X[:, [1, 0, 2]]), expected)


def test_hand_example_two_clusters():
    X = np.array([[0.0, 0.1], [5.0, 5.2], [0.2, 0.0], [5.1, 4.9], [0.1, 0.2], [5.2, 5.0]])
    for method in (pcp, zscores):
        assert method(X, k=3).tolist() == [0, 1, 0, 1, 0, 1]
        assert method(X, k=2).tolist() == method(X, k=2).tolist()


def test_bad_input_and_progress():
    X = np.zeros((4, 2))
    for method in (pcp, zscores):
        with pytest.raises(MicroaggError, match=r"4 record\(s\), fewer than k = 5"):
            method(X, k=5)
        with pytest.raises(MicroaggError, match="'k'"):
            method(X, k=1)
        with pytest.raises(MicroaggError, match="2-D"):
            method(np.zeros(6), k=2)
        reports = []
        method(np.random.default_rng(3).normal(size=(5000, 3)), k=3,
               state=TaskState(lambda fraction, message: reports.append(fraction)))
        assert len(reports) >= 100 and reports[-1] == 1.0
        assert np.all(np.diff(reports) >= 0)


@pytest.mark.parametrize("name", METHODS)
@pytest.mark.parametrize("k", [3, 5, 10])
def test_census_information_loss(census, name, k):
    method, project = METHODS[name]
    X = standardize(census, CENSUS_COLUMNS).X
    manual = census[list(CENSUS_COLUMNS)].to_numpy(dtype=float)
    assert np.allclose(X, (manual - manual.mean(axis=0)) / manual.std(axis=0, ddof=0))
    labels = method(X, k=k)
    assert_runs_of_order(labels, np.argsort(project(X), kind="stable"), k)
    il = 100.0 * sse(X, labels) / X.size  # SST = n·d after z-scoring
    print(f"Census {name} k={k}: IL = {il:.4f}")
    assert np.isfinite(il) and 0.0 < il < 100.0

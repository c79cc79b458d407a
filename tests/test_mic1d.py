"""Mic1D-k (Nin, One dimension microaggregation, Section 3): worked example and properties."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from core.errors import Cancelled, MicroaggError
from core.measures.disclosure import real_anonymity
from core.methods.mic1d import _mic1d, masked_values, mic1d, mic1d_values
from core.progress import TaskState
from core.methods.registry import MethodInput
from core.data.roles import RoleSpec

WORKED = np.array([[1.0, 10.0], [2.0, 40.0], [4.0, 20.0]])
VALUES = st.floats(-1e4, 1e4, allow_nan=False, allow_infinity=False).map(
    lambda v: round(v, 2))  # rounding makes ties (and constant runs) frequent


def naive_mic1d(X: np.ndarray, k: int) -> np.ndarray:
    """The module's reading, written out with exact fractions and plain loops."""
    n, d = X.shape
    cells = [(j, i) for j in range(d) for i in range(n)]  # column by column
    values = [Fraction(float(X[i, j])) for j, i in cells]
    first = sorted(range(len(cells)), key=lambda c: (values[c], c))
    run1 = {c: pos // k for pos, c in enumerate(first)}

    def ranges(order, value, run):
        out = {}
        for c in order:
            low, high = out.get(run[c], (value[c], value[c]))
            out[run[c]] = (min(low, value[c]), max(high, value[c]))
        return out

    r1 = ranges(first, values, run1)
    u = {}
    for c in first:
        low, high = r1[run1[c]]
        u[c] = Fraction(1, 2) if high == low else (values[c] - low) / (high - low)
    position = {c: pos for pos, c in enumerate(first)}
    second = sorted(first, key=lambda c: (u[c], position[c]))
    run2 = {c: pos // k for pos, c in enumerate(second)}
    mean_u = {}
    for c in second:
        mean_u.setdefault(run2[c], []).append(u[c])
    mean_u = {m: sum(v) / len(v) for m, v in mean_u.items()}
    out = np.empty_like(X)
    for c, (j, i) in enumerate(cells):
        low, high = r1[run1[c]]
        out[i, j] = float(low + mean_u[run2[c]] * (high - low))
    return out


def test_worked_example_of_the_docstring():
    masked = mic1d(WORKED, k=3)
    expected = np.array([[4 / 3, 40 / 3], [4 / 3, 100 / 3], [10 / 3, 100 / 3]])
    np.testing.assert_allclose(masked, expected, rtol=1e-14)
    # Every value was averaged with two others, yet every record is unique.
    assert real_anonymity(masked) == 1.0


def test_two_values_per_run_worked_by_hand():
    # k = 2: runs {1,2} {4,10} {20,40}; u = 0 1 | 0 1 | 0 1; second runs {1,4} {20,2} {10,40}.
    masked = mic1d(WORKED, k=2)
    np.testing.assert_allclose(masked, [[1.0, 10.0], [1.5, 40.0], [4.0, 30.0]], rtol=1e-14)


def test_round_trip_without_the_means_returns_the_data():
    rng = np.random.default_rng(3)
    X = np.round(np.exp(rng.normal(size=(200, 4)) * 2), 1)
    for k in (2, 7, 64, 799, 800):
        np.testing.assert_allclose(_mic1d(X, k, None, average=False), X, rtol=1e-12,
                                   atol=1e-12 * np.abs(X).max())


@settings(max_examples=120, deadline=None)
@given(data=st.data())
def test_matches_the_exact_reading(data):
    n = data.draw(st.integers(1, 8), label="n")
    d = data.draw(st.integers(1, 3), label="d")
    X = data.draw(arrays(np.float64, (n, d), elements=VALUES), label="X")
    k = data.draw(st.integers(2, max(2, n * d)), label="k")
    if k > n * d:
        with pytest.raises(MicroaggError):
            mic1d(X, k=k)
        return
    before = X.copy()
    masked = mic1d(X, k=k)
    assert np.array_equal(X, before)
    scale = max(1.0, float(np.abs(X).max()))
    np.testing.assert_allclose(masked, naive_mic1d(X, k), rtol=0, atol=1e-9 * scale)


@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_properties(data):
    n = data.draw(st.integers(1, 12), label="n")
    d = data.draw(st.integers(1, 4), label="d")
    X = data.draw(arrays(np.float64, (n, d), elements=VALUES), label="X")
    k = data.draw(st.integers(2, max(2, n * d)), label="k")
    if k > n * d:
        return
    masked = mic1d(X, k=k)
    assert masked.shape == X.shape
    assert np.isfinite(masked).all()
    # Within the original range (within each value's first-round run, in fact).
    assert masked.min() >= X.min() and masked.max() <= X.max()
    # Reproducible.
    assert np.array_equal(masked, mic1d(X, k=k))
    # At most (P + 1)**2 distinct masked values: one per (first run, second run) pair.
    runs = -(-X.size // k)
    assert len(np.unique(masked)) <= runs * runs
    # A constant table is left as it is.
    constant = np.full_like(X, X.flat[0])
    assert np.array_equal(mic1d(constant, k=k), constant)


def test_the_whole_vector_as_one_run_gives_the_global_mean():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 3)) * [1, 100, 1e4]
    np.testing.assert_allclose(mic1d(X, k=X.size), np.full(X.shape, X.mean()), rtol=1e-12)


def test_k_counts_values_and_may_exceed_the_records():
    masked = mic1d(WORKED, k=5)  # 3 records, 6 values: runs of 5 and 1
    assert masked.shape == (3, 2)
    assert masked[1, 1] == 40.0  # the largest value is alone in the last first run
    with pytest.raises(MicroaggError, match=r"\[2, 6\]"):
        mic1d(WORKED, k=7)
    for bad in (1, 0, 2.5, True, "3"):
        with pytest.raises(MicroaggError, match="'k' parameter of Mic1D-k"):
            mic1d(WORKED, k=bad)


def test_bad_values_are_rejected():
    with pytest.raises(MicroaggError, match="row 2, attribute 1"):
        mic1d(np.array([[1.0, 2.0], [np.nan, 3.0]]), k=2)
    with pytest.raises(MicroaggError, match="2-D"):
        mic1d(np.array([1.0, 2.0]), k=2)
    with pytest.raises(MicroaggError, match="not numeric"):
        mic1d(pd.DataFrame({"a": ["x", "y"]}), k=2)


def test_dataframe_in_dataframe_out():
    table = pd.DataFrame(WORKED, columns=["a", "b"], index=[7, 8, 9])
    before = table.copy()
    masked = mic1d(table, k=3)
    pd.testing.assert_frame_equal(table, before)
    assert list(masked.columns) == ["a", "b"] and list(masked.index) == [7, 8, 9]
    np.testing.assert_allclose(masked.to_numpy(), mic1d(WORKED, k=3))


def test_registry_adapter_uses_original_units_of_the_quasi_identifiers():
    table = pd.DataFrame({"b": WORKED[:, 1], "name": ["x", "y", "z"], "a": WORKED[:, 0]})
    roles = RoleSpec(quasi_identifiers=("a", "b"), identifiers=("name",))
    data = MethodInput(X=np.zeros((3, 2)), table=table, roles=roles)
    np.testing.assert_allclose(masked_values(data, state=TaskState(), k=3),
                               mic1d(WORKED, k=3))


def test_progress_and_cancellation():
    seen = []
    state = TaskState(lambda fraction, message: seen.append(fraction))
    mic1d_values(WORKED, k=3, state=state)
    assert seen[0] == 0.0 and seen[-1] == 1.0 and seen == sorted(seen)
    state = TaskState()
    state.cancel()
    with pytest.raises(Cancelled):
        mic1d_values(WORKED, k=3, state=state)


def test_census_nine_attributes(census):
    columns = ["AGI", "FICA", "INTVAL", "EMCONTRB", "TAXINC", "WSALVAL", "ERNVAL",
               "PEARNVAL", "POTHVAL"]
    X = census[columns].to_numpy(dtype=float)
    for k, runs in ((3000, 4), (4000, 3), (5000, 2)):
        masked = mic1d(X, k=k)
        assert len(np.unique(masked)) <= runs * runs
        assert masked.min() >= X.min() and masked.max() <= X.max()
    # Larger runs lose more.
    losses = [((mic1d(X, k=k) - X) ** 2 / X.var(axis=0)).sum() for k in (3000, 4000, 5000)]
    assert losses == sorted(losses)


SIGNED = st.sampled_from([0.0, -0.0, 1.0, -1.0, 2.5, 1e-300, -1e-300, 3.0, 1e3])


@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_the_compiled_steps_give_the_reference_bits(data):
    """The compiled path (each run's arithmetic in one pass) against the numpy
    reference, bit for bit: ties, constant runs, a short last run, signed zeros (a value
    equal to its run's bound is the bound, as numpy.clip gives it), with and without
    the means."""
    from core.methods import mic1d as module
    if module._normalized_compiled is None:
        pytest.skip("compiled kernels are off")
    n = data.draw(st.integers(1, 30), label="n")
    d = data.draw(st.integers(1, 3), label="d")
    X = data.draw(arrays(np.float64, (n, d), elements=st.one_of(VALUES, SIGNED)), label="X")
    k = data.draw(st.integers(2, max(2, n * d)), label="k")
    if k > n * d:
        return
    for average in (True, False):
        compiled = module._mic1d_compiled(X.copy(), k, TaskState(), average)
        reference = module._mic1d_reference(X.copy(), k, TaskState(), average)
        assert compiled.tobytes() == reference.tobytes()
        assert compiled.shape == reference.shape and compiled.flags.c_contiguous


def test_the_compiled_steps_at_a_larger_size_give_the_reference_bits():
    from core.methods import mic1d as module
    if module._normalized_compiled is None:
        pytest.skip("compiled kernels are off")
    rng = np.random.default_rng(5)
    X = np.round(rng.lognormal(3, 1.5, (20_000, 4)), 1)  # many ties
    X[::97, 2] = -0.0
    for k in (2, 3, 7, 1000, 79_999):
        assert (module._mic1d_compiled(X, k, TaskState(), True).tobytes()
                == module._mic1d_reference(X, k, TaskState(), True).tobytes())

"""Property tests of the k-anonymity guarantee on random data."""

import numpy as np
import pandas as pd
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from core import RoleSpec, anonymize
from core.data.aggregate import group_means
from core.verify.kanonymity import verify_k_anonymity


@st.composite
def tables(draw):
    k = draw(st.integers(2, 6))
    n = draw(st.integers(k, 8 * k))
    d = draw(st.integers(1, 4))
    # Small integer grids give many duplicate records and exact ties.
    values = draw(st.one_of(
        arrays(np.int64, (n, d), elements=st.integers(-3, 3)),
        arrays(np.float64, (n, d), elements=st.floats(-1e6, 1e6, allow_nan=False,
                                                        allow_subnormal=False)),
    ))
    table = pd.DataFrame(values, columns=[f"q{j}" for j in range(d)])
    table["secret"] = np.arange(n)
    table["name"] = [f"person {i}" for i in range(n)]
    qi_values = table.iloc[:, :d]
    # Constant columns (also those whose spread underflows) are rejected by design.
    assume((qi_values.nunique() > 1).all() and (qi_values.to_numpy().std(axis=0) > 0).all())
    return table, k, d


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tables())
def test_mdav_output_is_k_anonymous_and_faithful(case):
    table, k, d = case
    before = table.copy(deep=True)
    qi = tuple(f"q{j}" for j in range(d))
    roles = RoleSpec(quasi_identifiers=qi, confidential=("secret",), identifiers=("name",))
    result = anonymize(table, roles, "mdav", k=k)

    # The input is unchanged.
    pd.testing.assert_frame_equal(table, before)
    # Every record is labelled and every group has at least k records.
    labels = result.labels
    assert labels.shape == (len(table),) and (labels >= 0).all()
    assert np.bincount(labels).min() >= k
    # Masked values equal the group means of the original values.
    means = group_means(table[list(qi)].to_numpy(float), labels)[labels]
    np.testing.assert_allclose(result.masked[list(qi)].to_numpy(), means, rtol=1e-12,
                               atol=1e-9)
    # Rows keep their order, identifiers are gone, other columns are untouched.
    assert "name" not in result.masked.columns
    assert result.masked["secret"].tolist() == table["secret"].tolist()
    # The independent verifier agrees, from the tables alone.
    verdict = verify_k_anonymity(table, result.masked, roles, k)
    assert verdict.passed and verdict.smallest_class >= k
    assert result.metrics.k_prime >= k


def naive_mdav(X, k):
    """MDAV straight from shared/data/README.md: exact distances, first record wins ties."""
    X = np.asarray(X, dtype=float)
    labels = np.full(len(X), -1)
    remaining = list(range(len(X)))
    group = 0

    def squared(rows, point):
        # The engine's one floating-point form (core/methods/pool.py): (x_j - p_j)^2 added
        # over the columns in order. Ties that are exact in real numbers can differ by one
        # rounding step with another summation order, e.g. einsum's.
        out = np.zeros(len(rows))
        for j in range(X.shape[1]):
            out += (X[rows, j] - point[j]) ** 2
        return out

    def centroid(rows):
        # Rows added one after another, as the engine does.
        total = np.zeros(X.shape[1])
        for row in rows:
            total = total + X[row]
        return total / len(rows)

    def farthest(point, candidates):
        return candidates[int(np.argmax(squared(candidates, point)))]

    def form(seed):
        nonlocal remaining, group
        d = squared(remaining, X[seed])
        order = sorted(range(len(remaining)),
                       key=lambda i: (remaining[i] != seed, d[i], remaining[i]))
        members = [remaining[i] for i in order[:k]]
        labels[members] = group
        group += 1
        remaining = [i for i in remaining if labels[i] < 0]

    while len(remaining) >= 3 * k:
        r = farthest(centroid(remaining), remaining)
        form(r)
        form(farthest(X[r], remaining))
    if len(remaining) >= 2 * k:
        form(farthest(centroid(remaining), remaining))
    labels[remaining] = group
    return labels


@settings(max_examples=200, deadline=None)
@given(st.integers(2, 5).flatmap(lambda k: st.tuples(
    st.just(k),
    arrays(np.int64, st.tuples(st.integers(k, 10 * k), st.integers(1, 3)),
           elements=st.integers(-2, 2)))))
def test_mdav_equals_the_naive_reference_even_with_ties(case):
    """The fast pool (BLAS distances plus exact re-check) makes exactly the naive choices."""
    k, X = case
    from core.methods.mdav import mdav

    np.testing.assert_array_equal(mdav(X.astype(float), k=k), naive_mdav(X, k))

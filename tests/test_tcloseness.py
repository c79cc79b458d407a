"""EMD (ordered and equal distance) and the independent t-closeness verifier."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import wasserstein_distance

from core.errors import MicroaggError
from core.privacy.emd import EMD_TOLERANCE, emd_nominal, emd_ordered, ranks
from core.privacy.attributes import TCloseAttribute, class_emds, tclose_attributes
from core.verify.tcloseness import verify_t_closeness


def naive_ordered(cluster_ranks, table_ranks, m):
    """(1/(m−1)) Σ_{i<m−1} |F_C(i) − F_T(i)|, O(m), straight from Section 2.2."""
    if m <= 1:
        return 0.0
    p = np.bincount(cluster_ranks, minlength=m) / len(cluster_ranks)
    q = np.bincount(table_ranks, minlength=m) / len(table_ranks)
    return float(np.abs(np.cumsum(p - q))[:-1].sum() / (m - 1))


def naive_nominal(cluster_codes, table_codes, m):
    p = np.bincount(cluster_codes, minlength=m) / len(cluster_codes)
    q = np.bincount(table_codes, minlength=m) / len(table_codes)
    return float(0.5 * np.abs(p - q).sum())


def test_ranks_run_over_distinct_values():
    rank, m = ranks([5.0, 1.0, 5.0, 3.0, 1.0, 9.0])
    assert m == 4
    assert rank.tolist() == [2, 0, 2, 1, 0, 3]


def test_six_values_by_hand():
    # Values 1..6, one record each, F_T(i) = (i+1)/6. Cluster {1, 6}:
    # F_C = 1/2 on ranks 0..4; |1/2 − i/6| for i = 1..5: 2/6, 1/6, 0, 1/6, 2/6 → 1.
    # EMD = 1 / (m − 1) = 1/5.
    assert emd_ordered([0, 5], 6, [1] * 6) == pytest.approx(0.2, abs=1e-15)
    # Cluster {1, 2}: 1/3 + 2/3 + 1/2 + 1/3 + 1/6 = 2, EMD = 2/5.
    assert emd_ordered([0, 1], 6, [1] * 6) == pytest.approx(0.4, abs=1e-15)
    # The whole table is at distance 0; one extreme record at the largest distance.
    assert emd_ordered(range(6), 6, [1] * 6) == pytest.approx(0.0, abs=1e-15)
    assert emd_ordered([5], 6, [1] * 6) == pytest.approx(0.5, abs=1e-15)  # (1+..+5)/6/5


def test_ties_and_repeated_values_by_hand():
    # Table values 10, 10, 20, 30 → ranks 0, 0, 1, 2 (m = 3), F_T = 1/2, 3/4.
    # Cluster {20, 20}: F_C = 0, 1 → (1/2 + 1/4) / 2 = 3/8.
    assert emd_ordered([1, 1], 3, [2, 1, 1]) == pytest.approx(0.375, abs=1e-15)


def test_proposition_1_and_2_bounds_are_attained():
    n, k = 60, 4
    attribute = TCloseAttribute.from_values(np.arange(n))
    # Figure 2: one record at the bottom of each of the k subsets of n/k (the maximum).
    worst = np.arange(k) * (n // k)
    assert attribute.emd(worst) == pytest.approx((n - k) / (2 * (n - 1) * k), abs=1e-12)
    # Figure 1: the medians of the subsets (n/k odd needed for exactness: use n/k = 15).
    medians = np.arange(k) * (n // k) + (n // k) // 2
    assert attribute.emd(medians) == pytest.approx(
        (n + k) * (n - k) / (4 * n * (n - 1) * k), abs=1e-12)


def test_nominal_is_half_l1():
    assert emd_nominal([0, 0], [0.5, 0.25, 0.25]) == pytest.approx(0.5)
    assert emd_nominal([0, 1, 2, 0], [0.5, 0.25, 0.25]) == pytest.approx(0.0)
    attribute = TCloseAttribute.from_values(["a", "b", "b", "c"])
    assert attribute.kind == "nominal"
    assert attribute.emd([1, 2]) == pytest.approx(0.5)  # {b, b}: |0−¼|+|1−½|+|0−¼| = 1


small_tables = st.integers(2, 60).flatmap(lambda n: st.tuples(
    st.lists(st.integers(0, 8), min_size=n, max_size=n),   # few values: many ties
    st.lists(st.booleans(), min_size=n, max_size=n)))


@settings(max_examples=300, deadline=None)
@given(small_tables)
def test_fast_ordered_emd_equals_naive(table):
    values, chosen = table
    if not any(chosen):
        chosen[0] = True
    attribute = TCloseAttribute.from_values(np.array(values))
    members = np.flatnonzero(chosen)
    expected = naive_ordered(attribute.codes[members], attribute.codes, attribute.m)
    assert attribute.emd(members) == pytest.approx(expected, abs=1e-12)
    # The same as the Wasserstein distance between the rank distributions / (m − 1).
    if attribute.m > 1:
        scale = attribute.m - 1
        w = wasserstein_distance(attribute.codes[members] / scale, attribute.codes / scale)
        assert attribute.emd(members) == pytest.approx(w, abs=1e-12)


@settings(max_examples=200, deadline=None)
@given(small_tables)
def test_fast_nominal_emd_equals_naive(table):
    values, chosen = table
    if not any(chosen):
        chosen[0] = True
    attribute = TCloseAttribute.from_values([f"v{v}" for v in values])
    members = np.flatnonzero(chosen)
    expected = naive_nominal(attribute.codes[members], attribute.codes, attribute.m)
    assert attribute.emd(members) == pytest.approx(expected, abs=1e-12)
    shares = attribute.counts / attribute.n
    assert emd_nominal(attribute.codes[members], shares) == pytest.approx(expected, abs=1e-12)


@settings(max_examples=150, deadline=None)
@given(st.integers(2, 50), st.integers(1, 10), st.integers(0, 2**31), st.booleans(),
       st.booleans())
def test_swap_emds_equal_recomputation(n, distinct, seed, nominal, incremental):
    rng = np.random.default_rng(seed)
    values = rng.integers(0, distinct, n)
    attribute = TCloseAttribute.from_values(values, kind="nominal" if nominal else None)
    size = int(rng.integers(1, n))
    order = rng.permutation(n)
    members, incoming = order[:size], order[size:]
    if incremental and attribute.m > 1:  # m = 1 is handled before either path
        codes = attribute.codes
        grid = (attribute._nominal_swaps(np.sort(codes[members]), codes[members],
                                         codes[incoming]) if nominal else
                attribute._ordered_swaps(codes[members], codes[incoming]))
    else:
        grid = attribute.swap_emds(members, incoming)
    assert grid.shape == (n - size, size)
    for a, y in enumerate(incoming[:5]):
        for b in range(size):
            swapped = members.copy()
            swapped[b] = y
            assert grid[a, b] == pytest.approx(attribute.emd(swapped), abs=1e-12)


def test_swap_update_matches_direct_recomputation():
    """Clusters above the direct-evaluation size use the incremental update."""
    rng = np.random.default_rng(7)
    for nominal in (False, True):
        values = rng.integers(0, 40, 400)
        attribute = TCloseAttribute.from_values(values, kind="nominal" if nominal else None)
        order = rng.permutation(400)
        members, incoming = order[:120], order[120:200]
        np.testing.assert_allclose(attribute.swap_emds(members, incoming),
                                   attribute._swap_emds_direct(members, incoming), atol=1e-12)


def test_class_emds_of_a_partition():
    rng = np.random.default_rng(1)
    values = rng.integers(0, 30, 200)
    labels = rng.integers(0, 17, 200)
    labels = np.unique(labels, return_inverse=True)[1]
    attribute = TCloseAttribute.from_values(values)
    emds = class_emds(attribute, labels)
    for group in range(labels.max() + 1):
        members = np.flatnonzero(labels == group)
        assert emds[group] == pytest.approx(
            naive_ordered(attribute.codes[members], attribute.codes, attribute.m), abs=1e-12)


@settings(max_examples=150, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(0, 300), st.integers(1, 40),
       st.integers(1, 60))
def test_the_group_then_code_order_is_lexsorts(seed, n, groups, distinct):
    """class_emds sorts records by group, then code, with one stable sort of a combined
    key: the order of numpy.lexsort((codes, labels)) exactly (ties kept in input order)."""
    from core.privacy.attributes import _by_group_then_code

    rng = np.random.default_rng(seed)
    labels, codes = rng.integers(0, groups, n), rng.integers(0, distinct, n)
    assert _by_group_then_code(labels, codes).tolist() == \
        np.lexsort((codes, labels)).tolist()


def masked_table():
    # Two classes of the masked QI; salary 10..60; class A holds the three smallest.
    return pd.DataFrame({
        "age": [30.0, 30.0, 30.0, 50.0, 50.0, 50.0],
        "zip": [1.5, 1.5, 1.5, 2.5, 2.5, 2.5],
        "salary": [10, 20, 30, 40, 50, 60],
        "disease": ["flu", "flu", "cold", "cold", "flu", "cold"],
    })


def test_verifier_reports_the_worst_class():
    table = masked_table()
    result = verify_t_closeness(table, ["age", "zip"], ["salary", "disease"], 0.3)
    # salary: each class's EMD is (1/5)(|1/3−1/6|+|2/3−2/6|+|1−3/6|+|1−4/6|+|1−5/6|) = 0.3
    assert result.max_emd_by_attribute["salary"] == pytest.approx(0.3)
    # disease: class A has 2/3 flu against 1/2 → 1/6.
    assert result.max_emd_by_attribute["disease"] == pytest.approx(1 / 6)
    assert result.kinds == ("numerical", "nominal")
    assert result.passed
    assert result.n_classes == 2 and result.smallest_class == 3
    strict = verify_t_closeness(table, ["age", "zip"], ["salary"], 0.29)
    assert not strict.passed
    assert strict.classes_over_t == (2,)
    assert "FAILED" in strict.describe() and "salary" in strict.describe()
    assert strict.worst_class[0] == {"age": 30.0, "zip": 1.5}


def test_verifier_reads_only_the_masked_table():
    """Classes come from the masked QI values: a row order shuffle changes nothing."""
    table = masked_table()
    shuffled = table.sample(frac=1.0, random_state=3)
    a = verify_t_closeness(table, ["age", "zip"], ["salary"], 0.3)
    b = verify_t_closeness(shuffled, ["age", "zip"], ["salary"], 0.3)
    assert a.max_emd == b.max_emd and a.passed == b.passed
    # Splitting one masked QI value splits the class, and the verifier sees it.
    split = table.copy()
    split.loc[0, "age"] = 31.0
    assert verify_t_closeness(split, ["age", "zip"], ["salary"], 0.3).n_classes == 3


def test_verifier_kinds_and_tolerance():
    table = masked_table()
    as_nominal = verify_t_closeness(table, ["age"], ["salary"], 1.0, kinds={"salary": "nominal"})
    assert as_nominal.max_emd[0] == pytest.approx(0.5)
    exact = verify_t_closeness(table, ["age"], ["salary"], 0.3 - EMD_TOLERANCE / 2)
    assert exact.passed  # within the documented float tolerance


def test_errors_name_the_column():
    table = masked_table()
    with pytest.raises(MicroaggError, match="'income'"):
        verify_t_closeness(table, ["age"], ["income"], 0.2)
    with pytest.raises(MicroaggError, match="'t'"):
        verify_t_closeness(table, ["age"], ["salary"], 1.5)
    broken = table.assign(salary=[1.0, None, 3.0, 4.0, 5.0, 6.0])
    with pytest.raises(MicroaggError, match="'salary'.*missing"):
        verify_t_closeness(broken, ["age"], ["salary"], 0.2)
    with pytest.raises(MicroaggError, match="distance kind"):
        tclose_attributes(table[["salary"]], kinds="ordinal")


def test_inputs_are_not_modified():
    table = masked_table()
    before = table.copy()
    verify_t_closeness(table, ["age", "zip"], ["salary", "disease"], 0.2)
    pd.testing.assert_frame_equal(table, before)

"""Algorithms 1–3 of Soria-Comas et al. (TKDE 2015): invariants, choices, verification."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.data.aggregate import aggregate
from core.errors import Cancelled, MicroaggError
from core.methods.mdav import mdav
from core.progress import TaskState
from core.methods.tfirst import tc_tfirst, tfirst_cluster_size
from core.methods.tcloseness import (
    TClosePartition, tc_kfirst, tc_merge,
)
from core.privacy.emd import EMD_TOLERANCE
from core.privacy.attributes import TCloseAttribute
from core.verify.tcloseness import verify_t_closeness

METHODS = {"tc-merge": tc_merge, "tc-kfirst": tc_kfirst, "tc-tfirst": tc_tfirst}


def frame(n, seed, *, nominal=False, ties=False):
    rng = np.random.default_rng(seed)
    qi = rng.normal(size=(n, 2))
    income = qi[:, 0] * 3 + rng.normal(size=n)  # tied to the quasi-identifiers
    if ties:
        income = np.round(income)
    table = pd.DataFrame({"q0": qi[:, 0], "q1": qi[:, 1], "income": income})
    if nominal:
        table["diagnosis"] = rng.choice(["a", "b", "c"], size=n, p=(0.6, 0.3, 0.1))
    return table


def standardized(table):
    X = table[["q0", "q1"]].to_numpy()
    return (X - X.mean(axis=0)) / X.std(axis=0)


def same_partition(a, b):
    pairs = np.unique(np.stack([a, b]), axis=1)
    return pairs.shape[1] == len(np.unique(a)) == len(np.unique(b))


def check_result(table, confidential, part: TClosePartition, k, t):
    sizes = np.bincount(part.labels)
    assert sizes.min() >= min(k, len(table))
    assert part.labels.shape == (len(table),)
    assert max(part.max_emd) <= t + EMD_TOLERANCE
    masked = aggregate(table, part.labels, ["q0", "q1"])
    verdict = verify_t_closeness(masked, ["q0", "q1"], confidential, t)
    assert verdict.passed, verdict.describe()
    assert verdict.smallest_class >= min(k, len(table))


@settings(max_examples=40, deadline=None)
@given(st.integers(4, 70), st.integers(2, 6), st.floats(0.0, 0.6), st.integers(0, 10**6),
       st.sampled_from(sorted(METHODS)), st.booleans(), st.booleans())
def test_every_method_is_k_anonymous_and_t_close(n, k, t, seed, name, nominal, ties):
    k = min(k, n)
    table = frame(n, seed, nominal=nominal, ties=ties)
    confidential = ["income", "diagnosis"] if nominal else ["income"]
    part = METHODS[name](standardized(table), table[confidential], k=k, t=t)
    check_result(table, confidential, part, k, t)


@pytest.mark.parametrize("name", sorted(METHODS))
def test_inputs_unchanged_and_deterministic(name):
    table = frame(120, 4, nominal=True)
    before = table.copy()
    X = standardized(table)
    X_before = X.copy()
    first = METHODS[name](X, table[["income", "diagnosis"]], k=3, t=0.15)
    second = METHODS[name](X, table[["income", "diagnosis"]], k=3, t=0.15)
    pd.testing.assert_frame_equal(table, before)
    np.testing.assert_array_equal(X, X_before)
    np.testing.assert_array_equal(first.labels, second.labels)
    check_result(table, ["income", "diagnosis"], first, 3, 0.15)


def test_merge_starts_from_mdav_or_any_base_partition():
    table = frame(90, 2)
    X = standardized(table)
    loose = tc_merge(X, table["income"], k=3, t=1.0)
    assert loose.merges == 0
    assert same_partition(loose.labels, mdav(X, k=3))
    base = np.repeat(np.arange(30), 3)  # any k-anonymous partition
    part = tc_merge(X, table["income"], k=3, t=0.2, base_labels=base)
    # Merging only unites clusters of the base partition.
    for group in np.unique(part.labels):
        assert len(np.unique(base[part.labels == group])) * 3 == (part.labels == group).sum()
    assert part.merges == 30 - len(np.unique(part.labels))
    check_result(table, ["income"], part, 3, 0.2)


def test_merge_takes_the_worst_cluster_into_its_nearest():
    # Four clusters on a line; the confidential value follows the QI, so the two end
    # clusters have the largest EMD. The first of them (cluster 0) merges with cluster 1.
    X = np.repeat(np.array([[0.0], [1.0], [2.0], [3.0]]), 2, axis=0)
    income = np.arange(8)
    base = np.repeat(np.arange(4), 2)
    attribute = TCloseAttribute.from_values(income)
    emds = [attribute.emd(np.flatnonzero(base == g)) for g in range(4)]
    assert emds[0] == emds[3] == max(emds)
    t = (emds[1] + emds[0]) / 2  # clusters 1, 2 pass; 0, 3 fail
    part = tc_merge(X, income, k=2, t=t, base_labels=base)
    assert part.labels[0] == part.labels[2]  # 0 went into its nearest cluster, 1
    assert part.max_emd[0] <= t


def test_cluster_size_expressions_3_and_4():
    # Expression (3): ⌈n / (2(n−1)t + 1)⌉; Expression (4) with the floor.
    assert tfirst_cluster_size(1080, 2, 0.01) == 49   # 48 + ⌊24/22⌋
    assert tfirst_cluster_size(1080, 2, 0.05) == 10   # 1080/108.9 = 9.92
    assert tfirst_cluster_size(1080, 2, 0.25) == 2
    assert tfirst_cluster_size(1080, 25, 0.25) == 25  # 1080 mod 25 = 5 < 43
    assert tfirst_cluster_size(10, 4, 1.0) == 5       # 4 + ⌊2/2⌋
    assert tfirst_cluster_size(100, 2, 0.0) == 100    # t = 0: one cluster


@pytest.mark.parametrize("n,k", [(23, 4), (29, 5), (31, 6), (17, 2)])
def test_tfirst_extra_records_go_to_the_central_subsets(n, k):
    values = np.arange(n)
    X = np.random.default_rng(n).normal(size=(n, 2))
    part = tc_tfirst(X, values, k=k, t=1.0)
    size = part.cluster_size
    sizes = np.bincount(part.labels)
    per, extra = divmod(n, size)
    assert len(sizes) == per
    assert sizes.min() == size and sizes.sum() == n
    assert (sizes == size + 1).sum() == extra if extra < per else True
    # Subsets of ⌊n/k⌋ consecutive values, extras in the central one (k odd) or split
    # ⌈r/2⌉, ⌊r/2⌋ between the two central ones (k even).
    lengths = np.full(size, per)
    if size % 2:
        lengths[size // 2] += extra
    else:
        lengths[size // 2 - 1] += (extra + 1) // 2
        lengths[size // 2] += extra // 2
    subset_of = np.repeat(np.arange(size), lengths)  # values are 0..n−1 in order
    central = {size // 2} if size % 2 else {size // 2 - 1, size // 2}
    for group in range(per):
        members = subset_of[part.labels == group]
        counts = np.bincount(members, minlength=size)
        assert (counts >= 1).all()  # one record of every subset
        assert counts.sum() - size <= 1 and all(counts[i] == 1 for i in range(size)
                                                if i not in central)


def test_tfirst_meets_proposition_2_without_merges_on_distinct_values():
    rng = np.random.default_rng(0)
    n = 400
    X = rng.normal(size=(n, 3))
    income = X[:, 0] + 0.1 * rng.normal(size=n)  # distinct values
    for t in (0.05, 0.1, 0.2):
        part = tc_tfirst(X, income, k=2, t=t)
        assert part.merges == 0
        assert part.max_emd[0] <= (n - part.cluster_size) / (2 * (n - 1) * part.cluster_size) + 1e-12


def reference_kfirst(X, attribute, k):
    """Algorithm 2 as printed, one candidate at a time (before Algorithm 1's merging)."""
    remaining = list(range(len(X)))
    labels = np.full(len(X), -1)
    group = 0

    def distance(a, point):
        return float(((X[a] - point) ** 2).sum())

    def generate(seed):
        nonlocal remaining, group
        if len(remaining) < 2 * k:
            cluster = list(remaining)
        else:
            point = X[seed]
            by_distance = sorted(remaining, key=lambda r: (r != seed, distance(r, point), r))
            cluster = sorted(by_distance[:k])
            emd = attribute.emd(cluster)
            for y in by_distance[k:]:
                if emd <= 0.1 + EMD_TOLERANCE:
                    break
                trials = []
                for b in range(len(cluster)):
                    swapped = list(cluster)
                    swapped[b] = y
                    trials.append(attribute.emd(swapped))
                b = int(np.argmin(trials))
                if trials[b] < emd - EMD_TOLERANCE:
                    cluster[b] = y
                    cluster.sort()
                    emd = trials[b]
        for r in cluster:
            labels[r] = group
        group += 1
        remaining = [r for r in remaining if r not in set(cluster)]

    def farthest(point):
        return max(remaining, key=lambda r: (distance(r, point), -r))

    while remaining:
        x0 = farthest(X[remaining].mean(axis=0))
        point = X[x0].copy()
        generate(x0)
        if remaining:
            generate(farthest(point))
    return labels


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_kfirst_windows_equal_the_one_at_a_time_loop(seed):
    table = frame(80, seed)
    X = standardized(table)
    attribute = TCloseAttribute.from_values(table["income"])
    expected = reference_kfirst(X, attribute, 3)
    part = tc_kfirst(X, [attribute], k=3, t=0.1)
    if part.merges == 0:
        np.testing.assert_array_equal(part.labels, expected)
    else:  # merging only unites the clusters of Algorithm 2
        for group in np.unique(part.labels):
            inside = np.unique(expected[part.labels == group])
            assert np.isin(expected, inside).sum() == (part.labels == group).sum()
    assert part.swaps > 0


def test_kfirst_needs_fewer_merges_than_merge_alone():
    table = frame(300, 5)
    X = standardized(table)
    merge = tc_merge(X, table["income"], k=3, t=0.1)
    kfirst = tc_kfirst(X, table["income"], k=3, t=0.1)
    assert np.bincount(kfirst.labels).mean() < np.bincount(merge.labels).mean()


def test_several_attributes_hold_each():
    table = frame(200, 9, nominal=True, ties=True)
    X = standardized(table)
    for name, method in METHODS.items():
        part = method(X, table[["income", "diagnosis"]], k=2, t=0.08)
        assert len(part.max_emd) == 2
        check_result(table, ["income", "diagnosis"], part, 2, 0.08)


def test_progress_and_cancellation():
    table = frame(200, 3)
    X = standardized(table)
    for method in METHODS.values():
        seen = []
        method(X, table["income"], k=3, t=0.1, state=TaskState(lambda f, m: seen.append(f)))
        assert seen and seen[-1] == 1.0 and len(seen) >= 200 // 6
        state = TaskState()
        state.cancel()
        with pytest.raises(Cancelled):
            method(X, table["income"], k=3, t=0.1, state=state)


def test_errors_name_the_parameter():
    table = frame(20, 1)
    X = standardized(table)
    with pytest.raises(MicroaggError, match="'t'"):
        tc_merge(X, table["income"], k=2, t=1.5)
    with pytest.raises(MicroaggError, match="'k'"):
        tc_tfirst(X, table["income"], k=0, t=0.1)
    with pytest.raises(MicroaggError, match="fewer than k"):
        tc_kfirst(X, table["income"], k=21, t=0.1)
    with pytest.raises(MicroaggError, match="'income'"):
        tc_merge(X, table["income"].iloc[:10], k=2, t=0.1)
    with pytest.raises(MicroaggError, match="base_labels"):
        tc_merge(X, table["income"], k=2, t=0.1, base_labels=np.zeros(3))

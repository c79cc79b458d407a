"""tc-bucket (Section 6 of Domingo-Ferrer & Soria-Comas 2015) and the multiplicative distance."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.data.aggregate import aggregate
from core.privacy.multiplicative import MULTIPLICATIVE_TOLERANCE, PROPOSITION_3_ASSUMPTIONS, Buckets, bucketize, default_n_buckets, epsilon_from_multiplicative_t, multiplicative_distance, multiplicative_t_from_epsilon, proposition3_text
from core.methods.bucket import tc_bucket
from core.verify.multiplicative import verify_multiplicative
from core.errors import Cancelled, MicroaggError
from core.progress import TaskState


def frame(n, seed, *, ties=False, nominal=False):
    rng = np.random.default_rng(seed)
    qi = rng.normal(size=(n, 2))
    income = qi[:, 0] * 3 + rng.normal(size=n)
    if ties:
        income = np.round(income)
    table = pd.DataFrame({"q0": qi[:, 0], "q1": qi[:, 1], "income": income})
    table["diagnosis"] = rng.choice(["a", "b", "c", "d"], size=n, p=(0.5, 0.3, 0.15, 0.05))
    return table


def standardized(table):
    X = table[["q0", "q1"]].to_numpy()
    return (X - X.mean(axis=0)) / X.std(axis=0)


def composition(part, values):
    codes = part.buckets.assign(values)
    counts = np.zeros((part.n_classes, part.n_buckets), dtype=int)
    np.add.at(counts, (part.labels, codes), 1)
    return counts


# --- The distance (Definition 4, Proposition 2) ---------------------------------------

@pytest.mark.parametrize("p, q, expected", [
    ([2, 1, 1], [4, 4, 4], 1.5),                 # Figure 2: E1 against the whole table
    ([1, 2, 1], [1, 1, 1], 1.5),
    ([1, 1, 1], [3, 3, 3], 1.0),                 # equal distributions
    ([0.5, 0.5], [0.25, 0.75], 2.0),             # 0.5/0.25 beats 0.75/0.5
    ([0.1, 0.9], [0.2, 0.8], 2.0),               # the inverse ratio 0.2/0.1 counts too
    ([1, 0], [1, 1], math.inf),                  # a value missing from the class
    ([1, 1, 0], [1, 1, 0], 1.0),                 # 0/0 is ignored (Definition 4)
])
def test_multiplicative_distance_by_hand(p, q, expected):
    assert multiplicative_distance(p, q) == pytest.approx(expected)
    assert multiplicative_distance(q, p) == pytest.approx(expected)  # symmetric


def test_distance_is_a_ratio_not_a_log():
    d = multiplicative_distance([3, 1], [1, 1])  # max(0.75/0.5, 0.5/0.25)
    assert d == pytest.approx(2.0) and d != pytest.approx(math.log(2.0))


def test_distance_aligns_series_on_their_values():
    cls = pd.Series({"a": 2, "b": 1})
    table = pd.Series({"b": 4, "a": 4, "c": 4})
    assert multiplicative_distance(cls, table) == math.inf  # 'c' absent from the class
    assert multiplicative_distance(pd.Series({"a": 1, "b": 1}),
                                   pd.Series({"b": 3, "a": 1})) == pytest.approx(2.0)


@pytest.mark.parametrize("p, q", [([1, -1], [1, 1]), ([0, 0], [1, 1]), ([1, 2], [1, 2, 3])])
def test_distance_rejects_bad_distributions(p, q):
    with pytest.raises(MicroaggError):
        multiplicative_distance(p, q)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(1, 50), min_size=2, max_size=6), st.integers(0, 10**6))
def test_single_values_give_the_maximum_over_all_sets(counts, seed):
    """Proposition 2: no set of values has a larger ratio than the single values."""
    rng = np.random.default_rng(seed)
    q = np.asarray(counts, float) / sum(counts)
    p = rng.dirichlet(np.ones(len(q)))
    d = multiplicative_distance(p, q)
    for mask in range(1, 2 ** len(q)):
        chosen = [(mask >> i) & 1 == 1 for i in range(len(q))]
        ps, qs = p[chosen].sum(), q[chosen].sum()
        assert max(ps / qs, qs / ps) <= d * (1 + 1e-12)


# --- Proposition 3 --------------------------------------------------------------------

def test_proposition_3_epsilon():
    assert epsilon_from_multiplicative_t(1.5) == pytest.approx(2 * math.log(1.5))
    assert epsilon_from_multiplicative_t(1.0) == 0.0
    assert multiplicative_t_from_epsilon(epsilon_from_multiplicative_t(2.7)) == \
        pytest.approx(2.7)
    with pytest.raises(MicroaggError, match="multiplicative"):
        epsilon_from_multiplicative_t(0.2)  # an EMD-like t is refused


def test_proposition_3_text_states_epsilon_and_every_assumption():
    text = proposition3_text(1.5, attained=1.3)
    assert f"{2 * math.log(1.5):.4f}" in text and f"{2 * math.log(1.3):.4f}" in text
    for sentence in PROPOSITION_3_ASSUMPTIONS:
        assert sentence in text
    assert len(PROPOSITION_3_ASSUMPTIONS) >= 4


# --- Buckets (Sections 6.1 and 6.3) ---------------------------------------------------

@pytest.mark.parametrize("t, b", [(1.1, 2), (1.5, 3), (2.0, 3), (2.4, 3), (2.5, 4),
                                  (3.0, 4)])
def test_number_of_buckets_is_t_plus_one_rounded_half_up(t, b):
    assert default_n_buckets(t) == b


def test_numerical_buckets_are_consecutive_and_near_equal():
    values = np.random.default_rng(0).permutation(100)
    buckets = bucketize(values, 3)
    sizes = np.bincount(buckets.assign(values))
    assert sizes.tolist() == [33, 34, 33]  # cuts after ⌊i·100/3 + 0.5⌋ = 33, 67
    assert buckets.ranges == ((0, 32), (33, 66), (67, 99))
    assert buckets.labels == ("[0, 32]", "[33, 66]", "[67, 99]")


def test_equal_values_share_a_bucket():
    values = [1, 1, 1, 1, 1, 2, 3, 4, 5]  # the cut at 3 falls inside the run of 1s
    buckets = bucketize(values, 3)
    codes = buckets.assign(values)
    assert len(set(codes[:5])) == 1
    assert buckets.n_buckets == 3
    assert bucketize([7, 7, 7], 3).n_buckets == 1


def test_nominal_buckets_group_categories_by_mass():
    values = ["a"] * 5 + ["b"] * 3 + ["c"] * 2 + ["d"] * 2
    buckets = bucketize(values, 2)
    assert buckets.categories == (("a",), ("b", "c", "d")) or \
        sorted(np.bincount(buckets.assign(values))) == [5, 7]
    assert bucketize(["x", "y"], 3).categories == (("x",), ("y",))
    with pytest.raises(MicroaggError, match="'z'"):
        buckets.assign(["z"])


# --- The construction -----------------------------------------------------------------

def test_figure_2_twelve_records_three_classes_of_four():
    part = tc_bucket(np.arange(12.0)[:, None], np.arange(12), k=4, t=1.5)
    counts = composition(part, np.arange(12))
    assert part.n_buckets == 3 and part.bucket_sizes == (4, 4, 4)
    assert sorted(map(tuple, counts)) == [(1, 1, 2), (1, 2, 1), (2, 1, 1)]
    assert part.max_distance == pytest.approx(1.5)


def test_table_1_emphasis_for_integer_t():
    """t = 2: b = 3 buckets; a class holds t/(t+1) of its bucket, 1/(t(t+1)) of the others."""
    values = np.arange(18)
    part = tc_bucket(values[:, None].astype(float), values, k=6, t=2.0)
    counts = composition(part, values)
    assert sorted(map(tuple, counts)) == [(1, 1, 4), (1, 4, 1), (4, 1, 1)]
    assert np.allclose(np.sort(counts, axis=1)[:, ::-1] / 6, [2 / 3, 1 / 6, 1 / 6])
    # QIs equal to the confidential values: each class emphasizes its own bucket.
    assert counts[np.arange(3), part.buckets.assign(values[[0, 17, 9]])].min() >= 1


def check(table, part, confidential, k, t):
    sizes = np.bincount(part.labels)
    assert part.labels.shape == (len(table),)
    assert sizes.min() >= k
    assert part.max_distance <= t * (1 + MULTIPLICATIVE_TOLERANCE)
    masked = aggregate(table, part.labels, ["q0", "q1"])
    verdict = verify_multiplicative(masked, ["q0", "q1"], [confidential], t,
                                    buckets=part.buckets)
    assert verdict.passed, verdict.describe()
    assert verdict.smallest_class >= k
    # Releasing the buckets instead of the values (Section 6.2, step 1) verifies the same.
    masked[confidential] = part.buckets.recode(table[confidential])
    again = verify_multiplicative(masked, ["q0", "q1"], [confidential], t)
    assert again.passed and again.max_distance == pytest.approx(verdict.max_distance)


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 120), st.integers(1, 8), st.floats(1.05, 4.0), st.integers(0, 10**6),
       st.booleans(), st.booleans())
def test_every_output_is_k_anonymous_and_t_close(n, k, t, seed, ties, nominal):
    k = min(k, n)
    table = frame(n, seed, ties=ties)
    column = "diagnosis" if nominal else "income"
    part = tc_bucket(standardized(table), table[column], k=k, t=t)
    check(table, part, column, k, t)


def test_larger_data_set_verifies_and_keeps_small_classes():
    table = frame(2000, 3)
    part = tc_bucket(standardized(table), table["income"], k=5, t=2.0)
    check(table, part, "income", 5, 2.0)
    assert part.cluster_size <= 6 and part.emphasis > 1 / 3  # classes lean on a bucket


def test_same_input_same_labels_and_input_unchanged():
    table = frame(300, 4, ties=True)
    before = table.copy(deep=True)
    X = standardized(table)
    a = tc_bucket(X, table["income"], k=4, t=1.5)
    b = tc_bucket(X, table["income"], k=4, t=1.5)
    assert np.array_equal(a.labels, b.labels)
    pd.testing.assert_frame_equal(table, before)


def test_t_is_the_multiplicative_level():
    table = frame(50, 1)
    for bad in (0.2, 1.0, -3, float("nan")):
        with pytest.raises(MicroaggError, match="multiplicative"):
            tc_bucket(standardized(table), table["income"], k=3, t=bad)


def test_one_confidential_attribute_only():
    table = frame(50, 1)
    with pytest.raises(MicroaggError, match="one confidential attribute"):
        tc_bucket(standardized(table), table[["income", "diagnosis"]], k=3, t=1.5)


def test_bad_inputs_raise():
    table = frame(20, 1)
    X = standardized(table)
    with pytest.raises(MicroaggError, match="fewer than k"):
        tc_bucket(X, table["income"], k=30, t=1.5)
    with pytest.raises(MicroaggError, match="n_buckets"):
        tc_bucket(X, table["income"], k=3, t=1.5, n_buckets=1)
    with pytest.raises(MicroaggError, match="missing"):
        tc_bucket(X, table["income"].where(table.index != 3), k=3, t=1.5)
    with pytest.raises(MicroaggError, match="values but"):
        tc_bucket(X, table["income"][:10], k=3, t=1.5)


def test_cancellation_and_progress():
    table = frame(200, 2)
    seen = []
    state = TaskState(lambda f, m: seen.append(f))
    tc_bucket(standardized(table), table["income"], k=3, t=1.5, state=state)
    assert seen[-1] == 1.0 and len(seen) > 10
    state = TaskState()
    state.cancel()
    with pytest.raises(Cancelled):
        tc_bucket(standardized(table), table["income"], k=3, t=1.5, state=state)


def test_more_buckets_than_classes_allow_still_meets_t():
    """20 buckets and k = 2: every class needs all 20 buckets, so classes grow."""
    values = np.arange(60)
    part = tc_bucket(values[:, None].astype(float), values, k=2, t=1.5, n_buckets=20)
    assert np.bincount(part.labels).min() >= 20
    assert part.max_distance <= 1.5


# --- The verifier ---------------------------------------------------------------------

def test_verifier_reports_a_missing_bucket_as_infinite():
    masked = pd.DataFrame({"qi": [1, 1, 2, 2], "c": [0, 0, 1, 1]})
    verdict = verify_multiplicative(masked, ["qi"], ["c"], 1.5)
    assert not verdict.passed and verdict.max_distance == (math.inf,)
    assert verdict.classes_over_t == (2,) and "FAILED" in verdict.describe()


def test_verifier_accepts_a_distance_of_exactly_t():
    masked = pd.DataFrame({"qi": [1] * 4 + [2] * 4 + [3] * 4,
                           "c": [0, 1, 4, 8, 2, 5, 6, 9, 3, 7, 10, 11]})
    buckets = bucketize(range(12), 3, name="c")
    assert verify_multiplicative(masked, ["qi"], ["c"], 1.5, buckets=buckets).passed
    tight = verify_multiplicative(masked, ["qi"], ["c"], 1.4999, buckets=buckets)
    assert not tight.passed
    assert tight.epsilon == pytest.approx(2 * math.log(1.4999))
    assert tight.epsilon_attained == pytest.approx(2 * math.log(1.5))


def test_verifier_checks_its_arguments():
    masked = pd.DataFrame({"qi": [1, 1], "c": [0, 1]})
    with pytest.raises(MicroaggError, match="not in the masked table"):
        verify_multiplicative(masked, ["qi"], ["x"], 1.5)
    with pytest.raises(MicroaggError, match="not a confidential column"):
        verify_multiplicative(masked, ["qi"], ["c"], 1.5,
                              buckets={"qi": Buckets("qi", "numerical")})
    with pytest.raises(MicroaggError, match="multiplicative"):
        verify_multiplicative(masked, ["qi"], ["c"], 0.3)

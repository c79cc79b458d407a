"""The whole run's shortcuts give the figures of the plain code they stand for.

Each shortcut is compared with its reference, kept here or beside it: the compiled
grouping of equal rows with ``numpy.unique(axis=0)`` and ``groupby`` (whatever the
hashes, so a collision can never merge classes), record linkage over the released
values' classes with record linkage over the embedded rows themselves, the measures'
per-scenario k′ with ``numpy.unique`` of the scenario's columns, IL1's one-pass terms
and constant columns with the numpy expressions, the interval-disclosure count with the
numpy count, and the numeric fast paths of the encoding with the per-column loops.
Data: few distinct values (ties, duplicate rows), −0.0 beside 0.0, NaN, infinities,
strata, ordinal and nominal quasi-identifiers.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st

import core.measures.disclosure as disclosure
import core.measures.utility as utility
import core.verify.rows as rows
from core.data.encoding import encode
from core.data.prepare import constant_columns, numeric_matrix
from core.data.roles import RoleSpec
from core.measures.disclosure import inside_count, real_anonymity, record_linkage
from core.measures.measure import _stratum_codes, measure
from core.measures.scenarios import intruder_scenarios
from core.verify.rows import distinct_rows, frame_classes

SPECIALS = (0.0, -0.0, 1.0, 2.5, np.inf, -np.inf, np.nan)


def _matrix(seed: int, n: int, c: int, distinct: int, specials: bool) -> np.ndarray:
    """n × c floats drawn from ``distinct`` values per column (ties, duplicate rows)."""
    rng = np.random.default_rng(seed)
    M = rng.integers(0, distinct, (n, c)).astype(float) - distinct // 2
    if specials and n:
        where = rng.random((n, c)) < 0.15
        M[where] = rng.choice(SPECIALS, int(where.sum()))
    return M


def _numpy_unique(values: np.ndarray, order: str):
    """(inverse, counts, first) by numpy.unique(axis=0), renumbered by first row."""
    _, first, inverse, counts = np.unique(values, axis=0, return_index=True,
                                          return_inverse=True, return_counts=True)
    inverse = inverse.reshape(-1)
    if order == "first":
        rank = np.argsort(first, kind="stable")
        new_id = np.empty_like(rank)
        new_id[rank] = np.arange(len(rank))
        return new_id[inverse], counts[rank], first[rank]
    return inverse, counts, first


def _same_partition(a: np.ndarray, b: np.ndarray) -> bool:
    """True when two class-id arrays put the same records together."""
    if len(a) == 0:
        return len(b) == 0
    pairs = np.unique(np.column_stack([a, b]), axis=0)
    return len(pairs) == len(np.unique(a)) == len(np.unique(b))


# ----------------------------------------------------------------- equal rows
matrices = st.builds(_matrix, st.integers(0, 2**32 - 1), st.integers(0, 70),
                     st.integers(1, 4), st.sampled_from([1, 2, 3, 50]), st.booleans())


@settings(max_examples=150, deadline=None)
@given(matrices)
def test_classes_of_rows_are_numpy_uniques(M):
    for order in ("sorted", "first"):
        found = distinct_rows(M, order=order)
        inverse, counts, first = _numpy_unique(M, order)
        assert found.inverse.tolist() == inverse.tolist()
        assert found.counts.tolist() == counts.tolist()
        assert found.first.tolist() == first.tolist()
    found = distinct_rows(M, order="any")
    inverse, counts, first = _numpy_unique(M, "first")
    assert _same_partition(found.inverse, inverse)
    assert sorted(found.first.tolist()) == sorted(first.tolist())
    assert np.array_equal(found.counts, np.bincount(found.inverse, minlength=found.n_classes))
    if len(M):
        assert real_anonymity(M) == len(M) / len(np.unique(M, axis=0))


@settings(max_examples=150, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(0, 300), st.integers(1, 6),
       st.sampled_from([1, 2, 3, 50]))
def test_the_column_by_column_sort_is_the_lexicographic_order(seed, n, c, distinct):
    """rows._lexicographic sorts the tied runs one column at a time: the order is
    numpy's stable lexicographic sort of every column (ties, 0.0 beside −0.0, rows
    equal throughout kept in their order)."""
    M = _matrix(seed, n, c, distinct, specials=False)
    M[np.random.default_rng(seed).random(M.shape) < 0.1] = -0.0
    expected = np.lexsort(M.T[::-1]) if n else np.empty(0, dtype=np.int64)
    assert rows._lexicographic(M).tolist() == expected.tolist()


def _weak_hashes(kind):
    """Hashes that collide: all equal, or only three values."""
    real = rows._hashes

    def hashes(words, floats):
        h, has_nan = real(words, floats)
        if kind == "equal":
            return np.zeros_like(h), has_nan
        return h % np.uint64(3), has_nan
    return hashes


@pytest.mark.skipif(rows._group_rows_compiled is None, reason="compiled path off")
@pytest.mark.parametrize("kind", ["equal", "three"])
def test_colliding_hashes_never_merge_classes(monkeypatch, kind):
    monkeypatch.setattr(rows, "_hashes", _weak_hashes(kind))
    rng = np.random.default_rng(3)
    for _ in range(40):
        M = _matrix(int(rng.integers(2**32)), int(rng.integers(1, 60)),
                    int(rng.integers(1, 4)), int(rng.choice([2, 3, 40])), specials=False)
        M[rng.random(M.shape) < 0.1] = -0.0
        for order in ("sorted", "first"):
            found = distinct_rows(M, order=order)
            assert found.inverse.tolist() == _numpy_unique(M, order)[0].tolist()
        t = pd.DataFrame(M, columns=[f"c{j}" for j in range(M.shape[1])])
        ids = t.groupby(list(t.columns), dropna=False, sort=False).ngroup().to_numpy()
        assert frame_classes(t, list(t.columns)).inverse.tolist() == ids.tolist()


def test_the_numpy_path_takes_the_exact_path_on_a_collision(monkeypatch):
    """Without the compiled kernels, a hash collision is caught by the row check."""
    monkeypatch.setattr(rows, "_row_hash", lambda words: np.zeros(len(words), np.uint64))
    M = np.array([[2.0, 1.0], [1.0, 5.0], [2.0, 1.0], [0.0, 0.0]])
    assert rows._classes_of_words(M.view(np.uint64)) is None
    monkeypatch.setattr(rows, "_group_rows_compiled", None)
    found = rows.distinct_rows(M)
    assert found.inverse.tolist() == _numpy_unique(M, "sorted")[0].tolist()


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 70))
def test_frame_classes_are_groupby_classes_with_missing_values(seed, n):
    rng = np.random.default_rng(seed)
    t = pd.DataFrame({"a": rng.choice([0.0, -0.0, 1.5, np.nan], n),
                      "b": rng.choice(["x", "y", None], n),
                      "c": rng.integers(0, 2, n),
                      "d": pd.Categorical(rng.choice(["p", "q"], n))})
    for columns in (["a"], ["a", "b"], ["a", "b", "c", "d"], ["d", "c"]):
        ids = t.groupby(columns, dropna=False, sort=False, observed=True).ngroup()
        found = frame_classes(t, columns)
        assert found.inverse.tolist() == ids.to_numpy().tolist()
        assert found.counts.tolist() == np.bincount(ids.to_numpy()).tolist()


def _guess(rng, truth: np.ndarray, kind: str) -> np.ndarray:
    """A guess at the classes: the groups the rows came from, split, merged, or noise."""
    n = len(truth)
    if kind == "groups":
        return truth
    if kind == "split":  # each group cut in two: right, only finer
        return 2 * truth + rng.integers(0, 2, n)
    if kind == "merged":  # two groups as one: wrong wherever their rows differ
        return truth // 2
    return rng.integers(0, max(1, n // 2), n)


@settings(max_examples=120, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 80),
       st.sampled_from(["groups", "split", "merged", "noise"]))
def test_frame_classes_through_candidates_are_groupby_classes(seed, n, kind):
    """A guess at the classes only says where to look: right, finer or wrong, the
    classes (and their numbering by first row) are groupby's."""
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, max(1, n // 3), n)
    pick = rng.integers(0, 3, truth.max() + 1)  # each group's row, from few values
    t = pd.DataFrame({"a": np.array([0.0, -0.0, np.nan])[pick][truth],
                      "b": np.array(["x", "y", None], dtype=object)[pick[::-1]][truth],
                      "c": rng.integers(0, 2, n)})
    t.loc[rng.random(n) < 0.05, "a"] = 2.5  # a few rows unlike their group's
    guess = _guess(rng, truth, kind)
    for columns in (["a"], ["a", "b"], ["a", "b", "c"]):
        ids = t.groupby(columns, dropna=False, sort=False).ngroup().to_numpy()
        found = frame_classes(t, columns, candidates=guess)
        assert found.inverse.tolist() == ids.tolist()
        assert found.counts.tolist() == np.bincount(ids).tolist()
        assert found.first.tolist() == [int(np.flatnonzero(ids == c)[0])
                                        for c in range(ids.max() + 1)]


@pytest.mark.skipif(rows._group_rows_compiled is None, reason="compiled path off")
def test_a_right_guess_hashes_only_the_first_row_of_each_candidate(monkeypatch):
    """Groups of 5 equal rows, two groups sharing a row: 20 rows hashed, not 100; a
    guess some row contradicts is dropped and every row is hashed."""
    hashed = []
    real = rows._hashes

    def counted(words, floats):
        hashed.append(len(words))
        return real(words, floats)

    monkeypatch.setattr(rows, "_hashes", counted)
    groups = np.repeat(np.arange(20), 5)
    values = np.arange(20.0)
    values[7] = values[3]  # groups 3 and 7 release the same row: one class
    t = pd.DataFrame({"a": values[groups], "b": (values[groups] > 9).astype(int)})
    found = frame_classes(t, ["a", "b"], candidates=groups)
    assert hashed == [20] and found.n_classes == 19 and found.counts[3] == 10
    wrong = groups.copy()
    wrong[12] = 0  # a row of group 2 guessed into group 0
    hashed.clear()
    assert frame_classes(t, ["a", "b"], candidates=wrong).inverse.tolist() == \
        found.inverse.tolist()
    assert hashed == [100]


# ----------------------------------------------------------------- record linkage
@settings(max_examples=80, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 90), st.integers(1, 3),
       st.sampled_from([2, 3, 6]), st.integers(0, 2))
def test_record_linkage_over_finer_classes_is_the_same_figure(seed, n, d, distinct,
                                                             n_strata):
    """Classes of the released values (with strata: finer than equal embedded rows)."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, distinct, (n, d)).astype(float)
    groups = rng.integers(0, max(1, n // 3), n)
    M = np.zeros_like(X)
    for g in np.unique(groups):
        M[groups == g] = X[groups == g].mean(axis=0)
    M[rng.random(M.shape) < 0.1] *= -0.0 if rng.random() < 0.5 else 1.0
    strata = rng.integers(0, 2, (n, n_strata)).astype(float)
    classes = distinct_rows(np.column_stack([M, strata]), order="sorted")
    mean, std = X.mean(axis=0), np.where(X.std(axis=0) > 0, X.std(axis=0), 1.0)
    Z, Zm = (X - mean) / std, (M - mean) / std
    for columns in ([0], list(range(d)), list(range(d))[::-1][:2]):
        plain = record_linkage(Z[:, columns], Zm[:, columns])
        assert record_linkage(Z[:, columns], Zm[:, columns], classes=classes) == plain
        ahead = disclosure.linkage_originals(Z[:, columns])  # made on another thread
        assert record_linkage(Z[:, columns], Zm[:, columns], classes=classes,
                              originals=ahead) == plain


def _release(seed: int, n: int, strata: bool):
    """A table with numeric, ordinal and nominal quasi-identifiers and its release."""
    rng = np.random.default_rng(seed)
    grades = ("low", "mid", "high")
    table = pd.DataFrame({
        "age": rng.integers(20, 24, n).astype(float),
        "pay": rng.choice([1.0, 2.0, 2.0, 7.5], n),
        "grade": rng.choice(grades, n),
        "sex": rng.choice(["F", "M"], n),
        "zone": rng.choice(["a", "b"], n),
    })
    masked = table.copy()
    groups = rng.integers(0, max(1, n // 4), n)
    for column in ("age", "pay"):
        masked[column] = table.groupby(groups)[column].transform("mean")
    for column in ("grade", "sex"):
        masked[column] = table.groupby(groups)[column].transform(lambda s: s.iloc[0])
    roles = RoleSpec(quasi_identifiers=("age", "pay", "grade", "sex"),
                     levels={"grade": "ordinal"}, orders={"grade": grades},
                     strata=("zone",) if strata else ())
    return table, masked, roles


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(8, 80), st.booleans())
def test_every_scenario_is_measured_as_by_the_plain_functions(seed, n, strata):
    """DLD and k′ per scenario equal record linkage of the embedded rows themselves and
    numpy.unique of the released columns with the strata."""
    table, masked, roles = _release(seed, n, strata)
    m = measure(table, masked, roles, scenarios="every")
    encoding = encode(table, roles, strict=False)
    raw_masked, _ = encoding.values_of(masked)
    Z, Z_masked = encoding.X, encoding.embed(raw_masked)
    stratum = _stratum_codes(masked, roles)
    qi = list(roles.quasi_identifiers)
    assert [f.known for f in m.scenarios] == \
        [tuple(s) for s in intruder_scenarios(qi, "every")]
    for figure in m.scenarios:
        columns = [qi.index(c) for c in figure.known]
        embedded = encoding.columns_of(figure.known)
        assert figure.dld == record_linkage(Z[:, embedded], Z_masked[:, embedded])
        keys = np.column_stack([raw_masked[:, columns], stratum])
        assert figure.k_prime == n / len(np.unique(keys, axis=0))
    keys = np.column_stack([raw_masked, stratum])
    _, classes = np.unique(keys, axis=0, return_inverse=True)
    assert m.classes.tolist() == classes.reshape(-1).tolist()
    assert m.k_prime == n / len(np.unique(keys, axis=0))


# ----------------------------------------------------------------- IL1
def old_information_loss_il1(raw, raw_masked):
    """IL1 as the plain numpy expressions compute it (the reference)."""
    def mean_variation(a, b):
        scale = np.maximum(np.abs(a), np.abs(b))
        terms = np.divide(np.abs(a - b), scale, out=np.zeros_like(scale), where=scale > 0)
        return float(terms.mean())

    def covariance(X):
        centred = X - X.mean(axis=0)
        return centred.T @ centred / len(X)

    def correlation(X, V):
        sd = np.sqrt(np.diag(V))
        constant = ~(sd > 0) | (X.min(axis=0) == X.max(axis=0))
        sd = np.where(constant, 1.0, sd)
        R = V / np.outer(sd, sd)
        R[constant, :] = 0.0
        R[:, constant] = 0.0
        return np.clip(R, -1.0, 1.0)

    upper = np.triu_indices(raw.shape[1])
    V, V_masked = covariance(raw), covariance(raw_masked)
    components = {
        "data": mean_variation(raw, raw_masked),
        "covariances": mean_variation(V[upper], V_masked[upper]),
        "variances": mean_variation(np.diag(V), np.diag(V_masked)),
        "correlations": float(np.mean(np.abs(correlation(raw, V)[upper]
                                             - correlation(raw_masked, V_masked)[upper]))),
    }
    il1 = 100.0 * sum(components.values()) / 4
    components["means"] = mean_variation(raw.mean(axis=0), raw_masked.mean(axis=0))
    return float(il1), components


def _same_bits(a, b) -> bool:
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return a.shape == b.shape and np.array_equal(a.view(np.uint64), b.view(np.uint64))


@settings(max_examples=150, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 60), st.integers(1, 4),
       st.sampled_from([1, 2, 3, 50]), st.booleans(), st.sampled_from([1e-300, 1.0, 1e300]))
def test_il1_terms_and_constant_columns_are_the_numpy_ones(seed, n, c, distinct, specials,
                                                            scale):
    A = _matrix(seed, n, c, distinct, specials) * scale
    B = _matrix(seed + 1, n, c, distinct, specials) * scale
    scaled = np.maximum(np.abs(A), np.abs(B))
    with np.errstate(all="ignore"):
        expected = np.divide(np.abs(A - B), scaled, out=np.zeros_like(scaled),
                             where=scaled > 0)
    if utility._variations_compiled is not None:
        assert _same_bits(utility._variations_compiled(A, B, np.empty(A.shape)), expected)
    with np.errstate(all="ignore"):
        assert _same_bits(utility._mean_variation(A, B), expected.mean())
    assert constant_columns(A).tolist() == (A.min(axis=0) == A.max(axis=0)).tolist()
    if not specials:
        with np.errstate(all="ignore"):
            il1, components = utility.information_loss_il1(A, B)
            old_il1, old_components = old_information_loss_il1(A, B)
        assert _same_bits(il1, old_il1) and components.keys() == old_components.keys()
        assert all(_same_bits(components[t], old_components[t]) for t in components)


def test_constant_attributes_are_those_of_one_value():
    rng = np.random.default_rng(31)
    for _ in range(20):
        n = int(rng.integers(1, 30))
        table = pd.DataFrame({"a": np.full(n, 2.5), "b": rng.integers(0, 2, n).astype(float),
                              "c": rng.choice([0.0, -0.0], n), "d": rng.choice(["x", "y"], n)})
        encoding = encode(table, RoleSpec(quasi_identifiers=tuple(table.columns)),
                          strict=False)
        expected = tuple(c for j, c in enumerate(table.columns)
                         if np.all(encoding.values[:, j] == encoding.values[0, j]))
        assert encoding.constant == expected
        Z = encoding.X[:, encoding.columns_of(["a", "b", "c"])]
        varying = int("d" not in expected)
        assert encoding.total_sum_of_squares() == float(np.einsum("ij,ij->", Z, Z)) + n * varying


def test_il1_constant_columns_edge_cases():
    cases = [np.array([[np.nan], [np.nan]]), np.array([[1.0], [np.nan]]),
             np.array([[np.nan], [1.0]]), np.array([[0.0], [-0.0]]),
             np.array([[np.inf], [np.inf]]), np.array([[np.inf], [-np.inf]]),
             np.array([[3.0]]), np.array([[np.nan]]),
             np.array([[1.0, 2.0], [1.0, 2.5], [1.0, 2.0]])]
    for X in cases:
        assert constant_columns(X).tolist() == \
            (X.min(axis=0) == X.max(axis=0)).tolist()


# ----------------------------------------------------------------- interval disclosure
@settings(max_examples=100, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 80), st.sampled_from([2, 5, 100]),
       st.sampled_from([0.5, 1.0, 10.0, 100.0]), st.booleans())
def test_inside_count_is_the_numpy_count(seed, n, distinct, interval, by_class):
    rng = np.random.default_rng(seed)
    original = rng.integers(0, distinct, n).astype(float)
    classes = rng.integers(0, max(1, n // 3), n) if by_class else None
    masked = (rng.integers(0, distinct + 1, int(classes.max()) + 1 if by_class else n)
              .astype(float) - 0.5)
    fast = inside_count(original, masked, interval=interval, classes=classes)
    saved, disclosure._inside_column_compiled = disclosure._inside_column_compiled, None
    try:
        plain = inside_count(original, masked, interval=interval, classes=classes)
    finally:
        disclosure._inside_column_compiled = saved
    assert fast == plain


# ----------------------------------------------------------------- the encoding
@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 50), st.integers(1, 4))
def test_numeric_encoding_fast_paths_are_the_column_loops(seed, n, d):
    rng = np.random.default_rng(seed)
    columns = [f"x{j}" for j in range(d)]
    table = pd.DataFrame(rng.integers(-2, 3, (n, d)).astype(float) * 1.7, columns=columns)
    table.iloc[:, 0] = table.iloc[:, 0].astype(int)  # an int column among floats
    encoding = encode(table, RoleSpec(quasi_identifiers=tuple(columns)), strict=False)
    raw = numeric_matrix(table, columns)
    assert _same_bits(encoding.values, raw)
    masked = table.sample(frac=1.0, random_state=seed).reset_index(drop=True)
    values, unknown = encoding.values_of(masked)
    assert unknown == {} and _same_bits(values, numeric_matrix(masked, columns))
    assert values.flags.c_contiguous
    Z = encoding.embed(values)
    expected = np.zeros((n, d))
    for j, a in enumerate(encoding.attributes):
        expected[:, j] = (values[:, j] - a.mean) / a.std
    assert _same_bits(Z, expected) and Z.flags.c_contiguous
    assert _same_bits(encoding.embed(encoding.values), encoding.X)
    table["kind"] = rng.choice(["p", "q"], n)  # mixed: the per-column loops themselves
    mixed = encode(table, RoleSpec(quasi_identifiers=("kind", *columns)), strict=False)
    assert _same_bits(mixed.values[:, 1:], raw)
    assert _same_bits(mixed.values_of(table)[0][:, 1:], raw)


def test_numeric_squared_distances_are_the_column_loop():
    rng = np.random.default_rng(23)
    table = pd.DataFrame(rng.normal(size=(200, 3)) * [1.0, 1e-3, 1e5], columns=["a", "b", "c"])
    encoding = encode(table, RoleSpec(quasi_identifiers=("a", "b", "c")), strict=False)
    released = table.sample(frac=1.0, random_state=1).reset_index(drop=True).to_numpy()
    expected = np.empty(released.shape)
    for j, a in enumerate(encoding.attributes):
        expected[:, j] = ((released[:, j] - encoding.values[:, j]) / a.std) ** 2
    found = encoding.squared_distances(released)
    assert _same_bits(found, expected) and found.flags.c_contiguous
    assert _same_bits(found.sum(), expected.sum())


# ----------------------------------------------------------------- the pipeline
@settings(max_examples=100, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 60),
       st.sampled_from(["small", "negative", "sparse", "int32", "uint8", "uint64"]))
def test_dense_ranks_are_numpy_unique_inverse(seed, n, kind):
    from core.pipeline.partition import dense_ranks
    rng = np.random.default_rng(seed)
    labels = {"small": lambda: rng.integers(0, 5, n),
              "negative": lambda: rng.integers(-3, 3, n),
              "sparse": lambda: rng.integers(0, 10**12, n),
              "int32": lambda: rng.integers(0, 2 * n, n).astype(np.int32),
              "uint8": lambda: rng.integers(0, 7, n).astype(np.uint8),
              "uint64": lambda: rng.integers(0, 7, n).astype(np.uint64)}[kind]()
    ranks = dense_ranks(labels)
    _, inverse = np.unique(labels, return_inverse=True)
    assert ranks.dtype == np.int64 and ranks.tolist() == inverse.reshape(-1).tolist()
    assert ranks.tolist() == distinct_rows(labels.reshape(-1, 1)).inverse.tolist()


def test_aggregate_releases_the_group_means_and_leaves_the_table_alone():
    from core.data.aggregate import aggregate, group_means
    rng = np.random.default_rng(29)
    n = 300
    table = pd.DataFrame({"id": np.arange(n), "a": rng.normal(size=n),
                          "b": rng.integers(0, 9, n), "c": rng.choice(["x", "y"], n),
                          "s": rng.normal(size=n)})
    before = table.copy()
    labels = rng.integers(0, 60, n)
    masked = aggregate(table, labels, ["a", "b"], drop=["id"])
    expected = before.drop(columns=["id"]).copy()
    means = group_means(numeric_matrix(before, ["a", "b"]), labels)[labels]
    for j, column in enumerate(["a", "b"]):
        expected[column] = pd.Series(means[:, j], index=before.index, name=column)
    pd.testing.assert_frame_equal(masked, expected, check_exact=True)
    masked.loc[0, "s"] = 1e9  # a later change to the release never reaches the original
    masked.loc[1, "c"] = "z"
    pd.testing.assert_frame_equal(table, before, check_exact=True)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 400), st.integers(1, 5),
       st.sampled_from([1.0, 1e12, 1e300]))
def test_group_sums_add_each_groups_values_in_input_order(seed, n, d, spread):
    """The compiled pass over the rows gives numpy.bincount's sums and counts bit for
    bit (values of very different sizes, so that another order would round
    differently; an empty group; infinities and NaN where the spread overflows)."""
    from core.data.aggregate import _group_sums_compiled, _group_sums_reference, group_means
    rng = np.random.default_rng(seed)
    values = rng.standard_normal((n, d)) * rng.choice([1.0, spread], (n, d))
    with np.errstate(over="ignore"):
        values[rng.random((n, d)) < 0.05] *= spread
    labels = rng.integers(0, max(n // 3, 1) + 1, n)  # the last group may be empty
    reference = _group_sums_reference(values, labels)
    if _group_sums_compiled is not None:
        sums, counts = _group_sums_compiled(values, labels, int(labels.max()) + 1)
        np.testing.assert_array_equal(counts, reference[1])
        assert sums.tobytes() == reference[0].tobytes()
    with np.errstate(invalid="ignore", divide="ignore"):
        expected = reference[0] / reference[1][:, None]
    assert group_means(values, labels).tobytes() == expected.tobytes()


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(0, 300), st.integers(0, 4))
def test_released_columns_are_the_group_values_gathered(seed, n, d):
    """Both paths give ``means[:, j][labels]`` for every column, bit for bit (NaN,
    −0.0 and infinities included), each row contiguous."""
    import core.data.aggregate as aggregate_code
    rng = np.random.default_rng(seed)
    groups = max(n // 3, 1)
    means = rng.choice([0.5, -0.0, np.nan, np.inf, 1e300, -7.25], (groups, d))
    labels = rng.integers(0, groups, n)
    expected = [means[:, j][labels] for j in range(d)]
    real = aggregate_code._spread_compiled
    try:
        for compiled in (real, None):
            aggregate_code._spread_compiled = compiled
            spread = aggregate_code.released_columns(means, labels)
            assert spread.shape == (d, n) and spread.flags.c_contiguous
            assert all(spread[j].tobytes() == expected[j].tobytes() for j in range(d))
    finally:
        aggregate_code._spread_compiled = real


def test_group_means_refuses_a_negative_label():
    from core.data.aggregate import group_means
    with pytest.raises(ValueError, match="non-negative"):
        group_means(np.ones((3, 2)), np.array([0, -1, 0]))


@pytest.mark.parametrize("rows_per_block", [1, 7, 8192])
def test_numeric_matrix_is_the_columns_side_by_side(monkeypatch, rows_per_block):
    import core.data.prepare as prepare
    from core.errors import MicroaggError
    monkeypatch.setattr(prepare, "_ROWS_PER_BLOCK", rows_per_block)
    rng = np.random.default_rng(37)
    table = pd.DataFrame({"a": rng.normal(size=50), "b": rng.integers(0, 9, 50),
                          "c": rng.normal(size=50).astype(np.float32), "t": ["x"] * 50})
    found = numeric_matrix(table, ["c", "a", "b"])
    expected = np.column_stack([table[c].to_numpy(dtype=np.float64) for c in ["c", "a", "b"]])
    assert _same_bits(found, expected) and found.flags.c_contiguous
    bad = table.assign(a=table["a"].where(table.index != 3),
                       b=table["b"].astype(float).where(table.index % 2 == 0, np.inf))
    with pytest.raises(MicroaggError, match="Column 'a' has 1 missing value.*row 4"):
        numeric_matrix(bad, ["c", "a", "b", "t"])
    with pytest.raises(MicroaggError, match="Column 'b' has 25 infinite"):
        numeric_matrix(bad, ["b", "a"])
    with pytest.raises(MicroaggError, match="Column 't' is not numeric"):
        numeric_matrix(bad, ["c", "t", "a"])


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(0, 60), st.integers(1, 8), st.booleans())
def test_smallest_per_class_is_numpy_minimum_at(seed, n, n_classes, specials):
    rng = np.random.default_rng(seed)
    values = rng.integers(0, 4, n).astype(float)
    if specials and n:
        where = rng.random(n) < 0.2
        values[where] = rng.choice([np.nan, np.inf, -np.inf, 0.0], int(where.sum()))
    classes = rng.integers(0, n_classes, n)
    expected = np.full(n_classes, np.inf)
    with np.errstate(invalid="ignore"):  # NaN is one of the values
        np.minimum.at(expected, classes, values)
    assert _same_bits(disclosure.smallest_per_class(values, classes, n_classes), expected)


def test_total_sum_of_squares_keeps_its_summation_order():
    """SST is summed over the numeric columns as gathered (a Fortran-order copy): summed
    over X itself, the same squares in another order give another last digit."""
    rng = np.random.default_rng(41)
    table = pd.DataFrame(rng.normal(size=(20_000, 10)), columns=[f"x{j}" for j in range(10)])
    encoding = encode(table, RoleSpec(quasi_identifiers=tuple(table.columns)), strict=False)
    Z = encoding.X[:, list(range(10))]
    assert encoding.total_sum_of_squares() == float(np.einsum("ij,ij->", Z, Z))


def test_aggregate_and_the_sorted_classes_take_a_checkpoint_between_their_passes():
    """A method masked attribute by attribute has a block per attribute: aggregation
    calls the checkpoint after each block, and numbering the block labels' classes
    between its column passes, so a Cancel raised there stops them at once."""
    from core.data.aggregate import aggregate

    class Stop(Exception):
        pass

    rng = np.random.default_rng(3)
    table = pd.DataFrame(rng.normal(size=(200, 3)), columns=["a", "b", "c"])
    labels = rng.integers(0, 20, (200, 3))
    blocks = [["a"], ["b"], ["c"]]
    calls = []

    def count():
        calls.append(1)

    whole = aggregate(table, labels, ["a", "b", "c"], blocks=blocks, checkpoint=count)
    assert len(calls) == 3
    pd.testing.assert_frame_equal(whole, aggregate(table, labels, ["a", "b", "c"],
                                                   blocks=blocks))

    def stop():
        calls.append(1)
        raise Stop

    calls.clear()
    with pytest.raises(Stop):
        aggregate(table, labels, ["a", "b", "c"], blocks=blocks, checkpoint=stop)
    assert len(calls) == 1
    tied = np.column_stack([np.zeros(200), rng.integers(0, 3, 200), rng.integers(0, 3, 200)])
    calls.clear()
    plain = distinct_rows(tied)
    counted = distinct_rows(tied, checkpoint=count)
    assert calls and counted.inverse.tolist() == plain.inverse.tolist()
    with pytest.raises(Stop):
        distinct_rows(tied, checkpoint=stop)

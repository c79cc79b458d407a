"""Record linkage keeps each nominal attribute's indicator block as one column, the
row's category (core.measures.linkage_tree's notes): the figures are those of the
full-width search and of the scipy reference, whatever the categories, scales, ties
and queries, and a block some row does not fit stays as its columns."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st

import core.measures.linkage as linkage
import core.measures.linkage_tree as linkage_tree
from core.data.encoding import encode
from core.data.roles import RoleSpec
from core.measures.ahead import known_blocks
from core.measures.disclosure import record_linkage
from core.verify.rows import distinct_rows
from tests.test_measures_scale import old_record_linkage

pytestmark = pytest.mark.skipif(linkage._search_compiled is None,
                                reason="the tree with categories is the compiled path's")


def _mixed(rng, n: int, spec, *, spare: bool):
    """Original and masked rows of numeric columns (``"x"``) and indicator blocks
    (``(categories, s)``), the masked ones made from groups of records (a group's
    numeric mean, the category of one of its records, or, with ``spare``, sometimes a
    category no original holds); returns Z, M and the blocks."""
    groups = rng.integers(0, max(n // 3, 1), n)
    Z_columns, M_columns, blocks, at = [], [], [], 0
    for part in spec:
        if part == "x":
            x = np.round(rng.standard_normal(n) * 2) / 2  # ties in every column
            means = np.bincount(groups, weights=x) / np.maximum(np.bincount(groups), 1)
            Z_columns.append(x[:, None])
            M_columns.append(np.where(rng.random(n) < 0.3, x, means[groups])[:, None])
            at += 1
            continue
        m, s = part
        held = m - 1 if spare and m > 2 else m  # the last category: no original holds it
        codes = rng.integers(0, held, n)
        first = np.zeros(groups.max() + 1, dtype=np.int64)
        first[groups[::-1]] = codes[::-1]  # the category of a record of each group
        masked = np.where(rng.random(n) < 0.5, codes, first[groups])
        if spare:
            masked = np.where(rng.random(n) < 0.1, m - 1, masked)
        Z_columns.append(np.eye(m)[codes] * s)
        M_columns.append(np.eye(m)[masked] * s)
        blocks.append((at, m))
        at += m
    return np.hstack(Z_columns), np.hstack(M_columns), tuple(blocks)


_PART = st.one_of(st.just("x"), st.tuples(st.integers(2, 7),
                                          st.sampled_from([0.5, 1.0, 0.7071067811865476])))


@settings(max_examples=80, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 200), st.lists(_PART, min_size=1,
                                                                  max_size=5),
       st.booleans())
def test_categories_as_one_column_give_the_full_width_figures(seed, n, spec, spare):
    Z, M, blocks = _mixed(np.random.default_rng(seed), n, spec, spare=spare)
    kept = linkage_tree.layout_of(Z, blocks)
    assert len(kept) == len(blocks)  # every block fits: it is kept as one column
    assert (record_linkage(Z, M, blocks=blocks) == record_linkage(Z, M)
            == old_record_linkage(Z, M))


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 1500), st.lists(_PART, min_size=1,
                                                                   max_size=4),
       st.booleans())
def test_one_masked_row_per_class_gives_the_records_figure(seed, n, spec, finer):
    """The measures of a categorical release embed its classes' rows only
    (``per_class``): the figure of the records' rows, whether the classes are the
    distinct rows or a finer partition of them (records of one row in two classes)."""
    rng = np.random.default_rng(seed)
    Z, M, blocks = _mixed(rng, n, spec, spare=True)
    keys = np.column_stack([M, rng.integers(0, 2, n)]) if finer else M
    classes = distinct_rows(keys, order="sorted")
    expected = record_linkage(Z, M, blocks=blocks)
    assert record_linkage(Z, M, classes=classes, blocks=blocks) == expected
    assert record_linkage(Z, M[classes.first], classes=classes, blocks=blocks,
                          per_class=True) == expected
    assert linkage.squared_distances(M[classes.first], Z, rows=classes.inverse).tolist() \
        == linkage.squared_distances(M, Z).tolist()


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(5, 300), st.lists(_PART, min_size=1,
                                                                  max_size=4))
def test_the_search_over_categories_is_the_reference_for_any_bound(seed, n, spec):
    """Queries bounded by their distance to a random point: minimum and ties as the
    reference's, bit for bit (the categories' terms are added as the columns' are)."""
    rng = np.random.default_rng(seed)
    Z, M, blocks = _mixed(rng, n, spec, spare=True)
    points = np.unique(Z, axis=0)
    targets = rng.integers(0, len(points), len(M))
    bound = linkage.squared_distances(M, points[targets])
    multiplicity = rng.integers(1, 4, len(points)).astype(float)
    tree = linkage.build_tree(points, blocks)
    fast = linkage.link_queries(points, multiplicity, M, bound, targets, tree=tree)
    reference = linkage.link_reference(points, multiplicity, M, bound)
    np.testing.assert_array_equal(fast[0], reference[0])
    np.testing.assert_array_equal(fast[1], reference[1])


def test_a_block_some_row_does_not_fit_stays_as_its_columns():
    rng = np.random.default_rng(3)
    Z, M, blocks = _mixed(rng, 60, ["x", (4, 1.0), (3, 0.5)], spare=False)
    Z[7, 1:5] = [1.0, 1.0, 0.0, 0.0]  # two categories in one row
    Z[9, 5:8] = [0.0, 0.25, 0.0]  # another value than the block's
    assert linkage_tree.layout_of(Z, blocks) == ()
    Z2 = Z.copy()
    Z2[7, 1:5], Z2[9, 5:8] = [1.0, 0.0, 0.0, 0.0], [0.0, 0.5, 0.0]
    assert linkage_tree.layout_of(Z2, blocks) == ((1, 4, 1.0), (5, 3, 0.5))
    assert record_linkage(Z, M, blocks=blocks) == old_record_linkage(Z, M)


def test_queries_unlike_the_points_blocks_are_searched_at_full_width():
    """A masked row with no category (or two) in a block the originals fit: the tree is
    built again over every column, and the figure is the reference's."""
    rng = np.random.default_rng(4)
    Z, M, blocks = _mixed(rng, 80, [(5, 1.0), "x", (3, 1.0)], spare=False)
    M[::5, 0:5] = 0.0
    M[1::7, 6:9] = 1.0
    assert not linkage_tree.fits(M, linkage_tree.layout_of(Z, blocks))
    assert record_linkage(Z, M, blocks=blocks) == old_record_linkage(Z, M)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 400), st.lists(_PART, min_size=1,
                                                                  max_size=4),
       st.sampled_from([16, 2, 1]))
def test_the_tree_over_categories_holds_them_in_tight_ranges(seed, n, spec, leaf):
    """The tree's rows are the compact rows (a block as its category, ``pair`` its
    s·s), each node's range is the smallest holding its rows, and a split lies inside
    its node with the left child's rows at most it and the right child's at least it."""
    Z, _, blocks = _mixed(np.random.default_rng(seed), n, spec, spare=False)
    layout = linkage_tree.layout_of(Z, blocks)
    compact, pair = linkage_tree.compact_rows(Z, layout)
    (index, work, start, stop, left, right, split_dim, split_value, low, high, nodes,
     kept, pairs) = linkage_tree._build(Z, layout, leaf)
    assert kept == layout and np.array_equal(pairs, pair)
    assert compact.shape[1] == Z.shape[1] - sum(w - 1 for _, w, _ in layout)
    np.testing.assert_array_equal(pair[pair > 0], [s * s for _, _, s in layout])
    np.testing.assert_array_equal(work, compact[index])
    for node in range(nodes):
        rows = work[start[node]:stop[node]]
        np.testing.assert_array_equal(low[node], rows.min(axis=0))
        np.testing.assert_array_equal(high[node], rows.max(axis=0))
        if left[node] >= 0:
            a, b, j = left[node], right[node], split_dim[node]
            assert work[start[a]:stop[a], j].max() <= split_value[node]
            assert work[start[b]:stop[b], j].min() >= split_value[node]


def test_the_measures_tell_the_tree_where_the_nominal_attributes_are():
    """The blocks follow the scenario's attributes in its order, nominal ones only."""
    rng = np.random.default_rng(5)
    table = pd.DataFrame({"age": rng.integers(20, 60, 50).astype(float),
                          "sex": rng.choice(["f", "m"], 50),
                          "region": rng.choice(list("abcde"), 50),
                          "edu": rng.integers(0, 4, 50)})
    roles = RoleSpec(quasi_identifiers=("age", "sex", "region", "edu"),
                     levels={"edu": "ordinal"})
    encoding = encode(table, roles, strict=False)
    assert known_blocks(encoding, ["age", "sex", "region", "edu"]) == ((1, 2), (3, 5))
    assert known_blocks(encoding, ["region", "age"]) == ((0, 5),)
    Z = encoding.X
    assert linkage_tree.layout_of(Z, known_blocks(encoding, list(roles.quasi_identifiers)))

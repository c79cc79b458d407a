"""The spatial index's float32 screen with nominal blocks kept as one column each
(:mod:`core.methods.spatial_screen`): the blocks it finds, and that its distances stay
within their margin of the exact ones, so the searches answer as the reference does
(``test_spatial_index`` compares whole partitions)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from hypothesis import given, settings, strategies as st

from core.data.encoding import encode
from core.methods import spatial_screen as screen
from core.methods import spatial_tree
from core.methods.spatial_index import _distance2
from core.data.roles import Level, RoleSpec


def _blocks(X: np.ndarray) -> list[tuple[int, int]]:
    layout, _, _ = screen.screen_layout(X, X.min(axis=0), X.max(axis=0))
    return [(int(first), int(width)) for first, width, _ in layout if width > 1]


def test_the_blocks_found_are_the_nominal_attributes_of_an_encoding():
    rng = np.random.default_rng(4)
    n = 3000
    table = pd.DataFrame({
        "age": rng.integers(0, 90, n).astype(float),
        "sex": rng.choice(["F", "M"], n),
        "education": rng.integers(0, 2, n),  # ordinal of two levels: 0 or its scale
        "region": rng.choice([f"r{i}" for i in range(12)], n),
        "occupation": rng.choice([f"o{i}" for i in range(30)], n),
        "income": rng.normal(size=n),
    })
    roles = RoleSpec(quasi_identifiers=tuple(table.columns), levels={
        "sex": "nominal", "education": "ordinal", "region": "nominal",
        "occupation": "nominal"})
    encoding = encode(table, roles)
    nominal = [(a.columns.start, a.columns.stop - a.columns.start)
               for a in encoding.attributes if a.level is Level.NOMINAL]
    assert len(nominal) == 3
    assert _blocks(encoding.X) == nominal


def test_adjacent_attributes_of_the_same_scale_stay_two_blocks():
    rng = np.random.default_rng(5)
    a, b = rng.integers(0, 3, 500), rng.integers(0, 4, 500)
    X = np.column_stack([np.eye(3)[a], np.eye(4)[b], rng.normal(size=500)]) * 0.8
    assert _blocks(X) == [(0, 3), (3, 4)]


def test_a_category_no_row_holds_stays_in_its_block():
    rng = np.random.default_rng(9)
    codes = rng.choice([0, 1, 3, 4], 600)  # category 2 of five is never drawn
    X = np.column_stack([rng.normal(size=600), np.eye(5)[codes] * 1.3, np.eye(3)[codes % 3]])
    assert _blocks(X) == [(1, 5), (6, 3)]
    X[:, 6:] = 0.0  # an attribute whose rows all left: one block of zeros with the last
    assert _blocks(X) == [(1, 8)]


def test_columns_that_are_not_indicators_are_kept_as_they_are():
    rng = np.random.default_rng(6)
    codes = rng.integers(0, 4, 400)
    X = np.eye(4)[codes]
    X[0, 1] = 0.5  # a third value in one column: no block through it
    assert _blocks(X) == [(2, 2)]
    X = np.eye(4)[codes]
    X[1] = 1.0  # a row with two indicators set
    assert _blocks(np.abs(X)) == []
    numeric = rng.normal(size=(400, 5))
    layout, _, _ = screen.screen_layout(numeric, numeric.min(axis=0), numeric.max(axis=0))
    assert layout[:, 1].tolist() == [1] * 5 and layout[:, 0].tolist() == list(range(5))


def _mixed(rng: np.random.Generator, n: int, none_share: float) -> np.ndarray:
    columns = [rng.normal(size=(n, 2)) * rng.uniform(0.1, 5.0, size=2)]
    for width in (2, 7, 15):
        codes = rng.integers(0, width, n)
        block = np.eye(width)[codes] * rng.uniform(0.2, 3.0)
        block[rng.random(n) < none_share] = 0.0  # rows of no category
        columns.append(block)
    columns.append(rng.integers(0, 4, n)[:, None] * 0.3)
    return np.column_stack(columns)


def _screened(X: np.ndarray, q: np.ndarray):
    """(screen distance, margin, exact distance) of every distinct row of X to q."""
    tree, levels, _ = spatial_tree.row_tree(X, X.mean(axis=0))
    P, shown, start, stop, first_leaf = tree[0], tree[1], tree[7], tree[8], tree[9]
    Q32, norm2, center, slot, layout, value = (shown[0], shown[1], shown[2], shown[6],
                                               shown[9], shown[10])
    q32 = screen.query_buffer(X.shape[1])
    query = screen._leaf_query(q, center, layout, value, q32)
    rows, margins, exact = [], [], []
    buffer32 = np.zeros(int((stop - start).max()) + 1, dtype=np.float32)
    for node in range(first_leaf, 2 * first_leaf + 1):
        leaf, size = node - first_leaf, stop[node] - start[node]
        margin = screen._screen_leaf(Q32, norm2, leaf, size, q32, layout, query,
                                     X.shape[1], buffer32)
        for i in range(size):
            t = slot[start[node] + i]
            rows.append(float(buffer32[i]))
            margins.append(margin)
            exact.append(_distance2(P, t, q))
    return np.array(rows), np.array(margins), np.array(exact), layout


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), none_share=st.sampled_from([0.0, 0.1, 1.0]),
       query=st.sampled_from(["record", "centroid", "centre", "anywhere"]))
def test_the_screen_is_within_its_margin_of_the_exact_distance(seed, none_share, query):
    rng = np.random.default_rng(seed)
    X = _mixed(rng, int(rng.integers(50, 600)), none_share)
    q = {"record": lambda: X[rng.integers(len(X))].copy(),
         "centroid": lambda: X[rng.choice(len(X), 5, replace=False)].mean(axis=0),
         "centre": lambda: X.mean(axis=0),
         "anywhere": lambda: rng.normal(size=X.shape[1]) * 3.0}[query]()
    shown, margin, exact, layout = _screened(X, q)
    assert (np.abs(shown - exact) <= margin).all()
    assert len(layout) <= X.shape[1] - 21  # the blocks of 2, 7 and 15 columns, or one of 24
    for first, width, _ in layout:
        if width > 1:
            _assert_block(X[:, first:first + width])


def _assert_block(block: np.ndarray) -> None:
    """Every value 0 or the block's one s, at most one s in a row."""
    s = block.max()
    assert ((block == 0.0) | (block == s)).all() and s >= 0.0
    assert ((block != 0.0).sum(axis=1) <= 1).all()


def test_numeric_rows_are_screened_as_one_column_per_attribute():
    """With no block, the screen is the float32 sum over the centred columns in order."""
    rng = np.random.default_rng(8)
    X = rng.normal(size=(700, 6)) * rng.uniform(0.1, 4.0, size=6)
    q = X[3] * 0.5
    shown, _, _, layout = _screened(X, q)
    tree, _, _ = spatial_tree.row_tree(X, X.mean(axis=0))
    P, center = tree[0], tree[1][2]
    slot, start, stop, first_leaf = tree[1][6], tree[7], tree[8], tree[9]
    order = np.concatenate([slot[start[v]:stop[v]] for v in range(first_leaf, 2 * first_leaf + 1)])
    rows32, q32 = (P[order] - center).astype(np.float32), (q - center).astype(np.float32)
    dense = np.zeros(len(order), dtype=np.float32)
    for j in range(X.shape[1]):
        diff = rows32[:, j] - q32[j]
        dense += diff * diff
    assert len(layout) == X.shape[1]
    assert np.array_equal(shown.astype(np.float32), dense)

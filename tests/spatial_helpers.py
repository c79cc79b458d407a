"""Helpers for the tests of the compiled spatial index."""

from __future__ import annotations

import numpy as np

from core.methods import spatial_index as index
from core.methods import spatial_search as search
from core.methods.spatial_screen import query_buffer


class leaves_of:
    """Within this block, the index's trees have leaves of at most ``size`` rows: a small
    table then gets a tree as deep as a large one's."""

    def __init__(self, size: int):
        self._size = size

    def __enter__(self):
        self._before, index.LEAF_SIZE = index.LEAF_SIZE, self._size
        return self

    def __exit__(self, *exc):
        index.LEAF_SIZE = self._before
        return False


KINDS = ("normal", "integer grid", "few distinct rows", "rows of a few copies")


def table(kind: str, rng: np.random.Generator, n: int) -> np.ndarray:
    """About n records of one of ``KINDS``: normal columns of different scales, a grid of
    three values (ties between distinct rows everywhere), four distinct rows repeated,
    or rows of one to seven identical records in shuffled order."""
    if kind == "normal":
        return rng.normal(size=(n, 4)) * rng.uniform(0.1, 10, size=4)
    if kind == "integer grid":
        return rng.integers(0, 3, size=(n, 3)).astype(float)
    if kind == "few distinct rows":
        return rng.normal(size=(4, 5))[rng.integers(0, 4, size=n)]
    rows = rng.normal(size=(n // 12, 3))
    X = np.repeat(rows, rng.integers(1, 8, size=len(rows)), axis=0)
    return X[rng.permutation(len(X))]


def nearest(tree, levels: int, q: np.ndarray, m: int) -> list[int]:
    """The record numbers :func:`core.methods.spatial_search._nearest` gives for the m
    live records of ``tree`` nearest to q (nothing taken), with fresh scratch arrays."""
    (P, screen, head, end, members, row_of, leaf_of, start, stop, first_leaf, lo, hi, cnt, top,
     rho2) = tree
    depth = 2 * levels + 8
    best_d2, best_id = np.zeros(m), np.zeros(m, dtype=np.int64)
    size = search._nearest(q, m, np.zeros(len(P), dtype=np.int64), first_leaf, start, head,
                           end, members, P, screen, lo, hi, cnt,
                           np.zeros(depth, dtype=np.int64), np.zeros(depth), best_d2, best_id,
                           np.zeros(int((stop - start).max()) + 1, dtype=np.float32),
                           query_buffer(len(q)), np.zeros(4, dtype=np.int64))
    return best_id[:size].tolist()


def farthest(tree, levels: int, q: np.ndarray, anchor: np.ndarray) -> int:
    """The record :func:`core.methods.spatial_search._farthest_from` gives as the live
    record of ``tree`` farthest from q (``anchor``: the point the tree's ρ² are to)."""
    (P, screen, head, end, members, row_of, leaf_of, start, stop, first_leaf, lo, hi, cnt, top,
     rho2) = tree
    keys, nodes = np.zeros(len(start)), np.zeros(len(start), dtype=np.int64)
    return int(search._farthest_from(q, anchor, first_leaf, start, head, end, members, P,
                                     screen, lo, hi, cnt, top, keys, nodes,
                                     np.zeros(int((stop - start).max()) + 1, dtype=np.float32),
                                     query_buffer(len(q)), np.zeros(4, dtype=np.int64))[1])


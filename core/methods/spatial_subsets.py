"""The records nearest to a point from every subset, one spatial index per subset.

t-closeness-first (Soria-Comas et al. 2015, Algorithm 3; :mod:`core.methods.tfirst`)
fills each cluster with, from every subset of the confidential order, the records of
that subset nearest to x₀. The reference keeps a :class:`~core.methods.pool.RecordPool`
per subset; here each subset has its own spatial index
(:func:`core.methods.spatial_tree.row_tree`, MDAV's), so the search in one subset
never walks past the records of the others. That matters because the confidential
attribute usually follows the quasi-identifiers: seen from an x₀ at one end of the
data, the nearest record of the subset at the other end of the confidential order lies
beyond most of the records of the near subsets. One index holding every subset (a
search until each subset has its records) examined those; at 100,000 records it took
about ten times as long as MDAV.

Exactness: the records a subset gives are its nearest, ties to the first in input order
(the reference's ``want[g]`` successive ``nearest(x₀, 1)`` and ``remove`` calls), with
the reference's distances (:func:`~core.methods.spatial_index._distance2`). Of a row of
identical records they are therefore always the first of its queue, so an index only
ever removes the head of a row, as MDAV's does.
"""

from __future__ import annotations

import numpy as np

from core.compiled import kernel
from core.methods import spatial_index as index
from core.methods import spatial_search as search
from core.methods import spatial_tree

__all__ = ["SubsetIndex"]


def _take_each(q, want, trees, subsets, scratch, out):
    """From every subset g, its ``want[g]`` live records nearest to q, taken out of its
    index; their record numbers (subset by subset, nearest first) into ``out``. Returns
    how many, or −1 if a record was not the first of its row (never: module notes)."""
    stack, stack_d2, best_d2, best_id, buffer32, q32, work = scratch
    size = 0
    for g in range(len(trees)):
        (P, screen, head, end, members, row_of, leaf_of, start, stop, first_leaf, lo, hi, cnt,
         top, rho2, taken) = trees[g]
        found = search._nearest(q, want[g], taken, first_leaf, start, head, end,
                                members, P, screen, lo, hi, cnt, stack, stack_d2, best_d2,
                                best_id, buffer32, q32, work)
        records = subsets[g]
        for i in range(found):
            record = best_id[i]
            t = row_of[record]
            if members[head[t]] != record:
                return -1
            head[t] += 1
            if head[t] == end[t]:
                index._refresh(leaf_of[t], first_leaf, start, stop, head, end, P, rho2, lo,
                               hi, cnt, top)
                search._vacate(t, leaf_of[t] - first_leaf, start[leaf_of[t]], screen)
            out[size] = records[record]
            size += 1
    return size


_compiled = kernel(_take_each)
if _compiled is not None:
    _take_each = _compiled


class SubsetIndex:
    """One spatial index per subset of the records of ``X`` (``subsets``: arrays of
    record numbers, ascending, that do not overlap). Needs the compiled kernels.

    Examples
    --------
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0]])
    >>> both = SubsetIndex(X, [np.array([0, 1]), np.array([2, 3])])
    >>> both.take(np.array([1.2]), np.array([1, 1])).tolist()
    [1, 2]
    >>> both.take(np.array([1.2]), np.array([1, 1])).tolist()
    [0, 3]
    """

    def __init__(self, X: np.ndarray, subsets: list[np.ndarray]):
        from numba.typed import List

        X = np.ascontiguousarray(X, dtype=np.float64)
        self._trees, self._subsets = List(), List()
        self.plain_trees = []  # the same, as a Python list: a typed list is slow from Python
        levels, widest = 0, 1
        for records in subsets:
            records = np.ascontiguousarray(records, dtype=np.int64)
            tree, depth, _ = spatial_tree.row_tree(X[records], np.zeros(X.shape[1]))
            self.plain_trees.append(tree + (np.zeros(len(tree[0]), dtype=np.int64),))
            self._trees.append(self.plain_trees[-1])
            self._subsets.append(records)
            levels = max(levels, depth)
            widest = max(widest, int((tree[8] - tree[7]).max(initial=0)) + 1)
        self._shape = (2 * levels + 8, widest, X.shape[1])
        self._scratch = self._new_scratch(1)

    @property
    def trees(self):
        """The subsets' indexes (numba typed list): ``spatial_tree.row_tree``'s tuple of
        each subset's records, then the rows' ``taken`` (zeros)."""
        return self._trees

    @property
    def subsets(self):
        """The subsets' record numbers (numba typed list), as given."""
        return self._subsets

    @property
    def scratch_shape(self) -> tuple[int, int, int]:
        """``(stack depth, buffer length, attributes)`` a search of these indexes needs."""
        return self._shape

    def _new_scratch(self, m: int):
        depth, widest, d = self._shape
        return (np.zeros(depth, dtype=np.int64), np.zeros(depth), np.zeros(m),
                np.zeros(m, dtype=np.int64), np.zeros(widest, dtype=np.float32),
                np.zeros(d, dtype=np.float32), np.zeros(4, dtype=np.int64))

    def take(self, point: np.ndarray, want: np.ndarray) -> np.ndarray:
        """Take from every subset g its ``want[g]`` live records nearest to ``point``
        (ties to the record first in the input); return them ascending."""
        want = np.asarray(want, dtype=np.int64)
        widest = int(want.max(initial=1))
        if widest > len(self._scratch[2]):
            self._scratch = self._new_scratch(widest)
        out = np.empty(int(want.sum()), dtype=np.int64)
        size = _take_each(np.ascontiguousarray(point, dtype=np.float64), want, self._trees,
                          self._subsets, self._scratch, out)
        if size < 0:
            raise AssertionError("subset index: a record taken out of its row's order")
        return np.sort(out[:size])

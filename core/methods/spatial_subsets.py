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

from core.compiled import COMPILED, kernel
from core.methods import spatial_tree

if COMPILED:
    from numba.typed import List

__all__ = ["SubsetIndex"]

_REINDEX_FROM = 256  # live rows: below this a subset's index is not built again


def _live_rows(trees, out):
    """``out[g]`` = (rows, live rows) of subset g's index."""
    for g in range(len(trees)):
        out[g, 0], out[g, 1] = trees[g][0].shape[0], trees[g][12][0]


def _replace(trees, g, tree):
    trees[g] = tree


def _list_of(item):
    """A new typed list holding ``item`` (:class:`SubsetIndex`'s notes)."""
    items = List()
    items.append(item)
    return items


def _append(items, item):
    items.append(item)


def _typed_list(items: list):
    """``items`` (at least one) as a typed list made and filled in kernels
    (:class:`SubsetIndex`'s notes)."""
    typed = _list_of(items[0])
    for item in items[1:]:
        _append(typed, item)
    return typed


for _name in ("_live_rows", "_replace", "_list_of", "_append"):
    _compiled = kernel(globals()[_name])
    if _compiled is not None:
        globals()[_name] = _compiled


class SubsetIndex:
    """One spatial index per subset of the records of ``X`` (``subsets``: arrays of
    record numbers, ascending, that do not overlap, at least one; ``check()`` is called
    between the steps of the builds, for Cancel). Needs the compiled kernels; the
    searches and removals are :mod:`core.methods.tfirst_tasks`'.

    The kernels take the indexes and the subsets as numba typed lists. These are made and
    filled inside kernels (:func:`_list_of`, :func:`_append`), which numba's on-disk
    cache keeps: a typed list filled from Python compiles its methods again in every
    process, which added about 0.6 s to a process's first tc-tfirst or tc-bucket run
    (5,000 records: 0.87–0.91 s against 0.32 s, the later runs 0.06 s).

    Examples
    --------
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0]])
    >>> both = SubsetIndex(X, [np.array([0, 1]), np.array([2, 3])])
    >>> [records.tolist() for records in both.subsets]
    [[0, 1], [2, 3]]
    """

    def __init__(self, X: np.ndarray, subsets: list[np.ndarray], check=None):
        X = np.ascontiguousarray(X, dtype=np.float64)
        self.plain_trees = []  # the same, as a Python list: a typed list is slow from Python
        records_of = [np.ascontiguousarray(records, dtype=np.int64) for records in subsets]
        levels, widest = 0, 1
        for records in records_of:
            tree, depth, _ = spatial_tree.row_tree(X[records], None, check)  # nearest only
            self.plain_trees.append(tree + (np.zeros(len(tree[0]), dtype=np.int64),))
            levels = max(levels, depth)
            widest = max(widest, int((tree[8] - tree[7]).max(initial=0)) + 1)
        self._trees, self._subsets = _typed_list(self.plain_trees), _typed_list(records_of)
        self._shape = (2 * levels + 8, widest, X.shape[1])
        self._sizes = np.zeros((len(subsets), 2), dtype=np.int64)

    def reindex(self) -> None:
        """Build a subset's index again on its live rows once half of its rows have
        emptied and at least ``_REINDEX_FROM`` are left
        (:func:`core.methods.spatial_tree.reindex`: the same answers, fuller leaves).
        Only while no search reads the indexes."""
        sizes = self._sizes
        _live_rows(self._trees, sizes)
        for g in np.flatnonzero((2 * sizes[:, 1] <= sizes[:, 0])
                                & (sizes[:, 1] >= _REINDEX_FROM)):
            tree, _, _ = spatial_tree.reindex(self.plain_trees[g][:15], None)
            self.plain_trees[g] = tree + (np.zeros(len(tree[0]), dtype=np.int64),)
            _replace(self._trees, int(g), self.plain_trees[g])

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

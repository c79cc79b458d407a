"""The pool of records not yet assigned to a group, for fixed-size heuristics.

Fixed-size heuristics (MDAV and its relatives) repeatedly ask two questions of the
records still unassigned: which is farthest from a point, and which m are nearest to it.
:class:`RecordPool` answers each with one matrix-vector product over a compact buffer of
the remaining rows, so a run costs O(n²·d / k) time and O(n·d) memory; no n×n matrix is
ever formed.

Speed without losing exactness: squared distances are first computed as
``|x|² − 2x·p + |p|²`` (one BLAS call), whose rounding error is bounded by
``tolerance(p)``. Every record that could be the answer within that bound is then
re-measured exactly as ``Σ(x − p)²``, and the answer is chosen from the exact values.
The result is the same as computing every distance exactly.

"Exactly" has one fixed floating-point form, shared with the compiled spatial index
(:mod:`core.methods.spatial_index`) so both give the same answer on every input:
:func:`squared_distances` sums ``(x_j − p_j)²`` over the columns in order, and
:func:`column_sums` adds rows one after another (numpy's ``sum(axis=0)`` may pair
them differently). The centroid is therefore bit-for-bit the same in both.

Removed rows are only flagged; the buffer is compacted (order preserved) once at most
half of it is alive, so each pass touches at most twice the live rows. Keeping the
original order makes tie-breaking deterministic: among equal distances the record that
comes first in the input wins.
"""

from __future__ import annotations

import numpy as np

__all__ = ["RecordPool", "squared_distances", "column_sums"]

_EPS = np.finfo(np.float64).eps


def squared_distances(rows: np.ndarray, point: np.ndarray) -> np.ndarray:
    """``Σ_j (rows[:, j] − point[j])²``, summed over the columns in order."""
    out = np.zeros(len(rows))
    for j in range(rows.shape[1]):
        diff = rows[:, j] - point[j]
        out += diff * diff
    return out


def column_sums(rows: np.ndarray) -> np.ndarray:
    """Sum of the rows, added one after another (a sequential, reproducible order).

    ``numpy.add.accumulate(rows, axis=0)[-1]`` bit for bit, accumulated a block of rows
    at a time onto the sum so far: the running sums of every row are not held (a
    million records of 124 embedded columns made a 1 GB array for one row of it).
    """
    rows = np.asarray(rows)
    if len(rows) == 0:
        return np.zeros(rows.shape[1])
    total = rows[0].copy()
    for start in range(1, len(rows), _ROWS_PER_SUM):
        block = rows[start:start + _ROWS_PER_SUM]
        running = np.add.accumulate(np.concatenate([total[None, :], block]), axis=0)
        total = running[-1].copy()
    return total


_ROWS_PER_SUM = 1024


class RecordPool:
    """Unassigned records of ``X`` (n_records × n_attributes)."""

    def __init__(self, X: np.ndarray):
        self._X = np.ascontiguousarray(X, dtype=np.float64)
        self._index = np.arange(len(X))
        self._alive = np.ones(len(X), dtype=bool)
        self._dead_penalty = np.zeros(len(X))
        self._norms = np.einsum("ij,ij->i", self._X, self._X)
        self._max_norm = float(np.sqrt(self._norms.max())) if len(X) else 0.0
        self._sum = column_sums(self._X)
        self.count = len(X)

    def centroid(self) -> np.ndarray:
        return self._sum / self.count

    def record(self, position: int) -> int:
        """Original record index at a buffer position."""
        return int(self._index[position])

    def position(self, record: int) -> int:
        """Buffer position of a live original record index."""
        return int(np.searchsorted(self._index, record))

    def rows(self, positions: np.ndarray) -> np.ndarray:
        return self._X[positions]

    def point(self, position: int) -> np.ndarray:
        return self._X[position].copy()

    def approximate_distances(self, point: np.ndarray) -> np.ndarray:
        """``|x − point|²`` for every buffer row, within :meth:`tolerance` (dead rows too)."""
        return self._norms - 2.0 * (self._X @ point) + float(point @ point)

    def tolerance(self, point: np.ndarray) -> float:
        scale = self._max_norm + float(np.sqrt(point @ point))
        return 64.0 * _EPS * scale * scale * max(1, self._X.shape[1])

    def _exact(self, positions: np.ndarray, point: np.ndarray) -> np.ndarray:
        return squared_distances(self._X[positions], point)

    def farthest(self, point: np.ndarray, approximate: np.ndarray | None = None) -> int:
        """Buffer position of the live row farthest from ``point`` (first in input order on ties)."""
        if approximate is None:
            approximate = self.approximate_distances(point)
        scores = approximate - self._dead_penalty
        candidates = np.flatnonzero(scores >= scores.max() - 2.0 * self.tolerance(point))
        if candidates.size == 1:
            return int(candidates[0])
        return int(candidates[np.argmax(self._exact(candidates, point))])

    def nearest(self, point: np.ndarray, m: int, *, include: int | None = None,
                exclude: np.ndarray | None = None,
                approximate: np.ndarray | None = None) -> np.ndarray:
        """Buffer positions (ascending) of the ``m`` live rows nearest to ``point``.

        ``include`` is always among them (the seed record of a group, even when it has a
        duplicate); ``exclude`` positions are never. Ties at the boundary go to the rows
        that come first in the input.
        """
        n_excluded = 0 if exclude is None else len(exclude)
        if m >= self.count - n_excluded:
            live = self._alive.copy()
            if exclude is not None:
                live[exclude] = False
            return np.flatnonzero(live)
        order, _ = self.nearest_sorted(point, m, include=include, exclude=exclude,
                                       approximate=approximate)
        return np.sort(order)

    def nearest_sorted(self, point: np.ndarray, m: int, *, include: int | None = None,
                       exclude: np.ndarray | None = None,
                       approximate: np.ndarray | None = None):
        """The ``m`` live rows nearest to ``point``, nearest first, with exact squared distances.

        Returns ``(positions, squared_distances)``; equal distances keep input order.
        ``m`` must be smaller than the number of live, non-excluded rows.
        """
        if approximate is None:
            approximate = self.approximate_distances(point)
        scores = approximate + self._dead_penalty
        if exclude is not None:
            scores[exclude] = np.inf
        if include is not None:
            scores[include] = -np.inf
        kth = scores[np.argpartition(scores, m - 1)[:m]].max()
        candidates = np.flatnonzero(scores <= kth + 2.0 * self.tolerance(point))
        exact = self._exact(candidates, point)
        if include is not None:
            exact[candidates == include] = -1.0
        order = np.argsort(exact, kind="stable")[:m]
        exact = np.maximum(exact[order], 0.0)
        return candidates[order], exact

    def remove(self, positions: np.ndarray) -> np.ndarray:
        """Take ``positions`` out of the pool; return their original record indices.

        May compact the buffer, so positions from before the call are invalid after it.
        """
        original = self._index[positions]
        self._alive[positions] = False
        self._dead_penalty[positions] = np.inf
        self._sum -= column_sums(self._X[positions])
        self.count -= len(positions)
        if self.count and self.count * 2 <= len(self._alive):
            keep = self._alive
            self._X = self._X[keep]
            self._index = self._index[keep]
            self._norms = self._norms[keep]
            self._alive = np.ones(self.count, dtype=bool)
            self._dead_penalty = np.zeros(self.count)
            self._sum = column_sums(self._X)  # resets accumulated rounding
        return original

    def records_at(self, positions: np.ndarray) -> np.ndarray:
        """Record numbers (rows of the original ``X``) at ``positions`` of the pool."""
        return self._index[positions]

    def positions_of(self, records: np.ndarray) -> np.ndarray:
        """Pool positions of remaining ``records`` (the inverse of :meth:`records_at`)."""
        return np.searchsorted(self._index, records)

    def live_positions(self) -> np.ndarray:
        """Positions of the records not yet removed, in pool order."""
        return np.flatnonzero(self._alive)

    def remaining(self) -> np.ndarray:
        """Original indices of every live record."""
        return self._index[self._alive]

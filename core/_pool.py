"""The pool of records not yet assigned to a group, for fixed-size heuristics.

Fixed-size heuristics (MDAV and its relatives) repeatedly ask three questions of the
records still unassigned: which is farthest from a point, which m are nearest to a
point, and what is their centroid. :class:`RecordPool` answers each in one vectorized
pass over a compact buffer of the remaining rows, so a run costs O(n²·d / k) time and
O(n·d) memory; no n×n matrix is ever formed.

Removed rows are only flagged; the buffer is compacted (order preserved) once at most
half of it is alive, so each pass touches at most twice the live rows. Keeping the
original order makes tie-breaking deterministic: among equal distances the record that
comes first in the input wins.
"""

from __future__ import annotations

import numpy as np

__all__ = ["RecordPool"]


class RecordPool:
    """Unassigned records of ``X`` (n_records × n_attributes)."""

    def __init__(self, X: np.ndarray):
        self._X = np.ascontiguousarray(X, dtype=np.float64)
        self._index = np.arange(len(X))
        self._alive = np.ones(len(X), dtype=bool)
        self._sum = self._X.sum(axis=0)
        self.count = len(X)

    def centroid(self) -> np.ndarray:
        return self._sum / self.count

    def rows(self, positions: np.ndarray) -> np.ndarray:
        return self._X[positions]

    def squared_distances(self, point: np.ndarray) -> np.ndarray:
        """Squared Euclidean distance of every buffer row to ``point`` (dead rows: nan)."""
        diff = self._X - point
        d = np.einsum("ij,ij->i", diff, diff)
        d[~self._alive] = np.nan
        return d

    def farthest(self, point: np.ndarray, distances: np.ndarray | None = None) -> int:
        """Buffer position of the live row farthest from ``point`` (first in input order on ties)."""
        if distances is None:
            distances = self.squared_distances(point)
        return int(np.nanargmax(distances))

    def nearest(self, distances: np.ndarray, m: int, include: int | None = None) -> np.ndarray:
        """Buffer positions of the ``m`` live rows with the smallest ``distances``.

        ``include`` is always among them (the seed record of a group, even when it has a
        duplicate). Ties at the boundary go to the rows that come first in the input.
        """
        d = np.where(self._alive, distances, np.inf)
        if include is not None:
            d[include] = -1.0
        if m >= self.count:
            return np.flatnonzero(self._alive)
        part = np.argpartition(d, m - 1)[:m]
        threshold = d[part].max()
        candidates = np.flatnonzero(d <= threshold)
        if candidates.size > m:
            candidates = candidates[np.argsort(d[candidates], kind="stable")[:m]]
        return np.sort(candidates)

    def remove(self, positions: np.ndarray) -> np.ndarray:
        """Take ``positions`` out of the pool; return their original record indices.

        May compact the buffer, so positions from before the call are invalid after it.
        """
        original = self._index[positions]
        self._alive[positions] = False
        self._sum -= self._X[positions].sum(axis=0)
        self.count -= len(positions)
        if self.count and self.count * 2 <= len(self._alive):
            keep = self._alive
            self._X = self._X[keep]
            self._index = self._index[keep]
            self._alive = np.ones(self.count, dtype=bool)
            self._sum = self._X.sum(axis=0)  # resets accumulated rounding
        return original

    def remaining(self) -> np.ndarray:
        """Original indices of every live record."""
        return self._index[self._alive]

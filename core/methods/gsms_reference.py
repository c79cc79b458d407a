"""GSMS by the plain reference: every candidate scanned at every selection.

The algorithm, its vocabulary and the choices made where the paper is silent are
described in :mod:`core.methods.gsms`. This is the first implementation, kept as the
reference: the faster path of :func:`core.methods.gsms.gsms` must give the same labels
on every input, and the tests compare the two. Each selection scans all m candidates,
O(n²·d/k) in all, and the nearest neighbours come from a
:class:`scipy.spatial.cKDTree` over the records still in T when it was last built
(rebuilt whenever T has halved). A query asks for q neighbours and drops assigned
ones; if that leaves the (k−1)-th nearest not strictly closer than the q-th returned
point, the answer could lie outside the returned set, and the query is repeated with
2q. The answer is therefore the same as a full scan in cKDTree's distances, ties to the
record first in the input.
"""

from __future__ import annotations

import numpy as np
from scipy.spatial import cKDTree

from core.data.prepare import check_group_size
from core.progress import TaskState

__all__ = ["gsms_reference"]


def gsms_reference(X: np.ndarray, *, k: int, state: TaskState | None = None) -> np.ndarray:
    """:func:`core.methods.gsms.gsms` by the plain reference: a full scan of the candidates
    per selection and k-d tree queries (:class:`scipy.spatial.cKDTree`) per rebuild.

    Parameters
    ----------
    X : ndarray of shape (n_records, n_attributes)
        Standardized quasi-identifiers (finite). Not modified.
    k : int
        Minimum group size, ``1 <= k <= n_records``.
    state : TaskState, optional
        Receives progress once per group and may cancel the run.

    Returns
    -------
    labels : ndarray of shape (n_records,), int64
        Group id of every record, 0 .. n_groups−1 in the order the groups were
        selected. There are ``n_records // k`` groups.

    References
    ----------
    C. Panagiotakis, G. Tziritas, "Successive group selection for microaggregation",
    IEEE TKDE 25(5), 2013, Section 3 (the GSMS algorithm, first phase only).
    L. Khomnotai et al., "Iterative group decomposition for refining microaggregation
    solutions", Symmetry 10(7):262, 2018, Section 3.1 and Table 3 (GSMS-NN).

    Examples
    --------
    >>> X = np.array([[0.0], [0.1], [4.0], [4.1], [4.2], [10.0], [10.1]])
    >>> gsms_reference(X, k=2).tolist()
    [1, 1, 2, 2, 2, 0, 0]
    """
    n = len(X)
    check_group_size(n, k)
    state = state or TaskState()
    return _Selection(np.ascontiguousarray(X, dtype=np.float64), k, state).run()


class _Selection:
    """The state of one GSMS run: T, every owner's candidate, the k-d tree."""

    def __init__(self, X: np.ndarray, k: int, state: TaskState):
        self.X, self.k, self.state = X, k, state
        self.n = len(X)
        self.labels = np.full(self.n, -1, dtype=np.int64)
        self.alive = np.ones(self.n, dtype=bool)
        self.members = np.empty((self.n, max(k - 1, 0)), dtype=np.int64)
        self.sums = np.empty_like(X)
        self.m = self.n
        self._build_tree()
        # Owners in input order; compacted with the tree so a pass costs O(m·d).
        self.owners = np.arange(self.n)
        self.total = X.sum(axis=0)
        # Bound on the rounding error of one coordinate of mean(p) − mean(T).
        scale = float(np.abs(X).max()) if X.size else 0.0
        self.slack = 4.0 * (k + 2) * np.finfo(np.float64).eps * scale * np.sqrt(X.shape[1])

    def run(self) -> np.ndarray:
        n, k = self.n, self.k
        if n >= k:
            self._update(np.arange(n))
        group = 0
        while self.m >= k:
            owner = self._best_owner()
            chosen = np.concatenate(([owner], self.members[owner]))
            self.labels[chosen] = group
            group += 1
            self.alive[chosen] = False
            self.m -= k
            self.total -= self.X[chosen].sum(axis=0)
            self.state.step((n - self.m) / n, f"GSMS: {group} groups formed")
            if self.m < k:
                break
            if self.m * 2 <= len(self.tree_index):
                self._build_tree()
                self.owners = self.owners[self.alive[self.owners]]
                self.total = self.X[self.owners].sum(axis=0)  # resets accumulated rounding
            owners = self.owners[self.alive[self.owners]]
            stale = ~self.alive[self.members[owners]].all(axis=1)
            self._update(owners[stale])
        self._assign_leftovers(group)
        return self.labels

    def _build_tree(self) -> None:
        self.tree_index = np.flatnonzero(self.alive)
        self.tree = cKDTree(self.X[self.tree_index])

    def _best_owner(self) -> int:
        owners = self.owners
        diff = self.sums[owners] * (1.0 / self.k) - self.total * (1.0 / self.m)
        score = np.einsum("ij,ij->i", diff, diff)
        score[~self.alive[owners]] = -np.inf
        best = score.max()
        # Scores equal up to rounding are ties (e.g. p and T \ p when m = 2k, whose
        # costs are equal exactly); they go to the first owner in input order.
        tied = score >= best - (2.0 * np.sqrt(best) * self.slack + self.slack ** 2)
        return int(owners[np.argmax(tied)])

    def _update(self, rows: np.ndarray) -> None:
        """Rebuild the candidates (members and sums) of the owners ``rows``."""
        if rows.size == 0:
            return
        need = self.k - 1
        if need:
            self.members[rows] = self._nearest(rows, need)
        # Sum the members in input order so equal member sets give equal sums.
        everyone = np.sort(np.concatenate((rows[:, None], self.members[rows]), axis=1), axis=1)
        self.sums[rows] = self.X[everyone].sum(axis=1)

    def _nearest(self, rows: np.ndarray, need: int) -> np.ndarray:
        """The ``need`` nearest live records other than each row, (distance, index) order."""
        out = np.empty((rows.size, need), dtype=np.int64)
        size = len(self.tree_index)
        # With nothing assigned yet, need + 1 points (the row itself included) usually
        # suffice; later, the just-removed group sits among the rows' nearest points.
        q = min(size, need + 1 if self.m == self.n else 2 * need + 2)
        pending = np.arange(rows.size)
        while pending.size:
            distance, position = self.tree.query(self.X[rows[pending]], k=q)
            distance = distance.reshape(len(pending), q)  # k=1 returns 1-d arrays
            position = position.reshape(len(pending), q)
            record = self.tree_index[position]
            usable = self.alive[record] & (record != rows[pending, None])
            keyed = np.where(usable, distance, np.inf)
            order = np.lexsort((record, keyed), axis=-1)[:, :need]
            chosen = np.take_along_axis(record, order, axis=1)
            boundary = np.take_along_axis(keyed, order[:, -1:], axis=1)[:, 0]
            # Complete if nothing outside the returned q can be as close as the boundary.
            done = boundary < distance[:, -1] if q < size else np.isfinite(boundary)
            out[pending[done]] = chosen[done]
            pending = pending[~done]
            if q == size and pending.size:
                raise AssertionError("fewer live records than a candidate needs")
            q = min(size, 2 * q)
        return out

    def _assign_leftovers(self, n_groups: int) -> None:
        rest = np.flatnonzero(self.labels < 0)
        if rest.size == 0:
            return
        formed = self.labels >= 0
        counts = np.bincount(self.labels[formed], minlength=n_groups)
        centroids = np.zeros((n_groups, self.X.shape[1]))
        np.add.at(centroids, self.labels[formed], self.X[formed])
        centroids /= counts[:, None]
        tolerance = 1.0 + 4.0 * (self.X.shape[1] + 2) * np.finfo(np.float64).eps
        for record in rest:
            diff = centroids - self.X[record]
            squared = np.einsum("ij,ij->i", diff, diff)
            # Equal up to rounding is a tie: the group formed first.
            self.labels[record] = int(np.argmax(squared <= squared.min() * tolerance))
        self.state.step(1.0, f"GSMS: {n_groups} groups formed")

"""GSMS: successive group selection for microaggregation.

Panagiotakis & Tziritas (2013), "Successive group selection for microaggregation",
IEEE TKDE 25(5):1191–1195; called GSMS-NN in Khomnotai et al. (2018), Section 3.1 and
Table 1. Vocabulary: T is the set of records not yet in a group, m = |T|; the
*candidate* of a record r in T is r together with its k−1 nearest other records of T.

1. While at least k records remain, every record of T owns a candidate; select the
   candidate p that minimizes SSE(p) + SSE(T \\ p), make it a group, and remove its
   records from T. Candidates that contained a removed record are rebuilt.
2. The fewer than k records left (n mod k of them) are each added to the group whose
   centroid is nearest. Every group therefore has k to 2k−1 records.

The cost of a candidate is evaluated in O(d) from totals. With S and Q the sum of the
records and of their squared norms, SSE(A) = Q_A − |S_A|²/|A|, so

    SSE(p) + SSE(T \\ p) = (Q_p − |S_p|²/k) + (Q_T − Q_p) − |S_T − S_p|²/(m − k)
                        = SSE(T) − k·m/(m − k) · |S_p/k − S_T/m|²,

because splitting T into p and T \\ p moves k·m/(m−k)·|mean(p) − mean(T)|² of the
total sum of squares SSE(T) into the "between" part. SSE(T) and the factor are the
same for every candidate of one iteration, so the selected candidate is the one whose
mean is farthest from the mean of T. Only the candidates' sums S_p (n × d) and their
members (n × (k−1)) are stored: O(n·k + n·d) memory, never an n × n matrix. The score
uses the difference form instead of the totals form above because Q_T − |S_T|²/m
loses digits to cancellation when the records sit far from the origin.

Speed. Two things would make this O(n²): scanning all m candidates at every selection,
and asking a k-d tree for the k−1 nearest of every rebuilt candidate while assigned
records crowd the answers (:mod:`core.methods.gsms_reference`, the first implementation,
does both and takes minutes at 100,000 records). Here the selection scans the
candidates in decreasing distance of their mean to a snapshot of T's mean and stops by
the triangle inequality (:mod:`core.methods.gsms_select`); the candidates to rebuild
are found through each record's list of the owners whose candidate holds it; and on
the compiled path the neighbours come from per-record lists of nearest records and a
k-d tree that skips assigned records (:mod:`core.methods.gsms_neighbours`). Both give
the reference's labels on every input: every decision is taken on the reference's
own numbers, and bounds only skip what cannot change it. At 100,000 × 10 standard-normal
records and k = 5 this takes about 16 s of CPU against about 230 s for the reference
in the same run (``benchmarks/scale_gsms_vmdav.py``), two thirds of it making the first
lists of nearest records (on a thread per core).

Nearest neighbours are those a full scan in :class:`scipy.spatial.cKDTree`'s
distances gives (exact, ``eps=0``), ties to the record first in the input.

Choices where the paper is silent or where this implementation differs:

- End game. The original paper was not available to us. The loop forms groups of
  exactly k while at least k records remain (the last selection may leave a T \\ p
  smaller than k); the leftovers (fewer than k) are then assigned one by one to the
  group with the nearest centroid, centroids taken before any leftover is added. This
  follows a public Matlab implementation of GSMS (N. C. Damasceno, 2014, ``GSMS.m`` in
  github.com/nielsencastelo/Mdav-Matlab: floor(n/K) selections, then nearest-centroid
  assignment), which also fixes the candidate (the record and its K−1 nearest) and the
  cost SSE(p) + SSE(T \\ p). The alternative "stop below 2k and make the rest one
  group" gives different partitions only when n is not a multiple of k. For Census
  (n = 1080, a multiple of every k in Table 3) there are no leftovers, so the published
  figures cannot tell the two apart.
- Ties. Candidate members: equal distances go to the record that comes first in the
  input (and the owner is always a member, even with duplicates). Selection: scores
  equal up to a bound on their rounding error are ties and go to the owner that comes
  first in the input, as an exact minimum over owners in input order would; such ties
  are structural (when m = 2k, p and T \\ p have the same cost). Candidate sums are
  added in input order, so owners with the same member set get bit-identical scores.
  Leftovers equidistant from two centroids join the group formed first.
- Not implemented here: the second phase "GSMS-T2" of the paper (the TFRP2 refinement
  pass that tries to dissolve each group into its neighbours, Khomnotai et al. 2018
  "GSMS-NN2"); refinement is a separate step applied to any partition. The paper's
  per-record priority queues (sorted distance lists; Khomnotai et al. note their high
  space cost) are replaced by k-d tree queries and short lists, which give the same
  candidates.

Census (1080 × 13, all attributes z-scored with the population std, IL = 100·SSE/SST)
reproduces Khomnotai et al. (2018) Table 3, row GSMS-NN, to all three published
decimals: k = 3, 4, 5, 10, 20, 30 give 5.5636, 7.2538, 8.6856, 13.5485, 18.7922,
22.4319 (published 5.564, 7.254, 8.686, 13.549, 18.792, 22.432).
"""

from __future__ import annotations

import numpy as np

from core.compiled import COMPILED
from core.data.prepare import check_group_size
from core.methods.gsms_neighbours import ListedNeighbours, TreeNeighbours
from core.methods.gsms_reference import gsms_reference
from core.methods.gsms_select import FarthestCandidate
from core.progress import TaskState

__all__ = ["gsms", "gsms_reference"]


def gsms(X: np.ndarray, *, k: int, state: TaskState | None = None) -> np.ndarray:
    """Partition the records of ``X`` into groups of k to 2k−1 by GSMS(-NN).

    Parameters
    ----------
    X : ndarray of shape (n_records, n_attributes)
        Standardized quasi-identifiers (finite). Not modified.
    k : int
        Minimum group size, ``1 <= k <= n_records``.
    state : TaskState, optional
        Receives progress once per group (and while the nearest records are listed)
        and may cancel the run.

    Returns
    -------
    labels : ndarray of shape (n_records,), int64
        Group id of every record, 0 .. n_groups−1 in the order the groups were
        selected. There are ``n_records // k`` groups. The same as
        :func:`gsms_reference` gives.

    References
    ----------
    C. Panagiotakis, G. Tziritas, "Successive group selection for microaggregation",
    IEEE TKDE 25(5), 2013, Section 3 (the GSMS algorithm, first phase only).
    L. Khomnotai et al., "Iterative group decomposition for refining microaggregation
    solutions", Symmetry 10(7):262, 2018, Section 3.1 and Table 3 (GSMS-NN).

    Examples
    --------
    >>> X = np.array([[0.0], [0.1], [4.0], [4.1], [4.2], [10.0], [10.1]])
    >>> gsms(X, k=2).tolist()
    [1, 1, 2, 2, 2, 0, 0]
    """
    n = len(X)
    check_group_size(n, k)
    state = state or TaskState()
    return _Selection(np.ascontiguousarray(X, dtype=np.float64), k, state, COMPILED).run()


class _Selection:
    """One GSMS run: T, every owner's candidate, and who holds whom."""

    def __init__(self, X: np.ndarray, k: int, state: TaskState, compiled: bool):
        self.X, self.k, self.state = X, k, state
        n = self.n = len(X)
        self.need = max(k - 1, 0)
        self.labels = np.full(n, -1, dtype=np.int64)
        self.alive = np.ones(n, dtype=bool)
        self.members = np.empty((n, self.need), dtype=np.int64)
        self.sums = np.empty_like(X)
        self.m = n
        # The reference restarts T's total from the records whenever T has halved.
        self.restart_at = n
        self.total = X.sum(axis=0)
        # Bound on the rounding error of one coordinate of mean(p) − mean(T).
        scale = float(np.abs(X).max()) if X.size else 0.0
        slack = 4.0 * (k + 2) * np.finfo(np.float64).eps * scale * np.sqrt(X.shape[1])
        self.select = FarthestCandidate(self.sums, self.alive, k, slack)
        self.holders = [[] for _ in range(n)] if self.need else None
        self.removed = np.zeros(n, dtype=bool)
        self.neighbours = None
        if self.need:
            self.neighbours = (ListedNeighbours(X, self.alive, self.need, state)
                               if compiled else TreeNeighbours(X, self.alive, state))

    def run(self) -> np.ndarray:
        n, k = self.n, self.k
        if n >= k:
            self._update(np.arange(n))
        group = 0
        while self.m >= k:
            owner = self.select.best(self.total, self.m)
            chosen = np.concatenate(([owner], self.members[owner]))
            self.labels[chosen] = group
            group += 1
            self.alive[chosen] = False
            self.m -= k
            self.total -= self.X[chosen].sum(axis=0)
            self.state.step((n - self.m) / n, f"GSMS: {group} groups formed")
            if self.m < k:
                break
            if self.m * 2 <= self.restart_at:
                self.restart_at = self.m
                self.total = self.X[np.flatnonzero(self.alive)].sum(axis=0)
            if self.need:
                self.neighbours.remove(chosen)
                stale = self._holders_of(chosen)
                self._update(stale)
                self.select.changed(stale)
        self._assign_leftovers(group)
        return self.labels

    def _holders_of(self, chosen: np.ndarray) -> np.ndarray:
        """Live owners whose candidate holds a chosen record, in input order."""
        holders = []
        for record in chosen.tolist():
            holders.extend(self.holders[record])
            self.holders[record] = []
        if not holders:
            return np.empty(0, dtype=np.int64)
        owners = np.unique(np.array(holders, dtype=np.int64))
        owners = owners[self.alive[owners]]
        self.removed[chosen] = True
        # A list may still name an owner whose candidate was rebuilt since.
        stale = owners[self.removed[self.members[owners]].any(axis=1)]
        self.removed[chosen] = False
        return stale

    def _update(self, rows: np.ndarray) -> None:
        """Rebuild the candidates (members and sums) of the owners ``rows``."""
        if rows.size == 0:
            return
        for begin in range(0, rows.size if self.need else 0, 20_000):
            part = rows[begin:begin + 20_000]
            members = self.neighbours.nearest(part, self.need)
            self.members[part] = members
            holders = self.holders
            for owner, held in zip(part.tolist(), members.tolist()):
                for record in held:
                    holders[record].append(owner)
            if rows.size > 20_000:  # the first candidates of a large file
                self.state.step(0.0, f"GSMS: candidates of {begin + part.size:,} records")
        # The reference's expression, on the same rows in the same order.
        everyone = np.sort(np.concatenate((rows[:, None], self.members[rows]), axis=1), axis=1)
        self.sums[rows] = self.X[everyone].sum(axis=1)

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

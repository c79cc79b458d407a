"""Refining a k-anonymous partition: TFRP2 and iterative group decomposition (IGD).

Khomnotai, Lin, Peng & Santra (2018), Section 4:

``tfrp2``
    One Decompose pass (their Figure 2, "executing the Decompose function once").
``igd``
    Their Figure 1: Decompose (Figure 2) then Shrink (Figure 4), repeated until neither
    changes the partition. Both end with SplitLargeGroups (Figure 3).

Decompose
    For each group p in turn: move every record of p to the nearest other group (by
    centroid); keep the result if the total SSE drops.
Shrink
    For each group p with more than k records: move the record whose move to its nearest
    other group lowers the SSE most, while p has more than k records and a move helps.
SplitLargeGroups
    A group of 2k or more records is split CBFS-style: the record farthest from its
    centroid seeds a new group that grows by the record nearest to the new group's
    centroid until it has k records; repeated while more than k records are left; the
    rest go one by one to their nearest group.

Choices where the paper is silent or would break a guarantee, each tested:

* Decompose sends p's records to the groups nearest to each record *before* any of them
  moves (one batch); the SSE change is computed exactly for that batch.
* "Nearest group" is the group with the nearest centroid; ties go to the lower group id.
* A split is kept only if it lowers the SSE (the paper keeps it always). Without that
  check a split can raise the SSE, and refinement must never do that.
* A change counts only if it lowers the SSE by more than 1e-12·SST, so floating-point
  noise cannot make IGD cycle; IGD also stops after ``max_rounds`` rounds.

Every group keeps at least k records throughout: Decompose only adds records to other
groups, Shrink never takes a group below k, and a split makes groups of k and adds the
rest to existing groups.

Two implementations give the same partition:

compiled (:mod:`core.methods.refine_passes`, when :data:`core.compiled.COMPILED`)
    The passes in numba over flat arrays, with an exact nearest-centroid KD-tree whose
    boxes grow as centroids move (:mod:`core.methods.refine_tree`). It returns to Python
    every ~0.1 s for progress and Cancel.
numpy (:class:`_Partition` below, the reference)
    Nearest-group searches use a KD-tree over the group centroids (scipy): one batched
    query lists every record's nearest groups; groups that changed since are checked
    directly, and the tree is rebuilt (and re-queried) once many have changed.

The two sum in different orders (numpy's pairwise sums and BLAS against sums in attribute
order), so they could part only where two choices differ by a rounding error; the tests
compare them on random and tie-heavy data.
"""

from __future__ import annotations

import numpy as np
from scipy.spatial import cKDTree

from core.compiled import COMPILED
from core.progress import TaskState

__all__ = ["refine", "decompose_pass", "REFINEMENTS"]

REFINEMENTS = ("none", "tfrp2", "igd")
_BRUTE_FORCE_GROUPS = 256
_CANDIDATES = 6


def refine(X: np.ndarray, labels: np.ndarray, *, k: int, method: str = "igd",
           max_rounds: int = 1000, state: TaskState | None = None,
           compiled: bool | None = None) -> np.ndarray:
    """Refine a partition of ``X`` whose groups all have at least ``k`` records.

    Parameters
    ----------
    X : ndarray of shape (n_records, n_attributes)
        Standardized quasi-identifiers.
    labels : ndarray of shape (n_records,)
        The partition to refine (not modified).
    k : int
    method : {"none", "tfrp2", "igd"}
    max_rounds : int
        IGD's limit on Decompose+Shrink rounds.
    state : TaskState, optional
    compiled : bool, optional
        ``True``: the compiled passes (when :data:`core.compiled.COMPILED`); by default
        the numpy implementation, which is still as fast on standard-normal data.

    Returns
    -------
    labels : ndarray of shape (n_records,), int64
        Group ids 0..G−1. SSE(result) ≤ SSE(labels); every group has ≥ k records.
    """
    if method not in REFINEMENTS:
        raise ValueError(f"unknown refinement {method!r}")
    state = state or TaskState()
    _, labels = np.unique(labels, return_inverse=True)
    if method == "none":
        return labels.astype(np.int64)
    if compiled and COMPILED:
        from core.methods.refine_passes import refine_compiled

        return refine_compiled(X, labels, k=k, method=method, max_rounds=max_rounds,
                               state=state)
    partition = _Partition(X, labels, k)
    if method == "tfrp2":
        partition.decompose(state, 0.0, 1.0)
    else:
        for round_ in range(max_rounds):
            span = 0.5 ** (round_ + 1)
            start = 1.0 - 2 * span
            changed = partition.decompose(state, start, start + span / 2)
            changed |= partition.shrink(state, start + span / 2, start + span)
            if not changed:
                break
    state.step(1.0, "refinement done")
    return partition.labels()


def decompose_pass(X, labels, *, k):
    """One Decompose pass (TFRP2); for tests and benchmarks."""
    return refine(X, labels, k=k, method="tfrp2")


class _Partition:
    """Groups with their sufficient statistics: count, Σx and Σ|x|²."""

    def __init__(self, X, labels, k):
        # Centred: SSE = Σ|x|² − |Σx|²/n then loses no digits to a far-away origin.
        X = np.asarray(X, dtype=np.float64)
        self.X = np.ascontiguousarray(X - X.mean(axis=0))
        self.k = k
        self.sq = np.einsum("ij,ij->i", self.X, self.X)
        n_groups = int(labels.max()) + 1
        self.members: list[list[int] | None] = [[] for _ in range(n_groups)]
        for i, g in enumerate(labels.tolist()):
            self.members[g].append(i)
        self.count = np.bincount(labels, minlength=n_groups).astype(np.float64)
        self.sums = np.zeros((n_groups, X.shape[1]))
        np.add.at(self.sums, labels, self.X)
        self.sumsq = np.bincount(labels, weights=self.sq, minlength=n_groups)
        self.tolerance = 1e-12 * max(float(self.sq.sum()), 1e-300)
        self.n_live = int(np.count_nonzero(self.count))
        self.index = _CentroidIndex(self)

    # statistics -------------------------------------------------------------
    def alive(self) -> np.ndarray:
        return self.count > 0

    def centroids(self) -> np.ndarray:
        with np.errstate(invalid="ignore", divide="ignore"):
            return self.sums / self.count[:, None]

    def group_sse(self, g) -> float:
        return self.sumsq[g] - float(self.sums[g] @ self.sums[g]) / self.count[g]

    def total_sse(self) -> float:
        live = self.alive()
        return float((self.sumsq[live] - np.einsum("ij,ij->i", self.sums[live],
                                                   self.sums[live]) / self.count[live]).sum())

    def _add(self, g, records):
        if self.count[g] == 0:
            self.n_live += 1
        self.members[g].extend(records)
        self.count[g] += len(records)
        self.sums[g] += self.X[records].sum(axis=0)
        self.sumsq[g] += self.sq[records].sum()
        self.index.touch(g)

    def _remove(self, g, records):
        drop = set(records)
        self.members[g] = [i for i in self.members[g] if i not in drop]
        self.count[g] -= len(records)
        self.sums[g] -= self.X[records].sum(axis=0)
        self.sumsq[g] -= self.sq[records].sum()
        if self.count[g] == 0:
            self.n_live -= 1
            self.members[g] = None
            self.sums[g] = 0.0
            self.sumsq[g] = 0.0
        self.index.touch(g)

    def _new_group(self, records) -> int:
        g = len(self.members)
        self.members.append([])
        self.count = np.append(self.count, 0.0)
        self.sums = np.vstack([self.sums, np.zeros(self.X.shape[1])])
        self.sumsq = np.append(self.sumsq, 0.0)
        self._add(g, records)
        return g

    def labels(self) -> np.ndarray:
        out = np.empty(len(self.X), dtype=np.int64)
        group = 0
        for records in self.members:
            if records:
                out[records] = group
                group += 1
        return out

    # Figure 2 -----------------------------------------------------------------
    def decompose(self, state, start, stop) -> bool:
        changed = False
        n_groups = len(self.members)
        for p in range(n_groups):
            if p % 64 == 0:
                state.step(start + (stop - start) * p / n_groups, "refining: decompose")
            records = self.members[p]
            if not records or self.index.n_live() < 2:
                continue
            targets = self.index.nearest(records, exclude=p)
            delta = -self.group_sse(p)
            for g in np.unique(targets):
                moving = [r for r, t in zip(records, targets) if t == g]
                count = self.count[g] + len(moving)
                sums = self.sums[g] + self.X[moving].sum(axis=0)
                sumsq = self.sumsq[g] + self.sq[moving].sum()
                delta += (sumsq - float(sums @ sums) / count) - self.group_sse(g)
            if delta < -self.tolerance:
                records = list(records)
                self._remove(p, records)
                for g in np.unique(targets):
                    self._add(int(g), [r for r, t in zip(records, targets) if t == g])
                changed = True
        changed |= self.split_large_groups()
        return changed

    # Figure 4 -----------------------------------------------------------------
    def shrink(self, state, start, stop) -> bool:
        changed = False
        n_groups = len(self.members)
        for p in range(n_groups):
            if p % 64 == 0:
                state.step(start + (stop - start) * p / n_groups, "refining: shrink")
            while self.members[p] and self.count[p] > self.k and self.n_live > 1:
                records = np.array(self.members[p])
                points = self.X[records]
                targets = self.index.nearest(records, exclude=p)
                # Only the centroids this step needs: all G of them per move would make
                # a pass O(G²).
                n_p, n_t = self.count[p], self.count[targets]
                leave = n_p / (n_p - 1) * _sq(points - self.sums[p] / n_p)
                join = n_t / (n_t + 1) * _sq(points - self.sums[targets] / n_t[:, None])
                gains = join - leave
                best = int(np.argmin(gains))
                if not gains[best] < -self.tolerance:
                    break
                record, target = int(records[best]), int(targets[best])
                self._remove(p, [record])
                self._add(target, [record])
                changed = True
        changed |= self.split_large_groups()
        return changed

    # Figure 3 -----------------------------------------------------------------
    def split_large_groups(self) -> bool:
        changed = False
        for p in range(len(self.members)):
            records = self.members[p]
            if records and len(records) >= 2 * self.k:
                changed |= self._split(p)
        return changed

    def _split(self, p) -> bool:
        k = self.k
        before = self.total_sse()
        saved = (list(self.members[p]), len(self.members))
        builds = self.index.builds
        remaining = list(self.members[p])
        self._remove(p, remaining)
        new_groups = []
        while True:
            points = self.X[remaining]
            centre = points.mean(axis=0)
            r = int(np.argmax(_sq(points - centre)))
            group = [remaining.pop(r)]
            total = self.X[group[0]].copy()
            while len(group) < k:
                points = self.X[remaining]
                s = int(np.argmin(_sq(points - total / len(group))))
                record = remaining.pop(s)
                group.append(record)
                total += self.X[record]
            new_groups.append(self._new_group(group))
            if len(remaining) <= k:
                break
        receivers = []
        for record in remaining:
            g = int(self.index.nearest([record], exclude=-1)[0])
            self._add(g, [record])
            receivers.append((g, record))
        if self.total_sse() < before - self.tolerance:
            return True
        # Undo: the split did not lower the SSE.
        for g, record in receivers:
            self._remove(g, [record])
        for g in new_groups:
            self._remove(g, list(self.members[g]))
        del self.members[saved[1]:]
        self.count = self.count[:saved[1]]
        self.sums = self.sums[:saved[1]]
        self.sumsq = self.sumsq[:saved[1]]
        self.index.forget_from(saved[1])
        self.members[p] = []
        self._add(p, saved[0])
        if self.index.builds != builds:  # the index saw the undone groups
            self.index.rebuild()
        return False


def _sq(diff: np.ndarray) -> np.ndarray:
    return np.einsum("ij,ij->i", diff, diff)


class _CentroidIndex:
    """Nearest live group centroid to a record, excluding one group.

    At every (re)build, a KD-tree over the live centroids answers, in one batched query,
    the ``_CANDIDATES`` nearest groups of every record. Later questions are answered from
    that list: the first listed group whose centroid has not changed since ("untouched")
    is the nearest untouched group, and every touched group is compared directly with its
    current centroid. The answer is thus exact. The index is rebuilt when the touched set
    grows large, so a whole pass costs a few batched queries instead of one per group.
    """

    def __init__(self, partition: _Partition):
        self.partition = partition
        self.tree = None
        self.tree_groups = np.empty(0, dtype=np.int64)
        self.touched: set[int] = set()
        self.stale = np.zeros(0, dtype=bool)
        self.builds = 0
        self.rebuild()

    def n_live(self) -> int:
        return self.partition.n_live

    def rebuild(self):
        self.builds += 1
        part = self.partition
        live = np.flatnonzero(part.count > 0)
        self.touched = set()
        self.stale = np.zeros(len(part.count), dtype=bool)
        self.tree_groups = live
        if live.size <= _BRUTE_FORCE_GROUPS:
            self.tree = None
            return
        self.tree = cKDTree(part.sums[live] / part.count[live, None])
        n_query = min(_CANDIDATES, live.size)
        dist, idx = self.tree.query(part.X, k=n_query)
        self.candidates = live[idx]
        self.candidate_d = dist ** 2

    def touch(self, g: int) -> None:
        if g >= len(self.stale):
            self.stale = np.append(self.stale, np.zeros(g + 1 - len(self.stale), dtype=bool))
        self.stale[g] = True
        self.touched.add(g)

    def forget_from(self, first_removed: int) -> None:
        self.touched = {g for g in self.touched if g < first_removed}
        self.stale = self.stale[:first_removed]

    def nearest(self, records, *, exclude: int) -> np.ndarray:
        """Group id of the nearest live centroid (≠ ``exclude``) for each record index."""
        part = self.partition
        records = np.asarray(records)
        points = part.X[records]
        if self.tree is not None and \
                len(self.touched) > max(256, len(self.tree_groups) // 4):
            self.rebuild()
        if self.tree is None:
            groups = np.flatnonzero(part.count > 0)
            groups = groups[groups != exclude]
            d = _pairwise(points, part.sums[groups] / part.count[groups, None])
            return groups[np.argmin(d, axis=1)]
        # Directly compared: every touched live group (its listed distance is out of date).
        direct = np.fromiter(self.touched, dtype=np.int64, count=len(self.touched))
        direct = direct[(part.count[direct] > 0) & (direct != exclude)]
        best_group = np.full(len(points), -1, dtype=np.int64)
        best_d = np.full(len(points), np.inf)
        if direct.size:
            direct.sort()
            d = _pairwise(points, part.sums[direct] / part.count[direct, None])
            j = np.argmin(d, axis=1)
            best_group, best_d = direct[j], d[np.arange(len(points)), j]
        groups = self.candidates[records]
        valid = ~self.stale[groups] & (groups != exclude)
        found = valid.any(axis=1)
        first = np.argmax(valid, axis=1)
        rows = np.flatnonzero(found)
        g = groups[rows, first[rows]]
        d = self.candidate_d[records[rows], first[rows]]
        better = d < best_d[rows]
        best_group[rows[better]] = g[better]
        best_d[rows[better]] = d[better]
        missing = np.flatnonzero(~found)
        if missing.size:  # every listed group changed: ask the tree for more
            n_query = min(4 * _CANDIDATES, len(self.tree_groups))
            while missing.size:
                dist, idx = self.tree.query(points[missing], k=n_query)
                dist, idx = np.atleast_2d(dist), np.atleast_2d(idx)
                groups = self.tree_groups[idx]
                valid = ~self.stale[groups] & (groups != exclude)
                found = valid.any(axis=1)
                first = np.argmax(valid, axis=1)
                rows = missing[found]
                g = groups[found, first[found]]
                d = dist[found, first[found]] ** 2
                better = d < best_d[rows]
                best_group[rows[better]] = g[better]
                best_d[rows[better]] = d[better]
                if n_query >= len(self.tree_groups):
                    break
                missing = missing[~found]
                n_query = min(2 * n_query, len(self.tree_groups))
        return best_group


def _pairwise(points: np.ndarray, centroids: np.ndarray) -> np.ndarray:
    """Squared distances, shape (len(points), len(centroids)); both are small here."""
    diff = points[:, None, :] - centroids[None, :, :]
    return np.einsum("ijk,ijk->ij", diff, diff)

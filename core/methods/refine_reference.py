"""The numpy refinement (TFRP2 and IGD), the reference for the compiled one.

The passes of :mod:`core.methods.refine` over :class:`_Partition`, a list of members and
the sufficient statistics (count, Σx, Σ|x|²) of every group. Every number is computed in
the fixed floating-point form of :mod:`core.methods.refine`, so the compiled passes
(:mod:`core.methods.refine_passes`) make the same choice at every step.

The nearest-group search (:class:`_CentroidIndex`) lists, at every (re)build, the
``_CANDIDATES`` nearest groups of each record with a KD-tree over the centroids (scipy),
and measures them exactly. A group that has not changed since keeps its measured
distance; a changed ("touched") group is measured again. The nearest unchanged group is
the nearest listed one when that is nearer than the last listed distance (less a
margin for the tree's own rounding); otherwise the record is compared with every group.
"""

from __future__ import annotations

import numpy as np
from scipy.spatial import cKDTree

from core.methods.pool import column_sums, squared_distances

__all__ = ["nearest_of", "pairwise_distances", "reference_passes"]

_BRUTE_FORCE_GROUPS = 256
_CANDIDATES = 6
_MARGIN = 1e-9  # relative: scipy's distances differ from the fixed form by ~1e-15


def pairwise_distances(points: np.ndarray, centroids: np.ndarray) -> np.ndarray:
    """``Σ_j (points[i, j] − centroids[g, j])²`` in column order, shape (m, G)."""
    out = np.zeros((len(points), len(centroids)))
    for j in range(points.shape[1]):
        diff = points[:, j, None] - centroids[None, :, j]
        out += diff * diff
    return out


def nearest_of(distances: np.ndarray, groups: np.ndarray):
    """Per row, the smallest distance and, among equal ones, the lowest group id.

    ``groups`` has the shape of ``distances`` (or is one row for all); ``-1`` where a row
    has only infinite distances.
    """
    groups = np.broadcast_to(groups, distances.shape)
    best = distances.min(axis=1)
    tied = (distances == best[:, None]) & np.isfinite(distances)
    ids = np.where(tied, groups, np.iinfo(np.int64).max).min(axis=1)
    return best, np.where(np.isfinite(best), ids, -1)


def _sequential(values: np.ndarray) -> float:
    return float(np.add.accumulate(values)[-1]) if len(values) else 0.0


def _dot(v: np.ndarray) -> float:
    total = 0.0
    for x in v.tolist():
        total += x * x
    return total


def reference_passes(Xc, sq, labels, *, k, method, max_rounds, tolerance, state):
    """Run TFRP2 or IGD on centred ``Xc`` (``sq``: its rows' squared norms); the labels,
    ids in live-group order."""
    partition = _Partition(Xc, sq, labels, k, tolerance)
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
    return partition.labels()


class _Partition:
    """Groups with their sufficient statistics: count, Σx and Σ|x|²."""

    def __init__(self, Xc, sq, labels, k, tolerance):
        self.X = Xc
        self.k = k
        self.sq = sq
        n_groups = int(labels.max()) + 1
        self.members: list[list[int] | None] = [[] for _ in range(n_groups)]
        for i, g in enumerate(labels.tolist()):
            self.members[g].append(i)
        self.count = np.bincount(labels, minlength=n_groups).astype(np.float64)
        self.sums = np.zeros((n_groups, Xc.shape[1]))
        np.add.at(self.sums, labels, Xc)  # record after record, as the compiled path
        self.sumsq = np.bincount(labels, weights=self.sq, minlength=n_groups)
        self.tolerance = tolerance
        self.n_live = int(np.count_nonzero(self.count))
        self.index = _CentroidIndex(self)

    def centroids(self, groups) -> np.ndarray:
        return self.sums[groups] / self.count[groups, None]

    def group_sse(self, g) -> float:
        return self.sumsq[g] - _dot(self.sums[g]) / self.count[g]

    def total_sse(self) -> float:
        total = 0.0
        for g in np.flatnonzero(self.count > 0).tolist():
            total += self.group_sse(g)
        return total

    def _add(self, g, records):
        if self.count[g] == 0:
            self.n_live += 1
        self.members[g].extend(records)
        self.count[g] += len(records)
        self.sums[g] += column_sums(self.X[records])
        self.sumsq[g] += _sequential(self.sq[records])
        self.index.touch(g)

    def _remove(self, g, records):
        drop = set(records)
        self.members[g] = [i for i in self.members[g] if i not in drop]
        self.count[g] -= len(records)
        if self.count[g] == 0:
            self.n_live -= 1
            self.members[g] = None
            self.sums[g] = 0.0
            self.sumsq[g] = 0.0
        else:
            self.sums[g] -= column_sums(self.X[records])
            self.sumsq[g] -= _sequential(self.sq[records])
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
            if not records or self.n_live < 2:
                continue
            targets = self.index.nearest(records, exclude=p)
            receivers = np.unique(targets).tolist()
            delta = -self.group_sse(p)
            for g in receivers:
                moving = [r for r, t in zip(records, targets) if t == g]
                count = self.count[g] + len(moving)
                sums = self.sums[g] + column_sums(self.X[moving])
                sumsq = self.sumsq[g] + _sequential(self.sq[moving])
                delta += (sumsq - _dot(sums) / count) - self.group_sse(g)
            if delta < -self.tolerance:
                records = list(records)
                self._remove(p, records)
                for g in receivers:
                    self._add(g, [r for r, t in zip(records, targets) if t == g])
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
                leave = n_p / (n_p - 1) * squared_distances(points, self.sums[p] / n_p)
                join = n_t / (n_t + 1) * _rowwise(points, self.centroids(targets))
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
        """Figure 3 on group p; whether the split was kept. The SSE change is summed
        over the groups it touches (−SSE(p), less each receiving group's SSE before, in
        the order they first received, plus each new group's and each receiving group's
        after); a split not kept puts every statistic back exactly as it was."""
        k = self.k
        p_before = (self.group_sse(p), self.count[p], self.sums[p].copy(), self.sumsq[p])
        saved = (list(self.members[p]), len(self.members))
        builds = self.index.builds
        remaining = list(self.members[p])
        self._remove(p, remaining)
        new_groups = []
        while True:
            points = self.X[remaining]
            centre = column_sums(points) / len(remaining)
            r = int(np.argmax(squared_distances(points, centre)))
            group = [remaining.pop(r)]
            total = self.X[group[0]].copy()
            while len(group) < k:
                points = self.X[remaining]
                s = int(np.argmin(squared_distances(points, total / len(group))))
                record = remaining.pop(s)
                group.append(record)
                total += self.X[record]
            new_groups.append(self._new_group(group))
            if len(remaining) <= k:
                break
        receivers = []
        before = {}  # receiving group (not a new one): count, Σx, Σ|x|², SSE before
        for record in remaining:
            g = int(self.index.nearest([record], exclude=-1)[0])
            if g < saved[1] and g not in before:
                before[g] = (self.count[g], self.sums[g].copy(), self.sumsq[g],
                             self.group_sse(g))
            self._add(g, [record])
            receivers.append((g, record))
        delta = -p_before[0]
        for g in before:
            delta -= before[g][3]
        for g in new_groups:
            delta += self.group_sse(g)
        for g in before:
            delta += self.group_sse(g)
        if delta < -self.tolerance:
            return True
        # Undo: the split did not lower the SSE.
        for g, record in receivers:
            if g < saved[1]:
                self.members[g].remove(record)
        for g, (count, sums, sumsq, _) in before.items():
            self.count[g], self.sums[g], self.sumsq[g] = count, sums, sumsq
            self.index.touch(g)
        self.n_live -= len(new_groups)
        del self.members[saved[1]:]
        self.count = self.count[:saved[1]]
        self.sums = self.sums[:saved[1]]
        self.sumsq = self.sumsq[:saved[1]]
        self.index.forget_from(saved[1])
        self.members[p] = list(saved[0])
        self.count[p], self.sums[p], self.sumsq[p] = p_before[1], p_before[2], p_before[3]
        self.n_live += 1
        self.index.touch(p)
        if self.index.builds != builds:  # the index saw the undone groups
            self.index.rebuild()
        return False


def _rowwise(points: np.ndarray, centroids: np.ndarray) -> np.ndarray:
    out = np.zeros(len(points))
    for j in range(points.shape[1]):
        diff = points[:, j] - centroids[:, j]
        out += diff * diff
    return out


class _CentroidIndex:
    """Nearest live group centroid to a record, excluding one group; exact.

    At every (re)build, scipy's KD-tree lists the ``_CANDIDATES`` nearest groups of every
    record, which are then measured exactly. A question is answered from the untouched
    listed groups when the nearest of them is nearer than the list's last distance (so
    no unlisted group can be as near), and from every touched group measured now; other
    records are compared with every group. The index is rebuilt when the touched set
    grows large.
    """

    def __init__(self, partition: _Partition):
        self.partition = partition
        self.tree = None
        self.touched: set[int] = set()
        self.stale = np.zeros(0, dtype=bool)
        self.builds = 0
        self.rebuild()

    def rebuild(self):
        self.builds += 1
        part = self.partition
        live = np.flatnonzero(part.count > 0)
        self.touched = set()
        self.stale = np.zeros(len(part.count), dtype=bool)
        self.n_tree = live.size
        if live.size <= _BRUTE_FORCE_GROUPS:
            self.tree = None
            return
        self.tree = cKDTree(part.centroids(live))
        n_query = min(_CANDIDATES, live.size)
        dist, idx = self.tree.query(part.X, k=n_query)
        self.candidates = live[idx]
        self.candidate_d = np.zeros(idx.shape)
        centroids = part.centroids(self.candidates.ravel()).reshape(*idx.shape, -1)
        for j in range(part.X.shape[1]):
            diff = part.X[:, j, None] - centroids[:, :, j]
            self.candidate_d += diff * diff
        self.bound = dist[:, -1] ** 2 * (1 - _MARGIN) if n_query < live.size else \
            np.full(len(part.X), np.inf)

    def touch(self, g: int) -> None:
        if g >= len(self.stale):
            self.stale = np.append(self.stale, np.zeros(g + 1 - len(self.stale), dtype=bool))
        self.stale[g] = True
        self.touched.add(g)

    def forget_from(self, first_removed: int) -> None:
        self.touched = {g for g in self.touched if g < first_removed}
        self.stale = self.stale[:first_removed]

    def _all_groups(self, points, exclude):
        part = self.partition
        groups = np.flatnonzero(part.count > 0)
        groups = groups[groups != exclude]
        return nearest_of(pairwise_distances(points, part.centroids(groups)), groups)

    def nearest(self, records, *, exclude: int) -> np.ndarray:
        """Group id of the nearest live centroid (≠ ``exclude``) for each record index."""
        part = self.partition
        records = np.asarray(records)
        points = part.X[records]
        if self.tree is not None and len(self.touched) > max(256, self.n_tree // 4):
            self.rebuild()
        if self.tree is None:
            return self._all_groups(points, exclude)[1]
        groups = self.candidates[records]
        listed = np.where(~self.stale[groups] & (groups != exclude),
                          self.candidate_d[records], np.inf)
        best_d, best_g = nearest_of(listed, groups)
        unsure = np.flatnonzero(~(best_d < self.bound[records]))
        direct = np.fromiter(self.touched, dtype=np.int64, count=len(self.touched))
        direct = np.sort(direct[(part.count[direct] > 0) & (direct != exclude)])
        if direct.size:
            d_direct, g_direct = nearest_of(
                pairwise_distances(points, part.centroids(direct)), direct)
            closer = (d_direct < best_d) | ((d_direct == best_d) & (g_direct < best_g))
            best_g = np.where(closer, g_direct, best_g)
        if unsure.size:
            best_g[unsure] = self._all_groups(points[unsure], exclude)[1]
        return best_g

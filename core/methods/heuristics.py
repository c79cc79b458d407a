"""Fixed-size microaggregation heuristics: MDAV, CBFS and TFRP, grown by NN or NC.

Khomnotai et al. (2018), Section 3.1 and Table 1, separate two choices:

The first record of each group (``first``)
    ``mdav``: r, the record farthest from the centroid of the unassigned records T, then
    s, the record of T farthest from r (Domingo-Ferrer & Torra 2005).
    ``cbfs``: r, the record farthest from the centroid of T, one group at a time
    (Laszlo & Mukherjee 2005).
    ``tfrp``: alternately the record of T farthest from the reference point R2 (every
    attribute at its maximum over the data set) and from R1 (every attribute at its
    minimum) (Chang, Li & Huang 2007). The excerpt does not say which reference point
    comes first; starting with R2 (the maximum corner) reproduces its Table 3 to the
    third decimal, starting with R1 misses by up to 3%.

How a group grows to k records (``growth``)
    ``nn``: the first record and its k−1 nearest records of T.
    ``nc``: repeatedly add the record of T nearest to the group's current centroid.

End game (where the excerpt is silent, the original papers are followed): MDAV forms
two groups per round while at least 3k records remain, one more if 2k..3k−1 remain, and
the rest form the last group. CBFS and TFRP form groups while at least 2k records remain;
the last k..2k−1 records form the last group.

Ties (equal distances) go to the record that comes first in the input.
"""

from __future__ import annotations

import numpy as np

from core.compiled import COMPILED
from core.methods.pool import RecordPool, squared_distances
from core.methods.spatial_heuristics import fixed_size_indexed
from core.data.prepare import check_group_size
from core.progress import TaskState

__all__ = ["fixed_size", "fixed_size_reference", "FIRST_RECORD", "GROWTH"]

FIRST_RECORD = ("mdav", "cbfs", "tfrp")
GROWTH = ("nn", "nc")

# NC growth first looks among the seed's nearest records; this many per unit of k.
_NC_CANDIDATES_PER_K = 3


def fixed_size(X: np.ndarray, *, k: int, first: str = "mdav", growth: str = "nn",
               state: TaskState | None = None) -> np.ndarray:
    """Partition ``X`` into groups of k records (the last of k..2k−1).

    Parameters
    ----------
    X : ndarray of shape (n_records, n_attributes)
        Standardized quasi-identifiers.
    k : int
        Group size, ``2 <= k <= n_records``.
    first : {"mdav", "cbfs", "tfrp"}
        How the first record of each group is chosen.
    growth : {"nn", "nc"}
        How the group grows from its first record.
    state : TaskState, optional
        Progress once per group; cancellation.

    Returns
    -------
    labels : ndarray of shape (n_records,), int64
        Group ids 0..n_groups−1 in the order the groups were formed.
    """
    if first not in FIRST_RECORD or growth not in GROWTH:
        raise ValueError(f"unknown heuristic {first}-{growth}")
    check_group_size(len(X), k)
    if COMPILED:
        return fixed_size_indexed(X, k=k, first=first, growth=growth, state=state or TaskState(),
                                  name=f"{first.upper()}-{growth.upper()}")
    return fixed_size_reference(X, k=k, first=first, growth=growth, state=state)


def fixed_size_reference(X: np.ndarray, *, k: int, first: str = "mdav", growth: str = "nn",
                         state: TaskState | None = None) -> np.ndarray:
    """:func:`fixed_size` by full passes over a :class:`RecordPool`: the reference.

    O(n²·d/k) time. The compiled spatial index gives the same labels on every input
    (the tests compare the two); this path runs where numba is switched off.
    """
    if first not in FIRST_RECORD or growth not in GROWTH:
        raise ValueError(f"unknown heuristic {first}-{growth}")
    check_group_size(len(X), k)
    builder = _Builder(X, k, growth, state or TaskState(), f"{first.upper()}-{growth.upper()}")
    pool = builder.pool
    if first == "mdav":
        while pool.count >= 3 * k:
            r = pool.farthest(pool.centroid())
            r_point = pool.point(r)
            s_record = builder.grow_and_pick_next(r, r_point)
            builder.grow_and_take(pool.position(s_record))
        if pool.count >= 2 * k:
            builder.grow_and_take(pool.farthest(pool.centroid()))
    elif first == "cbfs":
        while pool.count >= 2 * k:
            builder.grow_and_take(pool.farthest(pool.centroid()))
    else:
        references = (X.max(axis=0), X.min(axis=0))
        turn = 0
        while pool.count >= 2 * k:
            builder.grow_and_take(pool.farthest(references[turn % 2]))
            turn += 1
    builder.take_rest()
    return builder.labels


class _Builder:
    """Grows groups from seed records of a :class:`RecordPool` and labels them."""

    def __init__(self, X, k, growth, state, name):
        self.pool = RecordPool(X)
        self.k, self.growth, self.state, self.name = k, growth, state, name
        self.n = len(X)
        self.labels = np.full(self.n, -1, dtype=np.int64)
        self.groups = 0

    def grow(self, seed: int, approximate=None) -> np.ndarray:
        """Buffer positions of the group grown from ``seed`` (not yet removed)."""
        seed_point = self.pool.point(seed)
        if self.growth == "nn":
            return self.pool.nearest(seed_point, self.k, include=seed,
                                     approximate=approximate)
        return self._grow_nc(seed, seed_point, approximate)

    def _grow_nc(self, seed, seed_point, approximate) -> np.ndarray:
        """Nearest-to-centroid growth, exact.

        The next member is looked for among the seed's M nearest records first. If the
        best of them lies at distance δ from the group's centroid c, and every other
        record is at least R_M from the seed (the M-th nearest distance), the triangle
        inequality puts every other record at least R_M − |c − seed| from c. When δ is
        strictly below that bound the answer is exact; otherwise a full pass decides.
        """
        pool, k = self.pool, self.k
        m = _NC_CANDIDATES_PER_K * k
        if pool.count <= m + 1:
            near, radius = pool.nearest(seed_point, pool.count), np.inf
        else:
            near, near_sq = pool.nearest_sorted(seed_point, m, include=seed,
                                                approximate=approximate)
            radius = float(np.sqrt(near_sq[-1]))
        members = [seed]
        total = seed_point.copy()
        in_group = np.zeros(len(near), dtype=bool)
        in_group[near == seed] = True
        candidate_points = pool.rows(near)
        while len(members) < k:
            centroid = total / len(members)
            d = squared_distances(candidate_points, centroid)
            d[in_group] = np.inf
            # Among equal distances the record first in the input wins: compare positions.
            best = np.flatnonzero(d == d.min())
            choice = int(best[np.argmin(near[best])])
            delta = float(np.sqrt(d[choice]))
            shift = float(np.sqrt(((centroid - seed_point) ** 2).sum()))
            if delta + 1e-9 * (1.0 + delta + shift) < radius - shift:
                position = int(near[choice])
                in_group[choice] = True
            else:
                position = int(pool.nearest(centroid, 1, exclude=np.array(members))[0])
                hit = np.flatnonzero(near == position)
                if hit.size:
                    in_group[hit[0]] = True
            members.append(position)
            total += pool.point(position)
        return np.sort(np.array(members))

    def take(self, positions: np.ndarray) -> None:
        self.labels[self.pool.remove(positions)] = self.groups
        self.groups += 1
        self.state.step((self.n - self.pool.count) / self.n,
                        f"{self.name}: {self.groups} groups formed")

    def grow_and_take(self, seed: int) -> None:
        self.take(self.grow(seed))

    def grow_and_pick_next(self, r: int, r_point: np.ndarray) -> int:
        """MDAV round: grow r's group, pick s (farthest from r in T minus the group), take.

        Returns s as an original record index (positions change when the group is taken).
        """
        from_r = self.pool.approximate_distances(r_point)
        members = self.grow(r, approximate=from_r if self.growth == "nn" else None)
        from_r[members] = -np.inf
        s = self.pool.farthest(r_point, approximate=from_r)
        s_record = self.pool.record(s)
        self.take(members)
        return s_record

    def take_rest(self) -> None:
        if self.pool.count:
            self.labels[self.pool.remaining()] = self.groups
            self.groups += 1
            self.state.step(1.0, f"{self.name}: {self.groups} groups formed")

"""GSMS's selection without scanning every candidate.

GSMS selects the candidate whose mean is farthest from the mean of T
(:mod:`core.methods.gsms`); the reference scans all m candidates at every selection.
The mean of T drifts slowly, and a candidate's mean changes only when it is rebuilt, so
:class:`FarthestCandidate` keeps the candidates sorted by the distance κ of their mean
to a snapshot c₀ of T's mean. With c the current mean and δ = |c − c₀|, the triangle
inequality gives |mean(p) − c| ≤ κ(p) + δ: scanning in decreasing κ can stop as soon as
(κ + δ)² is below the lowest score that could still be selected. Candidates rebuilt
since the snapshot are scanned in full (they are few); the snapshot is taken again once
the scans since the last one have examined as many candidates as it sorted.

Exactness. Every candidate that is scanned gets the reference's score, computed by the
very same numpy expression (the score of a row does not depend on the other rows
computed with it), and the reference's rule then picks among them: the largest score,
and among the scores within its rounding bound of it, the owner first in the input.
A candidate is left unscanned only when its upper bound, widened by 1e−9 relative (the
rounding of κ, δ and the score is about 1e−15), is below a lower bound of that rule's
threshold. So the owner selected is the reference's.
"""

from __future__ import annotations

import numpy as np

__all__ = ["FarthestCandidate"]

_MARGIN = 1e-9
_FIRST_CHUNK = 32
_RESORT = 4  # scanned candidates per sorted one before the next snapshot


class FarthestCandidate:
    """The selection rule of GSMS over candidates whose sums change one by one.

    Parameters
    ----------
    sums : ndarray of shape (n_records, n_attributes)
        Candidate sums, owned and updated by the caller (rows of rebuilt candidates are
        reported with :meth:`changed`).
    alive : ndarray of shape (n_records,), bool
        Shared with the caller: which owners are still in T.
    k : int
    slack : float
        The reference's bound on the rounding of one coordinate of mean(p) − mean(T).
    """

    def __init__(self, sums: np.ndarray, alive: np.ndarray, k: int, slack):
        self.sums, self.alive, self.k, self.slack = sums, alive, k, slack
        n = len(sums)
        self.sorted_key = np.zeros(n, dtype=bool)  # key in the sorted list is current
        self.in_fresh = np.zeros(n, dtype=bool)
        self.fresh_owner = np.empty(0, dtype=np.int64)
        self.fresh_negated = np.empty(0)  # −κ, ascending
        self.anchor = None

    def changed(self, rows: np.ndarray) -> None:
        """The candidates of ``rows`` were rebuilt: their κ is measured again and they
        join a short list of their own, kept sorted, until the next snapshot (an owner
        rebuilt twice is listed twice; the older entry only costs a second score)."""
        self.sorted_key[rows] = False
        self.in_fresh[rows] = True
        if self.anchor is None:
            return
        diff = self.sums[rows] * (1.0 / self.k) - self.anchor
        negated = -np.sqrt(np.einsum("ij,ij->i", diff, diff))
        order = np.argsort(negated)  # equal insertion points keep the given order
        negated, rows = negated[order], rows[order]
        at = np.searchsorted(self.fresh_negated, negated)
        self.fresh_negated = np.insert(self.fresh_negated, at, negated)
        self.fresh_owner = np.insert(self.fresh_owner, at, rows)

    def scores(self, owners: np.ndarray, total: np.ndarray, m: int) -> np.ndarray:
        """The reference's scores |mean(p) − mean(T)|², the same expression."""
        diff = self.sums[owners] * (1.0 / self.k) - total * (1.0 / m)
        return np.einsum("ij,ij->i", diff, diff)

    def best(self, total: np.ndarray, m: int) -> int:
        """The owner the reference selects, T being ``m`` records summing to ``total``."""
        centre = total * (1.0 / m)
        if self.anchor is None or self.work > self.budget:
            self._sort(centre)
        gap = centre - self.anchor
        drift = float(np.sqrt(np.dot(gap, gap)))
        self.work += len(self.fresh_owner) // 16 + 1  # the insertions copy the list
        owners, scores = [], []
        best = self._scan(self.fresh_owner, -self.fresh_negated, 0, self.in_fresh, drift,
                          total, m, owners, scores, -np.inf)
        self._skip_head()
        self._scan(self.order, self.keys, self.head, self.sorted_key, drift, total, m,
                   owners, scores, best)
        owners, scores = np.concatenate(owners), np.concatenate(scores)
        best = scores.max()
        # The reference's rule: scores equal up to rounding tie, the first owner wins.
        tied = scores >= best - (2.0 * np.sqrt(best) * self.slack + self.slack ** 2)
        return int(owners[tied].min())

    def _scan(self, order, keys, position, current, drift, total, m, owners, scores, best):
        """Score ``order[position:]`` (κ decreasing; entries whose ``current`` is false
        are out of date) until no candidate left can reach the threshold; append to
        ``owners``/``scores``, return the best score so far."""
        chunk = _FIRST_CHUNK
        while position < len(order):
            floor = self._floor(best)
            if ((keys[position] + drift) * (1.0 + _MARGIN)) ** 2 < floor:
                break  # no candidate from here on can reach the threshold
            part = order[position:position + chunk]
            part = part[self.alive[part] & current[part]]
            if part.size:
                owners.append(part)
                scores.append(self.scores(part, total, m))
                best = max(best, scores[-1].max())
            self.work += chunk
            position += chunk
            chunk *= 2
        return best

    def _floor(self, best) -> float:
        """A lower bound of the tie threshold for any best score at least ``best``;
        −inf where that threshold could be 0 or less (it grows with best above it)."""
        if best == -np.inf:
            return -np.inf
        slack = float(self.slack)
        best = float(best)
        floor = (best * (1.0 - _MARGIN) - (2.0 * np.sqrt(best * (1.0 + _MARGIN)) * slack
                 + slack * slack) * (1.0 + _MARGIN) - 1e-300)
        return floor if floor > 0 else -np.inf

    def _sort(self, centre: np.ndarray) -> None:
        """Take a new snapshot: every live candidate's κ, sorted largest first."""
        owners = np.flatnonzero(self.alive)
        diff = self.sums[owners] * (1.0 / self.k) - centre
        keys = np.sqrt(np.einsum("ij,ij->i", diff, diff))
        order = np.argsort(-keys, kind="stable")
        self.order, self.keys = owners[order], keys[order]
        self.sorted_key[:] = False
        self.sorted_key[owners] = True
        self.in_fresh[self.fresh_owner] = False
        self.fresh_owner = np.empty(0, dtype=np.int64)
        self.fresh_negated = np.empty(0)
        self.anchor = centre.copy()
        self.head = 0
        self.work, self.budget = 0, _RESORT * len(owners)

    def _skip_head(self) -> None:
        """Drop the sorted list's leading entries that are assigned or rebuilt."""
        head = self.head
        while head < len(self.order):
            part = self.order[head:head + 256]
            usable = self.alive[part] & self.sorted_key[part]
            if usable.any():
                head += int(np.argmax(usable))
                break
            head += len(part)
        self.head = head

"""V-MDAV: multivariate microaggregation with variable group size.

Solanas & Martínez-Ballesté (2006), "V-MDAV: a multivariate microaggregation with
variable group size", COMPSTAT 2006 (Algorithm V-MDAV and its group-extension step).
The original paper was not available to us. This follows the description that later
work restates (Zhang & Zheng, "Research on V-MDAV algorithm based on grey relational
analysis", Application Research of Computers, 2019, Sections 1.1 and 2.1, which
restate V-MDAV step by step before replacing its distance), with the end game the
brief of this project gives for the original (fewer than k left: each joins its
closest group); a public Python implementation of V-MDAV (``VMDAV.V_MDAV``, loop
while more than k−1 records remain, leftovers to the closest group centroid) does the
same:

1. Compute the centroid c of the whole data set (once).
2. While at least k records are unassigned:
   a. e is the unassigned record farthest from c; a new group holds e and its k−1
      nearest unassigned records.
   b. Extend the group: e_min is the unassigned record closest to any record of the
      group, d_in that distance; d_out is the distance from e_min to its nearest
      *other* unassigned record. While the group has fewer than 2k−1 records and
      d_in < γ·d_out, add e_min to the group and repeat.
3. The fewer than k records left are each added to the group whose centroid is
   nearest (centroids taken before any of them is added).

γ ("gain factor") trades homogeneity for adaptivity: γ = 0 never extends, so every
group but those receiving leftovers has exactly k records; large γ extends whenever
e_min is closer to the group than to the rest. As we understand the paper, its
authors recommend γ ≈ 0.2 for scattered data and γ ≈ 1.1 for clustered data.

Group sizes: every group has at least k records. A group has at most 2k−1 records
when it is formed; only step 3 can push a group beyond 2k−1, and since fewer than k
records are left over, the excess over 2k−1 summed over all groups is at most k−1.

Alternative not taken: Zhang & Zheng stop the loop when fewer than 2k records remain
and make them one last group if there are at least k; that avoids groups above 2k−1
but is not how the original's end game is described to us.

Choices where the description is silent: Euclidean distances (on the standardized
attributes); the centroid is *not* recomputed as records are assigned (unlike MDAV);
the comparison d_in < γ·d_out is strict, so a duplicate of a group record (d_in = 0)
joins only when γ > 0 and e_min has no equally close duplicate outside; if e_min is
the last unassigned record, d_out = +∞ and it joins whenever γ > 0. Ties go to the
record that comes first in the input (farthest record, nearest neighbours, e_min), and
a leftover equidistant from two centroids joins the group formed first. For the
farthest record, e_min and the leftovers, squared distances within their rounding
error (relative 4·(d+2)·eps) count as equal, so distances equal in exact arithmetic
tie even when the additions round differently. So does d_in against γ·d_out: d_in² is
raised by that relative error before the comparison, so that an exact tie (d_in = 1,
d_out = 5, γ = 0.2) never joins, whichever way γ·d_out happens to round.

Distances have one floating-point form: ``Σ_j (x_j − p_j)²`` summed over the columns
in order (:func:`core.methods.vmdav_kernel.squared_distances`), so that the compiled path
computes the very same numbers.

Two paths give the same labels on every input. The reference (:func:`vmdav_reference`)
makes k + 2 passes over the unassigned records per group. The compiled path
(:mod:`core.methods.vmdav_kernel`, used when :data:`core.compiled.COMPILED`) sorts the
records by their distance to the fixed centroid once, makes one pass per group for e's
distances and answers the extension step from them with triangle-inequality bounds.
Memory is O(n·d) in both; time is O(n²·d), like MDAV.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from core.compiled import COMPILED
from core.errors import MicroaggError
from core.data.prepare import check_group_size
from core.methods.vmdav_kernel import fits_compiled, squared_distances, vmdav_compiled
from core.progress import TaskState

__all__ = ["vmdav", "vmdav_reference"]

_EPS = np.finfo(np.float64).eps


def vmdav(X: np.ndarray, *, k: int, gamma: float = 0.2,
          state: TaskState | None = None) -> np.ndarray:
    """Partition the records of ``X`` into groups of k to 2k−1 records by V-MDAV.

    Parameters
    ----------
    X : ndarray of shape (n_records, n_attributes)
        Standardized quasi-identifiers (finite). Not modified.
    k : int
        Minimum group size, ``1 <= k <= n_records``.
    gamma : float, default 0.2
        Gain factor γ >= 0 of the extension rule d_in < γ·d_out. 0 gives fixed-size
        groups of k.
    state : TaskState, optional
        Receives progress once per group and may cancel the run.

    Returns
    -------
    labels : ndarray of shape (n_records,), int64
        Group id of every record, 0 .. n_groups−1 in the order the groups were formed.
        Every group has at least k records; see the module docstring for the upper
        bound.

    Raises
    ------
    MicroaggError
        ``gamma`` is negative or not finite, or there are fewer than k records.

    References
    ----------
    A. Solanas, A. Martínez-Ballesté, "V-MDAV: a multivariate microaggregation with
    variable group size", COMPSTAT 2006 (Algorithm V-MDAV, group extension step).

    Notes
    -----
    Runs the compiled path when :data:`core.compiled.COMPILED` is true and the values
    fit it (:func:`core.methods.vmdav_kernel.fits_compiled`), else
    :func:`vmdav_reference`; both give the same labels. ``gamma`` is used as a Python
    float.

    Examples
    --------
    >>> X = np.array([[0.0], [0.1], [0.2], [5.0], [5.1], [9.0], [9.1]])
    >>> vmdav(X, k=2, gamma=1.1).tolist()
    [1, 1, 1, 2, 2, 0, 0]
    >>> vmdav(X, k=2, gamma=0.0).tolist()  # fixed size: {0.2, 5.0}, leftover 5.1 joins it
    [1, 1, 2, 2, 2, 0, 0]
    """
    gamma = _check_gamma(gamma)
    check_group_size(len(X), k)
    X = np.ascontiguousarray(X, dtype=np.float64)
    state = state or TaskState()
    if COMPILED and fits_compiled(X):
        labels, group = vmdav_compiled(X, k=k, gamma=gamma, state=state)
    else:
        labels, group = _form_groups(X, k, gamma, state)
    return _assign_leftovers(X, labels, group, state)


def vmdav_reference(X: np.ndarray, *, k: int, gamma: float = 0.2,
                    state: TaskState | None = None) -> np.ndarray:
    """:func:`vmdav` by the plain numpy reference (one pass over the records per search).

    The compiled path gives the same labels on every input; tests compare the two.
    """
    gamma = _check_gamma(gamma)
    check_group_size(len(X), k)
    X = np.ascontiguousarray(X, dtype=np.float64)
    state = state or TaskState()
    return _assign_leftovers(X, *_form_groups(X, k, gamma, state), state)


def _check_gamma(gamma) -> float:
    if isinstance(gamma, bool) or not (
            isinstance(gamma, numbers.Real) and math.isfinite(gamma) and gamma >= 0):
        raise MicroaggError(f"Parameter 'gamma' must be a finite number >= 0; got {gamma!r}.")
    return float(gamma)


def _form_groups(X: np.ndarray, k: int, gamma: float, state: TaskState):
    """Steps 1–2: the groups, leftovers unassigned (−1); returns (labels, n_groups)."""
    n = len(X)
    labels = np.full(n, -1, dtype=np.int64)
    pool = _Unassigned(X, X.mean(axis=0))
    largest = 2 * k - 1
    group = 0

    def take(positions: np.ndarray) -> None:
        labels[pool.remove(positions)] = group

    while pool.count >= k:
        e = pool.farthest_from_centre()
        take(pool.nearest(e, k))
        size = k
        if gamma > 0 and pool.count:
            to_group = np.full(len(pool.index), np.inf)
            for record in np.flatnonzero(labels == group):
                np.minimum(to_group, pool.distances(X[record]), out=to_group)
            while size < largest and pool.count:
                e_min = _first_minimum(to_group, X.shape[1])
                # d_in within rounding of γ·d_out is a tie, which does not join
                d_in = math.sqrt(to_group[e_min] * (1.0 + 4.0 * (X.shape[1] + 2) * _EPS))
                from_e_min = pool.distances(X[pool.index[e_min]])
                from_e_min[e_min] = np.inf
                d_out = math.sqrt(from_e_min.min())
                if not d_in < gamma * d_out:
                    break
                point = X[pool.index[e_min]]
                take(np.array([e_min]))
                size += 1
                to_group[e_min] = np.inf
                np.minimum(to_group, pool.distances(point), out=to_group)
        group += 1
        pool.compact()
        state.step((n - pool.count) / n, f"V-MDAV: {group} groups formed")
    return labels, group


def _assign_leftovers(X: np.ndarray, labels: np.ndarray, group: int,
                      state: TaskState) -> np.ndarray:
    """Step 3: the fewer than k unassigned records join the nearest centroid."""
    rest = np.flatnonzero(labels < 0)
    if rest.size:
        formed = labels >= 0
        centroids = np.zeros((group, X.shape[1]))
        np.add.at(centroids, labels[formed], X[formed])
        centroids /= np.bincount(labels[formed], minlength=group)[:, None]
        for record in rest:
            diff = centroids - X[record]
            labels[record] = _first_minimum(np.einsum("ij,ij->i", diff, diff), X.shape[1])
        state.step(1.0, f"V-MDAV: {group} groups formed")
    return labels


def _first_minimum(squared: np.ndarray, d: int) -> int:
    """Index of the first value equal to the minimum of ``squared`` up to rounding.

    A squared distance summed over d attributes carries a relative rounding error of
    about d·eps, and its value depends on the order of the additions; distances equal
    in exact arithmetic must still count as ties (and go to the first in input order).
    """
    best = squared.min()
    return int(np.argmax(squared <= best * (1.0 + 4.0 * (d + 2) * _EPS)))


class _Unassigned:
    """Unassigned records in input order; assigned rows are flagged, then compacted."""

    def __init__(self, X: np.ndarray, centre: np.ndarray):
        self.rows = X
        self.index = np.arange(len(X))
        self.alive = np.ones(len(X), dtype=bool)
        self.to_centre = squared_distances(X, centre)
        self.count = len(X)

    def distances(self, point: np.ndarray) -> np.ndarray:
        """Exact squared distance from ``point`` to every buffer row; +inf if assigned."""
        out = squared_distances(self.rows, point)
        out[~self.alive] = np.inf
        return out

    def farthest_from_centre(self) -> int:
        """Buffer position of the first unassigned row farthest from c, up to rounding."""
        values = np.where(self.alive, self.to_centre, -np.inf)
        best = values.max()
        return int(np.argmax(values >= best * (1.0 - 4.0 * (self.rows.shape[1] + 2) * _EPS)))

    def nearest(self, seed: int, m: int) -> np.ndarray:
        """Buffer positions of ``seed`` and its m−1 nearest unassigned rows."""
        d2 = self.distances(self.rows[seed])
        d2[seed] = -1.0  # the seed belongs to its own group even if it has duplicates
        kth = np.partition(d2, m - 1)[m - 1]
        candidates = np.flatnonzero(d2 <= kth)
        return candidates[np.argsort(d2[candidates], kind="stable")[:m]]

    def remove(self, positions: np.ndarray) -> np.ndarray:
        """Flag buffer ``positions`` as assigned; return their record indices."""
        self.alive[positions] = False
        self.count -= len(positions)
        return self.index[positions]

    def compact(self) -> None:
        """Drop assigned rows once at most half the buffer is alive (positions change)."""
        if self.count * 2 <= len(self.index):
            keep = self.alive
            self.rows = self.rows[keep]
            self.index = self.index[keep]
            self.to_centre = self.to_centre[keep]
            self.alive = np.ones(self.count, dtype=bool)

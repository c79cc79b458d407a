"""Compiled TFRP2 / IGD passes: the refinement of :mod:`core.methods.refine` in numba.

The passes are those of :mod:`core.methods.refine` (Khomnotai, Lin, Peng & Santra 2018,
Section 4, Figures 1-4) with every choice it documents: Decompose moves a group's records
in one batch to the groups nearest to each record, Shrink moves the best record while a
move helps and the group keeps more than k, SplitLargeGroups keeps a split only if the SSE
drops, and a change counts only if it lowers the SSE by more than the tolerance.

Arithmetic, fixed so that every path computes the same numbers:

* distances and dot products are sums over the attributes in order (j = 0, 1, ...);
* a group's Σx and Σ|x|² grow by the sum (in member order) of the records added;
* the total SSE sums the live groups in id order;
* "nearest group" is the smallest such distance to ``Σx / n``; ties go to the lower id.

The nearest-group search is exact: a KD-tree over the group centroids whose boxes grow
(never shrink) when a centroid moves, so a box's distance stays a lower bound of every
distance inside it, and a subtree is skipped only when that bound is *greater* than the
best distance found (an equal distance with a lower id is still looked at). Groups made
after the tree was built are compared directly. The tree is rebuilt after many changes.

The passes run over a range of groups and stop after a budget of groups, so the caller
returns to Python (progress, cancel) every fraction of a second.
"""

from __future__ import annotations

import numpy as np

from core.compiled import COMPILED, kernel

__all__ = ["Arrays", "decompose_chunk", "shrink_chunk", "split_chunk", "final_labels"]

_LEAF = 8
# meta[...] slots
N_GROUPS, N_LIVE, N_NODES, N_EXTRAS, UPDATES, USE_TREE = range(6)
# per-record and per-group integer columns
NXT, PRV, GROUP = range(3)
HEAD, TAIL, LEAF, IN_TREE, IN_EXTRA = range(5)
LEFT, RIGHT, START, END, PARENT = range(5)


def _plain(function):
    return function


_jit = kernel if COMPILED else _plain


class Arrays:
    """The partition's state in flat arrays, shared by the compiled passes.

    Capacity for groups grows in Python (:meth:`reserve`) before a split pass.
    """

    def __init__(self, X: np.ndarray, labels: np.ndarray, *, use_tree: bool = True):
        X = np.asarray(X, dtype=np.float64)
        self.X = np.ascontiguousarray(X - X.mean(axis=0))
        n, d = self.X.shape
        n_groups = int(labels.max()) + 1
        self.sq = np.empty(n)
        self.rint = np.full((n, 3), -1, dtype=np.int64)
        self.hint = np.full(n, -1, dtype=np.int64)
        self.meta = np.zeros(8, dtype=np.int64)
        self.meta[USE_TREE] = int(use_tree)
        self._allocate(n_groups + 16, d)
        _init(self.X, labels.astype(np.int64), n_groups, self.sq, self.rint, self.gint,
              self.count, self.sumsq, self.sums, self.meta)
        self.tolerance = 1e-12 * max(float(self.sq.sum()), 1e-300)

    def _allocate(self, capacity: int, d: int) -> None:
        self.count = np.zeros(capacity)
        self.sumsq = np.zeros(capacity)
        self.sums = np.zeros((capacity, d))
        self.gint = np.full((capacity, 5), -1, dtype=np.int64)
        self.gint[:, IN_TREE] = 0
        self.gint[:, IN_EXTRA] = 0
        self.perm = np.zeros(capacity, dtype=np.int64)
        self.extras = np.zeros(capacity, dtype=np.int64)
        self.cent = np.zeros((capacity, d))
        self.nodes = np.full((2 * capacity + 1, 5), -1, dtype=np.int64)
        self.lo = np.zeros((2 * capacity + 1, d))
        self.hi = np.zeros((2 * capacity + 1, d))
        self.meta[N_NODES] = 0  # rebuilt at the next search
        self.meta[UPDATES] = 1 << 40

    def reserve(self, extra: int) -> None:
        """Room for ``extra`` more groups (a split pass makes at most n/k)."""
        need = int(self.meta[N_GROUPS]) + extra + 1
        if need <= len(self.count):
            return
        old = (self.count, self.sumsq, self.sums, self.gint)
        self._allocate(max(need, 2 * len(self.count)), self.X.shape[1])
        used = int(self.meta[N_GROUPS])
        for new, before in zip((self.count, self.sumsq, self.sums, self.gint), old):
            new[:used] = before[:used]
        self.gint[:, IN_TREE] = 0
        self.gint[:, IN_EXTRA] = 0
        self.meta[N_EXTRAS] = 0

    def args(self) -> tuple:
        return (self.X, self.sq, self.rint, self.gint, self.count, self.sumsq, self.sums,
                self.meta, self.nodes, self.lo, self.hi, self.perm, self.extras, self.cent,
                self.hint)


def _init(X, labels, n_groups, sq, rint, gint, count, sumsq, sums, meta):
    n, d = X.shape
    for i in range(n):
        s = 0.0
        for j in range(d):
            s += X[i, j] * X[i, j]
        sq[i] = s
    for i in range(n):
        g = labels[i]
        if count[g] == 0:
            meta[N_LIVE] += 1
        count[g] += 1.0
        for j in range(d):
            sums[g, j] += X[i, j]
        sumsq[g] += sq[i]
        _append(rint, gint, g, i)
    meta[N_GROUPS] = n_groups


_init = _jit(_init)


@_jit
def _append(rint, gint, g, i):
    rint[i, GROUP] = g
    rint[i, NXT] = -1
    rint[i, PRV] = gint[g, TAIL]
    if gint[g, TAIL] >= 0:
        rint[gint[g, TAIL], NXT] = i
    else:
        gint[g, HEAD] = i
    gint[g, TAIL] = i


@_jit
def _unlink(rint, gint, g, i):
    before, after = rint[i, PRV], rint[i, NXT]
    if before >= 0:
        rint[before, NXT] = after
    else:
        gint[g, HEAD] = after
    if after >= 0:
        rint[after, PRV] = before
    else:
        gint[g, TAIL] = before
    rint[i, GROUP] = -1


@_jit
def _members(rint, gint, g, out):
    m = 0
    i = gint[g, HEAD]
    while i >= 0:
        out[m] = i
        m += 1
        i = rint[i, NXT]
    return m


@_jit
def _dot(v):
    s = 0.0
    for j in range(v.shape[0]):
        s += v[j] * v[j]
    return s


@_jit
def _group_sse(count, sumsq, sums, g):
    return sumsq[g] - _dot(sums[g]) / count[g]


@_jit
def _total_sse(count, sumsq, sums, n_groups):
    total = 0.0
    for g in range(n_groups):
        if count[g] > 0:
            total += sumsq[g] - _dot(sums[g]) / count[g]
    return total


@_jit
def _distance(X, i, centre):
    s = 0.0
    for j in range(X.shape[1]):
        t = X[i, j] - centre[j]
        s += t * t
    return s


@_jit
def _to_group(X, i, sums, count, g):
    s = 0.0
    c = count[g]
    for j in range(X.shape[1]):
        t = X[i, j] - sums[g, j] / c
        s += t * t
    return s

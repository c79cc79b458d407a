"""GSMS's nearest neighbours: the reference's answers from a compiled k-d tree.

A GSMS candidate is a record and its k−1 nearest other records still in T, ties to the
record first in the input (:mod:`core.methods.gsms`). The reference
(:mod:`core.methods.gsms_reference`) asks a :class:`scipy.spatial.cKDTree` per rebuilt
candidate, which costs about half a millisecond per query on 10-d data and repeats
queries when assigned records crowd the answer. Two providers give its answers:

:class:`TreeNeighbours` (numpy path)
    The reference's own queries, on a cKDTree rebuilt whenever T has shrunk by a
    quarter (the answers do not depend on which assigned records the tree still holds).
:class:`ListedNeighbours` (compiled path)
    A k-d tree over all records (:func:`core.methods.spatial_index.build_tree`) whose
    nodes count their unassigned records, so assigned ones cost nothing, and a list of
    every record's ``listed`` nearest, made once. A rebuilt candidate takes the first
    k−1 unassigned records of its owner's list when the list proves them nearest: the
    next unassigned record of the list, or every record beyond the list, is farther by
    a margin. Otherwise the list is made again from the tree. The first lists are made
    on a thread per core (up to four, :func:`core.threads.threads_for`). A leaf keeps a
    nominal attribute's indicator block as one column of category codes and a node's
    bound takes the block as one attribute (:mod:`core.methods.block_sums`): the same
    distances, summed in the same order, read in a few values (the census table of
    ``bench_estimate.py --nominal`` at 100,000 records: the first lists 2.6 s against
    7.3 s, the run 15.7 s against 30.0 s, the same labels).

Exactness. cKDTree sums the squared differences in its own order (unrolled by four in
current scipy) and may return square roots; this module sums the columns in order. The
two agree to about 1e−15 relative, so a candidate chosen with a margin of 1e−9 between
its (k−1)-th nearest and the next record is the reference's candidate. When the margin
is not there (ties, as on integer grids or duplicated rows), the records within it are
measured by cKDTree itself (a small tree of just those records: a distance depends only
on the two points) and ordered as the reference orders them.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
from scipy.spatial import cKDTree

from core.compiled import kernel
from core.methods.block_sums import (block_layout, block_terms, box_bound, leaf_distances,
                                     query_tables)
from core.methods.spatial_index import build_tree, leaf_blocks
from core.threads import threads_for

__all__ = ["ListedNeighbours", "TreeNeighbours"]

_LEAF_SIZE = 128
_LISTED = 3  # records listed per k − 1 a candidate needs
_MARGIN = 1e-9
_BUDGET = 6_000_000  # rows measured per kernel call, about 0.03 s
_THREADS = 4  # at most, one per processor (core.threads.threads_for)


class TreeNeighbours:
    """The reference's cKDTree queries (see :mod:`core.methods.gsms_reference`)."""

    def __init__(self, X: np.ndarray, alive: np.ndarray, state):
        self.X, self.alive, self.state = X, alive, state
        self.m = int(alive.sum())
        self._build()

    def _build(self) -> None:
        self.tree_index = np.flatnonzero(self.alive)
        self.tree = cKDTree(self.X[self.tree_index])

    def remove(self, records: np.ndarray) -> None:
        self.m -= len(records)
        if 4 * self.m <= 3 * len(self.tree_index):
            self._build()

    def nearest(self, rows: np.ndarray, need: int) -> np.ndarray:
        """The ``need`` nearest live records other than each row (any order)."""
        if rows.size <= 200:
            return self._nearest(rows, need)
        parts = []
        for begin in range(0, rows.size, 200):  # the first candidates: report progress
            parts.append(self._nearest(rows[begin:begin + 200], need))
            self.state.step(0.0, f"GSMS: nearest records of {begin + len(parts[-1]):,}")
        return np.concatenate(parts)

    def _nearest(self, rows: np.ndarray, need: int) -> np.ndarray:
        out = np.empty((rows.size, need), dtype=np.int64)
        size = len(self.tree_index)
        q = min(size, need + 1 if self.m == len(self.alive) else 2 * need + 2)
        pending = np.arange(rows.size)
        while pending.size:
            distance, position = self.tree.query(self.X[rows[pending]], k=q)
            distance = distance.reshape(len(pending), q)
            position = position.reshape(len(pending), q)
            record = self.tree_index[position]
            usable = self.alive[record] & (record != rows[pending, None])
            keyed = np.where(usable, distance, np.inf)
            order = np.lexsort((record, keyed), axis=-1)[:, :need]
            chosen = np.take_along_axis(record, order, axis=1)
            boundary = np.take_along_axis(keyed, order[:, -1:], axis=1)[:, 0]
            done = boundary < distance[:, -1] if q < size else np.isfinite(boundary)
            out[pending[done]] = chosen[done]
            pending = pending[~done]
            if q == size and pending.size:
                raise AssertionError("fewer live records than a candidate needs")
            q = min(size, 2 * q)
            self.state.check()
        return out


class ListedNeighbours:
    """Candidates from per-record lists of nearest records and a k-d tree with deletions.

    Parameters
    ----------
    X : ndarray of shape (n_records, n_attributes), C-contiguous float64
    alive : ndarray of shape (n_records,), bool
        Shared with the caller: which records are still in T.
    need : int
        k − 1, the neighbours a candidate takes (at least 1).
    state : TaskState
        Progress while the lists are made, and Cancel.
    """

    def __init__(self, X: np.ndarray, alive: np.ndarray, need: int, state):
        self.X, self.alive, self.need = X, alive, need
        n, d = X.shape
        perm, start, stop, levels = build_tree(
            X, _LEAF_SIZE, lambda: state.step(0.0, "GSMS: building a k-d tree"))
        P = np.ascontiguousarray(X[perm])
        self.tree = _Tree(P, perm, start, stop, levels, block_layout(P))
        state.step(0.0, "GSMS: k-d tree built")
        self.listed = min(max(_LISTED * need, 8), n - 1)
        self.list_id = np.empty((n, self.listed), dtype=np.int64)
        self.list_d2 = np.empty((n, self.listed))
        self.list_len = np.zeros(n, dtype=np.int64)
        self.scratch = _Scratch(n, self.listed, self.tree)
        self._fill(perm, state)

    def _fill(self, order: np.ndarray, state) -> None:
        """Every record's list, in tree order (neighbouring queries), on a thread per core.

        The kernel releases the GIL; each thread fills the lists of its own records and
        returns every ~0.1 s, when this thread reports progress and honours Cancel.
        """
        n = len(order)
        parts = np.array_split(order, min(threads_for(_THREADS), max(n // 1000, 1)))
        scratches = [self.scratch] + [_Scratch(n, self.listed, self.tree)
                                      for _ in parts[1:]]
        done = [0] * len(parts)

        def work(i):
            return _fill_lists(*self.tree.arrays, self.X, parts[i], done[i], self.listed,
                               self.list_id, self.list_d2, self.list_len,
                               *scratches[i].arrays, _BUDGET)

        with ThreadPoolExecutor(len(parts)) as pool:
            while any(done[i] < len(parts[i]) for i in range(len(parts))):
                busy = [i for i in range(len(parts)) if done[i] < len(parts[i])]
                for i, result in zip(busy, pool.map(work, busy)):
                    done[i] = result
                state.step(0.0, f"GSMS: nearest records of {sum(done):,} of {n:,}")

    def remove(self, records: np.ndarray) -> None:
        _remove(np.ascontiguousarray(records, dtype=np.int64), self.tree.position,
                self.tree.leaf_of, self.tree.count, self.tree.live)

    def nearest(self, rows: np.ndarray, need: int) -> np.ndarray:
        """The ``need`` nearest live records other than each row (any order)."""
        members = np.empty((rows.size, need), dtype=np.int64)
        tied = np.zeros(rows.size, dtype=np.int64)
        _candidates(np.ascontiguousarray(rows, dtype=np.int64), need, _MARGIN, members,
                    tied, self.alive, self.list_id, self.list_d2, self.list_len,
                    *self.tree.arrays, self.X, *self.scratch.arrays)
        for position in np.flatnonzero(tied):
            members[position] = self._as_the_reference(int(rows[position]), need)
        return members

    def _as_the_reference(self, row: int, need: int) -> np.ndarray:
        """Records within the margin of the boundary, ordered by cKDTree's distances."""
        ids, d2 = self.list_id[row, :self.list_len[row]], self.list_d2[row, :self.list_len[row]]
        live = self.alive[ids]
        boundary = d2[live][need - 1] * (1.0 + _MARGIN) + 1e-300
        if self.list_len[row] == self.listed and d2[-1] <= boundary:
            # the list may not hold every record within the margin: ask the tree
            count = _within(*self.tree.arrays, self.X, row, boundary, self.scratch.found,
                            *self.scratch.arrays[-3:])
            within = np.sort(self.scratch.found[:count])
        else:
            within = ids[live & (d2 <= boundary)]
        distance, position = cKDTree(self.X[within]).query(self.X[row], k=len(within))
        record = within[np.atleast_1d(position)]
        order = np.lexsort((record, np.atleast_1d(distance)))[:need]
        return record[order]


class _Tree:
    """The k-d tree's arrays: rows in tree order, leaf blocks, boxes, live counts.

    A leaf's rows are kept column by column as
    :func:`~core.methods.block_sums.block_layout` reads them (``blocks``, of the rows in
    tree order): a nominal attribute's indicator block as one column of category codes,
    whose terms come from the query's table, so a row's distance is the sum over every
    column in order, read in a few values.
    """

    def __init__(self, P, perm, start, stop, levels, blocks):
        n_nodes = len(start)
        self.first_leaf = (1 << levels) - 1
        codes, self.layout, self.value, self.whole = blocks
        self.Q = leaf_blocks(np.ascontiguousarray(codes.T), start, stop, levels)
        self.lo, self.hi = np.empty((n_nodes, P.shape[1])), np.empty((n_nodes, P.shape[1]))
        self.count = (stop - start).astype(np.int64)
        _boxes(P, start, stop, self.first_leaf, self.lo, self.hi)
        self.live = np.ones(len(P), dtype=np.bool_)
        self.record = perm.astype(np.int64)
        self.position = np.empty_like(self.record)
        self.position[self.record] = np.arange(len(P))
        self.leaf_of = np.empty(len(P), dtype=np.int64)
        for node in range(self.first_leaf, n_nodes):
            self.leaf_of[start[node]:stop[node]] = node
        self.start, self.stop = start, stop
        self.arrays = (self.Q, self.start, self.stop, self.first_leaf, self.lo, self.hi,
                       self.count, self.live, self.record, self.layout, self.value,
                       self.whole)


class _Scratch:
    """Work arrays of the searches (a stack per tree level, the best list, one leaf)."""

    def __init__(self, n, listed, tree):
        self.found = np.empty(n, dtype=np.int64)
        self.arrays = (np.empty(256, np.int64), np.empty(256), np.empty(listed),
                       np.empty(listed, np.int64), np.empty(tree.Q.shape[2]),
                       *query_tables(tree.layout))


def _boxes(P, start, stop, first_leaf, lo, hi):
    """Every node's bounding box (leaves from their rows, inner nodes from children)."""
    d = P.shape[1]
    for node in range(2 * first_leaf, -1, -1):
        if node >= first_leaf:
            for j in range(d):
                lo[node, j] = np.inf
                hi[node, j] = -np.inf
            for t in range(start[node], stop[node]):
                for j in range(d):
                    lo[node, j] = min(lo[node, j], P[t, j])
                    hi[node, j] = max(hi[node, j], P[t, j])
        else:
            for j in range(d):
                lo[node, j] = min(lo[2 * node + 1, j], lo[2 * node + 2, j])
                hi[node, j] = max(hi[2 * node + 1, j], hi[2 * node + 2, j])


def _nearest(Q, start, stop, first_leaf, lo, hi, count, live, record, layout, value, whole,
             q, skip, m, stack, stack_d2, best_d2, best_id, buffer, terms, held):
    """The m live records nearest to q other than ``skip``, ascending by (d², record).

    Returns how many were found and the rows measured. Distances sum the columns in
    order; a node is skipped only when its box is farther than the m-th best.
    """
    size, work = 0, 0
    if count[0] == 0:
        return 0, 0
    block_terms(q, layout, value, terms, held)
    stack[0], stack_d2[0] = 0, 0.0
    depth = 1
    while depth:
        depth -= 1
        node, bound = stack[depth], stack_d2[depth]
        if size == m and bound > best_d2[m - 1]:
            continue
        if node >= first_leaf:
            s, length = start[node], stop[node] - start[node]
            leaf_distances(Q, node - first_leaf, length, q, layout, terms, buffer)
            work += length
            for i in range(length):
                d2 = buffer[i]
                if size == m and d2 > best_d2[m - 1]:
                    continue
                t = s + i
                r = record[t]
                if not live[t] or r == skip:
                    continue
                if size == m and d2 == best_d2[m - 1] and r > best_id[m - 1]:
                    continue
                slot = size if size < m else m - 1
                while slot > 0 and (best_d2[slot - 1] > d2 or
                                    (best_d2[slot - 1] == d2 and best_id[slot - 1] > r)):
                    best_d2[slot] = best_d2[slot - 1]
                    best_id[slot] = best_id[slot - 1]
                    slot -= 1
                best_d2[slot] = d2
                best_id[slot] = r
                if size < m:
                    size += 1
            continue
        a, b = 2 * node + 1, 2 * node + 2
        da = box_bound(lo, hi, a, q, layout, value, whole, held) if count[a] else np.inf
        db = box_bound(lo, hi, b, q, layout, value, whole, held) if count[b] else np.inf
        if da > db:
            a, b, da, db = b, a, db, da
        if count[b]:
            stack[depth], stack_d2[depth] = b, db
            depth += 1
        if count[a]:
            stack[depth], stack_d2[depth] = a, da
            depth += 1
    return size, work


def _fill_lists(Q, start, stop, first_leaf, lo, hi, count, live, record, layout, value,
                whole, X, order, done, listed, list_id, list_d2, list_len, stack, stack_d2,
                best_d2, best_id, buffer, terms, held, budget):
    """Lists of the records ``order[done:]`` until ``budget`` rows are measured."""
    work = 0
    while done < order.shape[0] and work < budget:
        r = order[done]
        size, spent = _nearest(Q, start, stop, first_leaf, lo, hi, count, live, record,
                               layout, value, whole, X[r], r, listed, stack, stack_d2,
                               best_d2, best_id, buffer, terms, held)
        work += spent
        for f in range(size):
            list_id[r, f] = best_id[f]
            list_d2[r, f] = best_d2[f]
        list_len[r] = size
        done += 1
    return done


def _from_list(row, need, margin, members, at, alive, list_id, list_d2, list_len, listed):
    """Take the row's first ``need`` live listed records if the list proves them the
    nearest by the margin; returns 1 if it does, 0 if not."""
    got = 0
    boundary = 0.0
    for f in range(list_len[row]):
        r = list_id[row, f]
        if not alive[r]:
            continue
        if got < need:
            members[at, got] = r
            got += 1
            boundary = list_d2[row, f]
            continue
        return 1 if list_d2[row, f] > boundary * (1.0 + margin) + 1e-300 else 0
    if got < need:
        return 0
    if list_len[row] < listed:  # the list held every other record: nothing lies beyond
        return 1
    return 1 if list_d2[row, list_len[row] - 1] > boundary * (1.0 + margin) + 1e-300 else 0


def _candidates(rows, need, margin, members, tied, alive, list_id, list_d2, list_len, Q,
                start, stop, first_leaf, lo, hi, count, live, record, layout, value, whole,
                X, stack, stack_d2, best_d2, best_id, buffer, terms, held):
    """Members of the rows' candidates; ``tied[i] = 1`` where only cKDTree can decide."""
    listed = list_id.shape[1]
    for i in range(rows.shape[0]):
        row = rows[i]
        if _from_list(row, need, margin, members, i, alive, list_id, list_d2, list_len,
                      listed):
            continue
        size, _ = _nearest(Q, start, stop, first_leaf, lo, hi, count, live, record, layout,
                           value, whole, X[row], row, listed, stack, stack_d2, best_d2,
                           best_id, buffer, terms, held)
        for f in range(size):
            list_id[row, f] = best_id[f]
            list_d2[row, f] = best_d2[f]
        list_len[row] = size
        if not _from_list(row, need, margin, members, i, alive, list_id, list_d2,
                          list_len, listed):
            tied[i] = 1


def _within(Q, start, stop, first_leaf, lo, hi, count, live, record, layout, value, whole,
            X, row, radius2, out, buffer, terms, held):
    """Every live record other than ``row`` within ``radius2`` of it; returns how many
    (``buffer`` holds a leaf's distances)."""
    q = X[row]
    block_terms(q, layout, value, terms, held)
    found = 0
    stack = np.empty(256, np.int64)
    stack[0] = 0
    depth = 1 if count[0] else 0
    while depth:
        depth -= 1
        node = stack[depth]
        if box_bound(lo, hi, node, q, layout, value, whole, held) > radius2:
            continue
        if node >= first_leaf:
            leaf_distances(Q, node - first_leaf, stop[node] - start[node], q, layout, terms,
                            buffer)
            for t in range(start[node], stop[node]):
                if not live[t] or record[t] == row:
                    continue
                if buffer[t - start[node]] <= radius2:
                    out[found] = record[t]
                    found += 1
            continue
        for child in (2 * node + 1, 2 * node + 2):
            if count[child]:
                stack[depth] = child
                depth += 1
    return found


def _remove(records, position, leaf_of, count, live):
    """Flag the records assigned and lower the live counts on their paths."""
    for r in records:
        t = position[r]
        if not live[t]:
            continue
        live[t] = False
        node = leaf_of[t]
        while True:
            count[node] -= 1
            if node == 0:
                break
            node = (node - 1) // 2


for _name in ("_boxes", "_nearest", "_fill_lists", "_from_list", "_candidates", "_within",
              "_remove"):  # compiled in dependency order
    _compiled = kernel(globals()[_name])
    if _compiled is not None:
        globals()[_name] = _compiled

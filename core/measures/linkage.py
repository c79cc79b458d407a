"""Distance-based record linkage (DLD) at census scale: a KD-tree that stops early.

The definition is :func:`core.measures.disclosure.record_linkage`'s (Nin, Mic1D-k,
Section 2.3, after Domingo-Ferrer & Torra 2001): a masked record scores 1/t when its own
original is among the t original records (counted with multiplicity) nearest to it,
distances within a relative 1e-12 of the minimum counting as ties, else 0.

Vocabulary: the *points* are the distinct original rows (with their multiplicity), the
*queries* the distinct masked rows; the masked records of one query share it (a group
centroid is one query). A query can only score if its records' own originals are
nearest, so the search around it has a known radius, the smallest own distance r among
its records: a point strictly nearer than r/(1 + 1e-12) means no record of the query
is linked, and the search stops at the first such point; otherwise the (few) points in
the thin shell up to r·(1 + 1e-12) give the minimum distance and the ties. Aggregated
queries (centroids far from every member) and noisy ones (own original far) then stop
at once, and the others are small bounded searches, where a plain nearest-neighbour
search in 10 dimensions degrades (Friedman, Bentley & Finkel 1977, for the tree).

Every squared distance is summed over the attributes in order, the same arithmetic in
the compiled kernel (:mod:`core.compiled`) and in the numpy/scipy reference
(:func:`link_reference`), so both give the same figures.
"""

from __future__ import annotations

import threading
import time

import numpy as np
from scipy.spatial import cKDTree

from core.compiled import kernel
from core.measures.linkage_tree import build_tree, compact_rows, fits
from core.progress import TaskState
from core.threads import second_thread_allowed

__all__ = ["TIE_TOLERANCE", "build_tree", "link_queries", "link_reference",
           "search_order", "squared_distances"]

TIE_TOLERANCE = 1e-12
_TIE = (1.0 + TIE_TOLERANCE) ** 2  # the relative tolerance on squared distances
_CHUNK_SECONDS = 0.1
_TWO_THREADS_FROM = 4096  # queries: fewer are linked on the calling thread alone
_FIRST_STRETCH, _SMALLEST_STRETCH = 1024, 64  # queries
_PART_POINTS = 16384  # points under the node by which the queries are put in order


def squared_distances(A: np.ndarray, B: np.ndarray, rows: np.ndarray | None = None
                      ) -> np.ndarray:
    """Row-wise ``Σ_j (A_ij − B_ij)²``, summed over j in order (shape (n,)).

    With ``rows``, row i of A is ``A[rows[i]]`` (the same sums, ``A[rows]`` not made).
    """
    if _rows_compiled is not None and A.ndim == 2 and len(B) > 1000:
        return _rows_compiled(np.ascontiguousarray(A, dtype=np.float64),
                              np.empty(0, dtype=np.int64) if rows is None else
                              np.asarray(rows, dtype=np.int64),
                              np.ascontiguousarray(B, dtype=np.float64))
    diff = (A if rows is None else A[rows]) - B
    total = np.zeros(len(diff))
    for j in range(diff.shape[1]):
        total += diff[:, j] * diff[:, j]
    return total


def _rows(A, rows, B):
    """:func:`squared_distances` in one pass (the same sums in the same order); row i
    of A is ``A[rows[i]]``, or ``A[i]`` when ``rows`` is empty."""
    total = np.zeros(B.shape[0])
    gathered = rows.shape[0] > 0
    for i in range(B.shape[0]):
        r = rows[i] if gathered else i
        d2 = 0.0
        for j in range(B.shape[1]):
            g = A[r, j] - B[i, j]
            d2 += g * g
        total[i] = d2
    return total


_rows_compiled = kernel(_rows)


def link_reference(points: np.ndarray, multiplicity: np.ndarray, queries: np.ndarray,
                   bound: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For every query, the minimum squared distance and the tied multiplicity.

    Parameters
    ----------
    points : ndarray of shape (n_points, d)
    multiplicity : ndarray of shape (n_points,)
    queries : ndarray of shape (n_queries, d)
    bound : ndarray of shape (n_queries,)
        The smallest squared distance from the query to one of its records' originals.

    Returns
    -------
    nearest : ndarray of shape (n_queries,)
        The minimum squared distance to a point, or −1 where a point is nearer than
        ``bound`` beyond the tolerance (no record of the query can be linked).
    tied : ndarray of shape (n_queries,)
        Total multiplicity of the points within the tolerance of the minimum.
    """
    nearest = np.full(len(queries), -1.0)
    tied = np.zeros(len(queries))
    if len(queries) == 0:
        return nearest, tied
    tree = cKDTree(points)
    _, first = tree.query(queries, k=1)
    first = np.asarray(first, dtype=np.int64).reshape(-1)
    first_d2 = squared_distances(queries, points[first])
    maybe = np.flatnonzero(bound <= first_d2 * _TIE)
    if maybe.size:
        radius = np.sqrt(first_d2[maybe] * _TIE) * (1.0 + 1e-9)  # covers float rounding
        for q, ball in zip(maybe, tree.query_ball_point(queries[maybe], r=radius)):
            ball = np.asarray(ball, dtype=np.int64)
            d2 = squared_distances(np.broadcast_to(queries[q], (len(ball), queries.shape[1])),
                                   points[ball])
            smallest = d2.min()
            if bound[q] > smallest * _TIE:
                continue
            nearest[q] = smallest
            tied[q] = float(multiplicity[ball[d2 <= smallest * _TIE]].sum())
    return nearest, tied


def _search(ordered, weight, start, stop, left, right, split_dim, split_value, low, high,
            pair, queries, bound, order, first, last, tie, nearest, tied, shell):
    """Link ``queries[order[first:last]]``; returns where it stopped (``last`` if done).

    ``shell`` holds the squared distances of the points in the thin shell; a query with
    more shell points than it holds (exact ties of many points) stops the chunk early so
    the caller can give a larger one. A column with ``pair[j]`` > 0 is a nominal
    attribute's category (:mod:`core.measures.linkage_tree`): another category adds
    ``pair[j]`` twice, as its two indicator columns would. ``pair`` is None for numeric
    columns alone, which numba then compiles without the categories' branches.
    """
    d = queries.shape[1]
    stack = np.zeros(256, dtype=np.int64)
    floor = np.zeros(256)  # a lower bound of each stacked node's box distance
    weights = np.zeros(len(shell))
    for t in range(first, last):
        q = order[t]
        inner = bound[q]
        outer = inner * tie
        reach = outer * (1.0 + 1e-9)
        count = 0
        closer = False
        top = 1
        stack[0] = 0
        floor[0] = 0.0
        while top > 0 and not closer:
            top -= 1
            node = stack[top]
            if floor[top] > reach:  # out of reach without reading its box
                continue
            box = 0.0
            for j in range(d):
                x = queries[q, j]
                if x < low[node, j]:
                    g = low[node, j] - x
                elif x > high[node, j]:
                    g = x - high[node, j]
                else:
                    continue
                if pair is None:
                    box += g * g
                else:
                    box += g * g if pair[j] == 0.0 else pair[j] + pair[j]
            if box > reach:
                continue
            if left[node] < 0:
                for i in range(start[node], stop[node]):
                    d2 = 0.0
                    if pair is None:  # numeric columns alone (compiled on its own)
                        for j in range(d):
                            g = queries[q, j] - ordered[i, j]
                            d2 += g * g
                            if d2 > outer:  # partial sums only grow: neither nearer
                                break  # nor tied
                    else:
                        for j in range(d):
                            g = queries[q, j] - ordered[i, j]
                            if pair[j] == 0.0:
                                d2 += g * g
                            elif g != 0.0:  # another category: the embedding's two terms
                                d2 += pair[j]
                                d2 += pair[j]
                            if d2 > outer:
                                break
                    if d2 > outer:
                        continue
                    if d2 * tie < inner:
                        closer = True
                        break
                    if d2 <= outer:
                        if count == len(shell):
                            return t
                        shell[count] = d2
                        weights[count] = weight[i]
                        count += 1
                continue
            if top + 2 > len(stack):
                grown = np.zeros(2 * len(stack), dtype=np.int64)
                grown[:top] = stack[:top]
                stack = grown
                grown_floor = np.zeros(2 * len(floor))
                grown_floor[:top] = floor[:top]
                floor = grown_floor
            # The far child lies beyond the split: its box distance is at least this
            # box's with the split attribute's term replaced by the squared gap to the
            # split, which is at least that term (the split lies inside this box), and
            # every other term can only grow in a smaller box.
            # A category's far child holds none of the query's category unless the
            # split is that category (its rows' categories lie beyond the split).
            dim = split_dim[node]
            x = queries[q, dim]
            term = 0.0
            if x < low[node, dim]:
                term = (low[node, dim] - x) * (low[node, dim] - x)
            elif x > high[node, dim]:
                term = (x - high[node, dim]) * (x - high[node, dim])
            gap = (x - split_value[node]) * (x - split_value[node])
            if pair is not None:
                if pair[dim] > 0.0:
                    term = 0.0 if low[node, dim] <= x <= high[node, dim] else 2.0 * pair[dim]
                    gap = 0.0 if x == split_value[node] else 2.0 * pair[dim]
            far = box - term + gap
            if x < split_value[node]:
                stack[top], stack[top + 1] = right[node], left[node]
            else:
                stack[top], stack[top + 1] = left[node], right[node]
            floor[top], floor[top + 1] = far, box
            top += 2
        if closer or count == 0:
            nearest[q] = -1.0
            tied[q] = 0.0
            continue
        smallest = shell[0]
        for i in range(1, count):
            if shell[i] < smallest:
                smallest = shell[i]
        total = 0.0
        for i in range(count):
            if shell[i] <= smallest * tie:
                total += weights[i]
        nearest[q] = smallest
        tied[q] = total
    return last


_search_compiled = kernel(_search)


def _part_of(queries, left, right, split_dim, split_value, start, depth):
    """The first point of the node each query reaches by ``depth`` steps down the
    splits (a leaf's, where it reaches one first)."""
    part = np.empty(queries.shape[0], dtype=np.int64)
    for q in range(queries.shape[0]):
        node = 0
        for _ in range(depth):
            if left[node] < 0:
                break
            if queries[q, split_dim[node]] < split_value[node]:
                node = left[node]
            else:
                node = right[node]
        part[q] = start[node]
    return part


_part_compiled = kernel(_part_of)


def search_order(queries, tree, anchor_position: np.ndarray) -> np.ndarray:
    """The order in which :func:`link_queries` searches ``queries`` (rows in the tree's
    columns): by the part of the tree each falls in, the node of about
    ``_PART_POINTS`` points it reaches down the splits, then by the tree position of
    its anchor (``anchor_position``).

    Consecutive searches then read the same few hundred kilobytes of the tree. The
    anchors alone, one of the query's records, do that only where the records lie
    near their centroid: a PCP group is cut along one direction and spread along the
    others, so its centroid lies far from each of its records, and searched in the
    anchors' order, its queries jumped across the whole tree (a PCP release of
    1,000,000 × 10 on one thread: 0.36 s against 0.24 s). Any order gives the same
    answers: each depends on its query and the tree alone.
    """
    (_, ordered, start, _, left, right, split_dim, split_value) = tree[:8]
    depth = int(np.log2(max(len(ordered) / _PART_POINTS, 1.0)))
    if depth == 0:
        return np.argsort(anchor_position, kind="stable")
    part = _part_compiled(queries, left, right, split_dim, split_value, start, depth)
    return np.argsort(part * (len(ordered) + 1) + anchor_position, kind="stable")


class _Stretches:
    """The queries still to link, handed out a stretch at a time to the threads that
    link them (in the tree order of :func:`link_queries`)."""

    def __init__(self, total: int):
        self.total = total
        self._next = 0
        self._lock = threading.Lock()
        self._stopped = False
        self.error: BaseException | None = None

    def claim(self, size: int) -> tuple[int, int]:
        """``(first, last)`` of the next stretch of at most ``size``; empty when done."""
        with self._lock:
            first = self.total if self._stopped else self._next
            last = min(first + size, self.total)
            self._next = last
            return first, last

    @property
    def handed_out(self) -> int:
        return self._next

    def stop(self) -> None:
        with self._lock:
            self._stopped = True


def _link_stretches(search, nearest, tied, stretches: _Stretches, state: TaskState, *,
                    report: bool = False) -> None:
    """Link stretches of queries until none is left (or a stop, a cancel, an error).

    Each thread has its own shell and sizes its stretches to about
    ``_CHUNK_SECONDS``; every query's answer depends on the query and the tree alone,
    so which thread links it does not change it. The reporting thread (the run's) steps
    the progress, which raises on Cancel; the other stops at its next stretch.
    """
    shell = np.empty(64)
    chunk = _FIRST_STRETCH
    try:
        while True:
            if report:
                state.step(stretches.handed_out / max(stretches.total, 1), "record linkage")
            elif state.cancelled:
                return
            done, last = stretches.claim(chunk)
            if done >= last:
                return
            while done < last:
                began = time.perf_counter()
                reached = _search_compiled(*search, done, last, _TIE, nearest, tied, shell)
                spent = time.perf_counter() - began
                if reached < last and reached == done:
                    shell = np.empty(2 * len(shell))  # many exact ties: a larger shell
                if reached > done:
                    rate = (reached - done) / max(spent, 1e-6)
                    chunk = int(min(max(rate * _CHUNK_SECONDS, _SMALLEST_STRETCH), 1 << 20))
                done = reached
    except BaseException as error:
        if report:
            raise
        stretches.error = error
        stretches.stop()


def link_queries(points: np.ndarray, multiplicity: np.ndarray, queries: np.ndarray,
                 bound: np.ndarray, anchor: np.ndarray, *, tree=None,
                 state: TaskState | None = None) -> tuple[np.ndarray, np.ndarray]:
    """:func:`link_reference`'s figures, by the compiled early-stopping search.

    ``anchor`` is one point index per query (an original of one of its records): queries
    are searched in :func:`search_order`, so consecutive searches touch the same part
    of the tree. ``tree`` is :func:`build_tree` of ``points`` when built ahead.
    Returns to Python every ~0.1 s to report progress on ``state`` (and honour Cancel).
    From ``_TWO_THREADS_FROM`` queries on, a helper thread links stretches of them
    beside the calling thread when a second thread is allowed
    (:func:`core.threads.second_thread_allowed`); the answers are the same.
    Without the compiled kernels, :func:`link_reference`.
    """
    if _search_compiled is None or len(queries) == 0:
        return link_reference(points, multiplicity, queries, bound)
    state = state or TaskState()
    points = np.ascontiguousarray(points, dtype=np.float64)
    queries = np.ascontiguousarray(queries, dtype=np.float64)
    if tree is None or not fits(queries, tree[11]):  # a query unlike the points' blocks
        tree = build_tree(points)
    (index, ordered, start, stop, left, right, split_dim, split_value, low, high, _,
     layout, pair) = tree
    queries = compact_rows(queries, layout)[0] if layout else queries
    weight = np.asarray(multiplicity, dtype=np.float64)[index]
    position = np.empty(len(index), dtype=np.int64)
    position[index] = np.arange(len(index))
    order = search_order(queries, tree, position[anchor])
    nearest = np.empty(len(queries))
    tied = np.empty(len(queries))
    search = (ordered, weight, start, stop, left, right, split_dim, split_value, low, high,
              pair if layout else None, queries, bound, order)
    stretches = _Stretches(len(queries))
    helper = None
    if len(queries) >= _TWO_THREADS_FROM and second_thread_allowed():
        helper = threading.Thread(target=_link_stretches,
                                  args=(search, nearest, tied, stretches, state),
                                  name="microagg-linkage", daemon=True)
        helper.start()
    try:
        _link_stretches(search, nearest, tied, stretches, state, report=True)
    finally:
        stretches.stop()
        if helper is not None:
            helper.join()  # at most one stretch, about a tenth of a second
    if stretches.error is not None:
        raise stretches.error
    state.check()
    state.step(1.0, "record linkage")
    return nearest, tied

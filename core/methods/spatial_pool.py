"""The pool of unassigned records on the compiled spatial index, removals in any order.

:class:`SpatialPool` answers what :class:`~core.methods.pool.RecordPool` answers, with
the same answers bit for bit, without a pass over every record per question. It is
built for the t-closeness methods (:mod:`core.methods.tclose_kfirst`,
:mod:`core.methods.tfirst`), which, unlike MDAV, may take any record out of the pool
(a later duplicate chosen for its confidential value) and seed a group with any live
record.

Positions are the original record numbers and never change, so ``records_at``,
``positions_of``, ``record`` and ``position`` are identities, and positions stay valid
after a removal (a :class:`RecordPool` compacts its buffer instead).

The structure is :mod:`core.methods.spatial_index`'s: identical rows stored once with
their record queue, a k-d tree whose boxes shrink as rows empty, the record farthest
from the centroid through a shell sorted by distance to a moving anchor, the record
farthest from another point bounded through its reflection in the anchor. A removed
record is skipped inside its row's queue (:mod:`core.methods.spatial_pool_kernels`).
For requests too large for the tree to prune (tc-kfirst's candidates, thousands at a
time), :meth:`SpatialPool.nearest_stream` gives the same order a piece at a time from
a pass over the live rows, packed apart from the tree.

Exactness: distances are :func:`core.methods.pool.squared_distances`' (columns summed
in order), ties go to the record first in the input, and the centroid is the pool's
``_sum / count`` with the same schedule: the removed rows' :func:`column_sums`
subtracted per removal, the live rows summed afresh whenever the count has halved since
the last time. The ``approximate`` arguments of :class:`RecordPool` are only a speed
hint there; here they are accepted and ignored.
"""

from __future__ import annotations

import numpy as np

from core.methods import spatial_index as index
from core.methods import spatial_search as search
from core.methods.spatial_screen import query_buffer
from core.methods import spatial_tree
from core.methods import spatial_pool_kernels as kernels
from core.methods.pool import _EPS, column_sums

__all__ = ["SpatialPool"]

# Rows per leaf unless the caller says (MDAV's are 64 to 128), tc-kfirst's: its large
# requests go through streams, not the tree (30,000 × 10: 5.47 s, against 5.53 s on
# leaves of 128; 20,000 × 20: 2.74–2.87 against 2.50–2.51 s). tc-tfirst's and
# tc-bucket's pools serve only the farthest searches and take MDAV's leaves
# (:func:`core.methods.tfirst_loop.build_indexes`).
_LEAF_SIZE = 32
# Rows per block of the streams' scan set (SpatialPool._scan_set).
_WIDTH = 32


class SpatialPool:
    """Unassigned records of ``X`` (n_records × n_attributes), positions = record numbers.
    ``check()``, if given, is called between the steps of the build (it raises to
    cancel: a pool of a million records takes seconds to build). ``leaf_size``: rows per
    leaf at most (``_LEAF_SIZE`` unless given). ``records`` (ascending record numbers):
    a pool of those alone, the others already removed, as a loop builds its pool again
    on the records left (:func:`core.methods.tfirst_loop.pool_on_live`); ``anchor``: the
    point the farthest searches' shell is sorted from (the centroid unless given).

    Examples
    --------
    >>> pool = SpatialPool(np.array([[0.0], [1.0], [1.0], [5.0]]))
    >>> pool.farthest(pool.centroid()), pool.nearest(np.array([1.0]), 2).tolist()
    (3, [1, 2])
    >>> pool.remove(np.array([2])).tolist(), pool.nearest(np.array([1.0]), 2).tolist()
    ([2], [0, 1])
    """

    def __init__(self, X: np.ndarray, check=None, leaf_size: int | None = None,
                 records: np.ndarray | None = None, anchor: np.ndarray | None = None):
        check = check or (lambda: None)  # called between the steps of the build (Cancel)
        self._X = np.ascontiguousarray(X, dtype=np.float64)
        n, d = self._X.shape
        own = self._X if records is None else self._X[records]
        self.count = len(own)
        self._buffer = self.count  # the count when the sum was last taken afresh
        self._sum = column_sums(own)
        self._alive = np.zeros(n, dtype=bool)
        self._alive[slice(None) if records is None else records] = True
        self._blocked = np.zeros(n, dtype=np.bool_)
        self._max_norm = float(np.sqrt(np.einsum("ij,ij->i", own, own).max())) \
            if len(own) else 0.0
        members, starts, row_of = index.distinct_rows(own)
        if records is not None:  # the rows' queues in record numbers, still ascending
            members = np.asarray(records, dtype=np.int64)[members]
            row_of, own_rows = np.zeros(n, dtype=np.int64), row_of
            row_of[records] = own_rows
        check()
        P = self._X[members[starts[:-1]]] + 0.0
        perm, start, stop, levels = index.build_tree(P, leaf_size or _LEAF_SIZE, check)
        self._P = np.ascontiguousarray(P[perm])
        self._Q, self._levels = None, levels  # the leaves' blocks, made when first searched
        check()
        self._head = starts[:-1][perm].copy()
        self._end = starts[1:][perm].copy()
        # each row's one live record, or -1 (several) or -2 (none): kernels._remove
        self._solo = np.where(self._end - self._head == 1, members[self._head], -1)
        inverse = np.empty_like(perm)
        inverse[perm] = np.arange(len(perm))
        self._row_of = inverse[row_of]
        self._members = members
        self._slot_of = np.zeros(n, dtype=np.int64)
        self._slot_of[members] = np.arange(len(members))
        self._nxt = np.arange(len(members) + 1, dtype=np.int64)
        self._first_leaf = (1 << levels) - 1
        self._start, self._stop = start, stop
        self._leaf_of = np.zeros(len(P), dtype=np.int64)
        for node in range(self._first_leaf, 2 * self._first_leaf + 1):
            self._leaf_of[start[node]:stop[node]] = node
        n_nodes = len(start)
        self._lo, self._hi = np.zeros((n_nodes, d)), np.zeros((n_nodes, d))
        self._cnt, self._top = np.zeros(n_nodes, dtype=np.int64), np.zeros(n_nodes)
        self._rho2 = np.zeros(len(P))
        self._shell = np.zeros(len(P), dtype=np.int64)
        self._pointer = np.zeros(1, dtype=np.int64)
        depth = 2 * levels + 8
        self._stack, self._stack_d2 = np.zeros(depth, dtype=np.int64), np.zeros(depth)
        self._heap_keys = np.zeros(n_nodes)
        self._heap_nodes = np.zeros(n_nodes, dtype=np.int64)
        self._buffer_d2 = np.zeros(int((stop - start).max()) + 1)
        self._buffer32 = np.zeros(len(self._buffer_d2), dtype=np.float32)
        self._q32 = query_buffer(d)
        self._work = np.zeros(4, dtype=np.int64)
        self._scan = None  # streams' scan set and buffers, made when first needed
        self._epoch = 0  # changes when the pool does, or a new stream takes the buffers
        self._anchor = np.zeros(d)
        self._shell_work = 0
        check()
        if self.count:
            self._move_anchor(self.centroid() if anchor is None else anchor)
        check()
        # The farthest-record search reads the leaves through the float32 screen.
        self._screen = spatial_tree.screen_blocks(self._P, start, stop, levels, self._lo,
                                                  self._hi)

    # --- the tree's state -------------------------------------------------------------

    def _move_anchor(self, point: np.ndarray) -> None:
        """Sort the live rows by distance to ``point``; every node's largest ρ² again."""
        self._anchor = np.array(point, dtype=np.float64)
        order = index._anchor_at(self._anchor, self._P, self._head, self._end, self._rho2)
        self._shell[:len(order)] = order
        self._n_shell = len(order)
        self._pointer[0] = 0
        self._shell_work = 0
        index._refresh_all(self._first_leaf, self._start, self._stop, self._head, self._end,
                           self._P, self._rho2, self._lo, self._hi, self._cnt, self._top)

    def hand_over(self):
        """``(arrays, scalars)``: the pool's state for a compiled loop that takes it over
        (:mod:`core.methods.tfirst_loop`); the pool is not to be used afterwards.

        ``arrays`` is ``(X, sum, alive, P, screen, head, end, solo, members, slot_of,
        nxt, row_of, leaf_of, first_leaf, start, stop, lo, hi, cnt, top, rho2, shell,
        pointer, anchor)``, every array the pool's own (the loop changes them in place);
        ``scalars`` is ``(count, buffer, shell length, shell work)``.
        """
        arrays = (self._X, self._sum, self._alive, self._P, self._screen, self._head,
                  self._end, self._solo, self._members, self._slot_of, self._nxt,
                  self._row_of, self._leaf_of, self._first_leaf, self._start, self._stop,
                  self._lo, self._hi, self._cnt, self._top, self._rho2, self._shell,
                  self._pointer, self._anchor)
        return arrays, (self.count, self._buffer, self._n_shell, self._shell_work)

    # --- RecordPool's interface -------------------------------------------------------

    def centroid(self) -> np.ndarray:
        return self._sum / self.count

    def record(self, position: int) -> int:
        return int(position)

    def position(self, record: int) -> int:
        return int(record)

    def rows(self, positions: np.ndarray) -> np.ndarray:
        return self._X[positions]

    def point(self, position: int) -> np.ndarray:
        return self._X[position].copy()

    def records_at(self, positions: np.ndarray) -> np.ndarray:
        return np.asarray(positions, dtype=np.int64)

    def positions_of(self, records: np.ndarray) -> np.ndarray:
        return np.asarray(records, dtype=np.int64)

    def live_positions(self) -> np.ndarray:
        return np.flatnonzero(self._alive)

    def remaining(self) -> np.ndarray:
        return np.flatnonzero(self._alive)

    def approximate_distances(self, point: np.ndarray) -> np.ndarray:
        """``|x − point|²`` for every record (removed ones too), within :meth:`tolerance`."""
        norms = np.einsum("ij,ij->i", self._X, self._X)
        return norms - 2.0 * (self._X @ point) + float(point @ point)

    def tolerance(self, point: np.ndarray) -> float:
        scale = self._max_norm + float(np.sqrt(point @ point))
        return 64.0 * _EPS * scale * scale * max(1, self._X.shape[1])

    def farthest(self, point: np.ndarray, approximate: np.ndarray | None = None) -> int:
        """The live record farthest from ``point`` (first in input order on ties)."""
        point = np.ascontiguousarray(point, dtype=np.float64)
        if self.count and np.array_equal(point, self.centroid()):
            return self._farthest_from_centroid(point)
        return int(search._farthest_from(
            point, self._anchor, self._first_leaf, self._start, self._head,
            self._end, self._members, self._P, self._screen, self._lo, self._hi, self._cnt,
            self._top, self._heap_keys, self._heap_nodes, self._buffer32, self._q32,
            self._work)[1])

    def _farthest_from_centroid(self, centroid: np.ndarray) -> int:
        _, record, _, examined = index._farthest_in_shell(
            centroid, self._anchor, self._shell[:self._n_shell], self._pointer, self._rho2,
            self._head, self._end, self._members, self._P)
        # The anchor stays while the scans stay short (as in spatial_heuristics).
        self._shell_work += examined
        live = int(self._cnt[0])
        if examined > 32 + live // 32 or self._shell_work > 2 * live:
            self._move_anchor(centroid)
        return int(record)

    def nearest(self, point: np.ndarray, m: int, *, include: int | None = None,
                exclude: np.ndarray | None = None,
                approximate: np.ndarray | None = None) -> np.ndarray:
        """Positions (ascending) of the ``m`` live records nearest to ``point``.

        ``include`` is always among them, ``exclude`` never; ties at the boundary go to
        the records first in the input. With ``m`` at least the live, non-excluded
        count (``len(exclude)`` counted as in :class:`RecordPool`), all of those.
        """
        n_excluded = 0 if exclude is None else len(exclude)
        if m >= self.count - n_excluded:
            live = self._alive.copy()
            if exclude is not None:
                live[exclude] = False
            return np.flatnonzero(live)
        order, _ = self.nearest_sorted(point, m, include=include, exclude=exclude)
        return np.sort(order)

    def nearest_sorted(self, point: np.ndarray, m: int, *, include: int | None = None,
                       exclude: np.ndarray | None = None,
                       approximate: np.ndarray | None = None):
        """The ``m`` live records nearest to ``point``, nearest first, with squared distances.

        Returns ``(positions, squared_distances)``; ``include`` comes first with distance
        0.0 (as :class:`RecordPool` reports it); equal distances keep input order.
        """
        point = np.ascontiguousarray(point, dtype=np.float64)
        wanted = m if include is None else m - 1
        blocked = self._blocked
        if exclude is not None:
            blocked[exclude] = True
        if include is not None:
            blocked[include] = True
        capacity = 2 * max(wanted, 0) + 32  # candidates kept before the m best are selected
        if self._Q is None:  # not made for a pool that only a loop's farthest searches read
            self._Q = index.leaf_blocks(self._P, self._start, self._stop, self._levels)
        cand_d2, cand_id = np.empty(capacity), np.empty(capacity, dtype=np.int64)
        try:
            size = kernels.nearest_live(
                point, max(wanted, 0), blocked, self._nxt, self._first_leaf, self._start,
                self._stop, self._head, self._end, self._members, self._Q, self._lo,
                self._hi, self._cnt, self._stack, self._stack_d2, cand_d2, cand_id,
                self._buffer_d2)
        finally:
            if exclude is not None:
                blocked[exclude] = False
            if include is not None:
                blocked[include] = False
        positions, distances = cand_id[:size], cand_d2[:size]
        if include is not None:
            positions = np.concatenate(([int(include)], positions))
            distances = np.concatenate(([0.0], distances))
        return positions, distances

    def nearest_stream(self, point: np.ndarray, *, include: int | None = None,
                       expect: int = 0):
        """The live records in :meth:`nearest_sorted`'s order, a piece at a time.

        ``stream.take(m)`` gives the next m positions (``include`` first); the pieces
        together are ``nearest_sorted(point, count, include=include)[0]``. For callers
        that look through many candidates but cannot say how many beforehand; ``expect``,
        how many they will probably take, only sizes the work. Valid until the pool
        changes or another stream starts.
        """
        self._epoch += 1
        return _NearestStream(self, np.ascontiguousarray(point, dtype=np.float64), include,
                              int(expect))

    def _scan_set(self):
        """Streams' view of the live rows: ``(blocks, slots, size, buffers)``.

        ``slots`` are the live rows' tree numbers in tree order, and ``blocks[b, j, i]``
        attribute j of slot 32b + i (the leaves' layout, without the emptied rows). It
        is packed again once half of its rows have emptied, so a pass over it costs at
        most twice the live rows, O(n·d) in all. ``buffers`` are the streams' scratch,
        one row each: distances, the listed rows (distance; row and record) and three to
        spill.
        """
        live = int(self._cnt[0])
        if self._scan is None or 2 * live <= self._scan[2]:
            slots = np.flatnonzero(self._head < self._end)
            size, d = len(slots), self._P.shape[1]
            packed = np.zeros((-(-size // _WIDTH) * _WIDTH, d))
            packed[:size] = self._P[slots]
            blocks = np.ascontiguousarray(
                packed.reshape(-1, _WIDTH, d).transpose(0, 2, 1))
            if self._scan is None:
                n = len(packed)
                buffers = (np.zeros(n), np.zeros(n), np.zeros((n, 2), dtype=np.int64),
                           np.zeros(n), np.zeros((n, 2), dtype=np.int64),
                           np.zeros(n, dtype=np.int64))
            else:
                buffers = self._scan[3]
            self._scan = (blocks, slots, size, buffers)
        return self._scan

    def remove(self, positions: np.ndarray) -> np.ndarray:
        """Take the records at ``positions`` out of the pool; return them (record numbers)."""
        self._epoch += 1
        records = np.array(positions, dtype=np.int64).reshape(-1)
        self._sum -= column_sums(self._X[records])
        self.count -= len(records)
        kernels.remove_records(records, self._slot_of, self._nxt, self._row_of,
                               self._leaf_of, self._alive, self._first_leaf, self._start,
                               self._stop, self._head, self._end, self._solo, self._members,
                               self._P, self._rho2, self._lo, self._hi, self._cnt, self._top,
                               self._screen)
        if self.count and self.count * 2 <= self._buffer:
            self._buffer = self.count
            self._sum = column_sums(self._X[self._alive])  # as RecordPool's compaction
        return records


# Places of the scan set looked at for a stream's sample of distances; rows per
# bucket, about: a take sorts at most a bucket's records at a time (a sort slows down
# about threefold per record once its keys outgrow the first-level cache: 5,000
# records 0.12 ms, 8,000 0.55 ms); cells of the table that maps a distance to its
# bucket; how far a stream lists rows beyond what it has been asked for, as a multiple.
_SAMPLE, _BUCKET, _CELLS, _LIST = 1024, 2048, 1024, 1.5


class _NearestStream:
    """:meth:`SpatialPool.nearest_stream`'s state: the last record given (the floor).

    A small first take is a tree search (:meth:`SpatialPool.nearest_sorted`). Later
    ones compute the distance of every row of the pool's scan set once
    (``kernels.scan_rows``), take a sample of them (``kernels.sample_rows``), list the
    rows up to a distance estimated from the sample, half again as far as asked for, in
    buckets of about _BUCKET rows (``kernels.bucket_rows``), and take the records after
    the floor bucket by bucket (``kernels.take_next``), listing further when the buckets
    are used up. The sample only sizes the work: the buckets follow the distance, so
    whatever their sizes, a take returns the records that come next in the order.
    """

    def __init__(self, pool: SpatialPool, point: np.ndarray, include: int | None,
                 expect: int):
        self._pool, self._point, self._include = pool, point, include
        self._expect = expect
        self._epoch = pool._epoch
        self._floor = np.array([-np.inf, -1.0])  # (distance, record) of the last given
        self._given = 0  # records given, ``include`` counted
        self._sample = None

    def take(self, m: int) -> np.ndarray:
        """The next ``m`` positions in order (fewer only at the end of the pool)."""
        pool = self._pool
        if pool._epoch != self._epoch:
            raise RuntimeError("the pool changed since this stream started")
        m = min(int(m), pool.count - self._given)
        if m <= 0:
            return np.zeros(0, dtype=np.int64)
        if self._given == 0 and max(m, self._expect) * 64 <= pool.count:
            positions, distances = pool.nearest_sorted(self._point, m, include=self._include)
            self._remember(positions, distances)
            return positions
        head = np.zeros(0, dtype=np.int64)
        if self._given == 0 and self._include is not None:
            head = np.array([self._include], dtype=np.int64)
            self._given, m = 1, m - 1
        target = self._given + m
        if self._sample is None:
            self._start(max(target, self._expect))
        cand_d2, cand_id = np.empty(2 * m + 32), np.empty(2 * m + 32, dtype=np.int64)
        got = 0
        blocked = pool._blocked
        if self._include is not None:
            blocked[self._include] = True
        try:
            while got < m:
                got += kernels.take_next(
                    self._floor, m - got, blocked, pool._nxt, pool._head, pool._end,
                    pool._members, self._rows_d2, self._rows, self._bounds, self._lengths,
                    self._at, cand_d2[got:], cand_id[got:])
                if got == m or self._reach == np.inf:
                    break
                self._list(max(_LIST * target, 2 * self._listed))
        finally:
            if self._include is not None:
                blocked[self._include] = False
        self._given += got
        return np.concatenate((head, cand_id[:got])) if head.size else cand_id[:got]

    def _start(self, target: int) -> None:
        pool = self._pool
        self._blocks, self._slots, self._size, buffers = pool._scan_set()
        self._D, self._rows_d2, self._rows, self._spill_d2, self._spill, self._spill_b = \
            buffers
        kernels.scan_rows(self._point, self._blocks, self._size, self._D)
        self._sample = np.zeros(_SAMPLE)
        stride = -(-self._size // _SAMPLE)  # at most _SAMPLE places: never cut short
        self._sampled = kernels.sample_rows(self._D, self._slots, self._size, pool._solo,
                                            stride, self._sample)
        self._stride = int(pool._cnt[0]) / max(self._sampled, 1)  # live rows per sample
        self._reach = -np.inf  # every live row this near is listed (or already given)
        self._at = np.zeros(1, dtype=np.int64)  # the bucket taken from
        self._list(_LIST * target)

    def _list(self, rows: float) -> None:
        """List the rows beyond the reach up to about ``rows`` live rows out, in buckets."""
        pool = self._pool
        sample = self._sample[:self._sampled]
        # sample values per bucket: buckets of about an eighth of the rows listed, so a
        # take sorts little more than it returns, and at most _BUCKET rows
        step = max(1, int(min(_BUCKET, rows / 8) / self._stride))
        beyond = int(np.searchsorted(sample, self._reach, side="right"))
        last = max(int(rows / self._stride) + 1, beyond + step)
        reach = float(sample[last]) if last < len(sample) else np.inf
        cuts = sample[beyond + step:last:step]  # between buckets
        base = max(self._reach, 0.0)  # at or below every distance listed
        top = reach if reach < np.inf else (float(sample[-1]) if len(sample) else base)
        scale = _CELLS / (top - base) if top > base else 0.0
        table = np.searchsorted(cuts, base + np.arange(_CELLS) / scale, side="right") \
            if scale else np.zeros(_CELLS, dtype=np.int64)
        self._bounds = np.zeros(len(cuts) + 2, dtype=np.int64)
        kernels.bucket_rows(
            self._reach, reach, base, scale, table.astype(np.int64), self._D, self._slots,
            self._size, pool._solo, self._spill_d2, self._spill, self._spill_b,
            self._rows_d2, self._rows, self._bounds)
        self._lengths = np.diff(self._bounds)
        self._reach, self._listed = reach, rows
        self._at[0] = 0

    def _remember(self, positions: np.ndarray, distances: np.ndarray) -> None:
        self._given = len(positions)
        last = len(positions) - 1
        if last >= 0 and not (last == 0 and self._include is not None):
            self._floor[:] = distances[last], positions[last]

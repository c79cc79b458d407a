"""The searches of :mod:`core.methods.spatial_search` on two threads: the run's own and
a helper that takes half of each search.

Split
    The k-d tree's nodes at one depth (about sixteen leaves below each) are dealt out
    alternately: part 0 searches the subtrees of even rank at that depth, part 1 those
    of odd rank (siblings always differ), both from the root down
    (:func:`~core.methods.spatial_search._nearest_part`,
    :func:`~core.methods.spatial_search._farthest_part`; a one-thread search is part 0
    of a tree that is not split). Each part keeps its own best answers and publishes its
    bound (the m-th best distance of a nearest search, the best distance of a farthest
    one) in a shared slot; a part prunes with the better of its own bound and the
    other's. A bound is always the distance of a
    live record, so pruning with the other part's is pruning with a record that is
    there: a node or row is skipped only when strictly worse, as in the one-thread
    searches. The answer is the better of the two parts' answers under the same order
    (distance, then the record first in the input), so it is the one-thread answer
    exactly; the tests compare them.
Handing over
    The run's thread publishes a search (its query and kind, then a sequence number s,
    with release order) and searches part 0. The helper, spinning on the sequence
    number while a run is forming groups, claims part 1 with an atomic compare-and-swap
    of a claim word from 4s to 4s + 1 and publishes the end of its part. Having finished
    part 0, the run's thread tries the same swap to 4s + 2: if it wins, the helper was
    not there (asleep, busy or descheduled) and it searches part 1 itself; if it loses,
    it waits for the helper's part. So the run never waits for a helper that has not
    started, and on a machine whose other core is busy it runs about as fast as on one
    thread. A wait longer than ``PATIENCE`` spins (a helper descheduled mid-part) is
    given up: the run's thread searches part 1 itself in its own scratch arrays.
Idle
    The helper spins only while the run is inside its compiled loop
    (:meth:`SearchHelper.begin`/:meth:`~SearchHelper.end` around it) and otherwise
    waits on an event, using no processor.
"""

from __future__ import annotations

import numpy as np

from core.compiled import kernel
from core.methods import spatial_search as search
from core.methods.spatial_screen import query_buffer
from core.methods.atomics import load as _load, store as _store, swap as _swap
from core.methods.task_helper import TaskHelper
from core.threads import second_thread_allowed, single_thread

__all__ = ["SearchHelper", "helper_wanted", "single_thread", "new_state", "part_scratch"]

# Slots of the control vector (int64).
(_SEQ, _CLAIM, _DONE, _STOP, _KIND, _M, _SPLIT_LO, _SPLIT_HI, _GAVE_UP, _ON,
 _PATIENCE, _SERVED) = range(12)
_NEAREST, _FARTHEST = 0, 1
ON = _ON  # the slot the compiled loop reads: search on two threads now
PATIENCE = 20_000_000  # spins (some tens of milliseconds) before part 1 is taken back
_SUBTREE_LEVELS = 4  # the split depth: this many levels above the leaves
_MIN_LEVELS = 6  # smaller trees are searched on one thread


def _search(ctrl, query, shared, tree, taken, anchor, scratch, part):
    """Part ``part`` of the published search (kind, m and split in ``ctrl``); its answer
    goes to the scratch: the nearest list and its length ``out[0]``, or the farthest
    record's (row, record) in ``out[1:3]`` and its d² in ``best_d2[0]``."""
    (P, screen, head, end, members, row_of, leaf_of, start, stop, first_leaf, lo, hi, cnt,
     top, rho2) = tree
    stack, stack_d2, best_d2, best_id, buffer32, q32, keys, nodes, work, out = scratch
    if ctrl[_KIND] == _NEAREST:
        out[0] = search._nearest_part(query, ctrl[_M], taken, first_leaf, start, head,
                                      end, members, P, screen, lo, hi, cnt, stack, stack_d2,
                                      best_d2, best_id, buffer32, q32, work, part,
                                      ctrl[_SPLIT_LO], ctrl[_SPLIT_HI], shared)
    else:
        out[1], out[2], best_d2[0] = search._farthest_part(
            query, anchor, first_leaf, start, head, end, members, P, screen, lo, hi,
            cnt, top, keys, nodes, buffer32, q32, work, part, ctrl[_SPLIT_LO],
            ctrl[_SPLIT_HI], shared)


def _serve(ctrl, query, shared, tree, taken, anchor, scratch):
    """The helper's loop: claim part 1 of each new search until ``ctrl[_STOP]``."""
    last = 0  # search 0 is never published
    while not _load(ctrl, _STOP):
        seq = _load(ctrl, _SEQ)
        if seq == last:
            continue
        last = seq
        if _swap(ctrl, _CLAIM, 4 * seq, 4 * seq + 1):
            _search(ctrl, query, shared, tree, taken, anchor, scratch, 1)
            ctrl[_SERVED] += 1  # written by the helper only
            _store(ctrl, _DONE, seq)


def _publish(ctrl, query, shared, kind, m, q):
    """Make a search the current one; return its sequence number."""
    seq = ctrl[_SEQ] + 1
    query[:] = q
    ctrl[_KIND], ctrl[_M] = kind, m
    init = np.inf if kind == _NEAREST else -1.0
    _store(shared, 0, init)
    _store(shared, 1, init)
    _store(ctrl, _CLAIM, 4 * seq)
    _store(ctrl, _SEQ, seq)
    return seq


def _finish(ctrl, query, shared, tree, taken, anchor, spare, helper, seq):
    """After part 0: part 1 here unless the helper claimed it, else wait for it (or,
    past ``ctrl[_PATIENCE]`` spins, do it here after all); the scratch holding it."""
    if _swap(ctrl, _CLAIM, 4 * seq, 4 * seq + 2):
        _search(ctrl, query, shared, tree, taken, anchor, spare, 1)
        return spare
    spins = 0
    while _load(ctrl, _DONE) != seq:
        spins += 1
        if spins > ctrl[_PATIENCE]:  # the helper may still be in this search: no more
            ctrl[_GAVE_UP] += 1  # searches on two threads until it is back (begin)
            ctrl[_ON] = 0
            _search(ctrl, query, shared, tree, taken, anchor, spare, 1)
            return spare
    return helper


def _run(ctrl, query, shared, tree, taken, anchor, mine, spare, helper, kind, m, q):
    """Publish a search, do part 0, and part 1 too unless the helper took it; return
    the scratch holding part 1's answer."""
    seq = _publish(ctrl, query, shared, kind, m, q)
    _search(ctrl, query, shared, tree, taken, anchor, mine, 0)
    return _finish(ctrl, query, shared, tree, taken, anchor, spare, helper, seq)


def _merge(mine, other, m, best_id):
    """The m first of the two parts' nearest lists (distance, then record) into
    ``best_id``; returns how many."""
    d0, i0, n0 = mine[2], mine[3], mine[9][0]
    d1, i1, n1 = other[2], other[3], other[9][0]
    a, b, size = 0, 0, 0
    while size < m and (a < n0 or b < n1):
        if b >= n1 or (a < n0 and (d0[a] < d1[b] or (d0[a] == d1[b] and i0[a] < i1[b]))):
            best_id[size] = i0[a]
            a += 1
        else:
            best_id[size] = i1[b]
            b += 1
        size += 1
    return size


def nearest(q, m, ctrl, query, shared, tree, taken, anchor, mine, spare, helper, best_id):
    """The m live records nearest to q into ``best_id`` (ascending distance, then record),
    as :func:`~core.methods.spatial_search._nearest`; returns how many."""
    other = _run(ctrl, query, shared, tree, taken, anchor, mine, spare, helper, _NEAREST, m,
                 q)
    return _merge(mine, other, m, best_id)


def farthest(q, ctrl, query, shared, tree, taken, anchor, mine, spare, helper):
    """Row of the live record farthest from q (ties to the first record), as
    :func:`~core.methods.spatial_search._farthest_from`."""
    other = _run(ctrl, query, shared, tree, taken, anchor, mine, spare, helper, _FARTHEST, 1,
                 q)
    b0, b1 = mine[2][0], other[2][0]
    r0, r1 = mine[9][2], other[9][2]
    if b1 > b0 or (b1 == b0 and r1 >= 0 and (r0 < 0 or r1 < r0)):
        return other[9][1]
    return mine[9][1]


for _name in ("_search", "_serve", "_publish", "_finish", "_run", "_merge", "nearest",
              "farthest"):
    _compiled = kernel(globals()[_name])
    if _compiled is not None:
        globals()[_name] = _compiled


def part_scratch(n_nodes: int, depth: int, m: int, leaf: int, d: int) -> tuple:
    """One part's arrays: the stack, its best list, the screen's buffers, the heap, the
    rows examined (nearest, farthest) and the answer (:func:`_search`)."""
    return (np.zeros(depth, dtype=np.int64), np.zeros(depth), np.zeros(max(m, 1)),
            np.zeros(max(m, 1), dtype=np.int64), np.zeros(leaf, dtype=np.float32),
            query_buffer(d), np.zeros(n_nodes), np.zeros(n_nodes, dtype=np.int64),
            np.zeros(2, dtype=np.int64), np.zeros(3, dtype=np.int64))


def new_state(levels: int, d: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(ctrl, query, shared)`` for a tree of ``levels`` levels: the split depth set."""
    if levels < 1:
        raise ValueError("a tree of one leaf cannot be split")
    ctrl = np.zeros(12, dtype=np.int64)
    depth = max(1, levels - _SUBTREE_LEVELS)
    ctrl[_SPLIT_LO], ctrl[_SPLIT_HI] = (1 << depth) - 1, (1 << (depth + 1)) - 1
    # No search 0 is published: its claim word reads as taken by the run's thread.
    ctrl[_STOP], ctrl[_PATIENCE], ctrl[_CLAIM] = 1, PATIENCE, 2
    return ctrl, np.zeros(d), np.zeros(2)


def helper_wanted(levels: int) -> bool:
    """Whether a run on a tree of ``levels`` levels gets a helper thread: a tree deep
    enough, and a second thread allowed (:func:`core.threads.second_thread_allowed`:
    compiled, two processors or more, not ``MICROAGG_SEARCH_THREADS=1``, not inside
    :class:`~core.threads.single_thread`)."""
    return levels >= max(_MIN_LEVELS, 1) and second_thread_allowed()


class SearchHelper(TaskHelper):
    """The helper thread of one run (module notes).

    The run calls :meth:`begin` before each stretch of its compiled loop and :meth:`end`
    after it (also after an error), and :meth:`close` at the end. ``ctrl[ON]`` tells the
    compiled loop whether this stretch searches on two threads. Which way is faster
    depends on what else the machine runs, so it is measured: the third stretch, then
    every ``_PROBE``-th, goes the other way, and its seconds per group are compared with
    the mean of the stretches just before and after it (the cost of a group drifts as
    records leave; the mean of both neighbours cancels the drift). Each probe gives an
    estimate of log(one thread / two threads); their running mean (each new probe weighs
    half) chooses the way: a busy second processor makes the helper's half late, and the
    run then keeps to one thread until the probes find two faster again. One noisy probe
    does not turn a run around that earlier probes found clearly faster one way. Once
    one way is clearly faster (by more than e^0.2, 22 %), a probe comes every
    ``_PROBE_CLEAR``-th stretch only, as a probe costs what the other way loses.
    """

    _ON, _STOP, _SERVED, _GAVE_UP = _ON, _STOP, _SERVED, _GAVE_UP  # this module's slots

    def __init__(self, ctrl, query, shared, tree, taken, anchor, scratch):
        super().__init__(ctrl, _serve, (ctrl, query, shared, tree, taken, anchor, scratch),
                         name="microagg-search-helper")

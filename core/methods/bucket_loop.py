"""tc-bucket's classes (Domingo-Ferrer & Soria-Comas 2015, Section 6.3), compiled.

:func:`core.methods.bucket._form_classes` is the reference: each class's seed is the
record farthest from the centroid of the records left, and its class the planned
composition whose nearest records of each bucket lie closest to the seed. Here the same
loop runs compiled, a budget of classes per call (about a tenth of a second, then
progress and Cancel), on the structures of t-closeness-first's loop
(:mod:`core.methods.tfirst_loop`): the pool of everyone
(:class:`~core.methods.spatial_pool.SpatialPool`, its state handed over) for the
centroid and the seed, and one spatial index per bucket
(:class:`~core.methods.spatial_subsets.SubsetIndex`) for the nearest records, on one
thread; the pool is built again on the records left as they halve
(:func:`~core.methods.tfirst_loop.pool_on_live`).

Exactness: the nearest records of a bucket are its nearest in the reference's distances,
ties to the first in input order, and the centroid is the pool's own running sum, so the
classes are the reference's, label for label (the tests compare them). The reference
puts the seed first among its bucket's records; a search does too, since the seed is
the first record left of its identical rows (it is chosen first in input order on
ties) and at distance 0, unless a different record lies at distance 0 as well (the
squared differences underflow), when it is moved to the front as the reference has it.
Where squared distances fall below float64's normal range (about 1e-308: values about
1e-156 apart), ties in the farthest search may be broken differently, as on MDAV's
paths; the product standardizes the attributes first, so that takes an attribute 1e150
times wider than most of its values.
"""

from __future__ import annotations

import time

import numpy as np

from core.compiled import kernel
from core.methods import tfirst_loop as loop
from core.methods import tfirst_tasks as tasks
from core.progress import TaskState, next_budget

__all__ = ["bucket_classes"]

_STEPS = 64  # progress reports per run at least


def _search(j, query, seed, home, in_bucket, want, trees, part, found, near_id, near_d2):
    """Bucket j's ``want[j]`` records nearest to the query, nearest first (numbers within
    the bucket, exact squared distances), the seed first in its own bucket."""
    found[j] = 0
    if want[j] == 0:
        return
    tasks._search_subset(j, query, want, trees, part)
    count = part[9][j]
    best_d2, ids = part[2], part[10]
    for i in range(count):
        near_id[j, i], near_d2[j, i] = ids[j, i], best_d2[i]
    found[j] = count
    if j != home or near_id[j, 0] == in_bucket[seed]:
        return
    # Another record at distance 0 before the seed (module notes): the seed first.
    mine = in_bucket[seed]
    kept = 1
    for i in range(count):
        if kept < count and ids[j, i] != mine:
            near_id[j, kept], near_d2[j, kept] = ids[j, i], best_d2[i]
            kept += 1
    near_id[j, 0], near_d2[j, 0] = mine, 0.0


def _classes(budget, n_classes, types, type_count, trees, subsets, codes, in_bucket, pool,
             part, want, found, near_id, near_d2, chosen, labels, st):
    """Form up to ``budget`` classes (or finish)."""
    X = pool[0]
    query = part[12]
    b = types.shape[1]
    target = min(st[tasks.CLUSTERS] + budget, n_classes)
    while st[tasks.CLUSTERS] < target:
        seed = loop._from_centroid(pool, st)
        query[:] = X[seed]
        home = codes[seed]
        for j in range(b):
            need = 0
            for a in range(types.shape[0]):
                if type_count[a] > 0 and types[a, j] > need:
                    need = types[a, j]
            want[j] = need
            _search(j, query, seed, home, in_bucket, want, trees, part, found, near_id,
                    near_d2)
        best, best_cost = -1, np.inf
        for a in range(types.shape[0]):
            if type_count[a] == 0:
                continue
            cost = 0.0
            for j in range(b):
                partial = 0.0
                for i in range(types[a, j]):
                    partial += near_d2[j, i]
                cost += partial
            if best < 0 or cost < best_cost:
                best, best_cost = a, cost
        type_count[best] -= 1
        size = 0
        out_n, out_id = part[9], part[10]
        for j in range(b):
            take = types[best, j]
            if take > found[j]:
                st[tasks.BAD] = 1
                take = found[j]
            records = subsets[j]
            for i in range(take):
                out_id[j, i] = near_id[j, i]
                chosen[size] = records[near_id[j, i]]
                size += 1
            out_n[j] = take
            tasks._remove_subset(j, trees, part)
        group = chosen[:size]
        group.sort()
        for i in range(size):
            labels[group[i]] = st[tasks.CLUSTERS]
        st[tasks.CLUSTERS] += 1
        tasks._take_pool(group, pool, st)


for _name in ("_search", "_classes"):
    _compiled = kernel(globals()[_name])
    if _compiled is not None:
        globals()[_name] = _compiled


def bucket_classes(X: np.ndarray, codes: np.ndarray, types: np.ndarray,
                   type_count: np.ndarray, state: TaskState) -> np.ndarray:
    """The classes of :func:`core.methods.bucket._form_classes` (its labels).

    ``codes`` are the records' buckets (0…b−1), ``types`` the distinct planned
    compositions (rows of records per bucket) and ``type_count`` how many classes take
    each (changed in place). ``state`` gets progress about every tenth of a second (at
    least ``_STEPS`` times) and may cancel there. Needs the compiled kernels.
    """
    X = np.ascontiguousarray(X, dtype=np.float64)
    n, d = X.shape
    codes = np.ascontiguousarray(codes, dtype=np.int64)
    types = np.ascontiguousarray(types, dtype=np.int64)
    b = types.shape[1]
    members = [np.flatnonzero(codes == j) for j in range(b)]
    in_bucket = np.zeros(n, dtype=np.int64)
    for records in members:
        in_bucket[records] = np.arange(len(records))
    everyone, indexes = loop.build_indexes(X, members, state.check)
    pool, st, leaf = loop.take_over(everyone, indexes)
    del everyone  # its arrays are the pool's now, and it is built again as it empties
    m = max(int(types.max(initial=0)), 1)
    part = tasks.thread_scratch(len(pool[14]), indexes.scratch_shape[0], m, leaf, d, b) + (
        np.zeros(d),)
    want, found = np.zeros(b, dtype=np.int64), np.zeros(b, dtype=np.int64)
    near_id, near_d2 = np.zeros((b, m), dtype=np.int64), np.zeros((b, m))
    chosen = np.zeros(b * m, dtype=np.int64)
    labels = np.full(n, -1, dtype=np.int64)
    n_classes = int(type_count.sum())
    most = max(1, -(-n_classes // _STEPS))
    chunk = min(16, most)
    while st[tasks.CLUSTERS] < n_classes:
        began = time.perf_counter()
        _classes(chunk, n_classes, types, type_count, indexes.trees, indexes.subsets, codes,
                 in_bucket, pool, part, want, found, near_id, near_d2, chosen, labels, st)
        indexes.reindex()
        if st[tasks.CLUSTERS] < n_classes and loop.rebuild_due(pool):
            total, alive = pool[1], pool[2]
            pool = None  # the old pool goes before the new one is built
            pool = loop.pool_on_live(X, total, alive, st, state.check)
        if st[tasks.BAD] or part[8][3]:
            raise AssertionError("bucket index: a planned class found too few records")
        done = int(st[tasks.CLUSTERS])
        state.step(done / n_classes, f"tc-bucket: class {done} of {n_classes}")
        spent = time.perf_counter() - began
        chunk = next_budget(chunk, spent, most)
    return labels

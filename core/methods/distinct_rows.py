"""Identical rows of a table, found by hashing: the first step of the spatial index.

Identical records are stored once in :mod:`core.methods.spatial_index`, with the queue
of their record numbers in input order. Rows are hashed (FNV-style over their bit
patterns, ``−0.0`` read as ``0.0``), sorted by hash with a stable sort, and every run of
equal hashes is split into runs of equal rows by comparing the values, so a collision
never merges different rows. The table is read where it lies: a copy of it and of its
bits would be two more arrays of its size (2 GB for a million records of 124 embedded
columns) while the index is built.
"""

from __future__ import annotations

import numpy as np

from core.compiled import kernel

__all__ = ["distinct_rows"]


def _group_rows(X, hashes, order):
    """Split runs of equal hashes into runs of equal rows (every value ``==``: −0.0
    and 0.0 alike, as the hash reads them), keeping input order inside."""
    n, d = X.shape[0], X.shape[1]
    row_of = np.empty(n, np.int64)
    members = np.empty(n, np.int64)
    starts = np.empty(n + 1, np.int64)
    rows = 0
    a = 0
    gid = np.empty(n, np.int64)
    reps = np.empty(n, np.int64)
    while a < n:
        b = a + 1
        while b < n and hashes[order[b]] == hashes[order[a]]:
            b += 1
        n_reps = 0
        for i in range(a, b):
            found = -1
            for r in range(n_reps):
                same = True
                for j in range(d):
                    if X[order[i], j] != X[reps[r], j]:
                        same = False
                        break
                if same:
                    found = r
                    break
            if found < 0:
                reps[n_reps] = order[i]
                found = n_reps
                n_reps += 1
            gid[i] = found
        position = a
        for r in range(n_reps):
            starts[rows + r] = position
            for i in range(a, b):
                if gid[i] == r:
                    members[position] = order[i]
                    row_of[order[i]] = rows + r
                    position += 1
        rows += n_reps
        a = b
    starts[rows] = n
    return members, starts[:rows + 1].copy(), row_of


def _hash(bits, hashes):
    """Each row's hash from the bit patterns of its values (``bits``: the table viewed
    as uint64), −0.0 read as 0.0."""
    n, d = bits.shape[0], bits.shape[1]
    minus_zero = np.uint64(1) << np.uint64(63)
    for i in range(n):
        h = np.uint64(1469598103934665603)
        for j in range(d):
            b = bits[i, j]
            if b == minus_zero:
                b = np.uint64(0)
            h = (h ^ b) * np.uint64(1099511628211)
            h ^= h >> np.uint64(29)
        hashes[i] = h


for _name in ("_group_rows", "_hash"):
    _compiled = kernel(globals()[_name])
    if _compiled is not None:
        globals()[_name] = _compiled


def distinct_rows(X: np.ndarray):
    """Group identical rows of ``X``.

    Returns ``(members, starts, row_of)``: the record numbers of distinct row u are
    ``members[starts[u]:starts[u + 1]]`` in input order, and ``row_of[i]`` is record i's
    distinct row. ``−0.0`` and ``0.0`` count as equal (their distances are equal).
    """
    X = np.ascontiguousarray(X, dtype=np.float64)  # read in place: no copy of the table
    hashes = np.empty(len(X), dtype=np.uint64)
    _hash(X.view(np.uint64), hashes)
    order = np.argsort(hashes, kind="stable")
    return _group_rows(X, hashes, order)

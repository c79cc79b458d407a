"""Identical rows of a table, found by hashing: the first step of the spatial index.

Identical records are stored once in :mod:`core.methods.spatial_index`, with the queue
of their record numbers in input order. Rows are hashed (FNV-style over their bit
patterns, ``−0.0`` read as ``0.0``), sorted by hash with a stable sort, and every run of
equal hashes is split into runs of equal rows by comparing the bits, so a collision
never merges different rows.
"""

from __future__ import annotations

import numpy as np

from core.compiled import kernel

__all__ = ["distinct_rows"]


def _group_rows(bits, order):
    """Split runs of equal hashes into runs of equal rows, keeping input order inside.

    ``bits`` holds each row's bit patterns and, in its last column, the row's hash.
    """
    n, d = bits.shape[0], bits.shape[1] - 1
    row_of = np.empty(n, np.int64)
    members = np.empty(n, np.int64)
    starts = np.empty(n + 1, np.int64)
    rows = 0
    a = 0
    gid = np.empty(n, np.int64)
    reps = np.empty(n, np.int64)
    while a < n:
        b = a + 1
        while b < n and bits[order[b], d] == bits[order[a], d]:
            b += 1
        n_reps = 0
        for i in range(a, b):
            found = -1
            for r in range(n_reps):
                same = True
                for j in range(d):
                    if bits[order[i], j] != bits[reps[r], j]:
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


def _hash(bits):
    n, d = bits.shape[0], bits.shape[1] - 1
    for i in range(n):
        h = np.uint64(1469598103934665603)
        for j in range(d):
            h = (h ^ bits[i, j]) * np.uint64(1099511628211)
            h ^= h >> np.uint64(29)
        bits[i, d] = h


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
    X = np.ascontiguousarray(X, dtype=np.float64) + 0.0  # −0.0 becomes 0.0
    bits = np.empty((len(X), X.shape[1] + 1), dtype=np.uint64)
    bits[:, :-1] = X.view(np.uint64)
    _hash(bits)
    order = np.argsort(bits[:, -1], kind="stable")
    return _group_rows(bits, order)

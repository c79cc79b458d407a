"""Compiled Hansen–Mukherjee shortest path over an order: the ordered cuts at census scale.

The dynamic programme of :func:`core.methods.univariate.optimal_partition_of_order`
(Nin, *One dimension microaggregation (Mic1D-k)*, Section 2.2, after Hansen &
Mukherjee, IEEE TKDE 15(4), 2003), written as loops that :func:`core.compiled.kernel`
compiles. Vocabulary as in :mod:`core.methods.univariate`: node j stands for "the first
j records of the order are grouped", ``cost[j]`` is the cheapest SSE of such a grouping
and ``last_size[j]`` the size of its last group.

Same partition as the numpy reference, not merely the same SSE. The kernels repeat the
reference's floating-point operations one by one, in the same order:

- centred value ``x − mean`` (the mean is computed once, by numpy, for both paths);
- prefix sums added row after row (what ``numpy.cumsum`` does); squared norms and the
  squared norm of a run's sum added column after column, starting from 0;
- the edge cost ``(Q[j] − Q[i]) − |P[j] − P[i]|² / s``, raised to 0 when negative;
- the last group of node j is the FIRST size s = k, k+1, .. 2k−1 whose total
  ``cost[j − s] + edge`` is strictly smallest (``numpy.argmin``'s first minimum).

numba does not reorder or fuse floating-point operations unless asked (no fastmath),
so each number equals the reference's bit for bit; the tests compare the ``cost``
arrays of both paths exactly on random, tie-heavy and edge-case inputs. A linear-time
search (SMAWK, as in the ``microagg1d`` package) relies on the Monge property of the
exact costs; with rounded costs it can pick another of two nearly equal paths, so it is
not used. The programme is O(n·k·d) time and O(n·d) memory.

Each kernel call settles a bounded slice of nodes (at most 1/200 of them and about
2^23 attribute operations), then returns so the caller reports progress and honours
cancellation: a call lasts a few milliseconds at any size.
"""

from __future__ import annotations

import numpy as np

from core.compiled import COMPILED, kernel
from core.progress import TaskState

__all__ = ["COMPILED", "centred_prefix_sums", "shortest_path", "group_sizes", "stable_argsort"]

# Attribute operations (edges × attributes) settled per kernel call: a few milliseconds.
_WORK_PER_CALL = 1 << 23


def _prefix_kernel(X, mean, prefix, prefix_sq):
    n, d = X.shape
    for c in range(d):
        prefix[c, 0] = 0.0
    prefix_sq[0] = 0.0
    for i in range(n):
        norm = 0.0
        for c in range(d):
            value = X[i, c] - mean[c]
            prefix[c, i + 1] = prefix[c, i] + value
            norm += value * value
        prefix_sq[i + 1] = prefix_sq[i] + norm


def _settle_kernel(prefix, prefix_sq, k, start, stop, cost, last_size, norm, total):
    # Candidate t is the last group of size s = k + t, from node j − s to node j. The
    # loops over t carry no dependency, so they run on vector registers; every norm
    # still adds its columns in order (the loop over columns is the outer one).
    d = prefix.shape[0]
    for j in range(start, stop):
        m = min(2 * k - 1, j) - k + 1
        for t in range(m):
            norm[t] = 0.0
        for c in range(d):
            at_j = prefix[c, j]
            for t in range(m):
                difference = at_j - prefix[c, j - k - t]
                norm[t] += difference * difference
        at_j_sq = prefix_sq[j]
        for t in range(m):
            i = j - k - t
            edge = (at_j_sq - prefix_sq[i]) - norm[t] / (k + t)
            if edge < 0.0:  # rounding can leave a tiny negative SSE
                edge = 0.0
            total[t] = cost[i] + edge
        best = 0
        for t in range(1, m):
            if total[t] < total[best]:  # strictly: the first minimum, the smallest group
                best = t
        cost[j] = total[best]
        last_size[j] = k + best


def _group_sizes_kernel(last_size):
    n = last_size.size - 1
    count = 0
    j = n
    while j > 0:
        count += 1
        j -= last_size[j]
    sizes = np.empty(count, dtype=np.int64)
    j = n
    while j > 0:
        count -= 1
        sizes[count] = last_size[j]
        j -= last_size[j]
    return sizes


_DIGIT_BITS = 11  # six passes of 2048 buckets cover the 64 bits of a key
_DIGITS = 6
_ROWS_PER_CALL = 1 << 21  # a radix pass over this many rows takes some 10 to 50 ms


def _radix_keys_kernel(bits, keys, counts, digit_bits, start, stop):
    # Unsigned keys in the order of the floats: negative floats have their bits flipped,
    # others their sign bit set; −0.0 (the sign bit alone) is first read as 0.0.
    # counts[p, b] counts the keys whose digit p (digit_bits bits from bit p·digit_bits) is b.
    digits, buckets = counts.shape
    sign = np.uint64(1) << np.uint64(63)
    mask = np.uint64(buckets - 1)
    for i in range(start, stop):
        b = bits[i]
        if b == sign:
            b = np.uint64(0)
        key = ~b if b & sign else b | sign
        keys[i] = key
        for p in range(digits):
            counts[p, (key >> np.uint64(digit_bits * p)) & mask] += 1


def _radix_pass_kernel(keys, order, keys_out, order_out, position, shift, start, stop):
    mask = np.uint64(position.size - 1)
    for i in range(start, stop):
        key = keys[i]
        bucket = (key >> np.uint64(shift)) & mask
        at = position[bucket]
        position[bucket] = at + 1
        keys_out[at] = key
        order_out[at] = order[i]


_prefix_compiled = kernel(_prefix_kernel)
_settle_compiled = kernel(_settle_kernel)
_group_sizes_compiled = kernel(_group_sizes_kernel)
_radix_keys_compiled = kernel(_radix_keys_kernel)
_radix_pass_compiled = kernel(_radix_pass_kernel)


def stable_argsort(values: np.ndarray, *, state: TaskState | None = None) -> np.ndarray:
    """``numpy.argsort(values, kind="stable")`` of finite floats, by a radix sort.

    Least-significant-digit radix sort (six stable passes of 11 bits) of the float64
    bit patterns mapped to unsigned integers in the same order; −0.0 is first turned
    into 0.0, which it equals. A stable sort of equal keys keeps the input order, so
    the permutation is numpy's stable one exactly. O(n) time, four n-element arrays.

    Parameters
    ----------
    values : ndarray of shape (n,), float64
        Finite values (checked by the caller).
    state : TaskState, optional
        Checked for cancellation between bounded steps.

    Returns
    -------
    order : ndarray of shape (n,), int64
    """
    values = np.ascontiguousarray(values, dtype=np.float64)
    if _radix_pass_compiled is None or values.size < 2:
        return np.argsort(values, kind="stable")
    state = state or TaskState()
    n = values.size
    bits = values.view(np.uint64)  # −0.0 is read as 0.0 by the keys kernel
    keys = np.empty(n, dtype=np.uint64)
    counts = np.zeros((_DIGITS, 1 << _DIGIT_BITS), dtype=np.int64)
    for start in range(0, n, _ROWS_PER_CALL):
        state.check()
        _radix_keys_compiled(bits, keys, counts, _DIGIT_BITS, start, min(start + _ROWS_PER_CALL, n))
    order = np.arange(n, dtype=np.int64)
    keys_out = np.empty_like(keys)
    order_out = np.empty_like(order)
    for digit in range(_DIGITS):
        if counts[digit].max() == n:  # every key has the same digit: nothing moves
            continue
        position = np.zeros(1 << _DIGIT_BITS, dtype=np.int64)
        np.cumsum(counts[digit][:-1], out=position[1:])
        for start in range(0, n, _ROWS_PER_CALL):
            state.check()
            _radix_pass_compiled(keys, order, keys_out, order_out, position,
                                 _DIGIT_BITS * digit, start, min(start + _ROWS_PER_CALL, n))
        keys, keys_out = keys_out, keys
        order, order_out = order_out, order
    return order


def centred_prefix_sums(X: np.ndarray, mean: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Prefix sums of the centred rows and of their squared norms (compiled path).

    Parameters
    ----------
    X : ndarray of shape (n_records, n_attributes), float64
    mean : ndarray of shape (n_attributes,)
        The centring vector (``X.mean(axis=0)``, computed by the caller).

    Returns
    -------
    prefix : ndarray of shape (n_attributes, n_records + 1)
        ``prefix[:, j]`` is the sum of the first j centred rows (one row per attribute,
        so that the kernel reads consecutive nodes from consecutive memory).
    prefix_sq : ndarray of shape (n_records + 1,)
        ``prefix_sq[j]`` is the sum of their squared norms (columns added in order).
    """
    n, d = X.shape
    prefix = np.empty((d, n + 1))
    prefix_sq = np.empty(n + 1)
    _prefix_compiled(X, np.ascontiguousarray(mean, dtype=np.float64), prefix, prefix_sq)
    return prefix, prefix_sq


def shortest_path(prefix: np.ndarray, prefix_sq: np.ndarray, *, k: int,
                  state: TaskState) -> tuple[np.ndarray, np.ndarray]:
    """``cost`` and ``last_size`` of every node, settled by the compiled kernel.

    Parameters
    ----------
    prefix, prefix_sq : ndarray
        From :func:`centred_prefix_sums`: shapes (n_attributes, n_records + 1) and
        (n_records + 1,).
    k : int
        Minimum group size, ``2 <= k <= n_records`` (checked by the caller).
    state : TaskState
        Receives progress at least once per 1 % of the nodes; may cancel the run.

    Returns
    -------
    cost : ndarray of shape (n_records + 1,)
        Minimum SSE of grouping the first j records (+inf for nodes 1 .. k−1).
    last_size : ndarray of shape (n_records + 1,), int64
        Size of the last group on the chosen path to node j (0 for nodes 0 .. k−1).
    """
    d, n = prefix.shape[0], prefix.shape[1] - 1
    cost = np.full(n + 1, np.inf)
    cost[0] = 0.0
    last_size = np.zeros(n + 1, dtype=np.int64)
    n_nodes = n - k + 1
    per_call = max(1, min(max(1, n_nodes // 200), _WORK_PER_CALL // (k * d)))
    norm = np.empty(k)
    total = np.empty(k)
    for start in range(k, n + 1, per_call):
        stop = min(start + per_call, n + 1)
        state.step((start - k) / n_nodes, "Optimal partition: shortest path")
        _settle_compiled(prefix, prefix_sq, k, start, stop, cost, last_size, norm, total)
    return cost, last_size


def group_sizes(last_size: np.ndarray) -> np.ndarray:
    """Sizes of the groups on the path walked back from the last node, first group first."""
    if _group_sizes_compiled is not None:
        return _group_sizes_compiled(last_size)
    boundaries = [last_size.size - 1]
    while boundaries[-1] > 0:
        boundaries.append(boundaries[-1] - int(last_size[boundaries[-1]]))
    return np.diff(np.asarray(boundaries[::-1], dtype=np.int64))

"""Compiled EMDs of clusters and of Algorithm 2's candidate swaps (t-closeness methods).

Soria-Comas et al., "t-Closeness through Microaggregation" (TKDE 2015), Section 2.2 (the
EMD) and Algorithm 2 (the swaps). The numpy reference is
:class:`core.privacy.attributes.TCloseAttribute` (``emd``, ``swap_emds``); these kernels
give the very same floats, so the compiled methods take the same decisions:

ordered distance
    ``n·s·(m−1)·EMD`` is an integer, ``Σ_{i<m−1} |h(i)|`` with ``h(i) = n·c(i) − s·G(i)``
    (c the cluster's cumulative count, G the table's). The reference forms it exactly in
    float64 (integers below 2**53) and divides by ``(n·s)·(m−1)``; here it is formed in
    int64 and divided by the same float, so the quotient is bit for bit the same.
    Swaps use the update of ``TCloseAttribute._ordered_swaps``: replacing a member of
    rank a by a record of rank b changes the integer by ``U(a) − U(b)`` (b < a) or
    ``D(b) − D(a)`` (b > a). :func:`ordered_state` prepares U and D of a cluster in
    O(|C| log m); each swap then costs O(1) after an O(log |C|) lookup per candidate.
equal distance
    Float sums, so the reference's operations are repeated in its order: the run-length
    sum of ``_nominal_batch`` (clusters up to ``_DIRECT_SWAP_SIZE``, every swapped
    cluster recomputed as ``_swap_emds_direct`` does) and the update of
    ``_nominal_swaps`` above that size.

Attribute tables are packed into padded matrices by :func:`pack_attributes` (one row
per attribute). Every function here is plain Python that ``core.compiled.kernel``
compiles; none is called uncompiled by the methods.
"""

from __future__ import annotations

import numpy as np

from core.compiled import COMPILED, kernel
from core.privacy.emd import _DIRECT_SWAP_SIZE

__all__ = ["PackedAttributes", "pack_attributes", "cluster_emd", "run_emd",
           "inverse_cumulative", "swap_values", "ordered_state", "DIRECT_SWAP_SIZE"]

DIRECT_SWAP_SIZE = _DIRECT_SWAP_SIZE
NOMINAL = 1


class PackedAttributes:
    """The confidential attributes as padded arrays for the kernels.

    Attributes
    ----------
    codes : ndarray of shape (n_attributes, n_records), int64
    kinds : ndarray of shape (n_attributes,), int64 (0 numerical, 1 nominal)
    ms : ndarray of shape (n_attributes,), int64
    cumulative : ndarray of shape (n_attributes, max m), int64 (G per attribute)
    prefix : ndarray of shape (n_attributes, max m + 1), int64 (P[x] = Σ_{i<x} G(i))
    counts : ndarray of shape (n_attributes, max m), int64
    n : int
    """

    def __init__(self, attributes):
        width = max(a.m for a in attributes)
        count = len(attributes)
        self.n = int(attributes[0].n)
        self.codes = np.ascontiguousarray(np.stack([a.codes for a in attributes]),
                                          dtype=np.int64)
        self.kinds = np.array([NOMINAL if a.kind == "nominal" else 0 for a in attributes],
                              dtype=np.int64)
        self.ms = np.array([a.m for a in attributes], dtype=np.int64)
        self.cumulative = np.zeros((count, width), dtype=np.int64)
        self.prefix = np.zeros((count, width + 1), dtype=np.int64)
        self.counts = np.zeros((count, width), dtype=np.int64)
        for row, a in enumerate(attributes):
            cumulative = np.cumsum(a.counts, dtype=np.int64)
            self.cumulative[row, :a.m] = cumulative
            self.prefix[row, 1:a.m + 1] = np.cumsum(cumulative)
            self.counts[row, :a.m] = a.counts


def pack_attributes(attributes) -> PackedAttributes:
    return PackedAttributes(attributes)


def _first_above(G, s, level, lo, hi):
    """First i in [lo, hi) with s·G(i) > level (hi if none); G non-decreasing."""
    while lo < hi:
        mid = (lo + hi) >> 1
        if s * G[mid] > level:
            hi = mid
        else:
            lo = mid + 1
    return lo


def _ordered_total(sorted_codes, s, G, P, n, m):
    """``Σ_{i<m−1}|n·c(i) − s·G(i)|`` of a cluster, in int64 (see the module notes)."""
    total = 0
    for j in range(s + 1):
        lo = 0 if j == 0 else sorted_codes[j - 1]
        hi = m - 1 if j == s else sorted_codes[j]
        if hi <= lo:
            continue
        level = j * n
        b = _first_above(G, s, level, lo, hi)
        total += level * (b - lo) - s * (P[b] - P[lo])
        total += s * (P[hi] - P[b]) - level * (hi - b)
    return total


def _nominal_value(sorted_codes, s, counts, n):
    """``_nominal_batch`` of one sorted row: the same float operations in the same order."""
    acc = 0.0
    i = 0
    while i < s:
        c = sorted_codes[i]
        j = i
        while j < s and sorted_codes[j] == c:
            j += 1
        share = counts[c] / n
        acc += abs((j - i) / s - share) - share
        i = j
    return 0.5 * (1.0 + acc)


def _cluster_emd(codes, members, count, kinds, ms, G, P, counts, n):
    """Largest EMD over the attributes of the cluster ``members[:count]``."""
    best = -np.inf
    buffer = np.empty(count, dtype=np.int64)
    for a in range(codes.shape[0]):
        if ms[a] <= 1:
            value = 0.0
        else:
            for i in range(count):
                buffer[i] = codes[a, members[i]]
            buffer.sort()
            if kinds[a] == NOMINAL:
                value = _nominal_value(buffer, count, counts[a], n)
            else:
                total = _ordered_total(buffer, count, G[a], P[a], n, ms[a])
                value = total / ((float(n) * count) * (ms[a] - 1))
        if value > best:
            best = value
    return best


def inverse_cumulative(packed: PackedAttributes) -> np.ndarray:
    """``inverse[a, v]``: the first rank i of attribute a with G(i) > v, for v = 0..n
    (m when there is none): the crossing of :func:`_first_above` in O(1)."""
    inverse = np.zeros((len(packed.ms), packed.n + 1), dtype=np.int64)
    values = np.arange(packed.n + 1)
    for row, m in enumerate(packed.ms):
        inverse[row] = np.searchsorted(packed.cumulative[row, :m], values, side="right")
    return inverse


def _run_total(codes, begin, s, inverse, P, n, m):
    """:func:`_ordered_total` of the sorted run ``codes[begin:begin + s]``, with the
    crossing of each step read from ``inverse`` (the same integer).

    s·G(i) > j·n holds exactly when G(i) > ⌊j·n/s⌋ (G is an integer), so the first
    such rank in [lo, hi) is ``inverse[⌊j·n/s⌋]`` held within [lo, hi].
    """
    total = 0
    for j in range(s + 1):
        lo = 0 if j == 0 else codes[begin + j - 1]
        hi = m - 1 if j == s else codes[begin + j]
        if hi <= lo:
            continue
        level = j * n
        b = min(max(inverse[level // s], lo), hi)
        total += level * (b - lo) - s * (P[b] - P[lo])
        total += s * (P[hi] - P[b]) - level * (hi - b)
    return total


def _run_emd(runs, begin, s, kinds, ms, inverse, P, counts, n):
    """Largest EMD over the attributes of a cluster whose codes are the sorted runs
    ``runs[a, begin:begin + s]``: the float :func:`_cluster_emd` gives, without its
    gather and sort."""
    best = -np.inf
    for a in range(runs.shape[0]):
        if ms[a] <= 1:
            value = 0.0
        elif kinds[a] == NOMINAL:
            value = _nominal_value(runs[a, begin:begin + s], s, counts[a], n)
        else:
            total = _run_total(runs[a], begin, s, inverse[a], P[a], n, ms[a])
            value = total / ((float(n) * s) * (ms[a] - 1))
        if value > best:
            best = value
    return best


def _ordered_state(sorted_codes, s, G, P, n, m, bounds, whole):
    """U and D of a cluster: per step j its range, breakpoints and whole sums.

    ``bounds[j] = (lo, A, B, C)``: on [lo, A) h ≥ n, on [A, B) 0 ≤ h < n, on [B, C)
    −n ≤ h < 0, beyond C h < −n. ``whole[j] = (U before step j, D before step j)``.
    Returns the cluster's integer total.
    """
    total = 0
    up_sum = 0
    down_sum = 0
    for j in range(s + 1):
        lo = 0 if j == 0 else sorted_codes[j - 1]
        hi = m - 1 if j == s else sorted_codes[j]
        if hi < lo:
            hi = lo
        level = j * n
        A = _first_above(G, s, level - n, lo, hi)
        B = _first_above(G, s, level, A, hi)
        C = _first_above(G, s, level + n, B, hi)
        bounds[j, 0] = lo
        bounds[j, 1] = A
        bounds[j, 2] = B
        bounds[j, 3] = C
        whole[j, 0] = up_sum
        whole[j, 1] = down_sum
        up, down, absolute = _partials(j, lo, A, B, C, hi, s, P, n)
        up_sum += up
        down_sum += down
        total += absolute
    whole[s + 1, 0] = up_sum
    whole[s + 1, 1] = down_sum
    return total


def _partials(j, lo, A, B, C, x, s, P, n):
    """Sums of up, down and |h| over [lo, x) within step j (x ≤ the step's end)."""
    a = min(A, x)
    b = min(B, x)
    c = min(C, x)
    level = j * n
    h_ab = level * (b - a) - s * (P[b] - P[a])
    h_bc = level * (c - b) - s * (P[c] - P[b])
    h_lo_b = level * (b - lo) - s * (P[b] - P[lo])
    h_b_x = level * (x - b) - s * (P[x] - P[b])
    up = n * (b - lo) + 2 * h_bc + n * (c - b) - n * (x - c)
    down = -n * (a - lo) + n * (b - a) - 2 * h_ab + n * (x - b)
    return up, down, h_lo_b - h_b_x


def _up_down(x, sorted_codes, s, P, n, bounds, whole):
    """U(x) and D(x): sums of |h+n|−|h| and |h−n|−|h| over ranks below x."""
    lo, hi = 0, s
    while lo < hi:  # step = number of members with rank <= x
        mid = (lo + hi) >> 1
        if sorted_codes[mid] <= x:
            lo = mid + 1
        else:
            hi = mid
    step = lo
    up, down, _ = _partials(step, bounds[step, 0], bounds[step, 1], bounds[step, 2],
                            bounds[step, 3], x, s, P, n)
    return whole[step, 0] + up, whole[step, 1] + down


def _swap_values(kind, m, member_codes, sorted_codes, s, incoming, P, counts, n, bounds,
                 whole, member_up, member_down, total, out):
    """``out[b]``: the attribute's EMD after the code ``incoming`` replaces member b.

    For the ordered distance ``bounds``, ``whole``, ``member_up``, ``member_down`` and
    ``total`` come from :func:`_ordered_state` (prepared once per cluster).
    """
    if m <= 1:
        for b in range(s):
            out[b] = 0.0
        return
    if kind != NOMINAL:
        up_y, down_y = _up_down(incoming, sorted_codes, s, P, n, bounds, whole)
        denominator = (float(n) * s) * (m - 1)
        for b in range(s):
            a = member_codes[b]
            if incoming < a:
                delta = member_up[b] - up_y
            elif incoming > a:
                delta = down_y - member_down[b]
            else:
                delta = 0
            out[b] = (total + delta) / denominator
        return
    table = counts
    if s <= DIRECT_SWAP_SIZE:
        swapped = np.empty(s, dtype=np.int64)
        for b in range(s):
            # sorted members without member b, with the incoming code inserted
            removed = False
            placed = False
            k = 0
            for i in range(s):
                c = sorted_codes[i]
                if not removed and c == member_codes[b]:
                    removed = True
                    continue
                if not placed and incoming <= c:
                    swapped[k] = incoming
                    k += 1
                    placed = True
                swapped[k] = c
                k += 1
            if not placed:
                swapped[k] = incoming
            out[b] = _nominal_value(swapped, s, table, n)
        return
    current = _nominal_value(sorted_codes, s, table, n)
    count_in = 0
    for i in range(s):
        if sorted_codes[i] == incoming:
            count_in += 1
    target_in = (s * table[incoming]) / n
    in_change = abs(count_in + 1 - target_in) - abs(count_in - target_in)
    for b in range(s):
        code = member_codes[b]
        if code == incoming:
            out[b] = current
            continue
        count_out = 0
        for i in range(s):
            if sorted_codes[i] == code:
                count_out += 1
        target_out = (s * table[code]) / n
        out_change = abs(count_out - 1 - target_out) - abs(count_out - target_out)
        out[b] = current + 0.5 * (out_change + in_change) / s


# Helpers are rebound to their compiled versions before any kernel first runs (numba
# reads a kernel's globals when it compiles it, at its first call).
if COMPILED:
    _first_above = kernel(_first_above)
    _partials = kernel(_partials)
    _up_down = kernel(_up_down)
    _nominal_value = kernel(_nominal_value)
    _ordered_total = kernel(_ordered_total)
    _run_total = kernel(_run_total)
cluster_emd = kernel(_cluster_emd)
run_emd = kernel(_run_emd)
ordered_state = kernel(_ordered_state)
swap_values = kernel(_swap_values)

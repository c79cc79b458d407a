"""The exact nearest-centroid search of the compiled refinement (:mod:`refine_kernel`).

A KD-tree over the live group centroids (Bentley 1975; median split of the widest
dimension, leaves of up to 8 groups). When a group's centroid moves, the boxes of its
leaf and of the leaf's ancestors grow to hold the new centroid; they never shrink, so a
box's distance remains a lower bound of the distance to every centroid inside it.
Rounding keeps that bound: the distance to a centroid and to its box are computed with
the same operations in the same order, and rounding is monotonic. A subtree is skipped
only when its bound is greater than the best distance so far, so an equal distance with
a lower group id is still found: the answer is the brute-force answer, ties to the lower
id. Groups made after the build are kept in a list compared directly.
"""

from __future__ import annotations

import numpy as np

from core.methods.refine_kernel import (
    END, IN_EXTRA, IN_TREE, LEAF, LEFT, N_EXTRAS, N_GROUPS, N_NODES, PARENT, RIGHT,
    START, UPDATES, USE_TREE, _LEAF, _jit, _to_group,
)

__all__ = ["nearest", "touch", "rebuild"]

_REBUILD_EXTRAS = 64


@_jit
def rebuild(count, sums, gint, meta, nodes, lo, hi, perm, extras, cent):
    """Build the tree over the live groups; empty the list of groups made since."""
    n_groups = meta[N_GROUPS]
    d = sums.shape[1]
    for g in range(len(count)):
        gint[g, IN_TREE] = 0
        gint[g, IN_EXTRA] = 0
    meta[N_EXTRAS] = 0
    meta[UPDATES] = 0
    m = 0
    for g in range(n_groups):
        if count[g] > 0:
            perm[m] = g
            m += 1
            for j in range(d):
                cent[g, j] = sums[g, j] / count[g]
            gint[g, IN_TREE] = 1
    if m == 0:
        meta[N_NODES] = 0
        return
    nodes[0, START] = 0
    nodes[0, END] = m
    nodes[0, PARENT] = -1
    n_nodes = 1
    stack = np.empty(64 + 2 * int(np.log2(m + 1)), dtype=np.int64)
    stack[0] = 0
    top = 1
    while top:
        top -= 1
        node = stack[top]
        a, b = nodes[node, START], nodes[node, END]
        for j in range(d):
            low, high = np.inf, -np.inf
            for t in range(a, b):
                v = cent[perm[t], j]
                low = min(low, v)
                high = max(high, v)
            lo[node, j], hi[node, j] = low, high
        if b - a <= _LEAF:
            nodes[node, LEFT] = -1
            nodes[node, RIGHT] = -1
            for t in range(a, b):
                gint[perm[t], LEAF] = node
            continue
        wide = 0
        for j in range(1, d):
            if hi[node, j] - lo[node, j] > hi[node, wide] - lo[node, wide]:
                wide = j
        values = np.empty(b - a)
        for t in range(a, b):
            values[t - a] = cent[perm[t], wide]
        order = np.argsort(values, kind="mergesort")
        block = perm[a:b].copy()
        for t in range(b - a):
            perm[a + t] = block[order[t]]
        middle = (a + b) // 2
        for child in range(2):
            nodes[n_nodes, START] = a if child == 0 else middle
            nodes[n_nodes, END] = middle if child == 0 else b
            nodes[n_nodes, PARENT] = node
            nodes[node, LEFT + child] = n_nodes
            stack[top] = n_nodes
            top += 1
            n_nodes += 1
    meta[N_NODES] = n_nodes


@_jit
def touch(count, sums, gint, meta, nodes, lo, hi, extras, g):
    """Group ``g`` changed: grow its boxes to its centroid, or list it if new."""
    meta[UPDATES] += 1
    if count[g] <= 0 or meta[N_NODES] == 0:
        return
    if gint[g, IN_TREE]:
        d = sums.shape[1]
        node = gint[g, LEAF]
        while node >= 0:
            grown = False
            for j in range(d):
                v = sums[g, j] / count[g]
                if v < lo[node, j]:
                    lo[node, j] = v
                    grown = True
                if v > hi[node, j]:
                    hi[node, j] = v
                    grown = True
            if not grown:
                break
            node = nodes[node, PARENT]
    elif not gint[g, IN_EXTRA]:
        gint[g, IN_EXTRA] = 1
        extras[meta[N_EXTRAS]] = g
        meta[N_EXTRAS] += 1


@_jit
def _box_distance(X, i, lo, hi, node):
    s = 0.0
    for j in range(X.shape[1]):
        x = X[i, j]
        if x < lo[node, j]:
            t = x - lo[node, j]
            s += t * t
        elif x > hi[node, j]:
            t = x - hi[node, j]
            s += t * t
    return s


@_jit
def nearest(X, i, exclude, count, sums, gint, meta, nodes, lo, hi, perm, extras, cent,
            hint):
    """The live group ≠ ``exclude`` with the nearest centroid to record ``i``.

    ``hint[i]``, the last answer for ``i``, is looked at first: a close first answer lets
    the search skip most of the tree. It is then set to the new answer.
    """
    best_g, best_d = -1, np.inf
    n_groups = meta[N_GROUPS]
    if not meta[USE_TREE]:
        for g in range(n_groups):
            if count[g] > 0 and g != exclude:
                dist = _to_group(X, i, sums, count, g)
                if dist < best_d:
                    best_g, best_d = g, dist
        return best_g
    if meta[N_NODES] == 0 or meta[N_EXTRAS] > _REBUILD_EXTRAS or \
            meta[UPDATES] > max(512, n_groups // 4):
        rebuild(count, sums, gint, meta, nodes, lo, hi, perm, extras, cent)
    for e in range(meta[N_EXTRAS]):
        g = extras[e]
        if count[g] > 0 and g != exclude and g < n_groups:
            dist = _to_group(X, i, sums, count, g)
            if dist < best_d or (dist == best_d and g < best_g):
                best_g, best_d = g, dist
    g = hint[i]
    if g >= 0 and g < n_groups and count[g] > 0 and g != exclude:
        dist = _to_group(X, i, sums, count, g)
        if dist < best_d or (dist == best_d and g < best_g):
            best_g, best_d = g, dist
    if meta[N_NODES] == 0:
        hint[i] = best_g
        return best_g
    stack = np.empty(256, dtype=np.int64)
    bound = np.empty(256)
    stack[0], bound[0] = 0, _box_distance(X, i, lo, hi, 0)
    top = 1
    while top:
        top -= 1
        if bound[top] > best_d:
            continue
        node = stack[top]
        left = nodes[node, LEFT]
        if left < 0:
            for t in range(nodes[node, START], nodes[node, END]):
                g = perm[t]
                if count[g] > 0 and g != exclude and g < n_groups and gint[g, IN_TREE] \
                        and gint[g, LEAF] == node:
                    dist = _to_group(X, i, sums, count, g)
                    if dist < best_d or (dist == best_d and g < best_g):
                        best_g, best_d = g, dist
            continue
        right = nodes[node, RIGHT]
        b_left = _box_distance(X, i, lo, hi, left)
        b_right = _box_distance(X, i, lo, hi, right)
        if b_left <= b_right:  # the nearer child is looked at first
            stack[top], bound[top] = right, b_right
            stack[top + 1], bound[top + 1] = left, b_left
        else:
            stack[top], bound[top] = left, b_left
            stack[top + 1], bound[top + 1] = right, b_right
        top += 2
    hint[i] = best_g
    return best_g

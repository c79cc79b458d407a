"""Spatial blocking: a 2^d-tree (k-d tree) that cuts the records into blocks of about N.

Solé, Muntés-Mulero & Nin, "A 2d-tree-based blocking method for microaggregating very
large data sets" (ARES 2012): split the records recursively at the median of one
attribute until a part is small enough, then microaggregate every part (block) on its
own. Records that are close in the quasi-identifier space end up in the same block, so
the information loss stays near that of the unblocked method while the cost falls from
O(n²) to O(n·N).

Choices made here (the paper leaves them open or assumes one machine):

* The tree is built on a uniform sample of the records measured with the whole table's
  parameters (:mod:`core.cluster.standardize`), so it is small and built on one machine;
  each sample point stands for ``n_stratum / n_sample_stratum`` records.
* A node is split on the attribute (column of ``X``) of largest variance among its
  points, at their median: ``x ≤ median`` goes left. When ties put every point on one
  side, ``x < median`` is tried, then the next attribute; a node whose points are all
  equal is a leaf that cannot be cut.
* A node stops being split when it stands for at most √2·``block_size`` records, so
  blocks hold between about 0.7·N and 1.4·N records (geometrically centred on N).
* Strata are natural blocks: every stratum gets its own tree, so a block never mixes
  strata. A stratum with fewer than k records is refused, naming it.
* After the records are routed and counted, a leaf with fewer than ``min_size``
  records (``k``, or more for a method that needs it) is merged with its sibling
  subtree, repeatedly, so every block has at least ``min_size`` records. A leaf that
  could not be cut (identical points) and holds many more than ``block_size`` records is
  dealt into ``c`` blocks by a hash of the record number, ``c`` small enough that each
  gets about ``4·min_size`` records at least; the engine counts the dealt blocks and
  deals no more a leaf whose blocks came out too small.

The routing (:meth:`Blocking.block_of`) is plain numpy and runs on the workers, one
partition at a time; a record's block depends only on its values, its stratum and its
row number, never on the partition it is read in.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from core.errors import MicroaggError

__all__ = ["Tree", "Blocking", "build_tree", "finish_blocking", "stratum_codes",
           "deal_hash"]

_LEAF = -1
_STOP = math.sqrt(2.0)  # split while a node stands for more than √2·N records


@dataclass(frozen=True)
class Tree:
    """A forest of k-d trees, one per stratum, in flat arrays.

    Attributes
    ----------
    feature, threshold, left, right : ndarray of shape (n_nodes,)
        The split of every node (``feature = −1`` at a leaf).
    leaf : ndarray of shape (n_nodes,)
        The leaf number of a leaf node, −1 elsewhere.
    parent : ndarray of shape (n_nodes,)
        The parent node (−1 at a root).
    solid : ndarray of bool, shape (n_leaves,)
        True for a leaf that could not be cut (all its sample points equal).
    roots : ndarray of shape (n_strata,)
        The root node of every stratum's tree.
    """

    feature: np.ndarray
    threshold: np.ndarray
    left: np.ndarray
    right: np.ndarray
    leaf: np.ndarray
    parent: np.ndarray
    solid: np.ndarray
    roots: np.ndarray

    @property
    def n_leaves(self) -> int:
        return int(self.solid.size)

    def leaf_of(self, X: np.ndarray, strata: np.ndarray) -> np.ndarray:
        """The leaf of every record: ``X`` (n × width) measured globally, ``strata`` the
        stratum codes (n,). Returns an int64 array of shape (n,)."""
        node = self.roots[strata].astype(np.int64)
        active = np.flatnonzero(self.feature[node] != _LEAF)
        while active.size:
            current = node[active]
            go_left = X[active, self.feature[current]] <= self.threshold[current]
            node[active] = np.where(go_left, self.left[current], self.right[current])
            active = active[self.feature[node[active]] != _LEAF]
        return self.leaf[node]


@dataclass(frozen=True)
class Blocking:
    """The final blocks: a tree, the block of every leaf, and how solid leaves are dealt.

    Attributes
    ----------
    tree : Tree
    first_block : ndarray of shape (n_leaves,)
        The (first) block of every leaf; merged leaves share one.
    deal : ndarray of shape (n_leaves,)
        How many blocks a leaf's records are dealt into by row number (1 for most).
    sizes : ndarray of shape (n_blocks,)
        Records per block (every one at least ``min_size``).
    """

    tree: Tree
    first_block: np.ndarray
    deal: np.ndarray
    sizes: np.ndarray

    @property
    def n_blocks(self) -> int:
        return int(self.sizes.size)

    def block_of(self, X: np.ndarray, strata: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """The block of every record (``rows``: the global row numbers), shape (n,)."""
        leaves = self.tree.leaf_of(X, strata)
        return self.first_block[leaves] + deal_hash(rows) % self.deal[leaves]


def deal_hash(rows: np.ndarray) -> np.ndarray:
    """A well-mixed non-negative number per row number (Fibonacci hashing), to deal a
    leaf's records into blocks evenly whatever the pattern of its row numbers."""
    mixed = np.asarray(rows, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    return (mixed >> np.uint64(33)).astype(np.int64)


def stratum_codes(frame: pd.DataFrame, strata: list[str], keys: pd.MultiIndex | None
                  ) -> np.ndarray:
    """The stratum number of every record of ``frame`` (zeros without strata)."""
    if not strata:
        return np.zeros(len(frame), dtype=np.int64)
    codes = keys.get_indexer(pd.MultiIndex.from_frame(frame[strata]))
    if (codes < 0).any():  # cannot happen: the keys are the whole table's
        raise MicroaggError(f"A record's stratum ({', '.join(strata)}) is not among the "
                            "strata counted over the whole table.")
    return codes.astype(np.int64)


def build_tree(X: np.ndarray, strata: np.ndarray, stratum_sizes: np.ndarray, *,
               block_size: int) -> Tree:
    """Build the forest from sample points (module notes).

    Parameters
    ----------
    X : ndarray of shape (n_sample, width)
        The sample, measured with the whole table's parameters.
    strata : ndarray of shape (n_sample,)
        Stratum code of every sample point.
    stratum_sizes : ndarray of shape (n_strata,)
        Records per stratum in the whole table.
    block_size : int
        The wanted records per block, N.
    """
    nodes: dict[str, list] = {"feature": [], "threshold": [], "left": [], "right": [],
                              "leaf": [], "parent": []}
    solid: list[bool] = []

    def new(parent: int) -> int:
        for key, value in (("feature", _LEAF), ("threshold", 0.0), ("left", -1),
                           ("right", -1), ("leaf", -1), ("parent", parent)):
            nodes[key].append(value)
        return len(nodes["feature"]) - 1

    def make_leaf(node: int, is_solid: bool) -> None:
        nodes["leaf"][node] = len(solid)
        solid.append(is_solid)

    roots = []
    for code, size in enumerate(stratum_sizes):
        points = np.flatnonzero(strata == code)
        root = new(-1)
        roots.append(root)
        weight = size / points.size if points.size else math.inf
        stack = [(root, points)]
        while stack:
            node, members = stack.pop()
            if members.size * weight <= _STOP * block_size or members.size < 2:
                make_leaf(node, False)
                continue
            split = _split(X[members])
            if split is None:
                make_leaf(node, True)
                continue
            feature, threshold, go_left = split
            nodes["feature"][node], nodes["threshold"][node] = feature, threshold
            left, right = new(node), new(node)
            nodes["left"][node], nodes["right"][node] = left, right
            stack.append((right, members[~go_left]))
            stack.append((left, members[go_left]))
    arrays = {key: np.asarray(value, dtype=np.float64 if key == "threshold" else np.int64)
              for key, value in nodes.items()}
    return Tree(**arrays, solid=np.asarray(solid, dtype=bool),
                roots=np.asarray(roots, dtype=np.int64))


def _split(points: np.ndarray):
    """(feature, threshold, goes-left mask) at the median of the widest attribute that
    separates the points, or None when they are all equal."""
    for feature in np.argsort(-points.var(axis=0), kind="stable"):
        values = points[:, feature]
        median = float(np.median(values))
        for threshold in (median, float(np.max(values[values < median], initial=np.nan))):
            if not math.isfinite(threshold):
                continue
            go_left = values <= threshold
            if 0 < go_left.sum() < values.size:
                return int(feature), threshold, go_left
    return None


def finish_blocking(tree: Tree, leaf_counts: np.ndarray, *, block_size: int,
                    min_size: int) -> Blocking:
    """Merge small leaves and deal solid ones (module notes), from the records per leaf.

    Raises
    ------
    MicroaggError
        A stratum holds fewer than ``min_size`` records.
    """
    n_leaves = tree.n_leaves
    owner = np.arange(n_leaves)  # leaf → the leaf its records are merged into
    counts = np.asarray(leaf_counts, dtype=np.int64).copy()
    leaf_node = np.empty(n_leaves, dtype=np.int64)
    leaf_node[tree.leaf[tree.leaf >= 0]] = np.flatnonzero(tree.leaf >= 0)
    collapsed = np.zeros(len(tree.feature), dtype=bool)  # a node merged into one block
    group_node = leaf_node.copy()  # the subtree every owner leaf stands for
    while True:
        small = [leaf for leaf in range(n_leaves)
                 if owner[leaf] == leaf and 0 < counts[leaf] < min_size]
        if not small:
            break
        leaf = small[0]
        parent = tree.parent[group_node[leaf]]
        if parent < 0:
            raise MicroaggError(f"A stratum has {counts[leaf]} record(s), fewer than the "
                                f"{min_size} a block needs.")
        collapsed[parent] = True
        members = [m for m in range(n_leaves)
                   if owner[m] == m and _under(tree, group_node[m], parent)]
        for m in members:
            owner[owner == m] = leaf
        counts[leaf] = sum(int(counts[m]) for m in members)
        for m in members:
            if m != leaf:
                counts[m] = 0
        group_node[leaf] = parent
    deal = np.ones(n_leaves, dtype=np.int64)
    first = np.zeros(n_leaves, dtype=np.int64)
    sizes: list[int] = []
    for leaf in range(n_leaves):
        if owner[leaf] != leaf or counts[leaf] == 0:
            continue
        c = 1
        if tree.solid[leaf] and group_node[leaf] == leaf_node[leaf]:
            c = max(1, min(math.ceil(counts[leaf] / block_size),
                           counts[leaf] // (4 * min_size)))
        deal[leaf], first[leaf] = c, len(sizes)
        base, extra = divmod(int(counts[leaf]), c)
        sizes.extend(base + (1 if i < extra else 0) for i in range(c))
    first = first[owner]
    deal = deal[owner]
    return Blocking(tree, first, deal, np.asarray(sizes, dtype=np.int64))


def _under(tree: Tree, node: int, ancestor: int) -> bool:
    while node >= 0:
        if node == ancestor:
            return True
        node = tree.parent[node]
    return False

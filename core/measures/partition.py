"""Partition statistics, and the SSE/SST of a partition that reference code and tests use.

SSE is the within-group sum of squared Euclidean distances to the group centroid on the
z-scored quasi-identifiers, SST the total sum of squares around the global mean (n·d
after z-scoring), and IL = 100·SSE/SST (Khomnotai et al. 2018, Section 2). A run's
figures (SSE, SST, IL and k′, mixed attributes included) are those its measures compute
on the released table (:mod:`core.measures.measure`); :func:`partition_metrics` adds the
group sizes of the partition and the class sizes of the released table.

Groups and classes
    A *group* is what the method formed; a *class* is a set of released records with the
    same quasi-identifier values (and stratum), which is all an intruder sees. Groups
    that release the same values make one class: often with nominal or ordinal
    quasi-identifiers (two groups with the same modes) or repeated records, so the
    classes can be fewer and larger than the groups. Risk is a matter of classes.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from core.data.aggregate import group_means

__all__ = ["Metrics", "sse", "sst", "partition_metrics"]


@dataclass(frozen=True)
class Metrics:
    """Metrics of one result. ``group_size_counts`` maps a group size to how many groups
    have it; the ``*class*`` fields are the released table's classes (module notes),
    0 / empty when no measures were taken."""

    n_records: int
    n_groups: int
    sse: float
    sst: float
    il: float
    min_group_size: int
    mean_group_size: float
    max_group_size: int
    k_prime: float
    group_size_counts: dict[int, int] = field(default_factory=dict)
    n_classes: int = 0
    min_class_size: int = 0
    max_class_size: int = 0
    class_size_counts: dict[int, int] = field(default_factory=dict)

    @property
    def classes_differ(self) -> bool:
        """Whether some groups released the same values (fewer classes than groups)."""
        return bool(self.n_classes) and self.class_size_counts != self.group_size_counts


def sse(X: np.ndarray, labels: np.ndarray) -> float:
    """Within-group sum of squares of ``X`` (n_records × n_attributes) under ``labels``."""
    centroids = group_means(X, labels)
    diff = X - centroids[labels]
    return float(np.einsum("ij,ij->", diff, diff))


def sst(X: np.ndarray) -> float:
    """Total sum of squares of ``X`` around its column means."""
    diff = X - X.mean(axis=0)
    return float(np.einsum("ij,ij->", diff, diff))


def partition_metrics(block_labels: np.ndarray, measures) -> Metrics:
    """Group sizes of a partition, with k', SSE, SST and IL of the released table.

    ``block_labels`` (n_records × n_blocks) holds the group ids of each block; group
    sizes are those of every block's groups, class sizes those of the released table's
    classes (``measures.class_sizes``). The information-loss figures are those
    ``measures`` (:class:`core.measures.measure.Measures`) computed on the released table, so
    each is computed once (:mod:`core.data.encoding` defines SSE for mixed attributes).
    """
    sizes = np.concatenate([np.bincount(block_labels[:, b])
                            for b in range(block_labels.shape[1])])
    sizes = sizes[sizes > 0]
    values, counts = np.unique(sizes, return_counts=True)
    classes = measures.class_sizes
    return Metrics(
        n_records=int(block_labels.shape[0]),
        n_groups=int(sizes.size),
        sse=measures.sse,
        sst=measures.sst,
        il=measures.il,
        min_group_size=int(sizes.min()),
        mean_group_size=float(sizes.mean()),
        max_group_size=int(sizes.max()),
        k_prime=measures.k_prime,
        group_size_counts={int(v): int(c) for v, c in zip(values, counts)},
        n_classes=int(classes.size),
        min_class_size=int(classes.min()),
        max_class_size=int(classes.max()),
        class_size_counts=measures.group_size_counts,
    )

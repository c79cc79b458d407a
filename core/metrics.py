"""Information-loss and group-size metrics of a partition.

SSE is the within-group sum of squared Euclidean distances to the group centroid on the
z-scored quasi-identifiers, SST the total sum of squares around the global mean (n·d
after z-scoring), and IL = 100·SSE/SST (Khomnotai et al. 2018, Section 2). Ordinal and
nominal quasi-identifiers add the squared distance (:mod:`core.encoding`) between each
original value and the released category to SSE, and n each to SST.
Real anonymity k′ = n / number of distinct masked quasi-identifier tuples.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from core.aggregate import group_means
from core.encoding import Encoding

__all__ = ["Metrics", "sse", "sst", "k_prime", "compute_metrics"]


@dataclass(frozen=True)
class Metrics:
    """Metrics of one result. ``group_size_counts`` maps a group size to how many groups have it."""

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


def sse(X: np.ndarray, labels: np.ndarray) -> float:
    """Within-group sum of squares of ``X`` (n_records × n_attributes) under ``labels``."""
    centroids = group_means(X, labels)
    diff = X - centroids[labels]
    return float(np.einsum("ij,ij->", diff, diff))


def sst(X: np.ndarray) -> float:
    """Total sum of squares of ``X`` around its column means."""
    diff = X - X.mean(axis=0)
    return float(np.einsum("ij,ij->", diff, diff))


def k_prime(masked: pd.DataFrame, quasi_identifiers: Sequence[str]) -> float:
    """n / number of distinct masked quasi-identifier tuples."""
    n_distinct = len(masked[list(quasi_identifiers)].drop_duplicates())
    return len(masked) / n_distinct if n_distinct else 0.0


def compute_metrics(encoding: Encoding, block_labels: np.ndarray,
                    blocks: Sequence[Sequence[str]], masked: pd.DataFrame) -> Metrics:
    """Metrics of a partition per attribute block, on the released table ``masked``.

    ``block_labels`` (n_records × n_blocks) holds the group ids of each block and
    ``blocks`` the quasi-identifiers of each block. SSE adds up over blocks and
    attributes; group sizes are those of every block's groups.
    """
    X = encoding.X
    numeric = [a.name for a in encoding.attributes if not a.categorical]
    categorical = [a.name for a in encoding.attributes if a.categorical]
    within = sum(sse(X[:, encoding.columns_of([c for c in block if c in numeric])],
                     block_labels[:, b])
                 for b, block in enumerate(blocks) if any(c in numeric for c in block))
    if categorical:
        released, _ = encoding.values_of(masked)
        columns = [encoding.names.index(c) for c in categorical]
        within += float(encoding.squared_distances(released)[:, columns].sum())
    sizes = np.concatenate([np.bincount(block_labels[:, b])
                            for b in range(block_labels.shape[1])])
    sizes = sizes[sizes > 0]
    values, counts = np.unique(sizes, return_counts=True)
    total = (sst(X[:, encoding.columns_of(numeric)]) if len(numeric) < len(encoding.names)
             else sst(X)) if numeric else 0.0
    total += float(len(X) * len(categorical))
    return Metrics(
        n_records=len(X),
        n_groups=int(sizes.size),
        sse=within,
        sst=total,
        il=100.0 * within / total if total > 0 else 0.0,
        min_group_size=int(sizes.min()),
        mean_group_size=float(sizes.mean()),
        max_group_size=int(sizes.max()),
        k_prime=k_prime(masked, encoding.names),
        group_size_counts={int(v): int(c) for v, c in zip(values, counts)},
    )

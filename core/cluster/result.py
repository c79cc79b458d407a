"""The typed result of a blocked run: :class:`BlockedResult`.

It carries what a window or a script shows about a release too large to hold: where it
was written, the blocks, the groups, the information loss over all blocks and the
global verification. For an in-memory table it also carries the released table.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from core.data.roles import RoleSpec
from core.verify.guarantees import K_ANONYMITY, Guarantee
from core.verify.kanonymity import Verification

__all__ = ["BlockedResult"]


@dataclass(frozen=True)
class BlockedResult:
    """Everything a blocked run produced (:func:`core.cluster.anonymize_blocked`).

    Attributes
    ----------
    method : str
    parameters : dict
        The method's parameters, defaults filled in.
    roles : RoleSpec
    n_records, n_blocks, n_groups : int
    block_sizes : tuple of int
        Smallest, mean (rounded) and largest block.
    min_group_size, max_group_size : int
    group_size_counts : dict
        Group size → number of groups, over all blocks.
    sse, sst : float
        Over the whole table, with the whole table's standardization.
    il : float
        100·SSE/SST, comparable with the unblocked run's IL.
    verification : Verification
        The global verifier's findings on the release as written.
    guarantee : Guarantee
    masked : DataFrame or None
        The release, for a table given in memory; None when it was only written.
    output : str or None
        The folder of parts written; ``output_format`` their format.
    block_size : int
        The block size asked for.
    scheduler : str
        The scheduler's address; ``local_cluster`` tells whether it was started for
        this run.
    seconds : float
    warnings : tuple of ReleaseWarning
        What should be read before publishing the release (:mod:`core.cluster.findings`).
    """

    method: str
    parameters: dict[str, Any]
    roles: RoleSpec
    n_records: int
    n_blocks: int
    n_groups: int
    block_sizes: tuple[int, int, int]
    min_group_size: int
    max_group_size: int
    group_size_counts: dict[int, int]
    sse: float
    sst: float
    il: float
    verification: Verification
    guarantee: Guarantee = K_ANONYMITY
    masked: pd.DataFrame | None = field(default=None, repr=False)
    output: str | None = None
    output_format: str | None = None
    block_size: int = 0
    scheduler: str = ""
    local_cluster: bool = True
    seconds: float = 0.0
    warnings: tuple = ()

    @classmethod
    def from_figures(cls, *, figures: list[dict], sse: float, sst: float,
                     **fields) -> "BlockedResult":
        """Build from the per-block figures of :func:`core.cluster.blockrun.run_blocks`."""
        sizes = np.array([f["n"] for f in figures], dtype=np.int64)
        counts: dict[int, int] = {}
        for f in figures:
            for size, count in f["group_sizes"].items():
                counts[size] = counts.get(size, 0) + count
        return cls(
            n_blocks=int(sizes.size),
            n_groups=int(sum(f["n_groups"] for f in figures)),
            block_sizes=(int(sizes.min()), int(round(sizes.mean())), int(sizes.max())),
            min_group_size=int(min(f["min_group"] for f in figures)),
            max_group_size=int(max(f["max_group"] for f in figures)),
            group_size_counts=dict(sorted(counts.items())),
            sse=sse, sst=sst, il=100.0 * sse / sst if sst > 0 else 0.0, **fields)

    @property
    def passed(self) -> bool:
        """True when the global verification confirmed the method's guarantee."""
        return self.verification.passed or not self.guarantee.record_level

    def describe(self) -> str:
        """One line for a status bar or a terminal."""
        where = f"; wrote {self.output}" if self.output else ""
        low, mean, high = self.block_sizes
        return (f"{self.method} in {self.n_blocks:,} blocks (sizes {low:,}-{high:,}, mean "
                f"{mean:,}): {self.n_records:,} records in {self.n_groups:,} groups "
                f"(sizes {self.min_group_size}-{self.max_group_size}), IL = "
                f"{self.il:.4f}%{where}")

    def summary(self) -> dict[str, Any]:
        """A flat, JSON-ready summary (the CLI's ``--summary-json`` with ``--engine dask``)."""
        v = self.verification
        return {
            "engine": "dask", "method": self.method, **self.parameters,
            "n_records": self.n_records, "n_blocks": self.n_blocks,
            "block_size": self.block_size, "block_sizes": list(self.block_sizes),
            "n_groups": self.n_groups,
            "quasi_identifiers": list(self.roles.quasi_identifiers),
            "strata": list(self.roles.strata),
            "il": self.il, "sse": self.sse, "sst": self.sst,
            "min_group_size": self.min_group_size, "max_group_size": self.max_group_size,
            "group_size_counts": {str(s): c for s, c in self.group_size_counts.items()},
            "k_prime": v.k_prime, "verified": self.passed,
            "guarantee": str(self.guarantee), "smallest_class": v.smallest_class,
            "n_classes": v.n_classes, "verification_notes": list(v.notes),
            "output": self.output, "output_format": self.output_format,
            "scheduler": self.scheduler, "local_cluster": self.local_cluster,
            "seconds": self.seconds,
            "warnings": [{"kind": w.kind, "message": w.message} for w in self.warnings],
        }

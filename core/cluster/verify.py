"""Global verification of a blocked release, with Dask, independent of the algorithm.

Like :mod:`core.verify.kanonymity`, it reads only the released table (here, the parts as
written) and the role specification, never the blocks or the groups: equivalence
classes are the distinct released quasi-identifier tuples together with the stratum
columns, over the whole table, so two blocks that happen to release the same tuple form
one class. The classes are counted exactly: the released records are shuffled by their
tuple (equal tuples meet in one partition) and each partition counts its own.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from core.data.roles import RoleSpec
from core.verify.kanonymity import Verification

__all__ = ["verify_blocked", "class_statistics"]


def class_statistics(frame, columns: Sequence[str], k: int) -> tuple[int, int, int, int]:
    """(smallest class, number of classes, classes below k, records) of the Dask frame
    ``frame`` over ``columns``."""
    columns = list(columns)

    def count(part: pd.DataFrame) -> pd.DataFrame:
        sizes = part.groupby(columns, dropna=False, sort=False).size().to_numpy()
        return pd.DataFrame({"smallest": [int(sizes.min()) if sizes.size else 1 << 62],
                             "classes": [int(sizes.size)],
                             "below": [int((sizes < k).sum())],
                             "rows": [len(part)]})

    meta = pd.DataFrame({"smallest": pd.Series(dtype="int64"),
                         "classes": pd.Series(dtype="int64"),
                         "below": pd.Series(dtype="int64"),
                         "rows": pd.Series(dtype="int64")})
    shuffled = frame[columns].shuffle(on=columns, npartitions=max(1, frame.npartitions))
    figures = shuffled.map_partitions(count, meta=meta).compute()
    return (int(figures["smallest"].min()), int(figures["classes"].sum()),
            int(figures["below"].sum()), int(figures["rows"].sum()))


def verify_blocked(frame, roles: RoleSpec, k: int, *, blocks, n_records: int,
                   il: float) -> Verification:
    """Check that the released Dask frame ``frame`` is k-anonymous over the whole table.

    Parameters
    ----------
    frame : dask.dataframe.DataFrame
        The release as written (read back from its parts).
    roles : RoleSpec
    k : int
    blocks : tuple of column tuples
        Attribute blocks, each checked on its own (one block of every
        quasi-identifier by default).
    n_records : int
        Records of the original table; the release must have as many.
    il : float
        The information loss to report (IL = 100·SSE/SST over all blocks).
    """
    qi, strata = list(roles.quasi_identifiers), list(roles.strata)
    notes: list[str] = []
    left_in = [c for c in roles.identifiers if c in frame.columns]
    for column in left_in:
        notes.append(f"Identifier column '{column}' is still in the masked table.")
    smallest_by_block, n_classes, whole_smallest, n_released = [], 0, 0, 0
    for number, block in enumerate(blocks, start=1):
        # The records are counted in the same pass as the classes (no pass of their own).
        smallest, n_classes, below, n_released = class_statistics(
            frame, list(block) + strata, k)
        smallest_by_block.append(smallest)
        whole_smallest = smallest
        if below:
            where = f" in block {number} ({', '.join(block)})" if len(blocks) > 1 else ""
            notes.insert(0, f"{below} equivalence class(es){where} have fewer than "
                            f"k = {k} records; the smallest has {smallest}.")
    if len(blocks) > 1:
        whole_smallest, n_classes, _, _ = class_statistics(frame, qi + strata, k)
    if n_released != n_records:
        notes.append(f"The release has {n_released:,} records but the original has "
                     f"{n_records:,}.")
    smallest = min(smallest_by_block)
    return Verification(
        k_required=int(k), smallest_class=smallest, n_classes=int(n_classes),
        k_prime=n_released / max(1, n_classes), il=float(il),
        passed=smallest >= k and not left_in and n_released == n_records,
        notes=tuple(notes), blocks=tuple(tuple(b) for b in blocks),
        smallest_by_block=tuple(smallest_by_block),
        smallest_whole_table=int(whole_smallest))

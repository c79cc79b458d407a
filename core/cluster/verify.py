"""Global verification of a blocked release, with Dask, independent of the algorithm.

Like :mod:`core.verify.kanonymity`, it reads only the released table (here, the parts as
written) and the role specification, never the blocks or the groups: equivalence
classes are the distinct released quasi-identifier tuples together with the stratum
columns, over the whole table, so two blocks that happen to release the same tuple form
one class. Each released record is reduced to a 128-bit fingerprint of its tuple (two
independent 64-bit hashes, :func:`fingerprint`); only the fingerprints are shuffled
(equal tuples meet in one partition, 16 bytes a record instead of the tuple) and each
partition counts its own. Two distinct tuples share a fingerprint with probability
about m²/2¹²⁹ for m classes (below 10⁻²⁵ for ten million), and a collision could
only merge two classes: the counts are exact in practice.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
import pandas as pd

from core.data.roles import RoleSpec
from core.verify.kanonymity import Verification

__all__ = ["ClassFigures", "verify_blocked", "class_statistics", "fingerprint"]

_KEYS = ("microagg-class-a", "microagg-class-b")  # 16 bytes, as pandas needs


class ClassFigures(NamedTuple):
    """The classes of a release over some columns, counted (:func:`class_statistics`)."""

    smallest: int
    classes: int
    below: int  # classes of fewer than k records
    rows: int
    largest: int
    alone: int  # records alone in their class


def class_statistics(frame, columns: Sequence[str], k: int) -> ClassFigures:
    """The :class:`ClassFigures` of the Dask frame ``frame`` over ``columns`` (module
    notes): a class is in one partition after the shuffle, so the largest of the
    partitions' largest classes is the largest."""
    columns = list(columns)
    fingerprints = frame[columns].map_partitions(
        fingerprint, meta=pd.DataFrame({"h1": pd.Series(dtype="uint64"),
                                        "h2": pd.Series(dtype="uint64")}))
    meta = pd.DataFrame({name: pd.Series(dtype="int64") for name in ClassFigures._fields})
    shuffled = fingerprints.shuffle(on="h1", npartitions=max(1, frame.npartitions))
    figures = shuffled.map_partitions(_count, k, meta=meta).compute()
    return ClassFigures(int(figures["smallest"].min()), int(figures["classes"].sum()),
                        int(figures["below"].sum()), int(figures["rows"].sum()),
                        int(figures["largest"].max()), int(figures["alone"].sum()))


def fingerprint(part: pd.DataFrame) -> pd.DataFrame:
    """Two independent 64-bit hashes of every record's tuple (columns ``h1``, ``h2``)."""
    return pd.DataFrame({
        "h1": pd.util.hash_pandas_object(part, index=False, hash_key=_KEYS[0]).to_numpy(),
        "h2": pd.util.hash_pandas_object(part, index=False, hash_key=_KEYS[1]).to_numpy()})


def _count(part: pd.DataFrame, k: int) -> pd.DataFrame:
    h1, h2 = part["h1"].to_numpy(), part["h2"].to_numpy()
    order = np.lexsort((h2, h1))
    h1, h2 = h1[order], h2[order]
    starts = np.flatnonzero(np.r_[True, (h1[1:] != h1[:-1]) | (h2[1:] != h2[:-1])]) \
        if h1.size else np.empty(0, dtype=np.int64)
    sizes = np.diff(np.r_[starts, h1.size])
    return pd.DataFrame({"smallest": [int(sizes.min()) if sizes.size else 1 << 62],
                         "classes": [int(sizes.size)], "below": [int((sizes < k).sum())],
                         "rows": [int(h1.size)],
                         "largest": [int(sizes.max()) if sizes.size else 0],
                         "alone": [int((sizes == 1).sum())]})


def verify_blocked(frame, roles: RoleSpec, k: int, *, blocks, n_records: int,
                   il: float) -> tuple[Verification, ClassFigures]:
    """Check that the released Dask frame ``frame`` is k-anonymous over the whole table;
    the verification, and the :class:`ClassFigures` of all the quasi-identifiers (and
    strata) together.

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
    smallest_by_block, whole = [], None
    for number, block in enumerate(blocks, start=1):
        # The records are counted in the same pass as the classes (no pass of their own).
        whole = class_statistics(frame, list(block) + strata, k)
        smallest, below, n_released = whole.smallest, whole.below, whole.rows
        smallest_by_block.append(smallest)
        if below:
            where = f" in block {number} ({', '.join(block)})" if len(blocks) > 1 else ""
            notes.insert(0, f"{below} equivalence class(es){where} have fewer than "
                            f"k = {k} records; the smallest has {smallest}.")
    if len(blocks) > 1:
        whole = class_statistics(frame, qi + strata, k)
    n_classes = whole.classes
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
        smallest_whole_table=int(whole.smallest)), whole

"""The independent verifier.

It reads only the original table, the masked table and the role specification; it never
sees the partition (``labels``) an algorithm produced. Equivalence classes are formed
from the masked quasi-identifier values themselves (exact equality), so whatever a
method claims, the guarantee is checked on what would be released.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from core.errors import MicroaggError
from core.data.encoding import Encoding, encode
from core.data.memory import VERIFYING
from core.data.roles import RoleSpec
from core.verify.rows import DistinctRows, frame_classes
from core.verify.tcloseness import same_values

__all__ = ["Verification", "verify_k_anonymity"]


@dataclass(frozen=True)
class Verification:
    """What the verifier found.

    ``passed`` is true when, for every attribute block, every equivalence class of the
    masked values (together with the stratum columns) has at least ``k_required``
    records, and no identifier column is left in the masked table. Without blocks there
    is one block of all quasi-identifiers. ``notes`` lists every problem and observation
    in plain words.
    """

    k_required: int
    smallest_class: int
    n_classes: int
    k_prime: float
    il: float
    passed: bool
    notes: tuple[str, ...] = ()
    blocks: tuple[tuple[str, ...], ...] = ()
    smallest_by_block: tuple[int, ...] = ()
    smallest_whole_table: int = 0

    def describe(self) -> str:
        status = "PASSED" if self.passed else "FAILED"
        text = (f"k-anonymity {status}: smallest class {self.smallest_class} "
                f"(required {self.k_required}), {self.n_classes} classes, "
                f"k' = {self.k_prime:.3f}")
        if len(self.blocks) > 1:
            text += (f"; k-anonymity is checked per block ({len(self.blocks)} blocks); "
                     f"the whole table's smallest class has {self.smallest_whole_table}")
        return text


def class_sizes(masked: pd.DataFrame, columns) -> np.ndarray:
    """Size of every equivalence class of the masked tuples of ``columns``.

    The sizes of ``masked.groupby(list(columns), dropna=False, sort=False).size()``, in
    that order, found by hashing the rows (:func:`core.verify.rows.frame_classes`).
    """
    return frame_classes(masked, list(columns)).counts


def verify_k_anonymity(original: pd.DataFrame, masked: pd.DataFrame, roles: RoleSpec,
                       k: int, *, blocks=None, encoding: Encoding | None = None,
                       checkpoint: Callable[[], None] | None = None,
                       classes: Callable[[], DistinctRows] | None = None,
                       values: tuple[np.ndarray, dict] | None = None) -> Verification:
    """Check that ``masked`` is k-anonymous on the quasi-identifiers of ``roles``.

    Classes are the distinct masked quasi-identifier tuples together with the stratum
    columns (an intruder who knows the stratum can tell strata apart). With ``blocks``
    (a sequence of column tuples) each block is checked on its own.

    Also recomputes IL = 100·SSE/SST from the two tables alone (numeric attributes
    z-scored with the original's means and population standard deviations, ordinal and
    nominal ones measured by :mod:`core.data.encoding`) and notes identifier columns left in,
    confidential or other columns that differ from the original, and released categories
    that the original does not have (which fails the check: a release may only hold
    categories of the original domain).

    ``encoding`` is ``original``'s quasi-identifiers measured
    (:func:`core.data.encoding.encode` of ``original`` and ``roles``, ``strict=False``),
    when the caller already has it; it is made here otherwise. ``checkpoint`` is called
    between the passes over the records; whatever it raises (a Cancel) stops the check.
    ``classes`` gives :func:`~core.verify.rows.frame_classes` of ``masked``'s
    quasi-identifiers and strata, when the caller finds them once for other uses too
    (they are found here otherwise): the classes of the released table, whoever finds
    them, never the method's groups. ``values`` is ``encoding.values_of(masked)``, when
    the caller has made it.
    """
    checkpoint = checkpoint or (lambda: None)
    qi = list(roles.quasi_identifiers)
    blocks = tuple(tuple(b) for b in blocks) if blocks else (tuple(qi),)
    if len(masked) != len(original):
        raise MicroaggError(
            f"The masked table has {len(masked)} rows but the original has "
            f"{len(original)}. Compare tables with the same records in the same order."
        )
    missing = [c for c in qi + list(roles.strata) if c not in masked.columns]
    if missing:
        raise MicroaggError(f"Column '{missing[0]}' is not in the masked table.")
    notes: list[str] = []
    left_in = [c for c in roles.identifiers if c in masked.columns]
    for column in left_in:
        notes.append(f"Identifier column '{column}' is still in the masked table.")
    for column in original.columns:
        if column in qi or column in roles.identifiers or column not in masked.columns:
            continue
        if not same_values(original[column], masked[column]):
            notes.append(f"Column '{column}' differs from the original.")
        checkpoint()

    strata = list(roles.strata)
    smallest_by_block = []
    found: dict[tuple, np.ndarray] = {}  # sizes per column set (one block is the whole)
    if classes is not None:
        found[tuple(qi) + tuple(strata)] = classes().counts
        checkpoint()
    for number, block in enumerate(blocks, start=1):
        columns = tuple(block) + tuple(strata)
        if columns not in found:
            found[columns] = class_sizes(masked, columns)
            checkpoint()
        sizes = found[columns]
        smallest = int(sizes.min())
        smallest_by_block.append(smallest)
        if smallest < k:
            where = f" in block {number} ({', '.join(block)})" if len(blocks) > 1 else ""
            notes.insert(0, f"{int((sizes < k).sum())} equivalence class(es){where} have "
                            f"fewer than k = {k} records; the smallest has {smallest}.")
    columns = tuple(qi) + tuple(strata)
    whole = found[columns] if columns in found else class_sizes(masked, columns)
    checkpoint()

    if encoding is None:
        encoding = encode(original, roles, strict=False, run=(VERIFYING, None))
    released, unknown = values if values is not None else encoding.values_of(masked)
    checkpoint()
    for column, count in unknown.items():
        notes.insert(0, f"Column '{column}' releases {count} value(s) that are not "
                        "categories of the original.")
    within = float(encoding.squared_distances(released).sum())
    total = encoding.total_sum_of_squares()
    checkpoint()

    smallest = min(smallest_by_block)
    return Verification(
        k_required=int(k),
        smallest_class=smallest,
        n_classes=int(whole.size),
        k_prime=len(masked) / whole.size,
        il=100.0 * within / total if total > 0 else 0.0,
        passed=smallest >= k and not left_in and not unknown,
        notes=tuple(notes),
        blocks=blocks,
        smallest_by_block=tuple(smallest_by_block),
        smallest_whole_table=int(whole.min()),
    )

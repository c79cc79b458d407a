"""The independent verifier.

It reads only the original table, the masked table and the role specification; it never
sees the partition (``labels``) an algorithm produced. Equivalence classes are formed
from the masked quasi-identifier values themselves (exact equality), so whatever a
method claims, the guarantee is checked on what would be released.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from core.errors import MicroaggError
from core.prepare import numeric_matrix
from core.roles import RoleSpec

__all__ = ["Verification", "verify_k_anonymity"]


@dataclass(frozen=True)
class Verification:
    """What the verifier found.

    ``passed`` is true when every equivalence class has at least ``k_required`` records
    and no identifier column is left in the masked table. ``notes`` lists every problem
    and observation in plain words.
    """

    k_required: int
    smallest_class: int
    n_classes: int
    k_prime: float
    il: float
    passed: bool
    notes: tuple[str, ...] = ()

    def describe(self) -> str:
        status = "PASSED" if self.passed else "FAILED"
        return (f"k-anonymity {status}: smallest class {self.smallest_class} "
                f"(required {self.k_required}), {self.n_classes} classes, "
                f"k' = {self.k_prime:.3f}")


def class_sizes(masked: pd.DataFrame, quasi_identifiers) -> np.ndarray:
    """Size of every equivalence class of the masked quasi-identifier tuples."""
    return masked.groupby(list(quasi_identifiers), dropna=False, sort=False).size().to_numpy()


def verify_k_anonymity(original: pd.DataFrame, masked: pd.DataFrame, roles: RoleSpec,
                       k: int) -> Verification:
    """Check that ``masked`` is k-anonymous on the quasi-identifiers of ``roles``.

    Also recomputes IL = 100·SSE/SST from the two tables alone (both z-scored with the
    original's means and population standard deviations) and notes identifier columns
    left in, and confidential or other columns that differ from the original.
    """
    qi = list(roles.quasi_identifiers)
    if len(masked) != len(original):
        raise MicroaggError(
            f"The masked table has {len(masked)} rows but the original has "
            f"{len(original)}. Compare tables with the same records in the same order."
        )
    missing = [c for c in qi if c not in masked.columns]
    if missing:
        raise MicroaggError(
            f"Quasi-identifier '{missing[0]}' is not in the masked table."
        )
    notes: list[str] = []
    left_in = [c for c in roles.identifiers if c in masked.columns]
    for column in left_in:
        notes.append(f"Identifier column '{column}' is still in the masked table.")
    for column in original.columns:
        if column in qi or column in roles.identifiers or column not in masked.columns:
            continue
        if not original[column].reset_index(drop=True).equals(
                masked[column].reset_index(drop=True)):
            notes.append(f"Column '{column}' differs from the original.")

    sizes = class_sizes(masked, qi)
    smallest = int(sizes.min()) if sizes.size else 0

    raw_original = numeric_matrix(original, qi)
    raw_masked = numeric_matrix(masked, qi)
    mean, std = raw_original.mean(axis=0), raw_original.std(axis=0)
    std = np.where(std > 0, std, 1.0)
    z_original = (raw_original - mean) / std
    z_masked = (raw_masked - mean) / std
    diff = z_original - z_masked
    within = float(np.einsum("ij,ij->", diff, diff))
    centred = z_original - z_original.mean(axis=0)
    total = float(np.einsum("ij,ij->", centred, centred))

    passed = smallest >= k and not left_in
    if smallest < k:
        notes.insert(0, f"{int((sizes < k).sum())} equivalence class(es) have fewer than "
                        f"k = {k} records; the smallest has {smallest}.")
    return Verification(
        k_required=int(k),
        smallest_class=smallest,
        n_classes=int(sizes.size),
        k_prime=len(masked) / sizes.size if sizes.size else 0.0,
        il=100.0 * within / total if total > 0 else 0.0,
        passed=passed,
        notes=tuple(notes),
    )

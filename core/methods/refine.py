"""Refining a k-anonymous partition: TFRP2 and iterative group decomposition (IGD).

Khomnotai, Lin, Peng & Santra (2018), Section 4:

``tfrp2``
    One Decompose pass (their Figure 2, "executing the Decompose function once").
``igd``
    Their Figure 1: Decompose (Figure 2) then Shrink (Figure 4), repeated until neither
    changes the partition. Both end with SplitLargeGroups (Figure 3).

Decompose
    For each group p in turn: move every record of p to the nearest other group (by
    centroid); keep the result if the total SSE drops.
Shrink
    For each group p with more than k records: move the record whose move to its nearest
    other group lowers the SSE most, while p has more than k records and a move helps.
SplitLargeGroups
    A group of 2k or more records is split CBFS-style: the record farthest from its
    centroid seeds a new group that grows by the record nearest to the new group's
    centroid until it has k records; repeated while more than k records are left; the
    rest go one by one to their nearest group.

Choices where the paper is silent or would break a guarantee, each tested:

* Decompose sends p's records to the groups nearest to each record *before* any of them
  moves (one batch); the SSE change is computed exactly for that batch.
* "Nearest group" is the group with the nearest centroid; ties go to the lower group id.
* A split is kept only if it lowers the SSE (the paper keeps it always). Without that
  check a split can raise the SSE, and refinement must never do that. The change is
  summed over the groups the split touches (p, the new groups and the groups that
  received the rest), not as the difference of two totals over every group, and a
  split not kept puts those groups' statistics back exactly: so a split's outcome
  depends on nothing but the groups it touches, which lets IGD skip a look that still
  holds (:mod:`core.methods.refine_track`).
* A change counts only if it lowers the SSE by more than 1e-12·SST, so floating-point
  noise cannot make IGD cycle; IGD also stops after ``max_rounds`` rounds.

Every group keeps at least k records throughout: Decompose only adds records to other
groups, Shrink never takes a group below k, and a split makes groups of k and adds the
rest to existing groups.

One floating-point form, so that both implementations make the same choice at every
step, ties included (the data are centred first, ``Xc = X − mean``):

* a distance is ``Σ_j (x_j − c_j)²`` over the attributes in order
  (:func:`core.methods.pool.squared_distances`), the centroid ``c = Σx / n`` attribute by
  attribute; ``|x|²`` is the distance to the origin;
* a group's Σx and Σ|x|² grow or shrink by the sum of the records that join or leave,
  added one after another in the order they joined (:func:`core.methods.pool.column_sums`);
* a group's SSE is ``Σ|x|² − |Σx|²/n``, ``|Σx|²`` summed in attribute order; a split's
  SSE change is −SSE(p), less each receiving group's SSE before (in the order they
  first received), plus each new group's SSE (in the order formed) and each receiving
  group's after.

Two implementations give the same labels:

compiled (:mod:`core.methods.refine_passes`, the default when :data:`core.compiled.COMPILED`)
    The passes in numba over flat arrays. A record's nearest group comes from a sweep
    over every group's centroid, float32 first, shared with a helper thread
    (:mod:`core.methods.refine_sweep`), or from a short list of candidate groups per
    record with a bound that says when the list's nearest is the nearest of all
    (:mod:`core.methods.refine_nearest`), whichever costs less as the run goes
    (:mod:`core.methods.refine_way`): sweeps while groups move all the time, lists once
    they settle. It returns to Python every ~0.1 s for progress and Cancel.
numpy (:mod:`core.methods.refine_reference`, the reference)
    The same passes in numpy; nearest groups from scipy KD-tree candidate lists,
    measured exactly.

Example
-------
>>> import numpy as np
>>> X = np.array([[0.0], [0.1], [0.2], [10.0], [10.1], [10.2], [0.3], [10.3], [0.4]])
>>> refine(X, np.array([0, 0, 0, 1, 1, 1, 2, 2, 2]), k=3, method="tfrp2").tolist()
[0, 0, 0, 1, 1, 1, 0, 1, 0]
"""

from __future__ import annotations

import numpy as np

from core.compiled import COMPILED
from core.methods.pool import squared_distances
from core.progress import TaskState

__all__ = ["REFINEMENTS", "decompose_pass", "refine"]

REFINEMENTS = ("none", "tfrp2", "igd")


def refine(X: np.ndarray, labels: np.ndarray, *, k: int, method: str = "igd",
           max_rounds: int = 1000, state: TaskState | None = None,
           compiled: bool | None = None) -> np.ndarray:
    """Refine a partition of ``X`` whose groups all have at least ``k`` records.

    Parameters
    ----------
    X : ndarray of shape (n_records, n_attributes)
        Standardized quasi-identifiers.
    labels : ndarray of shape (n_records,)
        The partition to refine (not modified).
    k : int
    method : {"none", "tfrp2", "igd"}
        TFRP2 is one Decompose pass (Khomnotai et al. 2018, Figure 2); IGD is their
        Figure 1.
    max_rounds : int
        IGD's limit on Decompose+Shrink rounds.
    state : TaskState, optional
    compiled : bool, optional
        The compiled passes (by default when :data:`core.compiled.COMPILED`) or, with
        ``False``, the numpy reference. Both give the same labels.

    Returns
    -------
    labels : ndarray of shape (n_records,), int64
        Group ids 0..G−1. SSE(result) ≤ SSE(labels); every group has ≥ k records.
    """
    if method not in REFINEMENTS:
        raise ValueError(f"unknown refinement {method!r}")
    state = state or TaskState()
    _, labels = np.unique(labels, return_inverse=True)
    labels = labels.reshape(-1).astype(np.int64)
    if method == "none":
        return labels
    Xc, sq, tolerance = prepared(X)
    if COMPILED and compiled is not False:
        from core.methods.refine_passes import refine_compiled as passes
    else:
        from core.methods.refine_reference import reference_passes as passes
    result = passes(Xc, sq, labels, k=k, method=method, max_rounds=max_rounds,
                    tolerance=tolerance, state=state)
    state.step(1.0, "refinement done")
    return result


def prepared(X: np.ndarray):
    """Centred ``X``, its rows' squared norms, and the SSE change that counts."""
    X = np.asarray(X, dtype=np.float64)
    # Centred: SSE = Σ|x|² − |Σx|²/n then loses no digits to a far-away origin.
    Xc = np.ascontiguousarray(X - X.mean(axis=0))
    sq = squared_distances(Xc, np.zeros(Xc.shape[1]))
    return Xc, sq, 1e-12 * max(float(sq.sum()), 1e-300)


def decompose_pass(X, labels, *, k):
    """One Decompose pass (TFRP2); for tests and benchmarks."""
    return refine(X, labels, k=k, method="tfrp2")

"""One dimension microaggregation, Mic1D-k (Nin, *One dimension microaggregation*, Section 3).

Vocabulary. A *cell* is one quasi-identifier value of one record. Mic1D-k forgets which
record and which attribute a cell belongs to: every cell becomes one entry of a vector of
``N = n_records · n_attributes`` values (Section 3, "Vectorization"), and ``k`` counts
VALUES of that vector, not records. It may exceed the number of records (the paper uses
k = 3,000 on the 1,080 × 9 = 9,720 values of Census).

Mic1D-k changes values; it does not form groups of records, so it does NOT guarantee
k-anonymity of records: two records share a masked tuple only by chance. The verifier's
real anonymity k′ (:func:`core.measures.measure.measure`) is the figure that counts.

The steps (Section 3, in the paper's order) and the exact reading taken here:

1. Vectorize the cells (column by column: every value of the first attribute, then of
   the second, ...).
2. Sort the vector (stable: equal values keep the vectorized order).
3. Partition the sorted vector into runs of ``k`` consecutive values; the last run holds
   the ``r = N mod k`` remaining values when ``k`` does not divide ``N``.
4. Normalize each run to [0, 1]: ``u = (v − min_m) / (max_m − min_m)``, or ``u = 0.5``
   when the run is constant (``max_m = min_m``).
5. Re-sort the normalized vector and partition it again into runs of ``k`` (same
   positions as step 3). Ties among the normalized values (every run has a 0 and a 1)
   are broken by the position in the first sorted order.
6. Re-normalize each second-round run the same way: ``w = (u − min'_m) / (max'_m − min'_m)``
   (or 0.5).
7. Replace every ``w`` by the mean ``μ`` of its second-round run.
8. Denormalize, the "exact, invertible reading": every value remembers the two affine
   maps that were applied TO IT, and they are undone in reverse order: first with the
   parameters of its second-round run, ``u' = min'_m + μ·(max'_m − min'_m)``, then with
   the parameters of its first-round run, ``x' = min_m + u'·(max_m − min_m)``. A
   constant run has range 0, so its values go back to ``min_m`` (the run's one value).
   Without step 7 (``μ`` replaced by the value's own ``w``) this returns every value
   exactly (up to rounding); tests check it.
9. Put every masked value back in the cell it came from.

Consequences of that reading (tested):

- ``u'`` is the mean of the ``u`` of the second-round run (the affine map commutes with
  the mean), so the masked value of a cell is ``min_m + mean(u of its second run) ·
  range_m``: it depends only on its (first run, second run) pair, and lies within the
  range of its first-round run, hence within the range of the original values.
- Each run's own range is used; no global normalization is involved, so the result does
  not depend on the units of any attribute within a run, and at most
  ``(P + 1)²`` distinct masked values exist (P + 1 runs per round).
- Mic1D-k works on the values in their ORIGINAL units (the paper protects the raw file;
  normalization is its own per-run step), not on z-scores.

Worked example (k = 3, N = 6), records ``(1, 10), (2, 40), (4, 20)``::

    vector (column by column)   1  2  4 10 40 20
    sorted                      1  2  4 | 10 20 40        runs {1,2,4} {10,20,40}
    normalized u                0 1/3 1 |  0 1/3  1
    re-sorted u (ties: first    0(1) 0(10) 1/3(2) | 1/3(20) 1(4) 1(40)
      sorted order)
    re-normalized w             0  0  1 | 0  1  1         ranges [0,1/3] and [1/3,1]
    means μ                     1/3       | 2/3
    u' = min' + μ·range'        1/9       | 1/3 + 2/3·2/3 = 7/9
    x' = min + u'·range         1 → 1+3/9 = 4/3,  10 → 10+30/9 = 40/3,  2 → 4/3,
                                20 → 10+30·7/9 = 100/3,  4 → 1+3·7/9 = 10/3,  40 → 100/3

so the masked records are ``(4/3, 40/3), (4/3, 100/3), (10/3, 100/3)``: three distinct
records, k′ = 1, although every value was averaged with two others (no k-anonymity).
"""

from __future__ import annotations

import numbers

import numpy as np
import pandas as pd

from core.compiled import kernel
from core.errors import MicroaggError
from core.data.prepare import numeric_matrix
from core.progress import TaskState
from core.methods.ordered_cuts import stable_argsort  # numpy's stable order, by radix

__all__ = ["mic1d", "mic1d_values", "masked_values"]


def mic1d(values_table_or_X, *, k: int, state: TaskState | None = None):
    """Mic1D-k: microaggregate all quasi-identifier values as one sorted vector.

    Nin, *One dimension microaggregation (Mic1D-k)*, Section 3. Read the module notes
    for the exact reading of the two rounds of normalization and the worked example.
    Mic1D-k does NOT guarantee k-anonymity of records; measure the real anonymity k′.

    Parameters
    ----------
    values_table_or_X : ndarray of shape (n_records, n_attributes), or DataFrame
        The quasi-identifier values in their original units (every column of a
        DataFrame is used; select the quasi-identifiers first). Never modified.
    k : int
        Values per partition, ``2 <= k <= n_records · n_attributes``. Counts values,
        not records.
    state : TaskState, optional
        Progress (a few steps) and cancellation.

    Returns
    -------
    masked : ndarray of shape (n_records, n_attributes), float64, or DataFrame
        The masked values in original units, each in the cell of the value it replaces
        (a DataFrame with the same index and columns when a DataFrame was given).

    Raises
    ------
    MicroaggError
        ``k`` is not an integer in [2, N], or a value is missing, infinite or not numeric.

    Examples
    --------
    >>> X = np.array([[1.0, 10.0], [2.0, 40.0], [4.0, 20.0]])
    >>> np.round(mic1d(X, k=3) * 3, 9).tolist()
    [[4.0, 40.0], [4.0, 100.0], [10.0, 100.0]]
    """
    if isinstance(values_table_or_X, pd.DataFrame):
        table = values_table_or_X
        masked = mic1d_values(numeric_matrix(table, list(table.columns)), k=k, state=state)
        return pd.DataFrame(masked, index=table.index, columns=table.columns)
    return mic1d_values(values_table_or_X, k=k, state=state)


def masked_values(data, *, state: TaskState, k: int) -> np.ndarray:
    """Registry adapter: Mic1D-k of the quasi-identifiers of a ``MethodInput``.

    Uses ``data.table[data.roles.quasi_identifiers]`` in ORIGINAL units (not the
    z-scored ``data.X``) and returns the masked matrix (n_records × n_quasi_identifiers),
    columns in the order of ``roles.quasi_identifiers``.
    """
    qi = list(data.roles.quasi_identifiers)
    return mic1d_values(numeric_matrix(data.table, qi), k=k, state=state)


def mic1d_values(X, *, k: int, state: TaskState | None = None) -> np.ndarray:
    """Mic1D-k of a numeric matrix; :func:`mic1d` without the DataFrame handling."""
    return _mic1d(X, k, state, average=True)


def _mic1d(X, k, state, *, average: bool) -> np.ndarray:
    """The steps of the module notes; ``average=False`` skips step 7 (the round trip).

    Compiled (:func:`_mic1d_compiled`) when the kernels are, else the numpy reference
    (:func:`_mic1d_reference`); the two give the same bits, and the tests compare them.
    """
    X = _check_matrix(X)
    k = _check_k(k, X.size)
    state = state or TaskState()
    if _normalized_compiled is not None:
        return _mic1d_compiled(X, k, state, average)
    return _mic1d_reference(X, k, state, average)


def _mic1d_reference(X, k, state, average: bool) -> np.ndarray:
    """The steps in numpy, one whole-vector operation after another (the reference)."""
    n_values = X.size
    state.step(0.0, "Mic1D-k: vectorizing and sorting the values")
    vector = X.T.reshape(-1)  # column by column: attribute 1's values, then attribute 2's
    first_order = stable_argsort(vector, state=state)
    v = vector[first_order]
    runs = np.arange(n_values) // k  # run of every position of a sorted vector
    low1, high1 = _run_ranges(v, runs)
    span1 = high1 - low1
    u = _normalize(v, runs, low1, span1)
    state.step(0.4, "Mic1D-k: re-sorting and re-normalizing")
    # Stable sort of u in the first sorted order: ties keep that order.
    second_order = stable_argsort(u, state=state)
    u_sorted = u[second_order]
    low2, high2 = _run_ranges(u_sorted, runs)
    span2 = high2 - low2
    w = _normalize(u_sorted, runs, low2, span2)
    state.step(0.7, "Mic1D-k: partition means and denormalization")
    sizes = np.bincount(runs)
    protected = np.bincount(runs, weights=w)[runs] / sizes[runs] if average else w
    u_back = low2[runs] + protected * span2[runs]         # undo the second normalization
    u_masked = np.empty(n_values)
    u_masked[second_order] = u_back                       # back to the first sorted order
    x_sorted = low1[runs] + u_masked * span1[runs]         # undo the first normalization
    # Rounding must not push a value outside its first-round run.
    x_sorted = np.clip(x_sorted, low1[runs], high1[runs])
    out = np.empty(n_values)
    out[first_order] = x_sorted                            # back to the vectorized order
    state.step(1.0, "Mic1D-k: done")
    return out.reshape(X.shape[1], X.shape[0]).T.copy()


def _mic1d_compiled(X, k, state, average: bool) -> np.ndarray:
    """The steps of :func:`_mic1d_reference` with each run's arithmetic in one compiled
    pass, the same operations in the same order, and every vector let go once used: at
    1,000,000 × 10 it holds about 0.53 GB at most instead of 1.3 GB (the two sorts' own
    arrays are most of it), and takes about half the time."""
    n_values = X.size
    state.step(0.0, "Mic1D-k: vectorizing and sorting the values")
    vector = X.T.reshape(-1)
    first_order = stable_argsort(vector, state=state)
    v = vector[first_order]
    del vector
    low1, high1 = _ends_of_runs(v, k)
    span1 = high1 - low1
    u = _normalized_compiled(v, k, low1, span1)
    del v
    state.step(0.4, "Mic1D-k: re-sorting and re-normalizing")
    second_order = stable_argsort(u, state=state)
    u_sorted = u[second_order]
    del u
    low2, high2 = _ends_of_runs(u_sorted, k)
    state.check()
    state.step(0.7, "Mic1D-k: partition means and denormalization")
    _undo_second_compiled(u_sorted, k, low2, high2 - low2, average)  # now u′, in place
    u_masked = np.empty(n_values)
    u_masked[second_order] = u_sorted
    del u_sorted, second_order
    _undo_first_compiled(u_masked, k, low1, span1, high1)  # now x′, in place
    out = np.empty(n_values)
    out[first_order] = u_masked
    state.step(1.0, "Mic1D-k: done")
    return out.reshape(X.shape[1], X.shape[0]).T.copy()


def _ends_of_runs(sorted_values: np.ndarray, k: int):
    """:func:`_run_ranges` of runs of ``k`` positions (the last one shorter), without a
    run number per position."""
    starts = np.arange(0, len(sorted_values), k)
    return sorted_values[starts], sorted_values[np.minimum(starts + k, len(sorted_values)) - 1]


def _normalized(values, k, low, span):
    """Step 4 (or 6): each value of a sorted vector normalized to its run's range, 0.5
    in a constant run (:func:`_normalize`)."""
    out = np.empty(values.shape[0])
    for i in range(values.shape[0]):
        r = i // k
        out[i] = 0.5 if span[r] == 0 else (values[i] - low[r]) / span[r]
    return out


def _undo_second(u_sorted, k, low, span, average):
    """Steps 6 to 8's first map, in place: each value of the re-sorted vector becomes
    ``min′ + μ·range′`` (``μ`` the mean of its run's ``w``, summed in order as
    ``numpy.bincount`` does), or ``min′ + w·range′`` without step 7."""
    n = u_sorted.shape[0]
    for start in range(0, n, k):
        stop = min(start + k, n)
        r = start // k
        if average:
            total = 0.0
            for i in range(start, stop):
                total += 0.5 if span[r] == 0 else (u_sorted[i] - low[r]) / span[r]
            back = low[r] + total / (stop - start) * span[r]
            for i in range(start, stop):
                u_sorted[i] = back
        else:
            for i in range(start, stop):
                w = 0.5 if span[r] == 0 else (u_sorted[i] - low[r]) / span[r]
                u_sorted[i] = low[r] + w * span[r]


def _undo_first(u_masked, k, low, span, high):
    """Step 8's second map, in place: ``min + u′·range``, kept within the run's range as
    ``numpy.clip`` keeps it (a value equal to a bound becomes the bound: 0.0 against
    −0.0)."""
    for i in range(u_masked.shape[0]):
        r = i // k
        x = low[r] + u_masked[i] * span[r]
        x = x if x > low[r] else low[r]
        u_masked[i] = x if x < high[r] else high[r]


_normalized_compiled = kernel(_normalized)
_undo_second_compiled = kernel(_undo_second)
_undo_first_compiled = kernel(_undo_first)


def _run_ranges(sorted_values: np.ndarray, runs: np.ndarray):
    """Minimum and maximum of every run of a sorted vector (runs are contiguous)."""
    starts = np.flatnonzero(np.r_[True, runs[1:] != runs[:-1]])
    ends = np.r_[starts[1:], len(runs)] - 1
    low = sorted_values[starts]
    high = sorted_values[ends]
    return low, high


def _normalize(sorted_values, runs, low, span) -> np.ndarray:
    """Min–max normalization per run (Section 3, "Normalization"); 0.5 in a constant run."""
    s = span[runs]
    constant = s == 0
    out = np.full(len(sorted_values), 0.5)
    out[~constant] = (sorted_values[~constant] - low[runs][~constant]) / s[~constant]
    return out


def _check_k(k, n_values: int) -> int:
    if isinstance(k, bool) or not isinstance(k, numbers.Integral) or not 2 <= k <= n_values:
        raise MicroaggError(
            f"The 'k' parameter of Mic1D-k (values per partition) must be an integer in "
            f"the range [2, {n_values}] (the number of quasi-identifier values). "
            f"Got {k!r} instead.")
    return int(k)


def _check_matrix(X) -> np.ndarray:
    try:
        X = np.asarray(X, dtype=np.float64)
    except (TypeError, ValueError):
        raise MicroaggError("Mic1D-k needs numeric values.") from None
    if X.ndim != 2 or X.shape[0] < 1 or X.shape[1] < 1:
        raise MicroaggError(
            f"Mic1D-k needs a 2-D array (records × attributes); got shape {X.shape}.")
    bad = ~np.isfinite(X)
    if bad.any():
        row, column = np.argwhere(bad)[0]
        raise MicroaggError(
            f"Mic1D-k: {int(bad.sum())} missing or infinite value(s) (first at row "
            f"{row + 1}, attribute {column + 1}). Replace them with finite values.")
    return X

"""Distinct rows of a table in linear time: equivalence classes at census scale.

An equivalence class is a set of records with the same released quasi-identifier tuple.
``numpy.unique(axis=0)`` finds them by sorting the rows as structured records, which
takes seconds at 1,000,000 × 10; ``DataFrame.groupby`` factorizes every column and then
their combination. Here every row is hashed to one 64-bit word (a multiply-xorshift mix
of its columns' bits). Compiled, the rows are then entered in an open-addressing hash
table in input order: a row joins the class whose first row it equals bit for bit (the
hash only says where to look, so a collision can never merge two classes), and classes
come out numbered by first appearance in one linear pass. Without the compiled kernels
the words are sorted and every run of equal words is checked to hold one row only; if a
hash collision happens there the exact sort-based path is taken instead.

Equality is that of the reference each function names: :func:`distinct_rows` is
``numpy.unique(values, axis=0)`` (−0.0 equals 0.0; a row holding NaN is distinct from
every other row), :func:`frame_classes` is ``DataFrame.groupby(columns, dropna=False)``
(missing values form one key).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from core.compiled import kernel

__all__ = ["DistinctRows", "distinct_rows", "frame_keys", "frame_classes", "numbered_as_sorted"]

_MIX = np.uint64(0x9E3779B97F4A7C15)
_MIX2 = np.uint64(0xBF58476D1CE4E5B9)
_MIX3 = np.uint64(0x94D049BB133111EB)


class DistinctRows:
    """The distinct rows of an (n_records × n_columns) matrix.

    Attributes
    ----------
    inverse : ndarray of shape (n_records,), int64
        Class id of every row (0..n_classes−1).
    counts : ndarray of shape (n_classes,), int64
        Rows per class.
    first : ndarray of shape (n_classes,), int64
        The first row of every class (its representative).
    """

    __slots__ = ("inverse", "counts", "first")

    def __init__(self, inverse: np.ndarray, counts: np.ndarray, first: np.ndarray):
        self.inverse, self.counts, self.first = inverse, counts, first

    @property
    def n_classes(self) -> int:
        return int(self.counts.size)


def _row_hash(words: np.ndarray) -> np.ndarray:
    """One well-mixed 64-bit word per row of ``words`` (uint64, n × c)."""
    h = np.full(len(words), 0x243F6A8885A308D3, dtype=np.uint64)
    with np.errstate(over="ignore"):
        for j in range(words.shape[1]):
            h ^= words[:, j]
            h *= _MIX
            h ^= h >> np.uint64(31)
            h *= _MIX2
            h ^= h >> np.uint64(29)
        h *= _MIX3
        h ^= h >> np.uint64(32)
    return h


_SIGN = np.uint64(0x8000000000000000)  # the bits of −0.0
_EXPONENT = np.uint64(0x7FF0000000000000)
_FRACTION = np.uint64(0x000FFFFFFFFFFFFF)
_SEED = np.uint64(0x243F6A8885A308D3)


def _hash_rows(words, floats, h):
    """:func:`_row_hash` of ``words`` with −0.0 read as 0.0 into ``h``, and whether a
    NaN was met.

    With ``floats`` the words are float64 bits and the pass stops at the first NaN
    (``numpy.unique`` keeps a row holding NaN apart; the caller takes its exact path).
    """
    n, c = words.shape
    shift31, shift29, shift32 = np.uint64(31), np.uint64(29), np.uint64(32)
    for i in range(n):
        x = _SEED
        for j in range(c):
            w = words[i, j]
            if w == _SIGN:
                w = np.uint64(0)
            elif floats and (w & _EXPONENT) == _EXPONENT and (w & _FRACTION) != 0:
                return True
            x ^= w
            x *= _MIX
            x ^= x >> shift31
            x *= _MIX2
            x ^= x >> shift29
        x *= _MIX3
        x ^= x >> shift32
        h[i] = x
    return False


def _group_rows(words, h, table, inverse, counts, first):
    """Classes of equal rows of ``words`` (−0.0 equal to 0.0), numbered by first row:
    their number, each row's class in ``inverse`` and each class's size and first row
    in the first places of ``counts`` and ``first`` (:func:`_grouped` makes them).

    Linear probing in ``table`` (zeros, a power of two of at least twice as many slots
    as rows), each slot holding a class (plus one; 0 is empty) and its rows' hash; a row
    joins a class only when every word equals the class's first row's.
    """
    n, c = words.shape
    size = table.shape[0]
    mask = np.uint64(size - 1)
    m = 0
    for i in range(n):
        hi = h[i]
        s = np.int64(hi & mask)
        while True:
            entry = table[s, 0]
            if entry == 0:
                table[s, 0] = np.uint64(m + 1)
                table[s, 1] = hi
                first[m] = i
                counts[m] = 1
                inverse[i] = m
                m += 1
                break
            if table[s, 1] == hi:
                cls = np.int64(entry) - 1
                r = first[cls]
                same = True
                for j in range(c):
                    a = words[r, j]
                    b = words[i, j]
                    if a != b and not (a << np.uint64(1) == 0 and b << np.uint64(1) == 0):
                        same = False
                        break
                if same:
                    counts[cls] += 1
                    inverse[i] = cls
                    break
            s = (s + 1) & (size - 1)
    return m


def _candidate_heads(words, candidates, m, heads):
    """The first row of every candidate class (``candidates`` in 0..m−1), ascending,
    and those rows by candidate (m × c, C order); an empty array of first rows when
    some row is not equal (as :func:`_group_rows` compares) to its candidate's first
    row. The first rows are copied out once, so each row is compared with one
    contiguous row (``words`` is stored column by column). ``heads`` (n places) is
    filled with the first rows."""
    n, c = words.shape
    head = np.full(m, -1, dtype=np.int64)
    used = 0
    for i in range(n):
        g = candidates[i]
        if head[g] < 0:
            head[g] = i
            heads[used] = i
            used += 1
    rows = np.zeros((m, c), dtype=np.uint64)
    for j in range(c):
        for g in range(m):
            if head[g] >= 0:
                rows[g, j] = words[head[g], j]
    for i in range(n):
        g = candidates[i]
        for j in range(c):
            a = rows[g, j]
            b = words[i, j]
            if a != b and not (a << np.uint64(1) == 0 and b << np.uint64(1) == 0):
                return np.empty(0, dtype=np.int64), rows
    return heads[:used].copy(), rows


_hash_rows_compiled = kernel(_hash_rows)
_group_rows_compiled = kernel(_group_rows)
_candidate_heads_compiled = kernel(_candidate_heads)


def _classes_of_candidates(words: np.ndarray, candidates: np.ndarray) -> DistinctRows | None:
    """:func:`_classes_in_first_order` of ``words`` found through ``candidates``
    (:func:`frame_classes`), or None when a row differs from its candidate's first row.

    The candidates' first rows, ascending, are grouped as any rows are; each class is
    then numbered by its first candidate's first row, which is its first row.
    """
    if (candidates.ndim != 1 or len(candidates) != len(words) or candidates.min() < 0
            or candidates.max() >= len(words)):
        return None
    m = int(candidates.max()) + 1
    heads, rows = _candidate_heads_compiled(words, candidates, m,
                                            np.empty(len(words), dtype=np.int64))
    if not len(heads):
        return None
    found = _classes_in_first_order(rows[candidates[heads]], floats=False)
    class_of = np.empty(m, dtype=np.int64)
    class_of[candidates[heads]] = found.inverse
    inverse = class_of[candidates]
    counts = np.bincount(inverse, minlength=found.n_classes).astype(np.int64)
    return DistinctRows(inverse, counts, heads[found.first])


def _hashes(words: np.ndarray, floats: bool) -> tuple[np.ndarray, bool]:
    """:func:`_hash_rows` compiled (the grouping's hashes; tests may swap them)."""
    h = np.empty(len(words), dtype=np.uint64)  # numpy's: large pages (core.compiled)
    return h, bool(_hash_rows_compiled(words, floats, h))


def _grouped(words: np.ndarray, h: np.ndarray) -> DistinctRows:
    """:func:`_group_rows` compiled, on arrays numpy makes (large pages, core.compiled)."""
    n = len(words)
    size = 16
    while size < 2 * n:
        size *= 2
    inverse, counts = np.empty(n, dtype=np.int64), np.zeros(n, dtype=np.int64)
    first = np.empty(n, dtype=np.int64)
    m = _group_rows_compiled(words, h, np.zeros((size, 2), dtype=np.uint64), inverse,
                             counts, first)
    return DistinctRows(inverse, counts[:m].copy(), first[:m].copy())


def _classes_in_first_order(words: np.ndarray, floats: bool) -> DistinctRows | None:
    """Classes of equal rows of ``words`` by first appearance; None when a float is NaN.

    The compiled path (:func:`_group_rows`); exact for any hashes.
    """
    h, has_nan = _hashes(words, floats)
    if has_nan:
        return None
    return _grouped(words, h)


def _classes_of_words(words: np.ndarray) -> DistinctRows | None:
    """Classes of equal rows of ``words`` in hash order, or None on a hash collision."""
    n = len(words)
    if n == 0:
        empty = np.empty(0, dtype=np.int64)
        return DistinctRows(empty, empty, empty)
    h = _row_hash(words)
    order = np.argsort(h, kind="stable")  # stable: a run starts at its first row
    sorted_h = h[order]
    starts = np.flatnonzero(np.r_[True, sorted_h[1:] != sorted_h[:-1]])
    run = np.cumsum(np.r_[False, sorted_h[1:] != sorted_h[:-1]])
    first = order[starts]
    if len(starts) < n and not _runs_hold_one_row(words, order, run, first):
        return None
    inverse = np.empty(n, dtype=np.int64)
    inverse[order] = run
    counts = np.diff(np.r_[starts, n]).astype(np.int64)
    return DistinctRows(inverse, counts, first.astype(np.int64))


def _same_rows(words, order, run, first):
    """True when every row of ``words[order]`` equals the first row of its run."""
    c = words.shape[1]
    for t in range(len(order)):
        row, head = order[t], first[run[t]]
        if row != head:
            for j in range(c):
                if words[row, j] != words[head, j]:
                    return False
    return True


_same_rows_compiled = kernel(_same_rows)


def _runs_hold_one_row(words, order, run, first) -> bool:
    """No hash collision: each run of equal hashes holds copies of one row only."""
    if _same_rows_compiled is not None:
        return bool(_same_rows_compiled(words, order, run, first))
    return bool(np.array_equal(words[order], words[first[run]]))


def _renumber(found: DistinctRows, rank: np.ndarray) -> DistinctRows:
    """The same classes numbered by ``rank`` (a permutation of the class ids)."""
    new_id = np.empty_like(rank)
    new_id[rank] = np.arange(len(rank), dtype=np.int64)
    return DistinctRows(new_id[found.inverse], found.counts[rank], found.first[rank])


def _lexicographic(rows: np.ndarray, checkpoint=None) -> np.ndarray:
    """Order of distinct float ``rows`` by their values, first column first.

    Sorted by the first column; then, column by column, only the runs still tied on
    every column before are sorted by the next one (a stable sort by run and value, so
    rows tied throughout keep their order). At 1,000,000 continuous rows almost none
    are tied; a release masked attribute by attribute, each column repeating its values
    five times, has every row tied on its first column and almost none on its first
    two: sorting only those by one column at a time took 0.35 s where one sort of the
    tied rows by every column took 1.5 s. ``checkpoint`` is called between the columns.
    """
    order = np.argsort(rows[:, 0], kind="stable")
    if rows.shape[1] == 1 or len(rows) < 2:
        return order
    key = rows[order, 0]
    tied = np.r_[False, key[1:] == key[:-1]]  # the position equals the one before
    for j in range(1, rows.shape[1]):
        if not tied.any():
            break
        if checkpoint is not None:
            checkpoint()
        in_run = tied.copy()
        in_run[:-1] |= tied[1:]
        positions = np.flatnonzero(in_run)
        run = np.cumsum(~tied)[positions]  # the run of equal columns < j
        members = order[positions]
        value = rows[members, j]
        by = np.lexsort((value, run))
        order[positions] = members[by]
        value, run = value[by], run[by]
        tied = np.zeros(len(rows), dtype=bool)
        tied[positions[1:]] = (value[1:] == value[:-1]) & (run[1:] == run[:-1])
    return order


def distinct_rows(values: np.ndarray, *, order: str = "sorted",
                  checkpoint=None) -> DistinctRows:
    """Equivalence classes of the rows of ``values`` (n_records × n_columns, float).

    Parameters
    ----------
    values : ndarray of shape (n_records, n_columns)
    order : {"sorted", "first", "any"}
        How classes are numbered: ``"sorted"`` as ``numpy.unique(values, axis=0,
        return_inverse=True)`` does (by the rows' values, first column first),
        ``"first"`` by first appearance (as ``groupby(sort=False)``), ``"any"`` in no
        particular order (cheapest; for counts and multiplicities).
    checkpoint : callable, optional
        Called between the passes of the sorted numbering (a Cancel raised there stops
        it).

    Returns
    -------
    DistinctRows

    Examples
    --------
    >>> found = distinct_rows(np.array([[2.0, 1.0], [1.0, 5.0], [2.0, 1.0]]))
    >>> found.inverse.tolist(), found.counts.tolist()
    ([1, 0, 1], [1, 2])
    """
    values = np.asarray(values, dtype=np.float64)
    if values.ndim != 2:
        raise ValueError("distinct_rows needs a 2-d array (n_records × n_columns).")
    n = len(values)
    found = None
    if values.shape[1] == 0:
        found = DistinctRows(np.zeros(n, dtype=np.int64),
                             np.array([n] if n else [], dtype=np.int64),
                             np.zeros(1 if n else 0, dtype=np.int64))
        return found
    if _group_rows_compiled is not None:  # numbered by first appearance already
        found = _classes_in_first_order(np.ascontiguousarray(values).view(np.uint64),
                                        floats=True)
        if found is None:  # numpy.unique keeps NaN rows apart
            return _reference(values, order)
        if order == "sorted":
            return _renumber(found, _lexicographic(values[found.first], checkpoint))
        return found
    if not np.isnan(values).any():  # numpy.unique keeps NaN rows apart: see below
        found = _classes_of_words(np.ascontiguousarray(values + 0.0).view(np.uint64))
    if found is None:
        return _reference(values, order)
    if order == "first":
        return _renumber(found, np.argsort(found.first, kind="stable"))
    if order == "sorted":
        return _renumber(found, _lexicographic(values[found.first], checkpoint))
    return found


def numbered_as_sorted(values: np.ndarray, classes: DistinctRows) -> DistinctRows:
    """``classes``, the classes of equal rows of ``values`` found another way (e.g.
    :func:`frame_classes` of the table ``values`` was measured from), numbered as
    ``distinct_rows(values)`` numbers them: by their first rows' values, first column
    first. Only their first rows are read.
    """
    return _renumber(classes, _lexicographic(np.asarray(values, dtype=np.float64)[classes.first]))


def _reference(values: np.ndarray, order: str) -> DistinctRows:
    """The classes by ``numpy.unique(axis=0)``, the exact definition."""
    if len(values) == 0:
        empty = np.empty(0, dtype=np.int64)
        return DistinctRows(empty, empty, empty)
    _, first, inverse, counts = np.unique(values, axis=0, return_index=True,
                                          return_inverse=True, return_counts=True)
    found = DistinctRows(inverse.reshape(-1).astype(np.int64), counts.astype(np.int64),
                         first.astype(np.int64))
    if order == "first":
        return _renumber(found, np.argsort(found.first, kind="stable"))
    return found


def frame_keys(frame: pd.DataFrame, columns) -> np.ndarray:
    """One uint64 word per value of ``columns``, equal where ``groupby`` keys are equal.

    Float columns give their bits (−0.0 as 0.0, every NaN as one NaN); any other column
    its ``pandas.factorize`` code, missing values one code. Stored column by column
    (Fortran order): each column is written in one sequential pass.
    """
    words = np.empty((len(columns), len(frame)), dtype=np.uint64).T
    for j, column in enumerate(columns):
        series = frame[column]
        if isinstance(series.dtype, np.dtype) and series.dtype.kind == "f":
            x = series.to_numpy(dtype=np.float64)
            x = np.where(np.isnan(x), np.nan, x) + 0.0
            words[:, j] = x.view(np.uint64)
        else:
            codes, _ = pd.factorize(series, use_na_sentinel=False)
            words[:, j] = codes.astype(np.uint64)
    return words


def frame_classes(frame: pd.DataFrame, columns, *,
                  candidates: np.ndarray | None = None) -> DistinctRows:
    """Classes of ``frame.groupby(list(columns), dropna=False, sort=False).ngroup()``.

    Numbered by first appearance, as that call numbers them.

    ``candidates`` (optional, one non-negative integer per row) is a guess at the
    classes, e.g. the groups a release was aggregated from. It only says where to look,
    as the hash does: every row is compared with the first row of its candidate, and
    only those first rows are then hashed (candidates with equal rows are one class).
    When some row differs from its candidate's first row, the guess is dropped and
    every row is hashed. The classes are the same either way (a function of ``frame``
    alone); a right guess of 200,000 groups of a 1,000,000-row release hashes
    200,000 rows instead of 1,000,000.

    Examples
    --------
    >>> t = pd.DataFrame({"a": [1.0, 2.0, 1.0], "b": ["x", "y", "x"]})
    >>> frame_classes(t, ["a", "b"]).counts.tolist()
    [2, 1]
    >>> frame_classes(t, ["a", "b"], candidates=np.array([0, 1, 2])).counts.tolist()
    [2, 1]
    """
    words = frame_keys(frame, list(columns))
    if _group_rows_compiled is not None:
        found = (None if candidates is None or not len(words) else
                 _classes_of_candidates(words, np.asarray(candidates, dtype=np.int64)))
        return found if found is not None else _classes_in_first_order(words, floats=False)
    found = _classes_of_words(words)
    if found is None:
        ids = frame.groupby(list(columns), dropna=False, sort=False).ngroup().to_numpy()
        inverse = ids.astype(np.int64)
        counts = np.bincount(inverse).astype(np.int64)
        first = np.full(len(counts), len(frame), dtype=np.int64)
        np.minimum.at(first, inverse, np.arange(len(frame), dtype=np.int64))
        return DistinctRows(inverse, counts, first)
    return _renumber(found, np.argsort(found.first, kind="stable"))

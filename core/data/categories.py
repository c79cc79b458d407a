"""The released category of a group: the median of an ordinal attribute, the mode of a nominal one.

Shared by :mod:`core.data.encoding` (the whole table's aggregate sets each attribute's
scale) and :mod:`core.data.aggregate` (every group's released value).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from core.data.roles import Level

__all__ = ["group_aggregate_codes", "released_series"]


def group_aggregate_codes(codes: np.ndarray, labels: np.ndarray, level: Level,
                          n_categories: int) -> np.ndarray:
    """The released category code of every group, shape (n_groups,).

    ordinal
        The median category. When a group has an even size and its two middle
        categories differ, both are medians; the one nearer the group's mean rank is
        released (ties to the lower), the one with the smaller squared rank distance.
        A category between them that no member has is never released: a released
        category is always one that a record of the group holds.
    nominal
        The mode, the category minimising the within-group 0/1 distance; ties go to
        the category that comes first in sorted order.

    A released code is always the code of a member of the group. Groups without
    records (label values not used) get −1.

    Examples
    --------
    >>> labels = np.array([0, 0, 0, 0, 1, 1, 1])
    >>> codes = np.array([0, 1, 3, 3, 2, 2, 0])
    >>> group_aggregate_codes(codes, labels, Level.ORDINAL, 4).tolist()
    [1, 2]
    >>> group_aggregate_codes(codes, labels, Level.NOMINAL, 4).tolist()
    [3, 2]
    """
    codes = np.asarray(codes, dtype=np.int64)
    labels = np.asarray(labels, dtype=np.int64)
    counts = np.bincount(labels)
    if counts.size * max(n_categories, 1) <= _TALLY_CELLS * max(len(codes), 1):
        return _from_tallies(codes, labels, counts, level, n_categories)
    return _from_sorted(codes, labels, counts, level, n_categories)


_TALLY_CELLS = 8
"""Groups × categories up to this many times the records are counted in one table (at
most 64 bytes a record); more are sorted."""


def _from_tallies(codes, labels, counts, level, n_categories) -> np.ndarray:
    """:func:`group_aggregate_codes` from a table of each group's count of each
    category: the mode is the first largest count (the first category of the tied ones),
    the medians the categories where the running count passes the middle ranks (3–5
    times faster than sorting on a million records; :func:`_from_sorted` is the
    reference, the tests compare them)."""
    out = np.full(counts.size, -1, dtype=np.int64)
    used = counts > 0
    tallies = np.bincount(labels * n_categories + codes,
                          minlength=counts.size * n_categories).reshape(-1, n_categories)
    if level is not Level.ORDINAL:
        out[used] = np.argmax(tallies, axis=1)[used]
        return out
    running = np.cumsum(tallies, axis=1, out=tallies)
    # the (c−1)//2-th and c//2-th smallest codes of a group of c: how many categories
    # the running count has not yet passed those ranks at
    low = (running <= ((counts - 1) // 2)[:, None]).sum(axis=1)[used]
    high = (running <= (counts // 2)[:, None]).sum(axis=1)[used]
    mean = np.bincount(labels, weights=codes)[used] / counts[used]
    out[used] = np.where(high - mean < mean - low, high, low)
    return out


def _from_sorted(codes, labels, counts, level, n_categories) -> np.ndarray:
    """:func:`group_aggregate_codes` by sorting the records by group and code."""
    out = np.full(counts.size, -1, dtype=np.int64)
    used = counts > 0
    if level is Level.ORDINAL:
        order = np.lexsort((codes, labels))
        ordered = codes[order]
        starts = np.cumsum(counts) - counts
        low = ordered[(starts + (counts - 1) // 2)[used]]
        high = ordered[(starts + counts // 2)[used]]
        mean = np.bincount(labels, weights=codes)[used] / counts[used]
        out[used] = np.where(high - mean < mean - low, high, low)
        return out
    key = labels * n_categories + codes
    distinct, frequency = np.unique(key, return_counts=True)
    group, code = distinct // n_categories, distinct % n_categories
    order = np.lexsort((code, -frequency, group))
    first = np.r_[True, group[order][1:] != group[order][:-1]]
    out[group[order][first]] = code[order][first]
    return out


def released_series(original: pd.Series, categories: np.ndarray,
                    codes: np.ndarray) -> pd.Series:
    """The categories ``codes`` name, as a column of ``original``'s dtype and index.

    The categories are converted to the dtype once and taken by the codes (a million
    text values are not made one by one); where they do not convert, the values are
    converted as a column, or kept as objects (:func:`_released_values`, the reference
    the tests compare with).
    """
    try:
        converted = pd.array(categories, dtype=original.dtype)
    except (TypeError, ValueError):
        converted = None
    if converted is not None and len(converted) == len(categories):
        return pd.Series(converted.take(np.asarray(codes, dtype=np.int64)),
                         index=original.index, name=original.name, dtype=original.dtype)
    return _released_values(original, categories, codes)


def _released_values(original: pd.Series, categories: np.ndarray,
                     codes: np.ndarray) -> pd.Series:
    """:func:`released_series` made value by value."""
    values = categories[codes]
    try:
        return pd.Series(values, index=original.index, name=original.name).astype(
            original.dtype)
    except (TypeError, ValueError):
        return pd.Series(values, index=original.index, name=original.name, dtype=object)

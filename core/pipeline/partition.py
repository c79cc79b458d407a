"""Running a method over strata and attribute blocks.

A *stratum* is a set of records that share the values of the stratum columns; records
are only grouped with records of their own stratum. An *attribute block* is a subset of
the quasi-identifiers microaggregated on its own; k-anonymity then holds per block
(each block's masked values form classes of at least k), not for the combination.

:func:`partition_blocks` returns one partition per block, shape (n_records, n_blocks):
column b holds the group ids of block b, unique across strata.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from core.data.encoding import Encoding
from core.errors import MicroaggError, SmallStratumError
from core.progress import TaskState
from core.methods.refine import refine
from core.methods.registry import Method, MethodInput
from core.data.roles import RoleSpec

__all__ = ["parse_blocks", "resolve_blocks", "strata_of", "partition_blocks",
           "recode_merged_strata"]


def parse_blocks(text: str) -> tuple[tuple[str, ...], ...]:
    """``"A,B,C;D,E"`` → ``(("A", "B", "C"), ("D", "E"))``."""
    blocks = tuple(tuple(c.strip() for c in block.split(",") if c.strip())
                   for block in text.split(";") if block.strip())
    if not blocks:
        raise MicroaggError(f"Blocks '{text}': give column lists like \"A,B;C,D\".")
    return blocks


def resolve_blocks(roles: RoleSpec, blocks, method: Method) -> tuple[tuple[str, ...], ...]:
    """Check the blocks cover every quasi-identifier exactly once; apply the method's scope."""
    qi = roles.quasi_identifiers
    if method.scope == "whole-table":
        if blocks:
            raise MicroaggError(f"{method.label} works on all quasi-identifiers at once; "
                                "it takes no attribute blocks.")
        return (tuple(qi),)
    if method.scope == "per-attribute":
        if blocks:
            raise MicroaggError(f"{method.label} works on each attribute separately; "
                                "it takes no blocks.")
        return tuple((c,) for c in qi)
    if not blocks:
        blocks = (tuple(qi),)
    seen: dict[str, int] = {}
    for number, block in enumerate(blocks, start=1):
        for column in block:
            if column not in qi:
                raise MicroaggError(f"Block {number} names '{column}', which is not a "
                                    "quasi-identifier.")
            if column in seen:
                raise MicroaggError(f"Column '{column}' is in blocks {seen[column]} and "
                                    f"{number}; put each quasi-identifier in one block.")
            seen[column] = number
    missing = [c for c in qi if c not in seen]
    if missing:
        raise MicroaggError(f"Quasi-identifier '{missing[0]}' is in no block; every "
                            "quasi-identifier must be in exactly one block.")
    if method.scope == "univariate":
        wide = [b for b in blocks if len(b) > 1]
        if wide:
            raise MicroaggError(
                f"{method.label} works on one attribute, but {len(wide[0])} "
                f"quasi-identifiers were given together ({', '.join(wide[0])}). Use "
                "individual-ranking to treat each one separately, or pcp / zscores for "
                "a multivariate projection."
            )
    return tuple(tuple(b) for b in blocks)


def strata_of(table: pd.DataFrame, roles: RoleSpec, X: np.ndarray, k: int | None,
              *, merge_small: bool) -> list[np.ndarray]:
    """Record indices of every stratum (one stratum of all records without strata).

    A stratum with fewer than k records is an error naming it and the nearest stratum
    (by the distance between quasi-identifier centroids), unless ``merge_small``: then
    it is merged into that nearest stratum, repeatedly, until every stratum has ≥ k.
    Merged strata must also be merged in the output (see :func:`recode_merged_strata`),
    or an intruder who knows the stratum could tell their records apart.
    """
    if not roles.strata:
        return [np.arange(len(table))]
    columns = list(roles.strata)
    grouped = table.groupby(columns, sort=True, dropna=False, observed=True)
    codes = grouped.ngroup().to_numpy()
    keys = [key if isinstance(key, tuple) else (key,) for key in grouped.size().index]
    names = [" / ".join(str(v) for v in key) for key in keys]
    # One stable sort gives every stratum's rows, in table order, at once. Strata are
    # kept by their group number: two strata may print alike (1 and "1"; "a / b" and
    # "a" beside "b"), and their names serve only the messages.
    order = np.argsort(codes, kind="stable")
    bounds = np.cumsum(np.bincount(codes, minlength=len(names)))[:-1]
    groups = dict(enumerate(np.split(order, bounds)))
    if k is None:
        return list(groups.values())
    while True:
        small = [code for code, rows in groups.items() if len(rows) < k]
        if not small or len(groups) == 1:
            break
        code = min(small, key=lambda s: (len(groups[s]), names[s], s))
        centre = X[groups[code]].mean(axis=0)
        nearest = min((other for other in groups if other != code),
                      key=lambda o: (float(((X[groups[o]].mean(axis=0) - centre) ** 2).sum()),
                                     names[o], o))
        if not merge_small:
            columns = ", ".join(roles.strata)
            raise SmallStratumError(
                f"Stratum '{names[code]}' ({columns}) has {len(groups[code])} record(s), "
                f"fewer than k = {k}. Merge it with the nearest stratum '{names[nearest]}' "
                "(option 'merge small strata'), recode the stratum column, or choose a "
                "smaller k.",
                stratum=names[code], nearest=names[nearest],
            )
        groups[nearest] = np.sort(np.concatenate([groups[nearest], groups.pop(code)]))
    return list(groups.values())


def recode_merged_strata(masked: pd.DataFrame, roles: RoleSpec,
                         strata: Sequence[np.ndarray]) -> list[str]:
    """Give every record of a merged stratum the same stratum values, "A + B".

    Modifies ``masked`` (a fresh output frame) in place; returns one line per merge.
    """
    merges = []
    for rows in strata:
        for column in roles.strata:
            values = masked[column].iloc[rows]
            if values.nunique(dropna=False) > 1:  # 1 and "1" are two strata, one text
                label = " + ".join(sorted(values.astype(str).unique()))
                if masked[column].dtype != object:
                    masked[column] = masked[column].astype(object)
                masked.iloc[rows, masked.columns.get_loc(column)] = label
                merges.append(f"Strata merged in column '{column}': {label}.")
    return merges


def dense_ranks(labels: np.ndarray) -> np.ndarray:
    """``numpy.unique(labels, return_inverse=True)[1]``: each label's rank among the
    distinct labels (shape (n,), int64).

    Non-negative integer labels no larger than a few times their count are ranked by
    counting (a present label's rank is the number of smaller labels present); any
    others by ``numpy.unique``.
    """
    labels = np.asarray(labels).reshape(-1)
    if (labels.dtype.kind in "iu" and np.can_cast(labels.dtype, np.intp) and len(labels)
            and 0 <= labels.min() and labels.max() < 4 * len(labels) + 16):
        present = np.bincount(labels) > 0
        rank = np.cumsum(present) - 1
        return rank[labels].astype(np.int64)
    _, inverse = np.unique(labels, return_inverse=True)
    return inverse.reshape(-1).astype(np.int64)


def partition_blocks(method: Method, encoding: Encoding, table: pd.DataFrame, roles: RoleSpec,
                     blocks: Sequence[Sequence[str]], strata: Sequence[np.ndarray],
                     params: dict, state: TaskState) -> np.ndarray:
    """Run ``method`` (then its refinement) per block and per stratum.

    Each block's columns of the embedding ``encoding.X`` are what the method sees (a
    nominal quasi-identifier spans several columns; :mod:`core.data.encoding`).

    Returns the labels (n_records × n_blocks) and the details a method reported
    (cluster size, merges, swaps), added up over its calls.
    """
    X = encoding.X
    details: dict = {}
    params = dict(params)
    refinement = params.pop("refine", "none")
    labels = np.full((len(X), len(blocks)), -1, dtype=np.int64)
    total = len(blocks) * len(X)
    done = 0
    for b, block in enumerate(blocks):
        columns = encoding.columns_of(block)
        offset = 0
        for rows in strata:
            share = len(rows) / total
            sub = state.sub(done / total, done / total + share)
            whole = (len(rows) == len(X) and columns == list(range(X.shape[1]))
                     and np.array_equal(rows, np.arange(len(X))))
            X_part = X.copy() if whole else X[np.ix_(rows, columns)]  # the same matrix
            data = MethodInput(X_part, table.iloc[rows], roles)
            if refinement == "none":
                part = method.function(data, state=sub, **params)
                if hasattr(part, "labels"):
                    for key in ("cluster_size", "merges", "swaps", "n_buckets"):
                        if hasattr(part, key):
                            details[key] = details.get(key, 0) + int(getattr(part, key))
                    if hasattr(part, "buckets"):
                        details["buckets"] = part.buckets
                    part = part.labels
            else:
                part = method.function(data, state=sub.sub(0.0, 0.5), **params)
                part = refine(X_part, part, k=params["k"], method=refinement,
                              state=sub.sub(0.5, 1.0))
            part = dense_ranks(np.asarray(part))
            labels[rows, b] = part + offset
            offset += int(part.max()) + 1
            done += len(rows)
    return labels, details

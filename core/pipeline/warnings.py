"""Warnings on a release that verifies but should not be published as it is.

A verifier answers "does the guarantee hold?"; a release board also asks "is the file
worth releasing, and does anything left in it undo the masking?". These checks run once,
on the final released table, and every result carries what they found
(:attr:`AnonymizationResult.warnings`): the summary JSON, the report, the GUI banner
(which also asks before an export) and the command line's stderr show them.

The checks and their thresholds:

dominant group
    One released class (records with the same released quasi-identifier values; groups
    that release the same mode merge into one) holds more than half of the records
    (``DOMINANT_SHARE``). tc-merge on Census at t = 0.15 merges all 1,080
    records into one group: verified, and useless.
high information loss
    IL of at least ``HIGH_IL`` percent.
unique records without a guarantee
    A method that promises no k-anonymity (individual ranking, Mic1D-k) whose release
    leaves real anonymity k′ below ``LOW_K_PRIME`` or more than ``UNIQUE_SHARE`` of the
    records alone in their class.
unique records across attribute blocks
    With several attribute blocks, k-anonymity holds within each block only; the same
    thresholds on the classes of all the quasi-identifiers together (k′ and the records
    alone in their class are the measures', on every quasi-identifier). MDAV on the
    sample with the blocks (age, years_education; income, hours_worked,
    household_size) verifies at k = 3 and leaves 97 % of the records unique: linked by
    an intruder who knows attributes of both blocks (DLD 97 %).
a kept column that reveals a quasi-identifier
    A column released as it is (confidential or non-confidential, and unchanged: a
    column with noise or released as buckets does not count) that determines a
    quasi-identifier (every value of the column goes with one value of it) or is
    determined by it, in the original table. Adult's ``education`` maps one-to-one to
    ``education-num``: masking ``education-num`` while releasing ``education`` protects
    nothing. Only codings count: the determining side must have at most half as many
    distinct values as records (a column unique to every record determines everything
    trivially, and its mapping is not public knowledge), and the other side at least two.
    Beyond that, a numeric column that is a strictly monotone function of a numeric
    quasi-identifier (``birth_year = 2024 − age``; equal values exactly where the
    quasi-identifier's are equal, in the same or the reverse order) reveals it however
    many distinct values both have: at least the original order, and the values
    themselves to whoever knows the function. Two columns of distinct values are
    one-to-one trivially, but not in order unless one follows the other (or by chance,
    which with ``_MONOTONE_FROM`` = 8 distinct values or more is below 1 in 20,000).
    Nor does a rounding or a banding of a numeric quasi-identifier with more distinct
    values than half the records escape (``income_k = round(income / 1000)``,
    ``over_40 = age > 40``): a column that is a function of the quasi-identifier, each of
    its values taken on one interval of it (the bands need not be in order), gives each
    record's band. It has fewer distinct values than the quasi-identifier (counted over
    all records, missing as a value; a column with as many is one-to-one, and only its
    order can tell, as above). Every column is a function of a quasi-identifier of distinct values,
    so the bands must be too few to fall into intervals by chance: with u distinct values
    of the quasi-identifier, m bands and u_i values in band i, intervals happen with
    probability m!·∏u_i!/u!, which must be below 2/8!, the order's bound above (a
    yes/no flag over 20 ages, 10 and 10, qualifies; 3 bands of 3 ages do not). The
    message says what the column does to this release: how many records are alone in
    their class once it is read beside the released quasi-identifiers (and strata).
constant quasi-identifier
    It carries no information: it is released as it is and adds nothing to SST.
records released unmasked
    With ``missing="exclude"``, records with missing values are released as they are,
    flagged (:mod:`core.pipeline.missing`): :func:`unmasked_missing_warning`, always.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from core.data.roles import RoleSpec

__all__ = ["ColumnRelation", "ReleaseWarning", "column_relations", "release_warnings",
           "unmasked_missing_warning", "DOMINANT_SHARE", "HIGH_IL", "LOW_K_PRIME",
           "UNIQUE_SHARE"]

DOMINANT_SHARE = 0.5
HIGH_IL = 50.0
LOW_K_PRIME = 2.0
UNIQUE_SHARE = 0.05
_SAMPLE = 50_000  # rows to refute a dependency quickly before checking all of them
# Distinct values of a quasi-identifier from which an order it shares with a kept column
# is not chance: two columns of m distinct values in random order share it with
# probability 2/m! (1 in 20,160 for 8, 1 in 3 for 3).
_MONOTONE_FROM = 8
# The chance, at most, that a column not derived from a quasi-identifier takes each of its
# values on one interval of it (_banded): the order's, 2/8!.
_LOG_CHANCE = math.log(2 / math.factorial(_MONOTONE_FROM))


@dataclass(frozen=True)
class ReleaseWarning:
    """One finding: ``kind`` names the check; ``message`` says it in plain words."""

    kind: str
    message: str

    def __str__(self) -> str:
        return self.message


def release_warnings(table: pd.DataFrame, released: pd.DataFrame, roles: RoleSpec, *,
                     group_sizes: np.ndarray, il: float, k_prime: float,
                     unique_records: int, record_level: bool,
                     constant: tuple[str, ...] = (),
                     relations: tuple[ColumnRelation, ...] | None = None,
                     blocks: int = 1,
                     classes: np.ndarray | None = None) -> tuple[ReleaseWarning, ...]:
    """Every warning on ``released`` (module notes); an empty tuple when there is none.

    ``relations`` is :func:`column_relations` of ``table`` and ``roles`` when the
    caller already has it; it is computed here otherwise. ``blocks`` is the number of
    attribute blocks the guarantee holds in, each on its own. ``classes`` is the class
    id of every released record (by its quasi-identifiers and strata), computed here
    when needed and not given.
    """
    n = len(table)
    found: list[ReleaseWarning] = []
    largest = int(group_sizes.max()) if len(group_sizes) else 0
    if n and largest > DOMINANT_SHARE * n:
        found.append(ReleaseWarning(
            "dominant-group",
            f"One class holds {largest:,} of the {n:,} records ({100 * largest / n:.0f} %): "
            "they are all released with the same quasi-identifier values. The release "
            "keeps little information; try a larger t, a smaller k or another method."))
    if il >= HIGH_IL:
        found.append(ReleaseWarning(
            "high-information-loss",
            f"Information loss is {il:.1f} % (100 % is one value per attribute for the "
            "whole table): check that the released data are still useful."))
    singled_out = bool(n) and (k_prime < LOW_K_PRIME or unique_records > UNIQUE_SHARE * n)
    if not record_level and singled_out:
        found.append(ReleaseWarning(
            "unique-records",
            f"This method promises no k-anonymity, and {unique_records:,} records "
            f"({100 * unique_records / n:.1f} %) are alone in their class (k′ = "
            f"{k_prime:.2f}): they can be singled out from their quasi-identifiers."))
    if record_level and blocks > 1 and singled_out:
        found.append(ReleaseWarning(
            "unique-across-blocks",
            f"k-anonymity holds within each of the {blocks} attribute blocks only: on all "
            f"the quasi-identifiers together, {unique_records:,} records "
            f"({100 * unique_records / n:.1f} %) are alone in their class (k′ = "
            f"{k_prime:.2f}). An intruder who knows attributes of two blocks can single "
            "them out; use one block unless no one can know them together."))
    for column in constant:
        found.append(ReleaseWarning(
            "constant-quasi-identifier",
            f"Quasi-identifier '{column}' has one value for every record: it carries no "
            "information and is released as it is."))
    if relations is None:
        relations = column_relations(table, roles)
    if classes is None:
        keys = [*roles.quasi_identifiers, *roles.strata]
        classes = (released.groupby(keys, dropna=False, sort=False).ngroup().to_numpy()
                   if keys else np.zeros(len(released), dtype=np.int64))
    found += _revealing_columns(table, released, relations, classes)
    return tuple(found)


def unmasked_missing_warning(n_records: int, flag: str) -> ReleaseWarning:
    """The warning that ``n_records`` records were put back unmasked, flagged in ``flag``."""
    return ReleaseWarning(
        "unmasked_missing",
        f"{n_records:,} records with missing values are released unmasked (flag column "
        f"'{flag}'); they are not protected: remove them before publishing, or impute the "
        "missing values and run again.")


@dataclass(frozen=True)
class ColumnRelation:
    """In the original table, ``column`` ``relation`` quasi-identifier
    ``quasi_identifier``: "maps one-to-one to", "determines" or "is determined by"."""

    column: str
    quasi_identifier: str
    relation: str


_BANDED = "is a rounding or banding of"


def column_relations(table: pd.DataFrame, roles: RoleSpec) -> tuple[ColumnRelation, ...]:
    """Every coding between a column that may be released as it is (neither identifier,
    quasi-identifier nor stratum) and a quasi-identifier, in ``table`` (module notes),
    columns in the table's order, then quasi-identifiers in theirs.

    It reads the original alone, so :func:`core.pipeline.run.run` computes it on its
    helper thread while the method runs (about 0.7 s for 13 columns of 1,000,000 rows);
    :func:`release_warnings` keeps the relations of the columns the release left
    unchanged.
    """
    skip = set(roles.quasi_identifiers) | set(roles.identifiers) | set(roles.strata)
    candidates = [c for c in table.columns if c not in skip]
    if not candidates:
        return ()
    n = len(table)
    codes = {c: _codes(table[c]) for c in [*candidates, *roles.quasi_identifiers]}
    distinct = {c: int(codes[c].max()) + 1 if n else 0 for c in codes}
    ranks: dict = {}  # the first rows' ranks of the numeric columns (_monotone)
    orders: dict = {}  # the quasi-identifiers' sorted rows (_banded)
    found = []
    for column in candidates:
        for qi in roles.quasi_identifiers:
            if distinct[qi] < 2 or distinct[column] < 2:
                continue
            if distinct[column] <= n / 2 and _determines(codes[column], codes[qi]):
                relation = ("maps one-to-one to" if distinct[column] == distinct[qi]
                            and _determines(codes[qi], codes[column]) else "determines")
            elif distinct[qi] <= n / 2 and _determines(codes[qi], codes[column]):
                relation = "is determined by"
            elif _monotone(column, qi, table, ranks):
                relation = "is a monotone function of"
            elif distinct[column] < distinct[qi] and _banded(table[column], codes[column],
                                                             table[qi], orders):
                relation = _BANDED
            else:
                continue
            found.append(ColumnRelation(column, qi, relation))
    return tuple(found)


def _revealing_columns(table: pd.DataFrame, released: pd.DataFrame, relations,
                       classes: np.ndarray) -> list[ReleaseWarning]:
    """The relations (:func:`column_relations` of ``table``) of the columns released
    as they are, each with the records it leaves alone in their class (``classes``: the
    released records' class ids)."""
    unchanged: dict[str, bool] = {}

    def kept(column: str) -> bool:
        if column not in unchanged:
            unchanged[column] = column in released.columns and table[column].reset_index(
                drop=True).equals(released[column].reset_index(drop=True))
        return unchanged[column]

    n = len(released)
    alone = int(np.count_nonzero(np.bincount(classes) == 1)) if n else 0
    found = []
    for found_relation in relations:
        column, qi, relation = (found_relation.column, found_relation.quasi_identifier,
                                found_relation.relation)
        if not kept(column):
            continue
        with_it = _alone_with(classes, _codes(released[column]))
        found.append(ReleaseWarning(
            "kept-column-reveals",
            f"Column '{column}', released as it is, {relation} quasi-identifier "
            f"'{qi}' in the original table: whoever reads '{column}' "
            + (f"can tell apart records whose '{qi}' was masked together"
               if relation == "is determined by" else
               f"learns the original order of '{qi}', and its values if the function is "
               "known" if relation == "is a monotone function of" else
               f"learns each record's band of the original '{qi}', and can tell apart "
               f"records whose '{qi}' was masked together" if relation == _BANDED else
               f"learns the original '{qi}'")
            + (f". Read beside the released quasi-identifiers, it leaves {with_it:,} of "
               f"the {n:,} records alone in their class ({alone:,} without it)"
               if with_it > alone else "")
            + f". Make '{column}' a quasi-identifier too, or leave it out."))
    return found


def _alone_with(classes: np.ndarray, codes: np.ndarray) -> int:
    """Records alone in their class once the classes are split by ``codes``."""
    if not len(classes):
        return 0
    _, counts = np.unique(classes * (int(codes.max()) + 1) + codes, return_counts=True)
    return int(np.count_nonzero(counts == 1))


def _banded(column: pd.Series, codes: np.ndarray, qi: pd.Series, orders: dict) -> bool:
    """Whether ``column`` (its ``codes``) is a rounding or a banding of numeric ``qi``
    (module notes): a function of it, each code on one interval of its values, and too
    few bands for that to be chance. Rows where ``qi`` is missing do not count. The
    first rows refute most columns (a banding of all rows is one of every part) before
    ``qi``'s rows are sorted, once for every column (kept in ``orders``)."""
    if not pd.api.types.is_numeric_dtype(qi) or pd.api.types.is_bool_dtype(qi):
        return False
    values = qi.to_numpy(dtype=np.float64, na_value=np.nan)
    if len(values) > _SAMPLE and _bands(codes[:_SAMPLE], values[:_SAMPLE], None) is None:
        return False
    if qi.name not in orders:
        present = np.flatnonzero(~np.isnan(values))
        orders[qi.name] = present[np.argsort(values[present], kind="stable")]
    starts = _bands(codes, values, orders[qi.name])
    if starts is None or len(np.unique(codes[orders[qi.name][starts]])) < 2:
        return False
    band = codes[orders[qi.name][starts]]  # each distinct value's band, in order
    per_band = np.bincount(band)
    per_band = per_band[per_band > 0]
    ordered = (pd.api.types.is_numeric_dtype(column)
               and not pd.api.types.is_bool_dtype(column))
    if ordered:  # bands of numbers in the order of qi: the order's chance, 2·∏u_i!/u!
        steps = np.diff(column.to_numpy(dtype=np.float64, na_value=np.nan)[
            orders[qi.name][starts]])
        ordered = bool((steps > 0).all() or (steps < 0).all())
    arrangements = math.log(2) if ordered else math.lgamma(len(per_band) + 1)
    log_chance = (arrangements + sum(math.lgamma(x + 1) for x in per_band.tolist())
                  - math.lgamma(len(band) + 1))
    return log_chance < _LOG_CHANCE


def _bands(codes: np.ndarray, values: np.ndarray, order: np.ndarray | None):
    """Where ``codes`` are a function of ``values`` taking each code on one interval,
    the first of the sorted rows (``order``: those where ``values`` is not missing,
    sorted; None: sorted here) of each distinct value; None where they are not."""
    if order is None:
        present = np.flatnonzero(~np.isnan(values))
        order = present[np.argsort(values[present], kind="stable")]
    v, c = values[order], codes[order]
    starts = np.flatnonzero(np.r_[True, v[1:] != v[:-1]]) if len(v) else order
    band = c[starts]  # the code of each distinct value, if the codes are a function
    if not np.array_equal(np.repeat(band, np.diff(np.r_[starts, len(v)])), c):
        return None
    runs = 1 + int(np.count_nonzero(band[1:] != band[:-1])) if len(band) else 0
    return starts if runs == np.unique(band).size else None


def _monotone(column: str, qi: str, table: pd.DataFrame, ranks: dict) -> bool:
    """Whether numeric ``column`` is a strictly monotone function of numeric ``qi``
    (module notes). The ranks of the first rows (kept in ``ranks`` for the other pairs)
    refute most pairs before the whole columns are ranked."""
    for c in (column, qi):
        if c not in ranks:
            series = table[c]
            numeric = (pd.api.types.is_numeric_dtype(series)
                       and not pd.api.types.is_bool_dtype(series))
            ranks[c] = series.iloc[:_SAMPLE].rank(method="dense").to_numpy() \
                if numeric else None
    if ranks[column] is None or ranks[qi] is None or \
            not _same_order(ranks[column], ranks[qi]):
        return False
    return len(table) <= _SAMPLE or _same_order(
        *(table[c].rank(method="dense").to_numpy() for c in (column, qi)))


def _same_order(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether dense ranks ``a`` and ``b`` are equal or reversed, missing where the
    other's is, with at least ``_MONOTONE_FROM`` distinct values."""
    gaps = np.isnan(a)
    if not np.array_equal(gaps, np.isnan(b)) or gaps.all():
        return False
    a, b = a[~gaps], b[~gaps]
    return b.max() >= _MONOTONE_FROM and (np.array_equal(a, b)
                                          or np.array_equal(a, b.max() + 1 - b))


def _codes(series: pd.Series) -> np.ndarray:
    codes, _ = pd.factorize(series, use_na_sentinel=False)
    return codes.astype(np.int64)


def _determines(source: np.ndarray, target: np.ndarray) -> bool:
    """True when every value of ``source`` goes with a single value of ``target``."""
    for rows in (slice(0, _SAMPLE), slice(None)):
        s, t = source[rows], target[rows]
        pairs = np.unique(s * (int(target.max()) + 1) + t)
        if pairs.size != np.unique(s).size:
            return False
        if len(source) <= _SAMPLE:
            break
    return True

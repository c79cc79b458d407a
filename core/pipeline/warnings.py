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
a kept column that tells every record apart
    A column released as it is whose values are all different (at least
    ``MIN_RECORDS_APART`` records: in a smaller table whole numbers of a short range are
    all different by chance, a value in 99 % of them at least), of text or of
    whole numbers within a range at most twice the records (a record or case number,
    a serial): read beside the release it singles out every record, and a number kept
    elsewhere too links each record to it. The Roles tab suggests such a column as an
    identifier; this says it again when it was released anyway. Measured decimals, and
    whole numbers spread wide (incomes in a small table), are not said.
a kept column that reveals a quasi-identifier
    A column released as it is (confidential or non-confidential, and unchanged: a
    column with noise or released as buckets does not count) that is a coding of a
    quasi-identifier, follows its order, rounds or bands it, or is a finer measure of
    it, in the original table (:mod:`core.pipeline.relations` gives the rules and their
    thresholds). The message says what the column does to this release when it does
    something: how many records are alone in their class once it is read beside the
    released quasi-identifiers (and strata), where that is more than without it.
a kept column that nearly follows a quasi-identifier
    A column released as it is that picks out, within the released classes, the
    records of a known original value of a masked quasi-identifier: at least halfway
    from chance to all it could (:mod:`core.pipeline.tracks` gives the attack and the
    threshold; :mod:`core.pipeline.follows` finds the pairs). A copy with noise, tax
    paid beside earnings. Pairs already said as an exact relation are not said twice.
    A column that follows no quasi-identifier alone may follow a function of two (a
    sum, difference, product or ratio: income per hour beside income and hours, a
    total beside two of its parts); it is said once, by the function it follows best.
    A quasi-identifier that no kept column follows alone may be followed by a function
    of two (a masked total beside its kept parts), said once too.
constant quasi-identifier
    It carries no information: it is released as it is and adds nothing to SST.
records released unmasked
    With ``missing="exclude"``, records with missing values are released as they are,
    flagged (:mod:`core.pipeline.missing`): :func:`unmasked_missing_warning`, always.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from core.data.roles import RoleSpec
from core.pipeline.follows import Follows, OriginalRanks, following_columns
from core.pipeline.relations import (BANDED, MONOTONE, ColumnRelation, codes_of,
                                      column_relations)
from core.verify.rows import frame_classes

__all__ = ["ColumnRelation", "ReleaseWarning", "class_warnings", "column_relations",
           "release_warnings",
           "unmasked_missing_warning", "DOMINANT_SHARE", "HIGH_IL", "LOW_K_PRIME",
           "UNIQUE_SHARE"]

DOMINANT_SHARE = 0.5
HIGH_IL = 50.0
LOW_K_PRIME = 2.0
UNIQUE_SHARE = 0.05


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
                     classes: np.ndarray | None = None,
                     ranks: OriginalRanks | None = None, executor=None,
                     state=None, encoding=None) -> tuple[ReleaseWarning, ...]:
    """Every warning on ``released`` (module notes); an empty tuple when there is none.

    ``relations`` is :func:`column_relations` of ``table`` and ``roles`` when the
    caller already has it; it is computed here otherwise. ``blocks`` is the number of
    attribute blocks the guarantee holds in, each on its own. ``classes`` is the class
    id of every released record (by its quasi-identifiers and strata), computed here
    when needed and not given. ``ranks`` are the original's for the follows check
    (:class:`~core.pipeline.follows.OriginalRanks`, made ahead), made here when not
    given, an ordinal quasi-identifier by its order in ``encoding`` (the original's
    quasi-identifiers measured); ``executor`` measures that check's pairs beside this
    thread; ``state`` (a TaskState) is checked between them.
    """
    n = len(table)
    found = class_warnings(n, int(group_sizes.max()) if len(group_sizes) else 0, il=il,
                           k_prime=k_prime, unique_records=unique_records,
                           record_level=record_level, blocks=blocks)
    for column in constant:
        found.append(ReleaseWarning(
            "constant-quasi-identifier",
            f"Quasi-identifier '{column}' has one value for every record: it carries no "
            "information and is released as it is."))
    if relations is None:
        relations = column_relations(table, roles)
    if classes is None:
        keys = [*roles.quasi_identifiers, *roles.strata]
        classes = (frame_classes(released, keys).inverse if keys
                   else np.zeros(len(released), dtype=np.int64))
    unchanged = _Unchanged(table, released)
    found += _identifying_columns(table, released, roles, unchanged)
    found += _revealing_columns(released, relations, classes, unchanged)
    for follows in following_columns(
            table, released, roles, relations, classes, unchanged,
            ranks=ranks if ranks is not None else OriginalRanks(table, (), encoding=encoding),
            executor=executor, state=state):
        found.append(_follows_warning(follows))
    return tuple(found)


def class_warnings(n: int, largest: int, *, il: float, k_prime: float,
                   unique_records: int, record_level: bool,
                   blocks: int = 1) -> list[ReleaseWarning]:
    """The warnings a release's class figures give alone (a dominant group, a high
    information loss, unique records without a guarantee or across attribute blocks):
    ``n`` records, the ``largest`` class, the figures of :func:`release_warnings`. A
    blocked run of a table read in parts has these figures and not the table."""
    found: list[ReleaseWarning] = []
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
    return found


def unmasked_missing_warning(n_records: int, flag: str) -> ReleaseWarning:
    """The warning that ``n_records`` records were put back unmasked, flagged in ``flag``."""
    return ReleaseWarning(
        "unmasked_missing",
        f"{n_records:,} records with missing values are released unmasked (flag column "
        f"'{flag}'); they are not protected: remove them before publishing, or impute the "
        "missing values and run again.")


class _Unchanged:
    """Whether a column of the original is in the release as it is (compared once)."""

    def __init__(self, table: pd.DataFrame, released: pd.DataFrame):
        self._table, self._released, self._found = table, released, {}

    def __call__(self, column: str) -> bool:
        if column not in self._found:
            self._found[column] = column in self._released.columns and same_values(
                self._table[column], self._released[column])
        return self._found[column]


def same_values(a: pd.Series, b: pd.Series) -> bool:
    """Whether two columns hold the same values in the same rows, whatever their types:
    a release read back from CSV parts (a blocked run's) has its whole numbers as
    floats and its text as strings, and still releases the column as it is."""
    a, b = a.reset_index(drop=True), b.reset_index(drop=True)
    if a.equals(b):
        return True
    if len(a) != len(b) or not (a.isna().to_numpy() == b.isna().to_numpy()).all():
        return False
    present = ~a.isna().to_numpy()
    a, b = a[present], b[present]
    numbers = [_as_numbers(x) for x in (a, b)]
    if all(x is not None for x in numbers):  # integers compared as integers: exact
        x, y = numbers
        if x.dtype.kind == y.dtype.kind == "i":
            return bool(np.array_equal(x, y))
        return bool(np.array_equal(x.astype(np.float64), y.astype(np.float64)))
    if any(x is not None for x in numbers) and not all(
            isinstance(x.dtype, pd.CategoricalDtype) or x.dtype == object for x in (a, b)):
        return False
    return bool((a.astype(str).to_numpy() == b.astype(str).to_numpy()).all())


def _as_numbers(series: pd.Series) -> np.ndarray | None:
    """The present values of ``series`` as numbers (int64 where they are whole numbers
    of an integer column, or text of digits), None where they are not all numbers."""
    if pd.api.types.is_bool_dtype(series) or pd.api.types.is_datetime64_any_dtype(series):
        return None
    if pd.api.types.is_integer_dtype(series):
        return series.to_numpy(np.int64)
    if pd.api.types.is_numeric_dtype(series):
        return series.to_numpy(np.float64)
    values = pd.to_numeric(series.astype(object), errors="coerce")
    if values.isna().any():
        return None
    return values.to_numpy()


MIN_RECORDS_APART = 50


def _identifying_columns(table: pd.DataFrame, released: pd.DataFrame, roles: RoleSpec,
                         kept: _Unchanged) -> list[ReleaseWarning]:
    """The columns released as they are that tell every record apart (module notes),
    judged on the original's column (the release's holds the same values, perhaps as
    other types: dates read back as text)."""
    n = len(released)
    found = []
    for column in roles.kept(released.columns):
        if column not in table.columns:
            continue
        series = table[column]
        if n < MIN_RECORDS_APART or not _looks_like_a_number_of_records(series):
            continue
        present = series.dropna()
        if len(present) < 0.99 * n or not present.iloc[:1000].is_unique or (
                not present.is_unique) or not kept(column):
            continue
        found.append(ReleaseWarning(
            "kept-column-identifies",
            f"Column '{column}', released as it is, has a different value for each of the "
            + (f"{n:,} records" if len(present) == n else
               f"{len(present):,} records that have one")
            + ", like a record or case number: read "
            "beside the release it tells every record apart, and wherever else the "
            "number is kept it links the record there. Give it the identifier role (it "
            "is then left out of the release), or leave it out."))
    return found


def _looks_like_a_number_of_records(series: pd.Series) -> bool:
    """Text, or whole numbers within a range at most twice the records (module notes)."""
    if pd.api.types.is_bool_dtype(series) or pd.api.types.is_datetime64_any_dtype(
            series) or pd.api.types.is_timedelta64_dtype(series):
        return False
    if not pd.api.types.is_numeric_dtype(series):  # text, unless every value is a number
        numbers = _as_numbers(series.dropna())
        if numbers is None:
            return True
        series = pd.Series(numbers)
    values = series.to_numpy(np.float64, na_value=np.nan)
    values = values[~np.isnan(values)]
    if not len(values) or not (np.isfinite(values).all() and (values == np.round(values)).all()):
        return False
    return float(values.max() - values.min()) + 1 <= 2 * len(series)


def _revealing_columns(released: pd.DataFrame, relations, classes: np.ndarray,
                       kept: _Unchanged) -> list[ReleaseWarning]:
    """The relations (:func:`column_relations` of the original) of the columns released
    as they are (``kept``), each with the records it leaves alone in their class
    (``classes``: the released records' class ids)."""
    n = len(released)
    alone = int(np.count_nonzero(np.bincount(classes) == 1)) if n else 0
    found = []
    for found_relation in relations:
        column, qi, relation = (found_relation.column, found_relation.quasi_identifier,
                                found_relation.relation)
        if not kept(column):
            continue
        with_it = _alone_with(classes, codes_of(released[column]))
        found.append(ReleaseWarning(
            "kept-column-reveals",
            f"Column '{column}', released as it is, {relation} quasi-identifier "
            f"'{qi}' in the original table: whoever reads '{column}' "
            + (f"can tell apart records whose '{qi}' was masked together"
               if relation == "is determined by" else
               f"learns the original order of '{qi}', and its values if the function is "
               "known" if relation == MONOTONE else
               f"learns each record's band of the original '{qi}', and can tell apart "
               f"records whose '{qi}' was masked together" if relation == BANDED else
               f"learns the original '{qi}'")
            + (f". Read beside the released quasi-identifiers, it leaves {with_it:,} of "
               f"the {n:,} records alone in their class ({alone:,} without it)"
               if with_it > alone else "")
            + f". Make '{column}' a quasi-identifier too, or leave it out."))
    return found


def _follows_warning(follows: Follows) -> ReleaseWarning:
    """The ``kept-column-follows`` warning of one finding of the follows check."""
    kept, known = follows.label(follows.columns), follows.label(follows.known)
    share = (f"for {100 * follows.picked / follows.apart:.0f} % of the "
             f"{follows.apart:,} records that {known} tells apart in their class "
             f"({100 * follows.classes / follows.apart:.0f} % by chance)")
    if len(follows.columns) == 2:
        first, second = (f"'{c}'" for c in follows.columns)
        return ReleaseWarning(
            "kept-column-follows",
            f"Columns {first} and {second}, released as they are, nearly follow "
            f"quasi-identifier {known} together, as {kept}: within the released classes, "
            f"whoever knows a record's original {known} picks it out by {kept} {share}. "
            f"Make {first} and {second} quasi-identifiers too, or leave one of them out.")
    column = follows.columns[0]
    knows = " and ".join(f"'{q}'" for q in follows.known)
    return ReleaseWarning(
        "kept-column-follows",
        f"Column '{column}', released as it is, nearly follows "
        + (f"quasi-identifier {known}" if len(follows.known) == 1 else
           f"{known}, a function of two quasi-identifiers")
        + f": within the released classes, whoever knows a record's original {knows} "
        f"picks it out by '{column}' {share}. Make '{column}' a quasi-identifier too, or "
        "leave it out.")


def _alone_with(classes: np.ndarray, codes: np.ndarray) -> int:
    """Records alone in their class once the classes are split by ``codes``."""
    if not len(classes):
        return 0
    _, counts = np.unique(classes * (int(codes.max()) + 1) + codes, return_counts=True)
    return int(np.count_nonzero(counts == 1))

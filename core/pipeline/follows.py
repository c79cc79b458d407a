"""Kept columns that nearly follow a masked quasi-identifier: the release warning.

:mod:`core.pipeline.tracks` measures the attack on one pair of columns; this module
finds the pairs of a release and says the ones that follow
(:func:`following_columns`, a check of :func:`core.pipeline.warnings.release_warnings`).

The attack reads each column as its ranks in the original table (an ordinal
quasi-identifier by its categories' order: education from "none" to "doctorate" beside a
kept number of school years; a kept column by its numbers), and ranks depend on the
values alone (:class:`~core.pipeline.tracks.Ranks`): :class:`OriginalRanks` makes
them on the original, on the run's helper thread while the method runs, and the check
reads them in the release's class order once the release is final. Its pairs are then
measured on two threads (the compiled attack holds no lock), each pair the same way
whichever thread takes it, and said in the order of the table's columns and the
quasi-identifiers.

A kept column that follows no quasi-identifier alone is then tried against functions
of two (:func:`_two_known`: their sum, difference, product and ratios), and a
quasi-identifier that no kept column follows against functions of two kept columns
(:func:`_two_kept`), screened by rank correlation on a sample. On the benchmark data
sets with MDAV at k = 3, 5 and 10 and 6 random sets of four numeric quasi-identifiers
each (the other columns kept), Census's total income PTOTVAL is said beside its parts
(wages or earnings with other income: 74 % of the records picked out, 20 % by chance),
WSALVAL beside PEARNVAL + ERNVAL at k = 10, and PTOTVAL − PEARNVAL kept beside a masked
other income POTHVAL; EIA, Tarragona and Adult gave none.

1,000,000 × 10 with 3 kept columns, every release warning after a PCP method
(``benchmarks/scale_follows.py``): 0.81–1.23 s, of which the functions' screen
0.17–0.24 s, against 3.4–4.7 s before the ranks were made ahead and the classes compared
pairwise. With 15 kept columns, 4.8 s, the functions 1.2 s of it.
"""

from __future__ import annotations

import math
from itertools import combinations
from typing import NamedTuple

import numpy as np
import pandas as pd

from core.data.encoding import Encoding
from core.data.roles import Level, RoleSpec
from core.measures.ahead import ItemWorks, Work
from core.pipeline import tracks
from core.pipeline.relations import numbers

__all__ = ["FORMULAS", "Follows", "OriginalRanks", "SCREEN", "SCREEN_SAMPLE",
           "following_columns", "rank_columns"]

FORMULAS = {"+": np.add, "−": np.subtract, "×": np.multiply, "/": np.divide}
SCREEN = 0.4
SCREEN_SAMPLE = 20_000


class Follows(NamedTuple):
    """Kept ``columns`` (one, or two combined by ``formula``, a key of
    :data:`FORMULAS`) that nearly follow ``known`` quasi-identifiers (one, or two
    combined by ``formula``; one side is one column), with the attack's figures."""

    columns: tuple[str, ...]
    known: tuple[str, ...]
    formula: str | None
    picked: float
    apart: int
    classes: int

    def label(self, names: tuple[str, ...]) -> str:
        """One side as the message names it: 'income', or 'income' / 'hours_worked'."""
        return f" {self.formula} ".join(f"'{name}'" for name in names)


def rank_columns(table: pd.DataFrame, roles: RoleSpec, *, noise: bool = False) -> list[str]:
    """The columns whose ranks the check may read: those that may be released as they
    are (none when there is no such column), then the quasi-identifiers. With
    ``noise``, the confidential columns get noise and are not released as they are."""
    kept = [c for c in roles.kept(table.columns) if not (noise and c in roles.confidential)]
    return [*kept, *roles.quasi_identifiers] if kept else []


def _column_ranks(table: pd.DataFrame, column: str, encoding: Encoding | None
                  ) -> tuple[np.ndarray | None, tracks.Ranks | None]:
    """``column``'s numbers for the functions of two (:meth:`OriginalRanks.numbers`)
    and its ranks in ``table``: a quasi-identifier's values as ``encoding`` measures
    them (an ordinal one ranked by its categories' order and no numbers, a nominal one
    no numbers), any other column's numbers (text read once); None where it holds no
    numbers."""
    if encoding is not None and column in encoding.names:
        level = encoding.attribute(column).level
        values = encoding.values[:, encoding.names.index(column)]
        if level is Level.ORDINAL:
            return None, tracks.Ranks(values)
        values = values if level is Level.NUMERIC else None
        read = numbers(table[column].reset_index(drop=True))
        return values, None if read is None else tracks.Ranks(read)
    values = numbers(table[column].reset_index(drop=True))
    return values, None if values is None else tracks.Ranks(values)


class OriginalRanks:
    """The ranks of ``columns`` of the original ``table`` (its quasi-identifiers
    measured by ``encoding``, when given: an ordinal one ranks by its order), each made
    once: started on ``executor`` (in the columns' order) when one is given, and
    otherwise, or when no thread has started it yet, on the thread that asks
    (:class:`Work`)."""

    def __init__(self, table: pd.DataFrame, columns, executor=None,
                 encoding: Encoding | None = None):
        self._table, self._encoding = table, encoding
        self._works = ({c: Work(executor, _column_ranks, table, c, encoding)
                        for c in columns} if executor is not None else {})
        self._made: dict[str, tuple[np.ndarray | None, tracks.Ranks | None]] = {}

    def make(self, columns, state=None) -> None:
        """Make ``columns``' ranks now, the last first: a helper that has not reached
        them takes them from the first, so both threads work until the last is made."""
        for column in reversed(list(columns)):
            if state is not None:
                state.check()
            self(column, state)

    def numbers(self, column: str) -> np.ndarray | None:
        """A column's numbers, read when its ranks were made (a numeric
        quasi-identifier's as the encoding measures it, when given; None for an ordinal
        or nominal one there), for the functions of two (:func:`_two_known`)."""
        return self._made_for(column, None)[0]

    def __call__(self, column: str, state=None) -> tracks.Ranks | None:
        return self._made_for(column, state)[1]

    def _made_for(self, column: str, state) -> tuple:
        if column not in self._made:
            work = self._works.get(column)
            self._made[column] = (work.result(state) if work is not None
                                  else _column_ranks(self._table, column, self._encoding))
        return self._made[column]


def following_columns(table: pd.DataFrame, released: pd.DataFrame, roles: RoleSpec,
                      relations, classes: np.ndarray, unchanged, *,
                      ranks: OriginalRanks, executor=None, state=None) -> list[Follows]:
    """The columns released as they are (``unchanged(column)``) that nearly follow a
    masked quasi-identifier in the released classes (``classes``, one id per record),
    beyond the exact relations already said (``relations``), in the order of the
    table's columns, then of the quasi-identifiers; then each column that follows
    neither any quasi-identifier nor a relation but follows a function of two
    (:func:`_two_known`), once, by the function it follows best; then each
    quasi-identifier that no kept column follows but a function of two such columns
    does (:func:`_two_kept`), once.

    ``ranks`` are the original's (:class:`OriginalRanks`; without its encoding an
    ordinal quasi-identifier of text is not ranked); ``executor`` measures pairs beside
    this thread; ``state`` is checked between them.
    """
    said = {(r.column, r.quasi_identifier) for r in relations}
    kept = [c for c in roles.kept(table.columns) if c in released.columns]
    masked = [q for q in roles.quasi_identifiers if q in released.columns
              and not unchanged(q)]
    if not kept or not masked or not len(classes):
        return []
    kept = [c for c in kept if not all((c, q) in said for q in masked) and unchanged(c)]
    if not kept:
        return []
    ranks.make([*kept, *masked], state)
    kept = [c for c in kept if ranks(c) is not None]
    masked = [q for q in masked if ranks(q) is not None]
    pairs = [(c, q) for c in kept for q in masked if (c, q) not in said]
    if not pairs:
        return []
    # The records in class order once, each column read in that order: the attack's
    # passes then read every class's records side by side.
    order, starts = tracks.class_blocks(classes)
    blocks = (np.arange(len(order)), starts)
    rising = {c: ranks(c).rising(order) for c in {*kept, *masked}}
    if executor is None:
        found = {}
        for pair in pairs:
            found.update(_attacks(blocks, rising, ranks, order, [pair], state))
    else:
        found = ItemWorks(executor, _attacks, pairs, (blocks, rising, ranks, order),
                          (state,)).result(state)
    follows = [Follows((c,), (q,), None, *found[c, q]) for c, q in pairs
               if tracks.tracks(*found[c, q])]
    named = {f.columns[0] for f in follows} | {column for column, _ in said}
    alone = [c for c in kept if c not in named]
    numeric = [q for q in masked if ranks.numbers(q) is not None]
    if alone and len(numeric) >= 2:
        follows += _two_known(alone, numeric, ranks, blocks, order, rising, state)
    named |= {f.columns[0] for f in follows}
    alone = [c for c in kept if c not in named and ranks.numbers(c) is not None]
    told = {f.known[0] for f in follows if len(f.known) == 1} | {q for _, q in said}
    untold = [q for q in masked if q not in told]
    if untold and len(alone) >= 2:
        follows += _two_kept(untold, alone, ranks, blocks, order, rising, state)
    return follows


def _attacks(blocks, rising: dict, ranks: OriginalRanks, order: np.ndarray,
             pairs, state=None) -> dict:
    """The attack (:func:`tracks.picked_out`) on each (kept column, quasi-identifier)
    pair: the kept column read rising, or falling where it falls as the
    quasi-identifier rises (:func:`tracks.rises`). ``state`` is checked first, on
    whichever thread measures the pairs."""
    found = {}
    for column, q in pairs:
        if state is not None:
            state.check()
        kept = rising[column]
        if not tracks.rises(rising[q], kept):
            kept = ranks(column).falling(order)
        found[column, q] = tracks.picked_out(blocks, rising[q], kept)
    return found


def _two_known(kept, numeric, ranks: OriginalRanks, blocks, order, rising,
               state) -> list[Follows]:
    """The kept columns that follow a function of two numeric quasi-identifiers: their
    sum, difference, product or either ratio (:data:`FORMULAS`; income per hour beside
    a masked income and hours, a total beside two of its parts), which an intruder who
    knows the two computes for a record and looks for in its class.

    The attack is the one-column attack on the function's values (infinite or undefined
    ones missing). Choice: a function is attacked only where its rank correlation with
    the kept column, over :data:`SCREEN_SAMPLE` records drawn once (every record of a
    smaller table), is at least :data:`SCREEN` in size: the 5 functions of 45 pairs of
    10 quasi-identifiers are screened on the sample at any size instead of attacked on
    every record. To pick out records halfway from chance to all, a column must hold
    the function's value (or nearly) for about half of the records at least; where the
    others hold anything (another record's value, as a hot-deck imputation gives), its
    rank correlation is about that half. A screen at 0.9 lost income per hour with
    15–30 % of its cells imputed from other records (correlations 0.70–0.85, 63–82 % of
    the records picked out against 20 % by chance); 0.4 keeps a margin below a half.
    """
    return _functions_of_two(kept, numeric, ranks, blocks, order, rising, state,
                             known=True)


def _two_kept(masked, kept, ranks: OriginalRanks, blocks, order, rising,
              state) -> list[Follows]:
    """The masked quasi-identifiers that a function of two kept columns follows (a
    total income masked, its parts kept: an intruder who knows a record's total adds
    the parts of each record of its class and picks the nearest), screened and
    attacked as :func:`_two_known` does, the function on the kept side."""
    return _functions_of_two(masked, kept, ranks, blocks, order, rising, state,
                             known=False)


def _functions_of_two(targets, sources, ranks: OriginalRanks, blocks, order, rising,
                      state, *, known: bool) -> list[Follows]:
    """Each target's best function of two ``sources`` that it follows, or that follows
    it: the function is what the intruder knows (``known``, the targets kept columns)
    or what is kept (the targets quasi-identifiers). Best: the most records picked out
    beyond chance, as a share of those chance leaves (the threshold's measure)."""
    n = len(order)
    sample = (np.arange(n) if n <= SCREEN_SAMPLE else
              np.sort(np.random.default_rng(0).choice(n, SCREEN_SAMPLE, replace=False)))
    target_sample = {t: tracks.ranks(ranks(t).rising()[sample]) for t in targets}
    best: dict[str, Follows] = {}
    for s1, s2 in combinations(sources, 2):
        v1, v2 = ranks.numbers(s1), ranks.numbers(s2)
        for formula, names in _functions(s1, s2, v1, v2):
            if state is not None:
                state.check()
            a, b = (v1, v2) if names[0] == s1 else (v2, v1)
            on_sample = tracks.ranks(_function(formula, a[sample], b[sample]))
            screened = [t for t in targets
                        if abs(_correlation(on_sample, target_sample[t])) >= SCREEN]
            if not screened:
                continue
            function = tracks.Ranks(_function(formula, a, b))
            f = function.rising(order)
            for target in screened:
                t = rising[target]
                if known:  # the intruder knows the function; the target is kept
                    c = t if tracks.rises(f, t) else ranks(target).falling(order)
                    found = Follows((target,), names, formula,
                                    *tracks.picked_out(blocks, f, c))
                else:  # the intruder knows the target; the function is of kept columns
                    c = f if tracks.rises(t, f) else function.falling(order)
                    found = Follows(names, (target,), formula,
                                    *tracks.picked_out(blocks, t, c))
                if tracks.tracks(found.picked, found.apart, found.classes) and (
                        target not in best or _beyond(found) > _beyond(best[target])):
                    best[target] = found
    return [best[t] for t in targets if t in best]


def _beyond(found: Follows) -> float:
    """The records picked out beyond chance, as a share of all that chance leaves."""
    return (found.picked - found.classes) / (found.apart - found.classes)


def _functions(q1: str, q2: str, v1: np.ndarray, v2: np.ndarray):
    """(formula, (first, second)) of every function of the pair :func:`_two_known`
    tries: a difference's sign and a ratio's direction are read falling or not, so one
    of each; the ratio both ways where a value is 0 or below (one is then not the
    other's reverse)."""
    both_ways = not (np.nanmin(v1) > 0 and np.nanmin(v2) > 0) if len(v1) else False
    return (("+", (q1, q2)), ("−", (q1, q2)), ("×", (q1, q2)), ("/", (q1, q2)),
            *((("/", (q2, q1)),) if both_ways else ()))


def _function(formula: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a formula b``, NaN where it is not a finite number (a division by 0)."""
    with np.errstate(all="ignore"):
        values = FORMULAS[formula](a, b)
    values[~np.isfinite(values)] = np.nan
    return values


def _correlation(x: np.ndarray, y: np.ndarray) -> float:
    """The correlation of two columns of ranks over the records with both (0 for fewer
    than 3, or a constant one). Each column is ranked once over its own values, not
    again over the records the two share: a screen's figure, Spearman's where nothing
    is missing. Summed by numpy, not by the linear-algebra library, whose threads cost
    more than they give on 20,000 values."""
    both = ~np.isnan(x) & ~np.isnan(y)
    if np.count_nonzero(both) < 3:
        return 0.0
    if not both.all():
        x, y = x[both], y[both]
    x, y = x - x.mean(), y - y.mean()
    scale = math.sqrt(float((x * x).sum()) * float((y * y).sum()))
    return float((x * y).sum()) / scale if scale > 0 else 0.0

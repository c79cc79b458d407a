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
quasi-identifiers. 1,000,000 × 10 with 3 kept columns
(``benchmarks/scale_follows.py``): the figures in that script's table.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from core.data.encoding import Encoding
from core.data.roles import Level, RoleSpec
from core.measures.ahead import ItemWorks, Work
from core.pipeline import tracks
from core.pipeline.relations import numbers

__all__ = ["OriginalRanks", "following_columns", "rank_columns"]


def rank_columns(table: pd.DataFrame, roles: RoleSpec, *, noise: bool = False) -> list[str]:
    """The columns whose ranks the check may read: those that may be released as they
    are (none when there is no such column), then the quasi-identifiers. With
    ``noise``, the confidential columns get noise and are not released as they are."""
    taken = {*roles.identifiers, *roles.quasi_identifiers, *roles.strata,
             *(roles.confidential if noise else ())}
    kept = [c for c in table.columns if c not in taken]
    return [*kept, *roles.quasi_identifiers] if kept else []


def _column_ranks(table: pd.DataFrame, column: str,
                  encoding: Encoding | None) -> tracks.Ranks | None:
    """``column``'s ranks in ``table``: an ordinal quasi-identifier's by its categories'
    order (``encoding``'s codes), any other column's by its numbers; None where it
    holds no numbers."""
    if encoding is not None and column in encoding.names:
        attribute = encoding.attribute(column)
        if attribute.level is Level.ORDINAL:
            return tracks.Ranks(encoding.values[:, encoding.names.index(column)])
    values = numbers(table[column].reset_index(drop=True))
    return None if values is None else tracks.Ranks(values)


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
        self._made: dict[str, tracks.Ranks | None] = {}

    def make(self, columns, state=None) -> None:
        """Make ``columns``' ranks now, the last first: a helper that has not reached
        them takes them from the first, so both threads work until the last is made."""
        for column in reversed(list(columns)):
            self(column, state)

    def __call__(self, column: str, state=None) -> tracks.Ranks | None:
        if column not in self._made:
            work = self._works.get(column)
            self._made[column] = (work.result(state) if work is not None
                                  else _column_ranks(self._table, column, self._encoding))
        return self._made[column]


def following_columns(table: pd.DataFrame, released: pd.DataFrame, roles: RoleSpec,
                      relations, classes: np.ndarray, unchanged, *,
                      ranks: OriginalRanks | None = None, executor=None,
                      state=None) -> list[tuple[str, str, float, int, int]]:
    """The columns released as they are (``unchanged(column)``) that nearly follow a
    masked quasi-identifier in the released classes (``classes``, one id per record),
    beyond the exact relations already said (``relations``): ``(column,
    quasi-identifier, picked, apart, classes)`` of each such pair, the attack's figures
    (:func:`tracks.picked_out`), in the order of the table's columns, then of the
    quasi-identifiers.

    ``ranks`` are the original's (:class:`OriginalRanks`), made here when not given
    (then an ordinal quasi-identifier of text is not ranked: give ranks with the
    encoding);
    ``executor`` measures pairs beside this thread; ``state`` is checked between them.
    """
    said = {(r.column, r.quasi_identifier) for r in relations}
    taken = {*roles.identifiers, *roles.quasi_identifiers, *roles.strata}
    kept = [c for c in table.columns if c not in taken and c in released.columns]
    masked = [q for q in roles.quasi_identifiers if q in released.columns
              and not unchanged(q)]
    if not kept or not masked or not len(classes):
        return []
    ranks = ranks if ranks is not None else OriginalRanks(table, ())
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
            if state is not None:
                state.check()
            found.update(_attacks(blocks, rising, ranks, order, [pair]))
    else:
        found = ItemWorks(executor, _attacks, pairs, (blocks, rising, ranks, order)
                          ).result(state)
    return [(c, q, *found[c, q]) for c, q in pairs if tracks.tracks(*found[c, q])]


def _attacks(blocks, rising: dict, ranks: OriginalRanks, order: np.ndarray,
             pairs) -> dict:
    """The attack (:func:`tracks.picked_out`) on each (kept column, quasi-identifier)
    pair: the kept column read rising, or falling where it falls as the
    quasi-identifier rises (:func:`tracks.rises`)."""
    found = {}
    for column, q in pairs:
        kept = rising[column]
        if not tracks.rises(rising[q], kept):
            kept = ranks(column).falling(order)
        found[column, q] = tracks.picked_out(blocks, rising[q], kept)
    return found

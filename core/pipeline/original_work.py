"""The work a run does on the original table alone, made once for runs of one table.

Every run searches the original records for record linkage (a tree over the first
intruder scenario's columns), takes the original's IL1 moments and looks for codings
between the columns it may release as they are and the quasi-identifiers
(:func:`core.pipeline.warnings.column_relations`) and ranks the columns its follows
check reads (:class:`core.pipeline.follows.OriginalRanks`). None of it depends on the method or
its parameters. :func:`core.pipeline.run.run` starts it on a helper thread while the
method runs; a sweep (:func:`core.pipeline.sweep.sweep`), which runs the same request
for several values of one parameter, starts it once and hands it to every run
(:class:`OriginalWork`). At 1,000,000 × 10 that is about 0.7 s of tree building per
value, and as much again for the codings when five columns are kept. A tree larger than
:data:`core.measures.ahead.TREE_AHEAD_BYTES` is not shared: each run's measures make
their own once the method is done, so that it is never held beside a method's index.

Exact by construction: a run takes the shared work only when its plan measures the same
records with the same roles and intruder scenarios, and its encoding of the
quasi-identifiers is the shared one value for value (:meth:`OriginalWork.adopt`); it
then measures with that encoding, so every figure is what its own work would give.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from core.data.bits import same_bits
from core.data.encoding import Encoding
from core.measures.ahead import MeasuresAhead, Work
from core.pipeline.follows import OriginalRanks, rank_columns
from core.pipeline.plan import RunPlan
from core.pipeline.warnings import column_relations

__all__ = ["OriginalWork", "same_encoding"]


class OriginalWork:
    """The measures' work made ahead (:class:`~core.measures.ahead.MeasuresAhead`) and
    the warnings' column relations for ``plan``'s original, started on ``executor``
    (which its owner shuts down).

    Attributes
    ----------
    ahead : MeasuresAhead
    relations : Work
        :func:`core.pipeline.warnings.column_relations` of the plan's table and roles.
    ranks : OriginalRanks
        The ranks of the columns the follows check may read
        (:func:`core.pipeline.follows.rank_columns`).
    """

    def __init__(self, plan: RunPlan, executor):
        self._plan = plan
        self.ahead = MeasuresAhead(plan.encoding, plan.scenarios, executor)
        # After the measures' work in the queue: the warnings need it last.
        self.relations = Work(executor, column_relations, plan.table, plan.roles)
        self.ranks = OriginalRanks(plan.table, rank_columns(
            plan.table, plan.roles, noise=plan.noise is not None), executor, plan.encoding)

    def adopt(self, plan: RunPlan) -> RunPlan | None:
        """``plan`` measuring with this work's encoding, or None when ``plan`` is not a
        run of the same records (the same table, or the same records set aside from
        it), roles and scenarios, measured the same way."""
        mine = self._plan
        same_records = plan.table is mine.table or (
            plan.original is not None and plan.original is mine.original
            and np.array_equal(plan.excluded, mine.excluded))
        if not (same_records and plan.roles == mine.roles
                and plan.scenarios == mine.scenarios
                and same_encoding(plan.encoding, mine.encoding)):
            return None
        return replace(plan, encoding=mine.encoding)


def same_encoding(a: Encoding, b: Encoding) -> bool:
    """True when ``a`` and ``b`` measure alike: the same embedding and values bit for
    bit, and each attribute with the same name, level, columns, categories (in order,
    of the same types), z-score parameters and scale."""
    if a is b:
        return True
    if len(a.attributes) != len(b.attributes) or not all(
            same_bits(x, y) for x, y in ((a.X, b.X), (a.values, b.values))):
        return False
    for x, y in zip(a.attributes, b.attributes):
        if ((x.name, x.level, x.columns) != (y.name, y.level, y.columns)
                or not all(same_bits(np.float64(p), np.float64(q)) for p, q in
                           ((x.mean, y.mean), (x.std, y.std), (x.scale, y.scale)))):
            return False
        if (x.categories is None) != (y.categories is None):
            return False
        if x.categories is not None and not (
                len(x.categories) == len(y.categories)
                and all(type(p) is type(q) and p == q
                        for p, q in zip(x.categories, y.categories))):
            return False
    return True


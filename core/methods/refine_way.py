"""Which way the compiled refinement finds a record's nearest group: lists or sweeps.

lists (:func:`core.methods.refine_nearest.nearest`)
    Each record keeps a list of candidate groups and a bound. A question costs little
    (about ``LIST_QUESTION`` ns), but each group that moves farther than the drift, or
    is formed, must be anchored again: a pass over every record, and an exact look at
    each record that lists it (about ``ANCHOR_RECORD`` + ``ANCHOR_LISTED`` · width ns
    per record). A question the list cannot answer compares the record with every
    group (``COMPARE_PAIR`` ns per group).
sweeps (:func:`core.methods.refine_nearest.nearest_all`)
    Every question compares the record with every live group, in float32 first, four
    records a sweep (about ``SWEEP_PAIR`` ns per group). Nothing is kept up, so a
    group may move at no cost; going back to the lists fills every list again
    (``FILL_PAIR`` ns per record and group).

Both give the same answer (the nearest group, the lower id on a tie), so the way
changes the time, never the labels. Where groups move all the time the sweeps are
faster: in IGD's first rounds after PCP or z-scores, whose slabs are dissolved one
after the other (at 50,000 × 10 the first Decompose pass anchored 31,000 groups,
10.9 s, against 2.3 s by sweeps), and in split passes, which form many groups and ask
few questions. Once the partition settles the lists are faster (a later Decompose
pass: 0.08 s against 0.9 s).

The refinement starts on the sweeps (nothing to fill). It counts, as it goes, what each
way would have cost since the last decision, from the questions, the groups moved and
the lists' fall-backs, and weighs them with the costs above (measured on a 2-core
machine; only their ratios matter):

* on the sweeps, at the end of each IGD round, it goes back to the lists if they would
  have cost less than three quarters as much over the round and ``REPAY`` such rounds
  would repay the fill (IGD after PCP at 100,000 × 10 ran some twenty rounds, the last
  ten on the lists at about 0.5 s each against 1.9 s a round on the sweeps); the lists
  are filled long at once where the sweeps saw short ones fail (:meth:`Way.crowded`);
* on the lists, once their cost since the last decision reaches a fill's, it turns to
  the sweeps again if they would have cost less than half as much;
* TFRP2, one pass, stays on the sweeps; and a split pass on the lists is answered by
  the sweeps, the groups it changed anchored after it
  (:func:`core.methods.refine_nearest.settle`).

Sweeps shared with a helper thread (:mod:`core.methods.refine_sweep`) count half, while
the helper's probes find two threads faster.
"""

from __future__ import annotations

from core.methods.refine_kernel import (
    CROWDED,
    MOVED,
    N_GROUPS,
    N_LIVE,
    QUERIES,
    RECOMPUTES,
    SAMPLED,
    SHORT,
    SWEPT,
)

__all__ = ["Way"]

LIST_QUESTION = 1500.0  # ns per question on the lists
ANCHOR_RECORD, ANCHOR_LISTED = 1.5, 0.05  # ns per record (and per list place) to anchor
COMPARE_PAIR = 5.4  # ns per group, a fall-back
SWEEP_PAIR = 2.0  # ns per record and group, swept on one thread
FILL_PAIR = 1.5  # ns per record and group, a fill (on two threads)
REPAY = 4  # rounds in which going back to the lists must repay their fill


class Way:
    """The counts since the last decision, and the decisions (module notes)."""

    def __init__(self, s, helper=None):
        self._since = self._counts(s)
        self._helper = helper

    @staticmethod
    def _counts(s):
        return (int(s.meta[QUERIES]), int(s.meta[SWEPT]), int(s.meta[MOVED]),
                int(s.meta[RECOMPUTES]), int(s.meta[SAMPLED]), int(s.meta[CROWDED]))

    def _costs(self, s):
        """(lists, sweeps, fill) in ns for what was asked since the last decision."""
        now = self._counts(s)
        questions, swept, moved, fallbacks, _, _ = (a - b for a, b in zip(now, self._since))
        n, groups = len(s.X), int(s.meta[N_GROUPS])
        width = max(s.cand_g.shape[1], int(s.meta[SHORT]))  # none allocated on sweeps
        asked = questions + swept
        lists = (asked * LIST_QUESTION + fallbacks * groups * COMPARE_PAIR
                 + moved * n * (ANCHOR_RECORD + ANCHOR_LISTED * width))
        threads = 2 if self._helper is not None and self._helper.two_threads else 1
        sweeps = asked * int(s.meta[N_LIVE]) * SWEEP_PAIR / threads
        return lists, sweeps, n * groups * FILL_PAIR

    def to_sweeps(self, s) -> bool:
        """On the lists, after a chunk: whether to turn to the sweeps now."""
        lists, sweeps, fill = self._costs(s)
        if lists < fill:
            return False
        self._since = self._counts(s)
        return sweeps < 0.5 * lists

    def to_lists(self, s) -> bool:
        """On the sweeps, at the end of a round: whether to go back to the lists."""
        lists, sweeps, fill = self._costs(s)
        self._last = self._since
        self._since = self._counts(s)
        return lists < 0.75 * sweeps and REPAY * (sweeps - lists) > fill

    def crowded(self, s) -> bool:
        """Whether, in the round :meth:`to_lists` just weighed, more than 1 in 40 of the
        sampled questions would have failed on short lists, just filled (the
        lists fail more often as they age: IGD lengthens them at 1 in 20 fall-backs,
        :func:`core.methods.refine_passes._lists_fail`)."""
        sampled, crowded = (b - a for a, b in zip(self._last[4:], self._since[4:]))
        return sampled > 0 and crowded > sampled / 40

    def restart(self, s) -> None:
        """Count from now (after a fill)."""
        self._since = self._counts(s)

"""The measures' work on the original alone, made before there is a release.

:func:`core.pipeline.run.run` starts it on a helper thread while the method partitions
the records; :func:`core.measures.measure.measure` takes it instead of computing it
again (:class:`MeasuresAhead`).
"""

from __future__ import annotations

import threading
from concurrent.futures import wait

import numpy as np

from core.data.encoding import Encoding
from core.data.memory import TREE_AHEAD_BYTES, tree_bytes  # the memory model's
from core.data.roles import Level
from core.measures.disclosure import linkage_originals
from core.measures.utility import mixed_moments

__all__ = ["ItemWorks", "MeasuresAhead", "Work", "known_blocks", "known_columns", "nominal_mask",
           "ordered_columns",
           "TREE_AHEAD_BYTES", "tree_bytes"]

class MeasuresAhead:
    """The measures' work on the original alone, started before there is a release.

    The search tree over the originals of the first intruder scenario and the
    original's IL1 moments depend on the original table only.
    :func:`core.pipeline.run.run` starts them on a helper thread (``executor``) while
    the method partitions the records, and :func:`~core.measures.measure.measure` takes
    them instead of computing them again; each is computed by the same function either
    way, so the figures do not depend on it. Every figure is still computed on the
    released table, once it is final.

    A tree larger than :data:`TREE_AHEAD_BYTES` is not made ahead (``linkage`` is None):
    the measures make it when they begin, after the method.

    Parameters
    ----------
    encoding : Encoding
        The original's quasi-identifiers measured; the measures use this work only with
        the same ``encoding`` (the same object) and the same scenarios.
    scenario_sets : sequence of column-name sequences
        The intruder scenarios, as the measures will resolve them.
    executor : concurrent.futures.Executor
        Where the work runs; its owner shuts it down.
    """

    def __init__(self, encoding: Encoding, scenario_sets, executor):
        self.encoding = encoding
        self.scenario_sets = tuple(tuple(s) for s in scenario_sets)
        nominal = nominal_mask(encoding)
        columns = known_columns(encoding.X, encoding, self.scenario_sets[0])
        self.linkage = (Work(executor, linkage_originals, columns,
                             known_blocks(encoding, self.scenario_sets[0]))
                        if tree_bytes(*columns.shape) <= TREE_AHEAD_BYTES else None)
        self.moments = Work(executor, mixed_moments, encoding.values, nominal)

    def serves(self, encoding: Encoding, scenario_sets) -> bool:
        """Whether this work was started for ``encoding`` and ``scenario_sets``."""
        return (encoding is self.encoding
                and tuple(tuple(s) for s in scenario_sets) == self.scenario_sets)


class Work:
    """A call submitted to an executor; :meth:`result` makes it on the calling thread
    instead when no thread has started it yet (rather than wait behind other work).
    Either way it is made once, whichever threads ask for it."""

    _NOT_MADE = object()

    def __init__(self, executor, function, *args):
        self._call = (function, args)
        self._made = self._NOT_MADE
        self._lock = threading.Lock()  # two threads may ask: one of them makes it
        self._future = executor.submit(function, *args)

    def done(self) -> bool:
        """Whether the result is there to take without waiting."""
        return self._made is not self._NOT_MADE or (self._future.done()
                                                    and not self._future.cancelled())

    def result(self, state=None):
        """The result; while another thread makes it, ``state`` (a TaskState) is
        checked every twentieth of a second, so Cancel is not held by the wait."""
        if self._made is not self._NOT_MADE:
            return self._made
        with self._lock:
            if self._made is not self._NOT_MADE:  # the other thread made it meanwhile
                return self._made
            if self._future.cancel():  # still queued: it will never run there
                function, args = self._call
                self._made = function(*args)
                return self._made
        while state is not None and not self._future.done():
            state.check()
            wait([self._future], timeout=0.05)
        self._made = self._future.result()
        return self._made


class ItemWorks:
    """``function(*before, [item], *after)`` for every item, one :class:`Work` each,
    whose results are dictionaries (one entry per item): the executor's threads take
    them first to last, and :meth:`result` makes on the calling thread, last to first,
    those no thread has started, so every thread works until the last item is made.
    Each item's result is the same whichever thread made it."""

    def __init__(self, executor, function, items, before=(), after=()):
        self._works = [Work(executor, function, *before, [item], *after) for item in items]

    def done(self) -> bool:
        return all(work.done() for work in self._works)

    def result(self, state=None) -> dict:
        made = {}
        for work in reversed(self._works):
            made.update(work.result(state))
        return made


def nominal_mask(encoding: Encoding) -> np.ndarray:
    """Which quasi-identifiers of ``encoding`` are nominal."""
    return np.array([a.level is Level.NOMINAL for a in encoding.attributes])


def ordered_columns(qi, scenario_sets, nominal) -> list[int]:
    """The quasi-identifiers (positions) whose ID needs the original's sorted values."""
    return sorted({qi.index(c) for subset in scenario_sets for c in subset
                   if not nominal[qi.index(c)]})


def known_columns(Z: np.ndarray, encoding: Encoding, subset) -> np.ndarray:
    """The embedded columns of the attributes ``subset`` (``Z`` itself for all of them)."""
    embedded = encoding.columns_of(subset)
    return Z if embedded == list(range(Z.shape[1])) else Z[:, embedded]


def known_blocks(encoding: Encoding, subset) -> tuple[tuple[int, int], ...]:
    """``(first column, width)`` of each nominal attribute of ``subset`` among
    :func:`known_columns`' columns (record linkage's tree keeps each as one column)."""
    blocks, at = [], 0
    for name in subset:
        attribute = encoding.attribute(name)
        width = attribute.columns.stop - attribute.columns.start
        if attribute.level is Level.NOMINAL and width >= 2:
            blocks.append((at, width))
        at += width
    return tuple(blocks)

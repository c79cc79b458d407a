"""Every pass that runs on threads of its own follows one policy (core.threads): the
neighbour lists of GSMS and of the refinements too, not only the searches."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from contextlib import nullcontext

import numpy as np
import pytest

from core import threads as core_threads
from core.compiled import COMPILED
from core.methods import gsms_neighbours, refine_passes
from core.methods.gsms import gsms
from core.methods.mdav import mdav
from core.methods.refine import prepared, refine
from core.progress import TaskState
from core.threads import single_thread, threads_for

pytestmark = pytest.mark.skipif(not COMPILED, reason="the threads belong to the compiled path")


def test_threads_for(monkeypatch):
    monkeypatch.delenv("MICROAGG_SEARCH_THREADS", raising=False)
    monkeypatch.setattr(core_threads.os, "cpu_count", lambda: 8)
    assert threads_for(4) == 4 and threads_for(2) == 2
    monkeypatch.setattr(core_threads.os, "cpu_count", lambda: 2)
    assert threads_for(4) == 2
    with single_thread():  # a cluster worker
        assert threads_for(4) == 1
    monkeypatch.setenv("MICROAGG_SEARCH_THREADS", "1")
    assert threads_for(4) == 1


class _Counted(ThreadPoolExecutor):
    workers: list = []

    def __init__(self, max_workers=None, *args, **kwargs):
        _Counted.workers.append(max_workers)
        super().__init__(max_workers, *args, **kwargs)


@pytest.mark.parametrize("single", [False, True])
def test_gsms_and_refinement_lists_follow_the_policy(monkeypatch, single):
    """Inside a cluster worker's ``single_thread`` (whose processes already fill the
    processors) the lists are filled on the calling thread alone, with the same result."""
    monkeypatch.delenv("MICROAGG_SEARCH_THREADS", raising=False)
    monkeypatch.setattr(core_threads.os, "cpu_count", lambda: 2)
    monkeypatch.setattr(gsms_neighbours, "ThreadPoolExecutor", _Counted)
    monkeypatch.setattr(refine_passes, "ThreadPoolExecutor", _Counted)
    X = np.random.default_rng(3).normal(size=(3_000, 3))
    _Counted.workers = []
    with single_thread() if single else nullcontext():
        grouped = gsms(X, k=3)
        refined = _on_lists(X, mdav(X, k=3))
    assert _Counted.workers == ([1, 1] if single else [2, 2])
    with single_thread() if not single else nullcontext():
        assert np.array_equal(gsms(X, k=3), grouped)
        assert np.array_equal(_on_lists(X, mdav(X, k=3)), refined)
        assert np.array_equal(refine(X, mdav(X, k=3), k=3, method="tfrp2"), refined)


def _on_lists(X, labels):
    """TFRP2 on the candidate lists (filled first on threads of their own)."""
    Xc, sq, tolerance = prepared(X)
    return refine_passes.refine_compiled(Xc, sq, labels, k=3, method="tfrp2",
                                         max_rounds=1, tolerance=tolerance,
                                         state=TaskState(), ways="lists")


"""When a run may use a second thread of its own.

Searches of the compiled path (MDAV's index, record linkage) split their work with one
helper thread when the computer has two processors or more; the passes that fill
neighbour lists (GSMS, the refinements) use :func:`threads_for`. ``MICROAGG_SEARCH_THREADS=1``
in the environment keeps every run on one thread, and so does a :class:`single_thread`
block (a cluster worker, whose processes already fill the machine's processors).
"""

from __future__ import annotations

import os
import threading

from core.compiled import COMPILED

__all__ = ["second_thread_allowed", "single_thread", "threads_for"]

_local = threading.local()


def second_thread_allowed() -> bool:
    """Compiled, two processors or more, not switched off, not in :class:`single_thread`."""
    return (COMPILED and (os.cpu_count() or 1) >= 2
            and os.environ.get("MICROAGG_SEARCH_THREADS", "") != "1"
            and not getattr(_local, "single", False))


def threads_for(most: int) -> int:
    """Threads a pass whose parts are independent may use: up to ``most``, one per
    processor, and one alone where :func:`second_thread_allowed` says no."""
    if not second_thread_allowed():
        return 1
    return max(1, min(int(most), os.cpu_count() or 1))


class single_thread:
    """Within this block, runs on the calling thread get no helper (e.g. a cluster
    worker, whose processes already fill the machine's processors)."""

    def __enter__(self):
        self._before = getattr(_local, "single", False)
        _local.single = True
        return self

    def __exit__(self, *exc):
        _local.single = self._before
        return False

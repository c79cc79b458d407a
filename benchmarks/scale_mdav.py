"""Exact MDAV, CBFS and TFRP at census scale: the spatial index beside the record pool.

    python benchmarks/scale_mdav.py [--quick]

Standard normal data, d = 10, k = 5. ``before`` is the record pool (today's reference,
full passes) on the same data in the same run where it finishes in reasonable time;
every such row checks that the labels are identical. The runs search on two threads
where the machine has two processors (:mod:`core.methods.spatial_parallel`); each row
also times the same run on one thread (``MICROAGG_SEARCH_THREADS=1``) and checks that
it gives the same labels. At 1,000,000 records, where the reference would take hours,
"before" is that one-thread run.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402

from core.methods.heuristics import fixed_size, fixed_size_reference  # noqa: E402


def _timed(function, *args, **kwargs):
    began = time.perf_counter()
    value = function(*args, **kwargs)
    return value, time.perf_counter() - began


def _one_thread(X, first):
    os.environ["MICROAGG_SEARCH_THREADS"] = "1"
    try:
        return _timed(fixed_size, X, k=5, first=first)
    finally:
        del os.environ["MICROAGG_SEARCH_THREADS"]


def _row(task, size, X, first, *, reference: bool, target: str):
    labels, after = _timed(fixed_size, X, k=5, first=first)
    single, single_s = _one_thread(X, first)
    same = "same" if np.array_equal(labels, single) else "LABELS DIFFER"
    row = {"task": task, "size": size, "before_s": single_s, "after_s": after,
           "target": target, "check": f"one thread (before): {same} labels"}
    if reference:
        expected, before = _timed(fixed_size_reference, X, k=5, first=first)
        row["before_s"] = before
        row["check"] = (("same labels" if np.array_equal(labels, expected) else
                         "LABELS DIFFER") + f"; one thread {single_s:.2f} s, {same} labels")
    assert np.bincount(labels).min() >= 5
    return row


def rows(quick: bool):
    """The table's rows, each yielded as soon as it is measured (the 1,000,000-record
    rows take minutes)."""
    rng = np.random.default_rng(2026)
    fixed_size(rng.normal(size=(50, 3)), k=5)  # compile (or load the cache) first
    n = 20_000 if quick else 100_000
    X = rng.normal(size=(n, 10))
    for first in ("mdav", "cbfs", "tfrp"):
        yield _row(f"{first.upper()}-NN exact", f"{n:,}×10", X, first, reference=True,
                   target="≤ 2 s at 100,000")
    ties = np.repeat(rng.normal(size=(3, 10)), n // 3 + 1, axis=0)[:n]
    ties = ties[rng.permutation(n)]
    yield _row("MDAV, 3 distinct rows", f"{n:,}×10", ties, "mdav", reference=True,
               target="—")
    big = 200_000 if quick else 1_000_000
    yield _row("MDAV-NN exact", f"{big:,}×10", rng.normal(size=(big, 10)), "mdav",
               reference=False, target="≤ 60 s at 1,000,000")
    ties = np.repeat(rng.normal(size=(4, 10)), big // 4, axis=0)[rng.permutation(big)]
    yield _row("MDAV, 4 distinct rows", f"{big:,}×10", ties, "mdav", reference=False,
               target="≤ 30 s at 1,000,000")


if __name__ == "__main__":
    for row in rows("--quick" in sys.argv):
        print(row)

"""Compile every kernel ahead of the first real run.

numba compiles a kernel the first time it is called and keeps the machine code in its
on-disk cache (:mod:`core.compiled`). Without this step, the first run after an
installation spends a minute or more compiling, at 0 % and deaf to Cancel. The window
therefore runs :func:`warm_up` once, in a separate process, when it first starts; the
command ``microagg-desktop --warm-up`` does the same from a terminal (for an
administrator preparing a shared installation).

Every registered method runs, with each of its options, on a small synthetic table,
through :func:`core.pipeline.run.anonymize`, so the measures, the verifier and the
t-closeness steps are compiled as well; the refinement on its candidate lists; and MDAV
and tc-tfirst once more on 10,000 records, for their helper threads (tc-merge's helper
loop directly). A method that
refuses the small table is skipped: warming up is a convenience, never a check.
"""

from __future__ import annotations

import itertools
import time

import numpy as np
import pandas as pd

from core.compiled import COMPILED
from core.data.roles import RoleSpec
from core.errors import MicroaggError
from core.methods.contract import Options
from core.methods.heuristics import fixed_size
from core.methods.refine_passes import compile_ways
from core.methods.registry import methods
from core.methods.tfirst import tc_tfirst
from core.pipeline.run import anonymize

__all__ = ["warm_up"]

_RECORDS = 240


def _table() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    return pd.DataFrame({
        "age": rng.integers(18, 90, _RECORDS).astype(float),
        "height": rng.normal(170, 10, _RECORDS),
        "weight": rng.normal(70, 12, _RECORDS),
        "income": rng.lognormal(10, 1, _RECORDS),
    })


def _settings(method) -> list[dict]:
    """Every combination of the method's options, with small numeric parameters."""
    fixed = {p.name: p.default for p in method.parameters
             if not isinstance(p.constraint, Options)}
    small = {p.name: value for p in method.parameters for name, value in (("k", 3), ("t", 0.5))
             if p.name == name and p.constraint.accepts(value)}  # tc-bucket's t is > 1
    fixed.update(small)
    choices = [[(p.name, value) for value in p.constraint.values]
               for p in method.parameters if isinstance(p.constraint, Options)]
    return [{**fixed, **dict(combination)} for combination in itertools.product(*choices)]


def warm_up(report=print) -> float:
    """Run every method once on a small table; return the seconds it took.

    ``report(text)`` is called once per run (``None`` for silence). Does nothing when
    the compiled path is off.
    """
    began = time.perf_counter()
    if not COMPILED:
        return 0.0
    table = _table()
    numeric = RoleSpec(quasi_identifiers=("age", "height", "weight"),
                       confidential=("income",))
    single = RoleSpec(quasi_identifiers=("age",), confidential=("income",))
    for method in methods():
        for settings in _settings(method):
            for roles in (numeric, single):
                try:
                    anonymize(table, roles, method.name, **settings)
                except MicroaggError:
                    continue  # e.g. a one-dimensional method given three attributes
                if report is not None:
                    report(f"{method.name} {settings}: compiled")
                break
    # A refinement of this small table stays on its sweeps; a large one may go to its
    # candidate lists and back (core.methods.refine_way).
    compile_ways()
    if report is not None:
        report("refinement on its lists: compiled")
    # A run of a few thousand records or more searches on two threads
    # (core.methods.spatial_parallel); one such run compiles the helper's loop too.
    # MDAV's helper serves trees of six levels or more (leaves of up to 128 rows): 10,000
    # records (4,000, the size before the leaves grew, no longer reached it).
    X = np.random.default_rng(0).normal(size=(10_000, 3))
    fixed_size(X, k=3, first="mdav")
    if report is not None:
        report("mdav on two threads: compiled")
    # tc-tfirst shares each cluster's searches between two threads (its pool of every
    # record has leaves of 32: from about 2,000 records); one such run compiles that
    # helper's loop (core.methods.task_helper).
    tc_tfirst(X, X[:, 0] + X[:, 1], k=3, t=0.5)
    if report is not None:
        report("tc-tfirst on two threads: compiled")
    # tc-merge shares its screen of the centroids from 16,384 clusters on; its helper's
    # loop is compiled without such a run (core.methods.tclose_screen).
    from core.methods.tclose_screen import compile_serve
    compile_serve()
    if report is not None:
        report("tc-merge on two threads: compiled")
    # Reading a CSV screens its bytes for codes written with leading zeros
    # (core.io.read_text).
    from core.io.zero_screen import compile_screen
    compile_screen()
    if report is not None:
        report("reading: compiled")
    return time.perf_counter() - began

"""The measures and the verifier at census scale, beside the code they replace.

    python benchmarks/scale_measures.py [--quick]
    python benchmarks/bench_scale.py --only measures

Rows: record linkage (DLD) at 100,000 × 10 with noise of 0, 20 % and 100 % of the
standard deviation and of an MDAV release, against the previous scipy KD-tree code and
on one thread; real anonymity k′ at 1,000,000 × 10 against ``numpy.unique(axis=0)``;
every measure of a 1,000,000 × 10 PCP release; the k-anonymity verification of it
against the previous verifier (its source at the base commit, run as it was); and a
whole ``anonymize`` run (no file IO) beside the bare method call (medians of three,
alternated), whose ratio the product's target bounds (whole ≤ 3 × bare).
The previous implementations are the plain ``old_*`` functions of
``tests/test_measures_scale.py``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from core import anonymize  # noqa: E402
from core.data.encoding import encode  # noqa: E402
from core.data.roles import RoleSpec  # noqa: E402
from core.measures.disclosure import real_anonymity, record_linkage  # noqa: E402
from core.measures.measure import measure  # noqa: E402
from core.methods.mdav import mdav  # noqa: E402
from core.methods.projection import pcp  # noqa: E402
from core.verify.kanonymity import verify_k_anonymity  # noqa: E402
from benchmarks.peers import old_module, timed as _timed, whole_beside_bare  # noqa: E402
from tests.test_measures_scale import old_real_anonymity, old_record_linkage  # noqa: E402

BASE = "f46b2c4"  # the commit before the census-scale measures


def _table(n: int, d: int = 10, seed: int = 0):
    rng = np.random.default_rng(seed)
    columns = [f"x{j}" for j in range(d)]
    return pd.DataFrame(rng.standard_normal((n, d)), columns=columns), columns


def _warm_up():
    """Load the cached compiled kernels so no row pays for it."""
    rng = np.random.default_rng(1)
    Z = rng.standard_normal((500, 3))
    record_linkage(Z, Z + 0.1)
    real_anonymity(Z)
    table, columns = _table(500)
    anonymize(table, RoleSpec(quasi_identifiers=tuple(columns)), "pcp", k=5)


def _one_thread(function, *args):
    """``function(*args)`` timed with the runs' second thread switched off."""
    saved = os.environ.get("MICROAGG_SEARCH_THREADS")
    os.environ["MICROAGG_SEARCH_THREADS"] = "1"
    try:
        return _timed(function, *args)
    finally:
        if saved is None:
            del os.environ["MICROAGG_SEARCH_THREADS"]
        else:
            os.environ["MICROAGG_SEARCH_THREADS"] = saved


def _linkage_rows(n: int) -> list[dict]:
    rows = []
    rng = np.random.default_rng(2)
    Z = rng.standard_normal((n, 10))
    labels = mdav(Z, k=5)
    sums = np.zeros((labels.max() + 1, Z.shape[1]))
    np.add.at(sums, labels, Z)
    cases = [(f"noise {share:.0%} of the s.d.",
              Z + rng.normal(scale=share, size=Z.shape) if share else Z.copy())
             for share in (0.0, 0.2, 1.0)]
    cases.append(("an MDAV release, k = 5", (sums / np.bincount(labels)[:, None])[labels]))
    for name, M in cases:
        new, after = _timed(record_linkage, Z, M)
        alone, one = _one_thread(record_linkage, Z, M)
        old, before = _timed(old_record_linkage, Z, M)
        same = new == old == alone
        rows.append({"task": f"DLD, {name}", "size": f"{n:,} × 10",
                     "before_s": before, "after_s": after, "target": "≤ 5 s",
                     "check": (f"one thread {one:.2f} s; "
                               + ("same DLD" if same else f"DIFFERENT {new} vs {old}"))})
    return rows


def _release(n: int):
    """A PCP release (k = 5) of n × 10 standard-normal records, as numpy and frames."""
    table, columns = _table(n)
    roles = RoleSpec(quasi_identifiers=tuple(columns))
    encoding = encode(table, roles, strict=False)
    labels = pcp(encoding.X, k=5)
    X = table.to_numpy()
    sums = np.zeros((labels.max() + 1, X.shape[1]))
    np.add.at(sums, labels, X)
    means = sums / np.bincount(labels)[:, None]
    masked = pd.DataFrame(means[labels], columns=columns)
    return table, masked, roles, encoding


def rows(quick: bool) -> list[dict]:
    _warm_up()
    n_link = 20_000 if quick else 100_000
    n_big = 100_000 if quick else 1_000_000
    out = _linkage_rows(n_link)

    table, masked, roles, encoding = _release(n_big)
    values = masked.to_numpy()
    new, after = _timed(real_anonymity, values)
    old, before = _timed(old_real_anonymity, values)
    out.append({"task": "real anonymity k′ (PCP release)", "size": f"{n_big:,} × 10",
                "before_s": before, "after_s": after, "target": "—",
                "check": "same k′" if new == old else f"DIFFERENT {new} vs {old}"})

    measures, after = _timed(measure, table, masked, roles, encoding=encoding)
    out.append({"task": "every measure (k′, SSE, IL1, DLD, ID, classes)",
                "size": f"{n_big:,} × 10", "before_s": None, "after_s": after,
                "target": "not dominating the run",
                "check": f"DLD {measures.dld:.4g} %, k′ {measures.k_prime:.4g}"})

    verification, after = _timed(verify_k_anonymity, table, masked, roles, 5,
                                 encoding=encoding)
    old_verify = old_module("core/verify/kanonymity.py", BASE)
    before, check = None, "no git: not compared"
    if old_verify is not None:
        previous, before = _timed(old_verify.verify_k_anonymity, table, masked, roles, 5)
        check = ("same verification" if vars(previous) == vars(verification) else
                 f"DIFFERENT {previous} vs {verification}")
    out.append({"task": "k-anonymity verification", "size": f"{n_big:,} × 10",
                "before_s": before, "after_s": after, "target": "—", "check": check})

    for method, n in (("pcp", n_big), ("mdav", n_link)):
        if quick and method == "mdav":
            continue
        table, columns = _table(n)
        roles = RoleSpec(quasi_identifiers=tuple(columns))
        X = encode(table, roles, strict=False).X
        bare_method = pcp if method == "pcp" else mdav
        runs = 1 if quick else 3
        bare, whole, labels, result = whole_beside_bare(
            lambda: bare_method(X, k=5), lambda: anonymize(table, roles, method, k=5), runs)
        same = np.array_equal(labels, result.labels)
        out.append({"task": f"whole anonymize ({method}, no file IO) beside the bare method",
                    "size": f"{n:,} × 10", "before_s": bare, "after_s": whole,
                    "target": "whole ≤ 3 × bare",
                    "check": f"medians of {runs}: whole / bare = "
                             f"{whole / bare:.1f}×"
                             + ("; same labels" if same else "; labels renumbered")})
    return out


if __name__ == "__main__":
    for row in rows("--quick" in sys.argv):
        before = "—" if row["before_s"] is None else f"{row['before_s']:.2f}"
        print(f"{row['task']:<62} {row['size']:>18} before {before:>7} s  after "
              f"{row['after_s']:.2f} s  target {row['target']}  ({row['check']})")

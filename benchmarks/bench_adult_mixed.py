"""Adult at k = 5 with every attribute as a quasi-identifier: time, IL and DLD, before and after.

    python benchmarks/bench_adult_mixed.py [K]

Three releases of ``shared/data/adult.csv`` (30,162 records), each measured against an
intruder who knows all 14 attributes (every one but ``prediction``), with the mixed
distance of :mod:`core.data.encoding` (``education`` ordinal in the order of
``education-num``, the 7 text attributes nominal):

original
    Nothing masked: every record is found by linkage.
numeric QIs only
    What the product could do before categorical quasi-identifiers: MDAV on the 6
    numeric attributes, the categorical ones released as they are.
all 14 QIs (mixed)
    MDAV on the embedding of all 14 attributes; categorical values released as the
    median (ordinal) or mode (nominal) of their group.

Columns: the wall time of ``anonymize`` (method, aggregation, measures, verification),
IL and k' over all 14 attributes, DLD, and the time as a ratio to the numeric-only run of
the same process (this machine is shared and noisy: compare ratios).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.datasets import ATTRIBUTES, DATA_DIR  # noqa: E402
from core import RoleSpec, anonymize  # noqa: E402
from core.measures.measure import measure  # noqa: E402


def main(k: int = 5) -> None:
    adult = pd.read_csv(DATA_DIR / "adult.csv")
    order = tuple(adult.groupby("education")["education-num"].first().sort_values().index)
    everything = RoleSpec(quasi_identifiers=tuple(c for c in adult.columns
                                                  if c != "prediction"),
                          confidential=("prediction",), levels={"education": "ordinal"},
                          orders={"education": order})
    numeric = RoleSpec(quasi_identifiers=ATTRIBUTES["adult"], confidential=("prediction",))

    rows = []
    baseline = measure(adult, adult, everything)
    rows.append(("original", 0.0, baseline))
    timings = {}
    for name, roles in (("numeric QIs only (6)", numeric), ("all 14 QIs (mixed)", everything)):
        started = time.perf_counter()
        result = anonymize(adult, roles, "mdav", k=k)
        timings[name] = time.perf_counter() - started
        assert result.passed
        rows.append((name, timings[name], measure(adult, result.masked, everything)))
    reference = timings["numeric QIs only (6)"]
    print(f"Adult, {len(adult)} records, MDAV k = {k}; measured on all 14 attributes")
    print(f"{'release':24} {'seconds':>8} {'x numeric':>9} {'IL %':>7} {'k prime':>8} "
          f"{'DLD %':>7} {'ID %':>7}")
    for name, seconds, m in rows:
        ratio = f"{seconds / reference:9.2f}" if seconds else f"{'-':>9}"
        print(f"{name:24} {seconds:8.2f} {ratio} {m.il:7.3f} {m.k_prime:8.3f} "
              f"{m.dld:7.3f} {m.id:7.3f}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 5)

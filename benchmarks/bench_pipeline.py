"""The whole pipeline with and without strata, on 1,000,000 records.

    python benchmarks/bench_pipeline.py [N]

``anonymize`` (plan, optimal univariate microaggregation, aggregation, measures and
verification) on N records with one numeric quasi-identifier, once without strata and
once with a 20-value stratum column, interleaved and repeated; the table prints the best
time of each and their ratio (the machine is shared: compare the ratio). A stratified run
should cost at most 1.2 times an unstratified one. It also times the stages of the
stratified run: the plan (checks, measuring the attributes, strata) and the run.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from core import RoleSpec, anonymize, prepare_run, run  # noqa: E402


def main(n: int = 1_000_000, repeats: int = 3) -> None:
    rng = np.random.default_rng(0)
    table = pd.DataFrame({
        "income": rng.lognormal(10, 1, n).round(2),
        "region": rng.choice([f"R{i:02d}" for i in range(20)], n),
    })
    plain = RoleSpec(quasi_identifiers=("income",), non_confidential=("region",))
    stratified = RoleSpec(quasi_identifiers=("income",), strata=("region",))
    best = {"no strata": np.inf, "20 strata": np.inf}
    for _ in range(repeats):
        for name, roles in (("no strata", plain), ("20 strata", stratified)):
            started = time.perf_counter()
            result = anonymize(table, roles, "optimal-univariate", k=5)
            best[name] = min(best[name], time.perf_counter() - started)
            assert result.passed
    started = time.perf_counter()
    plan = prepare_run(table, stratified, "optimal-univariate", k=5)
    planned = time.perf_counter() - started
    started = time.perf_counter()
    run(plan)
    ran = time.perf_counter() - started
    print(f"optimal univariate, k = 5, {n:,} records (best of {repeats})")
    print(f"{'run':12} {'seconds':>8} {'ratio':>6}")
    for name, seconds in best.items():
        print(f"{name:12} {seconds:8.2f} {seconds / best['no strata']:6.2f}")
    print(f"stratified stages: plan {planned:.2f} s, run {ran:.2f} s")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000)

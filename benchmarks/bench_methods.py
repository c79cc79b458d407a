"""Seconds and information loss of every k-anonymity method, unrefined and with IGD.

    python benchmarks/bench_methods.py [--skip-large]

EIA (4,092 records, the 11 conventional attributes) at k = 3, and 100,000 synthetic
records (10 correlated attributes, benchmarks/synthetic.py) at k = 5. Every run goes
through anonymize(), so the times include aggregation and verification.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import pandas as pd  # noqa: E402

from benchmarks.datasets import load  # noqa: E402
from benchmarks.synthetic import numeric_records  # noqa: E402
from core import RoleSpec, anonymize  # noqa: E402

METHODS = (("mdav", {"growth": "nn"}), ("mdav", {"growth": "nc"}),
           ("cbfs", {"growth": "nn"}), ("cbfs", {"growth": "nc"}),
           ("tfrp", {"growth": "nn"}), ("tfrp", {"growth": "nc"}),
           ("gsms", {}), ("vmdav", {}), ("pcp", {}), ("zscores", {}),
           ("individual-ranking", {}))


def run(table, roles, k, title, refinements=("none", "igd")):
    print(f"\n{title}, k = {k}")
    print(f"{'method':<20}{'none: s':>9}{'IL %':>9}{'igd: s':>9}{'IL %':>9}")
    for method, params in METHODS:
        name = method + (f"-{params['growth']}" if "growth" in params else "")
        cells = []
        for refinement in ("none", "igd"):
            if refinement not in refinements or (refinement == "igd" and
                                                 method == "individual-ranking"):
                cells.append(f"{'-':>9}{'-':>9}")
                continue
            extra = {"refine": refinement} if method != "individual-ranking" else {}
            started = time.perf_counter()
            result = anonymize(table, roles, method, k=k, **params, **extra)
            cells.append(f"{time.perf_counter() - started:>9.2f}{result.metrics.il:>9.3f}")
        print(f"{name:<20}" + "".join(cells), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skip-large", action="store_true", help="EIA only")
    parser.add_argument("--large-refinements", nargs="+", default=["none", "igd"],
                        choices=["none", "igd"],
                        help="columns to run on the 100,000 records (IGD takes minutes)")
    args = parser.parse_args()
    eia, qi = load("eia")
    run(eia, RoleSpec(quasi_identifiers=qi), 3, "EIA (4,092 records, 11 attributes)")
    if not args.skip_large:
        synthetic = pd.DataFrame(numeric_records(100_000, 10, random_state=0),
                                 columns=[f"x{j}" for j in range(10)])
        run(synthetic, RoleSpec(quasi_identifiers=tuple(synthetic.columns)), 5,
            "Synthetic (100,000 records, 10 attributes)", tuple(args.large_refinements))


if __name__ == "__main__":
    main()

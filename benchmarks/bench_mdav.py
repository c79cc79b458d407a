"""MDAV speed, peak memory and information loss on synthetic data.

    python benchmarks/bench_mdav.py [--sizes 10000 100000] [--d 10] [--k 5]

Peak memory is what numpy and Python allocate during the run (tracemalloc), next to the
size of X itself, to show the O(n·d) footprint (an n×n matrix of float64 at n = 100,000
would need 80 GB).
"""

from __future__ import annotations

import argparse
import sys
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.synthetic import numeric_records  # noqa: E402
from core.methods.mdav import mdav  # noqa: E402
from core.measures.partition import sse, sst  # noqa: E402
from core.data.prepare import standardize  # noqa: E402

import pandas as pd  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--d", type=int, default=10)
    parser.add_argument("--k", type=int, default=5)
    args = parser.parse_args()

    print(f"MDAV, d = {args.d}, k = {args.k}, synthetic correlated data (seed 0)")
    print(f"{'n':>9} {'seconds':>9} {'peak MiB':>9} {'X MiB':>7} {'groups':>7} {'IL %':>8}")
    for n in args.sizes:
        table = pd.DataFrame(numeric_records(n, args.d, random_state=0))
        X = standardize(table, list(table.columns)).X
        tracemalloc.start()
        started = time.perf_counter()
        labels = mdav(X, k=args.k)
        seconds = time.perf_counter() - started
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        il = 100 * sse(X, labels) / sst(X)
        print(f"{n:>9,} {seconds:>9.2f} {peak / 2**20:>9.1f} {X.nbytes / 2**20:>7.1f} "
              f"{labels.max() + 1:>7,} {il:>8.3f}")


if __name__ == "__main__":
    main()

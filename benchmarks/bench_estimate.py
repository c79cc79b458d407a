"""Measured against estimated seconds of a run, to calibrate ``microagg_desktop.estimate``.

    python benchmarks/bench_estimate.py

Random normal data (``d`` attributes as quasi-identifiers, one confidential column) run
through :func:`core.anonymize` at a few sizes per method family; it prints the measured
time, the current estimate, and the constant that would make each estimate exact. Takes
about half a minute on two cores.
"""

from __future__ import annotations

import math
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from core import RoleSpec, anonymize  # noqa: E402
from microagg_desktop import estimate  # noqa: E402
from microagg_desktop.estimate import SHARED, estimate_seconds, family_of  # noqa: E402

CASES = (  # method, sizes, parameters
    ("mdav", (4_000, 12_000), {"k": 3}),
    ("vmdav", (3_000, 8_000), {"k": 3}),
    ("gsms", (2_000, 4_000), {"k": 3}),
    ("pcp", (20_000, 100_000), {"k": 3}),
    ("individual-ranking", (20_000, 100_000), {"k": 3}),
    ("tc-merge", (2_000, 5_000), {"k": 3, "t": 0.2}),
    ("tc-kfirst", (2_000, 5_000), {"k": 3, "t": 0.2}),
    ("tc-tfirst", (2_000, 5_000), {"k": 3, "t": 0.2}),
    ("tc-bucket", (2_000, 5_000), {"k": 3, "t": 2.0}),
    ("mic1d", (20_000, 100_000), {"k": 3000}),
)
D = 5


def frame(n: int, d: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    data = {f"q{i}": rng.normal(size=n) for i in range(d)}
    data["secret"] = rng.normal(size=n)
    return pd.DataFrame(data)


def main() -> None:
    print(f"{'method':<20}{'n':>8}{'measured s':>12}{'estimate s':>12}{'fit constant':>14}")
    for method, sizes, params in CASES:
        fits = []
        for n in sizes:
            table = frame(n, D)
            roles = RoleSpec(quasi_identifiers=tuple(f"q{i}" for i in range(D)),
                             confidential=("secret",))
            extra = {}
            if method == "tc-tfirst":
                from core.methods.tfirst import tfirst_cluster_size
                extra["cluster_size"] = tfirst_cluster_size(n, params["k"], params["t"])
            started = time.perf_counter()
            anonymize(table, roles, method, **params)
            measured = time.perf_counter() - started
            guess = estimate_seconds(method, n, D, **params, **extra)
            model, constant = family_of(method)
            k = max(2, extra.get("cluster_size", params.get("k", 3)))
            k = 2 if method == "mic1d" else k
            shared = SHARED * n * math.log2(n) * D
            cost = estimate._cost(model, n, D, k)
            fits.append(max(measured - shared, 0.0) / cost)
            print(f"{method:<20}{n:>8}{measured:>12.2f}{guess:>12.2f}{fits[-1]:>14.2e}",
                  flush=True)
        print(f"{'':<20}{'':>8}{'':>12}{'':>12}{fits[-1]:>14.2e}  (fit at the largest n)")


if __name__ == "__main__":
    main()

"""tc-tfirst's nearest searches against MDAV's, from the same seeds, on fixed indexes.

    python benchmarks/scale_tfirst_searches.py [--records N] [--seeds M]
    python benchmarks/bench_scale.py --only tfirst_searches [--quick]

Why tc-tfirst (Soria-Comas et al. 2015, Algorithm 3) stays behind MDAV on the spatial
index. A cluster of MDAV takes the k records nearest to its seed: one search of the
index of the records left. A cluster of Algorithm 3 takes, from each of its k subsets
of the confidential order, the record of that subset nearest to its seed: k searches,
each in that subset's own index (:mod:`core.methods.spatial_subsets`). On a full pass
over the records (the paper's cost model) both read n records a cluster, which is why
the paper calls Algorithm 3 as fast as MDAV; on an index they do not read the same.

Data and subsets as ``scale_tcloseness.py`` and tc-tfirst make them (d = 10 standard
normal quasi-identifiers, the confidential attribute x₀ + x₁/2 + noise, k = 5, t = 0.1:
five subsets). The seeds are the M records farthest
from the centre, as both algorithms' seeds are for most of a run. No record is taken
out, so both search the same records throughout. Each row: seconds for every seed,
rows screened per seed, and the ratio to MDAV's search; every search is the one the
methods run (:func:`core.methods.spatial_search._nearest`), called from one compiled
loop.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402

K = 5


def _loop():
    import numba

    from core.methods import spatial_search as search

    @numba.njit
    def searches(seeds, m, tree, depth, work):
        (P, screen, head, end, members, row_of, leaf_of, start, stop, first_leaf, lo, hi,
         cnt, top, rho2) = tree
        taken = np.zeros(P.shape[0], dtype=np.int64)
        stack, stack_d2 = np.zeros(depth, dtype=np.int64), np.zeros(depth)
        best_d2, best_id = np.zeros(m), np.zeros(m, dtype=np.int64)
        buffer32 = np.zeros(int((stop - start).max()) + 1, dtype=np.float32)
        q32 = np.zeros(seeds.shape[1], dtype=np.float32)
        total = 0
        for i in range(seeds.shape[0]):
            search._nearest(seeds[i], m, taken, first_leaf, start, head, end, members, P,
                            screen, lo, hi, cnt, stack, stack_d2, best_d2, best_id,
                            buffer32, q32, work)
            total += best_id[0]
        return total

    return searches


def searches_table(n: int, n_seeds: int, repeats: int = 3) -> list[tuple[str, float, float]]:
    from core.methods import spatial_tree, tfirst
    from benchmarks.scale_tcloseness import T, _data

    X, attributes = _data(n)
    subsets, _, _ = tfirst._subsets(attributes, tfirst.tfirst_cluster_size(n, K, T))
    seeds = np.ascontiguousarray(X[np.argsort(-(X * X).sum(axis=1), kind="stable")[:n_seeds]])

    def index(records):
        tree, levels, _ = spatial_tree.row_tree(records, np.zeros(X.shape[1]))
        return tree, 2 * levels + 8

    whole = index(X)
    parts = [index(X[members]) for members in subsets]
    searches = _loop()
    work = np.zeros(4, dtype=np.int64)
    searches(seeds[:4], K, *whole, work)  # compile
    best_whole, best_parts = np.inf, np.inf
    for _ in range(repeats):
        work[:] = 0
        began = time.perf_counter()
        searches(seeds, K, *whole, work)
        best_whole = min(best_whole, time.perf_counter() - began)
        rows_whole = work[0] / n_seeds
        work[:] = 0
        began = time.perf_counter()
        for tree, depth in parts:
            searches(seeds, 1, tree, depth, work)
        best_parts = min(best_parts, time.perf_counter() - began)
        rows_parts = work[0] / n_seeds
    return [(f"MDAV: the {K} nearest of all {n:,}", best_whole, rows_whole),
            (f"tc-tfirst: the nearest of each of {len(subsets)} subsets", best_parts,
             rows_parts)]


def rows(quick: bool) -> list[dict]:
    """``benchmarks/bench_scale.py``'s row: tc-tfirst's searches (``after_s``) beside
    MDAV's (``before_s``) from the same seeds, 100,000 × 10 (``quick``: 20,000)."""
    n, n_seeds = (20_000, 2_000) if quick else (100_000, 10_000)
    (_, mdav_s, mdav_rows), (label, tfirst_s, tfirst_rows) = searches_table(n, n_seeds)
    return [{"task": f"searches from {n_seeds:,} edge seeds, {label} (before = MDAV's)",
             "size": f"{n:,} × 10", "before_s": mdav_s, "after_s": tfirst_s,
             "target": "— (why tc-tfirst trails MDAV)",
             "check": f"rows screened a seed: {tfirst_rows:,.0f} against {mdav_rows:,.0f}"}]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--seeds", type=int, default=10_000)
    arguments = parser.parse_args(argv)
    table = searches_table(arguments.records, arguments.seeds)
    base = table[0][1]
    print(f"{arguments.seeds:,} seeds, the farthest from the centre; best of 3")
    print(f"{'searches per seed':<46}{'seconds':>9}{'rows/seed':>11}{'ratio':>7}")
    for label, seconds, per_seed in table:
        print(f"{label:<46}{seconds:>9.3f}{per_seed:>11,.0f}{seconds / base:>7.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

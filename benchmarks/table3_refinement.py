"""Khomnotai et al. (2018) Table 3 (Census, 13 attributes) beside our values.

    python benchmarks/table3_refinement.py

Prints every method × refinement row: our IL (%) per k, the published value, and the
relative gap; then how many refined cells are below / above the published ones.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import pandas as pd  # noqa: E402

from core.methods.gsms import gsms  # noqa: E402
from core.methods.heuristics import fixed_size  # noqa: E402
from core.measures.partition import sse  # noqa: E402
from core.data.prepare import standardize  # noqa: E402
from core.methods.refine import refine  # noqa: E402
from tests.conftest import CENSUS_COLUMNS, DATA_DIR  # noqa: E402
from tests.test_refinement_paper import KS, TABLE_3  # noqa: E402


def main() -> None:
    census = pd.read_csv(DATA_DIR / "census.csv")
    X = standardize(census, CENSUS_COLUMNS).X
    print("method       " + "".join(f"{'k=' + str(k):>22}" for k in KS))
    below = above = 0
    for (first, growth), rows in TABLE_3.items():
        partitions = {k: gsms(X, k=k) if first == "gsms" else
                      fixed_size(X, k=k, first=first, growth=growth) for k in KS}
        for suffix, refinement, published in zip(("", "2", "3"), ("none", "tfrp2", "igd"), rows):
            cells = []
            for k, value in zip(KS, published):
                il = 100 * sse(X, refine(X, partitions[k], k=k, method=refinement)) / X.size
                gap = 100 * (il - value) / value
                cells.append(f"{il:7.3f} ({value:6.3f} {gap:+5.1f}%)")
                if refinement != "none":
                    below += il < value - 5e-4
                    above += il > value + 5e-4
            print(f"{first.upper()}-{growth.upper()}{suffix:<4}" + "".join(f"{c:>22}" for c in cells))
    print(f"refined cells below the published value: {below}, above: {above} "
          f"(of {2 * len(TABLE_3) * len(KS)})")


if __name__ == "__main__":
    main()

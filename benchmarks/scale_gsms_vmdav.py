"""GSMS and V-MDAV at census scale: d = 10 standard normal columns, k = 5.

    python benchmarks/scale_gsms_vmdav.py [--quick]
    python benchmarks/bench_scale.py --only gsms_vmdav [--quick]

V-MDAV's compiled path is timed beside its numpy reference (today's algorithm) in the
same run, and their labels are compared. The reference at 100,000 records takes minutes,
so it is timed only without ``--quick``; the ratio row at 20,000 always is. GSMS has no
compiled path yet: its rows give today's time, for the record.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402

from core.methods.gsms import gsms  # noqa: E402
from core.methods.vmdav import vmdav, vmdav_reference  # noqa: E402

D, K, GAMMA = 10, 5, 0.2


def _data(n: int) -> np.ndarray:
    return np.random.default_rng(0).normal(size=(n, D))


def _timed(function, X, **parameters):
    start = time.perf_counter()
    labels = function(X, k=K, **parameters)
    return time.perf_counter() - start, labels


def _vmdav_row(n: int, *, with_reference: bool) -> dict:
    X = _data(n)
    after, labels = _timed(vmdav, X, gamma=GAMMA)
    before, check = None, "groups ≥ k (reference not timed)"
    if with_reference:
        before, expected = _timed(vmdav_reference, X, gamma=GAMMA)
        same = np.array_equal(labels, expected)
        check = "same labels as the reference" if same else "LABELS DIFFER"
    assert np.bincount(labels).min() >= K
    return dict(task=f"V-MDAV (γ = {GAMMA}) vs its reference", size=f"{n:,} × {D}",
                before_s=before, after_s=after, target="≤ 20 s at 100,000", check=check)


def _gsms_row(n: int) -> dict:
    after, labels = _timed(gsms, _data(n))
    assert np.bincount(labels).min() >= K
    return dict(task="GSMS (today's path, not yet compiled)", size=f"{n:,} × {D}",
                before_s=None, after_s=after, target="≤ 20 s at 100,000",
                check="groups of k..2k−1")


def rows(quick: bool) -> list[dict]:
    vmdav(_data(200), k=K, gamma=GAMMA)  # compiles (or loads) the kernels before timing
    small, large = (5_000, 20_000) if quick else (20_000, 100_000)
    out = [_vmdav_row(small, with_reference=True),
           _vmdav_row(large, with_reference=not quick),
           _gsms_row(small)]
    if not quick:
        out.append(_gsms_row(large))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes")
    args = parser.parse_args()
    for row in rows(args.quick):
        before = "—" if row["before_s"] is None else f"{row['before_s']:.2f}"
        ratio = (f"{row['before_s'] / row['after_s']:.1f}×" if row["before_s"] else "—")
        print(f"{row['task']:<40} {row['size']:>14} before {before:>8} s  "
              f"after {row['after_s']:8.2f} s  {ratio:>6}  {row['target']}  {row['check']}")


if __name__ == "__main__":
    main()

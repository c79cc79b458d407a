"""GSMS and V-MDAV at census scale: d = 10 standard normal columns, k = 5.

    python benchmarks/scale_gsms_vmdav.py [--quick]
    python benchmarks/bench_scale.py --only gsms_vmdav [--quick]

Each method is timed beside its reference (today's first implementation: the numpy
V-MDAV, gsms_reference) in the same run, and their labels are compared. The references
at 100,000 records take minutes, so with ``--quick`` the sizes are 5,000 and 20,000.
Wall-clock seconds go in the table (the machine is shared: compare the ratio); the
printed lines add CPU seconds and the load average.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402

from core.methods.gsms import gsms, gsms_reference  # noqa: E402
from core.methods.vmdav import vmdav, vmdav_reference  # noqa: E402

D, K, GAMMA = 10, 5, 0.2


def _data(n: int) -> np.ndarray:
    return np.random.default_rng(0).normal(size=(n, D))


def _timed(function, X, **parameters):
    wall, cpu = time.perf_counter(), time.process_time()
    labels = function(X, k=K, **parameters)
    return time.perf_counter() - wall, time.process_time() - cpu, labels


def _row(task, n, fast, reference, with_reference, **parameters) -> dict:
    X = _data(n)
    after, after_cpu, labels = _timed(fast, X, **parameters)
    before = before_cpu = None
    check = "groups ≥ k (reference not timed)"
    if with_reference:
        before, before_cpu, expected = _timed(reference, X, **parameters)
        same = np.array_equal(labels, expected)
        check = "same labels as the reference" if same else "LABELS DIFFER"
    assert np.bincount(labels).min() >= K
    return dict(task=task, size=f"{n:,} × {D}", before_s=before, after_s=after,
                before_cpu_s=before_cpu, after_cpu_s=after_cpu,
                target="≤ 20 s at 100,000", check=check)


def rows(quick: bool) -> list[dict]:
    vmdav(_data(200), k=K, gamma=GAMMA)  # compiles (or loads) the kernels before timing
    gsms(_data(200), k=K)
    sizes = (5_000, 20_000) if quick else (20_000, 100_000)
    out = []
    for n in sizes:
        out.append(_row(f"V-MDAV (γ = {GAMMA}) vs its reference", n, vmdav,
                        vmdav_reference, True, gamma=GAMMA))
        out.append(_row("GSMS vs gsms_reference", n, gsms, gsms_reference, True))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes")
    args = parser.parse_args()
    print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    for row in rows(args.quick):
        before = "—" if row["before_s"] is None else f"{row['before_s']:.2f}"
        before_cpu = "—" if row["before_cpu_s"] is None else f"{row['before_cpu_s']:.2f}"
        ratio = (f"{row['before_s'] / row['after_s']:.1f}×" if row["before_s"] else "—")
        print(f"{row['task']:<36} {row['size']:>14} before {before:>8} s "
              f"(CPU {before_cpu:>8})  after {row['after_s']:7.2f} s "
              f"(CPU {row['after_cpu_s']:7.2f})  {ratio:>7}  {row['target']}  "
              f"{row['check']}  [load {os.getloadavg()[0]:.2f}]", flush=True)


if __name__ == "__main__":
    main()

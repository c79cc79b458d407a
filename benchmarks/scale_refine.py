"""IGD and TFRP2 refinement: the compiled passes against the numpy reference.

Labels: CBFS fixed-size groups (k = 5) of standard-normal data (10 attributes), cached
under /tmp. Both paths run in the same process, one after the other, and must give the
same labels; wall-clock and CPU time (``time.process_time``: both threads of the
compiled path's first step count) are printed with the load average.

    python benchmarks/scale_refine.py [--quick]

``--quick``: 5,000 records; otherwise 20,000 and 100,000 (the reference takes about ten
minutes at 100,000).
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402

from core.methods.heuristics import fixed_size  # noqa: E402
from core.methods.refine import refine  # noqa: E402


def _case(n):
    X = np.random.default_rng(0).standard_normal((n, 10))
    cache = Path(f"/tmp/microagg_refine_cbfs_{n}.npy")
    if cache.exists():
        return X, np.load(cache)
    labels = fixed_size(X, k=5, first="cbfs")
    np.save(cache, labels)
    return X, labels


def _timed(X, labels, method, compiled):
    cpu, wall = time.process_time(), time.perf_counter()
    out = refine(X, labels, k=5, method=method, compiled=compiled)
    return out, time.process_time() - cpu, time.perf_counter() - wall


def rows(quick: bool) -> list[dict]:
    out = []
    refine(np.arange(200.0).reshape(100, 2), np.arange(100) // 5, k=5)  # compile first
    for n in ([5_000] if quick else [20_000, 100_000]):
        X, labels = _case(n)
        for method in ("tfrp2", "igd"):
            old, old_cpu, old_wall = _timed(X, labels, method, False)
            new, new_cpu, new_wall = _timed(X, labels, method, True)
            out.append({
                "task": f"refine {method} (numpy reference → compiled)",
                "size": f"{n:,} × 10",
                "before_s": old_wall, "after_s": new_wall,
                "before_cpu_s": old_cpu, "after_cpu_s": new_cpu,
                "target": "≤ 30 s at 100,000" if method == "igd" else "faster",
                "check": f"same labels: {bool(np.array_equal(old, new))}; "
                         f"CPU {old_cpu:.1f} s → {new_cpu:.1f} s; "
                         f"load {os.getloadavg()[0]:.1f}",
            })
    return out


def main() -> None:
    header = ("task", "size", "reference CPU s", "compiled CPU s", "reference wall s",
              "compiled wall s", "CPU ratio", "same labels", "load avg")
    print("| " + " | ".join(header) + " |")
    print("|" + "|".join("---" for _ in header) + "|")
    for row in rows("--quick" in sys.argv):
        cells = (row["task"], row["size"], f"{row['before_cpu_s']:.2f}",
                 f"{row['after_cpu_s']:.2f}", f"{row['before_s']:.2f}", f"{row['after_s']:.2f}",
                 f"{row['before_cpu_s'] / row['after_cpu_s']:.1f}×",
                 row["check"].split(";")[0].split(": ")[1], f"{os.getloadavg()[0]:.1f}")
        print("| " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()

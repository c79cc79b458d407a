"""IGD and TFRP2 after PCP and after MDAV: the nearest group found by the ways chosen as
the run goes, against the candidate lists alone.

The compiled refinement (:mod:`core.methods.refine_passes`) finds a record's nearest
group by candidate lists or by sweeps over every group, choosing by what each would
cost (:mod:`core.methods.refine_way`). The peer is the lists alone (``ways="lists"``:
16 candidates, lengthened to 64 once more than 1 in 20 questions fall back), as the
refinement ran before the sweeps. IGD runs a third time looking at every group in every
pass (``track=False``), the peer of its skipped looks (:mod:`core.methods.refine_track`).
All run on the same partition, in the same process, and must give the same labels.

    python benchmarks/scale_refine_ways.py [N ...]
    python benchmarks/bench_scale.py --only refine_ways [--quick]

Default sizes 20,000 and 50,000 × 10 (standard normal, k = 5); 100,000 takes about three
minutes more.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402

from core.methods import refine_passes  # noqa: E402
from core.methods.mdav import mdav  # noqa: E402
from core.methods.projection import pcp  # noqa: E402
from core.methods.refine import prepared, refine  # noqa: E402
from core.progress import TaskState  # noqa: E402


def _timed(Xc, sq, labels, tolerance, method, ways, track=True):
    began = time.perf_counter()
    out = refine_passes.refine_compiled(
        Xc, sq, labels, k=5, method=method, max_rounds=1000, tolerance=tolerance,
        state=TaskState(), ways=ways, track=track)
    return out, time.perf_counter() - began


def measured(sizes) -> list[dict]:
    """One row per partition, refinement and size: both ways' seconds and labels."""
    X = np.random.default_rng(1).standard_normal((3000, 10))  # compile both ways first
    Xc, sq, tolerance = prepared(X)
    for ways in ("lists", "auto"):
        _timed(Xc, sq, pcp(X, k=5).astype(np.int64), tolerance, "igd", ways)
    out = []
    for n in sizes:
        X = np.random.default_rng(0).standard_normal((n, 10))
        Xc, sq, tolerance = prepared(X)
        for name, method in (("pcp", "tfrp2"), ("pcp", "igd"), ("mdav", "tfrp2"),
                             ("mdav", "igd")):
            labels = pcp(X, k=5) if name == "pcp" else mdav(X, k=5)
            labels = np.unique(labels, return_inverse=True)[1].reshape(-1).astype(np.int64)
            lists, lists_s = _timed(Xc, sq, labels, tolerance, method, "lists")
            chosen, chosen_s = _timed(Xc, sq, labels, tolerance, method, "auto")
            every, every_s = (_timed(Xc, sq, labels, tolerance, method, "auto", False)
                              if method == "igd" else (chosen, None))
            out.append({"partition": name, "method": method, "n": n, "lists_s": lists_s,
                        "chosen_s": chosen_s, "every_s": every_s,
                        "same": bool(np.array_equal(lists, chosen)
                                     and np.array_equal(every, chosen))})
    return out


def rows(quick: bool) -> list[dict]:
    """For ``benchmarks/bench_scale.py``: the lists alone are the peer."""
    return [{
        "task": f"{r['partition'].upper()} + {r['method'].upper()}, lists or sweeps "
                f"as they pay",
        "size": f"{r['n']:,} × 10", "before_s": r["lists_s"], "after_s": r["chosen_s"],
        "target": "≤ 30 s at 100,000" if r["method"] == "igd" else "faster",
        "check": f"same labels: {r['same']}" + (
            f"; every group looked at: {r['every_s']:.2f} s" if r["every_s"] else ""),
    } for r in measured([5_000] if quick else [20_000, 50_000])]


def main() -> None:
    sizes = [int(a) for a in sys.argv[1:]] or [20_000, 50_000]
    header = ("partition", "refinement", "records", "lists alone s", "ways chosen s",
              "ratio", "every look s", "ratio", "same labels", "load avg")
    print("| " + " | ".join(header) + " |")
    print("|" + "|".join("---" for _ in header) + "|")
    for r in measured(sizes):
        cells = (r["partition"], r["method"], f"{r['n']:,} × 10", f"{r['lists_s']:.2f}",
                 f"{r['chosen_s']:.2f}", f"{r['lists_s'] / r['chosen_s']:.2f}×",
                 f"{r['every_s']:.2f}" if r["every_s"] else "—",
                 f"{r['every_s'] / r['chosen_s']:.2f}×" if r["every_s"] else "—",
                 str(r["same"]), f"{os.getloadavg()[0]:.1f}")
        print("| " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()

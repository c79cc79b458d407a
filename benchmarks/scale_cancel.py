"""Cancel at census scale: how long each method takes to stop after Cancel.

    python benchmarks/scale_cancel.py [--quick] [METHOD:N ...]
    python benchmarks/bench_scale.py --only cancel [--quick]

Each case runs :func:`core.anonymize` once to its end (random normal data, ten
quasi-identifiers and one confidential column, k = 5, t = 0.2 for the t-closeness
methods), then again on a second thread, cancelled at 10 %, 35 %, 60 %, 85 % and 97 % of
that time, the last ones inside the measures and the verifier. It prints, per case, the
time of the whole run and the longest and median wait from ``TaskState.cancel()`` to
the run raising ``Cancelled`` (the product's target: within a second at any size). A run
that finished before its Cancel is counted as "finished".
"""

from __future__ import annotations

import statistics
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from core import Cancelled, RoleSpec, TaskState, anonymize  # noqa: E402

CASES = ("pcp:1000000", "individual-ranking:1000000", "mic1d:1000000", "mdav:1000000",
         "cbfs:300000", "tfrp:300000", "tc-merge:300000", "tc-tfirst:300000",
         "gsms:100000", "vmdav:100000", "tc-kfirst:50000", "tc-bucket:300000",
         "mdav-igd:100000", "pcp-igd:50000")
QUICK = ("pcp:200000", "mdav:100000", "tc-merge:50000", "tc-tfirst:50000",
         "gsms:20000")
AT = (0.10, 0.35, 0.60, 0.85, 0.97)


def _frame(n: int) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    table = pd.DataFrame(rng.standard_normal((n, 10)), columns=[f"x{j}" for j in range(10)])
    table["secret"] = rng.standard_normal(n)
    return table


def _parameters(method: str) -> tuple[str, dict]:
    if method in ("mdav-igd", "pcp-igd"):  # PCP's IGD lengthens its candidate lists
        return method.removesuffix("-igd"), {"k": 5, "refine": "igd"}
    if method == "tc-bucket":
        return method, {"k": 5, "t": 2.0}
    return method, {"k": 5, **({"t": 0.2} if method.startswith("tc-") else {})}


def _cancelled_after(table, roles, method, parameters, delay: float) -> float | None:
    """Seconds from Cancel to the run's end, or None when it finished first."""
    state, outcome = TaskState(), {}

    def work():
        try:
            anonymize(table, roles, method, state=state, **parameters)
            outcome["finished"] = True
        except Cancelled:
            outcome["stopped"] = time.perf_counter()

    thread = threading.Thread(target=work)
    thread.start()
    thread.join(delay)
    pressed = time.perf_counter()
    state.cancel()
    thread.join()
    return None if "finished" in outcome else outcome["stopped"] - pressed


def _roles() -> RoleSpec:
    return RoleSpec(quasi_identifiers=tuple(f"x{j}" for j in range(10)),
                    confidential=("secret",))


def measure(case: str, roles: RoleSpec) -> tuple[float, list[float | None]]:
    """``(whole, waits)`` for one ``METHOD:N`` case: the uncancelled run's seconds and
    the wait after each Cancel of ``AT`` (None: the run finished first)."""
    name, n = case.split(":")
    method, parameters = _parameters(name)
    table = _frame(int(n))
    began = time.perf_counter()
    anonymize(table, roles, method, **parameters)
    whole = time.perf_counter() - began
    return whole, [_cancelled_after(table, roles, method, parameters, a * whole) for a in AT]


def rows(quick: bool) -> list[dict]:
    """``benchmarks/bench_scale.py``'s rows: per case, the longest wait from Cancel to
    a stopped run (``after_s``) against the target of a second."""
    roles = _roles()
    anonymize(_frame(500), roles, "pcp", k=5)  # the compiled kernels loaded
    out = []
    for case in QUICK if quick else CASES:
        name, n = case.split(":")
        whole, waits = measure(case, roles)
        done = [w for w in waits if w is not None]
        out.append({"task": f"Cancel → stopped ({name}; run {whole:.1f} s)",
                    "size": f"{int(n):,} × 10", "before_s": None,
                    "after_s": max(done) if done else float("nan"), "target": "≤ 1 s",
                    "check": f"longest of {len(done)} waits at "
                             f"{', '.join(f'{a:.0%}' for a in AT)} of the run"})
    return out


def main(argv: list[str]) -> None:
    quick = "--quick" in argv
    cases = [a for a in argv if a != "--quick"] or (QUICK if quick else CASES)
    roles = _roles()
    anonymize(_frame(500), roles, "pcp", k=5)  # the compiled kernels loaded
    print(f"{'method':<20}{'n':>10}{'run s':>8}{'longest wait s':>16}{'median s':>10}"
          f"  waits at {', '.join(f'{a:.0%}' for a in AT)}")
    for case in cases:
        name, n = case.split(":")
        whole, waits = measure(case, roles)
        done = [w for w in waits if w is not None]
        shown = ", ".join("finished" if w is None else f"{w:.2f}" for w in waits)
        print(f"{name:<20}{int(n):>10,}{whole:>8.1f}"
              f"{max(done) if done else float('nan'):>16.2f}"
              f"{statistics.median(done) if done else float('nan'):>10.2f}  {shown}",
              flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])

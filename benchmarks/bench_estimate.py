"""Measured against estimated seconds of a run, to calibrate ``microagg_desktop.estimate``.

    python benchmarks/bench_estimate.py [METHOD[+REFINEMENT]:N[:D[:K]] ...]
    python benchmarks/bench_estimate.py --nominal [METHOD:N:TABLE ...]

Random normal data (``D`` attributes as quasi-identifiers, default 10, and one
confidential column) run through :func:`core.anonymize`, twice per case (the second run
is printed: the first may load compiled kernels). The run is split where the measures
begin (its progress message "measuring ..."): ``method`` is the preparation and the
partition, ``after`` the aggregation, measures and verification. It prints both with the
estimate, the range the window shows and whether the run fell inside it, and the
constants that would make the family's part (``fit family``, per unit of
:func:`~microagg_desktop.estimate._cost`) and the shared part (``fit shared``, per
``n · log2 n``) exact. The window shows no estimate under
:data:`~microagg_desktop.estimate.SHOW_ABOVE`, so such a run is marked ``hidden`` and
left out of the count (it cannot show a wrong range). The default cases are mostly sizes
where the estimate is shown; they take about three minutes on two cores.

``--nominal``: tables with nominal quasi-identifiers (:data:`NOMINAL_TABLES`, category
frequencies falling as 1/rank, as occupations and regions do), estimated from what the
window knows of them (:func:`microagg_desktop.wizard_state.quasi_identifiers`: each
column's kind and distinct values). The default cases (MDAV and CBFS at 100,000 and
300,000 records, PCP at 300,000) take about ten minutes.
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
from core.progress import TaskState  # noqa: E402
from microagg_desktop import estimate  # noqa: E402
from microagg_desktop.estimate import estimate_seconds, family_of, format_range  # noqa: E402

CASES = (  # METHOD:N[:D[:K]]
    "pcp:1000000", "pcp:1000000:3", "zscores:1000000", "individual-ranking:1000000:5",
    "optimal-univariate:1000000:1", "mic1d:1000000", "mdav:200000", "mdav:300000:3",
    "cbfs:200000", "tfrp:200000", "tc-merge:100000", "tc-tfirst:100000", "gsms:50000",
    "vmdav:50000", "tc-kfirst:30000", "tc-bucket:300000", "mdav+igd:50000",
    "pcp+tfrp2:50000",
)
NOMINAL_TABLES = {  # name: (column, "number" | "whole:M" | "ordinal:M" | "nominal:M")
    "census": (("age", "whole:100"), ("education", "ordinal:8"), ("sex", "nominal:2"),
               ("marital", "nominal:5"), ("region", "nominal:20"),
               ("occupation", "nominal:30")),
    "few-categories": (("age", "whole:100"), ("sex", "nominal:2"), ("marital", "nominal:5"),
                       ("region", "nominal:20")),
    "one-large": (("x1", "number"), ("x2", "number"), ("x3", "number"), ("x4", "number"),
                  ("occupation", "nominal:300")),
    "five-nominal": (("x1", "number"), ("x2", "number"), ("sex", "nominal:2"),
                     ("region", "nominal:20"), ("occupation", "nominal:30"),
                     ("industry", "nominal:20"), ("birthplace", "nominal:50")),
    "numeric": tuple((f"x{i}", "number") for i in range(6)),
    # 14 search columns, 10 of them nominal (name it: not among the default cases)
    "census-wide": (("age", "whole:100"), ("hours", "whole:80"), ("income", "number"),
                    ("education", "ordinal:8"), ("sex", "nominal:2"),
                    ("marital", "nominal:5"), ("region", "nominal:20"),
                    ("occupation", "nominal:30"), ("industry", "nominal:20"),
                    ("birthplace", "nominal:50"), ("citizenship", "nominal:10"),
                    ("language", "nominal:15"), ("tenure", "nominal:4"),
                    ("employment", "nominal:6")),
}
NOMINAL_CASES = tuple(f"{method}:{n}:{name}" for method, sizes in
                      (("mdav", (100000, 300000)), ("cbfs", (100000, 300000)),
                       ("pcp", (300000,)))
                      for n in sizes for name in NOMINAL_TABLES if name != "census-wide")
T = {"tc-bucket": 2.0}  # t of the t-closeness methods; 0.2 for the others


def frame(n: int, d: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    data = {f"q{i}": rng.normal(size=n) for i in range(d)}
    data["secret"] = rng.normal(size=n)
    return pd.DataFrame(data)


def nominal_frame(n: int, name: str, seed: int = 0) -> tuple[pd.DataFrame, RoleSpec]:
    """Table ``name`` of :data:`NOMINAL_TABLES` with ``n`` records, and its roles."""
    rng = np.random.default_rng(seed)
    data, levels = {}, {}
    for column, kind in NOMINAL_TABLES[name]:
        kind, _, size = kind.partition(":")
        if kind == "number":
            data[column] = rng.normal(size=n)
        elif kind == "whole":
            data[column] = rng.integers(0, int(size), n).astype(float)
        elif kind == "ordinal":
            data[column], levels[column] = rng.integers(0, int(size), n), "ordinal"
        else:
            weights = 1.0 / np.arange(1, int(size) + 1)
            data[column] = rng.choice([f"{column}{i}" for i in range(int(size))], n,
                                      p=weights / weights.sum())
    table = pd.DataFrame(data)
    return table, RoleSpec(quasi_identifiers=tuple(table.columns), levels=levels)


def verdict(guess: float, whole: float) -> tuple[str, bool | None]:
    """The column ``inside`` and whether the run counts as inside (None: the window shows
    no estimate below :data:`~microagg_desktop.estimate.SHOW_ABOVE`, so it cannot be
    wrong)."""
    if guess < estimate.SHOW_ABOVE:
        return "hidden", None
    ok = guess / 2 <= whole <= guess * 2
    return ("yes" if ok else "NO"), ok


def shown_range(guess: float) -> str:
    return format_range(guess) if guess >= estimate.SHOW_ABOVE else "(none shown)"


def summary(outcomes: list[bool | None]) -> str:
    shown = [ok for ok in outcomes if ok is not None]
    hidden = len(outcomes) - len(shown)
    return (f"{sum(shown)} of {len(shown)} runs inside the range shown" +
            (f" ({hidden} estimated under {estimate.SHOW_ABOVE:g} s: none shown)"
             if hidden else ""))


def nominal_main(cases) -> None:
    from microagg_desktop.column_summary import summarize_columns
    from microagg_desktop.wizard_state import quasi_identifiers

    print(f"{'method':<8}{'table':<16}{'n':>9}{'width':>7}{'whole':>8}{'method':>8}"
          f"{'estimate':>10}  {'range shown':<24}{'inside':>7}")
    outcomes: list[bool | None] = []
    for text in cases:
        method, n, name = text.split(":")
        n = int(n)
        table, roles = nominal_frame(n, name)
        columns = {row.name: (row.kind, row.distinct) for row in summarize_columns(table)}
        attributes = quasi_identifiers(roles, n, columns)
        width = attributes.width
        timed(table.iloc[:5000], roles, method, {"k": 5})
        whole, part = timed(table, roles, method, {"k": 5})
        guess = estimate_seconds(method, n, attributes, k=5)
        label, ok = verdict(guess, whole)
        outcomes.append(ok)
        print(f"{method:<8}{name:<16}{n:>9}{width:>7}{whole:>8.2f}{part:>8.2f}"
              f"{guess:>10.2f}  {shown_range(guess):<24}{label:>7}", flush=True)
    print(summary(outcomes))


def case(text: str) -> tuple[str, int, int, dict]:
    """``METHOD[+REFINEMENT]:N[:D[:K]]``."""
    method, n, *rest = text.split(":")
    d = int(rest[0]) if rest else 10
    params = {"k": int(rest[1]) if len(rest) > 1 else 5}
    if "+" in method:
        method, params["refine"] = method.split("+")
    if method.startswith("tc-"):
        params["t"] = T.get(method, 0.2)
    return method, int(n), d, params


def timed(table: pd.DataFrame, roles: RoleSpec, method: str, params: dict):
    """(whole, method) seconds of one run: the method's part ends at "measuring"."""
    marks = {}

    def seen(fraction: float, message: str) -> None:
        if message.startswith("measuring") and "measures" not in marks:
            marks["measures"] = time.perf_counter()

    started = time.perf_counter()
    anonymize(table, roles, method, state=TaskState(seen), **params)
    return time.perf_counter() - started, marks["measures"] - started


def main(cases) -> None:
    print(f"{'method':<20}{'d':>3}{'n':>9}{'whole':>8}{'method':>8}{'after':>8}"
          f"{'estimate':>10}  {'range shown':<24}{'inside':>7}{'fit family':>12}"
          f"{'fit shared':>12}")
    outcomes: list[bool | None] = []
    for text in cases:
        method, n, d, params = case(text)
        table = frame(n, d)
        roles = RoleSpec(quasi_identifiers=tuple(f"q{i}" for i in range(d)),
                         confidential=("secret",))
        extra = {}
        if method == "tc-tfirst":
            from core.methods.tfirst import tfirst_cluster_size
            extra["cluster_size"] = tfirst_cluster_size(n, params["k"], params["t"])
        timed(table, roles, method, params)
        whole, part = timed(table, roles, method, params)
        guess = estimate_seconds(method, n, d, **params, **extra)
        model, _ = family_of(method)
        k = 2 if method == "mic1d" else max(2, extra.get("cluster_size", params["k"]))
        fit_family = part / estimate._cost(model, n, d, k, params.get("t"))
        fit_shared = (whole - part) / (n * math.log2(n))
        mark, ok = verdict(guess, whole)
        outcomes.append(ok)
        label = method + (f"+{params['refine']}" if "refine" in params else "")
        print(f"{label:<20}{d:>3}{n:>9}{whole:>8.2f}{part:>8.2f}{whole - part:>8.2f}"
              f"{guess:>10.2f}  {shown_range(guess):<24}{mark:>7}"
              f"{fit_family:>12.2e}{fit_shared:>12.2e}", flush=True)
    print(summary(outcomes))


if __name__ == "__main__":
    if sys.argv[1:2] == ["--nominal"]:
        nominal_main(sys.argv[2:] or NOMINAL_CASES)
    else:
        main(sys.argv[1:] or CASES)

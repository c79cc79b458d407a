"""XLSX at scale: read (python-calamine against openpyxl) and write (the streaming
writer against openpyxl's write-only mode, the writer before it), 200,000 × 10.

``rows(quick)`` for ``benchmarks/bench_scale.py --only io``; ``python
benchmarks/scale_io.py [--quick]`` prints the rows alone.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from core.io.read_report import Recorder  # noqa: E402
from core.io.read_xlsx import read_xlsx  # noqa: E402
from core.io.write import write_table  # noqa: E402
from tests.xlsx_reference import write_xlsx_reference  # noqa: E402


def _table(n):
    rng = np.random.default_rng(0)
    data = {f"x{j}": rng.normal(size=n).round(3) for j in range(7)}
    data.update(id=np.arange(n), region=rng.choice(["north", "south", "=east"], n),
                age=rng.integers(18, 90, n))
    return pd.DataFrame(data)


def rows(quick: bool) -> list[dict]:
    n = 20_000 if quick else 200_000
    table = _table(n)
    with tempfile.TemporaryDirectory() as folder:
        path, reference = Path(folder) / "big.xlsx", Path(folder) / "openpyxl.xlsx"
        began = time.perf_counter()
        write_table(path, table)
        write_s = time.perf_counter() - began
        began = time.perf_counter()
        write_xlsx_reference(str(reference), [("masked", table)])
        reference_s = time.perf_counter() - began
        timings, frames = {}, {}
        for engine in ("openpyxl", "calamine"):
            began = time.perf_counter()
            frames[engine] = read_xlsx(path, sheet=None, skip_rows=None,
                                       recorder=Recorder(), engine=engine)
            timings[engine] = time.perf_counter() - began
        written_alike = read_xlsx(reference, sheet=None, skip_rows=None,
                                  recorder=Recorder(), engine="calamine").equals(
                                      frames["calamine"])
    same = frames["calamine"].equals(frames["openpyxl"])
    return [
        dict(task="read XLSX (calamine vs openpyxl)", size=f"{n:,} × 10",
             before_s=timings["openpyxl"], after_s=timings["calamine"], target="≤ 5 s",
             check=f"same DataFrame: {same}"),
        dict(task="write XLSX (streamed XML vs openpyxl write-only)", size=f"{n:,} × 10",
             before_s=reference_s, after_s=write_s, target="≤ 20 s",
             check=f"read back alike: {written_alike}"),
    ]


if __name__ == "__main__":
    for row in rows("--quick" in sys.argv):
        print(row)

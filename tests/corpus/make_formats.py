"""Write the small SPSS, SAS and workbook files that tests/test_io_formats.py reads.

Run from the repository root with the project's Python (``.venv/bin/python
tests/corpus/make_formats.py``); the files in ``tests/corpus/formats`` are committed, so
the tests need none of this. pyreadstat cannot write ``.sas7bdat``: the SAS reader is
tested through the transport format (``.xpt``), which goes through the same code.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import openpyxl
import pandas as pd
import pyreadstat

HERE = Path(__file__).resolve().parent / "formats"

SURVEY = pd.DataFrame({
    "id": [101.0, 102.0, 103.0, 104.0, 105.0, 106.0],
    "sex": [1.0, 2.0, 2.0, 9.0, 1.0, np.nan],       # 9 = refused, declared user-missing
    "region": [3.0, 1.0, 2.0, 2.0, 7.0, 1.0],       # 7 has no label
    "income": [1200.5, 980.25, 1500.0, np.nan, 2100.75, 0.1],
    "city": ["Lyon", "Porto", "", "Graz", "Turku", "Cork"],
})
LABELS = {"sex": {2.0: "female", 1.0: "male", 9.0: "refused"},
          "region": {1.0: "north", 2.0: "south", 3.0: "east"}}


def write_spss() -> None:
    options = dict(variable_value_labels=LABELS, missing_ranges={"sex": [9.0]},
                   variable_format={"id": "F8.0", "sex": "F8.0", "region": "F8.0",
                                    "income": "F10.2"})
    pyreadstat.write_sav(SURVEY, HERE / "survey.sav", **options)
    pyreadstat.write_sav(SURVEY, HERE / "survey.zsav", compress=True, **options)
    whole = (HERE / "survey.sav").read_bytes()
    (HERE / "damaged.sav").write_bytes(whole[:len(whole) // 2])
    (HERE / "not_spss.sav").write_bytes(b"id,age\n1,20\n")


def write_sas() -> None:
    numbers = SURVEY.drop(columns=["city"]).assign(city=SURVEY["city"].replace("", "-"))
    pyreadstat.write_xport(numbers, HERE / "survey.xpt", table_name="SURVEY",
                           variable_format={"id": "F8.0", "income": "F10.2"})


def write_workbook() -> None:
    workbook = openpyxl.Workbook()
    first = workbook.active
    first.title = "persons"
    first.append(["id", "age", "income"])
    for i in range(12):
        first.append([i + 1, 20 + 3 * i, 1000.5 + 125 * i])
    second = workbook.create_sheet("households")
    second.append(["household", "size", "rent"])
    for i in range(5):
        second.append([f"H{i + 1}", 1 + i % 4, 450.25 + 10 * i])
    workbook.save(HERE / "two_sheets.xlsx")


def write_text() -> None:
    lines = ["id;region;income;rate"]
    for i in range(40):
        lines.append(f"{i + 1};{('North', 'South', 'East')[i % 3]};"
                     f"{1000 + 37.5 * i:.2f};{(i % 7) / 4:.2f}".replace(".", ","))
    (HERE / "semicolon_decimal_comma.csv").write_text("\n".join(lines) + "\n",
                                                      encoding="utf-8")


if __name__ == "__main__":
    HERE.mkdir(exist_ok=True)
    write_spss()
    write_sas()
    write_workbook()
    write_text()
    for path in sorted(HERE.iterdir()):
        print(f"{path.stat().st_size:>7}  {path.name}")

"""Write the messy-input corpus: small files, one or more per class of bad input.

Run from the repository root with the project's Python (``.venv/bin/python
tests/corpus/make_corpus.py``); ``expected.toml`` says what reading each file must give.
The files are committed, so the tests need none of this. ``encrypted.xlsx`` needs
msoffcrypto-tool, which is not a project dependency: install it in a throwaway
environment to remake that one file (it is skipped otherwise).
"""

from __future__ import annotations

import io
from pathlib import Path

import openpyxl
import pandas as pd

HERE = Path(__file__).resolve().parent


def text_files() -> dict[str, bytes]:
    return {
        # 1. locale numbers
        "locale_thousands_dot.csv":
            b"region;income;rate\nNorth;50.900;1,5\nSouth;500;2,5\nEast;1.250;0,25\n",
        "locale_grouped_dots.csv": b"region;income\nNorth;1.234.567\nSouth;500\n",
        "locale_grouped_commas.csv":
            b'region,income\nNorth,"1,234.5"\nSouth,12\nEast,"2,000,000.25"\n',
        "locale_grouped_spaces.csv":
            "region;income\nNorth;1 234,5\nSouth;3\nEast;12\u00a0345,75\n".encode(),
        "locale_ambiguous.csv": b"region;income\nNorth;50.900\nSouth;1.250\n",
        "locale_mixed.csv": b"region;income\nNorth;1.234.567\nSouth;1.5\n",
        # 3. line ends
        "cr_line_endings.csv": b"id,age,wage\r1,31,1200.5\r2,45,980.25\r3,29,1500\r",
        # 4. UTF-16 with a byte-order mark
        "utf16_le_bom.csv": "name;age;wage\nZo\u00eb;31;1200,5\nJos\u00e9;45;980,25\n"
                            .encode("utf-16"),
        "utf16_be_bom.csv": b"\xfe\xff" + "name,age\nZo\u00eb,31\nJos\u00e9,45\n"
                            .encode("utf-16-be"),
        # 5. NUL bytes
        "nul_byte.csv": b"id,age\n1,31\n2,45\n3,29\n4,5\x000\n5,38\n",
        # 6. trailing empty rows (and one in the middle, which stays)
        "trailing_empty_rows.csv": b"id,age,wage\n1,31,1200.5\n,,\n2,45,980.25\n,,\n,,\n"
                                   b" , ,\n\n",
        # 7. a row with more fields than the header
        "extra_fields.csv": b"id,age,wage\n1,31,1200.5\n2,45,980,25\n3,29,1500\n",
        # 9. a title line above the header
        "title_row.csv": b'"Household survey 2023, table 4",,,\nid,age,wage,region\n'
                         b"1,31,1200.5,North\n2,45,980.25,South\n",
    }


def workbooks() -> None:
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "data"
    sheet.append(["id", "age", "wage", "ratio"])
    for row in ([1, 31, 1200.5, 0.5], [2, 45, 980.25, 0.25], [3, 29, 1500, 1.5],
                [4, 38, 1100, 0.75], [5, 52, 990, 2.0]):
        sheet.append(row)
    sheet["D3"] = "#DIV/0!"  # openpyxl stores a known error code as an error cell
    sheet["C6"] = "#N/A"
    book.save(HERE / "error_cells.xlsx")

    book = openpyxl.Workbook()
    book.active.title = "Cover"
    data = book.create_sheet("survey data")
    data.append(["id", "age"])
    data.append([1, 31])
    data.append([2, 45])
    book.create_sheet("notes")
    book.save(HERE / "empty_first_sheet.xlsx")

    book = openpyxl.Workbook()
    sheet = book.active
    sheet.append(["Household survey 2023"])
    sheet.append([])
    sheet.append(["id", "age", "wage"])
    sheet.append([1, 31, 1200.5])
    sheet.append([2, 45, 980.25])
    book.save(HERE / "title_row.xlsx")

    try:
        from msoffcrypto.format.ooxml import OOXMLFile
    except ImportError:
        print("msoffcrypto-tool is not installed; encrypted.xlsx left as it is")
        return
    book = openpyxl.Workbook()
    for row in (["id", "age"], [1, 31], [2, 45]):
        book.active.append(row)
    plain = io.BytesIO()
    book.save(plain)
    plain.seek(0)
    with open(HERE / "encrypted.xlsx", "wb") as out:
        OOXMLFile(plain).encrypt("secret", out)


def stata() -> None:
    frame = pd.DataFrame({"id": range(1, 41), "age": [30 + i % 20 for i in range(40)],
                          "wage": [1000.0 + 12.5 * i for i in range(40)]})
    buffer = io.BytesIO()
    frame.to_stata(buffer, version=118, write_index=False)
    data = buffer.getvalue()
    (HERE / "truncated.dta").write_bytes(data[:int(len(data) * 0.7)])


if __name__ == "__main__":
    for name, content in text_files().items():
        (HERE / name).write_bytes(content)
    workbooks()
    stata()

"""XLSX read with python-calamine equals the openpyxl reading, cell for cell."""

import datetime as dt
from pathlib import Path

import numpy as np
import openpyxl
import pandas as pd
import pytest

from core.errors import MicroaggError
from core.io.read_report import Recorder
from core.io.read_xlsx import read_xlsx, sheet_names

CORPUS = Path(__file__).parent / "corpus"
WORKBOOKS = sorted(CORPUS.rglob("*.xlsx"))


def _both(path, **options):
    out = []
    for engine in ("calamine", "openpyxl"):
        try:
            out.append(read_xlsx(path, recorder=Recorder(), engine=engine,
                                 **{"sheet": None, "skip_rows": None, **options}))
        except MicroaggError as error:
            out.append(str(error))
    return out


def _same(new, old):
    if isinstance(old, str) or isinstance(new, str):
        assert new == old
    else:
        pd.testing.assert_frame_equal(new, old, check_exact=True)


@pytest.mark.parametrize("path", WORKBOOKS, ids=lambda p: p.name)
def test_corpus_reads_the_same(path):
    if path.name == "encrypted.xlsx":
        pytest.skip("refused before either reader")
    names = sheet_names(path)
    for sheet in [None, *names]:
        _same(*_both(path, sheet=sheet))


def _generated(path, seed):
    rng = np.random.default_rng(seed)
    book = openpyxl.Workbook()
    first = book.active
    first.title = "cover"
    if seed % 2:
        first.append(["just a title"])
    data = book.create_sheet("data")
    data.append(["id", "when", "at", "flag", "text", "x", "mixed", "empty"])
    for i in range(200):
        when = dt.datetime(2000, 1, 1) + dt.timedelta(days=int(rng.integers(0, 9000)),
                                                      hours=int(rng.integers(0, 2)) * 7)
        data.append([
            i, when if i % 7 else when.date(), dt.time(int(rng.integers(0, 24)), 30),
            bool(rng.integers(0, 2)), rng.choice(["a", "b", "", " c", "12"]),
            None if i % 11 == 0 else float(rng.normal()) * 10 ** int(rng.integers(-3, 9)),
            [1, 2.5, "x", None][i % 4], None,
        ])
    other = book.create_sheet("other")
    other.append(["q", "r"])
    for i in range(30):
        other.append([i * 1.0, f"v{i}" if i % 3 else None])
    book.save(path)


@pytest.mark.parametrize("seed", range(4))
def test_generated_workbooks_read_the_same(tmp_path, seed):
    path = tmp_path / f"g{seed}.xlsx"
    _generated(path, seed)
    for sheet in [None, "cover", "data", "other", 1]:
        _same(*_both(path, sheet=sheet))
    _same(*_both(path, sheet="data", skip_rows=0))


def test_big_integers_are_read_exactly(tmp_path):
    from core.io.write import write_table

    path = write_table(tmp_path / "big.xlsx", pd.DataFrame({"n": [2 ** 53 + 1, 3]}))
    new, old = _both(path)
    assert new["n"].tolist() == [2 ** 53 + 1, 3]
    _same(new, old)

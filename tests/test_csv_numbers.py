"""The CSV writer's path for tables of numbers and text gives pandas' bytes exactly.

A released table of numbers and text is written by formatting each distinct value of a
numeric column once (``core.io.write._write_csv``); the file must be the one
``DataFrame.to_csv`` writes (UTF-8, CRLF, minimal quoting, missing values empty),
whatever the values: 0.0 beside −0.0, NaN, infinities, the smallest and largest floats,
integers, repeated values, text with separators, quotes and line breaks, empty text
beside missing text, headers that need quoting, and blocks of rows that end anywhere.
Other kinds of columns (dates, categories of numbers) go through pandas itself.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st

import core.io.write as write
from core.io.write import write_table

SPECIALS = (0.0, -0.0, np.nan, np.inf, -np.inf, 5e-324, 1.7976931348623157e308, 1e16,
            1e-5, 0.1, 123456789012345678.0, 2.0 ** 53, 100.0, -2.5)
NAMES = ("x", "a,b", 'say "hi"', "line\nbreak", "=SUM(A1)", " lead", "ünï", "")
TEXTS = ("North", "a,b", 'say "hi"', "two\nlines", "cr\ronly", "", " ", "=1+1", "ünï",
         "'quoted", "-3", None, np.nan)


def _frame(seed: int, rows: int, columns: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    data = {}
    for j in range(columns):
        kind = rng.integers(0, 6)
        if kind == 0:  # floats from few values, with the special ones
            pool = np.concatenate([rng.normal(size=3) * 10.0 ** rng.integers(-8, 9, 3),
                                   SPECIALS])
            column = rng.choice(pool, rows)
        elif kind == 1:  # group means: each value repeated
            column = np.repeat(rng.normal(size=rows // 3 + 1), 3)[:rows]
        elif kind == 2:  # whole numbers, written as integers
            column = rng.integers(-10**6, 10**6, rows).astype(float)
        elif kind == 3:
            column = rng.integers(-2**62, 2**62, rows)
        elif kind == 4:  # text, with missing values
            column = pd.Series([TEXTS[i] for i in rng.integers(0, len(TEXTS), rows)],
                               dtype=object if rng.integers(0, 2) else "str")
        else:  # categories of text or booleans, or (pandas writes the table itself)
            # categories of numbers or dates
            column = [pd.Categorical(rng.choice(["a", "b,c"], rows)),
                      rng.integers(0, 2, rows).astype(bool),
                      pd.Categorical(rng.choice([1.5, 2.0], rows)),
                      pd.to_datetime("2020-01-01")
                      + pd.to_timedelta(rng.integers(0, 48, rows), unit="h")][
                rng.integers(0, 4)]
        data[f"{NAMES[j % len(NAMES)]}{j}"] = column
    return pd.DataFrame(data)


def _pandas_bytes(tmp_path, frame) -> bytes:
    path = tmp_path / "pandas.csv"
    write._csv_ready(frame).to_csv(path, index=False, encoding="utf-8",
                                   lineterminator="\r\n")
    return path.read_bytes()


@settings(max_examples=120, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(0, 40), st.integers(1, 6),
       st.sampled_from([1, 3, 7, 65_536]))
def test_numbers_are_written_as_pandas_writes_them(tmp_path_factory, seed, rows, columns,
                                                   block):
    tmp_path = tmp_path_factory.mktemp("csv")
    frame = _frame(seed, rows, columns)
    saved, write._CSV_ROWS_PER_BLOCK = write._CSV_ROWS_PER_BLOCK, block
    try:
        write_table(tmp_path / "fast.csv", frame)
    finally:
        write._CSV_ROWS_PER_BLOCK = saved
    assert (tmp_path / "fast.csv").read_bytes() == _pandas_bytes(tmp_path, frame)


@pytest.mark.parametrize("times", [1, 4])  # all but distinct, and repeated values
def test_zero_and_negative_zero_keep_their_own_text(tmp_path, times):
    frame = pd.DataFrame({"v": [0.0, -0.0, 0.5, -0.0, np.nan] * times})
    write_table(tmp_path / "z.csv", frame)
    assert (tmp_path / "z.csv").read_bytes() == \
        b"v\r\n" + b'0.0\r\n-0.0\r\n0.5\r\n-0.0\r\n""\r\n' * times
    assert (tmp_path / "z.csv").read_bytes() == _pandas_bytes(tmp_path, frame)


def test_missing_values_are_empty_and_text_tables_go_through_pandas(tmp_path):
    numbers = pd.DataFrame({"a": [1.5, np.nan, 2.5], "b": [1, 2, 3]})
    write_table(tmp_path / "n.csv", numbers)
    assert (tmp_path / "n.csv").read_bytes() == b"a,b\r\n1.5,1\r\n,2\r\n2.5,3\r\n"
    mixed = pd.DataFrame({"a": [1.5, 2.5], "region": ["North, east", "=cmd"]})
    write_table(tmp_path / "m.csv", mixed)
    assert (tmp_path / "m.csv").read_bytes() == _pandas_bytes(tmp_path, mixed)


@pytest.mark.parametrize("rows", [0, 1])
def test_an_empty_or_one_row_table(tmp_path, rows):
    frame = pd.DataFrame({"a,1": np.arange(rows, dtype=float) + 0.25,
                          "b": np.arange(rows)})
    write_table(tmp_path / "e.csv", frame)
    assert (tmp_path / "e.csv").read_bytes() == _pandas_bytes(tmp_path, frame)


def test_numbers_and_text_take_the_fast_path(tmp_path, monkeypatch):
    frame = pd.DataFrame({"t": pd.Series(["a", None, "b,c", ""], dtype="str"),
                          "o": pd.Series(["x", "", np.nan, 'q"'], dtype=object),
                          "v": [1.5, 2.5, np.nan, -0.0], "n": [1, 2, 3, 4]})
    expected = _pandas_bytes(tmp_path, frame)

    def refused(*args, **kwargs):
        raise AssertionError("pandas wrote a table of numbers and text")

    monkeypatch.setattr(pd.DataFrame, "to_csv", refused)
    write_table(tmp_path / "f.csv", frame)
    assert (tmp_path / "f.csv").read_bytes() == expected
    booleans = frame.assign(b=[True, False, True, True],
                            c=pd.Categorical(["x", None, "=y", "x"]))  # text from here on
    write_table(tmp_path / "b.csv", booleans)
    monkeypatch.undo()
    assert (tmp_path / "b.csv").read_bytes() == _pandas_bytes(tmp_path, booleans)
    assert b"\r\n\"b,c\",,,3,True,'=y\r\n" in (tmp_path / "b.csv").read_bytes()
    monkeypatch.setattr(pd.DataFrame, "to_csv", refused)
    with pytest.raises(AssertionError, match="pandas wrote"):  # dates: pandas' own
        write_table(tmp_path / "d.csv", frame.assign(d=pd.to_datetime(["2020-01-01"] * 4)))


def test_other_tables_go_through_pandas_by_block_with_progress(tmp_path, monkeypatch):
    """Dates, booleans and categories: pandas' bytes, in blocks of whole pandas chunks
    (100,000 cells // 3 columns = 33,333 rows), so dates keep the format pandas gives each
    chunk: midnights alone are written without the time, as pandas writes them."""
    from core import TaskState

    rows = 70_000
    when = pd.to_datetime("2020-01-01") + pd.to_timedelta(np.arange(rows) // 100, unit="D")
    when = when.where(np.arange(rows) < 40_000, when + pd.Timedelta(hours=6))
    frame = pd.DataFrame({"when": when, "flag": np.arange(rows) % 3 == 0,
                          "kind": pd.Categorical(np.where(np.arange(rows) % 2, "a", "b,c"))})
    monkeypatch.setattr(write, "_CSV_ROWS_PER_BLOCK", 1)
    seen = []
    write_table(tmp_path / "d.csv", frame, state=TaskState(lambda f, m: seen.append(f)))
    written = (tmp_path / "d.csv").read_bytes()
    assert written == _pandas_bytes(tmp_path, frame)
    assert seen == [33_333 / rows, 66_666 / rows, 1.0]
    assert b"\r\n2020-01-01,True,b,c" not in written  # "b,c" is quoted
    # Day 333 straddles the first two chunks: midnights alone, then beside 06:00 times.
    assert b"\r\n2020-11-29,False,a\r\n" in written  # row 33,331
    assert b"\r\n2020-11-29 00:00:00,True,\"b,c\"\r\n" in written  # row 33,333

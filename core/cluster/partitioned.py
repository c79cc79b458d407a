"""Partitioned input and output: a table too large for one machine's memory.

Input
    A pandas ``DataFrame`` (split into partitions here), one CSV or Parquet file, or a
    folder of them (``part-0.parquet``, ``part-1.parquet``, ... read in name order, which
    is the row order). A CSV file is read by ``dask.dataframe.read_csv`` in blocks of
    64 MB, comma-separated (tab for ``.tsv``), with numbers with a decimal point; files
    in other dialects go through the local engine (``core.io``), which detects them.
Output
    A folder of parts of the same format (Parquet by default; CSV when the folder's name
    ends with ``.csv`` or ``format="csv"``), one part per input partition, in the input's
    row order, named ``part-00000.parquet`` ... Parts are written into a hidden
    temporary folder beside the target, which is renamed onto the target only once the
    whole release is written and verified: a failed, refused or cancelled run leaves
    nothing, and a reader never sees half a release. The parts are written by
    :func:`core.cluster.stages.write_part`; CSV parts by :func:`core.io.write.write_table`
    (formula-like text made inert, numbers exact).

On a cluster of several machines the input and the output folder must be on storage
every worker reaches (a shared drive, or an object store URL for the input).
"""

from __future__ import annotations

import os
import re
import shutil
import uuid
from pathlib import Path

import numpy as np
import pandas as pd

from core.errors import MicroaggError

__all__ = ["read_partitioned", "read_error", "output_format", "OutputFolder",
           "PARQUET_SUFFIXES", "CSV_SUFFIXES"]

PARQUET_SUFFIXES = (".parquet", ".pq")
CSV_SUFFIXES = (".csv", ".tsv", ".txt")
_ROWS_PER_PARTITION = 250_000  # for a DataFrame given in memory


def read_partitioned(source, *, n_partitions: int | None = None):
    """``source`` as a Dask frame, and its format (``"parquet"``, ``"csv"`` or ``"memory"``).

    Raises
    ------
    MicroaggError
        The path does not exist, a folder holds no readable part or mixes formats, or
        a file cannot be read (the message names it).
    """
    import dask.dataframe as dd

    if isinstance(source, pd.DataFrame):
        n = len(source)
        count = n_partitions or max(1, min(n // 2, -(-n // _ROWS_PER_PARTITION)))
        frame = source.reset_index(drop=True)
        return dd.from_pandas(frame, npartitions=max(1, count), sort=False), "memory"
    path = Path(source)
    if not path.exists():
        raise MicroaggError(f"Cannot read '{path}': no such file or folder.")
    files = sorted(p for p in path.iterdir() if p.is_file() and not p.name.startswith(".")
                   ) if path.is_dir() else [path]
    kinds = {_kind(p) for p in files} - {None}
    if not kinds:
        raise MicroaggError(f"'{path}' holds no CSV or Parquet file to read.")
    if len(kinds) > 1:
        raise MicroaggError(f"Folder '{path}' mixes CSV and Parquet parts; keep one "
                            "format per folder.")
    kind = kinds.pop()
    names = [str(p) for p in files if _kind(p) == kind]
    try:
        if kind == "parquet":
            frame = dd.read_parquet(names)
        else:
            separator = "\t" if names[0].lower().endswith(".tsv") else ","
            frame = dd.read_csv(names, sep=separator, blocksize="64MB",
                                assume_missing=True, sample=1_000_000)
            exact = _exact_text_columns(frame, names, separator)
            if exact:  # text as written: every zero and every digit kept
                frame = dd.read_csv(names, sep=separator, blocksize="64MB",
                                    assume_missing=True, sample=1_000_000,
                                    dtype={c: str for c in exact})
        frame.head(1, npartitions=1, compute=False)._meta  # column names and types
    except (OSError, ValueError, TypeError) as error:  # the check for codes reads parts
        raise read_error(error, path) from None
    return frame, kind


def _exact_text_columns(frame, names: list[str], separator: str) -> list[str]:
    """The columns Dask reads as numbers (float64, ``assume_missing``) that would not
    keep what the file says, to be read as text, as written, instead: whole numbers
    with a value written with leading zeros (codes such as 00094, read as 94), numbers
    with one written with a leading zero and a dot (codes such as 01.10, read as 1.1
    like 01.1), which the local engine reads as text too (:mod:`core.io.read_text`),
    and whole numbers from 2^53 on (household numbers of 16 digits or more), which a
    float64 rounds. Screens of the files' bytes first (:mod:`core.io.zero_screen`, on
    this machine); only when one finds a field that may be such a value do the workers
    look: which numeric columns hold whole numbers only and how large, then for codes
    the text of those (and of the others, for dotted codes)."""
    import dask.dataframe as dd

    from core.io.zero_screen import may_have_codes_or_long_integers

    numeric = [c for c, kind in frame.dtypes.items()
               if pd.api.types.is_numeric_dtype(kind) and not pd.api.types.is_bool_dtype(kind)]
    if not numeric:
        return []
    screened = [may_have_codes_or_long_integers(Path(n), separator) for n in names]
    zeros, dotted = any(s[0] for s in screened), any(s[1] for s in screened)
    if not zeros and not any(s[2] for s in screened):
        return []
    facts = frame[numeric].map_partitions(_whole_in, numeric,
                                          meta={c: float for c in numeric}).compute()
    whole = [c for c in numeric if bool((facts.loc[["whole"], c] > 0).all())]
    wide = [c for c in whole if float(facts.loc[["top"], c].max()) >= 2.0 ** 53]
    candidates = [c for c in whole if c not in wide] if zeros else []
    fractions = [c for c in numeric if c not in whole] if dotted else []
    if not candidates and not fractions:
        return wide
    text = dd.read_csv(names, sep=separator, blocksize="64MB", dtype=str,
                       usecols=candidates + fractions)
    found = text.map_partitions(_zero_led_in, candidates, fractions,
                                meta={c: bool for c in candidates + fractions}).compute()
    return wide + [c for c in candidates + fractions if bool(found[c].any())]


def _whole_in(part: pd.DataFrame, columns: list[str]) -> pd.DataFrame:
    """Two rows: whether each column of ``part`` holds finite whole numbers only, or
    nothing (``whole``, 1 or 0), and its largest magnitude (``top``, 0 if empty)."""
    whole, top = [], []
    for c in columns:
        values = part[c].to_numpy(dtype=np.float64, na_value=np.nan)
        values = values[~np.isnan(values)]
        whole.append(float(np.isfinite(values).all() and np.array_equal(values, np.round(values))))
        top.append(float(np.abs(values).max(initial=0.0)))
    return pd.DataFrame([whole, top], columns=columns, index=["whole", "top"])


def _zero_led_in(part: pd.DataFrame, columns: list[str],
                 fractions: list[str] = ()) -> pd.DataFrame:
    """One row: whether each column of ``part`` (read as text) holds a value written
    with leading zeros (``ZERO_LED_CODE``: 00094 or 01.10), or, for each of
    ``fractions``, one written with a leading zero and a dot (``DOTTED_CODE``); the
    fields that start with a zero, after spaces and a sign, are the only ones matched."""
    from core.io.read_report import DOTTED_CODE, ZERO_LED_CODE

    row = []
    for c in [*columns, *fractions]:
        text = part[c].dropna()
        start = text.str.lstrip().str.lstrip("+-").str.startswith("0")
        led = text[start.to_numpy(dtype=bool)]
        row.append(bool(led.str.fullmatch(ZERO_LED_CODE if c in columns else DOTTED_CODE)
                        .any()))
    return pd.DataFrame([row], columns=[*columns, *fractions])


def read_error(error: Exception, source) -> MicroaggError:
    """A clear message for an error raised while the workers read ``source``'s parts
    (a later part's column that does not parse like the first rows, an unreadable
    file)."""
    text = str(error)
    where = "the table" if isinstance(source, pd.DataFrame) else f"'{source}'"
    if text.startswith("Mismatched dtypes"):
        rows = re.findall(r"^\| (\S+)\s*\| (\S+)\s*\| (\S+)\s*\|$", text, re.M)[1:]
        values = re.findall(r"could not convert string to float: ('.*?')", text)
        if rows:
            column, found, expected = rows[0]
            value = f" (such as {values[0]})" if values else ""
            return MicroaggError(
                f"Cannot read {where}: column '{column}' holds {found} values{value} in a "
                f"later part where the first rows hold {expected}. Correct or remove "
                "those values, or declare the column's level (ordinal or nominal) to "
                "treat it as categories.")
    first = text.splitlines()[0] if text else type(error).__name__
    return MicroaggError(f"Cannot read {where}: {first}")


def _kind(path: Path) -> str | None:
    suffix = path.suffix.lower()
    return "parquet" if suffix in PARQUET_SUFFIXES else "csv" if suffix in CSV_SUFFIXES \
        else None


def output_format(output: str | os.PathLike, *, source_format: str,
                  given: str | None = None) -> str:
    """The parts' format: ``given``, else the folder name's suffix, else the input's
    (Parquet for an in-memory table)."""
    if given is not None:
        if given not in ("parquet", "csv"):
            raise MicroaggError(f"Output format '{given}': use parquet or csv.")
        return given
    kind = _kind(Path(output))
    if kind is not None:
        return kind
    return "csv" if source_format == "csv" else "parquet"


_PART = re.compile(r"part-\d+\.(csv|parquet)")
"""The name of a part a release writes (:func:`core.cluster.stages`)."""


def _few(names: list[str]) -> str:
    return ", ".join(f"'{n}'" for n in names[:3]) + (f" and {len(names) - 3} more"
                                                      if len(names) > 3 else "")


class OutputFolder:
    """A release written as a folder of parts, atomically (module notes).

    Parameters
    ----------
    target : path
        The folder to create.
    overwrite : bool
        Replace an existing folder (an existing file is always refused).
    """

    def __init__(self, target: str | os.PathLike, *, overwrite: bool = False):
        self.target = Path(target)
        parent = self.target.parent if str(self.target.parent) else Path(".")
        if not parent.is_dir():
            raise MicroaggError(f"Cannot write '{self.target}': folder '{parent}' does "
                                "not exist.")
        if self.target.is_file():
            raise MicroaggError(f"'{self.target}' is a file; the Dask engine writes a "
                                "folder of parts. Give a folder name.")
        if self.target.exists() and not overwrite:
            raise MicroaggError(f"'{self.target}' already exists; choose another name or "
                                "add --overwrite to replace it.")
        if self.target.is_dir():
            foreign = [p.name for p in sorted(self.target.iterdir())
                       if not (p.is_file() and _PART.fullmatch(p.name))]
            if foreign:
                raise MicroaggError(
                    f"'{self.target}' holds files that are not parts of a release "
                    f"({_few(foreign)}); --overwrite replaces only a folder of parts "
                    "(part-00000.csv, ...) written by a release. Choose another folder.")
        self.temporary = parent / f".{self.target.name}.partial-{uuid.uuid4().hex[:12]}"

    def create(self) -> Path:
        self.temporary.mkdir()
        return self.temporary

    def commit(self) -> Path:
        """Rename the finished temporary folder onto the target."""
        old = None
        if self.target.exists():
            old = self.target.parent / f".{self.target.name}.old-{uuid.uuid4().hex[:12]}"
            os.replace(self.target, old)
        os.replace(self.temporary, self.target)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
        return self.target

    def discard(self) -> None:
        shutil.rmtree(self.temporary, ignore_errors=True)

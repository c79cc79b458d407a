"""The steps a worker runs on one input partition, between the engine's stages.

:func:`survey_part` numbers a partition's rows and measures it
(:func:`core.cluster.standardize.survey`); :func:`route` sends its records to their
blocking keys (:meth:`core.cluster.blocking.Tree.key_of`) and returns them cut into one
piece per key, with their counts, so the engine can form the blocks from exact counts
and each block can fetch only its own pieces; :func:`pieces_of` joins a partition's
pieces of one block; :func:`write_part` and :func:`assemble_part` put a released
partition back together in the input's row order.

Records move between workers only as these pieces, never through the scheduler or the
client, and no worker ever needs the whole table: a block task holds one block, a
writer one partition.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from core.cluster.blocking import deal_hash
from core.cluster.blockrun import PART, ROW
from core.cluster.standardize import survey
from core.errors import MicroaggError
from core.io.write import write_table

__all__ = ["stratum_codes", "sampled", "survey_part", "route", "pieces_of", "write_part",
           "assemble_part"]

_SAMPLE_SALT = 0x632BE59BD9B4E019  # keeps the sample apart from the dealing buckets


def stratum_codes(frame: pd.DataFrame, strata: list[str], keys: pd.MultiIndex | None
                  ) -> np.ndarray:
    """The stratum number of every record of ``frame`` (zeros without strata)."""
    if not strata:
        return np.zeros(len(frame), dtype=np.int64)
    codes = keys.get_indexer(pd.MultiIndex.from_frame(frame[strata]))
    if (codes < 0).any():  # cannot happen: the keys are the whole table's
        raise MicroaggError(f"A record's stratum ({', '.join(strata)}) is not among the "
                            "strata counted over the whole table.")
    return codes.astype(np.int64)


def sampled(rows: np.ndarray, rate: float, seed: int) -> np.ndarray:
    """Whether each global row number joins the sample: a hash of the row number and the
    seed, so the sample is the same however the table is partitioned."""
    mixed = np.asarray(rows, dtype=np.uint64) ^ np.uint64(_SAMPLE_SALT * (seed + 1)
                                                          % (1 << 64))
    return deal_hash(mixed) < rate * float(1 << 31)


def survey_part(part: pd.DataFrame, *, first_row: int, rate: float, seed: int,
                source: str, **columns):
    """:func:`core.cluster.standardize.survey` of a partition whose first row is
    ``first_row``, sampling at ``rate``.

    Raises
    ------
    MicroaggError
        A numeric quasi-identifier holds text (the message names the column, the row
        and ``source``).
    """
    rows = first_row + np.arange(len(part), dtype=np.int64)
    part = part.reset_index(drop=True)
    try:
        return survey(part, chosen=sampled(rows, rate, seed), **columns)
    except (ValueError, TypeError):
        for column in columns["numeric"]:
            numbers = pd.to_numeric(part[column], errors="coerce")
            bad = np.flatnonzero(numbers.isna().to_numpy() & part[column].notna().to_numpy())
            if bad.size:
                raise MicroaggError(
                    f"Column '{column}' of '{source}' holds {part[column].iloc[bad[0]]!r} "
                    f"at data row {first_row + bad[0] + 1:,}, where the first rows hold "
                    "numbers. Correct or remove that value, or declare the column's "
                    "level (ordinal or nominal) to treat it as categories.") from None
        raise


def route(part: pd.DataFrame, *, number: int, first_row: int, encoding, tree, keys,
          strata: list[str]) -> tuple[dict[int, pd.DataFrame], dict[int, int]]:
    """Cut partition ``number`` into one piece per blocking key.

    Returns the pieces (every record with its global row number ``ROW`` and partition
    ``PART``) and the records per key.
    """
    rows = first_row + np.arange(len(part), dtype=np.int64)
    part = part.reset_index(drop=True)
    key = tree.key_of(encoding.encode(part).X, stratum_codes(part, strata, keys), rows)
    order = np.argsort(key, kind="stable")
    ordered = part.take(order).reset_index(drop=True)
    ordered[ROW] = rows[order]
    ordered[PART] = np.int64(number)
    key = key[order]
    starts = np.flatnonzero(np.r_[True, key[1:] != key[:-1]]) if len(key) else []
    stops = np.r_[starts[1:], len(key)] if len(key) else []
    pieces = {int(key[a]): ordered.iloc[a:b] for a, b in zip(starts, stops)}
    return pieces, {k: len(p) for k, p in pieces.items()}


def pieces_of(routed, keys: list[int]) -> pd.DataFrame | None:
    """The records of ``keys`` in one routed partition (None when it has none)."""
    pieces = [routed[0][k] for k in keys if k in routed[0]]
    if not pieces:
        return None
    return pieces[0] if len(pieces) == 1 else pd.concat(pieces, ignore_index=True)


def assemble_part(*pieces: pd.DataFrame) -> pd.DataFrame:
    """One released partition from its pieces, in row order, working columns dropped."""
    frame = pd.concat([p for p in pieces if p is not None], ignore_index=True)
    order = np.argsort(frame[ROW].to_numpy(), kind="stable")
    return frame.take(order).drop(columns=[ROW, PART]).reset_index(drop=True)


def write_part(folder: str, kind: str, number: int, *pieces: pd.DataFrame) -> int:
    """Write released partition ``number`` as ``part-NNNNN.<kind>``; the rows written."""
    rows = assemble_part(*pieces)
    name = Path(folder) / f"part-{int(number):05d}.{kind}"
    if kind == "parquet":
        rows.to_parquet(name, index=False)
    else:
        write_table(name, rows)
    return len(rows)

"""Writing files atomically: a private temporary file in the target folder, then a rename.

A failed or interrupted export never leaves a partial file, and the input file is never
written to (the callers refuse an output that is the input).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from core.errors import MicroaggError
from core.io.read import first_line

__all__ = ["atomic_write", "write_table"]


def atomic_write(path: str | os.PathLike, write) -> Path:
    """Call ``write(temporary_path)``, then rename the temporary file onto ``path``.

    The temporary file lives in the target folder (so the rename is atomic on the same
    file system) and is removed if ``write`` fails.
    """
    target = Path(path)
    folder = target.parent if str(target.parent) else Path(".")
    if not folder.is_dir():
        raise MicroaggError(f"Cannot write '{target}': folder '{folder}' does not exist.")
    # The temporary name keeps the extension: writers such as pandas' Excel writer
    # choose the format from it.
    handle, temporary = tempfile.mkstemp(prefix=f".{target.stem}.",
                                         suffix=f".partial{target.suffix}", dir=folder)
    os.close(handle)
    try:
        write(temporary)
        os.replace(temporary, target)
    except BaseException:
        try:
            os.unlink(temporary)
        except FileNotFoundError:
            pass
        raise
    return target


def write_table(path: str | os.PathLike, table: pd.DataFrame, *,
                extra_sheets: Sequence[tuple[str, pd.DataFrame]] = (),
                sheet_name: str = "masked") -> Path:
    """Write ``table`` to ``.csv`` or ``.xlsx`` (by extension), atomically.

    An XLSX file gets ``table`` on the sheet ``sheet_name`` and every ``extra_sheets``
    entry (name, frame) after it. A CSV file holds ``table`` only.
    """
    target = Path(path)
    suffix = target.suffix.lower()

    if suffix == ".csv":
        def write(temporary):
            table.to_csv(temporary, index=False, encoding="utf-8")
    elif suffix == ".xlsx":
        def write(temporary):
            with pd.ExcelWriter(temporary, engine="openpyxl") as writer:
                table.to_excel(writer, sheet_name=sheet_name, index=False)
                for name, frame in extra_sheets:
                    frame.to_excel(writer, sheet_name=name, index=False)
    else:
        raise MicroaggError(
            f"Cannot export to '{target.name}': use a .csv or .xlsx file name."
        )
    try:
        return atomic_write(target, write)
    except PermissionError:
        raise MicroaggError(
            f"Cannot write '{target}': permission denied (is it open in another program?)."
        ) from None
    except OSError as error:
        raise MicroaggError(f"Cannot write '{target}': {first_line(error)}") from None

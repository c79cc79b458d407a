"""The checks every command makes on its output files before it runs."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path

from core.errors import MicroaggError
from core.io.write import check_table_path
from core.report.documents import REPORT_SUFFIXES

__all__ = ["check_destinations", "same_file"]


def same_file(a: str, b: str) -> bool:
    """True when the two paths name the same file."""
    try:
        return Path(a).resolve() == Path(b).resolve()
    except OSError:
        return False


def check_destinations(sources: Sequence[str], destinations: Iterable[str | None], *,
                       overwrite: bool, table: str | None = None,
                       report: str | None = None) -> None:
    """Refuse, before anything runs: writing over an input, two outputs with one name,
    a missing or unwritable folder, a folder, an existing file without --overwrite, and
    a ``table`` or ``report`` (both among ``destinations``) of a format not written."""
    given = [d for d in destinations if d]
    for i, destination in enumerate(given):
        if any(same_file(destination, other) for other in given[:i]):
            raise MicroaggError(f"'{destination}' is given for two outputs; give each "
                                "output its own file name.")
        folder = Path(destination).parent
        if not folder.is_dir():
            raise MicroaggError(f"Cannot write '{destination}': folder '{folder}' does "
                                "not exist.")
        if any(same_file(destination, source) for source in sources):
            which = "the input file" if len(sources) == 1 else "an input file"
            raise MicroaggError(f"'{destination}' is {which}; choose another output name.")
        if Path(destination).is_dir():
            raise MicroaggError(f"'{destination}' is a folder; give a file name.")
        if Path(destination).exists() and not overwrite:
            raise MicroaggError(
                f"'{destination}' already exists; choose another name or add --overwrite "
                "to replace it.")
        _check_writable(destination, folder)
    if table:
        check_table_path(table)
    if report and Path(report).suffix.lower() not in REPORT_SUFFIXES:
        raise MicroaggError(f"Cannot write the report to '{report}': the report is an "
                            "HTML page; use a .html file name.")


def _check_writable(destination: str, folder: Path) -> None:
    # Permission bits do not tell (ACLs, read-only mounts, immutable folders, root):
    # creating a file there does.
    try:
        handle, probe = tempfile.mkstemp(prefix=".microagg-probe-", dir=folder)
    except OSError as error:
        raise MicroaggError(f"Cannot write '{destination}': folder '{folder}' is not "
                            f"writable ({error.strerror or error}). Choose another folder "
                            "or change its permissions.") from None
    os.close(handle)
    os.unlink(probe)


"""The checks every command makes on its output files before it runs."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from core.errors import MicroaggError

__all__ = ["check_destinations", "same_file"]


def same_file(a: str, b: str) -> bool:
    """True when the two paths name the same file."""
    try:
        return Path(a).resolve() == Path(b).resolve()
    except OSError:
        return False


def check_destinations(sources: Sequence[str], destinations: Iterable[str | None], *,
                       overwrite: bool) -> None:
    """Refuse, before anything runs: writing over an input, two outputs with one name,
    a missing folder, a folder, or an existing file without --overwrite."""
    given = [d for d in destinations if d]
    for i, destination in enumerate(given):
        if any(same_file(destination, other) for other in given[:i]):
            raise MicroaggError(f"'{destination}' is given for two outputs; give each "
                                "output its own file name.")
        folder = Path(destination).parent
        if str(folder) and not folder.is_dir():
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

"""The recently opened files and the last folder used (Qt-free; the window stores them in
Qt's settings through a ``MutableMapping``).

A folder is only ever offered if it still exists, so a file dialog never opens on a
folder that was deleted or on a drive that is not mounted any more.
"""

from __future__ import annotations

import json
import os
from collections.abc import MutableMapping
from pathlib import Path

__all__ = ["RecentFiles"]


class RecentFiles:
    """Most recent first, at most ``limit`` files, kept in ``store``.

    Parameters
    ----------
    store : MutableMapping[str, str]
        Where the list lives (a dict in tests, Qt's settings in the window).
    limit : int
        How many files are remembered.

    Examples
    --------
    >>> recent = RecentFiles({})
    >>> recent.add(__file__); recent.paths()[0] == Path(__file__).resolve()
    True
    """

    FILES, FOLDER = "recent_files", "last_folder"

    def __init__(self, store: MutableMapping[str, str], limit: int = 10):
        self._store = store
        self.limit = limit

    def _saved(self) -> list[str]:
        try:
            value = json.loads(self._store.get(self.FILES) or "[]")
        except (TypeError, ValueError):
            return []
        return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []

    def add(self, path: str | os.PathLike) -> None:
        """Put ``path`` first (once) and remember its folder as the last one used."""
        resolved = str(Path(path).resolve())
        kept = [p for p in self._saved() if p != resolved]
        self._store[self.FILES] = json.dumps([resolved] + kept[:self.limit - 1])
        self.set_folder(Path(resolved).parent)

    def remove(self, path: str | os.PathLike) -> None:
        """Forget ``path`` (e.g. after it failed to open because it is gone)."""
        resolved = str(Path(path).resolve())
        self._store[self.FILES] = json.dumps([p for p in self._saved() if p != resolved])

    def clear(self) -> None:
        self._store[self.FILES] = "[]"

    def paths(self) -> list[Path]:
        """The remembered files that still exist, most recent first."""
        return [Path(p) for p in self._saved() if Path(p).is_file()]

    def set_folder(self, folder: str | os.PathLike) -> None:
        """Remember ``folder`` as the last one used (for the next file dialog)."""
        self._store[self.FOLDER] = str(Path(folder).resolve())

    def folder(self, fallback: str | os.PathLike = "") -> str:
        """The last folder used if it still exists, else ``fallback`` if that exists, else
        the user's home folder: never a folder that is not there."""
        for candidate in (self._store.get(self.FOLDER), fallback):
            if candidate and Path(candidate).is_dir():
                return str(candidate)
        return str(Path.home())

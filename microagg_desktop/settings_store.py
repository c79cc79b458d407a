"""A ``MutableMapping[str, str]`` over :class:`QSettings`, for the window's memories."""

from __future__ import annotations

from collections.abc import Iterator, MutableMapping

from PySide6.QtCore import QSettings

__all__ = ["QSettingsStore"]


class QSettingsStore(MutableMapping):
    """String values kept in ``QSettings`` under the group ``prefix``.

    Parameters
    ----------
    prefix : str
        The settings group, e.g. ``"role-memory"``.
    settings : QSettings, optional
        Default: the application's ``QSettings()``.

    Keys must not contain ``/`` (QSettings would read it as a sub-group).
    """

    def __init__(self, prefix: str, settings: QSettings | None = None):
        self.prefix = prefix.strip("/")
        self.settings = settings if settings is not None else QSettings()

    def _full(self, key: str) -> str:
        if "/" in key or "\\" in key:
            raise KeyError(f"A settings key cannot contain '/' or '\\': {key!r}.")
        return f"{self.prefix}/{key}"

    def __getitem__(self, key: str) -> str:
        full = self._full(key)
        if not self.settings.contains(full):
            raise KeyError(key)
        return str(self.settings.value(full))

    def __setitem__(self, key: str, value: str) -> None:
        self.settings.setValue(self._full(key), str(value))

    def __delitem__(self, key: str) -> None:
        full = self._full(key)
        if not self.settings.contains(full):
            raise KeyError(key)
        self.settings.remove(full)

    def __iter__(self) -> Iterator[str]:
        self.settings.beginGroup(self.prefix)
        try:
            keys = list(self.settings.childKeys())
        finally:
            self.settings.endGroup()
        return iter(keys)

    def __len__(self) -> int:
        return sum(1 for _ in self)
